//! Scaled block requests: OCP Microscaling (MX), where a block of 32 values shares one E8M0
//! scale (OCP Microscaling Formats (MX) v1.0, section 5; the rules are in [`crate::reference`]'s
//! `quantize_mx_block` and in `docs/formats.md`), and NVIDIA's NVFP4, where a block of 16 FP4
//! E2M1 values shares one E4M3 scale under one float32 scale per tensor (the rules in
//! [`crate::reference`]'s `quantize_nvfp4_block`).
//!
//! An MX request is no [`crate::Request`]: it reads or writes two buffers on one side (the
//! elements and the scales), so it has its own kernels ([`crate::lower::Lowering::quantize_mx_block`]
//! for the builder API, `Jit::compile_blocks` for batches), as arithmetic has.
//!
//! # The spelling
//!
//! clconv's own, shaped like a conversion name, the block type spelled `mx<element>`:
//!
//! ```text
//! convert_mx<elem>[_rtp|_rte](<value>)     quantise: values -> elements and scales
//! convert_<value>(mx<elem>)                dequantise: elements and scales -> values
//!     elem   fp8e4m3 | fp8e5m2 | fp6e2m3 | fp6e3m2 | fp4e2m1  (MXFP8, MXFP6, MXFP4)
//!            | fp4e2m1x2                                       (MXFP4, packed)
//!     value  float | half | bfloat
//! convert_nvfp4[x2](<value>)               NVFP4: values -> E2M1 elements and E4M3 scales
//! convert_<value>(nvfp4[x2])               and back; x2: two elements to a byte
//! ```
//!
//! The suffix is the scale's rule ([`ScaleRule`]): none for OCP's (2^(floor(log2 amax) -
//! emax_elem)), `_rtp` for the smallest power of two that keeps every element in range
//! (NVIDIA's MXFP8 recipe, CUDA's `__nv_fp8_e8m0` rounding up), `_rte` for the power of two
//! nearest amax / max_elem (PyTorch's E8M0 conversion). The elements always round to nearest
//! even and saturate (OCP MX 6.3), so `_sat`, `_rtz` and `_rtn` are refused. NVFP4 has one
//! rule (its scale and elements both round to nearest even and saturate) and takes no suffix;
//! its kernels take the tensor's float32 decode scale beside the buffers.
//!
//! ```
//! use clconv::mx::{MxRequest, ScaleRule};
//! use clconv::ScalarType::{Float, Fp8E4M3};
//! let r: MxRequest = "convert_mxfp8e4m3_rtp(float)".parse().unwrap();
//! assert_eq!(r, MxRequest::Quantize { elem: Fp8E4M3, from: Float, rule: ScaleRule::RoundUp, packed: false });
//! assert_eq!(r.to_string(), "convert_mxfp8e4m3_rtp(float)");
//! let back: MxRequest = "convert_float(mxfp8e4m3)".parse().unwrap();
//! assert_eq!(back, MxRequest::Dequantize { elem: Fp8E4M3, to: Float, packed: false });
//! assert!("convert_mxfp8e4m3_rtz(float)".parse::<MxRequest>().is_err());
//! ```
//!
//! # Buffers
//!
//! Elements one per byte (a code in the low bits, as the element types' buffers hold it), or
//! for `fp4e2m1x2` two per byte, element 2i in bits 0-3 and element 2i + 1 in bits 4-7 (the
//! order of PyTorch's `float4_e2m1fn_x2`, whose header draws `val1 : val0` over bits
//! `7654 : 3210`); scales one E8M0 byte per block of [`MX_BLOCK`] elements, in separate
//! buffers (the layout of PyTorch's and ml_dtypes' MX tensors). A last block shorter than 32 is
//! a block padded with zeros, which changes neither its scale nor its elements: `n` values
//! take `n` elements (`ceil(n / 2)` bytes packed, an odd last one's high nibble 0) and
//! `ceil(n / 32)` scales. NVFP4 the same with blocks of [`NVFP4_BLOCK`] = 16 and one E4M3
//! byte per block.

use crate::types::ScalarType;
use std::fmt;
use std::str::FromStr;

/// The longest text [`MxRequest::parse`] reads: no MX request's name is half as long.
const MAX_NAME_LEN: usize = 64;

/// Elements per MX block (OCP MX v1.0, section 5: k = 32 for every concrete MX format).
pub const MX_BLOCK: usize = 32;

/// Elements per NVFP4 block (NVIDIA's NVFP4: "a micro-block of 16 elements" shares one E4M3
/// scale).
pub const NVFP4_BLOCK: usize = 16;

/// How an MX block's shared scale is chosen from its largest magnitude `amax`.
///
/// ```
/// use clconv::mx::ScaleRule;
/// assert_eq!(ScaleRule::ALL.len(), 3);
/// assert_eq!(ScaleRule::RoundUp.suffix(), "_rtp");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScaleRule {
    /// OCP MX v1.0's: 2^(floor(log2(amax)) - emax_elem); elements beyond the range saturate.
    OcpFloor,
    /// The smallest power of two that keeps every element in range (NVIDIA's, CUDA's).
    RoundUp,
    /// The power of two nearest amax / max_elem, ties up (PyTorch's).
    NearestEven,
}

impl ScaleRule {
    /// The three rules.
    pub const ALL: [ScaleRule; 3] = [
        ScaleRule::OcpFloor,
        ScaleRule::RoundUp,
        ScaleRule::NearestEven,
    ];

    /// The rule's suffix in a request's name: `""`, `"_rtp"` or `"_rte"`.
    pub const fn suffix(self) -> &'static str {
        match self {
            ScaleRule::OcpFloor => "",
            ScaleRule::RoundUp => "_rtp",
            ScaleRule::NearestEven => "_rte",
        }
    }
}

/// An MX element format's largest finite value and its exponent (`emax_elem`, OCP MX v1.0
/// table 1), or `None` for a type that is no MX element format.
///
/// ```
/// use clconv::{mx::element_range, ScalarType};
/// assert_eq!(element_range(ScalarType::Fp8E4M3), Some((448.0, 8)));
/// assert_eq!(element_range(ScalarType::Float), None);
/// ```
pub const fn element_range(t: ScalarType) -> Option<(f64, i32)> {
    Some(match t {
        ScalarType::Fp8E4M3 => (448.0, 8),
        ScalarType::Fp8E5M2 => (57344.0, 15),
        ScalarType::Fp6E2M3 => (7.5, 2),
        ScalarType::Fp6E3M2 => (28.0, 4),
        ScalarType::Fp4E2M1 => (6.0, 2),
        _ => return None,
    })
}

/// The MX element formats: fp8e4m3, fp8e5m2, fp6e2m3, fp6e3m2, fp4e2m1.
pub const ELEMENTS: [ScalarType; 5] = [
    ScalarType::Fp8E4M3,
    ScalarType::Fp8E5M2,
    ScalarType::Fp6E2M3,
    ScalarType::Fp6E3M2,
    ScalarType::Fp4E2M1,
];

/// The value types a block is quantised from and dequantised to: float, half, bfloat.
pub const VALUES: [ScalarType; 3] = [ScalarType::Float, ScalarType::Half, ScalarType::BFloat];

/// One MX block request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MxRequest {
    /// `convert_mx<elem>[_rtp|_rte](<from>)`: values to elements and one scale per block.
    Quantize {
        /// The element format.
        elem: ScalarType,
        /// The values' type: float, half or bfloat.
        from: ScalarType,
        /// How the scale is chosen.
        rule: ScaleRule,
        /// FP4 elements two to a byte (`mxfp4e2m1x2`).
        packed: bool,
    },
    /// `convert_<to>(mx<elem>)`: elements and scales to values, each element times its
    /// block's scale, rounded to nearest even into `to`.
    Dequantize {
        /// The element format.
        elem: ScalarType,
        /// The values' type: float, half or bfloat.
        to: ScalarType,
        /// FP4 elements two to a byte (`mxfp4e2m1x2`).
        packed: bool,
    },
    /// `convert_nvfp4[x2](<from>)`: values to FP4 E2M1 elements and one E4M3 scale per block
    /// of 16, under the tensor's float32 decode scale.
    QuantizeNvfp4 {
        /// The values' type: float, half or bfloat.
        from: ScalarType,
        /// Elements two to a byte (`nvfp4x2`).
        packed: bool,
    },
    /// `convert_<to>(nvfp4[x2])`: each element times its block's scale times the tensor's,
    /// rounded once to nearest even into `to`.
    DequantizeNvfp4 {
        /// The values' type: float, half or bfloat.
        to: ScalarType,
        /// Elements two to a byte (`nvfp4x2`).
        packed: bool,
    },
}

impl MxRequest {
    /// Parses the spelling in the module docs.
    ///
    /// ```
    /// use clconv::mx::{MxParseError, MxRequest};
    /// assert!(MxRequest::parse("convert_mxfp4e2m1_rte(bfloat)").is_ok());
    /// assert!(matches!(MxRequest::parse("convert_mxfp4e2m1(double)"), Err(MxParseError::ValueType { .. })));
    /// ```
    pub fn parse(text: &str) -> Result<MxRequest, MxParseError> {
        // Length and characters first: an error never echoes a huge or unprintable text.
        if text.len() > MAX_NAME_LEN {
            return Err(MxParseError::TooLong {
                len: text.len(),
                max: MAX_NAME_LEN,
            });
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '(' | ')' | ' ');
        if let Some(character) = text.chars().find(|&c| !allowed(c)) {
            return Err(MxParseError::Character { character });
        }
        let text = text.trim();
        let bad = |why: &str| MxParseError::Syntax {
            name: text.to_string(),
            why: why.to_string(),
        };
        let (name, arg) = text
            .strip_suffix(')')
            .and_then(|t| t.split_once('('))
            .ok_or_else(|| bad("it is not of the form convert_<dst>(<src>)"))?;
        let name = name
            .strip_prefix("convert_")
            .ok_or_else(|| bad("it does not start with convert_"))?;
        let arg = arg.trim();
        if let Some(layout) = arg.strip_prefix("nvfp4") {
            let packed = nvfp4_layout(layout, text)?;
            let to = value_type(name, text)?;
            return Ok(MxRequest::DequantizeNvfp4 { to, packed });
        }
        if let Some(rest) = name.strip_prefix("nvfp4") {
            let (layout, suffix) = rest.split_once('_').unwrap_or((rest, ""));
            if !suffix.is_empty() {
                return Err(MxParseError::Nvfp4Suffix {
                    name: text.to_string(),
                    suffix: suffix.to_string(),
                });
            }
            let packed = nvfp4_layout(layout, text)?;
            let from = value_type(arg, text)?;
            return Ok(MxRequest::QuantizeNvfp4 { from, packed });
        }
        if let Some(block) = arg.strip_prefix("mx") {
            let (elem, packed) = element(block, text)?;
            let to = value_type(name, text)?;
            return Ok(MxRequest::Dequantize { elem, to, packed });
        }
        let block = name
            .strip_prefix("mx")
            .ok_or_else(|| bad("neither the destination nor the source is an mx<element> block"))?;
        let (block, rule) = match block.split_once('_') {
            None => (block, ScaleRule::OcpFloor),
            Some((block, "rtp")) => (block, ScaleRule::RoundUp),
            Some((block, "rte")) => (block, ScaleRule::NearestEven),
            Some((_, suffix)) => {
                return Err(MxParseError::Suffix {
                    name: text.to_string(),
                    suffix: suffix.to_string(),
                })
            }
        };
        let (elem, packed) = element(block, text)?;
        let from = value_type(arg, text)?;
        Ok(MxRequest::Quantize {
            elem,
            from,
            rule,
            packed,
        })
    }

    /// True when `text` names an MX block request (well formed or not): `mx` begins its
    /// destination or its argument. Other conversion names never do.
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// assert!(MxRequest::is_mx_name("convert_mxfp8e4m3_rtz(float)"));
    /// assert!(MxRequest::is_mx_name("convert_float(mxfp9)"));
    /// assert!(MxRequest::is_mx_name("convert_nvfp4x2(half)"));
    /// assert!(!MxRequest::is_mx_name("convert_fp8e4m3(float)"));
    /// ```
    pub fn is_mx_name(text: &str) -> bool {
        let text = text.trim();
        let block = |t: &str| t.starts_with("mx") || t.starts_with("nvfp4");
        text.strip_prefix("convert_").is_some_and(block)
            || text
                .split_once('(')
                .is_some_and(|(_, arg)| block(arg.trim_start()))
    }

    /// Every block request: MX's 6 element layouts (the five formats, FP4 also packed) x 3
    /// value types x (3 scale rules + the way back), 72, and NVFP4's 2 layouts x 3 value types
    /// x 2 ways, 12: 84 in all.
    ///
    /// ```
    /// assert_eq!(clconv::mx::MxRequest::all().len(), 84);
    /// ```
    pub fn all() -> Vec<MxRequest> {
        let mut out = Vec::new();
        let layouts = ELEMENTS
            .into_iter()
            .map(|e| (e, false))
            .chain([(ScalarType::Fp4E2M1, true)]);
        for (elem, packed) in layouts {
            for value in VALUES {
                for rule in ScaleRule::ALL {
                    out.push(MxRequest::Quantize {
                        elem,
                        from: value,
                        rule,
                        packed,
                    });
                }
                out.push(MxRequest::Dequantize {
                    elem,
                    to: value,
                    packed,
                });
            }
        }
        for packed in [false, true] {
            for value in VALUES {
                out.push(MxRequest::QuantizeNvfp4 {
                    from: value,
                    packed,
                });
                out.push(MxRequest::DequantizeNvfp4 { to: value, packed });
            }
        }
        out
    }

    /// True for NVFP4 requests, whose kernels take a tensor scale.
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// assert!(MxRequest::parse("convert_nvfp4(float)").unwrap().is_nvfp4());
    /// assert!(!MxRequest::parse("convert_mxfp4e2m1(float)").unwrap().is_nvfp4());
    /// ```
    pub const fn is_nvfp4(&self) -> bool {
        matches!(
            self,
            MxRequest::QuantizeNvfp4 { .. } | MxRequest::DequantizeNvfp4 { .. }
        )
    }

    /// True for the way from values to elements and scales.
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// assert!(MxRequest::parse("convert_nvfp4(half)").unwrap().is_quantize());
    /// assert!(!MxRequest::parse("convert_half(mxfp6e2m3)").unwrap().is_quantize());
    /// ```
    pub const fn is_quantize(&self) -> bool {
        matches!(
            self,
            MxRequest::Quantize { .. } | MxRequest::QuantizeNvfp4 { .. }
        )
    }

    /// Values per block: [`MX_BLOCK`] (32) or [`NVFP4_BLOCK`] (16).
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// assert_eq!(MxRequest::parse("convert_float(nvfp4x2)").unwrap().block_len(), 16);
    /// ```
    pub const fn block_len(&self) -> usize {
        if self.is_nvfp4() {
            NVFP4_BLOCK
        } else {
            MX_BLOCK
        }
    }

    /// The scales' type: E8M0 for MX, E4M3 for NVFP4.
    ///
    /// ```
    /// use clconv::{mx::MxRequest, ScalarType};
    /// assert_eq!(MxRequest::parse("convert_nvfp4(float)").unwrap().scale_type(), ScalarType::Fp8E4M3);
    /// ```
    pub const fn scale_type(&self) -> ScalarType {
        if self.is_nvfp4() {
            ScalarType::Fp8E4M3
        } else {
            ScalarType::Fp8E8M0
        }
    }

    /// Blocks that `values` values fill, the last one perhaps in part.
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// assert_eq!(MxRequest::parse("convert_nvfp4(float)").unwrap().block_count(33), 3);
    /// ```
    pub const fn block_count(&self, values: usize) -> usize {
        values.div_ceil(self.block_len())
    }

    /// True for FP4 elements two to a byte (`mxfp4e2m1x2`).
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// assert!(MxRequest::parse("convert_mxfp4e2m1x2_rtp(half)").unwrap().packed());
    /// assert!(!MxRequest::parse("convert_float(mxfp4e2m1)").unwrap().packed());
    /// ```
    pub const fn packed(&self) -> bool {
        match *self {
            MxRequest::Quantize { packed, .. }
            | MxRequest::Dequantize { packed, .. }
            | MxRequest::QuantizeNvfp4 { packed, .. }
            | MxRequest::DequantizeNvfp4 { packed, .. } => packed,
        }
    }

    /// Bytes that `values` elements take: one each, or half a byte each packed (rounded up).
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// assert_eq!(MxRequest::parse("convert_mxfp4e2m1x2(float)").unwrap().element_bytes(33), 17);
    /// assert_eq!(MxRequest::parse("convert_mxfp4e2m1(float)").unwrap().element_bytes(33), 33);
    /// ```
    pub const fn element_bytes(&self, values: usize) -> usize {
        if self.packed() {
            values.div_ceil(2)
        } else {
            values
        }
    }

    /// The element format.
    ///
    /// ```
    /// use clconv::{mx::MxRequest, ScalarType};
    /// let r = MxRequest::parse("convert_bfloat(mxfp6e3m2)").unwrap();
    /// assert_eq!((r.elem(), r.value()), (ScalarType::Fp6E3M2, ScalarType::BFloat));
    /// ```
    pub const fn elem(&self) -> ScalarType {
        match *self {
            MxRequest::Quantize { elem, .. } | MxRequest::Dequantize { elem, .. } => elem,
            MxRequest::QuantizeNvfp4 { .. } | MxRequest::DequantizeNvfp4 { .. } => {
                ScalarType::Fp4E2M1
            }
        }
    }

    /// The values' type (the source of a quantisation, the destination of a dequantisation).
    pub const fn value(&self) -> ScalarType {
        match *self {
            MxRequest::Quantize { from, .. } | MxRequest::QuantizeNvfp4 { from, .. } => from,
            MxRequest::Dequantize { to, .. } | MxRequest::DequantizeNvfp4 { to, .. } => to,
        }
    }

    /// MX blocks that `values` values fill, the last one perhaps in part: ceil(values / 32)
    /// ([`MxRequest::block_count`] for any request).
    ///
    /// ```
    /// assert_eq!(clconv::mx::MxRequest::blocks(33), 2);
    /// ```
    pub const fn blocks(values: usize) -> usize {
        values.div_ceil(MX_BLOCK)
    }

    /// Checks that a run's buffers fit together: as many element bytes as
    /// [`MxRequest::element_bytes`] says, and one scale per block (ceil(values / 32) for MX,
    /// ceil(values / 16) for NVFP4). Returns the number of values.
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// let r = MxRequest::parse("convert_mxfp8e4m3(float)").unwrap();
    /// assert_eq!(r.check_lengths(40, 40, 2), Ok(40));
    /// assert!(r.check_lengths(40, 40, 1).is_err());
    /// ```
    pub fn check_lengths(
        &self,
        values: usize,
        elements: usize,
        scales: usize,
    ) -> Result<usize, MxBufferError> {
        if elements != self.element_bytes(values) || scales != self.block_count(values) {
            return Err(self.lengths_error(values, elements, scales));
        }
        Ok(values)
    }

    /// Checks an NVFP4 tensor scale: a positive finite float32 (subnormals included).
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// let r = MxRequest::parse("convert_nvfp4(float)").unwrap();
    /// assert!(r.check_tensor_scale(0.25).is_ok());
    /// assert!(r.check_tensor_scale(0.0).is_err());
    /// assert!(r.check_tensor_scale(f32::NAN).is_err());
    /// ```
    pub fn check_tensor_scale(&self, scale: f32) -> Result<(), MxBufferError> {
        if scale > 0.0 && scale.is_finite() {
            Ok(())
        } else {
            Err(MxBufferError::TensorScale {
                request: self.to_string(),
                scale_bits: scale.to_bits(),
            })
        }
    }

    /// The error of buffers that do not fit: what they hold and what `values` need.
    fn lengths_error(&self, values: usize, elements: usize, scales: usize) -> MxBufferError {
        MxBufferError::Lengths {
            request: self.to_string(),
            values,
            elements,
            expected_elements: self.element_bytes(values),
            scales,
            expected_scales: self.block_count(values),
            block: self.block_len(),
        }
    }
}

impl MxRequest {
    /// [`MxRequest::check_lengths`] on byte lengths: `value_bytes` must hold whole values of
    /// the request's value type. Returns the number of values.
    ///
    /// ```
    /// use clconv::mx::MxRequest;
    /// let r = MxRequest::parse("convert_half(mxfp4e2m1x2)").unwrap();
    /// assert_eq!(r.check_byte_lengths(66, 17, 2), Ok(33));
    /// assert!(r.check_byte_lengths(65, 17, 2).is_err()); // half a half
    /// ```
    pub fn check_byte_lengths(
        &self,
        value_bytes: usize,
        elements: usize,
        scales: usize,
    ) -> Result<usize, MxBufferError> {
        let bytes = self.value().bytes();
        let values = value_bytes / bytes;
        if !value_bytes.is_multiple_of(bytes) {
            return Err(self.lengths_error(values, elements, scales));
        }
        self.check_lengths(values, elements, scales)
    }
}

impl fmt::Display for MxRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MxRequest::Quantize {
                elem,
                from,
                rule,
                packed,
            } => write!(
                f,
                "convert_mx{}{}{}({})",
                elem.name(),
                if packed { "x2" } else { "" },
                rule.suffix(),
                from.name()
            ),
            MxRequest::Dequantize { elem, to, packed } => write!(
                f,
                "convert_{}(mx{}{})",
                to.name(),
                elem.name(),
                if packed { "x2" } else { "" }
            ),
            MxRequest::QuantizeNvfp4 { from, packed } => write!(
                f,
                "convert_nvfp4{}({})",
                if packed { "x2" } else { "" },
                from.name()
            ),
            MxRequest::DequantizeNvfp4 { to, packed } => write!(
                f,
                "convert_{}(nvfp4{})",
                to.name(),
                if packed { "x2" } else { "" }
            ),
        }
    }
}

impl FromStr for MxRequest {
    type Err = MxParseError;

    fn from_str(s: &str) -> Result<MxRequest, MxParseError> {
        MxRequest::parse(s)
    }
}

/// The element format of a block's name, and whether it is FP4 packed (`fp4e2m1x2`).
fn element(name: &str, text: &str) -> Result<(ScalarType, bool), MxParseError> {
    if name == "fp4e2m1x2" {
        return Ok((ScalarType::Fp4E2M1, true));
    }
    ELEMENTS
        .into_iter()
        .find(|t| t.name() == name)
        .map(|t| (t, false))
        .ok_or_else(|| MxParseError::Element {
            name: text.to_string(),
            element: format!("mx{name}"),
        })
}

/// Whether an NVFP4 block's name (what follows `nvfp4`) is the packed one (`x2`).
fn nvfp4_layout(layout: &str, text: &str) -> Result<bool, MxParseError> {
    match layout {
        "" => Ok(false),
        "x2" => Ok(true),
        _ => Err(MxParseError::Element {
            name: text.to_string(),
            element: format!("nvfp4{layout}"),
        }),
    }
}

fn value_type(name: &str, text: &str) -> Result<ScalarType, MxParseError> {
    VALUES
        .into_iter()
        .find(|t| t.name() == name)
        .ok_or_else(|| MxParseError::ValueType {
            name: text.to_string(),
            value: name.to_string(),
        })
}

/// Why a name is not an MX block request. Every message says how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MxParseError {
    /// Longer than any MX request's name.
    #[error("the name is {len} bytes long; no MX block request's name is longer than {max}: check what was passed")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A character no MX request's name has.
    #[error("the name holds {character:?}; MX block requests are spelled with letters, digits, `_`, `(` and `)`")]
    Character {
        /// The first such character.
        character: char,
    },
    /// Not shaped like an MX request.
    #[error("`{name}` is no MX block request: {why}; write convert_mx<elem>[_rtp|_rte](<value>) or convert_<value>(mx<elem>)")]
    Syntax {
        /// The text.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// An element format MX does not have.
    #[error("`{name}`: {element} is no block format; the blocks are mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4e2m1, mxfp4e2m1x2 (packed), nvfp4 and nvfp4x2 (packed)")]
    Element {
        /// The text.
        name: String,
        /// The element part.
        element: String,
    },
    /// A suffix on an NVFP4 request, which has one rule.
    #[error("`{name}`: NVFP4 takes no suffix (_{suffix}): its scales and elements always round to nearest even and saturate; write convert_nvfp4[x2](<value>)")]
    Nvfp4Suffix {
        /// The text.
        name: String,
        /// The suffix written, without its `_`.
        suffix: String,
    },
    /// A value type blocks do not come from or go to.
    #[error(
        "`{name}`: blocks are quantised from and dequantised to float, half or bfloat, not {value}"
    )]
    ValueType {
        /// The text.
        name: String,
        /// The value type written.
        value: String,
    },
    /// A suffix that is no scale rule.
    #[error("`{name}`: _{suffix} is no MX scale rule; write no suffix for OCP's (floor(log2 amax) - emax), _rtp to round the scale up (no element saturates) or _rte for the nearest power of two; the elements always round to nearest even and saturate")]
    Suffix {
        /// The text.
        name: String,
        /// The suffix written, without its `_`.
        suffix: String,
    },
}

/// Why a run's buffers do not fit an MX request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MxBufferError {
    /// The three lengths disagree.
    #[error("{request}: {values} values need {expected_elements} element bytes and {expected_scales} scales (one per block of {block}, the last perhaps short), but the buffers hold {elements} element bytes and {scales} scales")]
    Lengths {
        /// The request.
        request: String,
        /// Values in the value buffer.
        values: usize,
        /// Bytes in the element buffer.
        elements: usize,
        /// Element bytes the values need.
        expected_elements: usize,
        /// Scales in the scale buffer.
        scales: usize,
        /// Scales the values need.
        expected_scales: usize,
        /// Values per block.
        block: usize,
    },
    /// An NVFP4 tensor scale that is not a positive finite float.
    #[error("{request}: the tensor scale {} is not a positive finite float32; NVFP4's tensor scale is the decode factor (a tensor's amax / (6 * 448) in NVIDIA's recipe)", f32::from_bits(*scale_bits))]
    TensorScale {
        /// The request.
        request: String,
        /// The scale passed, as its bits (so that the error compares equal to itself).
        scale_bits: u32,
    },
    /// A run that needs a tensor scale without one, or one with a scale that takes none.
    #[error("{request}: {why}")]
    TensorScaleUse {
        /// The request.
        request: String,
        /// What to call instead.
        why: &'static str,
    },
    /// A buffer of another element type than the request's.
    #[error("{request}: the {buffer} buffer holds {got}, but the request's are {expected}")]
    ElementType {
        /// The request.
        request: String,
        /// Which buffer.
        buffer: &'static str,
        /// The type passed.
        got: &'static str,
        /// The request's type.
        expected: &'static str,
    },
}
