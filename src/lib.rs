//! # clconv
//!
//! Lowers OpenCL C explicit conversions (`convert_<dst><n>[_sat][_rte|_rtz|_rtp|_rtn]`) and
//! reinterpretations (`as_<type><n>`) to Cranelift IR, exact to the specification on every input,
//! into the caller's own function or as batch kernels that convert whole buffers (compiled
//! in-process or ahead of time for any target).
//!
//! The layers, one module each:
//! - [`types`]: scalar and vector types, rounding modes, buffer layouts.
//! - [`rules`]: what a conversion gives at the edges (out of range, NaN), per language, as data.
//! - [`request`]: the validated request ([`Request`]: a [`Conversion`] or a [`Reinterpretation`]).
//! - [`names`]: OpenCL and Itanium/SPIR spellings, parsed and printed.
//! - [`languages`]: WGSL, HLSL, GLSL and Metal spellings (`wgsl:i32(f32)`), each to a [`Request`].
//! - [`buffer`]: how many vectors a pair of byte buffers holds, and the errors when they do not fit.
//! - [`reference`](mod@reference): the reference interpreter on soft-float (`rustc_apfloat`),
//!   the oracle.
//! - [`lower`]: the builder API (`Lowering::lower_named`: one call from a name, on your values).
//! - [`mx`]: OCP Microscaling block requests (a block of 32 values, one E8M0 scale).
//! - [`table`] and [`kernel`]: which recipe each conversion uses per target, and batch kernels.
//! - `jit` (feature `jit`, default), `aot` (feature `aot`), `spirv` (feature `spirv`).
//!
//! ```
//! use clconv::{reference, Extensions, Layout, Request};
//! let req = Request::parse("convert_uchar4_sat_rte(float4)", Extensions::default()).unwrap();
//! let src: Vec<u8> = [-5.0f32, 254.5, 254.6, 1.2e9].iter().flat_map(|x| x.to_le_bytes()).collect();
//! let mut dst = [0u8; 4];
//! reference::evaluate(&req, Layout::Packed, &src, &mut dst).unwrap();
//! assert_eq!(dst, [0, 254, 255, 255]);
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `jit` | on | `jit`, `arith_kernel`: batch kernels compiled in-process (executable memory, threads) |
//! | `cross-target` | off | Cranelift's aarch64, riscv64 and s390x backends besides the host's |
//! | `aot` | off | `aot`: relocatable objects with C entry points and a C header, for any target |
//! | `spirv` | off | `spirv`: SPIR-V conversion instructions and modules to requests |
//!
//! Without default features: the builder API, the reference, names, tables and kernel IR, with
//! the host's Cranelift backend only.
//!
//! # Cranelift
//!
//! clconv follows Cranelift **0.135.8** exactly (`=0.135.8`: the newest release that builds on
//! rustc 1.95) and re-exports the crates its API speaks: [`cranelift_codegen`],
//! [`cranelift_frontend`], [`cranelift_native`] and [`target_lexicon`]. Build your function
//! with these re-exports and its `Value`s, `Type`s and `FunctionBuilder` are clconv's. A
//! compiler on another Cranelift release cannot mix the two (each release's types are distinct
//! to Rust): it uses the clconv release that follows its Cranelift, or moves to 0.135.8. The
//! CHANGELOG names the Cranelift release of every clconv release.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Without the JIT, the builder API's docs still point at it (links that resolve when it is on).
#![cfg_attr(not(feature = "jit"), allow(rustdoc::broken_intra_doc_links))]

#[cfg(feature = "aot")]
#[cfg_attr(docsrs, doc(cfg(feature = "aot")))]
pub mod aot;
pub mod arith;
#[cfg(feature = "jit")]
#[cfg_attr(docsrs, doc(cfg(feature = "jit")))]
pub mod arith_kernel;
pub mod buffer;
pub mod chain;
#[cfg(feature = "jit")]
mod code_memory;
mod conversion;
mod element_conversion;
#[cfg(any(feature = "jit", feature = "aot"))]
mod fp_control;
#[cfg(feature = "jit")]
mod host;
pub mod ir_types;
#[cfg(feature = "jit")]
#[cfg_attr(docsrs, doc(cfg(feature = "jit")))]
pub mod jit;
pub mod kernel;
pub mod languages;
pub mod lower;
pub mod mx;
pub mod mx_kernel;
pub mod names;
pub mod reference;
pub mod request;
pub mod routine;
pub mod rules;
#[cfg(feature = "spirv")]
#[cfg_attr(docsrs, doc(cfg(feature = "spirv")))]
pub mod spirv;
pub use lower::table;
pub mod target;
#[cfg(feature = "jit")]
mod trap_scan;
pub mod types;

pub use request::{Builtin, Conversion, Reinterpretation, Request, RequestError};
pub use types::{Extensions, Layout, NumberKind, Rounding, ScalarType, VectorType, Width};

// The Cranelift crates clconv's public API speaks, so an embedder builds against exactly the
// release clconv follows.
pub use cranelift_codegen;
pub use cranelift_frontend;
/// `cranelift_jit` (`JITModule`), for a JIT front end: with clconv's re-exports it needs no
/// Cranelift dependency of its own (`docs/compiler-writers.md`). The whole path, from
/// `JITModule` to a converted value:
///
/// ```
/// use clconv::cranelift_codegen::ir::{types, AbiParam, InstBuilder};
/// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
/// use clconv::cranelift_jit::{JITBuilder, JITModule};
/// use clconv::cranelift_module::{default_libcall_names, Module};
/// use clconv::lower::{ElementConversion, Lowering};
/// use clconv::{rules::Rules, ScalarType::{Float, Int}};
///
/// let module = JITModule::new(JITBuilder::new(default_libcall_names())?);
/// let mut ctx = module.make_context();
/// ctx.func.signature.params.push(AbiParam::new(types::F32X4));
/// ctx.func.signature.returns.push(AbiParam::new(types::I32X4));
/// let mut fctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
/// let block = b.create_block();
/// b.append_block_params_for_function_params(block);
/// b.switch_to_block(block);
/// let x = b.block_params(block)[0];
///
/// let lowering = Lowering::for_isa(module.isa())?; // once per module
/// let wgsl = ElementConversion::new(Float, Int).rules(Rules::WGSL); // vec4<i32>(x)
/// let y = lowering.convert_value(&mut b, wgsl, x)?;
/// assert_eq!(b.func.dfg.value_type(y), types::I32X4);
/// b.ins().return_(&[y]);
/// b.seal_all_blocks();
/// b.finalize(module.target_config());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "jit")]
pub use cranelift_jit;
/// `cranelift_module` (`Module::isa()`, which [`lower::Lowering::for_isa`] takes), for a front
/// end that compiles its own functions. Depending on the same `=0.135.8` release directly works
/// as well: Cargo builds one copy.
#[cfg(any(feature = "jit", feature = "aot"))]
pub use cranelift_module;
pub use cranelift_native;
pub use target_lexicon;

/// The README's Rust examples, compiled and run as doctests so they stay true.
#[cfg(all(doctest, feature = "jit"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
