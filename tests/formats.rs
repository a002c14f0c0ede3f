//! bfloat16 and the OCP 8-bit floats (E4M3, E5M2): the spellings, and results computed by hand
//! from the formats' definitions, through the reference and through JIT kernels on every x86-64
//! flag set and both tiers.
//!
//! The definitions: bfloat16 is binary32's sign and 8-bit exponent with the top 7 fraction bits.
//! OCP "8-bit Floating Point Specification (OFP8)" rev. 1.0, table 1: E4M3 has bias 7, no
//! infinities, NaN S.1111.111, max normal S.1111.110 = 448, min normal S.0001.000 = 2^-6, min
//! subnormal S.0000.001 = 2^-9; E5M2 has bias 15, infinities S.11111.00, NaNs S.11111.{01,10,11},
//! max normal S.11110.11 = 57344, min normal 2^-14, min subnormal 2^-16. Section 5.2 (conversion
//! from wider formats): round to nearest even; beyond the largest finite value either saturate
//! or give NaN (E4M3) / infinity (E5M2). clconv's `_sat` is the saturating choice.

use clconv::{reference, Extensions, Request, RequestError, Rounding};

/// Converts the elements `src` (their bits) by `name` through the reference.
fn reference(name: &str, src: &[u64]) -> Vec<u64> {
    let Request::Convert(c) = Request::parse(name, Extensions::with_fp16()).unwrap() else {
        panic!("{name} is a conversion")
    };
    src.iter()
        .map(|&x| reference::convert_element(&c, Rounding::Rte, x).bits)
        .collect()
}

fn f(x: f32) -> u64 {
    u64::from(x.to_bits())
}

#[test]
fn float_to_e4m3_by_the_ocp_table() {
    let name = "convert_fp8e4m3(float)";
    let cases: [(f32, u64); 14] = [
        (1.0, 0x38),                         // 0.0111.000: 2^(7-7)
        (-2.0, 0xc0),                        // 1.1000.000
        (448.0, 0x7e),                       // max normal S.1111.110
        (464.0, 0x7e),         // halfway to 480 (S.1111.111 would be odd): to even, 448
        (465.0, 0x7f),         // beyond the halfway point: overflow, NaN
        (1.0e9, 0x7f),         // overflow: NaN (no infinity)
        (f32::INFINITY, 0x7f), // infinity: NaN
        (f32::NEG_INFINITY, 0xff), // with its sign
        (0.015625, 0x08),      // 2^-6: min normal S.0001.000
        (0.001953125, 0x01),   // 2^-9: min subnormal
        (0.0009765625, 0x00),  // 2^-10: half the min subnormal, a tie to even (0)
        (1.5 / 1024.0, 0x01),  // 1.5 * 2^-10: above the tie
        (-0.0, 0x80),          // the sign of zero is kept
        (f32::from_bits(0x7fc0_0001), 0x7f), // NaN: the only NaN, S.1111.111
    ];
    let got = reference(name, &cases.map(|(x, _)| f(x)));
    assert_eq!(got, cases.map(|(_, y)| y).to_vec());
}

#[test]
fn saturating_into_the_8_bit_floats_gives_the_largest_finite_value() {
    // SPV_EXT_float8's saturation: "out-of-range values and infinity are converted to largest
    // representable finite value"; NaN stays NaN.
    let inputs = [1.0e9, f32::NEG_INFINITY, 465.0, f32::NAN].map(f);
    assert_eq!(
        reference("convert_fp8e4m3_sat(float)", &inputs),
        [0x7e, 0xfe, 0x7e, 0x7f]
    );
    assert_eq!(
        reference("convert_fp8e5m2_sat(float)", &inputs),
        [0x7b, 0xfb, 0x5f, 0x7e] // 465 -> 448 (0.10111.11); NaN quiet: S.11111.10
    );
    assert_eq!(
        reference(
            "convert_bfloat_sat(float)",
            &[f(f32::MAX), f(f32::INFINITY)]
        ),
        [0x7f7f, 0x7f7f] // FLT_MAX rounds beyond bfloat16's max (0x7f7f): saturated
    );
}

#[test]
fn float_to_e5m2_by_the_ocp_table() {
    let name = "convert_fp8e5m2(float)";
    let cases: [(f32, u64); 8] = [
        (1.0, 0x3c),                         // 0.01111.00
        (57344.0, 0x7b),                     // max normal S.11110.11
        (61440.0, 0x7c), // halfway to 65536: to even, which is the overflow: infinity
        (61439.0, 0x7b), // below the halfway point
        (f32::INFINITY, 0x7c), // S.11111.00
        (1.0 / 16384.0, 0x04), // 2^-14: min normal
        (1.0 / 65536.0, 0x01), // 2^-16: min subnormal
        (f32::from_bits(0xffa0_0000), 0xff), // a NaN keeps its sign and payload, made quiet
    ];
    let got = reference(name, &cases.map(|(x, _)| f(x)));
    assert_eq!(got, cases.map(|(_, y)| y).to_vec());
    // Toward zero, an overflow is the largest finite value (IEEE-754 7.4).
    assert_eq!(reference("convert_fp8e5m2_rtz(float)", &[f(1.0e9)]), [0x7b]);
    assert_eq!(reference("convert_fp8e4m3_rtz(float)", &[f(1.0e9)]), [0x7e]);
}

#[test]
fn float_to_bfloat16_rounds_the_low_half_away() {
    let name = "convert_bfloat(float)";
    let cases: [(u32, u64); 7] = [
        (0x3f80_0000, 0x3f80), // 1.0
        (0x3f80_8000, 0x3f80), // a tie, kept bit even: down
        (0x3f81_8000, 0x3f82), // a tie, kept bit odd: up
        (0x3f80_8001, 0x3f81), // above the tie
        (0x7f7f_ffff, 0x7f80), // FLT_MAX: overflow to infinity
        (0x0000_8001, 0x0001), // a float subnormal: a bfloat16 subnormal
        (0xff81_0000, 0xffc1), // a signalling NaN is made quiet, sign and payload kept
    ];
    let got = reference(name, &cases.map(|(x, _)| u64::from(x)));
    assert_eq!(got, cases.map(|(_, y)| y).to_vec());
    assert_eq!(
        reference("convert_bfloat_rtz(float)", &[0x3f80_ffff]),
        [0x3f80]
    );
    assert_eq!(
        reference("convert_bfloat_rtp(float)", &[0x3f80_0001]),
        [0x3f81]
    );
    assert_eq!(
        reference("convert_bfloat_rtn(float)", &[0xbf80_0001]),
        [0xbf81]
    );
}

#[test]
fn the_narrow_formats_widen_exactly() {
    // E4M3 0x7e is 448, 0x01 is 2^-9, 0x7f NaN (quiet, its fraction 111 on top of float's).
    assert_eq!(
        reference("convert_float(fp8e4m3)", &[0x7e, 0x01, 0x7f, 0xff]),
        [f(448.0), f(0.001953125), 0x7ff0_0000, 0xfff0_0000]
    );
    // E5M2 0x7c is infinity, 0x7d a signalling NaN (made quiet), 0x03 three min subnormals.
    assert_eq!(
        reference("convert_float(fp8e5m2)", &[0x7c, 0x7d, 0x03]),
        [f(f32::INFINITY), 0x7fe0_0000, f(3.0 / 65536.0)]
    );
    // bfloat16 is float's upper half.
    assert_eq!(
        reference("convert_float(bfloat)", &[0x4049, 0x0001]),
        [0x4049_0000, 0x0001_0000]
    );
    // Through float into the integers: 448 saturates a char, truncates toward zero by default.
    assert_eq!(
        reference("convert_char_sat(fp8e4m3)", &[0x7e, 0xfe]),
        [0x7f, 0x80]
    );
    assert_eq!(reference("convert_int(bfloat)", &[0x4049]), [3]); // 3.140625
}

#[test]
fn the_narrow_formats_convert_among_themselves_with_one_rounding() {
    // bfloat16 1.0625 (0x3f88) to E5M2: 1.0625 lies between 1.0 and 1.25, below the halfway
    // point 1.125: 1.0. Half 0x3c80 (1.125) is that halfway point: to even (1.0, 0x3c).
    assert_eq!(reference("convert_fp8e5m2(bfloat)", &[0x3f88]), [0x3c]);
    assert_eq!(reference("convert_fp8e5m2(half)", &[0x3c80]), [0x3c]);
    // E4M3's max into E5M2: 448 = 1.75 * 2^8 is 0.10111.11.
    assert_eq!(reference("convert_fp8e5m2(fp8e4m3)", &[0x7e]), [0x5f]);
    // E5M2's 57344 into E4M3: beyond 448, NaN; saturated, 448.
    assert_eq!(reference("convert_fp8e4m3(fp8e5m2)", &[0x7b]), [0x7f]);
    assert_eq!(reference("convert_fp8e4m3_sat(fp8e5m2)", &[0x7b]), [0x7e]);
    // double -> bfloat16 rounds once: 1 + 2^-8 + 2^-40 is above bfloat16's halfway point
    // between 1 and 1 + 2^-7 (rounding to float first would make it the tie, then 1.0).
    let x = 1.0f64 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(
        reference("convert_bfloat(double)", &[x.to_bits()]),
        [0x3f81]
    );
    // Integers: 1000 into E4M3 is beyond 448.
    assert_eq!(reference("convert_fp8e4m3(int)", &[1000]), [0x7f]);
    assert_eq!(
        reference("convert_fp8e4m3_sat(int)", &[(-1000i32) as u32 as u64]),
        [0xfe]
    );
    assert_eq!(reference("convert_fp8e5m2(uchar)", &[255]), [0x5c]); // 256 = 2^8: 0.10111.00
}

#[test]
fn spellings_parse_print_and_refuse_as_documented() {
    let ext = Extensions::default();
    for (text, canonical) in [
        ("convert_bfloat4(float4)", "convert_bfloat4(float4)"),
        (
            "convert_fp8e4m3x4_sat_rtz(float4)",
            "convert_fp8e4m3x4_sat_rtz(float4)",
        ),
        ("convert_float16(fp8e5m2x16)", "convert_float16(fp8e5m2x16)"),
        ("as_fp8e4m3x2(ushort)", "as_fp8e4m3x2(ushort)"),
        (
            "intel_convert_bfloat162_as_ushort2(float2)",
            "convert_bfloat2_rte(float2)",
        ),
        (
            "intel_convert_as_bfloat16_float(ushort)",
            "convert_float(bfloat)",
        ),
    ] {
        let r = Request::parse(text, ext).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(r.to_string(), canonical);
        // The mangled name parses back to the same request.
        assert_eq!(
            Request::parse(&r.mangled(), ext).unwrap(),
            r,
            "{}",
            r.mangled()
        );
    }
    for bad in [
        "convert_fp8e4m34(float4)",     // the width of an fp8 type follows an x
        "convert_bfloat_satsrc(float)", // the float -> integer rules are not for floats
        "convert_half_sat(float)",      // OpenCL's float destinations have no _sat
        "intel_convert_bfloat16_as_ushort(int)", // the Intel function converts float
        "intel_convert_as_bfloat16_float(short)",
        "convert_fp8e5m2x3(float4)", // widths differ
    ] {
        assert!(
            Request::parse(bad, Extensions::with_fp16()).is_err(),
            "{bad}"
        );
    }
}

/// The JIT's kernels agree with the reference on the hand-computed inputs above, and on every
/// input of the 8- and 16-bit sources, at every width, on every x86-64 flag set and tier.
#[cfg(feature = "jit")]
#[test]
fn kernels_match_the_reference_on_every_flag_set() {
    use clconv::jit::{Jit, Tiering, X64Flags};
    use clconv::Layout;
    let names = [
        "convert_fp8e4m3x8(float8)",
        "convert_fp8e4m3x3_sat_rtp(float3)",
        "convert_fp8e5m2x16_rtn(float16)",
        "convert_bfloat4_sat(float4)",
        "convert_bfloat2_rtz(double2)",
        "convert_float16(fp8e4m3x16)",
        "convert_float4(bfloat4)",
        "convert_half8_rtz(fp8e5m2x8)",
        "convert_fp8e5m2x4(bfloat4)",
        "convert_uchar16_sat_rte(bfloat16)",
        "convert_long2(fp8e4m3x2)",
        "convert_bfloat8_rtp(int8)",
        "convert_fp8e4m3x4_sat(short4)",
        "convert_double3(fp8e5m2x3)",
        // half's widening sequence, which the 8-bit floats share (`small16_to_f32x4s`).
        "convert_float8(half8)",
        "convert_float3(half3)",
        "convert_short8_sat_rtz(half8)",
    ];
    let mut interesting: Vec<u64> = [
        1.0f32,
        448.0,
        464.0,
        465.0,
        1.0e9,
        57344.0,
        61440.0,
        0.0009765625,
        -0.0,
        3.0e38,
    ]
    .iter()
    .map(|&x| f(x))
    .collect();
    interesting.extend([
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0001,
        0xff81_0000,
        0x0000_8001,
    ]);
    // Every x86-64 flag set this CPU runs (the others are named on stderr); the host elsewhere.
    let flag_sets: &[X64Flags] = if cfg!(target_arch = "x86_64") {
        &X64Flags::ALL
    } else {
        &[X64Flags::Host]
    };
    for &flags in flag_sets {
        let Ok(jit) = Jit::with_options(flags, Extensions::with_fp16(), Rounding::Rte) else {
            eprintln!("formats on {}: NOT RUN (this CPU lacks it)", flags.name());
            continue;
        };
        for tiering in [Tiering::QuickOnly, Tiering::OptimisedOnly] {
            jit.set_tiering(tiering);
            for name in names {
                let request = Request::parse(name, Extensions::with_fp16()).unwrap();
                let src_t = request.src().elem;
                let lanes = request.src().width.storage_lanes();
                // Every bit pattern of the 8- and 16-bit sources; the interesting floats, and
                // a spread of patterns, for the others.
                let elements: Vec<u64> = if src_t.bits() <= 16 {
                    (0..1u64 << src_t.bits()).collect()
                } else if src_t.bits() == 32 {
                    let mut v = interesting.clone();
                    v.extend((0..4096u64).map(|i| i.wrapping_mul(0x9e37_79b9) & 0xffff_ffff));
                    v
                } else {
                    let mut v: Vec<u64> = interesting
                        .iter()
                        .map(|&x| f64::from(f32::from_bits(x as u32)).to_bits())
                        .collect();
                    v.extend((0..4096u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
                    v
                };
                let count = elements.len().div_ceil(lanes) * lanes;
                let mut src = Vec::new();
                for i in 0..count {
                    let x = elements[i % elements.len()];
                    src.extend_from_slice(&x.to_le_bytes()[..src_t.bytes()]);
                }
                let dst_len = count * request.dst().elem.bytes();
                let (mut want, mut got) = (vec![0u8; dst_len], vec![0u8; dst_len]);
                reference::evaluate(&request, Layout::Aligned, &src, &mut want).unwrap();
                let kernel = jit.compile_request(&request).unwrap();
                kernel.run_bytes(Layout::Aligned, &src, &mut got).unwrap();
                assert!(
                    want == got,
                    "{name} on {flags:?}, {tiering:?}: the kernel differs from the reference"
                );
            }
        }
    }
}

/// A rule no narrow format takes, given through `Conversion::with_rules` (as a front end
/// builds its requests), is dropped, not lowered into a shape no lowering has: the request is
/// the plain one and compiles (a tf32 `_relu` once reached an unreachable arm of the lowering).
#[test]
fn rules_on_narrow_formats_are_dropped_not_lowered() {
    use clconv::rules::{FloatResult, Rules};
    use clconv::{Conversion, ScalarType, VectorType};
    for dst in [
        ScalarType::Tf32,
        ScalarType::Fp4E2M1,
        ScalarType::Fp8E4M3Fnuz,
    ] {
        for float_result in [
            FloatResult::Relu,
            FloatResult::CanonicalNan,
            FloatResult::UnitInterval,
        ] {
            // tf32 and FP4 from float keep `_relu` (PTX's `cvt.rn.relu.tf32.f32`,
            // `cvt.rn.satfinite.relu.e2m1x2.f32`): from double not.
            let src = if matches!(dst, ScalarType::Tf32 | ScalarType::Fp4E2M1) {
                ScalarType::Double
            } else {
                ScalarType::Float
            };
            let plain = Conversion::new(
                VectorType::scalar(src),
                VectorType::scalar(dst),
                false,
                Some(Rounding::Rtz),
                Extensions::default(),
            )
            .unwrap();
            let ruled = plain.with_rules(Rules {
                float_result,
                ..Rules::OPENCL
            });
            assert_eq!(ruled, plain, "{dst:?} {float_result:?}");
            #[cfg(feature = "jit")]
            clconv::jit::Jit::new()
                .unwrap()
                .compile_request(&Request::Convert(ruled))
                .unwrap_or_else(|e| panic!("{ruled}: {e}"));
        }
    }
}

/// NVIDIA's E8M0 rules are the narrow formats' only rules: `_abs` into E8M0 from a float
/// (the magnitude's scale, zero giving 2^-127) and `_nancanon` out of E8M0 into a float. By
/// hand: -3 is 2^1.58..., toward +inf 2^2 (0x81); -0 gives 0x00; 3e38 rounds up past 2^127:
/// the NaN, or 0xfe under `_sat`; without `_abs`, -3 and 0 are E8M0's NaN. Every other rule on
/// a narrow format, and `_abs` anywhere else, is refused by name.
#[test]
fn e8m0_of_the_magnitude_and_its_canonical_nan() {
    let run = |name: &str, src: &[f32], want: &[u8]| {
        let request = Request::parse(name, Extensions::default()).unwrap();
        let bytes: Vec<u8> = src.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut got = vec![0u8; want.len()];
        clconv::reference::evaluate(&request, clconv::Layout::Packed, &bytes, &mut got).unwrap();
        assert_eq!(got, want, "{name} through the reference");
        #[cfg(feature = "jit")]
        {
            let kernel = clconv::jit::Jit::new().unwrap().compile(name).unwrap();
            kernel
                .run_bytes(clconv::Layout::Packed, &bytes, &mut got)
                .unwrap();
            assert_eq!(got, want, "{name} through the JIT");
        }
    };
    let values = [-3.0f32, -0.0, 3.0e38, f32::NEG_INFINITY, -f32::NAN, 1e-40];
    run(
        "convert_fp8e8m0_abs_rtp(float)",
        &values,
        &[0x81, 0x00, 0xff, 0xff, 0xff, 0x00],
    );
    run(
        "convert_fp8e8m0_sat_abs_rtp(float)",
        &values,
        &[0x81, 0x00, 0xfe, 0xfe, 0xff, 0x00],
    );
    run(
        "convert_fp8e8m0_rtp(float)",
        &values,
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0x00],
    );
    let e = |name: &str| Request::parse(name, Extensions::default()).unwrap_err();
    for refused in [
        "convert_fp8e4m3fnuz_nancanon_rte(float)",
        "convert_fp8e8m0_nancanon_rtz(float)",
        "convert_tf32_relu_rtz(double)",
    ] {
        assert!(
            matches!(e(refused), RequestError::NarrowModifier { .. }),
            "{refused}: {:?}",
            e(refused)
        );
    }
    for refused in [
        "convert_float_abs(double)",
        "convert_fp6e2m3_abs(float)",
        "convert_float_abs(fp8e8m0)",
    ] {
        let message = e(refused).to_string();
        assert!(
            message.contains("into fp8e8m0 only"),
            "{refused}: {message}"
        );
    }
    let ok = Request::parse("convert_bfloat2_nancanon(fp8e8m0x2)", Extensions::default());
    assert!(ok.is_ok(), "{ok:?}");
}
