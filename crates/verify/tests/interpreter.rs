//! The whole matrix in Cranelift's interpreter (`clconv_verify::interp`): the same IR the JIT compiles,
//! run without the x64 backend, compared byte for byte with the reference interpreter; the
//! kernels of the other targets' lowering tables likewise. Plus hand-computed results on which
//! the JIT, the interpreter and the reference must all agree, and kernels that are wrong on
//! purpose, to show the check can fail and that a wild kernel is stopped safely.
//!
//! `CLCONV_FILTER=<substring>` restricts the matrix test to matching requests.

use clconv::jit::{self, Jit, X64Flags};
use clconv::target::Target;
use clconv::{
    buffer, kernel, reference, table, Extensions, Layout, Request, Rounding, ScalarType, Width,
};
use clconv_verify::check;
use clconv_verify::interp::{self, Access, InterpError, InterpOutcome};
use counted_loop::counted_loop;
use cranelift_codegen::ir::{types, Endianness, Function, InstBuilder, MemFlagsData, UserFuncName};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use std::time::{Duration, Instant};

#[path = "../../../tests/common/counted_loop.rs"]
mod counted_loop;

/// Inputs per request: every special value (about 100 for float and double sources, fewer for
/// the others) plus a spread of the rest; all 256 patterns of an 8-bit source. This file then
/// takes about 42 s of CPU time (27 s the matrix, 6.6 M elements; 14 s the other targets), so
/// about 25 s wall on the idle 2-core machine (50–90 s while other builds load it).
const INPUTS: usize = 768;
const SEED: u64 = 1;

/// Requests (canonical spellings, sorted) the interpreter cannot run, in either layout. None:
/// clconv's kernels use no F16 arithmetic, no x86-specific opcode, no vector wider than 128 bits
/// and no call (see the `clconv_verify::interp` module docs). A new entry is a regression in the
/// lowering's portability or in the interpreter: document it there and here.
const EXPECTED_UNSUPPORTED: &[&str] = &[];

#[test]
fn whole_matrix_in_the_interpreter_matches_the_reference() {
    let started = Instant::now();
    let all = Request::all(Extensions::with_fp16());
    // The 10,500 conversions and 1,132 reinterpretations of the fourteen types, the 720
    // conversions under WGSL's and PTX's rules that differ from OpenCL's, the 174 to and from
    // bool, and the narrow formats' 3,150.
    assert_eq!(all.len(), 10500 + 1132 + 720 + 174 + 3150);
    let all_count = all.len();
    let filter = std::env::var("CLCONV_FILTER").unwrap_or_default();
    // Not the width-4 and width-8 requests whose source and destination are both whole
    // 128-bit vectors (`float4` -> `int4`, `double8` -> `long8`): their kernels run one, two or
    // four of the 128-bit parts the width-16 kernel runs more of, the same IR per part (and a
    // lane-by-lane kernel the same loop). Narrower vectors (`char4`, `short4`) are shapes of
    // their own and stay; tests/matrix.rs runs every width natively.
    let whole_parts = |r: &Request| {
        let whole = |t: clconv::VectorType| (t.lanes() * t.elem.bytes()).is_multiple_of(16);
        matches!(r.src().width, Width::W4 | Width::W8) && whole(r.src()) && whole(r.dst())
    };
    let requests: Vec<Request> = all
        .into_iter()
        .filter(|r| !whole_parts(r))
        .filter(|r| r.to_string().contains(&filter))
        .collect();
    eprintln!(
        "{} of the {all_count} requests: the width-4 and width-8 ones of whole 128-bit vectors left out",
        requests.len()
    );
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    type Results = (Vec<Result<InterpOutcome, (String, InterpError)>>, Duration);
    let per_thread: Vec<Results> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let requests = &requests;
                s.spawn(move || {
                    let busy = cpu_time();
                    let results = requests
                        .iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|r| {
                            interp::check_request(r, INPUTS, SEED).map_err(|e| (r.to_string(), e))
                        })
                        .collect();
                    (results, cpu_time() - busy)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut busy = Duration::ZERO;
    let (mut elements, mut instructions, mut checked) = (0usize, 0u64, 0usize);
    let mut failed: Vec<String> = Vec::new();
    let mut unsupported: Vec<String> = Vec::new();
    for (results, time) in per_thread {
        busy += time;
        for result in results {
            checked += 1;
            let o = match result {
                Ok(o) => o,
                Err((name, e)) => {
                    failed.push(format!("{name}: {e}"));
                    continue;
                }
            };
            elements += o.elements;
            instructions += o.instructions;
            assert!(o.inputs >= 64, "{}: only {} inputs", o.request, o.inputs);
            if let Some(u) = &o.unsupported {
                unsupported.push(format!(
                    "{} [{}] (recipe {}): {}",
                    o.request,
                    u.layout.name(),
                    o.recipe,
                    u.what
                ));
            }
            if o.mismatch_count > 0 {
                let mut line = format!(
                    "{} (recipe {}): {} mismatches",
                    o.request, o.recipe, o.mismatch_count
                );
                for m in o.mismatches.iter().take(3) {
                    line += &format!("\n  {m}");
                }
                failed.push(line);
            }
        }
    }
    for f in failed.iter().take(40) {
        eprintln!("{f}");
    }
    for u in &unsupported {
        eprintln!("cannot run: {u}");
    }
    let secs = busy.as_secs_f64();
    eprintln!(
        "{checked} requests, {elements} elements, {instructions} IR instructions; {} cannot run, {} failed",
        unsupported.len(),
        failed.len()
    );
    eprintln!(
        "{:.2} M elements/s, {:.1} M instructions/s per core (interpretation, reference and kernel building; {threads} threads, {:.1} s CPU); wall {:.1} s",
        elements as f64 / secs / 1e6,
        instructions as f64 / secs / 1e6,
        secs,
        started.elapsed().as_secs_f64()
    );
    assert!(
        failed.is_empty(),
        "{} of {checked} requests failed",
        failed.len()
    );
    let mut names: Vec<&str> = unsupported
        .iter()
        .map(|u| u.split(" [").next().unwrap_or(u))
        .collect();
    names.sort_unstable();
    names.dedup();
    if filter.is_empty() {
        assert_eq!(
            names, EXPECTED_UNSUPPORTED,
            "the set of requests the interpreter cannot run changed"
        );
    } else {
        let expected: Vec<&str> = EXPECTED_UNSUPPORTED
            .iter()
            .copied()
            .filter(|n| n.contains(&filter))
            .collect();
        assert_eq!(names, expected);
    }
}

/// Inputs per request on the other targets' recipes (fewer: the IR is already known to be right
/// wherever a target picks the host's recipe).
const INPUTS_OTHER_TARGETS: usize = 128;

/// Every target's lowering table, run in the interpreter: the only way to execute the AArch64,
/// RISC-V and s390x kernels on this machine. A kernel's IR depends only on the request, the
/// layout and the recipe the target's table picks, so only the (request, recipe) pairs the host
/// does not already check are run: for each element conversion (table key) whose recipe differs
/// from the host's, the scalar, 3-component (both layouts) and 16-component requests. (The
/// other widths only change how many elements the same loop converts.)
#[test]
fn other_targets_kernels_match_the_reference() {
    let started = Instant::now();
    let host = jit::host_isa(X64Flags::Host).unwrap();
    let requests = Request::all(Extensions::with_fp16());
    let recipe_of = |isa: &dyn cranelift_codegen::isa::TargetIsa, r: &Request| {
        table::choose_for(isa, &kernel::key_of(r, Rounding::Rte))
            .unwrap()
            .recipe
            .name
    };
    let mut seen = std::collections::HashSet::new();
    // The work first: each (target, request) whose recipe the host does not use, once per
    // recipe. Then the interpreter runs on every core (the checks are independent).
    let mut work = Vec::new();
    let isas: Vec<_> = Target::ALL
        .into_iter()
        .filter(|&t| t != Target::Host)
        .map(|t| (t, t.isa().unwrap()))
        .collect();
    for (k, (target, isa)) in isas.iter().enumerate() {
        let mut here = 0;
        let widths = [Width::W1, Width::W3, Width::W16];
        for r in requests.iter().filter(|r| widths.contains(&r.src().width)) {
            let recipe = recipe_of(&**isa, r);
            if recipe == recipe_of(&*host, r) || !seen.insert((*r, recipe)) {
                continue;
            }
            here += 1;
            work.push((k, *r, recipe));
        }
        eprintln!(
            "{}: {here} requests with a recipe the host does not use",
            target.name()
        );
    }
    let checked = work.len();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    type Outcome = (usize, Vec<String>, Vec<String>);
    let results: Vec<Outcome> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let (mut elements, mut failed, mut unsupported) = (0, Vec::new(), Vec::new());
                    while let Some(&(k, r, recipe)) =
                        work.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        let (target, isa) = &isas[k];
                        match interp::check_request_on(&r, &**isa, INPUTS_OTHER_TARGETS, SEED) {
                            Ok(o) => {
                                assert_eq!(o.recipe, recipe);
                                elements += o.elements;
                                if let Some(u) = &o.unsupported {
                                    unsupported.push(format!(
                                        "{}: {r} (recipe {recipe}): {}",
                                        target.name(),
                                        u.what
                                    ));
                                }
                                if o.mismatch_count > 0 {
                                    failed.push(format!(
                                        "{}: {r} (recipe {recipe}): {} mismatches, first {:?}",
                                        target.name(),
                                        o.mismatch_count,
                                        o.mismatches.first()
                                    ));
                                }
                            }
                            Err(e) => failed
                                .push(format!("{}: {r} (recipe {recipe}): {e}", target.name())),
                        }
                    }
                    (elements, failed, unsupported)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let elements: usize = results.iter().map(|r| r.0).sum();
    let failed: Vec<String> = results.iter().flat_map(|r| r.1.clone()).collect();
    let unsupported: Vec<String> = results.iter().flat_map(|r| r.2.clone()).collect();
    for f in failed.iter().take(40) {
        eprintln!("{f}");
    }
    for u in &unsupported {
        eprintln!("cannot run: {u}");
    }
    eprintln!(
        "{checked} requests, {elements} elements, {} cannot run, {} failed, {:.1} s",
        unsupported.len(),
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failed.is_empty(), "{} failed", failed.len());
    assert!(
        unsupported.is_empty(),
        "the interpreter cannot run {} kernels",
        unsupported.len()
    );
}

/// The rows only the builder API takes (code lowered into a caller's function runs in the
/// caller's nearest-even mode, so on x86-64 it never takes the `mxcsr` rows the batch kernels
/// take): for every target and every element conversion whose builder-API recipe differs from
/// its batch recipe, that recipe's kernel (`kernel::build_with_recipe`) in the interpreter,
/// nearest-even, against the reference. This is what runs `int_to_float.convert_back` (and the
/// driver's `x86_cvtt2dq`) and the builder API's other directed int -> float rows in the
/// interpreter now that the host's batch kernels no longer use them.
#[test]
fn builder_api_recipes_match_the_reference() {
    let started = Instant::now();
    let scalar: Vec<Request> = Request::all(Extensions::with_fp16())
        .into_iter()
        .filter(|r| matches!(r, Request::Convert(_)) && r.src().width == Width::W1)
        .collect();
    let mut seen = std::collections::HashSet::new();
    let (mut checked, mut elements) = (0usize, 0usize);
    let mut by_recipe = std::collections::BTreeMap::<&str, usize>::new();
    let mut failed = Vec::new();
    for target in Target::ALL {
        let isa = target.isa().unwrap();
        let batch = table::IsaFeatures::of(&*isa).unwrap();
        let builder = batch.clone().without_rounding_control();
        for r in &scalar {
            let key = kernel::key_of(r, Rounding::Rte);
            let recipe = builder.choose(&key).unwrap().recipe;
            if recipe.name == batch.choose(&key).unwrap().recipe.name
                || !seen.insert((key, recipe.name))
            {
                continue;
            }
            checked += 1;
            *by_recipe.entry(recipe.name).or_default() += 1;
            let func = kernel::build_with_recipe(
                r,
                Layout::Packed,
                Rounding::Rte,
                recipe,
                isa.frontend_config(),
                0,
                kernel::Tier::Optimised,
            );
            let granule = kernel::granule(r, Layout::Packed, Rounding::Rte, recipe);
            let inputs = interp::sample_inputs(r.src().elem, INPUTS, SEED);
            match interp::check_function(r, Layout::Packed, &func, granule, &inputs) {
                Ok(o) => {
                    elements += o.elements;
                    if let Some(u) = &o.unsupported {
                        failed.push(format!(
                            "{}: {r} ({}): cannot run: {}",
                            target.name(),
                            recipe.name,
                            u.what
                        ));
                    } else if o.mismatch_count > 0 {
                        failed.push(format!(
                            "{}: {r} ({}): {} mismatches, first {:?}",
                            target.name(),
                            recipe.name,
                            o.mismatch_count,
                            o.mismatches.first()
                        ));
                    }
                }
                Err(e) => failed.push(format!("{}: {r} ({}): {e}", target.name(), recipe.name)),
            }
        }
    }
    report(
        &failed,
        format!("{checked} conversions on builder-API recipes {by_recipe:?}, {elements} elements"),
        started,
    );
    // The rows the x86-64 table gives the builder API in place of the mxcsr rows (int and uint
    // -> float, long -> double, ulong -> float and double, long -> float, double -> float, each
    // in three directed modes), so that a table edit which stops reaching them shows here.
    for name in [
        "int_to_float.convert_back",
        "int_to_float.split_sum",
        "scalar",
        "float_to_float.demote",
    ] {
        assert!(
            by_recipe.contains_key(name),
            "no conversion took {name}: {by_recipe:?}"
        );
    }
}

/// Prints the first 40 failures and `summary` with the failure count and the time since
/// `started`, then fails the test if anything failed.
fn report(failed: &[String], summary: String, started: Instant) {
    for f in failed.iter().take(40) {
        eprintln!("{f}");
    }
    eprintln!(
        "{summary}, {} failed, {:.1} s",
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failed.is_empty(), "{} failed", failed.len());
}

/// Elements per arithmetic kernel in the interpreter: a multiple of 3 and 4.
const ARITH_ELEMENTS: usize = 192;

/// Every arithmetic kernel ([`clconv::arith_kernel`]) in Cranelift's interpreter against the
/// reference's soft-float: each operation, type, mode, the scalar, vector and 3-component
/// kernels (packed and aligned), in both forms the JIT compiles: the exact sequences, run in
/// nearest-even, and the native instruction by the rounding control, run with the driver
/// executing `fadd` .. `fma` in the request's mode. Operands: the interpreter's sample of each
/// type (specials, subnormals, random), with exact zero sums (b = -a), equal operands and
/// values in [1, 2) planted.
#[test]
fn arithmetic_kernels_in_the_interpreter_match_the_reference() {
    use clconv::arith::{ArithOp, ArithRequest, FloatType};
    use clconv::arith_kernel;
    use clconv::reference::arith::{element, same_result};
    let started = Instant::now();
    let isa = Target::X86_64Avx2.isa().unwrap();
    let (mut kernels, mut elements, mut failed) = (0usize, 0usize, Vec::new());
    for ty in FloatType::ALL {
        let eb = ty.bytes();
        let samples: Vec<Vec<u64>> = (0..3)
            .map(|k| interp::sample_inputs(ty.scalar_type(), ARITH_ELEMENTS, SEED + k))
            .collect();
        let tuples: Vec<[u64; 3]> = (0..ARITH_ELEMENTS)
            .map(|i| {
                let (a, mut b, c) = (samples[0][i], samples[1][i], samples[2][i]);
                let (mut a, mut c) = (a, c);
                // Values in [1, 2) from the samples' low bits: mostly inexact results.
                let mantissa = (1u64 << (ty.precision() - 1)) - 1;
                let one = match ty {
                    FloatType::Float => 1f32.to_bits() as u64,
                    FloatType::Double => 1f64.to_bits(),
                };
                match i % 8 {
                    0 => b = a ^ (1 << (ty.bits() - 1)), // a + (-a): an exact zero sum
                    1 => b = a,
                    2..=4 => {
                        a = one | (a & mantissa);
                        b = one | (b & mantissa);
                        c = one | (c & mantissa);
                    }
                    _ => {}
                }
                [a, b, c]
            })
            .collect();
        let vector = if ty == FloatType::Float {
            Width::W4
        } else {
            Width::W2
        };
        for op in ArithOp::ALL {
            for mode in Rounding::ALL {
                for (width, layout) in [
                    (Width::W1, Layout::Packed),
                    (vector, Layout::Packed),
                    (Width::W3, Layout::Packed),
                    (Width::W3, Layout::Aligned),
                ] {
                    let r = ArithRequest::new(op, ty, width, Some(mode));
                    let frontend = isa.frontend_config();
                    let mut forms = vec![(
                        "exact",
                        arith_kernel::build(&r, layout, Rounding::Rte, frontend),
                        Rounding::Rte,
                    )];
                    if mode != Rounding::Rte {
                        let native =
                            arith_kernel::build_by_control(&r, layout, Rounding::Rte, frontend);
                        forms.push(("by control", native, mode));
                    }
                    let (lanes, stride) = (width.lanes(), layout.stride(width));
                    let vectors = ARITH_ELEMENTS / lanes;
                    // Element i of the sample sits in slot (i / lanes) * stride + i % lanes;
                    // padding slots hold NaN bits, which must not reach the output's padding.
                    let slot = |i: usize| (i / lanes) * stride + i % lanes;
                    let mut operands = vec![vec![0xffu8; vectors * stride * eb]; op.arity()];
                    for (i, t) in tuples.iter().enumerate() {
                        for (o, buf) in operands.iter_mut().enumerate() {
                            let at = slot(i) * eb;
                            buf[at..at + eb].copy_from_slice(&t[o].to_le_bytes()[..eb]);
                        }
                    }
                    let refs: Vec<&[u8]> = operands.iter().map(Vec::as_slice).collect();
                    for (form, func, run_mode) in &forms {
                        kernels += 1;
                        let mut dst = vec![0x55u8; vectors * stride * eb];
                        if let Err(e) =
                            interp::run_arith_kernel(func, &refs, &mut dst, vectors, *run_mode)
                        {
                            failed.push(format!("{r} {layout:?} {form}: {e}"));
                            continue;
                        }
                        let mut bad = 0;
                        let mut first = None;
                        for (i, t) in tuples.iter().enumerate() {
                            let at = slot(i) * eb;
                            let mut raw = [0u8; 8];
                            raw[..eb].copy_from_slice(&dst[at..at + eb]);
                            let got = u64::from_le_bytes(raw);
                            let want = element(op, ty, mode, *t);
                            elements += 1;
                            if !same_result(ty, want, got) {
                                bad += 1;
                                first.get_or_insert((t[..op.arity()].to_vec(), want, got));
                            }
                        }
                        let padding_ok = (0..vectors * stride)
                            .filter(|k| k % stride >= lanes)
                            .all(|k| dst[k * eb..(k + 1) * eb].iter().all(|&b| b == 0));
                        if bad > 0 || !padding_ok {
                            failed.push(format!(
                                "{r} {layout:?} {form}: {bad} mismatches, first (operands, want, got) {:x?}{}",
                                first,
                                if padding_ok { "" } else { "; padding not zero" }
                            ));
                        }
                    }
                }
            }
        }
    }
    report(
        &failed,
        format!("{kernels} arithmetic kernels, {elements} elements"),
        started,
    );
    // 6 operations x 2 types x 4 kernels x (4 exact + 3 by control).
    assert_eq!(kernels, 6 * 2 * 4 * 7);
}

/// The sample contains the values that matter, and only values `check::inputs` has.
#[test]
fn samples_hold_the_special_values() {
    for t in ScalarType::ALL {
        let s = interp::sample_inputs(t, INPUTS, SEED);
        let all = check::inputs(t, interp::RANDOM_INPUTS, SEED);
        assert!(s.len() >= INPUTS.min(all.len()), "{t}: {} inputs", s.len());
        let mut sorted = s.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), s.len(), "{t}: duplicates");
        assert!(
            s.iter().all(|x| all.contains(x)),
            "{t}: not from check::inputs"
        );
        assert_eq!(
            s,
            interp::sample_inputs(t, INPUTS, SEED),
            "{t}: not deterministic"
        );
        let must: Vec<u64> = match t {
            ScalarType::Float => vec![
                0,
                0x8000_0000,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0xffc0_0000,
                0x7f80_0001, // signalling
                0x7fff_ffff,
                1,
                0x8000_0001,
                0x007f_ffff,
                0x0080_0000,
                0x7f7f_ffff,
                0xff7f_ffff,
                0x4f00_0000, // 2^31
                0x4f7f_ffff, // just below 2^32
                0x4f80_0000, // 2^32
                0xdf00_0000, // -2^63
                0x5f80_0000, // 2^64
                0x4300_0000, // 128
                0xc300_0000, // -128
                0x3f00_0000, // 0.5
                0x3eff_ffff, // 0.5 - 1 ulp
                0x477f_e000, // 65504
                0x477f_f000, // 65520
            ],
            ScalarType::Double => vec![
                0,
                1 << 63,
                0x7ff0_0000_0000_0000,
                0xfff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0x7ff0_0000_0000_0001,
                1,
                0x000f_ffff_ffff_ffff,
                0x7fef_ffff_ffff_ffff,
                0x41e0_0000_0000_0000, // 2^31
                0xc3e0_0000_0000_0000, // -2^63
                0x43f0_0000_0000_0000, // 2^64
                0x47ef_ffff_e000_0000, // FLT_MAX
                0x47ef_ffff_f000_0000, // FLT_MAX + half an ulp
                0x36a0_0000_0000_0000, // 2^-149
            ],
            ScalarType::Half => vec![
                0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe00, 1, 0x8001, 0x03ff, 0x0400,
                0x7bff, 0xfbff,
            ],
            ScalarType::BFloat => vec![
                0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 1, 0x8001, 0x007f, 0x0080, 0x7f7f,
                0xff7f,
            ],
            // Every pattern: INPUTS is above 256.
            ScalarType::Fp8E4M3 | ScalarType::Fp8E5M2 => (0..256).collect(),
            _ => {
                let mask = if t.bits() == 64 {
                    u64::MAX
                } else {
                    (1 << t.bits()) - 1
                };
                let mut v = vec![0, 1, mask];
                for other in ScalarType::ALL.into_iter().filter(|o| o.is_integer()) {
                    if other.bits() <= t.bits()
                        && other.is_signed_integer() == t.is_signed_integer()
                    {
                        v.push(other.int_max().unwrap() as u64 & mask);
                        v.push(other.int_min().unwrap() as u64 & mask);
                    }
                }
                v
            }
        };
        for m in must {
            assert!(s.contains(&m), "{t}: the sample lacks 0x{m:x}");
        }
    }
}

fn le<T: Copy, const N: usize>(values: &[T], bytes: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| bytes(v)).collect()
}

/// The JIT, the interpreter and the reference all give the hand-computed bytes.
fn agree(name: &str, layout: Layout, src: &[u8], expected: &[u8]) {
    let ext = Extensions::with_fp16();
    let r = Request::parse(name, ext).unwrap();
    let vectors = buffer::vector_count(&r, layout, src.len(), expected.len()).unwrap();

    let jit = Jit::with_options(X64Flags::Host, ext, Rounding::Rte).unwrap();
    let mut got = vec![0xa5u8; expected.len()];
    jit.compile_request(&r)
        .unwrap()
        .run_bytes(layout, src, &mut got)
        .unwrap();
    assert_eq!(got, expected, "JIT: {name} [{}]", layout.name());

    let isa = jit::host_isa(X64Flags::Host).unwrap();
    let built = kernel::build(&r, layout, Rounding::Rte, &*isa, 0).unwrap();
    let mut got = vec![0xa5u8; expected.len()];
    interp::run_built(&built, src, &mut got, vectors).unwrap();
    assert_eq!(got, expected, "interpreter: {name} [{}]", layout.name());

    let mut got = vec![0xa5u8; expected.len()];
    reference::evaluate(&r, layout, src, &mut got).unwrap();
    assert_eq!(got, expected, "reference: {name} [{}]", layout.name());
}

#[test]
fn interpreter_jit_and_reference_agree_on_hand_computed_results() {
    let f32s = |v: &[f32]| le(v, f32::to_le_bytes);
    let f64s = |v: &[f64]| le(v, f64::to_le_bytes);
    let u16s = |v: &[u16]| le(v, u16::to_le_bytes);
    let u32s = |v: &[u32]| le(v, u32::to_le_bytes);
    let i32s = |v: &[i32]| le(v, i32::to_le_bytes);
    let u64s = |v: &[u64]| le(v, u64::to_le_bytes);
    let p = Layout::Packed;

    agree(
        "convert_uchar4_sat_rte(float4)",
        p,
        &f32s(&[-5.0, 254.5, 254.6, 1.2e9]),
        &[0, 254, 255, 255],
    );
    agree(
        "convert_int4_sat_rte(double4)",
        p,
        &f64s(&[0.5, 1.5, -2.5, f64::NAN]),
        &i32s(&[0, 2, -2, 0]),
    );
    agree(
        "convert_char2_sat(int2)",
        p,
        &i32s(&[200, -200]),
        &[127, 0x80],
    );
    agree(
        "convert_uchar2(int2)",
        p,
        &i32s(&[0x1ff, -1]),
        &[0xff, 0xff],
    );
    agree(
        "convert_ulong2_sat_rtp(double2)",
        p,
        &f64s(&[1.5, 1.8446744073709552e19]),
        &u64s(&[2, u64::MAX]),
    );
    // 2^24 + 1 and 2^24 + 3 are not floats: rtp, rtz and rte (ties to even) differ.
    agree(
        "convert_float2_rtp(int2)",
        p,
        &i32s(&[16_777_217, -16_777_217]),
        &u32s(&[0x4b80_0001, 0xcb80_0000]),
    );
    agree(
        "convert_float2_rtz(long2)",
        p,
        &u64s(&[16_777_217, (-16_777_219i64) as u64]),
        &u32s(&[0x4b80_0000, 0xcb80_0001]),
    );
    agree(
        "convert_float(uint)",
        p,
        &u32s(&[16_777_219]),
        &u32s(&[0x4b80_0002]),
    );
    // half: 65519 rounds to 65504, the tie 65520 to infinity (rte) or 65504 (rtz).
    agree(
        "convert_half2(float2)",
        p,
        &f32s(&[65519.0, 65520.0]),
        &u16s(&[0x7bff, 0x7c00]),
    );
    agree(
        "convert_half2_rtz(float2)",
        p,
        &f32s(&[65519.0, 65520.0]),
        &u16s(&[0x7bff, 0x7bff]),
    );
    agree(
        "convert_half_rtp(double)",
        p,
        &f64s(&[1e-30]),
        &u16s(&[0x0001]),
    );
    agree(
        "convert_float2(half2)",
        p,
        &u16s(&[0x0001, 0x7c01]),
        &u32s(&[0x3380_0000, 0x7fc0_2000]),
    );
    // NaN payloads through fpromote and fdemote: quieted, top payload bits kept.
    agree(
        "convert_double(float)",
        p,
        &u32s(&[0x7f80_0001]),
        &u64s(&[0x7ff8_0000_2000_0000]),
    );
    agree(
        "convert_float_rtz(double)",
        p,
        &u64s(&[0x7ff0_0000_0000_0001]),
        &u32s(&[0x7fc0_0000]),
    );
    agree(
        "convert_float(double)",
        p,
        &u64s(&[0xfff4_5a5a_5a5a_5a5a]),
        &u32s(&[0xffe2_d2d2]),
    );
    // 3-component vectors: the aligned layout skips the source padding and zeroes the result's.
    agree(
        "convert_float3(int3)",
        p,
        &i32s(&[1, -2, 3]),
        &f32s(&[1.0, -2.0, 3.0]),
    );
    agree(
        "convert_float3(int3)",
        Layout::Aligned,
        &i32s(&[1, -2, 3, 0x1234_5678]),
        &f32s(&[1.0, -2.0, 3.0, 0.0]),
    );
    agree("as_int(float)", p, &f32s(&[1.0]), &u32s(&[0x3f80_0000]));
    agree("as_uchar4(float)", p, &f32s(&[-0.0]), &[0, 0, 0, 0x80]);
}

/// A kernel `fn(src, dst, vectors)` whose loop body is `body(builder, src, dst, i)`.
fn hand_kernel(
    body: impl Fn(
        &mut FunctionBuilder,
        cranelift_codegen::ir::Value,
        cranelift_codegen::ir::Value,
        cranelift_codegen::ir::Value,
    ),
) -> Function {
    let isa = jit::host_isa(X64Flags::Host).unwrap();
    let mut func = Function::with_name_signature(
        UserFuncName::user(0, 0),
        kernel::signature(isa.default_call_conv()),
    );
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    counted_loop(&mut b, |b, params, i| body(b, params[0], params[1], i));
    b.finalize(isa.frontend_config());
    func
}

fn flags() -> MemFlagsData {
    MemFlagsData::new()
        .with_endianness(Endianness::Little)
        .with_notrap()
}

#[test]
fn a_wrong_kernel_is_reported() {
    let r = Request::parse("convert_uchar_sat(float)", Extensions::default()).unwrap();
    let elements = interp::sample_inputs(ScalarType::Float, 64, SEED);
    // Control: the real kernel passes.
    let isa = jit::host_isa(X64Flags::Host).unwrap();
    let built = kernel::build(&r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
    let (real, granule) = (built.func, built.granule);
    let o = interp::check_function(&r, Layout::Packed, &real, granule, &elements).unwrap();
    assert!(o.passed() && o.elements > 64, "{o:?}");

    // Stores the constant 7 into every element.
    let constant = hand_kernel(|b, _src, dst, i| {
        let seven = b.ins().iconst(types::I8, 7);
        let at = b.ins().iadd(dst, i);
        b.ins().store(flags(), seven, at, 0);
    });
    let o = interp::check_function(&r, Layout::Packed, &constant, 1, &elements).unwrap();
    assert!(!o.passed());
    // Every element whose correct result is not 7 mismatches, at every length the check runs
    // (scalar: 0, 1, 2, 3, 15, 16, 17, 31, 32, 33 and all elements).
    let scalar = r_scalar(&r);
    let wrong = |x: &u64| reference::convert_element(&scalar, Rounding::Rte, *x).bits != 7;
    let expected: usize = [0, 1, 2, 3, 15, 16, 17, 31, 32, 33, elements.len()]
        .iter()
        .map(|&n| elements[..n].iter().filter(|x| wrong(x)).count())
        .sum();
    assert!(expected > 200);
    assert_eq!(o.mismatch_count, expected);
    let m = &o.mismatches[0];
    assert_eq!((m.got, m.layout), (7, Layout::Packed));
    assert_eq!(
        m.expected,
        reference::convert_element(&scalar, Rounding::Rte, m.input).bits
    );

    // The same through the request-level API would build the right kernel, so the check can
    // only fail through check_function; the JIT-built kernel of a different request also fails.
    let other = Request::parse("convert_uchar_sat_rte(float)", Extensions::default()).unwrap();
    let o = interp::check_function(&other, Layout::Packed, &real, granule, &elements).unwrap();
    assert!(
        o.mismatch_count > 0,
        "rtz and rte kernels must differ on the ties"
    );
}

fn r_scalar(r: &Request) -> clconv::Conversion {
    match r {
        Request::Convert(c) => c.per_element(),
        Request::Reinterpret(_) | Request::Chain(_) => unreachable!(),
    }
}

#[test]
fn unsafe_kernels_are_stopped() {
    let src = [0u8; 16];
    let mut dst = [0u8; 16];

    // One byte past the destination.
    let past = hand_kernel(|b, _src, dst, i| {
        let one = b.ins().iconst(types::I8, 1);
        let at = b.ins().iadd(dst, i);
        b.ins().store(flags(), one, at, 1);
    });
    let e = interp::run_kernel(&past, 1, &src, &mut dst, 16).unwrap_err();
    match &e {
        InterpError::OutOfBounds {
            access,
            bytes,
            address,
            ..
        } => {
            assert_eq!(
                (*access, *bytes, *address),
                (Access::Store, 1, interp::DST_BASE + 16)
            );
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("dst +16"), "{e}");
    assert_eq!((dst[0], &dst[1..]), (0, &[1u8; 15][..]));

    // Into the (read-only) source.
    let into_src = hand_kernel(|b, src, _dst, i| {
        let one = b.ins().iconst(types::I8, 1);
        let at = b.ins().iadd(src, i);
        b.ins().store(flags(), one, at, 0);
    });
    let e = interp::run_kernel(&into_src, 1, &src, &mut dst, 1).unwrap_err();
    assert!(e.to_string().contains("read-only source"), "{e}");

    // A wild load (a host-looking pointer).
    let wild = hand_kernel(|b, _src, dst, i| {
        let p = b.ins().iconst(types::I64, 0x7fff_0000_1000);
        let v = b.ins().load(types::I8, flags(), p, 0);
        let at = b.ins().iadd(dst, i);
        b.ins().store(flags(), v, at, 0);
    });
    let e = interp::run_kernel(&wild, 1, &src, &mut dst, 1).unwrap_err();
    assert!(
        matches!(
            e,
            InterpError::OutOfBounds {
                access: Access::Load,
                ..
            }
        ),
        "{e}"
    );

    // A loop that never ends: `vectors` is huge, nothing is touched.
    let spin = hand_kernel(|b, _src, _dst, _i| {
        b.ins().nop();
    });
    let e = interp::run_kernel(&spin, 1, &src, &mut dst, usize::MAX >> 1).unwrap_err();
    assert_eq!(
        e,
        InterpError::StepLimit {
            limit: interp::step_limit(16, 16)
        }
    );

    // Not a kernel signature.
    let mut f = spin.clone();
    f.signature.params.pop();
    assert!(matches!(
        interp::run_kernel(&f, 1, &src, &mut dst, 1),
        Err(InterpError::Signature { .. })
    ));
}

#[test]
fn what_the_interpreter_cannot_run_is_reported_not_propagated() {
    // F16 conversions panic inside the interpreter (unimplemented!).
    let f16 = hand_kernel(|b, src, dst, i| {
        let two = b.ins().imul_imm_u(i, 2);
        let from = b.ins().iadd(src, two);
        let h = b.ins().load(types::F16, flags(), from, 0);
        let f = b.ins().fpromote(types::F32, h);
        let four = b.ins().imul_imm_u(i, 4);
        let to = b.ins().iadd(dst, four);
        b.ins().store(flags(), f, to, 0);
    });
    let src = 0x3c00u16.to_le_bytes();
    let mut dst = [0u8; 4];
    match interp::run_kernel(&f16, 1, &src, &mut dst, 1) {
        Err(InterpError::Unsupported { what }) => assert!(what.contains("fpromote"), "{what}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

/// Interpreter speed per recipe (a third of the matrix, packed layout, the host's recipes, the
/// interpretation alone, in this thread's CPU time, so another build on the machine does not
/// skew it): `cargo test --test interpreter throughput -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn throughput() {
    use std::collections::BTreeMap;
    let isa = jit::host_isa(X64Flags::Host).unwrap();
    let mut by: BTreeMap<&str, (u64, usize, Duration)> = BTreeMap::new();
    for r in Request::all(Extensions::with_fp16()).iter().step_by(3) {
        let built = kernel::build(r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
        let mut e = interp::sample_inputs(r.src().elem, INPUTS, SEED);
        let (lanes, eb) = (r.src().lanes(), r.src().elem.bytes());
        e.truncate(e.len() / lanes * lanes);
        let src: Vec<u8> = e
            .iter()
            .flat_map(|x| x.to_le_bytes()[..eb].to_vec())
            .collect();
        let n = e.len() / lanes;
        let mut dst = vec![0u8; n * buffer::bytes_per_vector(r.dst(), Layout::Packed)];
        let t = Instant::now();
        let steps = interp::run_built(&built, &src, &mut dst, n).unwrap();
        let d = t.elapsed();
        let entry = by.entry(built.row.recipe.name).or_default();
        entry.0 += steps;
        entry.1 += e.len();
        entry.2 += d;
    }
    let (mut s, mut e, mut d) = (0, 0, Duration::ZERO);
    for (recipe, (steps, elems, time)) in &by {
        s += steps;
        e += elems;
        d += *time;
        eprintln!(
            "{recipe:26} {:6.1} instructions/element {:5.2} M instructions/s {:6.3} M elements/s",
            *steps as f64 / *elems as f64,
            *steps as f64 / time.as_secs_f64() / 1e6,
            *elems as f64 / time.as_secs_f64() / 1e6
        );
    }
    eprintln!(
        "{:26} {:6.1} instructions/element {:5.2} M instructions/s {:6.3} M elements/s",
        "all",
        s as f64 / e as f64,
        s as f64 / d.as_secs_f64() / 1e6,
        e as f64 / d.as_secs_f64() / 1e6
    );
}

/// This thread's CPU time (Linux: `/proc/thread-self/schedstat`; elsewhere wall time since the
/// first call).
fn cpu_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map(Duration::from_nanos)
        .unwrap_or_else(|| START.get_or_init(Instant::now).elapsed())
}
