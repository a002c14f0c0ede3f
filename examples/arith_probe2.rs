use clconv::arith::ArithRequest;
use clconv::jit::{Jit, X64Flags};
use clconv::{Extensions, Layout, Rounding};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flags = if args[2] == "sse" {
        X64Flags::Sse41
    } else {
        X64Flags::Host
    };
    let jit = Jit::with_options(flags, Extensions::default(), Rounding::Rte).unwrap();
    let r = ArithRequest::parse(&args[1]).unwrap();
    let d = jit.disassemble_arith(&r, Layout::Packed).unwrap();
    println!("{}", d.asm);
}
