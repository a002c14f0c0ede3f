//! A WGSL shader as SPIR-V, written by naga's SPIR-V backend (a real producer: what wgpu hands
//! a Vulkan driver), read back by `clconv::spirv`: the module's `OpSource WGSL` chooses WGSL's
//! rules for the float -> integer conversions SPIR-V leaves undefined, so they read as the
//! same requests `wgsl:` names give.

use clconv::spirv::{Module, SourceLanguage};
use clconv::{Extensions, Request};

fn spirv_of(wgsl: &str) -> Vec<u8> {
    let module = naga::front::wgsl::parse_str(wgsl).unwrap();
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::SHADER_FLOAT16,
    )
    .validate(&module)
    .unwrap();
    let defaults = naga::back::spv::Options::default();
    let options = naga::back::spv::Options {
        debug_info: Some(naga::back::spv::DebugInfo {
            source_code: wgsl,
            file_name: "shader.wgsl",
            language: naga::back::spv::SourceLanguage::WGSL,
        }),
        // naga writes `OpSource` only under its DEBUG flag, which its default options set only
        // in a build with debug assertions (the workspace builds its dependencies without):
        // set it, as a compiler that wants the source language in its modules does.
        flags: defaults.flags | naga::back::spv::WriterFlags::DEBUG,
        ..defaults
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, None).unwrap();
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn naga_spirv_of_wgsl_reads_with_wgsl_rules() {
    let wgsl = "enable f16;
        @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
        @group(0) @binding(1) var<storage, read_write> ints: array<vec4<i32>>;
        @group(0) @binding(2) var<storage, read_write> uints: array<u32>;
        @group(0) @binding(3) var<storage, read> halves: array<f16>;
        @group(0) @binding(4) var<storage, read_write> from_half: array<i32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            ints[id.x] = vec4<i32>(src[id.x]);
            uints[id.x] = u32(src[id.x].x);
            from_half[id.x] = i32(halves[id.x]);
        }";
    let module = Module::parse(&spirv_of(wgsl)).unwrap();
    assert_eq!(module.source_language(), Some(SourceLanguage::Wgsl));
    let found: Vec<Request> = module
        .conversions(Extensions::default())
        .unwrap()
        .iter()
        .map(|m| m.request)
        .collect();
    let wgsl_names = [
        "wgsl:vec4<i32>(vec4<f32>)",
        "wgsl:u32(f32)",
        "wgsl:i32(f16)",
    ];
    let expected: Vec<Request> = wgsl_names
        .iter()
        .map(|n| Request::parse(n, Extensions::default()).unwrap())
        .collect();
    // naga may add instructions of its own around a conversion (clamps, in some versions):
    // every WGSL conversion of the source is among the module's, with WGSL's rules.
    for e in &expected {
        assert!(found.contains(e), "{e} not in {found:?}");
    }
    assert!(found
        .iter()
        .any(|r| r.to_string() == "convert_int4_satsrc(float4)"));
}

/// naga writes WGSL's bool conversions as SPIR-V has them, with no conversion opcode:
/// `bool(x)` as `OpFUnordNotEqual` (NaN true) or `OpINotEqual` against a zero constant, `T(b)`
/// as `OpSelect %T %b %one %zero`. clconv reads each as the conversion it computes, the same
/// requests the `wgsl:` spellings give.
#[test]
fn naga_spirv_bool_idioms_read_as_bool_conversions() {
    let wgsl = "
        @group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
        @group(0) @binding(1) var<storage, read> ints: array<i32>;
        @group(0) @binding(2) var<storage, read_write> out: array<vec4<u32>>;
        @group(0) @binding(3) var<storage, read_write> out2: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            out[id.x] = vec4<u32>(vec4<bool>(src[id.x]));
            out2[id.x] = f32(bool(ints[id.x]));
        }";
    let module = Module::parse(&spirv_of(wgsl)).unwrap();
    let found: Vec<Request> = module
        .conversions(Extensions::default())
        .unwrap()
        .iter()
        .map(|m| m.request)
        .collect();
    for name in [
        "wgsl:vec4<bool>(vec4<f32>)",
        "wgsl:vec4<u32>(vec4<bool>)",
        "wgsl:bool(i32)",
        "wgsl:f32(bool)",
    ] {
        let e = Request::parse(name, Extensions::default()).unwrap();
        assert!(found.contains(&e), "{name} ({e}) not in {found:?}");
    }
    assert_eq!(found.len(), 4, "{found:?}");
    // A comparison with anything but zero, and a select of other values, are no conversion.
    let wgsl = "
        @group(0) @binding(0) var<storage, read> ints: array<i32>;
        @group(0) @binding(1) var<storage, read_write> out: array<f32>;
        @compute @workgroup_size(64)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            out[id.x] = select(2.0, 3.0, ints[id.x] != 5) + f32(ints[id.x] != 7);
        }";
    let module = Module::parse(&spirv_of(wgsl)).unwrap();
    let found: Vec<String> = module
        .conversions(Extensions::default())
        .unwrap()
        .iter()
        .map(|m| m.request.to_string())
        .collect();
    assert_eq!(found, ["convert_float(bool)"]);
}
