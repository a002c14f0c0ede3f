//! `clconv run` on arithmetic kernels (`add_rtz(float4)`, `#pragma OPENCL SELECT_ROUNDING_MODE`):
//! expected values computed by hand; the JIT and `--reference` must agree.

/// `clconv run OP(TYPE)`: the JIT and `--reference` agree; raw files in and out; usage errors
/// exit with status 2.
#[test]
fn command_line_runs_arithmetic_kernels() {
    use std::process::Command;
    let clconv = env!("CARGO_BIN_EXE_clconv");
    let run = |args: &[&str]| {
        let out = Command::new(clconv).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let args = [
        "run",
        "mul_rtz(float4)",
        "--values",
        "3,1,1e38,-1e-45",
        "--values2",
        "0.1,3,1e38,0.5",
    ];
    let (code, jit_out, _) = run(&args);
    assert_eq!(code, Some(0));
    assert_eq!(jit_out.trim(), "(0.29999998, 3.0, 3.4028235e38, -0.0)");
    let mut with_reference = args.to_vec();
    with_reference.push("--reference");
    assert_eq!(run(&with_reference).1, jit_out);
    // The static mode applies to a request without a mode.
    let (_, out, _) = run(&[
        "run",
        "sub(double)",
        "--values",
        "1.5",
        "--values2",
        "1.5",
        "--static-mode",
        "rtn",
    ]);
    assert_eq!(out.trim(), "-0.0");
    // Raw files in and out.
    let dir = std::env::temp_dir().join(format!("clconv-arith-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.bin");
    let b = dir.join("b.bin");
    let out = dir.join("out.bin");
    std::fs::write(&a, 1.0f32.to_le_bytes()).unwrap();
    std::fs::write(&b, 3.0f32.to_le_bytes()).unwrap();
    let (code, _, err) = run(&[
        "run",
        "div_rtp(float)",
        "--input",
        a.to_str().unwrap(),
        "--input2",
        b.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), 0x3eaa_aaabu32.to_le_bytes());
    std::fs::remove_dir_all(&dir).unwrap();
    // Usage errors: a bad mode, a missing operand, an operand too many, ragged buffers.
    for bad in [
        &["run", "mul_rtq(float)", "--values", "1", "--values2", "2"][..],
        &["run", "fma(float)", "--values", "1", "--values2", "2"],
        &["run", "sqrt(float)", "--values", "1", "--values2", "2"],
        &["run", "add(float4)", "--values", "1,2", "--values2", "1,2"],
    ] {
        let (code, _, err) = run(bad);
        assert_eq!(code, Some(2), "{bad:?}");
        assert!(err.starts_with("clconv: error:"), "{err}");
    }
}
