//! The command line as clap parses it: `--version`, per-command help, one-line errors for what
//! clap refuses, and the spellings scripts use (`--values=-5,...`, `--values -5,...`).

use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_clconv");

fn clconv(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the clconv binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

/// Status 0, nothing on stderr; returns stdout.
#[track_caller]
fn ok(args: &[&str]) -> String {
    let o = clconv(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "", "{args:?}");
    text(&o.stdout)
}

/// Status 2, nothing on stdout, one line on stderr starting `clconv: error: `; returns it.
#[track_caller]
fn usage_error(args: &[&str]) -> String {
    let o = clconv(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err:?}");
    assert!(o.stdout.is_empty(), "{args:?}: {:?}", text(&o.stdout));
    assert!(
        err.starts_with("clconv: error: ") && err.ends_with('\n') && err.lines().count() == 1,
        "{args:?}: {err:?}"
    );
    err
}

#[test]
fn version() {
    assert_eq!(ok(&["--version"]), "clconv 0.1.0\n");
    assert_eq!(ok(&["-V"]), "clconv 0.1.0\n");
}

#[test]
fn help_per_command() {
    let run = ok(&["run", "--help"]);
    for needle in [
        "--values",
        "--values2",
        "--input3",
        "--static-mode",
        "OP(TYPE)",
    ] {
        assert!(run.contains(needle), "{needle} not in {run}");
    }
    assert_eq!(ok(&["help", "run"]), run);
    // -h is the short form of the same help.
    let short = ok(&["run", "-h"]);
    assert!(short.contains("--values <LIST>") && short.len() < run.len());
    for (command, needles) in [
        ("show", &["--clif", "--asm", "--target", "--tier"][..]),
        (
            "check",
            &["--exhaustive", "--state", "--reference-all", "--inputs"],
        ),
        ("list", &["FILTER", "--fp16"]),
        ("report", &["--write"]),
        ("demo", &["reference"]),
    ] {
        let help = ok(&["help", command]);
        for n in needles {
            assert!(help.contains(n), "{command}: {n} not in {help}");
        }
    }
    // The overview: every command, and where to find the rest.
    let overview = ok(&["help"]);
    assert_eq!(ok(&["--help"]), overview);
    assert_eq!(ok(&["-h"]), overview);
    assert!(overview.contains("clconv help COMMAND"), "{overview}");
    for command in ["demo", "run", "show", "check", "report", "list"] {
        assert!(overview.contains(&format!("clconv {command}")), "{command}");
    }
}

#[test]
fn clap_refusals_are_one_line_errors() {
    let err = usage_error(&["list", "--no-such-flag"]);
    assert!(err.contains("unknown option --no-such-flag"), "{err}");
    let err = usage_error(&["run", "convert_int(float)", "--values=1", "--frob=2"]);
    assert!(err.contains("unknown option --frob "), "{err}");
    // Where the command should be.
    let err = usage_error(&["--frob"]);
    assert!(err.contains("unknown command \"--frob\""), "{err}");
    let err = usage_error(&["help", "frobnicate"]);
    assert!(err.contains("unknown command \"frobnicate\""), "{err}");
    let err = usage_error(&["show", "convert_int(float)", "--clif=yes"]);
    assert!(err.contains("--clif takes no value"), "{err}");
    let err = usage_error(&["check", "convert_int(float)", "--tier"]);
    assert!(err.contains("--tier needs a value"), "{err}");
    // A command's options are not another's.
    usage_error(&["show", "convert_int(float)", "--values", "1"]);
    usage_error(&[
        "run",
        "convert_int(float)",
        "--values",
        "1",
        "--values2",
        "2",
    ]);
    usage_error(&[
        "run",
        "add(float)",
        "--values",
        "1",
        "--values2",
        "2",
        "--fp16",
    ]);
}

#[test]
fn values_with_a_leading_minus() {
    for args in [
        &[
            "run",
            "convert_uchar4_sat_rte(float4)",
            "--values=-5,254.5,254.6,1.2e9",
        ][..],
        &[
            "run",
            "convert_uchar4_sat_rte(float4)",
            "--values",
            "-5,254.5,254.6,1.2e9",
        ],
    ] {
        assert_eq!(ok(args), "(0, 254, 255, 255)\n", "{args:?}");
    }
    assert_eq!(
        ok(&["run", "sub(double)", "--values", "-1.5", "--values2=-2.5"]),
        "1.0\n"
    );
    assert_eq!(
        ok(&[
            "run",
            "fma(float)",
            "--values",
            "-2",
            "--values2",
            "3",
            "--values3",
            "-1"
        ]),
        "-7.0\n"
    );
}

#[test]
fn an_option_given_twice_keeps_its_last_value() {
    assert_eq!(
        ok(&[
            "run",
            "convert_int(float)",
            "--values",
            "1",
            "--values",
            "2"
        ]),
        "2\n"
    );
    assert_eq!(
        ok(&[
            "run",
            "convert_int(float)",
            "--values",
            "1",
            "--reference",
            "--reference"
        ]),
        "1\n"
    );
}

#[test]
fn input_dash_is_standard_input() {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(["run", "convert_int2(float2)", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(&[1.5f32.to_le_bytes(), (-2.5f32).to_le_bytes()].concat())
        .unwrap();
    drop(input);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "(1, -2)\n");
}

/// Without a terminal, `check` prints its plain progress lines on stderr, as before the bars.
#[test]
fn check_progress_without_a_terminal_is_plain_lines() {
    let o = clconv(&["check", "convert_char4_sat_rte(float4)", "--inputs", "20"]);
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert_eq!(
        err.lines().collect::<Vec<_>>().len(),
        1,
        "one request: one line at 100%: {err:?}"
    );
    assert!(
        err.starts_with("[##############################] 1/1 ")
            && err.ends_with(" convert_char4_sat_rte(float4)\n"),
        "{err:?}"
    );
    assert!(!err.contains('\x1b'), "{err:?}");
}
