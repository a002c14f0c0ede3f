//! Declaring, building and defining one Cranelift function in a cranelift-jit module, as the
//! tests that build their own functions around the builder API do. Included by path
//! (`#[path = "common/define.rs"] mod define;`) from the tests that use it, and by
//! `tests/common/mod.rs`, so that each uses all of it.

use cranelift_codegen::ir::{AbiParam, Type, UserFuncName};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Linkage, Module};

/// Declares the local function `name` of `module` taking `params` and returning `returns`,
/// lets `build` build its whole body (every block, the return, sealed), finalizes it and
/// defines it. The caller finalizes the module's definitions and takes the code's address.
pub fn define_function(
    module: &mut JITModule,
    name: &str,
    params: &[Type],
    returns: &[Type],
    build: impl FnOnce(&mut FunctionBuilder),
) -> FuncId {
    let mut sig = module.make_signature();
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns
        .extend(returns.iter().map(|&t| AbiParam::new(t)));
    let id = module.declare_function(name, Linkage::Local, &sig).unwrap();
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    build(&mut b);
    b.finalize(module.isa().frontend_config());
    module.define_function(id, &mut ctx).unwrap();
    module.clear_context(&mut ctx);
    id
}
