//! `clconv spirv MODULE.spv [--fp16]`: every conversion instruction and every OpenCL.std half
//! load or store of a SPIR-V module, in module order, one tab-separated line each:
//!
//! ```text
//! pack_rgba<TAB>%25<TAB>convert_uchar4_sat_rte(float4)<TAB>float_to_int.clamp_magic
//! store_rtz<TAB>%20<TAB>vstore_half_rtz(float)<TAB>half.round_native
//! ```
//!
//! the enclosing function (its `OpName`, or `%id`), the instruction's result id, the request it
//! computes (`clconv::spirv`'s mapping; for a half load or store, the OpenCL C builtin) and the
//! recipe the host's lowering table picks for the batch kernel of the conversion it does (what
//! `clconv show` compiles; `convert_half_rtz(float)` for `vstore_half_rtz(float)`). Half
//! conversions are read when the module declares a capability that allows them (`Float16`, a
//! 16-bit storage capability) or with `--fp16`. A module it cannot read, or an instruction that
//! is not one clconv lowers (half in a module that declares no such capability, without
//! `--fp16`; a rounding mode on an integer conversion; a `vload_half` to `double`, ...), is one
//! line on stderr and exit status 2.

use clconv::spirv::Module;
use clconv::{kernel, table, target::Target, Extensions, Rounding};
use std::fmt::Write as _;
use std::path::Path;

/// The output of `clconv spirv PATH [--fp16]`: the lines, or the one-line error message (exit
/// status 2).
pub fn run(path: &Path, fp16: bool) -> Result<String, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let module = Module::parse(&bytes).map_err(|e| format!("{shown}: {e}"))?;
    let ext = if fp16 {
        Extensions::with_fp16()
    } else {
        Extensions::default()
    };
    let found = module.items(ext).map_err(|e| format!("{shown}: {e}"))?;
    let isa = Target::Host
        .isa()
        .map_err(|e| format!("cannot build the host's ISA: {e}"))?;
    let features = table::IsaFeatures::of(&*isa).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for item in found {
        // SPIR-V has no static rounding mode: a conversion to floating point without
        // FPRoundingMode, and a half store without one, round to nearest even.
        let row = features
            .choose(&kernel::key_of(&item.request(), Rounding::Rte))
            .map_err(|e| e.to_string())?;
        let _ = writeln!(
            out,
            "{}\t%{}\t{}\t{}",
            item.function(),
            item.id(),
            item,
            row.recipe.name
        );
    }
    Ok(out)
}
