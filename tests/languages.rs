//! The shader languages' spellings (`wgsl:`, `hlsl:`, `glsl:`, `msl:`): the requests they mean,
//! the specifications' own worked examples run through the JIT and the reference, and the
//! typed errors for what they do not accept. Expected values are the specifications' (quoted
//! in `docs/*.md`) or worked out by hand from their rules, never taken from clconv.

use clconv::languages::Language;
use clconv::{Extensions, Request, RequestError};

fn parse(name: &str) -> Request {
    Request::parse(name, Extensions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The worked examples through the JIT (feature `jit`) and the reference.
#[cfg(feature = "jit")]
mod through_the_jit {
    use super::parse;
    use clconv::jit::{Element, Half, Jit};
    use clconv::{reference, Layout};

    /// A number's little-endian bytes.
    trait Le: Copy {
        fn le(self) -> Vec<u8>;
    }
    macro_rules! le {
        ($($t:ty),*) => {$(impl Le for $t { fn le(self) -> Vec<u8> { self.to_le_bytes().to_vec() } })*};
    }
    le!(f32, u32, i32, i8, u8, i16, u16, f64, i64, u64);
    impl Le for Half {
        fn le(self) -> Vec<u8> {
            self.0.to_le_bytes().to_vec()
        }
    }
    impl Le for clconv::jit::BFloat {
        fn le(self) -> Vec<u8> {
            self.0.to_le_bytes().to_vec()
        }
    }

    /// Half values from their bits.
    /// `name` on the bytes `src` through the JIT and the reference: both give `want`, byte for
    /// byte (a NaN compared as its bits).
    fn same_bits(jit: &Jit, name: &str, src: &[u8], want: &[u8]) {
        let mut got = vec![0u8; want.len()];
        let kernel = jit.compile(name).unwrap();
        kernel.run_bytes(Layout::Packed, src, &mut got).unwrap();
        assert_eq!(got, want, "{name} through the JIT");
        reference::evaluate(&parse(name), Layout::Packed, src, &mut got).unwrap();
        assert_eq!(got, want, "{name} through the reference");
    }

    fn halves<const N: usize>(bits: [u16; N]) -> [Half; N] {
        bits.map(Half)
    }

    /// Runs `name` on `src` through the JIT and through the reference; both must give `expected`.
    fn run<S: Le + Element, D: Le + Element + PartialEq + std::fmt::Debug + Default>(
        jit: &Jit,
        name: &str,
        src: &[S],
        expected: &[D],
    ) {
        let kernel = jit.compile(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut got = vec![D::default(); expected.len()];
        kernel.run(src, &mut got).unwrap();
        assert_eq!(got, expected, "{name} through the JIT");
        let src_bytes: Vec<u8> = src.iter().flat_map(|x| x.le()).collect();
        let want: Vec<u8> = expected.iter().flat_map(|x| x.le()).collect();
        let mut out = vec![0u8; want.len()];
        reference::evaluate(&parse(name), Layout::Packed, &src_bytes, &mut out).unwrap();
        assert_eq!(out, want, "{name} through the reference");
    }

    /// WebAssembly's SIMD conversions whose lanes move (core spec 4.3.3 "Numerics", the
    /// vector instructions: `_low` reads lanes 0..N, `_high` lanes N..2N, `_zero` fills the
    /// upper half with zeros; convert and demote round to nearest-even), and the FP16
    /// proposal's: values by hand.
    #[test]
    fn wasm_lanes_that_move() {
        let jit = Jit::new().unwrap();
        let lanes = "wasm:f64x2.convert_low_i32x4_u";
        run(
            &jit,
            lanes,
            &[1u32, 4294967295, 7, 8],
            &[1.0f64, 4294967295.0],
        );
        let lanes = "wasm:f64x2.convert_low_i32x4_s";
        run(
            &jit,
            lanes,
            &[-1i32, i32::MIN, 7, 8],
            &[-1.0f64, -2147483648.0],
        );
        let promote = "wasm:f64x2.promote_low_f32x4";
        run(&jit, promote, &[1.5f32, -3.0, 7.0, 8.0], &[1.5f64, -3.0]);
        // 1 + 2^-24 is halfway between two floats: to the even one, 1.0.
        let tie = f64::from_bits(0x3ff0_0000_1000_0000);
        let demote = "wasm:f32x4.demote_f64x2_zero";
        run(
            &jit,
            demote,
            &[1.5f64, 1e300],
            &[1.5f32, f32::INFINITY, 0.0, 0.0],
        );
        run(&jit, demote, &[tie, -2.5], &[1.0f32, -2.5, 0.0, 0.0]);
        let trunc = "wasm:i32x4.trunc_sat_f64x2_s_zero";
        run(&jit, trunc, &[f64::NAN, -3e9], &[0i32, i32::MIN, 0, 0]);
        run(&jit, trunc, &[2147483647.9f64, -2.5], &[i32::MAX, -2, 0, 0]);
        let trunc = "wasm:i32x4.trunc_sat_f64x2_u_zero";
        run(&jit, trunc, &[-1.5f64, 5e9], &[0u32, u32::MAX, 0, 0]);
        let high: [i8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, -8, 9, 10, 11, 12, 13, 14, -128];
        let wide: [i16; 8] = [-8, 9, 10, 11, 12, 13, 14, -128];
        run(&jit, "wasm:i16x8.extend_high_i8x16_s", &high, &wide);
        let high = high.map(|x| x as u8);
        let wide: [u16; 8] = [248, 9, 10, 11, 12, 13, 14, 128];
        run(&jit, "wasm:i16x8.extend_high_i8x16_u", &high, &wide);
        let low = "wasm:i64x2.extend_low_i32x4_u";
        run(&jit, low, &[u32::MAX, 1, 2, 3], &[4294967295u64, 1]);
        let high = "wasm:i64x2.extend_high_i32x4_s";
        run(&jit, high, &[0i32, 1, -2, 3], &[-2i64, 3]);
        // FP16: 65520 is halfway to the next binade, so nearest-even overflows to infinity;
        // 1e-8 is below half the smallest subnormal (2^-25).
        let demote = "wasm:f16x8.demote_f32x4_zero";
        let want = halves([0x3c00, 0x7c00, 0x0000, 0x7e00, 0, 0, 0, 0]);
        run(&jit, demote, &[1.0f32, 65520.0, 1e-8, f32::NAN], &want);
        let promote = "wasm:f32x4.promote_low_f16x8";
        let src = halves([
            0x3c00, 0xfc00, 0x0001, 0x7bff, 0x3c00, 0x3c00, 0x3c00, 0x3c00,
        ]);
        let want = [1.0f32, f32::NEG_INFINITY, 2f32.powi(-24), 65504.0];
        run(&jit, promote, &src, &want);
    }

    /// GLSL 4.60 8.4 "Floating-Point Pack and Unpack Functions": "The first vector component
    /// specifies the 16 least-significant bits of the result"; the rounding is clconv's
    /// nearest-even (docs/glsl.md). HLSL's `f32tof16`: D3D11.3 22.13.2 "The upper 16 bits of
    /// the result are set to 0", rounded toward zero (3.2.2), infinity kept; `f16tof32` reads
    /// the low 16 bits.
    #[test]
    fn packed_halves() {
        let jit = Jit::new().unwrap();
        run(
            &jit,
            "glsl:packHalf2x16(vec2)",
            &[1.0f32, -2.0],
            &[0xc000_3c00u32],
        );
        // 1 + 2^-11 is a tie (to 1.0); 1 + 3 * 2^-11 one (to 1 + 2^-9).
        let ties = [f32::from_bits(0x3f80_1000), f32::from_bits(0x3f80_3000)];
        run(&jit, "glsl:packHalf2x16(vec2)", &ties, &[0x3c02_3c00u32]);
        run(
            &jit,
            "glsl:unpackHalf2x16(uint)",
            &[0xc000_3c00u32],
            &[1.0f32, -2.0],
        );
        run(
            &jit,
            "glsl:packDouble2x32(uvec2)",
            &[0u32, 0x3ff0_0000],
            &[1.0f64],
        );
        let f32tof16 = "hlsl:f32tof16(float4)";
        let src = [65520.0f32, f32::INFINITY, -2.0, ties[1]];
        run(&jit, f32tof16, &src, &[0x7bffu32, 0x7c00, 0xc000, 0x3c01]);
        run(&jit, "hlsl:f32tof16(float)", &[f32::NAN], &[0x7e00u32]);
        let f16tof32 = "hlsl:f16tof32(uint2)";
        run(
            &jit,
            f16tof32,
            &[0xffff_3c00u32, 0x7c00],
            &[1.0f32, f32::INFINITY],
        );
    }

    /// PTX's float rules (ISA, `cvt`, "Floating Point Notes"): `.sat` "limits the result to
    /// the range [0.0, 1.0]. NaN results are flushed to positive zero"; `.relu` "clamps the
    /// result to 0 if negative. NaN results are converted to canonical NaN"; `.ftz` flushes
    /// .f32 subnormal inputs and results "to sign-preserving zero"; `.satfinite` gives
    /// MAX_NORM for what is beyond it. Values by hand; -0.0 to +0.0 is clconv's choice.
    #[test]
    fn ptx_float_rules() {
        let jit = Jit::new().unwrap();
        let sat = "ptx:cvt.rn.sat.f16.f32";
        let src = [f32::NAN, -0.0, -3.0, 0.5, 1.5, f32::INFINITY, 0.999_999];
        let want = halves([0, 0, 0, 0x3800, 0x3c00, 0x3c00, 0x3c00]);
        run(&jit, sat, &src, &want);
        run(
            &jit,
            "ptx:cvt.rn.sat.f32.s32",
            &[5i32, -3, 0, 1],
            &[1.0f32, 0.0, 0.0, 1.0],
        );
        run(
            &jit,
            "ptx:cvt.sat.f64.f32",
            &[0.25f32, -1e-45],
            &[0.25f64, 0.0],
        );
        run(&jit, "ptx:cvt.sat.f32.f32", &[2.0f32, -0.0], &[1.0f32, 0.0]);
        let relu = "ptx:cvt.rn.relu.f16.f32";
        // A NaN of either sign is a NaN result, so canonical: the sign does not make it 0.
        let src = [
            f32::NAN,
            -0.0,
            -3.0,
            0.5,
            70000.0,
            f32::NEG_INFINITY,
            -f32::NAN,
        ];
        let want = halves([0x7fff, 0, 0, 0x3800, 0x7c00, 0, 0x7fff]);
        run(&jit, relu, &src, &want);
        let relu = "ptx:cvt.rz.relu.bf16.f32";
        let src = [-1.0f32, f32::from_bits(0x3f81_ffff), f32::NAN];
        let want = [
            clconv::jit::BFloat(0),
            clconv::jit::BFloat(0x3f81),
            clconv::jit::BFloat(0x7fff),
        ];
        run(&jit, relu, &src, &want);
        // The smallest subnormal: toward +inf it is 1 unless flushed first.
        let tiny = f32::from_bits(1);
        run(&jit, "ptx:cvt.rpi.s32.f32", &[tiny, -tiny], &[1i32, 0]);
        run(&jit, "ptx:cvt.rpi.ftz.s32.f32", &[tiny, -tiny], &[0i32, 0]);
        // A double whose float is subnormal: flushed, its sign kept; a subnormal operand too.
        let ftz = "ptx:cvt.rn.ftz.f32.f64";
        run(&jit, ftz, &[-1e-40f64, 1e-30], &[-0.0f32, 1e-30]);
        run(&jit, "ptx:cvt.ftz.f64.f32", &[-tiny, 1.5], &[-0.0f64, 1.5]);
        let satfinite = "ptx:cvt.rn.satfinite.bf16.f32";
        let src = [f32::MAX, f32::NEG_INFINITY, 3.0];
        let want = [
            clconv::jit::BFloat(0x7f7f),
            clconv::jit::BFloat(0xff7f),
            clconv::jit::BFloat(0x4040),
        ];
        run(&jit, satfinite, &src, &want);
    }

    /// PTX's packed pairs (ISA 9.7.9.21: "the value converted from input a is stored in the
    /// upper half of d and the value converted from input b is stored in the lower half"), a
    /// pair of a buffer being (b, a); NaN the canonical NaN, as sm_90 gives it for fp8
    /// (measured, `docs/ptx.md`); `.satfinite` MAX_NORM; `.relu` 0 for negatives. By hand.
    #[test]
    fn ptx_packed_pairs() {
        let jit = Jit::new().unwrap();
        let bits = |name: &str, src: Vec<u8>, want: Vec<u8>| same_bits(&jit, name, &src, &want);
        let floats = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let halves = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        // b = 1.0 (0x38), a = -500 (-448, 0xfe); NaN (0x7f), 0.3 (1.25 x 2^-2, 0x2a).
        bits(
            "ptx:cvt.rn.satfinite.e4m3x2.f32",
            floats(&[1.0, -500.0, -f32::NAN, 0.3]),
            vec![0x38, 0xfe, 0x7f, 0x2a],
        );
        // `.relu`: -1 gives 0; 2.0 is E5M2 0x40.
        bits(
            "ptx:cvt.rn.satfinite.relu.e5m2x2.f32",
            floats(&[-1.0, 2.0]),
            vec![0x00, 0x40],
        );
        bits(
            "ptx:cvt.rn.satfinite.e4m3x2.f16x2",
            halves(&[0x3c00, 0xfc00]),
            vec![0x38, 0xfe],
        );
        // Back into .f16x2: 1.0, and E4M3's negative NaN as the canonical NaN.
        bits(
            "ptx:cvt.rn.f16x2.e4m3x2",
            vec![0x38, 0xff],
            halves(&[0x3c00, 0x7fff]),
        );
        bits(
            "ptx:cvt.rz.relu.bf16x2.f32",
            floats(&[-2.0, f32::from_bits(0x3f80_0001)]),
            halves(&[0x0000, 0x3f80]),
        );
        bits(
            "ptx:cvt.rn.f16x2.f32",
            floats(&[f32::NAN, 1.5]),
            halves(&[0x7fff, 0x3e00]),
        );
        // FP6, each code in its own byte (ISA: "d[13:8] = convert(a); d[5:0] = convert(b)"):
        // b = 1.01 is E2M3 1.0 (0x08), a = -100 saturates to -7.5 (0x3f); a NaN gives +7.5
        // ("NaN results are converted to positive MAX_NORM", 0x1f). E3M2: 0.3 = 1.2 x 2^-2 ->
        // 1.25 x 2^-2 (0x05), 100 -> 28 (0x1f).
        bits(
            "ptx:cvt.rn.satfinite.e2m3x2.f32",
            floats(&[1.01, -100.0, -f32::NAN, 0.0625]),
            vec![0x08, 0x3f, 0x1f, 0x00],
        );
        bits(
            "ptx:cvt.rn.satfinite.e3m2x2.f32",
            floats(&[0.3, 100.0]),
            vec![0x05, 0x1f],
        );
        // `.ue8m0x2`, (b, a): -3 toward +inf is 4 (0x81), 0 is clipped to 2^-127 (0x00); a
        // NaN 0xff; +inf 0xfe under `.satfinite`; 1.5 x 2^-127 (a float subnormal) up to 2^-126
        // (0x01); FLT_MAX rounds up past 2^127: 0xfe.
        bits(
            "ptx:cvt.rp.satfinite.ue8m0x2.f32",
            floats(&[
                -3.0,
                0.0,
                f32::NAN,
                f32::INFINITY,
                f32::from_bits(0x0060_0000),
                f32::MAX,
            ]),
            vec![0x81, 0x00, 0xff, 0xfe, 0x01, 0xfe],
        );
        // Toward zero, no `.satfinite`: -inf is NaN; 3e38 is 2^127 (0xfe); -0 and a subnormal
        // 2^-127 (0x00).
        bits(
            "ptx:cvt.rz.ue8m0x2.f32",
            floats(&[f32::NEG_INFINITY, 3.0e38, -0.0, 1e-45]),
            vec![0xff, 0xfe, 0x00, 0x00],
        );
        bits(
            "ptx:cvt.rz.satfinite.ue8m0x2.bf16x2",
            halves(&[0xc040, 0x0000]),
            vec![0x80, 0x00],
        );
        bits(
            "ptx:cvt.rn.bf16x2.ue8m0x2",
            vec![0xff, 0x00, 0x7f, 0xfe],
            halves(&[0x7fff, 0x0040, 0x3f80, 0x7f00]),
        );
        // Back: E3M2 0x1f is 28 (half 0x4f00), 0x25 is -1.25 x 2^-2 (0xb500); E2M3's 0x28 is
        // -1.0, 0x08 1.0.
        bits(
            "ptx:cvt.rn.f16x2.e3m2x2",
            vec![0x1f, 0x25],
            halves(&[0x4f00, 0xb500]),
        );
        bits(
            "ptx:cvt.rn.f16x2.e2m3x2",
            vec![0x28, 0x08],
            halves(&[0xbc00, 0x3c00]),
        );
        // `.tf32`: the top 10 fraction bits kept, the low 13 zero. 0x3f801000 and 0x3f803000
        // are ties (to even: down, up); FLT_MAX rounds to infinity, `.satfinite` keeps the
        // largest tf32; `.rz` truncates.
        let words = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        bits(
            "ptx:cvt.rn.tf32.f32",
            words(&[0x3f80_1000, 0x3f80_3000, 0x7f7f_ffff]),
            words(&[0x3f80_0000, 0x3f80_4000, 0x7f80_0000]),
        );
        bits(
            "ptx:cvt.rn.satfinite.tf32.f32",
            words(&[0x7f7f_ffff, 0xff80_0000]),
            words(&[0x7f7f_e000, 0xff7f_e000]),
        );
        bits(
            "ptx:cvt.rz.tf32.f32",
            words(&[0x3f80_3fff, 0xbf80_0000]),
            words(&[0x3f80_2000, 0xbf80_0000]),
        );
        // `.rna`, "rounds to nearest, ties away from zero": both ties up in magnitude, the
        // negative one too; below a tie down; FLT_MAX's tie to infinity, or the largest tf32
        // with `.satfinite`.
        bits(
            "ptx:cvt.rna.tf32.f32",
            words(&[
                0x3f80_1000,
                0x3f80_3000,
                0xbf80_1000,
                0x3f80_0fff,
                0x7f7f_f000,
            ]),
            words(&[
                0x3f80_2000,
                0x3f80_4000,
                0xbf80_2000,
                0x3f80_0000,
                0x7f80_0000,
            ]),
        );
        bits(
            "ptx:cvt.rna.satfinite.tf32.f32",
            words(&[0x7f7f_f000, 0xff7f_f000]),
            words(&[0x7f7f_e000, 0xff7f_e000]),
        );
        assert_eq!(
            parse("ptx:cvt.rna.satfinite.tf32.f32").to_string(),
            "convert_tf32_sat_rta(float)"
        );
        // FP6 with `.relu`: negative values and -0.0 give +0 (0x00); NaN +MAX_NORM (E2M3
        // 0x1f, 7.5) as without it; 1.0 is E2M3 0x08. Back into .f16x2: E3M2 0x25 (-0.3125)
        // gives +0, 0x1f 28.0 (0x4f00).
        bits(
            "ptx:cvt.rn.satfinite.relu.e2m3x2.f32",
            floats(&[-1.0, -0.0, f32::NAN, 1.0]),
            vec![0x00, 0x00, 0x1f, 0x08],
        );
        bits(
            "ptx:cvt.rn.relu.f16x2.e3m2x2",
            vec![0x25, 0x1f],
            halves(&[0x0000, 0x4f00]),
        );
        // `.relu`, "clamps the result to 0 if negative. NaN results are converted to canonical
        // NaN": -1.0 and -0.0 give +0.0, a NaN of either sign tf32's positive NaN with every
        // fraction bit set (0x7fffe000); 1 + 2^-11 to even; FLT_MAX to infinity, or the
        // largest tf32 with `.satfinite`.
        bits(
            "ptx:cvt.rn.relu.tf32.f32",
            words(&[
                0xbf80_0000,
                0x8000_0000,
                0xffc0_0001,
                0x7f80_0001,
                0x3f80_1000,
                0x7f7f_ffff,
            ]),
            words(&[0, 0, 0x7fff_e000, 0x7fff_e000, 0x3f80_0000, 0x7f80_0000]),
        );
        bits(
            "ptx:cvt.rz.satfinite.relu.tf32.f32",
            words(&[0x7f7f_ffff, 0xff80_0000, 0x3f80_3fff]),
            words(&[0x7f7f_e000, 0, 0x3f80_2000]),
        );
        // FP4, two codes in one byte ("the value converted from input a is stored in the upper
        // half of d", `b` in the lower 4 bits): (b, a) = (0.25, 0.3) is (0, 0.5), codes 0x0 and
        // 0x1 (0.25 a tie to even 0); (5.0, 7.0) is (4.0, 6.0), 0x6 and 0x7 (both ties, 7's
        // even neighbour 8 past the range); (-100, NaN) is (-6.0, +6.0), 0xf and 0x7 (NaN is
        // positive MAX_NORM as for FP6); (1.0, -0.5) is 0x2 and 0x9.
        bits(
            "ptx:cvt.rn.satfinite.e2m1x2.f32",
            floats(&[0.25, 0.3, 5.0, 7.0, -100.0, f32::NAN, 1.0, -0.5]),
            vec![0x10, 0x76, 0x7f, 0x92],
        );
        // `.relu`: the negative ones +0; NaN still +6.0.
        bits(
            "ptx:cvt.rn.satfinite.relu.e2m1x2.f32",
            floats(&[-100.0, f32::NAN, 1.0, -0.5]),
            vec![0x70, 0x02],
        );
        // Back, low nibble first: 0x92 is (1.0, -0.5); 0xf7 (6.0, -6.0); 0x08 (-0.0, 0.0);
        // with `.relu` -0.5, -6.0 and -0.0 give +0.
        bits(
            "ptx:cvt.rn.f16x2.e2m1x2",
            vec![0x92, 0xf7, 0x08],
            halves(&[0x3c00, 0xb800, 0x4600, 0xc600, 0x8000, 0x0000]),
        );
        bits(
            "ptx:cvt.rn.relu.f16x2.e2m1x2",
            vec![0x92, 0xf7, 0x08],
            halves(&[0x3c00, 0x0000, 0x4600, 0x0000, 0x0000, 0x0000]),
        );
        assert_eq!(
            parse("ptx:cvt.rn.satfinite.e2m1x2.f32").to_string(),
            "pack_fp4(convert_fp4e2m1x2_sat_rte(float2))"
        );
        // PTX 9.1's sources `.f16x2` and `.bf16x2` ("the value from the upper 16 bits of `a`
        // is stored in the upper 4 bits of `d`"): (1.0, 5.0) is 0x2 and 0x6 (5.0 a tie to
        // even 4.0); (-1.0, NaN) 0xa and 0x7; (8.0, 0.25) 0x7 (saturated) and 0x0 (a tie to
        // even 0); with `.relu`, -1.0 gives +0.
        bits(
            "ptx:cvt.rn.satfinite.e2m1x2.f16x2",
            halves(&[0x3c00, 0x4500, 0xbc00, 0x7e00, 0x4800, 0x3400]),
            vec![0x62, 0x7a, 0x07],
        );
        bits(
            "ptx:cvt.rn.satfinite.relu.e2m1x2.bf16x2",
            halves(&[0x3f80, 0x40a0, 0xbf80, 0x7fc0, 0x4100, 0x3e80]),
            vec![0x62, 0x70, 0x07],
        );
        // FP6 from them, a code in each byte's low six bits: E2M3's 7.5 (0x1f) for 8.0 and for
        // NaN (positive MAX_NORM); E3M2's 28.0 (0x1f), and -1.0 (0x2c) or +0 with `.relu`.
        bits(
            "ptx:cvt.rn.satfinite.e2m3x2.f16x2",
            halves(&[0x3c00, 0x4800, 0xbc00, 0x7e00]),
            vec![0x08, 0x1f, 0x28, 0x1f],
        );
        bits(
            "ptx:cvt.rn.satfinite.e3m2x2.bf16x2",
            halves(&[0xbf80, 0x4200]),
            vec![0x2c, 0x1f],
        );
        bits(
            "ptx:cvt.rn.satfinite.relu.e3m2x2.bf16x2",
            halves(&[0xbf80, 0x7fc0]),
            vec![0x00, 0x1f],
        );
        // E4M3 from `.bf16x2`: 1.0 is 0x38, 500 saturates to 448 (0x7e), a NaN is 0x7f.
        bits(
            "ptx:cvt.rn.satfinite.e4m3x2.bf16x2",
            halves(&[0x3f80, 0x43fa, 0xffc0, 0x0000]),
            vec![0x38, 0x7e, 0x7f, 0x00],
        );
    }

    /// CUDA's narrow-format functions and 16-bit float intrinsics, by what CUDA 13.0's headers
    /// compute (`cuda_fp8.hpp`, `cuda_fp6.hpp`, `cuda_fp4.hpp`, `cuda_bf16.h`: quoted in
    /// `docs/ptx.md`). Values by hand.
    #[test]
    fn cuda_narrow_functions_and_bfloat16() {
        let jit = Jit::new().unwrap();
        let bits = |name: &str, src: Vec<u8>, want: Vec<u8>| same_bits(&jit, name, &src, &want);
        let floats = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let doubles = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let halves = |v: &[u16]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        // SATFINITE: -500 and -inf give -448 (0xfe), +inf 448 (0x7e); a float NaN of either
        // sign "Canonical NaN" 0x7f; 0.3 is 1.25 x 2^-2 (0x2a).
        bits(
            "cuda:__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)",
            floats(&[-500.0, f32::NEG_INFINITY, f32::INFINITY, -f32::NAN, 0.3]),
            vec![0xfe, 0xfe, 0x7e, 0x7f, 0x2a],
        );
        // From double without saturation: an overflow is E4M3's NaN with the sign (0x7f |
        // sign); a NaN keeps its sign; 464 is a tie, to even (448, 0x7e).
        bits(
            "cuda:__nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E4M3)",
            doubles(&[-500.0, -f64::NAN, 464.0]),
            vec![0xff, 0xff, 0x7e],
        );
        // E5M2 without saturation: 61440 is the tie past 57344, to even: infinity (0x7c).
        bits(
            "cuda:__nv_cvt_float2_to_fp8x2(v, __NV_NOSAT, __NV_E5M2)",
            floats(&[61440.0, -1.0]),
            vec![0x7c, 0xbc],
        );
        // Half in, `.x` first: 1.0 (0x3c00) is E4M3 0x38; half's -NaN the canonical 0x7f.
        bits(
            "cuda:__nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E4M3)",
            halves(&[0x3c00, 0xfe00]),
            vec![0x38, 0x7f],
        );
        // FP4 toward zero: 5.9 -> 4 (0x6), -7 -> -6 (0xf, saturated), NaN -> +6 (0x7), 0.4 ->
        // 0 (0x0), -0.4 -> -0 (0x8).
        bits(
            "cuda:__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero)",
            floats(&[5.9, -7.0, f32::NAN, 0.4, -0.4]),
            vec![0x6, 0xf, 0x7, 0x0, 0x8],
        );
        // Nearest: 0.25 is the tie between 0 and 0.5, to even (0); 0.26 -> 0.5 (0x1).
        bits(
            "cuda:__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest)",
            floats(&[0.25, 0.26]),
            vec![0x0, 0x1],
        );
        // FP6 E3M2, a pair: 30 -> 28 (0x1f), 0.3 = 1.2 x 2^-2 -> 1.25 x 2^-2: exponent field
        // 1, mantissa 01 (0x05).
        bits(
            "cuda:__nv_cvt_float2_to_fp6x2(x, __NV_E3M2, cudaRoundNearest)",
            floats(&[30.0, 0.3]),
            vec![0x1f, 0x05],
        );
        // Upward: 1.01 -> 1.125 in E2M3 (0x09).
        bits(
            "cuda:__nv_cvt_double_to_fp6(x, __NV_E2M3, cudaRoundPosInf)",
            doubles(&[1.01]),
            vec![0x09],
        );
        // Decoders into half: E4M3 0xff (NaN) gives 0x7fff; 0x38 1.0; FP4 0x7 6.0 (0x4600);
        // E2M3 0x1f 7.5 (0x4780).
        bits(
            "cuda:__nv_cvt_fp8_to_halfraw(x, __NV_E4M3)",
            vec![0xff, 0x38],
            halves(&[0x7fff, 0x3c00]),
        );
        bits(
            "cuda:__nv_cvt_fp4_to_halfraw(x, __NV_E2M1)",
            vec![0x7, 0xf],
            halves(&[0x4600, 0xc600]),
        );
        // FP4 pairs, one byte, `.x` in the low nibble ("storage = cvt(x.y) << 4 | cvt(x.x)"):
        // (1.0, -0.5) is 0x92, (5.9, -7) toward zero (4.0, -6.0) 0xf6; back, 0x92 is (1.0, -0.5).
        bits(
            "cuda:__nv_cvt_float2_to_fp4x2(x, __NV_E2M1, cudaRoundNearest)",
            floats(&[1.0, -0.5]),
            vec![0x92],
        );
        bits(
            "cuda:__nv_cvt_double2_to_fp4x2(x, __NV_E2M1, cudaRoundZero)",
            doubles(&[5.9, -7.0]),
            vec![0xf6],
        );
        bits(
            "cuda:__nv_cvt_fp4x2_to_halfraw2(x, __NV_E2M1)",
            vec![0x92],
            halves(&[0x3c00, 0xb800]),
        );
        bits(
            "cuda:__nv_cvt_fp6x2_to_halfraw2(x, __NV_E2M3)",
            vec![0x1f, 0x08],
            halves(&[0x4780, 0x3c00]),
        );
        // E8M0 of the magnitude: 1.0 is 0x7f; just above it, upward, 0x80; -0 clipped to
        // 2^-127 (0x00); 3e38 rounds up past 2^127: NaN without saturation.
        bits(
            "cuda:__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf)",
            floats(&[1.0, f32::from_bits(0x3f80_0001), -0.0, 3.0e38]),
            vec![0x7f, 0x80, 0x00, 0xff],
        );
        // Nearest (CUDA 13.5: "rounds an exact midpoint up"): 1.5 -> 2 (0x80), -1.4 -> 1
        // (0x7f); 1e300 saturates to 2^127 (0xfe); -1e-300 is clipped to 2^-127.
        bits(
            "cuda:__nv_cvt_double_to_e8m0(x, __NV_SATFINITE, cudaRoundNearest)",
            doubles(&[1.5, -1.4, 1e300, -1e-300]),
            vec![0x80, 0x7f, 0xfe, 0x00],
        );
        // Back into bfloat16: 0xff "-> 0x7FFF", 0x00 the subnormal 2^-127 (0x0040), 0x80 2.0.
        bits(
            "cuda:__nv_cvt_e8m0_to_bf16raw(x)",
            vec![0xff, 0x00, 0x80],
            halves(&[0x7fff, 0x0040, 0x4000]),
        );
        // bfloat16: 0x3f808001 is just above the tie 0x3f808000: nearest gives 0x3f81, toward
        // zero 0x3f80; NaN the canonical 0x7fff (cvt.rz.bf16.f32 on sm_90).
        let odd = f32::from_bits(0x3f80_8001);
        bits("cuda:__float2bfloat16", floats(&[odd]), halves(&[0x3f81]));
        bits(
            "cuda:__float2bfloat16_rz(x)",
            floats(&[odd, -f32::NAN]),
            halves(&[0x3f80, 0x7fff]),
        );
        // "Low 16 bits of the return value correspond to the input a": a pair's element 0.
        bits(
            "cuda:__floats2bfloat162_rn",
            floats(&[1.0, -2.0]),
            halves(&[0x3f80, 0xc000]),
        );
        // bfloat16 -> integers: NaN gives 0, into long long 0x8000000000000000; 2.5 to even.
        bits(
            "cuda:__bfloat162int_rn",
            halves(&[0x7fc0, 0x4020]),
            [0i32, 2].iter().flat_map(|x| x.to_le_bytes()).collect(),
        );
        bits(
            "cuda:__bfloat162ll_rn",
            halves(&[0x7fc0]),
            i64::MIN.to_le_bytes().to_vec(),
        );
        bits(
            "cuda:__bfloat162char_rz",
            halves(&[0xc2fe, 0x4300]),
            vec![0x81, 0x7f],
        );
        bits(
            "cuda:__short2half_rd",
            [2049i16, -2049]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
            halves(&[0x6800, 0xe801]),
        );
        // `crt/mma.h`'s `nvcuda::wmma::__float_to_tf32`, an `asm` of `cvt.rna.tf32.f32`: the
        // ties 1 + 2^-11 and -(1 + 2^-11) away from zero, to +-(1 + 2^-10).
        bits(
            "cuda:nvcuda::wmma::__float_to_tf32(x)",
            floats(&[1.0 + 1.0 / 2048.0, -(1.0 + 1.0 / 2048.0), 3.0]),
            floats(&[1.0 + 1.0 / 1024.0, -(1.0 + 1.0 / 1024.0), 3.0]),
        );
    }

    /// WGSL 15.7.6, the Note's examples, one by one.
    /// What sm_90 gives where the PTX ISA leaves the bits open (measured, `docs/ptx.md`),
    /// values from that measurement: the canonical NaN between .f32, .f16 and .bf16; no flush
    /// of an .f32 operand into .f16 under `.ftz`; a double tiny before rounding flushed into
    /// .f32; and the 64-bit NaN rule from bfloat16 (a listed spelling Cranelift once panicked
    /// on).
    #[test]
    fn ptx_gives_the_hardware_bits() {
        let jit = Jit::new().unwrap();
        let f = f32::from_bits;
        // 0x7fc00001, -NaN and a signalling NaN all give 0x7fff; other values as before.
        let src = [f(0x7fc0_0001), f(0xffc0_0000), f(0x7f80_0001), 1.5];
        run(
            &jit,
            "ptx:cvt.rn.f16.f32",
            &src,
            &halves([0x7fff, 0x7fff, 0x7fff, 0x3e00]),
        );
        let bf16 = [0x7fffu16, 0x7fff, 0x7fff, 0x3fc0].map(clconv::jit::BFloat);
        run(&jit, "ptx:cvt.rz.bf16.f32", &src, &bf16);
        // Into float, compared as bits (a NaN is not equal to itself).
        let bits = |name: &str, src: &[u16], want: &[u32]| {
            let src: Vec<u8> = src.iter().flat_map(|x| x.to_le_bytes()).collect();
            let want: Vec<u8> = want.iter().flat_map(|x| x.to_le_bytes()).collect();
            same_bits(&jit, name, &src, &want);
        };
        let canonical = 0x7fff_ffff;
        bits(
            "ptx:cvt.f32.f16",
            &[0x7e01, 0xfc01, 0x3c00],
            &[canonical, canonical, 0x3f80_0000],
        );
        bits("cuda:__half2float", &[0xfe00], &[canonical]);
        // `.ftz` into .f16: the subnormal operand rounds up (down) to the smallest half.
        run(&jit, "ptx:cvt.rp.ftz.f16.f32", &[f(1)], &halves([0x0001]));
        run(
            &jit,
            "ptx:cvt.rm.ftz.f16.f32",
            &[f(0x8000_0001)],
            &halves([0x8001]),
        );
        // A double just below 2^-126 that rounds to it is flushed; 2^-126 itself is not.
        let d = f64::from_bits;
        for mode in ["rn", "rm", "rp"] {
            run(
                &jit,
                &format!("ptx:cvt.{mode}.ftz.f32.f64"),
                &[
                    d(0x380f_ffff_e000_0000),
                    d(0xb80f_ffff_e000_0000),
                    d(0x3810_0000_0000_0000),
                ],
                &[0.0f32, -0.0, f(0x0080_0000)],
            );
        }
        let src = [0x3f80u16, 0xff80, 0x7fc0].map(clconv::jit::BFloat);
        run(
            &jit,
            "ptx:cvt.rni.s64.bf16",
            &src,
            &[1i64, i64::MIN, i64::MIN],
        );
    }

    /// bool in every shader language: WGSL 17.1.2 ("false if e is a zero value", -0.0 one;
    /// "1 if e is true"), GLSL 4.60 5.4.1 ("0 and 0.0 are converted to false, and nonzero
    /// values are converted to true"; "true is converted to 1 or 1.0"), HLSL and Metal (C's
    /// rule: compares unequal to 0). So -0.0 is false, NaN and the smallest subnormal are
    /// true. Bytes in, bytes out; expected values by hand.
    #[test]
    fn bool_as_each_language_says() {
        let jit = Jit::new().unwrap();
        let bytes = |name: &str, src: Vec<u8>, want: Vec<u8>| {
            let mut got = vec![0xaau8; want.len()];
            let kernel = jit.compile(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            kernel.run_bytes(Layout::Packed, &src, &mut got).unwrap();
            assert_eq!(got, want, "{name} through the JIT");
            got.fill(0xaa);
            reference::evaluate(&parse(name), Layout::Packed, &src, &mut got).unwrap();
            assert_eq!(got, want, "{name} through the reference");
        };
        let f32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        // NaN, -0.0, +0.0, the smallest subnormal, -inf, -2.5, 1.0, the largest finite.
        let floats = [
            0x7fc0_0000,
            0x8000_0000,
            0,
            1,
            0xff80_0000,
            0xc020_0000,
            0x3f80_0000,
            0x7f7f_ffff,
        ];
        let truth = vec![1, 0, 0, 1, 1, 1, 1, 1];
        bytes("wgsl:bool(f32)", f32s(&floats[..4]), truth[..4].to_vec());
        bytes("glsl:bvec4(vec4)", f32s(&floats[..4]), truth[..4].to_vec());
        bytes("hlsl:bool4(float4)", f32s(&floats), truth.clone());
        bytes("msl:bool4(float4)", f32s(&floats[4..]), truth[4..].to_vec());
        // Half: NaN 0x7e00, -0.0, +0.0, the smallest subnormal.
        let halves: Vec<u8> = [0x7e00u16, 0x8000, 0, 1]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        bytes("wgsl:vec4<bool>(vec4<f16>)", halves, vec![1, 0, 0, 1]);
        // Integers: zero is the only false.
        let ints = f32s(&[0, 1, 0xffff_ffff, 0x8000_0000]);
        bytes("wgsl:vec4<bool>(vec4<i32>)", ints.clone(), vec![0, 1, 1, 1]);
        bytes("glsl:bvec4(uvec4)", ints, vec![0, 1, 1, 1]);
        // bool -> numbers: 1 (1.0) and 0; a byte but 0 is true.
        let b = vec![1u8, 0, 2, 0xff];
        bytes(
            "wgsl:vec4<f32>(vec4<bool>)",
            b.clone(),
            f32s(&[0x3f80_0000, 0, 0x3f80_0000, 0x3f80_0000]),
        );
        bytes("glsl:ivec4(bvec4)", b.clone(), f32s(&[1, 0, 1, 1]));
        bytes(
            "hlsl:half4(bool4)",
            b.clone(),
            [0x3c00u16, 0, 0x3c00, 0x3c00]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        );
        bytes(
            "hlsl:double2(bool2)",
            vec![0, 7],
            [0u64, 0x3ff0_0000_0000_0000]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        );
        bytes("msl:uchar4(bool4)", b, vec![1, 0, 1, 1]);
    }

    #[test]
    fn wgsl_worked_examples() {
        let jit = Jit::new().unwrap();
        run(&jit, "wgsl:u32(f32)", &[3.9f32], &[3u32]);
        run(&jit, "wgsl:u32(f32)", &[-1f32], &[0u32]);
        run(&jit, "wgsl:u32(f32)", &[1e20f32], &[4294967040u32]);
        run(&jit, "wgsl:i32(f32)", &[-3.9f32], &[-3i32]);
        run(&jit, "wgsl:i32(f32)", &[1e20f32], &[2147483520i32]);
        run(&jit, "wgsl:i32(f32)", &[-1e20f32], &[-2147483648i32]);
    }

    /// The rule at its edges, by hand: the largest f32 below 2^31 is 2^31 - 128, the next is 2^31;
    /// a half infinity gives ±65504 (truncate(±inf) is ±inf, clamped to the largest half), and
    /// NaN gives clconv's 0.
    #[test]
    fn wgsl_edges() {
        let jit = Jit::new().unwrap();
        let below = f32::from_bits(0x4eff_ffff); // 2147483520
        let at = f32::from_bits(0x4f00_0000); // 2147483648
        run(
            &jit,
            "wgsl:vec4<i32>(vec4<f32>)",
            &[below, at, f32::INFINITY, f32::NAN],
            &[2147483520i32, 2147483520, 2147483520, 0],
        );
        run(
            &jit,
            "wgsl:vec2u(vec2f)",
            &[4294967040f32, f32::NEG_INFINITY],
            &[4294967040u32, 0],
        );
        // f16 bits: +inf, -inf, NaN, -65504.
        run(
            &jit,
            "wgsl:vec4<i32>(vec4<f16>)",
            &halves([0x7c00, 0xfc00, 0x7e00, 0xfbff]),
            &[65504i32, -65504, 0, -65504],
        );
        run(
            &jit,
            "wgsl:vec2<u32>(vec2<f16>)",
            &halves([0x7c00, 0xfc00]),
            &[65504u32, 0],
        );
        // Into floats: nearest-even; i32 <-> u32: the same bits.
        run(&jit, "wgsl:f32(i32)", &[16_777_217i32], &[16_777_216f32]);
        run(&jit, "wgsl:u32(i32)", &[-1i32], &[u32::MAX]);
        run(&jit, "wgsl:bitcast<f32>(u32)", &[0x3f80_0000u32], &[1.0f32]);
    }

    /// Rust's `as` (the Reference, "Numeric cast") and WebAssembly's `trunc_sat` and
    /// `convert` (core spec, "Numerics"), values by hand from their words.
    #[test]
    fn rust_and_wasm_casts() {
        let jit = Jit::new().unwrap();
        run(
            &jit,
            "rust:f32 as i8",
            &[f32::NAN, 300.0, -300.0, -1.9],
            &[0i8, 127, -128, -1],
        );
        run(&jit, "rust:i32 as i8", &[300i32, -129], &[44i8, 127]);
        run(
            &jit,
            "wasm:i32.trunc_sat_f32_u",
            &[-1.5f32, 5e9, f32::NAN],
            &[0u32, u32::MAX, 0],
        );
        run(
            &jit,
            "wasm:i64.trunc_sat_f64_s",
            &[-1e300f64, 9.3e18, -0.99],
            &[i64::MIN, i64::MAX, 0],
        );
        // 2^24 + 1 rounds to even: 16777216.
        run(
            &jit,
            "wasm:f32.convert_i32_s",
            &[16_777_217i32],
            &[16_777_216f32],
        );
    }

    /// Direct3D's ftoi/ftou (D3D 11.3, 22.13.3-4): clamped, toward zero, NaN -> 0; values worked
    /// out from the quoted ranges.
    #[test]
    fn hlsl_d3d_rules() {
        let jit = Jit::new().unwrap();
        run(
            &jit,
            "hlsl:int4(float4)",
            &[f32::NAN, 3e9, -1.9, -3e9],
            &[0i32, i32::MAX, -1, i32::MIN],
        );
        run(
            &jit,
            "hlsl:(uint2)float2",
            &[-0.5f32, 1e20],
            &[0u32, u32::MAX],
        );
        // 3.2.2: into a narrower float toward zero, finite overflow to the largest half.
        // 1.0009765625 + a little truncates to 1.0 (0x3c00); 1e6 gives 65504 (0x7bff).
        run(
            &jit,
            "hlsl:half2(float2)",
            &[1.0009f32, 1e6],
            &halves([0x3c00, 0x7bff]),
        );
    }
}

#[test]
fn each_spelling_is_the_request_its_rules_make() {
    let cases = [
        ("wgsl:i32(f32)", "convert_int_satsrc(float)"),
        (
            "wgsl: vec4 < i32 > ( vec4 < f32 > )",
            "convert_int4_satsrc(float4)",
        ),
        ("wgsl:vec3i(vec3h)", "convert_int3_satsrc(half3)"),
        // WGSL's rule is `_sat` where the source holds every destination bound exactly.
        ("wgsl:vec4<f32>(vec4<i32>)", "convert_float4_rte(int4)"),
        ("wgsl:f16(f32)", "convert_half_rte(float)"),
        ("wgsl:i32(u32)", "convert_int(uint)"),
        ("wgsl:bitcast<vec2<f16>>(u32)", "as_half2(uint)"),
        // The identity overload `bitcast<T>(e: T) -> T`, vec3<f16> included.
        ("wgsl:bitcast<vec3<f16>>(vec3<f16>)", "as_half3(half3)"),
        ("wgsl:bitcast<u32>(u32)", "as_uint(uint)"),
        // WebAssembly's sign-extension operators: the low bits, sign-extended.
        ("wasm:i32.extend8_s", "convert_int(convert_char(int))"),
        ("wasm:i64.extend32_s", "convert_long(convert_int(long))"),
        ("hlsl:int(float)", "convert_int_sat(float)"),
        ("hlsl:(int4)float4", "convert_int4_sat(float4)"),
        (
            "hlsl:vector<uint,2>(vector<double,2>)",
            "convert_uint2_sat(double2)",
        ),
        ("hlsl:half2(float2)", "convert_half2_rtz(float2)"),
        ("hlsl:float(double)", "convert_float_rte(double)"),
        ("hlsl:asuint(float3)", "as_uint3(float3)"),
        ("hlsl:int16_t(int)", "convert_short(int)"),
        ("glsl:ivec4(vec4)", "convert_int4_sat(float4)"),
        ("glsl:uint(float)", "convert_uint_sat(float)"),
        ("glsl:float16_t(float)", "convert_half_rte(float)"),
        ("glsl:u8vec2(i16vec2)", "convert_uchar2(short2)"),
        ("glsl:floatBitsToInt(vec4)", "as_int4(float4)"),
        ("glsl:uint16BitsToFloat16(u16vec2)", "as_half2(ushort2)"),
        ("msl:static_cast<int4>(float4)", "convert_int4_sat(float4)"),
        ("msl:half4(int4)", "convert_half4_rte(int4)"),
        ("msl:as_type<float4>(int4)", "as_float4(int4)"),
        ("msl:(uchar)int", "convert_uchar(int)"),
        // Rust's `as`: saturating toward zero into integers, the low bits between integers.
        ("rust:f32 as i8", "convert_char_sat(float)"),
        ("rust:f16 as u32", "convert_uint_sat(half)"),
        ("rust: u64  as  f32 ", "convert_float_rte(ulong)"),
        ("rust:i32 as u8", "convert_uchar(int)"),
        ("rust:f64 as f16", "convert_half_rte(double)"),
        // WebAssembly: signless integers read as the suffix says.
        ("wasm:i32.trunc_sat_f32_u", "convert_uint_sat(float)"),
        ("wasm:i64.trunc_sat_f64_s", "convert_long_sat(double)"),
        ("wasm:f64.convert_i64_u", "convert_double_rte(ulong)"),
        ("wasm:i32.wrap_i64", "convert_int(long)"),
        ("wasm:i64.extend_i32_u", "convert_ulong(uint)"),
        ("wasm:f32.demote_f64", "convert_float_rte(double)"),
        ("wasm:f64.promote_f32", "convert_double_rte(float)"),
        ("wasm:f64.reinterpret_i64", "as_double(long)"),
        ("wasm:i32.trunc_f32_s", "convert_int_trap(float)"),
        // SIMD, lanes in place (SIMD.md): `narrow` saturates signed lanes, `a` then `b`.
        ("wasm:i32x4.trunc_sat_f32x4_u", "convert_uint4_sat(float4)"),
        (
            "wasm:i32x4.relaxed_trunc_f32x4_s",
            "convert_int4_sat(float4)",
        ),
        ("wasm:f32x4.convert_i32x4_s", "convert_float4_rte(int4)"),
        ("wasm:i8x16.narrow_i16x8_u", "convert_uchar16_sat(short16)"),
        ("wasm:i16x8.narrow_i32x4_s", "convert_short8_sat(int8)"),
        // PTX cvt: float -> integer clamps; NaN gives 0 but from f64 or into 64 bits.
        ("ptx:cvt.rni.sat.s8.f32", "convert_char_sat_rte(float)"),
        ("ptx:cvt.rzi.s32.f32", "convert_int_sat_rtz(float)"),
        ("ptx:cvt.rzi.s64.f64", "convert_long_satmsb_rtz(double)"),
        ("ptx:cvt.rmi.u32.f64", "convert_uint_satmsb_rtn(double)"),
        ("ptx:cvt.rpi.u64.f16", "convert_ulong_satmsb_rtp(half)"),
        ("ptx:cvt.rz.f16.f32", "convert_half_nancanon_rtz(float)"),
        ("ptx:cvt.rp.f32.s64", "convert_float_rtp(long)"),
        ("ptx:cvt.f32.f16", "convert_float_nancanon_rte(half)"),
        ("ptx:cvt.s8.s32", "convert_char(int)"),
        ("ptx:cvt.sat.u8.s32", "convert_uchar_sat(int)"),
        ("ptx:cvt.rn.sat.f16.f32", "convert_half_clamp01_rte(float)"),
        ("ptx:cvt.sat.f32.f32", "convert_float_clamp01_rte(float)"),
        ("ptx:cvt.rz.relu.bf16.f32", "convert_bfloat_relu_rtz(float)"),
        (
            "ptx:cvt.rn.satfinite.relu.bf16.f32",
            "convert_bfloat_sat_relu_rte(float)",
        ),
        ("ptx:cvt.rpi.ftz.s32.f32", "convert_int_sat_ftz_rtp(float)"),
        ("ptx:cvt.rn.ftz.f32.f64", "convert_float_ftz_rte(double)"),
        ("ptx:cvt.rn.ftz.f32.s32", "convert_float_rte(int)"),
        ("ptx:cvt.f32.bf16", "convert_float_rte(bfloat)"),
        ("cuda:__float2int_rn", "convert_int_sat_rte(float)"),
        ("cuda:__double2float_ru", "convert_float_rtp(double)"),
        ("cuda:__float2half_rz", "convert_half_nancanon_rtz(float)"),
        ("cuda:__half2float", "convert_float_nancanon_rte(half)"),
        ("cuda:__double2ll_rd", "convert_long_satmsb_rtn(double)"),
        // cuda_bf16.h and cuda_fp16.h: the `cvt` each compiles to; the pairs at width 2.
        (
            "cuda:__float2bfloat16_rz",
            "convert_bfloat_nancanon_rtz(float)",
        ),
        ("cuda:__bfloat162ll_rn", "convert_long_satmsb_rte(bfloat)"),
        (
            "cuda:__floats2bfloat162_rn",
            "convert_bfloat2_nancanon_rte(float2)",
        ),
        ("cuda:__half22float2", "convert_float2_nancanon_rte(half2)"),
        ("cuda:__ushort2half_ru(x)", "convert_half_rtp(ushort)"),
        // cuda_fp8.h, cuda_fp6.h, cuda_fp4.h: by the headers' code.
        (
            "cuda:__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)",
            "convert_fp8e4m3_sat_nancanon_rte(float)",
        ),
        (
            "cuda:__nv_cvt_double2_to_fp8x2(v, __NV_NOSAT, __NV_E4M3)",
            "convert_fp8e4m3x2_rte(double2)",
        ),
        (
            "cuda:__nv_cvt_bfloat16raw_to_fp8(b, __NV_NOSAT, __NV_E5M2)",
            "convert_fp8e5m2_nancanon_rte(bfloat)",
        ),
        (
            "cuda:__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundZero)",
            "convert_fp6e3m2_sat_rtz(float)",
        ),
        (
            "cuda:__nv_cvt_halfraw_to_fp4(x, __NV_E2M1, cudaRoundMinInf)",
            "convert_fp4e2m1_sat_rtn(half)",
        ),
        (
            "cuda:__nv_cvt_bfloat16raw2_to_fp4x2(x, __NV_E2M1, cudaRoundNearest)",
            "pack_fp4(convert_fp4e2m1x2_sat_rte(bfloat2))",
        ),
        (
            "cuda:__nv_cvt_fp4x2_to_halfraw2(x, __NV_E2M1)",
            "convert_half2(unpack_fp4(uchar))",
        ),
        (
            "cuda:__nv_cvt_fp4_to_halfraw(x, __NV_E2M1)",
            "convert_half(fp4e2m1)",
        ),
        (
            "cuda:__nv_cvt_bfloat162raw_to_e8m0x2(x, __NV_SATFINITE, cudaRoundZero)",
            "convert_fp8e8m0x2_sat_abs_rtz(bfloat2)",
        ),
        (
            "cuda:__nv_cvt_e8m0_to_bf16raw(x)",
            "convert_bfloat_nancanon(fp8e8m0)",
        ),
        (
            "ptx:cvt.rp.ue8m0x2.f32",
            "convert_fp8e8m0x2_abs_rtp(float2)",
        ),
        (
            "ptx:cvt.rz.satfinite.ue8m0x2.bf16x2",
            "convert_fp8e8m0x2_sat_abs_rtz(bfloat2)",
        ),
        (
            "ptx:cvt.rn.bf16x2.ue8m0x2",
            "convert_bfloat2_nancanon_rte(fp8e8m0x2)",
        ),
        (
            "cuda:__nv_cvt_fp8x2_to_halfraw2(x, __NV_E5M2)",
            "convert_half2_nancanon(fp8e5m2x2)",
        ),
    ];
    for (spelling, canonical) in cases {
        assert_eq!(parse(spelling).to_string(), canonical, "{spelling}");
        // The canonical name parses back to the same request (rules included).
        let back = Request::parse(canonical, Extensions::with_fp16()).unwrap();
        assert_eq!(back, parse(spelling), "{canonical}");
    }
}

#[test]
fn what_a_language_does_not_have_is_a_typed_error() {
    let err = |name: &str| Request::parse(name, Extensions::default()).unwrap_err();
    for (name, says) in [
        ("wgsl:bitcast<u32>(bool)", "none of them bool"),
        ("hlsl:asint(bool)", "a bool has no bits to reinterpret"),
        (
            "msl:as_type<char>(bool)",
            "a bool has no bits to reinterpret",
        ),
        ("wgsl:i64(f32)", "WGSL has no such type"),
        ("wgsl:vec4<i32>(vec2<f32>)", "keeps the component count"),
        ("wgsl:bitcast<vec3<i32>>(vec4<u32>)", "same component count"),
        ("wgsl:bitcast<vec4<f32>>(vec3<u32>)", "same component count"),
        ("wgsl:bitcast<vec3<f16>>(vec3<u32>)", "(17.2.1)"),
        ("wgsl:bitcast<f16>(vec2<u8>)", "unknown type"),
        ("wgsl:bitcast<vec2<f16>>(vec2<i32>)", "vec4<f16> <-> vec2"),
        ("wgsl:i32 f32", "write e.g."),
        ("wgsl:", "nothing follows"),
        ("hlsl:f32tof16(half)", "takes float"),
        ("hlsl:f16tof32(float2)", "takes uint2"),
        ("hlsl:min16float(float)", "min-precision"),
        ("glsl:packHalf2x16(vec3)", "takes a vec2"),
        ("glsl:unpackHalf2x16(int)", "takes a uint"),
        ("glsl:floatBitsToInt(ivec2)", "takes vec2 values"),
        ("msl:int(double)", "Metal has no double"),
        ("fortran:int(float)", "unknown language"),
        ("cuda:int(float)", "not one of the conversion intrinsics"),
        ("cuda:__float_to_tf32(x)", "namespace `nvcuda::wmma`"),
        (
            "ptx:cvt.rn.relu.f32.f64",
            "`.relu` applies to .f16 and .bf16",
        ),
        ("ptx:cvt.rna.rz.tf32.f32", "a second rounding modifier"),
        ("ptx:cvt.rna.relu.tf32.f32", "not on the `cvt.rna"),
        ("ptx:cvt.rm.tf32.f32", "rounds with .rn or .rz only"),
        ("ptx:cvt.rn.e3m2x2.f32", "needs .satfinite"),
        ("ptx:cvt.rz.satfinite.e3m2x2.f32", "rounds with .rn only"),
        (
            "ptx:cvt.rn.satfinite.ue8m0x2.f32",
            "rounds with .rz or .rp only",
        ),
        ("ptx:cvt.rz.relu.ue8m0x2.f32", "syntax line has none"),
        ("ptx:cvt.rn.relu.bf16x2.ue8m0x2", "syntax line has none"),
        // The packed pairs' syntax lines (PTX ISA 9.7.9.21).
        ("ptx:cvt.rn.e4m3x2.f32", "needs .satfinite"),
        ("ptx:cvt.rz.satfinite.e4m3x2.f32", "rounds with .rn only"),
        (
            "ptx:cvt.rn.satfinite.f16x2.f32",
            "no saturating conversion into half",
        ),
        ("ptx:cvt.rn.satfinite.f16x2.e4m3x2", "no modifier"),
        ("ptx:cvt.f16x2.e5m2x2", "needs its rounding modifier .rn"),
        ("ptx:cvt.rn.ftz.f16x2.f32", "no modifier"),
        ("ptx:cvt.rn.e2m1x2.f32", "needs .satfinite"),
        ("ptx:cvt.rz.satfinite.e2m1x2.f32", "rounds with .rn only"),
        ("ptx:cvt.rn.satfinite.e2m1x2.f64", "unknown type `.e2m1x2`"),
        ("ptx:cvt.rn.e2m1x2.f16x2", "needs .satfinite"),
        ("ptx:cvt.rz.satfinite.e2m3x2.bf16x2", "rounds with .rn only"),
        ("ptx:cvt.rn.bf16x2.e2m1x2", "not yet PTX 9.2"),
        ("ptx:cvt.rn.satfinite.f16x2.e2m1x2", "no modifier"),
        ("ptx:cvt.rna.f16.f32", ".tf32"),
        ("ptx:cvt.rn.sat.bf16.f32", "[0.0, 1.0] for .f16, .f32"),
        ("ptx:cvt.rn.sat.relu.f16.f32", "which has no .sat"),
        ("ptx:cvt.rn.ftz.f16.f64", "needs an .f32"),
        ("ptx:cvt.rn.satfinite.f16.f32", "does not yet"),
        ("ptx:cvt.ftz.s32.s8", "needs an .f32"),
        ("ptx:cvt.rn.s32.f32", ".rni, .rzi, .rmi or .rpi"),
        // The ISA's rounding rules: required where a conversion can be inexact or is float ->
        // integer, illegal elsewhere; `.sat` only where something can saturate.
        ("ptx:cvt.s32.f32", "Integer rounding is required"),
        ("ptx:cvt.f32.s32", "Floating-point rounding is required"),
        ("ptx:cvt.f16.f32", "loss of precision"),
        ("ptx:cvt.bf16.f16", "loss of precision"),
        ("ptx:cvt.rn.f32.f16", "Floating-point rounding is illegal"),
        ("ptx:cvt.rz.f64.f32", "every .f32 is an .f64"),
        (
            "ptx:cvt.rm.ftz.sat.f32.bf16",
            "Floating-point rounding is illegal",
        ),
        ("ptx:cvt.rn.s32.s16", "takes no rounding modifier"),
        ("ptx:cvt.rni.f32.s32", "Integer rounding is illegal"),
        ("ptx:cvt.rni.f16.f32", "Integer rounding is illegal"),
        ("ptx:cvt.sat.s32.s16", "saturation is not possible"),
        ("ptx:cvt.sat.u32.u8", "saturation is not possible"),
        ("ptx:cvt.sat.s64.u32", "saturation is not possible"),
        ("ptx:cvt.sat.f32.bf16", "Illegal modifier '.sat'"),
        // `.relu` and `.satfinite` are on `cvt.frnd2{.relu}{.satfinite}.{f16,bf16}.f32` only
        // (.frnd2 = .rn, .rz; no .ftz, no .sat): the fuzzer's finding-11 was the first.
        ("ptx:cvt.relu.f16.f16", "its source is .f32, not .f16"),
        ("ptx:cvt.rn.relu.bf16.f64", "its source is .f32, not .f64"),
        ("ptx:cvt.rm.relu.f16.f32", "it rounds with .rn or .rz"),
        ("ptx:cvt.rp.satfinite.bf16.f32", "it rounds with .rn or .rz"),
        ("ptx:cvt.rn.ftz.relu.bf16.f32", "which has no .ftz"),
        ("ptx:cvt.rz.sat.relu.f16.f32", "which has no .sat"),
        ("ptx:cvt.rn.sat.f16.bf16", "Illegal modifier '.sat'"),
        ("cuda:__int2double_rz", "only `__int2double_rn`"),
        ("cuda:__uint2double_rd", "only `__uint2double_rn`"),
        ("cuda:__double2half_rn", "no rounding suffix"),
        ("cuda:__double2bfloat16_rz", "no rounding suffix"),
        (
            "cuda:__char2half_rn",
            "not one of the conversion intrinsics",
        ),
        ("cuda:__float2half2_rn", "broadcast"),
        ("cuda:__float2int_rn(x, y)", "takes one argument"),
        ("cuda:__float2int_rn(1.5)", "C identifier"),
        (
            "cuda:__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3)",
            "keeps the sign of an overflow",
        ),
        (
            "cuda:__nv_cvt_fp4x2_to_halfraw2(x, __NV_E2M1, cudaRoundZero)",
            "is called as one of",
        ),
        (
            "cuda:__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E2M1)",
            "is called as one of",
        ),
        ("cuda:__nv_cvt_float_to_fp8", "is called as one of"),
        (
            "cuda:__nv_cvt_fp8_to_bf16raw(x, __NV_E4M3)",
            "not one of the `cuda_fp8.h`",
        ),
        (
            "cuda:__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3",
            "ends with `)`",
        ),
        ("rust:f32 to i8", "expected `<type> as <type>`"),
        ("rust:f32 as i128", "128-bit"),
        ("wasm:i16x8.trunc_f16x8_s", "defines no result"),
        ("wasm:i32x4.extmul_low_i16x8_s", "arithmetic"),
    ] {
        let e = err(name);
        assert!(
            matches!(
                e,
                RequestError::Language { .. } | RequestError::UnknownLanguage { .. }
            ),
            "{name}: {e:?}"
        );
        assert!(e.to_string().contains(says), "{name}: {e}");
    }
    // Long and binary input is refused before any work.
    let long = format!("wgsl:{}", "v".repeat(10_000));
    assert!(matches!(err(&long), RequestError::TooLong { .. }));
    assert!(matches!(
        err("wgsl:i32(f\u{0}32)"),
        RequestError::BadCharacter { .. }
    ));
}

/// Every spelling a language lists parses to the request listed beside it, and the lists
/// cover each language's types at every width.
#[test]
fn every_listed_spelling_parses() {
    for language in Language::ALL {
        let all = language.spellings();
        // WebAssembly's 25 scalar instructions; the others' constructors at every width.
        let least = if language == Language::Wasm { 25 } else { 100 };
        assert!(all.len() >= least, "{language}: {}", all.len());
        for (spelling, request) in &all {
            assert_eq!(&parse(spelling), request, "{spelling}");
        }
    }
}

/// PTX's `cvt` on every pair of its types (the scalar ones and the packed pairs) with every
/// sequence of up to three modifiers: a spelling the front end accepts is one `clconv list
/// ptx:` lists (the ISA's syntax lines, by hand in `src/languages/ptx.rs`), so no modifier
/// reaches a line that lacks it. What the `parse_name` fuzzer checks on random text, here on
/// the whole grammar up to that length (1,259,020 spellings).
#[test]
fn ptx_accepts_only_what_it_lists() {
    use std::collections::HashSet;
    let listed: HashSet<Request> = Language::Ptx
        .spellings()
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    let types = [
        "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "tf32",
        "f16x2", "bf16x2", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2", "ue8m0x2", "b16",
        "b32",
    ];
    let modifiers = [
        "rn",
        "rz",
        "rm",
        "rp",
        "rna",
        "rni",
        "rzi",
        "rmi",
        "rpi",
        "sat",
        "satfinite",
        "relu",
        "ftz",
    ];
    let mut sequences: Vec<Vec<&str>> = vec![vec![]];
    for length in 1..=3 {
        let longer: Vec<Vec<&str>> = sequences
            .iter()
            .filter(|s| s.len() == length - 1)
            .flat_map(|s| {
                modifiers.iter().map(move |m| {
                    let mut t = s.clone();
                    t.push(m);
                    t
                })
            })
            .collect();
        sequences.extend(longer);
    }
    let (mut tried, mut accepted) = (0, 0);
    for d in types {
        for a in types {
            for seq in &sequences {
                let mut text = String::from("cvt");
                for m in seq {
                    text.push('.');
                    text.push_str(m);
                }
                text.push_str(&format!(".{d}.{a}"));
                tried += 1;
                if let Ok(r) = Language::Ptx.parse(&text) {
                    accepted += 1;
                    assert!(
                        listed.contains(&r),
                        "ptx:{text} is accepted as {r}, which `clconv list ptx:` does not list"
                    );
                }
            }
        }
    }
    assert_eq!(tried, 1_259_020);
    // Every listed spelling is reached (with its modifiers in the listed order or another).
    assert!(
        accepted >= listed.len(),
        "{accepted} accepted, {} listed",
        listed.len()
    );
}

/// Random text after every prefix (and some near-misses) is a request or a typed error, never
/// a panic: the front ends slice only what they have checked.
#[test]
fn random_text_never_panics() {
    let alphabet: &[u8] = b"()<>,.:_ abcdefghijklmnopqrstuvwxyz0123456789vecfiuhs";
    let prefixes = [
        "wgsl:", "hlsl:", "glsl:", "msl:", "rust:", "wasm:", "ptx:", "cuda:", "WGSL:", ":", "x:",
    ];
    let mut x = 0x853c_49e6_748f_ea9bu64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..40_000 {
        let len = (next() % 24) as usize;
        let mut text = String::from(prefixes[i % prefixes.len()]);
        for _ in 0..len {
            text.push(alphabet[(next() % alphabet.len() as u64) as usize] as char);
        }
        let _ = Request::parse(&text, Extensions::default());
    }
    // And every listed spelling cut at every byte.
    for language in Language::ALL {
        for (spelling, _) in language.spellings().iter().step_by(7) {
            for cut in 0..spelling.len() {
                let _ = Request::parse(&spelling[..cut], Extensions::default());
            }
        }
    }
}

/// Metal's `as_type` takes "any scalar or vector data type ... of the same size" (section 2.14;
/// a 3-component vector is the size of 4): every such pair of Metal's types parses and
/// `clconv list msl:` lists it (the fuzzer found `as_type<long>(float2)` accepted, not listed),
/// and every other pair is refused.
#[test]
fn metal_as_type_is_every_pair_of_one_size() {
    let scalars = [
        ("char", 8),
        ("uchar", 8),
        ("short", 16),
        ("ushort", 16),
        ("int", 32),
        ("uint", 32),
        ("long", 64),
        ("ulong", 64),
        ("half", 16),
        ("float", 32),
    ];
    let types: Vec<(String, usize)> = scalars
        .iter()
        .flat_map(|&(name, bits)| {
            [("", 1), ("2", 2), ("3", 4), ("4", 4)]
                .map(|(suffix, lanes)| (format!("{name}{suffix}"), bits * lanes / 8))
        })
        .collect();
    let listed: std::collections::HashSet<String> = Language::Msl
        .spellings()
        .into_iter()
        .map(|(spelling, _)| spelling)
        .collect();
    let mut accepted = 0;
    for (dst, dst_bytes) in &types {
        for (src, src_bytes) in &types {
            let spelling = format!("as_type<{dst}>({src})");
            let parsed = Language::Msl.parse(&spelling);
            if dst_bytes == src_bytes {
                assert_eq!(
                    parsed.map(|r| r.to_string()),
                    Ok(format!("as_{dst}({src})")),
                    "{spelling}"
                );
                assert!(
                    listed.contains(&format!("msl:{spelling}")),
                    "{spelling} is not listed"
                );
                accepted += 1;
            } else {
                assert!(parsed.is_err(), "{spelling}");
                assert!(
                    !listed.contains(&format!("msl:{spelling}")),
                    "{spelling} is listed"
                );
            }
        }
    }
    assert!(accepted > 300, "{accepted}");
    assert!(listed.contains("msl:as_type<long>(float2)"));
}
