//! Every request of the matrix compiles for every x86-64 flag set, in both tiers, with the
//! tables' own rows (no host routine): the code a flag set this CPU cannot run gets compiled
//! here (tests/matrix.rs runs the others, through the JIT, which takes the F16C routines where
//! the CPU has them). The other targets' kernels, both tiers, compile into objects and run
//! under QEMU in crates/verify/tests/cross_isa.rs, so this test leaves them out.

use clconv::target::Target;
use clconv::{kernel, Extensions, Layout, Request, Rounding, ScalarType, Width};

/// The one known gap of the quick tier: without its optimisation passes Cranelift 0.135's x86-64
/// backend cannot lower the `snarrow`/`uunarrow.i64x2` of the double -> char/uchar/short/ushort/int/uint
/// recipes, so the JIT starts those 60 kernels on the optimised tier (`tests/tiering.rs`).
fn no_quick_form(t: Target, r: &Request, tier: kernel::Tier, why: &str) -> bool {
    let narrow = r.dst().elem.is_integer() && r.dst().elem.bits() <= 32;
    tier == kernel::Tier::Quick
        && Target::X86_64.contains(&t)
        && r.src().elem == ScalarType::Double
        && narrow
        && why.contains("narrow.i64x2")
}

#[test]
fn whole_matrix_compiles_for_every_target() {
    let requests = Request::all(Extensions::with_fp16());
    let filter = std::env::var("CLCONV_FILTER").unwrap_or_default();
    let targets: Vec<Target> = Target::X86_64.to_vec();
    eprintln!(
        "compiled here: {}; aarch64, riscv64 (with and without V) and s390x: cross_isa.rs",
        targets
            .iter()
            .map(|t| t.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .map(|&t| {
                let requests = &requests;
                let filter = &filter;
                s.spawn(move || {
                    let isas = [
                        (kernel::Tier::Optimised, t.isa().unwrap()),
                        (kernel::Tier::Quick, t.quick_isa().unwrap()),
                    ];
                    let mut failed = Vec::new();
                    for r in requests
                        .iter()
                        .filter(|r| r.to_string().contains(filter.as_str()))
                    {
                        let three = r.src().width == Width::W3 || r.dst().width == Width::W3;
                        let layouts: &[Layout] = if three {
                            &[Layout::Packed, Layout::Aligned]
                        } else {
                            &[Layout::Packed]
                        };
                        for &layout in layouts {
                            for (tier, isa) in &isas {
                                match kernel::compile(
                                    r,
                                    layout,
                                    Rounding::Rte,
                                    &**isa,
                                    *tier,
                                    false,
                                ) {
                                    Err(e) if !no_quick_form(t, r, *tier, &e.why) => {
                                        failed.push(format!("{} [{}]: {e}", t.name(), tier.name()))
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                    failed
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for f in failures.iter().take(30) {
        eprintln!("{f}");
    }
    assert!(failures.is_empty(), "{} compile failures", failures.len());
}
