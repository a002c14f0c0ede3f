//! MX blocks ([`crate::mx`]) on Cranelift values: one block of 32 floats to 32 element codes
//! and an E8M0 scale, and back. The element conversions are the ones every other request uses
//! (`convert_<elem>16_sat_rte(float16)`, `convert_float16(<elem>x16)`, through
//! [`Lowering::convert`] and so the target's table); what is here is the scale.
//!
//! The scale from the largest magnitude, in integers: with amax = a * 2^E (a in [1, 2), its
//! float32 fraction field `f`, its biased exponent field `e` = E + 127) and the element's
//! largest value m * 2^emax, the scale's code (k + 127) is
//! - OCP's floor(log2 amax) - emax: `e - emax`;
//! - rounded up, the smallest k with amax <= m * 2^(emax + k): `e - emax + (a > m)`;
//! - nearest, k0 = floor(log2(amax / max)) plus one from 1.5 * max * 2^k0 up: amax / max is
//!   (a / m) * 2^(E - emax) with a / m in [1/m, 2/m), and 1.5 * m > 2 for every element
//!   format, so `e - emax - 1 + (a >= 0.75 * m)`;
//!
//! each clamped below at 0 (2^-127; a subnormal or zero amax gets there), never above 253 for
//! a finite amax. Comparing `a` with a constant is comparing `f` with the constant's fraction
//! field. The integer maximum of the values' magnitudes as bits is the largest magnitude, and
//! at least 0x7f800000 exactly when the block holds an infinity or a NaN.
//!
//! The elements are V * 2^-k in float32, exact wherever the element is not zero (2^-k is a
//! normal float for k in -127..=126; a product below 2^-126 rounds to a zero element either
//! way), then the element conversion. The way back multiplies the element's float value by
//! 2^(s - 127), exact but for overflow (every element's bits fit a float even at 2^-127).

use super::{ElementConversion, LowerError, Lowering};
use crate::mx::{element_range, ScaleRule, MX_BLOCK};
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// F32X4 parts of one block.
const PARTS: usize = MX_BLOCK / 4;

/// One quantised MX block as Cranelift values: [`Lowering::quantize_mx_block`]'s result.
#[derive(Clone, Debug)]
pub struct MxBlockValues {
    /// The 32 element codes as two I8X16 values, in order (a code in each byte's low bits).
    pub elements: [Value; 2],
    /// The E8M0 scale code, an I8.
    pub scale: Value,
}

/// The fraction field of a float32 `x` in [1, 2) times a power of two.
fn fraction_field(x: f64) -> i64 {
    i64::from((x as f32).to_bits() & 0x7f_ffff)
}

impl Lowering {
    /// Quantises one MX block: `values` are the block's 32 floats as eight F32X4 values (in
    /// order; convert half or bfloat values to float first with [`Lowering::convert`], which
    /// is exact), `elem` the element format (fp8e4m3, fp8e5m2, fp6e2m3, fp6e3m2, fp4e2m1),
    /// `rule` the scale's. Gives what `clconv::reference::quantize_mx_block` gives: a block
    /// holding a NaN or an infinity gets the scale 0xff and every element the format's
    /// conversion of NaN. An error for a target without 128-bit vectors (riscv64 without V).
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::{lower::Lowering, mx::ScaleRule, ScalarType};
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::F32X4); 8]);
    /// sig.returns.extend([AbiParam::new(types::I8X16), AbiParam::new(types::I8X16), AbiParam::new(types::I8)]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let values = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let q = lowering.quantize_mx_block(&mut b, ScalarType::Fp8E4M3, ScaleRule::OcpFloor, &values)?;
    /// b.ins().return_(&[q.elements[0], q.elements[1], q.scale]);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn quantize_mx_block(
        &self,
        b: &mut FunctionBuilder,
        elem: ScalarType,
        rule: ScaleRule,
        values: &[Value],
    ) -> Result<MxBlockValues, LowerError> {
        self.check_mx_vectors()?;
        let (max, emax) = mx_element(elem)?;
        check_parts(b, values, types::F32X4, PARTS, "the values")?;
        let (_, amax) = magnitude_bits_max_x4(b, values);

        let (code, nonfinite) = scale_code(b, amax, rule, max, emax);
        // 2^-k = 2^(127 - code), a normal float for every finite block's code.
        let top = b.ins().iconst(types::I32, 254);
        let factor = b.ins().isub(top, code);
        let factor = b.ins().ishl_imm_u(factor, 23);
        let factor = b.ins().splat(types::I32X4, factor);
        let factor = super::values::bitcast_le(b, types::F32X4, factor);
        // A block with a NaN or an infinity: every value becomes the positive quiet NaN.
        let all = b.ins().iconst(types::I32, -1);
        let none = b.ins().iconst(types::I32, 0);
        let mask = b.ins().select(nonfinite, all, none);
        let mask = b.ins().splat(types::I32X4, mask);
        let mask = super::values::bitcast_le(b, types::F32X4, mask);
        let nan = b.ins().f32const(f32::NAN);
        let nan = b.ins().splat(types::F32X4, nan);
        let scaled: Vec<Value> = values
            .iter()
            .map(|&v| {
                let p = b.ins().fmul(v, factor);
                b.ins().bitselect(mask, nan, p)
            })
            .collect();
        let conv = ElementConversion::new(ScalarType::Float, elem)
            .saturating()
            .rounding(Rounding::Rte);
        let first = single(
            self.convert(b, conv, &scaled[..4])?,
            "the element conversion's result",
        )?;
        let second = single(
            self.convert(b, conv, &scaled[4..])?,
            "the element conversion's result",
        )?;
        let elements = [first, second];
        let scale = b.ins().ireduce(types::I8, code);
        Ok(MxBlockValues { elements, scale })
    }

    /// Dequantises one MX block: `elements` the 32 codes as two I8X16 values, `scale` the E8M0
    /// code as an I8; gives the 32 values as eight F32X4 values, each element times
    /// 2^(scale - 127) rounded to nearest even (exact but past float's range). A NaN result (the
    /// scale 0xff, a NaN element) is the positive quiet NaN 0x7fc00000, on every target.
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::{lower::Lowering, ScalarType};
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::I8X16), AbiParam::new(types::I8X16), AbiParam::new(types::I8)]);
    /// sig.returns.extend([AbiParam::new(types::F32X4); 8]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let p = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let values = lowering.dequantize_mx_block(&mut b, ScalarType::Fp4E2M1, [p[0], p[1]], p[2])?;
    /// b.ins().return_(&values);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dequantize_mx_block(
        &self,
        b: &mut FunctionBuilder,
        elem: ScalarType,
        elements: [Value; 2],
        scale: Value,
    ) -> Result<Vec<Value>, LowerError> {
        self.check_mx_vectors()?;
        mx_element(elem)?;
        check_parts(b, &elements, types::I8X16, 2, "the elements")?;
        check_parts(b, &[scale], types::I8, 1, "the scale")?;
        let bits = factor_bits(b, scale);
        let factor = b.ins().splat(types::I32X4, bits);
        let factor = super::values::bitcast_le(b, types::F32X4, factor);
        let nan = b.ins().f32const(f32::NAN);
        let nan = b.ins().splat(types::F32X4, nan);
        let conv = ElementConversion::new(elem, ScalarType::Float);
        let mut out = Vec::with_capacity(PARTS);
        for codes in elements {
            for v in self.convert(b, conv, &[codes])? {
                let p = b.ins().fmul(v, factor);
                // Which NaN a multiplication gives differs between targets: one for all.
                let is_nan = b.ins().fcmp(FloatCC::Unordered, p, p);
                let is_nan = super::values::bitcast_le(b, types::F32X4, is_nan);
                out.push(b.ins().bitselect(is_nan, nan, p));
            }
        }
        check_parts(b, &out, types::F32X4, PARTS, "the values")?;
        Ok(out)
    }
}

impl Lowering {
    /// Packs a block's 32 FP4 codes (two I8X16 values, a code in each byte's low bits) two to a
    /// byte, element 2i in bits 0-3 and 2i + 1 in bits 4-7 (`mxfp4e2m1x2`'s order): one I8X16.
    /// Each 16-bit lane of a code vector holds the pair, (x & 0x0f) | ((x >> 4) & 0xf0) is
    /// their byte, and an unsigned narrowing packs the lanes.
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::Lowering;
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::I8X16); 2]);
    /// sig.returns.extend([AbiParam::new(types::I8X16); 2]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let p = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let packed = lowering.pack_fp4(&mut b, [p[0], p[1]])?; // 16 bytes of pairs
    /// let codes = lowering.unpack_fp4(&mut b, packed)?; // and back
    /// b.ins().return_(&codes);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pack_fp4(
        &self,
        b: &mut FunctionBuilder,
        codes: [Value; 2],
    ) -> Result<Value, LowerError> {
        check_parts(b, &codes, types::I8X16, 2, "the codes")?;
        let masks = NibbleMasks::new(b);
        let [a, c] = codes.map(|v| masks.pair_bytes(b, v));
        Ok(b.ins().unarrow(a, c))
    }

    /// The way back from [`Lowering::pack_fp4`]: 16 bytes of packed codes to two I8X16 values
    /// of one code each (the example is [`Lowering::pack_fp4`]'s).
    pub fn unpack_fp4(
        &self,
        b: &mut FunctionBuilder,
        packed: Value,
    ) -> Result<[Value; 2], LowerError> {
        check_parts(b, &[packed], types::I8X16, 1, "the packed codes")?;
        let masks = NibbleMasks::new(b);
        let halves = [b.ins().uwiden_low(packed), b.ins().uwiden_high(packed)];
        Ok(halves.map(|w| masks.spread_byte(b, w)))
    }
}

/// The masks FP4's packing works with, on 16-bit lanes: `0x000f` and `0x00f0`. Shared by
/// [`Lowering::pack_fp4`] and [`Lowering::unpack_fp4`] (a block's 32 codes) and the chain step
/// `pack_fp4`/`unpack_fp4` (`super::chain`: one part of at most 16).
pub(super) struct NibbleMasks {
    low: Value,
    high: Value,
}

impl NibbleMasks {
    pub(super) fn new(b: &mut FunctionBuilder) -> NibbleMasks {
        NibbleMasks {
            low: splat16(b, 0x000f),
            high: splat16(b, 0x00f0),
        }
    }

    /// The two codes in each 16-bit lane of `v` (a code per byte) as one byte in the lane's low
    /// half, `(x & 0x0f) | ((x >> 4) & 0xf0)`: below 256, so an unsigned narrowing packs it.
    pub(super) fn pair_bytes(&self, b: &mut FunctionBuilder, v: Value) -> Value {
        let w = super::values::bitcast_le(b, types::I16X8, v);
        let low = b.ins().band(w, self.low);
        let high = b.ins().ushr_imm_u(w, 4);
        let high = b.ins().band(high, self.high);
        b.ins().bor(low, high)
    }

    /// The way back, on 16-bit lanes holding one packed byte each (zero-extended): its low
    /// nibble in the lane's low byte, its high nibble in the high byte, as an I8X16 of codes.
    pub(super) fn spread_byte(&self, b: &mut FunctionBuilder, w: Value) -> Value {
        let low = b.ins().band(w, self.low);
        let high = b.ins().band(w, self.high);
        let high = b.ins().ishl_imm_u(high, 4);
        let pair = b.ins().bor(low, high);
        super::values::bitcast_le(b, types::I8X16, pair)
    }
}

fn splat16(b: &mut FunctionBuilder, x: i64) -> Value {
    let c = b.ins().iconst(types::I16, x);
    b.ins().splat(types::I16X8, c)
}

impl Lowering {
    /// [`Lowering::quantize_mx_block`] lane by lane, for a target without 128-bit vectors
    /// (riscv64 without V; any other target too): `values` are the block's 32 floats as F32
    /// values; gives the 32 element codes as I8 values and the scale as an I8. The same scale
    /// (from the same integer maximum), the same products, the same element conversion.
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::{lower::Lowering, mx::ScaleRule, ScalarType};
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::F32); 32]);
    /// sig.returns.extend([AbiParam::new(types::I8); 33]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let values = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let (mut out, scale) =
    ///     lowering.quantize_mx_block_lanes(&mut b, ScalarType::Fp4E2M1, ScaleRule::RoundUp, &values)?;
    /// out.push(scale);
    /// b.ins().return_(&out);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn quantize_mx_block_lanes(
        &self,
        b: &mut FunctionBuilder,
        elem: ScalarType,
        rule: ScaleRule,
        values: &[Value],
    ) -> Result<(Vec<Value>, Value), LowerError> {
        let (max, emax) = mx_element(elem)?;
        check_parts(b, values, types::F32, MX_BLOCK, "the values")?;
        let amax = magnitude_bits_max(b, values);
        let (code, nonfinite) = scale_code(b, amax, rule, max, emax);
        let top = b.ins().iconst(types::I32, 254);
        let factor = b.ins().isub(top, code);
        let factor = b.ins().ishl_imm_u(factor, 23);
        let factor = super::values::bitcast_le(b, types::F32, factor);
        let nan = b.ins().f32const(f32::NAN);
        let conv = ElementConversion::new(ScalarType::Float, elem)
            .saturating()
            .rounding(Rounding::Rte);
        let mut elements = Vec::with_capacity(MX_BLOCK);
        for &v in values {
            let p = b.ins().fmul(v, factor);
            let p = b.ins().select(nonfinite, nan, p);
            let out = self.convert(b, conv, &[p])?;
            elements.push(single(out, "the element conversion's result")?);
        }
        let scale = b.ins().ireduce(types::I8, code);
        Ok((elements, scale))
    }

    /// [`Lowering::dequantize_mx_block`] lane by lane: `codes` the 32 element codes as I8
    /// values, `scale` the E8M0 code as an I8; gives 32 F32 values (NaN results the positive
    /// quiet NaN).
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::{lower::Lowering, ScalarType};
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::I8); 33]);
    /// sig.returns.extend([AbiParam::new(types::F32); 32]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let p = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let values = lowering.dequantize_mx_block_lanes(&mut b, ScalarType::Fp8E4M3, &p[..32], p[32])?;
    /// b.ins().return_(&values);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dequantize_mx_block_lanes(
        &self,
        b: &mut FunctionBuilder,
        elem: ScalarType,
        codes: &[Value],
        scale: Value,
    ) -> Result<Vec<Value>, LowerError> {
        mx_element(elem)?;
        check_parts(b, codes, types::I8, MX_BLOCK, "the elements")?;
        check_parts(b, &[scale], types::I8, 1, "the scale")?;
        let bits = factor_bits(b, scale);
        let factor = super::values::bitcast_le(b, types::F32, bits);
        let nan = b.ins().f32const(f32::NAN);
        let conv = ElementConversion::new(elem, ScalarType::Float);
        let mut out = Vec::with_capacity(MX_BLOCK);
        for &code in codes {
            let v = single(self.convert(b, conv, &[code])?, "the element's float")?;
            let p = b.ins().fmul(v, factor);
            let is_nan = b.ins().fcmp(FloatCC::Unordered, p, p);
            out.push(b.ins().select(is_nan, nan, p));
        }
        Ok(out)
    }

    /// True when MX blocks are computed on 128-bit vectors here ([`Lowering::quantize_mx_block`]);
    /// false for riscv64 without V, whose batch kernels take the `_lanes` forms.
    // Only the JIT's kernels (`crate::mx_kernel`) choose between the two forms.
    #[cfg_attr(not(feature = "jit"), allow(dead_code))]
    pub(crate) fn mx_vectors(&self) -> bool {
        self.check_mx_vectors().is_ok()
    }

    /// MX blocks are computed on 128-bit vectors: an error for a target without them (riscv64
    /// without the V extension, whose tables convert lane by lane in scalar registers).
    pub(super) fn check_mx_vectors(&self) -> Result<(), LowerError> {
        match &self.target {
            Some(t)
                if t.features.arch() == crate::table::Arch::Riscv64 && !t.features.has("has_v") =>
            {
                Err(LowerError::Operand {
                    why: "this form of an MX block takes 128-bit vectors, which riscv64 without \
                          the V extension does not have: use the `_lanes` form \
                          (Lowering::quantize_mx_block_lanes, dequantize_mx_block_lanes), as the \
                          batch kernels there do"
                        .into(),
                })
            }
            _ => Ok(()),
        }
    }
}

/// The E8M0 code of a block whose largest magnitude's bits are `amax` (an I32), by `rule`, for
/// an element format of largest value `max` = m * 2^`emax` (the module docs), and whether the
/// block holds an infinity or a NaN (then the code is 0xff).
fn scale_code(
    b: &mut FunctionBuilder,
    amax: Value,
    rule: ScaleRule,
    max: f64,
    emax: i32,
) -> (Value, Value) {
    let exponent = b.ins().ushr_imm_u(amax, 23);
    let fraction = b.ins().band_imm_u(amax, 0x7f_ffff);
    let code = match rule {
        ScaleRule::OcpFloor => b.ins().iadd_imm_s(exponent, -i64::from(emax)),
        ScaleRule::RoundUp => {
            let above = b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThan, fraction, fraction_field(max));
            let above = b.ins().uextend(types::I32, above);
            let code = b.ins().iadd(exponent, above);
            b.ins().iadd_imm_s(code, -i64::from(emax))
        }
        ScaleRule::NearestEven => {
            let up = b.ins().icmp_imm_s(
                IntCC::SignedGreaterThanOrEqual,
                fraction,
                fraction_field(0.75 * max),
            );
            let up = b.ins().uextend(types::I32, up);
            let code = b.ins().iadd(exponent, up);
            b.ins().iadd_imm_s(code, -i64::from(emax) - 1)
        }
    };
    let zero = b.ins().iconst(types::I32, 0);
    let code = b.ins().smax(code, zero);
    let nonfinite = b
        .ins()
        .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, amax, 0x7f80_0000);
    let nan_code = b.ins().iconst(types::I32, 0xff);
    let code = b.ins().select(nonfinite, nan_code, code);

    (code, nonfinite)
}

/// The float bits of 2^(s - 127) for the E8M0 code `scale` (an I8): s << 23 for s >= 1, 2^-127
/// (a subnormal) for 0, NaN for 0xff.
fn factor_bits(b: &mut FunctionBuilder, scale: Value) -> Value {
    let s = b.ins().uextend(types::I32, scale);
    let normal = b.ins().ishl_imm_u(s, 23);
    let is_zero = b.ins().icmp_imm_u(IntCC::Equal, s, 0);
    let tiny = b.ins().iconst(types::I32, 0x40_0000);
    let bits = b.ins().select(is_zero, tiny, normal);
    let is_nan = b.ins().icmp_imm_u(IntCC::Equal, s, 0xff);
    let nan_bits = b.ins().iconst(types::I32, i64::from(f32::NAN.to_bits()));
    b.ins().select(is_nan, nan_bits, bits)
}

/// The element format's range, or the error for a type that is none.
fn mx_element(elem: ScalarType) -> Result<(f64, i32), LowerError> {
    element_range(elem).ok_or_else(|| LowerError::Operand {
        why: format!(
            "{} is no MX element format: MX blocks hold fp8e4m3, fp8e5m2, fp6e2m3, fp6e3m2 or fp4e2m1",
            elem.name()
        ),
    })
}

/// The integer maximum of the F32 `values`' magnitudes as bits: the largest magnitude's bits,
/// at least 0x7f800000 exactly when a value is an infinity or a NaN. `values` is not empty.
pub(super) fn magnitude_bits_max(b: &mut FunctionBuilder, values: &[Value]) -> Value {
    let magnitude = b.ins().iconst(types::I32, 0x7fff_ffff);
    let mut amax = None;
    for &v in values {
        let bits = super::values::bitcast_le(b, types::I32, v);
        let m = b.ins().band(bits, magnitude);
        amax = Some(match amax {
            None => m,
            Some(a) => b.ins().smax(a, m),
        });
    }
    amax.expect("a block has values")
}

/// [`magnitude_bits_max`] of F32X4 `values` (a power of two of them): each part's magnitudes'
/// bits (I32X4), and their largest as an I32, by integer maximum (magnitudes' bits order as
/// they do).
pub(super) fn magnitude_bits_max_x4(
    b: &mut FunctionBuilder,
    values: &[Value],
) -> (Vec<Value>, Value) {
    let magnitude = b.ins().iconst(types::I32, 0x7fff_ffff);
    let magnitude = b.ins().splat(types::I32X4, magnitude);
    let bits: Vec<Value> = values
        .iter()
        .map(|&v| {
            let v = super::values::bitcast_le(b, types::I32X4, v);
            b.ins().band(v, magnitude)
        })
        .collect();
    let mut level = bits.clone();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| b.ins().smax(pair[0], pair[1]))
            .collect();
    }
    let lanes: Vec<Value> = (0..4).map(|i| b.ins().extractlane(level[0], i)).collect();
    let low = b.ins().smax(lanes[0], lanes[1]);
    let high = b.ins().smax(lanes[2], lanes[3]);
    (bits, b.ins().smax(low, high))
}

pub(super) fn check_parts(
    b: &FunctionBuilder,
    values: &[Value],
    ty: cranelift_codegen::ir::Type,
    count: usize,
    what: &str,
) -> Result<(), LowerError> {
    let types_ok = values.iter().all(|&v| b.func.dfg.value_type(v) == ty);
    if values.len() != count || !types_ok {
        let got: Vec<String> = values
            .iter()
            .map(|&v| b.func.dfg.value_type(v).to_string())
            .collect();
        return Err(LowerError::Operand {
            why: format!(
                "a scaled block takes {what} as {count} {ty} value(s), but got [{}]",
                got.join(", ")
            ),
        });
    }
    Ok(())
}

pub(super) fn single(values: Vec<Value>, what: &str) -> Result<Value, LowerError> {
    match values[..] {
        [v] => Ok(v),
        _ => Err(LowerError::Operand {
            why: format!("internal: {what} came as {} values, not one", values.len()),
        }),
    }
}
