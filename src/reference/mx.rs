//! OCP Microscaling (MX) blocks, as the reference computes them: a block of float32 values
//! becomes one E8M0 scale and one element per value (OCP Microscaling Formats (MX) v1.0,
//! section 6.3, and the MX paper's Algorithm 1, arXiv 2310.10537; this project has the words
//! second-hand, see `docs/formats.md`).
//!
//! - **The scale** is a power of two X = 2^k, by one of three rules ([`ScaleRule`]), from the
//!   block's largest magnitude `amax`:
//!   - [`ScaleRule::OcpFloor`], OCP's: "Set X to be the largest power-of-two less than or equal
//!     to max(|V_i|), divided by the largest power-of-two representable in the element data
//!     type": k = floor(log2(amax)) - emax_elem (E4M3 8, E5M2 15, E2M3 2, E3M2 4, E2M1 2).
//!     Values above the element's largest one are then clamped.
//!   - [`ScaleRule::RoundUp`], NVIDIA's MXFP8 recipe (arXiv 2506.08027, "round-to-infinity")
//!     and CUDA's `__nv_fp8_e8m0` conversions: the smallest X with amax / X at most the
//!     element's largest value, so that no element saturates.
//!   - [`ScaleRule::NearestEven`], PyTorch's: the power of two nearest amax / max_elem, the tie
//!     1.5 * 2^k going up (clconv's E8M0 rte).
//!
//!   k is clamped to E8M0's range, -127 to 127 (the reference code's clamp, microsoft/
//!   microxcaling `mx_ops.py`): an all-zero block (amax = 0) gets 2^-127, code 0x00.
//! - **The elements**: P_i = V_i / X (exact: a power of two), rounded to nearest even into the
//!   element format with saturation: "normal numbers that exceed the representable range of the
//!   element format are clamped to the maximum representable value, preserving the sign"
//!   (clconv's `convert_<elem>_sat_rte(double)`).
//! - **NaN and infinity** (clconv's choice, one defined result for every rule): a block holding
//!   a NaN or an infinity has amax NaN or infinite, so X is NaN, as OCP says ("if X is NaN, the
//!   whole block is NaN"): the scale code is 0xff and every element is the element format's
//!   conversion of NaN (E4M3 0x7f, E5M2 0x7e, FP6/FP4 their largest positive value).

pub use crate::mx::ScaleRule;
use crate::mx::{element_range, MxBufferError, MxRequest, MX_BLOCK};
use crate::request::Conversion;
use crate::types::{Extensions, Rounding, ScalarType, VectorType};

/// An MX element format's largest finite value and its exponent, or `None`.
fn element(t: ScalarType) -> Option<(f64, i32)> {
    element_range(t)
}

/// floor(log2(x)) of a positive finite x, exactly.
fn floor_log2(x: f64) -> i32 {
    let mut e = x.log2().floor() as i32;
    while 2f64.powi(e) > x {
        e -= 1;
    }
    while 2f64.powi(e + 1) <= x {
        e += 1;
    }
    e
}

/// Quantises one block of float32 values into the MX element format `elem` (fp8e4m3,
/// fp8e5m2, fp6e2m3, fp6e3m2 or fp4e2m1, one code per byte of `elements`) under `rule`, and
/// returns the block's E8M0 scale code. `elements` must be as long as `block`; `None` for an
/// element type that is no MX format or mismatched lengths.
///
/// ```
/// use clconv::reference::{quantize_mx_block, ScaleRule};
/// use clconv::ScalarType::Fp8E4M3;
/// let mut block = [0.5f32; 32];
/// block[7] = 1000.0;
/// let mut e = [0u8; 32];
/// // OCP: 2^(floor(log2 1000) - 8) = 2: 1000 / 2 = 500 saturates to 448 (0x7e).
/// assert_eq!(quantize_mx_block(Fp8E4M3, ScaleRule::OcpFloor, &block, &mut e), Some(0x80));
/// assert_eq!(e[7], 0x7e);
/// // Rounded up: 4, and 1000 / 4 = 250 rounds to 256 (0x78).
/// assert_eq!(quantize_mx_block(Fp8E4M3, ScaleRule::RoundUp, &block, &mut e), Some(0x81));
/// assert_eq!(e[7], 0x78);
/// ```
pub fn quantize_mx_block(
    elem: ScalarType,
    rule: ScaleRule,
    block: &[f32],
    elements: &mut [u8],
) -> Option<u8> {
    let (max_elem, emax) = element(elem)?;
    if block.len() != elements.len() {
        return None;
    }
    let to_elem = Conversion::new(
        VectorType::scalar(ScalarType::Double),
        VectorType::scalar(elem),
        true,
        Some(Rounding::Rte),
        Extensions::default(),
    )
    .ok()?;
    let convert = super::ElementConverter::new(&to_elem, Rounding::Rte);
    let amax = block
        .iter()
        .map(|v| f64::from(v.abs()))
        .fold(0.0, |m: f64, v| {
            if v.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                m.max(v)
            }
        });
    if !amax.is_finite() {
        for e in elements.iter_mut() {
            *e = convert.convert(f64::NAN.to_bits()).bits as u8;
        }
        return Some(0xff);
    }
    let k = if amax == 0.0 {
        -127
    } else {
        match rule {
            ScaleRule::OcpFloor => floor_log2(amax) - emax,
            ScaleRule::RoundUp => {
                // The smallest k with amax <= max_elem * 2^k.
                let mut k = floor_log2(amax / max_elem);
                while max_elem * 2f64.powi(k) < amax {
                    k += 1;
                }
                while max_elem * 2f64.powi(k - 1) >= amax {
                    k -= 1;
                }
                k
            }
            ScaleRule::NearestEven => {
                // 2^k <= amax / max_elem < 2^(k + 1), on exact products; up from 1.5 * 2^k.
                let mut k = floor_log2(amax / max_elem);
                while max_elem * 2f64.powi(k) > amax {
                    k -= 1;
                }
                while max_elem * 2f64.powi(k + 1) <= amax {
                    k += 1;
                }
                k + i32::from(amax >= 1.5 * max_elem * 2f64.powi(k))
            }
        }
    }
    .clamp(-127, 127);
    let x = 2f64.powi(k);
    for (e, &v) in elements.iter_mut().zip(block) {
        // V / X is exact in double (a power of two, well inside double's range).
        let p = f64::from(v) / x;
        *e = convert.convert(p.to_bits()).bits as u8;
    }
    Some((k + 127) as u8)
}

/// The value of element `code` of format `elem` in a block with scale `scale`: the element's
/// value times 2^(scale - 127); NaN for the scale 0xff or an element NaN. `None` for a type
/// that is no MX element format.
///
/// ```
/// use clconv::reference::mx_value;
/// use clconv::ScalarType::Fp4E2M1;
/// assert_eq!(mx_value(Fp4E2M1, 0x7f + 3, 0x7), Some(48.0)); // 6 * 2^3
/// assert!(mx_value(Fp4E2M1, 0xff, 0x7).unwrap().is_nan());
/// ```
pub fn mx_value(elem: ScalarType, scale: u8, code: u8) -> Option<f64> {
    element(elem)?;
    let decode = Conversion::new(
        VectorType::scalar(elem),
        VectorType::scalar(ScalarType::Double),
        false,
        None,
        Extensions::default(),
    )
    .ok()?;
    let v = f64::from_bits(super::convert_element(&decode, Rounding::Rte, u64::from(code)).bits);
    if scale == 0xff {
        return Some(f64::NAN);
    }
    Some(v * 2f64.powi(i32::from(scale) - 127))
}

/// The MX element formats [`quantize_mx_block`] takes: fp8e4m3, fp8e5m2, fp6e2m3, fp6e3m2,
/// fp4e2m1.
///
/// ```
/// assert_eq!(clconv::reference::mx_element_formats().len(), 5);
/// ```
pub fn mx_element_formats() -> [ScalarType; 5] {
    [
        ScalarType::Fp8E4M3,
        ScalarType::Fp8E5M2,
        ScalarType::Fp6E2M3,
        ScalarType::Fp6E3M2,
        ScalarType::Fp4E2M1,
    ]
}

/// One element conversion of the reference, scalar to scalar.
fn converter(from: ScalarType, to: ScalarType, sat: bool) -> super::ElementConverter {
    let conv = Conversion::new(
        VectorType::scalar(from),
        VectorType::scalar(to),
        sat,
        Some(Rounding::Rte),
        Extensions::with_fp16(),
    )
    .expect("conversions between float, double, half, bfloat and the MX elements exist");
    super::ElementConverter::new(&conv, Rounding::Rte)
}

/// Reads little-endian values of `t` (float, half or bfloat) as float32, exactly.
pub(super) fn values_as_f32(t: ScalarType, bytes: &[u8]) -> Vec<f32> {
    if t == ScalarType::Float {
        return bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
    }
    let widen = converter(t, ScalarType::Float, false);
    bytes
        .chunks_exact(2)
        .map(|c| {
            f32::from_bits(
                widen
                    .convert(u64::from(u16::from_le_bytes([c[0], c[1]])))
                    .bits as u32,
            )
        })
        .collect()
}

/// [`quantize_mx_block`] over whole buffers, as a batch kernel of `request` runs it: `values`
/// holds little-endian values of the request's value type, `elements` one code per byte (two,
/// low nibble first, for `mxfp4e2m1x2`),
/// `scales` one E8M0 code per block of 32 (a last, shorter block is one padded with zeros). An
/// error when the lengths do not fit ([`MxRequest::check_lengths`]) or `request` is a
/// dequantisation.
///
/// ```
/// use clconv::mx::MxRequest;
/// use clconv::reference::mx_quantize;
/// let r = MxRequest::parse("convert_mxfp4e2m1(float)").unwrap();
/// let values: Vec<u8> = [1.0f32, -3.0, 0.25].iter().flat_map(|v| v.to_le_bytes()).collect();
/// let (mut elements, mut scales) = ([0u8; 3], [0u8; 1]);
/// mx_quantize(&r, &values, &mut elements, &mut scales).unwrap();
/// // amax 3 = 1.5 * 2^1: the scale is 2^(1 - 2) (0x7e); 1 -> 2.0, -3 -> -6.0, 0.25 -> 0.5.
/// assert_eq!((scales, elements), ([0x7e], [0x4, 0xf, 0x1]));
/// ```
pub fn mx_quantize(
    request: &MxRequest,
    values: &[u8],
    elements: &mut [u8],
    scales: &mut [u8],
) -> Result<(), MxBufferError> {
    if request.is_nvfp4() {
        return Err(MxBufferError::TensorScaleUse {
            request: request.to_string(),
            why: "an NVFP4 request takes a tensor scale: call nvfp4_quantize",
        });
    }
    let MxRequest::Quantize {
        elem, from, rule, ..
    } = *request
    else {
        return Err(MxBufferError::ElementType {
            request: request.to_string(),
            buffer: "value",
            got: "a dequantisation's output",
            expected: "values to quantise",
        });
    };
    request.check_byte_lengths(values.len(), elements.len(), scales.len())?;
    let values = values_as_f32(from, values);
    let mut codes = vec![0u8; values.len()];
    for ((block, out), scale) in values
        .chunks(MX_BLOCK)
        .zip(codes.chunks_mut(MX_BLOCK))
        .zip(scales.iter_mut())
    {
        *scale = quantize_mx_block(elem, rule, block, out).expect("an MX element, equal lengths");
    }
    store_codes(request, &codes, elements);
    Ok(())
}

/// Writes one code per value into `elements`: a byte each, or for the packed layouts two to
/// a byte, element 2i in the low nibble and 2i + 1 in the high one (zero past the end).
pub(super) fn store_codes(request: &MxRequest, codes: &[u8], elements: &mut [u8]) {
    if request.packed() {
        for (byte, pair) in elements.iter_mut().zip(codes.chunks(2)) {
            *byte = pair[0] & 0xf | pair.get(1).map_or(0, |c| c << 4);
        }
    } else {
        elements.copy_from_slice(codes);
    }
}

/// The codes of `elements`, one per value (a packed byte holds two, low nibble first).
pub(super) fn load_codes(request: &MxRequest, elements: &[u8]) -> Vec<u8> {
    if request.packed() {
        elements.iter().flat_map(|&b| [b & 0xf, b >> 4]).collect()
    } else {
        elements.to_vec()
    }
}

/// Rounds each exact value to nearest even into `to` and writes it little-endian into
/// `values`; every NaN as the type's positive quiet NaN (clconv's choice: a NaN's sign is not
/// kept, so every target gives the same bits).
pub(super) fn store_values(to: ScalarType, values: &mut [u8], exact: impl Iterator<Item = f64>) {
    let bytes = to.bytes();
    let narrow = converter(ScalarType::Double, to, false);
    for (v, out) in exact.zip(values.chunks_exact_mut(bytes)) {
        let v = if v.is_nan() { f64::NAN } else { v };
        let bits = narrow.convert(v.to_bits()).bits;
        out.copy_from_slice(&bits.to_le_bytes()[..bytes]);
    }
}

/// The way back: every element times its block's scale, rounded to nearest even into the
/// request's value type (infinity past the type's range), written little-endian into `values`.
/// A NaN result (the scale 0xff, a NaN element) is the type's positive quiet NaN (0x7fc00000,
/// 0x7e00, 0x7fc0): the sign of a NaN element is not kept, so every target gives the same bits.
///
/// ```
/// use clconv::mx::MxRequest;
/// use clconv::reference::mx_dequantize;
/// let r = MxRequest::parse("convert_float(mxfp4e2m1)").unwrap();
/// let mut values = [0u8; 8];
/// mx_dequantize(&r, &[0x4, 0xf], &[0x7e], &mut values).unwrap();
/// assert_eq!(values[..4], 1.0f32.to_le_bytes());
/// assert_eq!(values[4..], (-3.0f32).to_le_bytes());
/// ```
pub fn mx_dequantize(
    request: &MxRequest,
    elements: &[u8],
    scales: &[u8],
    values: &mut [u8],
) -> Result<(), MxBufferError> {
    if request.is_nvfp4() {
        return Err(MxBufferError::TensorScaleUse {
            request: request.to_string(),
            why: "an NVFP4 request takes a tensor scale: call nvfp4_dequantize",
        });
    }
    let MxRequest::Dequantize { elem, to, .. } = *request else {
        return Err(MxBufferError::ElementType {
            request: request.to_string(),
            buffer: "value",
            got: "a quantisation's input",
            expected: "values to write",
        });
    };
    request.check_byte_lengths(values.len(), elements.len(), scales.len())?;
    let codes = load_codes(request, elements);
    let exact = codes
        .iter()
        .enumerate()
        .map(|(i, &code)| mx_value(elem, scales[i / MX_BLOCK], code).expect("an MX element"));
    store_values(to, values, exact);
    Ok(())
}
