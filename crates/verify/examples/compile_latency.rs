//! The JIT's compile latency on this host, without criterion: for a quick look on a machine
//! (or an emulator, `qemu-aarch64`) where the benchmarks are too heavy. `Jit::compile` of each
//! of the ten benchmark conversions on a fresh `Jit`, in each tier, `ROUNDS` times round robin;
//! prints the median and the 90th percentile per tier over all compiles.
//!
//! ```sh
//! cargo run -p clconv-verify --example compile_latency [ROUNDS]
//! ```
//!
//! Under QEMU the figures are QEMU's (a translated Cranelift), not the hardware's.

use clconv::jit::{Jit, Tiering};
use clconv_verify::report::BENCHMARK_CONVERSIONS;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = match std::env::args().nth(1) {
        Some(n) => n
            .parse()
            .map_err(|_| format!("ROUNDS must be a count, not {n:?}"))?,
        None => 20,
    };
    println!(
        "{} {}: Jit::compile on a fresh Jit, {} conversions x {rounds} rounds",
        std::env::consts::ARCH,
        std::env::consts::OS,
        BENCHMARK_CONVERSIONS.len()
    );
    // The first compiles pay for one-time initialisation (tables, lazy statics).
    for name in BENCHMARK_CONVERSIONS {
        Jit::new()?.compile(name)?;
    }
    for (label, tiering) in [
        ("quick tier", Tiering::QuickOnly),
        ("optimised tier", Tiering::OptimisedOnly),
    ] {
        let mut micros = Vec::with_capacity(rounds * BENCHMARK_CONVERSIONS.len());
        for _ in 0..rounds {
            for name in BENCHMARK_CONVERSIONS {
                let jit = Jit::new()?;
                jit.set_tiering(tiering);
                let start = Instant::now();
                jit.compile(name)?;
                micros.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        micros.sort_by(f64::total_cmp);
        let at = |q: f64| micros[((micros.len() - 1) as f64 * q).round() as usize];
        println!("{label}: median {:.0} µs, p90 {:.0} µs", at(0.5), at(0.9));
    }
    Ok(())
}
