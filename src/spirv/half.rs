//! OpenCL.std's half loads and stores: `vstore_half_r`, `vload_halfn`, ... as clconv's
//! [`Lowering::vstore_halfn`] and [`Lowering::vload_halfn`].
//!
//! The table of the nine instructions and their rules are in the `spirv` module docs.

use super::{SpirvError, SpirvType};
use crate::lower::{vector_parts, Lowering};
use crate::request::Conversion;
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use std::fmt;

/// The name of the extended instruction set the half loads and stores belong to.
pub const OPENCL_STD: &str = "OpenCL.std";

/// The `OpenCL.std` extended instructions that store `float`/`double` as half or load half as
/// `float`, numbered as in that set.
///
/// ```
/// use clconv::spirv::HalfOp;
/// assert_eq!(HalfOp::VstoreHalfR as u32, 176);
/// assert_eq!(HalfOp::from_number(179), Some(HalfOp::VloadaHalfn));
/// assert_eq!(HalfOp::from_number(172), None); // vstoren: a plain store, no conversion
/// assert_eq!(HalfOp::VstoreaHalfnR.name(), "vstorea_halfn_r");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HalfOp {
    /// `vload_half`: one half as a `float`.
    VloadHalf = 173,
    /// `vload_halfn`: `n` halves as a `floatn`.
    VloadHalfn = 174,
    /// `vstore_half`: one `float`/`double` as half, nearest even.
    VstoreHalf = 175,
    /// `vstore_half_r`: one `float`/`double` as half, by a rounding-mode operand.
    VstoreHalfR = 176,
    /// `vstore_halfn`: a `floatn`/`doublen` as `n` halves, nearest even.
    VstoreHalfn = 177,
    /// `vstore_halfn_r`: a `floatn`/`doublen` as `n` halves, by a rounding-mode operand.
    VstoreHalfnR = 178,
    /// `vloada_halfn`: `n` halves (at a stride of 4 for `n = 3`) as a `floatn`.
    VloadaHalfn = 179,
    /// `vstorea_halfn`: a `floatn`/`doublen` as `n` halves (stride 4 for `n = 3`), nearest even.
    VstoreaHalfn = 180,
    /// `vstorea_halfn_r`: as `vstorea_halfn`, by a rounding-mode operand.
    VstoreaHalfnR = 181,
}

impl HalfOp {
    /// All nine, in number order.
    pub const ALL: [HalfOp; 9] = [
        HalfOp::VloadHalf,
        HalfOp::VloadHalfn,
        HalfOp::VstoreHalf,
        HalfOp::VstoreHalfR,
        HalfOp::VstoreHalfn,
        HalfOp::VstoreHalfnR,
        HalfOp::VloadaHalfn,
        HalfOp::VstoreaHalfn,
        HalfOp::VstoreaHalfnR,
    ];

    /// The instruction numbered `number` in `OpenCL.std`, if it is one of the nine.
    pub fn from_number(number: u32) -> Option<HalfOp> {
        HalfOp::ALL.into_iter().find(|op| *op as u32 == number)
    }

    /// The `OpenCL.std` name: `"vstore_half_r"`.
    pub const fn name(self) -> &'static str {
        match self {
            HalfOp::VloadHalf => "vload_half",
            HalfOp::VloadHalfn => "vload_halfn",
            HalfOp::VstoreHalf => "vstore_half",
            HalfOp::VstoreHalfR => "vstore_half_r",
            HalfOp::VstoreHalfn => "vstore_halfn",
            HalfOp::VstoreHalfnR => "vstore_halfn_r",
            HalfOp::VloadaHalfn => "vloada_halfn",
            HalfOp::VstoreaHalfn => "vstorea_halfn",
            HalfOp::VstoreaHalfnR => "vstorea_halfn_r",
        }
    }

    /// A store (`vstore*`), not a load.
    pub const fn is_store(self) -> bool {
        !matches!(
            self,
            HalfOp::VloadHalf | HalfOp::VloadHalfn | HalfOp::VloadaHalfn
        )
    }

    /// An aligned form (`vloada_halfn`, `vstorea_halfn[_r]`): 3 components at a stride of 4.
    pub const fn is_aligned(self) -> bool {
        matches!(
            self,
            HalfOp::VloadaHalfn | HalfOp::VstoreaHalfn | HalfOp::VstoreaHalfnR
        )
    }

    /// Takes a rounding-mode operand (the `_r` forms).
    pub const fn takes_rounding(self) -> bool {
        matches!(
            self,
            HalfOp::VstoreHalfR | HalfOp::VstoreHalfnR | HalfOp::VstoreaHalfnR
        )
    }

    /// A vector form (`..._halfn`): the value may have several components.
    pub const fn is_vector(self) -> bool {
        !matches!(
            self,
            HalfOp::VloadHalf | HalfOp::VstoreHalf | HalfOp::VstoreHalfR
        )
    }

    /// The operands after the instruction number, as the grammar lists them.
    pub(crate) const fn operand_names(self) -> &'static str {
        match (self.is_store(), self.takes_rounding(), self.is_vector()) {
            (true, true, _) => "data, offset, p, mode",
            (true, false, _) => "data, offset, p",
            (false, _, true) => "offset, p, n",
            (false, _, false) => "offset, p",
        }
    }

    /// The values [`lower_half`] takes, in order.
    const fn value_operands(self) -> &'static str {
        if self.is_store() {
            "the data (a scalar, its components or its vector parts), the offset and the pointer"
        } else {
            "the offset and the pointer"
        }
    }
}

impl fmt::Display for HalfOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One `OpenCL.std` half load or store, as a module states it:
/// `%id = OpExtInst %type %opencl_std <number> operands`.
///
/// [`super::Module`] finds these; an embedder with its own SPIR-V reader fills one in.
/// [`HalfInstruction::access`] says what it does in OpenCL C's terms, or why clconv does not
/// lower it.
///
/// ```
/// use clconv::spirv::{HalfInstruction, HalfOp, SpirvType};
/// use clconv::Rounding;
/// // %20 = OpExtInst %void %1 vstore_half_r %19 %17 %14 RTZ, %19 a float
/// let inst = HalfInstruction {
///     id: 20,
///     number: HalfOp::VstoreHalfR as u32,
///     value_type: SpirvType::float(32),
///     n: None,
///     rounding: Some(Rounding::Rtz),
/// };
/// assert_eq!(inst.access().unwrap().to_string(), "vstore_half_rtz(float)");
///
/// // %125 = OpExtInst %v3float %1 vloada_halfn %124 %120 3
/// let load = HalfInstruction {
///     id: 125,
///     number: HalfOp::VloadaHalfn as u32,
///     value_type: SpirvType::float(32).vector(3),
///     n: Some(3),
///     rounding: None,
/// };
/// assert_eq!(load.access().unwrap().to_string(), "vloada_half3");
///
/// // OpenCL C's vload_half gives float; a double result is not something clconv lowers.
/// let double = HalfInstruction { value_type: SpirvType::float(64).vector(3), ..load };
/// let e = double.access().unwrap_err();
/// assert!(e.to_string().starts_with("%125 (vloada_halfn)"), "{e}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HalfInstruction {
    /// The result id (a store's result is `%void` but still has one).
    pub id: u32,
    /// The `OpenCL.std` instruction number ([`HalfOp`] names the ones clconv lowers).
    pub number: u32,
    /// A store's data operand's type; a load's result type.
    pub value_type: SpirvType,
    /// The literal `n` operand of `vload_halfn` and `vloada_halfn`; `None` for the others.
    pub n: Option<u32>,
    /// The rounding-mode operand of the `_r` stores; `None` for the others.
    pub rounding: Option<Rounding>,
}

/// What a half load or store does, in OpenCL C's terms: `vstore_half4_rtz(float4)`,
/// `vloada_half3`.
///
/// ```
/// use clconv::spirv::HalfAccess;
/// use clconv::{Rounding, ScalarType, VectorType, Width};
/// let store = HalfAccess {
///     store: true,
///     aligned: false,
///     ty: VectorType::new(ScalarType::Double, Width::W2),
///     rounding: Some(Rounding::Rtp),
/// };
/// assert_eq!(store.to_string(), "vstore_half2_rtp(double2)");
/// // Each component goes through convert_half_rtp(double).
/// assert_eq!(store.conversion().to_string(), "convert_half2_rtp(double2)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HalfAccess {
    /// `vstore_half...` (else `vload_half...`).
    pub store: bool,
    /// The aligned form (`vstorea_halfn`, `vloada_halfn`): a 3-component value at a stride
    /// of 4 halves.
    pub aligned: bool,
    /// The value's type: a store's data (`float` or `double`), a load's result (`float`).
    pub ty: VectorType,
    /// A store's rounding mode; `None`: nearest even (a store without `_r`, or a load, which
    /// is exact).
    pub rounding: Option<Rounding>,
}

impl HalfAccess {
    /// The conversion the access does on its value: `convert_halfn[_mode](floatn)` for a store,
    /// `convert_floatn(halfn)` for a load (exact). Its results are the halves stored or the
    /// floats loaded.
    pub fn conversion(&self) -> Conversion {
        let half = VectorType::new(ScalarType::Half, self.ty.width);
        let (src, dst) = if self.store {
            (self.ty, half)
        } else {
            (half, self.ty)
        };
        Conversion::new(src, dst, false, self.rounding, Extensions::with_fp16())
            .expect("float/double <-> half is a conversion with cl_khr_fp16")
    }
}

impl fmt::Display for HalfAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = match (self.store, self.aligned) {
            (true, false) => "vstore_half",
            (true, true) => "vstorea_half",
            (false, false) => "vload_half",
            (false, true) => "vloada_half",
        };
        f.write_str(base)?;
        if self.ty.width != Width::W1 {
            write!(f, "{}", self.ty.lanes())?;
        }
        if self.store {
            let mode = self.rounding.map_or("", Rounding::suffix);
            write!(f, "{mode}({})", self.ty)?;
        }
        Ok(())
    }
}

impl HalfInstruction {
    /// The instruction, or the error that says this number is not one of the nine.
    pub fn op(&self) -> Result<HalfOp, SpirvError> {
        HalfOp::from_number(self.number).ok_or(SpirvError::NotAHalfAccess {
            id: self.id,
            number: self.number,
        })
    }

    /// What the instruction does, or why clconv does not lower it: a value type other than
    /// `float`/`double` (stores) or `float` (loads) with 1, 2, 3, 4, 8 or 16 components, more
    /// than one component on a scalar form, an `n` operand that disagrees with the result type,
    /// a rounding mode on a form without one or none on an `_r` form.
    pub fn access(&self) -> Result<HalfAccess, SpirvError> {
        let op = self.op()?;
        let id = self.id;
        let unsupported = |why: String| SpirvError::HalfAccessUnsupported { id, op, why };
        let ty = self.value_type;
        let role = if op.is_store() {
            "the data operand's type"
        } else {
            "the result type"
        };
        let width = Width::from_lanes(ty.components as usize)
            .filter(|_| ty.components != 0)
            .ok_or_else(|| {
                unsupported(format!(
                    "{role} {ty} has {} components; OpenCL vectors have 2, 3, 4, 8 or 16",
                    ty.components
                ))
            })?;
        if !op.is_vector() && width != Width::W1 {
            return Err(unsupported(format!(
                "{role} {ty} is a vector; {op} takes a scalar (the vector form is {op}n)",
                op = op.name().trim_end_matches("_r")
            )));
        }
        let elem = match (ty.scalar, op.is_store()) {
            (super::Scalar::Float { width: 32 }, _) => ScalarType::Float,
            (super::Scalar::Float { width: 64 }, true) => ScalarType::Double,
            (_, true) => {
                return Err(unsupported(format!(
                    "{role} is {ty}; a half store converts float or double"
                )))
            }
            (_, false) => {
                return Err(unsupported(format!(
                    "{role} is {ty}; clconv lowers half loads to float (OpenCL C's vload_half \
                     gives float)"
                )))
            }
        };
        if !op.is_store() {
            let expected = if op.is_vector() {
                Some(ty.components)
            } else {
                None
            };
            if self.n != expected {
                return Err(unsupported(match (self.n, expected) {
                    (Some(n), Some(c)) => format!(
                        "the n operand is {n} but the result type {ty} has {c} component(s)"
                    ),
                    (None, Some(_)) => format!("{op} without its n operand"),
                    (Some(n), None) => format!("{op} takes no n operand, but one ({n}) is given"),
                    (None, None) => unreachable!("equal"),
                }));
            }
        } else if let Some(n) = self.n {
            return Err(unsupported(format!(
                "a store takes no n operand, but one ({n}) is given"
            )));
        }
        match (op.takes_rounding(), self.rounding) {
            (true, None) => {
                return Err(unsupported(format!(
                    "{op} without its rounding-mode operand"
                )))
            }
            (false, Some(r)) => {
                return Err(unsupported(format!(
                    "{op} takes no rounding mode, but one ({}) is given",
                    &r.suffix()[1..]
                )))
            }
            _ => {}
        }
        Ok(HalfAccess {
            store: op.is_store(),
            aligned: op.is_aligned(),
            ty: VectorType::new(elem, width),
            rounding: self.rounding,
        })
    }
}

/// Lowers the half load or store `inst` into `b`, in one call.
///
/// The operands come in SPIR-V's order:
/// - a store: the data, then the offset, then the pointer. The data is one scalar per
///   component ([`crate::lower::element_type`]: F32 or F64) or the value's 128-bit vector parts
///   ([`crate::lower::vector_parts`]: a `float4` is one F32X4, a `double3` two F64X2; a scalar's
///   part has it in lane 0); the result is empty.
/// - a load: the offset, then the pointer; the result is one F32 for `vload_half`, else the
///   `floatn`'s vector parts (F32X4s, unused lanes zero; `extractlane` gives components).
///
/// The pointer is an integer address (I64 on a 64-bit target), the offset an integer of the
/// pointer's type (`size_t`). The addresses are OpenCL C's: `p + 2 * offset * n` bytes, with
/// `n = 4` for a 3-component aligned form. A store without a rounding mode rounds to nearest
/// even whatever `lowering`'s static rounding mode is (SPIR-V has none). Half needs no
/// extension here: the memory is half, the values are `float`/`double`.
///
/// ```
/// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
/// use clconv::cranelift_codegen::{settings, verifier::verify_function};
/// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
/// use clconv::lower::Lowering;
/// use clconv::spirv::{self, HalfInstruction, HalfOp, SpirvType};
/// use clconv::Rounding;
///
/// let flags = settings::Flags::new(settings::builder());
/// let isa = clconv::cranelift_native::builder()?.finish(flags)?;
///
/// // %92 = OpExtInst %void %1 vstore_halfn_r %91 %89 %86 RTE: vstore_half4_rte(x, i, p)
/// let inst = HalfInstruction {
///     id: 92,
///     number: HalfOp::VstoreHalfnR as u32,
///     value_type: SpirvType::float(32).vector(4),
///     n: None,
///     rounding: Some(Rounding::Rte),
/// };
/// let mut sig = Signature::new(isa.default_call_conv());
/// for ty in [types::F32X4, types::I64, types::I64] {
///     sig.params.push(AbiParam::new(ty));
/// }
/// let mut func = Function::with_name_signature(Default::default(), sig);
/// let mut ctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
/// let block = b.create_block();
/// b.append_block_params_for_function_params(block);
/// b.switch_to_block(block);
/// let x_i_p = b.block_params(block).to_vec();
///
/// let none = spirv::lower_half(&Lowering::without_isa(), &mut b, &inst, &x_i_p)?;
/// assert!(none.is_empty());
/// b.ins().return_(&[]);
/// b.seal_all_blocks();
/// b.finalize(isa.frontend_config());
/// verify_function(&func, isa.flags())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lower_half(
    lowering: &Lowering,
    b: &mut FunctionBuilder,
    inst: &HalfInstruction,
    args: &[Value],
) -> Result<Vec<Value>, SpirvError> {
    let access = inst.access()?;
    let op = inst.op()?;
    let wrap = |source| SpirvError::LowerHalf {
        id: inst.id,
        access,
        source,
    };
    // A store: the data (at least one value), offset, p; a load: offset, p.
    let fits = if access.store {
        args.len() >= 3
    } else {
        args.len() == 2
    };
    if !fits {
        return Err(SpirvError::HalfOperandCount {
            id: inst.id,
            op,
            expected: op.value_operands(),
            got: args.len(),
        });
    }
    let (value, rest) = args.split_at(args.len() - 2);
    let (offset, ptr) = (rest[0], rest[1]);
    if !access.store {
        let width = access.ty.width;
        if access.aligned && width == Width::W3 {
            // vloada_half3 reads at p + 2 * 4 * offset: the address computed here, the
            // unaligned load at offset 0 from it.
            let at = aligned_address(b, ptr, offset).map_err(wrap)?;
            let ptr_ty = b.func.dfg.value_type(ptr);
            let zero = b.ins().iconst(ptr_ty, 0);
            return lowering.vload_halfn(b, width, at, zero).map_err(wrap);
        }
        return lowering.vload_halfn(b, width, ptr, offset).map_err(wrap);
    }
    let parts = store_parts(b, access, value).map_err(wrap)?;
    // No rounding operand: nearest even, whatever the static mode (SPIR-V has none).
    let rte;
    let lowering = if access.rounding.is_none() && lowering.static_mode() != Rounding::Rte {
        let mut l = lowering.clone();
        l.set_static_mode(Rounding::Rte);
        rte = l;
        &rte
    } else {
        lowering
    };
    lowering
        .vstore_halfn(
            b,
            access.ty,
            access.rounding,
            &parts,
            ptr,
            offset,
            access.aligned,
        )
        .map(|()| Vec::new())
        .map_err(wrap)
}

/// A store's data in the form [`Lowering::vstore_halfn`] takes: one scalar for a scalar (taken
/// out of lane 0 of its 128-bit part if it comes as one), else the vector parts (components
/// gathered into them).
fn store_parts(
    b: &mut FunctionBuilder,
    access: HalfAccess,
    value: &[Value],
) -> Result<Vec<Value>, crate::lower::LowerError> {
    let ty = access.ty;
    let (part_ty, count) = vector_parts(ty);
    let types: Vec<types::Type> = value.iter().map(|&v| b.func.dfg.value_type(v)).collect();
    if ty.lanes() == 1 {
        if let [v] = value {
            if types[0] == part_ty {
                return Ok(vec![b.ins().extractlane(*v, 0)]);
            }
        }
        return Ok(value.to_vec());
    }
    let per_component = value.len() == ty.lanes() && types.iter().all(|t| !t.is_vector());
    if !per_component {
        return Ok(value.to_vec());
    }
    let elem = crate::lower::element_type(ty.elem);
    if let Some(i) = types.iter().position(|&t| t != elem) {
        return Err(crate::lower::LowerError::ValueType {
            what: format!("component {i} of the value"),
            request: access.to_string(),
            expected: elem,
            got: types[i],
        });
    }
    let per = part_ty.lane_count() as usize;
    let zero = if elem == types::F64 {
        b.ins().f64const(0.0)
    } else {
        b.ins().f32const(0.0)
    };
    let mut parts: Vec<Value> = (0..count).map(|_| b.ins().splat(part_ty, zero)).collect();
    for (i, &x) in value.iter().enumerate() {
        parts[i / per] = b.ins().insertlane(parts[i / per], x, (i % per) as u8);
    }
    Ok(parts)
}

/// `ptr + 8 * offset` (4 halves per `half3`), the offset brought to the pointer's type.
fn aligned_address(
    b: &mut FunctionBuilder,
    ptr: Value,
    offset: Value,
) -> Result<Value, crate::lower::LowerError> {
    let (pt, ot) = (b.func.dfg.value_type(ptr), b.func.dfg.value_type(offset));
    for (what, t) in [("the pointer", pt), ("the offset", ot)] {
        if !t.is_int() || t.is_vector() {
            return Err(crate::lower::LowerError::ValueType {
                what: what.into(),
                request: "vloada_half3".into(),
                expected: types::I64,
                got: t,
            });
        }
    }
    let offset = match ot.bits().cmp(&pt.bits()) {
        std::cmp::Ordering::Less => b.ins().uextend(pt, offset),
        std::cmp::Ordering::Greater => b.ins().ireduce(pt, offset),
        std::cmp::Ordering::Equal => offset,
    };
    let bytes = b.ins().imul_imm_u(offset, 8);
    Ok(b.ins().iadd(ptr, bytes))
}
