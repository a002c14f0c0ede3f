//! MX and NVFP4 block entry points compiled ahead of time ([`ObjectBuilder::add_blocks`]):
//! linked with a C driver and run, natively on every x86-64 flag set this machine runs (every
//! block request) and under QEMU on aarch64, riscv64, riscv64 with V and s390x (one request of
//! each kind, element format and value type), bit for bit against the reference's block
//! quantiser ([`clconv::reference::mx_quantize`] and friends) on the seed blocks and every
//! element and scale, at counts that end in every kind of tail; the NVFP4 entry points also
//! refuse tensor scales that are not positive and finite (status 1, no buffer touched).
//! Every buffer ends where an inaccessible page begins, and 64 canary bytes before each
//! output must stay: an entry point that reads or writes past its `count` values fails.
//!
//! Needs gcc, and for the other targets the cross compilers and QEMU `.ci/run` installs:
//! without them the tests fail and name the packages.

use clconv::aot::ObjectBuilder;
use clconv::mx::MxRequest;
use clconv::reference::{mx_dequantize, mx_quantize, nvfp4_dequantize, nvfp4_quantize};
use clconv::target::Target;
use clconv_verify::cross::Toolchain;
use clconv_verify::mx_blocks;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The C driver: runs entry point `index` (of kind 0 MX quantise, 1 MX dequantise, 2 NVFP4
/// quantise, 3 NVFP4 dequantise) on records from standard input (index u32, tensor scale u32
/// bits, count u64, the two inputs' and two outputs' byte lengths u64, the inputs; all
/// little-endian, s390x's driver too) and writes the status (u32) and both outputs to
/// standard output.
fn driver_source(entries: &[(String, MxRequest)]) -> String {
    let table: Vec<String> = entries
        .iter()
        .map(|(symbol, r)| {
            let kind = match (r.is_nvfp4(), r.is_quantize()) {
                (false, true) => 0,
                (false, false) => 1,
                (true, true) => 2,
                (true, false) => 3,
            };
            format!("    {{(void (*)(void)){symbol}, {kind}}},")
        })
        .collect();
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "k.h"

typedef void (*mxq_t)(const void *, void *, void *, size_t);
typedef void (*mxd_t)(const void *, const void *, void *, size_t);
typedef int (*nvq_t)(const void *, void *, void *, size_t, float);
typedef int (*nvd_t)(const void *, const void *, void *, size_t, float);
static const struct {{ void (*f)(void); int kind; }} fns[] = {{
{}
}};

/* n bytes that end where an inaccessible page begins. */
static unsigned char *guarded(size_t n, unsigned char **base, size_t *len) {{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = (n + 64 + page - 1) / page + 1;
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

/* A little-endian number of `n` bytes (the records are little-endian on every target). */
static unsigned long long le(size_t n) {{
    unsigned char b[8];
    get(b, n);
    unsigned long long v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | b[i];
    return v;
}}

int main(void) {{
    int c;
    while ((c = getchar()) != EOF) {{
        ungetc(c, stdin);
        unsigned index = (unsigned)le(4), tbits = (unsigned)le(4);
        unsigned long long count = le(8), n[4];
        for (int i = 0; i < 4; i++) n[i] = le(8);
        unsigned char *base[4], *buf[4];
        size_t len[4];
        for (int i = 0; i < 4; i++) buf[i] = guarded(n[i], &base[i], &len[i]);
        for (int i = 0; i < 2; i++) {{
            get(buf[i], n[i]);
            if (mprotect(base[i], len[i] - (size_t)sysconf(_SC_PAGESIZE), PROT_READ)) exit(6);
        }}
        for (int i = 2; i < 4; i++) {{
            memset(buf[i] - 64, 0x5a, 64);
            memset(buf[i], 0xa5, n[i]);
        }}
        float t;
        memcpy(&t, &tbits, 4);
        int status = 0;
        switch (fns[index].kind) {{
        case 0: ((mxq_t)fns[index].f)(buf[0], buf[2], buf[3], (size_t)count); break;
        case 1: ((mxd_t)fns[index].f)(buf[0], buf[1], buf[2], (size_t)count); break;
        case 2: status = ((nvq_t)fns[index].f)(buf[0], buf[2], buf[3], (size_t)count, t); break;
        default: status = ((nvd_t)fns[index].f)(buf[0], buf[1], buf[2], (size_t)count, t); break;
        }}
        for (int i = 2; i < 4; i++)
            for (int k = 1; k <= 64; k++)
                if (buf[i][-k] != 0x5a) return 3;
        unsigned char s[4] = {{(unsigned char)status, 0, 0, 0}};
        if (fwrite(s, 1, 4, stdout) != 4) return 7;
        for (int i = 2; i < 4; i++)
            if (n[i] && fwrite(buf[i], 1, n[i], stdout) != n[i]) return 7;
        for (int i = 0; i < 4; i++) munmap(base[i], len[i]);
    }}
    return 0;
}}
"#,
        table.join("\n")
    )
}

/// One call of an entry point and what the reference says it gives.
struct Call {
    index: u32,
    tensor_scale: f32,
    count: usize,
    inputs: [Vec<u8>; 2],
    /// The status and the two outputs the reference gives.
    want: (u32, [Vec<u8>; 2]),
}

/// The calls that check `request` (entry `index`): the seed blocks (quantisations) or every
/// element and scale (dequantisations), whole and cut to counts that end in every kind of
/// tail; NVFP4's under several tensor scales and under ones the entry point must refuse.
fn calls(index: u32, request: &MxRequest, short: bool) -> Vec<Call> {
    let block = request.block_len();
    let tensor_scales: Vec<f32> = if request.is_nvfp4() {
        mx_blocks::NVFP4_TENSOR_SCALES.to_vec()
    } else {
        vec![1.0]
    };
    let mut out = Vec::new();
    let value_bytes = request.value().bytes();
    if request.is_quantize() {
        let mut blocks = mx_blocks::blocks();
        if short {
            blocks.truncate(64);
        }
        let all = mx_blocks::value_bytes(request.value(), &blocks);
        let total = all.len() / value_bytes;
        for &t in &tensor_scales {
            for count in [0, 1, block - 1, block, block + 1, 3 * block + 5, total] {
                let values = all[..count * value_bytes].to_vec();
                let mut elements = vec![0u8; request.element_bytes(count)];
                let mut scales = vec![0u8; request.block_count(count)];
                if request.is_nvfp4() {
                    nvfp4_quantize(request, &values, t, &mut elements, &mut scales).unwrap();
                } else {
                    mx_quantize(request, &values, &mut elements, &mut scales).unwrap();
                }
                out.push(Call {
                    index,
                    tensor_scale: t,
                    count,
                    inputs: [values, Vec::new()],
                    want: (0, [elements, scales]),
                });
            }
        }
    } else {
        let (elements, scales) = match (request.is_nvfp4(), request.packed()) {
            (true, packed) => mx_blocks::nvfp4_every_element_and_scale(packed),
            (false, true) => mx_blocks::every_byte_and_scale(),
            (false, false) => mx_blocks::every_element_and_scale(),
        };
        let total = scales.len() * block;
        for &t in &tensor_scales {
            for count in [0, 1, block - 1, block, block + 1, 3 * block + 5, total] {
                let e = elements[..request.element_bytes(count)].to_vec();
                let s = scales[..request.block_count(count)].to_vec();
                let mut values = vec![0u8; count * value_bytes];
                if request.is_nvfp4() {
                    nvfp4_dequantize(request, &e, &s, t, &mut values).unwrap();
                } else {
                    mx_dequantize(request, &e, &s, &mut values).unwrap();
                }
                out.push(Call {
                    index,
                    tensor_scale: t,
                    count,
                    inputs: [e, s],
                    want: (0, [values, Vec::new()]),
                });
            }
        }
    }
    if request.is_nvfp4() {
        // Refused tensor scales: status 1, the outputs as the driver filled them.
        let good = out.pop().expect("a call");
        for t in [0.0, -0.0, -1.0, f32::INFINITY, f32::NAN] {
            let want = good.want.1.clone().map(|o| vec![0xa5; o.len()]);
            out.push(Call {
                index,
                tensor_scale: t,
                count: good.count,
                inputs: good.inputs.clone(),
                want: (1, want),
            });
        }
        out.push(good);
    }
    out
}

/// Runs the calls through `program` (under `runner`, QEMU and its arguments, if any); each
/// call's status and outputs.
fn run(program: &Path, runner: &[&str], calls: &[Call]) -> Vec<(u32, [Vec<u8>; 2])> {
    let mut input = Vec::new();
    for c in calls {
        input.extend_from_slice(&c.index.to_le_bytes());
        input.extend_from_slice(&c.tensor_scale.to_bits().to_le_bytes());
        input.extend_from_slice(&(c.count as u64).to_le_bytes());
        for n in [
            c.inputs[0].len(),
            c.inputs[1].len(),
            c.want.1[0].len(),
            c.want.1[1].len(),
        ] {
            input.extend_from_slice(&(n as u64).to_le_bytes());
        }
        input.extend_from_slice(&c.inputs[0]);
        input.extend_from_slice(&c.inputs[1]);
    }
    // Kept beside the program, to run it again by hand.
    std::fs::write(program.with_file_name("calls.bin"), &input).unwrap();
    let mut command = match runner.split_first() {
        Some((qemu, args)) => {
            let mut c = Command::new(qemu);
            c.args(args).arg(program);
            c
        }
        None => Command::new(program),
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
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
    let written = writer.join().unwrap();
    assert!(
        status.success(),
        "{} failed ({status}): an entry point read or wrote outside its buffers \
         (signal), or overwrote a canary before an output (status 3)",
        program.display()
    );
    written.unwrap();
    let mut at = 0;
    let mut take = |n: usize| {
        let v = output[at..at + n].to_vec();
        at += n;
        v
    };
    calls
        .iter()
        .map(|c| {
            let s = u32::from_le_bytes(take(4).try_into().unwrap());
            (s, [take(c.want.1[0].len()), take(c.want.1[1].len())])
        })
        .collect()
}

/// A scratch directory of this test's own under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("aot_blocks")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds `requests` into an object for `target`, links it with the driver by `cc`, runs
/// every call and compares: the number of calls checked.
fn check_target(target: Target, requests: &[MxRequest], short: bool) -> usize {
    let toolchain = Toolchain::of(target);
    let (cc, runner): (&str, Vec<&str>) = match &toolchain {
        Some(t) => {
            t.check().unwrap_or_else(|e| panic!("{e}"));
            let mut runner = vec![t.qemu];
            runner.extend_from_slice(t.qemu_args);
            (t.cc, runner)
        }
        None => ("gcc", Vec::new()),
    };
    let dir = scratch(target.name());
    let mut object = ObjectBuilder::new(target).unwrap();
    for r in requests {
        object.add_blocks(r).unwrap();
    }
    let out = object.finish().unwrap();
    assert_eq!(out.block_symbols.len(), requests.len());
    std::fs::write(dir.join("k.o"), &out.object).unwrap();
    std::fs::write(dir.join("k.h"), &out.header).unwrap();
    std::fs::write(dir.join("driver.c"), driver_source(&out.block_symbols)).unwrap();
    let mut args = vec![
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
    ];
    if toolchain.is_some() {
        args.push("-static");
    }
    let built = Command::new(cc)
        .args(&args)
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc} ({e}): install Debian's gcc"));
    assert!(
        built.status.success(),
        "{cc} failed:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let calls: Vec<Call> = requests
        .iter()
        .enumerate()
        .flat_map(|(i, r)| calls(i as u32, r, short))
        .collect();
    let got = run(&dir.join("driver"), &runner, &calls);
    for (c, got) in calls.iter().zip(&got) {
        let r = &requests[c.index as usize];
        assert!(
            c.want == *got,
            "{}: {r} on {} values (tensor scale {:e}) differs from the reference: status {} \
             (want {}), outputs equal: {}, {}",
            target.name(),
            c.count,
            c.tensor_scale,
            got.0,
            c.want.0,
            c.want.1[0] == got.1[0],
            c.want.1[1] == got.1[1],
        );
    }
    calls.len()
}

/// One request of each kind, element format and value type: what the other targets run.
fn some_requests() -> Vec<MxRequest> {
    [
        "convert_mxfp8e4m3(float)",
        "convert_mxfp8e5m2_rtp(half)",
        "convert_mxfp6e2m3_rte(bfloat)",
        "convert_mxfp6e3m2(float)",
        "convert_mxfp4e2m1x2(float)",
        "convert_mxfp4e2m1_rtp(half)",
        "convert_float(mxfp8e4m3)",
        "convert_half(mxfp6e3m2)",
        "convert_bfloat(mxfp4e2m1x2)",
        "convert_nvfp4(float)",
        "convert_nvfp4x2(bfloat)",
        "convert_float(nvfp4x2)",
        "convert_half(nvfp4)",
    ]
    .iter()
    .map(|n| MxRequest::parse(n).unwrap())
    .collect()
}

#[test]
fn every_block_request_on_every_x86_64_flag_set_here() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let all = MxRequest::all();
    assert_eq!(all.len(), 84);
    for target in Target::X86_64.into_iter().filter(|t| t.runs_here()) {
        let n = check_target(target, &all, false);
        eprintln!(
            "{}: {} block entry points, {n} calls",
            target.name(),
            all.len()
        );
    }
}

#[test]
fn block_requests_on_the_other_targets_under_qemu() {
    for target in [
        Target::Aarch64,
        Target::Riscv64,
        Target::Riscv64V,
        Target::S390x,
    ] {
        let requests = some_requests();
        let n = check_target(target, &requests, true);
        eprintln!(
            "{}: {} block entry points, {n} calls",
            target.name(),
            requests.len()
        );
    }
}

#[test]
fn block_entry_points_are_declared_and_go_in_once() {
    let mut object = ObjectBuilder::new(Target::Host).unwrap();
    let dequantize = MxRequest::parse("convert_half(mxfp4e2m1x2)").unwrap();
    let quantize = MxRequest::parse("convert_nvfp4(bfloat)").unwrap();
    assert_eq!(
        object.add_blocks(&dequantize).unwrap(),
        "clconv_convert_half_mxfp4e2m1x2"
    );
    object.add_blocks(&quantize).unwrap();
    let again = object.add_blocks(&quantize).unwrap_err();
    assert!(
        again.to_string().contains("already in the object"),
        "{again}"
    );
    let h = object.finish().unwrap().header;
    for line in [
        "void clconv_convert_half_mxfp4e2m1x2(const uint8_t *elements, const uint8_t *scales, \
         uint16_t *values, size_t count);",
        "int clconv_convert_nvfp4_bfloat(const uint16_t *values, uint8_t *elements, \
         uint8_t *scales, size_t count, float tensor_scale);",
        " * elements: FP4 E2M1 codes two to a byte, low nibble first ((count + 1) / 2 bytes);",
        " * scales: one E4M3 scale per block ((count + 15) / 16 bytes); a last, shorter",
    ] {
        assert!(h.contains(line), "the header lacks {line:?}:\n{h}");
    }
}
