//! float/half -> integer: `convert_int_sat_rte(float)`, `convert_uchar(double)`, ...
//!
//! Algorithm: round to an integral value in the float domain by the mode (`nearest`, `ceil`,
//! `floor`; rtz is the conversion's own truncation), then convert with Cranelift's saturating
//! conversion, which is exactly OpenCL's `_sat` with rtz: out-of-range values clamp and NaN gives
//! 0. 8- and 16-bit destinations convert to I32 first (x64 panics on scalar `fcvt_to_*_sat` to
//! I8/I16) and clamp there: every 8/16-bit bound is an exact I32.
//!
//! Without `_sat` the spec leaves NaN and out-of-range results implementation-defined; clconv
//! defines them as the `_sat` result, so the same code serves both and every target agrees.
//! The trapping `fcvt_to_sint` is never emitted. half is widened to float first, exactly.

use super::{half, int_const};
use crate::lower::element_type;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// Emits `convert_<dst>_sat_<rounding>(<src>)` on one element of float type `src` (half as I16
/// bits).
pub fn emit(
    b: &mut FunctionBuilder,
    src: ScalarType,
    dst: ScalarType,
    rounding: Rounding,
    x: Value,
) -> Value {
    let f = if src == ScalarType::Half {
        half::half_bits_to_f32(b, x)
    } else {
        x
    };
    let rounded = match rounding {
        Rounding::Rte => b.ins().nearest(f),
        Rounding::Rtp => b.ins().ceil(f),
        Rounding::Rtn => b.ins().floor(f),
        Rounding::Rtz => f,
    };
    let dst_ty = element_type(dst);
    if dst.bits() >= 32 {
        return if dst.is_signed_integer() {
            b.ins().fcvt_to_sint_sat(dst_ty, rounded)
        } else {
            b.ins().fcvt_to_uint_sat(dst_ty, rounded)
        };
    }
    let wide = b.ins().fcvt_to_sint_sat(types::I32, rounded);
    let lo = int_const(b, types::I32, dst.int_min().expect("integer destination"));
    let hi = int_const(b, types::I32, dst.int_max().expect("integer destination"));
    let clamped = b.ins().smax(wide, lo);
    let clamped = b.ins().smin(clamped, hi);
    b.ins().ireduce(dst_ty, clamped)
}
