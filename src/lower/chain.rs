//! Chains ([`crate::chain`]) in the builder API and the batch kernels: the steps one after
//! another on the value's 128-bit parts (the "low lanes" convention of
//! [`super::Lowering::convert_vector`]), each by the code its own kind already has; only the
//! lane moves are new, and they are one byte shuffle each.

use super::values::{bitcast_le, vector_parts};
use super::{lanes, LowerError, Lowering};
use crate::chain::{Chain, LaneMove, Step};
use cranelift_codegen::ir::Value;
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
            };
        }
        Ok(parts)
    }
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
