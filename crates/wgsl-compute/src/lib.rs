//! A small WGSL compute-shader compiler on Cranelift, the way a software wgpu backend compiles
//! one: naga parses and validates the shader, this crate walks naga's IR into one Cranelift
//! function per entry point, and every conversion expression (`i32(x)`, `vec4<f16>(v)`,
//! `bitcast<u32>(x)`) is lowered by clconv with WGSL's rules on the values the function holds
//! (half as Cranelift F16 lanes, bools as I8 0/1, 64-bit vectors as such), one call each. No conversion traps: a NaN or 3e9
//! gives WGSL's result, not a SIGILL.
//!
//! What it compiles: one `@compute` entry point whose only argument is
//! `@builtin(global_invocation_id)`, storage buffers of `array<T>` (T a scalar or vector of
//! `i32`, `u32`, `f32`, `f16`), and a body of assignments `dst[id.x] = EXPR;` where EXPR loads
//! from a buffer at `id.x` and converts (any nesting of `As` expressions, bool between two of
//! them: WGSL keeps bool out of storage buffers). Anything else is a
//! typed [`Error::Unsupported`] naming the construct.
//!
//! ```
//! use clconv_wgsl_compute::Shader;
//! let shader = Shader::compile(
//!     "@group(0) @binding(0) var<storage, read> src: array<f32>;
//!      @group(0) @binding(1) var<storage, read_write> dst: array<i32>;
//!      @compute @workgroup_size(64)
//!      fn main(@builtin(global_invocation_id) id: vec3<u32>) { dst[id.x] = i32(src[id.x]); }",
//! )?;
//! let src: Vec<u8> = [f32::NAN, 3e9, -1.5].iter().flat_map(|x| x.to_le_bytes()).collect();
//! let mut src = src;
//! let mut dst = vec![0u8; 12];
//! shader.run(&mut [&mut src, &mut dst], 3)?;
//! let ints: Vec<i32> = dst.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
//! assert_eq!(ints, [0, 2147483520, -1]);
//! # Ok::<(), clconv_wgsl_compute::Error>(())
//! ```

use clconv::cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Type, Value};
use clconv::cranelift_codegen::settings::{self, Configurable};
use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use clconv::languages::Language;
use clconv::lower::{LowerError, Lowering};
use clconv::ScalarType;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use naga::{Expression, Handle, Statement, TypeInner};
use std::collections::HashMap;

/// Why a shader was not compiled or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// naga refused the WGSL.
    #[error("WGSL does not parse: {0}")]
    Parse(String),
    /// naga's validator refused the module.
    #[error("WGSL does not validate: {0}")]
    Validate(String),
    /// A construct this small compiler does not compile.
    #[error("not supported by this compiler: {what}")]
    Unsupported {
        /// What, and where.
        what: String,
    },
    /// clconv refused a conversion (never expected for a validated shader).
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// Cranelift or the JIT failed.
    #[error("compiling failed: {0}")]
    Compile(String),
    /// The buffers handed to [`Shader::run`] do not fit the shader's bindings.
    #[error("{0}")]
    Buffers(String),
}

/// One storage buffer binding, in the order [`Shader::run`] takes buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// `@group`.
    pub group: u32,
    /// `@binding`.
    pub binding: u32,
    /// The variable's name.
    pub name: String,
    /// Bytes per array element (WGSL's array stride: 16 for `vec3<f32>`).
    pub stride: usize,
}

type KernelFn = unsafe extern "C" fn(*const *mut u8, u64);

/// A compiled compute shader: one invocation per `id.x` in `0..invocations`.
pub struct Shader {
    /// Always `Some` until dropped.
    module: Option<JITModule>,
    code: KernelFn,
    bindings: Vec<Binding>,
}

impl Shader {
    /// Parses, validates and compiles `wgsl`'s compute entry point.
    pub fn compile(wgsl: &str) -> Result<Shader, Error> {
        let module =
            naga::front::wgsl::parse_str(wgsl).map_err(|e| Error::Parse(e.emit_to_string(wgsl)))?;
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::SHADER_FLOAT16,
        )
        .validate(&module)
        .map_err(|e| Error::Validate(e.emit_to_string(wgsl)))?;
        let Some((index, entry)) = module
            .entry_points
            .iter()
            .enumerate()
            .find(|(_, e)| e.stage == naga::ShaderStage::Compute)
        else {
            return Err(unsupported("a module without a @compute entry point"));
        };
        check_arguments(&entry.function)?;
        let bindings = bindings(&module)?;

        let mut flags = settings::builder();
        flags.set("opt_level", "speed").map_err(compile_error)?;
        flags
            .set("use_colocated_libcalls", "false")
            .map_err(compile_error)?;
        flags.set("is_pic", "false").map_err(compile_error)?;
        let isa = clconv::cranelift_native::builder()
            .map_err(compile_error)?
            .finish(settings::Flags::new(flags))
            .map_err(compile_error)?;
        let mut jit = JITBuilder::with_isa(isa, default_libcall_names());
        for (name, f) in LIBM {
            jit.symbol(name, f as *const u8);
        }
        let mut jit_module = JITModule::new(jit);
        let mut sig = jit_module.make_signature();
        sig.params
            .push(clconv::cranelift_codegen::ir::AbiParam::new(types::I64));
        sig.params
            .push(clconv::cranelift_codegen::ir::AbiParam::new(types::I64));
        let id = jit_module
            .declare_function(&entry.name, Linkage::Local, &sig)
            .map_err(compile_error)?;
        let mut ctx = jit_module.make_context();
        ctx.func.signature = sig;
        // The lowering for the module's ISA: half comes back as F16 (the typed entry's
        // default) and bools as I8 0/1, as naga-cranelift holds them.
        let lowering = Lowering::for_isa(jit_module.isa())?;
        {
            let mut fctx = FunctionBuilderContext::new();
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let mut walker = Walker {
                module: &module,
                function: &entry.function,
                info: info.get_entry_point(index),
                bindings: &bindings,
                lowering: &lowering,
                values: HashMap::new(),
            };
            walker.build(&mut b)?;
            b.seal_all_blocks();
            b.finalize(jit_module.isa().frontend_config());
        }
        jit_module
            .define_function(id, &mut ctx)
            .map_err(compile_error)?;
        jit_module.finalize_definitions().map_err(compile_error)?;
        let address = jit_module.get_finalized_function(id);
        // SAFETY: `address` is the function just defined, (I64, I64) -> () in the host's
        // default calling convention (`extern "C"`'s); pointers are 64-bit on every host
        // cranelift-native supports.
        let code = unsafe { std::mem::transmute::<*const u8, KernelFn>(address) };
        Ok(Shader {
            module: Some(jit_module),
            code,
            bindings,
        })
    }

    /// The storage buffers, in the order [`Shader::run`] takes them (by group, then binding).
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// Runs `invocations` invocations (`id.x` from 0) on `buffers`, one per binding in
    /// [`Shader::bindings`] order, each at least `invocations` elements long. A buffer too
    /// short, or a count that differs, is an error before anything runs.
    pub fn run(&self, buffers: &mut [&mut [u8]], invocations: u32) -> Result<(), Error> {
        if buffers.len() != self.bindings.len() {
            return Err(Error::Buffers(format!(
                "the shader has {} storage bindings, but {} buffers were passed",
                self.bindings.len(),
                buffers.len()
            )));
        }
        for (binding, buffer) in self.bindings.iter().zip(buffers.iter()) {
            let needed = binding.stride * invocations as usize;
            if buffer.len() < needed {
                return Err(Error::Buffers(format!(
                    "`{}` needs {needed} bytes for {invocations} invocations ({} bytes per \
                     element), but its buffer has {}",
                    binding.name,
                    binding.stride,
                    buffer.len()
                )));
            }
        }
        let pointers: Vec<*mut u8> = buffers.iter_mut().map(|b| b.as_mut_ptr()).collect();
        // SAFETY: the code reads and writes element `id.x` (< invocations) of each binding, at
        // `id.x * stride`, within the buffer lengths checked above; the buffers are distinct
        // `&mut` slices, live for the call; the module that owns the code lives in `self`.
        unsafe { (self.code)(pointers.as_ptr(), u64::from(invocations)) };
        Ok(())
    }
}

impl Drop for Shader {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the code is only called through `self`, which is being dropped.
            unsafe { module.free_memory() };
        }
    }
}

fn unsupported(what: &str) -> Error {
    Error::Unsupported { what: what.into() }
}

fn compile_error(e: impl std::fmt::Display) -> Error {
    Error::Compile(e.to_string())
}

/// The entry point's one argument must be the global invocation id.
fn check_arguments(function: &naga::Function) -> Result<(), Error> {
    let ok = matches!(
        function.arguments.as_slice(),
        [naga::FunctionArgument {
            binding: Some(naga::Binding::BuiltIn(naga::BuiltIn::GlobalInvocationId)),
            ..
        }]
    );
    ok.then_some(()).ok_or_else(|| {
        unsupported("an entry point whose arguments are not just @builtin(global_invocation_id)")
    })
}

/// Every storage buffer of `array<T>`, sorted by (group, binding).
fn bindings(module: &naga::Module) -> Result<Vec<Binding>, Error> {
    let mut out = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let naga::AddressSpace::Storage { .. } = var.space else {
            return Err(unsupported("a global variable outside storage buffers"));
        };
        let Some(rb) = &var.binding else {
            return Err(unsupported("a storage buffer without @binding"));
        };
        let TypeInner::Array { stride, .. } = module.types[var.ty].inner else {
            return Err(unsupported("a storage buffer that is not an array"));
        };
        out.push(Binding {
            group: rb.group,
            binding: rb.binding,
            name: var.name.clone().unwrap_or_default(),
            stride: stride as usize,
        });
    }
    out.sort_by_key(|b| (b.group, b.binding));
    Ok(out)
}

/// clconv's element type of a naga scalar.
fn scalar_type(s: naga::Scalar) -> Result<ScalarType, Error> {
    let kind = match s.kind {
        naga::ScalarKind::Sint => Some(clconv::NumberKind::Signed),
        naga::ScalarKind::Uint => Some(clconv::NumberKind::Unsigned),
        naga::ScalarKind::Float => Some(clconv::NumberKind::Float),
        naga::ScalarKind::Bool => Some(clconv::NumberKind::Bool),
        _ => None,
    };
    kind.and_then(|k| ScalarType::of(k, u32::from(s.width)))
        .ok_or_else(|| unsupported(&format!("values of {s:?}")))
}

/// The element type and the Cranelift type of a value of naga type `inner` (half as F16, a
/// vec3 as 4 lanes: its padding is in the buffer's stride).
fn value_type(inner: &TypeInner) -> Result<(ScalarType, Type), Error> {
    let (scalar, lanes) = match *inner {
        TypeInner::Scalar(s) => (s, 1),
        TypeInner::Vector { size, scalar } => (scalar, (size as u32).next_power_of_two()),
        ref other => return Err(unsupported(&format!("values of type {other:?}"))),
    };
    let t = scalar_type(scalar)?;
    let lane = clconv::lower::value_shape(clconv::VectorType::scalar(t)).0;
    let lane = if t == ScalarType::Half {
        types::F16
    } else {
        lane
    };
    let ty = if lanes == 1 {
        lane
    } else {
        lane.by(lanes).expect("at most 128 bits")
    };
    Ok((t, ty))
}

/// What an evaluated expression is.
#[derive(Clone, Copy)]
enum Val {
    /// The global invocation id (only `.x` is read).
    Id,
    /// A scalar or vector value.
    Value(Value),
    /// The address of a buffer, or of one element, with the element's stride.
    Pointer { address: Value, stride: usize },
}

/// Walks one entry point's body into Cranelift IR.
struct Walker<'a> {
    module: &'a naga::Module,
    function: &'a naga::Function,
    info: &'a naga::valid::FunctionInfo,
    bindings: &'a [Binding],
    lowering: &'a Lowering,
    values: HashMap<Handle<Expression>, Val>,
}

impl Walker<'_> {
    /// `fn(buffers: *const *mut u8, invocations: u64)`: the body once per `id.x`.
    fn build(&mut self, b: &mut FunctionBuilder) -> Result<(), Error> {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (buffers, count) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let head = b.create_block();
        let body = b.create_block();
        let exit = b.create_block();
        b.append_block_param(head, types::I64);
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(head, &[zero.into()]);
        b.switch_to_block(head);
        let i = b.block_params(head)[0];
        let more = b.ins().icmp(
            clconv::cranelift_codegen::ir::condcodes::IntCC::UnsignedLessThan,
            i,
            count,
        );
        b.ins().brif(more, body, &[], exit, &[]);
        b.switch_to_block(body);
        self.statements(b, &self.function.body, buffers, i)?;
        let next = b.ins().iadd_imm_u(i, 1);
        b.ins().jump(head, &[next.into()]);
        b.switch_to_block(exit);
        b.ins().return_(&[]);
        Ok(())
    }

    fn statements(
        &mut self,
        b: &mut FunctionBuilder,
        block: &naga::Block,
        buffers: Value,
        i: Value,
    ) -> Result<(), Error> {
        for statement in block.iter() {
            match *statement {
                // Expressions are evaluated where they are used.
                Statement::Emit(_) => {}
                Statement::Block(ref inner) => self.statements(b, inner, buffers, i)?,
                Statement::Store { pointer, value } => {
                    let Val::Pointer { address, .. } = self.expr(b, pointer, buffers, i)? else {
                        return Err(unsupported(
                            "a store through something other than a buffer element",
                        ));
                    };
                    let Val::Value(v) = self.expr(b, value, buffers, i)? else {
                        return Err(unsupported("a store of something other than a value"));
                    };
                    b.ins().store(mem(), v, address, 0);
                }
                Statement::Return { value: None } => {}
                ref other => {
                    return Err(unsupported(&format!("the statement {other:?}")));
                }
            }
        }
        Ok(())
    }

    fn expr(
        &mut self,
        b: &mut FunctionBuilder,
        h: Handle<Expression>,
        buffers: Value,
        i: Value,
    ) -> Result<Val, Error> {
        if let Some(&v) = self.values.get(&h) {
            return Ok(v);
        }
        let v = match self.function.expressions[h] {
            Expression::FunctionArgument(0) => Val::Id,
            Expression::AccessIndex { base, index } => match self.expr(b, base, buffers, i)? {
                Val::Id if index == 0 => Val::Value(b.ins().ireduce(types::I32, i)),
                Val::Id => Val::Value(b.ins().iconst(types::I32, 0)),
                _ => {
                    return Err(unsupported(
                        "a component access other than id.x, id.y, id.z",
                    ))
                }
            },
            Expression::GlobalVariable(var) => {
                let binding = self.module.global_variables[var].binding;
                let slot = self
                    .bindings
                    .iter()
                    .position(|x| {
                        Some((x.group, x.binding)) == binding.as_ref().map(|r| (r.group, r.binding))
                    })
                    .ok_or_else(|| unsupported("a global variable without a binding"))?;
                let address = b.ins().load(types::I64, mem(), buffers, (8 * slot) as i32);
                Val::Pointer {
                    address,
                    stride: self.bindings[slot].stride,
                }
            }
            Expression::Access { base, index } => {
                let Val::Pointer { address, stride } = self.expr(b, base, buffers, i)? else {
                    return Err(unsupported("indexing something other than a buffer"));
                };
                let Val::Value(index) = self.expr(b, index, buffers, i)? else {
                    return Err(unsupported("an index that is not a value"));
                };
                let index = b.ins().uextend(types::I64, index);
                let offset = b.ins().imul_imm_u(index, stride as i64);
                Val::Pointer {
                    address: b.ins().iadd(address, offset),
                    stride,
                }
            }
            Expression::Load { pointer } => {
                let Val::Pointer { address, .. } = self.expr(b, pointer, buffers, i)? else {
                    return Err(unsupported(
                        "a load from something other than a buffer element",
                    ));
                };
                let (_, ty) = value_type(self.type_of(h))?;
                Val::Value(b.ins().load(ty, mem(), address, 0))
            }
            Expression::As {
                expr,
                kind,
                convert,
            } => {
                let Val::Value(x) = self.expr(b, expr, buffers, i)? else {
                    return Err(unsupported("a conversion of something other than a value"));
                };
                let (from, _) = value_type(self.type_of(expr))?;
                let (to, _) = value_type(self.type_of(h))?;
                debug_assert_eq!(
                    Some(kind),
                    self.type_of(h).scalar().map(|s| s.kind),
                    "naga's type of the conversion"
                );
                let y = match convert {
                    // WGSL's value constructor, with WGSL's rules, on the value as held.
                    Some(_) => {
                        let conv = Language::Wgsl
                            .constructor(from, to)
                            .map_err(|e| unsupported(&e.to_string()))?;
                        self.lowering.convert_value(b, conv, x)?
                    }
                    // bitcast<T>(e): the same bits.
                    None => self.lowering.reinterpret_value(b, to, x)?,
                };
                Val::Value(y)
            }
            ref other => return Err(unsupported(&format!("the expression {other:?}"))),
        };
        self.values.insert(h, v);
        Ok(v)
    }

    fn type_of(&self, h: Handle<Expression>) -> &TypeInner {
        self.info[h].ty.inner_with(&self.module.types)
    }
}

/// Buffer accesses: little-endian, within the buffers `Shader::run` checked.
fn mem() -> MemFlagsData {
    MemFlagsData::new()
        .with_notrap()
        .with_endianness(Endianness::Little)
}

/// The libm functions Cranelift calls for rounding without SSE4.1 (cranelift-jit looks them up
/// by name, which a Rust program need not export).
const LIBM: [(&str, extern "C" fn(f32) -> f32); 4] = [
    ("nearbyintf", nearbyintf),
    ("floorf", floorf),
    ("ceilf", ceilf),
    ("truncf", truncf),
];

extern "C" fn nearbyintf(x: f32) -> f32 {
    x.round_ties_even()
}
extern "C" fn floorf(x: f32) -> f32 {
    x.floor()
}
extern "C" fn ceilf(x: f32) -> f32 {
    x.ceil()
}
extern "C" fn truncf(x: f32) -> f32 {
    x.trunc()
}
