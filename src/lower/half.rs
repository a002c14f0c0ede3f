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
//! half -> float is exact: normals rebias the exponent, subnormals are `q * 2^-24` computed as
//! an exact integer-to-float conversion and an exact multiplication by a power of two, NaNs are
//! quieted (as x86 and AArch64 hardware do), keeping sign and payload.

use super::values::{bitcast_le, int_const};
use crate::types::Rounding;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Rounds the float whose bits are the I32 `x` to half by `rounding`; returns I16 bits.
pub fn f32_bits_to_half(b: &mut FunctionBuilder, x: Value, rounding: Rounding) -> Value {
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

/// Widens the half whose bits are the I16 `h` to an F32 value, exactly.
pub fn half_bits_to_f32(b: &mut FunctionBuilder, h: Value) -> Value {
    let i32t = types::I32;
    let h = b.ins().uextend(i32t, h);
    let sign = b.ins().band_imm_u(h, 0x8000);
    let sign = b.ins().ishl_imm_u(sign, 16);
    let e = b.ins().ushr_imm_u(h, 10);
    let e = b.ins().band_imm_u(e, 0x1f);
    let m = b.ins().band_imm_u(h, 0x3ff);
    let m13 = b.ins().ishl_imm_u(m, 13);

    // Normal: rebias 15 -> 127.
    let e_f32 = b.ins().iadd_imm_u(e, 112);
    let e_f32 = b.ins().ishl_imm_u(e_f32, 23);
    let normal = b.ins().bor(e_f32, m13);

    // inf / NaN: all-ones exponent, payload kept, quiet bit set for NaNs.
    let is_nan = b.ins().icmp_imm_u(IntCC::NotEqual, m, 0);
    let quiet = b.ins().uextend(i32t, is_nan);
    let quiet = b.ins().ishl_imm_u(quiet, 22);
    let special = b.ins().bor_imm_u(m13, 0x7f80_0000);
    let special = b.ins().bor(special, quiet);

    // Subnormal (and zero): m * 2^-24, both steps exact.
    let mf = b.ins().fcvt_from_sint(types::F32, m);
    let scale = b.ins().f32const(f32::from_bits(0x3380_0000)); // 2^-24
    let sub = b.ins().fmul(mf, scale);
    let sub = bitcast_le(b, i32t, sub);

    let is_special = b.ins().icmp_imm_u(IntCC::Equal, e, 31);
    let is_sub = b.ins().icmp_imm_u(IntCC::Equal, e, 0);
    let bits = b.ins().select(is_sub, sub, normal);
    let bits = b.ins().select(is_special, special, bits);
    let bits = b.ins().bor(bits, sign);
    bitcast_le(b, types::F32, bits)
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
    let sign16 = b.ins().ushr_imm_u(sign, 16);
    b.ins().bor(h, sign16)
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
/// out. The vector form of [`half_bits_to_f32`]: normals rebias by adding 112 << 23 to the
/// shifted bits, subnormals are `m * 2^-24` (an exact conversion and an exact scaling), inf
/// and NaN keep their payload and NaNs are made quiet.
pub fn half_to_f32x4(b: &mut FunctionBuilder, h: Value) -> Value {
    use super::lanes::splat_bits;
    let i = types::I32X4;
    let sign_mask = splat_bits(b, i, 0x8000);
    let sign = b.ins().band(h, sign_mask);
    let sign = b.ins().ishl_imm_u(sign, 16);
    let abs_mask = splat_bits(b, i, 0x7fff);
    let abs = b.ins().band(h, abs_mask);
    let m_mask = splat_bits(b, i, 0x3ff);
    let m = b.ins().band(h, m_mask);
    let shifted = b.ins().ishl_imm_u(abs, 13);
    let rebias = splat_bits(b, i, 112 << 23);
    let normal = b.ins().iadd(shifted, rebias);

    let mf = b.ins().fcvt_from_sint(types::F32X4, m);
    let scale = splat_bits(b, types::F32X4, 0x3380_0000); // 2^-24
    let sub = b.ins().fmul(mf, scale);
    let sub = bitcast_le(b, i, sub);

    let zero = splat_bits(b, i, 0);
    let is_nan = b.ins().icmp(IntCC::NotEqual, m, zero);
    let quiet_bit = splat_bits(b, i, 0x40_0000);
    let quiet = b.ins().band(is_nan, quiet_bit);
    let m13 = b.ins().ishl_imm_u(m, 13);
    let exp_all_ones = splat_bits(b, i, 0x7f80_0000);
    let special = b.ins().bor(m13, exp_all_ones);
    let special = b.ins().bor(special, quiet);

    let min_normal = splat_bits(b, i, 0x400);
    let is_sub = b.ins().icmp(IntCC::SignedLessThan, abs, min_normal);
    let inf = splat_bits(b, i, 0x7c00);
    let is_special = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, abs, inf);
    let bits = b.ins().bitselect(is_sub, sub, normal);
    let bits = b.ins().bitselect(is_special, special, bits);
    let bits = b.ins().bor(bits, sign);
    bitcast_le(b, types::F32X4, bits)
}
