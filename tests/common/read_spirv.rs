//! What any bytes read as a SPIR-V module must give. Included by path from `tests/spirv.rs`
//! (which replays `fuzz/corpus/spirv_module/` and mutated modules in CI) and from
//! `fuzz/fuzz_targets/spirv_module.rs`, so that the fuzzer and CI check the same.

use clconv::spirv::Module;
use clconv::Extensions;

/// Reads `bytes` as a module and lists it every way the library does (`conversions` and
/// `items` without and with half, `half_accesses`): never a panic; every error message one
/// non-empty line; every request and item printable, every function name free of the tabs and
/// line breaks `clconv spirv` separates its columns with. Panics on a violation.
pub fn read_any(bytes: &[u8]) {
    let module = match Module::parse(bytes) {
        Ok(module) => module,
        Err(e) => return check_message(e.to_string()),
    };
    for ext in [Extensions::default(), Extensions::with_fp16()] {
        match module.conversions(ext) {
            Ok(found) => {
                for m in found {
                    assert!(!m.request.to_string().is_empty());
                    check_function(m.function.to_string());
                }
            }
            Err(e) => check_message(e.to_string()),
        }
        match module.items(ext) {
            Ok(items) => {
                for item in items {
                    assert!(!item.to_string().is_empty());
                    check_function(item.function().to_string());
                }
            }
            Err(e) => check_message(e.to_string()),
        }
    }
    match module.half_accesses() {
        Ok(found) => {
            for m in found {
                assert!(!m.access.to_string().is_empty());
                check_function(m.function.to_string());
            }
        }
        Err(e) => check_message(e.to_string()),
    }
}

fn check_message(message: String) {
    assert!(
        !message.is_empty() && !message.contains('\n'),
        "bad error message: {message:?}"
    );
}

fn check_function(name: String) {
    assert!(!name.contains(['\t', '\n']), "bad function name: {name:?}");
}
