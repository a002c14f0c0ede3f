//! PTX: the `cvt` instruction by its modifiers and types (`ptx:cvt.rni.sat.s8.f32`,
//! `ptx:cvt.rzi.s64.f64`, `ptx:cvt.rn.f16.f32`), and CUDA's conversion intrinsics
//! (`cuda:__float2int_rn`, `cuda:__double2float_ru`, `cuda:__half2float`), which nvcc compiles
//! to `cvt`.
//!
//! Rules (quoted with their sections in `docs/ptx.md`): a float -> integer `cvt` "is clamped to
//! the destination range by default" and rounds by its integer rounding modifier (`.rni`,
//! `.rzi`, `.rmi`, `.rpi`); NaN gives 0, except from an `.f64` source or into an `.s64`/`.u64`
//! destination, where it gives `1 << (width - 1)` ([`crate::rules::NanToInteger::HighBit`], spelled
//! `_satmsb`). Into floats the modifier is `.rn`, `.rz`, `.rm` or `.rp`. Integer -> integer
//! truncates or extends, and clamps with `.sat`. The ISA calls the rounding modifier mandatory
//! for float <-> integer and narrowing conversions; clconv reads a `cvt` without one with the
//! ISA's examples' defaults (toward zero into integers, nearest-even into floats).
//! PTX's float rules are rules of the request ([`crate::rules::FloatResult`]): `.sat` on an
//! `.f16`, `.f32` or `.f64` destination clamps to [0.0, 1.0] (`_clamp01`), `.relu` on `.f16`
//! and `.bf16` gives +0 for a negative result (`_relu`), `.ftz` flushes `.f32` subnormal
//! operands and results (`_ftz`); `.satfinite` into `.bf16` is `_sat`. Not read, each refused
//! with a message that says so: `.rna` (only `cvt.rna.tf32.f32` has it), `.satfinite` into
//! `.f16`, and the packed and 8-bit float types.

use super::syntax;
use super::Language;
use crate::request::{Conversion, Request, RequestError};
use crate::rules::{FloatResult, Rules};
use crate::types::{Extensions, Rounding, ScalarType, VectorType};

const TYPES: [(&str, ScalarType); 12] = [
    ("s8", ScalarType::Char),
    ("u8", ScalarType::UChar),
    ("s16", ScalarType::Short),
    ("u16", ScalarType::UShort),
    ("s32", ScalarType::Int),
    ("u32", ScalarType::UInt),
    ("s64", ScalarType::Long),
    ("u64", ScalarType::ULong),
    ("f16", ScalarType::Half),
    ("f32", ScalarType::Float),
    ("f64", ScalarType::Double),
    ("bf16", ScalarType::BFloat),
];

/// Parses `cvt.<modifiers>.<dtype>.<atype>`.
pub(super) fn parse_cvt(text: &str) -> Result<Request, RequestError> {
    let bad = |why: String| syntax::error(Language::Ptx, text, why);
    let mut parts: Vec<&str> = text.split('.').collect();
    if parts.first() != Some(&"cvt") || parts.len() < 3 {
        return Err(bad(
            "expected `cvt{.rounding}{.sat}.<dtype>.<atype>`, e.g. `ptx:cvt.rni.sat.s8.f32`".into(),
        ));
    }
    let atype = parts.pop().unwrap_or_default();
    let dtype = parts.pop().unwrap_or_default();
    let ty = |name: &str| {
        TYPES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, t)| t)
            .ok_or_else(|| {
                let hint = match name {
                    "tf32" | "e4m3x2" | "e5m2x2" | "f16x2" | "bf16x2" => {
                        ": the packed and narrow float formats are not read yet"
                    }
                    _ => "",
                };
                bad(format!(
                    "unknown type `.{name}`: cvt converts .s8 ... .u64, .f16, .bf16, .f32 and .f64{hint}"
                ))
            })
    };
    let (dst, src) = (ty(dtype)?, ty(atype)?);
    let mut rounding = None;
    let mut integer_rounding = None;
    let mut sat = false;
    let mut satfinite = false;
    let mut rules = Rules::OPENCL;
    for &m in &parts[1..] {
        match m {
            "rni" | "rzi" | "rmi" | "rpi" => integer_rounding = Some(mode(&m[..2])),
            "rn" | "rz" | "rm" | "rp" => rounding = Some(mode(m)),
            "sat" => sat = true,
            "ftz" => {
                // "Modifier .ftz can only be specified when either .dtype or .atype is .f32".
                if dst != ScalarType::Float && src != ScalarType::Float {
                    return Err(bad(
                        "`.ftz` flushes single-precision (.f32) subnormals: it needs an .f32 \
                         source or destination"
                            .into(),
                    ));
                }
                rules.flush_float_subnormals = true;
            }
            "relu" => {
                if !matches!(dst, ScalarType::Half | ScalarType::BFloat) {
                    return Err(bad(format!(
                        "`.relu` applies to .f16 and .bf16 destinations (and packed formats \
                         clconv does not read), not .{dtype}"
                    )));
                }
                rules.float_result = FloatResult::Relu;
            }
            "satfinite" => {
                if dst != ScalarType::BFloat {
                    return Err(bad(format!(
                        "`.satfinite` into .{dtype}: clconv reads it into .bf16 (the largest \
                         finite value for what lies beyond it); into .f16 and the packed fp8 \
                         formats it does not yet"
                    )));
                }
                satfinite = true;
            }
            "rna" => {
                return Err(bad(
                    "`.rna` (ties away from zero) is defined only for `cvt.rna.tf32.f32`, and \
                     clconv has no .tf32 type"
                        .into(),
                ))
            }
            other => return Err(bad(format!("unknown modifier `.{other}`"))),
        }
    }
    let ext = Extensions::with_fp16();
    let (s, d) = (VectorType::scalar(src), VectorType::scalar(dst));
    let conversion = match (src.is_float(), dst.is_float()) {
        (true, false) => {
            if rounding.is_some() {
                return Err(bad(
                    "a float -> integer cvt rounds with .rni, .rzi, .rmi or .rpi".into(),
                ));
            }
            let ptx = Rules::ptx(src, dst);
            Conversion::new(s, d, true, integer_rounding, ext)?.with_rules(Rules {
                out_of_range: ptx.out_of_range,
                nan: ptx.nan,
                ..rules
            })
        }
        (_, true) => {
            if integer_rounding.is_some() && src.is_integer() {
                return Err(bad(
                    "an integer -> float cvt rounds with .rn, .rz, .rm or .rp".into(),
                ));
            }
            if integer_rounding.is_some() {
                return Err(bad(
                    "`.rni` and friends on a float destination round to an integral float, \
                     which is not a conversion clconv lowers"
                        .into(),
                ));
            }
            // `.sat` into .f16, .f32, .f64: "limits the result to the range [0.0, 1.0]";
            // `.satfinite` into .bf16 is clconv's `_sat` there.
            if sat {
                if !matches!(
                    dst,
                    ScalarType::Half | ScalarType::Float | ScalarType::Double
                ) {
                    return Err(bad(format!(
                        "`.sat` on a float destination clamps to [0.0, 1.0] for .f16, .f32 and \
                         .f64, not .{dtype}"
                    )));
                }
                if rules.float_result == FloatResult::Relu {
                    return Err(bad("`.sat` and `.relu` are two clamps: write one".into()));
                }
                rules.float_result = FloatResult::UnitInterval;
            }
            let rounding = rounding.unwrap_or(Rounding::Rte);
            Conversion::new(s, d, satfinite, Some(rounding), ext)?.with_rules(rules)
        }
        (false, false) => {
            if rounding.is_some() || integer_rounding.is_some() {
                return Err(bad(
                    "an integer -> integer cvt takes no rounding modifier".into()
                ));
            }
            // `.ftz`, `.relu` and `.satfinite` were refused above: each needs a float type.
            debug_assert!(rules == Rules::OPENCL && !satfinite);
            Conversion::new(s, d, sat, None, ext)?
        }
    };
    Ok(Request::Convert(conversion))
}

fn mode(m: &str) -> Rounding {
    match m {
        "rn" => Rounding::Rte,
        "rz" => Rounding::Rtz,
        "rm" => Rounding::Rtn,
        _ => Rounding::Rtp,
    }
}

pub(super) fn parse(text: &str) -> Result<Request, RequestError> {
    parse_cvt(text)
}

pub(super) fn spellings() -> Vec<String> {
    let mut out = Vec::new();
    for (d, dt) in TYPES {
        for (a, at) in TYPES {
            if d == a {
                continue;
            }
            match (at.is_float(), dt.is_float()) {
                (true, false) => {
                    for m in ["rni", "rzi", "rmi", "rpi"] {
                        out.push(format!("cvt.{m}.{d}.{a}"));
                    }
                }
                (_, true) => {
                    for m in ["rn", "rz", "rm", "rp"] {
                        out.push(format!("cvt.{m}.{d}.{a}"));
                    }
                }
                (false, false) => {
                    out.push(format!("cvt.{d}.{a}"));
                    out.push(format!("cvt.sat.{d}.{a}"));
                }
            }
            // The float rules in every rounding: `.sat` into .f16, .f32, .f64; `.ftz` where an
            // .f32 is, alone and (into a float) with `.sat`.
            let (float_modes, int_modes) = (["rn", "rz", "rm", "rp"], ["rni", "rzi", "rmi", "rpi"]);
            if matches!(d, "f16" | "f32" | "f64") {
                for m in float_modes {
                    out.push(format!("cvt.{m}.sat.{d}.{a}"));
                }
            }
            if (d == "f32" || a == "f32") && (dt.is_float() || at.is_float()) {
                let modes = if dt.is_float() {
                    float_modes
                } else {
                    int_modes
                };
                for m in modes {
                    out.push(format!("cvt.{m}.ftz.{d}.{a}"));
                    if matches!(d, "f16" | "f32" | "f64") {
                        out.push(format!("cvt.{m}.ftz.sat.{d}.{a}"));
                    }
                }
            }
        }
    }
    // `.relu` and `.satfinite` into .f16 and .bf16 take .rn and .rz only.
    for d in ["f16", "bf16"] {
        for m in ["rn", "rz"] {
            out.push(format!("cvt.{m}.relu.{d}.f32"));
            if d == "bf16" {
                out.push(format!("cvt.{m}.satfinite.{d}.f32"));
                out.push(format!("cvt.{m}.satfinite.relu.{d}.f32"));
            }
        }
    }
    out.push("cvt.sat.f32.f32".into());
    out.push("cvt.ftz.sat.f32.f32".into());
    out
}

/// CUDA's conversion intrinsics: name, the `cvt` nvcc emits for it.
pub(super) fn cuda_spellings() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let ints = [
        ("int", "s32"),
        ("uint", "u32"),
        ("ll", "s64"),
        ("ull", "u64"),
    ];
    let floats = [("float", "f32"), ("double", "f64")];
    let modes = [("rn", "rn"), ("rz", "rz"), ("ru", "rp"), ("rd", "rm")];
    for (f, ft) in floats {
        for (i, it) in ints {
            for (s, p) in modes {
                out.push((format!("__{f}2{i}_{s}"), format!("cvt.{p}i.{it}.{ft}")));
                out.push((format!("__{i}2{f}_{s}"), format!("cvt.{p}.{ft}.{it}")));
            }
        }
    }
    for (s, p) in modes {
        out.push((format!("__double2float_{s}"), format!("cvt.{p}.f32.f64")));
        out.push((format!("__float2half_{s}"), format!("cvt.{p}.f16.f32")));
        out.push((format!("__double2half_{s}"), format!("cvt.{p}.f16.f64")));
        for (i, it) in ints {
            out.push((format!("__half2{i}_{s}"), format!("cvt.{p}i.{it}.f16")));
            out.push((format!("__{i}2half_{s}"), format!("cvt.{p}.f16.{it}")));
        }
    }
    out.push(("__half2float".into(), "cvt.f32.f16".into()));
    out.push(("__float2half".into(), "cvt.rn.f16.f32".into()));
    out.push(("__double2half".into(), "cvt.rn.f16.f64".into()));
    out
}

/// Parses a CUDA intrinsic's name (`__float2int_rn`) as the `cvt` it compiles to.
pub(super) fn parse_cuda(text: &str) -> Result<Request, RequestError> {
    let name = text.strip_suffix("()").unwrap_or(text);
    match cuda_spellings().into_iter().find(|(n, _)| n == name) {
        Some((_, cvt)) => parse_cvt(&cvt),
        None => Err(syntax::error(
            Language::Cuda,
            text,
            "it is not one of the conversion intrinsics: e.g. `cuda:__float2int_rn`, \
             `cuda:__double2float_ru`, `cuda:__float2half_rz`, `cuda:__half2float`"
                .into(),
        )),
    }
}
