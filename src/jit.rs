//! The JIT: compiles batch kernels with Cranelift for the host (or a chosen x86-64 flag set),
//! installs them in its own executable memory (`src/code_memory.rs`), caches them by canonical
//! request, and runs them on buffers through a safe API.
//!
//! ```
//! use clconv::jit::Jit;
//! let jit = Jit::new().unwrap();
//! let kernel = jit.compile("convert_uchar4_sat_rte(float4)").unwrap();
//! let src = [-5.0f32, 254.5, 254.6, 1.2e9];
//! let mut dst = [0u8; 4];
//! kernel.run(&src, &mut dst).unwrap();
//! assert_eq!(dst, [0, 254, 255, 255]);
//!
//! // The destination-only spelling: the source type comes from the buffer.
//! let k = jit.compile("convert_int4_sat_rte").unwrap();
//! let mut out = [0i32; 4];
//! k.run(&[0.5f64, 1.5, -2.5, f64::NAN], &mut out).unwrap();
//! assert_eq!(out, [0, 2, -2, 0]);
//! ```
//!
//! Compiled code lives as long as the [`Jit`] or any [`Kernel`] from it: it is freed when the
//! last of them is dropped. `Jit` and `Kernel` are `Send + Sync`; compilation is serialised on
//! one lock, runs are not.
//!
//! Compiling is tiered by default ([`Tiering`]): [`Jit::compile`] returns a kernel on quick code
//! (Cranelift without optimisation passes, a third of the compile time); from the kernel's
//! first run a background thread compiles the optimised kernel and swaps it in; every run uses
//! the best code ready when it starts. Both tiers implement the same recipe and are checked the
//! same way.
//!
//! Every kernel runs with a defined floating-point environment, set for the call and the
//! caller's restored after it (one `asm!` block, so no Rust code ever runs in a kernel's mode):
//! on x86-64 MXCSR with exceptions masked, on aarch64 FPCR with no traps and no default NaN
//! (and FPSR's flags restored), and on both no flush-to-zero or denormals-are-zero whatever
//! the calling thread set, and nearest-even, except for the kernels of the table's `mxcsr` and
//! `fpcr` rows (directed int -> float and double -> float), which run with the rounding mode
//! set to their conversion's and so convert with one `cvtdq2ps`/`cvtpd2ps` or `scvtf`/`fcvtn`
//! ([`kernel::Built::rounding_control`]), and the directed arithmetic kernels on x86-64
//! ([`crate::arith_kernel::DirectedArith`]), one `mulps` for `mul_rtz(float4)`. What differs
//! between hosts (this call, relocations, instruction-cache coherence) is in one module per
//! host ISA; the JIT runs on x86-64 Unix and aarch64 Linux, and elsewhere
//! [`Jit::new`] is [`JitError::UnsupportedHost`] (use `clconv::aot` there).

use crate::buffer::{self, BufferError};
use crate::code_memory::{Code, CodeMemory};
use crate::host;
use crate::kernel;
use crate::request::{Builtin, Request, RequestError};
use crate::table::IsaFeatures;
use crate::target::Target;
use crate::types::{Extensions, Layout, Rounding, ScalarType, Width};
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::verifier::verify_function;
use cranelift_frontend::FunctionBuilderContext;
use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock, Weak};

pub use crate::kernel::Tier;

/// Why compiling or running a kernel failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JitError {
    /// The name or request is not a legal conversion.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// The buffers do not fit the request.
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// The host ISA could not be set up.
    #[error("cannot set up Cranelift for this machine: {0}")]
    Isa(String),
    /// The JIT does not run kernels on this host (it runs on x86-64 Unix and aarch64 Linux);
    /// the message names the host and what to use instead (`clconv::aot`'s objects).
    #[error("{0}")]
    UnsupportedHost(String),
    /// Cranelift refused (or panicked while) compiling the kernel. A bug in clconv's tables.
    #[error("Cranelift could not compile {request}: {why} (please report this as a clconv bug)")]
    Compile {
        /// The request.
        request: String,
        /// Cranelift's message.
        why: String,
    },
    /// The language traps on an element (WebAssembly's `trunc` on NaN or an out-of-range
    /// value): the values before the one holding it were converted, nothing from it on was
    /// written.
    #[error("{request} traps on element {element}, which is {value}: the values before it were converted, nothing from it on was written")]
    Trap {
        /// The request.
        request: String,
        /// The element's number, counting components in order (padding not).
        element: usize,
        /// Its value.
        value: String,
    },
    /// The request has no kernel on this ISA (MX blocks on riscv64 without the V extension):
    /// not a bug, a limit the message names.
    #[error("{request} has no kernel for this target: {why}")]
    NoKernel {
        /// The request.
        request: String,
        /// Why, and what to use instead.
        why: String,
    },
    /// The byte form was asked of a kernel whose source type is only known from a typed buffer.
    #[error("{builtin} was compiled without a source type, so its byte form cannot know what the bytes hold: name the source (`{builtin}(float4)`) or call run() with a typed slice")]
    NeedsSourceType {
        /// The builtin name.
        builtin: String,
    },
}

/// x86-64 instruction-set flag sets a [`Jit`] can compile for and run on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum X64Flags {
    /// What `cranelift-native` detects on this machine.
    Host,
    /// The x86-64 baseline: SSE2 only.
    Sse2,
    /// SSE4.1 (and SSE3, SSSE3).
    Sse41,
    /// AVX2 (and FMA, BMI, no AVX-512).
    Avx2,
    /// AVX-512 F/VL/DQ on top of AVX2.
    Avx512,
}

impl X64Flags {
    /// The flag sets, host first.
    pub const ALL: [X64Flags; 5] = [
        X64Flags::Host,
        X64Flags::Sse2,
        X64Flags::Sse41,
        X64Flags::Avx2,
        X64Flags::Avx512,
    ];

    /// A short name: `host`, `sse2`, `sse4.1`, `avx2`, `avx512`.
    pub const fn name(self) -> &'static str {
        match self {
            X64Flags::Host => "host",
            X64Flags::Sse2 => "sse2",
            X64Flags::Sse41 => "sse4.1",
            X64Flags::Avx2 => "avx2",
            X64Flags::Avx512 => "avx512",
        }
    }

    /// The compilation target it stands for.
    pub const fn target(self) -> Target {
        match self {
            X64Flags::Host => Target::Host,
            X64Flags::Sse2 => Target::X86_64Sse2,
            X64Flags::Sse41 => Target::X86_64Sse41,
            X64Flags::Avx2 => Target::X86_64Avx2,
            X64Flags::Avx512 => Target::X86_64Avx512,
        }
    }
}

/// The table rows a JIT's batch kernels take on this machine: the ISA's, with the host routines
/// ([`IsaFeatures::with_host_routines`], [`crate::routine`]) where this CPU runs them (on
/// x86-64: F16C, AVX and AVX2).
///
/// ```
/// use clconv::jit::{jit_features, X64Flags};
/// let sse41 = X64Flags::Sse41.target().isa().unwrap();
/// let features = jit_features(&*sse41).unwrap();
/// assert!(!features.has(clconv::table::HOST_F16C)); // no AVX2 in these flags
/// ```
pub fn jit_features(isa: &dyn cranelift_codegen::isa::TargetIsa) -> Result<IsaFeatures, JitError> {
    let features = IsaFeatures::of(isa).map_err(|e| JitError::Isa(e.to_string()))?;
    Ok(if host::has_routines() {
        features.with_host_routines()
    } else {
        features
    })
}

/// Builds the Cranelift ISA for `flags` on this machine, with Cranelift's verifier off (see
/// [`Target::isa_with_verifier`]); refuses flag sets this CPU lacks.
pub fn host_isa(flags: X64Flags) -> Result<OwnedTargetIsa, JitError> {
    let target = flags.target();
    if !target.runs_here() {
        return Err(JitError::Isa(format!(
            "this machine cannot run code for {}",
            target.name()
        )));
    }
    target
        .isa_with_verifier(false)
        .map_err(|e| JitError::Isa(e.to_string()))
}

/// A kernel's Cranelift IR and machine code, from [`Jit::disassemble`].
#[derive(Clone, Debug)]
pub struct Disassembly {
    /// The Cranelift IR (CLIF text) of the batch kernel.
    pub clif: String,
    /// The machine code, as Cranelift's disassembly of its emitted instructions.
    pub asm: String,
    /// The machine code's size in bytes.
    pub code_size: usize,
}

/// A compiled kernel's entry point and its granule ([`kernel::Built::granule`]). Only ever
/// created from code the [`JitInner`] owns.
#[derive(Clone, Copy, Debug)]
struct EntryPoint {
    addr: usize,
    granule: usize,
    /// What the host's floating-point control register holds for the call
    /// ([`host::control_for`]).
    control: host::Control,
}

/// The code a cache entry runs now: the quick tier's until the background thread swaps in the
/// optimised tier's (same granule, so a run may start on either).
#[derive(Debug)]
struct Slot {
    addr: AtomicUsize,
    /// Whether `addr` is the optimised tier's code (else the quick tier's).
    optimised: AtomicBool,
    granule: usize,
    control: host::Control,
    /// The kernel's cache key: what its optimised compile compiles.
    key: (Request, Layout),
    /// A tiered kernel whose optimised compile is not queued yet: it is queued when the kernel
    /// first runs ([`Jit::start_tier_up`]) or by [`Jit::finish_tier_up`].
    tier_up_deferred: AtomicBool,
}

impl Slot {
    fn new(entry: EntryPoint, tier: Tier, key: (Request, Layout)) -> Arc<Slot> {
        Arc::new(Slot {
            addr: AtomicUsize::new(entry.addr),
            optimised: AtomicBool::new(tier == Tier::Optimised),
            granule: entry.granule,
            control: entry.control,
            key,
            tier_up_deferred: AtomicBool::new(false),
        })
    }

    fn entry(&self) -> EntryPoint {
        EntryPoint {
            // Acquire: pairs with the Release store of `upgrade`, after the code was finalized.
            addr: self.addr.load(Ordering::Acquire),
            granule: self.granule,
            control: self.control,
        }
    }

    fn tier(&self) -> Tier {
        if self.optimised.load(Ordering::Relaxed) {
            Tier::Optimised
        } else {
            Tier::Quick
        }
    }

    fn upgrade(&self, entry: EntryPoint) {
        debug_assert_eq!((entry.granule, entry.control), (self.granule, self.control));
        self.addr.store(entry.addr, Ordering::Release);
        self.optimised.store(true, Ordering::Relaxed);
    }
}

/// A count of background jobs and a condition variable to wait for it to reach zero.
#[derive(Default)]
struct Pending {
    count: Mutex<usize>,
    changed: Condvar,
}

impl Pending {
    fn add(&self, n: isize) {
        let mut count = lock(&self.count);
        *count = count.saturating_add_signed(n);
        self.changed.notify_all();
    }

    fn wait_zero(&self) {
        let mut count = lock(&self.count);
        while *count > 0 {
            count = self
                .changed
                .wait(count)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

/// Which code [`Jit::compile`] gives a kernel (see [`Jit::set_tiering`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Tiering {
    /// The quick tier at once, the optimised tier compiled on a background thread from the
    /// kernel's first run and swapped in when ready (the default): compiling costs what the
    /// quick tier does, kernels compiled but never run cost no optimised compile, and runs
    /// from a few hundred microseconds after the first get the optimised code.
    Tiered,
    /// The optimised tier only: compiling waits for it.
    OptimisedOnly,
    /// The quick tier only, never upgraded: for checking the quick tier's code.
    QuickOnly,
}

impl Tiering {
    /// Every tiering, each at the index of its `as u8` value (how a [`Jit`] keeps its own in
    /// an atomic).
    const ALL: [Tiering; 3] = [Tiering::Tiered, Tiering::OptimisedOnly, Tiering::QuickOnly];

    /// The tiering that compiles `tier`'s code only.
    ///
    /// ```
    /// use clconv::jit::{Tier, Tiering};
    /// assert_eq!(Tiering::only(Tier::Quick), Tiering::QuickOnly);
    /// ```
    pub const fn only(tier: Tier) -> Tiering {
        match tier {
            Tier::Optimised => Tiering::OptimisedOnly,
            Tier::Quick => Tiering::QuickOnly,
        }
    }
}

pub(crate) struct JitInner {
    pub(crate) isa: OwnedTargetIsa,
    quick_isa: OwnedTargetIsa,
    /// Both ISAs' features (the tiers differ in Cranelift's settings, not in the ISA's flags).
    pub(crate) features: IsaFeatures,
    ext: Extensions,
    pub(crate) static_mode: Rounding,
    /// The executable memory every kernel of this JIT lives in, and the lock installs take.
    pub(crate) code: Mutex<CodeMemory>,
    cache: Mutex<HashMap<(Request, Layout), Arc<Slot>>>,
    /// The arithmetic kernels compiled ([`crate::arith_kernel`]): entry point by request,
    /// layout, and whether it rounds by the control.
    pub(crate) arith_cache: Mutex<HashMap<(crate::arith::ArithRequest, Layout, bool), usize>>,
    /// [`crate::arith_kernel::DirectedArith::ExactSequences`] chosen.
    pub(crate) arith_sequences: std::sync::atomic::AtomicBool,
    /// The MX block kernels compiled ([`crate::mx_kernel`]): entry point by request.
    pub(crate) mx_cache: Mutex<HashMap<crate::mx::MxRequest, usize>>,
    /// A [`Tiering`] `as u8`.
    tiering: AtomicU8,
    /// Background compiles of this JIT's optimised tier not finished yet.
    pending: Arc<Pending>,
    /// 0: [`Threads::Auto`]; n: exactly n.
    threads: std::sync::atomic::AtomicUsize,
    /// Run Cranelift's IR verifier on every kernel before compiling it.
    pub(crate) verify_ir: std::sync::atomic::AtomicBool,
}

/// The JIT compiler: compiles and caches batch kernels.
///
/// See the [module docs](self) for an example.
#[derive(Clone)]
pub struct Jit {
    pub(crate) inner: Arc<JitInner>,
}

impl Jit {
    /// A JIT for this machine's ISA (as `cranelift-native` detects it), without `half`.
    pub fn new() -> Result<Jit, JitError> {
        Jit::with_options(X64Flags::Host, Extensions::default(), Rounding::Rte)
    }

    /// A JIT for an x86-64 flag set, with the given extensions and static rounding mode.
    pub fn with_options(
        flags: X64Flags,
        ext: Extensions,
        static_mode: Rounding,
    ) -> Result<Jit, JitError> {
        host::check().map_err(JitError::UnsupportedHost)?;
        let isa = host_isa(flags)?;
        let quick_isa = flags
            .target()
            .quick_isa()
            .map_err(|e| JitError::Isa(e.to_string()))?;
        let code = CodeMemory::new(libcalls::address).map_err(JitError::Isa)?;
        let features = jit_features(&*isa)?;
        Ok(Jit {
            inner: Arc::new(JitInner {
                isa,
                quick_isa,
                features,
                ext,
                static_mode,
                code: Mutex::new(code),
                cache: Mutex::new(HashMap::new()),
                arith_cache: Mutex::new(HashMap::new()),
                arith_sequences: std::sync::atomic::AtomicBool::new(false),
                mx_cache: Mutex::new(HashMap::new()),
                tiering: AtomicU8::new(Tiering::Tiered as u8),
                pending: Arc::new(Pending::default()),
                threads: std::sync::atomic::AtomicUsize::new(0),
                verify_ir: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// The extensions this JIT accepts.
    pub fn extensions(&self) -> Extensions {
        self.inner.ext
    }

    /// Compiles `name`: a full spelling (`convert_int4_sat_rte(float4)`, a mangled name) or a
    /// destination-only one (`convert_int4_sat_rte`), whose source type then comes from the
    /// element type of the buffer passed to [`Kernel::run`].
    pub fn compile(&self, name: &str) -> Result<Kernel, JitError> {
        match Request::parse(name, self.inner.ext) {
            Ok(request) => self.compile_request(&request),
            Err(RequestError::MissingSource { .. }) => {
                let builtin = Builtin::parse(name, self.inner.ext)?;
                Ok(Kernel {
                    jit: self.clone(),
                    what: What::Deferred(builtin),
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Compiles one request (packed layout now; the aligned one on first use).
    pub fn compile_request(&self, request: &Request) -> Result<Kernel, JitError> {
        let slot = self.slot(request, Layout::Packed)?;
        Ok(Kernel {
            jit: self.clone(),
            what: What::Fixed(*request, slot),
        })
    }

    /// Sets which code this JIT's compiles give their kernels from now on (all clones share
    /// it); kernels already compiled keep theirs.
    ///
    /// ```
    /// use clconv::jit::{Jit, Tier, Tiering};
    /// let jit = Jit::new().unwrap();
    /// jit.set_tiering(Tiering::OptimisedOnly);
    /// let k = jit.compile("convert_int4_sat_rte(float4)").unwrap();
    /// assert_eq!(k.tier(), Some(Tier::Optimised));
    /// ```
    pub fn set_tiering(&self, tiering: Tiering) {
        self.inner.tiering.store(tiering as u8, Ordering::Relaxed);
    }

    /// This JIT's [`Tiering`].
    pub fn tiering(&self) -> Tiering {
        // Only `set_tiering` stores, and only a Tiering's own value.
        Tiering::ALL[usize::from(self.inner.tiering.load(Ordering::Relaxed))]
    }

    /// Queues the optimised compile of every kernel of this JIT that still runs quick code and
    /// has not queued it (kernels not run yet), and waits until all are swapped in (or failed
    /// to compile, which leaves the quick one: it is correct, only slower). For benchmarks,
    /// and for callers who want the optimised code before a run.
    ///
    /// ```
    /// use clconv::jit::{Jit, Tier};
    /// let jit = Jit::new().unwrap(); // tiered
    /// let k = jit.compile("convert_float4_rtp(int4)").unwrap();
    /// jit.finish_tier_up();
    /// assert_eq!(k.tier(), Some(Tier::Optimised));
    /// ```
    pub fn finish_tier_up(&self) {
        let slots: Vec<Arc<Slot>> = lock(&self.inner.cache).values().cloned().collect();
        for slot in &slots {
            self.start_tier_up(slot);
        }
        self.inner.pending.wait_zero();
    }

    /// The code to run `request` with now, starting its tier-up if this is its first run.
    fn entry_point(&self, request: &Request, layout: Layout) -> Result<EntryPoint, JitError> {
        let slot = self.slot(request, layout)?;
        self.start_tier_up(&slot);
        Ok(slot.entry())
    }

    /// Queues `slot`'s deferred optimised compile, if it has one (once: the flag is taken).
    /// Deferred to the first run rather than queued by the compile: a background compile
    /// slows the caller's next compiles (on the 2-core development machine, 110-122 µs against
    /// 75-91 µs median per compile in a compile-only loop: it evicts Cranelift's code and data
    /// from the shared caches), and a kernel compiled but never run does not need it.
    fn start_tier_up(&self, slot: &Arc<Slot>) {
        if slot.tier_up_deferred.load(Ordering::Relaxed)
            && slot.tier_up_deferred.swap(false, Ordering::Relaxed)
        {
            let (request, layout) = slot.key;
            tier_up::queue(&self.inner, request, layout, slot.clone());
        }
    }

    fn slot(&self, request: &Request, layout: Layout) -> Result<Arc<Slot>, JitError> {
        let (request, layout, _) = shared_kernel(request, layout);
        let key = (request, layout);
        if let Some(slot) = lock(&self.inner.cache).get(&key) {
            return Ok(slot.clone());
        }
        let mut memory = lock(&self.inner.code);
        // Another thread may have compiled it while this one waited for the lock.
        if let Some(slot) = lock(&self.inner.cache).get(&key) {
            return Ok(slot.clone());
        }
        let tiering = self.tiering();
        let tier = match tiering {
            Tiering::OptimisedOnly => Tier::Optimised,
            Tiering::Tiered | Tiering::QuickOnly => Tier::Quick,
        };
        let (code, tier) = self
            .inner
            .compile_code(&request, layout, tier, self.verifies_ir())?;
        let entry = install(&mut memory, &request, &code)?;
        let slot = Slot::new(entry, tier, key);
        if tiering == Tiering::Tiered && tier == Tier::Quick {
            slot.tier_up_deferred.store(true, Ordering::Relaxed);
        }
        lock(&self.inner.cache).insert(key, slot.clone());
        drop(memory);
        Ok(slot)
    }

    /// Compiles many requests at once (packed layout, like [`Jit::compile_request`]), for
    /// warming a JIT up front: Cranelift runs on worker threads (one per core, or as
    /// [`Jit::set_threads`] says), and the code is installed and made executable once at the
    /// end instead of once per kernel. Requests already compiled come from the cache, and
    /// requests that share a kernel (see [`Jit::cached_kernels`]) compile it once. The kernels
    /// are returned in the order of `requests`; on an error none is added.
    ///
    /// ```
    /// use clconv::{jit::Jit, Extensions, Request};
    /// let jit = Jit::new().unwrap();
    /// let all: Vec<Request> = Request::all(Extensions::default())
    ///     .into_iter()
    ///     .filter(|r| r.to_string().starts_with("convert_float4"))
    ///     .collect();
    /// let kernels = jit.compile_many(&all).unwrap();
    /// assert_eq!(kernels.len(), all.len());
    /// assert_eq!(jit.cached_kernels(), all.len());
    /// // Compiled already: this one comes from the cache.
    /// let k = jit.compile("convert_float4(int4)").unwrap();
    /// let mut out = [0f32; 4];
    /// k.run(&[1i32, 2, 3, 4], &mut out).unwrap();
    /// assert_eq!(out, [1.0, 2.0, 3.0, 4.0]);
    /// assert_eq!(jit.cached_kernels(), all.len());
    /// ```
    pub fn compile_many(&self, requests: &[Request]) -> Result<Vec<Kernel>, JitError> {
        let layout = Layout::Packed;
        let mut memory = lock(&self.inner.code);
        let mut todo: Vec<Request> = Vec::new();
        {
            let cache = lock(&self.inner.cache);
            let mut seen = std::collections::HashSet::new();
            for r in requests {
                let (r, l, _) = shared_kernel(r, layout);
                debug_assert_eq!(l, layout);
                if !cache.contains_key(&(r, l)) && seen.insert(r) {
                    todo.push(r);
                }
            }
        }
        // Compiling is worth a thread per core whatever the batch's size.
        let workers = self.threads_for(usize::MAX).clamp(1, todo.len().max(1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        // A batch compiles the optimised tier at once: its latency is the batch's, not a
        // kernel's.
        let tier = match self.tiering() {
            Tiering::QuickOnly => Tier::Quick,
            Tiering::Tiered | Tiering::OptimisedOnly => Tier::Optimised,
        };
        let (inner, verify_ir) = (&self.inner, self.verifies_ir());
        let mut compiled: Vec<Option<Result<(MachineCode, Tier), JitError>>> =
            (0..todo.len()).map(|_| None).collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(request) = todo.get(i) else {
                                return done;
                            };
                            done.push((i, inner.compile_code(request, layout, tier, verify_ir)));
                        }
                    })
                })
                .collect();
            for h in handles {
                for (i, r) in h.join().expect("compile workers catch panics") {
                    compiled[i] = Some(r);
                }
            }
        });
        let mut pieces = Vec::with_capacity(todo.len());
        for (request, piece) in todo.iter().zip(compiled) {
            let (code, tier) = piece.expect("every request was taken")?;
            pieces.push((request, code, tier));
        }
        // One install for the batch: its kernels share pages, made executable at once.
        let codes: Vec<Code> = pieces.iter().map(|(_, code, _)| code.as_code()).collect();
        let addrs = memory.install(&codes).map_err(|why| JitError::Compile {
            request: format!("{} kernels", pieces.len()),
            why,
        })?;
        {
            let mut cache = lock(&self.inner.cache);
            for ((request, code, tier), addr) in pieces.iter().zip(addrs) {
                let entry = EntryPoint {
                    addr,
                    granule: code.granule,
                    control: host::control_for(code.rounding_control),
                };
                let key = (**request, layout);
                cache.insert(key, Slot::new(entry, *tier, key));
            }
        }
        drop(memory);
        requests.iter().map(|r| self.compile_request(r)).collect()
    }

    /// The Cranelift IR and the machine code (Cranelift's own disassembly of what it emits) of
    /// `request`'s batch kernel for this JIT's ISA, in one tier.
    ///
    /// ```
    /// use clconv::{jit::{Jit, Tier}, Extensions, Layout, Request};
    /// let jit = Jit::new().unwrap();
    /// let r = Request::parse("convert_int4_sat_rte(float4)", Extensions::default()).unwrap();
    /// let d = jit.disassemble(&r, Layout::Packed, Tier::Optimised).unwrap();
    /// assert!(d.clif.contains("nearest"));
    /// let q = jit.disassemble(&r, Layout::Packed, Tier::Quick).unwrap();
    /// assert!(q.code_size > 0 && q.asm != d.asm);
    /// ```
    pub fn disassemble(
        &self,
        request: &Request,
        layout: Layout,
        tier: Tier,
    ) -> Result<Disassembly, JitError> {
        let c = kernel::compile_with_features(
            request,
            layout,
            self.inner.static_mode,
            &**self.inner.isa_for(tier),
            &self.inner.features,
            tier,
            true,
        )
        .map_err(|e| JitError::Compile {
            request: request.to_string(),
            why: e.why,
        })?;
        Ok(Disassembly {
            clif: c.clif,
            asm: c.asm.unwrap_or_default(),
            code_size: c.code_size,
        })
    }

    /// Runs Cranelift's IR verifier on every kernel this JIT compiles from now on, and fails
    /// the compile with [`JitError::Compile`] if it finds a fault. Off by default (it costs a
    /// third of the compile time); the verifier (`clconv_verify::check::Checker`) turns it on.
    ///
    /// ```
    /// use clconv::jit::Jit;
    /// let jit = Jit::new().unwrap();
    /// jit.set_verify_ir(true);
    /// assert!(jit.compile("convert_int4_sat_rte(float4)").is_ok());
    /// ```
    pub fn set_verify_ir(&self, on: bool) {
        self.inner
            .verify_ir
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn verifies_ir(&self) -> bool {
        self.inner
            .verify_ir
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The number of compiled kernels in the cache.
    ///
    /// Requests share kernels where the code would be the same: in the packed layout a
    /// conversion is the same loop over `vectors × lanes` elements whatever the width, so
    /// `convert_int4_sat_rte(float4)` runs on the kernel of `convert_int_sat_rte(float)` (the
    /// 6,270 conversions need 1,045 kernels). Reinterpretations, and 3-component vectors in the
    /// aligned layout (which skip and zero padding), have their own.
    ///
    /// ```
    /// use clconv::jit::Jit;
    /// let jit = Jit::new().unwrap();
    /// jit.compile("convert_int4_sat_rte(float4)").unwrap();
    /// jit.compile("convert_int16_sat_rte(float16)").unwrap();
    /// jit.compile("convert_int_sat_rte(float)").unwrap();
    /// assert_eq!(jit.cached_kernels(), 1);
    /// ```
    pub fn cached_kernels(&self) -> usize {
        lock(&self.inner.cache).len()
    }
}

/// The routines Cranelift's x86-64 backend calls where the flag set lacks an instruction: libm's
/// rounding and fma without SSE4.1 or FMA, and its own `__cranelift_x86_pshufb` without SSSE3
/// (a host's own helpers are in its [`crate::host`] module).
/// Looked up by name in the process (as cranelift-jit did), they need not exist: a Rust program
/// need not export them (nor even link libm) and the pshufb helper never exists, which made every
/// rounding or shuffling kernel fail with `X64Flags::Sse2`. So the JIT provides its own.
mod libcalls {
    use cranelift_codegen::ir::LibCall;

    /// Where the helper for `libcall` lives; `None` for libcalls no kernel uses.
    pub(super) fn address(libcall: LibCall) -> Option<*const u8> {
        type F32Fn = extern "C" fn(f32) -> f32;
        type F64Fn = extern "C" fn(f64) -> f64;
        type Fma32 = extern "C" fn(f32, f32, f32) -> f32;
        type Fma64 = extern "C" fn(f64, f64, f64) -> f64;
        Some(match libcall {
            LibCall::CeilF32 => ceil_f32 as F32Fn as *const u8,
            LibCall::CeilF64 => ceil_f64 as F64Fn as *const u8,
            LibCall::FloorF32 => floor_f32 as F32Fn as *const u8,
            LibCall::FloorF64 => floor_f64 as F64Fn as *const u8,
            LibCall::TruncF32 => trunc_f32 as F32Fn as *const u8,
            LibCall::TruncF64 => trunc_f64 as F64Fn as *const u8,
            LibCall::NearestF32 => nearest_f32 as F32Fn as *const u8,
            LibCall::NearestF64 => nearest_f64 as F64Fn as *const u8,
            LibCall::FmaF32 => fma_f32 as Fma32 as *const u8,
            LibCall::FmaF64 => fma_f64 as Fma64 as *const u8,
            other => return crate::host::libcall(other),
        })
    }

    extern "C" fn ceil_f32(x: f32) -> f32 {
        x.ceil()
    }
    extern "C" fn ceil_f64(x: f64) -> f64 {
        x.ceil()
    }
    extern "C" fn floor_f32(x: f32) -> f32 {
        x.floor()
    }
    extern "C" fn floor_f64(x: f64) -> f64 {
        x.floor()
    }
    extern "C" fn trunc_f32(x: f32) -> f32 {
        x.trunc()
    }
    extern "C" fn trunc_f64(x: f64) -> f64 {
        x.trunc()
    }
    // nearbyint in the default floating-point environment: ties to even.
    extern "C" fn nearest_f32(x: f32) -> f32 {
        x.round_ties_even()
    }
    extern "C" fn nearest_f64(x: f64) -> f64 {
        x.round_ties_even()
    }
    extern "C" fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    extern "C" fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock is caught inside; the data stays consistent.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Installs a kernel's compiled code in `memory`, executable.
fn install(
    memory: &mut CodeMemory,
    request: &Request,
    code: &MachineCode,
) -> Result<EntryPoint, JitError> {
    let addrs = memory
        .install(&[code.as_code()])
        .map_err(|why| JitError::Compile {
            request: request.to_string(),
            why,
        })?;
    Ok(EntryPoint {
        addr: addrs[0],
        granule: code.granule,
        control: host::control_for(code.rounding_control),
    })
}

/// The kernel that runs `request` on buffers of `layout`: its request, its layout, and how many
/// of its vectors make one of `request`'s. Layouts only differ for 3-component vectors; in the
/// packed layout a conversion's kernel is a loop over `vectors × lanes` elements that depends
/// on the width only through that product, so every width runs on the scalar conversion's
/// kernel with `lanes` times the count.
///
/// ```
/// use clconv::jit::shared_kernel;
/// use clconv::{Extensions, Layout, Request};
/// let r = Request::parse("convert_int4_sat_rte(float4)", Extensions::default()).unwrap();
/// let (k, layout, units) = shared_kernel(&r, Layout::Packed);
/// assert_eq!(k.to_string(), "convert_int_sat_rte(float)");
/// assert_eq!((layout, units), (Layout::Packed, 4));
/// let v3 = Request::parse("convert_int3(float3)", Extensions::default()).unwrap();
/// assert_eq!(shared_kernel(&v3, Layout::Aligned), (v3, Layout::Aligned, 1));
/// ```
pub fn shared_kernel(request: &Request, layout: Layout) -> (Request, Layout, usize) {
    let x3 = request.src().width == Width::W3 || request.dst().width == Width::W3;
    match request {
        Request::Convert(c) if !(x3 && layout == Layout::Aligned) => {
            // The rules travel with it: `per_element` keeps every field but the width.
            (
                Request::Convert(c.per_element()),
                Layout::Packed,
                c.src().lanes(),
            )
        }
        _ if x3 => (*request, layout, 1),
        _ => (*request, Layout::Packed, 1),
    }
}

/// One kernel's machine code, compiled but not installed in a JIT's code memory.
pub(crate) struct MachineCode {
    bytes: Vec<u8>,
    alignment: u64,
    relocs: Vec<cranelift_codegen::FinalizedMachReloc>,
    /// See [`kernel::Built::granule`].
    granule: usize,
    /// See [`kernel::Built::rounding_control`].
    rounding_control: Rounding,
}

impl MachineCode {
    pub(crate) fn as_code(&self) -> Code<'_> {
        Code {
            bytes: &self.bytes,
            alignment: self.alignment,
            relocs: &self.relocs,
        }
    }
}

/// Builds and compiles `request`'s kernel without touching code memory (so that it can run on any
/// thread); Cranelift errors and panics come back as [`JitError::Compile`].
fn compile_machine_code(
    isa: &OwnedTargetIsa,
    features: &IsaFeatures,
    request: &Request,
    layout: Layout,
    tier: Tier,
    static_mode: Rounding,
    verify_ir: bool,
) -> Result<MachineCode, JitError> {
    build_and_compile(&**isa, verify_ir, |func, fctx| {
        let frontend = isa.frontend_config();
        kernel::build_tier_into(
            func,
            fctx,
            features,
            frontend,
            request,
            layout,
            static_mode,
            0,
            tier,
        )
        .map(|(row, granule)| {
            let control = kernel::rounding_control(request, layout, static_mode, row.recipe);
            (granule, control)
        })
        .map_err(|e| e.to_string())
    })
    .map_err(|why| JitError::Compile {
        request: request.to_string(),
        why,
    })
}

/// Compiles a built kernel function to machine code for `isa` (with Cranelift's IR verifier
/// first when `verify_ir`), without touching code memory. Errors and panics come back as text.
/// Compiles `func` for `isa` with Cranelift's disassembly, without loading it: the CLIF, the
/// machine code's text and size, or why it failed (a Cranelift panic caught).
pub(crate) fn disassemble_function(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    func: Function,
) -> Result<Disassembly, String> {
    let clif = func.display().to_string();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut ctx = cranelift_codegen::Context::for_function(func);
        ctx.set_disasm(true);
        let mut ctrl = cranelift_codegen::control::ControlPlane::default();
        ctx.compile(isa, &mut ctrl)
            .map(|code| {
                (
                    code.vcode.clone().unwrap_or_default(),
                    code.code_buffer().len(),
                )
            })
            .map_err(|e| format!("{:?}", e.inner))
    }));
    let (asm, code_size) = match result {
        Ok(Ok(v)) => v,
        Ok(Err(why)) => return Err(why),
        Err(panic) => return Err(crate::kernel::panic_message(&*panic)),
    };
    Ok(Disassembly {
        clif,
        asm,
        code_size,
    })
}

pub(crate) fn compile_function(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    func: Function,
    verify_ir: bool,
) -> Result<MachineCode, String> {
    build_and_compile(isa, verify_ir, |into, _| {
        *into = func;
        Ok((1, Rounding::Rte))
    })
}

/// What stays allocated between two compilations on a thread: Cranelift's `Context` (its
/// function, analyses and register allocator state) and the frontend's builder context. A fresh
/// pair per kernel cost a quarter of a small kernel's compile (47 against 61 µs on the
/// benchmark's kernels, quick tier, measured interleaved).
struct Workspace {
    ctx: cranelift_codegen::Context,
    fctx: FunctionBuilderContext,
}

/// Cranelift times each of its passes (two clock reads and a boxed token per pass, on
/// by default); clconv never reads those timings, so compiles run with a profiler that does
/// nothing, and the thread's own profiler is put back afterwards (also on a panic).
struct Untimed(Option<Box<dyn cranelift_codegen::timing::Profiler>>);

struct NoTiming;

impl cranelift_codegen::timing::Profiler for NoTiming {
    fn start_pass(&self, _pass: cranelift_codegen::timing::Pass) -> Box<dyn std::any::Any> {
        // A zero-sized box does not allocate.
        Box::new(())
    }
}

impl Untimed {
    fn start() -> Untimed {
        Untimed(Some(cranelift_codegen::timing::set_thread_profiler(
            Box::new(NoTiming),
        )))
    }
}

impl Drop for Untimed {
    fn drop(&mut self) {
        if let Some(previous) = self.0.take() {
            cranelift_codegen::timing::set_thread_profiler(previous);
        }
    }
}

thread_local! {
    static WORKSPACE: RefCell<Option<Workspace>> = const { RefCell::new(None) };
}

/// Builds a function with `build` (which returns the kernel's granule and rounding control)
/// into this thread's
/// workspace and compiles it for `isa`, verifying the IR first when `verify_ir`. Errors and
/// panics come back as text; after either, the workspace is dropped, since a builder stopped
/// half-way leaves state behind.
fn build_and_compile(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    verify_ir: bool,
    build: impl FnOnce(&mut Function, &mut FunctionBuilderContext) -> Result<(usize, Rounding), String>,
) -> Result<MachineCode, String> {
    WORKSPACE.with(|cell| {
        // Compiling never re-enters itself; should it ever, the inner call gets its own.
        let mut own = None;
        let mut borrowed = cell.try_borrow_mut().ok();
        let slot = borrowed.as_deref_mut().unwrap_or(&mut own);
        let ws = slot.get_or_insert_with(|| Workspace {
            ctx: cranelift_codegen::Context::new(),
            fctx: FunctionBuilderContext::new(),
        });
        let result = catch_unwind(AssertUnwindSafe(|| -> Result<MachineCode, String> {
            ws.ctx.clear();
            let (granule, rounding_control) = build(&mut ws.ctx.func, &mut ws.fctx)?;
            if verify_ir {
                verify_function(&ws.ctx.func, isa.flags()).map_err(|e| e.to_string())?;
            } else {
                // The verifier's type check alone: IR of a type shape the backend has no
                // rule for is an error here, not a panic in instruction selection.
                crate::ir_types::check(&ws.ctx.func)?;
            }
            let mut ctrl = cranelift_codegen::control::ControlPlane::default();
            let untimed = Untimed::start();
            let code = ws
                .ctx
                .compile(isa, &mut ctrl)
                .map_err(|e| format!("{:?}", e.inner))?;
            drop(untimed);
            let alignment = (code.buffer.alignment as u64)
                .max(isa.function_alignment().minimum as u64)
                .max(isa.symbol_alignment());
            let bytes = code.code_buffer().to_vec();
            let relocs = code.buffer.relocs().to_vec();
            let relocs = relocs
                .iter()
                .map(|r| routine_reloc(r, &ws.ctx.func))
                .collect::<Result<Vec<_>, String>>()?;
            if rounding_control != Rounding::Rte && !relocs.is_empty() {
                // A call out (a libcall) would run Rust code in the kernel's rounding mode.
                return Err(format!(
                    "a kernel that runs with the rounding control set to {rounding_control} \
                     must not call out, and this one has {} relocations",
                    relocs.len()
                ));
            }
            Ok(MachineCode {
                bytes,
                alignment,
                relocs,
                granule,
                rounding_control,
            })
        }))
        .unwrap_or_else(|panic| Err(kernel::panic_message(&*panic)));
        if result.is_err() {
            *slot = None;
        }
        result
    })
}

/// `reloc` with a call of a host routine's external name made to name the routine itself
/// (`User` of the routine's [`crate::routine::Routine::index`]), which
/// [`crate::code_memory`] resolves without the function; every other relocation as it is.
fn routine_reloc(
    reloc: &cranelift_codegen::FinalizedMachReloc,
    func: &Function,
) -> Result<cranelift_codegen::FinalizedMachReloc, String> {
    use cranelift_codegen::entity::EntityRef;
    use cranelift_codegen::ir::{ExternalName, UserExternalNameRef};
    use cranelift_codegen::FinalizedRelocTarget;
    let FinalizedRelocTarget::ExternalName(ExternalName::User(name)) = reloc.target else {
        return Ok(reloc.clone());
    };
    let user =
        func.params.user_named_funcs().get(name).ok_or_else(|| {
            format!("a relocation names {name:?}, which the kernel never declared")
        })?;
    if user.namespace != crate::routine::NAMESPACE {
        return Err(format!(
            "a relocation names {user:?}, which clconv never emits"
        ));
    }
    let mut resolved = reloc.clone();
    resolved.target = FinalizedRelocTarget::ExternalName(ExternalName::User(
        UserExternalNameRef::new(user.index as usize),
    ));
    Ok(resolved)
}

impl JitInner {
    fn isa_for(&self, tier: Tier) -> &OwnedTargetIsa {
        match tier {
            Tier::Optimised => &self.isa,
            Tier::Quick => &self.quick_isa,
        }
    }

    /// Compiles `request`'s kernel in `tier`, and the tier it got (see [`compile_tiered`]).
    fn compile_code(
        &self,
        request: &Request,
        layout: Layout,
        tier: Tier,
        verify_ir: bool,
    ) -> Result<(MachineCode, Tier), JitError> {
        compile_tiered(
            [&self.isa, &self.quick_isa],
            &self.features,
            self.static_mode,
            request,
            layout,
            tier,
            verify_ir,
        )
    }
}

/// Compiles `request`'s kernel in `tier` with `isas` (the optimised tier's, the quick tier's),
/// and the tier it got: without its optimisation passes Cranelift 0.135 cannot lower a few
/// vector patterns the recipes rely on it to rewrite (`snarrow`/`uunarrow.i64x2` of double ->
/// 8- to 32-bit integers), so those kernels come back optimised. The one compile path of the
/// JIT and of [`CodeCompiler`].
fn compile_tiered(
    isas: [&OwnedTargetIsa; 2],
    features: &IsaFeatures,
    static_mode: Rounding,
    request: &Request,
    layout: Layout,
    tier: Tier,
    verify_ir: bool,
) -> Result<(MachineCode, Tier), JitError> {
    let compile = |tier| {
        let isa = match tier {
            Tier::Optimised => isas[0],
            Tier::Quick => isas[1],
        };
        compile_machine_code(isa, features, request, layout, tier, static_mode, verify_ir)
    };
    match compile(tier) {
        Err(_) if tier == Tier::Quick => Ok((compile(Tier::Optimised)?, Tier::Optimised)),
        result => Ok((result?, tier)),
    }
}

/// Compiles batch kernels to machine code exactly as a [`Jit`] of the same flag set, tier and
/// static mode compiles them (the same ISA settings, the same compile path), without installing
/// them, so without needing a CPU of that flag set: for recording which machine code a check
/// ran on (`clconv_verify::ledger`).
///
/// ```
/// use clconv::jit::{CodeCompiler, Tier, X64Flags};
/// use clconv::{Extensions, Layout, Request, Rounding};
/// let avx512 = CodeCompiler::new(X64Flags::Avx512, Rounding::Rte).unwrap(); // any x86-64 CPU
/// let r = Request::parse("convert_int4_sat_rte(float4)", Extensions::default()).unwrap();
/// let code = avx512.compile(&r, Layout::Packed, Tier::Optimised).unwrap();
/// // Every width of a conversion runs on its scalar kernel in the packed layout.
/// assert_eq!(code.kernel.0.to_string(), "convert_int_sat_rte(float)");
/// assert!(!code.bytes.is_empty() && code.mxcsr == 0x1f80);
/// ```
pub struct CodeCompiler {
    isa: OwnedTargetIsa,
    quick_isa: OwnedTargetIsa,
    features: IsaFeatures,
    static_mode: Rounding,
}

/// One kernel's machine code and everything else that decides what a run of it executes, from
/// [`CodeCompiler::compile`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelCode {
    /// The kernel compiled: [`shared_kernel`] of the request and layout asked for.
    pub kernel: (Request, Layout),
    /// The static rounding mode it was compiled under.
    pub static_mode: Rounding,
    /// The tier of the code (the optimised one where the quick tier cannot compile it).
    pub tier: Tier,
    /// The code, as the JIT installs it before patching relocations (constants included).
    pub bytes: Vec<u8>,
    /// The code's alignment in bytes.
    pub alignment: u64,
    /// Each relocation the JIT patches, as text: offset, kind, addend and target (a libcall,
    /// which the JIT resolves to its own helper).
    pub relocations: Vec<String>,
    /// The granule the JIT splits calls by ([`kernel::Built::granule`]).
    pub granule: usize,
    /// The MXCSR the JIT calls the kernel with: the rounding control of
    /// [`kernel::Built::rounding_control`], exceptions masked, no flush-to-zero.
    pub mxcsr: u32,
}

impl CodeCompiler {
    /// A compiler for the x86-64 flag set `flags` (whatever this machine's CPU) and the static
    /// rounding mode `static_mode`.
    pub fn new(flags: X64Flags, static_mode: Rounding) -> Result<CodeCompiler, JitError> {
        let isa_error = |e: crate::target::TargetError| JitError::Isa(e.to_string());
        let isa = flags.target().isa_with_verifier(false).map_err(isa_error)?;
        let quick_isa = flags.target().quick_isa().map_err(isa_error)?;
        let features = jit_features(&*isa)?;
        Ok(CodeCompiler {
            isa,
            quick_isa,
            features,
            static_mode,
        })
    }

    /// The machine code a [`Jit`] of this flag set runs `request` on in `layout` with
    /// [`Tiering::only`]`(tier)`.
    pub fn compile(
        &self,
        request: &Request,
        layout: Layout,
        tier: Tier,
    ) -> Result<KernelCode, JitError> {
        let (request, layout, _) = shared_kernel(request, layout);
        let (code, tier) = compile_tiered(
            [&self.isa, &self.quick_isa],
            &self.features,
            self.static_mode,
            &request,
            layout,
            tier,
            false,
        )?;
        Ok(KernelCode {
            kernel: (request, layout),
            static_mode: self.static_mode,
            tier,
            relocations: code
                .relocs
                .iter()
                .map(|r| {
                    let target = match crate::code_memory::routine_of(&r.target) {
                        Some(routine) => format!("routine {}", routine.identity()),
                        None => format!("{:?}", r.target),
                    };
                    format!("{} {:?} {} {target}", r.offset, r.kind, r.addend)
                })
                .collect(),
            bytes: code.bytes,
            alignment: code.alignment,
            granule: code.granule,
            mxcsr: crate::fp_control::mxcsr_for(code.rounding_control),
        })
    }
}

/// The background thread that compiles optimised kernels for tiered JITs: one per process,
/// started on first use, fed through a channel. A job holds its JIT weakly, so a JIT dropped
/// before its turn costs nothing; one that is running is kept alive until the job ends.
mod tier_up {
    use super::*;

    struct Job {
        jit: Weak<JitInner>,
        /// The JIT's count, decremented after the job let go of the JIT.
        pending: Arc<Pending>,
        request: Request,
        layout: Layout,
        slot: Arc<Slot>,
    }

    static QUEUE: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    /// Jobs queued or running, for [`wait_idle`].
    static IN_FLIGHT: OnceLock<Pending> = OnceLock::new();

    fn in_flight() -> &'static Pending {
        IN_FLIGHT.get_or_init(Pending::default)
    }

    /// Waits until the background thread has no job queued or running.
    pub(super) fn wait_idle() {
        in_flight().wait_zero();
    }

    /// Queues the optimised compile of the kernel in `slot`; without a background thread (the
    /// OS refused one) the kernel keeps its quick code.
    pub(super) fn queue(jit: &Arc<JitInner>, request: Request, layout: Layout, slot: Arc<Slot>) {
        let queue = QUEUE.get_or_init(|| {
            let (send, receive) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("clconv-tier-up".into())
                .spawn(move || {
                    for job in receive {
                        let pending = job.pending.clone();
                        run(job);
                        // After `run` let go of the JIT, whose code may have gone with it.
                        pending.add(-1);
                        in_flight().add(-1);
                    }
                })
                .ok()
                .map(|_| Mutex::new(send))
        });
        let Some(queue) = queue else { return };
        jit.pending.add(1);
        in_flight().add(1);
        let job = Job {
            jit: Arc::downgrade(jit),
            pending: jit.pending.clone(),
            request,
            layout,
            slot,
        };
        if lock(queue).send(job).is_err() {
            jit.pending.add(-1);
            in_flight().add(-1);
        }
    }

    fn run(job: Job) {
        let Some(jit) = job.jit.upgrade() else { return };
        let verify_ir = jit.verify_ir.load(Ordering::Relaxed);
        let (request, layout) = (&job.request, job.layout);
        // A failed optimised compile leaves the quick code, which is correct: nothing to report
        // to a caller that is long gone.
        if let Ok((code, _)) = jit.compile_code(request, layout, Tier::Optimised, verify_ir) {
            if let Ok(entry) = install(&mut lock(&jit.code), request, &code) {
                job.slot.upgrade(entry);
            }
        }
    }
}

enum What {
    Fixed(Request, Arc<Slot>),
    Deferred(Builtin),
}

/// A compiled batch kernel. Cheap to clone? No: get another from [`Jit::compile`], which caches.
pub struct Kernel {
    jit: Jit,
    what: What,
}

impl Kernel {
    /// The request, when the source type is known (`None` for a destination-only name).
    pub fn request(&self) -> Option<Request> {
        match self.what {
            What::Fixed(r, _) => Some(r),
            What::Deferred(_) => None,
        }
    }

    /// The tier of the code the packed layout runs now (`None` for a destination-only name,
    /// which compiles on each run's source type).
    ///
    /// ```
    /// use clconv::jit::{Jit, Tier, Tiering};
    /// let jit = Jit::new().unwrap();
    /// jit.set_tiering(Tiering::QuickOnly);
    /// assert_eq!(jit.compile("convert_char4(int4)").unwrap().tier(), Some(Tier::Quick));
    /// ```
    pub fn tier(&self) -> Option<Tier> {
        match &self.what {
            What::Fixed(_, slot) => Some(slot.tier()),
            What::Deferred(_) => None,
        }
    }

    /// Converts `src` into `dst` (packed layout). The element types must be the request's; for
    /// a destination-only name, `S` picks the source type.
    pub fn run<S: Element, D: Element>(&self, src: &[S], dst: &mut [D]) -> Result<(), JitError> {
        self.run_with_layout(Layout::Packed, src, dst)
    }

    /// [`Kernel::run`] with an explicit layout for 3-component vectors.
    pub fn run_with_layout<S: Element, D: Element>(
        &self,
        layout: Layout,
        src: &[S],
        dst: &mut [D],
    ) -> Result<(), JitError> {
        let request = match &self.what {
            What::Fixed(r, _) => *r,
            What::Deferred(b) => b.with_source_element(S::TYPE, self.jit.inner.ext)?,
        };
        check_element("source", "reads", S::TYPE, request.src().elem, &request)?;
        check_element(
            "destination",
            "writes",
            D::TYPE,
            request.dst().elem,
            &request,
        )?;
        // SAFETY: `Element` is sealed and implemented only for integers, floats, and `Half`,
        // `BFloat`, `Fp8E4M3`, `Fp8E5M2` and the narrow formats' wrappers (`repr(transparent)`
        // over u32, u16 or u8): no padding, and
        // every byte pattern is a valid value,
        // so their memory may be viewed, and written, as bytes of the same length.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(src.as_ptr().cast::<u8>(), std::mem::size_of_val(src)),
                std::slice::from_raw_parts_mut(
                    dst.as_mut_ptr().cast::<u8>(),
                    std::mem::size_of_val(dst),
                ),
            )
        };
        self.call(&request, layout, src, dst)
    }

    /// Converts raw little-endian bytes. Any alignment is fine.
    pub fn run_bytes(&self, layout: Layout, src: &[u8], dst: &mut [u8]) -> Result<(), JitError> {
        let request = match &self.what {
            What::Fixed(r, _) => *r,
            What::Deferred(b) => {
                return Err(JitError::NeedsSourceType {
                    builtin: b.to_string(),
                })
            }
        };
        self.call(&request, layout, src, dst)
    }

    fn call(
        &self,
        request: &Request,
        layout: Layout,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), JitError> {
        let vectors = buffer::vector_count(request, layout, src.len(), dst.len())?;
        if let Request::Convert(c) = request {
            if let Some(trap) = crate::trap_scan::first(c, layout, src) {
                // Convert the values before it, then say where it is.
                let src_per = src.len().checked_div(vectors).unwrap_or(0);
                let dst_per = dst.len().checked_div(vectors).unwrap_or(0);
                let before = trap.vector;
                self.call_unchecked(
                    request,
                    layout,
                    &src[..before * src_per],
                    &mut dst[..before * dst_per],
                )?;
                return Err(JitError::Trap {
                    request: request.to_string(),
                    element: trap.element,
                    value: trap.value,
                });
            }
        }
        self.call_unchecked(request, layout, src, dst)
    }

    /// [`Kernel::call`] without the trap scan.
    fn call_unchecked(
        &self,
        request: &Request,
        layout: Layout,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), JitError> {
        let vectors = buffer::vector_count(request, layout, src.len(), dst.len())?;
        // The shared kernel counts in its own vectors (elements, for a conversion's).
        let units = shared_kernel(request, layout).2;
        let entry = match &self.what {
            What::Fixed(_, slot) if layout == Layout::Packed => {
                self.jit.start_tier_up(slot);
                slot.entry()
            }
            _ => self.jit.entry_point(request, layout)?,
        };
        if vectors == 0 {
            return Ok(());
        }
        let (src_per, dst_per) = (src.len() / vectors, dst.len() / vectors);
        let (src_unit, dst_unit) = (src_per / units, dst_per / units);
        let run = |s: &[u8], d: &mut [u8], n: usize| -> Result<(), JitError> {
            // `run_in_granules` hands over slices of at least `n` kernel vectors each (checked
            // here, so a slip there is an error, not a wild write); the kernel converts `n`
            // rounded down to whole granules and touches no byte beyond them.
            // `s` and `d` come from a shared and an exclusive borrow, so they cannot overlap.
            if s.len() < n * src_unit || d.len() < n * dst_unit {
                return Err(JitError::Compile {
                    request: request.to_string(),
                    why: "internal error: a kernel call on a short buffer".into(),
                });
            }
            // SAFETY: `entry` points at a function this Jit compiled from `kernel::build`, whose
            // signature is (src, dst, vectors), SystemV, and which calls nothing; its code
            // memory stays mapped while `self.jit` holds its Arc. The slices hold the `n`
            // vectors it reads and writes (checked just now).
            let args = [s.as_ptr() as usize, d.as_mut_ptr() as usize, n, 0, 0];
            unsafe { host::call_kernel(entry.addr, args, entry.control) };
            Ok(())
        };
        let run_part = |s: &[u8], d: &mut [u8], vectors: usize| {
            kernel::run_in_granules(
                entry.granule,
                src_unit,
                dst_unit,
                s,
                d,
                vectors * units,
                run,
            )
        };
        let threads = self.jit.threads_for(src.len()).min(vectors);
        if threads <= 1 {
            return run_part(src, dst, vectors);
        }
        // Split the vectors into contiguous parts, handed out one at a time: `threads` workers
        // each take the next part until none is left, so a slower core
        // (this machine's two vCPUs differ by up to 1.7x) converts fewer parts instead of
        // holding the whole run up. Each part reads its own piece of `src` and writes its own,
        // disjoint piece of `dst`; its lock is only ever taken once, by whoever drew its index.
        let per_part = part_vectors(vectors, threads, src_per, entry.granule);
        let parts: Vec<Mutex<(&[u8], &mut [u8])>> = src
            .chunks(per_part * src_per)
            .zip(dst.chunks_mut(per_part * dst_per))
            .map(Mutex::new)
            .collect();
        // No more workers than parts: one part runs here, without a thread.
        let threads = threads.min(parts.len());
        if threads <= 1 {
            return run_part(src, dst, vectors);
        }
        let next = AtomicUsize::new(0);
        let work = || -> Result<(), JitError> {
            while let Some(part) = parts.get(next.fetch_add(1, Ordering::Relaxed)) {
                let mut part = part.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                let (s, d) = &mut *part;
                run_part(s, d, s.len() / src_per)?;
            }
            Ok(())
        };
        // The caller only waits: working on it too made every other run about 2x slower here,
        // its freshly spawned helper being woken on the caller's busy core (the paired
        // quartiles against two-thread memcpy spread from 0.99-1.01 to 0.51-1.09).
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("kernel calls do not panic"))
                .fold(Ok(()), Result::and)
        })
    }
}

/// Vectors per part when a run of `vectors` is split across `threads`: about 16 parts per
/// thread (the last part drawn bounds how long one thread waits for the other), but no part
/// under 64 KiB of source (drawing one costs an atomic add and a lock), and a multiple of the
/// kernel's granule, so no part but the last needs a padded tail.
fn part_vectors(vectors: usize, threads: usize, src_per: usize, granule: usize) -> usize {
    const MIN_PART_BYTES: usize = 64 << 10;
    let by_count = vectors.div_ceil(16 * threads);
    let by_size = MIN_PART_BYTES.div_ceil(src_per.max(1));
    let granule = granule.max(1);
    by_count.max(by_size).div_ceil(granule) * granule
}

/// Waits until the process's background compiler has finished every optimised kernel queued by
/// any tiered [`Jit`] (and let go of the JITs it held while compiling, so that the code of a
/// dropped JIT is unmapped when this returns). [`Jit::finish_tier_up`] waits for one JIT's.
///
/// ```
/// let jit = clconv::jit::Jit::new().unwrap();
/// jit.compile("convert_short8_sat(int8)").unwrap();
/// drop(jit);
/// clconv::jit::wait_for_background_compiles();
/// ```
pub fn wait_for_background_compiles() {
    tier_up::wait_idle();
}

/// How many threads a batch run uses.
///
/// ```
/// use clconv::jit::{Jit, Threads};
/// let jit = Jit::new().unwrap();
/// jit.set_threads(Threads::Exactly(2)); // split every run over two threads
/// let k = jit.compile("convert_int4(float4)").unwrap();
/// let mut out = vec![0i32; 1 << 12];
/// k.run(&vec![1.5f32; 1 << 12], &mut out).unwrap();
/// assert!(out.iter().all(|&x| x == 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// One thread below [`PARALLEL_THRESHOLD`] source bytes, every core above it (the default).
    Auto,
    /// This many (1: never split), at most four per core.
    Exactly(usize),
}

/// Source bytes from which [`Threads::Auto`] splits a run across all cores: below it, thread
/// start-up (tens of microseconds) costs more than a second core gains.
pub const PARALLEL_THRESHOLD: usize = 4 << 20;

impl Jit {
    /// Sets how many threads the runs of this JIT's kernels use (all clones share it).
    pub fn set_threads(&self, threads: Threads) {
        let n = match threads {
            Threads::Auto => 0,
            Threads::Exactly(n) => n.max(1),
        };
        self.inner
            .threads
            .store(n, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn threads_for(&self, src_len: usize) -> usize {
        match self
            .inner
            .threads
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 if src_len >= PARALLEL_THRESHOLD => cores(),
            0 => 1,
            // More threads than a few per core only adds start-up cost (and a huge count would
            // spawn one thread per vector).
            n => n.min(4 * cores()),
        }
    }
}

/// The cores this process may use, asked once: `available_parallelism` reads the affinity mask
/// and cgroup files (seven system calls, about 30 µs here), which per run was more than a
/// 16-element conversion takes.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn check_element(
    side: &'static str,
    verb: &'static str,
    got: ScalarType,
    expected: ScalarType,
    request: &Request,
) -> Result<(), JitError> {
    if got == expected {
        return Ok(());
    }
    Err(BufferError::ElementType {
        side,
        got: got.name(),
        expected: expected.name(),
        request: request.to_string(),
        verb,
    }
    .into())
}

/// A half-precision value as its binary16 bits (Rust has no stable `f16`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Half(pub u16);

/// A bfloat16 value as its bits (`bfloat`: the upper half of a float's).
///
/// ```
/// use clconv::jit::{BFloat, Jit};
/// let k = Jit::new().unwrap().compile("convert_bfloat2(float2)").unwrap();
/// let mut out = [BFloat(0); 2];
/// k.run(&[1.0f32, 3.0e38], &mut out).unwrap();
/// assert_eq!(out, [BFloat(0x3f80), BFloat(0x7f62)]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct BFloat(pub u16);

/// An OCP 8-bit E4M3 value as its bits (`fp8e4m3`).
///
/// ```
/// use clconv::jit::{Fp8E4M3, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp8e4m3x2_sat(float2)").unwrap();
/// let mut out = [Fp8E4M3(0); 2];
/// k.run(&[1.0f32, 1000.0], &mut out).unwrap();
/// assert_eq!(out, [Fp8E4M3(0x38), Fp8E4M3(0x7e)]); // 1.0, and 448 (saturated)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp8E4M3(pub u8);

/// An OCP 8-bit E5M2 value as its bits (`fp8e5m2`).
///
/// ```
/// use clconv::jit::{Fp8E5M2, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp8e5m2x2(float2)").unwrap();
/// let mut out = [Fp8E5M2(0); 2];
/// k.run(&[1.0f32, 1.0e6], &mut out).unwrap();
/// assert_eq!(out, [Fp8E5M2(0x3c), Fp8E5M2(0x7c)]); // 1.0, and infinity
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp8E5M2(pub u8);

/// An OCP Microscaling FP4 E2M1 value as its code, in the low 4 bits of the byte (`fp4e2m1`;
/// the high bits are ignored when read and zero when written).
///
/// ```
/// use clconv::jit::{Fp4E2M1, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp4e2m1x4(float4)").unwrap();
/// let mut out = [Fp4E2M1(0); 4];
/// k.run(&[0.3f32, 5.0, -100.0, f32::NAN], &mut out).unwrap();
/// // 0.5; 4.0 (a tie to even); -6.0 (clamped); NaN gives 6.0
/// assert_eq!(out, [Fp4E2M1(0x1), Fp4E2M1(0x6), Fp4E2M1(0xf), Fp4E2M1(0x7)]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp4E2M1(pub u8);

/// An OCP Microscaling FP6 E2M3 value as its code, in the low 6 bits of the byte (`fp6e2m3`).
///
/// ```
/// use clconv::jit::{Fp6E2M3, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp6e2m3x2(float2)").unwrap();
/// let mut out = [Fp6E2M3(0); 2];
/// k.run(&[1.0f32, 100.0], &mut out).unwrap();
/// assert_eq!(out, [Fp6E2M3(0x08), Fp6E2M3(0x1f)]); // 1.0, and 7.5 (clamped)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp6E2M3(pub u8);

/// An OCP Microscaling FP6 E3M2 value as its code, in the low 6 bits of the byte (`fp6e3m2`).
///
/// ```
/// use clconv::jit::{Fp6E3M2, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp6e3m2x2(float2)").unwrap();
/// let mut out = [Fp6E3M2(0); 2];
/// k.run(&[1.0f32, 100.0], &mut out).unwrap();
/// assert_eq!(out, [Fp6E3M2(0x0c), Fp6E3M2(0x1f)]); // 1.0, and 28.0 (clamped)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp6E3M2(pub u8);

/// An 8-bit E4M3FNUZ value as its bits (`fp8e4m3fnuz`: bias 8, the one NaN 0x80).
///
/// ```
/// use clconv::jit::{Fp8E4M3Fnuz, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp8e4m3fnuzx2(float2)").unwrap();
/// let mut out = [Fp8E4M3Fnuz(0); 2];
/// k.run(&[1.0f32, -0.0], &mut out).unwrap();
/// assert_eq!(out, [Fp8E4M3Fnuz(0x40), Fp8E4M3Fnuz(0x00)]); // 1.0, and +0 (no -0)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp8E4M3Fnuz(pub u8);

/// An 8-bit E5M2FNUZ value as its bits (`fp8e5m2fnuz`: bias 16, the one NaN 0x80).
///
/// ```
/// use clconv::jit::{Fp8E5M2Fnuz, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp8e5m2fnuzx2(float2)").unwrap();
/// let mut out = [Fp8E5M2Fnuz(0); 2];
/// k.run(&[1.0f32, 1.0e6], &mut out).unwrap();
/// assert_eq!(out, [Fp8E5M2Fnuz(0x40), Fp8E5M2Fnuz(0x80)]); // 1.0, and NaN (no infinity)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp8E5M2Fnuz(pub u8);

/// An OCP Microscaling E8M0 scale as its code (`fp8e8m0`: 2^(code - 127), 0xff the NaN).
///
/// ```
/// use clconv::jit::{Fp8E8M0, Jit};
/// let k = Jit::new().unwrap().compile("convert_fp8e8m0x2_rtp(float2)").unwrap();
/// let mut out = [Fp8E8M0(0); 2];
/// k.run(&[1.0f32, 1000.0], &mut out).unwrap();
/// assert_eq!(out, [Fp8E8M0(0x7f), Fp8E8M0(0x89)]); // 2^0, and 2^10 (rounded up)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Fp8E8M0(pub u8);

/// A tf32 value as its 32-bit word (`tf32`: the top 19 bits; the low 13 ignored when read and
/// zero when written).
///
/// ```
/// use clconv::jit::{Jit, Tf32};
/// let k = Jit::new().unwrap().compile("convert_tf32x2(float2)").unwrap();
/// let mut out = [Tf32(0); 2];
/// k.run(&[1.0f32, 1.0 + 3.0 / 2048.0], &mut out).unwrap();
/// assert_eq!(out, [Tf32(0x3f80_0000), Tf32(0x3f80_4000)]); // 1.0, and 1 + 2^-9 (nearest)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Tf32(pub u32);

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that holds one OpenCL element in a batch buffer.
///
/// Implemented for `i8`..`u64`, `f32`, `f64`, [`Half`], [`BFloat`], [`Fp8E4M3`], [`Fp8E5M2`],
/// the narrow formats ([`Fp4E2M1`], [`Fp6E2M3`], [`Fp6E3M2`], [`Fp8E4M3Fnuz`], [`Fp8E5M2Fnuz`],
/// [`Fp8E8M0`], [`Tf32`])
/// and `bool` (a byte, 0 or 1: every kernel into bool writes 0 or 1, and one from bool reads the
/// caller's `bool`s, which are 0 or 1).
pub trait Element: Copy + sealed::Sealed + 'static {
    /// The OpenCL type it holds.
    const TYPE: ScalarType;
}

macro_rules! element {
    ($($rust:ty => $cl:ident),*) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const TYPE: ScalarType = ScalarType::$cl;
        }
    )*};
}

element!(i8 => Char, u8 => UChar, i16 => Short, u16 => UShort, i32 => Int, u32 => UInt,
    i64 => Long, u64 => ULong, Half => Half, f32 => Float, f64 => Double, BFloat => BFloat,
    Fp8E4M3 => Fp8E4M3, Fp8E5M2 => Fp8E5M2, Fp4E2M1 => Fp4E2M1, Fp6E2M3 => Fp6E2M3,
    Fp6E3M2 => Fp6E3M2, Fp8E4M3Fnuz => Fp8E4M3Fnuz, Fp8E5M2Fnuz => Fp8E5M2Fnuz,
    Fp8E8M0 => Fp8E8M0, Tf32 => Tf32, bool => Bool);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_whole_granules_of_at_least_64_kib_about_16_per_thread() {
        // 64 MiB of float4 (16 bytes per vector), two threads, granule 4: 32 parts of 2 MiB.
        let vectors = 4 << 20;
        assert_eq!(part_vectors(vectors, 2, 16, 4), 131_072);
        // 4 MiB: 16 * 2 parts would be 128 KiB each; a 3-vector granule rounds them up.
        assert_eq!(part_vectors(1 << 18, 2, 16, 3), 8193);
        // Small runs: 64 KiB parts, whole granules.
        assert_eq!(part_vectors(1000, 2, 16, 8), 4096);
        // One huge vector still makes a part.
        assert_eq!(part_vectors(5, 2, 1 << 20, 1), 1);
    }

    /// [`CodeCompiler`] gives the bytes the JIT installs and runs (what the ledger's
    /// fingerprints rely on), on both tiers, both layouts, with and without the rounding
    /// control, and where the quick tier falls back to the optimised one.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn code_compiler_gives_the_bytes_the_jit_runs() {
        let ext = Extensions::with_fp16();
        let names = [
            ("convert_int4_sat_rte(float4)", Layout::Packed),
            ("convert_uchar3_sat(float3)", Layout::Aligned),
            ("convert_float_rtz(int)", Layout::Packed),
            ("convert_half8_rtp(double8)", Layout::Packed),
            ("convert_char8_sat(double8)", Layout::Packed),
            // The F16C routine kernels on an AVX2 host (a call the JIT patches).
            ("convert_half8_rtz(float8)", Layout::Packed),
            ("convert_float4(half4)", Layout::Packed),
            ("convert_half8_rtp(ushort8)", Layout::Packed),
            ("convert_char16_sat_rtn(half16)", Layout::Packed),
        ];
        for flags in [X64Flags::Sse2, X64Flags::Host] {
            let compiler = CodeCompiler::new(flags, Rounding::Rte).unwrap();
            for tier in [Tier::Quick, Tier::Optimised] {
                let jit = Jit::with_options(flags, ext, Rounding::Rte).unwrap();
                jit.set_tiering(Tiering::only(tier));
                for (name, layout) in names {
                    let r = Request::parse(name, ext).unwrap();
                    let code = compiler.compile(&r, layout, tier).unwrap();
                    let slot = jit.slot(&r, layout).unwrap();
                    let entry = slot.entry();
                    assert_eq!(entry.granule, code.granule, "{name}");
                    assert_eq!(entry.control.0, code.mxcsr, "{name}");
                    assert_eq!(slot.tier(), code.tier, "{name}");
                    // SAFETY: the slot's code is mapped readable and executable for as long as
                    // `jit` lives, and is at least as long as the same compile's bytes.
                    let installed = unsafe {
                        std::slice::from_raw_parts(entry.addr as *const u8, code.bytes.len())
                    };
                    // Relocated bytes differ (the JIT patched in its helpers' addresses):
                    // compare every other byte.
                    let patched = |i: usize| {
                        code.relocations.iter().any(|r| {
                            let at: usize = r.split(' ').next().unwrap().parse().unwrap();
                            (at..at + 8).contains(&i)
                        })
                    };
                    for (i, (a, b)) in installed.iter().zip(&code.bytes).enumerate() {
                        assert!(a == b || patched(i), "{name} {flags:?} {tier:?}: byte {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_tiering_sits_at_its_own_index() {
        for tiering in Tiering::ALL {
            assert_eq!(Tiering::ALL[tiering as usize], tiering);
        }
    }
}
