//! `clconv emit FUNCTION... --target T -o OUT.o [--header OUT.h]`: conversions (and MX or
//! NVFP4 block requests) compiled ahead of time into an object file with C entry points
//! ([`clconv::aot`]).

use crate::args::{self, EmitArgs};
use crate::{shown, Usage};
use clconv::aot::ObjectBuilder;
use clconv::kernel::Tier;
use clconv::mx::MxRequest;
use clconv::{Layout, Request};
use std::process::ExitCode;

/// Builds the object (and header) and writes them; prints one line per entry point on
/// standard output: the symbol and its request.
pub fn emit(args: &EmitArgs) -> Result<ExitCode, Usage> {
    if args.function.function.is_empty() {
        return Err(Usage(
            "missing FUNCTION: emit takes one or more conversions (see clconv help emit)".into(),
        ));
    }
    let target = args.target.get()?.ok_or_else(|| {
        Usage(format!(
            "emit needs --target T, the machine the object is for: one of {}",
            args::target_names()
        ))
    })?;
    let output = args
        .output
        .as_deref()
        .ok_or_else(|| Usage("emit needs -o OUT.o, the object file to write".into()))?;
    let ext = args.fp16.ext();
    let layout = args.layout.get()?;
    let tiers = match args.tier.as_deref() {
        None => vec![Tier::Optimised],
        Some(t) => args::tiers(Some(t))?,
    };
    // Conversions, and the block requests (`clconv list mx`), which get one entry point each
    // (their kernels have one tier, the optimised one; the layout does not apply).
    let mut requests = Vec::new();
    let mut blocks = Vec::new();
    for f in &args.function.function {
        if MxRequest::is_mx_name(f) {
            let block = MxRequest::parse(f).map_err(|e| Usage(format!("{}: {e}", shown(f))))?;
            if !tiers.contains(&Tier::Optimised) {
                return Err(Usage(format!(
                    "{}: block entry points are compiled in the optimised tier only (drop --tier)",
                    shown(f)
                )));
            }
            blocks.push(block);
        } else {
            requests.push(Request::parse(f, ext).map_err(|e| Usage(format!("{}: {e}", shown(f))))?);
        }
    }
    let mut object = ObjectBuilder::new(target)?;
    if args.without_rounding_control {
        object = object.without_rounding_control();
    }
    let mut added = Vec::new();
    for request in &requests {
        for &tier in &tiers {
            let symbol = match layout {
                Layout::Packed => object.add(request, tier)?,
                Layout::Aligned => object.add_aligned(request, tier)?,
            };
            added.push((symbol, *request));
        }
    }
    let mut added_blocks = Vec::new();
    for block in &blocks {
        added_blocks.push((object.add_blocks(block)?, *block));
    }
    let out = object.finish()?;
    crate::write_raw(output, &out.object)?;
    if let Some(path) = args.header.as_deref() {
        if path == "-" {
            out!("{}", out.header.trim_end_matches('\n'));
        } else {
            std::fs::write(path, &out.header)
                .map_err(|e| Usage(format!("cannot write {path}: {e}")))?;
        }
    }
    if output != "-" && args.header.as_deref() != Some("-") {
        for (symbol, request) in added {
            out!("{symbol}\t{request}");
        }
        for (symbol, request) in added_blocks {
            out!("{symbol}\t{request}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
