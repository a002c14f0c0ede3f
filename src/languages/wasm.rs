//! WebAssembly: the scalar numeric conversion instructions by their text-format names
//! (`wasm:i32.trunc_sat_f32_u`, `wasm:f64.convert_i64_s`, `wasm:i32.wrap_i64`,
//! `wasm:f32.reinterpret_i32`), and the SIMD ones whose lanes stay in place
//! (`wasm:i32x4.trunc_sat_f32x4_s`, `wasm:i8x16.narrow_i16x8_u`).
//!
//! Rules (quoted with their sections in `docs/wasm.md`): `trunc_sat` saturates toward zero and
//! gives 0 for NaN (OpenCL's `_sat`); `convert` and `demote` round to nearest, ties to even;
//! `promote` is exact; `wrap` keeps the low bits and `extend` sign- or zero-extends (OpenCL's
//! conversion without `_sat`); `reinterpret` keeps the bits. Integers are signless in
//! WebAssembly: the `_s`/`_u` suffix says how an operand or result is read, and the request
//! names the matching OpenCL type. The trapping `trunc` (NaN or out of range traps) carries
//! [`Rules::TRAPPING`]: `convert_int_trap(float)`, whose batch kernels stop at the first
//! trapping element with a typed error and whose builder form gives a trap flag.

use super::syntax;
use super::{construct, nearest_even, reinterpret, ConstructorRules, Language};
use crate::request::{Conversion, Request, RequestError};
use crate::rules::Rules;
use crate::types::{Extensions, ScalarType, VectorType, Width};

const RULES: ConstructorRules = ConstructorRules {
    float_to_int: Rules::OPENCL,
    to_float: nearest_even,
};

/// The trapping `trunc`: the same but for its rules.
const TRAPPING: ConstructorRules = ConstructorRules {
    float_to_int: Rules::TRAPPING,
    to_float: nearest_even,
};

/// The trapping truncations: name, source, destination.
const TRUNC: [(&str, ScalarType, ScalarType); 8] = {
    use ScalarType::*;
    [
        ("i32.trunc_f32_s", Float, Int),
        ("i32.trunc_f32_u", Float, UInt),
        ("i32.trunc_f64_s", Double, Int),
        ("i32.trunc_f64_u", Double, UInt),
        ("i64.trunc_f32_s", Float, Long),
        ("i64.trunc_f32_u", Float, ULong),
        ("i64.trunc_f64_s", Double, Long),
        ("i64.trunc_f64_u", Double, ULong),
    ]
};

/// (name, source, destination, reinterpretation?)
const INSTRUCTIONS: [(&str, ScalarType, ScalarType, bool); 23] = {
    use ScalarType::*;
    [
        ("i32.wrap_i64", Long, Int, false),
        ("i64.extend_i32_s", Int, Long, false),
        ("i64.extend_i32_u", UInt, ULong, false),
        ("i32.trunc_sat_f32_s", Float, Int, false),
        ("i32.trunc_sat_f32_u", Float, UInt, false),
        ("i32.trunc_sat_f64_s", Double, Int, false),
        ("i32.trunc_sat_f64_u", Double, UInt, false),
        ("i64.trunc_sat_f32_s", Float, Long, false),
        ("i64.trunc_sat_f32_u", Float, ULong, false),
        ("i64.trunc_sat_f64_s", Double, Long, false),
        ("i64.trunc_sat_f64_u", Double, ULong, false),
        ("f32.convert_i32_s", Int, Float, false),
        ("f32.convert_i32_u", UInt, Float, false),
        ("f32.convert_i64_s", Long, Float, false),
        ("f32.convert_i64_u", ULong, Float, false),
        ("f64.convert_i32_s", Int, Double, false),
        ("f64.convert_i32_u", UInt, Double, false),
        ("f64.convert_i64_s", Long, Double, false),
        ("f64.convert_i64_u", ULong, Double, false),
        ("f32.demote_f64", Double, Float, false),
        ("f64.promote_f32", Float, Double, false),
        ("i32.reinterpret_f32", Float, Int, true),
        ("f32.reinterpret_i32", Int, Float, true),
    ]
};

/// The SIMD conversions whose lanes sit as OpenCL's vectors do (name, source, destination,
/// saturating): every lane of the operand converts into the same lane of the result. `narrow`
/// takes two operands whose lanes fill the result in order (`a` the low half, SIMD.md), which is
/// a vector of twice the lanes in clconv's terms: `short16` is two I16X8 values in the builder
/// API (`value_shape`), and consecutive elements in a buffer. `relaxed_trunc` may give any of
/// several results where `trunc_sat` defines one (NaN, out of range); clconv gives `trunc_sat`'s.
const SIMD: [(&str, ScalarType, ScalarType, Width, bool); 10] = {
    use ScalarType::*;
    [
        ("i32x4.trunc_sat_f32x4_s", Float, Int, Width::W4, true),
        ("i32x4.trunc_sat_f32x4_u", Float, UInt, Width::W4, true),
        ("i32x4.relaxed_trunc_f32x4_s", Float, Int, Width::W4, true),
        ("i32x4.relaxed_trunc_f32x4_u", Float, UInt, Width::W4, true),
        ("f32x4.convert_i32x4_s", Int, Float, Width::W4, false),
        ("f32x4.convert_i32x4_u", UInt, Float, Width::W4, false),
        ("i8x16.narrow_i16x8_s", Short, Char, Width::W16, true),
        ("i8x16.narrow_i16x8_u", Short, UChar, Width::W16, true),
        ("i16x8.narrow_i32x4_s", Int, Short, Width::W8, true),
        ("i16x8.narrow_i32x4_u", Int, UShort, Width::W8, true),
    ]
};

/// The other two reinterpretations (kept apart so the table above stays one shape).
const REINTERPRET_64: [(&str, ScalarType, ScalarType); 2] = [
    ("i64.reinterpret_f64", ScalarType::Double, ScalarType::Long),
    ("f64.reinterpret_i64", ScalarType::Long, ScalarType::Double),
];

pub(super) fn parse(text: &str) -> Result<Request, RequestError> {
    if let Some(&(_, src, dst, bits)) = INSTRUCTIONS.iter().find(|(n, ..)| *n == text) {
        let (s, d) = (VectorType::scalar(src), VectorType::scalar(dst));
        return if bits {
            reinterpret(s, d)
        } else {
            construct(Language::Wasm, s, d, RULES)
        };
    }
    if let Some(&(_, src, dst)) = REINTERPRET_64.iter().find(|(n, ..)| *n == text) {
        return reinterpret(VectorType::scalar(src), VectorType::scalar(dst));
    }
    if let Some(&(_, src, dst, width, saturate)) = SIMD.iter().find(|(n, ..)| *n == text) {
        let (s, d) = (VectorType::new(src, width), VectorType::new(dst, width));
        if dst.is_float() {
            return construct(Language::Wasm, s, d, RULES);
        }
        let c = Conversion::new(s, d, saturate, None, Extensions::default())?;
        return Ok(Request::Convert(c));
    }
    if let Some(&(_, src, dst)) = TRUNC.iter().find(|(n, ..)| *n == text) {
        let (s, d) = (VectorType::scalar(src), VectorType::scalar(dst));
        return construct(Language::Wasm, s, d, TRAPPING);
    }
    let why = if text.contains(".extend8_s")
        || text.contains(".extend16_s")
        || text.contains(".extend32_s")
    {
        format!(
            "`{text}` sign-extends the low bits of a value to its own width, not a conversion \
             between two types: convert the narrow type (`convert_int(char)`)"
        )
    } else if text.contains('x') && text.contains('.') {
        format!(
            "`{text}` is a SIMD instruction whose lanes move (`_low`, `_high`, `_zero`), which \
             clconv does not lower yet; the scalar forms, `trunc_sat_f32x4`, `relaxed_trunc_f32x4`, \
             `convert_i32x4` and `narrow` are accepted"
        )
    } else {
        format!(
            "`{text}` is not a numeric conversion instruction: write one by its text-format \
             name, e.g. `wasm:i32.trunc_sat_f32_s`, `wasm:f64.convert_i64_u`"
        )
    };
    Err(syntax::error(Language::Wasm, text, why))
}

pub(super) fn spellings() -> Vec<String> {
    INSTRUCTIONS
        .iter()
        .map(|(n, ..)| n.to_string())
        .chain(REINTERPRET_64.iter().map(|(n, ..)| n.to_string()))
        .chain(TRUNC.iter().map(|(n, ..)| n.to_string()))
        .chain(SIMD.iter().map(|(n, ..)| n.to_string()))
        .collect()
}
