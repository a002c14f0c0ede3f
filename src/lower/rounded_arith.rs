//! Correctly rounded `add`, `sub`, `mul`, `div`, `sqrt` and `fma` in any IEEE-754 rounding mode,
//! lowered into the caller's [`FunctionBuilder`] on F32, F64, F32X4 or F64X2 values: what
//! `#pragma OPENCL SELECT_ROUNDING_MODE rtz|rtp|rtn` needs on Cranelift, which computes only in
//! round-to-nearest-even and cannot change the hardware mode.
//!
//! # The method
//!
//! rte is the native instruction. For rtz, rtp and rtn:
//!
//! 1. `r = RN(x)`: the native instruction, where `x` is the exact result.
//! 2. `e`, a float whose **sign is the sign of `x - r`** (zero when `r` is exact; NaN or zero when
//!    no step is due), from an error-free transformation. Only the sign is needed, so `e` may be
//!    rounded, as long as it is never rounded to zero from a nonzero value (RN keeps the sign of
//!    anything it does not flush to zero).
//! 3. One ulp step on the bit pattern, by mode and sign: rtp steps up when `e > 0`, rtn steps down
//!    when `e < 0`, rtz steps toward zero when `e` and `r` have opposite signs. Up is `bits + 1`
//!    for a positive `r` and `bits - 1` for a negative one (down the reverse), so the step
//!    crosses binades, goes from `±MAX` to `±inf`, from `±inf` to `±MAX`, and from `±0` to
//!    `±min subnormal` correctly. A zero `r` only ever steps away from zero (RN rounds a tiny
//!    `x` to the zero of its sign), so no step crosses zero.
//!
//! Terms: `p` is the precision (24, 53), `emin` the smallest normal exponent (-126, -1022),
//! `u = 2^(emin-p+1)` the smallest subnormal (2^-149, 2^-1074), `lsb(v)` the exponent of the
//! lowest bit a value `v` can have (`>= log2 u` for every float), `E(v)` the exponent of `v`.
//!
//! ## The error term of each operation, and where it breaks
//!
//! - **add, sub**: Fast2Sum after ordering the operands by magnitude: `s = a + b`, `z = s - big`,
//!   `t = small - z`. With `|big| >= |small|` both subtractions are exact and `t = (a + b) - s`
//!   exactly, subnormals included (a sum of floats is a multiple of `u`, so underflow in
//!   addition is always exact). Overflow needs no case: with finite operands and `s = ±inf`,
//!   `z = ±inf` and `t = -s`, the right sign; with an infinite operand `z` is `inf - inf`, NaN, no
//!   step. The sign of an exact zero: `x - x` is `+0` in rte, rtz, rtp and `-0` in rtn, while
//!   `(+0) + (+0)` is `+0` and `(-0) + (-0)` is `-0` in every mode; so under rtn a zero sum gets
//!   the sign bit `sign(a) | sign(b)` (`b` negated for sub), and the native result is right in
//!   the other modes.
//! - **mul**: `e = fma(a, b, -r) = RN(ab - r)`. `ab - r` is a multiple of
//!   `2^(lsb a + lsb b)`, so a nonzero error is at least `u` (and survives RN) when
//!   `lsb a + lsb b >= log2 u`; that holds whenever `|r| >= T = 2^(log2 u + 2p + 2)`
//!   (`2^-99`, `2^-966`), since `lsb v >= E(v) - p + 1` and `|ab| < 2^(E(a)+E(b)+2)`.
//!   Below `T` (**the subnormal range and just above it**, where `ab - r` can be nonzero yet
//!   smaller than `u/2`, or `r` is 0 from underflow) scale: `e = fma(a 2^h1, b 2^h2, -r 2^(h1+h2))`
//!   with `h1 + h2 = -log2 u` (75 + 74, 537 + 537: two factors because `2^149` is not a float).
//!   Scaling up by a power of two is exact, the error becomes a multiple of
//!   `2^(lsb a + lsb b - log2 u) >= u`, and nothing overflows: `|ab| < 2T` bounds each operand by
//!   `2T / u`, so `|a 2^h1| < 2^126` (float), `2^646` (double). Overflow: `r = ±inf` with finite
//!   operands gives `fma(a, b, ∓inf) = ∓inf`, the right sign; an infinite operand gives NaN.
//! - **div**: `q = RN(a / b)`, `e = fma(-q, b, a) = RN(a - qb)`, with the sign of `b` applied
//!   (`sign(a/b - q) = sign(a - qb) sign(b)`). Nonzero errors survive RN when `|a| >= T` (if `q`
//!   is normal, `|qb| ~ |a|` gives `lsb q + lsb b >= log2 u + 2`; if `q` is subnormal,
//!   `|b| > 2^(p+3)` so `lsb b >= 4`; if `q = 0`, `e = a` exactly). Below `T`, scale `a` and the
//!   smaller of `q` and `b` by `2^-log2 u` (which keeps `qb` and `a` below `2^(2p+3)`).
//!   Overflow: `q = ±inf` from finite operands gives `e = ∓inf·sign(b)`, the right sign;
//!   `x / 0`, `inf / x`, `x / inf` give `inf * 0` or `inf - inf` inside the fma, NaN, no step.
//! - **sqrt**: `e = fma(-s, s, a) = RN(a - s^2)`. Nonzero errors survive when `a >= T`; below,
//!   `e = fma(-s 2^p, s 2^p, a 2^(2p))` (then `2 lsb(s 2^p) >= log2 u`, as `s >= sqrt(u)`).
//!   sqrt never overflows; `sqrt(-0) = -0` and negative operands give NaN.
//! - **fma**: `x = ab + c` has no single-fma error term. **The hard inputs are a product and an
//!   addend that nearly cancel**, where `x - r` needs more than two floats. clconv computes the
//!   sign of `T = ab + c - r` exactly:
//!   1. *Addend dominates*: if `E(c) >= E(a) + E(b) + p + 4` then `|ab| < ulp(c)/8`, so `r = c`,
//!      `x - r = ab`, and the sign is the product's. *Zero product*: `r = c` and `x - r = 0`.
//!      (Exponents come from the bit patterns, a subnormal's read as `emin`: that can only
//!      overestimate `|ab|`, and a subnormal `c` has `ulp(c) = u = 2^(emin-p+1)` all the same.)
//!   2. Otherwise *scale* by `2^K`, `K = -(E(a) + E(b))`: `a' = a 2^-E(a)`, `b' = b 2^-E(b)`
//!      (exact, in `[1, 2)`, or `[2^(1-p), 1)` for subnormals), `c' = c 2^K`, `r' = r 2^K`
//!      (two factors `2^(K/2)`). Then `|a'b'| < 4`, `|c'| < 2^(p+4)` (not dominant), and the
//!      product's error `a'b' - RN(a'b')` is exact because `lsb a' + lsb b' >= 2 - 2p`. `r'` is
//!      exact: scaling up always is, and when `K < 0` (so `|a'b'| >= 2^(1-p)`) either
//!      `|c| <= |ab|/2`, so `|r'| >= |a'b'|/3`, a normal number, or `|c'| > 2^-p`, so `x'` is a
//!      multiple of `2^-2p` and a nonzero `r'` is at least that. Only `c'` can lose bits, when
//!      `K < 0` and `|c'| < 2^emin`; then it lies below `2^(2-3p)`, the lowest bit of every
//!      other term, and only its sign matters: it keeps its sign, and a `c'` flushed to zero is
//!      replaced by `±u`. (A zero `a` or `b` makes `K` meaningless; step 1 has decided those.)
//!   3. The sign of the exact sum of the four floats `P' + π' + c' - r'` (`P' = RN(a'b')`,
//!      `π' = fma(a', b', -P')`) by expansion arithmetic (Shewchuk, "Adaptive precision
//!      floating-point arithmetic", 1997): `[π', P']` is a nonoverlapping expansion; two
//!      Grow-Expansion passes add `c'` and `-r'` with TwoSum (exact: every term is below
//!      `2^(p+5)`), giving a nonoverlapping expansion whose largest nonzero component carries the
//!      sign of the sum. No step of this argument uses `r = RN(x)`, which is what lets the
//!      scaling move `r` off its rounding grid.
//!
//!   Overflow: `r = ±inf` with finite operands steps toward zero; an infinite operand or a NaN
//!   result never steps. Exact zero under rtn: sign bit `(sign a ^ sign b) | sign c`.
//! - **fma on float**, more cheaply, in double (F32X4 as two F64X2 halves): `P = ab` is exact
//!   (48 bits, exponent at least -298); `(S, T) = TwoSum(P, c)` gives `x = S + T` exactly;
//!   `U = S - r` is exact, by Sterbenz: `S` and `r` round the same `x`, to 53 and 24 bits, so
//!   they are within a factor of 2 of each other unless `r = 0` (then `U = S`); in the subnormal
//!   range `r != 0` means `|x| > 2^-150` and `|r - x| <= 2^-150`, which still keeps
//!   `S/2 <= r <= 2S`. So `x - r = U + T` exactly, a nonzero one is a multiple of `2^-298`, and
//!   `D = RN(U + T)` has its sign. `D 2^400` is demoted to a float carrier, which keeps the sign
//!   and cannot flush to zero. Overflow needs no case (`S - inf = -inf`), nor do infinite
//!   operands (`U = inf - inf` is NaN). [`emit_fma_expansion`] keeps the generic method
//!   available on float, and the tests run it there too.
//!
//! # Targets without an fma instruction
//!
//! Cranelift lowers `fma` on x86-64 without `has_fma` (the SSE2/SSE4.1 flag sets) to a call to
//! libm's `fmaf`/`fma` (four calls for F32X4, two for F64X2). Those are correctly rounded
//! (IEEE 754 `fusedMultiplyAdd` in round-to-nearest, which the C standard requires of `fma`), so
//! every argument above holds unchanged: the lowering is exact there too, only slower. The test
//! suite compiles the kernels with `X64Flags::Sse41`, checks that the machine code calls out, and
//! checks the results against the reference.
//!
//! # NaN results
//!
//! A NaN result is the native instruction's NaN in every mode (the step is never applied to a
//! NaN), so its sign and payload are the target's (x86-64: the first NaN operand made quiet, or
//! the default NaN). The reference compares NaN results as a class.
//!
//! # What is emitted
//!
//! Only non-trapping instructions: float arithmetic, `fma`, `sqrt`, `fcmp`, bit operations,
//! `select`/`bitselect`, `shuffle`, float widening and narrowing, integer add, shifts and
//! compares on the bit patterns. No branches, so the caller's current block continues, and
//! every lane pays for the scaled paths whether it needs them or not (the cost per mode is in
//! `benches/rounded_arith.rs`). The code assumes the default floating-point environment that Rust
//! programs run in: round to nearest, no flush-to-zero or denormals-are-zero.

use super::values::bitcast_le;
use super::Lowering;
use crate::arith::ArithOp;
use crate::types::Rounding;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{types, InstBuilder, Type, Value};
use cranelift_frontend::FunctionBuilder;

/// Why a rounded arithmetic operation could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArithLowerError {
    /// The wrong number of operands.
    #[error("{op} takes {expected} operand(s), but {got} were passed")]
    OperandCount {
        /// The operation.
        op: ArithOp,
        /// Its arity.
        expected: usize,
        /// Operands passed.
        got: usize,
    },
    /// An operand of a type the lowering does not take.
    #[error("operand {index} of {op} is a {got} value: rounded arithmetic takes F32, F64, F32X4 or F64X2 operands (wider OpenCL vectors as several 128-bit parts)")]
    UnsupportedType {
        /// The operation.
        op: ArithOp,
        /// Which operand.
        index: usize,
        /// Its type.
        got: Type,
    },
    /// Operands of different types.
    #[error("operand {index} of {op} is a {got} value, but operand 0 is {expected}: every operand has the result's type")]
    MixedTypes {
        /// The operation.
        op: ArithOp,
        /// Which operand.
        index: usize,
        /// Operand 0's type.
        expected: Type,
        /// This operand's type.
        got: Type,
    },
}

impl Lowering {
    /// Lowers `op` on `args` (one for sqrt, three for fma, else two; all F32, F64, F32X4 or
    /// F64X2, all of one type) correctly rounded in the static rounding mode: what an OpenCL
    /// `a * b` compiles to under `#pragma OPENCL SELECT_ROUNDING_MODE`.
    ///
    /// ```
    /// use clconv::arith::ArithOp;
    /// use clconv::{lower::Lowering, Rounding};
    /// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    /// use cranelift_codegen::isa::CallConv;
    /// use cranelift_codegen::{settings, verifier::verify_function};
    /// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    ///
    /// // fn(float4, float4) -> float4 computing a * b rounded toward zero
    /// let mut sig = Signature::new(CallConv::SystemV);
    /// sig.params.push(AbiParam::new(types::F32X4));
    /// sig.params.push(AbiParam::new(types::F32X4));
    /// sig.returns.push(AbiParam::new(types::F32X4));
    /// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let entry = b.create_block();
    /// b.append_block_params_for_function_params(entry);
    /// b.switch_to_block(entry);
    /// let (x, y) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    ///
    /// let lowering = Lowering::without_isa().with_static_mode(Rounding::Rtz);
    /// let product = lowering.arith(&mut b, ArithOp::Mul, &[x, y]).unwrap();
    ///
    /// b.ins().return_(&[product]);
    /// b.seal_all_blocks();
    /// let isa = cranelift_native::builder().unwrap().finish(settings::Flags::new(settings::builder())).unwrap();
    /// b.finalize(isa.frontend_config());
    /// verify_function(&func, isa.flags()).unwrap();
    /// ```
    pub fn arith(
        &self,
        b: &mut FunctionBuilder,
        op: ArithOp,
        args: &[Value],
    ) -> Result<Value, ArithLowerError> {
        emit(b, op, self.static_mode(), args)
    }

    /// [`Lowering::arith`] with an explicit mode; `None` follows the static mode.
    ///
    /// ```
    /// use clconv::arith::ArithOp;
    /// use clconv::{lower::Lowering, Rounding};
    /// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    /// use cranelift_codegen::isa::CallConv;
    /// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    ///
    /// let mut sig = Signature::new(CallConv::SystemV);
    /// sig.params.push(AbiParam::new(types::F64));
    /// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    /// let mut ctx = FunctionBuilderContext::new();
    /// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    /// let entry = b.create_block();
    /// b.append_block_params_for_function_params(entry);
    /// b.switch_to_block(entry);
    /// let x = b.block_params(entry)[0];
    /// let root = Lowering::without_isa().arith_with_mode(&mut b, ArithOp::Sqrt, Some(Rounding::Rtp), &[x]);
    /// assert!(root.is_ok());
    /// // sqrt takes one operand
    /// assert!(Lowering::without_isa().arith_with_mode(&mut b, ArithOp::Sqrt, None, &[x, x]).is_err());
    /// ```
    pub fn arith_with_mode(
        &self,
        b: &mut FunctionBuilder,
        op: ArithOp,
        mode: Option<Rounding>,
        args: &[Value],
    ) -> Result<Value, ArithLowerError> {
        emit(b, op, mode.unwrap_or(self.static_mode()), args)
    }
}

/// Lowers `op` on `args` correctly rounded by `mode` (see the module docs for the operand rules).
///
/// ```
/// use clconv::arith::ArithOp;
/// use clconv::lower::rounded_arith::{emit, ArithLowerError};
/// use clconv::Rounding;
/// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
/// use cranelift_codegen::isa::CallConv;
/// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
///
/// let mut sig = Signature::new(CallConv::SystemV);
/// sig.params.push(AbiParam::new(types::I32));
/// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
/// let mut ctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
/// let entry = b.create_block();
/// b.append_block_params_for_function_params(entry);
/// b.switch_to_block(entry);
/// let n = b.block_params(entry)[0];
/// let err = emit(&mut b, ArithOp::Add, Rounding::Rtz, &[n, n]).unwrap_err();
/// assert!(matches!(err, ArithLowerError::UnsupportedType { .. }));
/// ```
pub fn emit(
    b: &mut FunctionBuilder,
    op: ArithOp,
    mode: Rounding,
    args: &[Value],
) -> Result<Value, ArithLowerError> {
    let format = check_operands(b, op, args)?;
    let mut e = Emitter { b, f: format };
    Ok(match op {
        ArithOp::Add => e.add_sub(mode, args[0], args[1], false),
        ArithOp::Sub => e.add_sub(mode, args[0], args[1], true),
        ArithOp::Mul => e.mul(mode, args[0], args[1]),
        ArithOp::Div => e.div(mode, args[0], args[1]),
        ArithOp::Sqrt => e.sqrt(mode, args[0]),
        ArithOp::Fma => e.fma(mode, args[0], args[1], args[2], FmaMethod::Auto),
    })
}

/// Which sign-of-error method [`Emitter::fma`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FmaMethod {
    /// In double for float operands, by expansion arithmetic for double ones.
    Auto,
    /// By expansion arithmetic for every format.
    Expansion,
}

/// `fma` rounded by `mode` with the format-generic method (dominance, scaling, expansion
/// arithmetic; module docs, fma steps 1-3) on every type, float included, where [`emit`] uses the
/// cheaper computation in double. Double needs the generic method; exposing it on float lets its
/// argument be tested on float's inputs too.
///
/// ```
/// use clconv::lower::rounded_arith::emit_fma_expansion;
/// use clconv::Rounding;
/// use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
/// use cranelift_codegen::isa::CallConv;
/// use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
///
/// let mut sig = Signature::new(CallConv::SystemV);
/// sig.params.push(AbiParam::new(types::F32X4));
/// let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
/// let mut ctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
/// let entry = b.create_block();
/// b.append_block_params_for_function_params(entry);
/// b.switch_to_block(entry);
/// let x = b.block_params(entry)[0];
/// assert!(emit_fma_expansion(&mut b, Rounding::Rtz, &[x, x, x]).is_ok());
/// ```
pub fn emit_fma_expansion(
    b: &mut FunctionBuilder,
    mode: Rounding,
    args: &[Value],
) -> Result<Value, ArithLowerError> {
    let format = check_operands(b, ArithOp::Fma, args)?;
    let mut e = Emitter { b, f: format };
    Ok(e.fma(mode, args[0], args[1], args[2], FmaMethod::Expansion))
}

/// `shuffle` of two I8X16 values taking 8 bytes from byte `from[0]` and 8 from byte `from[1]`
/// (indices 16 and up are `y`'s).
fn shuffle_bytes(b: &mut FunctionBuilder, x: Value, y: Value, from: [u8; 2]) -> Value {
    let mask: Vec<u8> = (0..16).map(|i| from[i / 8] + (i % 8) as u8).collect();
    let mask = b.func.dfg.immediates.push(mask.into());
    b.ins().shuffle(x, y, mask)
}

/// The [`Format`] of `args`, after checking their number and types.
fn check_operands(
    b: &FunctionBuilder,
    op: ArithOp,
    args: &[Value],
) -> Result<Format, ArithLowerError> {
    if args.len() != op.arity() {
        return Err(ArithLowerError::OperandCount {
            op,
            expected: op.arity(),
            got: args.len(),
        });
    }
    let ty = b.func.dfg.value_type(args[0]);
    let Some(format) = Format::of(ty) else {
        return Err(ArithLowerError::UnsupportedType {
            op,
            index: 0,
            got: ty,
        });
    };
    for (index, &a) in args.iter().enumerate().skip(1) {
        let got = b.func.dfg.value_type(a);
        if got != ty {
            return Err(ArithLowerError::MixedTypes {
                op,
                index,
                expected: ty,
                got,
            });
        }
    }
    Ok(format)
}

/// The parameters of one of the four value types.
#[derive(Clone, Copy, Debug)]
struct Format {
    float: Type,
    int: Type,
    vector: bool,
    width: u32,
    /// Stored mantissa bits: 23 or 52.
    mant: u32,
    /// Precision p: 24 or 53.
    p: i32,
    bias: i64,
    /// log2 of the smallest subnormal: -149 or -1074.
    log2_u: i32,
}

impl Format {
    fn of(ty: Type) -> Option<Format> {
        let (int, vector) = match ty {
            types::F32 => (types::I32, false),
            types::F64 => (types::I64, false),
            types::F32X4 => (types::I32X4, true),
            types::F64X2 => (types::I64X2, true),
            _ => return None,
        };
        let double = ty.lane_type() == types::F64;
        Some(Format {
            float: ty,
            int,
            vector,
            width: if double { 64 } else { 32 },
            mant: if double { 52 } else { 23 },
            p: if double { 53 } else { 24 },
            bias: if double { 1023 } else { 127 },
            log2_u: if double { -1074 } else { -149 },
        })
    }

    fn sign_bit(&self) -> i64 {
        if self.width == 64 {
            i64::MIN
        } else {
            0x8000_0000
        }
    }

    fn exp_mask(&self) -> i64 {
        (1 << (self.width - 1 - self.mant)) - 1
    }

    /// `T = 2^(log2 u + 2p + 2)`: below it an error term may vanish in RN, above it cannot.
    fn tiny_threshold(&self) -> i32 {
        self.log2_u + 2 * self.p + 2
    }

    /// `-log2 u` as two exponents, each of a normal power of two.
    fn subnormal_scale(&self) -> (i32, i32) {
        let k = -self.log2_u;
        (k - k / 2, k / 2)
    }
}

/// Emits on one [`Format`]: constants splatted for vectors, conditions as `I8` booleans for
/// scalars and lane masks for vectors.
struct Emitter<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    f: Format,
}

impl Emitter<'_, '_> {
    /// The float constant `2^k`, exact (`k` within the normal range).
    fn pow2(&mut self, k: i32) -> Value {
        let field = (i64::from(k) + self.f.bias) as u64;
        let scalar = if self.f.width == 64 {
            self.b.ins().f64const(Ieee64::with_bits(field << 52))
        } else {
            self.b
                .ins()
                .f32const(Ieee32::with_bits((field << 23) as u32))
        };
        self.splat_float(scalar)
    }

    /// A float constant from its bit pattern.
    fn float_bits(&mut self, bits: u64) -> Value {
        let scalar = if self.f.width == 64 {
            self.b.ins().f64const(Ieee64::with_bits(bits))
        } else {
            self.b.ins().f32const(Ieee32::with_bits(bits as u32))
        };
        self.splat_float(scalar)
    }

    fn splat_float(&mut self, scalar: Value) -> Value {
        if self.f.vector {
            self.b.ins().splat(self.f.float, scalar)
        } else {
            scalar
        }
    }

    /// An integer constant of the bit-pattern type.
    fn int(&mut self, v: i64) -> Value {
        let lane = self.f.int.lane_type();
        let scalar = super::values::int_const(self.b, lane, i128::from(v));
        if self.f.vector {
            self.b.ins().splat(self.f.int, scalar)
        } else {
            scalar
        }
    }

    fn bits(&mut self, x: Value) -> Value {
        bitcast_le(self.b, self.f.int, x)
    }

    fn float(&mut self, i: Value) -> Value {
        bitcast_le(self.b, self.f.float, i)
    }

    fn fcmp(&mut self, cc: FloatCC, x: Value, y: Value) -> Value {
        self.b.ins().fcmp(cc, x, y)
    }

    /// `x cc 0.0`.
    fn fcmp_zero(&mut self, cc: FloatCC, x: Value) -> Value {
        let zero = self.float_bits(0);
        self.fcmp(cc, x, zero)
    }

    fn and(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().band(x, y)
    }

    fn or(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().bor(x, y)
    }

    fn not(&mut self, c: Value) -> Value {
        if self.f.vector {
            self.b.ins().bnot(c)
        } else {
            // Scalar conditions are 0/1 bytes: bnot would give 0xfe/0xff.
            self.b.ins().bxor_imm_u(c, 1)
        }
    }

    /// `c ? x : y` on floats.
    fn sel(&mut self, c: Value, x: Value, y: Value) -> Value {
        if self.f.vector {
            let mask = bitcast_le(self.b, self.f.float, c);
            self.b.ins().bitselect(mask, x, y)
        } else {
            self.b.ins().select(c, x, y)
        }
    }

    /// `c ? x : y` on bit patterns.
    fn sel_int(&mut self, c: Value, x: Value, y: Value) -> Value {
        if self.f.vector {
            self.b.ins().bitselect(c, x, y)
        } else {
            self.b.ins().select(c, x, y)
        }
    }

    /// `x * 2^k1 * 2^k2`, two factors so that `k1 + k2` may exceed the exponent range.
    fn scale2(&mut self, x: Value, (k1, k2): (i32, i32)) -> Value {
        let f1 = self.pow2(k1);
        let f2 = self.pow2(k2);
        let y = self.b.ins().fmul(x, f1);
        self.b.ins().fmul(y, f2)
    }

    fn fabs(&mut self, x: Value) -> Value {
        self.b.ins().fabs(x)
    }

    /// `|x| < 2^k` (false for NaN).
    fn abs_below(&mut self, x: Value, k: i32) -> Value {
        let ax = self.fabs(x);
        let t = self.pow2(k);
        self.fcmp(FloatCC::LessThan, ax, t)
    }

    /// Applies the mode to the native result `r`, given `e` whose sign is the sign of
    /// `exact - r` (zero or NaN: no step). See step 3 of the module docs.
    fn step(&mut self, mode: Rounding, r: Value, e: Value) -> Value {
        let bits = self.bits(r);
        let result = match mode {
            Rounding::Rte => return r,
            Rounding::Rtz => {
                // e with r's sign taken out: negative when |exact| < |r|.
                let sign = self.int(self.f.sign_bit());
                let r_sign = self.and(bits, sign);
                let e_bits = self.bits(e);
                let relative = self.b.ins().bxor(e_bits, r_sign);
                let relative = self.float(relative);
                let toward = self.fcmp_zero(FloatCC::LessThan, relative);
                let one = self.int(1);
                let down = self.b.ins().isub(bits, one);
                self.sel_int(toward, down, bits)
            }
            Rounding::Rtp | Rounding::Rtn => {
                // +1 on the bits moves a positive value up and a negative one down.
                let shift = i64::from(self.f.width - 1);
                let all_sign = self.b.ins().sshr_imm_u(bits, shift);
                let one = self.int(1);
                let unit = self.or(all_sign, one);
                let (cc, stepped) = if mode == Rounding::Rtp {
                    (FloatCC::GreaterThan, self.b.ins().iadd(bits, unit))
                } else {
                    (FloatCC::LessThan, self.b.ins().isub(bits, unit))
                };
                let due = self.fcmp_zero(cc, e);
                self.sel_int(due, stepped, bits)
            }
        };
        self.float(result)
    }

    /// Under rtn, an exact zero `r` (`exact_zero`) gets the sign bit of `signs & SIGN`.
    fn rtn_zero_sign(&mut self, result: Value, exact_zero: Value, signs: Value) -> Value {
        let sign = self.int(self.f.sign_bit());
        let sign = self.and(signs, sign);
        let zero = self.int(0);
        let extra = self.sel_int(exact_zero, sign, zero);
        let bits = self.bits(result);
        let with = self.or(bits, extra);
        self.float(with)
    }

    /// add/sub: Fast2Sum on magnitude-ordered operands (module docs). Hard inputs: overflow
    /// (MAX + MAX), cancellation to zero (x - x, the sign under rtn), subnormal sums, signed
    /// zeros, inf - inf.
    fn add_sub(&mut self, mode: Rounding, a: Value, b: Value, subtract: bool) -> Value {
        let s = if subtract {
            self.b.ins().fsub(a, b)
        } else {
            self.b.ins().fadd(a, b)
        };
        if mode == Rounding::Rte {
            return s;
        }
        let b = if subtract { self.b.ins().fneg(b) } else { b };
        let aa = self.fabs(a);
        let ab = self.fabs(b);
        let swap = self.fcmp(FloatCC::LessThan, aa, ab);
        let big = self.sel(swap, b, a);
        let small = self.sel(swap, a, b);
        let z = self.b.ins().fsub(s, big);
        let t = self.b.ins().fsub(small, z);
        let stepped = self.step(mode, s, t);
        if mode != Rounding::Rtn {
            return stepped;
        }
        // A zero sum is exact: the only zero whose sign depends on the mode.
        let zero = self.fcmp_zero(FloatCC::Equal, s);
        let a_bits = self.bits(a);
        let b_bits = self.bits(b);
        let signs = self.or(a_bits, b_bits);
        self.rtn_zero_sign(stepped, zero, signs)
    }

    /// mul: `fma(a, b, -r)`, scaled by `2^-log2 u` below `T` (module docs). Hard inputs:
    /// products in and just above the subnormal range, products that underflow to zero,
    /// overflow, exact products, `0 * inf`.
    fn mul(&mut self, mode: Rounding, a: Value, b: Value) -> Value {
        let r = self.b.ins().fmul(a, b);
        if mode == Rounding::Rte {
            return r;
        }
        let (h1, h2) = self.f.subnormal_scale();
        let tiny = self.abs_below(r, self.f.tiny_threshold());
        let f1 = self.pow2(h1);
        let f2 = self.pow2(h2);
        let a_up = self.b.ins().fmul(a, f1);
        let b_up = self.b.ins().fmul(b, f2);
        let r_up = self.scale2(r, (h1, h2));
        let x = self.sel(tiny, a_up, a);
        let y = self.sel(tiny, b_up, b);
        let z = self.sel(tiny, r_up, r);
        let z = self.b.ins().fneg(z);
        let e = self.b.ins().fma(x, y, z);
        self.step(mode, r, e)
    }

    /// div: the remainder `fma(-q, b, a)` times `sign(b)`, scaled below `T` (module docs). Hard
    /// inputs: quotients in the subnormal range or underflowing to zero, overflow (`MAX / 0.5`),
    /// exact quotients, division by zero and by infinity.
    fn div(&mut self, mode: Rounding, a: Value, b: Value) -> Value {
        let q = self.b.ins().fdiv(a, b);
        if mode == Rounding::Rte {
            return q;
        }
        let k = self.f.subnormal_scale();
        let tiny = self.abs_below(a, self.f.tiny_threshold());
        let aq = self.fabs(q);
        let ab = self.fabs(b);
        let q_smaller = self.fcmp(FloatCC::LessThan, aq, ab);
        let scale_q = self.and(tiny, q_smaller);
        let b_larger = self.not(q_smaller);
        let scale_b = self.and(tiny, b_larger);
        let q_up = self.scale2(q, k);
        let b_up = self.scale2(b, k);
        let a_up = self.scale2(a, k);
        let qs = self.sel(scale_q, q_up, q);
        let bs = self.sel(scale_b, b_up, b);
        let as_ = self.sel(tiny, a_up, a);
        let nq = self.b.ins().fneg(qs);
        let remainder = self.b.ins().fma(nq, bs, as_);
        // sign(a/b - q) = sign(a - qb) * sign(b).
        let sign = self.int(self.f.sign_bit());
        let b_bits = self.bits(b);
        let b_sign = self.and(b_bits, sign);
        let rem_bits = self.bits(remainder);
        let e = self.b.ins().bxor(rem_bits, b_sign);
        let e = self.float(e);
        self.step(mode, q, e)
    }

    /// sqrt: `fma(-s, s, a)`, scaled by `2^(2p)` below `T` (module docs). Hard inputs: subnormal
    /// operands, exact squares, `-0`, `+inf`, negative operands.
    fn sqrt(&mut self, mode: Rounding, a: Value) -> Value {
        let s = self.b.ins().sqrt(a);
        if mode == Rounding::Rte {
            return s;
        }
        let t = self.pow2(self.f.tiny_threshold());
        let tiny = self.fcmp(FloatCC::LessThan, a, t);
        let up2 = self.pow2(2 * self.f.p);
        let up = self.pow2(self.f.p);
        let a_up = self.b.ins().fmul(a, up2);
        let s_up = self.b.ins().fmul(s, up);
        let as_ = self.sel(tiny, a_up, a);
        let ss = self.sel(tiny, s_up, s);
        let ns = self.b.ins().fneg(ss);
        let e = self.b.ins().fma(ns, ss, as_);
        self.step(mode, s, e)
    }

    /// The exponent field of `x`, at least 1 (so `E(x) = field - bias`, subnormals at `emin`).
    fn exponent_field(&mut self, x: Value) -> Value {
        let bits = self.bits(x);
        let field = self.b.ins().ushr_imm_u(bits, i64::from(self.f.mant));
        let mask = self.int(self.f.exp_mask());
        let field = self.and(field, mask);
        let one = self.int(1);
        self.b.ins().umax(field, one)
    }

    /// The float whose exponent field is `field` (an integer of the bit-pattern type).
    fn float_with_field(&mut self, field: Value) -> Value {
        let bits = self.b.ins().ishl_imm_u(field, i64::from(self.f.mant));
        self.float(bits)
    }

    /// `(x, y) = TwoSum(a, b)`: `x = RN(a + b)`, `y = a + b - x` exactly (Knuth; no ordering).
    fn two_sum(&mut self, a: Value, b: Value) -> (Value, Value) {
        let s = self.b.ins().fadd(a, b);
        let bv = self.b.ins().fsub(s, a);
        let av = self.b.ins().fsub(s, bv);
        let br = self.b.ins().fsub(b, bv);
        let ar = self.b.ins().fsub(a, av);
        let t = self.b.ins().fadd(ar, br);
        (s, t)
    }

    /// fma in any mode: the native fma, the sign of `ab + c - r` by
    /// [`Emitter::fma_sign_via_double`] for float (cheaper) or [`Emitter::fma_sign_expansion`]
    /// (any format), the step, and the sign of an exact zero under rtn.
    fn fma(&mut self, mode: Rounding, a: Value, b: Value, c: Value, method: FmaMethod) -> Value {
        let r = self.b.ins().fma(a, b, c);
        if mode == Rounding::Rte {
            return r;
        }
        let e = match method {
            FmaMethod::Auto if self.f.width == 32 => self.fma_sign_via_double(a, b, c, r),
            _ => self.fma_sign_expansion(a, b, c, r),
        };
        let stepped = self.step(mode, r, e);
        if mode != Rounding::Rtn {
            return stepped;
        }
        let r_zero = self.fcmp_zero(FloatCC::Equal, r);
        let e_zero = self.fcmp_zero(FloatCC::Equal, e);
        let exact_zero = self.and(r_zero, e_zero);
        let a_bits = self.bits(a);
        let b_bits = self.bits(b);
        let c_bits = self.bits(c);
        let product_sign = self.b.ins().bxor(a_bits, b_bits);
        let signs = self.or(product_sign, c_bits);
        self.rtn_zero_sign(stepped, exact_zero, signs)
    }

    /// The sign of `ab + c - r` for any format, by dominance, scaling and expansion arithmetic
    /// (module docs, fma steps 1-3). Hard inputs: products and addends that cancel exactly or
    /// nearly, tiny products beside large addends (only the product's sign survives), huge
    /// products cancelled by a large addend (`2^64 * 2^64 - MAX`), results in the subnormal
    /// range, zero products, overflow, infinite operands, `0 * inf + c`.
    fn fma_sign_expansion(&mut self, a: Value, b: Value, c: Value, r: Value) -> Value {
        let bias = self.f.bias;
        let fa = self.exponent_field(a);
        let fb = self.exponent_field(b);
        let fc = self.exponent_field(c);
        let fab = self.b.ins().iadd(fa, fb);

        // Step 1: E(c) >= E(a) + E(b) + p + 4, on biased fields.
        let offset = self.int(bias - i64::from(self.f.p) - 4);
        let fc_off = self.b.ins().iadd(fc, offset);
        let dominant = self
            .b
            .ins()
            .icmp(IntCC::SignedGreaterThanOrEqual, fc_off, fab);

        // Step 2: a' = a 2^(1-E(a)) / 2 (2^(1-E(a)) is always a normal power of two).
        let twice_bias_plus_one = self.int(2 * bias + 1);
        let half = self.pow2(-1);
        let sa_field = self.b.ins().isub(twice_bias_plus_one, fa);
        let sa = self.float_with_field(sa_field);
        let a1 = self.b.ins().fmul(a, sa);
        let a1 = self.b.ins().fmul(a1, half);
        let sb_field = self.b.ins().isub(twice_bias_plus_one, fb);
        let sb = self.float_with_field(sb_field);
        let b1 = self.b.ins().fmul(b, sb);
        let b1 = self.b.ins().fmul(b1, half);
        // K = -(E(a) + E(b)) = 2 bias - fa - fb, applied as 2^(K>>1) 2^(K - (K>>1)).
        let twice_bias = self.int(2 * bias);
        let k = self.b.ins().isub(twice_bias, fab);
        let k1 = self.b.ins().sshr_imm_u(k, 1);
        let k2 = self.b.ins().isub(k, k1);
        let bias_v = self.int(bias);
        let f1_field = self.b.ins().iadd(k1, bias_v);
        let f2_field = self.b.ins().iadd(k2, bias_v);
        let f1 = self.float_with_field(f1_field);
        let f2 = self.float_with_field(f2_field);
        let c1 = self.b.ins().fmul(c, f1);
        let c1 = self.b.ins().fmul(c1, f2);
        let r1 = self.b.ins().fmul(r, f1);
        let r1 = self.b.ins().fmul(r1, f2);
        // A nonzero c' flushed to zero keeps its sign as ±u.
        let c1_zero = self.fcmp_zero(FloatCC::Equal, c1);
        // A NaN c makes r NaN, decided below.
        let c_nonzero = self.fcmp_zero(FloatCC::NotEqual, c);
        let flushed = self.and(c1_zero, c_nonzero);
        let sign = self.int(self.f.sign_bit());
        let c_bits = self.bits(c);
        let c_sign = self.and(c_bits, sign);
        let one = self.int(1);
        let tiny_c = self.or(c_sign, one);
        let tiny_c = self.float(tiny_c);
        let c1 = self.sel(flushed, tiny_c, c1);

        // Step 3: the sign of P' + pi' + c' - r' by two Grow-Expansion passes.
        let p1 = self.b.ins().fmul(a1, b1);
        let np1 = self.b.ins().fneg(p1);
        let pi1 = self.b.ins().fma(a1, b1, np1);
        let (q1, h1) = self.two_sum(c1, pi1);
        let (q2, h2) = self.two_sum(q1, p1);
        let nr1 = self.b.ins().fneg(r1);
        let (s1, g1) = self.two_sum(nr1, h1);
        let (s2, g2) = self.two_sum(s1, h2);
        let (s3, g3) = self.two_sum(s2, q2);
        let mut sum_sign = g1;
        for component in [g2, g3, s3] {
            // Unordered-or-not-equal (x64 has no vector `one`): a NaN component only occurs
            // when r is not finite, and those lanes are decided below.
            let nonzero = self.fcmp_zero(FloatCC::NotEqual, component);
            sum_sign = self.sel(nonzero, component, sum_sign);
        }
        // A zero product (P' = 0 exactly when a or b is 0: a', b' are at least 2^(1-p)) leaves
        // r = c exact; the scaled terms are not exact then (K comes from a zero's exponent).
        let product_zero = self.fcmp_zero(FloatCC::Equal, p1);
        let use_product = self.or(dominant, product_zero);
        let e = self.sel(use_product, p1, sum_sign);

        // A non-finite r: overflow (finite operands) steps toward zero, the rest never steps.
        let inf = self.float_bits(if self.f.width == 64 {
            0x7ff0_0000_0000_0000
        } else {
            0x7f80_0000
        });
        let ar = self.fabs(r);
        let r_finite = self.fcmp(FloatCC::LessThan, ar, inf);
        let aa = self.fabs(a);
        let ab = self.fabs(b);
        let ac = self.fabs(c);
        let a_finite = self.fcmp(FloatCC::LessThan, aa, inf);
        let b_finite = self.fcmp(FloatCC::LessThan, ab, inf);
        let c_finite = self.fcmp(FloatCC::LessThan, ac, inf);
        let ops_finite = self.and(a_finite, b_finite);
        let ops_finite = self.and(ops_finite, c_finite);
        let nr = self.b.ins().fneg(r);
        let zero = self.float_bits(0);
        let e_nonfinite = self.sel(ops_finite, nr, zero);
        self.sel(r_finite, e, e_nonfinite)
    }

    /// The sign of `ab + c - r` for float operands, in double (module docs, "fma on float"):
    /// `P = ab` is exact in double, `(S, T) = TwoSum(P, c)` splits `x` exactly, `S - r` is exact,
    /// and `(S - r) + T` has the sign of `x - r`. Returned as a float carrier:
    /// `demote(D 2^400)` keeps the sign and never flushes a nonzero `D` (at least `2^-298`) to
    /// zero. Hard inputs: as for the expansion method; overflow and infinities need no case
    /// (`S - inf = -inf` has the right sign, `inf - inf` is NaN).
    fn fma_sign_via_double(&mut self, a: Value, b: Value, c: Value, r: Value) -> Value {
        let scale = self
            .b
            .ins()
            .f64const(Ieee64::with_bits(((400 + 1023) as u64) << 52));
        let sign_of = |e: &mut Self, [a, b, c, r]: [Value; 4]| -> Value {
            let p = e.b.ins().fmul(a, b);
            let (s, t) = e.two_sum(p, c);
            let u = e.b.ins().fsub(s, r);
            let d = e.b.ins().fadd(u, t);
            let scale = if e.f.vector {
                e.b.ins().splat(types::F64X2, scale)
            } else {
                scale
            };
            e.b.ins().fmul(d, scale)
        };
        if !self.f.vector {
            let wide = [a, b, c, r].map(|x| self.b.ins().fpromote(types::F64, x));
            let d = sign_of(self, wide);
            return self.b.ins().fdemote(types::F32, d);
        }
        // F32X4: lanes 0-1 and 2-3 as two F64X2, then the two demoted halves joined.
        let low = [a, b, c, r].map(|x| self.b.ins().fvpromote_low(x));
        let high = [a, b, c, r].map(|x| {
            let bytes = bitcast_le(self.b, types::I8X16, x);
            let moved = shuffle_bytes(self.b, bytes, bytes, [8, 16]);
            let moved = bitcast_le(self.b, types::F32X4, moved);
            self.b.ins().fvpromote_low(moved)
        });
        let d_low = sign_of(self, low);
        let d_high = sign_of(self, high);
        let e_low = self.b.ins().fvdemote(d_low);
        let e_high = self.b.ins().fvdemote(d_high);
        let low_bytes = bitcast_le(self.b, types::I8X16, e_low);
        let high_bytes = bitcast_le(self.b, types::I8X16, e_high);
        let joined = shuffle_bytes(self.b, low_bytes, high_bytes, [0, 16]);
        bitcast_le(self.b, types::F32X4, joined)
    }
}
