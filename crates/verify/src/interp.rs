//! A second opinion on the IR: runs the very batch kernel [`kernel::build`] hands to the JIT in
//! Cranelift's own interpreter (`cranelift-interpreter` 0.135.8) over host byte buffers, and
//! compares its bytes with the [`reference`](mod@reference) interpreter.
//!
//! # Why
//!
//! When the JIT disagrees with the reference, the bug is either in clconv's IR (the lowering
//! recipe) or in Cranelift's x64 backend (instruction selection, register allocation,
//! encoding). The interpreter executes the IR by its documented semantics with no backend at
//! all, so:
//! - interpreter wrong, JIT wrong: the IR is wrong;
//! - interpreter right, JIT wrong: the backend miscompiles this IR (the probe found two such
//!   cases, `fcvt_from_sint` I32X4 -> F64X2 and I64X2 -> F32X2, which clconv never emits);
//! - interpreter wrong, JIT right: an interpreter deviation, or IR that only works by luck of
//!   the backend's choices: look at the instruction.
//!
//! The IR does not depend on the target beyond the recipe its lowering table picks, so the
//! interpreter also runs the kernels of targets this machine cannot execute (AArch64, RISC-V,
//! s390x: [`check_request_on`]).
//!
//! # How
//!
//! [`run_kernel`] drives `cranelift_interpreter::step::step` itself (the stock `Interpreter`
//! hides its state, so stored results could not be read back), with a custom `State` that wraps
//! `InterpreterState`, delegates everything to it and overrides only `checked_load` and
//! `checked_store`. The kernel's `src` and `dst` parameters are not host pointers but fake
//! addresses, [`SRC_BASE`] and [`DST_BASE`], which the interpreter's address encoding reads as
//! offsets in its Stack region. Every load and store is bounds-checked against the two slices
//! (loads from either, stores only into `dst`); anything else stops the run with
//! [`InterpError::OutOfBounds`] naming the instruction, so a wrong kernel cannot touch host
//! memory and there is no `unsafe` code here at all. A step limit ([`step_limit`]) stops a loop
//! that does not terminate, and every panic of the interpreter is caught and returned as
//! [`InterpError::Unsupported`] (the panic message still reaches stderr through the panic hook).
//!
//! [`check_request`] builds a request's kernel exactly as the JIT does (host ISA from
//! `cranelift_native`, its lowering table, static rounding mode rte; the packed layout, and the
//! aligned one for 3-component vectors), runs it on a deterministic sample of [`check::inputs`]
//! ([`sample_inputs`]: the special values first, then a spread of the rest) at buffer lengths
//! around the vector block sizes and at the whole buffer ([`check_function`]), and compares
//! every byte with [`reference::evaluate_with_mode`], which defines padding and NaN payloads
//! exactly as the JIT's contract does. Mismatches are reported as [`check::Mismatch`]es.
//!
//! # Speed
//!
//! Roughly 10^4 times slower than the JIT. In the dev profile (this crate at opt-level 1,
//! Cranelift and the interpreter at 2) on the 2-core x86-64 build machine, interpretation alone
//! runs 1–4 M IR instructions/s per core: about 4 M/s for scalar instructions on an idle
//! machine, less for vector ones, which the interpreter splits into lanes of `DataValue`s. The
//! host's kernels take 3.3–5 instructions per element on the vector recipes (a 128-bit block
//! converts 2–16 elements), 10.5 for directed double -> float, 18.5–27 for the half and scalar
//! recipes (half works in integer IR), 23 for directed 64-bit int -> float, 7.2 on average over
//! the matrix. Measured per recipe by the ignored `throughput` test in `tests/interpreter.rs`,
//! in thread CPU time on a machine under heavy load from other builds: 0.04 M elements/s
//! (`half.round_native`) to 1 M (`int_to_float.native_rte`), 0.15 M elements/s overall; the
//! scalar-only kernels measured 0.2 M elements/s (4 M instructions/s) on the idle machine.
//! The whole-matrix test (6,980 requests, 768 inputs each, 6.6 M elements, 63 M instructions)
//! takes 27 s of CPU time including the reference and kernel building: about 15 s wall on the 2
//! idle cores, up to 85 s when other builds load the machine.
//!
//! # What it cannot run
//!
//! The interpreter panics (`unimplemented!`) on the x86-specific opcodes (`x86_cvtt2dq`,
//! `x86_pshufb`, `x86_pmulhrsw`, `x86_pmaddubsw`, `blendv`), on every F16 arithmetic or
//! conversion, on 256/512-bit vector types and on widening vector loads (`uload8x8`, ...);
//! this driver does not follow calls, libcalls or symbol global values either. clconv's kernels
//! use none of these but one (half is lowered in integer IR, the vector recipes use portable
//! 128-bit opcodes: `fcvt_to_sint_sat`/`fcvt_from_sint` on I32X4/F32X4 and 64-bit lanes,
//! `fvdemote`, `fvpromote_low`, `snarrow`/`unarrow`/`uunarrow`, `swiden`/`uwiden`, `shuffle`,
//! `nearest`/`floor`/`ceil`, `bitcast`, ...). The one is `x86_cvtt2dq` I32X4 <- F32X4
//! (`cvttps2dq`), which x86-64's `int_to_float.convert_back` recipe uses to read a conversion's
//! error (the builder API's recipe since stop 15: the batch kernels this module checks take
//! `int_to_float.by_control`, but [`check_function`] runs any kernel): this driver executes it
//! itself, from the instruction's documented semantics (each
//! lane truncated, `INT_MIN` for NaN and out-of-range lanes; unit-tested on hand-computed
//! lanes), and the interpreter everything around it. So every kernel of every target runs: the
//! set of requests the interpreter cannot run is empty, and `tests/interpreter.rs` asserts
//! exactly that.
//!
//! # Kernels that run in a directed rounding mode
//!
//! The kernels of the x86-64 table's `mxcsr` rows (directed int -> float and double -> float)
//! are nearest-even IR that the JIT runs with MXCSR's rounding control set to the conversion's
//! mode ([`kernel::Built::rounding_control`]), and so are the directed arithmetic kernels
//! ([`clconv::arith_kernel::build_by_control`]). Run as plain IR they would round to nearest,
//! so [`run_built`], [`check_request`] and [`run_arith_kernel`] execute their rounding
//! instructions (`fadd`, `fsub`, `fmul`, `fdiv`, `sqrt`, `fma`, `fcvt_from_*`, `fdemote`,
//! `fvdemote`) in that mode from the reference's soft-float semantics (`rustc_apfloat`),
//! including IEEE 754's -0 for an exact zero sum when rounding down, and leave everything else
//! to the interpreter. Run in nearest-even instead,
//! the whole-matrix test reports mismatches on the directed kernels (40 requests listed in one
//! such run), so the mode is what is checked.
//!
//! # Where the interpreter's semantics come from
//!
//! Float operations are the host's: `fpromote`/`fdemote`/`fvpromote_low`/`fvdemote` and
//! `fcvt_from_*` are Rust `as` casts (`cvtss2sd`, `cvtsd2ss`, `cvtsi2ss`, ... on x86-64, which
//! quiet a signalling NaN and keep its payload's top bits, exactly as the reference's NaN rule
//! and the JIT do); `nearest`, `ceil` and `floor` are libm; `fcvt_to_*_sat` maps NaN to 0 and
//! clamps in i128. Over the whole matrix, and every other target's recipes, no element
//! disagrees with the reference, so no interpreter deviation is known and nothing is excluded
//! from the comparison. (On a host whose float casts canonicalise NaNs, the NaN payloads of
//! `fpromote`/`fdemote` results would differ; x86-64 and AArch64 do not.)
//!
//! ```
//! use clconv_verify::interp;
//! use clconv::{Extensions, Request};
//! let r = Request::parse("convert_half_rtz(double)", Extensions::with_fp16()).unwrap();
//! let outcome = interp::check_request(&r, 64, 1).unwrap();
//! assert_eq!(outcome.mismatch_count, 0);
//! assert!(outcome.unsupported.is_none());
//! assert!(outcome.elements >= 64);
//! ```

use crate::check::{self, Mismatch, Rng};
use clconv::buffer::bytes_per_vector;
use clconv::jit::{self, X64Flags};
use clconv::kernel;
use clconv::reference;
use clconv::request::Request;
use clconv::types::{Layout, Rounding, ScalarType, Width};
use cranelift_codegen::data_value::DataValue;
use cranelift_codegen::ir::{
    types, Endianness, ExternalName, FuncRef, Function, GlobalValue, Inst, MemFlagsData, Opcode,
    StackSlot, Type,
};
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings;
use cranelift_interpreter::address::{Address, AddressRegion, AddressSize};
use cranelift_interpreter::frame::Frame;
use cranelift_interpreter::instruction::DfgInstructionContext;
use cranelift_interpreter::interpreter::{InterpreterState, LibCallHandler};
use cranelift_interpreter::state::{InterpreterFunctionRef, MemoryError, State};
use cranelift_interpreter::step::{step, ControlFlow, StepError};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, OnceLock};

/// The fake address the kernel's `src` parameter holds: byte `i` of the source slice is at
/// `SRC_BASE + i`. It reads as an offset in the interpreter's Stack region (top bits 00).
pub const SRC_BASE: u64 = 1 << 44;

/// The fake address the kernel's `dst` parameter holds: byte `i` of the destination slice is at
/// `DST_BASE + i`.
pub const DST_BASE: u64 = 1 << 45;

/// The largest buffer [`run_kernel`] accepts (16 TiB, the distance between the two bases), so
/// the two address ranges can never overlap.
pub const MAX_BUFFER_BYTES: usize = (DST_BASE - SRC_BASE) as usize;

/// Random source patterns per type drawn by [`check::inputs`] before [`sample_inputs`] samples
/// (the JIT matrix check uses the same number).
pub const RANDOM_INPUTS: usize = 1000;

/// A memory access of the interpreted kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Load,
    /// A store.
    Store,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Load => "load",
            Access::Store => "store",
        })
    }
}

/// Why running or checking a kernel in the interpreter failed.
///
/// ```
/// use clconv_verify::interp::{Access, InterpError};
/// let e = InterpError::StepLimit { limit: 1000 };
/// assert!(e.to_string().contains("1000 instructions"));
/// let e = InterpError::OutOfBounds {
///     access: Access::Store,
///     bytes: 4,
///     address: 0x2000_0000_0010,
///     region: "dst + 16, past the 16-byte destination".into(),
///     instruction: "store little notrap v9, v8".into(),
/// };
/// assert!(e.to_string().starts_with("4-byte store"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InterpError {
    /// The function is not a batch kernel `fn(i64, i64, i64)` without results.
    #[error("not a batch kernel: the signature is `{signature}`, expected `(i64, i64, i64)` with no results")]
    Signature {
        /// The function's signature.
        signature: String,
    },
    /// Cranelift's verifier rejects the function.
    #[error("the function does not verify: {0}")]
    Verifier(String),
    /// A buffer is too large for the fake address space.
    #[error(
        "the {side} buffer is {bytes} bytes; the interpreter takes at most {MAX_BUFFER_BYTES}"
    )]
    BufferTooLarge {
        /// "source" or "destination".
        side: &'static str,
        /// Its length.
        bytes: usize,
    },
    /// A kernel with a tail pass ([`clconv::kernel::Built::granule`] above 1) was given buffers
    /// that are not whole vectors.
    #[error("a kernel with a granule of {granule} vectors needs buffers of {vectors} whole vectors, got {src} source and {dst} destination bytes")]
    PartialVectors {
        /// The kernel's granule.
        granule: usize,
        /// The vector count.
        vectors: usize,
        /// Source bytes.
        src: usize,
        /// Destination bytes.
        dst: usize,
    },
    /// The interpreter cannot run an instruction (it panicked, typically `unimplemented!`, or it
    /// cannot step on these value types). Not a verdict on the kernel.
    #[error("the interpreter cannot run {what}")]
    Unsupported {
        /// The instruction and the interpreter's message.
        what: String,
    },
    /// The kernel accessed memory outside the two buffers (or stored into the source).
    #[error("{bytes}-byte {access} at 0x{address:x} ({region}) by `{instruction}`")]
    OutOfBounds {
        /// Load or store.
        access: Access,
        /// Access size.
        bytes: usize,
        /// The fake address.
        address: u64,
        /// Where that is relative to the buffers.
        region: String,
        /// The instruction.
        instruction: String,
    },
    /// The kernel ran more instructions than allowed (a loop that does not terminate?).
    #[error("the kernel did not return within {limit} instructions")]
    StepLimit {
        /// The limit.
        limit: u64,
    },
    /// The kernel trapped.
    #[error("the kernel trapped at `{instruction}`: {trap}")]
    Trap {
        /// The trap.
        trap: String,
        /// The instruction.
        instruction: String,
    },
    /// The interpreter reported an error that is not a missing feature (a malformed kernel).
    #[error("the interpreter failed at `{instruction}`: {error}")]
    Step {
        /// The instruction.
        instruction: String,
        /// The interpreter's error.
        error: String,
    },
    /// The buffers do not fit the request (from the reference).
    #[error(transparent)]
    Buffer(#[from] clconv::buffer::BufferError),
    /// The lowering tables have no recipe for the request on this ISA (or are malformed).
    #[error(transparent)]
    Table(#[from] clconv::table::TableError),
    /// The host ISA could not be set up.
    #[error("cannot set up the host ISA: {0}")]
    Isa(String),
}

/// A request (in one layout) the interpreter cannot run: counted and listed, not a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The layout whose kernel could not run.
    pub layout: Layout,
    /// The instruction and the interpreter's message.
    pub what: String,
}

/// What checking one request in the interpreter found.
///
/// ```
/// use clconv_verify::interp::InterpOutcome;
/// let o = InterpOutcome::default();
/// assert!(o.passed());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InterpOutcome {
    /// The request, canonical spelling.
    pub request: String,
    /// The recipe the host ISA's lowering table chose (`lowering-tables/`).
    pub recipe: String,
    /// Distinct source elements sampled.
    pub inputs: usize,
    /// Elements compared (over all buffer lengths and layouts).
    pub elements: usize,
    /// IR instructions the interpreter executed.
    pub instructions: u64,
    /// The first mismatches (at most [`check::Checker::MAX_REPORTED`]).
    pub mismatches: Vec<Mismatch>,
    /// All mismatches, counted.
    pub mismatch_count: usize,
    /// Set when the interpreter cannot run the kernel (then that layout compared nothing).
    pub unsupported: Option<Unsupported>,
}

impl InterpOutcome {
    /// No mismatch and nothing the interpreter could not run.
    pub fn passed(&self) -> bool {
        self.mismatch_count == 0 && self.unsupported.is_none()
    }
}

/// The default step limit for buffers of these sizes: 200 instructions per element (every
/// element is at least a byte) plus 10,000.
///
/// ```
/// assert_eq!(clconv_verify::interp::step_limit(16, 4), 13_200);
/// ```
pub fn step_limit(src_bytes: usize, dst_bytes: usize) -> u64 {
    200 * src_bytes.max(dst_bytes) as u64 + 10_000
}

/// [`step_limit`] for `vectors` vectors in buffers of these sizes run by a kernel of `granule`:
/// a partial granule runs on copies padded to a whole one (as the JIT calls the machine code),
/// so the limit counts the padded bytes. A large granule makes them many more than the
/// buffers' (`convert_char16_rte(fp8e4m3x16)` converts 64 vectors per granule).
fn padded_step_limit(src_bytes: usize, dst_bytes: usize, vectors: usize, granule: usize) -> u64 {
    let padded = vectors.div_ceil(granule.max(1)) * granule.max(1);
    let scaled = |len: usize| {
        len.checked_div(vectors)
            .map_or(len, |per| len.max(per.saturating_mul(padded)))
    };
    step_limit(scaled(src_bytes), scaled(dst_bytes))
}

/// Runs the batch kernel `func` (`fn(src, dst, vectors)` as [`kernel::build`] makes it) in
/// Cranelift's interpreter on `vectors` vectors of `src`, writing `dst`, with the default
/// [`step_limit`]. `granule` is the kernel's [`kernel::Built::granule`]: the whole granules
/// go through one call on the buffers, the rest through a second call on zero-padded copies,
/// as the JIT calls the machine code ([`kernel::run_in_granules`]); then both buffers must be
/// whole vectors.
///
/// The kernel sees fake addresses ([`SRC_BASE`], [`DST_BASE`]); every access is bounds-checked
/// against the slices, so a wrong kernel gives an error, never undefined behaviour. `vectors` is
/// passed through unchecked, as the JIT's caller would after `buffer::vector_count`.
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{kernel, Extensions, Layout, Request, Rounding};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = Request::parse("convert_uchar4_sat_rte(float4)", Extensions::default()).unwrap();
/// let built = kernel::build(&r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
/// let src: Vec<u8> = [-5.0f32, 254.5, 254.6, 1.2e9].iter().flat_map(|x| x.to_le_bytes()).collect();
/// let mut dst = [0u8; 4];
/// interp::run_kernel(&built.func, built.granule, &src, &mut dst, 1).unwrap();
/// assert_eq!(dst, [0, 254, 255, 255]);
///
/// // Claiming two vectors reads past the 16-byte source: an error, not a wild read.
/// let e = interp::run_kernel(&built.func, 1, &src, &mut dst, 8).unwrap_err();
/// assert!(matches!(e, interp::InterpError::OutOfBounds { .. }), "{e}");
/// ```
pub fn run_kernel(
    func: &Function,
    granule: usize,
    src: &[u8],
    dst: &mut [u8],
    vectors: usize,
) -> Result<(), InterpError> {
    let limit = padded_step_limit(src.len(), dst.len(), vectors, granule);
    run_kernel_with_limit(func, granule, src, dst, vectors, limit).map(|_| ())
}

/// [`run_kernel`] with an explicit instruction limit (for both calls together); returns the
/// number of IR instructions executed.
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{kernel, Extensions, Layout, Request, Rounding};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = Request::parse("convert_int(short)", Extensions::default()).unwrap();
/// let built = kernel::build(&r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
/// let src = (-2i16).to_le_bytes();
/// let mut dst = [0u8; 4];
/// let steps = interp::run_kernel_with_limit(&built.func, built.granule, &src, &mut dst, 1, 1000).unwrap();
/// assert_eq!(i32::from_le_bytes(dst), -2);
/// assert!(steps > 5);
/// assert!(interp::run_kernel_with_limit(&built.func, built.granule, &src, &mut dst, 1, 3).is_err());
/// ```
pub fn run_kernel_with_limit(
    func: &Function,
    granule: usize,
    src: &[u8],
    dst: &mut [u8],
    vectors: usize,
    limit: u64,
) -> Result<u64, InterpError> {
    run_in_mode(func, granule, Rounding::Rte, src, dst, vectors, limit)
}

/// Runs a built kernel as [`run_kernel`] does, in the rounding mode it must run in
/// ([`kernel::Built::rounding_control`]): the JIT calls such a kernel with MXCSR's rounding
/// control set to it, and this driver executes its rounding instructions (`fadd`, `fsub`,
/// `fmul`, `fdiv`, `fcvt_from_*`, `fdemote`, `fvdemote`) in that mode from the reference's
/// soft-float semantics. Returns the number of IR instructions executed.
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{kernel, Extensions, Layout, Request, Rounding};
/// let isa = clconv::target::Target::X86_64Sse2.isa().unwrap();
/// let r = Request::parse("convert_float2_rtn(double2)", Extensions::default()).unwrap();
/// let built = kernel::build(&r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
/// assert_eq!(built.rounding_control, Rounding::Rtn); // a bare cvtpd2ps, run in rtn
/// let src: Vec<u8> = [1.0 + f64::EPSILON, -(1.0 + f64::EPSILON)].iter().flat_map(|x| x.to_le_bytes()).collect();
/// let mut dst = [0u8; 8];
/// interp::run_built(&built, &src, &mut dst, 1).unwrap();
/// assert_eq!(dst[..4], 1.0f32.to_le_bytes());
/// assert_eq!(dst[4..], (-1.0000001f32).to_le_bytes());
/// // Run in nearest-even instead, the same IR gives -1.0: the mode is part of the kernel.
/// interp::run_kernel(&built.func, built.granule, &src, &mut dst, 1).unwrap();
/// assert_eq!(dst[4..], (-1.0f32).to_le_bytes());
/// ```
pub fn run_built(
    built: &kernel::Built,
    src: &[u8],
    dst: &mut [u8],
    vectors: usize,
) -> Result<u64, InterpError> {
    let limit = padded_step_limit(src.len(), dst.len(), vectors, built.granule);
    run_in_mode(
        &built.func,
        built.granule,
        built.rounding_control,
        src,
        dst,
        vectors,
        limit,
    )
}

/// Runs an arithmetic batch kernel (`fn(a, b, c, dst, vectors)` as [`clconv::arith_kernel`]
/// builds it) in Cranelift's interpreter on `vectors` vectors: `operands` holds the buffers of
/// the operands the operation takes (one for sqrt, three for fma), which the kernel sees side
/// by side in the source region, and `mode` is the rounding control its caller sets: the
/// request's mode for a [`clconv::arith_kernel::build_by_control`] kernel, whose `fadd`, `fsub`,
/// `fmul`, `fdiv`, `sqrt` and `fma` this driver then executes in that mode from the
/// reference's soft-float; nearest-even for [`clconv::arith_kernel::build`]'s. Returns the
/// number of IR instructions executed. The limit is [`step_limit`] of the operands and the
/// destination together.
///
/// ```
/// use clconv::arith::ArithRequest;
/// use clconv_verify::interp;
/// use clconv::{arith_kernel, Layout, Rounding};
/// let isa = clconv::target::Target::X86_64Avx2.isa().unwrap();
/// let r = ArithRequest::parse("mul_rtz(float)").unwrap();
/// let (a, b) = (3.0f32.to_le_bytes(), 0.1f32.to_le_bytes());
/// let mut out = [0u8; 4];
/// // The exact sequence, run in nearest-even, and the bare fmul run in rtz: 3 * 0.1f rounded
/// // toward zero, one ulp under the nearest 0.3f.
/// let frontend = isa.frontend_config();
/// let exact = arith_kernel::build(&r, Layout::Packed, Rounding::Rte, frontend);
/// interp::run_arith_kernel(&exact, &[&a, &b], &mut out, 1, Rounding::Rte).unwrap();
/// assert_eq!(f32::from_le_bytes(out), 0.29999998);
/// let native = arith_kernel::build_by_control(&r, Layout::Packed, Rounding::Rte, frontend);
/// interp::run_arith_kernel(&native, &[&a, &b], &mut out, 1, Rounding::Rtz).unwrap();
/// assert_eq!(f32::from_le_bytes(out), 0.29999998);
/// interp::run_arith_kernel(&native, &[&a, &b], &mut out, 1, Rounding::Rte).unwrap();
/// assert_eq!(f32::from_le_bytes(out), 0.3);
/// ```
pub fn run_arith_kernel(
    func: &Function,
    operands: &[&[u8]],
    dst: &mut [u8],
    vectors: usize,
    mode: Rounding,
) -> Result<u64, InterpError> {
    let src: Vec<u8> = operands.concat();
    let mut args = Vec::with_capacity(5);
    let mut at = SRC_BASE;
    for operand in operands {
        args.push(at);
        at += operand.len() as u64;
    }
    // Operands the operation does not take: the first one's address, as the JIT passes.
    while args.len() < 3 {
        args.push(SRC_BASE);
    }
    args.extend([DST_BASE, vectors as u64]);
    let limit = step_limit(src.len(), dst.len());
    call(func, &args, &src, dst, limit, mode)
}

/// Runs an MX block kernel (`clconv::mx_kernel::build`) on `blocks` whole blocks. A
/// quantisation reads the values `inputs[0]` and writes the elements `outputs[0]` and the
/// scales `outputs[1]`; a dequantisation reads the elements `inputs[0]` and the scales
/// `inputs[1]` and writes the values `outputs[0]` (`outputs[1]` empty). The two inputs lie one
/// after the other in the source region, the two outputs in the destination region, and the
/// kernel gets their addresses as the JIT passes them. Returns the steps taken.
pub fn run_mx_kernel(
    func: &Function,
    quantize: bool,
    inputs: [&[u8]; 2],
    outputs: [&mut [u8]; 2],
    blocks: usize,
) -> Result<u64, InterpError> {
    run_block_kernel(func, quantize, inputs, outputs, blocks, None)
}

/// [`run_mx_kernel`] for any block kernel: an NVFP4 kernel's `tensor_scale` is placed after
/// the inputs and passed where the kernel reads it (`b` quantising, `d` dequantising).
pub fn run_block_kernel(
    func: &Function,
    quantize: bool,
    inputs: [&[u8]; 2],
    outputs: [&mut [u8]; 2],
    blocks: usize,
    tensor_scale: Option<f32>,
) -> Result<u64, InterpError> {
    let mut src = inputs.concat();
    let t_at = SRC_BASE + src.len() as u64;
    if let Some(t) = tensor_scale {
        src.extend(t.to_le_bytes());
    }
    let [first, second] = outputs;
    let mut dst = vec![0u8; first.len() + second.len()];
    let mut args = if quantize {
        [
            SRC_BASE,
            SRC_BASE,
            DST_BASE,
            DST_BASE + first.len() as u64,
            blocks as u64,
        ]
    } else {
        [
            SRC_BASE,
            SRC_BASE + inputs[0].len() as u64,
            DST_BASE,
            DST_BASE,
            blocks as u64,
        ]
    };
    if tensor_scale.is_some() {
        args[if quantize { 1 } else { 3 }] = t_at;
    }
    let limit = step_limit(src.len(), dst.len());
    let steps = call(func, &args, &src, &mut dst, limit, Rounding::Rte)?;
    let (a, b) = dst.split_at(first.len());
    first.copy_from_slice(a);
    second.copy_from_slice(b);
    Ok(steps)
}

fn run_in_mode(
    func: &Function,
    granule: usize,
    mode: Rounding,
    src: &[u8],
    dst: &mut [u8],
    vectors: usize,
    limit: u64,
) -> Result<u64, InterpError> {
    if granule <= 1 || vectors.is_multiple_of(granule) {
        return run_once(func, src, dst, vectors, limit, mode);
    }
    if !(src.len().is_multiple_of(vectors) && dst.len().is_multiple_of(vectors)) {
        return Err(InterpError::PartialVectors {
            granule,
            vectors,
            src: src.len(),
            dst: dst.len(),
        });
    }
    let (src_per, dst_per) = (src.len() / vectors, dst.len() / vectors);
    let mut steps = 0;
    kernel::run_in_granules(granule, src_per, dst_per, src, dst, vectors, |s, d, n| {
        steps += run_once(func, s, d, n, limit.saturating_sub(steps), mode)?;
        Ok::<(), InterpError>(())
    })?;
    Ok(steps)
}

/// One call of a conversion kernel `func` on the buffers.
fn run_once(
    func: &Function,
    src: &[u8],
    dst: &mut [u8],
    vectors: usize,
    limit: u64,
    mode: Rounding,
) -> Result<u64, InterpError> {
    let args = [SRC_BASE, DST_BASE, vectors as u64];
    call(func, &args, src, dst, limit, mode)
}

/// One call of `func` with the I64 arguments `args` (addresses into the two buffers, counts).
fn call(
    func: &Function,
    args: &[u64],
    src: &[u8],
    dst: &mut [u8],
    limit: u64,
    mode: Rounding,
) -> Result<u64, InterpError> {
    check_signature(func, args.len())?;
    cranelift_codegen::verifier::verify_function(func, &settings::Flags::new(settings::builder()))
        .map_err(|e| InterpError::Verifier(e.to_string()))?;
    for (side, bytes) in [("source", src.len()), ("destination", dst.len())] {
        if bytes > MAX_BUFFER_BYTES {
            return Err(InterpError::BufferTooLarge { side, bytes });
        }
    }
    let current: Cell<Option<Inst>> = Cell::new(None);
    let mut state = HostMemory {
        inner: InterpreterState::default(),
        src,
        dst,
        fault: Cell::new(None),
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        drive(func, &mut state, args, limit, mode, &current)
    }));
    match result {
        Ok(r) => r,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            let what = match current.get() {
                Some(inst) => format!("`{}` (it panicked: {message})", func.dfg.display_inst(inst)),
                None => format!("this function (it panicked: {message})"),
            };
            Err(InterpError::Unsupported { what })
        }
    }
}

fn check_signature(func: &Function, params: usize) -> Result<(), InterpError> {
    let sig = &func.signature;
    let ok = sig.params.len() == params
        && sig.params.iter().all(|p| p.value_type == types::I64)
        && sig.returns.is_empty();
    if ok {
        Ok(())
    } else {
        Err(InterpError::Signature {
            signature: sig.to_string(),
        })
    }
}

/// The driver loop: what `Interpreter::call` does, on our state, with a step limit.
fn drive<'a>(
    func: &'a Function,
    state: &mut HostMemory<'a, '_>,
    args: &[u64],
    limit: u64,
    mode: Rounding,
    current: &Cell<Option<Inst>>,
) -> Result<u64, InterpError> {
    let entry = func
        .layout
        .entry_block()
        .ok_or_else(|| InterpError::Verifier("the function has no blocks".into()))?;
    state.push_frame(func);
    let args = args.iter().map(|&a| DataValue::I64(a as i64)).collect();
    state
        .current_frame_mut()
        .set_all(func.dfg.block_params(entry), args);
    let mut next = func.layout.first_inst(entry);
    let mut steps = 0u64;
    let show = |inst: Inst| func.dfg.display_inst(inst).to_string();
    while let Some(inst) = next {
        if steps >= limit {
            return Err(InterpError::StepLimit { limit });
        }
        steps += 1;
        current.set(Some(inst));
        let own = match rounded_in_mode(func, state, inst, mode)? {
            Some(value) => Some(value),
            None => x86_cvtt2dq(func, state, inst),
        };
        if let Some(value) = own {
            state
                .current_frame_mut()
                .set_all(func.dfg.inst_results(inst), vec![value]);
            next = func.layout.next_inst(inst);
            continue;
        }
        let flow = step(state, DfgInstructionContext::new(inst, &func.dfg)).map_err(|e| {
            let instruction = show(inst);
            match e {
                StepError::ValueError(v) => InterpError::Unsupported {
                    what: format!("`{instruction}` (it cannot step: {v})"),
                },
                other => InterpError::Step {
                    instruction,
                    error: other.to_string(),
                },
            }
        })?;
        next = match flow {
            ControlFlow::Assign(values) => {
                state
                    .current_frame_mut()
                    .set_all(func.dfg.inst_results(inst), values.to_vec());
                func.layout.next_inst(inst)
            }
            ControlFlow::Continue => func.layout.next_inst(inst),
            ControlFlow::ContinueAt(block, args) => {
                state
                    .current_frame_mut()
                    .set_all(func.dfg.block_params(block), args.to_vec());
                func.layout.first_inst(block)
            }
            ControlFlow::Return(_) => {
                state.pop_frame();
                return Ok(steps);
            }
            ControlFlow::Trap(trap) => {
                let instruction = show(inst);
                return Err(match state.fault.take() {
                    Some(f) => InterpError::OutOfBounds {
                        access: f.access,
                        bytes: f.bytes,
                        address: f.address,
                        region: state.describe(f.address, f.reason),
                        instruction,
                    },
                    None => InterpError::Trap {
                        trap: trap.to_string(),
                        instruction,
                    },
                });
            }
            ControlFlow::Call(..) | ControlFlow::ReturnCall(..) => {
                return Err(InterpError::Unsupported {
                    what: format!("`{}` (calls are not supported by this driver)", show(inst)),
                });
            }
        };
    }
    Err(InterpError::Step {
        instruction: "the end of a block".into(),
        error: "control fell off a block without a terminator".into(),
    })
}

/// Executes `inst` in the rounding mode `mode` if it rounds by the rounding control and `mode`
/// is not nearest-even (in which the interpreter's own semantics hold): `fadd`, `fsub`,
/// `fmul`, `fdiv`, `sqrt`, `fma` lane by lane as [`reference::arith::element`] (a NaN result as
/// the interpreter gives it: which NaN does not depend on the mode), and `fcvt_from_sint`,
/// `fcvt_from_uint`, `fdemote`, `fvdemote` as the reference's conversions with that rounding.
/// Anything else: `None`.
fn rounded_in_mode(
    func: &Function,
    state: &HostMemory<'_, '_>,
    inst: Inst,
    mode: Rounding,
) -> Result<Option<DataValue>, InterpError> {
    use clconv::arith::{ArithOp, FloatType};
    if mode == Rounding::Rte {
        return Ok(None);
    }
    let opcode = func.dfg.insts[inst].opcode();
    let arith = match opcode {
        Opcode::Fadd => Some(ArithOp::Add),
        Opcode::Fsub => Some(ArithOp::Sub),
        Opcode::Fmul => Some(ArithOp::Mul),
        Opcode::Fdiv => Some(ArithOp::Div),
        Opcode::Sqrt => Some(ArithOp::Sqrt),
        Opcode::Fma => Some(ArithOp::Fma),
        Opcode::FcvtFromSint | Opcode::FcvtFromUint | Opcode::Fdemote | Opcode::Fvdemote => None,
        _ => return Ok(None),
    };
    let args = func.dfg.inst_args(inst);
    let Some(&result) = func.dfg.inst_results(inst).first() else {
        return Ok(None);
    };
    let rty = func.dfg.value_type(result);
    let lanes_of = |v: cranelift_codegen::ir::Value| -> Vec<u64> {
        let ty = func.dfg.value_type(v);
        let mut bytes = [0u8; 16];
        state.current_frame().get(v).write_to_slice_le(&mut bytes);
        let lane_bytes = ty.lane_bits() as usize / 8;
        (0..ty.lane_count() as usize)
            .map(|i| {
                let mut b8 = [0u8; 8];
                b8[..lane_bytes].copy_from_slice(&bytes[i * lane_bytes..(i + 1) * lane_bytes]);
                u64::from_le_bytes(b8)
            })
            .collect()
    };
    let float_of = |ty: Type| match ty.lane_type() {
        types::F32 => Some(FloatType::Float),
        types::F64 => Some(FloatType::Double),
        _ => None,
    };
    let out: Vec<u64> = if let Some(op) = arith {
        let Some(fty) = float_of(rty) else {
            return Ok(None);
        };
        let operands: Vec<Vec<u64>> = args.iter().map(|&v| lanes_of(v)).collect();
        (0..operands[0].len())
            .map(|lane| {
                let mut xyz = [0u64; 3];
                for (slot, operand) in xyz.iter_mut().zip(&operands) {
                    *slot = operand[lane];
                }
                let r = reference::arith::element(op, fty, mode, xyz);
                if !reference::arith::is_nan(fty, r) {
                    return r;
                }
                // A NaN result: the host's (the interpreter's) NaN.
                let [x, y, z] = xyz;
                match fty {
                    FloatType::Float => {
                        let f = |v: u64| f32::from_bits(v as u32);
                        u64::from(host_arith(op, f(x), f(y), f(z)).to_bits())
                    }
                    FloatType::Double => {
                        let f = f64::from_bits;
                        host_arith(op, f(x), f(y), f(z)).to_bits()
                    }
                }
            })
            .collect()
    } else {
        let aty = func.dfg.value_type(args[0]);
        let signed = opcode == Opcode::FcvtFromSint;
        let (Some(src), Some(dst)) = (
            scalar_type_of(aty.lane_type(), signed),
            scalar_type_of(rty.lane_type(), false),
        ) else {
            return Ok(None);
        };
        let conv = clconv::request::Conversion::new(
            clconv::types::VectorType::scalar(src),
            clconv::types::VectorType::scalar(dst),
            false,
            Some(mode),
            clconv::types::Extensions::default(),
        )
        .map_err(|e| InterpError::Unsupported {
            what: format!("`{}` ({e})", func.dfg.display_inst(inst)),
        })?;
        let mut out: Vec<u64> = lanes_of(args[0])
            .into_iter()
            .map(|x| reference::convert_element(&conv, Rounding::Rte, x).bits)
            .collect();
        // fvdemote: two F64 lanes in, four F32 lanes out, the upper two zero.
        out.resize(rty.lane_count() as usize, 0);
        out
    };
    let lane_bytes = rty.lane_bits() as usize / 8;
    let mut bytes = [0u8; 16];
    for (i, lane) in out.iter().enumerate() {
        bytes[i * lane_bytes..(i + 1) * lane_bytes]
            .copy_from_slice(&lane.to_le_bytes()[..lane_bytes]);
    }
    Ok(Some(DataValue::read_from_slice_le(
        &bytes[..rty.bytes() as usize],
        rty,
    )))
}

/// `op` on the host's floats (only for NaN results, which the mode does not change).
fn host_arith<F: HostFloat>(op: clconv::arith::ArithOp, x: F, y: F, z: F) -> F {
    use clconv::arith::ArithOp;
    match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div => x / y,
        ArithOp::Sqrt => x.sqrt(),
        ArithOp::Fma => x.mul_add(y, z),
    }
}

/// The host float operations [`host_arith`] needs.
trait HostFloat:
    Sized
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    fn sqrt(self) -> Self;
    fn mul_add(self, y: Self, z: Self) -> Self;
}

impl HostFloat for f32 {
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    fn mul_add(self, y: f32, z: f32) -> f32 {
        f32::mul_add(self, y, z)
    }
}

impl HostFloat for f64 {
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    fn mul_add(self, y: f64, z: f64) -> f64 {
        f64::mul_add(self, y, z)
    }
}

/// The OpenCL scalar type of a Cranelift lane type (integers as signed or unsigned).
fn scalar_type_of(ty: Type, signed: bool) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match (ty, signed) {
        (types::I8, true) => Char,
        (types::I8, false) => UChar,
        (types::I16, true) => Short,
        (types::I16, false) => UShort,
        (types::I32, true) => Int,
        (types::I32, false) => UInt,
        (types::I64, true) => Long,
        (types::I64, false) => ULong,
        (types::F32, _) => Float,
        (types::F64, _) => Double,
        _ => return None,
    })
}

/// Executes `inst` if it is `x86_cvtt2dq` I32X4 <- F32X4, the one opcode clconv emits that the
/// interpreter has no semantics for (it panics `unimplemented!`). The semantics are the
/// instruction's documented ones, "the same semantics as `cvttps2dq` on x86: `INT_MIN` for NaN
/// or out-of-bounds lanes": each lane truncated toward zero, `INT_MIN` where it is NaN or
/// outside [-2^31, 2^31). Any other instruction, or other types: `None` (the interpreter steps it).
fn x86_cvtt2dq(func: &Function, state: &HostMemory<'_, '_>, inst: Inst) -> Option<DataValue> {
    if func.dfg.insts[inst].opcode() != Opcode::X86Cvtt2dq {
        return None;
    }
    let arg = *func.dfg.inst_args(inst).first()?;
    let result = *func.dfg.inst_results(inst).first()?;
    if func.dfg.value_type(arg) != types::F32X4 || func.dfg.value_type(result) != types::I32X4 {
        return None;
    }
    let DataValue::V128(bytes) = state.current_frame().get(arg) else {
        return None;
    };
    Some(DataValue::V128(cvttps2dq(*bytes)))
}

/// `cvttps2dq` on the 16 bytes of an F32X4 (little-endian lanes), as Intel's manual defines it.
fn cvttps2dq(bytes: [u8; 16]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (lane, result) in bytes.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
        let x = f32::from_le_bytes([lane[0], lane[1], lane[2], lane[3]]);
        // 2^31 is the first float above i32::MAX; -2^31 is i32::MIN itself; NaN is in no range.
        let t = if (-2_147_483_648.0..2_147_483_648.0).contains(&x) {
            x.trunc() as i32
        } else {
            i32::MIN
        };
        result.copy_from_slice(&t.to_le_bytes());
    }
    out
}

/// An access the memory refused, kept for the error message (the interpreter only sees a trap).
#[derive(Clone, Copy, Debug)]
struct Fault {
    access: Access,
    address: u64,
    bytes: usize,
    reason: &'static str,
}

/// `InterpreterState` plus two host slices at fake addresses.
struct HostMemory<'a, 'm> {
    inner: InterpreterState<'a>,
    src: &'m [u8],
    dst: &'m mut [u8],
    fault: Cell<Option<Fault>>,
}

/// The address an interpreter `Address` encodes, as the kernel computed it.
fn raw_address(addr: &Address) -> u64 {
    match DataValue::try_from(addr.clone()) {
        Ok(DataValue::I64(v)) => v as u64,
        Ok(DataValue::I32(v)) => v as u32 as u64,
        _ => u64::MAX,
    }
}

/// `[base, base + len)` contains `[address, address + bytes)`: the offset.
fn within(address: u64, bytes: usize, base: u64, len: usize) -> Option<usize> {
    let offset = address.checked_sub(base)?;
    let end = offset.checked_add(bytes as u64)?;
    (end <= len as u64).then_some(offset as usize)
}

impl HostMemory<'_, '_> {
    /// Records why an access was refused and gives the interpreter an error that becomes a
    /// trap whatever the access's flags (an out-of-bounds error on a `notrap` access would make
    /// the interpreter panic instead).
    fn refuse(
        &self,
        access: Access,
        address: u64,
        bytes: usize,
        reason: &'static str,
    ) -> MemoryError {
        self.fault.set(Some(Fault {
            access,
            address,
            bytes,
            reason,
        }));
        MemoryError::InvalidOffset {
            offset: address,
            max: 0,
        }
    }

    fn describe(&self, address: u64, reason: &'static str) -> String {
        let relative = |name: &str, base: u64, len: usize, what: &str| {
            let offset = address.wrapping_sub(base) as i64;
            format!("{name} {offset:+}, {what} is {len} bytes")
        };
        let place = if address >= DST_BASE {
            relative("dst", DST_BASE, self.dst.len(), "the destination")
        } else if address >= SRC_BASE {
            relative("src", SRC_BASE, self.src.len(), "the source")
        } else {
            "below both buffers".to_string()
        };
        format!("{reason}: {place}")
    }

    fn aligned_ok(address: u64, bytes: usize, flags: MemFlagsData) -> bool {
        !flags.aligned() || address.is_multiple_of(bytes as u64)
    }
}

impl<'a> State<'a> for HostMemory<'a, '_> {
    fn get_function(&self, func_ref: FuncRef) -> Option<&'a Function> {
        self.inner.get_function(func_ref)
    }
    fn get_current_function(&self) -> &'a Function {
        self.inner.get_current_function()
    }
    fn get_libcall_handler(&self) -> LibCallHandler {
        self.inner.get_libcall_handler()
    }
    fn push_frame(&mut self, function: &'a Function) {
        self.inner.push_frame(function)
    }
    fn pop_frame(&mut self) {
        self.inner.pop_frame()
    }
    fn current_frame_mut(&mut self) -> &mut Frame<'a> {
        self.inner.current_frame_mut()
    }
    fn current_frame(&self) -> &Frame<'a> {
        self.inner.current_frame()
    }
    fn stack_address(
        &self,
        size: AddressSize,
        slot: StackSlot,
        offset: u64,
    ) -> Result<Address, MemoryError> {
        self.inner.stack_address(size, slot, offset)
    }

    fn checked_load(
        &self,
        address: Address,
        ty: Type,
        mem_flags: MemFlagsData,
    ) -> Result<DataValue, MemoryError> {
        let bytes = ty.bytes() as usize;
        let raw = raw_address(&address);
        if address.region == AddressRegion::Stack
            && within(raw, bytes, 0, self.inner.stack.len()).is_some()
        {
            // The interpreter's own stack (stack slots): in bounds, so it cannot fault.
            return self.inner.checked_load(address, ty, mem_flags);
        }
        let bytes_at = if let Some(at) = within(raw, bytes, SRC_BASE, self.src.len()) {
            &self.src[at..at + bytes]
        } else if let Some(at) = within(raw, bytes, DST_BASE, self.dst.len()) {
            &self.dst[at..at + bytes]
        } else {
            return Err(self.refuse(Access::Load, raw, bytes, "outside both buffers"));
        };
        if !Self::aligned_ok(raw, bytes, mem_flags) {
            return Err(self.refuse(Access::Load, raw, bytes, "misaligned `aligned` access"));
        }
        Ok(match mem_flags.endianness(self.inner.native_endianness) {
            Endianness::Big => DataValue::read_from_slice_be(bytes_at, ty),
            Endianness::Little => DataValue::read_from_slice_le(bytes_at, ty),
        })
    }

    fn checked_store(
        &mut self,
        address: Address,
        v: DataValue,
        mem_flags: MemFlagsData,
    ) -> Result<(), MemoryError> {
        let bytes = v.ty().bytes() as usize;
        let raw = raw_address(&address);
        if address.region == AddressRegion::Stack
            && within(raw, bytes, 0, self.inner.stack.len()).is_some()
        {
            return self.inner.checked_store(address, v, mem_flags);
        }
        let Some(at) = within(raw, bytes, DST_BASE, self.dst.len()) else {
            let reason = if within(raw, bytes, SRC_BASE, self.src.len()).is_some() {
                "a store into the read-only source"
            } else {
                "outside the destination"
            };
            return Err(self.refuse(Access::Store, raw, bytes, reason));
        };
        if !Self::aligned_ok(raw, bytes, mem_flags) {
            return Err(self.refuse(Access::Store, raw, bytes, "misaligned `aligned` access"));
        }
        let endianness = mem_flags.endianness(self.inner.native_endianness);
        let slot = &mut self.dst[at..at + bytes];
        match endianness {
            Endianness::Big => v.write_to_slice_be(slot),
            Endianness::Little => v.write_to_slice_le(slot),
        }
        Ok(())
    }

    fn function_address(
        &self,
        size: AddressSize,
        name: &ExternalName,
    ) -> Result<Address, MemoryError> {
        self.inner.function_address(size, name)
    }
    fn get_function_from_address(&self, address: Address) -> Option<InterpreterFunctionRef<'a>> {
        self.inner.get_function_from_address(address)
    }
    fn resolve_global_value(&self, gv: GlobalValue) -> Result<DataValue, MemoryError> {
        self.inner.resolve_global_value(gv)
    }
    fn get_pinned_reg(&self) -> DataValue {
        self.inner.get_pinned_reg()
    }
    fn set_pinned_reg(&mut self, v: DataValue) {
        self.inner.set_pinned_reg(v)
    }
}

// ---------------------------------------------------------------------------------------------
// Checking requests against the reference.

fn host_isa() -> Result<&'static OwnedTargetIsa, InterpError> {
    static HOST: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    HOST.get_or_init(|| jit::host_isa(X64Flags::Host).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| InterpError::Isa(e.clone()))
}

/// The layouts a request is checked in: packed, plus aligned when a side has 3 components.
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{Extensions, Layout, Request};
/// let r = Request::parse("convert_float3(int3)", Extensions::default()).unwrap();
/// assert_eq!(interp::layouts(&r), [Layout::Packed, Layout::Aligned]);
/// ```
pub fn layouts(request: &Request) -> Vec<Layout> {
    if request.src().width == Width::W3 || request.dst().width == Width::W3 {
        vec![Layout::Packed, Layout::Aligned]
    } else {
        vec![Layout::Packed]
    }
}

/// A deterministic sample of `n` of [`check::inputs`]`(t, `[`RANDOM_INPUTS`]`, seed)` (all of
/// them when there are at most `n`; more than `n` when the specials alone are more: 102 for
/// float, 112 for double, 60 for half, 28–68 for the integers), special values first.
///
/// The specials, for any `n`: for float and double ±0, the smallest and largest subnormals,
/// the smallest normal, MAX, ±inf, every NaN payload `check::inputs` has, 1.0, the ties 0.5,
/// 1.5, 2.5 and 0.5 - 1 ulp, the integer-range edges ±2^7, 2^8, 2^15, 2^16, 2^31, 2^32, 2^63,
/// 2^64 with their one-ulp neighbours, half's range edges (65504, 65519, 65520) and the float
/// and half subnormal edges; for half the same classes in binary16; for integers 0, ±1, 2, every
/// integer type's MIN and MAX with their neighbours, and the float/double/half rounding ties
/// around 2^12, 2^25, 2^31, 2^54 and 2^63. The rest is a stratified random spread: one pick per
/// equal slice, half of them over the special part of `check::inputs`, half over its random
/// part (8/16-bit types: over every bit pattern).
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{ScalarType};
/// let s = interp::sample_inputs(ScalarType::Float, 128, 1);
/// assert_eq!(s.len(), 128);
/// assert!(s.contains(&0x7f80_0000) && s.contains(&0xff80_0000)); // ±inf
/// assert!(s.contains(&0x7fc0_0000)); // a quiet NaN
/// assert!(s.contains(&0x8000_0000) && s.contains(&1)); // -0.0, smallest subnormal
/// assert_eq!(interp::sample_inputs(ScalarType::UChar, 300, 1).len(), 256); // every pattern
/// ```
pub fn sample_inputs(t: ScalarType, n: usize, seed: u64) -> Vec<u64> {
    type Cache = Mutex<HashMap<(ScalarType, usize, u64), Arc<Vec<u64>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (t, n, seed);
    if let Some(s) = lock(cache).get(&key) {
        return s.to_vec();
    }
    let s = Arc::new(compute_sample(t, n, seed));
    lock(cache).insert(key, s.clone());
    s.to_vec()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn compute_sample(t: ScalarType, n: usize, seed: u64) -> Vec<u64> {
    let all = check::inputs(t, RANDOM_INPUTS, seed);
    if all.len() <= n {
        return all;
    }
    let present: HashSet<u64> = all.iter().copied().collect();
    let mut out = Vec::with_capacity(n);
    let mut taken = HashSet::new();
    for c in special_candidates(t) {
        if present.contains(&c) && taken.insert(c) {
            out.push(c);
        }
    }
    // The fill: stratified picks over the special part and over the random part.
    let special_len = if t.bits() <= 16 {
        all.len()
    } else {
        check::inputs(t, 0, seed).len()
    };
    let (specials, random) = all.split_at(special_len);
    let mut rng = Rng::new(seed ^ 0x1a7e_5eed ^ ((t as u64) << 16));
    let missing = n.saturating_sub(out.len());
    let from_random = if random.is_empty() { 0 } else { missing / 2 };
    for (part, count) in [(specials, missing - from_random), (random, from_random)] {
        stratified(part, count, &mut rng, &mut taken, &mut out);
    }
    // Duplicate picks (rare) leave room: top up from the start of the special part.
    for &x in all.iter() {
        if out.len() >= n {
            break;
        }
        if taken.insert(x) {
            out.push(x);
        }
    }
    out
}

fn stratified(
    part: &[u64],
    count: usize,
    rng: &mut Rng,
    taken: &mut HashSet<u64>,
    out: &mut Vec<u64>,
) {
    if count == 0 || part.is_empty() {
        return;
    }
    for k in 0..count {
        let lo = k * part.len() / count;
        let hi = ((k + 1) * part.len() / count).max(lo + 1).min(part.len());
        let x = part[lo + (rng.next_u64() % (hi - lo) as u64) as usize];
        if taken.insert(x) {
            out.push(x);
        }
    }
}

/// Bits of the interesting values of `t` (some may not be in `check::inputs`; those are
/// dropped by the caller).
fn special_candidates(t: ScalarType) -> Vec<u64> {
    match t {
        t if t.is_float() => float_candidates(t),
        _ => int_candidates(t),
    }
}

fn float_candidates(t: ScalarType) -> Vec<u64> {
    let f = crate::check::FloatFormat::of(t);
    let (bits, mantissa_bits, bias) = (f.bits, f.mantissa_bits, f.bias);
    let (mask, inf, sign) = (f.mantissa_mask(), f.inf(), f.sign());
    let max_exp = bias;
    let pow2 = |e: i64| -> Option<u64> {
        (e >= 1 - bias && e <= max_exp).then(|| ((bias + e) as u64) << mantissa_bits)
    };
    // Exact value v / 2^frac_bits as bits (v small, normal range).
    let value = |twice: u64| -> u64 {
        if twice == 0 {
            return 0;
        }
        let top = 63 - twice.leading_zeros() as i64;
        let e = top - 1;
        let mant = if top as u32 <= mantissa_bits {
            (twice << (mantissa_bits as i64 - top)) & mask
        } else {
            (twice >> (top - mantissa_bits as i64)) & mask
        };
        ((bias + e) as u64) << mantissa_bits | mant
    };
    let mut base = vec![
        0,
        1,
        2,
        mask - 1,
        mask,
        mask + 1,
        mask + 2,
        inf - 1,
        inf - 2,
        inf,
        value(2), // 1.0
        value(1), // 0.5
        value(1) - 1,
        value(3), // 1.5
        value(5), // 2.5
    ];
    for e in [7, 8, 15, 16, 31, 32, 63, 64] {
        if let Some(p) = pow2(e) {
            base.extend([p - 1, p, p + 1]);
        }
    }
    if bits >= 32 {
        base.extend([value(2 * 65504), value(2 * 65519), value(2 * 65520)]);
        for e in [-14, -24, -25] {
            base.extend(pow2(e));
        }
    }
    if bits == 64 {
        for e in [-126, -149, -150] {
            base.extend(pow2(e));
        }
        base.extend([0x47ef_ffff_e000_0000, 0x47ef_ffff_f000_0000]);
    }
    let mut out = Vec::new();
    for b in base {
        out.push(b);
        out.push(b | sign);
    }
    let quiet = 1u64 << (mantissa_bits - 1);
    for payload in [
        quiet,
        1,
        quiet | 1,
        mask,
        quiet >> 1,
        0x5a5 & mask,
        0x100 & mask,
    ] {
        out.push(inf | payload);
        out.push(inf | payload | sign);
    }
    out
}

fn int_candidates(t: ScalarType) -> Vec<u64> {
    let bits = t.bits();
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let mut base: Vec<i128> = vec![0, 1, -1, 2];
    for other in ScalarType::ALL.into_iter().filter(|o| o.is_integer()) {
        for b in [other.int_min().unwrap_or(0), other.int_max().unwrap_or(0)] {
            base.extend([b - 1, b, b + 1]);
        }
    }
    // Rounding ties of half (11 bits), float (24) and double (53) just above their exact
    // range, and near the top of the 32- and 64-bit ranges.
    for (p, ks) in [(11, [12, 31, 63]), (24, [25, 31, 63]), (53, [54, 63, 63])] {
        for k in ks {
            let tie = (1i128 << k) + (1i128 << (k - p));
            for v in [tie - 1, tie, tie + 1, -tie] {
                base.push(v);
            }
        }
    }
    base.into_iter().map(|v| v as u64 & mask).collect()
}

/// Checks one request in the interpreter: builds its kernels as the JIT does (host ISA, static
/// mode rte; packed, plus aligned for 3-component vectors), runs them on
/// [`sample_inputs`]`(src element, inputs_per_request, seed)` (repeated from the start to fill
/// the last vector) at the lengths [`check_function`] uses, and compares every byte with the
/// reference.
///
/// What the interpreter cannot run is reported in [`InterpOutcome::unsupported`], not as an
/// error; errors are failures (out-of-bounds accesses, traps, the step limit, ...).
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{Extensions, Request};
/// let r = Request::parse("convert_uchar3_sat_rtp(double3)", Extensions::default()).unwrap();
/// let o = interp::check_request(&r, 128, 7).unwrap();
/// assert!(o.passed(), "{:?}", o.mismatches);
/// assert_eq!(o.inputs, 128);
/// assert_eq!(interp::check_request(&r, 10, 7).unwrap().inputs, 112); // the double specials
/// ```
pub fn check_request(
    request: &Request,
    inputs_per_request: usize,
    seed: u64,
) -> Result<InterpOutcome, InterpError> {
    check_request_on(request, &**host_isa()?, inputs_per_request, seed)
}

/// [`check_request`] for the kernels [`kernel::build`] makes for `isa`, which need not be able to
/// run here: the interpreter executes the IR the lowering table of an AArch64, RISC-V or s390x
/// target chooses as readily as the host's (loads and stores name their byte order, so the
/// target's endianness does not matter).
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{target::Target, Extensions, Request};
/// let isa = Target::Riscv64.isa().unwrap(); // no vector types: the scalar recipes
/// let r = Request::parse("convert_short8_sat(float8)", Extensions::default()).unwrap();
/// let o = interp::check_request_on(&r, &*isa, 64, 1).unwrap();
/// assert!(o.passed(), "{:?}", o.mismatches);
/// ```
pub fn check_request_on(
    request: &Request,
    isa: &dyn TargetIsa,
    inputs_per_request: usize,
    seed: u64,
) -> Result<InterpOutcome, InterpError> {
    let elements = sample_inputs(request.src().elem, inputs_per_request, seed);
    let mut outcome = InterpOutcome {
        request: request.to_string(),
        inputs: elements.len(),
        ..InterpOutcome::default()
    };
    for layout in layouts(request) {
        let built = kernel::build(request, layout, Rounding::Rte, isa, 0)?;
        if outcome.recipe.is_empty() {
            outcome.recipe = built.row.recipe.name.to_string();
        }
        let checked = check_in_mode(
            request,
            layout,
            &built.func,
            built.granule,
            built.rounding_control,
            &elements,
        );
        match checked {
            Ok(o) => merge(&mut outcome, o),
            Err(InterpError::Unsupported { what }) => {
                outcome
                    .unsupported
                    .get_or_insert(Unsupported { layout, what });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(outcome)
}

fn merge(into: &mut InterpOutcome, o: InterpOutcome) {
    into.elements += o.elements;
    into.instructions += o.instructions;
    into.mismatch_count += o.mismatch_count;
    for m in o.mismatches {
        if into.mismatches.len() < check::Checker::MAX_REPORTED {
            into.mismatches.push(m);
        }
    }
}

/// Runs `func`, a batch kernel meant to implement `request` over `layout`, in the interpreter on
/// the source elements `elements` (bits; repeated from the start to fill the last vector), and
/// compares the bytes with [`reference::evaluate_with_mode`] (static mode rte). Use it to check
/// a kernel built some other way than [`kernel::build`].
///
/// The kernel runs on the empty buffer, on the whole buffer, and on prefixes of the vector
/// counts nearest to 1, 2, 3, 15, 16, 17, 31, 32, 33, 127, 128, 129, 255, 256 and 257
/// elements, so that a loop converting 2 to 128 elements per iteration runs with no full
/// iteration, with whole iterations only, and with iterations plus a short or a long tail. The destination is pre-filled with `0xa5`, so an element the kernel does
/// not write shows up as a mismatch, and a write past it is an [`InterpError::OutOfBounds`].
///
/// ```
/// use clconv_verify::interp;
/// use clconv::{kernel, Extensions, Layout, Request, Rounding};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = Request::parse("convert_int(float)", Extensions::default()).unwrap();
/// let b = kernel::build(&r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
/// let o = interp::check_function(&r, Layout::Packed, &b.func, b.granule, &[0x3fc0_0000, 0x7fc0_0000]).unwrap();
/// assert_eq!((o.elements, o.mismatch_count), (3, 0)); // 0 + 1 + 2 elements
///
/// // The kernel of another request is caught.
/// let other = Request::parse("convert_int_rte(float)", Extensions::default()).unwrap();
/// let o = interp::check_function(&other, Layout::Packed, &b.func, b.granule, &[0x3fc0_0000]).unwrap();
/// assert_eq!(o.mismatch_count, 1); // 1.5f: 1 (rtz) where rte gives 2
/// ```
pub fn check_function(
    request: &Request,
    layout: Layout,
    func: &Function,
    granule: usize,
    elements: &[u64],
) -> Result<InterpOutcome, InterpError> {
    check_in_mode(request, layout, func, granule, Rounding::Rte, elements)
}

/// [`check_function`] for a kernel that runs in the rounding mode `mode` ([`run_built`]).
fn check_in_mode(
    request: &Request,
    layout: Layout,
    func: &Function,
    granule: usize,
    mode: Rounding,
    elements: &[u64],
) -> Result<InterpOutcome, InterpError> {
    let src_t = request.src();
    let dst_t = request.dst();
    let lanes = src_t.lanes();
    let inputs = elements.len();
    let mut elements = elements.to_vec();
    let mut k = 0;
    while !elements.len().is_multiple_of(lanes) {
        elements.push(elements[k]);
        k += 1;
    }
    let vectors_total = elements.len() / lanes;
    let src_per = bytes_per_vector(src_t, layout);
    let dst_per = bytes_per_vector(dst_t, layout);
    let src = crate::check::source_buffer(src_t, layout, &elements);
    let mut want = vec![0u8; vectors_total * dst_per];
    reference::evaluate_with_mode(request, layout, Rounding::Rte, &src, &mut want)?;
    let mut outcome = InterpOutcome {
        request: request.to_string(),
        inputs,
        ..InterpOutcome::default()
    };
    let lengths = lengths(lanes, vectors_total);
    for n in lengths {
        let src_part = &src[..n * src_per];
        let want_part = &want[..n * dst_per];
        // Pre-filled with a pattern, so an element the kernel forgets to write shows up.
        let mut got = vec![0xa5u8; n * dst_per];
        let limit = padded_step_limit(src_part.len(), got.len(), n, granule);
        outcome.instructions += run_in_mode(func, granule, mode, src_part, &mut got, n, limit)?;
        outcome.elements += n * lanes;
        if got != want_part {
            let keep = check::Checker::MAX_REPORTED - outcome.mismatches.len();
            let (count, found) =
                check::diff(request, layout, src_part, want_part, &got, &elements, keep);
            outcome.mismatch_count += count;
            outcome.mismatches.extend(found);
        }
    }
    Ok(outcome)
}

/// The buffer lengths (in vectors) [`check_function`] runs a kernel at.
fn lengths(lanes: usize, total: usize) -> Vec<usize> {
    let mut out = vec![0, total];
    for elements in [
        1, 2, 3, 15, 16, 17, 31, 32, 33, 127, 128, 129, 255, 256, 257,
    ] {
        out.push(elements / lanes);
        out.push(elements.div_ceil(lanes));
    }
    out.retain(|&n| n <= total);
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::cvttps2dq;

    fn lanes(x: [f32; 4]) -> [i32; 4] {
        let mut bytes = [0u8; 16];
        for (i, v) in x.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        let out = cvttps2dq(bytes);
        std::array::from_fn(|i| i32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap()))
    }

    /// Expected values from Intel's definition: truncate toward zero; NaN and anything outside
    /// [-2^31, 2^31) give the "integer indefinite" 0x80000000.
    #[test]
    fn cvttps2dq_truncates_and_gives_int_min_out_of_range() {
        assert_eq!(lanes([1.9, -1.9, 0.5, -0.0]), [1, -1, 0, 0]);
        assert_eq!(
            lanes([2147483520.0, -2147483648.0, 2147483648.0, -2147483904.0]),
            [2147483520, i32::MIN, i32::MIN, i32::MIN]
        );
        assert_eq!(
            lanes([f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 16777217.0]),
            [i32::MIN, i32::MIN, i32::MIN, 16777216]
        );
    }
}
