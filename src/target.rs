//! Named compilation targets: the host, every x86-64 flag set clconv is checked on, and the
//! other architectures it cross-compiles for. Targets other than the host's architecture need
//! clconv's `cross-target` feature, which turns on Cranelift's other native backends.
//!
//! ```
//! # #[cfg(feature = "cross-target")] {
//! use clconv::target::Target;
//! let isa = Target::from_name("aarch64").unwrap().isa().unwrap();
//! assert_eq!(isa.triple().architecture.to_string(), "aarch64");
//! assert!(Target::from_name("x86_64-avx2").unwrap().runs_here());
//! # }
//! ```

use cranelift_codegen::isa::{self, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use std::str::FromStr;

/// A compilation target: an architecture and its feature flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// This machine, as `cranelift-native` detects it.
    Host,
    /// x86-64 baseline (SSE2 only).
    X86_64Sse2,
    /// x86-64 with SSE4.1 (and SSE3, SSSE3).
    X86_64Sse41,
    /// x86-64 with AVX2 and FMA, no AVX-512.
    X86_64Avx2,
    /// x86-64 with AVX-512 F/VL/DQ on top of AVX2.
    X86_64Avx512,
    /// AArch64 (NEON).
    Aarch64,
    /// RISC-V 64 without the V extension (no vector types).
    Riscv64,
    /// RISC-V 64 with the V extension.
    Riscv64V,
    /// s390x (z13 vector facility).
    S390x,
}

/// Why a target could not be set up.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot set up Cranelift for target {target}: {why}")]
pub struct TargetError {
    /// The target's name.
    pub target: String,
    /// Cranelift's message.
    pub why: String,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 9] = [
        Target::Host,
        Target::X86_64Sse2,
        Target::X86_64Sse41,
        Target::X86_64Avx2,
        Target::X86_64Avx512,
        Target::Aarch64,
        Target::Riscv64,
        Target::Riscv64V,
        Target::S390x,
    ];

    /// The x86-64 flag sets, which this (x86-64) machine can run.
    pub const X86_64: [Target; 4] = [
        Target::X86_64Sse2,
        Target::X86_64Sse41,
        Target::X86_64Avx2,
        Target::X86_64Avx512,
    ];

    /// The name used on the command line and in the report.
    pub const fn name(self) -> &'static str {
        match self {
            Target::Host => "host",
            Target::X86_64Sse2 => "x86_64-sse2",
            Target::X86_64Sse41 => "x86_64-sse4.1",
            Target::X86_64Avx2 => "x86_64-avx2",
            Target::X86_64Avx512 => "x86_64-avx512",
            Target::Aarch64 => "aarch64",
            Target::Riscv64 => "riscv64",
            Target::Riscv64V => "riscv64-v",
            Target::S390x => "s390x",
        }
    }

    /// The target named `name` (also accepts `x86_64` for the SSE2 baseline).
    pub fn from_name(name: &str) -> Option<Target> {
        if name == "x86_64" {
            return Some(Target::X86_64Sse2);
        }
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// True when code for this target runs on this machine (x86-64 hosts run every x86-64 flag
    /// set up to what the CPU has; the JIT checks the CPU at run time).
    pub fn runs_here(self) -> bool {
        match self {
            Target::Host => true,
            Target::X86_64Sse2 => cfg!(target_arch = "x86_64"),
            Target::X86_64Sse41 => host_has(&["sse3", "ssse3", "sse4.1"]),
            Target::X86_64Avx2 => host_has(AVX2_HOST),
            Target::X86_64Avx512 => {
                host_has(AVX2_HOST) && host_has(&["avx512f", "avx512vl", "avx512dq"])
            }
            _ => false,
        }
    }

    fn triple(self) -> Option<&'static str> {
        match self {
            Target::Host => None,
            Target::X86_64Sse2
            | Target::X86_64Sse41
            | Target::X86_64Avx2
            | Target::X86_64Avx512 => Some("x86_64-unknown-linux-gnu"),
            Target::Aarch64 => Some("aarch64-unknown-linux-gnu"),
            Target::Riscv64 | Target::Riscv64V => Some("riscv64gc-unknown-linux-gnu"),
            Target::S390x => Some("s390x-unknown-linux-gnu"),
        }
    }

    fn features(self) -> &'static [&'static str] {
        const SSE41: &[&str] = &["has_sse3", "has_ssse3", "has_sse41"];
        const AVX2: &[&str] = &[
            "has_sse3",
            "has_ssse3",
            "has_sse41",
            "has_sse42",
            "has_avx",
            "has_avx2",
            "has_fma",
            "has_popcnt",
            "has_bmi1",
            "has_bmi2",
            "has_lzcnt",
        ];
        const AVX512: &[&str] = &[
            "has_sse3",
            "has_ssse3",
            "has_sse41",
            "has_sse42",
            "has_avx",
            "has_avx2",
            "has_fma",
            "has_popcnt",
            "has_bmi1",
            "has_bmi2",
            "has_lzcnt",
            "has_avx512f",
            "has_avx512vl",
            "has_avx512dq",
        ];
        match self {
            Target::X86_64Sse41 => SSE41,
            Target::X86_64Avx2 => AVX2,
            Target::X86_64Avx512 => AVX512,
            Target::Riscv64V => &["has_v"],
            _ => &[],
        }
    }

    /// The Cranelift ISA for this target, optimising for speed, with Cranelift's IR verifier
    /// on (what the cross-compilation checks, `clconv show` and the lowering report use).
    pub fn isa(self) -> Result<OwnedTargetIsa, TargetError> {
        self.isa_with_verifier(true)
    }

    /// The Cranelift ISA for this target, optimising for speed, with Cranelift's IR verifier on
    /// or off. The JIT turns it off: it costs about a third of a kernel's compile time, and the
    /// IR it would check is clconv's own, verified for every request by the test suite (and on
    /// demand with [`crate::jit::Jit::set_verify_ir`]).
    pub fn isa_with_verifier(self, verifier: bool) -> Result<OwnedTargetIsa, TargetError> {
        self.isa_with(&[
            ("opt_level", "speed"),
            ("enable_verifier", if verifier { "true" } else { "false" }),
        ])
    }

    /// The Cranelift ISA for the quick tier ([`crate::kernel::Tier::Quick`]): no optimisation
    /// passes, the single-pass register allocator, verifier off. On the benchmark's ten kernels
    /// (one block per iteration, interleaved measurement) Cranelift compiles in 68 µs on
    /// average where the optimised settings take 141.
    pub fn quick_isa(self) -> Result<OwnedTargetIsa, TargetError> {
        self.isa_with(&[
            ("opt_level", "none"),
            ("regalloc_algorithm", "single_pass"),
            ("enable_verifier", "false"),
        ])
    }

    /// The ISA for this target with the given Cranelift settings (plus the ones every clconv
    /// ISA has).
    fn isa_with(self, settings_: &[(&str, &str)]) -> Result<OwnedTargetIsa, TargetError> {
        let err = |why: String| TargetError {
            target: self.name().into(),
            why,
        };
        let mut shared = settings::builder();
        for &(name, value) in [("use_colocated_libcalls", "false"), ("is_pic", "false")]
            .iter()
            .chain(settings_)
        {
            shared.set(name, value).map_err(|e| err(e.to_string()))?;
        }
        let shared = settings::Flags::new(shared);
        let mut builder = match self.triple() {
            None => cranelift_native::builder().map_err(|e| err(e.to_string()))?,
            Some(triple) => {
                let triple =
                    target_lexicon::Triple::from_str(triple).map_err(|e| err(e.to_string()))?;
                isa::lookup(triple).map_err(|e| match e {
                    isa::LookupError::SupportDisabled => err(
                        "this build of clconv has only the host's Cranelift backend; \
                         enable clconv's `cross-target` feature for the others"
                            .into(),
                    ),
                    e => err(e.to_string()),
                })?
            }
        };
        for name in self.features() {
            builder
                .enable(name)
                .map_err(|e| err(format!("{name}: {e}")))?;
        }
        builder.finish(shared).map_err(|e| err(e.to_string()))
    }
}

/// The CPU features the AVX2 flag set lets Cranelift use.
const AVX2_HOST: &[&str] = &[
    "sse3", "ssse3", "sse4.1", "sse4.2", "avx", "avx2", "fma", "popcnt", "bmi1", "bmi2", "lzcnt",
];

#[cfg(target_arch = "x86_64")]
fn host_has(features: &[&str]) -> bool {
    use std::arch::is_x86_feature_detected as has;
    features.iter().all(|f| match *f {
        "sse3" => has!("sse3"),
        "ssse3" => has!("ssse3"),
        "sse4.1" => has!("sse4.1"),
        "sse4.2" => has!("sse4.2"),
        "avx" => has!("avx"),
        "avx2" => has!("avx2"),
        "fma" => has!("fma"),
        "popcnt" => has!("popcnt"),
        "bmi1" => has!("bmi1"),
        "bmi2" => has!("bmi2"),
        "lzcnt" => has!("lzcnt"),
        "avx512f" => has!("avx512f"),
        "avx512vl" => has!("avx512vl"),
        "avx512dq" => has!("avx512dq"),
        _ => false,
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn host_has(_: &[&str]) -> bool {
    false
}
