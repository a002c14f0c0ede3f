//! `clconv`: the command-line tool. See `clconv --help`.
//!
//! Exit status: 0 success, 1 a check found mismatches, 2 bad usage or input (one line on stderr).

use clconv::jit::{Jit, Tier, Tiering, X64Flags};
use clconv::{reference, Extensions, Layout, Request, Rounding, ScalarType};
use clconv_verify::check::Checker;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

const USAGE: &str = "\
clconv: OpenCL C conversions (convert_*, as_*) lowered to Cranelift and JIT-compiled

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
  clconv show FUNCTION [--clif] [--asm] [--layout packed|aligned] [--flags FLAGS | --target T]
                       [--fp16] [--static-mode rte|rtz|rtp|rtn] [--tier optimised|quick]
      Print the batch kernel's Cranelift IR (--clif) and/or machine code (--asm; default both),
      for this machine or, with --target, for another: x86_64-sse2, x86_64-sse4.1,
      x86_64-avx2, x86_64-avx512, aarch64, riscv64, riscv64-v, s390x.
  clconv check [FILTER] [--inputs N] [--seed S] [--flags FLAGS] [--tier optimised|quick|both]
      Differential check of every request whose name contains FILTER (default: the whole matrix,
      half included) against the reference, on both JIT tiers unless --tier picks one. Ends
      with the line `N passed, N failed`.
  clconv check --exhaustive [FILTER] [--state FILE] [--inputs N] [--reference-all] [--seed S]
               [--flags FLAGS] [--tier optimised|quick]
      Every input (2^32 for float, int and uint) of every conversion from a source of at most 32
      bits whose name contains FILTER (with `*`, matches it whole: 'convert_int*_rte(float*)'),
      through the JIT, against an independent fast path and the reference (see VERIFICATION.md);
      all cores, progress and time left on stderr, one line per finished run. --state FILE skips
      the runs FILE lists as passed and appends each result to it; --inputs N takes only the
      first N inputs; --reference-all checks every input with the reference (slow).
  clconv report [--write]
      The lowering report: instructions per element and recipe, per conversion and target
      (--write: regenerate lowering-tables/REPORT.md).
  clconv list [FILTER] [--fp16]
      Print every request (canonical and mangled name) whose name contains FILTER.

FUNCTION is any spelling: convert_uchar4_sat_rte(float4), _Z20convert_int4_sat_rteDv4_f,
as_float4(int4). FLAGS is an x86-64 flag set this machine runs: host (default), sse2, sse4.1, avx2, avx512.
half needs --fp16 (the cl_khr_fp16 extension) except in `check`, which covers the whole matrix.
";

/// A usage or input error: exit status 2 with this message.
struct Usage(String);

impl<E: std::fmt::Display> From<E> for Usage {
    fn from(e: E) -> Usage {
        Usage(e.to_string())
    }
}

fn main() -> ExitCode {
    // args_os: std::env::args() panics on an argument that is not UTF-8.
    let args: Result<Vec<String>, Usage> = std::env::args_os()
        .skip(1)
        .map(|a| {
            a.into_string().map_err(|a| {
                Usage(format!(
                    "argument {:?} is not valid UTF-8",
                    a.to_string_lossy()
                ))
            })
        })
        .collect();
    match args.and_then(|args| run_command(&args)) {
        Ok(code) => code,
        Err(Usage(msg)) => {
            // One line, and a readable one even if some message echoes a huge argument.
            let mut line = msg.replace(['\n', '\r'], " ");
            if let Some((cut, _)) = line.char_indices().nth(600) {
                line.truncate(cut);
                line.push_str("...");
            }
            let _ = writeln!(std::io::stderr(), "clconv: error: {line}");
            ExitCode::from(2)
        }
    }
}

/// `println!` that does not panic when standard output fails (`clconv list | head`): see
/// [`stdout_error`].
macro_rules! out {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout().lock(), $($arg)*).map_err(stdout_error)?
    };
}

/// A failed write to standard output. A reader that went away (a broken pipe) ends the program
/// quietly with status 0, as a filter would; any other failure is an error.
fn stdout_error(e: std::io::Error) -> Usage {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    Usage(format!("cannot write standard output: {e}"))
}

/// Parsed `--name value` options and positional arguments.
struct Args {
    positional: Vec<String>,
    options: Vec<(String, Option<String>)>,
}

const VALUE_OPTIONS: &[&str] = &[
    "--input",
    "--input2",
    "--input3",
    "--values2",
    "--values3",
    "--output",
    "--values",
    "--layout",
    "--flags",
    "--inputs",
    "--seed",
    "--static-mode",
    "--target",
    "--state",
    "--tier",
];

impl Args {
    fn parse(args: &[String], allowed: &[&str]) -> Result<Args, Usage> {
        let mut positional = Vec::new();
        let mut options = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a.starts_with("--") {
                let (name, inline) = match a.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (a.clone(), None),
                };
                if !allowed.contains(&name.as_str()) {
                    return Err(Usage(format!(
                        "unknown option {name} for this command (see clconv --help)"
                    )));
                }
                if VALUE_OPTIONS.contains(&name.as_str()) {
                    let v = match inline {
                        Some(v) => v,
                        None => it
                            .next()
                            .cloned()
                            .ok_or_else(|| Usage(format!("{name} needs a value")))?,
                    };
                    options.push((name, Some(v)));
                } else {
                    if inline.is_some() {
                        return Err(Usage(format!("{name} takes no value")));
                    }
                    options.push((name, None));
                }
            } else {
                positional.push(a.clone());
            }
        }
        Ok(Args {
            positional,
            options,
        })
    }

    fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    fn one_positional(&self, what: &str) -> Result<&str, Usage> {
        match self.positional.as_slice() {
            [one] => Ok(one),
            [] => Err(Usage(format!("missing {what} (see clconv --help)"))),
            more => Err(Usage(format!(
                "expected one {what}, got {}: {:?}",
                more.len(),
                more
            ))),
        }
    }

    fn layout(&self) -> Result<Layout, Usage> {
        match self.value("--layout") {
            None | Some("packed") => Ok(Layout::Packed),
            Some("aligned") => Ok(Layout::Aligned),
            Some(other) => Err(Usage(format!(
                "--layout is packed or aligned, not {}",
                shown(other)
            ))),
        }
    }

    fn flags(&self) -> Result<X64Flags, Usage> {
        let name = self.value("--flags").unwrap_or("host");
        X64Flags::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                Usage(format!(
                    "--flags is host, sse2, sse4.1 or avx2, not {name:?}"
                ))
            })
    }

    fn static_mode(&self) -> Result<Rounding, Usage> {
        match self.value("--static-mode") {
            None => Ok(Rounding::Rte),
            Some(m) => Rounding::from_name(m)
                .ok_or_else(|| Usage(format!("--static-mode is rte, rtz, rtp or rtn, not {m:?}"))),
        }
    }

    /// `--tier quick|optimised` (default optimised).
    fn tier(&self) -> Result<clconv::kernel::Tier, Usage> {
        use clconv::kernel::Tier;
        match self.value("--tier") {
            None | Some("optimised") | Some("optimized") => Ok(Tier::Optimised),
            Some("quick") => Ok(Tier::Quick),
            Some(t) => Err(Usage(format!("--tier is quick or optimised, not {t:?}"))),
        }
    }

    /// `--tier quick|optimised|both` (default both).
    fn tiers(&self) -> Result<Vec<clconv::kernel::Tier>, Usage> {
        use clconv::kernel::Tier;
        match self.value("--tier") {
            None | Some("both") => Ok(vec![Tier::Optimised, Tier::Quick]),
            Some(_) => Ok(vec![self.tier().map_err(|_| {
                Usage(format!(
                    "--tier is quick, optimised or both, not {:?}",
                    self.value("--tier").unwrap_or_default()
                ))
            })?]),
        }
    }

    fn ext(&self) -> Extensions {
        Extensions {
            fp16: self.flag("--fp16"),
        }
    }

    fn number(&self, name: &str, default: u64) -> Result<u64, Usage> {
        match self.value(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| Usage(format!("{name} takes a whole number, not {v:?}"))),
        }
    }
}

fn run_command(args: &[String]) -> Result<ExitCode, Usage> {
    let Some(command) = args.first() else {
        return Err(Usage(
            "no command: try `clconv demo` or `clconv --help`".into(),
        ));
    };
    let rest = &args[1..];
    match command.as_str() {
        "--help" | "-h" | "help" => {
            write!(std::io::stdout().lock(), "{USAGE}").map_err(stdout_error)?;
            Ok(ExitCode::SUCCESS)
        }
        "demo" => {
            Args::parse(rest, &[])?
                .positional
                .is_empty()
                .then_some(())
                .ok_or_else(|| Usage("demo takes no arguments".into()))?;
            demo()
        }
        "run" if is_arith_run(rest) => run_arith(&Args::parse(
            rest,
            &[
                "--input",
                "--input2",
                "--input3",
                "--values",
                "--values2",
                "--values3",
                "--output",
                "--layout",
                "--reference",
                "--static-mode",
            ],
        )?),
        "run" => run(&Args::parse(
            rest,
            &[
                "--input",
                "--output",
                "--values",
                "--layout",
                "--reference",
                "--fp16",
                "--static-mode",
            ],
        )?),
        "show" => show(&Args::parse(
            rest,
            &[
                "--clif",
                "--asm",
                "--layout",
                "--flags",
                "--target",
                "--fp16",
                "--static-mode",
                "--tier",
            ],
        )?),
        "report" => report(&Args::parse(rest, &["--write"])?),
        "check" => check(&Args::parse(
            rest,
            &[
                "--inputs",
                "--seed",
                "--flags",
                "--exhaustive",
                "--state",
                "--reference-all",
                "--tier",
            ],
        )?),
        "list" => list(&Args::parse(rest, &["--fp16"])?),
        other => Err(Usage(format!(
            "unknown command {}: the commands are demo, run, show, check, list and report",
            shown(other)
        ))),
    }
}

fn run(args: &Args) -> Result<ExitCode, Usage> {
    let ext = args.ext();
    let request = Request::parse(args.one_positional("FUNCTION")?, ext)?;
    let layout = args.layout()?;
    let static_mode = args.static_mode()?;
    let src: Vec<u8> = match (args.value("--input"), args.value("--values")) {
        (Some(_), Some(_)) => return Err(Usage("give --input or --values, not both".into())),
        (Some(path), None) if path != "-" => {
            std::fs::read(path).map_err(|e| Usage(format!("cannot read {path}: {e}")))?
        }
        (_, Some(text)) => parse_values(text, request.src().elem)?,
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| Usage(format!("cannot read standard input: {e}")))?;
            buf
        }
    };
    let vectors =
        clconv::buffer::vector_count(&request, layout, src.len(), 0).or_else(|e| match e {
            clconv::buffer::BufferError::DestinationSize { vectors, .. } => Ok(vectors),
            other => Err(other),
        })?;
    let mut dst = vec![0u8; vectors * clconv::buffer::bytes_per_vector(request.dst(), layout)];
    if args.flag("--reference") {
        reference::evaluate_with_mode(&request, layout, static_mode, &src, &mut dst)?;
    } else {
        let jit = Jit::with_options(X64Flags::Host, ext, static_mode)?;
        jit.compile_request(&request)?
            .run_bytes(layout, &src, &mut dst)?;
    }
    match args.value("--output") {
        Some(path) => write_raw(path, &dst)?,
        None => {
            let stride = layout.stride(request.dst().width);
            for v in 0..vectors {
                let per = stride * request.dst().elem.bytes();
                out!(
                    "{}",
                    format_vector(
                        &dst[v * per..(v + 1) * per],
                        request.dst().elem,
                        request.dst().lanes()
                    )
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// True when `clconv run`'s FUNCTION is an arithmetic request (`mul_rtz(float4)`, see
/// `clconv::arith`) rather than a conversion.
fn is_arith_run(rest: &[String]) -> bool {
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        if a.starts_with("--") {
            if !a.contains('=') && VALUE_OPTIONS.contains(&a.as_str()) {
                it.next();
            }
            continue;
        }
        return clconv::arith::ArithRequest::is_arith_name(a);
    }
    false
}

/// `clconv run OP(TYPE) ...`: an arithmetic batch through the JIT (or the reference).
fn run_arith(args: &Args) -> Result<ExitCode, Usage> {
    let request = clconv::arith::ArithRequest::parse(args.one_positional("FUNCTION")?)?;
    let layout = args.layout()?;
    let static_mode = args.static_mode()?;
    let elem = request.elem().scalar_type();
    let arity = request.op().arity();
    let sources = [
        ("--input", "--values"),
        ("--input2", "--values2"),
        ("--input3", "--values3"),
    ];
    let mut inputs = Vec::new();
    for (k, (input, values)) in sources.into_iter().enumerate() {
        let given = (args.value(input), args.value(values));
        if k >= arity {
            if given != (None, None) {
                return Err(Usage(format!(
                    "{request} takes {arity} operand(s): drop {input}/{values}"
                )));
            }
            continue;
        }
        inputs.push(match given {
            (Some(path), None) => {
                std::fs::read(path).map_err(|e| Usage(format!("cannot read {path}: {e}")))?
            }
            (None, Some(text)) => parse_values(text, elem)?,
            (Some(_), Some(_)) => return Err(Usage(format!("give {input} or {values}, not both"))),
            (None, None) => {
                return Err(Usage(format!(
                    "{request} needs {} from {input} or {values}",
                    clconv::arith::operand_name(k)
                )))
            }
        });
    }
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let mut dst = vec![0u8; inputs[0].len()];
    if args.flag("--reference") {
        clconv::reference::arith::evaluate(&request, layout, static_mode, &refs, &mut dst)?;
    } else {
        let jit = Jit::with_options(X64Flags::Host, Extensions::default(), static_mode)?;
        jit.compile_arith_request(&request)?
            .run_bytes(layout, &refs, &mut dst)?;
    }
    match args.value("--output") {
        Some(path) => write_raw(path, &dst)?,
        None => {
            let per = request.bytes_per_vector(layout);
            for v in dst.chunks(per) {
                out!("{}", format_vector(v, elem, request.width().lanes()));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Parses comma-separated numbers (or 0x bit patterns) into raw elements of type `t`.
fn parse_values(text: &str, t: ScalarType) -> Result<Vec<u8>, Usage> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bits = parse_value(item, t).ok_or_else(|| {
            Usage(format!(
                "{} is not a {t} value (write a number, or 0x followed by the bit pattern)",
                shown(item)
            ))
        })?;
        out.extend_from_slice(&bits.to_le_bytes()[..t.bytes()]);
    }
    Ok(out)
}

fn parse_value(item: &str, t: ScalarType) -> Option<u64> {
    let mask = if t.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    };
    if let Some(hex) = item.strip_prefix("0x").or_else(|| item.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).ok()?;
        return (v & !mask == 0).then_some(v);
    }
    match t {
        ScalarType::Float => item.parse::<f32>().ok().map(|f| f.to_bits() as u64),
        ScalarType::Double => item.parse::<f64>().ok().map(f64::to_bits),
        ScalarType::Half => {
            // Decimal -> double (Rust's parser rounds correctly), then the reference's exact
            // double -> half rounding: one rounding would be better, but inputs given in
            // decimal are rarely halfway cases; use 0x bit patterns for exact values.
            let d = item.parse::<f64>().ok()?;
            let c = clconv::Conversion::new(
                clconv::VectorType::scalar(ScalarType::Double),
                clconv::VectorType::scalar(ScalarType::Half),
                false,
                Some(Rounding::Rte),
                Extensions::with_fp16(),
            )
            .ok()?;
            Some(reference::convert_element(&c, Rounding::Rte, d.to_bits()).bits)
        }
        _ => {
            let v: i128 = item.parse().ok()?;
            let (lo, hi) = (t.int_min()?, t.int_max()?);
            (lo..=hi).contains(&v).then_some(v as u64 & mask)
        }
    }
}

fn format_vector(bytes: &[u8], t: ScalarType, lanes: usize) -> String {
    let items: Vec<String> = (0..lanes)
        .map(|i| format_element(&bytes[i * t.bytes()..(i + 1) * t.bytes()], t))
        .collect();
    if lanes == 1 {
        items[0].clone()
    } else {
        format!("({})", items.join(", "))
    }
}

fn format_element(bytes: &[u8], t: ScalarType) -> String {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    let bits = u64::from_le_bytes(b);
    match t {
        ScalarType::Float => {
            let f = f32::from_bits(bits as u32);
            // Shortest round-trip text, except for large integers where it hides digits
            // (2^31 would print as 2147483600).
            if f.is_finite() && f.abs() >= 16777216.0 && f.abs() < 1.8e19 {
                format!("{:?}", f as f64)
            } else {
                format!("{f:?}")
            }
        }
        ScalarType::Double => format!("{:?}", f64::from_bits(bits)),
        ScalarType::Half => {
            let c = clconv::Conversion::new(
                clconv::VectorType::scalar(ScalarType::Half),
                clconv::VectorType::scalar(ScalarType::Double),
                false,
                None,
                Extensions::with_fp16(),
            )
            .expect("half -> double is legal with fp16");
            let d = reference::convert_element(&c, Rounding::Rte, bits).bits;
            format!("{:?}", f64::from_bits(d))
        }
        t if t.is_signed_integer() => {
            let shift = 64 - t.bits();
            format!("{}", ((bits << shift) as i64) >> shift)
        }
        _ => format!("{bits}"),
    }
}

fn show(args: &Args) -> Result<ExitCode, Usage> {
    let ext = args.ext();
    let request = Request::parse(args.one_positional("FUNCTION")?, ext)?;
    let (target, isa) = match args.value("--target") {
        Some(name) => {
            if args.value("--flags").is_some() {
                return Err(Usage("give --target or --flags, not both".into()));
            }
            let target = clconv::target::Target::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = clconv::target::Target::ALL
                    .iter()
                    .map(|t| t.name())
                    .collect();
                Usage(format!(
                    "unknown target {name:?}: one of {}",
                    names.join(", ")
                ))
            })?;
            (target.name().to_string(), target.isa()?)
        }
        None => {
            let flags = args.flags()?;
            (flags.name().to_string(), clconv::jit::host_isa(flags)?)
        }
    };
    let tier = args.tier()?;
    let isa = match tier {
        clconv::kernel::Tier::Optimised => isa,
        // The same target with the quick tier's Cranelift settings.
        clconv::kernel::Tier::Quick => match args.value("--target") {
            Some(name) => clconv::target::Target::from_name(name)
                .expect("checked above")
                .quick_isa()?,
            None => args.flags()?.target().quick_isa()?,
        },
    };
    let c = clconv::kernel::compile(
        &request,
        args.layout()?,
        args.static_mode()?,
        &*isa,
        tier,
        true,
    )?;
    let (clif, asm) = match (args.flag("--clif"), args.flag("--asm")) {
        (false, false) => (true, true),
        flags => flags,
    };
    if clif {
        out!(";; {request} ({})\n{}", request.mangled(), c.clif);
    }
    if asm {
        out!(
            ";; machine code for {target} ({} bytes; recipe {} from {}:{}{})\n{}",
            c.code_size,
            c.row.recipe.name,
            c.row.file,
            c.row.line,
            if c.rounding_control == clconv::Rounding::Rte {
                String::new()
            } else {
                format!(
                    "; runs with the rounding control set to {}",
                    c.rounding_control
                )
            },
            c.asm.unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `clconv report [--write]`: the lowering report, printed or written to
/// lowering-tables/REPORT.md.
fn report(args: &Args) -> Result<ExitCode, Usage> {
    if !args.positional.is_empty() {
        return Err(Usage("report takes no arguments, only --write".into()));
    }
    let text = clconv_verify::report::generate();
    if args.flag("--write") {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../lowering-tables/REPORT.md"
        );
        std::fs::write(path, &text).map_err(|e| Usage(format!("cannot write {path}: {e}")))?;
        eprintln!("wrote {path}");
    } else {
        out!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

fn list(args: &Args) -> Result<ExitCode, Usage> {
    let filter = match args.positional.as_slice() {
        [] => "",
        [f] => f.as_str(),
        more => {
            return Err(Usage(format!(
                "list takes at most one FILTER, got {more:?}"
            )))
        }
    };
    for r in Request::all(args.ext()) {
        let name = r.to_string();
        if name.contains(filter) {
            out!("{name}\t{}", r.mangled());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The most random inputs per source type `check` takes: beyond this the input tables alone
/// need gigabytes.
const MAX_INPUTS: u64 = 1_000_000;

fn check(args: &Args) -> Result<ExitCode, Usage> {
    if args.flag("--exhaustive") {
        return check_exhaustive(args);
    }
    if args.value("--state").is_some() || args.flag("--reference-all") {
        return Err(Usage(
            "--state and --reference-all go with --exhaustive".into(),
        ));
    }
    let filter = match args.positional.as_slice() {
        [] => String::new(),
        [f] => f.clone(),
        more => {
            return Err(Usage(format!(
                "check takes at most one FILTER, got {more:?}"
            )))
        }
    };
    let random = args.number("--inputs", 1000)?;
    if random > MAX_INPUTS {
        return Err(Usage(format!(
            "--inputs is at most {MAX_INPUTS} (random inputs per source type), not {random}"
        )));
    }
    let random = random as usize;
    let seed = args.number("--seed", 1)?;
    let ext = Extensions::with_fp16();
    // One JIT per tier, each compiling only that tier's code, so each check is of one tier.
    let mut jits = Vec::new();
    for tier in args.tiers()? {
        let jit = Jit::with_options(args.flags()?, ext, Rounding::Rte)?;
        jit.set_tiering(Tiering::only(tier));
        jits.push((tier, jit));
    }
    let requests: Vec<Request> = Request::all(ext)
        .into_iter()
        .filter(|r| r.to_string().contains(&filter) || r.mangled().contains(&filter))
        .collect();
    if requests.is_empty() {
        return Err(Usage(format!(
            "no request's name contains {} (try `clconv list`)",
            shown(&filter)
        )));
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(requests.len());
    let progress = Progress::new(requests.len());
    let results: Vec<(usize, usize, Vec<String>, Option<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let jits = &jits;
                let requests = &requests;
                let progress = &progress;
                s.spawn(move || {
                    let mut checkers: Vec<(Tier, Checker)> = jits
                        .iter()
                        .map(|(tier, jit)| (*tier, Checker::new(jit.clone(), random, seed)))
                        .collect();
                    let (mut passed, mut failed, mut reports) = (0, 0, Vec::new());
                    for r in requests.iter().skip(t).step_by(threads) {
                        let mut ok = true;
                        for (tier, checker) in &mut checkers {
                            let tier = tier.name();
                            match checker.check(r) {
                                Ok(o) if o.mismatch_count == 0 => {}
                                Ok(o) => {
                                    ok = false;
                                    reports.push(format!(
                                        "FAILED {r} [{tier} tier]: {} mismatches",
                                        o.mismatch_count
                                    ));
                                    reports.extend(o.mismatches.iter().map(|m| format!("  {m}")));
                                }
                                Err(e) => {
                                    ok = false;
                                    reports.push(format!("FAILED {r} [{tier} tier]: {e}"));
                                }
                            }
                        }
                        if ok {
                            passed += 1;
                        } else {
                            failed += 1;
                        }
                        progress.tick(r);
                    }
                    (passed, failed, reports, None)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or((0, 1, vec![], Some("a checker thread panicked".into())))
            })
            .collect()
    });
    progress.finish();
    let (mut passed, mut failed) = (0, 0);
    for (p, f, reports, panic) in results {
        passed += p;
        failed += f;
        for line in reports {
            out!("{line}");
        }
        if let Some(p) = panic {
            out!("FAILED: {p}");
        }
    }
    out!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `clconv check --exhaustive`: see `clconv_verify::exhaustive`.
fn check_exhaustive(args: &Args) -> Result<ExitCode, Usage> {
    let filter = match args.positional.as_slice() {
        [] => String::new(),
        [f] => f.clone(),
        more => {
            return Err(Usage(format!(
                "check takes at most one FILTER, got {more:?}"
            )))
        }
    };
    let inputs = match args.value("--inputs") {
        None => None,
        Some(_) => Some(args.number("--inputs", 0)?),
    };
    let options = clconv_verify::exhaustive::Options {
        filter,
        flags: args.flags()?,
        tier: args.tier()?,
        inputs,
        seed: args.number("--seed", 1)?,
        reference_all: args.flag("--reference-all"),
        threads: 0,
        state: args.value("--state").map(Into::into),
        progress: true,
    };
    let mut stdout = std::io::stdout().lock();
    let summary = clconv_verify::exhaustive::run(&options, &mut |r| {
        writeln!(stdout, "{r}")?;
        stdout.flush()
    })
    .map_err(|e| match e {
        clconv_verify::exhaustive::ExhaustiveError::Output(io) => stdout_error(io),
        other => Usage(other.to_string()),
    })?;
    writeln!(stdout, "{summary}").map_err(stdout_error)?;
    Ok(if summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A progress bar on stderr: redrawn in place on a terminal, a line per 10% otherwise.
struct Progress {
    total: usize,
    done: std::sync::atomic::AtomicUsize,
    tty: bool,
    start: std::time::Instant,
}

impl Progress {
    fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0.into(),
            tty: std::io::stderr().is_terminal(),
            start: std::time::Instant::now(),
        }
    }

    fn tick(&self, r: &Request) {
        let done = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let width = 30;
        let filled = done * width / self.total;
        let line = format!(
            "[{}{}] {done}/{} {:.0}s {r}",
            "#".repeat(filled),
            " ".repeat(width - filled),
            self.total,
            self.start.elapsed().as_secs_f64()
        );
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
        } else if done * 10 / self.total != (done - 1) * 10 / self.total {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    fn finish(&self) {
        if self.tty {
            let _ = writeln!(std::io::stderr());
        }
    }
}

fn demo() -> Result<ExitCode, Usage> {
    let ext = Extensions::with_fp16();
    let jit = Jit::with_options(X64Flags::Host, ext, Rounding::Rte)?;
    let cases: &[(&str, &str, &str)] = &[
        (
            "convert_uchar4_sat_rte(float4)",
            "-5.0, 254.5, 254.6, 1.2e9",
            "saturate to [0, 255], round half to even",
        ),
        (
            "convert_int4_rte(float4)",
            "0.5, 1.5, -2.5, 0x3effffff",
            "ties to even; 0.5 - 1ulp is 0, unlike (int)(x + 0.5f)",
        ),
        (
            "convert_int4(float4)",
            "nan, 3e9, -3e9, -7.9",
            "rtz; NaN and out of range: clconv defines them as _sat",
        ),
        (
            "convert_float4_rtp(int4)",
            "16777217, -16777217, 2147483647, 1",
            "inexact ints round up to the next float",
        ),
        (
            "convert_float4_rtz(int4)",
            "16777217, -16777217, 2147483647, 1",
            "... or toward zero",
        ),
        (
            "convert_char4_sat(short4)",
            "200, -200, 127, -128",
            "clamp to [-128, 127]",
        ),
        (
            "convert_ushort4_sat(int4)",
            "-1, 70000, 65535, 42",
            "negatives clamp to 0",
        ),
        (
            "convert_float2_rtz(double2)",
            "1e300, -1e-300",
            "rtz: FLT_MAX, not inf; -0.0 stays negative",
        ),
        (
            "convert_half4_rtp(float4)",
            "65520, 1e-8, -1e-8, 0.1",
            "half: overflow and subnormals by the mode",
        ),
        (
            "as_int4(float4)",
            "1.0, -0.0, nan, inf",
            "reinterpretation: the bits unchanged",
        ),
    ];
    out!(
        "{:<32} {:<36} {:<40} {:<40}",
        "function",
        "input",
        "JIT",
        "reference"
    );
    let mut all_agree = true;
    for (name, values, why) in cases {
        let request = Request::parse(name, ext)?;
        let src = parse_values(values, request.src().elem)?;
        let per = clconv::buffer::bytes_per_vector(request.dst(), Layout::Packed);
        let mut got = vec![0u8; per];
        let mut want = vec![0u8; per];
        jit.compile_request(&request)?
            .run_bytes(Layout::Packed, &src, &mut got)?;
        reference::evaluate(&request, Layout::Packed, &src, &mut want)?;
        let shown_in = format_vector(&src, request.src().elem, request.src().lanes());
        let shown_got = format_vector(&got, request.dst().elem, request.dst().lanes());
        let shown_want = format_vector(&want, request.dst().elem, request.dst().lanes());
        let mark = if got == want { "" } else { "  MISMATCH" };
        all_agree &= got == want;
        out!("{name:<32} {shown_in:<36} {shown_got:<40} {shown_want:<40}{mark}");
        out!("{:<32} ^ {why}", "");
    }
    out!(
        "\n{} kernels JIT-compiled for this machine; {}",
        jit.cached_kernels(),
        if all_agree {
            "every result equals the reference interpreter's, bit for bit."
        } else {
            "SOME RESULTS DIFFER FROM THE REFERENCE."
        }
    );
    Ok(if all_agree {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// An argument as an error message shows it: quoted, escaped, and cut to 80 characters, so a
/// huge or binary argument still gives a one-line message.
fn shown(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        None => format!("{text:?}"),
        Some((end, _)) => format!("{:?}... ({} bytes)", &text[..end], text.len()),
    }
}

/// Writes raw output bytes to `path`, or to standard output for `-`.
fn write_raw(path: &str, bytes: &[u8]) -> Result<(), Usage> {
    if path != "-" {
        return std::fs::write(path, bytes).map_err(|e| Usage(format!("cannot write {path}: {e}")));
    }
    // Flush here: the flush at exit ignores its error, and raw bytes (no newline) would
    // otherwise wait in the buffer and vanish on a full device.
    let mut stdout = std::io::stdout();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .map_err(stdout_error)
}
