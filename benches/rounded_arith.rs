//! The cost of each rounding mode relative to rte (the native instruction), for add, mul, div,
//! sqrt and fma on `float4` batch kernels over 64 KiB buffers (16,384 floats per operand), on
//! this machine's ISA (FMA instructions); and, besides, fma on `double2` (the same 16,384
//! elements, 128 KiB), where the format-generic method runs.
//!
//! Each group is one operation; its members are the four modes on the same inputs, the directed
//! ones twice: as the JIT compiles them by default (the native instruction under MXCSR's
//! rounding control, `DirectedArith::RoundingControl`) and as `mode-exact`, the exact
//! nearest-even sequences that code lowered into a caller's function runs
//! (`DirectedArith::ExactSequences`), so the ratio `time(mode) / time(rte)` is read off within
//! one run. The inputs are random floats in
//! [2^-8, 2^8) of both signs (positive for sqrt): the common case, where no lane needs the
//! subnormal or overflow handling (which the lowering computes in every lane regardless, as it
//! has no branches, so the hard cases cost the same).
//!
//! ```sh
//! cargo bench --bench rounded_arith -- --warm-up-time 1 --measurement-time 2
//! ```

use clconv::arith::ArithRequest;
use clconv::arith_kernel::DirectedArith;
use clconv::jit::Jit;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const FLOATS: usize = 64 * 1024 / 4;

/// xorshift64*: deterministic inputs.
fn random_floats(seed: u64, positive: bool) -> Vec<f32> {
    let mut s = seed;
    (0..FLOATS)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let r = s.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let exponent = (r >> 40) % 16; // 2^-8 .. 2^7
            let mantissa = (r & 0x7f_ffff) as u32;
            let sign = if positive {
                0
            } else {
                ((r >> 63) as u32) << 31
            };
            f32::from_bits(sign | ((119 + exponent as u32) << 23) | mantissa)
        })
        .collect()
}

fn modes(c: &mut Criterion) {
    let jit = Jit::new().expect("a JIT for this machine");
    let exact = Jit::new().expect("a JIT for this machine");
    exact.set_directed_arith(DirectedArith::ExactSequences);
    // rte, then each directed mode by the rounding control and by the exact sequences.
    let members = [
        ("rte", "rte", &jit),
        ("rtz", "rtz", &jit),
        ("rtz-exact", "rtz", &exact),
        ("rtp", "rtp", &jit),
        ("rtp-exact", "rtp", &exact),
        ("rtn", "rtn", &jit),
        ("rtn-exact", "rtn", &exact),
    ];
    let a = random_floats(1, false);
    let b = random_floats(2, false);
    let cc = random_floats(3, false);
    let positive = random_floats(4, true);
    let mut dst = vec![0f32; FLOATS];
    for op in ["add", "mul", "div", "sqrt", "fma"] {
        let mut group = c.benchmark_group(format!("{op}(float4) 64KiB"));
        group.throughput(Throughput::Elements(FLOATS as u64));
        for (member, mode, jit) in members {
            let request = ArithRequest::parse(&format!("{op}_{mode}(float4)")).unwrap();
            let kernel = jit.compile_arith_request(&request).unwrap();
            let operands: Vec<&[f32]> = match op {
                "sqrt" => vec![&positive],
                "fma" => vec![&a, &b, &cc],
                _ => vec![&a, &b],
            };
            group.bench_function(member, |bench| {
                bench.iter(|| kernel.run(&operands, &mut dst).unwrap())
            });
        }
        group.finish();
    }
    // Besides: fma on double2, where the format-generic method (no wider format) runs.
    let wide = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    let (da, db, dc) = (wide(&a), wide(&b), wide(&cc));
    let mut ddst = vec![0f64; FLOATS];
    let mut group = c.benchmark_group("fma(double2) 128KiB");
    group.throughput(Throughput::Elements(FLOATS as u64));
    for (member, mode, jit) in members {
        let kernel = jit.compile_arith(&format!("fma_{mode}(double2)")).unwrap();
        let operands: Vec<&[f64]> = vec![&da, &db, &dc];
        group.bench_function(member, |bench| {
            bench.iter(|| kernel.run(&operands, &mut ddst).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, modes);
criterion_main!(benches);
