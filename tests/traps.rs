//! The trapping form (WebAssembly's `trunc`, `Rules::TRAPPING`): which inputs trap, from the
//! reference (`reference::traps`, soft-float, from the WebAssembly words) and the spec's own
//! test suite (`test/core/conversions.wast`); the batch kernels stop at the first trapping
//! element with a typed error, having converted only the values before it; the builder API's
//! trap flag agrees with the reference lane by lane.
#![cfg(feature = "jit")]

use clconv::cranelift_codegen::ir::{types, InstBuilder, MemFlagsData};
use clconv::jit::{Jit, JitError};
use clconv::languages::Language;
use clconv::lower::{ElementConversion, Lowering};
use clconv::{reference, Conversion, Extensions, Request, Rounding};
use counted_loop::counted_loop;
use cranelift_module::Module;

#[path = "common/counted_loop.rs"]
mod counted_loop;
#[path = "common/define.rs"]
mod define;
#[path = "common/jit_module.rs"]
mod jit_module;

fn wasm(name: &str) -> Conversion {
    match Language::Wasm.parse(name).unwrap() {
        Request::Convert(c) => c,
        r => panic!("{r}"),
    }
}

/// `test/core/conversions.wast`: the traps and the values next to them.
#[test]
fn the_wasm_test_suite_cases() {
    let t32 = |name: &str, x: f32| reference::traps(&wasm(name), Rounding::Rte, x.to_bits().into());
    let t64 = |name: &str, x: f64| reference::traps(&wasm(name), Rounding::Rte, x.to_bits());
    assert!(t32("i32.trunc_f32_s", 2147483648.0)); // "integer overflow"
    assert!(!t32("i32.trunc_f32_s", -2147483648.0));
    assert!(t32("i32.trunc_f32_s", -2147483904.0));
    assert!(t32("i32.trunc_f32_s", f32::NAN)); // "invalid conversion to integer"
    assert!(t32("i32.trunc_f32_s", f32::INFINITY));
    assert!(!t32("i32.trunc_f32_u", -0.9)); // truncates to 0
    assert!(t32("i32.trunc_f32_u", -1.0));
    assert!(t32("i32.trunc_f32_u", 4294967296.0));
    assert!(!t32("i32.trunc_f32_u", 4294967040.0));
    assert!(!t64("i32.trunc_f64_u", -0.9));
    assert!(!t64("i32.trunc_f64_s", -2147483648.9));
    assert!(t64("i32.trunc_f64_s", -2147483649.0));
    assert!(!t64("i32.trunc_f64_s", 2147483647.9));
    assert!(t64("i32.trunc_f64_s", 2147483648.0));
    assert!(t64("i64.trunc_f64_s", 9223372036854775808.0));
    assert!(!t64("i64.trunc_f64_s", -9223372036854775808.0));
    assert!(t64("i64.trunc_f64_u", 18446744073709551616.0));
    assert!(!t64("i64.trunc_f64_u", 18446744073709549568.0));
    // The saturating forms never trap.
    assert!(!t32("i32.trunc_sat_f32_s", f32::NAN));
}

/// A batch stops at the first trapping element: the values before it are converted, the rest
/// of the destination is untouched, and the error names the element and its value.
#[test]
fn kernels_stop_at_the_first_trap() {
    let jit = Jit::new().unwrap();
    let kernel = jit.compile("wasm:i32.trunc_f32_s").unwrap();
    let src = [1.5f32, -2.5, 7.9, f32::NAN, 3.0, 4.0];
    let mut dst = [0x5a5a_5a5ai32; 6];
    let e = kernel.run(&src, &mut dst).unwrap_err();
    match &e {
        JitError::Trap { element, value, .. } => {
            assert_eq!((*element, value.as_str()), (3, "NaN"));
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("element 3"), "{e}");
    assert_eq!(dst, [1, -2, 7, 0x5a5a_5a5a, 0x5a5a_5a5a, 0x5a5a_5a5a]);
    // No trap: the whole buffer, the saturating result's bits.
    let ok = [1.5f32, -2147483648.0, 2147483520.0];
    let mut out = [0i32; 3];
    kernel.run(&ok, &mut out).unwrap();
    assert_eq!(out, [1, i32::MIN, 2147483520]);
    // A vector request: whole values before the one holding the trap.
    let k4 = jit.compile("convert_uint4_trap(float4)").unwrap();
    let src = [1.0f32, 2.0, 3.0, 4.0, 5.0, -1.0, 7.0, 8.0];
    let mut dst = [9u32; 8];
    let e = k4.run(&src, &mut dst).unwrap_err();
    assert!(matches!(e, JitError::Trap { element: 5, .. }), "{e:?}");
    assert_eq!(dst, [1, 2, 3, 4, 9, 9, 9, 9]);
}

/// Every half, bfloat16 and fp8 pattern into int and uchar: the kernel traps exactly where the
/// reference says, at the first such element (every pattern in one buffer, run again from past
/// each trap, so every trapping pattern is once the first).
#[test]
fn every_small_float_traps_where_the_reference_says() {
    let jit = Jit::with_options(
        clconv::jit::X64Flags::Host,
        Extensions::with_fp16(),
        Rounding::Rte,
    )
    .unwrap();
    let ext = Extensions::with_fp16();
    for name in [
        "convert_int_trap(half)",
        "convert_uchar_trap_rte(half)",
        "convert_short_trap_rtn(bfloat)",
        "convert_uchar_trap_rtp(bfloat)",
        "convert_char_trap(fp8e4m3)",
        "convert_uchar_trap_rtn(fp8e5m2)",
    ] {
        let Request::Convert(c) = Request::parse(name, ext).unwrap() else {
            unreachable!()
        };
        let kernel = jit.compile(name).unwrap();
        let (src_bytes, dst_bytes) = (c.src().elem.bytes(), c.dst().elem.bytes());
        let count = 1usize << c.src().elem.bits();
        let expected: Vec<bool> = (0..count as u64)
            .map(|bits| reference::traps(&c, Rounding::Rte, bits))
            .collect();
        let src: Vec<u8> = (0..count as u64)
            .flat_map(|bits| bits.to_le_bytes()[..src_bytes].to_vec())
            .collect();
        let mut dst = vec![0u8; count * dst_bytes];
        // Every pattern in one buffer: each run stops at the next trap, which must be the next
        // element the reference says traps; the run after it starts past it.
        let mut start = 0;
        while start < count {
            let got = kernel.run_bytes(
                clconv::Layout::Packed,
                &src[start * src_bytes..],
                &mut dst[start * dst_bytes..],
            );
            let next = expected[start..].iter().position(|&t| t).map(|i| start + i);
            match (got, next) {
                (Ok(()), None) => break,
                (Err(clconv::jit::JitError::Trap { element, .. }), Some(n)) => {
                    assert_eq!(start + element, n, "{name}: the trap is at {:#06x}", n);
                    start = n + 1;
                }
                (got, next) => panic!(
                    "{name} from {start:#06x}: the kernel gave {got:?}, the reference's next trap is {next:x?}"
                ),
            }
        }
        let traps = expected.iter().filter(|&&t| t).count();
        let ok = count - traps;
        let least = if src_bytes == 1 { 20 } else { 1000 };
        assert!(
            traps > least && ok > least,
            "{name}: {traps} trap, {ok} do not"
        );
    }
}

/// The builder API's trap flag, scalar and F32X4 / F64X2, against the reference on edges.
#[test]
fn the_builder_trap_flag_agrees_with_the_reference() {
    let mut module = jit_module::jit_module();
    let edges32: Vec<f32> = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.9,
        -1.0,
        -0.0,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        4294967040.0,
        4294967296.0,
        0.5,
        1e-40,
    ];
    let mut n = 0;
    for name in [
        "i32.trunc_f32_s",
        "i32.trunc_f32_u",
        "i64.trunc_f32_s",
        "i64.trunc_f32_u",
    ] {
        let c = wasm(name);
        let conv = ElementConversion::of(&c);
        for lanes in [1usize, 4] {
            let ty = if lanes == 1 { types::F32 } else { types::F32X4 };
            let id = define::define_function(
                &mut module,
                &format!("t{n}"),
                &[types::I64],
                &[types::I8],
                |b| {
                    let entry = b.create_block();
                    b.append_block_params_for_function_params(entry);
                    b.switch_to_block(entry);
                    let p = b.block_params(entry)[0];
                    let x = b.ins().load(ty, MemFlagsData::trusted(), p, 0);
                    let flag = Lowering::without_isa()
                        .trap_flag(b, conv, &[x])
                        .unwrap()
                        .unwrap();
                    b.ins().return_(&[flag]);
                    b.seal_all_blocks();
                },
            );
            module.finalize_definitions().unwrap();
            let code = module.get_finalized_function(id);
            // SAFETY: `code` is fn(*const f32) -> u8 as defined above, in the host's C calling
            // convention; it reads `lanes` floats from the 16-byte buffer below.
            let f =
                unsafe { std::mem::transmute::<*const u8, extern "C" fn(*const f32) -> u8>(code) };
            for (i, &x) in edges32.iter().enumerate() {
                // The value in lane `i % lanes`, zeros (which never trap) elsewhere.
                let mut buf = [0f32; 4];
                buf[i % lanes] = x;
                let want = reference::traps(&c, Rounding::Rte, x.to_bits().into());
                assert_eq!(f(buf.as_ptr()) != 0, want, "{name} on {x} in {lanes} lanes");
            }
            n += 1;
        }
    }
    // SAFETY: no function of the module is called after this.
    unsafe { module.free_memory() };
    // Rules that never trap have no flag.
    let mut func = clconv::cranelift_codegen::ir::Function::new();
    let mut fctx = clconv::cranelift_frontend::FunctionBuilderContext::new();
    let mut b = clconv::cranelift_frontend::FunctionBuilder::new(&mut func, &mut fctx);
    let block = b.create_block();
    b.switch_to_block(block);
    let x = b.append_block_param(block, types::F32);
    let sat = ElementConversion::of(&wasm("i32.trunc_sat_f32_s"));
    assert!(Lowering::without_isa()
        .trap_flag(&mut b, sat, &[x])
        .unwrap()
        .is_none());
}

/// The builder API's trap flag for the four WebAssembly `trunc`s from `f32`, on every one of
/// the 2^32 floats, against the spec's condition written here on the host's float compares
/// (numerics, `trunc_s`/`trunc_u`: NaN and infinities trap; otherwise the truncation must be
/// in the destination's range: [-2^(N-1), 2^(N-1)) signed, (-1, 2^N) unsigned before
/// truncation). A JIT-compiled loop computes the flags of a chunk (the lowering `for_isa`
/// gives a compiler), the test compares them; two threads.
#[test]
fn the_builder_trap_flag_on_every_float() {
    // (name, the lowest value that does not trap, the first value above the range): signed,
    // -2^(N-1) itself; unsigned, the float just above -1.0, which truncates to 0. A NaN fails
    // both compares.
    let above_minus_one = f32::from_bits((-1.0f32).to_bits() - 1);
    let cases: [(&str, f32, f32); 4] = [
        ("i32.trunc_f32_s", -2147483648.0, 2147483648.0),
        ("i32.trunc_f32_u", above_minus_one, 4294967296.0),
        (
            "i64.trunc_f32_s",
            -9223372036854775808.0,
            9223372036854775808.0,
        ),
        ("i64.trunc_f32_u", above_minus_one, 18446744073709551616.0),
    ];
    let mut module = jit_module::jit_module();
    let lowering = Lowering::for_isa(module.isa()).unwrap();
    let mut loops = Vec::new();
    for (n, (name, _, _)) in cases.iter().enumerate() {
        let conv = ElementConversion::of(&wasm(name));
        // fn(first: u64, out: *mut u8, count: i64): out[i] = flag(f32::from_bits(first + i)).
        let id = define::define_function(
            &mut module,
            &format!("flags{n}"),
            &[types::I64, types::I64, types::I64],
            &[],
            |b| {
                counted_loop(b, |b, params, i| {
                    let (first, out) = (params[0], params[1]);
                    let sum = b.ins().iadd(first, i);
                    let bits = b.ins().ireduce(types::I32, sum);
                    let x = b.ins().bitcast(types::F32, MemFlagsData::new(), bits);
                    let flag = lowering.trap_flag(b, conv, &[x]).unwrap().unwrap();
                    let at = b.ins().iadd(out, i);
                    b.ins().store(MemFlagsData::trusted(), flag, at, 0);
                });
            },
        );
        loops.push(id);
    }
    module.finalize_definitions().unwrap();
    const CHUNK: u64 = 1 << 20;
    for (&(name, lowest, above), id) in cases.iter().zip(loops) {
        let code = module.get_finalized_function(id);
        // SAFETY: `code` is the loop defined above, fn(u64, *mut u8, i64) in the host's C
        // calling convention; it writes `count` bytes at `out`, which each call below owns.
        let flags =
            unsafe { std::mem::transmute::<*const u8, extern "C" fn(u64, *mut u8, i64)>(code) };
        let trapped: u64 = std::thread::scope(|s| {
            let halves: Vec<_> = (0..2u64)
                .map(|half| {
                    s.spawn(move || {
                        let mut out = vec![0u8; CHUNK as usize];
                        let mut trapped = 0u64;
                        for chunk in (half * (1 << 31) / CHUNK..(half + 1) * (1 << 31) / CHUNK)
                            .map(|c| c * CHUNK)
                        {
                            flags(chunk, out.as_mut_ptr(), CHUNK as i64);
                            for (k, &flag) in out.iter().enumerate() {
                                let x = f32::from_bits(chunk as u32 + k as u32);
                                let want = !(x >= lowest && x < above);
                                trapped += u64::from(want);
                                assert_eq!(
                                    flag != 0,
                                    want,
                                    "{name} on {x:e} ({:#x}): flag {flag}",
                                    x.to_bits()
                                );
                            }
                        }
                        trapped
                    })
                })
                .collect();
            halves.into_iter().map(|h| h.join().unwrap()).sum()
        });
        // About half of all floats are beyond every range, NaN or infinite.
        assert!(
            trapped > 1 << 30 && trapped < 3 << 30,
            "{name}: {trapped} trap"
        );
    }
    // SAFETY: no function of the module is called after this.
    unsafe { module.free_memory() };
}

/// AOT entry points cannot report a trap yet: adding one is a typed error, not saturating code.
#[cfg(feature = "aot")]
#[test]
fn aot_refuses_a_trapping_request() {
    let mut object = clconv::aot::ObjectBuilder::new(clconv::target::Target::Host).unwrap();
    let r = Request::Convert(wasm("i32.trunc_f32_s"));
    let e = object.add(&r, clconv::kernel::Tier::Optimised).unwrap_err();
    assert!(e.to_string().contains("cannot report a trap"), "{e}");
}
