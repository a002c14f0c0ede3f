//! The JIT on aarch64 Linux: FPCR and FPSR, the aarch64 relocations, and the cache maintenance
//! the architecture requires before new code runs.

use super::Control;
use crate::types::Rounding;
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::LibCall;

/// The JIT runs here.
pub(crate) fn check() -> Result<(), String> {
    Ok(())
}

/// The FPCR a kernel runs under ([`crate::fp_control::fpcr_for`]): the AOT entry points' word.
pub(crate) fn control_for(rounding: Rounding) -> Control {
    Control(crate::fp_control::fpcr_for(rounding))
}

/// Calls the kernel at `entry` with the integer arguments `args` (in order: a conversion
/// kernel's `src`, `dst`, `vectors` and two unused zeros; an arithmetic kernel's `a`, `b`, `c`,
/// `dst`, `vectors`) and FPCR set to `control`; the caller's FPCR and FPSR (its mode, and its
/// cumulative exception flags: the kernel's do not leak) are back after it. Rust code never runs
/// in the kernel's mode: the whole switch is one `asm!` block.
///
/// # Safety
/// `entry` must be a kernel this crate compiled (AAPCS64, integer parameters only, at most five;
/// no calls back into Rust unless `control` is [`super::default_control`], the environment Rust
/// code assumes), and the pointers among `args` valid for what it reads and writes.
pub(crate) unsafe fn call_kernel(entry: usize, args: [usize; 5], control: Control) {
    // SAFETY: the caller's contract above covers the call itself. The block keeps AAPCS64's
    // promises: sp stays 16-byte aligned (it is on entry, and 16 bytes are reserved; Linux has
    // no red zone below sp), every register the callee may clobber is declared by
    // `clobber_abi("C")` (x9 and x10, the scratch registers here, among them; every input is in
    // a named register, so neither holds one), x18 is not touched, and FPCR and FPSR are
    // restored before the block ends, so the mode set for the kernel is only ever seen by the
    // kernel.
    unsafe {
        std::arch::asm!(
            "sub sp, sp, #16",
            "mrs x9, fpcr",
            "mrs x10, fpsr",
            "stp x9, x10, [sp]",
            "msr fpcr, x17",
            "blr x16",
            "ldp x9, x10, [sp]",
            "msr fpcr, x9",
            "msr fpsr, x10",
            "add sp, sp, #16",
            in("x16") entry,
            in("x17") u64::from(control.0),
            in("x0") args[0],
            in("x1") args[1],
            in("x2") args[2],
            in("x3") args[3],
            in("x4") args[4],
            clobber_abi("C"),
        );
    }
}

/// The host's own helper for `libcall`: none (Cranelift's aarch64 backend calls only libm's,
/// which the JIT provides on every host).
pub(crate) fn libcall(_: LibCall) -> Option<*const u8> {
    None
}

/// How many bytes a relocation of `kind` patches; `None` for kinds Cranelift's aarch64 backend
/// does not emit for clconv's kernels (with `is_pic` off: absolute addresses of the JIT's
/// libcalls, and direct calls).
pub(crate) fn reloc_size(kind: Reloc) -> Option<usize> {
    match kind {
        Reloc::Abs8 => Some(8),
        Reloc::Arm64Call => Some(4),
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
        Reloc::Arm64Call => {
            // `bl`: a signed 26-bit count of instructions, ±128 MiB.
            let delta = target as i64 - field as i64;
            if delta % 4 != 0 || !(-(1 << 27)..(1 << 27)).contains(&delta) {
                return Err("a call target lies more than 128 MiB away from the code".into());
            }
            let imm26 = ((delta >> 2) as u32) & 0x03ff_ffff;
            // SAFETY: the caller's contract: 4 writable bytes.
            unsafe {
                let insn = field.cast::<u32>().read_unaligned();
                field
                    .cast::<u32>()
                    .write_unaligned((insn & !0x03ff_ffff) | imm26);
            }
        }
        kind => return Err(format!("unsupported relocation {kind:?}")),
    }
    Ok(())
}

/// Makes the `len` bytes of new code at `code` visible to instruction fetch on every core, as
/// the Arm architecture requires: data cache cleaned to the point of unification (`dc cvau`,
/// unless CTR_EL0.IDC says the hardware needs none), `dsb ish`, instruction cache invalidated
/// (`ic ivau`, unless CTR_EL0.DIC), `dsb ish`, `isb`, each by the line sizes CTR_EL0 reports;
/// then every other thread of the process is made to resynchronise its instruction stream
/// (wasmtime's `pipeline_flush_mt`: the `membarrier` system call, as cranelift-jit does).
///
/// The cache maintenance is written here rather than taken from the same crate's
/// `clear_cache`, which issues no `dc cvau` (so it is not enough on cores with CTR_EL0.IDC = 0,
/// such as the Cortex-A72) and assumes 64-byte lines.
///
/// # Safety
/// `code .. code + len` must be mapped and readable.
pub(crate) unsafe fn make_executable_visible(code: *const u8, len: usize) -> Result<(), String> {
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no effect; Linux lets EL0 read it (or emulates the read).
    unsafe { std::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let (start, end) = (code as usize, code as usize + len);
    if ctr >> 28 & 1 == 0 {
        let line = 4usize << (ctr >> 16 & 0xf);
        let mut at = start & !(line - 1);
        while at < end {
            // SAFETY: `at` lies in (the lines of) the caller's mapped range; cleaning a data
            // cache line changes no memory contents.
            unsafe { std::arch::asm!("dc cvau, {}", in(reg) at, options(nostack)) };
            at += line;
        }
    }
    // SAFETY: barriers only order memory accesses.
    unsafe { std::arch::asm!("dsb ish", options(nostack)) };
    if ctr >> 29 & 1 == 0 {
        let line = 4usize << (ctr & 0xf);
        let mut at = start & !(line - 1);
        while at < end {
            // SAFETY: as above; invalidating instruction cache lines changes no memory.
            unsafe { std::arch::asm!("ic ivau, {}", in(reg) at, options(nostack)) };
            at += line;
        }
        // SAFETY: a barrier only orders the invalidations before what follows.
        unsafe { std::arch::asm!("dsb ish", options(nostack)) };
    }
    // SAFETY: a context synchronisation of this thread's instruction stream.
    unsafe { std::arch::asm!("isb", options(nostack)) };
    wasmtime_internal_jit_icache_coherence::pipeline_flush_mt()
        .map_err(|e| format!("cannot synchronise other threads with the new code: {e}"))
}

/// `extern "C" fn() -> u32` returning 42: `mov w0, #42; ret`.
#[cfg(test)]
pub(crate) const RETURN_42: &[u8] = &[0x40, 0x05, 0x80, 0x52, 0xc0, 0x03, 0x5f, 0xd6];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_patched_in_range_and_refused_beyond_128_mib() {
        let mut insn = 0x9400_0000u32.to_le_bytes(); // bl .
        let field = insn.as_mut_ptr();
        // SAFETY: `field` is the 4 bytes of `insn`.
        unsafe { patch(Reloc::Arm64Call, field, field as usize - 8) }.unwrap();
        // bl .-8: imm26 = -2.
        assert_eq!(u32::from_le_bytes(insn), 0x9400_0000 | 0x03ff_fffe);
        let far = field as usize + (128 << 20);
        // SAFETY: as above.
        assert!(unsafe { patch(Reloc::Arm64Call, field, far) }.is_err());
        assert_eq!(reloc_size(Reloc::X86CallPCRel4), None);
    }

    #[test]
    fn the_control_is_rmode_alone() {
        assert_eq!(control_for(Rounding::Rte), Control(0));
        assert_eq!(control_for(Rounding::Rtp), Control(1 << 22));
        assert_eq!(control_for(Rounding::Rtn), Control(2 << 22));
        assert_eq!(control_for(Rounding::Rtz), Control(3 << 22));
    }
}
