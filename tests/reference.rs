//! The reference interpreter against SPEC.md: the seed examples verbatim, hand-computed tables
//! for every rule, buffer handling, and property checks on random inputs against an independent
//! exact (integer-only) model of IEEE rounding.
//!
//! Expected bits are written by hand (the derivation is in the comments); nothing here computes an
//! expected value with the host FPU. Host float literals only *build inputs* (`1e300f64.to_bits()`).

use clconv::buffer::BufferError;
use clconv::reference::{self, convert_element, ElementConverter, ElementResult, Report};
use clconv::Rounding::{self, Rte, Rtn, Rtp, Rtz};
use clconv::ScalarType::{self, *};
use clconv::{Conversion, Extensions, Layout, Reinterpretation, Request, VectorType, Width};
use std::cmp::Ordering;

const EXT: Extensions = Extensions::with_fp16();
/// The order of every per-mode table below.
const MODES: [Rounding; 4] = [Rte, Rtz, Rtp, Rtn];

fn conv(src: ScalarType, dst: ScalarType, sat: bool, r: Option<Rounding>) -> Conversion {
    Conversion::new(
        VectorType::scalar(src),
        VectorType::scalar(dst),
        sat,
        r,
        EXT,
    )
    .unwrap()
}

fn vconv(src: ScalarType, dst: ScalarType, w: Width, sat: bool, r: Option<Rounding>) -> Request {
    Conversion::new(
        VectorType::new(src, w),
        VectorType::new(dst, w),
        sat,
        r,
        EXT,
    )
    .unwrap()
    .into()
}

fn reinterp(src: VectorType, dst: VectorType) -> Request {
    Reinterpretation::new(src, dst, EXT).unwrap().into()
}

fn v(elem: ScalarType, lanes: usize) -> VectorType {
    VectorType::new(elem, Width::from_lanes(lanes).unwrap())
}

fn mask(t: ScalarType) -> u64 {
    u64::MAX >> (64 - t.bits())
}

fn one(
    src: ScalarType,
    dst: ScalarType,
    sat: bool,
    r: Option<Rounding>,
    bits: u64,
) -> ElementResult {
    convert_element(&conv(src, dst, sat, r), Rte, bits)
}

/// Checks a conversion to a floating type in each mode, both as a modifier (`_rtp`) and as the
/// static mode of a conversion without one; none of these may be implementation-defined.
fn float_table(src: ScalarType, dst: ScalarType, rows: &[(u64, [u64; 4])]) {
    for &(input, expected) in rows {
        for (mode, want) in MODES.into_iter().zip(expected) {
            for (r, static_mode) in [(Some(mode), Rte), (None, mode)] {
                let got = convert_element(&conv(src, dst, false, r), static_mode, input);
                assert_eq!(
                    got,
                    ElementResult {
                        bits: want,
                        implementation_defined: false
                    },
                    "convert_{dst}{}({src} {input:#x}) under static {static_mode}: got {:#x}, want {want:#x}",
                    r.map_or("", |r| r.suffix()),
                    got.bits
                );
            }
        }
    }
}

/// Checks a conversion to an integer type in each mode, with and without `_sat`; `expected` are
/// values, `flagged` says whether the result is out of range (implementation-defined w/o `_sat`).
fn int_table(src: ScalarType, dst: ScalarType, rows: &[(u64, [i128; 4], [bool; 4])]) {
    for &(input, expected, flagged) in rows {
        for ((mode, want), out) in MODES.into_iter().zip(expected).zip(flagged) {
            for sat in [false, true] {
                let got = one(src, dst, sat, Some(mode), input);
                assert_eq!(
                    got,
                    ElementResult {
                        bits: want as u64 & mask(dst),
                        implementation_defined: out && !sat
                    },
                    "convert_{dst}{}{}({src} {input:#x})",
                    if sat { "_sat" } else { "" },
                    mode.suffix()
                );
            }
        }
    }
}

fn le_bytes<const N: usize>(bits: &[u64]) -> Vec<u8> {
    bits.iter()
        .flat_map(|b| b.to_le_bytes()[..N].to_vec())
        .collect()
}

fn from_le<const N: usize>(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(N)
        .map(|c| {
            let mut raw = [0u8; 8];
            raw[..N].copy_from_slice(c);
            u64::from_le_bytes(raw)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// SPEC.md seed examples, verbatim.

#[test]
fn seed_uchar4_sat_rte_from_float4() {
    let req = vconv(Float, UChar, Width::W4, true, Some(Rte));
    let src: Vec<u8> = [-5.0f32, 254.5, 254.6, 1.2e9]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut dst = [0u8; 4];
    let report = reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(dst, [0, 254, 255, 255]);
    assert_eq!(
        report,
        Report {
            vectors: 1,
            implementation_defined: vec![]
        }
    );
}

#[test]
fn seed_ushort4_sat_from_short4_clamps_negatives_to_zero() {
    let req = vconv(Short, UShort, Width::W4, true, None);
    let src = le_bytes::<2>(&[0xffff, 0x8000, 0, 0x7fff]); // -1, -32768, 0, 32767
    let mut dst = [0u8; 8];
    reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(from_le::<2>(&dst), [0, 0, 0, 0x7fff]);
}

#[test]
fn seed_char4_sat_from_short4_clamps_to_char_range() {
    let req = vconv(Short, Char, Width::W4, true, None);
    // -129, 128, 300, -300, then -128, 127, 5, -5
    let src = le_bytes::<2>(&[0xff7f, 0x0080, 0x012c, 0xfed4, 0xff80, 0x007f, 5, 0xfffb]);
    let mut dst = [0u8; 8];
    reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(dst, [0x80, 0x7f, 0x7f, 0x80, 0x80, 0x7f, 5, 0xfb]);
}

#[test]
fn seed_int4_sat_from_float4_clamps_nan_to_zero_rtz() {
    let req = vconv(Float, Int, Width::W4, true, None);
    // 3e9, -3e9, NaN, -1.9; +inf, -inf, 2.9, -0.0
    let src = le_bytes::<4>(&[
        3e9f32.to_bits() as u64,
        (-3e9f32).to_bits() as u64,
        0x7fc0_0000,
        (-1.9f32).to_bits() as u64,
        0x7f80_0000,
        0xff80_0000,
        2.9f32.to_bits() as u64,
        0x8000_0000,
    ]);
    let mut dst = [0u8; 32];
    let report = reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(
        from_le::<4>(&dst),
        [
            0x7fff_ffff,
            0x8000_0000,
            0,
            0xffff_ffff,
            0x7fff_ffff,
            0x8000_0000,
            2,
            0
        ]
    );
    assert!(report.implementation_defined.is_empty(), "_sat defines all");
}

#[test]
fn seed_float4_rtp_from_int4_rounds_inexact_up() {
    let req = vconv(Int, Float, Width::W4, false, Some(Rtp));
    // 2^24+1 -> 2^24+2; 2^24+3 -> 2^24+4; -(2^24+1) -> -2^24 (up is toward zero here);
    // 2^25+3 (ulp 4 there) -> 2^25+4.
    let src = le_bytes::<4>(&[0x0100_0001, 0x0100_0003, 0xfeff_ffff, 0x0200_0003]);
    let mut dst = [0u8; 16];
    reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(
        from_le::<4>(&dst),
        [0x4b80_0001, 0x4b80_0002, 0xcb80_0000, 0x4c00_0001]
    );
}

#[test]
fn seed_int_rte_is_not_the_plus_half_idiom() {
    let req = vconv(Float, Int, Width::W1, false, Some(Rte));
    // 0.5f - 1ulp, -0.5, -1.5, -2.5, -3.5, 0.5
    let src = le_bytes::<4>(&[
        0x3eff_ffff,
        0xbf00_0000,
        0xbfc0_0000,
        0xc020_0000,
        0xc060_0000,
        0x3f00_0000,
    ]);
    let mut dst = [0u8; 24];
    reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    // 0, 0, -2, -2, -4, 0
    assert_eq!(
        from_le::<4>(&dst),
        [0, 0, 0xffff_fffe, 0xffff_fffe, 0xffff_fffc, 0]
    );
}

// ---------------------------------------------------------------------------------------------
// float -> integer.

/// ±0.5, ±1.5, ±2.5 and 0.5 - 1ulp, as (float, double, half) bits, with the rounded value in
/// rte, rtz, rtp, rtn.
const HALVES: [(u64, u64, u64, [i128; 4]); 7] = [
    (0x3f00_0000, 0x3fe0_0000_0000_0000, 0x3800, [0, 0, 1, 0]),
    (0xbf00_0000, 0xbfe0_0000_0000_0000, 0xb800, [0, 0, 0, -1]),
    (0x3fc0_0000, 0x3ff8_0000_0000_0000, 0x3e00, [2, 1, 2, 1]),
    (0xbfc0_0000, 0xbff8_0000_0000_0000, 0xbe00, [-2, -1, -1, -2]),
    (0x4020_0000, 0x4004_0000_0000_0000, 0x4100, [2, 2, 3, 2]),
    (0xc020_0000, 0xc004_0000_0000_0000, 0xc100, [-2, -2, -2, -3]),
    (0x3eff_ffff, 0x3fdf_ffff_ffff_ffff, 0x37ff, [0, 0, 1, 0]),
];

#[test]
fn float_to_int_every_mode_on_halves() {
    for (f, d, h, want) in HALVES {
        for dst in [Char, Short, Int, Long] {
            int_table(Float, dst, &[(f, want, [false; 4])]);
            int_table(Double, dst, &[(d, want, [false; 4])]);
            int_table(Half, dst, &[(h, want, [false; 4])]);
        }
        // Unsigned: the negative results are out of range (clamped to 0).
        let out = want.map(|x| x < 0);
        let clamped = want.map(|x| x.max(0));
        for dst in [UChar, UShort, UInt, ULong] {
            int_table(Float, dst, &[(f, clamped, out)]);
            int_table(Double, dst, &[(d, clamped, out)]);
            int_table(Half, dst, &[(h, clamped, out)]);
        }
    }
}

#[test]
fn float_to_int_default_is_rtz_whatever_the_static_mode() {
    for static_mode in MODES {
        let c = conv(Float, Int, false, None);
        assert_eq!(convert_element(&c, static_mode, 0x3fc0_0000).bits, 1); // 1.5
        assert_eq!(
            convert_element(&c, static_mode, 0xbfc0_0000).bits,
            0xffff_ffff
        ); // -1.5
    }
}

#[test]
fn nan_to_int_is_zero_and_implementation_defined_only_without_sat() {
    let nans: [(ScalarType, &[u64]); 3] = [
        (Float, &[0x7fc0_0000, 0xffc0_0000, 0x7f80_0001, 0xffff_ffff]),
        (
            Double,
            &[
                0x7ff8_0000_0000_0000,
                0xfff0_0000_0000_0001,
                0x7fff_ffff_ffff_ffff,
            ],
        ),
        (Half, &[0x7e00, 0xfc01, 0x7c01, 0xffff]),
    ];
    for (src, inputs) in nans {
        for &input in inputs {
            for dst in [Char, UChar, Short, UShort, Int, UInt, Long, ULong] {
                for r in [None, Some(Rte), Some(Rtz), Some(Rtp), Some(Rtn)] {
                    let plain = one(src, dst, false, r, input);
                    let sat = one(src, dst, true, r, input);
                    assert_eq!(
                        plain,
                        ElementResult {
                            bits: 0,
                            implementation_defined: true
                        }
                    );
                    assert_eq!(
                        sat,
                        ElementResult {
                            bits: 0,
                            implementation_defined: false
                        }
                    );
                }
            }
        }
    }
}

#[test]
fn out_of_range_float_to_int_is_clamped_and_flagged_only_without_sat() {
    const F: bool = false;
    const T: bool = true;
    // 3e9 -> int: INT_MAX in every mode.
    int_table(
        Float,
        Int,
        &[(3e9f32.to_bits() as u64, [0x7fff_ffff; 4], [T; 4])],
    );
    // -1.0 -> uint: 0, out of range; -0.5 -> uint: rounds to 0 (in range) except rtn (-1).
    int_table(Float, UInt, &[(0xbf80_0000, [0; 4], [T; 4])]);
    int_table(Float, UInt, &[(0xbf00_0000, [0; 4], [F, F, F, T])]);
    // 255.5 -> uchar: rte 256 (tie to even) and rtp 256 are out of range, rtz/rtn 255 are not.
    int_table(Float, UChar, &[(0x437f_8000, [255; 4], [T, F, T, F])]);
    // -128.5 -> char: rte -128 (even), rtz -128, rtp -128, rtn -129 (clamped to -128).
    int_table(Float, Char, &[(0xc300_8000, [-128; 4], [F, F, F, T])]);
    // ±inf -> long.
    int_table(Float, Long, &[(0x7f80_0000, [i64::MAX as i128; 4], [T; 4])]);
    int_table(Float, Long, &[(0xff80_0000, [i64::MIN as i128; 4], [T; 4])]);
    // 2^63 -> long is one past LONG_MAX; -2^63 is LONG_MIN exactly.
    int_table(Float, Long, &[(0x5f00_0000, [i64::MAX as i128; 4], [T; 4])]);
    int_table(Float, Long, &[(0xdf00_0000, [i64::MIN as i128; 4], [F; 4])]);
    // 2^64 -> ulong is one past ULONG_MAX; 2^64 - 2^40 fits exactly.
    int_table(
        Float,
        ULong,
        &[(0x5f80_0000, [u64::MAX as i128; 4], [T; 4])],
    );
    int_table(
        Float,
        ULong,
        &[(0x5f7f_ffff, [0xffff_ff00_0000_0000; 4], [F; 4])],
    );
    // double 2^64 - 2048 (the largest double below 2^64) -> ulong, exact.
    int_table(
        Double,
        ULong,
        &[(0x43ef_ffff_ffff_ffff, [0xffff_ffff_ffff_f800; 4], [F; 4])],
    );
    // 1e300 -> long, DBL_MAX -> uchar, -DBL_MAX -> ulong.
    int_table(
        Double,
        Long,
        &[(1e300f64.to_bits(), [i64::MAX as i128; 4], [T; 4])],
    );
    int_table(Double, UChar, &[(0x7fef_ffff_ffff_ffff, [255; 4], [T; 4])]);
    int_table(Double, ULong, &[(0xffef_ffff_ffff_ffff, [0; 4], [T; 4])]);
    // half: inf -> int, 65504 -> short (out of range) and -> ushort (0xffe0, in range).
    int_table(Half, Int, &[(0x7c00, [0x7fff_ffff; 4], [T; 4])]);
    int_table(Half, Short, &[(0x7bff, [0x7fff; 4], [T; 4])]);
    int_table(Half, UShort, &[(0x7bff, [0xffe0; 4], [F; 4])]);
    int_table(Half, Char, &[(0xfbff, [-128; 4], [T; 4])]);
}

#[test]
fn negative_zero_to_int_is_zero_and_defined() {
    for (src, bits) in [
        (Float, 0x8000_0000),
        (Double, 0x8000_0000_0000_0000),
        (Half, 0x8000),
    ] {
        for dst in [Char, UChar, Int, UInt, Long, ULong] {
            int_table(src, dst, &[(bits, [0; 4], [false; 4])]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// integer -> float.

#[test]
fn two_pow_24_plus_1_to_float_every_mode() {
    float_table(
        Int,
        Float,
        &[
            // 2^24+1: between 2^24 (0x4b800000) and 2^24+2 (0x4b800001), a tie, 2^24 is even.
            (
                0x0100_0001,
                [0x4b80_0000, 0x4b80_0000, 0x4b80_0001, 0x4b80_0000],
            ),
            // -(2^24+1)
            (
                0xfeff_ffff,
                [0xcb80_0000, 0xcb80_0000, 0xcb80_0000, 0xcb80_0001],
            ),
            // 2^24+3: tie between 2^24+2 (odd mantissa) and 2^24+4 (even).
            (
                0x0100_0003,
                [0x4b80_0002, 0x4b80_0001, 0x4b80_0002, 0x4b80_0001],
            ),
        ],
    );
    for src in [UInt, Long, ULong] {
        float_table(
            src,
            Float,
            &[(
                0x0100_0001,
                [0x4b80_0000, 0x4b80_0000, 0x4b80_0001, 0x4b80_0000],
            )],
        );
    }
}

#[test]
fn two_pow_53_plus_1_to_double_every_mode() {
    float_table(
        Long,
        Double,
        &[
            (
                0x0020_0000_0000_0001,
                [
                    0x4340_0000_0000_0000,
                    0x4340_0000_0000_0000,
                    0x4340_0000_0000_0001,
                    0x4340_0000_0000_0000,
                ],
            ),
            (
                0xffdf_ffff_ffff_ffff,
                [
                    0xc340_0000_0000_0000,
                    0xc340_0000_0000_0000,
                    0xc340_0000_0000_0000,
                    0xc340_0000_0000_0001,
                ],
            ),
            (
                0x0020_0000_0000_0003,
                [
                    0x4340_0000_0000_0002,
                    0x4340_0000_0000_0001,
                    0x4340_0000_0000_0002,
                    0x4340_0000_0000_0001,
                ],
            ),
        ],
    );
    float_table(
        ULong,
        Double,
        &[(
            0x0020_0000_0000_0001,
            [
                0x4340_0000_0000_0000,
                0x4340_0000_0000_0000,
                0x4340_0000_0000_0001,
                0x4340_0000_0000_0000,
            ],
        )],
    );
}

#[test]
fn integer_limits_to_float_every_mode() {
    // INT_MAX = 2^31 - 1 lies between 2^31 - 128 (0x4effffff) and 2^31 (0x4f000000), nearer 2^31.
    float_table(
        Int,
        Float,
        &[
            (
                0x7fff_ffff,
                [0x4f00_0000, 0x4eff_ffff, 0x4f00_0000, 0x4eff_ffff],
            ),
            (0x8000_0000, [0xcf00_0000; 4]),
            (
                0x8000_0001,
                [0xcf00_0000, 0xceff_ffff, 0xceff_ffff, 0xcf00_0000],
            ),
            (0, [0; 4]), // +0.0 in every mode, rtn included
        ],
    );
    // UINT_MAX: between 2^32 - 256 (0x4f7fffff) and 2^32 (0x4f800000).
    float_table(
        UInt,
        Float,
        &[(
            0xffff_ffff,
            [0x4f80_0000, 0x4f7f_ffff, 0x4f80_0000, 0x4f7f_ffff],
        )],
    );
    // LONG_MAX: between 2^63 - 2^39 (0x5effffff) and 2^63 (0x5f000000).
    float_table(
        Long,
        Float,
        &[
            (
                0x7fff_ffff_ffff_ffff,
                [0x5f00_0000, 0x5eff_ffff, 0x5f00_0000, 0x5eff_ffff],
            ),
            (0x8000_0000_0000_0000, [0xdf00_0000; 4]),
        ],
    );
    // ULONG_MAX: between 2^64 - 2^40 (0x5f7fffff) and 2^64 (0x5f800000).
    float_table(
        ULong,
        Float,
        &[(
            0xffff_ffff_ffff_ffff,
            [0x5f80_0000, 0x5f7f_ffff, 0x5f80_0000, 0x5f7f_ffff],
        )],
    );
    // To double: INT_MAX is exact; LONG_MAX between 2^63 - 2^10 and 2^63; ULONG_MAX likewise.
    float_table(Int, Double, &[(0x7fff_ffff, [0x41df_ffff_ffc0_0000; 4])]);
    float_table(
        Long,
        Double,
        &[(
            0x7fff_ffff_ffff_ffff,
            [
                0x43e0_0000_0000_0000,
                0x43df_ffff_ffff_ffff,
                0x43e0_0000_0000_0000,
                0x43df_ffff_ffff_ffff,
            ],
        )],
    );
    float_table(
        ULong,
        Double,
        &[(
            0xffff_ffff_ffff_ffff,
            [
                0x43f0_0000_0000_0000,
                0x43ef_ffff_ffff_ffff,
                0x43f0_0000_0000_0000,
                0x43ef_ffff_ffff_ffff,
            ],
        )],
    );
}

#[test]
fn integer_to_half_max_and_overflow_every_mode() {
    // HALF_MAX = 65504 (0x7bff); ulp 32 there; 65520 is the midpoint to 2^16 (which rte takes to
    // infinity: 65504's mantissa is odd).
    let rows = [
        (65504, [0x7bff; 4]),
        (65519, [0x7bff, 0x7bff, 0x7c00, 0x7bff]),
        (65520, [0x7c00, 0x7bff, 0x7c00, 0x7bff]),
        (70000, [0x7c00, 0x7bff, 0x7c00, 0x7bff]),
        (0xfffe_ee90, [0xfc00, 0xfbff, 0xfbff, 0xfc00]), // -70000
        (0xffff_0010, [0xfc00, 0xfbff, 0xfbff, 0xfc00]), // -65520
        // 2049 and 2051: ties at 11 bits of precision; 2048 = 0x6800.
        (2049, [0x6800, 0x6800, 0x6801, 0x6800]),
        (2051, [0x6802, 0x6801, 0x6802, 0x6801]),
        (0, [0; 4]),
    ];
    float_table(Int, Half, &rows);
    float_table(UShort, Half, &[(0xffff, [0x7c00, 0x7bff, 0x7c00, 0x7bff])]);
    float_table(ULong, Half, &[(u64::MAX, [0x7c00, 0x7bff, 0x7c00, 0x7bff])]);
    float_table(Long, Half, &[(1 << 63, [0xfc00, 0xfbff, 0xfbff, 0xfc00])]);
    float_table(Char, Half, &[(0x80, [0xd800; 4])]); // -128
}

// ---------------------------------------------------------------------------------------------
// float -> float.

#[test]
fn double_to_float_overflow_every_mode() {
    let inf = 0x7f80_0000;
    let max = 0x7f7f_ffff;
    let ninf = 0xff80_0000;
    let nmax = 0xff7f_ffff;
    float_table(
        Double,
        Float,
        &[
            (1e300f64.to_bits(), [inf, max, inf, max]),
            ((-1e300f64).to_bits(), [ninf, nmax, nmax, ninf]),
            (0x7fef_ffff_ffff_ffff, [inf, max, inf, max]), // DBL_MAX
            (0xffef_ffff_ffff_ffff, [ninf, nmax, nmax, ninf]),
            (0x47ef_ffff_e000_0000, [max; 4]), // FLT_MAX exactly
            // FLT_MAX + half an ulp: the tie goes to "2^128", i.e. infinity under rte.
            (0x47ef_ffff_f000_0000, [inf, max, inf, max]),
            (0x47ef_ffff_efff_ffff, [max, max, inf, max]),
            (0x7ff0_0000_0000_0000, [inf; 4]), // infinity is exact, even under rtz
            (0xfff0_0000_0000_0000, [ninf; 4]),
        ],
    );
}

#[test]
fn double_to_float_underflow_every_mode() {
    let min = 0x0000_0001; // 2^-149
    let nmin = 0x8000_0001;
    let nzero = 0x8000_0000;
    float_table(
        Double,
        Float,
        &[
            (1e-300f64.to_bits(), [0, 0, min, 0]),
            ((-1e-300f64).to_bits(), [nzero, nzero, nzero, nmin]),
            (0x0000_0000_0000_0001, [0, 0, min, 0]), // smallest double subnormal
            (0x8000_0000_0000_0001, [nzero, nzero, nzero, nmin]),
            (0x3690_0000_0000_0000, [0, 0, min, 0]), // 2^-150: tie, 0 is even
            (0x3698_0000_0000_0000, [min, 0, min, 0]), // 0.75 * 2^-149
            (0x36a8_0000_0000_0000, [2, 1, 2, 1]),   // 1.5 * 2^-149: tie, 2 is even
            (0x36a0_0000_0000_0000, [min; 4]),       // 2^-149 exactly
        ],
    );
}

#[test]
fn float_to_half_max_and_overflow_every_mode() {
    float_table(
        Float,
        Half,
        &[
            (0x477f_e000, [0x7bff; 4]),                      // 65504
            (0x477f_ef00, [0x7bff, 0x7bff, 0x7c00, 0x7bff]), // 65519
            (0x477f_f000, [0x7c00, 0x7bff, 0x7c00, 0x7bff]), // 65520
            (0x4788_b800, [0x7c00, 0x7bff, 0x7c00, 0x7bff]), // 70000
            (0x7f7f_ffff, [0x7c00, 0x7bff, 0x7c00, 0x7bff]), // FLT_MAX
            (0x7f80_0000, [0x7c00; 4]),                      // +inf
            (0xff80_0000, [0xfc00; 4]),                      // -inf
            (0xc77f_ef00, [0xfbff, 0xfbff, 0xfbff, 0xfc00]), // -65519
            (0xc788_b800, [0xfc00, 0xfbff, 0xfbff, 0xfc00]), // -70000
        ],
    );
    float_table(
        Double,
        Half,
        &[
            (0x40ef_fc00_0000_0000, [0x7bff; 4]), // 65504
            (0x40ef_fe00_0000_0000, [0x7c00, 0x7bff, 0x7c00, 0x7bff]), // 65520
            (0x7fef_ffff_ffff_ffff, [0x7c00, 0x7bff, 0x7c00, 0x7bff]), // DBL_MAX
            (0xffef_ffff_ffff_ffff, [0xfc00, 0xfbff, 0xfbff, 0xfc00]), // -DBL_MAX
        ],
    );
}

#[test]
fn double_to_half_rounds_once() {
    float_table(
        Double,
        Half,
        &[
            // 1 + 2^-11 + 2^-40: just above the tie between 1.0 and 1 + 2^-10. Rounding to float
            // first would lose 2^-40 and then tie to 1.0.
            (0x3ff0_0200_0000_1000, [0x3c01, 0x3c00, 0x3c01, 0x3c00]),
            // 2^-25 + 2^-60: just above half the smallest half subnormal.
            (0x3e60_0000_0002_0000, [0x0001, 0, 0x0001, 0]),
            // 2^-25 exactly: a tie, 0 is even.
            (0x3e60_0000_0000_0000, [0, 0, 0x0001, 0]),
        ],
    );
}

#[test]
fn half_subnormals() {
    float_table(
        Half,
        Float,
        &[
            (0x0001, [0x3380_0000; 4]), // 2^-24
            (0x8001, [0xb380_0000; 4]),
            (0x03ff, [0x387f_c000; 4]), // 1023 * 2^-24
            (0x0400, [0x3880_0000; 4]), // 2^-14, the smallest normal
            (0x7bff, [0x477f_e000; 4]), // 65504
            (0x7c00, [0x7f80_0000; 4]),
        ],
    );
    float_table(Half, Double, &[(0x0001, [0x3e70_0000_0000_0000; 4])]);
    float_table(
        Float,
        Half,
        &[
            (0x3300_0000, [0, 0, 0x0001, 0]), // 2^-25: tie between 0 and 2^-24, 0 is even
            (0xb300_0000, [0x8000, 0x8000, 0x8000, 0x8001]),
            (0x3340_0000, [0x0001, 0, 0x0001, 0]), // 0.75 * 2^-24
            (0x33c0_0000, [0x0002, 0x0001, 0x0002, 0x0001]), // 1.5 * 2^-24: tie, 2 is even
            (0x3380_0000, [0x0001; 4]),            // 2^-24 exactly
            // 2^-14 - 2^-25: tie between 0x03ff (odd) and 0x0400.
            (0x387f_e000, [0x0400, 0x03ff, 0x0400, 0x03ff]),
            (0x0000_0001, [0, 0, 0x0001, 0]), // float's smallest subnormal
        ],
    );
}

#[test]
fn widening_is_exact() {
    float_table(
        Float,
        Double,
        &[
            (0x3f80_0000, [0x3ff0_0000_0000_0000; 4]),
            (0x0000_0001, [0x36a0_0000_0000_0000; 4]), // 2^-149
            (0x7f7f_ffff, [0x47ef_ffff_e000_0000; 4]),
            (0x7f80_0000, [0x7ff0_0000_0000_0000; 4]),
            (0xff80_0000, [0xfff0_0000_0000_0000; 4]),
        ],
    );
}

#[test]
fn negative_zero_everywhere() {
    let nz16 = 0x8000;
    let nz32 = 0x8000_0000;
    let nz64 = 0x8000_0000_0000_0000;
    float_table(Float, Double, &[(nz32, [nz64; 4])]);
    float_table(Double, Float, &[(nz64, [nz32; 4])]);
    float_table(Float, Half, &[(nz32, [nz16; 4])]);
    float_table(Double, Half, &[(nz64, [nz16; 4])]);
    float_table(Half, Float, &[(nz16, [nz32; 4])]);
    float_table(Half, Double, &[(nz16, [nz64; 4])]);
    for dst in [Half, Float, Double] {
        for src in [Char, Int, ULong] {
            float_table(src, dst, &[(0, [0; 4])]);
        }
    }
}

#[test]
fn nan_payloads_to_float() {
    float_table(
        Float,
        Double,
        &[
            (0x7f80_0001, [0x7ff8_0000_2000_0000; 4]), // sNaN becomes quiet
            (0xffc0_0001, [0xfff8_0000_2000_0000; 4]),
            (0x7fc0_0000, [0x7ff8_0000_0000_0000; 4]),
            (0x7fff_ffff, [0x7fff_ffff_e000_0000; 4]),
        ],
    );
    float_table(
        Double,
        Float,
        &[
            (0x7ff0_0000_0000_0001, [0x7fc0_0000; 4]), // payload below float's mantissa
            (0x7ff0_0000_2000_0000, [0x7fc0_0001; 4]),
            (0xfff7_ffff_ffff_ffff, [0xffff_ffff; 4]),
            (0x7ff8_0000_0000_0000, [0x7fc0_0000; 4]),
        ],
    );
    float_table(
        Float,
        Half,
        &[
            (0x7f80_2000, [0x7e01; 4]),
            (0x7fbf_ffff, [0x7fff; 4]),
            (0x7f80_0001, [0x7e00; 4]),
            (0xffc0_0000, [0xfe00; 4]),
        ],
    );
    float_table(Double, Half, &[(0x7ff4_0000_0000_0000, [0x7f00; 4])]);
    float_table(
        Half,
        Float,
        &[(0x7c01, [0x7fc0_2000; 4]), (0xfd00, [0xffe0_0000; 4])],
    );
    float_table(Half, Double, &[(0x7c01, [0x7ff8_0400_0000_0000; 4])]);
}

#[test]
fn same_type_is_the_identity_on_bits() {
    let rows: [(ScalarType, &[u64]); 5] = [
        (Float, &[0x7f80_0001, 0xffc0_0001, 0x8000_0000, 0x0000_0001]),
        (Double, &[0xfff0_0000_0000_0001, 0x8000_0000_0000_0000]),
        (Half, &[0x7c01, 0xfd00, 0x8000]),
        (Int, &[0x8000_0000, 0xffff_ffff]),
        (UChar, &[0xff]),
    ];
    for (t, inputs) in rows {
        for &input in inputs {
            let sats: &[bool] = if t.is_float() {
                &[false]
            } else {
                &[false, true]
            };
            for &sat in sats {
                for r in [None, Some(Rte), Some(Rtz), Some(Rtp), Some(Rtn)] {
                    for static_mode in MODES {
                        let got = convert_element(&conv(t, t, sat, r), static_mode, input);
                        assert_eq!(got.bits, input, "convert_{t}({t} {input:#x})");
                        assert!(!got.implementation_defined);
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// integer -> integer.

#[test]
fn int_to_int_wrap_and_sat() {
    // (source, destination, input bits, without _sat, with _sat)
    let rows: &[(ScalarType, ScalarType, u64, u64, u64)] = &[
        (Int, UChar, 300, 44, 255),
        (Int, UChar, 0xffff_ffff, 0xff, 0),                  // -1
        (UInt, Char, 200, 0xc8, 0x7f),                       // -56 wrapped, 127 saturated
        (Long, UInt, 0xffff_ffff_ffff_fffb, 0xffff_fffb, 0), // -5
        (ULong, Long, u64::MAX, u64::MAX, 0x7fff_ffff_ffff_ffff),
        (Char, ULong, 0xff, u64::MAX, 0), // -1
        (Char, UChar, 0x80, 0x80, 0),     // -128
        (UChar, Char, 0xff, 0xff, 0x7f),
        (Long, Int, 0x8000_0000_0000_0000, 0, 0x8000_0000),
        (Long, Int, 0x1_0000_0005, 5, 0x7fff_ffff),
        (Int, Short, 40000, 0x9c40, 0x7fff),
        (Int, Short, 0xffff_63c0, 0x63c0, 0x8000), // -40000
        (Short, Int, 0x8000, 0xffff_8000, 0xffff_8000),
        (UShort, Long, 0xffff, 0xffff, 0xffff),
        (ULong, UInt, 0x1_0000_0007, 7, 0xffff_ffff),
        (
            Int,
            Long,
            0x8000_0000,
            0xffff_ffff_8000_0000,
            0xffff_ffff_8000_0000,
        ),
        (Long, ULong, 1 << 63, 1 << 63, 0),
        (UInt, Int, 0x8000_0000, 0x8000_0000, 0x7fff_ffff),
        (Int, UInt, 0x8000_0000, 0x8000_0000, 0),
    ];
    for &(src, dst, input, wrapped, saturated) in rows {
        for r in [None, Some(Rte), Some(Rtz), Some(Rtp), Some(Rtn)] {
            for static_mode in MODES {
                for (sat, want) in [(false, wrapped), (true, saturated)] {
                    let got = convert_element(&conv(src, dst, sat, r), static_mode, input);
                    assert_eq!(
                        got,
                        ElementResult {
                            bits: want,
                            implementation_defined: false
                        },
                        "convert_{dst}{}({src} {input:#x})",
                        if sat { "_sat" } else { "" }
                    );
                }
            }
        }
    }
}

#[test]
fn bits_above_the_source_width_are_ignored() {
    assert_eq!(one(UChar, Int, false, None, 0xffff_ff05).bits, 5);
    assert_eq!(one(Float, Int, false, None, 0xdead_0000_3f80_0000).bits, 1);
}

// ---------------------------------------------------------------------------------------------
// Buffers: layouts, padding, the report, errors.

#[test]
fn aligned_vec3_ignores_input_padding_and_writes_zero_padding() {
    let req = vconv(Float, Int, Width::W3, false, None);
    let nan = 0x7fc0_0000;
    // [1.5, NaN, -2.5 | NaN padding], [3e9, 0.0, -1.0 | 7.0 padding]
    let src = le_bytes::<4>(&[
        0x3fc0_0000,
        nan,
        0xc020_0000,
        nan,
        3e9f32.to_bits() as u64,
        0,
        0xbf80_0000,
        0x40e0_0000,
    ]);
    let mut dst = [0xffu8; 32];
    let report = reference::evaluate(&req, Layout::Aligned, &src, &mut dst).unwrap();
    assert_eq!(
        from_le::<4>(&dst),
        [1, 0, 0xffff_fffe, 0, 0x7fff_ffff, 0, 0xffff_ffff, 0]
    );
    assert_eq!(
        report,
        Report {
            vectors: 2,
            implementation_defined: vec![1, 4]
        }
    );

    // The same values packed: three per vector, indices without padding slots.
    let src = le_bytes::<4>(&[
        0x3fc0_0000,
        nan,
        0xc020_0000,
        3e9f32.to_bits() as u64,
        0,
        0xbf80_0000,
    ]);
    let mut dst = [0xffu8; 24];
    let report = reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(
        from_le::<4>(&dst),
        [1, 0, 0xffff_fffe, 0x7fff_ffff, 0, 0xffff_ffff]
    );
    assert_eq!(report.implementation_defined, vec![1, 3]);
}

#[test]
fn report_indices_count_elements_across_vectors() {
    let req = vconv(Double, UChar, Width::W4, false, Some(Rte));
    let nan = 0x7ff8_0000_0000_0000;
    let src = le_bytes::<8>(&[
        0,
        0x406f_e000_0000_0000, // 255.0
        0x4070_0000_0000_0000, // 256.0: out of range
        0x3ff8_0000_0000_0000, // 1.5 -> 2
        nan,
        0xbff0_0000_0000_0000, // -1.0: out of range
        0x3fe0_0000_0000_0000, // 0.5 -> 0
        0x4004_0000_0000_0000, // 2.5 -> 2
    ]);
    let mut dst = [0u8; 8];
    let report = reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(dst, [0, 255, 255, 2, 0, 0, 0, 2]);
    assert_eq!(report.implementation_defined, vec![2, 4, 5]);
    assert_eq!(report.vectors, 2);
}

#[test]
fn evaluate_with_mode_applies_the_static_mode_to_float_destinations_only() {
    let to_float = vconv(Int, Float, Width::W2, false, None);
    let src = le_bytes::<4>(&[0x0100_0001, 0xfeff_ffff]);
    let mut dst = [0u8; 8];
    for (mode, want) in MODES.into_iter().zip([
        [0x4b80_0000, 0xcb80_0000],
        [0x4b80_0000, 0xcb80_0000],
        [0x4b80_0001, 0xcb80_0000],
        [0x4b80_0000, 0xcb80_0001],
    ]) {
        reference::evaluate_with_mode(&to_float, Layout::Packed, mode, &src, &mut dst).unwrap();
        assert_eq!(from_le::<4>(&dst), want, "{mode}");
    }
    // An explicit modifier wins over the static mode.
    let rtz = vconv(Int, Float, Width::W2, false, Some(Rtz));
    reference::evaluate_with_mode(&rtz, Layout::Packed, Rtp, &src, &mut dst).unwrap();
    assert_eq!(from_le::<4>(&dst), [0x4b80_0000, 0xcb80_0000]);
    // Integer destinations stay rtz.
    let to_int = vconv(Float, Int, Width::W2, false, None);
    let src = le_bytes::<4>(&[0x3fc0_0000, 0xbfc0_0000]); // 1.5, -1.5
    reference::evaluate_with_mode(&to_int, Layout::Packed, Rtp, &src, &mut dst).unwrap();
    assert_eq!(from_le::<4>(&dst), [1, 0xffff_ffff]);
}

#[test]
fn every_width_and_element_size_pair_round_trips_through_buffers() {
    // uchar -> T -> uchar for every type and width: exercises each buffer loop instance. The
    // 8-bit floats hold 0..128 only in part (tests/formats.rs converts them by hand).
    let holds_0_to_127 = |t: &ScalarType| !matches!(t, ScalarType::Fp8E4M3 | ScalarType::Fp8E5M2);
    for t in ScalarType::ALL.into_iter().filter(holds_0_to_127) {
        for w in Width::ALL {
            for layout in [Layout::Packed, Layout::Aligned] {
                let stride = layout.stride(w);
                let values: Vec<u64> = (0..3 * stride as u64).map(|i| i * 37 % 128).collect();
                let src = le_bytes::<1>(&values);
                let mut mid = vec![0u8; values.len() * t.bytes()];
                let there = vconv(UChar, t, w, false, None);
                reference::evaluate(&there, layout, &src, &mut mid).unwrap();
                let mut back = vec![0xffu8; values.len()];
                let again = vconv(t, UChar, w, true, None);
                let report = reference::evaluate(&again, layout, &mid, &mut back).unwrap();
                assert_eq!(report.vectors, 3);
                let want: Vec<u8> = values
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| if i % stride < w.lanes() { x as u8 } else { 0 })
                    .collect();
                assert_eq!(back, want, "{t}{} {}", w.lanes(), layout.name());
            }
        }
    }
}

#[test]
fn buffer_errors_are_errors_not_panics() {
    let req = vconv(Float, UChar, Width::W4, true, Some(Rte));
    let mut dst = [0xaau8; 4];
    assert!(matches!(
        reference::evaluate(&req, Layout::Packed, &[0u8; 15], &mut dst),
        Err(BufferError::RaggedSource { bytes: 15, .. })
    ));
    assert!(matches!(
        reference::evaluate(&req, Layout::Packed, &[0u8; 32], &mut dst),
        Err(BufferError::DestinationSize { bytes: 4, .. })
    ));
    assert_eq!(dst, [0xaa; 4], "the destination is untouched on error");
    assert!(matches!(
        reference::evaluate(&req, Layout::Packed, &[0u8; 16], &mut [0u8; 5]),
        Err(BufferError::DestinationSize { .. })
    ));
    // A packed float3 buffer in the aligned layout is ragged.
    let v3 = vconv(Float, Int, Width::W3, false, None);
    assert!(matches!(
        reference::evaluate(&v3, Layout::Aligned, &[0u8; 12], &mut [0u8; 16]),
        Err(BufferError::RaggedSource { .. })
    ));
    assert!(matches!(
        reference::evaluate(&v3, Layout::Packed, &[0u8; 12], &mut [0u8; 16]),
        Err(BufferError::DestinationSize { .. })
    ));
    let r = reinterp(v(Float, 4), v(Char, 16));
    assert!(reference::evaluate(&r, Layout::Packed, &[0u8; 17], &mut [0u8; 16]).is_err());
    assert!(reference::evaluate(&r, Layout::Packed, &[0u8; 16], &mut [0u8; 15]).is_err());
    // Empty buffers are zero vectors.
    assert_eq!(
        reference::evaluate(&req, Layout::Packed, &[], &mut []),
        Ok(Report::default())
    );
}

// ---------------------------------------------------------------------------------------------
// as_<type><n>.

#[test]
fn as_float_from_int_keeps_the_bits() {
    let r = reinterp(v(Int, 1), v(Float, 1));
    let mut dst = [0u8; 4];
    reference::evaluate(&r, Layout::Packed, &[0x00, 0x00, 0x80, 0x3f], &mut dst).unwrap();
    assert_eq!(u32::from_le_bytes(dst), 0x3f80_0000); // 1.0f
}

#[test]
fn as_int3_from_float4_drops_lane_3() {
    let r = reinterp(v(Float, 4), v(Int, 3));
    let src = le_bytes::<4>(&[0x3f80_0000, 0xc000_0000, 0x7f80_0001, 0x4040_0000]);
    let mut packed = [0xffu8; 12];
    reference::evaluate(&r, Layout::Packed, &src, &mut packed).unwrap();
    assert_eq!(
        from_le::<4>(&packed),
        [0x3f80_0000, 0xc000_0000, 0x7f80_0001]
    );
    let mut aligned = [0xffu8; 16];
    reference::evaluate(&r, Layout::Aligned, &src, &mut aligned).unwrap();
    assert_eq!(
        from_le::<4>(&aligned),
        [0x3f80_0000, 0xc000_0000, 0x7f80_0001, 0]
    );
}

#[test]
fn as_float4_from_int3_padding_is_zero_packed_and_as_stored_aligned() {
    let r = reinterp(v(Int, 3), v(Float, 4));
    let mut dst = [0xffu8; 16];
    reference::evaluate(&r, Layout::Packed, &le_bytes::<4>(&[1, 2, 3]), &mut dst).unwrap();
    assert_eq!(from_le::<4>(&dst), [1, 2, 3, 0]);
    let stored = le_bytes::<4>(&[1, 2, 3, 0xdead_beef, 4, 5, 6, 0x7f80_0001]);
    let mut dst = [0u8; 32];
    reference::evaluate(&r, Layout::Aligned, &stored, &mut dst).unwrap();
    assert_eq!(dst.to_vec(), stored);
}

#[test]
fn as_same_size_vec3_writes_zero_padding_aligned() {
    let r = reinterp(v(Int, 3), v(Float, 3));
    let mut dst = [0xffu8; 16];
    let src = le_bytes::<4>(&[1, 2, 3, 0xdead_beef]);
    reference::evaluate(&r, Layout::Aligned, &src, &mut dst).unwrap();
    assert_eq!(from_le::<4>(&dst), [1, 2, 3, 0]);
    // char16 from float3: the packed operand's padding lane is zero bytes.
    let r = reinterp(v(Float, 3), v(Char, 16));
    let mut dst = [0xffu8; 16];
    let src = le_bytes::<4>(&[0x0403_0201, 0x0807_0605, 0x0c0b_0a09]);
    reference::evaluate(&r, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(dst, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0]);
}

#[test]
fn as_char16_from_float4_is_little_endian_bytes() {
    let r = reinterp(v(Float, 4), v(Char, 16));
    // 1.0f, -2.0f, sNaN 0x7f800001, -0.0f
    let src = le_bytes::<4>(&[0x3f80_0000, 0xc000_0000, 0x7f80_0001, 0x8000_0000]);
    let mut dst = [0u8; 16];
    reference::evaluate(&r, Layout::Packed, &src, &mut dst).unwrap();
    assert_eq!(
        dst,
        [0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 1, 0, 0x80, 0x7f, 0, 0, 0, 0x80]
    );
}

#[test]
fn as_passes_nan_payloads_and_negative_zero() {
    let r = reinterp(v(Double, 1), v(Float, 2));
    let mut dst = [0u8; 8];
    reference::evaluate(
        &r,
        Layout::Packed,
        &0x7ff0_0000_0000_0001u64.to_le_bytes(),
        &mut dst,
    )
    .unwrap();
    assert_eq!(from_le::<4>(&dst), [0x0000_0001, 0x7ff0_0000]);
    let r = reinterp(v(Float, 2), v(ULong, 1));
    reference::evaluate(
        &r,
        Layout::Packed,
        &le_bytes::<4>(&[0x7f80_0001, 0x8000_0000]),
        &mut dst,
    )
    .unwrap();
    assert_eq!(u64::from_le_bytes(dst), 0x8000_0000_7f80_0001);
    let r = reinterp(v(Half, 2), v(Float, 1));
    let mut dst = [0u8; 4];
    let report = reference::evaluate(
        &r,
        Layout::Packed,
        &le_bytes::<2>(&[0x7c01, 0x8000]),
        &mut dst,
    )
    .unwrap();
    assert_eq!(u32::from_le_bytes(dst), 0x8000_7c01);
    assert!(report.implementation_defined.is_empty());
}

#[test]
fn reinterpret_vector_on_one_vector() {
    let r = Reinterpretation::new(v(Float, 4), v(Int, 3), EXT).unwrap();
    let src = le_bytes::<4>(&[1, 2, 3, 4]);
    let mut dst = [0xffu8; 16];
    reference::reinterpret_vector(&r, Layout::Aligned, &src, &mut dst).unwrap();
    assert_eq!(from_le::<4>(&dst), [1, 2, 3, 0]);
    // A slice that is not exactly one vector is an error, never a panic.
    assert!(reference::reinterpret_vector(&r, Layout::Aligned, &src[..15], &mut dst).is_err());
    assert!(reference::reinterpret_vector(&r, Layout::Aligned, &src, &mut dst[..12]).is_err());
    let two = [src.clone(), src].concat();
    let mut dst2 = [0u8; 32];
    assert!(reference::reinterpret_vector(&r, Layout::Aligned, &two, &mut dst2).is_err());
}

// ---------------------------------------------------------------------------------------------
// Property checks: an independent exact model of rounding, on integers only.

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// An exact value: m * 2^e, or an infinity.
#[derive(Clone, Copy, Debug)]
enum Exact {
    NegInf,
    Fin { m: i128, e: i32 },
    PosInf,
}

fn cmp_exact(a: Exact, b: Exact) -> Ordering {
    use Exact::*;
    match (a, b) {
        (NegInf, NegInf) | (PosInf, PosInf) => Ordering::Equal,
        (NegInf, _) | (_, PosInf) => Ordering::Less,
        (_, NegInf) | (PosInf, _) => Ordering::Greater,
        (Fin { m: ma, e: ea }, Fin { m: mb, e: eb }) => {
            let (sa, sb) = (ma.signum(), mb.signum());
            if sa != sb {
                return sa.cmp(&sb);
            }
            if sa == 0 {
                return Ordering::Equal;
            }
            let mag = cmp_magnitude(ma.unsigned_abs(), ea, mb.unsigned_abs(), eb);
            if sa < 0 {
                mag.reverse()
            } else {
                mag
            }
        }
    }
}

fn cmp_magnitude(ma: u128, ea: i32, mb: u128, eb: i32) -> Ordering {
    let top_a = 128 - ma.leading_zeros() as i32 + ea;
    let top_b = 128 - mb.leading_zeros() as i32 + eb;
    if top_a != top_b {
        return top_a.cmp(&top_b);
    }
    // Same leading bit position: aligning shifts the one with the larger exponent left by at
    // most the other's bit length, so it fits.
    if ea >= eb {
        (ma << (ea - eb)).cmp(&mb)
    } else {
        ma.cmp(&(mb << (eb - ea)))
    }
}

/// (a + b) / 2 for two finite values whose exponents differ by little (neighbours).
fn midpoint(a: Exact, b: Exact) -> Exact {
    match (a, b) {
        (Exact::Fin { m: ma, e: ea }, Exact::Fin { m: mb, e: eb }) => {
            let e = ea.min(eb);
            Exact::Fin {
                m: (ma << (ea - e)) + (mb << (eb - e)),
                e: e - 1,
            }
        }
        _ => unreachable!("midpoint of infinities"),
    }
}

#[derive(Clone, Copy, Debug)]
struct Fmt {
    mbits: u32,
    ebits: u32,
}

const HALF: Fmt = Fmt {
    mbits: 10,
    ebits: 5,
};
const SINGLE: Fmt = Fmt {
    mbits: 23,
    ebits: 8,
};
const DOUBLE: Fmt = Fmt {
    mbits: 52,
    ebits: 11,
};

impl Fmt {
    fn width(self) -> u32 {
        1 + self.ebits + self.mbits
    }
    fn sign_bit(self) -> u64 {
        1 << (self.width() - 1)
    }
    fn emax_field(self) -> u64 {
        (1 << self.ebits) - 1
    }
    fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }
    fn is_nan(self, bits: u64) -> bool {
        (bits >> self.mbits) & self.emax_field() == self.emax_field()
            && bits & ((1 << self.mbits) - 1) != 0
    }
    fn decode(self, bits: u64) -> Exact {
        let neg = bits & self.sign_bit() != 0;
        let field = (bits >> self.mbits) & self.emax_field();
        let frac = (bits & ((1 << self.mbits) - 1)) as i128;
        if field == self.emax_field() {
            assert_eq!(frac, 0, "NaN has no exact value");
            return if neg { Exact::NegInf } else { Exact::PosInf };
        }
        let (m, e) = if field == 0 {
            (frac, 1 - self.bias() - self.mbits as i32)
        } else {
            (
                frac | 1 << self.mbits,
                field as i32 - self.bias() - self.mbits as i32,
            )
        };
        Exact::Fin {
            m: if neg { -m } else { m },
            e,
        }
    }
    /// Like decode, but an infinity is 2^(emax+1): the value IEEE's nearest rounding treats as
    /// the next one after MAX.
    fn decode_for_nearest(self, bits: u64) -> Exact {
        let neg = bits & self.sign_bit() != 0;
        match self.decode(bits) {
            Exact::PosInf | Exact::NegInf => Exact::Fin {
                m: if neg { -1 } else { 1 },
                e: self.bias() + 1,
            },
            fin => fin,
        }
    }
    fn up(self, bits: u64) -> Option<u64> {
        let inf = self.emax_field() << self.mbits;
        if bits == inf {
            None
        } else if bits & !self.sign_bit() == 0 {
            Some(1)
        } else if bits & self.sign_bit() == 0 {
            Some(bits + 1)
        } else {
            Some(bits - 1)
        }
    }
    fn down(self, bits: u64) -> Option<u64> {
        let ninf = self.sign_bit() | self.emax_field() << self.mbits;
        if bits == ninf {
            None
        } else if bits & !self.sign_bit() == 0 {
            Some(self.sign_bit() | 1)
        } else if bits & self.sign_bit() == 0 {
            Some(bits - 1)
        } else {
            Some(bits + 1)
        }
    }
}

/// Checks that `r` (bits in `fmt`) is `x` correctly rounded in `mode`. `zero_negative` is the
/// sign of x when x is zero (-0.0), which the result must keep.
fn check_rounded(
    fmt: Fmt,
    x: Exact,
    zero_negative: bool,
    mode: Rounding,
    r: u64,
) -> Result<(), String> {
    use Ordering::*;
    let x_negative = match x {
        Exact::NegInf => true,
        Exact::PosInf => false,
        Exact::Fin { m: 0, .. } => zero_negative,
        Exact::Fin { m, .. } => m < 0,
    };
    if fmt.is_nan(r) {
        return Err("NaN result".into());
    }
    let rv = fmt.decode(r);
    let is_zero = |v: Exact| matches!(v, Exact::Fin { m: 0, .. });
    let zero = Exact::Fin { m: 0, e: 0 };
    if is_zero(rv) && (r & fmt.sign_bit() != 0) != x_negative {
        return Err("zero with the wrong sign".into());
    }
    if is_zero(x) {
        return if is_zero(rv) {
            Ok(())
        } else {
            Err("zero not kept".into())
        };
    }
    let below = |n: Option<u64>| n.is_none_or(|n| cmp_exact(fmt.decode(n), x) == Less);
    let above = |n: Option<u64>| n.is_none_or(|n| cmp_exact(fmt.decode(n), x) == Greater);
    let ok = match mode {
        Rtp => cmp_exact(rv, x) != Less && below(fmt.down(r)),
        Rtn => cmp_exact(rv, x) != Greater && above(fmt.up(r)),
        Rtz if !x_negative => {
            cmp_exact(rv, x) != Greater && cmp_exact(rv, zero) != Less && above(fmt.up(r))
        }
        Rtz => cmp_exact(rv, x) != Less && cmp_exact(rv, zero) != Greater && below(fmt.down(r)),
        Rte => {
            let rn = fmt.decode_for_nearest(r);
            let even = r & 1 == 0;
            let up_ok = fmt.up(r).is_none_or(|n| {
                match cmp_exact(x, midpoint(rn, fmt.decode_for_nearest(n))) {
                    Less => true,
                    Equal => even,
                    Greater => false,
                }
            });
            let down_ok = fmt.down(r).is_none_or(|n| {
                match cmp_exact(x, midpoint(fmt.decode_for_nearest(n), rn)) {
                    Greater => true,
                    Equal => even,
                    Less => false,
                }
            });
            up_ok && down_ok
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("not correctly rounded: exact {x:?}, result {rv:?}"))
    }
}

fn fmt_of(t: ScalarType) -> Fmt {
    match t {
        Half => HALF,
        Float => SINGLE,
        Double => DOUBLE,
        _ => unreachable!(),
    }
}

/// A random integer of type `t` with a random magnitude (bit length), as bits.
fn random_int(rng: &mut Rng, t: ScalarType) -> u64 {
    let x = rng.next() >> rng.below(64);
    let x = if t.is_signed_integer() && rng.below(2) == 0 {
        x.wrapping_neg()
    } else {
        x
    };
    x & (u64::MAX >> (64 - t.bits()))
}

fn int_exact(t: ScalarType, bits: u64) -> Exact {
    let shift = 64 - t.bits();
    let m = if t.is_signed_integer() {
        ((bits << shift) as i64 >> shift) as i128
    } else {
        bits as i128
    };
    Exact::Fin { m, e: 0 }
}

/// A random finite float of `src` whose value is near `dst`'s range (overflow and underflow
/// included), often on or next to a rounding tie of `dst`.
fn random_float_near(rng: &mut Rng, src: Fmt, dst: Fmt) -> u64 {
    if rng.below(16) == 0 {
        loop {
            let bits = rng.next() & (u64::MAX >> (64 - src.width()));
            if !src.is_nan(bits) && (bits >> src.mbits) & src.emax_field() != src.emax_field() {
                return bits;
            }
        }
    }
    let dst_emin = 1 - dst.bias();
    let lo = dst_emin - dst.mbits as i32 - 3;
    let hi = dst.bias() + 2;
    let e = lo + rng.below((hi - lo + 1) as u64) as i32; // unbiased exponent of the value
    let field = (e + src.bias()) as u64;
    let mut frac = rng.next() & ((1 << src.mbits) - 1);
    // The bit position, in the source mantissa, of half a destination ulp at this exponent.
    let cut = src.mbits as i32 - dst.mbits as i32 + (dst_emin - e).max(0);
    if (1..=src.mbits as i32).contains(&cut) && rng.below(2) == 0 {
        let half = 1u64 << (cut - 1);
        let below = half - 1;
        frac &= !(half | below);
        frac |= match rng.below(4) {
            0 => half,           // exact tie
            1 => below,          // just below the tie
            2 => half | 1,       // just above the tie
            _ => rng.next() & 1, // (almost) representable
        };
    }
    let sign = if rng.below(2) == 0 { 0 } else { src.sign_bit() };
    sign | field << src.mbits | frac
}

#[test]
fn property_int_to_float_is_correctly_rounded() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let pairs = [
        (Int, Float),
        (UInt, Float),
        (Long, Float),
        (ULong, Float),
        (Long, Double),
        (ULong, Double),
        (Int, Half),
        (UShort, Half),
        (Short, Half),
        (Long, Half),
        (ULong, Half),
    ];
    for (src, dst) in pairs {
        for mode in MODES {
            let c = ElementConverter::new(&conv(src, dst, false, Some(mode)), Rte);
            for _ in 0..25_000 {
                let bits = random_int(&mut rng, src);
                let x = int_exact(src, bits);
                let r = c.convert(bits);
                assert!(!r.implementation_defined);
                if let Err(why) = check_rounded(fmt_of(dst), x, false, mode, r.bits) {
                    panic!(
                        "convert_{dst}{}({src} {bits:#x}) = {:#x}: {why}",
                        mode.suffix(),
                        r.bits
                    );
                }
            }
        }
    }
}

#[test]
fn property_float_narrowing_is_correctly_rounded() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for (src, dst) in [(Double, Float), (Float, Half), (Double, Half)] {
        let (sf, df) = (fmt_of(src), fmt_of(dst));
        for mode in MODES {
            // The mode both as a modifier and as the static mode.
            let explicit = ElementConverter::new(&conv(src, dst, false, Some(mode)), Rte);
            let static_mode = ElementConverter::new(&conv(src, dst, false, None), mode);
            for i in 0..100_000u32 {
                let bits = random_float_near(&mut rng, sf, df);
                let x = sf.decode(bits);
                let c = if i.is_multiple_of(2) {
                    &explicit
                } else {
                    &static_mode
                };
                let r = c.convert(bits);
                let negative = bits & sf.sign_bit() != 0;
                if let Err(why) = check_rounded(df, x, negative, mode, r.bits) {
                    panic!(
                        "convert_{dst}{}({src} {bits:#x}) = {:#x}: {why}",
                        mode.suffix(),
                        r.bits
                    );
                }
            }
        }
    }
}

/// The float -> integer rule computed on integers only: round m * 2^e by the mode, then clamp.
fn round_to_int(x: Exact, mode: Rounding) -> Option<i128> {
    let Exact::Fin { m, e } = x else {
        return None; // infinities: handled by the caller
    };
    if e >= 0 {
        return Some(m << e);
    }
    let s = -e;
    assert!(s < 126, "generator keeps exponents small");
    let floor = m >> s; // arithmetic shift: the floor for negatives too
    let rem = m - (floor << s); // in [0, 2^s)
    let half = 1i128 << (s - 1);
    Some(match mode {
        _ if rem == 0 => floor,
        Rtn => floor,
        Rtp => floor + 1,
        Rtz if m >= 0 => floor,
        Rtz => floor + 1,
        Rte if rem > half => floor + 1,
        Rte if rem < half => floor,
        Rte => floor + (floor & 1),
    })
}

#[test]
fn property_float_to_int_rounds_then_clamps() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let dsts = [Char, UChar, Short, UShort, Int, UInt, Long, ULong];
    for (src, inputs) in [
        // Every finite half and NaN/inf once each.
        (Half, (0..=0xffffu64).collect::<Vec<_>>()),
        (
            Float,
            (0..30_000)
                .map(|_| {
                    let e = rng.below(80); // value exponents -10 .. 69
                    (rng.next() & 0x8000_0000) | (117 + e) << 23 | (rng.next() & 0x7f_ffff)
                })
                .collect(),
        ),
        (
            Double,
            (0..30_000)
                .map(|_| {
                    let e = rng.below(80);
                    (rng.next() & (1 << 63)) | (1013 + e) << 52 | (rng.next() >> 12)
                })
                .collect(),
        ),
    ] {
        let f = fmt_of(src);
        for (i, &bits) in inputs.iter().enumerate() {
            let dst = dsts[i % dsts.len()];
            let (min, max) = (dst.int_min().unwrap(), dst.int_max().unwrap());
            let nan = f.is_nan(bits);
            for mode in MODES {
                let want = if nan {
                    None
                } else {
                    match f.decode(bits) {
                        Exact::PosInf => Some(i128::MAX),
                        Exact::NegInf => Some(i128::MIN),
                        x => round_to_int(x, mode),
                    }
                };
                let (value, out) = match want {
                    None => (0, true),
                    Some(v) => (v.clamp(min, max), v < min || v > max),
                };
                for sat in [false, true] {
                    let got = one(src, dst, sat, Some(mode), bits);
                    assert_eq!(
                        got,
                        ElementResult {
                            bits: value as u64 & mask(dst),
                            implementation_defined: out && !sat
                        },
                        "convert_{dst}{}{}({src} {bits:#x})",
                        if sat { "_sat" } else { "" },
                        mode.suffix()
                    );
                }
            }
        }
    }
}

#[test]
fn property_widening_is_exact_and_nan_rule_holds() {
    let mut rng = Rng(0x0bad_cafe_f00d_d00d);
    for (src, dst) in [(Half, Float), (Half, Double), (Float, Double)] {
        let (sf, df) = (fmt_of(src), fmt_of(dst));
        for mode in MODES {
            let c = ElementConverter::new(&conv(src, dst, false, Some(mode)), Rte);
            for _ in 0..20_000 {
                let bits = rng.next() & (u64::MAX >> (64 - sf.width()));
                let r = c.convert(bits).bits;
                if sf.is_nan(bits) {
                    // Quiet, same sign, payload shifted to the top of the wider mantissa.
                    let shift = df.mbits - sf.mbits;
                    let frac = bits & ((1 << sf.mbits) - 1);
                    let sign = if bits & sf.sign_bit() != 0 {
                        df.sign_bit()
                    } else {
                        0
                    };
                    let want =
                        sign | df.emax_field() << df.mbits | frac << shift | 1 << (df.mbits - 1);
                    assert_eq!(r, want, "{src} {bits:#x} -> {dst}");
                } else {
                    let (x, y) = (sf.decode(bits), df.decode(r));
                    assert_eq!(cmp_exact(x, y), Ordering::Equal, "{src} {bits:#x} -> {dst}");
                    assert_eq!(bits & sf.sign_bit() != 0, r & df.sign_bit() != 0);
                }
            }
        }
    }
}
