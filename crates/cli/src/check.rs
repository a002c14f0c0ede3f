//! `clconv check`: the differential check against the reference, and `clconv check
//! --exhaustive` (see `clconv_verify::exhaustive`).

use crate::args::{self, CheckArgs};
use crate::progress::{ExhaustiveBar, Progress};
use crate::{shown, stdout_error, Usage};
use clconv::jit::{Jit, Tier, Tiering};
use clconv::{Extensions, Request, Rounding};
use clconv_verify::check::Checker;
use clconv_verify::exhaustive::{self, ExhaustiveError, RunResult};
use clconv_verify::ledger::Ledger;
use clconv_verify::status;
use std::io::Write;
use std::process::ExitCode;

/// The most random inputs per source type `check` takes: beyond this the input tables alone
/// need gigabytes.
const MAX_INPUTS: u64 = 1_000_000;

/// `clconv check [FILTER] ...`: every request whose name contains FILTER against the reference
/// on random and special inputs, on both JIT tiers unless `--tier` picks one; ends with the
/// line `N passed, N failed`, status 1 if any failed.
pub fn check(args: &CheckArgs) -> Result<ExitCode, Usage> {
    if args.exhaustive {
        return check_exhaustive(args);
    }
    if args.state.is_some()
        || args.reference_all
        || args.ledger.is_some()
        || args.status
        || args.wide
    {
        return Err(Usage(
            "--state, --ledger, --status, --wide and --reference-all go with --exhaustive".into(),
        ));
    }
    if args.verbose {
        return Err(Usage("--verbose goes with --status".into()));
    }
    let filter = args::filter("check", &args.filter)?;
    let random = args::number("--inputs", args.inputs.as_deref(), 1000)?;
    if random > MAX_INPUTS {
        return Err(Usage(format!(
            "--inputs is at most {MAX_INPUTS} (random inputs per source type), not {random}"
        )));
    }
    let random = random as usize;
    let seed = args::number("--seed", args.seed.as_deref(), 1)?;
    let ext = Extensions::with_fp16();
    // One JIT per tier, each compiling only that tier's code, so each check is of one tier.
    let mut jits = Vec::new();
    for tier in args::tiers(args.tier.as_deref())? {
        let jit = Jit::with_options(args.flags.get()?, ext, Rounding::Rte)?;
        jit.set_tiering(Tiering::only(tier));
        jits.push((tier, jit));
    }
    // A language's spelling (`wgsl:i32(f32)`) names one request; other filters match names.
    let requests: Vec<Request> = match clconv::languages::split(filter) {
        Some(_) => vec![Request::parse(filter, ext).map_err(|e| Usage(e.to_string()))?],
        // What `clconv list` prints; a trapping conversion stops at its first trap, which a
        // differential check of every input does not expect (`tests/traps.rs` checks those).
        None => Request::every_named(ext)
            .into_iter()
            .chain(clconv::languages::chains())
            .filter(|r| !matches!(r, Request::Convert(c) if c.rules().traps()))
            .filter(|r| r.to_string().contains(filter) || r.mangled().contains(filter))
            .collect(),
    };
    // The MX block requests whose names contain the filter (`clconv check mx`), checked on
    // their seed blocks (`clconv_verify::mx_blocks`); their kernels have one tier.
    let mx: Vec<clconv::mx::MxRequest> = match clconv::languages::split(filter) {
        Some(_) => Vec::new(),
        None => clconv::mx::MxRequest::all()
            .into_iter()
            .filter(|r| r.to_string().contains(filter))
            .collect(),
    };
    if requests.is_empty() && mx.is_empty() {
        return Err(Usage(format!(
            "no request's name contains {} (try `clconv list`)",
            shown(filter)
        )));
    }
    let (mx_passed, mx_failed) = check_mx(&jits[0].1, &mx)?;
    if requests.is_empty() {
        out!("{mx_passed} passed, {mx_failed} failed");
        return Ok(if mx_failed == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(requests.len());
    let progress = Progress::new(requests.len());
    let results: Vec<(usize, usize, Vec<String>, Option<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let jits = &jits;
                let requests = &requests;
                let progress = &progress;
                s.spawn(move || {
                    let mut checkers: Vec<(Tier, Checker)> = jits
                        .iter()
                        .map(|(tier, jit)| (*tier, Checker::new(jit.clone(), random, seed)))
                        .collect();
                    let (mut passed, mut failed, mut reports) = (0, 0, Vec::new());
                    for r in requests.iter().skip(t).step_by(threads) {
                        let mut ok = true;
                        for (tier, checker) in &mut checkers {
                            let tier = tier.name();
                            match checker.check(r) {
                                Ok(o) if o.mismatch_count == 0 => {}
                                Ok(o) => {
                                    ok = false;
                                    reports.push(format!(
                                        "FAILED {r} [{tier} tier]: {} mismatches",
                                        o.mismatch_count
                                    ));
                                    reports.extend(o.mismatches.iter().map(|m| format!("  {m}")));
                                }
                                Err(e) => {
                                    ok = false;
                                    reports.push(format!("FAILED {r} [{tier} tier]: {e}"));
                                }
                            }
                        }
                        if ok {
                            passed += 1;
                        } else {
                            failed += 1;
                        }
                        progress.tick(r);
                    }
                    (passed, failed, reports, None)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or((0, 1, vec![], Some("a checker thread panicked".into())))
            })
            .collect()
    });
    progress.finish();
    let (mut passed, mut failed) = (0, 0);
    for (p, f, reports, panic) in results {
        passed += p;
        failed += f;
        for line in reports {
            out!("{line}");
        }
        if let Some(p) = panic {
            out!("FAILED: {p}");
        }
    }
    let (passed, failed) = (passed + mx_passed, failed + mx_failed);
    out!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Checks each MX request's kernel against the reference (printing what fails): passed and
/// failed counts.
fn check_mx(jit: &Jit, requests: &[clconv::mx::MxRequest]) -> Result<(usize, usize), Usage> {
    let (mut passed, mut failed) = (0, 0);
    for r in requests {
        match clconv_verify::mx_blocks::check(jit, r) {
            Ok(_) => passed += 1,
            Err(e) => {
                failed += 1;
                out!("FAILED {e}");
            }
        }
    }
    Ok((passed, failed))
}

/// `clconv check --exhaustive [FILTER] ...`: see `clconv_verify::exhaustive`. A line per
/// finished run on standard output, then the summary; status 1 if any run failed.
fn check_exhaustive(args: &CheckArgs) -> Result<ExitCode, Usage> {
    if args.status {
        return status(args);
    }
    if args.verbose {
        return Err(Usage("--verbose goes with --status".into()));
    }
    let filter = args::filter("check", &args.filter)?.to_string();
    let inputs = match args.inputs.as_deref() {
        None => None,
        Some(n) => Some(args::number("--inputs", Some(n), 0)?),
    };
    // On a terminal an indicatif bar (fed by the run's progress events); otherwise the
    // verifier's own plain lines.
    let bar = ExhaustiveBar::on_terminal();
    let options = exhaustive::Options {
        filter,
        flags: args.flags.get()?,
        tier: args::tier(args.tier.as_deref())?,
        inputs,
        seed: args::number("--seed", args.seed.as_deref(), 1)?,
        reference_all: args.reference_all,
        threads: 0,
        state: args.state.as_deref().map(Into::into),
        progress: bar.is_none(),
        ledger: args.ledger.as_deref().map(Into::into),
        commit: commit(),
        wide: args.wide,
    };
    let mut stdout = std::io::stdout().lock();
    let mut report = |r: &RunResult| {
        let mut write = || {
            writeln!(stdout, "{r}")?;
            stdout.flush()
        };
        match &bar {
            // The bar leaves the terminal while the line is written.
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    };
    let summary = match &bar {
        Some(bar) => exhaustive::run_with_progress(&options, &mut report, &|e| bar.event(e)),
        None => exhaustive::run(&options, &mut report),
    };
    if let Some(bar) = &bar {
        bar.finish();
    }
    let summary = summary.map_err(|e| match e {
        ExhaustiveError::Ledger(e) => Usage(e.to_string()),
        ExhaustiveError::Output(io) => stdout_error(io),
        other => Usage(other.to_string()),
    })?;
    writeln!(stdout, "{summary}").map_err(stdout_error)?;
    Ok(if summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The repository this binary was built from (its ledger is `verification/ledger.tsv` there).
const REPOSITORY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The repository's commit, for the ledger's lines: `git rev-parse --short=7 HEAD`, with
/// `-dirty` when the code that builds kernels has uncommitted changes; `unknown` without git.
fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(REPOSITORY)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--short=7", "HEAD"]) else {
        return "unknown".into();
    };
    let changes = git(&[
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        "src",
        "lowering-tables",
        "crates",
        "Cargo.toml",
        "Cargo.lock",
    ]);
    match changes {
        Some(c) if c.is_empty() => head,
        _ => format!("{head}-dirty"),
    }
}

/// `clconv check --exhaustive --status`: see `clconv_verify::status::status`. One line per
/// flag set and tier, the runs not proven (the first few, or all with --verbose), the total
/// line; status 1 only if the ledger records a failure of this build's machine code.
fn status(args: &CheckArgs) -> Result<ExitCode, Usage> {
    if args.state.is_some() || args.reference_all || args.inputs.is_some() || args.seed.is_some() {
        return Err(Usage(
            "--status takes FILTER, --wide, --ledger, --flags, --tier and --verbose only".into(),
        ));
    }
    let filter = args::filter("check", &args.filter)?;
    let path: std::path::PathBuf = match &args.ledger {
        Some(p) => p.into(),
        None => std::path::Path::new(REPOSITORY).join(if args.wide {
            "verification/ledger-64.tsv"
        } else {
            "verification/ledger.tsv"
        }),
    };
    if !path.is_file() {
        return Err(Usage(format!(
            "no ledger file at {} (give one with --ledger FILE)",
            shown(&path.display().to_string())
        )));
    }
    let ledger = Ledger::read(&path)?;
    let flags = match args.flags.flags.as_deref() {
        None => status::STATUS_FLAGS.to_vec(),
        Some(f) => vec![args::flags(Some(f))?],
    };
    let tiers: Vec<Tier> = args::tiers(args.tier.as_deref())?
        .into_iter()
        .rev() // quick first: the cheaper sweeps
        .collect();
    let list = if args.verbose { usize::MAX } else { 5 };
    let status = status::status(&ledger, filter, args.wide, &flags, &tiers, list, 0)?;
    out!("{status}");
    Ok(if status.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
