//! `clconv spirv MODULE.spv [--fp16]` on the SPIR-V fixtures of `tests/spirv/` (made by clang
//! and llvm-spirv, see scripts/spirv-fixtures/): the command's core (`spirv_cmd::run`) directly,
//! and the built binary as a user runs it.

#[path = "../src/spirv_cmd.rs"]
mod spirv_cmd;

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_clconv");

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/spirv")).join(name)
}

/// A file under the temp dir holding `bytes`, removed when dropped.
struct Temp(PathBuf);

impl Temp {
    fn with(what: &str, bytes: &[u8]) -> Temp {
        let path = std::env::temp_dir().join(format!(
            "clconv-spirv-cli-{}-{what}.spv",
            std::process::id()
        ));
        std::fs::write(&path, bytes).unwrap();
        Temp(path)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn lists_every_conversion_of_the_kernels_in_module_order() {
    let out = spirv_cmd::run(&fixture("kernels.spv"), true).unwrap();
    // Shown in the test output (libtest does not capture a direct write).
    let _ = std::io::Write::write_all(
        &mut std::io::stderr().lock(),
        format!("\nclconv spirv tests/spirv/kernels.spv --fp16\n{out}").as_bytes(),
    );
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split('\t').collect()).collect();
    let named: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[2])).collect();
    assert_eq!(
        named,
        [
            ("pack_rgba", "convert_uchar4_sat_rte(float4)"),
            ("pack_rgba_u32", "convert_uchar4_sat_rte(float4)"),
            ("quantise_int8", "convert_char8_sat_rte(float8)"),
            ("dequantise_int8", "convert_float8(char8)"),
            ("requantise", "convert_char4_sat(int4)"),
            ("pcm_to_half", "convert_float(short)"),
            ("pcm_to_half", "vstore_half_rtz(float)"),
            ("truncate_to_half", "convert_half4_rtz(float4)"),
            ("sort_key", "as_uint(float)"),
        ]
    );
    for r in &rows {
        assert_eq!(r.len(), 4, "{r:?}");
        assert!(
            r[1].starts_with('%') && r[1][1..].parse::<u32>().is_ok(),
            "{r:?}"
        );
        // The recipe: a name from the lowering tables.
        assert!(
            clconv::lower::recipes::recipe(r[3]).is_some(),
            "{r:?}: not a recipe"
        );
    }
    assert_eq!(rows[0][1], "%25");
}

/// The glslang compute shader of issue 27 (scripts/spirv-fixtures/glsl_float16.comp) declares
/// Float16: its three conversions are listed without --fp16, as the built binary prints them.
#[test]
fn a_module_declaring_float16_is_read_without_fp16() {
    let out = Command::new(BIN)
        .arg("spirv")
        .arg(fixture("glsl_float16.spv"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let named: Vec<(&str, &str)> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0], f[2])
        })
        .collect();
    assert_eq!(
        named,
        [
            ("main", "convert_half4(float4)"),
            ("main", "convert_float4(half4)"),
            ("main", "convert_short2(half2)"),
        ]
    );
    // 16-bit storage alone allows the conversions to and from float too.
    let out = spirv_cmd::run(&fixture("glsl_storage16.spv"), false).unwrap();
    assert_eq!(out.lines().count(), 2, "{out}");
}

/// The clang + llvm-spirv kernels of issue 27 (scripts/spirv-fixtures/half_loads_stores.cl):
/// the three directed vstore_half stores with their modes and the vload_half come first, then
/// every other form, each with its width; no --fp16 is needed (the module declares
/// Float16Buffer: half in memory only).
#[test]
fn half_loads_and_stores_are_listed_with_their_modes() {
    let out = spirv_cmd::run(&fixture("half_loads_stores.spv"), false).unwrap();
    let _ = std::io::Write::write_all(
        &mut std::io::stderr().lock(),
        format!("\nclconv spirv tests/spirv/half_loads_stores.spv\n{out}").as_bytes(),
    );
    let named: Vec<(&str, &str, &str)> = out
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0], f[1], f[2])
        })
        .collect();
    assert_eq!(
        named[..4],
        [
            ("store_rtz", "%20", "vstore_half_rtz(float)"),
            ("store_rtp", "%29", "vstore_half_rtp(float)"),
            ("store_rtn", "%38", "vstore_half_rtn(float)"),
            ("load", "%46", "vload_half"),
        ]
    );
    let rest: Vec<&str> = named[4..].iter().map(|n| n.2).collect();
    assert_eq!(
        rest,
        [
            "vstore_half(float)",
            "vstore_half_rtz(double)",
            "vstore_half2(float2)",
            "vstore_half4_rte(float4)",
            "vstore_half2_rtp(double2)",
            "vstorea_half3_rtn(float3)",
            "vstorea_half8(float8)",
            "vload_half4",
            "vloada_half3",
            "vload_half16",
        ]
    );
    for l in out.lines() {
        let recipe = l.split('\t').nth(3).unwrap();
        assert!(clconv::lower::recipes::recipe(recipe).is_some(), "{l}");
    }
}

#[test]
fn one_line_per_instruction_of_a_whole_matrix_module() {
    let out = spirv_cmd::run(&fixture("from_float.spv"), true).unwrap();
    // 570 conversions from float; the 30 float -> float identities are no instruction.
    assert_eq!(out.lines().count(), 540);
    assert!(out.contains("t_convert_int3_sat_rtp__float3\t%"));
}

#[test]
fn unreadable_modules_are_one_line_errors() {
    let good = std::fs::read(fixture("kernels.spv")).unwrap();
    let truncated = Temp::with("truncated", &good[..good.len() / 2 + 2]);
    let mut magic = good.clone();
    magic[0] = 0;
    let magic = Temp::with("magic", &magic);
    let missing = fixture("no-such-module.spv");
    for (path, fp16, expect) in [
        (&truncated.0, true, "truncated"),
        (&magic.0, true, "not a SPIR-V module"),
        (&missing, true, "cannot read"),
        // half without --fp16: an error naming the instruction.
        (&fixture("kernels.spv"), false, "--fp16"),
    ] {
        let e = spirv_cmd::run(path, fp16).unwrap_err();
        assert!(e.contains(expect), "{e}");
        assert!(!e.contains('\n'), "{e:?}");
    }
    let e = spirv_cmd::run(&fixture("kernels.spv"), false).unwrap_err();
    assert!(e.contains(": %") && e.contains("OpFConvert"), "{e}");
}

#[test]
fn the_binary_prints_the_lines_and_exits_2_on_a_bad_module() {
    let out = Command::new(BIN)
        .arg("spirv")
        .arg(fixture("kernels.spv"))
        .arg("--fp16")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        spirv_cmd::run(&fixture("kernels.spv"), true).unwrap()
    );
    let bad = Temp::with("bad", b"not spir-v at all, just text");
    let out = Command::new(BIN).arg("spirv").arg(&bad.0).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a SPIR-V module"), "{err}");
}
