//! PTX: the `cvt` instruction by its modifiers and types (`ptx:cvt.rni.sat.s8.f32`,
//! `ptx:cvt.rzi.s64.f64`, `ptx:cvt.rn.f16.f32`). CUDA's intrinsics, which nvcc compiles to
//! `cvt`, are read in `cuda.rs` through [`parse_cvt`].
//!
//! Rules (quoted with their sections in `docs/ptx.md`): a float -> integer `cvt` "is clamped to
//! the destination range by default" and rounds by its integer rounding modifier (`.rni`,
//! `.rzi`, `.rmi`, `.rpi`); NaN gives 0, except from an `.f64` source or into an `.s64`/`.u64`
//! destination, where it gives `1 << (width - 1)` ([`crate::rules::NanToInteger::HighBit`], spelled
//! `_satmsb`). Into floats the modifier is `.rn`, `.rz`, `.rm` or `.rp`. Integer -> integer
//! truncates or extends, and clamps with `.sat`. The modifiers a `cvt` takes are the ISA's, as
//! ptxas enforces them: integer rounding exactly where float -> integer, float rounding exactly
//! where integer -> float or a float conversion loses precision (an exact widening takes none),
//! `.sat` only where the destination's range does not hold the source's.
//! PTX's float rules are rules of the request ([`crate::rules::FloatResult`]): `.sat` on an
//! `.f16`, `.f32` or `.f64` destination clamps to [0.0, 1.0] (`_clamp01`), `.relu` on `.f16`
//! and `.bf16` gives +0 for a negative result (`_relu`), `.ftz` flushes `.f32` subnormal
//! operands and results (`_ftz`); `.satfinite` into `.bf16` is `_sat`. The packed pairs
//! (`cvt.rn.satfinite.e4m3x2.f32 d, a, b`, `.f16x2`, `.bf16x2`, fp8 from and into `.f16x2`)
//! are width-2 conversions ([`PAIRS`]), and so are FP6's (`.e2m3x2`, `.e3m2x2`); FP4's
//! (`.e2m1x2`, two codes in one byte) are chains: the width-2 conversion and `pack_fp4`, or
//! `unpack_fp4` and the conversion; `.tf32` is read with `.rn`, `.rz` and `.rna` (ties away
//! from zero: `_rta`); `.ue8m0x2` from `.f32` and `.bf16x2` and back into `.bf16x2`. Not read,
//! each refused with a message that says so: `.rna` elsewhere (only `cvt.rna.tf32.f32` has
//! it), `.satfinite` into `.f16`.

use super::syntax;
use super::Language;
use crate::chain::{Chain, Fp4Packing, Step};
use crate::request::{Conversion, Request, RequestError};
use crate::rules::{relu_on_narrow, FloatResult, Rules};
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};

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
    if let Some(pair) = PAIRS.iter().find(|p| (p.dtype, p.atype) == (dtype, atype)) {
        return parse_pair(pair, &parts[1..], &bad);
    }
    let ty = |name: &str| {
        TYPES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, t)| t)
            .ok_or_else(|| {
                let hint = match name {
                    "f16x2" | "bf16x2" | "e4m3x2" | "e5m2x2" | "e2m3x2" | "e3m2x2" | "e2m1x2" => {
                        ": the packed pairs clconv reads are .f16x2/.bf16x2/.e4m3x2/.e5m2x2/\
                         .e2m3x2/.e3m2x2/.e2m1x2 from .f32 (two operands), .e4m3x2/.e5m2x2/\
                         .e2m3x2/.e3m2x2/.e2m1x2 from .f16x2 and .bf16x2 (PTX 9.1) and .f16x2 \
                         from .e4m3x2/.e5m2x2/.e2m3x2/.e3m2x2/.e2m1x2 (not yet PTX 9.2's \
                         .bf16x2 from them)"
                    }
                    "tf32" => ": clconv reads `cvt.{rn,rz,rna}{.satfinite}.tf32.f32`",
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
            "rna" => return Err(bad(
                "`.rna` (ties away from zero) is defined only for `cvt.rna{.satfinite}.tf32.f32`"
                    .into(),
            )),
            other => return Err(bad(format!("unknown modifier `.{other}`"))),
        }
    }
    // `.relu` and `.satfinite` are on two syntax lines only, `cvt.frnd2{.relu}{.satfinite}
    // .f16.f32` and `cvt.frnd2{.relu}{.satfinite}.bf16.f32` with `.frnd2 = { .rn, .rz }`,
    // which have no `.ftz` and no `.sat` (PTX ISA, cvt); the destinations were checked above.
    let frnd2_line = if rules.float_result == FloatResult::Relu {
        Some("`.relu`")
    } else if satfinite {
        Some("`.satfinite`")
    } else {
        None
    };
    if let Some(m) = frnd2_line {
        let line = format!("`cvt.frnd2{{.relu}}{{.satfinite}}.{dtype}.f32` (.frnd2 = .rn, .rz)");
        let why = if src != ScalarType::Float {
            Some(format!(
                "{m} is on {line} only: its source is .f32, not .{atype}"
            ))
        } else if !matches!(rounding, Some(Rounding::Rte | Rounding::Rtz)) {
            Some(format!("{m} is on {line} only: it rounds with .rn or .rz"))
        } else if rules.flush_float_subnormals {
            Some(format!("{m} is on {line} only, which has no .ftz"))
        } else if sat {
            Some(format!("{m} is on {line} only, which has no .sat"))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(bad(why));
        }
    }
    let ext = Extensions::with_fp16();
    let (s, d) = (VectorType::scalar(src), VectorType::scalar(dst));
    // "Integer rounding is required for float-to-integer conversions, and for same-size
    // float-to-float conversions where the value is rounded to an integer. Integer rounding is
    // illegal in all other instances. Floating-point rounding is required for float-to-float
    // conversions that result in loss of precision, and for integer-to-float conversions.
    // Floating-point rounding is illegal in all other instances." (PTX ISA, cvt.)
    let kind = rounding_kind(src, dst);
    if src == dst && src.is_float() && integer_rounding.is_some() {
        return Err(bad(
            "`.rni` and friends on a float destination round to an integral float, which is \
             not a conversion clconv lowers"
                .into(),
        ));
    }
    let exact = if src.is_integer() {
        "an integer -> integer cvt".to_string()
    } else if src == dst {
        format!("cvt.{dtype}.{atype} (the same type)")
    } else {
        format!("this cvt is exact (every .{atype} is an .{dtype}) and")
    };
    let why = match (kind, integer_rounding.is_some(), rounding.is_some()) {
        (RoundingKind::Integer, false, _) => Some(
            "a float -> integer cvt must round with .rni, .rzi, .rmi or .rpi (the ISA: \
             \"Integer rounding is required for float-to-integer conversions\")"
                .to_string(),
        ),
        (RoundingKind::Integer, true, true) => Some(
            "a float -> integer cvt rounds with .rni, .rzi, .rmi or .rpi, not .rn and friends"
                .to_string(),
        ),
        (RoundingKind::Float, true, _) => Some(
            "into a float, cvt rounds with .rn, .rz, .rm or .rp (the ISA: \"Integer rounding \
             is illegal in all other instances\")"
                .to_string(),
        ),
        (RoundingKind::Float, false, false) => Some(format!(
            "{} must round with .rn, .rz, .rm or .rp (the ISA: \"Floating-point rounding is \
             required for float-to-float conversions that result in loss of precision, and for \
             integer-to-float conversions\")",
            if src.is_integer() {
                "an integer -> float cvt"
            } else {
                "a float -> float cvt that loses precision"
            }
        )),
        (RoundingKind::None, true, _) | (RoundingKind::None, _, true) => Some(format!(
            "{exact} takes no rounding modifier (the ISA: \"Floating-point rounding is illegal \
             in all other instances\"; integer rounding likewise)"
        )),
        _ => None,
    };
    if let Some(why) = why {
        return Err(bad(why));
    }
    // ".sat ... is illegal in cases where saturation is not possible based on the source and
    // destination types" (PTX ISA, cvt); ptxas also refuses `.sat` into a float from `.bf16`.
    if sat && !saturation_possible(src, dst) {
        let why = if src == ScalarType::BFloat {
            "ptxas refuses `.sat` into a float from .bf16 (\"Illegal modifier '.sat'\")".to_string()
        } else {
            format!(
                "every .{atype} is in .{dtype}'s range, so nothing saturates (the ISA: `.sat` \
                 \"is illegal in cases where saturation is not possible based on the source \
                 and destination types\")"
            )
        };
        return Err(bad(why));
    }
    let conversion = match (src.is_float(), dst.is_float()) {
        (true, false) => {
            let ptx = Rules::ptx(src, dst);
            Conversion::new(s, d, true, integer_rounding, ext)?.with_rules(Rules {
                out_of_range: ptx.out_of_range,
                nan: ptx.nan,
                ..rules
            })
        }
        (_, true) => {
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
                rules.float_result = FloatResult::UnitInterval;
            }
            // What the ISA leaves open, as NVIDIA's hardware does it (sm_90, ptxas 13.0,
            // measured: docs/ptx.md). A NaN through cvt between .f32, .f16 and .bf16 comes out
            // as the canonical NaN (0x7fff, 0x7fffffff), not with its sign and payload.
            use ScalarType::{BFloat, Float, Half};
            if rules.float_result == FloatResult::Rounded
                && matches!(
                    (src, dst),
                    (Float, Half | BFloat) | (Half, Float | BFloat) | (BFloat, Half)
                )
            {
                rules.float_result = FloatResult::CanonicalNan;
            }
            // `.ftz` into .f16 from .f32: ptxas emits the same `F2F.F16.F32` as without it, and
            // the GPU rounds a subnormal .f32 operand (`cvt.rm.ftz.f16.f32` of -2^-149 gives
            // 0x8001, the flushed operand's result would be 0x8000). No .f16 result is an .f32
            // subnormal, so the modifier does nothing there.
            if (src, dst) == (Float, Half) {
                rules.flush_float_subnormals = false;
            }
            // Exact widenings have no rounding; the request's (nearest-even) changes nothing.
            let rounding = rounding.unwrap_or(Rounding::Rte);
            Conversion::new(s, d, satfinite, Some(rounding), ext)?.with_rules(rules)
        }
        (false, false) => {
            // `.ftz`, `.relu` and `.satfinite` were refused above: each needs a float type;
            // the rounding modifiers just above.
            debug_assert!(rules == Rules::OPENCL && !satfinite);
            Conversion::new(s, d, sat, None, ext)?
        }
    };
    Ok(Request::Convert(conversion))
}

/// One packed `cvt` the ISA has (§9.7.9.21's syntax lines), read as a width-2 conversion:
///
/// ```text
/// cvt.frnd2{.relu}{.satfinite}.f16x2.f32     d, a, b;    frnd2 = .rn | .rz
/// cvt.frnd2{.relu}{.satfinite}.bf16x2.f32    d, a, b;
/// cvt.rn.satfinite{.relu}.f8x2type.f32       d, a, b;    f8x2type = .e4m3x2 | .e5m2x2
/// cvt.rn.satfinite{.relu}.f8x2type.f16x2     d, a;
/// cvt.rn{.relu}.f16x2.f8x2type               d, a;
/// ```
///
/// "the value converted from input a is stored in the upper half of d and the value converted
/// from input b is stored in the lower half": in a buffer of pairs, element 0 of each pair (the
/// lower half, little-endian) is `b` and element 1 is `a`; a packed source's halves are its
/// elements in the same order.
struct Pair {
    dtype: &'static str,
    atype: &'static str,
    dst: ScalarType,
    src: ScalarType,
    /// The rounding modifiers the line allows (the first is what a missing one would be).
    roundings: &'static [&'static str],
    /// `.satfinite`: `Some(true)` required, `Some(false)` optional, `None` not allowed.
    satfinite: Option<bool>,
    /// Elements: 2 for the pairs, 1 for `.tf32`.
    width: Width,
    /// What a NaN gives without `.relu`: the canonical NaN where sm_90 was measured to give it,
    /// clconv's NaN rule (sign and payload kept, quiet) where it was not (`.tf32`).
    nan: FloatResult,
}

const PAIRS: [Pair; 26] = {
    use FloatResult::{CanonicalNan, Magnitude, Rounded};
    use ScalarType::{
        BFloat, Float, Fp4E2M1, Fp6E2M3, Fp6E3M2, Fp8E4M3, Fp8E5M2, Fp8E8M0, Half, Tf32,
    };
    const RZ_RP: &[&str] = &["rz", "rp"];
    use Width::{W1, W2};
    const RN_RZ: &[&str] = &["rn", "rz"];
    const RN: &[&str] = &["rn"];
    const fn pair(
        dtype: &'static str,
        atype: &'static str,
        dst: ScalarType,
        src: ScalarType,
        roundings: &'static [&'static str],
        satfinite: Option<bool>,
    ) -> Pair {
        Pair {
            dtype,
            atype,
            dst,
            src,
            roundings,
            satfinite,
            width: W2,
            nan: CanonicalNan,
        }
    }
    /// [`pair`] whose NaN result is `nan` instead of the canonical NaN.
    const fn with_nan(nan: FloatResult, pair: Pair) -> Pair {
        Pair { nan, ..pair }
    }
    [
        pair("f16x2", "f32", Half, Float, RN_RZ, Some(false)),
        pair("bf16x2", "f32", BFloat, Float, RN_RZ, Some(false)),
        pair("e4m3x2", "f32", Fp8E4M3, Float, RN, Some(true)),
        pair("e5m2x2", "f32", Fp8E5M2, Float, RN, Some(true)),
        pair("e4m3x2", "f16x2", Fp8E4M3, Half, RN, Some(true)),
        pair("e5m2x2", "f16x2", Fp8E5M2, Half, RN, Some(true)),
        // PTX 9.1: `cvt.rn.satfinite{.relu}.f8x2type.fp16x2 d, a` from `.bf16x2` too (its
        // `.fp16x2type` is `{ .f16x2, .bf16x2 }`), as FP6's and FP4's lines below.
        pair("e4m3x2", "bf16x2", Fp8E4M3, BFloat, RN, Some(true)),
        pair("e5m2x2", "bf16x2", Fp8E5M2, BFloat, RN, Some(true)),
        pair("f16x2", "e4m3x2", Half, Fp8E4M3, RN, None),
        pair("f16x2", "e5m2x2", Half, Fp8E5M2, RN, None),
        // FP6: "`NaN` results are converted to positive _MAX_NORM_" and past MAX_NORM values
        // saturate to it: clconv's rule for FP6 (`docs/formats.md`), no NaN to canonicalise.
        // Each code in the low six bits of its byte ("d[13:8] = convert(a); d[5:0] =
        // convert(b)", the other bits zero), as clconv stores FP6.
        with_nan(
            Rounded,
            pair("e2m3x2", "f32", Fp6E2M3, Float, RN, Some(true)),
        ),
        with_nan(
            Rounded,
            pair("e3m2x2", "f32", Fp6E3M2, Float, RN, Some(true)),
        ),
        // PTX 9.1's `cvt.rn.satfinite{.relu}.f6x2type.fp16x2type d, a`: "the value from the
        // upper 16 bits of input `a` is stored in the upper 8 bits of `d`".
        with_nan(
            Rounded,
            pair("e2m3x2", "f16x2", Fp6E2M3, Half, RN, Some(true)),
        ),
        with_nan(
            Rounded,
            pair("e2m3x2", "bf16x2", Fp6E2M3, BFloat, RN, Some(true)),
        ),
        with_nan(
            Rounded,
            pair("e3m2x2", "f16x2", Fp6E3M2, Half, RN, Some(true)),
        ),
        with_nan(
            Rounded,
            pair("e3m2x2", "bf16x2", Fp6E3M2, BFloat, RN, Some(true)),
        ),
        with_nan(Rounded, pair("f16x2", "e2m3x2", Half, Fp6E2M3, RN, None)),
        with_nan(Rounded, pair("f16x2", "e3m2x2", Half, Fp6E3M2, RN, None)),
        // FP4, as FP6 ("`NaN` results are converted to positive _MAX_NORM_", saturating), but
        // two codes in the byte d (`a` in d's upper 4 bits, `b` in its lower 4): the width-2
        // conversion and `pack_fp4`; back, `unpack_fp4` and the conversion into half.
        with_nan(
            Rounded,
            pair("e2m1x2", "f32", Fp4E2M1, Float, RN, Some(true)),
        ),
        // PTX 9.1's `cvt.rn.satfinite{.relu}.f4x2type.fp16x2type d, a`: "the value from the
        // upper 16 bits of `a` is stored in the upper 4 bits of `d`".
        with_nan(
            Rounded,
            pair("e2m1x2", "f16x2", Fp4E2M1, Half, RN, Some(true)),
        ),
        with_nan(
            Rounded,
            pair("e2m1x2", "bf16x2", Fp4E2M1, BFloat, RN, Some(true)),
        ),
        with_nan(Rounded, pair("f16x2", "e2m1x2", Half, Fp4E2M1, RN, None)),
        // `cvt.frnd3{.satfinite}.ue8m0x2.f32 d, a, b;` and `.bf16x2 d, a` (frnd3 = .rz, .rp):
        // E8M0 of the magnitude (`_abs`), NVIDIA's scale rule (the ISA: "NaN results are
        // converted to NaN", `.satfinite` gives MAX_NORM; its other edges are CUDA's, whose
        // `__nv_cvt_float_to_e8m0` emits this `cvt`: the sign discarded, below 2^-127 clipped
        // to 2^-127). Back, `cvt.rn.bf16x2.ue8m0x2 d, a`: exact, 0xff the canonical NaN 0x7fff
        // (CUDA's `__nv_cvt_e8m0_to_bf16raw`; the ISA does not say).
        with_nan(
            Magnitude,
            pair("ue8m0x2", "f32", Fp8E8M0, Float, RZ_RP, Some(false)),
        ),
        with_nan(
            Magnitude,
            pair("ue8m0x2", "bf16x2", Fp8E8M0, BFloat, RZ_RP, Some(false)),
        ),
        pair("bf16x2", "ue8m0x2", BFloat, Fp8E8M0, RN, None),
        // `cvt.frnd2{.satfinite}{.relu}.tf32.f32 d, a;` and `cvt.rna{.satfinite}.tf32.f32 d, a;`
        // (`.rna` is read in `parse_pair`).
        Pair {
            dtype: "tf32",
            atype: "f32",
            dst: Tf32,
            src: Float,
            roundings: RN_RZ,
            satfinite: Some(false),
            width: W1,
            nan: Rounded,
        },
    ]
};

/// Reads the modifiers of a packed `cvt` ([`Pair`]) into its width-2 request. Its NaN result is
/// the canonical NaN (what sm_90 gives for every NaN through these, measured: `docs/ptx.md`),
/// `.relu` the ISA's clamp; `.satfinite` into `.f16x2` is refused as it is for `.f16`.
fn parse_pair(
    pair: &Pair,
    modifiers: &[&str],
    bad: &dyn Fn(String) -> RequestError,
) -> Result<Request, RequestError> {
    let line = format!("cvt.{}.{}", pair.dtype, pair.atype);
    let (mut rounding, mut relu, mut satfinite) = (None, false, false);
    let mut ties_away = false;
    for &m in modifiers {
        match m {
            // `.relu` on the narrow formats' lines that have it: into `.tf32` and FP6, out of
            // FP6 (`_relu`); the `.ue8m0x2` lines have none.
            "relu"
                if (pair.dst.is_narrow() || pair.src.is_narrow())
                    && !relu_on_narrow(pair.src, pair.dst) =>
            {
                return Err(bad(format!(
                    "`.relu` is no modifier of {line} (the ISA's syntax line has none)"
                )));
            }
            "relu" => relu = true,
            "satfinite" if pair.satfinite.is_some() => satfinite = true,
            "rn" | "rz" | "rm" | "rp" | "rna" if rounding.is_some() => {
                return Err(bad(format!(
                    "`.{m}` is a second rounding modifier: {line} takes one"
                )))
            }
            m if pair.roundings.contains(&m) => rounding = Some(mode(m)),
            // `cvt.rna{.satfinite}.tf32.f32 d, a;`: "rounds to nearest, ties away from zero"
            // (§6.5.2, Table 17), clconv's `_rta`.
            "rna" if pair.dst == ScalarType::Tf32 => {
                rounding = Some(Rounding::Rte);
                ties_away = true;
            }
            "rn" | "rz" | "rm" | "rp" | "rni" | "rzi" | "rmi" | "rpi" | "rna" => {
                return Err(bad(format!(
                    "{line} rounds with .{} only (the ISA's syntax line)",
                    pair.roundings.join(" or .")
                )))
            }
            other => {
                return Err(bad(format!(
                    "`.{other}` is no modifier of {line} (it takes .{}{}{})",
                    pair.roundings.join("/."),
                    match pair.satfinite {
                        Some(true) => ", .satfinite (required)",
                        Some(false) => ", .satfinite",
                        None => "",
                    },
                    ", .relu"
                )))
            }
        }
    }
    let Some(rounding) = rounding else {
        return Err(bad(format!(
            "{line} needs its rounding modifier .{}",
            pair.roundings.join(" or .")
        )));
    };
    if relu && ties_away {
        return Err(bad(
            "`.relu` is not on the `cvt.rna{.satfinite}.tf32.f32` line (the ISA's syntax)".into(),
        ));
    }
    if pair.satfinite == Some(true) && !satfinite {
        return Err(bad(format!(
            "{line} needs .satfinite (the ISA's syntax line: `cvt.rn.satfinite{{.relu}}`)"
        )));
    }
    if satfinite && pair.dst == ScalarType::Half {
        return Err(bad(
            "`.satfinite` into .f16x2: clconv has no saturating conversion into half (it reads              .satfinite into .bf16x2 and the fp8 pairs)"
                .into(),
        ));
    }
    let rules = Rules {
        float_result: if relu { FloatResult::Relu } else { pair.nan },
        ties_away,
        ..Rules::OPENCL
    };
    let (s, d) = (
        VectorType::new(pair.src, pair.width),
        VectorType::new(pair.dst, pair.width),
    );
    let conversion = Conversion::new(s, d, satfinite, Some(rounding), Extensions::with_fp16())?
        .with_rules(rules);
    // FP4's pair is one byte: the codes packed after the conversion, unpacked before it.
    if pair.dst == ScalarType::Fp4E2M1 {
        let pack = Fp4Packing::pack(conversion.dst())?;
        return Chain::new(&[Step::Convert(conversion), Step::Fp4(pack)]).map(Request::Chain);
    }
    if pair.src == ScalarType::Fp4E2M1 {
        let unpack = Fp4Packing::unpack(Fp4Packing::pack(conversion.src())?.bytes())?;
        return Chain::new(&[Step::Fp4(unpack), Step::Convert(conversion)]).map(Request::Chain);
    }
    Ok(Request::Convert(conversion))
}

/// Which rounding modifier a `cvt` from `src` into `dst` takes: the ISA's rules, quoted in
/// [`parse_cvt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RoundingKind {
    /// `.rni`, `.rzi`, `.rmi`, `.rpi`: float -> integer.
    Integer,
    /// `.rn`, `.rz`, `.rm`, `.rp`: integer -> float, and float -> float losing precision.
    Float,
    /// None: integer -> integer, exact float widenings, a float to its own type.
    None,
}

fn rounding_kind(src: ScalarType, dst: ScalarType) -> RoundingKind {
    match (src.is_float(), dst.is_float()) {
        (true, false) => RoundingKind::Integer,
        (false, true) => RoundingKind::Float,
        (false, false) => RoundingKind::None,
        (true, true) if src != dst && !widens_exactly(src, dst) => RoundingKind::Float,
        (true, true) => RoundingKind::None,
    }
}

/// True when every value of the float type `src` is a value of `dst` (.f16 and .bf16 into .f32
/// and .f64, .f32 into .f64).
fn widens_exactly(src: ScalarType, dst: ScalarType) -> bool {
    use ScalarType::{BFloat, Double, Float, Half};
    matches!(
        (src, dst),
        (Half | BFloat, Float | Double) | (Float, Double)
    )
}

/// True when `.sat` is legal on a `cvt` from `src` into `dst`: the destination's range is not a
/// superset of the source's (into an integer), or the destination is a float that `.sat`
/// clamps to [0.0, 1.0], from anything but `.bf16`.
fn saturation_possible(src: ScalarType, dst: ScalarType) -> bool {
    match (src.is_float(), dst.is_float()) {
        (true, false) => true,
        (false, false) => {
            let (lo, hi) = (src.int_min(), src.int_max());
            lo < dst.int_min() || hi > dst.int_max()
        }
        (_, true) => src != ScalarType::BFloat,
    }
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

/// Every `cvt` of the scalar types the ISA allows: each pair of types with the rounding
/// modifiers it takes ([`rounding_kind`]), without and (where legal) with `.sat`, and with
/// `.ftz` where an `.f32` is; `.relu` and `.satfinite` into .f16 and .bf16 from .f32 (`.rn` and
/// `.rz` only); the same-type forms (identities, and the float rules on .f32 -> .f32).
pub(super) fn spellings() -> Vec<String> {
    let mut out = Vec::new();
    for (d, dt) in TYPES {
        for (a, at) in TYPES {
            // Same-type `cvt`s are PTX too (`cvt.s32.s32`, `cvt.ftz.sat.f32.f32`): no
            // rounding, `.sat` and `.ftz` where the rules below allow them.
            let modes: &[&str] = match rounding_kind(at, dt) {
                RoundingKind::Integer => &["rni.", "rzi.", "rmi.", "rpi."],
                RoundingKind::Float => &["rn.", "rz.", "rm.", "rp."],
                RoundingKind::None => &[""],
            };
            let sats: &[&str] = if saturation_possible(at, dt) {
                &["", "sat."]
            } else {
                &[""]
            };
            let ftzs: &[&str] = if d == "f32" || a == "f32" {
                &["", "ftz."]
            } else {
                &[""]
            };
            for m in modes {
                for ftz in ftzs {
                    for sat in sats {
                        out.push(format!("cvt.{m}{ftz}{sat}{d}.{a}"));
                    }
                }
            }
        }
    }
    // The packed pairs, each with every modifier its syntax line allows.
    for pair in &PAIRS {
        let sats: &[&str] = match pair.satfinite {
            Some(true) => &["satfinite."],
            Some(false) if pair.dst != ScalarType::Half => &["", "satfinite."],
            _ => &[""],
        };
        for m in pair.roundings {
            for sat in sats {
                let narrow = pair.dst.is_narrow() || pair.src.is_narrow();
                let relus: &[&str] = if narrow && !relu_on_narrow(pair.src, pair.dst) {
                    &[""]
                } else {
                    &["", "relu."]
                };
                for relu in relus {
                    // In the syntax line's order: `.relu` first into .f16x2/.bf16x2.
                    let modifiers = if !matches!(pair.dtype, "f16x2" | "bf16x2") {
                        format!("{sat}{relu}")
                    } else {
                        format!("{relu}{sat}")
                    };
                    out.push(format!("cvt.{m}.{modifiers}{}.{}", pair.dtype, pair.atype));
                }
            }
        }
    }
    // `cvt.rna{.satfinite}.tf32.f32`: ties away from zero.
    out.push("cvt.rna.tf32.f32".into());
    out.push("cvt.rna.satfinite.tf32.f32".into());
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
    out
}
