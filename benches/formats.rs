//! Bulk conversions of the small floating-point formats against the library a Rust user would
//! otherwise pick, in the same run, on one thread.
//!
//! ```sh
//! cargo bench --bench formats                        # everything, about 2 minutes
//! CLCONV_BENCH_LARGE=0 cargo bench --bench formats   # skip the 64 MiB buffers
//! CLCONV_BENCH_ONLY=bench_e8m0 cargo bench --bench formats  # only the sections so named
//! cargo bench --bench formats -- 'convert_half8'     # a criterion filter
//! ```
//!
//! For each conversion and each source size (256 KiB: in cache; 64 MiB: out of cache) it times,
//! in one criterion group per conversion:
//!
//! - `kernel`: clconv's JIT kernel (`Jit::with_options(X64Flags::Host, fp16, Rte)`, optimised
//!   tier, `Threads::Exactly(1)`) on typed slices;
//! - `peer`: the library a Rust user picks: for half and bfloat16 the `half` crate's slice
//!   conversion (`HalfFloatSliceExt`; for half it uses F16C, `vcvtps2ph` / `vcvtph2ps`, eight
//!   lanes per instruction, when the CPU has it), for the 8-bit floats the `float8` crate
//!   (`F8E4M3::from_f32`, which saturates like clconv's `_sat`, and `to_f32`; it has no slice
//!   conversion, so a loop);
//! - `rust-loop`: the plain Rust loop a user writes without the slice API, one
//!   `f16::from_f32` / `bf16::from_f32` / `F8E4M3::from_f32` (and `to_f32`) per element;
//! - `same-bytes`: `copy_from_slice` of `(src bytes + dst bytes) / 2` bytes, which reads and
//!   writes as many bytes as the conversion does: the memory's limit.
//!
//! Before any timing, every baseline's output is compared with the kernel's, bit for bit (a NaN
//! compared as a NaN where the peer's NaN differs: the count of such elements is printed), and
//! the kernel's with the reference interpreter on the 256 KiB buffers; a mismatch panics, which
//! aborts the bench. Inputs: floats with exponents spread over half's range and beyond
//! (subnormal results, overflow) with one in eight random bit patterns (NaN, infinities); halves
//! are every bit pattern in turn.
//!
//! After criterion's samples, each size gets an interleaved measurement: the kernel and every
//! baseline timed back to back in 31 rounds (9 at 64 MiB), the ratio taken per round and the
//! summary printing those rounds' medians, because on a shared machine two criterion medians
//! taken seconds apart can differ by 2x for the same code. The summary is a Markdown table:
//! GB/s of bytes read plus written, and the ratios kernel/baseline (above 1: the kernel is
//! faster).
//!
//! Then FP4 E2M1, which no Rust crate converts, against ml_dtypes (`scripts/ml_dtypes_bench.py`
//! in a Python process, `CLCONV_PYTHON` or `python3`; see `bench_e2m1`), FP4 two codes to a
//! byte against the unpacked kernels and the plain loop (`bench_e2m1_packed`), FP6 E2M3's
//! decode against ml_dtypes and the loop (`bench_e2m3_decode`), and MX block
//! quantisation against clconv's own E4M3 element kernel and ml_dtypes with numpy's block
//! arithmetic (`bench_mx`).

use clconv::jit::{BFloat, Fp8E4M3, Fp8E5M2};
use clconv::jit::{Element, Half, Jit, Kernel, Threads, Tiering, X64Flags};
use clconv::{reference, Extensions, Request, Rounding};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use float8::{F8E4M3, F8E5M2};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use std::hint::black_box;
use std::time::Instant;

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

/// Source sizes: in cache and out of it.
const SIZES: [(usize, &str); 2] = [(256 << 10, "256KiB"), (64 << 20, "64MiB")];

/// One bulk conversion: its OpenCL name, its peers, its inputs.
trait Case: 'static {
    type S: Element + Copy + Default;
    type D: Element + Copy + Default + std::fmt::Debug;
    /// The name the kernel is compiled from.
    const NAME: &'static str;
    /// A pseudo-random input element.
    fn random(rng: &mut Rng, index: usize) -> Self::S;
    /// The peer library's name, for the summary.
    const PEER: &'static str;
    /// The library's slice conversion.
    fn peer_slice(src: &[Self::S], dst: &mut [Self::D]);
    /// The plain per-element loop.
    fn rust_loop(src: &[Self::S], dst: &mut [Self::D]);
    /// The destination element's bits, and whether it is a NaN.
    fn bits(d: Self::D) -> (u64, bool);
}

/// Floats whose exponents cover half's subnormals, normals and overflow, one in eight random
/// bits.
fn random_f32_around_half(rng: &mut Rng) -> f32 {
    let r = rng.next();
    if r & 7 == 0 {
        return f32::from_bits((r >> 32) as u32);
    }
    // Exponents -27..=17 (half's subnormals start at -24, its overflow at 16), random
    // significand and sign.
    let exponent = ((r >> 8) % 45) as u32 + 127 - 27;
    let significand = (r >> 32) as u32 & 0x7f_ffff;
    let sign = ((r >> 3) & 1) as u32;
    f32::from_bits(sign << 31 | exponent << 23 | significand)
}

fn as_halves(s: &[Half]) -> &[f16] {
    // SAFETY: `Half` is `repr(transparent)` over `u16` and `f16` is `repr(transparent)` over
    // `u16`: same size, alignment and validity (every bit pattern), and the borrow is shared.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<f16>(), s.len()) }
}

fn as_halves_mut(s: &mut [Half]) -> &mut [f16] {
    // SAFETY: as in `as_halves`; the borrow is unique and `f16` has no invalid bit patterns.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<f16>(), s.len()) }
}

/// float -> half, nearest-even (`convert_half8(float8)`).
struct HalfFromFloat;
impl Case for HalfFromFloat {
    type S = f32;
    type D = Half;
    const NAME: &'static str = "convert_half8(float8)";
    const PEER: &'static str = "half (F16C)";
    fn random(rng: &mut Rng, _: usize) -> f32 {
        random_f32_around_half(rng)
    }
    fn peer_slice(src: &[f32], dst: &mut [Half]) {
        as_halves_mut(dst).convert_from_f32_slice(src);
    }
    fn rust_loop(src: &[f32], dst: &mut [Half]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = Half(f16::from_f32(s).to_bits());
        }
    }
    fn bits(d: Half) -> (u64, bool) {
        (u64::from(d.0), d.0 & 0x7fff > 0x7c00)
    }
}

/// half -> float, exact (`convert_float8(half8)`).
struct FloatFromHalf;
impl Case for FloatFromHalf {
    type S = Half;
    type D = f32;
    const NAME: &'static str = "convert_float8(half8)";
    const PEER: &'static str = "half (F16C)";
    fn random(rng: &mut Rng, index: usize) -> Half {
        // Every bit pattern once per 65536 elements, in a shuffled order.
        let _ = rng;
        Half((index as u16).wrapping_mul(40503))
    }
    fn peer_slice(src: &[Half], dst: &mut [f32]) {
        as_halves(src).convert_to_f32_slice(dst);
    }
    fn rust_loop(src: &[Half], dst: &mut [f32]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = f16::from_bits(s.0).to_f32();
        }
    }
    fn bits(d: f32) -> (u64, bool) {
        (u64::from(d.to_bits()), d.is_nan())
    }
}

fn as_bf16s(s: &[BFloat]) -> &[bf16] {
    // SAFETY: `BFloat` and `bf16` are both `repr(transparent)` over `u16`: same size,
    // alignment and validity (every bit pattern); the borrow is shared.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<bf16>(), s.len()) }
}

fn as_bf16s_mut(s: &mut [BFloat]) -> &mut [bf16] {
    // SAFETY: as in `as_bf16s`; the borrow is unique and `bf16` has no invalid bit patterns.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<bf16>(), s.len()) }
}

/// Floats over every exponent (bfloat16 has float's range), one in eight random bits.
fn random_f32_any(rng: &mut Rng) -> f32 {
    let r = rng.next();
    if r & 7 == 0 {
        return f32::from_bits((r >> 32) as u32);
    }
    let exponent = ((r >> 8) % 254) as u32 + 1;
    let significand = (r >> 32) as u32 & 0x7f_ffff;
    let sign = ((r >> 3) & 1) as u32;
    f32::from_bits(sign << 31 | exponent << 23 | significand)
}

/// float -> bfloat16, nearest-even (`convert_bfloat8(float8)`).
struct BFloatFromFloat;
impl Case for BFloatFromFloat {
    type S = f32;
    type D = BFloat;
    const NAME: &'static str = "convert_bfloat8(float8)";
    const PEER: &'static str = "half (bf16)";
    fn random(rng: &mut Rng, _: usize) -> f32 {
        random_f32_any(rng)
    }
    fn peer_slice(src: &[f32], dst: &mut [BFloat]) {
        as_bf16s_mut(dst).convert_from_f32_slice(src);
    }
    fn rust_loop(src: &[f32], dst: &mut [BFloat]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = BFloat(bf16::from_f32(s).to_bits());
        }
    }
    fn bits(d: BFloat) -> (u64, bool) {
        (u64::from(d.0), d.0 & 0x7fff > 0x7f80)
    }
}

/// bfloat16 -> float, exact (`convert_float8(bfloat8)`).
struct FloatFromBFloat;
impl Case for FloatFromBFloat {
    type S = BFloat;
    type D = f32;
    const NAME: &'static str = "convert_float8(bfloat8)";
    const PEER: &'static str = "half (bf16)";
    fn random(_: &mut Rng, index: usize) -> BFloat {
        BFloat((index as u16).wrapping_mul(40503))
    }
    fn peer_slice(src: &[BFloat], dst: &mut [f32]) {
        as_bf16s(src).convert_to_f32_slice(dst);
    }
    fn rust_loop(src: &[BFloat], dst: &mut [f32]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = bf16::from_bits(s.0).to_f32();
        }
    }
    fn bits(d: f32) -> (u64, bool) {
        (u64::from(d.to_bits()), d.is_nan())
    }
}

/// float -> an 8-bit float (nearest-even, saturating, as the `float8` crate converts) and back,
/// against the `float8` crate, which has no slice conversion: its loop is the peer.
macro_rules! fp8_cases {
    ($to:ident, $from:ident, $elem:ident, $peer:ident, $max_magnitude:literal, $to_name:literal, $from_name:literal) => {
        /// float -> the 8-bit float.
        struct $to;
        impl Case for $to {
            type S = f32;
            type D = $elem;
            const NAME: &'static str = $to_name;
            const PEER: &'static str = "float8";
            fn random(rng: &mut Rng, _: usize) -> f32 {
                random_f32_around_half(rng)
            }
            fn peer_slice(src: &[f32], dst: &mut [$elem]) {
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = $elem($peer::from_f32(s).to_bits());
                }
            }
            fn rust_loop(src: &[f32], dst: &mut [$elem]) {
                Self::peer_slice(src, dst)
            }
            fn bits(d: $elem) -> (u64, bool) {
                (u64::from(d.0), d.0 & 0x7f > $max_magnitude)
            }
        }

        /// The 8-bit float -> float, exact.
        struct $from;
        impl Case for $from {
            type S = $elem;
            type D = f32;
            const NAME: &'static str = $from_name;
            const PEER: &'static str = "float8";
            fn random(_: &mut Rng, index: usize) -> $elem {
                $elem((index as u8).wrapping_mul(157))
            }
            fn peer_slice(src: &[$elem], dst: &mut [f32]) {
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = $peer::from_bits(s.0).to_f32();
                }
            }
            fn rust_loop(src: &[$elem], dst: &mut [f32]) {
                Self::peer_slice(src, dst)
            }
            fn bits(d: f32) -> (u64, bool) {
                (u64::from(d.to_bits()), d.is_nan())
            }
        }
    };
}

// A NaN's magnitude: E4M3's is 0x7f alone (above its largest finite 0x7e), E5M2's above
// infinity's 0x7c.
fp8_cases!(
    E4M3FromFloat,
    FloatFromE4M3,
    Fp8E4M3,
    F8E4M3,
    0x7e,
    "convert_fp8e4m3x8_sat(float8)",
    "convert_float8(fp8e4m3x8)"
);
fp8_cases!(
    E5M2FromFloat,
    FloatFromE5M2,
    Fp8E5M2,
    F8E5M2,
    0x7c,
    "convert_fp8e5m2x8_sat(float8)",
    "convert_float8(fp8e5m2x8)"
);

fn bytes_of<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: every `Element` is a plain integer, float or `repr(transparent)` integer wrapper:
    // no padding, every byte initialised; the borrow is shared.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Compares `got` with the kernel's `want`; returns how many elements are NaN in both with
/// different bits. Panics on any other difference.
fn compare<C: Case>(what: &str, want: &[C::D], got: &[C::D]) -> usize {
    let mut nan_bits_differ = 0;
    for (i, (&w, &g)) in want.iter().zip(got).enumerate() {
        let (wb, wn) = C::bits(w);
        let (gb, gn) = C::bits(g);
        if wb == gb {
            continue;
        }
        if wn && gn {
            nan_bits_differ += 1;
            continue;
        }
        panic!(
            "{}: {what} differs from the kernel at element {i}: {gb:#x} against {wb:#x}",
            C::NAME
        );
    }
    nan_bits_differ
}

fn ns_per_run(reps: usize, f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed().as_nanos() as f64 / reps as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN times"));
    v[v.len() / 2]
}

/// `runs` timed back to back in each of `rounds` rounds (`reps` calls each): the median ns per
/// call of each, and the median per-round ratio of each later run's time to the first's (above
/// 1: the first, the kernel, is faster).
fn interleaved(rounds: usize, reps: usize, runs: &mut [&mut dyn FnMut()]) -> (Vec<f64>, Vec<f64>) {
    let mut times = vec![Vec::new(); runs.len()];
    let mut ratios = vec![Vec::new(); runs.len().saturating_sub(1)];
    for _ in 0..rounds {
        let t: Vec<f64> = runs.iter_mut().map(|f| ns_per_run(reps, *f)).collect();
        for (v, &ns) in times.iter_mut().zip(&t) {
            v.push(ns);
        }
        for (r, baseline) in ratios.iter_mut().zip(&t[1..]) {
            r.push(baseline / t[0]);
        }
    }
    (
        times.iter_mut().map(|v| median(v)).collect(),
        ratios.iter_mut().map(|v| median(v)).collect(),
    )
}

struct Row {
    name: &'static str,
    peer: &'static str,
    size: &'static str,
    traffic: usize,
    /// Median ns per run of the kernel, the peer, rust-loop and same-bytes.
    ns: [f64; 4],
    /// Median per-round ratio kernel/baseline for the three baselines.
    ratios: [f64; 3],
    nan_bits_differ: usize,
}

fn bench_case<C: Case>(c: &mut Criterion, jit: &Jit, large: bool, rows: &mut Vec<Row>) {
    let kernel: Kernel = jit.compile(C::NAME).expect("compiles");
    jit.finish_tier_up();
    let request = Request::parse(C::NAME, jit.extensions()).expect("parses");
    let mut group = c.benchmark_group(C::NAME);
    for (seed, &(bytes, size)) in SIZES.iter().enumerate() {
        let big = bytes >= 64 << 20;
        if big && !large {
            continue;
        }
        let elements = bytes / std::mem::size_of::<C::S>();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed as u64);
        let src: Vec<C::S> = (0..elements).map(|i| C::random(&mut rng, i)).collect();
        let mut dst = vec![C::D::default(); elements];
        let mut other = vec![C::D::default(); elements];

        kernel.run(&src, &mut dst).expect("runs");
        if !big {
            let mut want = vec![C::D::default(); elements];
            let want_bytes = {
                // SAFETY: as in `bytes_of`, and the borrow is unique.
                unsafe {
                    std::slice::from_raw_parts_mut(
                        want.as_mut_ptr().cast::<u8>(),
                        std::mem::size_of_val(&want[..]),
                    )
                }
            };
            reference::evaluate(&request, clconv::Layout::Packed, bytes_of(&src), want_bytes)
                .expect("reference");
            let differ = compare::<C>("the reference", &want, &dst);
            assert_eq!(
                differ,
                0,
                "{}: the kernel's NaNs differ from the reference",
                C::NAME
            );
        }
        C::peer_slice(&src, &mut other);
        let nan_bits_differ = compare::<C>("the peer", &dst, &other);
        C::rust_loop(&src, &mut other);
        compare::<C>("rust-loop", &dst, &other);

        let traffic = std::mem::size_of_val(&src[..]) + std::mem::size_of_val(&dst[..]);
        let copy_src = vec![0x5au8; traffic / 2];
        let mut copy_dst = vec![0u8; traffic / 2];

        group.sample_size(if big { 10 } else { 30 });
        group.sampling_mode(if big {
            SamplingMode::Flat
        } else {
            SamplingMode::Auto
        });
        group.throughput(Throughput::Elements(elements as u64));
        group.bench_function(BenchmarkId::new("kernel", size), |b| {
            b.iter(|| {
                kernel
                    .run(black_box(&src[..]), black_box(&mut dst[..]))
                    .unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("peer", size), |b| {
            b.iter(|| C::peer_slice(black_box(&src[..]), black_box(&mut other[..])))
        });
        group.bench_function(BenchmarkId::new("rust-loop", size), |b| {
            b.iter(|| C::rust_loop(black_box(&src[..]), black_box(&mut other[..])))
        });
        group.bench_function(BenchmarkId::new("same-bytes", size), |b| {
            b.iter(|| black_box(&mut copy_dst[..]).copy_from_slice(black_box(&copy_src[..])))
        });

        // Interleaved rounds: every variant once per round, ratios per round.
        let (rounds, reps) = if big { (9, 1) } else { (31, 20) };
        let mut times: [Vec<f64>; 4] = Default::default();
        let mut ratios: [Vec<f64>; 3] = Default::default();
        for _ in 0..rounds {
            let t = [
                ns_per_run(reps, &mut || kernel.run(&src, &mut dst).unwrap()),
                ns_per_run(reps, &mut || C::peer_slice(&src, &mut other)),
                ns_per_run(reps, &mut || C::rust_loop(&src, &mut other)),
                ns_per_run(reps, &mut || copy_dst.copy_from_slice(&copy_src)),
            ];
            for (v, ns) in times.iter_mut().zip(t) {
                v.push(ns);
            }
            for (r, baseline) in ratios.iter_mut().zip(&t[1..]) {
                r.push(baseline / t[0]);
            }
        }
        rows.push(Row {
            name: C::NAME,
            peer: C::PEER,
            size,
            traffic,
            ns: times.map(|mut v| median(&mut v)),
            ratios: ratios.map(|mut v| median(&mut v)),
            nan_bits_differ,
        });
    }
    group.finish();
}

fn summary(rows: &[Row]) -> String {
    let mut out = String::from(
        "| conversion | source | peer | kernel GB/s | peer GB/s | rust-loop GB/s | same-bytes GB/s \
         | ×peer | ×rust-loop | ×same-bytes | NaNs with other bits in the peer |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let gbs = |ns: f64| r.traffic as f64 / ns;
        out += &format!(
            "| `{}` | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} |\n",
            r.name,
            r.size,
            r.peer,
            gbs(r.ns[0]),
            gbs(r.ns[1]),
            gbs(r.ns[2]),
            gbs(r.ns[3]),
            r.ratios[0],
            r.ratios[1],
            r.ratios[2],
            r.nan_bits_differ,
        );
    }
    out
}

/// FP4 E2M1 (issue 47), which no Rust crate converts: the kernel against ml_dtypes' `astype`
/// (timed by `scripts/ml_dtypes_bench.py` in a Python process of its own, its median over
/// rounds: not interleaved with the others, so its ratio is of medians), the plain Rust loop a
/// user writes for it (a comparison ladder into E2M1, a 16-entry table out of it), and the copy
/// of the same bytes. Inputs: floats uniform in [-8, 8] (one in 64 a NaN or an infinity on the
/// Rust side); every code in turn.
mod e2m1 {
    /// The plain loop's float -> E2M1, nearest-even with the ties written out (0.25 -> 0,
    /// 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2.0, 2.5 -> 2.0, 3.5 -> 4.0, 5.0 -> 4.0), clamped to
    /// 6.0, NaN -> +6.0 (clconv's rule).
    pub fn from_f32(x: f32) -> u8 {
        let a = x.abs();
        if a.is_nan() {
            return 7;
        }
        let code = if a <= 0.25 {
            0
        } else if a < 0.75 {
            1
        } else if a <= 1.25 {
            2
        } else if a < 1.75 {
            3
        } else if a <= 2.5 {
            4
        } else if a < 3.5 {
            5
        } else if a <= 5.0 {
            6
        } else {
            7
        };
        code | (u8::from(x.is_sign_negative()) << 3)
    }

    pub const VALUES: [f32; 16] = [
        0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
    ];
}

/// One row of the ml_dtypes tables: `times` (kernel, rust loop, same bytes; ns per call) of
/// `traffic` bytes each, their `ratios` to the kernel, ml_dtypes' GB/s or why it did not run.
fn ml_dtypes_row(
    name: &str,
    size: &str,
    traffic: usize,
    times: &[f64],
    ratios: &[f64],
    ml: Result<f64, String>,
) -> String {
    let gbs = |ns: f64| traffic as f64 / ns;
    let (ml, ml_ratio) = match ml {
        Ok(g) => (format!("{g:.2}"), format!("{:.1}", gbs(times[0]) / g)),
        Err(why) => (format!("not run: {why}"), "-".into()),
    };
    format!(
        "| `{name}` | {size} | {:.2} | {ml} | {:.2} | {:.2} | {ml_ratio} | {:.2} | {:.2} |\n",
        gbs(times[0]),
        gbs(times[1]),
        gbs(times[2]),
        ratios[0],
        ratios[1],
    )
}

/// ml_dtypes' GB/s for `conversion` on a source of `bytes`, or why it could not run.
fn ml_dtypes_gbs(conversion: &str, bytes: usize, rounds: usize) -> Result<f64, String> {
    let python = std::env::var("CLCONV_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/ml_dtypes_bench.py");
    let out = std::process::Command::new(&python)
        .args([script, conversion, &bytes.to_string(), &rounds.to_string()])
        .output()
        .map_err(|e| format!("{python}: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("{e}"))
}

fn bench_e2m1(jit: &Jit, large: bool) -> String {
    let mut out = String::from(
        "| conversion | source | kernel GB/s | ml_dtypes GB/s | rust-loop GB/s | same-bytes GB/s \
         | ×ml_dtypes | ×rust-loop | ×same-bytes |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    use clconv::jit::Fp4E2M1;
    let encode = jit
        .compile("convert_fp4e2m1x8_sat(float8)")
        .expect("compiles");
    let decode = jit.compile("convert_float8(fp4e2m1x8)").expect("compiles");
    jit.finish_tier_up();
    for (seed, &(bytes, size)) in SIZES.iter().enumerate() {
        let big = bytes >= 64 << 20;
        if big && !large {
            continue;
        }
        let (rounds, reps) = if big { (9, 1) } else { (31, 20) };
        let mut rng = Rng(0x51_7cc1_b727_220a ^ seed as u64);
        // float -> E2M1.
        let n = bytes / 4;
        let floats: Vec<f32> = (0..n)
            .map(|_| {
                let r = rng.next();
                if r & 63 == 0 {
                    f32::from_bits((r >> 32) as u32)
                } else {
                    ((r >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
                }
            })
            .collect();
        let mut codes = vec![Fp4E2M1(0); n];
        let mut other = vec![Fp4E2M1(0); n];
        encode.run(&floats, &mut codes).unwrap();
        let plain = |src: &[f32], dst: &mut [Fp4E2M1]| {
            for (d, &x) in dst.iter_mut().zip(src) {
                *d = Fp4E2M1(e2m1::from_f32(x));
            }
        };
        plain(&floats, &mut other);
        assert_eq!(
            codes, other,
            "the plain loop's E2M1 differs from the kernel's"
        );
        if !big {
            let request =
                Request::parse("convert_fp4e2m1x8_sat(float8)", jit.extensions()).unwrap();
            let mut want = vec![0u8; n];
            reference::evaluate(
                &request,
                clconv::Layout::Packed,
                bytes_of(&floats),
                &mut want,
            )
            .unwrap();
            assert!(
                codes.iter().zip(&want).all(|(c, w)| c.0 == *w),
                "kernel vs reference"
            );
        }
        // E2M1 -> float: every code in turn.
        let m = bytes;
        let src: Vec<Fp4E2M1> = (0..m).map(|i| Fp4E2M1((i % 16) as u8)).collect();
        let mut back = vec![0f32; m];
        let mut back_other = vec![0f32; m];
        decode.run(&src, &mut back).unwrap();
        let table = |src: &[Fp4E2M1], dst: &mut [f32]| {
            for (d, &c) in dst.iter_mut().zip(src) {
                *d = e2m1::VALUES[usize::from(c.0 & 15)];
            }
        };
        table(&src, &mut back_other);
        assert!(back
            .iter()
            .zip(&back_other)
            .all(|(a, b)| a.to_bits() == b.to_bits()));

        for (name, python, traffic) in [
            ("convert_fp4e2m1x8_sat(float8)", "f32_to_e2m1", n * 5),
            ("convert_float8(fp4e2m1x8)", "e2m1_to_f32", m * 5),
        ] {
            let copy_src = vec![0x5au8; traffic / 2];
            let mut copy_dst = vec![0u8; traffic / 2];
            let mut copy = || copy_dst.copy_from_slice(&copy_src);
            let (times, ratios) = if python == "f32_to_e2m1" {
                interleaved(
                    rounds,
                    reps,
                    &mut [
                        &mut || encode.run(&floats, &mut codes).unwrap(),
                        &mut || plain(&floats, &mut other),
                        &mut copy,
                    ],
                )
            } else {
                interleaved(
                    rounds,
                    reps,
                    &mut [
                        &mut || decode.run(&src, &mut back).unwrap(),
                        &mut || table(&src, &mut back_other),
                        &mut copy,
                    ],
                )
            };
            let source_bytes = if python == "f32_to_e2m1" { n * 4 } else { m };
            let ml = ml_dtypes_gbs(python, source_bytes, rounds);
            out += &ml_dtypes_row(name, size, traffic, &times, &ratios, ml);
        }
    }
    out
}

/// Every narrow element format both ways, float32 in or out: in cache (256 KiB of source, one
/// thread) against ml_dtypes' `astype` (`scripts/ml_dtypes_bench.py`; no Rust crate converts
/// these formats, so no plain-loop column but FP4's and FP6 E2M3's above) and the loop that
/// moves the same bytes; and, with the 64 MiB buffers, out of cache on every core (the JIT's
/// default split, `Threads::Auto`) against the same bytes copied by as many threads, paired
/// per round (the issue's yardstick: at least 0.9x). Inputs: floats uniform in [-8, 8] with
/// one in 64 a random bit pattern; every code in turn. Each kernel's output is compared with
/// the reference first (256 KiB).
fn bench_elements(jit: &Jit, large: bool) -> String {
    const CONVERSIONS: [(&str, &str); 12] = [
        ("convert_fp4e2m1x8_sat(float8)", "f32_to_e2m1"),
        ("convert_float8(fp4e2m1x8)", "e2m1_to_f32"),
        ("convert_fp6e2m3x8_sat(float8)", "f32_to_e2m3"),
        ("convert_float8(fp6e2m3x8)", "e2m3_to_f32"),
        ("convert_fp6e3m2x8_sat(float8)", "f32_to_e3m2"),
        ("convert_float8(fp6e3m2x8)", "e3m2_to_f32"),
        ("convert_fp8e4m3fnuzx8_sat(float8)", "f32_to_e4m3fnuz"),
        ("convert_float8(fp8e4m3fnuzx8)", "e4m3fnuz_to_f32"),
        ("convert_fp8e5m2fnuzx8_sat(float8)", "f32_to_e5m2fnuz"),
        ("convert_float8(fp8e5m2fnuzx8)", "e5m2fnuz_to_f32"),
        ("convert_fp8e8m0x8_sat(float8)", "f32_to_e8m0"),
        ("convert_float8(fp8e8m0x8)", "e8m0_to_f32"),
    ];
    let mut out = String::from(
        "| conversion | source | kernel GB/s | ml_dtypes GB/s | same-bytes GB/s | ×ml_dtypes | ×same-bytes |\n|---|---|---|---|---|---|---|\n",
    );
    let mut all_cores = String::new();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (name, python) in CONVERSIONS {
        let kernel = jit.compile(name).expect("compiles");
        jit.finish_tier_up();
        let request = Request::parse(name, jit.extensions()).unwrap();
        let encode = python.starts_with("f32_to_");
        for (seed, &(source_bytes, size)) in SIZES.iter().enumerate() {
            let big = source_bytes >= 64 << 20;
            if big && !large {
                continue;
            }
            let mut rng = Rng(0x6e_a77e_5eed ^ seed as u64);
            let src: Vec<u8> = if encode {
                (0..source_bytes / 4)
                    .flat_map(|_| {
                        let r = rng.next();
                        let x = if r & 63 == 0 {
                            f32::from_bits((r >> 32) as u32)
                        } else {
                            ((r >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
                        };
                        x.to_le_bytes()
                    })
                    .collect()
            } else {
                let codes = match python {
                    "e2m1_to_f32" => 16,
                    "e2m3_to_f32" | "e3m2_to_f32" => 64,
                    _ => 256,
                };
                (0..source_bytes).map(|i| (i % codes) as u8).collect()
            };
            let n = if encode { src.len() / 4 } else { src.len() };
            let dst_bytes = if encode { n } else { n * 4 };
            let traffic = src.len() + dst_bytes;
            let mut dst = vec![0u8; dst_bytes];
            kernel
                .run_bytes(clconv::Layout::Packed, &src, &mut dst)
                .unwrap();
            if !big {
                let mut want = vec![0u8; dst_bytes];
                reference::evaluate(&request, clconv::Layout::Packed, &src, &mut want).unwrap();
                assert!(dst == want, "{name}: kernel vs reference");
            }
            let copy_src = vec![0x5au8; traffic / 2];
            let mut copy_dst = vec![0u8; traffic / 2];
            let gbs = |ns: f64| traffic as f64 / ns;
            if big {
                // Every core: the kernel split across threads against the copy split as many ways.
                jit.set_threads(Threads::Auto);
                let (mut kt, mut ct, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
                for _ in 0..9 {
                    let k = ns_per_run(1, &mut || {
                        kernel
                            .run_bytes(clconv::Layout::Packed, &src, &mut dst)
                            .unwrap()
                    });
                    let c = ns_per_run(1, &mut || parallel_copy(&copy_src, &mut copy_dst, cores));
                    kt.push(k);
                    ct.push(c);
                    ratio.push(c / k);
                }
                jit.set_threads(Threads::Exactly(1));
                all_cores += &format!(
                    "| `{name}` | {size} | {cores} | {:.2} | {:.2} | {:.2} |\n",
                    gbs(median(&mut kt)),
                    gbs(median(&mut ct)),
                    median(&mut ratio)
                );
                continue;
            }
            let mut copy = || copy_dst.copy_from_slice(&copy_src);
            let (times, ratios) = interleaved(
                31,
                20,
                &mut [
                    &mut || {
                        kernel
                            .run_bytes(clconv::Layout::Packed, &src, &mut dst)
                            .unwrap()
                    },
                    &mut copy,
                ],
            );
            let (ml, ml_ratio) = match ml_dtypes_gbs(python, source_bytes, 31) {
                Ok(g) => (format!("{g:.2}"), format!("{:.1}", gbs(times[0]) / g)),
                Err(why) => (format!("not run: {why}"), "-".into()),
            };
            out += &format!(
                "| `{name}` | {size} | {:.2} | {ml} | {:.2} | {ml_ratio} | {:.2} |\n",
                gbs(times[0]),
                gbs(times[1]),
                ratios[0],
            );
        }
    }
    if !all_cores.is_empty() {
        out += "\n| conversion | source | threads | kernel GB/s | same-bytes GB/s, as many threads | ×same-bytes |\n|---|---|---|---|---|---|\n";
        out += &all_cores;
    }
    out
}

/// A plain Rust E8M0 encode, saturating, rounding to nearest even in value: what a user writes
/// from OCP's definition (the exponent field, plus one from 1.5 x 2^e; no zero, no sign).
fn e8m0_sat_rte_loop(x: f32) -> u8 {
    let bits = x.to_bits();
    if x.is_nan() {
        0xff
    } else if bits as i32 <= 0 {
        0
    } else if bits >= 0x7f80_0000 {
        0xfe
    } else if bits < 0x80_0000 {
        u8::from(bits >= 0x60_0000)
    } else {
        ((bits + 0x40_0000) >> 23).min(0xfe) as u8
    }
}

/// A plain Rust tf32 encode rounding to nearest even: bfloat16's bit trick at bit 13.
fn tf32_rte_loop(x: f32) -> u32 {
    let bits = x.to_bits();
    if x.is_nan() {
        bits & 0xffff_e000 | 0x40_0000
    } else {
        let a = bits & 0x7fff_ffff;
        let rounded = (a + 0xfff + ((a >> 13) & 1)) & 0xffff_e000;
        rounded | bits & 0x8000_0000
    }
}

/// Float into E8M0 and tf32 (the vector encodes since 2026-11-30): the kernel against
/// ml_dtypes (E8M0 only: it has no tf32), the plain Rust loop (checked bit for bit first) and
/// the loop that moves the same bytes, 256 KiB of floats in cache, one thread.
fn bench_e8m0_tf32_encode(jit: &Jit) -> String {
    let mut out = String::from(
        "| conversion | kernel GB/s | ml_dtypes GB/s | rust-loop GB/s | same-bytes GB/s \
         | ×ml_dtypes | ×rust-loop | ×same-bytes |\n|---|---|---|---|---|---|---|---|\n",
    );
    let source_bytes = 256 << 10;
    let mut rng = Rng(0x0e80_7f32);
    let floats: Vec<f32> = (0..source_bytes / 4)
        .map(|_| {
            let r = rng.next();
            if r & 63 == 0 {
                f32::from_bits((r >> 32) as u32)
            } else {
                f32::from_bits(((r >> 32) as u32 & 0x3fff_ffff) + 0x2000_0000)
            }
        })
        .collect();
    let src: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
    for (name, python, out_bytes) in [
        ("convert_fp8e8m0x8_sat_rte(float8)", Some("f32_to_e8m0"), 1),
        ("convert_tf32x8_rte(float8)", None, 4),
    ] {
        let kernel = jit.compile(name).expect("compiles");
        jit.finish_tier_up();
        let request = Request::parse(name, jit.extensions()).unwrap();
        let n = floats.len();
        let mut dst = vec![0u8; n * out_bytes];
        kernel
            .run_bytes(clconv::Layout::Packed, &src, &mut dst)
            .unwrap();
        let mut want = vec![0u8; dst.len()];
        reference::evaluate(&request, clconv::Layout::Packed, &src, &mut want).unwrap();
        assert!(dst == want, "{name}: kernel vs reference");
        let plain = |looped: &mut [u8]| {
            if out_bytes == 1 {
                for (o, &x) in looped.iter_mut().zip(&floats) {
                    *o = e8m0_sat_rte_loop(x);
                }
            } else {
                for (o, &x) in looped.chunks_exact_mut(4).zip(&floats) {
                    o.copy_from_slice(&tf32_rte_loop(x).to_le_bytes());
                }
            }
        };
        let mut looped = vec![0u8; dst.len()];
        plain(&mut looped);
        assert!(looped == dst, "{name}: the plain loop vs the kernel");
        let mut plain_loop = || plain(black_box(&mut looped));
        let traffic = src.len() + dst.len();
        let copy_src = vec![0x5au8; traffic / 2];
        let mut copy_dst = vec![0u8; traffic / 2];
        let mut copy = || copy_dst.copy_from_slice(&copy_src);
        let (times, ratios) = interleaved(
            31,
            20,
            &mut [
                &mut || {
                    kernel
                        .run_bytes(clconv::Layout::Packed, &src, &mut dst)
                        .unwrap()
                },
                &mut plain_loop,
                &mut copy,
            ],
        );
        let gbs = |ns: f64| traffic as f64 / ns;
        let (ml, ml_ratio) = match python.map(|p| ml_dtypes_gbs(p, source_bytes, 31)) {
            Some(Ok(g)) => (format!("{g:.2}"), format!("{:.1}", gbs(times[0]) / g)),
            Some(Err(why)) => (format!("not run: {why}"), "-".into()),
            None => ("(no tf32)".into(), "-".into()),
        };
        out += &format!(
            "| `{name}` | {:.2} | {ml} | {:.2} | {:.2} | {ml_ratio} | {:.2} | {:.2} |\n",
            gbs(times[0]),
            gbs(times[1]),
            gbs(times[2]),
            ratios[0],
            ratios[1],
        );
    }
    out
}

/// FP6 E2M3 into float (`convert_float8(fp6e2m3x8)`, every code in turn) against ml_dtypes'
/// `astype` (`e2m3_to_f32`), the plain Rust loop (a 64-entry table, its values from E2M3's
/// fields here) and the loop that moves the same bytes. Output compared with the loop first.
fn bench_e2m3_decode(jit: &Jit, large: bool) -> String {
    use clconv::jit::Fp6E2M3;
    let mut out = String::from(
        "| conversion | source | kernel GB/s | ml_dtypes GB/s | rust-loop GB/s | same-bytes GB/s \
         | ×ml_dtypes | ×rust-loop | ×same-bytes |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    // E2M3 (OCP MX v1.0, 5.3.3): sign, 2 exponent bits, 3 mantissa bits, bias 1; exponent 0
    // is 0.M x 2^0.
    let table: Vec<f32> = (0u32..64)
        .map(|c| {
            let (e, m) = ((c >> 3) & 3, (c & 7) as f32);
            let v = if e == 0 {
                m / 8.0
            } else {
                (1.0 + m / 8.0) * 2f32.powi(e as i32 - 1)
            };
            if c & 32 != 0 {
                -v
            } else {
                v
            }
        })
        .collect();
    let decode = jit.compile("convert_float8(fp6e2m3x8)").expect("compiles");
    jit.finish_tier_up();
    for &(bytes, size) in SIZES.iter() {
        let big = bytes >= 64 << 20;
        if big && !large {
            continue;
        }
        let (rounds, reps) = if big { (9, 1) } else { (31, 20) };
        let m = bytes;
        let src: Vec<Fp6E2M3> = (0..m).map(|i| Fp6E2M3((i % 64) as u8)).collect();
        let mut back = vec![0f32; m];
        let mut back_loop = vec![0f32; m];
        let plain = |src: &[Fp6E2M3], dst: &mut [f32]| {
            for (d, &c) in dst.iter_mut().zip(src) {
                *d = table[usize::from(c.0 & 63)];
            }
        };
        decode.run(&src, &mut back).unwrap();
        plain(&src, &mut back_loop);
        assert!(
            back.iter()
                .zip(&back_loop)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "E2M3 decode: the kernel and the plain loop differ"
        );
        let traffic = m * 5;
        let copy_src = vec![0x5au8; traffic / 2];
        let mut copy_dst = vec![0u8; traffic / 2];
        let (times, ratios) = interleaved(
            rounds,
            reps,
            &mut [
                &mut || decode.run(&src, &mut back).unwrap(),
                &mut || plain(&src, &mut back_loop),
                &mut || copy_dst.copy_from_slice(&copy_src),
            ],
        );
        let ml = ml_dtypes_gbs("e2m3_to_f32", m, rounds);
        out += &ml_dtypes_row(
            "convert_float8(fp6e2m3x8)",
            size,
            traffic,
            &times,
            &ratios,
            ml,
        );
    }
    out
}

/// FP4 two codes to a byte (`pack_fp4`, `unpack_fp4`: chain kernels, one 16-element vector per
/// iteration) against the unpacked element kernels (a code per byte), the plain Rust loop
/// (the ladder or the table, then the nibbles) and the loop that moves the same bytes, all
/// timed back to back per round. ml_dtypes has no packed form. Outputs compared with the plain
/// loop first.
fn bench_e2m1_packed(jit: &Jit, large: bool) -> String {
    use clconv::jit::Fp4E2M1;
    let mut out = String::from(
        "| conversion | source | kernel GB/s | unpacked kernel GB/s | rust-loop GB/s | same-bytes GB/s \
         | ×unpacked | ×rust-loop | ×same-bytes |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let pack = jit
        .compile("pack_fp4(convert_fp4e2m1x16_sat(float16))")
        .expect("compiles");
    let unpack = jit
        .compile("convert_float16(unpack_fp4(uchar8))")
        .expect("compiles");
    let encode = jit
        .compile("convert_fp4e2m1x16_sat(float16)")
        .expect("compiles");
    let decode = jit
        .compile("convert_float16(fp4e2m1x16)")
        .expect("compiles");
    jit.finish_tier_up();
    for (seed, &(bytes, size)) in SIZES.iter().enumerate() {
        let big = bytes >= 64 << 20;
        if big && !large {
            continue;
        }
        let (rounds, reps) = if big { (9, 1) } else { (31, 20) };
        let mut rng = Rng(0x2f_4e6b_01c3_9a77 ^ seed as u64);
        let n = bytes / 4;
        let floats: Vec<f32> = (0..n)
            .map(|_| ((rng.next() >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0)
            .collect();
        let mut packed = vec![0u8; n / 2];
        let mut packed_loop = vec![0u8; n / 2];
        let mut codes = vec![Fp4E2M1(0); n];
        let plain_pack = |src: &[f32], dst: &mut [u8]| {
            for (d, pair) in dst.iter_mut().zip(src.chunks_exact(2)) {
                *d = e2m1::from_f32(pair[0]) | e2m1::from_f32(pair[1]) << 4;
            }
        };
        pack.run(&floats, &mut packed).unwrap();
        plain_pack(&floats, &mut packed_loop);
        assert_eq!(
            packed, packed_loop,
            "pack_fp4: the kernel and the plain loop differ"
        );
        // Bytes -> floats: every byte in turn.
        let m = bytes;
        let src: Vec<u8> = (0..m).map(|i| i as u8).collect();
        let src_codes: Vec<Fp4E2M1> = (0..2 * m).map(|i| Fp4E2M1((i % 16) as u8)).collect();
        let mut back = vec![0f32; 2 * m];
        let mut back_loop = vec![0f32; 2 * m];
        let mut back_unpacked = vec![0f32; 2 * m];
        let plain_unpack = |src: &[u8], dst: &mut [f32]| {
            for (d, &x) in dst.chunks_exact_mut(2).zip(src) {
                d[0] = e2m1::VALUES[usize::from(x & 15)];
                d[1] = e2m1::VALUES[usize::from(x >> 4)];
            }
        };
        unpack.run(&src, &mut back).unwrap();
        plain_unpack(&src, &mut back_loop);
        assert!(
            back.iter()
                .zip(&back_loop)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "unpack_fp4: the kernel and the plain loop differ"
        );
        for (name, traffic, encoding) in [
            (
                "pack_fp4(convert_fp4e2m1x16_sat(float16))",
                n * 4 + n / 2,
                true,
            ),
            ("convert_float16(unpack_fp4(uchar8))", m + 8 * m, false),
        ] {
            let copy_src = vec![0x5au8; traffic / 2];
            let mut copy_dst = vec![0u8; traffic / 2];
            let mut copy = || copy_dst.copy_from_slice(&copy_src);
            let (times, ratios) = if encoding {
                interleaved(
                    rounds,
                    reps,
                    &mut [
                        &mut || pack.run(&floats, &mut packed).unwrap(),
                        &mut || encode.run(&floats, &mut codes).unwrap(),
                        &mut || plain_pack(&floats, &mut packed_loop),
                        &mut copy,
                    ],
                )
            } else {
                interleaved(
                    rounds,
                    reps,
                    &mut [
                        &mut || unpack.run(&src, &mut back).unwrap(),
                        &mut || decode.run(&src_codes, &mut back_unpacked).unwrap(),
                        &mut || plain_unpack(&src, &mut back_loop),
                        &mut copy,
                    ],
                )
            };
            let [kernel, unpacked, rust_loop, same] = [times[0], times[1], times[2], times[3]];
            // The unpacked kernel moves more bytes (a byte per code): its GB/s is of its own
            // traffic, its ratio of time for the same elements.
            let unpacked_traffic = if encoding { n * 5 } else { 2 * m * 5 };
            let [r_unpacked, r_loop, r_same] = [ratios[0], ratios[1], ratios[2]];
            out += &format!(
                "| `{name}` | {size} | {:.2} | {:.2} | {:.2} | {:.2} | {r_unpacked:.2} | {r_loop:.2} | {r_same:.2} |\n",
                traffic as f64 / kernel,
                unpacked_traffic as f64 / unpacked,
                traffic as f64 / rust_loop,
                traffic as f64 / same,
            );
        }
    }
    out
}

/// `dst.copy_from_slice(src)` by `threads` threads, each a contiguous part.
fn parallel_copy(src: &[u8], dst: &mut [u8], threads: usize) {
    let part = src.len().div_ceil(threads.max(1));
    std::thread::scope(|scope| {
        for (s, d) in src.chunks(part).zip(dst.chunks_mut(part)) {
            scope.spawn(move || d.copy_from_slice(s));
        }
    });
}

/// MX block quantisation of float32 (OCP's scale rule) against clconv's own float32 -> E4M3
/// element kernel (the issue's yardstick: at least half its speed), a plain Rust block loop,
/// ml_dtypes' elements with numpy's block arithmetic (`scripts/ml_dtypes_bench.py`
/// `f32_to_mxfp8e4m3`, `f32_to_mxfp4`) and the loop that moves the same bytes. Inputs: floats
/// uniform in [-8, 8] with one in 64 blocks scaled by 2^±20. Every output is compared with the
/// reference before timing (the 256 KiB buffers).
fn bench_mx(jit: &Jit, large: bool) -> String {
    use clconv::mx::MxRequest;
    let mut out = String::from(
        "| request | source | kernel GB/s | E4M3 element kernel GB/s | ml_dtypes+numpy GB/s | rust-loop GB/s | same-bytes GB/s \
         | ×element kernel | ×ml_dtypes | ×rust-loop | ×same-bytes |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let element = jit
        .compile("convert_fp8e4m3x8_sat_rte(float8)")
        .expect("compiles");
    let mut all_cores = String::new();
    for (name, python) in [
        ("convert_mxfp8e4m3(float)", "f32_to_mxfp8e4m3"),
        ("convert_mxfp4e2m1(float)", "f32_to_mxfp4"),
    ] {
        let request = MxRequest::parse(name).unwrap();
        let kernel = jit.compile_blocks_request(&request).expect("compiles");
        let (max, emax) = clconv::mx::element_range(request.elem()).unwrap();
        for (seed, &(bytes, size)) in SIZES.iter().enumerate() {
            let big = bytes >= 64 << 20;
            if big && !large {
                continue;
            }
            let (rounds, reps) = if big { (9, 1) } else { (31, 20) };
            let mut rng = Rng(0x3b_10c5 ^ seed as u64);
            let n = bytes / 4;
            let mut floats: Vec<f32> = (0..n)
                .map(|_| ((rng.next() >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0)
                .collect();
            for block in floats.chunks_mut(64 * 32).map(|c| &mut c[..32]) {
                let scale = if rng.next() & 1 == 0 {
                    1048576.0
                } else {
                    1.0 / 1048576.0
                };
                block.iter_mut().for_each(|v| *v *= scale);
            }
            let blocks = n / 32;
            let (mut e, mut s) = (vec![0u8; n], vec![0u8; blocks]);
            let (mut pe, mut ps) = (vec![0u8; n], vec![0u8; blocks]);
            let mut element_out = vec![Fp8E4M3(0); n];
            let e4m3 = request.elem() == clconv::ScalarType::Fp8E4M3;
            // The plain block loop: amax, OCP's scale from its exponent, the elements through a
            // saturating scalar conversion.
            let plain = |src: &[f32], e: &mut [u8], s: &mut [u8]| {
                for ((block, e), s) in src.chunks(32).zip(e.chunks_mut(32)).zip(s.iter_mut()) {
                    let amax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
                    let code = ((amax.to_bits() >> 23) as i32 - emax).max(0);
                    *s = code as u8;
                    let factor = f32::from_bits(((254 - code) as u32) << 23);
                    for (d, &v) in e.iter_mut().zip(block) {
                        let p = (v * factor).clamp(-max as f32, max as f32);
                        *d = if e4m3 {
                            F8E4M3::from_f32(p).to_bits()
                        } else {
                            e2m1::from_f32(p)
                        };
                    }
                }
            };
            kernel
                .quantize_bytes(bytes_of(&floats), &mut e, &mut s)
                .unwrap();
            plain(&floats, &mut pe, &mut ps);
            assert_eq!(
                (&s, &e),
                (&ps, &pe),
                "{name}: the plain loop differs from the kernel"
            );
            if !big {
                let (mut re, mut rs) = (vec![0u8; n], vec![0u8; blocks]);
                reference::mx_quantize(&request, bytes_of(&floats), &mut re, &mut rs).unwrap();
                assert_eq!((&s, &e), (&rs, &re), "{name}: kernel vs reference");
            }
            let traffic = n * 4 + n + blocks;
            let copy_src = vec![0x5au8; traffic / 2];
            let mut copy_dst = vec![0u8; traffic / 2];
            let mut times: [Vec<f64>; 4] = Default::default();
            let mut ratios: [Vec<f64>; 3] = Default::default();
            for _ in 0..rounds {
                let t = [
                    ns_per_run(reps, &mut || {
                        kernel
                            .quantize_bytes(bytes_of(&floats), &mut e, &mut s)
                            .unwrap()
                    }),
                    ns_per_run(reps, &mut || {
                        element.run(&floats, &mut element_out).unwrap()
                    }),
                    ns_per_run(reps, &mut || plain(&floats, &mut pe, &mut ps)),
                    ns_per_run(reps, &mut || copy_dst.copy_from_slice(&copy_src)),
                ];
                for (v, ns) in times.iter_mut().zip(t) {
                    v.push(ns);
                }
                for (r, baseline) in ratios.iter_mut().zip(&t[1..]) {
                    r.push(baseline / t[0]);
                }
            }
            let [k, el, rust_loop, same] = times.map(|mut v| median(&mut v));
            let gbs = |ns: f64, traffic: usize| traffic as f64 / ns;
            let (ml, ml_ratio) = match ml_dtypes_gbs(python, n * 4, rounds) {
                Ok(g) => (format!("{g:.2}"), format!("{:.1}", gbs(k, traffic) / g)),
                Err(why) => (format!("not run: {why}"), "-".into()),
            };
            let [r_el, r_loop, r_same] = ratios.map(|mut v| median(&mut v));
            out += &format!(
                "| `{name}` | {size} | {:.2} | {:.2} | {ml} | {:.2} | {:.2} | {r_el:.2} | {ml_ratio} | {r_loop:.2} | {r_same:.2} |\n",
                gbs(k, traffic),
                gbs(el, n * 5),
                gbs(rust_loop, traffic),
                gbs(same, traffic),
            );
            if big {
                // All cores: the kernel split across threads (the JIT's default for large
                // runs) against the same bytes copied by as many threads, paired per round.
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                jit.set_threads(Threads::Auto);
                let (mut kt, mut ratio) = (Vec::new(), Vec::new());
                for _ in 0..rounds {
                    let k = ns_per_run(1, &mut || {
                        kernel
                            .quantize_bytes(bytes_of(&floats), &mut e, &mut s)
                            .unwrap()
                    });
                    let c = ns_per_run(1, &mut || parallel_copy(&copy_src, &mut copy_dst, cores));
                    kt.push(k);
                    ratio.push(c / k);
                }
                jit.set_threads(Threads::Exactly(1));
                all_cores += &format!(
                    "| `{name}` | {size} | {cores} | {:.2} | {:.2} |\n",
                    gbs(median(&mut kt), traffic),
                    median(&mut ratio)
                );
            }
        }
    }
    if !all_cores.is_empty() {
        out += "\n| request | source | threads | kernel GB/s | ×same-bytes, as many threads |\n|---|---|---|---|---|\n";
        out += &all_cores;
    }
    out
}

/// NVFP4 quantisation of float32 (`convert_nvfp4(float)`, 256 KiB, one thread) against the
/// MX E2M1 block kernel on the same floats, the plain Rust loop of Transformer Engine's float32
/// recipe (the block's E4M3 scale from amax / 6 x S_enc, the elements times S_enc / scale,
/// through `float8`'s E4M3 and the ladder into E2M1 above) and the copy of the same bytes.
/// The recipe rounds in float32 steps, so it may differ from clconv's exact rule: the table
/// counts the blocks where it does. No Python peer: ml_dtypes has no NVFP4.
fn bench_nvfp4(jit: &Jit) -> String {
    use clconv::mx::{MxRequest, NVFP4_BLOCK};
    let kernel = jit
        .compile_blocks("convert_nvfp4(float)")
        .expect("compiles");
    let mx = jit
        .compile_blocks("convert_mxfp4e2m1(float)")
        .expect("compiles");
    let (bytes, size) = SIZES[0];
    let n = bytes / 4;
    let mut rng = Rng(0x4e_5f54);
    let floats: Vec<f32> = (0..n)
        .map(|i| {
            let v = ((rng.next() >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0;
            // Blocks of different magnitudes, as activations have.
            v * 2f32.powi(((i / NVFP4_BLOCK) % 13) as i32 - 6)
        })
        .collect();
    let amax = floats.iter().fold(0f32, |m, v| m.max(v.abs()));
    let t = amax / 2688.0;
    let blocks = n / NVFP4_BLOCK;
    let (mut e, mut s) = (vec![0u8; n], vec![0u8; blocks]);
    let (mut pe, mut ps) = (vec![0u8; n], vec![0u8; blocks]);
    let (mut me, mut ms) = (vec![0u8; n], vec![0u8; n / 32]);
    // Transformer Engine's float32 steps (its C++ reference, `quantize_nvfp4_1d`, with the
    // E4M3-rounded scale as its Python reference uses).
    let s_enc = (448.0f32 * 6.0 / amax).min(f32::MAX);
    let plain = |src: &[f32], e: &mut [u8], s: &mut [u8]| {
        for ((block, e), s) in src
            .chunks(NVFP4_BLOCK)
            .zip(e.chunks_mut(NVFP4_BLOCK))
            .zip(s.iter_mut())
        {
            let amax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
            let scale = F8E4M3::from_f32((amax / 6.0 * s_enc).min(448.0));
            *s = scale.to_bits();
            let decoded = scale.to_f32();
            let enc = if decoded == 0.0 { 0.0 } else { s_enc / decoded };
            for (d, &v) in e.iter_mut().zip(block) {
                *d = e2m1::from_f32((v * enc).clamp(-6.0, 6.0));
            }
        }
    };
    kernel
        .quantize_nvfp4_bytes(bytes_of(&floats), t, &mut e, &mut s)
        .unwrap();
    let (mut re, mut rs) = (vec![0u8; n], vec![0u8; blocks]);
    let request = MxRequest::parse("convert_nvfp4(float)").unwrap();
    reference::nvfp4_quantize(&request, bytes_of(&floats), t, &mut re, &mut rs).unwrap();
    assert_eq!(
        (&s, &e),
        (&rs, &re),
        "convert_nvfp4(float): kernel vs reference"
    );
    plain(&floats, &mut pe, &mut ps);
    let differing = (0..blocks)
        .filter(|&b| {
            let at = b * NVFP4_BLOCK..(b + 1) * NVFP4_BLOCK;
            (s[b], &e[at.clone()]) != (ps[b], &pe[at])
        })
        .count();
    let traffic = n * 4 + n + blocks;
    let copy_src = vec![0x5au8; traffic / 2];
    let mut copy_dst = vec![0u8; traffic / 2];
    let (rounds, reps) = (31, 20);
    let mut times: [Vec<f64>; 4] = Default::default();
    let mut ratios: [Vec<f64>; 3] = Default::default();
    for _ in 0..rounds {
        let t = [
            ns_per_run(reps, &mut || {
                kernel
                    .quantize_nvfp4_bytes(bytes_of(&floats), t, &mut e, &mut s)
                    .unwrap()
            }),
            ns_per_run(reps, &mut || {
                mx.quantize_bytes(bytes_of(&floats), &mut me, &mut ms)
                    .unwrap()
            }),
            ns_per_run(reps, &mut || plain(&floats, &mut pe, &mut ps)),
            ns_per_run(reps, &mut || {
                copy_dst.copy_from_slice(black_box(&copy_src));
                black_box(&copy_dst);
            }),
        ];
        for (v, ns) in times.iter_mut().zip(t) {
            v.push(ns);
        }
        for (r, baseline) in ratios.iter_mut().zip(&t[1..]) {
            r.push(baseline / t[0]);
        }
    }
    let [k, m, rust_loop, same] = times.map(|mut v| median(&mut v));
    let [r_mx, r_loop, r_same] = ratios.map(|mut v| median(&mut v));
    let gbs = |ns: f64| traffic as f64 / ns;
    format!(
        "| request | source | kernel GB/s | MX E2M1 block kernel GB/s | TE-recipe loop GB/s | same-bytes GB/s | ×MX kernel | ×TE loop | ×same-bytes | blocks where the TE recipe differs |\n\
         |---|---|---|---|---|---|---|---|---|---|\n\
         | `convert_nvfp4(float)` | {size} | {:.2} | {:.2} | {:.2} | {:.2} | {r_mx:.2} | {r_loop:.2} | {r_same:.2} | {differing} of {blocks} |\n",
        gbs(k),
        gbs(m),
        gbs(rust_loop),
        gbs(same),
    )
}

/// NVFP4 dequantisation (`convert_float(nvfp4)`, `convert_half(nvfp4)`; 64 Ki values, one
/// thread) against the MX E2M1 block kernel's way back (`convert_float(mxfp4e2m1)`), a plain
/// Rust loop (element x scale x tensor scale in float32, as Transformer Engine's dequantiser
/// computes it, `half`'s `f16::from_f32` for half: it rounds twice, so a few results may
/// differ from clconv's one rounding) and the copy of the same bytes. Every code with every
/// scale in turn; the kernels' output is compared with the reference first.
fn bench_nvfp4_dequantize(jit: &Jit) -> String {
    use clconv::jit::{Fp4E2M1, Fp8E4M3, Fp8E8M0};
    use clconv::mx::{MxRequest, NVFP4_BLOCK};
    let n = 64 << 10;
    let blocks = n / NVFP4_BLOCK;
    let codes: Vec<Fp4E2M1> = (0..n).map(|i| Fp4E2M1((i % 16) as u8)).collect();
    let scales: Vec<Fp8E4M3> = (0..blocks).map(|i| Fp8E4M3((i % 0x7e) as u8)).collect();
    let mx_scales: Vec<Fp8E8M0> = (0..n / 32).map(|i| Fp8E8M0((100 + i % 50) as u8)).collect();
    let t = 0.01f32;
    let mut out = String::from(
        "| request | values | kernel GB/s | MX E2M1 way back GB/s | plain loop GB/s | same-bytes GB/s | ×MX kernel | ×plain loop | ×same-bytes |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let mx = jit
        .compile_blocks("convert_float(mxfp4e2m1)")
        .expect("compiles");
    let mut mx_out = vec![0f32; n];
    for (name, value_bytes) in [("convert_float(nvfp4)", 4), ("convert_half(nvfp4)", 2)] {
        let kernel = jit.compile_blocks(name).expect("compiles");
        jit.finish_tier_up();
        let code_bytes = bytes_of(&codes);
        let scale_bytes = bytes_of(&scales);
        let mut got = vec![0u8; n * value_bytes];
        kernel
            .dequantize_nvfp4_bytes(code_bytes, scale_bytes, t, &mut got)
            .unwrap();
        let mut want = vec![0u8; n * value_bytes];
        let request = MxRequest::parse(name).unwrap();
        reference::nvfp4_dequantize(&request, code_bytes, scale_bytes, t, &mut want).unwrap();
        assert!(got == want, "{name}: kernel vs reference");
        let mut plain_out = vec![0u8; n * value_bytes];
        let plain = |dst: &mut [u8]| {
            for (i, d) in dst.chunks_mut(value_bytes).enumerate() {
                let s = F8E4M3::from_bits(scales[i / NVFP4_BLOCK].0).to_f32();
                let v = e2m1::VALUES[usize::from(codes[i].0 & 15)] * s * t;
                if value_bytes == 4 {
                    d.copy_from_slice(&v.to_le_bytes());
                } else {
                    d.copy_from_slice(&f16::from_f32(v).to_bits().to_le_bytes());
                }
            }
        };
        let traffic = n + blocks + n * value_bytes;
        let copy_src = vec![0x5au8; traffic / 2];
        let mut copy_dst = vec![0u8; traffic / 2];
        let (times, ratios) = interleaved(
            31,
            20,
            &mut [
                &mut || {
                    kernel
                        .dequantize_nvfp4_bytes(code_bytes, scale_bytes, t, &mut got)
                        .unwrap()
                },
                &mut || mx.dequantize(&codes, &mx_scales, &mut mx_out).unwrap(),
                &mut || plain(&mut plain_out),
                &mut || {
                    copy_dst.copy_from_slice(black_box(&copy_src));
                    black_box(&copy_dst);
                },
            ],
        );
        let mx_traffic = n + n / 32 + n * 4;
        out += &format!(
            "| `{name}` | {n} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            traffic as f64 / times[0],
            mx_traffic as f64 / times[1],
            traffic as f64 / times[2],
            traffic as f64 / times[3],
            ratios[0] * traffic as f64 / mx_traffic as f64,
            ratios[1],
            ratios[2],
        );
    }
    out
}

/// Whether to run the section `name`: all of them, or those whose name contains
/// `CLCONV_BENCH_ONLY` (`criterion` for the criterion groups and their summary).
fn wanted(name: &str) -> bool {
    std::env::var("CLCONV_BENCH_ONLY").map_or(true, |only| name.contains(&only))
}

fn main() {
    let large = std::env::var("CLCONV_BENCH_LARGE").map_or(true, |v| v != "0");
    let jit = Jit::with_options(X64Flags::Host, Extensions::with_fp16(), Rounding::Rte)
        .expect("a JIT for this host");
    jit.set_tiering(Tiering::OptimisedOnly);
    jit.set_threads(Threads::Exactly(1));
    if wanted("criterion") {
        let mut c = Criterion::default()
            .warm_up_time(std::time::Duration::from_millis(500))
            .measurement_time(std::time::Duration::from_millis(1500))
            .configure_from_args();
        let mut rows = Vec::new();
        bench_case::<HalfFromFloat>(&mut c, &jit, large, &mut rows);
        bench_case::<FloatFromHalf>(&mut c, &jit, large, &mut rows);
        bench_case::<BFloatFromFloat>(&mut c, &jit, large, &mut rows);
        bench_case::<FloatFromBFloat>(&mut c, &jit, large, &mut rows);
        bench_case::<E4M3FromFloat>(&mut c, &jit, large, &mut rows);
        bench_case::<FloatFromE4M3>(&mut c, &jit, large, &mut rows);
        bench_case::<E5M2FromFloat>(&mut c, &jit, large, &mut rows);
        bench_case::<FloatFromE5M2>(&mut c, &jit, large, &mut rows);
        c.final_summary();
        println!("\n{}", summary(&rows));
    }
    let sections: [(&str, &dyn Fn() -> String); 9] = [
        ("bench_e2m1", &|| bench_e2m1(&jit, large)),
        ("bench_e2m1_packed", &|| bench_e2m1_packed(&jit, large)),
        ("bench_e2m3_decode", &|| bench_e2m3_decode(&jit, large)),
        ("bench_elements", &|| bench_elements(&jit, large)),
        ("bench_e8m0_tf32_encode", &|| bench_e8m0_tf32_encode(&jit)),
        ("bench_mx", &|| bench_mx(&jit, large)),
        ("bench_nvfp4", &|| bench_nvfp4(&jit)),
        ("bench_nvfp4_dequantize", &|| bench_nvfp4_dequantize(&jit)),
        ("f16c", &|| {
            #[cfg(target_arch = "x86_64")]
            return format!(
                "F16C on this CPU (the half crate uses it): {}",
                is_x86_feature_detected!("f16c")
            );
            #[cfg(not(target_arch = "x86_64"))]
            String::new()
        }),
    ];
    for (name, section) in sections {
        if wanted(name) {
            println!("\n{}", section());
        }
    }
}
