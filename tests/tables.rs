//! `lowering-tables/`: every conversion has exactly one fallback row on every architecture,
//! every row is chosen by some conversion on some target, and malformed tables are rejected
//! with the file and line.

use clconv::lower::recipes::Class;
use clconv::table::{self, Arch, IsaFeatures, Key, Table};
use clconv::target::Target;

/// The targets whose feature sets decide each architecture's guarded rows.
#[cfg(feature = "cross-target")]
fn targets_of(arch: Arch) -> Vec<Target> {
    match arch {
        Arch::X86_64 => Target::X86_64.to_vec(),
        Arch::Aarch64 => vec![Target::Aarch64],
        Arch::Riscv64 => vec![Target::Riscv64, Target::Riscv64V],
        Arch::S390x => vec![Target::S390x],
    }
}

#[test]
fn the_embedded_tables_parse() {
    let tables = table::tables().unwrap();
    assert_eq!(tables.len(), 4);
    for t in tables {
        assert!(!t.rows.is_empty(), "{} is empty", t.arch.name());
    }
}

#[test]
fn every_conversion_has_exactly_one_fallback_on_every_architecture() {
    let keys = Key::all();
    assert_eq!(
        keys.len(),
        14 * 14 + 14 * 14 * 4 + 14 * 11 * 4 + 7 * (4 * 8 + 3 * 4 + 8 + 8) + 2 * 14 + 1,
        "the matrix: as_ pairs, conversions without and with _sat per effective rounding \
         (_sat into the 8 integers, bfloat, fp8e4m3 and fp8e5m2); the 7 narrow formats from \
         their 4 partners and themselves (with _sat) and into half, float, double (without) \
         and bfloat (with); and to and from bool (one each, exact)"
    );
    for t in table::tables().unwrap() {
        for key in &keys {
            let fallbacks: Vec<_> = t
                .rows
                .iter()
                .filter(|r| r.is_fallback() && r.matches(key))
                .collect();
            assert_eq!(
                fallbacks.len(),
                1,
                "{}: {key:?} has fallback rows {fallbacks:?}",
                t.arch.name()
            );
        }
    }
}

/// Needs every backend (`cross-target`), which `cargo test --workspace` turns on through the
/// verify crate.
#[cfg(feature = "cross-target")]
#[test]
fn every_row_is_chosen_by_some_conversion_on_some_target() {
    for t in table::tables().unwrap() {
        let mut reached = vec![false; t.rows.len()];
        for target in targets_of(t.arch) {
            let isa = target.isa().unwrap();
            // Batch kernels (AOT and the JIT's, which may call host routines), and code lowered
            // into a caller's function (no `mxcsr` rows).
            let batch = IsaFeatures::of(&*isa).unwrap();
            let jit = batch.clone().with_host_routines();
            for features in [batch.clone(), jit, batch.without_rounding_control()] {
                let enabled = |name: &str| features.has(name);
                for key in Key::all() {
                    let row = t.choose(&key, &enabled).expect("a fallback matches");
                    let i = t.rows.iter().position(|r| std::ptr::eq(r, row)).unwrap();
                    reached[i] = true;
                }
            }
        }
        for (row, hit) in t.rows.iter().zip(reached) {
            assert!(hit, "{row:?} is never chosen: remove it or fix its keys");
        }
    }
}

/// The `f16c` rows name routine recipes and only they do; only the JIT's batch kernels of a
/// flag set with AVX2 take them, for float <-> half, char/uchar/short/ushort -> half and half ->
/// integers of at most 32 bits.
#[test]
fn only_the_jits_batch_kernels_call_host_routines() {
    use clconv::lower::recipes::Body;
    let routine = |row: &table::Row| matches!(row.recipe.body, Body::Routine(_));
    for t in table::tables().unwrap() {
        for row in &t.rows {
            assert_eq!(routine(row), row.guard.contains(&"f16c"), "{row:?}");
        }
    }
    assert!(
        parse_error("f16c float_to_float float half * * half.round_native\n")
            .contains("calls no host routine")
    );
    assert!(
        parse_error("- float_to_float float half * * f16c.float_to_half\n")
            .contains("calls a host routine")
    );
    assert!(
        parse_error("f16c float_to_float double half * * f16c.float_to_half\n")
            .contains("cannot lower double -> half")
    );
    use clconv::Rounding::{Rte, Rtn, Rtp, Rtz};
    use clconv::ScalarType::{Char, Float, Half, Int, Short, UChar, UInt, UShort};
    for target in [
        Target::X86_64Avx2,
        Target::X86_64Avx512,
        Target::X86_64Sse41,
    ] {
        let isa = target.isa().unwrap();
        let batch = IsaFeatures::of(&*isa).unwrap();
        let jit = batch.clone().with_host_routines();
        let mut routines = Vec::new();
        for key in Key::all() {
            assert!(!routine(batch.choose(&key).unwrap()), "{key:?}");
            assert!(
                !routine(
                    batch
                        .clone()
                        .without_rounding_control()
                        .choose(&key)
                        .unwrap()
                ),
                "{key:?}"
            );
            if routine(jit.choose(&key).unwrap()) {
                routines.push(key);
            }
        }
        let pairs = |k: &Key| (k.src, k.dst);
        if target == Target::X86_64Sse41 {
            assert!(routines.is_empty(), "{routines:?}");
        } else {
            let small_int = |t| matches!(t, Char | UChar | Short | UShort);
            assert!(routines.iter().all(|k| {
                matches!(pairs(k), (Float, Half) | (Half, Float))
                    || (small_int(k.src) && k.dst == Half)
                    || (k.src == Half && (small_int(k.dst) || matches!(k.dst, Int | UInt)))
            }));
            for src in [Char, UChar, Short, UShort] {
                assert!(routines.iter().any(|k| pairs(k) == (src, Half)), "{src}");
            }
            for dst in [Char, UChar, Short, UShort, Int, UInt] {
                assert!(routines.iter().any(|k| pairs(k) == (Half, dst)), "{dst}");
            }
            for rounding in [Rte, Rtz, Rtp, Rtn] {
                assert!(routines
                    .iter()
                    .any(|k| pairs(k) == (Float, Half) && k.rounding == rounding));
            }
            assert!(routines.iter().any(|k| pairs(k) == (Half, Float)));
        }
    }
}

#[test]
fn the_host_takes_the_native_rows() {
    // This machine has SSE4.1 and AVX-512VL: the guarded rows must win there.
    let isa = Target::X86_64Avx512.isa().unwrap();
    let key = |src, dst, rounding| Key {
        class: Class::IntToFloat,
        src,
        dst,
        saturate: false,
        rounding,
    };
    use clconv::{Rounding::Rte, ScalarType::*};
    let row = table::choose_for(&*isa, &key(UInt, Float, Rte)).unwrap();
    assert_eq!(row.recipe.name, "int_to_float.native_rte");
    assert!(!row.is_fallback());
    let sse2 = Target::X86_64Sse2.isa().unwrap();
    let row = table::choose_for(&*sse2, &key(UInt, Float, Rte)).unwrap();
    assert_eq!(row.recipe.name, "int_to_float.split_sum");
}

#[test]
fn only_batch_kernels_round_by_the_rounding_control() {
    // A row guarded by `mxcsr` (x86-64) or `fpcr` (aarch64) names a recipe that rounds by the
    // rounding control, and only such rows do: the tables refuse anything else.
    for t in table::tables().unwrap() {
        for row in &t.rows {
            let guard = match t.arch {
                Arch::X86_64 => "mxcsr",
                Arch::Aarch64 => "fpcr",
                _ => "(none)",
            };
            assert_eq!(
                row.recipe.rounds_by_control,
                row.guard.contains(&guard),
                "{row:?}"
            );
        }
    }
    let aarch64_error = Table::parse(
        Arch::Aarch64,
        "t",
        "fpcr float_to_float double float * rtz float_to_float.demote\n",
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        aarch64_error.contains("rounds to nearest-even by itself"),
        "{aarch64_error}"
    );
    assert!(
        parse_error("mxcsr float_to_float double float * rtz float_to_float.demote\n")
            .contains("rounds to nearest-even by itself")
    );
    assert!(
        parse_error("- float_to_float double float * rtz float_to_float.demote_by_control\n")
            .contains("rounds by the rounding control")
    );
    // Code lowered into a caller's function never takes them (the caller's mode is its own).
    let isa = Target::X86_64Avx512.isa().unwrap();
    let batch = IsaFeatures::of(&*isa).unwrap();
    let inline = batch.clone().without_rounding_control();
    let mut by_control = 0;
    for key in Key::all() {
        if batch.choose(&key).unwrap().recipe.rounds_by_control {
            by_control += 1;
        }
        assert!(
            !inline.choose(&key).unwrap().recipe.rounds_by_control,
            "{key:?}"
        );
    }
    // int, uint, long, ulong -> float; long, ulong -> double; double -> float: 7 pairs x 3 modes.
    assert_eq!(by_control, 21);
    #[cfg(feature = "cross-target")]
    {
        // The same 21 on aarch64 (the `fpcr` rows), none of them for code lowered inline.
        let isa = Target::Aarch64.isa().unwrap();
        let batch = IsaFeatures::of(&*isa).unwrap();
        let inline = batch.clone().without_rounding_control();
        let by_control = Key::all()
            .iter()
            .filter(|k| batch.choose(k).unwrap().recipe.rounds_by_control)
            .count();
        assert_eq!(by_control, 21);
        assert!(Key::all()
            .iter()
            .all(|k| !inline.choose(k).unwrap().recipe.rounds_by_control));
    }
}

fn parse_error(text: &str) -> String {
    Table::parse(Arch::X86_64, "lowering-tables/test.table", text)
        .err()
        .unwrap_or_else(|| panic!("accepted: {text}"))
        .to_string()
}

#[test]
fn malformed_tables_are_rejected_with_file_and_line() {
    let good = "- int_to_int * * * * int_to_int.vector\n";
    assert!(Table::parse(Arch::X86_64, "t", good).is_ok());
    let cases: &[(&str, &str)] = &[
        (
            "# comment\n\n- int_to_int * *\n",
            "test.table:3: expected 7 columns",
        ),
        (
            "- int_to_intt * * * * scalar\n",
            "test.table:1: unknown class `int_to_intt`",
        ),
        (
            "- int_to_int flaot * * * scalar\n",
            "test.table:1: unknown type `flaot`",
        ),
        (
            "- int_to_int * * maybe * scalar\n",
            "test.table:1: sat column",
        ),
        (
            "- float_to_int * * * rtx scalar\n",
            "test.table:1: unknown rounding `rtx`",
        ),
        (
            "- int_to_int * * * * fastest\n",
            "test.table:1: unknown recipe `fastest`",
        ),
        (
            "sse9 int_to_int * * * * scalar\n",
            "test.table:1: unknown x86_64 feature `sse9`",
        ),
        (
            "- int_to_int * * * * float_to_int.round_native\n",
            "test.table:1: recipe `float_to_int.round_native` lowers float_to_int, not int_to_int",
        ),
        (
            "\n- float_to_int float long * * float_to_int.round_native\n",
            "test.table:2: recipe `float_to_int.round_native` cannot lower float -> long",
        ),
    ];
    for (text, expected) in cases {
        let message = parse_error(text);
        assert!(
            message.contains(expected),
            "for {text:?}: got {message:?}, wanted {expected:?}"
        );
    }
}
