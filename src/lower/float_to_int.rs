//! float/half -> integer: `convert_int_sat_rte(float)`, `convert_uchar(double)`, ...
//!
//! Algorithm: round to an integral value in the float domain by the mode (`nearest`, `ceil`,
//! `floor`; rtz is the conversion's own truncation), then convert with Cranelift's saturating
//! conversion, which is exactly OpenCL's `_sat` with rtz: out-of-range values clamp and NaN gives
//! 0. 8- and 16-bit destinations convert to I32 first (x64 panics on scalar `fcvt_to_*_sat` to
//! I8/I16) and clamp there: every 8/16-bit bound is an exact I32.
//!
//! Without `_sat` the spec leaves NaN and out-of-range results implementation-defined; clconv
//! defines them as the `_sat` result, so the same code serves both and every target agrees.
//! The trapping `fcvt_to_sint` is never emitted. half is widened to float first, exactly.

use super::lanes::{round_vector, VectorRounding};
use super::values::element_type;
use super::values::int_const;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Emits `convert_<dst>_sat_<rounding>(<src>)` on one element of float type `src` (the formats
/// narrower than float as their bits).
pub fn emit(
    b: &mut FunctionBuilder,
    src: ScalarType,
    dst: ScalarType,
    rounding: Rounding,
    x: Value,
) -> Value {
    let f = match super::small_float::SmallFloat::of(src) {
        Some(fmt) => super::small_float::to_f32(b, fmt, x),
        None => x,
    };
    let rounded = match rounding {
        Rounding::Rte => b.ins().nearest(f),
        Rounding::Rtp => b.ins().ceil(f),
        Rounding::Rtn => b.ins().floor(f),
        Rounding::Rtz => f,
    };
    let dst_ty = element_type(dst);
    if dst.bits() >= 32 {
        return if dst.is_signed_integer() {
            b.ins().fcvt_to_sint_sat(dst_ty, rounded)
        } else {
            b.ins().fcvt_to_uint_sat(dst_ty, rounded)
        };
    }
    let wide = b.ins().fcvt_to_sint_sat(types::I32, rounded);
    let lo = int_const(b, types::I32, dst.int_min().expect("integer destination"));
    let hi = int_const(b, types::I32, dst.int_max().expect("integer destination"));
    let clamped = b.ins().smax(wide, lo);
    let clamped = b.ins().smin(clamped, hi);
    b.ins().ireduce(dst_ty, clamped)
}

/// Vector recipes `float_to_int.round_native` and `float_to_int.round_magic`: float or double
/// lanes to integers of at most 32 bits.
///
/// Round to integral (see [`VectorRounding`]), then the saturating conversion to I32 lanes
/// (float: `fcvt_to_sint_sat`/`fcvt_to_uint_sat` I32X4; double: the wasm idiom
/// `snarrow(fcvt_to_sint_sat.i64x2(x), 0)` that x64 lowers to `cvttpd2dq` with fix-ups, since
/// the plain F64X2 -> I64X2 conversion does not compile there), then saturating packs down to
/// 16 or 8 bits: i32 -> i16 (signed) keeps the order and every 8/16-bit value, so the last pack
/// clamps to exactly the destination range. NaN is 0 after the conversion and stays 0.
pub fn vector(
    b: &mut FunctionBuilder,
    spec: &super::block::BlockSpec,
    rounding_kind: VectorRounding,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes;
    let rounded: Vec<Value> = inputs
        .iter()
        .map(|&x| round_vector(b, x, spec.rounding, rounding_kind))
        .collect();
    let dst = spec.dst;
    let unsigned32 = dst == ScalarType::UInt;
    let ints: Vec<Value> = if spec.src == ScalarType::Float {
        rounded
            .iter()
            .map(|&r| {
                if unsigned32 {
                    b.ins().fcvt_to_uint_sat(types::I32X4, r)
                } else {
                    b.ins().fcvt_to_sint_sat(types::I32X4, r)
                }
            })
            .collect()
    } else {
        let halves: Vec<Value> = rounded
            .iter()
            .map(|&r| {
                let zero = lanes::zero_vconst(b, types::I64X2);
                if unsigned32 {
                    let wide = b.ins().fcvt_to_uint_sat(types::I64X2, r);
                    b.ins().uunarrow(wide, zero)
                } else {
                    let wide = b.ins().fcvt_to_sint_sat(types::I64X2, r);
                    b.ins().snarrow(wide, zero)
                }
            })
            .collect();
        halves
            .chunks(2)
            .map(|pair| lanes::join_low_halves(b, pair[0], pair[1]))
            .collect()
    };
    if dst.bits() == 32 {
        ints
    } else {
        lanes::narrow_to(b, ints, 32, dst.bits(), Some(!dst.is_signed_integer()))
    }
}

/// Vector recipe `float_to_int.clamp_magic`: float lanes to uchar or ushort, with or without
/// `_sat` (the same bits), in 4 vector instructions per F32X4 for rte instead of the 9 uops of
/// round + saturating conversion.
///
/// 1. Directed modes round first (`trunc`/`ceil`/`floor`); rte rounds in step 3.
/// 2. Clamp in the float domain, on the bit patterns: `0 < x ? x : +0` (the compare is false
///    for NaN, -0 and every negative; x64's `maxps x, +0`) takes the lane to +0; then, since
///    the bit patterns of non-negative floats (+inf included) are ordered like the floats, a
///    signed integer `min` with the bits of 255.0 (65535.0) clamps the top. Clamping and rounding commute here because both bounds
///    are integers.
/// 3. Add 2^23: for 0 <= c < 2^23 the sum lies in [2^23, 2^24), whose ulp is 1, so the
///    addition rounds c to an integer in the hardware's default nearest-even mode (and is exact
///    for the already-rounded directed results), and that integer is the sum's low mantissa
///    bits: subtracting the bits of 2^23 leaves it in an I32 lane.
/// 4. Pack to 16 and 8 bits; every value is already in range.
pub fn vector_clamp_magic(
    b: &mut FunctionBuilder,
    spec: &super::block::BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use crate::lower::{bitcast_le, lanes};
    use cranelift_codegen::ir::condcodes::FloatCC;
    let max: f32 = match spec.dst {
        ScalarType::UChar => 255.0,
        ScalarType::UShort => 65535.0,
        other => unreachable!("float_to_int.clamp_magic does not support {other:?}"),
    };
    // The constants once per block, not per vector: the quick tier (no GVN) would otherwise
    // build each of them four times for float -> uchar.
    let zero = lanes::splat_bits(b, types::F32X4, 0);
    let max_bits = lanes::splat_bits(b, types::I32X4, max.to_bits() as u64);
    let magic_bits = lanes::splat_bits(b, types::I32X4, 0x4b00_0000); // 2^23
    let magic = bitcast_le(b, types::F32X4, magic_bits);
    let ints: Vec<Value> = inputs
        .iter()
        .map(|&x| {
            let r = match spec.rounding {
                Rounding::Rte => x,
                Rounding::Rtz => b.ins().trunc(x),
                Rounding::Rtp => b.ins().ceil(x),
                Rounding::Rtn => b.ins().floor(x),
            };
            // `0 < r ? r : +0`, in the form x64 lowers to one `maxps r, +0` (its second
            // operand for NaN and for equal zeros) rather than a compare and an `and`.
            let positive = b.ins().fcmp(FloatCC::LessThan, zero, r);
            let positive = bitcast_le(b, types::F32X4, positive);
            let low_clamped = b.ins().bitselect(positive, r, zero);
            let bits = bitcast_le(b, types::I32X4, low_clamped);
            let clamped = b.ins().smin(bits, max_bits);
            let clamped = bitcast_le(b, types::F32X4, clamped);
            let sum = b.ins().fadd(clamped, magic);
            let sum = bitcast_le(b, types::I32X4, sum);
            b.ins().isub(sum, magic_bits)
        })
        .collect();
    lanes::narrow_to(b, ints, 32, spec.dst.bits(), Some(true))
}

/// Vector recipe `float_to_int.round_native_64` (aarch64): float or double lanes to long or
/// ulong, with or without `_sat` (the same bits), 2.0-2.25 instructions per element where the
/// per-element loop takes 4.
///
/// Round to integral by the mode (`frintn`/`frintp`/`frintm`; rtz is the conversion's own
/// truncation), on the F32X4 before widening for float (one rounding instruction per four
/// lanes; widening is exact and keeps an integral value integral), then `fvpromote_low` on
/// each half (`fcvtl`), then the saturating F64X2 -> I64X2 conversion, which aarch64 has
/// (`fcvtzs`/`fcvtzu .2d`: out-of-range lanes clamp, NaN gives 0, negative lanes give 0 for
/// ulong). x64 refuses that conversion, so only the aarch64 table names this recipe.
///
/// Hard inputs: NaN, +-inf, +-2^63 and 2^64 (the first out of range), 2^63 - 2^39 (float's
/// largest below 2^63), -0.5 and 0.5 (ties to even: 0), -1.0 for ulong (0).
pub fn vector_64(
    b: &mut FunctionBuilder,
    spec: &super::block::BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes;
    let wide: Vec<Value> = inputs
        .iter()
        .flat_map(|&x| {
            let r = round_vector(b, x, spec.rounding, VectorRounding::Native);
            if spec.src == ScalarType::Float {
                let high = lanes::high_half_to_low(b, r);
                vec![b.ins().fvpromote_low(r), b.ins().fvpromote_low(high)]
            } else {
                vec![r]
            }
        })
        .collect();
    wide.into_iter()
        .map(|d| {
            if spec.dst.is_signed_integer() {
                b.ins().fcvt_to_sint_sat(types::I64X2, d)
            } else {
                b.ins().fcvt_to_uint_sat(types::I64X2, d)
            }
        })
        .collect()
}
