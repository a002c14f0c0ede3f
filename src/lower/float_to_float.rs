//! float/half -> float/half: `convert_float_rtz(double)`, `convert_half_rtp(double)`,
//! `convert_double(half)`, ...
//!
//! Widening is exact: `fpromote`, or the bit-level half -> float of [`super::half`].
//!
//! double -> float with a directed mode: `fdemote` rounds to nearest-even; widen the result back
//! (exact) and compare magnitudes with the source. If the demotion went the wrong way for the
//! mode, step one ulp on the sign-magnitude bits: "toward zero" is bits - 1, "away from zero" is
//! bits + 1, for either sign. This gives ±FLT_MAX instead of infinity under rtz (inf - 1 is MAX),
//! the smallest subnormal under rtp for a tiny positive value (+0 + 1), keeps -0.0 (an exact
//! zero is never stepped) and never steps a NaN (every ordered comparison with NaN is false).
//!
//! double -> half: double -> float rounded to odd (the rtz result with its lowest bit set when
//! inexact), then float -> half by the mode. Float keeps 24 >= 11 + 2 bits for every value that
//! can round to a nonzero half, so the second rounding sees the exact value's side and tie
//! status: one correct rounding, not two. Values below float's normal range only need to stay
//! nonzero with their sign, which round-to-odd guarantees.
//!
//! NaN: the reference's rule (`src/reference.rs`: the sign kept, the payload's top bits kept,
//! the quiet bit set) is what x86-64's and AArch64's `fpromote`/`fdemote` give, but RISC-V's
//! `fcvt.d.s`/`fcvt.s.d` return the canonical NaN (`0x7ff8000000000000`, `0x7fc00000`) for
//! every NaN, losing sign and payload. So the per-element sequences, which every target and
//! the builder API (no target known) run, compute a NaN's result on the bits in integer IR
//! and select it where the source is not equal to itself (`fcmp ne x, x`: exactly the NaNs):
//! 4-6 integer instructions, a compare and a select per element, on every target, so that
//! every target gives the same bits (riscv64's per-element kernels, `lowering-tables/REPORT.md`
//! at rtz: float -> double 3 -> 12 instructions per element, double -> float 11 -> 21,
//! half -> double 34 -> 43, double -> half 87 -> 103). RISC-V's vector conversions
//! (`vfwcvt.f.f.v`, `vfncvt.f.f.w`) do the same, so riscv64 with V takes the `_keep_nan`
//! vector recipes ([`vector_promote_keep_nan`], [`vector_demote_keep_nan`], and
//! `half.round_native_keep_nan` for half <-> double), which select the defined NaN in integer
//! lanes (2.5 -> 5.5, 8.25 -> 13.25, 8.88 -> 11.75, 22.38 -> 27 per element); the other
//! targets' vector conversions keep sign and payload and need no fix-up, so their batch
//! kernels are unchanged. (`crates/verify/tests/cross_isa.rs` runs every kernel under QEMU
//! and pins the bits.)

use super::block::BlockSpec;
use super::lanes::{each_pair, low_dwords};
use super::narrow;
use super::small_float::{self, SmallFloat};
use super::values::bitcast_le;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Emits `convert_<dst>[_sat]_<rounding>(<src>)` on one element (the formats narrower than
/// float as their bits: I16 or I8). `saturate` is `_sat` into bfloat or an 8-bit float.
/// Conversions from or to those formats go through float: exactly from them; into them from
/// float by the mode, from double rounded to odd first (as double -> half).
pub fn emit(
    b: &mut FunctionBuilder,
    src: ScalarType,
    dst: ScalarType,
    rounding: Rounding,
    saturate: bool,
    x: Value,
) -> Value {
    use ScalarType::{Double, Float};
    let (small_src, small_dst) = (SmallFloat::of(src), SmallFloat::of(dst));
    let (narrow_src, narrow_dst) = (src.is_narrow(), dst.is_narrow());
    if small_src.is_some() || small_dst.is_some() || narrow_src || narrow_dst {
        // Source to float (exact); a double rounded to odd, which keeps the final rounding
        // exact (24 bits >= the destination's 11 + 2).
        let f_bits = match (src, small_src, narrow_src) {
            (_, Some(fmt), _) => {
                let f = small_float::to_f32(b, fmt, x);
                bitcast_le(b, types::I32, f)
            }
            (_, _, true) => {
                let f = narrow::to_f32(b, src, x);
                bitcast_le(b, types::I32, f)
            }
            (Float, None, false) => bitcast_le(b, types::I32, x),
            (_, None, false) => demote_f64_to_odd_bits(b, x),
        };
        return match (dst, small_dst, narrow_dst) {
            (_, Some(fmt), _) => small_float::from_f32_bits(b, fmt, f_bits, rounding, saturate),
            (_, _, true) => narrow::from_f32_bits(b, dst, f_bits, rounding, saturate),
            (Float, None, false) => bitcast_le(b, types::F32, f_bits),
            (_, None, false) => {
                let f = bitcast_le(b, types::F32, f_bits);
                promote_f32(b, f)
            }
        };
    }
    match (src, dst) {
        (Float, Double) => promote_f32(b, x),
        (Double, Float) => demote_f64(b, x, rounding),
        _ => unreachable!("float_to_float::emit called for {src} -> {dst}"),
    }
}

/// The nearest-even demotion, and whether it went away from zero / toward zero (both false
/// when exact or NaN).
fn demote_nearest(b: &mut FunctionBuilder, x: Value) -> (Value, Value, Value) {
    let r = b.ins().fdemote(types::F32, x);
    let back = b.ins().fpromote(types::F64, r);
    let abs_x = b.ins().fabs(x);
    let abs_back = b.ins().fabs(back);
    let went_away = b.ins().fcmp(FloatCC::GreaterThan, abs_back, abs_x);
    let went_toward = b.ins().fcmp(FloatCC::LessThan, abs_back, abs_x);
    (r, went_away, went_toward)
}

fn demote_f64(b: &mut FunctionBuilder, x: Value, rounding: Rounding) -> Value {
    let (r, went_away, went_toward) = demote_nearest(b, x);
    let bits = bitcast_le(b, types::I32, r);
    let bits = if rounding == Rounding::Rte {
        bits
    } else {
        let one = b.ins().iconst(types::I32, 1);
        let up = b.ins().iadd(bits, one);
        let down = b.ins().isub(bits, one);
        let zero = b.ins().f64const(0.0);
        let negative = b.ins().fcmp(FloatCC::LessThan, x, zero);
        // Which wrong direction to undo: rtz undoes "away"; rtp undoes "away" for negatives and
        // "toward" for positives; rtn the mirror image.
        let (undo_away, undo_toward) = match rounding {
            Rounding::Rtz => (went_away, None),
            Rounding::Rtp => {
                let positive = b.ins().bxor_imm_u(negative, 1);
                (
                    b.ins().band(went_away, negative),
                    Some(b.ins().band(went_toward, positive)),
                )
            }
            Rounding::Rtn => {
                let positive = b.ins().bxor_imm_u(negative, 1);
                (
                    b.ins().band(went_away, positive),
                    Some(b.ins().band(went_toward, negative)),
                )
            }
            Rounding::Rte => unreachable!(),
        };
        let mut result = b.ins().select(undo_away, down, bits);
        if let Some(toward) = undo_toward {
            result = b.ins().select(toward, up, result);
        }
        result
    };
    let bits = keep_nan_of_f64(b, x, bits);
    bitcast_le(b, types::F32, bits)
}

/// double -> float rounded to odd, as I32 bits.
fn demote_f64_to_odd_bits(b: &mut FunctionBuilder, x: Value) -> Value {
    let (r, went_away, went_toward) = demote_nearest(b, x);
    let bits = bitcast_le(b, types::I32, r);
    let one = b.ins().iconst(types::I32, 1);
    let down = b.ins().isub(bits, one);
    let truncated = b.ins().select(went_away, down, bits);
    let inexact = b.ins().bor(went_away, went_toward);
    let sticky = b.ins().uextend(types::I32, inexact);
    let odd = b.ins().bor(truncated, sticky);
    // A NaN's float bits keep the top 23 payload bits, so float -> half then keeps the top 10:
    // the reference's double -> half NaN, in two steps that each keep the top bits.
    keep_nan_of_f64(b, x, odd)
}

/// float -> double, exact, a NaN keeping its sign and payload (see the module docs):
/// `fpromote`, or for a NaN `(sextend(bits) << 29) | 0x7ff8_0000_0000_0000`: the shift puts the
/// 23 payload bits at the top of double's 52 and the sign at bit 63 (the sign extension fills
/// the bits between, which the exponent's ones then cover); the constant sets the exponent
/// and the quiet bit. Float `0x7f800001` (signalling) gives `0x7ff8000020000000`.
fn promote_f32(b: &mut FunctionBuilder, x: Value) -> Value {
    let r = b.ins().fpromote(types::F64, x);
    let bits = bitcast_le(b, types::I32, x);
    let wide = b.ins().sextend(types::I64, bits);
    let moved = b.ins().ishl_imm_u(wide, 29);
    let nan = b.ins().bor_imm_u(moved, 0x7ff8_0000_0000_0000);
    let nan = bitcast_le(b, types::F64, nan);
    let is_nan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    b.ins().select(is_nan, nan, r)
}

/// `bits` (the float result of demoting the double `x`, as I32), or, when `x` is a NaN, the
/// NaN the reference defines: the sign, the top 23 payload bits, the quiet bit. In I64,
/// `x >> 29` (logical) holds the payload's top 23 bits under nine exponent ones, so with the
/// quiet bit or-ed in its low word is `0xffc00000 | payload`; `x >> 32` (arithmetic) or
/// `0x7fffffff` is `sign | 0x7fffffff` in the low word, and the `and` of the two is the NaN.
/// Double `0x7ff0000000000001` (signalling, payload below float's) gives `0x7fc00000`.
fn keep_nan_of_f64(b: &mut FunctionBuilder, x: Value, bits: Value) -> Value {
    let d = bitcast_le(b, types::I64, x);
    let payload = b.ins().ushr_imm_u(d, 29);
    let payload = b.ins().bor_imm_u(payload, 0x0040_0000);
    let sign = b.ins().sshr_imm_u(d, 32);
    let sign = b.ins().bor_imm_u(sign, 0x7fff_ffff);
    let nan = b.ins().band(payload, sign);
    let nan = b.ins().ireduce(types::I32, nan);
    let is_nan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    b.ins().select(is_nan, nan, bits)
}

/// Vector recipe `float_to_float.promote`: float -> double, exact: `fvpromote_low` on each
/// half of an F32X4.
pub fn vector_promote(b: &mut FunctionBuilder, inputs: &[Value]) -> Vec<Value> {
    let mut out = Vec::with_capacity(inputs.len() * 2);
    for &v in inputs {
        let high = super::lanes::high_half_to_low(b, v);
        out.push(b.ins().fvpromote_low(v));
        out.push(b.ins().fvpromote_low(high));
    }
    out
}

/// Vector recipe `float_to_float.promote_keep_nan`: [`vector_promote`] with every NaN lane
/// replaced by the reference's NaN, for targets whose vector conversion gives the canonical
/// NaN (RISC-V's `vfwcvt.f.f.v`): per F64X2, the float lanes sign-extended to 64 bits
/// (`swiden`), shifted left by 29 and or-ed with `0x7ff8_0000_0000_0000` (the vector form of
/// `promote_f32`), selected where the result is not equal to itself (a NaN). 3 instructions
/// per element on top of the promotion on riscv64 with V.
pub fn vector_promote_keep_nan(b: &mut FunctionBuilder, inputs: &[Value]) -> Vec<Value> {
    use super::lanes::splat_bits;
    let mut out = Vec::with_capacity(inputs.len() * 2);
    for &v in inputs {
        let high = super::lanes::high_half_to_low(b, v);
        let bits = bitcast_le(b, types::I32X4, v);
        let wide = [b.ins().swiden_low(bits), b.ins().swiden_high(bits)];
        for (half, wide) in [v, high].into_iter().zip(wide) {
            let d = b.ins().fvpromote_low(half);
            let moved = b.ins().ishl_imm_u(wide, 29);
            let exp_quiet = splat_bits(b, types::I64X2, 0x7ff8_0000_0000_0000);
            let nan = b.ins().bor(moved, exp_quiet);
            let is_nan = b.ins().fcmp(FloatCC::NotEqual, d, d);
            let d_bits = bitcast_le(b, types::I64X2, d);
            let r = b.ins().bitselect(is_nan, nan, d_bits);
            out.push(bitcast_le(b, types::F64X2, r));
        }
    }
    out
}

/// Vector recipe `float_to_float.demote_keep_nan`: [`vector_demote`] with every NaN lane
/// replaced by the reference's NaN ([`keep_nan_of_f64x2`]), for targets whose vector
/// conversion gives the canonical NaN (RISC-V's `vfncvt.f.f.w`).
pub fn vector_demote_keep_nan(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    each_pair(b, inputs, |b, x0, x1| {
        let r = demote_block(b, x0, x1, spec.rounding);
        keep_nan_of_f64x2(b, x0, x1, r)
    })
}

/// `r`, the F32X4 demotion of the F64X2 pair `x0`, `x1` (lanes in order), with each lane whose
/// source is a NaN replaced by the NaN the reference defines: the vector form of
/// `keep_nan_of_f64`, computed in I64X2 (`(x >> 29 | 0x400000) & (x >>s 32 | 0x7fffffff)` has
/// the float NaN in each lane's low 32 bits) and moved to 32-bit lanes by the shuffle that
/// joins the demoted halves; a lane of `r` is a NaN exactly where its source is, so `r`'s own
/// `fcmp ne r, r` is the mask. 5 instructions per element on riscv64 with V.
pub fn keep_nan_of_f64x2(b: &mut FunctionBuilder, x0: Value, x1: Value, r: Value) -> Value {
    use super::lanes::splat_bits;
    let mut nans = Vec::with_capacity(2);
    for x in [x0, x1] {
        let d = bitcast_le(b, types::I64X2, x);
        let payload = b.ins().ushr_imm_u(d, 29);
        let quiet = splat_bits(b, types::I64X2, 0x0040_0000);
        let payload = b.ins().bor(payload, quiet);
        let sign = b.ins().sshr_imm_u(d, 32);
        let rest = splat_bits(b, types::I64X2, 0x7fff_ffff);
        let sign = b.ins().bor(sign, rest);
        nans.push(b.ins().band(payload, sign));
    }
    let nan = low_dwords(b, nans[0], nans[1]);
    let mask = b.ins().fcmp(FloatCC::NotEqual, r, r);
    let bits = bitcast_le(b, types::I32X4, r);
    let fixed = b.ins().bitselect(mask, nan, bits);
    bitcast_le(b, types::F32X4, fixed)
}

/// Vector recipe `float_to_float.demote`: double -> float in any mode, two F64X2 per F32X4.
pub fn vector_demote(b: &mut FunctionBuilder, spec: &BlockSpec, inputs: &[Value]) -> Vec<Value> {
    demote_pairs(b, inputs, spec.rounding)
}

/// Vector recipe `float_to_float.demote_by_control` (x86-64 batch kernels, directed modes):
/// `fvdemote` (`cvtpd2ps`) alone, run with the rounding control (MXCSR.RC) set to the mode,
/// which it rounds by; NaNs, infinities, overflow (rtz: FLT_MAX) and subnormal results as the
/// instruction gives them, which is what IEEE 754 and the reference say.
///
/// Hard inputs: FLT_MAX + half an ulp and more (rtz/rtn of a positive: FLT_MAX), the smallest
/// subnormal float and half of it, -0, sNaN (quieted, payload kept).
///
/// ```
/// # #[cfg(feature = "jit")] {
/// // On x86-64, convert_float2_rtz(double2) is this recipe (lowering-tables/x86_64.table).
/// let jit = clconv::jit::Jit::new().unwrap();
/// let k = jit.compile("convert_float2_rtz(double2)").unwrap();
/// let mut out = [0f32; 2];
/// k.run(&[1e300f64, -(1.0 + f64::EPSILON)][..], &mut out[..]).unwrap();
/// assert_eq!(out, [f32::MAX, -1.0]);
/// # }
/// ```
pub fn vector_demote_by_control(
    b: &mut FunctionBuilder,
    _spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    demote_pairs(b, inputs, Rounding::Rte)
}

/// [`demote_block`] on each pair of `inputs` (F64X2, in order): one F32X4 per two.
pub fn demote_pairs(b: &mut FunctionBuilder, inputs: &[Value], rounding: Rounding) -> Vec<Value> {
    each_pair(b, inputs, |b, x0, x1| demote_block(b, x0, x1, rounding))
}

/// `fvdemote` (nearest-even) of each F64X2, and the two results joined into one F32X4 (lanes
/// in order).
fn demote_nearest_pair(b: &mut FunctionBuilder, x0: Value, x1: Value) -> ([Value; 2], Value) {
    let r0 = b.ins().fvdemote(x0);
    let r1 = b.ins().fvdemote(x1);
    let r = super::lanes::join_low_halves(b, r0, r1);
    ([r0, r1], r)
}

/// Lane masks (F64X2) of whether `rx`, the `fvdemote` of `x`, went away from zero or toward
/// it: `rx` widened back exactly, magnitudes compared (both false where exact or NaN).
fn demoted_sides(b: &mut FunctionBuilder, x: Value, rx: Value) -> (Value, Value) {
    let back = b.ins().fvpromote_low(rx);
    let abs_x = super::lanes::abs(b, x);
    let abs_back = super::lanes::abs(b, back);
    let away = b.ins().fcmp(FloatCC::GreaterThan, abs_back, abs_x);
    let toward = b.ins().fcmp(FloatCC::LessThan, abs_back, abs_x);
    (away, toward)
}

/// Two F64X2 -> one F32X4 rounded by `rounding`: the vector form of `demote_f64`.
///
/// `fvdemote` rounds to nearest-even (lanes 2, 3 zero); `fvpromote_low` widens the result back
/// exactly; comparing magnitudes with the source gives, per lane, whether the demotion went
/// away from zero or toward it (both false when exact or NaN). The step is -1 (toward zero) or
/// +1 (away) on the float's bits, computed as 64-bit masks and moved to 32-bit lanes with the
/// same shuffle that joins the two halves.
pub fn demote_block(b: &mut FunctionBuilder, x0: Value, x1: Value, rounding: Rounding) -> Value {
    use super::lanes::splat_bits;
    let ([r0, r1], r) = demote_nearest_pair(b, x0, x1);
    if rounding == Rounding::Rte {
        return r;
    }
    let mut deltas = Vec::with_capacity(2);
    for (x, rx) in [(x0, r0), (x1, r1)] {
        let (away, toward) = demoted_sides(b, x, rx);
        let zero = splat_bits(b, types::F64X2, 0);
        let neg = b.ins().fcmp(FloatCC::LessThan, x, zero);
        let pos = b.ins().bnot(neg);
        let one = splat_bits(b, types::I64X2, 1);
        // -1 undoes "away" (toward zero), +1 undoes "toward" (away from zero).
        let (undo_away, undo_toward) = match rounding {
            Rounding::Rtz => (away, None),
            Rounding::Rtp => (b.ins().band(away, neg), Some(b.ins().band(toward, pos))),
            Rounding::Rtn => (b.ins().band(away, pos), Some(b.ins().band(toward, neg))),
            Rounding::Rte => unreachable!(),
        };
        let delta = match undo_toward {
            Some(t) => {
                let plus = b.ins().band(t, one);
                b.ins().bor(undo_away, plus)
            }
            None => undo_away,
        };
        deltas.push(delta);
    }
    // Low 32 bits of each 64-bit delta (-1 or +1 or 0 in two's complement), in lane order.
    let delta = low_dwords(b, deltas[0], deltas[1]);
    let bits = bitcast_le(b, types::I32X4, r);
    let bits = b.ins().iadd(bits, delta);
    bitcast_le(b, types::F32X4, bits)
}

/// Two F64X2 -> one F32X4 rounded to odd (the truncation, with its lowest bit set when
/// inexact): the first step of double -> half and long -> half, whose second rounding (to
/// half, by the mode) is then exact. The vector form of `demote_f64_to_odd_bits`.
pub fn demote_block_odd(b: &mut FunctionBuilder, x0: Value, x1: Value) -> Value {
    use super::lanes::splat_bits;
    let ([r0, r1], r) = demote_nearest_pair(b, x0, x1);
    let mut aways = Vec::with_capacity(2);
    let mut inexacts = Vec::with_capacity(2);
    for (x, rx) in [(x0, r0), (x1, r1)] {
        let (away, toward) = demoted_sides(b, x, rx);
        inexacts.push(b.ins().bor(away, toward));
        aways.push(away);
    }
    let away = low_dwords(b, aways[0], aways[1]);
    let inexact = low_dwords(b, inexacts[0], inexacts[1]);
    let one = splat_bits(b, types::I32X4, 1);
    let sticky = b.ins().band(inexact, one);
    let bits = bitcast_le(b, types::I32X4, r);
    let truncated = b.ins().iadd(bits, away); // away is -1 where the demotion went up
    let odd = b.ins().bor(truncated, sticky);
    bitcast_le(b, types::F32X4, odd)
}

/// Vector recipe `float_to_float.demote_compare` (aarch64): double -> float in rtz, rtp or
/// rtn, 3.5-3.75 instructions per element where [`demote_block`]'s sequence takes 4.5.
///
/// `fvdemote` (`fcvtn`) rounds each F64X2 to nearest-even; `fvpromote_low` (`fcvtl`) widens
/// the result back exactly, and one compare per F64X2 says on which side of the source it
/// landed; the two results are joined with one shuffle (`uzp1 .2d`) and the two masks' low
/// halves with another (`uzp1 .4s`); then one step on the float's bits:
///
/// - rtz: went away from zero where |back| > |x|. The two have the same sign, and the bit
///   patterns of same-signed doubles, read as signed integers, are ordered like their
///   magnitudes (sign and magnitude: a negative one is -2^63 + |x|), so one integer compare
///   (`cmgt .2d`) replaces two `fabs` and a float compare. The step is -1 on the bits (toward
///   zero for either sign: inf becomes MAX). A NaN's widened result can compare above it
///   (a signalling NaN comes back quiet), so lanes whose float is a NaN (`fcmeq r, r` false)
///   keep the nearest-even NaN, which is what [`demote_block`] gives them too.
/// - rtp (rtn): went below (above) the source where the float compare says so (false for
///   NaN); the step is one ulp up (down): +1 (-1) on a positive float's bits, the reverse on
///   a negative one's, with the float's sign, which is the source's (-0 for a tiny negative:
///   rtn steps it to the smallest negative subnormal).
///
/// Hard inputs: FLT_MAX + half an ulp and more (rte gives inf: rtz and the mode pointing back
/// give MAX), the smallest subnormal float and half of it, +-1e-50, -0, signalling NaNs of
/// either sign, +-inf.
pub fn vector_demote_compare(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes::join_low_halves;
    use cranelift_codegen::ir::condcodes::IntCC;
    each_pair(b, inputs, |b, x0, x1| {
        let mut demoted = Vec::with_capacity(2);
        let mut masks = Vec::with_capacity(2);
        for x in [x0, x1] {
            let r = b.ins().fvdemote(x);
            let back = b.ins().fvpromote_low(r);
            let mask = match spec.rounding {
                Rounding::Rtz => {
                    let back = bitcast_le(b, types::I64X2, back);
                    let x = bitcast_le(b, types::I64X2, x);
                    b.ins().icmp(IntCC::SignedGreaterThan, back, x)
                }
                Rounding::Rtp => b.ins().fcmp(FloatCC::LessThan, back, x),
                Rounding::Rtn => b.ins().fcmp(FloatCC::GreaterThan, back, x),
                Rounding::Rte => {
                    unreachable!("float_to_float.demote_compare is for directed modes")
                }
            };
            demoted.push(r);
            masks.push(bitcast_le(b, types::I64X2, mask));
        }
        let r = join_low_halves(b, demoted[0], demoted[1]);
        let mask = low_dwords(b, masks[0], masks[1]);
        let bits = bitcast_le(b, types::I32X4, r);
        let bits = if spec.rounding == Rounding::Rtz {
            let number = b.ins().fcmp(FloatCC::Equal, r, r);
            let number = bitcast_le(b, types::I32X4, number);
            let away = b.ins().band(mask, number);
            b.ins().iadd(bits, away)
        } else {
            let neg = b.ins().sshr_imm_u(bits, 31);
            let up = spec.rounding == Rounding::Rtp;
            super::values::step_by_signed_mask(b, bits, neg, mask, up)
        };
        bitcast_le(b, types::F32X4, bits)
    })
}
