//! integer -> float/half: `convert_float_rtp(long)`, `convert_double_rtz(ulong)`,
//! `convert_half_rtn(int)`, ...
//!
//! rte, and every conversion whose source always fits the destination's precision (8/16-bit
//! integers to float, anything up to 32 bits to double), is Cranelift's own `fcvt_from_*`,
//! which rounds to nearest-even.
//!
//! Directed modes use Mesa's exact pre-truncation on the magnitude:
//! 1. Split the source into sign and magnitude `m` (a u64; |LONG_MIN| = 2^63 fits).
//! 2. Clear the bits of `m` below the destination's precision `p` (24 or 53):
//!    `t = m & (!0 << max(0, bitlen(m) - p))`. `t` is the largest float <= m, so converting it
//!    is exact whatever the conversion's own rounding.
//! 3. Rounding the magnitude down (rtz; rtn of a positive; rtp of a negative) is `t`. Rounding
//!    it up, when `t != m`, is the next float above `t`: its bit pattern plus one. Stepping in the
//!    float domain cannot overflow the integer (u64::MAX rounds up to exactly 2^64) and crosses
//!    exponent boundaries correctly (2^24 - 1 rounds up to 2^24).
//! 4. Negate for a negative source. Zero converts to +0.0.
//!
//! 64-bit sources skip the conversion instruction (x64's u64 -> float is a branchy sequence) and
//! build the result's bits from `clz` and shifts instead: `directed_from_magnitude_bits`.
//!
//! Hard inputs: 2^24+1, 2^53+1, INT_MAX, UINT_MAX, LONG_MAX, ULONG_MAX, LONG_MIN, 0.
//!
//! half: the magnitude goes to float rounded to odd (the truncation with its lowest bit set when
//! anything was cut off), then float -> half rounds by the mode. Round-to-odd with 24 >= 11 + 2
//! bits makes the second rounding exact, so there is no double rounding.

use super::block::BlockSpec;
use super::float_to_float::demote_pairs;
use super::lanes::{each, each_pair};
use super::values::element_type;
use super::values::{bitcast_le, int_const, step_by_signed_mask};
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// Emits `convert_<dst>[_sat]_<rounding>(<src>)` on one element of integer type `src`; a
/// destination narrower than float is returned as its bits (`saturate`: `_sat` into bfloat or
/// an 8-bit float).
pub fn emit(
    b: &mut FunctionBuilder,
    src: ScalarType,
    dst: ScalarType,
    rounding: Rounding,
    saturate: bool,
    x: Value,
) -> Value {
    if let Some(fmt) = super::small_float::SmallFloat::of(dst) {
        return to_small_float(b, src, fmt, rounding, saturate, x);
    }
    let fty = element_type(dst);
    let precision = if dst == ScalarType::Float { 24 } else { 53 };
    let magnitude_bits = if src.is_signed_integer() {
        src.bits() - 1
    } else {
        src.bits()
    };
    if rounding == Rounding::Rte || magnitude_bits <= precision {
        return convert_nearest(b, src, fty, x);
    }
    let (negative, m) = sign_and_magnitude(b, src, x);
    if src.bits() == 64 {
        return directed_from_magnitude_bits(b, fty, rounding, negative, m);
    }
    let t = truncate_to_precision(b, m, precision);
    let tf = convert_exact_u64(b, src, fty, t);
    let inexact = b.ins().icmp(IntCC::NotEqual, t, m);
    let up = magnitude_rounds_up(b, rounding, negative, inexact);
    let ity = if fty == types::F32 {
        types::I32
    } else {
        types::I64
    };
    let bits = bitcast_le(b, ity, tf);
    let step = b.ins().uextend(ity, up);
    let bits = b.ins().iadd(bits, step);
    let magnitude = bitcast_le(b, fty, bits);
    match negative {
        Some(neg) => {
            let negated = b.ins().fneg(magnitude);
            b.ins().select(neg, negated, magnitude)
        }
        None => magnitude,
    }
}

/// long/ulong -> float/double in a directed mode, building the result's bits from the
/// magnitude `m` without a conversion instruction (x64's u64 -> float is a branchy sequence):
/// normalise `m` so its leading one is bit 63 (`n = clz(m)`), keep the top p bits as the
/// significand (leading one included, so adding it to `(bias + 63 - n - 1) << (p - 1)` also
/// adds the missing 1 to the exponent), step one ulp up where the mode rounds the magnitude up
/// and any bit below the top p is set (a carry out of the significand correctly moves to the
/// next binade: u64::MAX rounds up to 2^64), then copy the sign. `m = 0` gives +0.0.
fn directed_from_magnitude_bits(
    b: &mut FunctionBuilder,
    fty: Type,
    rounding: Rounding,
    negative: Option<Value>,
    m: Value,
) -> Value {
    // (p, exponent bias) for float and double.
    let (precision, bias) = if fty == types::F32 {
        (24i64, 127i64)
    } else {
        (53, 1023)
    };
    let leading = b.ins().clz(m);
    // n = 64 for m = 0: the shift amount wraps to 0 and the zero select below takes over.
    let normalised = b.ins().ishl(m, leading);
    let significand = b.ins().ushr_imm_u(normalised, 64 - precision);
    let bits = if fty == types::F32 {
        // (top - n) << 23 as (top << 23) - (n << 23): the constant, 32 bits wide, folds into the
        // addition (one `lea` on x86-64), one instruction fewer per element than subtracting
        // first. (top << 52 for double is a 64-bit constant: three more on RISC-V.)
        let top = int_const(b, types::I64, ((bias + 63 - 1) << (precision - 1)) as i128);
        let biased = b.ins().iadd(significand, top);
        let exponent = b.ins().ishl_imm_u(leading, precision - 1);
        b.ins().isub(biased, exponent)
    } else {
        let top = int_const(b, types::I64, (bias + 63 - 1) as i128);
        let exponent = b.ins().isub(top, leading);
        let exponent = b.ins().ishl_imm_u(exponent, precision - 1);
        b.ins().iadd(exponent, significand)
    };
    let below = b.ins().ishl_imm_u(normalised, precision);
    let inexact = b.ins().icmp_imm_u(IntCC::NotEqual, below, 0);
    let up = magnitude_rounds_up(b, rounding, negative, inexact);
    let up = b.ins().uextend(types::I64, up);
    let bits = b.ins().iadd(bits, up);
    let bits = match negative {
        Some(neg) => {
            let sign = b.ins().uextend(types::I64, neg);
            let sign = b.ins().ishl_imm_u(sign, fty.bits() as i64 - 1);
            b.ins().bor(bits, sign)
        }
        None => bits,
    };
    let zero = int_const(b, types::I64, 0);
    let is_zero = b.ins().icmp_imm_u(IntCC::Equal, m, 0);
    let bits = b.ins().select(is_zero, zero, bits);
    if fty == types::F32 {
        let narrow = b.ins().ireduce(types::I32, bits);
        bitcast_le(b, fty, narrow)
    } else {
        bitcast_le(b, fty, bits)
    }
}

fn convert_nearest(b: &mut FunctionBuilder, src: ScalarType, fty: Type, x: Value) -> Value {
    if src.is_signed_integer() {
        b.ins().fcvt_from_sint(fty, x)
    } else {
        b.ins().fcvt_from_uint(fty, x)
    }
}

/// (is the source negative, its magnitude as I64). `None` for unsigned sources.
fn sign_and_magnitude(
    b: &mut FunctionBuilder,
    src: ScalarType,
    x: Value,
) -> (Option<Value>, Value) {
    if !src.is_signed_integer() {
        let m = if src.bits() < 64 {
            b.ins().uextend(types::I64, x)
        } else {
            x
        };
        return (None, m);
    }
    let wide = if src.bits() < 64 {
        b.ins().sextend(types::I64, x)
    } else {
        x
    };
    let zero = int_const(b, types::I64, 0);
    let negative = b.ins().icmp(IntCC::SignedLessThan, wide, zero);
    let negated = b.ins().ineg(wide);
    // |LONG_MIN| wraps to LONG_MIN, whose bits are 2^63: right as an unsigned magnitude.
    let m = b.ins().select(negative, negated, wide);
    (Some(negative), m)
}

/// `m` with the bits below the top `precision` significant bits cleared.
fn truncate_to_precision(b: &mut FunctionBuilder, m: Value, precision: u32) -> Value {
    let leading = b.ins().clz(m);
    // bitlen(m) - p = (64 - p) - clz(m), clamped at 0 (m = 0 gives clz = 64).
    let spare = int_const(b, types::I64, (64 - precision) as i128);
    let shift = b.ins().isub(spare, leading);
    let zero = int_const(b, types::I64, 0);
    let shift = b.ins().smax(shift, zero);
    let ones = int_const(b, types::I64, -1);
    let mask = b.ins().ishl(ones, shift);
    b.ins().band(m, mask)
}

/// Converts a magnitude known to be exactly representable.
fn convert_exact_u64(b: &mut FunctionBuilder, src: ScalarType, fty: Type, t: Value) -> Value {
    if src.bits() < 64 {
        // Below 2^63: the signed conversion is exact and cheaper than the unsigned one on x64.
        b.ins().fcvt_from_sint(fty, t)
    } else {
        b.ins().fcvt_from_uint(fty, t)
    }
}

/// Whether the magnitude must round up (away from zero): directed modes mirror for negatives.
fn magnitude_rounds_up(
    b: &mut FunctionBuilder,
    rounding: Rounding,
    negative: Option<Value>,
    inexact: Value,
) -> Value {
    let away_if_negative = rounding == Rounding::Rtn;
    let away_if_positive = rounding == Rounding::Rtp;
    let away = match negative {
        None => int_const(b, types::I8, away_if_positive as i128),
        Some(neg) => {
            if away_if_negative == away_if_positive {
                int_const(b, types::I8, away_if_positive as i128)
            } else if away_if_negative {
                neg
            } else {
                b.ins().bxor_imm_u(neg, 1)
            }
        }
    };
    b.ins().band(away, inexact)
}

/// Through float rounded to odd (exact for the final rounding: 24 bits >= 11 + 2), then by
/// the mode into the small float.
fn to_small_float(
    b: &mut FunctionBuilder,
    src: ScalarType,
    fmt: super::small_float::SmallFloat,
    rounding: Rounding,
    saturate: bool,
    x: Value,
) -> Value {
    let (negative, m) = sign_and_magnitude(b, src, x);
    let t = truncate_to_precision(b, m, 24);
    let tf = convert_exact_u64(b, src, types::F32, t);
    let bits = bitcast_le(b, types::I32, tf);
    // Round to odd: set the lowest kept bit when anything was cut off.
    let inexact = b.ins().icmp(IntCC::NotEqual, t, m);
    let sticky = b.ins().uextend(types::I32, inexact);
    let mut bits = b.ins().bor(bits, sticky);
    if let Some(neg) = negative {
        let sign = b.ins().uextend(types::I32, neg);
        let sign = b.ins().ishl_imm_u(sign, 31);
        bits = b.ins().bor(bits, sign);
    }
    super::small_float::from_f32_bits(b, fmt, bits, rounding, saturate)
}

/// Vector recipe `int_to_float.exact`: sources whose every value is a float of the
/// destination (8/16-bit integers to float, up to 32-bit integers to double), in any mode.
/// Widen to 32-bit lanes, then `fcvt_from_*` I32X4 -> F32X4, or for double the
/// `fcvt_from_*.f64x2(*widen_low(I32X4))` idiom that x64 lowers to `cvtdq2pd` (the plain
/// I32X4 -> F64X2 conversion miscompiles there).
pub fn vector_exact(b: &mut FunctionBuilder, spec: &BlockSpec, inputs: &[Value]) -> Vec<Value> {
    use super::lanes;
    let src = spec.src;
    let signed = src.is_signed_integer();
    let ints = lanes::widen_to(b, inputs.to_vec(), src.bits(), 32, signed);
    let unsigned32 = src == ScalarType::UInt;
    if spec.dst == ScalarType::Float {
        return ints
            .into_iter()
            .map(|v| b.ins().fcvt_from_sint(types::F32X4, v))
            .collect();
    }
    let mut out = Vec::with_capacity(ints.len() * 2);
    for v in ints {
        let high = lanes::high_half_to_low(b, v);
        for half in [v, high] {
            out.push(if unsigned32 {
                let w = b.ins().uwiden_low(half);
                b.ins().fcvt_from_uint(types::F64X2, w)
            } else {
                let w = b.ins().swiden_low(half);
                b.ins().fcvt_from_sint(types::F64X2, w)
            });
        }
    }
    out
}

/// Vector recipe `int_to_float.native_rte`: int/uint to float in rte, one `fcvt_from_*`
/// I32X4 -> F32X4 (`cvtdq2ps`; `vcvtudq2ps` for uint with AVX-512VL).
pub fn vector_native_rte(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    each(b, inputs, |b, x| {
        convert_nearest(b, spec.src, types::F32X4, x)
    })
}

/// Vector recipe `int_to_float.convert_back` (x86-64: `x86_cvtt2dq` is `cvttps2dq`): int to
/// float in rtz, rtp or rtn, eight SSE2 instructions per four elements against the split
/// sum's twelve.
///
/// 1. f = the nearest-even float (`cvtdq2ps`).
/// 2. t = f converted back, truncating (`cvttps2dq`): f is an integer in [-2^31, 2^31], so t
///    is f itself, except f = 2^31, which reads back as INT_MIN = -2^31, the same value
///    modulo 2^32.
/// 3. e = x - t in wrapping 32-bit arithmetic is x - f exactly: the true difference is at most
///    half an ulp of f (64 at 2^31), so its residue modulo 2^32 is itself.
/// 4. Step f one ulp by the mode when e points the other way, as [`step_by_error`] does
///    (+1 on the bit pattern is away from zero, -1 toward it; f != 0 wherever e != 0).
///
/// Hard inputs: INT_MAX and 2^31 - 64 (f = 2^31, t = INT_MIN), INT_MIN (exact), 2^24 + 1
/// (the first inexact), -2^24 - 1, 0.
///
/// ```
/// # #[cfg(feature = "jit")] {
/// // On x86-64 this is the builder API's recipe for convert_float4_rtp(int4); the JIT's batch
/// // kernel (int_to_float.by_control) gives the same results.
/// let jit = clconv::jit::Jit::new().unwrap();
/// let k = jit.compile("convert_float4_rtp(int4)").unwrap();
/// let mut out = [0f32; 4];
/// k.run(&[16_777_217i32, -16_777_217, i32::MAX, 0][..], &mut out[..]).unwrap();
/// assert_eq!(out, [16_777_218.0, -16_777_216.0, 2_147_483_648.0, 0.0]);
/// # }
/// ```
pub fn vector_convert_back(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes::splat_bits;
    if spec.rounding == Rounding::Rte {
        return vector_native_rte(b, spec, inputs);
    }
    let ty = types::I32X4;
    let zero = splat_bits(b, ty, 0);
    let one = splat_bits(b, ty, 1);
    step_nearest(b, spec, inputs, types::F32X4, |b, x, f| {
        let t = b.ins().x86_cvtt2dq(ty, f);
        let e = b.ins().isub(x, t);
        let bits = bitcast_le(b, ty, f);
        // -1 in the lanes where f is negative, 0 elsewhere.
        let f_neg = b.ins().sshr_imm_u(bits, 31);
        match spec.rounding {
            // Up where f < x: +1 on a positive f, -1 on a negative one.
            Rounding::Rtp => {
                let below = b.ins().icmp(IntCC::SignedGreaterThan, e, zero);
                let dir = b.ins().bor(f_neg, one);
                let delta = b.ins().band(below, dir);
                b.ins().iadd(bits, delta)
            }
            // Down where f > x: -1 on a positive f, +1 on a negative one.
            Rounding::Rtn => {
                let above = b.ins().icmp(IntCC::SignedLessThan, e, zero);
                let dir = b.ins().bor(f_neg, one);
                let delta = b.ins().band(above, dir);
                b.ins().isub(bits, delta)
            }
            // Toward zero where |f| > |x|: e with f's sign taken out is negative there.
            Rounding::Rtz => {
                let flipped = b.ins().bxor(e, f_neg);
                let e_away = b.ins().isub(flipped, f_neg);
                let beyond = b.ins().icmp(IntCC::SignedLessThan, e_away, zero);
                b.ins().iadd(bits, beyond)
            }
            Rounding::Rte => unreachable!("returned above"),
        }
    })
}

/// The loop both convert-back recipes share ([`vector_convert_back`] on x86-64,
/// [`vector_convert_back_sat`] on aarch64): per source vector `x`, `f` = its nearest-even
/// conversion to `fty` lanes; in rte that is the result, in rtz, rtp and rtn `step(b, x, f)`
/// gives `f`'s bits stepped one ulp by the mode (each recipe finds the direction its own way:
/// the conversions back differ between the two ISAs).
fn step_nearest(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
    fty: Type,
    mut step: impl FnMut(&mut FunctionBuilder, Value, Value) -> Value,
) -> Vec<Value> {
    each(b, inputs, |b, x| {
        let f = convert_nearest(b, spec.src, fty, x);
        if spec.rounding == Rounding::Rte {
            return f;
        }
        let bits = step(b, x, f);
        bitcast_le(b, fty, bits)
    })
}

/// Vector recipe `int_to_float.by_control` (x86-64 batch kernels, directed modes): the
/// nearest-even sequences, run with the rounding control (MXCSR.RC) set to the mode, so the one
/// rounding they make is the mode's.
///
/// - int/uint -> float: one `fcvt_from_*` I32X4 -> F32X4 (`cvtdq2ps`; for uint `vcvtudq2ps`,
///   or without AVX-512VL Cranelift's sequence, whose halves convert exactly and whose one
///   addition rounds).
/// - long/ulong -> double: (hi * 2^32 - 2^52) + (2^52 + lo) as in `sum_64_nearest`, whose
///   addition is the one rounding.
/// - long/ulong -> float: the same double, then `fvdemote`: two roundings, but in the same
///   direction, and rounding down (up, toward zero) to the double grid and then to the float
///   grid, which is a subset of it, rounds down (up, toward zero) to the float grid.
/// - rtn only: 0 sums to -2^52 + 2^52, an exact zero, which IEEE 754 makes -0 when rounding
///   down; an integer converts to +0, so a zero result has its sign cleared (for ulong, never
///   negative, every result's).
///
/// Hard inputs: 2^24 + 1 and 2^53 + 1 (the first inexact), INT_MAX, UINT_MAX, LONG_MIN,
/// ULONG_MAX (rtp: 2^64), 0.
///
/// ```
/// # #[cfg(feature = "jit")] {
/// // On x86-64, convert_float4_rtn(long4) is this recipe (lowering-tables/x86_64.table).
/// let jit = clconv::jit::Jit::new().unwrap();
/// let k = jit.compile("convert_float4_rtn(long4)").unwrap();
/// let mut out = [1f32; 4];
/// k.run(&[0i64, -16_777_217, i64::MAX, i64::MIN][..], &mut out[..]).unwrap();
/// assert_eq!(out.map(f32::to_bits), [0, (-16_777_218f32).to_bits(), 0x5eff_ffff, 0xdf00_0000]);
/// # }
/// ```
pub fn vector_by_control(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    let results = nearest_by_control(b, spec, inputs, |b, x| sum_64_nearest(b, spec.src, x));
    if spec.src.bits() == 32 || spec.rounding != Rounding::Rtn {
        return results;
    }
    each(b, &results, |b, r| {
        if spec.src.is_signed_integer() {
            clear_sign_of_zero(b, r)
        } else {
            // Never negative: clearing the sign bit is enough (one `pand`).
            clear_sign(b, r)
        }
    })
}

/// Vector recipe `int_to_float.native_by_control` (aarch64 batch kernels in rtz, rtp or rtn,
/// run with FPCR.RMode set to the mode, as the AOT entry point does): the conversion
/// instructions round by the control.
///
/// - int/uint -> float: one `scvtf`/`ucvtf .4s` per four elements.
/// - long/ulong -> double: one `scvtf`/`ucvtf .2d` per two.
/// - long/ulong -> float: `.2d` then `fcvtn`: two roundings in the same direction, which are
///   one. Every float is a double and a directed rounding is monotone, so the double the
///   first rounding gives lies between x and the float the mode picks for x (or is that
///   float), and the second rounding picks the same float.
///
/// A zero converts to +0 in every mode (an exact zero result is +0), so rtn needs no sign
/// fix-up, unlike the x86-64 split sum's `x + (-x)`.
///
/// Hard inputs: 2^24 + 1 and 2^53 + 1 (the first inexact), INT_MAX, LONG_MIN, ULONG_MAX (rtp:
/// 2^64), -1 and 0 under rtn.
pub fn vector_native_by_control(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    nearest_by_control(b, spec, inputs, |b, x| {
        convert_nearest(b, spec.src, types::F64X2, x)
    })
}

/// What both by-control recipes ([`vector_by_control`], [`vector_native_by_control`]) emit
/// before any fix-up: the nearest-even sequences, which the rounding control makes the mode's.
/// int/uint -> float: `fcvt_from_*` I32X4 -> F32X4; long/ulong -> double: `double(b, x)` per
/// source vector; long/ulong -> float: those doubles demoted (`fvdemote`).
fn nearest_by_control(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
    double: impl FnMut(&mut FunctionBuilder, Value) -> Value,
) -> Vec<Value> {
    if spec.src.bits() == 32 {
        return vector_native_rte(b, spec, inputs);
    }
    let doubles = each(b, inputs, double);
    if spec.dst == ScalarType::Double {
        return doubles;
    }
    demote_pairs(b, &doubles, Rounding::Rte)
}

/// `v` (F32X4 or F64X2) with every lane's sign bit cleared.
fn clear_sign(b: &mut FunctionBuilder, v: Value) -> Value {
    use super::lanes::{int_vector, splat_bits};
    let fty = b.func.dfg.value_type(v);
    let ity = int_vector(fty.lane_bits());
    let magnitude = splat_bits(b, ity, (1 << (fty.lane_bits() - 1)) - 1);
    let bits = bitcast_le(b, ity, v);
    let bits = b.ins().band(bits, magnitude);
    bitcast_le(b, fty, bits)
}

/// Vector recipe `int_to_float.ulong_halves_by_control` (x86-64 batch kernels with
/// AVX-512VL, ulong -> float rtz/rtn, run with MXCSR.RC set to the mode): per four elements,
/// the high and low 32-bit halves gathered into two I32X4 (`shufps`), each converted by
/// `vcvtudq2ps` (rounding down), then f = hi' * 2^32 + lo' (the product exact, the sum
/// rounding down): 7 instructions against the split sum's 20.
///
/// Rounding down twice is rounding down once here. If hi >= 2^24, F = hi' * 2^32 is the
/// largest float <= hi * 2^32, and u = hi * 2^32 + lo < F + ulp(F) (hi - hi' <= ulp(hi') - 1,
/// lo < 2^32), so F <= F + lo' <= u < F + ulp(F) and the sum rounds to F, which is the largest
/// float <= u. If hi < 2^24, hi * 2^32 is exact; lo - lo' < 2^8 while every float from 2^32 up
/// is a multiple of 2^9, so no float lies in (hi * 2^32 + lo', u] and both round down to the
/// same float. hi = 0: f = lo', +0 for 0 (+0 + +0 is +0 in every mode). Rounding up twice is
/// not rounding up once (rtp keeps [`vector_by_control`]), nor are signed sources, whose
/// negative values round away from zero under rtn.
///
/// Hard inputs: 2^24 + 1, 2^32 - 1, 2^32 + 2^8 - 1, 2^56 - 1, ULONG_MAX, 0.
pub fn vector_ulong_halves_by_control(
    b: &mut FunctionBuilder,
    _spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes::{shuffle_bytes, splat_bits};
    // Dwords 0 and 2 of each input (the low halves), resp. 1 and 3 (the high halves).
    let dwords = |first: u8| -> [u8; 16] {
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            let lane = (i / 4) as u8;
            let source = if lane < 2 { 0 } else { 16 };
            *m = source + (lane % 2) * 8 + first * 4 + (i % 4) as u8;
        }
        mask
    };
    let two32 = splat_bits(b, types::F32X4, 0x4f80_0000); // 2^32
    each_pair(b, inputs, |b, x0, x1| {
        let lo = shuffle_bytes(b, x0, x1, dwords(0));
        let hi = shuffle_bytes(b, x0, x1, dwords(1));
        let lo = bitcast_le(b, types::I32X4, lo);
        let hi = bitcast_le(b, types::I32X4, hi);
        let lo = b.ins().fcvt_from_uint(types::F32X4, lo);
        let hi = b.ins().fcvt_from_uint(types::F32X4, hi);
        let hi = b.ins().fmul(hi, two32);
        b.ins().fadd(hi, lo)
    })
}

/// `v` (F32X4 or F64X2) with -0 lanes made +0.
fn clear_sign_of_zero(b: &mut FunctionBuilder, v: Value) -> Value {
    use super::lanes::{int_vector, splat_bits};
    use cranelift_codegen::ir::condcodes::FloatCC;
    let fty = b.func.dfg.value_type(v);
    let ity = int_vector(fty.lane_bits());
    let zero = splat_bits(b, fty, 0);
    let is_zero = b.ins().fcmp(FloatCC::Equal, v, zero);
    let sign = splat_bits(b, ity, 1 << (fty.lane_bits() - 1));
    let clear = b.ins().band(is_zero, sign);
    let bits = bitcast_le(b, ity, v);
    let bits = b.ins().band_not(bits, clear);
    bitcast_le(b, fty, bits)
}

/// Vector recipe `int_to_float.split_sum`: 32-bit integers to float in any mode, 64-bit
/// integers to double or float in any mode, with no per-lane `clz` (vector code has none).
///
/// 1. Split x = hi + lo into two parts that convert exactly: for 32-bit sources
///    hi = x & 0xffff0000, lo = x & 0xffff (16 significant bits each); for 64-bit sources
///    hi = (x >> 32) * 2^32, lo = x & 0xffffffff, each made a double with the magic-exponent
///    trick (OR the 32 bits into the mantissa of 2^52, resp. 2^84, and subtract it; signed hi
///    is biased by 2^31 first), all exact.
/// 2. s = hi + lo rounds to nearest-even; since |hi| > |lo| whenever hi != 0 (and s = lo
///    exactly when hi = 0), Fast2Sum gives the exact error: err = lo - (s - hi).
/// 3. Double (and float from 32-bit): step s one ulp by the mode when err points the other way
///    ([`step_by_error`]). Float from 64-bit: make s round-to-odd (if err != 0 and s is even,
///    step toward err), then demote with the mode: 53 >= 24 + 2 bits, so the second rounding
///    is exact ([`super::float_to_float::demote_block`]).
///
/// Hard inputs: 2^24+1, 2^53+1, INT_MAX, UINT_MAX, LONG_MIN, LONG_MAX, ULONG_MAX (s rounds to
/// 2^64 exactly, err = -1: rtz/rtn step down to the largest double below), 0 (s = +0).
pub fn vector_split_sum(b: &mut FunctionBuilder, spec: &BlockSpec, inputs: &[Value]) -> Vec<Value> {
    if spec.src.bits() == 32 {
        return each(b, inputs, |b, x| {
            let (s, err) = split_sum_32(b, spec.src, x);
            step_by_error(b, s, err, spec.rounding)
        });
    }
    if spec.dst == ScalarType::Double && spec.rounding == Rounding::Rte {
        return each(b, inputs, |b, x| sum_64_nearest(b, spec.src, x));
    }
    let sums: Vec<(Value, Value)> = inputs
        .iter()
        .map(|&x| split_sum_64(b, spec.src, x))
        .collect();
    if spec.dst == ScalarType::Double {
        return sums
            .into_iter()
            .map(|(s, err)| step_by_error(b, s, err, spec.rounding))
            .collect();
    }
    let odd: Vec<Value> = sums
        .into_iter()
        .map(|(s, err)| round_to_odd(b, s, err))
        .collect();
    demote_pairs(b, &odd, spec.rounding)
}

pub(crate) fn split_sum_32(b: &mut FunctionBuilder, src: ScalarType, x: Value) -> (Value, Value) {
    use super::lanes::splat_bits;
    let hi_mask = splat_bits(b, types::I32X4, 0xffff_0000);
    let lo_mask = splat_bits(b, types::I32X4, 0xffff);
    let hi = b.ins().band(x, hi_mask);
    let lo = b.ins().band(x, lo_mask);
    let hf = convert_nearest(b, src, types::F32X4, hi);
    let lf = b.ins().fcvt_from_sint(types::F32X4, lo);
    fast_two_sum(b, hf, lf)
}

pub(crate) fn split_sum_64(b: &mut FunctionBuilder, src: ScalarType, x: Value) -> (Value, Value) {
    use super::lanes::splat_bits;
    let (lo, two52) = low_half_above_2_52(b, x);
    let two52f = bitcast_le(b, types::F64X2, two52);
    let lf = b.ins().fsub(lo, two52f);

    let hi = b.ins().ushr_imm_u(x, 32);
    let two84 = splat_bits(b, types::I64X2, 0x4530_0000_0000_0000);
    let (hi, offset) = if src.is_signed_integer() {
        // (hi + 2^31) is in 0..2^32: bias, convert, and subtract 2^84 + 2^63 in one step.
        let bias = splat_bits(b, types::I64X2, 0x8000_0000);
        (b.ins().bxor(hi, bias), 0x4530_0000_8000_0000u64) // 2^84 + 2^63
    } else {
        (hi, 0x4530_0000_0000_0000u64) // 2^84
    };
    let hi = b.ins().bor(hi, two84);
    let hi = bitcast_le(b, types::F64X2, hi);
    let offset = splat_bits(b, types::F64X2, offset);
    let hf = b.ins().fsub(hi, offset);
    fast_two_sum(b, hf, lf)
}

/// 64-bit integers to double, rte, in six vector instructions: the split of
/// [`split_sum_64`] with 2^52 folded into the high part's offset, so that one addition, the
/// only rounding, gives the result: (hi * 2^32 - 2^52) + (2^52 + lo). Both terms are exact:
/// hi * 2^32 - 2^52 = 2^32 * (hi - 2^20) has at most 33 significant bits, and 2^52 + lo is the
/// magic-exponent form of lo. x = 0 gives -2^52 + 2^52 = +0 (-0 when rounding down:
/// [`vector_by_control`]).
fn sum_64_nearest(b: &mut FunctionBuilder, src: ScalarType, x: Value) -> Value {
    use super::lanes::splat_bits;
    let (lo, _) = low_half_above_2_52(b, x);

    let hi = b.ins().ushr_imm_u(x, 32);
    // The top 32 bits in the mantissa of 2^84 (biased by 2^31 when signed: the XOR both sets
    // the exponent and flips the sign bit of the 32-bit half), less 2^84 (+ 2^63) + 2^52.
    let (magic, offset) = if src.is_signed_integer() {
        (0x4530_0000_8000_0000u64, 0x4530_0000_8010_0000u64) // 2^84 + 2^63 + 2^52
    } else {
        (0x4530_0000_0000_0000u64, 0x4530_0000_0010_0000u64) // 2^84 + 2^52
    };
    let magic = splat_bits(b, types::I64X2, magic);
    let hi = b.ins().bxor(hi, magic);
    let hi = bitcast_le(b, types::F64X2, hi);
    let offset = splat_bits(b, types::F64X2, offset);
    let hi = b.ins().fsub(hi, offset);
    b.ins().fadd(hi, lo)
}

/// 2^52 + (the low 32 bits of each I64X2 lane of `x`) as F64X2, exact: the bits or-ed into
/// the mantissa of 2^52 (the magic-exponent form), and 2^52's bits (I64X2).
fn low_half_above_2_52(b: &mut FunctionBuilder, x: Value) -> (Value, Value) {
    use super::lanes::splat_bits;
    let low32 = splat_bits(b, types::I64X2, 0xffff_ffff);
    let lo = b.ins().band(x, low32);
    let two52 = splat_bits(b, types::I64X2, 0x4330_0000_0000_0000);
    let lo = b.ins().bor(lo, two52);
    (bitcast_le(b, types::F64X2, lo), two52)
}

/// s = fl(a + b) and its exact error, for |a| >= |b| or a = 0.
fn fast_two_sum(b: &mut FunctionBuilder, a: Value, c: Value) -> (Value, Value) {
    let s = b.ins().fadd(a, c);
    let z = b.ins().fsub(s, a);
    let err = b.ins().fsub(c, z);
    (s, err)
}

/// Steps the nearest-even `s` one ulp so the result is `s + err` rounded by `rounding`.
/// `s` is nonzero wherever `err` is, so moving its bit pattern by one is a one-ulp step
/// (+1 is away from zero, -1 toward it, for either sign).
pub fn step_by_error(b: &mut FunctionBuilder, s: Value, err: Value, rounding: Rounding) -> Value {
    use super::lanes::{int_vector, splat_bits};
    use cranelift_codegen::ir::condcodes::FloatCC;
    if rounding == Rounding::Rte {
        return s;
    }
    let fty = b.func.dfg.value_type(s);
    let ity = int_vector(fty.lane_bits());
    let zero = splat_bits(b, fty, 0);
    let one = splat_bits(b, ity, 1);
    let s_neg = b.ins().fcmp(FloatCC::LessThan, s, zero);
    let err_pos = b.ins().fcmp(FloatCC::GreaterThan, err, zero);
    let err_neg = b.ins().fcmp(FloatCC::LessThan, err, zero);
    let delta = match rounding {
        // toward zero where err and s have opposite signs: -1.
        Rounding::Rtz => {
            let a = b.ins().band(err_pos, s_neg);
            let s_pos = b.ins().bnot(s_neg);
            let c = b.ins().band(err_neg, s_pos);
            b.ins().bor(a, c)
        }
        // up where err > 0: +1 on a positive s, -1 on a negative one.
        Rounding::Rtp => {
            let dir = b.ins().bor(s_neg, one);
            b.ins().band(err_pos, dir)
        }
        // down where err < 0: -1 on a positive s, +1 on a negative one.
        Rounding::Rtn => {
            let s_pos = b.ins().bnot(s_neg);
            let dir = b.ins().bor(s_pos, one);
            b.ins().band(err_neg, dir)
        }
        Rounding::Rte => unreachable!(),
    };
    let bits = bitcast_le(b, ity, s);
    let bits = b.ins().iadd(bits, delta);
    bitcast_le(b, fty, bits)
}

/// `s + err` rounded to odd, from the nearest-even `s` and its exact error (F32X4 or F64X2):
/// when inexact and `s` is even, the odd neighbour toward the exact value.
pub(crate) fn round_to_odd(b: &mut FunctionBuilder, s: Value, err: Value) -> Value {
    use super::lanes::{int_vector, splat_bits};
    use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
    let fty = b.func.dfg.value_type(s);
    let ity = int_vector(fty.lane_bits());
    let zero = splat_bits(b, fty, 0);
    let one = splat_bits(b, ity, 1);
    let bits = bitcast_le(b, ity, s);
    let lsb = b.ins().band(bits, one);
    let zero_i = splat_bits(b, ity, 0);
    let even = b.ins().icmp(IntCC::Equal, lsb, zero_i);
    let inexact = b.ins().fcmp(FloatCC::NotEqual, err, zero);
    let fix = b.ins().band(even, inexact);
    // Toward err: +1 (away from zero) when err and s have the same sign, else -1; s != 0
    // wherever err != 0.
    let s_neg = b.ins().fcmp(FloatCC::LessThan, s, zero);
    let err_neg = b.ins().fcmp(FloatCC::LessThan, err, zero);
    let differ = b.ins().bxor(s_neg, err_neg);
    let dir = b.ins().bor(differ, one);
    let delta = b.ins().band(fix, dir);
    let bits = b.ins().iadd(bits, delta);
    bitcast_le(b, fty, bits)
}

/// Vector recipe `int_to_float.native_64` (aarch64): long/ulong -> double in rte, one
/// `fcvt_from_*` I64X2 -> F64X2 (`scvtf`/`ucvtf .2d`), which rounds once, to nearest-even.
/// (x64 lowers the same IR to two scalar `cvtsi2sd` and a long unsigned sequence: its table
/// keeps its own rows.)
///
/// Hard inputs: 2^53 + 1 (the first inexact), LONG_MIN, LONG_MAX and ULONG_MAX (2^63, 2^64).
pub fn vector_native_64(b: &mut FunctionBuilder, spec: &BlockSpec, inputs: &[Value]) -> Vec<Value> {
    each(b, inputs, |b, x| {
        convert_nearest(b, spec.src, types::F64X2, x)
    })
}

/// Lane masks (all ones where true) of whether the nearest-even conversion `f` of the integer
/// lanes `x` lies above `x` (`above`) or below it (`below`), for a destination whose lanes are
/// as wide as the source's (I32X4/F32X4 or I64X2/F64X2), from `t`, `f` converted back with
/// the saturating conversion (aarch64's `fcvtzs`/`fcvtzu`, `.4s` or `.2d`).
///
/// `f` is an integer of at most N bits' magnitude, so `t = f` exactly, except where `f` is
/// 2^(N-1) (signed) or 2^N (unsigned), one past the integer range, where `t` saturates to the
/// type's MAX. Those `f` are above every `x` they come from, and `t = MAX` says exactly that
/// `f` is one of them (no float lies between MAX and the power of two), so:
/// below = `x > t` (in the saturated case `t = MAX >= x`: false, right), above = `x < t` or
/// `t == MAX`.
fn compare_back(
    b: &mut FunctionBuilder,
    signed: bool,
    x: Value,
    f: Value,
    want_above: bool,
    want_below: bool,
    check_saturated: bool,
) -> (Option<Value>, Option<Value>) {
    use super::lanes::splat_bits;
    let ity = b.func.dfg.value_type(x);
    let t = if signed {
        b.ins().fcvt_to_sint_sat(ity, f)
    } else {
        b.ins().fcvt_to_uint_sat(ity, f)
    };
    let (gt, lt) = if signed {
        (IntCC::SignedGreaterThan, IntCC::SignedLessThan)
    } else {
        (IntCC::UnsignedGreaterThan, IntCC::UnsignedLessThan)
    };
    let below = want_below.then(|| b.ins().icmp(gt, x, t));
    let above = want_above.then(|| {
        let lane = ity.lane_bits();
        let max = if signed {
            (1u64 << (lane - 1)) - 1
        } else {
            u64::MAX >> (64 - lane)
        };
        let lower = b.ins().icmp(lt, x, t);
        if !check_saturated {
            return lower;
        }
        let max = splat_bits(b, ity, max);
        let saturated = b.ins().icmp(IntCC::Equal, t, max);
        b.ins().bor(lower, saturated)
    });
    (above, below)
}

/// The bits of the float lanes `f` (as integers) stepped one ulp by the mode, from the lane
/// masks of [`compare_back`]: rtp steps up where `f` is below the exact value, rtn down where
/// it is above, rtz toward zero where it is farther from zero. Up is +1 on the bits of a
/// positive `f` and -1 on a negative one (and down the reverse); `f` has the sign of the exact
/// value `x` and is nonzero wherever it steps. `negative`: the lanes where `x` is negative
/// (`None` for unsigned sources).
fn step_by_masks(
    b: &mut FunctionBuilder,
    rounding: Rounding,
    bits: Value,
    negative: Option<Value>,
    above: Option<Value>,
    below: Option<Value>,
) -> Value {
    let Some(neg) = negative else {
        // Unsigned: up is +1, down (= toward zero) is -1; a mask is -1 where it holds.
        return match rounding {
            Rounding::Rtp => b.ins().isub(bits, below.expect("rtp asks for below")),
            _ => b.ins().iadd(bits, above.expect("rtz/rtn ask for above")),
        };
    };
    match rounding {
        // Toward zero where |f| > |x|: above for a positive x, below for a negative one; -1.
        Rounding::Rtz => {
            let away = b.ins().bitselect(
                neg,
                below.expect("rtz asks for below"),
                above.expect("rtz asks for above"),
            );
            b.ins().iadd(bits, away)
        }
        _ => {
            let mask = if rounding == Rounding::Rtp {
                below.expect("rtp asks for below")
            } else {
                above.expect("rtn asks for above")
            };
            step_by_signed_mask(b, bits, neg, mask, rounding == Rounding::Rtp)
        }
    }
}

/// Which of [`compare_back`]'s masks a directed mode needs: (above, below).
fn masks_for(rounding: Rounding, signed: bool) -> (bool, bool) {
    match rounding {
        Rounding::Rtp => (false, true),
        Rounding::Rtn => (true, false),
        Rounding::Rtz => (true, signed),
        Rounding::Rte => (false, false),
    }
}

/// Vector recipe `int_to_float.convert_back_sat` (aarch64): int/uint -> float and
/// long/ulong -> double in rtz, rtp or rtn, from the nearest-even conversion and the
/// saturating conversion back, which aarch64 has for both lane widths (`scvtf`/`ucvtf`, then
/// `fcvtzs`/`fcvtzu`, `.4s` or `.2d`): 2.0-2.75 instructions per int element (the split sum:
/// 4.5), 3.0-5.5 per long (15.0).
///
/// 1. f = the nearest-even conversion of x: one rounding, so f is one of the two floats next to
///    x (x itself when exact).
/// 2. Whether f is above or below x, exactly, by converting f back (`compare_back`, which
///    also covers the f that saturate: 2^31 from INT_MAX - 63 and up, 2^32, 2^63, 2^64).
/// 3. Step f one ulp toward x where it lies on the wrong side for the mode
///    (`step_by_masks`): the other neighbour of x.
///
/// Hard inputs: INT_MAX and LONG_MAX (f = 2^31 / 2^63, t saturates to x itself: rtz/rtn must
/// still step down), UINT_MAX, ULONG_MAX, INT_MIN and LONG_MIN (exact), 2^24 + 1 and 2^53 + 1
/// (the first inexact), their negatives, 0.
pub fn vector_convert_back_sat(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    let signed = spec.src.is_signed_integer();
    let (fty, ity) = if spec.src.bits() == 32 {
        (types::F32X4, types::I32X4)
    } else {
        (types::F64X2, types::I64X2)
    };
    let (want_above, want_below) = masks_for(spec.rounding, signed);
    step_nearest(b, spec, inputs, fty, |b, x, f| {
        let (above, below) = compare_back(b, signed, x, f, want_above, want_below, true);
        let negative = signed.then(|| b.ins().sshr_imm_u(x, ity.lane_bits() as i64 - 1));
        let bits = bitcast_le(b, ity, f);
        step_by_masks(b, spec.rounding, bits, negative, above, below)
    })
}

/// Vector recipe `int_to_float.demote_convert_back` (aarch64): long/ulong -> float in rtz,
/// rtp or rtn, 4.25-5.0 instructions per element (the split sum with round-to-odd: 19.5-21.25).
///
/// 1. f = the nearest-even double of x (`scvtf`/`ucvtf .2d`), demoted to float by
///    nearest-even (`fcvtn`). Two roundings, but each is monotonic and the two floats next to
///    x are doubles, so f is still one of them (not always the nearest: that is why this
///    recipe serves only the directed modes).
/// 2. f widened back (`fcvtl`, exact) and converted back to an integer (`fcvtzs`/`fcvtzu
///    .2d`): whether f is above or below x, exactly, as in `compare_back`. The masks are
///    64-bit lanes; one shuffle (`uzp1 .4s`) takes their low halves into the float's lane
///    order, as another joins the two demoted halves. The f that saturate (2^63, 2^64) are
///    found on the joined floats, one compare per four lanes (`f >= 2^63`, resp. 2^64).
/// 3. Step f one ulp by the mode (`step_by_masks`); the sign comes from the 32-bit float,
///    which has x's.
///
/// Hard inputs: 2^24 + 1 and 2^53 + 1, 2^63 - 2^39 and up (f = 2^63: t saturates),
/// LONG_MAX, LONG_MIN, ULONG_MAX (f = 2^64), 0, values whose double is a tie for the float
/// (2^24 + 1 + 2^-29-ish patterns: 0x100000020000001).
pub fn vector_demote_convert_back(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes::{join_low_halves, low_dwords, splat_bits};
    use cranelift_codegen::ir::condcodes::FloatCC;
    let signed = spec.src.is_signed_integer();
    let (want_above, want_below) = masks_for(spec.rounding, signed);
    each_pair(b, inputs, |b, x0, x1| {
        let mut demoted = Vec::with_capacity(2);
        let mut aboves = Vec::with_capacity(2);
        let mut belows = Vec::with_capacity(2);
        for x in [x0, x1] {
            let d = convert_nearest(b, spec.src, types::F64X2, x);
            let r = b.ins().fvdemote(d);
            let back = b.ins().fvpromote_low(r);
            // The saturated f (2^63, 2^64) are tested once on the joined floats below.
            let (above, below) = compare_back(b, signed, x, back, want_above, want_below, false);
            demoted.push(r);
            aboves.extend(above);
            belows.extend(below);
        }
        let r = join_low_halves(b, demoted[0], demoted[1]);
        let join = |b: &mut FunctionBuilder, masks: Vec<Value>| -> Option<Value> {
            (masks.len() == 2).then(|| low_dwords(b, masks[0], masks[1]))
        };
        let above = join(b, aboves).map(|lower| {
            // f = 2^63 (2^64 for ulong) is above every x it comes from; its conversion
            // back saturated to MAX, which `lower` cannot tell from x = MAX.
            let past = if signed { 0x5f00_0000 } else { 0x5f80_0000 }; // 2^63, 2^64
            let past = splat_bits(b, types::F32X4, past);
            let saturated = b.ins().fcmp(FloatCC::GreaterThanOrEqual, r, past);
            let saturated = bitcast_le(b, types::I32X4, saturated);
            b.ins().bor(lower, saturated)
        });
        let below = join(b, belows);
        let bits = bitcast_le(b, types::I32X4, r);
        let negative = signed.then(|| b.ins().sshr_imm_u(bits, 31));
        let bits = step_by_masks(b, spec.rounding, bits, negative, above, below);
        bitcast_le(b, types::F32X4, bits)
    })
}
