//! The JIT on x86-64 (System V: Linux and the other Unix systems): MXCSR, the x86-64
//! relocations, and no cache maintenance.

use super::Control;
use crate::types::Rounding;
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::LibCall;
use std::arch::x86_64::__m128i;

/// The JIT runs here.
pub(crate) fn check() -> Result<(), String> {
    Ok(())
}

/// The MXCSR a kernel runs under ([`crate::fp_control::mxcsr_for`]).
pub(crate) fn control_for(rounding: Rounding) -> Control {
    Control(crate::fp_control::mxcsr_for(rounding))
}

/// Calls the kernel at `entry` with the integer arguments `args` (in order: a conversion
/// kernel's `src`, `dst`, `vectors` and two unused zeros; an arithmetic kernel's `a`, `b`, `c`,
/// `dst`, `vectors`) and MXCSR set to `control`; the caller's MXCSR (its mode, and its
/// exception flags: the kernel's do not leak) is back after it. Rust code never runs in the
/// kernel's mode: the whole switch is one `asm!` block.
///
/// # Safety
/// `entry` must be a kernel this crate compiled (System V, integer parameters only, at most
/// five; no calls back into Rust unless `control` is [`super::default_control`], the
/// environment Rust code assumes), and the pointers among `args` valid for what it reads and
/// writes.
pub(crate) unsafe fn call_kernel(entry: usize, args: [usize; 5], control: Control) {
    // SAFETY: the caller's contract above covers the call itself. The block keeps the ABI's
    // promises: the stack stays 16-byte aligned at the call (it is on entry to an asm block
    // without `nostack`, and 16 bytes are reserved), everything the callee may clobber is
    // declared by `clobber_abi("C")`, the direction flag stays clear, and MXCSR is restored
    // before the block ends, so the mode set for the kernel is only ever seen by the kernel.
    unsafe {
        std::arch::asm!(
            "sub rsp, 16",
            "stmxcsr [rsp]",
            "mov dword ptr [rsp + 4], {mxcsr:e}",
            "ldmxcsr [rsp + 4]",
            "call {entry}",
            "ldmxcsr [rsp]",
            "add rsp, 16",
            mxcsr = in(reg) control.0,
            entry = in(reg) entry,
            in("rdi") args[0],
            in("rsi") args[1],
            in("rdx") args[2],
            in("rcx") args[3],
            in("r8") args[4],
            clobber_abi("C"),
        );
    }
}

/// The host's own helper for `libcall`: Cranelift's `__cranelift_x86_pshufb`, which kernels for
/// flag sets without SSSE3 call and which no library provides.
pub(crate) fn libcall(libcall: LibCall) -> Option<*const u8> {
    match libcall {
        LibCall::X86Pshufb => Some(pshufb as PshufbFn as *const u8),
        _ => None,
    }
}

// System V: __m128i travels in an XMM register both for Rust's extern "C" and for Cranelift's
// I8X16 (the lint does not know SIMD types).
#[allow(improper_ctypes_definitions)]
type PshufbFn = extern "C" fn(__m128i, __m128i) -> __m128i;

/// SSSE3 `pshufb` (Cranelift's signature: I8X16, I8X16 -> I8X16): byte i of the result is
/// `a[mask[i] & 15]`, or 0 when bit 7 of `mask[i]` is set.
#[allow(improper_ctypes_definitions)]
extern "C" fn pshufb(a: __m128i, mask: __m128i) -> __m128i {
    // SAFETY: __m128i and [u8; 16] have the same size and every bit pattern is valid for both.
    let (a, mask) = unsafe {
        (
            std::mem::transmute::<__m128i, [u8; 16]>(a),
            std::mem::transmute::<__m128i, [u8; 16]>(mask),
        )
    };
    let out: [u8; 16] = std::array::from_fn(|i| {
        if mask[i] & 0x80 != 0 {
            0
        } else {
            a[usize::from(mask[i] & 15)]
        }
    });
    // SAFETY: as above.
    unsafe { std::mem::transmute::<[u8; 16], __m128i>(out) }
}

/// How many bytes a relocation of `kind` patches; `None` for kinds Cranelift's x86-64 backend
/// does not emit for clconv's kernels (calls into the JIT's libcalls, the only external names).
pub(crate) fn reloc_size(kind: Reloc) -> Option<usize> {
    match kind {
        Reloc::Abs8 => Some(8),
        Reloc::X86PCRel4 | Reloc::X86CallPCRel4 => Some(4),
        _ => None,
    }
}

/// Patches the relocation of `kind` at `field` (the code's address `field` too: the code runs
/// where it is written) to refer to `target` (addend included).
///
/// # Safety
/// `field .. field + reloc_size(kind)` must be writable memory this call may modify.
pub(crate) unsafe fn patch(kind: Reloc, field: *mut u8, target: usize) -> Result<(), String> {
    match kind {
        Reloc::Abs8 => {
            // SAFETY: the caller's contract: 8 writable bytes.
            unsafe { field.cast::<u64>().write_unaligned(target as u64) };
        }
        Reloc::X86PCRel4 | Reloc::X86CallPCRel4 => {
            let delta = i32::try_from(target as i64 - field as i64)
                .map_err(|_| "a call target lies more than 2 GiB away from the code")?;
            // SAFETY: the caller's contract: 4 writable bytes.
            unsafe { field.cast::<i32>().write_unaligned(delta) };
        }
        kind => return Err(format!("unsupported relocation {kind:?}")),
    }
    Ok(())
}

/// x86-64 keeps instruction fetch coherent with stores to the same physical memory, and an
/// entry point reaches other threads through a release store (the JIT's cache slots), so new
/// code needs no cache maintenance.
///
/// # Safety
/// None needed here; the signature is every host's.
pub(crate) unsafe fn make_executable_visible(_code: *const u8, _len: usize) -> Result<(), String> {
    Ok(())
}

/// `extern "C" fn() -> u32` returning 42: `mov eax, 42; ret`.
#[cfg(test)]
pub(crate) const RETURN_42: &[u8] = &[0xb8, 42, 0, 0, 0, 0xc3];
