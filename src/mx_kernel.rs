//! Batch kernels for MX block requests ([`crate::mx`]): a Cranelift function
//! `fn(a: *const u8, b: *const u8, c: *mut u8, d: *mut u8, blocks: i64)` over whole blocks of 32,
//! and its JIT entry point [`Jit::compile_blocks`] (feature `jit`); `aot::ObjectBuilder::
//! add_blocks` (feature `aot`) puts the same function into an object file.
//!
//! A quantisation reads the values at `a` and writes the elements at `c` and the scales at `d`;
//! a dequantisation reads the elements at `a` and the scales at `b` and writes the values at
//! `c`. One block per loop turn, through [`Lowering::quantize_mx_block`] and
//! [`Lowering::dequantize_mx_block`]: the builder API's code is the kernel's. A last block
//! shorter than 32 runs on a zero-padded copy.
//!
//! ```
//! use clconv::jit::{Fp8E4M3, Fp8E8M0, Jit};
//! let jit = Jit::new().unwrap();
//! let k = jit.compile_blocks("convert_mxfp8e4m3(float)").unwrap();
//! let mut values = [0.5f32; 32];
//! values[7] = 1000.0;
//! let mut elements = [Fp8E4M3(0); 32];
//! let mut scales = [Fp8E8M0(0); 1];
//! k.quantize(&values, &mut elements, &mut scales).unwrap();
//! // OCP's scale: 2^(floor(log2 1000) - 8) = 2 (0x80); 1000 / 2 saturates to 448 (0x7e).
//! assert_eq!((scales[0].0, elements[7].0), (0x80, 0x7e));
//! ```

#[cfg(feature = "jit")]
use crate::host;
#[cfg(feature = "jit")]
use crate::jit::{self, Disassembly, Element, Jit, JitError};
use crate::kernel::{counted_loop, mem_flags};
use crate::lower::{ElementConversion, HalfValues, Lowering};
#[cfg(feature = "jit")]
use crate::mx::{MxBufferError, MxParseError};
use crate::mx::{MxRequest, MX_BLOCK, NVFP4_BLOCK};
use crate::table::IsaFeatures;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Function, InstBuilder, Signature, UserFuncName, Value,
};
#[cfg(feature = "jit")]
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
#[cfg(feature = "jit")]
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why compiling or running an MX block kernel failed.
#[cfg(feature = "jit")]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MxError {
    /// The name is not an MX block request.
    #[error(transparent)]
    Parse(#[from] MxParseError),
    /// The buffers do not fit the request.
    #[error(transparent)]
    Buffer(#[from] MxBufferError),
    /// The JIT could not compile the kernel.
    #[error(transparent)]
    Jit(#[from] JitError),
}

/// The kernels' signature: `fn(a, b, c, d, blocks)`, five I64 (see the module docs).
///
/// ```
/// use clconv::mx_kernel::signature;
/// use cranelift_codegen::isa::CallConv;
/// assert_eq!(signature(CallConv::SystemV).params.len(), 5);
/// ```
pub fn signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    for _ in 0..5 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

/// Builds the kernel of `request` (the module docs' signature) for an ISA of `features`.
///
/// ```
/// use clconv::{mx::MxRequest, mx_kernel, table::IsaFeatures};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = MxRequest::parse("convert_half(mxfp4e2m1)").unwrap();
/// let func = mx_kernel::build(&r, IsaFeatures::of(&*isa).unwrap(), isa.frontend_config()).unwrap();
/// assert_eq!(func.signature.params.len(), 5);
/// ```
pub fn build(
    request: &MxRequest,
    features: IsaFeatures,
    frontend: TargetFrontendConfig,
) -> Result<Function, crate::lower::LowerError> {
    let sig = signature(frontend.default_call_conv);
    let mut func = Function::with_name_signature(UserFuncName::user(2, 0), sig);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    let lowering = Lowering::with_features(features).with_half_values(HalfValues::Bits);
    // NVFP4's tensor scale, read once: behind the pointer the kernel does not use for buffers.
    let tensor_scale = match request {
        MxRequest::QuantizeNvfp4 { .. } => Some(b.ins().load(types::F32, mem_flags(), p[1], 0)),
        MxRequest::DequantizeNvfp4 { .. } => Some(b.ins().load(types::F32, mem_flags(), p[3], 0)),
        _ => None,
    };
    let mut failed = None;
    counted_loop(&mut b, p[4], IntCC::SignedLessThan, &mut |b, i| {
        if failed.is_none() {
            let pointers = [p[0], p[1], p[2], p[3]];
            let done = match tensor_scale {
                Some(t) => nvfp4_block_body(b, &lowering, request, pointers, i, t),
                None if lowering.mx_vectors() => block_body(b, &lowering, request, pointers, i),
                None => block_body_lanes(b, &lowering, request, pointers, i),
            };
            if let Err(e) = done {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
    Ok(func)
}

/// `base + index * scale + offset`.
fn at(b: &mut FunctionBuilder, base: Value, index: Value, scale: usize, offset: usize) -> Value {
    let scaled = b.ins().imul_imm_u(index, scale as i64);
    let addr = b.ins().iadd(base, scaled);
    b.ins().iadd_imm_u(addr, offset as i64)
}

/// One NVFP4 block, `i`, on vectors ([`Lowering::quantize_nvfp4_block`],
/// [`Lowering::dequantize_nvfp4_block`]) or value by value (their `_lanes` forms, without
/// 128-bit vectors), under the tensor scale `t` (an F32).
fn nvfp4_block_body(
    b: &mut FunctionBuilder,
    lowering: &Lowering,
    request: &MxRequest,
    p: [Value; 4],
    i: Value,
    t: Value,
) -> Result<(), crate::lower::LowerError> {
    let value = request.value();
    let bytes = value.bytes();
    let n = NVFP4_BLOCK;
    match *request {
        MxRequest::QuantizeNvfp4 { packed, .. } if lowering.mx_vectors() => {
            let floats = load_floats_x4(b, lowering, value, p[0], i, n)?;
            let (codes, scale) = lowering.quantize_nvfp4_block(b, &floats, t)?;
            if packed {
                // The 16 codes' 8 bytes: the low half of a packing of them twice.
                let bytes = lowering.pack_fp4(b, [codes, codes])?;
                let words = crate::lower::bitcast_le(b, types::I64X2, bytes);
                let low = b.ins().extractlane(words, 0);
                let addr = at(b, p[2], i, n / 2, 0);
                b.ins().store(mem_flags(), low, addr, 0);
            } else {
                let addr = at(b, p[2], i, n, 0);
                b.ins().store(mem_flags(), codes, addr, 0);
            }
            let addr = b.ins().iadd(p[3], i);
            b.ins().store(mem_flags(), scale, addr, 0);
        }
        MxRequest::QuantizeNvfp4 { packed, .. } => {
            let widen = ElementConversion::new(value, ScalarType::Float);
            let mut floats = Vec::with_capacity(n);
            for j in 0..n {
                let addr = at(b, p[0], i, n * bytes, bytes * j);
                let v = if value == ScalarType::Float {
                    b.ins().load(types::F32, mem_flags(), addr, 0)
                } else {
                    let h = b.ins().load(types::I16, mem_flags(), addr, 0);
                    lowering.convert(b, widen, &[h])?[0]
                };
                floats.push(v);
            }
            let (codes, scale) = lowering.quantize_nvfp4_block_lanes(b, &floats, t)?;
            store_codes(b, &codes, packed, p[2], i);
            let addr = b.ins().iadd(p[3], i);
            b.ins().store(mem_flags(), scale, addr, 0);
        }
        MxRequest::DequantizeNvfp4 { to, packed } if lowering.mx_vectors() => {
            let codes = if packed {
                // The block's 8 bytes in a vector's low half, unpacked to 16 codes.
                let addr = at(b, p[0], i, n / 2, 0);
                let bytes = b.ins().load(types::I64, mem_flags(), addr, 0);
                let bytes = b.ins().scalar_to_vector(types::I64X2, bytes);
                let bytes = crate::lower::bitcast_le(b, types::I8X16, bytes);
                lowering.unpack_fp4(b, bytes)?[0]
            } else {
                let addr = at(b, p[0], i, n, 0);
                b.ins().load(types::I8X16, mem_flags(), addr, 0)
            };
            let addr = b.ins().iadd(p[1], i);
            let scale = b.ins().load(types::I8, mem_flags(), addr, 0);
            let mut offset = 0;
            for v in lowering.dequantize_nvfp4_block(b, to, codes, scale, t)? {
                let addr = at(b, p[2], i, n * bytes, offset);
                b.ins().store(mem_flags(), v, addr, 0);
                offset += b.func.dfg.value_type(v).bytes() as usize;
            }
        }
        MxRequest::DequantizeNvfp4 { to, packed } => {
            let codes = load_codes(b, n, packed, p[0], i);
            let addr = b.ins().iadd(p[1], i);
            let scale = b.ins().load(types::I8, mem_flags(), addr, 0);
            let exact = lowering.dequantize_nvfp4_block_lanes(b, &codes, scale, t)?;
            let narrow = ElementConversion::new(ScalarType::Double, to).rounding(Rounding::Rte);
            for (j, &v) in exact.iter().enumerate() {
                let v = lowering.convert(b, narrow, &[v])?[0];
                let addr = at(b, p[2], i, n * bytes, bytes * j);
                b.ins().store(mem_flags(), v, addr, 0);
            }
        }
        _ => unreachable!("nvfp4_block_body is called for NVFP4 requests"),
    }
    Ok(())
}

/// Stores the I8 `codes` of block `i` at `base`: a byte each, or packed two to a byte
/// (element 2j in the low nibble, 2j + 1 in the high one).
fn store_codes(b: &mut FunctionBuilder, codes: &[Value], packed: bool, base: Value, i: Value) {
    let n = codes.len();
    if packed {
        for (j, pair) in codes.chunks(2).enumerate() {
            let low = b.ins().band_imm_u(pair[0], 0x0f);
            let high = b.ins().ishl_imm_u(pair[1], 4);
            let byte = b.ins().bor(low, high);
            let addr = at(b, base, i, n / 2, j);
            b.ins().store(mem_flags(), byte, addr, 0);
        }
    } else {
        for (j, &c) in codes.iter().enumerate() {
            let addr = at(b, base, i, n, j);
            b.ins().store(mem_flags(), c, addr, 0);
        }
    }
}

/// Loads the `n` I8 codes of block `i` at `base` (packed: two to a byte, low nibble first).
fn load_codes(
    b: &mut FunctionBuilder,
    n: usize,
    packed: bool,
    base: Value,
    i: Value,
) -> Vec<Value> {
    let mut codes = Vec::with_capacity(n);
    if packed {
        for j in 0..n / 2 {
            let addr = at(b, base, i, n / 2, j);
            let byte = b.ins().load(types::I8, mem_flags(), addr, 0);
            codes.push(b.ins().band_imm_u(byte, 0x0f));
            codes.push(b.ins().ushr_imm_u(byte, 4));
        }
    } else {
        for j in 0..n {
            let addr = at(b, base, i, n, j);
            codes.push(b.ins().load(types::I8, mem_flags(), addr, 0));
        }
    }
    codes
}

/// One block, `i`, of the request, lane by lane in scalar registers (a target without 128-bit
/// vectors: riscv64 without V).
fn block_body_lanes(
    b: &mut FunctionBuilder,
    lowering: &Lowering,
    request: &MxRequest,
    p: [Value; 4],
    i: Value,
) -> Result<(), crate::lower::LowerError> {
    let value = request.value();
    let bytes = value.bytes();
    let packed = request.packed();
    match *request {
        MxRequest::Quantize { elem, rule, .. } => {
            let widen = ElementConversion::new(value, ScalarType::Float);
            let mut floats = Vec::with_capacity(MX_BLOCK);
            for j in 0..MX_BLOCK {
                let addr = at(b, p[0], i, MX_BLOCK * bytes, bytes * j);
                let v = if value == ScalarType::Float {
                    b.ins().load(types::F32, mem_flags(), addr, 0)
                } else {
                    let h = b.ins().load(types::I16, mem_flags(), addr, 0);
                    let out = lowering.convert(b, widen, &[h])?;
                    out[0]
                };
                floats.push(v);
            }
            let (codes, scale) = lowering.quantize_mx_block_lanes(b, elem, rule, &floats)?;
            store_codes(b, &codes, packed, p[2], i);
            let addr = b.ins().iadd(p[3], i);
            b.ins().store(mem_flags(), scale, addr, 0);
        }
        MxRequest::Dequantize { elem, to, .. } => {
            let codes = load_codes(b, MX_BLOCK, packed, p[0], i);
            let addr = b.ins().iadd(p[1], i);
            let scale = b.ins().load(types::I8, mem_flags(), addr, 0);
            let floats = lowering.dequantize_mx_block_lanes(b, elem, &codes, scale)?;
            let narrow = ElementConversion::new(ScalarType::Float, to).rounding(Rounding::Rte);
            for (j, &v) in floats.iter().enumerate() {
                let v = if to == ScalarType::Float {
                    v
                } else {
                    lowering.convert(b, narrow, &[v])?[0]
                };
                let addr = at(b, p[2], i, MX_BLOCK * bytes, bytes * j);
                b.ins().store(mem_flags(), v, addr, 0);
            }
        }
        MxRequest::QuantizeNvfp4 { .. } | MxRequest::DequantizeNvfp4 { .. } => {
            unreachable!("NVFP4 requests take nvfp4_block_body")
        }
    }
    Ok(())
}

/// The `n` values of block `i` at `base` (float, half or bfloat) as `n / 4` F32X4 values:
/// half and bfloat eight to a vector, widened exactly.
fn load_floats_x4(
    b: &mut FunctionBuilder,
    lowering: &Lowering,
    value: ScalarType,
    base: Value,
    i: Value,
    n: usize,
) -> Result<Vec<Value>, crate::lower::LowerError> {
    if value == ScalarType::Float {
        return Ok((0..n / 4)
            .map(|j| {
                let addr = at(b, base, i, n * 4, 16 * j);
                b.ins().load(types::F32X4, mem_flags(), addr, 0)
            })
            .collect());
    }
    let bytes = value.bytes();
    let widen = ElementConversion::new(value, ScalarType::Float);
    let mut out = Vec::new();
    for j in 0..n / 16 {
        let parts: Vec<Value> = (0..2)
            .map(|h| {
                let addr = at(b, base, i, n * bytes, 32 * j + 16 * h);
                b.ins().load(types::I16X8, mem_flags(), addr, 0)
            })
            .collect();
        out.extend(lowering.convert(b, widen, &parts)?);
    }
    Ok(out)
}

/// One block, `i`, of the request.
fn block_body(
    b: &mut FunctionBuilder,
    lowering: &Lowering,
    request: &MxRequest,
    p: [Value; 4],
    i: Value,
) -> Result<(), crate::lower::LowerError> {
    let value = request.value();
    let bytes = value.bytes();
    match *request {
        MxRequest::Quantize { elem, rule, .. } => {
            let floats = load_floats_x4(b, lowering, value, p[0], i, MX_BLOCK)?;
            let q = lowering.quantize_mx_block(b, elem, rule, &floats)?;
            if request.packed() {
                let packed = lowering.pack_fp4(b, q.elements)?;
                let addr = at(b, p[2], i, MX_BLOCK / 2, 0);
                b.ins().store(mem_flags(), packed, addr, 0);
            } else {
                for (j, &e) in q.elements.iter().enumerate() {
                    let addr = at(b, p[2], i, MX_BLOCK, 16 * j);
                    b.ins().store(mem_flags(), e, addr, 0);
                }
            }
            let addr = b.ins().iadd(p[3], i);
            b.ins().store(mem_flags(), q.scale, addr, 0);
        }
        MxRequest::Dequantize { elem, to, packed } => {
            let codes = if packed {
                let addr = at(b, p[0], i, MX_BLOCK / 2, 0);
                let bytes = b.ins().load(types::I8X16, mem_flags(), addr, 0);
                lowering.unpack_fp4(b, bytes)?
            } else {
                [0, 1].map(|j| {
                    let addr = at(b, p[0], i, MX_BLOCK, 16 * j);
                    b.ins().load(types::I8X16, mem_flags(), addr, 0)
                })
            };
            let addr = b.ins().iadd(p[1], i);
            let scale = b.ins().load(types::I8, mem_flags(), addr, 0);
            let floats = lowering.dequantize_mx_block(b, elem, codes, scale)?;
            if to == ScalarType::Float {
                for (j, &v) in floats.iter().enumerate() {
                    let addr = at(b, p[2], i, MX_BLOCK * 4, 16 * j);
                    b.ins().store(mem_flags(), v, addr, 0);
                }
            } else {
                let narrow = ElementConversion::new(ScalarType::Float, to).rounding(Rounding::Rte);
                let mut offset = 0;
                for sixteen in floats.chunks(4) {
                    for v in lowering.convert(b, narrow, sixteen)? {
                        let addr = at(b, p[2], i, MX_BLOCK * bytes, offset);
                        b.ins().store(mem_flags(), v, addr, 0);
                        offset += b.func.dfg.value_type(v).bytes() as usize;
                    }
                }
            }
        }
        MxRequest::QuantizeNvfp4 { .. } | MxRequest::DequantizeNvfp4 { .. } => {
            unreachable!("NVFP4 requests take nvfp4_block_body")
        }
    }
    Ok(())
}

#[cfg(feature = "jit")]
/// A compiled MX block kernel, from [`Jit::compile_blocks`]. Holds its [`Jit`], so the code
/// lives as long as the kernel.
pub struct MxKernel {
    /// Keeps the JIT, and so the code behind the entry point, alive.
    _jit: Jit,
    request: MxRequest,
    entry: usize,
}

#[cfg(feature = "jit")]
impl MxKernel {
    /// The request.
    pub fn request(&self) -> MxRequest {
        self.request
    }

    /// Quantises `values` (float, half or bfloat: the request's) into `elements` (one of the
    /// element format's wrappers, [`crate::jit::Fp4E2M1`] say, or `u8` for `mxfp4e2m1x2`'s
    /// packed pairs) and `scales` (one
    /// [`crate::jit::Fp8E8M0`] per block of 32; a last, shorter block is one padded with
    /// zeros). An error for a dequantisation, other element types or lengths that do not fit.
    ///
    /// ```
    /// use clconv::jit::{Fp4E2M1, Fp8E8M0, Jit};
    /// let k = Jit::new().unwrap().compile_blocks("convert_mxfp4e2m1(float)").unwrap();
    /// let values = [1.0f32, -3.0, 0.25];
    /// let (mut e, mut s) = ([Fp4E2M1(0); 3], [Fp8E8M0(0)]);
    /// k.quantize(&values, &mut e, &mut s).unwrap();
    /// assert_eq!(s[0].0, 0x7e); // amax 3: 2^(1 - 2)
    /// assert_eq!(e.map(|c| c.0), [0x4, 0xf, 0x1]); // 2.0, -6.0, 0.5
    /// let mut no_scales: [Fp8E8M0; 0] = [];
    /// assert!(k.quantize(&values, &mut e, &mut no_scales).is_err()); // one block needs one
    /// ```
    pub fn quantize<V: Element, E: Element, S: Element>(
        &self,
        values: &[V],
        elements: &mut [E],
        scales: &mut [S],
    ) -> Result<(), MxError> {
        self.quantize_typed(values, None, elements, scales)
    }

    /// Quantises `values` into NVFP4 `elements` ([`crate::jit::Fp4E2M1`], or `u8` for
    /// `nvfp4x2`'s packed pairs) and `scales` (one [`crate::jit::Fp8E4M3`] per block of 16)
    /// under `tensor_scale`, the tensor's float32 decode scale (NVIDIA's recipe takes the
    /// tensor's amax / (6 x 448)). An error for other requests, a tensor scale that is not
    /// positive and finite, other element types or lengths that do not fit.
    ///
    /// ```
    /// use clconv::jit::{Fp4E2M1, Fp8E4M3, Jit};
    /// let k = Jit::new().unwrap().compile_blocks("convert_nvfp4(float)").unwrap();
    /// let values = [1.0f32, -3.0, 0.25];
    /// let (mut e, mut s) = ([Fp4E2M1(0); 3], [Fp8E4M3(0)]);
    /// k.quantize_nvfp4(&values, 1.0, &mut e, &mut s).unwrap();
    /// assert_eq!(s[0].0, 0x30); // amax 3 / 6 = 0.5
    /// assert_eq!(e.map(|c| c.0), [0x4, 0xf, 0x1]); // 2.0, -6.0, 0.5
    /// assert!(k.quantize_nvfp4(&values, 0.0, &mut e, &mut s).is_err());
    /// ```
    pub fn quantize_nvfp4<V: Element, E: Element, S: Element>(
        &self,
        values: &[V],
        tensor_scale: f32,
        elements: &mut [E],
        scales: &mut [S],
    ) -> Result<(), MxError> {
        self.quantize_typed(values, Some(tensor_scale), elements, scales)
    }

    fn quantize_typed<V: Element, E: Element, S: Element>(
        &self,
        values: &[V],
        tensor_scale: Option<f32>,
        elements: &mut [E],
        scales: &mut [S],
    ) -> Result<(), MxError> {
        if !self.request.is_quantize() {
            return Err(self.wrong_way("quantize", "dequantize"));
        }
        self.check_type("value", V::TYPE, self.request.value())?;
        self.check_type("element", E::TYPE, self.element_type(self.request.elem()))?;
        self.check_type("scale", S::TYPE, self.request.scale_type())?;
        let n = self
            .request
            .check_lengths(values.len(), elements.len(), scales.len())?;
        // SAFETY: `Element` is sealed and implemented only for plain integers, floats and
        // `repr(transparent)` wrappers of them: no padding, every byte pattern valid, so the
        // slices may be viewed (and written) as bytes of the same length.
        let (v, e, s) = unsafe {
            (
                std::slice::from_raw_parts(
                    values.as_ptr().cast::<u8>(),
                    std::mem::size_of_val(values),
                ),
                std::slice::from_raw_parts_mut(
                    elements.as_mut_ptr().cast::<u8>(),
                    self.request.element_bytes(n),
                ),
                std::slice::from_raw_parts_mut(scales.as_mut_ptr().cast::<u8>(), scales.len()),
            )
        };
        self.quantize_with(v, tensor_scale, e, s)
    }

    /// [`MxKernel::quantize`] on raw little-endian bytes: `values` holds the values, `elements`
    /// one byte per value, `scales` one byte per block.
    ///
    /// ```
    /// let k = clconv::jit::Jit::new().unwrap().compile_blocks("convert_mxfp8e5m2_rtp(half)").unwrap();
    /// let values = 0x3c00u16.to_le_bytes(); // 1.0
    /// let (mut e, mut s) = ([0u8; 1], [0u8; 1]);
    /// k.quantize_bytes(&values, &mut e, &mut s).unwrap();
    /// assert_eq!((s[0], e[0]), (127 - 15, 0x78)); // 1.0 = 2^15 * 2^-15: E5M2's 2^15
    /// ```
    pub fn quantize_bytes(
        &self,
        values: &[u8],
        elements: &mut [u8],
        scales: &mut [u8],
    ) -> Result<(), MxError> {
        self.quantize_with(values, None, elements, scales)
    }

    /// [`MxKernel::quantize_nvfp4`] on raw little-endian bytes.
    ///
    /// ```
    /// let k = clconv::jit::Jit::new().unwrap().compile_blocks("convert_nvfp4x2(float)").unwrap();
    /// let values: Vec<u8> = [2.0f32, -1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let (mut e, mut s) = ([0u8; 1], [0u8; 1]);
    /// k.quantize_nvfp4_bytes(&values, 0.5, &mut e, &mut s).unwrap();
    /// // 2 / (6 * 0.5) rounds to E4M3 0.6875 (0x33); 2 / 0.34375 -> 6 (0x7), -1 -> -3 (0xd).
    /// assert_eq!((s[0], e[0]), (0x33, 0xd7));
    /// ```
    pub fn quantize_nvfp4_bytes(
        &self,
        values: &[u8],
        tensor_scale: f32,
        elements: &mut [u8],
        scales: &mut [u8],
    ) -> Result<(), MxError> {
        self.quantize_with(values, Some(tensor_scale), elements, scales)
    }

    fn quantize_with(
        &self,
        values: &[u8],
        tensor_scale: Option<f32>,
        elements: &mut [u8],
        scales: &mut [u8],
    ) -> Result<(), MxError> {
        if !self.request.is_quantize() {
            return Err(self.wrong_way("quantize", "dequantize"));
        }
        let t = self.tensor_scale(tensor_scale, "quantize_nvfp4", "quantize")?;
        let n = self
            .request
            .check_byte_lengths(values.len(), elements.len(), scales.len())?;
        let block = self.request.block_len();
        let (full, rest) = (n / block, n % block);
        let (value_at, element_at) = (self.value_bytes(full), self.element_bytes(full));
        self.call_in_parts(
            [&values[..value_at], &[]],
            [&mut elements[..element_at], &mut scales[..full]],
            full,
            t,
        )?;
        if rest > 0 {
            // The last block on zero-padded copies.
            let mut v = [0u8; MX_BLOCK * 4];
            let (mut e, mut s) = ([0u8; MX_BLOCK], [0u8; 1]);
            v[..values.len() - value_at].copy_from_slice(&values[value_at..]);
            self.call_blocks([&v, &[]], [&mut e, &mut s], 1, t)?;
            let tail = elements.len() - element_at;
            elements[element_at..].copy_from_slice(&e[..tail]);
            scales[full] = s[0];
        }
        Ok(())
    }

    /// Dequantises `elements` and `scales` (one per block of 32) into `values` (float, half or
    /// bfloat: the request's).
    ///
    /// ```
    /// use clconv::jit::{Fp4E2M1, Fp8E8M0, Jit};
    /// let k = Jit::new().unwrap().compile_blocks("convert_float(mxfp4e2m1)").unwrap();
    /// let mut values = [0f32; 2];
    /// k.dequantize(&[Fp4E2M1(0x4), Fp4E2M1(0xf)], &[Fp8E8M0(0x7e)], &mut values).unwrap();
    /// assert_eq!(values, [1.0, -3.0]);
    /// ```
    pub fn dequantize<E: Element, S: Element, V: Element>(
        &self,
        elements: &[E],
        scales: &[S],
        values: &mut [V],
    ) -> Result<(), MxError> {
        self.dequantize_typed(elements, scales, None, values)
    }

    /// Dequantises NVFP4 `elements` and `scales` (one E4M3 per block of 16) under
    /// `tensor_scale` into `values`: element x scale x tensor scale, rounded once.
    ///
    /// ```
    /// use clconv::jit::{Fp4E2M1, Fp8E4M3, Jit};
    /// let k = Jit::new().unwrap().compile_blocks("convert_float(nvfp4)").unwrap();
    /// let mut values = [0f32; 2];
    /// k.dequantize_nvfp4(&[Fp4E2M1(0x4), Fp4E2M1(0xf)], &[Fp8E4M3(0x30)], 2.0, &mut values).unwrap();
    /// assert_eq!(values, [2.0, -6.0]);
    /// ```
    pub fn dequantize_nvfp4<E: Element, S: Element, V: Element>(
        &self,
        elements: &[E],
        scales: &[S],
        tensor_scale: f32,
        values: &mut [V],
    ) -> Result<(), MxError> {
        self.dequantize_typed(elements, scales, Some(tensor_scale), values)
    }

    fn dequantize_typed<E: Element, S: Element, V: Element>(
        &self,
        elements: &[E],
        scales: &[S],
        tensor_scale: Option<f32>,
        values: &mut [V],
    ) -> Result<(), MxError> {
        if self.request.is_quantize() {
            return Err(self.wrong_way("dequantize", "quantize"));
        }
        self.check_type("value", V::TYPE, self.request.value())?;
        self.check_type("element", E::TYPE, self.element_type(self.request.elem()))?;
        self.check_type("scale", S::TYPE, self.request.scale_type())?;
        self.request
            .check_lengths(values.len(), elements.len(), scales.len())?;
        // SAFETY: as in `quantize_typed`: sealed plain element types, viewed as bytes.
        let (e, s, v) = unsafe {
            (
                std::slice::from_raw_parts(elements.as_ptr().cast::<u8>(), elements.len()),
                std::slice::from_raw_parts(scales.as_ptr().cast::<u8>(), scales.len()),
                std::slice::from_raw_parts_mut(
                    values.as_mut_ptr().cast::<u8>(),
                    std::mem::size_of_val(values),
                ),
            )
        };
        self.dequantize_with(e, s, tensor_scale, v)
    }

    /// [`MxKernel::dequantize`] on raw little-endian bytes.
    ///
    /// ```
    /// let k = clconv::jit::Jit::new().unwrap().compile_blocks("convert_bfloat(mxfp6e3m2)").unwrap();
    /// let mut v = [0u8; 2];
    /// k.dequantize_bytes(&[0x1f], &[127], &mut v).unwrap(); // E3M2 0x1f is 28.0
    /// assert_eq!(u16::from_le_bytes(v), 0x41e0); // 28.0 as bfloat16
    /// ```
    pub fn dequantize_bytes(
        &self,
        elements: &[u8],
        scales: &[u8],
        values: &mut [u8],
    ) -> Result<(), MxError> {
        self.dequantize_with(elements, scales, None, values)
    }

    /// [`MxKernel::dequantize_nvfp4`] on raw little-endian bytes.
    ///
    /// ```
    /// let k = clconv::jit::Jit::new().unwrap().compile_blocks("convert_half(nvfp4x2)").unwrap();
    /// let mut v = [0u8; 4];
    /// k.dequantize_nvfp4_bytes(&[0xd7], &[0x33], 0.5, &mut v).unwrap();
    /// assert_eq!(v, [0x20, 0x40, 0x20, 0xbc]); // 6 x 0.6875 x 0.5 = 2.0625, -1.03125
    /// ```
    pub fn dequantize_nvfp4_bytes(
        &self,
        elements: &[u8],
        scales: &[u8],
        tensor_scale: f32,
        values: &mut [u8],
    ) -> Result<(), MxError> {
        self.dequantize_with(elements, scales, Some(tensor_scale), values)
    }

    fn dequantize_with(
        &self,
        elements: &[u8],
        scales: &[u8],
        tensor_scale: Option<f32>,
        values: &mut [u8],
    ) -> Result<(), MxError> {
        if self.request.is_quantize() {
            return Err(self.wrong_way("dequantize", "quantize"));
        }
        let t = self.tensor_scale(tensor_scale, "dequantize_nvfp4", "dequantize")?;
        let n = self
            .request
            .check_byte_lengths(values.len(), elements.len(), scales.len())?;
        let block = self.request.block_len();
        let (full, rest) = (n / block, n % block);
        let (value_at, element_at) = (self.value_bytes(full), self.element_bytes(full));
        self.call_in_parts(
            [&elements[..element_at], &scales[..full]],
            [&mut values[..value_at], &mut []],
            full,
            t,
        )?;
        if rest > 0 {
            // The last block on zero-padded copies.
            let mut e = [0u8; MX_BLOCK];
            let mut v = [0u8; MX_BLOCK * 4];
            e[..elements.len() - element_at].copy_from_slice(&elements[element_at..]);
            self.call_blocks([&e, &scales[full..]], [&mut v, &mut []], 1, t)?;
            let tail = values.len() - value_at;
            values[value_at..].copy_from_slice(&v[..tail]);
        }
        Ok(())
    }

    /// The tensor scale a run passes to the kernel: NVFP4's, checked, or 1 (unread) for MX;
    /// an error when a run gives one its request does not take, or none where it needs one.
    fn tensor_scale(
        &self,
        given: Option<f32>,
        nvfp4_call: &'static str,
        mx_call: &'static str,
    ) -> Result<f32, MxError> {
        match (self.request.is_nvfp4(), given) {
            (true, Some(t)) => {
                self.request.check_tensor_scale(t)?;
                Ok(t)
            }
            (false, None) => Ok(1.0),
            (true, None) => Err(MxBufferError::TensorScaleUse {
                request: self.request.to_string(),
                why: match nvfp4_call {
                    "quantize_nvfp4" => "NVFP4 needs the tensor's scale: call quantize_nvfp4",
                    _ => "NVFP4 needs the tensor's scale: call dequantize_nvfp4",
                },
            }
            .into()),
            (false, Some(_)) => Err(MxBufferError::TensorScaleUse {
                request: self.request.to_string(),
                why: match mx_call {
                    "quantize" => "an MX block has no tensor scale: call quantize",
                    _ => "an MX block has no tensor scale: call dequantize",
                },
            }
            .into()),
        }
    }

    /// Bytes of `blocks` blocks of values.
    fn value_bytes(&self, blocks: usize) -> usize {
        blocks * self.request.block_len() * self.request.value().bytes()
    }

    /// Bytes of `blocks` blocks of elements (a byte each, or half a byte packed).
    fn element_bytes(&self, blocks: usize) -> usize {
        self.request
            .element_bytes(blocks * self.request.block_len())
    }

    /// [`MxKernel::call_blocks`] on `blocks` whole blocks, split into contiguous parts across
    /// threads when the buffers are large (as conversion kernels split theirs,
    /// [`crate::jit::Jit::set_threads`]): each part reads and writes its own pieces of the
    /// buffers.
    fn call_in_parts(
        &self,
        inputs: [&[u8]; 2],
        outputs: [&mut [u8]; 2],
        blocks: usize,
        tensor_scale: f32,
    ) -> Result<(), MxError> {
        let bytes = inputs[0].len() + inputs[1].len();
        let threads = self._jit.threads_for(bytes).min(blocks);
        if threads <= 1 {
            return self.call_blocks(inputs, outputs, blocks, tensor_scale);
        }
        // Per block, the bytes of each buffer: [input 0, input 1], [output 0, output 1].
        let per = |s: usize| s / blocks;
        let (in_per, out_per) = (
            inputs.map(|s| per(s.len())),
            [per(outputs[0].len()), per(outputs[1].len())],
        );
        // About 8 parts per thread, handed out in turn.
        let part = blocks.div_ceil(8 * threads);
        let [a, b] = inputs;
        let [c, d] = outputs;
        fn pieces(s: &[u8], per_block: usize, part: usize, count: usize) -> Vec<&[u8]> {
            if per_block == 0 {
                vec![&[][..]; count]
            } else {
                s.chunks(part * per_block).collect()
            }
        }
        let count = blocks.div_ceil(part);
        let a_parts = pieces(a, in_per[0], part, count);
        let b_parts = pieces(b, in_per[1], part, count);
        let c_parts: Vec<&mut [u8]> = c.chunks_mut(part * out_per[0]).collect();
        let d_parts: Vec<&mut [u8]> = if out_per[1] == 0 {
            (0..count).map(|_| &mut [][..]).collect()
        } else {
            d.chunks_mut(part * out_per[1]).collect()
        };
        type Part<'a> = ([&'a [u8]; 2], [&'a mut [u8]; 2], usize);
        let parts: Vec<std::sync::Mutex<Option<Part>>> = a_parts
            .into_iter()
            .zip(b_parts)
            .zip(c_parts.into_iter().zip(d_parts))
            .enumerate()
            .map(|(k, ((a, b), (c, d)))| {
                let n = part.min(blocks - k * part);
                std::sync::Mutex::new(Some(([a, b], [c, d], n)))
            })
            .collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || -> Result<(), MxError> {
            while let Some(slot) =
                parts.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
            {
                let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some((ins, outs, n)) = taken {
                    self.call_blocks(ins, outs, n, tensor_scale)?;
                }
            }
            Ok(())
        };
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("MX kernel calls do not panic"))
                .fold(Ok(()), Result::and)
        })
    }

    /// Runs the kernel on `blocks` whole blocks. A quantisation reads the values `inputs[0]`
    /// and writes the elements `outputs[0]` and the scales `outputs[1]`; a dequantisation reads
    /// the elements `inputs[0]` and the scales `inputs[1]` and writes the values `outputs[0]`
    /// (the other slices empty). Every slice is checked to hold its `blocks` blocks.
    fn call_blocks(
        &self,
        inputs: [&[u8]; 2],
        outputs: [&mut [u8]; 2],
        blocks: usize,
        tensor_scale: f32,
    ) -> Result<(), MxError> {
        let quantize = self.request.is_quantize();
        let (values, elements) = (self.value_bytes(blocks), self.element_bytes(blocks));
        let (need_in, need_out) = if quantize {
            ([values, 0], [elements, blocks])
        } else {
            ([elements, blocks], [values, 0])
        };
        let short = inputs.iter().zip(need_in).any(|(s, n)| s.len() < n)
            || outputs.iter().zip(need_out).any(|(s, n)| s.len() < n);
        if short {
            return Err(MxError::Jit(JitError::Compile {
                request: self.request.to_string(),
                why: "internal error: an MX kernel call on short buffers".into(),
            }));
        }
        let [a, b] = inputs;
        let [c, d] = outputs;
        let a = a.as_ptr() as usize;
        let b = if b.is_empty() { a } else { b.as_ptr() as usize };
        let c = c.as_mut_ptr() as usize;
        let d = if d.is_empty() {
            c
        } else {
            d.as_mut_ptr() as usize
        };
        // NVFP4's kernel reads its tensor scale behind the pointer its buffers leave free:
        // `b` for a quantisation, `d` for a dequantisation.
        let t = tensor_scale;
        let t_at = std::ptr::from_ref(&t) as usize;
        let (b, d) = match (self.request.is_nvfp4(), quantize) {
            (true, true) => (t_at, d),
            (true, false) => (b, t_at),
            (false, _) => (b, d),
        };
        // SAFETY: `entry` is a function this kernel's Jit compiled from `build` for this
        // request, SystemV (a, b, c, d, blocks); it calls nothing and runs in the default
        // floating-point control. A quantisation reads `blocks` blocks of values at `a` and
        // writes `blocks` blocks of elements at `c` and `blocks` scales at `d`; a
        // dequantisation reads `blocks` blocks of elements at `a` and scales at `b` and writes
        // `blocks` blocks of values at `c`; the slices hold them (checked just now). An NVFP4
        // kernel also reads one f32 at `b` (quantisation) or `d` (dequantisation), set above to
        // `t`, which lives until this call returns; the pointers a kernel does not use are
        // never dereferenced. The outputs come from exclusive
        // borrows, so nothing it writes overlaps what it reads.
        unsafe { host::call_kernel(self.entry, [a, b, c, d, blocks], host::default_control()) };
        Ok(())
    }

    /// What an element buffer holds: the format's codes, or bytes of two packed FP4 codes.
    fn element_type(&self, elem: ScalarType) -> ScalarType {
        if self.request.packed() {
            ScalarType::UChar
        } else {
            elem
        }
    }

    fn check_type(
        &self,
        buffer: &'static str,
        got: ScalarType,
        expected: ScalarType,
    ) -> Result<(), MxError> {
        if got != expected {
            return Err(MxBufferError::ElementType {
                request: self.request.to_string(),
                buffer,
                got: got.name(),
                expected: expected.name(),
            }
            .into());
        }
        Ok(())
    }

    fn wrong_way(&self, called: &'static str, other: &'static str) -> MxError {
        MxBufferError::ElementType {
            request: self.request.to_string(),
            buffer: "kernel",
            got: called,
            expected: other,
        }
        .into()
    }
}

#[cfg(feature = "jit")]
impl Jit {
    /// Compiles an MX block kernel named in the spelling of [`crate::mx`]
    /// (`convert_mxfp8e4m3_rtp(float)`, `convert_half(mxfp4e2m1)`), cached in the JIT by
    /// request.
    ///
    /// ```
    /// use clconv::jit::{Fp8E4M3, Fp8E8M0, Jit};
    /// let k = Jit::new().unwrap().compile_blocks("convert_mxfp8e4m3_rtp(float)").unwrap();
    /// let mut values = [0.5f32; 32];
    /// values[7] = 1000.0;
    /// let (mut e, mut s) = ([Fp8E4M3(0); 32], [Fp8E8M0(0)]);
    /// k.quantize(&values, &mut e, &mut s).unwrap();
    /// // Rounded up: the scale is 4 (0x81), and 1000 / 4 = 250 rounds to 256 (0x78).
    /// assert_eq!((s[0].0, e[7].0), (0x81, 0x78));
    /// ```
    pub fn compile_blocks(&self, name: &str) -> Result<MxKernel, MxError> {
        let request = MxRequest::parse(name)?;
        Ok(self.compile_blocks_request(&request)?)
    }

    /// Compiles the kernel of a parsed MX request.
    ///
    /// ```
    /// use clconv::{jit::Jit, mx::MxRequest};
    /// let r = MxRequest::parse("convert_half(mxfp8e5m2)").unwrap();
    /// assert_eq!(Jit::new().unwrap().compile_blocks_request(&r).unwrap().request(), r);
    /// ```
    pub fn compile_blocks_request(&self, request: &MxRequest) -> Result<MxKernel, JitError> {
        let inner = &self.inner;
        if let Some(&entry) = jit::lock(&inner.mx_cache).get(request) {
            return Ok(self.mx_kernel(request, entry));
        }
        let compile_error = |why: String| JitError::Compile {
            request: request.to_string(),
            why,
        };
        let isa = &inner.isa;
        let func = catch_unwind(AssertUnwindSafe(|| {
            build(request, inner.features.clone(), isa.frontend_config())
        }))
        .map_err(|panic| compile_error(crate::kernel::panic_message(&*panic)))?
        .map_err(|e| no_kernel(request, e))?;
        let verify_ir = inner.verify_ir.load(std::sync::atomic::Ordering::Relaxed);
        let code = jit::compile_function(&**isa, func, verify_ir).map_err(compile_error)?;
        let mut memory = jit::lock(&inner.code);
        // Another thread may have compiled it meanwhile: keep the first.
        if let Some(&entry) = jit::lock(&inner.mx_cache).get(request) {
            return Ok(self.mx_kernel(request, entry));
        }
        let entry = memory.install(&[code.as_code()]).map_err(compile_error)?[0];
        jit::lock(&inner.mx_cache).insert(*request, entry);
        Ok(self.mx_kernel(request, entry))
    }

    fn mx_kernel(&self, request: &MxRequest, entry: usize) -> MxKernel {
        MxKernel {
            _jit: self.clone(),
            request: *request,
            entry,
        }
    }
}

#[cfg(feature = "jit")]
/// The Cranelift IR and machine code of an MX kernel for `isa`, without loading it.
///
/// ```
/// use clconv::{mx::MxRequest, mx_kernel};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let d = mx_kernel::disassemble(&*isa, &MxRequest::parse("convert_mxfp4e2m1(float)").unwrap()).unwrap();
/// assert!(d.clif.contains("smax"));
/// ```
pub fn disassemble(isa: &dyn TargetIsa, request: &MxRequest) -> Result<Disassembly, JitError> {
    let compile_error = |why: String| JitError::Compile {
        request: request.to_string(),
        why,
    };
    let features = IsaFeatures::of(isa).map_err(|e| compile_error(e.to_string()))?;
    let func =
        build(request, features, isa.frontend_config()).map_err(|e| no_kernel(request, e))?;
    jit::disassemble_function(isa, func).map_err(compile_error)
}

#[cfg(feature = "jit")]
/// A lowering's refusal (the target lacks what MX blocks need) as the JIT's error.
fn no_kernel(request: &MxRequest, e: crate::lower::LowerError) -> JitError {
    JitError::NoKernel {
        request: request.to_string(),
        why: e.to_string(),
    }
}
