//! Instructions per element of the JIT's kernels on this host (its ISA as `Jit::new()` detects
//! it) for the ten benchmark conversions, beside the report's column for the same architecture
//! (`Target::Aarch64` on aarch64, the AVX2 flag set on x86-64): how `lowering-tables/README.md`
//! compares the JIT's aarch64 code with LLVM's. Counted as REPORT.md counts (one block of the
//! kernel body, loads and stores included, no loop control).
//!
//! ```sh
//! cargo run -p clconv-verify --example host_instructions
//! ```

use clconv::jit::{host_isa, X64Flags};
use clconv::target::Target;
use clconv::{Extensions, Request};
use clconv_verify::report::{instructions_per_element, BENCHMARK_CONVERSIONS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = host_isa(X64Flags::Host)?;
    let column = match host.triple().architecture.to_string().as_str() {
        "aarch64" => Target::Aarch64,
        _ => Target::X86_64Avx2,
    };
    let report = column.isa()?;
    println!(
        "| conversion | JIT on this host ({}) | report column {} |",
        host.triple(),
        column.name()
    );
    println!("|---|---|---|");
    let cell = |r: &Request, isa: &dyn clconv::cranelift_codegen::isa::TargetIsa| {
        instructions_per_element(r, isa)
            .map(|(n, recipe)| format!("{n:.2} `{recipe}`"))
            .unwrap_or_else(|| "does not compile".into())
    };
    for name in BENCHMARK_CONVERSIONS {
        let r = Request::parse(name, Extensions::default())?;
        println!(
            "| `{name}` | {} | {} |",
            cell(&r, &*host),
            cell(&r, &*report)
        );
    }
    Ok(())
}
