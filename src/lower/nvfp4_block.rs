//! NVFP4 blocks ([`crate::mx`]) on Cranelift values: 16 floats and the tensor's float32
//! scale to 16 E2M1 codes and an E4M3 scale, and back. The rules are the reference's
//! (`clconv::reference::quantize_nvfp4_block`): each result rounded once from an exact
//! quotient. Here the quotients are computed in double and rounded by the element conversions
//! every other request uses (`convert_fp8e4m3_sat_rte(double)`,
//! `convert_fp4e2m1_sat_rte(double)`), which round their double operand once.
//!
//! Why a double quotient rounds like the exact one. The scale is amax / (6t): amax has 24
//! significant bits and 6t 26, so it is A / D with integers A < 2^24, D < 2^26 (times a power
//! of two). A midpoint between neighbouring E4M3 codes is M x 2^k with M < 2^5. If A / D is not
//! the midpoint, |A / D - M 2^k| = |A - M 2^k D| / D, and the numerator is a nonzero multiple
//! of the smaller of the two terms' units, so the distance is at least 2^-31 of the midpoint
//! (2^-24 when A's unit is the smaller). Double division is off by at most 2^-53 of the
//! quotient: it stays on the same side of every midpoint and never lands on one, so rounding
//! it gives the exact quotient's code; a quotient that is a code is exact in double. The
//! elements are x / (s t), x with 24 bits, s t with 4 + 24 (exact in double), E2M1's midpoints
//! with at most 3 bits: the same argument with 2^-31. No quotient over- or underflows double
//! (t is at least 2^-149 and at most 2^128, amax and x at most 2^128, s from 2^-9 to 448).
//!
//! The way back multiplies element x scale x tensor scale in double, 2 + 4 + 24 significant
//! bits: exact, so the one rounding is the caller's into its value type.

use super::mx_block::{check_parts, magnitude_bits_max, single};
use super::{ElementConversion, LowerError, Lowering};
use crate::mx::NVFP4_BLOCK;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

impl Lowering {
    /// Quantises one NVFP4 block, value by value in scalar registers: `values` the block's 16
    /// F32 values (convert half or bfloat values to float first with [`Lowering::convert`],
    /// which is exact), `tensor_scale` the tensor's F32 decode scale. Gives 16 I8 E2M1 codes
    /// (sign at bit 3) and the I8 E4M3 scale code: what `clconv::reference::quantize_nvfp4_block`
    /// gives, including its NaN block (scale 0x7f, elements 0x7) for a block holding a NaN or
    /// an infinity or a tensor scale that is not a positive finite float.
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::Lowering;
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::F32); 17]);
    /// sig.returns.extend([AbiParam::new(types::I8); 17]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let p = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let (mut codes, scale) = lowering.quantize_nvfp4_block(&mut b, &p[..16], p[16])?;
    /// codes.push(scale);
    /// b.ins().return_(&codes);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn quantize_nvfp4_block(
        &self,
        b: &mut FunctionBuilder,
        values: &[Value],
        tensor_scale: Value,
    ) -> Result<(Vec<Value>, Value), LowerError> {
        check_parts(b, values, types::F32, NVFP4_BLOCK, "the values")?;
        check_parts(b, &[tensor_scale], types::F32, 1, "the tensor scale")?;
        // The largest magnitude as bits: at least 0x7f800000 for an infinity or a NaN.
        let amax = magnitude_bits_max(b, values);
        let finite = b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThan, amax, 0x7f80_0000);
        // A positive finite tensor scale: its bits minus one below 0x7f7fffff.
        let t_bits = super::values::bitcast_le(b, types::I32, tensor_scale);
        let t_less = b.ins().iadd_imm_s(t_bits, -1);
        let t_ok = b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThan, t_less, 0x7f7f_ffff);
        let ok = b.ins().band(finite, t_ok);

        let amax = super::values::bitcast_le(b, types::F32, amax);
        let amax = b.ins().fpromote(types::F64, amax);
        let t = b.ins().fpromote(types::F64, tensor_scale);
        let six = b.ins().f64const(6.0);
        let six_t = b.ins().fmul(t, six);
        let quotient = b.ins().fdiv(amax, six_t);
        let to_scale = ElementConversion::new(ScalarType::Double, ScalarType::Fp8E4M3)
            .saturating()
            .rounding(Rounding::Rte);
        let scale = single(self.convert(b, to_scale, &[quotient])?, "the scale")?;
        let from_scale = ElementConversion::new(ScalarType::Fp8E4M3, ScalarType::Double);
        let s = single(self.convert(b, from_scale, &[scale])?, "the scale's value")?;
        let unit = b.ins().fmul(s, t);
        // A zero scale: every element the zero of its value's sign (x / inf).
        let zero_scale = b.ins().icmp_imm_u(IntCC::Equal, scale, 0);
        let inf = b.ins().f64const(f64::INFINITY);
        let unit = b.ins().select(zero_scale, inf, unit);
        // A NaN block: every quotient NaN, which E2M1 takes to +6 whatever its sign.
        let nan = b.ins().f64const(f64::NAN);
        let unit = b.ins().select(ok, unit, nan);
        let to_element = ElementConversion::new(ScalarType::Double, ScalarType::Fp4E2M1)
            .saturating()
            .rounding(Rounding::Rte);
        let mut codes = Vec::with_capacity(NVFP4_BLOCK);
        for &v in values {
            let x = b.ins().fpromote(types::F64, v);
            let y = b.ins().fdiv(x, unit);
            codes.push(single(self.convert(b, to_element, &[y])?, "an element")?);
        }
        let nan_scale = b.ins().iconst(types::I8, 0x7f);
        let scale = b.ins().select(ok, scale, nan_scale);
        Ok((codes, scale))
    }

    /// The way back, value by value: `codes` 16 I8 E2M1 codes (the low 4 bits read), `scale`
    /// the I8 E4M3 scale code, `tensor_scale` an F32. Gives the 16 exact products element x
    /// scale x tensor scale as F64 values (a NaN product as the positive quiet NaN); round them
    /// into the value type with [`Lowering::convert`] (double -> float, half or bfloat,
    /// nearest even), which rounds once.
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::Lowering;
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::I8); 17]);
    /// sig.params.push(AbiParam::new(types::F32));
    /// sig.returns.extend([AbiParam::new(types::F64); 16]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let p = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let values = lowering.dequantize_nvfp4_block(&mut b, &p[..16], p[16], p[17])?;
    /// b.ins().return_(&values);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dequantize_nvfp4_block(
        &self,
        b: &mut FunctionBuilder,
        codes: &[Value],
        scale: Value,
        tensor_scale: Value,
    ) -> Result<Vec<Value>, LowerError> {
        check_parts(b, codes, types::I8, NVFP4_BLOCK, "the elements")?;
        check_parts(b, &[scale], types::I8, 1, "the scale")?;
        check_parts(b, &[tensor_scale], types::F32, 1, "the tensor scale")?;
        let from_scale = ElementConversion::new(ScalarType::Fp8E4M3, ScalarType::Double);
        let s = single(self.convert(b, from_scale, &[scale])?, "the scale's value")?;
        let t = b.ins().fpromote(types::F64, tensor_scale);
        let unit = b.ins().fmul(s, t);
        let nan = b.ins().f64const(f64::NAN);
        let from_element = ElementConversion::new(ScalarType::Fp4E2M1, ScalarType::Double);
        let mut out = Vec::with_capacity(NVFP4_BLOCK);
        for &code in codes {
            let e = single(
                self.convert(b, from_element, &[code])?,
                "an element's value",
            )?;
            let v = b.ins().fmul(e, unit);
            let is_nan = b.ins().fcmp(FloatCC::Unordered, v, v);
            out.push(b.ins().select(is_nan, nan, v));
        }
        Ok(out)
    }
}
