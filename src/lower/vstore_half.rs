//! `vstore_half[_rte|_rtz|_rtp|_rtn]`, `vstore_halfn`, `vstorea_halfn`, `vload_half` and
//! `vload_halfn`: the OpenCL builtins that store `float`/`double` values to memory as `half`
//! and load `half` values as `float`, lowered into the caller's [`FunctionBuilder`].
//!
//! They are thin wrappers over the conversions clconv already lowers: a store without a mode is
//! `convert_half(x)`, which follows the static rounding mode (`SELECT_ROUNDING_MODE`, rte by
//! default), and `vstore_half_rtz` is `convert_half_rtz(x)`; the 16-bit results go to memory
//! little-endian. A load is the exact `convert_float(half)`. No `half` arithmetic is emitted
//! (Cranelift's x64 backend has none), only integer IR, so `cl_khr_fp16` is not needed.
//!
//! # Operands
//!
//! - `ptr`: the `half *` as an integer address (I64 on x86-64), `offset`: the `size_t` offset,
//!   an I64. As in OpenCL, `vstore_half(x, offset, p)` writes `p[offset]`; `vstore_halfn` and
//!   `vload_halfn` write or read `n` halves at `p + offset * n`; `vstorea_halfn` uses a stride of
//!   4 for `n = 3` (the aligned form) and of `n` otherwise.
//! - Vector values follow [`super::vector_parts`]: a `float4` is one F32X4, a `double8` four
//!   F64X2, a `float3` one F32X4 whose lane 3 is ignored.
//!
//! Stores and loads may trap on an invalid address like any other memory access; the address
//! need not be aligned.

use super::{emit_element, vector_parts, LowerError, Lowering};
use crate::request::Conversion;
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

fn flags() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}

fn name(base: &str, src: VectorType, mode: Option<Rounding>) -> String {
    let n = match src.width {
        Width::W1 => String::new(),
        w => w.lanes().to_string(),
    };
    let suffix = mode.map_or("", Rounding::suffix);
    format!("{base}{n}{suffix}({src})")
}

fn check_type(
    b: &FunctionBuilder,
    what: &str,
    request: &str,
    value: Value,
    expected: types::Type,
) -> Result<(), LowerError> {
    let got = b.func.dfg.value_type(value);
    if got != expected {
        return Err(LowerError::ValueType {
            what: what.into(),
            request: request.into(),
            expected,
            got,
        });
    }
    Ok(())
}

/// `base + offset * stride_bytes`, in the address's type.
fn address(b: &mut FunctionBuilder, ptr: Value, offset: Value, stride_bytes: i64) -> Value {
    let ptr_ty = b.func.dfg.value_type(ptr);
    let offset = if b.func.dfg.value_type(offset) == ptr_ty {
        offset
    } else {
        b.ins().ireduce(ptr_ty, offset)
    };
    let scaled = b.ins().imul_imm_u(offset, stride_bytes);
    b.ins().iadd(ptr, scaled)
}

impl Lowering {
    /// `vstore_half[_<mode>](value, offset, ptr)`: converts the F32 or F64 `value` (`src` says
    /// which) to half by `mode`, or by the static mode when `mode` is `None`, and stores its
    /// 16 bits at `ptr + 2 * offset`.
    ///
    /// ```
    /// use clconv::{lower::Lowering, Rounding, ScalarType};
    /// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    /// use cranelift_codegen::isa::CallConv;
    /// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    ///
    /// // fn(float x, half *p, size_t i) { vstore_half(x, i, p); } under SELECT_ROUNDING_MODE rtz
    /// let mut sig = Signature::new(CallConv::SystemV);
    /// sig.params.push(AbiParam::new(types::F32));
    /// sig.params.push(AbiParam::new(types::I64));
    /// sig.params.push(AbiParam::new(types::I64));
    /// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let entry = b.create_block();
    /// b.append_block_params_for_function_params(entry);
    /// b.switch_to_block(entry);
    /// let p = b.block_params(entry).to_vec();
    /// let lowering = Lowering::without_isa().with_static_mode(Rounding::Rtz);
    /// lowering.vstore_half(&mut b, ScalarType::Float, None, p[0], p[1], p[2]).unwrap();
    /// b.ins().return_(&[]);
    /// b.seal_all_blocks();
    /// ```
    pub fn vstore_half(
        &self,
        b: &mut FunctionBuilder,
        src: ScalarType,
        mode: Option<Rounding>,
        value: Value,
        ptr: Value,
        offset: Value,
    ) -> Result<(), LowerError> {
        self.vstore_halfn(
            b,
            VectorType::scalar(src),
            mode,
            &[value],
            ptr,
            offset,
            false,
        )
    }

    /// `vstore_halfn[_<mode>](value, offset, ptr)` (or, with `aligned`, `vstorea_halfn`):
    /// converts the `n` components of `value` (a `floatn` or `doublen` in its
    /// [`super::vector_parts`]) to half and stores them at `ptr + 2 * offset * n` (`n = 4` for a
    /// 3-component `vstorea_halfn`). `src` is `float` or `double` with width `n`.
    ///
    /// ```
    /// use clconv::{lower::Lowering, Rounding, ScalarType, VectorType, Width};
    /// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    /// use cranelift_codegen::isa::CallConv;
    /// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    ///
    /// let mut sig = Signature::new(CallConv::SystemV);
    /// sig.params.push(AbiParam::new(types::F64X2));
    /// sig.params.push(AbiParam::new(types::I64));
    /// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let entry = b.create_block();
    /// b.append_block_params_for_function_params(entry);
    /// b.switch_to_block(entry);
    /// let p = b.block_params(entry).to_vec();
    /// let zero = b.ins().iconst(types::I64, 0);
    /// let double2 = VectorType::new(ScalarType::Double, Width::W2);
    /// // vstore_half2_rtp(x, 0, p)
    /// Lowering::without_isa()
    ///     .vstore_halfn(&mut b, double2, Some(Rounding::Rtp), &[p[0]], p[1], zero, false)
    ///     .unwrap();
    /// // A float2 value is an F32X4, not an F64X2:
    /// let float2 = VectorType::new(ScalarType::Float, Width::W2);
    /// assert!(Lowering::without_isa().vstore_halfn(&mut b, float2, None, &[p[0]], p[1], zero, false).is_err());
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn vstore_halfn(
        &self,
        b: &mut FunctionBuilder,
        src: VectorType,
        mode: Option<Rounding>,
        value: &[Value],
        ptr: Value,
        offset: Value,
        aligned: bool,
    ) -> Result<(), LowerError> {
        let base = if aligned {
            "vstorea_half"
        } else {
            "vstore_half"
        };
        let request = name(base, src, mode);
        let not_float = |request: String| LowerError::ValueType {
            what: "the value".into(),
            request,
            expected: types::F32,
            got: super::element_type(src.elem),
        };
        if !matches!(src.elem, ScalarType::Float | ScalarType::Double) {
            return Err(not_float(request));
        }
        let Ok(conv) = Conversion::new(
            VectorType::scalar(src.elem),
            VectorType::scalar(ScalarType::Half),
            false,
            mode,
            Extensions::with_fp16(),
        ) else {
            return Err(not_float(request));
        };
        let check_int = |b: &FunctionBuilder, what: &str, v: Value| {
            let got = b.func.dfg.value_type(v);
            if got.is_int() && !got.is_vector() {
                Ok(())
            } else {
                Err(LowerError::ValueType {
                    what: what.into(),
                    request: request.clone(),
                    expected: types::I64,
                    got,
                })
            }
        };
        check_int(b, "the pointer", ptr)?;
        check_int(b, "the offset", offset)?;
        let lanes = src.lanes();
        let values: Vec<Value> = if lanes == 1 {
            check_type(
                b,
                "the value",
                &request,
                value.first().copied().unwrap_or(ptr),
                super::element_type(src.elem),
            )?;
            if value.len() != 1 {
                return Err(LowerError::PartCount {
                    request,
                    ty: src,
                    expected: 1,
                    got: value.len(),
                });
            }
            vec![value[0]]
        } else {
            let (part_ty, count) = vector_parts(src);
            if value.len() != count {
                return Err(LowerError::PartCount {
                    request,
                    ty: src,
                    expected: count,
                    got: value.len(),
                });
            }
            for (i, &p) in value.iter().enumerate() {
                check_type(b, &format!("part {i} of the value"), &request, p, part_ty)?;
            }
            let per = part_ty.lane_count() as usize;
            (0..lanes)
                .map(|k| b.ins().extractlane(value[k / per], (k % per) as u8))
                .collect()
        };
        let stride = if aligned && src.width == Width::W3 {
            4
        } else {
            lanes
        };
        let at = address(b, ptr, offset, 2 * stride as i64);
        for (k, &x) in values.iter().enumerate() {
            let bits = emit_element(b, &conv, self.static_mode(), x);
            b.ins().store(flags(), bits, at, (2 * k) as i32);
        }
        Ok(())
    }

    /// `vload_half(offset, ptr)`: the half at `ptr + 2 * offset` as an F32 (exact).
    ///
    /// ```
    /// use clconv::lower::Lowering;
    /// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    /// use cranelift_codegen::isa::CallConv;
    /// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    ///
    /// let mut sig = Signature::new(CallConv::SystemV);
    /// sig.params.push(AbiParam::new(types::I64));
    /// sig.returns.push(AbiParam::new(types::F32));
    /// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let entry = b.create_block();
    /// b.append_block_params_for_function_params(entry);
    /// b.switch_to_block(entry);
    /// let p = b.block_params(entry)[0];
    /// let one = b.ins().iconst(types::I64, 1);
    /// let x = Lowering::without_isa().vload_half(&mut b, p, one).unwrap(); // p[1]
    /// assert_eq!(b.func.dfg.value_type(x), types::F32);
    /// b.ins().return_(&[x]);
    /// b.seal_all_blocks();
    /// ```
    pub fn vload_half(
        &self,
        b: &mut FunctionBuilder,
        ptr: Value,
        offset: Value,
    ) -> Result<Value, LowerError> {
        Ok(self.vload_halfn(b, Width::W1, ptr, offset)?[0])
    }

    /// `vload_halfn(offset, ptr)`: the `n` halves at `ptr + 2 * offset * n` as a `floatn` in its
    /// [`super::vector_parts`] (one F32 for `n = 1`; F32X4 parts otherwise, unused lanes zero).
    ///
    /// ```
    /// use clconv::{lower::Lowering, Width};
    /// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    /// use cranelift_codegen::isa::CallConv;
    /// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    ///
    /// let mut sig = Signature::new(CallConv::SystemV);
    /// sig.params.push(AbiParam::new(types::I64));
    /// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let entry = b.create_block();
    /// b.append_block_params_for_function_params(entry);
    /// b.switch_to_block(entry);
    /// let p = b.block_params(entry)[0];
    /// let zero = b.ins().iconst(types::I64, 0);
    /// let parts = Lowering::without_isa().vload_halfn(&mut b, Width::W8, p, zero).unwrap();
    /// assert_eq!(parts.len(), 2); // float8: two F32X4
    /// ```
    pub fn vload_halfn(
        &self,
        b: &mut FunctionBuilder,
        width: Width,
        ptr: Value,
        offset: Value,
    ) -> Result<Vec<Value>, LowerError> {
        let dst = VectorType::new(ScalarType::Float, width);
        let request = format!(
            "vload_half{}",
            match width {
                Width::W1 => String::new(),
                w => w.lanes().to_string(),
            }
        );
        for (what, v) in [("the pointer", ptr), ("the offset", offset)] {
            let got = b.func.dfg.value_type(v);
            if !got.is_int() || got.is_vector() {
                return Err(LowerError::ValueType {
                    what: what.into(),
                    request,
                    expected: types::I64,
                    got,
                });
            }
        }
        let conv = Conversion::new(
            VectorType::scalar(ScalarType::Half),
            VectorType::scalar(ScalarType::Float),
            false,
            None,
            Extensions::with_fp16(),
        )
        .expect("half -> float is legal with cl_khr_fp16");
        let lanes = width.lanes();
        let at = address(b, ptr, offset, 2 * lanes as i64);
        let floats: Vec<Value> = (0..lanes)
            .map(|k| {
                let bits = b.ins().load(types::I16, flags(), at, (2 * k) as i32);
                emit_element(b, &conv, self.static_mode(), bits)
            })
            .collect();
        if lanes == 1 {
            return Ok(floats);
        }
        let (part_ty, count) = vector_parts(dst);
        let zero = b.ins().f32const(0.0);
        let mut parts: Vec<Value> = (0..count).map(|_| b.ins().splat(part_ty, zero)).collect();
        for (k, &x) in floats.iter().enumerate() {
            parts[k / 4] = b.ins().insertlane(parts[k / 4], x, (k % 4) as u8);
        }
        Ok(parts)
    }
}
