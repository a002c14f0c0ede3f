//! Every request of the matrix compiles for every target: the x86-64 flag sets, aarch64,
//! riscv64 with and without the V extension, and s390x (cross-compiled, not run).

use clconv::target::Target;
use clconv::{kernel, Extensions, Layout, Request, Rounding, Width};

#[test]
fn whole_matrix_compiles_for_every_target() {
    let requests = Request::all(Extensions::with_fp16());
    let filter = std::env::var("CLCONV_FILTER").unwrap_or_default();
    let targets: Vec<Target> = Target::ALL
        .into_iter()
        .filter(|t| *t != Target::Host)
        .collect();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = targets
            .iter()
            .map(|&t| {
                let requests = &requests;
                let filter = &filter;
                s.spawn(move || {
                    let isa = t.isa().unwrap();
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
                            if let Err(e) = kernel::compile(r, layout, Rounding::Rte, &*isa, false)
                            {
                                failed.push(format!("{}: {e}", t.name()));
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
