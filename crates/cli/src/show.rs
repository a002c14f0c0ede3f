//! `clconv show FUNCTION`: a batch kernel's Cranelift IR and machine code.

use crate::args::{self, ShowArgs};
use crate::Usage;
use clconv::Request;
use std::process::ExitCode;

/// `clconv show FUNCTION [--clif] [--asm] ...`, for this machine or another target.
pub fn show(args: &ShowArgs) -> Result<ExitCode, Usage> {
    let ext = args.fp16.ext();
    let name = args.function.one()?;
    if clconv::mx::MxRequest::is_mx_name(name) {
        return show_mx(args, name);
    }
    let request = Request::parse(name, ext)?;
    let target = args.target.get()?;
    if target.is_some() && args.flags.is_some() {
        return Err(Usage("give --target or --flags, not both".into()));
    }
    let flags = args.flags.get()?;
    let tier = args::tier(args.tier.as_deref())?;
    let quick = tier == clconv::kernel::Tier::Quick;
    // The quick tier compiles for the same target with its own Cranelift settings.
    let (target, isa) = match target {
        Some(t) if quick => (t.name().to_string(), t.quick_isa()?),
        Some(t) => (t.name().to_string(), t.isa()?),
        None if quick => (flags.name().to_string(), flags.target().quick_isa()?),
        None => (flags.name().to_string(), clconv::jit::host_isa(flags)?),
    };
    // The JIT's kernels (no --target) may call host routines; AOT objects never do.
    let features = if args.target.get()?.is_none() {
        clconv::jit::jit_features(&*isa)?
    } else {
        clconv::table::IsaFeatures::of(&*isa)?
    };
    let c = clconv::kernel::compile_with_features(
        &request,
        args.layout.get()?,
        args.static_mode.get()?,
        &*isa,
        &features,
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
            ";; machine code for {target} ({} bytes; recipe {} from {}:{}{}{})\n{}",
            c.code_size,
            c.row.recipe.name,
            c.row.file,
            c.row.line,
            match c.routine {
                Some(r) => format!("; calls the host routine {} (src/host/f16c.rs)", r.name()),
                None => String::new(),
            },
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

/// `clconv show convert_mx...`: an MX block kernel's IR and machine code (`clconv::mx_kernel`),
/// for this machine's flag set or `--target`. MX kernels have one tier, no layout and no static
/// mode: those options are refused.
fn show_mx(args: &ShowArgs, name: &str) -> Result<ExitCode, Usage> {
    let request = clconv::mx::MxRequest::parse(name).map_err(|e| Usage(e.to_string()))?;
    if args.tier.is_some() {
        return Err(Usage("an MX block kernel has one tier: drop --tier".into()));
    }
    let target = args.target.get()?;
    if target.is_some() && args.flags.is_some() {
        return Err(Usage("give --target or --flags, not both".into()));
    }
    let (target, isa) = match target {
        Some(t) => (t.name().to_string(), t.isa()?),
        None => {
            let flags = args.flags.get()?;
            (flags.name().to_string(), clconv::jit::host_isa(flags)?)
        }
    };
    let d = clconv::mx_kernel::disassemble(&*isa, &request)?;
    let (clif, asm) = match (args.clif, args.asm) {
        (false, false) => (true, true),
        flags => flags,
    };
    if clif {
        out!(
            ";; {request} (blocks: src/mx_kernel.rs around src/lower/{}.rs)\n{}",
            if request.is_nvfp4() {
                "nvfp4_block"
            } else {
                "mx_block"
            },
            d.clif
        );
    }
    if asm {
        out!(
            ";; machine code for {target} ({} bytes)\n{}",
            d.code_size,
            d.asm
        );
    }
    Ok(ExitCode::SUCCESS)
}
