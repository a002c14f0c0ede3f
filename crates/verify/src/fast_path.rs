//! The fast path of the exhaustive sweeps ([`crate::exhaustive`]): one element conversion in
//! integer arithmetic only, written from the definitions of [`clconv::reference`] and
//! independent of the reference's soft-float, of Cranelift, of clconv's lowering and of the
//! host FPU. The sweeps compare every kernel result with it and send every disagreement to the
//! reference; it sits below the sweeps and knows nothing of kernels, plans or ledgers.

use clconv::request::Conversion;
use clconv::rules::{FloatResult, NanToInteger, OutOfRange};
use clconv::types::{Rounding, ScalarType};
use std::cmp::Ordering;

/// The fast path: one element conversion in integer arithmetic only, independent of the
/// reference's soft-float, of Cranelift, of clconv's lowering and of the host FPU. It follows
/// the definitions of [`clconv::reference`] (float → integer: rounded by the mode, clamped, NaN
/// → 0, with or without `_sat`; NaN → float: sign, top payload bits, quiet bit set).
///
/// ```
/// use clconv_verify::fast_path::FastConverter;
/// use clconv::{Extensions, Request, Rounding};
/// let Request::Convert(c) =
///     Request::parse("convert_uchar_sat_rte(float)", Extensions::default()).unwrap()
/// else {
///     unreachable!()
/// };
/// let f = FastConverter::new(&c, Rounding::Rte);
/// assert_eq!(f.convert(254.5f32.to_bits() as u64), 254); // ties to even
/// assert_eq!(f.convert(1.2e9f32.to_bits() as u64), 255);
/// assert_eq!(f.convert(f32::NAN.to_bits() as u64), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FastConverter {
    pub(crate) src: ScalarType,
    pub(crate) dst: ScalarType,
    pub(crate) saturate: bool,
    pub(crate) rounding: Rounding,
    /// float → integer: the range clamped to (the destination's, or under WGSL's rule the
    /// integers the source represents exactly).
    pub(crate) bounds: (i128, i128),
    /// float → integer: what NaN gives (0, or PTX's top bit alone).
    pub(crate) nan: u64,
    /// PTX `.ftz` on a `float` source: its subnormals are read as the zero of their sign.
    pub(crate) flush_src: bool,
    /// PTX `.ftz` into `float`: a subnormal result is written as the zero of its sign.
    pub(crate) flush_dst: bool,
    /// PTX `.ftz`, double -> float: a double below 2^-126 in magnitude is read as the zero of
    /// its sign (a result tiny before rounding is flushed, as sm_90 does).
    pub(crate) flush_tiny_double: bool,
    /// PTX's clamps of a float result (`.sat`, `.relu`), applied last.
    pub(crate) result: FloatResult,
    /// Into a float: ties round away from zero (`_rta`).
    pub(crate) ties_away: bool,
}

/// A source element's exact value.
#[derive(Clone, Copy, Debug)]
enum Value {
    Nan {
        negative: bool,
        mantissa: u64,
        mantissa_bits: u32,
    },
    Infinite {
        negative: bool,
    },
    /// (-1)^negative × magnitude × 2^exp2.
    Finite {
        negative: bool,
        magnitude: u64,
        exp2: i32,
    },
}

impl FastConverter {
    /// The fast path for the element conversion of `conv` (its width is ignored) under the
    /// static rounding mode `static_mode`. Conversions that compute the same bits per element
    /// give equal `FastConverter`s: `_sat` is dropped for float → integer (clconv defines both
    /// alike) and the rounding mode for integer → integer and `convert_T(T)`.
    ///
    /// ```
    /// use clconv_verify::fast_path::FastConverter;
    /// use clconv::{Extensions, Request, Rounding};
    /// let conv = |name: &str| match Request::parse(name, Extensions::default()).unwrap() {
    ///     Request::Convert(c) => FastConverter::new(&c, Rounding::Rte),
    ///     _ => unreachable!(),
    /// };
    /// assert_eq!(conv("convert_int4_sat(float4)"), conv("convert_int_rtz(float)"));
    /// assert_ne!(conv("convert_char_sat(int)"), conv("convert_char(int)"));
    /// ```
    pub fn new(conv: &Conversion, static_mode: Rounding) -> FastConverter {
        let (src, dst) = (conv.src().elem, conv.dst().elem);
        let mut saturate = conv.saturate();
        let mut rounding = conv.effective_rounding(static_mode);
        if src == dst {
            saturate = false;
            rounding = Rounding::Rte;
        } else if !src.is_float() && !dst.is_float() {
            rounding = Rounding::Rte;
        } else if src.is_float() && !dst.is_float() {
            saturate = false;
        } else if exact(src, dst) {
            rounding = Rounding::Rte;
        }
        let destination = (dst.int_min().unwrap_or(0), dst.int_max().unwrap_or(0));
        let bounds = match (conv.rules().out_of_range, float_format(src)) {
            (OutOfRange::NearestInSource, Some((m, e))) if dst.is_integer() => {
                // The bounds moved toward zero to the nearest source values, by this file's own
                // rounding (toward zero) and decoding.
                let exact_toward_zero = |v: i128| {
                    let value = Value::Finite {
                        negative: v < 0,
                        magnitude: v.unsigned_abs() as u64,
                        exp2: 0,
                    };
                    let fmt = Fmt::of(src, m, e, false);
                    integer_of(decode(src, to_float(value, fmt, Rounding::Rtz)))
                };
                (
                    exact_toward_zero(destination.0),
                    exact_toward_zero(destination.1),
                )
            }
            _ => destination,
        };
        // NaN's bits by this file's own reading of the rule: the destination's top bit alone.
        let nan = match conv.rules().nan {
            NanToInteger::HighBit if dst.is_integer() => 1u64 << (dst.bits() - 1),
            _ => 0,
        };
        // PTX's float rules by this file's reading of the ISA's `cvt` words: `.ftz` flushes
        // "single-precision subnormal inputs and results"; `.sat` and `.relu` clamp the result.
        let rules = conv.rules();
        let (flush_src, flush_dst, result) = if dst.is_float() {
            (
                rules.flush_float_subnormals && src == ScalarType::Float,
                rules.flush_float_subnormals && dst == ScalarType::Float,
                rules.float_result,
            )
        } else {
            (
                rules.flush_float_subnormals && src == ScalarType::Float,
                false,
                FloatResult::Rounded,
            )
        };
        FastConverter {
            src,
            dst,
            saturate,
            rounding,
            bounds,
            nan,
            flush_src,
            flush_dst,
            flush_tiny_double: rules.flush_float_subnormals
                && (src, dst) == (ScalarType::Double, ScalarType::Float),
            result,
            ties_away: rules.ties_away && rounding == Rounding::Rte,
        }
    }

    /// The source element type.
    ///
    /// ```
    /// use clconv_verify::fast_path::FastConverter;
    /// use clconv::{Extensions, Request, Rounding, ScalarType};
    /// let Request::Convert(c) = Request::parse("convert_half(uint)", Extensions::with_fp16()).unwrap()
    /// else {
    ///     unreachable!()
    /// };
    /// assert_eq!(FastConverter::new(&c, Rounding::Rte).src(), ScalarType::UInt);
    /// ```
    pub fn src(&self) -> ScalarType {
        self.src
    }

    /// The destination element type.
    ///
    /// ```
    /// use clconv_verify::fast_path::FastConverter;
    /// use clconv::{Extensions, Request, Rounding, ScalarType};
    /// let Request::Convert(c) = Request::parse("convert_half(uint)", Extensions::with_fp16()).unwrap()
    /// else {
    ///     unreachable!()
    /// };
    /// assert_eq!(FastConverter::new(&c, Rounding::Rte).dst(), ScalarType::Half);
    /// ```
    pub fn dst(&self) -> ScalarType {
        self.dst
    }

    /// Converts one element: `bits` holds the source's bits (bits above its width ignored);
    /// the result's bits come back zero-extended.
    ///
    /// ```
    /// use clconv_verify::fast_path::FastConverter;
    /// use clconv::{Extensions, Request, Rounding};
    /// let Request::Convert(c) = Request::parse("convert_float_rtp(int)", Extensions::default()).unwrap()
    /// else {
    ///     unreachable!()
    /// };
    /// let f = FastConverter::new(&c, Rounding::Rte);
    /// assert_eq!(f.convert(16_777_217), 0x4b80_0001); // 2^24 + 1 rounds up to 2^24 + 2
    /// assert_eq!(f.convert((-16_777_217i32) as u32 as u64), 0xcb80_0000); // toward +inf
    /// ```
    #[inline(always)]
    pub fn convert(&self, bits: u64) -> u64 {
        // tf32 is the top 19 bits of its word (the low 13 ignored when read, zero when
        // written): converted as the 19-bit IEEE-like format it is.
        if self.src != self.dst && (self.src == ScalarType::Tf32 || self.dst == ScalarType::Tf32) {
            let bits = if self.src == ScalarType::Tf32 {
                (bits >> 13) & mask(19)
            } else {
                bits
            };
            let r = self.convert_bits(bits);
            return if self.dst == ScalarType::Tf32 {
                r << 13
            } else {
                r
            };
        }
        self.convert_bits(bits)
    }

    #[inline(always)]
    fn convert_bits(&self, bits: u64) -> u64 {
        let mut bits = bits & mask(self.src.bits());
        if self.flush_src {
            bits = flush_float_subnormal(bits);
        }
        // |x| < 2^-126 on the bits: the magnitude's bits order as the magnitudes (NaN is above).
        if self.flush_tiny_double && bits & !(1 << 63) < 0x3810_0000_0000_0000 {
            bits &= 1 << 63;
        }
        if self.src == self.dst {
            return self.finish(bits);
        }
        // bool: a byte, 0 false and any other true; a number is false only when zero (-0.0
        // too; NaN is true); true is 1 (1.0), false 0.
        if self.src == ScalarType::Bool {
            let one = Value::Finite {
                negative: false,
                magnitude: u64::from(bits != 0),
                exp2: 0,
            };
            return match float_format(self.dst) {
                Some((m, e)) => {
                    let fmt = Fmt::of(self.dst, m, e, false);
                    to_float(one, fmt, Rounding::Rte)
                }
                None => u64::from(bits != 0),
            };
        }
        let value = decode(self.src, bits);
        // `_abs` (into E8M0; CUDA's words: "Input number's absolute value is rounded to the
        // closest power of two ... smaller than ... 2^-127 are then clipped to 2^-127"): the
        // magnitude converted, a zero giving 2^-127 (0x00).
        let value = match value {
            _ if self.result != FloatResult::Magnitude => value,
            Value::Finite { magnitude: 0, .. } => return 0,
            Value::Finite {
                magnitude, exp2, ..
            } => Value::Finite {
                negative: false,
                magnitude,
                exp2,
            },
            Value::Infinite { .. } => Value::Infinite { negative: false },
            nan => nan,
        };
        if self.dst == ScalarType::Bool {
            let zero = matches!(value, Value::Finite { magnitude: 0, .. });
            return u64::from(!zero);
        }
        match float_format(self.dst) {
            Some((m, e)) => {
                let fmt = Fmt {
                    ties_away: self.ties_away,
                    ..Fmt::of(self.dst, m, e, self.saturate)
                };
                match narrow_format(self.dst) {
                    Some(narrow) => {
                        let code = to_narrow(value, fmt, narrow, self.rounding);
                        // PTX's `.relu` into FP6 and FP4: a code with the sign bit set is +0.
                        let negative = code & 1 << (m + e) != 0;
                        if self.result == FloatResult::Relu && negative {
                            0
                        } else {
                            code
                        }
                    }
                    None => self.finish(to_float(value, fmt, self.rounding)),
                }
            }
            None if matches!(value, Value::Nan { .. }) && self.src.is_float() => self.nan,
            None => to_int(
                value,
                self.dst,
                self.saturate || self.src.is_float(),
                self.bounds,
                self.rounding,
            ),
        }
    }
}

impl FastConverter {
    /// A float result after PTX's rules: `.ftz`'s flush, then `.sat`'s [0.0, 1.0] ("NaN
    /// results are flushed to positive zero"; -0.0 gives +0.0, clconv's reading) or `.relu`'s
    /// ("clamps the result to 0 if negative. NaN results are converted to canonical NaN": the
    /// positive NaN with every fraction bit set, clconv's reading).
    #[inline(always)]
    fn finish(&self, bits: u64) -> u64 {
        let bits = if self.flush_dst {
            flush_float_subnormal(bits)
        } else {
            bits
        };
        if self.result == FloatResult::Rounded {
            return bits;
        }
        let Some((m, e)) = float_format(self.dst) else {
            return bits;
        };
        let sign = 1u64 << (m + e);
        let magnitude = bits & (sign - 1);
        // E4M3's only NaNs are S.1111.111; the other formats' are past infinity's bits. (PTX's
        // `.relu` reaches E4M3 through `cvt.rn.satfinite.relu.e4m3x2`: 0x79, 288, is no NaN.)
        let is_nan = if self.dst == ScalarType::Fp8E4M3 {
            magnitude == sign - 1
        } else {
            magnitude > mask(e) << m
        };
        if self.result == FloatResult::CanonicalNan {
            return if is_nan { sign - 1 } else { bits };
        }
        let negative = bits & sign != 0;
        match self.result {
            FloatResult::UnitInterval => {
                let one = ((1u64 << (e - 1)) - 1) << m;
                if is_nan || negative {
                    0
                } else if magnitude > one {
                    one
                } else {
                    bits
                }
            }
            FloatResult::Relu if is_nan => sign - 1,
            FloatResult::Relu if negative => 0,
            _ => bits,
        }
    }
}

/// A binary32 subnormal (exponent field 0, fraction not 0) as the zero of its sign.
#[inline(always)]
fn flush_float_subnormal(bits: u64) -> u64 {
    if bits & 0x7f80_0000 == 0 {
        bits & 0x8000_0000
    } else {
        bits
    }
}

/// Whether every `src` value is a `dst` value (float → double, short → float, ...): the
/// rounding mode then changes nothing.
fn exact(src: ScalarType, dst: ScalarType) -> bool {
    let Some((m, e)) = float_format(dst) else {
        return false;
    };
    match float_format(src) {
        // bfloat -> half has the fewer fraction bits but the wider range: not exact.
        Some((src_m, src_e)) => src_m < m && src_e <= e,
        None => src.bits() - u32::from(src.is_signed_integer()) <= m + 1,
    }
}

/// The low `bits` bits set (1 to 64).
pub(crate) const fn mask(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

/// (mantissa bits, exponent bits) of a floating type, from the formats' definitions: IEEE-754,
/// bfloat16 (1-8-7), OCP OFP8 E4M3 (1-4-3) and E5M2 (1-5-2).
fn float_format(t: ScalarType) -> Option<(u32, u32)> {
    match t {
        ScalarType::Half => Some((10, 5)),
        ScalarType::Float => Some((23, 8)),
        ScalarType::Double => Some((52, 11)),
        ScalarType::BFloat => Some((7, 8)),
        ScalarType::Fp8E4M3 => Some((3, 4)),
        ScalarType::Fp8E5M2 => Some((2, 5)),
        ScalarType::Fp4E2M1 => Some((1, 2)),
        ScalarType::Fp6E2M3 => Some((3, 2)),
        ScalarType::Fp6E3M2 => Some((2, 3)),
        ScalarType::Fp8E4M3Fnuz => Some((3, 4)),
        ScalarType::Fp8E5M2Fnuz => Some((2, 5)),
        ScalarType::Fp8E8M0 => Some((0, 8)),
        ScalarType::Tf32 => Some((10, 8)),
        _ => None,
    }
}

/// OCP OFP8 E4M3: no infinity; with the all-ones exponent only the all-ones fraction is NaN,
/// the others are normal numbers.
fn nan_only(t: ScalarType) -> bool {
    t == ScalarType::Fp8E4M3
}

/// A destination float format, and what it does beyond its largest finite value.
#[derive(Clone, Copy)]
struct Fmt {
    m: u32,
    e: u32,
    /// The exponent bias: IEEE-754's `2^(e-1) - 1`, or a narrow format's own.
    bias: i32,
    nan_only: bool,
    /// The narrow formats: every code but the FNUZ NaN is finite (no infinity, and no NaN in
    /// the all-ones exponent).
    finite_only: bool,
    /// `_sat` (bfloat and the 8-bit floats): beyond the largest finite value, infinities
    /// included, that value of the sign.
    saturate: bool,
    /// Nearest-even's ties go away from zero instead (`_rta`, PTX's `.rna`: "rounds to
    /// nearest, ties away from zero").
    ties_away: bool,
}

impl Fmt {
    fn of(t: ScalarType, m: u32, e: u32, saturate: bool) -> Fmt {
        Fmt {
            m,
            e,
            bias: narrow_format(t).map_or((1i32 << (e - 1)) - 1, |n| n.bias),
            nan_only: nan_only(t),
            finite_only: narrow_format(t).is_some(),
            saturate,
            ties_away: false,
        }
    }
}

/// A narrow format's own fields beyond (mantissa, exponent) bits, from its definition: OCP MX
/// v1.0 5.3.3 for FP4 E2M1 (bias 1), FP6 E2M3 (bias 1) and E3M2 (bias 3), every code finite;
/// LLVM's `Float8E4M3FNUZ` (bias 8) and `Float8E5M2FNUZ` (bias 16): 0x80 the only NaN, no
/// negative zero, no infinity.
#[derive(Clone, Copy)]
struct Narrow {
    bias: i32,
    fnuz: bool,
    /// OCP MX's E8M0 (5.4.1): an unsigned biased exponent alone, 0xff the NaN.
    e8m0: bool,
}

fn narrow_format(t: ScalarType) -> Option<Narrow> {
    let (bias, fnuz, e8m0) = match t {
        ScalarType::Fp4E2M1 | ScalarType::Fp6E2M3 => (1, false, false),
        ScalarType::Fp6E3M2 => (3, false, false),
        ScalarType::Fp8E4M3Fnuz => (8, true, false),
        ScalarType::Fp8E5M2Fnuz => (16, true, false),
        ScalarType::Fp8E8M0 => (127, false, true),
        _ => return None,
    };
    Some(Narrow { bias, fnuz, e8m0 })
}

/// A value into E8M0 by the reference's rules (`src/reference/narrow.rs`): a positive value
/// to the power of two at or below it (rtz, rtn), at or above it (rtp), or the nearer one with
/// the tie 1.5 * 2^e going up (rte); below 2^-127, 0x00; past 2^127, the NaN where the mode
/// rounded up and 0xfe where it rounds toward zero; zero, negative values and -infinity the
/// NaN, +infinity the NaN; `_sat`: 0x00 for the first and 0xfe for every overflow.
#[inline(always)]
fn to_e8m0(value: Value, mode: Rounding, saturate: bool) -> u64 {
    const NAN: u64 = 0xff;
    const MAX: u64 = 0xfe;
    match value {
        Value::Nan { .. } => NAN,
        Value::Infinite { negative: false } => {
            if saturate {
                MAX
            } else {
                NAN
            }
        }
        Value::Infinite { negative: true }
        | Value::Finite { negative: true, .. }
        | Value::Finite { magnitude: 0, .. } => {
            if saturate {
                0
            } else {
                NAN
            }
        }
        Value::Finite {
            magnitude, exp2, ..
        } => {
            // magnitude * 2^exp2 is in [2^e, 2^(e + 1)).
            let top = 63 - magnitude.leading_zeros() as i32;
            let e = top + exp2;
            let exact = magnitude.is_power_of_two();
            let half_or_more = top >= 1 && (magnitude >> (top - 1)) & 1 == 1;
            let up = match mode {
                Rounding::Rte => half_or_more,
                Rounding::Rtp => !exact,
                Rounding::Rtz | Rounding::Rtn => false,
            };
            let code = e + 127 + i32::from(up);
            if code < 0 {
                0
            } else if code > 254 {
                if saturate || matches!(mode, Rounding::Rtz | Rounding::Rtn) {
                    MAX
                } else {
                    NAN
                }
            } else {
                code as u64
            }
        }
    }
}

/// A value rounded into a narrow format: IEEE-754's rounding with the format's range, then
/// the formats' rules (clconv's reference, `src/reference/narrow.rs`): FP4 and FP6 give the
/// largest value of the sign for every overflow and infinity and the largest positive value
/// for NaN; the FNUZ formats give their NaN (0x80) for NaN and where IEEE-754 gives an
/// infinity (the largest value of the sign under `_sat`), and +0 for every zero.
#[inline(always)]
fn to_narrow(value: Value, fmt: Fmt, narrow: Narrow, mode: Rounding) -> u64 {
    if narrow.e8m0 {
        return to_e8m0(value, mode, fmt.saturate);
    }
    let sign_bit = 1u64 << (fmt.m + fmt.e);
    let (max, beyond_max) = beyond(fmt);
    let nan = if narrow.fnuz { sign_bit } else { max };
    let sign = |negative: bool| if negative { sign_bit } else { 0 };
    match value {
        Value::Nan { .. } => nan,
        Value::Infinite { negative } if narrow.fnuz && !fmt.saturate => {
            let _ = negative;
            nan
        }
        Value::Infinite { negative } => sign(negative) | max,
        Value::Finite {
            negative,
            magnitude,
            exp2,
        } => match round_to_format(negative, magnitude, exp2, fmt, mode) {
            0 if narrow.fnuz => 0,
            r if r == beyond_max && narrow.fnuz && !fmt.saturate => nan,
            r if r == beyond_max => sign(negative) | max,
            r => sign(negative) | r,
        },
    }
}

/// The integer a finite, integral `value` is.
fn integer_of(value: Value) -> i128 {
    let Value::Finite {
        negative,
        magnitude,
        exp2,
    } = value
    else {
        unreachable!("rounding an integer toward zero gives a finite value")
    };
    let m = if magnitude == 0 {
        0
    } else if exp2 >= 0 {
        i128::from(magnitude) << exp2
    } else {
        i128::from(magnitude >> exp2.unsigned_abs())
    };
    if negative {
        -m
    } else {
        m
    }
}

#[inline(always)]
fn decode(src: ScalarType, bits: u64) -> Value {
    if let Some(Narrow { e8m0: true, .. }) = narrow_format(src) {
        // An E8M0 code: 2^(code - 127), 0xff the NaN (positive: E8M0 has no sign).
        let code = bits & 0xff;
        return if code == 0xff {
            Value::Nan {
                negative: false,
                mantissa: 0,
                mantissa_bits: 0,
            }
        } else {
            Value::Finite {
                negative: false,
                magnitude: 1,
                exp2: code as i32 - 127,
            }
        };
    }
    if let (Some((m, e)), Some(narrow)) = (float_format(src), narrow_format(src)) {
        // A narrow code: the low m + e + 1 bits (the rest of the byte ignored), every code
        // finite but the FNUZ NaN 0x80, read as the partners' NaN with the sign bit set.
        let bits = bits & mask(m + e + 1);
        let negative = bits >> (m + e) == 1;
        let exp = (bits >> m) & mask(e);
        let mantissa = bits & mask(m);
        return if narrow.fnuz && bits == 1 << (m + e) {
            Value::Nan {
                negative: true,
                mantissa: 0,
                mantissa_bits: m,
            }
        } else if exp == 0 {
            Value::Finite {
                negative,
                magnitude: mantissa,
                exp2: 1 - narrow.bias - m as i32,
            }
        } else {
            Value::Finite {
                negative,
                magnitude: mantissa | 1 << m,
                exp2: exp as i32 - narrow.bias - m as i32,
            }
        };
    }
    if let Some((m, e)) = float_format(src) {
        let negative = (bits >> (m + e)) & 1 == 1;
        let exp = (bits >> m) & mask(e);
        let mantissa = bits & mask(m);
        let bias = (1i32 << (e - 1)) - 1;
        let special = exp == mask(e) && (!nan_only(src) || mantissa == mask(m));
        return if special {
            if mantissa != 0 {
                Value::Nan {
                    negative,
                    mantissa,
                    mantissa_bits: m,
                }
            } else {
                Value::Infinite { negative }
            }
        } else if exp == 0 {
            Value::Finite {
                negative,
                magnitude: mantissa,
                exp2: 1 - bias - m as i32,
            }
        } else {
            Value::Finite {
                negative,
                magnitude: mantissa | 1 << m,
                exp2: exp as i32 - bias - m as i32,
            }
        };
    }
    let v: i128 = if src.is_signed_integer() {
        let shift = 64 - src.bits();
        (((bits << shift) as i64) >> shift) as i128
    } else {
        bits as i128
    };
    Value::Finite {
        negative: v < 0,
        magnitude: v.unsigned_abs() as u64,
        exp2: 0,
    }
}

/// `magnitude >> shift` (shift >= 1), how the dropped bits compare with half of the last kept
/// bit's unit, and whether any was set.
#[inline(always)]
fn split(magnitude: u64, shift: u32) -> (u64, Ordering, bool) {
    if shift >= 64 {
        // Nothing kept; half the unit is 2^(shift - 1) >= 2^63.
        let vs_half = if shift == 64 {
            magnitude.cmp(&(1 << 63))
        } else {
            Ordering::Less
        };
        return (0, vs_half, magnitude != 0);
    }
    let rem = magnitude & ((1u64 << shift) - 1);
    (
        magnitude >> shift,
        rem.cmp(&(1u64 << (shift - 1))),
        rem != 0,
    )
}

/// Whether rounding the magnitude (whose kept part is odd or not) goes up, by the mode.
/// Non-short-circuit `&`/`|`: the rounding bits change from one input to the next, and
/// branches on them would be mispredicted half the time.
#[inline(always)]
fn round_up(mode: Rounding, negative: bool, odd: bool, vs_half: Ordering, inexact: bool) -> bool {
    let above = vs_half == Ordering::Greater;
    let tie = vs_half == Ordering::Equal;
    match mode {
        Rounding::Rte => above | (tie & odd),
        Rounding::Rtz => false,
        Rounding::Rtp => inexact & !negative,
        Rounding::Rtn => inexact & negative,
    }
}

#[inline(always)]
fn to_int(value: Value, dst: ScalarType, clamp: bool, bounds: (i128, i128), mode: Rounding) -> u64 {
    let (lo, hi) = bounds;
    let v: i128 = match value {
        Value::Nan { .. } => 0,
        Value::Infinite { negative } => {
            if negative {
                lo
            } else {
                hi
            }
        }
        Value::Finite {
            negative,
            magnitude,
            exp2,
        } => {
            // The rounded magnitude, capped at 2^64 (beyond every destination).
            let q: u128 = if magnitude == 0 {
                0
            } else if exp2 >= 0 {
                if exp2 as u32 > magnitude.leading_zeros() {
                    1 << 64
                } else {
                    u128::from(magnitude << exp2)
                }
            } else {
                let (q, vs_half, inexact) = split(magnitude, exp2.unsigned_abs());
                u128::from(q) + round_up(mode, negative, q & 1 == 1, vs_half, inexact) as u128
            };
            if negative {
                -(q as i128)
            } else {
                q as i128
            }
        }
    };
    let v = if clamp { v.clamp(lo, hi) } else { v };
    v as u64 & mask(dst.bits())
}

#[inline(always)]
fn to_float(value: Value, fmt: Fmt, mode: Rounding) -> u64 {
    let Fmt { m, e, .. } = fmt;
    let sign = |negative: bool| u64::from(negative) << (m + e);
    // E4M3's NaN stands where the others' infinity does.
    let (max, inf) = beyond(fmt);
    let all_ones = mask(e) << m | mask(m);
    match value {
        Value::Nan { negative, .. } if fmt.nan_only => sign(negative) | all_ones,
        Value::Infinite { negative } if fmt.saturate => sign(negative) | max,
        Value::Nan {
            negative,
            mantissa,
            mantissa_bits,
        } => {
            let payload = if mantissa_bits >= m {
                mantissa >> (mantissa_bits - m)
            } else {
                mantissa << (m - mantissa_bits)
            };
            sign(negative) | inf | payload | 1 << (m - 1)
        }
        Value::Infinite { negative } => sign(negative) | inf,
        Value::Finite {
            negative,
            magnitude,
            exp2,
        } => {
            let r = round_to_format(negative, magnitude, exp2, fmt, mode);
            sign(negative) | if fmt.saturate && r == inf { max } else { r }
        }
    }
}

/// The largest finite magnitude's bits and the bits of the magnitude IEEE-754's overflow
/// gives (infinity; E4M3's NaN).
fn beyond(fmt: Fmt) -> (u64, u64) {
    let Fmt { m, e, nan_only, .. } = fmt;
    if fmt.finite_only {
        // Every magnitude code is finite; past the largest is the sign bit's place.
        (mask(m + e), 1 << (m + e))
    } else if nan_only {
        (mask(e) << m | (mask(m) - 1), mask(e) << m | mask(m))
    } else {
        ((mask(e) << m) - 1, mask(e) << m)
    }
}

/// The magnitude bits of `magnitude × 2^exp2` rounded into the format with `m` mantissa and `e`
/// exponent bits, subnormals and overflow included (sign bit not set).
#[inline(always)]
fn round_to_format(negative: bool, magnitude: u64, exp2: i32, fmt: Fmt, mode: Rounding) -> u64 {
    let Fmt { m, e, bias, .. } = fmt;
    if magnitude == 0 {
        return 0;
    }
    let emin = 1 - bias;
    let top = 63 - magnitude.leading_zeros() as i32; // the value is in [2^(top+exp2), 2^(top+exp2+1))
                                                     // The exponent of the result's last mantissa bit: subnormals share emin's.
    let mut ulp_exp = (top + exp2).max(emin) - m as i32;
    let shift = ulp_exp - exp2;
    let mut q = if shift <= 0 {
        magnitude << shift.unsigned_abs() // exact: fits in m + 1 bits
    } else {
        let (q, vs_half, inexact) = split(magnitude, shift as u32);
        let tie_away = fmt.ties_away && mode == Rounding::Rte && vs_half == Ordering::Equal;
        q + u64::from(tie_away || round_up(mode, negative, q & 1 == 1, vs_half, inexact))
    };
    if q == 1 << (m + 1) {
        // Rounded up to the next power of two.
        q >>= 1;
        ulp_exp += 1;
    }
    if q < 1 << m {
        return q; // subnormal or zero (biased exponent 0)
    }
    let biased = ulp_exp + m as i32 + bias;
    let bits = (biased.max(0) as u64) << m | (q & mask(m));
    let (max, inf) = beyond(fmt);
    if biased > mask(e) as i32 || bits >= inf {
        return match mode {
            Rounding::Rte => inf,
            Rounding::Rtz => max,
            Rounding::Rtp if negative => max,
            Rounding::Rtp => inf,
            Rounding::Rtn if negative => inf,
            Rounding::Rtn => max,
        };
    }
    bits
}
