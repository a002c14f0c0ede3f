//! Cranelift values as the builder API carries them: the element and vector types of each
//! OpenCL type, and the small constructors every conversion class uses. A leaf: it depends on
//! no other lowering module, so the class files can share it without depending on each other.

use crate::types::{ScalarType, VectorType};
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// The Cranelift type of one element of `t` in the builder API (half: I16 bits; bool: an I8
/// byte, 0 or 1).
///
/// ```
/// use clconv::{lower::element_type, ScalarType};
/// use cranelift_codegen::ir::types;
/// assert_eq!(element_type(ScalarType::UChar), types::I8);
/// assert_eq!(element_type(ScalarType::Half), types::I16);
/// assert_eq!(element_type(ScalarType::Double), types::F64);
/// ```
pub fn element_type(t: ScalarType) -> Type {
    match t {
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
        | ScalarType::Bool => types::I8,
        ScalarType::Short | ScalarType::UShort | ScalarType::Half | ScalarType::BFloat => {
            types::I16
        }
        ScalarType::Int | ScalarType::UInt | ScalarType::Tf32 => types::I32,
        ScalarType::Long | ScalarType::ULong => types::I64,
        ScalarType::Float => types::F32,
        ScalarType::Double => types::F64,
    }
}

/// The 128-bit Cranelift vector type and the number of them that carry one OpenCL value of `t`.
///
/// ```
/// use clconv::{lower::vector_parts, ScalarType, VectorType, Width};
/// use cranelift_codegen::ir::types;
/// assert_eq!(vector_parts(VectorType::new(ScalarType::Double, Width::W8)), (types::F64X2, 4));
/// assert_eq!(vector_parts(VectorType::new(ScalarType::Int, Width::W3)), (types::I32X4, 1));
/// assert_eq!(vector_parts(VectorType::new(ScalarType::Char, Width::W2)), (types::I8X16, 1));
/// ```
pub fn vector_parts(t: VectorType) -> (Type, usize) {
    let lane = element_type(t.elem);
    let per_part = 16 / t.elem.bytes();
    let vector = lane
        .by(per_part as u32)
        .expect("128-bit vector of a scalar type");
    (vector, t.byte_size().div_ceil(16))
}

/// A zero of scalar type `ty`.
pub(crate) fn zero_scalar(b: &mut FunctionBuilder, ty: Type) -> Value {
    match ty {
        types::F32 => b.ins().f32const(0.0),
        types::F64 => b.ins().f64const(0.0),
        _ => b.ins().iconst(ty, 0),
    }
}

/// An integer constant of type `ty` from its bits (masked to the type, as the verifier wants).
pub(crate) fn int_const(b: &mut FunctionBuilder, ty: Type, value: i128) -> Value {
    let bits = ty.bits();
    let masked = if bits >= 64 {
        value as u64 as i64
    } else {
        (value as u64 & ((1u64 << bits) - 1)) as i64
    };
    b.ins().iconst(ty, masked)
}

/// A little-endian `bitcast` (a lane-count change needs an explicit byte order).
/// Where emission began in the caller's function: the block being filled and its last
/// instruction then. [`EmitMark::remove_unused`] removes what was emitted after it and is not
/// needed, so the builder API leaves no dead IR in the caller's function.
pub(crate) struct EmitMark {
    block: Option<cranelift_codegen::ir::Block>,
    last: Option<cranelift_codegen::ir::Inst>,
    blocks: usize,
}

impl EmitMark {
    pub(crate) fn here(b: &FunctionBuilder) -> EmitMark {
        let block = b.current_block();
        let layout = &b.func.layout;
        // The builder puts a block into the layout at its first instruction: count it as if.
        let pending = block.is_some_and(|bl| !layout.is_block_inserted(bl));
        EmitMark {
            block,
            last: block
                .filter(|&bl| layout.is_block_inserted(bl))
                .and_then(|bl| layout.last_inst(bl)),
            blocks: layout.blocks().count() + usize::from(pending),
        }
    }

    /// Removes every instruction emitted since the mark that has no side effect and that
    /// nothing `keep` depends on reaches (the instructions before the mark are the caller's
    /// and stay). Does nothing if emission left the block or made others.
    pub(crate) fn remove_unused(self, b: &mut FunctionBuilder, keep: &[Value]) {
        use std::collections::HashSet;
        let Some(block) = self.block else { return };
        if b.current_block() != Some(block)
            || !b.func.layout.is_block_inserted(block)
            || b.func.layout.blocks().count() != self.blocks
        {
            return;
        }
        let layout = &b.func.layout;
        let mut emitted = Vec::new();
        let mut next = match self.last {
            Some(last) => layout.next_inst(last),
            None => layout.first_inst(block),
        };
        while let Some(inst) = next {
            emitted.push(inst);
            next = layout.next_inst(inst);
        }
        let ours: HashSet<_> = emitted.iter().copied().collect();
        let dfg = &b.func.dfg;
        let mut live = HashSet::new();
        let mut work: Vec<Value> = keep.iter().map(|&v| dfg.resolve_aliases(v)).collect();
        // Side effects are live whatever uses them.
        for &inst in &emitted {
            let op = dfg.insts[inst].opcode();
            if op.can_store() || op.is_call() || op.can_trap() || op.other_side_effects() {
                live.insert(inst);
                work.extend(dfg.inst_values(inst));
            }
        }
        while let Some(v) = work.pop() {
            let v = dfg.resolve_aliases(v);
            if let cranelift_codegen::ir::ValueDef::Result(inst, _) = dfg.value_def(v) {
                if ours.contains(&inst) && live.insert(inst) {
                    work.extend(dfg.inst_values(inst));
                }
            }
        }
        for inst in emitted {
            if !live.contains(&inst) {
                b.func.layout.remove_inst(inst);
            }
        }
    }
}

pub(crate) fn bitcast_le(b: &mut FunctionBuilder, ty: Type, x: Value) -> Value {
    if b.func.dfg.value_type(x) == ty {
        return x;
    }
    b.ins().bitcast(
        ty,
        MemFlagsData::new().with_endianness(Endianness::Little),
        x,
    )
}

/// `bits` (a float's, as integer lanes) one ulp up (`up`) or down where the lane mask `mask`
/// is all ones, for floats of either sign: `neg` is all ones in the lanes whose float is
/// negative. The mask m as +1 for a positive float and -1 for a negative one, without a
/// constant: neg - (m ^ neg) is 0 where m is 0, and -(-1) = +1 or -1 - 0 = -1 where it is -1;
/// added (up) or subtracted (down).
pub(crate) fn step_by_signed_mask(
    b: &mut FunctionBuilder,
    bits: Value,
    neg: Value,
    mask: Value,
    up: bool,
) -> Value {
    let flipped = b.ins().bxor(mask, neg);
    let delta = b.ins().isub(neg, flipped);
    if up {
        b.ins().iadd(bits, delta)
    } else {
        b.ins().isub(bits, delta)
    }
}
