//! MX block kernels ([`clconv::mx_kernel`]) against the reference's block quantiser
//! ([`clconv::reference::mx_quantize`], written from the OCP text): the seed blocks and the
//! check `clconv check mx` and the test suite run.
//!
//! The blocks cover every scale exponent and the scale rules' thresholds (for every biased
//! exponent of the largest magnitude, fractions at and beside each element format's m and
//! 0.75 m), all-equal and single-outlier blocks, NaN, infinity and zero blocks, subnormals,
//! values that vanish under a large scale, and random bit patterns; half sources also every
//! half pattern. A dequantisation is checked on every (element, scale) pair.
//!
//! NVFP4 requests run the same blocks (as blocks of 16), blocks at every E4M3 scale's
//! rounding thresholds with elements at E2M1's, and blocks with elements a bit either side of
//! E2M1's thresholds under the tensor scale, under [`NVFP4_TENSOR_SCALES`]; their
//! dequantisations every (element, scale) pair under each of those tensor scales.

use clconv::jit::Jit;
use clconv::mx::{element_range, MxRequest, MX_BLOCK, NVFP4_BLOCK};
use clconv::reference::{
    mx_dequantize, mx_quantize, nvfp4_dequantize, nvfp4_quantize, nvfp4_value,
};
use clconv::ScalarType;

/// The tensor scales NVFP4 requests are checked under: 1, a power of two, values that are
/// not (NVIDIA's 1 / 2688 for an amax of 1 among them), the smallest normal's neighbourhood,
/// a subnormal and a large one; and two under which an element x scale product rounded to
/// float first lands on a midpoint between two halves that the exact product is not on (so
/// rounding it again into half goes the wrong way), for 19 (element, scale) pairs above the
/// midpoint (0x3ee3aaab, 0.44466) and 18 below it (0x421dc4ec, 39.442): found by a search in
/// exact rational arithmetic, as the way back into half must round the exact product once.
pub const NVFP4_TENSOR_SCALES: [f32; 9] = [
    1.0,
    0.0078125,
    3.0e-4,
    1.0 / 2688.0,
    7.25e-38,
    1e-44,
    3.0e35,
    f32::from_bits(0x3ee3_aaab),
    f32::from_bits(0x421d_c4ec),
];

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

/// NVFP4 blocks of 16, two to a 32-value array (the last one twice when they are odd).
fn two_to_an_array(halves: &[[f32; NVFP4_BLOCK]]) -> Vec<[f32; MX_BLOCK]> {
    halves
        .chunks(2)
        .map(|pair| {
            let mut out = [0f32; MX_BLOCK];
            out[..NVFP4_BLOCK].copy_from_slice(&pair[0]);
            out[NVFP4_BLOCK..].copy_from_slice(pair.get(1).unwrap_or(&pair[0]));
            out
        })
        .collect()
}

/// NVFP4's threshold blocks, two to a 32-value array: for every E4M3 scale code c, blocks
/// whose amax / 6 is s_c, the midpoint between s_c and s_c+1, and the midpoint's float
/// neighbours; the other values at E2M1's midpoints times s_c, their float neighbours, either
/// sign. Exact ties under a tensor scale of 1, `scaled` multiplies every value by `t`.
pub fn nvfp4_threshold_blocks(t: f32) -> Vec<[f32; MX_BLOCK]> {
    let e4m3 = |c: u8| nvfp4_value(c, 0x2, 1.0); // E2M1 0x2 is 1.0: the scale's value
    let midpoints = [0.25f32, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];
    let mut halves: Vec<[f32; NVFP4_BLOCK]> = Vec::new();
    for c in 0..0x7fu8 {
        let s = e4m3(c) as f32;
        let next = if c < 0x7e { e4m3(c + 1) as f32 } else { s };
        let mid = (s + next) / 2.0 * 6.0;
        for (variant, amax) in [
            s * 6.0,
            mid,
            f32::from_bits(mid.to_bits() + 1),
            f32::from_bits(mid.to_bits().max(1) - 1),
        ]
        .into_iter()
        .enumerate()
        {
            let mut block = [0f32; NVFP4_BLOCK];
            for (k, v) in block.iter_mut().enumerate() {
                let x = midpoints[k % 7] * s;
                let x = match k / 7 {
                    0 => x,
                    1 => f32::from_bits(x.to_bits() + 1),
                    _ => f32::from_bits(x.to_bits().max(1) - 1),
                };
                *v = if (k + variant) % 2 == 0 { x } else { -x };
            }
            block[(usize::from(c) + variant) % NVFP4_BLOCK] = amax;
            halves.push(block.map(|v| (f64::from(v) * f64::from(t)) as f32));
        }
    }
    two_to_an_array(&halves)
}

/// NVFP4's elements beside their thresholds under the tensor scale `t`, two blocks to a
/// 32-value array: for every nonzero finite E4M3 scale s, a block whose amax is 6 s t (to
/// nearest float, so that its scale is s) and whose other values are, for each of E2M1's
/// midpoints m, the floats just below and just above m s t (the exact product, in double),
/// and a block with the floats one further out; signs alternate. A value passes a midpoint or
/// not by the last bit of these, wherever m s t is no float.
pub fn nvfp4_rounded_threshold_blocks(t: f32) -> Vec<[f32; MX_BLOCK]> {
    let midpoints = [0.25f64, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];
    let e4m3 = |c: u8| nvfp4_value(c, 0x2, 1.0); // E2M1 0x2 is 1.0: the scale's value
    let step = |x: f32, up: bool| {
        let b = x.to_bits();
        f32::from_bits(if up { b + 1 } else { b.saturating_sub(1) })
    };
    // The floats just below and just above the double `x` (the same float if it is one).
    let around = |x: f64| {
        let f = x as f32;
        match f64::from(f).partial_cmp(&x) {
            Some(std::cmp::Ordering::Greater) => (step(f, false), f),
            Some(std::cmp::Ordering::Less) => (f, step(f, true)),
            _ => (f, f),
        }
    };
    let mut halves: Vec<[f32; NVFP4_BLOCK]> = Vec::new();
    for c in 1..0x7fu8 {
        let unit = e4m3(c) * f64::from(t);
        let amax = (6.0 * unit) as f32;
        if !amax.is_finite() {
            continue;
        }
        let mut near = [0f32; NVFP4_BLOCK];
        let mut far = [0f32; NVFP4_BLOCK];
        near[0] = amax;
        far[0] = -amax;
        for (k, &m) in midpoints.iter().enumerate() {
            let (below, above) = around(m * unit);
            near[1 + 2 * k] = below;
            near[2 + 2 * k] = -above;
            far[1 + 2 * k] = -step(below, false);
            far[2 + 2 * k] = step(above, true);
        }
        near[15] = -near[1];
        far[15] = -far[2];
        halves.extend([near, far]);
    }
    two_to_an_array(&halves)
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

/// Every NVFP4 element byte with every scale: unpacked, block 16s + w holds the bytes
/// 16w..16w + 15 under the scale s; packed, 32 blocks of 8 bytes per scale.
pub fn nvfp4_every_element_and_scale(packed: bool) -> (Vec<u8>, Vec<u8>) {
    let per = if packed { NVFP4_BLOCK / 2 } else { NVFP4_BLOCK };
    let mut elements = Vec::new();
    let mut scales = Vec::new();
    for scale in 0..=255u8 {
        for window in 0..256 / per {
            elements.extend((0..per).map(|i| (window * per + i) as u8));
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
        MxRequest::QuantizeNvfp4 { from, .. } => {
            let mut checked = 0;
            for t in NVFP4_TENSOR_SCALES {
                let mut seed = nvfp4_threshold_blocks(t);
                seed.extend(nvfp4_rounded_threshold_blocks(t));
                seed.extend(blocks());
                let values = value_bytes(from, &seed);
                let n = values.len() / from.bytes();
                let count = request.block_count(n);
                let per_block = request.element_bytes(NVFP4_BLOCK);
                let (mut e, mut s) = (vec![0u8; request.element_bytes(n)], vec![0u8; count]);
                kernel
                    .quantize_nvfp4_bytes(&values, t, &mut e, &mut s)
                    .map_err(|e| e.to_string())?;
                let (mut re, mut rs) = (vec![0u8; e.len()], vec![0u8; count]);
                nvfp4_quantize(request, &values, t, &mut re, &mut rs).map_err(|e| e.to_string())?;
                for b in 0..count {
                    let at = b * per_block..(b + 1) * per_block;
                    if (s[b], &e[at.clone()]) != (rs[b], &re[at.clone()]) {
                        let v =
                            b * NVFP4_BLOCK * from.bytes()..(b + 1) * NVFP4_BLOCK * from.bytes();
                        return Err(format!(
                            "{request} under tensor scale {t:e}, block {b} (values {:02x?}): the kernel gives scale {:#04x}, elements {:02x?}; the reference {:#04x}, {:02x?}",
                            &values[v],
                            s[b],
                            &e[at.clone()],
                            rs[b],
                            &re[at]
                        ));
                    }
                }
                checked += count;
            }
            Ok(checked)
        }
        MxRequest::DequantizeNvfp4 { to, packed } => {
            let (elements, scales) = nvfp4_every_element_and_scale(packed);
            let bytes = to.bytes();
            let n = scales.len() * NVFP4_BLOCK;
            let mut checked = 0;
            for t in NVFP4_TENSOR_SCALES {
                let mut values = vec![0u8; n * bytes];
                kernel
                    .dequantize_nvfp4_bytes(&elements, &scales, t, &mut values)
                    .map_err(|e| e.to_string())?;
                let mut expected = vec![0u8; values.len()];
                nvfp4_dequantize(request, &elements, &scales, t, &mut expected)
                    .map_err(|e| e.to_string())?;
                for (i, (got, want)) in values.chunks(bytes).zip(expected.chunks(bytes)).enumerate()
                {
                    if got != want {
                        return Err(format!(
                            "{request} under tensor scale {t:e}: element {i} (byte {:#04x}) under scale {:#04x} gives {got:02x?}, the reference {want:02x?}",
                            elements[if packed { i / 2 } else { i }],
                            scales[i / NVFP4_BLOCK]
                        ));
                    }
                }
                checked += scales.len();
            }
            Ok(checked)
        }
    }
}
