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
//! Hard inputs: 2^24+1, 2^53+1, INT_MAX, UINT_MAX, LONG_MAX, ULONG_MAX, LONG_MIN, 0.
//!
//! half: the magnitude goes to float rounded to odd (the truncation with its lowest bit set when
//! anything was cut off), then float -> half rounds by the mode. Round-to-odd with 24 >= 11 + 2
//! bits makes the second rounding exact, so there is no double rounding.

use super::{bitcast_le, half, int_const};
use crate::lower::element_type;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// Emits `convert_<dst>_<rounding>(<src>)` on one element of integer type `src`; a half
/// destination is returned as I16 bits.
pub fn emit(
    b: &mut FunctionBuilder,
    src: ScalarType,
    dst: ScalarType,
    rounding: Rounding,
    x: Value,
) -> Value {
    if dst == ScalarType::Half {
        return to_half(b, src, rounding, x);
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

fn to_half(b: &mut FunctionBuilder, src: ScalarType, rounding: Rounding, x: Value) -> Value {
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
    half::f32_bits_to_half(b, bits, rounding)
}
