//! Reads `lowering-tables/`: which recipe each conversion uses on each target.
//!
//! The tables are embedded at build time (`include_str!`), parsed once, and validated: a
//! malformed row is a [`TableError`] naming the file and line. The format is documented in
//! `lowering-tables/README.md`; in short, one row per line:
//!
//! ```text
//! # guard   class          src           dst                        sat  rounding  recipe
//! sse4.1    float_to_int   float,double  int,uint,short,ushort,char,uchar  *  *  float_to_int.round_native
//! -         float_to_int   float,double  int,uint,short,ushort,char,uchar  *  *  float_to_int.round_magic
//! ```
//!
//! The first row whose guard the target satisfies and whose keys match the conversion wins, so
//! guarded fast rows sit above the unguarded fallback, like the rules of Cranelift's
//! `lower.isle`.

use super::recipes::{self, BlockSpec, Class, Recipe};
use crate::rules::Rules;
use crate::types::{Rounding, ScalarType};
use cranelift_codegen::isa::TargetIsa;
use std::fmt;
use std::sync::OnceLock;

/// The flag name the guards `mxcsr` (x86-64) and `fpcr` (aarch64) stand for. It is no
/// Cranelift flag: it holds for batch kernels, whose caller sets the rounding control (x86-64's
/// MXCSR.RC, aarch64's FPCR.RMode) to the rounding a [`Recipe::rounds_by_control`] recipe needs
/// (the JIT and the AOT entry points do; see [`crate::kernel::Built::rounding_control`]), and
/// never for code lowered into a caller's own function ([`crate::lower::Lowering`]), which runs
/// in whatever mode its caller left. A builder-API caller that wants these rows' code must set
/// the control itself around it, as the AOT entry points do.
pub const ROUNDING_CONTROL: &str = "clconv: the kernel's caller sets the rounding control";

/// The flag name the guard `f16c` (x86-64) stands for. It holds for batch kernels the JIT
/// compiles in this process ([`IsaFeatures::with_host_routines`]) for a flag set with AVX2
/// (x86-64-v3, of which F16C is part): such a kernel may call clconv's F16C routines
/// ([`crate::routine`]). Code lowered into a caller's own function and AOT objects never call
/// a routine, so the guard never holds for them. Only routine recipes take it, and they need
/// it.
pub const HOST_F16C: &str = "clconv: a JIT batch kernel may call the F16C host routines";

/// A target architecture with a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// x86-64.
    X86_64,
    /// AArch64.
    Aarch64,
    /// RISC-V 64.
    Riscv64,
    /// IBM z/Architecture.
    S390x,
}

impl Arch {
    /// All four.
    pub const ALL: [Arch; 4] = [Arch::X86_64, Arch::Aarch64, Arch::Riscv64, Arch::S390x];

    /// The name as in `target-lexicon` triples and the table file names.
    pub const fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
            Arch::Riscv64 => "riscv64",
            Arch::S390x => "s390x",
        }
    }

    /// The architecture of a Cranelift ISA, if it has a table.
    pub fn of(isa: &dyn TargetIsa) -> Option<Arch> {
        use target_lexicon::Architecture as A;
        match isa.triple().architecture {
            A::X86_64 => Some(Arch::X86_64),
            A::Aarch64(_) => Some(Arch::Aarch64),
            A::Riscv64(_) => Some(Arch::Riscv64),
            A::S390x => Some(Arch::S390x),
            _ => None,
        }
    }

    /// The guard names a row may use, and the Cranelift ISA flag each means.
    pub fn features(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Arch::X86_64 => &[
                ("sse3", "has_sse3"),
                ("ssse3", "has_ssse3"),
                ("sse4.1", "has_sse41"),
                ("sse4.2", "has_sse42"),
                ("avx", "has_avx"),
                ("avx2", "has_avx2"),
                ("fma", "has_fma"),
                ("avx512f", "has_avx512f"),
                ("avx512vl", "has_avx512vl"),
                ("avx512dq", "has_avx512dq"),
                ("mxcsr", ROUNDING_CONTROL),
                ("f16c", HOST_F16C),
            ],
            Arch::Aarch64 => &[
                ("lse", "has_lse"),
                ("fp16", "has_fp16"),
                ("fpcr", ROUNDING_CONTROL),
            ],
            Arch::Riscv64 => &[("has_v", "has_v"), ("has_zfh", "has_zfh")],
            Arch::S390x => &[("vxrs_ext2", "has_vxrs_ext2")],
        }
    }

    fn source(self) -> (&'static str, &'static str) {
        match self {
            Arch::X86_64 => (
                "lowering-tables/x86_64.table",
                include_str!("../../lowering-tables/x86_64.table"),
            ),
            Arch::Aarch64 => (
                "lowering-tables/aarch64.table",
                include_str!("../../lowering-tables/aarch64.table"),
            ),
            Arch::Riscv64 => (
                "lowering-tables/riscv64.table",
                include_str!("../../lowering-tables/riscv64.table"),
            ),
            Arch::S390x => (
                "lowering-tables/s390x.table",
                include_str!("../../lowering-tables/s390x.table"),
            ),
        }
    }
}

/// A malformed table row.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TableError {
    /// The table file.
    pub file: String,
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// One table row.
#[derive(Clone)]
pub struct Row {
    /// The file it came from.
    pub file: &'static str,
    /// Its 1-based line number.
    pub line: usize,
    /// Guard features (table names), all required; empty for a fallback row.
    pub guard: Vec<&'static str>,
    /// The conversion class.
    pub class: Class,
    /// Source types (`None`: any).
    pub src: Option<Vec<ScalarType>>,
    /// Destination types (`None`: any).
    pub dst: Option<Vec<ScalarType>>,
    /// `Some(true)`: only `_sat`; `Some(false)`: only without; `None`: either.
    pub sat: Option<bool>,
    /// Effective rounding modes (`None`: any).
    pub rounding: Option<Vec<Rounding>>,
    /// The recipe.
    pub recipe: &'static Recipe,
}

impl fmt::Debug for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.line, self.recipe.name)
    }
}

/// What a row is matched against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The class.
    pub class: Class,
    /// Source element type.
    pub src: ScalarType,
    /// Destination element type.
    pub dst: ScalarType,
    /// `_sat` (false for reinterpretations).
    pub saturate: bool,
    /// Effective rounding (rte for classes where it does not matter).
    pub rounding: Rounding,
}

impl Key {
    /// The key of a conversion's element spec.
    pub fn of(spec: &BlockSpec) -> Key {
        Key {
            class: spec.class(),
            src: spec.src,
            dst: spec.dst,
            saturate: spec.saturate,
            rounding: spec.rounding,
        }
    }

    /// Every key of the matrix: every element conversion (types x sat x effective rounding)
    /// and every reinterpretation pair of element types, the narrow formats' conversions and
    /// bool's.
    pub fn all() -> Vec<Key> {
        let mut out = Vec::new();
        // A conversion's keys: with and without `_sat` where the destination takes it, in
        // every effective rounding.
        let conversion = |out: &mut Vec<Key>, src: ScalarType, dst: ScalarType| {
            for saturate in [false, true] {
                if saturate && dst.is_float() && !dst.is_beyond_opencl() {
                    continue;
                }
                for rounding in Rounding::ALL {
                    let spec = BlockSpec {
                        src,
                        dst,
                        saturate,
                        rounding,
                        rules: Rules::OPENCL,
                    };
                    out.push(Key::of(&spec));
                }
            }
        };
        for src in ScalarType::ALL {
            for dst in ScalarType::ALL {
                conversion(&mut out, src, dst);
                out.push(Key {
                    class: Class::Reinterpret,
                    src,
                    dst,
                    saturate: false,
                    rounding: Rounding::Rte,
                });
            }
        }
        // The narrow formats, to and from their partners and themselves.
        let narrow = ScalarType::NARROW.into_iter().flat_map(|t| {
            ScalarType::NARROW_PARTNERS
                .into_iter()
                .flat_map(move |p| [(t, p), (p, t)])
                .chain([(t, t)])
        });
        for (src, dst) in narrow {
            conversion(&mut out, src, dst);
        }
        // To and from bool: exact, so without `_sat` and in one rounding.
        let bool_ = ScalarType::Bool;
        let pairs = ScalarType::ALL
            .into_iter()
            .flat_map(|t| [(t, bool_), (bool_, t)]);
        for (src, dst) in pairs.chain([(bool_, bool_)]) {
            {
                let spec = BlockSpec {
                    src,
                    dst,
                    saturate: false,
                    rounding: Rounding::Rte,
                    rules: Rules::OPENCL,
                };
                out.push(Key::of(&spec));
            }
        }
        out
    }

    /// The element spec (for recipes' `supports`).
    pub fn spec(&self) -> BlockSpec {
        BlockSpec {
            src: self.src,
            dst: self.dst,
            saturate: self.saturate,
            rounding: self.rounding,
            rules: Rules::OPENCL,
        }
    }
}

impl Row {
    /// True when the row's keys (not its guard) match `key`.
    pub fn matches(&self, key: &Key) -> bool {
        self.class == key.class
            && self.src.as_ref().is_none_or(|s| s.contains(&key.src))
            && self.dst.as_ref().is_none_or(|d| d.contains(&key.dst))
            && self.sat.is_none_or(|s| s == key.saturate)
            && self
                .rounding
                .as_ref()
                .is_none_or(|r| r.contains(&key.rounding))
    }

    /// True for an unguarded (fallback) row.
    pub fn is_fallback(&self) -> bool {
        self.guard.is_empty()
    }
}

/// One architecture's table.
#[derive(Clone, Debug)]
pub struct Table {
    /// The architecture.
    pub arch: Arch,
    /// The rows, in order.
    pub rows: Vec<Row>,
}

impl Table {
    /// Parses and validates a table's text. `file` names it in errors.
    pub fn parse(arch: Arch, file: &'static str, text: &str) -> Result<Table, TableError> {
        let mut rows = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let err = |message: String| TableError {
                file: file.to_string(),
                line,
                message,
            };
            let cols: Vec<&str> = content.split_whitespace().collect();
            let [guard, class, src, dst, sat, rounding, recipe] = cols[..] else {
                return Err(err(format!(
                    "expected 7 columns (guard class src dst sat rounding recipe), found {}",
                    cols.len()
                )));
            };
            let guard = parse_guard(arch, guard).map_err(&err)?;
            let class = Class::from_name(class).ok_or_else(|| {
                err(format!(
                    "unknown class `{class}`: int_to_int, float_to_int, int_to_float, float_to_float, identity or reinterpret"
                ))
            })?;
            let src = parse_types(src).map_err(&err)?;
            let dst = parse_types(dst).map_err(&err)?;
            let sat = match sat {
                "*" => None,
                "sat" => Some(true),
                "nosat" => Some(false),
                other => return Err(err(format!("sat column is sat, nosat or *, not `{other}`"))),
            };
            let rounding = if rounding == "*" {
                None
            } else {
                Some(
                    rounding
                        .split(',')
                        .map(|r| {
                            Rounding::from_name(r).ok_or_else(|| {
                                err(format!("unknown rounding `{r}`: rte, rtz, rtp, rtn or *"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                )
            };
            let recipe = recipes::recipe(recipe).ok_or_else(|| {
                let names: Vec<&str> = recipes::RECIPES.iter().map(|r| r.name).collect();
                err(format!(
                    "unknown recipe `{recipe}`: one of {}",
                    names.join(", ")
                ))
            })?;
            if let Some(c) = recipe.class {
                if c != class {
                    return Err(err(format!(
                        "recipe `{}` lowers {}, not {}",
                        recipe.name,
                        c.name(),
                        class.name()
                    )));
                }
            }
            let by_control = guard.iter().any(|g| {
                arch.features()
                    .iter()
                    .any(|&(name, flag)| name == *g && flag == ROUNDING_CONTROL)
            });
            let routine_guard = guard.iter().any(|g| {
                arch.features()
                    .iter()
                    .any(|&(name, flag)| name == *g && flag == HOST_F16C)
            });
            let routine = matches!(recipe.body, recipes::Body::Routine(_));
            if routine != routine_guard {
                return Err(err(format!(
                    "recipe `{}` {}: only routine recipes take the host-routine guard (`f16c`), \
                     and they need it",
                    recipe.name,
                    if routine {
                        "calls a host routine"
                    } else {
                        "calls no host routine"
                    }
                )));
            }
            if recipe.rounds_by_control != by_control {
                return Err(err(format!(
                    "recipe `{}` {}: only such recipes take the rounding-control guard (`mxcsr`, \
                     `fpcr`), and they need it",
                    recipe.name,
                    if recipe.rounds_by_control {
                        "rounds by the rounding control"
                    } else {
                        "rounds to nearest-even by itself"
                    }
                )));
            }
            let row = Row {
                file,
                line,
                guard,
                class,
                src,
                dst,
                sat,
                rounding,
                recipe,
            };
            if let Some(key) = Key::all()
                .into_iter()
                .find(|k| row.matches(k) && !(recipe.supports)(&k.spec()))
            {
                return Err(err(format!(
                    "recipe `{}` cannot lower {} -> {} ({}{}): narrow the row's types or modifiers",
                    recipe.name,
                    key.src,
                    key.dst,
                    if key.saturate { "sat, " } else { "" },
                    key.rounding
                )));
            }
            rows.push(row);
        }
        Ok(Table { arch, rows })
    }

    /// The row that lowers `key` on a target whose enabled features `enabled` reports (by
    /// Cranelift flag name): the first row whose guard holds and whose keys match.
    pub fn choose(&self, key: &Key, enabled: &dyn Fn(&str) -> bool) -> Option<&Row> {
        self.rows.iter().find(|row| {
            row.matches(key)
                && row.guard.iter().all(|g| {
                    let flag = self
                        .arch
                        .features()
                        .iter()
                        .find(|(name, _)| name == g)
                        .map_or(*g, |(_, flag)| flag);
                    enabled(flag)
                })
        })
    }
}

fn parse_guard(arch: Arch, guard: &str) -> Result<Vec<&'static str>, String> {
    if guard == "-" {
        return Ok(Vec::new());
    }
    guard
        .split('+')
        .map(|g| {
            arch.features()
                .iter()
                .find(|(name, _)| *name == g)
                .map(|(name, _)| *name)
                .ok_or_else(|| {
                    let names: Vec<&str> = arch.features().iter().map(|(n, _)| *n).collect();
                    format!(
                        "unknown {} feature `{g}` in the guard: one of {} (join several with +), or - for none",
                        arch.name(),
                        names.join(", ")
                    )
                })
        })
        .collect()
}

fn parse_types(text: &str) -> Result<Option<Vec<ScalarType>>, String> {
    if text == "*" {
        return Ok(None);
    }
    text.split(',')
        .map(|t| {
            ScalarType::from_name(t)
                .ok_or_else(|| format!("unknown type `{t}`: an OpenCL scalar type name, or *"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The four embedded tables, parsed once.
pub fn tables() -> Result<&'static [Table], TableError> {
    static TABLES: OnceLock<Result<Vec<Table>, TableError>> = OnceLock::new();
    TABLES
        .get_or_init(|| {
            Arch::ALL
                .into_iter()
                .map(|arch| {
                    let (file, text) = arch.source();
                    Table::parse(arch, file, text)
                })
                .collect()
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// The table of `arch`.
pub fn table(arch: Arch) -> Result<&'static Table, TableError> {
    Ok(tables()?
        .iter()
        .find(|t| t.arch == arch)
        .expect("one table per architecture"))
}

/// The row that lowers `key` in a batch kernel for `isa`, with its guards checked against the
/// ISA's flags ([`IsaFeatures::of`]).
pub fn choose_for(isa: &dyn TargetIsa, key: &Key) -> Result<&'static Row, TableError> {
    IsaFeatures::of(isa)?.choose(key)
}

/// What the lowering tables' guards test of an ISA: its architecture and the Cranelift flags it
/// has on. Reading them from the ISA builds a list of every flag (about a microsecond), so the
/// JIT reads them once and chooses with [`IsaFeatures::choose`].
///
/// ```
/// use clconv::table::{IsaFeatures, Key};
/// use clconv::target::Target;
/// let isa = Target::X86_64Sse2.isa().unwrap();
/// let features = IsaFeatures::of(&*isa).unwrap();
/// assert!(!features.has("has_sse41"));
/// let key = Key::all()[0];
/// assert_eq!(features.choose(&key).unwrap().line, clconv::table::choose_for(&*isa, &key).unwrap().line);
/// ```
#[derive(Clone, Debug)]
pub struct IsaFeatures {
    arch: Arch,
    enabled: Vec<&'static str>,
    rounding_control: bool,
    host_routines: bool,
}

impl IsaFeatures {
    /// The features of `isa` for a batch kernel: its flags, and the rounding-control guard
    /// ([`ROUNDING_CONTROL`]: `mxcsr` on x86-64, `fpcr` on aarch64). An error for an architecture without a table.
    pub fn of(isa: &dyn TargetIsa) -> Result<IsaFeatures, TableError> {
        let arch = Arch::of(isa).ok_or_else(|| TableError {
            file: "lowering-tables".into(),
            line: 0,
            message: format!("no table for the architecture of {}", isa.triple()),
        })?;
        let enabled = isa
            .isa_flags()
            .iter()
            .filter(|v| v.as_bool() == Some(true))
            .map(|v| v.name)
            .collect();
        Ok(IsaFeatures {
            arch,
            enabled,
            rounding_control: matches!(arch, Arch::X86_64 | Arch::Aarch64),
            host_routines: false,
        })
    }

    /// These features for a batch kernel the JIT compiles in this process: the host-routine
    /// guards hold where the flags imply the routine's instruction (`f16c`: AVX2, x86-64-v3,
    /// of which F16C is part; [`HOST_F16C`]), whatever this machine's CPU, so that the code a
    /// JIT of these flags runs can be named anywhere. The JIT and `CodeCompiler` ask for them
    /// only where this CPU runs the routines (`clconv::jit::jit_features`).
    ///
    /// ```
    /// use clconv::table::{IsaFeatures, HOST_F16C};
    /// let avx2 = clconv::target::Target::X86_64Avx2.isa().unwrap();
    /// let sse41 = clconv::target::Target::X86_64Sse41.isa().unwrap();
    /// assert!(!IsaFeatures::of(&*avx2).unwrap().has(HOST_F16C)); // the builder API, AOT
    /// assert!(IsaFeatures::of(&*avx2).unwrap().with_host_routines().has(HOST_F16C));
    /// assert!(!IsaFeatures::of(&*sse41).unwrap().with_host_routines().has(HOST_F16C));
    /// ```
    pub fn with_host_routines(mut self) -> IsaFeatures {
        self.host_routines = true;
        self
    }

    /// These features without the host-routine guards ([`IsaFeatures::with_host_routines`]
    /// undone).
    pub fn without_host_routines(mut self) -> IsaFeatures {
        self.host_routines = false;
        self
    }

    /// These features for code that runs in its caller's rounding mode (nearest-even, as
    /// OpenCL and Rust assume): the `mxcsr` and `fpcr` guards never hold.
    ///
    /// ```
    /// use clconv::table::{IsaFeatures, ROUNDING_CONTROL};
    /// let isa = clconv::target::Target::X86_64Avx512.isa().unwrap();
    /// let batch = IsaFeatures::of(&*isa).unwrap();
    /// assert!(batch.has(ROUNDING_CONTROL));
    /// assert!(!batch.without_rounding_control().has(ROUNDING_CONTROL));
    /// ```
    pub fn without_rounding_control(mut self) -> IsaFeatures {
        self.rounding_control = false;
        self
    }

    /// The architecture these features are of.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// Whether the Cranelift flag `name` is on ([`ROUNDING_CONTROL`]: whether the `mxcsr`
    /// guard holds).
    pub fn has(&self, name: &str) -> bool {
        if name == ROUNDING_CONTROL {
            return self.rounding_control;
        }
        if name == HOST_F16C {
            return self.host_routines && self.enabled.contains(&"has_avx2");
        }
        self.enabled.contains(&name)
    }

    /// The row that lowers `key` with these features.
    pub fn choose(&self, key: &Key) -> Result<&'static Row, TableError> {
        let arch = self.arch;
        table(arch)?
            .choose(key, &|name| self.has(name))
            .ok_or_else(|| TableError {
                file: format!("lowering-tables/{}.table", arch.name()),
                line: 0,
                message: format!(
                    "no row lowers {} {} -> {} on this target: add a fallback row",
                    key.class.name(),
                    key.src,
                    key.dst
                ),
            })
    }
}
