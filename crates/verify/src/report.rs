//! The lowering report (`lowering-tables/REPORT.md`): what every element conversion compiles
//! to on every target, so a lowering regression shows up in review as a diff.
//!
//! For each element pair (with representative modifiers) and each target, the report gives
//! the recipe the table chose and the machine instructions one block of the batch kernel's
//! body costs per element: a probe function holding exactly one block (the vector recipe's
//! loads, conversion and stores, or for the per-element loop one element) is compiled for the
//! target, its instructions counted from Cranelift's disassembly, an empty function's
//! prologue and epilogue subtracted, and the rest divided by the block's elements.
//! Regenerate with `cargo run -p clconv-cli -- report --write`; `crates/verify/tests/report.rs`
//! fails when it is stale.

use clconv::kernel;
use clconv::lower::recipes::{BlockSpec, Body};
use clconv::lower::{element_type, lanes, Lowering};
use clconv::request::{Conversion, Reinterpretation, Request};
use clconv::table::{self, Key};
use clconv::target::Target;
use clconv::types::{Extensions, Rounding, ScalarType, VectorType, Width};
use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The targets in the report, in column order.
pub const TARGETS: [Target; 8] = [
    Target::X86_64Sse2,
    Target::X86_64Sse41,
    Target::X86_64Avx2,
    Target::X86_64Avx512,
    Target::Aarch64,
    Target::Riscv64,
    Target::Riscv64V,
    Target::S390x,
];

/// The representative request of an element pair: the modifiers that exercise its class's
/// interesting recipe (`_sat_rte` to integers from floats, `_sat` between integers, `_rtp` to
/// floats from integers, `_rtz` between floats), at width 4.
pub fn representative(src: ScalarType, dst: ScalarType) -> Request {
    let (saturate, rounding) = match (src.is_float(), dst.is_float()) {
        (true, false) => (true, Some(Rounding::Rte)),
        (false, false) => (true, None),
        (false, true) => (false, Some(Rounding::Rtp)),
        (true, true) => (false, Some(Rounding::Rtz)),
    };
    let w = |t| VectorType::new(t, Width::W4);
    Request::Convert(
        Conversion::new(w(src), w(dst), saturate, rounding, Extensions::with_fp16())
            .expect("a legal conversion"),
    )
}

/// The ten conversions of `benches/conversions.rs` and the README's performance table (the
/// examples `host_instructions` and `compile_latency` measure them).
pub const BENCHMARK_CONVERSIONS: [&str; 10] = [
    "convert_int4_sat_rte(float4)",
    "convert_uchar4_sat_rte(float4)",
    "convert_int4(float4)",
    "convert_float4_rtp(int4)",
    "convert_float2_rtz(double2)",
    "convert_double2(long2)",
    "convert_float4(uint4)",
    "convert_uchar8_sat(short8)",
    "convert_char4(int4)",
    "convert_float2_rtn(ulong2)",
];

/// The bulk conversions of the small floats that `benches/formats.rs` times, at width 4, in the
/// modes bulk conversions use (nearest-even; `_sat` into the 8-bit floats, as the `float8`
/// crate converts): the main table's float-to-float rows are `_rtz`, which takes the generic
/// sequences, not these.
pub const FORMAT_CONVERSIONS: [&str; 8] = [
    "convert_half4(float4)",
    "convert_float4(half4)",
    "convert_bfloat4(float4)",
    "convert_float4(bfloat4)",
    "convert_fp8e4m3x4_sat(float4)",
    "convert_float4(fp8e4m3x4)",
    "convert_fp8e5m2x4_sat(float4)",
    "convert_float4(fp8e5m2x4)",
];

/// Machine instructions per element of one block of `request`'s kernel body on `isa`, and the
/// recipe used. `None` when it does not compile.
pub fn instructions_per_element(request: &Request, isa: &dyn TargetIsa) -> Option<(f64, String)> {
    let key = kernel::key_of(request, Rounding::Rte);
    let row = table::choose_for(isa, &key).ok()?;
    let (probe, elements) = block_probe(request, &key.spec(), row.recipe.body, isa);
    let empty = empty_function(isa);
    let count = count_instructions(isa, probe)?;
    let overhead = count_instructions(isa, empty)?;
    Some((
        count.saturating_sub(overhead) as f64 / elements as f64,
        row.recipe.name.to_string(),
    ))
}

fn probe_signature(isa: &dyn TargetIsa) -> Signature {
    let mut sig = Signature::new(isa.default_call_conv());
    sig.params.push(AbiParam::new(types::I64));
    sig.params.push(AbiParam::new(types::I64));
    sig
}

fn empty_function(isa: &dyn TargetIsa) -> Function {
    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), probe_signature(isa));
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(isa.frontend_config());
    func
}

/// A function holding one block of the kernel body: `fn(src, dst)`.
fn block_probe(
    request: &Request,
    spec: &BlockSpec,
    body: Body,
    isa: &dyn TargetIsa,
) -> (Function, usize) {
    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), probe_signature(isa));
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (src, dst) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let flags = cranelift_codegen::ir::MemFlagsData::new()
        .with_endianness(cranelift_codegen::ir::Endianness::Little)
        .with_notrap();
    let elements = match (request, body) {
        (Request::Convert(c), Body::Vector(emit)) if c.src().elem != c.dst().elem => {
            let per_block = spec.block_elements();
            let k_in = per_block * spec.src.bytes() / 16;
            let inputs: Vec<_> = (0..k_in)
                .map(|j| {
                    b.ins()
                        .load(lanes::vector_of(spec.src), flags, src, (16 * j) as i32)
                })
                .collect();
            for (j, v) in emit(&mut b, spec, &inputs).into_iter().enumerate() {
                b.ins().store(flags, v, dst, (16 * j) as i32);
            }
            per_block
        }
        (Request::Convert(c), _) if c.src().elem != c.dst().elem => {
            let x = b.ins().load(element_type(spec.src), flags, src, 0);
            let y = Lowering::without_isa()
                .convert_element(&mut b, c, x)
                .expect("the report loads the operand at its element type");
            b.ins().store(flags, y, dst, 0);
            1
        }
        _ => {
            // Copies: one chunk of the widest size the recipe uses.
            let (ty, bytes) = if matches!(body, Body::CopyScalar | Body::Scalar) {
                (types::I64, 8)
            } else {
                (types::I8X16, 16)
            };
            let v = b.ins().load(ty, flags, src, 0);
            b.ins().store(flags, v, dst, 0);
            bytes / spec.src.bytes()
        }
    };
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(isa.frontend_config());
    (func, elements)
}

fn count_instructions(isa: &dyn TargetIsa, func: Function) -> Option<usize> {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut ctx = cranelift_codegen::Context::for_function(func);
        ctx.set_disasm(true);
        let mut ctrl = cranelift_codegen::control::ControlPlane::default();
        ctx.compile(isa, &mut ctrl)
            .ok()
            .and_then(|c| c.vcode.clone())
    }));
    let text = result.ok()??;
    Some(
        text.lines()
            .map(str::trim)
            .filter(|l| {
                !l.is_empty()
                    && !l.ends_with(':')
                    && !l.starts_with("unwind")
                    && !l.starts_with(';')
            })
            .count(),
    )
}

/// Generates the report's Markdown.
pub fn generate() -> String {
    let isas: Vec<_> = TARGETS
        .iter()
        .map(|t| (t, t.isa().expect("every report target builds")))
        .collect();
    let mut out = String::new();
    out.push_str(
        "# Lowering report\n\n\
         Generated by `cargo run -p clconv-cli -- report --write` from `lowering-tables/*.table`; \
         `crates/verify/tests/report.rs` fails when this file is stale. Do not edit by hand.\n\n\
         Each cell: machine instructions per element for one block of the batch kernel's body \
         (one 128-bit vector block, or one element for the `scalar` loop; loop control and \
         the prologue excluded), and the recipe that the target's table chose. One request per \
         element pair, at width 4, with the modifiers that exercise its class: `_sat_rte` \
         float to integer, `_sat` integer to integer, `_rtp` integer to float, `_rtz` float to \
         float.\n\n",
    );
    table_header(&mut out, &isas);
    for src in ScalarType::ALL {
        for dst in ScalarType::ALL {
            if src == dst {
                continue;
            }
            request_row(&mut out, &representative(src, dst), &isas);
        }
    }
    let copies = [
        Request::Reinterpret(
            Reinterpretation::new(
                VectorType::new(ScalarType::Float, Width::W4),
                VectorType::new(ScalarType::Int, Width::W4),
                Extensions::default(),
            )
            .expect("legal"),
        ),
        Request::Reinterpret(
            Reinterpretation::new(
                VectorType::new(ScalarType::Float, Width::W4),
                VectorType::new(ScalarType::Char, Width::W16),
                Extensions::default(),
            )
            .expect("legal"),
        ),
    ];
    for r in copies {
        request_row(&mut out, &r, &isas);
    }

    out.push_str(
        "\n## Bulk conversions of the small floats\n\nThe conversions `benches/formats.rs` \
         times, in the modes bulk conversions use: nearest-even (half's and bfloat16's fast \
         paths; the table above shows the `_rtz` ones) and `_sat` into the 8-bit floats.\n\n",
    );
    table_header(&mut out, &isas);
    for name in FORMAT_CONVERSIONS {
        let r = Request::parse(name, Extensions::with_fp16()).expect("a legal conversion");
        request_row(&mut out, &r, &isas);
    }

    out.push_str("\n## Rows fired\n\nFor each target, each table row that lowers some conversion there, and how many keys of the matrix (element pair x `_sat` x effective rounding, and `as_` pairs) it lowers.\n");
    let keys = Key::all();
    for (t, isa) in &isas {
        let mut fired: BTreeMap<usize, (String, usize)> = BTreeMap::new();
        for key in &keys {
            if let Ok(row) = table::choose_for(&**isa, key) {
                let e = fired.entry(row.line).or_insert_with(|| {
                    (
                        format!("{}:{} `{}`", row.file, row.line, row.recipe.name),
                        0,
                    )
                });
                e.1 += 1;
            }
        }
        let _ = writeln!(out, "\n### {}\n", t.name());
        for (_, (row, n)) in fired {
            let _ = writeln!(out, "- {row}: {n} keys");
        }
    }
    out
}

/// The header of a per-element table: the request column, then one column per target.
fn table_header(out: &mut String, isas: &[(&Target, OwnedTargetIsa)]) {
    out.push_str("| request |");
    for (t, _) in isas {
        let _ = write!(out, " {} |", t.name());
    }
    out.push_str("\n|---|");
    for _ in isas {
        out.push_str("---|");
    }
    out.push('\n');
}

/// One row of the per-element table: `r`, then per target its instructions per element and
/// recipe.
fn request_row<T>(out: &mut String, r: &Request, isas: &[(T, OwnedTargetIsa)]) {
    let _ = write!(out, "| `{r}` |");
    for (_, isa) in isas {
        match instructions_per_element(r, &**isa) {
            Some((n, recipe)) => {
                let _ = write!(out, " {n:.2} {} |", short(&recipe));
            }
            None => out.push_str(" does not compile |"),
        }
    }
    out.push('\n');
}

fn short(recipe: &str) -> &str {
    recipe.rsplit('.').next().unwrap_or(recipe)
}
