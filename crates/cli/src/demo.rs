//! `clconv demo`: a few conversions through the JIT, beside the reference.

use crate::args::DemoArgs;
use crate::values::{format_vector, parse_values};
use crate::Usage;
use clconv::jit::{Jit, X64Flags};
use clconv::{reference, Extensions, Layout, Request, Rounding};
use std::process::ExitCode;

/// `clconv demo`: JIT-compiles a few conversions, runs them on built-in inputs and shows them
/// beside the reference (status 1 if any differs).
pub fn demo(args: &DemoArgs) -> Result<ExitCode, Usage> {
    if !args.extra.is_empty() {
        return Err(Usage("demo takes no arguments".into()));
    }
    let ext = Extensions::with_fp16();
    let jit = Jit::with_options(X64Flags::Host, ext, Rounding::Rte)?;
    let cases: &[(&str, &str, &str)] = &[
        (
            "convert_uchar4_sat_rte(float4)",
            "-5.0, 254.5, 254.6, 1.2e9",
            "saturate to [0, 255], round half to even",
        ),
        (
            "convert_int4_rte(float4)",
            "0.5, 1.5, -2.5, 0x3effffff",
            "ties to even; 0.5 - 1ulp is 0, unlike (int)(x + 0.5f)",
        ),
        (
            "convert_int4(float4)",
            "nan, 3e9, -3e9, -7.9",
            "rtz; NaN and out of range: clconv defines them as _sat",
        ),
        (
            "convert_float4_rtp(int4)",
            "16777217, -16777217, 2147483647, 1",
            "inexact ints round up to the next float",
        ),
        (
            "convert_float4_rtz(int4)",
            "16777217, -16777217, 2147483647, 1",
            "... or toward zero",
        ),
        (
            "convert_char4_sat(short4)",
            "200, -200, 127, -128",
            "clamp to [-128, 127]",
        ),
        (
            "convert_ushort4_sat(int4)",
            "-1, 70000, 65535, 42",
            "negatives clamp to 0",
        ),
        (
            "convert_float2_rtz(double2)",
            "1e300, -1e-300",
            "rtz: FLT_MAX, not inf; -0.0 stays negative",
        ),
        (
            "convert_half4_rtp(float4)",
            "65520, 1e-8, -1e-8, 0.1",
            "half: overflow and subnormals by the mode",
        ),
        (
            "as_int4(float4)",
            "1.0, -0.0, nan, inf",
            "reinterpretation: the bits unchanged",
        ),
    ];
    out!(
        "{:<32} {:<36} {:<40} {:<40}",
        "function",
        "input",
        "JIT",
        "reference"
    );
    let mut all_agree = true;
    for (name, values, why) in cases {
        let request = Request::parse(name, ext)?;
        let src = parse_values(values, request.src().elem)?;
        let per = clconv::buffer::bytes_per_vector(request.dst(), Layout::Packed);
        let mut got = vec![0u8; per];
        let mut want = vec![0u8; per];
        jit.compile_request(&request)?
            .run_bytes(Layout::Packed, &src, &mut got)?;
        reference::evaluate(&request, Layout::Packed, &src, &mut want)?;
        let shown_in = format_vector(&src, request.src().elem, request.src().lanes());
        let shown_got = format_vector(&got, request.dst().elem, request.dst().lanes());
        let shown_want = format_vector(&want, request.dst().elem, request.dst().lanes());
        let mark = if got == want { "" } else { "  MISMATCH" };
        all_agree &= got == want;
        out!("{name:<32} {shown_in:<36} {shown_got:<40} {shown_want:<40}{mark}");
        out!("{:<32} ^ {why}", "");
    }
    out!(
        "\n{} kernels JIT-compiled for this machine; {}",
        jit.cached_kernels(),
        if all_agree {
            "every result equals the reference interpreter's, bit for bit."
        } else {
            "SOME RESULTS DIFFER FROM THE REFERENCE."
        }
    );
    Ok(if all_agree {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
