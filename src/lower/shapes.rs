//! Values as a front end holds them: the Cranelift type of one value of each OpenCL type
//! ([`value_shape`]), and the moves between that shape and the 128-bit parts the recipes work
//! on. A leaf beside `values`: it depends on no conversion class.
//!
//! A value of `n` lanes (3 counts as 4) is one Cranelift value of that many lanes while it fits
//! in 128 bits (`float2` F32X2, `half4` I16X4 or F16X4, `char4` I8X4, `float4` F32X4), and
//! 128-bit parts beyond (`double4` two F64X2). A one-lane value is a scalar.
//!
//! Backends keep vectors narrower than 128 bits in vector registers but lower few instructions
//! on them (x64 has no `extractlane.i16x4`). The moves here use only what every backend lowers:
//! a `bitcast` between a narrow vector and the integer of its size, and `scalar_to_vector` /
//! `extractlane` of that integer in a 128-bit vector.

use super::values::{bitcast_le, element_type};
use crate::types::{ScalarType, VectorType};
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// How the builder API carries `half` values: the binary16 bits as I16 lanes, or Cranelift's
/// F16 lanes. Operands may come either way; results come as the lowering's setting says.
/// Cranelift lowers no F16 conversion on any backend, so clconv only `bitcast`s F16 lanes and
/// converts in integer IR.
///
/// ```
/// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
/// use clconv::cranelift_codegen::{settings, verifier::verify_function};
/// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
/// use clconv::lower::{HalfValues, Lowering};
///
/// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
/// // fn(F16, F32) -> (I32, F16): WGSL's i32(h) and f16(x), on the F16 values naga holds.
/// let mut sig = Signature::new(isa.default_call_conv());
/// sig.params.push(AbiParam::new(types::F16));
/// sig.params.push(AbiParam::new(types::F32));
/// sig.returns.push(AbiParam::new(types::I32));
/// sig.returns.push(AbiParam::new(types::F16));
/// let mut func = Function::with_name_signature(Default::default(), sig);
/// let mut ctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
/// let block = b.create_block();
/// b.append_block_params_for_function_params(block);
/// b.switch_to_block(block);
/// let (h, x) = (b.block_params(block)[0], b.block_params(block)[1]);
///
/// let lowering = Lowering::for_isa(&*isa)?.with_half_values(HalfValues::F16);
/// let i = lowering.lower_named(&mut b, "wgsl:i32(f16)", &[h])?;
/// assert_eq!(b.func.dfg.value_type(i[0]), types::I32);
/// let y = lowering.lower_named(&mut b, "wgsl:f16(f32)", &[x])?;
/// assert_eq!(b.func.dfg.value_type(y[0]), types::F16);
///
/// b.ins().return_(&[i[0], y[0]]);
/// b.seal_all_blocks();
/// b.finalize(isa.frontend_config());
/// verify_function(&func, isa.flags())?;
/// // And the backend lowers it: nothing F16 reaches it but moves.
/// let mut ctx = clconv::cranelift_codegen::Context::for_function(func);
/// ctx.compile(&*isa, &mut Default::default()).map_err(|e| format!("{e:?}"))?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum HalfValues {
    /// I16, I16X4, I16X8: what clconv gives by default.
    #[default]
    Bits,
    /// F16, F16X4, F16X8: what naga and other front ends hold.
    F16,
}

/// How a front end holds bools, which the typed entry ([`super::Lowering::convert`]) takes
/// and gives ([`super::Lowering::with_bool_values`]). Each reads any nonzero lane as true.
///
/// ```
/// use clconv::lower::BoolValues;
/// assert_eq!(BoolValues::default(), BoolValues::I8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum BoolValues {
    /// I8 lanes, 0 or 1 (I8, I8X4, I8X16): what a scalar `icmp` gives, and what naga-cranelift
    /// holds. The default.
    #[default]
    I8,
    /// I32 lanes, 0 or 1 (I32, I32X4): SPIR-V's `OpSelect %int %b 1 0` idiom, and GLSL's and
    /// HLSL's bools in memory.
    I32,
    /// Lanes as wide as the number on the other side, all ones for true: what a vector
    /// `icmp`/`fcmp` gives (an F32X4 compares to an I32X4, an F64X2 to an I64X2).
    Mask,
}

/// The Cranelift lane type of `t` with half carried as `half`.
pub fn lane_type(t: ScalarType, half: HalfValues) -> Type {
    match (t, half) {
        (ScalarType::Half, HalfValues::F16) => types::F16,
        _ => element_type(t),
    }
}

/// The Cranelift type of one value of `t` and how many of them carry it, as a front end holds
/// it (half as I16 bits; see [`HalfValues`] for F16).
///
/// ```
/// use clconv::lower::value_shape;
/// use clconv::{ScalarType, VectorType, Width};
/// use cranelift_codegen::ir::types;
/// let t = |e, w| VectorType::new(e, w);
/// assert_eq!(value_shape(t(ScalarType::Float, Width::W2)), (types::F32X2, 1));
/// assert_eq!(value_shape(t(ScalarType::Float, Width::W3)), (types::F32X4, 1));
/// assert_eq!(value_shape(t(ScalarType::Half, Width::W4)), (types::I16X4, 1));
/// assert_eq!(value_shape(t(ScalarType::UChar, Width::W4)), (types::I8X4, 1));
/// assert_eq!(value_shape(t(ScalarType::Double, Width::W4)), (types::F64X2, 2));
/// assert_eq!(value_shape(t(ScalarType::Int, Width::W1)), (types::I32, 1));
/// ```
pub fn value_shape(t: VectorType) -> (Type, usize) {
    shape(t, HalfValues::Bits)
}

pub(crate) fn shape(t: VectorType, half: HalfValues) -> (Type, usize) {
    let lane = lane_type(t.elem, half);
    let lanes = t.width.storage_lanes();
    if lanes == 1 {
        return (lane, 1);
    }
    let per_value = lanes.min(16 / t.elem.bytes());
    let ty = lane
        .by(per_value as u32)
        .expect("a vector of at most 128 bits");
    (ty, lanes / per_value)
}

/// `v` with F16 lanes seen as I16 lanes (other types unchanged): the recipes' half.
pub(crate) fn half_as_bits(b: &mut FunctionBuilder, v: Value) -> Value {
    let ty = b.func.dfg.value_type(v);
    if ty.lane_type() != types::F16 {
        return v;
    }
    let bits = types::I16.by(ty.lane_count()).expect("same lane count");
    bitcast_le(b, bits, v)
}

/// `v` with I16 lanes seen as F16 lanes when `half` asks for F16 and `elem` is half.
pub(crate) fn half_as(
    b: &mut FunctionBuilder,
    elem: ScalarType,
    half: HalfValues,
    v: Value,
) -> Value {
    let ty = b.func.dfg.value_type(v);
    if elem != ScalarType::Half || half == HalfValues::Bits || ty.lane_type() != types::I16 {
        return v;
    }
    let f16 = types::F16.by(ty.lane_count()).expect("same lane count");
    bitcast_le(b, f16, v)
}

/// A value narrower than 128 bits in the low bits of a 128-bit vector of the same lanes (the
/// lanes above it zero); 128-bit values unchanged.
pub(crate) fn widen_to_128(b: &mut FunctionBuilder, v: Value) -> Value {
    let ty = b.func.dfg.value_type(v);
    let bits = ty.bits();
    if bits >= 128 {
        return v;
    }
    let int = types::Type::int(bits as u16).expect("an integer of the value's size");
    let as_int = bitcast_le(b, int, v);
    let int_vector = int.by(128 / bits).expect("a 128-bit vector");
    let wide = b.ins().scalar_to_vector(int_vector, as_int);
    let lane = ty.lane_type();
    bitcast_le(
        b,
        lane.by(128 / lane.bits()).expect("a 128-bit vector"),
        wide,
    )
}

/// The low `ty.bits()` bits of the 128-bit vector `v`, as `ty`.
pub(crate) fn narrow_from_128(b: &mut FunctionBuilder, ty: Type, v: Value) -> Value {
    let bits = ty.bits();
    if bits >= 128 {
        return bitcast_le(b, ty, v);
    }
    let int = types::Type::int(bits as u16).expect("an integer of the value's size");
    let int_vector = int.by(128 / bits).expect("a 128-bit vector");
    let v = bitcast_le(b, int_vector, v);
    let low = b.ins().extractlane(v, 0);
    bitcast_le(b, ty, low)
}
