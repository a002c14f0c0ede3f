//! The first element a trapping conversion traps on (WebAssembly's `trunc`,
//! [`crate::rules::Rules::TRAPPING`]), found before a batch kernel runs, so that the kernel
//! converts only what comes before it and the caller gets a typed error naming it
//! ([`crate::jit::JitError::Trap`]).
//!
//! The test is exact in host arithmetic: every half, float and double is a double, rounding a
//! double to an integral value (`trunc`, `round_ties_even`, `ceil`, `floor`) is exact, and the
//! bounds (0 or -2^(N-1), and 2^N or 2^(N-1)) are doubles. `tests/traps.rs` checks it against
//! [`crate::reference::traps`] (soft-float, from the WebAssembly words) on every half and on
//! float and double edges.

use crate::buffer::bytes_per_vector;
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

/// The exact double of a half, float or double's bits.
fn as_f64(t: ScalarType, bits: u64) -> f64 {
    match t {
        ScalarType::Double => f64::from_bits(bits),
        ScalarType::Float => f64::from(f32::from_bits(bits as u32)),
        _ => {
            let negative = bits & 0x8000 != 0;
            let exp = (bits >> 10) & 0x1f;
            let mantissa = bits & 0x3ff;
            let magnitude = match exp {
                0x1f if mantissa != 0 => f64::NAN,
                0x1f => f64::INFINITY,
                // Subnormal: mantissa x 2^-24, a product of exact doubles.
                0 => mantissa as f64 * (1.0 / 16_777_216.0),
                // Normal: the same bits, rebiased into a double's fields.
                _ => f64::from_bits(((exp + 1023 - 15) << 52) | (mantissa << 42)),
            };
            if negative {
                -magnitude
            } else {
                magnitude
            }
        }
    }
}
