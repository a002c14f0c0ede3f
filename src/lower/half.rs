//! half (binary16) <-> float in integer and float32 IR, the only way that works on every
//! Cranelift backend: the x64 backend has no F16 conversions (no F16C support), and several F16
//! forms panic. The fast paths, which bulk conversions take:
//!
//! - float -> half rounded to nearest-even (the default mode): the floating-point addition does
//!   the rounding, as in Maratyszcza's FP16 library ([`f32x4_to_half_rte`],
//!   [`f32_bits_to_half_rte`]). The directed modes take the format-generic integer sequence of
//!   [`super::small_float`], whose module documentation derives it for half.
//! - half -> float, exact: the magnitude moved into float's bits and scaled by 2^112 (one
//!   exact multiplication, subnormals included), infinities and NaNs given float's exponent by
//!   integer operations ([`super::small_float::small16_to_f32x4s`], which serves the 8-bit floats
//!   too, and the scalar [`half_bits_to_f32`]). NaNs are quieted (as
//!   x86 and AArch64 hardware do), keeping sign and payload.
//!
//! Hard inputs: 65504, 65519 (rte: 65504), 65520 (rte: inf), 2^-24, 2^-25 (tie: rte 0),
//! 3 * 2^-26, the largest subnormal + half a unit, -0.0, f32 subnormals, NaN payloads.

use super::values::{bitcast_le, int_const};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Rounds the float whose bits are the I32 `x` to half, nearest-even; returns I16 bits. The
/// scalar form of [`f32x4_to_half_rte`]: the floating-point addition rounds, integer operations
/// take the half out of the sum's bits.
pub fn f32_bits_to_half_rte(b: &mut FunctionBuilder, x: Value) -> Value {
    let i = types::I32;
    let f = types::F32;
    let a = b.ins().band_imm_u(x, 0x7fff_ffff);
    let sign = b.ins().bxor(x, a);
    let af = bitcast_le(b, f, a);
    let to_inf = b.ins().f32const(f32::from_bits(0x7780_0000)); // 2^112
    let to_zero = b.ins().f32const(f32::from_bits(0x0880_0000)); // 2^-110
    let base = b.ins().fmul(af, to_inf);
    let base = b.ins().fmul(base, to_zero);
    let bias = b.ins().band_imm_u(a, 0x7f80_0000);
    let min_bias = int_const(b, i, 0x3880_0000);
    let bias = b.ins().smax(bias, min_bias);
    let bias = b.ins().iadd_imm_u(bias, 0x0780_0000);
    let bias = bitcast_le(b, f, bias);
    let sum = b.ins().fadd(bias, base);
    let sum = bitcast_le(b, i, sum);
    let exponent = b.ins().ushr_imm_u(sum, 13);
    let exponent = b.ins().band_imm_u(exponent, 0x7c00);
    let fraction = b.ins().band_imm_u(sum, 0xfff);
    let h = b.ins().iadd(exponent, fraction);
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    let payload = b.ins().ushr_imm_u(a, 13);
    let nan = b.ins().bor_imm_u(payload, 0x7e00);
    let nan = b.ins().band_imm_u(nan, 0x7fff);
    let h = b.ins().select(is_nan, nan, h);
    let sign = b.ins().ushr_imm_u(sign, 16);
    let h = b.ins().bor(h, sign);
    b.ins().ireduce(types::I16, h)
}

/// Widens the half whose bits are the I16 `h` to an F32 value, exactly: the scalar form of
/// [`super::small_float::small16_to_f32x4s`] (the magnitude, a subnormal's with the exponent bit that makes it
/// normal, as float bits times 2^112, the subnormal's 2^-14 subtracted; infinities and NaNs
/// take float's exponent, and a NaN its quiet bit, from integer operations).
pub fn half_bits_to_f32(b: &mut FunctionBuilder, h: Value) -> Value {
    let i = types::I32;
    let f = types::F32;
    let h = b.ins().uextend(i, h);
    let magnitude = b.ins().band_imm_u(h, 0x7fff);
    let sign = b.ins().bxor(h, magnitude);
    let sign = b.ins().ishl_imm_u(sign, 16);
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, magnitude, 0x7c00);
    let quiet = b.ins().bor_imm_u(magnitude, 0x0200);
    let magnitude = b.ins().select(is_nan, quiet, magnitude);
    let is_subnormal = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedLessThan, magnitude, 0x0400);
    let normalised = b.ins().bor_imm_u(magnitude, 0x0400);
    let normalised = b.ins().select(is_subnormal, normalised, magnitude);
    let m = b.ins().ishl_imm_u(normalised, 13);
    let m = bitcast_le(b, f, m);
    let scale = b.ins().f32const(f32::from_bits(0x7780_0000)); // 2^112
    let product = b.ins().fmul(m, scale);
    let two_to_minus_14 = b.ins().f32const(f32::from_bits(0x3880_0000));
    let zero = b.ins().f32const(0.0);
    let offset = b.ins().select(is_subnormal, two_to_minus_14, zero);
    let value = b.ins().fsub(product, offset);
    let value = bitcast_le(b, i, value);
    let is_special = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, magnitude, 0x7bff);
    let exponent_255 = int_const(b, i, 0x7f80_0000);
    let none = int_const(b, i, 0);
    let top = b.ins().select(is_special, exponent_255, none);
    let top = b.ins().bor(top, sign);
    let bits = b.ins().bor(value, top);
    bitcast_le(b, f, bits)
}

/// Vector float -> half rounded to nearest-even, in 20 operations per four lanes, with the
/// floating-point unit doing the rounding (Cranelift's `fmul`/`fadd` round to nearest-even on
/// every backend). The sequence of Maratyszcza's FP16 library (`fp16_ieee_from_fp32_value`):
/// - `base = |x| * 2^112 * 2^-110` is `4|x|`, except that the first product overflows to
///   infinity exactly when `|x|` rounds to half's infinity (`|x| >= 65520`), and the second
///   brings it back to where the addition below rounds it.
/// - `bias` is `2^(max(e, -14) + 15)` for `|x| = 2^e * 1.f`: in bits, |x|'s exponent field
///   raised to at least 2^-14's (half's smallest normal), plus 15. A unit in the last place of
///   the sum `bias + 4|x|` is `2^(max(e, -14) - 8)`: four times half's unit at |x|'s exponent
///   (2^-24 for subnormal results), so the addition rounds `4|x|` to half's precision, to
///   nearest-even.
/// - The sum's bits hold the half: `(sum >> 13) & 0x7c00` is its exponent field less one (the
///   bias's exponent, rebiased modulo 32) and `sum & 0xfff` its 11-bit significand with the
///   implicit bit, which adds the one back; a rounding carry moves up into the exponent.
/// - NaN is selected from the integer bits: the sign, the top 10 payload bits, the quiet bit.
///
/// The result lanes hold the half sign-extended to 32 bits, ready for `snarrow`.
pub fn f32x4_to_half_rte(b: &mut FunctionBuilder, x: Value) -> Value {
    use super::lanes::splat_bits;
    let i = types::I32X4;
    let f = types::F32X4;
    let w = bitcast_le(b, i, x);
    let abs_mask = splat_bits(b, i, 0x7fff_ffff);
    let a = b.ins().band(w, abs_mask);
    let sign = b.ins().bxor(w, a);

    let af = bitcast_le(b, f, a);
    let to_inf = splat_bits(b, f, 0x7780_0000); // 2^112
    let to_zero = splat_bits(b, f, 0x0880_0000); // 2^-110
    let base = b.ins().fmul(af, to_inf);
    let base = b.ins().fmul(base, to_zero);

    let exp_mask = splat_bits(b, i, 0x7f80_0000);
    let bias = b.ins().band(a, exp_mask);
    let min_bias = splat_bits(b, i, 0x3880_0000); // 2^-14's exponent field
    let bias = b.ins().smax(bias, min_bias);
    let plus_15 = splat_bits(b, i, 0x0780_0000);
    let bias = b.ins().iadd(bias, plus_15);
    let bias = bitcast_le(b, f, bias);
    let sum = b.ins().fadd(bias, base);
    let sum = bitcast_le(b, i, sum);
    let exponent = b.ins().ushr_imm_u(sum, 13);
    let exponent_mask = splat_bits(b, i, 0x7c00);
    let exponent = b.ins().band(exponent, exponent_mask);
    let fraction_mask = splat_bits(b, i, 0xfff);
    let fraction = b.ins().band(sum, fraction_mask);
    let h = b.ins().iadd(exponent, fraction);

    // NaN: the top payload bits and the quiet bit; the mask drops the exponent bits that the
    // shift leaves above half's.
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, a, exp_mask);
    let payload = b.ins().ushr_imm_u(a, 13);
    let quiet = splat_bits(b, i, 0x7e00);
    let nan = b.ins().bor(payload, quiet);
    let half_magnitude = splat_bits(b, i, 0x7fff);
    let nan = b.ins().band(nan, half_magnitude);
    let h = b.ins().bitselect(is_nan, nan, h);

    let h = b.ins().ishl_imm_u(h, 16);
    let h = b.ins().bor(h, sign);
    b.ins().sshr_imm_u(h, 16)
}
