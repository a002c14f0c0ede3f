//! `clconv check --exhaustive --ledger FILE` and `--status`: a run whose machine code the ledger
//! proves is skipped, other machine code is not, a recorded failure of this build's code makes
//! the status fail, and a corrupt ledger is an error naming its line.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_clconv");

fn clconv(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run clconv")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

struct Temp(PathBuf);

impl Temp {
    fn new(what: &str) -> Temp {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        Temp(std::env::temp_dir().join(format!("clconv-ledger-{}-{n}-{what}", std::process::id())))
    }
    fn s(&self) -> &str {
        self.0.to_str().unwrap()
    }
    /// The ledger's lines other than comments.
    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(String::from)
            .collect()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A half source: 65,536 inputs, every one swept in well under a second; float -> int with a
/// rounding mode is other code without SSE4.1's `roundss`.
const RUN: &str = "convert_int_rtp(half)";

fn sweep(ledger: &Temp, flags: &str) -> Output {
    clconv(&[
        "check",
        "--exhaustive",
        RUN,
        "--flags",
        flags,
        "--tier",
        "quick",
        "--ledger",
        ledger.s(),
    ])
}

fn status(ledger: &Temp, flags: &str) -> Output {
    clconv(&[
        "check",
        "--exhaustive",
        "--status",
        RUN,
        "--flags",
        flags,
        "--tier",
        "quick",
        "--ledger",
        ledger.s(),
    ])
}

#[test]
fn a_run_whose_machine_code_the_ledger_proves_is_skipped() {
    let ledger = Temp::new("skip.tsv");
    let first = sweep(&ledger, "sse2");
    assert_eq!(first.status.code(), Some(0), "{}", stdout(&first));
    assert!(stdout(&first).contains("1 runs passed, 0 failed (0 skipped"));
    let lines = ledger.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let fields: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(fields[1..7], ["PASS", "sse2", "quick", RUN, "packed", RUN]);
    assert_eq!(fields[7..10], ["65536", "0", "0"]);
    // Again: its machine code is proven, so nothing runs and nothing is appended.
    let second = sweep(&ledger, "sse2");
    assert_eq!(second.status.code(), Some(0));
    assert!(
        stdout(&second).contains("0 runs passed, 0 failed (1 skipped as done)"),
        "{}",
        stdout(&second)
    );
    assert_eq!(ledger.lines().len(), 1);
    // The status counts it as proven.
    let s = status(&ledger, "sse2");
    assert_eq!(s.status.code(), Some(0), "{}", stdout(&s));
    assert!(stdout(&s).starts_with("sse2 quick: 1 of 1 runs proven\n"));
    assert!(stdout(&s).ends_with(
        "1 of 1 runs proven on this build's machine code (1 flag sets, quick tier), \
         0 mismatches recorded\n"
    ));
}

#[test]
fn other_machine_code_is_not_skipped() {
    let ledger = Temp::new("flags.tsv");
    assert_eq!(sweep(&ledger, "sse2").status.code(), Some(0));
    // SSE4.1 compiles the run to other code: it is swept, and gets its own line.
    let s = status(&ledger, "sse4.1");
    assert!(stdout(&s).contains("sse4.1 quick: 0 of 1 runs proven\n"));
    assert!(stdout(&s).contains(&format!("  not proven: {RUN} packed\n")));
    let other = sweep(&ledger, "sse4.1");
    assert!(
        stdout(&other).contains("1 runs passed, 0 failed (0 skipped"),
        "{}",
        stdout(&other)
    );
    let lines = ledger.lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let hash = |l: &str| l.split('\t').next().unwrap().to_string();
    assert_ne!(hash(&lines[0]), hash(&lines[1]));
}

#[test]
fn a_recorded_failure_of_this_builds_code_fails_the_status() {
    let ledger = Temp::new("fail.tsv");
    assert_eq!(sweep(&ledger, "sse2").status.code(), Some(0));
    let pass = ledger.lines()[0].clone();
    // A failure of machine code this build does not produce: recorded, not counted.
    let elsewhere = pass
        .replacen(&pass[..32], &"0".repeat(32), 1)
        .replace("\tPASS\t", "\tFAIL\t")
        .replace("\t65536\t0\t0\t", "\t65536\t7\t0\t");
    std::fs::write(&ledger.0, format!("{elsewhere}\n")).unwrap();
    let s = status(&ledger, "sse2");
    assert_eq!(s.status.code(), Some(0), "{}", stdout(&s));
    // A failure of this build's code: the run is not proven, and the status fails.
    let here = pass
        .replace("\tPASS\t", "\tFAIL\t")
        .replace("\t65536\t0\t0\t", "\t65536\t7\t0\t");
    std::fs::write(&ledger.0, format!("{pass}\n{here}\n")).unwrap();
    let s = status(&ledger, "sse2");
    assert_eq!(s.status.code(), Some(1), "{}", stdout(&s));
    let out = stdout(&s);
    assert!(out.contains("sse2 quick: 0 of 1 runs proven\n"), "{out}");
    assert!(
        out.contains(&format!("  FAILED in the ledger: {RUN} packed\n")),
        "{out}"
    );
    assert!(out.ends_with("1 mismatches recorded\n"), "{out}");
}

#[test]
fn a_corrupt_ledger_is_an_error_with_its_line_number() {
    let ledger = Temp::new("corrupt.tsv");
    std::fs::write(&ledger.0, "# comment\nnot a ledger line\n").unwrap();
    for o in [status(&ledger, "sse2"), sweep(&ledger, "sse2")] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(o.stdout.is_empty());
        assert!(
            err.starts_with(&format!(
                "clconv: error: ledger {} line 2: 1 fields, expected 13",
                ledger.s()
            )),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The file is left as it was.
    assert_eq!(
        std::fs::read_to_string(&ledger.0).unwrap(),
        "# comment\nnot a ledger line\n"
    );
}

/// `--wide`: a conversion from a 64-bit source, swept on part of the seed budget, gets a
/// ledger line; the status counts it as checked only with the whole budget.
#[test]
fn wide_runs_are_swept_into_the_ledger_on_the_seed_budget() {
    const WIDE: &str = "convert_float_rtz(long)";
    const BUDGET: &str = "16777216";
    let ledger = Temp::new("wide.tsv");
    let common = ["--flags", "sse2", "--tier", "quick", "--ledger", ledger.s()];
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--exhaustive", "--wide", WIDE];
        args.extend(common);
        args.extend(extra);
        clconv(&args)
    };
    let swept = run(&["--inputs", "1048576"]);
    assert_eq!(swept.status.code(), Some(0), "{}", stdout(&swept));
    assert!(stdout(&swept).starts_with(&format!(
        "PASS\t{WIDE}\tpacked\tsse2/quick\t1048576 inputs\t0 mismatches"
    )));
    let lines = ledger.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0].split('\t').nth(7), Some("1048576"));
    let wide_status = || run(&["--status"]);
    let s = wide_status();
    assert_eq!(s.status.code(), Some(0), "{}", stdout(&s));
    assert!(stdout(&s).starts_with("sse2 quick: 0 of 1 runs checked on the seed budget\n"));
    // The same machine code over the whole budget: checked.
    let whole = lines[0].replace("\t1048576\t", &format!("\t{BUDGET}\t"));
    std::fs::write(&ledger.0, format!("{whole}\n")).unwrap();
    let out = stdout(&wide_status());
    assert!(
        out.starts_with("sse2 quick: 1 of 1 runs checked on the seed budget\n"),
        "{out}"
    );
    assert!(out.ends_with(&format!(
        "1 of 1 runs from 64-bit sources checked on the seed budget ({BUDGET} inputs each) on \
         this build's machine code (1 flag sets, quick tier), 0 mismatches recorded\n"
    )));
    // A narrow conversion is not one of them, and --wide needs --exhaustive.
    for args in [
        vec!["check", "--exhaustive", "--wide", "convert_int_rtz(float)"],
        vec!["check", "--wide", WIDE],
    ] {
        let o = clconv(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--wide"), "{err}");
    }
}

#[test]
fn ledger_options_need_exhaustive() {
    let ledger = Temp::new("usage.tsv");
    for args in [
        vec!["check", "--ledger", ledger.s()],
        vec!["check", "--status"],
        vec!["check", "--exhaustive", "--verbose"],
        vec!["check", "--exhaustive", "--status", "--inputs", "5"],
        vec!["check", "--exhaustive", "--status", "--ledger", ledger.s()],
    ] {
        let o = clconv(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    }
}
