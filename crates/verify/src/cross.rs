//! Cross-ISA execution: clconv's ahead-of-time objects ([`clconv::aot`]) for aarch64,
//! riscv64 (with and without V) and s390x, linked with a small C driver by Debian's cross
//! compilers and run under QEMU's user-mode emulation, compared bit for bit with the reference
//! interpreter.
//!
//! A [`Plan`] is target-independent: the entry points to emit (requests, layout, tier), one
//! input buffer holding every source type's inputs ([`inputs`]), the calls each entry point
//! gets (the whole input, then short counts that end in every kind of tail, 0 included), and
//! the reference's output for each ([`clconv::reference::evaluate`], the oracle). [`run`]
//! builds the target's object and header, writes the driver's kernel table (generated C),
//! compiles and links `driver.c` statically with the target's `gcc`, runs it under
//! `qemu-<arch>` (in chunks of kernels, so that one that stops QEMU is found and the rest
//! still run) and compares every byte the driver wrote back.
//!
//! What the driver checks besides the results: each source buffer ends at an inaccessible
//! page (reading one byte past the count's values faults), the destination starts one byte
//! off alignment between 16 guard bytes on either side (the test checks they are untouched),
//! and the kernel leaves its source unchanged.
//!
//! ```no_run
//! use clconv::target::Target;
//! use clconv_verify::cross::{self, Plan};
//! let plan = Plan::matrix(7);
//! let tools = cross::Toolchain::of(Target::Aarch64).unwrap();
//! let run = cross::run(&tools, &plan, std::path::Path::new("/tmp/cross"), 256).unwrap();
//! assert_eq!(run.mismatch_count, 0);
//! ```

use crate::check::{self, mask_of, FloatFormat, Mismatch, Rng};
use clconv::aot::{self, ObjectBuilder};
use clconv::buffer::bytes_per_vector;
use clconv::kernel::Tier;
use clconv::reference;
use clconv::request::{Conversion, Request};
use clconv::target::Target;
use clconv::types::{Extensions, Layout, Rounding, ScalarType, VectorType, Width};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The C driver (`crates/verify/tests/cross_isa/driver.c`).
pub const DRIVER_C: &str = include_str!("../tests/cross_isa/driver.c");

/// Guard bytes the driver puts before and after each destination (filled with [`FILL`]).
pub const GUARD: usize = 16;

/// The byte the driver fills each destination and its guards with before a call.
pub const FILL: u8 = 0xa5;

/// The most calls one entry point gets (the driver's table has room for this many counts).
pub const MAX_CALLS: usize = 10;

/// Every package the cross-ISA run needs, as Debian names them.
pub const PACKAGES: &[&str] = &[
    "qemu-user",
    "gcc-aarch64-linux-gnu",
    "gcc-riscv64-linux-gnu",
    "gcc-s390x-linux-gnu",
    "libc6-dev-arm64-cross",
    "libc6-dev-riscv64-cross",
    "libc6-dev-s390x-cross",
];

/// How to build and run code for one target: the cross compiler, QEMU and its options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// The target.
    pub target: Target,
    /// The cross C compiler (Debian's `gcc-<arch>-linux-gnu`).
    pub cc: &'static str,
    /// QEMU's user-mode emulator (Debian's `qemu-user`).
    pub qemu: &'static str,
    /// QEMU's options (riscv64 with V: the CPU model that has it).
    pub qemu_args: &'static [&'static str],
    /// The Debian packages that provide `cc` (with its static C library) and `qemu`.
    pub packages: &'static [&'static str],
}

impl Toolchain {
    /// The cross targets: every target clconv compiles for that this machine cannot run.
    pub const TARGETS: [Target; 4] = [
        Target::Aarch64,
        Target::Riscv64,
        Target::Riscv64V,
        Target::S390x,
    ];

    /// The toolchain of a cross target (`None` for the x86-64 ones, which run natively).
    pub fn of(target: Target) -> Option<Toolchain> {
        let (cc, qemu, qemu_args, packages): (_, _, &'static [&'static str], _) = match target {
            Target::Aarch64 => (
                "aarch64-linux-gnu-gcc",
                "qemu-aarch64",
                &[],
                &[
                    "gcc-aarch64-linux-gnu",
                    "libc6-dev-arm64-cross",
                    "qemu-user",
                ][..],
            ),
            Target::Riscv64 => (
                "riscv64-linux-gnu-gcc",
                "qemu-riscv64",
                &[],
                &[
                    "gcc-riscv64-linux-gnu",
                    "libc6-dev-riscv64-cross",
                    "qemu-user",
                ][..],
            ),
            // Cranelift's V code assumes 128-bit vector registers at least (VLEN = 128).
            Target::Riscv64V => (
                "riscv64-linux-gnu-gcc",
                "qemu-riscv64",
                &["-cpu", "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0"],
                &[
                    "gcc-riscv64-linux-gnu",
                    "libc6-dev-riscv64-cross",
                    "qemu-user",
                ][..],
            ),
            Target::S390x => (
                "s390x-linux-gnu-gcc",
                "qemu-s390x",
                &[],
                &["gcc-s390x-linux-gnu", "libc6-dev-s390x-cross", "qemu-user"][..],
            ),
            _ => return None,
        };
        Some(Toolchain {
            target,
            cc,
            qemu,
            qemu_args,
            packages,
        })
    }

    /// Checks that the compiler, its static C library and QEMU are installed: the error names
    /// the missing tools and the command that installs them.
    pub fn check(&self) -> Result<(), String> {
        let mut missing = Vec::new();
        for tool in [self.cc, self.qemu] {
            let found = Command::new(tool)
                .arg("--version")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            if !found {
                missing.push(tool);
            }
        }
        if missing.is_empty() {
            // The static C library comes in the libc6-dev-*-cross package.
            let libc = Command::new(self.cc)
                .arg("-print-file-name=libc.a")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .unwrap_or_default();
            if !Path::new(&libc).is_absolute() {
                missing.push("the static C library (libc.a)");
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        Err(format!(
            "cross-ISA execution for {} needs {} (missing: {}): install them with\n    \
             apt-get update && apt-get install -y --no-install-recommends {}\n\
             (Debian/Ubuntu; .ci/run does this; all targets: {})",
            self.target.name(),
            self.packages.join(", "),
            missing.join(", "),
            self.packages.join(" "),
            PACKAGES.join(" "),
        ))
    }

    /// QEMU's version line (`qemu-riscv64 version 7.2.22 (...)`).
    pub fn qemu_version(&self) -> String {
        Command::new(self.qemu)
            .arg("--version")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default()
    }
}

/// The input bit patterns for source type `t`: the special values, then `random` uniformly
/// random bit patterns and (for float and integer sources) `random` structured ones. Compact
/// on purpose (a few thousand per type): each input goes through 95 kernels per tier and
/// target under emulation; [`check::inputs`] is the JIT's larger set.
///
/// - 8-bit sources: every bit pattern.
/// - half, float, double: ±0; the smallest, second-smallest and largest subnormals and every
///   subnormal power of two; the smallest normal; the largest finite; ±inf; powers of two
///   (every exponent of half and float; double's within 2^±200, at the ends of its range and
///   every 32nd between); halfway cases k + 0.5 (k < 24) and at every integer type's range
///   edges; every integer type's MIN and MAX and MIN - 1, MAX + 1 (as the format rounds them);
///   the float and half range edges a narrowing meets: FLT_MAX, FLT_MAX + half an ulp (rte
///   overflows), 2^128, 65504, 65519, 65520 (rte: inf), the float and half subnormal ranges'
///   ties (2^-150, 1.5 * 2^-150, 2^-25, 3 * 2^-26, ...) and the rounding tie bit of float and
///   half at several exponents; each with its one-ulp neighbours on both sides, and both signs.
///   NaNs of both signs with payloads: quiet only, signalling (1), quiet | 1, all ones,
///   alternating bits, and bits either side of where a narrowing cuts the payload (double ->
///   float at bit 29, double -> half at 42, float -> half at 13).
///   Random: uniform bit patterns and values of moderate magnitude (2^-8 to 2^72).
/// - integers: [`check::integer_edges`] (the differential check's too). Random: uniform bit
///   patterns and values of random bit length.
pub fn inputs(t: ScalarType, random: usize, seed: u64) -> Vec<u64> {
    if t.bits() == 8 {
        return (0..256).collect();
    }
    let mut rng = Rng::new(seed ^ 0xc4055 ^ ((t as u64) << 16));
    let mut out = if t.is_float() {
        float_specials(t)
    } else {
        check::integer_edges(t)
    };
    let mask = mask_of(t);
    for _ in 0..random {
        out.push(rng.next_u64() & mask);
    }
    for _ in 0..random {
        let r = rng.next_u64();
        let x = if t.is_float() {
            // Exponents around the integer ranges, where float -> int results are interesting.
            let f = FloatFormat::of(t);
            let exp = ((r % 80) as i64 - 8).min(f.bias);
            let sign = (r >> 63) << (f.bits - 1);
            sign | f.pow2(exp) | (rng.next_u64() & f.mantissa_mask())
        } else {
            let len = 1 + (r % t.bits() as u64) as u32;
            let m = rng.next_u64() >> (64 - len);
            if t.is_signed_integer() && (r >> 32) & 1 == 1 {
                m.wrapping_neg()
            } else {
                m
            }
        };
        out.push(x & mask);
    }
    let mut seen = HashSet::new();
    out.retain(|x| seen.insert(*x));
    out
}

/// The bits of `v` (a double) rounded to `t` by the reference (nearest-even).
fn encode(t: ScalarType, v: f64) -> u64 {
    if t == ScalarType::Double {
        return v.to_bits();
    }
    let c = Conversion::new(
        VectorType::scalar(ScalarType::Double),
        VectorType::scalar(t),
        false,
        Some(Rounding::Rte),
        Extensions::with_fp16(),
    )
    .expect("double -> float/half is a conversion");
    reference::convert_element(&c, Rounding::Rte, v.to_bits()).bits
}

fn float_specials(t: ScalarType) -> Vec<u64> {
    let f = FloatFormat::of(t);
    let mut base: Vec<u64> = vec![
        0,
        1,
        2,
        f.mantissa_mask(),
        1 << f.mantissa_bits,
        f.inf() - 1,
        f.inf(),
    ];
    for k in 0..f.mantissa_bits {
        base.push(1 << k); // subnormal powers of two
    }
    for e in (1 - f.bias)..=f.bias {
        let keep = t != ScalarType::Double || e.abs() <= 200 || e.abs() >= 1000 || e % 32 == 0;
        if keep {
            base.push(f.pow2(e));
        }
    }
    let mut values: Vec<f64> = (0..24).map(|k| k as f64 + 0.5).collect();
    for d in ScalarType::ALL.into_iter().filter(|d| d.is_integer()) {
        for edge in [d.int_min().unwrap(), d.int_max().unwrap()] {
            for delta in [-1.0, -0.5, 0.0, 0.5, 1.0] {
                values.push(edge as f64 + delta);
            }
        }
    }
    // Where narrowing to float or half overflows, goes subnormal or ties.
    values.extend([
        65504.0,
        65519.0,
        65520.0,
        65536.0,
        2f64.powi(-14),
        2f64.powi(-24),
        2f64.powi(-25),
        1.5 * 2f64.powi(-25),
        3.0 * 2f64.powi(-26),
        2f64.powi(-15) * (1.0 + 2f64.powi(-10)),
    ]);
    for e in [-14, -1, 0, 1, 10, 15] {
        values.push(2f64.powi(e) * (1.0 + 2f64.powi(-11))); // half's tie bit
    }
    if t == ScalarType::Double {
        values.extend([
            f32::MAX as f64,
            f64::from_bits(0x47ef_ffff_f000_0000), // FLT_MAX + half an ulp: rte overflows
            2f64.powi(128),
            2f64.powi(-126),
            2f64.powi(-149),
            2f64.powi(-150),
            1.5 * 2f64.powi(-150),
            3.0 * 2f64.powi(-151),
        ]);
        for e in [-126, -1, 0, 23, 127] {
            values.push(2f64.powi(e) * (1.0 + 2f64.powi(-24))); // float's tie bit
        }
    }
    for v in values {
        let bits = encode(t, v.abs());
        base.push(bits);
    }
    let mut out = Vec::new();
    for &b in &base {
        for x in [b, b.wrapping_add(1), b.wrapping_sub(1)] {
            if x & f.sign() == 0 && x <= f.inf() {
                out.push(x);
                out.push(x | f.sign());
            }
        }
    }
    let quiet = 1u64 << (f.mantissa_bits - 1);
    let mut payloads = vec![
        quiet,
        1,
        quiet | 1,
        f.mantissa_mask(),
        quiet >> 1,
        0x5555_5555_5555_5555 & f.mantissa_mask(),
        0xaaaa_aaaa_aaaa_aaaa & f.mantissa_mask(),
    ];
    // Bits either side of where a narrowing cuts the payload.
    let cuts: &[u32] = match t {
        ScalarType::Double => &[29, 42],
        ScalarType::Float => &[13],
        _ => &[],
    };
    for &cut in cuts {
        payloads.extend([1 << cut, 1 << (cut - 1), quiet | 1 << (cut - 1)]);
    }
    for p in payloads {
        out.push(f.inf() | p);
        out.push(f.inf() | p | f.sign());
    }
    out
}

/// Bytes of random data the reinterpretations read.
const RANDOM_BYTES: usize = 37 * 128;

/// A source buffer in the plan's input.
#[derive(Clone, Debug)]
struct Region {
    /// Byte offset in [`Plan::input`].
    offset: usize,
    /// The buffer's elements' bits in packed order (padding slots excluded; empty for the
    /// reinterpretations' random bytes).
    elements: Vec<u64>,
}

/// One entry point of a [`Plan`].
#[derive(Clone, Debug)]
pub struct Entry {
    /// The request.
    pub request: Request,
    /// The buffers' layout (aligned: only for 3-component vectors).
    pub layout: Layout,
    /// The tier.
    pub tier: Tier,
    /// The vector counts it is called with, each call on the start of its source buffer: the
    /// first is the whole buffer, the others end in tails of every kind (0 included).
    pub calls: Vec<usize>,
    region: usize,
    expected: usize,
}

impl Entry {
    /// The bytes of one source vector.
    pub fn src_bytes(&self) -> usize {
        bytes_per_vector(self.request.src(), self.layout)
    }

    /// The bytes of one destination vector.
    pub fn dst_bytes(&self) -> usize {
        bytes_per_vector(self.request.dst(), self.layout)
    }

    /// The C symbol [`clconv::aot`] gives it.
    pub fn symbol(&self) -> String {
        let mut s = aot::symbol_name(&self.request);
        if self.layout == Layout::Aligned {
            s.push_str("_aligned");
        }
        if self.tier == Tier::Quick {
            s.push_str("_quick");
        }
        s
    }

    /// The bytes the driver writes for this entry: per call, the destination between its
    /// guards.
    fn output_bytes(&self) -> usize {
        self.calls
            .iter()
            .map(|&c| 2 * GUARD + c * self.dst_bytes())
            .sum()
    }
}

/// Which entry points and how many values a [`Plan`] has per request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shapes {
    /// The first call of a width-1 conversion at most converts this many values (the whole
    /// input when it is smaller).
    pub scalar_count: usize,
    /// The same for a width-3 conversion (either layout).
    pub x3_count: usize,
}

/// What to emit, run and expect: target-independent (see the module documentation).
pub struct Plan {
    /// The entry points, in the order they go into the object.
    pub entries: Vec<Entry>,
    /// Every source buffer, one after the other: the driver's input file.
    pub input: Vec<u8>,
    regions: Vec<Region>,
    /// The reference's destination for each (request, layout)'s first call, shared by tiers.
    expected: Vec<Vec<u8>>,
}

impl Plan {
    /// The requests of the whole matrix, one per distinct kernel shape: every conversion with
    /// half (`Request::all(Extensions::with_fp16())`) at width 1 (1,045: the element loop all
    /// widths share in the JIT) and at width 3 in the packed layout (3 elements per value) and
    /// in the aligned one (the per-element loop that skips the padding; 1,045 each), every
    /// reinterpretation, and what the languages spell beyond them
    /// ([`clconv::languages::beyond_the_matrix`]).
    pub fn matrix_requests() -> Vec<(Request, Layout)> {
        let mut requests = Vec::new();
        for r in Request::all(Extensions::with_fp16()) {
            match (r, r.src().width) {
                (Request::Convert(_), Width::W1) => requests.push((r, Layout::Packed)),
                (Request::Convert(_), Width::W3) => {
                    requests.push((r, Layout::Packed));
                    requests.push((r, Layout::Aligned));
                }
                (Request::Reinterpret(_), _) => requests.push((r, Layout::Packed)),
                _ => {}
            }
        }
        // What the languages spell beyond the matrix (chains, PTX's float rules), a kernel
        // each (3-component ones in both layouts).
        for r in clconv::languages::beyond_the_matrix() {
            requests.push((r, Layout::Packed));
            if r.src().width == Width::W3 {
                requests.push((r, Layout::Aligned));
            }
        }
        requests
    }

    /// The whole matrix ([`Plan::matrix_requests`]) in both tiers, on [`inputs`] with 768
    /// random inputs of each kind per source type from `seed`, every shape on all of them.
    pub fn matrix(seed: u64) -> Plan {
        let shapes = Shapes {
            scalar_count: usize::MAX,
            x3_count: usize::MAX,
        };
        Plan::new(&Plan::matrix_requests(), shapes, seed, &|t| {
            inputs(t, 768, seed)
        })
    }

    /// A plan of `requests`, each in both tiers, on the inputs `inputs` gives per source type
    /// (reinterpretations: random bytes from `seed`).
    pub fn new(
        requests: &[(Request, Layout)],
        shapes: Shapes,
        seed: u64,
        inputs: &dyn Fn(ScalarType) -> Vec<u64>,
    ) -> Plan {
        let mut plan = Plan {
            entries: Vec::new(),
            input: Vec::new(),
            regions: Vec::new(),
            expected: Vec::new(),
        };
        let mut packed_regions = std::collections::HashMap::new();
        let mut aligned_regions = std::collections::HashMap::new();
        let mut bytes_region = None;
        for &(request, layout) in requests {
            let t = request.src().elem;
            let (region, count, tails): (usize, usize, &[usize]) = match (request, layout) {
                (Request::Reinterpret(_), _) => {
                    let region = *bytes_region.get_or_insert_with(|| plan.random_bytes(seed));
                    let n = (RANDOM_BYTES / bytes_per_vector(request.src(), layout)).min(37);
                    (region, n, &[0, 1, 2, 5])
                }
                (Request::Convert(_) | Request::Chain(_), Layout::Aligned) => {
                    let region = *aligned_regions
                        .entry(t)
                        .or_insert_with(|| plan.push_region(t, inputs(t), true));
                    let n = (plan.regions[region].elements.len() / 3).min(shapes.x3_count);
                    (region, n, &[0, 1, 2, 5, 43])
                }
                (Request::Convert(_) | Request::Chain(_), Layout::Packed) => {
                    let region = *packed_regions
                        .entry(t)
                        .or_insert_with(|| plan.push_region(t, inputs(t), false));
                    let elements = plan.regions[region].elements.len();
                    if request.src().width == Width::W1 {
                        let tails = &[0, 1, 2, 3, 7, 31, 67, 129, 255];
                        (region, elements.min(shapes.scalar_count), tails)
                    } else {
                        let n = (elements / request.src().lanes()).min(shapes.x3_count);
                        (region, n, &[0, 1, 2, 5, 43])
                    }
                }
            };
            let mut calls = vec![count];
            calls.extend(tails.iter().copied().filter(|&c| c < count));
            assert!(calls.len() <= MAX_CALLS);
            let offset = plan.regions[region].offset;
            let src = &plan.input[offset..offset + count * bytes_per_vector(request.src(), layout)];
            let mut want = vec![0u8; count * bytes_per_vector(request.dst(), layout)];
            reference::evaluate(&request, layout, src, &mut want)
                .expect("the plan's buffers hold whole vectors");
            plan.expected.push(want);
            for tier in [Tier::Optimised, Tier::Quick] {
                plan.entries.push(Entry {
                    request,
                    layout,
                    tier,
                    calls: calls.clone(),
                    region,
                    expected: plan.expected.len() - 1,
                });
            }
        }
        plan
    }

    /// Appends the elements `xs` of type `t` as a buffer: packed, or as 3-component vectors in
    /// the aligned layout with a recognisable padding element after every third (the kernels
    /// must ignore it). The element count is made odd and no multiple of any granule (at most
    /// 128 elements) by repeating elements from the start.
    fn push_region(&mut self, t: ScalarType, mut xs: Vec<u64>, aligned: bool) -> usize {
        let eb = t.bytes();
        let mut k = 0;
        while xs.len() % 128 != 77 {
            xs.push(xs[k]);
            k += 1;
        }
        let offset = self.input.len();
        if aligned {
            xs.truncate(xs.len() / 3 * 3);
            for (v, vector) in xs.chunks(3).enumerate() {
                let padding = 0x5a5a_5a5a_5a5a_5a5a ^ v as u64;
                for &x in vector.iter().chain([&padding]) {
                    self.input.extend_from_slice(&x.to_le_bytes()[..eb]);
                }
            }
        } else {
            for &x in &xs {
                self.input.extend_from_slice(&x.to_le_bytes()[..eb]);
            }
        }
        self.regions.push(Region {
            offset,
            elements: xs,
        });
        self.regions.len() - 1
    }

    fn random_bytes(&mut self, seed: u64) -> usize {
        let mut rng = Rng::new(seed ^ 0xb17e5);
        let offset = self.input.len();
        for _ in 0..RANDOM_BYTES / 8 {
            self.input.extend_from_slice(&rng.next_u64().to_le_bytes());
        }
        self.regions.push(Region {
            offset,
            elements: Vec::new(),
        });
        self.regions.len() - 1
    }

    /// The driver's kernel table: C that includes the object's header and `driver.h` and
    /// lists every entry point with its source offset, vector sizes and calls.
    pub fn table_c(&self, header: &str) -> String {
        let mut c = String::new();
        let _ = writeln!(c, "/* Generated by clconv_verify::cross. */");
        let _ = writeln!(c, "#include \"{header}\"\n#include \"driver.h\"\n");
        let _ = writeln!(c, "const struct kernel KERNELS[] = {{");
        for e in &self.entries {
            let counts: Vec<String> = e.calls.iter().map(|c| c.to_string()).collect();
            let symbol = e.symbol();
            let _ = writeln!(
                c,
                "    {{\"{symbol}\", (kernel_fn){symbol}, {}, {}, {}, {}, {{{}}}}},",
                self.regions[e.region].offset,
                e.src_bytes(),
                e.dst_bytes(),
                e.calls.len(),
                counts.join(", ")
            );
        }
        let _ = writeln!(c, "}};\nconst size_t N_KERNELS = {};", self.entries.len());
        c
    }

    /// Compares what the driver wrote for `entries` (a range of [`Plan::entries`]) with the
    /// reference: the mismatches counted and the first `keep` of them, and the elements
    /// compared. A guard byte that changed is a mismatch of its own.
    fn compare(
        &self,
        range: std::ops::Range<usize>,
        output: &[u8],
        keep: usize,
        failing: &mut Vec<(String, usize)>,
    ) -> (usize, Vec<Mismatch>, usize) {
        let mut count = 0;
        let mut kept = Vec::new();
        let mut elements = 0;
        let mut at = 0;
        for e in &self.entries[range] {
            let count_before = count;
            let region = &self.regions[e.region];
            let want_all = &self.expected[e.expected];
            for &c in &e.calls {
                let len = c * e.dst_bytes();
                let Some(block) = output.get(at..at + 2 * GUARD + len) else {
                    count += 1;
                    kept.push(Mismatch {
                        request: format!("{} (the driver's output ends early)", e.symbol()),
                        layout: e.layout,
                        index: at,
                        input: 0,
                        expected: (at + 2 * GUARD + len) as u64,
                        got: output.len() as u64,
                    });
                    return (count, kept, elements);
                };
                at += 2 * GUARD + len;
                elements += c * e.request.dst().lanes();
                let name = format!(
                    "{} = {} [{}], count {c}",
                    e.symbol(),
                    e.request,
                    e.tier.name()
                );
                let (before, rest) = block.split_at(GUARD);
                let (got, after) = rest.split_at(len);
                for (side, guard, base) in [("before", before, 0), ("after", after, GUARD + len)] {
                    for (i, &g) in guard.iter().enumerate() {
                        if g != FILL {
                            count += 1;
                            if kept.len() < keep {
                                kept.push(Mismatch {
                                    request: format!("{name} (wrote {side} the destination)"),
                                    layout: e.layout,
                                    index: base + i,
                                    input: 0,
                                    expected: FILL as u64,
                                    got: g as u64,
                                });
                            }
                        }
                    }
                }
                let want = &want_all[..len];
                if got != want {
                    let src_len = c * e.src_bytes();
                    let src = &self.input[region.offset..region.offset + src_len];
                    let lanes = e.request.src().lanes();
                    let n = region.elements.len().min(c * lanes);
                    let (n_bad, mut found) = check::diff(
                        &e.request,
                        e.layout,
                        src,
                        want,
                        got,
                        &region.elements[..n],
                        keep.saturating_sub(kept.len()),
                    );
                    for m in &mut found {
                        m.request = name.clone();
                    }
                    count += n_bad;
                    kept.extend(found);
                }
            }
            if count > count_before {
                let what = format!("{} = {} [{}]", e.symbol(), e.request, e.tier.name());
                failing.push((what, count - count_before));
            }
        }
        (count, kept, elements)
    }

    /// The range of [`Plan::entries`] whose output the driver writes, in bytes.
    fn output_bytes(&self, range: std::ops::Range<usize>) -> usize {
        self.entries[range].iter().map(Entry::output_bytes).sum()
    }
}

/// An entry point whose run did not finish: the driver's process stopped (QEMU aborted, a
/// signal, or the driver found its source buffer changed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stopped {
    /// The entry point's symbol.
    pub symbol: String,
    /// The request.
    pub request: String,
    /// How the process ended.
    pub status: String,
    /// The last lines it wrote to stderr (QEMU's message).
    pub stderr: String,
}

/// Wall time of each step of [`run`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Times {
    /// Compiling every entry point into the object ([`ObjectBuilder`]).
    pub emit: Duration,
    /// Compiling the driver and linking it with the object.
    pub link: Duration,
    /// Running the driver under QEMU.
    pub run: Duration,
    /// Comparing with the reference.
    pub compare: Duration,
}

/// What running a [`Plan`] on one target found.
#[derive(Clone, Debug)]
pub struct TargetRun {
    /// The target.
    pub target: Target,
    /// QEMU's version line.
    pub qemu: String,
    /// Entry points in the object.
    pub kernels: usize,
    /// Entry points that ran to the end (the others are in [`TargetRun::stopped`]).
    pub kernels_run: usize,
    /// Calls made (over the entry points that ran).
    pub calls: usize,
    /// Destination elements compared with the reference.
    pub elements: usize,
    /// Elements (and guard bytes) that differ.
    pub mismatch_count: usize,
    /// The first of them.
    pub mismatches: Vec<Mismatch>,
    /// Every entry point with mismatches (symbol, request, tier), and how many.
    pub failing: Vec<(String, usize)>,
    /// The entry points whose run stopped, in every link.
    pub stopped: Vec<Stopped>,
    /// The entry points whose run stopped in the first link (how, in each [`Stopped`]) and
    /// that ran in the second, where the object sits [`SHIFT`] bytes further on, or in the
    /// third, [`THIRD_SHIFT`] bytes on: QEMU 7.2
    /// aborts translating some riscv64 V code at a page start
    /// ([`rvv_static_rounding_at_page_start`]).
    pub shifted: Vec<Stopped>,
    /// The first link's driver executable.
    pub executable: PathBuf,
    /// The object file's size.
    pub object_bytes: usize,
    /// Where the time went.
    pub times: Times,
}

impl std::fmt::Display for TargetRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |d: Duration| d.as_secs_f64();
        write!(
            f,
            "{:<10} {} kernels ({} ran, {} of them in the shifted link; {} stopped), {} calls, \
             {} elements, {} mismatches; object {} KiB; emit {:.1} s, link {:.1} s, \
             QEMU {:.1} s, compare {:.1} s",
            self.target.name(),
            self.kernels,
            self.kernels_run,
            self.shifted.len(),
            self.stopped.len(),
            self.calls,
            self.elements,
            self.mismatch_count,
            self.object_bytes / 1024,
            s(self.times.emit),
            s(self.times.link),
            s(self.times.run),
            s(self.times.compare),
        )
    }
}

/// Why [`run`] could not run a plan at all.
#[derive(Debug, thiserror::Error)]
pub enum CrossError {
    /// A tool is missing (the message names the packages).
    #[error("{0}")]
    Tools(String),
    /// The object could not be built.
    #[error("building the object: {0}")]
    Aot(#[from] aot::AotError),
    /// The symbols the object has are not the plan's.
    #[error("the object's symbols are not the plan's: {0}")]
    Symbols(String),
    /// Compiling or linking the driver failed.
    #[error("{cc} failed ({status}):\n{stderr}")]
    Link {
        /// The compiler.
        cc: String,
        /// Its exit status.
        status: String,
        /// What it said.
        stderr: String,
    },
    /// A file could not be written or read.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
}

fn io<T>(path: &Path, r: std::io::Result<T>) -> Result<T, CrossError> {
    r.map_err(|error| CrossError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// Builds `plan`'s object for `tools.target`, links it with the driver in `dir` (created),
/// runs it under QEMU `chunk` entry points per process and compares every result with the
/// reference. A process that stops is run again on halves of its chunk, down to single entry
/// points. Those run once more in a second link of the same object [`SHIFT`] bytes further on
/// (QEMU's translation depends on where code sits: see [`TargetRun::shifted`]); the ones that
/// stop there too are [`TargetRun::stopped`]. Every entry point that ran is compared.
pub fn run(
    tools: &Toolchain,
    plan: &Plan,
    dir: &Path,
    chunk: usize,
) -> Result<TargetRun, CrossError> {
    run_with(tools, plan, dir, chunk, true)
}

/// [`run`], with `rounding_control` false: the object's kernels take the rows that round by
/// themselves ([`ObjectBuilder::without_rounding_control`]), the ones code lowered into a
/// caller's own function takes, so their machine code runs too.
pub fn run_with(
    tools: &Toolchain,
    plan: &Plan,
    dir: &Path,
    chunk: usize,
    rounding_control: bool,
) -> Result<TargetRun, CrossError> {
    tools.check().map_err(CrossError::Tools)?;
    io(dir, std::fs::create_dir_all(dir))?;
    let mut times = Times::default();

    let start = Instant::now();
    let mut object = ObjectBuilder::new(tools.target)?;
    if !rounding_control {
        object = object.without_rounding_control();
    }
    for e in &plan.entries {
        let symbol = match e.layout {
            Layout::Aligned => object.add_aligned(&e.request, e.tier)?,
            Layout::Packed => object.add(&e.request, e.tier)?,
        };
        if symbol != e.symbol() {
            return Err(CrossError::Symbols(format!(
                "{} [{}] is {symbol}, the plan expects {}",
                e.request,
                e.tier.name(),
                e.symbol()
            )));
        }
    }
    let out = object.finish()?;
    if out.symbols.len() != plan.entries.len() {
        return Err(CrossError::Symbols(format!(
            "{} symbols for {} entry points",
            out.symbols.len(),
            plan.entries.len()
        )));
    }
    times.emit = start.elapsed();
    run_object(tools, plan, dir, chunk, &out.object, &out.header, times)
}

/// Runs the entry points of `object` (a relocatable object for `tools.target`, whose C header
/// is `header`) as [`run`] runs the ones [`clconv::aot`] writes: one function per
/// [`Plan::entries`] entry, named [`Entry::symbol`], `void f(const void *src, void *dst,
/// size_t count)` converting `count` values of the entry's request (little-endian elements).
/// What compiled the object is the caller's: functions built with the builder API, say.
pub fn run_object(
    tools: &Toolchain,
    plan: &Plan,
    dir: &Path,
    chunk: usize,
    object: &[u8],
    header: &str,
    mut times: Times,
) -> Result<TargetRun, CrossError> {
    tools.check().map_err(CrossError::Tools)?;
    io(dir, std::fs::create_dir_all(dir))?;
    let start = Instant::now();
    let table = plan.table_c("clconv_kernels.h");
    let pad_of = |shift: usize| {
        format!(
            "/* Moves kernels.o {shift} bytes further on in a later link. */\n\
             __asm__(\".text\\n.globl clconv_cross_pad\\nclconv_cross_pad:\\n.skip {shift}\\n\");\n"
        )
    };
    let (pad, pad_third) = (pad_of(SHIFT), pad_of(THIRD_SHIFT));
    let files: [(&str, &[u8]); 8] = [
        ("kernels.o", object),
        ("clconv_kernels.h", header.as_bytes()),
        ("table.c", table.as_bytes()),
        ("driver.c", DRIVER_C.as_bytes()),
        ("driver.h", DRIVER_H.as_bytes()),
        ("pad.c", pad.as_bytes()),
        ("pad-third.c", pad_third.as_bytes()),
        ("input.bin", &plan.input),
    ];
    for (name, bytes) in files {
        let path = dir.join(name);
        io(&path, std::fs::write(&path, bytes))?;
    }
    let exe = link(tools, dir, "driver", &[])?;
    times.link = start.elapsed();

    let mut result = TargetRun {
        target: tools.target,
        qemu: tools.qemu_version(),
        kernels: plan.entries.len(),
        kernels_run: 0,
        calls: 0,
        elements: 0,
        mismatch_count: 0,
        mismatches: Vec::new(),
        failing: Vec::new(),
        stopped: Vec::new(),
        shifted: Vec::new(),
        object_bytes: object.len(),
        executable: exe.clone(),
        times,
    };
    let ranges: Vec<std::ops::Range<usize>> = (0..plan.entries.len())
        .step_by(chunk.max(1))
        .map(|s| s..(s + chunk.max(1)).min(plan.entries.len()))
        .collect();
    let first = execute(tools, plan, dir, &exe, ranges, &mut result)?;
    if !first.is_empty() {
        let start = Instant::now();
        let shifted_exe = link(tools, dir, "driver-shifted", &["pad.c"])?;
        result.times.link += start.elapsed();
        let again: Vec<std::ops::Range<usize>> = first.iter().map(|s| s.0..s.0 + 1).collect();
        let mut still = execute(tools, plan, dir, &shifted_exe, again, &mut result)?;
        if !still.is_empty() {
            // A kernel longer than SHIFT can have such code at a page start in both links
            // (the 8-bit floats' kernels from ulong are): a third link, another offset.
            let start = Instant::now();
            let third_exe = link(tools, dir, "driver-shifted-third", &["pad-third.c"])?;
            result.times.link += start.elapsed();
            let again: Vec<std::ops::Range<usize>> = still.iter().map(|s| s.0..s.0 + 1).collect();
            still = execute(tools, plan, dir, &third_exe, again, &mut result)?;
        }
        for (index, stop) in first {
            match still.iter().find(|s| s.0 == index) {
                Some((_, again)) => result.stopped.push(again.clone()),
                None => result.shifted.push(stop),
            }
        }
    }
    result.stopped.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    result.shifted.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    Ok(result)
}

/// How far the second link moves the object: half a 4 KiB page, so that code at a page start
/// in the first link is mid-page in the second.
pub const SHIFT: usize = 2048;

/// How far the third link moves the object, for what stopped in both of the first two: a
/// quarter page, so that no place is a page start in all three.
pub const THIRD_SHIFT: usize = 1024;

/// Compiles the driver, the kernel table and `extra` sources and links them with the object,
/// statically, into `dir/name`.
fn link(tools: &Toolchain, dir: &Path, name: &str, extra: &[&str]) -> Result<PathBuf, CrossError> {
    let exe = dir.join(name);
    let cc = Command::new(tools.cc)
        .current_dir(dir)
        .args(["-static", "-O1", "-std=c11", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .args(["driver.c", "table.c"])
        .args(extra)
        .arg("kernels.o")
        .output();
    let cc = io(Path::new(tools.cc), cc)?;
    if !cc.status.success() {
        return Err(CrossError::Link {
            cc: tools.cc.into(),
            status: cc.status.to_string(),
            stderr: tail(&cc.stderr, 40),
        });
    }
    Ok(exe)
}

/// Runs `exe` under QEMU on each range of entry points and compares what ran into `result`;
/// returns the entry points that stopped (bisecting a range that stops down to them).
fn execute(
    tools: &Toolchain,
    plan: &Plan,
    dir: &Path,
    exe: &Path,
    ranges: Vec<std::ops::Range<usize>>,
    result: &mut TargetRun,
) -> Result<Vec<(usize, Stopped)>, CrossError> {
    let input = dir.join("input.bin");
    let output = dir.join("output.bin");
    let mut stopped = Vec::new();
    let mut pending: Vec<_> = ranges.into_iter().rev().collect();
    while let Some(range) = pending.pop() {
        let start = Instant::now();
        let done = Command::new(tools.qemu)
            .args(tools.qemu_args)
            .arg(exe)
            .arg(&input)
            .arg(&output)
            .arg(range.start.to_string())
            .arg(range.end.to_string())
            .output();
        let done = io(Path::new(tools.qemu), done)?;
        result.times.run += start.elapsed();
        if !done.status.success() {
            if range.len() == 1 {
                let e = &plan.entries[range.start];
                let stop = Stopped {
                    symbol: e.symbol(),
                    request: format!("{} [{}, {}]", e.request, e.layout.name(), e.tier.name()),
                    status: done.status.to_string(),
                    stderr: tail(&done.stderr, 6),
                };
                stopped.push((range.start, stop));
            } else {
                let mid = range.start + range.len() / 2;
                pending.push(mid..range.end);
                pending.push(range.start..mid);
            }
            continue;
        }
        let start = Instant::now();
        let bytes = io(&output, std::fs::read(&output))?;
        let expected_len = plan.output_bytes(range.clone());
        let (mut count, found, elements) =
            plan.compare(range.clone(), &bytes, 10, &mut result.failing);
        if bytes.len() != expected_len && count == 0 {
            count += 1;
            result.mismatches.push(Mismatch {
                request: format!("entry points {range:?}: the driver wrote more than asked"),
                layout: Layout::Packed,
                index: expected_len,
                input: 0,
                expected: expected_len as u64,
                got: bytes.len() as u64,
            });
        }
        result.mismatch_count += count;
        let room = 10usize.saturating_sub(result.mismatches.len());
        result.mismatches.extend(found.into_iter().take(room));
        result.elements += elements;
        result.kernels_run += range.len();
        result.calls += plan.entries[range]
            .iter()
            .map(|e| e.calls.len())
            .sum::<usize>();
        result.times.compare += start.elapsed();
    }
    Ok(stopped)
}

/// The driver's declarations (`crates/verify/tests/cross_isa/driver.h`).
pub const DRIVER_H: &str = include_str!("../tests/cross_isa/driver.h");

/// The last `lines` lines of a process's output.
fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The message QEMU 7.2 stops with on the riscv64 V code of [`rvv_static_rounding_at_page_start`].
pub const QEMU_RVV_ASSERTION: &str = "decode_save_opc: Assertion `ctx->insn_start != NULL' failed";

/// The entry points of a linked riscv64 executable (`exe`, ELF) whose code has a vector
/// floating-point conversion with a static rounding mode (`vfcvt.rtz.x.f.v`,
/// `vfcvt.rtz.xu.f.v`, and the `vfwcvt.rtz`, `vfncvt.rtz` and `vfncvt.rod` forms) as the first
/// instruction of a 4 KiB page, with its address: the code QEMU 7.2 cannot run.
///
/// Why: QEMU 7.2 translates such an instruction with two calls of `gen_set_rm` (the dynamic
/// mode, to check `frm`, then the static one), and each records the instruction for unwinding
/// with `decode_save_opc`, which asserts that it is called once per instruction. The first call
/// does nothing when the translation block already set the dynamic mode, as a `vmfne.vv`
/// before the conversion does (Cranelift's saturating conversion starts with one): so it
/// aborts where a translation block *starts* at the conversion, and a block always starts at
/// a page boundary. QEMU issue 1441, fixed in 8.0 by `gen_set_rm_chkfrm` (one call).
///
/// Entry points are named by their exported symbol (`.kernel` and `.body` stripped).
pub fn rvv_static_rounding_at_page_start(exe: &[u8]) -> Result<Vec<(String, u64)>, String> {
    const PAGE: u64 = 4096;
    let elf = Elf::parse(exe)?;
    let mut found = Vec::new();
    for (name, value, size) in elf.functions()? {
        if !name.starts_with("clconv_") {
            continue;
        }
        let mut page = value.div_ceil(PAGE) * PAGE;
        while page + 4 <= value + size {
            let word = elf.read_u32(page)?;
            if is_static_rounding_vector_conversion(word) {
                let entry = name
                    .trim_end_matches(".kernel")
                    .trim_end_matches(".body")
                    .to_string();
                found.push((entry, page));
            }
            page += PAGE;
        }
    }
    found.sort();
    Ok(found)
}

/// `vfcvt.rtz.xu.f.v`, `vfcvt.rtz.x.f.v`, `vfwcvt.rtz.xu.f.v`, `vfwcvt.rtz.x.f.v`,
/// `vfncvt.rtz.xu.f.w`, `vfncvt.rtz.x.f.w`, `vfncvt.rod.f.f.w`: OP-V (0x57), OPFVV (funct3 1),
/// VFUNARY0 (funct6 0b010010), told apart by the vs1 field.
fn is_static_rounding_vector_conversion(w: u32) -> bool {
    w & 0x7f == 0x57
        && (w >> 12) & 7 == 1
        && w >> 26 == 0b01_0010
        && matches!(
            (w >> 15) & 0x1f,
            0b00110 | 0b00111 | 0b01110 | 0b01111 | 0b10110 | 0b10111 | 0b10101
        )
}

/// Just enough of a little-endian ELF64 file: sections and function symbols.
struct Elf<'a> {
    bytes: &'a [u8],
    sections: Vec<Section>,
}

/// One section header's fields that [`Elf`] reads.
#[derive(Clone, Copy)]
struct Section {
    kind: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u64,
}

impl<'a> Elf<'a> {
    const PROGBITS: u64 = 1;
    const SYMTAB: u64 = 2;

    fn parse(bytes: &'a [u8]) -> Result<Elf<'a>, String> {
        if bytes.get(..6) != Some(b"\x7fELF\x02\x01") {
            return Err("not a little-endian ELF64 file".into());
        }
        let shoff = le(bytes, 0x28, 8)?;
        let (shentsize, shnum) = (le(bytes, 0x3a, 2)?, le(bytes, 0x3c, 2)?);
        let sections = (0..shnum)
            .map(|i| {
                let h = (shoff + i * shentsize) as usize;
                Ok(Section {
                    kind: le(bytes, h + 4, 4)?,
                    addr: le(bytes, h + 16, 8)?,
                    offset: le(bytes, h + 24, 8)?,
                    size: le(bytes, h + 32, 8)?,
                    link: le(bytes, h + 40, 4)?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Elf { bytes, sections })
    }

    /// Every function symbol: name, address, size.
    fn functions(&self) -> Result<Vec<(String, u64, u64)>, String> {
        let symtab = self
            .sections
            .iter()
            .find(|s| s.kind == Elf::SYMTAB)
            .ok_or("no symbol table (stripped?)")?;
        let strtab = self
            .sections
            .get(symtab.link as usize)
            .ok_or("bad string table index")?;
        let strings = self
            .bytes
            .get(strtab.offset as usize..(strtab.offset + strtab.size) as usize)
            .ok_or("truncated string table")?;
        let mut out = Vec::new();
        for s in (symtab.offset..symtab.offset + symtab.size).step_by(24) {
            let s = s as usize;
            if le(self.bytes, s + 4, 1)? & 0xf != 2 {
                continue; // not STT_FUNC
            }
            let name = le(self.bytes, s, 4)? as usize;
            let tail = strings.get(name..).ok_or("bad symbol name")?;
            let end = tail.iter().position(|&c| c == 0).ok_or("bad symbol name")?;
            let name = String::from_utf8_lossy(&tail[..end]).into_owned();
            out.push((name, le(self.bytes, s + 8, 8)?, le(self.bytes, s + 16, 8)?));
        }
        Ok(out)
    }

    /// The 32-bit word at virtual address `addr`.
    fn read_u32(&self, addr: u64) -> Result<u32, String> {
        let s = self
            .sections
            .iter()
            .find(|s| s.kind == Elf::PROGBITS && s.addr <= addr && addr + 4 <= s.addr + s.size)
            .ok_or_else(|| format!("0x{addr:x} is in no section"))?;
        Ok(le(self.bytes, (s.offset + addr - s.addr) as usize, 4)? as u32)
    }
}

/// The little-endian integer of `n` bytes at `at`.
fn le(bytes: &[u8], at: usize, n: usize) -> Result<u64, String> {
    let b = bytes.get(at..at + n).ok_or("truncated ELF")?;
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(b);
    Ok(u64::from_le_bytes(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encodings `llvm-objdump --mattr=+v` names in a riscv64-v kernel.
    #[test]
    fn static_rounding_conversions_are_recognised() {
        assert!(is_static_rounding_vector_conversion(0x4a23_91d7)); // vfcvt.rtz.x.f.v v3, v2
        assert!(is_static_rounding_vector_conversion(0x4a23_11d7)); // vfcvt.rtz.xu.f.v v3, v2
        assert!(!is_static_rounding_vector_conversion(0x4a21_91d7)); // vfcvt.f.x.v v3, v2
        assert!(!is_static_rounding_vector_conversion(0x7221_1057)); // vmfne.vv v0, v2, v2
        assert!(!is_static_rounding_vector_conversion(0x5c30_3157)); // vmerge.vim v2, v3, 0, v0
    }

    /// Every entry point reads its whole input at most: the W1 count is the region's.
    #[test]
    fn plans_call_every_shape_with_tails() {
        let plan = Plan::new(
            &Plan::matrix_requests()[..40],
            Shapes {
                scalar_count: usize::MAX,
                x3_count: usize::MAX,
            },
            1,
            &|t| inputs(t, 16, 1),
        );
        assert_eq!(plan.entries.len(), 80);
        for e in &plan.entries {
            assert!(e.calls.contains(&0), "{}", e.symbol());
            assert!(e.calls.len() <= MAX_CALLS);
            let offset = plan.regions[e.region].offset;
            assert!(offset + e.calls[0] * e.src_bytes() <= plan.input.len());
            assert_eq!(plan.expected[e.expected].len(), e.calls[0] * e.dst_bytes());
        }
    }
}
