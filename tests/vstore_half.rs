//! `vstore_half[_mode]`, `vstore_halfn`, `vstorea_halfn`, `vload_half`, `vload_halfn` from the
//! builder API (`clconv::lower::Lowering`), JIT-compiled in functions of the test's own and
//! checked bit for bit against the reference's `convert_half_<mode>(float|double)` and
//! `convert_float(half)`: every half pattern for the loads; for the stores every mode, the static
//! mode's default, float and double sources, widths 1, 2, 3, 4, 8, 16, on special values, every
//! half's neighbourhood (the exact half, ±1 ulp of the source around it, and the midpoints), and
//! random bit patterns.
#![cfg(feature = "jit")]

use clconv::jit::{host_isa, X64Flags};
use clconv::lower::{LowerError, Lowering};
use clconv::{reference, Conversion, Extensions, Rounding, ScalarType, VectorType, Width};
use counted_loop::counted_loop;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::default_libcall_names;

#[path = "common/counted_loop.rs"]
mod counted_loop;

#[path = "common/define.rs"]
mod define;
use define::define_function;

type StoreFn = extern "C" fn(*const u8, *mut u8, i64);

/// Compiles `fn(src, dst, n) { for i in 0..n { store(src vector i, i, dst) } }` where `store`
/// is `vstore_halfn` (or `vstorea_halfn`) of `src` type under `lowering` with `mode`.
struct Store {
    module: Option<JITModule>,
    f: StoreFn,
}

impl Store {
    fn new(lowering: &Lowering, src: VectorType, mode: Option<Rounding>, aligned: bool) -> Store {
        let isa = host_isa(X64Flags::Host).unwrap();
        let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
        let id = define_function(&mut module, "store", &[types::I64; 3], &[], |b| {
            counted_loop(b, |b, p, i| {
                let (part_ty, count) = clconv::lower::vector_parts(src);
                let eb = src.elem.bytes() as i64;
                // Source vectors are stored with a stride of 4 elements for n = 3, n otherwise.
                let stride = src.width.storage_lanes() as i64 * eb;
                let at = b.ins().imul_imm_u(i, stride);
                let at = b.ins().iadd(p[0], at);
                let values: Vec<Value> = if src.width == Width::W1 {
                    let ty = clconv::lower::element_type(src.elem);
                    vec![b.ins().load(ty, MemFlagsData::new(), at, 0)]
                } else {
                    (0..count)
                        .map(|k| {
                            b.ins()
                                .load(part_ty, MemFlagsData::new(), at, 16 * k as i32)
                        })
                        .collect()
                };
                lowering
                    .vstore_halfn(b, src, mode, &values, p[1], i, aligned)
                    .unwrap();
            })
        });
        module.finalize_definitions().unwrap();
        // SAFETY: the function was compiled above with the signature (i64, i64, i64) -> ()
        // (SystemV), which StoreFn matches; the module lives as long as this Store.
        let f: StoreFn = unsafe { std::mem::transmute(module.get_finalized_function(id)) };
        Store {
            module: Some(module),
            f,
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: `f` is not running and is never called after the Store is dropped.
            unsafe { module.free_memory() };
        }
    }
}

/// Source bit patterns that exercise every rounding decision of float/double -> half.
fn inputs(src: ScalarType) -> Vec<u64> {
    let mut out = Vec::new();
    let half_to = |h: u16| -> u64 {
        let c = Conversion::new(
            VectorType::scalar(ScalarType::Half),
            VectorType::scalar(src),
            false,
            None,
            Extensions::with_fp16(),
        )
        .unwrap();
        reference::convert_element(&c, Rounding::Rte, h as u64).bits
    };
    for h in 0..=u16::MAX {
        let x = half_to(h);
        // The half itself, its source neighbours, and (below) the midpoint to the next half.
        out.extend([x, x.wrapping_add(1), x.wrapping_sub(1)]);
        if h & 0x7fff < 0x7c00 {
            let next = half_to(h + 1);
            // Same sign: the midpoint of the bit patterns is the value halfway (or next to it).
            let mid = x / 2 + next / 2 + (x & next & 1);
            out.extend([mid, mid + 1, mid.wrapping_sub(1)]);
        }
    }
    let mut s = 0x1234_5678_9abc_def0u64;
    for _ in 0..100_000 {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        let r = s.wrapping_mul(0x2545_f491_4f6c_dd1d);
        out.push(if src == ScalarType::Float { r >> 32 } else { r });
    }
    out
}

fn expected(src: ScalarType, mode: Rounding, x: u64) -> u16 {
    let c = Conversion::new(
        VectorType::scalar(src),
        VectorType::scalar(ScalarType::Half),
        false,
        Some(mode),
        Extensions::with_fp16(),
    )
    .unwrap();
    reference::convert_element(&c, Rounding::Rte, x).bits as u16
}

/// Stores every input with `vstore_halfn` of `src` and compares with the reference.
fn check_store(lowering: &Lowering, src: VectorType, mode: Option<Rounding>, aligned: bool) {
    let effective = mode.unwrap_or(lowering.static_mode());
    let store = Store::new(lowering, src, mode, aligned);
    let xs = inputs(src.elem);
    let eb = src.elem.bytes();
    let lanes = src.lanes();
    let storage = src.width.storage_lanes();
    let vectors = xs.len().div_ceil(lanes);
    let mut bytes = vec![0u8; vectors * storage * eb];
    for v in 0..vectors {
        for k in 0..lanes {
            let x = xs[(v * lanes + k) % xs.len()];
            let at = (v * storage + k) * eb;
            bytes[at..at + eb].copy_from_slice(&x.to_le_bytes()[..eb]);
        }
    }
    let stride = if aligned && src.width == Width::W3 {
        4
    } else {
        lanes
    };
    let mut out = vec![0xabu8; vectors * stride * 2];
    (store.f)(bytes.as_ptr(), out.as_mut_ptr(), vectors as i64);
    let mut bad = Vec::new();
    for v in 0..vectors {
        for k in 0..stride {
            let at = (v * stride + k) * 2;
            let got = u16::from_le_bytes([out[at], out[at + 1]]);
            if k >= lanes {
                // vstorea_half3 leaves the fourth slot alone.
                if got != 0xabab {
                    bad.push(format!("vector {v}: slot {k} was written"));
                }
                continue;
            }
            let x = xs[(v * lanes + k) % xs.len()];
            let want = expected(src.elem, effective, x);
            if got != want {
                bad.push(format!("{x:#x}: want {want:#06x}, got {got:#06x}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "vstore{}_half{} {mode:?} ({src}, static {}): {} mismatches, e.g.\n{}",
        if aligned { "a" } else { "" },
        lanes,
        lowering.static_mode(),
        bad.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

#[test]
fn vstore_half_every_mode_float_and_double() {
    for elem in [ScalarType::Float, ScalarType::Double] {
        for mode in Rounding::ALL {
            check_store(
                &Lowering::without_isa(),
                VectorType::scalar(elem),
                Some(mode),
                false,
            );
        }
    }
}

#[test]
fn vstore_half_without_a_mode_follows_the_static_mode() {
    for elem in [ScalarType::Float, ScalarType::Double] {
        for mode in Rounding::ALL {
            let lowering = Lowering::without_isa().with_static_mode(mode);
            check_store(&lowering, VectorType::scalar(elem), None, false);
        }
    }
}

#[test]
fn vstore_halfn_and_vstorea_halfn() {
    for elem in [ScalarType::Float, ScalarType::Double] {
        for width in [Width::W2, Width::W3, Width::W4, Width::W8, Width::W16] {
            let src = VectorType::new(elem, width);
            check_store(&Lowering::without_isa(), src, Some(Rounding::Rtz), false);
            check_store(
                &Lowering::without_isa().with_static_mode(Rounding::Rtn),
                src,
                None,
                true,
            );
        }
    }
}

#[test]
fn vload_half_every_half() {
    let isa = host_isa(X64Flags::Host).unwrap();
    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let mut ids = Vec::new();
    for (i, width) in [Width::W1, Width::W3, Width::W4, Width::W8, Width::W16]
        .into_iter()
        .enumerate()
    {
        // fn(src: *const half, dst: *mut float, n) { dst[i] = vload_halfn(i, src) }
        let name = format!("load{i}");
        let id = define_function(&mut module, &name, &[types::I64; 3], &[], |b| {
            counted_loop(b, |b, p, v| {
                let lanes = width.lanes() as i64;
                let out = b.ins().imul_imm_u(v, 4 * lanes);
                let out = b.ins().iadd(p[1], out);
                let lowering = Lowering::without_isa();
                if width == Width::W1 {
                    let x = lowering.vload_half(b, p[0], v).unwrap();
                    b.ins().store(MemFlagsData::new(), x, out, 0);
                } else {
                    let parts = lowering.vload_halfn(b, width, p[0], v).unwrap();
                    for k in 0..lanes as usize {
                        let x = b.ins().extractlane(parts[k / 4], (k % 4) as u8);
                        b.ins().store(MemFlagsData::new(), x, out, 4 * k as i32);
                    }
                }
            })
        });
        ids.push((width, id));
    }
    module.finalize_definitions().unwrap();
    let c = Conversion::new(
        VectorType::scalar(ScalarType::Half),
        VectorType::scalar(ScalarType::Float),
        false,
        None,
        Extensions::with_fp16(),
    )
    .unwrap();
    let halves: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
    for (width, id) in ids {
        let lanes = width.lanes();
        let n = 65536 / lanes;
        let mut out = vec![0u8; n * lanes * 4];
        // SAFETY: compiled above as fn(i64, i64, i64) (SystemV); it reads n * lanes halves and
        // writes n * lanes floats, which both buffers hold.
        let f: StoreFn = unsafe { std::mem::transmute(module.get_finalized_function(id)) };
        f(halves.as_ptr(), out.as_mut_ptr(), n as i64);
        for k in 0..n * lanes {
            let got = u32::from_le_bytes(out[4 * k..4 * k + 4].try_into().unwrap());
            let want = reference::convert_element(&c, Rounding::Rte, k as u64).bits as u32;
            assert_eq!(got, want, "vload_half{} of {k:#06x}", lanes);
        }
    }
    // SAFETY: none of the module's functions is running or called again.
    unsafe { module.free_memory() };
}

#[test]
fn vstore_half_operand_errors() {
    let mut func = cranelift_codegen::ir::Function::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.switch_to_block(entry);
    let f = b.ins().f32const(1.0);
    let d = b.ins().f64const(1.0);
    let p = b.ins().iconst(types::I64, 0);
    let v4 = b.ins().splat(types::F32X4, f);
    let l = Lowering::without_isa();
    let float = ScalarType::Float;
    let float4 = VectorType::new(float, Width::W4);
    let float8 = VectorType::new(float, Width::W8);
    assert!(matches!(
        l.vstore_half(&mut b, float, None, d, p, p),
        Err(LowerError::ValueType { .. })
    ));
    assert!(matches!(
        l.vstore_half(&mut b, ScalarType::Int, None, p, p, p),
        Err(LowerError::ValueType { .. })
    ));
    assert!(matches!(
        l.vstore_half(&mut b, float, None, f, f, p),
        Err(LowerError::ValueType { .. })
    ));
    assert!(matches!(
        l.vstore_halfn(&mut b, float8, None, &[v4], p, p, false),
        Err(LowerError::PartCount { .. })
    ));
    assert!(matches!(
        l.vload_half(&mut b, f, p),
        Err(LowerError::ValueType { .. })
    ));
    assert!(l
        .vstore_halfn(&mut b, float4, None, &[v4], p, p, false)
        .is_ok());
    assert!(l
        .vstore_half(&mut b, float, Some(Rounding::Rtp), f, p, p)
        .is_ok());
}
