//! Batch kernels: a Cranelift function `fn(src: *const u8, dst: *mut u8, vectors: i64)` that
//! applies one request to every vector of a buffer.
//!
//! Conversions loop over the elements (every lane converts independently), calling the same
//! per-element sequence the builder API emits; a 3-component vector in the aligned layout skips
//! the source's padding element and writes zero into the destination's. Reinterpretations are
//! byte copies: the operand's stored bytes (padding included in the aligned layout, zero where a
//! packed `x3` stores nothing) go to the result, whose aligned padding is written as zero.
//!
//! Every load and store is unaligned-safe (no `aligned` flag), so any byte buffer works.

use crate::buffer::bytes_per_vector;
use crate::lower::{element_type, emit_element, int_const};
use crate::request::{Conversion, Reinterpretation, Request};
use crate::types::{Layout, Rounding, Width};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Endianness, Function, InstBuilder, MemFlagsData, Signature, Type,
    UserFuncName, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

/// The signature every batch kernel has: `(src, dst, vectors)`, pointers as I64.
pub fn signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    for _ in 0..3 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

/// Builds the batch kernel of `request` over buffers of `layout`, under the static rounding
/// mode `static_mode`, as a Cranelift function named `user(0, index)`.
///
/// ```
/// use clconv::{kernel, Extensions, Layout, Request, Rounding};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = Request::parse("convert_int4_sat_rte(float4)", Extensions::default()).unwrap();
/// let f = kernel::build(&r, Layout::Packed, Rounding::Rte, isa.frontend_config(), 0);
/// assert!(f.display().to_string().contains("fcvt_to_sint_sat"));
/// ```
pub fn build(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    frontend: TargetFrontendConfig,
    index: u32,
) -> Function {
    let sig = signature(frontend.default_call_conv);
    let mut func = Function::with_name_signature(UserFuncName::user(0, index), sig);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (src, dst, vectors) = (params[0], params[1], params[2]);
    match request {
        Request::Convert(c) => build_convert(&mut b, c, layout, static_mode, src, dst, vectors),
        Request::Reinterpret(r) => build_reinterpret(&mut b, r, layout, src, dst, vectors),
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
    func
}

fn flags() -> MemFlagsData {
    MemFlagsData::new()
        .with_endianness(Endianness::Little)
        .with_notrap()
}

/// Emits `for i in 0..count { body(i) }` with the body given the loop index.
fn counted_loop(
    b: &mut FunctionBuilder,
    count: Value,
    body: &mut dyn FnMut(&mut FunctionBuilder, Value),
) {
    let head = b.create_block();
    let body_block = b.create_block();
    let exit = b.create_block();
    b.append_block_param(head, types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().jump(head, &[zero.into()]);

    b.switch_to_block(head);
    let i = b.block_params(head)[0];
    let more = b.ins().icmp(IntCC::SignedLessThan, i, count);
    b.ins().brif(more, body_block, &[], exit, &[]);

    b.switch_to_block(body_block);
    body(b, i);
    let next = b.ins().iadd_imm_u(i, 1);
    b.ins().jump(head, &[next.into()]);

    b.switch_to_block(exit);
}

/// `base + index * scale + offset` as an address.
fn address(
    b: &mut FunctionBuilder,
    base: Value,
    index: Value,
    scale: usize,
    offset: usize,
) -> Value {
    let scaled = b.ins().imul_imm_u(index, scale as i64);
    let at = b.ins().iadd(base, scaled);
    if offset == 0 {
        at
    } else {
        b.ins().iadd_imm_u(at, offset as i64)
    }
}

fn build_convert(
    b: &mut FunctionBuilder,
    conv: &Conversion,
    layout: Layout,
    static_mode: Rounding,
    src: Value,
    dst: Value,
    vectors: Value,
) {
    let src_ty = element_type(conv.src().elem);
    let dst_ty = element_type(conv.dst().elem);
    let (sb, db) = (conv.src().elem.bytes(), conv.dst().elem.bytes());
    let lanes = conv.src().lanes();
    let convert_at = |b: &mut FunctionBuilder, index: Value, lane: usize, stride: usize| {
        let from = address(b, src, index, sb * stride, sb * lane);
        let x = b.ins().load(src_ty, flags(), from, 0);
        let y = emit_element(b, conv, static_mode, x);
        let to = address(b, dst, index, db * stride, db * lane);
        b.ins().store(flags(), y, to, 0);
    };
    if layout.stride(conv.src().width) == lanes {
        // Dense: every element of the buffer is a lane.
        let count = b.ins().imul_imm_u(vectors, lanes as i64);
        counted_loop(b, count, &mut |b, i| convert_at(b, i, 0, 1));
    } else {
        // Aligned 3-component vectors: three lanes and a zeroed padding element per vector.
        debug_assert_eq!(conv.src().width, Width::W3);
        counted_loop(b, vectors, &mut |b, v| {
            for lane in 0..3 {
                convert_at(b, v, lane, 4);
            }
            let zero = zero_of(b, dst_ty);
            let to = address(b, dst, v, db * 4, db * 3);
            b.ins().store(flags(), zero, to, 0);
        });
    }
}

fn zero_of(b: &mut FunctionBuilder, ty: Type) -> Value {
    crate::lower::zero_scalar(b, ty)
}

fn build_reinterpret(
    b: &mut FunctionBuilder,
    r: &Reinterpretation,
    layout: Layout,
    src: Value,
    dst: Value,
    vectors: Value,
) {
    let src_stride = bytes_per_vector(r.src(), layout);
    let dst_stride = bytes_per_vector(r.dst(), layout);
    let dst_meaningful = r.dst().lanes() * r.dst().elem.bytes();
    let copy = src_stride.min(dst_meaningful);
    let zeros = dst_stride - copy;
    if zeros == 0 && copy == src_stride && copy == dst_stride {
        // Same bytes in the same places: one flat copy, 16 bytes at a time, then the rest.
        let total = b.ins().imul_imm_u(vectors, copy as i64);
        let chunks = b.ins().ushr_imm_u(total, 4);
        counted_loop(b, chunks, &mut |b, i| {
            let from = address(b, src, i, 16, 0);
            let v = b.ins().load(types::I8X16, flags(), from, 0);
            let to = address(b, dst, i, 16, 0);
            b.ins().store(flags(), v, to, 0);
        });
        let done = b.ins().band_imm_u(total, !15i64);
        let rest = b.ins().band_imm_u(total, 15);
        let src_rest = b.ins().iadd(src, done);
        let dst_rest = b.ins().iadd(dst, done);
        counted_loop(b, rest, &mut |b, i| {
            let from = b.ins().iadd(src_rest, i);
            let v = b.ins().load(types::I8, flags(), from, 0);
            let to = b.ins().iadd(dst_rest, i);
            b.ins().store(flags(), v, to, 0);
        });
        return;
    }
    counted_loop(b, vectors, &mut |b, v| {
        let from = address(b, src, v, src_stride, 0);
        let to = address(b, dst, v, dst_stride, 0);
        let mut offset = 0;
        for (size, ty) in chunk_sizes(copy) {
            let x = b.ins().load(ty, flags(), from, offset as i32);
            b.ins().store(flags(), x, to, offset as i32);
            offset += size;
        }
        for (size, ty) in chunk_sizes(zeros) {
            let zero = if ty == types::I8X16 {
                let z = int_const(b, types::I8, 0);
                b.ins().splat(types::I8X16, z)
            } else {
                int_const(b, ty, 0)
            };
            b.ins().store(flags(), zero, to, offset as i32);
            offset += size;
        }
    });
}

/// Splits `bytes` into load/store sizes, largest first.
fn chunk_sizes(mut bytes: usize) -> Vec<(usize, Type)> {
    let mut out = Vec::new();
    for (size, ty) in [
        (16, types::I8X16),
        (8, types::I64),
        (4, types::I32),
        (2, types::I16),
        (1, types::I8),
    ] {
        while bytes >= size {
            out.push((size, ty));
            bytes -= size;
        }
    }
    out
}
