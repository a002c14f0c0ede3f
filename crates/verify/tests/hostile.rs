//! Hostile input through every door: property tests (proptest) of the JIT's typed and byte
//! entry points and of the reference interpreter over random requests, buffer lengths,
//! misaligned buffers, empty buffers, extreme lengths and wrong element types; random and
//! enormous names; and the replay of the fuzzers' seed corpora (`fuzz/corpus/`), the CI smoke of the fuzz targets.
//!
//! Every failing call must return a typed error with a clear message and leave the destination
//! untouched; no call may write outside its destination (guard bytes on both sides).

use clconv::buffer::{self, BufferError};
use clconv::jit::{Element, Half, Jit, JitError, X64Flags};
use clconv::{reference, Builtin, Extensions, Layout, Request, RequestError, Rounding};
use clconv_verify::fuzz_targets::{self, Differential};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const GUARD: usize = 32;

fn requests() -> &'static [Request] {
    static ALL: OnceLock<Vec<Request>> = OnceLock::new();
    ALL.get_or_init(|| Request::all(Extensions::with_fp16()))
}

fn jit() -> &'static Jit {
    static JIT: OnceLock<Jit> = OnceLock::new();
    JIT.get_or_init(|| {
        Jit::with_options(X64Flags::Host, Extensions::with_fp16(), Rounding::Rte).unwrap()
    })
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        // No files of failing seeds next to the tests: a failure prints its minimal input.
        failure_persistence: None,
        ..Config::default()
    }
}

/// A byte buffer whose data starts `offset` bytes after a 16-byte boundary, between guards.
struct Guarded {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl Guarded {
    fn new(bytes: &[u8], offset: usize) -> Guarded {
        let mut raw = vec![0xa5u8; bytes.len() + 2 * GUARD + 16];
        let base = raw.as_ptr() as usize + GUARD;
        let start = GUARD + (offset + 16 - base % 16) % 16;
        raw[start..start + bytes.len()].copy_from_slice(bytes);
        Guarded {
            raw,
            start,
            len: bytes.len(),
        }
    }
    fn get(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }
    fn get_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
    fn address(&self) -> usize {
        self.get().as_ptr() as usize
    }
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// A buffer error must say what is wrong in one line, naming the sizes involved.
fn assert_clear(e: &dyn std::fmt::Display, needles: &[String]) {
    let msg = e.to_string();
    assert!(
        !msg.is_empty() && !msg.contains('\n') && msg.len() < 600,
        "{msg:?}"
    );
    for n in needles {
        assert!(msg.contains(n.as_str()), "{n:?} not in {msg:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Byte buffers: Kernel::run_bytes and reference::evaluate
// ---------------------------------------------------------------------------------------------

/// One random case of the byte entry points: the JIT and the reference accept and refuse the
/// same buffers, with the same error; on success they write the same bytes; on failure the
/// destination is untouched; never a byte outside it.
#[allow(clippy::too_many_arguments)]
fn byte_case(
    request: Request,
    layout: Layout,
    vectors: usize,
    src_delta: isize,
    dst_delta: isize,
    src_offset: usize,
    dst_offset: usize,
    seed: u64,
) {
    let src_per = buffer::bytes_per_vector(request.src(), layout);
    let dst_per = buffer::bytes_per_vector(request.dst(), layout);
    let src_len = (vectors * src_per).saturating_add_signed(src_delta);
    let dst_len = (vectors * dst_per).saturating_add_signed(dst_delta);
    let src = Guarded::new(&pattern(src_len, seed), src_offset);
    assert_eq!(src.address() % 16, src_offset);
    let fill = pattern(dst_len, !seed);
    let mut jit_dst = Guarded::new(&fill, dst_offset);
    let mut ref_dst = Guarded::new(&fill, dst_offset);
    let before = jit_dst.raw.clone();
    let kernel = jit().compile_request(&request).unwrap();
    let got = kernel.run_bytes(layout, src.get(), jit_dst.get_mut());
    let want = reference::evaluate(&request, layout, src.get(), ref_dst.get_mut());
    let expected = buffer::vector_count(&request, layout, src_len, dst_len);
    let what = format!("{request} {layout:?} src {src_len} dst {dst_len}");
    match (&got, &want, &expected) {
        (Ok(()), Ok(report), Ok(n)) => {
            assert_eq!(report.vectors, *n, "{what}");
            assert_eq!(jit_dst.get(), ref_dst.get(), "{what}");
        }
        (Err(JitError::Buffer(a)), Err(b), Err(c)) => {
            assert_eq!(a, b, "{what}");
            assert_eq!(a, c, "{what}");
            assert_eq!(
                jit_dst.raw, before,
                "{what}: failed call changed the destination"
            );
            assert_eq!(
                ref_dst.raw, before,
                "{what}: failed call changed the destination"
            );
            let needles = match a {
                BufferError::RaggedSource { bytes, .. } => vec![format!("{bytes} bytes")],
                BufferError::DestinationSize {
                    bytes, expected, ..
                } => vec![
                    format!("{bytes} bytes"),
                    format!("exactly {expected} bytes"),
                ],
                other => panic!("{what}: unexpected {other:?}"),
            };
            assert_clear(a, &needles);
        }
        other => panic!("{what}: JIT, reference and vector_count disagree: {other:?}"),
    }
    for d in [&jit_dst, &ref_dst] {
        let (head, tail) = (&d.raw[..d.start], &d.raw[d.start + d.len..]);
        assert!(
            head.iter().chain(tail).all(|&b| b == 0xa5),
            "{what}: wrote outside the destination"
        );
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// Random requests, vector counts (empty included), lengths off by a few bytes, and
    /// misaligned sources and destinations (offsets 0..15 from a 16-byte boundary).
    #[test]
    fn byte_buffers_of_any_length_and_alignment(
        index in 0..requests().len(),
        aligned in any::<bool>(),
        vectors in prop_oneof![Just(0usize), 1..5usize, 5..70usize],
        src_delta in prop_oneof![3 => Just(0isize), 1 => -9..9isize],
        dst_delta in prop_oneof![3 => Just(0isize), 1 => -9..9isize],
        src_offset in 0..16usize,
        dst_offset in 0..16usize,
        seed in any::<u64>(),
    ) {
        let layout = if aligned { Layout::Aligned } else { Layout::Packed };
        byte_case(requests()[index], layout, vectors, src_delta, dst_delta, src_offset, dst_offset, seed);
    }

    /// The size check at the extremes of usize: never a panic or an overflow, and whatever it
    /// accepts is exact.
    #[test]
    fn vector_count_at_the_limits_of_usize(
        index in 0..requests().len(),
        aligned in any::<bool>(),
        src_len in prop_oneof![Just(usize::MAX), (usize::MAX - 64)..=usize::MAX, any::<usize>(), 0..1000usize],
        dst_len in prop_oneof![Just(usize::MAX), (usize::MAX - 64)..=usize::MAX, any::<usize>(), 0..1000usize],
    ) {
        let request = requests()[index];
        let layout = if aligned { Layout::Aligned } else { Layout::Packed };
        let src_per = buffer::bytes_per_vector(request.src(), layout);
        let dst_per = buffer::bytes_per_vector(request.dst(), layout);
        match buffer::vector_count(&request, layout, src_len, dst_len) {
            Ok(n) => {
                prop_assert_eq!(n.checked_mul(src_per), Some(src_len));
                prop_assert_eq!(n.checked_mul(dst_per), Some(dst_len));
            }
            Err(e) => assert_clear(&e, &[]),
        }
        // The whole-vector source with a destination of every vector's size, near usize::MAX.
        let n = src_len / src_per;
        let r = buffer::vector_count(&request, layout, n * src_per, n.wrapping_mul(dst_per));
        match n.checked_mul(dst_per) {
            Some(_) => prop_assert_eq!(r, Ok(n)),
            None => {
                let overflow = matches!(
                    r,
                    Err(BufferError::DestinationSize { expected: usize::MAX, .. })
                );
                prop_assert!(overflow, "{:?}", r);
            }
        }
    }
}

/// A buffer above the threshold where a run is split across threads, misaligned on both sides:
/// the split respects the guards and gives the reference's bytes.
#[test]
fn large_misaligned_buffers_split_across_threads() {
    let request = Request::parse("convert_half3_rtn(float3)", Extensions::with_fp16()).unwrap();
    let vectors = (clconv::jit::PARALLEL_THRESHOLD / 12) + 7;
    byte_case(request, Layout::Packed, vectors, 0, 0, 3, 13, 42);
    byte_case(request, Layout::Packed, vectors, 0, 2, 3, 13, 42);
}

// ---------------------------------------------------------------------------------------------
// Typed slices: Kernel::run
// ---------------------------------------------------------------------------------------------

trait Bits: Element + std::fmt::Debug {
    fn from_bits(bits: u64) -> Self;
    /// The bits, zero-extended (NaN compared by its bits, not as unequal to itself).
    fn bits(self) -> u64;
}

macro_rules! bits {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn from_bits(bits: u64) -> Self {
                <$t>::from_le_bytes(bits.to_le_bytes()[..std::mem::size_of::<$t>()].try_into().unwrap())
            }
            fn bits(self) -> u64 {
                let mut b = [0u8; 8];
                b[..std::mem::size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
                u64::from_le_bytes(b)
            }
        }
    )*};
}
bits!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

impl Bits for bool {
    fn from_bits(bits: u64) -> Self {
        bits & 1 == 1
    }
    fn bits(self) -> u64 {
        u64::from(self)
    }
}

impl Bits for Half {
    fn from_bits(bits: u64) -> Self {
        Half(bits as u16)
    }
    fn bits(self) -> u64 {
        u64::from(self.0)
    }
}

/// One typed case: `S` and `D` may or may not be the request's element types; the slices start
/// `src_skip`/`dst_skip` elements into their vectors (any alignment the type allows).
fn typed_case<S: Bits, D: Bits>(
    request: Request,
    src_elems: usize,
    dst_elems: usize,
    src_skip: usize,
    dst_skip: usize,
    seed: u64,
) {
    let bytes = pattern((src_elems + src_skip) * 8, seed);
    let src: Vec<S> = bytes
        .chunks(8)
        .map(|c| S::from_bits(u64::from_le_bytes(c.try_into().unwrap())))
        .collect();
    let sentinel = D::from_bits(0x5a5a_5a5a_5a5a_5a5a);
    let mut dst = vec![sentinel; dst_skip + dst_elems + 4];
    let kernel = jit().compile_request(&request).unwrap();
    let result = kernel.run(&src[src_skip..], &mut dst[dst_skip..dst_skip + dst_elems]);
    let what = format!(
        "{request} with {} x{} -> {} x{}",
        S::TYPE,
        src_elems,
        D::TYPE,
        dst_elems
    );
    let sentinel = sentinel.bits();
    let untouched_outside = dst[..dst_skip]
        .iter()
        .chain(&dst[dst_skip + dst_elems..])
        .all(|d| d.bits() == sentinel);
    assert!(untouched_outside, "{what}: wrote outside the destination");
    let (src_t, dst_t) = (request.src().elem, request.dst().elem);
    if S::TYPE != src_t || D::TYPE != dst_t {
        match &result {
            Err(JitError::Buffer(e @ BufferError::ElementType { .. })) => {
                let (wrong, right) = if S::TYPE != src_t {
                    (S::TYPE, src_t)
                } else {
                    (D::TYPE, dst_t)
                };
                assert_clear(e, &[wrong.name().to_string(), right.name().to_string()]);
            }
            other => panic!("{what}: expected an element type error, got {other:?}"),
        }
        assert!(dst.iter().all(|d| d.bits() == sentinel), "{what}: changed");
        return;
    }
    let src_bytes = std::mem::size_of::<S>() * src_elems;
    let dst_bytes = std::mem::size_of::<D>() * dst_elems;
    match buffer::vector_count(&request, Layout::Packed, src_bytes, dst_bytes) {
        Ok(_) => {
            result.unwrap_or_else(|e| panic!("{what}: {e}"));
            // The values passed, as bytes (a bool keeps one bit of its pattern).
            let raw: Vec<u8> = src[src_skip..]
                .iter()
                .flat_map(|s| s.bits().to_le_bytes()[..std::mem::size_of::<S>()].to_vec())
                .collect();
            let mut want = vec![0u8; dst_bytes];
            reference::evaluate(&request, Layout::Packed, &raw, &mut want).unwrap();
            let want: Vec<u64> = want
                .chunks(std::mem::size_of::<D>())
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..c.len()].copy_from_slice(c);
                    u64::from_le_bytes(b)
                })
                .collect();
            let got: Vec<u64> = dst[dst_skip..dst_skip + dst_elems]
                .iter()
                .map(|d| d.bits())
                .collect();
            assert_eq!(got, want, "{what}");
        }
        Err(e) => {
            assert_eq!(result, Err(JitError::Buffer(e)), "{what}");
            assert!(dst.iter().all(|d| d.bits() == sentinel), "{what}: changed");
        }
    }
}

fn typed_dst<S: Bits>(d: usize, r: Request, n: usize, m: usize, a: usize, b: usize, seed: u64) {
    match d {
        0 => typed_case::<S, i8>(r, n, m, a, b, seed),
        1 => typed_case::<S, u8>(r, n, m, a, b, seed),
        2 => typed_case::<S, i16>(r, n, m, a, b, seed),
        3 => typed_case::<S, u16>(r, n, m, a, b, seed),
        4 => typed_case::<S, i32>(r, n, m, a, b, seed),
        5 => typed_case::<S, u32>(r, n, m, a, b, seed),
        6 => typed_case::<S, i64>(r, n, m, a, b, seed),
        7 => typed_case::<S, u64>(r, n, m, a, b, seed),
        8 => typed_case::<S, Half>(r, n, m, a, b, seed),
        9 => typed_case::<S, f32>(r, n, m, a, b, seed),
        11 => typed_case::<S, bool>(r, n, m, a, b, seed),
        _ => typed_case::<S, f64>(r, n, m, a, b, seed),
    }
}

#[allow(clippy::too_many_arguments)]
fn typed(s: usize, d: usize, r: Request, n: usize, m: usize, a: usize, b: usize, seed: u64) {
    match s {
        0 => typed_dst::<i8>(d, r, n, m, a, b, seed),
        1 => typed_dst::<u8>(d, r, n, m, a, b, seed),
        2 => typed_dst::<i16>(d, r, n, m, a, b, seed),
        3 => typed_dst::<u16>(d, r, n, m, a, b, seed),
        4 => typed_dst::<i32>(d, r, n, m, a, b, seed),
        5 => typed_dst::<u32>(d, r, n, m, a, b, seed),
        6 => typed_dst::<i64>(d, r, n, m, a, b, seed),
        7 => typed_dst::<u64>(d, r, n, m, a, b, seed),
        8 => typed_dst::<Half>(d, r, n, m, a, b, seed),
        9 => typed_dst::<f32>(d, r, n, m, a, b, seed),
        11 => typed_dst::<bool>(d, r, n, m, a, b, seed),
        _ => typed_dst::<f64>(d, r, n, m, a, b, seed),
    }
}

/// The index `typed` takes for `t`: 0..=10 OpenCL's types, 11 bool; bfloat16, the fp8 types
/// and the narrow formats (whose typed elements this test does not run) land on 12.., which
/// `typed` reads as f64, a wrong type.
fn type_index(t: clconv::ScalarType) -> usize {
    match t {
        clconv::ScalarType::Bool => 11,
        t => {
            // The narrow formats (not in ALL) land past it too.
            let i = clconv::ScalarType::ALL
                .iter()
                .position(|&x| x == t)
                .unwrap_or(clconv::ScalarType::ALL.len());
            if i <= 10 {
                i
            } else {
                i + 1
            }
        }
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// Typed slices: the right element types (usually) or wrong ones, element counts that fit or
    /// not, slices starting anywhere in their buffers.
    #[test]
    fn typed_slices_of_any_type_and_length(
        index in 0..requests().len(),
        right_src in prop::bool::weighted(0.8),
        right_dst in prop::bool::weighted(0.8),
        wrong_src in 0..12usize,
        wrong_dst in 0..12usize,
        vectors in 0..40usize,
        src_delta in prop_oneof![3 => Just(0isize), 1 => -3..3isize],
        dst_delta in prop_oneof![3 => Just(0isize), 1 => -3..3isize],
        src_skip in 0..16usize,
        dst_skip in 0..16usize,
        seed in any::<u64>(),
    ) {
        let r = requests()[index];
        let s = if right_src { type_index(r.src().elem) } else { wrong_src };
        let d = if right_dst { type_index(r.dst().elem) } else { wrong_dst };
        let n = (vectors * r.src().lanes()).saturating_add_signed(src_delta);
        let m = (vectors * r.dst().lanes()).saturating_add_signed(dst_delta);
        typed(s, d, r, n, m, src_skip, dst_skip, seed);
    }
}

/// The destination-only spelling: the byte form cannot know the source type (typed error,
/// destination untouched); a typed source of a type the JIT does not accept is a typed error.
#[test]
fn destination_only_kernels_refuse_what_they_cannot_know() {
    let jit = Jit::new().unwrap(); // without cl_khr_fp16
    let k = jit.compile("convert_int4_sat_rte").unwrap();
    let mut dst = [7u8; 16];
    let e = k
        .run_bytes(Layout::Packed, &[0u8; 16], &mut dst)
        .unwrap_err();
    assert!(matches!(e, JitError::NeedsSourceType { .. }), "{e:?}");
    assert_clear(&e, &["convert_int4_sat_rte(float4)".into()]);
    assert_eq!(dst, [7u8; 16]);
    let mut ints = [7i32; 4];
    let e = k.run(&[Half(0); 4], &mut ints).unwrap_err();
    assert!(
        matches!(e, JitError::Request(RequestError::HalfWithoutFp16 { .. })),
        "{e:?}"
    );
    assert_clear(&e, &["cl_khr_fp16".into()]);
    assert_eq!(ints, [7; 4]);
    // A destination of the wrong type for the name.
    let mut floats = [7.0f32; 4];
    let e = k.run(&[1.0f32; 4], &mut floats).unwrap_err();
    assert_clear(&e, &["float".into(), "int".into()]);
    assert_eq!(floats, [7.0; 4]);
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(2000))]

    /// Random text, random bytes and mutations of real names: the parsers never panic, errors
    /// are bounded single lines, and what they accept prints back to the same request (the
    /// parse_name fuzz target's property).
    #[test]
    fn random_names_never_panic(
        name in prop_oneof![
            any::<String>(),
            "[a-z_0-9()DvZ ]{0,40}",
            "(convert|as)_(u?(char|short|int|long)|half|float|double)(2|3|4|8|16)?(_sat)?(_rt[eznp])?\\((u?(char|short|int|long)|half|float|double)(2|3|4|8|16)?\\)",
            "_Z[0-9]{1,3}(convert|as)_[a-z0-9_]{0,24}(Dv[0-9]{1,2}_)?(Dh|[a-z])",
        ],
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        prop_assert_eq!(fuzz_targets::parse_name(name.as_bytes()), Ok(()));
        prop_assert_eq!(fuzz_targets::parse_name(&bytes), Ok(()));
        let _ = jit().compile(&name);
        // The MX block parser too: an error is a bounded single line, a request prints back.
        for text in [name.clone(), format!("convert_mx{name}"), format!("convert_float(mx{name})")] {
            match clconv::mx::MxRequest::parse(&text) {
                Ok(r) => prop_assert_eq!(clconv::mx::MxRequest::parse(&r.to_string()), Ok(r)),
                Err(e) => assert_clear(&e, &[]),
            }
        }
    }
}

/// Names of megabytes through the library: refused at once with the length, not echoed.
#[test]
fn names_of_megabytes_are_refused_with_a_short_message() {
    for name in [
        "a".repeat(1 << 20),
        format!("convert_int4_sat_rte({}float4)", " ".repeat(3 << 20)),
        "\u{430}".repeat(1 << 20), // 2 MB of Cyrillic
        format!("_Z{}convert_int4", "9".repeat(1 << 20)),
    ] {
        for ext in [Extensions::default(), Extensions::with_fp16()] {
            let e = Request::parse(&name, ext).unwrap_err();
            assert!(matches!(e, RequestError::TooLong { .. }), "{e:?}");
            assert_clear(&e, &[format!("{} bytes", name.len())]);
            let e = Builtin::parse(&name, ext).unwrap_err();
            assert_clear(&e, &[format!("{} bytes", name.len())]);
        }
        let e = jit().compile(&name).err().expect("refused");
        assert_clear(&e, &["bytes".into()]);
        let e = clconv::mx::MxRequest::parse(&name).unwrap_err();
        assert_clear(&e, &[format!("{} bytes", name.len())]);
    }
}

// ---------------------------------------------------------------------------------------------
// The fuzz targets' seed corpora (the CI fuzz smoke)
// ---------------------------------------------------------------------------------------------

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{}: too few seeds", dir.display());
    files
}

#[test]
fn parse_name_corpus_replays_clean() {
    for (path, bytes) in corpus("parse_name") {
        if let Err(f) = fuzz_targets::parse_name(&bytes) {
            panic!("{}: {f}", path.display());
        }
    }
}

#[test]
fn jit_vs_reference_corpus_replays_clean() {
    let d = Differential::new().unwrap();
    for (path, bytes) in corpus("jit_vs_reference") {
        if let Err(f) = d.check(&bytes) {
            panic!("{}: {f}", path.display());
        }
    }
}

proptest! {
    #![proptest_config(config(400))]

    /// A few hundred random differential inputs (the fuzz target on proptest's bytes).
    #[test]
    fn jit_vs_reference_random_inputs(
        index in any::<u16>(),
        control in any::<u8>(),
        offsets in any::<u8>(),
        payload in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        static D: OnceLock<Differential> = OnceLock::new();
        let d = D.get_or_init(|| Differential::new().unwrap());
        let mut input = index.to_le_bytes().to_vec();
        input.extend([control, offsets]);
        input.extend(payload);
        if let Err(f) = d.check(&input) {
            prop_assert!(false, "{}", f);
        }
    }
}
