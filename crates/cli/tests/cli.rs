//! The `clconv` command, driven as a user drives it: the built binary, real files, exit statuses.
//!
//! Expected outputs come from SPEC.md (the seed examples) or are computed by hand here; the
//! JIT-vs-reference tests compare the two back ends of the binary with each other.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const BIN: &str = env!("CARGO_BIN_EXE_clconv");

/// A path under the temp dir, unique to this process and call, removed when dropped.
struct TempPath(PathBuf);

impl TempPath {
    fn new(what: &str) -> TempPath {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        TempPath(
            std::env::temp_dir().join(format!("clconv-cli-test-{}-{n}-{what}", std::process::id())),
        )
    }

    /// A new temp file holding `bytes`.
    fn with(what: &str, bytes: &[u8]) -> TempPath {
        let t = TempPath::new(what);
        std::fs::write(&t.0, bytes).unwrap();
        t
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn s(&self) -> &str {
        self.0.to_str().expect("temp dir path is UTF-8")
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        if self.0.is_dir() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

fn clconv(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the clconv binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// Asserts exit status 0 and returns stdout.
fn ok(args: &[&str]) -> String {
    let o = clconv(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "clconv {args:?} failed: {}",
        stderr(&o)
    );
    stdout(&o)
}

/// Asserts exit status 2, nothing on stdout, exactly one line on stderr containing every needle.
#[track_caller]
fn usage_error(args: &[&str], needles: &[&str]) -> String {
    let o = clconv(args);
    let err = stderr(&o);
    let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
    assert_eq!(o.status.code(), Some(2), "clconv {shown:?}: stderr {err:?}");
    assert!(
        o.stdout.is_empty(),
        "clconv {shown:?}: stdout {:?}",
        stdout(&o)
    );
    assert!(
        err.ends_with('\n') && err.lines().count() == 1,
        "clconv {shown:?}: not one line: {err:?}"
    );
    assert!(
        err.starts_with("clconv: error: "),
        "clconv {shown:?}: {err:?}"
    );
    for n in needles {
        assert!(err.contains(n), "clconv {shown:?}: {n:?} not in {err:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i32_bytes(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Deterministic pseudo-random bytes (xorshift64*).
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

const SEED_EXAMPLE: [f32; 4] = [-5.0, 254.5, 254.6, 1.2e9];

#[test]
fn run_seed_example_jit_and_reference() {
    let input = TempPath::with("seed.f32", &f32_bytes(&SEED_EXAMPLE));
    for backend in [&["--reference"][..], &[][..]] {
        let output = TempPath::new("seed.u8");
        let mut args = vec![
            "run",
            "convert_uchar4_sat_rte(float4)",
            "--input",
            input.s(),
            "--output",
            output.s(),
        ];
        args.extend_from_slice(backend);
        assert_eq!(ok(&args), "", "{backend:?}: raw output goes to the file");
        // SPEC.md: convert_uchar4_sat_rte((float4)(-5.0f, 254.5f, 254.6f, 1.2e9f)) == (0, 254, 255, 255)
        assert_eq!(
            std::fs::read(output.path()).unwrap(),
            [0, 254, 255, 255],
            "{backend:?}"
        );
    }
}

#[test]
fn run_values_prints_text() {
    for backend in [&["--reference"][..], &[][..]] {
        let mut args = vec![
            "run",
            "convert_uchar4_sat_rte(float4)",
            "--values=-5,254.5,254.6,1.2e9",
        ];
        args.extend_from_slice(backend);
        assert_eq!(ok(&args), "(0, 254, 255, 255)\n", "{backend:?}");
    }
    // Two vectors, two lines; signed output, 0x bit patterns on input (0x3effffff is 0.5 - 1ulp).
    assert_eq!(
        ok(&[
            "run",
            "convert_int4_rte(float4)",
            "--values",
            "0.5,1.5,-2.5,0x3effffff,-0.5,2.5,3.5,-3.5"
        ]),
        "(0, 2, -2, 0)\n(0, 2, 4, -4)\n"
    );
    // A scalar prints without parentheses.
    assert_eq!(
        ok(&["run", "convert_float_rtp(int)", "--values", "16777217"]),
        "16777218.0\n"
    );
}

/// NVFP4 blocks from the command line: the tensor scale from --tensor-scale; by hand, JIT and
/// reference.
#[test]
fn run_nvfp4_blocks() {
    for reference in [None, Some("--reference")] {
        let with = |args: &[&'static str]| -> Vec<&'static str> {
            args.iter().copied().chain(reference).collect()
        };
        // amax 12 under 1: the scale 12 / 6 = 2; 5 / 2 = 2.5 and 7 / 2 = 3.5 tie to even.
        assert_eq!(
            ok(&with(&[
                "run",
                "convert_nvfp4(float)",
                "--values=1,-12,5,7",
                "--tensor-scale=1"
            ])),
            "scale 2.0: (0.5, -6.0, 2.0, 4.0)\n"
        );
        // Back: 0.5 x 2 x 0.25 and -6 x 2 x 0.25.
        assert_eq!(
            ok(&with(&[
                "run",
                "convert_float(nvfp4)",
                "--values=0.5,-6",
                "--values2=2",
                "--tensor-scale=0.25"
            ])),
            "(0.25, -3.0)\n"
        );
    }
    usage_error(
        &["run", "convert_nvfp4(float)", "--values=1"],
        &["needs the tensor's scale", "--tensor-scale"],
    );
    usage_error(
        &[
            "run",
            "convert_nvfp4(float)",
            "--values=1",
            "--tensor-scale=0",
        ],
        &["not a positive finite float32"],
    );
    usage_error(
        &[
            "run",
            "convert_mxfp4e2m1(float)",
            "--values=1",
            "--tensor-scale=1",
        ],
        &["no tensor scale"],
    );
    let list = ok(&["list", "nvfp4"]);
    assert_eq!(list.lines().count(), 12, "{list}");
    assert!(
        list.contains("convert_nvfp4x2(half)\tNVFP4 block"),
        "{list}"
    );
    let shown = ok(&["show", "convert_nvfp4x2(bfloat)", "--clif"]);
    assert!(shown.contains("src/lower/nvfp4_block.rs"), "{shown}");
    assert_eq!(
        ok(&["check", "(nvfp4x2)"]).lines().last(),
        Some("3 passed, 0 failed")
    );
}

/// MX blocks from the command line (issue 47's example): the values 1000, 0.5, 0.3 and -7 are
/// one block, amax 1000; OCP's scale 2 (1000 / 2 saturates to 448, 0.3 / 2 = 0.15 rounds to
/// E4M3's 0.15625), rounded up 4 (250 -> 256). By hand from OCP MX 6.3; JIT and reference.
#[test]
fn run_mx_blocks() {
    for reference in [None, Some("--reference")] {
        let with = |args: &[&'static str]| -> Vec<&'static str> {
            args.iter().copied().chain(reference).collect()
        };
        assert_eq!(
            ok(&with(&[
                "run",
                "convert_mxfp8e4m3(float)",
                "--values=1000,0.5,0.3,-7"
            ])),
            "scale 2.0: (448.0, 0.25, 0.15625, -3.5)\n"
        );
        assert_eq!(
            ok(&with(&[
                "run",
                "convert_mxfp8e4m3_rtp(float)",
                "--values=1000,0.5,0.3,-7"
            ])),
            "scale 4.0: (256.0, 0.125, 0.078125, -1.75)\n"
        );
        // Back: 6 * 4 and -0.5 * 4; the scale 0xff makes the block NaN.
        assert_eq!(
            ok(&with(&[
                "run",
                "convert_float(mxfp4e2m1)",
                "--values=6,-0.5",
                "--values2=4"
            ])),
            "(24.0, -2.0)\n"
        );
        assert_eq!(
            ok(&with(&[
                "run",
                "convert_half(mxfp4e2m1)",
                "--values=6",
                "--values2=0xff"
            ])),
            "NaN\n"
        );
    }
    // Packed FP4: element 0 in the low nibble. 2.0 and -6.0 (0xf4), 0.5 and 0 (0x01).
    assert_eq!(
        ok(&["run", "convert_mxfp4e2m1x2(float)", "--values=1,-3,0.25"]),
        "scale 0.5: (244, 1)\n"
    );
    assert_eq!(
        ok(&[
            "run",
            "convert_float(mxfp4e2m1x2)",
            "--values=0xf4,0x01",
            "--values2=0x7e"
        ]),
        "(1.0, -3.0, 0.25, 0.0)\n"
    );
    // `show`: the block kernel's IR and code, for this machine or another target.
    let shown = ok(&["show", "convert_mxfp8e4m3(float)", "--clif"]);
    assert!(
        shown.contains("smax") && shown.contains("src/mx_kernel.rs"),
        "{shown}"
    );
    let shown = ok(&[
        "show",
        "convert_half(mxfp4e2m1x2)",
        "--asm",
        "--target",
        "aarch64",
    ]);
    assert!(shown.starts_with(";; machine code for aarch64"), "{shown}");
    // riscv64 without V: lane by lane, no vector type in the kernel.
    let shown = ok(&[
        "show",
        "convert_half(mxfp4e2m1x2)",
        "--target",
        "riscv64",
        "--clif",
    ]);
    assert!(
        !shown.contains("x16") && !shown.contains("i32x4"),
        "{shown}"
    );
    usage_error(
        &["show", "convert_mxfp8e4m3(float)", "--tier", "quick"],
        &["one tier"],
    );
    let list = ok(&["list", "mx"]);
    assert_eq!(list.lines().count(), 72, "{list}");
    assert!(!list.contains("nvfp4"), "{list}");
    assert!(
        list.contains("convert_mxfp4e2m1_rte(bfloat)\tMX block"),
        "{list}"
    );
    assert_eq!(
        ok(&["check", "mxfp6"]).lines().last(),
        Some("24 passed, 0 failed")
    );
    usage_error(
        &["run", "convert_mxfp4e2m1_rtz(float)", "--values=1"],
        &["_rtz is no MX scale rule"],
    );
    usage_error(
        &["run", "convert_float(mxfp4e2m1)", "--values=1"],
        &["needs its scales"],
    );
    usage_error(
        &[
            "run",
            "convert_float(mxfp4e2m1)",
            "--values=1",
            "--values2=1,2",
        ],
        &["1 values need 1 element bytes and 1 scales"],
    );
}

/// bool prints as `true`/`false` and reads `true`, `false`, `1`, `0` (issue 45's examples):
/// -0.0 is false, NaN and the smallest subnormal true; JIT and reference alike.
#[test]
fn run_bool() {
    for reference in [None, Some("--reference")] {
        let with = |args: &[&'static str]| -> Vec<&'static str> {
            args.iter().copied().chain(reference).collect()
        };
        assert_eq!(
            ok(&with(&["run", "wgsl:bool(f32)", "--values=nan,-0,0,1e-45"])),
            "true\nfalse\nfalse\ntrue\n"
        );
        assert_eq!(
            ok(&with(&["run", "wgsl:f32(bool)", "--values=true,false,1,0"])),
            "1.0\n0.0\n1.0\n0.0\n"
        );
        assert_eq!(
            ok(&with(&[
                "run",
                "glsl:bvec4(vec4)",
                "--values=nan,-0,0,-inf"
            ])),
            "(true, false, false, true)\n"
        );
        assert_eq!(
            ok(&with(&[
                "run",
                "hlsl:float4(bool4)",
                "--values=true,false,true,false"
            ])),
            "(1.0, 0.0, 1.0, 0.0)\n"
        );
    }
}

#[test]
fn run_mangled_name() {
    let input = TempPath::with("mangled.f32", &f32_bytes(&[0.5, 1.5, -2.5, f32::NAN]));
    let output = TempPath::new("mangled.i32");
    ok(&[
        "run",
        "_Z20convert_int4_sat_rteDv4_f",
        "--input",
        input.s(),
        "--output",
        output.s(),
    ]);
    // rte: 0.5 -> 0, 1.5 -> 2, -2.5 -> -2; _sat: NaN -> 0.
    assert_eq!(
        std::fs::read(output.path()).unwrap(),
        i32_bytes(&[0, 2, -2, 0])
    );
}

#[test]
fn run_three_component_layouts() {
    // convert_int3(float3) is rtz, and clconv defines NaN / out of range as the _sat result.
    let packed_in = f32_bytes(&[1.5, -2.5, 3e9, 4.0, 5.9, f32::NAN]);
    let packed_want = i32_bytes(&[1, -2, i32::MAX, 4, 5, 0]);
    // Aligned: a 4-element stride; the source padding is ignored, the destination's is zero.
    let aligned_in = f32_bytes(&[1.5, -2.5, 3e9, 99.0, 4.0, 5.9, f32::NAN, -1.0]);
    let aligned_want = i32_bytes(&[1, -2, i32::MAX, 0, 4, 5, 0, 0]);
    for backend in [&["--reference"][..], &[][..]] {
        for (layout, input, want) in [
            ("packed", &packed_in, &packed_want),
            ("aligned", &aligned_in, &aligned_want),
        ] {
            let input = TempPath::with("v3.f32", input);
            let output = TempPath::new("v3.i32");
            // Pre-fill the output so stale bytes would show.
            std::fs::write(output.path(), [0xaa; 64]).unwrap();
            let mut args = vec![
                "run",
                "convert_int3(float3)",
                "--input",
                input.s(),
                "--output",
                output.s(),
                "--layout",
                layout,
            ];
            args.extend_from_slice(backend);
            ok(&args);
            assert_eq!(
                &std::fs::read(output.path()).unwrap(),
                want,
                "{layout} {backend:?}"
            );
        }
    }
    // Text output shows the three components only.
    let aligned = TempPath::with("v3text.f32", &aligned_in);
    assert_eq!(
        ok(&[
            "run",
            "convert_int3(float3)",
            "--input",
            aligned.s(),
            "--layout",
            "aligned"
        ]),
        "(1, -2, 2147483647)\n(4, 5, 0)\n"
    );
}

#[test]
fn run_file_of_the_other_layout_is_refused() {
    // 24 bytes: two packed float3, not a whole number of 16-byte aligned ones.
    let packed = TempPath::with("p.f32", &f32_bytes(&[1.0; 6]));
    // 32 bytes: two aligned float3, not a whole number of 12-byte packed ones.
    let aligned = TempPath::with("a.f32", &f32_bytes(&[1.0; 8]));
    for (input, layout, other) in [
        (&packed, "aligned", "packed"),
        (&aligned, "packed", "aligned"),
    ] {
        let output = TempPath::new("never.i32");
        for backend in [&["--reference"][..], &[][..]] {
            let mut args = vec![
                "run",
                "convert_int3(float3)",
                "--input",
                input.s(),
                "--output",
                output.s(),
                "--layout",
                layout,
            ];
            args.extend_from_slice(backend);
            usage_error(&args, &[layout, other, "float3"]);
            assert!(!output.path().exists(), "no output file on error");
        }
    }
}

#[test]
fn jit_and_reference_write_identical_files() {
    let cases: &[(&str, &[&str])] = &[
        ("convert_uchar4_sat_rte(float4)", &[]),
        ("convert_float8_rtp(long8)", &[]),
        ("convert_ulong2_sat_rtp(double2)", &[]),
        ("convert_char16_sat(short16)", &[]),
        ("convert_float_rtz(double)", &[]),
        ("convert_int3_sat(double3)", &["--layout", "packed"]),
        ("convert_int3_sat(double3)", &["--layout", "aligned"]),
        ("convert_half4_rtz(float4)", &["--fp16"]),
        ("convert_float2(half2)", &["--fp16"]),
        ("convert_short16_sat_rtn(half16)", &["--fp16"]),
        ("as_char16(double2)", &[]),
        ("as_float3(int4)", &["--layout", "aligned"]),
    ];
    for (i, (name, extra)) in cases.iter().enumerate() {
        // 4,800 bytes: a whole number of vectors for every source above (16, 64, 24, 32, 8 ...).
        let input = TempPath::with("random.bin", &random_bytes(4800, 0x9e37_79b9 + i as u64));
        let jit_out = TempPath::new("jit.bin");
        let ref_out = TempPath::new("ref.bin");
        for (out, backend) in [(&jit_out, &[][..]), (&ref_out, &["--reference"][..])] {
            let mut args = vec!["run", name, "--input", input.s(), "--output", out.s()];
            args.extend_from_slice(extra);
            args.extend_from_slice(backend);
            ok(&args);
        }
        let (jit, reference) = (
            std::fs::read(jit_out.path()).unwrap(),
            std::fs::read(ref_out.path()).unwrap(),
        );
        assert!(!jit.is_empty(), "{name}");
        assert!(
            jit == reference,
            "{name} {extra:?}: JIT and reference differ"
        );
    }
}

#[test]
fn bad_names_are_one_line_errors() {
    let cyrillic = "convert_int4(flo\u{430}t4)";
    let long = "a".repeat(100_000); // Linux caps one argument at 128 KiB, so not 1 MB here.
    let cases: &[(&str, &[&str])] = &[
        ("convert_int5(float)", &["int5", "widths"]),
        ("convert_bool_sat(int)", &["bool", "exact"]),
        ("convert_size_t(int)", &["size_t"]),
        ("convert_float7(int7)", &["float7"]),
        ("convert_float_sat(int)", &["_sat", "integer"]),
        ("convert_int_rte_sat(float)", &["convert_int_sat_rte"]),
        ("convert_int_sat_sat(float)", &["_sat", "repeat"]),
        ("convert_int4(float2)", &["float2", "components"]),
        ("as_int(double)", &["4 bytes", "8 bytes"]),
        ("as_float3(float2)", &["16 bytes", "8 bytes"]),
        ("convert_half(float)", &["cl_khr_fp16", "--fp16"]),
        ("convert_float4(half4)", &["cl_khr_fp16"]),
        ("", &["empty"]),
        ("garbage", &["garbage", "not a conversion"]),
        ("convert_int4(float4)junk", &["junk"]),
        (cyrillic, &["\u{430}", "byte 16"]),
        (&long, &["100000 bytes"]),
        (
            "_Z99convert_int4Dv4_f",
            &["mangled", "_Z12convert_int4Dv4_f"],
        ),
        ("_Z12convert_int4Dv5_f", &["mangled", "Dv5_"]),
        ("convert_int4_sat_rte", &["source"]),
    ];
    for (name, needles) in cases {
        usage_error(&["run", name, "--values", "1"], needles);
    }
    // The same names in `show` (which compiles) are refused the same way.
    usage_error(&["show", "convert_int5(float)"], &["int5"]);
    // --fp16 makes half legal.
    assert_eq!(
        ok(&["run", "convert_half(float)", "--fp16", "--values", "1"]),
        "1.0\n"
    );
}

#[test]
fn bad_files_are_one_line_errors() {
    let missing = std::env::temp_dir().join(format!(
        "clconv-cli-test-{}-does-not-exist.bin",
        std::process::id()
    ));
    let missing = missing.to_str().unwrap();
    usage_error(
        &["run", "convert_int4(float4)", "--input", missing],
        &["cannot read", missing],
    );

    let input = TempPath::with("ok.f32", &f32_bytes(&[1.0, 2.0, 3.0, 4.0]));
    // The output is a directory.
    let dir = TempPath::new("dir");
    std::fs::create_dir(dir.path()).unwrap();
    for backend in [&["--reference"][..], &[][..]] {
        let mut args = vec![
            "run",
            "convert_int4(float4)",
            "--input",
            input.s(),
            "--output",
            dir.s(),
        ];
        args.extend_from_slice(backend);
        usage_error(&args, &["cannot write", dir.s()]);
    }
    // The output is in a directory that does not exist.
    let nowhere = dir.path().join("no").join("such").join("out.bin");
    usage_error(
        &[
            "run",
            "convert_int4(float4)",
            "--input",
            input.s(),
            "--output",
            nowhere.to_str().unwrap(),
        ],
        &["cannot write"],
    );
    assert!(!nowhere.exists());

    // 7 bytes are not a whole number of 16-byte float4 vectors; the output is not created.
    let ragged = TempPath::with("ragged.bin", b"abcdefg");
    let output = TempPath::new("ragged-out.bin");
    for backend in [&["--reference"][..], &[][..]] {
        let mut args = vec![
            "run",
            "convert_int4(float4)",
            "--input",
            ragged.s(),
            "--output",
            output.s(),
        ];
        args.extend_from_slice(backend);
        usage_error(&args, &["7 bytes", "float4", "16 bytes"]);
        assert!(!output.path().exists());
    }
    // A pre-existing output file is left as it was.
    std::fs::write(output.path(), b"keep").unwrap();
    usage_error(
        &[
            "run",
            "convert_int4(float4)",
            "--input",
            ragged.s(),
            "--output",
            output.s(),
        ],
        &["7 bytes"],
    );
    assert_eq!(std::fs::read(output.path()).unwrap(), b"keep");
    // Bad --values text.
    usage_error(
        &["run", "convert_int(float)", "--values", "1,abc"],
        &["\"abc\"", "float"],
    );
    usage_error(
        &["run", "convert_int(uchar)", "--values", "256"],
        &["\"256\"", "uchar"],
    );
}

#[test]
fn bad_command_lines_are_one_line_errors() {
    usage_error(&[], &["no command"]);
    usage_error(&["frobnicate"], &["unknown command", "frobnicate"]);
    usage_error(
        &["run", "convert_int(float)", "--frob", "--values", "1"],
        &["unknown option", "--frob"],
    );
    usage_error(&["list", "--clif"], &["unknown option", "--clif"]);
    usage_error(
        &["run", "convert_int(float)", "--input"],
        &["--input", "value"],
    );
    usage_error(
        &["run", "convert_int(float)", "--values", "1", "--layout"],
        &["--layout", "value"],
    );
    usage_error(
        &[
            "run",
            "convert_int(float)",
            "--values",
            "1",
            "--layout",
            "diagonal",
        ],
        &["--layout", "diagonal"],
    );
    usage_error(
        &[
            "run",
            "convert_int(float)",
            "--values",
            "1",
            "--reference=yes",
        ],
        &["--reference", "no value"],
    );
    usage_error(
        &["run", "convert_int(float)", "--values", "1", "--input", "x"],
        &["--input", "--values"],
    );
    usage_error(&["run", "--values", "1"], &["FUNCTION"]);
    usage_error(
        &[
            "run",
            "convert_int(float)",
            "convert_int(uint)",
            "--values",
            "1",
        ],
        &["FUNCTION"],
    );
    usage_error(
        &["check", "convert_int", "--inputs", "many"],
        &["--inputs", "many"],
    );
    usage_error(
        &["show", "convert_int(float)", "--flags", "avx9"],
        &["--flags", "avx9"],
    );
    // More random inputs than check can hold in memory.
    usage_error(
        &["check", "convert_int", "--inputs", "18446744073709551615"],
        &["--inputs", "at most"],
    );
    usage_error(&["demo", "extra"], &["demo"]);
}

#[cfg(unix)]
#[test]
fn non_utf8_argument_is_a_one_line_error() {
    use std::os::unix::ffi::OsStrExt;
    let o = Command::new(BIN)
        .arg("run")
        .arg(std::ffi::OsStr::from_bytes(b"convert_int(\xff\xfe)"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("UTF-8"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_is_not_a_panic() {
    use std::io::Read;
    // `clconv list | head -c 10`: the reader goes away after a few bytes.
    let mut child = Command::new(BIN)
        .args(["list"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then dropped: pipe closed
    let o = child.wait_with_output().unwrap();
    assert_eq!(&first, b"convert_ch");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn check_command() {
    let o = clconv(&["check", "convert_char4_sat_rte(float4)", "--inputs", "50"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().last(), Some("1 passed, 0 failed"), "{out}");
    usage_error(&["check", "nosuchthing"], &["nosuchthing"]);
    usage_error(&["check", "a", "b"], &["FILTER"]);
}

/// Every x86-64 flag set runs its kernels here or is refused (never a SIGILL). The baseline
/// (SSE2) turns rounding into libm calls and byte shuffles into a Cranelift helper, which the
/// JIT must be able to resolve: the double4 sources round, the short16 ones narrow.
#[cfg(target_arch = "x86_64")]
#[test]
fn check_with_flag_sets() {
    use std::arch::is_x86_feature_detected as has;
    let avx2 = has!("sse4.2")
        && has!("avx")
        && has!("avx2")
        && has!("fma")
        && has!("popcnt")
        && has!("bmi1")
        && has!("bmi2")
        && has!("lzcnt");
    let runs = [
        ("sse2", true),
        ("sse4.1", has!("sse3") && has!("ssse3") && has!("sse4.1")),
        ("avx2", avx2),
        (
            "avx512",
            avx2 && has!("avx512f") && has!("avx512vl") && has!("avx512dq"),
        ),
    ];
    for (flags, host_runs) in runs {
        for filter in ["(double4)", "(short16)"] {
            let args = ["check", filter, "--inputs", "20", "--flags", flags];
            if host_runs {
                let out = ok(&args);
                let last = out.lines().last().unwrap_or_default();
                let passed: usize = last
                    .strip_suffix(" passed, 0 failed")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("--flags {flags} {filter}: {out}"));
                // 11 destinations x (sat, 5 roundings) + the as_ of the same size: ~100.
                assert!(passed >= 100, "--flags {flags} {filter}: {last}");
            } else {
                usage_error(&args, &[flags]);
            }
        }
    }
}

#[test]
fn show_command() {
    let clif = ok(&["show", "convert_int4_sat_rte(float4)", "--clif"]);
    assert!(clif.contains("fcvt_to_sint_sat"), "{clif}");
    assert!(clif.contains("_Z20convert_int4_sat_rteDv4_f"), "{clif}");
    assert!(!clif.contains("machine code"), "{clif}");

    let asm = ok(&["show", "convert_int4_sat_rte(float4)", "--asm"]);
    assert!(asm.contains("machine code"), "{asm}");
    assert!(
        !asm.contains("fcvt_to_sint_sat"),
        "only machine code: {asm}"
    );
    assert!(
        asm.lines().any(|l| l.trim_start().starts_with("ret")),
        "a return instruction: {asm}"
    );

    let both = ok(&["show", "_Z20convert_int4_sat_rteDv4_f"]);
    assert!(both.contains("fcvt_to_sint_sat") && both.contains("machine code"));
}

#[test]
fn demo_command() {
    let out = ok(&["demo"]);
    assert!(out.contains("(0, 254, 255, 255)"), "{out}");
    assert!(!out.contains("MISMATCH"), "{out}");
}

#[test]
fn list_command() {
    let out = ok(&["list", "convert_int4_sat_rte"]);
    assert!(
        out.lines()
            .any(|l| l == "convert_int4_sat_rte(float4)\t_Z20convert_int4_sat_rteDv4_f"),
        "{out}"
    );
    // One line per source type: char ... double (no half without --fp16), bfloat, fp8e4m3,
    // fp8e5m2.
    assert_eq!(out.lines().count(), 13, "{out}");
    assert!(out.contains("convert_int4_sat_rte(fp8e4m3x4)\t_Z20convert_int4_sat_rteDv4_u7fp8e4m3"));
    assert!(out.lines().all(|l| l.starts_with("convert_int4_sat_rte(")));
    usage_error(&["list", "convert_int4", "convert_int2"], &["FILTER"]);
    let with_half = ok(&["list", "convert_int4_sat_rte", "--fp16"]);
    assert!(with_half.contains("convert_int4_sat_rte(half4)\t_Z20convert_int4_sat_rteDv4_Dh"));
}

#[test]
fn help_command() {
    let out = ok(&["--help"]);
    assert!(
        out.starts_with("clconv:") && out.contains("usage:"),
        "{out}"
    );
}

/// The shader languages' spellings, as the issues' done-when lines run them: through the JIT
/// and with `--reference`, the values by hand from WGSL 15.7.6 and Direct3D's ftoi.
#[test]
fn language_spellings_run_through_the_jit_and_the_reference() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "rust:f32 as i8",
            "--values=nan,300,-300,-1.9",
            "0\n127\n-128\n-1\n",
        ),
        (
            "wasm:i32.trunc_sat_f32_u",
            "--values=-1.5,5e9,nan",
            "0\n4294967295\n0\n",
        ),
        (
            "wgsl:i32(f32)",
            "--values=nan,3e9,-3e9,2147483520,-1.5",
            "0\n2147483520\n-2147483648\n2147483520\n-1\n",
        ),
        (
            "wgsl:u32(f32)",
            "--values=-1,5e9,4294967040",
            "0\n4294967040\n4294967040\n",
        ),
        (
            "hlsl:int(float)",
            "--values=nan,3e9,-1.9",
            "0\n2147483647\n-1\n",
        ),
        (
            "glsl:uint(float)",
            "--values=-1.5,5e9,nan",
            "0\n4294967295\n0\n",
        ),
    ];
    for (name, values, expected) in cases {
        for reference in [false, true] {
            let mut args = vec!["run", name, values];
            if reference {
                args.push("--reference");
            }
            let out = clconv(&args);
            assert!(out.status.success(), "{args:?}: {out:?}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{args:?}");
        }
    }
    // `list` with a language prefix: the spellings and the request each is.
    let out = clconv(&["list", "wgsl:vec4<i32>"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("wgsl:vec4<i32>(vec4<f32>)\tconvert_int4_satsrc(float4)"),
        "{text}"
    );
    // WebAssembly's trapping trunc: exit status 3, the element and its value named, through
    // the JIT and the reference alike.
    for reference in [false, true] {
        let mut args = vec!["run", "wasm:i32.trunc_f32_s", "--values=1.5,nan"];
        if reference {
            args.push("--reference");
        }
        let out = clconv(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("element 1, which is NaN"), "{args:?}: {err}");
        // The values before the trap were converted: printed, or written to --output.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n", "{args:?}");
        let file =
            std::env::temp_dir().join(format!("clconv-trap-{reference}-{}", std::process::id()));
        let path = file.to_str().unwrap().to_string();
        let mut args = vec!["run", "wasm:i32.trunc_f32_s", "--values=1.5,2.5,nan,4"];
        let output = format!("--output={path}");
        args.push(&output);
        if reference {
            args.push("--reference");
        }
        let out = clconv(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            [1, 0, 0, 0, 2, 0, 0, 0],
            "{args:?}"
        );
        let _ = std::fs::remove_file(&file);
    }
    // An unknown language is exit status 2 with one line saying which there are.
    let out = clconv(&["run", "fortran:int(float)", "--values=1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("wgsl:, hlsl:, glsl:, msl:, rust:, wasm:, ptx: and cuda:"));
}
