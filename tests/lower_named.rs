//! `Lowering::lower_named` and `lower_request`, the one-call builder API, on both operand
//! forms: one scalar per component and the 128-bit vector parts. Every conversion of width 3
//! and every reinterpretation is lowered into a function of our own, compiled with
//! cranelift-jit, run on special and random bits, and compared bit for bit with the reference
//! interpreter; the errors are typed and say what was wrong.

use clconv::cranelift_codegen::ir::{types, Value};
use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use clconv::lower::{element_type, LowerError, Lowering};
use clconv::{reference, Extensions, Layout, Request, RequestError, Width};
use cranelift_jit::JITModule;

mod common;
use common::{jit_module, Form};

/// How the operand and result travel.
/// Compiles `fn(src, dst)` that loads one value of `request`'s source in `form`, lowers
/// `name` on it with one `lower_named` call, and stores the result; returns its address.
fn compile(
    module: &mut JITModule,
    n: usize,
    name: &str,
    request: &Request,
    form: Form,
) -> *const u8 {
    common::compile(module, n, name, request, form, |b, args| {
        let lowering = Lowering::without_isa().with_extensions(Extensions::with_fp16());
        let out = lowering.lower_named(b, name, args).unwrap();
        if let Form::Components = form {
            for &v in &out {
                assert_eq!(
                    b.func.dfg.value_type(v),
                    element_type(request.dst().elem),
                    "{name}"
                );
            }
        }
        out
    })
}

/// Special bit patterns of an element of `bytes` bytes, then pseudo-random ones.
fn input_bits(bytes: usize, count: usize, seed: u64) -> Vec<u64> {
    let specials: &[u64] = match bytes {
        2 => &[
            0, 0x8000, 0x3c00, 0x3800, 0x3e00, 0x7c00, 0xfc00, 0x7e01, 0xfe00, 0x0001, 0x7bff,
            0x00ff, 0x0100, 0x7fff, 0xffff,
        ],
        4 => &[
            0,
            0x8000_0000,
            0x3f00_0000,
            0x3fc0_0000,
            0x437e_8000,
            0x437e_999a,
            0x4e8f_0d18,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0001,
            0xffa0_0000,
            1,
            0x7f7f_ffff,
            0xcf00_0000,
            0x4f00_0000,
            0x7fff_ffff,
            0xffff_ffff,
            255,
            256,
        ],
        8 => &[
            0,
            1 << 63,
            0x3fe0_0000_0000_0000,
            0x7ff0_0000_0000_0000,
            0xfff8_0000_0000_0001,
            0x7ff4_0000_0000_0000,
            1,
            0x7fef_ffff_ffff_ffff,
            0x43e0_0000_0000_0000,
            0xc3e0_0000_0000_0000,
            u64::MAX,
            i64::MAX as u64,
            0x0020_0000_0000_0001,
        ],
        _ => &[0, 1, 0x7f, 0x80, 0xff, 0x40],
    };
    let mut x = seed | 1;
    let mut out = specials.to_vec();
    while out.len() < count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x);
    }
    out.iter()
        .map(|b| {
            if bytes == 8 {
                *b
            } else {
                b & ((1u64 << (8 * bytes)) - 1)
            }
        })
        .collect()
}

/// Runs every value of `bits` through `code` and the reference; panics on the first mismatch.
fn check(name: &str, request: &Request, code: *const u8, form: Form) {
    // SAFETY: `code` was compiled by `compile` as (I64, I64) -> () in the host's default
    // calling convention (extern "C"); it reads one source value and writes one result, both
    // within the 256-byte buffers below (the largest value, in parts, is 128 bytes).
    let f =
        unsafe { std::mem::transmute::<*const u8, unsafe extern "C" fn(*const u8, *mut u8)>(code) };
    let (s, d) = (request.src(), request.dst());
    let (se, de) = (s.elem.bytes(), d.elem.bytes());
    let n = s.lanes();
    let all = input_bits(se, 64 * n, n as u64 * 0x9e37_79b9 + se as u64);
    for value in all.chunks_exact(n) {
        let mut src = [0u8; 256];
        for (i, bits) in value.iter().enumerate() {
            src[i * se..(i + 1) * se].copy_from_slice(&bits.to_le_bytes()[..se]);
        }
        let packed = Layout::Packed;
        let mut expected = vec![0u8; d.lanes() * de];
        reference::evaluate(request, packed, &src[..n * se], &mut expected).unwrap();
        let mut got = [0u8; 256];
        // SAFETY: see above; `src` and `got` are live, distinct, 256 bytes each.
        unsafe { f(src.as_ptr(), got.as_mut_ptr()) };
        // In parts form a 3-component value has a padding lane: compare the components.
        assert_eq!(
            &got[..expected.len()],
            &expected[..],
            "{name} ({form:?}) on {:x?}",
            value
        );
    }
}

#[test]
fn every_width_3_conversion_and_every_reinterpretation_in_both_forms() {
    let requests: Vec<Request> = Request::all(Extensions::with_fp16())
        .into_iter()
        .filter(|r| matches!(r, Request::Reinterpret(_)) || r.src().width == Width::W3)
        .collect();
    let mut module = jit_module();
    let mut n = 0;
    for request in &requests {
        for form in [Form::Components, Form::Parts] {
            // The mangled spelling for half of them: lower_named takes every spelling.
            let name = if n % 2 == 0 {
                request.to_string()
            } else {
                request.mangled()
            };
            let code = compile(&mut module, n, &name, request, form);
            check(&name, request, code, form);
            n += 1;
        }
    }
    assert_eq!(n, 2 * requests.len());
    assert!(requests.len() > 1700, "{}", requests.len());
    // SAFETY: no function of the module is called after this.
    unsafe { module.free_memory() };
}

/// Builds a throwaway function and returns what `lower_named` says about `name` on `args` of
/// the given types.
fn error_of(name: &str, arg_types: &[types::Type], lowering: &Lowering) -> LowerError {
    let mut func = clconv::cranelift_codegen::ir::Function::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let block = b.create_block();
    b.switch_to_block(block);
    let args: Vec<Value> = arg_types
        .iter()
        .map(|&t| b.append_block_param(block, t))
        .collect();
    lowering.lower_named(&mut b, name, &args).unwrap_err()
}

#[test]
fn bad_names_and_values_are_typed_errors_that_say_what_to_fix() {
    let plain = Lowering::without_isa();
    // The parser's errors, unchanged.
    assert!(matches!(
        error_of("convert_float_sat(int)", &[types::I32], &plain),
        LowerError::Name(RequestError::SatOnFloat { .. })
    ));
    let e = error_of("convert_float(half)", &[types::I16], &plain);
    assert!(
        matches!(e, LowerError::Name(RequestError::HalfWithoutFp16 { .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("fp16"), "{e}");
    assert!(matches!(
        error_of("convert_frob(int)", &[types::I32], &plain),
        LowerError::Name(_)
    ));
    // The wrong number of components, the wrong component type, the wrong part type.
    let e = error_of("convert_int4(float4)", &[types::F32; 3], &plain);
    assert!(
        matches!(
            e,
            LowerError::ComponentCount {
                expected: 4,
                got: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("4 scalar component"), "{e}");
    let e = error_of("convert_int2(float2)", &[types::F32, types::F64], &plain);
    assert!(matches!(e, LowerError::ValueType { .. }), "{e:?}");
    assert!(e.to_string().contains("component 1"), "{e}");
    let e = error_of("convert_int8(float8)", &[types::F32X4], &plain);
    assert!(
        matches!(
            e,
            LowerError::LaneCount {
                expected: 8,
                lanes: 4,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("convert_int4(float4)"), "{e}");
    let e = error_of("convert_int8(float8)", &[types::F32X4; 3], &plain);
    assert!(
        matches!(e, LowerError::LaneCount { lanes: 12, .. }),
        "{e:?}"
    );
    // A whole vec4f handed to a scalar conversion is refused, naming the four-lane request,
    // instead of converting lane 0 and zeroing the rest.
    let e = error_of("convert_int_sat(float)", &[types::F32X4], &plain);
    assert!(
        matches!(
            e,
            LowerError::LaneCount {
                expected: 1,
                lanes: 4,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("convert_int4_sat(float4)"), "{e}");
    assert!(e.to_string().contains("extractlane"), "{e}");
    // Named in a language's spelling, the error is said in it: the caller's name, and the
    // request for the operand's lanes as that language writes it.
    let e = error_of("wgsl:i32(f32)", &[types::F32X4], &plain);
    assert!(matches!(e, LowerError::LaneCount { lanes: 4, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.starts_with("wgsl:i32(f32) converts 1"), "{msg}");
    assert!(msg.contains("ask for wgsl:vec4<i32>(vec4<f32>)"), "{msg}");
    assert!(!msg.contains("convert_int4"), "{msg}");
    // The other shape errors name the request as the caller wrote it, too.
    let e = error_of("wgsl:vec4<i32>(vec4<f32>)", &[types::F32; 3], &plain);
    assert!(
        matches!(e, LowerError::ComponentCount { got: 3, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("wgsl:vec4<i32>(vec4<f32>)"), "{e}");
    let e = error_of("hlsl:int(float)", &[types::F64], &plain);
    assert!(matches!(e, LowerError::ValueType { .. }), "{e:?}");
    assert!(e.to_string().contains("hlsl:int(float)"), "{e}");
    assert!(!e.to_string().contains("convert_int"), "{e}");
    // A float2 in the low lanes of an F32X4 is the explicit convert_vector convention.
    let e = error_of("convert_int2(float2)", &[types::F32X4], &plain);
    assert!(e.to_string().contains("Lowering::convert_vector"), "{e}");
    // Two parts where one F32X2 is the value.
    let e = error_of("convert_int2(float2)", &[types::F32, types::F32X2], &plain);
    assert!(matches!(e, LowerError::ValueType { .. }), "{e:?}");
    let e = error_of("as_int4(float4)", &[types::I32X4], &plain);
    assert!(matches!(e, LowerError::ValueType { .. }), "{e:?}");
    let e = error_of("convert_int(float)", &[], &plain);
    assert!(matches!(e, LowerError::PartCount { got: 0, .. }), "{e:?}");
}
