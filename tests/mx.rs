//! MX blocks in the reference (issue 47): a float32 block's E8M0 scale and elements under the
//! three scale rules, against values worked by hand from OCP MX v1.0 section 6.3 (X = 2^(floor(
//! log2(amax)) - emax_elem), elements nearest-even and clamped) and the other rules' definitions
//! (`src/reference/mx.rs`).

use clconv::reference::{mx_element_formats, mx_value, quantize_mx_block, ScaleRule};
use clconv::ScalarType::{self, Fp4E2M1, Fp6E2M3, Fp6E3M2, Fp8E4M3, Fp8E5M2};

fn quantize(elem: ScalarType, rule: ScaleRule, block: &[f32]) -> (u8, Vec<u8>) {
    let mut e = vec![0u8; block.len()];
    let scale = quantize_mx_block(elem, rule, block, &mut e).expect("an MX format");
    (scale, e)
}

/// The issue's example: 32 values with largest magnitude 1000, MXFP8 E4M3.
#[test]
fn the_issue_block() {
    let mut block = [0.5f32; 32];
    block[3] = -1000.0;
    // OCP: floor(log2 1000) = 9, minus E4M3's emax 8: X = 2 (0x80); -1000 / 2 = -500
    // saturates to -448 (0xfe); 0.5 / 2 = 0.25 = 2^-2 is exact (0x28: exponent 5, bias 7).
    let (scale, e) = quantize(Fp8E4M3, ScaleRule::OcpFloor, &block);
    assert_eq!(scale, 0x80);
    assert_eq!((e[3], e[0]), (0xfe, 0x28));
    // Rounded up: X = 4 (0x81); -1000 / 4 = -250 rounds to -256 (0xf8); 0.5 / 4 = 2^-3 (0x20).
    let (scale, e) = quantize(Fp8E4M3, ScaleRule::RoundUp, &block);
    assert_eq!(scale, 0x81);
    assert_eq!((e[3], e[0]), (0xf8, 0x20));
    // Nearest: 1000 / 448 = 2.23 lies below 1.5 * 2: X = 2, as OCP's here.
    let (scale, _) = quantize(Fp8E4M3, ScaleRule::NearestEven, &block);
    assert_eq!(scale, 0x80);
    assert_eq!(mx_value(Fp8E4M3, 0x81, 0xf8), Some(-1024.0));
}

/// Every power of two as a block's largest magnitude, float32's subnormals included: OCP's and
/// the round-up rule's scale is 2^(e - emax) (the element formats' largest values lie strictly
/// between 2^emax and 2^(emax + 1)), clamped to 2^-127; the nearest rule's one less (2^e over
/// the largest value is below 1.5 * 2^(e - emax - 1)). Where the scale is not clamped, the
/// largest element decodes back to 2^e exactly under the first two rules.
#[test]
fn every_scale_exponent() {
    for elem in mx_element_formats() {
        let emax = match elem {
            Fp8E4M3 => 8,
            Fp8E5M2 => 15,
            Fp6E2M3 => 2,
            Fp6E3M2 => 4,
            Fp4E2M1 => 2,
            _ => unreachable!(),
        };
        for e in -149..=127i32 {
            // Exact in float down to 2^-149 (its smallest subnormal).
            let amax = 2f64.powi(e) as f32;
            assert_eq!(f64::from(amax), 2f64.powi(e));
            let block = [amax, amax / 2.0, -amax / 4.0, 0.0];
            for (rule, k) in [
                (ScaleRule::OcpFloor, e - emax),
                (ScaleRule::RoundUp, e - emax),
                (ScaleRule::NearestEven, e - emax - 1),
            ] {
                let (scale, codes) = quantize(elem, rule, &block);
                let want = (k.clamp(-127, 127) + 127) as u8;
                assert_eq!(scale, want, "{elem} {rule:?} 2^{e}");
                if k >= -127 && rule != ScaleRule::NearestEven {
                    assert_eq!(
                        mx_value(elem, scale, codes[0]),
                        Some(f64::from(amax)),
                        "{elem} {rule:?} 2^{e}"
                    );
                }
            }
        }
    }
}

#[test]
fn all_equal_and_single_outlier_blocks() {
    // All equal: each value is the element's largest power of two (OCP) times the scale.
    let (scale, e) = quantize(Fp4E2M1, ScaleRule::OcpFloor, &[3.0; 32]);
    // floor(log2 3) = 1, minus 2: X = 2^-1; 3 / 0.5 = 6, E2M1's largest (0x7).
    assert_eq!((scale, e[0], e[31]), (126, 0x7, 0x7));
    // One outlier: 1e6 among 31 ones into E2M1: X = 2^(19 - 2); 1e6 / 2^17 = 7.6 clamps to 6,
    // 1 / 2^17 rounds to 0.
    let mut block = [1.0f32; 32];
    block[17] = 1.0e6;
    let (scale, e) = quantize(Fp4E2M1, ScaleRule::OcpFloor, &block);
    assert_eq!(scale, 127 + 17);
    assert_eq!(e[17], 0x7);
    assert!(e.iter().enumerate().all(|(i, &c)| i == 17 || c == 0));
    // Rounded up instead: X = 2^18 (1e6 / 6 = 166,667 needs 2^18), 1e6 / 2^18 = 3.8 -> 4 (0x6).
    let (scale, e) = quantize(Fp4E2M1, ScaleRule::RoundUp, &block);
    assert_eq!((scale, e[17]), (127 + 18, 0x6));
}

#[test]
fn nan_infinity_and_zero_blocks() {
    // A NaN or an infinity anywhere: the scale is E8M0's NaN and every element the format's
    // conversion of NaN (E4M3 0x7f, E5M2 0x7e, FP4 +6 0x7).
    for special in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut block = [1.0f32; 32];
        block[5] = special;
        for (elem, nan) in [(Fp8E4M3, 0x7f), (Fp8E5M2, 0x7e), (Fp4E2M1, 0x7)] {
            for rule in [
                ScaleRule::OcpFloor,
                ScaleRule::RoundUp,
                ScaleRule::NearestEven,
            ] {
                let (scale, e) = quantize(elem, rule, &block);
                assert_eq!(scale, 0xff, "{elem} {special}");
                assert!(e.iter().all(|&c| c == nan), "{elem} {special}: {e:?}");
            }
        }
        assert!(mx_value(Fp8E4M3, 0xff, 0x38).unwrap().is_nan());
    }
    // All zero: the smallest scale, 2^-127; -0.0 keeps its sign where the format has one.
    let mut block = [0.0f32; 32];
    block[1] = -0.0;
    let (scale, e) = quantize(Fp8E4M3, ScaleRule::OcpFloor, &block);
    assert_eq!((scale, e[0], e[1]), (0x00, 0x00, 0x80));
    // Not an MX element type, or lengths that differ: None.
    let mut out = [0u8; 2];
    assert_eq!(
        quantize_mx_block(ScalarType::Half, ScaleRule::OcpFloor, &[1.0; 2], &mut out),
        None
    );
    assert_eq!(
        quantize_mx_block(Fp8E4M3, ScaleRule::OcpFloor, &[1.0; 3], &mut out),
        None
    );
}
