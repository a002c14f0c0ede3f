//! The narrow formats ([`ScalarType::NARROW`]) as their definitions state them, independently of
//! the lowering: every code's value from its fields, and rounding into a format by comparing the
//! exact source value with the exact values of the codes around it.
//!
//! The definitions:
//!
//! - **FP4 E2M1, FP6 E2M3, FP6 E3M2**: OCP Microscaling Formats (MX) v1.0, section 5.3.3
//!   ("FP6 and FP4"): a sign, an exponent of 2 (bias 1), 2 (bias 1) or 3 (bias 3) bits, a
//!   mantissa of 1, 3 or 2 bits; exponent field 0 holds the subnormals `(-1)^S * 2^(1-bias) *
//!   0.M`, the others `(-1)^S * 2^(E-bias) * 1.M`; "FP6 and FP4 do not have encodings for
//!   Infs or NaNs". The largest values are 6.0, 7.5 and 28.0. Conversion into them, section
//!   6.3 (and the MX paper's Algorithm 1): nearest-even, and "normal numbers that exceed the
//!   representable range of the element format are clamped to the maximum representable value,
//!   preserving the sign". clconv clamps every overflow so, in every mode and with or without
//!   `_sat` (the formats have nothing else to give), an infinity included. A NaN, which the
//!   specification leaves to the implementation, gives the largest positive value (6.0, 7.5,
//!   28.0), as NVIDIA's hardware does (PTX ISA 9.1, `cvt` with `.e2m1x2`, `.e2m3x2`,
//!   `.e3m2x2`: "`NaN` results are converted to positive _MAX_NORM_"), and CUDA's `__nv_cvt_float_to_fp4`/`fp6`
//!   and ONNX's FLOAT4E2M1 cast (NaN -> 6); ml_dtypes gives -0 instead.
//! - **E4M3FNUZ, E5M2FNUZ** (LLVM's `Float8E4M3FNUZ`, `Float8E5M2FNUZ`, from Graphcore's
//!   "8-bit Numerical Formats for Deep Neural Networks", arXiv 2206.02915): exponent 4 bits
//!   (bias 8) or 5 bits (bias 16); "no infinity, no negative zero"; the one NaN is 0x80 (the
//!   sign bit alone); every other code is finite, the largest 240 (0x7f) and 57344. Conversion
//!   follows IEEE-754 in each mode with the format's exponent range; where IEEE-754 gives an
//!   infinity (an overflow rounded away from zero, an infinite source) the result is the NaN,
//!   and `_sat` gives the largest finite value of the sign instead (as for the OCP 8-bit
//!   formats: SPV_EXT_float8's saturating conversion, PTX's `.satfinite`). A zero result is
//!   +0 (there is no -0: a negative value rounding to zero gives 0x00). A NaN gives 0x80; the
//!   NaN 0x80 widens to the destination's quiet NaN with the sign bit set (0xffc00000 for
//!   float).
//!
//! - **E8M0** (OCP MX v1.0, 5.4.1: "an unsigned representation of a conventional biased
//!   Float32 exponent"; bias 127, "no representation for Inf", the one NaN 0xff; no zero, no
//!   sign): code c is 2^(c - 127), 2^-127 to 2^127. Into it, a positive value rounds by the
//!   mode to a power of two: rtz and rtn to the one at or below it, rtp to the one at or above
//!   it, rte to the nearer, a tie (1.5 * 2^e: every code's significand is 1, odd, so
//!   ties-to-even cannot choose) going up, as ml_dtypes and LLVM round it. A positive value
//!   below 2^-127 gives 2^-127 (0x00) in every mode (there is no zero to round to; ml_dtypes'
//!   rule). Past 2^127: the NaN where IEEE-754 gives an infinity, 2^127 (0xfe) where it rounds
//!   toward zero, and 0xfe for every overflow and +infinity under `_sat`. Zero, negative values
//!   and -infinity, which E8M0 cannot hold, give the NaN, or 2^-127 (0x00) under `_sat`
//!   (ml_dtypes: "NaN or saturate" to its lowest value). NaN gives 0xff; 0xff widens to the
//!   destination's positive quiet NaN (float 0x7fc00000).
//!
//! - **tf32** (PTX ISA, "Alternate Floating-Point Data Formats": "1 sign bit, 8 exponent bits
//!   and 10 mantissa bits"): binary32's IEEE-754 conventions with 10 fraction bits, converted as
//!   bfloat16 is ([`super::Tf32`], `rustc_apfloat`'s IEEE semantics): by the mode, overflow to
//!   infinity or the largest finite value by the mode (`_sat`: the largest finite value), NaN
//!   with its sign, top payload bits and the quiet bit. Its 19 bits are the top of a 32-bit
//!   word; the low 13 are ignored when read and zero when written.
//!
//! An element's code sits in the low bits of its byte (FP4 in bits 0-3, FP6 in bits 0-5); the
//! bits above are ignored when read and zero when written.

use super::{defined, ElementResult, Params};
use crate::types::{Rounding, ScalarType};
use rustc_apfloat::ieee::{BFloat, Double, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round};

/// A narrow format by its fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NarrowFormat {
    /// Bits of a code: 4, 6 or 8.
    pub width: u32,
    /// Mantissa (fraction) bits.
    pub fraction: u32,
    /// Exponent bias.
    pub bias: i32,
    /// True for the FNUZ formats: 0x80 is the NaN, no negative zero, every other code finite.
    /// False for FP4 and FP6: every code finite.
    pub fnuz: bool,
}

impl NarrowFormat {
    /// The fields of `t`, if it is a narrow format.
    pub(crate) const fn of(t: ScalarType) -> Option<NarrowFormat> {
        let (width, fraction, bias, fnuz) = match t {
            ScalarType::Fp4E2M1 => (4, 1, 1, false),
            ScalarType::Fp6E2M3 => (6, 3, 1, false),
            ScalarType::Fp6E3M2 => (6, 2, 3, false),
            ScalarType::Fp8E4M3Fnuz => (8, 3, 8, true),
            ScalarType::Fp8E5M2Fnuz => (8, 2, 16, true),
            _ => return None,
        };
        Some(NarrowFormat {
            width,
            fraction,
            bias,
            fnuz,
        })
    }

    fn sign_bit(self) -> u64 {
        1 << (self.width - 1)
    }

    /// The largest magnitude's code: every magnitude bit set.
    fn max_code(self) -> u64 {
        self.sign_bit() - 1
    }

    /// The value of the magnitude code `c` (which may be `max_code() + 1`: the power of two
    /// past the largest value, where rounding with an unbounded exponent would go next).
    fn magnitude(self, c: u64) -> f64 {
        let unit = 1u64 << self.fraction;
        let (significand, exponent) = if c < unit {
            (c, 1 - self.bias)
        } else {
            (unit + c % unit, (c / unit) as i32 - self.bias)
        };
        significand as f64 * 2f64.powi(exponent - self.fraction as i32)
    }

    /// The value of a code (the bits above the format's width ignored); `None` for the NaN.
    pub(crate) fn value(self, bits: u64) -> Option<f64> {
        let code = bits & ((1 << self.width) - 1);
        if self.fnuz && code == self.sign_bit() {
            return None;
        }
        let m = self.magnitude(code & self.max_code());
        Some(if code & self.sign_bit() != 0 { -m } else { m })
    }

    /// The code of the non-NaN value `x` (infinite or finite, exact in f64), rounded by
    /// `round`; `saturate` is `_sat`.
    pub(crate) fn encode(self, x: f64, round: Round, saturate: bool) -> u64 {
        let negative = x.is_sign_negative();
        let a = x.abs();
        let max = self.max_code();
        let beyond = self.magnitude(max + 1);
        // Away from zero for this sign: rtp for positive values, rtn for negative ones.
        let away = match round {
            Round::TowardPositive => !negative,
            Round::TowardNegative => negative,
            _ => false,
        };
        let magnitude = if a >= beyond {
            None
        } else {
            // The codes around a: value(k) <= a < value(k + 1), by bisection (the values
            // grow with the code).
            let (mut k, mut above) = (0, max + 1);
            while above - k > 1 {
                let mid = (k + above) / 2;
                if self.magnitude(mid) <= a {
                    k = mid;
                } else {
                    above = mid;
                }
            }
            let (lo, hi) = (self.magnitude(k), self.magnitude(k + 1));
            let c = if a == lo {
                k
            } else {
                match round {
                    Round::NearestTiesToEven => {
                        let mid = (lo + hi) / 2.0;
                        if a < mid || (a == mid && k % 2 == 0) {
                            k
                        } else {
                            k + 1
                        }
                    }
                    _ if away => k + 1,
                    _ => k,
                }
            };
            (c <= max).then_some(c)
        };
        let sign = if negative { self.sign_bit() } else { 0 };
        match magnitude {
            Some(0) if self.fnuz => 0,
            Some(c) => sign | c,
            // Overflow. IEEE-754 gives the largest finite value where the mode rounds toward
            // zero (rtz; rtp of a negative value; rtn of a positive one), and an infinity
            // elsewhere; an infinite source is an infinity.
            None => {
                let ieee_infinity = a.is_infinite()
                    || !matches!(round, Round::TowardZero)
                        && (away || round == Round::NearestTiesToEven);
                if !self.fnuz || saturate || !ieee_infinity {
                    sign | max
                } else {
                    self.sign_bit()
                }
            }
        }
    }

    /// What a NaN converts to: the FNUZ NaN, or FP4's and FP6's largest positive value.
    pub(crate) fn nan(self) -> u64 {
        if self.fnuz {
            self.sign_bit()
        } else {
            self.max_code()
        }
    }
}

/// A float format of a partner type ([`ScalarType::NARROW_PARTNERS`]) read into f64 (exact) and
/// written from it (rounded by the mode; exact for every value of a narrow format).
trait Partner: Float + FloatConvert<Double> {
    /// The partner's quiet NaN with the sign bit set: what the FNUZ NaN widens to.
    const NEGATIVE_QUIET_NAN: u64;
    /// The partner's positive quiet NaN: what E8M0's NaN widens to.
    const QUIET_NAN: u64;
}

impl Partner for Half {
    const NEGATIVE_QUIET_NAN: u64 = 0xfe00;
    const QUIET_NAN: u64 = 0x7e00;
}
impl Partner for Single {
    const NEGATIVE_QUIET_NAN: u64 = 0xffc0_0000;
    const QUIET_NAN: u64 = 0x7fc0_0000;
}
impl Partner for Double {
    const NEGATIVE_QUIET_NAN: u64 = 0xfff8_0000_0000_0000;
    const QUIET_NAN: u64 = 0x7ff8_0000_0000_0000;
}
impl Partner for BFloat {
    const NEGATIVE_QUIET_NAN: u64 = 0xffc0;
    const QUIET_NAN: u64 = 0x7fc0;
}

/// `bits` of `P` as an f64, `None` for a NaN.
fn partner_value<P: Partner>(bits: u64) -> Option<f64> {
    let x = P::from_bits(u128::from(bits));
    if x.is_nan() {
        return None;
    }
    let mut loses_info = false;
    let d: Double = x.convert_r(Round::NearestTiesToEven, &mut loses_info).value;
    debug_assert!(!loses_info, "every partner value is exact in double");
    Some(f64::from_bits(d.to_bits() as u64))
}

/// The f64 `v` (a narrow format's value) as `P`'s bits, rounded by `round`: exact but for
/// E8M0 into half (2^-127 and 2^127 lie beyond half's range).
fn partner_bits<P: Partner>(v: f64, round: Round) -> u64
where
    Double: FloatConvert<P>,
{
    let mut loses_info = false;
    let p: P = Double::from_bits(u128::from(v.to_bits()))
        .convert_r(round, &mut loses_info)
        .value;
    p.to_bits() as u64
}

/// The element kernel of `src` -> `dst`, where one of them is narrow and the other a partner
/// or the same narrow format (the identity is handled before); `None` for other pairs.
pub(super) fn kernel(src: ScalarType, dst: ScalarType) -> Option<super::Kernel> {
    macro_rules! partner {
        ($t:expr, $p:ident => $body:expr) => {
            match $t {
                ScalarType::Half => {
                    type $p = Half;
                    Some($body)
                }
                ScalarType::Float => {
                    type $p = Single;
                    Some($body)
                }
                ScalarType::Double => {
                    type $p = Double;
                    Some($body)
                }
                ScalarType::BFloat => {
                    type $p = BFloat;
                    Some($body)
                }
                _ => None,
            }
        };
    }
    match (src, dst) {
        (ScalarType::Fp4E2M1, p) => partner!(p, P => from_narrow::<P, 0> as super::Kernel),
        (ScalarType::Fp6E2M3, p) => partner!(p, P => from_narrow::<P, 1> as super::Kernel),
        (ScalarType::Fp6E3M2, p) => partner!(p, P => from_narrow::<P, 2> as super::Kernel),
        (ScalarType::Fp8E4M3Fnuz, p) => partner!(p, P => from_narrow::<P, 3> as super::Kernel),
        (ScalarType::Fp8E5M2Fnuz, p) => partner!(p, P => from_narrow::<P, 4> as super::Kernel),
        (ScalarType::Fp8E8M0, p) => partner!(p, P => from_e8m0::<P> as super::Kernel),
        (ScalarType::Tf32, p) => partner!(p, P => from_tf32::<P> as super::Kernel),
        (p, ScalarType::Fp4E2M1) => partner!(p, P => into_narrow::<P, 0> as super::Kernel),
        (p, ScalarType::Fp6E2M3) => partner!(p, P => into_narrow::<P, 1> as super::Kernel),
        (p, ScalarType::Fp6E3M2) => partner!(p, P => into_narrow::<P, 2> as super::Kernel),
        (p, ScalarType::Fp8E4M3Fnuz) => partner!(p, P => into_narrow::<P, 3> as super::Kernel),
        (p, ScalarType::Fp8E5M2Fnuz) => partner!(p, P => into_narrow::<P, 4> as super::Kernel),
        (p, ScalarType::Fp8E8M0) => partner!(p, P => into_e8m0::<P> as super::Kernel),
        (p, ScalarType::Tf32) => partner!(p, P => into_tf32::<P> as super::Kernel),
        _ => None,
    }
}

/// The narrow format of [`ScalarType::NARROW`]`[N]`.
const fn format<const N: usize>() -> NarrowFormat {
    match NarrowFormat::of(ScalarType::NARROW[N]) {
        Some(f) => f,
        None => panic!("ScalarType::NARROW holds narrow formats"),
    }
}

fn from_narrow<P: Partner, const N: usize>(p: &Params, bits: u64) -> ElementResult
where
    Double: FloatConvert<P>,
{
    defined(match format::<N>().value(bits) {
        Some(v) => partner_bits::<P>(v, p.round),
        None => P::NEGATIVE_QUIET_NAN,
    })
}

/// E8M0's value of `bits` (the low byte), `None` for the NaN 0xff.
fn e8m0_value(bits: u64) -> Option<f64> {
    let code = (bits & 0xff) as i32;
    (code != 0xff).then(|| 2f64.powi(code - 127))
}

/// The E8M0 code of the non-NaN `x` (exact in f64), by the module's rules.
fn e8m0_encode(x: f64, round: Round, saturate: bool) -> u64 {
    const NAN: u64 = 0xff;
    const MAX: u64 = 0xfe;
    if x == f64::INFINITY {
        return if saturate { MAX } else { NAN };
    }
    if x <= 0.0 {
        // Zero, negative values and -infinity: nothing E8M0 holds.
        return if saturate { 0 } else { NAN };
    }
    // 2^e <= x < 2^(e + 1), exactly: f64 holds every source value, subnormals included.
    let mut e = x.log2().floor() as i32;
    while 2f64.powi(e) > x {
        e -= 1;
    }
    while 2f64.powi(e + 1) <= x {
        e += 1;
    }
    let low = 2f64.powi(e);
    let up = match round {
        Round::NearestTiesToEven => x >= 1.5 * low,
        Round::TowardPositive => x > low,
        _ => false,
    };
    let code = e + 127 + i32::from(up);
    if code < 0 {
        0
    } else if code > 254 {
        // Past 2^127: IEEE-754 gives an infinity when the mode rounded up (rte, rtp), the
        // largest value when it rounds toward zero (rtz, rtn).
        let ieee_infinity = matches!(round, Round::NearestTiesToEven | Round::TowardPositive);
        if ieee_infinity && !saturate {
            NAN
        } else {
            MAX
        }
    } else {
        code as u64
    }
}

/// tf32's 19 bits are the top of its 32-bit word.
const TF32_SHIFT: u32 = 13;

fn from_tf32<P: super::Format>(p: &Params, bits: u64) -> ElementResult
where
    super::Tf32: FloatConvert<P>,
{
    super::float_to_float::<super::Tf32, P>(p, (bits >> TF32_SHIFT) & 0x7_ffff)
}

fn into_tf32<P: super::Format + FloatConvert<super::Tf32>>(p: &Params, bits: u64) -> ElementResult {
    let r = super::float_to_float::<P, super::Tf32>(p, bits);
    ElementResult {
        bits: r.bits << TF32_SHIFT,
        ..r
    }
}

fn from_e8m0<P: Partner>(p: &Params, bits: u64) -> ElementResult
where
    Double: FloatConvert<P>,
{
    defined(match e8m0_value(bits) {
        Some(v) => partner_bits::<P>(v, p.round),
        None => P::QUIET_NAN,
    })
}

fn into_e8m0<P: Partner>(p: &Params, bits: u64) -> ElementResult {
    defined(match partner_value::<P>(bits) {
        Some(v) => e8m0_encode(v, p.round, p.saturate),
        None => 0xff,
    })
}

fn into_narrow<P: Partner, const N: usize>(p: &Params, bits: u64) -> ElementResult {
    let f = format::<N>();
    defined(match partner_value::<P>(bits) {
        Some(v) => f.encode(v, p.round, p.saturate),
        None => f.nan(),
    })
}

/// The value of `bits` of the narrow type `t` (`None` for the NaN): for tests and the CLI.
///
/// ```
/// use clconv::reference::narrow_value;
/// use clconv::ScalarType::{Fp4E2M1, Fp8E4M3Fnuz};
/// assert_eq!(narrow_value(Fp4E2M1, 0b0111), Some(6.0));
/// assert_eq!(narrow_value(Fp4E2M1, 0b1001), Some(-0.5));
/// assert_eq!(narrow_value(Fp4E2M1, 0xf1), Some(0.5)); // the high bits are ignored
/// assert_eq!(narrow_value(Fp8E4M3Fnuz, 0x80), None); // the NaN
/// assert_eq!(narrow_value(Fp8E4M3Fnuz, 0x7f), Some(240.0));
/// assert_eq!(narrow_value(clconv::ScalarType::Fp8E8M0, 0x80), Some(2.0));
/// ```
pub fn narrow_value(t: ScalarType, bits: u64) -> Option<f64> {
    if t == ScalarType::Fp8E8M0 {
        return e8m0_value(bits);
    }
    if t == ScalarType::Tf32 {
        let v = f32::from_bits(bits as u32 & !((1 << TF32_SHIFT) - 1));
        return (!v.is_nan()).then_some(f64::from(v));
    }
    NarrowFormat::of(t).and_then(|f| f.value(bits))
}

/// Rounds `x` into the narrow type `t` by `rounding` (`saturate`: `_sat`), as a conversion
/// from double does: for tests and the CLI.
///
/// ```
/// use clconv::reference::round_to_narrow;
/// use clconv::Rounding::Rte;
/// use clconv::ScalarType::Fp4E2M1;
/// let e2m1 = |x: f64| round_to_narrow(Fp4E2M1, x, Rte, true);
/// assert_eq!(e2m1(0.25), 0b0000); // a tie to even: 0
/// assert_eq!(e2m1(0.3), 0b0001); // 0.5
/// assert_eq!(e2m1(5.0), 0b0110); // a tie: 4.0
/// assert_eq!(e2m1(7.0), 0b0111); // 6.0, the largest
/// assert_eq!(e2m1(-100.0), 0b1111); // -6.0
/// let e8m0 = |x: f64| round_to_narrow(clconv::ScalarType::Fp8E8M0, x, Rte, false);
/// assert_eq!(e8m0(1000.0), 0x89); // 2^10: 1000 is past 1.5 * 2^9
/// assert_eq!(e8m0(0.0), 0xff); // no zero: NaN (0x00 with `_sat`)
/// ```
pub fn round_to_narrow(t: ScalarType, x: f64, rounding: Rounding, saturate: bool) -> u64 {
    let round = super::apfloat_round(rounding);
    if t == ScalarType::Tf32 {
        let params = Params {
            saturate,
            round,
            ..super::Params::for_floats()
        };
        return into_tf32::<Double>(&params, x.to_bits()).bits;
    }
    if t == ScalarType::Fp8E8M0 {
        return if x.is_nan() {
            0xff
        } else {
            e8m0_encode(x, round, saturate)
        };
    }
    let f = NarrowFormat::of(t).expect("a narrow type");
    if x.is_nan() {
        f.nan()
    } else {
        f.encode(x, round, saturate)
    }
}
