//! The builder API: lowers one conversion or reinterpretation into the caller's Cranelift
//! [`FunctionBuilder`], on the caller's values, and returns Cranelift values.
//!
//! Where each conversion class is lowered:
//! - integer -> integer: [`int_to_int`]
//! - float/half -> integer: [`float_to_int`]
//! - integer -> float/half (e.g. `convert_float_rtp(long)`): [`int_to_float`]
//! - float/half -> float/half: [`float_to_float`]
//! - the vector recipes from or to half, which combine the classes above: [`half_vector`]
//! - which recipe names which code (what `lowering-tables/` rows refer to): [`recipes`]
//!
//! What the class files share lives in modules beneath them, never in each other: the
//! bit-level half <-> float sequences ([`half`]), lane shapes, constants and vector rounding
//! ([`lanes`]), the element and vector types and constructors (`values`), and what a recipe
//! converts ([`recipes::BlockSpec`]). `tests/imports.rs` keeps the imports acyclic.
//!
//! # Value conventions
//!
//! `docs/compiler-writers.md` has them as a table, with the errors.
//!
//! **The value as a front end holds it** ([`Lowering::convert`], [`Lowering::lower_named`]): the
//! Cranelift type of the value decides the width, and the result has the matching type
//! ([`value_shape`]): `float4` (or `float3`, with a padding lane) is one F32X4 and gives an
//! I32X4 for `int`; `float2` is an F32X2 (64 bits), `char4` an I8X4 (32 bits); a value wider
//! than 128 bits comes as 128-bit parts (`double4`: two F64X2). A request whose component count
//! differs from the operand's lanes is an error ([`LowerError::LaneCount`]), never a partial
//! conversion.
//!
//! **Per element** ([`Lowering::convert_element`], and [`Lowering::lower_named`] on scalars):
//! one component in, one out, of the Cranelift type [`element_type`] gives: `char`/`uchar` I8,
//! `short`/`ushort` I16, `int`/`uint` I32, `long`/`ulong` I64, `float` F32, `double` F64.
//!
//! **Half** is taken as F16 lanes or as I16 lanes holding the binary16 bits, and given back as
//! [`Lowering::with_half_values`] says (I16 by default). Cranelift 0.135 lowers no F16
//! conversion on any backend, so clconv converts half in integer IR and only `bitcast`s F16.
//!
//! **128-bit parts, low lanes** ([`Lowering::convert_vector`], [`Lowering::reinterpret_vector`]):
//! the explicit convention for a value that sits in a larger vector: `Tn` travels as
//! [`vector_parts`]`(Tn)` 128-bit vectors (half: I16X8), components in lane order, a value
//! smaller than 128 bits (`int2`, `char4`, `double`) in the low lanes of one vector. Lanes past
//! the value's components are ignored on input and unspecified on output (a reinterpretation
//! passes the operand's bytes through, so `as_float4(int3)` sees the padding).
//!
//! # The ISA
//!
//! [`Lowering::for_isa`] takes the `&dyn TargetIsa` a `cranelift_module::Module` lends and uses
//! the vector recipes its lowering table picks. [`Lowering::without_isa`] goes lane by lane,
//! and says so in its name.
//!
//! # What is never emitted
//! - `fcvt_to_sint`/`fcvt_to_uint` (they trap on NaN and out-of-range inputs: SIGILL in a JIT).
//! - `fcvt_from_sint` I32X4 -> F64X2 and I64X2 -> F32X2 (x64 miscompiles them silently).
//! - scalar `fcvt_to_*_sat` to I8/I16 and any F16 arithmetic (x64 panics in lowering).

mod block;
pub mod boolean;
mod chain;
pub(crate) mod edges;
pub mod float_to_float;
pub mod float_to_int;
pub mod half;
pub mod half_vector;
pub mod int_to_float;
pub mod int_to_int;
pub mod lanes;
pub mod mx_block;
mod narrow;
pub mod nvfp4_block;
pub mod recipes;
pub mod rounded_arith;
mod shapes;
pub mod small_float;
pub mod table;
mod typed;
mod values;
pub mod vstore_half;

pub use crate::element_conversion::ElementConversion;
pub use shapes::{value_shape, BoolValues, HalfValues};
pub(crate) use values::{bitcast_le, int_const, zero_scalar};
pub use values::{element_type, vector_parts};

use crate::request::{Conversion, Reinterpretation, Request, RequestError};
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};
use cranelift_codegen::ir::{InstBuilder, Type, Value};
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_frontend::FunctionBuilder;
use table::IsaFeatures;

/// Why a lowering was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LowerError {
    /// A value of the wrong Cranelift type was passed.
    #[error("{what} must be a {expected} value for {request}, but it is {got}: see the value conventions in clconv::lower")]
    ValueType {
        /// Which operand.
        what: String,
        /// The request.
        request: String,
        /// The type the convention asks for.
        expected: Type,
        /// The type passed.
        got: Type,
    },
    /// The wrong number of vector parts was passed.
    #[error(
        "{request} takes its {ty} operand as {expected} Cranelift vector(s), but {got} were passed"
    )]
    PartCount {
        /// The request.
        request: String,
        /// The OpenCL operand type.
        ty: VectorType,
        /// Parts the convention asks for.
        expected: usize,
        /// Parts passed.
        got: usize,
    },
    /// The wrong number of scalar components was passed (the per-component form of
    /// [`Lowering::lower_request`]).
    #[error(
        "{request} takes its {ty} operand as {expected} scalar component(s), but {got} were passed"
    )]
    ComponentCount {
        /// The request.
        request: String,
        /// The OpenCL operand type.
        ty: VectorType,
        /// Components the operand has.
        expected: usize,
        /// Values passed.
        got: usize,
    },
    /// The name given to [`Lowering::lower_named`] is not a conversion or reinterpretation
    /// clconv lowers (the parser's message says why and how to fix it).
    #[error(transparent)]
    Name(#[from] RequestError),
    /// The per-element form was asked for a reinterpretation that changes the element count.
    #[error("{request} changes the element count, so it has no per-element form: use Lowering::reinterpret_vector")]
    NotElementwise {
        /// The request.
        request: String,
    },
    /// The operand has more (or fewer) lanes than the request has components: converting only
    /// some of them would be a silent partial conversion.
    #[error("{request} converts {expected} component(s), but the operand is {got} ({lanes} lanes): {fix}")]
    LaneCount {
        /// The request.
        request: String,
        /// Components the request converts.
        expected: usize,
        /// The operand's Cranelift type.
        got: Type,
        /// Lanes the operand carries.
        lanes: usize,
        /// What to write instead.
        fix: String,
    },
    /// The operand of a typed conversion is not a value clconv can take: lanes of another type
    /// than the conversion's source, parts of different types, or a lane count that is not an
    /// OpenCL width.
    #[error("{why}")]
    Operand {
        /// What is wrong and what to pass instead.
        why: String,
    },
    /// No lowering table covers the ISA's architecture (no longer returned by
    /// [`Lowering::for_isa`], which falls back to the per-element sequences).
    #[error("clconv has no lowering table for {triple}: the tables cover x86_64, aarch64, riscv64 and s390x; use Lowering::without_isa() to lower lane by lane")]
    NoTable {
        /// The ISA's target triple.
        triple: String,
    },
}

/// Lowers conversions into a caller's [`FunctionBuilder`].
///
/// Holds the static rounding mode (`#pragma OPENCL SELECT_ROUNDING_MODE`, rte by default) that
/// conversions to floating types without a rounding modifier follow.
///
/// ```
/// use clconv::{lower::Lowering, Extensions, Request};
/// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
/// use cranelift_codegen::{settings, verifier::verify_function};
/// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
/// use cranelift_jit::{JITBuilder, JITModule};
/// use cranelift_module::{default_libcall_names, Linkage, Module};
///
/// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
///
/// // fn(float) -> int computing convert_int_sat_rte(x), in the host's C calling convention
/// let mut sig = Signature::new(isa.default_call_conv());
/// sig.params.push(AbiParam::new(types::F32));
/// sig.returns.push(AbiParam::new(types::I32));
/// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
/// let mut ctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
/// let entry = b.create_block();
/// b.append_block_params_for_function_params(entry);
/// b.switch_to_block(entry);
/// let x = b.block_params(entry)[0];
///
/// let Request::Convert(conv) = Request::parse("convert_int_sat_rte(float)", Extensions::default()).unwrap()
/// else { unreachable!() };
/// let y = Lowering::without_isa().convert_element(&mut b, &conv, x).unwrap();
///
/// b.ins().return_(&[y]);
/// b.seal_all_blocks();
/// b.finalize(isa.frontend_config());
/// verify_function(&func, isa.flags()).unwrap();
///
/// // JIT-compile it and call it.
/// let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
/// let id = module.declare_function("to_int", Linkage::Local, &func.signature).unwrap();
/// let mut ctx = module.make_context();
/// ctx.func = func;
/// module.define_function(id, &mut ctx).unwrap();
/// module.finalize_definitions().unwrap();
/// let code = module.get_finalized_function(id);
/// // SAFETY: `code` is the function just defined: (F32) -> I32 in the host's default calling
/// // convention, which is `extern "C"`'s.
/// let to_int = unsafe { std::mem::transmute::<*const u8, extern "C" fn(f32) -> i32>(code) };
/// assert_eq!(to_int(0.5), 0); // ties to even
/// assert_eq!(to_int(2.5), 2);
/// assert_eq!(to_int(-2.5), -2);
/// assert_eq!(to_int(f32::NAN), 0); // _sat: NaN -> 0
/// assert_eq!(to_int(3e9), i32::MAX);
/// assert_eq!(to_int(-3e9), i32::MIN);
/// // SAFETY: `to_int` is not called after this.
/// unsafe { module.free_memory() };
/// ```
#[derive(Clone, Debug)]
pub struct Lowering {
    static_mode: Rounding,
    /// The extensions [`Lowering::lower_named`] parses names under.
    extensions: Extensions,
    /// The target whose lowering table picks vector recipes; `None`: lane by lane.
    target: Option<TargetVectors>,
    /// How results of half type come back, when the caller said ([`Lowering::with_half_values`]).
    /// `None`: I16 bits from the named and per-element entries, F16 from the typed entry
    /// unless its operand holds I16 halves.
    half: Option<HalfValues>,
    /// How the caller holds bools on the typed entry.
    bools: BoolValues,
}

/// The part of an ISA a lowering keeps: its table features and, for messages, its triple.
#[derive(Clone, Debug)]
struct TargetVectors {
    features: IsaFeatures,
    triple: String,
}

impl Lowering {
    /// A lowering for the ISA the caller compiles with (what `cranelift_module::Module::isa()`
    /// lends): vector conversions use the vector recipes its lowering table picks (the batch
    /// kernels' code), in the caller's rounding mode (nearest-even). The way to make a
    /// `Lowering`. An architecture without a table ([`crate::table`]; Pulley, say) gets the
    /// generic per-element sequences, correct on every target: the result says so,
    /// [`Lowering::has_vector_recipes`] is false. The `Result` stays for what may fail later;
    /// today it is always `Ok`.
    ///
    /// ```
    /// use clconv::lower::Lowering;
    /// use clconv::cranelift_codegen::settings;
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let lowering = Lowering::for_isa(&*isa)?; // `module.isa()` in a cranelift-module program
    /// assert!(lowering.has_vector_recipes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_isa(isa: &dyn TargetIsa) -> Result<Lowering, LowerError> {
        let features = IsaFeatures::of(isa).ok();
        Ok(Lowering::for_triple(isa.triple().to_string(), features))
    }

    /// The lowering for an ISA of triple `triple` whose table gives `features` (`None`: the
    /// architecture has no table, so lane by lane).
    fn for_triple(triple: String, features: Option<IsaFeatures>) -> Lowering {
        Lowering {
            target: features.map(|f| TargetVectors {
                features: f.without_rounding_control(),
                triple,
            }),
            ..Lowering::without_isa()
        }
    }

    pub(crate) fn with_features(features: IsaFeatures) -> Lowering {
        Lowering {
            target: Some(TargetVectors {
                triple: format!("{:?}", features.arch()),
                features,
            }),
            ..Lowering::without_isa()
        }
    }

    /// A lowering that knows no ISA: every vector conversion goes lane by lane through the
    /// per-element sequences (`convert_int4_sat(float4)` is 14 CLIF instructions instead of
    /// 4 with SSE4.1). Correct on every target; slow for vectors. Prefer
    /// [`Lowering::for_isa`].
    pub const fn without_isa() -> Lowering {
        Lowering {
            static_mode: Rounding::Rte,
            extensions: Extensions { fp16: false },
            target: None,
            half: None,
            bools: BoolValues::I8,
        }
    }

    /// A lowering that knows no ISA, as [`Lowering::without_isa`].
    #[deprecated(
        since = "0.2.0",
        note = "without an ISA vectors go lane by lane: use Lowering::for_isa(module.isa()), or Lowering::without_isa() to say so"
    )]
    // No `Default` on purpose: a default lowering would go lane by lane without saying so.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Lowering {
        Lowering::without_isa()
    }

    /// This lowering under `#pragma OPENCL SELECT_ROUNDING_MODE <mode>` (rte by default).
    ///
    /// ```
    /// use clconv::{lower::Lowering, Rounding};
    /// let lowering = Lowering::without_isa().with_static_mode(Rounding::Rtz);
    /// assert_eq!(lowering.rounding_mode_macro(), "rtz");
    /// ```
    pub const fn with_static_mode(mut self, mode: Rounding) -> Lowering {
        self.static_mode = mode;
        self
    }

    /// This lowering with `isa`'s vector recipes, as [`Lowering::for_isa`] gives them; an ISA
    /// of an architecture without a table leaves it lane by lane.
    #[deprecated(
        since = "0.2.0",
        note = "use Lowering::for_isa(&*isa), which takes the &dyn TargetIsa a Module lends and says when the ISA has no table"
    )]
    pub fn with_isa(self, isa: OwnedTargetIsa) -> Lowering {
        match Lowering::for_isa(&*isa) {
            Ok(with) => Lowering {
                target: with.target,
                ..self
            },
            Err(_) => self,
        }
    }

    /// True when vector conversions use the ISA's vector recipes ([`Lowering::for_isa`]), false
    /// when they go lane by lane ([`Lowering::without_isa`]).
    pub fn has_vector_recipes(&self) -> bool {
        self.target.is_some()
    }

    /// The target triple of the ISA this lowering was made for, if any.
    pub fn triple(&self) -> Option<&str> {
        self.target.as_ref().map(|t| t.triple.as_str())
    }

    /// This lowering giving half results as `half` (F16 lanes or I16 bits) on every entry;
    /// operands are taken either way. Without it, the typed entry ([`Lowering::convert`],
    /// [`Lowering::reinterpret`]) gives F16 values (I16 ones when its half operand holds I16)
    /// and the named and per-element entries give I16 bits.
    ///
    /// ```
    /// use clconv::lower::{HalfValues, Lowering};
    /// let lowering = Lowering::without_isa().with_half_values(HalfValues::F16);
    /// assert_eq!(lowering.half_values(), HalfValues::F16);
    /// assert_eq!(Lowering::without_isa().half_values(), HalfValues::Bits);
    /// ```
    pub const fn with_half_values(mut self, half: HalfValues) -> Lowering {
        self.half = Some(half);
        self
    }

    /// How half results come back from the named and per-element entries.
    pub const fn half_values(&self) -> HalfValues {
        match self.half {
            Some(h) => h,
            None => HalfValues::Bits,
        }
    }

    /// This lowering taking and giving bools on the typed entry as `bools`
    /// ([`BoolValues`]; I8 0/1 unless said).
    ///
    /// ```
    /// use clconv::lower::{BoolValues, Lowering};
    /// let lowering = Lowering::without_isa().with_bool_values(BoolValues::Mask);
    /// assert_eq!(lowering.bool_values(), BoolValues::Mask);
    /// assert_eq!(Lowering::without_isa().bool_values(), BoolValues::I8);
    /// ```
    pub const fn with_bool_values(mut self, bools: BoolValues) -> Lowering {
        self.bools = bools;
        self
    }

    /// How the typed entry holds bools.
    pub const fn bool_values(&self) -> BoolValues {
        self.bools
    }

    /// Lets [`Lowering::lower_named`] accept names under `extensions` (`half` needs
    /// [`Extensions::with_fp16`]); the explicit methods take whatever request they are given.
    ///
    /// ```
    /// use clconv::{lower::Lowering, Extensions};
    /// let lowering = Lowering::without_isa().with_extensions(Extensions::with_fp16());
    /// assert!(lowering.extensions().fp16);
    /// ```
    pub const fn with_extensions(mut self, extensions: Extensions) -> Lowering {
        self.extensions = extensions;
        self
    }

    /// The extensions [`Lowering::lower_named`] parses names under.
    pub const fn extensions(&self) -> Extensions {
        self.extensions
    }

    /// Lowers the conversion or reinterpretation `name` on the caller's values, in one call.
    ///
    /// `name` is any spelling [`Request::parse`] takes: `convert_uchar4_sat_rte(float4)`,
    /// `_Z20convert_int4_sat_rteDv4_f`, `as_float4(int4)`, `wgsl:vec4<i32>(vec4<f32>)`. The
    /// operand comes in either of two forms, and the result comes back in the same one (see
    /// [`Lowering::lower_request`]): one scalar per component, or the value as a front end
    /// holds it ([`value_shape`]).
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::Lowering;
    ///
    /// let flags = settings::Flags::new(settings::builder());
    /// let isa = clconv::cranelift_native::builder()?.finish(flags)?;
    ///
    /// // fn(F32X4) -> I8X4: convert_uchar4_sat_rte on one float4.
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.push(AbiParam::new(types::F32X4));
    /// sig.returns.push(AbiParam::new(types::I8X4));
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let colour = b.block_params(block).to_vec();
    ///
    /// let lowering = Lowering::without_isa();
    /// let bytes = lowering.lower_named(&mut b, "convert_uchar4_sat_rte(float4)", &colour)?;
    /// b.ins().return_(&bytes);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    ///
    /// // Bad names come back as typed errors with the parser's message.
    /// let mut func = Function::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let e = lowering.lower_named(&mut b, "convert_float_sat(int)", &[]).unwrap_err();
    /// assert!(e.to_string().contains("_sat"), "{e}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lower_named(
        &self,
        b: &mut FunctionBuilder,
        name: &str,
        args: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let request = Request::parse(name, self.extensions)?;
        self.lower_request(b, &request, args)
            .map_err(|e| in_callers_spelling(e, name, &request))
    }

    /// Lowers `request` on the caller's values: the explicit path of [`Lowering::lower_named`]
    /// for a caller that holds a [`Request`].
    ///
    /// The operand's form decides the result's:
    /// - **per component**: one scalar of [`element_type`] per component of the source
    ///   (`float4`: four F32 values); the result is one scalar per destination component.
    /// - **the value**: the [`value_shape`] of the source (`float4`: one F32X4, `float2` one
    ///   F32X2, `double4` two F64X2); the result is the destination's (`uchar4`: one I8X4).
    ///   An operand with more or fewer lanes than the request has components is
    ///   [`LowerError::LaneCount`], which names the request for its lanes.
    ///
    /// The two never look alike: a component is a scalar type, a value a vector. A
    /// one-component operand is a scalar, so its result comes per component (`as_char2(short)`:
    /// two I8); [`Lowering::reinterpret`] gives the I8X2.
    pub fn lower_request(
        &self,
        b: &mut FunctionBuilder,
        request: &Request,
        args: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        self.lower_request_as(b, request, args, self.half_values())
    }

    /// [`Lowering::lower_request`] with half results as `half`.
    fn lower_request_as(
        &self,
        b: &mut FunctionBuilder,
        request: &Request,
        args: &[Value],
        half: HalfValues,
    ) -> Result<Vec<Value>, LowerError> {
        let mark = values::EmitMark::here(b);
        let args: Vec<Value> = args.iter().map(|&a| shapes::half_as_bits(b, a)).collect();
        let out = self.lower_request_bits(b, request, &args)?;
        let dst = request.dst().elem;
        let out: Vec<Value> = out
            .into_iter()
            .map(|v| shapes::half_as(b, dst, half, v))
            .collect();
        // A recipe works on whole blocks and registers: what it computed for lanes the
        // caller's value does not have, and constants a path did not use, go.
        mark.remove_unused(b, &out);
        Ok(out)
    }

    /// [`Lowering::lower_request`] with half as I16 lanes on both sides.
    fn lower_request_bits(
        &self,
        b: &mut FunctionBuilder,
        request: &Request,
        args: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let per_component = args
            .first()
            .is_some_and(|&a| !b.func.dfg.value_type(a).is_vector());
        match (request, per_component) {
            (_, false) => {
                check_shape(b, request, args)?;
                let parts: Vec<Value> = args.iter().map(|&a| shapes::widen_to_128(b, a)).collect();
                let out = match request {
                    Request::Convert(c) => self.convert_vector_bits(b, c, &parts)?,
                    Request::Reinterpret(r) => self.reinterpret_vector(b, r, &parts)?,
                    Request::Chain(c) => self.chain_parts(b, c, &parts)?,
                };
                let (ty, count) = value_shape(request.dst());
                Ok(out
                    .into_iter()
                    .take(count)
                    .map(|v| shapes::narrow_from_128(b, ty, v))
                    .collect())
            }
            (Request::Convert(c), true) => {
                check_components(b, request, args)?;
                args.iter()
                    .map(|&x| self.convert_element_bits(b, c, x))
                    .collect()
            }
            (Request::Chain(c), true) => {
                check_components(b, request, args)?;
                Ok(self.chain_components(b, c, args))
            }
            (Request::Reinterpret(r), true) => {
                check_components(b, request, args)?;
                if r.src().lanes() == 1 && r.dst().lanes() == 1 {
                    return Ok(vec![self.reinterpret_element(b, r, args[0])?]);
                }
                // Through the vector form: the components into parts, the parts reinterpreted,
                // the destination's components out of them.
                let parts = components_into_parts(b, r.src(), args);
                let out = self.reinterpret_vector(b, r, &parts)?;
                Ok(components_of_parts(b, r.dst(), &out))
            }
        }
    }

    /// Changes the static rounding mode for what is lowered from now on (a pragma region).
    pub fn set_static_mode(&mut self, mode: Rounding) {
        self.static_mode = mode;
    }

    /// The current static rounding mode.
    pub const fn static_mode(&self) -> Rounding {
        self.static_mode
    }

    /// What `__ROUNDING_MODE__` expands to here: `"rte"`, `"rtz"`, `"rtp"` or `"rtn"`.
    pub const fn rounding_mode_macro(&self) -> &'static str {
        self.static_mode.rounding_mode_macro()
    }

    /// Lowers `conv` on one element `x` (see the value conventions in the module docs).
    pub fn convert_element(
        &self,
        b: &mut FunctionBuilder,
        conv: &Conversion,
        x: Value,
    ) -> Result<Value, LowerError> {
        let x = shapes::half_as_bits(b, x);
        let y = self.convert_element_bits(b, conv, x)?;
        Ok(shapes::half_as(b, conv.dst().elem, self.half_values(), y))
    }

    fn convert_element_bits(
        &self,
        b: &mut FunctionBuilder,
        conv: &Conversion,
        x: Value,
    ) -> Result<Value, LowerError> {
        let expected = element_type(conv.src().elem);
        let got = b.func.dfg.value_type(x);
        if got != expected {
            return Err(LowerError::ValueType {
                what: "the operand".into(),
                request: conv.to_string(),
                expected,
                got,
            });
        }
        Ok(emit_element(b, conv, self.static_mode, x))
    }

    /// Lowers `conv` on one OpenCL vector carried in `parts` (see [`vector_parts`]).
    ///
    /// With an ISA ([`Lowering::with_isa`]) whose table picks a vector recipe for `conv`, the
    /// parts go through that recipe in whole blocks (padded with zero vectors: float4 -> uchar4
    /// converts one F32X4 and three zero ones into one I8X16 and keeps its low four lanes).
    /// Otherwise each component goes through the per-element sequence.
    pub fn convert_vector(
        &self,
        b: &mut FunctionBuilder,
        conv: &Conversion,
        parts: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let parts: Vec<Value> = parts.iter().map(|&p| shapes::half_as_bits(b, p)).collect();
        let out = self.convert_vector_bits(b, conv, &parts)?;
        let dst = conv.dst().elem;
        Ok(out
            .into_iter()
            .map(|v| shapes::half_as(b, dst, self.half_values(), v))
            .collect())
    }

    fn convert_vector_bits(
        &self,
        b: &mut FunctionBuilder,
        conv: &Conversion,
        parts: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let (src_vec, count) = vector_parts(conv.src());
        check_parts(b, &conv.to_string(), conv.src(), parts, src_vec, count)?;
        if let Some(emit) = self.vector_recipe(conv) {
            return Ok(self.convert_in_blocks(b, conv, emit, parts));
        }
        let (dst_vec, dst_count) = vector_parts(conv.dst());
        let src_per = src_vec.lane_count() as usize;
        let dst_per = dst_vec.lane_count() as usize;
        let dst_lane = dst_vec.lane_type();
        let zero = zero_scalar(b, dst_lane);
        let mut out: Vec<Value> = (0..dst_count)
            .map(|_| b.ins().splat(dst_vec, zero))
            .collect();
        for lane in 0..conv.src().lanes() {
            let x = b
                .ins()
                .extractlane(parts[lane / src_per], (lane % src_per) as u8);
            let y = emit_element(b, conv, self.static_mode, x);
            let part = lane / dst_per;
            out[part] = b.ins().insertlane(out[part], y, (lane % dst_per) as u8);
        }
        Ok(out)
    }

    fn spec(&self, conv: &Conversion) -> recipes::BlockSpec {
        recipes::BlockSpec {
            src: conv.src().elem,
            dst: conv.dst().elem,
            saturate: conv.saturate(),
            rounding: conv.effective_rounding(self.static_mode),
            rules: conv.rules(),
        }
    }

    /// The vector recipe the ISA's table picks for `conv`, if any.
    fn vector_recipe(&self, conv: &Conversion) -> Option<recipes::EmitBlock> {
        let target = self.target.as_ref()?;
        if conv.src().elem == conv.dst().elem
            || !edges::vector_recipes_serve(conv.rules(), conv.dst().elem)
        {
            return None;
        }
        let row = target
            .features
            .choose(&table::Key::of(&self.spec(conv)))
            .ok()?;
        match row.recipe.body {
            recipes::Body::Vector(emit) => Some(emit),
            _ => None,
        }
    }

    fn convert_in_blocks(
        &self,
        b: &mut FunctionBuilder,
        conv: &Conversion,
        emit: recipes::EmitBlock,
        parts: &[Value],
    ) -> Vec<Value> {
        let spec = self.spec(conv);
        let per_block = spec.block_elements();
        let k_in = per_block * spec.src.bytes() / 16;
        let (src_vec, _) = vector_parts(conv.src());
        let (dst_vec, dst_count) = vector_parts(conv.dst());
        let mut padded = parts.to_vec();
        // The padding vector only where a block is short: built unconditionally it was dead
        // IR (`iconst`, `splat`) in every conversion whose parts fill their blocks.
        if !padded.len().is_multiple_of(k_in) {
            let zero_bits = lanes::splat_bits(b, src_vec, 0);
            while !padded.len().is_multiple_of(k_in) {
                padded.push(zero_bits);
            }
        }
        let mut out = Vec::new();
        for block in padded.chunks(k_in) {
            let block = edges::block_inputs(b, &spec, block);
            let outputs = emit(b, &spec, &block);
            for v in edges::block(b, &spec, outputs) {
                out.push(bitcast_le(b, dst_vec, v));
            }
        }
        out.truncate(dst_count);
        out
    }

    /// Lowers `as_<dst>(<src>)` on one OpenCL vector carried in `parts` (see [`vector_parts`]):
    /// the same bytes, seen as the destination's lanes.
    pub fn reinterpret_vector(
        &self,
        b: &mut FunctionBuilder,
        r: &Reinterpretation,
        parts: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let parts: Vec<Value> = parts.iter().map(|&p| shapes::half_as_bits(b, p)).collect();
        let (src_vec, count) = vector_parts(r.src());
        check_parts(b, &r.to_string(), r.src(), &parts, src_vec, count)?;
        let (dst_vec, _) = vector_parts(r.dst());
        Ok(parts
            .iter()
            .map(|&p| {
                let v = bitcast_le(b, dst_vec, p);
                shapes::half_as(b, r.dst().elem, self.half_values(), v)
            })
            .collect())
    }

    /// Lowers `as_<dst>(<src>)` on one scalar element, for the pairs with one component on each
    /// side (`as_float(int)`, `as_ushort(half)`).
    pub fn reinterpret_element(
        &self,
        b: &mut FunctionBuilder,
        r: &Reinterpretation,
        x: Value,
    ) -> Result<Value, LowerError> {
        if r.src().lanes() != 1 || r.dst().lanes() != 1 {
            return Err(LowerError::NotElementwise {
                request: r.to_string(),
            });
        }
        let x = shapes::half_as_bits(b, x);
        let expected = element_type(r.src().elem);
        let got = b.func.dfg.value_type(x);
        if got != expected {
            return Err(LowerError::ValueType {
                what: "the operand".into(),
                request: r.to_string(),
                expected,
                got,
            });
        }
        let y = bitcast_le(b, element_type(r.dst().elem), x);
        Ok(shapes::half_as(b, r.dst().elem, self.half_values(), y))
    }
}

/// `components` (one scalar per component of `ty`) in the lanes of `ty`'s 128-bit parts, the
/// lanes past them zero.
pub(crate) fn components_into_parts(
    b: &mut FunctionBuilder,
    ty: VectorType,
    components: &[Value],
) -> Vec<Value> {
    let (vec, count) = vector_parts(ty);
    let per = vec.lane_count() as usize;
    let mut parts: Vec<Value> = (0..count).map(|_| lanes::splat_bits(b, vec, 0)).collect();
    for (i, &x) in components.iter().enumerate() {
        parts[i / per] = b.ins().insertlane(parts[i / per], x, (i % per) as u8);
    }
    parts
}

/// The components of `ty` out of its 128-bit parts, one scalar each.
pub(crate) fn components_of_parts(
    b: &mut FunctionBuilder,
    ty: VectorType,
    parts: &[Value],
) -> Vec<Value> {
    let (vec, _) = vector_parts(ty);
    let per = vec.lane_count() as usize;
    (0..ty.lanes())
        .map(|i| b.ins().extractlane(parts[i / per], (i % per) as u8))
        .collect()
}

/// Checks the vector form of `request`'s operand: exactly the source's [`value_shape`], so that
/// no lane is left out silently.
fn check_shape(b: &FunctionBuilder, request: &Request, args: &[Value]) -> Result<(), LowerError> {
    let src = request.src();
    let (expected, count) = value_shape(src);
    let types: Vec<Type> = args.iter().map(|&a| b.func.dfg.value_type(a)).collect();
    if types.len() == count && types.iter().all(|&t| t == expected) {
        return Ok(());
    }
    let lanes: usize = types.iter().map(|t| t.lane_count() as usize).sum();
    let same_lanes = types.iter().all(|t| t.lane_type() == expected.lane_type());
    let components = src.width.storage_lanes();
    if types.is_empty() || !same_lanes || lanes == components {
        // A type mismatch, not a count mismatch: name the type the convention asks for.
        let (i, &got) = types
            .iter()
            .enumerate()
            .find(|(_, &t)| t != expected)
            .unwrap_or((0, &expected));
        if count != types.len() {
            return Err(LowerError::PartCount {
                request: request.to_string(),
                ty: src,
                expected: count,
                got: types.len(),
            });
        }
        return Err(LowerError::ValueType {
            what: format!("part {i} of the operand"),
            request: request.to_string(),
            expected,
            got,
        });
    }
    let mut fix = match (request, Width::from_lanes(lanes)) {
        (Request::Convert(c), Some(w)) => format!(
            "to convert all {lanes} lanes, ask for {}; for some of them, extractlane those first",
            c.with_width(w)
        ),
        _ => format!("pass a {expected} value (extractlane or shuffle the lanes you mean)"),
    };
    if lanes > components {
        fix.push_str(
            "; a value in the low lanes of 128-bit vectors goes through Lowering::convert_vector \
             or Lowering::reinterpret_vector, which take that convention explicitly",
        );
    }
    Err(LowerError::LaneCount {
        request: request.to_string(),
        expected: components,
        got: types.first().copied().unwrap_or(expected),
        lanes,
        fix,
    })
}

/// An error of a request named in a language's spelling (`wgsl:vec4<i32>(vec2f)`), said in
/// that spelling: the name as the caller wrote it in place of the OpenCL one, and for a lane
/// count, the fix as the language spells the request for the operand's lanes, when it has one.
fn in_callers_spelling(mut e: LowerError, name: &str, request: &Request) -> LowerError {
    let Some((prefix, _)) = crate::languages::split(name) else {
        return e;
    };
    if let LowerError::LaneCount { lanes, fix, .. } = &mut e {
        let language = crate::languages::Language::from_prefix(&prefix.to_ascii_lowercase());
        let wanted = match (request, Width::from_lanes(*lanes)) {
            (Request::Convert(c), Some(w)) => Some(Request::Convert(c.with_width(w))),
            _ => None,
        };
        let spelled = language.zip(wanted).and_then(|(l, r)| {
            l.spellings()
                .into_iter()
                .find(|(_, s)| *s == r)
                .map(|(s, _)| s)
        });
        if let Some(s) = spelled {
            *fix = format!(
                "to convert all {lanes} lanes, ask for {s}; for some of them, extractlane those \
                 first"
            );
        }
    }
    match &mut e {
        LowerError::LaneCount { request, .. }
        | LowerError::ValueType { request, .. }
        | LowerError::PartCount { request, .. }
        | LowerError::ComponentCount { request, .. }
        | LowerError::NotElementwise { request } => *request = name.trim().to_string(),
        _ => {}
    }
    e
}

/// Checks the per-component form of `request`'s operand: one scalar of the element type per
/// component.
fn check_components(
    b: &FunctionBuilder,
    request: &Request,
    args: &[Value],
) -> Result<(), LowerError> {
    let ty = request.src();
    if args.len() != ty.lanes() {
        return Err(LowerError::ComponentCount {
            request: request.to_string(),
            ty,
            expected: ty.lanes(),
            got: args.len(),
        });
    }
    let expected = element_type(ty.elem);
    for (i, &x) in args.iter().enumerate() {
        let got = b.func.dfg.value_type(x);
        if got != expected {
            return Err(LowerError::ValueType {
                what: format!("component {i} of the operand"),
                request: request.to_string(),
                expected,
                got,
            });
        }
    }
    Ok(())
}

fn check_parts(
    b: &FunctionBuilder,
    request: &str,
    ty: VectorType,
    parts: &[Value],
    expected: Type,
    count: usize,
) -> Result<(), LowerError> {
    if parts.len() != count {
        return Err(LowerError::PartCount {
            request: request.into(),
            ty,
            expected: count,
            got: parts.len(),
        });
    }
    for (i, &p) in parts.iter().enumerate() {
        let got = b.func.dfg.value_type(p);
        if got != expected {
            return Err(LowerError::ValueType {
                what: format!("part {i} of the operand"),
                request: request.into(),
                expected,
                got,
            });
        }
    }
    Ok(())
}

/// Emits the per-element sequence for `conv` (half as I16 bits); the one dispatch on the
/// conversion class.
pub(crate) fn emit_element(
    b: &mut FunctionBuilder,
    conv: &Conversion,
    static_mode: Rounding,
    x: Value,
) -> Value {
    let rules = conv.rules();
    if !rules.changes_floats() {
        return emit_rounded(b, conv, static_mode, x);
    }
    let (src, dst) = (conv.src().elem, conv.dst().elem);
    if rules.float_result == crate::rules::FloatResult::Magnitude {
        return edges::e8m0_of_magnitude(b, |b, x| emit_rounded(b, conv, static_mode, x), x);
    }
    // PTX's float rules around the conversion: the operand flushed, the conversion, the
    // result flushed and clamped.
    let flush = rules.flush_float_subnormals;
    let x = if flush && src == ScalarType::Float {
        edges::flush_float_subnormal(b, x)
    } else if flush && (src, dst) == (ScalarType::Double, ScalarType::Float) {
        edges::flush_below_float_min(b, x)
    } else {
        x
    };
    // Ties away from zero: only float -> tf32 keeps the rule (`Rules::normalised`).
    let y = if rules.ties_away {
        narrow::tf32_from_f32_ties_away(b, x, conv.saturate())
    } else {
        emit_rounded(b, conv, static_mode, x)
    };
    let y = if flush && dst == ScalarType::Float {
        edges::flush_float_subnormal(b, y)
    } else {
        y
    };
    edges::float_result(b, rules.float_result, dst, y)
}

/// [`emit_element`] without the float rules.
fn emit_rounded(
    b: &mut FunctionBuilder,
    conv: &Conversion,
    static_mode: Rounding,
    x: Value,
) -> Value {
    let src = conv.src().elem;
    let dst = conv.dst().elem;
    if src == dst {
        // convert_T(T) is the identity on the bits, NaN payloads included (SPEC.md).
        return x;
    }
    if src.is_bool() || dst.is_bool() {
        return boolean::emit(b, src, dst, x);
    }
    let rounding = conv.effective_rounding(static_mode);
    match (src.is_float(), dst.is_float()) {
        (false, false) => int_to_int::emit(b, src, dst, conv.saturate(), x),
        (true, false) => {
            let y = float_to_int::emit(b, src, dst, rounding, x);
            let spec = recipes::BlockSpec {
                src,
                dst,
                saturate: conv.saturate(),
                rounding,
                rules: conv.rules(),
            };
            edges::element_from(b, &spec, x, y)
        }
        (false, true) => int_to_float::emit(b, src, dst, rounding, conv.saturate(), x),
        (true, true) => float_to_float::emit(b, src, dst, rounding, conv.saturate(), x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ISA of an architecture without a table (no such ISA is built in this crate: Pulley
    /// needs Cranelift's `pulley` feature) gets the lane-by-lane lowering, which says so.
    #[test]
    fn an_isa_without_a_table_lowers_lane_by_lane() {
        let lowering = Lowering::for_triple("pulley64-unknown-unknown".into(), None);
        assert!(!lowering.has_vector_recipes());
        assert_eq!(lowering.triple(), None);
        // The host's ISA has a table, and the same path keeps it.
        let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
        let isa = cranelift_native::builder().unwrap().finish(flags).unwrap();
        let with = Lowering::for_triple(isa.triple().to_string(), IsaFeatures::of(&*isa).ok());
        assert!(with.has_vector_recipes());
        assert_eq!(with.triple(), Some(isa.triple().to_string().as_str()));
    }
}
