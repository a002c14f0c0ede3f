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
//! The vector form ([`Lowering::quantize_nvfp4_block`]) finds the elements without dividing.
//! With u = s t (exact in double), the element of x is the number of E2M1 midpoints m (0.25,
//! 0.75, ..., 5) that |x| / u passes, a tie passing when the code above is the even one
//! (nearest even; past 5 every quotient saturates at 6's code, 7). |x| / u > m is |x| > m u,
//! and m u (3 + 28 bits) is exact in double. For a float x and a real T, x > T exactly when
//! x > RD(T), T rounded down to float (no float lies strictly between RD(T) and T, nor between
//! T and RU(T)), and x >= T exactly when x >= RU(T), rounded up; on magnitudes, float order is
//! the integer order of their bits. So each midpoint becomes one I32 threshold per block (the
//! bits of RD(m u), or those of RU(m u) minus one, from m u rounded to nearest), and each
//! value four at a time takes seven `icmp`s: as many instructions as the element conversion
//! from float, where the value-by-value form divides in double. A zero scale (u taken as
//! infinity) puts every threshold past every finite magnitude: zero elements, signs kept.
//!
//! The way back multiplies element x scale x tensor scale in double, 2 + 4 + 24 significant
//! bits: exact, so the one rounding is the caller's into its value type.

use super::mx_block::{check_parts, magnitude_bits_max, magnitude_bits_max_x4, single};
use super::{ElementConversion, LowerError, Lowering};
use crate::mx::NVFP4_BLOCK;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// E2M1's midpoints between neighbouring magnitudes, in order, and whether a quotient on one
/// rounds up: to the even code above it (0.75 between 0.5 and 1.0), not down to the even
/// one below (0.25 between 0 and 0.5).
const MIDPOINTS: [(f64, bool); 7] = [
    (0.25, false),
    (0.75, true),
    (1.25, false),
    (1.75, true),
    (2.5, false),
    (3.5, true),
    (5.0, false),
];

/// The F64 `quotient` (positive or zero; in a block that is no NaN block, finite and below
/// 2^275) rounded to nearest even into E4M3, saturating at 448: its code as an I8 and its
/// value as an F64. In integers on the double's bits, as MX's scale is
/// (`super::mx_block`), where the general `convert_fp8e4m3_sat_rte(double)` also handles
/// signs, infinities and NaN (five times the instructions, on the block's critical path):
/// from 2^-6 (E4M3's smallest normal) by an add at the 49th bit (E4M3 keeps 3 of double's 52
/// fraction bits) and a rebias from double's exponent bias to E4M3's (1023 - 7); below it,
/// multiples of 2^-9, by adding 2^43, whose ulp is 2^-9 (the add rounds, nearest even, and
/// the sum's low bits are the code, at most 8: the smallest normal's). The value of a normal
/// code is its bits moved back and rebiased; of a subnormal one, the sum less 2^43.
fn e4m3_scale(b: &mut FunctionBuilder, quotient: Value) -> (Value, Value) {
    const SMALLEST_NORMAL: u64 = 0x3f90_0000_0000_0000; // 2^-6
    const MAGIC: u64 = 0x42a0_0000_0000_0000; // 2^43
    const REBIAS: i64 = (1023 - 7) << 3; // on the code's exponent-and-fraction field
    let bits = super::values::bitcast_le(b, types::I64, quotient);
    let kept = b.ins().ushr_imm_u(bits, 49);
    let odd = b.ins().band_imm_u(kept, 1);
    let rounded = b.ins().iadd(bits, odd);
    let rounded = b.ins().iadd_imm_s(rounded, (1 << 48) - 1);
    let field = b.ins().ushr_imm_u(rounded, 49);
    let normal = b.ins().iadd_imm_s(field, -REBIAS);
    let magic = b.ins().f64const(f64::from_bits(MAGIC));
    let sum = b.ins().fadd(quotient, magic);
    let sum_bits = super::values::bitcast_le(b, types::I64, sum);
    let subnormal = b.ins().iadd_imm_s(sum_bits, -(MAGIC as i64));
    let is_normal = b.ins().icmp_imm_u(
        IntCC::UnsignedGreaterThanOrEqual,
        bits,
        SMALLEST_NORMAL as i64,
    );
    let code = b.ins().select(is_normal, normal, subnormal);
    let largest = b.ins().iconst(types::I64, 0x7e);
    let code = b.ins().smin(code, largest);
    // The value: a normal code's bits back in place; a subnormal's, 2^43 + code x 2^-9 less 2^43.
    let normal_bits = b.ins().ishl_imm_u(code, 49);
    let normal_bits = b.ins().iadd_imm_s(normal_bits, (1023 - 7) << 52);
    let sub_bits = b.ins().iadd_imm_s(code, MAGIC as i64);
    let sub_sum = super::values::bitcast_le(b, types::F64, sub_bits);
    let sub_value = b.ins().fsub(sub_sum, magic);
    let sub_value = super::values::bitcast_le(b, types::I64, sub_value);
    let is_normal = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, code, 8);
    let value = b.ins().select(is_normal, normal_bits, sub_value);
    let value = super::values::bitcast_le(b, types::F64, value);
    (b.ins().ireduce(types::I8, code), value)
}

/// A block's scale, [`Lowering::nvfp4_scale`]'s result.
struct BlockScale {
    /// The E4M3 scale code (I8): 0x7f for a NaN block.
    code: Value,
    /// The block is finite and the tensor scale positive and finite (I8 boolean).
    ok: Value,
    /// The F64 unit of the elements: scale x tensor scale, infinity for a zero scale, NaN for
    /// a NaN block.
    unit: Value,
}

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
    /// let (mut codes, scale) = lowering.quantize_nvfp4_block_lanes(&mut b, &p[..16], p[16])?;
    /// codes.push(scale);
    /// b.ins().return_(&codes);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn quantize_nvfp4_block_lanes(
        &self,
        b: &mut FunctionBuilder,
        values: &[Value],
        tensor_scale: Value,
    ) -> Result<(Vec<Value>, Value), LowerError> {
        check_parts(b, values, types::F32, NVFP4_BLOCK, "the values")?;
        check_parts(b, &[tensor_scale], types::F32, 1, "the tensor scale")?;
        // The largest magnitude as bits: at least 0x7f800000 for an infinity or a NaN.
        let amax = magnitude_bits_max(b, values);
        let BlockScale { code, unit, .. } = self.nvfp4_scale(b, amax, tensor_scale)?;
        let to_element = ElementConversion::new(ScalarType::Double, ScalarType::Fp4E2M1)
            .saturating()
            .rounding(Rounding::Rte);
        let mut codes = Vec::with_capacity(NVFP4_BLOCK);
        for &v in values {
            let x = b.ins().fpromote(types::F64, v);
            let y = b.ins().fdiv(x, unit);
            codes.push(single(self.convert(b, to_element, &[y])?, "an element")?);
        }
        Ok((codes, code))
    }

    /// The scale of a block whose largest magnitude's bits are `amax` (an I32), under the F32
    /// `tensor_scale`: its E4M3 code (0x7f for a NaN block), whether the block is finite under
    /// a positive finite tensor scale (`ok`), and the F64 unit an element's quotient divides
    /// by (the scale's value times the tensor scale; infinity for a zero scale, NaN for a NaN
    /// block: every quotient zero, or NaN, which E2M1 takes to +6).
    fn nvfp4_scale(
        &self,
        b: &mut FunctionBuilder,
        amax: Value,
        tensor_scale: Value,
    ) -> Result<BlockScale, LowerError> {
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
        let (scale, s) = e4m3_scale(b, quotient);
        let unit = b.ins().fmul(s, t);
        // A zero scale: every element the zero of its value's sign (x / inf).
        let zero_scale = b.ins().icmp_imm_u(IntCC::Equal, scale, 0);
        let inf = b.ins().f64const(f64::INFINITY);
        let unit = b.ins().select(zero_scale, inf, unit);
        // A NaN block: every quotient NaN, which E2M1 takes to +6 whatever its sign.
        let nan = b.ins().f64const(f64::NAN);
        let unit = b.ins().select(ok, unit, nan);
        let nan_scale = b.ins().iconst(types::I8, 0x7f);
        let code = b.ins().select(ok, scale, nan_scale);
        Ok(BlockScale { code, ok, unit })
    }

    /// Quantises one NVFP4 block on 128-bit vectors: `values` the block's 16 floats as four
    /// F32X4 values (in order; convert half or bfloat values to float first with
    /// [`Lowering::convert`], which is exact), `tensor_scale` the tensor's F32 decode scale.
    /// Gives the 16 E2M1 codes as one I8X16 (sign at bit 3) and the I8 E4M3 scale code: what
    /// [`Lowering::quantize_nvfp4_block_lanes`] and `clconv::reference::quantize_nvfp4_block`
    /// give, by comparisons with per-block thresholds (the module docs). An error for a target
    /// without 128-bit vectors (riscv64 without V: use the `_lanes` form).
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::Lowering;
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::F32X4); 4]);
    /// sig.params.push(AbiParam::new(types::F32));
    /// sig.returns.extend([AbiParam::new(types::I8X16), AbiParam::new(types::I8)]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let p = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let (codes, scale) = lowering.quantize_nvfp4_block(&mut b, &p[..4], p[4])?;
    /// b.ins().return_(&[codes, scale]);
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
    ) -> Result<(Value, Value), LowerError> {
        self.check_mx_vectors()?;
        check_parts(b, values, types::F32X4, NVFP4_BLOCK / 4, "the values")?;
        check_parts(b, &[tensor_scale], types::F32, 1, "the tensor scale")?;
        let (magnitudes, amax) = magnitude_bits_max_x4(b, values);
        let BlockScale { code, ok, unit } = self.nvfp4_scale(b, amax, tensor_scale)?;
        // One threshold per midpoint: a magnitude's bits above it pass it.
        let mut thresholds = Vec::with_capacity(MIDPOINTS.len());
        for &(midpoint, tie_up) in &MIDPOINTS {
            let m = b.ins().f64const(midpoint);
            let exact = b.ins().fmul(unit, m);
            // f, T to nearest float, is RD(T) or RU(T): RD(T)'s bits are f's less one when
            // f > T; RU(T)'s less one (`>= RU(T)` is `> RU(T) - 1` on bits) are f's when
            // f < T, f's less one when f >= T. T > 0 (or infinite: f is infinity, passed by no
            // finite magnitude either way).
            let nearest = b.ins().fdemote(types::F32, exact);
            let back = b.ins().fpromote(types::F64, nearest);
            let cc = if tie_up {
                FloatCC::GreaterThanOrEqual
            } else {
                FloatCC::GreaterThan
            };
            let less_one = b.ins().fcmp(cc, back, exact);
            let less_one = b.ins().uextend(types::I32, less_one);
            let bound = super::values::bitcast_le(b, types::I32, nearest);
            let bound = b.ins().isub(bound, less_one);
            thresholds.push(b.ins().splat(types::I32X4, bound));
        }
        // The sign at the code's bit 3.
        let sign_bit = b.ins().iconst(types::I32, 0x8000_0000u32 as i64);
        let sign_bit = b.ins().splat(types::I32X4, sign_bit);
        let codes: Vec<Value> = values
            .iter()
            .zip(&magnitudes)
            .map(|(&v, &a)| {
                // Each passed threshold's compare is -1: the sum is minus the code.
                let mut sum = None;
                for &t in &thresholds {
                    let passed = b.ins().icmp(IntCC::SignedGreaterThan, a, t);
                    sum = Some(match sum {
                        None => passed,
                        Some(s) => b.ins().iadd(s, passed),
                    });
                }
                let magnitude = b.ins().ineg(sum.expect("seven thresholds"));
                let w = super::values::bitcast_le(b, types::I32X4, v);
                let sign = b.ins().band(w, sign_bit);
                let sign = b.ins().ushr_imm_u(sign, 28);
                b.ins().bor(magnitude, sign)
            })
            .collect();
        let low = b.ins().snarrow(codes[0], codes[1]);
        let high = b.ins().snarrow(codes[2], codes[3]);
        let codes = b.ins().snarrow(low, high);
        // A NaN block: every code 7, +6 (its thresholds, from a NaN unit, are not used).
        let all = b.ins().iconst(types::I8, -1);
        let none = b.ins().iconst(types::I8, 0);
        let keep = b.ins().select(ok, all, none);
        let keep = b.ins().splat(types::I8X16, keep);
        let seven = b.ins().iconst(types::I8, 7);
        let seven = b.ins().splat(types::I8X16, seven);
        Ok((b.ins().bitselect(keep, codes, seven), code))
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
    /// let values = lowering.dequantize_nvfp4_block_lanes(&mut b, &p[..16], p[16], p[17])?;
    /// b.ins().return_(&values);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dequantize_nvfp4_block_lanes(
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
    /// The way back on 128-bit vectors: `codes` the block's 16 E2M1 codes as one I8X16 (the
    /// low 4 bits of each byte read), `scale` the I8 E4M3 scale code, `tensor_scale` an F32;
    /// gives the 16 values in `to` (float, half or bfloat), in order, as
    /// [`Lowering::convert`] gives 16 lanes of it (float: four F32X4), each the exact product
    /// element x scale x tensor scale rounded once to nearest even (a NaN product, from the
    /// scale 0x7f or 0xff, the positive quiet NaN), as
    /// [`Lowering::dequantize_nvfp4_block_lanes`] and a rounding give them one by one. The
    /// element times the scale (2 + 4 significant bits, from 2^-10 to 2688) is exact in float;
    /// into float, one float multiply by the tensor scale rounds the exact product once; into
    /// half and bfloat the product is taken exactly in double and rounded by `convert`. An
    /// error for another `to`, and for a target without 128-bit vectors (riscv64 without V:
    /// use the `_lanes` form).
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::Lowering;
    /// use clconv::ScalarType;
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.extend([AbiParam::new(types::I8X16), AbiParam::new(types::I8)]);
    /// sig.params.push(AbiParam::new(types::F32));
    /// sig.returns.extend([AbiParam::new(types::F32X4); 4]);
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let p = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// let floats = lowering.dequantize_nvfp4_block(&mut b, ScalarType::Float, p[0], p[1], p[2])?;
    /// b.ins().return_(&floats);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dequantize_nvfp4_block(
        &self,
        b: &mut FunctionBuilder,
        to: ScalarType,
        codes: Value,
        scale: Value,
        tensor_scale: Value,
    ) -> Result<Vec<Value>, LowerError> {
        self.check_mx_vectors()?;
        if !matches!(
            to,
            ScalarType::Float | ScalarType::Half | ScalarType::BFloat
        ) {
            return Err(LowerError::Operand {
                why: format!(
                    "NVFP4 blocks dequantise into float, half or bfloat, not {}",
                    to.name()
                ),
            });
        }
        check_parts(b, &[codes], types::I8X16, 1, "the elements")?;
        check_parts(b, &[scale], types::I8, 1, "the scale")?;
        check_parts(b, &[tensor_scale], types::F32, 1, "the tensor scale")?;
        let from_element = ElementConversion::new(ScalarType::Fp4E2M1, ScalarType::Float);
        let elements = self.convert(b, from_element, &[codes])?;
        let from_scale = ElementConversion::new(ScalarType::Fp8E4M3, ScalarType::Float);
        let s = single(self.convert(b, from_scale, &[scale])?, "the scale's value")?;
        let s = b.ins().splat(types::F32X4, s);
        let products: Vec<Value> = elements.iter().map(|&e| b.ins().fmul(e, s)).collect();
        // The scale 0x7f or 0xff: every value the positive quiet NaN.
        let magnitude = b.ins().band_imm_u(scale, 0x7f);
        let is_nan = b.ins().icmp_imm_u(IntCC::Equal, magnitude, 0x7f);
        let (lane, nan_bits, vector) = if to == ScalarType::Float {
            (types::I32, 0x7fc0_0000u64, types::F32X4)
        } else {
            (types::I64, 0x7ff8_0000_0000_0000, types::F64X2)
        };
        let all = b.ins().iconst(lane, -1);
        let none = b.ins().iconst(lane, 0);
        let mask = b.ins().select(is_nan, all, none);
        let mask = b.ins().splat(vector.as_int(), mask);
        let mask = super::values::bitcast_le(b, vector, mask);
        let nan = super::lanes::splat_bits(b, vector, nan_bits);
        if to == ScalarType::Float {
            let t = b.ins().splat(types::F32X4, tensor_scale);
            return Ok(products
                .into_iter()
                .map(|p| {
                    let value = b.ins().fmul(p, t);
                    b.ins().bitselect(mask, nan, value)
                })
                .collect());
        }
        let t = b.ins().fpromote(types::F64, tensor_scale);
        let t = b.ins().splat(types::F64X2, t);
        let exact: Vec<Value> = super::float_to_float::vector_promote(b, &products)
            .into_iter()
            .map(|p| {
                let exact = b.ins().fmul(p, t);
                b.ins().bitselect(mask, nan, exact)
            })
            .collect();
        let narrow = ElementConversion::new(ScalarType::Double, to).rounding(Rounding::Rte);
        self.convert(b, narrow, &exact)
    }
}
