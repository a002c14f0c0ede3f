//! Lane-shape changes on 128-bit vectors, shared by the vector recipes: widening, narrowing
//! (saturating packs where the values are known to fit, byte shuffles where they wrap), and
//! constants. Only forms that Cranelift 0.135 lowers correctly on every backend are used:
//! `snarrow`/`unarrow` from I32X4 and I16X8 (never from I64X2, which x64 refuses), `swiden`/
//! `uwiden`, and `shuffle` on I8X16.

use super::values::bitcast_le;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::{types, ConstantData, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// The 128-bit vector type of `t`'s lanes (half: I16X8 bits).
pub fn vector_of(t: ScalarType) -> Type {
    super::values::vector_parts(crate::types::VectorType::scalar(t)).0
}

/// |x| for an F32X4 or F64X2, as an AND with a splat constant: x64 lowers vector `fabs` by
/// building its mask with two instructions at every use, where a constant is loaded once per
/// kernel (in `convert_float_rtz(double)` that was 8 of 21 instructions per block).
pub fn abs(b: &mut FunctionBuilder, x: Value) -> Value {
    let fty = b.func.dfg.value_type(x);
    let lane_bits = fty.lane_bits();
    let ity = int_vector(lane_bits);
    let mask = splat_bits(b, ity, (1u64 << (lane_bits - 1)) - 1);
    let bits = super::values::bitcast_le(b, ity, x);
    let abs = b.ins().band(bits, mask);
    super::values::bitcast_le(b, fty, abs)
}

/// The integer vector type with `bits`-wide lanes.
pub fn int_vector(bits: u32) -> Type {
    match bits {
        8 => types::I8X16,
        16 => types::I16X8,
        32 => types::I32X4,
        _ => types::I64X2,
    }
}

/// A vector of `ty` with every lane's bits equal to `bits` (masked to the lane).
pub fn splat_bits(b: &mut FunctionBuilder, ty: Type, bits: u64) -> Value {
    let lane = ty.lane_type();
    let int_lane = types::Type::int(lane.bits() as u16).expect("lane width");
    let scalar = super::values::int_const(b, int_lane, bits as i128);
    let v = b.ins().splat(int_vector(lane.bits()), scalar);
    bitcast_le(b, ty, v)
}

/// A zero vector of `ty` as a `vconst`: the form x64's lowering of `snarrow`/`uunarrow` from
/// I64X2 (WebAssembly's `trunc_sat_f64x2_zero` idiom) matches. A `splat` of zero matches only
/// after the mid-end has folded it, which `opt_level=none` does not do.
pub fn zero_vconst(b: &mut FunctionBuilder, ty: Type) -> Value {
    let zeros = b
        .func
        .dfg
        .constants
        .insert(ConstantData::from(vec![0u8; 16]));
    b.ins().vconst(ty, zeros)
}

/// Byte shuffle of the 32 bytes of `a` (0..16) and `c` (16..32); the result is I8X16.
pub fn shuffle_bytes(b: &mut FunctionBuilder, a: Value, c: Value, mask: [u8; 16]) -> Value {
    let a = bitcast_le(b, types::I8X16, a);
    let c = bitcast_le(b, types::I8X16, c);
    let imm = b
        .func
        .dfg
        .immediates
        .push(ConstantData::from(mask.to_vec()));
    b.ins().shuffle(a, c, imm)
}

/// The mask that takes the low `to_bits` of every `from_bits` lane of two vectors, in order.
fn low_parts_mask(from_bits: u32, to_bits: u32) -> [u8; 16] {
    let from = (from_bits / 8) as usize;
    let to = (to_bits / 8) as usize;
    let mut mask = [0u8; 16];
    let mut i = 0;
    for lane in 0..(32 / from) {
        for byte in 0..to {
            mask[i] = (lane * from + byte) as u8;
            i += 1;
        }
    }
    mask
}

/// The low 32 bits of every 64-bit lane of `a`, then of `c`, as one I32X4 (one shuffle): how
/// two 64-bit-lane vectors (results, masks, NaN patterns) join in a float's lane order.
pub fn low_dwords(b: &mut FunctionBuilder, a: Value, c: Value) -> Value {
    let v = shuffle_bytes(b, a, c, low_parts_mask(64, 32));
    bitcast_le(b, int_vector(32), v)
}

/// One result per vector of `inputs`, in order: the loop of a recipe that converts each
/// source vector on its own.
pub fn each(
    b: &mut FunctionBuilder,
    inputs: &[Value],
    mut emit: impl FnMut(&mut FunctionBuilder, Value) -> Value,
) -> Vec<Value> {
    inputs.iter().map(|&x| emit(b, x)).collect()
}

/// One result per two vectors of `inputs`, in order: the loop of a recipe that narrows two
/// vectors of 64-bit lanes into one of 32-bit lanes (double -> float, long -> float).
pub fn each_pair(
    b: &mut FunctionBuilder,
    inputs: &[Value],
    mut emit: impl FnMut(&mut FunctionBuilder, Value, Value) -> Value,
) -> Vec<Value> {
    inputs.chunks(2).map(|p| emit(b, p[0], p[1])).collect()
}

/// Two vectors of `from_bits` lanes -> one of `from_bits / 2` lanes keeping the low bits
/// (two's complement wrap, the non-`_sat` narrowing).
///
/// 32- and 16-bit lanes: sign-extend each lane's low half in place (shift left, arithmetic
/// shift right), after which the signed saturating pack is exact: `pslld`/`psrad`/`packssdw`,
/// all SSE2, where a byte shuffle would need SSSE3's `pshufb` (Cranelift calls a helper
/// function for it without SSSE3). 64-bit lanes have no pack: a dword shuffle.
pub fn narrow_wrap(b: &mut FunctionBuilder, a: Value, c: Value, from_bits: u32) -> Value {
    if from_bits == 64 {
        return low_dwords(b, a, c);
    }
    let half = (from_bits / 2) as i64;
    let mut low_halves = [a, c];
    for v in low_halves.iter_mut() {
        let up = b.ins().ishl_imm_u(*v, half);
        *v = b.ins().sshr_imm_u(up, half);
    }
    b.ins().snarrow(low_halves[0], low_halves[1])
}

/// Two vectors of `from_bits` lanes -> one of `from_bits / 2` lanes with a saturating pack (one
/// instruction on x64) where Cranelift has one: `unarrow` (to the unsigned range) when
/// `unsigned`, else `snarrow`. 64-bit lanes have no pack on x64: a shuffle keeps the low bits,
/// so 64-bit values must already be in range.
pub fn narrow_in_range(
    b: &mut FunctionBuilder,
    a: Value,
    c: Value,
    from_bits: u32,
    unsigned: bool,
) -> Value {
    match from_bits {
        64 => narrow_wrap(b, a, c, 64),
        _ if unsigned => b.ins().unarrow(a, c),
        _ => b.ins().snarrow(a, c),
    }
}

/// Halves the lane width of `vs` (an even number of vectors) until lanes are `to_bits` wide.
///
/// `saturate: Some(unsigned)` clamps to the final range: every step but the last packs to the
/// signed half range (which keeps the order and every value of the final range), the last to
/// the unsigned one when `unsigned`. So 32 -> 8 unsigned is `snarrow` then `unarrow`: a direct
/// `unarrow` chain would read 32768..65535 as negative in the second step. `None` wraps.
pub fn narrow_to(
    b: &mut FunctionBuilder,
    mut vs: Vec<Value>,
    mut bits: u32,
    to_bits: u32,
    saturate: Option<bool>,
) -> Vec<Value> {
    while bits > to_bits {
        let last = bits / 2 == to_bits;
        vs = vs
            .chunks(2)
            .map(|pair| match saturate {
                Some(unsigned) => narrow_in_range(b, pair[0], pair[1], bits, unsigned && last),
                None => narrow_wrap(b, pair[0], pair[1], bits),
            })
            .collect();
        bits /= 2;
    }
    vs
}

/// Doubles the lane width of `vs` until lanes are `to_bits` wide, sign- or zero-extending.
pub fn widen_to(
    b: &mut FunctionBuilder,
    mut vs: Vec<Value>,
    mut bits: u32,
    to_bits: u32,
    signed: bool,
) -> Vec<Value> {
    while bits < to_bits {
        let mut out = Vec::with_capacity(vs.len() * 2);
        for v in vs {
            if signed {
                out.push(b.ins().swiden_low(v));
                out.push(b.ins().swiden_high(v));
            } else {
                out.push(b.ins().uwiden_low(v));
                out.push(b.ins().uwiden_high(v));
            }
        }
        vs = out;
        bits *= 2;
    }
    vs
}

/// The high 64 bits of `v` moved to the low half (the rest unspecified), as the same type.
pub fn high_half_to_low(b: &mut FunctionBuilder, v: Value) -> Value {
    let ty = b.func.dfg.value_type(v);
    let mut mask = [0u8; 16];
    for (i, m) in mask.iter_mut().enumerate() {
        *m = (8 + i % 8) as u8;
    }
    let s = shuffle_bytes(b, v, v, mask);
    bitcast_le(b, ty, s)
}

/// Joins the low 64 bits of `a` and of `c` into one vector of `a`'s type.
pub fn join_low_halves(b: &mut FunctionBuilder, a: Value, c: Value) -> Value {
    let ty = b.func.dfg.value_type(a);
    let mut mask = [0u8; 16];
    for (i, m) in mask.iter_mut().enumerate() {
        *m = if i < 8 { i as u8 } else { (16 + i - 8) as u8 };
    }
    let s = shuffle_bytes(b, a, c, mask);
    bitcast_le(b, ty, s)
}

/// How a vector recipe rounds to an integral value before the saturating conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorRounding {
    /// `nearest`/`ceil`/`floor`: one `roundps`/`roundpd` with SSE4.1, `frint*` on aarch64.
    Native,
    /// No rounding instruction (x86-64 without SSE4.1, where Cranelift would call libm per
    /// lane): the magic-number trick. For |x| < 2^p (p = 23 for float, 52 for double),
    /// `(|x| + 2^p) - 2^p` rounds |x| to an integer in the hardware's default
    /// nearest-even mode, because 2^p's ulp is 1; larger magnitudes are already integers and
    /// NaN stays NaN. The sign is copied back (so -0.4 gives -0.0, which converts to 0).
    /// floor/ceil step the nearest result by one where it landed on the wrong side of x; that
    /// step is exact below 2^p.
    Magic,
}

/// Rounds float lanes to integral values by `rounding` (rtz: unchanged, the conversion
/// truncates), with the native instructions or the magic constant (see [`VectorRounding`]).
pub fn round_vector(
    b: &mut FunctionBuilder,
    x: Value,
    rounding: Rounding,
    kind: VectorRounding,
) -> Value {
    if rounding == Rounding::Rtz {
        return x; // the conversion truncates
    }
    if kind == VectorRounding::Native {
        return match rounding {
            Rounding::Rte => b.ins().nearest(x),
            Rounding::Rtp => b.ins().ceil(x),
            Rounding::Rtn => b.ins().floor(x),
            Rounding::Rtz => x,
        };
    }
    use super::lanes::splat_bits;
    use cranelift_codegen::ir::condcodes::FloatCC;
    let ty = b.func.dfg.value_type(x);
    let (magic, one) = if ty == types::F32X4 {
        (0x4b00_0000u64, 0x3f80_0000u64) // 2^23, 1.0
    } else {
        (0x4330_0000_0000_0000, 0x3ff0_0000_0000_0000) // 2^52, 1.0
    };
    let magic = splat_bits(b, ty, magic);
    let abs = super::lanes::abs(b, x);
    let sum = b.ins().fadd(abs, magic);
    let integral = b.ins().fsub(sum, magic);
    let small = b.ins().fcmp(FloatCC::LessThan, abs, magic);
    let small = super::values::bitcast_le(b, ty, small);
    let integral = b.ins().bitselect(small, integral, abs);
    // Copy the sign back with bit operations: x64 has no vector `fcopysign`.
    let ity = super::lanes::int_vector(ty.lane_bits());
    let sign_mask = splat_bits(b, ity, 1u64 << (ty.lane_bits() - 1));
    let x_bits = super::values::bitcast_le(b, ity, x);
    let sign = b.ins().band(x_bits, sign_mask);
    let integral = super::values::bitcast_le(b, ity, integral);
    let nearest = b.ins().bor(integral, sign);
    let nearest = super::values::bitcast_le(b, ty, nearest);
    match rounding {
        Rounding::Rte | Rounding::Rtz => nearest,
        Rounding::Rtn => {
            let one = splat_bits(b, ty, one);
            let above = b.ins().fcmp(FloatCC::GreaterThan, nearest, x);
            let above = super::values::bitcast_le(b, ty, above);
            let lower = b.ins().fsub(nearest, one);
            b.ins().bitselect(above, lower, nearest)
        }
        Rounding::Rtp => {
            let one = splat_bits(b, ty, one);
            let below = b.ins().fcmp(FloatCC::LessThan, nearest, x);
            let below = super::values::bitcast_le(b, ty, below);
            let higher = b.ins().fadd(nearest, one);
            b.ins().bitselect(below, higher, nearest)
        }
    }
}
