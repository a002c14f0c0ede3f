//! WGSL: the value constructors `T(e)` of the numeric scalars and vectors, and `bitcast<T>(e)`
//! (WGSL, 17.1.2 "Value Constructor Built-in Functions", 17.2.1 "bitcast"). The operand is
//! written as its type: `wgsl:i32(f32)`, `wgsl:vec4<u32>(vec4<f16>)`, `wgsl:vec2h(vec2f)`.
//!
//! Rules (quoted with their sections in `docs/wgsl.md`):
//! - float -> integer truncates, and out of range gives "the value in T closest to
//!   truncate(X) and also exactly representable in the original floating point type"
//!   (15.7.6): [`Rules::WGSL`]. NaN, "an indeterminate value", gives 0.
//! - into a float, an inexact value is "one of those two values": clconv takes the nearest,
//!   ties to even, on every target.
//! - i32 <-> u32 is "a reinterpretation of bits": the low bits, as OpenCL's conversion
//!   without `_sat`.

use super::syntax::{self, Call};
use super::{construct, nearest_even, reinterpret, ConstructorRules, Language};
use crate::request::{Request, RequestError};
use crate::rules::Rules;
use crate::types::{ScalarType, VectorType, Width};

pub(super) const RULES: ConstructorRules = ConstructorRules {
    float_to_int: Rules::WGSL,
    to_float: nearest_even,
};

const SCALARS: [(&str, ScalarType); 5] = [
    ("i32", ScalarType::Int),
    ("u32", ScalarType::UInt),
    ("f32", ScalarType::Float),
    ("f16", ScalarType::Half),
    ("bool", ScalarType::Bool),
];

pub(super) fn parse(text: &str) -> Result<Request, RequestError> {
    let call = syntax::call(Language::Wgsl, text)?;
    let src = parse_type(call.arg, text)?;
    if call.callee == "bitcast" {
        let target = call.template.ok_or_else(|| {
            syntax::error(
                Language::Wgsl,
                text,
                "bitcast names its result type: `bitcast<vec2<f32>>(vec4<f16>)`".into(),
            )
        })?;
        let dst = parse_type(target, text)?;
        if !bitcast_exists(src, dst) {
            return Err(syntax::error(
                Language::Wgsl,
                text,
                "WGSL's bitcast (17.2.1) is `bitcast<T>(T)`, or between 32-bit types of the \
                 same component count (`bitcast<vecN<T>>(vecN<S>)`), or vec2<f16> <-> a \
                 32-bit scalar and vec4<f16> <-> vec2 of a 32-bit type, none of them bool"
                    .into(),
            ));
        }
        return reinterpret(src, dst);
    }
    let dst = constructor_type(&call, text)?;
    construct(Language::Wgsl, src, dst, RULES)
}

/// True when WGSL has an overload `bitcast<dst>(e: src)` (17.2.1 "bitcast"): the identity on
/// every concrete numeric scalar or vector; `bitcast<T>(S)` and `bitcast<vecN<T>>(vecN<S>)` for
/// 32-bit S and T; `bitcast<T>(vec2<f16>)` and back for a 32-bit T; `bitcast<vec2<T>>(vec4<f16>)`
/// and back.
fn bitcast_exists(src: VectorType, dst: VectorType) -> bool {
    // bool is no numeric type: no bitcast takes or gives it.
    if src.elem.is_bool() || dst.elem.is_bool() {
        return false;
    }
    let bits32 = |t: VectorType| t.elem != ScalarType::Half;
    let halves = |h: VectorType, t: VectorType| {
        h.elem == ScalarType::Half
            && bits32(t)
            && matches!(
                (h.width, t.width),
                (Width::W2, Width::W1) | (Width::W4, Width::W2)
            )
    };
    src == dst
        || (bits32(src) && bits32(dst) && src.width == dst.width)
        || halves(src, dst)
        || halves(dst, src)
}

/// The type a constructor call names: `i32`, `vec4<f32>`, `vec4f`.
fn constructor_type(call: &Call, text: &str) -> Result<VectorType, RequestError> {
    match call.template {
        Some(t) if call.callee.starts_with("vec") => {
            parse_type(&format!("{}<{t}>", call.callee), text)
        }
        Some(_) => Err(syntax::error(
            Language::Wgsl,
            text,
            format!(
                "`{}<...>` is no conversion: write a type, `vec4<i32>(vec4<f32>)`, or \
                 `bitcast<T>(S)`",
                call.callee
            ),
        )),
        None => parse_type(call.callee, text),
    }
}

fn parse_type(name: &str, text: &str) -> Result<VectorType, RequestError> {
    let scalar = |s: &str| SCALARS.iter().find(|(n, _)| *n == s).map(|&(_, t)| t);
    if let Some(t) = scalar(name) {
        return Ok(VectorType::scalar(t));
    }
    let lanes = |c: u8| match c {
        b'2' => Some(Width::W2),
        b'3' => Some(Width::W3),
        b'4' => Some(Width::W4),
        _ => None,
    };
    if let Some(rest) = name.strip_prefix("vec") {
        let bytes = rest.as_bytes();
        if let Some(width) = bytes.first().and_then(|&c| lanes(c)) {
            let elem = match &rest[1..] {
                "i" => Some(ScalarType::Int),
                "u" => Some(ScalarType::UInt),
                "f" => Some(ScalarType::Float),
                "h" => Some(ScalarType::Half),
                t => t
                    .strip_prefix('<')
                    .and_then(|t| t.strip_suffix('>'))
                    .and_then(scalar),
            };
            if let Some(elem) = elem {
                return Ok(VectorType::new(elem, width));
            }
        }
    }
    let hint = match name {
        "f64" | "i64" | "u64" | "i8" | "u8" | "i16" | "u16" => "; WGSL has no such type",
        _ if name.starts_with("mat") => "; matrices convert column by column, as vectors",
        _ => "",
    };
    Err(syntax::error(
        Language::Wgsl,
        text,
        format!(
            "unknown type `{name}`: WGSL converts i32, u32, f32, f16, bool and vecN<T> of \
             them (N = 2, 3, 4; also vecNi, vecNu, vecNf, vecNh){hint}"
        ),
    ))
}

fn spelled(t: VectorType) -> String {
    let name = SCALARS
        .iter()
        .find(|(_, s)| *s == t.elem)
        .map(|(n, _)| *n)
        .expect("a WGSL type");
    match t.width {
        Width::W1 => name.to_string(),
        w => format!("vec{}<{name}>", w.lanes()),
    }
}

pub(super) fn spellings() -> Vec<String> {
    let mut out = Vec::new();
    let widths = [Width::W1, Width::W2, Width::W3, Width::W4];
    for width in widths {
        for (_, dst) in SCALARS {
            for (_, src) in SCALARS {
                let (d, s) = (VectorType::new(dst, width), VectorType::new(src, width));
                out.push(format!("{}({})", spelled(d), spelled(s)));
            }
        }
    }
    for dw in widths {
        for sw in widths {
            for (_, dst) in SCALARS {
                for (_, src) in SCALARS {
                    let (d, s) = (VectorType::new(dst, dw), VectorType::new(src, sw));
                    if bitcast_exists(s, d) {
                        out.push(format!("bitcast<{}>({})", spelled(d), spelled(s)));
                    }
                }
            }
        }
    }
    out
}
