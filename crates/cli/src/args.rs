//! The command line: clap's derive structs, and the checks that turn their text into clconv's
//! types with the messages the commands have always given.
//!
//! Option values stay text here and are checked by the command that uses them (the functions at
//! the end), so the error messages and their order are the same as before clap: `--layout
//! diagonal` says `--layout is packed or aligned, not "diagonal"`. Every value option takes the
//! next argument whatever it starts with (`--values -5,254.5`, `--input -`), and an option given
//! twice keeps its last value.

use crate::{shown, Usage};
use clap::{Args, Parser, Subcommand};
use clconv::jit::X64Flags;
use clconv::kernel::Tier;
use clconv::target::Target;
use clconv::{Extensions, Layout, Rounding};

/// `clconv --help` (and `clconv help`): the overview of every command.
const HELP: &str = "\
clconv: OpenCL C conversions (convert_*, as_*) lowered to Cranelift and JIT-compiled

FUNCTION is any spelling of a conversion: OpenCL (convert_int4_sat_rte(float4)), mangled
(_Z20convert_int4_sat_rteDv4_f), or a language's own, LANG:expression (wgsl:i32(f32),
hlsl:int4(float4), glsl:ivec4(vec4), msl:static_cast<int4>(float4), 'rust:f32 as i8',
wasm:i32.trunc_sat_f32_u, ptx:cvt.rni.s32.f32, cuda:__float2int_rn).

usage:
  clconv demo
      JIT-compile a few conversions, run them on built-in inputs, show them beside the reference.
  clconv run FUNCTION [--input IN | --values LIST] [--output OUT] [--layout packed|aligned]
                      [--reference] [--fp16] [--static-mode rte|rtz|rtp|rtn]
      Convert a buffer of raw little-endian elements (IN, or standard input) into OUT (raw), or
      print the results as text when there is no --output. --values takes the input as text:
      comma-separated numbers, or 0x... bit patterns. --reference uses the reference interpreter
      instead of the JIT.
  clconv run OP(TYPE) (--input A | --values A) [--input2 B | --values2 B] [--input3 C | --values3 C]
                      [--output OUT] [--layout packed|aligned] [--reference] [--static-mode M]
      Correctly rounded arithmetic on buffers: OP is add, sub, mul, div, sqrt or fma, with
      _rte, _rtz, _rtp or _rtn (none: the static mode), and TYPE is float or double with an
      optional width: mul_rtz(float4), fma_rtn(double2), sqrt(float). The operands a, b, c of
      a + b, a - b, a * b, a / b, sqrt(a), a * b + c come from --input, --input2, --input3 (raw
      little-endian) or --values, --values2, --values3 (text); the output is as for conversions.
  clconv run BLOCKS (--input V | --values V) [--input2 S | --values2 S] [--tensor-scale T]
             [--reference]
      Scaled blocks (`clconv list mx`): convert_mxfp8e4m3(float) quantises the values into
      elements and one scale per block (printed a block to a line), convert_float(mxfp8e4m3)
      turns elements (--values) and scales (--values2) back into values; NVFP4 requests
      (convert_nvfp4(float), convert_float(nvfp4x2)) take the tensor's scale T.
  clconv show FUNCTION [--clif] [--asm] [--layout packed|aligned] [--flags FLAGS | --target T]
                       [--fp16] [--static-mode rte|rtz|rtp|rtn] [--tier optimised|quick]
      Print the batch kernel's Cranelift IR (--clif) and/or machine code (--asm; default both),
      for this machine or, with --target, for another: x86_64-sse2, x86_64-sse4.1,
      x86_64-avx2, x86_64-avx512, aarch64, riscv64, riscv64-v, s390x.
  clconv check [FILTER] [--inputs N] [--seed S] [--flags FLAGS] [--tier optimised|quick|both]
      Differential check of every request whose name contains FILTER (default: the whole matrix,
      half included, and the languages' requests beyond it: chains, PTX's float rules) against
      the reference, on both JIT tiers unless --tier picks one. Ends with `N passed, N failed`.
  clconv check --exhaustive [FILTER] [--ledger FILE] [--state FILE] [--inputs N] [--reference-all]
               [--seed S] [--flags FLAGS] [--tier optimised|quick]
      Every input (2^32 for float, int and uint) of every conversion (PTX's float rules
      included; not chains) from a source of at most 32 bits whose name contains FILTER (with `*`, matches it whole: 'convert_int*_rte(float*)'),
      through the JIT, against an independent fast path and the reference (see VERIFICATION.md);
      all cores, progress and time left on stderr, one line per finished run. --ledger FILE
      skips the runs whose exact machine code FILE proves and appends a line per kernel swept;
      --state FILE skips the runs FILE lists as passed and appends each result to it; --inputs N
      takes only the first N inputs; --reference-all checks every input with the reference (slow).
      --wide: the conversions from long, ulong and double instead, each on the seed budget of
      16,777,216 inputs (16 seeds) built around their rounding decisions.
  clconv check --exhaustive --status [FILTER] [--wide] [--ledger FILE] [--flags FLAGS] [--tier T]
               [--verbose]
      Compile every run for sse2, sse4.1, avx2 and avx512 on both tiers (no such CPU needed) and
      count the runs whose machine code the ledger (default: the repository's
      verification/ledger.tsv, with --wide verification/ledger-64.tsv) proves. Status 1 only if
      it records a failure of this build's code.
  clconv report [--write]
      The lowering report: instructions per element and recipe, per conversion and target
      (--write: regenerate lowering-tables/REPORT.md).
  clconv list [FILTER] [--fp16]
      Print every request (canonical and mangled name) whose name contains FILTER. With a
      language prefix (wgsl:, hlsl:, glsl:, msl:, rust:, wasm:, ptx:, cuda:), its spellings, each with
      the request it is: clconv list wgsl:vec4.
  clconv spirv MODULE.spv [--fp16]
      Every conversion instruction and OpenCL.std half load or store of a SPIR-V module, in
      module order, one tab-separated line each: the function, the result id, the request (or
      vstore_half_rtz(float), ...), the recipe the host's table picks. Half conversions are on
      when the module declares Float16 or a 16-bit storage capability, or with --fp16.
  clconv emit FUNCTION... --target T -o OUT.o [--header OUT.h] [--tier optimised|quick|both]
              [--layout packed|aligned] [--fp16]
      Compile conversions ahead of time into a relocatable object file for target T (host or
      any --target of show), one C function each: clconv_<name>(src, dst, count), count the
      number of OpenCL values, any count; a block request (clconv list mx) gets
      clconv_<name>(values, elements, scales, count[, tensor_scale]). --header writes the C
      header declaring them.

FUNCTION is any spelling: convert_uchar4_sat_rte(float4), _Z20convert_int4_sat_rteDv4_f,
as_float4(int4). FLAGS is an x86-64 flag set this machine runs: host (default), sse2, sse4.1, avx2, avx512.
half needs --fp16 (the cl_khr_fp16 extension) except in `check`, which covers the whole matrix.

clconv help COMMAND (or clconv COMMAND --help): that command's options. clconv --version: the version.
Exit status: 0 success, 1 mismatches found, 2 bad usage or input, 3 a conversion trapped
(wasm:i32.trunc_f32_s on NaN, say); one line on stderr for 2 and 3.
";

/// clconv: OpenCL C conversions (convert_*, as_*) lowered to Cranelift and JIT-compiled.
#[derive(Debug, Parser)]
#[command(name = "clconv", version, help_template = HELP)]
pub struct Cli {
    /// The command; none is an error that suggests one.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The commands, in the order of `clconv --help`. Their doc comments are their help, kept as
/// written (`verbatim_doc_comment`: clap is built without line wrapping): a first line for
/// `-h`, the rest for `--help`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// JIT-compile a few conversions, run them on built-in inputs, show them beside the reference.
    #[command(args_override_self = true, verbatim_doc_comment)]
    Demo(DemoArgs),
    /// Run a conversion, or correctly rounded arithmetic, on a buffer of elements.
    ///
    /// `run FUNCTION`: convert a buffer of raw little-endian elements (IN, or standard input)
    /// into OUT (raw), or print the results as text when there is no --output. --values takes
    /// the input as text: comma-separated numbers, or 0x... bit patterns. --reference uses the
    /// reference interpreter instead of the JIT.
    ///
    /// `run OP(TYPE)`: correctly rounded arithmetic on buffers: OP is add, sub, mul, div, sqrt
    /// or fma, with _rte, _rtz, _rtp or _rtn (none: the static mode), and TYPE is float or
    /// double with an optional width: mul_rtz(float4), fma_rtn(double2), sqrt(float). The
    /// operands a, b, c of a + b, a - b, a * b, a / b, sqrt(a), a * b + c come from --input,
    /// --input2, --input3 (raw little-endian) or --values, --values2, --values3 (text); the
    /// output is as for conversions.
    #[command(
        args_override_self = true,
        verbatim_doc_comment,
        override_usage = "clconv run FUNCTION [--input IN | --values LIST] [--output OUT] \
                          [--layout packed|aligned]\n                  \
                          [--reference] [--fp16] [--static-mode rte|rtz|rtp|rtn]\n       \
                          clconv run OP(TYPE) (--input A | --values A) [--input2 B | --values2 B] \
                          [--input3 C | --values3 C]\n                  \
                          [--output OUT] [--layout packed|aligned] [--reference] [--static-mode M]"
    )]
    Run(RunArgs),
    /// Print a batch kernel's Cranelift IR and machine code, for this machine or another.
    ///
    /// Print the batch kernel's Cranelift IR (--clif) and/or machine code (--asm; default
    /// both), for this machine or, with --target, for another: x86_64-sse2, x86_64-sse4.1,
    /// x86_64-avx2, x86_64-avx512, aarch64, riscv64, riscv64-v, s390x.
    #[command(
        args_override_self = true,
        verbatim_doc_comment,
        override_usage = "clconv show FUNCTION [--clif] [--asm] [--layout packed|aligned] \
                          [--flags FLAGS | --target T]\n                   \
                          [--fp16] [--static-mode rte|rtz|rtp|rtn] [--tier optimised|quick]"
    )]
    Show(ShowArgs),
    /// Check conversions against the reference; every input of them with --exhaustive.
    ///
    /// `check`: differential check of every request whose name contains FILTER (default: every
    /// request a name spells, as `clconv list --fp16` prints them, the trapping `_trap` ones
    /// aside, and the languages' chains) against the reference, on both JIT tiers unless --tier
    /// picks one. Ends with the line `N passed, N failed`.
    ///
    /// `check --exhaustive`: every input (2^32 for float, int and uint) of every conversion
    /// (PTX's float rules included; not chains) from a source of at most 32 bits whose name
    /// contains FILTER (with `*`, matches it
    /// whole: 'convert_int*_rte(float*)'), through the JIT, against an independent fast path
    /// and the reference (see VERIFICATION.md); all cores, progress and time left on stderr,
    /// one line per finished run, then the summary.
    ///
    /// Exit status 1 when mismatches are found.
    #[command(
        args_override_self = true,
        verbatim_doc_comment,
        override_usage = "clconv check [FILTER] [--inputs N] [--seed S] [--flags FLAGS] \
                          [--tier optimised|quick|both]\n       \
                          clconv check --exhaustive [FILTER] [--state FILE] [--inputs N] \
                          [--reference-all] [--seed S]\n                    \
                          [--flags FLAGS] [--tier optimised|quick]"
    )]
    Check(CheckArgs),
    /// The lowering report: instructions per element and recipe, per conversion and target.
    #[command(
        args_override_self = true,
        verbatim_doc_comment,
        override_usage = "clconv report [--write]"
    )]
    Report(ReportArgs),
    /// Print every request (canonical and mangled name) whose name contains FILTER.
    #[command(
        args_override_self = true,
        verbatim_doc_comment,
        override_usage = "clconv list [FILTER] [--fp16]"
    )]
    List(ListArgs),
    /// Every conversion instruction of a SPIR-V module, as the requests clconv lowers.
    ///
    /// One tab-separated line per conversion instruction and OpenCL.std half load or store, in
    /// module order: the enclosing function's name (its OpName, or %id), the result id, the
    /// canonical request (convert_uchar4_sat_rte(float4); vstore_half_rtz(float) for a half
    /// store), and the recipe the host's lowering table picks. Half conversions are on when the
    /// module declares Float16 or a 16-bit storage capability (or with --fp16). A module it
    /// cannot read is one line on stderr and exit status 2.
    #[command(
        args_override_self = true,
        verbatim_doc_comment,
        override_usage = "clconv spirv MODULE.spv [--fp16]"
    )]
    Spirv(SpirvArgs),
    /// Compile conversions ahead of time into an object file with C entry points.
    ///
    /// One C function per FUNCTION in a relocatable object file for target T (host, or
    /// x86_64-sse2, x86_64-sse4.1, x86_64-avx2, x86_64-avx512, aarch64, riscv64, riscv64-v,
    /// s390x): `void clconv_<name>(const SRC *src, DST *dst, size_t count)`, the canonical
    /// name with `(` as `_` and no `)` (convert_uchar4_sat_rte(float4) is
    /// clconv_convert_uchar4_sat_rte_float4). count is the number of OpenCL values in each
    /// buffer; any count works, with no padding. Each function sets the floating-point
    /// environment its kernel needs and restores the caller's. --header writes the C header.
    /// --tier quick (or both) adds the quick tier's code as clconv_<name>_quick; --layout
    /// aligned names the functions clconv_<name>_aligned. A block request (clconv list mx)
    /// gets `void clconv_<name>(values, elements, scales, size_t count)` (count values; NVFP4's
    /// take `float tensor_scale` last and return 0, or 1 for a scale that is not positive and
    /// finite), compiled in the optimised tier.
    #[command(
        args_override_self = true,
        verbatim_doc_comment,
        override_usage = "clconv emit FUNCTION... --target T -o OUT.o [--header OUT.h] \
                          [--tier optimised|quick|both]\n                   \
                          [--layout packed|aligned] [--fp16] [--without-rounding-control]"
    )]
    Emit(EmitArgs),
}

/// `clconv demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// (none: demo takes no arguments)
    #[arg(hide = true)]
    pub extra: Vec<String>,
}

/// `clconv run FUNCTION` and `clconv run OP(TYPE)`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The conversion, or the arithmetic OP(TYPE)
    ///
    /// A conversion in any spelling: convert_uchar4_sat_rte(float4),
    /// _Z20convert_int4_sat_rteDv4_f, as_float4(int4); or OP(TYPE): mul_rtz(float4),
    /// fma_rtn(double2), sqrt(float).
    #[arg(value_name = "FUNCTION", verbatim_doc_comment)]
    pub function: Vec<String>,
    /// Raw little-endian input elements (operand a of OP(TYPE))
    ///
    /// Without --input or --values, or with `--input -`, a conversion reads standard input.
    #[arg(
        long,
        value_name = "IN",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub input: Option<String>,
    /// The input as text (operand a of OP(TYPE))
    ///
    /// Comma-separated numbers, or 0x... bit patterns: `--values=-5,254.5,0x3effffff`.
    #[arg(
        long,
        value_name = "LIST",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub values: Option<String>,
    /// OP(TYPE): operand b as raw little-endian elements
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub input2: Option<String>,
    /// OP(TYPE): operand b as text
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub values2: Option<String>,
    /// OP(TYPE): operand c (of fma) as raw little-endian elements
    #[arg(long, value_name = "C", allow_hyphen_values = true)]
    pub input3: Option<String>,
    /// OP(TYPE): operand c (of fma) as text
    #[arg(long, value_name = "C", allow_hyphen_values = true)]
    pub values3: Option<String>,
    /// Write the results raw to OUT (`-`: standard output), not as text
    #[arg(long, value_name = "OUT", allow_hyphen_values = true)]
    pub output: Option<String>,
    /// NVFP4 block requests: the tensor's float32 decode scale (e.g. its amax / 2688)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub tensor_scale: Option<String>,
    #[command(flatten)]
    pub layout: LayoutOption,
    /// Use the reference interpreter instead of the JIT
    #[arg(long)]
    pub reference: bool,
    #[command(flatten)]
    pub fp16: Fp16Option,
    #[command(flatten)]
    pub static_mode: StaticModeOption,
}

/// `clconv show FUNCTION`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub function: FunctionArgs,
    /// Print the Cranelift IR (neither --clif nor --asm: both)
    #[arg(long)]
    pub clif: bool,
    /// Print the machine code (neither --clif nor --asm: both)
    #[arg(long)]
    pub asm: bool,
    #[command(flatten)]
    pub layout: LayoutOption,
    #[command(flatten)]
    pub flags: FlagsOption,
    #[command(flatten)]
    pub target: TargetOption,
    #[command(flatten)]
    pub fp16: Fp16Option,
    #[command(flatten)]
    pub static_mode: StaticModeOption,
    /// The JIT tier whose code to show (default optimised)
    #[arg(long, value_name = "optimised|quick", allow_hyphen_values = true)]
    pub tier: Option<String>,
}

/// `clconv check [--exhaustive]`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Only the requests whose name contains FILTER (default: all)
    ///
    /// The canonical or the mangled name. With --exhaustive, a FILTER with `*` matches the
    /// name whole: 'convert_int*_rte(float*)'.
    #[arg(value_name = "FILTER", verbatim_doc_comment)]
    pub filter: Vec<String>,
    /// Every input of every conversion from a source of at most 32 bits
    ///
    /// 2^32 inputs for float, int and uint, through the JIT, against an independent fast path
    /// and the reference (see VERIFICATION.md); one line per finished run.
    #[arg(long, verbatim_doc_comment)]
    pub exhaustive: bool,
    /// Random inputs per source type (default 1000, at most 1000000)
    ///
    /// With --exhaustive: only the first N inputs of each run.
    #[arg(
        long,
        value_name = "N",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub inputs: Option<String>,
    /// Seed of the random inputs, or of --exhaustive's reference sample (default 1)
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub seed: Option<String>,
    #[command(flatten)]
    pub flags: FlagsOption,
    /// The JIT tiers to check (default both; with --exhaustive, optimised or quick)
    #[arg(long, value_name = "optimised|quick|both", allow_hyphen_values = true)]
    pub tier: Option<String>,
    /// With --exhaustive: skip the runs FILE lists as passed; append each result to it
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub state: Option<String>,
    /// With --exhaustive: skip the runs whose machine code the ledger FILE proves; append a
    /// line per kernel swept to it (with --status: the ledger to read, default the repository's
    /// verification/ledger.tsv)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub ledger: Option<String>,
    /// With --exhaustive: compile every run for sse2, sse4.1, avx2 and avx512 (or --flags), both
    /// tiers (or --tier), and count the runs the ledger proves; status 1 only if it records a
    /// failure of this build's machine code
    #[arg(long, verbatim_doc_comment)]
    pub status: bool,
    /// With --status: list every run not proven (default: the first 5 per flag set and tier)
    #[arg(long)]
    pub verbose: bool,
    /// With --exhaustive: check every input with the reference (slow)
    #[arg(long)]
    pub reference_all: bool,
    /// With --exhaustive: the conversions from long, ulong and double, each on the seed budget
    /// (16 seeds, 16,777,216 inputs; with --status, default ledger verification/ledger-64.tsv)
    #[arg(long, verbatim_doc_comment)]
    pub wide: bool,
}

/// `--flags FLAGS`, as `show` and `check` take it.
#[derive(Debug, Args)]
pub struct FlagsOption {
    /// An x86-64 flag set this machine runs (default host)
    ///
    /// host, sse2, sse4.1, avx2, avx512.
    #[arg(
        long,
        value_name = "FLAGS",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub flags: Option<String>,
}

impl FlagsOption {
    /// Whether it was given.
    pub fn is_some(&self) -> bool {
        self.flags.is_some()
    }

    /// The flag set (default host): see [`flags`].
    pub fn get(&self) -> Result<X64Flags, Usage> {
        flags(self.flags.as_deref())
    }
}

/// `--fp16`, as `run`, `show`, `list` and `emit` take it (`spirv`'s is an override with a
/// meaning of its own).
#[derive(Debug, Args)]
pub struct Fp16Option {
    /// Allow half (the cl_khr_fp16 extension)
    #[arg(long)]
    pub fp16: bool,
}

impl Fp16Option {
    /// The extensions it allows: see [`ext`].
    pub fn ext(&self) -> Extensions {
        ext(self.fp16)
    }
}

/// The FUNCTION arguments of `show` (one) and `emit` (one or more).
#[derive(Debug, Args)]
pub struct FunctionArgs {
    /// The conversion, in any spelling
    ///
    /// convert_uchar4_sat_rte(float4), _Z20convert_int4_sat_rteDv4_f, as_float4(int4).
    #[arg(value_name = "FUNCTION", verbatim_doc_comment)]
    pub function: Vec<String>,
}

impl FunctionArgs {
    /// The one FUNCTION: see [`one_function`].
    pub fn one(&self) -> Result<&str, Usage> {
        one_function(&self.function)
    }
}

/// `--layout packed|aligned`, as `run`, `show` and `emit` take it.
#[derive(Debug, Args)]
pub struct LayoutOption {
    /// Buffer layout of 3-component vectors (default packed)
    ///
    /// packed: 3 elements per vector; aligned: 4, the last one padding.
    #[arg(
        long,
        value_name = "packed|aligned",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub layout: Option<String>,
}

impl LayoutOption {
    /// The layout (default packed): see [`layout`].
    pub fn get(&self) -> Result<Layout, Usage> {
        layout(self.layout.as_deref())
    }
}

/// `--static-mode rte|rtz|rtp|rtn`, as `run` and `show` take it.
#[derive(Debug, Args)]
pub struct StaticModeOption {
    /// The static rounding mode (default rte)
    ///
    /// `#pragma OPENCL SELECT_ROUNDING_MODE`: the mode of conversions to floating types and
    /// of arithmetic without a mode suffix.
    #[arg(
        long,
        value_name = "rte|rtz|rtp|rtn",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub static_mode: Option<String>,
}

impl StaticModeOption {
    /// The mode (default rte): see [`static_mode`].
    pub fn get(&self) -> Result<Rounding, Usage> {
        static_mode(self.static_mode.as_deref())
    }
}

/// `--target T`, as `show` (another target than the host) and `emit` (required) take it.
#[derive(Debug, Args)]
pub struct TargetOption {
    /// The target to compile for
    ///
    /// host, x86_64-sse2, x86_64-sse4.1, x86_64-avx2, x86_64-avx512, aarch64, riscv64,
    /// riscv64-v, s390x.
    #[arg(
        long,
        value_name = "T",
        allow_hyphen_values = true,
        verbatim_doc_comment
    )]
    pub target: Option<String>,
}

impl TargetOption {
    /// The target, `None` when not given; an unknown name is an error listing the names.
    pub fn get(&self) -> Result<Option<Target>, Usage> {
        let Some(name) = self.target.as_deref() else {
            return Ok(None);
        };
        Target::from_name(name).map(Some).ok_or_else(|| {
            Usage(format!(
                "unknown target {}: one of {}",
                shown(name),
                target_names()
            ))
        })
    }
}

/// Every target's name, comma-separated, for messages.
pub fn target_names() -> String {
    let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    names.join(", ")
}

/// `clconv report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Regenerate lowering-tables/REPORT.md instead of printing the report
    #[arg(long)]
    pub write: bool,
    /// (none: report takes no arguments)
    #[arg(hide = true)]
    pub extra: Vec<String>,
}

/// `clconv list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only the requests whose name contains FILTER (default: all)
    #[arg(value_name = "FILTER")]
    pub filter: Vec<String>,
    #[command(flatten)]
    pub fp16: Fp16Option,
}

/// `clconv spirv MODULE.spv [--fp16]`.
#[derive(Debug, Args)]
pub struct SpirvArgs {
    /// The SPIR-V binary module
    #[arg(value_name = "MODULE.spv")]
    pub module: std::path::PathBuf,
    /// Accept half (the cl_khr_fp16 extension) even if the module declares no capability for it
    #[arg(long)]
    pub fp16: bool,
}

/// `clconv emit FUNCTION... --target T -o OUT.o [--header OUT.h]`.
#[derive(Debug, Args)]
pub struct EmitArgs {
    #[command(flatten)]
    pub function: FunctionArgs,
    #[command(flatten)]
    pub target: TargetOption,
    /// The object file to write
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT.o",
        allow_hyphen_values = true
    )]
    pub output: Option<String>,
    /// Also write the C header declaring the functions
    #[arg(long, value_name = "OUT.h", allow_hyphen_values = true)]
    pub header: Option<String>,
    /// The code of the optimised tier (default), the quick tier (_quick), or both
    #[arg(long, value_name = "optimised|quick|both", allow_hyphen_values = true)]
    pub tier: Option<String>,
    #[command(flatten)]
    pub layout: LayoutOption,
    #[command(flatten)]
    pub fp16: Fp16Option,
    /// Use only rows that round by themselves (the code lowered into a caller's own function
    /// takes), never the mxcsr/fpcr rows that round by the control: same results, every kernel
    /// in nearest-even
    #[arg(long)]
    pub without_rounding_control: bool,
}

/// Parses the command line (after checking it is UTF-8, as clap's message for that names no
/// argument). `Ok(None)`: help or the version was printed.
pub fn parse(args: Vec<String>) -> Result<Option<Cli>, Usage> {
    let first = args.get(1).cloned();
    match Cli::try_parse_from(args) {
        Ok(cli) => Ok(Some(cli)),
        Err(e) => {
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    // Help and the version on standard output, status 0 (a closed pipe too).
                    e.print().map_err(crate::stdout_error)?;
                    Ok(None)
                }
                _ => Err(Usage(clap_message(&e, first.as_deref()))),
            }
        }
    }
}

/// clap's parse error as clconv's one-line message. `first`: the first argument, the command.
fn clap_message(e: &clap::Error, first: Option<&str>) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    // `--layout <packed|aligned>` -> `--layout`; `--frob=1` -> `--frob`.
    let option = |arg: &str| arg.split([' ', '=']).next().unwrap_or_default().to_string();
    let unknown_command = |command: &str| {
        format!(
            "unknown command {}: the commands are demo, run, show, check, list, report, spirv and emit",
            shown(command)
        )
    };
    match (e.kind(), context(ContextKind::InvalidArg)) {
        (ErrorKind::InvalidSubcommand, _) => {
            if let Some(command) = context(ContextKind::InvalidSubcommand) {
                return unknown_command(command);
            }
        }
        // An option where the command should be (`clconv --frob`).
        (ErrorKind::UnknownArgument, Some(arg))
            if first.is_some_and(|f| option(f) == option(arg)) =>
        {
            return unknown_command(first.unwrap_or_default());
        }
        (ErrorKind::UnknownArgument, Some(arg)) => {
            return format!(
                "unknown option {} for this command (see clconv --help)",
                option(arg)
            );
        }
        (ErrorKind::InvalidValue, Some(arg))
            if matches!(context(ContextKind::InvalidValue), Some("") | None) =>
        {
            return format!("{} needs a value", option(arg));
        }
        (ErrorKind::TooManyValues, Some(arg)) if arg.starts_with("--") => {
            return format!("{} takes no value", option(arg));
        }
        _ => {}
    }
    // Anything else: clap's own first line, without its `error: `.
    let text = e.render().to_string();
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

// ---------------------------------------------------------------------------------------------
// Option values
// ---------------------------------------------------------------------------------------------

/// The one FUNCTION of `run` and `show`.
pub fn one_function(positional: &[String]) -> Result<&str, Usage> {
    match positional {
        [one] => Ok(one),
        [] => Err(Usage("missing FUNCTION (see clconv --help)".into())),
        more => Err(Usage(format!(
            "expected one FUNCTION, got {}: {:?}",
            more.len(),
            more
        ))),
    }
}

/// The optional FILTER of `check` and `list`.
pub fn filter<'a>(command: &str, positional: &'a [String]) -> Result<&'a str, Usage> {
    match positional {
        [] => Ok(""),
        [f] => Ok(f),
        more => Err(Usage(format!(
            "{command} takes at most one FILTER, got {more:?}"
        ))),
    }
}

/// `--layout packed|aligned` (default packed).
pub fn layout(value: Option<&str>) -> Result<Layout, Usage> {
    match value {
        None | Some("packed") => Ok(Layout::Packed),
        Some("aligned") => Ok(Layout::Aligned),
        Some(other) => Err(Usage(format!(
            "--layout is packed or aligned, not {}",
            shown(other)
        ))),
    }
}

/// `--flags FLAGS` (default host).
pub fn flags(value: Option<&str>) -> Result<X64Flags, Usage> {
    let name = value.unwrap_or("host");
    X64Flags::ALL
        .into_iter()
        .find(|f| f.name() == name)
        .ok_or_else(|| {
            Usage(format!(
                "--flags is host, sse2, sse4.1 or avx2, not {name:?}"
            ))
        })
}

/// `--static-mode rte|rtz|rtp|rtn` (default rte).
pub fn static_mode(value: Option<&str>) -> Result<Rounding, Usage> {
    match value {
        None => Ok(Rounding::Rte),
        Some(m) => Rounding::from_name(m)
            .ok_or_else(|| Usage(format!("--static-mode is rte, rtz, rtp or rtn, not {m:?}"))),
    }
}

/// `--tier quick|optimised` (default optimised).
pub fn tier(value: Option<&str>) -> Result<Tier, Usage> {
    match value {
        None | Some("optimised") | Some("optimized") => Ok(Tier::Optimised),
        Some("quick") => Ok(Tier::Quick),
        Some(t) => Err(Usage(format!("--tier is quick or optimised, not {t:?}"))),
    }
}

/// `--tier quick|optimised|both` (default both).
pub fn tiers(value: Option<&str>) -> Result<Vec<Tier>, Usage> {
    match value {
        None | Some("both") => Ok(vec![Tier::Optimised, Tier::Quick]),
        Some(t) => Ok(vec![tier(Some(t)).map_err(|_| {
            Usage(format!("--tier is quick, optimised or both, not {t:?}"))
        })?]),
    }
}

/// `--fp16`.
pub fn ext(fp16: bool) -> Extensions {
    Extensions { fp16 }
}

/// A whole-number option (`--inputs`, `--seed`), `default` when absent.
pub fn number(name: &str, value: Option<&str>, default: u64) -> Result<u64, Usage> {
    match value {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| Usage(format!("{name} takes a whole number, not {v:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
