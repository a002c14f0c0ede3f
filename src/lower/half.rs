//! half (binary16) <-> float in integer IR, the only way that works on every Cranelift backend:
//! the x64 backend has no F16 conversions (no F16C support), and several F16 forms panic.
//!
//! float -> half, rounded by a mode, on the bits (all arithmetic in I32):
//! - Terms: `a` is |x|'s bit pattern, `E` its biased exponent (1 for subnormals), `m` the
//!   24-bit significand with the implicit bit, so |x| = m * 2^(E-150). A half with biased exponent
//!   `Eh` and 11-bit significand `q` is q * 2^(Eh-25).
//! - Keep `q = m >> s` with `s = max(13, 126 - E)`: 13 for half normals, more as the result
//!   goes subnormal. `s` is capped at 25, where `q` = 0 and the cut-off part (< 2^24) is
//!   still "nonzero but below half a unit", which is all rounding needs.
//! - The cut-off `rem = m mod 2^s` against `2^(s-1)` decides the increment: rte rounds up past
//!   the half and on the half when `q` is odd; rtp/rtn round up the magnitude of a
//!   positive/negative value whenever `rem != 0`; rtz never.
//! - `h = ((max(E - 112, 1) - 1) << 10) + q + inc`. Adding `q` with its implicit bit lifts the
//!   exponent field by one, and a carry out of the significand (0x7ff + 1) moves to the next
//!   binade or from the largest subnormal to the smallest normal, both correctly.
//! - `h >= 0x7c00` is overflow: infinity, or 0x7bff (65504) when the mode rounds toward zero
//!   for this sign (rtz; rtp of a negative; rtn of a positive).
//! - NaN keeps its sign and top 10 payload bits and is made quiet; inf stays inf.
//!
//! Hard inputs: 65504, 65519 (rte: 65504), 65520 (rte: inf), 2^-24, 2^-25 (tie: rte 0),
//! 3 * 2^-26, the largest subnormal + half a unit, -0.0, f32 subnormals, NaN payloads.
//!
//! The module comment above describes the directed modes' sequences. Nearest-even, the default
//! and the mode bulk conversions use, takes a shorter road (`f32x4_to_half_rte`): the
//! floating-point addition does the rounding, as in Maratyszcza's FP16 library.
//!
//! half -> float is exact: normals rebias the exponent and scale by an exact power of two,
//! subnormals are `0.5 + q * 2^-24` built from the bits minus 0.5, NaNs are quieted (as x86
//! and AArch64 hardware do), keeping sign and payload.

use super::values::{bitcast_le, int_const};
use crate::types::Rounding;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Rounds the float whose bits are the I32 `x` to half by `rounding`; returns I16 bits.
pub fn f32_bits_to_half(b: &mut FunctionBuilder, x: Value, rounding: Rounding) -> Value {
    if rounding == Rounding::Rte {
        return f32_bits_to_half_rte(b, x);
    }
    let i32t = types::I32;
    let sign = b.ins().ushr_imm_u(x, 31);
    let a = b.ins().band_imm_u(x, 0x7fff_ffffu32 as i64);
    let e = b.ins().ushr_imm_u(a, 23);
    let fraction = b.ins().band_imm_u(a, 0x7f_ffff);
    let zero = int_const(b, i32t, 0);
    let one = int_const(b, i32t, 1);
    let is_normal = b.ins().icmp(IntCC::NotEqual, e, zero);
    let implicit = b.ins().uextend(i32t, is_normal);
    let implicit = b.ins().ishl_imm_u(implicit, 23);
    let m = b.ins().bor(fraction, implicit);
    let e = b.ins().smax(e, one);

    let c126 = int_const(b, i32t, 126);
    let s = b.ins().isub(c126, e);
    let c13 = int_const(b, i32t, 13);
    let s = b.ins().smax(s, c13);
    let c25 = int_const(b, i32t, 25);
    let s = b.ins().smin(s, c25);

    let q = b.ins().ushr(m, s);
    let unit = b.ins().ishl(one, s);
    let low_mask = b.ins().isub(unit, one);
    let rem = b.ins().band(m, low_mask);
    let halfway = b.ins().ushr_imm_u(unit, 1);

    let inc = match rounding {
        Rounding::Rtz => zero,
        Rounding::Rte => {
            let above = b.ins().icmp(IntCC::UnsignedGreaterThan, rem, halfway);
            let tie = b.ins().icmp(IntCC::Equal, rem, halfway);
            let odd = b.ins().band_imm_u(q, 1);
            let odd = b.ins().icmp_imm_u(IntCC::NotEqual, odd, 0);
            let tie_up = b.ins().band(tie, odd);
            let up = b.ins().bor(above, tie_up);
            b.ins().uextend(i32t, up)
        }
        Rounding::Rtp | Rounding::Rtn => {
            let inexact = b.ins().icmp_imm_u(IntCC::NotEqual, rem, 0);
            let inexact = b.ins().uextend(i32t, inexact);
            // rtp rounds a positive magnitude up, rtn a negative one.
            let sign_wanted = if rounding == Rounding::Rtp { 0 } else { 1 };
            let right_sign = b.ins().icmp_imm_u(IntCC::Equal, sign, sign_wanted);
            let right_sign = b.ins().uextend(i32t, right_sign);
            b.ins().band(inexact, right_sign)
        }
    };

    let c112 = int_const(b, i32t, 112);
    let eh = b.ins().isub(e, c112);
    let eh = b.ins().smax(eh, one);
    let eh = b.ins().isub(eh, one);
    let h = b.ins().ishl_imm_u(eh, 10);
    let h = b.ins().iadd(h, q);
    let h = b.ins().iadd(h, inc);

    let inf = int_const(b, i32t, 0x7c00);
    let max = int_const(b, i32t, 0x7bff);
    let overflow_value = match rounding {
        Rounding::Rte => inf,
        Rounding::Rtz => max,
        Rounding::Rtp | Rounding::Rtn => {
            let to_inf_sign = if rounding == Rounding::Rtp { 0 } else { 1 };
            let to_inf = b.ins().icmp_imm_u(IntCC::Equal, sign, to_inf_sign);
            b.ins().select(to_inf, inf, max)
        }
    };
    let overflow = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, h, inf);
    let finite = b.ins().select(overflow, overflow_value, h);

    // NaN: quiet, top payload bits; inf: inf.
    let payload = b.ins().ushr_imm_u(fraction, 13);
    let nan = b.ins().bor_imm_u(payload, 0x7e00);
    let exp_all_ones = int_const(b, i32t, 0x7f80_0000);
    let is_nan = b.ins().icmp(IntCC::UnsignedGreaterThan, a, exp_all_ones);
    let is_inf = b.ins().icmp(IntCC::Equal, a, exp_all_ones);
    let special = b.ins().select(is_nan, nan, inf);
    let not_finite = b.ins().bor(is_nan, is_inf);
    let magnitude = b.ins().select(not_finite, special, finite);

    let sign15 = b.ins().ishl_imm_u(sign, 15);
    let result = b.ins().bor(magnitude, sign15);
    b.ins().ireduce(types::I16, result)
}

/// The scalar form of [`f32x4_to_half`]'s nearest-even sequence (see `f32x4_to_half_rte`):
/// the floating-point addition rounds, integer operations take the half out of the sum's bits.
fn f32_bits_to_half_rte(b: &mut FunctionBuilder, x: Value) -> Value {
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
/// [`half_to_f32x4`] with its NaN taken from the integer bits (a multiplication gives the
/// canonical NaN on RISC-V).
pub fn half_bits_to_f32(b: &mut FunctionBuilder, h: Value) -> Value {
    let i = types::I32;
    let f = types::F32;
    let h = b.ins().uextend(i, h);
    let w = b.ins().ishl_imm_u(h, 16);
    let sign = b.ins().band_imm_u(w, 0x8000_0000u32 as i64);
    let abs = b.ins().bxor(w, sign);
    let shifted = b.ins().ushr_imm_u(abs, 3);
    let normal_bits = b.ins().iadd_imm_u(shifted, 0x7000_0000);
    let normal = bitcast_le(b, f, normal_bits);
    let scale = b.ins().f32const(f32::from_bits(0x0780_0000)); // 2^-112
    let normal = b.ins().fmul(normal, scale);
    let normal = bitcast_le(b, i, normal);
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, normal_bits, 0x7f80_0000);
    let nan = b.ins().bor_imm_u(normal_bits, 0x0040_0000);
    let normal = b.ins().select(is_nan, nan, normal);
    let m = b.ins().ushr_imm_u(abs, 16);
    let sub = b.ins().bor_imm_u(m, 0x3f00_0000);
    let sub = bitcast_le(b, f, sub);
    let half = b.ins().f32const(0.5);
    let sub = b.ins().fsub(sub, half);
    let sub = bitcast_le(b, i, sub);
    let is_sub = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedLessThan, abs, 0x0400_0000);
    let bits = b.ins().select(is_sub, sub, normal);
    let bits = b.ins().bor(bits, sign);
    bitcast_le(b, f, bits)
}

/// Vector float -> half by `rounding`: F32X4 in, I32X4 out with the half bits in each lane's
/// low 16 bits. Needs no per-lane shift amounts (Cranelift's vector shifts take one scalar
/// amount), unlike the scalar sequence above:
/// - normal results (|x| >= 2^-14): rebias the exponent by subtracting 112 << 23 from |x|'s
///   bits and shift right by 13; rounding is an integer add before the shift: 0xfff plus the
///   kept lsb for rte (ties to even), 0x1fff to round the magnitude up, 0 to truncate. A carry
///   moves into the exponent, up to 0x7c00 (overflow, handled below).
/// - subnormal results: v = |x| * 2^24 is exact (a power-of-two scaling of a value that stays
///   normal) and the half's bits are v rounded to an integer by the mode (1024 is the smallest
///   normal's encoding, so rounding up into the normal range is right too).
/// - overflow, inf and NaN as in [`f32_bits_to_half`].
pub fn f32x4_to_half(
    b: &mut FunctionBuilder,
    x: Value,
    rounding: Rounding,
    kind: super::lanes::VectorRounding,
) -> Value {
    use super::lanes::splat_bits;
    if rounding == Rounding::Rte {
        return f32x4_to_half_rte(b, x);
    }
    let i = types::I32X4;
    let xb = bitcast_le(b, i, x);
    let sign_bit = splat_bits(b, i, 0x8000_0000);
    let sign = b.ins().band(xb, sign_bit);
    let abs_mask = splat_bits(b, i, 0x7fff_ffff);
    let a = b.ins().band(xb, abs_mask);
    let zero = splat_bits(b, i, 0);
    let negative = b.ins().icmp(IntCC::NotEqual, sign, zero);
    let positive = b.ins().bnot(negative);
    // Masks of the lanes whose magnitude rounds up (directed modes), by sign.
    let up_lanes = match rounding {
        Rounding::Rtp => Some(positive),
        Rounding::Rtn => Some(negative),
        _ => None,
    };

    // Normal path.
    let rebias = splat_bits(b, i, (112u64 << 23).wrapping_neg() & 0xffff_ffff);
    let biased = b.ins().iadd(a, rebias);
    let add = match rounding {
        Rounding::Rte => {
            let kept = b.ins().ushr_imm_u(a, 13);
            let one = splat_bits(b, i, 1);
            let odd = b.ins().band(kept, one);
            let base = splat_bits(b, i, 0xfff);
            b.ins().iadd(base, odd)
        }
        Rounding::Rtz => zero,
        Rounding::Rtp | Rounding::Rtn => {
            let all = splat_bits(b, i, 0x1fff);
            b.ins().band(all, up_lanes.expect("directed"))
        }
    };
    let rounded = b.ins().iadd(biased, add);
    let normal = b.ins().ushr_imm_u(rounded, 13);

    // Subnormal path.
    let abs = bitcast_le(b, types::F32X4, a);
    let scale = splat_bits(b, types::F32X4, 0x4b80_0000); // 2^24
    let v = b.ins().fmul(abs, scale);
    let q = match rounding {
        Rounding::Rte => round_magnitude(b, v, Rounding::Rte, kind),
        Rounding::Rtz => round_magnitude(b, v, Rounding::Rtn, kind),
        Rounding::Rtp | Rounding::Rtn => {
            let up = round_magnitude(b, v, Rounding::Rtp, kind);
            let down = round_magnitude(b, v, Rounding::Rtn, kind);
            let mask = bitcast_le(b, types::F32X4, up_lanes.expect("directed"));
            b.ins().bitselect(mask, up, down)
        }
    };
    let sub = b.ins().fcvt_to_sint_sat(i, q);
    let min_normal = splat_bits(b, i, 113 << 23);
    let is_normal = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, a, min_normal);
    let h = b.ins().bitselect(is_normal, normal, sub);

    // Overflow, then inf and NaN.
    let inf = splat_bits(b, i, 0x7c00);
    let max = splat_bits(b, i, 0x7bff);
    let overflow_value = match rounding {
        Rounding::Rte => inf,
        Rounding::Rtz => max,
        Rounding::Rtp => b.ins().bitselect(positive, inf, max),
        Rounding::Rtn => b.ins().bitselect(negative, inf, max),
    };
    let overflow = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, h, inf);
    let h = b.ins().bitselect(overflow, overflow_value, h);
    let exp_all_ones = splat_bits(b, i, 0x7f80_0000);
    let is_inf = b.ins().icmp(IntCC::Equal, a, exp_all_ones);
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, a, exp_all_ones);
    let h = b.ins().bitselect(is_inf, inf, h);
    let fraction_mask = splat_bits(b, i, 0x7f_ffff);
    let fraction = b.ins().band(a, fraction_mask);
    let payload = b.ins().ushr_imm_u(fraction, 13);
    let quiet = splat_bits(b, i, 0x7e00);
    let nan = b.ins().bor(payload, quiet);
    let h = b.ins().bitselect(is_nan, nan, h);
    // The sign, extended over the lane's upper half: `snarrow` then packs exactly.
    let sign16 = b.ins().sshr_imm_u(sign, 16);
    b.ins().bor(h, sign16)
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
fn f32x4_to_half_rte(b: &mut FunctionBuilder, x: Value) -> Value {
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

/// `v >= 0` rounded to an integral value: to nearest-even (`Rte`), up (`Rtp`) or down (`Rtn`).
fn round_magnitude(
    b: &mut FunctionBuilder,
    v: Value,
    rounding: Rounding,
    kind: super::lanes::VectorRounding,
) -> Value {
    super::lanes::round_vector(b, v, rounding, kind)
}

/// Vector half -> float, exact: I32X4 with the half bits in each lane's low 16 bits in, F32X4
/// out, in 13 operations per four lanes (the sequence of Maratyszcza's FP16 library,
/// `fp16_ieee_to_fp32_value`):
/// - normals, infinities and NaNs: the half's exponent and fraction moved into place
///   (`abs >> 3`, where `abs` is the half's magnitude in the lane's upper 16 bits) with the
///   exponent rebiased by 224 rather than 112, then one exact multiplication by 2^-112. The
///   detour through a too-large exponent makes half's infinity exponent (31) land on float's
///   (255), so infinities stay infinite; a NaN stays a NaN with its payload.
/// - subnormals and zeros: the float `0.5 + m * 2^-24` built from the bits, minus 0.5 (both
///   steps exact).
///
/// `keep_nan`: a multiplication gives the canonical NaN on some targets (RISC-V), so the NaN
/// lanes take the reference's NaN from the integer bits instead (the payload, the quiet bit).
pub fn half_to_f32x4(b: &mut FunctionBuilder, h: Value, keep_nan: bool) -> Value {
    use super::lanes::splat_bits;
    let i = types::I32X4;
    let f = types::F32X4;
    let w = b.ins().ishl_imm_u(h, 16);
    let sign_mask = splat_bits(b, i, 0x8000_0000);
    let sign = b.ins().band(w, sign_mask);
    let abs = b.ins().bxor(w, sign);

    let shifted = b.ins().ushr_imm_u(abs, 3);
    let rebias = splat_bits(b, i, 0x7000_0000); // 224 << 23
    let normal_bits = b.ins().iadd(shifted, rebias);
    let normal = bitcast_le(b, f, normal_bits);
    let scale = splat_bits(b, f, 0x0780_0000); // 2^-112
    let normal = b.ins().fmul(normal, scale);
    let mut normal = bitcast_le(b, i, normal);
    if keep_nan {
        let inf = splat_bits(b, i, 0x7f80_0000);
        let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, normal_bits, inf);
        let quiet = splat_bits(b, i, 0x0040_0000);
        let nan = b.ins().bor(normal_bits, quiet);
        normal = b.ins().bitselect(is_nan, nan, normal);
    }

    let m = b.ins().ushr_imm_u(abs, 16);
    let half_bits = splat_bits(b, i, 0x3f00_0000); // 0.5
    let sub = b.ins().bor(m, half_bits);
    let sub = bitcast_le(b, f, sub);
    let half = bitcast_le(b, f, half_bits);
    let sub = b.ins().fsub(sub, half);
    let sub = bitcast_le(b, i, sub);

    let min_normal = splat_bits(b, i, 0x0400_0000);
    let is_sub = b.ins().icmp(IntCC::SignedLessThan, abs, min_normal);
    let bits = b.ins().bitselect(is_sub, sub, normal);
    let bits = b.ins().bor(bits, sign);
    bitcast_le(b, f, bits)
}
