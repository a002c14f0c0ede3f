//! Exhaustive verification: every input of every conversion from a source of at most 32 bits
//! (`float`, `int`, `uint`, and the small `char` … `ushort` and `half`), through the JIT kernels,
//! compared with an oracle, on all cores. `clconv check --exhaustive [FILTER]` runs it.
//!
//! # Why it is sound, and fast enough
//!
//! The soft-float reference ([`clconv::reference`]) runs at ~30-40 M elements per second and
//! core: 2^32 inputs of one request take two minutes on one core, and there are ~2,000 runs
//! (1,710 `float`/`int`/`uint`-source conversions, the 285 three-component ones in both
//! layouts). So every run is compared with a *fast path*, [`FastConverter`], and the
//! reference is consulted where it decides something:
//!
//! 1. **Two independent implementations.** The JIT kernels are clconv's Cranelift lowering
//!    (`src/lower/`), compiled by Cranelift, executed on the SIMD and floating-point units.
//!    [`FastConverter`] is written here from the definitions of [`clconv::reference`] in plain
//!    integer arithmetic (decode the source into sign × integer × 2^e, round by the mode with
//!    the remainder bits, clamp or encode): it uses no float instruction, no Cranelift, and no
//!    code from `src/lower/` or the reference. A wrong bit can only go unnoticed where both
//!    compute the *same* wrong bit for the same input.
//! 2. **Every disagreement goes to the reference.** Where a kernel and the fast path differ,
//!    [`reference::ElementConverter`](clconv::reference::ElementConverter) decides: if the kernel
//!    is wrong it is a mismatch (the run fails); if the fast path is wrong the input is counted
//!    as a *correction* (a fast-path bug to fix, never a silent pass).
//! 3. **The fast path is itself checked against the reference**, per group of runs, on every
//!    special input of [`check::inputs`] (zeros, subnormals, every power of two, ties around
//!    every integer range edge, NaN payloads, and for 8/16-bit sources every input) and on a
//!    random sample of 1 input in [`SAMPLE_EVERY`] (67 M per 32-bit source): the kernels'
//!    results at those inputs are compared with the reference directly, so even an identical
//!    wrong bit in both would be caught there. `--reference-all` compares every input with the
//!    reference (slow: minutes per group), which proves the fast path on those groups outright.
//!
//! Runs are grouped by their per-element function ([`FastConverter`]): `convert_int4_sat_rte`
//! `(float4)` and `convert_int_rte(float)` compute the same bits per element, so the fast path
//! and the reference sample are computed once per chunk of inputs and every kernel of the group
//! is compared with them. Each kernel's destination is first filled with the complement of the
//! expected bytes, so an element the kernel fails to write cannot pass, and 64 guard bytes after
//! it must stay untouched.
//!
//! Runs whose JIT kernel is the same machine code execute once: in the packed layout every
//! width of a conversion runs on the scalar conversion's kernel with `lanes` times the count
//! ([`clconv::jit::shared_kernel`]), so `convert_int4_sat_rte(float4)` over 2^32 inputs is
//! `convert_int_sat_rte(float)` over 2^32 inputs. Their result lines say `same machine code
//! as ...`; that each request reaches its shared kernel correctly is checked per request, every
//! width and buffer length, by `tests/matrix.rs`.
//!
//! Three-component vectors run in both layouts: the aligned one converts element by element
//! (the per-element lowering that also finishes every vector kernel's tail), so that lowering
//! too sees every input.
//!
//! The languages' requests beyond the matrix ([`clconv::languages::beyond_the_matrix`]) are
//! swept too. Conversions under PTX's float rules (`.sat` into a float, `.relu`, `.ftz`) are
//! conversions like the others, with the rules in the fast path. Chains (WebAssembly's
//! `f64x2.convert_low_i32x4_u`, GLSL's `packHalf2x16`, HLSL's `f16tof32`) move lanes: their
//! [`ChainSlots`], worked out from the chain's steps, say which slot of a source vector each
//! input goes into (the other slots hold junk the kernel must ignore) and which slot of the
//! result holds its result (the other slots must be zero); a chain of two conversions is a
//! group whose fast path and reference apply both.
//!
//! The conversions from 64-bit sources (`long`, `ulong`, `double`: 2^64 inputs) go through the
//! same machinery on a fixed *seed budget* instead ([`Options::wide`], [`plan_wide`]):
//! [`WIDE_INPUTS`] inputs per run from [`wide_inputs`], drawn around rounding decisions, the
//! special inputs of [`check::inputs`] first and each of those compared with the reference.
//!
//! ```
//! use clconv_verify::exhaustive::{self, Options};
//! // The first 100,000 inputs of one request (all 2^32: leave `inputs` at None).
//! let options = Options {
//!     filter: "convert_uchar_sat_rte(float)".into(),
//!     inputs: Some(100_000),
//!     ..Options::default()
//! };
//! let mut lines = Vec::new();
//! let summary = exhaustive::run(&options, &mut |r| {
//!     lines.push(r.to_string());
//!     Ok(())
//! })
//! .unwrap();
//! assert_eq!(summary.mismatches, 0);
//! assert_eq!(summary.inputs, 100_000);
//! assert!(lines[0].starts_with("PASS\tconvert_uchar_sat_rte(float)\tpacked"));
//! ```

use crate::check::{self, Rng};
use crate::fast_path::FastConverter;
use crate::seed_budget::{wide_inputs, WIDE_INPUTS, WIDE_SEED_INPUTS};
use clconv::chain::{Chain, Step};
use clconv::jit::{Jit, JitError, Kernel, Threads, Tier, Tiering, X64Flags};
use clconv::reference::ElementConverter;
use clconv::request::{Conversion, Request};
use clconv::types::{Extensions, Layout, Rounding, ScalarType, Width};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as Atomic};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One input in this many (on average) is also compared with the soft-float reference.
pub const SAMPLE_EVERY: usize = 64;

/// Inputs per unit of work handed to a thread, for a source of at most 32 bits: small enough
/// that a chunk's buffers (inputs, expected results, the kernel's destination) stay in a
/// core's L2 cache between the fast path, the kernels and the comparison.
const CHUNK: usize = 1 << 16;

/// Bytes after each destination that the kernel must leave alone.
const GUARD: usize = 64;

/// Mismatch examples kept per run.
const EXAMPLES: usize = 4;

/// Extra elements after a chunk (copies of its first ones) so every width gets whole vectors.
const PAD: usize = 16;

// ---------------------------------------------------------------------------------------------
// The plan: which runs, grouped by per-element function
// ---------------------------------------------------------------------------------------------

pub use crate::ledger::Run;

/// Runs that compute the same bits per element, so they share the fast path and the
/// reference sample.
///
/// ```
/// use clconv_verify::exhaustive::plan;
/// let groups = plan("convert_int3_sat_rte(float3)").unwrap();
/// assert_eq!(groups.len(), 1);
/// assert_eq!(groups[0].runs.len(), 2); // packed and aligned
/// ```
#[derive(Clone, Debug)]
pub struct Group {
    /// The per-element function they share.
    pub converter: FastConverter,
    /// The element conversion of the group's first run (the reference evaluates it).
    pub conversion: Conversion,
    /// A chain's second conversion, applied to the first one's bits (HLSL's
    /// `convert_uint(as_ushort(convert_half_rtz(float)))`): its fast path and its conversion.
    pub then: Option<(FastConverter, Conversion)>,
    /// The runs.
    pub runs: Vec<Run>,
}

impl Group {
    /// The number of inputs a run converts: every one, 2^(source bits), for a source of at
    /// most 32 bits; the seed budget [`WIDE_INPUTS`] for a 64-bit source.
    ///
    /// ```
    /// use clconv_verify::exhaustive::{plan, plan_wide};
    /// use clconv_verify::seed_budget::WIDE_INPUTS;
    /// assert_eq!(plan("convert_int(float)").unwrap()[0].input_count(), 1 << 32);
    /// assert_eq!(plan("convert_int(uchar)").unwrap()[0].input_count(), 256);
    /// assert_eq!(plan_wide("convert_int(double)").unwrap()[0].input_count(), WIDE_INPUTS);
    /// ```
    pub fn input_count(&self) -> u64 {
        match self.converter.src.bits() {
            64 => WIDE_INPUTS,
            bits => 1u64 << bits,
        }
    }

    /// Whether the group's source is 64 bits wide: its inputs are the seed budget's
    /// ([`wide_inputs`]), not an enumeration.
    pub fn is_wide(&self) -> bool {
        self.converter.src.bits() == 64
    }

    /// The type of the group's results: the last conversion's destination.
    fn dst(&self) -> ScalarType {
        self.then.map_or(self.converter.dst, |(then, _)| then.dst)
    }

    /// The fast path's result for one input: the conversion, or a chain's two.
    fn convert(&self, x: u64) -> u64 {
        let y = self.converter.convert(x);
        self.then.map_or(y, |(then, _)| then.convert(y))
    }
}

/// Why an exhaustive run could not start or finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExhaustiveError {
    /// No conversion of a source of at most 32 bits matches the filter.
    #[error(
        "no conversion from a source of at most 32 bits has a name containing {filter:?}{hint}"
    )]
    NoRequests {
        /// The filter.
        filter: String,
        /// Why, when known (starts with "; ").
        hint: String,
    },
    /// No conversion from a 64-bit source matches the filter (`--wide`).
    #[error(
        "no conversion from long, ulong or double has a name containing {filter:?}; \
         without --wide, the conversions from narrower sources are checked on every input"
    )]
    NoWideRequests {
        /// The filter (its first 80 characters).
        filter: String,
    },
    /// The JIT could not be set up.
    #[error(transparent)]
    Jit(#[from] JitError),
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] crate::ledger::LedgerError),
    /// The state file could not be read or written.
    #[error("state file {path}: {why}")]
    State {
        /// The path.
        path: String,
        /// The I/O error.
        why: String,
    },
    /// Writing a result failed.
    #[error("cannot write the results: {0}")]
    Output(#[source] std::io::Error),
}

/// The runs whose request name (or mangled name) contains `filter`: every conversion (not
/// `as_`) from a source of at most 32 bits, `half` included, packed layout, and aligned too for
/// 3-component vectors; grouped by per-element function, in a fixed order.
///
/// ```
/// use clconv_verify::exhaustive::plan;
/// let groups = plan("convert_float_rtz(uint").unwrap();
/// let runs: usize = groups.iter().map(|g| g.runs.len()).sum();
/// assert_eq!(runs, 1);
/// assert!(plan("(double)").is_err()); // 64-bit sources have 2^64 inputs
/// ```
pub fn plan(filter: &str) -> Result<Vec<Group>, ExhaustiveError> {
    let (groups, wide) = plan_sources(filter, false);
    if groups.is_empty() {
        let hint = if wide > 0 {
            format!(
                "; it matches {wide} conversions from long, ulong or double, whose 2^64 inputs \
                 cannot be enumerated: check those on the seed budget with --wide, or with \
                 `clconv check FILTER --inputs N`"
            )
        } else {
            "; try `clconv list FILTER`".into()
        };
        return Err(ExhaustiveError::NoRequests {
            filter: shown(filter),
            hint,
        });
    }
    Ok(groups)
}

/// The runs of conversions from 64-bit sources (`long`, `ulong`, `double`) whose name (or
/// mangled name) contains `filter`, grouped as [`plan`] groups: each is checked on the seed
/// budget, [`WIDE_INPUTS`] inputs from [`wide_inputs`].
///
/// ```
/// use clconv_verify::exhaustive::plan_wide;
/// let groups = plan_wide("convert_float3_rtz(long3)").unwrap();
/// assert_eq!(groups[0].runs.len(), 2); // packed and aligned
/// assert!(groups[0].is_wide());
/// assert!(plan_wide("(float)").is_err()); // every input of those: without --wide
/// ```
pub fn plan_wide(filter: &str) -> Result<Vec<Group>, ExhaustiveError> {
    let (groups, _) = plan_sources(filter, true);
    if groups.is_empty() {
        return Err(ExhaustiveError::NoWideRequests {
            filter: shown(filter),
        });
    }
    Ok(groups)
}

/// A bounded part of a filter, for a message: it may be megabytes long.
fn shown(filter: &str) -> String {
    let mut shown: String = filter.chars().take(80).collect();
    if shown.len() < filter.len() {
        shown.push_str("...");
    }
    shown
}

/// The groups of the matching conversions from 64-bit sources (`wide`) or from narrower ones,
/// and how many matching conversions were of the other kind.
fn plan_sources(filter: &str, wide: bool) -> (Vec<Group>, usize) {
    type Key = (FastConverter, Option<FastConverter>);
    let mut groups: BTreeMap<Key, Group> = BTreeMap::new();
    let mut other = 0;
    for request in swept_requests() {
        // The element conversions, one or (a chain's) two.
        let conversions: Vec<Conversion> = match request {
            Request::Convert(conv) => vec![conv.per_element()],
            Request::Chain(chain) => match ChainSlots::new(&chain, Layout::Packed) {
                Some(slots) => slots.conversions,
                None => continue,
            },
            Request::Reinterpret(_) => continue,
        };
        if !matches(filter, &request.to_string()) && !matches(filter, &request.mangled()) {
            continue;
        }
        if (conversions[0].src().elem.bits() > 32) != wide {
            other += 1;
            continue;
        }
        let fast = |c: &Conversion| FastConverter::new(c, Rounding::Rte);
        let converter = fast(&conversions[0]);
        let then = conversions.get(1).map(|c| (fast(c), *c));
        let key = (converter, then.map(|(f, _)| f));
        let group = groups.entry(key).or_insert_with(|| Group {
            converter,
            conversion: conversions[0],
            then,
            runs: Vec::new(),
        });
        group.runs.push(Run {
            request,
            layout: Layout::Packed,
        });
        if request.src().width == Width::W3 {
            group.runs.push(Run {
                request,
                layout: Layout::Aligned,
            });
        }
    }
    (groups.into_values().collect(), other)
}

/// The requests the sweeps take their conversions from: the matrix ([`Request::all`], half
/// included) and what the languages spell beyond it ([`clconv::languages::beyond_the_matrix`]:
/// the conversions under PTX's float rules, and the chains, whose inputs go where
/// [`ChainSlots`] says their kernels read them; of a chain no slot follows, FP4's packing, its
/// conversions).
fn swept_requests() -> impl Iterator<Item = Request> {
    let mut all: std::collections::BTreeSet<Request> =
        Request::all(Extensions::with_fp16()).into_iter().collect();
    for request in clconv::languages::beyond_the_matrix() {
        match &request {
            // A chain whose lanes no slot follows (FP4's `pack_fp4`: two codes share a byte)
            // has its conversions swept as themselves; the packing is checked on every byte and
            // pair of codes by `tests/chains.rs`.
            Request::Chain(chain) if ChainSlots::new(chain, Layout::Packed).is_none() => {
                all.extend(chain.steps().filter_map(|s| match s {
                    Step::Convert(c) => Some(Request::Convert(*c)),
                    _ => None,
                }));
            }
            _ => {
                all.insert(request);
            }
        }
    }
    all.into_iter()
}

/// Where a chain's kernel reads each input and writes each result, worked out from the
/// chain's steps alone (not from its lowering): each lane is followed through the lane moves,
/// reinterpretations and conversions, in units ("slots") of the element function's source and
/// result. `convert_double2_rte(uint4.lo)` reads source slots 0 and 1 of each `uint4` (2 and 3
/// are junk the kernel must ignore) and writes result slots 0 and 1; `(float4)(convert_float2_rte
/// (double2), 0, 0)` writes zeros into slots 2 and 3; `convert_float2(as_half2(uint))` reads the
/// two halves of each `uint` as its source slots.
///
/// ```
/// use clconv::{chain::Chain, Extensions, Layout, Request};
/// use clconv_verify::exhaustive::ChainSlots;
/// let Request::Chain(chain) = Request::parse("convert_long2(int4.hi)", Extensions::default()).unwrap()
/// else {
///     unreachable!()
/// };
/// let slots = ChainSlots::new(&chain, Layout::Packed).unwrap();
/// assert_eq!(slots.src_slots, 4);
/// assert_eq!(slots.from, [Some(2), Some(3)]);
/// assert_eq!(slots.conversions[0].to_string(), "convert_long(int)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainSlots {
    /// The element conversions, in order (one or two; a reinterpretation between them keeps
    /// the bits).
    pub conversions: Vec<Conversion>,
    /// Source slots per source vector, as the layout stores it (the aligned layout's padding
    /// lane included).
    pub src_slots: usize,
    /// For each result slot of a result vector: the source slot it converts, or `None` for a
    /// slot that must be zero (a lane filled with zeros, the aligned layout's padding).
    pub from: Vec<Option<usize>>,
    /// The source slots read, ascending: input `k` of a chunk goes into vector
    /// `k / used.len()`, slot `used[k % used.len()]`.
    pub used: Vec<usize>,
    /// For each entry of `used`, the result slot it converts into.
    pub to: Vec<usize>,
}

impl ChainSlots {
    /// The slots of `chain`'s kernel in `layout`, or `None` when its lanes are not one
    /// element function's inputs and results (a conversion of lanes a reinterpretation merged,
    /// or more than two conversions): no chain the languages spell today.
    pub fn new(chain: &Chain, layout: Layout) -> Option<ChainSlots> {
        #[derive(Clone, Copy, PartialEq)]
        enum Lane {
            Source(usize),
            Zero,
        }
        let (src, dst) = (chain.src(), chain.dst());
        // Bytes per lane as followed so far, and per source slot.
        let mut size = src.elem.bytes();
        let mut slot_size = size;
        let mut lanes: Vec<Lane> = (0..src.lanes()).map(Lane::Source).collect();
        let mut conversions = Vec::new();
        for step in chain.steps() {
            match step {
                Step::Convert(c) => {
                    if c.src().elem.bytes() != size {
                        return None;
                    }
                    size = c.dst().elem.bytes();
                    conversions.push(c.per_element());
                }
                Step::Reinterpret(r) => {
                    let to = r.dst().elem.bytes();
                    if to < size {
                        // Narrower lanes: before any conversion, the source slots split.
                        if !conversions.is_empty() {
                            return None;
                        }
                        let k = size / to;
                        lanes = lanes
                            .iter()
                            .flat_map(|&l| {
                                (0..k).map(move |t| match l {
                                    Lane::Source(i) => Lane::Source(i * k + t),
                                    Lane::Zero => Lane::Zero,
                                })
                            })
                            .collect();
                        size = to;
                        slot_size = to;
                    }
                    // Wider lanes hold several followed ones side by side: nothing moves.
                }
                // Two codes share a byte: no slot of bytes follows them.
                Step::Fp4(_) => return None,
                Step::Lanes(m) => {
                    let k = m.src().elem.bytes() / size;
                    let mut moved = Vec::new();
                    for i in 0..m.dst().lanes() {
                        if i < m.taken() {
                            moved.extend_from_slice(&lanes[(m.first() + i) * k..][..k]);
                        } else {
                            moved.extend(std::iter::repeat_n(Lane::Zero, k));
                        }
                    }
                    lanes = moved;
                }
            }
        }
        if conversions.is_empty() || conversions.len() > 2 {
            return None;
        }
        // The aligned layout stores 3-component vectors in 4 lanes: one more lane of junk in
        // the source, of zeros in the result.
        let stored = |v: clconv::VectorType| match layout {
            Layout::Aligned => v.byte_size(),
            Layout::Packed => v.lanes() * v.elem.bytes(),
        };
        let src_slots = stored(src) / slot_size;
        let mut from: Vec<Option<usize>> = lanes
            .iter()
            .map(|l| match l {
                Lane::Source(i) => Some(*i),
                Lane::Zero => None,
            })
            .collect();
        from.resize(stored(dst) / size, None);
        let mut used: Vec<usize> = from.iter().flatten().copied().collect();
        used.sort_unstable();
        used.dedup();
        if used.len() != from.iter().flatten().count() {
            return None; // a source slot converted twice
        }
        let to = used
            .iter()
            .map(|&i| from.iter().position(|&f| f == Some(i)).expect("used"))
            .collect();
        Some(ChainSlots {
            conversions,
            src_slots,
            from,
            used,
            to,
        })
    }
}

/// Whether `name` matches `filter`: a substring, or with `*` (any characters) a glob that must
/// match the whole name.
///
/// ```
/// use clconv_verify::exhaustive::matches;
/// assert!(matches("int_sat", "convert_int_sat_rte(float)"));
/// assert!(matches("convert_int*_sat_rte(float*)", "convert_int16_sat_rte(float16)"));
/// assert!(!matches("convert_int*_sat_rte(float*)", "convert_uint_sat_rte(float)"));
/// ```
pub fn matches(filter: &str, name: &str) -> bool {
    if !filter.contains('*') {
        return name.contains(filter);
    }
    let parts: Vec<&str> = filter.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/// A wrong element: the kernel's bits where the reference says otherwise.
///
/// ```
/// use clconv_verify::exhaustive::Example;
/// let e = Example { input: 0x3f00_0000, expected: 0, got: 1, padding: false };
/// assert_eq!(e.to_string(), "input 0x3f000000: expected 0x0, got 0x1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Example {
    /// The input's bits (for a padding slot: the vector's first input).
    pub input: u64,
    /// The reference's bits (0 for a padding slot).
    pub expected: u64,
    /// The kernel's bits.
    pub got: u64,
    /// True for the padding slot of an aligned 3-component vector.
    pub padding: bool,
}

impl fmt::Display for Example {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.padding {
            "padding after input"
        } else {
            "input"
        };
        write!(
            f,
            "{what} {:#x}: expected {:#x}, got {:#x}",
            self.input, self.expected, self.got
        )
    }
}

/// The outcome of one run over every input.
///
/// Its `Display` is one tab-separated line, the same that `--state` files hold:
/// `PASS|FAIL  request  layout  flags  N inputs  N mismatches  N corrections  N reference-checked
/// S s`, then for a failure the error or up to four examples. The flags column is the flag set,
/// with `/quick` for the quick tier's code (`host/quick`).
///
/// ```
/// use clconv_verify::exhaustive::{Run, RunResult};
/// use clconv::jit::{Tier, X64Flags};
/// use clconv::{Extensions, Layout, Request};
/// let r = RunResult {
///     run: Run {
///         request: Request::parse("convert_int(float)", Extensions::default()).unwrap(),
///         layout: Layout::Packed,
///     },
///     flags: X64Flags::Host,
///     tier: Tier::Optimised,
///     inputs: 1 << 32,
///     mismatches: 0,
///     corrections: 0,
///     reference_checked: 67_200_000,
///     seconds: 9.5,
///     error: None,
///     examples: vec![],
///     same_code_as: None,
/// };
/// assert!(r.passed());
/// assert_eq!(
///     r.to_string(),
///     "PASS\tconvert_int(float)\tpacked\thost\t4294967296 inputs\t0 mismatches\t\
///      0 corrections\t67200000 reference-checked\t9.5 s"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// What ran.
    pub run: Run,
    /// The x86-64 flag set the kernel was compiled for.
    pub flags: X64Flags,
    /// The JIT tier whose code ran.
    pub tier: Tier,
    /// Distinct inputs converted.
    pub inputs: u64,
    /// Elements whose bits differ from the reference's (padding slots included).
    pub mismatches: u64,
    /// Elements where the kernel disagreed with the fast path and the reference agreed with the
    /// kernel: a bug of [`FastConverter`], not of the kernel.
    pub corrections: u64,
    /// Elements of this run compared with the reference itself.
    pub reference_checked: u64,
    /// Wall time of the run's group (all its runs together), in seconds.
    pub seconds: f64,
    /// Why the kernel could not be compiled or run, if so.
    pub error: Option<String>,
    /// Up to four wrong elements.
    pub examples: Vec<Example>,
    /// The run whose kernel this one shares ([`clconv::jit::shared_kernel`]): the same machine
    /// code, called with `lanes` times the count, so that run's result over every input is this
    /// one's (that every width dispatches to it is checked per request by `tests/matrix.rs`).
    pub same_code_as: Option<Run>,
}

impl RunResult {
    /// True when the kernel ran and every element equals the reference's.
    ///
    /// See [`RunResult`] for an example.
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.mismatches == 0
    }
}

impl fmt::Display for RunResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\t{}\t{}\t{} inputs\t{} mismatches\t{} corrections\t{} reference-checked\t{:.1} s",
            if self.passed() { "PASS" } else { "FAIL" },
            self.run,
            flags_label(self.flags, self.tier),
            self.inputs,
            self.mismatches,
            self.corrections,
            self.reference_checked,
            self.seconds
        )?;
        if let Some(r) = &self.same_code_as {
            write!(
                f,
                "\tsame machine code as {} {}",
                r.request,
                r.layout.name()
            )?;
        }
        if let Some(e) = &self.error {
            write!(f, "\t{}", e.replace(['\n', '\t'], " "))?;
        }
        for e in &self.examples {
            write!(f, "\t{e}")?;
        }
        Ok(())
    }
}

/// Totals of an exhaustive run.
///
/// ```
/// use clconv_verify::exhaustive::Summary;
/// let s = Summary::default();
/// assert_eq!(s.failed, 0);
/// assert!(s.to_string().starts_with("0 runs passed, 0 failed"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Runs that passed.
    pub passed: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs skipped because the state file lists them as passed.
    pub skipped: usize,
    /// Inputs converted, over all runs done now.
    pub inputs: u64,
    /// Wrong elements, over all runs.
    pub mismatches: u64,
    /// Fast-path disagreements the reference settled in the kernel's favour.
    pub corrections: u64,
    /// Sampled inputs where the fast path itself differs from the reference.
    pub fast_path_errors: u64,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} runs passed, {} failed ({} skipped as done); {} inputs, {} mismatches, \
             {} fast-path corrections, {} fast-path errors; {:.0} s",
            self.passed,
            self.failed,
            self.skipped,
            self.inputs,
            self.mismatches,
            self.corrections,
            self.fast_path_errors,
            self.seconds
        )
    }
}

// ---------------------------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------------------------

/// What to run and how.
///
/// ```
/// use clconv_verify::exhaustive::Options;
/// let o = Options::default();
/// assert_eq!(o.inputs, None); // every input
/// assert!(o.state.is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    /// Runs whose request name or mangled name contains this (empty: all).
    pub filter: String,
    /// The x86-64 flag set to compile for.
    pub flags: X64Flags,
    /// Which tier's code to check (a JIT that compiles only that tier).
    pub tier: Tier,
    /// Only the first N inputs of each run (a trial); `None`: all of them.
    pub inputs: Option<u64>,
    /// Seed of the reference sample.
    pub seed: u64,
    /// Compare every input with the reference (slow; proves the fast path on these groups).
    pub reference_all: bool,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// A file of result lines: runs it lists as passed over all their inputs are skipped,
    /// and every finished run's line is appended to it.
    pub state: Option<PathBuf>,
    /// Draw a progress bar with the time left on standard error.
    pub progress: bool,
    /// A [ledger](crate::ledger) file: runs whose machine code it proves over at least this
    /// many inputs are skipped, and a line per kernel swept is appended to it.
    pub ledger: Option<PathBuf>,
    /// The commit the ledger's lines name (the checkout's, when the sweep started).
    pub commit: String,
    /// The conversions from 64-bit sources ([`plan_wide`]), each on the seed budget, instead
    /// of every input of the narrower ones ([`plan`]).
    pub wide: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            filter: String::new(),
            flags: X64Flags::Host,
            tier: Tier::Optimised,
            inputs: None,
            seed: 1,
            reference_all: false,
            threads: 0,
            state: None,
            progress: false,
            ledger: None,
            commit: "unknown".into(),
            wide: false,
        }
    }
}

/// The runs a state file lists as passed: (request, layout, flags, inputs).
type Done = HashSet<(String, String, String, u64)>;

fn read_state(path: &PathBuf) -> Result<Done, ExhaustiveError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Done::new()),
        Err(e) => {
            return Err(ExhaustiveError::State {
                path: path.display().to_string(),
                why: e.to_string(),
            })
        }
    };
    let mut done = Done::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 5 || fields[0] != "PASS" {
            continue;
        }
        let Some(inputs) = fields[4]
            .split(' ')
            .next()
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        done.insert((
            fields[1].to_string(),
            fields[2].to_string(),
            fields[3].to_string(),
            inputs,
        ));
    }
    Ok(done)
}

fn state_key(run: &Run, flags: X64Flags, tier: Tier, inputs: u64) -> (String, String, String, u64) {
    (
        run.request.to_string(),
        run.layout.name().to_string(),
        flags_label(flags, tier),
        inputs,
    )
}

/// The flags column of a result line: the flag set, with `/quick` for the quick tier (so the
/// optimised tier's lines read as before tiering).
fn flags_label(flags: X64Flags, tier: Tier) -> String {
    match tier {
        Tier::Optimised => flags.name().to_string(),
        Tier::Quick => format!("{}/quick", flags.name()),
    }
}

/// Runs every selected run over all its inputs (or `options.inputs`), calling `report` with each
/// run's result as its group finishes (and appending it to the state file).
///
/// Errors only when nothing can start (no request, no JIT, unreadable state file) or results
/// cannot be written; a kernel that fails to compile is a failed run.
///
/// See the [module documentation](self) for an example.
pub fn run(
    options: &Options,
    report: &mut dyn FnMut(&RunResult) -> std::io::Result<()>,
) -> Result<Summary, ExhaustiveError> {
    run_inner(options, report, None)
}

/// What [`run_with_progress`] tells its caller as the work goes, for a caller that draws its
/// own progress.
#[derive(Clone, Copy, Debug)]
pub enum ProgressEvent<'a> {
    /// Before any work: the whole job, in element checks (each input of a group once through
    /// every kernel that executes, once through the fast path and once for the sample).
    Start {
        /// Element checks to do.
        total: u64,
    },
    /// A group of runs begins (`group 3/40 convert_int(float)`).
    Group(&'a str),
    /// This many more element checks are done (sent from the worker threads).
    Advance(u64),
}

/// [`run`], sending its progress to `progress` instead of drawing it (`options.progress` is
/// ignored).
pub fn run_with_progress(
    options: &Options,
    report: &mut dyn FnMut(&RunResult) -> std::io::Result<()>,
    progress: &(dyn Fn(ProgressEvent<'_>) + Sync),
) -> Result<Summary, ExhaustiveError> {
    run_inner(options, report, Some(progress))
}

fn run_inner(
    options: &Options,
    report: &mut dyn FnMut(&RunResult) -> std::io::Result<()>,
    sink: Option<&(dyn Fn(ProgressEvent<'_>) + Sync)>,
) -> Result<Summary, ExhaustiveError> {
    let start = Instant::now();
    let groups = if options.wide {
        plan_wide(&options.filter)?
    } else {
        plan(&options.filter)?
    };
    let done = match &options.state {
        Some(path) => read_state(path)?,
        None => Done::new(),
    };
    let jit = Jit::with_options(options.flags, Extensions::with_fp16(), Rounding::Rte)?;
    jit.set_tiering(Tiering::only(options.tier));
    // With a ledger: each run's machine-code fingerprint, compiled as the JIT compiles it.
    let ledger = match &options.ledger {
        Some(path) => {
            let ledger = crate::ledger::Ledger::read(path)?;
            let all: Vec<Run> = groups.iter().flat_map(|g| g.runs.iter().copied()).collect();
            let hashes =
                crate::ledger::fingerprints(options.flags, options.tier, &all, options.threads)?;
            Some((
                path,
                ledger,
                all.into_iter()
                    .zip(hashes)
                    .collect::<HashMap<Run, String>>(),
            ))
        }
        None => None,
    };
    let date = crate::ledger::today();
    // Parallelism comes from the chunks: each kernel call stays on its thread.
    jit.set_threads(Threads::Exactly(1));
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let inputs_of = |g: &Group| {
        options
            .inputs
            .map_or(g.input_count(), |n| n.min(g.input_count()))
    };
    let mut summary = Summary::default();
    // The work still to do, for the progress bar: inputs × (runs + the fast path and sample).
    let todo: Vec<(usize, Vec<Run>)> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let n = inputs_of(g);
            let runs: Vec<Run> = g
                .runs
                .iter()
                .filter(|r| !done.contains(&state_key(r, options.flags, options.tier, n)))
                .filter(|r| match &ledger {
                    Some((_, ledger, hashes)) => !ledger.proves(&hashes[r], n),
                    None => true,
                })
                .copied()
                .collect();
            summary.skipped += g.runs.len() - runs.len();
            (i, runs)
        })
        .filter(|(_, runs)| !runs.is_empty())
        .collect();
    // Runs on the same machine code (every width of a conversion, packed) execute once.
    let split = |runs: &[Run]| -> (Vec<Run>, Vec<usize>) {
        let mut executed: Vec<Run> = Vec::new();
        let mut first: std::collections::HashMap<(Request, Layout), usize> = Default::default();
        let which = runs
            .iter()
            .map(|r| {
                let (k, l, _) = clconv::jit::shared_kernel(&r.request, r.layout);
                *first.entry((k, l)).or_insert_with(|| {
                    executed.push(*r);
                    executed.len() - 1
                })
            })
            .collect();
        (executed, which)
    };
    let total_work: u64 = todo
        .iter()
        .map(|(i, runs)| inputs_of(&groups[*i]) * (split(runs).0.len() as u64 + 2))
        .sum();
    let mut progress = Progress::new(total_work, options.progress && sink.is_none());
    progress.sink = sink;
    if let Some(sink) = sink {
        sink(ProgressEvent::Start { total: total_work });
    }
    for (k, (i, runs)) in todo.iter().enumerate() {
        let group = &groups[*i];
        progress.label(format!(
            "group {}/{} {}",
            k + 1,
            todo.len(),
            group.conversion
        ));
        let group_start = Instant::now();
        let (executed, which) = split(runs);
        let outcome = run_group(
            &jit,
            group,
            &executed,
            inputs_of(group),
            options,
            threads,
            &progress,
            *i as u64,
        );
        let seconds = group_start.elapsed().as_secs_f64();
        summary.fast_path_errors += outcome.fast_path_errors;
        let mut lines = String::new();
        let mut entries: Vec<crate::ledger::Entry> = Vec::new();
        for (run, &k) in runs.iter().zip(&which) {
            let stats = outcome.runs[k].clone();
            let same_code_as = (executed[k] != *run).then_some(executed[k]);
            let result = RunResult {
                same_code_as,
                run: *run,
                flags: options.flags,
                tier: options.tier,
                inputs: inputs_of(group),
                mismatches: stats.mismatches,
                corrections: stats.corrections,
                reference_checked: stats.reference_checked,
                seconds,
                error: stats.error,
                examples: stats.examples,
            };
            if result.passed() {
                summary.passed += 1;
            } else {
                summary.failed += 1;
            }
            if result.same_code_as.is_none() {
                summary.inputs += result.inputs;
            }
            summary.mismatches += result.mismatches;
            summary.corrections += result.corrections;
            progress.clear_line();
            report(&result).map_err(ExhaustiveError::Output)?;
            lines.push_str(&format!("{result}\n"));
            if let Some((_, _, hashes)) = &ledger {
                // One line per kernel executed, naming every run of this sweep on it.
                if result.same_code_as.is_none() {
                    let (kernel, layout, _) = clconv::jit::shared_kernel(&run.request, run.layout);
                    entries.push(crate::ledger::Entry {
                        hash: hashes[run].clone(),
                        passed: true,
                        flags: options.flags.name().to_string(),
                        tier: options.tier,
                        kernel: kernel.to_string(),
                        layout,
                        runs: Vec::new(),
                        inputs: result.inputs,
                        mismatches: result.mismatches,
                        corrections: result.corrections,
                        seconds,
                        commit: options.commit.clone(),
                        date: date.clone(),
                    });
                }
                let entry = entries
                    .iter_mut()
                    .find(|e| e.hash == hashes[run])
                    .expect("the kernel's executed run comes first");
                entry.runs.push(run.request.to_string());
                entry.passed &= result.passed();
            }
        }
        if let Some(path) = &options.state {
            append(path, &lines)?;
        }
        if let Some((path, _, _)) = &ledger {
            crate::ledger::Ledger::append(path, &entries)?;
        }
    }
    progress.finish();
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

fn append(path: &PathBuf, lines: &str) -> Result<(), ExhaustiveError> {
    let error = |e: std::io::Error| ExhaustiveError::State {
        path: path.display().to_string(),
        why: e.to_string(),
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(error)?;
    f.write_all(lines.as_bytes()).map_err(error)?;
    f.sync_data().map_err(error)
}

/// What the threads found for one run.
#[derive(Clone, Debug, Default)]
struct Stats {
    mismatches: u64,
    corrections: u64,
    reference_checked: u64,
    error: Option<String>,
    examples: Vec<Example>,
}

impl Stats {
    fn merge(&mut self, other: Stats) {
        self.mismatches += other.mismatches;
        self.corrections += other.corrections;
        self.reference_checked += other.reference_checked;
        if self.error.is_none() {
            self.error = other.error;
        }
        for e in other.examples {
            if self.examples.len() < EXAMPLES {
                self.examples.push(e);
            }
        }
    }

    fn wrong(&mut self, e: Example) {
        self.mismatches += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(e);
        }
    }
}

struct GroupOutcome {
    runs: Vec<Stats>,
    fast_path_errors: u64,
}

#[allow(clippy::too_many_arguments)]
fn run_group(
    jit: &Jit,
    group: &Group,
    runs: &[Run],
    inputs: u64,
    options: &Options,
    threads: usize,
    progress: &Progress,
    group_index: u64,
) -> GroupOutcome {
    // Compile every kernel (both layouts) before the threads start.
    let kernels: Vec<Result<Kernel, String>> = runs
        .iter()
        .map(|r| {
            let k = jit.compile_request(&r.request).map_err(|e| e.to_string())?;
            k.run_bytes(r.layout, &[], &mut [])
                .map_err(|e| e.to_string())?;
            Ok(k)
        })
        .collect();
    let specials: Vec<u64> = if options.reference_all {
        Vec::new()
    } else {
        let mut s = check::inputs(group.converter.src, 0, options.seed);
        s.sort_unstable();
        s.dedup();
        s
    };
    let chunk = if group.is_wide() {
        WIDE_SEED_INPUTS
    } else {
        CHUNK
    };
    // A chain's slots; `None` for a conversion, whose vectors hold its inputs in order.
    let slots: Vec<Option<ChainSlots>> = runs
        .iter()
        .map(|r| match &r.request {
            Request::Chain(chain) => ChainSlots::new(chain, r.layout),
            _ => None,
        })
        .collect();
    let shared = Shared {
        group,
        runs,
        kernels: &kernels,
        slots: &slots,
        reference: ElementConverter::new(&group.conversion, Rounding::Rte),
        reference_then: group
            .then
            .map(|(_, c)| ElementConverter::new(&c, Rounding::Rte)),
        inputs,
        chunk,
        chunks: inputs.div_ceil(chunk as u64) as usize,
        next: AtomicUsize::new(0),
        specials: &specials,
        options,
        group_index,
        fast_path_errors: AtomicU64::new(0),
        progress,
    };
    let threads = threads.min(shared.chunks).max(1);
    let per_thread: Vec<Vec<Stats>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| s.spawn(|| Worker::new(&shared).work()))
            .collect();
        handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(stats) => stats,
                Err(_) => vec![
                    Stats {
                        error: Some("a checking thread panicked".into()),
                        ..Stats::default()
                    };
                    runs.len()
                ],
            })
            .collect()
    });
    let mut merged: Vec<Stats> = (0..runs.len()).map(|_| Stats::default()).collect();
    for stats in per_thread {
        for (m, s) in merged.iter_mut().zip(stats) {
            m.merge(s);
        }
    }
    for (m, k) in merged.iter_mut().zip(&kernels) {
        if let Err(e) = k {
            m.error = Some(e.clone());
        }
    }
    GroupOutcome {
        runs: merged,
        fast_path_errors: shared.fast_path_errors.load(Atomic::Relaxed),
    }
}

struct Shared<'a> {
    group: &'a Group,
    runs: &'a [Run],
    kernels: &'a [Result<Kernel, String>],
    /// Per run: a chain's slots ([`ChainSlots`]), or `None`.
    slots: &'a [Option<ChainSlots>],
    reference: ElementConverter,
    /// A chain's second conversion.
    reference_then: Option<ElementConverter>,
    inputs: u64,
    /// Inputs per chunk: [`CHUNK`], or a seed's [`WIDE_SEED_INPUTS`].
    chunk: usize,
    chunks: usize,
    next: AtomicUsize,
    specials: &'a [u64],
    options: &'a Options,
    group_index: u64,
    fast_path_errors: AtomicU64,
    progress: &'a Progress<'a>,
}

impl Shared<'_> {
    /// The reference's result for one input: the conversion, or a chain's two.
    fn reference(&self, x: u64) -> u64 {
        let y = self.reference.convert(x).bits;
        match &self.reference_then {
            Some(then) => then.convert(y).bits,
            None => y,
        }
    }
}

/// One thread's buffers.
struct Worker<'a> {
    shared: &'a Shared<'a>,
    sb: usize,
    db: usize,
    /// The chunk's inputs, then PAD copies of its first ones.
    src: Vec<u8>,
    /// The fast path's results for `src`.
    expected: Vec<u8>,
    /// The aligned layout's source (three inputs and a junk padding element per vector) and
    /// expected bytes (three results and a zero).
    src_aligned: Vec<u8>,
    expected_aligned: Vec<u8>,
    /// Per run, a chain's source and expected bytes, laid out as its [`ChainSlots`] say.
    mapped: Vec<(Vec<u8>, Vec<u8>)>,
    /// The kernel's destination, then the guard bytes.
    got: Vec<u8>,
    /// Sampled chunk positions and the reference's bits there.
    sample: Vec<(usize, u64)>,
    stats: Vec<Stats>,
}

impl<'a> Worker<'a> {
    fn new(shared: &'a Shared<'a>) -> Worker<'a> {
        let sb = shared.group.converter.src.bytes();
        let db = shared.group.dst().bytes();
        let n = shared.chunk.min(shared.inputs as usize) + PAD;
        let aligned_vectors = n.div_ceil(3);
        // A chain's vectors hold fewer inputs, and more bytes, than the packed buffers.
        let mapped: Vec<(Vec<u8>, Vec<u8>)> = shared
            .slots
            .iter()
            .map(|slots| match slots {
                Some(c) => {
                    let vectors = n.div_ceil(c.used.len());
                    (
                        vec![0; vectors * c.src_slots * sb],
                        vec![0; vectors * c.from.len() * db],
                    )
                }
                None => (Vec::new(), Vec::new()),
            })
            .collect();
        let got = mapped
            .iter()
            .map(|(_, e)| e.len())
            .max()
            .unwrap_or(0)
            .max(n * db)
            .max(aligned_vectors * 4 * db)
            + GUARD;
        Worker {
            shared,
            sb,
            db,
            src: vec![0; n * sb],
            expected: vec![0; n * db],
            src_aligned: vec![0; aligned_vectors * 4 * sb],
            expected_aligned: vec![0; aligned_vectors * 4 * db],
            mapped,
            got: vec![0; got],
            sample: Vec::new(),
            stats: (0..shared.runs.len()).map(|_| Stats::default()).collect(),
        }
    }

    fn work(mut self) -> Vec<Stats> {
        let shared = self.shared;
        loop {
            let chunk = shared.next.fetch_add(1, Atomic::Relaxed);
            if chunk >= shared.chunks {
                return self.stats;
            }
            let start = chunk as u64 * shared.chunk as u64;
            let n = (shared.inputs - start).min(shared.chunk as u64) as usize;
            self.chunk(chunk, start, n);
            shared
                .progress
                .add(n as u64 * (shared.runs.len() as u64 + 2));
        }
    }

    fn chunk(&mut self, chunk: usize, start: u64, n: usize) {
        let shared = self.shared;
        let fast = shared.group.converter;
        let (sb, db) = (self.sb, self.db);
        // Inputs and fast-path results, then the padding copies.
        if shared.group.is_wide() {
            let inputs = wide_inputs(fast.src, chunk as u64, n, shared.specials);
            for (s, x) in self.src.chunks_exact_mut(8).zip(inputs) {
                s.copy_from_slice(&x.to_le_bytes());
            }
        }
        match shared.group.then {
            None => fill(&mut self.src, &mut self.expected, start, n, &fast),
            // A chain's two conversions: the plain loop (few runs; 3-5x slower than `fill`).
            Some(_) => {
                for i in 0..n {
                    let x = if shared.group.is_wide() {
                        get(&self.src, i, sb)
                    } else {
                        let x = start + i as u64;
                        self.src[i * sb..(i + 1) * sb].copy_from_slice(&x.to_le_bytes()[..sb]);
                        x
                    };
                    let y = shared.group.convert(x);
                    self.expected[i * db..(i + 1) * db].copy_from_slice(&y.to_le_bytes()[..db]);
                }
            }
        }
        for i in n..n + PAD {
            let j = (i - n) % n;
            self.src.copy_within(j * sb..(j + 1) * sb, i * sb);
            self.expected.copy_within(j * db..(j + 1) * db, i * db);
        }
        self.take_sample(chunk, start, n);
        if shared.runs.iter().any(|r| r.layout == Layout::Aligned) {
            build_aligned(
                &self.src,
                &self.expected,
                &mut self.src_aligned,
                &mut self.expected_aligned,
                (sb, db),
                n.div_ceil(3),
                start,
            );
        }
        for r in 0..shared.runs.len() {
            self.check_run(r, n);
        }
    }

    /// Picks the sampled positions of this chunk and asks the reference about them.
    fn take_sample(&mut self, chunk: usize, start: u64, n: usize) {
        let shared = self.shared;
        self.sample.clear();
        if shared.options.reference_all {
            self.sample.extend((0..n).map(|i| (i, 0)));
        } else {
            let mut rng = Rng::new(
                shared.options.seed
                    ^ shared.group_index << 40
                    ^ (chunk as u64).wrapping_mul(0x9e37),
            );
            for _ in 0..(n / SAMPLE_EVERY).max(1) {
                self.sample.push(((rng.next_u64() % n as u64) as usize, 0));
            }
            if shared.group.is_wide() {
                // The special inputs open the first seed's chunk (`wide_inputs`).
                if chunk == 0 {
                    let specials = shared.specials.len().min(n);
                    self.sample.extend((0..specials).map(|i| (i, 0)));
                }
            } else {
                let end = start + n as u64;
                let from = shared.specials.partition_point(|&x| x < start);
                let to = shared.specials.partition_point(|&x| x < end);
                self.sample.extend(
                    shared.specials[from..to]
                        .iter()
                        .map(|&x| ((x - start) as usize, 0)),
                );
            }
            self.sample.sort_unstable();
            self.sample.dedup();
        }
        let mut wrong = 0;
        for (i, bits) in self.sample.iter_mut() {
            let x = get(&self.src, *i, self.sb);
            *bits = shared.reference(x);
            if *bits != get(&self.expected, *i, self.db) {
                wrong += 1;
            }
        }
        if wrong > 0 {
            shared.fast_path_errors.fetch_add(wrong, Atomic::Relaxed);
        }
    }

    fn check_run(&mut self, r: usize, n: usize) {
        let shared = self.shared;
        let run = shared.runs[r];
        let Ok(kernel) = &shared.kernels[r] else {
            return; // reported as the run's error
        };
        let (sb, db) = (self.sb, self.db);
        let chain = shared.slots[r].as_ref();
        if let Some(c) = chain {
            self.build_chain(r, c, n);
        }
        let aligned = run.layout == Layout::Aligned;
        let lanes = run.request.src().lanes();
        let vectors = n.div_ceil(lanes);
        let (src, want): (&[u8], &[u8]) = if let Some(c) = chain {
            let vectors = n.div_ceil(c.used.len());
            (
                &self.mapped[r].0[..vectors * c.src_slots * sb],
                &self.mapped[r].1[..vectors * c.from.len() * db],
            )
        } else if aligned {
            (
                &self.src_aligned[..vectors * 4 * sb],
                &self.expected_aligned[..vectors * 4 * db],
            )
        } else {
            (
                &self.src[..vectors * lanes * sb],
                &self.expected[..vectors * lanes * db],
            )
        };
        let len = want.len();
        // The complement of the expected bytes, so an unwritten element cannot pass.
        for (g, w) in self.got[..len].iter_mut().zip(want) {
            *g = !*w;
        }
        self.got[len..len + GUARD].fill(0xa5);
        let stats = &mut self.stats[r];
        if let Err(e) = kernel.run_bytes(run.layout, src, &mut self.got[..len]) {
            if stats.error.is_none() {
                stats.error = Some(e.to_string());
            }
            return;
        }
        if let Some(at) = self.got[len..len + GUARD].iter().position(|&b| b != 0xa5) {
            if stats.error.is_none() {
                stats.error = Some(format!(
                    "wrote past the destination: byte {} after its end",
                    at
                ));
            }
        }
        let got = &self.got[..len];
        // Where the kernel and the fast path differ, the reference decides.
        if got != want {
            let stride = match chain {
                Some(c) => c.from.len(),
                None if aligned => 4,
                None => 1,
            };
            for slot in 0..len / db {
                let g = get(got, slot, db);
                if g == get(want, slot, db) {
                    continue;
                }
                let (vector, k) = (slot / stride, slot % stride);
                // The inputs a vector holds, and the one this slot converts (`None`: a slot
                // that must stay zero, a chain's zero lane or the aligned layout's padding).
                let per_vector = match chain {
                    Some(c) => c.used.len(),
                    None if aligned => 3,
                    None => 1,
                };
                let index = match chain {
                    Some(c) => c.from[k].map(|i| c.used.binary_search(&i).expect("a used slot")),
                    None if aligned && k == 3 => None,
                    None => Some(k),
                };
                let Some(index) = index else {
                    stats.wrong(Example {
                        input: get(&self.src, vector * per_vector, sb),
                        expected: 0,
                        got: g,
                        padding: true,
                    });
                    continue;
                };
                let input = get(&self.src, vector * per_vector + index, sb);
                stats.reference_checked += 1;
                let expected = shared.reference(input);
                if g == expected {
                    stats.corrections += 1;
                } else {
                    stats.wrong(Example {
                        input,
                        expected,
                        got: g,
                        padding: false,
                    });
                }
            }
        }
        // The sample: the kernel against the reference itself (where it agreed with the fast
        // path; the other elements were settled above).
        for &(i, reference) in &self.sample {
            let slot = match chain {
                Some(c) => i / c.used.len() * c.from.len() + c.to[i % c.used.len()],
                None if aligned => i / 3 * 4 + i % 3,
                None => i,
            };
            let g = get(got, slot, db);
            if g != get(want, slot, db) {
                continue;
            }
            stats.reference_checked += 1;
            if g != reference {
                stats.wrong(Example {
                    input: get(&self.src, i, sb),
                    expected: reference,
                    got: g,
                    padding: false,
                });
            }
        }
    }
}

impl Worker<'_> {
    /// Run `r`'s (a chain's) source and expected bytes for the chunk's first `n` inputs (and
    /// padding copies to fill the last vector): each input in its source slot, junk the kernel
    /// must ignore in the others; each result in its result slot, zeros in the others.
    fn build_chain(&mut self, r: usize, c: &ChainSlots, n: usize) {
        let (sb, db) = (self.sb, self.db);
        let (src, want) = &mut self.mapped[r];
        let per = c.used.len();
        for v in 0..n.div_ceil(per) {
            for slot in 0..c.src_slots {
                let at = v * c.src_slots + slot;
                let junk = (0x5a5a_5a5a_5a5a_5a5a
                    ^ (at as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .to_le_bytes();
                src[at * sb..][..sb].copy_from_slice(&junk[..sb]);
            }
            want[v * c.from.len() * db..][..c.from.len() * db].fill(0);
            for (rank, (&i, &j)) in c.used.iter().zip(&c.to).enumerate() {
                let k = v * per + rank; // below n + PAD: at most 16 slots are used
                src[(v * c.src_slots + i) * sb..][..sb].copy_from_slice(&self.src[k * sb..][..sb]);
                want[(v * c.from.len() + j) * db..][..db]
                    .copy_from_slice(&self.expected[k * db..][..db]);
            }
        }
    }
}

/// Element `i` of a buffer of `size`-byte elements, zero-extended.
#[inline]
fn get(buf: &[u8], i: usize, size: usize) -> u64 {
    fn at<const N: usize>(buf: &[u8], i: usize) -> [u8; N] {
        buf[i * N..(i + 1) * N].try_into().expect("N bytes")
    }
    match size {
        1 => u64::from(buf[i]),
        2 => u64::from(u16::from_le_bytes(at(buf, i))),
        4 => u64::from(u32::from_le_bytes(at(buf, i))),
        _ => u64::from_le_bytes(at(buf, i)),
    }
}

/// The aligned layout's buffers from the packed ones: three elements and a padding element per
/// vector; the source's padding is junk the kernel must ignore, the expected padding zero.
fn build_aligned(
    src: &[u8],
    expected: &[u8],
    src_aligned: &mut [u8],
    expected_aligned: &mut [u8],
    sizes: (usize, usize),
    vectors: usize,
    start: u64,
) {
    fn typed<const S: usize, const D: usize>(
        src: &[u8],
        expected: &[u8],
        src_aligned: &mut [u8],
        expected_aligned: &mut [u8],
        vectors: usize,
        start: u64,
    ) {
        let from = src.chunks_exact(3 * S).zip(expected.chunks_exact(3 * D));
        let to = src_aligned
            .chunks_exact_mut(4 * S)
            .zip(expected_aligned.chunks_exact_mut(4 * D));
        for (v, ((s, e), (sa, ea))) in from.zip(to).take(vectors).enumerate() {
            sa[..3 * S].copy_from_slice(s);
            let junk = (0x5a5a_5a5a_5a5a_5a5au64 ^ (start + v as u64)).to_le_bytes();
            sa[3 * S..].copy_from_slice(&junk[..S]);
            ea[..3 * D].copy_from_slice(e);
            ea[3 * D..].fill(0);
        }
    }
    let f = match sizes {
        (1, 1) => typed::<1, 1>,
        (1, 2) => typed::<1, 2>,
        (1, 4) => typed::<1, 4>,
        (1, _) => typed::<1, 8>,
        (2, 1) => typed::<2, 1>,
        (2, 2) => typed::<2, 2>,
        (2, 4) => typed::<2, 4>,
        (2, _) => typed::<2, 8>,
        (4, 1) => typed::<4, 1>,
        (4, 2) => typed::<4, 2>,
        (4, 4) => typed::<4, 4>,
        (4, _) => typed::<4, 8>,
        (_, 1) => typed::<8, 1>,
        (_, 2) => typed::<8, 2>,
        (_, 4) => typed::<8, 4>,
        (_, _) => typed::<8, 8>,
    };
    f(src, expected, src_aligned, expected_aligned, vectors, start);
}

/// Writes inputs `start..start + n` into `src` and the fast path's results into `expected`; for
/// a 64-bit source, whose inputs `src` already holds ([`wide_inputs`]), only the results.
///
/// One loop per (source, destination) pair, with both types constants in it: the fast path's
/// type dispatch then folds away and only the element arithmetic is left (3-5x faster than
/// calling [`FastConverter::convert`] with run-time types).
fn fill(src: &mut [u8], expected: &mut [u8], start: u64, n: usize, fast: &FastConverter) {
    #[inline(always)]
    fn typed<const S: usize, const D: usize>(
        src: &mut [u8],
        expected: &mut [u8],
        start: u64,
        n: usize,
        f: impl Fn(u64) -> u64,
    ) {
        let inputs = src[..n * S].chunks_exact_mut(S);
        let outputs = expected[..n * D].chunks_exact_mut(D);
        for (i, (s, d)) in inputs.zip(outputs).enumerate() {
            let x = if S == 8 {
                u64::from_le_bytes(s.try_into().expect("8 bytes"))
            } else {
                let x = start + i as u64;
                s.copy_from_slice(&x.to_le_bytes()[..S]);
                x
            };
            d.copy_from_slice(&f(x).to_le_bytes()[..D]);
        }
    }
    let fast = *fast;
    // The narrow formats' conversions: the types at run time (their sweeps are few).
    if fast.src.is_narrow() || fast.dst.is_narrow() {
        let f = |x| fast.convert(x);
        return match (fast.src.bytes(), fast.dst.bytes()) {
            (1, 1) => typed::<1, 1>(src, expected, start, n, f),
            (1, 2) => typed::<1, 2>(src, expected, start, n, f),
            (1, 4) => typed::<1, 4>(src, expected, start, n, f),
            (1, _) => typed::<1, 8>(src, expected, start, n, f),
            (2, 1) => typed::<2, 1>(src, expected, start, n, f),
            (2, _) => typed::<2, 4>(src, expected, start, n, f),
            (4, 1) => typed::<4, 1>(src, expected, start, n, f),
            (4, 2) => typed::<4, 2>(src, expected, start, n, f),
            (4, 4) => typed::<4, 4>(src, expected, start, n, f),
            (4, _) => typed::<4, 8>(src, expected, start, n, f),
            (_, 1) => typed::<8, 1>(src, expected, start, n, f),
            (_, _) => typed::<8, 4>(src, expected, start, n, f),
        };
    }
    macro_rules! to_each_destination {
        ($src_type:ident, $sb:literal) => {
            match fast.dst {
                ScalarType::Char => typed::<$sb, 1>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Char,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::UChar => typed::<$sb, 1>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::UChar,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Short => typed::<$sb, 2>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Short,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::UShort => typed::<$sb, 2>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::UShort,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Int => typed::<$sb, 4>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Int,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::UInt => typed::<$sb, 4>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::UInt,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Long => typed::<$sb, 8>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Long,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::ULong => typed::<$sb, 8>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::ULong,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Half => typed::<$sb, 2>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Half,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Float => typed::<$sb, 4>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Float,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Double => typed::<$sb, 8>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Double,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::BFloat => typed::<$sb, 2>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::BFloat,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Fp8E4M3 => typed::<$sb, 1>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Fp8E4M3,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Fp8E5M2 => typed::<$sb, 1>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Fp8E5M2,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Bool => typed::<$sb, 1>(src, expected, start, n, |x| {
                    FastConverter {
                        src: ScalarType::$src_type,
                        dst: ScalarType::Bool,
                        ..fast
                    }
                    .convert(x)
                }),
                ScalarType::Fp4E2M1
                | ScalarType::Fp6E2M3
                | ScalarType::Fp6E3M2
                | ScalarType::Fp8E4M3Fnuz
                | ScalarType::Fp8E5M2Fnuz
                | ScalarType::Fp8E8M0
                | ScalarType::Tf32 => unreachable!("the narrow formats return above"),
            }
        };
    }
    match fast.src {
        ScalarType::Char => to_each_destination!(Char, 1),
        ScalarType::UChar => to_each_destination!(UChar, 1),
        ScalarType::Short => to_each_destination!(Short, 2),
        ScalarType::UShort => to_each_destination!(UShort, 2),
        ScalarType::Int => to_each_destination!(Int, 4),
        ScalarType::UInt => to_each_destination!(UInt, 4),
        ScalarType::Half => to_each_destination!(Half, 2),
        ScalarType::Float => to_each_destination!(Float, 4),
        ScalarType::Long => to_each_destination!(Long, 8),
        ScalarType::ULong => to_each_destination!(ULong, 8),
        ScalarType::Double => to_each_destination!(Double, 8),
        ScalarType::BFloat => to_each_destination!(BFloat, 2),
        ScalarType::Fp8E4M3 => to_each_destination!(Fp8E4M3, 1),
        ScalarType::Fp8E5M2 => to_each_destination!(Fp8E5M2, 1),
        ScalarType::Bool => to_each_destination!(Bool, 1),
        ScalarType::Fp4E2M1
        | ScalarType::Fp6E2M3
        | ScalarType::Fp6E3M2
        | ScalarType::Fp8E4M3Fnuz
        | ScalarType::Fp8E5M2Fnuz
        | ScalarType::Fp8E8M0
        | ScalarType::Tf32 => unreachable!("the narrow formats return above"),
    }
}

// ---------------------------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------------------------

/// The progress bar: redrawn in place on a terminal, a line a minute otherwise; or the events
/// sent to a caller's `sink` ([`run_with_progress`]).
struct Progress<'s> {
    total: u64,
    done: AtomicU64,
    enabled: bool,
    tty: bool,
    start: Instant,
    last: Mutex<Instant>,
    label: Mutex<String>,
    sink: Option<&'s (dyn Fn(ProgressEvent<'_>) + Sync)>,
}

impl Progress<'_> {
    fn new(total: u64, enabled: bool) -> Self {
        let now = Instant::now();
        Progress {
            total: total.max(1),
            done: AtomicU64::new(0),
            enabled,
            tty: std::io::stderr().is_terminal(),
            start: now,
            last: Mutex::new(now),
            label: Mutex::new(String::new()),
            sink: None,
        }
    }

    fn label(&self, text: String) {
        if let Some(sink) = self.sink {
            return sink(ProgressEvent::Group(&text));
        }
        if let Ok(mut l) = self.label.lock() {
            *l = text;
        }
        self.draw(true);
    }

    fn add(&self, work: u64) {
        if let Some(sink) = self.sink {
            return sink(ProgressEvent::Advance(work));
        }
        self.done.fetch_add(work, Atomic::Relaxed);
        self.draw(false);
    }

    fn draw(&self, force: bool) {
        if !self.enabled {
            return;
        }
        let every = if self.tty {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(60)
        };
        let Ok(mut last) = self.last.try_lock() else {
            return;
        };
        if !force && last.elapsed() < every {
            return;
        }
        *last = Instant::now();
        let done = self.done.load(Atomic::Relaxed).min(self.total);
        let elapsed = self.start.elapsed().as_secs_f64();
        let fraction = done as f64 / self.total as f64;
        let left = if done == 0 {
            "?".to_string()
        } else {
            duration(elapsed / fraction - elapsed)
        };
        let width = 30;
        let filled = (fraction * width as f64) as usize;
        let label = self.label.lock().map(|l| l.clone()).unwrap_or_default();
        let line = format!(
            "[{}{}] {:5.1}%  {} elapsed, ~{} left  {label}",
            "#".repeat(filled),
            " ".repeat(width - filled),
            fraction * 100.0,
            duration(elapsed),
            left
        );
        let mut err = std::io::stderr().lock();
        let _ = if self.tty {
            write!(err, "\r\x1b[2K{line}")
        } else {
            writeln!(err, "{line}")
        };
    }

    /// Clears the bar before a result line goes to standard output (same terminal).
    fn clear_line(&self) {
        if self.enabled && self.tty {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }

    fn finish(&self) {
        self.clear_line();
    }
}

fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path equals the reference on every special input and 5,000 random ones, for
    /// every element function of the matrix (64-bit sources too: it is written for them); and
    /// conversions grouped under one fast path have the same reference results.
    #[test]
    fn fast_path_equals_the_reference() {
        let mut first: BTreeMap<FastConverter, (Conversion, Rounding)> = BTreeMap::new();
        let mut failures = Vec::new();
        for request in swept_requests() {
            let Request::Convert(c) = request else {
                continue;
            };
            let c = c.per_element();
            for mode in Rounding::ALL {
                let fast = FastConverter::new(&c, mode);
                let reference = ElementConverter::new(&c, mode);
                match first.get(&fast) {
                    None => {
                        first.insert(fast, (c, mode));
                        for x in check::inputs(c.src().elem, 5_000, 7) {
                            let (f, r) = (fast.convert(x), reference.convert(x).bits);
                            if f != r && failures.len() < 20 {
                                failures.push(format!(
                                    "{c} ({mode:?}) {x:#x}: fast {f:#x}, reference {r:#x}"
                                ));
                            }
                        }
                    }
                    Some((other, other_mode)) => {
                        let theirs = ElementConverter::new(other, *other_mode);
                        let mut rng = Rng::new(9);
                        for _ in 0..2_000 {
                            let x = rng.next_u64();
                            let (a, b) = (reference.convert(x).bits, theirs.convert(x).bits);
                            if a != b && failures.len() < 20 {
                                failures.push(format!(
                                    "{c} and {other} share a fast path but differ at {x:#x}"
                                ));
                            }
                        }
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    /// A deliberately wrong fast path is caught: its disagreements go to the reference, which
    /// sides with the kernel (corrections, no mismatch), and the sample counts its errors.
    #[test]
    fn a_wrong_fast_path_is_corrected_not_trusted() {
        let groups = plan("convert_short_sat_rtn(float)").unwrap();
        let mut group = groups[0].clone();
        // The rtp function instead of rtn: wrong on every inexact input.
        group.converter.rounding = Rounding::Rtp;
        let out = run_on(&group, 1 << 20);
        assert!(out.fast_path_errors > 0);
        assert_eq!(out.runs[0].mismatches, 0, "{:?}", out.runs[0]);
        assert!(out.runs[0].corrections > 0);
        assert!(out.runs[0].error.is_none());
    }

    fn conversion(name: &str) -> Conversion {
        match Request::parse(name, Extensions::with_fp16()).unwrap() {
            Request::Convert(c) => c,
            _ => unreachable!(),
        }
    }

    /// `group` with the element function (reference and fast path) of `name`, which its
    /// kernels do not compute.
    fn against(group: &Group, name: &str) -> Group {
        let conversion = conversion(name);
        Group {
            converter: FastConverter::new(&conversion, Rounding::Rte),
            conversion,
            then: None,
            runs: group.runs.clone(),
        }
    }

    fn chain(name: &str) -> Chain {
        match Request::parse(name, Extensions::with_fp16()).unwrap() {
            Request::Chain(c) => c,
            other => panic!("{other} is not a chain"),
        }
    }

    /// Every chain the languages spell is swept: its slots are known, in both layouts; but
    /// FP4's packing chains, whose two codes share a byte (their conversions are swept as
    /// themselves: the next test).
    #[test]
    fn every_chain_has_slots() {
        let chains = clconv::languages::chains();
        assert!(chains.len() > 20);
        let mut packing = 0;
        for request in chains {
            let Request::Chain(c) = request else {
                unreachable!()
            };
            if c.steps().any(|s| matches!(s, Step::Fp4(_))) {
                assert!(ChainSlots::new(&c, Layout::Packed).is_none(), "{c}");
                packing += 1;
                continue;
            }
            assert!(ChainSlots::new(&c, Layout::Packed).is_some(), "{c}");
            assert!(ChainSlots::new(&c, Layout::Aligned).is_some(), "{c}");
        }
        // PTX's four `.e2m1x2` lines, CUDA's nine fp4x2 functions less the ones PTX's share.
        assert!(packing >= 4, "{packing}");
    }

    /// Nothing the languages spell beyond the matrix is left out of the sweeps: every such
    /// request is a run of the plan of its source's width.
    #[test]
    fn the_plans_take_every_request_beyond_the_matrix() {
        let groups = plan("").unwrap().into_iter().chain(plan_wide("").unwrap());
        let planned: HashSet<Request> = groups
            .flat_map(|g| g.runs.into_iter().map(|r| r.request))
            .collect();
        let beyond = clconv::languages::beyond_the_matrix();
        assert!(beyond.len() > 200);
        for request in beyond {
            match &request {
                // FP4's packing: each conversion step is a run.
                Request::Chain(c) if ChainSlots::new(c, Layout::Packed).is_none() => {
                    for step in c.steps() {
                        if let Step::Convert(conv) = step {
                            let conv = Request::Convert(*conv);
                            assert!(
                                planned.contains(&conv),
                                "{conv} (of {request}) is not swept"
                            );
                        }
                    }
                }
                _ => assert!(planned.contains(&request), "{request} is not swept"),
            }
        }
    }

    /// The slots, by hand from OpenCL C's meaning of each chain.
    #[test]
    fn chain_slots_follow_the_lanes() {
        let slots = |name: &str, layout| ChainSlots::new(&chain(name), layout).unwrap();
        // Zeros after the two converted lanes.
        let s = slots(
            "(float4)(convert_float2_rte(double2), 0, 0)",
            Layout::Packed,
        );
        assert_eq!(
            (s.src_slots, s.from.as_slice()),
            (2, &[Some(0), Some(1), None, None][..])
        );
        assert_eq!(s.conversions.len(), 1);
        // A uint's two halves are the source slots.
        let s = slots("convert_float2(as_half2(uint))", Layout::Packed);
        assert_eq!(
            (s.src_slots, s.from.as_slice()),
            (2, &[Some(0), Some(1)][..])
        );
        assert_eq!(s.conversions[0].to_string(), "convert_float(half)");
        // Two halves make the uint.
        let s = slots("as_uint(convert_half2_rte(float2))", Layout::Packed);
        assert_eq!(
            (s.src_slots, s.from.as_slice()),
            (2, &[Some(0), Some(1)][..])
        );
        // The upper half of a char16, and two conversions with the aligned layout's padding.
        let s = slots("convert_short8(char16.hi)", Layout::Packed);
        assert_eq!(s.src_slots, 16);
        assert_eq!(s.from, (8..16).map(Some).collect::<Vec<_>>());
        assert_eq!(s.used, (8..16).collect::<Vec<_>>());
        assert_eq!(s.to, (0..8).collect::<Vec<_>>());
        let s = slots(
            "convert_uint3(as_ushort3(convert_half3_rtz(float3)))",
            Layout::Aligned,
        );
        assert_eq!(
            (s.src_slots, s.from.as_slice()),
            (4, &[Some(0), Some(1), Some(2), None][..])
        );
        let names: Vec<String> = s.conversions.iter().map(|c| c.to_string()).collect();
        assert_eq!(names, ["convert_half_rtz(float)", "convert_uint(ushort)"]);
        let s = slots(
            "convert_uint3(as_ushort3(convert_half3_rtz(float3)))",
            Layout::Packed,
        );
        assert_eq!((s.src_slots, s.from.len()), (3, 3));
    }

    /// A chain's kernel is compared slot by slot: against another element function (toward
    /// zero where it rounds to nearest) its results are mismatches, in the converted slots.
    #[test]
    fn a_wrong_chain_is_a_mismatch() {
        let group = &plan("convert_double2_rte(float4.lo)").unwrap()[0];
        assert!(group
            .runs
            .iter()
            .all(|r| matches!(r.request, Request::Chain(_))));
        // Another function with results of the same width: float -> long toward zero.
        let out = run_on(&against(group, "convert_long_sat_rtz(float)"), 1 << 20);
        for run in &out.runs {
            assert!(run.mismatches > 0, "{run:?}");
            assert!(run.examples.iter().all(|e| !e.padding), "{run:?}");
        }
        // A chain that fills lanes with zeros: right, it passes; wrong, it fails.
        let group = &plan("(float4)(convert_float2_rte(double2), 0, 0)");
        assert!(group.is_err(), "a double source is on the seed budget");
        let group = &plan_wide("(float4)(convert_float2_rte(double2), 0, 0)").unwrap()[0];
        let out = run_on(group, 1 << 16);
        assert_eq!(out.runs[0].mismatches, 0, "{:?}", out.runs[0]);
        let out = run_on(&against(group, "convert_int_sat_rtz(double)"), 1 << 16);
        assert!(out.runs[0].mismatches > 0);
    }

    /// Runs `group`'s kernels over its first `inputs` inputs on two threads, default options.
    fn run_on(group: &Group, inputs: u64) -> GroupOutcome {
        let jit = Jit::new().unwrap();
        let progress = Progress::new(1, false);
        run_group(
            &jit,
            group,
            &group.runs,
            inputs,
            &Options::default(),
            2,
            &progress,
            0,
        )
    }

    /// A kernel that computes another function than the reference's is a mismatch: here the
    /// rtn kernels run against the rtp fast path and reference.
    #[test]
    fn a_wrong_kernel_is_a_mismatch() {
        let group = &plan("convert_short3_sat_rtn(float3)").unwrap()[0];
        let out = run_on(&against(group, "convert_short_sat_rtp(float)"), 1 << 20);
        assert_eq!(out.runs.len(), 2); // packed and aligned
        for run in &out.runs {
            assert!(run.mismatches > 0, "{run:?}");
            assert_eq!(run.corrections, 0);
            assert_eq!(run.examples.len(), EXAMPLES);
        }
    }

    /// A run from a 64-bit source goes through the whole machinery: its inputs are the seed
    /// budget's (specials first), its kernels are compared, and a wrong kernel is caught.
    #[test]
    fn wide_runs_check_their_kernels() {
        let options = Options {
            filter: "convert_int3_sat_rtn(double3)".into(),
            inputs: Some(3 << 20),
            wide: true,
            ..Options::default()
        };
        let mut lines = Vec::new();
        let summary = run(&options, &mut |r| {
            lines.push(r.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!((summary.passed, summary.failed), (2, 0), "{lines:#?}");
        assert_eq!(summary.inputs, 2 * (3 << 20));
        assert_eq!(summary.fast_path_errors, 0);
        // The rtp conversion's kernels against the rtn function: mismatches.
        let group = &plan_wide("convert_int3_sat_rtn(double3)").unwrap()[0];
        let out = run_on(&against(group, "convert_int_sat_rtp(double)"), 1 << 20);
        for run in &out.runs {
            assert!(run.mismatches > 1000, "{run:?}");
        }
    }

    /// A kernel and a fast path wrong in the same way are caught by the reference sample.
    #[test]
    fn identical_errors_are_caught_by_the_sample() {
        let mut group = plan("convert_short_sat_rtn(float)").unwrap()[0].clone();
        group.conversion = conversion("convert_short_sat_rtp(float)");
        // The fast path stays rtn: it agrees with the (rtn) kernel everywhere.
        let inputs = 1 << 24;
        let out = run_on(&group, inputs);
        let run = &out.runs[0];
        assert!(out.fast_path_errors > 0);
        assert!(run.mismatches > 0, "{run:?}");
        assert_eq!(run.corrections, 0);
        // Only sampled inputs were compared with the reference.
        assert!(run.reference_checked < inputs / 16, "{run:?}");
    }
}
