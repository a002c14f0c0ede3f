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
use super::values::{bitcast_le, element_type, int_const};
use cranelift_codegen::ir::{InstBuilder, Type, Value};
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

/// `outputs`, one block of `spec`'s destination vectors as a recipe gave them, under `spec`'s
/// rules; vectors of the destination's lanes.
pub(crate) fn block(b: &mut FunctionBuilder, spec: &BlockSpec, outputs: Vec<Value>) -> Vec<Value> {
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
