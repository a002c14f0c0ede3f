//! The builder API's typed entry (`Lowering::convert` on the values a front end holds) on
//! aarch64, riscv64 (with and without V) and s390x, run under QEMU: functions built as a
//! front end builds them, compiled into an object with cranelift-object, linked with the
//! cross-ISA driver (`tests/cross_isa/driver.c`) and compared with the reference lane by lane
//! ([`clconv_verify::cross::run_object`]). The optimised entry points lower with the target's
//! ISA (`Lowering::for_isa`: the tables' vector recipes), the quick ones without
//! (`Lowering::without_isa`: lane by lane).
//!
//! Needs the same Debian packages as `cross_isa.rs` (qemu-user and the cross compilers), and
//! fails naming them when they are missing.

use clconv::cranelift_codegen::ir::{types, AbiParam, Endianness, InstBuilder, MemFlagsData};
use clconv::cranelift_codegen::ir::{Function, Signature, UserFuncName, Value};
use clconv::cranelift_codegen::isa::TargetIsa;
use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use clconv::kernel::Tier;
use clconv::lower::{value_shape, ElementConversion, HalfValues, Lowering};
use clconv::rules::Rules;
use clconv::target::Target;
use clconv::ScalarType::{self, *};
use clconv::{Layout, Request, Rounding, VectorType, Width};
use clconv_verify::cross::{self, Plan, Shapes, Times, Toolchain};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::fmt::Write as _;
use std::io::Write as _;

const SEED: u64 = 36;

/// Every class, OpenCL's and WGSL's rules, half both ways (as tests/typed_entry.rs).
fn conversions() -> Vec<ElementConversion> {
    let c = ElementConversion::new;
    vec![
        c(Float, Int).rules(Rules::WGSL),
        c(Float, UInt).rules(Rules::WGSL),
        c(Float, Int).saturating().rounding(Rounding::Rte),
        c(Half, Int).rules(Rules::WGSL),
        c(Half, Float),
        c(Float, Half),
        c(Float, Half).rounding(Rounding::Rtz),
        c(Int, Float),
        c(UInt, Half),
        c(Double, Float).rounding(Rounding::Rtp),
        c(Float, Double),
        c(Short, Char).saturating(),
        c(Char, Float),
        c(Double, Long).rules(Rules::WGSL),
        c(Half, UChar).saturating(),
    ]
}

/// The widths a target holds values of: riscv64 without V scalars only; s390x scalars and
/// values of whole 128-bit vectors (it has no narrower vectors).
fn held(target: Target, conv: &ElementConversion, width: Width) -> bool {
    let narrow = |t: ScalarType| {
        let (ty, _) = value_shape(VectorType::new(t, width));
        ty.is_vector() && ty.bits() < 128
    };
    match target {
        Target::Riscv64 => width == Width::W1,
        Target::S390x => !narrow(conv.from()) && !narrow(conv.to()),
        _ => true,
    }
}

/// `void f(const void *src, void *dst, size_t count)`: each value loaded in its shape,
/// converted by one typed call, stored.
fn build(isa: &dyn TargetIsa, lowering: &Lowering, request: &Request) -> Function {
    let Request::Convert(c) = request else {
        unreachable!("conversions only")
    };
    let conv = ElementConversion::of(c);
    let mut sig = Signature::new(isa.default_call_conv());
    for _ in 0..3 {
        sig.params.push(AbiParam::new(types::I64));
    }
    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    let head = b.create_block();
    let body = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (src, dst, count) = (
        b.block_params(entry)[0],
        b.block_params(entry)[1],
        b.block_params(entry)[2],
    );
    b.append_block_param(head, types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().jump(head, &[zero.into()]);
    b.switch_to_block(head);
    let i = b.block_params(head)[0];
    let more = b.ins().icmp(
        clconv::cranelift_codegen::ir::condcodes::IntCC::UnsignedLessThan,
        i,
        count,
    );
    b.ins().brif(more, body, &[], exit, &[]);
    b.switch_to_block(body);
    let mem = MemFlagsData::new()
        .with_notrap()
        .with_endianness(Endianness::Little);
    let (s, d) = (request.src(), request.dst());
    let (s_ty, s_count) = value_shape(s);
    let p = b.ins().imul_imm_u(i, s.byte_size() as i64);
    let p = b.ins().iadd(src, p);
    let parts: Vec<Value> = (0..s_count)
        .map(|k| {
            b.ins()
                .load(s_ty, mem, p, (k * s_ty.bytes() as usize) as i32)
        })
        .collect();
    let out = lowering.convert(&mut b, conv, &parts).unwrap();
    let (d_ty, d_count) = value_shape(d);
    assert_eq!(out.len(), d_count, "{request}");
    let q = b.ins().imul_imm_u(i, d.byte_size() as i64);
    let q = b.ins().iadd(dst, q);
    for (k, &v) in out.iter().enumerate() {
        b.ins().store(mem, v, q, (k * d_ty.bytes() as usize) as i32);
    }
    let next = b.ins().iadd_imm_u(i, 1);
    b.ins().jump(head, &[next.into()]);
    b.switch_to_block(exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(isa.frontend_config());
    func
}

fn run_on(target: Target) {
    let tools = Toolchain::of(target).expect("a cross target");
    if let Err(why) = tools.check() {
        panic!("{why}");
    }
    let mut requests = Vec::new();
    for conv in conversions() {
        for width in [Width::W1, Width::W2, Width::W4, Width::W8, Width::W16] {
            if width.lanes() * conv.from().bytes() <= 64 && held(target, &conv, width) {
                requests.push((
                    Request::Convert(conv.at_width(width).unwrap()),
                    Layout::Packed,
                ));
            }
        }
    }
    let shapes = Shapes {
        scalar_count: usize::MAX,
        x3_count: usize::MAX,
    };
    let plan = Plan::new(&requests, shapes, SEED, &|t| cross::inputs(t, 128, SEED));

    let start = std::time::Instant::now();
    let isa = target.isa().unwrap();
    // This front end holds half as I16 bits (its loads and stores are value_shape's), so it
    // asks for them back: the typed entry's default is F16, which Cranelift's riscv64 and
    // s390x backends cannot store as vectors.
    let with_isa = Lowering::for_isa(&*isa)
        .unwrap()
        .with_half_values(HalfValues::Bits);
    let mut module = cranelift_object::ObjectModule::new(
        cranelift_object::ObjectBuilder::new(isa.clone(), "builder", default_libcall_names())
            .unwrap(),
    );
    let mut header = String::from("#include <stddef.h>\n");
    for e in &plan.entries {
        let lowering = match e.tier {
            Tier::Optimised => with_isa.clone(),
            Tier::Quick => Lowering::without_isa().with_half_values(HalfValues::Bits),
        };
        let func = build(&*isa, &lowering, &e.request);
        let symbol = e.symbol();
        let id = module
            .declare_function(&symbol, Linkage::Export, &func.signature)
            .unwrap();
        let mut ctx = clconv::cranelift_codegen::Context::for_function(func);
        module
            .define_function(id, &mut ctx)
            .unwrap_or_else(|err| panic!("{}: {symbol}: {err:?}", target.name()));
        let _ = writeln!(header, "void {symbol}(const void *, void *, size_t);");
    }
    let object = module.finish().emit().unwrap();
    let times = Times {
        emit: start.elapsed(),
        ..Times::default()
    };
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cross_builder")
        .join(target.name());
    let run = cross::run_object(&tools, &plan, &dir, 1024, &object, &header, times)
        .unwrap_or_else(|e| panic!("{}: {e}", target.name()));
    let _ = writeln!(std::io::stderr(), "typed entry under QEMU: {run}");
    assert!(run.stopped.is_empty(), "{:?}", run.stopped);
    assert_eq!(
        run.mismatch_count,
        0,
        "{}: {:?}",
        target.name(),
        run.mismatches
    );
    assert_eq!(run.kernels_run, plan.entries.len());
    assert!(run.elements > 10_000, "{}", run.elements);
}

#[test]
fn typed_entry_on_aarch64() {
    run_on(Target::Aarch64);
}

#[test]
fn typed_entry_on_riscv64() {
    run_on(Target::Riscv64);
}

#[test]
fn typed_entry_on_riscv64_v() {
    run_on(Target::Riscv64V);
}

#[test]
fn typed_entry_on_s390x() {
    run_on(Target::S390x);
}
