//! The rules a conversion follows at the edges, as data: what a language says an out-of-range
//! value and NaN give. OpenCL C's rules are one set among several ([`Rules::OPENCL`]); the
//! spelling front ends (WGSL, HLSL, GLSL, Metal) pick theirs, and every layer after them (the
//! reference, the lowering, the kernels, the checks) reads the rules from the request, never
//! from the language that wrote it.
//!
//! A rule that gives the same bits as OpenCL's on every input is not a new rule: a request
//! carrying it is normalised to OpenCL's ([`Rules::normalised`]), so that it shares OpenCL's
//! kernel, cache entry and proof. WGSL's `i32(f16)` differs from `convert_int_sat(half)` only
//! for ±infinity, and keeps its own rule; WGSL's `i32(f32)` differs above 2147483520.
//!
//! ```
//! use clconv::rules::{OutOfRange, Rules};
//! use clconv::ScalarType::{Float, Int, Short};
//! assert_eq!(Rules::WGSL.out_of_range, OutOfRange::NearestInSource);
//! // float -> int: the largest int a float holds exactly is 2^31 - 128.
//! assert_eq!(Rules::WGSL.integer_bounds(Float, Int), Some((i32::MIN as i128, 2147483520)));
//! // float -> short: every short is a float, so WGSL's rule is OpenCL's `_sat`.
//! assert_eq!(Rules::WGSL.normalised(Float, Short), Rules::OPENCL);
//! ```

use crate::types::ScalarType;
use std::fmt;

/// What a float -> integer conversion gives for a value outside the destination's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum OutOfRange {
    /// The destination's MIN or MAX, whichever is nearer (OpenCL `_sat`; clconv's definition of
    /// OpenCL's conversions without `_sat`; Rust `as`; Direct3D `ftoi`/`ftou`).
    ClampToDestination,
    /// The value in the destination type closest to the rounded value *and exactly
    /// representable in the source format* (WGSL, "Floating point conversion"): float -> int
    /// tops out at 2147483520 (2^31 - 128), float -> uint at 4294967040, and a half infinity
    /// gives ±65504 clamped into the destination.
    NearestInSource,
    /// The language traps (WebAssembly's `trunc`). The value is the clamped one, and the
    /// builder API's trap flag ([`crate::lower::Lowering::trap_flag`]) is set; a batch kernel
    /// stops at the first such element with [`crate::jit::JitError::Trap`].
    Trap,
}

/// What a float -> integer conversion gives for NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum NanToInteger {
    /// Zero (OpenCL `_sat`, Rust, Direct3D, WebAssembly `trunc_sat`; clconv's choice where a
    /// language leaves it undefined: WGSL, GLSL, Metal).
    Zero,
    /// The language traps (WebAssembly's `trunc`); the value is 0, as [`OutOfRange::Trap`]
    /// says.
    Trap,
    /// `1 << (width - 1)`: the destination's MIN for a signed type, 2^(N-1) for an unsigned
    /// one (PTX `cvt` from an `.f64` source or into a 64-bit destination).
    HighBit,
}

/// What a conversion into a floating type gives after rounding, beyond the rounded value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FloatResult {
    /// The rounded value (every language but the clamps below).
    Rounded,
    /// Clamped to [0.0, 1.0], NaN -> +0.0 (PTX `cvt.sat` into `.f16`, `.f32`, `.f64`: "limits
    /// the result to the range [0.0, 1.0]. NaN results are flushed to positive zero"). A
    /// negative zero gives +0.0 (clconv's choice: the ISA does not say).
    UnitInterval,
    /// A negative result gives +0.0 and NaN the positive NaN with every payload bit set (PTX
    /// `cvt.relu` into `.f16`, `.bf16`: "clamps the result to 0 if negative. NaN results are
    /// converted to canonical NaN"). A negative zero gives +0.0 (clconv's choice).
    Relu,
    /// The rounded value, but every NaN the positive NaN with every payload bit set (0x7fff
    /// into half and bfloat16, 0x7fffffff into float; E4M3's positive NaN, 0x7f): what NVIDIA's
    /// GPUs give for a NaN through `cvt` between `.f32`, `.f16` and `.bf16`, where the ISA leaves
    /// the NaN open (measured on sm_90, `docs/ptx.md`). Spelled `_nancanon`.
    CanonicalNan,
    /// Into E8M0 only: the scale of the operand's magnitude. The sign is discarded, and zero
    /// (like every magnitude below 2^-127) gives 2^-127 (0x00); the rest as E8M0's rule has it
    /// (NaN 0xff; past 2^127 the NaN, or 0xfe under `_sat`). NVIDIA's rule: CUDA's
    /// `__nv_cvt_float_to_e8m0` ("Input number's absolute value is rounded to the closest
    /// power of two in the direction specified via rounding parameter. Rounded results that
    /// are smaller than the smallest representable target format number 2^-127 are then
    /// clipped to 2^-127") and PTX's `cvt.{rz,rp}{.satfinite}.ue8m0x2`. Spelled `_abs`.
    Magnitude,
}

/// The rules one conversion follows where languages differ.
///
/// Construct the set a language uses ([`Rules::OPENCL`], [`Rules::WGSL`]) or your own; the
/// fields say what each edge gives. Rules apply to the conversion classes they name (today:
/// float -> integer) and are ignored by the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rules {
    /// float -> integer, a value outside the destination's range.
    pub out_of_range: OutOfRange,
    /// float -> integer, NaN.
    pub nan: NanToInteger,
    /// Into a floating type: what the rounded result becomes.
    pub float_result: FloatResult,
    /// `float` (binary32) subnormal operands and results are flushed to zero of the same sign
    /// (PTX `cvt.ftz`: "flush single-precision subnormal inputs and results to
    /// sign-preserving zero").
    pub flush_float_subnormals: bool,
    /// Round to nearest breaks a tie away from zero instead of to even (IEEE 754-2019's
    /// roundTiesToAway; PTX `cvt.rna.tf32.f32`: "mantissa LSB rounds to nearest, ties away
    /// from zero"). Kept only where PTX has it, float -> tf32 rounding to nearest
    /// ([`Rules::normalised`], [`crate::Conversion::with_rules`]); spelled `_rta` in place of
    /// `_rte`.
    pub ties_away: bool,
}

impl Default for Rules {
    /// OpenCL C's rules.
    fn default() -> Rules {
        Rules::OPENCL
    }
}

impl Rules {
    /// OpenCL C with `_sat` (and clconv's defined reading of OpenCL without it): clamp to the
    /// destination, NaN -> 0. Also Rust `as`, Direct3D's `ftoi`/`ftou`, WebAssembly's
    /// `trunc_sat`, and clconv's defined results for GLSL and Metal.
    pub const OPENCL: Rules = Rules {
        out_of_range: OutOfRange::ClampToDestination,
        nan: NanToInteger::Zero,
        float_result: FloatResult::Rounded,
        flush_float_subnormals: false,
        ties_away: false,
    };

    /// WGSL: clamp to the nearest value the source format represents exactly; NaN, which WGSL
    /// leaves indeterminate, gives 0.
    pub const WGSL: Rules = Rules {
        out_of_range: OutOfRange::NearestInSource,
        ..Rules::OPENCL
    };

    /// WebAssembly's `trunc`: NaN and out-of-range values trap (the values are OpenCL's `_sat`
    /// ones, for the lanes that do not).
    pub const TRAPPING: Rules = Rules {
        out_of_range: OutOfRange::Trap,
        nan: NanToInteger::Trap,
        ..Rules::OPENCL
    };

    /// OpenCL's rules but NaN -> `1 << (width - 1)` (PTX's rule from `.f64` and into 64-bit
    /// destinations), spelled `_satmsb`.
    pub const HIGH_BIT_NAN: Rules = Rules {
        nan: NanToInteger::HighBit,
        ..Rules::OPENCL
    };

    /// Every float -> integer rule set a name's modifier spells: `_sat` ([`Rules::OPENCL`]),
    /// `_satsrc` ([`Rules::WGSL`]), `_trap` ([`Rules::TRAPPING`]), `_satmsb`
    /// ([`Rules::HIGH_BIT_NAN`]) and `_satsrcmsb` (WGSL's clamp with the high-bit NaN).
    ///
    /// ```
    /// use clconv::rules::Rules;
    /// let spelled: Vec<_> = Rules::FLOAT_TO_INTEGER.iter().map(|r| r.modifier()).collect();
    /// assert_eq!(spelled, [None, Some("_satsrc"), Some("_trap"), Some("_satmsb"), Some("_satsrcmsb")]);
    /// ```
    pub const FLOAT_TO_INTEGER: [Rules; 5] = [
        Rules::OPENCL,
        Rules::WGSL,
        Rules::TRAPPING,
        Rules::HIGH_BIT_NAN,
        Rules {
            nan: NanToInteger::HighBit,
            ..Rules::WGSL
        },
    ];

    /// PTX `cvt`'s rules for a float `src` -> integer `dst` conversion: clamped, and NaN gives 0,
    /// or `1 << (width - 1)` from an f64 source or into a 64-bit destination.
    pub const fn ptx(src: ScalarType, dst: ScalarType) -> Rules {
        let high_bit = matches!(src, ScalarType::Double) || dst.bits() == 64;
        Rules {
            out_of_range: OutOfRange::ClampToDestination,
            nan: if high_bit {
                NanToInteger::HighBit
            } else {
                NanToInteger::Zero
            },
            ..Rules::OPENCL
        }
    }

    /// The bits a NaN converts to into `dst` (an integer type), unless the rules trap.
    pub fn nan_bits(self, dst: ScalarType) -> u64 {
        match self.nan {
            NanToInteger::HighBit => 1u64 << (dst.bits() - 1),
            NanToInteger::Zero | NanToInteger::Trap => 0,
        }
    }

    /// True when an input can trap under these rules.
    pub const fn traps(self) -> bool {
        matches!(self.out_of_range, OutOfRange::Trap) || matches!(self.nan, NanToInteger::Trap)
    }

    /// The rules as they apply to a `src` -> `dst` conversion: OpenCL's wherever these give the
    /// same result as OpenCL's on every input (so that the request shares OpenCL's kernel).
    pub fn normalised(self, src: ScalarType, dst: ScalarType) -> Rules {
        // To or from bool nothing is rounded, clamped or flushed: every language's bool
        // conversion is the same exact one.
        if src.is_bool() || dst.is_bool() {
            return Rules::OPENCL;
        }
        // The narrow formats (FP4, FP6, E8M0, the FNUZ fp8s, tf32) take none of these rules:
        // their names refuse them (`ConversionError::NarrowModifier`), and a rule set given
        // through `Conversion::with_rules` is dropped rather than lowered into a shape no
        // lowering has (a tf32 `_relu` once reached an unreachable arm).
        // The exceptions: NVIDIA's E8M0 rules, E8M0 of a float's magnitude (`_abs`) and the
        // canonical NaN out of E8M0 into half, bfloat16 and float (`_nancanon`: CUDA's
        // `__nv_cvt_e8m0_to_bf16raw` gives 0x7fff for 0xff); and PTX's `.relu` into tf32 from
        // float (`cvt.frnd2{.satfinite}{.relu}.tf32.f32`), into FP6 and FP4 from float and out
        // of them into half (`cvt.rn.satfinite{.relu}.f6x2type.f32`,
        // `cvt.rn{.relu}.f16x2.f6x2type`, the same with `.f4x2type`).
        if src.is_narrow() || dst.is_narrow() {
            let plain = |t: ScalarType| t.is_float() && !t.is_narrow();
            // And PTX's ties-away rounding into tf32 from float (`cvt.rna.tf32.f32`).
            let ties_away = self.ties_away && (src, dst) == (ScalarType::Float, ScalarType::Tf32);
            let kept = match self.float_result {
                FloatResult::Magnitude if dst == ScalarType::Fp8E8M0 && plain(src) => {
                    FloatResult::Magnitude
                }
                FloatResult::CanonicalNan if src == ScalarType::Fp8E8M0 && plain(dst) => {
                    FloatResult::CanonicalNan
                }
                FloatResult::Relu if relu_on_narrow(src, dst) => FloatResult::Relu,
                _ => FloatResult::Rounded,
            };
            return Rules {
                float_result: kept,
                ties_away,
                ..Rules::OPENCL
            };
        }
        // The float rules where they can change a result: a clamp of a float result; flushing
        // where a binary32 operand or result can be subnormal (a float operand; a float result
        // from a format whose range reaches float's subnormals).
        let floats = Rules {
            float_result: if dst.is_float() && self.float_result != FloatResult::Magnitude {
                self.float_result
            } else {
                FloatResult::Rounded
            },
            flush_float_subnormals: self.flush_float_subnormals
                && (src == ScalarType::Float
                    || (dst == ScalarType::Float
                        && matches!(src, ScalarType::Double | ScalarType::BFloat))),
            ..Rules::OPENCL
        };
        if !(src.is_float() && dst.is_integer()) {
            return floats;
        }
        let integer = Rules {
            float_result: floats.float_result,
            flush_float_subnormals: floats.flush_float_subnormals,
            ties_away: false,
            ..self
        };
        if self.traps() {
            return integer;
        }
        match self.integer_bounds(src, dst) {
            Some(bounds) if bounds != destination_bounds(dst) => integer,
            _ => Rules {
                out_of_range: OutOfRange::ClampToDestination,
                ..integer
            },
        }
    }

    /// True when the rules change a float result or flush subnormals ([`FloatResult`],
    /// [`Rules::flush_float_subnormals`]): the conversion runs per element, and
    /// `convert_T(T)` is no longer the identity.
    pub const fn changes_floats(self) -> bool {
        self.flush_float_subnormals
            || self.ties_away
            || !matches!(self.float_result, FloatResult::Rounded)
    }

    /// The modifiers a name spells the float rules with, after the float -> integer one:
    /// `_ftz`, then `_clamp01`, `_relu`, `_nancanon` or `_abs` (empty for none).
    pub fn float_modifiers(self) -> String {
        let mut out = String::new();
        if self.flush_float_subnormals {
            out.push_str("_ftz");
        }
        match self.float_result {
            FloatResult::Rounded => {}
            FloatResult::UnitInterval => out.push_str("_clamp01"),
            FloatResult::Relu => out.push_str("_relu"),
            FloatResult::CanonicalNan => out.push_str("_nancanon"),
            FloatResult::Magnitude => out.push_str("_abs"),
        }
        out
    }

    /// For a float `src` -> integer `dst` conversion, the range out-of-range values are clamped
    /// into, as integers: `None` for other classes.
    ///
    /// Under [`OutOfRange::NearestInSource`] the bounds are the destination's MIN and MAX
    /// moved toward zero to the nearest integers `src` represents exactly (an integer `m` is
    /// exact in a format of `p` significand bits when `m` has at most `p` significant bits and
    /// does not exceed the largest finite value).
    pub fn integer_bounds(self, src: ScalarType, dst: ScalarType) -> Option<(i128, i128)> {
        if !(src.is_float() && dst.is_integer()) {
            return None;
        }
        let (lo, hi) = destination_bounds(dst);
        Some(match self.out_of_range {
            OutOfRange::ClampToDestination | OutOfRange::Trap => (lo, hi),
            OutOfRange::NearestInSource => (
                -exact_at_most(src, lo.unsigned_abs()),
                exact_at_most(src, hi as u128),
            ),
        })
    }

    /// The modifier a name spells these rules with after the destination, in place of `_sat`
    /// (`convert_int_satsrc(float)`), or `None` for OpenCL's.
    pub const fn modifier(self) -> Option<&'static str> {
        match (self.out_of_range, self.nan) {
            (OutOfRange::Trap, _) | (_, NanToInteger::Trap) => Some("_trap"),
            (OutOfRange::ClampToDestination, NanToInteger::Zero) => None,
            (OutOfRange::NearestInSource, NanToInteger::Zero) => Some("_satsrc"),
            (OutOfRange::ClampToDestination, NanToInteger::HighBit) => Some("_satmsb"),
            (OutOfRange::NearestInSource, NanToInteger::HighBit) => Some("_satsrcmsb"),
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let range = match self.out_of_range {
            OutOfRange::ClampToDestination => "clamp to the destination",
            OutOfRange::NearestInSource => "clamp to the nearest value exact in the source",
            OutOfRange::Trap => "trap",
        };
        let nan = match self.nan {
            NanToInteger::Zero => "NaN -> 0",
            NanToInteger::Trap => "NaN traps",
            NanToInteger::HighBit => "NaN -> 1 << (width - 1)",
        };
        write!(f, "out of range: {range}; {nan}")?;
        match self.float_result {
            FloatResult::Rounded => {}
            FloatResult::UnitInterval => f.write_str("; float results clamped to [0, 1]")?,
            FloatResult::Relu => f.write_str("; negative float results give +0")?,
            FloatResult::CanonicalNan => f.write_str("; NaN results are the canonical NaN")?,
            FloatResult::Magnitude => f.write_str("; the E8M0 of the magnitude, zero 2^-127")?,
        }
        if self.flush_float_subnormals {
            f.write_str("; float subnormals flushed")?;
        }
        if self.ties_away {
            f.write_str("; ties round away from zero")?;
        }
        Ok(())
    }
}

/// True for the narrow-format conversions PTX has a `.relu` on: float -> tf32, float, half
/// and bfloat16 -> FP6 and FP4 (PTX 9.1 added the `.f16x2`/`.bf16x2` sources), FP6 and FP4
/// -> half.
pub(crate) const fn relu_on_narrow(src: ScalarType, dst: ScalarType) -> bool {
    use ScalarType::{BFloat, Float, Fp4E2M1, Fp6E2M3, Fp6E3M2, Half, Tf32};
    matches!(
        (src, dst),
        (Float, Tf32)
            | (Float | Half | BFloat, Fp6E2M3 | Fp6E3M2 | Fp4E2M1)
            | (Fp6E2M3 | Fp6E3M2 | Fp4E2M1, Half)
    )
}

/// The destination's [MIN, MAX].
fn destination_bounds(dst: ScalarType) -> (i128, i128) {
    match (dst.int_min(), dst.int_max()) {
        (Some(lo), Some(hi)) => (lo, hi),
        _ => unreachable!("integer_bounds checked that the destination is an integer"),
    }
}

/// The largest integer at most `m` that the float format `src` represents exactly.
fn exact_at_most(src: ScalarType, m: u128) -> i128 {
    let (precision, max_finite): (u32, u128) = match src {
        ScalarType::Half => (11, 65504),
        ScalarType::Float => (24, ((1u128 << 24) - 1) << 104),
        // Every 64-bit integer is below double's largest finite value.
        ScalarType::Double => (53, u128::MAX),
        ScalarType::BFloat => (8, ((1u128 << 8) - 1) << 120),
        ScalarType::Fp8E4M3 => (4, 448),
        ScalarType::Fp8E5M2 => (3, 57344),
        _ => unreachable!("integer_bounds checked that the source is a float"),
    };
    let m = m.min(max_finite);
    let len = 128 - m.leading_zeros();
    let drop = len.saturating_sub(precision);
    ((m >> drop) << drop) as i128
}
