//! A fuzzer-chosen request and input bytes: the JIT kernel equals the reference interpreter in
//! both layouts, from misaligned buffers, never writes outside the destination, and refuses a
//! ragged source exactly as the reference does (see `clconv_verify::fuzz_targets::Differential`).
#![no_main]

use clconv_verify::fuzz_targets::Differential;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static DIFFERENTIAL: OnceLock<Differential> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let differential =
        DIFFERENTIAL.get_or_init(|| Differential::new().expect("a JIT for this machine"));
    if let Err(finding) = differential.check(data) {
        panic!("{finding}");
    }
});
