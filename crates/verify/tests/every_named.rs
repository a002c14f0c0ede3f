//! Every request clconv accepts by name compiles and runs, on every x86-64 flag set this
//! machine can run (each request in one tier per flag set, both tiers across neighbouring
//! flag sets), and agrees with the reference on its inputs.
//!
//! `tests/matrix.rs` holds the matrix ([`Request::all`]) and what the languages spell beyond it
//! to every input of the 8/16-bit sources and 1,000 more of the others. The names accept more:
//! the rules of `_satsrc`, `_satmsb`, `_satsrcmsb`, `_trap`, `_ftz`, `_clamp01` and `_relu` from
//! every source they apply to ([`Request::every_named`], what `clconv list` prints). This test
//! takes those the matrix does not, each in one batch of the checker's inputs (every pattern of
//! an 8-bit source, 12,288 of a 16-bit one, specials and 16 random values of each kind for the
//! wider ones; the packed
//! layout, whose code every width shares, since the matrix holds the layouts). The trapping
//! ones run on the inputs that do not trap, and must stop with a trap on one that does. And every spelling of every language
//! (`clconv list LANG:`) means a request of one of the two lists, so each of them is compiled
//! and checked here or there.

use clconv::jit::{Jit, JitError, Tiering, X64Flags};
use clconv::{reference, Conversion, Extensions, Layout, Request, Rounding};
use clconv_verify::check::Checker;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

const FP16: Extensions = Extensions::with_fp16();

/// The requests a name spells that `tests/matrix.rs` does not check.
fn beyond_the_matrix_test() -> Vec<Request> {
    let in_matrix: HashSet<Request> = Request::all(FP16)
        .into_iter()
        .chain(clconv::languages::beyond_the_matrix())
        .collect();
    Request::every_named(FP16)
        .into_iter()
        .filter(|r| !in_matrix.contains(r))
        .collect()
}

#[test]
fn every_language_spelling_is_a_listed_request() {
    let listed: HashSet<Request> = Request::every_named(FP16)
        .into_iter()
        .chain(clconv::languages::chains())
        .collect();
    let mut spellings = 0;
    for language in clconv::languages::Language::ALL {
        for (spelling, request) in language.spellings() {
            spellings += 1;
            assert!(
                listed.contains(&request),
                "{spelling} means {request}, which `clconv list` does not print"
            );
        }
    }
    assert!(spellings > 2000, "only {spellings} spellings");
}

/// Checks the requests at the places of parity `turn` (0: even, 1: odd) of the list in one tier.
fn check_tier(flags: X64Flags, tiering: Tiering, turn: usize) {
    if !flags.target().runs_here() {
        eprintln!("NOT RUN: this CPU cannot execute code for {}", flags.name());
        return;
    }
    let requests = beyond_the_matrix_test();
    assert!(requests.len() > 10_000, "{} requests", requests.len());
    let requests: Vec<Request> = requests
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == turn)
        .map(|(_, r)| r)
        .collect();
    let jit = Jit::with_options(flags, FP16, Rounding::Rte).unwrap();
    jit.set_tiering(tiering);
    // The checker's inputs. Cranelift's full verifier stays off (a third of the compile time;
    // tests/matrix.rs runs it): every kernel still passes clconv's type check
    // (`clconv::ir_types`) before it compiles.
    let mut checker = Checker::new(jit.clone(), 16, 7);
    jit.set_verify_ir(false);
    let mut failures = Vec::new();
    let mut traps = 0;
    for r in &requests {
        let Request::Convert(c) = r else {
            failures.push(format!(
                "{r}: every request beyond the matrix is a conversion"
            ));
            continue;
        };
        traps += usize::from(c.rules().traps());
        if let Err(why) = check(&jit, &mut checker, c) {
            failures.push(format!("{r}: {why}"));
        }
    }
    eprintln!(
        "{} {tiering:?}: {} requests ({traps} trapping), {} failed",
        flags.name(),
        requests.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{:#?}",
        &failures[..failures.len().min(20)]
    );
}

/// The inputs of source type `t`: the checker's, but of a 16-bit type only the patterns whose
/// low four bits are 0, 1 or 15 (12,288 of 65,536: zeros, infinities, the first NaNs, the
/// largest finite values and every exponent with three fractions). The exhaustive sweeps and
/// `tests/matrix.rs` take every pattern; this test's cost is the reference's, per conversion.
fn inputs(checker: &mut Checker, t: clconv::ScalarType) -> Vec<u64> {
    let all = checker.inputs_for(t);
    if t.bits() != 16 {
        return all.to_vec();
    }
    all.iter()
        .copied()
        .filter(|x| matches!(x & 0xf, 0 | 1 | 0xf))
        .collect()
}

/// A per-element conversion's inputs that do not trap (all of them unless its rules trap), the
/// reference's results on them, and the inputs that trap.
struct Expected {
    calm: Vec<u64>,
    results: Vec<u64>,
    trapping: Vec<u64>,
}

/// [`Expected`] for `c` (one element) on `inputs`, computed once for all widths, tiers and flag
/// sets (the four tests run in one process).
fn expected(c: Conversion, inputs: impl FnOnce() -> Vec<u64>) -> Arc<Expected> {
    static CACHE: OnceLock<Mutex<HashMap<Conversion, Arc<Expected>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap().get(&c) {
        return Arc::clone(hit);
    }
    let (calm, trapping): (Vec<u64>, Vec<u64>) = inputs()
        .into_iter()
        .partition(|&x| !reference::traps(&c, Rounding::Rte, x));
    let converter = reference::ElementConverter::new(&c, Rounding::Rte);
    let results = calm.iter().map(|&x| converter.convert(x).bits).collect();
    let e = Arc::new(Expected {
        calm,
        results,
        trapping,
    });
    cache.lock().unwrap().insert(c, Arc::clone(&e));
    e
}

/// One conversion, in the packed layout, on the inputs that do not trap (all of them unless the
/// rules trap), in one batch, against the reference; then, for trapping rules, the first input
/// that traps must stop the kernel with [`JitError::Trap`].
fn check(jit: &Jit, checker: &mut Checker, c: &Conversion) -> Result<(), String> {
    let kernel = jit
        .compile_request(&Request::Convert(*c))
        .map_err(|e| e.to_string())?;
    let e = expected(c.per_element(), || inputs(checker, c.src().elem));
    let lanes = c.src().lanes();
    let calm = &e.calm[..e.calm.len() / lanes * lanes];
    let want = &e.results;
    let (sb, db) = (c.src().elem.bytes(), c.dst().elem.bytes());
    let mut src = Vec::with_capacity(calm.len() * sb);
    for x in calm {
        src.extend_from_slice(&x.to_le_bytes()[..sb]);
    }
    let mut got = vec![0u8; calm.len() * db];
    kernel
        .run_bytes(Layout::Packed, &src, &mut got)
        .map_err(|e| format!("on inputs that do not trap: {e}"))?;
    for (i, &x) in calm.iter().enumerate() {
        let mut bytes = [0u8; 8];
        bytes[..db].copy_from_slice(&got[i * db..(i + 1) * db]);
        let got = u64::from_le_bytes(bytes);
        if got != want[i] {
            return Err(format!("input {x:#x}: got {got:#x}, want {:#x}", want[i]));
        }
    }
    if !c.rules().traps() {
        return Ok(());
    }
    let Some(&bad) = e.trapping.first() else {
        return Err("no input traps".into());
    };
    let src = bad.to_le_bytes()[..sb].repeat(lanes);
    let mut out = vec![0u8; lanes * db];
    match kernel.run_bytes(Layout::Packed, &src, &mut out) {
        Err(JitError::Trap { .. }) => Ok(()),
        other => Err(format!(
            "input {bad:#x} should trap, and the kernel gave {other:?}"
        )),
    }
}

// The four flag sets, each a test (so that they run side by side). The host's own flag set is
// one of them, so it has no test of its own here. In each flag set the tiers take turns over
// the requests, in the opposite order from the flag set before it (sse2 and avx2 start with
// the optimised tier, sse4.1 and avx512 with the quick one): every request runs on every flag
// set, and both tiers of it run on neighbouring flag sets, in half the time of both tiers
// everywhere. (tests/matrix.rs runs both tiers of the matrix's requests on every flag set.)
fn check_both_tiers(flags: X64Flags) {
    let first = match flags {
        X64Flags::Sse41 | X64Flags::Avx512 => 1,
        _ => 0,
    };
    check_tier(flags, Tiering::OptimisedOnly, first);
    check_tier(flags, Tiering::QuickOnly, 1 - first);
}

#[test]
fn every_named_request_runs_sse2() {
    check_both_tiers(X64Flags::Sse2);
}

#[test]
fn every_named_request_runs_sse41() {
    check_both_tiers(X64Flags::Sse41);
}

#[test]
fn every_named_request_runs_avx2() {
    check_both_tiers(X64Flags::Avx2);
}

#[test]
fn every_named_request_runs_avx512() {
    check_both_tiers(X64Flags::Avx512);
}

/// The same requests compile to object code for aarch64, riscv64 (with and without V) and
/// s390x, both tiers: one entry point per element conversion (the packed layout's code, which
/// every width shares). The trapping ones are refused by the AOT compiler with its typed
/// error, as `tests/traps.rs` says. (Compiled, not run: `tests/cross_isa.rs` runs the matrix
/// under QEMU.)
#[test]
fn every_named_request_compiles_for_the_other_isas() {
    use clconv::aot::{AotError, ObjectBuilder};
    use clconv::kernel::Tier;
    use clconv::target::Target;
    let mut per_element: Vec<Request> = beyond_the_matrix_test()
        .into_iter()
        .map(|r| match r {
            Request::Convert(c) => Request::Convert(c.per_element()),
            other => other,
        })
        .collect();
    per_element.sort();
    per_element.dedup();
    assert!(per_element.len() > 2000, "{} requests", per_element.len());
    for target in [
        Target::Aarch64,
        Target::Riscv64,
        Target::Riscv64V,
        Target::S390x,
    ] {
        let mut object = ObjectBuilder::new(target).unwrap();
        let mut failures = Vec::new();
        for r in &per_element {
            let traps = matches!(r, Request::Convert(c) if c.rules().traps());
            for tier in [Tier::Optimised, Tier::Quick] {
                match (object.add(r, tier), traps) {
                    (Ok(_), false) | (Err(AotError::Traps { .. }), true) => {}
                    (outcome, _) => failures.push(format!("{r} {tier:?}: {outcome:?}")),
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{}: {:#?}",
            target.name(),
            &failures[..failures.len().min(20)]
        );
        object.finish().unwrap();
    }
}
