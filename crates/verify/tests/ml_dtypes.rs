//! The narrow formats against ml_dtypes (issue 47): the library ML pipelines convert with
//! (`numpy` arrays `astype(ml_dtypes.float4_e2m1fn)`), run by `scripts/ml_dtypes_narrow.py`, and
//! clconv's reference, element by element: every code of FP4 E2M1, FP6 E2M3 and E3M2, E4M3FNUZ
//! and E5M2FNUZ into float; into each of them 393,216 floats (every top half with six low
//! halves: every exponent, the rounding bits, ties and sticky bits), every half and every
//! bfloat16.
//!
//! Needs Python 3 with `ml_dtypes` (PyPI; `.ci/run` installs it in a virtual environment and
//! names the interpreter in `CLCONV_PYTHON`, else `python3` is used): without it the test fails
//! and says so, never skips.
//!
//! Two differences are expected, and counted: a NaN into FP4 or FP6 (which have none) is
//! implementation-defined in OCP MX v1.0; clconv gives the largest positive value (PTX's
//! `cvt`, CUDA, ONNX), ml_dtypes -0 for a positive NaN and +0 for a negative one. And into E8M0
//! ml_dtypes gives 2^-126 (0x01) for the values strictly between 2^-127 and 1.5 * 2^-127, which
//! are nearer 2^-127 (0x00, clconv's result): it rounds there as if 0x00 were zero.

use clconv::{reference, Extensions, Request, Rounding, ScalarType};
use std::path::Path;
use std::process::Command;

const LOW: [u32; 6] = [0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff];

/// The narrow formats in the script's order, with their bits.
const TYPES: [(ScalarType, u32); 6] = [
    (ScalarType::Fp4E2M1, 4),
    (ScalarType::Fp6E2M3, 6),
    (ScalarType::Fp6E3M2, 6),
    (ScalarType::Fp8E4M3Fnuz, 8),
    (ScalarType::Fp8E5M2Fnuz, 8),
    (ScalarType::Fp8E8M0, 8),
];

fn converter(name: &str) -> reference::ElementConverter {
    match Request::parse(name, Extensions::with_fp16()) {
        Ok(Request::Convert(c)) => reference::ElementConverter::new(&c, Rounding::Rte),
        other => panic!("{name}: {other:?}"),
    }
}

fn is_nan(source: &str, bits: u64) -> bool {
    match source {
        "float" => f32::from_bits(bits as u32).is_nan(),
        // half and bfloat16: exponent all ones, fraction not zero.
        "half" => bits & 0x7c00 == 0x7c00 && bits & 0x3ff != 0,
        _ => bits & 0x7f80 == 0x7f80 && bits & 0x7f != 0,
    }
}

#[test]
fn the_narrow_formats_agree_with_ml_dtypes() {
    let python = std::env::var("CLCONV_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ml_dtypes_narrow.py");
    let run = Command::new(&python)
        .arg(&script)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {python} (set CLCONV_PYTHON to a Python 3 with ml_dtypes): {e}")
        });
    assert!(
        run.status.success(),
        "{python} {}: {}; install ml_dtypes (python3 -m pip install ml_dtypes) or set \
         CLCONV_PYTHON to an interpreter that has it (.ci/run does)",
        script.display(),
        String::from_utf8_lossy(&run.stderr)
    );
    let out = run.stdout;
    let newline = out
        .iter()
        .position(|&b| b == b'\n')
        .expect("a version line");
    let version = String::from_utf8_lossy(&out[..newline]).to_string();
    let mut rest = &out[newline + 1..];
    let mut take = |n: usize| {
        assert!(rest.len() >= n, "the script's output is short");
        let (head, tail) = rest.split_at(n);
        rest = tail;
        head.to_vec()
    };
    let floats: Vec<u64> = (0..65536u32)
        .flat_map(|hi| LOW.map(|lo| u64::from(hi << 16 | lo)))
        .collect();
    let patterns: Vec<u64> = (0..65536).collect();
    let mut compared = 0usize;
    let mut nan_differences = 0usize;
    let mut e8m0_differences = 0usize;
    for (t, bits) in TYPES {
        // Every code into float.
        let decoded = take(4 << bits);
        let to_float = converter(&format!("convert_float({t})"));
        for code in 0..1u64 << bits {
            let i = code as usize * 4;
            let theirs = u32::from_le_bytes(decoded[i..i + 4].try_into().unwrap());
            let ours = to_float.convert(code).bits as u32;
            assert_eq!(
                ours, theirs,
                "convert_float({t}) of {code:#x}: clconv {ours:#x}, ml_dtypes {version} {theirs:#x}"
            );
            compared += 1;
        }
        // Floats, halves and bfloat16s into the format.
        for (source, inputs) in [
            ("float", &floats),
            ("half", &patterns),
            ("bfloat", &patterns),
        ] {
            let theirs = take(inputs.len());
            let name = format!("convert_{t}({source})");
            let conv = converter(&name);
            for (&x, &their) in inputs.iter().zip(&theirs) {
                let ours = conv.convert(x).bits as u8;
                compared += 1;
                if ours == their {
                    continue;
                }
                if t == ScalarType::Fp8E8M0 {
                    let v = reference::narrow_value(ScalarType::Fp8E8M0, 0).unwrap();
                    let x_value = match source {
                        "float" => f64::from(f32::from_bits(x as u32)),
                        "bfloat" => f64::from(f32::from_bits((x as u32) << 16)),
                        _ => f64::NAN,
                    };
                    assert!(
                        (ours, their) == (0x00, 0x01) && x_value > v && x_value < 1.5 * v,
                        "{name} of {x:#x}: clconv {ours:#x}, ml_dtypes {version} {their:#x}"
                    );
                    e8m0_differences += 1;
                    continue;
                }
                let finite_only = !matches!(t, ScalarType::Fp8E4M3Fnuz | ScalarType::Fp8E5M2Fnuz);
                assert!(
                    finite_only && is_nan(source, x) && (their & !(1 << (bits - 1))) == 0,
                    "{name} of {x:#x}: clconv {ours:#x}, ml_dtypes {version} {their:#x}"
                );
                nan_differences += 1;
            }
        }
    }
    assert!(rest.is_empty(), "the script wrote more than expected");
    // Every NaN pattern of the three sources into the three finite-only formats, and no other.
    let nans = floats.iter().filter(|&&x| is_nan("float", x)).count()
        + patterns.iter().filter(|&&x| is_nan("half", x)).count()
        + patterns.iter().filter(|&&x| is_nan("bfloat", x)).count();
    assert_eq!(nan_differences, 3 * nans);
    // The floats 2^-127 * (1 + k * 2^-23), 0 < k < 2^22 (fractions 0x400001..0x5fffff, times
    // the six low halves that fall there), and bfloat16's 0x0041..0x005f.
    let floats_between = floats
        .iter()
        .filter(|&&x| (0x0040_0001..0x0060_0000).contains(&x))
        .count();
    assert_eq!(e8m0_differences, floats_between + (0x60 - 0x41));
    eprintln!(
        "ml_dtypes {version}: {compared} conversions compared, equal but for the {nan_differences} \
         NaNs into FP4 and FP6 (clconv: +max, ml_dtypes: a zero) and {e8m0_differences} values \
         between 2^-127 and 1.5 * 2^-127 into E8M0 (clconv 2^-127, ml_dtypes 2^-126)"
    );
}
