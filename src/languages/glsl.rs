//! GLSL: the constructors `ivec4(vec4)`, `uint(float)`, `float16_t(float)`, with the types of
//! GL_EXT_shader_explicit_arithmetic_types (`int8_t`, `u16vec4`, `f64vec2`, ...), and the bit
//! functions `floatBitsToInt`, `floatBitsToUint`, `intBitsToFloat`, `uintBitsToFloat` and
//! their 16- and 64-bit forms; the packing functions `packHalf2x16`, `unpackHalf2x16` (chains:
//! a conversion and a reinterpretation in one) and `packDouble2x32`, `packInt2x32`,
//! `packFloat2x16`, ... (reinterpretations).
//!
//! Rules (quoted with their sections in `docs/glsl.md`): float -> integer drops the fraction;
//! a value out of range (a negative one into uint included) is undefined in GLSL, and clconv
//! gives OpenCL's `_sat` result (clamp, NaN -> 0) on every target. Into a float, nearest-even.
//! Integer -> integer "preserves the bit pattern": the low bits.

use super::syntax;
use super::{construct, nearest_even, reinterpret, steps, ConstructorRules, Language};
use crate::request::{Request, RequestError};
use crate::rules::Rules;
use crate::types::{Rounding, ScalarType, VectorType, Width};

pub(super) const RULES: ConstructorRules = ConstructorRules {
    float_to_int: Rules::OPENCL,
    to_float: nearest_even,
};

/// Scalar names and the vector prefix of each (`ivec4`, `u8vec2`).
const TYPES: [(&str, &str, ScalarType); 16] = [
    ("int", "ivec", ScalarType::Int),
    ("uint", "uvec", ScalarType::UInt),
    ("float", "vec", ScalarType::Float),
    ("double", "dvec", ScalarType::Double),
    ("float16_t", "f16vec", ScalarType::Half),
    ("bool", "bvec", ScalarType::Bool),
    ("int8_t", "i8vec", ScalarType::Char),
    ("uint8_t", "u8vec", ScalarType::UChar),
    ("int16_t", "i16vec", ScalarType::Short),
    ("uint16_t", "u16vec", ScalarType::UShort),
    ("int64_t", "i64vec", ScalarType::Long),
    ("uint64_t", "u64vec", ScalarType::ULong),
    ("int32_t", "i32vec", ScalarType::Int),
    ("uint32_t", "u32vec", ScalarType::UInt),
    ("float32_t", "f32vec", ScalarType::Float),
    ("float64_t", "f64vec", ScalarType::Double),
];

/// The bit functions: name, the operand's element type, the result's.
const BITS: [(&str, ScalarType, ScalarType); 12] = [
    ("floatBitsToInt", ScalarType::Float, ScalarType::Int),
    ("floatBitsToUint", ScalarType::Float, ScalarType::UInt),
    ("intBitsToFloat", ScalarType::Int, ScalarType::Float),
    ("uintBitsToFloat", ScalarType::UInt, ScalarType::Float),
    ("doubleBitsToInt64", ScalarType::Double, ScalarType::Long),
    ("doubleBitsToUint64", ScalarType::Double, ScalarType::ULong),
    ("int64BitsToDouble", ScalarType::Long, ScalarType::Double),
    ("uint64BitsToDouble", ScalarType::ULong, ScalarType::Double),
    ("float16BitsToInt16", ScalarType::Half, ScalarType::Short),
    ("float16BitsToUint16", ScalarType::Half, ScalarType::UShort),
    ("int16BitsToFloat16", ScalarType::Short, ScalarType::Half),
    ("uint16BitsToFloat16", ScalarType::UShort, ScalarType::Half),
];

/// The packing functions (8.4, and GL_ARB_gpu_shader_int64's and
/// GL_EXT_shader_explicit_arithmetic_types' 64- and 16-bit forms): name, operand, result.
/// `packHalf2x16` and `unpackHalf2x16` convert; the others keep the bits.
const PACKING: [(&str, VectorType, VectorType); 16] = {
    use ScalarType::*;
    const fn v(elem: ScalarType, width: Width) -> VectorType {
        VectorType::new(elem, width)
    }
    let (w1, w2, w4) = (Width::W1, Width::W2, Width::W4);
    [
        ("packHalf2x16", v(Float, w2), v(UInt, w1)),
        ("unpackHalf2x16", v(UInt, w1), v(Float, w2)),
        ("packDouble2x32", v(UInt, w2), v(Double, w1)),
        ("unpackDouble2x32", v(Double, w1), v(UInt, w2)),
        ("packInt2x32", v(Int, w2), v(Long, w1)),
        ("unpackInt2x32", v(Long, w1), v(Int, w2)),
        ("packUint2x32", v(UInt, w2), v(ULong, w1)),
        ("unpackUint2x32", v(ULong, w1), v(UInt, w2)),
        ("packFloat2x16", v(Half, w2), v(UInt, w1)),
        ("unpackFloat2x16", v(UInt, w1), v(Half, w2)),
        ("packInt2x16", v(Short, w2), v(Int, w1)),
        ("unpackInt2x16", v(Int, w1), v(Short, w2)),
        ("packUint2x16", v(UShort, w2), v(UInt, w1)),
        ("unpackUint2x16", v(UInt, w1), v(UShort, w2)),
        ("packInt4x16", v(Short, w4), v(Long, w1)),
        ("packUint4x16", v(UShort, w4), v(ULong, w1)),
    ]
};

/// The request of a packing function: `packHalf2x16` rounds the two floats to half (to
/// nearest-even, clconv's choice: GLSL defers to the API, see docs/glsl.md) and gives their
/// bits, the first component in the low 16; `unpackHalf2x16` reads them back exactly; the
/// others are reinterpretations (the first component in the low bits).
fn packing(name: &str) -> Result<Request, RequestError> {
    let &(_, operand, result) = PACKING
        .iter()
        .find(|(n, ..)| *n == name)
        .expect("a packing function");
    let half2 = VectorType::new(ScalarType::Half, Width::W2);
    match name {
        "packHalf2x16" => steps::chain(&[
            steps::convert(operand, half2, false, Some(Rounding::Rte))?,
            steps::reinterpret(half2, result)?,
        ]),
        "unpackHalf2x16" => steps::chain(&[
            steps::reinterpret(operand, half2)?,
            steps::convert(half2, result, false, None)?,
        ]),
        _ => reinterpret(operand, result),
    }
}

pub(super) fn parse(text: &str) -> Result<Request, RequestError> {
    let call = syntax::call(Language::Glsl, text)?;
    let src = parse_type(call.arg, text)?;
    if let Some(&(name, from, to)) = BITS.iter().find(|(n, _, _)| *n == call.callee) {
        if src.elem != from {
            return Err(syntax::error(
                Language::Glsl,
                text,
                format!(
                    "{name} takes {} values, not {}",
                    spelled(VectorType::new(from, src.width)),
                    spelled(src)
                ),
            ));
        }
        return reinterpret(src, VectorType::new(to, src.width));
    }
    if let Some(&(name, operand, _)) = PACKING.iter().find(|(n, ..)| *n == call.callee) {
        if src != operand {
            return Err(syntax::error(
                Language::Glsl,
                text,
                format!(
                    "{name} takes a {}, not a {}",
                    spelled(operand),
                    spelled(src)
                ),
            ));
        }
        return packing(name);
    }
    if call.template.is_some() {
        return Err(syntax::error(
            Language::Glsl,
            text,
            "GLSL writes no `<...>` in a constructor: `ivec4(vec4)`".into(),
        ));
    }
    construct(Language::Glsl, src, parse_type(call.callee, text)?, RULES)
}

fn parse_type(name: &str, text: &str) -> Result<VectorType, RequestError> {
    for (scalar, _, elem) in TYPES {
        if name == scalar {
            return Ok(VectorType::scalar(elem));
        }
    }
    // Longest prefixes first: `f16vec` before `vec`.
    let mut by_length = TYPES;
    by_length.sort_by_key(|(_, v, _)| std::cmp::Reverse(v.len()));
    for (_, prefix, elem) in by_length {
        if let Some(n) = name.strip_prefix(prefix) {
            let width = match n {
                "2" => Width::W2,
                "3" => Width::W3,
                "4" => Width::W4,
                _ => continue,
            };
            return Ok(VectorType::new(elem, width));
        }
    }
    let hint = if name.starts_with("mat") || name.starts_with("dmat") {
        "; matrices convert column by column, as vectors"
    } else {
        ""
    };
    Err(syntax::error(
        Language::Glsl,
        text,
        format!(
            "unknown type `{name}`: GLSL converts int, uint, float, double, bool and the \
             explicit arithmetic types (int8_t ... uint64_t, float16_t ... float64_t), and \
             their vectors (ivec4, uvec2, vec3, dvec4, bvec2, f16vec4, i8vec2, ...){hint}"
        ),
    ))
}

fn spelled(t: VectorType) -> String {
    let (scalar, prefix, _) = TYPES
        .iter()
        .find(|(_, _, e)| *e == t.elem)
        .expect("a GLSL type");
    match t.width.lanes() {
        1 => scalar.to_string(),
        n => format!("{prefix}{n}"),
    }
}

pub(super) fn spellings() -> Vec<String> {
    let mut out = Vec::new();
    for width in [Width::W1, Width::W2, Width::W3, Width::W4] {
        for (_, _, dst) in &TYPES[..12] {
            for (_, _, src) in &TYPES[..12] {
                let (d, s) = (VectorType::new(*dst, width), VectorType::new(*src, width));
                out.push(format!("{}({})", spelled(d), spelled(s)));
            }
        }
        for (name, from, _) in BITS {
            out.push(format!("{name}({})", spelled(VectorType::new(from, width))));
        }
    }
    for (name, operand, _) in PACKING {
        out.push(format!("{name}({})", spelled(operand)));
    }
    out
}
