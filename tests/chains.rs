//! Chains (`clconv::chain`): the conversions whose lanes move (WebAssembly's `_low`, `_high`,
//! `_zero`) or whose bits are reinterpreted around them (GLSL's `packHalf2x16`, HLSL's
//! `f32tof16`). Through the builder API on the values a front end holds (one vector, or one
//! scalar per component; half as F16 or I16 lanes; with the ISA's recipes and without), every
//! lane compared with the reference, with the conversions under PTX's float rules; their OpenCL C texts parse back; bad chains are typed
//! errors. FP4's packing through the JIT on every byte and every pair of codes, against values
//! from E2M1's definition. The worked examples by hand are in `tests/languages.rs`.

use clconv::chain::{Chain, LaneMove, Step};
use clconv::cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};
use clconv::cranelift_frontend::FunctionBuilder;
use clconv::lower::{element_type, value_shape, HalfValues, Lowering};
use clconv::{reference, Extensions, Layout, Request, RequestError, ScalarType, VectorType};
use cranelift_module::Module;

#[path = "common/define.rs"]
mod define;
#[path = "common/jit_module.rs"]
mod jit_module;
use define::define_function;
use jit_module::jit_module;

fn chains() -> Vec<Request> {
    let all = clconv::languages::chains();
    // WebAssembly's 25 lane moves, GLSL's two, HLSL's two at four widths each.
    assert!(all.len() >= 30, "{}", all.len());
    all
}

/// The Cranelift type of one part of `t` as a front end holds it, half as `half` says.
fn shape(t: VectorType, half: HalfValues) -> (Type, usize) {
    let (ty, count) = value_shape(t);
    match (t.elem, half) {
        (ScalarType::Half, HalfValues::F16) if ty.is_vector() => {
            (types::F16.by(ty.lane_count()).unwrap(), count)
        }
        (ScalarType::Half, HalfValues::F16) => (types::F16, count),
        _ => (ty, count),
    }
}

/// Builds `fn(src, dst)`: the operand loaded as the value (`per_component` false) or as one
/// scalar per component, the chain lowered in one call, the result stored.
fn build(
    b: &mut FunctionBuilder,
    lowering: &Lowering,
    request: &Request,
    per_component: bool,
    half: HalfValues,
) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (src, dst) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let flags = MemFlagsData::trusted();
    let (from, to) = (request.src(), request.dst());
    let load_as = |t: VectorType| -> (Type, usize) {
        if per_component {
            let e = element_type(t.elem);
            let e = if t.elem == ScalarType::Half && half == HalfValues::F16 {
                types::F16
            } else {
                e
            };
            (e, t.lanes())
        } else {
            shape(t, half)
        }
    };
    let (ty, count) = load_as(from);
    let args: Vec<Value> = (0..count)
        .map(|i| {
            b.ins()
                .load(ty, flags, src, (i * ty.bytes() as usize) as i32)
        })
        .collect();
    let out = lowering.lower_request(b, request, &args).unwrap();
    // A one-component operand is a scalar, so its result comes per component.
    let per_component = per_component || from.lanes() == 1;
    let (out_ty, out_count) = if per_component {
        let (_, _) = load_as(to);
        let e = element_type(to.elem);
        let e = if to.elem == ScalarType::Half && half == HalfValues::F16 {
            types::F16
        } else {
            e
        };
        (e, to.lanes())
    } else {
        shape(to, half)
    };
    assert_eq!(out.len(), out_count, "{request}");
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(b.func.dfg.value_type(v), out_ty, "{request}");
        b.ins()
            .store(flags, v, dst, (i * out_ty.bytes() as usize) as i32);
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
}

/// NaNs, infinities, the edges of half and the integers, then pseudo-random bits.
fn inputs(t: ScalarType, count: usize) -> Vec<u64> {
    let specials: Vec<u64> = match t {
        ScalarType::Half => vec![
            0x7e00, 0x7c00, 0xfc00, 0x7bff, 0x0001, 0x8000, 0x3c00, 0x7d01,
        ],
        ScalarType::Float => vec![
            0x7fc0_0000,
            0x7f80_0001,
            0x477f_f000,
            0x477f_e000,
            0x3380_0000,
            0x0000_0001,
            0x4f80_0000,
            0xbfc0_0000,
            0x7f80_0000,
            0xff80_0000,
            0x3f80_1000,
            0x3f80_3000,
        ],
        ScalarType::Double => vec![
            0x7ff8_0000_0000_0000,
            0x41ef_ffff_ffe0_0000,
            0xc1e0_0000_0020_0000,
            0x3ff0_0000_1000_0000,
            0x7ff0_0000_0000_0000,
            0x47ef_ffff_f000_0000,
            0x0000_0000_0000_0001,
            0x8000_0000_0000_0000,
        ],
        _ => vec![
            0,
            1,
            u64::MAX,
            0x7f,
            0x80,
            0x8000,
            0x8000_0000,
            0x7fff_ffff,
            0xffff_3c00,
        ],
    };
    let mask = if t.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    };
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ t.bits() as u64;
    let mut out: Vec<u64> = specials.iter().map(|v| v & mask).collect();
    while out.len() < count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x & mask);
    }
    out
}

fn run_and_compare(code: *const u8, request: &Request, label: &str) {
    // SAFETY: `code` is `fn(src, dst)` built by `build` for the host's calling convention: it
    // reads one operand (at most 16 bytes) and writes one result (at most 16 bytes), within
    // the 64-byte buffers below.
    let f =
        unsafe { std::mem::transmute::<*const u8, unsafe extern "C" fn(*const u8, *mut u8)>(code) };
    let (from, to) = (request.src(), request.dst());
    let (se, n) = (from.elem.bytes(), from.lanes());
    let out_len = to.elem.bytes() * to.lanes();
    for value in inputs(from.elem, 64 * n).chunks_exact(n) {
        let mut src = [0u8; 64];
        for (i, bits) in value.iter().enumerate() {
            src[i * se..(i + 1) * se].copy_from_slice(&bits.to_le_bytes()[..se]);
        }
        let mut expected = vec![0u8; out_len];
        reference::evaluate(request, Layout::Packed, &src[..n * se], &mut expected).unwrap();
        let mut got = [0u8; 64];
        // SAFETY: see above; both buffers are live and distinct.
        unsafe { f(src.as_ptr(), got.as_mut_ptr()) };
        assert_eq!(&got[..out_len], &expected[..], "{label} on {value:x?}");
    }
}

/// Every chain, and every conversion under PTX's float rules (what the languages spell beyond
/// the matrix), both operand forms, both half forms, with the ISA's recipes and without.
#[test]
fn every_chain_lowers_exactly_on_the_values_a_front_end_holds() {
    let mut module = jit_module();
    let with_isa = Lowering::for_isa(module.isa()).unwrap();
    let mut n = 0;
    let beyond = clconv::languages::beyond_the_matrix();
    assert!(beyond.len() > chains().len());
    // The float rules' conversions are spelled as scalars: their vectors too, so that the
    // vector recipes with the rules around them are lowered as well.
    let vectors: Vec<Request> = beyond
        .iter()
        .filter_map(|r| match r {
            Request::Convert(c) => Some(Request::Convert(c.with_width(clconv::Width::W4))),
            _ => None,
        })
        .collect();
    for request in beyond.into_iter().chain(vectors) {
        for per_component in [false, true] {
            for half in [HalfValues::Bits, HalfValues::F16] {
                for lowering in [with_isa.clone(), Lowering::without_isa()] {
                    let lowering = lowering.with_half_values(half);
                    let label =
                        format!("{request}, per component {per_component}, {half:?}, {lowering:?}");
                    let id = define_function(
                        &mut module,
                        &format!("f{n}"),
                        &[types::I64; 2],
                        &[],
                        |b| build(b, &lowering, &request, per_component, half),
                    );
                    module.finalize_definitions().unwrap();
                    run_and_compare(module.get_finalized_function(id), &request, &label);
                    n += 1;
                }
            }
        }
    }
    // SAFETY: no function of the module is called after this.
    unsafe { module.free_memory() };
}

/// A front end passes the operand as the value it holds: an I32X4 for `i32x4`, and gets the
/// F64X2 back; the wrong lane count is a typed error, not a partial conversion.
#[test]
fn the_value_shapes_are_the_languages_own() {
    let r = Request::parse("wasm:f64x2.convert_low_i32x4_u", Extensions::default()).unwrap();
    assert_eq!(value_shape(r.src()), (types::I32X4, 1));
    assert_eq!(value_shape(r.dst()), (types::F64X2, 1));
    let r = Request::parse("glsl:packHalf2x16(vec2)", Extensions::default()).unwrap();
    assert_eq!(value_shape(r.src()), (types::F32X2, 1));
    assert_eq!(value_shape(r.dst()), (types::I32, 1));
}

/// Each chain prints as the OpenCL C expression it evaluates, which parses back to it, and
/// its "mangled" name is the same text (a chain is no one builtin).
#[test]
fn chain_texts_parse_back() {
    for ext in [Extensions::with_fp16(), Extensions::default()] {
        for r in chains() {
            if r.uses_half() && !ext.fp16 {
                continue;
            }
            assert_eq!(Request::parse(&r.to_string(), ext), Ok(r), "{r}");
            assert_eq!(r.mangled(), r.to_string());
        }
    }
    let ext = Extensions::with_fp16();
    for (text, printed) in [
        ("convert_double2( uint4 .lo )", "convert_double2(uint4.lo)"),
        ("convert_long2(int4.s23)", "convert_long2(int4.hi)"),
        (
            "convert_float2(as_half2(uint))",
            "convert_float2(as_half2(uint))",
        ),
        ("convert_int(char16.s7)", "convert_int(char16.s7)"),
        (
            "(int4)(convert_int2_sat(double2),0, 0)",
            "(int4)(convert_int2_sat(double2), 0, 0)",
        ),
    ] {
        let r = Request::parse(text, ext).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(r.to_string(), printed);
    }
}

/// Chains that do not fit together, or are not chains, are typed errors that say why.
#[test]
fn bad_chains_are_typed_errors() {
    let ext = Extensions::with_fp16();
    for (text, says) in [
        ("convert_int2(float4.s13)", "not consecutive"),
        ("convert_int2(float4.s345)", "3-component"),
        ("convert_int2(float4.s0123456)", "no OpenCL width"),
        ("convert_int2(float4.s34)", "do not exist"),
        ("convert_int2(float4.xy)", "not a swizzle"),
        ("(int4)(convert_int2(float2), 1, 0)", "zeros"),
        ("(int4)(convert_int2(float2), 0)", "zeros"),
        ("convert_int3(float4.lo)", "3 components"),
        ("as_int(convert_short2(float2).lo)", "needs equal sizes"),
        ("float4.lo", "2 to 3 steps"),
        ("as_uint(as_half2(uint))", "needs a convert_ step"),
        (
            "convert_int(convert_int(convert_int(convert_int(float))))",
            "2 to 3 steps",
        ),
        (
            "(float8)(convert_float4(double4), 0, 0, 0, 0)",
            "within 128 bits",
        ),
        ("convert_short8(char16.s89abcdef)", ""),
        ("convert_int(float, 0)", "unexpected character"),
        ("as_float4(int4).s12", "needs a convert_ step"),
        ("convert_float3(int3.lo)", "padding"),
        ("convert_float4(int8.hi) + 1", "unexpected character"),
        (
            "pack_fp4(convert_fp4e2m1x3(float3))",
            "fp4e2m1x2, fp4e2m1x4",
        ),
        ("pack_fp4(convert_uchar2(float2))", "fp4e2m1x2, fp4e2m1x4"),
        (
            "convert_float2(unpack_fp4(char))",
            "uchar, uchar2, uchar4 or uchar8",
        ),
        (
            "convert_float16(unpack_fp4(uchar16))",
            "uchar, uchar2, uchar4 or uchar8",
        ),
        ("pack_fp4(unpack_fp4(uchar))", "needs a convert_ step"),
    ] {
        match Request::parse(text, ext) {
            Ok(r) if says.is_empty() => assert_eq!(r.to_string(), "convert_short8(char16.hi)"),
            Ok(r) => panic!("{text} parsed to {r}"),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains(says), "{text}: {msg}");
                assert!(!msg.contains('\n'), "{text}: {msg}");
            }
        }
    }
    // And from the types directly.
    let int4 = VectorType::new(ScalarType::Int, clconv::Width::W4);
    let float4 = VectorType::new(ScalarType::Float, clconv::Width::W4);
    assert!(matches!(
        LaneMove::new(int4, 0, float4),
        Err(RequestError::Chain { .. })
    ));
    let m = LaneMove::new(int4, 2, VectorType::new(ScalarType::Int, clconv::Width::W2)).unwrap();
    assert!(matches!(
        Chain::new(&[Step::Lanes(m)]),
        Err(RequestError::Chain { .. })
    ));
}

/// E2M1's value of each code, from its definition (OCP MX v1.0, 5.3.3: 1 sign, 2 exponent and
/// 1 mantissa bits, bias 1; exponent 0 subnormal, `0.M x 2^0`): 0, 0.5, 1, 1.5, 2, 3, 4, 6.
#[cfg(feature = "jit")]
fn e2m1_value(code: u8) -> f32 {
    let (sign, exp, man) = (code >> 3 & 1, (code >> 1 & 3) as i32, (code & 1) as f32);
    let magnitude = if exp == 0 {
        man * 0.5
    } else {
        (1.0 + man * 0.5) * 2f32.powi(exp - 1)
    };
    if sign == 1 {
        -magnitude
    } else {
        magnitude
    }
}

/// `unpack_fp4` on every byte, at every width: element 2i is byte i's low nibble, 2i + 1 its
/// high one. `pack_fp4` on every pair of codes (as their exact floats): the byte
/// `low | high << 4`. Through the JIT, both tiers' kernels (the default tiering), and the
/// reference.
#[cfg(feature = "jit")]
#[test]
fn fp4_packing_every_byte_and_every_pair() {
    let jit = clconv::jit::Jit::new().unwrap();
    let ext = Extensions::with_fp16();
    let bytes: Vec<u8> = (0..=255).collect();
    let want: Vec<u8> = bytes
        .iter()
        .flat_map(|&x| [e2m1_value(x & 15), e2m1_value(x >> 4)])
        .flat_map(f32::to_le_bytes)
        .collect();
    for (n, name) in [
        (1, "convert_float2(unpack_fp4(uchar))"),
        (2, "convert_float4(unpack_fp4(uchar2))"),
        (4, "convert_float8(unpack_fp4(uchar4))"),
        (8, "convert_float16(unpack_fp4(uchar8))"),
    ] {
        assert_eq!(bytes.len() % n, 0);
        let mut got = vec![0u8; want.len()];
        let kernel = jit.compile(name).unwrap();
        kernel.run_bytes(Layout::Packed, &bytes, &mut got).unwrap();
        assert_eq!(got, want, "{name} through the JIT");
        let request = Request::parse(name, ext).unwrap();
        reference::evaluate(&request, Layout::Packed, &bytes, &mut got).unwrap();
        assert_eq!(got, want, "{name} through the reference");
    }
    let floats: Vec<u8> = bytes
        .iter()
        .flat_map(|&x| [e2m1_value(x & 15), e2m1_value(x >> 4)])
        .flat_map(f32::to_le_bytes)
        .collect();
    for name in [
        "pack_fp4(convert_fp4e2m1x2(float2))",
        "pack_fp4(convert_fp4e2m1x4_sat_rtz(float4))",
        "pack_fp4(convert_fp4e2m1x8_rtp(float8))",
        "pack_fp4(convert_fp4e2m1x16_sat(float16))",
    ] {
        let mut got = vec![0u8; bytes.len()];
        let kernel = jit.compile(name).unwrap();
        kernel.run_bytes(Layout::Packed, &floats, &mut got).unwrap();
        // -0.0 is code 8: the only value with two codes' floats, and it keeps its sign.
        assert_eq!(got, bytes, "{name} through the JIT");
        let request = Request::parse(name, ext).unwrap();
        reference::evaluate(&request, Layout::Packed, &floats, &mut got).unwrap();
        assert_eq!(got, bytes, "{name} through the reference");
    }
}
