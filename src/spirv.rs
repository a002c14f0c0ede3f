//! SPIR-V conversion instructions (`OpConvertFToU` + `SaturatedConversion`, ...) as requests.
//!
//! A compiler that reads SPIR-V (a shader or kernel compiler on Cranelift) sees no
//! `convert_int4_sat_rte(x)`: it sees `OpConvertFToS %v4uint %x` decorated `SaturatedConversion`
//! and `FPRoundingMode RTE`. This module turns one such instruction into the [`Request`] the
//! rest of clconv takes ([`Instruction::request`]), lowers it into the caller's
//! [`FunctionBuilder`] in one call ([`lower`]), and finds every conversion instruction of a
//! binary module with its decorations ([`Module`]).
//!
//! ```
//! use clconv::spirv::{Instruction, Op, SpirvType};
//! use clconv::{Extensions, Rounding};
//! // %98 = OpConvertFToU %v4uchar %97, decorated SaturatedConversion and FPRoundingMode RTE
//! let inst = Instruction {
//!     id: 98,
//!     opcode: Op::ConvertFToU as u32,
//!     result_type: SpirvType::int(8).vector(4),
//!     operand_type: SpirvType::float(32).vector(4),
//!     saturated: true,
//!     rounding: Some(Rounding::Rte),
//! };
//! let request = inst.request(Extensions::default()).unwrap();
//! assert_eq!(request.to_string(), "convert_uchar4_sat_rte(float4)");
//! ```
//!
//! # From instructions to requests
//!
//! SPIR-V integer types are signless: the opcode says how each side is read.
//!
//! | opcode | source | destination | `_sat` | rounding |
//! |---|---|---|---|---|
//! | `OpSConvert` | signed | signed | `SaturatedConversion` | none allowed |
//! | `OpUConvert` | unsigned | unsigned | `SaturatedConversion` | none allowed |
//! | `OpSatConvertSToU` | signed | unsigned | always | none allowed |
//! | `OpSatConvertUToS` | unsigned | signed | always | none allowed |
//! | `OpConvertFToS` | floating | signed | `SaturatedConversion` | `FPRoundingMode` |
//! | `OpConvertFToU` | floating | unsigned | `SaturatedConversion` | `FPRoundingMode` |
//! | `OpConvertSToF` | signed | floating | 8-bit float result: `SaturatedToLargestFloat8NormalConversionEXT` | `FPRoundingMode` |
//! | `OpConvertUToF` | unsigned | floating | 8-bit float result: `SaturatedToLargestFloat8NormalConversionEXT` | `FPRoundingMode` |
//! | `OpFConvert` | floating | floating | 8-bit float result: `SaturatedToLargestFloat8NormalConversionEXT` | `FPRoundingMode` |
//! | `OpBitcast` | any | any | not allowed | not allowed |
//! | `OpConvertFToBF16INTEL` | `float` | bfloat16 bits in a 16-bit integer | not allowed | always nearest even (`FPRoundingMode RTE` allowed) |
//! | `OpConvertBF16ToFINTEL` | bfloat16 bits in a 16-bit integer | `float` | not allowed | exact (`FPRoundingMode RTE` allowed) |
//! | `OpSelect %T %b %one %zero` | bool | any number | not allowed | not allowed (exact) |
//! | `OpINotEqual %bool %x %zero` | integer | bool | not allowed | not allowed (exact) |
//! | `OpFUnordNotEqual %bool %x %zero` | floating | bool | not allowed | not allowed (exact) |
//!
//! The last three are how SPIR-V producers write a bool conversion (glslang, naga and Tint:
//! `T(b)` selects a constant 1 or 1.0 and 0; `bool(x)` compares with a zero constant, on either
//! side, unordered so that NaN is true); they are read only with those constants. Any other
//! select or comparison is no conversion, and `OpFOrdNotEqual` against zero (NaN false) is a
//! comparison, not a bool conversion of any language.
//!
//! Floating widths 16, 32 and 64 are `half` (needs [`Extensions::fp16`]; a [`Module`] turns it
//! on when it declares a capability that allows half conversions, [`Module::half_capability`]),
//! `float` and `double`; an `OpTypeFloat` with an FP Encoding operand is `bfloat` (16 bits,
//! `BFloat16KHR`), `fp8e4m3` (8 bits, `Float8E4M3EXT`) or `fp8e5m2` (8 bits, `Float8E5M2EXT`),
//! which need no extension ([`FpEncoding`], and the section below);
//! integer widths 8, 16, 32 and 64 are `char`, `short`, `int` and `long` or their unsigned
//! twins; a vector has 2, 3, 4, 8 or 16 components, as many on both sides (an `OpBitcast` may
//! change the count when the total bits stay the same, as in `as_uint2(ulong)`).
//!
//! ## Where SPIR-V does not say which request the source named
//!
//! Several OpenCL C requests compile to the same instruction. The mapping then picks one whose
//! results are the same bits for every input (`tests/spirv.rs` checks each case against the
//! reference interpreter on the 6,270 conversions compiled by clang and llvm-spirv):
//!
//! 1. **The opcode decides signedness; `OpTypeInt`'s Signedness operand is ignored** (OpenCL
//!    modules always declare 0). The destination of `OpSConvert` is signed and that of
//!    `OpUConvert` unsigned: **an integer conversion keeps its source's signedness**.
//!    Without saturation the result is the low bits of the sign- or zero-extended source, whatever
//!    the destination's signedness, so `convert_uchar(int)` (which llvm-spirv writes as
//!    `OpSConvert %uchar`) reads back as `convert_char(int)`, and `convert_uint(char)` as
//!    `convert_int(char)`: the same bits. With `SaturatedConversion` the two sides have the same
//!    signedness (a conversion that changes it saturates through `OpSatConvertSToU` or
//!    `OpSatConvertUToS`), or the source is unsigned and narrower, which never saturates.
//! 2. **No rounding on integer -> integer.** `FPRoundingMode` is not valid there (an error
//!    here), so `convert_int_rte(char)` arrives without it and reads back as `convert_int(char)`;
//!    a rounding modifier has no effect on an integer -> integer conversion (SPEC.md).
//! 3. **No `FPRoundingMode` on a conversion to floating point** gives the request without a
//!    rounding modifier (`convert_float(int)`). SPIR-V's default there is round to nearest even,
//!    which is also clconv's default static rounding mode; [`lower`] holds to it whatever static
//!    mode its [`Lowering`] has.
//! 4. **`OpBitcast`'s integer elements take the declared Signedness** (0: unsigned), since the
//!    bits do not depend on it: `%x = OpBitcast %uint %float` is `as_uint(float)`.
//! 5. **No instruction at all.** llvm-spirv emits nothing for a conversion that is the identity
//!    on the bits: `convert_T(T)` and `convert_T_sat(T)` with any rounding, and a conversion
//!    between the signed and unsigned integer types of one width without `_sat`
//!    (`convert_uint(int)`): 810 of the 6,270. There is nothing to map.
//!
//! # bfloat16 and 8-bit floats
//!
//! Three SPIR-V extensions bring the formats clconv spells `bfloat`, `fp8e4m3` and `fp8e5m2`.
//! The rules below quote them from the SPIR-V registry (KhronosGroup/SPIRV-Registry,
//! `extensions/`); the numbers are those of `include/spirv/unified1/spirv.core.grammar.json` in
//! KhronosGroup/SPIRV-Headers (the `spirv` crate under rspirv has the same).
//!
//! | what | SPIR-V | value | clconv |
//! |---|---|---|---|
//! | FP Encoding of `OpTypeFloat 16` | `BFloat16KHR` (SPV_KHR_bfloat16; capability `BFloat16TypeKHR`, 5116) | 0 | `bfloat` |
//! | FP Encoding of `OpTypeFloat 8` | `Float8E4M3EXT` (SPV_EXT_float8; capability `Float8EXT`, 4212) | 4214 | `fp8e4m3` |
//! | FP Encoding of `OpTypeFloat 8` | `Float8E5M2EXT` (SPV_EXT_float8) | 4215 | `fp8e5m2` |
//! | decoration | `SaturatedToLargestFloat8NormalConversionEXT` (SPV_EXT_float8) | 4216 | `_sat` |
//! | FP Encoding of `OpTypeFloat 6` | `Float6E2M3EXT` (SPV_EXT_ocp_microscaling_types; capability `Float6EXT`, 4228) | 4223 | `fp6e2m3` |
//! | FP Encoding of `OpTypeFloat 6` | `Float6E3M2EXT` (SPV_EXT_ocp_microscaling_types) | 4224 | `fp6e3m2` |
//! | FP Encoding of `OpTypeFloat 4` | `Float4E2M1EXT` (SPV_EXT_ocp_microscaling_types; capability `Float4EXT`, 4229) | 4225 | `fp4e2m1` |
//! | FP Encoding of `OpTypeFloat 8` | `Float8UnsignedE8M0EXT` (SPV_EXT_ocp_microscaling_types; capability `Float8UnsignedE8M0EXT`, 4230) | 4226 | `fp8e8m0` |
//! | opcode | `OpConvertFToBF16INTEL` (SPV_INTEL_bfloat16_conversion; capability `BFloat16ConversionINTEL`, 6115) | 6116 | `convert_bfloat<n>_rte(float<n>)` |
//! | opcode | `OpConvertBF16ToFINTEL` (SPV_INTEL_bfloat16_conversion) | 6117 | `convert_float<n>(bfloat<n>)` |
//!
//! 1. **The types.** SPV_EXT_float8, "FP Encoding" (its rows for SPIR-V section 3.51): "4214
//!    *Float8E4M3EXT*: The floating point type is encoded as an FP8 E4M3 type, as specified in
//!    the "FP8 Formats For Deep Learning" whitepaper", width 8, and likewise 4215
//!    *Float8E5M2EXT* "as an FP8 E5M2 type". That whitepaper's E4M3 has no infinities and one NaN
//!    per sign (S.1111.111), largest finite 448: LLVM's `Float8E4M3FN`, clconv's `fp8e4m3`; its
//!    E5M2 is IEEE-754-like, largest finite 57344: `fp8e5m2`. SPV_KHR_bfloat16, "FP Encoding":
//!    "0 *BFloat16KHR*: The floating point type is encoded as the bfloat16 type, which is
//!    equivalent to the IEEE754 binary32 floating point encoding but with 16 fewer bits in its
//!    significand", width 16: clconv's `bfloat`. Another width with one of these encodings
//!    (`OpTypeFloat 16 Float8E4M3EXT`), or an encoding clconv has no type for, is
//!    [`SpirvError::FloatEncoding`] when the module is read.
//! 2. **Saturation into 8-bit floats.** SPV_EXT_float8, "Decoration" (its row for section
//!    3.20): "4216 *SaturatedToLargestFloat8NormalConversionEXT*: Indicates that a conversion to a
//!    floating-point type with FP Encoding *Float8E4M3EXT* or *Float8E5M2EXT* of a value which is
//!    outside of the representable range of _Result Type_, or infinite, results in the largest
//!    representable normal (i.e. non-infinite) value with a matching sign. This decoration must
//!    only be applied to the **OpFConvert**, **OpConvertSToF**, or **OpConvertUToF** instructions
//!    with a _Result Type_ that uses an *Float8E4M3EXT* or *Float8E5M2EXT* FP Encoding." That is
//!    clconv's `_sat` into `fp8e4m3` and `fp8e5m2` (NaN stays NaN): `OpFConvert %v4fp8e4m3 %x`
//!    so decorated is `convert_fp8e4m3x4_sat(float4)`. On anything else (another opcode, a
//!    `bfloat`, `half` or integer result) it is [`SpirvError::DecorationNotApplicable`], and so is
//!    `SaturatedConversion` on an 8-bit float result (SPIR-V allows that one on integer results
//!    only). [`Instruction::saturated`] holds either decoration: which one is the result type's
//!    business.
//! 3. **Without it.** SPV_EXT_float8, "Conversion Instructions" (added to **OpFConvert**,
//!    **OpConvertSToF** and **OpConvertUToF** in section 3.42.11): "When converting to
//!    floating-point values with the *Float8E4M3EXT* or *Float8E5M2EXT* encoding, out-of-range
//!    values and infinity are converted to largest representable finite value with a matching
//!    sign if the conversion is decorated with *SaturatedToLargestFloat8NormalConversionEXT*,
//!    otherwise they are converted to NaN if the destination type uses the *Float8E4M3EXT* FP
//!    encoding or infinity with a matching sign if the destination type uses the *Float8E5M2EXT*
//!    FP encoding." That is the request without `_sat` (`convert_fp8e4m3x4(float4)`): overflow
//!    into `fp8e4m3` gives NaN, into `fp8e5m2` infinity. The rounding is the `FPRoundingMode`
//!    decoration's, else nearest even, as for every conversion to floating point (rule 3 above).
//!    "Out-of-range" is read as IEEE 754 reads overflow, after rounding: in nearest even,
//!    `fp8e4m3` rounds values up to 464 to 448 (464 is a tie, which goes to 448's even
//!    significand), and only beyond is NaN; with `FPRoundingMode RTZ` (or RTP below, RTN above) a finite value
//!    beyond the range gives the largest finite value, as IEEE 754 overflow does in those
//!    modes, not NaN or infinity. The extension's sentence does not mention rounding modes;
//!    infinity itself is NaN in `fp8e4m3` and infinity in `fp8e5m2` in every mode.
//! 4. **Conversions from and to bfloat16.** SPV_KHR_bfloat16, "Conversion Instructions" (added
//!    to **OpFConvert**, **OpConvertFToU**, **OpConvertFToS**, **OpConvertSToF** and
//!    **OpConvertUToF**): "Conversions to or from floating-point values with the `BFloat16KHR`
//!    encoding first convert the source value to IEEE754 binary32, and then from IEEE754 binary32
//!    to the target format. When converting from `BFloat16KHR` to IEEE754 binary32, the
//!    additional significand bits are padded with 0s, producing the exact same value. When
//!    converting from IEEE754 binary32 to `BFloat16KHR`, the rounding mode is defined by the
//!    client API." A conversion **from** bfloat16 is therefore one rounding of the bfloat16's own
//!    value, which is what clconv's request does (`OpConvertFToS %int %bf` is
//!    `convert_int(bfloat)`). A conversion **into** bfloat16 is, by those words, two roundings
//!    (source -> binary32 -> bfloat16), while a clconv request rounds once, from the exact value,
//!    by the `FPRoundingMode` decoration (else nearest even: SPIR-V's default; the extension
//!    leaves the binary32 -> bfloat16 step to the client API and the first step's mode unsaid).
//!    The two agree whenever binary32 holds the source exactly (`half`, `float`, `bfloat`, the
//!    8-bit floats, 8- and 16-bit integers), and for every source when both steps round in
//!    one directed mode (truncating to 24 significant bits and then to 8 is truncating to 8;
//!    the same for up and down). They can differ only in nearest-even from `double`, `int`,
//!    `uint`, `long` or `ulong`, when the first rounding lands exactly halfway between two
//!    bfloat16 values: the integer 2^24 + 2^16 + 1 is 2^24 + 2^16 in binary32, a tie that goes
//!    to 2^24 in bfloat16, whereas clconv's one rounding gives 2^24 + 2^17 (the nearer).
//!    clconv maps such an instruction to the one request (`OpFConvert %bf %double` is
//!    `convert_bfloat(double)`) because a [`Request`] is one conversion, rounded once, and no
//!    request says "through binary32"; an embedder that wants the two roundings lowers
//!    `convert_float(double)` and then `convert_bfloat(float)` itself.
//! 5. **SPV_INTEL_bfloat16_conversion**, "Instructions" (added to section 3.42.11):
//!    **OpConvertFToBF16INTEL** (6116) "Convert value numerically from 32-bit floating point to
//!    `bfloat16`, which is represented as a 16-bit unsigned integer. _Result Type_ must be a
//!    scalar or vector of integer type. The component width must be 16 bits. [...] _Float Value_
//!    [...] The component width must be 32 bits."; **OpConvertBF16ToFINTEL** (6117) "Interpret a
//!    16-bit integer value as `bfloat16` and convert the value numerically to 32-bit floating
//!    point." The SPIR-V extension names no rounding; the OpenCL extension whose built-ins
//!    compile to it (cl_intel_bfloat16_conversions, section "6.4.X - `bfloat16` Conversions", in
//!    KhronosGroup/OpenCL-Docs) does: "The only supported rounding mode is implicitly
//!    round-to-nearest-even. No explicit rounding modes are supported." So `OpConvertFToBF16INTEL
//!    %v4ushort %x` is `convert_bfloat4_rte(float4)` (the integer holds the bfloat16's bits, which
//!    is how clconv holds a `bfloat`) and `OpConvertBF16ToFINTEL %v4float %b` is
//!    `convert_float4(bfloat4)`. `FPRoundingMode RTE` on either says what it does anyway and is
//!    accepted; another mode, any saturation, a float side that is not 32 bits or an integer side
//!    that is not 16 is a typed error.
//! 6. **SPV_EXT_ocp_microscaling_types** (approved 2026-06-26) adds the FP Encodings of the
//!    table above ("The floating point type is encoded as an FP4 E2M1 type, as specified in the
//!    "OCP Microscaling Formats v1.0" specification", and likewise) and says nothing of their
//!    conversions: "This specification does not constrain the conversions that are allowed but
//!    client API specifications may" (its issue 2). clconv reads **OpFConvert** between them
//!    and 16-, 32- and 64-bit floats or `bfloat` as its narrow requests, with OCP MX's rules
//!    (`docs/formats.md`: overflow into FP4 and FP6 clamped, E8M0 by the mode), the rounding of
//!    `FPRoundingMode` else nearest even: `OpFConvert %v4fp4 %x` with `%fp4 = OpTypeFloat 4
//!    Float4E2M1EXT` is `convert_fp4e2m1x4(float4)`. Any other conversion of them (from an
//!    integer, to an 8-bit float) is the narrow formats' typed error, and
//!    `SaturatedToLargestFloat8NormalConversionEXT`, which SPV_EXT_float8 limits to its own
//!    encodings, is [`SpirvError::DecorationNotApplicable`] on them. `MXInt8EXT` and
//!    `OpBitcastExtractEXT` are not read.
//!
//! The float-controls execution modes go by width, as SPIR-V states them: `RoundingModeRTZ 16`
//! gives its rounding to conversions into `bfloat` as well as `half` that carry no
//! `FPRoundingMode`, and `DenormFlushToZero 8` or `16` refuses conversions of the 8-bit floats or
//! of `bfloat` ([`Module::rounding_mode`]).
//!
//! # Half loads and stores
//!
//! OpenCL C's `vstore_half_rtz(x, i, p)` is no conversion instruction in SPIR-V: it is
//! `OpExtInst %void %opencl_std vstore_half_r %x %i %p RTZ`, an extended instruction of the
//! `OpenCL.std` set whose last operand is the rounding mode (the `FPRoundingMode` enumerant:
//! 0 RTE, 1 RTZ, 2 RTP, 3 RTN). The nine of them:
//!
//! | number | instruction | operands | OpenCL C |
//! |---|---|---|---|
//! | 173 | `vload_half` | offset, p | `vload_half(i, p)` |
//! | 174 | `vload_halfn` | offset, p, n | `vload_halfn(i, p)` |
//! | 175 | `vstore_half` | data, offset, p | `vstore_half(x, i, p)` |
//! | 176 | `vstore_half_r` | data, offset, p, mode | `vstore_half_<mode>(x, i, p)` |
//! | 177 | `vstore_halfn` | data, offset, p | `vstore_halfn(x, i, p)` |
//! | 178 | `vstore_halfn_r` | data, offset, p, mode | `vstore_halfn_<mode>(x, i, p)` |
//! | 179 | `vloada_halfn` | offset, p, n | `vloada_halfn(i, p)` |
//! | 180 | `vstorea_halfn` | data, offset, p | `vstorea_halfn(x, i, p)` |
//! | 181 | `vstorea_halfn_r` | data, offset, p, mode | `vstorea_halfn_<mode>(x, i, p)` |
//!
//! (The numbers are those of the Khronos grammar `extinst.opencl.std.100.grammar.json`, as the
//! `spirv` crate under rspirv spells them.) A store's data is `float` or `double` with 1, 2, 3,
//! 4, 8 or 16 components; a load's result is `float` with as many. clconv lowers every such
//! combination; any other type (a `double` result, a `half` operand) is an error naming the
//! instruction, never silence. A store without a mode rounds to nearest even: SPIR-V has no
//! static rounding mode (the same rule as a conversion without `FPRoundingMode`). The pointer's
//! pointee type is not checked: the instruction itself says the memory holds halves.
//!
//! A [`HalfInstruction`] is one such instruction, [`HalfInstruction::access`] says what it does
//! (`vstore_half_rtz(float)`, a [`HalfAccess`]) and [`lower_half`] lowers it with clconv's
//! [`Lowering::vstore_halfn`] and [`Lowering::vload_halfn`].
//!
//! # Reading a module
//!
//! [`Module::parse`] reads a binary module (either byte order) with
//! [rspirv](https://docs.rs/rspirv), the gfx-rs SPIR-V crate. It is chosen over the bare
//! `spirv` crate (its own dependency, which only defines the enums) because its parser reads
//! every instruction by the SPIR-V grammar generated from the Khronos headers: `OpName`'s
//! strings, `OpDecorate`'s decoration-specific operands (`FPRoundingMode RTE`), optional and
//! variadic operands (`OpGroupDecorate`) come out typed, and a corrupt operand anywhere in the
//! module is an error instead of a misread. It is maintained (release 0.13 follows SPIR-V SDK
//! 1.4.341) and small (its only other dependency is rustc-hash). Before rspirv sees a module,
//! clconv checks the header and every instruction's word count and opcode itself, so that a
//! truncated or corrupt module is an error naming the instruction, never a panic inside the
//! parser.
//!
//! Decorations count whether they are written on the instruction (`OpDecorate`) or through a
//! decoration group (`OpDecorationGroup`, `OpGroupDecorate`).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use clconv::{spirv::Module, Extensions};
//! # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv"))?;
//! // bytes: a SPIR-V module, e.g. from llvm-spirv
//! let module = Module::parse(&bytes)?;
//! for found in module.conversions(Extensions::with_fp16())? {
//!     println!("{}\t%{}\t{}", found.function, found.instruction.id, found.request);
//! }
//! # let first = &module.conversions(Extensions::with_fp16())?[0];
//! # assert_eq!(first.function.to_string(), "pack_rgba");
//! # assert_eq!(first.request.to_string(), "convert_uchar4_sat_rte(float4)");
//! # Ok(())
//! # }
//! ```

mod half;
mod reader;

pub use half::{lower_half, HalfAccess, HalfInstruction, HalfOp, OPENCL_STD};
pub use reader::{Function, Item, Located, LocatedHalf, Mapped, MappedHalf, Module};

use crate::lower::{LowerError, Lowering};
use crate::request::{Conversion, Reinterpretation, Request, RequestError};
use crate::types::{Extensions, Rounding, ScalarType, VectorType, Width};
use cranelift_codegen::ir::Value;
use cranelift_frontend::FunctionBuilder;
use std::fmt;

/// The SPIR-V opcodes of the conversions clconv lowers, with their SPIR-V numbers.
///
/// ```
/// use clconv::spirv::Op;
/// assert_eq!(Op::SConvert as u32, 114);
/// assert_eq!(Op::from_opcode(124), Some(Op::Bitcast));
/// assert_eq!(Op::from_opcode(129), None); // OpFAdd
/// assert_eq!(Op::ConvertFToU.name(), "OpConvertFToU");
/// assert_eq!(Op::from_opcode(6116), Some(Op::ConvertFToBF16INTEL)); // SPV_INTEL_bfloat16_conversion
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Op {
    /// `OpConvertFToU`: floating -> unsigned integer.
    ConvertFToU = 109,
    /// `OpConvertFToS`: floating -> signed integer.
    ConvertFToS = 110,
    /// `OpConvertSToF`: signed integer -> floating.
    ConvertSToF = 111,
    /// `OpConvertUToF`: unsigned integer -> floating.
    ConvertUToF = 112,
    /// `OpUConvert`: unsigned integer -> unsigned integer.
    UConvert = 113,
    /// `OpSConvert`: signed integer -> signed integer.
    SConvert = 114,
    /// `OpFConvert`: floating -> floating.
    FConvert = 115,
    /// `OpBitcast`: the same bits as another type (`as_<type>`).
    Bitcast = 124,
    /// `OpSatConvertSToU`: signed -> unsigned integer, saturating.
    SatConvertSToU = 118,
    /// `OpSatConvertUToS`: unsigned -> signed integer, saturating.
    SatConvertUToS = 119,
    /// `OpConvertFToBF16INTEL` (SPV_INTEL_bfloat16_conversion): `float` -> the bits of a
    /// bfloat16 in a 16-bit integer, rounded to nearest even (`convert_bfloat_rte(float)`).
    ConvertFToBF16INTEL = 6116,
    /// `OpConvertBF16ToFINTEL` (SPV_INTEL_bfloat16_conversion): the bits of a bfloat16 in a
    /// 16-bit integer -> `float` (`convert_float(bfloat)`).
    ConvertBF16ToFINTEL = 6117,
    /// `OpSelect %T %b %one %zero`: how SPIR-V producers write a bool -> number conversion
    /// (`convert_int(bool)`); read only with those constants.
    Select = 169,
    /// `OpINotEqual %bool %x %zero`: integer -> bool (`convert_bool(int)`); read only against
    /// a zero constant.
    INotEqual = 171,
    /// `OpFUnordNotEqual %bool %x %zero`: float -> bool, NaN true (`convert_bool(float)`); read
    /// only against a zero constant.
    FUnordNotEqual = 183,
}

impl Op {
    /// All fifteen: SPIR-V's ten conversions, SPV_INTEL_bfloat16_conversion's two, then the
    /// three instructions a bool conversion is written as.
    pub const ALL: [Op; 15] = [
        Op::ConvertFToU,
        Op::ConvertFToS,
        Op::ConvertSToF,
        Op::ConvertUToF,
        Op::UConvert,
        Op::SConvert,
        Op::FConvert,
        Op::SatConvertSToU,
        Op::SatConvertUToS,
        Op::Bitcast,
        Op::ConvertFToBF16INTEL,
        Op::ConvertBF16ToFINTEL,
        Op::Select,
        Op::INotEqual,
        Op::FUnordNotEqual,
    ];

    /// The conversion opcode numbered `opcode`, if it is one.
    pub fn from_opcode(opcode: u32) -> Option<Op> {
        Op::ALL.into_iter().find(|op| *op as u32 == opcode)
    }

    /// The SPIR-V name: `"OpSConvert"`.
    pub const fn name(self) -> &'static str {
        match self {
            Op::ConvertFToU => "OpConvertFToU",
            Op::ConvertFToS => "OpConvertFToS",
            Op::ConvertSToF => "OpConvertSToF",
            Op::ConvertUToF => "OpConvertUToF",
            Op::UConvert => "OpUConvert",
            Op::SConvert => "OpSConvert",
            Op::FConvert => "OpFConvert",
            Op::Bitcast => "OpBitcast",
            Op::SatConvertSToU => "OpSatConvertSToU",
            Op::SatConvertUToS => "OpSatConvertUToS",
            Op::ConvertFToBF16INTEL => "OpConvertFToBF16INTEL",
            Op::ConvertBF16ToFINTEL => "OpConvertBF16ToFINTEL",
            Op::Select => "OpSelect",
            Op::INotEqual => "OpINotEqual",
            Op::FUnordNotEqual => "OpFUnordNotEqual",
        }
    }

    /// What the opcode reads its operand as and gives its result as.
    fn sides(self) -> (Side, Side) {
        use Side::{Any, BFloatBits, Bool, Float, Integer, Signed, Unsigned};
        match self {
            Op::ConvertFToU => (Float, Unsigned),
            Op::ConvertFToS => (Float, Signed),
            Op::ConvertSToF => (Signed, Float),
            Op::ConvertUToF => (Unsigned, Float),
            Op::UConvert => (Unsigned, Unsigned),
            Op::SConvert => (Signed, Signed),
            Op::FConvert => (Float, Float),
            Op::Bitcast => (Any, Any),
            Op::SatConvertSToU => (Signed, Unsigned),
            Op::SatConvertUToS => (Unsigned, Signed),
            Op::ConvertFToBF16INTEL => (Float, BFloatBits),
            Op::ConvertBF16ToFINTEL => (BFloatBits, Float),
            Op::Select => (Bool, Any),
            Op::INotEqual => (Integer, Bool),
            Op::FUnordNotEqual => (Float, Bool),
        }
    }

    /// The three a bool conversion is written as.
    const fn is_bool_idiom(self) -> bool {
        matches!(self, Op::Select | Op::INotEqual | Op::FUnordNotEqual)
    }

    /// SPV_INTEL_bfloat16_conversion's two: `float` on one side, bfloat16 bits in a 16-bit
    /// integer on the other.
    const fn is_intel_bfloat16(self) -> bool {
        matches!(self, Op::ConvertFToBF16INTEL | Op::ConvertBF16ToFINTEL)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an opcode reads one side.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Signed,
    Unsigned,
    Float,
    Any,
    /// A 16-bit integer holding a bfloat16's bits (SPV_INTEL_bfloat16_conversion).
    BFloatBits,
    /// `OpTypeBool`.
    Bool,
    /// An integer of either signedness, as its type declares it.
    Integer,
}

/// The FP Encoding operand of `OpTypeFloat`: the formats other than IEEE-754's binary16, 32
/// and 64 that clconv reads (the module docs quote the extensions that define them).
///
/// ```
/// use clconv::spirv::FpEncoding;
/// use clconv::ScalarType;
/// assert_eq!(FpEncoding::from_value(4214), Some(FpEncoding::Float8E4M3EXT));
/// assert_eq!(FpEncoding::Float8E4M3EXT.width(), 8);
/// assert_eq!(FpEncoding::BFloat16KHR.scalar_type(), ScalarType::BFloat);
/// assert_eq!(FpEncoding::from_value(4225), Some(FpEncoding::Float4E2M1EXT));
/// assert_eq!(FpEncoding::Float4E2M1EXT.width(), 4);
/// assert_eq!(FpEncoding::from_value(4227), None); // MXInt8EXT: clconv has no such type
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FpEncoding {
    /// `BFloat16KHR` (SPV_KHR_bfloat16): bfloat16, 16 bits, clconv's `bfloat`.
    BFloat16KHR = 0,
    /// `Float8E4M3EXT` (SPV_EXT_float8): OCP FP8 E4M3, 8 bits, clconv's `fp8e4m3`.
    Float8E4M3EXT = 4214,
    /// `Float8E5M2EXT` (SPV_EXT_float8): OCP FP8 E5M2, 8 bits, clconv's `fp8e5m2`.
    Float8E5M2EXT = 4215,
    /// `Float6E2M3EXT` (SPV_EXT_ocp_microscaling_types): OCP MX FP6 E2M3, 6 bits, `fp6e2m3`.
    Float6E2M3EXT = 4223,
    /// `Float6E3M2EXT` (SPV_EXT_ocp_microscaling_types): OCP MX FP6 E3M2, 6 bits, `fp6e3m2`.
    Float6E3M2EXT = 4224,
    /// `Float4E2M1EXT` (SPV_EXT_ocp_microscaling_types): OCP MX FP4 E2M1, 4 bits, `fp4e2m1`.
    Float4E2M1EXT = 4225,
    /// `Float8UnsignedE8M0EXT` (SPV_EXT_ocp_microscaling_types): OCP MX's E8M0 scale, 8 bits,
    /// `fp8e8m0`.
    Float8UnsignedE8M0EXT = 4226,
}

impl FpEncoding {
    /// All seven, in value order.
    pub const ALL: [FpEncoding; 7] = [
        FpEncoding::BFloat16KHR,
        FpEncoding::Float8E4M3EXT,
        FpEncoding::Float8E5M2EXT,
        FpEncoding::Float6E2M3EXT,
        FpEncoding::Float6E3M2EXT,
        FpEncoding::Float4E2M1EXT,
        FpEncoding::Float8UnsignedE8M0EXT,
    ];

    /// The encoding whose operand value is `value`, if clconv reads it.
    pub fn from_value(value: u32) -> Option<FpEncoding> {
        FpEncoding::ALL.into_iter().find(|e| *e as u32 == value)
    }

    /// The SPIR-V name: `"Float8E4M3EXT"`.
    pub const fn name(self) -> &'static str {
        match self {
            FpEncoding::BFloat16KHR => "BFloat16KHR",
            FpEncoding::Float8E4M3EXT => "Float8E4M3EXT",
            FpEncoding::Float8E5M2EXT => "Float8E5M2EXT",
            FpEncoding::Float6E2M3EXT => "Float6E2M3EXT",
            FpEncoding::Float6E3M2EXT => "Float6E3M2EXT",
            FpEncoding::Float4E2M1EXT => "Float4E2M1EXT",
            FpEncoding::Float8UnsignedE8M0EXT => "Float8UnsignedE8M0EXT",
        }
    }

    /// The extension that defines it: `"SPV_EXT_float8"`.
    pub const fn extension(self) -> &'static str {
        match self {
            FpEncoding::BFloat16KHR => "SPV_KHR_bfloat16",
            FpEncoding::Float8E4M3EXT | FpEncoding::Float8E5M2EXT => "SPV_EXT_float8",
            FpEncoding::Float6E2M3EXT
            | FpEncoding::Float6E3M2EXT
            | FpEncoding::Float4E2M1EXT
            | FpEncoding::Float8UnsignedE8M0EXT => "SPV_EXT_ocp_microscaling_types",
        }
    }

    /// The one `OpTypeFloat` width the encoding has (its extension's "Width(s)" column).
    pub const fn width(self) -> u32 {
        match self {
            FpEncoding::BFloat16KHR => 16,
            FpEncoding::Float8E4M3EXT
            | FpEncoding::Float8E5M2EXT
            | FpEncoding::Float8UnsignedE8M0EXT => 8,
            FpEncoding::Float6E2M3EXT | FpEncoding::Float6E3M2EXT => 6,
            FpEncoding::Float4E2M1EXT => 4,
        }
    }

    /// clconv's type: `bfloat`, `fp8e4m3`, `fp8e5m2`, `fp6e2m3`, `fp6e3m2`, `fp4e2m1`,
    /// `fp8e8m0`.
    pub const fn scalar_type(self) -> ScalarType {
        match self {
            FpEncoding::BFloat16KHR => ScalarType::BFloat,
            FpEncoding::Float8E4M3EXT => ScalarType::Fp8E4M3,
            FpEncoding::Float8E5M2EXT => ScalarType::Fp8E5M2,
            FpEncoding::Float6E2M3EXT => ScalarType::Fp6E2M3,
            FpEncoding::Float6E3M2EXT => ScalarType::Fp6E3M2,
            FpEncoding::Float4E2M1EXT => ScalarType::Fp4E2M1,
            FpEncoding::Float8UnsignedE8M0EXT => ScalarType::Fp8E8M0,
        }
    }

    /// True for the two 8-bit floats, the results `SaturatedToLargestFloat8NormalConversionEXT`
    /// applies to.
    pub const fn is_float8(self) -> bool {
        matches!(self, FpEncoding::Float8E4M3EXT | FpEncoding::Float8E5M2EXT)
    }
}

impl fmt::Display for FpEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A SPIR-V scalar type: `OpTypeInt` or `OpTypeFloat`.
///
/// ```
/// use clconv::spirv::{FpEncoding, Scalar};
/// let uint = Scalar::Int { width: 32, signed: false };
/// assert_eq!(uint.to_string(), "uint");
/// assert_eq!(Scalar::Float { width: 16 }.to_string(), "half");
/// let e4m3 = Scalar::EncodedFloat { encoding: FpEncoding::Float8E4M3EXT };
/// assert_eq!(e4m3.to_string(), "fp8e4m3");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `OpTypeInt width signedness`.
    Int {
        /// Width in bits.
        width: u32,
        /// The Signedness operand is 1. The opcode decides how a conversion reads the bits;
        /// only an `OpBitcast` names its integer types by this.
        signed: bool,
    },
    /// `OpTypeFloat width` without an FP Encoding operand: IEEE-754.
    Float {
        /// Width in bits.
        width: u32,
    },
    /// `OpTypeFloat width encoding`: bfloat16 or an 8-bit float. A [`Module`] reads one only
    /// when `width` is the encoding's ([`FpEncoding::width`]); the width is the encoding's.
    EncodedFloat {
        /// The FP Encoding operand.
        encoding: FpEncoding,
    },
    /// `OpTypeBool`: no bit width of its own (counted as 1), the condition of an `OpSelect`
    /// and the result of a comparison.
    Bool,
}

impl fmt::Display for Scalar {
    /// spirv-dis's names: `uchar`, `int`, `half`, `double`; `int7` and `float8` for widths
    /// OpenCL does not have; `bfloat16`, `fp8e4m3` and `fp8e5m2` for the encoded floats.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Int { width, signed } => {
                let u = if signed { "" } else { "u" };
                match width {
                    8 => write!(f, "{u}char"),
                    16 => write!(f, "{u}short"),
                    32 => write!(f, "{u}int"),
                    64 => write!(f, "{u}long"),
                    w => write!(f, "{u}int{w}"),
                }
            }
            Scalar::Float { width: 16 } => f.write_str("half"),
            Scalar::Float { width: 32 } => f.write_str("float"),
            Scalar::Float { width: 64 } => f.write_str("double"),
            Scalar::Float { width } => write!(f, "float{width}"),
            Scalar::EncodedFloat { encoding } => f.write_str(match encoding {
                FpEncoding::BFloat16KHR => "bfloat16",
                FpEncoding::Float8E4M3EXT => "fp8e4m3",
                FpEncoding::Float8E5M2EXT => "fp8e5m2",
                FpEncoding::Float6E2M3EXT => "fp6e2m3",
                FpEncoding::Float6E3M2EXT => "fp6e3m2",
                FpEncoding::Float4E2M1EXT => "fp4e2m1",
                FpEncoding::Float8UnsignedE8M0EXT => "fp8e8m0",
            }),
            Scalar::Bool => f.write_str("bool"),
        }
    }
}

/// A SPIR-V numeric type as a conversion sees it: a scalar, or an `OpTypeVector` of one.
///
/// ```
/// use clconv::spirv::SpirvType;
/// let t = SpirvType::float(32).vector(4);
/// assert_eq!(t.to_string(), "v4float");
/// assert_eq!(t.bits(), 128);
/// assert_eq!(SpirvType::int(8).to_string(), "uchar");
/// assert_eq!(SpirvType::signed_int(64).vector(2).to_string(), "v2long");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SpirvType {
    /// The component type.
    pub scalar: Scalar,
    /// 1 for a scalar, else the `OpTypeVector`'s component count.
    pub components: u32,
}

impl SpirvType {
    /// `OpTypeInt width 0`, as OpenCL modules declare every integer type.
    pub const fn int(width: u32) -> SpirvType {
        SpirvType {
            scalar: Scalar::Int {
                width,
                signed: false,
            },
            components: 1,
        }
    }

    /// `OpTypeInt width 1`.
    pub const fn signed_int(width: u32) -> SpirvType {
        SpirvType {
            scalar: Scalar::Int {
                width,
                signed: true,
            },
            components: 1,
        }
    }

    /// `OpTypeFloat width`.
    pub const fn float(width: u32) -> SpirvType {
        SpirvType {
            scalar: Scalar::Float { width },
            components: 1,
        }
    }

    /// `OpTypeFloat width encoding`, the width being the encoding's (`OpTypeFloat 8
    /// Float8E4M3EXT` for [`FpEncoding::Float8E4M3EXT`]).
    ///
    /// ```
    /// use clconv::spirv::{FpEncoding, SpirvType};
    /// let t = SpirvType::encoded(FpEncoding::BFloat16KHR).vector(4);
    /// assert_eq!((t.to_string(), t.bits()), ("v4bfloat16".to_string(), 64));
    /// ```
    pub const fn encoded(encoding: FpEncoding) -> SpirvType {
        SpirvType {
            scalar: Scalar::EncodedFloat { encoding },
            components: 1,
        }
    }

    /// The `OpTypeVector` of `components` of this type's scalar.
    pub const fn vector(self, components: u32) -> SpirvType {
        SpirvType {
            scalar: self.scalar,
            components,
        }
    }

    /// The scalar's width in bits.
    pub const fn scalar_bits(&self) -> u32 {
        match self.scalar {
            Scalar::Int { width, .. } | Scalar::Float { width } => width,
            Scalar::EncodedFloat { encoding } => encoding.width(),
            Scalar::Bool => 1,
        }
    }

    /// Bits of the whole value, as `OpBitcast` counts them (a 3-component vector is 3
    /// components, not 4 as OpenCL's `as_` counts).
    pub const fn bits(&self) -> u64 {
        self.scalar_bits() as u64 * self.components as u64
    }

    /// True for `OpTypeFloat` components (with an FP Encoding or without).
    pub const fn is_float(&self) -> bool {
        matches!(
            self.scalar,
            Scalar::Float { .. } | Scalar::EncodedFloat { .. }
        )
    }

    /// True for components of `OpTypeFloat 8 Float8E4M3EXT` or `Float8E5M2EXT`.
    pub const fn is_float8(&self) -> bool {
        matches!(self.scalar, Scalar::EncodedFloat { encoding } if encoding.is_float8())
    }
}

impl fmt::Display for SpirvType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.components == 1 {
            self.scalar.fmt(f)
        } else {
            write!(f, "v{}{}", self.components, self.scalar)
        }
    }
}

/// Which side of an instruction a type belongs to, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The result type.
    Result,
    /// The operand's type.
    Operand,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Result => "result",
            Role::Operand => "operand",
        })
    }
}

/// One SPIR-V conversion instruction: its opcode, types and decorations, as a module states them.
///
/// [`Module`] finds these in a binary module; an embedder with its own SPIR-V reader fills one
/// in directly. [`Instruction::request`] maps it to a [`Request`] (see the module docs for the
/// rules) or says why it is not one clconv lowers.
///
/// ```
/// use clconv::spirv::{Instruction, Op, SpirvType};
/// use clconv::{Extensions, Rounding};
/// // %63 = OpConvertFToS %ulong %62 (a double), SaturatedConversion, FPRoundingMode RTN
/// let inst = Instruction {
///     id: 63,
///     opcode: Op::ConvertFToS as u32,
///     result_type: SpirvType::int(64),
///     operand_type: SpirvType::float(64),
///     saturated: true,
///     rounding: Some(Rounding::Rtn),
/// };
/// let r = inst.request(Extensions::default()).unwrap();
/// assert_eq!(r.to_string(), "convert_long_sat_rtn(double)"); // signed: the opcode says so
///
/// // A rounding mode on an integer -> integer conversion is not SPIR-V.
/// let bad = Instruction { opcode: Op::SConvert as u32, operand_type: SpirvType::int(32), ..inst };
/// let e = bad.request(Extensions::default()).unwrap_err();
/// assert!(e.to_string().starts_with("%63"), "{e}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instruction {
    /// The result id (`%63`).
    pub id: u32,
    /// The SPIR-V opcode number ([`Op`] names the ones clconv lowers).
    pub opcode: u32,
    /// The result type.
    pub result_type: SpirvType,
    /// The operand's type.
    pub operand_type: SpirvType,
    /// Decorated to saturate: `SaturatedConversion` on an integer result, or
    /// `SaturatedToLargestFloat8NormalConversionEXT` on an 8-bit float result (`Float8E4M3EXT`,
    /// `Float8E5M2EXT`; SPV_EXT_float8). Either is the `_sat` modifier; which decoration a
    /// module may put where, [`Module`] checks, and [`Instruction::request`] refuses saturation
    /// of any other floating-point result.
    pub saturated: bool,
    /// Decorated `FPRoundingMode` (RTE, RTZ, RTP, RTN are clconv's rte, rtz, rtp, rtn).
    pub rounding: Option<Rounding>,
}

impl Instruction {
    /// The conversion opcode, or the error that says this opcode is not one.
    pub fn op(&self) -> Result<Op, SpirvError> {
        Op::from_opcode(self.opcode).ok_or(SpirvError::NotAConversion {
            id: self.id,
            opcode: self.opcode,
            name: reader::opcode_name(self.opcode),
        })
    }

    /// The request this instruction computes, under `ext` (half needs `ext.fp16`).
    pub fn request(&self, ext: Extensions) -> Result<Request, SpirvError> {
        let op = self.op()?;
        let id = self.id;
        let (from, to) = op.sides();
        let src = self.opencl_type(Role::Operand, from, op)?;
        let dst = self.opencl_type(Role::Result, to, op)?;
        let not_applicable = |decoration: String, why: &'static str| {
            Err(SpirvError::DecorationNotApplicable {
                id,
                op,
                decoration,
                why,
            })
        };
        if op == Op::Bitcast {
            if self.saturated {
                return not_applicable("SaturatedConversion".into(), BITCAST_WHY);
            }
            if let Some(r) = self.rounding {
                return not_applicable(rounding_decoration(r), BITCAST_WHY);
            }
            if self.result_type.bits() != self.operand_type.bits() {
                return Err(SpirvError::BitcastSize {
                    id,
                    result: self.result_type,
                    operand: self.operand_type,
                });
            }
            return Reinterpretation::new(src, dst, ext)
                .map(Request::Reinterpret)
                .map_err(|source| SpirvError::Request { id, op, source });
        }
        if self.result_type.components != self.operand_type.components {
            return Err(SpirvError::ComponentCount {
                id,
                op,
                result: self.result_type,
                operand: self.operand_type,
            });
        }
        if op.is_intel_bfloat16() {
            return self.intel_bfloat16(op, src, dst, ext);
        }
        if op.is_bool_idiom() {
            // Exact, so nothing decorates it: a decoration on one is no conversion's.
            if self.saturated || self.rounding.is_some() {
                return not_applicable(
                    if self.saturated {
                        "SaturatedConversion".into()
                    } else {
                        rounding_decoration(self.rounding.unwrap_or(Rounding::Rte))
                    },
                    "a bool conversion is exact: it neither saturates nor rounds",
                );
            }
            return Conversion::new(src, dst, false, None, ext)
                .map(Request::Convert)
                .map_err(|source| SpirvError::Request { id, op, source });
        }
        // SPV_EXT_float8: `SaturatedToLargestFloat8NormalConversionEXT` "must only be applied to
        // the OpFConvert, OpConvertSToF, or OpConvertUToF instructions with a Result Type that
        // uses an Float8E4M3EXT or Float8E5M2EXT FP Encoding" (those three are every opcode with
        // a floating result left here).
        if dst.elem.is_float() && self.saturated && !self.result_type.is_float8() {
            return not_applicable(
                "SaturatedConversion".into(),
                "saturation applies to integer results (SaturatedConversion) and to 8-bit float \
                 results (SaturatedToLargestFloat8NormalConversionEXT) only; OpenCL has no \
                 convert_float_sat",
            );
        }
        if src.elem.is_integer() && dst.elem.is_integer() {
            if let Some(rounding) = self.rounding {
                return Err(SpirvError::RoundingOnInteger { id, op, rounding });
            }
        }
        let saturate = self.saturated || matches!(op, Op::SatConvertSToU | Op::SatConvertUToS);
        Conversion::new(src, dst, saturate, self.rounding, ext)
            .map(Request::Convert)
            .map_err(|source| SpirvError::Request { id, op, source })
    }

    /// SPV_INTEL_bfloat16_conversion's two: `convert_bfloat<n>_rte(float<n>)` and
    /// `convert_float<n>(bfloat<n>)` (the module docs quote the extensions).
    fn intel_bfloat16(
        &self,
        op: Op,
        src: VectorType,
        dst: VectorType,
        ext: Extensions,
    ) -> Result<Request, SpirvError> {
        let id = self.id;
        if self.saturated {
            return Err(SpirvError::DecorationNotApplicable {
                id,
                op,
                decoration: "SaturatedConversion".into(),
                why: "SPV_INTEL_bfloat16_conversion's conversions do not saturate",
            });
        }
        // cl_intel_bfloat16_conversions: "The only supported rounding mode is implicitly
        // round-to-nearest-even. No explicit rounding modes are supported."
        if let Some(r) = self.rounding.filter(|&r| r != Rounding::Rte) {
            return Err(SpirvError::DecorationNotApplicable {
                id,
                op,
                decoration: rounding_decoration(r),
                why: "SPV_INTEL_bfloat16_conversion's conversions round to nearest even only \
                      (cl_intel_bfloat16_conversions: \"The only supported rounding mode is \
                      implicitly round-to-nearest-even\")",
            });
        }
        // SPV_INTEL_bfloat16_conversion: the float side's "component width must be 32 bits".
        let (role, ty) = match op {
            Op::ConvertFToBF16INTEL => (Role::Operand, self.operand_type),
            _ => (Role::Result, self.result_type),
        };
        if ty.scalar != (Scalar::Float { width: 32 }) {
            return Err(SpirvError::UnsupportedType {
                id,
                op,
                role,
                ty,
                why: format!(
                    "is not a 32-bit IEEE float: {op} converts float only \
                     (SPV_INTEL_bfloat16_conversion: \"The component width must be 32 bits\")"
                ),
            });
        }
        let rounding = (op == Op::ConvertFToBF16INTEL).then_some(Rounding::Rte);
        Conversion::new(src, dst, false, rounding, ext)
            .map(Request::Convert)
            .map_err(|source| SpirvError::Request { id, op, source })
    }

    /// The OpenCL type of one side, as the opcode reads it.
    fn opencl_type(&self, role: Role, side: Side, op: Op) -> Result<VectorType, SpirvError> {
        let ty = match role {
            Role::Result => self.result_type,
            Role::Operand => self.operand_type,
        };
        let unsupported = |why: String| SpirvError::UnsupportedType {
            id: self.id,
            op,
            role,
            ty,
            why,
        };
        let width = Width::from_lanes(ty.components as usize)
            .filter(|_| ty.components != 0)
            .ok_or_else(|| {
                unsupported(format!(
                    "OpenCL vectors have 2, 3, 4, 8 or 16 components, not {}",
                    ty.components
                ))
            })?;
        let kind_error = |expected: &'static str| SpirvError::OperandKind {
            id: self.id,
            op,
            role,
            expected,
            found: ty,
        };
        let elem = match (ty.scalar, side) {
            (Scalar::Bool, Side::Bool) => ScalarType::Bool,
            (Scalar::Bool, _) => return Err(kind_error("a number")),
            (_, Side::Bool) => return Err(kind_error("bool")),
            (Scalar::Float { width }, Side::Float | Side::Any) => match width {
                16 => ScalarType::Half,
                32 => ScalarType::Float,
                64 => ScalarType::Double,
                8 => {
                    return Err(unsupported(
                        "has no FP Encoding: an 8-bit OpTypeFloat is Float8E4M3EXT or \
                         Float8E5M2EXT (SPV_EXT_float8), and IEEE floating-point types are 16 \
                         (half), 32 (float) or 64 (double) bits"
                            .into(),
                    ))
                }
                w => {
                    return Err(unsupported(format!(
                        "floating-point types are 16 (half), 32 (float) or 64 (double) bits, \
                         not {w}"
                    )))
                }
            },
            (Scalar::EncodedFloat { encoding }, Side::Float | Side::Any) => encoding.scalar_type(),
            (Scalar::Int { width: 16, .. }, Side::BFloatBits) => ScalarType::BFloat,
            (Scalar::Int { .. }, Side::BFloatBits) => {
                return Err(unsupported(format!(
                    "is not 16 bits: {op} holds a bfloat16's bits in a 16-bit integer \
                     (SPV_INTEL_bfloat16_conversion: \"The component width must be 16 bits\")"
                )))
            }
            (_, Side::BFloatBits) => {
                return Err(kind_error("a 16-bit integer (the bits of a bfloat16)"))
            }
            (
                Scalar::Int { width, signed },
                Side::Signed | Side::Unsigned | Side::Any | Side::Integer,
            ) => {
                let signed = match side {
                    Side::Signed => true,
                    Side::Unsigned => false,
                    _ => signed,
                };
                match (width, signed) {
                    (8, true) => ScalarType::Char,
                    (8, false) => ScalarType::UChar,
                    (16, true) => ScalarType::Short,
                    (16, false) => ScalarType::UShort,
                    (32, true) => ScalarType::Int,
                    (32, false) => ScalarType::UInt,
                    (64, true) => ScalarType::Long,
                    (64, false) => ScalarType::ULong,
                    (w, _) => {
                        return Err(unsupported(format!(
                            "integer types are 8, 16, 32 or 64 bits, not {w}"
                        )))
                    }
                }
            }
            (Scalar::Int { .. }, _) => return Err(kind_error("floating-point")),
            (Scalar::Float { .. } | Scalar::EncodedFloat { .. }, _) => {
                return Err(kind_error("integer"))
            }
        };
        Ok(VectorType::new(elem, width))
    }
}

const BITCAST_WHY: &str = "OpBitcast keeps the bits (as_<type>): nothing to saturate or round";

/// `FPRoundingMode RTE`, as SPIR-V writes the decoration.
fn rounding_decoration(r: Rounding) -> String {
    format!("FPRoundingMode {}", r.suffix()[1..].to_ascii_uppercase())
}

/// Lowers the conversion instruction `inst` on the caller's values into `b`, in one call.
///
/// The operand comes in either form [`Lowering::lower_request`] takes, and the result in the
/// same one: one scalar per component of [`crate::lower::element_type`] (`half` as I16 bits),
/// or the value as a front end holds it ([`crate::lower::value_shape`]). Half needs
/// `lowering`'s extensions to have fp16. A conversion to floating point without
/// `FPRoundingMode` rounds to nearest even, SPIR-V's default, whatever `lowering`'s static
/// rounding mode is.
///
/// ```
/// use clconv::cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature};
/// use clconv::cranelift_codegen::{settings, verifier::verify_function};
/// use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
/// use clconv::lower::Lowering;
/// use clconv::spirv::{self, Instruction, Op, SpirvType};
/// use clconv::Rounding;
///
/// let flags = settings::Flags::new(settings::builder());
/// let isa = clconv::cranelift_native::builder()?.finish(flags)?;
///
/// // %25 = OpConvertFToU %v4uchar %24, SaturatedConversion, FPRoundingMode RTE: F32X4 -> I8X4
/// let inst = Instruction {
///     id: 25,
///     opcode: Op::ConvertFToU as u32,
///     result_type: SpirvType::int(8).vector(4),
///     operand_type: SpirvType::float(32).vector(4),
///     saturated: true,
///     rounding: Some(Rounding::Rte),
/// };
/// let mut sig = Signature::new(isa.default_call_conv());
/// sig.params.push(AbiParam::new(types::F32X4));
/// sig.returns.push(AbiParam::new(types::I8X4));
/// let mut func = Function::with_name_signature(Default::default(), sig);
/// let mut ctx = FunctionBuilderContext::new();
/// let mut b = FunctionBuilder::new(&mut func, &mut ctx);
/// let block = b.create_block();
/// b.append_block_params_for_function_params(block);
/// b.switch_to_block(block);
/// let x = b.block_params(block).to_vec();
///
/// let y = spirv::lower(&Lowering::without_isa(), &mut b, &inst, &x)?;
/// b.ins().return_(&y);
/// b.seal_all_blocks();
/// b.finalize(isa.frontend_config());
/// verify_function(&func, isa.flags())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn lower(
    lowering: &Lowering,
    b: &mut FunctionBuilder,
    inst: &Instruction,
    args: &[Value],
) -> Result<Vec<Value>, SpirvError> {
    let request = inst.request(lowering.extensions())?;
    let lowered = match request {
        Request::Convert(c)
            if c.rounding().is_none()
                && c.dst().elem.is_float()
                && lowering.static_mode() != Rounding::Rte =>
        {
            let mut rte = lowering.clone();
            rte.set_static_mode(Rounding::Rte);
            rte.lower_request(b, &request, args)
        }
        _ => lowering.lower_request(b, &request, args),
    };
    lowered.map_err(|source| SpirvError::Lower {
        id: inst.id,
        request,
        source,
    })
}

/// The source language a module's `OpSource` names: it chooses the rules for what SPIR-V leaves
/// undefined ([`Module::rules`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceLanguage {
    /// OpenCL C (llvm-spirv).
    OpenClC,
    /// OpenCL C++ or C++ for OpenCL.
    OpenClCpp,
    /// GLSL or ESSL (glslang).
    Glsl,
    /// HLSL (glslang, DXC).
    Hlsl,
    /// WGSL (naga, Tint).
    Wgsl,
    /// Another language (SYCL, Slang, Rust, ...), or `Unknown`: the number `OpSource` holds.
    Other(u32),
}

impl SourceLanguage {
    fn of(language: rspirv::spirv::SourceLanguage) -> SourceLanguage {
        use rspirv::spirv::SourceLanguage as L;
        match language {
            L::OpenCL_C => SourceLanguage::OpenClC,
            L::OpenCL_CPP | L::CPP_for_OpenCL => SourceLanguage::OpenClCpp,
            L::GLSL | L::ESSL => SourceLanguage::Glsl,
            L::HLSL => SourceLanguage::Hlsl,
            L::WGSL => SourceLanguage::Wgsl,
            other => SourceLanguage::Other(other as u32),
        }
    }
}

/// Why a module, or one of its instructions, is not something clconv reads or lowers.
///
/// Every message starts with the instruction it is about: its result id (`%42`) when it has one,
/// else its place in the module (`instruction #57 at byte 1240`, with the id just before it).
///
/// ```
/// use clconv::spirv::{Module, SpirvError};
/// let e = Module::parse(&[0u8; 20]).unwrap_err();
/// assert!(matches!(e, SpirvError::Magic { found: 0 }));
/// assert!(e.to_string().contains("magic number"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpirvError {
    /// The module's execution modes ask for what clconv does not do (`DenormFlushToZero`), or
    /// disagree between entry points.
    #[error("{why}")]
    ExecutionModes {
        /// Which mode, where, and what to do.
        why: String,
    },
    /// Shorter than the five-word header.
    #[error("not a SPIR-V module: {bytes} bytes, shorter than the 20-byte header (truncated?)")]
    Header {
        /// The module's length.
        bytes: usize,
    },
    /// A length that is not a whole number of 32-bit words, cut inside an instruction's first
    /// word (a cut further into an instruction is [`SpirvError::Truncated`]).
    #[error("the module is {bytes} bytes, not a whole number of 32-bit words: it ends {} byte(s) into the instruction at byte {last_end}{}: it is truncated or not SPIR-V", bytes - last_end, match previous_id { Some(id) => format!(" (the one after %{id})"), None => String::new() })]
    PartialWord {
        /// The module's length.
        bytes: usize,
        /// Where the last complete instruction ends (and the cut one starts).
        last_end: usize,
        /// The last result id before the cut, if any.
        previous_id: Option<u32>,
    },
    /// The first word is not SPIR-V's magic number in either byte order.
    #[error(
        "not a SPIR-V module: the first word is {found:#010x}, not the magic number 0x07230203"
    )]
    Magic {
        /// The first word, read little-endian.
        found: u32,
    },
    /// An instruction whose word count is 0.
    #[error("{at}: word count 0 (every instruction has at least its opcode word): the module is corrupt")]
    WordCountZero {
        /// The instruction.
        at: Location,
    },
    /// An instruction that runs past the end of the module.
    #[error("{at}: the instruction is {words} words long but only {available} whole word(s) remain: the module is truncated")]
    Truncated {
        /// The instruction.
        at: Location,
        /// Its word count.
        words: u32,
        /// Words left in the module from its start.
        available: usize,
    },
    /// An opcode SPIR-V (as of rspirv's grammar) does not have.
    #[error("{at}: unknown opcode {opcode}: the module is corrupt or uses an instruction newer than SPIR-V SDK 1.4.341")]
    UnknownOpcode {
        /// The instruction.
        at: Location,
        /// The opcode.
        opcode: u32,
    },
    /// An `OpTypeFloat` whose FP Encoding operand clconv does not read: a value SPIR-V does not
    /// define, an encoding clconv has no type for (SPV_EXT_ocp_microscaling_types'
    /// `Float6E2M3EXT`, ...), or a width the encoding does not have (`OpTypeFloat 16
    /// Float8E4M3EXT`).
    #[error("{at}: width {width} with FP Encoding {encoding}: {why}")]
    FloatEncoding {
        /// The `OpTypeFloat`.
        at: Location,
        /// Its Width operand.
        width: u32,
        /// Its FP Encoding operand.
        encoding: u32,
        /// What is wrong, and what clconv reads.
        why: String,
    },
    /// An instruction whose operands do not follow the SPIR-V grammar.
    #[error("{at}: {why}")]
    Malformed {
        /// The instruction.
        at: Location,
        /// What the parser found wrong.
        why: String,
    },
    /// An id a conversion needs that no instruction defines, or a type it is not.
    #[error("%{id}: its {what} %{missing} {problem}")]
    Undefined {
        /// The conversion's result id.
        id: u32,
        /// `result type`, `operand`, `component type`.
        what: &'static str,
        /// The id.
        missing: u32,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// Two decorations that contradict each other on one instruction.
    #[error("%{id} is decorated both {first} and {second}: a conversion has one rounding mode")]
    ConflictingDecorations {
        /// The decorated id.
        id: u32,
        /// One decoration.
        first: String,
        /// The other.
        second: String,
    },
    /// `SaturatedConversion`, `SaturatedToLargestFloat8NormalConversionEXT` or `FPRoundingMode`
    /// on something other than a conversion.
    #[error("%{id} is decorated {decoration}, but {what}: only conversion instructions take it")]
    DecorationOnNonConversion {
        /// The decorated id.
        id: u32,
        /// The decoration.
        decoration: String,
        /// What the id is (`it is an OpFAdd`, `no instruction defines it`).
        what: String,
    },
    /// Not one of the conversion opcodes ([`Op`]).
    #[error("%{id}: {} is not a conversion clconv lowers: the conversions are OpSConvert, OpUConvert, OpSatConvertSToU, OpSatConvertUToS, OpConvertFToS, OpConvertFToU, OpConvertSToF, OpConvertUToF, OpFConvert, OpBitcast, OpConvertFToBF16INTEL and OpConvertBF16ToFINTEL", match name { Some(n) => format!("Op{n}"), None => format!("opcode {opcode}") })]
    NotAConversion {
        /// The result id.
        id: u32,
        /// The opcode.
        opcode: u32,
        /// Its SPIR-V name without `Op`, when SPIR-V has one.
        name: Option<&'static str>,
    },
    /// A type OpenCL has no conversion for: a pointer, a bool, a 128-bit integer, a 5-vector.
    #[error("%{id} ({op}): the {role} type {ty} {why}")]
    UnsupportedType {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// Which side.
        role: Role,
        /// The type.
        ty: SpirvType,
        /// Why, and what would do.
        why: String,
    },
    /// A type that is not an integer, floating-point or vector type (a conversion of a pointer).
    #[error("%{id} ({op}): the {role} type %{type_id} is an Op{found}, not an integer, floating-point or vector type")]
    NotNumeric {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// Which side.
        role: Role,
        /// The type's id.
        type_id: u32,
        /// What it is, without `Op` (`TypePointer`).
        found: &'static str,
    },
    /// An integer where the opcode reads floating point, or the other way round.
    #[error("%{id} ({op}): the {role} must be {expected}, but its type is {found}")]
    OperandKind {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// Which side.
        role: Role,
        /// `integer` or `floating-point`.
        expected: &'static str,
        /// The type found.
        found: SpirvType,
    },
    /// Different component counts on the two sides of a conversion.
    #[error("%{id} ({op}): the result type {result} has {} component(s) but the operand's type {operand} has {}: a conversion keeps the count", result.components, operand.components)]
    ComponentCount {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// The result type.
        result: SpirvType,
        /// The operand's type.
        operand: SpirvType,
    },
    /// `FPRoundingMode` on an integer -> integer conversion.
    #[error("%{id} ({op}) is decorated {}, but it converts integer to integer, where SPIR-V allows no rounding mode (none is needed: the result is exact or saturated)", rounding_decoration(*rounding))]
    RoundingOnInteger {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// The rounding mode.
        rounding: Rounding,
    },
    /// A decoration the opcode or result type does not take (`SaturatedConversion` on
    /// `OpFConvert`, `SaturatedToLargestFloat8NormalConversionEXT` on a `bfloat16` result).
    #[error("%{id} ({op}) is decorated {decoration}, which does not apply: {why}")]
    DecorationNotApplicable {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// The decoration.
        decoration: String,
        /// Why.
        why: &'static str,
    },
    /// An `OpBitcast` between types of different total sizes.
    #[error("%{id} (OpBitcast): the result type {result} is {} bits but the operand's type {operand} is {}: a bitcast keeps the size", result.bits(), operand.bits())]
    BitcastSize {
        /// The result id.
        id: u32,
        /// The result type.
        result: SpirvType,
        /// The operand's type.
        operand: SpirvType,
    },
    /// The request the instruction computes is not one clconv lowers as configured (half
    /// without cl_khr_fp16).
    #[error("%{id} ({op}): {source}")]
    Request {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// Why.
        source: RequestError,
    },
    /// The lowering refused the caller's values.
    #[error("%{id} ({request}): {source}")]
    Lower {
        /// The result id.
        id: u32,
        /// The request.
        request: Request,
        /// Why.
        source: LowerError,
    },
    /// A conversion of half in a module that declares no capability making 16-bit floats legal
    /// ([`Module::half_capability`]) and is read without cl_khr_fp16.
    #[error("%{id} ({op}) converts `{ty}`, but the module declares no capability that allows it (Float16 or a 16-bit storage capability; Float16Buffer is for vload_half and vstore_half only): switch cl_khr_fp16 on to read it anyway (Extensions::with_fp16(), or --fp16 on the command line)")]
    HalfWithoutCapability {
        /// The result id.
        id: u32,
        /// The opcode.
        op: Op,
        /// The type that is half.
        ty: VectorType,
    },
    /// An `OpenCL.std` instruction number that is not one of the half loads and stores
    /// ([`HalfOp`]).
    #[error("%{id}: OpenCL.std instruction {} is not a half load or store: they are vload_half (173), vload_halfn (174), vstore_half (175), vstore_half_r (176), vstore_halfn (177), vstore_halfn_r (178), vloada_halfn (179), vstorea_halfn (180) and vstorea_halfn_r (181)", match reader::opencl_std_name(*number) { Some(n) => format!("{n} ({number})"), None => number.to_string() })]
    NotAHalfAccess {
        /// The result id.
        id: u32,
        /// The instruction number.
        number: u32,
    },
    /// A half load or store of a form clconv does not lower (a `double` result, a `half`
    /// operand, a vector on a scalar form, an `n` that disagrees with the result type).
    #[error("%{id} ({op}): {why}")]
    HalfAccessUnsupported {
        /// The result id.
        id: u32,
        /// The instruction.
        op: HalfOp,
        /// What is not lowered, and what would be.
        why: String,
    },
    /// [`lower_half`] given the wrong number of values.
    #[error("%{id} ({op}) takes {expected}, but {got} value(s) were given")]
    HalfOperandCount {
        /// The result id.
        id: u32,
        /// The instruction.
        op: HalfOp,
        /// What it takes.
        expected: &'static str,
        /// How many values were given.
        got: usize,
    },
    /// The lowering refused the caller's values for a half load or store.
    #[error("%{id} ({access}): {source}")]
    LowerHalf {
        /// The result id.
        id: u32,
        /// What the instruction does.
        access: HalfAccess,
        /// Why.
        source: LowerError,
    },
}

/// Where an instruction is in a module: what an error says when the instruction's own id is not
/// known (an unknown opcode, a truncated instruction) or it has none.
///
/// ```
/// use clconv::spirv::Location;
/// let at = Location { index: 57, offset: 1240, opcode: 114, id: Some(41), previous_id: Some(40) };
/// assert_eq!(at.to_string(), "%41 (OpSConvert, instruction #57 at byte 1240)");
/// let at = Location { index: 58, offset: 1256, opcode: 4660, id: None, previous_id: Some(41) };
/// assert_eq!(at.to_string(), "instruction #58 at byte 1256 (opcode 4660, the one after %41)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// 1-based instruction number, the header not counted.
    pub index: usize,
    /// Byte offset of its first word.
    pub offset: usize,
    /// Its opcode.
    pub opcode: u32,
    /// Its result id, when it has one and it could be read.
    pub id: Option<u32>,
    /// The last result id before it, if any.
    pub previous_id: Option<u32>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match reader::opcode_name(self.opcode) {
            Some(n) => format!("Op{n}"),
            None => format!("opcode {}", self.opcode),
        };
        match self.id {
            Some(id) => write!(
                f,
                "%{id} ({name}, instruction #{} at byte {})",
                self.index, self.offset
            ),
            None => {
                write!(
                    f,
                    "instruction #{} at byte {} ({name}",
                    self.index, self.offset
                )?;
                match self.previous_id {
                    Some(p) => write!(f, ", the one after %{p})"),
                    None => f.write_str(", before any result id)"),
                }
            }
        }
    }
}
