//! The narrow formats ([`ScalarType::NARROW`]: FP4 E2M1, FP6 E2M3 and E3M2, E4M3FNUZ,
//! E5M2FNUZ) to and from float's bits, one element at a time in I32 arithmetic that every
//! Cranelift backend lowers. [`super::float_to_float`] puts a partner (half, double, bfloat)
//! through float around these, as it does for the 8-bit floats. The rules are the reference's
//! (`src/reference/narrow.rs`, quoting the definitions); here is how they are computed.
//!
//! - **narrow -> float** is exact. The code is the byte's low `width` bits (the rest ignored:
//!   the shifts drop them). Normals move their fields into place and rebias the exponent
//!   (`(mag << (23 - fraction)) + ((127 - bias) << 23)`); subnormals are `m * 2^(1 - bias -
//!   fraction)`, an exact integer conversion and an exact scaling. The FNUZ NaN 0x80 gives
//!   0xffc00000.
//! - **float -> narrow** rounds as the half sequence of [`super::small_float`] does, with the
//!   format's fields: keep `q = m >> s`, `s = max(23 - fraction, 151 - bias - fraction - E)`
//!   capped at 25, the cut-off part against half a unit decides the increment by the mode,
//!   and `h = ((max(E - (127 - bias), 1) - 1) << fraction) + q + inc` (a carry moves to the
//!   next binade correctly). A result past the largest code overflowed: FP4 and FP6 give the
//!   largest value of the sign in every mode; the FNUZ formats give the NaN where IEEE-754
//!   gives an infinity (`_sat`: the largest value of the sign) and the largest value where it
//!   rounds toward zero. Infinities go as overflows do; a NaN gives FP4's and FP6's largest
//!   positive value or the FNUZ NaN; an FNUZ zero is +0.
//! - **E8M0** is float's biased exponent alone: code c widens to `c << 23` (0 to float's
//!   subnormal 2^-127, 0x00400000; 0xff to 0x7fc00000). Into it, a normal float's code is its
//!   exponent field plus one where the mode rounds up (rte: the fraction's top bit, a value at
//!   or past 1.5 * 2^e; rtp: any fraction bit); a float subnormal (below 2^-126) gives 0x01
//!   from 1.5 * 2^-127 (rte) or past 2^-127 (rtp), else 0x00; a code of 255 overflowed. Zero,
//!   negative values and infinities by the reference's rules. Four at a time
//!   ([`e8m0_from_f32x4`], the vector recipes' way) the mode's increment is an add below the
//!   exponent field whose carry moves into it.
//! - **tf32** is float's top 19 bits: widening masks the low 13 (and quiets a NaN); narrowing
//!   rounds as bfloat16's does, adding below the kept bits (rte: 0xfff and the kept lsb; rtp,
//!   rtn: 0x1fff on their sign) so that a carry moves into the exponent, up to infinity; four
//!   at a time the same steps ([`tf32_from_f32x4`]). Out of tf32 stays per element.

use super::lanes::{splat_bits, VectorRounding};
use super::small_float::{
    self, round_to_fields_x4, split_sign_x4, Fields, Split, Subnormals, Unpack,
};
use super::values::{bitcast_le, int_const};
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// A narrow format by its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Narrow {
    /// Bits of a code: 4, 6 or 8.
    width: u32,
    /// Fraction bits.
    fraction: u32,
    /// Exponent bias.
    bias: u32,
    /// E4M3FNUZ and E5M2FNUZ: 0x80 is the NaN, no negative zero. FP4 and FP6: every code
    /// finite.
    fnuz: bool,
}

impl Narrow {
    /// The fields of `t`, if it is a narrow format.
    pub(crate) const fn of(t: ScalarType) -> Option<Narrow> {
        let (width, fraction, bias, fnuz) = match t {
            ScalarType::Fp4E2M1 => (4, 1, 1, false),
            ScalarType::Fp6E2M3 => (6, 3, 1, false),
            ScalarType::Fp6E3M2 => (6, 2, 3, false),
            ScalarType::Fp8E4M3Fnuz => (8, 3, 8, true),
            ScalarType::Fp8E5M2Fnuz => (8, 2, 16, true),
            _ => return None,
        };
        Some(Narrow {
            width,
            fraction,
            bias,
            fnuz,
        })
    }

    /// The sign bit; the FNUZ NaN's code.
    const fn sign_bit(self) -> u32 {
        1 << (self.width - 1)
    }

    /// The largest magnitude's code (every magnitude bit set).
    const fn max_code(self) -> u32 {
        self.sign_bit() - 1
    }

    /// float's exponent field minus this format's, for the same power of two.
    const fn rebias(self) -> u32 {
        127 - self.bias
    }

    /// Fraction bits float has beyond this format's.
    const fn shift(self) -> u32 {
        23 - self.fraction
    }
}

/// Widens one element of the narrow type `t` (its byte: I8) to an F32 value, exactly.
pub(crate) fn to_f32(b: &mut FunctionBuilder, t: ScalarType, x: Value) -> Value {
    let fmt = match (t, Narrow::of(t)) {
        (_, Some(fmt)) => fmt,
        (ScalarType::Tf32, None) => return tf32_to_f32(b, x),
        _ => return e8m0_to_f32(b, x),
    };
    let i = types::I32;
    let x = b.ins().uextend(i, x);
    // The code at the top of the word: the byte's other bits fall out.
    let w = b.ins().ishl_imm_u(x, i64::from(32 - fmt.width));
    let sign = b.ins().band_imm_u(w, 0x8000_0000u32 as i64);
    let abs = b.ins().bxor(w, sign);
    let magnitude = b.ins().ushr_imm_u(abs, i64::from(32 - fmt.width));
    let normal = b.ins().ishl_imm_u(magnitude, i64::from(fmt.shift()));
    let normal = b.ins().iadd_imm_u(normal, i64::from(fmt.rebias()) << 23);
    let m = b.ins().band_imm_u(magnitude, (1i64 << fmt.fraction) - 1);
    let mf = b.ins().fcvt_from_uint(types::F32, m);
    let scale = f32::from_bits((127 + 1 - fmt.bias - fmt.fraction) << 23);
    let scale = b.ins().f32const(scale);
    let sub = b.ins().fmul(mf, scale);
    let sub = bitcast_le(b, i, sub);
    let is_sub = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedLessThan, magnitude, 1i64 << fmt.fraction);
    let bits = b.ins().select(is_sub, sub, normal);
    let bits = b.ins().bor(bits, sign);
    let bits = if fmt.fnuz {
        // The code 0x80 (sign alone, magnitude zero) is the NaN.
        let is_nan = b.ins().icmp_imm_u(IntCC::Equal, w, 0x8000_0000u32 as i64);
        let nan = int_const(b, i, 0xffc0_0000);
        b.ins().select(is_nan, nan, bits)
    } else {
        bits
    };
    bitcast_le(b, types::F32, bits)
}

/// Rounds the float whose bits are the I32 `x` into the narrow type `t` by `rounding`;
/// `saturate` is `_sat`. Returns the element's byte (I8), or tf32's word (I32).
pub(crate) fn from_f32_bits(
    b: &mut FunctionBuilder,
    t: ScalarType,
    x: Value,
    rounding: Rounding,
    saturate: bool,
) -> Value {
    let fmt = match (t, Narrow::of(t)) {
        (_, Some(fmt)) => fmt,
        (ScalarType::Tf32, None) => {
            return tf32_from_f32_bits(b, x, Tf32Rounding::Mode(rounding), saturate)
        }
        _ => return e8m0_from_f32_bits(b, x, rounding, saturate),
    };
    let i = types::I32;
    let sign = b.ins().ushr_imm_u(x, 31);
    let a = b.ins().band_imm_u(x, 0x7fff_ffff);
    let zero = int_const(b, i, 0);
    let one = int_const(b, i, 1);
    // Magnitudes rounded away from zero by the sign: rtp's positive values, rtn's negative.
    let away = match rounding {
        Rounding::Rtp => Some(b.ins().icmp_imm_u(IntCC::Equal, sign, 0)),
        Rounding::Rtn => Some(b.ins().icmp_imm_u(IntCC::Equal, sign, 1)),
        _ => None,
    };

    let e = b.ins().ushr_imm_u(a, 23);
    let fraction = b.ins().band_imm_u(a, 0x7f_ffff);
    let is_normal = b.ins().icmp(IntCC::NotEqual, e, zero);
    let implicit = b.ins().uextend(i, is_normal);
    let implicit = b.ins().ishl_imm_u(implicit, 23);
    let m = b.ins().bor(fraction, implicit);
    let e = b.ins().smax(e, one);
    let top = int_const(b, i, i128::from(fmt.shift() + fmt.rebias() + 1));
    let s = b.ins().isub(top, e);
    let min_s = int_const(b, i, i128::from(fmt.shift()));
    let s = b.ins().smax(s, min_s);
    let c25 = int_const(b, i, 25);
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
            b.ins().uextend(i, up)
        }
        Rounding::Rtp | Rounding::Rtn => {
            let inexact = b.ins().icmp_imm_u(IntCC::NotEqual, rem, 0);
            let up = b.ins().band(inexact, away.expect("directed"));
            b.ins().uextend(i, up)
        }
    };
    let eh = b.ins().iadd_imm_u(e, -i64::from(fmt.rebias()));
    let eh = b.ins().smax(eh, one);
    let eh = b.ins().isub(eh, one);
    let h = b.ins().ishl_imm_u(eh, i64::from(fmt.fraction));
    let h = b.ins().iadd(h, q);
    let finite = b.ins().iadd(h, inc);

    // Past the largest code, and infinities: the largest value, or the FNUZ NaN where
    // IEEE-754 gives an infinity (the mode rounds away from zero; an infinite source) without
    // `_sat`. The NaN's code is the sign bit alone, so OR-ing the sign in later keeps it.
    let max = int_const(b, i, i128::from(fmt.max_code()));
    let nan = int_const(b, i, i128::from(fmt.sign_bit()));
    let (overflow_value, inf_value) = if fmt.fnuz && !saturate {
        let by_mode = match rounding {
            Rounding::Rte => nan,
            Rounding::Rtz => max,
            Rounding::Rtp | Rounding::Rtn => b.ins().select(away.expect("directed"), nan, max),
        };
        (by_mode, nan)
    } else {
        (max, max)
    };
    let overflow = b.ins().icmp(IntCC::UnsignedGreaterThan, finite, max);
    let magnitude = b.ins().select(overflow, overflow_value, finite);
    let is_inf = b.ins().icmp_imm_u(IntCC::Equal, a, 0x7f80_0000);
    let magnitude = b.ins().select(is_inf, inf_value, magnitude);
    let sign = b.ins().ishl_imm_u(sign, i64::from(fmt.width - 1));
    let sign = if fmt.fnuz {
        // No negative zero: a zero magnitude takes no sign.
        let is_zero = b.ins().icmp_imm_u(IntCC::Equal, magnitude, 0);
        b.ins().select(is_zero, zero, sign)
    } else {
        sign
    };
    let result = b.ins().bor(magnitude, sign);
    // A NaN: the FNUZ NaN, or FP4's and FP6's largest positive value.
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    let nan_result = if fmt.fnuz { nan } else { max };
    let result = b.ins().select(is_nan, nan_result, result);
    b.ins().ireduce(types::I8, result)
}

/// E8M0's code (I8) as an F32 value: `c << 23`, 0x00 as 2^-127, 0xff as the quiet NaN.
fn e8m0_to_f32(b: &mut FunctionBuilder, x: Value) -> Value {
    let i = types::I32;
    let c = b.ins().uextend(i, x);
    let bits = b.ins().ishl_imm_u(c, 23);
    let is_zero = b.ins().icmp_imm_u(IntCC::Equal, c, 0);
    let smallest = int_const(b, i, 0x0040_0000);
    let bits = b.ins().select(is_zero, smallest, bits);
    let is_nan = b.ins().icmp_imm_u(IntCC::Equal, c, 0xff);
    let nan = int_const(b, i, 0x7fc0_0000);
    let bits = b.ins().select(is_nan, nan, bits);
    bitcast_le(b, types::F32, bits)
}

/// The float whose bits are the I32 `x` into E8M0 by `rounding` (`saturate`: `_sat`), as I8.
fn e8m0_from_f32_bits(
    b: &mut FunctionBuilder,
    x: Value,
    rounding: Rounding,
    saturate: bool,
) -> Value {
    let i = types::I32;
    let e = b.ins().ushr_imm_u(x, 23);
    let e = b.ins().band_imm_u(e, 0xff);
    let fraction = b.ins().band_imm_u(x, 0x7f_ffff);
    // A normal float: its exponent field, plus one where the mode rounds up.
    let up = match rounding {
        Rounding::Rte => Some(b.ins().icmp_imm_u(
            IntCC::UnsignedGreaterThanOrEqual,
            fraction,
            0x40_0000,
        )),
        Rounding::Rtp => Some(b.ins().icmp_imm_u(IntCC::NotEqual, fraction, 0)),
        Rounding::Rtz | Rounding::Rtn => None,
    };
    // A subnormal float (below 2^-126): 2^-126 (0x01) from 1.5 * 2^-127 (rte) or past 2^-127
    // (rtp), else 2^-127 (0x00).
    let sub_up = match rounding {
        Rounding::Rte => Some(b.ins().icmp_imm_u(
            IntCC::UnsignedGreaterThanOrEqual,
            fraction,
            0x60_0000,
        )),
        Rounding::Rtp => Some(
            b.ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThan, fraction, 0x40_0000),
        ),
        Rounding::Rtz | Rounding::Rtn => None,
    };
    let normal = match up {
        Some(up) => {
            let up = b.ins().uextend(i, up);
            b.ins().iadd(e, up)
        }
        None => e,
    };
    let subnormal = match sub_up {
        Some(up) => b.ins().uextend(i, up),
        None => int_const(b, i, 0),
    };
    let is_sub = b.ins().icmp_imm_u(IntCC::Equal, e, 0);
    let code = b.ins().select(is_sub, subnormal, normal);
    // 255 overflowed (rte, rtp past 2^127): the NaN, or 0xfe under `_sat`.
    let code = if saturate {
        let max = int_const(b, i, 0xfe);
        b.ins().umin(code, max)
    } else {
        code
    };
    // Zero, negative values and -infinity: the NaN, or 0x00 under `_sat`; +infinity: the NaN,
    // or 0xfe; NaN: the NaN. On the bits, as signed integers: +0 is 0, negatives below it.
    let not_positive = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, x, 0);
    let low = int_const(b, i, if saturate { 0 } else { 0xff });
    let code = b.ins().select(not_positive, low, code);
    let magnitude = b.ins().band_imm_u(x, 0x7fff_ffff);
    let is_inf = b.ins().icmp_imm_u(IntCC::Equal, x, 0x7f80_0000);
    let high = int_const(b, i, if saturate { 0xfe } else { 0xff });
    let code = b.ins().select(is_inf, high, code);
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, magnitude, 0x7f80_0000);
    let nan = int_const(b, i, 0xff);
    let code = b.ins().select(is_nan, nan, code);
    b.ins().ireduce(types::I8, code)
}

/// tf32's word (I32) as an F32 value: the low 13 bits cleared, a NaN made quiet.
fn tf32_to_f32(b: &mut FunctionBuilder, x: Value) -> Value {
    let bits = b.ins().band_imm_u(x, 0xffff_e000u32 as i64);
    let magnitude = b.ins().band_imm_u(bits, 0x7fff_ffff);
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, magnitude, 0x7f80_0000);
    let quiet = b.ins().bor_imm_u(bits, 0x40_0000);
    let bits = b.ins().select(is_nan, quiet, bits);
    bitcast_le(b, types::F32, bits)
}

/// How a float is rounded into tf32: by one of the four modes, or to nearest with ties away
/// from zero (PTX's `cvt.rna.tf32.f32`, [`crate::rules::Rules::ties_away`]).
#[derive(Clone, Copy)]
enum Tf32Rounding {
    Mode(Rounding),
    TiesAway,
}

/// The F32 `x` into tf32 rounding to nearest with ties away from zero (`saturate`: `_sat`),
/// as I32: `convert_tf32[_sat]_rta(float)`.
pub(crate) fn tf32_from_f32_ties_away(b: &mut FunctionBuilder, x: Value, saturate: bool) -> Value {
    let bits = bitcast_le(b, types::I32, x);
    tf32_from_f32_bits(b, bits, Tf32Rounding::TiesAway, saturate)
}

/// The float whose bits are the I32 `x` into tf32 by `rounding` (`saturate`: `_sat`), as I32.
/// The magnitude's bits rounded by an add at bit 12 and a mask of the low 13: a carry into the
/// exponent is the next binade, and past the largest finite value the add reaches infinity's
/// bits (0x7f80_0000).
fn tf32_from_f32_bits(
    b: &mut FunctionBuilder,
    x: Value,
    rounding: Tf32Rounding,
    saturate: bool,
) -> Value {
    let i = types::I32;
    let sign = b.ins().band_imm_u(x, 0x8000_0000u32 as i64);
    let a = b.ins().band_imm_u(x, 0x7fff_ffff);
    let zero = int_const(b, i, 0);
    let add = match rounding {
        // Half an ulp: a tie goes up, away from zero.
        Tf32Rounding::TiesAway => Some(int_const(b, i, 0x1000)),
        Tf32Rounding::Mode(Rounding::Rte) => {
            let kept = b.ins().ushr_imm_u(a, 13);
            let odd = b.ins().band_imm_u(kept, 1);
            Some(b.ins().iadd_imm_u(odd, 0xfff))
        }
        Tf32Rounding::Mode(Rounding::Rtz) => None,
        Tf32Rounding::Mode(r @ (Rounding::Rtp | Rounding::Rtn)) => {
            let negative = b.ins().icmp_imm_u(IntCC::NotEqual, sign, 0);
            let up = if r == Rounding::Rtp {
                b.ins().icmp_imm_u(IntCC::Equal, sign, 0)
            } else {
                negative
            };
            let all = int_const(b, i, 0x1fff);
            Some(b.ins().select(up, all, zero))
        }
    };
    let rounded = match add {
        Some(add) => b.ins().iadd(a, add),
        None => a,
    };
    let magnitude = b.ins().band_imm_u(rounded, 0xffff_e000u32 as i64);
    let magnitude = if saturate {
        // Infinity, from an overflow or an infinite source: the largest finite value.
        let max = int_const(b, i, 0x7f7f_e000);
        b.ins().umin(magnitude, max)
    } else {
        magnitude
    };
    // A NaN: its top 10 payload bits, made quiet.
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    let nan = b.ins().band_imm_u(a, 0xffff_e000u32 as i64);
    let nan = b.ins().bor_imm_u(nan, 0x40_0000);
    let magnitude = b.ins().select(is_nan, nan, magnitude);
    b.ins().bor(magnitude, sign)
}

/// Four floats (an F32X4) into E8M0 by `rounding` (`saturate`: `_sat`): an I32X4 of codes,
/// each 0..=255, for a packing that keeps them (`lanes::narrow_to` with `Some(true)`).
/// [`e8m0_from_f32_bits`]'s rules on the floats' bits with an add for the rounding: a
/// positive float's code is its exponent field, `x >> 23`; rte adds half a binade's fraction
/// (0x400000) below it first and rtp all but one ulp of it (0x7fffff), so that a fraction at
/// or past the mode's threshold carries into the exponent, up to 0xff past 2^127 and for
/// +infinity. A subnormal float's threshold is 1.5 x 2^-127 (rte, bits 0x600000) or just past
/// 2^-127 (rtp, 0x400001) to reach 0x01: the add is 0x200000 or 0x400000 less there. Zero,
/// negative values and NaN by the reference's rules, on signed compares (SSE2's `pcmpgtd`).
pub(crate) fn e8m0_from_f32x4(
    b: &mut FunctionBuilder,
    x: Value,
    rounding: Rounding,
    saturate: bool,
) -> Value {
    let i = types::I32X4;
    let x = bitcast_le(b, i, x);
    let add = match rounding {
        Rounding::Rte => Some((0x40_0000, 0x20_0000)),
        Rounding::Rtp => Some((0x7f_ffff, 0x40_0000)),
        Rounding::Rtz | Rounding::Rtn => None,
    };
    let c = match add {
        Some((normal, less_if_subnormal)) => {
            // Below 2^-126 (negative lanes too: their result is chosen below).
            let smallest_normal = splat_bits(b, i, 0x80_0000);
            let is_sub = b.ins().icmp(IntCC::SignedLessThan, x, smallest_normal);
            let less = splat_bits(b, i, less_if_subnormal);
            let less = b.ins().band(is_sub, less);
            let normal = splat_bits(b, i, normal);
            let add = b.ins().isub(normal, less);
            b.ins().iadd(x, add)
        }
        None => x,
    };
    let c = b.ins().ushr_imm_u(c, 23);
    // Zero, negative values and -infinity (the bits as signed integers below 1).
    let one = splat_bits(b, i, 1);
    let not_positive = b.ins().icmp(IntCC::SignedLessThan, x, one);
    let magnitude_mask = splat_bits(b, i, 0x7fff_ffff);
    let magnitude = b.ins().band(x, magnitude_mask);
    let infinity = splat_bits(b, i, 0x7f80_0000);
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, magnitude, infinity);
    let nan = splat_bits(b, i, 0xff);
    if saturate {
        // 0xff (past 2^127, +infinity) gives 0xfe; zero, negative values and -infinity 0x00;
        // NaN the NaN.
        let overflowed = b.ins().icmp(IntCC::Equal, c, nan);
        let c = b.ins().iadd(c, overflowed);
        let c = b.ins().band_not(c, not_positive);
        b.ins().bitselect(is_nan, nan, c)
    } else {
        // Past 2^127 and +infinity already 0xff; zero, negative values, -infinity and NaN the
        // NaN.
        let special = b.ins().bor(not_positive, is_nan);
        b.ins().bitselect(special, nan, c)
    }
}

/// Four floats (an F32X4) into tf32 by `rounding` (`saturate`: `_sat`): an I32X4 of tf32
/// words, [`tf32_from_f32_bits`]'s steps on every lane (rtp and rtn add below the kept bits
/// where the sign rounds away from zero; `_sat` a signed minimum, every magnitude that is not
/// a NaN being below 2^31).
pub(crate) fn tf32_from_f32x4(
    b: &mut FunctionBuilder,
    x: Value,
    rounding: Rounding,
    saturate: bool,
) -> Value {
    let i = types::I32X4;
    let x = bitcast_le(b, i, x);
    let sign_bit = splat_bits(b, i, 0x8000_0000);
    let sign = b.ins().band(x, sign_bit);
    let a = b.ins().bxor(x, sign);
    let add = match rounding {
        Rounding::Rte => {
            let kept = b.ins().ushr_imm_u(a, 13);
            let one = splat_bits(b, i, 1);
            let odd = b.ins().band(kept, one);
            let half = splat_bits(b, i, 0xfff);
            Some(b.ins().iadd(odd, half))
        }
        Rounding::Rtz => None,
        Rounding::Rtp | Rounding::Rtn => {
            // All ones on the lanes that round away from zero: positive ones for rtp (the
            // sign clear), negative ones for rtn.
            let negative = b.ins().sshr_imm_u(x, 31);
            let away = if rounding == Rounding::Rtp {
                b.ins().bnot(negative)
            } else {
                negative
            };
            let all = splat_bits(b, i, 0x1fff);
            Some(b.ins().band(away, all))
        }
    };
    let rounded = match add {
        Some(add) => b.ins().iadd(a, add),
        None => a,
    };
    let kept_mask = splat_bits(b, i, 0xffff_e000);
    let magnitude = b.ins().band(rounded, kept_mask);
    let magnitude = if saturate {
        let max = splat_bits(b, i, 0x7f7f_e000);
        b.ins().smin(magnitude, max)
    } else {
        magnitude
    };
    // A NaN: its top 10 payload bits, made quiet.
    let infinity = splat_bits(b, i, 0x7f80_0000);
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, a, infinity);
    let nan = b.ins().band(a, kept_mask);
    let quiet = splat_bits(b, i, 0x40_0000);
    let nan = b.ins().bor(nan, quiet);
    let magnitude = b.ins().bitselect(is_nan, nan, magnitude);
    b.ins().bor(magnitude, sign)
}

/// Four narrow codes (each in the low byte of an I32X4 lane, the rest zero) of the narrow type
/// `t` (not tf32) as an F32X4, exactly: [`to_f32`]'s steps on every lane at once, with
/// immediate shifts, compares that are signed (every compared value is small and
/// non-negative: SSE2's `pcmpgtd`) and `bitselect` for the choices. For the vector recipes
/// `half.round_native` and `half.round_magic` (`super::half_vector`).
pub(crate) fn to_f32x4(b: &mut FunctionBuilder, t: ScalarType, v: Value) -> Value {
    let i = types::I32X4;
    let bits = match Narrow::of(t) {
        Some(fmt) => {
            let w = b.ins().ishl_imm_u(v, i64::from(32 - fmt.width));
            let sign_bit = splat_bits(b, i, 0x8000_0000);
            let sign = b.ins().band(w, sign_bit);
            let abs = b.ins().bxor(w, sign);
            let magnitude = b.ins().ushr_imm_u(abs, i64::from(32 - fmt.width));
            let normal = b.ins().ishl_imm_u(magnitude, i64::from(fmt.shift()));
            let rebias = splat_bits(b, i, u64::from(fmt.rebias()) << 23);
            let normal = b.ins().iadd(normal, rebias);
            let fraction_mask = splat_bits(b, i, (1 << fmt.fraction) - 1);
            let m = b.ins().band(magnitude, fraction_mask);
            let mf = b.ins().fcvt_from_sint(types::F32X4, m);
            let scale = (127 + 1 - fmt.bias - fmt.fraction) << 23;
            let scale = splat_bits(b, types::F32X4, u64::from(scale));
            let sub = b.ins().fmul(mf, scale);
            let sub = bitcast_le(b, i, sub);
            let one_unit = splat_bits(b, i, 1 << fmt.fraction);
            let is_sub = b.ins().icmp(IntCC::SignedLessThan, magnitude, one_unit);
            let bits = b.ins().bitselect(is_sub, sub, normal);
            let bits = b.ins().bor(bits, sign);
            if fmt.fnuz {
                let is_nan = b.ins().icmp(IntCC::Equal, w, sign_bit);
                let nan = splat_bits(b, i, 0xffc0_0000);
                b.ins().bitselect(is_nan, nan, bits)
            } else {
                bits
            }
        }
        None => {
            debug_assert_eq!(t, ScalarType::Fp8E8M0, "tf32 has no vector recipe");
            let bits = b.ins().ishl_imm_u(v, 23);
            let zero = splat_bits(b, i, 0);
            let is_zero = b.ins().icmp(IntCC::Equal, v, zero);
            let smallest = splat_bits(b, i, 0x0040_0000);
            let bits = b.ins().bitselect(is_zero, smallest, bits);
            let all_ones = splat_bits(b, i, 0xff);
            let is_nan = b.ins().icmp(IntCC::Equal, v, all_ones);
            let nan = splat_bits(b, i, 0x7fc0_0000);
            b.ins().bitselect(is_nan, nan, bits)
        }
    };
    bitcast_le(b, types::F32X4, bits)
}

/// Sixteen E8M0 codes (an I8X16) as four F32X4, element order kept, for the vector recipes
/// `half.round_native` and `half.round_magic`: a code c is 2^(c - 127), the float whose
/// exponent field is c, so its upper 16 bits are c << 7; 0x00 (2^-127, below float's normals)
/// is the subnormal 0x00400000 and 0xff the quiet NaN 0x7fc00000, as in [`to_f32x4`]. Eight
/// codes at a time on 16-bit lanes, then spread into the floats' upper halves: four
/// instructions per four codes where widening each code to a 32-bit lane took eight.
pub(crate) fn e8m0_to_f32x4s(b: &mut FunctionBuilder, unpack: Unpack, v: Value) -> [Value; 4] {
    let h = types::I16X8;
    let zero = splat_bits(b, h, 0);
    let smallest = splat_bits(b, h, 0x0040);
    let all_ones = splat_bits(b, h, 0x7f80);
    let nan = splat_bits(b, h, 0x7fc0);
    let mut out = Vec::with_capacity(4);
    // Each code in the upper byte of a 16-bit lane (c << 8), then c << 7.
    for w in small_float::bytes_to_upper_halves(b, unpack, v) {
        let upper = b.ins().ushr_imm_u(w, 1);
        let is_zero = b.ins().icmp(IntCC::Equal, upper, zero);
        let upper = b.ins().bitselect(is_zero, smallest, upper);
        let is_nan = b.ins().icmp(IntCC::Equal, upper, all_ones);
        let upper = b.ins().bitselect(is_nan, nan, upper);
        out.extend(small_float::words_to_upper_halves(b, unpack, upper));
    }
    [out[0], out[1], out[2], out[3]]
}

/// The bfloat16 bits of the magnitude code `code` of the narrow format `fmt` (its low
/// `width - 1` bits; for an FNUZ format, below 16), from the format's fields (OCP MX v1.0, 5.3.3: exponent bits, mantissa
/// bits, bias; exponent 0 is the subnormal `0.M x 2^(1 - bias)`). Every FP4 and FP6 value has
/// at most 4 significant bits and an exponent within float's, so it is a bfloat16 and the
/// float's low 16 bits are zero.
const fn magnitude_bfloat16(fmt: &Narrow, code: u32) -> u16 {
    let m = fmt.fraction;
    let exponent = code >> m;
    let mantissa = code & ((1 << m) - 1);
    if exponent == 0 && mantissa == 0 {
        return 0;
    }
    // value = significand x 2^(scale - m), with `significand` normalised to 1.f below.
    let (mut significand, scale) = if exponent == 0 {
        (mantissa, 1)
    } else {
        (mantissa | (1 << m), exponent)
    };
    // Float's exponent of the value: scale - bias plus the top bit's position above m.
    let mut top = m;
    while significand >> top == 0 {
        top -= 1;
    }
    let float_exponent = 127 + scale + top - m - fmt.bias;
    // The fraction bits below the top bit, at the top of bfloat16's 7.
    significand &= (1 << top) - 1;
    ((float_exponent << 7) | (significand << (7 - top))) as u16
}

/// Bytes of the bfloat16 bits of 16 consecutive magnitude codes of `fmt`, from `first`:
/// `high` the upper bytes. A 16-entry table for one `swizzle`.
const fn bfloat16_bytes(fmt: &Narrow, first: u32, high: bool) -> [u8; 16] {
    let mut table = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let bits = magnitude_bfloat16(fmt, first + i as u32);
        table[i] = if high { (bits >> 8) as u8 } else { bits as u8 };
        i += 1;
    }
    table
}

/// The 16-entry table `bfloat16_bytes(fmt, first, high)` as a vector constant.
fn table(b: &mut FunctionBuilder, fmt: &Narrow, first: u32, high: bool) -> Value {
    let bytes = bfloat16_bytes(fmt, first, high).to_vec();
    let constant = b.func.dfg.constants.insert(ConstantData::from(bytes));
    b.ins().vconst(types::I8X16, constant)
}

/// FP4 and FP6 codes (an I8X16: a code in each byte's low 4 or 6 bits, the others ignored) to
/// floats by table, for the vector recipe `narrow.table_native` (which takes the FNUZ formats
/// to [`fnuz_by_table`]):
/// four F32X4, element order kept. Every FP4 and FP6 value is a bfloat16
/// ([`magnitude_bfloat16`]), so a code's float is its bfloat16 bits in the upper half of a
/// 32-bit lane. 16-entry byte lookups (`swizzle`: `pshufb` with SSSE3, which the x86-64
/// table's guard requires; `tbl` on aarch64) give each code's upper and lower bfloat16 byte: FP4's code indexes one table per
/// byte (its sign bit, bit 3, in the table's upper half); FP6's 5-bit magnitude indexes two
/// (codes 0-15 and 16-31: an index of 16 or more gives 0, so the two lookups are or-ed), and
/// its sign (bit 5) goes into the upper byte's bit 7. An interleave joins the bytes into 16-bit
/// lanes and `unpack` spreads those into the upper halves (11 instructions per 16 FP4 codes on
/// x86-64, against the arithmetic decode's 17 per 4 and the widening to 32-bit lanes).
pub(crate) fn to_f32x4s_by_table(
    b: &mut FunctionBuilder,
    t: ScalarType,
    unpack: Unpack,
    v: Value,
) -> [Value; 4] {
    let fmt = Narrow::of(t).expect("FP4, FP6 or an FNUZ format");
    let bytes = types::I8X16;
    let v = bitcast_le(b, bytes, v);
    if fmt.fnuz {
        return fnuz_by_table(b, &fmt, unpack, v);
    }
    let [high, low] = if fmt.width == 4 {
        let low_bits = splat_bits(b, bytes, 0x0f);
        let codes = b.ins().band(v, low_bits);
        // FP4's 16 codes, the negative ones (bit 3) with the sign in bfloat16's bit 15.
        let fp4_table = |b: &mut FunctionBuilder, high: bool| {
            let mut t = bfloat16_bytes(&fmt, 0, high);
            let mut i = 0;
            while i < 8 {
                t[8 + i] = t[i] | if high { 0x80 } else { 0 };
                i += 1;
            }
            let constant = b.func.dfg.constants.insert(ConstantData::from(t.to_vec()));
            b.ins().vconst(bytes, constant)
        };
        [true, false].map(|high| {
            let table = fp4_table(b, high);
            b.ins().swizzle(table, codes)
        })
    } else {
        let magnitude_bits = splat_bits(b, bytes, 0x1f);
        let magnitude = b.ins().band(v, magnitude_bits);
        let sixteen = splat_bits(b, bytes, 0x10);
        let upper_index = b.ins().bxor(magnitude, sixteen);
        // The sign, bit 5, to bit 7: a 16-bit shift by two (x86-64 has no byte shifts; a low
        // byte's bits 6 and 7 land in the high byte's bits 0 and 1, which the mask clears).
        let shifted = bitcast_le(b, types::I16X8, v);
        let shifted = b.ins().ishl_imm_u(shifted, 2);
        let shifted = bitcast_le(b, bytes, shifted);
        let top_bit = splat_bits(b, bytes, 0x80);
        let sign = b.ins().band(shifted, top_bit);
        [true, false].map(|high| {
            let first = table(b, &fmt, 0, high);
            let first = b.ins().swizzle(first, magnitude);
            let second = table(b, &fmt, 16, high);
            let second = b.ins().swizzle(second, upper_index);
            let byte = b.ins().bor(first, second);
            if high {
                b.ins().bor(byte, sign)
            } else {
                byte
            }
        })
    };
    // Each code's bfloat16 in a 16-bit lane: its low byte, then its high byte.
    let words: [Value; 2] = match unpack {
        Unpack::Interleave => {
            let first = [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23];
            let second = [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31];
            [first, second].map(|mask| {
                let w = super::lanes::shuffle_bytes(b, low, high, mask);
                bitcast_le(b, types::I16X8, w)
            })
        }
        Unpack::Widen => {
            let low = [b.ins().uwiden_low(low), b.ins().uwiden_high(low)];
            let high = [b.ins().uwiden_low(high), b.ins().uwiden_high(high)];
            [0, 1].map(|k| {
                let up = b.ins().ishl_imm_u(high[k], 8);
                b.ins().bor(low[k], up)
            })
        }
    };
    let [f0, f1] = small_float::words_to_upper_halves(b, unpack, words[0]);
    let [f2, f3] = small_float::words_to_upper_halves(b, unpack, words[1]);
    [f0, f1, f2, f3]
}

/// Sixteen FNUZ codes (an I8X16) as four F32X4 for [`to_f32x4s_by_table`]: the magnitudes
/// below 16 (the subnormal ones and the first binade above them) by two 16-entry lookups of
/// their bfloat16 bytes ([`magnitude_bfloat16`]: every FNUZ value is a bfloat16), the others
/// by moving the magnitude's bits to float's fields and rebiasing, on 16-bit lanes as the
/// floats' upper halves, eight codes at a time; the sign or-ed in; the NaN 0x80 (the sign
/// alone) replaced by 0xffc00000, as in [`to_f32x4`]. About 35 instructions per 16 codes on
/// x86-64, against [`to_f32x4`]'s 17 per 4 and the widening to 32-bit lanes.
fn fnuz_by_table(b: &mut FunctionBuilder, fmt: &Narrow, unpack: Unpack, v: Value) -> [Value; 4] {
    let bytes = types::I8X16;
    let h = types::I16X8;
    let magnitude_bits = splat_bits(b, bytes, 0x7f);
    let magnitude = b.ins().band(v, magnitude_bits);
    // The table's codes, each as its bfloat16 (index 16 and up gives 0: not taken).
    let [high, low] = [true, false].map(|high| {
        let t = table(b, fmt, 0, high);
        b.ins().swizzle(t, magnitude)
    });
    let first = [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23];
    let second = [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31];
    let looked_up = [first, second].map(|mask| {
        let w = super::lanes::shuffle_bytes(b, low, high, mask);
        bitcast_le(b, h, w)
    });
    let sign_bit = splat_bits(b, h, 0x8000);
    let field_bits = splat_bits(b, h, 0x7f00);
    let rebias = splat_bits(b, h, u64::from(127 - fmt.bias) << 7);
    let below_table = splat_bits(b, h, 0x0fff);
    let nan_code = splat_bits(b, h, 0x8000);
    let nan = splat_bits(b, h, 0xffc0);
    let mut out = Vec::with_capacity(4);
    let codes = small_float::bytes_to_upper_halves(b, unpack, v);
    for (w, looked_up) in codes.into_iter().zip(looked_up) {
        // Each code in a 16-bit lane's upper byte: its magnitude moved down to float's fields
        // (E4M3FNUZ: `(w & 0x7f00) >> 4`) and rebiased, for the codes past the table.
        let fields = b.ins().band(w, field_bits);
        let moved = b.ins().ushr_imm_u(fields, i64::from(1 + fmt.fraction));
        let normal = b.ins().iadd(moved, rebias);
        let past_table = b.ins().icmp(IntCC::SignedGreaterThan, fields, below_table);
        let upper = b.ins().bitselect(past_table, normal, looked_up);
        let sign = b.ins().band(w, sign_bit);
        let upper = b.ins().bor(upper, sign);
        let is_nan = b.ins().icmp(IntCC::Equal, w, nan_code);
        let upper = b.ins().bitselect(is_nan, nan, upper);
        out.extend(small_float::words_to_upper_halves(b, unpack, upper));
    }
    [out[0], out[1], out[2], out[3]]
}

/// Four floats (an F32X4) rounded into the narrow type `t` (FP4, FP6 or an FNUZ 8-bit float;
/// not E8M0 or tf32) by `rounding`, `saturate` being `_sat`: an I32X4 of codes, sign-extended
/// from the code's 8 bits for the 8-bit formats and as they are (below 64) for FP4 and FP6, so
/// that `snarrow` packs them exactly. [`from_f32_bits`]'s rules on every lane at once: the
/// rounding is the 8-bit floats' ([`super::small_float::round_to_fields_x4`], with this
/// format's fields), then this format's overflow, infinity, NaN and sign rules. For the vector
/// recipes `half.round_native` and `half.round_magic`.
pub(crate) fn from_f32x4(
    b: &mut FunctionBuilder,
    t: ScalarType,
    x: Value,
    rounding: Rounding,
    kind: VectorRounding,
    saturate: bool,
) -> Value {
    let fmt = Narrow::of(t).expect("FP4, FP6 or an FNUZ format: E8M0 and tf32 go per element");
    let i = types::I32X4;
    let split = split_sign_x4(b, x, rounding);
    let Split {
        a,
        sign,
        zero,
        away,
    } = split;
    let fields = Fields {
        fraction: fmt.fraction,
        bias: fmt.bias,
    };
    let h = round_to_fields_x4(b, fields, &split, rounding, kind, Subnormals::Added);

    // Past the largest code, and infinities: the largest value, or the FNUZ NaN where
    // IEEE-754 gives an infinity without `_sat` (as in `from_f32_bits`).
    let max = splat_bits(b, i, u64::from(fmt.max_code()));
    let nan = splat_bits(b, i, u64::from(fmt.sign_bit()));
    let (overflow_value, inf_value) = if fmt.fnuz && !saturate {
        let by_mode = match rounding {
            Rounding::Rte => nan,
            Rounding::Rtz => max,
            Rounding::Rtp | Rounding::Rtn => b.ins().bitselect(away.expect("directed"), nan, max),
        };
        (by_mode, nan)
    } else {
        (max, max)
    };
    let overflow = b.ins().icmp(IntCC::SignedGreaterThan, h, max);
    let h = b.ins().bitselect(overflow, overflow_value, h);
    let exp_all_ones = splat_bits(b, i, 0x7f80_0000);
    let is_inf = b.ins().icmp(IntCC::Equal, a, exp_all_ones);
    let h = b.ins().bitselect(is_inf, inf_value, h);
    // The sign at the code's top bit; an FNUZ zero takes none.
    let sign = b.ins().ushr_imm_u(sign, i64::from(32 - fmt.width));
    let sign = if fmt.fnuz {
        let is_zero = b.ins().icmp(IntCC::Equal, h, zero);
        b.ins().bitselect(is_zero, zero, sign)
    } else {
        sign
    };
    let code = b.ins().bor(h, sign);
    // A NaN: the FNUZ NaN, or FP4's and FP6's largest positive value.
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, a, exp_all_ones);
    let nan_code = if fmt.fnuz { nan } else { max };
    let code = b.ins().bitselect(is_nan, nan_code, code);
    if fmt.width == 8 {
        let up = b.ins().ishl_imm_u(code, 24);
        b.ins().sshr_imm_u(up, 24)
    } else {
        code
    }
}
