//! `clconv`: the command-line tool. See `clconv --help`.
//!
//! Exit status: 0 success, 1 a check found mismatches, 2 bad usage or input (one line on stderr).
//!
//! The command line is parsed by clap ([`args`]); each command is one function: [`demo::demo`],
//! [`run::run`], [`show::show`], [`check::check`], [`report`] and [`list`].

use std::io::Write;
use std::process::ExitCode;

/// `println!` that does not panic when standard output fails (`clconv list | head`): see
/// [`stdout_error`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*).map_err($crate::stdout_error)?
    }};
}

mod args;
mod check;
mod demo;
mod emit;
mod progress;
mod run;
mod show;
mod spirv_cmd;
mod values;

use args::Command;
use clconv::Request;

/// A usage or input error: exit status 2 with this message.
struct Usage(String);

impl<E: std::fmt::Display> From<E> for Usage {
    fn from(e: E) -> Usage {
        Usage(e.to_string())
    }
}

fn main() -> ExitCode {
    // args_os: clap's own message for an argument that is not UTF-8 does not say which.
    let args: Result<Vec<String>, Usage> = std::env::args_os()
        .enumerate()
        .map(|(i, a)| {
            a.into_string()
                .map_err(|a| {
                    Usage(format!(
                        "argument {:?} is not valid UTF-8",
                        a.to_string_lossy()
                    ))
                })
                // The program's own name may be anything.
                .or_else(|e| if i == 0 { Ok("clconv".into()) } else { Err(e) })
        })
        .collect();
    match args.and_then(run_command) {
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

/// Parses the command line and runs the command.
fn run_command(args: Vec<String>) -> Result<ExitCode, Usage> {
    let Some(cli) = args::parse(args)? else {
        // --help, --version: printed.
        return Ok(ExitCode::SUCCESS);
    };
    match cli.command {
        None => Err(Usage(
            "no command: try `clconv demo` or `clconv --help`".into(),
        )),
        Some(Command::Demo(a)) => demo::demo(&a),
        Some(Command::Run(a)) => run::run(&a),
        Some(Command::Show(a)) => show::show(&a),
        Some(Command::Check(a)) => check::check(&a),
        Some(Command::Report(a)) => report(&a),
        Some(Command::List(a)) => list(&a),
        Some(Command::Spirv(a)) => {
            let text = spirv_cmd::run(&a.module, a.fp16).map_err(Usage)?;
            if !text.is_empty() {
                out!("{}", text.trim_end_matches('\n'));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Emit(a)) => emit::emit(&a),
    }
}

/// A failed write to standard output. A reader that went away (a broken pipe) ends the program
/// quietly with status 0, as a filter would; any other failure is an error.
fn stdout_error(e: std::io::Error) -> Usage {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    Usage(format!("cannot write standard output: {e}"))
}

/// `clconv report [--write]`: the lowering report, printed or written to
/// lowering-tables/REPORT.md.
fn report(args: &args::ReportArgs) -> Result<ExitCode, Usage> {
    if !args.extra.is_empty() {
        return Err(Usage("report takes no arguments, only --write".into()));
    }
    let text = clconv_verify::report::generate();
    if args.write {
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

/// `clconv list [FILTER] [--fp16]`: every request whose name contains FILTER; with a language
/// prefix (`wgsl:`, `wgsl:i32`), that language's spellings and the request each one is.
fn list(args: &args::ListArgs) -> Result<ExitCode, Usage> {
    let filter = args::filter("list", &args.filter)?;
    if let Some((prefix, _)) = filter.split_once(':') {
        let language = clconv::languages::Language::from_prefix(&prefix.to_ascii_lowercase())
            .ok_or_else(|| {
                Usage(format!(
                    "unknown language {}: the languages are wgsl:, hlsl:, glsl:, msl:, rust:, wasm:, ptx: and cuda:",
                    shown(prefix)
                ))
            })?;
        for (spelling, request) in language.spellings() {
            if spelling.contains(filter) {
                out!("{spelling}\t{request}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    // Every request a name spells, then the languages' chains (which print as the OpenCL C
    // expression they evaluate): everything `run` and `compile` accept by name.
    let ext = args.fp16.ext();
    let chains = clconv::languages::chains()
        .into_iter()
        .filter(|r| ext.fp16 || !r.uses_half());
    for r in Request::every_named(ext).into_iter().chain(chains) {
        let name = r.to_string();
        if name.contains(filter) {
            out!("{name}\t{}", r.mangled());
        }
    }
    // The block requests (clconv::mx), which have no mangled name.
    for r in clconv::mx::MxRequest::all() {
        let name = r.to_string();
        if name.contains(filter) {
            if r.is_nvfp4() {
                out!("{name}\tNVFP4 block: 16 values, one E4M3 scale, a tensor scale");
            } else {
                out!("{name}\tMX block: 32 values, one E8M0 scale");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
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
