//! Metal: conversions `int4(float4)`, `static_cast<int4>(float4)`, `(int4)float4`, and the
//! reinterpretation `as_type<T>(e)`.
//!
//! Rules (quoted with their sections in `docs/msl.md`): `static_cast` converts "with no
//! saturation and with a default rounding mode": toward zero into integers, nearest-even into
//! floats. Out-of-range and NaN results are undefined in Metal (C++'s rule); clconv gives
//! OpenCL's `_sat` result (clamp, NaN -> 0) on every target. Integer -> integer keeps the low
//! bits.

use super::syntax;
use super::{construct, nearest_even, reinterpret, ConstructorRules, Language};
use crate::request::{Reinterpretation, Request, RequestError};
use crate::rules::Rules;
use crate::types::{Extensions, ScalarType, VectorType, Width};

pub(super) const RULES: ConstructorRules = ConstructorRules {
    float_to_int: Rules::OPENCL,
    to_float: nearest_even,
};

const SCALARS: [(&str, ScalarType); 11] = [
    ("char", ScalarType::Char),
    ("uchar", ScalarType::UChar),
    ("short", ScalarType::Short),
    ("ushort", ScalarType::UShort),
    ("int", ScalarType::Int),
    ("uint", ScalarType::UInt),
    ("long", ScalarType::Long),
    ("ulong", ScalarType::ULong),
    ("half", ScalarType::Half),
    ("float", ScalarType::Float),
    ("bool", ScalarType::Bool),
];

pub(super) fn parse(text: &str) -> Result<Request, RequestError> {
    let call = syntax::call(Language::Msl, text)?;
    let src = parse_type(call.arg, text)?;
    match (call.callee, call.template) {
        ("as_type", Some(t)) => reinterpret(src, parse_type(t, text)?),
        ("static_cast", Some(t)) | ("", Some(t)) => {
            construct(Language::Msl, src, parse_type(t, text)?, RULES)
        }
        ("vec", Some(t)) => construct(
            Language::Msl,
            src,
            parse_type(&format!("vec<{t}>"), text)?,
            RULES,
        ),
        (name, None) => construct(Language::Msl, src, parse_type(name, text)?, RULES),
        (name, Some(_)) => Err(syntax::error(
            Language::Msl,
            text,
            format!(
                "`{name}<...>` is no conversion clconv knows: write `static_cast<T>(S)` or \
                 `as_type<T>(S)`"
            ),
        )),
    }
}

fn parse_type(name: &str, text: &str) -> Result<VectorType, RequestError> {
    if let Some(inner) = name.strip_prefix("vec<").and_then(|n| n.strip_suffix('>')) {
        if let Some((elem, n)) = inner.split_once(',') {
            if let Some(t) = syntax::suffixed_type(&format!("{elem}{n}"), &SCALARS, &[2, 3, 4]) {
                return Ok(t);
            }
        }
    }
    syntax::suffixed_type(name, &SCALARS, &[2, 3, 4]).ok_or_else(|| {
        let hint = match name {
            "double" => "; Metal has no double",
            "bfloat" => "; bfloat is not converted yet",
            _ => "",
        };
        syntax::error(
            Language::Msl,
            text,
            format!(
                "unknown type `{name}`: Metal converts char, uchar, short, ushort, int, uint, \
                 long, ulong, half, float and bool, with 2 to 4 components (`float4`){hint}"
            ),
        )
    })
}

pub(super) fn spellings() -> Vec<String> {
    let mut out = Vec::new();
    for width in [Width::W1, Width::W2, Width::W3, Width::W4] {
        for (_, dst) in SCALARS {
            for (_, src) in SCALARS {
                let d = syntax::suffixed_name(VectorType::new(dst, width), &SCALARS);
                let s = syntax::suffixed_name(VectorType::new(src, width), &SCALARS);
                if let (Some(d), Some(s)) = (d, s) {
                    out.push(format!("static_cast<{d}>({s})"));
                }
            }
        }
    }
    // `as_type` takes "any scalar or vector data type ... of the same size" (section 2.14), so
    // across component counts (`as_type<long>(float2)`) and to its own type; a 3-component
    // vector has the size of 4 components in Metal as in OpenCL.
    let types = || {
        [Width::W1, Width::W2, Width::W3, Width::W4]
            .into_iter()
            .flat_map(|w| SCALARS.map(|(_, t)| VectorType::new(t, w)))
    };
    for dst in types() {
        for src in types() {
            if Reinterpretation::new(src, dst, Extensions::with_fp16()).is_ok() {
                let d = syntax::suffixed_name(dst, &SCALARS);
                let s = syntax::suffixed_name(src, &SCALARS);
                if let (Some(d), Some(s)) = (d, s) {
                    out.push(format!("as_type<{d}>({s})"));
                }
            }
        }
    }
    out
}
