//! Chains ([`crate::chain`]) in the builder API and the batch kernels: the steps one after
//! another on the value's 128-bit parts (the "low lanes" convention of
//! [`super::Lowering::convert_vector`]), each by the code its own kind already has; only the
//! lane moves (one byte shuffle each) and FP4's packing (masks, and a narrowing or a
//! widening) are new.

use super::mx_block::NibbleMasks;
use super::values::{bitcast_le, element_type, vector_parts, zero_scalar};
use super::{emit_element, lanes, LowerError, Lowering};
use crate::chain::{Chain, LaneMove, Step};
use crate::request::Reinterpretation;
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

impl Lowering {
    /// `chain` on the 128-bit parts of its operand (half as I16 lanes), giving the parts of
    /// its result, lanes past the result's components unspecified.
    pub(crate) fn chain_parts(
        &self,
        b: &mut FunctionBuilder,
        chain: &Chain,
        parts: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let mut parts = parts.to_vec();
        for step in chain.steps() {
            parts = match step {
                Step::Convert(c) => self.convert_vector_bits(b, c, &parts)?,
                Step::Reinterpret(r) => {
                    let (dst_vec, _) = vector_parts(r.dst());
                    parts.iter().map(|&p| bitcast_le(b, dst_vec, p)).collect()
                }
                Step::Lanes(m) => vec![move_lanes(b, m, parts[0])],
                Step::Fp4(p) if p.packs() => vec![pack_fp4_part(b, parts[0])],
                Step::Fp4(_) => vec![unpack_fp4_part(b, parts[0])],
            };
        }
        Ok(parts)
    }
}

impl Lowering {
    /// `chain` on one scalar per component (of [`element_type`], half as I16), giving one per
    /// component of the result: no vector instruction, so it compiles on every target
    /// (riscv64 without V included). The batch kernels and the per-component form use it.
    pub(crate) fn chain_components(
        &self,
        b: &mut FunctionBuilder,
        chain: &Chain,
        components: &[Value],
    ) -> Vec<Value> {
        let mut lanes = components.to_vec();
        for step in chain.steps() {
            lanes = match step {
                Step::Convert(c) => lanes
                    .iter()
                    .map(|&x| emit_element(b, c, self.static_mode, x))
                    .collect(),
                Step::Reinterpret(r) => reinterpret_components(b, r, &lanes),
                Step::Lanes(m) => {
                    let ty = element_type(m.dst().elem);
                    (0..m.dst().lanes())
                        .map(|i| {
                            if i < m.taken() {
                                lanes[m.first() + i]
                            } else {
                                zero_scalar(b, ty)
                            }
                        })
                        .collect()
                }
                // Code 2i in the low nibble of byte i, 2i + 1 in the high one.
                Step::Fp4(p) if p.packs() => lanes
                    .chunks(2)
                    .map(|pair| {
                        let low = b.ins().band_imm_u(pair[0], 0x0f);
                        let high = b.ins().ishl_imm_u(pair[1], 4);
                        b.ins().bor(low, high)
                    })
                    .collect(),
                Step::Fp4(_) => lanes
                    .iter()
                    .flat_map(|&byte| {
                        let low = b.ins().band_imm_u(byte, 0x0f);
                        let high = b.ins().ushr_imm_u(byte, 4);
                        [low, high]
                    })
                    .collect(),
            };
        }
        lanes
    }
}

/// `r` on scalar components: the same bits, regrouped little-endian when the element sizes
/// differ (two I16 halves make one I32, the first in the low bits).
fn reinterpret_components(
    b: &mut FunctionBuilder,
    r: &Reinterpretation,
    lanes: &[Value],
) -> Vec<Value> {
    let (s, d) = (r.src().elem.bytes(), r.dst().elem.bytes());
    let int = |bytes: usize| -> Type { Type::int((bytes * 8) as u16).expect("an integer type") };
    let dst_ty = element_type(r.dst().elem);
    let bits: Vec<Value> = lanes.iter().map(|&x| bitcast_le(b, int(s), x)).collect();
    let grouped: Vec<Value> = if s == d {
        bits
    } else if d > s {
        bits.chunks(d / s)
            .map(|group| {
                let mut acc = b.ins().uextend(int(d), group[0]);
                for (j, &x) in group.iter().enumerate().skip(1) {
                    let wide = b.ins().uextend(int(d), x);
                    let shifted = b.ins().ishl_imm_u(wide, (j * s * 8) as i64);
                    acc = b.ins().bor(acc, shifted);
                }
                acc
            })
            .collect()
    } else {
        let mut pieces = Vec::with_capacity(bits.len() * (s / d));
        for &x in &bits {
            for j in 0..s / d {
                let down = if j == 0 {
                    x
                } else {
                    b.ins().ushr_imm_u(x, (j * d * 8) as i64)
                };
                pieces.push(b.ins().ireduce(int(d), down));
            }
        }
        pieces
    };
    grouped
        .into_iter()
        .map(|x| bitcast_le(b, dst_ty, x))
        .collect()
}

/// `pack_fp4` on the one 128-bit part its codes fit in (a code per byte lane, at most 16):
/// each 16-bit lane's pair as one byte (the MX blocks' [`NibbleMasks::pair_bytes`]), and an
/// unsigned saturating narrowing with zeros (`packuswb`, SSE2) gathers those bytes into the
/// low lanes exactly, zeros after them.
fn pack_fp4_part(b: &mut FunctionBuilder, part: Value) -> Value {
    let bytes = NibbleMasks::new(b).pair_bytes(b, part);
    let zero = lanes::splat_bits(b, types::I16X8, 0);
    b.ins().unarrow(bytes, zero)
}

/// `unpack_fp4` on the one 128-bit part its bytes fit in (at most 8, in the low lanes): a
/// zero-extending widening (`punpcklbw` with zeros, SSE2) puts byte i in 16-bit lane i, and
/// [`NibbleMasks::spread_byte`] its two codes into byte lanes 2i and 2i + 1.
fn unpack_fp4_part(b: &mut FunctionBuilder, part: Value) -> Value {
    let part = bitcast_le(b, types::I8X16, part);
    let spread = b.ins().uwiden_low(part);
    NibbleMasks::new(b).spread_byte(b, spread)
}

/// `m` on the one 128-bit part its operand fits in: one shuffle of the part's bytes with a
/// zero vector, which takes the lanes from `first` into the low lanes and clears those past
/// the taken ones (a wider result's zero lanes).
fn move_lanes(b: &mut FunctionBuilder, m: &LaneMove, part: Value) -> Value {
    let size = m.src().elem.bytes();
    let (dst_vec, _) = vector_parts(m.dst());
    if m.first() == 0 && m.dst().lanes() <= m.src().lanes() {
        // The low lanes are already where the result wants them.
        return bitcast_le(b, dst_vec, part);
    }
    let mut mask = [16u8; 16];
    for (j, byte) in mask.iter_mut().enumerate() {
        if j / size < m.taken() {
            *byte = (m.first() * size + j) as u8;
        }
    }
    let zero = lanes::splat_bits(b, dst_vec, 0);
    let moved = lanes::shuffle_bytes(b, part, zero, mask);
    bitcast_le(b, dst_vec, moved)
}
