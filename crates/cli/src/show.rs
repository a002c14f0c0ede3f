//! `clconv show FUNCTION`: a batch kernel's Cranelift IR and machine code.

use crate::args::{self, ShowArgs};
use crate::Usage;
use clconv::Request;
use std::process::ExitCode;

/// `clconv show FUNCTION [--clif] [--asm] ...`, for this machine or another target.
pub fn show(args: &ShowArgs) -> Result<ExitCode, Usage> {
    let ext = args.fp16.ext();
    let request = Request::parse(args::one_function(&args.function)?, ext)?;
    let (target, isa) = match args.target.as_deref() {
        Some(name) => {
            if args.flags.is_some() {
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
            let flags = args.flags.get()?;
            (flags.name().to_string(), clconv::jit::host_isa(flags)?)
        }
    };
    let tier = args::tier(args.tier.as_deref())?;
    let isa = match tier {
        clconv::kernel::Tier::Optimised => isa,
        // The same target with the quick tier's Cranelift settings.
        clconv::kernel::Tier::Quick => match args.target.as_deref() {
            Some(name) => clconv::target::Target::from_name(name)
                .expect("checked above")
                .quick_isa()?,
            None => args.flags.get()?.target().quick_isa()?,
        },
    };
    let c = clconv::kernel::compile(
        &request,
        args::layout(args.layout.as_deref())?,
        args::static_mode(args.static_mode.as_deref())?,
        &*isa,
        tier,
        true,
    )?;
    let (clif, asm) = match (args.clif, args.asm) {
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
