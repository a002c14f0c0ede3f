//! Batch kernels for correctly rounded arithmetic ([`crate::arith`]): a Cranelift function
//! `fn(a: *const u8, b: *const u8, c: *const u8, dst: *mut u8, vectors: i64)` that computes one
//! [`ArithRequest`] element by element over whole buffers (`b` and `c` are unused by the
//! operations that take fewer operands), and its JIT entry point [`Jit::compile_arith`].
//!
//! Scalar requests (`mul_rtz(float)`) loop over scalar F32/F64 values. Vector requests process
//! the buffer in 128-bit chunks (F32X4, F64X2), the lanes being independent, with a scalar loop
//! for what remains, so both forms of the lowering run in every vector kernel whose element count
//! is not a multiple of the chunk. In the aligned layout a 3-component vector's fourth element is
//! computed on like the others and then written as zero, so a padding slot never leaks what the
//! operands held there.
//!
//! In rtz, rtp and rtn the JIT's kernels compute with the native instruction while MXCSR's
//! rounding control is set to the mode for the call ([`DirectedArith::RoundingControl`], the
//! default: [`build_by_control`]), or with the exact nearest-even sequences of
//! [`crate::lower::Lowering::arith`] ([`DirectedArith::ExactSequences`]: [`build`]).
//!
//! Every load and store is unaligned-safe, so any byte buffer works.
//!
//! ```
//! use clconv::jit::Jit;
//! let jit = Jit::new().unwrap();
//! let k = jit.compile_arith("add_rtz(float4)").unwrap();
//! let a = [1.0f32, f32::MAX, 1.0, -1.0];
//! let b = [1e-8f32, f32::MAX, -1.0, 1e-8];
//! let mut sum = [0f32; 4];
//! k.run(&[&a, &b], &mut sum).unwrap();
//! // toward zero: 1 + 1e-8 stays 1; MAX + MAX is MAX, not inf; 1 - 1 is +0; -1 + 1e-8 moves
//! assert_eq!(sum, [1.0, f32::MAX, 0.0, -0.99999994]);
//! ```

use crate::arith::{ArithBufferError, ArithOp, ArithParseError, ArithRequest, FloatType};
use crate::host;
use crate::jit::{self, Disassembly, Element, Jit, JitError};
use crate::kernel::{counted_loop, mem_flags};
use crate::lower::rounded_arith::emit;
use crate::table::{Arch, IsaFeatures, ROUNDING_CONTROL};
use crate::types::{Layout, Rounding, Width};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Function, InstBuilder, Signature, Type, UserFuncName, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why compiling or running an arithmetic kernel failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArithError {
    /// The name is not an arithmetic request.
    #[error(transparent)]
    Parse(#[from] ArithParseError),
    /// The buffers do not fit the request.
    #[error(transparent)]
    Buffer(#[from] ArithBufferError),
    /// The JIT could not compile the kernel.
    #[error(transparent)]
    Jit(#[from] JitError),
}

/// The signature of every arithmetic batch kernel: `(a, b, c, dst, vectors)`, all I64.
///
/// ```
/// use clconv::arith_kernel::signature;
/// use cranelift_codegen::isa::CallConv;
/// assert_eq!(signature(CallConv::SystemV).params.len(), 5);
/// ```
pub fn signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    for _ in 0..5 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

/// How a JIT's arithmetic batch kernels round in rtz, rtp and rtn ([`Jit::set_directed_arith`]).
///
/// ```
/// use clconv::arith_kernel::DirectedArith;
/// use clconv::jit::Jit;
/// let jit = Jit::new().unwrap();
/// assert_eq!(jit.directed_arith(), DirectedArith::RoundingControl);
/// jit.set_directed_arith(DirectedArith::ExactSequences);
/// let k = jit.compile_arith("add_rtz(float)").unwrap();
/// let mut sum = [0f32];
/// k.run(&[&[1.0f32], &[1e-8]], &mut sum).unwrap();
/// assert_eq!(sum[0], 1.0); // the same result either way
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DirectedArith {
    /// One native instruction per operation, rounded by the hardware's rounding control, which
    /// the JIT sets to the request's mode for the call (MXCSR.RC on x86-64): `mul_rtz(float4)`
    /// is one `mulps` per four elements. Where that does not hold ([`rounds_by_control`]: not
    /// x86-64, or `fma` without an FMA instruction, which Cranelift lowers to a libm call) the
    /// kernel takes the exact sequences.
    #[default]
    RoundingControl,
    /// Always the exact nearest-even sequences that [`crate::lower::Lowering::arith`] emits
    /// into a caller's function (2-20x the native instruction's cost): the batch kernel is then
    /// the same code that code lowered into your own function runs.
    ExactSequences,
}

/// Whether the JIT computes `request` (its mode resolved with `static_mode`) on `isa` with the
/// native instruction under the rounding control, given `directed`: on x86-64, in rtz, rtp and
/// rtn, for every operation but `fma` without an FMA instruction (Cranelift calls libm's `fma`
/// there, and a call out of a kernel runs only in the default MXCSR). Nearest-even is the native
/// instruction anyway.
///
/// ```
/// use clconv::arith::ArithRequest;
/// use clconv::arith_kernel::{rounds_by_control, DirectedArith};
/// use clconv::target::Target;
/// use clconv::Rounding;
/// let fma = ArithRequest::parse("fma_rtz(float4)").unwrap();
/// let mul = ArithRequest::parse("mul_rtz(float4)").unwrap();
/// let (avx2, sse41) = (Target::X86_64Avx2.isa().unwrap(), Target::X86_64Sse41.isa().unwrap());
/// let control = DirectedArith::RoundingControl;
/// assert!(rounds_by_control(&*avx2, &fma, Rounding::Rte, control));
/// assert!(!rounds_by_control(&*sse41, &fma, Rounding::Rte, control)); // no FMA instruction
/// assert!(rounds_by_control(&*sse41, &mul, Rounding::Rte, control));
/// assert!(!rounds_by_control(&*sse41, &mul, Rounding::Rte, DirectedArith::ExactSequences));
/// # #[cfg(feature = "cross-target")] {
/// let aarch64 = Target::Aarch64.isa().unwrap();
/// assert!(!rounds_by_control(&*aarch64, &mul, Rounding::Rte, control));
/// # }
/// ```
pub fn rounds_by_control(
    isa: &dyn TargetIsa,
    request: &ArithRequest,
    static_mode: Rounding,
    directed: DirectedArith,
) -> bool {
    IsaFeatures::of(isa)
        .is_ok_and(|features| rounds_by_control_with(&features, request, static_mode, directed))
}

/// [`rounds_by_control`] on features already read (the JIT's, read once at its creation).
fn rounds_by_control_with(
    features: &IsaFeatures,
    request: &ArithRequest,
    static_mode: Rounding,
    directed: DirectedArith,
) -> bool {
    directed == DirectedArith::RoundingControl
        && request.effective_rounding(static_mode) != Rounding::Rte
        && features.has(ROUNDING_CONTROL)
        // Only the JIT runs arithmetic kernels, and only x86-64's (MXCSR) round by the control:
        // on aarch64 hosts they take the exact sequences; the AOT entry points set FPCR for
        // conversions, never for arithmetic.
        && features.arch() == Arch::X86_64
        && (request.op() != ArithOp::Fma || features.has("has_fma"))
}

/// Builds the batch kernel of `request` over buffers of `layout`; a request without a mode
/// follows `static_mode`.
///
/// ```
/// use clconv::arith::ArithRequest;
/// use clconv::{arith_kernel, Layout, Rounding};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = ArithRequest::parse("div(double2)").unwrap();
/// let f = arith_kernel::build(&r, Layout::Packed, Rounding::Rtp, isa.frontend_config());
/// assert!(f.display().to_string().contains("fdiv"));
/// ```
pub fn build(
    request: &ArithRequest,
    layout: Layout,
    static_mode: Rounding,
    frontend: TargetFrontendConfig,
) -> Function {
    build_kernel(request, layout, static_mode, frontend, false)
}

/// Builds the kernel of `request` for a caller that sets the hardware's rounding control to the
/// request's mode for the call ([`rounds_by_control`]): the operation's native instruction, as
/// nearest-even IR. Run in nearest-even it computes the nearest-even result.
///
/// ```
/// use clconv::arith::ArithRequest;
/// use clconv::{arith_kernel, Layout, Rounding};
/// use clconv::target::Target;
/// let isa = Target::X86_64Avx2.isa().unwrap();
/// let r = ArithRequest::parse("div_rtp(double2)").unwrap();
/// let frontend = isa.frontend_config();
/// let native = arith_kernel::build_by_control(&r, Layout::Packed, Rounding::Rte, frontend);
/// let exact = arith_kernel::build(&r, Layout::Packed, Rounding::Rte, frontend);
/// // The exact sequence gets the quotient's error from an fma; the native kernel is one fdiv.
/// assert!(!native.display().to_string().contains("fma"));
/// assert!(exact.display().to_string().contains("fma"));
/// ```
pub fn build_by_control(
    request: &ArithRequest,
    layout: Layout,
    static_mode: Rounding,
    frontend: TargetFrontendConfig,
) -> Function {
    build_kernel(request, layout, static_mode, frontend, true)
}

fn build_kernel(
    request: &ArithRequest,
    layout: Layout,
    static_mode: Rounding,
    frontend: TargetFrontendConfig,
    by_control: bool,
) -> Function {
    let sig = signature(frontend.default_call_conv);
    let mut func = Function::with_name_signature(UserFuncName::user(1, 0), sig);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let mut shape = Shape::of(request, layout, static_mode);
    if by_control {
        // The rounding control rounds the native instruction: the IR is nearest-even's.
        shape.mode = Rounding::Rte;
    }
    let srcs = [params[0], params[1], params[2]];
    shape.emit_body(&mut b, &srcs, params[3], params[4]);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
    func
}

/// What a kernel's loops look like.
struct Shape {
    request: ArithRequest,
    mode: Rounding,
    scalar: Type,
    vector: Type,
    elem_bytes: usize,
    /// Lanes per 128-bit chunk.
    chunk: usize,
    /// Elements per vector in the buffer (4 for an aligned 3-component vector).
    stride: usize,
    lanes: usize,
}

impl Shape {
    fn of(request: &ArithRequest, layout: Layout, static_mode: Rounding) -> Shape {
        let (scalar, vector) = match request.elem() {
            FloatType::Float => (types::F32, types::F32X4),
            FloatType::Double => (types::F64, types::F64X2),
        };
        let elem_bytes = request.elem().bytes();
        Shape {
            request: *request,
            mode: request.effective_rounding(static_mode),
            scalar,
            vector,
            elem_bytes,
            chunk: 16 / elem_bytes,
            stride: layout.stride(request.width()),
            lanes: request.width().lanes(),
        }
    }

    /// Loads one operand of type `ty` from each source at `offset` bytes, computes, stores.
    fn compute_at(
        &self,
        b: &mut FunctionBuilder,
        srcs: &[Value; 3],
        dst: Value,
        offset: Value,
        ty: Type,
        zero_last_lane: bool,
    ) {
        let arity = self.request.op().arity();
        let args: Vec<Value> = srcs[..arity]
            .iter()
            .map(|&base| {
                let at = b.ins().iadd(base, offset);
                b.ins().load(ty, mem_flags(), at, 0)
            })
            .collect();
        let mut result = emit(b, self.request.op(), self.mode, &args)
            .expect("the kernel passes arity-many operands of one float type");
        if zero_last_lane {
            let zero = match ty.lane_type() {
                types::F32 => b.ins().f32const(0.0),
                _ => b.ins().f64const(0.0),
            };
            let last = (ty.lane_count() - 1) as u8;
            result = b.ins().insertlane(result, zero, last);
        }
        let at = b.ins().iadd(dst, offset);
        b.ins().store(mem_flags(), result, at, 0);
    }

    fn emit_body(&self, b: &mut FunctionBuilder, srcs: &[Value; 3], dst: Value, vectors: Value) {
        let eb = self.elem_bytes as i64;
        if self.request.width() == Width::W1 {
            counted_loop(b, vectors, IntCC::SignedLessThan, &mut |b, i| {
                let offset = b.ins().imul_imm_u(i, eb);
                self.compute_at(b, srcs, dst, offset, self.scalar, false);
            });
            return;
        }
        if self.stride != self.lanes {
            // Aligned 3-component vectors: 4 slots each, whole 128-bit chunks, padding zeroed.
            let per_vector = self.stride / self.chunk;
            counted_loop(b, vectors, IntCC::SignedLessThan, &mut |b, v| {
                for part in 0..per_vector {
                    let offset = b
                        .ins()
                        .imul_imm_u(v, (self.stride * self.elem_bytes) as i64);
                    let offset = b.ins().iadd_imm_u(offset, (part * 16) as i64);
                    let last = part + 1 == per_vector;
                    self.compute_at(b, srcs, dst, offset, self.vector, last);
                }
            });
            return;
        }
        // Dense: chunks of 128 bits, then a scalar tail.
        let total = b.ins().imul_imm_u(vectors, self.lanes as i64);
        let chunks = b
            .ins()
            .ushr_imm_u(total, self.chunk.trailing_zeros() as i64);
        counted_loop(b, chunks, IntCC::SignedLessThan, &mut |b, i| {
            let offset = b.ins().imul_imm_u(i, 16);
            self.compute_at(b, srcs, dst, offset, self.vector, false);
        });
        let done = b.ins().imul_imm_u(chunks, self.chunk as i64);
        let rest = b.ins().isub(total, done);
        counted_loop(b, rest, IntCC::SignedLessThan, &mut |b, i| {
            let index = b.ins().iadd(done, i);
            let offset = b.ins().imul_imm_u(index, eb);
            self.compute_at(b, srcs, dst, offset, self.scalar, false);
        });
    }
}

/// A compiled arithmetic batch kernel, from [`Jit::compile_arith`]. Holds its [`Jit`], so the
/// code lives as long as the kernel.
pub struct ArithKernel {
    /// Keeps the JIT, and so the code behind the entry points, alive.
    _jit: Jit,
    request: ArithRequest,
    packed: usize,
    aligned: usize,
    /// The host's floating-point control both entry points run under
    /// ([`host::control_for`]): the request's mode when they round by the control,
    /// nearest-even otherwise.
    control: host::Control,
}

impl ArithKernel {
    /// The request with its mode resolved (the JIT's static mode when none was written).
    pub fn request(&self) -> ArithRequest {
        self.request
    }

    /// Computes `dst = op(inputs...)` element by element (packed layout): `inputs` holds one
    /// slice per operand, each of the request's element type and of `dst`'s length.
    ///
    /// ```
    /// use clconv::jit::Jit;
    /// let k = Jit::new().unwrap().compile_arith("sqrt_rtp(double)").unwrap();
    /// let mut root = [0f64; 1];
    /// k.run(&[&[2.0f64]], &mut root).unwrap();
    /// assert_eq!(root[0], 1.4142135623730951); // sqrt(2) rounded up
    /// assert!(k.run(&[&[2.0f32]], &mut [0f32]).is_err()); // the request works on doubles
    /// ```
    pub fn run<T: Element>(&self, inputs: &[&[T]], dst: &mut [T]) -> Result<(), ArithError> {
        self.run_with_layout(Layout::Packed, inputs, dst)
    }

    /// [`ArithKernel::run`] with an explicit layout for 3-component vectors.
    pub fn run_with_layout<T: Element>(
        &self,
        layout: Layout,
        inputs: &[&[T]],
        dst: &mut [T],
    ) -> Result<(), ArithError> {
        let expected = self.request.elem().scalar_type();
        if T::TYPE != expected {
            return Err(ArithBufferError::ElementType {
                buffer: "the destination",
                got: T::TYPE.name(),
                expected: expected.name(),
                request: self.request.to_string(),
            }
            .into());
        }
        let lens: Vec<usize> = inputs.iter().map(|s| std::mem::size_of_val(*s)).collect();
        let ptrs: Vec<*const u8> = inputs.iter().map(|s| s.as_ptr().cast()).collect();
        self.call(
            layout,
            &lens,
            &ptrs,
            dst.as_mut_ptr().cast(),
            std::mem::size_of_val(dst),
        )
    }

    /// Computes on raw little-endian bytes. Any alignment is fine.
    ///
    /// ```
    /// use clconv::{jit::Jit, Layout};
    /// let k = Jit::new().unwrap().compile_arith("mul_rtz(float)").unwrap();
    /// let a = 3.0f32.to_le_bytes();
    /// let b = 0.1f32.to_le_bytes();
    /// let mut out = [0u8; 4];
    /// k.run_bytes(Layout::Packed, &[&a, &b], &mut out).unwrap();
    /// // 3 * 0.1f is 0.3f to nearest; toward zero it is one ulp less.
    /// assert_eq!(f32::from_le_bytes(out), 0.29999998);
    /// ```
    pub fn run_bytes(
        &self,
        layout: Layout,
        inputs: &[&[u8]],
        dst: &mut [u8],
    ) -> Result<(), ArithError> {
        let lens: Vec<usize> = inputs.iter().map(|s| s.len()).collect();
        let ptrs: Vec<*const u8> = inputs.iter().map(|s| s.as_ptr()).collect();
        self.call(layout, &lens, &ptrs, dst.as_mut_ptr(), dst.len())
    }

    fn call(
        &self,
        layout: Layout,
        lens: &[usize],
        ptrs: &[*const u8],
        dst: *mut u8,
        dst_len: usize,
    ) -> Result<(), ArithError> {
        let vectors = self.request.vector_count(layout, lens, dst_len)?;
        if vectors == 0 {
            return Ok(());
        }
        let entry = match layout {
            Layout::Packed => self.packed,
            Layout::Aligned => self.aligned,
        };
        // Operands the operation does not read are passed as the first one, never dereferenced.
        let a = ptrs[0];
        let b = ptrs.get(1).copied().unwrap_or(a);
        let c = ptrs.get(2).copied().unwrap_or(a);
        // SAFETY: `entry` is a function this kernel's Jit compiled from `build` (or
        // `build_by_control`) for this request and layout, with the SystemV signature (a, b,
        // c, dst, vectors); it calls nothing but libm's `fma` (without an FMA instruction),
        // and only when built by `build`, whose kernels run in the default MXCSR
        // (`rounds_by_control` never holds for them: nearest-even, no flush-to-zero, as Rust
        // assumes); `build_by_control` kernels call nothing and run in their mode.
        // `self._jit` keeps its code memory alive. `vector_count` proved that every operand
        // buffer and the destination hold exactly `vectors` vectors of the request in this
        // layout, and the kernel reads and writes only those bytes, reading only the operands
        // the operation takes. `dst` comes from an exclusive borrow, so no operand overlaps it.
        let args = [a as usize, b as usize, c as usize, dst as usize, vectors];
        unsafe { host::call_kernel(entry, args, self.control) };
        Ok(())
    }
}

fn compile_error(request: &ArithRequest, why: String) -> JitError {
    JitError::Compile {
        request: request.to_string(),
        why,
    }
}

/// Compiles (or finds in the Jit's arithmetic cache) the kernel of a resolved request and
/// layout.
fn entry_point(
    jit: &Jit,
    request: &ArithRequest,
    layout: Layout,
    by_control: bool,
) -> Result<usize, JitError> {
    let inner = &jit.inner;
    let key = (*request, layout, by_control);
    if let Some(&addr) = jit::lock(&inner.arith_cache).get(&key) {
        return Ok(addr);
    }
    let isa = &inner.isa;
    let func = catch_unwind(AssertUnwindSafe(|| {
        build_kernel(
            request,
            layout,
            inner.static_mode,
            isa.frontend_config(),
            by_control,
        )
    }))
    .map_err(|panic| compile_error(request, crate::kernel::panic_message(&*panic)))?;
    let verify_ir = inner.verify_ir.load(std::sync::atomic::Ordering::Relaxed);
    let code = jit::compile_function(&**isa, func, verify_ir)
        .map_err(|why| compile_error(request, why))?;
    let mut memory = jit::lock(&inner.code);
    // Another thread may have compiled it meanwhile: keep the first.
    if let Some(&addr) = jit::lock(&inner.arith_cache).get(&key) {
        return Ok(addr);
    }
    let addr = memory
        .install(&[code.as_code()])
        .map_err(|why| compile_error(request, why))?[0];
    jit::lock(&inner.arith_cache).insert(key, addr);
    Ok(addr)
}

impl Jit {
    /// Compiles an arithmetic batch kernel named in the spelling of [`crate::arith`]
    /// (`mul_rtz(float4)`, `fma(double2)`); a name without a mode follows this JIT's static
    /// rounding mode. Kernels are cached in the JIT by request and layout.
    ///
    /// ```
    /// use clconv::jit::{Jit, X64Flags};
    /// use clconv::{Extensions, Rounding};
    /// // Under SELECT_ROUNDING_MODE rtn, a plain sub(float) rounds down: x - x is -0.
    /// let jit = Jit::with_options(X64Flags::Host, Extensions::default(), Rounding::Rtn).unwrap();
    /// let k = jit.compile_arith("sub(float)").unwrap();
    /// assert_eq!(k.request().to_string(), "sub_rtn(float)");
    /// let mut d = [0f32];
    /// k.run(&[&[1.5f32], &[1.5]], &mut d).unwrap();
    /// assert!(d[0] == 0.0 && d[0].is_sign_negative());
    /// ```
    pub fn compile_arith(&self, name: &str) -> Result<ArithKernel, ArithError> {
        let request = ArithRequest::parse(name)?;
        Ok(self.compile_arith_request(&request)?)
    }

    /// Compiles the kernel of a parsed arithmetic request (packed layout now, and the aligned
    /// one too for 3-component vectors).
    ///
    /// ```
    /// use clconv::arith::ArithRequest;
    /// use clconv::jit::Jit;
    /// let r = ArithRequest::parse("fma_rtp(float3)").unwrap();
    /// let k = Jit::new().unwrap().compile_arith_request(&r).unwrap();
    /// assert_eq!(k.request(), r);
    /// ```
    pub fn compile_arith_request(&self, request: &ArithRequest) -> Result<ArithKernel, JitError> {
        let request = request.resolved(self.inner.static_mode);
        let directed = self.directed_arith();
        let features = &self.inner.features;
        let by_control = rounds_by_control_with(features, &request, Rounding::Rte, directed);
        let packed = entry_point(self, &request, Layout::Packed, by_control)?;
        let aligned = if request.width() == Width::W3 {
            entry_point(self, &request, Layout::Aligned, by_control)?
        } else {
            packed
        };
        let control = if by_control {
            host::control_for(request.effective_rounding(Rounding::Rte))
        } else {
            host::default_control()
        };
        Ok(ArithKernel {
            _jit: self.clone(),
            request,
            packed,
            aligned,
            control,
        })
    }

    /// The Cranelift IR and machine code of an arithmetic kernel for this JIT's ISA.
    ///
    /// ```
    /// use clconv::arith::ArithRequest;
    /// use clconv::{jit::Jit, Layout};
    /// let r = ArithRequest::parse("add_rtz(float4)").unwrap();
    /// let d = Jit::new().unwrap().disassemble_arith(&r, Layout::Packed).unwrap();
    /// assert!(d.clif.contains("fadd"));
    /// assert!(d.code_size > 0);
    /// ```
    pub fn disassemble_arith(
        &self,
        request: &ArithRequest,
        layout: Layout,
    ) -> Result<Disassembly, JitError> {
        disassemble(
            &*self.inner.isa,
            request,
            layout,
            self.inner.static_mode,
            self.directed_arith(),
        )
    }

    /// Chooses how arithmetic kernels compiled from now on round in rtz, rtp and rtn
    /// ([`DirectedArith`]; the default is [`DirectedArith::RoundingControl`]). Kernels compiled
    /// before keep theirs; both kinds are cached side by side.
    ///
    /// ```
    /// use clconv::arith::ArithRequest;
    /// use clconv::arith_kernel::DirectedArith;
    /// use clconv::{jit::Jit, Layout};
    /// let jit = Jit::new().unwrap();
    /// let r = ArithRequest::parse("mul_rtz(float4)").unwrap();
    /// let native = jit.disassemble_arith(&r, Layout::Packed).unwrap();
    /// jit.set_directed_arith(DirectedArith::ExactSequences);
    /// let exact = jit.disassemble_arith(&r, Layout::Packed).unwrap();
    /// assert!(native.code_size < exact.code_size);
    /// ```
    pub fn set_directed_arith(&self, directed: DirectedArith) {
        let sequences = directed == DirectedArith::ExactSequences;
        self.inner
            .arith_sequences
            .store(sequences, std::sync::atomic::Ordering::Relaxed);
    }

    /// How arithmetic kernels compiled now round in rtz, rtp and rtn
    /// ([`Jit::set_directed_arith`]).
    pub fn directed_arith(&self) -> DirectedArith {
        if self
            .inner
            .arith_sequences
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            DirectedArith::ExactSequences
        } else {
            DirectedArith::RoundingControl
        }
    }
}

/// Builds and compiles `request`'s kernel for `isa` with Cranelift's disassembly, without
/// loading it: for any target, including ones this machine cannot run.
///
/// ```
/// use clconv::arith::ArithRequest;
/// use clconv::{arith_kernel, Layout, Rounding};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = ArithRequest::parse("sqrt_rtn(double2)").unwrap();
/// let d = arith_kernel::disassemble(&*isa, &r, Layout::Packed, Rounding::Rte, Default::default())
///     .unwrap();
/// assert!(d.asm.contains("sqrt"));
/// ```
pub fn disassemble(
    isa: &dyn TargetIsa,
    request: &ArithRequest,
    layout: Layout,
    static_mode: Rounding,
    directed: DirectedArith,
) -> Result<Disassembly, JitError> {
    let by_control = rounds_by_control(isa, request, static_mode, directed);
    let func = build_kernel(
        request,
        layout,
        static_mode,
        isa.frontend_config(),
        by_control,
    );
    jit::disassemble_function(isa, func).map_err(|why| compile_error(request, why))
}
