//! Correctly rounded arithmetic (`clconv::arith`, `clconv::lower::rounded_arith`) checked bit for
//! bit against the reference (`clconv::reference::arith`), NaN results compared as a class (and,
//! separately, the directed modes' NaN bits against rte's).
//!
//! What the CI part covers, for each of add, sub, mul, div, sqrt, fma, on float and double, in
//! each of rte, rtz, rtp, rtn, through four kernels (scalar `op(float)`, the F32X4/F64X2 kernel
//! `op(float4)`/`op(double2)`, and `op(float3)` packed, which mixes both, and aligned), on the
//! host flag set (FMA instructions) and on `X64Flags::Sse41` (no FMA: libm calls) — per
//! operation and type about 305,000 operand tuples (95,000 for fma, 190,000 for sqrt), each run
//! 16 times (4 modes x 4 kernels), on each flag set:
//! - the special values and their neighbours (±0, ±min subnormal, its successor, ±max
//!   subnormal, ±FLT_MIN/DBL_MIN and its neighbours, ±1 and its neighbours, 1.5, 2, 3, 0.1,
//!   ±MAX and its predecessor, ±inf, quiet and signalling NaNs of both signs): every pair, and
//!   for fma every triple of a 28-value subset (21,952 triples);
//! - 10,000 random bit patterns (every operand uniform over all 2^32 or 2^64 patterns), and
//!   5,000 random values in each of 3 or 4 ranges where the hard cases live (exponents around the
//!   subnormal boundary, near overflow, around 1, and for products around `emin/2` and
//!   `emax/2`);
//! - structured sweeps: all pairs from grids of 128 values (64 consecutive floats around a
//!   center, both signs) around 1, 2, FLT_MIN, the smallest subnormals, MAX, `2^(emax/2)` and
//!   `2^(emin/2)`, and mixed pairs of those grids (subnormal boundary against 1 and 2, overflow
//!   against 1/2); for fma, products from those grids with addends that cancel them exactly or
//!   nearly (`c = -RN(ab) + j ulp`, `|j| <= 2`).
//!
//! Before the sweeps, tables of hand-computed cases check the rules one by one (rtz overflow
//! gives MAX, `x - x` is -0 under rtn, subnormal results, exact results, infinities, fma
//! cancellation, ...) on the reference and on the kernels. Further tests: NaN bits equal across
//! modes, the libm `fma` call without FMA, the static mode, widths 2 to 16 and unaligned buffers,
//! the builder API in a user's function, the fma expansion method on float, typed errors, and
//! the command line. `long_sweep` (ignored) runs the sweeps with 50 times the random inputs and
//! grids 4 times as wide: `cargo test --release --test rounded_arith -- --ignored`.
#![cfg(feature = "jit")]

use clconv::arith::{ArithOp, ArithRequest, FloatType};
use clconv::arith_kernel::DirectedArith;
use clconv::jit::{Jit, X64Flags};
use clconv::reference::arith::{element, is_nan, same_result};
use clconv::{Extensions, Layout, Rounding, Width};

/// The flag sets the kernels run on: the host's and, on x86-64, SSE4.1 (no FMA: libm calls).
/// Other hosts have only their own.
fn flag_sets() -> Vec<X64Flags> {
    if cfg!(target_arch = "x86_64") {
        vec![X64Flags::Host, X64Flags::Sse41]
    } else {
        vec![X64Flags::Host]
    }
}

#[path = "common/counted_loop.rs"]
mod counted_loop;

#[path = "common/define.rs"]
mod define;
use define::define_function;

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Bit-level facts about a type.
#[derive(Clone, Copy)]
struct Fmt(FloatType);

impl Fmt {
    fn sign(self) -> u64 {
        1 << (self.0.bits() - 1)
    }
    fn mant(self) -> u32 {
        self.0.precision() - 1
    }
    fn bias(self) -> i64 {
        (1 << (self.0.bits() - self.mant() - 2)) - 1
    }
    fn mask(self) -> u64 {
        if self.0.bits() == 64 {
            u64::MAX
        } else {
            (1 << self.0.bits()) - 1
        }
    }
    fn inf(self) -> u64 {
        ((2 * self.bias() + 1) as u64) << self.mant()
    }
    fn max(self) -> u64 {
        self.inf() - 1
    }
    fn min_normal(self) -> u64 {
        1 << self.mant()
    }
    /// The bits of `2^e` (normal range).
    fn pow2(self, e: i64) -> u64 {
        ((e + self.bias()) as u64) << self.mant()
    }
    fn one(self) -> u64 {
        self.pow2(0)
    }
    fn neg(self, x: u64) -> u64 {
        x ^ self.sign()
    }
    fn bits_of(self, x: f64) -> u64 {
        match self.0 {
            FloatType::Float => (x as f32).to_bits() as u64,
            FloatType::Double => x.to_bits(),
        }
    }

    /// Positive special values and their neighbours.
    fn positive_specials(self) -> Vec<u64> {
        let one = self.one();
        vec![
            0,
            1,
            2,
            self.min_normal() - 1,
            self.min_normal(),
            self.min_normal() + 1,
            one - 1,
            one,
            one + 1,
            self.bits_of(1.5),
            self.pow2(1),
            self.bits_of(3.0),
            self.bits_of(0.1),
            self.max() - 1,
            self.max(),
            self.inf(),
        ]
    }

    /// Specials of both signs and NaNs (quiet and signalling, both signs).
    fn specials(self) -> Vec<u64> {
        let mut v = Vec::new();
        for x in self.positive_specials() {
            v.push(x);
            v.push(self.neg(x));
        }
        let quiet = self.inf() | (1 << (self.mant() - 1));
        v.extend([
            quiet,
            self.neg(quiet),
            self.inf() | 1,
            self.neg(self.inf() | 1),
        ]);
        v
    }

    /// A smaller set for triples.
    fn few_specials(self) -> Vec<u64> {
        let one = self.one();
        let mut v = Vec::new();
        for x in [
            0,
            1,
            self.min_normal(),
            self.min_normal() - 1,
            one,
            one + 1,
            self.bits_of(1.5),
            self.bits_of(3.0),
            self.bits_of(0.1),
            self.max(),
            self.inf(),
        ] {
            v.push(x);
            v.push(self.neg(x));
        }
        let quiet = self.inf() | (1 << (self.mant() - 1));
        v.extend([
            quiet,
            self.neg(quiet),
            self.inf() | 1,
            self.pow2(-1),
            self.pow2(self.bias() / 2),
            self.neg(self.pow2(-(self.bias() / 2))),
        ]);
        v
    }

    /// A random value whose exponent is drawn from `[lo, hi]` (unbiased), random sign and
    /// mantissa; exponents below emin give subnormals or zero.
    fn random_in(self, rng: &mut Rng, lo: i64, hi: i64) -> u64 {
        let e = lo + rng.below((hi - lo + 1) as u64) as i64;
        let mant_mask = (1u64 << self.mant()) - 1;
        let m = rng.next() & mant_mask;
        let emin = 1 - self.bias();
        let bits = if e >= emin {
            (((e + self.bias()) as u64) << self.mant()) | m
        } else {
            let shift = (emin - e).min(63) as u32;
            ((m | (1 << self.mant())) >> shift.min(self.mant() + 1)) & mant_mask
        };
        let bits = bits & self.mask();
        if rng.next() & 1 == 1 {
            self.neg(bits)
        } else {
            bits
        }
    }

    fn random_bits(self, rng: &mut Rng) -> u64 {
        rng.next() & self.mask()
    }
}

/// Runs `op` in `mode` on every operand triple of `args` through the JIT kernel of `width` in
/// `layout`, and compares each result with the reference. Returns the mismatches, described.
fn run_case(
    jit: &Jit,
    op: ArithOp,
    ty: FloatType,
    mode: Rounding,
    width: Width,
    layout: Layout,
    args: &[[u64; 3]],
) -> Vec<String> {
    let request = ArithRequest::new(op, ty, width, Some(mode));
    let kernel = jit
        .compile_arith_request(&request)
        .unwrap_or_else(|e| panic!("{request}: {e}"));
    let lanes = width.lanes();
    let stride = layout.stride(width);
    let eb = ty.bytes();
    let vectors = args.len().div_ceil(lanes);
    let mut inputs = vec![vec![0u8; vectors * stride * eb]; op.arity()];
    let mut slots = Vec::new();
    for v in 0..vectors {
        for lane in 0..stride {
            let at = (v * stride + lane) * eb;
            if lane >= lanes {
                // Padding holds a NaN, which must not leak into the result's padding.
                for input in &mut inputs {
                    input[at..at + eb].copy_from_slice(&(u64::MAX).to_le_bytes()[..eb]);
                }
                continue;
            }
            let k = (v * lanes + lane) % args.len();
            for (o, input) in inputs.iter_mut().enumerate() {
                input[at..at + eb].copy_from_slice(&args[k][o].to_le_bytes()[..eb]);
            }
            slots.push((at, k));
        }
    }
    let mut dst = vec![0x55u8; vectors * stride * eb];
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    kernel
        .run_bytes(layout, &refs, &mut dst)
        .unwrap_or_else(|e| panic!("{request}: {e}"));
    let mut mismatches = Vec::new();
    for v in 0..vectors {
        for lane in lanes..stride {
            let at = (v * stride + lane) * eb;
            if dst[at..at + eb].iter().any(|&b| b != 0) {
                mismatches.push(format!(
                    "{request} {layout:?}: padding of vector {v} not zero"
                ));
            }
        }
    }
    for (at, k) in slots {
        let mut raw = [0u8; 8];
        raw[..eb].copy_from_slice(&dst[at..at + eb]);
        let got = u64::from_le_bytes(raw);
        let want = element(op, ty, mode, args[k]);
        if !same_result(ty, want, got) {
            mismatches.push(describe(&request, ty, args[k], want, got));
        }
    }
    mismatches
}

fn show(ty: FloatType, bits: u64) -> String {
    match ty {
        FloatType::Float => format!("{:#010x} ({:e})", bits, f32::from_bits(bits as u32)),
        FloatType::Double => format!("{:#018x} ({:e})", bits, f64::from_bits(bits)),
    }
}

fn describe(request: &ArithRequest, ty: FloatType, args: [u64; 3], want: u64, got: u64) -> String {
    let operands: Vec<String> = args[..request.op().arity()]
        .iter()
        .map(|&a| show(ty, a))
        .collect();
    format!(
        "{request}{:?}: want {}, got {}",
        operands,
        show(ty, want),
        show(ty, got)
    )
}

/// Both ways a batch kernel rounds in a directed mode: the native instruction under MXCSR's
/// rounding control, and the exact sequences that code lowered into a caller's function runs.
const DIRECTED: [DirectedArith; 2] = [
    DirectedArith::RoundingControl,
    DirectedArith::ExactSequences,
];

/// Every case of `args` for `op` on `ty` in every mode, through the scalar and the vector
/// kernels (and a packed and an aligned 3-component one), on `flags`, both by the rounding
/// control and by the exact sequences; panics with the first mismatches.
fn check_all_modes(flags: X64Flags, op: ArithOp, ty: FloatType, args: &[[u64; 3]], what: &str) {
    let jit = Jit::with_options(flags, Extensions::default(), Rounding::Rte).unwrap();
    jit.set_verify_ir(true);
    let vector = match ty {
        FloatType::Float => Width::W4,
        FloatType::Double => Width::W2,
    };
    let mut mismatches = Vec::new();
    for directed in DIRECTED {
        jit.set_directed_arith(directed);
        for mode in Rounding::ALL {
            for (width, layout) in [
                (Width::W1, Layout::Packed),
                (vector, Layout::Packed),
                (Width::W3, Layout::Packed),
                (Width::W3, Layout::Aligned),
            ] {
                let found = run_case(&jit, op, ty, mode, width, layout, args);
                mismatches.extend(found.into_iter().map(|m| format!("{directed:?}: {m}")));
            }
        }
    }
    if !mismatches.is_empty() {
        let shown: Vec<&String> = mismatches.iter().take(20).collect();
        panic!(
            "{} mismatches for {op} on {ty} ({what}, {}):\n{}",
            mismatches.len(),
            flags.name(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// The inputs of one operation and type: specials, random patterns (`2000 scale` bit
/// patterns and `1000 scale` values per hard range), structured sweeps (grids of `2 grid`
/// values around each center, both signs).
fn inputs(op: ArithOp, ty: FloatType, scale: usize, grid: u64) -> Vec<[u64; 3]> {
    let f = Fmt(ty);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (op as u64 * 31 + ty.bits() as u64));
    let mut out = Vec::new();
    match op.arity() {
        1 => {
            for &a in &f.specials() {
                out.push([a, 0, 0]);
            }
        }
        2 => {
            let s = f.specials();
            for &a in &s {
                for &b in &s {
                    out.push([a, b, 0]);
                }
            }
        }
        _ => {
            let s = f.few_specials();
            for &a in &s {
                for &b in &s {
                    for &c in &s {
                        out.push([a, b, c]);
                    }
                }
            }
        }
    }
    let bias = f.bias();
    let p = i64::from(ty.precision());
    let emin = 1 - bias;
    // Random bit patterns.
    for _ in 0..2000 * scale {
        out.push([
            f.random_bits(&mut rng),
            f.random_bits(&mut rng),
            f.random_bits(&mut rng),
        ]);
    }
    // Random values in the hard ranges.
    let ranges: Vec<(i64, i64)> = match op {
        ArithOp::Add | ArithOp::Sub => vec![(emin - p, emin + 2), (bias - 2, bias), (-3, 3)],
        ArithOp::Mul => vec![
            (emin / 2 - p, emin / 2 + p),
            (bias / 2 - 1, bias / 2 + 1),
            (emin - p, 2),
        ],
        ArithOp::Div => vec![(emin - p, emin + p), (-3, 3), (bias - p, bias)],
        ArithOp::Sqrt => vec![(emin - p, emin + 4), (-4, 4), (bias - 4, bias)],
        ArithOp::Fma => vec![
            (emin / 2 - p, emin / 2 + p),
            (bias / 2 - 1, bias / 2 + 1),
            (-2, 2),
            (emin - 2 * p, emin + p),
        ],
    };
    for &(lo, hi) in &ranges {
        for _ in 0..1000 * scale {
            let a = f.random_in(&mut rng, lo, hi);
            let b = f.random_in(&mut rng, lo, hi);
            let c = f.random_in(&mut rng, lo, hi);
            let a = if op == ArithOp::Sqrt {
                a & !f.sign()
            } else {
                a
            };
            out.push([a, b, c]);
        }
    }
    out.extend(structured(op, ty, &mut rng, grid));
    out
}

/// Grids around 1, the subnormal boundary and overflow; for fma, cancelling triples.
fn structured(op: ArithOp, ty: FloatType, rng: &mut Rng, k: u64) -> Vec<[u64; 3]> {
    let f = Fmt(ty);
    let bias = f.bias();
    let around = |center: u64| -> Vec<u64> {
        (0..k)
            .map(|i| center - k / 2 + i)
            .chain((0..k).map(|i| f.neg(center - k / 2 + i)))
            .collect()
    };
    let grids: Vec<Vec<u64>> = vec![
        around(f.one()),
        around(f.pow2(1)),
        around(f.min_normal()),
        (0..2 * k).map(|i| i + 1).collect::<Vec<_>>(), // the smallest subnormals
        around(f.max() - k),
        around(f.pow2(bias / 2)),
        around(f.pow2((1 - bias) / 2)),
    ];
    let mut out = Vec::new();
    if op.arity() == 3 {
        // c = -RN(ab) + j ulp: the product and the addend cancel, exactly or nearly.
        for g in &grids {
            for &a in g {
                for _ in 0..8 {
                    let b = g[rng.below(g.len() as u64) as usize];
                    let p = element(ArithOp::Mul, ty, Rounding::Rte, [a, b, 0]);
                    if is_nan(ty, p) {
                        continue;
                    }
                    for j in 0..5u64 {
                        let c = f.neg(p).wrapping_add(j).wrapping_sub(2) & f.mask();
                        out.push([a, b, c]);
                    }
                    let c = g[rng.below(g.len() as u64) as usize];
                    out.push([a, b, c]);
                }
            }
        }
        return out;
    }
    for g in &grids {
        for &a in g {
            for &b in g {
                if op == ArithOp::Sqrt {
                    out.push([a & !f.sign(), 0, 0]);
                    break;
                }
                out.push([a, b, 0]);
            }
        }
    }
    // Mixed grids: the subnormal boundary against 1 and 2 (division and products that land in
    // the subnormal range), overflow against 1/2.
    for (x, y) in [(2, 0), (2, 1), (3, 0), (4, 0), (5, 6)] {
        for &a in &grids[x] {
            for &b in &grids[y] {
                out.push([a, b, 0]);
                out.push([b, a, 0]);
            }
        }
    }
    out
}

/// The CI scale: 10,000 random bit patterns, 5,000 values per hard range, grids of 128 values
/// (64 consecutive floats around each center, both signs).
const CI_SCALE: (usize, u64) = (5, 64);

fn check_op(flags: X64Flags, op: ArithOp, ty: FloatType) {
    let args = inputs(op, ty, CI_SCALE.0, CI_SCALE.1);
    eprintln!(
        "{op} on {ty}, {}: {} operand tuples x 4 modes x 4 kernels",
        flags.name(),
        args.len()
    );
    check_all_modes(
        flags,
        op,
        ty,
        &args,
        "specials, random and structured sweeps",
    );
}

/// 50 times the random inputs and 4 times the grids of the CI run, on both flag sets.
#[test]
#[ignore = "long: run with --release -- --ignored"]
fn long_sweep() {
    for flags in flag_sets() {
        for ty in FloatType::ALL {
            for op in ArithOp::ALL {
                let args = inputs(op, ty, 50 * CI_SCALE.0, 4 * CI_SCALE.1);
                eprintln!(
                    "{op} on {ty}, {}: {} operand tuples",
                    flags.name(),
                    args.len()
                );
                check_all_modes(flags, op, ty, &args, "long sweep");
            }
        }
    }
}

macro_rules! sweep_tests {
    ($($name:ident: $op:ident, $ty:ident, $flags:ident;)*) => {$(
        #[test]
        fn $name() {
            check_op(X64Flags::$flags, ArithOp::$op, FloatType::$ty);
        }
    )*};
}

sweep_tests! {
    add_float_host: Add, Float, Host;
    add_double_host: Add, Double, Host;
    sub_float_host: Sub, Float, Host;
    sub_double_host: Sub, Double, Host;
    mul_float_host: Mul, Float, Host;
    mul_double_host: Mul, Double, Host;
    div_float_host: Div, Float, Host;
    div_double_host: Div, Double, Host;
    sqrt_float_host: Sqrt, Float, Host;
    sqrt_double_host: Sqrt, Double, Host;
    fma_float_host: Fma, Float, Host;
    fma_double_host: Fma, Double, Host;
}

// SSE4.1 (no FMA instruction: libm calls) is an x86-64 flag set; other hosts have none.
#[cfg(target_arch = "x86_64")]
sweep_tests! {
    add_float_sse41: Add, Float, Sse41;
    add_double_sse41: Add, Double, Sse41;
    sub_float_sse41: Sub, Float, Sse41;
    sub_double_sse41: Sub, Double, Sse41;
    mul_float_sse41: Mul, Float, Sse41;
    mul_double_sse41: Mul, Double, Sse41;
    div_float_sse41: Div, Float, Sse41;
    div_double_sse41: Div, Double, Sse41;
    sqrt_float_sse41: Sqrt, Float, Sse41;
    sqrt_double_sse41: Sqrt, Double, Sse41;
    fma_float_sse41: Fma, Float, Sse41;
    fma_double_sse41: Fma, Double, Sse41;
}

// ---------------------------------------------------------------------------------------------
// The rules, case by case: hand-computed results, checked on the reference and on the JIT's
// scalar and vector kernels (host and SSE4.1).
// ---------------------------------------------------------------------------------------------

const RTE: Rounding = Rounding::Rte;
const RTZ: Rounding = Rounding::Rtz;
const RTP: Rounding = Rounding::Rtp;
const RTN: Rounding = Rounding::Rtn;

/// One hand-checked case: operation, mode, operand bits, the expected bits (`NAN`: any NaN).
type Case = (ArithOp, Rounding, [u64; 3], u64);

const FNAN: u64 = 0x7fc0_0000;
const DNAN: u64 = 0x7ff8_0000_0000_0000;

fn f(x: f32) -> u64 {
    x.to_bits() as u64
}

fn d(x: f64) -> u64 {
    x.to_bits()
}

fn float_cases() -> Vec<Case> {
    use ArithOp::*;
    let max = 0x7f7f_ffffu64;
    let inf = 0x7f80_0000u64;
    let ninf = 0xff80_0000u64;
    let u = 1u64; // smallest subnormal, 2^-149
    let min = 0x0080_0000u64; // FLT_MIN, 2^-126
    let neg = |x: u64| x ^ 0x8000_0000;
    vec![
        // Overflow: rtz gives MAX for finite operands, rtp/rtn are one-sided.
        (Add, RTE, [max, max, 0], inf),
        (Add, RTZ, [max, max, 0], max),
        (Add, RTP, [max, max, 0], inf),
        (Add, RTN, [max, max, 0], max),
        (Add, RTZ, [neg(max), neg(max), 0], neg(max)),
        (Add, RTP, [neg(max), neg(max), 0], neg(max)),
        (Add, RTN, [neg(max), neg(max), 0], ninf),
        (Mul, RTZ, [max, f(2.0), 0], max),
        (Mul, RTN, [max, f(-2.0), 0], ninf),
        (Mul, RTP, [max, f(-2.0), 0], neg(max)),
        (Div, RTZ, [max, f(0.5), 0], max),
        (Div, RTP, [max, f(0.5), 0], inf),
        (Fma, RTZ, [max, f(2.0), 0], max),
        (Fma, RTP, [max, f(2.0), 0], inf),
        (Fma, RTN, [max, f(2.0), 0], max),
        // MAX + half an ulp of MAX: rte rounds to inf (the tie goes to the even 2^128).
        (Add, RTE, [max, 0x7300_0000, 0], inf),
        (Add, RTZ, [max, 0x7300_0000, 0], max),
        // ... but a product far beyond MAX cancelled by -MAX is finite and exact.
        (
            Fma,
            RTZ,
            [f(1.8446744e19), f(1.8446744e19), neg(max)],
            0x7380_0000,
        ),
        (Fma, RTN, [max, f(2.0), neg(max)], max),
        // Infinite operands give exact infinities: never MAX.
        (Add, RTZ, [inf, f(1.0), 0], inf),
        (Sub, RTZ, [f(1.0), inf, 0], ninf),
        (Mul, RTZ, [inf, f(2.0), 0], inf),
        (Div, RTZ, [f(1.0), 0, 0], inf),
        (Div, RTZ, [f(-1.0), 0, 0], ninf),
        (Div, RTN, [f(1.0), 0x8000_0000, 0], ninf),
        (Div, RTZ, [inf, f(3.0), 0], inf),
        (Sqrt, RTZ, [inf, 0, 0], inf),
        (Fma, RTZ, [inf, f(1.0), f(1.0)], inf),
        (Fma, RTZ, [f(1.0), f(1.0), ninf], ninf),
        // x / inf is an exact zero.
        (Div, RTN, [f(1.0), inf, 0], 0),
        (Div, RTP, [f(-1.0), inf, 0], 0x8000_0000),
        // NaN results.
        (Add, RTZ, [inf, ninf, 0], FNAN),
        (Sub, RTP, [inf, inf, 0], FNAN),
        (Mul, RTP, [0, inf, 0], FNAN),
        (Div, RTN, [0, 0, 0], FNAN),
        (Div, RTZ, [inf, inf, 0], FNAN),
        (Sqrt, RTN, [f(-1.0), 0, 0], FNAN),
        (Sqrt, RTZ, [ninf, 0, 0], FNAN),
        (Fma, RTZ, [inf, 0, f(1.0)], FNAN),
        (Fma, RTP, [inf, f(1.0), ninf], FNAN),
        (Add, RTZ, [FNAN, f(1.0), 0], FNAN),
        (Mul, RTN, [f(1.0), 0xff80_0001, 0], FNAN),
        (Fma, RTN, [f(1.0), f(1.0), 0x7f80_0001], FNAN),
        // Exact cancellation: +0, except -0 under rtn; like-signed zeros keep their sign.
        (Sub, RTE, [f(1.5), f(1.5), 0], 0),
        (Sub, RTZ, [f(1.5), f(1.5), 0], 0),
        (Sub, RTP, [f(1.5), f(1.5), 0], 0),
        (Sub, RTN, [f(1.5), f(1.5), 0], 0x8000_0000),
        (Add, RTN, [f(-2.5), f(2.5), 0], 0x8000_0000),
        (Add, RTN, [u, neg(u), 0], 0x8000_0000),
        (Add, RTN, [0, 0, 0], 0),
        (Add, RTN, [0, 0x8000_0000, 0], 0x8000_0000),
        (Add, RTP, [0x8000_0000, 0x8000_0000, 0], 0x8000_0000),
        (Sub, RTN, [0, 0, 0], 0x8000_0000),
        (Sub, RTP, [0, 0, 0], 0),
        (Fma, RTN, [f(1.0), f(1.0), f(-1.0)], 0x8000_0000),
        (Fma, RTP, [f(1.0), f(1.0), f(-1.0)], 0),
        (Fma, RTN, [0, f(5.0), 0], 0),
        (Fma, RTN, [0x8000_0000, f(5.0), 0], 0x8000_0000),
        (Fma, RTE, [0x8000_0000, f(5.0), 0], 0),
        (Fma, RTZ, [0x8000_0000, f(5.0), 0x8000_0000], 0x8000_0000),
        (Mul, RTN, [0x8000_0000, 0, 0], 0x8000_0000),
        (Sqrt, RTN, [0x8000_0000, 0, 0], 0x8000_0000),
        (Sqrt, RTP, [0x8000_0000, 0, 0], 0x8000_0000),
        // Inexact sums: one ulp apart by the mode.
        (Add, RTE, [f(1.0), 0x3080_0000, 0], f(1.0)), // 1 + 2^-30
        (Add, RTZ, [f(1.0), 0x3080_0000, 0], f(1.0)),
        (Add, RTP, [f(1.0), 0x3080_0000, 0], 0x3f80_0001),
        (Add, RTN, [f(1.0), 0x3080_0000, 0], f(1.0)),
        (Add, RTN, [f(1.0), 0xb080_0000, 0], 0x3f7f_ffff), // 1 - 2^-30
        (Add, RTZ, [f(1.0), 0xb080_0000, 0], 0x3f7f_ffff),
        (Add, RTP, [f(1.0), 0xb080_0000, 0], f(1.0)),
        (Add, RTZ, [f(-1.0), 0xb080_0000, 0], f(-1.0)),
        (Add, RTN, [f(-1.0), 0xb080_0000, 0], 0xbf80_0001),
        // Sums that are exact: no step in any mode.
        (Add, RTZ, [f(1.5), f(2.25), 0], f(3.75)),
        (Add, RTN, [min, neg(u), 0], 0x007f_ffff),
        (Sub, RTP, [min, u, 0], 0x007f_ffff),
        // The subnormal range: products below FLT_MIN, and underflow to zero.
        (Mul, RTE, [u, f(0.5), 0], 0), // a tie: to the even 0
        (Mul, RTZ, [u, f(0.5), 0], 0),
        (Mul, RTP, [u, f(0.5), 0], u),
        (Mul, RTN, [u, f(0.5), 0], 0),
        (Mul, RTN, [neg(u), f(0.5), 0], neg(u)),
        (Mul, RTZ, [neg(u), f(0.5), 0], 0x8000_0000),
        (Mul, RTP, [neg(u), f(0.5), 0], 0x8000_0000),
        (Mul, RTP, [0x1a00_0000, 0x1a00_0000, 0], u), // 2^-75 * 2^-75 = 2^-150 = u/2
        (Mul, RTE, [0x1a00_0000, 0x1a00_0000, 0], 0),
        (Mul, RTP, [0x1980_0000, 0x1980_0000, 0], u), // 2^-152
        (Mul, RTN, [0x9980_0000, 0x1980_0000, 0], neg(u)),
        (Mul, RTE, [0x1980_0000, 0x1980_0000, 0], 0),
        // FLT_MIN * (1 - 2^-24) = 2^-126 - 2^-150: halfway between the largest subnormal and MIN.
        (Mul, RTE, [min, 0x3f7f_ffff, 0], min),
        (Mul, RTZ, [min, 0x3f7f_ffff, 0], 0x007f_ffff),
        (Mul, RTP, [min, 0x3f7f_ffff, 0], min),
        (Mul, RTN, [min, 0x3f7f_ffff, 0], 0x007f_ffff),
        (Mul, RTN, [neg(min), 0x3f7f_ffff, 0], neg(min)),
        (Div, RTZ, [u, f(3.0), 0], 0),
        (Div, RTP, [u, f(3.0), 0], u),
        (Div, RTN, [neg(u), f(3.0), 0], neg(u)),
        (Div, RTP, [min, f(3.0), 0], 0x002a_aaab),
        (Div, RTZ, [min, f(3.0), 0], 0x002a_aaaa),
        (Div, RTE, [min, f(3.0), 0], 0x002a_aaab),
        (Fma, RTP, [u, f(0.5), 0], u),
        (Fma, RTN, [u, f(0.5), 0], 0),
        (Fma, RTP, [u, f(-0.5), u], u), // u - u/2 = u/2: rounds up to u
        (Fma, RTN, [u, f(-0.5), u], 0),
        // Division and square root: 1/3 and sqrt(2), one ulp apart.
        (Div, RTE, [f(1.0), f(3.0), 0], 0x3eaa_aaab),
        (Div, RTZ, [f(1.0), f(3.0), 0], 0x3eaa_aaaa),
        (Div, RTP, [f(1.0), f(3.0), 0], 0x3eaa_aaab),
        (Div, RTN, [f(1.0), f(3.0), 0], 0x3eaa_aaaa),
        (Div, RTN, [f(-1.0), f(3.0), 0], 0xbeaa_aaab),
        (Div, RTZ, [f(-1.0), f(3.0), 0], 0xbeaa_aaaa),
        (Div, RTP, [f(1.0), f(-3.0), 0], 0xbeaa_aaaa),
        (Div, RTZ, [f(6.0), f(3.0), 0], f(2.0)),
        (Sqrt, RTE, [f(2.0), 0, 0], 0x3fb5_04f3),
        (Sqrt, RTZ, [f(2.0), 0, 0], 0x3fb5_04f3),
        (Sqrt, RTN, [f(2.0), 0, 0], 0x3fb5_04f3),
        (Sqrt, RTP, [f(2.0), 0, 0], 0x3fb5_04f4),
        (Sqrt, RTP, [f(4.0), 0, 0], f(2.0)),
        (Sqrt, RTN, [f(4.0), 0, 0], f(2.0)),
        // sqrt of the smallest subnormal: 2^-74.5 = sqrt(2) * 2^-75.
        (Sqrt, RTZ, [u, 0, 0], 0x1a35_04f3),
        (Sqrt, RTP, [u, 0, 0], 0x1a35_04f4),
        // fma: the product and the addend nearly cancel.
        // (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly.
        (Fma, RTZ, [0x3f80_0001, 0x3f7f_fffe, f(-1.0)], 0xa880_0000),
        (Fma, RTP, [0x3f80_0001, 0x3f7f_fffe, f(-1.0)], 0xa880_0000),
        // (1 + 2^-23)^2 - 1 = 2^-22 + 2^-46: halfway between 2^-22 and its successor.
        (Fma, RTE, [0x3f80_0001, 0x3f80_0001, f(-1.0)], 0x3480_0000),
        (Fma, RTZ, [0x3f80_0001, 0x3f80_0001, f(-1.0)], 0x3480_0000),
        (Fma, RTN, [0x3f80_0001, 0x3f80_0001, f(-1.0)], 0x3480_0000),
        (Fma, RTP, [0x3f80_0001, 0x3f80_0001, f(-1.0)], 0x3480_0001),
        // A tiny product beside a large addend: only its sign survives.
        (Fma, RTP, [0x0d80_0000, 0x0d80_0000, f(1.0)], 0x3f80_0001), // 2^-100 * 2^-100 + 1
        (Fma, RTN, [0x0d80_0000, 0x0d80_0000, f(1.0)], f(1.0)),
        (Fma, RTN, [0x8d80_0000, 0x0d80_0000, f(1.0)], 0x3f7f_ffff),
        (Fma, RTZ, [0x8d80_0000, 0x0d80_0000, f(1.0)], 0x3f7f_ffff),
        (Fma, RTP, [0x8d80_0000, 0x0d80_0000, f(1.0)], f(1.0)),
        (Fma, RTP, [u, u, max], inf),
        (Fma, RTZ, [u, u, neg(max)], 0xff7f_fffe),
    ]
}

fn double_cases() -> Vec<Case> {
    use ArithOp::*;
    let max = 0x7fef_ffff_ffff_ffffu64;
    let inf = 0x7ff0_0000_0000_0000u64;
    let u = 1u64;
    let min = 0x0010_0000_0000_0000u64;
    let neg = |x: u64| x ^ (1 << 63);
    vec![
        (Add, RTZ, [max, max, 0], max),
        (Add, RTP, [max, max, 0], inf),
        (Add, RTN, [neg(max), neg(max), 0], neg(inf)),
        (Mul, RTZ, [max, d(2.0), 0], max),
        (Div, RTZ, [max, d(0.5), 0], max),
        (Fma, RTZ, [max, d(2.0), 0], max),
        (Fma, RTP, [max, d(2.0), neg(max)], max),
        (Div, RTZ, [d(1.0), 0, 0], inf),
        (Add, RTZ, [inf, d(1.0), 0], inf),
        (Sub, RTN, [d(1.5), d(1.5), 0], 1 << 63),
        (Sub, RTZ, [d(1.5), d(1.5), 0], 0),
        (Add, RTN, [0, 1 << 63, 0], 1 << 63),
        (Fma, RTN, [d(2.0), d(3.0), d(-6.0)], 1 << 63),
        (Add, RTP, [d(1.0), d(1e-30), 0], d(1.0) + 1),
        (Add, RTN, [d(1.0), d(-1e-30), 0], d(1.0) - 1),
        (Mul, RTP, [u, d(0.5), 0], u),
        (Mul, RTE, [u, d(0.5), 0], 0),
        (Mul, RTN, [neg(u), d(0.5), 0], neg(u)),
        (Mul, RTZ, [min, d(1.0) - 1, 0], min - 1),
        (Mul, RTP, [min, d(1.0) - 1, 0], min),
        (Div, RTP, [u, d(3.0), 0], u),
        (Div, RTZ, [d(1.0), d(3.0), 0], 0x3fd5_5555_5555_5555),
        (Div, RTP, [d(1.0), d(3.0), 0], 0x3fd5_5555_5555_5556),
        (Sqrt, RTE, [d(2.0), 0, 0], 0x3ff6_a09e_667f_3bcd),
        (Sqrt, RTZ, [d(2.0), 0, 0], 0x3ff6_a09e_667f_3bcc),
        (Sqrt, RTP, [d(2.0), 0, 0], 0x3ff6_a09e_667f_3bcd),
        (
            Sqrt,
            RTN,
            [0x8000_0000_0000_0000, 0, 0],
            0x8000_0000_0000_0000,
        ),
        (Sqrt, RTZ, [d(-1.0), 0, 0], DNAN),
        // (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104, exact.
        (
            Fma,
            RTP,
            [d(1.0) + 1, d(1.0) - 2, d(-1.0)],
            neg(d(2f64.powi(-104))),
        ),
        // (1 + 2^-52)^2 - 1 = 2^-51 + 2^-104: a tie in rte.
        (
            Fma,
            RTE,
            [d(1.0) + 1, d(1.0) + 1, d(-1.0)],
            d(2f64.powi(-51)),
        ),
        (
            Fma,
            RTP,
            [d(1.0) + 1, d(1.0) + 1, d(-1.0)],
            d(2f64.powi(-51)) + 1,
        ),
        (Fma, RTP, [d(1e-200), d(1e-200), d(1.0)], d(1.0) + 1),
        (Fma, RTN, [d(-1e-200), d(1e-200), d(1.0)], d(1.0) - 1),
        (Fma, RTZ, [inf, 0, d(1.0)], DNAN),
    ]
}

fn check_cases(ty: FloatType, cases: &[Case]) {
    let mut failures = Vec::new();
    for &(op, mode, args, want) in cases {
        let reference = element(op, ty, mode, args);
        if !same_result(ty, want, reference) {
            failures.push(format!(
                "reference {op}_{mode}{:?}: want {}, got {}",
                args,
                show(ty, want),
                show(ty, reference)
            ));
        }
    }
    for (flags, directed) in flag_sets()
        .into_iter()
        .flat_map(|f| DIRECTED.map(|d| (f, d)))
    {
        let jit = Jit::with_options(flags, Extensions::default(), Rounding::Rte).unwrap();
        jit.set_verify_ir(true);
        jit.set_directed_arith(directed);
        let vector = match ty {
            FloatType::Float => Width::W4,
            FloatType::Double => Width::W2,
        };
        for &(op, mode, args, want) in cases {
            for width in [Width::W1, vector] {
                let request = ArithRequest::new(op, ty, width, Some(mode));
                let kernel = jit.compile_arith_request(&request).unwrap();
                let eb = ty.bytes();
                let n = width.lanes();
                let inputs: Vec<Vec<u8>> = args[..op.arity()]
                    .iter()
                    .map(|a| a.to_le_bytes()[..eb].repeat(n))
                    .collect();
                let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
                let mut out = vec![0u8; eb * n];
                kernel.run_bytes(Layout::Packed, &refs, &mut out).unwrap();
                for lane in out.chunks(eb) {
                    let mut raw = [0u8; 8];
                    raw[..eb].copy_from_slice(lane);
                    let got = u64::from_le_bytes(raw);
                    if !same_result(ty, want, got) {
                        failures.push(format!(
                            "{} {directed:?} {}",
                            flags.name(),
                            describe(&request, ty, args, want, got)
                        ));
                        break;
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn float_rules_case_by_case() {
    check_cases(FloatType::Float, &float_cases());
}

#[test]
fn double_rules_case_by_case() {
    check_cases(FloatType::Double, &double_cases());
}

// ---------------------------------------------------------------------------------------------
// Properties beyond the reference: NaNs, targets without FMA, the static mode, the API.
// ---------------------------------------------------------------------------------------------

/// A NaN result is the native instruction's NaN in every mode: the directed kernels give the
/// same NaN bits as the rte one (payloads, signs, signalling inputs), by the rounding control
/// and by the exact sequences.
#[test]
fn nan_results_are_the_native_nans_in_every_mode() {
    for directed in DIRECTED {
        nan_results_are_the_native_nans(directed);
    }
}

fn nan_results_are_the_native_nans(directed: DirectedArith) {
    let jit = Jit::new().unwrap();
    jit.set_directed_arith(directed);
    for ty in FloatType::ALL {
        let f = Fmt(ty);
        let specials = f.few_specials();
        let mut args = Vec::new();
        for &a in &specials {
            for &b in &specials {
                for &c in &specials {
                    args.push([a, b, c]);
                }
            }
        }
        for op in ArithOp::ALL {
            let run = |mode: Rounding| -> Vec<u64> {
                let request = ArithRequest::new(op, ty, Width::W1, Some(mode));
                let kernel = jit.compile_arith_request(&request).unwrap();
                let eb = ty.bytes();
                let inputs: Vec<Vec<u8>> = (0..op.arity())
                    .map(|o| {
                        args.iter()
                            .flat_map(|a| a[o].to_le_bytes()[..eb].to_vec())
                            .collect()
                    })
                    .collect();
                let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
                let mut out = vec![0u8; eb * args.len()];
                kernel.run_bytes(Layout::Packed, &refs, &mut out).unwrap();
                out.chunks(eb)
                    .map(|c| {
                        let mut raw = [0u8; 8];
                        raw[..eb].copy_from_slice(c);
                        u64::from_le_bytes(raw)
                    })
                    .collect()
            };
            let native = run(Rounding::Rte);
            let nans = native.iter().filter(|&&x| is_nan(ty, x)).count();
            assert!(nans > 100, "{op} on {ty}: only {nans} NaN results");
            for mode in [Rounding::Rtz, Rounding::Rtp, Rounding::Rtn] {
                let directed = run(mode);
                for (k, (&n, &g)) in native.iter().zip(&directed).enumerate() {
                    if is_nan(ty, n) || is_nan(ty, g) {
                        assert_eq!(
                            n, g,
                            "{op}_{mode}({ty}) on {:?} ({directed:?}): NaN bits differ from rte's",
                            args[k]
                        );
                    }
                }
            }
        }
    }
}

/// Call instructions in Cranelift's disassembly.
fn calls(asm: &str) -> usize {
    asm.lines()
        .filter(|l| l.trim_start().starts_with("call"))
        .count()
}

/// Without FMA (the SSE4.1 flag set) the exact sequences' error terms call libm's correctly
/// rounded fmaf/fma; the kernels above pass on that flag set too. With the host's FMA there is
/// no call. (x86-64's machine code.)
#[cfg(target_arch = "x86_64")]
#[test]
fn without_fma_the_lowering_calls_libm_fma() {
    let sse = Jit::with_options(X64Flags::Sse41, Extensions::default(), Rounding::Rte).unwrap();
    let host = Jit::new().unwrap();
    sse.set_directed_arith(DirectedArith::ExactSequences);
    host.set_directed_arith(DirectedArith::ExactSequences);
    for (name, symbol) in [
        ("fma_rtz(float4)", "FmaF32"),
        ("fma_rte(float)", "FmaF32"),
        ("mul_rtp(float4)", "FmaF32"),
        ("div_rtn(double2)", "FmaF64"),
        ("sqrt_rtz(double)", "FmaF64"),
        ("fma_rtn(double2)", "FmaF64"),
    ] {
        let r = ArithRequest::parse(name).unwrap();
        let without = sse.disassemble_arith(&r, Layout::Packed).unwrap();
        assert!(
            without.asm.contains(symbol) && calls(&without.asm) > 0,
            "{name} on SSE4.1 should call {symbol}:\n{}",
            without.asm
        );
        let with = host.disassemble_arith(&r, Layout::Packed).unwrap();
        assert!(
            calls(&with.asm) == 0
                && with
                    .asm
                    .lines()
                    .any(|l| l.contains("vf") && (l.contains("madd") || l.contains("msub"))),
            "{name} on the host should use an FMA instruction:\n{}",
            with.asm
        );
    }
    // Additions never need the fma.
    let r = ArithRequest::parse("add_rtz(float4)").unwrap();
    assert!(!sse
        .disassemble_arith(&r, Layout::Packed)
        .unwrap()
        .asm
        .contains("Fma"));
}

/// By the rounding control a directed kernel is the nearest-even kernel's machine code (one
/// `mulps` for `mul_rtz(float4)`; the JIT changes MXCSR for the call), on every operation,
/// type and mode; except `fma` without an FMA instruction, which keeps the exact sequence
/// because Cranelift calls libm for it. The sequences are longer everywhere. (x86-64's machine
/// code: only there do arithmetic kernels round by the control.)
#[cfg(target_arch = "x86_64")]
#[test]
fn by_the_rounding_control_a_directed_kernel_is_the_native_instruction() {
    for flags in [X64Flags::Host, X64Flags::Sse41] {
        let jit = Jit::with_options(flags, Extensions::default(), Rounding::Rte).unwrap();
        let has_fma = flags == X64Flags::Host && std::arch::is_x86_feature_detected!("fma");
        for ty in FloatType::ALL {
            for op in ArithOp::ALL {
                for width in [Width::W1, Width::W4] {
                    let asm = |mode: Rounding, directed: DirectedArith| {
                        jit.set_directed_arith(directed);
                        let r = ArithRequest::new(op, ty, width, Some(mode));
                        jit.disassemble_arith(&r, Layout::Packed).unwrap().asm
                    };
                    let native = asm(Rounding::Rte, DirectedArith::RoundingControl);
                    for mode in [Rounding::Rtz, Rounding::Rtp, Rounding::Rtn] {
                        let by_control = asm(mode, DirectedArith::RoundingControl);
                        let exact = asm(mode, DirectedArith::ExactSequences);
                        let what = format!(
                            "{} on {}",
                            ArithRequest::new(op, ty, width, Some(mode)),
                            flags.name()
                        );
                        assert!(exact.len() > native.len(), "{what}: the sequence is longer");
                        if op == ArithOp::Fma && !has_fma {
                            assert_eq!(by_control, exact, "{what}: no FMA, the sequence");
                        } else {
                            assert_eq!(by_control, native, "{what}: the native code");
                        }
                    }
                }
            }
        }
    }
}

/// A request without a mode follows the JIT's static mode (`SELECT_ROUNDING_MODE`).
#[test]
fn requests_without_a_mode_follow_the_static_mode() {
    let mut rng = Rng(7);
    let args: Vec<[u64; 3]> = (0..2000)
        .map(|_| {
            let f = Fmt(FloatType::Float);
            [
                f.random_in(&mut rng, -3, 3),
                f.random_in(&mut rng, -3, 3),
                f.random_in(&mut rng, -3, 3),
            ]
        })
        .collect();
    for mode in Rounding::ALL {
        let jit = Jit::with_options(X64Flags::Host, Extensions::default(), mode).unwrap();
        for op in ArithOp::ALL {
            let plain = ArithRequest::new(op, FloatType::Float, Width::W4, None);
            let k = jit.compile_arith_request(&plain).unwrap();
            assert_eq!(k.request().rounding(), Some(mode));
            let a: Vec<f32> = args.iter().map(|x| f32::from_bits(x[0] as u32)).collect();
            let b: Vec<f32> = args.iter().map(|x| f32::from_bits(x[1] as u32)).collect();
            let c: Vec<f32> = args
                .iter()
                .map(|x| f32::from_bits(x[2] as u32).abs())
                .collect();
            let operands: Vec<&[f32]> = match op.arity() {
                1 => vec![&c],
                2 => vec![&a, &b],
                _ => vec![&a, &b, &c],
            };
            let mut got = vec![0f32; args.len()];
            k.run(&operands, &mut got).unwrap();
            for (i, g) in got.iter().enumerate() {
                let bits: Vec<u64> = operands.iter().map(|o| o[i].to_bits() as u64).collect();
                let mut triple = [0u64; 3];
                triple[..bits.len()].copy_from_slice(&bits);
                let want = element(op, FloatType::Float, mode, triple);
                assert!(
                    same_result(FloatType::Float, want, g.to_bits() as u64),
                    "{op}(float4) under {mode}: {triple:?}"
                );
            }
        }
    }
}

/// Every width (16 lanes, 8, 2), unaligned byte buffers, and a buffer that is not a whole number
/// of 128-bit chunks (the scalar tail).
#[test]
fn widths_and_unaligned_buffers() {
    let jit = Jit::new().unwrap();
    let mut rng = Rng(11);
    for ty in FloatType::ALL {
        let f = Fmt(ty);
        let args: Vec<[u64; 3]> = (0..999)
            .map(|_| {
                [
                    f.random_in(&mut rng, -140, 140),
                    f.random_in(&mut rng, -140, 140),
                    f.random_in(&mut rng, -140, 140),
                ]
            })
            .collect();
        for op in ArithOp::ALL {
            for width in [Width::W2, Width::W8, Width::W16] {
                let m = run_case(&jit, op, ty, Rounding::Rtz, width, Layout::Packed, &args);
                assert!(m.is_empty(), "{}", m.join("\n"));
            }
            // Unaligned: operands and destination at odd byte offsets.
            let request = ArithRequest::new(op, ty, Width::W3, Some(Rounding::Rtn));
            let kernel = jit.compile_arith_request(&request).unwrap();
            let eb = ty.bytes();
            let n = 3 * 5;
            let mut inputs = vec![vec![0u8; n * eb + 3]; op.arity()];
            for (o, input) in inputs.iter_mut().enumerate() {
                for (k, a) in args.iter().take(n).enumerate() {
                    input[1 + k * eb..1 + (k + 1) * eb].copy_from_slice(&a[o].to_le_bytes()[..eb]);
                }
            }
            let refs: Vec<&[u8]> = inputs.iter().map(|v| &v[1..1 + n * eb]).collect();
            let mut out = vec![0u8; n * eb + 5];
            kernel
                .run_bytes(Layout::Packed, &refs, &mut out[3..3 + n * eb])
                .unwrap();
            for (k, a) in args.iter().take(n).enumerate() {
                let mut raw = [0u8; 8];
                raw[..eb].copy_from_slice(&out[3 + k * eb..3 + (k + 1) * eb]);
                let got = u64::from_le_bytes(raw);
                let want = element(op, ty, Rounding::Rtn, *a);
                assert!(
                    same_result(ty, want, got),
                    "{}",
                    describe(&request, ty, *a, want, got)
                );
            }
        }
    }
}

/// The builder API in a function of one's own: `Lowering::arith` under a static mode, on
/// scalars, JIT-compiled with cranelift-jit directly.
#[test]
fn builder_api_in_a_users_function() {
    use clconv::lower::Lowering;
    use cranelift_codegen::ir::{types, InstBuilder};
    use cranelift_jit::{JITBuilder, JITModule};
    use cranelift_module::default_libcall_names;

    let isa = clconv::jit::host_isa(X64Flags::Host).unwrap();
    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let mut ids = Vec::new();
    for (i, mode) in Rounding::ALL.into_iter().enumerate() {
        // fn(f64, f64, f64) -> f64 computing a * b + c, then / a, under `mode`.
        let f64s = [types::F64; 3];
        let id = define_function(&mut module, &format!("user{i}"), &f64s, &f64s[..1], |b| {
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            let p = b.block_params(entry).to_vec();
            let lowering = Lowering::without_isa().with_static_mode(mode);
            let t = lowering.arith(b, ArithOp::Fma, &p).unwrap();
            let q = lowering.arith(b, ArithOp::Div, &[t, p[0]]).unwrap();
            b.ins().return_(&[q]);
            b.seal_all_blocks();
        });
        ids.push((mode, id));
    }
    module.finalize_definitions().unwrap();
    let (a, b, c) = (3.0f64, 1.0 / 3.0, 1e-17);
    for (mode, id) in ids {
        let ptr = module.get_finalized_function(id);
        // SAFETY: the function was just compiled with the signature fn(f64, f64, f64) -> f64
        // (SystemV on x86-64) and the module outlives the call.
        let f: extern "C" fn(f64, f64, f64) -> f64 = unsafe { std::mem::transmute(ptr) };
        let t = element(ArithOp::Fma, FloatType::Double, mode, [d(a), d(b), d(c)]);
        let want = element(ArithOp::Div, FloatType::Double, mode, [t, d(a), 0]);
        assert_eq!(f(a, b, c).to_bits(), want, "{mode}");
    }
    // SAFETY: no function of the module is running or will be called again.
    unsafe { module.free_memory() };
}

/// Typed errors, never panics: names, buffers, element types, lowering operands.
#[test]
fn errors_are_typed() {
    use clconv::arith::{ArithBufferError, ArithParseError};
    use clconv::arith_kernel::ArithError;
    for bad in [
        "",
        "mul",
        "mul(",
        "mul(float4",
        "mul(float4))",
        "mul(float4)x",
        "mull(float4)",
        "mul_rtq(float4)",
        "mul_rtz_rtz(float4)",
        "mul_rtz(int4)",
        "mul_rtz(half)",
        "mul_rtz(float5)",
        "mul_rtz(float1)",
        "mul_rtz(float04)",
        "mul_rtz(float4, float4)",
        "mul_rtz()",
        "convert_int4(float4)",
        "\u{e9}(float)",
    ] {
        let err = ArithRequest::parse(bad).expect_err(bad);
        assert!(!err.to_string().is_empty());
    }
    assert!(matches!(
        ArithRequest::parse("add_rtz(uchar4)"),
        Err(ArithParseError::BadType { .. })
    ));
    assert!(matches!(
        ArithRequest::parse("add_up(float)"),
        Err(ArithParseError::BadRounding { .. })
    ));
    let jit = Jit::new().unwrap();
    assert!(matches!(
        jit.compile_arith("madd(float)"),
        Err(ArithError::Parse(ArithParseError::UnknownOperation { .. }))
    ));
    let k = jit.compile_arith("fma_rtz(float4)").unwrap();
    let x = [1f32; 8];
    let mut out = [0f32; 8];
    assert!(matches!(
        k.run(&[&x, &x], &mut out),
        Err(ArithError::Buffer(ArithBufferError::OperandCount { .. }))
    ));
    assert!(matches!(
        k.run(&[&x, &x, &x[..4]], &mut out),
        Err(ArithError::Buffer(ArithBufferError::LengthMismatch { .. }))
    ));
    assert!(matches!(
        k.run(&[&x[..3], &x[..3], &x[..3]], &mut out[..3]),
        Err(ArithError::Buffer(ArithBufferError::Ragged { .. }))
    ));
    assert!(matches!(
        k.run(&[&[1f64; 4], &[1f64; 4], &[1f64; 4]], &mut [0f64; 4]),
        Err(ArithError::Buffer(ArithBufferError::ElementType { .. }))
    ));
    assert_eq!(k.run(&[&x, &x, &x], &mut out), Ok(()));
    assert_eq!(out, [2f32; 8]);
    let empty: [f32; 0] = [];
    assert_eq!(k.run(&[&empty, &empty, &empty], &mut []), Ok(()));
}

/// The format-generic fma method (what double uses) run on float too, where the kernels use the
/// computation in double: the same inputs as `fma_float_host`, scalar and F32X4, every mode.
#[test]
fn fma_expansion_method_on_float() {
    use clconv::lower::rounded_arith::emit_fma_expansion;
    use counted_loop::counted_loop;
    use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData};
    use cranelift_jit::{JITBuilder, JITModule};
    use cranelift_module::default_libcall_names;

    type Kernel = extern "C" fn(*const f32, *const f32, *const f32, *mut f32, i64);
    let isa = clconv::jit::host_isa(X64Flags::Host).unwrap();
    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let mut ids = Vec::new();
    for mode in Rounding::ALL {
        for ty in [types::F32, types::F32X4] {
            // fn(a, b, c, dst, n): n values of `ty`, one after another.
            let name = format!("fma_{mode}_{ty}");
            let id = define_function(&mut module, &name, &[types::I64; 5], &[], |b| {
                counted_loop(b, |b, p, i| {
                    let offset = b.ins().imul_imm_u(i, ty.bytes() as i64);
                    let args: Vec<_> = (0..3)
                        .map(|k| {
                            let at = b.ins().iadd(p[k], offset);
                            b.ins().load(ty, MemFlagsData::new(), at, 0)
                        })
                        .collect();
                    let r = emit_fma_expansion(b, mode, &args).unwrap();
                    let at = b.ins().iadd(p[3], offset);
                    b.ins().store(MemFlagsData::new(), r, at, 0);
                })
            });
            ids.push((mode, ty.lane_count() as usize, id));
        }
    }
    module.finalize_definitions().unwrap();
    let mut args = inputs(ArithOp::Fma, FloatType::Float, CI_SCALE.0, CI_SCALE.1);
    args.truncate(args.len() / 4 * 4);
    let column =
        |k: usize| -> Vec<f32> { args.iter().map(|a| f32::from_bits(a[k] as u32)).collect() };
    let (a, b, c) = (column(0), column(1), column(2));
    let mut failures = Vec::new();
    for (mode, lanes, id) in ids {
        let mut out = vec![0f32; args.len()];
        // SAFETY: compiled above as fn(i64 x 5) (SystemV); it reads and writes n * lanes floats
        // of buffers that hold args.len() = n * lanes each.
        let f: Kernel = unsafe { std::mem::transmute(module.get_finalized_function(id)) };
        f(
            a.as_ptr(),
            b.as_ptr(),
            c.as_ptr(),
            out.as_mut_ptr(),
            (args.len() / lanes) as i64,
        );
        let request = ArithRequest::new(ArithOp::Fma, FloatType::Float, Width::W1, Some(mode));
        for (k, got) in out.iter().enumerate() {
            let want = element(ArithOp::Fma, FloatType::Float, mode, args[k]);
            if !same_result(FloatType::Float, want, got.to_bits() as u64) {
                failures.push(describe(
                    &request,
                    FloatType::Float,
                    args[k],
                    want,
                    got.to_bits() as u64,
                ));
            }
        }
    }
    // SAFETY: none of the module's functions is running or called again.
    unsafe { module.free_memory() };
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// Every one of the 360 requests compiles, in both layouts, on every x86-64 flag set this
/// machine runs (SSE2 included), and its code can be found again in the JIT's cache.
#[test]
fn every_request_compiles_on_every_flag_set() {
    for flags in X64Flags::ALL {
        let Ok(jit) = Jit::with_options(flags, Extensions::default(), Rounding::Rtp) else {
            continue; // a flag set this CPU lacks
        };
        for request in ArithRequest::all() {
            let first = jit.compile_arith_request(&request);
            let again = jit.compile_arith_request(&request);
            assert!(
                first.is_ok() && again.is_ok(),
                "{request} on {}: {:?}",
                flags.name(),
                first.err()
            );
        }
    }
}

/// The other flag sets (SSE2 baseline, AVX2, AVX-512 where the CPU has it) on a smaller input
/// set: every pair (triple for fma) of specials, 2,000 random bit patterns and the hard ranges.
#[test]
fn other_flag_sets_on_specials_and_random_inputs() {
    for flags in [X64Flags::Sse2, X64Flags::Avx2, X64Flags::Avx512] {
        if Jit::with_options(flags, Extensions::default(), Rounding::Rte).is_err() {
            continue; // a flag set this CPU lacks
        }
        for ty in FloatType::ALL {
            for op in ArithOp::ALL {
                let args = inputs(op, ty, 1, 4);
                check_all_modes(flags, op, ty, &args, "specials and random inputs");
            }
        }
    }
}
