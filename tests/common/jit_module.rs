//! The host's JIT module for tests that compile their own functions with cranelift-jit, with
//! the libm functions Cranelift calls without SSE4.1. Included by `tests/common/mod.rs` and by
//! path (`#[path = "common/jit_module.rs"] mod jit_module;`) from tests that need only it.

use clconv::cranelift_codegen::isa::OwnedTargetIsa;
use clconv::cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::default_libcall_names;

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
    jit_module_for(isa)
}

/// A JIT module compiling for `isa` (one the host runs: an x86-64 flag set of
/// `clconv::target::Target`, say), with the libm functions handed over as [`jit_module`] does.
#[allow(dead_code)] // tests/typed_entry.rs uses it; the tests that include tests/common do not.
pub fn jit_module_for(isa: OwnedTargetIsa) -> JITModule {
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
