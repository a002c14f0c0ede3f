//! `clconv run FUNCTION` (a conversion) and `clconv run OP(TYPE)` (correctly rounded
//! arithmetic): buffers through the JIT or the reference.

use crate::args::{self, RunArgs};
use crate::values::{format_vector, parse_values};
use crate::{write_raw, Usage};
use clconv::jit::{Jit, X64Flags};
use clconv::{reference, Extensions, Request};
use std::io::Read;
use std::io::Write;
use std::process::ExitCode;

/// `clconv run`: an arithmetic request (`mul_rtz(float4)`, see `clconv::arith`) or a
/// conversion, by the FUNCTION's name.
pub fn run(args: &RunArgs) -> Result<ExitCode, Usage> {
    if args
        .function
        .first()
        .is_some_and(|f| clconv::mx::MxRequest::is_mx_name(f))
    {
        return run_mx(args);
    }
    let arith = args
        .function
        .first()
        .is_some_and(|f| clconv::arith::ArithRequest::is_arith_name(f));
    // The options of the other kind of run.
    let foreign: &[(&str, bool)] = if arith {
        &[("--fp16", args.fp16.fp16)]
    } else {
        &[
            ("--input2", args.input2.is_some()),
            ("--input3", args.input3.is_some()),
            ("--values2", args.values2.is_some()),
            ("--values3", args.values3.is_some()),
        ]
    };
    if let Some((name, _)) = foreign.iter().find(|(_, given)| *given) {
        return Err(Usage(format!(
            "unknown option {name} for this command (see clconv --help)"
        )));
    }
    if arith {
        run_arith(args)
    } else {
        run_conversion(args)
    }
}

/// `clconv run FUNCTION ...`: a conversion.
fn run_conversion(args: &RunArgs) -> Result<ExitCode, Usage> {
    let ext = args.fp16.ext();
    let request = Request::parse(args::one_function(&args.function)?, ext)?;
    let layout = args.layout.get()?;
    let static_mode = args.static_mode.get()?;
    let src: Vec<u8> = match (args.input.as_deref(), args.values.as_deref()) {
        (Some(_), Some(_)) => return Err(Usage("give --input or --values, not both".into())),
        (Some(path), None) if path != "-" => {
            std::fs::read(path).map_err(|e| Usage(format!("cannot read {path}: {e}")))?
        }
        (_, Some(text)) => parse_values(text, request.src().elem)?,
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| Usage(format!("cannot read standard input: {e}")))?;
            buf
        }
    };
    let vectors =
        clconv::buffer::vector_count(&request, layout, src.len(), 0).or_else(|e| match e {
            clconv::buffer::BufferError::DestinationSize { vectors, .. } => Ok(vectors),
            other => Err(other),
        })?;
    let dst_per_vector = clconv::buffer::bytes_per_vector(request.dst(), layout);
    let mut dst = vec![0u8; vectors * dst_per_vector];
    // On a trap, the vectors before the trapping element's were converted, and only they are
    // written or printed; then the trap is reported (exit status 3).
    let mut trap = None;
    if args.reference {
        let mut converted = vectors;
        if let Some((vector, message)) = reference_trap(&request, layout, static_mode, &src) {
            converted = vector;
            trap = Some(message);
        }
        let src_per_vector = clconv::buffer::bytes_per_vector(request.src(), layout);
        reference::evaluate_with_mode(
            &request,
            layout,
            static_mode,
            &src[..converted * src_per_vector],
            &mut dst[..converted * dst_per_vector],
        )?;
        dst.truncate(converted * dst_per_vector);
    } else {
        let jit = Jit::with_options(X64Flags::Host, ext, static_mode)?;
        match jit
            .compile_request(&request)?
            .run_bytes(layout, &src, &mut dst)
        {
            Err(e @ clconv::jit::JitError::Trap { element, .. }) => {
                dst.truncate(element / request.src().lanes() * dst_per_vector);
                trap = Some(e.to_string());
            }
            other => other?,
        }
    }
    let vectors = dst.len() / dst_per_vector;
    match args.output.as_deref() {
        Some(path) => write_raw(path, &dst)?,
        None => {
            let stride = layout.stride(request.dst().width);
            for v in 0..vectors {
                let per = stride * request.dst().elem.bytes();
                out!(
                    "{}",
                    format_vector(
                        &dst[v * per..(v + 1) * per],
                        request.dst().elem,
                        request.dst().lanes()
                    )
                );
            }
        }
    }
    match trap {
        Some(message) => Ok(trapped(&message)),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// Exit status 3: the conversion trapped (WebAssembly's `trunc` on NaN or out of range).
fn trapped(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "clconv: trap: {message}");
    ExitCode::from(3)
}

/// The reference's first trapping element of `src`: the vector that holds it, and the message
/// the JIT's error gives.
fn reference_trap(
    request: &Request,
    layout: clconv::Layout,
    static_mode: clconv::Rounding,
    src: &[u8],
) -> Option<(usize, String)> {
    let Request::Convert(c) = request else {
        return None;
    };
    let (s, bytes) = (c.src(), c.src().elem.bytes());
    let per_vector = clconv::buffer::bytes_per_vector(s, layout);
    for (v, vector) in src.chunks_exact(per_vector).enumerate() {
        for lane in 0..s.lanes() {
            let element = &vector[lane * bytes..(lane + 1) * bytes];
            let mut le = [0u8; 8];
            le[..bytes].copy_from_slice(element);
            if reference::traps(c, static_mode, u64::from_le_bytes(le)) {
                let value = format_vector(element, s.elem, 1);
                let value = if value.contains("NaN") || value.contains("nan") {
                    "NaN".to_string()
                } else {
                    value
                };
                return Some((
                    v,
                    format!(
                        "{request} traps on element {}, which is {value}: the values before \
                         it were converted, nothing from it on was written",
                        v * s.lanes() + lane
                    ),
                ));
            }
        }
    }
    None
}

/// `clconv run convert_mx<elem>[_rtp|_rte](<value>)` or `convert_nvfp4[x2](<value>)` (values
/// from `--values`/`--input`: a line per block, its scale and its elements) and `clconv run
/// convert_<value>(mx<elem>)` or `(nvfp4[x2])` (elements from `--values`/`--input`, the scales
/// from `--values2`/`--input2`: the values), through the JIT or, with `--reference`, the
/// reference. NVFP4 takes the tensor scale from `--tensor-scale`.
fn run_mx(args: &RunArgs) -> Result<ExitCode, Usage> {
    use clconv::mx::MxRequest;
    let request =
        MxRequest::parse(args::one_function(&args.function)?).map_err(|e| Usage(e.to_string()))?;
    let foreign = [
        ("--input3", args.input3.is_some()),
        ("--values3", args.values3.is_some()),
        ("--output", args.output.is_some()),
        ("--fp16", args.fp16.fp16),
    ];
    if let Some((name, _)) = foreign.iter().find(|(_, given)| *given) {
        return Err(Usage(format!(
            "{name} does not go with a block request (it prints its blocks)"
        )));
    }
    let tensor_scale = match (&args.tensor_scale, request.is_nvfp4()) {
        (Some(text), true) => {
            let bytes = parse_values(text, clconv::ScalarType::Float)?;
            match bytes[..] {
                [a, b, c, d] => Some(f32::from_le_bytes([a, b, c, d])),
                _ => return Err(Usage("--tensor-scale takes one float32".into())),
            }
        }
        (None, true) => {
            return Err(Usage(format!(
                "{request} needs the tensor's scale: --tensor-scale T (NVIDIA's recipe: the \
                 tensor's amax / 2688)"
            )))
        }
        (Some(_), false) => {
            return Err(Usage(format!(
                "{request} is an MX block request, which has no tensor scale"
            )))
        }
        (None, false) => None,
    };
    let read = |input: &Option<String>,
                values: &Option<String>,
                t: clconv::ScalarType,
                what: &str| {
        match (input.as_deref(), values.as_deref()) {
            (Some(path), None) => {
                std::fs::read(path).map_err(|e| Usage(format!("cannot read {path}: {e}")))
            }
            (None, Some(text)) => parse_values(text, t),
            (Some(_), Some(_)) => Err(Usage(format!(
                "give the {what} once, not both as a file and as text"
            ))),
            (None, None) => Err(Usage(format!("{request} needs its {what}"))),
        }
    };
    let jit = || Jit::with_options(X64Flags::Host, Extensions::default(), clconv::Rounding::Rte);
    let failed = |e: clconv::mx::MxBufferError| Usage(e.to_string());
    // Packed FP4 elements are bytes of two codes.
    let elem = if request.packed() {
        clconv::ScalarType::UChar
    } else {
        request.elem()
    };
    let block = request.block_len();
    if request.is_quantize() {
        if args.input2.is_some() || args.values2.is_some() {
            return Err(Usage(format!("{request} takes one input, the values")));
        }
        let from = request.value();
        let values = read(
            &args.input,
            &args.values,
            from,
            "values (--values or --input)",
        )?;
        let n = values.len() / from.bytes();
        let (mut e, mut s) = (
            vec![0u8; request.element_bytes(n)],
            vec![0u8; request.block_count(n)],
        );
        match (args.reference, tensor_scale) {
            (true, None) => {
                reference::mx_quantize(&request, &values, &mut e, &mut s).map_err(failed)?
            }
            (true, Some(t)) => {
                reference::nvfp4_quantize(&request, &values, t, &mut e, &mut s).map_err(failed)?
            }
            (false, t) => {
                let kernel = jit()?.compile_blocks_request(&request)?;
                match t {
                    None => kernel.quantize_bytes(&values, &mut e, &mut s),
                    Some(t) => kernel.quantize_nvfp4_bytes(&values, t, &mut e, &mut s),
                }
                .map_err(|e| Usage(e.to_string()))?
            }
        }
        for (scale, elements) in s.iter().zip(e.chunks(request.element_bytes(block))) {
            out!(
                "scale {}: {}",
                format_vector(&[*scale], request.scale_type(), 1),
                format_vector(elements, elem, elements.len())
            );
        }
    } else {
        let to = request.value();
        let elements = read(
            &args.input,
            &args.values,
            elem,
            "elements (--values or --input)",
        )?;
        let scales = read(
            &args.input2,
            &args.values2,
            request.scale_type(),
            "scales (--values2 or --input2)",
        )?;
        let n = if request.packed() {
            2 * elements.len()
        } else {
            elements.len()
        };
        let mut values = vec![0u8; n * to.bytes()];
        match (args.reference, tensor_scale) {
            (true, None) => reference::mx_dequantize(&request, &elements, &scales, &mut values)
                .map_err(failed)?,
            (true, Some(t)) => {
                reference::nvfp4_dequantize(&request, &elements, &scales, t, &mut values)
                    .map_err(failed)?
            }
            (false, t) => {
                let kernel = jit()?.compile_blocks_request(&request)?;
                match t {
                    None => kernel.dequantize_bytes(&elements, &scales, &mut values),
                    Some(t) => kernel.dequantize_nvfp4_bytes(&elements, &scales, t, &mut values),
                }
                .map_err(|e| Usage(e.to_string()))?
            }
        }
        for values in values.chunks(block * to.bytes()) {
            out!("{}", format_vector(values, to, values.len() / to.bytes()));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `clconv run OP(TYPE) ...`: an arithmetic batch through the JIT (or the reference).
fn run_arith(args: &RunArgs) -> Result<ExitCode, Usage> {
    let request = clconv::arith::ArithRequest::parse(args::one_function(&args.function)?)?;
    let layout = args.layout.get()?;
    let static_mode = args.static_mode.get()?;
    let elem = request.elem().scalar_type();
    let arity = request.op().arity();
    let sources = [
        ("--input", "--values", &args.input, &args.values),
        ("--input2", "--values2", &args.input2, &args.values2),
        ("--input3", "--values3", &args.input3, &args.values3),
    ];
    let mut inputs = Vec::new();
    for (k, (input, values, input_arg, values_arg)) in sources.into_iter().enumerate() {
        let given = (input_arg.as_deref(), values_arg.as_deref());
        if k >= arity {
            if given != (None, None) {
                return Err(Usage(format!(
                    "{request} takes {arity} operand(s): drop {input}/{values}"
                )));
            }
            continue;
        }
        inputs.push(match given {
            (Some(path), None) => {
                std::fs::read(path).map_err(|e| Usage(format!("cannot read {path}: {e}")))?
            }
            (None, Some(text)) => parse_values(text, elem)?,
            (Some(_), Some(_)) => return Err(Usage(format!("give {input} or {values}, not both"))),
            (None, None) => {
                return Err(Usage(format!(
                    "{request} needs {} from {input} or {values}",
                    clconv::arith::operand_name(k)
                )))
            }
        });
    }
    let refs: Vec<&[u8]> = inputs.iter().map(Vec::as_slice).collect();
    let mut dst = vec![0u8; inputs[0].len()];
    if args.reference {
        reference::arith::evaluate(&request, layout, static_mode, &refs, &mut dst)?;
    } else {
        let jit = Jit::with_options(X64Flags::Host, Extensions::default(), static_mode)?;
        jit.compile_arith_request(&request)?
            .run_bytes(layout, &refs, &mut dst)?;
    }
    match args.output.as_deref() {
        Some(path) => write_raw(path, &dst)?,
        None => {
            let per = request.bytes_per_vector(layout);
            for v in dst.chunks(per) {
                out!("{}", format_vector(v, elem, request.width().lanes()));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
