//! The counted loop that tests building their own Cranelift functions wrap around the code under
//! test. Included by path (`#[path = ".../tests/common/counted_loop.rs"] mod counted_loop;`) from
//! this crate's tests and from `crates/verify/tests`, so that each uses all of it.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Builds the whole body of the function `b` builds, whose parameters are I64 and whose last
/// is a count `n`: `for i in 0..n { body(b, params, i) }`, then return. All blocks sealed; the
/// caller finalizes.
pub fn counted_loop(
    b: &mut FunctionBuilder,
    body: impl FnOnce(&mut FunctionBuilder, &[Value], Value),
) {
    let entry = b.create_block();
    let head = b.create_block();
    let body_block = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.append_block_param(head, types::I64);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().jump(head, &[zero.into()]);
    b.switch_to_block(head);
    let i = b.block_params(head)[0];
    let n = *params.last().expect("a count parameter");
    let more = b.ins().icmp(IntCC::SignedLessThan, i, n);
    b.ins().brif(more, body_block, &[], exit, &[]);
    b.switch_to_block(body_block);
    body(b, &params, i);
    let next = b.ins().iadd_imm_u(i, 1);
    b.ins().jump(head, &[next.into()]);
    b.switch_to_block(exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
}
