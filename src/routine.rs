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

use crate::types::{Rounding, ScalarType};

/// Elements per granule of a routine kernel: a routine converts a multiple of this many.
pub const GRANULE: usize = 32;

/// The namespace of the external names a routine kernel calls (`UserExternalName::namespace`);
/// the index is [`Routine::index`].
pub const NAMESPACE: u32 = 0x636c_7274; // "clrt"

/// A host routine: `unsafe extern "C" fn(src: *const u8, dst: *mut u8, n: usize)` converting
/// `n` elements (a multiple of [`GRANULE`]) from `src` to `dst`. The F16C routines need F16C,
/// AVX and AVX2 (x86-64-v3).
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
    /// char, uchar, short or ushort -> half: to float (exact: every such value is a float),
    /// then `vcvtps2ph` with the rounding in its immediate, so the one rounding is the
    /// conversion's.
    F16cSmallIntToHalf(SmallInt, Rounding),
    /// half -> char, uchar, short, ushort, int or uint (the [`HALF_TO_INT`] types) under
    /// OpenCL's rules: `vcvtph2ps` (exact), `vroundps` by the mode (exact), clamped to the
    /// destination's range, NaN to 0: the `_sat` result, which is clconv's result without
    /// `_sat` too. Every half fits an int, so the clamp and the conversion are exact.
    F16cHalfToInt(ScalarType, Rounding),
}

/// The destinations of [`Routine::F16cHalfToInt`], in index order.
pub const HALF_TO_INT: [ScalarType; 6] = [
    ScalarType::Char,
    ScalarType::UChar,
    ScalarType::Short,
    ScalarType::UShort,
    ScalarType::Int,
    ScalarType::UInt,
];

/// The integer sources whose every value a float holds: their conversion to half through
/// float rounds once ([`Routine::F16cSmallIntToHalf`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SmallInt {
    /// `char` (i8).
    Char,
    /// `uchar` (u8).
    UChar,
    /// `short` (i16).
    Short,
    /// `ushort` (u16).
    UShort,
}

impl SmallInt {
    /// The four, in index order.
    pub const ALL: [SmallInt; 4] = [
        SmallInt::Char,
        SmallInt::UChar,
        SmallInt::Short,
        SmallInt::UShort,
    ];

    /// The small integer type `t` is, if any.
    pub fn of(t: ScalarType) -> Option<SmallInt> {
        match t {
            ScalarType::Char => Some(SmallInt::Char),
            ScalarType::UChar => Some(SmallInt::UChar),
            ScalarType::Short => Some(SmallInt::Short),
            ScalarType::UShort => Some(SmallInt::UShort),
            _ => None,
        }
    }

    /// Its OpenCL name.
    pub fn name(self) -> &'static str {
        match self {
            SmallInt::Char => "char",
            SmallInt::UChar => "uchar",
            SmallInt::Short => "short",
            SmallInt::UShort => "ushort",
        }
    }
}

const MODES: [Rounding; 4] = [Rounding::Rte, Rounding::Rtz, Rounding::Rtp, Rounding::Rtn];

impl Routine {
    /// Every routine, in index order.
    ///
    /// ```
    /// let all = clconv::routine::Routine::all();
    /// assert_eq!(all.len(), 4 + 1 + 16 + 24);
    /// assert!(all.iter().enumerate().all(|(i, r)| r.index() as usize == i));
    /// ```
    pub fn all() -> Vec<Routine> {
        let mut all: Vec<Routine> = MODES.into_iter().map(Routine::F16cFloatToHalf).collect();
        all.push(Routine::F16cHalfToFloat);
        for src in SmallInt::ALL {
            all.extend(MODES.map(|m| Routine::F16cSmallIntToHalf(src, m)));
        }
        for dst in HALF_TO_INT {
            all.extend(MODES.map(|m| Routine::F16cHalfToInt(dst, m)));
        }
        all
    }

    /// Its index in [`Routine::all`]: the external name's index in the kernel's IR.
    pub fn index(self) -> u32 {
        let mode = |m: Rounding| MODES.iter().position(|x| *x == m).unwrap_or(0) as u32;
        match self {
            Routine::F16cFloatToHalf(m) => mode(m),
            Routine::F16cHalfToFloat => 4,
            Routine::F16cSmallIntToHalf(src, m) => {
                let s = SmallInt::ALL.iter().position(|x| *x == src).unwrap_or(0) as u32;
                5 + 4 * s + mode(m)
            }
            Routine::F16cHalfToInt(dst, m) => {
                let d = HALF_TO_INT.iter().position(|x| *x == dst).unwrap_or(0) as u32;
                21 + 4 * d + mode(m)
            }
        }
    }

    /// The routine of index `index`.
    pub fn from_index(index: u32) -> Option<Routine> {
        Routine::all().get(index as usize).copied()
    }

    /// Its name, as `clconv show` and the ledger print it.
    ///
    /// ```
    /// use clconv::routine::{Routine, SmallInt};
    /// assert_eq!(Routine::F16cHalfToFloat.name(), "f16c.half_to_float");
    /// let r = Routine::F16cSmallIntToHalf(SmallInt::UShort, clconv::Rounding::Rtp);
    /// assert_eq!(r.name(), "f16c.ushort_to_half_rtp");
    /// ```
    pub fn name(self) -> String {
        match self {
            Routine::F16cFloatToHalf(m) => format!("f16c.float_to_half_{m}"),
            Routine::F16cHalfToFloat => "f16c.half_to_float".to_string(),
            Routine::F16cSmallIntToHalf(src, m) => format!("f16c.{}_to_half_{m}", src.name()),
            Routine::F16cHalfToInt(dst, m) => format!("f16c.half_to_{}_{m}", dst.name()),
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
