//! Any bytes as a SPIR-V module through `clconv::spirv::Module::parse` and `conversions`: never
//! a panic, every error message one non-empty line, every request it finds printable.
//! `tests/spirv.rs` replays `fuzz/corpus/spirv_module/` on stable Rust.
#![no_main]

use clconv::spirv::Module;
use clconv::Extensions;
use libfuzzer_sys::fuzz_target;

fn check_message(message: String) {
    assert!(
        !message.is_empty() && !message.contains('\n'),
        "bad error message: {message:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    match Module::parse(data) {
        Ok(module) => {
            for ext in [Extensions::default(), Extensions::with_fp16()] {
                match module.conversions(ext) {
                    Ok(found) => {
                        for m in found {
                            assert!(!m.request.to_string().is_empty());
                            assert!(!m.function.to_string().contains(['\t', '\n']));
                        }
                    }
                    Err(e) => check_message(e.to_string()),
                }
            }
        }
        Err(e) => check_message(e.to_string()),
    }
});
