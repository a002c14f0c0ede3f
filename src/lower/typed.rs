//! The typed entry: a front end that holds a Cranelift value and knows the element type it
//! wants converts it in one call, without writing a name. The width and the layout come from
//! the value's Cranelift type ([`super::value_shape`]); the result has the matching type.

use super::shapes::{self, BoolValues, HalfValues};
use super::{LowerError, Lowering};
use crate::element_conversion::ElementConversion;
use crate::request::Request;
use crate::types::{NumberKind, ScalarType, Width};
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::{types, InstBuilder};
use cranelift_frontend::FunctionBuilder;

impl Lowering {
    /// Converts every lane of the caller's value to `conv`'s destination element type, in one
    /// call: a scalar gives a scalar, an F32X4 (a `vec4f`, or a `vec3f` with its padding lane)
    /// gives an I32X4 for `int`, an F16X4 gives an F32X4 for `float`, an F32X4 gives two F64X2
    /// for `double`. 64-bit vectors (F16X4, I32X2, F32X2, I8X8) and narrower ones come and go as
    /// such; a value wider than 128 bits comes as its 128-bit parts, in lane order. Half comes
    /// as F16 or I16 lanes; it goes back as F16 lanes unless [`Lowering::with_half_values`]
    /// says otherwise or the operand holds I16 halves. Bools come and go as
    /// [`Lowering::with_bool_values`] says (I8 0/1 unless said; a mask as wide as the number).
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
    /// use clconv::cranelift_codegen::{settings, verifier::verify_function};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::{ElementConversion, Lowering};
    /// use clconv::{rules::Rules, ScalarType::{Float, Half, Int}};
    ///
    /// let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(settings::builder()))?;
    /// let mut sig = Signature::new(isa.default_call_conv());
    /// sig.params.push(AbiParam::new(types::F32X4));
    /// sig.params.push(AbiParam::new(types::F16X4));
    /// sig.returns.push(AbiParam::new(types::I32X4));
    /// sig.returns.push(AbiParam::new(types::F32X4));
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let (v, h) = (b.block_params(block)[0], b.block_params(block)[1]);
    ///
    /// let lowering = Lowering::for_isa(&*isa)?;
    /// // WGSL's vec4i(v): truncation, NaN -> 0, clamped to what a float holds exactly.
    /// let i = lowering.convert_value(&mut b, ElementConversion::new(Float, Int).rules(Rules::WGSL), v)?;
    /// assert_eq!(b.func.dfg.value_type(i), types::I32X4);
    /// // vec4<f16> -> vec4f: an F16X4 in, an F32X4 out.
    /// let f = lowering.convert_value(&mut b, ElementConversion::new(Half, Float), h)?;
    /// assert_eq!(b.func.dfg.value_type(f), types::F32X4);
    ///
    /// b.ins().return_(&[i, f]);
    /// b.seal_all_blocks();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn convert(
        &self,
        b: &mut FunctionBuilder,
        conv: ElementConversion,
        operand: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let half = match self.half {
            Some(h) => h,
            None if conv.from() == ScalarType::Half
                && operand
                    .first()
                    .is_some_and(|&v| b.func.dfg.value_type(v).lane_type() == types::I16) =>
            {
                HalfValues::Bits
            }
            None => HalfValues::F16,
        };
        let bytes;
        let operand = if conv.from().is_bool() {
            bytes = self.bools_to_bytes(b, operand)?;
            &bytes[..]
        } else {
            operand
        };
        let lanes = operand_lanes(b, conv.from(), operand)?;
        let width = width_of(lanes, operand, b)?;
        let request = Request::Convert(conv.at_width(width)?);
        let out = self.lower_request_as(b, &request, operand, half)?;
        if conv.to().is_bool() {
            self.bytes_to_bools(b, conv.from(), out)
        } else {
            Ok(out)
        }
    }

    /// The caller's bools as bytes, 0 or 1 (any nonzero lane is true).
    fn bools_to_bytes(
        &self,
        b: &mut FunctionBuilder,
        operand: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let Some(&first) = operand.first() else {
            return Ok(Vec::new());
        };
        let lane = b.func.dfg.value_type(first).lane_type();
        let allowed = match self.bools {
            BoolValues::I8 => lane == types::I8,
            BoolValues::I32 => lane == types::I32,
            BoolValues::Mask => lane.is_int(),
        };
        if !allowed {
            return Err(LowerError::Operand {
                why: format!(
                    "the bools are held as {:?} (Lowering::with_bool_values), but the operand                      has {lane} lanes",
                    self.bools
                ),
            });
        }
        if lane == types::I8 {
            return Ok(operand.to_vec());
        }
        // Unsigned and saturating: every nonzero lane gives a nonzero byte.
        let unsigned = ScalarType::of(NumberKind::Unsigned, lane.bytes()).expect("an int lane");
        let to_bytes = ElementConversion::new(unsigned, ScalarType::UChar).saturating();
        self.convert(b, to_bytes, operand)
    }

    /// Bool bytes (0 or 1) as the caller holds bools; a mask as wide as `from`'s lanes.
    fn bytes_to_bools(
        &self,
        b: &mut FunctionBuilder,
        from: ScalarType,
        bytes: Vec<Value>,
    ) -> Result<Vec<Value>, LowerError> {
        let bits = match self.bools {
            BoolValues::I8 => return Ok(bytes),
            BoolValues::I32 => 32,
            BoolValues::Mask => from.bits(),
        };
        let wide = if bits == 8 {
            bytes
        } else {
            let unsigned = ScalarType::of(NumberKind::Unsigned, bits / 8).expect("a width");
            self.convert(
                b,
                ElementConversion::new(ScalarType::UChar, unsigned),
                &bytes,
            )?
        };
        // 0 - 1 is all ones. A vector narrower than 128 bits is subtracted in a 128-bit
        // register: x64 lowers neither `ineg` nor `isub` of one.
        Ok(match self.bools {
            BoolValues::Mask => wide
                .into_iter()
                .map(|v| {
                    let ty = b.func.dfg.value_type(v);
                    if !ty.is_vector() {
                        let zero = super::values::int_const(b, ty, 0);
                        return b.ins().isub(zero, v);
                    }
                    let v128 = shapes::widen_to_128(b, v);
                    let wide_ty = b.func.dfg.value_type(v128);
                    let zero = super::lanes::splat_bits(b, wide_ty, 0);
                    let mask = b.ins().isub(zero, v128);
                    shapes::narrow_from_128(b, ty, mask)
                })
                .collect(),
            _ => wide,
        })
    }

    /// The trap flag of `conv` on the caller's value: an I8 that is nonzero when the language
    /// traps on any lane (NaN or out of range for WebAssembly's `trunc`,
    /// [`crate::rules::Rules::TRAPPING`]), so the compiler emits its own `trapnz` before using
    /// the value [`Lowering::convert`] gives; `None` when `conv`'s rules never trap. Half
    /// sources are taken as scalars.
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, InstBuilder, TrapCode};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::languages::Language;
    /// use clconv::lower::Lowering;
    /// use clconv::Request;
    /// let mut func = clconv::cranelift_codegen::ir::Function::new();
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.switch_to_block(block);
    /// let x = b.append_block_param(block, types::F32);
    /// // wasm's i32.trunc_f32_s: the flag, the compiler's own trap, then the value.
    /// let Request::Convert(c) = Language::Wasm.parse("i32.trunc_f32_s")? else { unreachable!() };
    /// let conv = clconv::lower::ElementConversion::of(&c);
    /// let lowering = Lowering::without_isa();
    /// let flag = lowering.trap_flag(&mut b, conv, &[x])?.expect("trunc traps");
    /// b.ins().trapnz(flag, TrapCode::INTEGER_OVERFLOW);
    /// let y = lowering.convert_value(&mut b, conv, x)?;
    /// assert_eq!(b.func.dfg.value_type(y), types::I32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn trap_flag(
        &self,
        b: &mut FunctionBuilder,
        conv: ElementConversion,
        operand: &[Value],
    ) -> Result<Option<Value>, LowerError> {
        if !conv.applied_rules().traps() || !conv.from().is_float() || conv.to().is_float() {
            return Ok(None);
        }
        let lanes = operand_lanes(b, conv.from(), operand)?;
        let width = width_of(lanes, operand, b)?;
        let c = conv.at_width(width)?;
        if conv.from() == ScalarType::Half && width != Width::W1 {
            return Err(LowerError::Operand {
                why: "the trap flag takes half values one scalar at a time".into(),
            });
        }
        let parts: Vec<Value> = operand
            .iter()
            .map(|&v| {
                let v = shapes::half_as_bits(b, v);
                shapes::widen_to_128(b, v)
            })
            .collect();
        let rounding = c.effective_rounding(self.static_mode());
        Ok(Some(super::edges::trap_flag(
            b,
            conv.from(),
            conv.to(),
            rounding,
            &parts,
        )))
    }

    /// [`Lowering::convert`] on one value whose result is one value (at most 128 bits on each
    /// side; wider results come from [`Lowering::convert`] as parts).
    pub fn convert_value(
        &self,
        b: &mut FunctionBuilder,
        conv: ElementConversion,
        x: Value,
    ) -> Result<Value, LowerError> {
        one(self.convert(b, conv, &[x])?, conv.to(), b)
    }

    /// Reinterprets the caller's value as lanes of `to` (the same bits: `bitcast<vec2<f32>>`
    /// of an I32X2, `as_int4(float4)` of an F32X4): the result has as many lanes as fit in the
    /// operand's bits, a scalar when one does. Half lanes come as [`Lowering::with_half_values`]
    /// says.
    ///
    /// ```
    /// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, Signature};
    /// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    /// use clconv::lower::{HalfValues, Lowering};
    /// use clconv::ScalarType;
    /// let mut sig = Signature::new(clconv::cranelift_codegen::isa::CallConv::SystemV);
    /// sig.params.push(AbiParam::new(types::I32X2));
    /// let mut func = Function::with_name_signature(Default::default(), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let block = b.create_block();
    /// b.append_block_params_for_function_params(block);
    /// b.switch_to_block(block);
    /// let x = b.block_params(block)[0];
    /// let lowering = Lowering::without_isa().with_half_values(HalfValues::F16);
    /// let h = lowering.reinterpret_value(&mut b, ScalarType::Half, x)?; // bitcast<vec4<f16>>
    /// assert_eq!(b.func.dfg.value_type(h), types::F16X4);
    /// let d = lowering.reinterpret_value(&mut b, ScalarType::Double, x)?;
    /// assert_eq!(b.func.dfg.value_type(d), types::F64);
    /// # Ok::<(), clconv::lower::LowerError>(())
    /// ```
    pub fn reinterpret(
        &self,
        b: &mut FunctionBuilder,
        to: ScalarType,
        operand: &[Value],
    ) -> Result<Vec<Value>, LowerError> {
        let first = *operand.first().ok_or_else(|| LowerError::Operand {
            why: "no operand was passed: pass the value to reinterpret".into(),
        })?;
        let ty = b.func.dfg.value_type(first);
        if operand.iter().any(|&v| b.func.dfg.value_type(v) != ty)
            || (operand.len() > 1 && ty.bits() != 128)
        {
            return Err(LowerError::Operand {
                why: format!(
                    "a value wider than 128 bits comes as 128-bit parts of one type, but the \
                     operand's parts are {}",
                    type_list(b, operand)
                ),
            });
        }
        let bits = ty.bits() as usize;
        let to_bits = to.bits() as usize;
        if !bits.is_multiple_of(to_bits) {
            return Err(LowerError::Operand {
                why: format!(
                    "a {ty} value has {bits} bits, which is no whole number of {to} lanes \
                     ({to_bits} bits each): reinterpret a value of a multiple of {to_bits} bits"
                ),
            });
        }
        if to.is_bool() {
            return Err(LowerError::Operand {
                why: "a bool has no bits to reinterpret: convert to bool (Lowering::convert)"
                    .into(),
            });
        }
        let lane = shapes::lane_type(to, self.half.unwrap_or(HalfValues::F16));
        let result_ty = match bits / to_bits {
            1 => lane,
            n => lane.by(n as u32).ok_or_else(|| LowerError::Operand {
                why: format!("{n} lanes of {to} is no Cranelift type"),
            })?,
        };
        Ok(operand
            .iter()
            .map(|&v| {
                let v = shapes::half_as_bits(b, v);
                super::bitcast_le(b, result_ty, v)
            })
            .collect())
    }

    /// [`Lowering::reinterpret`] on one value.
    pub fn reinterpret_value(
        &self,
        b: &mut FunctionBuilder,
        to: ScalarType,
        x: Value,
    ) -> Result<Value, LowerError> {
        one(self.reinterpret(b, to, &[x])?, to, b)
    }
}

/// The lanes of `operand` as `from` values: checks their Cranelift types.
fn operand_lanes(
    b: &FunctionBuilder,
    from: ScalarType,
    operand: &[Value],
) -> Result<usize, LowerError> {
    let allowed = [
        shapes::lane_type(from, HalfValues::Bits),
        shapes::lane_type(from, HalfValues::F16),
    ];
    let Some(&first) = operand.first() else {
        return Err(LowerError::Operand {
            why: format!("no operand was passed: pass the {from} value to convert"),
        });
    };
    let ty = b.func.dfg.value_type(first);
    if !allowed.contains(&ty.lane_type()) {
        return Err(LowerError::Operand {
            why: format!(
                "a conversion from {from} takes {} lanes, but the operand is {ty}: convert from \
                 the element type the value holds",
                allowed[0]
            ),
        });
    }
    if operand.iter().any(|&v| b.func.dfg.value_type(v) != ty)
        || (operand.len() > 1 && (!ty.is_vector() || ty.bits() != 128))
    {
        return Err(LowerError::Operand {
            why: format!(
                "a value wider than 128 bits comes as 128-bit parts of one type, but the \
                 operand's parts are {}",
                type_list(b, operand)
            ),
        });
    }
    Ok(operand.len() * ty.lane_count() as usize)
}

fn width_of(lanes: usize, operand: &[Value], b: &FunctionBuilder) -> Result<Width, LowerError> {
    Width::from_lanes(lanes)
        .filter(|w| *w != Width::W3)
        .ok_or_else(|| LowerError::Operand {
            why: format!(
                "the operand ({}) has {lanes} lanes; clconv converts 1, 2, 4, 8 or 16 at a time: \
                 split the value",
                type_list(b, operand)
            ),
        })
}

fn one(values: Vec<Value>, to: ScalarType, b: &FunctionBuilder) -> Result<Value, LowerError> {
    match values[..] {
        [v] => Ok(v),
        _ => Err(LowerError::Operand {
            why: format!(
                "the result is {} values ({}), wider than 128 bits: call Lowering::convert or \
                 Lowering::reinterpret, which return the parts, for this {to} result",
                values.len(),
                type_list(b, &values)
            ),
        }),
    }
}

fn type_list(b: &FunctionBuilder, values: &[Value]) -> String {
    let names: Vec<String> = values
        .iter()
        .map(|&v| b.func.dfg.value_type(v).to_string())
        .collect();
    names.join(", ")
}
