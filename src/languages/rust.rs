//! Rust: the numeric casts `<src> as <dst>` between the primitive integers and floats
//! (`rust:f32 as i8`, `rust:f16 as u32`, `rust:u64 as f32`).
//!
//! Rules (quoted with their sections in `docs/rust.md`): float -> integer rounds toward zero,
//! saturates, and gives 0 for NaN: OpenCL's `_sat` exactly. Integer -> float and float ->
//! narrower float round to nearest, ties to even. Integer -> integer truncates or extends:
//! OpenCL's conversion without `_sat`. Every cast is therefore an OpenCL request, and shares its
//! kernel and proof.

use super::syntax;
use super::{construct, nearest_even, ConstructorRules, Language};
use crate::request::{Request, RequestError};
use crate::rules::Rules;
use crate::types::{ScalarType, VectorType};

pub(super) const RULES: ConstructorRules = ConstructorRules {
    float_to_int: Rules::OPENCL,
    to_float: nearest_even,
};

const TYPES: [(&str, ScalarType); 11] = [
    ("i8", ScalarType::Char),
    ("u8", ScalarType::UChar),
    ("i16", ScalarType::Short),
    ("u16", ScalarType::UShort),
    ("i32", ScalarType::Int),
    ("u32", ScalarType::UInt),
    ("i64", ScalarType::Long),
    ("u64", ScalarType::ULong),
    ("f16", ScalarType::Half),
    ("f32", ScalarType::Float),
    ("f64", ScalarType::Double),
];

/// Parses `<src> as <dst>` (`expression` as written: the words need their spaces).
pub(super) fn parse(expression: &str) -> Result<Request, RequestError> {
    let words: Vec<&str> = expression.split_ascii_whitespace().collect();
    let [src, "as", dst] = words[..] else {
        return Err(syntax::error(
            Language::Rust,
            expression,
            "expected `<type> as <type>`, e.g. `rust:f32 as i8`".into(),
        ));
    };
    let src = parse_type(src, expression)?;
    let dst = parse_type(dst, expression)?;
    construct(
        Language::Rust,
        VectorType::scalar(src),
        VectorType::scalar(dst),
        RULES,
    )
}

fn parse_type(name: &str, text: &str) -> Result<ScalarType, RequestError> {
    TYPES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, t)| t)
        .ok_or_else(|| {
            let hint = match name {
                "i128" | "u128" => "; 128-bit integers are not converted yet",
                "isize" | "usize" => "; write the width your target has (i64 or u64)",
                "bool" | "char" => "; only numeric casts are conversions",
                _ => "",
            };
            syntax::error(
                Language::Rust,
                text,
                format!(
                    "unknown type `{name}`: the casts are between i8, u8, i16, u16, i32, u32, \
                     i64, u64, f16, f32 and f64{hint}"
                ),
            )
        })
}

pub(super) fn spellings() -> Vec<String> {
    let mut out = Vec::new();
    for (src, _) in TYPES {
        for (dst, _) in TYPES {
            out.push(format!("{src} as {dst}"));
        }
    }
    out
}
