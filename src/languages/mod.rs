//! The spelling front ends of languages other than OpenCL C: `wgsl:i32(f32)`,
//! `hlsl:int4(float4)`, `glsl:ivec4(vec4)`, `msl:static_cast<int4>(float4)`. Each turns its
//! language's spelling and rules into the one [`Request`] every other layer takes, as naga's
//! front ends share one IR: a spelling that means what an OpenCL request means *is* that
//! request (Direct3D's `ftoi` is `convert_int_sat(float)`: same kernel, same cache entry, same
//! proof), and only a genuinely different rule (WGSL's clamp) makes a request of its own,
//! carried as data ([`crate::rules`]).
//!
//! Each language's page in `docs/` quotes its specification for every rule and names the
//! results clconv defines where the specification leaves them open.
//!
//! ```
//! use clconv::{Extensions, Request};
//! let wgsl = Request::parse("wgsl:vec4<i32>(vec4<f32>)", Extensions::default()).unwrap();
//! assert_eq!(wgsl.to_string(), "convert_int4_satsrc(float4)");
//! let hlsl = Request::parse("hlsl:int(float)", Extensions::default()).unwrap();
//! assert_eq!(hlsl.to_string(), "convert_int_sat(float)");
//! ```

mod cuda;
mod glsl;
mod hlsl;
mod msl;
mod ptx;
mod rust;
mod syntax;
mod wasm;
mod wgsl;

use crate::request::{Conversion, Reinterpretation, Request, RequestError};
use crate::rules::Rules;
use crate::types::{Extensions, Rounding, ScalarType, VectorType};
use std::fmt;

/// A language whose conversions clconv reads in its own spelling, written `LANG:expression`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    /// WGSL (WebGPU): value constructors `i32(f32)`, `vec4<u32>(vec4<f16>)`, `bitcast<T>(e)`.
    Wgsl,
    /// HLSL (Direct3D): constructors and casts `int4(float4)`, `(int)float`, `asint`, ...
    Hlsl,
    /// GLSL (OpenGL, Vulkan): constructors `ivec4(vec4)`, `floatBitsToInt`, ...
    Glsl,
    /// Metal: `int4(float4)`, `static_cast<int4>(float4)`, `as_type<int4>(float4)`.
    Msl,
    /// Rust: the casts `f32 as i8`, `u64 as f32`, `f16 as u32`.
    Rust,
    /// WebAssembly: the scalar conversion instructions, `i32.trunc_sat_f32_u`, ...
    Wasm,
    /// PTX: `cvt` with its modifiers and types, `cvt.rni.sat.s8.f32`.
    Ptx,
    /// CUDA: the conversion intrinsics, `__float2int_rn`, as the `cvt` nvcc emits.
    Cuda,
}

impl Language {
    /// Every language, in the order `clconv list` shows them.
    pub const ALL: [Language; 8] = [
        Language::Wgsl,
        Language::Hlsl,
        Language::Glsl,
        Language::Msl,
        Language::Rust,
        Language::Wasm,
        Language::Ptx,
        Language::Cuda,
    ];

    /// The prefix before the `:` (`wgsl`).
    pub const fn prefix(self) -> &'static str {
        match self {
            Language::Wgsl => "wgsl",
            Language::Hlsl => "hlsl",
            Language::Glsl => "glsl",
            Language::Msl => "msl",
            Language::Rust => "rust",
            Language::Wasm => "wasm",
            Language::Ptx => "ptx",
            Language::Cuda => "cuda",
        }
    }

    /// The language whose prefix is `prefix` (lowercase).
    pub fn from_prefix(prefix: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.prefix() == prefix)
    }

    /// Parses `expression` (what follows `LANG:`) into the request it means.
    ///
    /// ```
    /// use clconv::languages::Language;
    /// let r = Language::Glsl.parse("uvec2(vec2)").unwrap();
    /// assert_eq!(r.to_string(), "convert_uint2_sat(float2)");
    /// assert!(Language::Glsl.parse("uvec2(vec3)").is_err());
    /// ```
    pub fn parse(self, expression: &str) -> Result<Request, RequestError> {
        let compact = syntax::compact(self, expression)?;
        let parsed = match self {
            // Rust's casts are words: `f32 as i8` keeps its spaces.
            Language::Rust => rust::parse(expression),
            Language::Wasm => wasm::parse(&compact),
            Language::Ptx => ptx::parse(&compact),
            Language::Cuda => cuda::parse(&compact),
            Language::Wgsl => wgsl::parse(&compact),
            Language::Hlsl => hlsl::parse(&compact),
            Language::Glsl => glsl::parse(&compact),
            Language::Msl => msl::parse(&compact),
        };
        // The model's refusals a language's own words can reach, said in that language's
        // spelling (the model's message names the OpenCL request).
        parsed.map_err(|e| match e {
            RequestError::BoolBits { .. } => syntax::error(self, expression, e.to_string()),
            e => e,
        })
    }

    /// The conversion this language's value constructor `to(e)` makes from an `e` of element
    /// type `from`, typed, for a front end that holds values ([`crate::lower::Lowering::convert`]):
    /// the language's rules and rounding, without a name.
    ///
    /// ```
    /// use clconv::languages::Language;
    /// use clconv::{ScalarType::{Float, Int}, Width};
    /// let i32_of_f32 = Language::Wgsl.constructor(Float, Int).unwrap();
    /// assert_eq!(i32_of_f32.at_width(Width::W4).unwrap().to_string(), "convert_int4_satsrc(float4)");
    /// ```
    pub fn constructor(
        self,
        from: ScalarType,
        to: ScalarType,
    ) -> Result<crate::element_conversion::ElementConversion, RequestError> {
        let rules = match self {
            Language::Rust => rust::RULES,
            // WebAssembly's, PTX's and CUDA's conversions are instructions with their own
            // operand types; as constructors, `trunc_sat` and `convert` are Rust's `as`, and
            // PTX's float -> integer NaN rule is its own.
            Language::Wasm => rust::RULES,
            Language::Ptx | Language::Cuda => {
                let mut c = construct(
                    self,
                    VectorType::scalar(from),
                    VectorType::scalar(to),
                    rust::RULES,
                )?;
                if let Request::Convert(conv) = &mut c {
                    if from.is_float() && to.is_integer() {
                        *conv = conv.with_rules(crate::rules::Rules::ptx(from, to));
                    }
                }
                return match c {
                    Request::Convert(c) => Ok(crate::element_conversion::ElementConversion::of(&c)),
                    Request::Reinterpret(_) | Request::Chain(_) => {
                        unreachable!("a constructor converts")
                    }
                };
            }
            Language::Wgsl => wgsl::RULES,
            Language::Hlsl => hlsl::RULES,
            Language::Glsl => glsl::RULES,
            Language::Msl => msl::RULES,
        };
        match construct(
            self,
            VectorType::scalar(from),
            VectorType::scalar(to),
            rules,
        )? {
            Request::Convert(c) => Ok(crate::element_conversion::ElementConversion::of(&c)),
            Request::Reinterpret(_) | Request::Chain(_) => unreachable!("a constructor converts"),
        }
    }

    /// Every spelling the language accepts, one per line of `clconv list LANG:`, each with the
    /// request it means: constructors between every pair of its convertible types at every
    /// width, then its reinterpretations.
    ///
    /// ```
    /// use clconv::languages::Language;
    /// let all = Language::Wgsl.spellings();
    /// assert!(all.iter().any(|(s, r)| s == "wgsl:i32(f32)" && r.to_string() == "convert_int_satsrc(float)"));
    /// ```
    pub fn spellings(self) -> Vec<(String, Request)> {
        let written = match self {
            Language::Wgsl => wgsl::spellings(),
            Language::Hlsl => hlsl::spellings(),
            Language::Glsl => glsl::spellings(),
            Language::Msl => msl::spellings(),
            Language::Rust => rust::spellings(),
            Language::Wasm => wasm::spellings(),
            Language::Ptx => ptx::spellings(),
            Language::Cuda => cuda::spellings(),
        };
        written
            .into_iter()
            .filter_map(|s| {
                let r = self.parse(&s).ok()?;
                Some((format!("{}:{s}", self.prefix()), r))
            })
            .collect()
    }
}

/// Every chain the languages spell ([`crate::chain`]: WebAssembly's lane moves, GLSL's
/// `packHalf2x16`, HLSL's `f32tof16`, ...), each once, in a fixed order: what the matrix checks
/// beside [`Request::all`].
///
/// ```
/// let chains = clconv::languages::chains();
/// assert!(chains.iter().any(|r| r.to_string() == "convert_double2_rte(uint4.lo)"));
/// assert!(chains.iter().all(|r| matches!(r, clconv::Request::Chain(_))));
/// ```
pub fn chains() -> Vec<Request> {
    let mut out: Vec<Request> = Language::ALL
        .into_iter()
        .flat_map(Language::spellings)
        .map(|(_, r)| r)
        .filter(|r| matches!(r, Request::Chain(_)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Every request the languages spell that [`Request::all`] does not hold, each once, in a
/// fixed order: the chains ([`chains`]) and the conversions under PTX's float rules
/// (`cvt.rn.sat.f16.f32`: [`crate::rules::FloatResult`], `.ftz`). What the matrix checks
/// beside [`Request::all`].
///
/// ```
/// let beyond = clconv::languages::beyond_the_matrix();
/// assert!(beyond.iter().any(|r| r.to_string() == "convert_half_clamp01_rte(float)"));
/// assert!(beyond.iter().any(|r| r.to_string() == "convert_double2_rte(uint4.lo)"));
/// ```
pub fn beyond_the_matrix() -> Vec<Request> {
    let mut out: Vec<Request> = Language::ALL
        .into_iter()
        .flat_map(Language::spellings)
        .map(|(_, r)| r)
        .filter(|r| match r {
            Request::Chain(_) => true,
            Request::Convert(c) => c.rules().changes_floats(),
            Request::Reinterpret(_) => false,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::Wgsl => "WGSL",
            Language::Hlsl => "HLSL",
            Language::Glsl => "GLSL",
            Language::Msl => "Metal",
            Language::Rust => "Rust",
            Language::Wasm => "WebAssembly",
            Language::Ptx => "PTX",
            Language::Cuda => "CUDA",
        })
    }
}

/// `input` split as `LANG:expression` when it starts with a language prefix and a colon.
///
/// ```
/// use clconv::languages::split;
/// assert_eq!(split("wgsl:i32(f32)"), Some(("wgsl", "i32(f32)")));
/// assert_eq!(split("convert_int(float)"), None);
/// ```
pub fn split(input: &str) -> Option<(&str, &str)> {
    let (prefix, rest) = input.split_once(':')?;
    let prefix = prefix.trim();
    (!prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some((prefix, rest))
}

/// Parses `LANG:expression`.
pub(crate) fn parse(prefix: &str, expression: &str) -> Result<Request, RequestError> {
    let language = Language::from_prefix(&prefix.to_ascii_lowercase()).ok_or_else(|| {
        RequestError::UnknownLanguage {
            prefix: syntax::echo(prefix),
        }
    })?;
    language.parse(expression)
}

/// What a language's value constructor `T(e)` does in each conversion class: the choices its
/// front end makes once, so that the classes are decided in one place ([`construct`]).
#[derive(Clone, Copy, Debug)]
struct ConstructorRules {
    /// float -> integer: always saturating, toward zero, with these rules at the edges.
    float_to_int: Rules,
    /// The rounding of a conversion from `src` into the floating type `dst`.
    to_float: fn(ScalarType, ScalarType) -> Rounding,
}

fn nearest_even(_: ScalarType, _: ScalarType) -> Rounding {
    Rounding::Rte
}

/// The request `T(e)` means in a language with `rules`, for an `e` of type `src`.
fn construct(
    language: Language,
    src: VectorType,
    dst: VectorType,
    rules: ConstructorRules,
) -> Result<Request, RequestError> {
    let ext = Extensions::with_fp16();
    if src.width != dst.width {
        return Err(syntax::error(
            language,
            &format!("{dst}({src})"),
            format!(
                "a value constructor keeps the component count, but the operand has {} and the \
                 result {}: convert to a type of {} components",
                src.lanes(),
                dst.lanes(),
                src.lanes()
            ),
        ));
    }
    // To or from bool nothing rounds or clamps: every language's bool conversion is the one
    // exact conversion (`crate::lower::boolean`).
    let conversion = if src.elem == dst.elem || src.elem.is_bool() || dst.elem.is_bool() {
        Conversion::new(src, dst, false, None, ext)?
    } else {
        match (src.elem.is_float(), dst.elem.is_float()) {
            // Integer -> integer keeps the low bits: WGSL's and GLSL's "same bit pattern",
            // HLSL's and Metal's C rule.
            (false, false) => Conversion::new(src, dst, false, None, ext)?,
            (true, false) => {
                Conversion::new(src, dst, true, None, ext)?.with_rules(rules.float_to_int)
            }
            (_, true) => {
                let rounding = (rules.to_float)(src.elem, dst.elem);
                Conversion::new(src, dst, false, Some(rounding), ext)?
            }
        }
    };
    Ok(Request::Convert(conversion))
}

/// The request a reinterpretation `f<T>(e)` means: the same bits.
fn reinterpret(src: VectorType, dst: VectorType) -> Result<Request, RequestError> {
    Reinterpretation::new(src, dst, Extensions::with_fp16()).map(Request::Reinterpret)
}

/// The steps of a [`Chain`] a front end builds, each validated, with half allowed (the
/// languages' own types carry no extension switch).
mod steps {
    use crate::chain::{Chain, LaneMove, Step};
    use crate::request::{Conversion, Reinterpretation, Request, RequestError};
    use crate::types::{Extensions, Rounding, VectorType};

    /// `convert_<dst>[_sat][_<rounding>](src)`.
    pub(super) fn convert(
        src: VectorType,
        dst: VectorType,
        saturate: bool,
        rounding: Option<Rounding>,
    ) -> Result<Step, RequestError> {
        Conversion::new(src, dst, saturate, rounding, Extensions::with_fp16()).map(Step::Convert)
    }

    /// `as_<dst>(src)`.
    pub(super) fn reinterpret(src: VectorType, dst: VectorType) -> Result<Step, RequestError> {
        Reinterpretation::new(src, dst, Extensions::with_fp16()).map(Step::Reinterpret)
    }

    /// Lanes `first..` of `src` into `dst`, zero past them.
    pub(super) fn lanes(
        src: VectorType,
        first: usize,
        dst: VectorType,
    ) -> Result<Step, RequestError> {
        LaneMove::new(src, first, dst).map(Step::Lanes)
    }

    /// The request of these steps.
    pub(super) fn chain(steps: &[Step]) -> Result<Request, RequestError> {
        Chain::new(steps).map(Request::Chain)
    }
}
