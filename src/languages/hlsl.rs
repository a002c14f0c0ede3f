//! HLSL: casts and constructors `int4(float4)`, `(int4)float4`, `uint(double)`,
//! `half2(float2)`, `vector<float, 4>`, and the reinterpretations `asint`, `asuint`, `asfloat`,
//! `asint16`, `asuint16`, `asfloat16`, and `f32tof16`/`f16tof32` (chains: a half's bits in
//! the low 16 bits of a `uint`).
//!
//! Rules (quoted with their sections in `docs/hlsl.md`): the Direct3D functional
//! specification's `ftoi`/`ftou`/`dtoi`/`dtou` clamp, truncate and give 0 for NaN: OpenCL's
//! `_sat` exactly. `itof`/`utof` and `dtof` round to nearest-even; every other conversion
//! into a narrower float rounds toward zero (D3D 11.3, 3.2.2: "Round-to-zero must be used
//! during conversion to another float format"), so `half(float)` is `convert_half_rtz(float)`.
//! Integer -> integer keeps the low bits.

use super::syntax;
use super::{construct, reinterpret, steps, ConstructorRules, Language};
use crate::request::{Request, RequestError};
use crate::rules::Rules;
use crate::types::{Rounding, ScalarType, VectorType, Width};

pub(super) const RULES: ConstructorRules = ConstructorRules {
    float_to_int: Rules::OPENCL,
    to_float,
};

fn to_float(src: ScalarType, dst: ScalarType) -> Rounding {
    let narrowing = src.is_float() && src.bits() > dst.bits();
    if narrowing && !(src == ScalarType::Double && dst == ScalarType::Float) {
        Rounding::Rtz
    } else {
        Rounding::Rte
    }
}

const SCALARS: [(&str, ScalarType); 16] = [
    ("int", ScalarType::Int),
    ("uint", ScalarType::UInt),
    ("float", ScalarType::Float),
    ("double", ScalarType::Double),
    ("half", ScalarType::Half),
    ("bool", ScalarType::Bool),
    ("int16_t", ScalarType::Short),
    ("uint16_t", ScalarType::UShort),
    ("int64_t", ScalarType::Long),
    ("uint64_t", ScalarType::ULong),
    ("dword", ScalarType::UInt),
    ("int32_t", ScalarType::Int),
    ("uint32_t", ScalarType::UInt),
    ("float16_t", ScalarType::Half),
    ("float32_t", ScalarType::Float),
    ("float64_t", ScalarType::Double),
];

/// The reinterpreting intrinsics and the element type each gives.
const AS: [(&str, ScalarType); 6] = [
    ("asint", ScalarType::Int),
    ("asuint", ScalarType::UInt),
    ("asfloat", ScalarType::Float),
    ("asint16", ScalarType::Short),
    ("asuint16", ScalarType::UShort),
    ("asfloat16", ScalarType::Half),
];

pub(super) fn parse(text: &str) -> Result<Request, RequestError> {
    let call = syntax::call(Language::Hlsl, text)?;
    let src = parse_type(call.arg, text)?;
    if let Some(&(_, elem)) = AS.iter().find(|(n, _)| *n == call.callee) {
        return reinterpret(src, VectorType::new(elem, src.width));
    }
    if matches!(call.callee, "f32tof16" | "f16tof32") {
        return half_bits(call.callee, src, text);
    }
    let dst = match (call.callee, call.template) {
        ("", Some(t)) => parse_type(t, text)?,
        ("vector", Some(t)) => parse_type(&format!("vector<{t}>"), text)?,
        (name, None) => parse_type(name, text)?,
        (name, Some(_)) => {
            return Err(syntax::error(
                Language::Hlsl,
                text,
                format!("`{name}<...>` is no conversion clconv knows"),
            ))
        }
    };
    construct(Language::Hlsl, src, dst, RULES)
}

/// `f32tof16(floatN)`: each float rounded to half toward zero (D3D's rule for every
/// conversion into a narrower float, 3.2.2) and its bits zero-extended into a `uint`
/// ("stored in the low-half of the uint"); `f16tof32(uintN)`: the half in each `uint`'s low
/// 16 bits, exactly as a float (the high 16 bits are ignored).
fn half_bits(name: &str, src: VectorType, text: &str) -> Result<Request, RequestError> {
    let w = src.width;
    let v = |elem| VectorType::new(elem, w);
    let (half, ushort) = (v(ScalarType::Half), v(ScalarType::UShort));
    let operand = if name == "f32tof16" {
        ScalarType::Float
    } else {
        ScalarType::UInt
    };
    if src.elem != operand {
        let wanted = syntax::suffixed_name(v(operand), &SCALARS[..10]).unwrap_or_default();
        return Err(syntax::error(
            Language::Hlsl,
            text,
            format!(
                "{name} takes {wanted} (a {operand} per component), not {}",
                src
            ),
        ));
    }
    if name == "f32tof16" {
        steps::chain(&[
            steps::convert(src, half, false, Some(Rounding::Rtz))?,
            steps::reinterpret(half, ushort)?,
            steps::convert(ushort, v(ScalarType::UInt), false, None)?,
        ])
    } else {
        steps::chain(&[
            steps::convert(src, ushort, false, None)?,
            steps::reinterpret(ushort, half)?,
            steps::convert(half, v(ScalarType::Float), false, None)?,
        ])
    }
}

fn parse_type(name: &str, text: &str) -> Result<VectorType, RequestError> {
    if let Some(inner) = name
        .strip_prefix("vector<")
        .and_then(|n| n.strip_suffix('>'))
    {
        if let Some((elem, n)) = inner.split_once(',') {
            if let Some(t) = syntax::suffixed_type(&format!("{elem}{n}"), &SCALARS, &[1, 2, 3, 4]) {
                return Ok(t);
            }
        }
    }
    syntax::suffixed_type(name, &SCALARS, &[1, 2, 3, 4]).ok_or_else(|| {
        let hint = if name.starts_with("min") {
            "; the min-precision types (min16float, ...) have no fixed width to convert exactly"
        } else {
            ""
        };
        syntax::error(
            Language::Hlsl,
            text,
            format!(
                "unknown type `{name}`: HLSL converts int, uint, float, double, half, bool, \
                 int16_t, uint16_t, int64_t, uint64_t (and dword, int32_t, uint32_t, \
                 float16_t, float32_t, float64_t), with 1 to 4 components (`float4`){hint}"
            ),
        )
    })
}

pub(super) fn spellings() -> Vec<String> {
    let canonical = &SCALARS[..10];
    let mut out = Vec::new();
    for width in [Width::W1, Width::W2, Width::W3, Width::W4] {
        for &(_, dst) in canonical {
            for &(_, src) in canonical {
                let d = syntax::suffixed_name(VectorType::new(dst, width), canonical);
                let s = syntax::suffixed_name(VectorType::new(src, width), canonical);
                if let (Some(d), Some(s)) = (d, s) {
                    out.push(format!("{d}({s})"));
                }
            }
        }
        for (name, elem) in [
            ("f32tof16", ScalarType::Float),
            ("f16tof32", ScalarType::UInt),
        ] {
            out.extend(
                syntax::suffixed_name(VectorType::new(elem, width), canonical)
                    .map(|s| format!("{name}({s})")),
            );
        }
        // Every source of the intrinsic's size, its own type included: `asuint(int(1))` and
        // `asint(int)` compile (DXC's tests; Clang's `asint` is a `bit_cast` of any type of
        // the same size).
        for (name, elem) in AS {
            for &(_, src) in canonical {
                if src.bytes() == elem.bytes() {
                    let s = syntax::suffixed_name(VectorType::new(src, width), canonical);
                    out.extend(s.map(|s| format!("{name}({s})")));
                }
            }
        }
    }
    out
}
