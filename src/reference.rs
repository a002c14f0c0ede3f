//! The reference interpreter: evaluates any request on byte buffers, element by element, exactly
//! as SPEC.md says, on soft-float (`rustc_apfloat`), never on host casts or the host FPU, so that
//! it cannot share a bug with the hardware or with the code generator it checks.
//!
//! # Definitions
//!
//! Where SPEC.md leaves room, these are the results clconv promises (and the JIT must match):
//!
//! - **Elements** are bits: a source element's bits zero-extended to `u64` (little-endian in
//!   buffers), the result likewise.
//! - **Rounding** is [`Conversion::effective_rounding`]: as written; else rtz for an integer
//!   destination and the static `SELECT_ROUNDING_MODE` (rte by default) for a floating one.
//! - **Same type** (`convert_float(float)`, `convert_int_sat(int)`): the identity on the bits,
//!   NaN payloads and signalling NaNs included.
//! - **integer -> integer**: the value when in range; out of range, the low bits (wrap) without
//!   `_sat` and the nearest bound with it. Never implementation-defined.
//! - **float -> integer**: rounded to an integer by the mode, then clamped to the destination
//!   range, NaN -> 0. With `_sat` that is the spec's result. Without `_sat` the spec leaves NaN and
//!   out-of-range results implementation-defined: clconv gives the same bits as `_sat` and
//!   [`ElementResult::implementation_defined`] is set (the input is NaN, or the *rounded* value is
//!   outside the range: `convert_uchar_rte(255.5f)` is 256 before clamping, so it is flagged,
//!   while `convert_uchar(255.5f)` is 255 and is not).
//! - **float -> integer under WGSL's rule** ([`crate::rules::OutOfRange::NearestInSource`]):
//!   rounded by the mode, then clamped to the integers of the destination that the source
//!   format represents exactly (float -> int: [-2^31, 2^31 - 128]); NaN -> 0, flagged
//!   implementation-defined (WGSL: "an indeterminate value").
//! - **integer or float -> float**: IEEE-754 rounding by the mode in one step (double -> half is
//!   not rounded twice). Overflow gives ±inf or ±MAX as IEEE says (rte: ±inf; rtz: ±MAX;
//!   rtp: +inf / -MAX; rtn: +MAX / -inf). Subnormal results are produced, not flushed; signed zero
//!   is kept; integer zero gives +0.0.
//! - **NaN -> float** (what x86-64 and AArch64 conversion instructions do, defined on the bits
//!   rather than left to the soft-float's NaN handling): a quiet NaN with the source's sign whose
//!   payload keeps the source mantissa's most significant bits. Narrowing keeps the top bits
//!   (`m >> (src_mantissa_bits - dst_mantissa_bits)`), widening appends zeros
//!   (`m << (dst_mantissa_bits - src_mantissa_bits)`), and then the quiet bit is set, so a
//!   signalling NaN becomes quiet: float `0x7f800001` -> double `0x7ff8000020000000`,
//!   double `0x7ff0000000000001` -> float `0x7fc00000`.
//! - **Reinterpretation** `as_<dst>(<src>)`: the bytes, unchanged (little-endian memory
//!   reinterpretation), so NaN payloads, signalling NaNs and -0.0 pass through. A 3-component
//!   result holds the operand's first three elements' bytes. A 3-component operand's fourth
//!   element (its padding) is what the buffer stores there in the [`Layout::Aligned`] layout and
//!   zero in the [`Layout::Packed`] layout, which stores nothing there. Reinterpretations are
//!   never reported as implementation-defined: clconv defines every byte.
//! - **3-component vectors in buffers**: packed buffers hold 3 elements per vector; aligned ones
//!   have a 4-element stride whose fourth element is ignored when read and written as zero.
//!   [`Report::implementation_defined`] counts those padding slots when it numbers elements.
//!
//! Buffer sizes are checked with [`buffer::vector_count`], the check the JIT uses, so both accept
//! and refuse the same buffers.
//!
//! ```
//! use clconv::{reference, Conversion, Extensions, Rounding, ScalarType, VectorType};
//! let c = Conversion::new(
//!     VectorType::scalar(ScalarType::Float),
//!     VectorType::scalar(ScalarType::Int),
//!     false,
//!     Some(Rounding::Rte),
//!     Extensions::default(),
//! )
//! .unwrap();
//! // 0.5f - 1ulp rounds to 0, not to 1 as `(int)(x + 0.5f)` would.
//! assert_eq!(reference::convert_element(&c, Rounding::Rte, 0x3eff_ffff).bits, 0);
//! ```

pub mod arith;
mod mx;
mod narrow;
mod nvfp4;

pub use mx::{
    mx_dequantize, mx_element_formats, mx_quantize, mx_value, quantize_mx_block, ScaleRule,
};
pub use narrow::{narrow_value, round_to_narrow};
pub use nvfp4::{nvfp4_dequantize, nvfp4_quantize, nvfp4_value, quantize_nvfp4_block};

use crate::buffer::{self, BufferError};
use crate::chain::{Chain, Step};
use crate::request::{Conversion, Reinterpretation, Request};
use crate::rules::{FloatResult, OutOfRange};
use crate::types::{Layout, Rounding, ScalarType, VectorType};
use rustc_apfloat::ieee::{BFloat, Double, Float8E4M3FN, Float8E5M2, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round};

/// The result of converting one element.
///
/// ```
/// use clconv::reference::ElementResult;
/// let r = ElementResult { bits: 0x7fff_ffff, implementation_defined: true };
/// assert!(r.implementation_defined); // e.g. convert_int(3e9f): defined as INT_MAX, like _sat
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementResult {
    /// The destination element's bits, zero-extended to 64.
    pub bits: u64,
    /// True when the spec leaves this result implementation-defined (float to integer without
    /// `_sat`, NaN or out of range); `bits` then holds clconv's defined result, the `_sat` one.
    pub implementation_defined: bool,
}

/// Converts one element: `src_bits` holds the source element's bits (zero-extended to 64; bits
/// above the source width are ignored).
/// `static_mode` is the `SELECT_ROUNDING_MODE` that a conversion to a floating type without a
/// rounding modifier follows (rte unless changed).
///
/// To convert many elements of one conversion, build an [`ElementConverter`] once instead.
///
/// ```
/// use clconv::{reference, Conversion, Extensions, Rounding, ScalarType, VectorType};
/// let int_to_float = Conversion::new(
///     VectorType::scalar(ScalarType::Int),
///     VectorType::scalar(ScalarType::Float),
///     false,
///     None,
///     Extensions::default(),
/// )
/// .unwrap();
/// // 2^24 + 1 is not a float: the static mode decides.
/// assert_eq!(reference::convert_element(&int_to_float, Rounding::Rte, 16_777_217).bits, 0x4b80_0000);
/// assert_eq!(reference::convert_element(&int_to_float, Rounding::Rtp, 16_777_217).bits, 0x4b80_0001);
/// ```
pub fn convert_element(conv: &Conversion, static_mode: Rounding, src_bits: u64) -> ElementResult {
    ElementConverter::new(conv, static_mode).convert(src_bits)
}

/// Whether the language traps on `src_bits` under `conv`'s rules ([`crate::rules::Rules::traps`]:
/// WebAssembly's `trunc`): the input is NaN, or rounded by the mode it is outside the
/// destination's range (WebAssembly: the result "is not defined"). False for rules that do not
/// trap. Written from those words, on soft-float, apart from [`convert_element`].
///
/// ```
/// use clconv::{reference, Extensions, Request, Rounding};
/// let Request::Convert(c) = Request::parse("wasm:i32.trunc_f32_u", Extensions::default()).unwrap() else { unreachable!() };
/// let traps = |x: f32| reference::traps(&c, Rounding::Rte, x.to_bits() as u64);
/// assert!(traps(f32::NAN) && traps(-1.0) && traps(4294967296.0));
/// assert!(!traps(-0.9) && !traps(4294967040.0)); // -0.9 truncates to 0
/// ```
pub fn traps(conv: &Conversion, static_mode: Rounding, src_bits: u64) -> bool {
    let (src, dst) = (conv.src().elem, conv.dst().elem);
    if !conv.rules().traps() || !src.is_float() || !dst.is_integer() {
        return false;
    }
    let round = apfloat_round(conv.effective_rounding(static_mode));
    let (min, max) = (dst.int_min().unwrap_or(0), dst.int_max().unwrap_or(0));
    let bits = u128::from(src_bits & mask(src.bits()));
    fn outside<F: Format>(bits: u128, round: Round, min: i128, max: i128) -> bool {
        let x = F::from_bits(bits);
        if x.is_nan() || x.is_infinite() {
            return true;
        }
        let t = x.round_to_integral(round).value;
        // t < min or t > max, i.e. t >= max + 1: min is 0 or -2^(N-1) and max + 1 is a power of
        // two, each exact in the format or beyond it (then infinite, which no finite t reaches).
        let lo = F::from_i128_r(min, Round::NearestTiesToEven).value;
        let top = F::from_i128_r(max + 1, Round::NearestTiesToEven).value;
        t < lo || t >= top
    }
    for_format!(src, F => outside::<F>(bits, round, min, max))
}

/// One conversion's per-element function, chosen once: what an exhaustive sweep should call in
/// its loop instead of [`convert_element`], which works out the types and modes every time.
///
/// ```
/// use clconv::reference::ElementConverter;
/// use clconv::{Conversion, Extensions, Rounding, ScalarType, VectorType};
/// let c = Conversion::new(
///     VectorType::scalar(ScalarType::Float),
///     VectorType::scalar(ScalarType::UChar),
///     true,
///     None,
///     Extensions::default(),
/// )
/// .unwrap();
/// let conv = ElementConverter::new(&c, Rounding::Rte);
/// assert_eq!(conv.convert(0xc0a0_0000).bits, 0); // -5.0f clamps to 0
/// assert_eq!(conv.convert(0x437e_8000).bits, 254); // 254.5f truncates (rtz)
/// assert_eq!(conv.convert(0x7fc0_0000).bits, 0); // NaN
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ElementConverter {
    kernel: Kernel,
    params: Params,
    /// The float rules around the conversion, when the rules have any
    /// ([`crate::rules::Rules::changes_floats`]).
    floats: Option<FloatRules>,
}

/// PTX's float rules, applied around the conversion: flush a binary32 operand's and result's
/// subnormals to zero of the same sign, then clamp the result ([`FloatResult`]).
#[derive(Clone, Copy, Debug)]
struct FloatRules {
    flush_src: bool,
    /// double -> float under `.ftz`: a double below float's smallest normal in magnitude is
    /// read as the zero of its sign, so that a result tiny *before* rounding is flushed (what
    /// sm_90 does: `docs/ptx.md`).
    flush_tiny_double: bool,
    flush_dst: bool,
    result: FloatResult,
    dst: ScalarType,
    /// The source's sign bit ([`FloatResult::Magnitude`] clears it).
    src_sign: u64,
}

impl FloatRules {
    fn apply(&self, kernel: Kernel, params: &Params, x: u64) -> ElementResult {
        if self.result == FloatResult::Magnitude {
            // E8M0 of |x| ("Input number's absolute value is rounded to the closest power of
            // two"); a zero clipped to 2^-127 ("Rounded results that are smaller than ...
            // 2^-127 are then clipped to 2^-127"), as every magnitude below it already is.
            let magnitude = x & !self.src_sign;
            return if magnitude == 0 {
                ElementResult {
                    bits: 0,
                    ..kernel(params, magnitude)
                }
            } else {
                kernel(params, magnitude)
            };
        }
        let x = if self.flush_src {
            flush_subnormal(x)
        } else {
            x
        };
        let x = if self.flush_tiny_double {
            flush_below_float_min(x)
        } else {
            x
        };
        let mut out = kernel(params, x);
        if self.flush_dst {
            out.bits = flush_subnormal(out.bits);
        }
        // FP6's and FP4's codes (sign in bit 5 or 3, no NaN): `.relu` "clamps the result to 0
        // if negative".
        if matches!(
            self.dst,
            ScalarType::Fp6E2M3 | ScalarType::Fp6E3M2 | ScalarType::Fp4E2M1
        ) {
            let sign = if self.dst == ScalarType::Fp4E2M1 {
                0x08
            } else {
                0x20
            };
            if self.result == FloatResult::Relu && out.bits & sign != 0 {
                out.bits = 0;
            }
            return out;
        }
        // tf32: the 19-bit format at the top of its word.
        if self.dst == ScalarType::Tf32 {
            out.bits = match self.result {
                FloatResult::Relu => relu::<Tf32>(out.bits >> 13) << 13,
                _ => out.bits,
            };
            return out;
        }
        out.bits = match self.result {
            FloatResult::Rounded => out.bits,
            FloatResult::UnitInterval => for_format!(self.dst, T => unit_interval::<T>(out.bits)),
            FloatResult::Relu => for_format!(self.dst, T => relu::<T>(out.bits)),
            FloatResult::CanonicalNan => {
                for_format!(self.dst, T => canonical_nan::<T>(out.bits))
            }
            FloatResult::Magnitude => unreachable!("returned above"),
        };
        out
    }
}

/// A binary32 subnormal as the zero of its sign; every other value as it is (PTX `.ftz`).
fn flush_subnormal(bits: u64) -> u64 {
    if Single::from_bits(u128::from(bits)).is_denormal() {
        bits & 0x8000_0000
    } else {
        bits
    }
}

/// A double whose magnitude is below float's smallest normal, 2^-126, as the zero of its sign;
/// every other value (NaN included) as it is. Compared on soft-float, not on the bits.
fn flush_below_float_min(bits: u64) -> u64 {
    let x = Double::from_bits(u128::from(bits));
    let float_min = Double::from_bits(0x3810_0000_0000_0000);
    if !x.is_nan() && x.abs() < float_min {
        bits & (1 << 63)
    } else {
        bits
    }
}

/// PTX `.sat` into a float: "limits the result to the range [0.0, 1.0]. NaN results are
/// flushed to positive zero." Every negative value, -0.0 included, gives +0.0.
fn unit_interval<T: Float>(bits: u64) -> u64 {
    let v = T::from_bits(u128::from(bits));
    let one = T::from_u128(1).value;
    if v.is_nan() || v.is_negative() {
        0
    } else if v.partial_cmp(&one) == Some(std::cmp::Ordering::Greater) {
        one.to_bits() as u64
    } else {
        bits
    }
}

/// PTX `.relu`: "clamps the result to 0 if negative. NaN results are converted to canonical
/// NaN", the positive NaN with every payload bit set (clconv's reading); -0.0 gives +0.0.
fn relu<T: Float>(bits: u64) -> u64 {
    let v = T::from_bits(u128::from(bits));
    if v.is_nan() {
        (1u64 << (T::BITS - 1)) - 1
    } else if v.is_negative() {
        0
    } else {
        bits
    }
}

/// `_nancanon` (NVIDIA's `cvt` between `.f32`, `.f16` and `.bf16` on sm_90, measured): every
/// NaN result is the positive NaN with every payload bit set; every other value as it is.
fn canonical_nan<T: Float>(bits: u64) -> u64 {
    if T::from_bits(u128::from(bits)).is_nan() {
        (1u64 << (T::BITS - 1)) - 1
    } else {
        bits
    }
}

type Kernel = fn(&Params, u64) -> ElementResult;

#[derive(Clone, Copy, Debug)]
struct Params {
    src_mask: u64,
    src_bits: u32,
    src_signed: bool,
    dst_mask: u64,
    min: i128,
    max: i128,
    saturate: bool,
    round: Round,
    /// True when the language leaves a NaN's conversion to an integer undefined although the
    /// conversion saturates (WGSL: "an indeterminate value").
    nan_undefined: bool,
    /// What NaN gives into an integer (0, or PTX's `1 << (width - 1)`).
    nan_bits: u64,
}

impl ElementConverter {
    /// The converter for one element of `conv` under the static rounding mode `static_mode`.
    ///
    /// ```
    /// use clconv::reference::ElementConverter;
    /// use clconv::{Conversion, Extensions, Rounding, ScalarType, VectorType};
    /// let c = Conversion::new(
    ///     VectorType::scalar(ScalarType::Double),
    ///     VectorType::scalar(ScalarType::Float),
    ///     false,
    ///     None,
    ///     Extensions::default(),
    /// )
    /// .unwrap();
    /// // DBL_MAX under the static mode rtz: FLT_MAX, not infinity.
    /// let conv = ElementConverter::new(&c, Rounding::Rtz);
    /// assert_eq!(conv.convert(0x7fef_ffff_ffff_ffff).bits, 0x7f7f_ffff);
    /// ```
    pub fn new(conv: &Conversion, static_mode: Rounding) -> ElementConverter {
        let src = conv.src().elem;
        let dst = conv.dst().elem;
        let (min, max) = match conv.rules().out_of_range {
            OutOfRange::NearestInSource if src.is_float() && dst.is_integer() => {
                for_format!(src, F => nearest_in_source::<F>(dst))
            }
            _ => (dst.int_min().unwrap_or(0), dst.int_max().unwrap_or(0)),
        };
        let params = Params {
            src_mask: mask(src.bits()),
            src_bits: src.bits(),
            src_signed: src.is_signed_integer(),
            dst_mask: mask(dst.bits()),
            min,
            max,
            saturate: conv.saturate(),
            // PTX `cvt.rna` (into `.tf32` from `.f32` only): "rounds to nearest, ties away
            // from zero" (PTX ISA §6.5.2, Table 17), IEEE 754's roundTiesToAway.
            round: match conv.effective_rounding(static_mode) {
                Rounding::Rte if conv.rules().ties_away => Round::NearestTiesToAway,
                r => apfloat_round(r),
            },
            nan_undefined: conv.rules().out_of_range == OutOfRange::NearestInSource,
            // PTX, "Integer Notes" of cvt: "1 << (BitWidth(dst) - 1)" where it is not zero.
            nan_bits: match conv.rules().nan {
                crate::rules::NanToInteger::HighBit => 1u64 << (dst.bits().max(1) - 1),
                _ => 0,
            },
        };
        let kernel: Kernel = if src == dst {
            identity
        } else if let Some(kernel) = narrow::kernel(src, dst) {
            kernel
        } else if src.is_bool() {
            if dst.is_float() {
                for_format!(dst, F => from_bool::<F> as Kernel)
            } else {
                from_bool_to_integer
            }
        } else if dst.is_bool() {
            if src.is_float() {
                for_format!(src, F => float_to_bool::<F> as Kernel)
            } else {
                integer_to_bool
            }
        } else {
            match (src.is_float(), dst.is_float()) {
                (false, false) => int_to_int,
                (true, false) => for_format!(src, F => float_to_int::<F> as Kernel),
                (false, true) => for_format!(dst, F => int_to_float::<F> as Kernel),
                (true, true) => {
                    for_format!(src, S => for_format!(dst, T => float_to_float::<S, T> as Kernel))
                }
            }
        };
        let rules = conv.rules();
        let floats = rules.changes_floats().then_some(FloatRules {
            flush_src: rules.flush_float_subnormals && src == ScalarType::Float,
            flush_tiny_double: rules.flush_float_subnormals
                && (src, dst) == (ScalarType::Double, ScalarType::Float),
            flush_dst: rules.flush_float_subnormals && dst == ScalarType::Float,
            result: rules.float_result,
            dst,
            src_sign: 1u64 << (src.bits().max(1) - 1),
        });
        ElementConverter {
            kernel,
            params,
            floats,
        }
    }

    /// Converts one element, as [`convert_element`] does.
    ///
    /// ```
    /// use clconv::reference::ElementConverter;
    /// use clconv::{Conversion, Extensions, Rounding, ScalarType, VectorType};
    /// let c = Conversion::new(
    ///     VectorType::scalar(ScalarType::Int),
    ///     VectorType::scalar(ScalarType::UChar),
    ///     false,
    ///     None,
    ///     Extensions::default(),
    /// )
    /// .unwrap();
    /// assert_eq!(ElementConverter::new(&c, Rounding::Rte).convert(300).bits, 44); // wraps
    /// ```
    #[inline]
    pub fn convert(&self, src_bits: u64) -> ElementResult {
        let x = src_bits & self.params.src_mask;
        match &self.floats {
            None => (self.kernel)(&self.params, x),
            Some(rules) => rules.apply(self.kernel, &self.params, x),
        }
    }
}

const fn mask(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

fn apfloat_round(r: Rounding) -> Round {
    match r {
        Rounding::Rte => Round::NearestTiesToEven,
        Rounding::Rtz => Round::TowardZero,
        Rounding::Rtp => Round::TowardPositive,
        Rounding::Rtn => Round::TowardNegative,
    }
}

fn defined(bits: u64) -> ElementResult {
    ElementResult {
        bits,
        implementation_defined: false,
    }
}

impl Params {
    /// Parameters for a float -> float kernel called directly (the integer fields unused).
    fn for_floats() -> Params {
        Params {
            src_mask: u64::MAX,
            src_bits: 64,
            src_signed: false,
            dst_mask: u64::MAX,
            min: 0,
            max: 0,
            saturate: false,
            round: Round::NearestTiesToEven,
            nan_undefined: false,
            nan_bits: 0,
        }
    }

    #[inline]
    fn int_value(&self, bits: u64) -> i128 {
        if self.src_signed {
            let shift = 64 - self.src_bits;
            ((bits << shift) as i64 >> shift) as i128
        } else {
            bits as i128
        }
    }
}

/// Calls `$body` with the type parameter `$f` bound to the soft-float format of the floating
/// type `$t` (an expression of type `ScalarType`).
macro_rules! for_format {
    ($t:expr, $f:ident => $body:expr) => {
        match $t {
            ScalarType::Half => {
                type $f = Half;
                $body
            }
            ScalarType::Float => {
                type $f = Single;
                $body
            }
            ScalarType::BFloat => {
                type $f = BFloat;
                $body
            }
            ScalarType::Fp8E4M3 => {
                type $f = Float8E4M3FN;
                $body
            }
            ScalarType::Fp8E5M2 => {
                type $f = Float8E5M2;
                $body
            }
            _ => {
                type $f = Double;
                $body
            }
        }
    };
}
use for_format;

/// The floating formats, with the field widths the bit-level NaN rule needs.
///
/// The formats are those of their definitions: IEEE-754 binary16, binary32 and binary64;
/// bfloat16 (binary32's sign and exponent, 7 fraction bits; "not an IEEE kind but uses the same
/// semantics", as rustc_apfloat puts it); the OCP 8-bit formats ("OCP 8-bit Floating Point
/// Specification (OFP8)", rev. 1.0, section 5.1): E5M2 follows IEEE-754's conventions
/// (infinities S.11111.00, NaNs S.11111.{01,10,11}); E4M3 has no infinities and its only NaNs
/// are S.1111.111, so exponent 1111 with the other fractions holds normal numbers (up to 448).
trait Format:
    Float
    + FloatConvert<Half>
    + FloatConvert<Single>
    + FloatConvert<Double>
    + FloatConvert<BFloat>
    + FloatConvert<Float8E4M3FN>
    + FloatConvert<Float8E5M2>
{
    const WIDTH: u32;
    const MANTISSA_BITS: u32;
    /// E4M3: no infinity, one NaN per sign (all exponent and fraction bits set).
    const NAN_ONLY: bool = false;
    const EXP_MASK: u64 = mask(Self::WIDTH - 1 - Self::MANTISSA_BITS);
    const BIAS: u64 = Self::EXP_MASK >> 1;
    const MANTISSA_MASK: u64 = mask(Self::MANTISSA_BITS);
    /// The magnitude bits: all but the sign.
    const MAGNITUDE_MASK: u64 = mask(Self::WIDTH - 1);
    /// The largest finite magnitude's bits.
    const MAX_FINITE: u64 = if Self::NAN_ONLY {
        Self::MAGNITUDE_MASK - 1
    } else {
        (Self::EXP_MASK << Self::MANTISSA_BITS) - 1
    };

    fn is_nan_bits(bits: u64) -> bool {
        if Self::NAN_ONLY {
            bits & Self::MAGNITUDE_MASK == Self::MAGNITUDE_MASK
        } else {
            bits & Self::MAGNITUDE_MASK > Self::EXP_MASK << Self::MANTISSA_BITS
        }
    }

    fn is_infinite_bits(bits: u64) -> bool {
        !Self::NAN_ONLY && bits & Self::MAGNITUDE_MASK == Self::EXP_MASK << Self::MANTISSA_BITS
    }
}

/// tf32 (NVIDIA's TensorFloat-32: binary32's sign and 8-bit exponent, 10 fraction bits; PTX ISA,
/// "Alternate Floating-Point Data Formats") as `rustc_apfloat`'s IEEE-754 semantics of 19 bits.
/// In a buffer it is the top 19 bits of 32 ([`narrow`]).
struct Tf32S;

impl rustc_apfloat::ieee::Semantics for Tf32S {
    const BITS: usize = 19;
    const EXP_BITS: usize = 8;
}

type Tf32 = rustc_apfloat::ieee::IeeeFloat<Tf32S>;

impl Format for Tf32 {
    const WIDTH: u32 = 19;
    const MANTISSA_BITS: u32 = 10;
}

impl Format for BFloat {
    const WIDTH: u32 = 16;
    const MANTISSA_BITS: u32 = 7;
}

impl Format for Float8E4M3FN {
    const WIDTH: u32 = 8;
    const MANTISSA_BITS: u32 = 3;
    const NAN_ONLY: bool = true;
}

impl Format for Float8E5M2 {
    const WIDTH: u32 = 8;
    const MANTISSA_BITS: u32 = 2;
}

impl Format for Half {
    const WIDTH: u32 = 16;
    const MANTISSA_BITS: u32 = 10;
}

impl Format for Single {
    const WIDTH: u32 = 32;
    const MANTISSA_BITS: u32 = 23;
}

impl Format for Double {
    const WIDTH: u32 = 64;
    const MANTISSA_BITS: u32 = 52;
}

fn identity(_: &Params, bits: u64) -> ElementResult {
    defined(bits)
}

// bool, as every shader language defines its conversions (the `docs/` page of each quotes
// them): WGSL 17.1.2, `bool(e)`: "The result is false if e is a zero value (or -0.0 for
// floating point types) and true otherwise"; `f32(e)`: "If T is bool, the result is 1.0f if e
// is true and 0.0f otherwise". GLSL 4.60, 5.4.1: "0 and 0.0 are converted to false, and
// non-zero values are converted to true", "false is converted to 0 or 0.0, and true is
// converted to 1 or 1.0". HLSL [Conv.bool]: "A zero value is converted to false; all other
// values are converted to true". A bool element in a buffer is a byte: 0 false, any other true.

/// bool -> integer: 1 or 0.
fn from_bool_to_integer(_: &Params, bits: u64) -> ElementResult {
    defined(u64::from(bits != 0))
}

/// bool -> float: the format's 1.0 or +0.0, converted exactly from the integer.
fn from_bool<F: Format>(_: &Params, bits: u64) -> ElementResult {
    let one = F::from_i128_r(i128::from(bits != 0), Round::NearestTiesToEven).value;
    defined(one.to_bits() as u64)
}

/// integer -> bool: true unless zero.
fn integer_to_bool(_: &Params, bits: u64) -> ElementResult {
    defined(u64::from(bits != 0))
}

/// float -> bool: false for +0.0 and -0.0, true for everything else, NaN included (NaN is
/// not zero).
fn float_to_bool<F: Format>(_: &Params, bits: u64) -> ElementResult {
    defined(u64::from(!F::from_bits(u128::from(bits)).is_zero()))
}

fn int_to_int(p: &Params, bits: u64) -> ElementResult {
    let v = p.int_value(bits);
    let v = if p.saturate { v.clamp(p.min, p.max) } else { v };
    // Two's complement truncation is both the wrap and the encoding of a clamped negative.
    defined(v as u64 & p.dst_mask)
}

fn float_to_int<F: Format>(p: &Params, bits: u64) -> ElementResult {
    let exp = (bits >> F::MANTISSA_BITS) & F::EXP_MASK;
    let negative = bits >> (F::WIDTH - 1) != 0;
    let value = if F::is_nan_bits(bits) {
        // NaN: defined as 0 here, not taken from the soft-float, whose choice is its own.
        None
    } else if F::is_infinite_bits(bits) || exp >= F::BIAS + 64 {
        // Infinite or |x| >= 2^64 is beyond every destination: saturate by sign. Deciding
        // this before converting keeps the soft-float call within i128, where it is exact.
        Some(if negative { i128::MIN } else { i128::MAX })
    } else {
        let mut exact = false;
        Some(
            F::from_bits(u128::from(bits))
                .to_i128_r(128, p.round, &mut exact)
                .value,
        )
    };
    match value {
        None => ElementResult {
            bits: p.nan_bits,
            implementation_defined: !p.saturate || p.nan_undefined,
        },
        Some(v) => {
            let clamped = v.clamp(p.min, p.max);
            ElementResult {
                bits: clamped as u64 & p.dst_mask,
                implementation_defined: !p.saturate && clamped != v,
            }
        }
    }
}

/// The range WGSL's rule clamps a float `F` -> integer `dst` conversion into, from its words
/// (WGSL, "Floating Point Conversion"): out of range, "the value in T closest to truncate(X)
/// and also exactly representable in the original floating point type". Those values form an
/// interval of T: its upper end is T's MAX converted to `F` toward zero (the largest `F` value
/// not above MAX; a MAX beyond `F`'s range gives `F`'s largest finite value), its lower end
/// MIN converted likewise (toward zero: the `F` value nearest MIN not below it).
fn nearest_in_source<F: Format>(dst: ScalarType) -> (i128, i128) {
    let bound = |v: i128| {
        let f = F::from_i128_r(v, Round::TowardZero).value;
        let mut exact = false;
        f.to_i128_r(128, Round::TowardZero, &mut exact).value
    };
    let (min, max) = (dst.int_min().unwrap_or(0), dst.int_max().unwrap_or(0));
    (bound(min), bound(max))
}

fn int_to_float<F: Format>(p: &Params, bits: u64) -> ElementResult {
    let v = p.int_value(bits);
    // from_i128_r rounds the magnitude with the mirrored mode for negatives, which is exactly
    // IEEE's directed rounding; 0 goes through the positive path and gives +0.0.
    if F::NAN_ONLY {
        let magnitude = Double::from_u128_r(v.unsigned_abs(), Round::NearestTiesToEven).value;
        if let Some(bits) = nan_only_beyond::<F>(p, v < 0, magnitude) {
            return defined(bits);
        }
    }
    let r = F::from_i128_r(v, p.round).value.to_bits() as u64;
    defined(overflow_rule::<F>(p, v < 0, false, r))
}

fn float_to_float<S: Format + FloatConvert<T>, T: Format>(p: &Params, bits: u64) -> ElementResult {
    if S::is_nan_bits(bits) {
        return defined(nan_to::<S, T>(bits));
    }
    let negative = bits >> (S::WIDTH - 1) != 0;
    let mut loses_info = false;
    let x = S::from_bits(u128::from(bits));
    if T::NAN_ONLY && !S::is_infinite_bits(bits) {
        let magnitude: Double = x
            .abs()
            .convert_r(Round::NearestTiesToEven, &mut loses_info)
            .value;
        if let Some(bits) = nan_only_beyond::<T>(p, negative, magnitude) {
            return defined(bits);
        }
    }
    let r: T = x.convert_r(p.round, &mut loses_info).value;
    defined(overflow_rule::<T>(
        p,
        negative,
        S::is_infinite_bits(bits),
        r.to_bits() as u64,
    ))
}

/// A non-NaN value's result `r` in the float format `T`, after the rules that the formats
/// beyond OpenCL add to IEEE-754's rounding:
///
/// - E4M3 has no infinity: where IEEE-754 rounding gives one (an overflow rounded away from
///   zero, or an infinite source), the result is the NaN of the value's sign, S.1111.111
///   (OFP8 rev. 1.0, 5.2: without saturation, values beyond the range "are converted to NaN");
///   where IEEE-754 gives the largest finite value (an overflow rounded toward zero: rtz, rtp of
///   a negative value, rtn of a positive one), that value. OFP8 defines nearest-even only; the
///   directed modes follow IEEE-754 7.4 here, as for the other formats. (The soft-float gives
///   E4M3's NaN for some of these, so the rule is applied on its result's bits.)
/// - `_sat` (`p.saturate`, legal only for bfloat, fp8e4m3 and fp8e5m2 destinations): anything
///   beyond the largest finite magnitude, an infinite source included, gives the largest
///   finite value of its sign (SPV_EXT_float8's `SaturatedToLargestFloat8NormalConversionEXT`:
///   "out-of-range values and infinity are converted to largest representable finite value";
///   PTX `cvt .satfinite`). Where the mode rounds an overflow toward zero it is that value
///   already.
fn overflow_rule<T: Format>(p: &Params, negative: bool, infinite_source: bool, r: u64) -> u64 {
    let sign = u64::from(negative) << (T::WIDTH - 1);
    let beyond = T::is_infinite_bits(r) || T::is_nan_bits(r);
    if !beyond {
        return r;
    }
    if p.saturate {
        return sign | T::MAX_FINITE;
    }
    if !T::NAN_ONLY {
        return r;
    }
    let toward_zero = match p.round {
        Round::TowardZero => true,
        Round::TowardPositive => negative,
        Round::TowardNegative => !negative,
        _ => false,
    };
    if toward_zero && !infinite_source {
        sign | T::MAX_FINITE
    } else {
        sign | T::MAGNITUDE_MASK
    }
}

/// E4M3 beyond its largest finite magnitude `M` (448), from IEEE-754's rounding with an
/// unbounded exponent: the value rounds to `M` or to `M + ulp` (480, which E4M3 lacks) or
/// beyond. Toward zero (rtz, rtp of a negative value, rtn of a positive one) it is `M`; away
/// from zero, beyond `M`: NaN; to nearest, `M` up to the halfway point `M + ulp / 2` (464,
/// a tie to even: `M`'s fraction 110 is even) and NaN past it; `_sat`: `M`. `None` for
/// magnitudes up to `M` (the soft-float's rounding is IEEE-754's there). `magnitude` is the
/// source's magnitude, exact in double (or rounded to nearest, for integers beyond 2^53, far
/// beyond `M`).
fn nan_only_beyond<T: Format>(p: &Params, negative: bool, magnitude: Double) -> Option<u64> {
    let mut loses_info = false;
    let mut to_double = |bits: u64| -> Double {
        T::from_bits(u128::from(bits))
            .convert_r(Round::NearestTiesToEven, &mut loses_info)
            .value
    };
    let max = to_double(T::MAX_FINITE);
    if magnitude <= max {
        return None;
    }
    let below = to_double(T::MAX_FINITE - 1);
    let halfway = (max
        + (max - below)
            .value
            .div_r(Double::from_u128(2).value, Round::NearestTiesToEven)
            .value)
        .value;
    let sign = u64::from(negative) << (T::WIDTH - 1);
    let toward_zero = match p.round {
        Round::TowardZero => true,
        Round::TowardPositive => negative,
        Round::TowardNegative => !negative,
        _ => magnitude <= halfway,
    };
    Some(if p.saturate || toward_zero {
        sign | T::MAX_FINITE
    } else {
        sign | T::MAGNITUDE_MASK
    })
}

/// The NaN rule of the module documentation, on the bits. E4M3's only NaN is S.1111.111: a
/// NaN into E4M3 keeps its sign alone; E4M3's NaN into another format has the fraction 111.
fn nan_to<S: Format, T: Format>(bits: u64) -> u64 {
    let sign = bits >> (S::WIDTH - 1);
    if T::NAN_ONLY {
        return (sign << (T::WIDTH - 1)) | T::MAGNITUDE_MASK;
    }
    let mantissa = bits & S::MANTISSA_MASK;
    let payload = if S::MANTISSA_BITS >= T::MANTISSA_BITS {
        mantissa >> (S::MANTISSA_BITS - T::MANTISSA_BITS)
    } else {
        mantissa << (T::MANTISSA_BITS - S::MANTISSA_BITS)
    };
    let quiet = 1u64 << (T::MANTISSA_BITS - 1);
    (sign << (T::WIDTH - 1)) | (T::EXP_MASK << T::MANTISSA_BITS) | payload | quiet
}

/// Reinterprets one vector: `src` holds the operand's bytes, `dst` receives the result's, each
/// as one vector sits in a buffer of `layout` ([`buffer::bytes_per_vector`] bytes: 3 elements for
/// a packed 3-component vector, 4 for an aligned one).
///
/// A 3-component operand's padding is read from `src` in the aligned layout and is zero in the
/// packed one; a 3-component result's padding is written as zero in the aligned layout.
///
/// `src` and `dst` must each be exactly one vector long, else a [`BufferError`].
///
/// ```
/// use clconv::{reference, Extensions, Layout, Reinterpretation, ScalarType, VectorType, Width};
/// let r = Reinterpretation::new(
///     VectorType::new(ScalarType::Int, Width::W3),
///     VectorType::new(ScalarType::Float, Width::W4),
///     Extensions::default(),
/// )
/// .unwrap();
/// let src = [1u8, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd];
/// let mut dst = [0xffu8; 16];
/// reference::reinterpret_vector(&r, Layout::Aligned, &src, &mut dst).unwrap();
/// assert_eq!(dst, src); // the stored padding lane comes through
/// reference::reinterpret_vector(&r, Layout::Packed, &src[..12], &mut dst).unwrap();
/// assert_eq!(dst[12..], [0, 0, 0, 0]); // packed: nothing stored, so zero
/// assert!(reference::reinterpret_vector(&r, Layout::Packed, &src, &mut dst).is_err());
/// ```
pub fn reinterpret_vector(
    r: &Reinterpretation,
    layout: Layout,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BufferError> {
    let vectors = buffer::vector_count(&Request::Reinterpret(*r), layout, src.len(), dst.len())?;
    if vectors != 1 {
        // A whole number of vectors, but not one: report it as a wrong destination size.
        return Err(BufferError::DestinationSize {
            bytes: dst.len(),
            vectors,
            ty: r.dst(),
            expected: buffer::bytes_per_vector(r.dst(), layout),
            per_vector: buffer::bytes_per_vector(r.dst(), layout),
            layout: layout.name(),
        });
    }
    reinterpret_one(r, layout, src, dst);
    Ok(())
}

/// [`reinterpret_vector`] on slices already known to be one vector each.
fn reinterpret_one(r: &Reinterpretation, layout: Layout, src: &[u8], dst: &mut [u8]) {
    let src_len = buffer::bytes_per_vector(r.src(), layout);
    // The result's own elements, without an aligned 3-component result's padding lane.
    let value_len = r.dst().elem.bytes() * r.dst().lanes();
    let copied = src_len.min(value_len);
    dst[..copied].copy_from_slice(&src[..copied]);
    dst[copied..].fill(0);
}

/// What an evaluation found besides the results.
///
/// ```
/// use clconv::reference::Report;
/// let r = Report::default();
/// assert_eq!(r.vectors, 0);
/// assert!(r.implementation_defined.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Vectors converted.
    pub vectors: usize,
    /// Indices (into the destination's elements, counting an aligned 3-component vector's
    /// padding slot) whose result is implementation-defined, in increasing order.
    pub implementation_defined: Vec<usize>,
}

/// Evaluates `request` over whole buffers with the default static rounding mode (rte).
///
/// ```
/// use clconv::{reference, Conversion, Extensions, Layout, Rounding, ScalarType, VectorType, Width};
/// let c = Conversion::new(
///     VectorType::new(ScalarType::Float, Width::W2),
///     VectorType::new(ScalarType::Int, Width::W2),
///     false,
///     None,
///     Extensions::default(),
/// )
/// .unwrap();
/// let src: Vec<u8> = [0xc0b0_0000u32, 0x7fc0_0000] // -5.5f, NaN
///     .iter()
///     .flat_map(|b| b.to_le_bytes())
///     .collect();
/// let mut dst = [0u8; 8];
/// let report = reference::evaluate(&c.into(), Layout::Packed, &src, &mut dst).unwrap();
/// assert_eq!(dst, [0xfb, 0xff, 0xff, 0xff, 0, 0, 0, 0]); // -5 (rtz), NaN -> 0
/// assert_eq!(report.implementation_defined, vec![1]);
/// ```
pub fn evaluate(
    request: &Request,
    layout: Layout,
    src: &[u8],
    dst: &mut [u8],
) -> Result<Report, BufferError> {
    evaluate_with_mode(request, layout, Rounding::Rte, src, dst)
}

/// Evaluates `request` over whole buffers under the static rounding mode `static_mode`.
///
/// The buffers must hold whole vectors in `layout`, the destination as many as the source
/// ([`buffer::vector_count`]); otherwise the error says why and `dst` is untouched.
///
/// ```
/// use clconv::{reference, Conversion, Extensions, Layout, Rounding, ScalarType, VectorType};
/// let c = Conversion::new(
///     VectorType::scalar(ScalarType::Int),
///     VectorType::scalar(ScalarType::Float),
///     false,
///     None,
///     Extensions::default(),
/// )
/// .unwrap();
/// let src = 16_777_217i32.to_le_bytes();
/// let mut dst = [0u8; 4];
/// reference::evaluate_with_mode(&c.into(), Layout::Packed, Rounding::Rtp, &src, &mut dst).unwrap();
/// assert_eq!(u32::from_le_bytes(dst), 0x4b80_0001); // 16777218.0f
/// assert!(reference::evaluate(&c.into(), Layout::Packed, &src[..3], &mut dst).is_err());
/// ```
pub fn evaluate_with_mode(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    src: &[u8],
    dst: &mut [u8],
) -> Result<Report, BufferError> {
    let vectors = buffer::vector_count(request, layout, src.len(), dst.len())?;
    let mut report = Report {
        vectors,
        implementation_defined: Vec::new(),
    };
    match request {
        Request::Convert(c) => {
            let shape = Shape {
                converter: ElementConverter::new(c, static_mode),
                lanes: c.src().lanes(),
                src_stride: layout.stride(c.src().width),
                dst_stride: layout.stride(c.dst().width),
            };
            let run = match (c.src().elem.bytes(), c.dst().elem.bytes()) {
                (1, 1) => convert_buffers::<1, 1>,
                (1, 2) => convert_buffers::<1, 2>,
                (1, 4) => convert_buffers::<1, 4>,
                (1, _) => convert_buffers::<1, 8>,
                (2, 1) => convert_buffers::<2, 1>,
                (2, 2) => convert_buffers::<2, 2>,
                (2, 4) => convert_buffers::<2, 4>,
                (2, _) => convert_buffers::<2, 8>,
                (4, 1) => convert_buffers::<4, 1>,
                (4, 2) => convert_buffers::<4, 2>,
                (4, 4) => convert_buffers::<4, 4>,
                (4, _) => convert_buffers::<4, 8>,
                (_, 1) => convert_buffers::<8, 1>,
                (_, 2) => convert_buffers::<8, 2>,
                (_, 4) => convert_buffers::<8, 4>,
                (_, _) => convert_buffers::<8, 8>,
            };
            run(&shape, src, dst, &mut report.implementation_defined);
        }
        Request::Reinterpret(r) => {
            let src_len = buffer::bytes_per_vector(r.src(), layout);
            let dst_len = buffer::bytes_per_vector(r.dst(), layout);
            for (s, d) in src.chunks_exact(src_len).zip(dst.chunks_exact_mut(dst_len)) {
                reinterpret_one(r, layout, s, d);
            }
        }
        Request::Chain(chain) => evaluate_chain(chain, layout, static_mode, src, dst),
    }
    Ok(report)
}

/// A chain over whole buffers (already checked): each vector's lanes read from its operand's
/// elements, taken through the steps as lanes, written as the result's elements (an aligned
/// 3-component result's padding as zero). A conversion step's implementation-defined results
/// are not reported: every chain comes from a language that defines them.
fn evaluate_chain(
    chain: &Chain,
    layout: Layout,
    static_mode: Rounding,
    src: &[u8],
    dst: &mut [u8],
) {
    let converters: Vec<Option<ElementConverter>> = chain
        .steps()
        .map(|s| match s {
            Step::Convert(c) => Some(ElementConverter::new(c, static_mode)),
            _ => None,
        })
        .collect();
    let (from, to) = (chain.src(), chain.dst());
    let src_len = buffer::bytes_per_vector(from, layout);
    let dst_len = buffer::bytes_per_vector(to, layout);
    for (s, d) in src.chunks_exact(src_len).zip(dst.chunks_exact_mut(dst_len)) {
        let mut lanes = read_lanes(s, from);
        for (step, converter) in chain.steps().zip(&converters) {
            lanes = match (step, converter) {
                (_, Some(c)) => lanes.iter().map(|&x| c.convert(x).bits).collect(),
                (Step::Reinterpret(r), None) => {
                    // The lanes' bytes in order (a chain's 3-component reinterpretation keeps
                    // the element size, so no padding moves), read as the result's lanes.
                    let mut bytes = Vec::new();
                    for &x in &lanes {
                        bytes.extend_from_slice(&x.to_le_bytes()[..r.src().elem.bytes()]);
                    }
                    read_lanes(&bytes, r.dst())
                }
                (Step::Lanes(m), None) => (0..m.dst().lanes())
                    .map(|i| {
                        if i < m.taken() {
                            lanes[m.first() + i]
                        } else {
                            0
                        }
                    })
                    .collect(),
                // Code 2i in the low nibble of byte i, 2i + 1 in the high one.
                (Step::Fp4(p), None) if p.packs() => lanes
                    .chunks(2)
                    .map(|pair| (pair[0] & 0x0f) | (pair[1] & 0x0f) << 4)
                    .collect(),
                (Step::Fp4(_), None) => lanes
                    .iter()
                    .flat_map(|&byte| [byte & 0x0f, byte >> 4 & 0x0f])
                    .collect(),
                (Step::Convert(_), None) => unreachable!("every conversion step has a converter"),
            };
        }
        d.fill(0);
        let size = to.elem.bytes();
        for (i, x) in lanes.iter().enumerate() {
            d[i * size..(i + 1) * size].copy_from_slice(&x.to_le_bytes()[..size]);
        }
    }
}

/// The `ty.lanes()` elements at the start of `bytes`, each as its bits.
fn read_lanes(bytes: &[u8], ty: VectorType) -> Vec<u64> {
    let size = ty.elem.bytes();
    (0..ty.lanes())
        .map(|i| {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(&bytes[i * size..(i + 1) * size]);
            u64::from_le_bytes(raw)
        })
        .collect()
}

struct Shape {
    converter: ElementConverter,
    lanes: usize,
    src_stride: usize,
    dst_stride: usize,
}

/// Element sizes are const parameters so that each load and store is one machine access.
fn convert_buffers<const S: usize, const D: usize>(
    shape: &Shape,
    src: &[u8],
    dst: &mut [u8],
    flagged: &mut Vec<usize>,
) {
    let vectors = src.chunks_exact(shape.src_stride * S);
    let outputs = dst.chunks_exact_mut(shape.dst_stride * D);
    for (v, (s, d)) in vectors.zip(outputs).enumerate() {
        let (values, padding) = d.split_at_mut(shape.lanes * D);
        for (lane, (input, output)) in s
            .chunks_exact(S)
            .zip(values.chunks_exact_mut(D))
            .enumerate()
        {
            let mut raw = [0u8; 8];
            raw[..S].copy_from_slice(input);
            let r = shape.converter.convert(u64::from_le_bytes(raw));
            output.copy_from_slice(&r.bits.to_le_bytes()[..D]);
            if r.implementation_defined {
                flagged.push(v * shape.dst_stride + lane);
            }
        }
        padding.fill(0);
    }
}
