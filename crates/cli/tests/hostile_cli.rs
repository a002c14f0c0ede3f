//! Hostile input through the command line: truncated, ragged, missing and unwritable files.
//! A failing run must exit 2 with one clear line on stderr and leave no partial output behind.
//! (The library's doors are tested in crates/verify/tests/hostile.rs.)

use clconv::{Extensions, Request};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

const BIN: &str = env!("CARGO_BIN_EXE_clconv");

fn clconv(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run clconv");
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

/// Exit status 2, one line on stderr containing every needle, nothing on stdout.
#[track_caller]
fn usage_error(args: &[&str], stdin: &[u8], needles: &[&str]) -> String {
    let o = clconv(args, stdin);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
    assert_eq!(o.status.code(), Some(2), "{shown:?}: {err}");
    assert!(o.stdout.is_empty(), "{shown:?}");
    assert_eq!(err.lines().count(), 1, "{shown:?}: {err:?}");
    assert!(
        err.starts_with("clconv: error: ") && !err.contains("panicked"),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{shown:?}: {n:?} not in {err:?}");
    }
    err
}

struct Temp(PathBuf);

impl Temp {
    fn new(what: &str) -> Temp {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        Temp(std::env::temp_dir().join(format!("clconv-hostile-{}-{n}-{what}", std::process::id())))
    }
    fn s(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn cli_truncated_and_ragged_inputs() {
    let out = Temp::new("out.bin");
    // Truncated after whole elements (5 floats for float4), mid-element (18 bytes), and a
    // file of the other 3-component layout.
    for (name, bytes, needles) in [
        (
            "convert_int4(float4)",
            f32_bytes(&[1.0; 5]),
            &["20 bytes", "float4", "16 bytes"][..],
        ),
        (
            "convert_int4(float4)",
            f32_bytes(&[1.0; 5])[..18].to_vec(),
            &["18 bytes", "float4"][..],
        ),
        (
            "convert_int2(double2)",
            vec![0u8; 31],
            &["31 bytes", "double2"][..],
        ),
        (
            "convert_char16_sat(int16)",
            vec![0u8; 64 * 3 - 1],
            &["191 bytes", "int16", "64 bytes"][..],
        ),
    ] {
        let input = Temp::new("in.bin");
        std::fs::write(&input.0, &bytes).unwrap();
        for backend in [&[][..], &["--reference"][..]] {
            let mut args = vec!["run", name, "--input", input.s(), "--output", out.s()];
            args.extend_from_slice(backend);
            usage_error(&args, b"", needles);
            assert!(!out.0.exists(), "output created for a refused input");
            // The same bytes on standard input.
            let mut args = vec!["run", name, "--output", out.s()];
            args.extend_from_slice(backend);
            usage_error(&args, &bytes, needles);
            assert!(!out.0.exists());
        }
    }
    // Aligned float3 data read as packed (16 bytes is not a whole number of 12-byte vectors).
    let input = Temp::new("aligned.bin");
    std::fs::write(&input.0, f32_bytes(&[1.0, 2.0, 3.0, 0.0])).unwrap();
    usage_error(
        &["run", "convert_int3(float3)", "--input", input.s()],
        b"",
        &["16 bytes", "aligned layout"],
    );
}

#[test]
fn cli_empty_input_gives_an_empty_output() {
    let input = Temp::new("empty.bin");
    std::fs::write(&input.0, b"").unwrap();
    let out = Temp::new("empty-out.bin");
    let o = clconv(
        &[
            "run",
            "convert_int4(float4)",
            "--input",
            input.s(),
            "--output",
            out.s(),
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&out.0).unwrap(), b"");
}

#[test]
fn cli_missing_and_unreadable_inputs() {
    let dir = Temp::new("dir");
    std::fs::create_dir(&dir.0).unwrap();
    usage_error(
        &["run", "convert_int(float)", "--input", dir.s()],
        b"",
        &["cannot read", dir.s()],
    );
    let missing = Temp::new("missing.bin");
    usage_error(
        &[
            "run",
            "as_int(float)",
            "--input",
            missing.s(),
            "--reference",
        ],
        b"",
        &["cannot read", missing.s()],
    );
}

#[cfg(target_os = "linux")]
#[test]
fn cli_unwritable_outputs() {
    let input = Temp::new("ok.bin");
    std::fs::write(&input.0, f32_bytes(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    // A full device (ENOSPC even for root), and a path through a regular file (ENOTDIR).
    let through_file = format!("{}/out.bin", input.s());
    for out in ["/dev/full", through_file.as_str()] {
        for backend in [&[][..], &["--reference"][..]] {
            let mut args = vec![
                "run",
                "convert_int4(float4)",
                "--input",
                input.s(),
                "--output",
                out,
            ];
            args.extend_from_slice(backend);
            usage_error(&args, b"", &["cannot write", out]);
        }
    }
}

/// Raw output to standard output on a full device must fail, not vanish: the bytes sit in
/// stdout's buffer (no newline in them) and the flush at exit ignores its error.
#[cfg(target_os = "linux")]
#[test]
fn cli_raw_standard_output_on_a_full_device() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(BIN)
        .args([
            "run",
            "convert_int4(float4)",
            "--values",
            "1,2,3,4",
            "--output",
            "-",
        ])
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write standard output"), "{err}");
}

/// Linux caps one argument at 128 KiB, so ~100 KB here (the library takes megabytes above).
#[test]
fn cli_names_of_100_kilobytes() {
    let long = "convert_int4(".to_string() + &"x".repeat(100_000) + ")";
    usage_error(&["show", &long], b"", &["100014 bytes"]);
    usage_error(
        &["run", &long, "--reference", "--values", "1"],
        b"",
        &["100014 bytes"],
    );
    usage_error(
        &["check", "--exhaustive", &long],
        b"",
        &["no conversion", "at most 32 bits"],
    );
    let o = clconv(&["list", &long], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
}

#[test]
fn cli_exhaustive_refuses_what_it_cannot_do() {
    usage_error(
        &["check", "--exhaustive", "convert_float(double)"],
        b"",
        &["2^64", "--inputs"],
    );
    usage_error(
        &["check", "--exhaustive", "as_int(float)"],
        b"",
        &["no conversion"],
    );
    usage_error(
        &[
            "check",
            "--exhaustive",
            "convert_int(float)",
            "--inputs",
            "lots",
        ],
        b"",
        &["--inputs", "lots"],
    );
    usage_error(
        &["check", "convert_int(float)", "--state", "x"],
        b"",
        &["--exhaustive"],
    );
    let dir = Temp::new("state-dir");
    std::fs::create_dir(&dir.0).unwrap();
    usage_error(
        &[
            "check",
            "--exhaustive",
            "convert_int(float)",
            "--state",
            dir.s(),
        ],
        b"",
        &["state file", dir.s()],
    );
}

/// A run with a state file, then the same again: the second skips what the first passed.
#[test]
fn cli_exhaustive_restarts_from_its_state_file() {
    let state = Temp::new("state.tsv");
    let args = [
        "check",
        "--exhaustive",
        "convert_ushort3_sat_rtp(float3)",
        "--inputs",
        "70000",
        "--state",
        state.s(),
    ];
    let first = clconv(&args, b"");
    let out = String::from_utf8_lossy(&first.stdout);
    assert_eq!(first.status.code(), Some(0), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("PASS\t")).count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("\tpacked\t") && out.contains("\taligned\t"),
        "{out}"
    );
    assert!(out.contains("70000 inputs\t0 mismatches"), "{out}");
    let second = clconv(&args, b"");
    let out2 = String::from_utf8_lossy(&second.stdout);
    assert_eq!(second.status.code(), Some(0), "{out2}");
    assert!(
        out2.contains("0 runs passed, 0 failed (2 skipped as done)"),
        "{out2}"
    );
    // A different input count is a different run: not skipped.
    let mut more = args.to_vec();
    more[4] = "70001";
    let third = clconv(&more, b"");
    assert!(String::from_utf8_lossy(&third.stdout).contains("2 runs passed"));
}

/// Every input of an 8-bit and a 16-bit source, which the command enumerates in full.
#[test]
fn cli_exhaustive_small_sources_in_full() {
    let o = clconv(&["check", "--exhaustive", "convert_half_rtz(short)"], b"");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("65536 inputs\t0 mismatches"), "{out}");
}

/// An argument of 100 KB in an error message should be cut, as the name parser cuts names
/// (to 80 characters): a 100 KB line on stderr is not a clear message.
#[test]
fn cli_long_arguments_are_not_echoed_whole() {
    let long = "x".repeat(100_000);
    for args in [
        vec!["check", long.as_str()],
        vec!["run", "convert_int(float)", "--values", long.as_str()],
        vec![
            "run",
            "convert_int(float)",
            "--values",
            "1",
            "--layout",
            long.as_str(),
        ],
    ] {
        let err = usage_error(&args, b"", &[]);
        assert!(err.len() < 1000, "{} bytes on stderr", err.len());
    }
}

/// The parse_name fuzzer's first finding: a line break in a name comes back raw in the error
/// (`unexpected `_hZl\n` after the parameter type`), so the message is not one line.
#[test]
fn name_errors_do_not_repeat_raw_line_breaks() {
    for name in [
        "_Z1rt_hZl\n",
        "_Z12convert_int4Dv4_f\r\nx",
        "convert_int4(float4)\n\rjunk",
    ] {
        for ext in [Extensions::default(), Extensions::with_fp16()] {
            if let Err(e) = Request::parse(name, ext) {
                let msg = e.to_string();
                assert!(!msg.contains(['\n', '\r']), "{name:?}: {msg:?}");
            }
        }
    }
}
