//! Batch kernels: a Cranelift function `fn(src: *const u8, dst: *mut u8, vectors: i64)` that
//! applies one request to every vector of a buffer.
//!
//! Conversions with a vector recipe (see `lowering-tables/`) loop over the buffer a few 16-byte
//! blocks at a time and convert whole iterations only: the caller passes the last, partial
//! iteration through the same code once more on zero-padded copies ([`Built::granule`],
//! [`run_in_granules`]). The others loop over the elements (every lane converts
//! independently), calling the same per-element sequence the builder API emits, a few elements
//! per iteration in the same whole-iteration way; a 3-component vector in the aligned layout
//! goes one vector at a time, skips the source's padding element and writes zero into the
//! destination's. Reinterpretations are
//! byte copies: the operand's stored bytes (padding included in the aligned layout, zero where a
//! packed `x3` stores nothing) go to the result, whose aligned padding is written as zero.
//!
//! Every load and store is unaligned-safe (no `aligned` flag), so any byte buffer works.

use crate::buffer::bytes_per_vector;
use crate::chain::Chain;
use crate::lower::recipes::{BlockSpec, Body, Class, EmitBlock, Recipe};
use crate::lower::{
    bitcast_le, element_type, emit_element, int_const, lanes, vector_parts, Lowering,
};
use crate::request::{Conversion, Request};
use crate::table::{IsaFeatures, Key, Row, TableError};
use crate::types::{Layout, Rounding, VectorType, Width};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, Endianness, ExtFuncData, ExternalName, Function, InstBuilder, MemFlagsData,
    Opcode, Signature, Type, UserExternalName, UserFuncName, Value, ValueDef,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

/// The signature every batch kernel has: `(src, dst, vectors)`, pointers as I64.
pub fn signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    for _ in 0..3 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

/// A built kernel and the table row that chose its recipe.
pub struct Built {
    /// The Cranelift function.
    pub func: Function,
    /// The row of `lowering-tables/` that chose the recipe.
    pub row: &'static Row,
    /// The function converts `vectors` rounded down to a multiple of this; the rest must go
    /// through it once more on zero-padded copies ([`run_in_granules`]): for a conversion whose
    /// buffers hold lanes only, [`elements_per_iteration`] (a vector recipe) or
    /// [`scalar_elements_per_iteration`] (the per-element one); 1 for the others.
    pub granule: usize,
    /// The rounding the float instructions must run in: the caller sets the target's rounding
    /// control (x86-64's MXCSR.RC) to it for the call, as the JIT does. `Rte` for every
    /// kernel but those of a [`Recipe::rounds_by_control`] recipe ([`rounding_control`]).
    pub rounding_control: Rounding,
}

/// Which code a kernel is built as: the two tiers of [`crate::jit::Tiering`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    /// The optimised kernel: [`blocks_per_iteration`] blocks of the recipe per loop iteration,
    /// compiled with `opt_level=speed` and the backtracking register allocator
    /// ([`crate::target::Target::isa`]).
    Optimised,
    /// The quick kernel: the same recipe, one block per loop iteration, compiled with
    /// `opt_level=none` and the single-pass register allocator
    /// ([`crate::target::Target::quick_isa`]): about a third of the compile time, up to about
    /// half the speed. Its granule is the optimised kernel's, so either can run any call.
    Quick,
}

impl Tier {
    /// `optimised` or `quick`.
    pub const fn name(self) -> &'static str {
        match self {
            Tier::Optimised => "optimised",
            Tier::Quick => "quick",
        }
    }
}

/// Builds the batch kernel of `request` over buffers of `layout`, under the static rounding
/// mode `static_mode`, for `isa`, as a Cranelift function named `user(0, index)`. The recipe
/// comes from the ISA's lowering table. The optimised tier's IR; [`build_tier`] for either.
///
/// ```
/// use clconv::{kernel, Extensions, Layout, Request, Rounding};
/// use cranelift_codegen::settings;
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
/// let r = Request::parse("convert_int4_sat_rte(float4)", Extensions::default()).unwrap();
/// let built = kernel::build(&r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
/// assert!(built.func.display().to_string().contains("fcvt_to_sint_sat"));
/// assert_eq!(built.row.recipe.name, "float_to_int.round_native");
/// ```
pub fn build(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    isa: &dyn TargetIsa,
    index: u32,
) -> Result<Built, TableError> {
    build_tier(request, layout, static_mode, isa, index, Tier::Optimised)
}

/// [`build`] for a tier: the quick tier's IR has one recipe block per loop iteration (compile
/// it with [`crate::target::Target::quick_isa`]).
pub fn build_tier(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    isa: &dyn TargetIsa,
    index: u32,
    tier: Tier,
) -> Result<Built, TableError> {
    let features = IsaFeatures::of(isa)?;
    build_tier_with_features(request, layout, static_mode, isa, &features, index, tier)
}

/// [`build_tier`] with the table rows `features` allow: for example
/// [`IsaFeatures::without_rounding_control`]'s, the rows code lowered into a caller's own
/// function takes, in a kernel that then needs no rounding control.
pub fn build_tier_with_features(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    isa: &dyn TargetIsa,
    features: &IsaFeatures,
    index: u32,
    tier: Tier,
) -> Result<Built, TableError> {
    let mut func = Function::new();
    let (row, granule) = build_tier_into(
        &mut func,
        &mut FunctionBuilderContext::new(),
        features,
        isa.frontend_config(),
        request,
        layout,
        static_mode,
        index,
        tier,
    )?;
    let rounding_control = rounding_control(request, layout, static_mode, row.recipe);
    Ok(Built {
        func,
        row,
        granule,
        rounding_control,
    })
}

/// [`build_tier`] into a function and builder context the caller keeps (the JIT reuses one
/// pair per thread: their allocations outlive a kernel), for an ISA given by its features and
/// frontend configuration (the JIT reads both once). `func` is overwritten; returns the table
/// row and the granule.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_tier_into(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    features: &IsaFeatures,
    frontend: TargetFrontendConfig,
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    index: u32,
    tier: Tier,
) -> Result<(&'static Row, usize), TableError> {
    let key = key_of(request, static_mode);
    let mut row = features.choose(&key)?;
    if matches!(row.recipe.body, Body::Routine(_))
        && routine_of(request, layout, static_mode, row.recipe).is_none()
    {
        // A routine converts OpenCL's rules on dense buffers only: the others take the row
        // the routine's guard hides.
        row = features.clone().without_host_routines().choose(&key)?;
    }
    build_with_recipe_into(
        func,
        fctx,
        request,
        layout,
        static_mode,
        row.recipe,
        Some(features),
        frontend,
        index,
        tier,
    );
    Ok((row, granule(request, layout, static_mode, row.recipe)))
}

/// The granule of the kernel [`build_with_recipe`] makes (see [`Built::granule`]).
pub fn granule(request: &Request, layout: Layout, static_mode: Rounding, recipe: &Recipe) -> usize {
    if routine_of(request, layout, static_mode, recipe).is_some() {
        return crate::routine::GRANULE;
    }
    match (request, vector_block(request, layout, recipe)) {
        (Request::Convert(c), Some(_)) => elements_per_iteration(&spec_of(c, static_mode)),
        (Request::Convert(c), None) if is_dense_conversion(c, layout) => {
            scalar_elements_per_iteration(c)
        }
        _ => 1,
    }
}

/// The rounding the kernel [`build_with_recipe`] makes must run in ([`Built::rounding_control`]):
/// the conversion's own for a [`Recipe::rounds_by_control`] recipe's vector loop, else `Rte`
/// (the per-element loop of aligned 3-component vectors rounds to nearest-even, like all
/// other code).
///
/// ```
/// use clconv::{kernel, Extensions, Layout, Request, Rounding};
/// let isa = clconv::target::Target::X86_64Sse2.isa().unwrap();
/// let r = Request::parse("convert_float4_rtz(double4)", Extensions::default()).unwrap();
/// let built = kernel::build(&r, Layout::Packed, Rounding::Rte, &*isa, 0).unwrap();
/// assert_eq!(built.row.recipe.name, "float_to_float.demote_by_control");
/// assert_eq!(built.rounding_control, Rounding::Rtz);
/// let x3 = Request::parse("convert_float3_rtz(double3)", Extensions::default()).unwrap();
/// let aligned = kernel::build(&x3, Layout::Aligned, Rounding::Rte, &*isa, 0).unwrap();
/// assert_eq!(aligned.rounding_control, Rounding::Rte);
/// ```
pub fn rounding_control(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    recipe: &Recipe,
) -> Rounding {
    match request {
        Request::Convert(c)
            if recipe.rounds_by_control && vector_block(request, layout, recipe).is_some() =>
        {
            c.effective_rounding(static_mode)
        }
        _ => Rounding::Rte,
    }
}

/// A conversion between different element types (or one the float rules change) whose buffers
/// hold lanes only (no aligned `x3` padding): its kernel loops over the elements, or blocks of
/// them.
fn is_dense_conversion(c: &Conversion, layout: Layout) -> bool {
    (c.src().elem != c.dst().elem || c.rules().changes_floats())
        && layout.stride(c.src().width) == c.src().lanes()
}

/// The vector recipe a conversion's kernel loops over, if it has one and the layout is dense.
fn vector_block(request: &Request, layout: Layout, recipe: &Recipe) -> Option<EmitBlock> {
    match (request, recipe.body) {
        (Request::Convert(c), Body::Vector(emit))
            if is_dense_conversion(c, layout)
                && crate::lower::edges::vector_recipes_serve(c.rules(), c.dst().elem) =>
        {
            Some(emit)
        }
        _ => None,
    }
}

/// The host routine a conversion's kernel calls, if its recipe is a routine's, the layout
/// dense and the rules OpenCL's (a routine implements those only; `src/host/f16c.rs`).
fn routine_of(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    recipe: &Recipe,
) -> Option<crate::routine::Routine> {
    match (request, recipe.body) {
        (Request::Convert(c), Body::Routine(routine))
            if is_dense_conversion(c, layout) && c.rules() == crate::rules::Rules::OPENCL =>
        {
            Some(routine(&spec_of(c, static_mode)))
        }
        _ => None,
    }
}

/// The largest tail [`run_in_granules`] pads on the stack; longer ones (no kernel has one)
/// would go through the heap.
const TAIL_STACK_BYTES: usize = 256;

/// Runs a kernel of granule `granule` (see [`Built::granule`]) over `vectors` of its vectors,
/// `src_bytes` and `dst_bytes` bytes each: `call(src, dst, n)` once on the whole granules in
/// place, then, if vectors remain, once on one granule of zero-padded copies of them, of which
/// only the remaining vectors' results are copied out. `call` must convert exactly `n` vectors
/// (rounded down to whole granules) from `src` to `dst`.
///
/// The JIT calls the machine code this way and `clconv_verify::interp` the IR; the padded pass
/// converts zeros in the padding lanes, which no recipe can fault on.
///
/// ```
/// use clconv::kernel::run_in_granules;
/// // A "kernel" that doubles bytes in whole granules of 4 only.
/// let double = |src: &[u8], dst: &mut [u8], n: usize| {
///     for i in 0..n / 4 * 4 {
///         dst[i] = src[i] * 2;
///     }
/// };
/// let src = [1u8, 2, 3, 4, 5, 6];
/// let mut dst = [0u8; 6];
/// run_in_granules(4, 1, 1, &src, &mut dst, 6, |s, d, n| {
///     double(s, d, n);
///     Ok::<(), ()>(())
/// })
/// .unwrap();
/// assert_eq!(dst, [2, 4, 6, 8, 10, 12]);
/// ```
pub fn run_in_granules<E>(
    granule: usize,
    src_bytes: usize,
    dst_bytes: usize,
    src: &[u8],
    dst: &mut [u8],
    vectors: usize,
    mut call: impl FnMut(&[u8], &mut [u8], usize) -> Result<(), E>,
) -> Result<(), E> {
    let granule = granule.max(1);
    let whole = vectors - vectors % granule;
    if whole > 0 {
        call(src, dst, whole)?;
    }
    let rest = vectors - whole;
    if rest == 0 {
        return Ok(());
    }
    let (tail_in, tail_out) = (granule * src_bytes, granule * dst_bytes);
    let (from, to) = (&src[whole * src_bytes..], &mut dst[whole * dst_bytes..]);
    let (rest_in, rest_out) = (rest * src_bytes, rest * dst_bytes);
    let (mut stack_in, mut stack_out) = ([0u8; TAIL_STACK_BYTES], [0u8; TAIL_STACK_BYTES]);
    let mut heap: (Vec<u8>, Vec<u8>);
    let (padded_in, padded_out) = if tail_in.max(tail_out) <= TAIL_STACK_BYTES {
        (&mut stack_in[..tail_in], &mut stack_out[..tail_out])
    } else {
        heap = (vec![0u8; tail_in], vec![0u8; tail_out]);
        (&mut heap.0[..], &mut heap.1[..])
    };
    padded_in[..rest_in].copy_from_slice(&from[..rest_in]);
    call(padded_in, padded_out, granule)?;
    to[..rest_out].copy_from_slice(&padded_out[..rest_out]);
    Ok(())
}

/// The table key of `request`.
pub fn key_of(request: &Request, static_mode: Rounding) -> Key {
    match request {
        Request::Convert(c) => Key::of(&spec_of(c, static_mode)),
        // A chain's code is named by its conversion's row (the steps around it are lane moves
        // and bitcasts).
        Request::Chain(chain) => Key::of(&spec_of(&chain.conversion(), static_mode)),
        Request::Reinterpret(r) => Key {
            class: Class::Reinterpret,
            src: r.src().elem,
            dst: r.dst().elem,
            saturate: false,
            rounding: Rounding::Rte,
        },
    }
}

fn spec_of(c: &Conversion, static_mode: Rounding) -> BlockSpec {
    BlockSpec {
        src: c.src().elem,
        dst: c.dst().elem,
        saturate: c.saturate(),
        rounding: c.effective_rounding(static_mode),
        rules: c.rules(),
    }
}

/// Builds the batch kernel with a given recipe (which must support the request; the tables
/// check that for the recipes they name): to look at, or compile, another recipe than the
/// table's.
///
/// ```
/// use clconv::kernel::{build_with_recipe, Tier};
/// use clconv::lower::recipes::recipe;
/// use clconv::{Extensions, Layout, Request, Rounding};
/// let isa = clconv::target::Target::X86_64Sse2.isa().unwrap();
/// let r = Request::parse("convert_float4_rtp(int4)", Extensions::default()).unwrap();
/// // The x86-64 table picks int_to_float.by_control; the split sum rounds to nearest-even.
/// let split = recipe("int_to_float.split_sum").unwrap();
/// let func = build_with_recipe(&r, Layout::Packed, Rounding::Rte, split, isa.frontend_config(), 0, Tier::Optimised);
/// let ir = func.display().to_string();
/// assert!(ir.contains("fcvt_from_sint") && !ir.contains("x86_cvtt2dq"));
/// ```
pub fn build_with_recipe(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    recipe: &Recipe,
    frontend: TargetFrontendConfig,
    index: u32,
    tier: Tier,
) -> Function {
    let mut func = Function::new();
    build_with_recipe_into(
        &mut func,
        &mut FunctionBuilderContext::new(),
        request,
        layout,
        static_mode,
        recipe,
        None,
        frontend,
        index,
        tier,
    );
    func
}

/// [`build_with_recipe`] into `func` (overwritten) with the caller's builder context.
/// `features`: the ISA's table rows, which a chain's steps pick their vector recipes from
/// (`None`: a chain goes per component).
#[allow(clippy::too_many_arguments)]
fn build_with_recipe_into(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    recipe: &Recipe,
    features: Option<&IsaFeatures>,
    frontend: TargetFrontendConfig,
    index: u32,
    tier: Tier,
) {
    func.clear();
    func.name = UserFuncName::user(0, index);
    func.signature = signature(frontend.default_call_conv);
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (src, dst, vectors) = (params[0], params[1], params[2]);
    let vector_copy = !matches!(recipe.body, Body::CopyScalar | Body::Scalar);
    match request {
        Request::Reinterpret(r) => build_copy(
            &mut b,
            r.src(),
            r.dst(),
            layout,
            vector_copy,
            src,
            dst,
            vectors,
        ),
        Request::Convert(c) if c.src().elem == c.dst().elem && !c.rules().changes_floats() => {
            // convert_T(T): the same bits, padding handled like as_T(T).
            build_copy(
                &mut b,
                c.src(),
                c.dst(),
                layout,
                vector_copy,
                src,
                dst,
                vectors,
            )
        }
        Request::Chain(chain) => {
            // A chain's steps are lowered as the builder API lowers them: no routine calls.
            let plain = features.map(|f| f.clone().without_host_routines());
            build_chain(
                &mut b,
                chain,
                layout,
                static_mode,
                plain.as_ref(),
                src,
                dst,
                vectors,
            )
        }
        Request::Convert(c) if routine_of(request, layout, static_mode, recipe).is_some() => {
            let routine =
                routine_of(request, layout, static_mode, recipe).expect("checked by the guard");
            let lanes = c.src().lanes() as i64;
            build_routine_call(&mut b, routine, frontend, src, dst, vectors, lanes)
        }
        Request::Convert(c) => {
            let block = vector_block(request, layout, recipe);
            build_convert(
                &mut b,
                c,
                layout,
                static_mode,
                block,
                tier,
                src,
                dst,
                vectors,
            )
        }
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
}

/// A routine kernel's body: `routine(src, dst, n)` with `n` the buffer's elements rounded
/// down to whole granules ([`crate::routine::GRANULE`]); the caller passes the rest on
/// zero-padded copies ([`run_in_granules`]). The routine is an external name the JIT resolves
/// (namespace [`crate::routine::NAMESPACE`], index [`crate::routine::Routine::index`]).
#[allow(clippy::too_many_arguments)]
fn build_routine_call(
    b: &mut FunctionBuilder,
    routine: crate::routine::Routine,
    frontend: TargetFrontendConfig,
    src: Value,
    dst: Value,
    vectors: Value,
    lanes: i64,
) {
    let mut sig = Signature::new(frontend.default_call_conv);
    for _ in 0..3 {
        sig.params.push(AbiParam::new(types::I64));
    }
    let sig = b.import_signature(sig);
    let name = b.func.declare_imported_user_function(UserExternalName::new(
        crate::routine::NAMESPACE,
        routine.index(),
    ));
    let callee = b.import_function(ExtFuncData {
        name: ExternalName::user(name),
        signature: sig,
        colocated: false,
        patchable: false,
    });
    let count = b.ins().imul_imm_u(vectors, lanes);
    let whole = b
        .ins()
        .band_imm_u(count, !(crate::routine::GRANULE as i64 - 1));
    b.ins().call(callee, &[src, dst, whole]);
}

/// The memory flags of every load and store of a kernel's buffers (conversion, arithmetic and
/// AOT kernels alike): little-endian, and no trap (the caller passes valid buffers).
pub(crate) fn mem_flags() -> MemFlagsData {
    MemFlagsData::new()
        .with_endianness(Endianness::Little)
        .with_notrap()
}

/// Emits `for i in 0..count { body(i) }` with the body given the loop index, `less` the
/// comparison of the index with `count` (`SignedLessThan` for the JIT's kernels,
/// `UnsignedLessThan` for the AOT entry points' `size_t`). The loop of every kernel.
pub(crate) fn counted_loop(
    b: &mut FunctionBuilder,
    count: Value,
    less: IntCC,
    body: &mut dyn FnMut(&mut FunctionBuilder, Value),
) {
    let start = b.ins().iconst(types::I64, 0);
    let head = b.create_block();
    let body_block = b.create_block();
    let exit = b.create_block();
    b.append_block_param(head, types::I64);
    b.ins().jump(head, &[start.into()]);

    b.switch_to_block(head);
    let i = b.block_params(head)[0];
    let more = b.ins().icmp(less, i, count);
    b.ins().brif(more, body_block, &[], exit, &[]);

    b.switch_to_block(body_block);
    body(b, i);
    let next = b.ins().iadd_imm_u(i, 1);
    b.ins().jump(head, &[next.into()]);

    b.switch_to_block(exit);
}

/// `base + index * scale + offset` as an address.
fn address(
    b: &mut FunctionBuilder,
    base: Value,
    index: Value,
    scale: usize,
    offset: usize,
) -> Value {
    let scaled = b.ins().imul_imm_u(index, scale as i64);
    let at = b.ins().iadd(base, scaled);
    if offset == 0 {
        at
    } else {
        b.ins().iadd_imm_u(at, offset as i64)
    }
}

#[allow(clippy::too_many_arguments)]
fn build_convert(
    b: &mut FunctionBuilder,
    conv: &Conversion,
    layout: Layout,
    static_mode: Rounding,
    block: Option<EmitBlock>,
    tier: Tier,
    src: Value,
    dst: Value,
    vectors: Value,
) {
    let src_ty = element_type(conv.src().elem);
    let dst_ty = element_type(conv.dst().elem);
    let (sb, db) = (conv.src().elem.bytes(), conv.dst().elem.bytes());
    let lanes = conv.src().lanes();
    let convert_at = |b: &mut FunctionBuilder, index: Value, lane: usize, stride: usize| {
        let from = address(b, src, index, sb * stride, sb * lane);
        let x = b.ins().load(src_ty, mem_flags(), from, 0);
        let y = emit_element(b, conv, static_mode, x);
        let to = address(b, dst, index, db * stride, db * lane);
        b.ins().store(mem_flags(), y, to, 0);
    };
    if layout.stride(conv.src().width) != lanes {
        // Aligned 3-component vectors: three lanes and a zeroed padding element per vector.
        debug_assert_eq!(conv.src().width, Width::W3);
        counted_loop(b, vectors, IntCC::SignedLessThan, &mut |b, v| {
            for lane in 0..3 {
                convert_at(b, v, lane, 4);
            }
            let zero = zero_of(b, dst_ty);
            let to = address(b, dst, v, db * 4, db * 3);
            b.ins().store(mem_flags(), zero, to, 0);
        });
        return;
    }
    // Dense: every element of the buffer is a lane.
    let count = b.ins().imul_imm_u(vectors, lanes as i64);
    match block {
        Some(emit) => {
            let spec = spec_of(conv, static_mode);
            let unroll = match tier {
                Tier::Optimised => blocks_per_iteration(&spec),
                Tier::Quick => 1,
            };
            vector_loop(b, &spec, emit, unroll, src, dst, count)
        }
        None => {
            let granule = scalar_elements_per_iteration(conv);
            let unroll = match tier {
                Tier::Optimised => granule,
                Tier::Quick => 1,
            };
            let (in_iter, out_iter) = (unroll * sb, unroll * db);
            granule_loop(
                b,
                src,
                dst,
                count,
                granule,
                sb,
                (in_iter, out_iter),
                &mut |b, p, q| {
                    for u in 0..unroll {
                        let x = b.ins().load(src_ty, mem_flags(), p, (u * sb) as i32);
                        let y = emit_element(b, conv, static_mode, x);
                        let y = integer_bits_of(b, y);
                        b.ins().store(mem_flags(), y, q, (u * db) as i32);
                    }
                },
            )
        }
    }
}

/// A chain's kernel: one vector per iteration. With `features` whose table has vectors of the
/// operand's element, its 128-bit parts loaded, the steps by their vector recipes
/// ([`Lowering::chain_parts`], the builder API's code), the result's bytes stored; otherwise
/// (3-component vectors, riscv64 without V, no features) its elements loaded as scalars, the
/// chain's per-component sequence on them ([`Lowering::chain_components`]: no vector
/// instruction, so it compiles on every target), the result's elements stored (an aligned
/// 3-component result's padding as zero).
#[allow(clippy::too_many_arguments)]
fn build_chain(
    b: &mut FunctionBuilder,
    chain: &Chain,
    layout: Layout,
    static_mode: Rounding,
    features: Option<&IsaFeatures>,
    src: Value,
    dst: Value,
    vectors: Value,
) {
    let lowering = Lowering::without_isa().with_static_mode(static_mode);
    let (from, to) = (chain.src(), chain.dst());
    let (src_stride, dst_stride) = (bytes_per_vector(from, layout), bytes_per_vector(to, layout));
    let (src_ty, dst_ty) = (element_type(from.elem), element_type(to.elem));
    // With the ISA's table, each step by its vector recipe on the 128-bit parts (what the
    // builder API emits for the value); 3-component vectors, whose padding the scalar form
    // handles, go per component.
    let vector = features
        .filter(|f| from.width != Width::W3 && to.width != Width::W3 && has_vectors(f, from.elem))
        .map(|f| {
            Lowering::with_features(f.clone().without_rounding_control())
                .with_static_mode(static_mode)
        });
    counted_loop(b, vectors, IntCC::SignedLessThan, &mut |b, v| {
        if let Some(vector) = &vector {
            let p = address(b, src, v, src_stride, 0);
            let parts = load_parts(b, from, p);
            // An error is a shape the lowering refuses, never seen for a chain it built: the
            // per-component form below then computes the same values.
            if let Ok(out) = vector.chain_parts(b, chain, &parts) {
                let q = address(b, dst, v, dst_stride, 0);
                store_parts(b, to, q, &out);
                return;
            }
        }
        let p = address(b, src, v, src_stride, 0);
        let size = from.elem.bytes();
        let components: Vec<Value> = (0..from.lanes())
            .map(|i| b.ins().load(src_ty, mem_flags(), p, (i * size) as i32))
            .collect();
        let results = lowering.chain_components(b, chain, &components);
        let q = address(b, dst, v, dst_stride, 0);
        let size = to.elem.bytes();
        for (i, &y) in results.iter().enumerate() {
            b.ins().store(mem_flags(), y, q, (i * size) as i32);
        }
        if dst_stride > to.lanes() * size {
            let zero = zero_of(b, dst_ty);
            b.ins()
                .store(mem_flags(), zero, q, (to.lanes() * size) as i32);
        }
    });
}

/// Whether the table gives `features` 128-bit vectors of `elem` (its copy row is a vector
/// copy): not so on riscv64 without V, where Cranelift has no vector type.
fn has_vectors(features: &IsaFeatures, elem: crate::ScalarType) -> bool {
    let copy = Key {
        class: Class::Reinterpret,
        src: elem,
        dst: elem,
        saturate: false,
        rounding: Rounding::Rte,
    };
    features
        .choose(&copy)
        .is_ok_and(|row| !matches!(row.recipe.body, Body::CopyScalar | Body::Scalar))
}

/// A packed vector of type `ty` at `p` as its 128-bit parts ([`vector_parts`]): whole parts
/// loaded as they are, a vector of fewer than 16 bytes as one integer in lane 0 of a zeroed
/// part (one `movq`/`movd`).
fn load_parts(b: &mut FunctionBuilder, ty: VectorType, p: Value) -> Vec<Value> {
    let (part, count) = vector_parts(ty);
    let bytes = ty.lanes() * ty.elem.bytes();
    if bytes.is_multiple_of(16) {
        return (0..count)
            .map(|i| b.ins().load(part, mem_flags(), p, (16 * i) as i32))
            .collect();
    }
    if bytes == 1 {
        // One byte (FP4's `unpack_fp4(uchar)`): x64 moves no 8-bit integer into a vector
        // register, so it goes zero-extended to 32 bits (`movzx`, `movd`).
        let x = b.ins().uload8(types::I32, mem_flags(), p, 0);
        let v = b.ins().scalar_to_vector(types::I32X4, x);
        return vec![bitcast_le(b, part, v)];
    }
    let int = Type::int_with_byte_size(bytes as u16).expect("1, 2, 4 or 8 bytes");
    let x = b.ins().load(int, mem_flags(), p, 0);
    let lanes = int.by(16 / bytes as u32).expect("a 128-bit vector");
    let v = b.ins().scalar_to_vector(lanes, x);
    vec![bitcast_le(b, part, v)]
}

/// Stores the parts of a packed vector of type `ty` at `q`: whole parts as they are, a vector
/// of fewer than 16 bytes as the one integer in lane 0 of its part.
fn store_parts(b: &mut FunctionBuilder, ty: VectorType, q: Value, parts: &[Value]) {
    let bytes = ty.lanes() * ty.elem.bytes();
    if bytes.is_multiple_of(16) {
        for (i, &part) in parts.iter().take(bytes / 16).enumerate() {
            b.ins().store(mem_flags(), part, q, (16 * i) as i32);
        }
        return;
    }
    let int = Type::int_with_byte_size(bytes as u16).expect("1, 2, 4 or 8 bytes");
    let lanes = int.by(16 / bytes as u32).expect("a 128-bit vector");
    let v = bitcast_le(b, lanes, parts[0]);
    let x = b.ins().extractlane(v, 0);
    b.ins().store(mem_flags(), x, q, 0);
}

/// The integer a float result was bitcast from, if it was (the sequences that build a float's
/// bits in integer registers end so): storing it stores the same bytes without the move to a
/// vector register and back, two of the ten instructions per element of
/// `convert_float2_rtn(ulong2)`.
fn integer_bits_of(b: &FunctionBuilder, y: Value) -> Value {
    let dfg = &b.func.dfg;
    if let ValueDef::Result(inst, 0) = dfg.value_def(y) {
        if dfg.insts[inst].opcode() == Opcode::Bitcast {
            let from = dfg.inst_args(inst)[0];
            let ty = dfg.value_type(from);
            if ty.is_int() && ty.bits() == dfg.value_type(y).bits() {
                return from;
            }
        }
    }
    y
}

/// Elements one iteration of a dense per-element kernel's optimised loop converts (its
/// granule; the quick tier converts one per iteration, in the same whole granules): 64 bytes
/// of the wider side, at most 8. One element per iteration spent about half the instructions
/// on the loop and took two branches per element: `convert_float2_rtn(ulong2)` ran at 0.43
/// elements/ns so, 0.73 with 2 per iteration, 0.79 with 4, 0.88 with 8.
///
/// ```
/// use clconv::{kernel, Extensions, Request};
/// let Request::Convert(c) = Request::parse("convert_float2_rtn(ulong2)", Extensions::default()).unwrap() else {
///     unreachable!()
/// };
/// assert_eq!(kernel::scalar_elements_per_iteration(&c), 8);
/// ```
pub fn scalar_elements_per_iteration(conv: &Conversion) -> usize {
    let widest = conv.src().elem.bytes().max(conv.dst().elem.bytes());
    (64 / widest).clamp(1, 8)
}

/// Blocks of one vector recipe per loop iteration: enough for 128 bytes of the wider side for
/// integer -> integer recipes (a pack or a shuffle per block: the loop's own pointer steps,
/// compare and branch would otherwise be half the instructions), 64 bytes for the others, whose
/// blocks are longer. Measured on the benchmark's ten conversions (paired ratios against the
/// plain Rust loop): one block per iteration ran `convert_float4_rtp(int4)` at 0.8 elements/ns,
/// four at 1.6; `convert_uchar8_sat(short8)` went from 0.77x to 1.0-1.2x the Rust loop with
/// eight. More would only lengthen the code Cranelift has to compile.
pub fn blocks_per_iteration(spec: &BlockSpec) -> usize {
    let per_block = spec.block_elements();
    let widest = per_block * spec.src.bytes().max(spec.dst.bytes());
    let target = if spec.class() == Class::IntToInt {
        128
    } else {
        64
    };
    (target / widest).clamp(1, 8)
}

/// Elements one iteration of a vector kernel's loop converts (its [`Built::granule`]): buffer
/// lengths that are not a multiple of it end in one more call of the kernel on a zero-padded
/// copy of the tail ([`run_in_granules`]).
pub fn elements_per_iteration(spec: &BlockSpec) -> usize {
    spec.block_elements() * blocks_per_iteration(spec)
}

/// The vector loop over the whole iterations ([`elements_per_iteration`]) of `count` dense
/// elements, straight from the buffers, `unroll` blocks of the recipe at a time (a divisor of
/// [`blocks_per_iteration`]); the caller converts the rest ([`run_in_granules`]). The tail used to be a second
/// pass through the loop body on padded stack copies inside the kernel: it was half of every
/// kernel's blocks and a third of its compile time (interleaved measurement, the benchmark's
/// ten kernels: Cranelift's compile 286 -> 183 µs on average).
fn vector_loop(
    b: &mut FunctionBuilder,
    spec: &BlockSpec,
    emit: EmitBlock,
    unroll: usize,
    src: Value,
    dst: Value,
    count: Value,
) {
    let per_block = spec.block_elements();
    let granule = elements_per_iteration(spec);
    debug_assert_eq!(granule % (per_block * unroll), 0);
    let per_iter = per_block * unroll;
    let (sb, db) = (spec.src.bytes(), spec.dst.bytes());
    let (src_vec, dst_vec) = (lanes::vector_of(spec.src), lanes::vector_of(spec.dst));
    let (k_in, k_out) = (per_block * sb / 16, per_block * db / 16);
    let steps = (per_iter * sb, per_iter * db);
    granule_loop(b, src, dst, count, granule, sb, steps, &mut |b, p, q| {
        for u in 0..unroll {
            let inputs: Vec<Value> = (0..k_in)
                .map(|j| {
                    let offset = (u * per_block * sb + 16 * j) as i32;
                    b.ins().load(src_vec, mem_flags(), p, offset)
                })
                .collect();
            let inputs = crate::lower::edges::block_inputs(b, spec, &inputs);
            let outputs = emit(b, spec, &inputs);
            let outputs = crate::lower::edges::block(b, spec, outputs);
            debug_assert_eq!(outputs.len(), k_out);
            for (j, v) in outputs.into_iter().enumerate() {
                let v = crate::lower::bitcast_le(b, dst_vec, v);
                let offset = (u * per_block * db + 16 * j) as i32;
                b.ins().store(mem_flags(), v, q, offset);
            }
        }
    });
}

/// The loop over the whole granules of `count` dense elements (`granule` a power of two,
/// `src_elem_bytes` each in the source): `body(p, q)` at source and destination pointers that
/// step by `steps` bytes (one iteration: a divisor of the granule, so that both tiers run the
/// same calls), until the source pointer reaches the end of the last whole granule.
#[allow(clippy::too_many_arguments)]
fn granule_loop(
    b: &mut FunctionBuilder,
    src: Value,
    dst: Value,
    count: Value,
    granule: usize,
    src_elem_bytes: usize,
    steps: (usize, usize),
    body: &mut dyn FnMut(&mut FunctionBuilder, Value, Value),
) {
    debug_assert!(granule.is_power_of_two());
    debug_assert_eq!((granule * src_elem_bytes) % steps.0, 0);
    let granules = b.ins().ushr_imm_u(count, granule.trailing_zeros() as i64);
    let src_bytes_done = b
        .ins()
        .imul_imm_u(granules, (granule * src_elem_bytes) as i64);
    let src_end = b.ins().iadd(src, src_bytes_done);

    let head = b.create_block();
    let body_block = b.create_block();
    let exit = b.create_block();
    for block in [head, body_block] {
        b.append_block_param(block, types::I64);
        b.append_block_param(block, types::I64);
    }
    b.ins().jump(head, &[src.into(), dst.into()]);

    // head(p, q): one more iteration while p < src_end.
    b.switch_to_block(head);
    let (p, q) = (b.block_params(head)[0], b.block_params(head)[1]);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, p, src_end);
    b.ins()
        .brif(more, body_block, &[p.into(), q.into()], exit, &[]);

    b.switch_to_block(body_block);
    let (p, q) = (b.block_params(body_block)[0], b.block_params(body_block)[1]);
    body(b, p, q);
    let p_next = b.ins().iadd_imm_u(p, steps.0 as i64);
    let q_next = b.ins().iadd_imm_u(q, steps.1 as i64);
    b.ins().jump(head, &[p_next.into(), q_next.into()]);

    b.switch_to_block(exit);
}

fn zero_of(b: &mut FunctionBuilder, ty: Type) -> Value {
    crate::lower::zero_scalar(b, ty)
}

/// A byte copy from vectors of `src_t` to vectors of `dst_t` (equal byte sizes): the operand's
/// stored bytes go to the result; bytes the result has and the operand does not store (the
/// padding of a packed `x3` operand) are zero, and so is an aligned `x3` result's padding.
#[allow(clippy::too_many_arguments)]
fn build_copy(
    b: &mut FunctionBuilder,
    src_t: VectorType,
    dst_t: VectorType,
    layout: Layout,
    vector: bool,
    src: Value,
    dst: Value,
    vectors: Value,
) {
    let src_stride = bytes_per_vector(src_t, layout);
    let dst_stride = bytes_per_vector(dst_t, layout);
    let dst_meaningful = dst_t.lanes() * dst_t.elem.bytes();
    let copy = src_stride.min(dst_meaningful);
    let zeros = dst_stride - copy;
    let widest: usize = if vector { 16 } else { 8 };
    if zeros == 0 && copy == src_stride && copy == dst_stride {
        // Same bytes in the same places: one flat copy, `widest` bytes at a time, then bytes.
        let total = b.ins().imul_imm_u(vectors, copy as i64);
        let chunk_ty = if vector { types::I8X16 } else { types::I64 };
        let chunks = b.ins().ushr_imm_u(total, widest.trailing_zeros() as i64);
        counted_loop(b, chunks, IntCC::SignedLessThan, &mut |b, i| {
            let from = address(b, src, i, widest, 0);
            let v = b.ins().load(chunk_ty, mem_flags(), from, 0);
            let to = address(b, dst, i, widest, 0);
            b.ins().store(mem_flags(), v, to, 0);
        });
        let done = b.ins().band_imm_u(total, !(widest as i64 - 1));
        let src_rest = b.ins().iadd(src, done);
        let dst_rest = b.ins().iadd(dst, done);
        let rest = b.ins().band_imm_u(total, widest as i64 - 1);
        counted_loop(b, rest, IntCC::SignedLessThan, &mut |b, i| {
            let from = b.ins().iadd(src_rest, i);
            let v = b.ins().load(types::I8, mem_flags(), from, 0);
            let to = b.ins().iadd(dst_rest, i);
            b.ins().store(mem_flags(), v, to, 0);
        });
        return;
    }
    counted_loop(b, vectors, IntCC::SignedLessThan, &mut |b, v| {
        let from = address(b, src, v, src_stride, 0);
        let to = address(b, dst, v, dst_stride, 0);
        let mut offset = 0;
        for (size, ty) in chunk_sizes(copy, widest) {
            let x = b.ins().load(ty, mem_flags(), from, offset as i32);
            b.ins().store(mem_flags(), x, to, offset as i32);
            offset += size;
        }
        for (size, ty) in chunk_sizes(zeros, widest) {
            let zero = if ty == types::I8X16 {
                let z = int_const(b, types::I8, 0);
                b.ins().splat(types::I8X16, z)
            } else {
                int_const(b, ty, 0)
            };
            b.ins().store(mem_flags(), zero, to, offset as i32);
            offset += size;
        }
    });
}

/// What a panic caught around Cranelift's compile said, as an error message.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let why = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into());
    format!("Cranelift panicked: {why}")
}

/// Splits `bytes` into load/store sizes of at most `widest` bytes, largest first.
fn chunk_sizes(mut bytes: usize, widest: usize) -> Vec<(usize, Type)> {
    let mut out = Vec::new();
    for (size, ty) in [
        (16, types::I8X16),
        (8, types::I64),
        (4, types::I32),
        (2, types::I16),
        (1, types::I8),
    ] {
        while bytes >= size && size <= widest {
            out.push((size, ty));
            bytes -= size;
        }
    }
    out
}

/// A kernel compiled to machine code (not loaded for running): for any target.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The Cranelift IR.
    pub clif: String,
    /// Cranelift's disassembly of the emitted code (when asked for).
    pub asm: Option<String>,
    /// The machine code's size in bytes.
    pub code_size: usize,
    /// The table row that chose the recipe.
    pub row: &'static Row,
    /// See [`Built::rounding_control`].
    pub rounding_control: Rounding,
    /// The host routine the kernel calls, if its row names one ([`crate::routine`]).
    pub routine: Option<crate::routine::Routine>,
}

/// Why a kernel did not compile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{request} does not compile for {target}: {why}")]
pub struct CompileError {
    /// The request.
    pub request: String,
    /// The target triple.
    pub target: String,
    /// Cranelift's message (or the panic it raised).
    pub why: String,
}

/// Builds and compiles `request`'s kernel for `isa` without loading it: the cross-compilation
/// check, `clconv show`, and the lowering report use this. Cranelift errors and panics both
/// come back as a [`CompileError`]. For the quick [`Tier`], pass the target's
/// [`crate::target::Target::quick_isa`].
///
/// ```
/// # #[cfg(feature = "cross-target")] {
/// use clconv::{kernel, target::Target, Extensions, Layout, Request, Rounding};
/// let isa = Target::Aarch64.isa().unwrap();
/// let r = Request::parse("convert_int4_sat_rte(float4)", Extensions::default()).unwrap();
/// let c = kernel::compile(&r, Layout::Packed, Rounding::Rte, &*isa, kernel::Tier::Optimised, true).unwrap();
/// assert!(c.asm.unwrap().contains("frintn"));
/// # }
/// ```
pub fn compile(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    isa: &dyn TargetIsa,
    tier: Tier,
    disasm: bool,
) -> Result<Compiled, CompileError> {
    let features = IsaFeatures::of(isa).map_err(|e| CompileError {
        request: request.to_string(),
        target: isa.triple().to_string(),
        why: e.to_string(),
    })?;
    compile_with_features(request, layout, static_mode, isa, &features, tier, disasm)
}

/// [`compile`] with the table rows `features` allow: a JIT's
/// ([`IsaFeatures::with_host_routines`]) for the code a JIT of that flag set runs, host
/// routine calls included (`clconv show`).
///
/// ```
/// use clconv::{kernel, table::IsaFeatures, target::Target, Extensions, Layout, Request, Rounding};
/// let isa = Target::X86_64Avx2.isa().unwrap();
/// let jit = IsaFeatures::of(&*isa).unwrap().with_host_routines();
/// let r = Request::parse("convert_half8_rtz(float8)", Extensions::with_fp16()).unwrap();
/// let c = kernel::compile_with_features(&r, Layout::Packed, Rounding::Rte, &*isa, &jit, kernel::Tier::Optimised, false).unwrap();
/// assert_eq!(c.routine.unwrap().name(), "f16c.float_to_half_rtz");
/// ```
#[allow(clippy::too_many_arguments)]
pub fn compile_with_features(
    request: &Request,
    layout: Layout,
    static_mode: Rounding,
    isa: &dyn TargetIsa,
    features: &IsaFeatures,
    tier: Tier,
    disasm: bool,
) -> Result<Compiled, CompileError> {
    let error = |why: String| CompileError {
        request: request.to_string(),
        target: isa.triple().to_string(),
        why,
    };
    let built = build_tier_with_features(request, layout, static_mode, isa, features, 0, tier)
        .map_err(|e| error(e.to_string()))?;
    let routine = routine_of(request, layout, static_mode, built.row.recipe);
    let clif = built.func.display().to_string();
    let rounding_control = built.rounding_control;
    let func = built.func;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut ctx = cranelift_codegen::Context::for_function(func);
        ctx.set_disasm(disasm);
        let mut ctrl = cranelift_codegen::control::ControlPlane::default();
        ctx.compile(isa, &mut ctrl)
            .map(|code| (code.vcode.clone(), code.code_buffer().len()))
            .map_err(|e| format!("{:?}", e.inner))
    }));
    let (asm, code_size) = match result {
        Ok(Ok(v)) => v,
        Ok(Err(why)) => return Err(error(why)),
        Err(panic) => return Err(error(panic_message(&*panic))),
    };
    Ok(Compiled {
        clif,
        asm,
        code_size,
        row: built.row,
        rounding_control,
        routine,
    })
}
