//! What the tests that compile their own Cranelift functions with cranelift-jit share: the
//! module, and the operand forms of the builder API.

use clconv::cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use clconv::cranelift_codegen::settings::{self, Configurable};
use clconv::cranelift_frontend::FunctionBuilder;
use clconv::lower::{element_type, vector_parts};
use clconv::{Request, VectorType};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::default_libcall_names;

pub mod define;
use define::define_function;

/// How an operand and its result travel through the builder API: one scalar per component,
/// or the OpenCL value's 128-bit vector parts.
#[derive(Clone, Copy, Debug)]
pub enum Form {
    Components,
    Parts,
}

/// A JIT module for the host. Without SSE4.1, Cranelift rounds through libm calls that may sit
/// more than 2 GB from the JIT's code (no colocated libcalls) and that cranelift-jit looks up
/// by name in the process, where a Rust program need not export them: hand them over.
pub fn jit_module() -> JITModule {
    let mut flags = settings::builder();
    flags.set("use_colocated_libcalls", "false").unwrap();
    flags.set("is_pic", "false").unwrap();
    let isa = clconv::cranelift_native::builder()
        .unwrap()
        .finish(settings::Flags::new(flags))
        .unwrap();
    let mut jit = JITBuilder::with_isa(isa, default_libcall_names());
    let f32s: [(&str, extern "C" fn(f32) -> f32); 4] = [
        ("nearbyintf", nearbyintf),
        ("floorf", floorf),
        ("ceilf", ceilf),
        ("truncf", truncf),
    ];
    let f64s: [(&str, extern "C" fn(f64) -> f64); 4] = [
        ("nearbyint", nearbyint),
        ("floor", floor),
        ("ceil", ceil),
        ("trunc", trunc),
    ];
    for (name, f) in f32s {
        jit.symbol(name, f as *const u8);
    }
    for (name, f) in f64s {
        jit.symbol(name, f as *const u8);
    }
    JITModule::new(jit)
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
        let (count, stride) = match form {
            Form::Components => (d.lanes(), d.elem.bytes()),
            Form::Parts => (vector_parts(d).1, 16),
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
/// another), or its 128-bit vector parts (16 bytes apart).
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
            let (t, count) = vector_parts(ty);
            (0..count)
                .map(|i| b.ins().load(t, flags, src, (16 * i) as i32))
                .collect()
        }
    }
}

extern "C" fn nearbyintf(x: f32) -> f32 {
    x.round_ties_even()
}
extern "C" fn nearbyint(x: f64) -> f64 {
    x.round_ties_even()
}
extern "C" fn floorf(x: f32) -> f32 {
    x.floor()
}
extern "C" fn floor(x: f64) -> f64 {
    x.floor()
}
extern "C" fn ceilf(x: f32) -> f32 {
    x.ceil()
}
extern "C" fn ceil(x: f64) -> f64 {
    x.ceil()
}
extern "C" fn truncf(x: f32) -> f32 {
    x.trunc()
}
extern "C" fn trunc(x: f64) -> f64 {
    x.trunc()
}
