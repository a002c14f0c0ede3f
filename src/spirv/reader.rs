//! Reading a binary module: the word-level checks, rspirv's parse, and resolving each conversion
//! instruction's types and decorations.

use super::half::{HalfAccess, HalfInstruction, HalfOp, OPENCL_STD};
use super::{
    FpEncoding, Instruction, Location, Op, Role, Scalar, SourceLanguage, SpirvError, SpirvType,
};
use crate::request::{Request, RequestError};
use crate::rules::Rules;
use crate::types::{Extensions, Rounding};
use rspirv::binary::{self, Consumer, ParseAction, ParseState};
use rspirv::dr;
use rspirv::grammar::{OperandKind, INSTRUCTION_TABLE};
use rspirv::spirv;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// SPIR-V's magic number, the module's first word.
const MAGIC: u32 = 0x0723_0203;
/// Words in the module header.
const HEADER_WORDS: usize = 5;

/// The SPIR-V name of `opcode` without `Op` (`"SConvert"`), if SPIR-V has one.
pub(crate) fn opcode_name(opcode: u32) -> Option<&'static str> {
    INSTRUCTION_TABLE.lookup_opcode(opcode).map(|g| g.opname)
}

/// The `OpenCL.std` name of extended instruction `number` (`"vstore_half_r"`), if it has one.
pub(crate) fn opencl_std_name(number: u32) -> Option<&'static str> {
    rspirv::grammar::ext_inst_table(OPENCL_STD)
        .and_then(|t| t.lookup_opcode(number))
        .map(|g| g.opname)
}

/// The capabilities that make a conversion of 16-bit floats legal, so that a module declaring
/// one is read with half on:
/// - `Float16`: 16-bit floats in every instruction (glslang's
///   `GL_EXT_shader_explicit_arithmetic_types_float16`, llvm-spirv's `cl_khr_fp16`);
/// - SPV_KHR_16bit_storage's `StorageBuffer16BitAccess`, `UniformAndStorageBuffer16BitAccess`
///   (formerly `StorageUniform16`), `StoragePushConstant16` and `StorageInputOutput16`: 16-bit
///   values in memory, loaded, stored and converted to and from 32-bit types (glslang's
///   `GL_EXT_shader_16bit_storage` writes `OpFConvert %v4float %v4half` with only these, and
///   spirv-val accepts it).
///
/// Not `Float16Buffer`: OpenCL's core capability for half *memory*. The SPIR-V specification
/// allows it a 16-bit float only as the pointee of a pointer, which only instructions such as
/// OpenCL.std's `vload_half` and `vstore_half` dereference (clconv reads those whatever the
/// module declares, [`Module::half_accesses`]); "all other uses of 16-bit OpTypeFloat are
/// disallowed". It is what a kernel that calls `vstore_half` without `cl_khr_fp16` declares,
/// so it says nothing about half values. llvm-spirv 14 also declares only `Float16Buffer` for
/// kernels that do convert half under `cl_khr_fp16` (spirv-val 2023.1 does not object); such a
/// module needs `Extensions::with_fp16()` (`--fp16`), as before.
const HALF_CAPABILITIES: [(spirv::Capability, &str); 5] = [
    (spirv::Capability::Float16, "Float16"),
    (
        spirv::Capability::StorageBuffer16BitAccess,
        "StorageBuffer16BitAccess",
    ),
    (
        spirv::Capability::UniformAndStorageBuffer16BitAccess,
        "UniformAndStorageBuffer16BitAccess",
    ),
    (
        spirv::Capability::StoragePushConstant16,
        "StoragePushConstant16",
    ),
    (
        spirv::Capability::StorageInputOutput16,
        "StorageInputOutput16",
    ),
];

/// The function a conversion instruction sits in.
///
/// `Display` gives its `OpName`, or `%id` when it has none (control characters in a name are
/// escaped, so a name is one tab-free field).
///
/// ```
/// use clconv::spirv::Function;
/// assert_eq!(Function { id: 7, name: Some("pack_rgba".into()) }.to_string(), "pack_rgba");
/// assert_eq!(Function { id: 7, name: None }.to_string(), "%7");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Function {
    /// The function's result id.
    pub id: u32,
    /// Its `OpName`, if it has one.
    pub name: Option<String>,
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) if !name.is_empty() => {
                for c in name.chars() {
                    if c.is_control() {
                        write!(f, "{}", c.escape_default())?;
                    } else {
                        write!(f, "{c}")?;
                    }
                }
                Ok(())
            }
            _ => write!(f, "%{}", self.id),
        }
    }
}

/// A conversion instruction found in a module, with the function it is in.
///
/// ```
/// use clconv::spirv::Module;
/// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
/// let module = Module::parse(&bytes).unwrap();
/// let first = &module.instructions()[0];
/// assert_eq!(first.function.to_string(), "pack_rgba");
/// assert_eq!(first.instruction.result_type.to_string(), "v4uchar");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The enclosing function.
    pub function: Function,
    /// The instruction.
    pub instruction: Instruction,
}

/// A conversion instruction found in a module and the request it computes.
///
/// ```
/// use clconv::{spirv::Module, Extensions};
/// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
/// let found = Module::parse(&bytes).unwrap().conversions(Extensions::with_fp16()).unwrap();
/// assert_eq!(found[0].request.to_string(), "convert_uchar4_sat_rte(float4)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapped {
    /// The enclosing function.
    pub function: Function,
    /// The instruction.
    pub instruction: Instruction,
    /// The request it computes.
    pub request: Request,
}

/// An `OpenCL.std` half load or store found in a module, with the function it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocatedHalf {
    /// The enclosing function.
    pub function: Function,
    /// The instruction.
    pub instruction: HalfInstruction,
}

/// An `OpenCL.std` half load or store found in a module and what it does.
///
/// ```
/// use clconv::spirv::Module;
/// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
/// let found = Module::parse(&bytes).unwrap().half_accesses().unwrap();
/// assert_eq!(found[0].function.to_string(), "pcm_to_half");
/// assert_eq!(found[0].access.to_string(), "vstore_half_rtz(float)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedHalf {
    /// The enclosing function.
    pub function: Function,
    /// The instruction.
    pub instruction: HalfInstruction,
    /// What it does.
    pub access: HalfAccess,
}

/// One instruction clconv lowers, as [`Module::items`] lists them in module order: a
/// conversion or a half load or store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A conversion instruction and its request.
    Conversion(Mapped),
    /// An `OpenCL.std` half load or store and what it does.
    Half(MappedHalf),
}

impl Item {
    /// The enclosing function.
    pub fn function(&self) -> &Function {
        match self {
            Item::Conversion(m) => &m.function,
            Item::Half(m) => &m.function,
        }
    }

    /// The instruction's result id.
    pub fn id(&self) -> u32 {
        match self {
            Item::Conversion(m) => m.instruction.id,
            Item::Half(m) => m.instruction.id,
        }
    }

    /// The conversion it computes: the request, or a half access's element conversion
    /// ([`HalfAccess::conversion`]).
    pub fn request(&self) -> Request {
        match self {
            Item::Conversion(m) => m.request,
            Item::Half(m) => Request::Convert(m.access.conversion()),
        }
    }
}

impl fmt::Display for Item {
    /// The request (`convert_uchar4_sat_rte(float4)`) or the access (`vstore_half_rtz(float)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Conversion(m) => m.request.fmt(f),
            Item::Half(m) => m.access.fmt(f),
        }
    }
}

/// A SPIR-V module's conversion instructions, in module order, with their decorations.
///
/// [`Module::parse`] reads the binary and checks what it needs of it: the header, every
/// instruction's size and operands (by the SPIR-V grammar), the types and decorations of each
/// conversion instruction, that `SaturatedConversion`, `FPRoundingMode` and
/// `SaturatedToLargestFloat8NormalConversionEXT` decorate only conversions (the last only
/// `OpFConvert`, `OpConvertSToF` and `OpConvertUToF` into an 8-bit float), and that every
/// `OpTypeFloat`'s FP Encoding is one clconv reads, at its width. [`Module::conversions`] maps
/// each instruction to its request. `OpBitcast`s of pointers are not conversions and are left
/// out; so are conversions inside `OpSpecConstantOp` (constant expressions, not
/// instructions).
///
/// ```
/// use clconv::{spirv::Module, Extensions};
/// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
/// let module = Module::parse(&bytes).unwrap();
/// let names: Vec<String> = module
///     .conversions(Extensions::with_fp16())
///     .unwrap()
///     .iter()
///     .map(|m| format!("{}: {}", m.function, m.request))
///     .collect();
/// assert!(names.contains(&"quantise_int8: convert_char8_sat_rte(float8)".to_string()));
/// ```
#[derive(Clone, Debug)]
pub struct Module {
    version: (u8, u8),
    /// `OpSource`'s language, if the module names one.
    source: Option<SourceLanguage>,
    /// The float-controls rounding execution modes: (target width, rounding).
    rounding_modes: Vec<(u32, Rounding)>,
    /// Float widths whose subnormals an execution mode asks to flush to zero.
    flush_to_zero: Vec<u32>,
    located: Vec<Located>,
    halves: Vec<LocatedHalf>,
    /// Both, in module order: `(true, i)` is `halves[i]`, `(false, i)` is `located[i]`.
    order: Vec<(bool, usize)>,
    half_capability: Option<&'static str>,
}

impl Module {
    /// Reads a binary SPIR-V module (either byte order).
    ///
    /// ```
    /// use clconv::spirv::{Module, SpirvError};
    /// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
    /// assert!(Module::parse(&bytes).is_ok());
    /// let e = Module::parse(&bytes[..bytes.len() - 6]).unwrap_err(); // cut inside a word
    /// assert!(matches!(e, SpirvError::PartialWord { .. }), "{e}");
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Module, SpirvError> {
        let little = little_endian(bytes)?;
        let scanned = scan(&little)?;
        // rspirv's grammar (SPIR-V SDK 1.4.341) predates SPV_EXT_ocp_microscaling_types, whose
        // FP Encodings `scan` has read: rspirv gets Float8E4M3EXT, a value it knows, in their
        // place, and the collector gives each such type its own encoding back.
        let mut little = little.into_owned();
        let mut microscaling = HashMap::new();
        for s in &scanned {
            if s.opcode != spirv::Op::TypeFloat as u32 {
                continue;
            }
            let encoding = word_at(&little, s.offset + 12).and_then(FpEncoding::from_value);
            if let (Some(id), Some(e)) = (s.id, encoding) {
                if e.extension() == "SPV_EXT_ocp_microscaling_types" {
                    microscaling.insert(id, e);
                    let placeholder = (FpEncoding::Float8E4M3EXT as u32).to_le_bytes();
                    little[s.offset + 12..s.offset + 16].copy_from_slice(&placeholder);
                }
            }
        }
        let mut collector = Collector::new(&scanned);
        collector.microscaling = microscaling;
        if let Err(state) = binary::parse_bytes(&little, &mut collector) {
            return Err(parse_error(state, &scanned, collector.count));
        }
        let version = ((little[6]), (little[5]));
        let half_capability = HALF_CAPABILITIES
            .iter()
            .find(|(c, _)| collector.capabilities.contains(c))
            .map(|(_, name)| *name);
        let source = collector.source.map(SourceLanguage::of);
        let mut rounding_modes: Vec<(u32, Rounding)> = Vec::new();
        let mut flush_to_zero = Vec::new();
        for &(mode, width) in &collector.float_modes {
            let rounding = match mode {
                spirv::ExecutionMode::RoundingModeRTE => Rounding::Rte,
                spirv::ExecutionMode::RoundingModeRTZ => Rounding::Rtz,
                spirv::ExecutionMode::DenormFlushToZero => {
                    flush_to_zero.push(width);
                    continue;
                }
                // DenormPreserve and SignedZeroInfNanPreserve ask for what clconv does.
                _ => continue,
            };
            match rounding_modes.iter().find(|(w, _)| *w == width) {
                Some(&(_, other)) if other != rounding => {
                    return Err(SpirvError::ExecutionModes {
                        why: format!(
                            "entry points ask for both RoundingMode{} and RoundingMode{} on \
                             {width}-bit floats; clconv reads one rounding per width and module: \
                             read the entry points from separate modules",
                            other.suffix()[1..].to_ascii_uppercase(),
                            rounding.suffix()[1..].to_ascii_uppercase()
                        ),
                    })
                }
                Some(_) => {}
                None => rounding_modes.push((width, rounding)),
            }
        }
        let (located, halves, order) = collector.resolve()?;
        Ok(Module {
            version,
            source,
            rounding_modes,
            flush_to_zero,
            located,
            halves,
            order,
            half_capability,
        })
    }

    /// The capability that makes the module's half conversions legal, if it declares one:
    /// `Float16`, or a 16-bit storage capability (`StorageBuffer16BitAccess`,
    /// `UniformAndStorageBuffer16BitAccess`, `StoragePushConstant16`, `StorageInputOutput16`),
    /// the first of these it declares. Not `Float16Buffer`, which allows half only in memory
    /// (OpenCL.std's `vload_half` and `vstore_half`, read in any case).
    ///
    /// ```
    /// use clconv::spirv::Module;
    /// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
    /// // llvm-spirv 14 declares only Float16Buffer, even for kernels that enable cl_khr_fp16
    /// // (truncate_to_half's convert_half4_rtz): its half conversions need Extensions::with_fp16().
    /// assert_eq!(Module::parse(&bytes).unwrap().half_capability(), None);
    /// ```
    pub fn half_capability(&self) -> Option<&'static str> {
        self.half_capability
    }

    /// The extensions the module is read under: `ext`, with cl_khr_fp16 on when the module
    /// declares a capability that makes half conversions legal ([`Module::half_capability`]).
    /// `ext.fp16` on reads half whatever the module declares.
    pub fn extensions(&self, ext: Extensions) -> Extensions {
        Extensions {
            fp16: ext.fp16 || self.half_capability.is_some(),
        }
    }

    /// The source language `OpSource` names, if the module has one.
    ///
    /// ```
    /// use clconv::spirv::{Module, SourceLanguage};
    /// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
    /// assert_eq!(Module::parse(&bytes).unwrap().source_language(), Some(SourceLanguage::OpenClC));
    /// ```
    pub fn source_language(&self) -> Option<SourceLanguage> {
        self.source
    }

    /// The rules the source language gives to what SPIR-V leaves undefined (a float -> integer
    /// conversion out of range, or of NaN): WGSL's for WGSL, OpenCL's for every other
    /// language (OpenCL C's `_sat`, Direct3D's `ftoi`, and clconv's defined results for GLSL).
    pub fn rules(&self) -> Rules {
        match self.source {
            Some(SourceLanguage::Wgsl) => Rules::WGSL,
            _ => Rules::OPENCL,
        }
    }

    /// The rounding the module's float-controls execution modes (`RoundingModeRTE`,
    /// `RoundingModeRTZ`) give conversions into `width`-bit floats that carry no
    /// `FPRoundingMode` decoration.
    pub fn rounding_mode(&self, width: u32) -> Option<Rounding> {
        self.rounding_modes
            .iter()
            .find(|(w, _)| *w == width)
            .map(|&(_, r)| r)
    }

    /// `request` (of the instruction `%id`) as this module's source language and execution
    /// modes make it.
    fn with_module_rules(&self, id: u32, op: Op, request: Request) -> Result<Request, SpirvError> {
        let Request::Convert(c) = request else {
            return Ok(request);
        };
        for side in [c.src().elem, c.dst().elem] {
            if side.is_float() && self.flush_to_zero.contains(&side.bits()) {
                return Err(SpirvError::ExecutionModes {
                    why: format!(
                        "%{id} ({op}) converts {}-bit floats under DenormFlushToZero, which \
                         clconv does not do: it keeps subnormals (DenormPreserve)",
                        side.bits()
                    ),
                });
            }
        }
        let mut c = c.with_rules(self.rules());
        if c.dst().elem.is_float() && c.rounding().is_none() {
            if let Some(r) = self.rounding_mode(c.dst().elem.bits()) {
                c = c.with_rounding(r);
            }
        }
        Ok(Request::Convert(c))
    }

    /// The SPIR-V version the header declares, `(major, minor)`.
    ///
    /// ```
    /// use clconv::spirv::Module;
    /// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
    /// assert_eq!(Module::parse(&bytes).unwrap().version(), (1, 0)); // llvm-spirv 14
    /// ```
    pub fn version(&self) -> (u8, u8) {
        self.version
    }

    /// Every conversion instruction, in module order.
    pub fn instructions(&self) -> &[Located] {
        &self.located
    }

    /// Every conversion instruction with the request it computes, in module order; the first
    /// instruction that is not one clconv lowers is the error.
    ///
    /// Half is on when `ext` has it or the module declares a capability that makes half
    /// conversions legal ([`Module::extensions`]); a conversion of half in a module that
    /// declares none, read without `ext.fp16`, is [`SpirvError::HalfWithoutCapability`].
    pub fn conversions(&self, ext: Extensions) -> Result<Vec<Mapped>, SpirvError> {
        self.located.iter().map(|l| self.map(l, ext)).collect()
    }

    fn map(&self, l: &Located, ext: Extensions) -> Result<Mapped, SpirvError> {
        let request = l
            .instruction
            .request(self.extensions(ext))
            .map_err(|e| match e {
                SpirvError::Request {
                    id,
                    op,
                    source: RequestError::HalfWithoutFp16 { ty },
                } => SpirvError::HalfWithoutCapability { id, op, ty },
                other => other,
            })?;
        let request = self.with_module_rules(l.instruction.id, l.instruction.op()?, request)?;
        Ok(Mapped {
            function: l.function.clone(),
            instruction: l.instruction,
            request,
        })
    }

    /// Every `OpenCL.std` half load and store (`vstore_half_r`, `vload_halfn`, ...), in module
    /// order.
    pub fn half_instructions(&self) -> &[LocatedHalf] {
        &self.halves
    }

    /// Every `OpenCL.std` half load and store with what it does, in module order; the first
    /// one of a form clconv does not lower is the error. They need no extension (the memory is
    /// half, the values `float` or `double`).
    pub fn half_accesses(&self) -> Result<Vec<MappedHalf>, SpirvError> {
        self.halves.iter().map(map_half).collect()
    }

    /// Every instruction clconv lowers, conversions and half loads and stores, in module
    /// order; the first that is not one clconv lowers under `ext` is the error (as
    /// [`Module::conversions`] and [`Module::half_accesses`] say).
    ///
    /// ```
    /// use clconv::{spirv::Module, Extensions};
    /// # let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/kernels.spv")).unwrap();
    /// let items = Module::parse(&bytes).unwrap().items(Extensions::with_fp16()).unwrap();
    /// let pcm: Vec<String> = items
    ///     .iter()
    ///     .filter(|i| i.function().to_string() == "pcm_to_half")
    ///     .map(|i| i.to_string())
    ///     .collect();
    /// assert_eq!(pcm, ["convert_float(short)", "vstore_half_rtz(float)"]);
    /// ```
    pub fn items(&self, ext: Extensions) -> Result<Vec<Item>, SpirvError> {
        self.order
            .iter()
            .map(|&(half, i)| {
                Ok(if half {
                    Item::Half(map_half(&self.halves[i])?)
                } else {
                    Item::Conversion(self.map(&self.located[i], ext)?)
                })
            })
            .collect()
    }
}

fn map_half(l: &LocatedHalf) -> Result<MappedHalf, SpirvError> {
    Ok(MappedHalf {
        function: l.function.clone(),
        instruction: l.instruction,
        access: l.instruction.access()?,
    })
}

/// The module's bytes in little-endian word order, after checking the header's magic number.
fn little_endian(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, SpirvError> {
    if bytes.len() < HEADER_WORDS * 4 {
        return Err(SpirvError::Header { bytes: bytes.len() });
    }
    let first = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if first == MAGIC {
        Ok(std::borrow::Cow::Borrowed(bytes))
    } else if first == MAGIC.swap_bytes() {
        let mut swapped = bytes.to_vec();
        for word in swapped.chunks_exact_mut(4) {
            word.reverse();
        }
        Ok(std::borrow::Cow::Owned(swapped))
    } else {
        Err(SpirvError::Magic { found: first })
    }
}

/// One instruction as the word-level scan saw it.
struct Scanned {
    offset: usize,
    opcode: u32,
    id: Option<u32>,
    previous_id: Option<u32>,
}

impl Scanned {
    fn location(&self, index: usize) -> Location {
        Location {
            index,
            offset: self.offset,
            opcode: self.opcode,
            id: self.id,
            previous_id: self.previous_id,
        }
    }
}

fn word_at(bytes: &[u8], offset: usize) -> Option<u32> {
    let w = bytes.get(offset..offset + 4)?;
    Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

/// The opcodes SPIR-V allows inside `OpSpecConstantOp` (rspirv's parser must not see others:
/// some would reach a `panic!` in it).
const SPEC_CONSTANT_OPS: &[spirv::Op] = {
    use spirv::Op as O;
    &[
        O::SConvert,
        O::UConvert,
        O::FConvert,
        O::SNegate,
        O::Not,
        O::IAdd,
        O::ISub,
        O::IMul,
        O::UDiv,
        O::SDiv,
        O::UMod,
        O::SRem,
        O::SMod,
        O::ShiftRightLogical,
        O::ShiftRightArithmetic,
        O::ShiftLeftLogical,
        O::BitwiseOr,
        O::BitwiseXor,
        O::BitwiseAnd,
        O::VectorShuffle,
        O::CompositeExtract,
        O::CompositeInsert,
        O::LogicalOr,
        O::LogicalAnd,
        O::LogicalNot,
        O::LogicalEqual,
        O::LogicalNotEqual,
        O::Select,
        O::IEqual,
        O::INotEqual,
        O::ULessThan,
        O::SLessThan,
        O::UGreaterThan,
        O::SGreaterThan,
        O::ULessThanEqual,
        O::SLessThanEqual,
        O::UGreaterThanEqual,
        O::SGreaterThanEqual,
        O::QuantizeToF16,
        O::ConvertFToS,
        O::ConvertSToF,
        O::ConvertFToU,
        O::ConvertUToF,
        O::ConvertPtrToU,
        O::ConvertUToPtr,
        O::GenericCastToPtr,
        O::PtrCastToGeneric,
        O::Bitcast,
        O::FNegate,
        O::FAdd,
        O::FSub,
        O::FMul,
        O::FDiv,
        O::FRem,
        O::FMod,
        O::AccessChain,
        O::InBoundsAccessChain,
        O::PtrAccessChain,
        O::InBoundsPtrAccessChain,
    ]
};

/// Walks the instructions word by word: every word count non-zero and inside the module,
/// every opcode known, every `OpSpecConstantOp` computing what SPIR-V allows. After this,
/// rspirv's parser reads only whole instructions it has a grammar for.
fn scan(bytes: &[u8]) -> Result<Vec<Scanned>, SpirvError> {
    let mut out = Vec::new();
    let mut pos = HEADER_WORDS * 4;
    let mut previous_id = None;
    while pos < bytes.len() {
        let index = out.len() + 1;
        let Some(first) = word_at(bytes, pos) else {
            return Err(SpirvError::PartialWord {
                bytes: bytes.len(),
                last_end: pos,
                previous_id,
            });
        };
        let (words, opcode) = (first >> 16, first & 0xffff);
        let mut at = Scanned {
            offset: pos,
            opcode,
            id: None,
            previous_id,
        };
        let grammar = INSTRUCTION_TABLE.lookup_opcode(opcode);
        // The result id, where the grammar puts one and the words are there.
        let id_word = grammar.and_then(|g| match g.operands.first().map(|o| o.kind) {
            Some(OperandKind::IdResultType) => Some(2),
            Some(OperandKind::IdResult) => Some(1),
            _ => None,
        });
        if let Some(k) = id_word.filter(|&k| k < words as usize) {
            at.id = word_at(bytes, pos + 4 * k);
        }
        if words == 0 {
            return Err(SpirvError::WordCountZero {
                at: at.location(index),
            });
        }
        let end = pos + 4 * words as usize;
        if end > bytes.len() {
            return Err(SpirvError::Truncated {
                at: at.location(index),
                words,
                available: (bytes.len() - pos) / 4,
            });
        }
        let Some(grammar) = grammar else {
            return Err(SpirvError::UnknownOpcode {
                at: at.location(index),
                opcode,
            });
        };
        if grammar.opcode == spirv::Op::TypeFloat && words == 4 {
            // OpTypeFloat %id width encoding: rspirv's parser knows only the encodings of its
            // SDK; read the operand here, so that every encoding clconv does not read is one
            // error that says so.
            let width = word_at(bytes, pos + 8).unwrap_or(0);
            let encoding = word_at(bytes, pos + 12).unwrap_or(0);
            if let Some(why) = float_encoding_problem(width, encoding) {
                return Err(SpirvError::FloatEncoding {
                    at: at.location(index),
                    width,
                    encoding,
                    why,
                });
            }
        }
        if grammar.opcode == spirv::Op::SpecConstantOp {
            // OpSpecConstantOp %type %id <opcode> operands...
            let inner = (words >= 4).then(|| word_at(bytes, pos + 12)).flatten();
            let allowed = inner
                .and_then(|w| INSTRUCTION_TABLE.lookup_opcode(w))
                .is_some_and(|g| SPEC_CONSTANT_OPS.contains(&g.opcode));
            if !allowed {
                return Err(SpirvError::Malformed {
                    at: at.location(index),
                    why: match inner {
                        Some(w) => format!(
                            "OpSpecConstantOp cannot compute {}",
                            opcode_name(w).map_or(format!("opcode {w}"), |n| format!("Op{n}"))
                        ),
                        None => "OpSpecConstantOp without its opcode operand".into(),
                    },
                });
            }
        }
        previous_id = at.id.or(previous_id);
        out.push(at);
        pos = end;
    }
    Ok(out)
}

/// FP Encodings of SPIR-V's grammar that clconv has no type for (SPV_EXT_ocp_microscaling_types,
/// in KhronosGroup/SPIRV-Headers' `spirv.core.grammar.json`), for the error message.
const OTHER_FP_ENCODINGS: [(u32, &str); 1] = [(4227, "MXInt8EXT")];

/// What is wrong with `OpTypeFloat width encoding`, if anything: clconv reads each encoding of
/// [`FpEncoding::ALL`] at its extension's width (SPV_KHR_bfloat16's FP Encoding table:
/// "Width(s) 16"; SPV_EXT_float8's: "Width(s) 8"; SPV_EXT_ocp_microscaling_types': 6, 6, 4, 8).
fn float_encoding_problem(width: u32, encoding: u32) -> Option<String> {
    const READ: &str = "clconv reads BFloat16KHR (0) on OpTypeFloat 16, Float8E4M3EXT (4214), \
                        Float8E5M2EXT (4215) and Float8UnsignedE8M0EXT (4226) on OpTypeFloat 8, \
                        Float6E2M3EXT (4223) and Float6E3M2EXT (4224) on OpTypeFloat 6 and \
                        Float4E2M1EXT (4225) on OpTypeFloat 4";
    match FpEncoding::from_value(encoding) {
        Some(e) if e.width() == width => None,
        Some(e) => Some(format!(
            "{e} ({}) is {} bits wide, not {width}: the module is invalid",
            e.extension(),
            e.width()
        )),
        None => Some(
            match OTHER_FP_ENCODINGS.iter().find(|(v, _)| *v == encoding) {
                Some((_, name)) => format!(
                    "{name} (SPV_EXT_ocp_microscaling_types) is a format clconv has no type \
                     for; {READ}"
                ),
                None => format!(
                    "{encoding} is not an FP Encoding SPIR-V defines (the module is corrupt, \
                     or newer than SPIR-V SDK 1.4.341); {READ}"
                ),
            },
        ),
    }
}

/// The error for a parse rspirv stopped: `count` instructions had been consumed.
fn parse_error(state: ParseState, scanned: &[Scanned], count: usize) -> SpirvError {
    let at = |index: usize| {
        let i = index.clamp(1, scanned.len().max(1));
        match scanned.get(i - 1) {
            Some(s) => s.location(i),
            None => Location {
                index: i,
                offset: HEADER_WORDS * 4,
                opcode: 0,
                id: None,
                previous_id: None,
            },
        }
    };
    let (index, why) = match state {
        ParseState::ConsumerError(err) => {
            return match err.downcast::<SpirvError>() {
                Ok(e) => *e,
                Err(other) => SpirvError::Malformed {
                    at: at(count + 1),
                    why: other.to_string(),
                },
            }
        }
        ParseState::OperandExpected(_, index) => (
            index,
            "fewer operands than the SPIR-V grammar requires: the module is corrupt".to_string(),
        ),
        ParseState::OperandExceeded(_, index) => (
            index,
            "more operands than the SPIR-V grammar allows: the module is corrupt".to_string(),
        ),
        ParseState::OperandError(e) => (count + 1, format!("bad operand: {e}")),
        ParseState::TypeUnsupported(_, index) => (
            index,
            "a literal of a type the SPIR-V parser cannot size (an integer or float type of an \
             unusual width)"
                .to_string(),
        ),
        ParseState::SpecConstantOpIntegerIncorrect(_, index) => {
            (index, "OpSpecConstantOp with an unknown opcode".to_string())
        }
        // The scan has checked the header and every instruction's opcode and word count.
        other => (count + 1, other.to_string()),
    };
    SpirvError::Malformed { at: at(index), why }
}

/// A decoration clconv reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Deco {
    /// `SaturatedConversion`: integer results.
    Saturated,
    /// `SaturatedToLargestFloat8NormalConversionEXT` (SPV_EXT_float8): 8-bit float results.
    SaturatedFloat8,
    Rounding(Rounding),
}

impl Deco {
    fn name(self) -> String {
        match self {
            Deco::Saturated => "SaturatedConversion".into(),
            Deco::SaturatedFloat8 => "SaturatedToLargestFloat8NormalConversionEXT".into(),
            Deco::Rounding(r) => super::rounding_decoration(r),
        }
    }
}

/// A type as declared.
#[derive(Clone, Copy)]
enum TypeDef {
    Int {
        width: u32,
        signed: bool,
    },
    /// `encoding`: the FP Encoding operand, if any (checked by `scan` to be one clconv reads,
    /// at its width).
    Float {
        width: u32,
        encoding: Option<FpEncoding>,
    },
    Vector {
        component: u32,
        count: u32,
    },
    Bool,
    Other(&'static str),
}

/// What a constant is, as far as the bool idioms care ([`Op::Select`], [`Op::INotEqual`],
/// [`Op::FUnordNotEqual`]): zero (+0.0, `OpConstantNull`), -0.0, one (1 or 1.0), or anything
/// else; a composite is what all its constituents are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConstClass {
    Zero,
    NegativeZero,
    One,
    Other,
}

/// A conversion instruction as parsed, before its types are resolved.
struct RawConversion {
    function: u32,
    op: Op,
    id: u32,
    result_type: u32,
    operand: u32,
}

/// An OpenCL.std half load or store as parsed, before its types are resolved.
struct RawHalf {
    function: u32,
    op: HalfOp,
    id: u32,
    result_type: u32,
    /// The operand words after the instruction number (ids, then the literal n or mode).
    operands: Vec<u32>,
    /// Its 1-based instruction number, for messages.
    index: usize,
}

/// rspirv's consumer: collects names, types, decorations and conversion instructions.
struct Collector<'a> {
    scanned: &'a [Scanned],
    /// The types of SPV_EXT_ocp_microscaling_types' FP Encodings, by id ([`Module::parse`]).
    microscaling: HashMap<u32, FpEncoding>,
    /// Instructions consumed.
    count: usize,
    names: HashMap<u32, String>,
    decorations: Vec<(u32, Deco)>,
    groups: HashSet<u32>,
    group_decorations: Vec<(u32, Vec<u32>)>,
    types: HashMap<u32, TypeDef>,
    /// Result id -> (defining opcode, result type).
    defs: HashMap<u32, (spirv::Op, Option<u32>)>,
    conversions: Vec<RawConversion>,
    /// The constants, classed for the bool idioms.
    constants: HashMap<u32, ConstClass>,
    /// The declared capabilities.
    capabilities: Vec<spirv::Capability>,
    /// The result ids of `OpExtInstImport "OpenCL.std"`.
    opencl_std: HashSet<u32>,
    halves: Vec<RawHalf>,
    /// Conversions and half accesses in module order: `(true, i)` is `halves[i]`.
    order: Vec<(bool, usize)>,
    /// The function being read: its id and where it starts.
    function: Option<(u32, usize)>,
    /// `OpSource`'s language.
    source: Option<spirv::SourceLanguage>,
    /// The float-controls execution modes: (mode, target width), of any entry point.
    float_modes: Vec<(spirv::ExecutionMode, u32)>,
}

impl<'a> Collector<'a> {
    fn new(scanned: &'a [Scanned]) -> Collector<'a> {
        Collector {
            scanned,
            microscaling: HashMap::new(),
            count: 0,
            names: HashMap::new(),
            decorations: Vec::new(),
            groups: HashSet::new(),
            group_decorations: Vec::new(),
            types: HashMap::new(),
            defs: HashMap::new(),
            conversions: Vec::new(),
            constants: HashMap::new(),
            capabilities: Vec::new(),
            opencl_std: HashSet::new(),
            halves: Vec::new(),
            order: Vec::new(),
            function: None,
            source: None,
            float_modes: Vec::new(),
        }
    }

    fn location(&self, index: usize) -> Location {
        self.scanned[index - 1].location(index)
    }

    fn malformed(&self, index: usize, why: String) -> ParseAction {
        ParseAction::Error(Box::new(SpirvError::Malformed {
            at: self.location(index),
            why,
        }))
    }

    /// Records one instruction; `Err` for what makes the module unreadable.
    fn take(&mut self, inst: &dr::Instruction) -> Result<(), String> {
        use dr::Operand as O;
        let opcode = inst.class.opcode;
        if let Some(id) = inst.result_id {
            self.defs.insert(id, (opcode, inst.result_type));
        }
        let word = |i: usize| match inst.operands.get(i) {
            Some(O::LiteralBit32(w)) => Some(*w),
            _ => None,
        };
        let id_ref = |i: usize| match inst.operands.get(i) {
            Some(O::IdRef(id)) => Some(*id),
            _ => None,
        };
        match opcode {
            spirv::Op::Name => {
                if let (Some(target), Some(O::LiteralString(name))) =
                    (id_ref(0), inst.operands.get(1))
                {
                    self.names.entry(target).or_insert_with(|| name.clone());
                }
            }
            spirv::Op::Decorate | spirv::Op::DecorateId | spirv::Op::DecorateString => {
                let deco = match (inst.operands.get(1), inst.operands.get(2)) {
                    (Some(O::Decoration(spirv::Decoration::SaturatedConversion)), _) => {
                        Some(Deco::Saturated)
                    }
                    (
                        Some(O::Decoration(
                            spirv::Decoration::SaturatedToLargestFloat8NormalConversionEXT,
                        )),
                        _,
                    ) => Some(Deco::SaturatedFloat8),
                    (
                        Some(O::Decoration(spirv::Decoration::FPRoundingMode)),
                        Some(O::FPRoundingMode(m)),
                    ) => Some(Deco::Rounding(match m {
                        spirv::FPRoundingMode::RTE => Rounding::Rte,
                        spirv::FPRoundingMode::RTZ => Rounding::Rtz,
                        spirv::FPRoundingMode::RTP => Rounding::Rtp,
                        spirv::FPRoundingMode::RTN => Rounding::Rtn,
                    })),
                    _ => None,
                };
                if let (Some(target), Some(deco)) = (id_ref(0), deco) {
                    self.decorations.push((target, deco));
                }
            }
            spirv::Op::DecorationGroup => {
                if let Some(id) = inst.result_id {
                    self.groups.insert(id);
                }
            }
            spirv::Op::GroupDecorate => {
                if let Some(group) = id_ref(0) {
                    let targets = (1..inst.operands.len()).filter_map(id_ref).collect();
                    self.group_decorations.push((group, targets));
                }
            }
            spirv::Op::TypeInt => {
                if let (Some(id), Some(width), Some(signedness)) =
                    (inst.result_id, word(0), word(1))
                {
                    self.types.insert(
                        id,
                        TypeDef::Int {
                            width,
                            signed: signedness == 1,
                        },
                    );
                }
            }
            spirv::Op::TypeFloat => {
                if let (Some(id), Some(width)) = (inst.result_id, word(0)) {
                    let encoding = match inst.operands.get(1) {
                        _ if self.microscaling.contains_key(&id) => {
                            self.microscaling.get(&id).copied()
                        }
                        None => None,
                        Some(O::FPEncoding(e)) => match FpEncoding::from_value(*e as u32) {
                            Some(e) => Some(e),
                            // `scan` refuses every encoding but clconv's.
                            None => return Err(format!("unknown FP Encoding {e:?}")),
                        },
                        Some(other) => return Err(format!("an FP Encoding operand {other:?}")),
                    };
                    self.types.insert(id, TypeDef::Float { width, encoding });
                }
            }
            spirv::Op::TypeVector => {
                if let (Some(id), Some(component), Some(count)) =
                    (inst.result_id, id_ref(0), word(1))
                {
                    self.types.insert(id, TypeDef::Vector { component, count });
                }
            }
            spirv::Op::TypeBool => {
                if let Some(id) = inst.result_id {
                    self.types.insert(id, TypeDef::Bool);
                }
            }
            spirv::Op::Constant | spirv::Op::ConstantNull | spirv::Op::ConstantComposite => {
                if let Some(id) = inst.result_id {
                    let class = self.const_class(inst);
                    self.constants.insert(id, class);
                }
            }
            spirv::Op::Select | spirv::Op::INotEqual | spirv::Op::FUnordNotEqual => {
                return self.take_bool_idiom(inst)
            }
            op if op.is_type() => {
                if let Some(id) = inst.result_id {
                    self.types.insert(id, TypeDef::Other(inst.class.opname));
                }
            }
            spirv::Op::Source => {
                if let Some(O::SourceLanguage(language)) = inst.operands.first() {
                    self.source = Some(*language);
                }
            }
            spirv::Op::ExecutionMode => {
                use spirv::ExecutionMode as M;
                if let Some(O::ExecutionMode(
                    mode @ (M::RoundingModeRTE
                    | M::RoundingModeRTZ
                    | M::DenormPreserve
                    | M::DenormFlushToZero
                    | M::SignedZeroInfNanPreserve),
                )) = inst.operands.get(1)
                {
                    let width = word(2).unwrap_or(0);
                    self.float_modes.push((*mode, width));
                }
            }
            spirv::Op::Capability => {
                if let Some(O::Capability(c)) = inst.operands.first() {
                    self.capabilities.push(*c);
                }
            }
            spirv::Op::ExtInstImport => {
                if let (Some(id), Some(O::LiteralString(name))) =
                    (inst.result_id, inst.operands.first())
                {
                    if name == OPENCL_STD {
                        self.opencl_std.insert(id);
                    }
                }
            }
            spirv::Op::ExtInst => return self.take_ext_inst(inst),
            spirv::Op::Function => {
                if let Some((open, _)) = self.function {
                    return Err(format!(
                        "a function starts inside function %{open} (its OpFunctionEnd is missing)"
                    ));
                }
                let id = inst.result_id.unwrap_or(0);
                self.function = Some((id, self.count));
            }
            spirv::Op::FunctionEnd => {
                if self.function.take().is_none() {
                    return Err("OpFunctionEnd outside a function".into());
                }
            }
            _ => {
                let Some(op) = Op::from_opcode(opcode as u32) else {
                    return Ok(());
                };
                let (Some(id), Some(result_type), Some(operand)) =
                    (inst.result_id, inst.result_type, id_ref(0))
                else {
                    return Err(format!("{op} without its result type, id or operand"));
                };
                let Some((function, _)) = self.function else {
                    return Err(format!("{op} %{id} outside any function"));
                };
                self.push_conversion(RawConversion {
                    function,
                    op,
                    id,
                    result_type,
                    operand,
                });
            }
        }
        Ok(())
    }

    /// Records a conversion, in module order.
    fn push_conversion(&mut self, c: RawConversion) {
        self.order.push((false, self.conversions.len()));
        self.conversions.push(c);
    }

    /// What constant `inst` (`OpConstant`, `OpConstantNull`, `OpConstantComposite`) is.
    fn const_class(&self, inst: &dr::Instruction) -> ConstClass {
        use dr::Operand as O;
        match inst.class.opcode {
            spirv::Op::ConstantNull => ConstClass::Zero,
            spirv::Op::ConstantComposite => {
                let classes: Vec<ConstClass> = inst
                    .operands
                    .iter()
                    .map(|o| match o {
                        O::IdRef(c) => self.constants.get(c).copied().unwrap_or(ConstClass::Other),
                        _ => ConstClass::Other,
                    })
                    .collect();
                match classes.first() {
                    Some(&first) if classes.iter().all(|&c| c == first) => first,
                    _ => ConstClass::Other,
                }
            }
            _ => {
                let bits = match inst.operands.first() {
                    Some(O::LiteralBit32(w)) => u64::from(*w),
                    Some(O::LiteralBit64(w)) => *w,
                    _ => return ConstClass::Other,
                };
                let ty = inst.result_type.and_then(|t| self.types.get(&t));
                let (one, sign) = match ty {
                    Some(TypeDef::Int { .. }) => (1, None),
                    Some(TypeDef::Float {
                        width,
                        encoding: None,
                    }) => match width {
                        16 => (0x3c00, Some(0x8000)),
                        32 => (0x3f80_0000, Some(0x8000_0000)),
                        64 => (0x3ff0_0000_0000_0000, Some(1 << 63)),
                        _ => return ConstClass::Other,
                    },
                    _ => return ConstClass::Other,
                };
                match bits {
                    0 => ConstClass::Zero,
                    b if b == one => ConstClass::One,
                    b if Some(b) == sign => ConstClass::NegativeZero,
                    _ => ConstClass::Other,
                }
            }
        }
    }

    /// Records the instructions SPIR-V producers write bool conversions as, in a function:
    /// `OpSelect %T %b %one %zero` (a bool to 1 or 0: glslang's, naga's and Tint's `T(b)`),
    /// `OpINotEqual %bool %x %zero` and `OpFUnordNotEqual %bool %x %zero` (a number to bool,
    /// NaN true: naga's and glslang's `bool(x)`), the zero on either side. Anything else these
    /// opcodes compute (a select of other values, a comparison with a non-zero) is no
    /// conversion. `OpFOrdNotEqual` with zero gives false for NaN, which no language's bool
    /// conversion does: it is a comparison, not read.
    fn take_bool_idiom(&mut self, inst: &dr::Instruction) -> Result<(), String> {
        use dr::Operand as O;
        let ids: Vec<u32> = inst
            .operands
            .iter()
            .filter_map(|o| match o {
                O::IdRef(id) => Some(*id),
                _ => None,
            })
            .collect();
        let class = |id: u32| self.constants.get(&id).copied();
        let zero = |id: u32| matches!(class(id), Some(ConstClass::Zero | ConstClass::NegativeZero));
        let (op, operand) = match (inst.class.opcode, &ids[..]) {
            (spirv::Op::Select, &[b, one, z])
                if class(one) == Some(ConstClass::One) && class(z) == Some(ConstClass::Zero) =>
            {
                (Op::Select, b)
            }
            (spirv::Op::INotEqual | spirv::Op::FUnordNotEqual, &[x, y]) if zero(y) || zero(x) => {
                let op = if inst.class.opcode == spirv::Op::INotEqual {
                    Op::INotEqual
                } else {
                    Op::FUnordNotEqual
                };
                (op, if zero(y) { x } else { y })
            }
            _ => return Ok(()),
        };
        let (Some(id), Some(result_type)) = (inst.result_id, inst.result_type) else {
            return Err(format!("{op} without its result type or id"));
        };
        let Some((function, _)) = self.function else {
            return Ok(());
        };
        self.push_conversion(RawConversion {
            function,
            op,
            id,
            result_type,
            operand,
        });
        Ok(())
    }

    /// Records an `OpExtInst` if it is one of OpenCL.std's half loads and stores.
    fn take_ext_inst(&mut self, inst: &dr::Instruction) -> Result<(), String> {
        use dr::Operand as O;
        let (Some(O::IdRef(set)), Some(O::LiteralExtInstInteger(number))) =
            (inst.operands.first(), inst.operands.get(1))
        else {
            return Err("OpExtInst without its set and instruction number".into());
        };
        if !self.opencl_std.contains(set) {
            return Ok(());
        }
        let Some(op) = HalfOp::from_number(*number) else {
            return Ok(());
        };
        let operands: Vec<u32> = inst.operands[2..]
            .iter()
            .filter_map(|o| match o {
                O::IdRef(w) => Some(*w),
                _ => None,
            })
            .collect();
        let (Some(id), Some(result_type)) = (inst.result_id, inst.result_type) else {
            return Err(format!("OpenCL.std {op} without its result type or id"));
        };
        let expected = if op.is_store() {
            3 + usize::from(op.takes_rounding())
        } else {
            2 + usize::from(op.is_vector())
        };
        if operands.len() != expected || operands.len() + 2 != inst.operands.len() {
            return Err(format!(
                "OpenCL.std {op} %{id} takes {expected} operands ({}), but it has {}",
                op.operand_names(),
                inst.operands.len() - 2
            ));
        }
        let Some((function, _)) = self.function else {
            return Err(format!("OpenCL.std {op} %{id} outside any function"));
        };
        self.order.push((true, self.halves.len()));
        self.halves.push(RawHalf {
            function,
            op,
            id,
            result_type,
            operands,
            index: self.count,
        });
        Ok(())
    }

    /// After the parse: the decorations applied and checked, each conversion's types resolved.
    #[allow(clippy::type_complexity)]
    fn resolve(self) -> Result<(Vec<Located>, Vec<LocatedHalf>, Vec<(bool, usize)>), SpirvError> {
        // Group decorations onto their targets, after the direct ones.
        let mut decorations: Vec<(u32, Deco)> = self
            .decorations
            .iter()
            .filter(|(target, _)| !self.groups.contains(target))
            .copied()
            .collect();
        for (group, targets) in &self.group_decorations {
            for (target, deco) in &self.decorations {
                if target == group {
                    decorations.extend(targets.iter().map(|&t| (t, *deco)));
                }
            }
        }

        // Which ids are the conversions clconv reads (pointer bitcasts are not).
        let mut kept: HashMap<u32, Option<(SpirvType, SpirvType)>> = HashMap::new();
        let mut ops: HashMap<u32, Op> = HashMap::new();
        for c in &self.conversions {
            let types = self.types_of(c)?;
            kept.insert(c.id, types);
            ops.insert(c.id, c.op);
        }

        let mut by_target: HashMap<u32, (bool, Option<Rounding>)> = HashMap::new();
        for &(target, deco) in &decorations {
            if !matches!(kept.get(&target), Some(Some(_))) {
                let what = match (self.defs.get(&target), kept.get(&target)) {
                    (_, Some(None)) => "it is an OpBitcast of pointers".to_string(),
                    (Some((op, _)), _) => {
                        let name = INSTRUCTION_TABLE
                            .lookup_opcode(*op as u32)
                            .map_or("an unknown instruction", |g| g.opname);
                        format!("it is an Op{name}")
                    }
                    (None, _) => "no instruction in the module defines it (truncated?)".into(),
                };
                return Err(SpirvError::DecorationOnNonConversion {
                    id: target,
                    decoration: deco.name(),
                    what,
                });
            }
            if let (Deco::Saturated | Deco::SaturatedFloat8, Some(Some((result, _)))) =
                (deco, kept.get(&target))
            {
                let op = ops[&target];
                if let Some(why) = saturation_problem(deco, op, result) {
                    return Err(SpirvError::DecorationNotApplicable {
                        id: target,
                        op,
                        decoration: deco.name(),
                        why,
                    });
                }
            }
            let entry = by_target.entry(target).or_insert((false, None));
            match deco {
                Deco::Saturated | Deco::SaturatedFloat8 => entry.0 = true,
                Deco::Rounding(r) => match entry.1 {
                    Some(prev) if prev != r => {
                        return Err(SpirvError::ConflictingDecorations {
                            id: target,
                            first: Deco::Rounding(prev).name(),
                            second: deco.name(),
                        })
                    }
                    _ => entry.1 = Some(r),
                },
            }
        }

        let mut out = Vec::new();
        // Where each parsed conversion lands in `out` (pointer bitcasts are left out).
        let mut landed: Vec<Option<usize>> = Vec::with_capacity(self.conversions.len());
        for c in &self.conversions {
            let Some(Some((result_type, operand_type))) = kept.get(&c.id).copied() else {
                landed.push(None);
                continue;
            };
            landed.push(Some(out.len()));
            let (saturated, rounding) = by_target.get(&c.id).copied().unwrap_or((false, None));
            let function = c.function;
            out.push(Located {
                function: Function {
                    id: function,
                    name: self.names.get(&function).cloned(),
                },
                instruction: Instruction {
                    id: c.id,
                    opcode: c.op as u32,
                    result_type,
                    operand_type,
                    saturated,
                    rounding,
                },
            });
        }
        let halves = self
            .halves
            .iter()
            .map(|h| self.resolve_half(h))
            .collect::<Result<Vec<_>, _>>()?;
        let order = self
            .order
            .iter()
            .filter_map(|&(half, i)| match half {
                true => Some((true, i)),
                false => landed[i].map(|j| (false, j)),
            })
            .collect();
        Ok((out, halves, order))
    }

    /// A half load or store with its value type, `n` and rounding mode read.
    fn resolve_half(&self, h: &RawHalf) -> Result<LocatedHalf, SpirvError> {
        let op = h.op;
        let (role, type_id) = if op.is_store() {
            let data = h.operands[0];
            match self.defs.get(&data) {
                Some((_, Some(t))) => (Role::Operand, *t),
                Some((_, None)) => {
                    return Err(SpirvError::Undefined {
                        id: h.id,
                        what: "data operand",
                        missing: data,
                        problem: "is not a value (it has no type)",
                    })
                }
                None => {
                    return Err(SpirvError::Undefined {
                        id: h.id,
                        what: "data operand",
                        missing: data,
                        problem: "is defined by no instruction in the module",
                    })
                }
            }
        } else {
            (Role::Result, h.result_type)
        };
        let value_type =
            self.numeric(h.id, role, type_id)?.map_err(|found| {
                SpirvError::HalfAccessUnsupported {
                    id: h.id,
                    op,
                    why: format!(
                    "the {} type %{type_id} is an Op{found}, not a floating-point scalar or vector",
                    if op.is_store() { "data operand's" } else { "result" }
                ),
                }
            })?;
        let last = h.operands[h.operands.len() - 1];
        let rounding = if op.takes_rounding() {
            Some(match last {
                0 => Rounding::Rte,
                1 => Rounding::Rtz,
                2 => Rounding::Rtp,
                3 => Rounding::Rtn,
                other => {
                    return Err(SpirvError::Malformed {
                        at: self.location(h.index),
                        why: format!(
                            "{op}'s rounding mode is {other}, not 0 (RTE), 1 (RTZ), 2 (RTP) or \
                             3 (RTN)"
                        ),
                    })
                }
            })
        } else {
            None
        };
        let n = (!op.is_store() && op.is_vector()).then_some(last);
        Ok(LocatedHalf {
            function: Function {
                id: h.function,
                name: self.names.get(&h.function).cloned(),
            },
            instruction: HalfInstruction {
                id: h.id,
                number: op as u32,
                value_type,
                n,
                rounding,
            },
        })
    }

    /// The result and operand types of `c`; `None` for a bitcast that involves a non-numeric
    /// type (a pointer), which is not a conversion.
    fn types_of(&self, c: &RawConversion) -> Result<Option<(SpirvType, SpirvType)>, SpirvError> {
        let operand_type = match self.defs.get(&c.operand) {
            None => {
                return Err(SpirvError::Undefined {
                    id: c.id,
                    what: "operand",
                    missing: c.operand,
                    problem: "is defined by no instruction in the module",
                })
            }
            Some((_, None)) => {
                return Err(SpirvError::Undefined {
                    id: c.id,
                    what: "operand",
                    missing: c.operand,
                    problem: "is not a value (it has no type)",
                })
            }
            Some((_, Some(t))) => *t,
        };
        let result = self.numeric(c.id, Role::Result, c.result_type)?;
        let operand = self.numeric(c.id, Role::Operand, operand_type)?;
        match (result, operand) {
            (Ok(r), Ok(o)) => Ok(Some((r, o))),
            _ if c.op == Op::Bitcast => Ok(None),
            (Err(found), _) => Err(not_numeric(c, Role::Result, c.result_type, found)),
            (_, Err(found)) => Err(not_numeric(c, Role::Operand, operand_type, found)),
        }
    }

    /// The numeric type `id` declares, `Err(opname)` for a declared type that is not numeric.
    fn numeric(
        &self,
        inst_id: u32,
        role: Role,
        id: u32,
    ) -> Result<Result<SpirvType, &'static str>, SpirvError> {
        let what = match role {
            Role::Result => "result type",
            Role::Operand => "operand's type",
        };
        let scalar =
            |t: u32, what: &'static str| -> Result<Result<Scalar, &'static str>, SpirvError> {
                match self.types.get(&t) {
                    Some(TypeDef::Int { width, signed }) => Ok(Ok(Scalar::Int {
                        width: *width,
                        signed: *signed,
                    })),
                    Some(TypeDef::Float {
                        width,
                        encoding: None,
                    }) => Ok(Ok(Scalar::Float { width: *width })),
                    Some(TypeDef::Float {
                        encoding: Some(encoding),
                        ..
                    }) => Ok(Ok(Scalar::EncodedFloat {
                        encoding: *encoding,
                    })),
                    Some(TypeDef::Vector { .. }) => Ok(Err("TypeVector of vectors")),
                    Some(TypeDef::Bool) => Ok(Ok(Scalar::Bool)),
                    Some(TypeDef::Other(name)) => Ok(Err(name)),
                    None => Err(SpirvError::Undefined {
                        id: inst_id,
                        what,
                        missing: t,
                        problem: "is not a type declared in the module",
                    }),
                }
            };
        match self.types.get(&id) {
            Some(TypeDef::Vector { component, count }) => Ok(scalar(*component, "component type")?
                .map(|s| SpirvType {
                    scalar: s,
                    components: *count,
                })),
            _ => Ok(scalar(id, what)?.map(|s| SpirvType {
                scalar: s,
                components: 1,
            })),
        }
    }
}

/// Why the saturation decoration `deco` does not apply to `op` with result type `result`, if
/// it does not.
///
/// SPV_EXT_float8, "Decoration": `SaturatedToLargestFloat8NormalConversionEXT` "must only be
/// applied to the **OpFConvert**, **OpConvertSToF**, or **OpConvertUToF** instructions with a
/// _Result Type_ that uses an *Float8E4M3EXT* or *Float8E5M2EXT* FP Encoding". SPIR-V's
/// `SaturatedConversion` is for conversions to integer types; on an 8-bit float result it would
/// read as the `_sat` the other one means, so it is refused rather than guessed at. (Its other
/// misuses, on a `half` or `float` result, are [`Instruction::request`]'s errors, as before.)
fn saturation_problem(deco: Deco, op: Op, result: &SpirvType) -> Option<&'static str> {
    match deco {
        Deco::Saturated if result.is_float8() => Some(
            "SaturatedConversion is for integer results; an 8-bit float result saturates with \
             SaturatedToLargestFloat8NormalConversionEXT (SPV_EXT_float8)",
        ),
        Deco::SaturatedFloat8
            if !result.is_float8()
                || !matches!(op, Op::FConvert | Op::ConvertSToF | Op::ConvertUToF) =>
        {
            Some(
                "SPV_EXT_float8: it \"must only be applied to the OpFConvert, OpConvertSToF, or \
                 OpConvertUToF instructions with a Result Type that uses an Float8E4M3EXT or \
                 Float8E5M2EXT FP Encoding\"",
            )
        }
        _ => None,
    }
}

fn not_numeric(c: &RawConversion, role: Role, type_id: u32, found: &'static str) -> SpirvError {
    SpirvError::NotNumeric {
        id: c.id,
        op: c.op,
        role,
        type_id,
        found,
    }
}

impl Consumer for Collector<'_> {
    fn initialize(&mut self) -> ParseAction {
        ParseAction::Continue
    }

    fn finalize(&mut self) -> ParseAction {
        match self.function {
            Some((id, index)) => self.malformed(
                index,
                format!(
                    "function %{id} has no OpFunctionEnd: the module ends inside it (truncated?)"
                ),
            ),
            None => ParseAction::Continue,
        }
    }

    fn consume_header(&mut self, _header: dr::ModuleHeader) -> ParseAction {
        ParseAction::Continue
    }

    fn consume_instruction(&mut self, inst: dr::Instruction) -> ParseAction {
        self.count += 1;
        match self.take(&inst) {
            Ok(()) => ParseAction::Continue,
            Err(why) => self.malformed(self.count, why),
        }
    }
}
