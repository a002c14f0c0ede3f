//! `lowering-tables/REPORT.md` is current: regenerating it gives the checked-in text.

#[test]
fn lowering_report_is_current() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../lowering-tables/REPORT.md"
    );
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    let fresh = clconv_verify::report::generate();
    if checked_in != fresh {
        let first = checked_in
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(checked_in.lines().count().min(fresh.lines().count()));
        panic!(
            "lowering-tables/REPORT.md is stale (first difference at line {}:\n  checked in: {:?}\n  generated:  {:?})\nregenerate it with `cargo run -- report --write` and review the diff",
            first + 1,
            checked_in.lines().nth(first).unwrap_or(""),
            fresh.lines().nth(first).unwrap_or("")
        );
    }
}
