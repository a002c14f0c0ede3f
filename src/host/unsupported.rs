//! Hosts the JIT does not run on (riscv64, s390x, aarch64 outside Linux, x86-64 outside the
//! System V Unix systems, ...): [`check`] refuses with a message naming the host and pointing
//! to `clconv::aot`, so no kernel is ever installed and none of the functions below is reached.

use super::Control;
use crate::types::Rounding;
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::LibCall;

/// The JIT does not run here.
pub(crate) fn check() -> Result<(), String> {
    Err(format!(
        "clconv's JIT does not run on this host ({}, {}; it runs on x86-64 Unix and aarch64 \
         Linux): compile the kernels ahead of time for this target with `clconv::aot` \
         (`clconv emit`) and link them instead",
        std::env::consts::ARCH,
        std::env::consts::OS,
    ))
}

/// Never used: [`check`] refuses first.
pub(crate) fn control_for(_: Rounding) -> Control {
    Control(0)
}

/// Never reached: [`check`] refuses before any kernel is installed, so there is none to call.
///
/// # Safety
/// Does nothing.
pub(crate) unsafe fn call_kernel(_entry: usize, _args: [usize; 5], _control: Control) {}

/// No helper: nothing runs here.
pub(crate) fn libcall(_: LibCall) -> Option<*const u8> {
    None
}

/// No relocation is supported here.
pub(crate) fn reloc_size(_: Reloc) -> Option<usize> {
    None
}

/// No relocation is supported here.
///
/// # Safety
/// Does nothing.
pub(crate) unsafe fn patch(kind: Reloc, _field: *mut u8, _target: usize) -> Result<(), String> {
    Err(format!("unsupported relocation {kind:?}"))
}

/// Never reached: no kernel is installed on this host.
///
/// # Safety
/// Does nothing.
pub(crate) unsafe fn make_executable_visible(_code: *const u8, _len: usize) -> Result<(), String> {
    Err(check().unwrap_err())
}

/// Nothing runs here; the tests that would run it fail at [`check`] first.
#[cfg(test)]
pub(crate) const RETURN_42: &[u8] = &[];
