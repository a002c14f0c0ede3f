//! The recipes that `lowering-tables/` rows name: how a batch kernel's body converts a block of
//! elements. A row says *which* recipe a conversion uses on a target; this file says what each
//! recipe can lower and where its code is.
//!
//! A vector recipe converts one block: `16 / min(source bytes, destination bytes)` elements,
//! loaded as 128-bit vectors of the source's lanes and stored as vectors of the destination's
//! (float -> uchar: four F32X4 in, one I8X16 out). The kernel runs a few blocks per loop
//! iteration, and its caller the last, partial iteration through the same code once more on
//! zero-padded copies (`kernel::elements_per_iteration`, `kernel::run_in_granules`). `scalar` is
//! the per-element sequence, which every target can run: the optimised kernel unrolls it a few
//! elements per iteration, the same way (`kernel::scalar_elements_per_iteration`).

pub use super::block::{BlockSpec, Class};
use super::lanes::VectorRounding::{Magic, Native};
use super::small_float::Unpack::{Interleave, Widen};
use super::{boolean, float_to_float, float_to_int, half_vector, int_to_float, int_to_int, lanes};
use crate::routine::{Routine, SmallInt};
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::Value;
use cranelift_frontend::FunctionBuilder;

/// Emits one block: vectors of the source lanes in, vectors of the destination lanes out.
pub type EmitBlock = fn(&mut FunctionBuilder, &BlockSpec, &[Value]) -> Vec<Value>;

/// How a recipe lowers a block.
#[derive(Clone, Copy)]
pub enum Body {
    /// The per-element loop only (the always-correct fallback).
    Scalar,
    /// A 128-bit vector block (the kernel loops over blocks, the tail included).
    Vector(EmitBlock),
    /// A byte copy (identity and reinterpretation), in 16-byte vectors.
    CopyVector,
    /// A byte copy in scalar loads and stores of at most 8 bytes (targets without vectors).
    CopyScalar,
    /// A call of a host routine over the whole buffer ([`crate::routine`]): batch kernels the
    /// JIT compiles in-process only (rows guarded by `f16c`). The function names the routine of
    /// a block's conversion.
    Routine(fn(&BlockSpec) -> Routine),
}

/// A recipe: a name for the tables, what it can lower, and its code.
#[derive(Clone, Copy)]
pub struct Recipe {
    /// The name the tables use.
    pub name: &'static str,
    /// The class it belongs to (`None`: any class).
    pub class: Option<Class>,
    /// Whether it can lower this element conversion (ignored for copies).
    pub supports: fn(&BlockSpec) -> bool,
    /// The code.
    pub body: Body,
    /// Whether its float instructions round by the target's rounding control rather than to
    /// nearest-even: the kernel must run with the control set to the conversion's rounding
    /// (x86-64's MXCSR.RC; [`crate::kernel::Built::rounding_control`]). Only rows guarded by
    /// `mxcsr` may name such a recipe: batch kernels, whose caller (the JIT) sets the control,
    /// never code lowered into a caller's own function.
    pub rounds_by_control: bool,
}

fn any(_: &BlockSpec) -> bool {
    true
}

fn float_to_small_int(s: &BlockSpec) -> bool {
    matches!(s.src, ScalarType::Float | ScalarType::Double) && s.dst.bits() <= 32
}

fn float_to_small_unsigned(s: &BlockSpec) -> bool {
    s.src == ScalarType::Float && matches!(s.dst, ScalarType::UChar | ScalarType::UShort)
}

fn exact_int_to_float(s: &BlockSpec) -> bool {
    let magnitude = s.src.bits() - s.src.is_signed_integer() as u32;
    match s.dst {
        ScalarType::Float => magnitude <= 24,
        ScalarType::Double => magnitude <= 53,
        _ => false,
    }
}

fn int32_to_float_rte(s: &BlockSpec) -> bool {
    s.src.bits() == 32 && s.dst == ScalarType::Float && s.rounding == Rounding::Rte
}

fn int_to_float_directed(s: &BlockSpec) -> bool {
    s.src == ScalarType::Int && s.dst == ScalarType::Float && s.rounding != Rounding::Rte
}

fn split_sum_supported(s: &BlockSpec) -> bool {
    (s.src.bits() == 32 && s.dst == ScalarType::Float)
        || (s.src.bits() == 64 && matches!(s.dst, ScalarType::Float | ScalarType::Double))
}

/// int/uint -> float and long/ulong -> float/double in a directed mode: the conversions a
/// rounding control set to the mode makes one rounding (or two in the same direction).
fn int_to_float_by_control(s: &BlockSpec) -> bool {
    let wide_enough = match s.src.bits() {
        32 => s.dst == ScalarType::Float,
        64 => matches!(s.dst, ScalarType::Float | ScalarType::Double),
        _ => false,
    };
    s.src.is_integer() && wide_enough && s.rounding != Rounding::Rte
}

fn ulong_to_float_down(s: &BlockSpec) -> bool {
    s.src == ScalarType::ULong
        && s.dst == ScalarType::Float
        && matches!(s.rounding, Rounding::Rtz | Rounding::Rtn)
}

fn demote_directed(s: &BlockSpec) -> bool {
    demote_supported(s) && s.rounding != Rounding::Rte
}

fn promote_supported(s: &BlockSpec) -> bool {
    s.src == ScalarType::Float && s.dst == ScalarType::Double
}

fn demote_supported(s: &BlockSpec) -> bool {
    s.src == ScalarType::Double && s.dst == ScalarType::Float
}

/// long/ulong -> double in rte (aarch64's `scvtf`/`ucvtf .2d`).
fn int64_to_double_rte(s: &BlockSpec) -> bool {
    s.src.is_integer()
        && s.src.bits() == 64
        && s.dst == ScalarType::Double
        && s.rounding == Rounding::Rte
}

/// int/uint -> float and long/ulong -> double, directed: the conversion back is exact there.
fn same_width_int_to_float_directed(s: &BlockSpec) -> bool {
    let same_width = match s.src.bits() {
        32 => s.dst == ScalarType::Float,
        64 => s.dst == ScalarType::Double,
        _ => false,
    };
    s.src.is_integer() && same_width && s.rounding != Rounding::Rte
}

/// long/ulong -> float, directed.
fn int64_to_float_directed(s: &BlockSpec) -> bool {
    s.src.is_integer()
        && s.src.bits() == 64
        && s.dst == ScalarType::Float
        && s.rounding != Rounding::Rte
}

/// float/double -> long/ulong.
fn float_to_int64(s: &BlockSpec) -> bool {
    matches!(s.src, ScalarType::Float | ScalarType::Double)
        && s.dst.is_integer()
        && s.dst.bits() == 64
}

fn round_native_64(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    float_to_int::vector_64(b, s, v)
}

fn round_native(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    float_to_int::vector(b, s, lanes::VectorRounding::Native, v)
}

fn round_magic(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    float_to_int::vector(b, s, lanes::VectorRounding::Magic, v)
}

fn half_supported(s: &BlockSpec) -> bool {
    // The narrow formats: from the one-byte ones (decoded in vectors), into all of them
    // (rounded in vectors: tf32 a word per float); out of tf32 per element.
    let half_side = s.src.is_small_float() || s.dst.is_small_float() || s.dst == ScalarType::Tf32;
    let to_wide_int = s.dst.is_integer() && s.dst.bits() == 64;
    half_side && s.src != s.dst && !to_wide_int && s.src != ScalarType::Tf32
}

fn half_native(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    half_vector::vector(b, s, Native, false, Interleave, v)
}

fn half_native_widen(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    half_vector::vector(b, s, Native, false, Widen, v)
}

fn half_magic(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    half_vector::vector(b, s, Magic, false, Interleave, v)
}

/// FP4, FP6 and the FNUZ formats into the floats (half, float, double, bfloat): the decode by
/// table.
fn table_source(s: &BlockSpec) -> bool {
    use crate::types::ScalarType::{Fp4E2M1, Fp6E2M3, Fp6E3M2, Fp8E4M3Fnuz, Fp8E5M2Fnuz};
    half_supported(s)
        && matches!(
            s.src,
            Fp4E2M1 | Fp6E2M3 | Fp6E3M2 | Fp8E4M3Fnuz | Fp8E5M2Fnuz
        )
        && s.dst.is_float()
}

fn table_native(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    half_vector::vector_table(b, s, Native, Interleave, v)
}

/// The float -> float conversions of the formats narrower than float: the ones whose vector
/// recipe can carry a NaN through a floating-point instruction (double's demotion or promotion,
/// half -> float's scaling multiplication), which `_keep_nan` replaces on RISC-V.
fn half_double(s: &BlockSpec) -> bool {
    half_supported(s) && s.src.is_float() && s.dst.is_float()
}

fn half_native_keep_nan(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    half_vector::vector(b, s, Native, true, Interleave, v)
}

fn half_native_keep_nan_widen(b: &mut FunctionBuilder, s: &BlockSpec, v: &[Value]) -> Vec<Value> {
    half_vector::vector(b, s, Native, true, Widen, v)
}

fn promote(b: &mut FunctionBuilder, _: &BlockSpec, v: &[Value]) -> Vec<Value> {
    float_to_float::vector_promote(b, v)
}

fn promote_keep_nan(b: &mut FunctionBuilder, _: &BlockSpec, v: &[Value]) -> Vec<Value> {
    float_to_float::vector_promote_keep_nan(b, v)
}

fn float_to_half(s: &BlockSpec) -> bool {
    s.src == ScalarType::Float && s.dst == ScalarType::Half
}

fn half_to_float(s: &BlockSpec) -> bool {
    s.src == ScalarType::Half && s.dst == ScalarType::Float
}

fn f16c_float_to_half(s: &BlockSpec) -> Routine {
    Routine::F16cFloatToHalf(s.rounding)
}

fn f16c_half_to_float(_: &BlockSpec) -> Routine {
    Routine::F16cHalfToFloat
}

fn half_to_small_int(s: &BlockSpec) -> bool {
    s.src == ScalarType::Half && crate::routine::HALF_TO_INT.contains(&s.dst)
}

fn f16c_half_to_int(s: &BlockSpec) -> Routine {
    Routine::F16cHalfToInt(s.dst, s.rounding)
}

fn small_int_to_half(s: &BlockSpec) -> bool {
    SmallInt::of(s.src).is_some() && s.dst == ScalarType::Half
}

fn f16c_small_int_to_half(s: &BlockSpec) -> Routine {
    // `supports` admits only the small integers.
    Routine::F16cSmallIntToHalf(SmallInt::of(s.src).unwrap_or(SmallInt::Char), s.rounding)
}

/// Every recipe.
pub const RECIPES: &[Recipe] = &[
    Recipe {
        name: "scalar",
        class: None,
        supports: any,
        body: Body::Scalar,
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_int.vector",
        class: Some(Class::IntToInt),
        supports: any,
        body: Body::Vector(int_to_int::vector),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_int.round_native",
        class: Some(Class::FloatToInt),
        supports: float_to_small_int,
        body: Body::Vector(round_native),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_int.round_magic",
        class: Some(Class::FloatToInt),
        supports: float_to_small_int,
        body: Body::Vector(round_magic),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_int.clamp_magic",
        class: Some(Class::FloatToInt),
        supports: float_to_small_unsigned,
        body: Body::Vector(float_to_int::vector_clamp_magic),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_float.exact",
        class: Some(Class::IntToFloat),
        supports: exact_int_to_float,
        body: Body::Vector(int_to_float::vector_exact),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_float.native_rte",
        class: Some(Class::IntToFloat),
        supports: int32_to_float_rte,
        body: Body::Vector(int_to_float::vector_native_rte),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_float.convert_back",
        class: Some(Class::IntToFloat),
        supports: int_to_float_directed,
        body: Body::Vector(int_to_float::vector_convert_back),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_float.by_control",
        class: Some(Class::IntToFloat),
        supports: int_to_float_by_control,
        body: Body::Vector(int_to_float::vector_by_control),
        rounds_by_control: true,
    },
    Recipe {
        name: "int_to_float.native_by_control",
        class: Some(Class::IntToFloat),
        supports: int_to_float_by_control,
        body: Body::Vector(int_to_float::vector_native_by_control),
        rounds_by_control: true,
    },
    Recipe {
        name: "int_to_float.ulong_halves_by_control",
        class: Some(Class::IntToFloat),
        supports: ulong_to_float_down,
        body: Body::Vector(int_to_float::vector_ulong_halves_by_control),
        rounds_by_control: true,
    },
    Recipe {
        name: "int_to_float.split_sum",
        class: Some(Class::IntToFloat),
        supports: split_sum_supported,
        body: Body::Vector(int_to_float::vector_split_sum),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_float.promote",
        class: Some(Class::FloatToFloat),
        supports: promote_supported,
        body: Body::Vector(promote),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_float.demote",
        class: Some(Class::FloatToFloat),
        supports: demote_supported,
        body: Body::Vector(float_to_float::vector_demote),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_float.promote_keep_nan",
        class: Some(Class::FloatToFloat),
        supports: promote_supported,
        body: Body::Vector(promote_keep_nan),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_float.demote_keep_nan",
        class: Some(Class::FloatToFloat),
        supports: demote_supported,
        body: Body::Vector(float_to_float::vector_demote_keep_nan),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_float.demote_by_control",
        class: Some(Class::FloatToFloat),
        supports: demote_directed,
        body: Body::Vector(float_to_float::vector_demote_by_control),
        rounds_by_control: true,
    },
    Recipe {
        name: "half.round_native",
        class: None,
        supports: half_supported,
        body: Body::Vector(half_native),
        rounds_by_control: false,
    },
    Recipe {
        name: "half.round_native_widen",
        class: None,
        supports: half_supported,
        body: Body::Vector(half_native_widen),
        rounds_by_control: false,
    },
    Recipe {
        name: "half.round_native_keep_nan",
        class: Some(Class::FloatToFloat),
        supports: half_double,
        body: Body::Vector(half_native_keep_nan),
        rounds_by_control: false,
    },
    Recipe {
        name: "half.round_native_keep_nan_widen",
        class: Some(Class::FloatToFloat),
        supports: half_double,
        body: Body::Vector(half_native_keep_nan_widen),
        rounds_by_control: false,
    },
    Recipe {
        name: "narrow.table_native",
        class: Some(Class::FloatToFloat),
        supports: table_source,
        body: Body::Vector(table_native),
        rounds_by_control: false,
    },
    Recipe {
        name: "half.round_magic",
        class: None,
        supports: half_supported,
        body: Body::Vector(half_magic),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_float.demote_compare",
        class: Some(Class::FloatToFloat),
        supports: demote_directed,
        body: Body::Vector(float_to_float::vector_demote_compare),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_int.narrow_native",
        class: Some(Class::IntToInt),
        supports: any,
        body: Body::Vector(int_to_int::vector_narrow_native),
        rounds_by_control: false,
    },
    Recipe {
        name: "float_to_int.round_native_64",
        class: Some(Class::FloatToInt),
        supports: float_to_int64,
        body: Body::Vector(round_native_64),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_float.native_64",
        class: Some(Class::IntToFloat),
        supports: int64_to_double_rte,
        body: Body::Vector(int_to_float::vector_native_64),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_float.convert_back_sat",
        class: Some(Class::IntToFloat),
        supports: same_width_int_to_float_directed,
        body: Body::Vector(int_to_float::vector_convert_back_sat),
        rounds_by_control: false,
    },
    Recipe {
        name: "int_to_float.demote_convert_back",
        class: Some(Class::IntToFloat),
        supports: int64_to_float_directed,
        body: Body::Vector(int_to_float::vector_demote_convert_back),
        rounds_by_control: false,
    },
    Recipe {
        name: "f16c.float_to_half",
        class: Some(Class::FloatToFloat),
        supports: float_to_half,
        body: Body::Routine(f16c_float_to_half),
        rounds_by_control: false,
    },
    Recipe {
        name: "f16c.half_to_float",
        class: Some(Class::FloatToFloat),
        supports: half_to_float,
        body: Body::Routine(f16c_half_to_float),
        rounds_by_control: false,
    },
    Recipe {
        name: "f16c.small_int_to_half",
        class: Some(Class::IntToFloat),
        supports: small_int_to_half,
        body: Body::Routine(f16c_small_int_to_half),
        rounds_by_control: false,
    },
    Recipe {
        name: "f16c.half_to_int",
        class: Some(Class::FloatToInt),
        supports: half_to_small_int,
        body: Body::Routine(f16c_half_to_int),
        rounds_by_control: false,
    },
    Recipe {
        name: "bool.vector",
        class: Some(Class::Bool),
        supports: any,
        body: Body::Vector(boolean::vector),
        rounds_by_control: false,
    },
    Recipe {
        name: "copy.vector",
        class: None,
        supports: any,
        body: Body::CopyVector,
        rounds_by_control: false,
    },
    Recipe {
        name: "copy.scalar",
        class: None,
        supports: any,
        body: Body::CopyScalar,
        rounds_by_control: false,
    },
];

/// The recipe named `name`.
pub fn recipe(name: &str) -> Option<&'static Recipe> {
    RECIPES.iter().find(|r| r.name == name)
}
