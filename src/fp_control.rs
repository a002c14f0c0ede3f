//! The floating-point control words kernels run under, one function per ISA: what the JIT's
//! host code (`src/host/`) and the AOT entry points (`clconv::aot`) load around a kernel, and
//! what [`crate::jit::CodeCompiler`] records of x86-64 code compiled on any host. Pure data, so
//! that the two callers load the same word.

use crate::types::Rounding;

/// The MXCSR an x86-64 kernel runs under: every floating-point exception masked, no
/// flush-to-zero and no denormals-are-zero (the conversions produce and read subnormals,
/// whatever the calling thread set), and the rounding control (bits 13-14) of `rounding`: the
/// kernel's [`crate::kernel::Built::rounding_control`], nearest-even for all but the `mxcsr`
/// rows' recipes.
pub(crate) const fn mxcsr_for(rounding: Rounding) -> u32 {
    let rc = match rounding {
        Rounding::Rte => 0,
        Rounding::Rtn => 1,
        Rounding::Rtp => 2,
        Rounding::Rtz => 3,
    };
    0x1f80 | rc << 13
}

/// The FPCR an aarch64 kernel runs under: RMode (bits 23:22: RN 0, RP 1, RM 2, RZ 3) of
/// `rounding`, the kernel's [`crate::kernel::Built::rounding_control`] (nearest-even for all
/// but the `fpcr` rows' recipes), and every other bit 0: no flush-to-zero (FZ, FZ16), no
/// default NaN (DN: NaN payloads pass through, as the reference says), IEEE half-precision
/// (AHP) and no traps, whatever the calling thread set. Loaded by the AOT entry points and the
/// JIT on an aarch64 host only.
#[cfg(any(feature = "aot", all(feature = "jit", target_arch = "aarch64")))]
pub(crate) const fn fpcr_for(rounding: Rounding) -> u32 {
    let rmode = match rounding {
        Rounding::Rte => 0,
        Rounding::Rtp => 1,
        Rounding::Rtn => 2,
        Rounding::Rtz => 3,
    };
    rmode << 22
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words as the architecture manuals lay them out: MXCSR 0x1f80 is every exception
    /// masked with RC nearest; RC is bits 13-14 (01 down, 10 up, 11 toward zero).
    #[test]
    fn mxcsr_words() {
        assert_eq!(mxcsr_for(Rounding::Rte), 0x1f80);
        assert_eq!(mxcsr_for(Rounding::Rtn), 0x3f80);
        assert_eq!(mxcsr_for(Rounding::Rtp), 0x5f80);
        assert_eq!(mxcsr_for(Rounding::Rtz), 0x7f80);
    }

    /// FPCR.RMode is bits 22-23 (01 plus infinity, 10 minus infinity, 11 zero).
    #[cfg(any(feature = "aot", all(feature = "jit", target_arch = "aarch64")))]
    #[test]
    fn fpcr_words() {
        assert_eq!(fpcr_for(Rounding::Rte), 0);
        assert_eq!(fpcr_for(Rounding::Rtp), 0x0040_0000);
        assert_eq!(fpcr_for(Rounding::Rtn), 0x0080_0000);
        assert_eq!(fpcr_for(Rounding::Rtz), 0x00c0_0000);
    }
}
