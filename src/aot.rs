//! Ahead-of-time objects: batch kernels compiled for any target into a relocatable object file
//! (ELF for clconv's Linux targets), with a C header, for C programs to link.
//!
//! Each request added to an [`ObjectBuilder`] becomes one C function,
//! `void clconv_<name>(const void *src, void *dst, size_t count)` (typed pointers in the
//! header), named by [`symbol_name`]: `convert_uchar4_sat_rte(float4)` is
//! `clconv_convert_uchar4_sat_rte_float4`. `count` is the number of OpenCL values (vectors)
//! in each buffer, in the packed layout (a 3-component vector takes 3 elements;
//! [`ObjectBuilder::add_aligned`] adds the aligned layout's variant). Buffers hold raw
//! little-endian elements, as everywhere in clconv (on big-endian s390x too: the header says
//! so there). Any count works, 0 included, with no alignment or padding asked of the caller.
//!
//! # What an entry point is
//!
//! Three functions in the object per request:
//! - `<symbol>.kernel` (local): the batch kernel [`crate::kernel::build_tier`] builds, the
//!   JIT's code for the same target: it converts whole granules only ([`Built::granule`]).
//! - `<symbol>.body` (local; the entry point itself where no trampoline is needed): Cranelift
//!   IR that calls the kernel on the whole granules of the buffers in place, then, for the
//!   `count % granule` vectors left, copies them (8 bytes at a time, then bytes) into a zeroed
//!   stack slot of one granule (2 KiB at most), calls the kernel on it and copies the
//!   results back out (no libc `memcpy`): what [`crate::kernel::run_in_granules`] does for
//!   the JIT. So the caller's buffers are read and written exactly over the `count` values.
//! - `<symbol>` (exported): a hand-assembled trampoline that gives the kernel the
//!   floating-point environment it was compiled for and gives the caller back its own, so no
//!   caller's mode leaks in and none leaks out:
//!   - x86-64: saves MXCSR, loads the kernel's (every exception masked, no flush-to-zero or
//!     denormals-are-zero, and the rounding control of [`Built::rounding_control`]: nearest-even
//!     except for the table's `mxcsr` rows, directed int -> float and double -> float, which
//!     convert with one instruction in the conversion's mode), calls the body, restores the
//!     caller's MXCSR (its exception flags too: the kernel's do not leak).
//!   - aarch64: saves FPCR and FPSR, sets FPCR to the kernel's (no flush-to-zero, no default
//!     NaN, no traps, and RMode: nearest-even except for the table's `fpcr` rows, directed
//!     int -> float and double -> float, which convert with one instruction in the
//!     conversion's mode), calls the body, restores both.
//!   - riscv64 with V (`riscv64-v`): saves `fcsr` and zeroes it (`frm` nearest-even, flags
//!     clear) around the call: the vector floating-point instructions Cranelift emits
//!     (`vfadd`, `vfcvt.f.x`, `vfncvt.f.f`, ...) round by the dynamic `frm`.
//!   - riscv64 without V: no trampoline. Every scalar floating-point instruction Cranelift
//!     0.135 emits encodes its rounding mode statically (RNE, or RTZ for the float -> int
//!     conversions), and RISC-V has no flush-to-zero, so the caller's `frm` is never read; the
//!     only trace a call leaves is exception flags accrued in `fflags`.
//!   - s390x: saves the FPC register, sets it to 0 (round to nearest-even, IEEE traps off)
//!     around the call: Cranelift's s390x `fdemote` and arithmetic round by the FPC's mode.
//!
//! The object is position-independent (Cranelift's `is_pic`), so it links into executables,
//! PIE or not, and shared libraries. Only the x86-64 baseline without SSE4.1 references
//! anything outside it: Cranelift calls libm's `ceilf`, `floorf`, `truncf`, `nearbyintf` (and
//! their `double` versions) where it has no rounding instruction, so link with `-lm` there
//! (the header says so when it is the case). `nearbyint` rounds by MXCSR, which the entry
//! point has set to nearest-even for every kernel that rounds that way.
//!
//! ```
//! # #[cfg(feature = "cross-target")] {
//! use clconv::aot::{symbol_name, ObjectBuilder};
//! use clconv::kernel::Tier;
//! use clconv::target::Target;
//! use clconv::{Extensions, Request};
//! let r = Request::parse("convert_uchar4_sat_rte(float4)", Extensions::default()).unwrap();
//! assert_eq!(symbol_name(&r), "clconv_convert_uchar4_sat_rte_float4");
//! let mut object = ObjectBuilder::new(Target::Aarch64).unwrap();
//! assert_eq!(object.add(&r, Tier::Optimised).unwrap(), "clconv_convert_uchar4_sat_rte_float4");
//! assert_eq!(object.add(&r, Tier::Quick).unwrap(), "clconv_convert_uchar4_sat_rte_float4_quick");
//! let out = object.finish().unwrap();
//! assert!(out.object.starts_with(b"\x7fELF"));
//! assert!(out.header.contains(
//!     "void clconv_convert_uchar4_sat_rte_float4(const float *src, uint8_t *dst, size_t count);"
//! ));
//! assert_eq!(out.symbols.len(), 2);
//! # }
//! ```
//!
//! [`Built::granule`]: crate::kernel::Built::granule
//! [`Built::rounding_control`]: crate::kernel::Built::rounding_control

use crate::buffer::bytes_per_vector;
use crate::kernel::{self, counted_loop, Tier};
use crate::mx::MxRequest;
use crate::request::Request;
use crate::table::{Arch, IsaFeatures, TableError};
use crate::target::{Target, TargetError};
use crate::types::{Layout, Rounding, ScalarType, Width};
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, Endianness, Function, InstBuilder, LibCall, MemFlagsData, Signature,
    StackSlotData, StackSlotKind, UserFuncName, Value,
};
use cranelift_codegen::isa::{self, OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module, ModuleReloc, ModuleRelocTarget};
use cranelift_object::ObjectModule;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why an object could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AotError {
    /// Cranelift could not be set up for the target.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The lowering tables did not give a recipe.
    #[error("no recipe for {request}: {error}")]
    Table {
        /// The request.
        request: String,
        /// The table's error.
        error: TableError,
    },
    /// Cranelift failed to compile one of the object's functions.
    #[error("{request} does not compile for {target}: {why}")]
    Compile {
        /// The request (or the helper) being compiled.
        request: String,
        /// The target's name.
        target: String,
        /// Cranelift's message, or the panic it raised.
        why: String,
    },
    /// The request traps (WebAssembly's `trunc`), and an AOT entry point has no way to report
    /// where yet.
    #[error("{request} traps on NaN and out-of-range values, and AOT entry points cannot report a trap yet: compile the saturating form (`_sat`) or use the JIT, whose kernels report the first trapping element")]
    Traps {
        /// The request.
        request: String,
    },
    /// The same entry point was added twice.
    #[error("{symbol} is already in the object: each request goes in once per tier and layout")]
    Duplicate {
        /// The symbol.
        symbol: String,
    },
    /// An earlier [`ObjectBuilder::add`] failed after it had changed the object (which no
    /// known request does): the object is unusable.
    #[error("the object is unusable: {why}")]
    Broken {
        /// What went wrong.
        why: String,
    },
    /// The target is not one clconv writes objects for: Linux (ELF) only, the host included
    /// (its entry points follow the System V conventions the trampolines assume).
    #[error("clconv::aot writes ELF objects for Linux targets, not for {target} ({triple})")]
    Unsupported {
        /// The target's name.
        target: String,
        /// Its triple.
        triple: String,
    },
    /// The object writer (cranelift-object) failed.
    #[error("cannot write the object file for {target}: {why}")]
    Object {
        /// The target's name.
        target: String,
        /// cranelift-object's message.
        why: String,
    },
}

/// The C symbol of `request`'s entry point: `clconv_` and the canonical name with `)` and
/// spaces dropped and every other character but letters and digits (`(`, and a chain's `.`
/// and `,`) turned into `_`. [`ObjectBuilder::add`] appends `_quick` for the quick tier and
/// [`ObjectBuilder::add_aligned`] `_aligned` for the aligned layout.
///
/// ```
/// use clconv::{aot::symbol_name, Extensions, Request};
/// let r = Request::parse("_Z20convert_int4_sat_rteDv4_f", Extensions::default()).unwrap();
/// assert_eq!(symbol_name(&r), "clconv_convert_int4_sat_rte_float4");
/// let r = Request::parse("as_float(uint)", Extensions::default()).unwrap();
/// assert_eq!(symbol_name(&r), "clconv_as_float_uint");
/// ```
pub fn symbol_name(request: &Request) -> String {
    let name: String = request
        .to_string()
        .chars()
        .filter(|&c| c != ')' && c != ' ')
        // A chain's text has `.`, `,` and nested `(`: every one becomes `_`.
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("clconv_{name}")
}

/// What the header says of one entry point.
struct Entry {
    symbol: String,
    request: Request,
    layout: Layout,
    /// The tier asked for (it names the symbol).
    tier: Tier,
    /// The tier compiled: the optimised one where the quick one does not compile.
    tier_built: Tier,
    granule: usize,
    rounding_control: Rounding,
    recipe: &'static str,
    row: String,
}

/// Builds one object file of entry points for one target: [`ObjectBuilder::add`] each request,
/// then [`ObjectBuilder::finish`]. See the [module documentation](self).
pub struct ObjectBuilder {
    target: Target,
    /// The optimised tier's ISA (position-independent), also the entry points'.
    isa: OwnedTargetIsa,
    /// The quick tier's, made when first needed.
    quick_isa: Option<OwnedTargetIsa>,
    module: ObjectModule,
    fctx: FunctionBuilderContext,
    entries: Vec<Entry>,
    /// The MX and NVFP4 block entry points ([`ObjectBuilder::add_blocks`]).
    block_entries: Vec<BlockEntry>,
    names: HashSet<String>,
    /// libm functions the kernels call (x86-64 without SSE4.1).
    libm: Vec<&'static str>,
    next_index: u32,
    /// Why the object is unusable ([`AotError::Broken`]), if it is.
    broken: Option<String>,
    /// Whether kernels may take the rows that round by the control (`mxcsr`, `fpcr`).
    rounding_control: bool,
}

impl ObjectBuilder {
    /// An empty object for `target` (for another architecture than the host's, clconv's
    /// `cross-target` feature must be on: an [`AotError::Target`] says so otherwise). Every
    /// named target is Linux; [`Target::Host`] is refused ([`AotError::Unsupported`]) on
    /// other systems.
    pub fn new(target: Target) -> Result<ObjectBuilder, AotError> {
        let isa = position_independent(target, &*target.isa()?)?;
        let triple = isa.triple();
        if triple.binary_format != target_lexicon::BinaryFormat::Elf
            || triple.operating_system != target_lexicon::OperatingSystem::Linux
        {
            return Err(AotError::Unsupported {
                target: target.name().into(),
                triple: triple.to_string(),
            });
        }
        let object_err = |why: String| AotError::Object {
            target: target.name().into(),
            why,
        };
        let builder =
            cranelift_object::ObjectBuilder::new(isa.clone(), "clconv", Box::new(libcall_name))
                .map_err(|e| object_err(e.to_string()))?;
        Ok(ObjectBuilder {
            target,
            isa,
            quick_isa: None,
            module: ObjectModule::new(builder),
            fctx: FunctionBuilderContext::new(),
            entries: Vec::new(),
            block_entries: Vec::new(),
            names: HashSet::new(),
            libm: Vec::new(),
            next_index: 0,
            broken: None,
            rounding_control: true,
        })
    }

    /// Entry points added from now on take the table rows that round by themselves, the ones
    /// code lowered into a caller's own function takes ([`Lowering`](crate::lower::Lowering)),
    /// never the `mxcsr`/`fpcr` rows that round by the control: every such kernel runs in
    /// nearest-even. What the test suite uses to run those rows' machine code under QEMU; the
    /// results are the same, only slower.
    pub fn without_rounding_control(mut self) -> ObjectBuilder {
        self.rounding_control = false;
        self
    }

    /// The target the object is for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Adds one entry point for `request` (packed layout, static mode rte). Returns the
    /// symbol name: [`symbol_name`] for [`Tier::Optimised`], and the same with `_quick`
    /// appended for [`Tier::Quick`] (the JIT's quick code: less optimised, converts the same),
    /// so both tiers of a request can sit in one object. Adding the same request and tier
    /// twice is an [`AotError::Duplicate`].
    pub fn add(&mut self, request: &Request, tier: Tier) -> Result<String, AotError> {
        self.add_layout(request, Layout::Packed, tier)
    }

    /// [`ObjectBuilder::add`] for the aligned layout (a 3-component vector takes 4 elements,
    /// the last padding: ignored in the source, written as zero in the destination): the
    /// symbol has `_aligned` appended (before `_quick`). For other widths both layouts are the
    /// same bytes.
    pub fn add_aligned(&mut self, request: &Request, tier: Tier) -> Result<String, AotError> {
        self.add_layout(request, Layout::Aligned, tier)
    }

    fn add_layout(
        &mut self,
        request: &Request,
        layout: Layout,
        tier: Tier,
    ) -> Result<String, AotError> {
        let mut symbol = symbol_name(request);
        if layout == Layout::Aligned {
            symbol.push_str("_aligned");
        }
        if tier == Tier::Quick {
            symbol.push_str("_quick");
        }
        if self.names.contains(&symbol) {
            return Err(AotError::Duplicate { symbol });
        }
        if let Some(why) = &self.broken {
            return Err(AotError::Broken { why: why.clone() });
        }
        if let Request::Convert(c) = request {
            if c.rules().traps() {
                return Err(AotError::Traps {
                    request: request.to_string(),
                });
            }
        }
        let index = self.next_index;
        self.next_index += 1;
        // Everything that can fail (the table, Cranelift) happens before the object gets any
        // of the entry point's functions, so an error leaves the object as it was.
        let (built, kernel, tier_built) = match self.kernel(request, layout, tier, index) {
            Err(AotError::Compile { .. }) if tier == Tier::Quick => {
                // As the JIT does: Cranelift 0.135 cannot lower a few vector patterns without
                // its optimisation passes; those requests get the optimised kernel.
                let (built, kernel) = self.kernel(request, layout, Tier::Optimised, index)?;
                (built, kernel, Tier::Optimised)
            }
            result => {
                let (built, kernel) = result?;
                (built, kernel, tier)
            }
        };
        let sig = kernel::signature(self.isa.default_call_conv());
        let env = self.env();
        let trampoline = trampoline(env, mode_word(env, built.rounding_control));
        let result = self.define_entry(
            &symbol, &sig, request, kernel, trampoline, &built, layout, index,
        );
        if let Err(e) = &result {
            self.broken = Some(format!("adding {symbol} failed half-way: {e}"));
        }
        result?;
        self.names.insert(symbol.clone());
        self.entries.push(Entry {
            symbol: symbol.clone(),
            request: *request,
            layout,
            tier,
            tier_built,
            granule: built.granule,
            rounding_control: built.rounding_control,
            recipe: built.row.recipe.name,
            row: format!("{}:{}", built.row.file, built.row.line),
        });
        Ok(symbol)
    }

    /// Builds and compiles `request`'s kernel in `tier`, checking the libcalls it makes.
    fn kernel(
        &mut self,
        request: &Request,
        layout: Layout,
        tier: Tier,
        index: u32,
    ) -> Result<(kernel::Built, Context), AotError> {
        let isa = match tier {
            Tier::Optimised => self.isa.clone(),
            Tier::Quick => match &self.quick_isa {
                Some(isa) => isa.clone(),
                None => {
                    let isa = position_independent(self.target, &*self.target.quick_isa()?)?;
                    self.quick_isa = Some(isa.clone());
                    isa
                }
            },
        };
        let what = request.to_string();
        let table_error = |error| AotError::Table {
            request: what.clone(),
            error,
        };
        let mut features = IsaFeatures::of(&*isa).map_err(table_error)?;
        if !self.rounding_control {
            features = features.without_rounding_control();
        }
        let built = kernel::build_tier_with_features(
            request,
            layout,
            Rounding::Rte,
            &*isa,
            &features,
            index,
            tier,
        )
        .map_err(table_error)?;
        let ctx = self.compile(built.func.clone(), &*isa, &what)?;
        let libcalls = libcalls(&ctx);
        for &libcall in &libcalls {
            if libm_name(libcall).is_none() {
                return Err(self.compile_error(
                    &what,
                    format!(
                        "the code calls Cranelift's helper {libcall:?}, which the object \
                         cannot provide"
                    ),
                ));
            }
            let nearest = matches!(libcall, LibCall::NearestF32 | LibCall::NearestF64);
            if nearest && built.rounding_control != Rounding::Rte {
                // libm's nearbyint would round by the kernel's directed mode (no table row
                // makes such a kernel; the matrix test checks it).
                return Err(self.compile_error(
                    &what,
                    "the kernel runs in a directed rounding mode and calls nearbyint".into(),
                ));
            }
        }
        Ok((built, ctx))
    }

    /// Declares and defines an entry point's functions: the compiled kernel, the body and the
    /// trampoline.
    #[allow(clippy::too_many_arguments)]
    fn define_entry(
        &mut self,
        symbol: &str,
        sig: &Signature,
        request: &Request,
        kernel: Context,
        trampoline: Option<Trampoline>,
        built: &kernel::Built,
        layout: Layout,
        index: u32,
    ) -> Result<(), AotError> {
        let what = request.to_string();
        let kernel_id = self.declare(&format!("{symbol}.kernel"), Linkage::Local, sig)?;
        self.define(kernel_id, &kernel)?;
        for libcall in libcalls(&kernel) {
            let name = libm_name(libcall).expect("checked when compiled");
            if !self.libm.contains(&name) {
                self.libm.push(name);
            }
        }
        let (body_name, body_linkage) = match trampoline {
            Some(_) => (format!("{symbol}.body"), Linkage::Local),
            None => (symbol.to_string(), Linkage::Export),
        };
        let body_id = self.declare(&body_name, body_linkage, sig)?;
        let body = self.build_body(
            kernel_id,
            sig,
            index,
            built.granule,
            bytes_per_vector(request.src(), layout),
            bytes_per_vector(request.dst(), layout),
        );
        let isa = self.isa.clone();
        let body = self.compile(body, &*isa, &what)?;
        self.define(body_id, &body)?;
        if let Some(t) = trampoline {
            self.define_trampoline(symbol, sig, body_id, &t)?;
        }
        Ok(())
    }

    /// Defines the exported `symbol` as the trampoline `t` around the body `body_id`.
    fn define_trampoline(
        &mut self,
        symbol: &str,
        sig: &Signature,
        body_id: FuncId,
        t: &Trampoline,
    ) -> Result<(), AotError> {
        let id = self.declare(symbol, Linkage::Export, sig)?;
        let reloc = ModuleReloc {
            offset: t.call_offset,
            kind: t.kind,
            name: ModuleRelocTarget::from(body_id),
            addend: t.addend,
        };
        self.module
            .define_function_bytes(id, 16, &t.bytes, &[reloc])
            .map_err(|e| self.object_error(e))
    }

    /// The object file's bytes, the C header declaring every entry point, and the symbols
    /// with their requests, in the order they were added.
    pub fn finish(self) -> Result<AotOutput, AotError> {
        if let Some(why) = self.broken {
            return Err(AotError::Broken { why });
        }
        let header = self.header();
        let symbols = self
            .entries
            .iter()
            .map(|e| (e.symbol.clone(), e.request))
            .collect();
        let block_symbols = self
            .block_entries
            .iter()
            .map(|e| (e.symbol.clone(), e.request))
            .collect();
        let target = self.target;
        let object = self.module.finish().emit().map_err(|e| AotError::Object {
            target: target.name().into(),
            why: e.to_string(),
        })?;
        Ok(AotOutput {
            object,
            header,
            symbols,
            block_symbols,
        })
    }

    /// What the target's entry points do with the floating-point environment.
    fn env(&self) -> FpEnv {
        match Arch::of(&*self.isa).expect("every clconv target has a table") {
            Arch::X86_64 => FpEnv::Mxcsr,
            Arch::Aarch64 => FpEnv::Fpcr,
            Arch::Riscv64 if has_flag(&*self.isa, "has_v") => FpEnv::Fcsr,
            Arch::Riscv64 => FpEnv::StaticRounding,
            Arch::S390x => FpEnv::Fpc,
        }
    }

    fn object_error(&self, e: cranelift_module::ModuleError) -> AotError {
        AotError::Object {
            target: self.target.name().into(),
            why: e.to_string(),
        }
    }

    fn declare(
        &mut self,
        name: &str,
        linkage: Linkage,
        sig: &Signature,
    ) -> Result<FuncId, AotError> {
        self.module
            .declare_function(name, linkage, sig)
            .map_err(|e| self.object_error(e))
    }

    fn compile_error(&self, what: &str, why: String) -> AotError {
        AotError::Compile {
            request: what.to_string(),
            target: self.target.name().into(),
            why,
        }
    }

    /// Compiles `func` for `isa` (Cranelift's errors and panics both as
    /// [`AotError::Compile`]).
    fn compile(
        &self,
        func: Function,
        isa: &dyn TargetIsa,
        what: &str,
    ) -> Result<Context, AotError> {
        // IR of a type shape the backend has no rule for is an error, not a panic in
        // instruction selection.
        crate::ir_types::check(&func).map_err(|why| self.compile_error(what, why))?;
        let mut ctx = Context::for_function(func);
        let compiled = catch_unwind(AssertUnwindSafe(|| {
            ctx.compile(isa, &mut ControlPlane::default())
                .map(|_| ())
                .map_err(|e| format!("{:?}", e.inner))
        }));
        match compiled {
            Ok(Ok(())) => Ok(ctx),
            Ok(Err(why)) => Err(self.compile_error(what, why)),
            Err(panic) => Err(self.compile_error(what, kernel::panic_message(&*panic))),
        }
    }

    /// Defines the function `id` as the code compiled in `ctx`, with its relocations (calls
    /// to the object's other functions, Cranelift's libcalls).
    fn define(&mut self, id: FuncId, ctx: &Context) -> Result<(), AotError> {
        let code = ctx.compiled_code().expect("compiled");
        let relocs: Vec<ModuleReloc> = code
            .buffer
            .relocs()
            .iter()
            .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, id))
            .collect();
        // Loops start on a 16-byte boundary at least, as compilers align functions.
        let alignment = u64::from(code.buffer.alignment).max(16);
        self.module
            .define_function_bytes(id, alignment, code.buffer.data(), &relocs)
            .map_err(|e| self.object_error(e))
    }

    /// The body of an entry point (see the module documentation): the kernel on the whole
    /// granules in place, then on one zero-padded granule for the tail.
    fn build_body(
        &mut self,
        kernel_id: FuncId,
        sig: &Signature,
        index: u32,
        granule: usize,
        src_bytes: usize,
        dst_bytes: usize,
    ) -> Function {
        let mut func = Function::with_name_signature(UserFuncName::user(1, index), sig.clone());
        let kernel = self.module.declare_func_in_func(kernel_id, &mut func);
        let mut b = FunctionBuilder::new(&mut func, &mut self.fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let (src, dst, count) = (params[0], params[1], params[2]);
        let granule = granule.max(1);
        let exit = b.create_block();
        if granule == 1 {
            // Every vector is a whole granule: the kernel converts them all (0 included).
            b.ins().call(kernel, &[src, dst, count]);
            b.ins().jump(exit, &[]);
        } else {
            let rest = if granule.is_power_of_two() {
                b.ins().band_imm_u(count, granule as i64 - 1)
            } else {
                let g = b.ins().iconst(types::I64, granule as i64);
                b.ins().urem(count, g)
            };
            let whole = b.ins().isub(count, rest);
            let (call_whole, after) = (b.create_block(), b.create_block());
            b.ins().brif(whole, call_whole, &[], after, &[]);

            b.switch_to_block(call_whole);
            b.ins().call(kernel, &[src, dst, whole]);
            b.ins().jump(after, &[]);

            b.switch_to_block(after);
            let tail = b.create_block();
            b.ins().brif(rest, tail, &[], exit, &[]);

            b.switch_to_block(tail);
            let (in_size, out_size) = (granule * src_bytes, granule * dst_bytes);
            let slot_in = b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                in_size as u32,
                4,
            ));
            let slot_out = b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                out_size as u32,
                4,
            ));
            let padded_in = b.ins().stack_addr(types::I64, slot_in, 0);
            let padded_out = b.ins().stack_addr(types::I64, slot_out, 0);
            zero_bytes(&mut b, padded_in, in_size);
            let done_in = b.ins().imul_imm_u(whole, src_bytes as i64);
            let from = b.ins().iadd(src, done_in);
            let rest_in = b.ins().imul_imm_u(rest, src_bytes as i64);
            copy_bytes(&mut b, from, padded_in, rest_in);
            let g = b.ins().iconst(types::I64, granule as i64);
            b.ins().call(kernel, &[padded_in, padded_out, g]);
            let done_out = b.ins().imul_imm_u(whole, dst_bytes as i64);
            let to = b.ins().iadd(dst, done_out);
            let rest_out = b.ins().imul_imm_u(rest, dst_bytes as i64);
            copy_bytes(&mut b, padded_out, to, rest_out);
            b.ins().jump(exit, &[]);
        }
        b.switch_to_block(exit);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(self.isa.frontend_config());
        func
    }

    /// The C header: one declaration per entry point, each with a comment saying what it does.
    fn header(&self) -> String {
        let env = self.env();
        let mut guard_hash: u64 = 0xcbf2_9ce4_8422_2325;
        let symbols = self.entries.iter().map(|e| &e.symbol);
        for symbol in symbols.chain(self.block_entries.iter().map(|e| &e.symbol)) {
            for byte in symbol.bytes().chain([0]) {
                guard_hash = (guard_hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        let guard = format!("CLCONV_AOT_{:016X}_H", guard_hash);
        let mut h = String::new();
        let triple = self.isa.triple().to_string();
        let _ = writeln!(
            h,
            "/* Generated by clconv {} (clconv::aot, `clconv emit`): OpenCL C conversions as C \
             functions\n * for {} ({triple}), defined in the object file generated with this \
             header.\n *",
            env!("CARGO_PKG_VERSION"),
            self.target.name(),
        );
        let _ = writeln!(
            h,
            " * Each function converts `count` OpenCL values (vectors) from src to dst: element \
             i of dst is\n * the conversion of element i of src, exactly as the OpenCL C \
             specification defines it\n * (clconv's SPEC.md). Any count works, 0 included; the \
             buffers need no alignment and no\n * padding beyond the count's values, and must \
             not overlap."
        );
        if self.isa.endianness() == Endianness::Big {
            let _ = writeln!(
                h,
                " *\n * NOTE: the buffers hold LITTLE-ENDIAN elements, as everywhere in clconv, \
                 although {} is\n * big-endian: byte-swap multi-byte elements into src and out \
                 of dst.",
                self.target.name()
            );
        }
        if !self.libm.is_empty() {
            let _ = writeln!(
                h,
                " *\n * Link with -lm: the kernels call libm's {} (Cranelift has no rounding \
                 instruction\n * without SSE4.1).",
                self.libm.join(", ")
            );
        }
        let _ = writeln!(h, " */");
        let _ = writeln!(h, "#ifndef {guard}\n#define {guard}\n");
        let _ = writeln!(h, "#include <stddef.h>\n#include <stdint.h>\n");
        let _ = writeln!(h, "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n");
        for e in &self.entries {
            let (src, dst) = (e.request.src(), e.request.dst());
            let _ = writeln!(h, "/* {}", e.request);
            let _ = writeln!(
                h,
                " * src: count {} values ({});\n * dst: count {} values ({}).",
                src,
                describe_vector(src, e.layout),
                dst,
                describe_vector(dst, e.layout),
            );
            let _ = writeln!(h, " * {}", mode_note(env, e.rounding_control));
            let _ = writeln!(
                h,
                " * Kernel: recipe {} ({}), {} tier{}, {} vector{} per granule. */",
                e.recipe,
                e.row,
                e.tier_built.name(),
                if e.tier_built == e.tier {
                    ""
                } else {
                    " (Cranelift compiles this kernel only with its optimisation passes)"
                },
                e.granule,
                if e.granule == 1 { "" } else { "s" }
            );
            let _ = writeln!(
                h,
                "void {}(const {} *src, {} *dst, size_t count);\n",
                e.symbol,
                c_type(src.elem),
                c_type(dst.elem)
            );
        }
        for e in &self.block_entries {
            h.push_str(&self.block_declaration(e));
        }
        let _ = writeln!(h, "#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */");
        h
    }
}

// MX and NVFP4 block entry points
// ---------------------------------------------------------------------------------------------

/// What the header says of one block entry point.
struct BlockEntry {
    symbol: String,
    request: MxRequest,
}

/// The C symbol of an MX or NVFP4 block request's entry point ([`ObjectBuilder::add_blocks`]):
/// `clconv_` and the request's name with `)` dropped and `(` turned into `_`, as
/// [`symbol_name`] does for conversions.
///
/// ```
/// use clconv::{aot::block_symbol_name, mx::MxRequest};
/// let r = MxRequest::parse("convert_mxfp4e2m1x2_rtp(bfloat)").unwrap();
/// assert_eq!(block_symbol_name(&r), "clconv_convert_mxfp4e2m1x2_rtp_bfloat");
/// ```
pub fn block_symbol_name(request: &MxRequest) -> String {
    let name: String = request
        .to_string()
        .chars()
        .filter(|&c| c != ')')
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("clconv_{name}")
}

impl ObjectBuilder {
    /// Adds one entry point for the MX or NVFP4 block request `request` ([`crate::mx`]): its
    /// batch kernel, the JIT's ([`crate::mx_kernel::build`]; the optimised tier), with a body
    /// that takes any number of values. Returns the symbol, [`block_symbol_name`]. The C
    /// functions, `count` values in each (a last, shorter block is quantised as one padded
    /// with zeros, as the JIT does; FP4 packed two to a byte, low nibble first):
    ///
    /// ```c
    /// void convert_mx<e>(const V *values, uint8_t *elements, uint8_t *scales, size_t count);
    /// void convert_<v>(mx<e>)(const uint8_t *elements, const uint8_t *scales, V *values, size_t count);
    /// int convert_nvfp4(const V *values, uint8_t *elements, uint8_t *scales, size_t count,
    ///                   float tensor_scale);
    /// int convert_<v>(nvfp4)(const uint8_t *elements, const uint8_t *scales, V *values,
    ///                        size_t count, float tensor_scale);
    /// ```
    ///
    /// The NVFP4 functions return 0, or 1 without reading or writing a buffer when the tensor
    /// scale is not a positive finite float (what [`MxRequest::check_tensor_scale`] refuses).
    ///
    /// ```
    /// # #[cfg(feature = "cross-target")] {
    /// use clconv::aot::ObjectBuilder;
    /// use clconv::mx::MxRequest;
    /// use clconv::target::Target;
    /// let mut object = ObjectBuilder::new(Target::Aarch64).unwrap();
    /// let r = MxRequest::parse("convert_nvfp4(float)").unwrap();
    /// assert_eq!(object.add_blocks(&r).unwrap(), "clconv_convert_nvfp4_float");
    /// let out = object.finish().unwrap();
    /// assert!(out.header.contains("int clconv_convert_nvfp4_float(const float *values, \
    ///     uint8_t *elements, uint8_t *scales, size_t count, float tensor_scale);"));
    /// assert_eq!(out.block_symbols, [("clconv_convert_nvfp4_float".to_string(), r)]);
    /// # }
    /// ```
    pub fn add_blocks(&mut self, request: &MxRequest) -> Result<String, AotError> {
        let symbol = block_symbol_name(request);
        if self.names.contains(&symbol) {
            return Err(AotError::Duplicate { symbol });
        }
        if let Some(why) = &self.broken {
            return Err(AotError::Broken { why: why.clone() });
        }
        let what = request.to_string();
        let index = self.next_index;
        self.next_index += 1;
        let isa = self.isa.clone();
        let features = IsaFeatures::of(&*isa).map_err(|error| AotError::Table {
            request: what.clone(),
            error,
        })?;
        let func = catch_unwind(AssertUnwindSafe(|| {
            crate::mx_kernel::build(request, features, isa.frontend_config())
        }))
        .map_err(|panic| self.compile_error(&what, kernel::panic_message(&*panic)))?
        .map_err(|e| self.compile_error(&what, e.to_string()))?;
        let mut func = func;
        func.name = UserFuncName::user(0, index);
        let kernel = self.compile(func, &*isa, &what)?;
        let libcalls = libcalls(&kernel);
        if let Some(libcall) = libcalls.iter().find(|&&l| libm_name(l).is_none()) {
            return Err(self.compile_error(
                &what,
                format!("the code calls Cranelift's helper {libcall:?}, which the object cannot provide"),
            ));
        }
        // Everything that can fail before the object changes has been done.
        let result = self.define_block_entry(&symbol, request, &kernel, index);
        if let Err(e) = &result {
            self.broken = Some(format!("adding {symbol} failed half-way: {e}"));
        }
        result?;
        for libcall in libcalls {
            let name = libm_name(libcall).expect("checked above");
            if !self.libm.contains(&name) {
                self.libm.push(name);
            }
        }
        self.names.insert(symbol.clone());
        self.block_entries.push(BlockEntry {
            symbol: symbol.clone(),
            request: *request,
        });
        Ok(symbol)
    }

    /// Declares and defines a block entry point's kernel, body and trampoline.
    fn define_block_entry(
        &mut self,
        symbol: &str,
        request: &MxRequest,
        kernel: &Context,
        index: u32,
    ) -> Result<(), AotError> {
        let what = request.to_string();
        let kernel_sig = crate::mx_kernel::signature(self.isa.default_call_conv());
        let kernel_id = self.declare(&format!("{symbol}.kernel"), Linkage::Local, &kernel_sig)?;
        self.define(kernel_id, kernel)?;
        let sig = block_entry_signature(self.isa.default_call_conv(), request);
        let env = self.env();
        let trampoline = trampoline(env, mode_word(env, Rounding::Rte));
        let (body_name, body_linkage) = match trampoline {
            Some(_) => (format!("{symbol}.body"), Linkage::Local),
            None => (symbol.to_string(), Linkage::Export),
        };
        let body_id = self.declare(&body_name, body_linkage, &sig)?;
        let body = self.build_block_body(kernel_id, &sig, request, index);
        let isa = self.isa.clone();
        let body = self.compile(body, &*isa, &what)?;
        self.define(body_id, &body)?;
        if let Some(t) = trampoline {
            self.define_trampoline(symbol, &sig, body_id, &t)?;
        }
        Ok(())
    }

    /// The body of a block entry point: the kernel on the whole blocks in place, then on one
    /// zero-padded block for the `count % block` values left; NVFP4's tensor scale checked
    /// and passed to the kernel through a stack slot.
    fn build_block_body(
        &mut self,
        kernel_id: FuncId,
        sig: &Signature,
        request: &MxRequest,
        index: u32,
    ) -> Function {
        let mut func = Function::with_name_signature(UserFuncName::user(1, index), sig.clone());
        let kernel = self.module.declare_func_in_func(kernel_id, &mut func);
        let mut b = FunctionBuilder::new(&mut func, &mut self.fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let p = b.block_params(entry).to_vec();
        let (a, bb, c, count) = (p[0], p[1], p[2], p[3]);
        let nvfp4 = request.is_nvfp4();
        let exit = b.create_block();
        // The tensor scale: positive and finite, else status 1 and no buffer touched.
        let t_at = if nvfp4 {
            let t = p[4];
            let zero = b.ins().f32const(0.0);
            let inf = b.ins().f32const(f32::INFINITY);
            let positive = b.ins().fcmp(FloatCC::GreaterThan, t, zero);
            let finite = b.ins().fcmp(FloatCC::LessThan, t, inf);
            let ok = b.ins().band(positive, finite);
            let (run, refuse) = (b.create_block(), b.create_block());
            b.ins().brif(ok, run, &[], refuse, &[]);
            b.switch_to_block(refuse);
            let one = b.ins().iconst(types::I32, 1);
            b.ins().return_(&[one]);
            b.switch_to_block(run);
            let slot =
                b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 4, 2));
            // Little-endian, as the kernel reads it (and every buffer): on s390x too.
            let at = b.ins().stack_addr(types::I64, slot, 0);
            b.ins().store(flags(), t, at, 0);
            Some(at)
        } else {
            None
        };
        // The kernel's pointers (a, b, c, d) for values, elements and scales at these
        // addresses; NVFP4's tensor scale behind the one its buffers leave free.
        let quantize = request.is_quantize();
        let pointers = |values: Value, elements: Value, scales: Value| -> [Value; 4] {
            match (quantize, t_at) {
                (true, t) => [values, t.unwrap_or(values), elements, scales],
                (false, t) => [elements, scales, values, t.unwrap_or(values)],
            }
        };
        // The C parameters: (values, elements, scales) to quantise, (elements, scales, values)
        // back.
        let (values, elements, scales) = if quantize { (a, bb, c) } else { (c, a, bb) };
        let block = request.block_len();
        let value_bytes = request.value().bytes();
        let rest = b.ins().band_imm_u(count, block as i64 - 1);
        let whole = b.ins().ushr_imm_u(count, block.trailing_zeros() as i64);
        let (call_whole, after) = (b.create_block(), b.create_block());
        b.ins().brif(whole, call_whole, &[], after, &[]);

        b.switch_to_block(call_whole);
        let [ka, kb, kc, kd] = pointers(values, elements, scales);
        b.ins().call(kernel, &[ka, kb, kc, kd, whole]);
        b.ins().jump(after, &[]);

        b.switch_to_block(after);
        let tail = b.create_block();
        b.ins().brif(rest, tail, &[], exit, &[]);

        b.switch_to_block(tail);
        let value_size = block * value_bytes;
        let element_size = request.element_bytes(block);
        let slot = |b: &mut FunctionBuilder, size: usize| {
            let s = b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                size as u32,
                4,
            ));
            b.ins().stack_addr(types::I64, s, 0)
        };
        let (padded_values, padded_elements, padded_scale) = (
            slot(&mut b, value_size),
            slot(&mut b, element_size),
            slot(&mut b, 8),
        );
        // Where the tail starts in each buffer, and its bytes.
        let done_values = b.ins().imul_imm_u(whole, value_size as i64);
        let values_at = b.ins().iadd(values, done_values);
        let done_elements = b.ins().imul_imm_u(whole, element_size as i64);
        let elements_at = b.ins().iadd(elements, done_elements);
        let scale_at = b.ins().iadd(scales, whole);
        let rest_values = b.ins().imul_imm_u(rest, value_bytes as i64);
        let rest_elements = if request.packed() {
            let plus = b.ins().iadd_imm_u(rest, 1);
            b.ins().ushr_imm_u(plus, 1)
        } else {
            rest
        };
        let one = b.ins().iconst(types::I64, 1);
        if quantize {
            zero_bytes(&mut b, padded_values, value_size);
            copy_bytes(&mut b, values_at, padded_values, rest_values);
        } else {
            zero_bytes(&mut b, padded_elements, element_size);
            copy_bytes(&mut b, elements_at, padded_elements, rest_elements);
            copy_bytes(&mut b, scale_at, padded_scale, one);
        }
        let [ka, kb, kc, kd] = pointers(padded_values, padded_elements, padded_scale);
        b.ins().call(kernel, &[ka, kb, kc, kd, one]);
        if quantize {
            copy_bytes(&mut b, padded_elements, elements_at, rest_elements);
            copy_bytes(&mut b, padded_scale, scale_at, one);
        } else {
            copy_bytes(&mut b, padded_values, values_at, rest_values);
        }
        b.ins().jump(exit, &[]);

        b.switch_to_block(exit);
        if nvfp4 {
            let ok = b.ins().iconst(types::I32, 0);
            b.ins().return_(&[ok]);
        } else {
            b.ins().return_(&[]);
        }
        b.seal_all_blocks();
        b.finalize(self.isa.frontend_config());
        func
    }

    /// The header's declaration of a block entry point, with its comment.
    fn block_declaration(&self, e: &BlockEntry) -> String {
        let r = &e.request;
        let value = c_type(r.value());
        let block = r.block_len();
        let (elements, element_bytes) = if r.packed() {
            (
                "FP4 E2M1 codes two to a byte, low nibble first",
                "(count + 1) / 2",
            )
        } else {
            ("one code a byte", "count")
        };
        let scale = if r.is_nvfp4() { "E4M3" } else { "E8M0" };
        let bits = if value == "float" {
            ""
        } else {
            " (their bits)"
        };
        let mut h = String::new();
        let what = if r.is_quantize() {
            format!(
                "quantises count {} values{bits} in blocks of {block}",
                r.value()
            )
        } else {
            format!(
                "count elements times their block's scale, rounded into {} values{bits}",
                r.value()
            )
        };
        let _ = writeln!(h, "/* {r}: {what}.");
        let _ = writeln!(h, " * elements: {elements} ({element_bytes} bytes);");
        let _ = writeln!(
            h,
            " * scales: one {scale} scale per block ((count + {}) / {block} bytes); a last, shorter\n \
             * block is taken as one padded with zeros.",
            block - 1
        );
        if r.is_nvfp4() {
            let _ = writeln!(
                h,
                " * tensor_scale: the tensor's float32 decode scale. Returns 0, or 1 without \
                 touching a\n * buffer when tensor_scale is not positive and finite."
            );
        }
        let _ = writeln!(
            h,
            " * Kernel: clconv's block kernel (src/mx_kernel.rs), optimised tier. */"
        );
        let (tensor, ret) = if r.is_nvfp4() {
            (", float tensor_scale", "int")
        } else {
            ("", "void")
        };
        let params = if r.is_quantize() {
            format!("const {value} *values, uint8_t *elements, uint8_t *scales")
        } else {
            format!("const uint8_t *elements, const uint8_t *scales, {value} *values")
        };
        let _ = writeln!(h, "{ret} {}({params}, size_t count{tensor});\n", e.symbol);
        h
    }
}

/// A block entry point's signature: three pointers and the count, then NVFP4's tensor scale
/// (F32) and its status (I32).
fn block_entry_signature(call_conv: isa::CallConv, request: &MxRequest) -> Signature {
    let mut sig = Signature::new(call_conv);
    for _ in 0..4 {
        sig.params.push(AbiParam::new(types::I64));
    }
    if request.is_nvfp4() {
        sig.params.push(AbiParam::new(types::F32));
        // C's int, extended to the register as the C ABIs (s390x, riscv64) ask.
        sig.returns.push(AbiParam::new(types::I32).sext());
    }
    sig
}

/// An object file and its header.
#[derive(Clone, Debug)]
pub struct AotOutput {
    /// The relocatable object file (ELF for clconv's targets).
    pub object: Vec<u8>,
    /// The C header declaring its entry points.
    pub header: String,
    /// Every conversion entry point's symbol and request, in the order they were added.
    pub symbols: Vec<(String, Request)>,
    /// Every block entry point's symbol and request ([`ObjectBuilder::add_blocks`]), in the
    /// order they were added.
    pub block_symbols: Vec<(String, MxRequest)>,
}

/// The libcalls the code compiled in `ctx` makes.
fn libcalls(ctx: &Context) -> Vec<LibCall> {
    use cranelift_codegen::ir::ExternalName;
    use cranelift_codegen::FinalizedRelocTarget;
    let code = ctx.compiled_code().expect("compiled");
    code.buffer
        .relocs()
        .iter()
        .filter_map(|r| match r.target {
            FinalizedRelocTarget::ExternalName(ExternalName::LibCall(libcall)) => Some(libcall),
            _ => None,
        })
        .collect()
}

/// The C names Cranelift's libcalls have in the object: libm's rounding functions, which
/// Cranelift's x86-64 backend calls without SSE4.1; the others no kernel calls.
fn libcall_name(libcall: LibCall) -> String {
    libm_name(libcall)
        .map(str::to_string)
        .unwrap_or_else(|| format!("__clconv_no_{libcall:?}"))
}

/// The libm function a libcall is, for those a conversion kernel may make.
fn libm_name(libcall: LibCall) -> Option<&'static str> {
    Some(match libcall {
        LibCall::CeilF32 => "ceilf",
        LibCall::CeilF64 => "ceil",
        LibCall::FloorF32 => "floorf",
        LibCall::FloorF64 => "floor",
        LibCall::TruncF32 => "truncf",
        LibCall::TruncF64 => "trunc",
        LibCall::NearestF32 => "nearbyintf",
        LibCall::NearestF64 => "nearbyint",
        _ => return None,
    })
}

/// The ISA of `target` with `is_pic` on (everything else as clconv sets it).
fn position_independent(target: Target, base: &dyn TargetIsa) -> Result<OwnedTargetIsa, AotError> {
    let err = |why: String| {
        AotError::Target(TargetError {
            target: target.name().into(),
            why,
        })
    };
    let mut shared = settings::builder();
    for v in base.flags().iter() {
        shared
            .set(v.name, &v.value_string())
            .map_err(|e| err(format!("{}: {e}", v.name)))?;
    }
    shared
        .set("is_pic", "true")
        .map_err(|e| err(e.to_string()))?;
    let mut builder = isa::lookup(base.triple().clone()).map_err(|e| err(e.to_string()))?;
    for v in base.isa_flags() {
        builder
            .set(v.name, &v.value_string())
            .map_err(|e| err(format!("{}: {e}", v.name)))?;
    }
    builder
        .finish(settings::Flags::new(shared))
        .map_err(|e| err(e.to_string()))
}

fn flags() -> MemFlagsData {
    MemFlagsData::new()
        .with_endianness(Endianness::Little)
        .with_notrap()
}

/// Stores zeros over `size` bytes at `at`: unrolled up to 64 bytes, else a loop of 8-byte
/// stores (a granule's slot takes up to 2 KiB: 128 `uchar16` vectors on x86-64 with AVX-512).
fn zero_bytes(b: &mut FunctionBuilder, at: Value, size: usize) {
    let words = size / 8;
    if size <= 64 {
        for i in 0..words {
            let zero = b.ins().iconst(types::I64, 0);
            b.ins().store(flags(), zero, at, (i * 8) as i32);
        }
    } else {
        let count = b.ins().iconst(types::I64, words as i64);
        counted_loop(b, count, IntCC::UnsignedLessThan, &mut |b, i| {
            let offset = b.ins().ishl_imm_u(i, 3);
            let p = b.ins().iadd(at, offset);
            let zero = b.ins().iconst(types::I64, 0);
            b.ins().store(flags(), zero, p, 0);
        });
    }
    for offset in words * 8..size {
        let zero = b.ins().iconst(types::I8, 0);
        b.ins().store(flags(), zero, at, offset as i32);
    }
}

/// Copies `len` bytes (a value) from `from` to `to`: 8 bytes at a time, then bytes.
fn copy_bytes(b: &mut FunctionBuilder, from: Value, to: Value, len: Value) {
    let words = b.ins().ushr_imm_u(len, 3);
    counted_loop(b, words, IntCC::UnsignedLessThan, &mut |b, i| {
        let offset = b.ins().ishl_imm_u(i, 3);
        let p = b.ins().iadd(from, offset);
        let q = b.ins().iadd(to, offset);
        let v = b.ins().load(types::I64, flags(), p, 0);
        b.ins().store(flags(), v, q, 0);
    });
    let done = b.ins().band_imm_u(len, !7);
    let (from, to) = (b.ins().iadd(from, done), b.ins().iadd(to, done));
    let bytes = b.ins().band_imm_u(len, 7);
    counted_loop(b, bytes, IntCC::UnsignedLessThan, &mut |b, i| {
        let p = b.ins().iadd(from, i);
        let q = b.ins().iadd(to, i);
        let v = b.ins().load(types::I8, flags(), p, 0);
        b.ins().store(flags(), v, q, 0);
    });
}

/// A hand-assembled entry point: its bytes and the call to relocate to the body.
struct Trampoline {
    bytes: Vec<u8>,
    call_offset: u32,
    kind: Reloc,
    addend: i64,
}

/// The control word the trampoline loads for a kernel of `rounding`: the MXCSR (x86-64) or the
/// FPCR (aarch64), the words the JIT's host code loads too; 0 elsewhere (fcsr and FPC are
/// always 0: those targets' kernels never round by the control).
fn mode_word(env: FpEnv, rounding: Rounding) -> u32 {
    match env {
        FpEnv::Mxcsr => crate::fp_control::mxcsr_for(rounding),
        FpEnv::Fpcr => crate::fp_control::fpcr_for(rounding),
        _ => 0,
    }
}

/// How a target's entry points give the kernel its floating-point environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FpEnv {
    /// x86-64: MXCSR set and restored.
    Mxcsr,
    /// aarch64: FPCR set, FPCR and FPSR restored.
    Fpcr,
    /// riscv64 with V: fcsr set and restored.
    Fcsr,
    /// riscv64 without V: every instruction names its rounding; no trampoline.
    StaticRounding,
    /// s390x: FPC set and restored.
    Fpc,
}

/// Whether the boolean ISA flag `name` is on.
fn has_flag(isa: &dyn TargetIsa, name: &str) -> bool {
    isa.isa_flags()
        .iter()
        .any(|v| v.name == name && v.as_bool() == Some(true))
}

/// The trampoline of an entry point (none for riscv64 without V: see the module
/// documentation), loading `mode` (see [`mode_word`]) where the target takes one.
fn trampoline(env: FpEnv, mode: u32) -> Option<Trampoline> {
    match env {
        FpEnv::Mxcsr => {
            // On entry rsp = 8 mod 16; after `sub rsp, 8` it is 0 mod 16 for the call.
            let mut bytes = vec![
                0x48, 0x83, 0xec, 0x08, // sub rsp, 8
                0x0f, 0xae, 0x1c, 0x24, // stmxcsr [rsp]
                0xc7, 0x44, 0x24, 0x04, // mov dword ptr [rsp + 4], mode
            ];
            bytes.extend_from_slice(&mode.to_le_bytes());
            bytes.extend_from_slice(&[
                0x0f, 0xae, 0x54, 0x24, 0x04, // ldmxcsr [rsp + 4]
                0xe8, 0, 0, 0, 0, // call body (rel32)
                0x0f, 0xae, 0x14, 0x24, // ldmxcsr [rsp]
                0x48, 0x83, 0xc4, 0x08, // add rsp, 8
                0xc3, // ret
            ]);
            Some(Trampoline {
                bytes,
                call_offset: 0x16,
                kind: Reloc::X86CallPCRel4,
                addend: -4,
            })
        }
        FpEnv::Fpcr => {
            // `mode` has bits only in 16..32 (FPCR.RMode is 23:22): one movz loads it.
            debug_assert_eq!(mode & 0xffff_0000, mode);
            let words: [u32; 13] = [
                0xa9be7bfd,                     // stp x29, x30, [sp, #-32]!
                0x910003fd,                     // mov x29, sp
                0xd53b4409,                     // mrs x9, fpcr
                0xd53b442a,                     // mrs x10, fpsr
                0xa9012be9,                     // stp x9, x10, [sp, #16]
                0xd2a0000b | (mode >> 16) << 5, // movz x11, #(mode >> 16), lsl #16
                0xd51b440b,                     // msr fpcr, x11
                0x94000000,                     // bl body
                0xa9412be9,                     // ldp x9, x10, [sp, #16]
                0xd51b4409,                     // msr fpcr, x9
                0xd51b442a,                     // msr fpsr, x10
                0xa8c27bfd,                     // ldp x29, x30, [sp], #32
                0xd65f03c0,                     // ret
            ];
            Some(Trampoline {
                bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
                call_offset: 0x1c,
                kind: Reloc::Arm64Call,
                addend: 0,
            })
        }
        FpEnv::StaticRounding => None,
        FpEnv::Fcsr => Some(riscv_v_trampoline()),
        FpEnv::Fpc => {
            let bytes = vec![
                0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, // stmg %r14, %r15, 112(%r15)
                0xa7, 0xfb, 0xff, 0x58, // aghi %r15, -168
                0xb3, 0x8c, 0x00, 0x00, // efpc %r0
                0x50, 0x00, 0xf0, 0xa0, // st %r0, 160(%r15)
                0xa7, 0x08, 0x00, 0x00, // lhi %r0, 0
                0xb3, 0x84, 0x00, 0x00, // sfpc %r0
                0xc0, 0xe5, 0, 0, 0, 0, // brasl %r14, body
                0x58, 0x00, 0xf0, 0xa0, // l %r0, 160(%r15)
                0xb3, 0x84, 0x00, 0x00, // sfpc %r0
                0xeb, 0xef, 0xf1, 0x18, 0x00, 0x04, // lmg %r14, %r15, 280(%r15)
                0x07, 0xfe, // br %r14
            ];
            Some(Trampoline {
                bytes,
                call_offset: 0x1c,
                kind: Reloc::S390xPLTRel32Dbl,
                addend: 2,
            })
        }
    }
}

/// The RISC-V V trampoline: `fcsr` zeroed around the call.
fn riscv_v_trampoline() -> Trampoline {
    let words: [u32; 11] = [
        0xff010113, // addi sp, sp, -16
        0x00113423, // sd ra, 8(sp)
        0x003012f3, // csrrw t0, fcsr, zero
        0x00513023, // sd t0, 0(sp)
        0x00000097, // auipc ra, 0     (R_RISCV_CALL_PLT body)
        0x000080e7, // jalr ra, 0(ra)
        0x00013283, // ld t0, 0(sp)
        0x00329073, // csrw fcsr, t0
        0x00813083, // ld ra, 8(sp)
        0x01010113, // addi sp, sp, 16
        0x00008067, // ret
    ];
    Trampoline {
        bytes: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        call_offset: 0x10,
        kind: Reloc::RiscvCallPlt,
        addend: 0,
    }
}

/// What the header says an entry point does with the floating-point environment.
fn mode_note(env: FpEnv, rounding: Rounding) -> String {
    match env {
        FpEnv::Mxcsr => format!(
            "Runs with MXCSR = 0x{:04x} (exceptions masked, no flush-to-zero or \
             denormals-are-zero, rounding {}), the caller's MXCSR restored after.",
            mode_word(env, rounding),
            rounding.name()
        ),
        FpEnv::Fpcr => format!(
            "Runs with FPCR = 0x{:08x} (no flush-to-zero, no default NaN, no traps, rounding \
             {}), the caller's FPCR and FPSR restored after.",
            mode_word(env, rounding),
            rounding.name()
        ),
        FpEnv::Fcsr => "Runs with fcsr = 0 (frm round to nearest-even), the caller's fcsr \
                        restored after."
            .into(),
        FpEnv::StaticRounding => "Runs in the caller's fcsr: every floating-point instruction \
                                  names its rounding (the dynamic frm is never read)."
            .into(),
        FpEnv::Fpc => "Runs with FPC = 0 (round to nearest-even, IEEE traps off), the caller's \
                        FPC restored after."
            .into(),
    }
}

/// How a buffer holds one vector of `ty`.
fn describe_vector(ty: crate::types::VectorType, layout: Layout) -> String {
    let stride = layout.stride(ty.width);
    let bytes = bytes_per_vector(ty, layout);
    let elem = c_type(ty.elem);
    let padding = if stride > ty.lanes() {
        ", the 4th padding (aligned layout)"
    } else if ty.width == Width::W3 {
        " (packed layout)"
    } else {
        ""
    };
    format!(
        "{stride} {elem}{} element{}{padding}, {bytes} byte{} each",
        if ty.elem.is_small_float() {
            format!(" ({} bits)", ty.elem)
        } else {
            String::new()
        },
        if stride == 1 { "" } else { "s" },
        if bytes == 1 { "" } else { "s" }
    )
}

/// The C type of one element (`half`, `bfloat`, the 8-bit floats and the narrow formats: their bits; bool: a
/// byte, 0 false and any other true, not C's `bool`, for which a byte but 0 or 1 is undefined).
fn c_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Char => "int8_t",
        ScalarType::UChar => "uint8_t",
        ScalarType::Short => "int16_t",
        ScalarType::UShort => "uint16_t",
        ScalarType::Int => "int32_t",
        ScalarType::UInt | ScalarType::Tf32 => "uint32_t",
        ScalarType::Long => "int64_t",
        ScalarType::ULong => "uint64_t",
        ScalarType::Half | ScalarType::BFloat => "uint16_t",
        ScalarType::Float => "float",
        ScalarType::Double => "double",
        ScalarType::Fp8E4M3
        | ScalarType::Fp8E5M2
        | ScalarType::Fp4E2M1
        | ScalarType::Fp6E2M3
        | ScalarType::Fp6E3M2
        | ScalarType::Fp8E4M3Fnuz
        | ScalarType::Fp8E5M2Fnuz
        | ScalarType::Fp8E8M0
        | ScalarType::Bool => "uint8_t",
    }
}
