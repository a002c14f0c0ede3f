//! The first element a trapping conversion traps on (WebAssembly's `trunc`,
//! [`crate::rules::Rules::TRAPPING`]), found before a batch kernel runs, so that the kernel
//! converts only what comes before it and the caller gets a typed error naming it
//! ([`crate::jit::JitError::Trap`]).
//!
//! The test is exact in host arithmetic: every half, bfloat16, fp8, float and double is a double, rounding a
//! double to an integral value (`trunc`, `round_ties_even`, `ceil`, `floor`) is exact, and the
//! bounds (0 or -2^(N-1), and 2^N or 2^(N-1)) are doubles. `tests/traps.rs` checks it against
//! [`crate::reference::traps`] (soft-float, from the WebAssembly words) on every half, bfloat16
//! and fp8 pattern and on float and double edges.

use crate::buffer::bytes_per_vector;
use crate::lower::small_float::SmallFloat;
use crate::request::Conversion;
use crate::types::{Layout, Rounding, ScalarType};

/// Where a conversion traps: the element's number (components counted in order, padding not)
/// and the value as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FirstTrap {
    /// The vector (OpenCL value) that holds it.
    pub vector: usize,
    /// The element's number among all components.
    pub element: usize,
    /// Its value, written as a number (`NaN`, `inf`, `3000000000`).
    pub value: String,
}

/// The first element of `src` (raw little-endian elements in `layout`) on which `conv`
/// traps, if its rules trap.
pub(crate) fn first(conv: &Conversion, layout: Layout, src: &[u8]) -> Option<FirstTrap> {
    let (s, d) = (conv.src(), conv.dst());
    if !conv.rules().traps() || !s.elem.is_float() || !d.elem.is_integer() {
        return None;
    }
    let rounding = conv.effective_rounding(Rounding::Rte);
    let lo = d.elem.int_min().unwrap_or(0) as f64;
    let top = (d.elem.int_max().unwrap_or(0) + 1) as f64;
    let bytes = s.elem.bytes();
    let per_vector = bytes_per_vector(s, layout);
    let lanes = s.lanes();
    for (v, vector) in src.chunks_exact(per_vector).enumerate() {
        for c in 0..lanes {
            let mut le = [0u8; 8];
            le[..bytes].copy_from_slice(&vector[c * bytes..(c + 1) * bytes]);
            let x = as_f64(s.elem, u64::from_le_bytes(le));
            let t = match rounding {
                Rounding::Rtz => x.trunc(),
                Rounding::Rte => x.round_ties_even(),
                Rounding::Rtp => x.ceil(),
                Rounding::Rtn => x.floor(),
            };
            // NaN fails both comparisons; the bounds are exact doubles.
            if !(t >= lo && t < top) {
                return Some(FirstTrap {
                    vector: v,
                    element: v * lanes + c,
                    value: if x.is_nan() {
                        "NaN".into()
                    } else {
                        format!("{x}")
                    },
                });
            }
        }
    }
    None
}

/// The exact double of a floating type's bits (half, bfloat16 and fp8 included).
fn as_f64(t: ScalarType, bits: u64) -> f64 {
    match t {
        ScalarType::Double => f64::from_bits(bits),
        ScalarType::Float => f64::from(f32::from_bits(bits as u32)),
        _ => {
            let Some(fmt) = SmallFloat::of(t) else {
                unreachable!("first() checked that the source is a float")
            };
            let magnitude_bits = bits & u64::from(fmt.magnitude_mask());
            let largest = u64::from(fmt.largest_non_nan());
            let exp = (magnitude_bits >> fmt.fraction) as i32;
            let fraction = magnitude_bits & ((1 << fmt.fraction) - 1);
            let bias = fmt.bias as i32;
            let magnitude = if magnitude_bits > largest {
                f64::NAN
            } else if !fmt.nan_only && magnitude_bits == largest {
                f64::INFINITY
            } else if exp == 0 {
                // Subnormal: fraction x 2^(1 - bias - fraction bits), a product of exact
                // doubles (a power of two is exact).
                fraction as f64 * 2f64.powi(1 - bias - fmt.fraction as i32)
            } else {
                ((1 << fmt.fraction) | fraction) as f64
                    * 2f64.powi(exp - bias - fmt.fraction as i32)
            };
            if bits >> (fmt.width - 1) & 1 != 0 {
                -magnitude
            } else {
                magnitude
            }
        }
    }
}
