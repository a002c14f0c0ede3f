//! Any bytes as a SPIR-V module through `clconv::spirv::Module::parse`, `conversions`, `items`
//! and `half_accesses`: never a panic, every error message one non-empty line, everything it
//! finds printable. The check is `tests/common/read_spirv.rs`, which `tests/spirv.rs` runs on
//! `fuzz/corpus/spirv_module/` in CI on stable Rust.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/read_spirv.rs"]
mod read_spirv;

fuzz_target!(|data: &[u8]| read_spirv::read_any(data));
