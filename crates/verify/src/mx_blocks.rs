//! MX block kernels ([`clconv::mx_kernel`]) against the reference's block quantiser
//! ([`clconv::reference::mx_quantize`], written from the OCP text): the seed blocks and the
//! check `clconv check mx` and the test suite run.
//!
//! The blocks cover every scale exponent and the scale rules' thresholds (for every biased
//! exponent of the largest magnitude, fractions at and beside each element format's m and
//! 0.75 m), all-equal and single-outlier blocks, NaN, infinity and zero blocks, subnormals,
//! values that vanish under a large scale, and random bit patterns; half sources also every
//! half pattern. A dequantisation is checked on every (element, scale) pair.

use clconv::jit::Jit;
use clconv::mx::{element_range, MxRequest, MX_BLOCK};
use clconv::reference::{mx_dequantize, mx_quantize};
use clconv::ScalarType;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The seed blocks, as float32 values: for every biased exponent 0..=254 a block whose largest magnitude
/// has it, with fractions at and beside every element format's two thresholds (m and 0.75 m),
/// the other values spread down to 2^-40 of it; all-equal blocks; single outliers; zero,
/// NaN and infinity blocks; random bit patterns.
pub fn blocks() -> Vec<[f32; MX_BLOCK]> {
    let mut rng = Rng(0x5eed_0047);
    let mut fractions = vec![0u32, 1, 0x7f_ffff, 0x40_0000];
    for elem in clconv::mx::ELEMENTS {
        let (max, _) = element_range(elem).unwrap();
        for x in [max, 0.75 * max] {
            let f = (x as f32).to_bits() & 0x7f_ffff;
            fractions.extend([f - 1, f, f + 1]);
        }
    }
    let mut out = Vec::new();
    for exponent in 0..=254u32 {
        for (n, &fraction) in fractions.iter().enumerate() {
            let amax = f32::from_bits(exponent << 23 | fraction);
            let mut block = [0f32; MX_BLOCK];
            for v in block.iter_mut() {
                // Magnitudes from amax down by up to 2^40, either sign.
                let shift = (rng.next() % 41) as i32;
                let mantissa = 1.0 + (rng.next() % 1024) as f32 / 1024.0;
                let m = (amax * mantissa * 0.5).min(amax) * 2f32.powi(-shift);
                *v = if rng.next().is_multiple_of(2) { m } else { -m };
            }
            let at = (exponent as usize + n) % MX_BLOCK;
            block[at] = if n % 2 == 0 { amax } else { -amax };
            out.push(block);
        }
    }
    for v in [
        0.0f32,
        -0.0,
        1.0,
        -448.0,
        6.0,
        1e-30,
        f32::MIN_POSITIVE,
        1e-45,
        f32::MAX,
    ] {
        out.push([v; MX_BLOCK]);
    }
    for outlier in [1000.0f32, -1e20, 7.0, 3e-39, 65504.0] {
        let mut block = [0.001f32; MX_BLOCK];
        block[31] = outlier;
        out.push(block);
    }
    for special in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut block = [1.5f32; MX_BLOCK];
        block[3] = special;
        out.push(block);
        out.push([special; MX_BLOCK]);
    }
    for _ in 0..256 {
        let mut block = [0f32; MX_BLOCK];
        for v in block.iter_mut() {
            *v = f32::from_bits(rng.next() as u32);
        }
        out.push(block);
    }
    out
}

/// The value bytes of `blocks` in the request's value type: float as is, half and bfloat from
/// the float (rounded by the bits, not by the reference: any values will do).
pub fn value_bytes(t: ScalarType, blocks: &[[f32; MX_BLOCK]]) -> Vec<u8> {
    let floats = blocks.iter().flatten();
    match t {
        ScalarType::Float => floats.flat_map(|v| v.to_le_bytes()).collect(),
        ScalarType::BFloat => floats
            .flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes())
            .collect(),
        ScalarType::Half => {
            // Every half pattern, then patterns made from the floats' top bits.
            let mut bytes: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
            bytes.extend(floats.flat_map(|v| {
                ((v.to_bits() >> 13) as u16 ^ (v.to_bits() >> 16) as u16).to_le_bytes()
            }));
            bytes.truncate(bytes.len() / (MX_BLOCK * 2) * MX_BLOCK * 2);
            bytes
        }
        _ => unreachable!("MX values are float, half or bfloat"),
    }
}

/// The elements and scales of every dequantisation's check: every element code with every
/// scale (block 8s + w holds the codes 32w..32w + 31 under the scale s).
pub fn every_element_and_scale() -> (Vec<u8>, Vec<u8>) {
    let mut elements = Vec::new();
    let mut scales = Vec::new();
    for scale in 0..=255u8 {
        for window in 0..256 / MX_BLOCK {
            elements.extend((0..MX_BLOCK).map(|i| (window * MX_BLOCK + i) as u8));
            scales.push(scale);
        }
    }
    (elements, scales)
}

/// The packed elements and scales of a packed FP4 dequantisation's check: every byte (every
/// pair of codes) with every scale (16 bytes, 32 elements, per block).
pub fn every_byte_and_scale() -> (Vec<u8>, Vec<u8>) {
    let mut elements = Vec::new();
    let mut scales = Vec::new();
    for scale in 0..=255u8 {
        for window in 0..256 / (MX_BLOCK / 2) {
            elements.extend((0..MX_BLOCK / 2).map(|i| (window * MX_BLOCK / 2 + i) as u8));
            scales.push(scale);
        }
    }
    (elements, scales)
}

/// Runs `request`'s kernel from `jit` on its inputs (the seed blocks, or every element and
/// scale) and compares with the reference bit for bit: the number of blocks checked, or the
/// first mismatch described.
pub fn check(jit: &Jit, request: &MxRequest) -> Result<usize, String> {
    let kernel = jit
        .compile_blocks_request(request)
        .map_err(|e| e.to_string())?;
    match *request {
        MxRequest::Quantize { from, .. } => {
            let values = value_bytes(from, &blocks());
            let n = values.len() / from.bytes();
            let blocks = MxRequest::blocks(n);
            let per_block = request.element_bytes(MX_BLOCK);
            let (mut e, mut s) = (vec![0u8; request.element_bytes(n)], vec![0u8; blocks]);
            kernel
                .quantize_bytes(&values, &mut e, &mut s)
                .map_err(|e| e.to_string())?;
            let (mut re, mut rs) = (vec![0u8; e.len()], vec![0u8; blocks]);
            mx_quantize(request, &values, &mut re, &mut rs).map_err(|e| e.to_string())?;
            for b in 0..blocks {
                let at = b * per_block..(b + 1) * per_block;
                if (s[b], &e[at.clone()]) != (rs[b], &re[at.clone()]) {
                    let v = b * MX_BLOCK * from.bytes()..(b + 1) * MX_BLOCK * from.bytes();
                    return Err(format!(
                        "{request}, block {b} (values {:02x?}): the kernel gives scale {:#04x}, elements {:02x?}; the reference {:#04x}, {:02x?}",
                        &values[v],
                        s[b],
                        &e[at.clone()],
                        rs[b],
                        &re[at]
                    ));
                }
            }
            Ok(blocks)
        }
        MxRequest::Dequantize { to, packed, .. } => {
            let (elements, scales) = if packed {
                every_byte_and_scale()
            } else {
                every_element_and_scale()
            };
            let bytes = to.bytes();
            let n = scales.len() * MX_BLOCK;
            let mut values = vec![0u8; n * bytes];
            kernel
                .dequantize_bytes(&elements, &scales, &mut values)
                .map_err(|e| e.to_string())?;
            let mut expected = vec![0u8; values.len()];
            mx_dequantize(request, &elements, &scales, &mut expected).map_err(|e| e.to_string())?;
            for (i, (got, want)) in values.chunks(bytes).zip(expected.chunks(bytes)).enumerate() {
                if got != want {
                    return Err(format!(
                        "{request}: element {i} (byte {:#04x}) under scale {:#04x} gives {got:02x?}, the reference {want:02x?}",
                        elements[if packed { i / 2 } else { i }],
                        scales[i / MX_BLOCK]
                    ));
                }
            }
            Ok(scales.len())
        }
    }
}
