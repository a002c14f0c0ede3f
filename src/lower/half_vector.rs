//! The vector recipes `half.round_native` and `half.round_magic`: every conversion from or to
//! a format narrower than float (half, bfloat, fp8e4m3, fp8e5m2; except into long/ulong), and
//! from the one-byte narrow formats, as a stream of F32X4 values. It combines the other classes'
//! block sequences, so it sits above them: nothing but `recipes` depends on it.

use super::block::BlockSpec;
use super::lanes::VectorRounding;
use super::small_float::{self, SmallFloat, Unpack};
use super::{float_to_float, float_to_int, int_to_float, lanes, narrow};
use crate::types::ScalarType;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Vector recipes `half.round_native` and `half.round_magic`: every conversion from or to a
/// format narrower than float (except into long/ulong), through a stream of F32X4 values.
///
/// 1. Source to float, exactly or rounded to odd: half and the 8-bit floats by
///    [`small_float::small16_to_f32x4s`], bfloat16 by [`small_float::bfloat16x8_to_f32x4s`]
///    (all exact); 8/16-bit
///    integers by a widening conversion (exact); 32-bit integers by the split sum rounded to
///    odd; 64-bit integers by the split sum to double rounded to odd, then to float rounded
///    to odd; double by [`float_to_float::demote_block_odd`]. Round-to-odd at 24 bits
///    keeps the final rounding to half's 11 bits exact (24 >= 11 + 2), and odd-then-odd at
///    53 then 24 bits is odd at 24 bits.
/// 2. Float to the destination: a small float by [`small_float::from_f32x4`] (with `_sat`
///    for bfloat and the 8-bit floats), FP4, FP6 and the FNUZ formats by
///    `narrow::from_f32x4` (E8M0 by `narrow::e8m0_from_f32x4`), and a 32 -> 16 or 8-bit
///    lane narrowing; tf32 by `narrow::tf32_from_f32x4`, a word per float;
///    float as is; double by `fvpromote_low`; integers by the float -> integer recipe.
///
/// `kind` says how step 2 rounds to integers (the native instruction or the magic constant).
/// `unpack` says how step 1 spreads a small float's lanes into the upper halves of wider ones
/// (an interleave with zeros, or a widening and a shift: the `_widen` recipes, for targets
/// where a two-vector shuffle is long).
/// `keep_nan` replaces the NaN lanes of double's demotion and promotion by the reference's NaN
/// ([`float_to_float::keep_nan_of_f64x2`], [`float_to_float::vector_promote_keep_nan`]): the
/// recipe `half.round_native_keep_nan`, for targets whose vector conversions give the
/// canonical NaN (RISC-V).
pub fn vector(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    kind: VectorRounding,
    keep_nan: bool,
    unpack: Unpack,
    inputs: &[Value],
) -> Vec<Value> {
    let src = spec.src;
    let floats: Vec<Value> = match src {
        ScalarType::BFloat => inputs
            .iter()
            .flat_map(|&v| small_float::bfloat16x8_to_f32x4s(b, unpack, v))
            .collect(),
        ScalarType::Half => {
            let fmt = SmallFloat::of(src).expect("a small float");
            inputs
                .iter()
                .flat_map(|&v| small_float::small16_to_f32x4s(b, fmt, unpack, v))
                .collect()
        }
        // E8M0: eight codes at a time on 16-bit lanes.
        ScalarType::Fp8E8M0 => inputs
            .iter()
            .flat_map(|&v| narrow::e8m0_to_f32x4s(b, unpack, v))
            .collect(),
        // The other narrow formats (tf32 aside): each code into an I32X4 lane, then decoded.
        t if t.is_narrow() => lanes::widen_to(b, inputs.to_vec(), 8, 32, false)
            .into_iter()
            .map(|v| narrow::to_f32x4(b, t, v))
            .collect(),
        t if t.is_small_float() => {
            let fmt = SmallFloat::of(t).expect("a small float");
            let mut floats = Vec::with_capacity(inputs.len() * 4);
            for &v in inputs {
                for h in small_float::bytes_to_upper_halves(b, unpack, v) {
                    floats.extend(small_float::small16_to_f32x4s(b, fmt, unpack, h));
                }
            }
            floats
        }
        ScalarType::Float => inputs.to_vec(),
        ScalarType::Double => lanes::each_pair(b, inputs, |b, x0, x1| {
            let odd = float_to_float::demote_block_odd(b, x0, x1);
            if keep_nan {
                float_to_float::keep_nan_of_f64x2(b, x0, x1, odd)
            } else {
                odd
            }
        }),
        t if t.bits() <= 16 => {
            lanes::widen_to(b, inputs.to_vec(), t.bits(), 32, t.is_signed_integer())
                .into_iter()
                .map(|v| b.ins().fcvt_from_sint(types::F32X4, v))
                .collect()
        }
        t if t.bits() == 32 => lanes::each(b, inputs, |b, x| {
            let (s, err) = int_to_float::split_sum_32(b, t, x);
            int_to_float::round_to_odd(b, s, err)
        }),
        t => {
            let doubles = lanes::each(b, inputs, |b, x| {
                let (s, err) = int_to_float::split_sum_64(b, t, x);
                int_to_float::round_to_odd(b, s, err)
            });
            lanes::each_pair(b, &doubles, float_to_float::demote_block_odd)
        }
    };
    from_floats(b, spec, kind, keep_nan, floats)
}

/// Vector recipe `narrow.table_native`: FP4, FP6 and the FNUZ formats into half,
/// float, double and bfloat, step 1 by table (`narrow::to_f32x4s_by_table`, 16 codes at a
/// time) in place of the arithmetic decode, step 2 as in [`vector`].
pub fn vector_table(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    kind: VectorRounding,
    unpack: Unpack,
    inputs: &[Value],
) -> Vec<Value> {
    let floats: Vec<Value> = inputs
        .iter()
        .flat_map(|&v| narrow::to_f32x4s_by_table(b, spec.src, unpack, v))
        .collect();
    from_floats(b, spec, kind, false, floats)
}

/// Step 2 of [`vector`]: the stream of F32X4 values into the destination.
fn from_floats(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    kind: VectorRounding,
    keep_nan: bool,
    floats: Vec<Value>,
) -> Vec<Value> {
    match spec.dst {
        // E8M0: codes 0..=255 in I32X4 lanes, packed without saturating.
        ScalarType::Fp8E8M0 => {
            let codes: Vec<Value> = floats
                .into_iter()
                .map(|f| narrow::e8m0_from_f32x4(b, f, spec.rounding, spec.saturate))
                .collect();
            lanes::narrow_to(b, codes, 32, 8, Some(true))
        }
        // tf32: a word per float.
        ScalarType::Tf32 => floats
            .into_iter()
            .map(|f| narrow::tf32_from_f32x4(b, f, spec.rounding, spec.saturate))
            .collect(),
        // FP4, FP6 and the FNUZ formats: codes in I32X4 lanes, packed like the 8-bit floats'.
        t if t.is_narrow() => {
            let codes: Vec<Value> = floats
                .into_iter()
                .map(|f| narrow::from_f32x4(b, t, f, spec.rounding, kind, spec.saturate))
                .collect();
            lanes::narrow_to(b, codes, 32, 8, Some(false))
        }
        t if t.is_small_float() => {
            let fmt = SmallFloat::of(t).expect("a small float");
            let smalls: Vec<Value> = floats
                .into_iter()
                .map(|f| small_float::from_f32x4(b, fmt, f, spec.rounding, kind, spec.saturate))
                .collect();
            // Sign-extended elements: `snarrow` packs them exactly.
            lanes::narrow_to(b, smalls, 32, t.bits(), Some(false))
        }
        ScalarType::Float => floats,
        ScalarType::Double if keep_nan => float_to_float::vector_promote_keep_nan(b, &floats),
        ScalarType::Double => float_to_float::vector_promote(b, &floats),
        _ => {
            let as_float = BlockSpec {
                src: ScalarType::Float,
                ..*spec
            };
            float_to_int::vector(b, &as_float, kind, &floats)
        }
    }
}
