//! The library's JIT API (`clconv::jit`): typed and byte runs, the errors, layouts, the cache,
//! threads and lifetimes.
//!
//! Expected values are from SPEC.md or computed by hand (the comments show the arithmetic);
//! the thread and alignment tests compare with the reference interpreter, the oracle.
#![cfg(feature = "jit")]

use clconv::buffer::BufferError;
use clconv::jit::{Element, Half, Jit, JitError, Kernel, X64Flags};
use clconv::{reference, Extensions, Layout, Request, RequestError, Rounding};
use std::fmt::Debug;

fn jit() -> Jit {
    Jit::new().expect("a JIT for this machine")
}

fn jit_fp16() -> Jit {
    Jit::with_options(X64Flags::Host, Extensions::with_fp16(), Rounding::Rte)
        .expect("a JIT for this machine")
}

/// An element's bits, so that NaN payloads and -0.0 compare exactly.
trait Bits: Element + Default + Debug {
    fn bits(self) -> u64;
}

macro_rules! bits_int {
    ($($t:ty => $u:ty),*) => {$(
        impl Bits for $t {
            fn bits(self) -> u64 {
                self as $u as u64
            }
        }
    )*};
}
bits_int!(i8 => u8, u8 => u8, i16 => u16, u16 => u16, i32 => u32, u32 => u32, i64 => u64, u64 => u64);

impl Bits for f32 {
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}
impl Bits for Half {
    fn bits(self) -> u64 {
        self.0 as u64
    }
}

/// Runs `name` on `src` with typed slices and compares with `want` bit for bit.
#[track_caller]
fn expect<S: Bits, D: Bits>(jit: &Jit, name: &str, src: &[S], want: &[D]) {
    let kernel = jit.compile(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut got = vec![D::default(); want.len()];
    kernel
        .run(src, &mut got)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let got_bits: Vec<u64> = got.iter().map(|&d| d.bits()).collect();
    let want_bits: Vec<u64> = want.iter().map(|&d| d.bits()).collect();
    assert_eq!(
        got_bits, want_bits,
        "{name} on {src:?}: got {got:?}, want {want:?}"
    );
}

fn le_bytes<T: Bits>(values: &[T]) -> Vec<u8> {
    let size = std::mem::size_of::<T>();
    values
        .iter()
        .flat_map(|&v| v.bits().to_le_bytes()[..size].to_vec())
        .collect()
}

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

impl Rng {
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn integer_to_integer() {
    let jit = jit();
    // _sat clamps to the destination range.
    expect(
        &jit,
        "convert_short2_sat(int2)",
        &[70000i32, -70000, 5, -5],
        &[32767i16, -32768, 5, -5],
    );
    expect(
        &jit,
        "convert_char4_sat(short4)",
        &[200i16, -200, 127, -128],
        &[127i8, -128, 127, -128],
    );
    expect(
        &jit,
        "convert_uchar4_sat(char4)",
        &[-1i8, 127, -128, 0],
        &[0u8, 127, 0, 0],
    );
    expect(
        &jit,
        "convert_ushort2_sat(short2)",
        &[-1i16, 32767],
        &[0u16, 32767],
    );
    expect(
        &jit,
        "convert_uint2_sat(long2)",
        &[-1i64, 1 << 33],
        &[0u32, u32::MAX],
    );
    expect(
        &jit,
        "convert_long2_sat(ulong2)",
        &[u64::MAX, 5],
        &[i64::MAX, 5],
    );
    // Without _sat: the low bits (two's complement wrap).
    expect(
        &jit,
        "convert_char4(uchar4)",
        &[255u8, 128, 127, 0],
        &[-1i8, -128, 127, 0],
    );
    // 40000 - 65536 = -25536
    expect(
        &jit,
        "convert_short2(ushort2)",
        &[65535u16, 40000],
        &[-1i16, -25536],
    );
    expect(
        &jit,
        "convert_int2(uint2)",
        &[0x8000_0000u32, 7],
        &[i32::MIN, 7],
    );
    // (1 << 33) + 5 keeps its low 32 bits: 5.
    expect(
        &jit,
        "convert_uint2(long2)",
        &[-1i64, (1 << 33) + 5],
        &[u32::MAX, 5],
    );
    expect(&jit, "convert_ulong2(long2)", &[-1i64, 2], &[u64::MAX, 2]);
    // Rounding modifiers have no effect between integers.
    expect(
        &jit,
        "convert_uchar_rtp(ushort)",
        &[0x1234u16, 0xffff],
        &[0x34u8, 0xff],
    );
}

#[test]
fn float_to_integer() {
    let jit = jit();
    // SPEC.md seed example.
    expect(
        &jit,
        "convert_uchar4_sat_rte(float4)",
        &[-5.0f32, 254.5, 254.6, 1.2e9],
        &[0u8, 254, 255, 255],
    );
    // Ties to even; 0x3effffff is 0.5 - 1ulp and gives 0; saturation; NaN -> 0.
    expect(
        &jit,
        "convert_int4_sat_rte(float4)",
        &[
            0.5f32,
            1.5,
            -2.5,
            f32::NAN,
            3e9,
            -3e9,
            f32::from_bits(0x3eff_ffff),
            2.5,
        ],
        &[0i32, 2, -2, 0, i32::MAX, i32::MIN, 0, 2],
    );
    // No _sat: clconv defines NaN and out-of-range like _sat; rtz by default.
    expect(
        &jit,
        "convert_int4(float4)",
        &[f32::NAN, 3e9, -3e9, -7.9],
        &[0i32, i32::MAX, i32::MIN, -7],
    );
    // -128.5 ties to even (-128); 127.5 rounds to 128 then clamps; -0.5 -> -0 -> 0.
    expect(
        &jit,
        "convert_char_sat_rte(double)",
        &[-128.5f64, 127.5, -129.0, 2.5, -0.5],
        &[-128i8, 127, -128, 2, 0],
    );
    // rtn: -0.5 -> -1 -> clamps to 0.
    expect(
        &jit,
        "convert_ushort_sat_rtn(float)",
        &[1.9f32, -0.5, 65535.9, 65536.0, f32::NAN],
        &[1u16, 0, 65535, 65535, 0],
    );
    // rtp: 1.1 -> 2, -1.9 -> -1; 2^63 (the double nearest i64::MAX) is out of range.
    expect(
        &jit,
        "convert_long_sat_rtp(double)",
        &[
            1.1f64,
            -1.9,
            1e19,
            -1e19,
            f64::NAN,
            9_223_372_036_854_775_808.0,
        ],
        &[2i64, -1, i64::MAX, i64::MIN, 0, i64::MAX],
    );
    // 2^64 as a float is one past u64::MAX.
    expect(
        &jit,
        "convert_ulong_sat(float)",
        &[-1.0f32, 18_446_744_073_709_551_616.0, 1.5, 16_777_216.0],
        &[0u64, u64::MAX, 1, 16_777_216],
    );
    // Half sources (binary16 bits): inf, -inf, NaN, 0x4248 = 2 * (1 + 584/1024) = 3.140625.
    expect(
        &jit_fp16(),
        "convert_short_sat(half)",
        &[
            Half(0x7c00),
            Half(0xfc00),
            Half(0x7e00),
            Half(0x4248),
            Half(0xc248),
        ],
        &[32767i16, -32768, 0, 3, -3],
    );
}

#[test]
fn integer_to_float() {
    let jit = jit();
    // 2^24 + 1 is not a float: rtp rounds up, rtz/rte down; rtp of a negative goes toward zero.
    expect(
        &jit,
        "convert_float2_rtp(int2)",
        &[16_777_217i32, -16_777_217],
        &[16_777_218.0f32, -16_777_216.0],
    );
    expect(
        &jit,
        "convert_float2_rtn(int2)",
        &[16_777_217i32, -16_777_217],
        &[16_777_216.0f32, -16_777_218.0],
    );
    expect(
        &jit,
        "convert_float(int)",
        &[16_777_217i32],
        &[16_777_216.0f32],
    );
    // u64::MAX rounds to 2^64 under rte; rtz gives the double below, 2^64 - 2^11.
    // 2^53 + 1 is a tie between 2^53 (even) and 2^53 + 2.
    expect(
        &jit,
        "convert_double(ulong)",
        &[u64::MAX, (1 << 53) + 1, 0],
        &[
            18_446_744_073_709_551_616.0f64,
            9_007_199_254_740_992.0,
            0.0,
        ],
    );
    expect(
        &jit,
        "convert_double_rtz(ulong)",
        &[u64::MAX],
        &[18_446_744_073_709_549_568.0f64],
    );
    expect(
        &jit,
        "convert_double_rtp(ulong)",
        &[(1u64 << 53) + 1],
        &[9_007_199_254_740_994.0f64],
    );
    // 2^64 as a float: exponent 64 + 127 = 191 = 0xbf -> 0x5f80_0000.
    expect(
        &jit,
        "convert_float(ulong)",
        &[u64::MAX],
        &[f32::from_bits(0x5f80_0000)],
    );
    expect(&jit, "convert_float(uchar)", &[255u8, 0], &[255.0f32, 0.0]);
    expect(
        &jit,
        "convert_double(char)",
        &[-128i8, 127],
        &[-128.0f64, 127.0],
    );
    // To half: 2048 = 2^11 is 0x6800 and the ulp there is 2, so 2049 ties to 2048 (even) and
    // 2051 ties to 2052 (0x6802); 70000 is beyond 65504 and rte overflows to inf.
    expect(
        &jit_fp16(),
        "convert_half_rte(int)",
        &[2049i32, 2051, 70000, -1],
        &[Half(0x6800), Half(0x6802), Half(0x7c00), Half(0xbc00)],
    );
}

#[test]
fn float_to_float() {
    let jit = jit_fp16();
    // 65520 is the midpoint between 65504 (max half, 0x7bff) and 65536: rtz keeps the max,
    // rte ties to even (65536, overflow -> inf).
    expect(
        &jit,
        "convert_half_rtz(float)",
        &[65520.0f32],
        &[Half(0x7bff)],
    );
    expect(
        &jit,
        "convert_half_rte(float)",
        &[65520.0f32],
        &[Half(0x7c00)],
    );
    expect(
        &jit,
        "convert_half_rtn(float)",
        &[65520.0f32],
        &[Half(0x7bff)],
    );
    // 1e-8 is below the smallest subnormal half 2^-24 (~5.96e-8): rtz -> +0, rtp -> 2^-24,
    // and -1e-8 under rtp -> -0. NaN 0x7fc00000 keeps its top payload bit: 0x7e00.
    expect(
        &jit,
        "convert_half4_rtp(float4)",
        &[1e-8f32, -1e-8, f32::NAN, 1.0],
        &[Half(0x0001), Half(0x8000), Half(0x7e00), Half(0x3c00)],
    );
    expect(
        &jit,
        "convert_half2_rtz(float2)",
        &[1e-8f32, -1e-8],
        &[Half(0x0000), Half(0x8000)],
    );
    // Widening is exact: 0x0001 is 2^-24, 0x7bff is 65504; -0 stays -0.
    expect(
        &jit,
        "convert_float8(half8)",
        &[
            Half(0x3c00),
            Half(0x7bff),
            Half(0x0001),
            Half(0x8000),
            Half(0xfc00),
            Half(0xc000),
            Half(0x3555),
            Half(0x0400),
        ],
        &[
            1.0f32,
            65504.0,
            // 0x0001: 2^-24, exponent 127 - 24 = 103 = 0x67
            f32::from_bits(0x3380_0000),
            -0.0,
            f32::NEG_INFINITY,
            -2.0,
            // 0x3555: 2^-2 * (1 + 0x155/1024) = (1024 + 341) / 4096
            1365.0 / 4096.0,
            // 0x0400: the smallest normal, 2^-14
            1.0 / 16384.0,
        ],
    );
    // 0.1f is 13421773 * 2^-27 exactly (the division is exact in double).
    expect(
        &jit,
        "convert_double(float)",
        &[0.1f32],
        &[13_421_773.0f64 / 134_217_728.0],
    );
    // Narrowing out of range: rtz -> FLT_MAX, rte -> inf; tiny negatives keep their sign, and
    // rtn takes the next float down, -(2^-149).
    expect(
        &jit,
        "convert_float2_rtz(double2)",
        &[1e300f64, -1e-300],
        &[f32::MAX, -0.0],
    );
    expect(
        &jit,
        "convert_float2(double2)",
        &[1e300f64, -1e300],
        &[f32::INFINITY, f32::NEG_INFINITY],
    );
    expect(
        &jit,
        "convert_float2_rtn(double2)",
        &[-1e-300f64, 1e-300],
        &[f32::from_bits(0x8000_0001), 0.0],
    );
    // convert_T(T) is the identity on the bits: a signalling NaN stays as it is.
    expect(
        &jit,
        "convert_float_rtz(float)",
        &[f32::from_bits(0x7f80_0001), -0.0],
        &[f32::from_bits(0x7f80_0001), -0.0],
    );
}

#[test]
fn reinterpretations() {
    let jit = jit_fp16();
    expect(
        &jit,
        "as_int(float)",
        &[1.0f32, -0.0],
        &[0x3f80_0000i32, i32::MIN],
    );
    expect(
        &jit,
        "as_float(uint)",
        &[0x7fa0_0001u32],
        &[f32::from_bits(0x7fa0_0001)],
    );
    expect(&jit, "as_ushort(half)", &[Half(0x7e01)], &[0x7e01u16]);
    // Little-endian memory order: 0x3c00_4000 is stored 00 40 00 3c.
    expect(
        &jit,
        "as_half2(int)",
        &[0x3c00_4000i32],
        &[Half(0x4000), Half(0x3c00)],
    );
    expect(
        &jit,
        "as_char16(float4)",
        &[
            1.0f32,
            -0.0,
            f32::from_bits(0x0102_0304),
            f32::from_bits(0xfffe_fdfc),
        ],
        &[0i8, 0, -128, 63, 0, 0, 0, -128, 4, 3, 2, 1, -4, -3, -2, -1],
    );
    expect(
        &jit,
        "as_ulong(double)",
        &[-2.0f64],
        &[0xc000_0000_0000_0000u64],
    );
}

#[test]
fn destination_only_name_takes_the_source_from_the_buffer() {
    let jit = jit();
    let k = jit.compile("convert_int4_sat_rte").unwrap();
    assert_eq!(k.request(), None);
    let mut out = [0i32; 4];
    k.run(&[0.5f32, 1.5, -2.5, f32::NAN], &mut out).unwrap();
    assert_eq!(out, [0, 2, -2, 0]);
    k.run(&[2.5f64, 3.5, -1e10, 1e10], &mut out).unwrap();
    assert_eq!(out, [2, 4, i32::MIN, i32::MAX]);
    k.run(&[-(1i64 << 40), 1 << 40, -7, 7], &mut out).unwrap();
    assert_eq!(out, [i32::MIN, i32::MAX, -7, 7]);
    // as_ picks the source width of the same byte size: as_float4 from char is char16.
    let a = jit.compile("as_float4").unwrap();
    let mut f = [0f32; 4];
    let bytes: Vec<i8> = [0x3f80_0000u32, 0x4000_0000, 0, 0xbf80_0000]
        .iter()
        .flat_map(|b| b.to_le_bytes())
        .map(|b| b as i8)
        .collect();
    a.run(&bytes, &mut f).unwrap();
    assert_eq!(f, [1.0, 2.0, 0.0, -1.0]);

    // The byte form cannot know the source type.
    let mut dst = [0u8; 16];
    match k.run_bytes(Layout::Packed, &[0u8; 16], &mut dst) {
        Err(JitError::NeedsSourceType { builtin }) => {
            assert_eq!(builtin, "convert_int4_sat_rte")
        }
        other => panic!("{other:?}"),
    }
    // half as the source needs cl_khr_fp16 on this Jit.
    match k.run(&[Half(0); 4], &mut out) {
        Err(JitError::Request(RequestError::HalfWithoutFp16 { .. })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_element_types_are_refused() {
    let jit = jit();
    let k = jit.compile("convert_uchar4_sat_rte(float4)").unwrap();
    let mut canary = [0x5au8; 4];
    match k.run(&[1.0f64; 4], &mut canary) {
        Err(JitError::Buffer(BufferError::ElementType {
            side: "source",
            got: "double",
            expected: "float",
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(canary, [0x5a; 4]);
    let mut signed = [0x5ai8; 4];
    match k.run(&[1.0f32; 4], &mut signed) {
        Err(JitError::Buffer(BufferError::ElementType {
            side: "destination",
            got: "char",
            expected: "uchar",
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(signed, [0x5a; 4]);
    // Half and u16 are different element types.
    let h = jit_fp16().compile("convert_float(half)").unwrap();
    let mut f = [7.0f32];
    assert!(matches!(
        h.run(&[0x3c00u16], &mut f),
        Err(JitError::Buffer(BufferError::ElementType {
            side: "source",
            ..
        }))
    ));
    assert_eq!(f, [7.0]);
    // A destination-only kernel still checks its destination.
    let d = jit.compile("convert_int4_sat_rte").unwrap();
    let mut u = [9u32; 4];
    match d.run(&[1.0f32; 4], &mut u) {
        Err(JitError::Buffer(BufferError::ElementType {
            side: "destination",
            got: "uint",
            expected: "int",
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(u, [9; 4]);
}

#[test]
fn wrong_lengths_are_refused_and_leave_the_destination_alone() {
    let jit = jit();
    let k = jit.compile("convert_uchar4_sat_rte(float4)").unwrap();
    // 5 floats are 20 bytes, not a whole number of 16-byte float4 vectors.
    let mut dst = [0x5au8; 4];
    match k.run(&[1.0f32; 5], &mut dst) {
        Err(JitError::Buffer(BufferError::RaggedSource {
            bytes: 20,
            per_vector: 16,
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(dst, [0x5a; 4]);
    // 2 vectors need 8 destination bytes: 4 and 12 are refused.
    for len in [4usize, 12, 0] {
        let mut dst = vec![0x5au8; len];
        match k.run(&[1.0f32; 8], &mut dst) {
            Err(JitError::Buffer(BufferError::DestinationSize {
                bytes,
                vectors: 2,
                expected: 8,
                ..
            })) if bytes == len => {}
            other => panic!("{len}: {other:?}"),
        }
        assert!(dst.iter().all(|&b| b == 0x5a));
    }
    // The same through the byte form, and through a destination-only kernel.
    let mut dst = [0x5au8; 8];
    assert!(matches!(
        k.run_bytes(Layout::Packed, &[0u8; 31], &mut dst),
        Err(JitError::Buffer(BufferError::RaggedSource {
            bytes: 31,
            ..
        }))
    ));
    assert!(matches!(
        k.run_bytes(Layout::Packed, &[0u8; 16], &mut dst),
        Err(JitError::Buffer(BufferError::DestinationSize {
            bytes: 8,
            ..
        }))
    ));
    assert_eq!(dst, [0x5a; 8]);
    let d = jit.compile("convert_int4_sat_rte").unwrap();
    let mut ints = [77i32; 4];
    assert!(matches!(
        d.run(&[1.0f64; 6], &mut ints),
        Err(JitError::Buffer(BufferError::RaggedSource { .. }))
    ));
    assert!(matches!(
        d.run(&[1.0f64; 8], &mut ints),
        Err(JitError::Buffer(BufferError::DestinationSize { .. }))
    ));
    assert_eq!(ints, [77; 4]);
}

#[test]
fn empty_buffers_are_fine() {
    let jit = jit();
    let k = jit.compile("convert_uchar4_sat_rte(float4)").unwrap();
    k.run::<f32, u8>(&[], &mut []).unwrap();
    k.run_bytes(Layout::Packed, &[], &mut []).unwrap();
    k.run_with_layout::<f32, u8>(Layout::Aligned, &[], &mut [])
        .unwrap();
    jit.compile("convert_int3(double3)")
        .unwrap()
        .run_with_layout::<f64, i32>(Layout::Aligned, &[], &mut [])
        .unwrap();
    jit.compile("convert_int4_sat_rte")
        .unwrap()
        .run::<f64, i32>(&[], &mut [])
        .unwrap();
    // ... but an empty source with a non-empty destination does not fit.
    let mut dst = [1u8; 4];
    assert!(matches!(
        k.run::<f32, u8>(&[], &mut dst),
        Err(JitError::Buffer(BufferError::DestinationSize {
            vectors: 0,
            ..
        }))
    ));
    assert_eq!(dst, [1; 4]);
}

#[test]
fn misaligned_byte_slices() {
    let jit = jit();
    let mut rng = Rng(0x1234_5678);
    for name in [
        "convert_int4_sat_rte(float4)",
        "convert_ulong2_sat_rtn(double2)",
        "convert_short8(float8)",
        "as_int2(double)",
    ] {
        let request = Request::parse(name, Extensions::default()).unwrap();
        let k = jit.compile(name).unwrap();
        let vectors = 24;
        let src_len = vectors * clconv::buffer::bytes_per_vector(request.src(), Layout::Packed);
        let dst_len = vectors * clconv::buffer::bytes_per_vector(request.dst(), Layout::Packed);
        let src = rng.bytes(src_len);
        let mut want = vec![0u8; dst_len];
        reference::evaluate(&request, Layout::Packed, &src, &mut want).unwrap();
        // From a Vec<u8> the slices are 8- or 16-byte aligned: the aligned run.
        let mut aligned = vec![0u8; dst_len];
        k.run_bytes(Layout::Packed, &src, &mut aligned).unwrap();
        assert!(
            aligned == want,
            "{name}: aligned run differs from the reference"
        );
        for offset in 1..16 {
            let dst_offset = 16 - offset;
            let mut big_src = vec![0u8; src_len + 16];
            big_src[offset..offset + src_len].copy_from_slice(&src);
            let mut big_dst = vec![0xa5u8; dst_len + 32];
            k.run_bytes(
                Layout::Packed,
                &big_src[offset..offset + src_len],
                &mut big_dst[dst_offset..dst_offset + dst_len],
            )
            .unwrap();
            assert!(
                big_dst[dst_offset..dst_offset + dst_len] == want[..],
                "{name}: offsets {offset}/{dst_offset} differ"
            );
            assert!(big_dst[..dst_offset].iter().all(|&b| b == 0xa5));
            assert!(big_dst[dst_offset + dst_len..].iter().all(|&b| b == 0xa5));
        }
    }
}

#[test]
fn three_component_layouts() {
    let jit = jit();
    let k = jit.compile("convert_int3(float3)").unwrap();
    // Packed: 3 elements per vector. rtz; NaN and out of range as _sat.
    let mut packed = [-9i32; 6];
    k.run(&[1.5f32, -2.5, 3e9, 4.0, 5.9, f32::NAN], &mut packed)
        .unwrap();
    assert_eq!(packed, [1, -2, i32::MAX, 4, 5, 0]);
    // Aligned: 4-element stride; the source padding is ignored, the destination's written 0.
    let mut aligned = [-9i32; 8];
    k.run_with_layout(
        Layout::Aligned,
        &[1.5f32, -2.5, 3e9, 99.0, 4.0, 5.9, f32::NAN, -1.0],
        &mut aligned,
    )
    .unwrap();
    assert_eq!(aligned, [1, -2, i32::MAX, 0, 4, 5, 0, 0]);
    // A packed-sized buffer is not an aligned one, and the error says which layout fits.
    let mut dst = [-9i32; 8];
    let err = k
        .run_with_layout(Layout::Aligned, &[1.0f32; 6], &mut dst)
        .unwrap_err();
    assert!(
        matches!(
            err,
            JitError::Buffer(BufferError::RaggedSource {
                layout: "aligned",
                ..
            })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("packed"), "{err}");
    assert_eq!(dst, [-9; 8]);

    // as_float3(int4): the first three elements' bits; aligned padding written as zero.
    let r = jit.compile("as_float3(int4)").unwrap();
    let src = [0x3f80_0000i32, 0x4000_0000, 0x7fc0_0001, 0x1234_5678];
    let mut f3 = [f32::from_bits(0xdead_beef); 3];
    r.run(&src, &mut f3).unwrap();
    assert_eq!(
        f3.map(f32::to_bits),
        [0x3f80_0000, 0x4000_0000, 0x7fc0_0001]
    );
    let mut f4 = [f32::from_bits(0xdead_beef); 4];
    r.run_with_layout(Layout::Aligned, &src, &mut f4).unwrap();
    assert_eq!(
        f4.map(f32::to_bits),
        [0x3f80_0000, 0x4000_0000, 0x7fc0_0001, 0]
    );
    // as_int4(float3): the fourth element is the operand's padding; a packed float3 stores
    // none, so it is zero.
    let r = jit.compile("as_int4(float3)").unwrap();
    let mut i4 = [-1i32; 4];
    r.run(&[1.0f32, -0.0, 2.0], &mut i4).unwrap();
    assert_eq!(i4, [0x3f80_0000, i32::MIN, 0x4000_0000, 0]);
    let mut i4 = [-1i32; 4];
    r.run_with_layout(Layout::Aligned, &[1.0f32, -0.0, 2.0, 0.0], &mut i4)
        .unwrap();
    assert_eq!(i4, [0x3f80_0000, i32::MIN, 0x4000_0000, 0]);
}

#[test]
fn the_cache_compiles_each_request_once() {
    let jit = jit();
    assert_eq!(jit.cached_kernels(), 0);
    let a = jit.compile("convert_int4_sat_rte(float4)").unwrap();
    assert_eq!(jit.cached_kernels(), 1);
    jit.compile("convert_int4_sat_rte(float4)").unwrap();
    jit.compile("_Z20convert_int4_sat_rteDv4_f").unwrap();
    assert_eq!(jit.cached_kernels(), 1, "same request, other spelling");
    // Only 3-component vectors have a second layout.
    a.run_with_layout(Layout::Aligned, &[1.0f32; 4], &mut [0i32; 4])
        .unwrap();
    assert_eq!(jit.cached_kernels(), 1);
    jit.compile("convert_int4_sat(float4)").unwrap();
    assert_eq!(jit.cached_kernels(), 2);
    let v3 = jit.compile("convert_int3(float3)").unwrap();
    assert_eq!(jit.cached_kernels(), 3);
    for _ in 0..2 {
        v3.run_with_layout(Layout::Aligned, &[1.0f32; 4], &mut [0i32; 4])
            .unwrap();
        assert_eq!(jit.cached_kernels(), 4);
    }
    // A destination-only kernel compiles on first run, and shares the cache.
    let d = jit.compile("convert_int4_sat_rte").unwrap();
    assert_eq!(jit.cached_kernels(), 4);
    d.run(&[1.0f32; 4], &mut [0i32; 4]).unwrap();
    assert_eq!(
        jit.cached_kernels(),
        4,
        "convert_int4_sat_rte(float4) is cached"
    );
    d.run(&[1.0f64; 4], &mut [0i32; 4]).unwrap();
    d.run(&[1.0f64; 8], &mut [0i32; 8]).unwrap();
    assert_eq!(jit.cached_kernels(), 5);
    // A clone shares the cache.
    let clone = jit.clone();
    clone.compile("convert_int4_sat(float4)").unwrap();
    assert_eq!(clone.cached_kernels(), 5);
}

#[test]
fn many_threads_share_one_jit() {
    const NAMES: [&str; 10] = [
        "convert_uchar4_sat_rte(float4)",
        "convert_int3_sat(double3)",
        "convert_float8_rtp(long8)",
        "convert_half4_rtz(float4)",
        "convert_short16_sat_rtn(half16)",
        "as_char16(double2)",
        "as_float3(int4)",
        "convert_ulong2_sat_rtp(double2)",
        "convert_double_rtn(ulong)",
        "convert_char2(int2)",
    ];
    let ext = Extensions::with_fp16();
    let jit = Jit::with_options(X64Flags::Host, ext, Rounding::Rte).unwrap();
    let shared: Kernel = jit.compile("convert_uchar4_sat_rte(float4)").unwrap();
    let shared_request = shared.request().unwrap();
    std::thread::scope(|s| {
        for t in 0..4usize {
            let (jit, shared) = (&jit, &shared);
            s.spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (t as u64 + 1));
                for i in 0..50usize {
                    // Even iterations: every thread on the same request; odd: each its own.
                    let name = if i % 2 == 0 {
                        NAMES[(i / 2) % NAMES.len()]
                    } else {
                        NAMES[(i + 3 * t) % NAMES.len()]
                    };
                    let layout = if i % 4 < 2 {
                        Layout::Packed
                    } else {
                        Layout::Aligned
                    };
                    let k = jit.compile(name).unwrap();
                    let request = k.request().unwrap();
                    let vectors = 1 + (rng.next() % 40) as usize;
                    let per_src = clconv::buffer::bytes_per_vector(request.src(), layout);
                    let per_dst = clconv::buffer::bytes_per_vector(request.dst(), layout);
                    let src = rng.bytes(vectors * per_src);
                    let mut got = vec![0xa5u8; vectors * per_dst];
                    let mut want = vec![0u8; vectors * per_dst];
                    k.run_bytes(layout, &src, &mut got).unwrap();
                    reference::evaluate(&request, layout, &src, &mut want).unwrap();
                    assert!(got == want, "thread {t} iteration {i}: {name} {layout:?}");

                    // The kernel shared by reference, typed.
                    let floats: Vec<f32> = (0..8)
                        .map(|_| (rng.next() % 1200) as f32 * 0.25 - 20.0)
                        .collect();
                    let mut bytes = [0u8; 8];
                    shared.run(&floats, &mut bytes).unwrap();
                    let src = le_bytes(&floats);
                    let mut want = [0u8; 8];
                    reference::evaluate(&shared_request, Layout::Packed, &src, &mut want).unwrap();
                    assert_eq!(bytes, want, "thread {t} iteration {i}: shared kernel");
                }
            });
        }
    });
    // Each request compiled once per layout it was used in, whatever the interleaving.
    assert!(jit.cached_kernels() <= NAMES.len() + 2);
    assert!(jit.cached_kernels() >= NAMES.len());
}

#[test]
fn kernels_outlive_the_jit() {
    let jit = jit();
    let a = jit.compile("convert_uchar4_sat_rte(float4)").unwrap();
    let b = jit.compile("convert_int4_sat_rte(float4)").unwrap();
    let deferred = jit.compile("convert_int2_sat_rte").unwrap();
    drop(jit);
    let mut bytes = [0u8; 4];
    a.run(&[-5.0f32, 254.5, 254.6, 1.2e9], &mut bytes).unwrap();
    assert_eq!(bytes, [0, 254, 255, 255]);
    drop(a);
    // The code is still there for the other kernels; a deferred one still compiles.
    let mut ints = [0i32; 4];
    b.run(&[0.5f32, 1.5, -2.5, f32::NAN], &mut ints).unwrap();
    assert_eq!(ints, [0, 2, -2, 0]);
    drop(b);
    let mut two = [0i32; 2];
    deferred.run(&[2.5f64, -3.5], &mut two).unwrap();
    assert_eq!(two, [2, -4]);
    drop(deferred);
}

#[test]
fn overlong_and_bad_names_are_typed_errors() {
    let jit = jit();
    let long = "x".repeat(1 << 20);
    match jit.compile(&long) {
        Err(JitError::Request(RequestError::TooLong { len, .. })) => assert_eq!(len, 1 << 20),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("accepted a 1 MB name"),
    }
    let long_call = format!("convert_int4(float4){}", " ".repeat(1 << 20));
    let err = jit.compile(&long_call).err().expect("refused");
    assert!(
        err.to_string().len() < 400,
        "the message is short: {} bytes",
        err.to_string().len()
    );
    for bad in [
        "",
        "convert_int5(float)",
        "convert_float_sat(int)",
        "as_int(double)",
        "convert_half(float)",
        "_Z12convert_int4Dv5_f",
    ] {
        match jit.compile(bad) {
            Err(JitError::Request(_)) => {}
            Err(other) => panic!("{bad:?}: {other:?}"),
            Ok(_) => panic!("{bad:?} accepted"),
        }
    }
    assert_eq!(jit.cached_kernels(), 0);
}

#[test]
fn jit_and_kernel_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Jit>();
    send_sync::<Kernel>();
    send_sync::<JitError>();
}

/// The x86-64 baseline has no round instruction (libm calls) and no pshufb (a Cranelift
/// helper): the JIT must resolve both.
#[cfg(target_arch = "x86_64")]
#[test]
fn baseline_sse2_kernels_run() {
    let jit = Jit::with_options(X64Flags::Sse2, Extensions::with_fp16(), Rounding::Rte).unwrap();
    // nearbyintf: ties to even.
    expect(
        &jit,
        "convert_int4_sat_rte(float4)",
        &[0.5f32, 1.5, -2.5, f32::NAN],
        &[0i32, 2, -2, 0],
    );
    // ceil, floor(f), trunc.
    expect(
        &jit,
        "convert_long2_rtp(double2)",
        &[1.1f64, -1.9],
        &[2i64, -1],
    );
    expect(
        &jit,
        "convert_long2_rtn(float2)",
        &[1.9f32, -1.1],
        &[1i64, -2],
    );
    expect(
        &jit,
        "convert_uint4(double4)",
        &[3.9f64, 4_294_967_295.5, -1.0, 1e10],
        &[3u32, u32::MAX, 0, u32::MAX],
    );
    // Narrowing wraps to the low byte: 200 - 256 = -56, -200 + 256 = 56, 257 -> 1.
    let src: [i16; 16] = [
        200, -200, 127, -128, 256, 257, -1, 0, 1, 2, 3, 4, 0x7f80, -32768, 32767, 5,
    ];
    let want: [i8; 16] = [-56, 56, 127, -128, 0, 1, -1, 0, 1, 2, 3, 4, -128, 0, -1, 5];
    expect(&jit, "convert_char16(short16)", &src, &want);
}

/// `compile_many`: every request gets a kernel that matches the reference, duplicates and
/// requests already cached included, and widths of a conversion share one compiled kernel.
#[test]
fn compile_many_compiles_a_batch_that_matches_the_reference() {
    let jit = jit_fp16();
    let ext = Extensions::with_fp16();
    // Every request whose name starts with `convert_short` or `as_int` (all widths), twice,
    // after one of them was compiled on its own.
    let mut batch: Vec<Request> = Request::all(ext)
        .into_iter()
        .filter(|r| {
            let n = r.to_string();
            n.starts_with("convert_short") || n.starts_with("as_int")
        })
        .collect();
    assert!(batch.len() > 300);
    jit.compile_request(&batch[5]).unwrap();
    batch.extend(batch.clone());
    let kernels = jit.compile_many(&batch).unwrap();
    assert_eq!(kernels.len(), batch.len());
    // One kernel per conversion without its width digits (packed layout), per `as_` request.
    let distinct: std::collections::HashSet<String> = batch
        .iter()
        .map(|r| match r {
            Request::Convert(_) => r
                .to_string()
                .chars()
                .filter(|c| !c.is_ascii_digit())
                .collect(),
            Request::Reinterpret(_) | Request::Chain(_) => r.to_string(),
        })
        .collect();
    assert_eq!(jit.cached_kernels(), distinct.len());
    // Each kernel converts like the reference, on bytes that exercise every source type.
    for (r, k) in batch.iter().zip(&kernels).take(batch.len() / 2) {
        assert_eq!(k.request(), Some(*r));
        let per = clconv::buffer::bytes_per_vector(r.src(), Layout::Packed);
        let out = clconv::buffer::bytes_per_vector(r.dst(), Layout::Packed);
        let n = 37;
        let src: Vec<u8> = (0..per * n).map(|i| (i * 151 + 7) as u8).collect();
        let mut got = vec![0u8; out * n];
        let mut want = vec![0u8; out * n];
        k.run_bytes(Layout::Packed, &src, &mut got).unwrap();
        reference::evaluate(r, Layout::Packed, &src, &mut want).unwrap();
        assert_eq!(got, want, "{r}");
    }
    // An empty batch is fine.
    assert!(jit.compile_many(&[]).unwrap().is_empty());
}
