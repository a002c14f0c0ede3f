//! Executable memory for the JIT's kernels: where compiled code is copied, relocated and made
//! executable, and unmapped again when its JIT goes.
//!
//! Memory is never writable and executable at once: a kernel's code is written to pages that
//! are read+write and then turned read+execute (one `mprotect`). Pages are not shared between
//! two installs, since the first install's code may be running while the second writes.
//!
//! cranelift-jit's `JITModule` did this before, at 14 µs a kernel (mean over the benchmark's
//! ten, quick tier): a fresh mapping per kernel, a page fault on the first write, the
//! `mprotect`, and symbol bookkeeping clconv never used. Here a process-wide pool keeps pages a
//! dropped JIT gave back (read+write again, already faulted in), so installing a kernel is a
//! copy and one `mprotect` when the pool has a page, and one `mmap` more when it has not.
//!
//! Relocations, cache coherence and the page size are the host's ([`crate::host`]): the pool
//! deals in pages of the size the OS reports (4, 16 and 64 KiB pages all exist on aarch64).

use crate::host;
use crate::routine::Routine;
use cranelift_codegen::ir::{ExternalName, LibCall};
use cranelift_codegen::{FinalizedMachReloc, FinalizedRelocTarget};
use std::sync::Mutex;

/// Pool pages the process-wide pool keeps at most, in bytes (1 MiB); a dropped JIT's pages
/// beyond it are unmapped.
const POOL_BYTES: usize = 1 << 20;

/// Read+write pages, faulted in, ready for code.
static POOL: Mutex<Vec<Pages>> = Mutex::new(Vec::new());

/// One mapping of whole pages.
struct Pages {
    alloc: region::Allocation,
}

// SAFETY: an `Allocation` is a range of mapped memory owned by this value alone; nothing in it
// is tied to the thread that mapped it.
unsafe impl Send for Pages {}

impl Pages {
    fn len(&self) -> usize {
        self.alloc.len()
    }
}

/// A kernel's code to install: its bytes, alignment and relocations.
pub(crate) struct Code<'a> {
    pub bytes: &'a [u8],
    pub alignment: u64,
    pub relocs: &'a [FinalizedMachReloc],
}

/// The executable memory of one JIT: every install's pages, read+execute, until drop.
pub(crate) struct CodeMemory {
    installed: Vec<Pages>,
    /// Where each libcall a kernel may call lives.
    libcall: fn(LibCall) -> Option<*const u8>,
}

impl CodeMemory {
    /// Memory for a JIT whose kernels call `libcall`'s functions. Errors on hosts the JIT does
    /// not run on ([`host::check`]).
    pub(crate) fn new(libcall: fn(LibCall) -> Option<*const u8>) -> Result<CodeMemory, String> {
        host::check()?;
        Ok(CodeMemory {
            installed: Vec::new(),
            libcall,
        })
    }

    /// Copies `codes` into fresh pages (together, each at its alignment), applies their
    /// relocations, makes the pages executable, and returns each one's address, in order.
    pub(crate) fn install(&mut self, codes: &[Code]) -> Result<Vec<usize>, String> {
        // `compile_many` of kernels all cached installs nothing: no page for it.
        if codes.is_empty() {
            return Ok(Vec::new());
        }
        let mut offsets = Vec::with_capacity(codes.len());
        let mut end = 0usize;
        for code in codes {
            let align = (code.alignment.max(1) as usize).min(page_size());
            let start = end.next_multiple_of(align);
            offsets.push(start);
            end = start + code.bytes.len();
        }
        let mut pages = take_pages(end.max(1))?;
        let base = pages.alloc.as_mut_ptr::<u8>();
        for (code, &offset) in codes.iter().zip(&offsets) {
            // SAFETY: `pages` is a read+write mapping of at least `end` bytes that no one else
            // can reach (taken out of the pool or freshly mapped); `offset + len <= end`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    code.bytes.as_ptr(),
                    base.add(offset),
                    code.bytes.len(),
                )
            };
            for reloc in code.relocs {
                // SAFETY: as above; `apply` checks the field lies inside this code's bytes.
                if let Err(why) = unsafe { self.apply(base, offset, code.bytes.len(), reloc) } {
                    give_back(pages);
                    return Err(why);
                }
            }
        }
        // SAFETY: the range is exactly the mapping `pages` owns; nothing runs in it yet.
        if let Err(e) = unsafe {
            region::protect(
                pages.alloc.as_ptr::<u8>(),
                pages.len(),
                region::Protection::READ_EXECUTE,
            )
        } {
            give_back(pages);
            return Err(format!("cannot make JIT code executable: {e}"));
        }
        // SAFETY: the mapping is readable (read+execute) and `end` bytes long.
        if let Err(why) = unsafe { host::make_executable_visible(base, end) } {
            self.installed.push(pages);
            return Err(why);
        }
        self.installed.push(pages);
        Ok(offsets.iter().map(|&o| base as usize + o).collect())
    }

    /// Patches one relocation of the code at `base + offset` (`len` bytes long).
    ///
    /// # Safety
    /// `base + offset .. base + offset + len` must be writable memory this call may modify.
    unsafe fn apply(
        &self,
        base: *mut u8,
        offset: usize,
        len: usize,
        reloc: &FinalizedMachReloc,
    ) -> Result<(), String> {
        let code = base as usize + offset;
        let target = match reloc.target {
            FinalizedRelocTarget::ExternalName(ExternalName::LibCall(lc)) => (self.libcall)(lc)
                .ok_or_else(|| format!("kernel calls {lc:?}, which the JIT does not provide"))?
                as usize,
            FinalizedRelocTarget::ExternalName(ExternalName::User(_)) => {
                let routine = routine_of(&reloc.target).ok_or_else(|| {
                    format!("kernel refers to {:?}, no host routine", reloc.target)
                })?;
                host::routine(routine).ok_or_else(|| {
                    format!(
                        "kernel calls the host routine {}, whose instruction this CPU lacks",
                        routine.name()
                    )
                })? as usize
            }
            FinalizedRelocTarget::Func(at) => code + at as usize,
            ref other => {
                return Err(format!(
                    "kernel refers to {other:?}, which clconv never emits"
                ))
            }
        };
        let target = target.wrapping_add_signed(reloc.addend as isize);
        let at = reloc.offset as usize;
        let size = host::reloc_size(reloc.kind)
            .ok_or_else(|| format!("unsupported relocation {:?}", reloc.kind))?;
        if at.checked_add(size).is_none_or(|end| end > len) {
            return Err(format!(
                "relocation at {at} lies outside the code ({len} bytes)"
            ));
        }
        // SAFETY: the field lies inside this code's writable bytes (checked just now).
        unsafe { host::patch(reloc.kind, base.add(offset + at), target) }
    }
}

/// The host routine a relocation's target names (after the JIT's compile step made a routine
/// call's external name name the routine itself: `User` of [`Routine::index`]).
pub(crate) fn routine_of(target: &FinalizedRelocTarget) -> Option<Routine> {
    match target {
        FinalizedRelocTarget::ExternalName(ExternalName::User(r)) => {
            Routine::from_index(cranelift_codegen::entity::EntityRef::index(*r) as u32)
        }
        _ => None,
    }
}

impl Drop for CodeMemory {
    fn drop(&mut self) {
        for pages in self.installed.drain(..) {
            // SAFETY: the owner of this `CodeMemory` (a `JitInner`) drops it only when no entry
            // point into its code can be called any more; making the pages writable again
            // cannot affect code that runs.
            let writable = unsafe {
                region::protect(
                    pages.alloc.as_ptr::<u8>(),
                    pages.len(),
                    region::Protection::READ_WRITE,
                )
            };
            if writable.is_ok() {
                give_back(pages);
            }
            // Otherwise `pages` drops here: unmapped.
        }
    }
}

/// Read+write pages for `bytes`: one page from the pool when that is enough, else a fresh
/// mapping.
fn take_pages(bytes: usize) -> Result<Pages, String> {
    let page = page_size();
    if bytes <= page {
        let pooled = POOL.lock().unwrap_or_else(|p| p.into_inner()).pop();
        if let Some(pages) = pooled {
            return Ok(pages);
        }
    }
    let alloc = region::alloc(bytes.next_multiple_of(page), region::Protection::READ_WRITE)
        .map_err(|e| format!("cannot map memory for JIT code: {e}"))?;
    Ok(Pages { alloc })
}

/// Returns read+write pages to the pool (single pages, while it has room) or unmaps them.
fn give_back(pages: Pages) {
    let page = page_size();
    if pages.len() == page {
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < (POOL_BYTES / page).max(1) {
            pool.push(pages);
        }
    }
}

/// The size of the system's pages, as the OS reports it.
fn page_size() -> usize {
    region::page::size()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::binemit::Reloc;

    fn no_libcalls(_: LibCall) -> Option<*const u8> {
        None
    }

    #[test]
    fn installed_code_runs_and_relocations_out_of_range_are_errors() {
        let mut memory = CodeMemory::new(no_libcalls).unwrap();
        let code = host::RETURN_42;
        let addrs = memory
            .install(&[Code {
                bytes: code,
                alignment: 16,
                relocs: &[],
            }])
            .unwrap();
        // SAFETY: the address is the start of the function's bytes, now executable.
        let f: extern "C" fn() -> u32 = unsafe { std::mem::transmute(addrs[0]) };
        assert_eq!(f(), 42);
        let outside = FinalizedMachReloc {
            offset: 4,
            kind: Reloc::Abs8,
            target: FinalizedRelocTarget::Func(0),
            addend: 0,
        };
        let err = memory
            .install(&[Code {
                bytes: code,
                alignment: 16,
                relocs: &[outside],
            }])
            .unwrap_err();
        assert!(err.contains("outside the code"), "{err}");
    }
}
