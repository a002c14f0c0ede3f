//! WebAssembly: the scalar numeric conversion instructions by their text-format names
//! (`wasm:i32.trunc_sat_f32_u`, `wasm:f64.convert_i64_s`, `wasm:i32.wrap_i64`,
//! `wasm:f32.reinterpret_i32`), and the SIMD ones whose lanes stay in place
//! (`wasm:i32x4.trunc_sat_f32x4_s`, `wasm:i8x16.narrow_i16x8_u`) and those whose lanes move
//! (`wasm:f64x2.convert_low_i32x4_u`, `wasm:f32x4.demote_f64x2_zero`,
//! `wasm:i16x8.extend_high_i8x16_s`: chains, [`crate::chain`]).
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
use super::{construct, nearest_even, reinterpret, steps, ConstructorRules, Language};
use crate::request::{Conversion, Request, RequestError};
use crate::rules::Rules;
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};

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
const SIMD: [(&str, ScalarType, ScalarType, Width, bool); 14] = {
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
        // The FP16 proposal's.
        ("i16x8.trunc_sat_f16x8_s", Half, Short, Width::W8, true),
        ("i16x8.trunc_sat_f16x8_u", Half, UShort, Width::W8, true),
        ("f16x8.convert_i16x8_s", Short, Half, Width::W8, false),
        ("f16x8.convert_i16x8_u", UShort, Half, Width::W8, false),
    ]
};

/// The SIMD conversions whose lanes move (name, operand, first lane, result): each takes the
/// lanes of the operand from `first` (`_low`: 0, `_high`: half the lanes), as many as the
/// result has (or, for a `_zero` result, all of them, with zeros in the rest), and converts
/// them lane for lane as the scalar instruction does (`extend` sign- or zero-extends,
/// `convert` and `demote` round to nearest-even, `promote` is exact, `trunc_sat` saturates and
/// gives 0 for NaN). `relaxed_trunc` gives `trunc_sat`'s results. The FP16 proposal's
/// (`f16x8.*`) are here too.
const MOVED: [(&str, VectorType, usize, VectorType); 24] = {
    use ScalarType::*;
    const fn v(elem: ScalarType, width: Width) -> VectorType {
        VectorType::new(elem, width)
    }
    let (w2, w4, w8, w16) = (Width::W2, Width::W4, Width::W8, Width::W16);
    [
        ("f64x2.convert_low_i32x4_s", v(Int, w4), 0, v(Double, w2)),
        ("f64x2.convert_low_i32x4_u", v(UInt, w4), 0, v(Double, w2)),
        ("f64x2.promote_low_f32x4", v(Float, w4), 0, v(Double, w2)),
        ("f32x4.demote_f64x2_zero", v(Double, w2), 0, v(Float, w4)),
        ("i32x4.trunc_sat_f64x2_s_zero", v(Double, w2), 0, v(Int, w4)),
        (
            "i32x4.trunc_sat_f64x2_u_zero",
            v(Double, w2),
            0,
            v(UInt, w4),
        ),
        (
            "i32x4.relaxed_trunc_f64x2_s_zero",
            v(Double, w2),
            0,
            v(Int, w4),
        ),
        (
            "i32x4.relaxed_trunc_f64x2_u_zero",
            v(Double, w2),
            0,
            v(UInt, w4),
        ),
        ("i16x8.extend_low_i8x16_s", v(Char, w16), 0, v(Short, w8)),
        ("i16x8.extend_high_i8x16_s", v(Char, w16), 8, v(Short, w8)),
        ("i16x8.extend_low_i8x16_u", v(UChar, w16), 0, v(UShort, w8)),
        ("i16x8.extend_high_i8x16_u", v(UChar, w16), 8, v(UShort, w8)),
        ("i32x4.extend_low_i16x8_s", v(Short, w8), 0, v(Int, w4)),
        ("i32x4.extend_high_i16x8_s", v(Short, w8), 4, v(Int, w4)),
        ("i32x4.extend_low_i16x8_u", v(UShort, w8), 0, v(UInt, w4)),
        ("i32x4.extend_high_i16x8_u", v(UShort, w8), 4, v(UInt, w4)),
        ("i64x2.extend_low_i32x4_s", v(Int, w4), 0, v(Long, w2)),
        ("i64x2.extend_high_i32x4_s", v(Int, w4), 2, v(Long, w2)),
        ("i64x2.extend_low_i32x4_u", v(UInt, w4), 0, v(ULong, w2)),
        ("i64x2.extend_high_i32x4_u", v(UInt, w4), 2, v(ULong, w2)),
        ("f16x8.demote_f32x4_zero", v(Float, w4), 0, v(Half, w8)),
        ("f16x8.demote_f64x2_zero", v(Double, w2), 0, v(Half, w8)),
        ("f32x4.promote_low_f16x8", v(Half, w8), 0, v(Float, w4)),
        // The proposal's own spelling (its issue 9 renames it as the implementations do).
        ("f32x4.promote_f16x8_low", v(Half, w8), 0, v(Float, w4)),
    ]
};

/// The request of a [`MOVED`] instruction: the lanes taken, then converted; or converted,
/// then placed with zeros after them (`_zero`).
fn moved(src: VectorType, first: usize, dst: VectorType) -> Result<Request, RequestError> {
    let saturate = src.elem.is_float() && dst.elem.is_integer();
    let rounding = dst.elem.is_float().then_some(Rounding::Rte);
    if dst.lanes() < src.lanes() {
        let taken = VectorType::new(src.elem, dst.width);
        steps::chain(&[
            steps::lanes(src, first, taken)?,
            steps::convert(taken, dst, saturate, rounding)?,
        ])
    } else {
        let converted = VectorType::new(dst.elem, src.width);
        steps::chain(&[
            steps::convert(src, converted, saturate, rounding)?,
            steps::lanes(converted, 0, dst)?,
        ])
    }
}

/// The sign-extension operators (name, operand and result type, the narrow type whose low bits
/// are sign-extended): "extend a signed integer" of the low 8, 16 or 32 bits to the operand's
/// own width (WebAssembly 2.0, 4.3.2 "iextendM_s"). A chain of two conversions: the low bits
/// kept (`convert_char(int)`, which wraps), then sign-extended (`convert_int(char)`).
const SIGN_EXTEND: [(&str, ScalarType, ScalarType); 5] = {
    use ScalarType::*;
    [
        ("i32.extend8_s", Int, Char),
        ("i32.extend16_s", Int, Short),
        ("i64.extend8_s", Long, Char),
        ("i64.extend16_s", Long, Short),
        ("i64.extend32_s", Long, Int),
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
        let c = Conversion::new(s, d, saturate, None, Extensions::with_fp16())?;
        return Ok(Request::Convert(c));
    }
    if let Some(&(_, src, first, dst)) = MOVED.iter().find(|(n, ..)| *n == text) {
        return moved(src, first, dst);
    }
    if let Some(&(_, src, dst)) = TRUNC.iter().find(|(n, ..)| *n == text) {
        let (s, d) = (VectorType::scalar(src), VectorType::scalar(dst));
        return construct(Language::Wasm, s, d, TRAPPING);
    }
    if let Some(&(_, wide, narrow)) = SIGN_EXTEND.iter().find(|(n, ..)| *n == text) {
        let (w, n) = (VectorType::scalar(wide), VectorType::scalar(narrow));
        return steps::chain(&[
            steps::convert(w, n, false, None)?,
            steps::convert(n, w, false, None)?,
        ]);
    }
    let why = if matches!(text, "i16x8.trunc_f16x8_s" | "i16x8.trunc_f16x8_u") {
        format!(
            "`{text}`: the FP16 proposal lists it but defines no result for NaN or out-of-range \
             lanes; `i16x8.trunc_sat_f16x8_s`/`_u` saturate"
        )
    } else if text.contains("extadd_pairwise") || text.contains("extmul") {
        format!(
            "`{text}` adds or multiplies as it widens: arithmetic, not a conversion; convert with \
             `extend_low`/`extend_high` and add"
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
        .chain(SIGN_EXTEND.iter().map(|(n, ..)| n.to_string()))
        .chain(TRUNC.iter().map(|(n, ..)| n.to_string()))
        .chain(SIMD.iter().map(|(n, ..)| n.to_string()))
        .chain(MOVED.iter().map(|(n, ..)| n.to_string()))
        .collect()
}
