//! NVFP4 blocks, as the reference computes them: a block of 16 values becomes FP4 E2M1
//! elements and one E4M3 scale, under one float32 scale per tensor.
//!
//! NVIDIA defines the format ("Introducing NVFP4 for Efficient and Accurate Low-Precision
//! Inference", NVIDIA technical blog, 2025; cuBLAS's block-scaled types): "a micro-block
//! scaling factor applied to each 16-value micro-block", stored in FP8 E4M3, and a "second-level
//! FP32 scalar" per tensor, so that a value is `element x block scale x tensor scale`. The
//! quantisation that picks the scale is software, and implementations compute it in different
//! float32 steps (Transformer Engine multiplies by a rounded reciprocal, torchao divides by the
//! product of the two scales). clconv's rule is the exact one those steps approximate, each
//! result rounded once from the exact quotient:
//!
//! - **The block scale** `s`: amax / (6 x t), the block's largest magnitude over E2M1's
//!   largest value and the tensor scale `t`, rounded to nearest even into E4M3 with saturation
//!   (448 for anything beyond it): the code that maps amax nearest to 6.
//! - **The elements**: V_i / (s x t) rounded to nearest even into E2M1, saturating at 6. A
//!   block whose scale is 0 (amax / (6t) at most 2^-10) has only zero elements, with the
//!   values' signs: there is nothing to scale by, and every value is below E4M3's half ulp
//!   times 6t.
//! - **The way back**: element x s x t, exact in double, rounded once into the value type.
//! - **NaN and infinity** (clconv's choice, as for MX blocks): a block holding a NaN or an
//!   infinity, or a tensor scale that is not a positive finite float, gets the scale E4M3's NaN
//!   0x7f and every element E2M1's conversion of NaN, 0x7 (+6, PTX's "NaN results are converted
//!   to positive MAX_NORM"). Transformer Engine gives 448 for a block with an infinity; a NaN
//!   reaches its E4M3 scale as here.
//!
//! The reference finds each result by comparing the magnitude with the exact midpoints between
//! neighbouring codes, m x 6t or m x s x t: m has at most 5 significant bits, 6t 26 and s x t 28,
//! so every midpoint is exact in double. (The lowering divides in double and rounds the
//! quotient; that this gives the same codes is argued in `src/lower/mx_block.rs`.)

use crate::mx::{MxBufferError, MxRequest, NVFP4_BLOCK};

/// E2M1's magnitudes by code (0 to 7).
const E2M1: [f64; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];

/// The value of a positive finite E4M3 code (0 to 0x7e): 1.mmm x 2^(e - 7), or 0.mmm x 2^-6.
fn e4m3_magnitude(code: u8) -> f64 {
    let (e, m) = (i32::from(code >> 3), f64::from(code & 7));
    if e == 0 {
        m / 8.0 * 2f64.powi(-6)
    } else {
        (1.0 + m / 8.0) * 2f64.powi(e - 7)
    }
}

/// The code among `0..values.len()` nearest to `x / unit` (x >= 0, `unit` > 0), ties to the
/// even code, saturating at the last: `x` against each midpoint times `unit`, exactly (the
/// callers' midpoints and units keep every product exact in double).
fn nearest_code(x: f64, unit: f64, values: impl Fn(usize) -> f64, count: usize) -> usize {
    for c in 0..count - 1 {
        let midpoint = (values(c) + values(c + 1)) / 2.0 * unit;
        if x < midpoint || (x == midpoint && c % 2 == 0) {
            return c;
        }
        if x == midpoint {
            return c + 1;
        }
    }
    count - 1
}

/// Quantises one NVFP4 block of float32 values under the tensor scale `tensor_scale`: writes
/// one E2M1 code per value into `elements` (sign at bit 3) and returns the E4M3 scale code.
/// `None` when the lengths differ or the block is longer than 16.
///
/// ```
/// use clconv::reference::quantize_nvfp4_block;
/// let mut block = [1.0f32; 16];
/// block[3] = -12.0;
/// let mut e = [0u8; 16];
/// // amax 12 / (6 * 1) = 2.0 (E4M3 0x40); 1 / 2 = 0.5 (0x1), -12 / 2 = -6 (0xf).
/// assert_eq!(quantize_nvfp4_block(&block, 1.0, &mut e), Some(0x40));
/// assert_eq!((e[0], e[3]), (0x1, 0xf));
/// ```
pub fn quantize_nvfp4_block(block: &[f32], tensor_scale: f32, elements: &mut [u8]) -> Option<u8> {
    if block.len() != elements.len() || block.len() > NVFP4_BLOCK {
        return None;
    }
    let t = f64::from(tensor_scale);
    let finite = block.iter().all(|v| v.is_finite());
    if !(finite && t > 0.0 && t.is_finite()) {
        elements.fill(0x7);
        return Some(0x7f);
    }
    let amax = block.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
    let scale = nearest_code(amax, 6.0 * t, |c| e4m3_magnitude(c as u8), 0x7f) as u8;
    let unit = e4m3_magnitude(scale) * t;
    for (e, &v) in elements.iter_mut().zip(block) {
        let sign = if v.is_sign_negative() { 0x8 } else { 0 };
        let magnitude = if scale == 0 {
            0
        } else {
            nearest_code(f64::from(v.abs()), unit, |c| E2M1[c], 8) as u8
        };
        *e = sign | magnitude;
    }
    Some(scale)
}

/// The value of E2M1 element `code` (low 4 bits) in a block of E4M3 scale `scale` under the
/// tensor scale `tensor_scale`: element x scale x tensor scale, exact in double; NaN for a NaN
/// scale (0x7f, 0xff) or a product IEEE-754 makes NaN.
///
/// ```
/// use clconv::reference::nvfp4_value;
/// assert_eq!(nvfp4_value(0x40, 0xf, 0.25), -3.0); // -6 x 2 x 0.25
/// assert!(nvfp4_value(0x7f, 0x1, 1.0).is_nan());
/// ```
pub fn nvfp4_value(scale: u8, code: u8, tensor_scale: f32) -> f64 {
    let element = E2M1[usize::from(code & 7)];
    let element = if code & 8 != 0 { -element } else { element };
    let magnitude = scale & 0x7f;
    if magnitude == 0x7f {
        return f64::NAN;
    }
    let s = e4m3_magnitude(magnitude);
    let s = if scale & 0x80 != 0 { -s } else { s };
    element * s * f64::from(tensor_scale)
}

/// [`quantize_nvfp4_block`] over whole buffers, as an NVFP4 batch kernel runs it: `values`
/// holds little-endian values of the request's type, `elements` one code per byte (two, low
/// nibble first, for `nvfp4x2`), `scales` one E4M3 code per block of 16 (a last, shorter
/// block is one padded with zeros). An error when the lengths do not fit, the tensor scale is
/// not positive and finite, or `request` is no NVFP4 quantisation.
///
/// ```
/// use clconv::mx::MxRequest;
/// use clconv::reference::nvfp4_quantize;
/// let r = MxRequest::parse("convert_nvfp4(float)").unwrap();
/// let values: Vec<u8> = [1.0f32, -3.0, 0.25].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let (mut elements, mut scales) = ([0u8; 3], [0u8; 1]);
/// nvfp4_quantize(&r, &values, 1.0, &mut elements, &mut scales).unwrap();
/// // 3 / 6 = 0.5 (E4M3 0x30): 1 -> 2.0, -3 -> -6.0, 0.25 -> 0.5.
/// assert_eq!((scales, elements), ([0x30], [0x4, 0xf, 0x1]));
/// ```
pub fn nvfp4_quantize(
    request: &MxRequest,
    values: &[u8],
    tensor_scale: f32,
    elements: &mut [u8],
    scales: &mut [u8],
) -> Result<(), MxBufferError> {
    let MxRequest::QuantizeNvfp4 { from, .. } = *request else {
        return Err(MxBufferError::TensorScaleUse {
            request: request.to_string(),
            why: "nvfp4_quantize takes NVFP4 quantisations (convert_nvfp4[x2](<value>))",
        });
    };
    request.check_byte_lengths(values.len(), elements.len(), scales.len())?;
    request.check_tensor_scale(tensor_scale)?;
    let values = super::mx::values_as_f32(from, values);
    let mut codes = vec![0u8; values.len()];
    for ((block, out), scale) in values
        .chunks(NVFP4_BLOCK)
        .zip(codes.chunks_mut(NVFP4_BLOCK))
        .zip(scales.iter_mut())
    {
        *scale = quantize_nvfp4_block(block, tensor_scale, out).expect("equal lengths");
    }
    super::mx::store_codes(request, &codes, elements);
    Ok(())
}

/// The way back: every element times its block's scale times `tensor_scale`, rounded once to
/// nearest even into the request's value type, written little-endian into `values`. A NaN
/// result is the type's positive quiet NaN, as for MX blocks.
///
/// ```
/// use clconv::mx::MxRequest;
/// use clconv::reference::nvfp4_dequantize;
/// let r = MxRequest::parse("convert_float(nvfp4)").unwrap();
/// let mut values = [0u8; 8];
/// nvfp4_dequantize(&r, &[0x4, 0xf], &[0x30], 2.0, &mut values).unwrap();
/// assert_eq!(values[..4], 2.0f32.to_le_bytes()); // 2 x 0.5 x 2
/// assert_eq!(values[4..], (-6.0f32).to_le_bytes());
/// ```
pub fn nvfp4_dequantize(
    request: &MxRequest,
    elements: &[u8],
    scales: &[u8],
    tensor_scale: f32,
    values: &mut [u8],
) -> Result<(), MxBufferError> {
    let MxRequest::DequantizeNvfp4 { to, .. } = *request else {
        return Err(MxBufferError::TensorScaleUse {
            request: request.to_string(),
            why: "nvfp4_dequantize takes NVFP4 dequantisations (convert_<value>(nvfp4[x2]))",
        });
    };
    request.check_byte_lengths(values.len(), elements.len(), scales.len())?;
    request.check_tensor_scale(tensor_scale)?;
    let codes = super::mx::load_codes(request, elements);
    super::mx::store_values(
        to,
        values,
        codes
            .iter()
            .enumerate()
            .map(|(i, &code)| nvfp4_value(scales[i / NVFP4_BLOCK], code, tensor_scale)),
    );
    Ok(())
}
