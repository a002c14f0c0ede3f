//! Runs split across threads give the same bytes as the reference, for any thread count and
//! vector count (including more threads than vectors), and write nothing past the destination.

use clconv::jit::{Jit, Threads, X64Flags, PARALLEL_THRESHOLD};
use clconv::{reference, Extensions, Layout, Request, Rounding};
use clconv_verify::check::Rng;

fn check_split(name: &str, threads: Threads, vectors: usize) {
    let ext = Extensions::with_fp16();
    let jit = Jit::with_options(X64Flags::Host, ext, Rounding::Rte).unwrap();
    jit.set_threads(threads);
    let request = Request::parse(name, ext).unwrap();
    let kernel = jit.compile_request(&request).unwrap();
    let src_per = clconv::buffer::bytes_per_vector(request.src(), Layout::Packed);
    let dst_per = clconv::buffer::bytes_per_vector(request.dst(), Layout::Packed);
    let mut rng = Rng::new(vectors as u64);
    let src: Vec<u8> = (0..vectors * src_per)
        .map(|_| rng.next_u64() as u8)
        .collect();
    let mut want = vec![0u8; vectors * dst_per];
    reference::evaluate(&request, Layout::Packed, &src, &mut want).unwrap();
    let mut got = vec![0xa5u8; vectors * dst_per + 32];
    kernel
        .run_bytes(Layout::Packed, &src, &mut got[..vectors * dst_per])
        .unwrap();
    assert!(
        got[..vectors * dst_per] == want[..],
        "{name}, {threads:?}, {vectors} vectors"
    );
    assert!(
        got[vectors * dst_per..].iter().all(|&b| b == 0xa5),
        "wrote past the end"
    );
}

#[test]
fn explicit_thread_counts_give_the_reference_bytes() {
    for name in [
        "convert_uchar4_sat_rte(float4)",
        "convert_float2_rtn(ulong2)",
        "as_char16(float4)",
        "convert_half3_rtz(double3)",
    ] {
        for threads in [1, 2, 3, 7] {
            // 70,001 vectors: a run split into parts of at least 64 KiB, ending in a partial one.
            for vectors in [0, 1, 2, 5, 6, 7, 1001, 70_001] {
                check_split(name, Threads::Exactly(threads), vectors);
            }
        }
    }
}

#[test]
fn auto_splits_large_buffers_and_still_matches() {
    // Just over the threshold: Auto uses every core here.
    let vectors = PARALLEL_THRESHOLD / 16 + 3;
    check_split("convert_int4_sat_rte(float4)", Threads::Auto, vectors);
    check_split("convert_int4_sat_rte(float4)", Threads::Auto, 9);
}
