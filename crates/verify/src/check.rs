//! Differential checking: runs JIT kernels and the reference interpreter on the same inputs and
//! reports the first mismatches as (function, input bits, expected bits, got bits).
//!
//! Inputs per source type ([`inputs`]):
//! - 8- and 16-bit sources (char, uchar, short, ushort, half): every bit pattern.
//! - float and double: the special values, each with its one-ulp neighbours on both sides and
//!   both signs: zeros, subnormals (smallest, largest), FLT_MIN/DBL_MIN, every power of two of
//!   the format, ties and near-ties (k + 0.5 for small k, 0.5 - 1 ulp), the integer-range edges
//!   (2^7, 2^8, 2^15, 2^16, 2^31, 2^32, 2^63, 2^64), the half and float range edges (65504,
//!   65520, FLT_MAX and the double values around it and around float's subnormal ties), ±inf,
//!   NaNs with several payloads (quiet, signalling, all-ones); every integer of a 16-bit range;
//!   then random bit patterns and random values of moderate magnitude.
//! - 32- and 64-bit integers: 0, ±1, ±2^k and their neighbours for every k, every type's
//!   MIN/MAX and neighbours, float/double/half rounding ties (2^k + 2^(k-p)) and their
//!   neighbours, every integer of a 16-bit range, then random bit patterns and as many random
//!   values of random bit length or with a random half/float/double rounding near-tie.
//!
//! Every request is run on the whole input buffer and on every length from 0 vectors up to three
//! vector blocks and a tail (empty, 1, every block boundary), in the packed layout and, for
//! 3-component vectors, the aligned one; the bytes after the destination are checked untouched.

use clconv::buffer::bytes_per_vector;
use clconv::jit::{Jit, JitError};
use clconv::reference;
use clconv::request::{Conversion, Request};
use clconv::types::{Layout, Rounding, ScalarType, Width};
use std::collections::HashMap;
use std::fmt;

/// One element where a kernel and the reference disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The request, canonical spelling.
    pub request: String,
    /// The buffer layout.
    pub layout: Layout,
    /// Index of the destination element (or byte, for reinterpretations and overruns).
    pub index: usize,
    /// The source element's bits (for reinterpretations: the source vector's first 8 bytes).
    pub input: u64,
    /// The reference's bits.
    pub expected: u64,
    /// The kernel's bits.
    pub got: u64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}] element {}: input 0x{:x}, expected 0x{:x}, got 0x{:x}",
            self.request,
            self.layout.name(),
            self.index,
            self.input,
            self.expected,
            self.got
        )
    }
}

/// What checking one request found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Elements compared (over all buffer lengths and layouts).
    pub elements: usize,
    /// Of those, how many the spec leaves implementation-defined (compared all the same,
    /// against clconv's defined result).
    pub implementation_defined: usize,
    /// The first mismatches (at most [`Checker::MAX_REPORTED`]).
    pub mismatches: Vec<Mismatch>,
    /// All mismatches, counted.
    pub mismatch_count: usize,
}

/// Runs requests through a [`Jit`] and the reference, with inputs and reference results cached
/// across requests (all six widths of a conversion share one per-element table).
pub struct Checker {
    jit: Jit,
    static_mode: Rounding,
    random: usize,
    seed: u64,
    inputs: HashMap<ScalarType, Vec<u64>>,
    expected: HashMap<Conversion, Vec<reference::ElementResult>>,
}

impl Checker {
    /// Mismatches kept per request.
    pub const MAX_REPORTED: usize = 10;

    /// A checker over `jit` with `random` random inputs per source type (on top of the special
    /// values), from the RNG seed `seed`. Turns on `jit`'s IR verification
    /// ([`Jit::set_verify_ir`]).
    pub fn new(jit: Jit, random: usize, seed: u64) -> Checker {
        // Every kernel it checks also passes Cranelift's IR verifier.
        jit.set_verify_ir(true);
        Checker {
            jit,
            static_mode: Rounding::Rte,
            random,
            seed,
            inputs: HashMap::new(),
            expected: HashMap::new(),
        }
    }

    /// The input bit patterns used for source type `t`.
    pub fn inputs_for(&mut self, t: ScalarType) -> &[u64] {
        let (random, seed) = (self.random, self.seed);
        self.inputs
            .entry(t)
            .or_insert_with(|| inputs(t, random, seed))
    }

    /// Compiles `request`, runs it and the reference on the inputs, and compares.
    pub fn check(&mut self, request: &Request) -> Result<Outcome, JitError> {
        let kernel = self.jit.compile_request(request)?;
        let src_t = request.src();
        let dst_t = request.dst();
        let lanes = src_t.lanes();
        let mut elements: Vec<u64> = self.inputs_for(src_t.elem).to_vec();
        // Whole vectors: repeat from the start to fill the last one.
        let mut k = 0;
        while !elements.len().is_multiple_of(lanes) {
            elements.push(elements[k]);
            k += 1;
        }
        let expected_elems: Option<Vec<reference::ElementResult>> = match request {
            Request::Convert(c) => Some(self.expected_for(c, &elements)),
            Request::Reinterpret(_) | Request::Chain(_) => None,
        };
        let vectors_total = elements.len() / lanes;
        let layouts: &[Layout] = if src_t.width == Width::W3 || dst_t.width == Width::W3 {
            &[Layout::Packed, Layout::Aligned]
        } else {
            &[Layout::Packed]
        };
        let mut outcome = Outcome::default();
        for &layout in layouts {
            let dst_stride = layout.stride(dst_t.width);
            let src_bytes_per = bytes_per_vector(src_t, layout);
            let dst_bytes_per = bytes_per_vector(dst_t, layout);
            let src = source_buffer(src_t, layout, &elements);
            // The expected destination.
            let mut want = vec![0u8; vectors_total * dst_bytes_per];
            let mut impl_defined = vec![false; vectors_total * dst_stride];
            match &expected_elems {
                Some(exp) => {
                    let db = dst_t.elem.bytes();
                    for v in 0..vectors_total {
                        for lane in 0..lanes {
                            let r = exp[v * lanes + lane];
                            let at = (v * dst_stride + lane) * db;
                            want[at..at + db].copy_from_slice(&r.bits.to_le_bytes()[..db]);
                            impl_defined[v * dst_stride + lane] = r.implementation_defined;
                        }
                    }
                }
                None => {
                    reference::evaluate_with_mode(
                        request,
                        layout,
                        self.static_mode,
                        &src,
                        &mut want,
                    )?;
                }
            }
            // A vector kernel's loop converts a power of two of elements per iteration, at most
            // 128 (`kernel::elements_per_iteration`), and the rest in one pass on padded
            // copies: every length up to 140 elements (every tail alone, and one iteration plus
            // short tails), then 2 and 3 iterations with the shortest and longest tails.
            let longest = (140 / lanes + 1).max(12).min(vectors_total);
            let mut lengths: Vec<usize> = (0..=longest).collect();
            for per_iteration in [2usize, 4, 8, 16, 32, 64, 128] {
                for elements in [2 * per_iteration + 1, 3 * per_iteration - 1] {
                    let n = elements.div_ceil(lanes);
                    if n > longest && n <= vectors_total && !lengths.contains(&n) {
                        lengths.push(n);
                    }
                }
            }
            lengths.push(vectors_total);
            for n in lengths {
                let src_part = &src[..n * src_bytes_per];
                let want_part = &want[..n * dst_bytes_per];
                const GUARD: usize = 64;
                let mut got = vec![0xa5u8; n * dst_bytes_per + GUARD];
                let (body, guard) = got.split_at_mut(n * dst_bytes_per);
                kernel.run_bytes(layout, src_part, body)?;
                for (i, &g) in guard.iter().enumerate() {
                    if g != 0xa5 {
                        outcome.mismatch_count += 1;
                        push(
                            &mut outcome,
                            Mismatch {
                                request: format!(
                                    "{request} (write past the destination, length {n})"
                                ),
                                layout,
                                index: n * dst_bytes_per + i,
                                input: 0,
                                expected: 0xa5,
                                got: g as u64,
                            },
                        );
                    }
                }
                let got = &got[..n * dst_bytes_per];
                outcome.elements += n * lanes;
                outcome.implementation_defined += impl_defined[..n * dst_stride]
                    .iter()
                    .filter(|&&d| d)
                    .count();
                if got == want_part {
                    continue;
                }
                let keep = Checker::MAX_REPORTED - outcome.mismatches.len();
                let (count, found) =
                    diff(request, layout, src_part, want_part, got, &elements, keep);
                outcome.mismatch_count += count;
                outcome.mismatches.extend(found);
            }
        }
        Ok(outcome)
    }

    fn expected_for(&mut self, c: &Conversion, elements: &[u64]) -> Vec<reference::ElementResult> {
        let scalar = c.per_element();
        let mode = self.static_mode;
        let cached = self.expected.entry(scalar).or_default();
        if cached.len() < elements.len() {
            cached.clear();
            cached.extend(
                elements
                    .iter()
                    .map(|&x| reference::convert_element(&scalar, mode, x)),
            );
        }
        cached[..elements.len()].to_vec()
    }
}

/// Compares a kernel's destination bytes `got` with the reference's `want` for `request` over
/// the source bytes `src` (whose elements' bits are `elements`, packed): the number of
/// mismatching elements (vectors, for reinterpretations) and the first `keep` of them.
pub fn diff(
    request: &Request,
    layout: Layout,
    src: &[u8],
    want: &[u8],
    got: &[u8],
    elements: &[u64],
    keep: usize,
) -> (usize, Vec<Mismatch>) {
    let src_t = request.src();
    let dst_t = request.dst();
    let mut count = 0;
    let mut kept = Vec::new();
    let mut push = |m: Mismatch| {
        count += 1;
        if kept.len() < keep {
            kept.push(m);
        }
    };
    match request {
        Request::Convert(_) => {
            let db = dst_t.elem.bytes();
            let stride = layout.stride(dst_t.width);
            let lanes = dst_t.lanes();
            for (i, (w, g)) in want.chunks(db).zip(got.chunks(db)).enumerate() {
                if w == g {
                    continue;
                }
                let (v, slot) = (i / stride, i % stride);
                let input = if slot < lanes {
                    elements[v * lanes + slot]
                } else {
                    0
                };
                push(Mismatch {
                    request: request.to_string(),
                    layout,
                    index: i,
                    input,
                    expected: le_bits(w),
                    got: le_bits(g),
                });
            }
        }
        Request::Reinterpret(_) | Request::Chain(_) => {
            let per = bytes_per_vector(dst_t, layout);
            let src_per = bytes_per_vector(src_t, layout);
            for (v, (w, g)) in want.chunks(per).zip(got.chunks(per)).enumerate() {
                if w == g {
                    continue;
                }
                let s = &src[v * src_per..(v + 1) * src_per];
                push(Mismatch {
                    request: request.to_string(),
                    layout,
                    index: v,
                    input: le_bits(&s[..s.len().min(8)]),
                    expected: le_bits(&w[..w.len().min(8)]),
                    got: le_bits(&g[..g.len().min(8)]),
                });
            }
        }
    }
    (count, kept)
}

fn push(outcome: &mut Outcome, m: Mismatch) {
    if outcome.mismatches.len() < Checker::MAX_REPORTED {
        outcome.mismatches.push(m);
    }
}

fn le_bits(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// A small deterministic RNG (xorshift64*), so every run checks the same inputs for a seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// An RNG from `seed` (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The input bit patterns for source type `t` (see the module docs), with `random` random
/// patterns (and as many random moderate-magnitude values for float sources).
pub fn inputs(t: ScalarType, random: usize, seed: u64) -> Vec<u64> {
    if t.bits() <= 16 {
        return (0..1u64 << t.bits()).collect();
    }
    let mut rng = Rng::new(seed ^ t.bits() as u64 ^ ((t as u64) << 8));
    let mut out = match t {
        ScalarType::Float | ScalarType::Double => float_specials(FloatFormat::of(t)),
        _ => int_specials(t),
    };
    let mask = mask_of(t);
    for _ in 0..random {
        out.push(rng.next_u64() & mask);
    }
    if t.is_integer() {
        for _ in 0..random {
            out.push(structured_integer(t, &mut rng) & mask);
        }
    }
    if t.is_float() {
        let f = FloatFormat::of(t);
        for _ in 0..random {
            // Exponents around the integer ranges, where float -> int results are interesting.
            let r = rng.next_u64();
            let exp = (r % 80) as i64 - 8;
            let sign = (r >> 63) << (f.bits - 1);
            let mant = rng.next_u64() & f.mantissa_mask();
            out.push(sign | ((f.bias + exp) as u64) << f.mantissa_bits | mant);
        }
    }
    out
}

/// The source buffer of `elements` (whole vectors of `src_t`) in `layout`: each vector's
/// elements, padding slots filled with a pattern the kernel must ignore (conversions) or pass
/// through (reinterpretations). [`Checker`] and the interpreter's check run kernels on it.
pub(crate) fn source_buffer(
    src_t: clconv::VectorType,
    layout: Layout,
    elements: &[u64],
) -> Vec<u8> {
    let lanes = src_t.lanes();
    let vectors_total = elements.len() / lanes;
    let src_stride = layout.stride(src_t.width);
    let mut src = vec![0u8; vectors_total * bytes_per_vector(src_t, layout)];
    let eb = src_t.elem.bytes();
    for v in 0..vectors_total {
        for slot in 0..src_stride {
            let bits = if slot < lanes {
                elements[v * lanes + slot]
            } else {
                0x5a5a_5a5a_5a5a_5a5a ^ v as u64
            };
            let at = (v * src_stride + slot) * eb;
            src[at..at + eb].copy_from_slice(&bits.to_le_bytes()[..eb]);
        }
    }
    src
}

/// A random integer of source type `t` with structure uniform bits rarely have: a random bit
/// length (so every magnitude is as likely as the largest), or, every other draw, a rounding
/// near-tie for half, float or double (p + 1 or p + 2 significant bits ending in 1, at a random
/// position), with a random sign for signed types.
pub(crate) fn structured_integer(t: ScalarType, rng: &mut Rng) -> u64 {
    let bits = t.bits();
    let r = rng.next_u64();
    let magnitude_bits = bits - t.is_signed_integer() as u32;
    let m = if r & 1 == 0 {
        let len = 1 + (r >> 1) as u32 % magnitude_bits;
        rng.next_u64() >> (64 - len)
    } else {
        let p = [11u32, 24, 53][((r >> 1) % 3) as usize];
        let len = (p + 1 + ((r >> 3) & 1) as u32).min(magnitude_bits);
        let significand = (rng.next_u64() >> (64 - len)) | 1 | (1u64 << (len - 1));
        let room = magnitude_bits - len;
        significand << ((r >> 8) as u32 % (room + 1))
    };
    if t.is_signed_integer() && (r >> 63) == 1 {
        m.wrapping_neg()
    } else {
        m
    }
}

/// A binary floating-point format's shape, and the bit patterns of its landmarks (also the
/// cross-target check's, [`crate::cross`]).
#[derive(Clone, Copy)]
pub(crate) struct FloatFormat {
    pub(crate) bits: u32,
    pub(crate) mantissa_bits: u32,
    pub(crate) bias: i64,
    max_exp: i64,
}

impl FloatFormat {
    const HALF: FloatFormat = FloatFormat {
        bits: 16,
        mantissa_bits: 10,
        bias: 15,
        max_exp: 15,
    };
    const SINGLE: FloatFormat = FloatFormat {
        bits: 32,
        mantissa_bits: 23,
        bias: 127,
        max_exp: 127,
    };
    const DOUBLE: FloatFormat = FloatFormat {
        bits: 64,
        mantissa_bits: 52,
        bias: 1023,
        max_exp: 1023,
    };

    const BFLOAT: FloatFormat = FloatFormat {
        bits: 16,
        mantissa_bits: 7,
        bias: 127,
        max_exp: 127,
    };
    /// OCP E4M3: exponent 1111 holds normal numbers (up to 448 = 1.75 * 2^8).
    const E4M3: FloatFormat = FloatFormat {
        bits: 8,
        mantissa_bits: 3,
        bias: 7,
        max_exp: 8,
    };
    const E5M2: FloatFormat = FloatFormat {
        bits: 8,
        mantissa_bits: 2,
        bias: 15,
        max_exp: 15,
    };

    /// The format of the floating type `t`.
    pub(crate) fn of(t: ScalarType) -> FloatFormat {
        match t {
            ScalarType::Half => FloatFormat::HALF,
            ScalarType::Float => FloatFormat::SINGLE,
            ScalarType::BFloat => FloatFormat::BFLOAT,
            ScalarType::Fp8E4M3 => FloatFormat::E4M3,
            ScalarType::Fp8E5M2 => FloatFormat::E5M2,
            _ => FloatFormat::DOUBLE,
        }
    }

    pub(crate) fn mantissa_mask(self) -> u64 {
        (1u64 << self.mantissa_bits) - 1
    }

    pub(crate) fn sign(self) -> u64 {
        1u64 << (self.bits - 1)
    }

    pub(crate) fn inf(self) -> u64 {
        ((1u64 << (self.bits - 1 - self.mantissa_bits)) - 1) << self.mantissa_bits
    }

    /// The bits of 2^e (normal range only).
    pub(crate) fn pow2(self, e: i64) -> u64 {
        ((self.bias + e) as u64) << self.mantissa_bits
    }

    /// The bits of the exact integer or half-integer `v / 2` (v >= 0, v < 2^mantissa).
    fn half_integer(self, twice: u64) -> u64 {
        if twice == 0 {
            return 0;
        }
        let lz = 63 - twice.leading_zeros() as i64; // position of the top bit
        let e = lz - 1; // value = twice / 2
        let mant = (twice << (self.mantissa_bits as i64 - lz)) & self.mantissa_mask();
        ((self.bias + e) as u64) << self.mantissa_bits | mant
    }
}

fn float_specials(f: FloatFormat) -> Vec<u64> {
    let mut base: Vec<u64> = vec![
        0,
        1,                       // smallest subnormal
        f.mantissa_mask(),       // largest subnormal
        1u64 << f.mantissa_bits, // FLT_MIN / DBL_MIN
        f.inf() - 1,             // MAX
    ];
    for e in (1 - f.bias)..=f.max_exp {
        base.push(f.pow2(e));
    }
    for twice in 0..=1000u64 {
        base.push(f.half_integer(twice)); // 0, 0.5, 1, 1.5, ... 500
    }
    for v in [
        127u64, 128, 255, 256, 32767, 32768, 65503, 65504, 65519, 65520, 65535, 65536,
    ] {
        base.push(f.half_integer(2 * v + 1));
        base.push(f.half_integer(2 * v));
    }
    if f.bits == 64 {
        // Around float's range edges and float subnormal ties, for double -> float / half.
        for e in [
            -126i64, -127, -149, -150, -151, -24, -25, -26, -14, -15, 15, 16, 127, 128,
        ] {
            base.push(f.pow2(e));
            base.push(f.pow2(e) | (1u64 << 51)); // 1.5 * 2^e
            base.push(f.pow2(e) | (1u64 << 28)); // float's tie bit at 2^e
            base.push(f.pow2(e) | (1u64 << 41)); // half's tie bit at 2^e
        }
        base.push(0x47ef_ffff_e000_0000); // FLT_MAX
        base.push(0x47ef_ffff_f000_0000); // FLT_MAX + half an ulp: rte overflows
    } else {
        for e in [-14i64, -15, -24, -25, -26, 15, 16] {
            base.push(f.pow2(e));
            base.push(f.pow2(e) | (1u64 << 12)); // half's tie bit at 2^e
        }
    }
    let mut out = Vec::with_capacity(base.len() * 6 + 16);
    for &b in &base {
        for x in [b, b.wrapping_add(1), b.wrapping_sub(1)] {
            if x & f.sign() == 0 && x <= f.inf() {
                out.push(x);
                out.push(x | f.sign());
            }
        }
    }
    // Integers of 16-bit ranges, for the 8/16-bit destinations' every value.
    for i in -32769i64..=65536 {
        let v = i.unsigned_abs();
        let bits = f.half_integer(2 * v);
        out.push(if i < 0 { bits | f.sign() } else { bits });
    }
    let quiet = 1u64 << (f.mantissa_bits - 1);
    for payload in [
        quiet,
        1,
        quiet | 1,
        f.mantissa_mask(),
        quiet >> 1,
        0x5a5 & f.mantissa_mask(),
    ] {
        out.push(f.inf() | payload);
        out.push(f.inf() | payload | f.sign());
    }
    out
}

/// The bits of type `t`: `t.bits()` ones.
pub(crate) fn mask_of(t: ScalarType) -> u64 {
    if t.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    }
}

/// The integers where conversions from and to integer types change behaviour, each with its
/// neighbours (-1, 0, +1), as bit patterns of `t` (wrapped to its width, unsorted, repeats
/// kept): 0, ±1; half's range edges (65504, 65519, 65520: the largest half, the last value
/// that rounds to it to nearest, the first that overflows); every integer type's MIN and MAX;
/// ±2^k for every k < 64; and at every magnitude the ties of half, float and double (p = 11,
/// 24, 53 significant bits: halfway between two representable neighbours) and the next tie,
/// both signs. The differential check and the cross-ISA plan both start from these.
pub fn integer_edges(t: ScalarType) -> Vec<u64> {
    let mut base: Vec<i128> = vec![0, 1, -1, 65504, 65519, 65520];
    for other in ScalarType::ALL.into_iter().filter(|o| o.is_integer()) {
        base.push(other.int_min().unwrap_or(0));
        base.push(other.int_max().unwrap_or(0));
    }
    for k in 0..64 {
        base.push(1i128 << k);
        base.push(-(1i128 << k));
        for p in [11, 24, 53] {
            if k > p {
                let tie = (1i128 << k) + (1i128 << (k - p));
                let next = tie + (2i128 << (k - p));
                base.extend([tie, -tie, next, -next]);
            }
        }
    }
    let mask = mask_of(t);
    let mut out = Vec::with_capacity(3 * base.len());
    for &b in &base {
        for d in [-1i128, 0, 1] {
            out.push(((b + d) as u64) & mask);
        }
    }
    out
}

fn int_specials(t: ScalarType) -> Vec<u64> {
    let mask = mask_of(t);
    let mut out = integer_edges(t);
    for i in -32769i64..=65536 {
        out.push(i as u64 & mask);
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The structured integer inputs reach what uniform bit patterns almost never do: every bit
    /// length of the magnitude, both signs, and values just off the float rounding ties.
    #[test]
    fn structured_integer_inputs_cover_every_magnitude_and_near_ties() {
        for t in [
            ScalarType::Long,
            ScalarType::ULong,
            ScalarType::Int,
            ScalarType::UInt,
        ] {
            let xs = inputs(t, 20_000, 7);
            let structured = &xs[xs.len() - 20_000..];
            let magnitude_bits = t.bits() - t.is_signed_integer() as u32;
            let sign_extend = |x: u64| ((x << (64 - t.bits())) as i64) >> (64 - t.bits());
            let magnitude = |x: u64| {
                if t.is_signed_integer() {
                    sign_extend(x).unsigned_abs()
                } else {
                    x
                }
            };
            for len in 1..=magnitude_bits {
                assert!(
                    structured
                        .iter()
                        .any(|&x| 64 - magnitude(x).leading_zeros() == len),
                    "{t:?}: no structured input with a {len}-bit magnitude"
                );
            }
            if t.is_signed_integer() {
                assert!(structured.iter().any(|&x| sign_extend(x) < 0));
            }
            // A float near-tie: exactly 26 significant bits (24 + 2), ending in 1.
            let near_tie = |m: u64| {
                let m = m >> m.trailing_zeros().min(63);
                m != 0 && 64 - m.leading_zeros() == 26
            };
            if magnitude_bits > 26 {
                assert!(structured.iter().any(|&x| near_tie(magnitude(x))), "{t:?}");
            }
        }
    }
}
