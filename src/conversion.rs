//! The elements of a request: one conversion, one reinterpretation, the builtin that names
//! one, and why a request is not legal ([`RequestError`]).
//!
//! They sit beneath [`crate::chain`] and [`crate::request`], which are made of them: the model's
//! bottom layer, importing only the types and the rules. Their fields are private so that an
//! invalid conversion (`_sat` on a float destination, mismatched element counts, `as_` between
//! different byte sizes, `half` without `cl_khr_fp16`) cannot exist. [`crate::request`]
//! re-exports them.

use crate::rules::Rules;
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};
use std::fmt;

/// Why a request (or a name) is not a legal OpenCL conversion or reinterpretation.
///
/// Every message says what is wrong and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// An MX block request (`convert_mxfp8e4m3(float)`): no conversion of one buffer to
    /// another, so it has its own kernels ([`crate::mx`]).
    #[error("`{name}` is an MX block request: its elements and scales are two buffers, so it is parsed by clconv::mx::MxRequest and compiled with Jit::compile_blocks")]
    MxBlock {
        /// The name.
        name: String,
    },
    /// The name was empty.
    #[error("empty function name: write e.g. `convert_int4_sat_rte(float4)` or `as_float4(int4)`")]
    Empty,
    /// The name is longer than any legal spelling could be.
    #[error("function name is {len} bytes long; no OpenCL conversion name is longer than {max}: check what was passed")]
    TooLong {
        /// Length of the input in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The name contains a character that no OpenCL conversion name has.
    #[error("unexpected character {ch:?} at byte {at} in {input:?}: names are ASCII letters, digits, `_` and an optional `(type)`")]
    BadCharacter {
        /// The input, shortened when long.
        input: String,
        /// The character.
        ch: char,
        /// Byte offset.
        at: usize,
    },
    /// The name is not `convert_...`, `as_...` or a mangled `_Z...` name.
    #[error("{input:?} is not a conversion: expected `convert_<type><n>[_sat][_rte|_rtz|_rtp|_rtn](<type><n>)`, `as_<type><n>(<type><n>)` or a mangled name such as `_Z20convert_int4_sat_rteDv4_f`")]
    NotAConversion {
        /// The input, shortened when long.
        input: String,
    },
    /// The text around the name is malformed: an unclosed `(`, text after the `)`, no name.
    #[error("cannot parse {input:?} at byte {at}: {why}")]
    Syntax {
        /// The input, shortened when long.
        input: String,
        /// Byte offset of the problem.
        at: usize,
        /// What is wrong and what to write instead.
        why: String,
    },
    /// An unknown type name (e.g. `bool`, `size_t`, `int5` split wrongly).
    #[error("unknown type `{name}` in {input:?}: the convertible types are char, uchar, short, ushort, int, uint, long, ulong, float, double, half (with cl_khr_fp16), bfloat, fp8e4m3, fp8e5m2 and bool{hint}")]
    UnknownType {
        /// The type as written.
        name: String,
        /// The input, shortened when long.
        input: String,
        /// An extra hint, starting with "; " when present.
        hint: String,
    },
    /// A vector width OpenCL does not have.
    #[error("`{ty}{lanes}` is not an OpenCL type: vector widths are 2, 3, 4, 8 and 16, and a scalar has no digit{}", width_fix(*ty, lanes))]
    BadWidth {
        /// The element type.
        ty: ScalarType,
        /// The width as written.
        lanes: String,
    },
    /// A suffix that is not `_sat`, `_rte`, `_rtz`, `_rtp` or `_rtn`, or one in the wrong place.
    #[error("bad modifier `{modifier}` in {input:?}: {why}")]
    BadModifier {
        /// The modifier as written.
        modifier: String,
        /// The input, shortened when long.
        input: String,
        /// What is wrong and what to write instead.
        why: String,
    },
    /// `_sat` on a floating-point destination.
    #[error("`_sat` applies only to integer destinations, and {dst} is floating-point: drop `_sat` (conversions to {dst} already give ±inf or ±MAX as the rounding mode says)")]
    SatOnFloat {
        /// The destination type.
        dst: VectorType,
    },
    /// `_sat` or a rounding mode on a conversion to or from bool, which is exact.
    #[error("convert_{dst}({src}) converts to or from bool, which is exact: write it without `_sat` and without a rounding mode")]
    BoolModifier {
        /// The source type.
        src: VectorType,
        /// The destination type.
        dst: VectorType,
    },
    /// `as_` to or from bool, which has no bits of its own.
    #[error("as_{dst}({src}): a bool has no bits to reinterpret (its byte is clconv's storage, not the language's): convert it, `convert_{dst}({src})`")]
    BoolBits {
        /// The source type.
        src: VectorType,
        /// The destination type.
        dst: VectorType,
    },
    /// A narrow format ([`ScalarType::NARROW`]) with a type it does not convert to or from.
    #[error("{narrow} converts to and from half, float, double and bfloat only, not {other}: convert through float, e.g. `convert_float({narrow})`")]
    NarrowPartner {
        /// The narrow format.
        narrow: ScalarType,
        /// The other type.
        other: ScalarType,
    },
    /// `as_` to or from a narrow format, whose elements clconv holds as codes in bytes.
    #[error("as_{dst}({src}): clconv does not reinterpret {narrow}, whose elements it holds as codes in the low bits of bytes: read the buffer as uchar")]
    NarrowBits {
        /// The source type.
        src: VectorType,
        /// The destination type.
        dst: VectorType,
        /// The narrow format.
        narrow: ScalarType,
    },
    /// A language's rule (`_satsrc`, `_ftz`, `_relu`, ...) on a conversion of a narrow format.
    #[error("a conversion to or from {narrow} takes `_sat` and a rounding mode only (and into fp8e8m0 from a float, `_abs`; out of fp8e8m0 into half, float and bfloat, `_nancanon`; into tf32 from float, `_rta` and `_relu`; into FP6 from float and out of FP6 into half, `_relu`), not `_satsrc`, `_satmsb`, `_trap`, `_ftz`, `_clamp01`, `_relu` elsewhere or another of these")]
    NarrowModifier {
        /// The narrow format.
        narrow: ScalarType,
    },
    /// `_rta` (PTX's `.rna`) on a conversion other than float -> tf32.
    #[error("convert_{dst}_rta({src}): `_rta` (round to nearest, ties away from zero) is PTX's `cvt.rna.tf32.f32`: clconv rounds that way into tf32 from float only; write `convert_{dst}_rte({src})`, or convert a float")]
    TiesAwaySource {
        /// The source type.
        src: VectorType,
        /// The destination type.
        dst: VectorType,
    },
    /// Source and destination element counts differ.
    #[error("convert_{dst} takes a source with {} components, but {src} has {}: use convert_{}({src}), or convert a {} source", dst.lanes(), src.lanes(), VectorType::new(dst.elem, src.width), VectorType::new(src.elem, dst.width))]
    ElementCountMismatch {
        /// The source type.
        src: VectorType,
        /// The destination type.
        dst: VectorType,
    },
    /// `as_` between types of different byte sizes.
    #[error("as_{dst}({src}) needs equal sizes, but {dst} is {} bytes and {src} is {} bytes (a 3-component vector counts as 4): pick a destination of {} bytes", dst.byte_size(), src.byte_size(), src.byte_size())]
    SizeMismatch {
        /// The source type.
        src: VectorType,
        /// The destination type.
        dst: VectorType,
    },
    /// `half` used without `cl_khr_fp16`.
    #[error("`{ty}` needs the cl_khr_fp16 extension: switch it on (Extensions::with_fp16(), or --fp16 on the command line)")]
    HalfWithoutFp16 {
        /// The type that mentions half.
        ty: VectorType,
    },
    /// A name without its source type where one is required.
    #[error("{input:?} names no source type: write it in parentheses, `{input}(<type><n>)`, with the same number of components for convert_ (the same byte size for as_), or parse the name alone with Builtin::parse and pass the source to Builtin::with_source")]
    MissingSource {
        /// The input.
        input: String,
    },
    /// `LANG:` names no language clconv reads.
    #[error("unknown language `{prefix}:`: the languages are wgsl:, hlsl:, glsl:, msl:, rust:, wasm:, ptx: and cuda: (OpenCL C names have no prefix)")]
    UnknownLanguage {
        /// The prefix as written.
        prefix: String,
    },
    /// A language's spelling that is not one of its conversions.
    #[error("{input:?} is not a {language} conversion clconv reads: {why}")]
    Language {
        /// The language.
        language: String,
        /// The expression, shortened when long.
        input: String,
        /// What is wrong and what to write.
        why: String,
    },
    /// A chain of steps that do not fit together ([`crate::chain::Chain`]).
    #[error("{chain} is not a chain clconv evaluates: {why}")]
    Chain {
        /// The chain as written (or as far as it was read).
        chain: String,
        /// What is wrong.
        why: String,
    },
    /// A malformed Itanium-mangled name.
    #[error("malformed mangled name {input:?}: {why}")]
    BadMangling {
        /// The input, shortened when long.
        input: String,
        /// What is wrong.
        why: String,
    },
}

/// A conversion `convert_<dst>[_sat][_<rounding>](<src>)`.
///
/// The rounding mode is kept as written: `None` means "the default", which is rtz for integer
/// destinations and the current static rounding mode for floating destinations
/// (see [`Conversion::effective_rounding`]).
///
/// ```
/// use clconv::{Conversion, Extensions, Rounding, ScalarType, VectorType, Width};
/// let f4 = VectorType::new(ScalarType::Float, Width::W4);
/// let u4 = VectorType::new(ScalarType::UChar, Width::W4);
/// let c = Conversion::new(f4, u4, true, Some(Rounding::Rte), Extensions::default()).unwrap();
/// assert_eq!(c.to_string(), "convert_uchar4_sat_rte(float4)");
/// assert!(Conversion::new(u4, f4, true, None, Extensions::default()).is_err()); // _sat on float
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Conversion {
    src: VectorType,
    dst: VectorType,
    saturate: bool,
    rounding: Option<Rounding>,
    rules: Rules,
}

impl Conversion {
    /// A validated conversion.
    pub fn new(
        src: VectorType,
        dst: VectorType,
        saturate: bool,
        rounding: Option<Rounding>,
        ext: Extensions,
    ) -> Result<Conversion, RequestError> {
        check_half(src, ext)?;
        check_half(dst, ext)?;
        // `_sat` into bfloat and the 8-bit floats saturates to the largest finite value (see
        // `ScalarType::is_beyond_opencl`); OpenCL's float destinations have no `_sat`.
        if saturate && dst.elem.is_float() && !dst.elem.is_beyond_opencl() {
            return Err(RequestError::SatOnFloat { dst });
        }
        if src.width != dst.width {
            return Err(RequestError::ElementCountMismatch { src, dst });
        }
        if (src.elem.is_bool() || dst.elem.is_bool()) && (saturate || rounding.is_some()) {
            return Err(RequestError::BoolModifier { src, dst });
        }
        let narrow = [(src.elem, dst.elem), (dst.elem, src.elem)]
            .into_iter()
            .find(|(n, o)| n.is_narrow() && n != o);
        if let Some((narrow, other)) = narrow {
            if !ScalarType::NARROW_PARTNERS.contains(&other) {
                return Err(RequestError::NarrowPartner { narrow, other });
            }
        }
        Ok(Conversion {
            src,
            dst,
            saturate,
            rounding,
            rules: Rules::OPENCL,
        })
    }

    /// The same conversion under `rules` (a language's, see [`crate::rules`]), normalised:
    /// rules that give OpenCL's results for this pair of types become OpenCL's, and rules that
    /// clamp out-of-range values ([`crate::rules::OutOfRange::NearestInSource`]) make the
    /// conversion saturating.
    ///
    /// ```
    /// use clconv::{rules::Rules, Conversion, Extensions, ScalarType, VectorType};
    /// let f = VectorType::scalar(ScalarType::Float);
    /// let i = VectorType::scalar(ScalarType::Int);
    /// let c = Conversion::new(f, i, false, None, Extensions::default()).unwrap().with_rules(Rules::WGSL);
    /// assert_eq!(c.to_string(), "convert_int_satsrc(float)");
    /// assert_eq!(c.rules(), Rules::WGSL);
    /// ```
    pub fn with_rules(mut self, rules: Rules) -> Conversion {
        self.rules = rules.normalised(self.src.elem, self.dst.elem);
        if self.rules.modifier().is_some() {
            self.saturate = true;
        }
        // Ties away from zero is a way of rounding to nearest: it makes the rounding `_rte`
        // where none was written, and is dropped under a directed one.
        if self.rules.ties_away {
            match self.rounding {
                None | Some(Rounding::Rte) => self.rounding = Some(Rounding::Rte),
                Some(_) => self.rules.ties_away = false,
            }
        }
        self
    }

    /// The same conversion rounding by `rounding` (as if written with its modifier).
    ///
    /// ```
    /// use clconv::{Conversion, Extensions, Rounding, ScalarType, VectorType};
    /// let c = Conversion::new(VectorType::scalar(ScalarType::Double), VectorType::scalar(ScalarType::Float), false, None, Extensions::default()).unwrap();
    /// assert_eq!(c.with_rounding(Rounding::Rtz).to_string(), "convert_float_rtz(double)");
    /// ```
    pub const fn with_rounding(mut self, rounding: Rounding) -> Conversion {
        self.rounding = Some(rounding);
        self
    }

    /// The rules this conversion follows at the edges ([`Rules::OPENCL`] unless a language's
    /// spelling or [`Conversion::with_rules`] chose others).
    pub const fn rules(&self) -> Rules {
        self.rules
    }

    /// The source type.
    pub const fn src(&self) -> VectorType {
        self.src
    }

    /// The destination type.
    pub const fn dst(&self) -> VectorType {
        self.dst
    }

    /// True when the name has `_sat`.
    pub const fn saturate(&self) -> bool {
        self.saturate
    }

    /// The rounding mode as written (`None`: no modifier).
    pub const fn rounding(&self) -> Option<Rounding> {
        self.rounding
    }

    /// The rounding mode that applies: as written if written; else rtz for an integer destination
    /// and `static_mode` (the `SELECT_ROUNDING_MODE`, normally rte) for a floating destination.
    pub fn effective_rounding(&self, static_mode: Rounding) -> Rounding {
        match self.rounding {
            Some(r) => r,
            None if self.dst.elem.is_float() => static_mode,
            None => Rounding::Rtz,
        }
    }

    /// The same conversion on one component (width 1).
    pub const fn per_element(&self) -> Conversion {
        self.with_width(Width::W1)
    }

    /// The same conversion on `width` components.
    pub const fn with_width(&self, width: Width) -> Conversion {
        Conversion {
            src: VectorType::new(self.src.elem, width),
            dst: VectorType::new(self.dst.elem, width),
            saturate: self.saturate,
            rounding: self.rounding,
            rules: self.rules,
        }
    }

    /// The builtin: `convert_uchar4_sat_rte`, without the argument.
    pub const fn builtin(&self) -> Builtin {
        Builtin::Convert {
            dst: self.dst,
            saturate: self.saturate,
            rounding: self.rounding,
            rules: self.rules,
        }
    }

    /// The builtin's name without the argument: `convert_uchar4_sat_rte`.
    pub fn function_name(&self) -> String {
        self.builtin().to_string()
    }

    /// Every conversion of the matrix: 5,400 without half, 6,270 with it.
    pub fn all(ext: Extensions) -> Vec<Conversion> {
        let types: Vec<ScalarType> = ScalarType::ALL
            .into_iter()
            .filter(|t| ext.fp16 || *t != ScalarType::Half)
            .collect();
        let mut out = Vec::new();
        for &dst in &types {
            for &src in &types {
                for width in Width::ALL {
                    let sats: &[bool] = if dst.is_float() && !dst.is_beyond_opencl() {
                        &[false]
                    } else {
                        &[false, true]
                    };
                    for &saturate in sats {
                        for rounding in [None]
                            .into_iter()
                            .chain(Rounding::ALL.into_iter().map(Some))
                        {
                            out.push(Conversion {
                                src: VectorType::new(src, width),
                                dst: VectorType::new(dst, width),
                                saturate,
                                rounding,
                                rules: Rules::OPENCL,
                            });
                        }
                    }
                }
            }
        }
        out
    }
}

impl Conversion {
    /// Every conversion a name spells, each once: the matrix ([`Conversion::all`]) under every
    /// rule set a modifier names, float -> integer (`_satsrc`, `_satmsb`, `_satsrcmsb`,
    /// `_trap`: [`Rules::FLOAT_TO_INTEGER`]) and into or from float (`_ftz`, `_clamp01`,
    /// `_relu`, `_nancanon`), where the name is legal; NVIDIA's E8M0 rules (`_abs` into
    /// fp8e8m0, `_nancanon` out of it), PTX's ties away from zero and `.relu` into tf32 (`_rta`,
    /// `_relu`), and `.relu` into FP6 from float and out of FP6 into half. A rule set that gives OpenCL's results for a pair of
    /// types is OpenCL's request ([`Conversion::with_rules`]), so it is not listed twice.
    /// `clconv list` prints these; the test suite compiles and runs every one.
    ///
    /// ```
    /// use clconv::{Conversion, Extensions};
    /// let all = Conversion::every_named(Extensions::with_fp16());
    /// assert!(all.iter().any(|c| c.to_string() == "convert_long_satmsb_rte(bfloat)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_int4_trap(float4)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_half_ftz_relu_rtz(float)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_fp8e8m0x2_sat_abs_rtp(bfloat2)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_tf32x4_sat_rta(float4)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_tf32_relu_rtz(float)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_fp6e3m2x2_sat_relu_rte(float2)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_half2_relu(fp6e2m3x2)"));
    /// assert!(!all.iter().any(|c| c.to_string() == "convert_int_satsrc(short)"));
    /// ```
    pub fn every_named(ext: Extensions) -> Vec<Conversion> {
        use crate::rules::FloatResult;
        let results = [
            FloatResult::Rounded,
            FloatResult::UnitInterval,
            FloatResult::Relu,
            FloatResult::CanonicalNan,
        ];
        let mut out = std::collections::BTreeSet::new();
        for c in Conversion::all(ext) {
            let dst_float = c.dst.elem.is_float();
            for integer in Rules::FLOAT_TO_INTEGER {
                // `_satsrc` and the others replace `_sat`, and only an integer takes them.
                if integer != Rules::OPENCL && (!c.saturate || dst_float) {
                    continue;
                }
                for flush_float_subnormals in [false, true] {
                    for float_result in results {
                        if float_result != FloatResult::Rounded && !dst_float {
                            continue;
                        }
                        out.insert(c.with_rules(Rules {
                            float_result,
                            flush_float_subnormals,
                            ..integer
                        }));
                    }
                }
            }
        }
        // NVIDIA's E8M0 rules: the E8M0 of a float's magnitude (`_abs`), and the canonical NaN
        // out of E8M0 (`_nancanon`).
        let plain = |t: ScalarType| t.is_float() && !t.is_narrow();
        for c in Conversion::with_narrow(ext) {
            let float_result = match (c.src.elem, c.dst.elem) {
                (s, ScalarType::Fp8E8M0) if plain(s) => FloatResult::Magnitude,
                (ScalarType::Fp8E8M0, d) if plain(d) => FloatResult::CanonicalNan,
                _ => continue,
            };
            out.insert(c.with_rules(Rules {
                float_result,
                ..Rules::OPENCL
            }));
        }
        // PTX's rules on the narrow formats: `.relu` (`_relu`) into tf32, FP6 and FP4 from
        // float and out of FP6 and FP4 into half; into tf32 also ties away from zero (`_rta`: without a rounding
        // modifier or with `_rte`, the one it replaces), with and without `.relu`.
        for c in Conversion::with_narrow(ext) {
            let (src, dst) = (c.src.elem, c.dst.elem);
            if !crate::rules::relu_on_narrow(src, dst) {
                continue;
            }
            let rta = dst == ScalarType::Tf32 && matches!(c.rounding, None | Some(Rounding::Rte));
            for ties_away in [false, true] {
                for float_result in [FloatResult::Rounded, FloatResult::Relu] {
                    if ties_away && !rta {
                        continue;
                    }
                    out.insert(c.with_rules(Rules {
                        ties_away,
                        float_result,
                        ..Rules::OPENCL
                    }));
                }
            }
        }
        out.into_iter().collect()
    }

    /// Every conversion OpenCL C does not have that the matrix checks: those whose rules are
    /// not OpenCL's and give other results (after [`Conversion::with_rules`]'s
    /// normalisation), at every width and rounding: WGSL's float -> integer clamp where it
    /// differs from `_sat` (360 with half, 240 without), and PTX's NaN rule where it is not 0
    /// (from double, and into long and ulong: 360 with half, 300 without); then the
    /// conversions to and from bool ([`Conversion::with_bool`]: 174 with half, 162 without).
    /// The trapping rules are not here: their kernels stop at a trap, which the matrix's
    /// comparisons do not expect.
    ///
    /// ```
    /// use clconv::{Conversion, Extensions};
    /// let all = Conversion::beyond_opencl(Extensions::with_fp16());
    /// assert_eq!(all.len(), 720 + 174 + 3150);
    /// assert!(all.iter().any(|c| c.to_string() == "convert_int_satsrc(float)"));
    /// assert!(all.iter().any(|c| c.to_string() == "convert_long_satmsb_rte(float)"));
    /// ```
    pub fn beyond_opencl(ext: Extensions) -> Vec<Conversion> {
        let mut out = Conversion::under_other_rules(ext);
        out.extend(Conversion::with_bool(ext));
        out.extend(Conversion::with_narrow(ext));
        out
    }

    /// Every conversion of a narrow format ([`ScalarType::NARROW`]): to and from each of
    /// half (with `cl_khr_fp16`), float, double and bfloat, and to itself, at every width,
    /// with and without `_sat` where the destination takes it, and every rounding modifier.
    ///
    /// ```
    /// use clconv::{Conversion, Extensions};
    /// let n = Conversion::with_narrow(Extensions::with_fp16());
    /// // Into each (4 partners and itself, _sat or not), out of it (bfloat takes _sat):
    /// // 6 widths, 5 roundings.
    /// assert_eq!(n.len(), 7 * (5 * 2 + 3 + 2) * 6 * 5);
    /// assert!(n.iter().any(|c| c.to_string() == "convert_fp4e2m1x4_sat_rte(float4)"));
    /// assert!(n.iter().any(|c| c.to_string() == "convert_bfloat16_sat(fp8e4m3fnuzx16)"));
    /// ```
    pub fn with_narrow(ext: Extensions) -> Vec<Conversion> {
        let mut pairs = Vec::new();
        for t in ScalarType::NARROW {
            pairs.push((t, t));
            for p in ScalarType::NARROW_PARTNERS {
                if ext.fp16 || p != ScalarType::Half {
                    pairs.push((p, t));
                    pairs.push((t, p));
                }
            }
        }
        let mut out = Vec::new();
        for (src, dst) in pairs {
            for width in Width::ALL {
                let (s, d) = (VectorType::new(src, width), VectorType::new(dst, width));
                for saturate in [false, true] {
                    for rounding in [None].into_iter().chain(Rounding::ALL.map(Some)) {
                        if let Ok(c) = Conversion::new(s, d, saturate, rounding, ext) {
                            out.push(c);
                        }
                    }
                }
            }
        }
        out
    }

    /// Every conversion to or from bool: each scalar type (half with `cl_khr_fp16`) to bool
    /// and back, and bool to bool, at every width. They take no modifier: each is exact.
    ///
    /// ```
    /// use clconv::{Conversion, Extensions};
    /// let b = Conversion::with_bool(Extensions::with_fp16());
    /// assert_eq!(b.len(), (2 * 14 + 1) * 6);
    /// assert!(b.iter().any(|c| c.to_string() == "convert_bool4(float4)"));
    /// assert!(b.iter().any(|c| c.to_string() == "convert_half16(bool16)"));
    /// ```
    pub fn with_bool(ext: Extensions) -> Vec<Conversion> {
        let bool_ = ScalarType::Bool;
        let mut pairs = vec![(bool_, bool_)];
        for t in ScalarType::ALL {
            if ext.fp16 || t != ScalarType::Half {
                pairs.push((t, bool_));
                pairs.push((bool_, t));
            }
        }
        let mut out = Vec::new();
        for (src, dst) in pairs {
            for width in Width::ALL {
                let (s, d) = (VectorType::new(src, width), VectorType::new(dst, width));
                out.push(Conversion::new(s, d, false, None, ext).expect("a bool conversion"));
            }
        }
        out
    }

    /// The float -> integer conversions under WGSL's and PTX's rules that differ from
    /// OpenCL's, every width, `_sat` and rounding.
    fn under_other_rules(ext: Extensions) -> Vec<Conversion> {
        let mut out = Vec::new();
        for src in ScalarType::OPENCL {
            if !src.is_float() || (src == ScalarType::Half && !ext.fp16) {
                continue;
            }
            for dst in ScalarType::OPENCL.into_iter().filter(|t| t.is_integer()) {
                for width in Width::ALL {
                    for rounding in [None]
                        .into_iter()
                        .chain(Rounding::ALL.into_iter().map(Some))
                    {
                        let (s, d) = (VectorType::new(src, width), VectorType::new(dst, width));
                        let Ok(c) = Conversion::new(s, d, true, rounding, ext) else {
                            continue;
                        };
                        for rules in [Rules::WGSL, Rules::ptx(src, dst)] {
                            let c = c.with_rules(rules);
                            if c.rules() != Rules::OPENCL {
                                out.push(c);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

impl fmt::Display for Conversion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.function_name(), self.src)
    }
}

/// A reinterpretation `as_<dst>(<src>)`: the same bytes seen as another type.
///
/// ```
/// use clconv::{Extensions, Reinterpretation, ScalarType, VectorType, Width};
/// let i4 = VectorType::new(ScalarType::Int, Width::W4);
/// let f3 = VectorType::new(ScalarType::Float, Width::W3);
/// let r = Reinterpretation::new(i4, f3, Extensions::default()).unwrap();
/// assert_eq!(r.to_string(), "as_float3(int4)");
/// let d = VectorType::scalar(ScalarType::Double);
/// assert!(Reinterpretation::new(d, VectorType::scalar(ScalarType::Int), Extensions::default()).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reinterpretation {
    src: VectorType,
    dst: VectorType,
}

impl Reinterpretation {
    /// A validated reinterpretation: both types must have the same byte size.
    pub fn new(
        src: VectorType,
        dst: VectorType,
        ext: Extensions,
    ) -> Result<Reinterpretation, RequestError> {
        check_half(src, ext)?;
        check_half(dst, ext)?;
        if src.elem.is_bool() || dst.elem.is_bool() {
            return Err(RequestError::BoolBits { src, dst });
        }
        if let Some(narrow) = [src.elem, dst.elem].into_iter().find(|t| t.is_narrow()) {
            return Err(RequestError::NarrowBits { src, dst, narrow });
        }
        if src.byte_size() != dst.byte_size() {
            return Err(RequestError::SizeMismatch { src, dst });
        }
        Ok(Reinterpretation { src, dst })
    }

    /// The operand type.
    pub const fn src(&self) -> VectorType {
        self.src
    }

    /// The result type.
    pub const fn dst(&self) -> VectorType {
        self.dst
    }

    /// The builtin: `as_float4`, without the argument.
    pub const fn builtin(&self) -> Builtin {
        Builtin::Reinterpret { dst: self.dst }
    }

    /// Every legal `as_` pair.
    pub fn all(ext: Extensions) -> Vec<Reinterpretation> {
        let mut out = Vec::new();
        for dst in VectorType::all() {
            for src in VectorType::all() {
                if let Ok(r) = Reinterpretation::new(src, dst, ext) {
                    out.push(r);
                }
            }
        }
        out
    }
}

impl fmt::Display for Reinterpretation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "as_{}({})", self.dst, self.src)
    }
}

/// A builtin function named without its argument: `convert_int4_sat_rte` or `as_float4`.
///
/// OpenCL overloads each builtin on its source type; [`Builtin::with_source`] picks one overload.
///
/// ```
/// use clconv::{Builtin, Extensions, ScalarType, VectorType, Width};
/// let b = Builtin::parse("convert_int4_sat_rte", Extensions::default()).unwrap();
/// let r = b.with_source(VectorType::new(ScalarType::Float, Width::W4), Extensions::default()).unwrap();
/// assert_eq!(r.to_string(), "convert_int4_sat_rte(float4)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    /// `convert_<dst>[_sat][_<rounding>]`.
    Convert {
        /// The destination type.
        dst: VectorType,
        /// `_sat`.
        saturate: bool,
        /// The rounding modifier as written.
        rounding: Option<Rounding>,
        /// The rules at the edges ([`Rules::OPENCL`] unless the name says otherwise, as
        /// `_satsrc` does).
        rules: Rules,
    },
    /// `as_<dst>`.
    Reinterpret {
        /// The result type.
        dst: VectorType,
    },
}

impl Builtin {
    /// The destination type.
    pub const fn dst(&self) -> VectorType {
        match *self {
            Builtin::Convert { dst, .. } | Builtin::Reinterpret { dst } => dst,
        }
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Builtin::Convert {
                dst,
                saturate,
                rounding,
                rules,
            } => {
                write!(f, "convert_{dst}")?;
                match rules.modifier() {
                    Some(m) => f.write_str(m)?,
                    None if *saturate => f.write_str("_sat")?,
                    None => {}
                }
                f.write_str(&rules.float_modifiers())?;
                match rounding {
                    Some(Rounding::Rte) if rules.ties_away => f.write_str("_rta")?,
                    Some(r) => f.write_str(r.suffix())?,
                    None => {}
                }
                Ok(())
            }
            Builtin::Reinterpret { dst } => write!(f, "as_{dst}"),
        }
    }
}

/// The fix a `BadWidth` message suggests when there is an obvious one: `float1` and `int04`.
fn width_fix(ty: ScalarType, lanes: &str) -> String {
    let digits = lanes.trim_start_matches('0');
    if digits == "1" || (lanes.starts_with('0') && digits.is_empty()) {
        format!(": OpenCL has no `{ty}{lanes}`, write `{ty}`")
    } else if lanes.starts_with('0')
        && digits
            .parse::<usize>()
            .ok()
            .and_then(Width::from_lanes)
            .is_some()
    {
        format!(": write `{ty}{digits}`, without the leading zero")
    } else {
        String::new()
    }
}

fn check_half(t: VectorType, ext: Extensions) -> Result<(), RequestError> {
    if t.elem == ScalarType::Half && !ext.fp16 {
        Err(RequestError::HalfWithoutFp16 { ty: t })
    } else {
        Ok(())
    }
}
