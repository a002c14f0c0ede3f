//! Conversions to and from `bool`: the tables' `bool` class, emitted here and nowhere else.
//!
//! Every shader language defines them the same way (`docs/wgsl.md`, `glsl.md`, `hlsl.md` and
//! `msl.md` quote each):
//! a number converts to false when it is zero and to true otherwise, so `-0.0` gives false and
//! NaN gives true; a bool converts to 1 or 0 (1.0 or 0.0). On the bits that is: an integer is
//! zero when every bit is clear, a float when every bit but the sign is. Both directions are
//! exact, so no rounding mode, `_sat` or language rule changes them.
//!
//! A bool is one byte here, as in a batch kernel's buffer and the builder API's default
//! ([`super::BoolValues`]): 0 is false and every other byte true; a bool result is 0 or 1.

use super::block::BlockSpec;
use super::lanes;
use super::values::{bitcast_le, element_type};
use crate::types::ScalarType;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// The bits of 1 in `t`: 1 for an integer, 1.0 for a float (sign 0, the exponent's bias,
/// fraction 0).
fn one_bits(t: ScalarType) -> u64 {
    match t {
        ScalarType::Half => 0x3c00,
        ScalarType::BFloat => 0x3f80,
        ScalarType::Float => 0x3f80_0000,
        ScalarType::Double => 0x3ff0_0000_0000_0000,
        ScalarType::Fp8E4M3 => 0x38,
        ScalarType::Fp8E5M2 => 0x3c,
        _ => 1,
    }
}

/// The bits that make `t` nonzero: all of an integer's, all but a float's sign.
fn magnitude_mask(t: ScalarType) -> u64 {
    let all = u64::MAX >> (64 - t.bits());
    if t.is_float() {
        all >> 1
    } else {
        all
    }
}

/// One element: `x` of `src` (as [`element_type`] holds it) to `dst`, one side being bool.
pub fn emit(b: &mut FunctionBuilder, src: ScalarType, dst: ScalarType, x: Value) -> Value {
    if src == ScalarType::Bool {
        // select tests its condition for nonzero: any byte but 0 is true.
        let one = constant(b, dst, one_bits(dst));
        let zero = constant(b, dst, 0);
        return b.ins().select(x, one, zero);
    }
    let ty = element_type(src);
    let bits = match ty {
        types::F32 => bitcast_le(b, types::I32, x),
        types::F64 => bitcast_le(b, types::I64, x),
        _ => x,
    };
    let magnitude = if src.is_float() {
        b.ins().band_imm_u(bits, magnitude_mask(src) as i64)
    } else {
        bits
    };
    // A scalar icmp gives an I8 0 or 1: the bool byte.
    b.ins().icmp_imm_u(IntCC::NotEqual, magnitude, 0)
}

/// A constant of `t`'s element type with bits `bits`.
fn constant(b: &mut FunctionBuilder, t: ScalarType, bits: u64) -> Value {
    match element_type(t) {
        types::F32 => b.ins().f32const(f32::from_bits(bits as u32)),
        types::F64 => b.ins().f64const(f64::from_bits(bits)),
        ty => super::values::int_const(b, ty, bits as i128),
    }
}

/// One block (16 elements): one I8X16 of bools in, the destination's vectors out; or the
/// source's vectors in, one I8X16 of bools out.
pub fn vector(b: &mut FunctionBuilder, spec: &BlockSpec, inputs: &[Value]) -> Vec<Value> {
    let (src, dst) = (spec.src, spec.dst);
    if src == ScalarType::Bool {
        // Every nonzero byte to 1, then 0/1 widened to the destination's lanes; a float's 1.0
        // is its bits under an all-ones mask (0 - 1).
        let ones = lanes::splat_bits(b, types::I8X16, 1);
        let unit = b.ins().umin(inputs[0], ones);
        let wide = lanes::widen_to(b, vec![unit], 8, dst.bits(), false);
        return wide
            .into_iter()
            .map(|w| {
                let w = if dst.is_float() {
                    let ty = b.func.dfg.value_type(w);
                    let zero = lanes::splat_bits(b, ty, 0);
                    let mask = b.ins().isub(zero, w);
                    let one = lanes::splat_bits(b, ty, one_bits(dst));
                    b.ins().band(mask, one)
                } else {
                    w
                };
                bitcast_le(b, lanes::vector_of(dst), w)
            })
            .collect();
    }
    // Each lane compared with zero (a float without its sign): all ones where it is zero. The
    // masks narrow to bytes by signed packs, which keep 0 and -1, and 1 & !zero is the bool.
    let int_ty = lanes::int_vector(src.bits());
    let zero = lanes::zero_vconst(b, int_ty);
    let keep = src
        .is_float()
        .then(|| lanes::splat_bits(b, int_ty, magnitude_mask(src)));
    let zero_masks: Vec<Value> = inputs
        .iter()
        .map(|&v| {
            let bits = bitcast_le(b, int_ty, v);
            let magnitude = match keep {
                Some(m) => b.ins().band(bits, m),
                None => bits,
            };
            b.ins().icmp(IntCC::Equal, magnitude, zero)
        })
        .collect();
    let bytes = lanes::narrow_to(b, zero_masks, src.bits(), 8, Some(false));
    let ones = lanes::splat_bits(b, types::I8X16, 1);
    bytes
        .into_iter()
        .map(|z| b.ins().band_not(ones, z))
        .collect()
}
