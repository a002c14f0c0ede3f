//! The operand types of a function's instructions, checked before Cranelift compiles it.
//!
//! A backend's instruction selection has rules only for the types an instruction is defined on.
//! Given another (an `fcmp` of the I16 bits a bfloat16 is held as), it does not fail: it panics
//! ("no rule matched for term emit_fcmp"). Cranelift's verifier would refuse such IR, but it
//! checks much else and costs a third of a kernel's compile time, so kernels compile without it
//! by default ([`crate::jit::Jit::set_verify_ir`]). This check is the verifier's type check
//! alone: one pass over the instructions, comparing each controlling type and each fixed
//! operand's type with the instruction's constraints. Every kernel the JIT compiles and every
//! function the AOT compiler emits passes it first, so IR of the wrong type shape comes back as
//! a compile error naming the instruction, never as a panic inside Cranelift.
//!
//! ```
//! use clconv::cranelift_codegen::ir::{condcodes::FloatCC, types, AbiParam, Function, InstBuilder, Signature};
//! use clconv::cranelift_codegen::isa::CallConv;
//! use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
//! let mut sig = Signature::new(CallConv::SystemV);
//! sig.params.push(AbiParam::new(types::I16));
//! let mut func = Function::with_name_signature(Default::default(), sig);
//! let mut ctx = FunctionBuilderContext::new();
//! let mut b = FunctionBuilder::new(&mut func, &mut ctx);
//! let block = b.create_block();
//! b.append_block_params_for_function_params(block);
//! b.switch_to_block(block);
//! let bits = b.block_params(block)[0];
//! let _ = b.ins().fcmp(FloatCC::Unordered, bits, bits); // a float compare of integer bits
//! b.ins().return_(&[]);
//! b.seal_all_blocks();
//! b.finalize(clconv::cranelift_codegen::isa::TargetFrontendConfig {
//!     default_call_conv: CallConv::SystemV,
//!     pointer_width: clconv::target_lexicon::PointerWidth::U64,
//!     page_size_align_log2: 12,
//! });
//! let why = clconv::ir_types::check(&func).unwrap_err();
//! assert!(why.contains("fcmp") && why.contains("i16"), "{why}");
//! ```

use cranelift_codegen::ir::instructions::ResolvedConstraint;
use cranelift_codegen::ir::Function;

/// `Ok` when every instruction of `func` has a controlling type and fixed operand types its
/// opcode is defined on; else the first one that does not, as text (the instruction as
/// Cranelift prints it, and what is wrong).
pub fn check(func: &Function) -> Result<(), String> {
    let dfg = &func.dfg;
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let constraints = dfg.insts[inst].opcode().constraints();
            let ctrl_type = match constraints.ctrl_typeset() {
                Some(allowed) => {
                    let ctrl_type = dfg.ctrl_typevar(inst);
                    if !allowed.contains(ctrl_type) {
                        return Err(format!(
                            "`{}` is not defined on {ctrl_type}",
                            dfg.display_inst(inst)
                        ));
                    }
                    ctrl_type
                }
                None => cranelift_codegen::ir::types::INVALID,
            };
            for (i, &arg) in dfg.inst_fixed_args(inst).iter().enumerate() {
                let arg_type = dfg.value_type(arg);
                let fits = match constraints.value_argument_constraint(i, ctrl_type) {
                    ResolvedConstraint::Bound(expected) => arg_type == expected,
                    ResolvedConstraint::Free(allowed) => allowed.contains(arg_type),
                };
                if !fits {
                    return Err(format!(
                        "`{}`: operand {i} has type {arg_type}, which the instruction does not take",
                        dfg.display_inst(inst)
                    ));
                }
            }
        }
    }
    Ok(())
}
