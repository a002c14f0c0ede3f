//! The reference semantics of the arithmetic requests ([`crate::arith`]), on soft-float
//! (`rustc_apfloat`) and integers, never on the host FPU: `add_r`, `sub_r`, `mul_r`, `div_r`
//! and `mul_add_r` give IEEE-754 results in every rounding mode directly; the square root,
//! which `rustc_apfloat` lacks, comes from an exact integer square root and is then checked by
//! the interval test around `s^2` in a wider format.
//!
//! # Definitions
//!
//! - **Every result** is the IEEE-754 operation rounded once by the mode: overflow gives `±inf`
//!   or `±MAX` as IEEE says (rtz: `±MAX` for finite operands; rtp: `+inf` / `-MAX`; rtn: `+MAX` /
//!   `-inf`), subnormal results are produced (no flush to zero), an exact zero sum is `+0`
//!   except under rtn, where it is `-0` (`x - x`), while `(+0) + (+0)` is `+0` and
//!   `(-0) + (-0)` is `-0` in every mode; `fma`'s exact zero follows the same rule with the
//!   product's sign; `sqrt(-0)` is `-0`.
//! - **NaN results** (a NaN operand, `inf - inf`, `0 * inf`, `0 / 0`, `sqrt` of a negative
//!   number) are NaN; which NaN is the target's choice (the JIT gives the native instruction's
//!   NaN, the same in every mode), so the reference returns the canonical quiet NaN and
//!   [`same_result`] treats any two NaNs as equal. Every other result is compared bit for bit.
//! - **Buffers** follow [`ArithRequest::vector_count`]; an aligned 3-component vector's fourth
//!   element is ignored in the operands and written as zero.
//!
//! ```
//! use clconv::arith::{ArithOp, FloatType};
//! use clconv::reference::arith::element;
//! use clconv::Rounding;
//! let max = f32::MAX.to_bits() as u64;
//! // MAX + MAX toward zero is MAX, not infinity.
//! let r = element(ArithOp::Add, FloatType::Float, Rounding::Rtz, [max, max, 0]);
//! assert_eq!(r, max);
//! // 1.5 - 1.5 rounding down is -0.
//! let x = 1.5f32.to_bits() as u64;
//! assert_eq!(element(ArithOp::Sub, FloatType::Float, Rounding::Rtn, [x, x, 0]), 0x8000_0000);
//! ```

use crate::arith::{ArithBufferError, ArithOp, ArithRequest, FloatType};
use crate::types::{Layout, Rounding};
use rustc_apfloat::ieee::{Double, Quad, Single};
use rustc_apfloat::{Float, Round, Status};
use std::cmp::Ordering;

/// The canonical quiet NaN the reference returns for every NaN result (`0x7fc00000`,
/// `0x7ff8000000000000`).
///
/// ```
/// use clconv::arith::FloatType;
/// use clconv::reference::arith::canonical_nan;
/// assert_eq!(canonical_nan(FloatType::Float), 0x7fc0_0000);
/// ```
pub const fn canonical_nan(ty: FloatType) -> u64 {
    match ty {
        FloatType::Float => 0x7fc0_0000,
        FloatType::Double => 0x7ff8_0000_0000_0000,
    }
}

/// True when `bits` is a NaN of type `ty`.
///
/// ```
/// use clconv::arith::FloatType;
/// use clconv::reference::arith::is_nan;
/// assert!(is_nan(FloatType::Float, 0xffc0_0000));
/// assert!(!is_nan(FloatType::Float, 0x7f80_0000)); // +inf
/// ```
pub const fn is_nan(ty: FloatType, bits: u64) -> bool {
    match ty {
        FloatType::Float => (bits as u32) & 0x7fff_ffff > 0x7f80_0000,
        FloatType::Double => bits & 0x7fff_ffff_ffff_ffff > 0x7ff0_0000_0000_0000,
    }
}

/// True when a computed result `got` is what the reference's `expected` promises: the same
/// bits, or both NaN (see the module docs).
///
/// ```
/// use clconv::arith::FloatType;
/// use clconv::reference::arith::same_result;
/// assert!(same_result(FloatType::Float, 0x7fc0_0000, 0xffc0_0000)); // NaN is NaN
/// assert!(!same_result(FloatType::Float, 0x0000_0000, 0x8000_0000)); // +0 is not -0
/// ```
pub const fn same_result(ty: FloatType, expected: u64, got: u64) -> bool {
    expected == got || (is_nan(ty, expected) && is_nan(ty, got))
}

/// One element: `op` on the operand bits `args` (`[a, b, c]`; operands the operation does not
/// take are ignored), rounded by `mode`. Bits above the type's width are ignored.
///
/// ```
/// use clconv::arith::{ArithOp, FloatType};
/// use clconv::reference::arith::element;
/// use clconv::Rounding;
/// let bits = |x: f64| x.to_bits();
/// // 1/3 rounded up and down differ by one ulp.
/// let up = element(ArithOp::Div, FloatType::Double, Rounding::Rtp, [bits(1.0), bits(3.0), 0]);
/// let down = element(ArithOp::Div, FloatType::Double, Rounding::Rtn, [bits(1.0), bits(3.0), 0]);
/// assert_eq!(up, down + 1);
/// ```
pub fn element(op: ArithOp, ty: FloatType, mode: Rounding, args: [u64; 3]) -> u64 {
    let round = apfloat_round(mode);
    match ty {
        FloatType::Float => {
            let [a, b, c] = args.map(|x| Single::from_bits(u128::from(x as u32)));
            let r = compute(op, round, a, b, c, sqrt_single);
            finish(ty, r.to_bits() as u64, r.is_nan())
        }
        FloatType::Double => {
            let [a, b, c] = args.map(|x| Double::from_bits(u128::from(x)));
            let r = compute(op, round, a, b, c, sqrt_double);
            finish(ty, r.to_bits() as u64, r.is_nan())
        }
    }
}

fn finish(ty: FloatType, bits: u64, nan: bool) -> u64 {
    if nan {
        canonical_nan(ty)
    } else {
        bits
    }
}

fn compute<F: Float>(op: ArithOp, round: Round, a: F, b: F, c: F, sqrt: fn(F, Round) -> F) -> F {
    match op {
        ArithOp::Add => a.add_r(b, round).value,
        ArithOp::Sub => a.sub_r(b, round).value,
        ArithOp::Mul => a.mul_r(b, round).value,
        ArithOp::Div => a.div_r(b, round).value,
        ArithOp::Fma => a.mul_add_r(b, c, round).value,
        ArithOp::Sqrt => sqrt(a, round),
    }
}

fn apfloat_round(r: Rounding) -> Round {
    match r {
        Rounding::Rte => Round::NearestTiesToEven,
        Rounding::Rtz => Round::TowardZero,
        Rounding::Rtp => Round::TowardPositive,
        Rounding::Rtn => Round::TowardNegative,
    }
}

fn sqrt_single(a: Single, round: Round) -> Single {
    sqrt_checked::<Single, Double>(a, round, 23, 127)
}

fn sqrt_double(a: Double, round: Round) -> Double {
    sqrt_checked::<Double, Quad>(a, round, 52, 1023)
}

/// The square root by exact integer arithmetic, then the interval test in `W` (which holds the
/// squares of `F`'s values and of the midpoints between them exactly); should the candidate fail
/// the test, its neighbours are tried, so the test has the last word.
fn sqrt_checked<F: Float + rustc_apfloat::FloatConvert<W>, W: Float>(
    a: F,
    round: Round,
    mant: u32,
    bias: i32,
) -> F {
    if a.is_nan() || (a.is_negative() && !a.is_zero()) {
        return F::NAN;
    }
    if a.is_zero() || a.is_infinite() {
        // sqrt(±0) = ±0, sqrt(+inf) = +inf.
        return a;
    }
    let candidate = sqrt_candidate::<F>(a.to_bits(), round, mant, bias);
    let down = candidate.next_down().value;
    let up = candidate.next_up().value;
    [candidate, down, up]
        .into_iter()
        .find(|&s| sqrt_interval_test::<F, W>(a, s, round))
        .unwrap_or(candidate)
}

/// `sqrt(a)` for a positive finite `a`: `a = m 2^e` with `m` normalised and `e` even, the integer
/// root `R = isqrt(m 4^k)` with `k` chosen so that `R` has at least `p + 2` bits, and
/// `2R + sticky` (sticky = inexact) rounded by the mode, which rounds like the exact root.
fn sqrt_candidate<F: Float>(bits: u128, round: Round, mant: u32, bias: i32) -> F {
    let field = (bits >> mant) as i32 & (2 * bias + 1);
    let fraction = bits & ((1u128 << mant) - 1);
    let (mut m, mut e) = if field == 0 {
        (fraction, 1 - bias - mant as i32)
    } else {
        (fraction | (1u128 << mant), field - bias - mant as i32)
    };
    while m >> mant == 0 {
        m <<= 1;
        e -= 1;
    }
    if e % 2 != 0 {
        m <<= 1;
        e -= 1;
    }
    let k = mant / 2 + 2;
    let n = m << (2 * k);
    let root = n.isqrt();
    let sticky = u128::from(root * root != n);
    let scaled = F::from_u128_r(2 * root + sticky, round).value;
    // sqrt(a) = (2 root + sticky)/2 * 2^(e/2 - k); the root is a normal number, so scaling by a
    // power of two after the rounding is exact.
    scaled.scalbn(e / 2 - k as i32 - 1)
}

/// The interval test: `s` is `sqrt(a)` rounded by `round` iff, with `s-` and `s+` its
/// neighbours and every square exact in `W`:
/// rtn/rtz: `s^2 <= a < (s+)^2`; rtp: `(s-)^2 < a <= s^2`; rte: `((s- + s)/2)^2 < a <
/// ((s + s+)/2)^2` (a square root is never exactly halfway between two floats).
///
/// ```
/// use clconv::reference::arith::sqrt_is_correct;
/// use clconv::arith::FloatType;
/// use clconv::Rounding;
/// let two = 2.0f64.to_bits();
/// let s = std::f64::consts::SQRT_2.to_bits(); // sqrt(2) rounded to nearest, which is up
/// assert!(sqrt_is_correct(FloatType::Double, Rounding::Rte, two, s));
/// assert!(sqrt_is_correct(FloatType::Double, Rounding::Rtp, two, s));
/// assert!(!sqrt_is_correct(FloatType::Double, Rounding::Rtz, two, s));
/// assert!(sqrt_is_correct(FloatType::Double, Rounding::Rtz, two, s - 1));
/// ```
pub fn sqrt_is_correct(ty: FloatType, mode: Rounding, a: u64, s: u64) -> bool {
    let round = apfloat_round(mode);
    match ty {
        FloatType::Float => {
            let a = Single::from_bits(u128::from(a as u32));
            let s = Single::from_bits(u128::from(s as u32));
            if a.is_nan() || a.is_infinite() || a.is_zero() || a.is_negative() {
                return sqrt_single(a, round).bitwise_eq(s) || (s.is_nan() && a.is_negative());
            }
            sqrt_interval_test::<Single, Double>(a, s, round)
        }
        FloatType::Double => {
            let a = Double::from_bits(u128::from(a));
            let s = Double::from_bits(u128::from(s));
            if a.is_nan() || a.is_infinite() || a.is_zero() || a.is_negative() {
                return sqrt_double(a, round).bitwise_eq(s) || (s.is_nan() && a.is_negative());
            }
            sqrt_interval_test::<Double, Quad>(a, s, round)
        }
    }
}

fn sqrt_interval_test<F: Float + rustc_apfloat::FloatConvert<W>, W: Float>(
    a: F,
    s: F,
    round: Round,
) -> bool {
    if !s.is_finite_non_zero() || s.is_negative() {
        return false;
    }
    let widen = |x: F| -> W {
        let mut loses = false;
        x.convert(&mut loses).value
    };
    // Every product and sum below is exact in W (asserted by the status), so the comparisons
    // are comparisons of exact values.
    let exact = |r: rustc_apfloat::StatusAnd<W>| -> Option<W> {
        (r.status == Status::OK).then_some(r.value)
    };
    let square = |x: W| exact(x.mul_r(x, Round::NearestTiesToEven));
    let half = |x: W, y: W| {
        let sum = exact(x.add_r(y, Round::NearestTiesToEven))?;
        Some(sum.scalbn(-1))
    };
    let wa = widen(a);
    let ws = widen(s);
    let wdown = widen(s.next_down().value);
    let wup = widen(s.next_up().value);
    let cmp = |x: Option<W>, y: W| x.and_then(|x| x.partial_cmp(&y));
    match round {
        Round::TowardZero | Round::TowardNegative => {
            matches!(cmp(square(ws), wa), Some(Ordering::Less | Ordering::Equal))
                && cmp(square(wup), wa) == Some(Ordering::Greater)
        }
        Round::TowardPositive => {
            cmp(square(wdown), wa) == Some(Ordering::Less)
                && matches!(
                    cmp(square(ws), wa),
                    Some(Ordering::Greater | Ordering::Equal)
                )
        }
        _ => {
            let low = half(wdown, ws).and_then(square);
            let high = half(ws, wup).and_then(square);
            cmp(low, wa) == Some(Ordering::Less) && cmp(high, wa) == Some(Ordering::Greater)
        }
    }
}

/// Evaluates `request` over whole buffers: `inputs` holds one buffer per operand; a request
/// without a mode follows `static_mode`. Returns the number of vectors.
///
/// ```
/// use clconv::arith::ArithRequest;
/// use clconv::reference::arith::evaluate;
/// use clconv::{Layout, Rounding};
/// let r = ArithRequest::parse("fma_rtz(float2)").unwrap();
/// let le = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
/// let (a, b, c) = (le(&[2.0, 1e20]), le(&[3.0, 1e20]), le(&[1.0, f32::MAX]));
/// let mut d = [0u8; 8];
/// assert_eq!(evaluate(&r, Layout::Packed, Rounding::Rte, &[&a, &b, &c], &mut d), Ok(1));
/// assert_eq!(d, le(&[7.0, f32::MAX])[..]); // 1e40 + MAX overflows, and rtz gives MAX
/// ```
pub fn evaluate(
    request: &ArithRequest,
    layout: Layout,
    static_mode: Rounding,
    inputs: &[&[u8]],
    dst: &mut [u8],
) -> Result<usize, ArithBufferError> {
    let lens: Vec<usize> = inputs.iter().map(|s| s.len()).collect();
    let vectors = request.vector_count(layout, &lens, dst.len())?;
    let mode = request.effective_rounding(static_mode);
    let ty = request.elem();
    let eb = ty.bytes();
    let stride = layout.stride(request.width());
    let lanes = request.width().lanes();
    for v in 0..vectors {
        for slot in 0..stride {
            let at = (v * stride + slot) * eb;
            let out = &mut dst[at..at + eb];
            if slot >= lanes {
                out.fill(0);
                continue;
            }
            let mut args = [0u64; 3];
            for (arg, input) in args.iter_mut().zip(inputs) {
                let mut raw = [0u8; 8];
                raw[..eb].copy_from_slice(&input[at..at + eb]);
                *arg = u64::from_le_bytes(raw);
            }
            let r = element(request.op(), ty, mode, args);
            out.copy_from_slice(&r.to_le_bytes()[..eb]);
        }
    }
    Ok(vectors)
}
