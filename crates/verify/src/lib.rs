//! # clconv-verify
//!
//! What checks clconv, kept beside the library so an embedder never compiles it:
//!
//! - [`check`]: the differential checker (a JIT kernel against the reference interpreter, bit
//!   for bit) and its input generators.
//! - [`cross`]: ahead-of-time objects for aarch64, riscv64 and s390x run under QEMU with a C
//!   driver, against the reference.
//! - [`exhaustive`]: every input of the 8-, 16- and 32-bit sources, through the fast path whose
//!   soundness VERIFICATION.md argues; [`fast_path`]: that fast path, one element conversion in
//!   integer arithmetic, below the sweeps.
//! - [`interp`]: clconv's IR run in Cranelift's own interpreter, a second opinion that tells
//!   "the IR is wrong" from "the backend is wrong".
//! - [`fuzz_targets`]: the logic of the cargo-fuzz harnesses (`fuzz/`), replayed on stable Rust
//!   by the tests.
//! - [`ledger`]: the exhaustive ledger (its file and the machine-code fingerprints), below the
//!   sweeps; [`status`]: which runs of this build it proves, above both.
//! - [`mx_blocks`]: MX block kernels against the reference, on blocks that cover every scale.
//! - [`report`]: the generated `lowering-tables/REPORT.md`.
//! - [`seed_budget`]: the inputs the sweeps give the conversions from 64-bit sources.
#![deny(missing_docs)]

pub mod check;
pub mod cross;
pub mod exhaustive;
pub mod fast_path;
pub mod fuzz_targets;
pub mod interp;
pub mod ledger;
pub mod mx_blocks;
pub mod report;
pub mod seed_budget;
pub mod status;
