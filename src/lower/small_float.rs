//! The floating formats narrower than float, converted through float: half (whose sequences
//! live in [`super::half`]), bfloat16, and the OCP 8-bit floats E4M3 and E5M2, in integer and
//! float32 IR that every Cranelift backend lowers.
//!
//! A format is its fields ([`SmallFloat`]): width, fraction bits, exponent bias, and whether it
//! has infinities (E4M3 has none: exponent 1111 holds normal numbers up to 448, and only
//! S.1111.111 is NaN).
//!
//! - **small -> float** is exact. bfloat16 is float's upper half: a shift (and the quiet bit for
//!   a NaN). The others: normals move their fields into place and rebias the exponent;
//!   subnormals are `m * 2^(1 - bias - fraction)`, an exact integer conversion and an exact
//!   scaling; infinities and NaNs take float's all-ones exponent, a NaN its payload and the
//!   quiet bit.
//! - **float -> small**, rounded by the mode, on float's bits (half to nearest-even takes the
//!   shorter sequence of [`super::half`]). bfloat16 has float's exponent range, so no result of
//!   it is subnormal where float's is not: one add below the kept bits and a shift round it.
//!   The others, per element (all arithmetic in I32; for half, `shift` = 13 and the rebias
//!   112; the other formats put their fields there):
//!   - Terms: `a` is |x|'s bit pattern, `E` its biased exponent (1 for subnormals), `m` the
//!     24-bit significand with the implicit bit, so |x| = m * 2^(E-150). A half with biased
//!     exponent `Eh` and 11-bit significand `q` is q * 2^(Eh-25).
//!   - Keep `q = m >> s` with `s = max(13, 126 - E)`: 13 for half normals, more as the result
//!     goes subnormal. `s` is capped at 25, where `q` = 0 and the cut-off part (< 2^24) is
//!     still "nonzero but below half a unit", which is all rounding needs.
//!   - The cut-off `rem = m mod 2^s` against `2^(s-1)` decides the increment: rte rounds up
//!     past the half and on the half when `q` is odd; rtp/rtn round up the magnitude of a
//!     positive/negative value whenever `rem != 0`; rtz never.
//!   - `h = ((max(E - 112, 1) - 1) << 10) + q + inc`. Adding `q` with its implicit bit lifts
//!     the exponent field by one, and a carry out of the significand (0x7ff + 1) moves to the
//!     next binade or from the largest subnormal to the smallest normal, both correctly.
//!
//!   In vectors (Cranelift's vector shifts take one amount for every lane) normal results
//!   rebias, add the rounding increment below the kept bits and shift; subnormal results scale
//!   |x| so that the smallest subnormal is 1 (exact) and round to an integer by the mode.
//! - **overflow**: beyond the largest finite magnitude the result is what IEEE-754 gives by the
//!   mode (infinity, or the largest finite value when the mode rounds toward zero for the
//!   value's sign); E4M3 gives its NaN where IEEE-754 gives infinity. `_sat` gives the largest
//!   finite value of the sign for every non-NaN beyond it, infinities included
//!   (`src/reference.rs`, `overflow_rule`).
//! - **NaN**: the sign, the payload's top bits and the quiet bit; E4M3's only NaN, S.1111.111.
//!
//! Hard inputs: the largest finite value and the first value that rounds beyond it (E4M3: 448,
//! 464 (rte: NaN), 480; E5M2: 57344, 61440 (rte: inf)), the smallest subnormal and half of it
//! (a tie to zero under rte), -0.0, float subnormals, NaN payloads, E4M3's 0x7e and 0x7f.

use super::half;
use super::lanes::{round_vector, splat_bits, VectorRounding};
use super::values::{bitcast_le, int_const};
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// A floating format narrower than float, by its fields.
///
/// ```
/// use clconv::lower::small_float::SmallFloat;
/// use clconv::ScalarType;
/// let e4m3 = SmallFloat::of(ScalarType::Fp8E4M3).unwrap();
/// assert_eq!(e4m3.max_finite(), 0x7e); // 448
/// assert_eq!(SmallFloat::of(ScalarType::Fp8E5M2).unwrap().max_finite(), 0x7b); // 57344
/// assert!(SmallFloat::of(ScalarType::Float).is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmallFloat {
    /// The element type.
    pub ty: ScalarType,
    /// Width in bits: 16 or 8.
    pub width: u32,
    /// Fraction (explicit significand) bits.
    pub fraction: u32,
    /// The exponent bias.
    pub bias: u32,
    /// True for E4M3: no infinity, the only NaN has every exponent and fraction bit set.
    pub nan_only: bool,
}

impl SmallFloat {
    /// The format of `t`, if it is a floating type narrower than float.
    pub const fn of(t: ScalarType) -> Option<SmallFloat> {
        let (width, fraction, bias, nan_only) = match t {
            ScalarType::Half => (16, 10, 15, false),
            ScalarType::BFloat => (16, 7, 127, false),
            ScalarType::Fp8E4M3 => (8, 3, 7, true),
            ScalarType::Fp8E5M2 => (8, 2, 15, false),
            _ => return None,
        };
        Some(SmallFloat {
            ty: t,
            width,
            fraction,
            bias,
            nan_only,
        })
    }

    /// The bits of every magnitude (all but the sign).
    pub const fn magnitude_mask(self) -> u32 {
        (1 << (self.width - 1)) - 1
    }

    /// The infinity's bits (the all-ones exponent), or for E4M3 the first magnitude past the
    /// largest finite one (its NaN).
    pub const fn first_beyond(self) -> u32 {
        self.max_finite() + 1
    }

    /// The largest finite magnitude's bits.
    pub const fn max_finite(self) -> u32 {
        if self.nan_only {
            self.magnitude_mask() - 1
        } else {
            (((1 << (self.width - 1 - self.fraction)) - 1) << self.fraction) - 1
        }
    }

    /// The largest magnitude's bits that are not a NaN: infinity's, or for E4M3 (no infinity)
    /// the largest finite one's. A NaN's magnitude is above it.
    ///
    /// ```
    /// use clconv::lower::small_float::SmallFloat;
    /// use clconv::ScalarType::{BFloat, Fp8E4M3, Fp8E5M2, Half};
    /// assert_eq!(SmallFloat::of(Half).unwrap().largest_non_nan(), 0x7c00);
    /// assert_eq!(SmallFloat::of(BFloat).unwrap().largest_non_nan(), 0x7f80);
    /// assert_eq!(SmallFloat::of(Fp8E4M3).unwrap().largest_non_nan(), 0x7e);
    /// assert_eq!(SmallFloat::of(Fp8E5M2).unwrap().largest_non_nan(), 0x7c);
    /// ```
    pub const fn largest_non_nan(self) -> u32 {
        if self.nan_only {
            self.max_finite()
        } else {
            self.first_beyond()
        }
    }

    /// float's exponent field minus this format's, for the same power of two.
    const fn rebias(self) -> u32 {
        127 - self.bias
    }

    /// Fraction bits float has beyond this format's.
    const fn shift(self) -> u32 {
        23 - self.fraction
    }

    /// The NaN of a NaN float whose fraction bits are `fraction` (positive): E4M3's only NaN,
    /// or the all-ones exponent with the payload's top bits and the quiet bit.
    fn nan_bits(self, b: &mut FunctionBuilder, fraction: Value) -> Value {
        let ty = b.func.dfg.value_type(fraction);
        if self.nan_only {
            return splat_or_const(b, ty, u64::from(self.magnitude_mask()));
        }
        let payload = ushr(b, fraction, self.shift());
        let quiet = (self.max_finite() + 1) | (1 << (self.fraction - 1));
        let quiet = splat_or_const(b, ty, u64::from(quiet));
        b.ins().bor(payload, quiet)
    }
}

fn splat_or_const(b: &mut FunctionBuilder, ty: Type, bits: u64) -> Value {
    if ty.is_vector() {
        splat_bits(b, ty, bits)
    } else {
        int_const(b, ty, bits as i128)
    }
}

fn ushr(b: &mut FunctionBuilder, x: Value, amount: u32) -> Value {
    b.ins().ushr_imm_u(x, i64::from(amount))
}

/// Widens one element of the small float `fmt` (its bits: I16 or I8) to an F32 value, exactly.
pub fn to_f32(b: &mut FunctionBuilder, fmt: SmallFloat, x: Value) -> Value {
    if fmt.ty == ScalarType::Half {
        return half::half_bits_to_f32(b, x);
    }
    let i = types::I32;
    let x = b.ins().uextend(i, x);
    let w = b.ins().ishl_imm_u(x, i64::from(32 - fmt.width));
    let sign = b.ins().band_imm_u(w, 0x8000_0000u32 as i64);
    let abs = b.ins().bxor(w, sign);
    if fmt.ty == ScalarType::BFloat {
        // float's upper half; a NaN is made quiet.
        let is_nan = b
            .ins()
            .icmp_imm_u(IntCC::UnsignedGreaterThan, abs, 0x7f80_0000);
        let quiet = b.ins().uextend(i, is_nan);
        let quiet = b.ins().ishl_imm_u(quiet, 22);
        let bits = b.ins().bor(w, quiet);
        return bitcast_le(b, types::F32, bits);
    }
    let magnitude = ushr(b, abs, 32 - fmt.width);
    let m = b.ins().band_imm_u(magnitude, (1i64 << fmt.fraction) - 1);
    let normal = b.ins().ishl_imm_u(magnitude, i64::from(fmt.shift()));
    let normal = b.ins().iadd_imm_u(normal, i64::from(fmt.rebias()) << 23);
    let mf = b.ins().fcvt_from_uint(types::F32, m);
    let scale = f32::from_bits((127 + 1 - fmt.bias - fmt.fraction) << 23);
    let scale = b.ins().f32const(scale);
    let sub = b.ins().fmul(mf, scale);
    let sub = bitcast_le(b, i, sub);
    let is_sub = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedLessThan, magnitude, 1i64 << fmt.fraction);
    let bits = b.ins().select(is_sub, sub, normal);
    let special = special_to_f32(b, fmt, m);
    let beyond = b.ins().icmp_imm_u(
        IntCC::UnsignedGreaterThanOrEqual,
        magnitude,
        i64::from(fmt.first_beyond()),
    );
    let bits = b.ins().select(beyond, special, bits);
    let bits = b.ins().bor(bits, sign);
    bitcast_le(b, types::F32, bits)
}

/// float's bits for the infinity or NaN whose fraction is `m` (E4M3: its NaN, fraction 111).
fn special_to_f32(b: &mut FunctionBuilder, fmt: SmallFloat, m: Value) -> Value {
    let ty = b.func.dfg.value_type(m);
    let exp = splat_or_const(b, ty, 0x7f80_0000);
    let payload = b.ins().ishl_imm_u(m, i64::from(fmt.shift()));
    let special = b.ins().bor(exp, payload);
    // A NaN (any fraction but zero) is made quiet.
    let zero = splat_or_const(b, ty, 0);
    let is_nan = b.ins().icmp(IntCC::NotEqual, m, zero);
    let quiet = if ty.is_vector() {
        let bit = splat_bits(b, ty, 0x40_0000);
        b.ins().band(is_nan, bit)
    } else {
        let q = b.ins().uextend(ty, is_nan);
        b.ins().ishl_imm_u(q, 22)
    };
    b.ins().bor(special, quiet)
}

/// Rounds the float whose bits are the I32 `x` into the small float `fmt` by `rounding`;
/// `saturate` (`_sat`) gives the largest finite value of the sign beyond it. Returns the
/// element's bits (I16 or I8).
pub fn from_f32_bits(
    b: &mut FunctionBuilder,
    fmt: SmallFloat,
    x: Value,
    rounding: Rounding,
    saturate: bool,
) -> Value {
    if fmt.ty == ScalarType::Half && rounding == Rounding::Rte && !saturate {
        return half::f32_bits_to_half_rte(b, x);
    }
    let i = types::I32;
    let elem = types::Type::int(fmt.width as u16).expect("8 or 16 bits");
    let sign = b.ins().ushr_imm_u(x, 31);
    let a = b.ins().band_imm_u(x, 0x7fff_ffff);
    let fraction = b.ins().band_imm_u(a, 0x7f_ffff);
    let zero = int_const(b, i, 0);
    let one = int_const(b, i, 1);
    // Magnitudes that round up, by the sign: rtp rounds up positive ones, rtn negative ones.
    let up_sign = match rounding {
        Rounding::Rtp => Some(0),
        Rounding::Rtn => Some(1),
        _ => None,
    };
    let rounds_up = up_sign.map(|s| b.ins().icmp_imm_u(IntCC::Equal, sign, s));

    let finite = if fmt.ty == ScalarType::BFloat {
        // float's exponent range: add below the kept bits, shift.
        let add = match rounding {
            Rounding::Rte => {
                let kept = b.ins().ushr_imm_u(a, 16);
                let odd = b.ins().band_imm_u(kept, 1);
                b.ins().iadd_imm_u(odd, 0x7fff)
            }
            Rounding::Rtz => zero,
            Rounding::Rtp | Rounding::Rtn => {
                let all = int_const(b, i, 0xffff);
                b.ins().select(rounds_up.expect("directed"), all, zero)
            }
        };
        let h = b.ins().iadd(a, add);
        b.ins().ushr_imm_u(h, 16)
    } else {
        // The half sequence of `half::f32_bits_to_half` with the format's fields.
        let e = b.ins().ushr_imm_u(a, 23);
        let is_normal = b.ins().icmp(IntCC::NotEqual, e, zero);
        let implicit = b.ins().uextend(i, is_normal);
        let implicit = b.ins().ishl_imm_u(implicit, 23);
        let m = b.ins().bor(fraction, implicit);
        let e = b.ins().smax(e, one);
        // s = max(shift, shift + (rebias + 1) - E), capped at 25 (q = 0, the rest nonzero).
        let top = int_const(b, i, i128::from(fmt.shift() + fmt.rebias() + 1));
        let s = b.ins().isub(top, e);
        let min_s = int_const(b, i, i128::from(fmt.shift()));
        let s = b.ins().smax(s, min_s);
        let c25 = int_const(b, i, 25);
        let s = b.ins().smin(s, c25);
        let q = b.ins().ushr(m, s);
        let unit = b.ins().ishl(one, s);
        let low_mask = b.ins().isub(unit, one);
        let rem = b.ins().band(m, low_mask);
        let halfway = b.ins().ushr_imm_u(unit, 1);
        let inc = match rounding {
            Rounding::Rtz => zero,
            Rounding::Rte => {
                let above = b.ins().icmp(IntCC::UnsignedGreaterThan, rem, halfway);
                let tie = b.ins().icmp(IntCC::Equal, rem, halfway);
                let odd = b.ins().band_imm_u(q, 1);
                let odd = b.ins().icmp_imm_u(IntCC::NotEqual, odd, 0);
                let tie_up = b.ins().band(tie, odd);
                let up = b.ins().bor(above, tie_up);
                b.ins().uextend(i, up)
            }
            Rounding::Rtp | Rounding::Rtn => {
                let inexact = b.ins().icmp_imm_u(IntCC::NotEqual, rem, 0);
                let up = b.ins().band(inexact, rounds_up.expect("directed"));
                b.ins().uextend(i, up)
            }
        };
        let eh = b.ins().iadd_imm_u(e, -i64::from(fmt.rebias()));
        let eh = b.ins().smax(eh, one);
        let eh = b.ins().isub(eh, one);
        let h = b.ins().ishl_imm_u(eh, i64::from(fmt.fraction));
        let h = b.ins().iadd(h, q);
        b.ins().iadd(h, inc)
    };

    // Beyond the largest finite value: by the mode, or saturated.
    let max = int_const(b, i, i128::from(fmt.max_finite()));
    let inf = int_const(b, i, i128::from(fmt.first_beyond()));
    let overflow_value = if saturate {
        max
    } else {
        match rounding {
            Rounding::Rte => inf,
            Rounding::Rtz => max,
            Rounding::Rtp | Rounding::Rtn => b.ins().select(rounds_up.expect("directed"), inf, max),
        }
    };
    let overflow = b.ins().icmp(IntCC::UnsignedGreaterThan, finite, max);
    let magnitude = b.ins().select(overflow, overflow_value, finite);

    // Infinity gives infinity (E4M3: its NaN; `_sat`: the largest finite value); NaN its NaN.
    let is_nan = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedGreaterThan, a, 0x7f80_0000);
    let is_inf = b.ins().icmp_imm_u(IntCC::Equal, a, 0x7f80_0000);
    let inf_value = if saturate { max } else { inf };
    let magnitude = b.ins().select(is_inf, inf_value, magnitude);
    let nan = fmt.nan_bits(b, fraction);
    let magnitude = b.ins().select(is_nan, nan, magnitude);
    let sign = b.ins().ishl_imm_u(sign, i64::from(fmt.width - 1));
    let result = b.ins().bor(magnitude, sign);
    b.ins().ireduce(elem, result)
}

/// Vector float -> bfloat16 by `rounding` (`saturate`: `_sat`): F32X4 in, I32X4 out with the
/// bfloat16 sign-extended, in 4 to 10 operations per four lanes. The rounding works on the
/// float's bits, sign included: adding below the kept 16 bits rounds the magnitude (a carry
/// moves into the exponent, up to infinity, and reaches the sign bit only from a NaN, which is
/// replaced), and the arithmetic shift that keeps the top half sign-extends it for `snarrow`.
/// Nearest-even adds 0x7fff and the kept lsb; the magnitude-up modes 0xffff on the lanes of
/// their sign; toward zero nothing. bfloat16's exponent range is float's: no separate subnormal
/// or overflow step. `_sat` clamps the sign-extended result by its sign (0x7f7f above, 0xff7f
/// below, which is -129 sign-extended).
fn f32x4_to_bfloat(b: &mut FunctionBuilder, x: Value, rounding: Rounding, saturate: bool) -> Value {
    let i = types::I32X4;
    let w = bitcast_le(b, i, x);
    let negative = b.ins().sshr_imm_u(w, 31);
    let add = match rounding {
        Rounding::Rte => {
            let kept = b.ins().ushr_imm_u(w, 16);
            let one = splat_bits(b, i, 1);
            let odd = b.ins().band(kept, one);
            let base = splat_bits(b, i, 0x7fff);
            Some(b.ins().iadd(odd, base))
        }
        Rounding::Rtz => None,
        Rounding::Rtp => {
            let all = splat_bits(b, i, 0xffff);
            Some(b.ins().band_not(all, negative))
        }
        Rounding::Rtn => {
            let all = splat_bits(b, i, 0xffff);
            Some(b.ins().band(all, negative))
        }
    };
    let rounded = match add {
        Some(add) => b.ins().iadd(w, add),
        None => w,
    };
    // x != x holds for a NaN only: one compare (`cmpneqps` on x86) where the magnitude test
    // takes two. The compare reads the bits as floats and changes none.
    let xf = bitcast_le(b, types::F32X4, x);
    let is_nan = b.ins().fcmp(FloatCC::NotEqual, xf, xf);
    // A NaN keeps its top half with the quiet bit (bit 22 of the float, 6 of the bfloat16).
    let quiet = splat_bits(b, i, 0x0040_0000);
    let nan = b.ins().bor(w, quiet);
    if !saturate {
        // Picking before the shift lets one shift serve both the NaN and the rounded lanes.
        let picked = b.ins().bitselect(is_nan, nan, rounded);
        return b.ins().sshr_imm_u(picked, 16);
    }
    // The clamp would catch a NaN's top half (above 0x7f7f), so the NaN is picked after it.
    let h = b.ins().sshr_imm_u(rounded, 16);
    let above = splat_bits(b, i, 0x7f7f);
    let below = splat_bits(b, i, 0xffff_ff7f);
    let bound = b.ins().bitselect(negative, below, above);
    let h = b.ins().smin(h, bound);
    let nan = b.ins().sshr_imm_u(nan, 16);
    b.ins().bitselect(is_nan, nan, h)
}

/// How a vector of narrow lanes is spread into the upper halves of lanes twice as wide, zeros
/// below: the first step of every conversion from half, bfloat16 and the 8-bit floats. Both
/// give the same bits; which is shorter depends on the target, so the recipe names it
/// (`half.round_native` interleaves, `half.round_native_widen` widens).
///
/// ```
/// use clconv::lower::small_float::{small16_to_f32x4s, SmallFloat, Unpack};
/// use clconv::ScalarType;
/// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
/// use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
/// use cranelift_codegen::{settings, verifier::verify_function};
/// use target_lexicon::PointerWidth;
/// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
///
/// // fn(I16X8 of half bits) -> two F32X4, once per way of spreading the lanes.
/// for unpack in [Unpack::Interleave, Unpack::Widen] {
///     let mut sig = Signature::new(CallConv::SystemV);
///     sig.params.push(AbiParam::new(types::I16X8));
///     sig.returns.extend([AbiParam::new(types::F32X4), AbiParam::new(types::F32X4)]);
///     let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
///     let mut ctx = FunctionBuilderContext::new();
///     let mut b = FunctionBuilder::new(&mut func, &mut ctx);
///     let entry = b.create_block();
///     b.append_block_params_for_function_params(entry);
///     b.switch_to_block(entry);
///     let halves = b.block_params(entry)[0];
///     let half = SmallFloat::of(ScalarType::Half).unwrap();
///     let [low, high] = small16_to_f32x4s(&mut b, half, unpack, halves);
///     b.ins().return_(&[low, high]);
///     b.seal_all_blocks();
///     b.finalize(TargetFrontendConfig {
///         default_call_conv: CallConv::SystemV,
///         pointer_width: PointerWidth::U64,
///         page_size_align_log2: 12,
///     });
///     verify_function(&func, &settings::Flags::new(settings::builder())).unwrap();
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unpack {
    /// A byte shuffle with a zero vector: one instruction on x86-64 (`punpcklwd`/`punpckhwd`)
    /// and aarch64 (`zip1`/`zip2`).
    Interleave,
    /// A zero-extending widening and a left shift: two or three instructions on RISC-V V
    /// (`vzext`, `vsll`) and s390x (`vuplh`, `veslf`), where a shuffle of two vectors costs
    /// two gathers (RISC-V) or lane-order swaps around the permute (s390x).
    Widen,
}

/// The byte shuffles (of a zero vector, bytes 0-15, and an I16X8, bytes 16-31) that put its
/// low and its high four 16-bit lanes into the upper halves of 32-bit lanes, zeros below
/// (`punpcklwd`/`punpckhwd` with zeros on x86).
const WORDS_INTO_UPPER_HALVES: [[u8; 16]; 2] = [
    [0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23],
    [8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31],
];

/// Puts the low (`k = 0`) or the high (`k = 1`) four lanes of I16X8s into the upper halves
/// of 32-bit lanes, zeros below, by [`Unpack`]. The interleave's zero vector is made once, in
/// [`WordsToUpperHalves::new`].
enum WordsToUpperHalves {
    Interleave { zero: Value },
    Widen,
}

impl WordsToUpperHalves {
    fn new(b: &mut FunctionBuilder, unpack: Unpack) -> Self {
        match unpack {
            Unpack::Interleave => WordsToUpperHalves::Interleave {
                zero: splat_bits(b, types::I16X8, 0),
            },
            Unpack::Widen => WordsToUpperHalves::Widen,
        }
    }

    /// Half `k` of `v` in the upper halves, as `ty` (I32X4 or F32X4).
    fn half(&self, b: &mut FunctionBuilder, v: Value, k: usize, ty: Type) -> Value {
        let w = match *self {
            WordsToUpperHalves::Interleave { zero } => {
                super::lanes::shuffle_bytes(b, zero, v, WORDS_INTO_UPPER_HALVES[k])
            }
            WordsToUpperHalves::Widen => {
                let w = widened(b, v, k);
                b.ins().ishl_imm_u(w, 16)
            }
        };
        bitcast_le(b, ty, w)
    }

    /// Half `k` of `v` in the upper halves and shifted right by `down` (1 to 16): I32X4. Widening
    /// shifts left by `16 - down` at once, which gives the same (the lower half is zero).
    fn half_shifted_down(&self, b: &mut FunctionBuilder, v: Value, k: usize, down: u32) -> Value {
        match *self {
            WordsToUpperHalves::Interleave { .. } => {
                let w = self.half(b, v, k, types::I32X4);
                b.ins().ushr_imm_u(w, i64::from(down))
            }
            WordsToUpperHalves::Widen => {
                let w = widened(b, v, k);
                match 16 - down {
                    0 => w,
                    up => b.ins().ishl_imm_u(w, i64::from(up)),
                }
            }
        }
    }
}

/// The eight 16-bit lanes of `v` (an I16X8) in the upper halves of 32-bit lanes, zeros below,
/// by `unpack`: two F32X4. For a float whose low 16 bits are zero (a bfloat16 widened) this is
/// the float.
pub(crate) fn words_to_upper_halves(
    b: &mut FunctionBuilder,
    unpack: Unpack,
    v: Value,
) -> [Value; 2] {
    let upper = WordsToUpperHalves::new(b, unpack);
    [0, 1].map(|k| upper.half(b, v, k, types::F32X4))
}

/// The low (`k = 0`) or high (`k = 1`) half of `v`'s lanes, zero-extended to twice the width.
fn widened(b: &mut FunctionBuilder, v: Value, k: usize) -> Value {
    if k == 0 {
        b.ins().uwiden_low(v)
    } else {
        b.ins().uwiden_high(v)
    }
}

/// bfloat16 -> float, exact, for one I16X8 of bfloat16 bits: two F32X4. A NaN is made quiet
/// first, on the eight 16-bit lanes at once (its quiet bit is bit 6 of the bfloat16, bit 22 of
/// the float); spreading the lanes by `unpack` then puts each element in a 32-bit lane's upper
/// half, which is the float. Six operations per eight lanes with the interleave (`punpcklwd`/
/// `punpckhwd` with zeros on x86).
pub fn bfloat16x8_to_f32x4s(b: &mut FunctionBuilder, unpack: Unpack, v: Value) -> [Value; 2] {
    let h = types::I16X8;
    let abs_mask = splat_bits(b, h, 0x7fff);
    let abs = b.ins().band(v, abs_mask);
    let inf = splat_bits(b, h, 0x7f80);
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, abs, inf);
    let quiet_bit = splat_bits(b, h, 0x40);
    let quiet = b.ins().band(is_nan, quiet_bit);
    let v = b.ins().bor(v, quiet);
    let upper = WordsToUpperHalves::new(b, unpack);
    [0, 1].map(|k| upper.half(b, v, k, types::F32X4))
}

/// Vector small float -> float, exact, for eight elements in the top `fmt.width` bits of eight
/// 16-bit lanes (half's bits as they are; an 8-bit float's above a zero byte, which is what
/// interleaving its bytes with zeros gives): two F32X4, in 13 operations per four lanes, no
/// operand of a floating-point operation subnormal (a subnormal operand costs x86 a microcode
/// assist of about a hundred cycles). With `F` the fraction bits in the lane (the format's
/// and the zero byte's) and `bias` the format's:
/// - on the eight 16-bit lanes at once: the magnitude (`& 0x7fff`) and the sign; a NaN's quiet
///   bit (bit `F - 1`; E4M3's one NaN has it already); for a subnormal or zero (magnitude below
///   `1 << F`) the exponent bit `1 << F`, which makes it the normal `2^(1 - bias) * (1 + f)`;
///   and the upper halves of the float bits to add afterwards: the sign, with exponent 255
///   (`0x7f80`) for infinities and NaNs (magnitude above the largest finite), and `2^(1 - bias)`
///   for the subnormals.
/// - per four lanes: the magnitude, interleaved into the lane's upper half and shifted down by
///   `F - 7`, has the format's exponent in float's exponent field and its fraction at the top of
///   float's: a normal float `x * 2^(bias - 127)`; one exact multiplication by `2^(127 - bias)`
///   gives `x`; the subnormals' `2^(1 - bias)` subtracted (exact: both in
///   `[2^(1 - bias), 2^(2 - bias))`) leaves `f * 2^(1 - bias)`; the sign and, for infinities
///   and NaNs, exponent 255 over the product's are or-ed in. No NaN reaches the arithmetic, so
///   every target gives the same bits.
pub fn small16_to_f32x4s(
    b: &mut FunctionBuilder,
    fmt: SmallFloat,
    unpack: Unpack,
    v: Value,
) -> [Value; 2] {
    let h = types::I16X8;
    let pad = 16 - fmt.width;
    let fraction = fmt.fraction + pad;
    let max_finite = fmt.max_finite() << pad;
    // The magnitudes above which a lane is a NaN: above infinity, or for E4M3 above the largest
    // finite (its NaN has the quiet bit already; setting it again changes nothing).
    let nan_above = if fmt.nan_only {
        max_finite
    } else {
        fmt.first_beyond() << pad
    };
    let magnitude_mask = splat_bits(b, h, 0x7fff);
    let magnitude = b.ins().band(v, magnitude_mask);
    let sign = b.ins().bxor(v, magnitude);
    let nan_above = splat_bits(b, h, u64::from(nan_above));
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, magnitude, nan_above);
    let quiet_bit = splat_bits(b, h, 1 << (fraction - 1));
    let quiet = b.ins().band(is_nan, quiet_bit);
    let min_normal = splat_bits(b, h, 1 << fraction);
    let is_subnormal = b.ins().icmp(IntCC::SignedLessThan, magnitude, min_normal);
    let implicit = b.ins().band(is_subnormal, min_normal);
    let extra = b.ins().bor(quiet, implicit);
    let magnitude = b.ins().bor(magnitude, extra);
    let max_finite = splat_bits(b, h, u64::from(max_finite));
    let is_special = b
        .ins()
        .icmp(IntCC::SignedGreaterThan, magnitude, max_finite);
    let exponent_255 = splat_bits(b, h, 0x7f80);
    let top = b.ins().band(is_special, exponent_255);
    let top = b.ins().bor(top, sign);
    // 2^(1 - bias) as a float, its upper 16 bits.
    let min_normal_value = splat_bits(b, h, u64::from((128 - fmt.bias) << 7));
    let offset = b.ins().band(is_subnormal, min_normal_value);
    let upper = WordsToUpperHalves::new(b, unpack);
    let scale = splat_bits(b, types::F32X4, u64::from((254 - fmt.bias) << 23));
    [0, 1].map(|k| {
        let m = upper.half_shifted_down(b, magnitude, k, fraction - 7);
        let m = bitcast_le(b, types::F32X4, m);
        let product = b.ins().fmul(m, scale);
        let offset = upper.half(b, offset, k, types::F32X4);
        let value = b.ins().fsub(product, offset);
        let value = bitcast_le(b, types::I32X4, value);
        let top = upper.half(b, top, k, types::I32X4);
        let bits = b.ins().bor(value, top);
        bitcast_le(b, types::F32X4, bits)
    })
}

/// The sixteen bytes of an I8X16 as two I16X8, each byte in its lane's upper half above a zero
/// byte (`punpcklbw`/`punpckhbw` with zeros on x86): the lanes [`small16_to_f32x4s`] takes.
pub fn bytes_to_upper_halves(b: &mut FunctionBuilder, unpack: Unpack, v: Value) -> [Value; 2] {
    use super::lanes::shuffle_bytes;
    match unpack {
        Unpack::Interleave => {
            let zero = splat_bits(b, types::I8X16, 0);
            let low = [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23];
            let high = [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31];
            [low, high].map(|mask| {
                let w = shuffle_bytes(b, zero, v, mask);
                bitcast_le(b, types::I16X8, w)
            })
        }
        Unpack::Widen => [0, 1].map(|k| {
            let w = widened(b, v, k);
            b.ins().ishl_imm_u(w, 8)
        }),
    }
}

/// Four floats' bits split for rounding by [`round_to_fields_x4`]: [`split_sign_x4`]'s result.
#[derive(Clone, Copy)]
pub(crate) struct Split {
    /// The magnitudes' bits (I32X4).
    pub(crate) a: Value,
    /// The sign bits alone.
    pub(crate) sign: Value,
    /// A zero I32X4.
    pub(crate) zero: Value,
    /// The lanes the mode rounds away from zero: rtp's positive ones, rtn's negative ones.
    pub(crate) away: Option<Value>,
}

/// Splits the F32X4 `x` into magnitudes and signs, with the lanes `rounding` rounds away from
/// zero.
pub(crate) fn split_sign_x4(b: &mut FunctionBuilder, x: Value, rounding: Rounding) -> Split {
    let i = types::I32X4;
    let w = bitcast_le(b, i, x);
    let abs_mask = splat_bits(b, i, 0x7fff_ffff);
    let a = b.ins().band(w, abs_mask);
    let sign = b.ins().bxor(w, a);
    let zero = splat_bits(b, i, 0);
    let negative = b.ins().icmp(IntCC::NotEqual, sign, zero);
    let positive = b.ins().bnot(negative);
    let away = match rounding {
        Rounding::Rtp => Some(positive),
        Rounding::Rtn => Some(negative),
        _ => None,
    };
    Split {
        a,
        sign,
        zero,
        away,
    }
}

/// How [`round_to_fields_x4`] rounds the results below the format's smallest normal.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Subnormals {
    /// |x| scaled so that the smallest subnormal is 1, rounded to an integer by the mode
    /// (`nearest`, `ceil`, `floor` or the magic constant) and converted: every mode.
    Scaled,
    /// Under round to nearest even, |x| plus a power of two whose unit in the last place is the
    /// smallest subnormal: the float add rounds, two instructions where the scaled form takes
    /// nine on x86-64 (the conversion's NaN fix-ups included). Other modes as `Scaled`.
    Added,
}

/// A small float's or a narrow format's fields: fraction bits and exponent bias.
#[derive(Clone, Copy)]
pub(crate) struct Fields {
    /// Fraction bits.
    pub(crate) fraction: u32,
    /// Exponent bias.
    pub(crate) bias: u32,
}

/// The magnitudes `split.a` (an I32X4 of float bits, sign cleared) rounded by `rounding` into a
/// format of `fields`: each lane's code (exponent and fraction fields) before any overflow,
/// infinity or NaN rule, up to one past the largest code. Normal results by a rebias, a
/// rounding add and a shift; subnormal ones by scaling |x| so that the smallest subnormal is 1
/// and rounding to an integer by the mode (`kind`: the native instruction or the magic
/// constant; or, by `subnormals`, by an add), which reaches the smallest normal's code when it
/// rounds up to it. `split.away` are the lanes the mode rounds away from zero (rtp's positive
/// ones, rtn's negative ones). The one rounding core of [`from_f32x4`] and of the narrow formats' vector
/// encode (`super::narrow`).
pub(crate) fn round_to_fields_x4(
    b: &mut FunctionBuilder,
    fields: Fields,
    split: &Split,
    rounding: Rounding,
    kind: VectorRounding,
    subnormals: Subnormals,
) -> Value {
    let &Split { a, zero, away, .. } = split;
    let i = types::I32X4;
    let shift = 23 - fields.fraction;
    let rebias_field = 127 - fields.bias;
    // Normal results: rebias, round by an add, shift.
    let rebias = splat_bits(
        b,
        i,
        (u64::from(rebias_field) << 23).wrapping_neg() & 0xffff_ffff,
    );
    let biased = b.ins().iadd(a, rebias);
    let add = match rounding {
        Rounding::Rte => {
            let kept = ushr(b, a, shift);
            let one = splat_bits(b, i, 1);
            let odd = b.ins().band(kept, one);
            let base = splat_bits(b, i, (1 << (shift - 1)) - 1);
            b.ins().iadd(base, odd)
        }
        Rounding::Rtz => zero,
        Rounding::Rtp | Rounding::Rtn => {
            let all = splat_bits(b, i, (1 << shift) - 1);
            b.ins().band(all, away.expect("directed"))
        }
    };
    let rounded = b.ins().iadd(biased, add);
    let normal = ushr(b, rounded, shift);

    let min_normal = u64::from(rebias_field + 1) << 23;
    if subnormals == Subnormals::Added && rounding == Rounding::Rte {
        // Subnormal results: |x| + 2^(23 - (bias - 1 + fraction)), whose unit in the last
        // place is the smallest subnormal, so the add (nearest even: Cranelift's `fadd`) rounds
        // |x| to a multiple of it, and the sum's bits above 2^k's are the code (at most
        // 2^fraction, the smallest normal's code when |x| rounds up to it, so the sum stays in
        // 2^k's binade). The lanes it is wrong for (|x| normal, infinite or NaN) are not taken.
        let abs = bitcast_le(b, types::F32X4, a);
        let magic = u64::from(127 + 23 - (fields.bias - 1 + fields.fraction)) << 23;
        let magic_float = splat_bits(b, types::F32X4, magic);
        let sum = b.ins().fadd(abs, magic_float);
        let sum = bitcast_le(b, i, sum);
        let magic_int = splat_bits(b, i, magic);
        let sub = b.ins().isub(sum, magic_int);
        // `a > min_normal - 1`: one `pcmpgtd`, where `>=` takes two or three.
        let below = splat_bits(b, i, min_normal - 1);
        let is_normal = b.ins().icmp(IntCC::SignedGreaterThan, a, below);
        return b.ins().bitselect(is_normal, normal, sub);
    }
    let h = {
        // Subnormal results: |x| * 2^(bias - 1 + fraction) is exact and its integer part is the
        // result's bits.
        let abs = bitcast_le(b, types::F32X4, a);
        let scale = splat_bits(
            b,
            types::F32X4,
            u64::from((127 + fields.bias - 1 + fields.fraction) << 23),
        );
        let v = b.ins().fmul(abs, scale);
        let q = match rounding {
            Rounding::Rte => round_vector(b, v, Rounding::Rte, kind),
            Rounding::Rtz => round_vector(b, v, Rounding::Rtn, kind),
            Rounding::Rtp | Rounding::Rtn => {
                let up = round_vector(b, v, Rounding::Rtp, kind);
                let down = round_vector(b, v, Rounding::Rtn, kind);
                let mask = bitcast_le(b, types::F32X4, away.expect("directed"));
                b.ins().bitselect(mask, up, down)
            }
        };
        let sub = b.ins().fcvt_to_sint_sat(i, q);
        let min_normal = splat_bits(b, i, min_normal);
        let is_normal = b.ins().icmp(IntCC::SignedGreaterThanOrEqual, a, min_normal);
        b.ins().bitselect(is_normal, normal, sub)
    };
    h
}

/// Vector float -> small float by `rounding` (`saturate`: `_sat`): F32X4 in, I32X4 out with
/// the element's bits sign-extended from `fmt.width` bits, ready for `snarrow`. The vector
/// form of [`from_f32_bits`]: normal results by a rebias, a rounding add and a shift; subnormal
/// results by scaling |x| so that the format's smallest subnormal is 1 and rounding to an
/// integer by the mode (`kind`: the native instruction or the magic constant).
pub fn from_f32x4(
    b: &mut FunctionBuilder,
    fmt: SmallFloat,
    x: Value,
    rounding: Rounding,
    kind: VectorRounding,
    saturate: bool,
) -> Value {
    if fmt.ty == ScalarType::Half && rounding == Rounding::Rte && !saturate {
        return half::f32x4_to_half_rte(b, x);
    }
    if fmt.ty == ScalarType::BFloat {
        return f32x4_to_bfloat(b, x, rounding, saturate);
    }
    let i = types::I32X4;
    let split = split_sign_x4(b, x, rounding);
    let Split {
        a,
        sign,
        away: up_lanes,
        ..
    } = split;
    let fields = Fields {
        fraction: fmt.fraction,
        bias: fmt.bias,
    };
    // The scaled subnormals: the 8-bit floats' kernels keep the machine code their exhaustive
    // sweeps proved (`Subnormals::Added` would be exact here too).
    let h = round_to_fields_x4(b, fields, &split, rounding, kind, Subnormals::Scaled);

    // Beyond the largest finite value, infinities, NaNs.
    let max = splat_bits(b, i, u64::from(fmt.max_finite()));
    let inf = splat_bits(b, i, u64::from(fmt.first_beyond()));
    let overflow_value = if saturate {
        max
    } else {
        match rounding {
            Rounding::Rte => inf,
            Rounding::Rtz => max,
            Rounding::Rtp | Rounding::Rtn => {
                b.ins().bitselect(up_lanes.expect("directed"), inf, max)
            }
        }
    };
    let overflow = b.ins().icmp(IntCC::SignedGreaterThan, h, max);
    let h = b.ins().bitselect(overflow, overflow_value, h);
    let exp_all_ones = splat_bits(b, i, 0x7f80_0000);
    let is_inf = b.ins().icmp(IntCC::Equal, a, exp_all_ones);
    let inf_value = if saturate { max } else { inf };
    let h = b.ins().bitselect(is_inf, inf_value, h);
    let is_nan = b.ins().icmp(IntCC::SignedGreaterThan, a, exp_all_ones);
    let fraction_mask = splat_bits(b, i, 0x7f_ffff);
    let fraction = b.ins().band(a, fraction_mask);
    let nan = fmt.nan_bits(b, fraction);
    let h = b.ins().bitselect(is_nan, nan, h);
    // The sign, extended over the lane above the element: `snarrow` packs exactly.
    let sign = b.ins().sshr_imm_u(sign, i64::from(32 - fmt.width));
    b.ins().bor(h, sign)
}
