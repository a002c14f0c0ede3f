//! Hostile input through every door: property tests (proptest) of the JIT's typed and byte
//! entry points and of the reference interpreter over random requests, buffer lengths,
//! misaligned buffers, empty buffers, extreme lengths and wrong element types; random and
//! enormous names; the command line with truncated, ragged, missing and unwritable files; and
//! the replay of the fuzzers' seed corpora (`fuzz/corpus/`), the CI smoke of the fuzz targets.
//!
//! Every failing call must return a typed error with a clear message and leave the destination
//! untouched; no call may write outside its destination (guard bytes on both sides).

use clconv::buffer::{self, BufferError};
use clconv::fuzz_targets::{self, Differential};
use clconv::jit::{Element, Half, Jit, JitError, X64Flags};
use clconv::{reference, Builtin, Extensions, Layout, Request, RequestError, Rounding};
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
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
            let raw: Vec<u8> = bytes[src_skip * 8..]
                .chunks(8)
                .flat_map(|c| c[..std::mem::size_of::<S>()].to_vec())
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
        _ => typed_dst::<f64>(d, r, n, m, a, b, seed),
    }
}

fn type_index(t: clconv::ScalarType) -> usize {
    clconv::ScalarType::ALL
        .iter()
        .position(|&x| x == t)
        .unwrap()
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
        wrong_src in 0..11usize,
        wrong_dst in 0..11usize,
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
    }
}

// ---------------------------------------------------------------------------------------------
// The fuzz targets' seed corpora (the CI fuzz smoke)
// ---------------------------------------------------------------------------------------------

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
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

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

const BIN: &str = env!("CARGO_BIN_EXE_clconv");

fn clconv(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run clconv");
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

/// Exit status 2, one line on stderr containing every needle, nothing on stdout.
#[track_caller]
fn usage_error(args: &[&str], stdin: &[u8], needles: &[&str]) -> String {
    let o = clconv(args, stdin);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
    assert_eq!(o.status.code(), Some(2), "{shown:?}: {err}");
    assert!(o.stdout.is_empty(), "{shown:?}");
    assert_eq!(err.lines().count(), 1, "{shown:?}: {err:?}");
    assert!(
        err.starts_with("clconv: error: ") && !err.contains("panicked"),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{shown:?}: {n:?} not in {err:?}");
    }
    err
}

struct Temp(PathBuf);

impl Temp {
    fn new(what: &str) -> Temp {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        Temp(std::env::temp_dir().join(format!("clconv-hostile-{}-{n}-{what}", std::process::id())))
    }
    fn s(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(&self.0);
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn cli_truncated_and_ragged_inputs() {
    let out = Temp::new("out.bin");
    // Truncated after whole elements (5 floats for float4), mid-element (18 bytes), and a
    // file of the other 3-component layout.
    for (name, bytes, needles) in [
        (
            "convert_int4(float4)",
            f32_bytes(&[1.0; 5]),
            &["20 bytes", "float4", "16 bytes"][..],
        ),
        (
            "convert_int4(float4)",
            f32_bytes(&[1.0; 5])[..18].to_vec(),
            &["18 bytes", "float4"][..],
        ),
        (
            "convert_int2(double2)",
            vec![0u8; 31],
            &["31 bytes", "double2"][..],
        ),
        (
            "convert_char16_sat(int16)",
            vec![0u8; 64 * 3 - 1],
            &["191 bytes", "int16", "64 bytes"][..],
        ),
    ] {
        let input = Temp::new("in.bin");
        std::fs::write(&input.0, &bytes).unwrap();
        for backend in [&[][..], &["--reference"][..]] {
            let mut args = vec!["run", name, "--input", input.s(), "--output", out.s()];
            args.extend_from_slice(backend);
            usage_error(&args, b"", needles);
            assert!(!out.0.exists(), "output created for a refused input");
            // The same bytes on standard input.
            let mut args = vec!["run", name, "--output", out.s()];
            args.extend_from_slice(backend);
            usage_error(&args, &bytes, needles);
            assert!(!out.0.exists());
        }
    }
    // Aligned float3 data read as packed (16 bytes is not a whole number of 12-byte vectors).
    let input = Temp::new("aligned.bin");
    std::fs::write(&input.0, f32_bytes(&[1.0, 2.0, 3.0, 0.0])).unwrap();
    usage_error(
        &["run", "convert_int3(float3)", "--input", input.s()],
        b"",
        &["16 bytes", "aligned layout"],
    );
}

#[test]
fn cli_empty_input_gives_an_empty_output() {
    let input = Temp::new("empty.bin");
    std::fs::write(&input.0, b"").unwrap();
    let out = Temp::new("empty-out.bin");
    let o = clconv(
        &[
            "run",
            "convert_int4(float4)",
            "--input",
            input.s(),
            "--output",
            out.s(),
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&out.0).unwrap(), b"");
}

#[test]
fn cli_missing_and_unreadable_inputs() {
    let dir = Temp::new("dir");
    std::fs::create_dir(&dir.0).unwrap();
    usage_error(
        &["run", "convert_int(float)", "--input", dir.s()],
        b"",
        &["cannot read", dir.s()],
    );
    let missing = Temp::new("missing.bin");
    usage_error(
        &[
            "run",
            "as_int(float)",
            "--input",
            missing.s(),
            "--reference",
        ],
        b"",
        &["cannot read", missing.s()],
    );
}

#[cfg(target_os = "linux")]
#[test]
fn cli_unwritable_outputs() {
    let input = Temp::new("ok.bin");
    std::fs::write(&input.0, f32_bytes(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    // A full device (ENOSPC even for root), and a path through a regular file (ENOTDIR).
    let through_file = format!("{}/out.bin", input.s());
    for out in ["/dev/full", through_file.as_str()] {
        for backend in [&[][..], &["--reference"][..]] {
            let mut args = vec![
                "run",
                "convert_int4(float4)",
                "--input",
                input.s(),
                "--output",
                out,
            ];
            args.extend_from_slice(backend);
            usage_error(&args, b"", &["cannot write", out]);
        }
    }
}

/// Raw output to standard output on a full device must fail, not vanish: the bytes sit in
/// stdout's buffer (no newline in them) and the flush at exit ignores its error.
#[cfg(target_os = "linux")]
#[test]
fn cli_raw_standard_output_on_a_full_device() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(BIN)
        .args([
            "run",
            "convert_int4(float4)",
            "--values",
            "1,2,3,4",
            "--output",
            "-",
        ])
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot write standard output"), "{err}");
}

/// Linux caps one argument at 128 KiB, so ~100 KB here (the library takes megabytes above).
#[test]
fn cli_names_of_100_kilobytes() {
    let long = "convert_int4(".to_string() + &"x".repeat(100_000) + ")";
    usage_error(&["show", &long], b"", &["100014 bytes"]);
    usage_error(
        &["run", &long, "--reference", "--values", "1"],
        b"",
        &["100014 bytes"],
    );
    usage_error(
        &["check", "--exhaustive", &long],
        b"",
        &["no conversion", "at most 32 bits"],
    );
    let o = clconv(&["list", &long], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
}

#[test]
fn cli_exhaustive_refuses_what_it_cannot_do() {
    usage_error(
        &["check", "--exhaustive", "convert_float(double)"],
        b"",
        &["2^64", "--inputs"],
    );
    usage_error(
        &["check", "--exhaustive", "as_int(float)"],
        b"",
        &["no conversion"],
    );
    usage_error(
        &[
            "check",
            "--exhaustive",
            "convert_int(float)",
            "--inputs",
            "lots",
        ],
        b"",
        &["--inputs", "lots"],
    );
    usage_error(
        &["check", "convert_int(float)", "--state", "x"],
        b"",
        &["--exhaustive"],
    );
    let dir = Temp::new("state-dir");
    std::fs::create_dir(&dir.0).unwrap();
    usage_error(
        &[
            "check",
            "--exhaustive",
            "convert_int(float)",
            "--state",
            dir.s(),
        ],
        b"",
        &["state file", dir.s()],
    );
}

/// A run with a state file, then the same again: the second skips what the first passed.
#[test]
fn cli_exhaustive_restarts_from_its_state_file() {
    let state = Temp::new("state.tsv");
    let args = [
        "check",
        "--exhaustive",
        "convert_ushort3_sat_rtp(float3)",
        "--inputs",
        "70000",
        "--state",
        state.s(),
    ];
    let first = clconv(&args, b"");
    let out = String::from_utf8_lossy(&first.stdout);
    assert_eq!(first.status.code(), Some(0), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("PASS\t")).count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("\tpacked\t") && out.contains("\taligned\t"),
        "{out}"
    );
    assert!(out.contains("70000 inputs\t0 mismatches"), "{out}");
    let second = clconv(&args, b"");
    let out2 = String::from_utf8_lossy(&second.stdout);
    assert_eq!(second.status.code(), Some(0), "{out2}");
    assert!(
        out2.contains("0 runs passed, 0 failed (2 skipped as done)"),
        "{out2}"
    );
    // A different input count is a different run: not skipped.
    let mut more = args.to_vec();
    more[4] = "70001";
    let third = clconv(&more, b"");
    assert!(String::from_utf8_lossy(&third.stdout).contains("2 runs passed"));
}

/// Every input of an 8-bit and a 16-bit source, which the command enumerates in full.
#[test]
fn cli_exhaustive_small_sources_in_full() {
    let o = clconv(&["check", "--exhaustive", "convert_half_rtz(short)"], b"");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("65536 inputs\t0 mismatches"), "{out}");
}

/// An argument of 100 KB in an error message should be cut, as the name parser cuts names
/// (to 80 characters): a 100 KB line on stderr is not a clear message.
#[test]
fn cli_long_arguments_are_not_echoed_whole() {
    let long = "x".repeat(100_000);
    for args in [
        vec!["check", long.as_str()],
        vec!["run", "convert_int(float)", "--values", long.as_str()],
        vec![
            "run",
            "convert_int(float)",
            "--values",
            "1",
            "--layout",
            long.as_str(),
        ],
    ] {
        let err = usage_error(&args, b"", &[]);
        assert!(err.len() < 1000, "{} bytes on stderr", err.len());
    }
}

/// The parse_name fuzzer's first finding: a line break in a name comes back raw in the error
/// (`unexpected `_hZl\n` after the parameter type`), so the message is not one line.
#[test]
fn name_errors_do_not_repeat_raw_line_breaks() {
    for name in [
        "_Z1rt_hZl\n",
        "_Z12convert_int4Dv4_f\r\nx",
        "convert_int4(float4)\n\rjunk",
    ] {
        for ext in [Extensions::default(), Extensions::with_fp16()] {
            if let Err(e) = Request::parse(name, ext) {
                let msg = e.to_string();
                assert!(!msg.contains(['\n', '\r']), "{name:?}: {msg:?}");
            }
        }
    }
}
