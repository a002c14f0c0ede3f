//! Packing float RGBA colours into RGBA8 pixels, the way a shader compiler embeds clconv.
//!
//! The compiler owns the Cranelift function: here a loop that scales each `float4` colour by
//! 255 (its own IR). clconv only fills in one OpenCL builtin, `convert_uchar4_sat_rte(float4)`,
//! in the middle of that IR, on a value the compiler already holds. The function is then
//! JIT-compiled with cranelift-jit and checked against clconv's reference interpreter.
//!
//! Run it with `cargo run --example pack_rgba`; it exits non-zero on a mismatch.

use clconv::lower::Lowering;
use clconv::{reference, Extensions, Layout, Request};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AbiParam, Endianness, InstBuilder, MemFlagsData};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::process::ExitCode;

/// `fn(colours: *const [f32; 4], pixels: *mut [u8; 4], count: i64)`
type PackFn = unsafe extern "C" fn(*const f32, *mut u8, i64);

fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    // The ISA: what `cranelift-native` finds on this machine. Without SSE4.1, Cranelift lowers
    // the rounding clconv emits to a call to libm's `nearbyintf`, which may sit more than 2 GB
    // from the JIT's memory: hence no colocated libcalls (and no PIC, which cranelift-jit does
    // not need). cranelift-jit looks that libcall up by name in the process, where a Rust
    // program need not export it, so hand it over (clconv's own JIT does the same).
    let mut flags = settings::builder();
    flags.set("opt_level", "speed")?;
    flags.set("use_colocated_libcalls", "false")?;
    flags.set("is_pic", "false")?;
    let isa = cranelift_native::builder()?.finish(settings::Flags::new(flags))?;
    let mut jit = JITBuilder::with_isa(isa.clone(), default_libcall_names());
    jit.symbol(
        "nearbyintf",
        nearbyintf as extern "C" fn(f32) -> f32 as *const u8,
    );
    let mut module = JITModule::new(jit);

    let mut sig = module.make_signature();
    for _ in 0..3 {
        sig.params.push(AbiParam::new(types::I64));
    }
    let id = module.declare_function("pack_rgba", Linkage::Local, &sig)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;

    // Resolve the builtin once, from the name the compiler's front end saw. clconv validates
    // it here, so a bad name is a typed error before any IR exists.
    let Request::Convert(to_rgba8) =
        Request::parse("convert_uchar4_sat_rte(float4)", Extensions::default())?
    else {
        return Err("convert_uchar4_sat_rte(float4) is a conversion".into());
    };

    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let [entry, head, body, exit] = [(); 4].map(|()| b.create_block());
    b.append_block_params_for_function_params(entry);
    b.append_block_param(head, types::I64);
    b.switch_to_block(entry);
    let &[colours, pixels, count] = b.block_params(entry) else {
        unreachable!("three parameters")
    };
    // Buffers come from the host program: no alignment promise, little-endian, never null here.
    let mem = MemFlagsData::new()
        .with_endianness(Endianness::Little)
        .with_notrap();
    let zero = b.ins().iconst(types::I64, 0);
    b.ins().jump(head, &[zero.into()]);

    b.switch_to_block(head);
    let i = b.block_params(head)[0];
    let more = b.ins().icmp(IntCC::SignedLessThan, i, count);
    b.ins().brif(more, body, &[], exit, &[]);

    b.switch_to_block(body);
    let offset = b.ins().ishl_imm_u(i, 4);
    let at = b.ins().iadd(colours, offset);
    let colour = b.ins().load(types::F32X4, mem, at, 0);
    let k255 = b.ins().f32const(255.0);
    let k255 = b.ins().splat(types::F32X4, k255);
    let scaled = b.ins().fmul(colour, k255);
    // The builtin, lowered on the compiler's own F32X4. clconv's vector convention: a float4 is
    // one F32X4, a uchar4 comes back in the low 4 lanes of one I8X16. Given the ISA, clconv
    // emits the vector recipe its lowering table picks (roundps, cvttps2dq, two packs) rather
    // than four scalar conversions.
    let lowering = Lowering::for_isa(&*isa)?;
    let parts = lowering.convert_vector(&mut b, &to_rgba8, &[scaled])?;
    // The 4 bytes are lane 0 of the same bits seen as I32X4 (a lane-count-changing bitcast
    // needs an explicit byte order); one 32-bit store writes the pixel.
    let bytes_le = MemFlagsData::new().with_endianness(Endianness::Little);
    let words = b.ins().bitcast(types::I32X4, bytes_le, parts[0]);
    let pixel = b.ins().extractlane(words, 0);
    let offset = b.ins().ishl_imm_u(i, 2);
    let at = b.ins().iadd(pixels, offset);
    b.ins().store(mem, pixel, at, 0);
    let next = b.ins().iadd_imm_u(i, 1);
    b.ins().jump(head, &[next.into()]);

    b.switch_to_block(exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(isa.frontend_config());

    module.define_function(id, &mut ctx)?;
    module.clear_context(&mut ctx);
    module.finalize_definitions()?;
    let code = module.get_finalized_function(id);
    // SAFETY: `code` is the function defined above with the signature (i64, i64, i64) in the
    // host's default calling convention, which is `extern "C"`'s (pointers are 64-bit here).
    let pack = unsafe { std::mem::transmute::<*const u8, PackFn>(code) };

    let colours: Vec<[f32; 4]> = vec![
        [0.0, 0.25, 0.75, 1.0],
        // Out of range: clamped.
        [-0.5, 1.2, 2.0, -0.0],
        // NaN -> 0; 0.5 * 255 = 127.5, a tie, -> 128 (even).
        [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.5],
        // Channels whose product is exactly a tie: 0.5 -> 0, 2.5 -> 2, 3.5 -> 4, 254.5 -> 254.
        ties_at([0.5, 2.5, 3.5, 254.5])?,
    ];
    let mut pixels = vec![[0xa5u8; 4]; colours.len()];
    // SAFETY: `colours` holds `len` float4s and `pixels` `len` 4-byte pixels, exactly what the
    // loop reads and writes; the module (and so the code) lives until the end of main.
    unsafe {
        pack(
            colours.as_ptr().cast(),
            pixels.as_mut_ptr().cast(),
            colours.len() as i64,
        )
    };

    // The reference converts the products: compute them with the same f32 multiplication (IEEE
    // round-to-nearest-even, as Cranelift's fmul), so only the conversion is being checked.
    let request = Request::Convert(to_rgba8);
    let mut ok = true;
    println!(
        "{:<52} {:<30} {:<18} reference",
        "colour", "colour * 255", "JIT"
    );
    for (c, got) in colours.iter().zip(&pixels) {
        let scaled = c.map(|x| x * 255.0);
        let src: Vec<u8> = scaled.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut want = [0u8; 4];
        reference::evaluate(&request, Layout::Packed, &src, &mut want)?;
        let mark = if *got == want { "" } else { "  MISMATCH" };
        ok &= *got == want;
        let (c, s) = (format!("{c:?}"), format!("{scaled:?}"));
        println!("{c:<52} {s:<30} {:<18} {want:?}{mark}", format!("{got:?}"));
    }
    // SAFETY: `pack` is not used after this point.
    unsafe { module.free_memory() };
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// libm's `nearbyintf` in the default rounding mode: round to nearest, ties to even.
extern "C" fn nearbyintf(x: f32) -> f32 {
    x.round_ties_even()
}

/// Colour channels whose f32 products with 255 are exactly `targets` (halfway cases), found
/// among the floats next to `target / 255`.
fn ties_at(targets: [f32; 4]) -> Result<[f32; 4], String> {
    let mut out = [0.0; 4];
    for (x, target) in out.iter_mut().zip(targets) {
        let guess = (target / 255.0).to_bits();
        *x = (guess - 16..=guess + 16)
            .map(f32::from_bits)
            .find(|x| *x * 255.0 == target)
            .ok_or_else(|| format!("no float times 255 is exactly {target}"))?;
    }
    Ok(out)
}
