//! MX block kernels (`Jit::compile_blocks`) against the reference's block quantiser
//! (`clconv::reference::mx_quantize`, written from the OCP text): every request, on blocks that
//! cover every scale exponent and the rules' thresholds, all-equal and single-outlier blocks,
//! NaN, infinity and zero blocks, subnormals and values that vanish under a large scale; and
//! every (element, scale) pair of every dequantisation.

use clconv::jit::{Fp4E2M1, Fp8E4M3, Fp8E8M0, Jit};
use clconv::mx::MxRequest;
use clconv::mx_kernel::MxError;
use clconv::reference::{mx_dequantize, mx_quantize};
use clconv_verify::mx_blocks;

#[test]
fn every_request_matches_the_reference() {
    let jit = Jit::new().unwrap();
    let mut blocks = 0;
    for request in MxRequest::all() {
        blocks += mx_blocks::check(&jit, &request).unwrap_or_else(|e| panic!("{e}"));
    }
    // The same on every x86-64 flag set (the vector forms' machine code differs by flag set:
    // SSE2 has no `pshufb`, `pminsd` or `blendv`).
    #[cfg(target_arch = "x86_64")]
    for flags in clconv::jit::X64Flags::ALL {
        if flags == clconv::jit::X64Flags::Host {
            continue;
        }
        if !flags.target().runs_here() {
            eprintln!("NOT RUN: this CPU cannot execute code for {}", flags.name());
            continue;
        }
        let jit =
            Jit::with_options(flags, clconv::Extensions::default(), clconv::Rounding::Rte).unwrap();
        for request in MxRequest::all() {
            mx_blocks::check(&jit, &request).unwrap_or_else(|e| panic!("{}: {e}", flags.name()));
        }
    }
    // 54 MX quantisations of at least 8,000 blocks, 18 dequantisations of 2,048 (4,096
    // packed); 6 NVFP4 quantisations of 7 x 17,000 blocks, 6 dequantisations of 7 x 4,096.
    assert!(
        blocks > 54 * 8000 + 18 * 2048 + 6 * 7 * 17_000 + 6 * 7 * 4096,
        "{blocks}"
    );
}

#[test]
fn a_short_last_block_is_a_block_padded_with_zeros() {
    let jit = Jit::new().unwrap();
    let k = jit.compile_blocks("convert_mxfp4e2m1_rte(float)").unwrap();
    let values: Vec<f32> = (0..37).map(|i| (i as f32 - 20.0) * 0.37).collect();
    let (mut e, mut s) = (vec![Fp4E2M1(0); 37], vec![Fp8E8M0(0); 2]);
    k.quantize(&values, &mut e, &mut s).unwrap();
    let mut padded = values.clone();
    padded.resize(64, 0.0);
    let bytes: Vec<u8> = padded.iter().flat_map(|v| v.to_le_bytes()).collect();
    let (mut re, mut rs) = (vec![0u8; 64], vec![0u8; 2]);
    mx_quantize(&k.request(), &bytes, &mut re, &mut rs).unwrap();
    assert_eq!(s.iter().map(|s| s.0).collect::<Vec<_>>(), rs);
    assert_eq!(e.iter().map(|e| e.0).collect::<Vec<_>>(), re[..37]);

    let back = jit.compile_blocks("convert_float(mxfp4e2m1)").unwrap();
    let mut out = vec![0f32; 37];
    back.dequantize(&e, &s, &mut out).unwrap();
    let mut full = vec![0u8; 64 * 4];
    mx_dequantize(&back.request(), &re, &rs, &mut full).unwrap();
    let expected: Vec<f32> = full
        .chunks(4)
        .take(37)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn the_issue_example_and_the_element_rules_by_hand() {
    let jit = Jit::new().unwrap();
    let mut block = [0.5f32; 32];
    block[7] = 1000.0;
    block[8] = -0.0;
    let mut e = [Fp8E4M3(0); 32];
    let mut s = [Fp8E8M0(0)];
    // OCP: 2^(9 - 8) = 2; 1000 / 2 = 500 saturates to 448 (0x7e); 0.5 / 2 = 0.25 = 2^-2 (0x28).
    jit.compile_blocks("convert_mxfp8e4m3(float)")
        .unwrap()
        .quantize(&block, &mut e, &mut s)
        .unwrap();
    assert_eq!((s[0].0, e[7].0, e[0].0, e[8].0), (0x80, 0x7e, 0x28, 0x80));
    // Rounded up: 4 (0x81); 250 rounds to 256 (0x78); 0.125 = 2^-3 (0x20).
    jit.compile_blocks("convert_mxfp8e4m3_rtp(float)")
        .unwrap()
        .quantize(&block, &mut e, &mut s)
        .unwrap();
    assert_eq!((s[0].0, e[7].0, e[0].0), (0x81, 0x78, 0x20));
    // Nearest: 1000 / 448 = 2.23, nearest power 2 (0x80), as OCP's here.
    jit.compile_blocks("convert_mxfp8e4m3_rte(float)")
        .unwrap()
        .quantize(&block, &mut e, &mut s)
        .unwrap();
    assert_eq!(s[0].0, 0x80);
    // A NaN anywhere: the scale 0xff, every element E4M3's NaN 0x7f.
    block[30] = f32::NAN;
    jit.compile_blocks("convert_mxfp8e4m3(float)")
        .unwrap()
        .quantize(&block, &mut e, &mut s)
        .unwrap();
    assert_eq!(s[0].0, 0xff);
    assert!(e.iter().all(|e| e.0 == 0x7f));
    // Back: E4M3 0x7e (448) times 2^(0x80 - 127) = 896; the scale 0xff gives the one NaN.
    let back = jit.compile_blocks("convert_float(mxfp8e4m3)").unwrap();
    let mut v = [0f32; 2];
    back.dequantize(&[Fp8E4M3(0x7e), Fp8E4M3(0xfe)], &[Fp8E8M0(0x80)], &mut v)
        .unwrap();
    assert_eq!(v, [896.0, -896.0]);
    back.dequantize(&[Fp8E4M3(0x7e), Fp8E4M3(0x01)], &[Fp8E8M0(0xff)], &mut v)
        .unwrap();
    assert_eq!(v.map(f32::to_bits), [0x7fc0_0000; 2]);
}

/// Every target's MX kernels (riscv64 without V's lane by lane, `quantize_mx_block_lanes`):
/// compiled for each (Cranelift must lower them), and run in
/// Cranelift's interpreter with the element conversions each target's table picks, against the
/// reference, on 48 of the seed blocks (every 64th, NaN and infinity ones among them) or
/// every (element, scale) pair of 48 blocks. The JIT runs them natively on this host above.
#[test]
fn every_targets_mx_kernels_match_the_reference_in_the_interpreter() {
    use clconv::mx::{MX_BLOCK, NVFP4_BLOCK};
    use clconv::reference::{nvfp4_dequantize, nvfp4_quantize};
    use clconv::table::IsaFeatures;
    use clconv::target::Target;
    let seed = mx_blocks::blocks();
    let picked: Vec<[f32; MX_BLOCK]> = seed
        .iter()
        .step_by(64)
        .chain(&seed[seed.len() - 270..seed.len() - 256]) // NaN, infinity, all-equal
        .take(48)
        .copied()
        .collect();
    let mut runs = 0;
    for target in Target::ALL.into_iter().filter(|&t| t != Target::Host) {
        let isa = target.isa().unwrap();
        let features = IsaFeatures::of(&*isa).unwrap();
        for request in MxRequest::all() {
            clconv::mx_kernel::disassemble(&*isa, &request)
                .unwrap_or_else(|e| panic!("{}: {request}: {e}", target.name()));
            let func = clconv::mx_kernel::build(&request, features.clone(), isa.frontend_config())
                .unwrap();
            let what = format!("{}: {request}", target.name());
            match request {
                MxRequest::Quantize { from, .. } => {
                    let values = mx_blocks::value_bytes(from, &picked);
                    let values = &values[..picked.len() * MX_BLOCK * from.bytes()];
                    let n = picked.len() * MX_BLOCK;
                    let mut e = vec![0u8; request.element_bytes(n)];
                    let mut s = vec![0u8; picked.len()];
                    clconv_verify::interp::run_mx_kernel(
                        &func,
                        true,
                        [values, &[]],
                        [&mut e, &mut s],
                        picked.len(),
                    )
                    .unwrap_or_else(|err| panic!("{what}: {err}"));
                    let (mut re, mut rs) = (vec![0u8; e.len()], vec![0u8; s.len()]);
                    mx_quantize(&request, values, &mut re, &mut rs).unwrap();
                    assert_eq!((s, e), (rs, re), "{what}");
                }
                MxRequest::Dequantize { to, packed, .. } => {
                    let (elements, scales) = if packed {
                        mx_blocks::every_byte_and_scale()
                    } else {
                        mx_blocks::every_element_and_scale()
                    };
                    // 48 blocks from across the scales.
                    let step = scales.len() / 48;
                    let per = request.element_bytes(MX_BLOCK);
                    let mut e = Vec::new();
                    let mut s = Vec::new();
                    for k in 0..48 {
                        let b = k * step + k % 8;
                        e.extend_from_slice(&elements[b * per..(b + 1) * per]);
                        s.push(scales[b]);
                    }
                    let mut v = vec![0u8; 48 * MX_BLOCK * to.bytes()];
                    clconv_verify::interp::run_mx_kernel(
                        &func,
                        false,
                        [&e, &s],
                        [&mut v, &mut []],
                        48,
                    )
                    .unwrap_or_else(|err| panic!("{what}: {err}"));
                    let mut want = vec![0u8; v.len()];
                    mx_dequantize(&request, &e, &s, &mut want).unwrap();
                    assert_eq!(v, want, "{what}");
                }
                MxRequest::QuantizeNvfp4 { from, .. } => {
                    // 48 blocks of 16: threshold blocks under a tensor scale that is no power
                    // of two, and seed blocks.
                    let t = 3.0e-4;
                    let mut seed = mx_blocks::nvfp4_threshold_blocks(t);
                    seed = seed.into_iter().step_by(11).take(16).collect();
                    seed.extend(picked.iter().take(8));
                    let values = mx_blocks::value_bytes(from, &seed);
                    let values = &values[..seed.len() * MX_BLOCK * from.bytes()];
                    let n = seed.len() * MX_BLOCK;
                    let count = request.block_count(n);
                    let mut e = vec![0u8; request.element_bytes(n)];
                    let mut s = vec![0u8; count];
                    clconv_verify::interp::run_block_kernel(
                        &func,
                        true,
                        [values, &[]],
                        [&mut e, &mut s],
                        count,
                        Some(t),
                    )
                    .unwrap_or_else(|err| panic!("{what}: {err}"));
                    let (mut re, mut rs) = (vec![0u8; e.len()], vec![0u8; s.len()]);
                    nvfp4_quantize(&request, values, t, &mut re, &mut rs).unwrap();
                    assert_eq!((s, e), (rs, re), "{what}");
                }
                MxRequest::DequantizeNvfp4 { to, packed } => {
                    let (elements, scales) = mx_blocks::nvfp4_every_element_and_scale(packed);
                    let step = scales.len() / 48;
                    let per = request.element_bytes(NVFP4_BLOCK);
                    let mut e = Vec::new();
                    let mut s = Vec::new();
                    for k in 0..48 {
                        let b = k * step + k % 8;
                        e.extend_from_slice(&elements[b * per..(b + 1) * per]);
                        s.push(scales[b]);
                    }
                    let t = 3.0e-4;
                    let mut v = vec![0u8; 48 * NVFP4_BLOCK * to.bytes()];
                    clconv_verify::interp::run_block_kernel(
                        &func,
                        false,
                        [&e, &s],
                        [&mut v, &mut []],
                        48,
                        Some(t),
                    )
                    .unwrap_or_else(|err| panic!("{what}: {err}"));
                    let mut want = vec![0u8; v.len()];
                    nvfp4_dequantize(&request, &e, &s, t, &mut want).unwrap();
                    assert_eq!(v, want, "{what}");
                }
            }
            runs += 1;
        }
    }
    assert_eq!(runs, 84 * (Target::ALL.len() - 1));
}

/// Large runs split across threads (`Jit::set_threads`) give the reference's bytes: 100,003
/// values (3,125 blocks and a short one) on 1, 3 and 7 threads, both ways, packed or not.
#[test]
fn runs_split_across_threads_match_the_reference() {
    use clconv::jit::Threads;
    let jit = Jit::new().unwrap();
    let n: usize = 100_003;
    let values: Vec<u8> = (0..n as u32)
        .flat_map(|i: u32| {
            let x = ((i.wrapping_mul(2_654_435_761) >> 8) as f32 / 16_777_216.0 - 0.5)
                * 2f32.powi((i % 40) as i32 - 20);
            x.to_le_bytes()
        })
        .collect();
    for name in ["convert_mxfp8e4m3_rtp(float)", "convert_mxfp4e2m1x2(float)"] {
        let q = jit.compile_blocks(name).unwrap();
        let r = q.request();
        let (mut re, mut rs) = (
            vec![0u8; r.element_bytes(n)],
            vec![0u8; MxRequest::blocks(n)],
        );
        mx_quantize(&r, &values, &mut re, &mut rs).unwrap();
        let back_name = format!(
            "convert_float(mx{}{})",
            r.elem().name(),
            if r.packed() { "x2" } else { "" }
        );
        let back = jit.compile_blocks(&back_name).unwrap();
        let mut want = vec![0u8; values.len()];
        mx_dequantize(&back.request(), &re, &rs, &mut want).unwrap();
        for threads in [1, 3, 7] {
            jit.set_threads(Threads::Exactly(threads));
            let (mut e, mut s) = (vec![0u8; re.len()], vec![0u8; rs.len()]);
            q.quantize_bytes(&values, &mut e, &mut s).unwrap();
            assert!(e == re && s == rs, "{name} on {threads} threads");
            let mut got = vec![0u8; values.len()];
            back.dequantize_bytes(&e, &s, &mut got).unwrap();
            assert!(got == want, "{back_name} on {threads} threads");
        }
    }
}

/// Packed FP4 (`mxfp4e2m1x2`): element 2i in the low nibble, 2i + 1 in the high one, an odd
/// last element's high nibble 0; by hand.
#[test]
fn packed_fp4_is_two_codes_to_a_byte_low_nibble_first() {
    let jit = Jit::new().unwrap();
    let k = jit.compile_blocks("convert_mxfp4e2m1x2(float)").unwrap();
    // amax 3 = 1.5 * 2^1: the scale 2^(1 - 2) (0x7e); 1 -> 2.0 (0x4), -3 -> -6.0 (0xf), 0.25
    // -> 0.5 (0x1), and the missing fourth element 0.
    let values = [1.0f32, -3.0, 0.25];
    let (mut e, mut s) = ([0u8; 2], [Fp8E8M0(0)]);
    k.quantize(&values, &mut e, &mut s).unwrap();
    assert_eq!((s[0].0, e), (0x7e, [0xf4, 0x01]));
    let err = k
        .quantize(&values, &mut [Fp4E2M1(0); 2], &mut s)
        .unwrap_err();
    assert!(err.to_string().contains("holds fp4e2m1"), "{err}");
    let back = jit.compile_blocks("convert_float(mxfp4e2m1x2)").unwrap();
    let mut v = [0f32; 4];
    back.dequantize(&[0xf4u8, 0x01], &[Fp8E8M0(0x7e)], &mut v)
        .unwrap();
    assert_eq!(v, [1.0, -3.0, 0.25, 0.0]);
    // 33 values of 1.5: both blocks' scale 2^(0 - 2) (0x7d), 1.5 * 4 = 6.0 (0x7); 17 bytes,
    // the last one's high nibble 0.
    let mut e = [0u8; 17];
    let mut s = [Fp8E8M0(0); 2];
    k.quantize(&[1.5f32; 33], &mut e, &mut s).unwrap();
    assert_eq!(s.map(|s| s.0), [0x7d, 0x7d]);
    assert_eq!(e[..16], [0x77; 16]);
    assert_eq!(e[16], 0x07);
}

#[test]
fn bad_names_and_buffers_are_typed_errors() {
    let jit = Jit::new().unwrap();
    for (name, says) in [
        ("convert_mxfp8e4m3_rtz(float)", "_rtz is no MX scale rule"),
        ("convert_mxfp8e4m3_sat(float)", "_sat is no MX scale rule"),
        ("convert_mxint8(float)", "mxint8 is no block format"),
        ("convert_mxfp4e2m1(double)", "not double"),
        ("convert_int(mxfp4e2m1)", "not int"),
        ("convert_mxfp4e2m1", "not of the form"),
    ] {
        let err = jit.compile_blocks(name).err().unwrap();
        assert!(matches!(err, MxError::Parse(_)), "{name}: {err:?}");
        assert!(err.to_string().contains(says), "{name}: {err}");
    }
    let k = jit.compile_blocks("convert_mxfp4e2m1(float)").unwrap();
    let mut e = [Fp4E2M1(0); 33];
    let err = k
        .quantize(&[0f32; 33], &mut e, &mut [Fp8E8M0(0)])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("33 values need 33 element bytes and 2 scales"),
        "{err}"
    );
    let err = k
        .quantize(&[0f32; 33], &mut [Fp8E4M3(0); 33], &mut [Fp8E8M0(0); 2])
        .unwrap_err();
    assert!(
        err.to_string().contains("the element buffer holds fp8e4m3"),
        "{err}"
    );
    let err = k
        .quantize(&[0f64; 33], &mut e, &mut [Fp8E8M0(0); 2])
        .unwrap_err();
    assert!(err.to_string().contains("holds double"), "{err}");
    let err = k
        .dequantize(&e, &[Fp8E8M0(0); 2], &mut [0f32; 33])
        .unwrap_err();
    assert!(err.to_string().contains("dequantize"), "{err}");
    // An odd number of bytes for 4-byte values.
    let err = k
        .quantize_bytes(&[0u8; 5], &mut [0u8; 1], &mut [0u8; 1])
        .unwrap_err();
    assert!(matches!(err, MxError::Buffer(_)), "{err:?}");
    // The conversion entry says where MX requests go.
    let err = jit.compile("convert_mxfp8e4m3(float)").err().unwrap();
    assert!(err.to_string().contains("compile_blocks"), "{err}");
}

/// NVFP4 by hand: scales and elements worked out from the rules (`docs/formats.md`), through
/// the JIT and the reference.
#[test]
fn nvfp4_by_hand() {
    use clconv::reference::{nvfp4_dequantize, nvfp4_quantize};
    let jit = Jit::new().unwrap();
    let k = jit.compile_blocks("convert_nvfp4(float)").unwrap();
    let check = |values: &[f32], t: f32, scale: u8, elements: &[u8]| {
        let mut e = vec![Fp4E2M1(0); values.len()];
        let mut s = vec![Fp8E4M3(0); values.len().div_ceil(16)];
        k.quantize_nvfp4(values, t, &mut e, &mut s).unwrap();
        assert_eq!(s[0].0, scale, "{values:?} under {t}");
        assert_eq!(
            e.iter().map(|c| c.0).collect::<Vec<_>>(),
            elements,
            "{values:?} under {t}"
        );
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let (mut re, mut rs) = (vec![0u8; values.len()], vec![0u8; s.len()]);
        nvfp4_quantize(&k.request(), &bytes, t, &mut re, &mut rs).unwrap();
        assert_eq!(
            (rs[0], &re[..]),
            (scale, elements),
            "the reference: {values:?} under {t}"
        );
    };
    // amax 12 under 1: 12 / 6 = 2 (E4M3 0x40); 1 / 2 = 0.5, -12 / 2 = -6, 5 / 2 = 2.5 ties to
    // 2 (even), 7 / 2 = 3.5 ties to 4 (even).
    check(&[1.0, -12.0, 5.0, 7.0], 1.0, 0x40, &[0x1, 0xf, 0x4, 0x6]);
    // NVIDIA's recipe for a tensor whose amax is 12: t = 12 / 2688; the block's scale 448
    // (0x7e) maps 12 to 6, 6 to 3 and -3 to -1.5.
    check(&[12.0, 6.0, -3.0], 12.0 / 2688.0, 0x7e, &[0x7, 0x5, 0xb]);
    // amax 2 under 0.5: 2 / 3 rounds to E4M3 0.6875 (0x33); 2 / 0.34375 = 5.8 -> 6,
    // -1 / 0.34375 = -2.9 -> -3.
    check(&[2.0, -1.0], 0.5, 0x33, &[0x7, 0xd]);
    // A block below E4M3's half-ulp times 6t: scale 0, elements the signed zeros.
    check(&[1e-40, -1e-41], 1.0, 0x00, &[0x0, 0x8]);
    // Beyond 448 x 6 x t: the scale saturates at 448, the elements at 6.
    check(&[1e6, 1.0, -1e5], 1.0, 0x7e, &[0x7, 0x0, 0xf]);
    // A NaN or an infinity: scale 0x7f, every element +6.
    check(&[1.0, f32::NAN], 1.0, 0x7f, &[0x7, 0x7]);
    check(&[f32::NEG_INFINITY, 0.0], 1.0, 0x7f, &[0x7, 0x7]);

    // Back: element x scale x tensor scale, rounded once.
    let back = jit.compile_blocks("convert_float(nvfp4)").unwrap();
    let mut v = [0f32; 3];
    back.dequantize_nvfp4(
        &[Fp4E2M1(0x7), Fp4E2M1(0xd), Fp4E2M1(0x1)],
        &[Fp8E4M3(0x33)],
        0.5,
        &mut v,
    )
    .unwrap();
    assert_eq!(v, [2.0625, -1.03125, 0.171875]);
    back.dequantize_nvfp4(&[Fp4E2M1(0x7); 3], &[Fp8E4M3(0x7f)], 1.0, &mut v)
        .unwrap();
    assert_eq!(v.map(f32::to_bits), [0x7fc0_0000; 3]);
    let mut r = [0u8; 12];
    nvfp4_dequantize(&back.request(), &[0x7, 0xd, 0x1], &[0x33], 0.5, &mut r).unwrap();
    assert_eq!(r[4..8], (-1.03125f32).to_le_bytes());
    // Into half: 6 x 448 x 1e-3 = 2.688 rounds once to half 2.6875 (0x4160).
    let to_half = jit.compile_blocks("convert_half(nvfp4)").unwrap();
    let mut h = [0u8; 2];
    to_half
        .dequantize_nvfp4_bytes(&[0x7], &[0x7e], 1e-3, &mut h)
        .unwrap();
    assert_eq!(u16::from_le_bytes(h), 0x4160);
}

/// NVFP4's runs: the tensor scale is required, checked, and refused on MX kernels; names.
#[test]
fn nvfp4_names_and_tensor_scales_are_checked() {
    let jit = Jit::new().unwrap();
    for (name, says) in [
        ("convert_nvfp4_rtp(float)", "NVFP4 takes no suffix"),
        ("convert_nvfp4x4(float)", "nvfp4x4 is no block format"),
        ("convert_nvfp4(double)", "not double"),
        ("convert_int(nvfp4)", "not int"),
    ] {
        let err = jit.compile_blocks(name).err().unwrap();
        assert!(matches!(err, MxError::Parse(_)), "{name}: {err:?}");
        assert!(err.to_string().contains(says), "{name}: {err}");
    }
    let k = jit.compile_blocks("convert_nvfp4x2(float)").unwrap();
    let (mut e, mut s) = ([0u8; 1], [Fp8E4M3(0)]);
    for bad in [0.0f32, -1.0, f32::INFINITY, f32::NAN] {
        let err = k
            .quantize_nvfp4(&[1.0f32, 2.0], bad, &mut e, &mut s)
            .unwrap_err();
        assert!(
            err.to_string().contains("not a positive finite float32"),
            "{err}"
        );
    }
    let err = k.quantize(&[1.0f32, 2.0], &mut e, &mut s).unwrap_err();
    assert!(err.to_string().contains("call quantize_nvfp4"), "{err}");
    let err = k
        .quantize_nvfp4(&[1.0f32, 2.0], 1.0, &mut e, &mut [Fp8E8M0(0)])
        .unwrap_err();
    assert!(
        err.to_string().contains("the scale buffer holds fp8e8m0"),
        "{err}"
    );
    let err = k
        .quantize_nvfp4(&[1.0f32; 17], 1.0, &mut [0u8; 9], &mut s)
        .unwrap_err();
    assert!(err.to_string().contains("one per block of 16"), "{err}");
    let mx = jit.compile_blocks("convert_mxfp4e2m1x2(float)").unwrap();
    let err = mx
        .quantize_nvfp4(&[1.0f32, 2.0], 1.0, &mut e, &mut [Fp8E8M0(0)])
        .unwrap_err();
    assert!(err.to_string().contains("no tensor scale"), "{err}");
}
