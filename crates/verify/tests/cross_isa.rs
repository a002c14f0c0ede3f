//! Cross-ISA execution (issue #20): every kernel of the matrix, both tiers, compiled ahead of
//! time ([`clconv::aot`]) for aarch64, riscv64, riscv64 with V and s390x, linked with a C driver
//! (`tests/cross_isa/driver.c`) by Debian's cross compilers and run under Debian's QEMU
//! user-mode emulation, bit for bit against the reference interpreter
//! ([`clconv_verify::cross`] has the machinery, this file the expectations).
//!
//! Needs `qemu-user`, `gcc-aarch64-linux-gnu`, `gcc-riscv64-linux-gnu`, `gcc-s390x-linux-gnu`
//! and their `libc6-dev-*-cross` packages (`.ci/run` installs them): without them the tests
//! fail with a message that names them, never skip.
//!
//! Each target's test prints (to the terminal even when libtest captures output) one line:
//! entry points, calls, elements compared, mismatches, and where the time went.

use clconv::reference;
use clconv::target::Target;
use clconv::types::{Layout, Rounding, ScalarType, VectorType, Width};
use clconv::{Conversion, Extensions, Request};
use clconv_verify::cross::{self, Plan, Shapes, TargetRun, Toolchain};
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The seed of the inputs (any value; fixed so that every run checks the same inputs).
const SEED: u64 = 20;

/// Entry points per QEMU process: a process that stops is run again on halves of its chunk.
const CHUNK: usize = 1024;

/// What Debian's QEMU (7.2) cannot run: on riscv64 with V, a vector float -> integer
/// conversion with a static rounding mode (`vfcvt.rtz.x.f.v`, `vfcvt.rtz.xu.f.v`: Cranelift's
/// saturating conversions) that is the first instruction of a 4 KiB page stops QEMU's
/// translator on an internal assertion, "decode_save_opc: Assertion `ctx->insn_start != NULL'
/// failed" (QEMU issue 1441, fixed in QEMU 8.0; the mechanism is in
/// [`cross::rvv_static_rounding_at_page_start`]). Which entry points have one there depends on
/// where the linker puts each function, so the list is computed from the linked driver, and
/// the test asserts that exactly those stop, with that message, in the first link, and that
/// every one of them runs, and matches the reference, in a second link of the same object
/// 2 KiB further on (`cross::run`). Nothing is left out: every entry point runs.
fn qemu_cannot_run(target: Target, run: &TargetRun) -> Vec<(String, u64)> {
    if target != Target::Riscv64V {
        return Vec::new();
    }
    let exe = std::fs::read(&run.executable).unwrap();
    cross::rvv_static_rounding_at_page_start(&exe).unwrap()
}

fn plan() -> &'static Plan {
    static PLAN: OnceLock<Plan> = OnceLock::new();
    PLAN.get_or_init(|| Plan::matrix(SEED))
}

fn work_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cross_isa")
        .join(name)
}

/// Writes to the test's stderr even when libtest captures output (it captures the print
/// macros only), so `cargo test` shows the counts.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn tools(target: Target) -> Toolchain {
    let tools = Toolchain::of(target).expect("a cross target");
    if let Err(why) = tools.check() {
        panic!("{why}");
    }
    tools
}

fn report_failures(run: &TargetRun) -> String {
    let mut s = format!("\n{} entry points differ:", run.failing.len());
    for (what, n) in &run.failing {
        s.push_str(&format!("\n  {what}: {n}"));
    }
    s.push_str("\nthe first mismatches:");
    for m in &run.mismatches {
        s.push_str(&format!("\n  {m}"));
    }
    s
}

fn whole_matrix(target: Target) {
    whole_matrix_with(target, true);
}

/// [`whole_matrix`]; with `rounding_control` false, the kernels take the rows code lowered
/// into a caller's own function takes (no `fpcr` rows on aarch64).
fn whole_matrix_with(target: Target, rounding_control: bool) {
    let tools = tools(target);
    let plan = plan();
    let (dir, label) = if rounding_control {
        (work_dir(target.name()), String::new())
    } else {
        (
            work_dir(&format!("{}-inline-rows", target.name())),
            " (inline rows)".to_string(),
        )
    };
    let run = cross::run_with(&tools, plan, &dir, CHUNK, rounding_control)
        .unwrap_or_else(|e| panic!("{}: {e}", target.name()));
    say(&format!("cross-ISA {run}{label}  [{}]", run.qemu));
    for s in run.stopped.iter().chain(&run.shifted) {
        say(&format!(
            "  stopped in the first link: {} = {}: {}: {}",
            s.symbol,
            s.request,
            s.status,
            s.stderr.lines().last().unwrap_or("")
        ));
    }
    assert!(
        run.stopped.is_empty(),
        "{}: entry points stopped in both links: {:#?}",
        target.name(),
        run.stopped
    );
    let predicted = qemu_cannot_run(target, &run);
    for (symbol, address) in &predicted {
        say(&format!(
            "  QEMU 7.2 cannot run {symbol} at its first link: vfcvt.rtz at page start 0x{address:x}"
        ));
    }
    let mut predicted: Vec<String> = predicted.into_iter().map(|p| p.0).collect();
    predicted.dedup();
    let shifted: Vec<String> = run.shifted.iter().map(|s| s.symbol.clone()).collect();
    assert_eq!(
        shifted,
        predicted,
        "{}: the entry points that stopped in the first link are not those with a static-rounding \
         vector conversion at a page start",
        target.name()
    );
    for s in &run.shifted {
        assert!(
            s.stderr.contains(cross::QEMU_RVV_ASSERTION),
            "{} stopped for another reason than QEMU's assertion: {}",
            s.symbol,
            s.stderr
        );
    }
    assert_eq!(run.kernels, plan.entries.len());
    assert_eq!(run.kernels_run, run.kernels, "every entry point ran");
    assert_eq!(
        run.mismatch_count,
        0,
        "{}: {} mismatches with the reference; the first:{}",
        target.name(),
        run.mismatch_count,
        report_failures(&run)
    );
}

#[test]
fn whole_matrix_on_aarch64() {
    whole_matrix(Target::Aarch64);
}

/// aarch64's batch kernels take the `fpcr` rows for directed int -> float and double ->
/// float; code lowered into a caller's function takes the rows that round by themselves
/// (`convert_back_sat`, `demote_convert_back`, `demote_compare`): their machine code runs here.
#[test]
fn whole_matrix_on_aarch64_with_the_inline_rows() {
    whole_matrix_with(Target::Aarch64, false);
}

#[test]
fn whole_matrix_on_riscv64() {
    whole_matrix(Target::Riscv64);
}

#[test]
fn whole_matrix_on_riscv64_v() {
    whole_matrix(Target::Riscv64V);
}

#[test]
fn whole_matrix_on_s390x() {
    whole_matrix(Target::S390x);
}

/// `convert_<dst><width>[_<rounding>](<src><width>)`, half switched on.
fn convert(src: ScalarType, dst: ScalarType, width: Width, rounding: Option<Rounding>) -> Request {
    let c = Conversion::new(
        VectorType::new(src, width),
        VectorType::new(dst, width),
        false,
        rounding,
        Extensions::with_fp16(),
    )
    .unwrap();
    Request::Convert(c)
}

/// NaN through float <-> double and half <-> double: (source type, source bits, destination
/// type, the bits clconv defines: the sign, the payload's top bits, the quiet bit set).
const NAN_PINS: &[(ScalarType, u64, ScalarType, u64)] = {
    use ScalarType::{Double, Float, Half};
    &[
        (Float, 0x7f80_0001, Double, 0x7ff8_0000_2000_0000),
        (Float, 0xff80_0001, Double, 0xfff8_0000_2000_0000),
        (Float, 0x7fc0_0000, Double, 0x7ff8_0000_0000_0000),
        (Float, 0xffff_ffff, Double, 0xffff_ffff_e000_0000),
        (Float, 0x7fa5_a5a5, Double, 0x7ffc_b4b4_a000_0000),
        (Float, 0xffd5_5555, Double, 0xfffa_aaaa_a000_0000),
        (Double, 0x7ff0_0000_0000_0001, Float, 0x7fc0_0000),
        (Double, 0xfff0_0000_0000_0001, Float, 0xffc0_0000),
        (Double, 0x7ff8_0000_0000_0000, Float, 0x7fc0_0000),
        (Double, 0xffff_ffff_ffff_ffff, Float, 0xffff_ffff),
        (Double, 0x7ff4_0000_2000_0000, Float, 0x7fe0_0001),
        (Double, 0xfff5_5555_5555_5555, Float, 0xffea_aaaa),
        (Double, 0x7ff0_0400_0000_0000, Float, 0x7fc0_2000),
        (Half, 0x7c01, Double, 0x7ff8_0400_0000_0000),
        (Half, 0xfc01, Double, 0xfff8_0400_0000_0000),
        (Half, 0x7e00, Double, 0x7ff8_0000_0000_0000),
        (Half, 0xffff, Double, 0xffff_fc00_0000_0000),
        (Half, 0x7d55, Double, 0x7ffd_5400_0000_0000),
        (Half, 0xfeaa, Double, 0xfffa_a800_0000_0000),
        (Double, 0x7ff0_0000_0000_0001, Half, 0x7e00),
        (Double, 0xfff0_0000_0000_0001, Half, 0xfe00),
        (Double, 0xffff_ffff_ffff_ffff, Half, 0xffff),
        (Double, 0x7ff4_0000_2000_0000, Half, 0x7f00),
        (Double, 0xfff5_5555_5555_5555, Half, 0xff55),
        (Double, 0x7ff0_0400_0000_0000, Half, 0x7e01),
    ]
};

/// The conversions of [`NAN_PINS`] in every rounding (none, rte, rtz, rtp, rtn), at width 1
/// (riscv64's per-element loop; the vector recipes' loop with V), width 3 aligned (the
/// per-element loop on every target) and width 4.
fn nan_requests() -> Vec<(Request, Layout)> {
    use ScalarType::{Double, Float, Half};
    let mut out = Vec::new();
    for (src, dst) in [
        (Float, Double),
        (Double, Float),
        (Half, Double),
        (Double, Half),
    ] {
        for rounding in [None].into_iter().chain(Rounding::ALL.map(Some)) {
            for (width, layout) in [
                (Width::W1, Layout::Packed),
                (Width::W3, Layout::Aligned),
                (Width::W4, Layout::Packed),
            ] {
                out.push((convert(src, dst, width, rounding), layout));
            }
        }
    }
    out
}

/// Issue #20 item 3: a NaN converted between float and double or half and double keeps its
/// sign and the top bits of its payload and is made quiet, on riscv64 (whose `fcvt.d.s` and
/// `fcvt.s.d` give the canonical NaN) as on every target: the reference's bits, pinned here.
#[test]
fn nan_payloads_between_float_double_and_half_on_riscv64() {
    // The pins are the reference's definition.
    for &(src, x, dst, want) in NAN_PINS {
        for rounding in Rounding::ALL {
            let c = Conversion::new(
                VectorType::scalar(src),
                VectorType::scalar(dst),
                false,
                Some(rounding),
                Extensions::with_fp16(),
            )
            .unwrap();
            let got = reference::convert_element(&c, Rounding::Rte, x).bits;
            assert_eq!(got, want, "reference: {c} of 0x{x:x}");
        }
    }
    let nans =
        |t: ScalarType| -> Vec<u64> { NAN_PINS.iter().filter(|p| p.0 == t).map(|p| p.1).collect() };
    let shapes = Shapes {
        scalar_count: usize::MAX,
        x3_count: usize::MAX,
    };
    let plan = Plan::new(&nan_requests(), shapes, SEED, &nans);
    for target in [Target::Riscv64, Target::Riscv64V] {
        let tools = tools(target);
        let dir = work_dir(&format!("nan-{}", target.name()));
        let run = cross::run(&tools, &plan, &dir, CHUNK)
            .unwrap_or_else(|e| panic!("{}: {e}", target.name()));
        say(&format!("cross-ISA NaN pins: {run}"));
        assert!(run.stopped.is_empty(), "{:?}", run.stopped);
        assert_eq!(
            run.mismatch_count,
            0,
            "{}: NaN bits differ from the reference:{}",
            target.name(),
            report_failures(&run)
        );
    }
}

/// Every half and bfloat16 bit pattern and every byte of the 8-bit floats, converted to float
/// (and half to double) by the vector kernels of the ISAs that spread the small float's lanes
/// differently (`half.round_native_widen` on s390x and riscv64 with V, whose half -> double
/// takes `half.round_native_keep_nan_widen`; the interleave on aarch64), both tiers, bit for bit
/// against the reference: the matrix run samples 16-bit sources, this covers all of them.
#[test]
fn every_small_float_to_float_on_the_vector_targets() {
    use ScalarType::{BFloat, Double, Float, Fp8E4M3, Fp8E5M2, Half};
    let mut requests = Vec::new();
    for (src, dst) in [
        (Half, Float),
        (Half, Double),
        (BFloat, Float),
        (Fp8E4M3, Float),
        (Fp8E5M2, Float),
    ] {
        for width in [Width::W4, Width::W16] {
            requests.push((convert(src, dst, width, None), Layout::Packed));
        }
    }
    let every = |t: ScalarType| -> Vec<u64> { (0..1u64 << t.bits()).collect() };
    let shapes = Shapes {
        scalar_count: usize::MAX,
        x3_count: usize::MAX,
    };
    let plan = Plan::new(&requests, shapes, SEED, &every);
    for target in [Target::Riscv64V, Target::S390x, Target::Aarch64] {
        let tools = tools(target);
        let dir = work_dir(&format!("small-floats-{}", target.name()));
        let run = cross::run(&tools, &plan, &dir, CHUNK)
            .unwrap_or_else(|e| panic!("{}: {e}", target.name()));
        say(&format!("cross-ISA every small float: {run}"));
        assert!(run.stopped.is_empty(), "{:?}", run.stopped);
        assert_eq!(run.kernels_run, run.kernels, "every entry point ran");
        assert_eq!(
            run.mismatch_count,
            0,
            "{}: differs from the reference:{}",
            target.name(),
            report_failures(&run)
        );
    }
}

/// The inputs hold what the issue lists: NaN with payloads and both signs, ±0, ±inf,
/// subnormals, halfway cases, and the range edges of every destination.
#[test]
fn inputs_hold_the_special_values() {
    use ScalarType::{Double, Float, Half};
    for (t, bits, man) in [(Half, 16u32, 10u32), (Float, 32, 23), (Double, 64, 52)] {
        let xs = cross::inputs(t, 10, SEED);
        let sign = 1u64 << (bits - 1);
        let inf = ((1u64 << (bits - 1 - man)) - 1) << man;
        let quiet = 1u64 << (man - 1);
        for x in [
            0,
            inf,
            1,
            (1 << man) - 1,
            quiet | inf,
            1 | inf,
            quiet | 1 | inf,
        ] {
            assert!(xs.contains(&x), "{t}: 0x{x:x}");
            assert!(xs.contains(&(x | sign)), "{t}: 0x{:x}", x | sign);
        }
        let as_f64 = |x: u64| -> f64 {
            let c = Conversion::new(
                VectorType::scalar(t),
                VectorType::scalar(Double),
                false,
                None,
                Extensions::with_fp16(),
            )
            .unwrap();
            f64::from_bits(reference::convert_element(&c, Rounding::Rte, x).bits)
        };
        let values: Vec<f64> = xs.iter().map(|&x| as_f64(x)).collect();
        for v in [
            0.5, 1.5, 2.5, -0.5, -2.5, 127.5, 255.5, -128.5, 65504.0, -65504.0,
        ] {
            assert!(values.contains(&v), "{t}: {v}");
        }
        // Every integer destination's range edges, as far as the format reaches.
        for d in ScalarType::ALL.into_iter().filter(|d| d.is_integer()) {
            for edge in [d.int_min().unwrap(), d.int_max().unwrap()] {
                let e = edge as f64;
                if e.abs() <= 65504.0 || t != Half {
                    let ulp = e.abs() * 2f64.powi(-(man as i32));
                    let near = values.iter().any(|&v| (v - e).abs() <= ulp);
                    assert!(near, "{t}: {d}'s edge {edge}");
                }
            }
        }
    }
    for t in ScalarType::ALL.into_iter().filter(|t| t.is_integer()) {
        let xs = cross::inputs(t, 10, SEED);
        let mask = if t.bits() == 64 {
            u64::MAX
        } else {
            (1 << t.bits()) - 1
        };
        for d in ScalarType::ALL.into_iter().filter(|d| d.is_integer()) {
            for edge in [d.int_min().unwrap(), d.int_max().unwrap()] {
                for delta in [-1, 0, 1] {
                    let x = ((edge + delta) as u64) & mask;
                    assert!(xs.contains(&x), "{t}: {d}'s edge {edge} {delta:+}");
                }
            }
        }
        // float's rounding tie at 2^25: 2^25 + 2 (and its neighbours), where the type has it.
        if t.bits() >= 32 {
            for x in [(1u64 << 25) + 1, (1 << 25) + 2, (1 << 25) + 3] {
                assert!(xs.contains(&x), "{t}: 0x{x:x}");
            }
        }
    }
}

/// Without the cross compiler or QEMU the tests fail, and the message names what to install.
#[test]
fn missing_tools_are_named_with_their_packages() {
    let tools = Toolchain {
        cc: "clconv-no-such-gcc",
        qemu: "clconv-no-such-qemu",
        ..Toolchain::of(Target::S390x).unwrap()
    };
    let why = tools.check().unwrap_err();
    for needed in [
        "clconv-no-such-gcc",
        "clconv-no-such-qemu",
        "apt-get install -y --no-install-recommends gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user",
        "gcc-aarch64-linux-gnu",
        "gcc-riscv64-linux-gnu",
    ] {
        assert!(why.contains(needed), "{needed} is not in: {why}");
    }
}
