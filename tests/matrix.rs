//! The whole matrix through the JIT, compared bit for bit with the reference interpreter:
//! every conversion (half included) and every `as_` pair, at every width and layout, on at least
//! 1,000 inputs per request plus every 8/16-bit source pattern.

use clconv::check::Checker;
use clconv::jit::{Jit, X64Flags};
use clconv::{Extensions, Request, Rounding};

#[test]
fn whole_matrix_matches_the_reference() {
    let ext = Extensions::with_fp16();
    let jit = Jit::with_options(X64Flags::Host, ext, Rounding::Rte).unwrap();
    let mut checker = Checker::new(jit, 1000, 1);
    let requests = Request::all(ext);
    let filter = std::env::var("CLCONV_FILTER").unwrap_or_default();
    let mut failed = Vec::new();
    let mut checked = 0;
    let mut elements = 0usize;
    for r in requests.iter().filter(|r| r.to_string().contains(&filter)) {
        let outcome = checker.check(r).unwrap_or_else(|e| panic!("{r}: {e}"));
        checked += 1;
        elements += outcome.elements;
        // At least 1,000 inputs, or every bit pattern of an 8-bit source (256).
        let distinct = checker.inputs_for(r.src().elem).len();
        let exhaustive = r.src().elem.bits() <= 16 && distinct == 1 << r.src().elem.bits();
        assert!(
            distinct >= 1000 || exhaustive,
            "{r}: only {distinct} inputs"
        );
        assert!(
            outcome.elements >= distinct,
            "{r}: {} elements",
            outcome.elements
        );
        if outcome.mismatch_count > 0 {
            failed.push((r.to_string(), outcome));
        }
    }
    for (name, o) in failed.iter().take(40) {
        eprintln!("{name}: {} mismatches", o.mismatch_count);
        for m in o.mismatches.iter().take(3) {
            eprintln!("  {m}");
        }
    }
    eprintln!(
        "{checked} requests, {elements} elements, {} failed",
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {checked} requests mismatch",
        failed.len()
    );
}
