//! The status: which runs of this build the ledger proves. It compiles every run the sweeps
//! plan ([`crate::exhaustive::plan`], [`crate::exhaustive::plan_wide`]) for each flag set and
//! tier, fingerprints it ([`crate::ledger::fingerprints`]) and looks the fingerprint up in a
//! [`Ledger`]: above both, so that the ledger (its file and fingerprints) sits below the
//! sweeps, and neither knows the other's callers.

use crate::exhaustive;
use crate::ledger::{fingerprints, Entry, Ledger, LedgerError, Run};
use clconv::jit::{Tier, X64Flags};
use std::fmt;

/// The x86-64 flag sets [`status`] compiles for.
pub const STATUS_FLAGS: [X64Flags; 4] = [
    X64Flags::Sse2,
    X64Flags::Sse41,
    X64Flags::Avx2,
    X64Flags::Avx512,
];

/// One flag set and tier of a [`Status`].
#[derive(Clone, Debug)]
pub struct StatusRow {
    /// The flag set.
    pub flags: X64Flags,
    /// The tier.
    pub tier: Tier,
    /// Runs.
    pub total: usize,
    /// Runs whose machine code has a passing line over every input.
    pub proven: usize,
    /// The runs without one, in plan order.
    pub unproven: Vec<Run>,
    /// The runs whose machine code has a failing line.
    pub failed: Vec<Run>,
}

/// What [`status`] found: per flag set and tier, how many runs of this build's machine code
/// the ledger proves.
#[derive(Clone, Debug)]
pub struct Status {
    /// One row per flag set and tier.
    pub rows: Vec<StatusRow>,
    /// Failing ledger lines whose machine code this build produces.
    pub failures: Vec<Entry>,
    /// How many of the unproven runs each row lists by name (`usize::MAX`: all).
    pub list: usize,
    /// The runs are the conversions from 64-bit sources, proven on the seed budget
    /// ([`exhaustive::plan_wide`]), not over every input.
    pub wide: bool,
}

impl Status {
    /// Runs proven, over every row.
    pub fn proven(&self) -> usize {
        self.rows.iter().map(|r| r.proven).sum()
    }

    /// Runs, over every row.
    pub fn total(&self) -> usize {
        self.rows.iter().map(|r| r.total).sum()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The seed budget checks, it does not prove: its lines say so.
        let (proven, not, total) = if self.wide {
            (
                "runs checked on the seed budget",
                "not checked",
                format!(
                    "runs from 64-bit sources checked on the seed budget ({} inputs each)",
                    crate::seed_budget::WIDE_INPUTS
                ),
            )
        } else {
            ("runs proven", "not proven", "runs proven".to_string())
        };
        for row in &self.rows {
            writeln!(
                f,
                "{} {}: {} of {} {proven}",
                row.flags.name(),
                row.tier.name(),
                row.proven,
                row.total
            )?;
            for r in &row.failed {
                writeln!(
                    f,
                    "  FAILED in the ledger: {} {}",
                    r.request,
                    r.layout.name()
                )?;
            }
            for r in row.unproven.iter().take(self.list) {
                writeln!(f, "  {not}: {} {}", r.request, r.layout.name())?;
            }
            if row.unproven.len() > self.list {
                writeln!(
                    f,
                    "  ... and {} more {not} (--verbose lists them all)",
                    row.unproven.len() - self.list
                )?;
            }
        }
        let flag_sets = {
            let mut seen: Vec<X64Flags> = Vec::new();
            for r in &self.rows {
                if !seen.contains(&r.flags) {
                    seen.push(r.flags);
                }
            }
            seen.len()
        };
        let tiers = {
            let q = self.rows.iter().any(|r| r.tier == Tier::Quick);
            let o = self.rows.iter().any(|r| r.tier == Tier::Optimised);
            match (q, o) {
                (true, true) => "both tiers",
                (true, false) => "quick tier",
                _ => "optimised tier",
            }
        };
        write!(
            f,
            "{} of {} {total} on this build's machine code ({} flag sets, {}), {} mismatches recorded",
            self.proven(),
            self.total(),
            flag_sets,
            tiers,
            self.failures.len()
        )
    }
}

/// Compiles every run of every flag set of `flags` in every tier of `tiers` (the runs of
/// [`exhaustive::plan`] for `filter`, or with `wide` of [`exhaustive::plan_wide`]) and looks
/// each kernel's [`crate::ledger::fingerprint`] up in `ledger`. `list`: how many unproven runs per row to
/// name. Needs no CPU of those flag sets.
#[allow(clippy::too_many_arguments)]
pub fn status(
    ledger: &Ledger,
    filter: &str,
    wide: bool,
    flags: &[X64Flags],
    tiers: &[Tier],
    list: usize,
    threads: usize,
) -> Result<Status, LedgerError> {
    let groups = if wide {
        exhaustive::plan_wide(filter)
    } else {
        exhaustive::plan(filter)
    }
    .map_err(|e| LedgerError::Compile {
        what: "the plan".into(),
        why: e.to_string(),
    })?;
    let runs: Vec<(Run, u64)> = groups
        .iter()
        .flat_map(|g| g.runs.iter().map(move |r| (*r, g.input_count())))
        .collect();
    let only_runs: Vec<Run> = runs.iter().map(|(r, _)| *r).collect();
    let mut rows = Vec::new();
    let mut failures: Vec<Entry> = Vec::new();
    for &fl in flags {
        for &tier in tiers {
            let hashes = fingerprints(fl, tier, &only_runs, threads)?;
            let mut row = StatusRow {
                flags: fl,
                tier,
                total: runs.len(),
                proven: 0,
                unproven: Vec::new(),
                failed: Vec::new(),
            };
            for ((run, inputs), hash) in runs.iter().zip(&hashes) {
                if ledger.fails(hash) {
                    row.failed.push(*run);
                    for e in ledger.lines_of(hash).filter(|e| !e.passed) {
                        if !failures.contains(e) {
                            failures.push(e.clone());
                        }
                    }
                } else if ledger.proves(hash, *inputs) {
                    row.proven += 1;
                } else {
                    row.unproven.push(*run);
                }
            }
            rows.push(row);
        }
    }
    Ok(Status {
        rows,
        failures,
        list,
        wide,
    })
}
