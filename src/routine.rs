//! Host routines: conversions a batch kernel hands to a function of clconv's, written in Rust
//! with `std::arch` for an instruction the host has and Cranelift cannot emit (F16C's
//! `vcvtps2ph`/`vcvtph2ps`), the way Cranelift's own x64 backend calls `LibCall::X86Pshufb`
//! where SSSE3 is missing.
//!
//! Which conversions take a routine is a row of `lowering-tables/` guarded by a feature that
//! holds only for batch kernels compiled in this process by the JIT on a host that has the
//! instruction (`f16c`: [`crate::table::HOST_F16C`]). Code lowered into a caller's own function
//! and AOT objects never call a routine: they keep Cranelift's sequences.
//!
//! A routine kernel is one call, `routine(src, dst, n)` over the whole granules of the buffer
//! ([`GRANULE`] elements each); the JIT's caller-side tail handling ([`crate::kernel::run_in_granules`])
//! passes the rest once more on zero-padded copies, as for every vector kernel. This module names
//! the routines on every host (the tables and the kernel builder need the names); the code is
//! in `src/host/` and exists only on the hosts that have the instruction.

use crate::types::Rounding;

/// Elements per granule of a routine kernel: a routine converts a multiple of this many.
pub const GRANULE: usize = 32;

/// The namespace of the external names a routine kernel calls (`UserExternalName::namespace`);
/// the index is [`Routine::index`].
pub const NAMESPACE: u32 = 0x636c_7274; // "clrt"

/// A host routine: `unsafe extern "C" fn(src: *const u8, dst: *mut u8, n: usize)` converting
/// `n` elements (a multiple of [`GRANULE`]) from `src` to `dst`.
///
/// ```
/// use clconv::routine::Routine;
/// use clconv::Rounding;
/// let r = Routine::F16cFloatToHalf(Rounding::Rtz);
/// assert_eq!(r.name(), "f16c.float_to_half_rtz");
/// assert_eq!(Routine::from_index(r.index()), Some(r));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Routine {
    /// float -> half by F16C's `vcvtps2ph` with the rounding in its immediate.
    F16cFloatToHalf(Rounding),
    /// half -> float by F16C's `vcvtph2ps` (exact).
    F16cHalfToFloat,
}

impl Routine {
    /// Every routine, in index order.
    pub const ALL: [Routine; 5] = [
        Routine::F16cFloatToHalf(Rounding::Rte),
        Routine::F16cFloatToHalf(Rounding::Rtz),
        Routine::F16cFloatToHalf(Rounding::Rtp),
        Routine::F16cFloatToHalf(Rounding::Rtn),
        Routine::F16cHalfToFloat,
    ];

    /// Its index in [`Routine::ALL`]: the external name's index in the kernel's IR.
    pub fn index(self) -> u32 {
        Routine::ALL
            .iter()
            .position(|r| *r == self)
            .expect("Routine::ALL lists every routine") as u32
    }

    /// The routine of index `index`.
    pub fn from_index(index: u32) -> Option<Routine> {
        Routine::ALL.get(index as usize).copied()
    }

    /// Its name, as `clconv show` and the ledger print it.
    pub fn name(self) -> &'static str {
        match self {
            Routine::F16cFloatToHalf(Rounding::Rte) => "f16c.float_to_half_rte",
            Routine::F16cFloatToHalf(Rounding::Rtz) => "f16c.float_to_half_rtz",
            Routine::F16cFloatToHalf(Rounding::Rtp) => "f16c.float_to_half_rtp",
            Routine::F16cFloatToHalf(Rounding::Rtn) => "f16c.float_to_half_rtn",
            Routine::F16cHalfToFloat => "f16c.half_to_float",
        }
    }

    /// What identifies its code for the ledger: the name and a hash of the source file that
    /// holds it (`src/host/f16c.rs`), so that a kernel's fingerprint changes when the routine
    /// it calls does (`clconv_verify::ledger`).
    ///
    /// ```
    /// let id = clconv::routine::Routine::F16cHalfToFloat.identity();
    /// assert!(id.starts_with("f16c.half_to_float src/host/f16c.rs fnv1a64:"), "{id}");
    /// ```
    pub fn identity(self) -> String {
        let source = include_str!("host/f16c.rs");
        // FNV-1a, 64 bits: enough to tell two versions of one file apart.
        let hash = source.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        format!("{} src/host/f16c.rs fnv1a64:{hash:016x}", self.name())
    }
}
