//! What the JIT does differently on each host ISA, one module per host: how a kernel is called
//! with the floating-point control register it needs, how its relocations are patched, and how
//! freshly written code is made visible to instruction fetch. The rest of the JIT is the same
//! on every host and has no `cfg(target_arch)`.
//!
//! A new host is one module beside `x86_64.rs` and `aarch64.rs` with the same items, and one
//! line in the selection below. A host without one gets `unsupported.rs`, whose
//! [`check`] names the host and points to `clconv::aot`: the JIT then refuses to start (a
//! typed error) rather than run code it cannot call correctly.
//!
//! Every module provides:
//! - `check()`: whether the JIT runs here (an error message when it does not).
//! - `control_for(Rounding) -> Control`: the control-register value a kernel runs under.
//! - `call_kernel(entry, args, control)`: the call, with the caller's register given back.
//! - `reloc_size(Reloc)` and `patch(Reloc, field, target)`: the relocations kernels carry.
//! - `libcall(LibCall)`: the host's own helpers kernels may call (beside libm's).
//! - `make_executable_visible(ptr, len)`: instruction-cache coherence for new code.
//!
//! And [`routine`]: where a host routine ([`crate::routine`]) lives on this host, if its CPU
//! has the routine's instruction (`f16c.rs` on x86-64).

use crate::types::Rounding;

#[cfg(all(target_arch = "x86_64", unix))]
mod x86_64;
#[cfg(all(target_arch = "x86_64", unix))]
use x86_64 as imp;

#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
mod aarch64;
#[cfg(all(target_arch = "aarch64", target_os = "linux"))]
use aarch64 as imp;

#[cfg(not(any(
    all(target_arch = "x86_64", unix),
    all(target_arch = "aarch64", target_os = "linux")
)))]
mod unsupported;
#[cfg(not(any(
    all(target_arch = "x86_64", unix),
    all(target_arch = "aarch64", target_os = "linux")
)))]
use unsupported as imp;

pub(crate) use imp::{call_kernel, libcall, make_executable_visible, patch, reloc_size};

#[cfg(all(target_arch = "x86_64", unix))]
mod f16c;

/// Whether this host's CPU runs clconv's host routines (x86-64 with F16C, AVX and AVX2): the
/// JIT lets its kernels call them only then, so that a CPU without them (a VM hiding F16C)
/// keeps Cranelift's sequences rather than failing to install a kernel.
pub(crate) fn has_routines() -> bool {
    #[cfg(all(target_arch = "x86_64", unix))]
    {
        f16c::detected()
    }
    #[cfg(not(all(target_arch = "x86_64", unix)))]
    {
        false
    }
}

/// The address of `routine` on this host, or `None` where the host or its CPU lacks the
/// routine's instruction.
pub(crate) fn routine(routine: crate::routine::Routine) -> Option<*const u8> {
    #[cfg(all(target_arch = "x86_64", unix))]
    {
        f16c::address(routine)
    }
    #[cfg(not(all(target_arch = "x86_64", unix)))]
    {
        let _ = routine;
        None
    }
}

/// A function returning 42 in this host's machine code, for the tests of code memory.
#[cfg(test)]
pub(crate) use imp::RETURN_42;

/// The value of the host's floating-point control register a kernel runs under: MXCSR on
/// x86-64, FPCR on aarch64. Made by [`control_for`] only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Control(pub(crate) u32);

/// The control a kernel that rounds by the control in `rounding` runs under (every other
/// kernel: [`default_control`]): no flush-to-zero, no denormals-are-zero, no default NaN, no
/// traps, whatever the calling thread set, and the rounding mode `rounding`.
pub(crate) fn control_for(rounding: Rounding) -> Control {
    imp::control_for(rounding)
}

/// [`control_for`] nearest-even: the environment Rust code and every kernel but the
/// rounding-control rows' assume.
pub(crate) fn default_control() -> Control {
    imp::control_for(Rounding::Rte)
}

/// Whether the JIT runs kernels on this host: an error naming the host and what to use
/// instead where it does not.
pub(crate) fn check() -> Result<(), String> {
    imp::check()
}

// The refusal every other host gets, compiled on every host so its message is tested.
#[cfg(test)]
#[path = "unsupported.rs"]
#[allow(dead_code)]
mod unsupported_for_tests;

#[cfg(test)]
mod tests {
    #[test]
    fn other_hosts_are_refused_naming_the_host_and_the_aot_objects() {
        let why = super::unsupported_for_tests::check().unwrap_err();
        assert!(why.contains(std::env::consts::ARCH), "{why}");
        assert!(why.contains("clconv::aot"), "{why}");
    }
}
