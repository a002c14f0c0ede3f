//! Chains: one request made of a few steps, for the conversions of other languages whose lanes
//! move or whose bits are reinterpreted around the conversion.
//!
//! WebAssembly's `f64x2.convert_low_i32x4_u` converts the low two lanes of an `i32x4`;
//! `f32x4.demote_f64x2_zero` fills the two lanes past its result with zeros; GLSL's
//! `packHalf2x16` converts two floats to half and gives their 32 bits as a `uint`; HLSL's
//! `f16tof32` reads a half from the low 16 bits of a `uint`. Each is a [`Chain`] of the steps
//! every other layer already knows (a [`Conversion`], a [`Reinterpretation`]) and one more, a
//! [`LaneMove`] (OpenCL's `.lo`, `.hi`, `.s23` swizzles, and the zero-filled vector literal
//! `(float4)(x, 0, 0)`), so that no layer needs a copy of the machinery per instruction. FP4
//! stored two codes to a byte (PTX's `cvt.rn.satfinite.e2m1x2.f32 d, a, b`, CUDA's `fp4x2`)
//! is one step more, [`Fp4Packing`]: `pack_fp4(convert_fp4e2m1x2_sat_rte(float2))` gives a
//! `uchar`, `convert_half2(unpack_fp4(uchar))` reads one.
//!
//! A chain prints as the OpenCL C expression it evaluates, which [`crate::Request::parse`]
//! reads back:
//!
//! ```
//! use clconv::{Extensions, Request};
//! let ext = Extensions::with_fp16();
//! let low = Request::parse("wasm:f64x2.convert_low_i32x4_u", ext).unwrap();
//! assert_eq!(low.to_string(), "convert_double2_rte(uint4.lo)");
//! let pack = Request::parse("glsl:packHalf2x16(vec2)", ext).unwrap();
//! assert_eq!(pack.to_string(), "as_uint(convert_half2_rte(float2))");
//! assert_eq!(Request::parse(&pack.to_string(), ext), Ok(pack));
//! ```

use crate::conversion::{Builtin, Conversion, Reinterpretation, RequestError};
use crate::types::{ScalarType, VectorType, Width};
use std::fmt;

/// The most steps a chain holds (HLSL's `f16tof32` takes three: the low bits, their
/// reinterpretation as half, the conversion).
pub const MAX_STEPS: usize = 3;

/// Lanes taken from a vector or placed into one, the rest zero: OpenCL's swizzles `.lo`,
/// `.hi`, `.s23` when the result has fewer lanes, a vector literal `(float4)(x, 0, 0)` when it
/// has more.
///
/// Result lane `i` is operand lane `first + i` for `i` below [`LaneMove::taken`], and zero (all
/// bits clear: `+0.0` for a float) after it. Both vectors are at most 128 bits and not
/// 3-component (whose fourth lane is padding).
///
/// ```
/// use clconv::chain::LaneMove;
/// use clconv::{ScalarType::Char, VectorType, Width};
/// let hi = LaneMove::new(VectorType::new(Char, Width::W16), 8, VectorType::new(Char, Width::W8)).unwrap();
/// assert_eq!(hi.taken(), 8);
/// assert!(LaneMove::new(VectorType::new(Char, Width::W4), 2, VectorType::new(Char, Width::W4)).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaneMove {
    src: VectorType,
    first: u8,
    dst: VectorType,
}

impl LaneMove {
    /// A validated lane move: the same element type on both sides; a narrower result takes
    /// lanes `first..first + dst.lanes()` of the operand, a wider one (`first` 0) takes them
    /// all and fills the rest with zeros.
    pub fn new(src: VectorType, first: usize, dst: VectorType) -> Result<LaneMove, RequestError> {
        let why = if src.elem != dst.elem {
            Some(format!(
                "lanes of {src} move into {dst}, of another element type: convert first"
            ))
        } else if src.width == Width::W3 || dst.width == Width::W3 {
            Some(format!(
                "lanes of 3-component vectors do not move ({src} into {dst}): their fourth lane is padding"
            ))
        } else if src.byte_size() > 16 || dst.byte_size() > 16 {
            Some(format!(
                "lanes move within 128 bits, and {src} into {dst} is wider"
            ))
        } else if dst.lanes() > src.lanes() && first != 0 {
            Some(format!(
                "{src} placed into the wider {dst} starts at lane 0, not {first}"
            ))
        } else if dst.lanes() <= src.lanes() && first + dst.lanes() > src.lanes() {
            Some(format!(
                "{src} has {} lanes: lanes {first}..{} do not exist",
                src.lanes(),
                first + dst.lanes()
            ))
        } else if dst == src {
            Some(format!("{src} into {dst} moves no lane"))
        } else {
            None
        };
        match why {
            Some(why) => Err(RequestError::Chain {
                chain: format!("{src} -> {dst}"),
                why,
            }),
            None => Ok(LaneMove {
                src,
                first: first as u8,
                dst,
            }),
        }
    }

    /// The operand type.
    pub const fn src(&self) -> VectorType {
        self.src
    }

    /// The result type.
    pub const fn dst(&self) -> VectorType {
        self.dst
    }

    /// The first operand lane taken.
    pub const fn first(&self) -> usize {
        self.first as usize
    }

    /// How many operand lanes reach the result; the result's lanes after them are zero.
    pub const fn taken(&self) -> usize {
        let left = self.src.lanes() - self.first as usize;
        if self.dst.lanes() < left {
            self.dst.lanes()
        } else {
            left
        }
    }

    /// The swizzle a narrower result is spelled with after its operand: `lo`, `hi`, `s23`.
    fn swizzle(&self) -> String {
        let (n, half) = (self.dst.lanes(), self.src.lanes() / 2);
        match self.first() {
            0 if n == half => "lo".into(),
            f if f == half && n == half => "hi".into(),
            f => {
                let digits: String = (f..f + n)
                    .map(|i| char::from_digit(i as u32, 16).expect("at most 16 lanes"))
                    .collect();
                format!("s{digits}")
            }
        }
    }

    /// `inner` with this move applied, in OpenCL C.
    fn spell(&self, inner: &str) -> String {
        if self.dst.lanes() < self.src.lanes() {
            format!("{inner}.{}", self.swizzle())
        } else {
            let zeros = ", 0".repeat(self.dst.lanes() - self.src.lanes());
            format!("({})({inner}{zeros})", self.dst)
        }
    }
}

/// FP4 E2M1 codes packed two to a byte, or unpacked: `pack_fp4(x)` takes an `fp4e2m1` vector
/// of 2, 4, 8 or 16 codes and gives the `uchar` vector of half as many bytes; `unpack_fp4(x)`
/// the way back. Code `2i` is in the low nibble of byte `i` (bits 0-3) and code `2i + 1` in its
/// high nibble (bits 4-7): PTX's `cvt.rn.satfinite.e2m1x2.f32 d, a, b` stores `b` (element 0
/// of clconv's pair) in d's lower 4 bits and `a` in its upper 4, and CUDA's `__nv_fp4x2_e2m1`
/// (`.x` low) and clconv's `mxfp4e2m1x2` blocks order them the same. A code's high bits (zero
/// as clconv writes them) are ignored when packed.
///
/// ```
/// use clconv::chain::Fp4Packing;
/// use clconv::{ScalarType, VectorType, Width};
/// let pack = Fp4Packing::pack(VectorType::new(ScalarType::Fp4E2M1, Width::W8)).unwrap();
/// assert_eq!(pack.dst(), VectorType::new(ScalarType::UChar, Width::W4));
/// let unpack = Fp4Packing::unpack(VectorType::scalar(ScalarType::UChar)).unwrap();
/// assert_eq!(unpack.dst(), VectorType::new(ScalarType::Fp4E2M1, Width::W2));
/// assert!(Fp4Packing::pack(VectorType::new(ScalarType::Fp4E2M1, Width::W3)).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fp4Packing {
    codes: Width,
    pack: bool,
}

impl Fp4Packing {
    /// `pack_fp4(codes)`: `codes` is `fp4e2m1` of width 2, 4, 8 or 16.
    pub fn pack(codes: VectorType) -> Result<Fp4Packing, RequestError> {
        let ok = codes.elem == ScalarType::Fp4E2M1
            && matches!(codes.width, Width::W2 | Width::W4 | Width::W8 | Width::W16);
        if !ok {
            return Err(RequestError::Chain {
                chain: format!("pack_fp4({codes})"),
                why: "pack_fp4 packs FP4 codes two to a byte: it takes fp4e2m1x2, fp4e2m1x4, \
                      fp4e2m1x8 or fp4e2m1x16"
                    .into(),
            });
        }
        Ok(Fp4Packing {
            codes: codes.width,
            pack: true,
        })
    }

    /// `unpack_fp4(bytes)`: `bytes` is `uchar` of width 1, 2, 4 or 8.
    pub fn unpack(bytes: VectorType) -> Result<Fp4Packing, RequestError> {
        let codes = match (bytes.elem, bytes.width) {
            (ScalarType::UChar, Width::W1) => Some(Width::W2),
            (ScalarType::UChar, Width::W2) => Some(Width::W4),
            (ScalarType::UChar, Width::W4) => Some(Width::W8),
            (ScalarType::UChar, Width::W8) => Some(Width::W16),
            _ => None,
        };
        let codes = codes.ok_or_else(|| RequestError::Chain {
            chain: format!("unpack_fp4({bytes})"),
            why: "unpack_fp4 reads FP4 codes two to a byte: it takes uchar, uchar2, uchar4 or \
                  uchar8"
                .into(),
        })?;
        Ok(Fp4Packing { codes, pack: false })
    }

    /// True for `pack_fp4`, false for `unpack_fp4`.
    pub const fn packs(&self) -> bool {
        self.pack
    }

    /// The codes' type: `fp4e2m1` of 2, 4, 8 or 16 lanes.
    pub const fn codes(&self) -> VectorType {
        VectorType::new(ScalarType::Fp4E2M1, self.codes)
    }

    /// The bytes' type: `uchar` of half the codes' lanes.
    pub const fn bytes(&self) -> VectorType {
        let width = match self.codes {
            Width::W2 => Width::W1,
            Width::W4 => Width::W2,
            Width::W8 => Width::W4,
            _ => Width::W8,
        };
        VectorType::new(ScalarType::UChar, width)
    }

    /// The operand type: the codes when packing, the bytes when unpacking.
    pub const fn src(&self) -> VectorType {
        if self.pack {
            self.codes()
        } else {
            self.bytes()
        }
    }

    /// The result type.
    pub const fn dst(&self) -> VectorType {
        if self.pack {
            self.bytes()
        } else {
            self.codes()
        }
    }

    /// `pack_fp4` or `unpack_fp4`.
    pub const fn function_name(&self) -> &'static str {
        if self.pack {
            "pack_fp4"
        } else {
            "unpack_fp4"
        }
    }
}

/// One step of a [`Chain`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Step {
    /// A conversion, lane by lane.
    Convert(Conversion),
    /// The same bits seen as another type.
    Reinterpret(Reinterpretation),
    /// Lanes taken or placed.
    Lanes(LaneMove),
    /// FP4 codes packed two to a byte, or unpacked.
    Fp4(Fp4Packing),
}

impl Step {
    /// The operand type.
    pub const fn src(&self) -> VectorType {
        match self {
            Step::Convert(c) => c.src(),
            Step::Reinterpret(r) => r.src(),
            Step::Lanes(m) => m.src(),
            Step::Fp4(p) => p.src(),
        }
    }

    /// The result type.
    pub const fn dst(&self) -> VectorType {
        match self {
            Step::Convert(c) => c.dst(),
            Step::Reinterpret(r) => r.dst(),
            Step::Lanes(m) => m.dst(),
            Step::Fp4(p) => p.dst(),
        }
    }

    fn spell(&self, inner: &str) -> String {
        match self {
            Step::Convert(c) => format!("{}({inner})", c.function_name()),
            Step::Reinterpret(r) => format!("as_{}({inner})", r.dst()),
            Step::Lanes(m) => m.spell(inner),
            Step::Fp4(p) => format!("{}({inner})", p.function_name()),
        }
    }
}

/// A request of a few steps, each taking the one before's result: see the [module
/// docs](self).
///
/// ```
/// use clconv::chain::{Chain, LaneMove, Step};
/// use clconv::{Conversion, Extensions, Rounding, ScalarType::*, VectorType, Width};
/// let ext = Extensions::default();
/// let (int4, int2) = (VectorType::new(Int, Width::W4), VectorType::new(Int, Width::W2));
/// let double2 = VectorType::new(Double, Width::W2);
/// let chain = Chain::new(&[
///     Step::Lanes(LaneMove::new(int4, 0, int2).unwrap()),
///     Step::Convert(Conversion::new(int2, double2, false, Some(Rounding::Rte), ext).unwrap()),
/// ])
/// .unwrap();
/// assert_eq!(chain.to_string(), "convert_double2_rte(int4.lo)");
/// assert_eq!((chain.src(), chain.dst()), (int4, double2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Chain {
    steps: [Option<Step>; MAX_STEPS],
}

impl Chain {
    /// A validated chain: two to [`MAX_STEPS`] steps, at least one of them a conversion, each
    /// taking the type the step before gives. A reinterpretation inside a chain keeps
    /// 3-component vectors only lane for lane (`as_ushort3(half3)`), since a chain's value
    /// carries no padding lane.
    pub fn new(steps: &[Step]) -> Result<Chain, RequestError> {
        let error = |why: String| RequestError::Chain {
            chain: spell_steps(steps),
            why,
        };
        if steps.len() < 2 || steps.len() > MAX_STEPS {
            return Err(error(format!(
                "a chain has 2 to {MAX_STEPS} steps, not {}",
                steps.len()
            )));
        }
        if !steps.iter().any(|s| matches!(s, Step::Convert(_))) {
            return Err(error("a chain converts: it needs a convert_ step".into()));
        }
        for pair in steps.windows(2) {
            if pair[0].dst() != pair[1].src() {
                return Err(error(format!(
                    "a step gives {} but the next takes {}",
                    pair[0].dst(),
                    pair[1].src()
                )));
            }
        }
        for step in steps {
            if let Step::Reinterpret(r) = step {
                let x3 = r.src().width == Width::W3 || r.dst().width == Width::W3;
                if x3 && r.src().width != r.dst().width {
                    return Err(error(format!(
                        "{r} moves bytes across a 3-component vector's padding, which a chain's \
                         value does not carry"
                    )));
                }
            }
        }
        let mut held = [None; MAX_STEPS];
        for (slot, step) in held.iter_mut().zip(steps) {
            *slot = Some(*step);
        }
        Ok(Chain { steps: held })
    }

    /// The steps, first to last.
    pub fn steps(&self) -> impl DoubleEndedIterator<Item = &Step> {
        self.steps.iter().flatten()
    }

    /// The operand type.
    pub const fn src(&self) -> VectorType {
        match &self.steps[0] {
            Some(step) => step.src(),
            None => panic!("Chain::new gives a chain steps"),
        }
    }

    /// The result type.
    pub const fn dst(&self) -> VectorType {
        let mut i = MAX_STEPS;
        while i > 0 {
            i -= 1;
            if let Some(step) = &self.steps[i] {
                return step.dst();
            }
        }
        panic!("Chain::new gives a chain steps")
    }

    /// The conversion that says what the chain is for: the first step that converts to or
    /// from a floating type, else the first conversion (what the lowering tables and reports
    /// name the chain's code by).
    pub fn conversion(&self) -> Conversion {
        let converts = || {
            self.steps().filter_map(|s| match s {
                Step::Convert(c) => Some(*c),
                _ => None,
            })
        };
        converts()
            .find(|c| c.src().elem.is_float() || c.dst().elem.is_float())
            .or_else(|| converts().next())
            .expect("Chain::new checked that a chain converts")
    }

    /// The builtin of the outermost conversion or reinterpretation step.
    pub fn builtin(&self) -> Builtin {
        self.steps()
            .rev()
            .find_map(|s| match s {
                Step::Convert(c) => Some(c.builtin()),
                Step::Reinterpret(r) => Some(r.builtin()),
                Step::Lanes(_) | Step::Fp4(_) => None,
            })
            .expect("Chain::new checked that a chain converts")
    }

    /// True when a step mentions `half`.
    pub fn uses_half(&self) -> bool {
        self.steps().any(|s| {
            s.src().elem == crate::ScalarType::Half || s.dst().elem == crate::ScalarType::Half
        })
    }
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let steps: Vec<Step> = self.steps().copied().collect();
        f.write_str(&spell_steps(&steps))
    }
}

/// The OpenCL C expression `steps` evaluate, on an operand named by its type.
fn spell_steps(steps: &[Step]) -> String {
    let Some(first) = steps.first() else {
        return String::new();
    };
    steps
        .iter()
        .fold(first.src().to_string(), |inner, step| step.spell(&inner))
}
