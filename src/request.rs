//! The request: one conversion, one reinterpretation or one chain of them, validated per
//! SPEC.md.
//!
//! A [`Request`] is what every other layer takes: the spellings (`crate::names`, the
//! languages) parse text into one, the reference interpreter evaluates one, the lowering emits
//! Cranelift IR for one. It is made of the model's elements ([`Conversion`],
//! [`Reinterpretation`], [`Builtin`], re-exported here from their own module) and of
//! [`crate::chain`]; it imports no spelling and no lowering.

pub use crate::conversion::{Builtin, Conversion, Reinterpretation, RequestError};

use crate::chain::Chain;
use crate::types::{Extensions, ScalarType, VectorType, Width};
use std::fmt;

/// One request: a conversion or a reinterpretation.
///
/// Parse one from any spelling with [`Request::parse`]; `Display` prints the canonical
/// OpenCL spelling and [`Request::mangled`] the Itanium/SPIR one.
///
/// ```
/// use clconv::{Extensions, Request};
/// let r = Request::parse("_Z20convert_int4_sat_rteDv4_f", Extensions::default()).unwrap();
/// assert_eq!(r.to_string(), "convert_int4_sat_rte(float4)");
/// assert_eq!(r.mangled(), "_Z20convert_int4_sat_rteDv4_f");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Request {
    /// `convert_*`.
    Convert(Conversion),
    /// `as_*`.
    Reinterpret(Reinterpretation),
    /// A few steps in one, for conversions whose lanes move or whose bits are reinterpreted
    /// around them (WebAssembly's `convert_low`, GLSL's `packHalf2x16`): see
    /// [`crate::chain`].
    Chain(Chain),
}

impl Request {
    /// The source (operand) type.
    pub const fn src(&self) -> VectorType {
        match self {
            Request::Convert(c) => c.src(),
            Request::Reinterpret(r) => r.src(),
            Request::Chain(c) => c.src(),
        }
    }

    /// The destination (result) type.
    pub const fn dst(&self) -> VectorType {
        match self {
            Request::Convert(c) => c.dst(),
            Request::Reinterpret(r) => r.dst(),
            Request::Chain(c) => c.dst(),
        }
    }

    /// The builtin without its argument (`convert_int4_sat_rte`, `as_float4`); of a chain, its
    /// outermost conversion's or reinterpretation's ([`Chain::builtin`]).
    pub fn builtin(&self) -> Builtin {
        match self {
            Request::Convert(c) => c.builtin(),
            Request::Reinterpret(r) => r.builtin(),
            Request::Chain(c) => c.builtin(),
        }
    }

    /// True when the request mentions `half`.
    pub fn uses_half(&self) -> bool {
        match self {
            Request::Chain(c) => c.uses_half(),
            _ => self.src().elem == ScalarType::Half || self.dst().elem == ScalarType::Half,
        }
    }

    /// Every request: OpenCL's conversions, the conversions under other languages' rules
    /// ([`Conversion::beyond_opencl`]), then all reinterpretations.
    pub fn all(ext: Extensions) -> Vec<Request> {
        let mut out: Vec<Request> = Conversion::all(ext)
            .into_iter()
            .chain(Conversion::beyond_opencl(ext))
            .map(Request::Convert)
            .collect();
        out.extend(
            Reinterpretation::all(ext)
                .into_iter()
                .map(Request::Reinterpret),
        );
        out
    }

    /// Every request a name spells: [`Request::all`], then the conversions of
    /// [`Conversion::every_named`] it does not hold (the rules of `_satsrc`, `_satmsb`,
    /// `_trap`, `_ftz`, `_clamp01` and `_relu` from every source type they apply to), each
    /// once. What `clconv list` prints, and what the test suite compiles.
    ///
    /// ```
    /// use clconv::{Extensions, Request};
    /// let ext = Extensions::with_fp16();
    /// let named = Request::every_named(ext);
    /// assert_eq!(named[..Request::all(ext).len()], Request::all(ext)[..]);
    /// assert!(named.iter().any(|r| r.to_string() == "convert_ulong2_satmsb_rtn(fp8e5m2x2)"));
    /// ```
    pub fn every_named(ext: Extensions) -> Vec<Request> {
        let mut out = Request::all(ext);
        let listed: std::collections::HashSet<Request> = out.iter().copied().collect();
        out.extend(
            Conversion::every_named(ext)
                .into_iter()
                .map(Request::Convert)
                .filter(|r| !listed.contains(r)),
        );
        out
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Request::Convert(c) => c.fmt(f),
            Request::Reinterpret(r) => r.fmt(f),
            Request::Chain(c) => c.fmt(f),
        }
    }
}

impl From<Conversion> for Request {
    fn from(c: Conversion) -> Request {
        Request::Convert(c)
    }
}

impl From<Chain> for Request {
    fn from(c: Chain) -> Request {
        Request::Chain(c)
    }
}

impl From<Reinterpretation> for Request {
    fn from(r: Reinterpretation) -> Request {
        Request::Reinterpret(r)
    }
}

impl Builtin {
    /// The overload for source `src`, validated.
    pub fn with_source(&self, src: VectorType, ext: Extensions) -> Result<Request, RequestError> {
        match *self {
            Builtin::Convert {
                dst,
                saturate,
                rounding,
                rules,
            } => {
                let c = Conversion::new(src, dst, saturate, rounding, ext)?.with_rules(rules);
                let narrow = [src.elem, dst.elem].into_iter().find(|t| t.is_narrow());
                // The rules as written against the normalised ones: a narrow format takes the
                // rules `Rules::normalised` keeps for it (E8M0's `_abs`, the canonical NaN out
                // of E8M0) and a name that writes any other is refused, not silently dropped.
                match narrow {
                    Some(_) if rules.ties_away && !c.rules().ties_away => {
                        Err(RequestError::TiesAwaySource { src, dst })
                    }
                    Some(narrow) if c.rules() != rules => {
                        Err(RequestError::NarrowModifier { narrow })
                    }
                    _ => Ok(Request::Convert(c)),
                }
            }
            Builtin::Reinterpret { dst } => {
                Reinterpretation::new(src, dst, ext).map(Request::Reinterpret)
            }
        }
    }

    /// The overload whose source has element type `elem` and the builtin's own width.
    pub fn with_source_element(
        &self,
        elem: ScalarType,
        ext: Extensions,
    ) -> Result<Request, RequestError> {
        let dst = self.dst();
        let width = match *self {
            Builtin::Convert { .. } => dst.width,
            // as_: the builtin's own width when the sizes match (as_float3 from int: int3),
            // else the width that gives the same byte size (as_float4 from char: char16).
            Builtin::Reinterpret { .. } => {
                let bytes = dst.byte_size();
                let fits = |w: &Width| w.storage_lanes() * elem.bytes() == bytes;
                Some(dst.width)
                    .filter(fits)
                    .or_else(|| Width::ALL.into_iter().find(|w| fits(w) && *w != Width::W3))
                    .unwrap_or(dst.width)
            }
        };
        self.with_source(VectorType::new(elem, width), ext)
    }
}
