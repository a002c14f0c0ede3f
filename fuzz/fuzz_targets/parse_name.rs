//! The name parser never panics, gives bounded one-line errors, and whatever it accepts prints
//! back to text that parses to the same request (see `clconv_verify::fuzz_targets::parse_name`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(finding) = clconv_verify::fuzz_targets::parse_name(data) {
        panic!("{finding}");
    }
});
