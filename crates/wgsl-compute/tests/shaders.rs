//! WGSL compute shaders, compiled by this crate and run on storage buffers holding NaNs,
//! infinities, subnormals, out-of-range values and random bits: no trap, and every element as
//! the reference gives WGSL's conversion (`clconv::reference` on the `wgsl:` request, written
//! from the WGSL specification independently of the lowering).

use clconv::{reference, Extensions, Layout, Request};
use clconv_wgsl_compute::{Error, Shader};

/// Special bit patterns of `bytes`-byte elements of kind `float`, then pseudo-random ones.
fn inputs(bytes: usize, float: bool, n: usize) -> Vec<u64> {
    let specials: Vec<u64> = match (bytes, float) {
        (4, true) => vec![
            0x7fc0_0000,
            0xffc0_0001,
            0x7f80_0000,
            0xff80_0000,
            0,
            0x8000_0000,
            1,
            0x807f_ffff,
            0x4f32_d05e,
            0xcf32_d05e,
            0x4eff_ffff,
            0x4f00_0000,
            0x4f7f_ffff,
            0x4f80_0000,
            0x60ad_78ec,
            0xe0ad_78ec,
            0xbfc0_0000,
            0x3f00_0000,
            0x477f_e000,
            0x477f_f000,
            0x477f_efff,
            0x3380_0000,
            0x3380_0001,
        ],
        (2, true) => vec![
            0x7e00, 0xfe01, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x0001, 0x8001, 0x3c00, 0xbe00, 0x7800,
            0x0400, 0x03ff, 0,
        ],
        _ => vec![
            0,
            1,
            0xffff_ffff,
            0x8000_0000,
            0x7fff_ffff,
            16_777_217,
            65505,
            65519,
            65520,
            0xffff_0000,
            0x0100_0001,
        ],
    };
    let mask = u64::MAX >> (64 - 8 * bytes);
    let mut x = 0x2545_f491_4f6c_dd1du64 ^ bytes as u64;
    let mut out: Vec<u64> = specials.into_iter().map(|v| v & mask).collect();
    while out.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x & mask);
    }
    out.truncate(n);
    out
}

/// Compiles `dst[id.x] = EXPR;` (with `src[id.x]` in EXPR) between arrays of `src_ty` and
/// `dst_ty`, runs it on `n` elements, and compares every component with the reference's
/// `wgsl:` request `reference`, or its requests one after another (`"wgsl:bool(f32); wgsl:i32(bool)"`)
/// for nested conversions.
fn check(src_ty: &str, dst_ty: &str, expr: &str, reference: &str) {
    let enable = if (src_ty, dst_ty, expr).0.contains("f16")
        || dst_ty.contains("f16")
        || expr.contains("f16")
    {
        "enable f16;\n"
    } else {
        ""
    };
    let wgsl = format!(
        "{enable}@group(0) @binding(0) var<storage, read> src: array<{src_ty}>;
         @group(0) @binding(1) var<storage, read_write> dst: array<{dst_ty}>;
         @compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) {{ dst[id.x] = {expr}; }}"
    );
    let shader = Shader::compile(&wgsl).unwrap_or_else(|e| panic!("{wgsl}\n{e}"));
    let requests: Vec<Request> = reference
        .split(';')
        .map(|r| Request::parse(r.trim(), Extensions::default()).unwrap())
        .collect();
    let (s, d) = (requests[0].src(), requests[requests.len() - 1].dst());
    let (ss, ds) = (shader.bindings()[0].stride, shader.bindings()[1].stride);
    let (se, de) = (s.elem.bytes(), d.elem.bytes());
    let n = 256;
    let lanes = s.lanes();
    let values = inputs(se, s.elem.is_float(), n * lanes);
    let mut src = vec![0u8; n * ss];
    for (v, chunk) in values.chunks(lanes).enumerate() {
        for (c, bits) in chunk.iter().enumerate() {
            let at = v * ss + c * se;
            src[at..at + se].copy_from_slice(&bits.to_le_bytes()[..se]);
        }
    }
    let mut dst = vec![0xa5u8; n * ds];
    shader.run(&mut [&mut src, &mut dst], n as u32).unwrap();
    for v in 0..n {
        let packed: Vec<u8> = (0..lanes)
            .flat_map(|c| src[v * ss + c * se..v * ss + (c + 1) * se].to_vec())
            .collect();
        let mut want = packed.clone();
        for request in &requests {
            let mut out = vec![0u8; lanes * request.dst().elem.bytes()];
            reference::evaluate(request, Layout::Packed, &want, &mut out).unwrap();
            want = out;
        }
        let got: Vec<u8> = (0..lanes)
            .flat_map(|c| dst[v * ds + c * de..v * ds + (c + 1) * de].to_vec())
            .collect();
        assert_eq!(got, want, "{reference} on element {v}: {:x?}", &packed);
    }
}

#[test]
fn float_to_integer_clamps_to_what_the_source_holds() {
    check("f32", "i32", "i32(src[id.x])", "wgsl:i32(f32)");
    check("f32", "u32", "u32(src[id.x])", "wgsl:u32(f32)");
    check(
        "vec4<f32>",
        "vec4<i32>",
        "vec4<i32>(src[id.x])",
        "wgsl:vec4<i32>(vec4<f32>)",
    );
    check(
        "vec2<f32>",
        "vec2<u32>",
        "vec2<u32>(src[id.x])",
        "wgsl:vec2<u32>(vec2<f32>)",
    );
    check(
        "vec3<f32>",
        "vec3<i32>",
        "vec3<i32>(src[id.x])",
        "wgsl:vec3<i32>(vec3<f32>)",
    );
}

#[test]
fn half_values_as_f16() {
    check("f16", "i32", "i32(src[id.x])", "wgsl:i32(f16)");
    check(
        "vec4<f16>",
        "vec4<u32>",
        "vec4<u32>(src[id.x])",
        "wgsl:vec4<u32>(vec4<f16>)",
    );
    check(
        "vec2<f32>",
        "vec2<f16>",
        "vec2<f16>(src[id.x])",
        "wgsl:vec2<f16>(vec2<f32>)",
    );
    check("f32", "f16", "f16(src[id.x])", "wgsl:f16(f32)");
    check("f16", "f32", "f32(src[id.x])", "wgsl:f32(f16)");
    check(
        "vec4<f16>",
        "vec4<f32>",
        "vec4<f32>(src[id.x])",
        "wgsl:vec4<f32>(vec4<f16>)",
    );
    check(
        "vec3<f16>",
        "vec3<f32>",
        "vec3<f32>(src[id.x])",
        "wgsl:vec3<f32>(vec3<f16>)",
    );
    check(
        "vec4<i32>",
        "vec4<f16>",
        "vec4<f16>(src[id.x])",
        "wgsl:vec4<f16>(vec4<i32>)",
    );
}

#[test]
fn integers_to_floats_and_between_themselves() {
    check("i32", "f32", "f32(src[id.x])", "wgsl:f32(i32)");
    check(
        "vec4<u32>",
        "vec4<f32>",
        "vec4<f32>(src[id.x])",
        "wgsl:vec4<f32>(vec4<u32>)",
    );
    check("i32", "u32", "u32(src[id.x])", "wgsl:u32(i32)");
    // (naga 30 refuses `bitcast<vec2<f16>>(u32)`: "automatic conversions cannot convert
    // elements of `f32` to `f16`"; clconv's side of it is in tests/languages.rs.)
    check(
        "u32",
        "f32",
        "bitcast<f32>(src[id.x])",
        "wgsl:bitcast<f32>(u32)",
    );
    check(
        "vec2<f32>",
        "vec2<i32>",
        "bitcast<vec2<i32>>(src[id.x])",
        "wgsl:bitcast<vec2<i32>>(vec2<f32>)",
    );
}

/// Two conversions in one expression: the reference applies the same two in turn.
#[test]
fn nested_conversions() {
    let wgsl = "@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
                @group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
                @compute @workgroup_size(64)
                fn main(@builtin(global_invocation_id) id: vec3<u32>) {
                    dst[id.x] = vec4<f32>(vec4<u32>(src[id.x]));
                }";
    let shader = Shader::compile(wgsl).unwrap();
    let xs = [
        f32::NAN,
        5e9,
        -7.5,
        4294967040.0,
        16777217.0,
        0.999,
        f32::INFINITY,
        3.5,
    ];
    let mut src: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut dst = vec![0u8; src.len()];
    shader.run(&mut [&mut src, &mut dst], 2).unwrap();
    let got: Vec<f32> = dst
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // By hand: NaN -> 0u -> 0.0; 5e9 -> 4294967040u (the clamp) -> 4294967040.0; -7.5 -> 0;
    // 4294967040 stays; 16777217.0 is 16777216.0 as an f32 already; 0.999 -> 0; inf -> the
    // clamp; 3.5 -> 3.
    assert_eq!(
        got,
        [
            0.0,
            4294967040.0,
            0.0,
            4294967040.0,
            16777216.0,
            0.0,
            4294967040.0,
            3.0
        ]
    );
}

#[test]
fn what_it_does_not_compile_or_run_is_a_typed_error() {
    let e = Shader::compile("fn main() {}").err().unwrap();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    let e = Shader::compile("@compute @workgroup_size(1) fn main() { let x = 1; }")
        .err()
        .unwrap();
    assert!(e.to_string().contains("arguments"), "{e}");
    let e = Shader::compile("this is not wgsl").err().unwrap();
    assert!(matches!(e, Error::Parse(_)), "{e}");
    let shader = Shader::compile(
        "@group(0) @binding(0) var<storage, read> src: array<f32>;
         @group(0) @binding(1) var<storage, read_write> dst: array<i32>;
         @compute @workgroup_size(64)
         fn main(@builtin(global_invocation_id) id: vec3<u32>) { dst[id.x] = i32(src[id.x]); }",
    )
    .unwrap();
    let (mut src, mut dst) = (vec![0u8; 16], vec![0u8; 12]);
    let e = shader.run(&mut [&mut src, &mut dst], 4).unwrap_err();
    assert!(e.to_string().contains("`dst` needs 16 bytes"), "{e}");
    let e = shader.run(&mut [&mut src], 1).unwrap_err();
    assert!(e.to_string().contains("2 storage bindings"), "{e}");
}

/// bool as a value between two conversions (WGSL keeps bool out of storage buffers): `bool(x)`
/// is false for 0 and -0.0 only (NaN, infinities and subnormals are true), `i32(b)` and
/// `f32(b)` are 1 or 0; vectors per component; half through F16 values.
#[test]
fn bool_between_conversions() {
    check(
        "f32",
        "i32",
        "i32(bool(src[id.x]))",
        "wgsl:bool(f32); wgsl:i32(bool)",
    );
    check(
        "vec4<f32>",
        "vec4<u32>",
        "vec4<u32>(vec4<bool>(src[id.x]))",
        "wgsl:vec4<bool>(vec4<f32>); wgsl:vec4<u32>(vec4<bool>)",
    );
    check(
        "vec4<i32>",
        "vec4<f32>",
        "vec4<f32>(vec4<bool>(src[id.x]))",
        "wgsl:vec4<bool>(vec4<i32>); wgsl:vec4<f32>(vec4<bool>)",
    );
    check(
        "vec2<f16>",
        "vec2<f16>",
        "vec2<f16>(vec2<bool>(src[id.x]))",
        "wgsl:vec2<bool>(vec2<f16>); wgsl:vec2<f16>(vec2<bool>)",
    );
    check(
        "vec3<u32>",
        "vec3<f32>",
        "vec3<f32>(vec3<bool>(src[id.x]))",
        "wgsl:vec3<bool>(vec3<u32>); wgsl:vec3<f32>(vec3<bool>)",
    );
    check(
        "f32",
        "f32",
        "f32(f16(bool(src[id.x])))",
        "wgsl:bool(f32); wgsl:f16(bool); wgsl:f32(f16)",
    );
}
