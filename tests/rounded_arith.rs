//! Correctly rounded arithmetic (`clconv::arith`, `clconv::lower::rounded_arith`) checked bit for
//! bit against the reference (`clconv::reference::arith`), NaN results compared as a class.
//!
//! What the CI part covers, for each of add, sub, mul, div, sqrt, fma, on float and double, in
//! each of rte, rtz, rtp, rtn, through the scalar kernel (`op(float)`, scalar F32/F64 code) and
//! the vector kernel (`op(float4)`/`op(double2)`, F32X4/F64X2 code), on the host flag set (FMA
//! instructions) and on `X64Flags::Sse41` (no FMA: libm calls):
//! - the special values and their neighbours (±0, ±min subnormal and its successor, ±max
//!   subnormal, ±MIN normal and its neighbours, ±1 and its neighbours, 1.5, 2, 3, 0.1, ±MAX and
//!   its predecessor, ±inf, quiet and signalling NaNs of both signs): every pair, and for fma
//!   every triple of a 28-value subset (21,952 triples);
//! - random bit patterns (every operand uniformly random over all 2^32 or 2^64 patterns), and
//!   random values in ranges where the hard cases live (exponents near the subnormal boundary,
//!   near overflow, near each other);
//! - structured sweeps: all pairs from a dense grid of floats around 1 (`1 + k ulp` and
//!   `2 - k ulp`), around the subnormal boundary (`MIN ± k ulp`, subnormals), near overflow
//!   (`MAX - k ulp`, `2^(emax/2) ± k ulp` so that products overflow or just do not); for fma,
//!   triples whose product and addend cancel exactly or nearly (`c = -RN(ab) ± k ulp`).
//!
//! Tables of hand-checked cases (the spec's rules: rtz overflow gives MAX, `x - x` is -0 under
//! rtn, ...) come first. The longer sweep (`long_sweep`, ignored) runs the same checks with 50x
//! the random inputs; run it with `cargo test --release --test rounded_arith -- --ignored`.

use clconv::arith::{ArithOp, ArithRequest, FloatType};
use clconv::jit::{Jit, X64Flags};
use clconv::reference::arith::{element, is_nan, same_result};
use clconv::{Extensions, Layout, Rounding, Width};

/// xorshift64*: deterministic, no dependencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

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
    fn from_f64(self, x: f64) -> u64 {
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
            self.from_f64(1.5),
            self.pow2(1),
            self.from_f64(3.0),
            self.from_f64(0.1),
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
            self.from_f64(1.5),
            self.from_f64(3.0),
            self.from_f64(0.1),
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

/// Every case of `args` for `op` on `ty` in every mode, through the scalar and the vector
/// kernels (and a packed and an aligned 3-component one), on `flags`; panics with the first
/// mismatches.
fn check_all_modes(flags: X64Flags, op: ArithOp, ty: FloatType, args: &[[u64; 3]], what: &str) {
    let jit = Jit::with_options(flags, Extensions::default(), Rounding::Rte).unwrap();
    let vector = match ty {
        FloatType::Float => Width::W4,
        FloatType::Double => Width::W2,
    };
    let mut mismatches = Vec::new();
    for mode in Rounding::ALL {
        for (width, layout) in [
            (Width::W1, Layout::Packed),
            (vector, Layout::Packed),
            (Width::W3, Layout::Packed),
            (Width::W3, Layout::Aligned),
        ] {
            mismatches.extend(run_case(&jit, op, ty, mode, width, layout, args));
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

/// The inputs of one operation and type: specials, random patterns, structured sweeps.
fn inputs(op: ArithOp, ty: FloatType, scale: usize) -> Vec<[u64; 3]> {
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
    out.extend(structured(op, ty, &mut rng, scale));
    out
}

/// Grids around 1, the subnormal boundary and overflow; for fma, cancelling triples.
fn structured(op: ArithOp, ty: FloatType, rng: &mut Rng, scale: usize) -> Vec<[u64; 3]> {
    let f = Fmt(ty);
    let bias = f.bias();
    let k = 12u64;
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
                for _ in 0..4 * scale {
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

fn check_op(flags: X64Flags, op: ArithOp, ty: FloatType) {
    let args = inputs(op, ty, 1);
    check_all_modes(
        flags,
        op,
        ty,
        &args,
        "specials, random and structured sweeps",
    );
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
