//! Names: every spelling of every request round-trips, the documented mangled examples hold in
//! both directions, every kind of bad input gets its own error with a message naming the
//! problem, and no input at all makes the parsers panic.

use clconv::*;
use std::collections::BTreeSet;

const NO_FP16: Extensions = Extensions { fp16: false };
const FP16: Extensions = Extensions::with_fp16();

#[test]
fn matrix_counts() {
    // 14 sources x 6 widths x 5 roundings x (8 integer destinations with and without _sat,
    // half/float/double without, bfloat/fp8e4m3/fp8e5m2 with and without): 14 x 30 x 25.
    assert_eq!(Conversion::all(FP16).len(), 10500);
    // Without half: 13 x 30 x 24.
    assert_eq!(Conversion::all(NO_FP16).len(), 9360);
}

#[test]
fn round_trip_opencl_spelling_whole_matrix() {
    for r in Request::all(FP16) {
        assert_eq!(Request::parse(&r.to_string(), FP16), Ok(r), "{r}");
    }
}

/// `Request::every_named` is exactly what the parser accepts: every spelling of the grammar
/// (every destination and source of one width, every float -> integer modifier, `_ftz`, each
/// float result rule, every rounding and `_rta`: 423,360 names) is parsed, and the requests accepted are the
/// list's conversions, no more and no fewer. Each listed request's name parses back to it.
#[test]
fn every_named_request_is_listed_and_every_listed_one_parses() {
    for ext in [FP16, NO_FP16] {
        let mut accepted = BTreeSet::new();
        // Every type clconv names, bool and the narrow formats included.
        let types = || {
            let others = clconv::ScalarType::NARROW
                .into_iter()
                .chain([clconv::ScalarType::Bool]);
            VectorType::all()
                .chain(others.flat_map(|t| clconv::Width::ALL.map(move |w| VectorType::new(t, w))))
        };
        for dst in types() {
            for src in types().filter(|s| s.width == dst.width) {
                for sat in ["", "_sat", "_satsrc", "_satmsb", "_satsrcmsb", "_trap"] {
                    for ftz in ["", "_ftz"] {
                        for clamp in ["", "_clamp01", "_relu", "_nancanon", "_abs"] {
                            for mode in ["", "_rte", "_rtz", "_rtp", "_rtn", "_rta"] {
                                let name = format!("convert_{dst}{sat}{ftz}{clamp}{mode}({src})");
                                if let Ok(r) = Request::parse(&name, ext) {
                                    accepted.insert(r);
                                }
                            }
                        }
                    }
                }
            }
        }
        let listed = Request::every_named(ext);
        let conversions: BTreeSet<Request> = listed
            .iter()
            .copied()
            .filter(|r| matches!(r, Request::Convert(_)))
            .collect();
        let unlisted: Vec<_> = accepted.difference(&conversions).take(5).collect();
        let unparsed: Vec<_> = conversions.difference(&accepted).take(5).collect();
        assert!(unlisted.is_empty(), "accepted but not listed: {unlisted:?}");
        assert!(unparsed.is_empty(), "listed but not accepted: {unparsed:?}");
        assert_eq!(
            listed.len(),
            BTreeSet::from_iter(listed.iter()).len(),
            "listed twice"
        );
        for r in &listed {
            assert_eq!(Request::parse(&r.to_string(), ext), Ok(*r), "{r}");
        }
    }
}

#[test]
fn round_trip_mangled_whole_matrix() {
    let mut seen = BTreeSet::new();
    for r in Request::all(FP16) {
        let m = r.mangled();
        assert_eq!(Request::parse(&m, FP16), Ok(r), "{m} ({r})");
        // Two requests never share a mangled name.
        assert!(seen.insert(m.clone()), "{m} printed twice");
    }
}

#[test]
fn round_trip_builtins() {
    let builtins: BTreeSet<Builtin> = Request::all(FP16).iter().map(|r| r.builtin()).collect();
    // 14 destinations x 6 widths x (10 choices for the integers and for bfloat, fp8e4m3 and
    // fp8e5m2, which take _sat; 5 for half, float, double), plus 84 as_, plus `_satsrc` (WGSL's
    // clamp) on the 6 integer destinations it moves: short ... ulong, and `_satmsb` (PTX's NaN
    // rule) on all 8; and `convert_bool<n>`, 6; and the narrow formats, which take _sat, 6
    // widths x 10 (seven of them).
    assert_eq!(
        builtins.len(),
        8 * 6 * 10 + 3 * 6 * 5 + 3 * 6 * 10 + 84 + 6 * 6 * 5 + 8 * 6 * 5 + 6 + 7 * 6 * 10
    );
    for b in builtins {
        assert_eq!(Builtin::parse(&b.to_string(), FP16), Ok(b), "{b}");
    }
}

#[test]
fn round_trip_without_fp16() {
    for r in Request::all(NO_FP16) {
        assert_eq!(Request::parse(&r.to_string(), NO_FP16), Ok(r), "{r}");
        assert_eq!(Request::parse(&r.mangled(), NO_FP16), Ok(r), "{r}");
    }
}

/// Mangled names as clang/SPIR emit them, and the OpenCL spelling of the same request.
const MANGLED: &[(&str, &str)] = &[
    (
        "_Z20convert_int4_sat_rteDv4_f",
        "convert_int4_sat_rte(float4)",
    ),
    ("_Z16convert_uint_sath", "convert_uint_sat(uchar)"),
    (
        "_Z21convert_uint2_sat_rtnDv2_f",
        "convert_uint2_sat_rtn(float2)",
    ),
    ("_Z17convert_uint3_rtpDv3_f", "convert_uint3_rtp(float3)"),
    ("_Z12convert_charf", "convert_char(float)"),
    ("_Z17convert_half4_rteDv4_Dh", "convert_half4_rte(half4)"),
    (
        "_Z22convert_uchar4_sat_rteDv4_f",
        "convert_uchar4_sat_rte(float4)",
    ),
    ("_Z17convert_float_rtpl", "convert_float_rtp(long)"),
    ("_Z14convert_ulong3Dv3_d", "convert_ulong3(double3)"),
    (
        "_Z20convert_double16_rtzDv16_t",
        "convert_double16_rtz(ushort16)",
    ),
    // No compiler emits these (as_ is a macro over __builtin_astype); they are our extension.
    ("_Z9as_float4Dv4_i", "as_float4(int4)"),
    ("_Z7as_int3Dv4_f", "as_int3(float4)"),
    ("_Z9as_char16Dv2_d", "as_char16(double2)"),
    ("_Z7as_halfs", "as_half(short)"),
];

#[test]
fn mangled_examples_both_directions() {
    for &(mangled, opencl) in MANGLED {
        let from_mangled = Request::parse(mangled, FP16).unwrap();
        let from_opencl = Request::parse(opencl, FP16).unwrap();
        assert_eq!(from_mangled, from_opencl, "{mangled}");
        assert_eq!(from_mangled.to_string(), opencl);
        assert_eq!(from_opencl.mangled(), mangled);
    }
}

#[test]
fn whitespace_only_around_the_parentheses() {
    let int4_from_float4 = Request::parse("convert_int4(float4)", NO_FP16).unwrap();
    for ok in [
        "convert_int4 ( float4 )",
        "convert_int4(float4 )",
        "convert_int4\t(\nfloat4)",
        "convert_int4(float4)\n",
        "convert_int4  (float4)  ",
    ] {
        assert_eq!(Request::parse(ok, NO_FP16), Ok(int4_from_float4), "{ok:?}");
    }
    for bad in [
        " convert_int4(float4)",
        "convert_ int4(float4)",
        "convert_int 4(float4)",
        "convert_int4(float 4)",
        "convert_int4 float4",
    ] {
        let e = Request::parse(bad, NO_FP16).unwrap_err();
        assert!(
            matches!(
                e,
                RequestError::Syntax { .. } | RequestError::NotAConversion { .. }
            ),
            "{bad:?}: {e:?}"
        );
    }
    // Builtin names take no whitespace at all.
    assert!(Builtin::parse("convert_int4 ", NO_FP16).is_err());
}

#[test]
fn bare_name_is_missing_source() {
    for name in [
        "convert_int4_sat_rte",
        "as_float4",
        "convert_int4()",
        "convert_int ( )",
    ] {
        let e = Request::parse(name, NO_FP16).unwrap_err();
        assert!(
            matches!(e, RequestError::MissingSource { .. }),
            "{name}: {e:?}"
        );
        assert!(
            e.to_string()
                .contains(name.split('(').next().unwrap().trim()),
            "{e}"
        );
    }
    // A bad name is reported as such, not as a missing source.
    assert!(matches!(
        Request::parse("convert_int5", NO_FP16),
        Err(RequestError::BadWidth { .. })
    ));
}

#[test]
fn half_needs_fp16() {
    for name in [
        "convert_half4_rte(float4)",
        "convert_float(half)",
        "as_half2(int)",
        "as_int(half2)",
        "_Z17convert_half4_rteDv4_Dh",
        "_Z13convert_floatDh",
    ] {
        assert!(Request::parse(name, FP16).is_ok(), "{name}");
        let e = Request::parse(name, NO_FP16).unwrap_err();
        assert!(
            matches!(e, RequestError::HalfWithoutFp16 { .. }),
            "{name}: {e:?}"
        );
        assert!(e.to_string().contains("half"), "{e}");
        assert!(e.to_string().contains("cl_khr_fp16"), "{e}");
    }
    assert!(Builtin::parse("convert_half16", FP16).is_ok());
    assert!(matches!(
        Builtin::parse("convert_half16", NO_FP16),
        Err(RequestError::HalfWithoutFp16 { .. })
    ));
}

type Check = fn(&RequestError) -> bool;

/// Bad inputs, the error each must give, and a piece of text its message must contain.
const BAD: &[(&str, Check, &str)] = &[
    // Types and widths.
    (
        "convert_int5(float4)",
        |e| matches!(e, RequestError::BadWidth { .. }),
        "int5",
    ),
    (
        "convert_float7",
        |e| matches!(e, RequestError::BadWidth { .. }),
        "float7",
    ),
    (
        "convert_float1(int)",
        |e| matches!(e, RequestError::BadWidth { .. }),
        "write `float`",
    ),
    (
        "convert_int04(float4)",
        |e| matches!(e, RequestError::BadWidth { .. }),
        "`int4`",
    ),
    (
        "convert_int(float1)",
        |e| matches!(e, RequestError::BadWidth { .. }),
        "write `float`",
    ),
    (
        "convert_bool_sat(int)",
        |e| matches!(e, RequestError::BoolModifier { .. }),
        "exact",
    ),
    (
        "as_uchar(bool)",
        |e| matches!(e, RequestError::BoolBits { .. }),
        "no bits",
    ),
    (
        "convert_size_t(int)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "size_t",
    ),
    (
        "convert_ptrdiff_t(int)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "ptrdiff_t",
    ),
    (
        "convert_intptr_t(int)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "intptr_t",
    ),
    (
        "convert_uintptr_t",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "never convertible",
    ),
    (
        "convert_void",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "never convertible",
    ),
    (
        "convert_int_rte(bool)",
        |e| matches!(e, RequestError::BoolModifier { .. }),
        "without a rounding mode",
    ),
    (
        "convert_int(size_t)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "size_t",
    ),
    (
        "convert_uint8_t(int)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "`uchar`",
    ),
    (
        "convert_Float(int)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "`float`",
    ),
    (
        "convert_int4x(float4)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "int4x",
    ),
    (
        "convert_int(4)",
        |e| matches!(e, RequestError::UnknownType { .. }),
        "`4`",
    ),
    // Modifiers.
    (
        "convert_float_sat(int)",
        |e| matches!(e, RequestError::SatOnFloat { .. }),
        "_sat",
    ),
    (
        "convert_double2_rte_sat",
        |e| matches!(e, RequestError::SatOnFloat { .. }),
        "double2",
    ),
    (
        "convert_int_rte_sat",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "write _sat before the rounding mode: `convert_int_sat_rte`",
    ),
    (
        "convert_int_sat_sat",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "repeated",
    ),
    (
        "convert_int_rte_rte",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "repeated",
    ),
    (
        "convert_int_rte_rtz",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "_rtz",
    ),
    (
        "convert_int_rtx",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "_rtx",
    ),
    (
        "convert_int_RTE",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "`_rte`",
    ),
    (
        "convert_int__sat",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "empty modifier",
    ),
    (
        "convert_int_sat_",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "empty modifier",
    ),
    (
        "convert_int_4(float4)",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "convert_int4",
    ),
    (
        "as_int_sat(float)",
        |e| matches!(e, RequestError::BadModifier { .. }),
        "as_int",
    ),
    // Source and destination disagree.
    (
        "convert_int4(float2)",
        |e| matches!(e, RequestError::ElementCountMismatch { .. }),
        "float2",
    ),
    (
        "_Z12convert_int4f",
        |e| matches!(e, RequestError::ElementCountMismatch { .. }),
        "int4",
    ),
    (
        "as_int(double)",
        |e| matches!(e, RequestError::SizeMismatch { .. }),
        "as_int(double)",
    ),
    (
        "as_float3(float2)",
        |e| matches!(e, RequestError::SizeMismatch { .. }),
        "float3",
    ),
    (
        "_Z9as_float4Dv2_i",
        |e| matches!(e, RequestError::SizeMismatch { .. }),
        "int2",
    ),
    // Not a name at all.
    ("", |e| matches!(e, RequestError::Empty), "empty"),
    ("  \t", |e| matches!(e, RequestError::Empty), "empty"),
    (
        "hello",
        |e| matches!(e, RequestError::NotAConversion { .. }),
        "hello",
    ),
    (
        "convert",
        |e| matches!(e, RequestError::NotAConversion { .. }),
        "convert",
    ),
    (
        "convert_",
        |e| matches!(e, RequestError::Syntax { .. }),
        "after `convert_`",
    ),
    (
        "as_(int)",
        |e| matches!(e, RequestError::Syntax { .. }),
        "after `as_`",
    ),
    (
        "convert_int4(",
        |e| matches!(e, RequestError::Syntax { .. }),
        "unclosed `(`",
    ),
    (
        "convert_int4(float4",
        |e| matches!(e, RequestError::Syntax { .. }),
        "missing `)`",
    ),
    (
        "convert_int4(float4))",
        |e| matches!(e, RequestError::Syntax { .. }),
        "after the closing",
    ),
    (
        "convert_int4((float4))",
        |e| matches!(e, RequestError::Syntax { .. }),
        "found `(`",
    ),
    (
        "convert_int4(float4, int4)",
        |e| matches!(e, RequestError::BadCharacter { ch: ',', .. }),
        "','",
    ),
    (
        "(float4)",
        |e| matches!(e, RequestError::Syntax { .. }),
        "found `(`",
    ),
    (
        " convert_int4(float4)",
        |e| matches!(e, RequestError::Syntax { at: 0, .. }),
        "whitespace",
    ),
    (
        "convert_int4(floаt4)",
        |e| {
            matches!(
                e,
                RequestError::BadCharacter {
                    ch: 'а',
                    at: 16,
                    ..
                }
            )
        },
        "'а'",
    ),
    (
        "convert_int4\u{0}(float4)",
        |e| matches!(e, RequestError::BadCharacter { .. }),
        "byte 12",
    ),
    // Malformed mangled names.
    (
        "_Z",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "length",
    ),
    (
        "_Zconvert_charf",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "length",
    ),
    (
        "_Z21convert_int4_sat_rteDv4_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "write `_Z20convert_int4_sat_rteDv4_f`",
    ),
    (
        "_Z19convert_int4_sat_rteDv4_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "write `_Z20convert_int4_sat_rteDv4_f`",
    ),
    (
        "_Z99convert_int4_sat_rteDv4_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "write `_Z20convert_int4_sat_rteDv4_f`",
    ),
    // "convert_half4_rte" is 17 bytes; an 18 here is a miscount, and the message gives the fix.
    (
        "_Z18convert_half4_rteDv4_Dh",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "write `_Z17convert_half4_rteDv4_Dh`",
    ),
    (
        "_Z020convert_int4_sat_rteDv4_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "starts with 0",
    ),
    (
        "_Z0f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "zero",
    ),
    (
        "_Z99999999999999999999999999f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "length",
    ),
    (
        "_Z12convert_char",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "missing the parameter",
    ),
    (
        "_Z12convert_charfxyz",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "`xyz`",
    ),
    (
        "_Z12convert_charff",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "exactly one argument",
    ),
    (
        "_Z13convert_char4Dv5_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "Dv5_",
    ),
    (
        "_Z13convert_char4Dv04_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "leading zero",
    ),
    (
        "_Z12convert_charDv1_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "Dv1_",
    ),
    (
        "_Z13convert_char4Dv4f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "expected `_`",
    ),
    (
        "_Z13convert_char4Dv4_",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "element type",
    ),
    (
        "_Z13convert_char4Dv_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "number of components",
    ),
    (
        "_Z13convert_char4Dv4_Dv4_f",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "vector of vectors",
    ),
    (
        "_Z11convert_intv",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "void",
    ),
    (
        "_Z11convert_intx",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "long long",
    ),
    (
        "_Z11convert_intPf",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "pointer",
    ),
    (
        "_Z12convert_charf ",
        |e| matches!(e, RequestError::BadMangling { .. }),
        "` `",
    ),
    (
        "_Z12convert_int5i",
        |e| matches!(e, RequestError::BadWidth { .. }),
        "int5",
    ),
    (
        "_Z17convert_float_satf",
        |e| matches!(e, RequestError::SatOnFloat { .. }),
        "float",
    ),
    (
        "_Z5helloi",
        |e| matches!(e, RequestError::NotAConversion { .. }),
        "_Z5helloi",
    ),
];

#[test]
fn bad_inputs_give_specific_errors() {
    for &(input, check, mention) in BAD {
        let e = Request::parse(input, FP16).unwrap_err();
        assert!(check(&e), "{input:?}: unexpected {e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains(mention),
            "{input:?}: {msg:?} does not mention {mention:?}"
        );
    }
}

#[test]
fn builtin_parse_errors() {
    let cases: &[(&str, Check, &str)] = &[
        (
            "convert_int5",
            |e| matches!(e, RequestError::BadWidth { .. }),
            "int5",
        ),
        (
            "convert_float_sat",
            |e| matches!(e, RequestError::SatOnFloat { .. }),
            "float",
        ),
        (
            "convert_int_rte_sat",
            |e| matches!(e, RequestError::BadModifier { .. }),
            "convert_int_sat_rte",
        ),
        (
            "convert_size_t",
            |e| matches!(e, RequestError::UnknownType { .. }),
            "size_t",
        ),
        (
            "as_float4_rte",
            |e| matches!(e, RequestError::BadModifier { .. }),
            "as_float4",
        ),
        (
            "convert_int4(float4)",
            |e| matches!(e, RequestError::Syntax { .. }),
            "Request::parse",
        ),
        (
            "_Z12convert_charf",
            |e| matches!(e, RequestError::Syntax { .. }),
            "Request::parse",
        ),
        ("", |e| matches!(e, RequestError::Empty), "empty"),
        (
            "hello",
            |e| matches!(e, RequestError::NotAConversion { .. }),
            "hello",
        ),
    ];
    for &(input, check, mention) in cases {
        let e = Builtin::parse(input, FP16).unwrap_err();
        assert!(check(&e), "{input:?}: unexpected {e:?}");
        assert!(e.to_string().contains(mention), "{input:?}: {e}");
    }
}

#[test]
fn long_input_is_refused_before_any_work() {
    let just_too_long = format!("convert_int4({}float4)", " ".repeat(300));
    assert!(matches!(
        Request::parse(&just_too_long, FP16),
        Err(RequestError::TooLong { max: 256, .. })
    ));

    // 10 MB of text that is not even ASCII: refused on its length alone, with the length in
    // the error (the error proves the check happened before the character scan, which would
    // have reported BadCharacter instead).
    let huge = "é".repeat(5 << 20);
    let e = Request::parse(&huge, FP16).unwrap_err();
    assert_eq!(
        e,
        RequestError::TooLong {
            len: huge.len(),
            max: 256
        }
    );
    assert!(matches!(
        Builtin::parse(&huge, FP16),
        Err(RequestError::TooLong { .. })
    ));
}

#[test]
fn messages_echo_a_shortened_input() {
    let inputs = [
        // Long unknown type, long modifier, long garbage, multi-byte characters near the cut.
        format!("convert_{}(int)", "x".repeat(200)),
        format!("convert_int_{}", "y".repeat(200)),
        "z".repeat(250),
        format!("convert_int4(float4){}", "é".repeat(100)),
        "ж".repeat(128),
        format!("_Z{}", "9".repeat(200)),
        format!("convert_int{}", "7".repeat(200)),
    ];
    for input in &inputs {
        let e = Request::parse(input, FP16).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.chars().count() < 600,
            "{} chars: {msg}",
            msg.chars().count()
        );
        assert!(msg.contains("..."), "{msg}");
    }
}

/// A small deterministic generator, so the sweep needs no dependency and fails reproducibly.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Parses `input` both ways and, when accepted, checks that the printed forms parse back to the
/// same thing. Any panic fails the test.
fn check_no_panic(input: &str) {
    for ext in [NO_FP16, FP16] {
        match Request::parse(input, ext) {
            Ok(r) => {
                assert_eq!(Request::parse(&r.to_string(), ext), Ok(r), "{input:?}");
                assert_eq!(Request::parse(&r.mangled(), ext), Ok(r), "{input:?}");
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
        match Builtin::parse(input, ext) {
            Ok(b) => assert_eq!(Builtin::parse(&b.to_string(), ext), Ok(b), "{input:?}"),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn no_panic_on_prefixes_and_mutations() {
    const PALETTE: &[char] = &[
        '_', '(', ')', ' ', '\t', '0', '1', '2', '3', '4', '6', '8', '9', 'a', 'c', 'd', 'e', 'f',
        'h', 'i', 'l', 'n', 'r', 's', 't', 'v', 'x', 'z', 'D', 'Z', 'S', ',', '\0', 'é', 'а', '€',
        '😀',
    ];
    let requests = Request::all(FP16);
    let mut names: Vec<String> = Vec::new();
    for r in &requests {
        names.push(r.to_string());
        names.push(r.mangled());
    }
    let builtins: BTreeSet<String> = requests.iter().map(|r| r.builtin().to_string()).collect();
    names.extend(builtins);

    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for name in &names {
        // Every prefix (truncated names hit every "expected ..." branch), then a few random
        // mutations.
        for end in 0..name.len() {
            check_no_panic(&name[..end]);
        }
        for _ in 0..4 {
            let mut chars: Vec<char> = name.chars().collect();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(chars.len() + 1);
                let c = PALETTE[rng.below(PALETTE.len())];
                match rng.below(5) {
                    0 if at < chars.len() => chars[at] = c,
                    1 if at < chars.len() => {
                        chars.remove(at);
                    }
                    2 => chars.insert(at, c),
                    3 => chars.truncate(at),
                    _ => {
                        // Duplicate a slice: repeated modifiers, doubled parentheses.
                        let from = rng.below(chars.len() + 1);
                        let to = (from + rng.below(6)).min(chars.len());
                        let copy: Vec<char> = chars[from..to].to_vec();
                        let at = at.min(chars.len());
                        chars.splice(at..at, copy);
                    }
                }
            }
            check_no_panic(&chars.into_iter().collect::<String>());
        }
    }

    // Random strings over the palette, of every length up to just past the limit.
    for len in 0..300 {
        let s: String = (0..len)
            .map(|_| PALETTE[rng.below(PALETTE.len())])
            .collect();
        check_no_panic(&s);
    }
}

/// PTX's float rules have their own modifiers after `_sat`: `_ftz`, then `_clamp01` or
/// `_relu`, before the rounding mode; they print back as they parse, and where they cannot
/// change a result (flushing an integer's conversion to float) they fall away.
#[test]
fn float_rule_modifiers_parse_print_and_refuse() {
    let ext = Extensions::with_fp16();
    for (text, printed) in [
        (
            "convert_half_clamp01_rte(float)",
            "convert_half_clamp01_rte(float)",
        ),
        (
            "convert_float_ftz_clamp01(float)",
            "convert_float_ftz_clamp01(float)",
        ),
        (
            "convert_float_clamp01_ftz(float)",
            "convert_float_ftz_clamp01(float)",
        ),
        (
            "convert_bfloat_sat_relu_rtz(float)",
            "convert_bfloat_sat_relu_rtz(float)",
        ),
        (
            "convert_int_sat_ftz_rtp(float)",
            "convert_int_sat_ftz_rtp(float)",
        ),
        ("convert_float_ftz(int)", "convert_float(int)"),
        ("convert_double_ftz(half)", "convert_double(half)"),
        (
            "convert_half4_relu_rte(float4)",
            "convert_half4_relu_rte(float4)",
        ),
    ] {
        let r = Request::parse(text, ext).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(r.to_string(), printed, "{text}");
        assert_eq!(Request::parse(&r.to_string(), ext), Ok(r), "{text}");
        assert_eq!(Request::parse(&r.mangled(), ext), Ok(r), "{text}");
    }
    for (text, says) in [
        ("convert_int_relu(float)", "is an integer type"),
        ("convert_float_clamp01_relu(int)", "a conversion takes one"),
        (
            "convert_half_relu_nancanon(float)",
            "a conversion takes one",
        ),
        ("convert_int_nancanon(float)", "is an integer type"),
        ("convert_float_rte_ftz(double)", "before the rounding mode"),
        ("convert_float_ftz_ftz(double)", "repeated"),
    ] {
        let e = Request::parse(text, ext).unwrap_err();
        assert!(
            matches!(e, RequestError::BadModifier { .. }),
            "{text}: {e:?}"
        );
        assert!(e.to_string().contains(says), "{text}: {e}");
    }
}
