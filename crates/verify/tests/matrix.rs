//! The whole matrix through the JIT, compared bit for bit with the reference interpreter:
//! every conversion (half included) and every `as_` pair, at every width and layout, on at least
//! 1,000 inputs per request plus every 8/16-bit source pattern, for each x86-64 flag set this
//! machine can run (each picks different rows of `lowering-tables/x86_64.table`), in both tiers
//! of code the JIT runs (the quick kernel [`Jit::compile`] returns at once, and the optimised
//! one it swaps in).

use clconv::jit::{Jit, Tiering, X64Flags};
use clconv::{Extensions, Request, Rounding, Width};
use clconv_verify::check::Checker;

fn check_matrix(flags: X64Flags) {
    check_tier(flags, Tiering::OptimisedOnly);
    check_tier(flags, Tiering::QuickOnly);
}

fn check_tier(flags: X64Flags, tiering: Tiering) {
    if !flags.target().runs_here() {
        // Not a skip hidden behind green: the flag set is named in the output, and CI machines
        // of this project have AVX-512 (see the notes); a machine without it says so here.
        eprintln!("NOT RUN: this CPU cannot execute code for {}", flags.name());
        return;
    }
    let ext = Extensions::with_fp16();
    let jit = Jit::with_options(flags, ext, Rounding::Rte).unwrap();
    jit.set_tiering(tiering);
    let mut checker = Checker::new(jit.clone(), 1000, 1);
    // Cranelift's IR verifier (a third of a compile) on the quick tier's kernels, and on the
    // host's optimised ones. An optimised kernel of another flag set is the quick one's IR
    // with its loop body repeated (`kernel::build`'s unroll), which the quick tier's run of the
    // same flag set verified; clconv's own type check (`clconv::ir_types`) still runs on every
    // kernel before it compiles.
    if tiering == Tiering::OptimisedOnly && flags != X64Flags::Host {
        jit.set_verify_ir(false);
    }
    // The matrix, and what the languages spell beyond it (chains, PTX's float rules).
    let mut requests = Request::all(ext);
    requests.extend(clconv::languages::beyond_the_matrix());
    let filter = std::env::var("CLCONV_FILTER").unwrap_or_default();
    // Under QEMU (scripts/aarch64-host) the tiers take turns: the optimised tier runs the
    // requests at even places of the list, the quick tier those at odd places, so that every
    // request (of the widths kept below) runs through the JIT once, in half the time. Both tiers' code of every request
    // runs under QEMU anyway, as object code (crates/verify/tests/cross_isa.rs).
    let turn = match std::env::var("CLCONV_MATRIX_TIERS_TAKE_TURNS").as_deref() {
        Ok("1") => Some(usize::from(tiering == Tiering::QuickOnly)),
        Ok(other) => panic!("CLCONV_MATRIX_TIERS_TAKE_TURNS={other}: only 1 is meant"),
        Err(_) => None,
    };
    if turn.is_some() {
        eprintln!(
            "{} {tiering:?}: tiers take turns (CLCONV_MATRIX_TIERS_TAKE_TURNS=1): every other request",
            flags.name()
        );
        // And the narrow formats' 3,150 requests are left out there: their kernels are one
        // per-element sequence in integer IR with no host-dependent recipe (the tables'
        // `scalar` rows), whose aarch64 code runs under QEMU as object code in cross_isa, both
        // tiers, every request.
        requests.retain(|r| !r.src().elem.is_narrow() && !r.dst().elem.is_narrow());
        eprintln!(
            "{}: the narrow formats' requests left out (see cross_isa)",
            flags.name()
        );
        // And only the sources of widths 1, 3 and 16: each element conversion's loop at its
        // scalar, padded 3-component (both layouts) and multi-part shapes, and the JIT's own
        // glue (code memory, calls, tails, threads), which is what only this run checks.
        // Widths 2, 4 and 8 change how many lanes the same recipe converts; their aarch64
        // code runs under QEMU as object code in cross_isa, every request, both tiers. (The
        // interpreter's other-target test takes the same three widths.)
        requests.retain(|r| matches!(r.src().width, Width::W1 | Width::W3 | Width::W16));
        eprintln!(
            "{}: sources of widths 1, 3 and 16 only ({} requests; every width in cross_isa)",
            flags.name(),
            requests.len()
        );
    }
    let mut failed = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut checked = 0;
    let mut elements = 0usize;
    let turns = requests
        .iter()
        .enumerate()
        .filter(|(i, _)| turn.is_none_or(|t| i % 2 == t))
        .map(|(_, r)| r);
    for r in turns.filter(|r| r.to_string().contains(&filter)) {
        let outcome = match checker.check(r) {
            Ok(o) => o,
            Err(e) => {
                errors.push(format!("{r}: {e}"));
                continue;
            }
        };
        checked += 1;
        elements += outcome.elements;
        // At least 1,000 inputs, or every bit pattern of an 8-bit source (256).
        let distinct = checker.inputs_for(r.src().elem).len();
        let exhaustive = r.src().elem.bits() <= 16 && distinct == 1 << r.src().elem.bits();
        assert!(
            distinct >= 1000 || exhaustive,
            "{r}: only {distinct} inputs"
        );
        assert!(
            outcome.elements >= distinct,
            "{r}: {} elements",
            outcome.elements
        );
        if outcome.mismatch_count > 0 {
            failed.push((r.to_string(), outcome));
        }
    }
    for (name, o) in failed.iter().take(40) {
        eprintln!("{name}: {} mismatches", o.mismatch_count);
        for m in o.mismatches.iter().take(3) {
            eprintln!("  {m}");
        }
    }
    eprintln!(
        "{} {tiering:?}: {checked} requests, {elements} elements, {} failed",
        flags.name(),
        failed.len()
    );
    assert!(
        errors.is_empty(),
        "{} {tiering:?}: errors: {errors:?}",
        flags.name()
    );
    assert!(
        failed.is_empty(),
        "{tiering:?}: {} of {checked} requests mismatch",
        failed.len()
    );
}

// The host's two tiers are two tests, so that they run side by side (the other flag sets' tests
// already do); under QEMU (scripts/aarch64-host) that halves the wall time.
#[test]
fn whole_matrix_matches_the_reference_host_optimised() {
    check_tier(X64Flags::Host, Tiering::OptimisedOnly);
}

#[test]
fn whole_matrix_matches_the_reference_host_quick() {
    check_tier(X64Flags::Host, Tiering::QuickOnly);
}

#[test]
fn whole_matrix_matches_the_reference_sse2() {
    check_matrix(X64Flags::Sse2);
}

#[test]
fn whole_matrix_matches_the_reference_sse41() {
    check_matrix(X64Flags::Sse41);
}

#[test]
fn whole_matrix_matches_the_reference_avx2() {
    check_matrix(X64Flags::Avx2);
}

#[test]
fn whole_matrix_matches_the_reference_avx512() {
    check_matrix(X64Flags::Avx512);
}
