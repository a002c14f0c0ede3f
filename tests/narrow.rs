//! The narrow formats (issue 47): OCP Microscaling's FP4 E2M1, FP6 E2M3 and E3M2, and the FNUZ
//! 8-bit floats E4M3FNUZ and E5M2FNUZ. Expected values are the definitions' own, worked by hand:
//!
//! - OCP Microscaling Formats (MX) v1.0, 5.3.3: E2M1 (bias 1) holds 0, 0.5, 1, 1.5, 2, 3, 4, 6;
//!   E2M3 (bias 1) max 7.5, min subnormal 0.125; E3M2 (bias 3) max 28, min subnormal 0.0625;
//!   no infinities or NaNs. Conversion (6.3): nearest-even, overflow clamped to the largest
//!   value of the sign. NaN: implementation-defined; clconv gives +max as PTX's `cvt` into
//!   `.e2m1x2` does ("NaN results are converted to positive MAX_NORM").
//! - E4M3FNUZ (bias 8) max 0x7f = 1.875 * 2^7 = 240, min subnormal 2^(1-8) / 8 = 2^-10;
//!   E5M2FNUZ (bias 16) max 0x7f = 1.75 * 2^15 = 57344, min subnormal 2^(1-16) / 4 = 2^-17;
//!   0x80 is the only NaN, there is no -0 and no infinity.
//! - E8M0 (OCP MX v1.0, 5.4.1): code c is 2^(c - 127), 0xff the NaN; no sign, zero or
//!   infinity.
//! - tf32 (PTX ISA, "Alternate Floating-Point Data Formats"): 1 sign, 8 exponent and 10
//!   mantissa bits, binary32's conventions, in the top 19 bits of a 32-bit word.

use clconv::{reference, Extensions, Request, RequestError, Rounding, ScalarType};

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
fn every_e2m1_code_is_its_value_from_the_mx_table() {
    let values = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let codes: Vec<u64> = (0..16).collect();
    let want: Vec<u64> = (0..16)
        .map(|c| {
            let v = values[c % 8];
            f(if c >= 8 { -v } else { v })
        })
        .collect();
    assert_eq!(reference("convert_float(fp4e2m1)", &codes), want);
    // The high bits of the byte are ignored.
    assert_eq!(
        reference("convert_float(fp4e2m1)", &[0xf7, 0x39]),
        [f(6.0), f(-0.5)]
    );
}

#[test]
fn the_fp6_and_fnuz_extremes() {
    let cases: [(&str, u64, f32); 10] = [
        ("convert_float(fp6e2m3)", 0x1f, 7.5),
        ("convert_float(fp6e2m3)", 0x01, 0.125),
        ("convert_float(fp6e2m3)", 0x3f, -7.5),
        ("convert_float(fp6e3m2)", 0x1f, 28.0),
        ("convert_float(fp6e3m2)", 0x01, 0.0625),
        ("convert_float(fp6e3m2)", 0x04, 0.25), // min normal 2^(1-3)
        ("convert_float(fp8e4m3fnuz)", 0x7f, 240.0),
        ("convert_float(fp8e4m3fnuz)", 0x01, 1.0 / 1024.0),
        ("convert_float(fp8e5m2fnuz)", 0x7f, 57344.0),
        ("convert_float(fp8e5m2fnuz)", 0x01, 1.0 / 131072.0),
    ];
    for (name, code, value) in cases {
        assert_eq!(reference(name, &[code]), [f(value)], "{name} {code:#x}");
    }
    // The FNUZ NaN widens to the quiet NaN with the sign bit set.
    assert_eq!(
        reference("convert_float(fp8e4m3fnuz)", &[0x80]),
        [0xffc0_0000]
    );
    assert_eq!(
        reference("convert_double(fp8e5m2fnuz)", &[0x80]),
        [0xfff8_0000_0000_0000]
    );
    assert_eq!(reference("convert_half(fp8e5m2fnuz)", &[0x80]), [0xfe00]);
}

/// The example: 0.25, 0.3, 5.0, 7.0, -100, NaN into E2M1 (`_sat`) and back: 0, 0.5, 4,
/// 6, -6 and the NaN rule's +6, through the host's JIT and the reference (the matrix runs every
/// narrow conversion on every flag set and tier against the reference).
#[test]
fn float_to_e2m1_and_back() {
    let inputs = [0.25f32, 0.3, 5.0, 7.0, -100.0, f32::NAN];
    let codes = [0x0u64, 0x1, 0x6, 0x7, 0xf, 0x7];
    let back = [0.0f32, 0.5, 4.0, 6.0, -6.0, 6.0];
    for name in ["convert_fp4e2m1_sat(float)", "convert_fp4e2m1(float)"] {
        assert_eq!(reference(name, &inputs.map(f)), codes, "{name}");
    }
    assert_eq!(
        reference("convert_float(fp4e2m1)", &codes),
        back.map(f).to_vec()
    );
    #[cfg(feature = "jit")]
    {
        use clconv::jit::{Fp4E2M1, Jit};
        let jit = Jit::new().unwrap();
        let k = jit.compile("convert_fp4e2m1x3_sat(float3)").unwrap();
        let mut out = [Fp4E2M1(0xaa); 8];
        let padded = [0.25f32, 0.3, 5.0, 7.0, -100.0, f32::NAN, 0.0, 0.0];
        // Two float3 in the packed layout: 6 elements.
        k.run_with_layout(clconv::Layout::Packed, &padded[..6], &mut out[..6])
            .unwrap();
        assert_eq!(
            out[..6].iter().map(|c| u64::from(c.0)).collect::<Vec<_>>(),
            codes
        );
        let k = jit.compile("convert_float(fp4e2m1)").unwrap();
        let mut floats = [0f32; 6];
        k.run(&out[..6], &mut floats).unwrap();
        assert_eq!(floats.map(f32::to_bits), back.map(f32::to_bits));
    }
}

#[test]
fn rounding_into_e2m1_by_every_mode() {
    // 2.5 lies between 2 (code 4) and 3 (code 5): a tie, to the even code 4 under rte.
    // -0.2 lies between -0 and -0.5; 100 is past 6 in every mode: clamped (no infinity).
    let inputs = [2.5f32, -0.2, 100.0, -f32::INFINITY].map(f);
    let cases: [(&str, [u64; 4]); 4] = [
        ("convert_fp4e2m1_rte(float)", [0x4, 0x8, 0x7, 0xf]),
        ("convert_fp4e2m1_rtz(float)", [0x4, 0x8, 0x7, 0xf]),
        ("convert_fp4e2m1_rtp(float)", [0x5, 0x8, 0x7, 0xf]),
        ("convert_fp4e2m1_rtn(float)", [0x4, 0x9, 0x7, 0xf]),
    ];
    for (name, want) in cases {
        assert_eq!(reference(name, &inputs), want, "{name}");
    }
}

#[test]
fn the_fnuz_formats_have_one_nan_and_no_negative_zero() {
    let name = "convert_fp8e4m3fnuz(float)";
    // -0.0 and a negative value that rounds to zero give +0; 248 is halfway between 240 and
    // 256 (the code past the largest): to even, past it: NaN; 244 rounds to 240; NaN and
    // infinity give 0x80.
    let inputs = [
        -0.0f32,
        -1.0e-9,
        248.0,
        244.0,
        f32::NAN,
        f32::NEG_INFINITY,
        -1.0,
    ];
    let want = [0x00u64, 0x00, 0x80, 0x7f, 0x80, 0x80, 0xc0];
    assert_eq!(reference(name, &inputs.map(f)), want);
    // `_sat`: the largest value of the sign for every overflow and infinity; NaN stays NaN.
    let want = [0x00u64, 0x00, 0x7f, 0x7f, 0x80, 0xff, 0xc0];
    assert_eq!(
        reference("convert_fp8e4m3fnuz_sat(float)", &inputs.map(f)),
        want
    );
    // Toward zero, an overflow gives the largest value (IEEE-754 gives no infinity there).
    assert_eq!(
        reference("convert_fp8e5m2fnuz_rtz(float)", &[f(1.0e9), f(-1.0e9)]),
        [0x7f, 0xff]
    );
}

#[test]
fn from_double_rounds_once() {
    // 1 + 2^-40 lies just above 1.0 (E2M3: 1.0 = 0x08, next 1.125): rtp gives 1.125 from
    // double (a rounding through float to nearest would lose the excess and give 1.0).
    let x = f64::from_bits(0x3ff0_0000_0000_1000);
    assert_eq!(
        reference("convert_fp6e2m3_rtp(double)", &[x.to_bits()]),
        [0x09]
    );
}

#[test]
fn what_the_narrow_formats_do_not_take_is_a_typed_error() {
    let ext = Extensions::with_fp16();
    assert!(matches!(
        Request::parse("convert_fp4e2m1(int)", ext),
        Err(RequestError::NarrowPartner {
            narrow: ScalarType::Fp4E2M1,
            other: ScalarType::Int
        })
    ));
    assert!(matches!(
        Request::parse("convert_fp8e4m3fnuz(fp8e4m3)", ext),
        Err(RequestError::NarrowPartner { .. })
    ));
    assert!(matches!(
        Request::parse("as_uchar(fp8e4m3fnuz)", ext),
        Err(RequestError::NarrowBits { .. })
    ));
    assert!(matches!(
        Request::parse("convert_fp6e3m2_relu(double)", ext),
        Err(RequestError::NarrowModifier { .. })
    ));
    assert!(matches!(
        Request::parse("convert_fp4e2m1_relu(double)", ext),
        Err(RequestError::NarrowModifier { .. })
    ));
    assert!(matches!(
        Request::parse("convert_fp6e3m2_ftz(float)", ext),
        Err(RequestError::NarrowModifier { .. })
    ));
    // The width of a name with digits follows an `x`.
    assert_eq!(
        Request::parse("convert_float4(fp8e5m2fnuzx4)", ext)
            .unwrap()
            .to_string(),
        "convert_float4(fp8e5m2fnuzx4)"
    );
    let e = Request::parse("convert_fp4e2m1(int)", ext).unwrap_err();
    assert!(
        e.to_string().contains("half, float, double and bfloat"),
        "{e}"
    );
}

#[test]
fn e8m0_is_a_power_of_two() {
    // Every code: 2^(c - 127) (0x00 is float's subnormal 2^-127), 0xff the positive NaN.
    let codes: Vec<u64> = (0..256).collect();
    let want: Vec<u64> = (0..256u64)
        .map(|c| match c {
            0 => 0x0040_0000,
            0xff => 0x7fc0_0000,
            c => c << 23,
        })
        .collect();
    assert_eq!(reference("convert_float(fp8e8m0)", &codes), want);
    // Into it: 1000 lies in [2^9, 2^10); rtz and rtn give 2^9 (0x88), rtp 2^10 (0x89), rte
    // 2^10 too (1000 >= 1.5 * 2^9 = 768). 1.5 is the tie: up, 2^1. 2^-130 is below 2^-127:
    // 0x00 in every mode.
    let inputs = [1000.0f32, 1.5, 1.25, 2.0f32.powi(-130)].map(f);
    for (mode, want) in [
        ("rte", [0x89u64, 0x80, 0x7f, 0x00]),
        ("rtz", [0x88, 0x7f, 0x7f, 0x00]),
        ("rtn", [0x88, 0x7f, 0x7f, 0x00]),
        ("rtp", [0x89, 0x80, 0x80, 0x00]),
    ] {
        let name = format!("convert_fp8e8m0_{mode}(float)");
        assert_eq!(reference(&name, &inputs), want, "{name}");
    }
    // What E8M0 cannot hold: zero, negative values, infinities, NaN give the NaN 0xff; `_sat`
    // gives 2^-127 below and 2^127 above. Past 2^127 (3e38 rounds to 2^128 under rte): the
    // NaN; rtz keeps 2^127.
    let inputs = [0.0f32, -0.0, -1.0, f32::INFINITY, f32::NAN, 3.0e38].map(f);
    assert_eq!(
        reference("convert_fp8e8m0(float)", &inputs),
        [0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
    );
    assert_eq!(
        reference("convert_fp8e8m0_sat(float)", &inputs),
        [0x00, 0x00, 0x00, 0xfe, 0xff, 0xfe]
    );
    assert_eq!(
        reference("convert_fp8e8m0_rtz(float)", &[f(3.0e38)]),
        [0xfe]
    );
    // Into half, which lacks 2^-127 and 2^127: rounded by the mode.
    assert_eq!(
        reference("convert_half_rtp(fp8e8m0)", &[0x00, 0xfe]),
        [0x0001, 0x7c00]
    );
    assert_eq!(
        reference("convert_half_rtz(fp8e8m0)", &[0x00, 0xfe]),
        [0x0000, 0x7bff]
    );
}

#[test]
fn tf32_is_float_with_ten_fraction_bits() {
    // 1 + 2^-11 is halfway between 1.0 and 1 + 2^-10: to even, 1.0 (rte); 1 + 3 * 2^-11
    // halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up. FLT_MAX rounds to infinity (rte) or
    // 0x7f7fe000 (rtz, `_sat`). A NaN keeps its top payload bits and is made quiet.
    let inputs = [
        1.0f32 + 1.0 / 2048.0,
        1.0 + 3.0 / 2048.0,
        f32::MAX,
        f32::from_bits(0x7f80_4000), // a signalling NaN with payload in the kept bits
    ]
    .map(f);
    assert_eq!(
        reference("convert_tf32(float)", &inputs),
        [0x3f80_0000, 0x3f80_4000, 0x7f80_0000, 0x7fc0_4000]
    );
    assert_eq!(
        reference("convert_tf32_rtz(float)", &inputs),
        [0x3f80_0000, 0x3f80_2000, 0x7f7f_e000, 0x7fc0_4000]
    );
    assert_eq!(
        reference(
            "convert_tf32_sat(float)",
            &[f(f32::MAX), f(f32::NEG_INFINITY)]
        ),
        [0x7f7f_e000, 0xff7f_e000]
    );
    // Read: the low 13 bits are ignored.
    assert_eq!(
        reference("convert_float(tf32)", &[0x3f80_1fff, 0x7f80_0001]),
        [0x3f80_0000, 0x7f80_0000]
    );
}

/// PTX's `.relu` on FP4 (`cvt.rn.satfinite.relu.e2m1x2.f32`, `cvt.rn.relu.f16x2.e2m1x2`):
/// "clamps the result to 0 if negative". Into FP4 a negative code (sign bit 3, -0 too) is +0;
/// NaN stays +6.0 (0x7, the rule without `.relu`); out of FP4 a negative half is +0. By hand,
/// through the reference and the JIT (one element and sixteen at a time).
#[test]
fn fp4_relu_clears_negative_codes() {
    let inputs = [f(-1.0), f(-0.0), f(f32::NAN), f(1.0), f(-100.0), f(5.0)];
    let want = [0x0, 0x0, 0x7, 0x2, 0x0, 0x6];
    assert_eq!(reference("convert_fp4e2m1_sat_relu(float)", &inputs), want);
    let codes = [0x9, 0xf, 0x8, 0x2, 0x7, 0x0];
    let halves = [0x0000, 0x0000, 0x0000, 0x3c00, 0x4600, 0x0000];
    assert_eq!(reference("convert_half_relu(fp4e2m1)", &codes), halves);
    #[cfg(feature = "jit")]
    {
        use clconv::jit::{Jit, X64Flags};
        use clconv::Layout;
        let jit =
            Jit::with_options(X64Flags::Host, Extensions::with_fp16(), Rounding::Rte).unwrap();
        let floats: Vec<u8> = inputs
            .iter()
            .cycle()
            .take(96)
            .flat_map(|&x| (x as u32).to_le_bytes())
            .collect();
        let want_codes: Vec<u8> = want.iter().cycle().take(96).map(|&c| c as u8).collect();
        let code_bytes: Vec<u8> = codes.iter().cycle().take(96).map(|&c| c as u8).collect();
        let want_halves: Vec<u8> = halves
            .iter()
            .cycle()
            .take(96)
            .flat_map(|&h| (h as u16).to_le_bytes())
            .collect();
        for (name, src, want) in [
            ("convert_fp4e2m1_sat_relu(float)", &floats, &want_codes),
            (
                "convert_fp4e2m1x16_sat_relu_rte(float16)",
                &floats,
                &want_codes,
            ),
            ("convert_half_relu(fp4e2m1)", &code_bytes, &want_halves),
            ("convert_half16_relu(fp4e2m1x16)", &code_bytes, &want_halves),
        ] {
            let mut got = vec![0u8; want.len()];
            let kernel = jit.compile(name).unwrap();
            kernel.run_bytes(Layout::Packed, src, &mut got).unwrap();
            assert_eq!(&got, want, "{name}");
        }
    }
}

#[test]
fn tf32_ties_away_from_zero() {
    // `_rta`, PTX's `.rna`: "rounds to nearest, ties away from zero". 1 + 2^-11 is a tie: away,
    // 1 + 2^-10 (even would give 1.0), and so for its negative; just below the tie, 1.0. The
    // largest float's tie (0x7f7ff000, halfway between the largest tf32 and 2^128) rounds to
    // infinity, or to the largest tf32 under `_sat`. The smallest subnormal tie, 2^-137
    // (0x00001000), goes up to 2^-136 (0x00002000). NaN as `convert_tf32`: quiet, top payload.
    let inputs = [
        0x3f80_1000,
        0xbf80_1000,
        0x3f80_0fff,
        0x7f7f_f000,
        0x0000_1000,
        0x7f80_4000,
    ];
    assert_eq!(
        reference("convert_tf32_rta(float)", &inputs),
        [
            0x3f80_2000,
            0xbf80_2000,
            0x3f80_0000,
            0x7f80_0000,
            0x0000_2000,
            0x7fc0_4000
        ]
    );
    assert_eq!(
        reference("convert_tf32_sat_rta(float)", &[0x7f7f_f000, 0xff80_0000]),
        [0x7f7f_e000, 0xff7f_e000]
    );
    // The rule is a way of rounding to nearest, and PTX has it into tf32 from float only.
    let ext = Extensions::with_fp16();
    for (name, says) in [
        ("convert_tf32_rta(double)", "from float only"),
        ("convert_tf32_rta(half)", "from float only"),
        ("convert_float_rta(double)", "into tf32 from float only"),
        ("convert_tf32_rta_rtz(float)", "a second rounding mode"),
        ("convert_tf32_RTA(float)", "lowercase"),
    ] {
        let e = Request::parse(name, ext).unwrap_err().to_string();
        assert!(e.contains(says), "{name}: {e}");
    }
}
