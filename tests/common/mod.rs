//! What the tests that compile their own Cranelift functions with cranelift-jit share: the
//! module, and the operand forms of the builder API.

use clconv::cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use clconv::cranelift_frontend::FunctionBuilder;
use clconv::lower::{element_type, value_shape};
use clconv::{Request, VectorType};
use cranelift_jit::JITModule;

pub mod define;
use define::define_function;
mod jit_module;
pub use jit_module::jit_module;

/// How an operand and its result travel through the builder API: one scalar per component,
/// or the OpenCL value as a front end holds it ([`value_shape`]: one vector of its lanes up to
/// 128 bits, 128-bit parts beyond).
#[derive(Clone, Copy, Debug)]
pub enum Form {
    Components,
    Parts,
    /// The 128-bit parts [`clconv::lower::vector_parts`] gives, a narrow value in the low
    /// lanes: the convention `Lowering::convert_vector` and the half loads and stores take.
    // tests/spirv.rs uses it; tests/lower_named.rs, which includes this module too, does not.
    #[allow(dead_code)]
    PaddedParts,
}

/// Compiles `fn(src, dst)` (function `f{n}` of `module`) that loads one value of `request`'s
/// source in `form`, hands it to `lower` (the lowering under test: one builder-API call), and
/// stores what it returns, checking that it is as many values as `form` gives the destination;
/// returns the finalized code's address. `label` names the case in a failed check.
pub fn compile(
    module: &mut JITModule,
    n: usize,
    label: &str,
    request: &Request,
    form: Form,
    lower: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
) -> *const u8 {
    let id = define_function(module, &format!("f{n}"), &[types::I64; 2], &[], |b| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (src, dst) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let args = load_operand(b, request.src(), form, src);
        let out = lower(b, &args);
        let d = request.dst();
        // A one-component operand is a scalar in both forms, so its result comes per component
        // (`as_char2(short)`: two I8).
        let per_component = matches!(form, Form::Components) || request.src().lanes() == 1;
        let (count, stride) = match form {
            _ if per_component => (d.lanes(), d.elem.bytes()),
            Form::Components => unreachable!(),
            Form::PaddedParts => (clconv::lower::vector_parts(d).1, 16),
            Form::Parts => {
                let (ty, count) = value_shape(d);
                (count, ty.bytes() as usize)
            }
        };
        assert_eq!(out.len(), count, "{label}");
        for (i, &v) in out.iter().enumerate() {
            b.ins()
                .store(MemFlagsData::trusted(), v, dst, (i * stride) as i32);
        }
        b.ins().return_(&[]);
        b.seal_all_blocks();
    });
    module.finalize_definitions().unwrap();
    module.get_finalized_function(id)
}

/// Loads one OpenCL value of type `ty` from `src` in `form`: its components (scalars, one after
/// another), or its [`value_shape`] (one vector, or 128-bit parts 16 bytes apart).
pub fn load_operand(b: &mut FunctionBuilder, ty: VectorType, form: Form, src: Value) -> Vec<Value> {
    let flags = MemFlagsData::trusted();
    match form {
        Form::Components => {
            let t = element_type(ty.elem);
            (0..ty.lanes())
                .map(|i| b.ins().load(t, flags, src, (i * ty.elem.bytes()) as i32))
                .collect()
        }
        Form::Parts => {
            let (t, count) = value_shape(ty);
            (0..count)
                .map(|i| b.ins().load(t, flags, src, (t.bytes() as usize * i) as i32))
                .collect()
        }
        Form::PaddedParts => {
            let (t, count) = clconv::lower::vector_parts(ty);
            (0..count)
                .map(|i| b.ins().load(t, flags, src, (16 * i) as i32))
                .collect()
        }
    }
}
