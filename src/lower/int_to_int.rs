//! integer -> integer: `convert_uchar_sat(int)`, `convert_long(char)`, ...
//!
//! Without `_sat` the value keeps its low bits (two's complement wrap) or is sign/zero-extended
//! by the source's signedness. With `_sat` it is clamped to the destination range first, in the
//! source type, where the destination bounds that matter are always representable: a narrower
//! destination's bounds fit the wider source, and a wider destination needs at most the
//! "negative -> 0" clamp. Rounding modifiers are accepted and have no effect.

use super::values::element_type;
use super::values::int_const;
use crate::types::ScalarType;
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Emits `convert_<dst>[_sat](<src>)` on one element of integer type `src`.
pub fn emit(
    b: &mut FunctionBuilder,
    src: ScalarType,
    dst: ScalarType,
    saturate: bool,
    x: Value,
) -> Value {
    let src_ty = element_type(src);
    let (sb, db) = (src.bits(), dst.bits());
    let mut v = x;
    if saturate {
        let src_signed = src.is_signed_integer();
        if src_signed && !dst.is_signed_integer() {
            // signed -> unsigned: negatives clamp to 0 whatever the widths.
            let zero = int_const(b, src_ty, 0);
            v = b.ins().smax(v, zero);
        }
        let dst_max = dst.int_max().expect("integer destination");
        let src_max = src.int_max().expect("integer source");
        if dst_max < src_max {
            // The destination's maximum fits the source type because it is smaller.
            let hi = int_const(b, src_ty, dst_max);
            v = if src_signed {
                b.ins().smin(v, hi)
            } else {
                b.ins().umin(v, hi)
            };
        }
        let dst_min = dst.int_min().expect("integer destination");
        if src_signed && dst.is_signed_integer() && db < sb {
            let lo = int_const(b, src_ty, dst_min);
            v = b.ins().smax(v, lo);
        }
    }
    resize(b, src, dst, sb, db, v)
}

fn resize(
    b: &mut FunctionBuilder,
    src: ScalarType,
    dst: ScalarType,
    sb: u32,
    db: u32,
    v: Value,
) -> Value {
    let dst_ty = element_type(dst);
    if db < sb {
        b.ins().ireduce(dst_ty, v)
    } else if db > sb {
        if src.is_signed_integer() {
            b.ins().sextend(dst_ty, v)
        } else {
            b.ins().uextend(dst_ty, v)
        }
    } else {
        v
    }
}

/// Vector recipe `int_to_int.vector`: one block of integer vectors in, one out.
///
/// `_sat` from a signed 16- or 32-bit source to a narrower type is the saturating packs alone
/// (`snarrow`/`unarrow`, i.e. packsswb/packssdw/packuswb/packusdw). Otherwise `_sat` clamps in
/// the source type exactly as the scalar sequence does (vector `smax`/`smin`/`umin`, which x64
/// has for every lane width), after which every narrowing step is exact: packs for 32- and
/// 16-bit lanes, a byte shuffle for 64-bit lanes.
/// Without `_sat` narrowing keeps the low bits (byte shuffles) and widening extends by the
/// source's signedness (`swiden`/`uwiden`).
pub fn vector(
    b: &mut FunctionBuilder,
    spec: &super::block::BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes;
    let (src, dst) = (spec.src, spec.dst);
    let (sb, db) = (src.bits(), dst.bits());
    let vty = lanes::int_vector(sb);
    let mut vs: Vec<Value> = inputs.to_vec();
    // The packs of a signed source narrower than 64 bits saturate by themselves (each step
    // keeps every value of the final range and the order of the rest): no clamp first.
    let packs_saturate = src.is_signed_integer() && db < sb && sb <= 32;
    if spec.saturate && !packs_saturate {
        let src_signed = src.is_signed_integer();
        let dst_max = dst.int_max().expect("integer destination");
        let dst_min = dst.int_min().expect("integer destination");
        let src_max = src.int_max().expect("integer source");
        for v in vs.iter_mut() {
            if src_signed && !dst.is_signed_integer() {
                let zero = lanes::splat_bits(b, vty, 0);
                *v = b.ins().smax(*v, zero);
            }
            if dst_max < src_max {
                let hi = lanes::splat_bits(b, vty, dst_max as u64);
                *v = if src_signed {
                    b.ins().smin(*v, hi)
                } else {
                    b.ins().umin(*v, hi)
                };
            }
            if src_signed && dst.is_signed_integer() && db < sb {
                let lo = lanes::splat_bits(b, vty, dst_min as u64);
                *v = b.ins().smax(*v, lo);
            }
        }
    }
    if db > sb {
        lanes::widen_to(b, vs, sb, db, src.is_signed_integer())
    } else if db < sb {
        let in_range = spec.saturate.then_some(!dst.is_signed_integer());
        lanes::narrow_to(b, vs, sb, db, in_range)
    } else {
        vs
    }
}

/// Vector recipe `int_to_int.narrow_native` (aarch64): [`vector`], except that narrowing
/// uses the instructions aarch64 has for it, from any lane width (64-bit lanes included):
///
/// - `_sat` from a signed source: saturating narrows alone, `snarrow` (`sqxtn`/`sqxtn2`) at
///   every step but the last, which is `unarrow` (`sqxtun`) for an unsigned destination: each
///   step keeps the order and every value of the final range, so the last clamps exactly. No
///   `smin`/`smax` first (two instructions each on 64-bit lanes).
/// - `_sat` from an unsigned source: `uunarrow` (`uqxtn`/`uqxtn2`) at every step, which clamps
///   to the unsigned range of each step's width and so to the destination's for an unsigned
///   destination; a signed one then takes one `umin` with its maximum (127 or 32767) on the
///   narrow lanes.
/// - without `_sat` (the low bits): two vectors to one by the shuffle of their even lanes
///   (`uzp1`), one instruction per step where the shifts and packs of [`vector`] take four.
///
/// Widening and same-width conversions are [`vector`]'s.
///
/// Hard inputs: each type's MIN and MAX and the destination's bounds plus and minus one;
/// ULONG_MAX and LONG_MIN for the 64-bit lanes.
pub fn vector_narrow_native(
    b: &mut FunctionBuilder,
    spec: &super::block::BlockSpec,
    inputs: &[Value],
) -> Vec<Value> {
    use super::lanes::{int_vector, shuffle_bytes, splat_bits};
    use super::values::bitcast_le;
    let (src, dst) = (spec.src, spec.dst);
    let (mut bits, db) = (src.bits(), dst.bits());
    if db >= bits {
        return vector(b, spec, inputs);
    }
    let mut vs = inputs.to_vec();
    while bits > db {
        let last = bits / 2 == db;
        vs = vs
            .chunks(2)
            .map(|pair| {
                let (a, c) = (pair[0], pair[1]);
                if !spec.saturate {
                    let v = shuffle_bytes(b, a, c, even_lanes_mask(bits));
                    bitcast_le(b, int_vector(bits / 2), v)
                } else if !src.is_signed_integer() {
                    b.ins().uunarrow(a, c)
                } else if last && !dst.is_signed_integer() {
                    b.ins().unarrow(a, c)
                } else {
                    b.ins().snarrow(a, c)
                }
            })
            .collect();
        bits /= 2;
    }
    if spec.saturate && !src.is_signed_integer() && dst.is_signed_integer() {
        let max = dst.int_max().expect("integer destination") as u64;
        let max = splat_bits(b, int_vector(db), max);
        vs = vs.into_iter().map(|v| b.ins().umin(v, max)).collect();
    }
    vs
}

/// The byte shuffle that takes the low half of every `from_bits` lane of two vectors, in
/// order: aarch64's `uzp1` at the half width.
fn even_lanes_mask(from_bits: u32) -> [u8; 16] {
    let (from, to) = ((from_bits / 8) as usize, (from_bits / 16) as usize);
    let mut mask = [0u8; 16];
    for (i, m) in mask.iter_mut().enumerate() {
        *m = ((i / to) * from + i % to) as u8;
    }
    mask
}
