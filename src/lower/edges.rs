//! The rules beyond OpenCL's at the edges of a conversion ([`crate::rules`]), applied to what a
//! recipe gives. The recipes implement OpenCL's rules; every other rule of a float -> integer
//! conversion clamps into a narrower range than the destination's, and clamping OpenCL's
//! result is the same as clamping the rounded value:
//!
//! - a number t: OpenCL gives clamp(t, MIN, MAX); with [lo, hi] inside [MIN, MAX],
//!   clamp(clamp(t, MIN, MAX), lo, hi) = clamp(t, lo, hi), the narrower rule's result;
//! - NaN: OpenCL gives 0, and lo <= 0 <= hi keeps it 0, which is what every rule here gives.
//!
//! So one integer `smin`/`smax` (`umin` for unsigned destinations) per bound that moved serves
//! every recipe, per element and per vector, on every target, without a copy of any recipe.
//! The hard inputs: the source values just above the moved bound (2147483520 and the next
//! float, 2147483648, for WGSL's float -> int), infinities, NaN.

use super::block::BlockSpec;
use super::lanes::{splat_bits, vector_of};
use super::small_float::SmallFloat;
use super::values::{bitcast_le, element_type, int_const};
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// The bounds `spec`'s rules clamp to where they are narrower than the destination's range
/// (which the recipes already clamp to): (new lower bound, new upper bound).
fn moved_bounds(spec: &BlockSpec) -> (Option<i128>, Option<i128>) {
    let Some((lo, hi)) = spec.rules.integer_bounds(spec.src, spec.dst) else {
        return (None, None);
    };
    let (min, max) = (spec.dst.int_min(), spec.dst.int_max());
    (
        Some(lo).filter(|&lo| Some(lo) != min),
        Some(hi).filter(|&hi| Some(hi) != max),
    )
}

/// `y`, one element of `spec`'s destination as a recipe gave it, under `spec`'s rules.
pub(crate) fn element(b: &mut FunctionBuilder, spec: &BlockSpec, y: Value) -> Value {
    let (lo, hi) = moved_bounds(spec);
    if lo.is_none() && hi.is_none() {
        return y;
    }
    let ty = element_type(spec.dst);
    clamp(b, spec, ty, y, lo, hi, |b, bound| int_const(b, ty, bound))
}

/// `y`, one element of `spec`'s destination under its rules, given the source element `x` (half,
/// bfloat16 and fp8 as their bits): the clamp of [`element`], then what NaN gives when the rules say other than 0
/// (PTX's `1 << (width - 1)`): a select on the source being NaN.
pub(crate) fn element_from(b: &mut FunctionBuilder, spec: &BlockSpec, x: Value, y: Value) -> Value {
    use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
    let y = element(b, spec, y);
    let nan_bits = spec.rules.nan_bits(spec.dst);
    if nan_bits == 0 {
        return y;
    }
    // The formats narrower than float arrive as their bits (I16, I8), which no backend
    // compares as floats: their NaNs are the magnitudes above the largest non-NaN one.
    let is_nan = match SmallFloat::of(spec.src) {
        Some(fmt) => {
            let magnitude = b.ins().band_imm_u(x, i64::from(fmt.magnitude_mask()));
            b.ins().icmp_imm_u(
                IntCC::UnsignedGreaterThan,
                magnitude,
                i64::from(fmt.largest_non_nan()),
            )
        }
        None => b.ins().fcmp(FloatCC::Unordered, x, x),
    };
    let ty = element_type(spec.dst);
    let c = int_const(b, ty, nan_bits as i128);
    b.ins().select(is_nan, c, y)
}

/// True when the rules are the recipes' own up to what [`block_inputs`] and [`block`] apply
/// around them: a vector recipe serves them. Other NaN results (PTX's) need the source per
/// lane, and a clamp of 64-bit float lanes needs compares x86-64 lacks before SSE4.2: the
/// per-element sequence ([`element_from`], [`float_result`]) serves those, and the rules
/// that change the conversion itself: tf32's ties away from zero and E8M0 of a magnitude
/// (`_abs`).
pub(crate) fn vector_recipes_serve(
    rules: crate::rules::Rules,
    dst: crate::types::ScalarType,
) -> bool {
    use crate::rules::FloatResult;
    !matches!(rules.nan, crate::rules::NanToInteger::HighBit)
        && !rules.ties_away
        && rules.float_result != FloatResult::Magnitude
        && (rules.float_result == FloatResult::Rounded || dst.bits() <= 32)
}

/// A constant of the integer type or integer vector type `ty`, every lane `bits`.
fn constant(b: &mut FunctionBuilder, ty: Type, bits: u64) -> Value {
    if ty.is_vector() {
        splat_bits(b, ty, bits)
    } else {
        int_const(b, ty, bits as i128)
    }
}

/// `a` where `cond` holds, else `c`: `select` on scalars, `bitselect` on the all-ones-or-zero
/// lanes of a vector compare.
fn choose(b: &mut FunctionBuilder, cond: Value, a: Value, c: Value) -> Value {
    if b.func.dfg.value_type(a).is_vector() {
        b.ins().bitselect(cond, a, c)
    } else {
        b.ins().select(cond, a, c)
    }
}

/// The integer type (or integer vector type) with the lanes of `ty`.
fn integer_of(ty: Type) -> Type {
    let lane = Type::int(ty.lane_bits() as u16).expect("a lane width");
    if ty.is_vector() {
        lane.by(ty.lane_count()).expect("a vector of it")
    } else {
        lane
    }
}

/// A `float` operand or result (F32, or F32X4 lanes) with each subnormal flushed to the zero
/// of its sign (PTX `.ftz`): a zero exponent field keeps only the sign bit.
pub(crate) fn flush_float_subnormal(b: &mut FunctionBuilder, x: Value) -> Value {
    use cranelift_codegen::ir::condcodes::IntCC;
    let ty = b.func.dfg.value_type(x);
    let int_ty = integer_of(ty);
    let bits = bitcast_le(b, int_ty, x);
    let exponent_mask = constant(b, int_ty, 0x7f80_0000);
    let exponent = b.ins().band(bits, exponent_mask);
    let zero = constant(b, int_ty, 0);
    let subnormal = b.ins().icmp(IntCC::Equal, exponent, zero);
    let sign_mask = constant(b, int_ty, 0x8000_0000);
    let sign = b.ins().band(bits, sign_mask);
    let flushed = choose(b, subnormal, sign, bits);
    bitcast_le(b, ty, flushed)
}

/// A `double` operand (F64, or F64X2 lanes) of a double -> float conversion under `.ftz`, with
/// each magnitude below float's smallest normal (2^-126) made the zero of its sign, so that a
/// result tiny before rounding is flushed, as sm_90 does (`docs/ptx.md`): a result that only
/// rounding would lift to 2^-126 is 0 there. A float compare of the magnitude (`cmpltpd` on
/// SSE2: x86-64 has no 64-bit integer compare before SSE4.2); NaN compares false and is kept.
pub(crate) fn flush_below_float_min(b: &mut FunctionBuilder, x: Value) -> Value {
    use cranelift_codegen::ir::condcodes::FloatCC;
    let ty = b.func.dfg.value_type(x);
    let int_ty = integer_of(ty);
    let magnitude = b.ins().fabs(x);
    let float_min_bits = constant(b, int_ty, 0x3810_0000_0000_0000);
    let float_min = bitcast_le(b, ty, float_min_bits);
    let tiny = b.ins().fcmp(FloatCC::LessThan, magnitude, float_min);
    let bits = bitcast_le(b, int_ty, x);
    let sign_mask = constant(b, int_ty, 1 << 63);
    let sign = b.ins().band(bits, sign_mask);
    let out = if ty.is_vector() {
        let tiny = bitcast_le(b, int_ty, tiny);
        b.ins().bitselect(tiny, sign, bits)
    } else {
        b.ins().select(tiny, sign, bits)
    };
    bitcast_le(b, ty, out)
}

/// `y`, results of a conversion into the float type `dst` (F32, F64, or the bits of a 16- or
/// 8-bit float; a scalar or a vector of them), under `result`
/// ([`crate::rules::FloatResult`]), on its bits: NaN is a magnitude above the format's
/// infinity (E4M3's largest finite value), a negative value (-0.0 included) has the sign bit
/// set, and among the others the bits order as the values do.
pub(crate) fn float_result(
    b: &mut FunctionBuilder,
    result: crate::rules::FloatResult,
    dst: crate::types::ScalarType,
    y: Value,
) -> Value {
    use crate::rules::FloatResult;
    use crate::types::ScalarType;
    use cranelift_codegen::ir::condcodes::IntCC;
    // `_abs` acts on the operand ([`e8m0_of_magnitude`]), not on the result.
    if matches!(result, FloatResult::Rounded | FloatResult::Magnitude) {
        return y;
    }
    let ty = b.func.dfg.value_type(y);
    if matches!(
        dst,
        ScalarType::Fp6E2M3 | ScalarType::Fp6E3M2 | ScalarType::Fp4E2M1
    ) {
        // `.relu` into FP6 and FP4 (the only rule they keep), on codes (a code per integer
        // lane, below 64 or 16): a negative one (the sign is bit 5 or 3; -0 too) gives +0;
        // neither has a NaN.
        debug_assert_eq!(result, FloatResult::Relu);
        let int_ty = integer_of(ty);
        let bits = bitcast_le(b, int_ty, y);
        let sign_of = if dst == ScalarType::Fp4E2M1 {
            0x08
        } else {
            0x20
        };
        let sign = constant(b, int_ty, sign_of);
        let zero = constant(b, int_ty, 0);
        let sign_bit = b.ins().band(bits, sign);
        let negative = b.ins().icmp(IntCC::NotEqual, sign_bit, zero);
        let out = if ty.is_vector() {
            // Negative lanes all ones in `negative`: cleared (`pandn`).
            b.ins().band_not(bits, negative)
        } else {
            b.ins().select(negative, zero, bits)
        };
        return bitcast_le(b, ty, out);
    }
    let int_ty = integer_of(ty);
    debug_assert_eq!(int_ty.lane_bits(), dst.bits());
    let bits = bitcast_le(b, int_ty, y);
    // (the magnitude above which the bits are NaN, the bits of 1.0)
    let (nan_above, one): (u64, u64) = match (SmallFloat::of(dst), dst) {
        // Past infinity; E4M3, which has none, past its largest finite value.
        (Some(f), _) if f.nan_only => (f.max_finite().into(), u64::from(f.bias << f.fraction)),
        (Some(f), _) => (f.first_beyond().into(), u64::from(f.bias << f.fraction)),
        // tf32 is float's top 19 bits (its word's low 13 are zero).
        (None, ScalarType::Float | ScalarType::Tf32) => (0x7f80_0000, 0x3f80_0000),
        (None, ScalarType::Double) => (0x7ff0_0000_0000_0000, 0x3ff0_0000_0000_0000),
        _ => unreachable!("Rules::normalised keeps a float result only for a float destination"),
    };
    let sign = 1u64 << (dst.bits() - 1);
    let zero = constant(b, int_ty, 0);
    let nan_limit = constant(b, int_ty, nan_above);
    if result == FloatResult::CanonicalNan {
        // A NaN of either sign (a magnitude past infinity's bits) gives the canonical NaN; the
        // other values keep their bits.
        let canonical = constant(b, int_ty, sign - 1);
        let magnitude = b.ins().band(bits, canonical);
        let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, magnitude, nan_limit);
        let out = if ty.is_vector() {
            b.ins().bitselect(is_nan, canonical, bits)
        } else {
            b.ins().select(is_nan, canonical, bits)
        };
        return bitcast_le(b, ty, out);
    }
    // Every value with the sign bit set (-0.0 included) gives +0.0 under both rules: the
    // signed maximum with 0, one instruction (`pmaxsd`), leaving the other values' bits.
    let kept = b.ins().smax(bits, zero);
    let vector = ty.is_vector();
    let out = match result {
        FloatResult::UnitInterval => {
            // NaN gives +0.0 too, whatever its sign: after the maximum, a NaN is a positive
            // one, one signed compare past infinity.
            let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, kept, nan_limit);
            let one = constant(b, int_ty, one);
            let clamped = b.ins().smin(kept, one);
            if vector {
                // NaN lanes (all ones in `is_nan`) cleared: `pandn`.
                b.ins().band_not(clamped, is_nan)
            } else {
                b.ins().select(is_nan, zero, clamped)
            }
        }
        _ => {
            // A NaN of either sign gives the canonical NaN: the compare is on the magnitude.
            // tf32's canonical NaN has every fraction bit set within its 19 bits.
            let canonical_bits = if dst == ScalarType::Tf32 {
                0x7fff_e000
            } else {
                sign - 1
            };
            let canonical = constant(b, int_ty, canonical_bits);
            // One constant where the two are equal: the other formats' IR (and machine code,
            // which the ledger's proofs are of) as before tf32 came.
            let magnitude_mask = if dst == ScalarType::Tf32 {
                constant(b, int_ty, sign - 1)
            } else {
                canonical
            };
            let magnitude = b.ins().band(bits, magnitude_mask);
            let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, magnitude, nan_limit);
            if vector {
                // NaN lanes all ones, then the sign bit cleared; the others are below it.
                let ored = b.ins().bor(kept, is_nan);
                b.ins().band(ored, canonical)
            } else {
                b.ins().select(is_nan, canonical, kept)
            }
        }
    };
    bitcast_le(b, ty, out)
}

/// E8M0 of the float `x`'s magnitude ([`crate::rules::FloatResult::Magnitude`]): `convert`
/// (the conversion into E8M0, an I8 code) of `|x|`, and 2^-127 (0x00) for a zero, which E8M0
/// cannot hold. `x` is an F32, an F64 or a 16-bit float's I16 bits; every magnitude below
/// 2^-127 already converts to 0x00.
pub(crate) fn e8m0_of_magnitude(
    b: &mut FunctionBuilder,
    convert: impl FnOnce(&mut FunctionBuilder, Value) -> Value,
    x: Value,
) -> Value {
    use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
    let ty = b.func.dfg.value_type(x);
    let (magnitude, is_zero) = if ty.is_float() {
        let m = b.ins().fabs(x);
        let zero = if ty == types::F64 {
            b.ins().f64const(0.0)
        } else {
            b.ins().f32const(0.0)
        };
        (m, b.ins().fcmp(FloatCC::Equal, m, zero))
    } else {
        let m = b.ins().band_imm_u(x, 0x7fff);
        (m, b.ins().icmp_imm_u(IntCC::Equal, m, 0))
    };
    let code = convert(b, magnitude);
    let smallest = b.ins().iconst(types::I8, 0);
    b.ins().select(is_zero, smallest, code)
}

/// `inputs`, one block of `spec`'s source vectors, as the recipe is to take them under
/// `spec`'s rules: `float` lanes with subnormals flushed where the rules flush them.
pub(crate) fn block_inputs(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use crate::types::ScalarType::{Double, Float};
    if spec.rules.flush_float_subnormals && spec.src == Float {
        inputs
            .iter()
            .map(|&x| flush_float_subnormal(b, x))
            .collect()
    } else if spec.rules.flush_float_subnormals && (spec.src, spec.dst) == (Double, Float) {
        inputs
            .iter()
            .map(|&x| flush_below_float_min(b, x))
            .collect()
    } else {
        inputs.to_vec()
    }
}

/// `outputs`, one block of `spec`'s destination vectors as a recipe gave them, under `spec`'s
/// rules; vectors of the destination's lanes.
pub(crate) fn block(b: &mut FunctionBuilder, spec: &BlockSpec, outputs: Vec<Value>) -> Vec<Value> {
    let outputs = integer_block(b, spec, outputs);
    if !spec.rules.changes_floats() {
        return outputs;
    }
    let flush = spec.rules.flush_float_subnormals && spec.dst == crate::types::ScalarType::Float;
    outputs
        .into_iter()
        .map(|v| {
            let v = if flush {
                flush_float_subnormal(b, v)
            } else {
                v
            };
            float_result(b, spec.rules.float_result, spec.dst, v)
        })
        .collect()
}

/// [`block`]'s clamp of integer results to bounds narrower than the destination's.
fn integer_block(b: &mut FunctionBuilder, spec: &BlockSpec, outputs: Vec<Value>) -> Vec<Value> {
    let (lo, hi) = moved_bounds(spec);
    if lo.is_none() && hi.is_none() {
        return outputs;
    }
    let ty = vector_of(spec.dst);
    outputs
        .into_iter()
        .map(|v| {
            let v = bitcast_le(b, ty, v);
            clamp(b, spec, ty, v, lo, hi, |b, bound| {
                splat_bits(b, ty, bound as u64)
            })
        })
        .collect()
}

fn clamp(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    ty: Type,
    v: Value,
    lo: Option<i128>,
    hi: Option<i128>,
    constant: impl Fn(&mut FunctionBuilder, i128) -> Value,
) -> Value {
    debug_assert_eq!(b.func.dfg.value_type(v), ty);
    let signed = spec.dst.is_signed_integer();
    let mut v = v;
    if let Some(hi) = hi {
        let c = constant(b, hi);
        v = if signed {
            b.ins().smin(v, c)
        } else {
            b.ins().umin(v, c)
        };
    }
    if let Some(lo) = lo {
        // An unsigned destination's lower bound is 0 under every rule: only signed ones move.
        debug_assert!(signed);
        let c = constant(b, lo);
        v = b.ins().smax(v, c);
    }
    v
}

/// The trap flag of a float -> integer conversion under trapping rules (WebAssembly's
/// `trunc`): an I8 that is 1 when any lane of `parts` (scalars of `src`, or 128-bit vectors of
/// them; half as I16 bits, scalars only) is NaN or rounds outside `dst`'s range, else 0.
///
/// A lane x traps unless round(x) lies in [MIN, MAX]. For integral t that is MIN - 1 < t <
/// MAX + 1, and for a value of the format it is L < t < H with L the largest value of the
/// format at most MIN - 1 and H the smallest at least MAX + 1 (nothing of the format lies
/// between L and MIN - 1, or between MAX + 1 and H). Under rtz the same test holds for x
/// itself (trunc(x) >= MIN iff x > MIN - 1; trunc(x) <= MAX iff x < MAX + 1), so no rounding
/// instruction is needed. NaN fails both compares. Hard inputs: -1 < x < 0 into unsigned (no
/// trap), 2^31 - 128 and 2^31 for float -> int, ±infinity.
pub(crate) fn trap_flag(
    b: &mut FunctionBuilder,
    src: crate::types::ScalarType,
    dst: crate::types::ScalarType,
    rounding: crate::types::Rounding,
    parts: &[Value],
) -> Value {
    use crate::types::{Rounding, ScalarType};
    use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
    use cranelift_codegen::ir::types;
    use rustc_apfloat::ieee::{Double, Single};
    use rustc_apfloat::{Float, Round};
    let (min, max) = (dst.int_min().unwrap_or(0), dst.int_max().unwrap_or(0));
    // Half is compared as float: every half is a float, so the float bounds decide the same.
    let compare_as = if src == ScalarType::Double {
        ScalarType::Double
    } else {
        ScalarType::Float
    };
    let (lo_bits, hi_bits) = match compare_as {
        ScalarType::Double => (
            Double::from_i128_r(min - 1, Round::TowardNegative)
                .value
                .to_bits(),
            Double::from_i128_r(max + 1, Round::TowardPositive)
                .value
                .to_bits(),
        ),
        _ => (
            Single::from_i128_r(min - 1, Round::TowardNegative)
                .value
                .to_bits(),
            Single::from_i128_r(max + 1, Round::TowardPositive)
                .value
                .to_bits(),
        ),
    };
    let mut ok_all: Option<Value> = None;
    for &part in parts {
        let ty = b.func.dfg.value_type(part);
        let x = if src == ScalarType::Half {
            debug_assert!(!ty.is_vector(), "half vectors take no trap flag yet");
            super::half::half_bits_to_f32(b, part)
        } else {
            part
        };
        let ty = b.func.dfg.value_type(x);
        let t = if rounding == Rounding::Rtz {
            x
        } else if ty.is_vector() {
            super::lanes::round_vector(b, x, rounding, super::lanes::VectorRounding::Magic)
        } else {
            match rounding {
                Rounding::Rte => b.ins().nearest(x),
                Rounding::Rtp => b.ins().ceil(x),
                _ => b.ins().floor(x),
            }
        };
        let (lo, hi) = if ty.is_vector() {
            (
                splat_bits(b, ty, lo_bits as u64),
                splat_bits(b, ty, hi_bits as u64),
            )
        } else if ty == types::F64 {
            (
                b.ins().f64const(f64::from_bits(lo_bits as u64)),
                b.ins().f64const(f64::from_bits(hi_bits as u64)),
            )
        } else {
            (
                b.ins().f32const(f32::from_bits(lo_bits as u32)),
                b.ins().f32const(f32::from_bits(hi_bits as u32)),
            )
        };
        let above = b.ins().fcmp(FloatCC::GreaterThan, t, lo);
        let below = b.ins().fcmp(FloatCC::LessThan, t, hi);
        let ok = b.ins().band(above, below);
        let ok = if ty.is_vector() {
            b.ins().vall_true(ok)
        } else {
            ok
        };
        ok_all = Some(match ok_all {
            Some(o) => b.ins().band(o, ok),
            None => ok,
        });
    }
    let ok = ok_all.unwrap_or_else(|| b.ins().iconst(types::I8, 1));
    b.ins().icmp_imm_u(IntCC::Equal, ok, 0)
}
