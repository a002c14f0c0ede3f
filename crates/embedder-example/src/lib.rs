//! A kernel compiler's view of clconv: a crate that depends on the library alone (default
//! features), builds its own Cranelift function with the Cranelift clconv re-exports, asks
//! clconv for one conversion in one call, on its own F32X4, and compiles and runs the function
//! itself: by the typed entry ([`Packer::typed`]: element types, no name) or by a name
//! ([`Packer::new`]).
//!
//! `pack` is what such a compiler would emit for
//! `uchar4 pack(float4 c) { return convert_uchar4_sat_rte(c); }`.

use clconv::cranelift_codegen::ir::Value;
use clconv::cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData};
use clconv::cranelift_codegen::settings::{self, Configurable};
use clconv::cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use clconv::lower::{ElementConversion, LowerError, Lowering};
use clconv::{Rounding, ScalarType};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

/// `fn(colour: *const [f32; 4], pixel: *mut [u8; 4])`, compiled.
type PackFn = unsafe extern "C" fn(*const f32, *mut u8);

/// The compiled `pack` function and the JIT module that owns its code.
pub struct Packer {
    /// Always `Some` until dropped.
    module: Option<JITModule>,
    code: PackFn,
}

/// Something went wrong building or compiling the function.
pub type Error = Box<dyn std::error::Error>;

impl Packer {
    /// Builds `pack` with one `lowering.lower_named(builtin)` call on the colour (one F32X4),
    /// and JIT-compiles it for this machine.
    pub fn new(builtin: &str) -> Result<Packer, Error> {
        Packer::build(|lowering, b, colour| {
            let bytes = lowering.lower_named(b, builtin, &[colour])?;
            Ok(bytes[0])
        })
    }

    /// Builds `pack` with the typed entry: float lanes to uchar lanes, saturating, to nearest
    /// even; the width comes from the F32X4, and the result is an I8X4.
    pub fn typed() -> Result<Packer, Error> {
        Packer::build(|lowering, b, colour| {
            let to_bytes = ElementConversion::new(ScalarType::Float, ScalarType::UChar)
                .saturating()
                .rounding(Rounding::Rte);
            lowering.convert_value(b, to_bytes, colour)
        })
    }

    /// Builds and compiles `pack`, with `convert` lowering the colour into four bytes.
    fn build(
        convert: impl FnOnce(&Lowering, &mut FunctionBuilder, Value) -> Result<Value, LowerError>,
    ) -> Result<Packer, Error> {
        // Without SSE4.1 Cranelift rounds through a libm call that may sit more than 2 GB from
        // the JIT's code: no colocated libcalls, and hand cranelift-jit the symbol.
        let mut flags = settings::builder();
        flags.set("opt_level", "speed")?;
        flags.set("use_colocated_libcalls", "false")?;
        flags.set("is_pic", "false")?;
        let isa = clconv::cranelift_native::builder()?.finish(settings::Flags::new(flags))?;
        let mut jit = JITBuilder::with_isa(isa, default_libcall_names());
        jit.symbol(
            "nearbyintf",
            nearbyintf as extern "C" fn(f32) -> f32 as *const u8,
        );
        let mut module = JITModule::new(jit);

        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(types::I64));
        sig.params.push(AbiParam::new(types::I64));
        let id = module.declare_function("pack", Linkage::Local, &sig)?;
        let mut ctx = module.make_context();
        ctx.func.signature = sig;

        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (src, dst) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let flags = MemFlagsData::trusted();
        let colour = b.ins().load(types::F32X4, flags, src, 0);

        // The one call, with the ISA the module compiles for: its vector recipe (roundps,
        // cvttps2dq, two packs on SSE4.1), not four scalar conversions.
        let lowering = Lowering::for_isa(module.isa())?;
        let pixel = convert(&lowering, &mut b, colour)?;
        assert_eq!(b.func.dfg.value_type(pixel), types::I8X4);
        b.ins().store(flags, pixel, dst, 0);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(module.isa().frontend_config());

        module.define_function(id, &mut ctx)?;
        module.finalize_definitions()?;
        let address = module.get_finalized_function(id);
        // SAFETY: `address` is the function just defined with the signature
        // (I64, I64) -> () in the host's default calling convention, which is
        // `extern "C"`'s; pointers are 64-bit on every host cranelift-native supports.
        let code = unsafe { std::mem::transmute::<*const u8, PackFn>(address) };
        Ok(Packer {
            module: Some(module),
            code,
        })
    }

    /// Packs one colour.
    pub fn pack(&self, colour: [f32; 4]) -> [u8; 4] {
        let mut pixel = [0u8; 4];
        // SAFETY: `code` reads 16 bytes from its first argument and writes 4 to its second,
        // both valid for the call; the module that owns the code lives in `self`.
        unsafe { (self.code)(colour.as_ptr(), pixel.as_mut_ptr()) };
        pixel
    }
}

impl Drop for Packer {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: `code` is never called after this: it lives only in `self`, being dropped.
            unsafe { module.free_memory() };
        }
    }
}

extern "C" fn nearbyintf(x: f32) -> f32 {
    x.round_ties_even()
}
