//! Throughput of the reference interpreter (`clconv::reference::evaluate`, soft-float through
//! `rustc_apfloat`): what the differential checks in the test suite cost per element.
//!
//! ```sh
//! cargo bench --bench reference
//! ```
//!
//! Four conversions, one per class the checks exercise most, each on 4 KiB of source data:
//! pseudo-random bits, so NaN, infinities and out-of-range values all occur.

use clconv::{reference, Extensions, Layout, Request};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

const REQUESTS: [&str; 4] = [
    "convert_int4_sat_rte(float4)",
    "convert_float4_rtp(int4)",
    "convert_float2_rtz(double2)",
    "convert_uchar8_sat(short8)",
];

const SOURCE_BYTES: usize = 4 << 10;

fn reference_throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("reference");
    for name in REQUESTS {
        let request = Request::parse(name, Extensions::default()).unwrap();
        let (src_ty, dst_ty) = (request.src(), request.dst());
        let elements = SOURCE_BYTES / src_ty.elem.bytes();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let src: Vec<u8> = (0..SOURCE_BYTES)
            .map(|_| {
                // xorshift64*
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect();
        let mut dst = vec![0u8; elements * dst_ty.elem.bytes()];
        group.throughput(Throughput::Elements(elements as u64));
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                reference::evaluate(
                    &request,
                    Layout::Packed,
                    black_box(&src),
                    black_box(&mut dst),
                )
                .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = reference_throughput
}
criterion_main!(benches);
