//! OpenCL C scalar and vector types, rounding modes, and the buffer layouts of 3-component vectors.
//!
//! Everything here is plain data with its OpenCL spelling; parsing of whole function names lives
//! in [`crate::names`].

use std::fmt;

/// An OpenCL C scalar type that explicit conversions accept.
///
/// `half` is only legal when the `cl_khr_fp16` extension is switched on (see
/// [`Extensions`]); `size_t` and the pointer-sized integers are never convertible. clconv adds
/// `bool` (the shader languages' conversions), which OpenCL C does not convert.
///
/// ```
/// use clconv::ScalarType;
/// assert_eq!(ScalarType::UChar.name(), "uchar");
/// assert_eq!(ScalarType::Double.bits(), 64);
/// assert!(ScalarType::Half.is_float());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    /// `char`: signed 8-bit integer.
    Char,
    /// `uchar`: unsigned 8-bit integer.
    UChar,
    /// `short`: signed 16-bit integer.
    Short,
    /// `ushort`: unsigned 16-bit integer.
    UShort,
    /// `int`: signed 32-bit integer.
    Int,
    /// `uint`: unsigned 32-bit integer.
    UInt,
    /// `long`: signed 64-bit integer.
    Long,
    /// `ulong`: unsigned 64-bit integer.
    ULong,
    /// `half`: IEEE-754 binary16 (`cl_khr_fp16`).
    Half,
    /// `float`: IEEE-754 binary32.
    Float,
    /// `double`: IEEE-754 binary64.
    Double,
    /// `bfloat`: bfloat16, float's sign and 8-bit exponent with a 7-bit fraction. Not an
    /// OpenCL type (OpenCL extensions hold it in `ushort`); spelled `bfloat` because
    /// `bfloat16` reads as sixteen lanes of `bfloat`, as `float16` does. No extension needed.
    BFloat,
    /// `fp8e4m3`: OCP 8-bit E4M3 (LLVM's `Float8E4M3FN`): 4 exponent bits (bias 7), 3 fraction
    /// bits, no infinity, the only NaNs S.1111.111, largest finite 448. Vectors are spelled
    /// `fp8e4m3x4` (the name ends in a digit, so the width follows an `x`).
    Fp8E4M3,
    /// `fp8e5m2`: OCP 8-bit E5M2: 5 exponent bits (bias 15), 2 fraction bits, IEEE-754's
    /// infinities and NaNs, largest finite 57344. Vectors are spelled `fp8e5m2x4`.
    Fp8E5M2,
    /// `fp4e2m1`: OCP Microscaling's FP4 E2M1 (ml_dtypes' `float4_e2m1fn`): 2 exponent bits
    /// (bias 1), 1 fraction bit, no infinity and no NaN; the values 0, 0.5, 1, 1.5, 2, 3, 4, 6
    /// and their negatives. One element per byte, in its low 4 bits (sign at bit 3); the high
    /// bits are ignored when read and zero when written. Vectors: `fp4e2m1x4`.
    Fp4E2M1,
    /// `fp6e2m3`: OCP Microscaling's FP6 E2M3: 2 exponent bits (bias 1), 3 fraction bits, no
    /// infinity and no NaN, largest 7.5. One element per byte, in its low 6 bits.
    Fp6E2M3,
    /// `fp6e3m2`: OCP Microscaling's FP6 E3M2: 3 exponent bits (bias 3), 2 fraction bits, no
    /// infinity and no NaN, largest 28. One element per byte, in its low 6 bits.
    Fp6E3M2,
    /// `fp8e4m3fnuz`: the 8-bit E4M3 of AMD's and Graphcore's hardware (LLVM's
    /// `Float8E4M3FNUZ`): bias 8, no infinity, no negative zero, one NaN 0x80; largest 240.
    Fp8E4M3Fnuz,
    /// `fp8e5m2fnuz`: the 8-bit E5M2 with bias 16, no infinity, no negative zero, one NaN 0x80
    /// (LLVM's `Float8E5M2FNUZ`); largest 57344.
    Fp8E5M2Fnuz,
    /// `fp8e8m0`: OCP Microscaling's E8M0 scale (ml_dtypes' `float8_e8m0fnu`, PTX's `ue8m0`):
    /// an unsigned biased exponent alone, 2^(code - 127) for codes 0 to 254 (2^-127 to 2^127),
    /// 0xff the NaN; no sign, no zero, no infinity.
    Fp8E8M0,
    /// `tf32`: NVIDIA's TensorFloat-32 (PTX's `.tf32`): float's sign and 8-bit exponent with
    /// the top 10 fraction bits, held in 32 bits whose low 13 are ignored when read and zero
    /// when written. Vectors: `tf32x4`.
    Tf32,
    /// `bool`: a truth value, what every shader language converts to and from (WGSL's
    /// `bool(e)`, GLSL's `bvec4(v)`, HLSL's `(bool)x`). Not a number: converting a number to
    /// bool gives false for zero (`-0.0` included) and true for everything else (NaN included);
    /// converting a bool gives 0 or 1 (0.0 or 1.0). In a buffer a bool is one byte, 0 for false
    /// and any other byte for true (written as 1); the builder API takes it as its caller holds
    /// it ([`crate::lower::BoolValues`]). It has no bits to reinterpret, and no `_sat` into it.
    Bool,
}

/// What kind of number an element is, as a front end's IR says it (naga's `ScalarKind`,
/// SPIR-V's `OpTypeInt` signedness and `OpTypeFloat`): with a byte width, it names a
/// [`ScalarType`] ([`ScalarType::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumberKind {
    /// A signed integer.
    Signed,
    /// An unsigned integer.
    Unsigned,
    /// An IEEE-754 binary float (binary16, binary32, binary64).
    Float,
    /// A truth value (naga's `ScalarKind::Bool`, SPIR-V's `OpTypeBool`), held in any width.
    Bool,
}

impl ScalarType {
    /// The element type of `kind` and `bytes`, as a front end holds its types: `(Signed, 4)` is
    /// `int`, `(Float, 2)` is `half`. `None` where clconv has no such type (a 1-byte float is
    /// E4M3 or E5M2, and a 2-byte one could be bfloat16: name those types directly).
    ///
    /// ```
    /// use clconv::{NumberKind, ScalarType};
    /// assert_eq!(ScalarType::of(NumberKind::Signed, 4), Some(ScalarType::Int));
    /// assert_eq!(ScalarType::of(NumberKind::Unsigned, 1), Some(ScalarType::UChar));
    /// assert_eq!(ScalarType::of(NumberKind::Float, 2), Some(ScalarType::Half));
    /// assert_eq!(ScalarType::of(NumberKind::Float, 1), None);
    /// assert_eq!(ScalarType::of(NumberKind::Signed, 16), None);
    /// assert_eq!(ScalarType::of(NumberKind::Bool, 1), Some(ScalarType::Bool));
    /// ```
    pub const fn of(kind: NumberKind, bytes: u32) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match (kind, bytes) {
            (NumberKind::Signed, 1) => Char,
            (NumberKind::Signed, 2) => Short,
            (NumberKind::Signed, 4) => Int,
            (NumberKind::Signed, 8) => Long,
            (NumberKind::Unsigned, 1) => UChar,
            (NumberKind::Unsigned, 2) => UShort,
            (NumberKind::Unsigned, 4) => UInt,
            (NumberKind::Unsigned, 8) => ULong,
            (NumberKind::Float, 2) => Half,
            (NumberKind::Float, 4) => Float,
            (NumberKind::Float, 8) => Double,
            (NumberKind::Bool, 1 | 2 | 4 | 8) => Bool,
            _ => return None,
        })
    }

    /// All fourteen scalar types: OpenCL's eleven, integers first, in the order of the OpenCL
    /// specification's table, then bfloat16 and the two 8-bit floats.
    pub const ALL: [ScalarType; 14] = [
        ScalarType::Char,
        ScalarType::UChar,
        ScalarType::Short,
        ScalarType::UShort,
        ScalarType::Int,
        ScalarType::UInt,
        ScalarType::Long,
        ScalarType::ULong,
        ScalarType::Half,
        ScalarType::Float,
        ScalarType::Double,
        ScalarType::BFloat,
        ScalarType::Fp8E4M3,
        ScalarType::Fp8E5M2,
    ];

    /// The formats of 2026's machine learning that clconv converts to and from half, float,
    /// double and bfloat only ([`ScalarType::is_narrow`]): OCP Microscaling's FP4 and FP6
    /// element types, the FNUZ 8-bit floats, the E8M0 scale and tf32. They are not in [`ScalarType::ALL`], whose
    /// every pair converts.
    pub const NARROW: [ScalarType; 7] = [
        ScalarType::Fp4E2M1,
        ScalarType::Fp6E2M3,
        ScalarType::Fp6E3M2,
        ScalarType::Fp8E4M3Fnuz,
        ScalarType::Fp8E5M2Fnuz,
        ScalarType::Fp8E8M0,
        ScalarType::Tf32,
    ];

    /// The types a narrow format ([`ScalarType::NARROW`]) converts to and from.
    pub const NARROW_PARTNERS: [ScalarType; 4] = [
        ScalarType::Half,
        ScalarType::Float,
        ScalarType::Double,
        ScalarType::BFloat,
    ];

    /// OpenCL C's eleven scalar types (what SPIR-V's OpenCL environment and OpenCL C know).
    pub const OPENCL: [ScalarType; 11] = [
        ScalarType::Char,
        ScalarType::UChar,
        ScalarType::Short,
        ScalarType::UShort,
        ScalarType::Int,
        ScalarType::UInt,
        ScalarType::Long,
        ScalarType::ULong,
        ScalarType::Half,
        ScalarType::Float,
        ScalarType::Double,
    ];

    /// The spelling: OpenCL C's (`"char"`, `"ulong"`, `"half"`, ...), or clconv's for the
    /// formats OpenCL C lacks (`"bfloat"`, `"fp8e4m3"`, `"fp8e5m2"`).
    pub const fn name(self) -> &'static str {
        match self {
            ScalarType::Char => "char",
            ScalarType::UChar => "uchar",
            ScalarType::Short => "short",
            ScalarType::UShort => "ushort",
            ScalarType::Int => "int",
            ScalarType::UInt => "uint",
            ScalarType::Long => "long",
            ScalarType::ULong => "ulong",
            ScalarType::Half => "half",
            ScalarType::Float => "float",
            ScalarType::Double => "double",
            ScalarType::BFloat => "bfloat",
            ScalarType::Fp8E4M3 => "fp8e4m3",
            ScalarType::Fp8E5M2 => "fp8e5m2",
            ScalarType::Fp4E2M1 => "fp4e2m1",
            ScalarType::Fp6E2M3 => "fp6e2m3",
            ScalarType::Fp6E3M2 => "fp6e3m2",
            ScalarType::Fp8E4M3Fnuz => "fp8e4m3fnuz",
            ScalarType::Fp8E5M2Fnuz => "fp8e5m2fnuz",
            ScalarType::Fp8E8M0 => "fp8e8m0",
            ScalarType::Tf32 => "tf32",
            ScalarType::Bool => "bool",
        }
    }

    /// The type whose spelling is `name`, if any (`bool` included).
    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL
            .into_iter()
            .chain(ScalarType::NARROW)
            .chain([ScalarType::Bool])
            .find(|t| t.name() == name)
    }

    /// The Itanium mangling code of the type as a parameter: `c h s t i j l m Dh f d`; Clang's
    /// `DF16b` for bfloat (`__bf16`), and vendor-extended `u7fp8e4m3`, `u7fp8e5m2` for the 8-bit
    /// floats and `u7fp4e2m1`, `u7fp6e2m3`, `u7fp6e3m2`, `u11fp8e4m3fnuz`, `u11fp8e5m2fnuz`,
    /// `u7fp8e8m0`, `u4tf32` for the narrow formats.
    pub const fn mangled_code(self) -> &'static str {
        match self {
            ScalarType::Char => "c",
            ScalarType::UChar => "h",
            ScalarType::Short => "s",
            ScalarType::UShort => "t",
            ScalarType::Int => "i",
            ScalarType::UInt => "j",
            ScalarType::Long => "l",
            ScalarType::ULong => "m",
            ScalarType::Half => "Dh",
            ScalarType::Float => "f",
            ScalarType::Double => "d",
            ScalarType::BFloat => "DF16b",
            ScalarType::Fp8E4M3 => "u7fp8e4m3",
            ScalarType::Fp8E5M2 => "u7fp8e5m2",
            ScalarType::Fp4E2M1 => "u7fp4e2m1",
            ScalarType::Fp6E2M3 => "u7fp6e2m3",
            ScalarType::Fp6E3M2 => "u7fp6e3m2",
            ScalarType::Fp8E4M3Fnuz => "u11fp8e4m3fnuz",
            ScalarType::Fp8E5M2Fnuz => "u11fp8e5m2fnuz",
            ScalarType::Fp8E8M0 => "u7fp8e8m0",
            ScalarType::Tf32 => "u4tf32",
            ScalarType::Bool => "b",
        }
    }

    /// Width in bits in a buffer: 8, 16, 32 or 64 (a bool's byte, and an FP4 or FP6 element's
    /// byte: 8).
    pub const fn bits(self) -> u32 {
        match self {
            ScalarType::Char
            | ScalarType::UChar
            | ScalarType::Fp8E4M3
            | ScalarType::Fp8E5M2
            | ScalarType::Fp4E2M1
            | ScalarType::Fp6E2M3
            | ScalarType::Fp6E3M2
            | ScalarType::Fp8E4M3Fnuz
            | ScalarType::Fp8E5M2Fnuz
            | ScalarType::Fp8E8M0
            | ScalarType::Bool => 8,
            ScalarType::Short | ScalarType::UShort | ScalarType::Half | ScalarType::BFloat => 16,
            ScalarType::Int | ScalarType::UInt | ScalarType::Float | ScalarType::Tf32 => 32,
            ScalarType::Long | ScalarType::ULong | ScalarType::Double => 64,
        }
    }

    /// Width in bytes: 1, 2, 4 or 8.
    pub const fn bytes(self) -> usize {
        (self.bits() / 8) as usize
    }

    /// True for the floating-point types: `half`, `float`, `double`, `bfloat`, `fp8e4m3`,
    /// `fp8e5m2` and the narrow formats.
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::Half
                | ScalarType::Float
                | ScalarType::Double
                | ScalarType::BFloat
                | ScalarType::Fp8E4M3
                | ScalarType::Fp8E5M2
        ) || self.is_narrow()
    }

    /// True for the narrow formats ([`ScalarType::NARROW`]): FP4 E2M1, FP6 E2M3 and E3M2,
    /// E4M3FNUZ, E5M2FNUZ, E8M0, tf32.
    ///
    /// ```
    /// use clconv::ScalarType;
    /// assert!(ScalarType::Fp4E2M1.is_narrow());
    /// assert!(!ScalarType::Fp8E4M3.is_narrow());
    /// assert_eq!(ScalarType::from_name("fp6e3m2"), Some(ScalarType::Fp6E3M2));
    /// ```
    pub const fn is_narrow(self) -> bool {
        matches!(
            self,
            ScalarType::Fp4E2M1
                | ScalarType::Fp6E2M3
                | ScalarType::Fp6E3M2
                | ScalarType::Fp8E4M3Fnuz
                | ScalarType::Fp8E5M2Fnuz
                | ScalarType::Fp8E8M0
                | ScalarType::Tf32
        )
    }

    /// True for the floating-point types narrower than float in a buffer, which clconv
    /// converts through float: `half`, `bfloat`, `fp8e4m3`, `fp8e5m2`, and the narrow formats
    /// but tf32.
    pub const fn is_small_float(self) -> bool {
        self.is_float() && self.bits() < 32
    }

    /// True for the formats that are not OpenCL C types: `bfloat`, `fp8e4m3`, `fp8e5m2`.
    /// A float destination of these takes `_sat`: a finite value beyond the largest finite
    /// one gives the largest finite one (SPV_EXT_float8's
    /// `SaturatedToLargestFloat8NormalConversionEXT`, PTX's `.satfinite`).
    pub const fn is_beyond_opencl(self) -> bool {
        matches!(
            self,
            ScalarType::BFloat | ScalarType::Fp8E4M3 | ScalarType::Fp8E5M2
        ) || self.is_narrow()
    }

    /// True for the eight integer types.
    pub const fn is_integer(self) -> bool {
        !self.is_float() && !self.is_bool()
    }

    /// True for `bool`.
    pub const fn is_bool(self) -> bool {
        matches!(self, ScalarType::Bool)
    }

    /// True for `char`, `short`, `int`, `long` (the floating types are not "signed integers").
    pub const fn is_signed_integer(self) -> bool {
        matches!(
            self,
            ScalarType::Char | ScalarType::Short | ScalarType::Int | ScalarType::Long
        )
    }

    /// Smallest value of an integer type, as i128 (`None` for floating types and bool).
    pub const fn int_min(self) -> Option<i128> {
        if !self.is_integer() {
            None
        } else if self.is_signed_integer() {
            Some(-(1i128 << (self.bits() - 1)))
        } else {
            Some(0)
        }
    }

    /// Largest value of an integer type, as i128 (`None` for floating types and bool).
    pub const fn int_max(self) -> Option<i128> {
        if !self.is_integer() {
            None
        } else if self.is_signed_integer() {
            Some((1i128 << (self.bits() - 1)) - 1)
        } else {
            Some((1i128 << self.bits()) - 1)
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The number of components of an OpenCL vector: 1 (a scalar), 2, 3, 4, 8 or 16.
///
/// ```
/// use clconv::Width;
/// assert_eq!(Width::W3.lanes(), 3);
/// assert_eq!(Width::W3.storage_lanes(), 4); // float3 is stored like float4
/// assert_eq!(Width::from_lanes(5), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Width {
    /// A scalar, spelled without a digit (`float`).
    W1,
    /// Two components.
    W2,
    /// Three components, with the size and alignment of four.
    W3,
    /// Four components.
    W4,
    /// Eight components.
    W8,
    /// Sixteen components.
    W16,
}

impl Width {
    /// All six widths, smallest first.
    pub const ALL: [Width; 6] = [
        Width::W1,
        Width::W2,
        Width::W3,
        Width::W4,
        Width::W8,
        Width::W16,
    ];

    /// The number of components.
    pub const fn lanes(self) -> usize {
        match self {
            Width::W1 => 1,
            Width::W2 => 2,
            Width::W3 => 3,
            Width::W4 => 4,
            Width::W8 => 8,
            Width::W16 => 16,
        }
    }

    /// Components in memory: 4 for a 3-component vector, else [`Width::lanes`].
    pub const fn storage_lanes(self) -> usize {
        match self {
            Width::W3 => 4,
            w => w.lanes(),
        }
    }

    /// The width with `lanes` components, if OpenCL has one.
    pub const fn from_lanes(lanes: usize) -> Option<Width> {
        match lanes {
            1 => Some(Width::W1),
            2 => Some(Width::W2),
            3 => Some(Width::W3),
            4 => Some(Width::W4),
            8 => Some(Width::W8),
            16 => Some(Width::W16),
            _ => None,
        }
    }
}

/// An OpenCL scalar or vector type: `float`, `uchar4`, `double3`, ...
///
/// ```
/// use clconv::{ScalarType, VectorType, Width};
/// let t = VectorType::new(ScalarType::Float, Width::W3);
/// assert_eq!(t.to_string(), "float3");
/// assert_eq!(t.byte_size(), 16);
/// assert_eq!(VectorType::scalar(ScalarType::Int).to_string(), "int");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VectorType {
    /// The component type.
    pub elem: ScalarType,
    /// The number of components.
    pub width: Width,
}

impl VectorType {
    /// The vector of `width` components of `elem`.
    pub const fn new(elem: ScalarType, width: Width) -> VectorType {
        VectorType { elem, width }
    }

    /// The scalar type `elem` as a 1-component vector.
    pub const fn scalar(elem: ScalarType) -> VectorType {
        VectorType::new(elem, Width::W1)
    }

    /// The number of components.
    pub const fn lanes(self) -> usize {
        self.width.lanes()
    }

    /// Size in bytes as OpenCL defines it: a 3-component vector counts as 4 components.
    pub const fn byte_size(self) -> usize {
        self.elem.bytes() * self.width.storage_lanes()
    }

    /// All 84 vector types (14 scalars x 6 widths), in a fixed order.
    pub fn all() -> impl Iterator<Item = VectorType> {
        ScalarType::ALL
            .into_iter()
            .flat_map(|e| Width::ALL.into_iter().map(move |w| VectorType::new(e, w)))
    }
}

impl fmt::Display for VectorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.width {
            Width::W1 => write!(f, "{}", self.elem),
            // A name with a digit takes its width after an `x`: `fp8e4m3x4`, `fp8e4m3fnuzx4`.
            w if self.elem.name().contains(|c: char| c.is_ascii_digit()) => {
                write!(f, "{}x{}", self.elem, w.lanes())
            }
            w => write!(f, "{}{}", self.elem, w.lanes()),
        }
    }
}

/// An IEEE-754 rounding mode as OpenCL spells it.
///
/// ```
/// use clconv::Rounding;
/// assert_eq!(Rounding::Rtp.suffix(), "_rtp");
/// assert_eq!(Rounding::from_name("rtn"), Some(Rounding::Rtn));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rounding {
    /// Round to nearest, ties to even (`_rte`).
    Rte,
    /// Round toward zero (`_rtz`).
    Rtz,
    /// Round toward positive infinity (`_rtp`).
    Rtp,
    /// Round toward negative infinity (`_rtn`).
    Rtn,
}

impl Rounding {
    /// The four modes.
    pub const ALL: [Rounding; 4] = [Rounding::Rte, Rounding::Rtz, Rounding::Rtp, Rounding::Rtn];

    /// `"rte"`, `"rtz"`, `"rtp"` or `"rtn"`.
    pub const fn name(self) -> &'static str {
        match self {
            Rounding::Rte => "rte",
            Rounding::Rtz => "rtz",
            Rounding::Rtp => "rtp",
            Rounding::Rtn => "rtn",
        }
    }

    /// The suffix as it appears in a function name: `"_rte"`, ...
    pub const fn suffix(self) -> &'static str {
        match self {
            Rounding::Rte => "_rte",
            Rounding::Rtz => "_rtz",
            Rounding::Rtp => "_rtp",
            Rounding::Rtn => "_rtn",
        }
    }

    /// The mode named `name` (`"rte"`, ...), if any.
    pub fn from_name(name: &str) -> Option<Rounding> {
        Rounding::ALL.into_iter().find(|r| r.name() == name)
    }

    /// What `__ROUNDING_MODE__` expands to under this static mode: `"rte"`, ...
    pub const fn rounding_mode_macro(self) -> &'static str {
        self.name()
    }
}

impl fmt::Display for Rounding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which OpenCL extensions are switched on. Only `cl_khr_fp16` changes what is legal.
///
/// ```
/// use clconv::Extensions;
/// assert!(!Extensions::default().fp16);
/// assert!(Extensions::with_fp16().fp16);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Extensions {
    /// `cl_khr_fp16`: `half` is a legal conversion source and destination.
    pub fp16: bool,
}

impl Extensions {
    /// `cl_khr_fp16` switched on.
    pub const fn with_fp16() -> Extensions {
        Extensions { fp16: true }
    }
}

/// How 3-component vectors sit in a batch buffer. Other widths have one layout only.
///
/// ```
/// use clconv::Layout;
/// assert_eq!(Layout::default(), Layout::Packed);
/// assert_eq!(Layout::Aligned.name(), "aligned");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Three elements per vector, as `vload3`/`vstore3` read and write them.
    #[default]
    Packed,
    /// A four-element stride, like an array of `float3`; the fourth element is padding
    /// (ignored when read, written as zero).
    Aligned,
}

impl Layout {
    /// `"packed"` or `"aligned"`.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Packed => "packed",
            Layout::Aligned => "aligned",
        }
    }

    /// Elements one vector of `width` occupies in a buffer of this layout.
    pub const fn stride(self, width: Width) -> usize {
        match (self, width) {
            (Layout::Aligned, Width::W3) => 4,
            (_, w) => w.lanes(),
        }
    }
}
