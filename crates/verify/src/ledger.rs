//! The ledger: which exhaustive sweeps hold for which machine code.
//!
//! A result of `clconv check --exhaustive` is about machine code, not about a commit: a change
//! to the lowering, to a table row or to Cranelift may change a kernel's code or leave it
//! alone. So every swept kernel gets a line in a ledger file (`verification/ledger.tsv` in the
//! repository), keyed by a [`fingerprint`] of exactly what a run of it executes, and
//! [`crate::status::status`] compiles every run of the build at hand and looks its fingerprint up: a run is
//! *proven* when the ledger has a passing line for its fingerprint over every input.
//!
//! # What the fingerprint covers
//!
//! SHA-256 (the first 128 bits, as 32 hex digits) of, in order: a format tag
//! ([`FORMAT`]); the kernel's request and layout (the [`shared_kernel`] every run of the line
//! executes: what the code must compute) and the static rounding mode; the MXCSR the JIT loads
//! for the call (rounding control, exceptions masked, no flush-to-zero or denormals-are-zero);
//! the granule the JIT splits calls by; the code's alignment; every relocation (offset, kind,
//! addend, target); and the code bytes themselves, constants included, as Cranelift emitted
//! them ([`CodeCompiler`]: the JIT's own compile path, so the sweep's JIT runs these bytes).
//! Two runs with equal fingerprints call the same bytes for the same kernel, under the same
//! MXCSR, split the same way, on buffers of the same layout.
//!
//! Not in it, by design: the flag set and the tier. Where sse4.1 and avx2 (or the quick and
//! the optimised tier) give a kernel the same bytes, it is the same code and one sweep proves
//! both; where they differ, the fingerprints differ. Also not in it: the JIT's Rust driver
//! (`Kernel::run_bytes`, `kernel::run_in_granules`, the `asm!` call) and the libcall helpers
//! a relocation resolves to (`ceilf` … without SSE4.1); those are checked per request, every
//! width and buffer length, on every flag set, by `crates/verify/tests/matrix.rs`, and a
//! change to them is not seen by the ledger.
//!
//! Every width of a conversion runs, in the packed layout, on its scalar conversion's kernel
//! with `lanes` times the count ([`shared_kernel`]); its runs share the kernel's line.
//!
//! # The file
//!
//! Tab-separated, one line per swept kernel (`#` lines are comments):
//!
//! ```text
//! hash  result  flags  tier  kernel  layout  runs  inputs  mismatches  corrections  seconds  commit  date
//! ```
//!
//! `result` is `PASS` or `FAIL`; `flags` and `tier` what the sweep ran with (`host` too);
//! `runs` the requests of this sweep that ran on the kernel, comma-separated; `commit` the
//! checkout's commit when the sweep started (`-dirty` if its code had uncommitted changes);
//! `date` the UTC day the line was written. Any other line is a [`LedgerError::Line`] with its
//! line number.
//!
//! ```
//! use clconv_verify::ledger::Ledger;
//! let ledger = Ledger::parse("# a comment\n", "ledger.tsv").unwrap();
//! assert!(ledger.entries().is_empty());
//! let bad = Ledger::parse("PASS\n", "ledger.tsv").unwrap_err();
//! assert_eq!(bad.to_string(), "ledger ledger.tsv line 1: 1 fields, expected 13 (see the \
//!     `ledger` module's documentation for the columns)");
//! ```

use clconv::jit::{shared_kernel, CodeCompiler, KernelCode, Tier, X64Flags};
use clconv::{Layout, Request, Rounding};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::path::Path;

/// One kernel run over every input: a request in one buffer layout.
///
/// ```
/// use clconv_verify::ledger::Run;
/// use clconv::{Extensions, Layout, Request};
/// let run = Run {
///     request: Request::parse("convert_int3(float3)", Extensions::default()).unwrap(),
///     layout: Layout::Aligned,
/// };
/// assert_eq!(run.to_string(), "convert_int3(float3)\taligned");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Run {
    /// The request.
    pub request: Request,
    /// The layout of its buffers (differs from packed only for 3-component vectors).
    pub layout: Layout,
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\t{}", self.request, self.layout.name())
    }
}

/// The format tag hashed first: a change of what the fingerprint covers changes it.
pub const FORMAT: &str = "clconv-ledger-1";

/// The columns of a ledger line, in order.
pub const COLUMNS: [&str; 13] = [
    "hash",
    "result",
    "flags",
    "tier",
    "kernel",
    "layout",
    "runs",
    "inputs",
    "mismatches",
    "corrections",
    "seconds",
    "commit",
    "date",
];

/// The fingerprint of a kernel's machine code: 32 hex digits (see the
/// [module documentation](self) for what it covers).
///
/// ```
/// use clconv::jit::{CodeCompiler, Tier, X64Flags};
/// use clconv::{Extensions, Layout, Request, Rounding};
/// use clconv_verify::ledger::fingerprint;
/// let r = Request::parse("convert_int_rte(float)", Extensions::default()).unwrap();
/// let code = |flags| {
///     let c = CodeCompiler::new(flags, Rounding::Rte).unwrap();
///     fingerprint(&c.compile(&r, Layout::Packed, Tier::Optimised).unwrap())
/// };
/// // Without SSE4.1 there is no roundps: other code, another fingerprint.
/// assert_ne!(code(X64Flags::Sse2), code(X64Flags::Sse41));
/// assert_eq!(code(X64Flags::Sse2).len(), 32);
/// ```
pub fn fingerprint(code: &KernelCode) -> String {
    let mut h = Sha256::new();
    let mut field = |name: &str, value: &[u8]| {
        h.update(name.as_bytes());
        h.update((value.len() as u64).to_le_bytes());
        h.update(value);
    };
    field("format", FORMAT.as_bytes());
    field("kernel", code.kernel.0.to_string().as_bytes());
    field("layout", code.kernel.1.name().as_bytes());
    field("static-mode", code.static_mode.to_string().as_bytes());
    field("mxcsr", &code.mxcsr.to_le_bytes());
    field("granule", &(code.granule as u64).to_le_bytes());
    field("alignment", &code.alignment.to_le_bytes());
    field(
        "relocations",
        &(code.relocations.len() as u64).to_le_bytes(),
    );
    for r in &code.relocations {
        field("relocation", r.as_bytes());
    }
    field("code", &code.bytes);
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a ledger could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The file could not be read or written.
    #[error("ledger {path}: {why}")]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        why: String,
    },
    /// A line is not a ledger line.
    #[error("ledger {path} line {line}: {why}")]
    Line {
        /// The path.
        path: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    /// A kernel could not be compiled for the status.
    #[error("cannot compile {what}: {why}")]
    Compile {
        /// The run, flag set and tier.
        what: String,
        /// The compiler's message.
        why: String,
    },
}

/// One ledger line: a sweep of one kernel's machine code.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The [`fingerprint`] of the machine code.
    pub hash: String,
    /// Every element equal to the reference's, and the kernel ran.
    pub passed: bool,
    /// The flag set swept on (`host`, `sse2`, ...).
    pub flags: String,
    /// The tier swept.
    pub tier: Tier,
    /// The kernel's request (canonical name).
    pub kernel: String,
    /// The kernel's layout.
    pub layout: Layout,
    /// The requests of the sweep that ran on this kernel.
    pub runs: Vec<String>,
    /// Distinct inputs converted.
    pub inputs: u64,
    /// Wrong elements.
    pub mismatches: u64,
    /// Fast-path corrections.
    pub corrections: u64,
    /// Wall time of the kernel's group, in seconds.
    pub seconds: f64,
    /// The checkout's commit when the sweep started.
    pub commit: String,
    /// The UTC day the line was written, `YYYY-MM-DD`.
    pub date: String,
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1}\t{}\t{}",
            self.hash,
            if self.passed { "PASS" } else { "FAIL" },
            self.flags,
            self.tier.name(),
            self.kernel,
            self.layout.name(),
            self.runs.join(","),
            self.inputs,
            self.mismatches,
            self.corrections,
            self.seconds,
            self.commit,
            self.date
        )
    }
}

impl Entry {
    /// Parses one line (without its line break); the error says what is wrong.
    fn parse(line: &str) -> Result<Entry, String> {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != COLUMNS.len() {
            return Err(format!(
                "{} fields, expected {} (see the `ledger` module's documentation for the columns)",
                f.len(),
                COLUMNS.len()
            ));
        }
        let shown = |s: &str| -> String {
            let mut t: String = s.chars().take(40).collect();
            if t.len() < s.len() {
                t.push_str("...");
            }
            format!("{t:?}")
        };
        let hash = f[0];
        if hash.len() != 32
            || !hash
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            return Err(format!(
                "hash {} is not 32 lowercase hex digits",
                shown(hash)
            ));
        }
        let passed = match f[1] {
            "PASS" => true,
            "FAIL" => false,
            other => return Err(format!("result {} is neither PASS nor FAIL", shown(other))),
        };
        if !X64Flags::ALL.iter().any(|x| x.name() == f[2]) {
            return Err(format!(
                "flags {} is not host, sse2, sse4.1, avx2 or avx512",
                shown(f[2])
            ));
        }
        let tier = match f[3] {
            "optimised" => Tier::Optimised,
            "quick" => Tier::Quick,
            other => {
                return Err(format!(
                    "tier {} is neither optimised nor quick",
                    shown(other)
                ))
            }
        };
        if f[4].is_empty() {
            return Err("the kernel column is empty".into());
        }
        let layout = match f[5] {
            "packed" => Layout::Packed,
            "aligned" => Layout::Aligned,
            other => {
                return Err(format!(
                    "layout {} is neither packed nor aligned",
                    shown(other)
                ))
            }
        };
        let number = |i: usize| -> Result<u64, String> {
            f[i].parse()
                .map_err(|_| format!("{} {} is not a whole number", COLUMNS[i], shown(f[i])))
        };
        let (inputs, mismatches, corrections) = (number(7)?, number(8)?, number(9)?);
        let seconds: f64 = f[10]
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| format!("seconds {} is not a number of seconds", shown(f[10])))?;
        if passed && mismatches > 0 {
            return Err(format!("a PASS line with {mismatches} mismatches"));
        }
        let date = f[12];
        let date_ok = date.len() == 10
            && date.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        if !date_ok {
            return Err(format!("date {} is not YYYY-MM-DD", shown(date)));
        }
        Ok(Entry {
            hash: hash.to_string(),
            passed,
            flags: f[2].to_string(),
            tier,
            kernel: f[4].to_string(),
            layout,
            runs: split_runs(f[6]),
            inputs,
            mismatches,
            corrections,
            seconds,
            commit: f[11].to_string(),
            date: date.to_string(),
        })
    }
}

/// The header comment a new ledger file starts with.
pub const HEADER: &str = "# clconv exhaustive ledger: one line per swept kernel machine code; \
see crates/verify/src/ledger.rs for what the hash covers. Written by `clconv check --exhaustive \
--ledger FILE`, read by `clconv check --exhaustive --status`.\n";

/// A ledger's lines, by fingerprint.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    entries: Vec<Entry>,
    by_hash: HashMap<String, Vec<usize>>,
}

impl Ledger {
    /// Parses a ledger's text; `path` is for the messages.
    pub fn parse(text: &str, path: &str) -> Result<Ledger, LedgerError> {
        let mut ledger = Ledger::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let entry = Entry::parse(line).map_err(|why| LedgerError::Line {
                path: path.to_string(),
                line: i + 1,
                why,
            })?;
            ledger.push(entry);
        }
        Ok(ledger)
    }

    /// Reads the ledger at `path`; a missing file is an empty ledger.
    pub fn read(path: &Path) -> Result<Ledger, LedgerError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ledger::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ledger::default()),
            Err(e) => Err(LedgerError::Io {
                path: path.display().to_string(),
                why: e.to_string(),
            }),
        }
    }

    fn push(&mut self, entry: Entry) {
        self.by_hash
            .entry(entry.hash.clone())
            .or_default()
            .push(self.entries.len());
        self.entries.push(entry);
    }

    /// Every line, in file order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The lines of machine code `hash`.
    pub fn lines_of(&self, hash: &str) -> impl Iterator<Item = &Entry> {
        self.by_hash
            .get(hash)
            .into_iter()
            .flatten()
            .map(|&i| &self.entries[i])
    }

    /// Whether a passing line proves machine code `hash` over at least `inputs` inputs.
    pub fn proves(&self, hash: &str, inputs: u64) -> bool {
        self.lines_of(hash).any(|e| e.passed && e.inputs >= inputs)
    }

    /// Whether a line records a failure of machine code `hash`.
    pub fn fails(&self, hash: &str) -> bool {
        self.lines_of(hash).any(|e| !e.passed)
    }

    /// Appends `entries` to the file at `path` (creating it, with [`HEADER`], if missing) and
    /// syncs it, so that an interrupted sweep keeps every line written.
    pub fn append(path: &Path, entries: &[Entry]) -> Result<(), LedgerError> {
        let error = |e: std::io::Error| LedgerError::Io {
            path: path.display().to_string(),
            why: e.to_string(),
        };
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(error)?;
        let mut text = String::new();
        if f.metadata().map_err(error)?.len() == 0 {
            text.push_str(HEADER);
            text.push('#');
            text.push_str(&COLUMNS.join("\t"));
            text.push('\n');
        }
        for e in entries {
            text.push_str(&format!("{e}\n"));
        }
        f.write_all(text.as_bytes()).map_err(error)?;
        f.sync_data().map_err(error)
    }
}

/// The `runs` column's names: separated by commas outside parentheses, since a chain's name
/// has commas inside them (`(float4)(convert_float2_rte(double2), 0, 0)`).
fn split_runs(column: &str) -> Vec<String> {
    let mut runs = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in column.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                runs.push(&column[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    runs.push(&column[start..]);
    runs.into_iter()
        .filter(|r| !r.is_empty())
        .map(String::from)
        .collect()
}

/// Today's UTC date, `YYYY-MM-DD`.
///
/// ```
/// let d = clconv_verify::ledger::today();
/// assert_eq!((d.len(), &d[4..5], &d[7..8]), (10, "-", "-"));
/// ```
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

// ---------------------------------------------------------------------------------------------
// The status
// ---------------------------------------------------------------------------------------------

/// The fingerprints of `runs`' kernels for one flag set and tier, compiled in parallel on
/// `threads` threads (0: one per core), each kernel once.
pub fn fingerprints(
    flags: X64Flags,
    tier: Tier,
    runs: &[Run],
    threads: usize,
) -> Result<Vec<String>, LedgerError> {
    let compiler = CodeCompiler::new(flags, Rounding::Rte).map_err(|e| LedgerError::Compile {
        what: format!("{} {}", flags.name(), tier.name()),
        why: e.to_string(),
    })?;
    // Each shared kernel once.
    let mut kernels: Vec<(Request, Layout)> = Vec::new();
    let mut index: HashMap<(Request, Layout), usize> = HashMap::new();
    let of_run: Vec<usize> = runs
        .iter()
        .map(|r| {
            let (k, l, _) = shared_kernel(&r.request, r.layout);
            *index.entry((k, l)).or_insert_with(|| {
                kernels.push((k, l));
                kernels.len() - 1
            })
        })
        .collect();
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, kernels.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut hashes: Vec<Option<Result<String, LedgerError>>> = vec![None; kernels.len()];
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((k, l)) = kernels.get(i) else {
                            return done;
                        };
                        let hash = compiler
                            .compile(k, *l, tier)
                            .map(|code| fingerprint(&code))
                            .map_err(|e| LedgerError::Compile {
                                what: format!(
                                    "{k} {} for {} {}",
                                    l.name(),
                                    flags.name(),
                                    tier.name()
                                ),
                                why: e.to_string(),
                            });
                        done.push((i, hash));
                    }
                })
            })
            .collect();
        for w in workers {
            // Compiling catches Cranelift's panics; a worker that panics anyway leaves its
            // kernels unset, reported below.
            if let Ok(done) = w.join() {
                for (i, h) in done {
                    hashes[i] = Some(h);
                }
            }
        }
    });
    let hashes: Vec<String> = hashes
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            h.unwrap_or_else(|| {
                Err(LedgerError::Compile {
                    what: format!("{} {}", kernels[i].0, kernels[i].1.name()),
                    why: "a compiling thread panicked".into(),
                })
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(of_run.into_iter().map(|k| hashes[k].clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(hash: &str, result: &str) -> String {
        format!(
            "{hash}\t{result}\tsse2\tquick\tconvert_int(uchar)\tpacked\tconvert_int(uchar),\
             convert_int2(uchar2)\t256\t{}\t0\t0.1\tabc1234\t2026-11-25",
            if result == "PASS" { 0 } else { 3 }
        )
    }

    #[test]
    fn lines_round_trip() {
        let text = line(&"ab".repeat(16), "PASS");
        let ledger = Ledger::parse(&text, "l").unwrap();
        assert_eq!(ledger.entries()[0].to_string(), text);
        assert_eq!(ledger.entries()[0].runs.len(), 2);
        assert!(ledger.proves(&"ab".repeat(16), 256));
        assert!(!ledger.proves(&"ab".repeat(16), 257));
        assert!(!ledger.fails(&"ab".repeat(16)));
    }

    /// A chain's name keeps its commas: runs are split outside parentheses only.
    #[test]
    fn chain_names_in_the_runs_column() {
        let chain = "(float4)(convert_float2_rte(double2), 0, 0)";
        assert_eq!(
            split_runs(&format!("{chain},convert_int(uchar)")),
            [chain, "convert_int(uchar)"]
        );
        assert_eq!(split_runs(""), Vec::<String>::new());
    }

    /// Every kind of corrupt line is an error naming its line number and what is wrong.
    #[test]
    fn corrupt_lines_are_errors_with_their_line_number() {
        let good = line(&"0f".repeat(16), "PASS");
        let cases: Vec<(String, &str)> = vec![
            ("hello".into(), "1 fields, expected 13"),
            (good.replace("PASS", "MAYBE"), "neither PASS nor FAIL"),
            (
                good.replacen(&"0f".repeat(16), "xyz", 1),
                "not 32 lowercase hex",
            ),
            (
                good.replacen(&"0f".repeat(16), &"0F".repeat(16), 1),
                "not 32 lowercase hex",
            ),
            (good.replace("\tsse2\t", "\tneon\t"), "flags \"neon\""),
            (
                good.replace("\tquick\t", "\tslow\t"),
                "neither optimised nor quick",
            ),
            (
                good.replace("\tpacked\t", "\tdiagonal\t"),
                "neither packed nor aligned",
            ),
            (
                good.replace("\t256\t", "\t2^8\t"),
                "inputs \"2^8\" is not a whole number",
            ),
            (
                good.replace("\t0.1\t", "\tNaN\t"),
                "not a number of seconds",
            ),
            (good.replace("2026-11-25", "yesterday"), "not YYYY-MM-DD"),
            (good.replace("\t0\t0.1", "\t0\t0.1\textra"), "14 fields"),
            (
                line(&"0f".repeat(16), "FAIL").replace("FAIL", "PASS"),
                "a PASS line with 3 mismatches",
            ),
        ];
        for (bad, why) in cases {
            let text = format!("# header\n{good}\n\n{bad}\n");
            let e = Ledger::parse(&text, "v/ledger.tsv").unwrap_err();
            match &e {
                LedgerError::Line { line, why: w, path } => {
                    assert_eq!((*line, path.as_str()), (4, "v/ledger.tsv"), "{bad}");
                    assert!(w.contains(why), "{bad}: {w}");
                }
                other => panic!("{bad}: {other:?}"),
            }
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_417), (2025, 11, 25));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    /// The fingerprint is of the machine code: the same for every width of a conversion
    /// (one kernel), different between layouts, flag sets with other code, and kernels.
    #[test]
    fn fingerprints_follow_the_machine_code() {
        use clconv::Extensions;
        let run = |name: &str, layout| Run {
            request: Request::parse(name, Extensions::with_fp16()).unwrap(),
            layout,
        };
        let runs = [
            run("convert_int_rte(float)", Layout::Packed),
            run("convert_int4_rte(float4)", Layout::Packed),
            run("convert_int3_rte(float3)", Layout::Aligned),
            run("convert_uint_rte(float)", Layout::Packed),
        ];
        let sse2 = fingerprints(X64Flags::Sse2, Tier::Optimised, &runs, 2).unwrap();
        let sse41 = fingerprints(X64Flags::Sse41, Tier::Optimised, &runs, 1).unwrap();
        assert_eq!(sse2[0], sse2[1]);
        assert_ne!(sse2[0], sse2[2]);
        assert_ne!(sse2[0], sse2[3]);
        assert_ne!(sse2[0], sse41[0]);
        // Compiling again gives the same fingerprints.
        assert_eq!(
            sse2,
            fingerprints(X64Flags::Sse2, Tier::Optimised, &runs, 1).unwrap()
        );
    }
}
