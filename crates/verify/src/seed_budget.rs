//! The seed budget of the conversions from 64-bit sources (`long`, `ulong`, `double`): their
//! 2^64 inputs cannot all be swept, so `clconv check --exhaustive --wide` runs each on
//! [`WIDE_INPUTS`] inputs from [`wide_inputs`], a seeded generator that
//! draws them around rounding decisions. The 64-bit ledger (`verification/ledger-64.tsv`) holds
//! for exactly these inputs, so the generator is pinned ([`WIDE_GENERATOR`] and a test).

use crate::check::{self, Rng};
use crate::fast_path::mask;
use clconv::types::ScalarType;

/// Inputs per seed of the seed budget (one unit of work each).
pub(crate) const WIDE_SEED_INPUTS: usize = 1 << 20;

/// The seed budget of a conversion from a 64-bit source (`--wide`): this many seeds, each
/// giving 1,048,576 inputs ([`wide_inputs`]).
pub const WIDE_SEEDS: u64 = 16;

/// Inputs per conversion from a 64-bit source in its seed budget: 16,777,216.
pub const WIDE_INPUTS: u64 = WIDE_SEEDS * WIDE_SEED_INPUTS as u64;

/// Names the input generator of the seed budget; the 64-bit ledger's lines
/// (`verification/ledger-64.tsv`) hold for its inputs. A change to [`wide_inputs`] must change
/// this tag and start that ledger over (the test `the_seed_budget_is_pinned` sees the change).
pub const WIDE_GENERATOR: &str = "clconv-wide-inputs-1";

/// The first `n` inputs of seed `seed` of the seed budget for 64-bit source type `t` (`long`,
/// `ulong` or `double`): seed 0 opens with `specials` (the special inputs [`check::inputs`]
/// gives, each compared with the reference), then every input is drawn by a seeded generator.
///
/// Uniform 64-bit patterns would almost never be close to a rounding decision, so most draws
/// are built around one:
/// - `double`: an exponent where a destination rounds (around the integer ranges, the `float`
///   and `half` ranges with their subnormals, the edges of every integer type) and a mantissa
///   whose bits below the rounding point are exactly a tie, a tie ± 1 unit, zero, or random;
///   also uniform patterns (NaN payloads, infinities, huge and tiny values) and uniform exponents;
/// - `long`, `ulong`: values just below and above every integer type's edges and every power of
///   two, every bit length equally likely, and ties (± 1) for `half`, `float` and `double`
///   precision at every position; also uniform patterns.
///
/// ```
/// use clconv_verify::seed_budget::wide_inputs;
/// use clconv::ScalarType;
/// let a = wide_inputs(ScalarType::Double, 3, 1000, &[]);
/// assert_eq!(a, wide_inputs(ScalarType::Double, 3, 1000, &[])); // the same for a seed
/// assert_ne!(a, wide_inputs(ScalarType::Double, 4, 1000, &[]));
/// assert_eq!(wide_inputs(ScalarType::Long, 0, 2, &[7, 9]), [7, 9]);
/// ```
pub fn wide_inputs(t: ScalarType, seed: u64, n: usize, specials: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::with_capacity(n);
    if seed == 0 {
        out.extend(specials.iter().take(n));
    }
    let mut rng = Rng::new(0x7769_6465_0000_0000 ^ seed << 8 ^ t as u64);
    let edges = if t.is_integer() {
        check::integer_edges(t)
    } else {
        Vec::new()
    };
    while out.len() < n {
        out.push(match t {
            ScalarType::Double => wide_double(&mut rng),
            _ => wide_integer(t, &edges, &mut rng),
        });
    }
    out
}

/// `mantissa` with its bits below `cut` set by `kind`: 0 a tie (the half bit alone), 1 just
/// below a tie, 2 just above, 3 zero (exact), otherwise left random.
fn rounding_pattern(mantissa: u64, cut: u32, kind: u64) -> u64 {
    if cut == 0 || cut > 52 {
        return mantissa;
    }
    let below = (1u64 << cut) - 1;
    let half = 1u64 << (cut - 1);
    let pattern = match kind {
        0 => half,
        1 => half - 1,
        2 => half | 1,
        3 => 0,
        _ => return mantissa,
    };
    (mantissa & !below) | pattern
}

fn wide_double(rng: &mut Rng) -> u64 {
    const BIAS: i64 = 1023;
    let r = rng.next_u64();
    let mantissa = rng.next_u64() >> 12;
    let sign = r & 1 << 63;
    let kind = (r >> 8) % 6;
    let with = |e: i64, mantissa: u64| sign | ((BIAS + e) as u64) << 52 | mantissa;
    match r % 8 {
        0 => rng.next_u64(),
        // Around the integer ranges: the rounding point is the units bit.
        1 | 2 => {
            let e = (r >> 16) as i64 % 68 - 2;
            with(e, rounding_pattern(mantissa, (52 - e).max(0) as u32, kind))
        }
        // The float range, subnormals and overflow included: 24 bits kept (fewer below 2^-126).
        3 | 4 => {
            let e = (r >> 16) as i64 % 280 - 151;
            let cut = 29 + (-126 - e).max(0);
            with(e, rounding_pattern(mantissa, cut as u32, kind))
        }
        // The half range: 11 bits kept (fewer below 2^-14).
        5 => {
            let e = (r >> 16) as i64 % 44 - 26;
            let cut = 42 + (-14 - e).max(0);
            with(e, rounding_pattern(mantissa, cut as u32, kind))
        }
        // Every exponent, subnormal doubles included; one draw in eight a NaN (payloads) or
        // an infinity.
        6 => {
            let biased = if (r >> 40) & 7 == 0 {
                2047
            } else {
                (r >> 16) % 2048
            };
            let m = if (r >> 44) & 15 == 0 { 0 } else { mantissa };
            sign | biased << 52 | m
        }
        // Just below and above the integer types' edges (2^7, 2^8, ... 2^64).
        _ => {
            const EDGES: [i64; 12] = [6, 7, 8, 14, 15, 16, 30, 31, 32, 62, 63, 64];
            let e = EDGES[((r >> 16) % 12) as usize];
            let d = (r >> 24) % 8;
            // 2^e plus a few units, or the largest values below it.
            let m = if r >> 32 & 1 == 0 {
                d
            } else {
                (1u64 << 52) - 1 - d
            };
            let e = if m == d { e } else { e - 1 };
            with(e, m)
        }
    }
}

/// `edges`: [`check::integer_edges`] of `t`.
fn wide_integer(t: ScalarType, edges: &[u64], rng: &mut Rng) -> u64 {
    let r = rng.next_u64();
    let signed = t.is_signed_integer();
    let v = match r % 8 {
        0 => rng.next_u64(),
        1..=3 => check::structured_integer(t, rng),
        // Just below and above every integer type's edges.
        4 => {
            let edge = edges[((r >> 8) % edges.len() as u64) as usize];
            edge.wrapping_add((r >> 32) % 9).wrapping_sub(4)
        }
        // Around every power of two, and its negation.
        5 => {
            let p = 1u64 << ((r >> 8) % 64);
            let v = p.wrapping_add((r >> 16) % 7).wrapping_sub(3);
            if signed && r >> 63 == 1 {
                v.wrapping_neg()
            } else {
                v
            }
        }
        // A tie ± 1 for half, float or double precision, at any position.
        _ => {
            let p = [11u32, 24, 53][((r >> 8) % 3) as usize];
            let significand = (rng.next_u64() >> (64 - (p + 1))) | 1 | 1 << p;
            let room = 64 - (p + 1) - u32::from(signed);
            let v = (significand << ((r >> 16) as u32 % (room + 1)))
                .wrapping_add((r >> 24) % 3)
                .wrapping_sub(1);
            if signed && r >> 63 == 1 {
                v.wrapping_neg()
            } else {
                v
            }
        }
    };
    v & mask(t.bits())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed budget's draws land on rounding decisions: counted with bit tests written
    /// here, on the first seed's inputs.
    #[test]
    fn the_seed_budget_reaches_every_kind_of_rounding_decision() {
        let n = 1 << 16;
        let doubles = wide_inputs(ScalarType::Double, 1, n, &[]);
        let count =
            |p: &dyn Fn(f64) -> bool| doubles.iter().filter(|&&x| p(f64::from_bits(x))).count();
        // Exactly halfway between two integers, inside the 32-bit range.
        let int_ties = count(&|v| v.abs() < 2e9 && (v - 0.5).fract() == 0.0);
        // Exactly halfway between two adjacent normal floats.
        let float_ties = doubles
            .iter()
            .filter(|&&x| {
                let e = (x >> 52 & 0x7ff) as i64 - 1023;
                (-126..128).contains(&e) && x & ((1 << 29) - 1) == 1 << 28
            })
            .count();
        // Between the float subnormals.
        let float_subnormal = count(&|v| v != 0.0 && v.abs() < f64::from(f32::MIN_POSITIVE));
        let nans = count(&|v| v.is_nan());
        let beyond_long = count(&|v| v.is_finite() && v.abs() >= 9.2e18 && v.abs() < 1.9e19);
        for (what, k) in [
            ("integer ties", int_ties),
            ("float ties", float_ties),
            ("float subnormals", float_subnormal),
            ("NaNs", nans),
            ("around 2^63 and 2^64", beyond_long),
        ] {
            assert!(k > n / 200, "{what}: {k} of {n}");
        }
        for t in [ScalarType::Long, ScalarType::ULong] {
            let ints = wide_inputs(t, 1, n, &[]);
            let value = |x: u64| -> i128 {
                if t == ScalarType::Long {
                    i128::from(x as i64)
                } else {
                    i128::from(x)
                }
            };
            // Exactly p + 1 significant bits ending in 1: a tie for precision p.
            let ties = |p: u32| {
                ints.iter()
                    .filter(|&&x| {
                        let m = value(x).unsigned_abs();
                        m != 0 && 128 - m.leading_zeros() - m.trailing_zeros() == p + 1
                    })
                    .count()
            };
            for p in [11, 24, 53] {
                assert!(
                    ties(p) > n / 200,
                    "{t:?}: {} ties for precision {p}",
                    ties(p)
                );
            }
            let near_edges = ints
                .iter()
                .filter(|&&x| {
                    let v = value(x);
                    [127i128, 255, 32767, 65535, 2147483647, 4294967295]
                        .iter()
                        .any(|e| (v - e).abs() <= 2 || (v + e + 1).abs() <= 2)
                })
                .count();
            assert!(near_edges > n / 200, "{t:?}: {near_edges} near the edges");
        }
    }

    /// The seed budget's inputs are fixed: the 64-bit ledger's lines hold for them. If this
    /// fails, `wide_inputs` changed: change `WIDE_GENERATOR`, start
    /// `verification/ledger-64.tsv` over, and pin the new sums here.
    #[test]
    fn the_seed_budget_is_pinned() {
        let sum = |t: ScalarType, seed: u64| {
            wide_inputs(t, seed, 1 << 12, &[])
                .iter()
                .fold(0u64, |h, &x| h.rotate_left(5) ^ x)
        };
        let sums: Vec<u64> = [ScalarType::Long, ScalarType::ULong, ScalarType::Double]
            .into_iter()
            .flat_map(|t| [sum(t, 0), sum(t, WIDE_SEEDS - 1)])
            .collect();
        assert_eq!(WIDE_GENERATOR, "clconv-wide-inputs-1");
        assert_eq!(sums, PINNED, "{sums:#x?}");
    }

    const PINNED: [u64; 6] = [
        0xf1be_7610_6353_a877,
        0x28e8_6222_6d20_0ea3,
        0x371a_7ba4_e14c_1308,
        0xbbc1_704a_5394_301f,
        0x6ae8_3034_5875_7be5,
        0x3966_0bdc_f975_c5d2,
    ];
}
