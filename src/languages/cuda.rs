//! CUDA (`cuda:`): the conversion intrinsics CUDA 13's headers declare, each read as the
//! request of what it computes.
//!
//! - `crt/device_functions.h`, `cuda_fp16.h` and `cuda_bf16.h` (`__float2int_rn`,
//!   `__half2short_rz`, `__float2bfloat16_ru`, `__floats2bfloat162_rn`): by the `cvt` nvcc
//!   emits for each, under PTX's rules ([`super::ptx::parse_cvt`]). Written as the name, with
//!   `()` or one argument if you like (`__float2int_rn(x)`). The pair functions are width-2
//!   conversions whose element 0 is the low half ("Low 16 bits of the return value correspond
//!   to the input a", `cuda_bf16.h`, `__floats2bfloat162_rn`).
//! - `cuda_fp8.h`, `cuda_fp6.h` and `cuda_fp4.h` (`__nv_cvt_float_to_fp8(x, __NV_SATFINITE,
//!   __NV_E4M3)`): written as calls, the value a C identifier and the other arguments the
//!   headers' enumerators; read by what the headers' own code computes (CUDA 13.0's
//!   `cuda_fp8.hpp`, `cuda_fp6.hpp`, `cuda_fp4.hpp`; `docs/ptx.md`, "CUDA's narrow formats").
//!   The x2 forms are width-2 conversions, element 0 (`.x`) in the low byte; FP4's
//!   (`__nv_cvt_float2_to_fp4x2`, `__nv_cvt_fp4x2_to_halfraw2`) hold both codes in one byte,
//!   `.x` in the low nibble (chains with `pack_fp4`/`unpack_fp4`).
//!
//! - `crt/mma.h`: `nvcuda::wmma::__float_to_tf32`, the `cvt.rna.tf32.f32` it is written as.
//!
//! CUDA's names that are not read are refused with the reason:
//! `__nv_cvt_*_to_fp8(x, __NV_NOSAT, __NV_E4M3)` from float, half and bfloat16 (its NaN depends
//! on where it came from), the broadcasts and half extractions (`__float2half2_rn`,
//! `__low2float`: data movement around a conversion), and 13.4's additions.

use super::ptx::parse_cvt;
use super::syntax;
use super::Language;
use crate::chain::{Chain, Fp4Packing, Step};
use crate::request::{Conversion, Request, RequestError};
use crate::rules::{FloatResult, Rules};
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};

/// What one CUDA spelling computes.
enum Intrinsic {
    /// The `cvt` nvcc emits, at width 1 or (a pair of a scalar `cvt`) 2.
    Cvt { cvt: String, width: Width },
    /// A `cuda_fp8.h`/`cuda_fp6.h`/`cuda_fp4.h` function, as its request (a conversion; for
    /// FP4's pairs, a chain that packs or unpacks the byte).
    Narrow(Request),
}

/// The integer types of the intrinsics' names, with their PTX types.
const INTEGERS: [(&str, &str); 6] = [
    ("int", "s32"),
    ("uint", "u32"),
    ("short", "s16"),
    ("ushort", "u16"),
    ("ll", "s64"),
    ("ull", "u64"),
];

/// The rounding suffixes and the `cvt` modifiers they compile to.
const SUFFIXES: [(&str, &str); 4] = [("rn", "rn"), ("rz", "rz"), ("ru", "rp"), ("rd", "rm")];

/// Every spelling with what it computes, built once (a parse looks a name up in it).
fn intrinsics() -> &'static [(String, Intrinsic)] {
    static ALL: std::sync::OnceLock<Vec<(String, Intrinsic)>> = std::sync::OnceLock::new();
    ALL.get_or_init(every_intrinsic)
}

fn every_intrinsic() -> Vec<(String, Intrinsic)> {
    let mut out = Vec::new();
    let mut cvt = |name: String, cvt: String, width: Width| {
        out.push((name, Intrinsic::Cvt { cvt, width }));
    };
    // `crt/device_functions.h`: float and double <-> int, uint, ll, ull. No
    // `__int2double_rz`/`_ru`/`_rd`: an int is exact in a double, only `_rn` exists.
    for (f, ft) in [("float", "f32"), ("double", "f64")] {
        for (i, it) in [INTEGERS[0], INTEGERS[1], INTEGERS[4], INTEGERS[5]] {
            for (s, p) in SUFFIXES {
                cvt(
                    format!("__{f}2{i}_{s}"),
                    format!("cvt.{p}i.{it}.{ft}"),
                    Width::W1,
                );
                if f == "double" && matches!(i, "int" | "uint") && s != "rn" {
                    continue;
                }
                cvt(
                    format!("__{i}2{f}_{s}"),
                    format!("cvt.{p}.{ft}.{it}"),
                    Width::W1,
                );
            }
        }
    }
    for (s, p) in SUFFIXES {
        cvt(
            format!("__double2float_{s}"),
            format!("cvt.{p}.f32.f64"),
            Width::W1,
        );
    }
    // `cuda_fp16.h` and `cuda_bf16.h`: the same set for `__half` and `__nv_bfloat16` (71 names
    // each in CUDA 12.8 to 13.5).
    for (h, ht, pair) in [("half", "f16", "half2"), ("bfloat16", "bf16", "bfloat162")] {
        cvt(
            format!("__float2{h}"),
            format!("cvt.rn.{ht}.f32"),
            Width::W1,
        );
        cvt(
            format!("__double2{h}"),
            format!("cvt.rn.{ht}.f64"),
            Width::W1,
        );
        cvt(format!("__{h}2float"), format!("cvt.f32.{ht}"), Width::W1);
        for (s, p) in SUFFIXES {
            cvt(
                format!("__float2{h}_{s}"),
                format!("cvt.{p}.{ht}.f32"),
                Width::W1,
            );
            for (i, it) in INTEGERS {
                cvt(
                    format!("__{h}2{i}_{s}"),
                    format!("cvt.{p}i.{it}.{ht}"),
                    Width::W1,
                );
                cvt(
                    format!("__{i}2{h}_{s}"),
                    format!("cvt.{p}.{ht}.{it}"),
                    Width::W1,
                );
            }
        }
        // char and uchar: `_rz` only, and only out of the 16-bit float.
        cvt(
            format!("__{h}2char_rz"),
            format!("cvt.rzi.s8.{ht}"),
            Width::W1,
        );
        cvt(
            format!("__{h}2uchar_rz"),
            format!("cvt.rzi.u8.{ht}"),
            Width::W1,
        );
        // The pairs: `_rn` only; element 0 is `a` (`.x`), the low half.
        let packed = format!("cvt.rn.{ht}x2.f32");
        cvt(format!("__floats2{pair}_rn"), packed.clone(), Width::W2);
        cvt(format!("__float22{pair}_rn"), packed, Width::W2);
        cvt(
            format!("__{pair}2float2"),
            format!("cvt.f32.{ht}"),
            Width::W2,
        );
    }
    // `crt/mma.h` (CUDA 13.0, sm_80 and later): `nvcuda::wmma::__float_to_tf32(float)` is an
    // `asm` of `cvt.rna.tf32.f32`; its float result's bits are the tf32 word.
    cvt(
        "nvcuda::wmma::__float_to_tf32".into(),
        "cvt.rna.tf32.f32".into(),
        Width::W1,
    );
    out.extend(narrow_functions());
    out
}

/// The sources of the narrow encoders: the name's word for one value and for a pair.
const ENCODER_SOURCES: [(&str, &str, ScalarType); 4] = [
    ("float", "float2", ScalarType::Float),
    ("double", "double2", ScalarType::Double),
    ("halfraw", "halfraw2", ScalarType::Half),
    ("bfloat16raw", "bfloat16raw2", ScalarType::BFloat),
];

const FP8_KINDS: [(&str, ScalarType); 2] = [
    ("__NV_E4M3", ScalarType::Fp8E4M3),
    ("__NV_E5M2", ScalarType::Fp8E5M2),
];
const FP6_KINDS: [(&str, ScalarType); 2] = [
    ("__NV_E2M3", ScalarType::Fp6E2M3),
    ("__NV_E3M2", ScalarType::Fp6E3M2),
];
const FP4_KINDS: [(&str, ScalarType); 1] = [("__NV_E2M1", ScalarType::Fp4E2M1)];
const SATURATIONS: [(&str, bool); 2] = [("__NV_NOSAT", false), ("__NV_SATFINITE", true)];
/// `cudaRoundMode`. CUDA 13.5 honours all four for FP6 and FP4; 13.0 to 13.4 assert
/// `cudaRoundNearest` or `cudaRoundZero`.
const ROUND_MODES: [(&str, Rounding); 4] = [
    ("cudaRoundNearest", Rounding::Rte),
    ("cudaRoundZero", Rounding::Rtz),
    ("cudaRoundPosInf", Rounding::Rtp),
    ("cudaRoundMinInf", Rounding::Rtn),
];

/// The `cuda_fp8.h`, `cuda_fp6.h` and `cuda_fp4.h` functions clconv reads, spelled with `x`
/// for the value.
fn narrow_functions() -> Vec<(String, Intrinsic)> {
    let mut out = Vec::new();
    let mut push = |name: String, src: ScalarType, dst: ScalarType, width, sat, mode, nan| {
        let (s, d) = (VectorType::new(src, width), VectorType::new(dst, width));
        let conversion = Conversion::new(s, d, sat, mode, Extensions::with_fp16())
            .expect("the narrow formats convert with float, double, half and bfloat16")
            .with_rules(Rules {
                float_result: nan,
                ..Rules::OPENCL
            });
        // FP4's pair is one byte, `.x` in its low nibble.
        let request = if dst == ScalarType::Fp4E2M1 && width == Width::W2 {
            let pack = Fp4Packing::pack(d).expect("fp4e2m1x2 packs");
            Chain::new(&[Step::Convert(conversion), Step::Fp4(pack)]).map(Request::Chain)
        } else if src == ScalarType::Fp4E2M1 && width == Width::W2 {
            let bytes = VectorType::scalar(ScalarType::UChar);
            let unpack = Fp4Packing::unpack(bytes).expect("uchar unpacks");
            Chain::new(&[Step::Fp4(unpack), Step::Convert(conversion)]).map(Request::Chain)
        } else {
            Ok(Request::Convert(conversion))
        };
        let request = request.expect("a conversion and FP4's packing chain");
        out.push((name, Intrinsic::Narrow(request)));
    };
    for (one, two, src) in ENCODER_SOURCES {
        for (name, width) in [(one, Width::W1), (two, Width::W2)] {
            let x2 = if width == Width::W2 { "x2" } else { "" };
            // fp8: nearest-even always; "NaN input values" of float (and of half and bfloat16,
            // widened to float first) become the canonical NaN 0x7f before rounding; a double
            // NaN keeps its sign and top payload bits.
            for (sat_name, sat) in SATURATIONS {
                for (kind, dst) in FP8_KINDS {
                    if !sat && dst == ScalarType::Fp8E4M3 && src != ScalarType::Double {
                        continue; // refused in `why_not`
                    }
                    let nan = if src == ScalarType::Double {
                        FloatResult::Rounded
                    } else {
                        FloatResult::CanonicalNan
                    };
                    push(
                        format!("__nv_cvt_{name}_to_fp8{x2}(x,{sat_name},{kind})"),
                        src,
                        dst,
                        width,
                        sat,
                        Some(Rounding::Rte),
                        nan,
                    );
                }
            }
            // fp6 and fp4: "Large out-of-range values saturate to MAXNORM of the same sign.
            // NaN input values result in positive MAXNORM": clconv's rule for these formats.
            for (kind, dst) in FP6_KINDS.iter().chain(FP4_KINDS.iter()) {
                let bits = if *dst == ScalarType::Fp4E2M1 {
                    "fp4"
                } else {
                    "fp6"
                };
                for (mode_name, mode) in ROUND_MODES {
                    push(
                        format!("__nv_cvt_{name}_to_{bits}{x2}(x,{kind},{mode_name})"),
                        src,
                        *dst,
                        width,
                        true,
                        Some(mode),
                        FloatResult::Rounded,
                    );
                }
            }
        }
    }
    // E8M0: "Input number's absolute value is rounded to the closest power of two in the
    // direction specified via rounding parameter. Rounded results that are smaller than the
    // smallest representable target format number 2^-127 are then clipped to 2^-127. Results
    // that are larger than the largest representable target format number 2^127 are either
    // clipped to 2^127 if saturate equals to __NV_SATFINITE, or convert to NaN otherwise. NaN
    // inputs convert into NaN output" (clconv's `_abs`). CUDA 12.8 to 13.4 accept
    // `cudaRoundZero` and `cudaRoundPosInf`; 13.5 also `cudaRoundNearest` ("rounds an exact
    // midpoint up") and `cudaRoundMinInf` ("equivalent to cudaRoundZero": the sign is gone).
    for (one, two, src) in [
        ("float", "float2", ScalarType::Float),
        ("double", "double2", ScalarType::Double),
        ("bfloat16raw", "bfloat162raw", ScalarType::BFloat),
    ] {
        for (name, width, x2) in [(one, Width::W1, ""), (two, Width::W2, "x2")] {
            for (sat_name, sat) in SATURATIONS {
                for (mode_name, mode) in ROUND_MODES {
                    push(
                        format!("__nv_cvt_{name}_to_e8m0{x2}(x,{sat_name},{mode_name})"),
                        src,
                        ScalarType::Fp8E8M0,
                        width,
                        sat,
                        Some(mode),
                        FloatResult::Magnitude,
                    );
                }
            }
        }
    }
    // "0xFF -> 0x7FFF" (the header's code), every other code exact (0x00, 2^-127, a bfloat16
    // subnormal).
    push(
        "__nv_cvt_e8m0_to_bf16raw(x)".into(),
        ScalarType::Fp8E8M0,
        ScalarType::BFloat,
        Width::W1,
        false,
        None,
        FloatResult::CanonicalNan,
    );
    push(
        "__nv_cvt_e8m0x2_to_bf162raw(x)".into(),
        ScalarType::Fp8E8M0,
        ScalarType::BFloat,
        Width::W2,
        false,
        None,
        FloatResult::CanonicalNan,
    );
    // The decoders, into half: exact; an fp8 NaN gives 0x7fff ("e4m3 NaN -> fp16 0x7FFF",
    // the sign dropped).
    for (width, x2, half) in [(Width::W1, "", "halfraw"), (Width::W2, "x2", "halfraw2")] {
        for (kind, src) in FP8_KINDS {
            push(
                format!("__nv_cvt_fp8{x2}_to_{half}(x,{kind})"),
                src,
                ScalarType::Half,
                width,
                false,
                None,
                FloatResult::CanonicalNan,
            );
        }
        for (kind, src) in FP6_KINDS {
            push(
                format!("__nv_cvt_fp6{x2}_to_{half}(x,{kind})"),
                src,
                ScalarType::Half,
                width,
                false,
                None,
                FloatResult::Rounded,
            );
        }
        push(
            format!("__nv_cvt_fp4{x2}_to_{half}(x,__NV_E2M1)"),
            ScalarType::Fp4E2M1,
            ScalarType::Half,
            width,
            false,
            None,
            FloatResult::Rounded,
        );
    }
    out
}

/// Every spelling `clconv list cuda:` prints (the functions with `x` for their value).
pub(super) fn spellings() -> Vec<String> {
    intrinsics().iter().map(|(name, _)| name.clone()).collect()
}

/// Parses a CUDA intrinsic (`__float2int_rn`, `__float2int_rn(x)`) or a narrow-format call
/// (`__nv_cvt_float_to_fp8(x,__NV_SATFINITE,__NV_E4M3)`, whitespace removed) into its request.
pub(super) fn parse(text: &str) -> Result<Request, RequestError> {
    let bad = |why: String| syntax::error(Language::Cuda, text, why);
    let (name, args) = match text.split_once('(') {
        Some((name, rest)) => {
            let Some(args) = rest.strip_suffix(')') else {
                return Err(bad("a call ends with `)`".into()));
            };
            let args: Vec<&str> = if args.is_empty() {
                Vec::new()
            } else {
                args.split(',').collect()
            };
            (name, args)
        }
        None => (text, Vec::new()),
    };
    if let Some(value) = args.first() {
        if !is_identifier(value) {
            return Err(bad(format!(
                "the value argument is a C identifier (e.g. `x`), not `{value}`"
            )));
        }
    }
    let narrow = name.starts_with("__nv_cvt_");
    // The key: the narrow functions with their enumerators, the others by name alone.
    let key = if narrow {
        let mut key = format!("{name}(x");
        for a in args.iter().skip(1) {
            key.push(',');
            key.push_str(a);
        }
        key.push(')');
        key
    } else {
        if args.len() > 1 {
            return Err(bad(format!("`{name}` takes one argument")));
        }
        name.to_string()
    };
    if let Some((_, intrinsic)) = intrinsics().iter().find(|(n, _)| *n == key) {
        return match intrinsic {
            Intrinsic::Cvt { cvt, width } => match parse_cvt(cvt)? {
                Request::Convert(c) if *width == Width::W2 && c.src().width == Width::W1 => {
                    Ok(Request::Convert(c.with_width(Width::W2)))
                }
                request => Ok(request),
            },
            Intrinsic::Narrow(r) => Ok(*r),
        };
    }
    Err(bad(why_not(name, &args)))
}

/// True for a C identifier: a letter or `_`, then letters, digits and `_`.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Why `name(args)` is not read: the rule it breaks, or what clconv does not read yet.
fn why_not(name: &str, args: &[&str]) -> String {
    let has = |prefix: &str| name.starts_with(prefix);
    let known: Vec<String> = intrinsics()
        .iter()
        .filter_map(|(n, _)| n.strip_prefix(&format!("{name}(")).map(|a| a.to_string()))
        .collect();
    if let Some(int) = ["__int2double_", "__uint2double_"]
        .into_iter()
        .find(|p| has(p))
    {
        return format!(
            "CUDA declares only `{int}rn`: every 32-bit integer is a double, so no rounding \
             direction can differ"
        );
    }
    if name == "__float_to_tf32" || name == "wmma::__float_to_tf32" {
        return "CUDA declares it in namespace `nvcuda::wmma` (`crt/mma.h`): write \
                `nvcuda::wmma::__float_to_tf32`"
            .into();
    }
    if has("__double2half_") || has("__double2bfloat16_") {
        return "CUDA declares `__double2half` and `__double2bfloat16` (round to nearest-even), \
                with no rounding suffix"
            .into();
    }
    if has("__nv_cvt_")
        && (name.ends_with("_to_fp8") || name.ends_with("_to_fp8x2"))
        && args.get(1) == Some(&"__NV_NOSAT")
        && args.get(2) == Some(&"__NV_E4M3")
    {
        return "`__NV_NOSAT` into E4M3 from float, half or bfloat16 gives 0x7f for a NaN input \
                but keeps the sign of an overflow's NaN (0xff for -500): a NaN rule clconv does \
                not have yet (from double it is clconv's, and read)"
            .into();
    }
    if !known.is_empty() {
        return format!(
            "`{name}` is called as one of: {}",
            known
                .iter()
                .take(8)
                .map(|a| format!("{name}({a}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if has("__nv_cvt_") {
        return "it is not one of the `cuda_fp8.h`/`cuda_fp6.h`/`cuda_fp4.h` functions clconv \
                reads: e.g. `cuda:__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)`, \
                `cuda:__nv_cvt_fp6_to_halfraw(x, __NV_E2M3)`"
            .into();
    }
    if has("__float2half2_") || has("__float2bfloat162_") || has("__low2") || has("__high2") {
        return "a broadcast or a half extraction moves data around a conversion: write the \
                conversion (`__float2half`, `__half2float`, ...)"
            .into();
    }
    "it is not one of the conversion intrinsics: e.g. `cuda:__float2int_rn`, \
     `cuda:__double2float_ru`, `cuda:__float2bfloat16_rz`, `cuda:__half2float`"
        .into()
}
