//! Throughput of clconv's batch kernels against what a user would write instead, and against
//! the memory limit; and how long a kernel takes to compile.
//!
//! ```sh
//! cargo bench --bench conversions                          # everything, about 8 minutes
//! CLCONV_BENCH_LARGE=0 cargo bench --bench conversions     # skip the 64 MiB buffers
//! CLCONV_BENCH_THROUGHPUT=0 cargo bench --bench conversions  # only the compile latencies
//! CLCONV_BENCH_COMPILE=0 cargo bench --bench conversions    # no compile latencies
//! CLCONV_BENCH_PAIRED=0 cargo bench --bench conversions     # no interleaved ratio rounds
//! CLCONV_BENCH_DIAG=1 cargo bench --bench conversions -- 64MiB  # + the 64 MiB diagnostics
//! cargo bench --bench conversions -- 'convert_int4\('      # a criterion filter
//! CLCONV_BENCH_SWEEP=1 cargo bench --bench conversions     # only the size sweep, ~2 minutes
//! ```
//!
//! For each of fourteen conversions (ten of OpenCL's, and WGSL's, PTX's `.rzi.s64.f64` and
//! `.rn.sat.f32.f64`, HLSL's `f16tof32` among them) and each source size (4 KiB, 256 KiB, 64 MiB) it times, in one
//! criterion group per conversion:
//!
//! - `kernel`: `Kernel::run` on typed slices, on one thread: a default [`Jit`]
//!   (`Threads::Auto`, one thread below `PARALLEL_THRESHOLD`) at 4 and 256 KiB, one set to
//!   `Threads::Exactly(1)` at 64 MiB;
//! - `rust-default`: the plain Rust loop (`round_ties_even`, `as`, clamps, exact directed
//!   rounding by comparing back), compiled for the default target (x86-64: SSE2);
//! - `rust-avx2`, `rust-avx512`: the same loop body, inlined into `#[target_feature]` functions
//!   chosen with `is_x86_feature_detected!` (skipped when the CPU lacks the features);
//! - `memcpy`: `copy_from_slice` of `(src bytes + dst bytes) / 2` bytes, which reads and writes
//!   exactly as many bytes as the conversion does (a copy of n bytes reads n and writes n);
//! - at 64 MiB also `kernel-2t` (`Threads::Exactly(2)`) and `memcpy-2t` (the same copy split in
//!   two halves on two scoped threads, spawned per run as the kernel does).
//!
//! Before any timing, every baseline's output is compared bit for bit with the kernel's (and, up
//! to 256 KiB, the kernel's with the reference interpreter); a mismatch panics, which aborts the
//! bench. Inputs are pseudo-random with the hard cases (NaN, infinities, halfway values, range
//! edges) planted at the start.
//!
//! After criterion's samples, each size gets an interleaved measurement (see [`paired`]): the
//! kernel and every baseline timed back to back in 31 rounds (9 at 64 MiB), the ratio taken per
//! round. The summary's ratios are those rounds' medians, because on a shared machine two
//! criterion medians taken seconds apart can differ by 2x for the same code.
//!
//! At the end the bench prints a Markdown summary: medians, elements/ns, GB/s of bytes read plus
//! written, and the throughput ratios kernel/baseline (above 1: the kernel is faster); then the
//! compile latencies (per kernel: a fresh `Jit` per sample, so nothing is cached; tiered, as
//! `Jit::new` compiles, and optimised only), the quick tier's speed against the optimised
//! tier's, and the time to compile the whole matrix into one `Jit`.
//!
//! `CLCONV_BENCH_SWEEP=1` runs only the sweep behind the README's plot
//! (`scripts/plot_throughput.py` draws `docs/throughput.svg` from it): for
//! `convert_uchar4_sat_rte(float4)`, `convert_int4_sat_rte(float4)` and
//! `convert_float2_rtn(ulong2)`, at source sizes from 1 KiB to 64 MiB (doubling), the kernel
//! on one thread (`Threads::Exactly(1)`), `rust-default` and `memcpy`, after the same bit-for-bit
//! checks, timed in 105 interleaved rounds each (five passes over everything, so that a burst
//! of load spoils few of a size's rounds); it writes every series' medians (ns,
//! elements/ns, GB/s of bytes read plus written, the kernel's per-round speed-up) to
//! `target/bench-sweep.csv` and prints them as a Markdown table. Below about 32 KiB the Rust
//! loop is faster than above because it branches on the data (glibc's `roundevenf`, the
//! directed-rounding fix-up) and the branch predictor learns a small buffer converted thousands
//! of times over (checked for float -> uchar in a standalone loop: on fresh data it runs at its
//! large-buffer rate at every size).
//!
//! Warm-up and measurement times default to 0.5 s and 1.5 s; criterion's `--warm-up-time` and
//! `--measurement-time` override them.

use clconv::jit::{Element, Jit, Threads, Tiering, X64Flags, PARALLEL_THRESHOLD};
use clconv::{kernel, reference, target::Target, Extensions, Layout, Request, Rounding};
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// The conversions and their plain-Rust baselines.

/// One conversion: its OpenCL name, its element types, the baseline's per-element body, and
/// how to make inputs for it.
trait Case: 'static {
    type S: Element + Copy + Default;
    type D: Element + Copy + Default;
    /// The OpenCL spelling the kernel is compiled from.
    const NAME: &'static str;
    /// The baseline, one element: what a good engineer writes, exact to the OpenCL semantics.
    fn convert(x: Self::S) -> Self::D;
    /// A pseudo-random input element.
    fn random(rng: &mut Rng) -> Self::S;
    /// Hard inputs, planted at the start of every buffer.
    fn specials() -> Vec<Self::S>;
}

#[path = "../tests/common/rng.rs"]
mod rng;
use rng::Rng;

/// Floats: one in eight is random bits (NaN, infinities, huge and tiny values), the others
/// multiples of 0.25 in [-600, 600), so halfway cases and the uchar range are well represented.
fn random_f32(rng: &mut Rng) -> f32 {
    let r = rng.next();
    if r & 7 == 0 {
        f32::from_bits((r >> 32) as u32)
    } else {
        ((r >> 32) % 4800) as f32 * 0.25 - 600.0
    }
}

const F32_SPECIALS: [f32; 26] = [
    f32::NAN,
    -f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    0.5,
    1.5,
    2.5,
    -0.5,
    -1.5,
    -2.5,
    254.5,
    255.5,
    255.499_98,
    -0.499_999_97,
    2_147_483_520.0,
    2_147_483_648.0,
    -2_147_483_648.0,
    -2_147_483_904.0,
    1e-45,
    -1e-45,
    f32::MAX,
    f32::MIN,
    8_388_609.0,
    16_777_215.0,
];

/// `convert_int4_sat_rte(float4)`.
struct IntSatRteFromFloat;
impl Case for IntSatRteFromFloat {
    type S = f32;
    type D = i32;
    const NAME: &'static str = "convert_int4_sat_rte(float4)";
    #[inline(always)]
    fn convert(x: f32) -> i32 {
        // `as` saturates and maps NaN to 0: exactly `_sat`.
        x.round_ties_even() as i32
    }
    fn random(rng: &mut Rng) -> f32 {
        random_f32(rng)
    }
    fn specials() -> Vec<f32> {
        F32_SPECIALS.to_vec()
    }
}

/// WGSL's `vec4<i32>(vec4<f32>)` (`convert_int4_satsrc(float4)`): the Rust loop a WGSL
/// runtime writes, `as` then the clamp to 2147483520.
struct WgslIntFromFloat;
impl Case for WgslIntFromFloat {
    type S = f32;
    type D = i32;
    const NAME: &'static str = "wgsl:vec4<i32>(vec4<f32>)";
    #[inline(always)]
    fn convert(x: f32) -> i32 {
        (x as i32).min(2_147_483_520)
    }
    fn random(rng: &mut Rng) -> f32 {
        random_f32(rng)
    }
    fn specials() -> Vec<f32> {
        F32_SPECIALS.to_vec()
    }
}

/// PTX's `cvt.rzi.s64.f64` (`convert_long_satmsb_rtz(double)`): NaN gives i64::MIN.
struct PtxLongFromDouble;
impl Case for PtxLongFromDouble {
    type S = f64;
    type D = i64;
    const NAME: &'static str = "ptx:cvt.rzi.s64.f64";
    #[inline(always)]
    fn convert(x: f64) -> i64 {
        if x.is_nan() {
            i64::MIN
        } else {
            x as i64
        }
    }
    fn random(rng: &mut Rng) -> f64 {
        let r = rng.next();
        if r & 7 == 0 {
            f64::from_bits(rng.next())
        } else {
            // Magnitudes around the i64 range, both signs.
            let exp = 1023 + (r >> 52) % 70;
            f64::from_bits((r & (1 << 63)) | (exp << 52) | (rng.next() >> 12))
        }
    }
    fn specials() -> Vec<f64> {
        vec![
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            9.3e18,
            -9.3e18,
            -0.5,
            0.0,
        ]
    }
}

/// PTX's `cvt.rn.sat.f32.f64` (`convert_float_clamp01_rte(double)`): nearest-even, then
/// [0.0, 1.0], NaN and -0.0 giving +0.0 (one of PTX's float rules).
struct PtxUnitFloatFromDouble;
impl Case for PtxUnitFloatFromDouble {
    type S = f64;
    type D = f32;
    const NAME: &'static str = "ptx:cvt.rn.sat.f32.f64";
    #[inline(always)]
    fn convert(x: f64) -> f32 {
        // `as` rounds to nearest-even.
        let f = x as f32;
        if f.is_nan() || f.is_sign_negative() {
            0.0
        } else {
            f.min(1.0)
        }
    }
    fn random(rng: &mut Rng) -> f64 {
        let r = rng.next();
        if r & 7 == 0 {
            f64::from_bits(rng.next())
        } else {
            // Mostly in [-0.5, 1.5): both clamps and the values between.
            (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 0.5
        }
    }
    fn specials() -> Vec<f64> {
        vec![
            f64::NAN,
            -0.0,
            -1e-300,
            1.000_000_000_1,
            0.999_999_999_9,
            f64::INFINITY,
        ]
    }
}

/// HLSL's `f16tof32(uint4)`, a chain (`convert_float4(as_half4(convert_ushort4(uint4)))`):
/// the half in each uint's low 16 bits, exactly; the `half` crate's conversion is the loop.
struct HlslF16ToF32;
impl Case for HlslF16ToF32 {
    type S = u32;
    type D = f32;
    const NAME: &'static str = "hlsl:f16tof32(uint4)";
    #[inline(always)]
    fn convert(x: u32) -> f32 {
        half::f16::from_bits(x as u16).to_f32()
    }
    fn random(rng: &mut Rng) -> u32 {
        rng.next() as u32
    }
    fn specials() -> Vec<u32> {
        vec![0x7e00, 0x7c01, 0xfc00, 0x0001, 0xffff_3c00, 0x8000]
    }
}

/// `convert_uchar4_sat_rte(float4)`.
struct UCharSatRteFromFloat;
impl Case for UCharSatRteFromFloat {
    type S = f32;
    type D = u8;
    const NAME: &'static str = "convert_uchar4_sat_rte(float4)";
    #[inline(always)]
    fn convert(x: f32) -> u8 {
        x.round_ties_even() as u8
    }
    fn random(rng: &mut Rng) -> f32 {
        random_f32(rng)
    }
    fn specials() -> Vec<f32> {
        F32_SPECIALS.to_vec()
    }
}

/// `convert_int4(float4)`: rtz; clconv defines NaN and out-of-range results as the `_sat` ones.
struct IntFromFloat;
impl Case for IntFromFloat {
    type S = f32;
    type D = i32;
    const NAME: &'static str = "convert_int4(float4)";
    #[inline(always)]
    fn convert(x: f32) -> i32 {
        x as i32
    }
    fn random(rng: &mut Rng) -> f32 {
        random_f32(rng)
    }
    fn specials() -> Vec<f32> {
        F32_SPECIALS.to_vec()
    }
}

/// `convert_float4_rtp(int4)`.
struct FloatRtpFromInt;
impl Case for FloatRtpFromInt {
    type S = i32;
    type D = f32;
    const NAME: &'static str = "convert_float4_rtp(int4)";
    #[inline(always)]
    fn convert(x: i32) -> f32 {
        // Round to nearest, then one step up when that went below (|f| <= 2^31 fits an i64).
        let f = x as f32;
        if (f as i64) < i64::from(x) {
            f.next_up()
        } else {
            f
        }
    }
    fn random(rng: &mut Rng) -> i32 {
        let r = rng.next();
        if r & 3 == 0 {
            (r >> 40) as i32 - (1 << 23) // small: exact
        } else {
            (r >> 32) as i32
        }
    }
    fn specials() -> Vec<i32> {
        vec![
            0,
            1,
            -1,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
            16_777_217,
            -16_777_217,
            16_777_216,
            0x7fff_ff7f,
            0x7fff_ff80,
            -0x7fff_ff80,
        ]
    }
}

/// `convert_float2_rtz(double2)`.
struct FloatRtzFromDouble;
impl Case for FloatRtzFromDouble {
    type S = f64;
    type D = f32;
    const NAME: &'static str = "convert_float2_rtz(double2)";
    #[inline(always)]
    fn convert(x: f64) -> f32 {
        // Round to nearest, then one step toward zero when that grew the magnitude (overflow to
        // infinity included: it steps back to MAX). NaN compares false and stays.
        let f = x as f32;
        if f64::from(f).abs() > x.abs() {
            f32::from_bits(f.to_bits() - 1)
        } else {
            f
        }
    }
    fn random(rng: &mut Rng) -> f64 {
        let r = rng.next();
        if r & 7 == 0 {
            f64::from_bits(rng.next())
        } else {
            // Exponents from below the f32 subnormals to above f32::MAX, random mantissas.
            let exp = 1023 - 160 + (r >> 52) % 290;
            f64::from_bits((r & (1 << 63)) | (exp << 52) | (rng.next() >> 12))
        }
    }
    fn specials() -> Vec<f64> {
        vec![
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff4_0000_dead_beef),
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::from(f32::MAX),
            f64::from(f32::MAX) * (1.0 + f64::EPSILON),
            -f64::from(f32::MAX) * 1.5,
            2f64.powi(128),
            1e-46,
            -1e-46,
            1e-300,
            f64::from(f32::MIN_POSITIVE) * 0.75,
            1.0 + 2f64.powi(-24),
            -(1.0 + 2f64.powi(-24)),
            f64::MAX,
            f64::MIN,
        ]
    }
}

/// `convert_double2(long2)`: the static mode, rte.
struct DoubleFromLong;
impl Case for DoubleFromLong {
    type S = i64;
    type D = f64;
    const NAME: &'static str = "convert_double2(long2)";
    #[inline(always)]
    fn convert(x: i64) -> f64 {
        x as f64
    }
    fn random(rng: &mut Rng) -> i64 {
        let r = rng.next();
        if r & 3 == 0 {
            (r as i64) >> 12 // below 2^52: exact
        } else {
            r as i64
        }
    }
    fn specials() -> Vec<i64> {
        vec![
            0,
            -1,
            i64::MAX,
            i64::MIN,
            (1 << 53) + 1,
            -(1 << 53) - 1,
            (1 << 53) + 3,
        ]
    }
}

/// `convert_float4(uint4)`: the static mode, rte.
struct FloatFromUInt;
impl Case for FloatFromUInt {
    type S = u32;
    type D = f32;
    const NAME: &'static str = "convert_float4(uint4)";
    #[inline(always)]
    fn convert(x: u32) -> f32 {
        x as f32
    }
    fn random(rng: &mut Rng) -> u32 {
        (rng.next() >> 32) as u32
    }
    fn specials() -> Vec<u32> {
        vec![
            0,
            1,
            u32::MAX,
            0x8000_0000,
            0x8000_0080,
            0x8000_0180,
            16_777_217,
        ]
    }
}

/// `convert_uchar8_sat(short8)`.
struct UCharSatFromShort;
impl Case for UCharSatFromShort {
    type S = i16;
    type D = u8;
    const NAME: &'static str = "convert_uchar8_sat(short8)";
    #[inline(always)]
    fn convert(x: i16) -> u8 {
        x.clamp(0, 255) as u8
    }
    fn random(rng: &mut Rng) -> i16 {
        let r = rng.next();
        if r & 1 == 0 {
            (r >> 48) as i16 % 400 // around the uchar range
        } else {
            (r >> 48) as i16
        }
    }
    fn specials() -> Vec<i16> {
        vec![0, -1, 255, 256, i16::MAX, i16::MIN, 128, 127]
    }
}

/// `convert_char4(int4)`: no `_sat`, so the low byte.
struct CharFromInt;
impl Case for CharFromInt {
    type S = i32;
    type D = i8;
    const NAME: &'static str = "convert_char4(int4)";
    #[inline(always)]
    fn convert(x: i32) -> i8 {
        x as i8
    }
    fn random(rng: &mut Rng) -> i32 {
        (rng.next() >> 32) as i32
    }
    fn specials() -> Vec<i32> {
        vec![0, -1, 127, 128, 255, 256, i32::MAX, i32::MIN]
    }
}

/// `convert_float2_rtn(ulong2)`.
struct FloatRtnFromULong;
impl Case for FloatRtnFromULong {
    type S = u64;
    type D = f32;
    const NAME: &'static str = "convert_float2_rtn(ulong2)";
    #[inline(always)]
    fn convert(x: u64) -> f32 {
        // Round to nearest, then one step down when that went above (2^64 needs the u128).
        let f = x as f32;
        if f as u128 > u128::from(x) {
            f.next_down()
        } else {
            f
        }
    }
    fn random(rng: &mut Rng) -> u64 {
        let r = rng.next();
        if r & 3 == 0 {
            r >> 40 // below 2^24: exact
        } else {
            rng.next()
        }
    }
    fn specials() -> Vec<u64> {
        vec![
            0,
            1,
            u64::MAX,
            u64::MAX - (1 << 39),
            u64::MAX - (1 << 40) + 1,
            1 << 63,
            (1 << 63) + 1,
            16_777_217,
        ]
    }
}

/// The loop itself; inlined into each of the entry points below, so each is compiled with its
/// own target features.
#[inline(always)]
fn rust_loop<C: Case>(src: &[C::S], dst: &mut [C::D]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = C::convert(s);
    }
}

/// The loop for the default target.
#[inline(never)]
fn rust_default<C: Case>(src: &[C::S], dst: &mut [C::D]) {
    rust_loop::<C>(src, dst)
}

/// The loop with AVX2 and FMA. Safety: the CPU must have them.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
unsafe fn rust_avx2<C: Case>(src: &[C::S], dst: &mut [C::D]) {
    rust_loop::<C>(src, dst)
}

/// The loop with AVX-512 (F, VL, DQ, BW). Safety: the CPU must have them.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
unsafe fn rust_avx512<C: Case>(src: &[C::S], dst: &mut [C::D]) {
    rust_loop::<C>(src, dst)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Isa {
    Default,
    Avx2,
    Avx512,
}

impl Isa {
    fn name(self) -> &'static str {
        match self {
            Isa::Default => "rust-default",
            Isa::Avx2 => "rust-avx2",
            Isa::Avx512 => "rust-avx512",
        }
    }

    fn available(self) -> bool {
        match self {
            Isa::Default => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx512dq")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx2")
                    && is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Runs the baseline loop compiled for this ISA. Only call when `available()`.
    fn run<C: Case>(self, src: &[C::S], dst: &mut [C::D]) {
        debug_assert!(self.available());
        match self {
            Isa::Default => rust_default::<C>(src, dst),
            // SAFETY: `available()` checked the CPU features the functions are compiled for.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { rust_avx2::<C>(src, dst) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { rust_avx512::<C>(src, dst) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => unreachable!(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Buffers.

/// The bytes of a slice of plain numbers.
fn bytes_of<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: every Element is a plain number type (or a u16 wrapper) without padding, so its
    // memory is initialised bytes; the length is the slice's size in bytes.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), std::mem::size_of_val(s)) }
}

fn make_input<C: Case>(elements: usize, seed: u64) -> Vec<C::S> {
    let mut rng = Rng(seed | 1);
    let mut v: Vec<C::S> = (0..elements).map(|_| C::random(&mut rng)).collect();
    for (slot, s) in v.iter_mut().zip(C::specials()) {
        *slot = s;
    }
    v
}

/// Panics with the first differing element unless `a` and `b` hold the same bits.
fn assert_same<T: Element + std::fmt::Debug>(what: &str, name: &str, a: &[T], b: &[T]) {
    if bytes_of(a) == bytes_of(b) {
        return;
    }
    let size = std::mem::size_of::<T>();
    let i = bytes_of(a)
        .iter()
        .zip(bytes_of(b))
        .position(|(x, y)| x != y)
        .unwrap()
        / size;
    panic!(
        "{name}: {what} differs from the kernel at element {i}: {:?} vs kernel {:?} \
         (the bench is aborted: a baseline that is not exact is not a baseline)",
        b[i], a[i]
    );
}

/// Correctness first: runs `kernel` into `dst` and, when `with_reference` (the interpreter is
/// soft-float, so only up to 256 KiB), compares that with the reference interpreter's output.
fn check_kernel<C: Case>(
    kernel: &clconv::jit::Kernel,
    src: &[C::S],
    dst: &mut [C::D],
    with_reference: bool,
) {
    kernel.run(src, dst).unwrap();
    if with_reference {
        let request = Request::parse(C::NAME, Extensions::default()).unwrap();
        let mut expected = vec![0u8; std::mem::size_of_val(dst)];
        reference::evaluate(&request, Layout::Packed, bytes_of(src), &mut expected).unwrap();
        assert!(
            bytes_of(dst) == &expected[..],
            "{}: the kernel differs from the reference interpreter",
            C::NAME
        );
    }
}

/// Runs `what` into `scratch` (cleared first) and compares its output with the kernel's, bit for
/// bit (see [`assert_same`]).
fn check_against<T: Element + Default + std::fmt::Debug>(
    what: &str,
    name: &str,
    kernel_out: &[T],
    scratch: &mut [T],
    run: impl FnOnce(&mut [T]),
) {
    scratch.fill(T::default());
    run(scratch);
    assert_same(what, name, kernel_out, scratch);
}

/// A source and a destination for `memcpy` of the conversion's traffic: it reads
/// size_of_val(src) bytes and writes size_of_val(dst); a copy of n bytes reads n and writes n.
fn copy_buffers(traffic: usize) -> (Vec<u8>, Vec<u8>) {
    let copy_src = vec![0x5au8; traffic / 2];
    let mut copy_dst = vec![0u8; traffic / 2];
    copy_dst.copy_from_slice(&copy_src); // fault the pages in
    (copy_src, copy_dst)
}

fn memcpy_2t(src: &[u8], dst: &mut [u8]) {
    let half = src.len() / 2;
    let (s0, s1) = src.split_at(half);
    let (d0, d1) = dst.split_at_mut(half);
    std::thread::scope(|scope| {
        scope.spawn(|| d0.copy_from_slice(s0));
        scope.spawn(|| d1.copy_from_slice(s1));
    });
}

/// Diagnostic: a copy with ordinary 16-byte loads and stores, the store kind clconv's kernels
/// use. glibc's memcpy switches to non-temporal stores above `x86_non_temporal_threshold`
/// (about 15 MiB here), which skip the read-for-ownership of the destination lines.
#[cfg(target_arch = "x86_64")]
fn copy_regular_stores(src: &[u8], dst: &mut [u8]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
    assert_eq!(src.len(), dst.len());
    let n = src.len() / 64 * 64;
    for i in (0..n).step_by(64) {
        // SAFETY: i + 64 <= n <= len for both slices; unaligned loads and stores.
        unsafe {
            let s = src.as_ptr().add(i).cast::<__m128i>();
            let d = dst.as_mut_ptr().add(i).cast::<__m128i>();
            let (a, b, c, e) = (
                _mm_loadu_si128(s),
                _mm_loadu_si128(s.add(1)),
                _mm_loadu_si128(s.add(2)),
                _mm_loadu_si128(s.add(3)),
            );
            _mm_storeu_si128(d, a);
            _mm_storeu_si128(d.add(1), b);
            _mm_storeu_si128(d.add(2), c);
            _mm_storeu_si128(d.add(3), e);
        }
    }
    dst[n..].copy_from_slice(&src[n..]);
}

/// Diagnostic: the kernel run on chunks into a small cache-resident scratch buffer, each chunk
/// then streamed to the destination with non-temporal stores: what a kernel with non-temporal
/// stores for large buffers would do.
#[cfg(target_arch = "x86_64")]
fn kernel_nt<S: Element, D: Element>(
    k: &clconv::jit::Kernel,
    src: &[S],
    dst: &mut [D],
    scratch: &mut [D],
) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let chunk = scratch.len();
    for (s, d) in src.chunks(chunk).zip(dst.chunks_mut(chunk)) {
        let n = s.len();
        k.run(s, &mut scratch[..n]).unwrap();
        let from = bytes_of(&scratch[..n]);
        let bytes = from.len();
        let to = d.as_mut_ptr().cast::<u8>();
        let head = to.align_offset(16).min(bytes);
        let body = (bytes - head) / 16 * 16;
        // SAFETY: `to` points at `bytes` writable bytes (the chunk of `dst`); the head and tail
        // are copied bytewise, the body with aligned 16-byte streaming stores.
        unsafe {
            std::ptr::copy_nonoverlapping(from.as_ptr(), to, head);
            for i in (head..head + body).step_by(16) {
                let v = _mm_loadu_si128(from.as_ptr().add(i).cast::<__m128i>());
                _mm_stream_si128(to.add(i).cast::<__m128i>(), v);
            }
            std::ptr::copy_nonoverlapping(
                from.as_ptr().add(head + body),
                to.add(head + body),
                bytes - head - body,
            );
        }
    }
    // SAFETY: a store fence, always available on x86-64.
    unsafe { _mm_sfence() };
}

// ---------------------------------------------------------------------------------------------
// Timing records: every bench routine is run through `iter_custom`, which records the time per
// iteration of each call; criterion warms up first and then takes `sample_size` samples, so the
// last `sample_size` records of a benchmark are its measurement.

static RECORDS: Mutex<BTreeMap<String, Vec<f64>>> = Mutex::new(BTreeMap::new());

fn timed(key: &str, iters: u64, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    let elapsed = start.elapsed();
    RECORDS
        .lock()
        .unwrap()
        .entry(key.to_string())
        .or_default()
        .push(elapsed.as_secs_f64() * 1e9 / iters as f64);
    elapsed
}

/// Paired ratios (baseline time / kernel time per round): median, first and third quartile,
/// under `key(name, baseline, size)`.
static PAIRED: Mutex<BTreeMap<String, (f64, f64, f64)>> = Mutex::new(BTreeMap::new());

/// Rounds of the paired measurement per size.
const PAIRED_ROUNDS: usize = 31;
const PAIRED_ROUNDS_LARGE: usize = 9;

/// Times `f` over `reps` runs, in ns per run.
fn ns_per_run(reps: usize, f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / reps as f64
}

/// The interleaved measurement behind the summary's ratios and the sweep. This machine's speed
/// drifts by up to 2x over seconds (a shared VM), so two medians taken a few seconds apart by
/// criterion do not make a trustworthy ratio. Here every round times the kernel and each
/// baseline back to back (about 2 ms each, the order reversed every other round). Returns the
/// ns per run of every round: the kernel's, and each baseline's.
fn interleaved(
    rounds: usize,
    kernel: &mut dyn FnMut(),
    baselines: &mut [(&'static str, &mut dyn FnMut())],
) -> (Vec<f64>, Vec<Vec<f64>>) {
    let reps_for = |f: &mut dyn FnMut()| {
        f(); // warm
        let t = ns_per_run(1, f);
        ((2e6 / t) as usize).clamp(1, 10_000)
    };
    let kernel_reps = reps_for(kernel);
    let reps: Vec<usize> = baselines.iter_mut().map(|(_, f)| reps_for(*f)).collect();
    let mut kernel_ns = Vec::with_capacity(rounds);
    let mut baseline_ns = vec![Vec::with_capacity(rounds); baselines.len()];
    for round in 0..rounds {
        let forward = round % 2 == 0;
        if forward {
            kernel_ns.push(ns_per_run(kernel_reps, kernel));
        }
        let mut order: Vec<usize> = (0..baselines.len()).collect();
        if !forward {
            order.reverse();
        }
        for i in order {
            baseline_ns[i].push(ns_per_run(reps[i], baselines[i].1));
        }
        if !forward {
            kernel_ns.push(ns_per_run(kernel_reps, kernel));
        }
    }
    (kernel_ns, baseline_ns)
}

/// Per round, the baseline's time over the kernel's: the kernel's speed-up.
fn round_ratios(baseline_ns: &[f64], kernel_ns: &[f64]) -> Vec<f64> {
    baseline_ns
        .iter()
        .zip(kernel_ns)
        .map(|(b, k)| b / k)
        .collect()
}

/// The paired ratios of one size: [`interleaved`] rounds, the ratio taken per round; the median
/// over the rounds, with its quartiles, goes to [`PAIRED`].
fn paired(
    name: &str,
    size: &str,
    rounds: usize,
    kernel: &mut dyn FnMut(),
    baselines: &mut [(&'static str, &mut dyn FnMut())],
) {
    let (kernel_ns, baseline_ns) = interleaved(rounds, kernel, baselines);
    let mut paired = PAIRED.lock().unwrap();
    for ((baseline, _), times) in baselines.iter().zip(baseline_ns) {
        let mut r = round_ratios(&times, &kernel_ns);
        let q = (
            median(&mut r),
            percentile(&mut r, 25.0),
            percentile(&mut r, 75.0),
        );
        paired.insert(key(name, baseline, size), q);
    }
}

/// The paired ratio of `baseline` for one row, as `median (q1–q3)`.
fn paired_ratio(name: &str, baseline: &str, size: &str) -> Option<String> {
    let paired = PAIRED.lock().unwrap();
    let &(m, q1, q3) = paired.get(&key(name, baseline, size))?;
    Some(format!("{m:.2} ({q1:.2}–{q3:.2})"))
}

/// The median ns per iteration of the last `samples` records of `key`.
fn median_ns(key: &str, samples: usize) -> Option<f64> {
    let records = RECORDS.lock().unwrap();
    let all = records.get(key)?;
    let mut last: Vec<f64> = all[all.len().saturating_sub(samples)..].to_vec();
    Some(median(&mut last))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

// ---------------------------------------------------------------------------------------------
// The throughput benches.

const SIZES: [(usize, &str); 3] = [
    (4 << 10, "4KiB"),
    (256 << 10, "256KiB"),
    (64 << 20, "64MiB"),
];
const SMALL_SAMPLES: usize = 50;
const LARGE_SAMPLES: usize = 10;

/// What the summary needs of one conversion at one size.
struct Row {
    name: &'static str,
    size: &'static str,
    elements: usize,
    traffic: usize,
    samples: usize,
    isas: Vec<Isa>,
    threaded: bool,
}

fn key(name: &str, variant: &str, size: &str) -> String {
    format!("{name}/{variant}/{size}")
}

fn bench_case<C: Case>(
    c: &mut Criterion,
    jit_auto: &Jit,
    jit1: &Jit,
    jit2: &Jit,
    large: bool,
    diag: bool,
    rows: &mut Vec<Row>,
) where
    C::D: std::fmt::Debug + PartialEq,
{
    let k_auto = jit_auto.compile(C::NAME).expect("compiles");
    let k1 = jit1.compile(C::NAME).expect("compiles");
    let k2 = jit2.compile(C::NAME).expect("compiles");
    let isas: Vec<Isa> = [Isa::Default, Isa::Avx2, Isa::Avx512]
        .into_iter()
        .filter(|isa| isa.available())
        .collect();
    let mut group = c.benchmark_group(C::NAME);
    for (seed, &(bytes, size)) in SIZES.iter().enumerate() {
        let big = bytes >= 64 << 20;
        if big && !large {
            continue;
        }
        // One thread: the default `Threads::Auto` below its threshold (what a user gets), and
        // `Threads::Exactly(1)` above it.
        let kernel = if bytes < PARALLEL_THRESHOLD {
            &k_auto
        } else {
            &k1
        };
        let elements = bytes / std::mem::size_of::<C::S>();
        let src = make_input::<C>(elements, 0x9e37_79b9_7f4a_7c15 ^ seed as u64);
        let mut dst = vec![C::D::default(); elements];
        let mut check = vec![C::D::default(); elements];

        // Correctness first: the kernel against the reference (up to 256 KiB: it is soft-float)
        // and every baseline against the kernel, bit for bit.
        check_kernel::<C>(kernel, &src, &mut dst, !big);
        if big {
            check_against("kernel-2t", C::NAME, &dst, &mut check, |out| {
                k2.run(&src, out).unwrap()
            });
        }
        for &isa in &isas {
            check_against(isa.name(), C::NAME, &dst, &mut check, |out| {
                isa.run::<C>(&src, out)
            });
        }

        // The same traffic as a copy.
        let traffic = std::mem::size_of_val(&src[..]) + std::mem::size_of_val(&dst[..]);
        let (copy_src, mut copy_dst) = copy_buffers(traffic);

        let samples = if big { LARGE_SAMPLES } else { SMALL_SAMPLES };
        group.sample_size(samples);
        group.sampling_mode(if big {
            SamplingMode::Flat
        } else {
            SamplingMode::Auto
        });
        group.throughput(Throughput::Elements(elements as u64));

        group.bench_function(BenchmarkId::new("kernel", size), |b| {
            let k = key(C::NAME, "kernel", size);
            b.iter_custom(|iters| {
                timed(&k, iters, || {
                    kernel
                        .run(black_box(&src[..]), black_box(&mut dst[..]))
                        .unwrap()
                })
            })
        });
        for &isa in &isas {
            group.bench_function(BenchmarkId::new(isa.name(), size), |b| {
                let k = key(C::NAME, isa.name(), size);
                b.iter_custom(|iters| {
                    timed(&k, iters, || {
                        isa.run::<C>(black_box(&src[..]), black_box(&mut check[..]))
                    })
                })
            });
        }
        group.bench_function(BenchmarkId::new("memcpy", size), |b| {
            let k = key(C::NAME, "memcpy", size);
            b.iter_custom(|iters| {
                timed(&k, iters, || {
                    black_box(&mut copy_dst[..]).copy_from_slice(black_box(&copy_src[..]))
                })
            })
        });
        if big {
            group.bench_function(BenchmarkId::new("kernel-2t", size), |b| {
                let k = key(C::NAME, "kernel-2t", size);
                b.iter_custom(|iters| {
                    timed(&k, iters, || {
                        k2.run(black_box(&src[..]), black_box(&mut dst[..]))
                            .unwrap()
                    })
                })
            });
            group.bench_function(BenchmarkId::new("memcpy-2t", size), |b| {
                let k = key(C::NAME, "memcpy-2t", size);
                b.iter_custom(|iters| {
                    timed(&k, iters, || {
                        memcpy_2t(black_box(&copy_src[..]), black_box(&mut copy_dst[..]))
                    })
                })
            });
        }
        #[cfg(target_arch = "x86_64")]
        if big && diag {
            let mut scratch = vec![C::D::default(); 4096];
            check_against("kernel-nt", C::NAME, &dst, &mut check, |out| {
                kernel_nt(&k_auto, &src, out, &mut scratch)
            });
            group.bench_function(BenchmarkId::new("kernel-nt", size), |b| {
                let k = key(C::NAME, "kernel-nt", size);
                b.iter_custom(|iters| {
                    timed(&k, iters, || {
                        kernel_nt(
                            &k_auto,
                            black_box(&src[..]),
                            black_box(&mut dst[..]),
                            &mut scratch,
                        )
                    })
                })
            });
            group.bench_function(BenchmarkId::new("copy-regular-stores", size), |b| {
                let k = key(C::NAME, "copy-regular-stores", size);
                b.iter_custom(|iters| {
                    timed(&k, iters, || {
                        copy_regular_stores(black_box(&copy_src[..]), black_box(&mut copy_dst[..]))
                    })
                })
            });
        }
        if enabled("CLCONV_BENCH_PAIRED") {
            let rounds = if big {
                PAIRED_ROUNDS_LARGE
            } else {
                PAIRED_ROUNDS
            };
            let mut outs: Vec<Vec<C::D>> = isas
                .iter()
                .map(|_| vec![C::D::default(); elements])
                .collect();
            let mut kernel_run = || {
                kernel
                    .run(black_box(&src[..]), black_box(&mut dst[..]))
                    .unwrap()
            };
            let src_ref = &src[..];
            let mut isa_runs: Vec<Box<dyn FnMut() + '_>> = isas
                .iter()
                .zip(outs.iter_mut())
                .map(|(&isa, out)| -> Box<dyn FnMut() + '_> {
                    Box::new(move || isa.run::<C>(black_box(src_ref), black_box(&mut out[..])))
                })
                .collect();
            let mut copy =
                || black_box(&mut copy_dst[..]).copy_from_slice(black_box(&copy_src[..]));
            let mut baselines: Vec<(&'static str, &mut dyn FnMut())> = isas
                .iter()
                .zip(isa_runs.iter_mut())
                .map(|(isa, f)| (isa.name(), &mut **f as &mut dyn FnMut()))
                .collect();
            baselines.push(("memcpy", &mut copy));
            paired(C::NAME, size, rounds, &mut kernel_run, &mut baselines);
            if big {
                let mut kernel_2t = || {
                    k2.run(black_box(&src[..]), black_box(&mut dst[..]))
                        .unwrap()
                };
                let mut copy_2t =
                    || memcpy_2t(black_box(&copy_src[..]), black_box(&mut copy_dst[..]));
                paired(
                    C::NAME,
                    "64MiB-2t",
                    rounds,
                    &mut kernel_2t,
                    &mut [("memcpy-2t", &mut copy_2t)],
                );
            }
        }
        rows.push(Row {
            name: C::NAME,
            size,
            elements,
            traffic,
            samples,
            isas: isas.clone(),
            threaded: big,
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// The sweep (CLCONV_BENCH_SWEEP=1): throughput against buffer size, for the README's plot.

/// The sweep's source sizes: 1 KiB to 64 MiB, doubling (log2 of the bytes).
const SWEEP_SIZES: std::ops::RangeInclusive<u32> = 10..=26;

/// The sweep goes over all its conversions and sizes this many times, with this many
/// [`interleaved`] rounds per size each time, and takes its medians over all of a size's rounds:
/// a burst of load on this shared machine (a neighbour on the other hyperthread can halve the
/// speed for seconds) then spoils a fifth of a size's rounds, not all of them.
const SWEEP_PASSES: usize = 5;
const SWEEP_ROUNDS_PER_PASS: usize = 21;

/// The sweep's series, in the CSV's order: the kernel, then its baselines.
const SWEEP_SERIES: [&str; 3] = ["kernel", "rust-default", "memcpy"];

/// Where the sweep writes its CSV (`scripts/plot_throughput.py` reads it).
const SWEEP_CSV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/bench-sweep.csv");

/// One conversion at one size in the sweep: all its rounds.
struct SweepRounds {
    conversion: &'static str,
    source_bytes: usize,
    elements: usize,
    /// Bytes read plus written by one run (memcpy: the same).
    traffic: usize,
    /// The ns per run of every round, per series of [`SWEEP_SERIES`].
    ns: [Vec<f64>; 3],
    /// The highest 1-minute load average read after this size's passes.
    load: f64,
}

impl SweepRounds {
    fn median_ns(&self, series: usize) -> f64 {
        median(&mut self.ns[series].clone())
    }

    /// The median over the rounds of the series' time over the kernel's: above 1, the kernel
    /// is faster.
    fn kernel_speedup(&self, series: usize) -> f64 {
        median(&mut round_ratios(&self.ns[series], &self.ns[0]))
    }
}

/// One pass of the sweep over one conversion. At each size, after the same bit-for-bit checks
/// as the main bench (the kernel against the reference interpreter up to 256 KiB, the Rust loop
/// against the kernel): [`interleaved`] rounds of the kernel on one thread, the default-target
/// Rust loop and memcpy of the same bytes, added to that size's entry in `all`.
fn sweep_case<C: Case>(jit1: &Jit, all: &mut Vec<SweepRounds>)
where
    C::D: std::fmt::Debug,
{
    let kernel = jit1.compile(C::NAME).expect("compiles");
    for log2 in SWEEP_SIZES {
        let bytes = 1usize << log2;
        let elements = bytes / std::mem::size_of::<C::S>();
        let src = make_input::<C>(elements, 0x9e37_79b9_7f4a_7c15 ^ u64::from(log2));
        let mut dst = vec![C::D::default(); elements];
        let mut check = vec![C::D::default(); elements];
        check_kernel::<C>(&kernel, &src, &mut dst, bytes <= 256 << 10);
        check_against(Isa::Default.name(), C::NAME, &dst, &mut check, |out| {
            rust_default::<C>(&src, out)
        });
        let traffic = std::mem::size_of_val(&src[..]) + std::mem::size_of_val(&dst[..]);
        let (copy_src, mut copy_dst) = copy_buffers(traffic);

        let mut kernel_run = || {
            kernel
                .run(black_box(&src[..]), black_box(&mut dst[..]))
                .unwrap()
        };
        let mut rust = || rust_default::<C>(black_box(&src[..]), black_box(&mut check[..]));
        let mut copy = || black_box(&mut copy_dst[..]).copy_from_slice(black_box(&copy_src[..]));
        let (kernel_ns, baseline_ns) = interleaved(
            SWEEP_ROUNDS_PER_PASS,
            &mut kernel_run,
            &mut [(SWEEP_SERIES[1], &mut rust), (SWEEP_SERIES[2], &mut copy)],
        );

        let i = match all
            .iter()
            .position(|r| r.conversion == C::NAME && r.source_bytes == bytes)
        {
            Some(i) => i,
            None => {
                all.push(SweepRounds {
                    conversion: C::NAME,
                    source_bytes: bytes,
                    elements,
                    traffic,
                    ns: Default::default(),
                    load: 0.0,
                });
                all.len() - 1
            }
        };
        let entry = &mut all[i];
        for (rounds, new) in entry
            .ns
            .iter_mut()
            .zip([kernel_ns].into_iter().chain(baseline_ns))
        {
            rounds.extend(new);
        }
        let load = loadavg().split(' ').next().and_then(|l| l.parse().ok());
        entry.load = entry.load.max(load.unwrap_or(f64::NAN));
    }
}

/// `1 KiB`, `64 MiB`.
fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// The sweep: three representative conversions (float -> uchar and float -> int, saturated
/// and rounded to nearest even; ulong -> float rounded down, a directed rounding from 64-bit
/// integers), written to [`SWEEP_CSV`] and printed as a Markdown table.
fn sweep(jit1: &Jit) {
    let load_before = loadavg();
    let started = Instant::now();
    let mut all = Vec::new();
    for pass in 1..=SWEEP_PASSES {
        sweep_case::<UCharSatRteFromFloat>(jit1, &mut all);
        sweep_case::<IntSatRteFromFloat>(jit1, &mut all);
        sweep_case::<FloatRtnFromULong>(jit1, &mut all);
        eprintln!(
            "sweep: pass {pass} of {SWEEP_PASSES} done after {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }

    let mut csv = String::from(
        "conversion,source_bytes,elements,bytes_read_written,series,rounds,median_ns,\
         elements_per_ns,gb_per_s,kernel_speedup,load_1min_max\n",
    );
    let mut table = String::from(
        "| conversion | source | kernel elem/ns | rust-default elem/ns | memcpy elem/ns | kernel GB/s | rust-default GB/s | memcpy GB/s | ×rust-default | ×memcpy |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &all {
        let ns = [0, 1, 2].map(|series| r.median_ns(series));
        let per_ns = |amount: usize| ns.map(|t| amount as f64 / t);
        let (elements_per_ns, gb_per_s) = (per_ns(r.elements), per_ns(r.traffic));
        for (i, series) in SWEEP_SERIES.iter().enumerate() {
            csv += &format!(
                "\"{}\",{},{},{},{series},{},{:.1},{:.5},{:.4},{:.4},{:.2}\n",
                r.conversion,
                r.source_bytes,
                r.elements,
                r.traffic,
                r.ns[i].len(),
                ns[i],
                elements_per_ns[i],
                gb_per_s[i],
                r.kernel_speedup(i),
                r.load,
            );
        }
        table += &format!(
            "| `{}` | {} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            r.conversion,
            size_label(r.source_bytes),
            elements_per_ns[0],
            elements_per_ns[1],
            elements_per_ns[2],
            gb_per_s[0],
            gb_per_s[1],
            gb_per_s[2],
            r.kernel_speedup(1),
            r.kernel_speedup(2),
        );
    }
    let path = std::path::Path::new(SWEEP_CSV);
    std::fs::create_dir_all(path.parent().unwrap()).expect("creates target/");
    std::fs::write(path, csv).expect("writes the sweep's CSV");
    println!(
        "\n## clconv throughput sweep\n\nMachine: {}, {} logical cores; kernel on one thread; medians \
         of {} interleaved rounds ({SWEEP_PASSES} passes); GB/s of bytes read plus written; ×: the \
         median per-round ratio, above 1 = kernel faster. Load average (1/5/15 min) before: \
         {load_before}; at the end: {}. Total {:.0} s.\n\n{table}\nWrote {SWEEP_CSV}\n",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        SWEEP_PASSES * SWEEP_ROUNDS_PER_PASS,
        loadavg(),
        started.elapsed().as_secs_f64(),
    );
}

// ---------------------------------------------------------------------------------------------
// Compile latency.

const NAMES: [&str; 10] = [
    IntSatRteFromFloat::NAME,
    UCharSatRteFromFloat::NAME,
    IntFromFloat::NAME,
    FloatRtpFromInt::NAME,
    FloatRtzFromDouble::NAME,
    DoubleFromLong::NAME,
    FloatFromUInt::NAME,
    UCharSatFromShort::NAME,
    CharFromInt::NAME,
    FloatRtnFromULong::NAME,
];

/// A host ISA like `Target::Host.isa()` (opt_level speed, not PIC) with extra shared settings:
/// to show what Cranelift's own settings cost.
fn host_isa_with(extra: &[(&str, &str)]) -> cranelift_codegen::isa::OwnedTargetIsa {
    use cranelift_codegen::settings::{self, Configurable};
    let mut shared = settings::builder();
    for &(name, value) in [
        ("opt_level", "speed"),
        ("use_colocated_libcalls", "false"),
        ("is_pic", "false"),
    ]
    .iter()
    .chain(extra)
    {
        shared.set(name, value).unwrap();
    }
    cranelift_native::builder()
        .unwrap()
        .finish(settings::Flags::new(shared))
        .unwrap()
}

/// Cranelift's `Context::compile` of `func` for `isa`, in µs, in a `Context` kept between
/// calls (as the JIT keeps one per thread).
fn codegen_us(
    func: &cranelift_codegen::ir::Function,
    isa: &dyn cranelift_codegen::isa::TargetIsa,
) -> f64 {
    thread_local! {
        static CTX: std::cell::RefCell<cranelift_codegen::Context> =
            std::cell::RefCell::new(cranelift_codegen::Context::new());
    }
    CTX.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        ctx.clear();
        ctx.func = func.clone();
        let mut ctrl = cranelift_codegen::control::ControlPlane::default();
        let t = Instant::now();
        black_box(ctx.compile(isa, &mut ctrl).unwrap().code_buffer().len());
        t.elapsed().as_secs_f64() * 1e6
    })
}

/// `Jit::compile` of `name` on a fresh `Jit` (created outside the timing, so nothing is cached)
/// with `tiering`: the µs it took, the kernel and its JIT.
fn compile_fresh(name: &str, tiering: Tiering) -> (f64, clconv::jit::Kernel, Jit) {
    let jit = Jit::new().unwrap();
    jit.set_tiering(tiering);
    let t = Instant::now();
    let k = jit.compile(black_box(name)).unwrap();
    (t.elapsed().as_secs_f64() * 1e6, k, jit)
}

/// One row of the quick-tier speed table: `name` on 256 KiB of source through a quick-only and
/// an optimised-only JIT, alternating, medians of 101 runs each.
fn quick_speed(name: &str) -> String {
    let request = Request::parse(name, Extensions::default()).unwrap();
    let (src_per, dst_per) = (
        clconv::buffer::bytes_per_vector(request.src(), Layout::Packed),
        clconv::buffer::bytes_per_vector(request.dst(), Layout::Packed),
    );
    let vectors = (256 << 10) / src_per;
    let src: Vec<u8> = (0..vectors * src_per).map(|i| (i * 7 + 3) as u8).collect();
    let mut dst = vec![0u8; vectors * dst_per];
    let kernels: Vec<_> = [Tiering::QuickOnly, Tiering::OptimisedOnly]
        .into_iter()
        .map(|tiering| {
            let jit = Jit::new().unwrap();
            jit.set_tiering(tiering);
            jit.set_threads(Threads::Exactly(1));
            jit.compile(name).unwrap()
        })
        .collect();
    let mut times = [Vec::new(), Vec::new()];
    for _ in 0..101 {
        for (k, t) in kernels.iter().zip(times.iter_mut()) {
            let start = Instant::now();
            k.run_bytes(Layout::Packed, black_box(&src), &mut dst)
                .unwrap();
            t.push(start.elapsed().as_secs_f64());
        }
    }
    let elements = (vectors * request.src().lanes()) as f64;
    let [q, o] = times.map(|mut t| elements / median(&mut t) / 1e9);
    format!("| `{name}` | {q:.2} | {o:.2} | {:.2} |\n", q / o)
}

/// Per kernel, `Jit::compile` of its name on a fresh `Jit` (created outside the timing, so
/// nothing is cached): parse, lower, Cranelift compile, install, make executable. Samples go
/// round robin over the ten kernels (a compiler compiles different kernels one after another),
/// each mode in a pass of its own so that one mode's compiles do not evict the other's from the
/// caches: tiered (as `Jit::new` compiles), then optimised only. A third pass times the two
/// stages the bench can time on their own, `kernel::build` (table lookup and lowering to
/// Cranelift IR) and Cranelift's `Context::compile` of that IR with the quick settings.
fn compile_latency(out: &mut String) {
    const ROUNDS: usize = 200;
    let isa = Target::Host.isa_with_verifier(false).expect("host ISA");
    let with_verifier = Target::Host.isa().expect("host ISA");
    let single_pass = host_isa_with(&[
        ("enable_verifier", "false"),
        ("regalloc_algorithm", "single_pass"),
    ]);
    // First compiles pay for one-time initialisation (tables, lazy statics): not a latency.
    for name in NAMES {
        Jit::new().unwrap().compile(name).unwrap();
    }
    let quick_isa = Target::Host.quick_isa().expect("host ISA");
    let requests: Vec<Request> = NAMES
        .iter()
        .map(|name| {
            let request = Request::parse(name, Extensions::default()).unwrap();
            clconv::jit::shared_kernel(&request, Layout::Packed).0
        })
        .collect();
    let mut total = vec![Vec::new(); NAMES.len()];
    let mut total_after_run = vec![Vec::new(); NAMES.len()];
    let mut total_opt = vec![Vec::new(); NAMES.len()];
    let (mut build, mut codegen, mut codegen_opt) = (
        vec![Vec::new(); NAMES.len()],
        vec![Vec::new(); NAMES.len()],
        vec![Vec::new(); NAMES.len()],
    );
    let mut tiers = vec![None; NAMES.len()];
    for _ in 0..ROUNDS {
        for (i, name) in NAMES.iter().enumerate() {
            // Tiered (the default): the quick kernel; its optimised compile waits for its first
            // run, which never comes here.
            let (us, k, _jit) = compile_fresh(name, Tiering::Tiered);
            total[i].push(us);
            tiers[i] = k.tier();
        }
    }
    // Tiered, each kernel run once after its compile (the optimised compile starts then) and
    // its tier-up waited for outside the timing: the next compile comes after the background
    // thread's work, as in a program that compiles and runs kernels one after another.
    let src = vec![0u8; 4096];
    let mut dst = vec![0u8; 8192];
    for _ in 0..ROUNDS {
        for (i, name) in NAMES.iter().enumerate() {
            let (us, k, jit) = compile_fresh(name, Tiering::Tiered);
            total_after_run[i].push(us);
            let request = k.request().unwrap();
            let (src_per, dst_per) = (
                clconv::buffer::bytes_per_vector(request.src(), Layout::Packed),
                clconv::buffer::bytes_per_vector(request.dst(), Layout::Packed),
            );
            let n = src.len() / src_per;
            k.run_bytes(Layout::Packed, &src[..n * src_per], &mut dst[..n * dst_per])
                .unwrap();
            jit.finish_tier_up();
        }
    }
    for _ in 0..ROUNDS {
        for (i, name) in NAMES.iter().enumerate() {
            total_opt[i].push(compile_fresh(name, Tiering::OptimisedOnly).0);
        }
    }
    for _ in 0..ROUNDS {
        for (i, request) in requests.iter().enumerate() {
            let t = Instant::now();
            let built = kernel::build_tier(
                request,
                Layout::Packed,
                Rounding::Rte,
                &*quick_isa,
                0,
                kernel::Tier::Quick,
            )
            .unwrap();
            build[i].push(t.elapsed().as_secs_f64() * 1e6);
            codegen[i].push(codegen_us(&built.func, &*quick_isa));
        }
    }
    // The optimised compiles in a pass of their own: interleaved with the quick ones above,
    // they evicted Cranelift's quick-path code and data and made the quick stages look slower
    // than the whole tiered compile.
    for _ in 0..ROUNDS {
        for (i, request) in requests.iter().enumerate() {
            let built = kernel::build(request, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
            codegen_opt[i].push(codegen_us(&built.func, &*isa));
        }
    }
    let mut pooled = Vec::new();
    let mut pooled_after_run = Vec::new();
    let mut pooled_opt = Vec::new();
    let mut lines = String::new();
    let mut medians = Vec::new();
    let mut speed_lines = String::new();
    for (i, name) in NAMES.iter().enumerate() {
        pooled.extend_from_slice(&total[i]);
        pooled_after_run.extend_from_slice(&total_after_run[i]);
        pooled_opt.extend_from_slice(&total_opt[i]);
        let m = median(&mut total[i]);
        medians.push(m);
        let (b, cg) = (median(&mut build[i]), median(&mut codegen[i]));
        lines += &format!(
            "| `{name}` | {} | {m:.1} | {:.1} | {b:.1} | {cg:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |\n",
            tiers[i].map_or("-", |t| t.name()),
            percentile(&mut total[i], 90.0),
            m - b - cg,
            median(&mut total_after_run[i]),
            median(&mut total_opt[i]),
            percentile(&mut total_opt[i], 90.0),
            median(&mut codegen_opt[i]),
        );
        speed_lines += &quick_speed(name);
    }
    *out += &format!(
        "\n### Compile latency per kernel (µs; {ROUNDS} fresh `Jit`s per kernel and mode, round robin over the ten)\n\n\
         `Jit::compile` as `Jit::new` sets it up (tiered: the quick kernel, or the optimised one \
         for the kernels without a quick form), with the quick tier's stages timed apart \
         (medians): `kernel::build` (table lookup, lowering to IR), Cranelift's \
         `Context::compile` with the quick settings (both timed in passes of their own, \
         which repeat the same ten compiles and so run on warmer caches than `Jit::compile` \
         on a fresh `Jit`), the rest (parse, install, make executable, and that difference \
         in cache warmth); the same compiles when each kernel is run once after its compile and its \
         tier-up (which starts at that run) is waited for before the next (\"after a run\"); \
         then `Jit::compile` with `Tiering::OptimisedOnly`, and Cranelift's compile of the \
         optimised IR alone.\n\n\
         | kernel | tier | median | p90 | build (quick IR) | Cranelift compile (quick) | rest | after a run: median | optimised only: median | p90 | Cranelift compile (optimised) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n{lines}\n"
    );
    *out += &format!(
        "Tiered, over all {} compiles of the ten: median {:.1} µs, p90 {:.1} µs; the median of the ten medians {:.1} µs, the largest {:.1} µs. After a run: median {:.1} µs, p90 {:.1} µs. Optimised only: median {:.1} µs, p90 {:.1} µs.\n",
        pooled.len(),
        median(&mut pooled),
        percentile(&mut pooled, 90.0),
        median(&mut medians),
        medians.iter().cloned().fold(0.0, f64::max),
        median(&mut pooled_after_run),
        percentile(&mut pooled_after_run, 90.0),
        median(&mut pooled_opt),
        percentile(&mut pooled_opt, 90.0),
    );
    *out += &format!(
        "\n### The quick tier's speed (256 KiB of source, one thread, paired medians of 101)\n\n\
         | kernel | quick, elements/ns | optimised, elements/ns | quick / optimised |\n|---|---|---|---|\n{speed_lines}"
    );

    // The whole matrix into one Jit, by name (parse included), three times each.
    let all = Request::all(Extensions::with_fp16());
    let conversions: Vec<String> = all
        .iter()
        .filter(|r| matches!(r, Request::Convert(_)))
        .map(|r| r.to_string())
        .collect();
    let every: Vec<String> = all.iter().map(|r| r.to_string()).collect();
    *out += "\n### Compiling the whole matrix into one `Jit` (fresh each time)\n\n\
             By name, one `Jit::compile` after another (parse included; widths share their \
             conversion's kernel, so 6,270 conversions are 1,045 compilations; tiered, so the \
             background thread compiles optimised kernels meanwhile), and with \
             `Jit::compile_many` (Cranelift on one worker thread per core, one finalize).\n\n\
             | requests | run 1 | run 2 | run 3 | per request (median run) |\n|---|---|---|---|---|\n";
    for (what, names) in [
        ("conversions", &conversions),
        ("conversions and `as_`", &every),
    ] {
        let mut runs = Vec::new();
        let mut kernels_compiled = 0;
        for _ in 0..3 {
            let jit =
                Jit::with_options(X64Flags::Host, Extensions::with_fp16(), Rounding::Rte).unwrap();
            let t = Instant::now();
            for name in names.iter() {
                jit.compile(name).unwrap();
            }
            runs.push(t.elapsed().as_secs_f64());
            kernels_compiled = jit.cached_kernels();
        }
        let mut sorted = runs.clone();
        let m = median(&mut sorted);
        *out += &format!(
            "| {} {what} ({kernels_compiled} kernels compiled) | {:.3} s | {:.3} s | {:.3} s | {:.1} µs |\n",
            names.len(),
            runs[0],
            runs[1],
            runs[2],
            m * 1e6 / names.len() as f64
        );
    }

    {
        let conversion_requests: Vec<Request> = all
            .iter()
            .filter(|r| matches!(r, Request::Convert(_)))
            .copied()
            .collect();
        let mut runs = Vec::new();
        for _ in 0..3 {
            let jit =
                Jit::with_options(X64Flags::Host, Extensions::with_fp16(), Rounding::Rte).unwrap();
            let t = Instant::now();
            let kernels = jit.compile_many(&conversion_requests).unwrap();
            runs.push(t.elapsed().as_secs_f64());
            assert_eq!(kernels.len(), conversion_requests.len());
        }
        let mut sorted = runs.clone();
        let m = median(&mut sorted);
        *out += &format!(
            "| {} conversions, `compile_many` on {} threads | {:.3} s | {:.3} s | {:.3} s | {:.1} µs |\n",
            conversion_requests.len(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            runs[0],
            runs[1],
            runs[2],
            m * 1e6 / conversion_requests.len() as f64
        );
    }

    // What the verifier costs over the whole matrix: build + Context::compile of every
    // conversion, with and without it (no JIT module, so no define/finalize).
    // Per recipe: how many conversions use it and how long they take (as clconv configures
    // Cranelift), to show where the matrix's time goes.
    let mut by_recipe: BTreeMap<&'static str, (usize, f64)> = BTreeMap::new();
    let mut stage = |isa: &dyn cranelift_codegen::isa::TargetIsa, record: bool| {
        let t = Instant::now();
        for r in all.iter().filter(|r| matches!(r, Request::Convert(_))) {
            let t1 = Instant::now();
            let built = kernel::build(r, Layout::Packed, Rounding::Rte, isa, 0).unwrap();
            let recipe = built.row.recipe.name;
            let mut ctx = cranelift_codegen::Context::for_function(built.func);
            let mut ctrl = cranelift_codegen::control::ControlPlane::default();
            black_box(ctx.compile(isa, &mut ctrl).unwrap().code_buffer().len());
            if record {
                let e = by_recipe.entry(recipe).or_default();
                e.0 += 1;
                e.1 += t1.elapsed().as_secs_f64();
            }
        }
        t.elapsed().as_secs_f64()
    };
    let without_v = stage(&*isa, true);
    let with_v = stage(&*with_verifier, false);
    let sp = stage(&*single_pass, false);
    // How many different kernel bodies the conversions need: in the packed layout a kernel
    // depends on its request only through the table key and the lane count (`vectors × lanes`).
    let keys: std::collections::HashSet<_> = all
        .iter()
        .filter(|r| matches!(r, Request::Convert(_)))
        .map(|r| kernel::key_of(r, Rounding::Rte))
        .collect();
    *out += &format!(
        "\nThe {} conversions through `kernel::build` + `Context::compile` only (no JIT module): \
         {without_v:.3} s as the JIT configures Cranelift (verifier off), {with_v:.3} s with the \
         verifier on, {sp:.3} s with it off and the single-pass register allocator. They have {} distinct table \
         keys (class, element types, `_sat`, effective rounding).\n",
        conversions.len(),
        keys.len()
    );
    *out += "\n| recipe (host table) | conversions | total s | µs each |\n|---|---|---|---|\n";
    for (recipe, (n, secs)) in &by_recipe {
        *out += &format!(
            "| `{recipe}` | {n} | {secs:.3} | {:.0} |\n",
            secs * 1e6 / *n as f64
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The summary.

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.into())
}

fn throughput_summary(rows: &[Row]) -> String {
    let mut out = String::from(
        "### Throughput (criterion medians; ratios are kernel throughput / baseline throughput, above 1 = kernel faster: \
         the median of per-round ratios from the interleaved measurement, with the quartiles in parentheses)\n\n\
         | conversion | size | kernel ns | elem/ns | GB/s r+w | ×rust-default | ×rust-avx2 | ×rust-avx512 | ×memcpy | 2t: kernel GB/s | 2t: ×memcpy-2t |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let get = |variant: &str| median_ns(&key(row.name, variant, row.size), row.samples);
        let Some(kernel) = get("kernel") else {
            continue; // filtered out
        };
        let ratio = |variant: &str| {
            if let Some(r) = paired_ratio(row.name, variant, row.size) {
                return r;
            }
            match get(variant) {
                Some(base) => format!("{:.2}", base / kernel),
                None => "–".into(),
            }
        };
        let isa_ratio = |isa: Isa| {
            if row.isas.contains(&isa) {
                ratio(isa.name())
            } else {
                "n/a".into()
            }
        };
        let (t2, r2) = match (row.threaded, get("kernel-2t")) {
            (true, Some(k2)) => (
                format!("{:.1}", row.traffic as f64 / k2),
                paired_ratio(row.name, "memcpy-2t", "64MiB-2t")
                    .unwrap_or_else(|| ratio_of(get("memcpy-2t"), k2)),
            ),
            _ => ("".into(), "".into()),
        };
        out += &format!(
            "| `{}` | {} | {:.0} | {:.3} | {:.1} | {} | {} | {} | {} | {t2} | {r2} |\n",
            row.name,
            row.size,
            kernel,
            row.elements as f64 / kernel,
            row.traffic as f64 / kernel,
            isa_ratio(Isa::Default),
            isa_ratio(Isa::Avx2),
            isa_ratio(Isa::Avx512),
            ratio("memcpy"),
        );
    }
    out += "\n### Baselines (medians)\n\n\
            | conversion | size | rust-default elem/ns | rust-avx2 elem/ns | rust-avx512 elem/ns | memcpy GB/s r+w | memcpy-2t GB/s r+w |\n\
            |---|---|---|---|---|---|---|\n";
    for row in rows {
        let get = |variant: &str| median_ns(&key(row.name, variant, row.size), row.samples);
        if get("kernel").is_none() {
            continue;
        }
        let elem = |variant: &str| {
            get(variant).map_or("–".into(), |t| format!("{:.3}", row.elements as f64 / t))
        };
        let gbs = |variant: &str| {
            get(variant).map_or("".into(), |t| format!("{:.1}", row.traffic as f64 / t))
        };
        out += &format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            row.name,
            row.size,
            elem("rust-default"),
            elem("rust-avx2"),
            elem("rust-avx512"),
            gbs("memcpy"),
            gbs("memcpy-2t"),
        );
    }
    out
}

/// The diagnostics (CLCONV_BENCH_DIAG=1), where they ran.
fn diagnostics_summary(rows: &[Row]) -> String {
    let mut out = String::from(
        "\n### Diagnostics at 64 MiB, one thread (GB/s of bytes read plus written)\n\n\
         `copy-regular-stores`: the memcpy traffic copied with ordinary 16-byte stores (the kernels' \
         store kind; glibc's memcpy streams above ~15 MiB). `kernel-nt`: the kernel on 4096-element \
         chunks into a scratch buffer, each streamed to the destination with `movntdq`.\n\n\
         | conversion | kernel | memcpy | copy-regular-stores | kernel-nt | kernel-nt ×memcpy |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut any = false;
    for row in rows.iter().filter(|r| r.threaded) {
        let get = |variant: &str| median_ns(&key(row.name, variant, row.size), row.samples);
        let (Some(kernel), Some(nt)) = (get("kernel"), get("kernel-nt")) else {
            continue;
        };
        any = true;
        let gbs =
            |t: Option<f64>| t.map_or("–".into(), |t| format!("{:.1}", row.traffic as f64 / t));
        out += &format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            row.name,
            gbs(Some(kernel)),
            gbs(get("memcpy")),
            gbs(get("copy-regular-stores")),
            gbs(Some(nt)),
            ratio_of(get("memcpy"), nt),
        );
    }
    if any {
        out
    } else {
        String::new()
    }
}

fn ratio_of(base: Option<f64>, kernel: f64) -> String {
    base.map_or("–".into(), |b| format!("{:.2}", b / kernel))
}

/// An on-by-default switch: off when the variable is `0`.
fn enabled(var: &str) -> bool {
    std::env::var(var).map_or(true, |v| v != "0")
}

/// An off-by-default switch: on when the variable is `1`.
fn opted_in(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

fn main() {
    let large = enabled("CLCONV_BENCH_LARGE");
    let diag = opted_in("CLCONV_BENCH_DIAG");
    let load_before = loadavg();
    let started = Instant::now();

    // Throughput is the optimised tier's (the code a tiered JIT runs after its first few
    // hundred microseconds); the quick tier's speed is in the compile section.
    let jit_auto = Jit::new().expect("host JIT");
    let jit1 = Jit::new().expect("host JIT");
    jit1.set_threads(Threads::Exactly(1));
    let jit2 = Jit::new().expect("host JIT");
    jit2.set_threads(Threads::Exactly(2));
    for jit in [&jit_auto, &jit1, &jit2] {
        jit.set_tiering(Tiering::OptimisedOnly);
    }
    if opted_in("CLCONV_BENCH_SWEEP") {
        sweep(&jit1);
        return;
    }

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .configure_from_args();

    let mut rows = Vec::new();
    if enabled("CLCONV_BENCH_THROUGHPUT") {
        bench_case::<IntSatRteFromFloat>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<UCharSatRteFromFloat>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<IntFromFloat>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<FloatRtpFromInt>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<FloatRtzFromDouble>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<DoubleFromLong>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<FloatFromUInt>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<UCharSatFromShort>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<CharFromInt>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<FloatRtnFromULong>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<WgslIntFromFloat>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<PtxLongFromDouble>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
        bench_case::<PtxUnitFloatFromDouble>(
            &mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows,
        );
        bench_case::<HlslF16ToF32>(&mut c, &jit_auto, &jit1, &jit2, large, diag, &mut rows);
    }
    c.final_summary();

    let load_after_throughput = loadavg();
    let mut summary = throughput_summary(&rows);
    summary += &diagnostics_summary(&rows);
    if enabled("CLCONV_BENCH_COMPILE") {
        compile_latency(&mut summary);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "\n## clconv benchmark summary\n\nMachine: {}, {cores} logical cores. Load average (1/5/15 min) \
         before: {load_before}; after the throughput benches: {load_after_throughput}; at the end: {}. \
         Total {:.0} s.\n\n{summary}",
        cpu_model(),
        loadavg(),
        started.elapsed().as_secs_f64(),
    );
}
