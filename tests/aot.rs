//! Ahead-of-time objects (`clconv::aot`): symbol names and errors, the objects every target
//! gets for the whole matrix (read back with the `object` crate), and x86-64 objects linked by
//! the host's gcc and run here against the reference interpreter on every kind of tail count,
//! with buffers that end at an inaccessible page.
//!
//! The native tests need gcc, and the header test g++ (Debian packages `gcc`, `g++`): without
//! them they fail and say so.
#![cfg(all(feature = "aot", feature = "cross-target"))]

use clconv::aot::{symbol_name, AotError, AotOutput, ObjectBuilder};
use clconv::buffer::bytes_per_vector;
use clconv::kernel::{self, Tier};
use clconv::target::Target;
use clconv::{reference, Extensions, Layout, Request, Rounding, ScalarType};
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn req(name: &str) -> Request {
    Request::parse(name, Extensions::with_fp16()).unwrap()
}

#[test]
fn symbols_are_named_as_the_issue_says() {
    let cases = [
        (
            "convert_uchar4_sat_rte(float4)",
            "clconv_convert_uchar4_sat_rte_float4",
        ),
        (
            "_Z20convert_int4_sat_rteDv4_f",
            "clconv_convert_int4_sat_rte_float4",
        ),
        ("convert_float(double)", "clconv_convert_float_double"),
        ("as_float3(int4)", "clconv_as_float3_int4"),
        (
            "convert_half16_rtn(ulong16)",
            "clconv_convert_half16_rtn_ulong16",
        ),
        ("convert_int3(int3)", "clconv_convert_int3_int3"),
    ];
    for (name, symbol) in cases {
        assert_eq!(symbol_name(&req(name)), symbol, "{name}");
    }
    let mut object = ObjectBuilder::new(Target::Aarch64).unwrap();
    let r = req("convert_float3_rtz(double3)");
    assert_eq!(
        object.add(&r, Tier::Optimised).unwrap(),
        "clconv_convert_float3_rtz_double3"
    );
    assert_eq!(
        object.add(&r, Tier::Quick).unwrap(),
        "clconv_convert_float3_rtz_double3_quick"
    );
    assert_eq!(
        object.add_aligned(&r, Tier::Optimised).unwrap(),
        "clconv_convert_float3_rtz_double3_aligned"
    );
    assert_eq!(
        object.add_aligned(&r, Tier::Quick).unwrap(),
        "clconv_convert_float3_rtz_double3_aligned_quick"
    );
    let again = object.add(&r, Tier::Quick).unwrap_err();
    assert_eq!(
        again,
        AotError::Duplicate {
            symbol: "clconv_convert_float3_rtz_double3_quick".into()
        }
    );
    assert!(
        again.to_string().contains("already in the object"),
        "{again}"
    );
    let out = object.finish().unwrap();
    let names: Vec<&str> = out.symbols.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        names,
        [
            "clconv_convert_float3_rtz_double3",
            "clconv_convert_float3_rtz_double3_quick",
            "clconv_convert_float3_rtz_double3_aligned",
            "clconv_convert_float3_rtz_double3_aligned_quick",
        ]
    );
    assert!(out.symbols.iter().all(|(_, q)| *q == r));
}

#[test]
fn the_header_declares_typed_functions_and_says_what_they_do() {
    let mut object = ObjectBuilder::new(Target::X86_64Avx2).unwrap();
    for name in [
        "convert_uchar4_sat_rte(float4)",
        "convert_float4_rtp(int4)",
        "convert_half3(float3)",
        "as_char16(float4)",
    ] {
        object.add(&req(name), Tier::Optimised).unwrap();
    }
    let h = object.finish().unwrap().header;
    for line in [
        "#include <stddef.h>",
        "#include <stdint.h>",
        "extern \"C\" {",
        "void clconv_convert_uchar4_sat_rte_float4(const float *src, uint8_t *dst, size_t count);",
        "void clconv_convert_float4_rtp_int4(const int32_t *src, float *dst, size_t count);",
        "void clconv_convert_half3_float3(const float *src, uint16_t *dst, size_t count);",
        "void clconv_as_char16_float4(const float *src, int8_t *dst, size_t count);",
        " * src: count float3 values (3 float elements (packed layout), 12 bytes each);",
        " * dst: count half3 values (3 uint16_t (half bits) elements (packed layout), 6 bytes \
         each).",
        // The mxcsr row's kernel runs in its conversion's mode, the others in nearest-even.
        " * Runs with MXCSR = 0x5f80 (exceptions masked, no flush-to-zero or denormals-are-zero, \
         rounding rtp), the caller's MXCSR restored after.",
        " * Runs with MXCSR = 0x1f80 (exceptions masked, no flush-to-zero or denormals-are-zero, \
         rounding rte), the caller's MXCSR restored after.",
    ] {
        assert!(
            h.lines().any(|l| l == line),
            "the header lacks\n{line}\n{h}"
        );
    }
    let guard = h
        .lines()
        .find_map(|l| l.strip_prefix("#ifndef "))
        .expect("an include guard");
    assert!(h.contains(&format!("#define {guard}\n")));
    assert!(h.trim_end().ends_with(&format!("#endif /* {guard} */")));
    assert!(!h.contains("LITTLE-ENDIAN") && !h.contains("-lm"));

    let mut s390x = ObjectBuilder::new(Target::S390x).unwrap();
    s390x
        .add(&req("convert_int(float)"), Tier::Optimised)
        .unwrap();
    let h = s390x.finish().unwrap().header;
    assert!(h.contains("LITTLE-ENDIAN"), "{h}");
    assert!(h.contains("Runs with FPC = 0"), "{h}");
}

/// The architecture `object` reads from a target's objects.
fn architecture(target: Target) -> object::Architecture {
    match target {
        Target::Host if cfg!(target_arch = "aarch64") => object::Architecture::Aarch64,
        Target::Aarch64 => object::Architecture::Aarch64,
        Target::Riscv64 | Target::Riscv64V => object::Architecture::Riscv64,
        Target::S390x => object::Architecture::S390x,
        _ => object::Architecture::X86_64,
    }
}

/// What an object must be: an ELF relocatable file of the target's architecture whose every
/// entry point is a global function defined in `.text`, referring to nothing outside itself
/// but the libm functions its header names.
fn check_object(target: Target, out: &AotOutput) {
    let file = object::File::parse(&*out.object).expect("an object file");
    assert_eq!(file.format(), object::BinaryFormat::Elf);
    assert_eq!(file.kind(), object::ObjectKind::Relocatable);
    assert_eq!(file.architecture(), architecture(target));
    let text = file.section_by_name(".text").expect("a .text section");
    let mut global = HashSet::new();
    for symbol in file.symbols() {
        let name = symbol.name().unwrap();
        if symbol.is_undefined() {
            if name.is_empty() {
                continue;
            }
            let libm = [
                "ceilf",
                "ceil",
                "floorf",
                "floor",
                "truncf",
                "trunc",
                "nearbyintf",
                "nearbyint",
            ];
            assert!(
                libm.contains(&name) && out.header.contains(name) && out.header.contains("-lm"),
                "{}: undefined symbol {name}",
                target.name()
            );
            continue;
        }
        if symbol.is_global() {
            assert_eq!(symbol.kind(), SymbolKind::Text, "{name}");
            assert_eq!(symbol.section_index(), Some(text.index()), "{name}");
            global.insert(name.to_string());
        }
    }
    let wanted: HashSet<String> = out.symbols.iter().map(|(s, _)| s.clone()).collect();
    assert_eq!(global, wanted, "{}: the exported symbols", target.name());
}

/// Every request of the matrix, half included, goes into one object for `target`, which
/// [`check_object`] then reads back; and [`tails_fit_in_2_kib`].
fn whole_matrix(target: Target) {
    let all = Request::all(Extensions::with_fp16());
    let mut object = ObjectBuilder::new(target).unwrap();
    for r in &all {
        object
            .add(r, Tier::Optimised)
            .unwrap_or_else(|e| panic!("{}: {e}", target.name()));
    }
    let out = object.finish().unwrap();
    assert_eq!(out.symbols.len(), all.len());
    check_object(target, &out);
    tails_fit_in_2_kib(target);
}

/// The tail's stack slots of every request's kernel for `target` stay within the 2 KiB the
/// module documentation promises (from the kernels' IR).
fn tails_fit_in_2_kib(target: Target) {
    let all = Request::all(Extensions::with_fp16());
    let isa = target.isa().unwrap();
    for r in &all {
        for layout in [Layout::Packed, Layout::Aligned] {
            let granule = kernel::build(r, layout, Rounding::Rte, &*isa, 0)
                .unwrap()
                .granule;
            let widest = bytes_per_vector(r.src(), layout).max(bytes_per_vector(r.dst(), layout));
            assert!(
                granule * widest <= 2048,
                "{}: {r}: {granule} vectors",
                target.name()
            );
        }
    }
}

macro_rules! whole_matrix {
    ($($name:ident: $target:expr,)*) => {$(
        #[test]
        fn $name() {
            whole_matrix($target);
        }
    )*};
}

whole_matrix! {
    every_request_compiles_for_x86_64_sse2: Target::X86_64Sse2,
    every_request_compiles_for_x86_64_sse41: Target::X86_64Sse41,
    every_request_compiles_for_x86_64_avx2: Target::X86_64Avx2,
    every_request_compiles_for_x86_64_avx512: Target::X86_64Avx512,
}

// The other targets' objects of the whole matrix, both tiers, are built, linked with a C
// driver and run under QEMU in crates/verify/tests/cross_isa.rs (a missing or wrong symbol
// fails the link there); here only their tails' stack bound.
#[test]
fn tails_fit_in_2_kib_on_the_other_targets() {
    for target in [
        Target::Aarch64,
        Target::Riscv64,
        Target::Riscv64V,
        Target::S390x,
    ] {
        tails_fit_in_2_kib(target);
    }
}

/// Both tiers of a request whose quick kernel Cranelift once could not compile: now the quick
/// one, under the `_quick` name; and the object stays usable after a failed `add`.
#[test]
fn a_quick_kernel_of_the_double_to_int_idiom_compiles_as_the_quick_one() {
    // Until the zero of `snarrow(fcvt_to_sint_sat.i64x2(x), 0)` was a `vconst`, Cranelift
    // compiled this kernel only with its optimisation passes and the quick entry got the
    // optimised kernel (the fallback `ObjectBuilder::add` keeps for such kernels).
    let mut object = ObjectBuilder::new(Target::X86_64Sse2).unwrap();
    let r = req("convert_short8_sat_rtn(double8)");
    object.add(&r, Tier::Optimised).unwrap();
    object.add(&r, Tier::Quick).unwrap();
    assert!(object.add(&r, Tier::Quick).is_err());
    let out = object.finish().unwrap();
    assert!(out.header.contains("quick tier"), "{}", out.header);
    assert!(
        !out.header.contains("only with its optimisation passes"),
        "{}",
        out.header
    );
    check_object(Target::X86_64Sse2, &out);
}

// ---------------------------------------------------------------------------------------------
// x86-64 objects run here
// ---------------------------------------------------------------------------------------------

/// A scratch directory of this test's own under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("aot")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a tool, failing the test with the Debian package to install when it is missing.
fn run_tool(tool: &str, package: &str, args: &[&str], dir: &Path) {
    let out = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {tool} ({e}): install Debian's {package} (apt-get install {package})"
            )
        });
    assert!(
        out.status.success(),
        "{tool} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A C program that runs the object's entry points on records read from standard input
/// (entry index u32, count u64, source bytes u64, destination bytes u64, the source) and
/// writes each destination to standard output. Every buffer ends where an inaccessible page
/// begins, the source is read-only, and 64 canary bytes before the destination must stay:
/// an entry point that reads or writes a byte beyond the `count` values crashes it.
fn driver_source(symbols: &[String]) -> String {
    let table: Vec<String> = symbols.iter().map(|s| format!("    (fn_t){s},")).collect();
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "k.h"

typedef void (*fn_t)(const void *, void *, size_t);
static const fn_t fns[] = {{
{}
}};

/* n bytes that end where an inaccessible page begins. */
static unsigned char *guarded(size_t n, unsigned char **base, size_t *len) {{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = (n + page - 1) / page + 1;
    unsigned char *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + (pages - 1) * page, page, PROT_NONE)) exit(4);
    *base = p;
    *len = pages * page;
    return p + (pages - 1) * page - n;
}}

static void get(void *p, size_t n) {{
    if (n && fread(p, 1, n, stdin) != n) exit(5);
}}

int main(void) {{
    unsigned index;
    while (fread(&index, 4, 1, stdin) == 1) {{
        unsigned long long count, sn, dn;
        get(&count, 8);
        get(&sn, 8);
        get(&dn, 8);
        unsigned char *sbase, *dbase;
        size_t slen, dlen;
        unsigned char *src = guarded(sn, &sbase, &slen);
        get(src, sn);
        if (mprotect(sbase, slen - (size_t)sysconf(_SC_PAGESIZE), PROT_READ)) exit(6);
        unsigned char *dst = guarded(dn + 64, &dbase, &dlen) + 64;
        memset(dst - 64, 0x5a, 64);
        memset(dst, 0xa5, dn);
        fns[index](src, dst, (size_t)count);
        for (int i = 1; i <= 64; i++)
            if (dst[-i] != 0x5a) return 3;
        if (dn && fwrite(dst, 1, dn, stdout) != dn) return 7;
        munmap(sbase, slen);
        munmap(dbase, dlen);
    }}
    return 0;
}}
"#,
        table.join("\n")
    )
}

/// Builds an object of `entries` for `target`, links it with [`driver_source`] by gcc (with
/// `-lm`, which the SSE2 baseline's rounding needs) and returns the program.
fn build_driver(target: Target, entries: &[(Request, Layout, Tier)], dir: &Path) -> PathBuf {
    let mut object = ObjectBuilder::new(target).unwrap();
    for &(r, layout, tier) in entries {
        match layout {
            Layout::Packed => object.add(&r, tier),
            Layout::Aligned => object.add_aligned(&r, tier),
        }
        .unwrap();
    }
    let out = object.finish().unwrap();
    check_object(target, &out);
    std::fs::write(dir.join("k.o"), &out.object).unwrap();
    std::fs::write(dir.join("k.h"), &out.header).unwrap();
    let symbols: Vec<String> = out.symbols.iter().map(|(s, _)| s.clone()).collect();
    std::fs::write(dir.join("driver.c"), driver_source(&symbols)).unwrap();
    run_tool(
        "gcc",
        "gcc",
        &[
            "-std=c99",
            "-D_DEFAULT_SOURCE",
            "-O1",
            "-Wall",
            "-Werror",
            "driver.c",
            "k.o",
            "-lm",
            "-o",
            "driver",
        ],
        dir,
    );
    dir.join("driver")
}

/// One call: the entry's index, the count, and the source bytes.
struct Call {
    index: u32,
    count: usize,
    src: Vec<u8>,
    dst_len: usize,
}

/// Runs the calls through the driver; the destinations, in order.
fn run_driver(program: &Path, calls: &[Call]) -> Vec<Vec<u8>> {
    let mut input = Vec::new();
    for c in calls {
        input.extend_from_slice(&c.index.to_le_bytes());
        input.extend_from_slice(&(c.count as u64).to_le_bytes());
        input.extend_from_slice(&(c.src.len() as u64).to_le_bytes());
        input.extend_from_slice(&(c.dst_len as u64).to_le_bytes());
        input.extend_from_slice(&c.src);
    }
    let mut child = Command::new(program)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut output = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut output)
        .unwrap();
    let status = child.wait().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        status.success(),
        "the driver failed ({status}): an entry point read or wrote outside its buffers \
         (signal), or overwrote the canary before the destination (status 3)"
    );
    let mut at = 0;
    calls
        .iter()
        .map(|c| {
            let d = output[at..at + c.dst_len].to_vec();
            at += c.dst_len;
            d
        })
        .collect()
}

/// Deterministic xorshift bits.
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `vectors` source vectors of `request` in `layout`: random bit patterns, and for floating
/// sources one element in four from values where conversions go wrong (ties, range edges,
/// NaN, infinities, zeros, subnormals).
fn source(request: &Request, layout: Layout, vectors: usize, bits: &mut Bits) -> Vec<u8> {
    let t = request.src();
    let eb = t.elem.bytes();
    let specials: &[u64] = match t.elem {
        ScalarType::Float => &[
            0x0000_0000, // 0
            0x8000_0000, // -0
            0x3f00_0000, // 0.5
            0x3fc0_0000, // 1.5
            0xc020_0000, // -2.5
            0x437e_8000, // 254.5
            0x437e_999a, // 254.6
            0x4e8f_0d18, // 1.2e9
            0x3eff_ffff, // 0.5 - 1 ulp
            0x7fc0_0000, // NaN
            0x7f80_0000, // inf
            0xff80_0000, // -inf
            0x0000_0001, // the smallest subnormal
            0x4f00_0000, // 2^31
            0x4b80_0001, // 16777218
        ],
        ScalarType::Double => &[
            0,
            0x8000_0000_0000_0000,
            0x3fe0_0000_0000_0000, // 0.5
            0xc004_0000_0000_0000, // -2.5
            0x7ff8_0000_0000_0000, // NaN
            0x7ff0_0000_0000_0000, // inf
            0x36a0_0000_0000_0000, // 2^-149: float's smallest subnormal
            0x3810_0000_0000_0000, // 2^-126
            0x47ef_ffff_e000_0000, // FLT_MAX
            0x47ef_ffff_f000_0000, // FLT_MAX + half an ulp
            0x4170_0000_1000_0000, // 16777217
            0x0000_0000_0000_0001, // a double subnormal
        ],
        ScalarType::Half => &[0x3800, 0x3e00, 0xc100, 0x7e00, 0x7c00, 0x0001, 0x8000],
        _ => &[0, 1, u64::MAX, 1 << (t.elem.bits() - 1), 16_777_217],
    };
    let stride = layout.stride(t.width);
    let mut out = Vec::with_capacity(vectors * stride * eb);
    for _ in 0..vectors * stride {
        let r = bits.next();
        let v = if r.is_multiple_of(4) {
            specials[(r >> 8) as usize % specials.len()]
        } else {
            bits.next()
        };
        out.extend_from_slice(&v.to_le_bytes()[..eb]);
    }
    out
}

/// The requests the native tests run: every kind of kernel (vector recipes, per-element
/// loops, the x86-64 `mxcsr` rows, copies and reinterpretations, 3-component vectors in both
/// layouts, half).
fn native_requests() -> Vec<(Request, Layout)> {
    let packed = [
        "convert_uchar4_sat_rte(float4)",
        "convert_int4_sat_rte(float4)",
        "convert_int4(float4)",
        "convert_float4_rtp(int4)",
        "convert_float4_rtn(uint4)",
        "convert_float3_rtz(double3)",
        "convert_float8(double8)",
        "convert_char16_sat(short16)",
        "convert_ushort8_sat(int8)",
        "convert_float2_rtn(ulong2)",
        "convert_double_rtp(long)",
        "convert_ulong_sat(float)",
        "convert_short8_sat_rtn(double8)",
        "convert_half8_rte(float8)",
        "convert_half4_rtz(double4)",
        "convert_float3(half3)",
        "convert_uchar3_sat(int3)",
        "convert_uint3(uint3)",
        "convert_double2(double2)",
        "as_float4(int4)",
        "as_char16(float4)",
        "as_float3(int4)",
        "as_int4(float3)",
        "as_ushort2(half2)",
    ];
    let aligned = [
        "convert_float3_rtz(double3)",
        "convert_uchar3_sat(int3)",
        "as_float3(int3)",
        "convert_half3(float3)",
    ];
    packed
        .iter()
        .map(|n| (req(n), Layout::Packed))
        .chain(aligned.iter().map(|n| (req(n), Layout::Aligned)))
        .collect()
}

/// Every x86-64 flag set this machine runs: each request's entry points (both tiers) on
/// counts 0, 1, granule - 1, granule, granule + 1 and 1000 + 3, bit for bit the reference's.
#[test]
fn tails_match_the_reference_on_every_x86_64_flag_set_here() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let requests = native_requests();
    for target in Target::X86_64.into_iter().filter(|t| t.runs_here()) {
        let dir = scratch(&format!("tails-{}", target.name()));
        let mut entries = Vec::new();
        for &(r, layout) in &requests {
            for tier in [Tier::Optimised, Tier::Quick] {
                entries.push((r, layout, tier));
            }
        }
        let program = build_driver(target, &entries, &dir);
        let isa = target.isa().unwrap();
        let mut bits = Bits(0x9e37_79b9_7f4a_7c15);
        let mut calls = Vec::new();
        let mut wanted = Vec::new();
        for (index, &(r, layout, tier)) in entries.iter().enumerate() {
            let granule = kernel::build_tier(&r, layout, Rounding::Rte, &*isa, 0, tier)
                .unwrap()
                .granule;
            let mut counts = vec![0, 1, granule.saturating_sub(1), granule, granule + 1, 1003];
            counts.dedup();
            for count in counts {
                let src = source(&r, layout, count, &mut bits);
                let mut want = vec![0u8; count * bytes_per_vector(r.dst(), layout)];
                reference::evaluate(&r, layout, &src, &mut want).unwrap();
                calls.push(Call {
                    index: index as u32,
                    count,
                    src,
                    dst_len: want.len(),
                });
                wanted.push((r, layout, tier, count, want));
            }
        }
        let got = run_driver(&program, &calls);
        for ((r, layout, tier, count, want), got) in wanted.iter().zip(got) {
            assert!(
                *want == got,
                "{}: {r} ({}, {} tier) on {count} vectors differs from the reference:\n\
                 want {want:02x?}\ngot  {got:02x?}",
                target.name(),
                layout.name(),
                tier.name()
            );
        }
    }
}

/// The host is a target like the others here (Linux); its objects run like the named ones.
#[test]
fn the_host_is_a_target() {
    let mut object = ObjectBuilder::new(Target::Host).unwrap();
    object
        .add(&req("convert_int4_sat_rte(float4)"), Tier::Optimised)
        .unwrap();
    check_object(Target::Host, &object.finish().unwrap());
}

/// The header is strict C99 and C++ (`extern "C"`), and two headers go in one file (their
/// include guards differ).
#[test]
fn the_header_compiles_as_c_and_cplusplus() {
    let dir = scratch("header");
    for (file, names) in [
        (
            "a.h",
            &["convert_uchar4_sat_rte(float4)", "as_half2(int)"][..],
        ),
        ("b.h", &["convert_double16_rtz(ulong16)"][..]),
    ] {
        let mut object = ObjectBuilder::new(Target::Aarch64).unwrap();
        for n in names {
            object.add(&req(n), Tier::Optimised).unwrap();
        }
        std::fs::write(dir.join(file), object.finish().unwrap().header).unwrap();
    }
    std::fs::write(
        dir.join("both.c"),
        "#include \"a.h\"\n#include \"b.h\"\n#include \"a.h\"\nint main(void) { return 0; }\n",
    )
    .unwrap();
    run_tool(
        "gcc",
        "gcc",
        &[
            "-std=c99",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "both.c",
        ],
        &dir,
    );
    run_tool(
        "g++",
        "g++",
        &[
            "-x",
            "c++",
            "-std=c++11",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "both.c",
        ],
        &dir,
    );
}
