//! The typed entry of the builder API (`Lowering::convert`, `Lowering::reinterpret`) on the
//! value shapes front ends hold: scalars, 64-bit vectors (F16X4, I32X2, F32X2, I8X8), 128-bit
//! vectors (F32X4 for a vec3 or vec4) and several parts, with half as F16 or I16 lanes. Every
//! function is built as a front end builds it (the ISA from `module.isa()`, a `&dyn
//! TargetIsa`), compiled with cranelift-jit, run, and every lane compared with the reference;
//! the same functions compile for every ISA the suite knows (`cross-target`).

use clconv::cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};
use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use clconv::lower::{value_shape, ElementConversion, HalfValues, LowerError, Lowering};
use clconv::rules::Rules;
use clconv::ScalarType::{self, *};
use clconv::{reference, Layout, Request, Rounding, VectorType, Width};
use cranelift_module::Module;

#[path = "common/define.rs"]
mod define;
#[path = "common/jit_module.rs"]
mod jit_module;
use define::define_function;
use jit_module::jit_module;

/// The conversions under test: every class, OpenCL's and WGSL's rules, half both ways.
fn conversions() -> Vec<ElementConversion> {
    let c = ElementConversion::new;
    vec![
        c(Float, Int).rules(Rules::WGSL),
        c(Float, UInt).rules(Rules::WGSL),
        c(Float, Int).saturating().rounding(Rounding::Rte),
        c(Half, Int).rules(Rules::WGSL),
        c(Half, UInt).rules(Rules::WGSL),
        c(Half, Float),
        c(Float, Half),
        c(Float, Half).rounding(Rounding::Rtz),
        c(Int, Float),
        c(UInt, Half),
        c(Int, Half),
        c(Double, Float).rounding(Rounding::Rtp),
        c(Float, Double),
        c(Short, Char).saturating(),
        c(Char, Float),
        c(Double, Long).rules(Rules::WGSL),
        c(Half, UChar).saturating(),
    ]
}

/// The widths each conversion runs at: every width whose source fits in 64 bytes.
fn widths(from: ScalarType) -> impl Iterator<Item = Width> {
    [Width::W1, Width::W2, Width::W4, Width::W8, Width::W16]
        .into_iter()
        .filter(move |w| w.lanes() * from.bytes() <= 64)
}

/// The Cranelift type of one part of `t` with half as `half`.
fn part_type(t: VectorType, half: HalfValues) -> (Type, usize) {
    let (ty, count) = value_shape(t);
    if t.elem == Half && half == HalfValues::F16 {
        let f16 = if ty.is_vector() {
            types::F16.by(ty.lane_count()).unwrap()
        } else {
            types::F16
        };
        return (f16, count);
    }
    (ty, count)
}

/// Builds `fn(src, dst)`: loads the operand's parts, converts them with one typed call, checks
/// the result's Cranelift types, stores the parts one after another.
fn build(
    b: &mut FunctionBuilder,
    lowering: &Lowering,
    conv: ElementConversion,
    width: Width,
    half: HalfValues,
) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (src, dst) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let flags = MemFlagsData::trusted();
    let (ty, count) = part_type(VectorType::new(conv.from(), width), half);
    let parts: Vec<Value> = (0..count)
        .map(|i| {
            b.ins()
                .load(ty, flags, src, (i * ty.bytes() as usize) as i32)
        })
        .collect();
    let out = lowering.convert(b, conv, &parts).unwrap();
    let (out_ty, out_count) = part_type(VectorType::new(conv.to(), width), half);
    assert_eq!(out.len(), out_count, "{conv:?} at {width:?}");
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(b.func.dfg.value_type(v), out_ty, "{conv:?} at {width:?}");
        b.ins()
            .store(flags, v, dst, (i * out_ty.bytes() as usize) as i32);
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
}

/// Special bit patterns of an element of `bytes` bytes (NaNs, infinities, subnormals, the
/// edges WGSL's rule moves), then pseudo-random ones.
fn inputs(from: ScalarType, count: usize) -> Vec<u64> {
    let specials: Vec<u64> = match from {
        Half => vec![
            0x7e00, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x0001, 0x8000, 0x3c00, 0xbe00,
        ],
        Float => vec![
            0x7fc0_0000,
            0x4f32_d05e, // 3e9
            0xcf32_d05e, // -3e9
            0x4eff_ffff, // 2147483520
            0x4f00_0000, // 2^31
            0x4f80_0000, // 2^32
            0x4f7f_ffff, // 4294967040
            0xbfc0_0000, // -1.5
            0x7f80_0000,
            0xff80_0000,
            0x477f_e000, // 65504
            0x477f_f000, // 65520: rounds to infinity in half
            1,
        ],
        Double => vec![
            0x7ff8_0000_0000_0000,
            0x43e0_0000_0000_0000,
            0x43df_ffff_ffff_ffff,
            0xc3e0_0000_0000_0000,
            0x3ff0_0000_0000_0001,
            0x7ff0_0000_0000_0000,
        ],
        _ => vec![0, 1, u64::MAX, 0x7f, 0x80, 0x8000_0000, 0x7fff_ffff],
    };
    let mask = if from.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << from.bits()) - 1
    };
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ from.bits() as u64;
    let mut out: Vec<u64> = specials.iter().map(|v| v & mask).collect();
    while out.len() < count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x & mask);
    }
    out
}

fn run_and_compare(code: *const u8, conv: ElementConversion, width: Width, label: &str) {
    // SAFETY: `code` is `fn(src, dst)` built by `build` for the host's calling convention: it
    // reads one operand (at most 64 bytes) and writes one result (at most 128 bytes), both
    // within the 256-byte buffers below.
    let f =
        unsafe { std::mem::transmute::<*const u8, unsafe extern "C" fn(*const u8, *mut u8)>(code) };
    let request = Request::Convert(conv.at_width(width).unwrap());
    let (se, de) = (conv.from().bytes(), conv.to().bytes());
    let n = width.lanes();
    for value in inputs(conv.from(), 48 * n).chunks_exact(n) {
        let mut src = [0u8; 256];
        for (i, bits) in value.iter().enumerate() {
            src[i * se..(i + 1) * se].copy_from_slice(&bits.to_le_bytes()[..se]);
        }
        let mut expected = vec![0u8; n * de];
        reference::evaluate(&request, Layout::Packed, &src[..n * se], &mut expected).unwrap();
        let mut got = [0u8; 256];
        // SAFETY: see above; both buffers are live and distinct.
        unsafe { f(src.as_ptr(), got.as_mut_ptr()) };
        assert_eq!(&got[..n * de], &expected[..], "{label} on {value:x?}");
    }
}

/// Builds, runs and checks every conversion at every width and half form in `module`, with
/// a lowering from the module's ISA and one without; returns the functions run.
fn every_shape_in(mut module: cranelift_jit::JITModule) -> usize {
    // What a front end has: the module's ISA, lent.
    let with_isa = Lowering::for_isa(module.isa()).unwrap();
    assert!(with_isa.has_vector_recipes());
    let mut n = 0;
    for conv in conversions() {
        for width in widths(conv.from()) {
            for half in [HalfValues::Bits, HalfValues::F16] {
                for lowering in [with_isa.clone(), Lowering::without_isa()] {
                    let lowering = lowering.with_half_values(half);
                    let label = format!("{conv:?} at {width:?}, {half:?}, {lowering:?}");
                    let id = define_function(
                        &mut module,
                        &format!("f{n}"),
                        &[types::I64; 2],
                        &[],
                        |b| build(b, &lowering, conv, width, half),
                    );
                    module.finalize_definitions().unwrap();
                    let code = module.get_finalized_function(id);
                    run_and_compare(code, conv, width, &label);
                    n += 1;
                }
            }
        }
    }
    // SAFETY: no function of the module is called after this.
    unsafe { module.free_memory() };
    n
}

#[test]
fn every_shape_converts_every_lane_exactly_on_the_host() {
    assert!(every_shape_in(jit_module()) > 200);
}

/// The same on every x86-64 flag set this CPU runs (the tables pick other recipes on each);
/// the ones it lacks are named on stderr, as the matrix test does.
#[cfg(all(feature = "cross-target", target_arch = "x86_64"))]
#[test]
fn every_shape_converts_every_lane_exactly_on_every_x86_64_flag_set() {
    use clconv::target::Target;
    let runs = [
        (Target::X86_64Sse2, true),
        (
            Target::X86_64Sse41,
            std::arch::is_x86_feature_detected!("sse4.1"),
        ),
        (
            Target::X86_64Avx2,
            std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma"),
        ),
        (
            Target::X86_64Avx512,
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512dq"),
        ),
    ];
    for (target, runs_here) in runs {
        if !runs_here {
            eprintln!("typed entry on {target:?}: NOT RUN (this CPU lacks it)");
            continue;
        }
        let n = every_shape_in(jit_module::jit_module_for(target.isa().unwrap()));
        eprintln!("typed entry on {target:?}: {n} functions, every lane as the reference");
        assert!(n > 200);
    }
}

/// With the ISA, a vector conversion is the table's vector recipe, not a lane-by-lane
/// sequence: `convert_int4_sat(float4)` on SSE4.1 is a handful of instructions.
#[cfg(feature = "cross-target")]
#[test]
fn a_lowering_from_a_lent_isa_uses_the_vector_recipe() {
    use clconv::target::Target;
    let isa = Target::X86_64Sse41.isa().unwrap();
    let count = |lowering: &Lowering| {
        let mut func = clconv::cranelift_codegen::ir::Function::new();
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let block = b.create_block();
        b.switch_to_block(block);
        let x = b.append_block_param(block, types::F32X4);
        let conv = ElementConversion::new(Float, Int).saturating();
        let y = lowering.convert_value(&mut b, conv, x).unwrap();
        assert_eq!(b.func.dfg.value_type(y), types::I32X4);
        b.ins().return_(&[y]);
        b.seal_all_blocks();
        b.func.layout.block_insts(block).count()
    };
    let lent: &dyn clconv::cranelift_codegen::isa::TargetIsa = &*isa;
    let vector = count(&Lowering::for_isa(lent).unwrap());
    let lanes = count(&Lowering::without_isa());
    assert!(vector <= 5, "{vector} instructions with the ISA");
    assert!(lanes >= 12, "{lanes} instructions lane by lane");
}

/// Every function of the host test also compiles for every ISA clconv targets: the moves in
/// and out of 64-bit vectors and F16 lanes use only instructions each backend lowers. riscv64
/// without V has no vector registers, so it takes scalars only; riscv64 with V has no F16
/// vectors (Cranelift lowers none without Zvfh), so it takes half vectors as I16 lanes; s390x
/// has no vectors narrower than 128 bits, so it takes scalars and 128-bit vectors.
#[cfg(feature = "cross-target")]
#[test]
fn every_shape_compiles_on_every_isa() {
    use clconv::cranelift_codegen::ir::{AbiParam, Function, Signature, UserFuncName};
    use clconv::cranelift_codegen::{control::ControlPlane, Context};
    use clconv::target::Target;
    for target in Target::ALL {
        let isa = target.isa().unwrap();
        let lowering = Lowering::for_isa(&*isa).unwrap();
        let mut compiled = 0;
        for conv in conversions() {
            for width in widths(conv.from()) {
                if target == Target::Riscv64 && width != Width::W1 {
                    continue;
                }
                for half in [HalfValues::Bits, HalfValues::F16] {
                    // Cranelift's riscv64 has no F16 vectors without Zvfh (no rule moves
                    // them): a front end cannot hold one there to begin with.
                    let f16_vector = half == HalfValues::F16 && width != Width::W1;
                    let half_involved = conv.from() == Half || conv.to() == Half;
                    if target == Target::Riscv64V && f16_vector && half_involved {
                        continue;
                    }
                    // Cranelift's s390x has no vectors narrower than 128 bits ("Unexpected
                    // SSA-value type: f32x2"): there a front end holds 128-bit ones only.
                    let narrow = |t: ScalarType| {
                        let (ty, _) = value_shape(VectorType::new(t, width));
                        ty.is_vector() && ty.bits() < 128
                    };
                    if target == Target::S390x && (narrow(conv.from()) || narrow(conv.to())) {
                        continue;
                    }
                    let mut sig = Signature::new(isa.default_call_conv());
                    sig.params.push(AbiParam::new(types::I64));
                    sig.params.push(AbiParam::new(types::I64));
                    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
                    let mut fctx = FunctionBuilderContext::new();
                    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
                    let lowering = lowering.clone().with_half_values(half);
                    build(&mut b, &lowering, conv, width, half);
                    b.finalize(isa.frontend_config());
                    let mut ctx = Context::for_function(func);
                    ctx.compile(&*isa, &mut ControlPlane::default())
                        .unwrap_or_else(|e| {
                            panic!("{target:?}: {conv:?} at {width:?}, {half:?}: {e:?}")
                        });
                    compiled += 1;
                }
            }
        }
        assert!(compiled > 30, "{target:?}: {compiled}");
    }
}

#[test]
fn typed_errors_say_what_to_pass() {
    let mut func = clconv::cranelift_codegen::ir::Function::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let block = b.create_block();
    b.switch_to_block(block);
    let f32x4 = b.append_block_param(block, types::F32X4);
    let i32x4 = b.append_block_param(block, types::I32X4);
    let f32x2 = b.append_block_param(block, types::F32X2);
    let three_bytes = b.append_block_param(block, types::I8X4);
    let lowering = Lowering::without_isa();
    // Lanes of another type than the conversion's source.
    let e = lowering
        .convert(&mut b, ElementConversion::new(Float, Int), &[i32x4])
        .unwrap_err();
    assert!(matches!(e, LowerError::Operand { .. }), "{e:?}");
    assert!(e.to_string().contains("f32 lanes"), "{e}");
    // Parts of different types.
    let e = lowering
        .convert(&mut b, ElementConversion::new(Float, Int), &[f32x4, f32x2])
        .unwrap_err();
    assert!(e.to_string().contains("128-bit parts"), "{e}");
    // Three 128-bit parts: 12 lanes is no width.
    let e = lowering
        .convert(
            &mut b,
            ElementConversion::new(Float, Int),
            &[f32x4, f32x4, f32x4],
        )
        .unwrap_err();
    assert!(e.to_string().contains("12 lanes"), "{e}");
    // _sat into a float, from the request's own check.
    let e = lowering
        .convert(
            &mut b,
            ElementConversion::new(Int, Float).saturating(),
            &[i32x4],
        )
        .unwrap_err();
    assert!(e.to_string().contains("_sat"), "{e}");
    // One value asked for where the result is two parts.
    let e = lowering
        .convert_value(&mut b, ElementConversion::new(Float, Double), f32x4)
        .unwrap_err();
    assert!(e.to_string().contains("Lowering::convert"), "{e}");
    // A reinterpretation into lanes that do not divide the bits, and none at all.
    let e = lowering
        .reinterpret_value(&mut b, Double, three_bytes)
        .unwrap_err();
    assert!(
        e.to_string().contains("no whole number of double lanes"),
        "{e}"
    );
    let e = lowering.reinterpret(&mut b, Long, &[]).unwrap_err();
    assert!(e.to_string().contains("no operand"), "{e}");
}

/// No dead IR: through the typed entry, the instructions a conversion emits are all used. Every
/// conversion of the matrix's element pairs (`_sat` where legal, every rounding, OpenCL's rules
/// and, from floats into integers, WGSL's) at every width whose operand fits in 64 bytes, held
/// as a front end holds it (half as I16 lanes), into a function that returns the result's parts;
/// an instruction with no side effect whose results nothing uses is a failure.
#[test]
fn the_typed_entry_emits_no_dead_instructions() {
    use clconv::cranelift_codegen::ir::{AbiParam, Function, Signature};
    use clconv::cranelift_codegen::isa::CallConv;
    use std::collections::HashSet;
    let isa = clconv::cranelift_native::builder()
        .unwrap()
        .finish(clconv::cranelift_codegen::settings::Flags::new(
            clconv::cranelift_codegen::settings::builder(),
        ))
        .unwrap();
    let lowering = Lowering::for_isa(&*isa).unwrap();
    let mut dead = Vec::new();
    let mut functions = 0;
    for from in ScalarType::ALL {
        for to in ScalarType::ALL {
            for saturate in [false, true] {
                for rounding in [None, Some(Rounding::Rte), Some(Rounding::Rtz)] {
                    for wgsl in [false, true] {
                        let mut conv = ElementConversion::new(from, to);
                        if saturate {
                            conv = conv.saturating();
                        }
                        if let Some(r) = rounding {
                            conv = conv.rounding(r);
                        }
                        if wgsl {
                            if !(from.is_float() && to.is_integer()) || from.bits() < 16 {
                                continue;
                            }
                            conv = conv.rules(Rules::WGSL);
                        }
                        for width in widths(from) {
                            if conv.at_width(width).is_err() {
                                continue;
                            }
                            let (ty, count) =
                                part_type(VectorType::new(from, width), HalfValues::Bits);
                            let mut sig = Signature::new(CallConv::SystemV);
                            sig.params.extend((0..count).map(|_| AbiParam::new(ty)));
                            let mut func = Function::with_name_signature(Default::default(), sig);
                            let mut fctx = FunctionBuilderContext::new();
                            let mut b = FunctionBuilder::new(&mut func, &mut fctx);
                            let entry = b.create_block();
                            b.append_block_params_for_function_params(entry);
                            b.switch_to_block(entry);
                            let parts = b.block_params(entry).to_vec();
                            let Ok(out) = lowering.convert(&mut b, conv, &parts) else {
                                continue;
                            };
                            b.ins().return_(&out);
                            b.seal_all_blocks();
                            functions += 1;
                            let dfg = &func.dfg;
                            let used: HashSet<Value> = func
                                .layout
                                .blocks()
                                .flat_map(|bl| func.layout.block_insts(bl))
                                .flat_map(|i| dfg.inst_values(i).collect::<Vec<_>>())
                                .map(|v| dfg.resolve_aliases(v))
                                .collect();
                            for block in func.layout.blocks() {
                                for inst in func.layout.block_insts(block) {
                                    let op = dfg.insts[inst].opcode();
                                    let results = dfg.inst_results(inst);
                                    if op.is_terminator()
                                        || op.can_store()
                                        || op.is_call()
                                        || op.can_trap()
                                        || results.is_empty()
                                    {
                                        continue;
                                    }
                                    if results.iter().all(|r| !used.contains(r)) {
                                        dead.push(format!(
                                            "{conv:?} at {width:?}: {}",
                                            dfg.display_inst(inst)
                                        ));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    let kinds: HashSet<String> = dead
        .iter()
        .map(|d| {
            d.split(": ")
                .nth(1)
                .unwrap_or("")
                .split_whitespace()
                .find(|w| {
                    w.chars().next().is_some_and(|c| c.is_ascii_lowercase()) && !w.starts_with('v')
                })
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(functions > 5000, "{functions} functions");
    assert!(
        dead.is_empty(),
        "{} dead instructions in {functions} functions ({kinds:?}), e.g. {:#?}",
        dead.len(),
        &dead[..dead.len().min(15)]
    );
}

/// Bools as a front end holds them ([`BoolValues`]): I8 0/1, I32 0/1, or masks as wide as the
/// number (all ones for true), to and from every kind of number, scalar and vectors, each lane
/// against the reference's bool bytes (expanded to the holding by hand: 1, or all ones).
#[test]
fn bools_come_and_go_as_the_caller_holds_them() {
    use clconv::lower::BoolValues;
    let mut module = jit_module();
    let with_isa = Lowering::for_isa(module.isa()).unwrap();
    let c = ElementConversion::new;
    let conversions = [
        c(Float, Bool),
        c(Half, Bool),
        c(Double, Bool),
        c(Int, Bool),
        c(Char, Bool),
        c(Bool, Float),
        c(Bool, Half),
        c(Bool, Double),
        c(Bool, Int),
        c(Bool, UChar),
    ];
    let mut n = 0;
    for holding in [BoolValues::I8, BoolValues::I32, BoolValues::Mask] {
        // The integer a bool lane is held in, on each side: a mask from a bool operand is
        // taken as 32-bit lanes here (any width reads).
        let held = |conv: ElementConversion| match holding {
            BoolValues::I8 => UChar,
            BoolValues::I32 => UInt,
            BoolValues::Mask if conv.from() == Bool => UInt,
            BoolValues::Mask => {
                ScalarType::of(clconv::NumberKind::Unsigned, conv.from().bytes() as u32).unwrap()
            }
        };
        for conv in conversions {
            for width in [Width::W1, Width::W2, Width::W4, Width::W8, Width::W16] {
                let from = if conv.from() == Bool {
                    held(conv)
                } else {
                    conv.from()
                };
                let to = if conv.to() == Bool {
                    held(conv)
                } else {
                    conv.to()
                };
                let lowering = with_isa.clone().with_bool_values(holding);
                let id =
                    define_function(&mut module, &format!("b{n}"), &[types::I64; 2], &[], |b| {
                        let entry = b.create_block();
                        b.append_block_params_for_function_params(entry);
                        b.switch_to_block(entry);
                        let (src, dst) = (b.block_params(entry)[0], b.block_params(entry)[1]);
                        let flags = MemFlagsData::trusted();
                        let (ty, count) = part_type(VectorType::new(from, width), HalfValues::F16);
                        let parts: Vec<Value> = (0..count)
                            .map(|i| {
                                b.ins()
                                    .load(ty, flags, src, (i * ty.bytes() as usize) as i32)
                            })
                            .collect();
                        let out = lowering.convert(b, conv, &parts).unwrap();
                        let (out_ty, out_count) =
                            part_type(VectorType::new(to, width), HalfValues::F16);
                        assert_eq!(out.len(), out_count, "{conv:?} at {width:?}, {holding:?}");
                        for (i, &v) in out.iter().enumerate() {
                            assert_eq!(
                                b.func.dfg.value_type(v),
                                out_ty,
                                "{conv:?} at {width:?}, {holding:?}"
                            );
                            b.ins()
                                .store(flags, v, dst, (i * out_ty.bytes() as usize) as i32);
                        }
                        b.ins().return_(&[]);
                        b.seal_all_blocks();
                    });
                module.finalize_definitions().unwrap();
                let code = module.get_finalized_function(id);
                // SAFETY: `code` is fn(src, dst) built above for the host's calling convention;
                // it reads at most 128 bytes and writes at most 128, within the buffers below.
                let f = unsafe {
                    std::mem::transmute::<*const u8, unsafe extern "C" fn(*const u8, *mut u8)>(code)
                };
                let request = Request::Convert(conv.at_width(width).unwrap());
                let lanes = width.lanes();
                let (se, de) = (from.bytes(), to.bytes());
                let true_bits = |bytes: usize| match holding {
                    BoolValues::Mask => u64::MAX >> (64 - 8 * bytes),
                    _ => 1,
                };
                for value in inputs(conv.from(), 16 * lanes).chunks_exact(lanes) {
                    // A bool operand: the pattern's low bit says true or false, held as the
                    // caller holds it; the reference reads the same truth as bytes.
                    let truth: Vec<bool> = value.iter().map(|v| v & 1 == 1).collect();
                    let (src_elems, reference_src): (Vec<u64>, Vec<u8>) = if conv.from() == Bool {
                        (
                            truth
                                .iter()
                                .map(|&t| if t { true_bits(se) } else { 0 })
                                .collect(),
                            truth.iter().map(|&t| t as u8).collect(),
                        )
                    } else {
                        let bytes = value
                            .iter()
                            .flat_map(|v| v.to_le_bytes()[..se].to_vec())
                            .collect();
                        (value.to_vec(), bytes)
                    };
                    let mut src = [0u8; 256];
                    for (i, bits) in src_elems.iter().enumerate() {
                        src[i * se..(i + 1) * se].copy_from_slice(&bits.to_le_bytes()[..se]);
                    }
                    let mut expected = vec![0u8; lanes * conv.to().bytes()];
                    reference::evaluate(&request, Layout::Packed, &reference_src, &mut expected)
                        .unwrap();
                    let expected: Vec<u8> = if conv.to() == Bool {
                        expected
                            .iter()
                            .flat_map(|&t| {
                                let bits = if t != 0 { true_bits(de) } else { 0 };
                                bits.to_le_bytes()[..de].to_vec()
                            })
                            .collect()
                    } else {
                        expected
                    };
                    let mut got = [0u8; 256];
                    // SAFETY: see above; both buffers are live and distinct.
                    unsafe { f(src.as_ptr(), got.as_mut_ptr()) };
                    assert_eq!(
                        &got[..lanes * de],
                        &expected[..],
                        "{conv:?} at {width:?}, {holding:?} on {value:x?}"
                    );
                }
                n += 1;
            }
        }
    }
    assert_eq!(n, 3 * 10 * 5);
    // SAFETY: no function of the module is called after this.
    unsafe { module.free_memory() };
}

/// A front end that holds F16 gets F16 back without asking: `f16(x)` of an F32 is an F16, of an
/// F32X4 an F16X4; I16 halves in give I16 halves out.
#[test]
fn half_comes_back_as_f16_unless_asked() {
    let mut func = clconv::cranelift_codegen::ir::Function::new();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let block = b.create_block();
    b.switch_to_block(block);
    let x = b.append_block_param(block, types::F32);
    let v = b.append_block_param(block, types::F32X4);
    let bits = b.append_block_param(block, types::I16X4);
    let lowering = Lowering::without_isa();
    let to_half = ElementConversion::new(Float, Half);
    let h = lowering.convert_value(&mut b, to_half, x).unwrap();
    assert_eq!(b.func.dfg.value_type(h), types::F16);
    let h4 = lowering.convert_value(&mut b, to_half, v).unwrap();
    assert_eq!(b.func.dfg.value_type(h4), types::F16X4);
    let rtz = ElementConversion::new(Half, Half);
    let same = lowering.convert_value(&mut b, rtz, bits).unwrap();
    assert_eq!(b.func.dfg.value_type(same), types::I16X4);
    let asked = lowering.with_half_values(HalfValues::Bits);
    let h = asked.convert_value(&mut b, to_half, x).unwrap();
    assert_eq!(b.func.dfg.value_type(h), types::I16);
}
