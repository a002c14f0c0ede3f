//! The builder API's vector form (`Lowering::convert_vector`), lane by lane and through the
//! tables' vector recipes (`Lowering::with_isa`), JIT-compiled in a function of our own and
//! compared with the reference for every element pair, several modifiers and every width.

use clconv::lower::{vector_parts, Lowering};
use clconv::request::Conversion;
use clconv::target::Target;
use clconv::{reference, Extensions, Rounding, ScalarType, VectorType, Width};
use clconv_verify::check::{inputs, Rng};
use cranelift_codegen::ir::{
    types, AbiParam, Function, InstBuilder, MemFlagsData, Signature, UserFuncName,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

type Probe = extern "C" fn(*const u8, *mut u8);

/// `fn(src, dst)`: loads the parts of one vector, converts it, stores the parts.
fn build(
    lowering: &Lowering,
    conv: &Conversion,
    isa: &dyn cranelift_codegen::isa::TargetIsa,
) -> Function {
    let mut sig = Signature::new(isa.default_call_conv());
    sig.params.push(AbiParam::new(types::I64));
    sig.params.push(AbiParam::new(types::I64));
    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (src, dst) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let (src_ty, n_in) = vector_parts(conv.src());
    let parts: Vec<_> = (0..n_in)
        .map(|j| {
            b.ins()
                .load(src_ty, MemFlagsData::new(), src, (16 * j) as i32)
        })
        .collect();
    let out = lowering.convert_vector(&mut b, conv, &parts).unwrap();
    assert_eq!(out.len(), vector_parts(conv.dst()).1);
    for (j, v) in out.into_iter().enumerate() {
        b.ins().store(MemFlagsData::new(), v, dst, (16 * j) as i32);
    }
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(isa.frontend_config());
    func
}

fn check_all(with_isa: bool) {
    let isa = Target::Host.isa().unwrap();
    let lowering = if with_isa {
        Lowering::for_isa(&*isa).unwrap()
    } else {
        Lowering::without_isa()
    };
    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let ext = Extensions::with_fp16();
    let mut cases = Vec::new();
    for src in ScalarType::ALL {
        for dst in ScalarType::ALL {
            for width in Width::ALL {
                let mods: &[(bool, Option<Rounding>)] = if dst.is_float() {
                    &[
                        (false, None),
                        (false, Some(Rounding::Rtz)),
                        (false, Some(Rounding::Rtp)),
                    ]
                } else {
                    &[
                        (false, None),
                        (true, Some(Rounding::Rte)),
                        (true, Some(Rounding::Rtn)),
                    ]
                };
                for &(sat, r) in mods {
                    let conv = Conversion::new(
                        VectorType::new(src, width),
                        VectorType::new(dst, width),
                        sat,
                        r,
                        ext,
                    )
                    .unwrap();
                    let func = build(&lowering, &conv, &*isa);
                    let name = format!("probe{}", cases.len());
                    let id = module
                        .declare_function(&name, Linkage::Local, &func.signature)
                        .unwrap();
                    let mut ctx = module.make_context();
                    ctx.func = func;
                    module
                        .define_function(id, &mut ctx)
                        .unwrap_or_else(|e| panic!("{conv}: {e:?}"));
                    module.clear_context(&mut ctx);
                    cases.push((conv, id));
                }
            }
        }
    }
    module.finalize_definitions().unwrap();
    let mut failures = Vec::new();
    let mut rng = Rng::new(7);
    for (conv, id) in &cases {
        // SAFETY: the function was compiled above with the signature (src, dst) of `Probe`,
        // and the module outlives the calls; the buffers hold whole parts (see below).
        let f: Probe = unsafe { std::mem::transmute(module.get_finalized_function(*id)) };
        let (sb, db) = (conv.src().elem.bytes(), conv.dst().elem.bytes());
        let lanes = conv.src().lanes();
        let values = inputs(conv.src().elem, 200, 3);
        let scalar = conv.per_element();
        for chunk in values.chunks(lanes).step_by(7).take(300) {
            // The parts: 16-byte multiples; padding lanes random (they must be ignored).
            let mut src = vec![0u8; vector_parts(conv.src()).1 * 16];
            for byte in src.iter_mut() {
                *byte = rng.next_u64() as u8;
            }
            for (k, &x) in chunk.iter().enumerate() {
                src[k * sb..(k + 1) * sb].copy_from_slice(&x.to_le_bytes()[..sb]);
            }
            let mut dst = vec![0u8; vector_parts(conv.dst()).1 * 16];
            f(src.as_ptr(), dst.as_mut_ptr());
            for (k, &x) in chunk.iter().enumerate() {
                let want = reference::convert_element(&scalar, Rounding::Rte, x).bits;
                let mut got = [0u8; 8];
                got[..db].copy_from_slice(&dst[k * db..(k + 1) * db]);
                let got = u64::from_le_bytes(got);
                if got != want {
                    failures.push(format!(
                        "{conv} lane {k}: input 0x{x:x}, expected 0x{want:x}, got 0x{got:x}"
                    ));
                }
            }
        }
    }
    // SAFETY: no function of the module is running or called after this point.
    unsafe { module.free_memory() };
    for f in failures.iter().take(20) {
        eprintln!("{f}");
    }
    assert!(
        failures.is_empty(),
        "{} mismatching lanes over {} conversions",
        failures.len(),
        cases.len()
    );
}

#[test]
fn vector_form_lane_by_lane_matches_the_reference() {
    check_all(false);
}

#[test]
fn vector_form_through_the_table_recipes_matches_the_reference() {
    check_all(true);
}
