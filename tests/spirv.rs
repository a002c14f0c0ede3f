//! `clconv::spirv` on SPIR-V from the real toolchain and on bad input.
//!
//! - The 6,270 conversions of the matrix, compiled by clang and llvm-spirv (one function each,
//!   `tests/spirv/from_*.spv`, `manifest.tsv` names the request each function's source named):
//!   every conversion instruction maps to a request with the same results as the named one on
//!   every input tried (exhaustive for 8- and 16-bit sources), and every function without a
//!   conversion instruction holds a conversion that is the identity on the bits.
//! - The realistic kernels (`tests/spirv/kernels.spv`): their conversions lowered with
//!   `spirv::lower` into functions of our own, JIT-compiled and run bit-exact against the
//!   reference, in both operand forms.
//! - Bad input: each kind of broken module or instruction is a typed error naming the
//!   instruction, and mutated modules (truncated, words overwritten, opcodes and word counts
//!   changed) never panic.
#![cfg(feature = "spirv")]

use clconv::lower::{vector_parts, Lowering};
use clconv::reference::{self, ElementConverter};
use clconv::spirv::{self, Instruction, Module, Op, Role, SpirvError, SpirvType};
use clconv::{
    Conversion, Extensions, Layout, Request, RequestError, Rounding, ScalarType, VectorType,
};
use cranelift_jit::JITModule;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

mod common;
use common::define::define_function;
use common::{jit_module, load_operand, Form};

#[path = "common/read_spirv.rs"]
mod read_spirv;
use read_spirv::read_any;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/spirv/");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}{name}")).unwrap_or_else(|e| panic!("{DIR}{name}: {e}"))
}

/// Writes to the test output even when libtest captures it (the counts this test must show).
fn show(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Source bits to compare two conversions from `t` on: every value of an 8- or 16-bit type;
/// for 32 and 64 bits the boundaries of every type (each power of two, and one either side),
/// floating specials and pseudo-random bits.
fn inputs(t: ScalarType) -> Vec<u64> {
    let bits = t.bits();
    if bits <= 16 {
        return (0..1u64 << bits).collect();
    }
    let mask = u64::MAX >> (64 - bits);
    let mut out = vec![0, 1, mask, mask >> 1, (mask >> 1) + 1];
    for k in 0..bits {
        let p = 1u64 << k;
        out.extend([p, p.wrapping_sub(1), p + 1, p.wrapping_neg() & mask]);
    }
    let floats: Vec<u64> = if bits == 32 {
        let mut v: Vec<u64> = [
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            127.5,
            128.0,
            -128.5,
            255.5,
            256.0,
            32767.5,
            65535.5,
            2147483520.0,
            2147483648.0,
            -2147483648.0,
            4294967040.0,
            4294967296.0,
            9.223372e18,
            1.8446743e19,
            -1.0e30,
            f32::MAX,
            f32::MIN_POSITIVE,
            1.0e-45,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ]
        .iter()
        .map(|x| u64::from(x.to_bits()))
        .collect();
        v.extend([
            0x7fc0_0000,
            0x7fa0_0001,
            0xffc0_0123,
            0x3eff_ffff,
            0x4b80_0001,
        ]);
        v
    } else {
        let mut v: Vec<u64> = [
            0.0f64,
            -0.0,
            0.5,
            -0.5,
            2.5,
            -2.5,
            255.5,
            65535.5,
            2147483647.5,
            -2147483648.5,
            4294967295.5,
            9.223372036854775e18,
            9.223372036854776e18,
            -9.223372036854776e18,
            1.8446744073709552e19,
            3.4028235677973366e38,
            3.4028235677973362e38,
            6.5504e4,
            6.5520e4,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]
        .iter()
        .map(|x| x.to_bits())
        .collect();
        v.extend([
            0x7ff8_0000_0000_0000,
            0x7ff4_0000_0000_0001,
            0xfff8_0000_0000_0123,
        ]);
        v
    };
    out.extend(floats);
    let mut state = 0x9e37_79b9_7f4a_7c15 ^ u64::from(bits);
    for _ in 0..4096 {
        out.push(xorshift(&mut state) & mask);
    }
    out
}

/// The first input on which `a` and `b` give different bits, if any; `tried` counts the inputs.
fn first_difference(a: &Conversion, b: &Conversion, tried: &mut usize) -> Option<(u64, u64, u64)> {
    let (ca, cb) = (
        ElementConverter::new(a, Rounding::Rte),
        ElementConverter::new(b, Rounding::Rte),
    );
    inputs(a.src().elem).into_iter().find_map(|x| {
        *tried += 1;
        let (ra, rb) = (ca.convert(x).bits, cb.convert(x).bits);
        (ra != rb).then_some((x, ra, rb))
    })
}

/// What the mapping had to choose for `mapped` where the source named `named`.
fn difference_kind(named: &Conversion, mapped: &Conversion) -> String {
    let mut kinds = Vec::new();
    if named.rounding() != mapped.rounding() {
        kinds.push("rounding modifier (no effect on integer -> integer)");
    }
    if named.src().elem != mapped.src().elem {
        kinds.push("source signedness");
    }
    if named.dst().elem != mapped.dst().elem {
        kinds.push("destination signedness");
    }
    if named.saturate() != mapped.saturate() {
        kinds.push("_sat");
    }
    kinds.join(" + ")
}

const MODULES: [&str; 11] = [
    "from_char",
    "from_uchar",
    "from_short",
    "from_ushort",
    "from_int",
    "from_uint",
    "from_long",
    "from_ulong",
    "from_half",
    "from_float",
    "from_double",
];

#[test]
fn llvm_spirv_fixtures_map_to_the_named_requests() {
    let ext = Extensions::with_fp16();
    let manifest = std::fs::read_to_string(format!("{DIR}manifest.tsv")).unwrap();
    let rows: Vec<(&str, &str, Request)> = manifest
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split('\t');
            let (module, function, request) =
                (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            (module, function, Request::parse(request, ext).unwrap())
        })
        .collect();
    // The manifest is the whole matrix of OpenCL C's types, each conversion once (bfloat and
    // the 8-bit floats are not OpenCL C types: clang has no spelling for them).
    let named: HashSet<Request> = rows.iter().map(|r| r.2).collect();
    let matrix: HashSet<Request> = Conversion::all(ext)
        .into_iter()
        .filter(|c| !c.src().elem.is_beyond_opencl() && !c.dst().elem.is_beyond_opencl())
        .map(Request::Convert)
        .collect();
    assert_eq!(rows.len(), 6270);
    assert_eq!(named, matrix);

    // function name -> the requests of its conversion instructions, per module.
    let mut found: HashMap<&str, HashMap<String, Vec<Request>>> = HashMap::new();
    let mut instructions = 0;
    for module in MODULES {
        let parsed = Module::parse(&fixture(&format!("{module}.spv")))
            .unwrap_or_else(|e| panic!("{module}.spv: {e}"));
        let conversions = parsed
            .conversions(ext)
            .unwrap_or_else(|e| panic!("{module}.spv: {e}"));
        instructions += conversions.len();
        let per = found.entry(module).or_default();
        for m in conversions {
            per.entry(m.function.to_string())
                .or_default()
                .push(m.request);
        }
    }
    let in_manifest: HashSet<(&str, &str)> = rows.iter().map(|r| (r.0, r.1)).collect();
    for (module, per) in &found {
        for function in per.keys() {
            assert!(
                in_manifest.contains(&(*module, function.as_str())),
                "{module}.spv: {function} holds a conversion but is not in the manifest"
            );
        }
    }

    let mut exact = 0;
    let mut equivalent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut no_instruction: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut tried = 0;
    for (module, function, named) in &rows {
        let Request::Convert(named_conv) = named else {
            unreachable!("the manifest holds conversions")
        };
        match found[module].get(*function).map(Vec::as_slice) {
            None | Some([]) => {
                // No instruction: the conversion must be the identity on the bits.
                let c = ElementConverter::new(named_conv, Rounding::Rte);
                let mask = u64::MAX >> (64 - named.dst().elem.bits());
                let identity = named.src().elem.bits() == named.dst().elem.bits()
                    && inputs(named.src().elem).into_iter().all(|x| {
                        tried += 1;
                        c.convert(x).bits == x & mask
                    });
                if !identity {
                    failures.push(format!(
                        "{function}: no conversion instruction, but {named} is not the identity on the bits"
                    ));
                }
                let sat = if named_conv.saturate() { "_sat" } else { "" };
                let key = format!(
                    "convert_{}{{,2,3,4,8,16}}{sat}{{,_rte,_rtz,_rtp,_rtn}}({}{{n}})",
                    named.dst().elem,
                    named.src().elem
                );
                *no_instruction.entry(key).or_default() += 1;
            }
            Some([mapped]) => {
                let Request::Convert(mapped_conv) = mapped else {
                    failures.push(format!("{function}: {named} came back as {mapped}"));
                    continue;
                };
                if mapped == named {
                    exact += 1;
                    continue;
                }
                let same_shape = mapped.src().width == named.src().width
                    && mapped.src().elem.bits() == named.src().elem.bits()
                    && mapped.dst().elem.bits() == named.dst().elem.bits()
                    && mapped.src().elem.is_float() == named.src().elem.is_float()
                    && mapped.dst().elem.is_float() == named.dst().elem.is_float();
                match first_difference(named_conv, mapped_conv, &mut tried) {
                    None if same_shape => equivalent
                        .entry(difference_kind(named_conv, mapped_conv))
                        .or_default()
                        .push(format!("{named} -> {mapped}")),
                    None => failures.push(format!(
                        "{function}: {named} mapped to {mapped}, of another type or width"
                    )),
                    Some((x, a, b)) => failures.push(format!(
                        "{function}: {named} mapped to {mapped}, which differs on input {x:#x}: {a:#x} vs {b:#x}"
                    )),
                }
            }
            Some(more) => failures.push(format!(
                "{function}: {} conversion instructions for {named}: {more:?}",
                more.len()
            )),
        }
    }

    let equivalent_count: usize = equivalent.values().map(Vec::len).sum();
    let none_count: usize = no_instruction.values().sum();
    let mut report = format!(
        "\nSPIR-V fixtures (clang + llvm-spirv, tests/spirv/TOOLS.txt): {} conversions in {} modules, \
         {instructions} conversion instructions\n\
         \x20 {} functions with one conversion instruction: {} map to a request with the same \
         results as the one the source named ({exact} exactly that request, {equivalent_count} \
         another spelling with the same bits on every input tried)\n",
        rows.len(),
        MODULES.len(),
        rows.len() - none_count,
        exact + equivalent_count,
    );
    for (kind, list) in &equivalent {
        report += &format!("    differ in {kind}: {} (e.g. {})\n", list.len(), list[0]);
    }
    report += &format!(
        "  {none_count} functions with no conversion instruction (llvm-spirv emits none for an \
         identity on the bits; each checked to be one):\n"
    );
    for (group, n) in &no_instruction {
        report += &format!("    {group}: {n}\n");
    }
    report += &format!(
        "  {} of {} conversion instructions map to the named request's results; with the \
         {none_count} no-instruction ones, {} of {} conversions accounted for \
         ({tried} inputs run through the reference); {} failures\n",
        exact + equivalent_count,
        rows.len() - none_count,
        exact + equivalent_count + none_count,
        rows.len(),
        failures.len()
    );
    show(&report);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(exact + equivalent_count + none_count, 6270);
}

// ---------------------------------------------------------------------------------------------
// The realistic kernels, lowered and run.

/// The conversions of kernels.cl, in module order: function, the request its source named.
const KERNELS: [(&str, &str); 8] = [
    ("pack_rgba", "convert_uchar4_sat_rte(float4)"),
    ("pack_rgba_u32", "convert_uchar4_sat_rte(float4)"),
    ("quantise_int8", "convert_char8_sat_rte(float8)"),
    ("dequantise_int8", "convert_float8(char8)"),
    ("requantise", "convert_char4_sat(int4)"),
    ("pcm_to_half", "convert_float(short)"),
    ("truncate_to_half", "convert_half4_rtz(float4)"),
    ("sort_key", "as_uint(float)"),
];

/// Compiles `fn(src, dst)` that loads one value of `request`'s source in `form`, lowers `inst`
/// on it with one `spirv::lower` call, and stores the result; returns its address.
fn compile(
    module: &mut JITModule,
    n: usize,
    lowering: &Lowering,
    inst: &Instruction,
    request: &Request,
    form: Form,
) -> extern "C" fn(*const u8, *mut u8) {
    let label = request.to_string();
    let code = common::compile(module, n, &label, request, form, |b, args| {
        spirv::lower(lowering, b, inst, args).unwrap()
    });
    // SAFETY: `code` is the function just defined: (I64, I64) -> () in the module's default
    // calling convention, which is `extern "C"`'s on the host.
    unsafe { std::mem::transmute::<*const u8, extern "C" fn(*const u8, *mut u8)>(code) }
}

/// Element bits of type `t` to run: specials of every width, then pseudo-random.
fn element_inputs(t: ScalarType, count: usize, seed: u64) -> Vec<u64> {
    let all = inputs(t);
    let mut state = seed | 1;
    let mut out: Vec<u64> = all.iter().take(count / 2).copied().collect();
    while out.len() < count {
        let i = (xorshift(&mut state) % all.len() as u64) as usize;
        out.push(all[i]);
    }
    out
}

#[test]
fn realistic_kernels_lower_and_run_bit_exact() {
    let ext = Extensions::with_fp16();
    let module = Module::parse(&fixture("kernels.spv")).unwrap();
    let found = module.conversions(ext).unwrap();
    let listed: Vec<(String, String)> = found
        .iter()
        .map(|m| (m.function.to_string(), m.request.to_string()))
        .collect();
    let expected: Vec<(String, String)> = KERNELS
        .iter()
        .map(|(f, r)| (f.to_string(), r.to_string()))
        .collect();
    assert_eq!(listed, expected);

    let host = clconv::target::Target::Host.isa().unwrap();
    let lowerings = [
        ("per element", Lowering::without_isa().with_extensions(ext)),
        (
            "the host table's vector recipes",
            Lowering::for_isa(&*host).unwrap().with_extensions(ext),
        ),
        // Without FPRoundingMode a conversion to floating point rounds to nearest even in
        // SPIR-V, whatever the static mode.
        (
            "static mode rtp",
            Lowering::without_isa()
                .with_static_mode(Rounding::Rtp)
                .with_extensions(ext),
        ),
    ];
    let mut jit = jit_module();
    let mut n = 0;
    let mut runs = 0;
    for m in &found {
        let (s, d) = (m.request.src(), m.request.dst());
        for (what, lowering) in &lowerings {
            for form in [Form::Components, Form::Parts] {
                n += 1;
                let f = compile(&mut jit, n, lowering, &m.instruction, &m.request, form);
                let elems = element_inputs(s.elem, 64 * s.lanes(), n as u64);
                for chunk in elems.chunks(s.lanes()) {
                    let mut src = vec![0u8; vector_parts(s).1 * 16];
                    for (i, &x) in chunk.iter().enumerate() {
                        let w = s.elem.bytes();
                        src[i * w..(i + 1) * w].copy_from_slice(&x.to_le_bytes()[..w]);
                    }
                    let mut dst = vec![0u8; vector_parts(d).1 * 16 + 16];
                    f(src.as_ptr(), dst.as_mut_ptr());
                    let value = d.lanes() * d.elem.bytes();
                    let mut want = vec![0u8; value];
                    reference::evaluate(
                        &m.request,
                        Layout::Packed,
                        &src[..s.lanes() * s.elem.bytes()],
                        &mut want,
                    )
                    .unwrap();
                    assert_eq!(
                        dst[..value],
                        want[..],
                        "{} %{} {} ({what}, {form:?}) on {:02x?}",
                        m.function,
                        m.instruction.id,
                        m.request,
                        &src[..s.lanes() * s.elem.bytes()]
                    );
                    runs += 1;
                }
            }
        }
    }
    show(&format!(
        "\nkernels.spv: {} conversion instructions lowered with spirv::lower ({n} functions: 3 \
         lowerings x 2 operand forms), {runs} runs, bit-exact against the reference\n",
        found.len()
    ));
    // SAFETY: no function of the module is called after this.
    unsafe { jit.free_memory() };
}

/// `OpConvertSToF %float %int` without `FPRoundingMode`: nearest even, as SPIR-V says, even under a
/// lowering whose static mode is rtp; the reference agrees with the request it maps to.
#[test]
fn missing_rounding_mode_on_a_float_result_is_nearest_even() {
    let inst = Instruction {
        id: 9,
        opcode: Op::ConvertSToF as u32,
        result_type: SpirvType::float(32),
        operand_type: SpirvType::int(32),
        saturated: false,
        rounding: None,
    };
    let request = inst.request(Extensions::default()).unwrap();
    assert_eq!(request.to_string(), "convert_float(int)");
    let mut jit = jit_module();
    for (n, mode) in Rounding::ALL.into_iter().enumerate() {
        let lowering = Lowering::without_isa().with_static_mode(mode);
        let f = compile(&mut jit, n, &lowering, &inst, &request, Form::Components);
        let src = 16_777_217i32.to_le_bytes();
        let mut dst = [0u8; 16];
        f(src.as_ptr(), dst.as_mut_ptr());
        assert_eq!(
            f32::from_le_bytes(dst[..4].try_into().unwrap()),
            16_777_216.0,
            "{mode:?}"
        );
    }
    // SAFETY: no function of the module is called after this.
    unsafe { jit.free_memory() };
}

// ---------------------------------------------------------------------------------------------
// One instruction at a time.

fn inst(opcode: Op, result: SpirvType, operand: SpirvType) -> Instruction {
    Instruction {
        id: 42,
        opcode: opcode as u32,
        result_type: result,
        operand_type: operand,
        saturated: false,
        rounding: None,
    }
}

fn request(i: Instruction) -> String {
    i.request(Extensions::with_fp16()).unwrap().to_string()
}

#[test]
fn the_issue_s_instructions_map_as_documented() {
    let int = SpirvType::int;
    let float = SpirvType::float;
    // convert_char4_sat(int4): OpSConvert %v4uchar, SaturatedConversion
    let i = Instruction {
        saturated: true,
        ..inst(Op::SConvert, int(8).vector(4), int(32).vector(4))
    };
    assert_eq!(request(i), "convert_char4_sat(int4)");
    // convert_uchar_sat(long), convert_uint_sat(int): OpSatConvertSToU
    assert_eq!(
        request(inst(Op::SatConvertSToU, int(8), int(64))),
        "convert_uchar_sat(long)"
    );
    assert_eq!(
        request(inst(Op::SatConvertSToU, int(32), int(32))),
        "convert_uint_sat(int)"
    );
    assert_eq!(
        request(inst(Op::SatConvertUToS, int(8), int(32))),
        "convert_char_sat(uint)"
    );
    // convert_long_sat_rtn(double): OpConvertFToS %ulong, SaturatedConversion, RTN
    let i = Instruction {
        saturated: true,
        rounding: Some(Rounding::Rtn),
        ..inst(Op::ConvertFToS, int(64), float(64))
    };
    assert_eq!(request(i), "convert_long_sat_rtn(double)");
    // convert_uchar(int): OpSConvert %uchar -> convert_char(int), the same bits
    assert_eq!(
        request(inst(Op::SConvert, int(8), int(32))),
        "convert_char(int)"
    );
    assert_eq!(
        request(inst(Op::UConvert, int(32), int(8))),
        "convert_uint(uchar)"
    );
    assert_eq!(
        request(inst(
            Op::ConvertUToF,
            float(16).vector(3),
            int(64).vector(3)
        )),
        "convert_half3(ulong3)"
    );
    let i = Instruction {
        rounding: Some(Rounding::Rtz),
        ..inst(Op::FConvert, float(32).vector(16), float(64).vector(16))
    };
    assert_eq!(request(i), "convert_float16_rtz(double16)");
    // OpBitcast: the declared signedness names the integers; counts may change.
    assert_eq!(
        request(inst(Op::Bitcast, int(32), float(32))),
        "as_uint(float)"
    );
    assert_eq!(
        request(inst(
            Op::Bitcast,
            SpirvType::signed_int(32).vector(2),
            int(64)
        )),
        "as_int2(ulong)"
    );
    assert_eq!(
        request(inst(Op::Bitcast, float(32).vector(3), int(32).vector(3))),
        "as_float3(uint3)"
    );
}

#[test]
fn instructions_clconv_does_not_lower_are_typed_errors_naming_the_id() {
    let ext = Extensions::default();
    let int = SpirvType::int;
    let float = SpirvType::float;
    let err = |i: Instruction| {
        let e = i.request(Extensions::with_fp16()).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("%42"), "{text}");
        assert!(!text.contains('\n'), "{text}");
        e
    };
    // Not a conversion: OpFAdd (129), an opcode SPIR-V does not have.
    let e = err(Instruction {
        opcode: 129,
        ..inst(Op::FConvert, float(32), float(64))
    });
    assert!(
        matches!(
            e,
            SpirvError::NotAConversion {
                name: Some("FAdd"),
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("OpFAdd"), "{e}");
    let e = err(Instruction {
        opcode: 65000,
        ..inst(Op::FConvert, float(32), float(64))
    });
    assert!(
        matches!(e, SpirvError::NotAConversion { name: None, .. }),
        "{e}"
    );
    // A rounding decoration on an integer -> integer conversion.
    let e = err(Instruction {
        rounding: Some(Rounding::Rte),
        ..inst(Op::SConvert, int(8), int(32))
    });
    assert!(
        matches!(
            e,
            SpirvError::RoundingOnInteger {
                rounding: Rounding::Rte,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("FPRoundingMode RTE"), "{e}");
    // Mismatched component counts.
    let e = err(inst(Op::SConvert, int(8).vector(4), int(32).vector(2)));
    assert!(matches!(e, SpirvError::ComponentCount { .. }), "{e}");
    // Saturation on a floating result, any decoration on a bitcast.
    let e = err(Instruction {
        saturated: true,
        ..inst(Op::FConvert, float(32), float(64))
    });
    assert!(
        matches!(e, SpirvError::DecorationNotApplicable { .. }),
        "{e}"
    );
    let e = err(Instruction {
        rounding: Some(Rounding::Rtz),
        ..inst(Op::Bitcast, int(32), float(32))
    });
    assert!(
        matches!(
            e,
            SpirvError::DecorationNotApplicable {
                op: Op::Bitcast,
                ..
            }
        ),
        "{e}"
    );
    // An integer where the opcode reads floating point.
    let e = err(inst(Op::ConvertFToS, int(32), int(32)));
    assert!(
        matches!(
            e,
            SpirvError::OperandKind {
                role: Role::Operand,
                expected: "floating-point",
                ..
            }
        ),
        "{e}"
    );
    let e = err(inst(Op::ConvertSToF, int(32), int(32)));
    assert!(
        matches!(
            e,
            SpirvError::OperandKind {
                role: Role::Result,
                ..
            }
        ),
        "{e}"
    );
    // Types OpenCL has no conversion for.
    for (result, operand) in [
        (int(128), int(32)),
        (int(32), int(1)),
        (float(32), float(8)),
        (int(8).vector(5), int(32).vector(5)),
        (int(8).vector(0), int(32).vector(0)),
    ] {
        let e = err(inst(Op::UConvert, result, operand));
        assert!(
            matches!(e, SpirvError::UnsupportedType { .. })
                || matches!(e, SpirvError::OperandKind { .. }),
            "{e}"
        );
    }
    // A bitcast that changes the size (SPIR-V counts a 3-vector as 3 components).
    let e = err(inst(Op::Bitcast, float(32).vector(4), int(32).vector(3)));
    assert!(matches!(e, SpirvError::BitcastSize { .. }), "{e}");
    // Half without cl_khr_fp16.
    let e = inst(Op::FConvert, float(16), float(32))
        .request(ext)
        .unwrap_err();
    assert!(
        matches!(
            e,
            SpirvError::Request {
                source: RequestError::HalfWithoutFp16 { .. },
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().starts_with("%42 (OpFConvert)"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Whole modules built word by word.

/// A tiny SPIR-V assembler: enough for one function holding one conversion.
struct Asm {
    words: Vec<u32>,
}

impl Asm {
    fn new() -> Asm {
        Asm {
            words: vec![0x0723_0203, 0x0001_0000, 0, 100, 0],
        }
    }

    fn op(&mut self, opcode: u32, operands: &[u32]) -> &mut Asm {
        self.words
            .push(((operands.len() as u32 + 1) << 16) | opcode);
        self.words.extend_from_slice(operands);
        self
    }

    fn string(s: &str) -> Vec<u32> {
        let mut bytes = s.as_bytes().to_vec();
        bytes.push(0);
        while !bytes.len().is_multiple_of(4) {
            bytes.push(0);
        }
        bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

// Opcodes and enumerants used below.
const CAPABILITY: u32 = 17;
const MEMORY_MODEL: u32 = 14;
const NAME: u32 = 5;
const DECORATE: u32 = 71;
const DECORATION_GROUP: u32 = 73;
const GROUP_DECORATE: u32 = 74;
const TYPE_VOID: u32 = 19;
const TYPE_INT: u32 = 21;
const TYPE_FLOAT: u32 = 22;
const TYPE_VECTOR: u32 = 23;
const TYPE_POINTER: u32 = 32;
const TYPE_FUNCTION: u32 = 33;
const FUNCTION: u32 = 54;
const FUNCTION_PARAMETER: u32 = 55;
const FUNCTION_END: u32 = 56;
const LABEL: u32 = 248;
const RETURN: u32 = 253;
const FADD: u32 = 129;
const SATURATED: u32 = 28;
const FLOAT16: u32 = 9;
const FLOAT16_BUFFER: u32 = 8;
const STORAGE_BUFFER_16BIT_ACCESS: u32 = 4433;
const FP_ROUNDING_MODE: u32 = 39;

/// Ids of the module `conversion_module` builds.
const F: u32 = 1; // the function
const T_VOID: u32 = 2;
const T_FN: u32 = 3;
const T_INT32: u32 = 4;
const T_INT8: u32 = 5;
const T_FLOAT32: u32 = 6;
const T_FLOAT16: u32 = 7;
const T_V4INT32: u32 = 8;
const T_V4INT8: u32 = 9;
const T_V2INT32: u32 = 10;
const T_PTR: u32 = 11;
const T_FLOAT64: u32 = 12;
const P: u32 = 20; // the parameter
const L: u32 = 21; // the label
const C: u32 = 22; // the conversion
const C2: u32 = 23; // a second conversion
const GROUP: u32 = 30;

/// A module with `%f = fn(%p: operand_type) { %22 = opcode result_type %p; %23 = ... }`,
/// `decorations` (target, decoration words...) before the types.
fn conversion_module(
    convs: &[(u32, u32, u32)], // (opcode, result type, result id)
    operand_type: u32,
    decorations: &[&[u32]],
) -> Asm {
    let mut a = Asm::new();
    // Addresses, Linkage, Kernel, Float16Buffer (not Float16: half conversions need
    // --fp16, as in llvm-spirv 14's modules), Float64, Int64, Int16, Int8.
    for cap in [4, 5, 6, FLOAT16_BUFFER, 10, 11, 22, 39] {
        a.op(CAPABILITY, &[cap]);
    }
    a.op(MEMORY_MODEL, &[2, 2]);
    let mut name = vec![F];
    name.extend(Asm::string("convert_things"));
    a.op(NAME, &name);
    for d in decorations {
        let opcode = if d.len() == 1 {
            DECORATION_GROUP
        } else {
            DECORATE
        };
        a.op(opcode, d);
    }
    a.op(TYPE_VOID, &[T_VOID])
        .op(TYPE_INT, &[T_INT32, 32, 0])
        .op(TYPE_INT, &[T_INT8, 8, 0])
        .op(TYPE_FLOAT, &[T_FLOAT32, 32])
        .op(TYPE_FLOAT, &[T_FLOAT16, 16])
        .op(TYPE_FLOAT, &[T_FLOAT64, 64])
        .op(TYPE_VECTOR, &[T_V4INT32, T_INT32, 4])
        .op(TYPE_VECTOR, &[T_V4INT8, T_INT8, 4])
        .op(TYPE_VECTOR, &[T_V2INT32, T_INT32, 2])
        .op(TYPE_POINTER, &[T_PTR, 5, T_INT32])
        .op(TYPE_FUNCTION, &[T_FN, T_VOID, operand_type])
        .op(FUNCTION, &[T_VOID, F, 0, T_FN])
        .op(FUNCTION_PARAMETER, &[operand_type, P])
        .op(LABEL, &[L]);
    for &(opcode, result_type, id) in convs {
        a.op(opcode, &[result_type, id, P]);
    }
    a.op(RETURN, &[]).op(FUNCTION_END, &[]);
    a
}

fn read(bytes: &[u8], ext: Extensions) -> Result<Vec<spirv::Mapped>, SpirvError> {
    Module::parse(bytes)?.conversions(ext)
}

/// The error of reading `bytes`, checked to be one line.
fn read_err(bytes: &[u8]) -> SpirvError {
    let e = read(bytes, Extensions::with_fp16()).unwrap_err();
    let text = e.to_string();
    assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
    e
}

/// `a` with its `OpCapability from` replaced by `OpCapability to`.
fn with_capability(a: &Asm, from: u32, to: u32) -> Vec<u8> {
    let mut words = a.words.clone();
    let at = words
        .windows(2)
        .position(|w| w == [(2 << 16) | CAPABILITY, from])
        .expect("the capability");
    words[at + 1] = to;
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn capabilities_decide_half() {
    // OpFConvert %half %float, in modules that differ only in one capability.
    let a = conversion_module(&[(Op::FConvert as u32, T_FLOAT16, C)], T_FLOAT32, &[]);
    for (capability, name) in [
        (Some(FLOAT16), Some("Float16")),
        (
            Some(STORAGE_BUFFER_16BIT_ACCESS),
            Some("StorageBuffer16BitAccess"),
        ),
        (Some(4434), Some("UniformAndStorageBuffer16BitAccess")),
        (Some(4435), Some("StoragePushConstant16")),
        (Some(4436), Some("StorageInputOutput16")),
        (None, None), // Float16Buffer stays: half only in memory.
    ] {
        let bytes = match capability {
            Some(c) => with_capability(&a, FLOAT16_BUFFER, c),
            None => a.bytes(),
        };
        let module = Module::parse(&bytes).unwrap();
        assert_eq!(module.half_capability(), name, "{capability:?}");
        assert_eq!(
            module.extensions(Extensions::default()).fp16,
            name.is_some()
        );
        let read = module.conversions(Extensions::default());
        match name {
            Some(_) => assert_eq!(
                read.unwrap()[0].request.to_string(),
                "convert_half(float)",
                "{capability:?}"
            ),
            None => assert!(matches!(
                read.unwrap_err(),
                SpirvError::HalfWithoutCapability { id: C, .. }
            )),
        }
        // Extensions::with_fp16() overrides whatever the module declares.
        let forced = module.conversions(Extensions::with_fp16()).unwrap();
        assert_eq!(forced[0].request.to_string(), "convert_half(float)");
    }
}

/// Shader modules choose the rules for what SPIR-V leaves undefined by their source language,
/// and the float-controls execution modes give conversions into floats their rounding: what
/// glslang makes of scripts/spirv-fixtures/glsl_float_controls.comp, glsl_flush.comp and
/// hlsl_conversions.hlsl (read from their sources by hand).
#[test]
fn shader_modules_read_their_source_language_and_float_controls() {
    use clconv::spirv::SourceLanguage;
    let glsl = Module::parse(&fixture("glsl_float_controls.spv")).unwrap();
    assert_eq!(glsl.source_language(), Some(SourceLanguage::Glsl));
    assert_eq!(glsl.rounding_mode(16), Some(Rounding::Rtz));
    assert_eq!(glsl.rounding_mode(32), None);
    let requests: Vec<String> = glsl
        .conversions(Extensions::default())
        .unwrap()
        .iter()
        .map(|m| m.request.to_string())
        .collect();
    // f16vec4(vec4) under RoundingModeRTZ 16; ivec4(vec4): GLSL leaves out of range undefined,
    // clconv gives OpenCL's clamp.
    assert_eq!(
        requests,
        ["convert_half4_rtz(float4)", "convert_int4(float4)"]
    );

    let flush = Module::parse(&fixture("glsl_flush.spv")).unwrap();
    let e = flush.conversions(Extensions::default()).unwrap_err();
    assert!(matches!(e, SpirvError::ExecutionModes { .. }), "{e:?}");
    assert!(e.to_string().contains("DenormFlushToZero"), "{e}");

    let hlsl = Module::parse(&fixture("hlsl_conversions.spv")).unwrap();
    assert_eq!(hlsl.source_language(), Some(SourceLanguage::Hlsl));
    assert_eq!(hlsl.rules(), clconv::rules::Rules::OPENCL);
    let requests: Vec<String> = hlsl
        .conversions(Extensions::default())
        .unwrap()
        .iter()
        .map(|m| m.request.to_string())
        .collect();
    assert_eq!(
        requests,
        [
            "convert_int4(float4)",
            "convert_uint(float)",
            "convert_float(int)"
        ]
    );
    // llvm-spirv's OpenCL C modules name their language too.
    let kernels = Module::parse(&fixture("kernels.spv")).unwrap();
    assert_eq!(kernels.source_language(), Some(SourceLanguage::OpenClC));
}

/// What glslangValidator -V makes of scripts/spirv-fixtures/glsl_float16.comp and
/// glsl_storage16.comp (read from their GLSL source by hand).
#[test]
fn glslang_modules_declaring_16_bit_floats_read_half_without_fp16() {
    for (file, capability, expected) in [
        (
            "glsl_float16.spv",
            "Float16",
            &[
                "convert_half4(float4)", // f16vec4(vec4)
                "convert_float4(half4)", // vec4(f16vec4)
                "convert_short2(half2)", // i16vec2(f16vec2)
            ][..],
        ),
        (
            "glsl_storage16.spv",
            "StorageBuffer16BitAccess",
            &["convert_float4(half4)", "convert_half4(float4)"][..],
        ),
    ] {
        let module = Module::parse(&fixture(file)).unwrap();
        assert_eq!(module.half_capability(), Some(capability), "{file}");
        let found = module.conversions(Extensions::default()).unwrap();
        let requests: Vec<String> = found.iter().map(|m| m.request.to_string()).collect();
        assert_eq!(requests, expected, "{file}");
        assert!(found.iter().all(|m| m.function.to_string() == "main"));
        assert_eq!(module.conversions(Extensions::with_fp16()).unwrap(), found);
    }
    // llvm-spirv 14 declares only Float16Buffer, also for a kernel with cl_khr_fp16: its half
    // conversion is today's clear error without fp16.
    let kernels = Module::parse(&fixture("kernels.spv")).unwrap();
    assert_eq!(kernels.half_capability(), None);
    let e = kernels.conversions(Extensions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            SpirvError::HalfWithoutCapability {
                id: 125,
                op: Op::FConvert,
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with("%125 (OpFConvert) converts `half4`") && text.contains("--fp16"),
        "{text}"
    );
}

#[test]
fn hand_built_modules_read_with_decorations_and_groups() {
    let sconvert = Op::SConvert as u32;
    let ftou = Op::ConvertFToU as u32;
    // Direct decorations.
    let a = conversion_module(
        &[(ftou, T_INT8, C)],
        T_FLOAT32,
        &[&[C, SATURATED], &[C, FP_ROUNDING_MODE, 0]],
    );
    let found = read(&a.bytes(), Extensions::default()).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].function.to_string(), "convert_things");
    assert_eq!(found[0].instruction.id, C);
    assert_eq!(found[0].request.to_string(), "convert_uchar_sat_rte(float)");
    // Through a decoration group, onto two instructions.
    let mut a = conversion_module(
        &[(ftou, T_INT8, C), (Op::ConvertFToS as u32, T_INT8, C2)],
        T_FLOAT32,
        &[&[GROUP, SATURATED], &[GROUP, FP_ROUNDING_MODE, 3], &[GROUP]],
    );
    // OpGroupDecorate %30 %22 %23, right after the group.
    let at = a
        .words
        .iter()
        .position(|&w| w == ((2 << 16) | DECORATION_GROUP))
        .unwrap()
        + 2;
    a.words
        .splice(at..at, [(4 << 16) | GROUP_DECORATE, GROUP, C, C2]);
    let found = read(&a.bytes(), Extensions::default()).unwrap();
    let names: Vec<String> = found.iter().map(|m| m.request.to_string()).collect();
    assert_eq!(
        names,
        [
            "convert_uchar_sat_rtn(float)",
            "convert_char_sat_rtn(float)"
        ]
    );
    // Big-endian: the same module, the same conversions.
    let swapped: Vec<u8> = a.words.iter().flat_map(|w| w.to_be_bytes()).collect();
    assert_eq!(read(&swapped, Extensions::default()).unwrap(), found);
    // A function without OpName is %id; pointer bitcasts are not conversions.
    let a = conversion_module(
        &[(sconvert, T_INT8, C), (Op::Bitcast as u32, T_PTR, C2)],
        T_INT32,
        &[],
    );
    let mut words = a.words.clone();
    let name_at = words
        .iter()
        .position(|&w| w >> 16 > 1 && w & 0xffff == NAME)
        .unwrap();
    let len = (words[name_at] >> 16) as usize;
    words.drain(name_at..name_at + len);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let found = read(&bytes, Extensions::default()).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].function.to_string(), "%1");
    assert_eq!(found[0].request.to_string(), "convert_char(int)");
}

#[test]
fn bad_modules_are_typed_errors_naming_the_instruction() {
    let sconvert = Op::SConvert as u32;
    // A rounding decoration on an integer -> integer conversion.
    let a = conversion_module(
        &[(sconvert, T_INT8, C)],
        T_INT32,
        &[&[C, FP_ROUNDING_MODE, 0]],
    );
    let e = read_err(&a.bytes());
    assert!(
        matches!(e, SpirvError::RoundingOnInteger { id: C, .. }),
        "{e}"
    );
    assert!(e.to_string().starts_with("%22 (OpSConvert)"), "{e}");
    // Mismatched component counts.
    let a = conversion_module(&[(sconvert, T_V4INT8, C)], T_V2INT32, &[]);
    let e = read_err(&a.bytes());
    assert!(matches!(e, SpirvError::ComponentCount { id: C, .. }), "{e}");
    assert!(
        e.to_string().contains("v4uchar") && e.to_string().contains("v2uint"),
        "{e}"
    );
    // A decoration on a non-conversion: the parameter, an OpFAdd, an id nobody defines.
    let a = conversion_module(&[(sconvert, T_INT8, C)], T_INT32, &[&[P, SATURATED]]);
    let e = read_err(&a.bytes());
    assert!(
        matches!(e, SpirvError::DecorationOnNonConversion { id: P, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("OpFunctionParameter"), "{e}");
    let a = conversion_module(
        &[(FADD, T_FLOAT32, C2)],
        T_FLOAT32,
        &[&[C2, FP_ROUNDING_MODE, 1]],
    );
    // OpFAdd takes two operands: give it %p twice.
    let mut words = a.words.clone();
    let at = words.iter().position(|&w| w == ((4 << 16) | FADD)).unwrap();
    words[at] = (5 << 16) | FADD;
    words.insert(at + 4, P);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let e = read_err(&bytes);
    assert!(
        matches!(e, SpirvError::DecorationOnNonConversion { id: C2, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("it is an OpFAdd"), "{e}");
    let a = conversion_module(&[(sconvert, T_INT8, C)], T_INT32, &[&[99, SATURATED]]);
    let e = read_err(&a.bytes());
    assert!(
        matches!(e, SpirvError::DecorationOnNonConversion { id: 99, .. }),
        "{e}"
    );
    // Two rounding modes.
    let a = conversion_module(
        &[(Op::FConvert as u32, T_FLOAT16, C)],
        T_FLOAT32,
        &[&[C, FP_ROUNDING_MODE, 0], &[C, FP_ROUNDING_MODE, 2]],
    );
    let e = read_err(&a.bytes());
    assert!(
        matches!(e, SpirvError::ConflictingDecorations { id: C, .. }),
        "{e}"
    );
    // Half in a module that declares only Float16Buffer, without cl_khr_fp16: an error of the
    // mapping, with --fp16 it reads.
    let a = conversion_module(&[(Op::FConvert as u32, T_FLOAT16, C)], T_FLOAT32, &[]);
    let e = read(&a.bytes(), Extensions::default()).unwrap_err();
    assert!(
        matches!(e, SpirvError::HalfWithoutCapability { id: C, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with("%22 (OpFConvert)") && e.to_string().contains("--fp16"),
        "{e}"
    );
    assert!(read(&a.bytes(), Extensions::with_fp16()).is_ok());
    // A conversion of a pointer.
    let a = conversion_module(&[(sconvert, T_PTR, C)], T_INT32, &[]);
    let e = read_err(&a.bytes());
    assert!(
        matches!(
            e,
            SpirvError::NotNumeric {
                id: C,
                role: Role::Result,
                ..
            }
        ),
        "{e}"
    );
    // An operand nobody defines, a result type that is not a type.
    let mut a = conversion_module(&[(sconvert, T_INT8, C)], T_INT32, &[]);
    let at = a
        .words
        .iter()
        .position(|&w| w == ((4 << 16) | sconvert))
        .unwrap();
    a.words[at + 3] = 77;
    let e = read_err(&a.bytes());
    assert!(
        matches!(
            e,
            SpirvError::Undefined {
                id: C,
                missing: 77,
                ..
            }
        ),
        "{e}"
    );
    let a = conversion_module(&[(sconvert, L, C)], T_INT32, &[]);
    let e = read_err(&a.bytes());
    assert!(
        matches!(
            e,
            SpirvError::Undefined {
                id: C,
                missing: L,
                ..
            }
        ),
        "{e}"
    );
    // An extra operand word on the conversion: the grammar's error, naming it.
    let mut a = conversion_module(&[(sconvert, T_INT8, C)], T_INT32, &[]);
    let at = a
        .words
        .iter()
        .position(|&w| w == ((4 << 16) | sconvert))
        .unwrap();
    a.words[at] = (5 << 16) | sconvert;
    a.words.insert(at + 4, P);
    let e = read_err(&a.bytes());
    assert!(matches!(e, SpirvError::Malformed { .. }), "{e}");
    assert!(
        e.to_string().starts_with("%22 (OpSConvert, instruction #"),
        "{e}"
    );
    // A conversion outside a function, a function never closed.
    let mut a = conversion_module(&[], T_INT32, &[]);
    a.op(sconvert, &[T_INT8, C, P]);
    let e = read_err(&a.bytes());
    assert!(e.to_string().contains("outside any function"), "{e}");
    let mut a = conversion_module(&[(sconvert, T_INT8, C)], T_INT32, &[]);
    a.words.pop();
    let e = read_err(&a.bytes());
    assert!(e.to_string().contains("no OpFunctionEnd"), "{e}");
    // OpSpecConstantOp with an opcode it cannot compute (rspirv would panic on OpConstant).
    let mut a = conversion_module(&[], T_INT32, &[]);
    a.op(52, &[T_INT32, 40, 43, 0]);
    let e = read_err(&a.bytes());
    assert!(
        e.to_string()
            .contains("OpSpecConstantOp cannot compute OpConstant"),
        "{e}"
    );
}

/// The offset of the first instruction whose first word is `word` in `bytes`.
fn find_word(bytes: &[u8], word: u32) -> usize {
    bytes
        .chunks(4)
        .position(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) == word)
        .unwrap()
        * 4
}

#[test]
fn broken_llvm_spirv_modules_are_typed_errors_naming_the_instruction() {
    let good = fixture("kernels.spv");
    // %25 = OpConvertFToU %v4uchar %24: four words.
    let at = find_word(&good, (4 << 16) | Op::ConvertFToU as u32);
    assert_eq!(&good[at + 8..at + 12], &25u32.to_le_bytes());

    // Truncated inside %25: whole words, then inside a word.
    let e = read_err(&good[..at + 12]);
    assert!(
        matches!(&e, SpirvError::Truncated { at: l, words: 4, available: 3 } if l.id == Some(25)),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("%25 (OpConvertFToU, instruction #"),
        "{e}"
    );
    let e = read_err(&good[..at + 4]);
    assert!(
        matches!(&e, SpirvError::Truncated { at: l, .. } if l.id.is_none() && l.previous_id == Some(24)),
        "{e}"
    );
    assert!(e.to_string().contains("the one after %24"), "{e}");
    let e = read_err(&good[..at + 10]);
    assert!(
        matches!(&e, SpirvError::Truncated { at: l, available: 2, .. } if l.previous_id == Some(24)),
        "{e}"
    );
    let e = read_err(&good[..at + 2]);
    assert!(
        matches!(
            e,
            SpirvError::PartialWord {
                previous_id: Some(24),
                ..
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("2 byte(s) into the instruction at byte")
            && e.to_string().contains("after %24"),
        "{e}"
    );
    // Truncated in the header, and empty.
    assert!(matches!(
        read_err(&good[..12]),
        SpirvError::Header { bytes: 12 }
    ));
    assert!(matches!(read_err(&[]), SpirvError::Header { bytes: 0 }));
    // A wrong magic number.
    let mut bad = good.clone();
    bad[0] ^= 0xff;
    let e = read_err(&bad);
    assert!(matches!(e, SpirvError::Magic { .. }), "{e}");
    assert!(e.to_string().contains("not a SPIR-V module"), "{e}");
    // An unknown opcode in place of OpConvertFToU.
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&((4u32 << 16) | 0x7777).to_le_bytes());
    let e = read_err(&bad);
    assert!(
        matches!(&e, SpirvError::UnknownOpcode { opcode: 0x7777, at: l } if l.previous_id == Some(24)),
        "{e}"
    );
    assert!(
        e.to_string().contains("unknown opcode 30583") && e.to_string().contains("after %24"),
        "{e}"
    );
    // Word count zero.
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&(Op::ConvertFToU as u32).to_le_bytes());
    assert!(matches!(read_err(&bad), SpirvError::WordCountZero { .. }));
    // A word count that runs past the end.
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&((0xffffu32 << 16) | Op::ConvertFToU as u32).to_le_bytes());
    let e = read_err(&bad);
    assert!(
        matches!(&e, SpirvError::Truncated { at: l, .. } if l.id == Some(25)),
        "{e}"
    );
    // The conversion turned into an OpFAdd (4 words: too few operands for it).
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&((4u32 << 16) | FADD).to_le_bytes());
    let e = read_err(&bad);
    assert!(
        e.to_string().starts_with("%25 (OpFAdd, instruction #"),
        "{e}"
    );
    // The decorations of %25 now decorate a non-conversion: made an OpCopyObject (83).
    let mut bad = good.clone();
    bad[at..at + 4].copy_from_slice(&((4u32 << 16) | 83).to_le_bytes());
    let e = read_err(&bad);
    assert!(
        matches!(e, SpirvError::DecorationOnNonConversion { id: 25, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("it is an OpCopyObject"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Never a panic: `read_any` (tests/common/read_spirv.rs, the fuzz target's check too).

/// Instruction boundaries (byte offsets) of a well-formed module.
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pos = 20;
    while pos + 4 <= bytes.len() {
        out.push(pos);
        let w = u32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap());
        pos += 4 * ((w >> 16).max(1) as usize);
    }
    out
}

#[test]
fn every_truncation_and_word_overwrite_of_a_kernel_module_is_an_error_not_a_panic() {
    for file in ["kernels.spv", "half_loads_stores.spv"] {
        let good = fixture(file);
        let mut executions = 0;
        for len in 0..good.len() {
            read_any(&good[..len]);
            executions += 1;
        }
        let mut state = 7;
        for word in 0..good.len() / 4 {
            for value in [
                0,
                u32::MAX,
                0x0001_0000,
                0x0004_0000 | 0x7777,
                xorshift(&mut state) as u32,
            ] {
                let mut bad = good.clone();
                bad[4 * word..4 * word + 4].copy_from_slice(&value.to_le_bytes());
                read_any(&bad);
                executions += 1;
            }
        }
        show(&format!(
            "\n{file}: {executions} truncated and overwritten copies read, no panic\n"
        ));
    }
}

/// A mutation of a module.
#[derive(Clone, Debug)]
enum Mutation {
    Truncate(usize),
    Word(usize, u32),
    Bit(usize),
    /// Instruction (by boundary index), new opcode.
    Opcode(usize, u16),
    /// Instruction, new word count.
    WordCount(usize, u16),
    /// Instruction boundary, words inserted.
    Insert(usize, Vec<u32>),
    Swap(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u32>()).prop_map(|(i, w)| Mutation::Word(i, w)),
        any::<usize>().prop_map(Mutation::Bit),
        (any::<usize>(), prop_oneof![0u16..400, any::<u16>()])
            .prop_map(|(i, o)| Mutation::Opcode(i, o)),
        (any::<usize>(), prop_oneof![0u16..8, any::<u16>()])
            .prop_map(|(i, c)| Mutation::WordCount(i, c)),
        (any::<usize>(), prop::collection::vec(any::<u32>(), 1..6))
            .prop_map(|(i, w)| Mutation::Insert(i, w)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
    ]
}

fn mutate(base: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for m in mutations {
        let bounds = boundaries(&bytes);
        let words = bytes.len() / 4;
        match m {
            Mutation::Truncate(n) => bytes.truncate(n % (bytes.len() + 1)),
            Mutation::Word(i, w) if words > 0 => {
                let i = 4 * (i % words);
                bytes[i..i + 4].copy_from_slice(&w.to_le_bytes());
            }
            Mutation::Bit(i) if !bytes.is_empty() => {
                let i = i % (bytes.len() * 8);
                bytes[i / 8] ^= 1 << (i % 8);
            }
            Mutation::Opcode(i, o) if !bounds.is_empty() => {
                let at = bounds[i % bounds.len()];
                bytes[at..at + 2].copy_from_slice(&o.to_le_bytes());
            }
            Mutation::WordCount(i, c) if !bounds.is_empty() => {
                let at = bounds[i % bounds.len()];
                bytes[at + 2..at + 4].copy_from_slice(&c.to_le_bytes());
            }
            Mutation::Insert(i, w) => {
                let at = if bounds.is_empty() {
                    bytes.len()
                } else {
                    bounds[i % bounds.len()]
                };
                let inserted: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
                bytes.splice(at..at, inserted);
            }
            Mutation::Swap(a, b) if bounds.len() > 1 => {
                // Swap two instructions' first words.
                let (x, y) = (bounds[a % bounds.len()], bounds[b % bounds.len()]);
                for k in 0..4 {
                    bytes.swap(x + k, y + k);
                }
            }
            _ => {}
        }
    }
    bytes
}

proptest! {
    // PROPTEST_CASES sets the number of cases (VERIFICATION.md records a long run).
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn mutated_modules_never_panic(
        base in 0usize..3,
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let module = match base {
            0 => fixture("kernels.spv"),
            1 => conversion_module(
                &[(Op::ConvertFToU as u32, T_INT8, C), (Op::SConvert as u32, T_V4INT8, C2)],
                T_FLOAT32,
                &[&[GROUP, SATURATED], &[GROUP, FP_ROUNDING_MODE, 3], &[GROUP], &[C, SATURATED]],
            )
            .bytes(),
            _ => {
                // A slice of a matrix module: its first 4 KiB of functions after the types.
                let m = fixture("from_float.spv");
                let bounds = boundaries(&m);
                let end = bounds
                    .iter()
                    .copied()
                    .find(|&b| b > 24_000 && m[b - 4..b] == [0x38, 0, 1, 0]) // after OpFunctionEnd
                    .unwrap_or(m.len());
                m[..end].to_vec()
            }
        };
        read_any(&mutate(&module, &mutations));
    }
}

#[test]
fn conversions_of_the_matrix_modules_parse_in_module_order() {
    // Module order: the result ids of one module's conversions increase.
    let m = Module::parse(&fixture("from_int.spv")).unwrap();
    let ids: Vec<u32> = m.instructions().iter().map(|l| l.instruction.id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(m.version(), (1, 0));
    // VectorType widths survive: a 3-component conversion is a 3-component request.
    let found = m.conversions(Extensions::with_fp16()).unwrap();
    assert!(found
        .iter()
        .any(|f| f.request.to_string() == "convert_float3_rtp(int3)"));
    assert!(found
        .iter()
        .all(|f| f.request.src().width == f.request.dst().width
            && f.request.src() == VectorType::new(ScalarType::Int, f.request.src().width)));
}

/// The fuzz target's seeds (`fuzz/corpus/spirv_module/`, and any finding kept there) replay clean
/// on stable Rust, as the fuzz target checks them.
#[test]
fn the_fuzz_corpus_replays_clean() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/spirv_module");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        read_any(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 5, "{n} seeds in {dir}");
}

// ---------------------------------------------------------------------------------------------
// OpenCL.std half loads and stores (tests/spirv/half_loads_stores.spv, from clang-14 and
// llvm-spirv-14; scripts/spirv-fixtures/half_loads_stores.cl).

/// One kernel of half_loads_stores.cl as its source reads: the function, what `clconv spirv`
/// names it, a store (else a load), the float side's type, the conversion each component goes
/// through by the OpenCL C specification (a store without a mode: nearest even, SPIR-V's
/// default; a load: exact) and the stride in halves between consecutive offsets.
struct HalfKernel {
    function: &'static str,
    name: &'static str,
    store: bool,
    ty: (ScalarType, usize),
    mode: Rounding,
    stride: usize,
}

const fn hk(
    function: &'static str,
    name: &'static str,
    store: bool,
    ty: (ScalarType, usize),
    mode: Rounding,
    stride: usize,
) -> HalfKernel {
    HalfKernel {
        function,
        name,
        store,
        ty,
        mode,
        stride,
    }
}

const HALF_KERNELS: [HalfKernel; 14] = {
    use Rounding::{Rte, Rtn, Rtp, Rtz};
    use ScalarType::{Double, Float};
    [
        hk(
            "store_rtz",
            "vstore_half_rtz(float)",
            true,
            (Float, 1),
            Rtz,
            1,
        ),
        hk(
            "store_rtp",
            "vstore_half_rtp(float)",
            true,
            (Float, 1),
            Rtp,
            1,
        ),
        hk(
            "store_rtn",
            "vstore_half_rtn(float)",
            true,
            (Float, 1),
            Rtn,
            1,
        ),
        hk("load", "vload_half", false, (Float, 1), Rte, 1),
        hk("store", "vstore_half(float)", true, (Float, 1), Rte, 1),
        hk(
            "store_double_rtz",
            "vstore_half_rtz(double)",
            true,
            (Double, 1),
            Rtz,
            1,
        ),
        hk("store2", "vstore_half2(float2)", true, (Float, 2), Rte, 2),
        hk(
            "store4_rte",
            "vstore_half4_rte(float4)",
            true,
            (Float, 4),
            Rte,
            4,
        ),
        hk(
            "store2_double_rtp",
            "vstore_half2_rtp(double2)",
            true,
            (Double, 2),
            Rtp,
            2,
        ),
        hk(
            "storea3_rtn",
            "vstorea_half3_rtn(float3)",
            true,
            (Float, 3),
            Rtn,
            4,
        ),
        hk("storea8", "vstorea_half8(float8)", true, (Float, 8), Rte, 8),
        hk("load4", "vload_half4", false, (Float, 4), Rte, 4),
        hk("loada3", "vloada_half3", false, (Float, 3), Rte, 4),
        hk("load16", "vload_half16", false, (Float, 16), Rte, 16),
    ]
};

#[test]
fn half_op_numbers_are_the_khronos_grammar_s() {
    // OpenCL.ExtendedInstructionSet.100: vload_half 173 ... vstorea_halfn_r 181.
    let table = rspirv::grammar::ext_inst_table("OpenCL.std").unwrap();
    let named: Vec<(u32, &str)> = spirv::HalfOp::ALL
        .iter()
        .map(|op| (*op as u32, op.name()))
        .collect();
    assert_eq!(
        named,
        [
            (173, "vload_half"),
            (174, "vload_halfn"),
            (175, "vstore_half"),
            (176, "vstore_half_r"),
            (177, "vstore_halfn"),
            (178, "vstore_halfn_r"),
            (179, "vloada_halfn"),
            (180, "vstorea_halfn"),
            (181, "vstorea_halfn_r"),
        ]
    );
    for (number, name) in named {
        assert_eq!(table.lookup_opcode(number).unwrap().opname, name);
    }
}

#[test]
fn llvm_spirv_half_loads_and_stores_are_listed_with_modes_and_widths() {
    let module = Module::parse(&fixture("half_loads_stores.spv")).unwrap();
    // The kernels call no conversion builtin: every item is a half access, in source order.
    let items = module.items(Extensions::default()).unwrap();
    let listed: Vec<(String, String)> = items
        .iter()
        .map(|i| (i.function().to_string(), i.to_string()))
        .collect();
    let expected: Vec<(String, String)> = HALF_KERNELS
        .iter()
        .map(|k| (k.function.to_string(), k.name.to_string()))
        .collect();
    assert_eq!(listed, expected);
    // Every one of the nine instructions occurs.
    let numbers: HashSet<u32> = module
        .half_instructions()
        .iter()
        .map(|l| l.instruction.number)
        .collect();
    assert_eq!(numbers, (173..=181).collect());
    // Float16Buffer only: no half conversions are allowed, none are needed.
    assert_eq!(module.half_capability(), None);
    // kernels.spv's vstore_half_rtz sits after pcm_to_half's convert_float(short).
    let kernels = Module::parse(&fixture("kernels.spv")).unwrap();
    let pcm: Vec<String> = kernels
        .items(Extensions::with_fp16())
        .unwrap()
        .iter()
        .filter(|i| i.function().to_string() == "pcm_to_half")
        .map(|i| i.to_string())
        .collect();
    assert_eq!(pcm, ["convert_float(short)", "vstore_half_rtz(float)"]);
}

type HalfFn = extern "C" fn(*const u8, *mut u8, i64);

/// Compiles `fn(src, dst, offset)`: a store loads its value from `src` (in `form`) and stores it
/// to `dst` at `offset` with one `spirv::lower_half` call; a load loads from `src` at `offset`
/// and writes the floats' vector parts to `dst`.
fn compile_half(
    module: &mut JITModule,
    n: usize,
    lowering: &Lowering,
    inst: &spirv::HalfInstruction,
    ty: VectorType,
    form: Form,
) -> HalfFn {
    use clconv::cranelift_codegen::ir::{types, InstBuilder, MemFlagsData};
    let store = spirv::HalfOp::from_number(inst.number).unwrap().is_store();
    let id = define_function(module, &format!("h{n}"), &[types::I64; 3], &[], |b| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let p = b.block_params(entry).to_vec();
        let (src, dst, offset) = (p[0], p[1], p[2]);
        if store {
            let mut args = load_operand(b, ty, form, src);
            args.extend([offset, dst]);
            let out = spirv::lower_half(lowering, b, inst, &args).unwrap();
            assert!(out.is_empty());
        } else {
            let out = spirv::lower_half(lowering, b, inst, &[offset, src]).unwrap();
            assert_eq!(out.len(), vector_parts(ty).1); // one F32 for a scalar
            for (i, &v) in out.iter().enumerate() {
                b.ins()
                    .store(MemFlagsData::trusted(), v, dst, (16 * i) as i32);
            }
        }
        b.ins().return_(&[]);
        b.seal_all_blocks();
    });
    module.finalize_definitions().unwrap();
    let code = module.get_finalized_function(id);
    // SAFETY: `code` is the function just defined: (I64, I64, I64) -> () in the module's
    // default calling convention, which is `extern "C"`'s on the host.
    unsafe { std::mem::transmute::<*const u8, HalfFn>(code) }
}

/// Every half load and store of the llvm-spirv module, lowered with `spirv::lower_half` into
/// functions of our own, JIT-compiled and run at several offsets; the halves stored (or the
/// floats loaded) are the reference's `convert_half<n>_<mode>(float<n>|double<n>)` (or
/// `convert_float<n>(half<n>)`) of the same bits, with the mode and stride the OpenCL C source
/// names (HALF_KERNELS), and no other byte of the destination changes.
#[test]
fn llvm_spirv_half_loads_and_stores_lower_and_run_against_the_reference() {
    let module = Module::parse(&fixture("half_loads_stores.spv")).unwrap();
    let found = module.half_accesses().unwrap();
    assert_eq!(found.len(), HALF_KERNELS.len());
    let fp16 = Extensions::with_fp16();
    let lowerings = [
        ("static mode rte", Lowering::without_isa()),
        // A store without a mode rounds to nearest even in SPIR-V, whatever the static mode.
        (
            "static mode rtp",
            Lowering::without_isa().with_static_mode(Rounding::Rtp),
        ),
    ];
    const GUARD: u8 = 0xa5;
    let mut jit = jit_module();
    let (mut n, mut runs) = (0, 0);
    for (m, k) in found.iter().zip(&HALF_KERNELS) {
        assert_eq!(m.function.to_string(), k.function);
        let width = clconv::Width::from_lanes(k.ty.1).unwrap();
        let float_side = VectorType::new(k.ty.0, width);
        let half_side = VectorType::new(ScalarType::Half, width);
        // The reference's conversion, built from the source's reading, not from the mapping.
        let (from, to, mode) = if k.store {
            (float_side, half_side, Some(k.mode))
        } else {
            (half_side, float_side, None)
        };
        let reference = Request::Convert(Conversion::new(from, to, false, mode, fp16).unwrap());
        let forms: &[Form] = if k.store {
            &[Form::Components, Form::PaddedParts]
        } else {
            &[Form::PaddedParts]
        };
        for (what, lowering) in &lowerings {
            for &form in forms {
                n += 1;
                let f = compile_half(&mut jit, n, lowering, &m.instruction, float_side, form);
                let elems = element_inputs(from.elem, 32 * from.lanes(), n as u64);
                for (c, chunk) in elems.chunks(from.lanes()).enumerate() {
                    let offset = [0usize, 1, 3][c % 3];
                    let w = from.elem.bytes();
                    let value: Vec<u8> = chunk
                        .iter()
                        .flat_map(|x| x.to_le_bytes()[..w].to_vec())
                        .collect();
                    let mut want = vec![0u8; to.lanes() * to.elem.bytes()];
                    reference::evaluate(&reference, Layout::Packed, &value, &mut want).unwrap();
                    let at = 2 * k.stride * offset;
                    if k.store {
                        let mut src = vec![0u8; vector_parts(from).1 * 16];
                        src[..value.len()].copy_from_slice(&value);
                        let mut dst = vec![GUARD; at + 2 * k.stride + 64];
                        f(src.as_ptr(), dst.as_mut_ptr(), offset as i64);
                        let mut expected = vec![GUARD; dst.len()];
                        expected[at..at + want.len()].copy_from_slice(&want);
                        assert_eq!(
                            dst, expected,
                            "{} %{} {} ({what}, {form:?}) at offset {offset} on {value:02x?}",
                            m.function, m.instruction.id, m.access
                        );
                    } else {
                        let mut src = vec![GUARD; at + 2 * k.stride + 64];
                        src[at..at + value.len()].copy_from_slice(&value);
                        let mut dst = vec![0u8; vector_parts(to).1 * 16];
                        f(src.as_ptr(), dst.as_mut_ptr(), offset as i64);
                        assert_eq!(
                            dst[..want.len()],
                            want[..],
                            "{} %{} {} ({what}) at offset {offset} on {value:02x?}",
                            m.function,
                            m.instruction.id,
                            m.access
                        );
                    }
                    runs += 1;
                }
            }
        }
    }
    show(&format!(
        "\nhalf_loads_stores.spv: {} half loads and stores lowered with spirv::lower_half ({n} \
         functions), {runs} runs at offsets 0, 1, 3, bit-exact against the reference\n",
        found.len()
    ));
    // SAFETY: no function of the module is called after this.
    unsafe { jit.free_memory() };
}

#[test]
fn half_accesses_clconv_does_not_lower_are_typed_errors_naming_them() {
    use spirv::{HalfInstruction, HalfOp};
    let base = HalfInstruction {
        id: 46,
        number: HalfOp::VloadHalf as u32,
        value_type: SpirvType::float(32),
        n: None,
        rounding: None,
    };
    let cases: Vec<(HalfInstruction, &str)> = vec![
        (
            HalfInstruction {
                value_type: SpirvType::float(64),
                ..base
            },
            "%46 (vload_half): the result type is double; clconv lowers half loads to float",
        ),
        (
            HalfInstruction {
                number: HalfOp::VstoreHalf as u32,
                value_type: SpirvType::float(16),
                ..base
            },
            "%46 (vstore_half): the data operand's type is half; a half store converts float or double",
        ),
        (
            HalfInstruction {
                number: HalfOp::VstoreHalfR as u32,
                value_type: SpirvType::float(32).vector(4),
                rounding: Some(Rounding::Rtz),
                ..base
            },
            "%46 (vstore_half_r): the data operand's type v4float is a vector; vstore_half takes a scalar",
        ),
        (
            HalfInstruction {
                number: HalfOp::VloadHalfn as u32,
                value_type: SpirvType::float(32).vector(4),
                n: Some(2),
                ..base
            },
            "%46 (vload_halfn): the n operand is 2 but the result type v4float has 4",
        ),
        (
            HalfInstruction {
                number: HalfOp::VstoreHalfR as u32,
                ..base
            },
            "%46 (vstore_half_r): vstore_half_r without its rounding-mode operand",
        ),
        (
            HalfInstruction {
                value_type: SpirvType::float(32).vector(5),
                number: HalfOp::VloadHalfn as u32,
                n: Some(5),
                ..base
            },
            "%46 (vload_halfn): the result type v5float has 5 components",
        ),
        (
            HalfInstruction { number: 172, ..base },
            "%46: OpenCL.std instruction vstoren (172) is not a half load or store",
        ),
    ];
    for (inst, expected) in cases {
        let e = inst.access().unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with(expected), "{text}\nexpected: {expected}");
        assert!(!text.contains('\n'));
    }
    // A module with one: the first such instruction is the error of half_accesses and items.
    let mut words = fixture("half_loads_stores.spv")
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect::<Vec<u32>>();
    // %20 = OpExtInst %void %1 vstore_half_r %19 %17 %14 RTZ: mode 1 -> 9.
    let at = words
        .windows(5)
        .position(|w| w[0] & 0xffff == 12 && w[1] != 0 && w[2] == 20 && w[4] == 176)
        .expect("vstore_half_r %20");
    assert_eq!(words[at + 8], 1, "RTZ");
    words[at + 8] = 9;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let e = Module::parse(&bytes).unwrap_err();
    assert!(
        matches!(e, SpirvError::Malformed { .. }) && e.to_string().contains("rounding mode is 9"),
        "{e}"
    );
    // Lowering with the wrong values: a typed error, not a panic.
    let mut func = clconv::cranelift_codegen::ir::Function::new();
    let mut ctx = clconv::cranelift_frontend::FunctionBuilderContext::new();
    let mut b = clconv::cranelift_frontend::FunctionBuilder::new(&mut func, &mut ctx);
    let block = b.create_block();
    b.switch_to_block(block);
    let e = spirv::lower_half(&Lowering::without_isa(), &mut b, &base, &[]).unwrap_err();
    assert!(
        matches!(e, SpirvError::HalfOperandCount { got: 0, .. }),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// bfloat16 and the 8-bit floats: SPV_KHR_bfloat16, SPV_EXT_float8, SPV_INTEL_bfloat16_conversion.
// The numbers are those of include/spirv/unified1/spirv.core.grammar.json in
// KhronosGroup/SPIRV-Headers; the expected requests and bits are what the extensions say (quoted
// in the `clconv::spirv` module docs).

/// FP Encoding operand of OpTypeFloat: `BFloat16KHR` (SPV_KHR_bfloat16).
const FP_BFLOAT16_KHR: u32 = 0;
/// FP Encoding `Float8E4M3EXT` (SPV_EXT_float8).
const FP_FLOAT8_E4M3_EXT: u32 = 4214;
/// FP Encoding `Float8E5M2EXT` (SPV_EXT_float8).
const FP_FLOAT8_E5M2_EXT: u32 = 4215;
/// Decoration `SaturatedToLargestFloat8NormalConversionEXT` (SPV_EXT_float8).
const SATURATED_FLOAT8: u32 = 4216;
/// Capabilities `Float8EXT`, `BFloat16TypeKHR`, `BFloat16ConversionINTEL`.
const CAP_FLOAT8: u32 = 4212;
const CAP_BFLOAT16_TYPE: u32 = 5116;
const CAP_BFLOAT16_CONVERSION_INTEL: u32 = 6115;
/// `OpConvertFToBF16INTEL` and `OpConvertBF16ToFINTEL` (SPV_INTEL_bfloat16_conversion).
const CONVERT_F_TO_BF16_INTEL: u32 = 6116;
const CONVERT_BF16_TO_F_INTEL: u32 = 6117;
const EXTENSION: u32 = 10;
const SOURCE: u32 = 3;

// Type ids of `small_float_module`.
const SF_VOID: u32 = 2;
const SF_FLOAT: u32 = 3;
const SF_V4FLOAT: u32 = 4;
const SF_INT: u32 = 5;
const SF_CHAR: u32 = 6;
const SF_SHORT: u32 = 7;
const SF_V4SHORT: u32 = 8;
const SF_E4M3: u32 = 9;
const SF_V4E4M3: u32 = 10;
const SF_E5M2: u32 = 11;
const SF_V4E5M2: u32 = 12;
const SF_BF16: u32 = 13;
const SF_V4BF16: u32 = 14;
const SF_DOUBLE: u32 = 15;
const SF_HALF: u32 = 16;
/// The first id of the functions' own (each takes four: function, parameter, label, result).
const SF_FIRST_FUNCTION: u32 = 100;

/// One function of `small_float_module`: `name(%p: operand) { %c = opcode result %p }`, `%c`
/// decorated with each of `decorations` (the words after the target), and the request its
/// instruction computes by the extensions' words.
struct SmallConv {
    name: &'static str,
    opcode: u32,
    result: u32,
    operand: u32,
    decorations: &'static [&'static [u32]],
    expected: &'static str,
}

/// The functions of `tests/spirv/float8_conversions.spv`, in module order.
const FLOAT8_CONVERSIONS: [SmallConv; 12] = {
    const FCONVERT: u32 = Op::FConvert as u32;
    const RTE: &[u32] = &[FP_ROUNDING_MODE, 0];
    const RTZ: &[u32] = &[FP_ROUNDING_MODE, 1];
    const SAT8: &[u32] = &[SATURATED_FLOAT8];
    [
        // SPV_EXT_float8: without the decoration, out of range is NaN into E4M3 ...
        SmallConv {
            name: "to_e4m3",
            opcode: FCONVERT,
            result: SF_V4E4M3,
            operand: SF_V4FLOAT,
            decorations: &[],
            expected: "convert_fp8e4m3x4(float4)",
        },
        // ... and with it, the largest finite value of its sign.
        SmallConv {
            name: "to_e4m3_sat",
            opcode: FCONVERT,
            result: SF_V4E4M3,
            operand: SF_V4FLOAT,
            decorations: &[SAT8],
            expected: "convert_fp8e4m3x4_sat(float4)",
        },
        SmallConv {
            name: "to_e4m3_sat_rte",
            opcode: FCONVERT,
            result: SF_V4E4M3,
            operand: SF_V4FLOAT,
            decorations: &[SAT8, RTE],
            expected: "convert_fp8e4m3x4_sat_rte(float4)",
        },
        // Into E5M2 without it: infinity.
        SmallConv {
            name: "to_e5m2",
            opcode: FCONVERT,
            result: SF_V4E5M2,
            operand: SF_V4FLOAT,
            decorations: &[],
            expected: "convert_fp8e5m2x4(float4)",
        },
        SmallConv {
            name: "to_e5m2_sat_rtz",
            opcode: FCONVERT,
            result: SF_V4E5M2,
            operand: SF_V4FLOAT,
            decorations: &[RTZ, SAT8],
            expected: "convert_fp8e5m2x4_sat_rtz(float4)",
        },
        // The decoration also applies to OpConvertSToF and OpConvertUToF.
        SmallConv {
            name: "int_to_e4m3_sat",
            opcode: Op::ConvertSToF as u32,
            result: SF_E4M3,
            operand: SF_INT,
            decorations: &[SAT8],
            expected: "convert_fp8e4m3_sat(int)",
        },
        SmallConv {
            name: "uint_to_e5m2",
            opcode: Op::ConvertUToF as u32,
            result: SF_E5M2,
            operand: SF_INT,
            decorations: &[],
            expected: "convert_fp8e5m2(uint)",
        },
        SmallConv {
            name: "from_e5m2",
            opcode: FCONVERT,
            result: SF_V4FLOAT,
            operand: SF_V4E5M2,
            decorations: &[],
            expected: "convert_float4(fp8e5m2x4)",
        },
        // An integer result saturates with SaturatedConversion, from an 8-bit float too.
        SmallConv {
            name: "e4m3_to_char_sat",
            opcode: Op::ConvertFToS as u32,
            result: SF_CHAR,
            operand: SF_E4M3,
            decorations: &[&[SATURATED], RTE],
            expected: "convert_char_sat_rte(fp8e4m3)",
        },
        // SPV_KHR_bfloat16: OpFConvert into bfloat16, rounding by FPRoundingMode.
        SmallConv {
            name: "to_bfloat16_rtz",
            opcode: FCONVERT,
            result: SF_V4BF16,
            operand: SF_V4FLOAT,
            decorations: &[RTZ],
            expected: "convert_bfloat4_rtz(float4)",
        },
        // SPV_INTEL_bfloat16_conversion: round to nearest even, bits in a 16-bit integer.
        SmallConv {
            name: "intel_to_bfloat16",
            opcode: CONVERT_F_TO_BF16_INTEL,
            result: SF_V4SHORT,
            operand: SF_V4FLOAT,
            decorations: &[],
            expected: "convert_bfloat4_rte(float4)",
        },
        SmallConv {
            name: "intel_from_bfloat16",
            opcode: CONVERT_BF16_TO_F_INTEL,
            result: SF_V4FLOAT,
            operand: SF_V4SHORT,
            decorations: &[],
            expected: "convert_float4(bfloat4)",
        },
    ]
};

/// A Kernel module declaring the three extensions, their capabilities and the types above,
/// with one function per conversion of `convs`.
fn small_float_module(convs: &[SmallConv]) -> Asm {
    let mut a = Asm::new();
    // Addresses, Linkage, Kernel, Float16Buffer (for the half type the bad cases use),
    // Float64, Int16, Int8, and the extensions' three.
    for cap in [
        4,
        5,
        6,
        FLOAT16_BUFFER,
        10,
        22,
        39,
        CAP_FLOAT8,
        CAP_BFLOAT16_TYPE,
        CAP_BFLOAT16_CONVERSION_INTEL,
    ] {
        a.op(CAPABILITY, &[cap]);
    }
    for ext in [
        "SPV_EXT_float8",
        "SPV_KHR_bfloat16",
        "SPV_INTEL_bfloat16_conversion",
    ] {
        a.op(EXTENSION, &Asm::string(ext));
    }
    a.op(MEMORY_MODEL, &[2, 2]); // Physical64 OpenCL
    a.op(SOURCE, &[3, 300_000]); // OpenCL_C 3.0
    let function = |i: usize| SF_FIRST_FUNCTION + 4 * i as u32;
    for (i, c) in convs.iter().enumerate() {
        let mut name = vec![function(i)];
        name.extend(Asm::string(c.name));
        a.op(NAME, &name);
    }
    for (i, c) in convs.iter().enumerate() {
        for d in c.decorations {
            let mut words = vec![function(i) + 3];
            words.extend_from_slice(d);
            a.op(DECORATE, &words);
        }
    }
    a.op(TYPE_VOID, &[SF_VOID])
        .op(TYPE_FLOAT, &[SF_FLOAT, 32])
        .op(TYPE_VECTOR, &[SF_V4FLOAT, SF_FLOAT, 4])
        .op(TYPE_INT, &[SF_INT, 32, 0])
        .op(TYPE_INT, &[SF_CHAR, 8, 0])
        .op(TYPE_INT, &[SF_SHORT, 16, 0])
        .op(TYPE_VECTOR, &[SF_V4SHORT, SF_SHORT, 4])
        .op(TYPE_FLOAT, &[SF_E4M3, 8, FP_FLOAT8_E4M3_EXT])
        .op(TYPE_VECTOR, &[SF_V4E4M3, SF_E4M3, 4])
        .op(TYPE_FLOAT, &[SF_E5M2, 8, FP_FLOAT8_E5M2_EXT])
        .op(TYPE_VECTOR, &[SF_V4E5M2, SF_E5M2, 4])
        .op(TYPE_FLOAT, &[SF_BF16, 16, FP_BFLOAT16_KHR])
        .op(TYPE_VECTOR, &[SF_V4BF16, SF_BF16, 4])
        .op(TYPE_FLOAT, &[SF_DOUBLE, 64])
        .op(TYPE_FLOAT, &[SF_HALF, 16]);
    // One OpTypeFunction per operand type, ids from 40.
    let mut fn_types: Vec<u32> = Vec::new();
    for c in convs {
        if !fn_types.contains(&c.operand) {
            fn_types.push(c.operand);
            let id = 40 + fn_types.len() as u32 - 1;
            a.op(TYPE_FUNCTION, &[id, SF_VOID, c.operand]);
        }
    }
    for (i, c) in convs.iter().enumerate() {
        let f = function(i);
        let fn_type = 40 + fn_types.iter().position(|&t| t == c.operand).unwrap() as u32;
        a.op(FUNCTION, &[SF_VOID, f, 0, fn_type])
            .op(FUNCTION_PARAMETER, &[c.operand, f + 1])
            .op(LABEL, &[f + 2])
            .op(c.opcode, &[c.result, f + 3, f + 1])
            .op(RETURN, &[])
            .op(FUNCTION_END, &[]);
    }
    // The header's bound: above every id.
    a.words[3] = function(convs.len());
    a
}

/// `a`'s words with the first occurrence of the sequence `from` replaced by `to` (same length).
fn patched(a: &Asm, from: &[u32], to: &[u32]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let mut words = a.words.clone();
    let at = words
        .windows(from.len())
        .position(|w| w == from)
        .unwrap_or_else(|| panic!("{from:?} not in the module"));
    words[at..at + to.len()].copy_from_slice(to);
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn float8_and_bfloat16_grammar_values() {
    use clconv::spirv::FpEncoding;
    assert_eq!(FpEncoding::BFloat16KHR as u32, FP_BFLOAT16_KHR);
    assert_eq!(FpEncoding::Float8E4M3EXT as u32, FP_FLOAT8_E4M3_EXT);
    assert_eq!(FpEncoding::Float8E5M2EXT as u32, FP_FLOAT8_E5M2_EXT);
    assert_eq!(
        Op::from_opcode(CONVERT_F_TO_BF16_INTEL),
        Some(Op::ConvertFToBF16INTEL)
    );
    assert_eq!(
        Op::from_opcode(CONVERT_BF16_TO_F_INTEL),
        Some(Op::ConvertBF16ToFINTEL)
    );
    assert_eq!(Op::ConvertFToBF16INTEL.name(), "OpConvertFToBF16INTEL");
    // The widths of the extensions' FP Encoding tables, and clconv's types; the values of
    // SPV_EXT_ocp_microscaling_types (SPIRV-Headers' grammar).
    assert_eq!(
        FpEncoding::ALL.map(|e| (e as u32, e.width(), e.scalar_type())),
        [
            (0, 16, ScalarType::BFloat),
            (4214, 8, ScalarType::Fp8E4M3),
            (4215, 8, ScalarType::Fp8E5M2),
            (4223, 6, ScalarType::Fp6E2M3),
            (4224, 6, ScalarType::Fp6E3M2),
            (4225, 4, ScalarType::Fp4E2M1),
            (4226, 8, ScalarType::Fp8E8M0),
        ]
    );
}

/// SPV_EXT_ocp_microscaling_types' types in a module: `OpTypeFloat 4 Float4E2M1EXT` (and the
/// others) read, and `OpFConvert` to and from them is the narrow request (the extension leaves
/// conversions to client APIs; `src/spirv.rs` rule 6). Other conversions of them, and the
/// float8 saturation decoration on them, are typed errors.
#[test]
fn ocp_microscaling_types_in_a_module() {
    use clconv::spirv::FpEncoding::{Float4E2M1EXT, Float6E3M2EXT, Float8UnsignedE8M0EXT};
    const FCONVERT: u32 = Op::FConvert as u32;
    const RTZ: &[u32] = &[FP_ROUNDING_MODE, 1];
    let convs = [
        SmallConv {
            name: "to_e2m1",
            opcode: FCONVERT,
            result: SF_V4E4M3,
            operand: SF_V4FLOAT,
            decorations: &[],
            expected: "convert_fp4e2m1x4(float4)",
        },
        SmallConv {
            name: "to_e2m1_rtz",
            opcode: FCONVERT,
            result: SF_V4E4M3,
            operand: SF_V4FLOAT,
            decorations: &[RTZ],
            expected: "convert_fp4e2m1x4_rtz(float4)",
        },
        SmallConv {
            name: "from_e2m1",
            opcode: FCONVERT,
            result: SF_V4FLOAT,
            operand: SF_V4E4M3,
            decorations: &[],
            expected: "convert_float4(fp4e2m1x4)",
        },
    ];
    let module = small_float_module(&convs);
    let e4m3_type = [(4 << 16) | TYPE_FLOAT, SF_E4M3, 8, FP_FLOAT8_E4M3_EXT];
    for (encoding, width, name) in [
        (Float4E2M1EXT, 4, "fp4e2m1"),
        (Float6E3M2EXT, 6, "fp6e3m2"),
        (Float8UnsignedE8M0EXT, 8, "fp8e8m0"),
    ] {
        let bytes = patched(
            &module,
            &e4m3_type,
            &[e4m3_type[0], SF_E4M3, width, encoding as u32],
        );
        let read = clconv::spirv::Module::parse(&bytes).unwrap_or_else(|e| panic!("{e}"));
        let found: Vec<String> = read
            .conversions(Extensions::default())
            .unwrap()
            .iter()
            .map(|m| m.request.to_string())
            .collect();
        let want: Vec<String> = convs
            .iter()
            .map(|c| c.expected.replace("fp4e2m1", name))
            .collect();
        assert_eq!(found, want, "{encoding}");
    }
    // One instruction at a time: the narrow formats' typed errors.
    let enc = SpirvType::encoded;
    let int = SpirvType::int;
    let e = inst(Op::ConvertSToF, enc(Float4E2M1EXT), int(32))
        .request(Extensions::default())
        .unwrap_err();
    assert!(
        e.to_string().contains("fp4e2m1 converts to and from"),
        "{e}"
    );
    let e = Instruction {
        saturated: true,
        ..inst(Op::FConvert, enc(Float4E2M1EXT), SpirvType::float(32))
    }
    .request(Extensions::default())
    .unwrap_err();
    assert!(
        matches!(e, SpirvError::DecorationNotApplicable { .. }),
        "{e}"
    );
}

/// One instruction at a time: each maps to the request its extension defines.
#[test]
fn float8_and_bfloat16_instructions_map_as_their_extensions_say() {
    use clconv::spirv::FpEncoding::{BFloat16KHR, Float8E4M3EXT, Float8E5M2EXT};
    let float = SpirvType::float;
    let int = SpirvType::int;
    let enc = SpirvType::encoded;
    let parse = |text: &str| Request::parse(text, Extensions::default()).unwrap();
    let map = |i: Instruction| i.request(Extensions::default()).unwrap();
    let fconvert = |result, operand| inst(Op::FConvert, result, operand);
    let cases: Vec<(Instruction, &str)> = vec![
        (
            fconvert(enc(Float8E4M3EXT).vector(4), float(32).vector(4)),
            "convert_fp8e4m3x4(float4)",
        ),
        (
            Instruction {
                saturated: true,
                ..fconvert(enc(Float8E4M3EXT).vector(4), float(32).vector(4))
            },
            "convert_fp8e4m3x4_sat(float4)",
        ),
        (
            Instruction {
                saturated: true,
                rounding: Some(Rounding::Rte),
                ..fconvert(enc(Float8E4M3EXT).vector(4), float(32).vector(4))
            },
            "convert_fp8e4m3x4_sat_rte(float4)",
        ),
        (
            fconvert(enc(Float8E5M2EXT).vector(4), float(32).vector(4)),
            "convert_fp8e5m2x4(float4)",
        ),
        (
            Instruction {
                saturated: true,
                ..fconvert(enc(Float8E5M2EXT), float(64))
            },
            "convert_fp8e5m2_sat(double)",
        ),
        (
            fconvert(enc(Float8E5M2EXT), enc(Float8E4M3EXT)),
            "convert_fp8e5m2(fp8e4m3)",
        ),
        (
            Instruction {
                saturated: true,
                ..inst(
                    Op::ConvertUToF,
                    enc(Float8E4M3EXT).vector(2),
                    int(16).vector(2),
                )
            },
            "convert_fp8e4m3x2_sat(ushort2)",
        ),
        (
            Instruction {
                saturated: true,
                rounding: Some(Rounding::Rtz),
                ..inst(Op::ConvertFToU, int(8), enc(Float8E5M2EXT))
            },
            "convert_uchar_sat_rtz(fp8e5m2)",
        ),
        (
            Instruction {
                rounding: Some(Rounding::Rtp),
                ..fconvert(enc(BFloat16KHR).vector(8), float(32).vector(8))
            },
            "convert_bfloat8_rtp(float8)",
        ),
        (
            fconvert(float(32).vector(3), enc(BFloat16KHR).vector(3)),
            "convert_float3(bfloat3)",
        ),
        // One rounding from the exact value (the module docs say why).
        (
            fconvert(enc(BFloat16KHR), float(64)),
            "convert_bfloat(double)",
        ),
        (
            inst(Op::ConvertFToS, int(32), enc(BFloat16KHR)),
            "convert_int(bfloat)",
        ),
        (
            inst(
                Op::ConvertSToF,
                enc(BFloat16KHR).vector(16),
                int(64).vector(16),
            ),
            "convert_bfloat16(long16)",
        ),
        (
            inst(
                Op::ConvertFToBF16INTEL,
                int(16).vector(4),
                float(32).vector(4),
            ),
            "convert_bfloat4_rte(float4)",
        ),
        (
            Instruction {
                rounding: Some(Rounding::Rte),
                ..inst(Op::ConvertFToBF16INTEL, int(16), float(32))
            },
            "convert_bfloat_rte(float)",
        ),
        (
            inst(
                Op::ConvertBF16ToFINTEL,
                float(32).vector(4),
                int(16).vector(4),
            ),
            "convert_float4(bfloat4)",
        ),
        (
            inst(
                Op::ConvertBF16ToFINTEL,
                float(32).vector(16),
                int(16).vector(16),
            ),
            "convert_float16(bfloat16)",
        ),
    ];
    for (i, expected) in cases {
        assert_eq!(map(i), parse(expected), "{i:?}");
    }
    // Into bfloat16, one rounding from the exact value where SPV_KHR_bfloat16 describes two
    // (through binary32), as the module docs say: 2^24 + 2^16 + 1 is 2^24 + 2^17 in bfloat16
    // (0x4b81), where rounding to binary32 first gives the tie 2^24 + 2^16, then 2^24 (0x4b80).
    let request = map(inst(Op::ConvertSToF, enc(BFloat16KHR), int(32)));
    let mut out = [0u8; 2];
    reference::evaluate(
        &request,
        Layout::Packed,
        &(16_842_753i32).to_le_bytes(),
        &mut out,
    )
    .unwrap();
    assert_eq!(u16::from_le_bytes(out), 0x4b81);
    // The bfloat16 bits read as SPV_INTEL_bfloat16_conversion's OpenCL C built-ins name them.
    assert_eq!(
        map(inst(
            Op::ConvertFToBF16INTEL,
            int(16).vector(4),
            float(32).vector(4)
        )),
        parse("intel_convert_bfloat164_as_ushort4(float4)")
    );

    // What the extensions do not allow: typed errors naming the instruction.
    let err = |i: Instruction| {
        let e = i.request(Extensions::with_fp16()).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("%42") && !text.contains('\n'), "{text}");
        e
    };
    // Saturation of a bfloat16 or half result (SaturatedToLargestFloat8NormalConversionEXT is
    // for 8-bit float results only).
    for result in [enc(BFloat16KHR), float(16)] {
        let e = err(Instruction {
            saturated: true,
            ..fconvert(result, float(32))
        });
        assert!(
            matches!(e, SpirvError::DecorationNotApplicable { .. }),
            "{e}"
        );
    }
    // An 8-bit OpTypeFloat without an encoding.
    let e = err(fconvert(float(8), float(32)));
    assert!(
        matches!(
            e,
            SpirvError::UnsupportedType {
                role: Role::Result,
                ..
            }
        ) && e.to_string().contains("Float8E4M3EXT"),
        "{e}"
    );
    // The INTEL instructions: only nearest even, no saturation, float and 16-bit integers.
    let e = err(Instruction {
        rounding: Some(Rounding::Rtz),
        ..inst(Op::ConvertFToBF16INTEL, int(16), float(32))
    });
    assert!(
        matches!(
            e,
            SpirvError::DecorationNotApplicable {
                op: Op::ConvertFToBF16INTEL,
                ..
            }
        ) && e.to_string().contains("FPRoundingMode RTZ"),
        "{e}"
    );
    let e = err(Instruction {
        saturated: true,
        ..inst(Op::ConvertBF16ToFINTEL, float(32), int(16))
    });
    assert!(
        matches!(e, SpirvError::DecorationNotApplicable { .. }),
        "{e}"
    );
    for (op, result, operand, role) in [
        (Op::ConvertFToBF16INTEL, int(16), float(64), Role::Operand),
        (
            Op::ConvertFToBF16INTEL,
            int(16),
            enc(BFloat16KHR),
            Role::Operand,
        ),
        (Op::ConvertFToBF16INTEL, int(32), float(32), Role::Result),
        (Op::ConvertBF16ToFINTEL, float(16), int(16), Role::Result),
        (Op::ConvertBF16ToFINTEL, float(32), int(8), Role::Operand),
    ] {
        let e = err(inst(op, result, operand));
        assert!(
            matches!(e, SpirvError::UnsupportedType { role: r, .. } if r == role),
            "{e}"
        );
    }
    let e = err(inst(Op::ConvertFToBF16INTEL, float(16), float(32)));
    assert!(
        matches!(
            e,
            SpirvError::OperandKind {
                role: Role::Result,
                ..
            }
        ) && e.to_string().contains("16-bit integer"),
        "{e}"
    );
    let e = err(inst(
        Op::ConvertBF16ToFINTEL,
        float(32).vector(4),
        int(16).vector(2),
    ));
    assert!(matches!(e, SpirvError::ComponentCount { .. }), "{e}");
}

/// Compiles `m` with `spirv::lower` in one operand form and runs it on `src` (the operand's
/// bytes), returning the result's bytes.
fn run_lowered(jit: &mut JITModule, n: usize, m: &spirv::Mapped, src: &[u8]) -> Vec<u8> {
    let (s, d) = (m.request.src(), m.request.dst());
    let f = compile(
        jit,
        n,
        &Lowering::without_isa(),
        &m.instruction,
        &m.request,
        Form::Components,
    );
    let mut padded = vec![0u8; vector_parts(s).1 * 16];
    padded[..src.len()].copy_from_slice(src);
    let mut dst = vec![0u8; vector_parts(d).1 * 16 + 16];
    f(padded.as_ptr(), dst.as_mut_ptr());
    dst.truncate(d.lanes() * d.elem.bytes());
    dst
}

/// The module built word by word: every conversion maps to the request its extension defines,
/// lowers with one `spirv::lower` call and runs bit-exact against the reference (both operand
/// forms, per element and with the host's table); and the values the extensions name come out.
#[test]
fn float8_and_bfloat16_modules_map_and_lower() {
    let bytes = small_float_module(&FLOAT8_CONVERSIONS).bytes();
    let module = Module::parse(&bytes).unwrap();
    // No extension needed: these are not half.
    let found = module.conversions(Extensions::default()).unwrap();
    assert_eq!(found.len(), FLOAT8_CONVERSIONS.len());
    for (m, c) in found.iter().zip(&FLOAT8_CONVERSIONS) {
        assert_eq!(m.function.to_string(), c.name);
        assert_eq!(
            m.request,
            Request::parse(c.expected, Extensions::default()).unwrap(),
            "{}",
            c.name
        );
    }
    // Big-endian: the same.
    let swapped: Vec<u8> = small_float_module(&FLOAT8_CONVERSIONS)
        .words
        .iter()
        .flat_map(|w| w.to_be_bytes())
        .collect();
    assert_eq!(
        Module::parse(&swapped)
            .unwrap()
            .conversions(Extensions::default())
            .unwrap(),
        found
    );

    let host = clconv::target::Target::Host.isa().unwrap();
    let lowerings = [
        ("per element", Lowering::without_isa()),
        (
            "the host table's vector recipes",
            Lowering::for_isa(&*host).unwrap(),
        ),
        (
            "static mode rtz",
            Lowering::without_isa().with_static_mode(Rounding::Rtz),
        ),
    ];
    let mut jit = jit_module();
    let mut n = 0;
    let mut runs = 0;
    for m in &found {
        let (s, d) = (m.request.src(), m.request.dst());
        for (what, lowering) in &lowerings {
            for form in [Form::Components, Form::Parts] {
                n += 1;
                let f = compile(&mut jit, n, lowering, &m.instruction, &m.request, form);
                let elems = element_inputs(s.elem, 256 * s.lanes(), n as u64);
                for chunk in elems.chunks(s.lanes()) {
                    let mut src = vec![0u8; vector_parts(s).1 * 16];
                    let w = s.elem.bytes();
                    for (i, &x) in chunk.iter().enumerate() {
                        src[i * w..(i + 1) * w].copy_from_slice(&x.to_le_bytes()[..w]);
                    }
                    let mut dst = vec![0u8; vector_parts(d).1 * 16 + 16];
                    f(src.as_ptr(), dst.as_mut_ptr());
                    let value = d.lanes() * d.elem.bytes();
                    let mut want = vec![0u8; value];
                    reference::evaluate(
                        &m.request,
                        Layout::Packed,
                        &src[..s.lanes() * w],
                        &mut want,
                    )
                    .unwrap();
                    assert_eq!(
                        dst[..value],
                        want[..],
                        "{} %{} {} ({what}, {form:?}) on {:02x?}",
                        m.function,
                        m.instruction.id,
                        m.request,
                        &src[..s.lanes() * w]
                    );
                    runs += 1;
                }
            }
        }
    }

    // The values the extensions name, through the lowered code.
    let by_name = |name: &str| {
        found
            .iter()
            .find(|m| m.function.to_string() == name)
            .unwrap()
    };
    let floats = |xs: [f32; 4]| -> Vec<u8> { xs.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let big = floats([1.0e5, -1.0e6, f32::INFINITY, f32::NEG_INFINITY]);
    let nan = floats([f32::NAN, -f32::NAN, 1.0, -0.5]);
    // Beyond both formats' range (E5M2's largest finite is 57344, rounding to it below 61440).
    // E4M3 (448 = 0x7e, NaN S.1111.111, 1.0 = 0x38, -0.5 = 0xb0): without the decoration,
    // "out-of-range values and infinity are converted to NaN" ...
    let e4m3 = run_lowered(&mut jit, n + 1, by_name("to_e4m3"), &big);
    assert!(e4m3.iter().all(|b| b & 0x7f == 0x7f), "{e4m3:02x?}");
    // ... with it, to the "largest representable finite value with a matching sign"; NaN stays.
    for (k, name) in ["to_e4m3_sat", "to_e4m3_sat_rte"].into_iter().enumerate() {
        let sat = run_lowered(&mut jit, n + 2 + k, by_name(name), &big);
        assert_eq!(sat, [0x7e, 0xfe, 0x7e, 0xfe], "{name}");
        let kept = run_lowered(&mut jit, n + 4 + k, by_name(name), &nan);
        assert!(
            kept[0] & 0x7f == 0x7f && kept[1] & 0x7f == 0x7f,
            "{name}: {kept:02x?}"
        );
        assert_eq!(kept[2..], [0x38, 0xb0], "{name}");
    }
    // E5M2 (57344 = 0x7b, infinity 0x7c): "infinity with a matching sign" without it.
    let e5m2 = run_lowered(&mut jit, n + 6, by_name("to_e5m2"), &big);
    assert_eq!(e5m2, [0x7c, 0xfc, 0x7c, 0xfc]);
    let sat = run_lowered(&mut jit, n + 7, by_name("to_e5m2_sat_rtz"), &big);
    assert_eq!(sat, [0x7b, 0xfb, 0x7b, 0xfb]);
    // int -> E4M3, saturated: 1000 -> 448.
    let sat = run_lowered(
        &mut jit,
        n + 8,
        by_name("int_to_e4m3_sat"),
        &1000i32.to_le_bytes(),
    );
    assert_eq!(sat, [0x7e]);
    // OpConvertFToBF16INTEL rounds to nearest even: 1 + 2^-8 (0x3f808000) is a tie that goes to
    // 0x3f80, 1 + 3 * 2^-8 (0x3f818000) one that goes to 0x3f82; 1 + 2^-8 + 2^-20 rounds up.
    let ties: Vec<u8> = [0x3f80_8000u32, 0x3f81_8000, 0x3f80_8001, 0xbf80_8000]
        .iter()
        .flat_map(|b| b.to_le_bytes())
        .collect();
    let bf = run_lowered(&mut jit, n + 9, by_name("intel_to_bfloat16"), &ties);
    let bf: Vec<u16> = bf
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(bf, [0x3f80, 0x3f82, 0x3f81, 0xbf80]);
    // The RTZ OpFConvert truncates them all.
    let bf = run_lowered(&mut jit, n + 10, by_name("to_bfloat16_rtz"), &ties);
    let bf: Vec<u16> = bf
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert_eq!(bf, [0x3f80, 0x3f81, 0x3f80, 0xbf80]);
    // OpConvertBF16ToFINTEL pads with zeros: 0x3f81 is 0x3f810000.
    let back = run_lowered(
        &mut jit,
        n + 11,
        by_name("intel_from_bfloat16"),
        &[0x81, 0x3f, 0x80, 0xff, 0xc0, 0x7f, 0x01, 0x00],
    );
    let back: Vec<u32> = back
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(back, [0x3f81_0000, 0xff80_0000, 0x7fc0_0000, 0x0001_0000]);
    show(&format!(
        "\nfloat8/bfloat16 module: {} conversion instructions lowered with spirv::lower ({n} \
         functions: 3 lowerings x 2 operand forms), {runs} runs, bit-exact against the \
         reference\n",
        found.len()
    ));
    // SAFETY: no function of the module is called after this.
    unsafe { jit.free_memory() };
}

/// Malformed modules: typed errors, one line each, naming the instruction; never a panic.
#[test]
fn malformed_float8_and_bfloat16_modules_are_typed_errors() {
    let good = small_float_module(&FLOAT8_CONVERSIONS);
    let e4m3_type = [(4 << 16) | TYPE_FLOAT, SF_E4M3, 8, FP_FLOAT8_E4M3_EXT];
    let check = |bytes: &[u8], what: &str| -> SpirvError {
        read_any(bytes);
        let e = read_err(bytes);
        assert!(!e.to_string().is_empty(), "{what}");
        e
    };
    // An FP Encoding SPIR-V does not define.
    let bytes = patched(&good, &e4m3_type, &[e4m3_type[0], SF_E4M3, 8, 7]);
    let e = check(&bytes, "unknown encoding");
    assert!(
        matches!(
            &e,
            SpirvError::FloatEncoding {
                width: 8,
                encoding: 7,
                at,
                ..
            } if at.id == Some(SF_E4M3)
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with("%9 (OpTypeFloat")
            && text.contains("7 is not an FP Encoding SPIR-V defines")
            && text.contains("Float8E4M3EXT (4214)"),
        "{text}"
    );
    // One SPIR-V defines but clconv has no type for (MXInt8EXT, 4227).
    let bytes = patched(&good, &e4m3_type, &[e4m3_type[0], SF_E4M3, 8, 4227]);
    let e = check(&bytes, "MXInt8EXT");
    assert!(
        matches!(e, SpirvError::FloatEncoding { encoding: 4227, .. })
            && e.to_string().contains("MXInt8EXT"),
        "{e}"
    );
    // An OCP MX encoding at a width it does not have.
    let bytes = patched(&good, &e4m3_type, &[e4m3_type[0], SF_E4M3, 8, 4225]);
    let e = check(&bytes, "Float4E2M1EXT on 8 bits");
    assert!(
        e.to_string()
            .contains("Float4E2M1EXT (SPV_EXT_ocp_microscaling_types) is 4 bits wide, not 8"),
        "{e}"
    );
    // A width the encoding does not have.
    let bytes = patched(
        &good,
        &e4m3_type,
        &[e4m3_type[0], SF_E4M3, 16, FP_FLOAT8_E4M3_EXT],
    );
    let e = check(&bytes, "width");
    assert!(
        matches!(
            e,
            SpirvError::FloatEncoding {
                width: 16,
                encoding: FP_FLOAT8_E4M3_EXT,
                ..
            }
        ) && e
            .to_string()
            .contains("Float8E4M3EXT (SPV_EXT_float8) is 8 bits wide, not 16"),
        "{e}"
    );
    let bf16_type = [(4 << 16) | TYPE_FLOAT, SF_BF16, 16, FP_BFLOAT16_KHR];
    let bytes = patched(
        &good,
        &bf16_type,
        &[bf16_type[0], SF_BF16, 32, FP_BFLOAT16_KHR],
    );
    let e = check(&bytes, "bfloat16 width");
    assert!(
        matches!(
            e,
            SpirvError::FloatEncoding {
                width: 32,
                encoding: 0,
                ..
            }
        ),
        "{e}"
    );

    // SaturatedToLargestFloat8NormalConversionEXT where SPV_EXT_float8 does not allow it: on a
    // bfloat16 result, an integer result (OpConvertFToS), a half result.
    let fconvert = Op::FConvert as u32;
    let misplaced: [(u32, u32, u32); 4] = [
        (fconvert, SF_V4BF16, SF_V4FLOAT),
        (Op::ConvertFToS as u32, SF_CHAR, SF_E4M3),
        (fconvert, SF_HALF, SF_FLOAT),
        (CONVERT_F_TO_BF16_INTEL, SF_V4SHORT, SF_V4FLOAT),
    ];
    for (opcode, result, operand) in misplaced {
        let a = small_float_module(&[SmallConv {
            name: "f",
            opcode,
            result,
            operand,
            decorations: &[&[SATURATED_FLOAT8]],
            expected: "",
        }]);
        let e = check(
            &a.bytes(),
            "misplaced SaturatedToLargestFloat8NormalConversionEXT",
        );
        assert!(
            matches!(
                &e,
                SpirvError::DecorationNotApplicable { id, decoration, .. }
                    if *id == SF_FIRST_FUNCTION + 3
                        && decoration == "SaturatedToLargestFloat8NormalConversionEXT"
            ),
            "{opcode} {result}: {e}"
        );
        assert!(e.to_string().contains("must only be applied to"), "{e}");
    }
    // SaturatedConversion on an 8-bit float result (SPIR-V: for integer results).
    let a = small_float_module(&[SmallConv {
        name: "f",
        opcode: fconvert,
        result: SF_E5M2,
        operand: SF_FLOAT,
        decorations: &[&[SATURATED]],
        expected: "",
    }]);
    let e = check(&a.bytes(), "SaturatedConversion on fp8");
    assert!(
        matches!(
            &e,
            SpirvError::DecorationNotApplicable { decoration, .. } if decoration == "SaturatedConversion"
        ) && e
            .to_string()
            .contains("SaturatedToLargestFloat8NormalConversionEXT"),
        "{e}"
    );
    // The decoration on something that is not a conversion.
    let mut a = small_float_module(&FLOAT8_CONVERSIONS[..1]);
    let at = a
        .words
        .iter()
        .position(|&w| w == (3 << 16) | FUNCTION_PARAMETER)
        .unwrap();
    a.words.splice(
        at..at,
        [
            (3 << 16) | DECORATE,
            SF_FIRST_FUNCTION + 1,
            SATURATED_FLOAT8,
        ],
    );
    // (A decoration before the types is where SPIR-V wants it, but the reader takes it anywhere.)
    let e = check(&a.bytes(), "on a parameter");
    assert!(
        matches!(e, SpirvError::DecorationOnNonConversion { .. })
            && e.to_string()
                .contains("SaturatedToLargestFloat8NormalConversionEXT"),
        "{e}"
    );
}

/// `tests/spirv/float8_conversions.spv` is what `small_float_module` writes for
/// FLOAT8_CONVERSIONS (`CLCONV_WRITE_FIXTURES=1` rewrites it), and reads as they say.
#[test]
fn float8_fixture_is_the_generator_s_module() {
    let bytes = small_float_module(&FLOAT8_CONVERSIONS).bytes();
    let path = format!("{DIR}float8_conversions.spv");
    if std::env::var_os("CLCONV_WRITE_FIXTURES").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    assert!(
        fixture("float8_conversions.spv") == bytes,
        "{path} differs from small_float_module(&FLOAT8_CONVERSIONS): rerun with \
         CLCONV_WRITE_FIXTURES=1 if the generator changed on purpose"
    );
    let items = Module::parse(&bytes)
        .unwrap()
        .items(Extensions::default())
        .unwrap();
    let listed: Vec<(String, String)> = items
        .iter()
        .map(|i| (i.function().to_string(), i.to_string()))
        .collect();
    let expected: Vec<(String, String)> = FLOAT8_CONVERSIONS
        .iter()
        .map(|c| (c.name.to_string(), c.expected.to_string()))
        .collect();
    assert_eq!(listed, expected);
}

/// Every truncation of `float8_conversions.spv`, and every word overwritten with the values
/// the extensions use (encodings, widths, the decoration, the INTEL opcodes) or others, reads
/// as a module or a one-line error: never a panic.
#[test]
fn every_truncation_and_word_overwrite_of_the_float8_module_is_an_error_not_a_panic() {
    let good = fixture("float8_conversions.spv");
    let mut executions = 0;
    for len in 0..good.len() {
        read_any(&good[..len]);
        executions += 1;
    }
    let mut state = 11;
    for word in 0..good.len() / 4 {
        for value in [
            0,
            8,
            16,
            32,
            FP_FLOAT8_E4M3_EXT,
            FP_FLOAT8_E5M2_EXT,
            4223,
            4225,
            4227,
            SATURATED_FLOAT8,
            SATURATED,
            CONVERT_F_TO_BF16_INTEL,
            CONVERT_BF16_TO_F_INTEL,
            (4 << 16) | CONVERT_F_TO_BF16_INTEL,
            (4 << 16) | TYPE_FLOAT,
            SF_E4M3,
            SF_BF16,
            SF_V4SHORT,
            u32::MAX,
            xorshift(&mut state) as u32,
        ] {
            let mut bad = good.clone();
            bad[4 * word..4 * word + 4].copy_from_slice(&value.to_le_bytes());
            read_any(&bad);
            executions += 1;
        }
    }
    show(&format!(
        "\nfloat8_conversions.spv: {executions} truncated and overwritten copies read, no panic\n"
    ));
}
