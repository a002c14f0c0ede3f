//! Batch buffers: how many vectors a pair of byte buffers holds for a request and a layout, and
//! the typed error when their sizes do not fit. Shared by the reference interpreter and the JIT,
//! so both accept and refuse exactly the same buffers.

use crate::request::Request;
use crate::types::{Layout, VectorType, Width};

/// Why a pair of buffers does not fit a request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BufferError {
    /// The source is not a whole number of vectors.
    #[error("the source buffer is {bytes} bytes, not a whole number of {ty} vectors ({per_vector} bytes each in the {layout} layout){hint}")]
    RaggedSource {
        /// Source length in bytes.
        bytes: usize,
        /// Source vector type.
        ty: VectorType,
        /// Bytes per vector.
        per_vector: usize,
        /// Layout name.
        layout: &'static str,
        /// Extra hint, starting with "; " when present.
        hint: String,
    },
    /// The destination does not hold exactly as many vectors as the source.
    #[error("the destination buffer is {bytes} bytes, but {vectors} {ty} vectors need exactly {expected} bytes ({per_vector} each in the {layout} layout)")]
    DestinationSize {
        /// Destination length in bytes.
        bytes: usize,
        /// Number of vectors in the source.
        vectors: usize,
        /// Destination vector type.
        ty: VectorType,
        /// The required destination length.
        expected: usize,
        /// Bytes per destination vector.
        per_vector: usize,
        /// Layout name.
        layout: &'static str,
    },
    /// An element type that is not the one the request reads or writes.
    #[error("the {side} buffer holds {got} elements, but {request} {verb} {expected}")]
    ElementType {
        /// "source" or "destination".
        side: &'static str,
        /// What the buffer holds.
        got: &'static str,
        /// What the request needs.
        expected: &'static str,
        /// The request.
        request: String,
        /// "reads" or "writes".
        verb: &'static str,
    },
}

/// Bytes one vector of `ty` occupies in a buffer of `layout`.
pub fn bytes_per_vector(ty: VectorType, layout: Layout) -> usize {
    layout.stride(ty.width) * ty.elem.bytes()
}

/// The number of vectors in `src_len` source bytes, after checking that `dst_len` fits exactly.
///
/// ```
/// use clconv::{buffer, Extensions, Layout, Request};
/// let r = Request::parse("convert_uchar4_sat_rte(float4)", Extensions::default()).unwrap();
/// assert_eq!(buffer::vector_count(&r, Layout::Packed, 32, 8), Ok(2));
/// assert!(buffer::vector_count(&r, Layout::Packed, 30, 8).is_err());
/// ```
pub fn vector_count(
    request: &Request,
    layout: Layout,
    src_len: usize,
    dst_len: usize,
) -> Result<usize, BufferError> {
    let src = request.src();
    let dst = request.dst();
    let src_per = bytes_per_vector(src, layout);
    if !src_len.is_multiple_of(src_per) {
        let other = match layout {
            Layout::Packed => Layout::Aligned,
            Layout::Aligned => Layout::Packed,
        };
        let hint = if src.width == Width::W3 && src_len.is_multiple_of(bytes_per_vector(src, other))
        {
            format!(
                "; it is a whole number of {} vectors in the {} layout: did you mean that layout?",
                src,
                other.name()
            )
        } else {
            String::new()
        };
        return Err(BufferError::RaggedSource {
            bytes: src_len,
            ty: src,
            per_vector: src_per,
            layout: layout.name(),
            hint,
        });
    }
    let vectors = src_len / src_per;
    let dst_per = bytes_per_vector(dst, layout);
    let expected = vectors
        .checked_mul(dst_per)
        .ok_or(BufferError::DestinationSize {
            bytes: dst_len,
            vectors,
            ty: dst,
            expected: usize::MAX,
            per_vector: dst_per,
            layout: layout.name(),
        })?;
    if dst_len != expected {
        return Err(BufferError::DestinationSize {
            bytes: dst_len,
            vectors,
            ty: dst,
            expected,
            per_vector: dst_per,
            layout: layout.name(),
        });
    }
    Ok(vectors)
}
