//! The F16C routines ([`crate::routine::Routine`]): float <-> half by `vcvtps2ph` and
//! `vcvtph2ps`, eight elements per instruction, 32 per loop iteration.
//!
//! clconv's rules are the instructions' own (Intel SDM, VCVTPS2PH / VCVTPH2PS): IEEE 754
//! rounding in the mode the immediate names, overflow to infinity or the largest finite half as
//! the mode says, subnormal results produced; a NaN keeps its sign and the top bits of its
//! payload and becomes quiet (float `0x7f800001` -> half `0x7e00`; half `0x7c01` -> float
//! `0x7fc02000`), as the reference defines it (`src/reference.rs`). The kernel runs under
//! clconv's default MXCSR (no flush-to-zero, no denormals-are-zero, exceptions masked), which
//! only `vcvtph2ps`'s and `vcvtps2ph`'s flags see. The exhaustive sweeps prove it on every
//! input (`verification/ledger.tsv`).

use crate::routine::{Routine, SmallInt, GRANULE};
use crate::types::{Rounding, ScalarType};
use std::arch::x86_64::{
    __m128i, __m256i, _mm256_and_si256, _mm256_blendv_epi8, _mm256_castps_si256,
    _mm256_castsi256_si128, _mm256_cmp_ps, _mm256_cmpeq_epi32, _mm256_cvtepi16_epi32,
    _mm256_cvtepi32_ps, _mm256_cvtepi8_epi32, _mm256_cvtepu16_epi32, _mm256_cvtepu8_epi32,
    _mm256_cvtph_ps, _mm256_cvtps_ph, _mm256_cvttps_epi32, _mm256_extracti128_si256,
    _mm256_loadu_ps, _mm256_max_ps, _mm256_min_ps, _mm256_round_ps, _mm256_set1_epi32,
    _mm256_set1_ps, _mm256_setzero_si256, _mm256_storeu_ps, _mm256_storeu_si256, _mm_loadl_epi64,
    _mm_loadu_si128, _mm_packs_epi16, _mm_packs_epi32, _mm_packus_epi16, _mm_packus_epi32,
    _mm_storel_epi64, _mm_storeu_si128, _CMP_ORD_Q,
};

/// A routine's signature as a kernel calls it (System V, three integer arguments).
type RoutineFn = unsafe extern "C" fn(*const u8, *mut u8, usize);

/// Whether this CPU runs the F16C routines (F16C, AVX and AVX2, detected at run time).
pub(crate) fn detected() -> bool {
    std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("avx2")
}

/// `f::<k, imm>` with `imm` the immediate of `mode` among `[rte, rtn, rtp, rtz]`.
macro_rules! by_mode {
    ($mode:expr, $f:ident, $k:literal, [$rte:literal, $rtn:literal, $rtp:literal, $rtz:literal]) => {
        match $mode {
            Rounding::Rte => $f::<$k, $rte>,
            Rounding::Rtn => $f::<$k, $rtn>,
            Rounding::Rtp => $f::<$k, $rtp>,
            Rounding::Rtz => $f::<$k, $rtz>,
        }
    };
}

/// The address of `routine`, or `None` where this CPU lacks its instruction (a kernel calling
/// it is then refused at installation, never run).
pub(crate) fn address(routine: Routine) -> Option<*const u8> {
    if !detected() {
        return None;
    }
    let f: RoutineFn = match routine {
        Routine::F16cFloatToHalf(Rounding::Rte) => float_to_half::<0>,
        Routine::F16cFloatToHalf(Rounding::Rtn) => float_to_half::<1>,
        Routine::F16cFloatToHalf(Rounding::Rtp) => float_to_half::<2>,
        Routine::F16cFloatToHalf(Rounding::Rtz) => float_to_half::<3>,
        Routine::F16cHalfToFloat => half_to_float,
        // The source or destination as the routine's first parameter, the mode as the
        // instruction's immediate: `vcvtps2ph`'s (0 nearest-even, 1 down, 2 up, 3 toward zero),
        // `vroundps`'s (the same, exceptions suppressed: 0x08 to 0x0b).
        Routine::F16cSmallIntToHalf(src, mode) => match src {
            SmallInt::Char => by_mode!(mode, int_to_half, 0, [0, 1, 2, 3]),
            SmallInt::UChar => by_mode!(mode, int_to_half, 1, [0, 1, 2, 3]),
            SmallInt::Short => by_mode!(mode, int_to_half, 2, [0, 1, 2, 3]),
            SmallInt::UShort => by_mode!(mode, int_to_half, 3, [0, 1, 2, 3]),
        },
        Routine::F16cHalfToInt(dst, mode) => match dst {
            ScalarType::Char => by_mode!(mode, half_to_int, 0, [0x08, 0x09, 0x0a, 0x0b]),
            ScalarType::UChar => by_mode!(mode, half_to_int, 1, [0x08, 0x09, 0x0a, 0x0b]),
            ScalarType::Short => by_mode!(mode, half_to_int, 2, [0x08, 0x09, 0x0a, 0x0b]),
            ScalarType::UShort => by_mode!(mode, half_to_int, 3, [0x08, 0x09, 0x0a, 0x0b]),
            ScalarType::Int => by_mode!(mode, half_to_int, 4, [0x08, 0x09, 0x0a, 0x0b]),
            ScalarType::UInt => by_mode!(mode, half_to_int, 5, [0x08, 0x09, 0x0a, 0x0b]),
            _ => return None,
        },
    };
    Some(f as *const u8)
}

/// char (`SRC` 0), uchar (1), short (2) or ushort (3) -> half, `n` elements (a multiple of
/// [`GRANULE`]): each widened to 32 bits and converted to float (exact: every such value is a
/// float), then `vcvtps2ph` with the immediate `MODE` (as in [`float_to_half`]), the one
/// rounding.
///
/// # Safety
/// As [`float_to_half`] (AVX2 as well: the JIT takes the routine only for AVX2 flag sets), with
/// `n` or `2 * n` source bytes and `2 * n` destination bytes.
unsafe extern "C" fn int_to_half<const SRC: u8, const MODE: i32>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
) {
    // SAFETY: the caller's contract above.
    unsafe { int_to_half_f16c::<SRC, MODE>(src, dst, n) }
}

#[target_feature(enable = "avx2,f16c")]
unsafe fn int_to_half_f16c<const SRC: u8, const MODE: i32>(src: *const u8, dst: *mut u8, n: usize) {
    debug_assert_eq!(n % GRANULE, 0);
    let bytes = if SRC < 2 { 1 } else { 2 };
    let mut i = 0;
    while i < n {
        for k in 0..4 {
            // SAFETY: i + 8 * k + 8 <= n (n is a multiple of 32): the 8 or 16 bytes read lie
            // within the `bytes * n` readable source bytes and the 16 written within the `2 * n`
            // destination bytes (the caller's contract); the loads and stores are unaligned.
            unsafe {
                let at = i + 8 * k;
                let p = src.add(bytes * at);
                let wide = match SRC {
                    0 => _mm256_cvtepi8_epi32(_mm_loadl_epi64(p.cast::<__m128i>())),
                    1 => _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast::<__m128i>())),
                    2 => _mm256_cvtepi16_epi32(_mm_loadu_si128(p.cast::<__m128i>())),
                    _ => _mm256_cvtepu16_epi32(_mm_loadu_si128(p.cast::<__m128i>())),
                };
                let h = _mm256_cvtps_ph::<MODE>(_mm256_cvtepi32_ps(wide));
                _mm_storeu_si128(dst.add(2 * at).cast::<__m128i>(), h);
            }
        }
        i += GRANULE;
    }
}

/// float -> half, `n` elements (a multiple of [`GRANULE`]), rounding as `vcvtps2ph`'s immediate
/// `MODE` says (0 nearest-even, 1 down, 2 up, 3 toward zero).
///
/// # Safety
/// The CPU has F16C and AVX ([`detected`]: the JIT installs no kernel calling this otherwise);
/// `src` is readable for `4 * n` bytes and `dst` writable for `2 * n`, as a kernel's buffers
/// are for its whole granules.
unsafe extern "C" fn float_to_half<const MODE: i32>(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: the caller's contract above.
    unsafe { float_to_half_f16c::<MODE>(src, dst, n) }
}

#[target_feature(enable = "avx,f16c")]
unsafe fn float_to_half_f16c<const MODE: i32>(src: *const u8, dst: *mut u8, n: usize) {
    debug_assert_eq!(n % GRANULE, 0);
    let mut i = 0;
    while i < n {
        // SAFETY: i + 32 <= n (n is a multiple of 32), so every load reads within the
        // `4 * n` readable source bytes and every store writes within the `2 * n` destination
        // bytes (the caller's contract); the intrinsics take unaligned pointers.
        unsafe {
            let s = src.add(4 * i).cast::<f32>();
            let d = dst.add(2 * i).cast::<__m128i>();
            let h0 = _mm256_cvtps_ph::<MODE>(_mm256_loadu_ps(s));
            let h1 = _mm256_cvtps_ph::<MODE>(_mm256_loadu_ps(s.add(8)));
            let h2 = _mm256_cvtps_ph::<MODE>(_mm256_loadu_ps(s.add(16)));
            let h3 = _mm256_cvtps_ph::<MODE>(_mm256_loadu_ps(s.add(24)));
            _mm_storeu_si128(d, h0);
            _mm_storeu_si128(d.add(1), h1);
            _mm_storeu_si128(d.add(2), h2);
            _mm_storeu_si128(d.add(3), h3);
        }
        i += GRANULE;
    }
}

/// half -> char (`DST` 0), uchar (1), short (2), ushort (3), int (4) or uint (5), `n` elements
/// (a multiple of [`GRANULE`]), rounding by `vroundps`'s immediate `MODE` (0x08 nearest-even,
/// 0x09 down, 0x0a up, 0x0b toward zero; exceptions suppressed), under OpenCL's rules: the
/// value clamped to the destination's range, NaN to 0.
///
/// # Safety
/// As [`float_to_half`] (AVX2 as well), with `2 * n` source bytes and `n * size` destination
/// bytes.
unsafe extern "C" fn half_to_int<const DST: u8, const MODE: i32>(
    src: *const u8,
    dst: *mut u8,
    n: usize,
) {
    // SAFETY: the caller's contract above.
    unsafe { half_to_int_f16c::<DST, MODE>(src, dst, n) }
}

#[target_feature(enable = "avx2,f16c")]
unsafe fn half_to_int_f16c<const DST: u8, const MODE: i32>(src: *const u8, dst: *mut u8, n: usize) {
    debug_assert_eq!(n % GRANULE, 0);
    let (lo, hi, size) = match DST {
        0 => (-128.0, 127.0, 1),
        1 => (0.0, 255.0, 1),
        2 => (-32768.0, 32767.0, 2),
        3 => (0.0, 65535.0, 2),
        // Only an infinity lies beyond ±65504: clamped to ±65536, it is told apart below.
        4 => (-65536.0, 65536.0, 4),
        _ => (0.0, 65536.0, 4),
    };
    let (beyond_max, beyond_min) = (_mm256_set1_epi32(65536), _mm256_set1_epi32(-65536));
    let (max, min) = match DST {
        4 => (_mm256_set1_epi32(i32::MAX), _mm256_set1_epi32(i32::MIN)),
        _ => (_mm256_set1_epi32(-1), _mm256_setzero_si256()),
    };
    let (lo, hi) = (_mm256_set1_ps(lo), _mm256_set1_ps(hi));
    let mut i = 0;
    while i < n {
        for k in 0..4 {
            let at = i + 8 * k;
            // SAFETY: at + 8 <= n (n is a multiple of 32): the 16 bytes read lie within the
            // `2 * n` readable source bytes and the `8 * size` written within the `size * n`
            // destination bytes (the caller's contract); loads and stores are unaligned.
            unsafe {
                let f = _mm256_cvtph_ps(_mm_loadu_si128(src.add(2 * at).cast::<__m128i>()));
                let r = _mm256_round_ps::<MODE>(f);
                // Ordered (not NaN) lanes: all ones. maxps gives `lo` for a NaN lane; the mask
                // then makes it 0.
                let ordered = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_ORD_Q>(r, r));
                let clamped = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
                let mut v = _mm256_and_si256(_mm256_cvttps_epi32(clamped), ordered);
                if DST >= 4 {
                    // ±infinity: the destination's MAX and MIN (uint: 0xffffffff and 0).
                    let up = _mm256_cmpeq_epi32(v, beyond_max);
                    let down = _mm256_cmpeq_epi32(v, beyond_min);
                    v = _mm256_blendv_epi8(_mm256_blendv_epi8(v, max, up), min, down);
                }
                let q = dst.add(size * at);
                let (v0, v1) = (_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
                match DST {
                    0 => {
                        let w = _mm_packs_epi32(v0, v1);
                        _mm_storel_epi64(q.cast::<__m128i>(), _mm_packs_epi16(w, w));
                    }
                    1 => {
                        let w = _mm_packs_epi32(v0, v1);
                        _mm_storel_epi64(q.cast::<__m128i>(), _mm_packus_epi16(w, w));
                    }
                    2 => _mm_storeu_si128(q.cast::<__m128i>(), _mm_packs_epi32(v0, v1)),
                    3 => _mm_storeu_si128(q.cast::<__m128i>(), _mm_packus_epi32(v0, v1)),
                    _ => _mm256_storeu_si256(q.cast::<__m256i>(), v),
                }
            }
        }
        i += GRANULE;
    }
}

/// half -> float, `n` elements (a multiple of [`GRANULE`]).
///
/// # Safety
/// As [`float_to_half`], with `2 * n` source bytes and `4 * n` destination bytes.
unsafe extern "C" fn half_to_float(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: the caller's contract above.
    unsafe { half_to_float_f16c(src, dst, n) }
}

#[target_feature(enable = "avx,f16c")]
unsafe fn half_to_float_f16c(src: *const u8, dst: *mut u8, n: usize) {
    debug_assert_eq!(n % GRANULE, 0);
    let mut i = 0;
    while i < n {
        // SAFETY: as in `float_to_half_f16c`, with the byte counts swapped.
        unsafe {
            let s = src.add(2 * i).cast::<__m128i>();
            let d = dst.add(4 * i).cast::<f32>();
            let f0 = _mm256_cvtph_ps(_mm_loadu_si128(s));
            let f1 = _mm256_cvtph_ps(_mm_loadu_si128(s.add(1)));
            let f2 = _mm256_cvtph_ps(_mm_loadu_si128(s.add(2)));
            let f3 = _mm256_cvtph_ps(_mm_loadu_si128(s.add(3)));
            _mm256_storeu_ps(d, f0);
            _mm256_storeu_ps(d.add(8), f1);
            _mm256_storeu_ps(d.add(16), f2);
            _mm256_storeu_ps(d.add(24), f3);
        }
        i += GRANULE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The routines against the reference on hand-picked halves and floats (the sweeps cover
    /// every input through the kernels).
    #[test]
    fn routines_give_the_references_bits() {
        if !detected() {
            eprintln!("NOT RUN: this CPU has no F16C");
            return;
        }
        let floats: Vec<u32> = [
            0x0000_0000u32,
            0x8000_0000,
            0x3f80_0000,
            0x477f_f000, // 65520: rounds to infinity nearest-even, to 65504 toward zero
            0x477f_efff,
            0x3380_0000, // 2^-24, the smallest half subnormal
            0x3300_0001, // just above half of it
            0x7f80_0001, // signalling NaN
            0xffc1_2345,
            0x7f80_0000,
            0x0000_0001,
            0xc77f_f000,
        ]
        .into_iter()
        .cycle()
        .take(GRANULE)
        .collect();
        let src: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
        for rounding in [Rounding::Rte, Rounding::Rtn, Rounding::Rtp, Rounding::Rtz] {
            let mut dst = vec![0u8; 2 * GRANULE];
            let f = address(Routine::F16cFloatToHalf(rounding)).unwrap();
            // SAFETY: F16C was detected; the buffers hold GRANULE elements.
            unsafe {
                let f: RoutineFn = std::mem::transmute(f);
                f(src.as_ptr(), dst.as_mut_ptr(), GRANULE);
            }
            let conv = crate::request::Request::parse(
                &format!("convert_half_{rounding}(float)"),
                crate::Extensions::with_fp16(),
            )
            .unwrap();
            let crate::request::Request::Convert(conv) = conv else {
                unreachable!()
            };
            for (k, x) in floats.iter().enumerate() {
                let want = crate::reference::convert_element(&conv, Rounding::Rte, u64::from(*x));
                let got = u16::from_le_bytes([dst[2 * k], dst[2 * k + 1]]);
                assert_eq!(u64::from(got), want.bits, "{rounding}: {x:#010x}");
            }
        }
        // Every char, uchar, short and ushort in every mode, against the reference.
        for src in SmallInt::ALL {
            let bytes = if matches!(src, SmallInt::Char | SmallInt::UChar) {
                1
            } else {
                2
            };
            let count = 1usize << (8 * bytes);
            let input: Vec<u8> = (0..count)
                .flat_map(|v| (v as u16).to_le_bytes()[..bytes].to_vec())
                .collect();
            for rounding in [Rounding::Rte, Rounding::Rtn, Rounding::Rtp, Rounding::Rtz] {
                let mut out = vec![0u8; 2 * count];
                let f = address(Routine::F16cSmallIntToHalf(src, rounding)).unwrap();
                // SAFETY: F16C and AVX2 were detected; 256 and 65,536 are multiples of GRANULE.
                unsafe {
                    let f: RoutineFn = std::mem::transmute(f);
                    f(input.as_ptr(), out.as_mut_ptr(), count);
                }
                let name = format!("convert_half_{rounding}({})", src.name());
                let crate::request::Request::Convert(conv) =
                    crate::request::Request::parse(&name, crate::Extensions::with_fp16()).unwrap()
                else {
                    unreachable!()
                };
                for v in 0..count {
                    let want = crate::reference::convert_element(&conv, Rounding::Rte, v as u64);
                    let got = u16::from_le_bytes([out[2 * v], out[2 * v + 1]]);
                    assert_eq!(u64::from(got), want.bits, "{name}: {v:#x}");
                }
            }
        }
        // Every half into every destination of half_to_int in every mode, against the
        // reference's `_sat` and plain conversions (the same bits).
        let halves: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
        for dst in crate::routine::HALF_TO_INT {
            for rounding in [Rounding::Rte, Rounding::Rtn, Rounding::Rtp, Rounding::Rtz] {
                let size = dst.bytes();
                let mut out = vec![0u8; size * 65536];
                let f = address(Routine::F16cHalfToInt(dst, rounding)).unwrap();
                // SAFETY: F16C and AVX2 were detected; 65,536 is a multiple of GRANULE.
                unsafe {
                    let f: RoutineFn = std::mem::transmute(f);
                    f(halves.as_ptr(), out.as_mut_ptr(), 65536);
                }
                for sat in ["", "_sat"] {
                    let name = format!("convert_{}{sat}_{rounding}(half)", dst.name());
                    let crate::request::Request::Convert(conv) =
                        crate::request::Request::parse(&name, crate::Extensions::with_fp16())
                            .unwrap()
                    else {
                        unreachable!()
                    };
                    for h in 0..=u16::MAX {
                        let want =
                            crate::reference::convert_element(&conv, Rounding::Rte, u64::from(h));
                        let k = size * usize::from(h);
                        let mut bytes = [0u8; 8];
                        bytes[..size].copy_from_slice(&out[k..k + size]);
                        let got = u64::from_le_bytes(bytes);
                        let mask = if size == 8 {
                            u64::MAX
                        } else {
                            (1u64 << (8 * size)) - 1
                        };
                        assert_eq!(got, want.bits & mask, "{name}: {h:#06x}");
                    }
                }
            }
        }
        // Every half through half_to_float, against the reference.
        let halves: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
        let mut floats = vec![0u8; 4 * 65536];
        let f = address(Routine::F16cHalfToFloat).unwrap();
        // SAFETY: F16C was detected; the buffers hold 65,536 elements, a multiple of GRANULE.
        unsafe {
            let f: RoutineFn = std::mem::transmute(f);
            f(halves.as_ptr(), floats.as_mut_ptr(), 65536);
        }
        let crate::request::Request::Convert(conv) =
            crate::request::Request::parse("convert_float(half)", crate::Extensions::with_fp16())
                .unwrap()
        else {
            unreachable!()
        };
        for h in 0..=u16::MAX {
            let want = crate::reference::convert_element(&conv, Rounding::Rte, u64::from(h));
            let k = 4 * usize::from(h);
            let got = u32::from_le_bytes(floats[k..k + 4].try_into().unwrap());
            assert_eq!(u64::from(got), want.bits, "{h:#06x}");
        }
    }
}
