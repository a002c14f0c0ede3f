//! The JIT's two tiers: a tiered JIT answers with the quick kernel and swaps the optimised one
//! in once the kernel has run; both give the reference's bytes at every buffer length around the loop granule; the
//! kernels without a quick form start optimised; and a JIT dropped with work queued is fine.
#![cfg(feature = "jit")]

use clconv::jit::{Jit, Tier, Tiering, X64Flags};
use clconv::{buffer, reference, Extensions, Layout, Request, Rounding};

/// Source bytes for `n` vectors of `r`: a spread of bit patterns (specials included).
fn source(r: &Request, n: usize) -> Vec<u8> {
    let bytes = buffer::bytes_per_vector(r.src(), Layout::Packed) * n;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..bytes)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Every 16th byte a zero or 0xff, for zeros, NaNs and infinities.
            match i % 16 {
                3 => 0,
                7 => 0xff,
                _ => x as u8,
            }
        })
        .collect()
}

fn run(jit: &Jit, r: &Request, src: &[u8], dst_len: usize) -> Vec<u8> {
    let mut got = vec![0xa5u8; dst_len];
    jit.compile_request(r)
        .unwrap()
        .run_bytes(Layout::Packed, src, &mut got)
        .unwrap();
    got
}

#[test]
fn tiered_compile_answers_quick_then_swaps_in_the_optimised_kernel() {
    let r = Request::parse("convert_uchar4_sat_rte(float4)", Extensions::default()).unwrap();
    let jit = Jit::new().unwrap();
    assert_eq!(jit.tiering(), Tiering::Tiered);
    let k = jit.compile_request(&r).unwrap();
    // The background compile takes hundreds of microseconds; the answer came first.
    let first = k.tier().unwrap();
    jit.finish_tier_up();
    assert_eq!(k.tier(), Some(Tier::Optimised), "first was {first:?}");
    // A kernel from the cache shares the upgraded code.
    assert_eq!(
        jit.compile_request(&r).unwrap().tier(),
        Some(Tier::Optimised)
    );
    // An optimised-only JIT never had a quick kernel.
    let opt = Jit::new().unwrap();
    opt.set_tiering(Tiering::OptimisedOnly);
    assert_eq!(
        opt.compile_request(&r).unwrap().tier(),
        Some(Tier::Optimised)
    );
}

#[test]
fn a_tiered_kernel_tiers_up_from_its_first_run() {
    let jit = Jit::new().unwrap();
    let k = jit.compile("convert_int4_sat_rte(float4)").unwrap();
    let other = jit.compile("convert_uchar8_sat(short8)").unwrap();
    // Compiled, never run: nothing queued, so waiting for the background thread changes nothing.
    clconv::jit::wait_for_background_compiles();
    assert_eq!(k.tier(), Some(Tier::Quick));
    assert_eq!(other.tier(), Some(Tier::Quick));
    // The first run queues the optimised compile (the run itself may use either tier).
    let mut out = [0i32; 4];
    k.run(&[0.5f32, 1.5, -2.5, f32::NAN], &mut out).unwrap();
    assert_eq!(out, [0, 2, -2, 0]);
    clconv::jit::wait_for_background_compiles();
    assert_eq!(k.tier(), Some(Tier::Optimised));
    assert_eq!(other.tier(), Some(Tier::Quick));
    // `finish_tier_up` queues the kernels not run yet.
    jit.finish_tier_up();
    assert_eq!(other.tier(), Some(Tier::Optimised));
}

#[test]
fn both_tiers_match_the_reference_at_every_length_around_the_granule() {
    let ext = Extensions::with_fp16();
    let quick = Jit::with_options(X64Flags::Host, ext, Rounding::Rte).unwrap();
    quick.set_tiering(Tiering::QuickOnly);
    let optimised = Jit::with_options(X64Flags::Host, ext, Rounding::Rte).unwrap();
    optimised.set_tiering(Tiering::OptimisedOnly);
    for name in [
        "convert_int4_sat_rte(float4)",
        "convert_uchar4_sat_rte(float4)",
        "convert_float4_rtp(int4)",
        "convert_float2_rtz(double2)",
        "convert_uchar8_sat(short8)",
        "convert_char3(int3)",
        "convert_half8_rtn(float8)",
        "convert_float2_rtn(ulong2)",
    ] {
        let r = Request::parse(name, ext).unwrap();
        assert_eq!(quick.compile_request(&r).unwrap().tier(), Some(Tier::Quick));
        // Up to 131 elements: no whole granule (at most 128 elements), one, and more, each
        // with every tail.
        for n in 0..=131usize.div_ceil(r.src().lanes()) {
            let src = source(&r, n);
            let dst_len = buffer::bytes_per_vector(r.dst(), Layout::Packed) * n;
            let mut want = vec![0u8; dst_len];
            reference::evaluate(&r, Layout::Packed, &src, &mut want).unwrap();
            assert_eq!(
                run(&quick, &r, &src, dst_len),
                want,
                "{name} quick, {n} vectors"
            );
            assert_eq!(
                run(&optimised, &r, &src, dst_len),
                want,
                "{name} optimised, {n} vectors"
            );
        }
    }
}

/// Every kernel has a quick form: the double -> narrow integer kernels, which Cranelift 0.135's
/// x86-64 backend compiled only with its optimisation passes while their `snarrow` idiom took
/// its zero from a `splat`, compile without them since the zero is a `vconst`.
#[test]
fn every_kernel_has_a_quick_form() {
    let ext = Extensions::default();
    let jit = Jit::new().unwrap();
    jit.set_tiering(Tiering::QuickOnly);
    for r in Request::all(ext) {
        let tier = jit.compile_request(&r).unwrap().tier().unwrap();
        assert_eq!(tier, Tier::Quick, "{r}");
    }
}

#[test]
fn a_jit_dropped_with_tier_ups_queued_is_fine() {
    for _ in 0..20 {
        let jit = Jit::new().unwrap();
        let k = jit.compile("convert_float4_rtp(int4)").unwrap();
        let mut out = [0f32; 4];
        // The first run queues the optimised compile.
        k.run(&[1i32, 2, 3, 4], &mut out).unwrap();
        drop(jit);
        // The kernel holds the JIT: its code (either tier) stays valid.
        k.run(&[16_777_217i32, -3, 0, i32::MAX], &mut out).unwrap();
        assert_eq!(out, [16_777_218.0, -3.0, 0.0, 2_147_483_648.0]);
        drop(k);
    }
    // Every queued job finds its JIT alive or gone; a new JIT still tiers up.
    let jit = Jit::new().unwrap();
    let k = jit.compile("convert_int4(float4)").unwrap();
    jit.finish_tier_up();
    assert_eq!(k.tier(), Some(Tier::Optimised));
}
