use clconv::arith::ArithRequest;
use clconv::jit::{Jit, X64Flags};
use clconv::{Extensions, Layout, Rounding};
fn main() {
    for flags in [X64Flags::Host, X64Flags::Sse41] {
        let jit = Jit::with_options(flags, Extensions::default(), Rounding::Rte).unwrap();
        for op in ["add", "sub", "mul", "div", "sqrt", "fma"] {
            for ty in ["float", "float4", "double", "double2"] {
                let mut line = format!("{:7} {:5} {:8}", flags.name(), op, ty);
                for m in ["rte", "rtz", "rtp", "rtn"] {
                    let r = ArithRequest::parse(&format!("{op}_{m}({ty})")).unwrap();
                    let d = jit.disassemble_arith(&r, Layout::Packed).unwrap();
                    let calls = d.asm.matches("call").count();
                    line += &format!(
                        " {m}:{:5}B/{:3}i/{}c",
                        d.code_size,
                        d.asm.lines().count(),
                        calls
                    );
                }
                println!("{line}");
            }
        }
    }
}
