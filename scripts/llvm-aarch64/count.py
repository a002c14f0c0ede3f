#!/usr/bin/env python3
"""Instructions per element of LLVM's vectorised loops in loops.c.

Usage: count.py [aarch64|riscv64] [--show]   (standard library only; needs clang on PATH)

Compiles loops.c with `clang --target=aarch64-linux-gnu -march=armv8-a -O3 -S` (riscv64:
`--target=riscv64-linux-gnu -march=rv64gcv1p0 -menable-experimental-extensions -O3
-mllvm -riscv-v-vector-bits-min=128`, fixed 128-bit vectors as clconv's riscv64-v target
uses), then, per function:

- finds its loops: a label that LLVM marks `// =>This Inner Loop Header` (RISC-V: `#`) up to
  the last branch back to it;
- takes the steady-state loop: the one loading the most bytes per iteration (the vectorised
  loop; the scalar remainder loop loads one element);
- elements per iteration = bytes loaded per iteration / the source element's size (the
  function's first parameter type);
- counts its instructions, and among them the loop control: branches, the counter's
  compare/subtract, and pointer increments (an integer add/sub of an immediate to a general
  register; a post-indexed load or store counts as a load or store only, its increment is free).

Prints per function: instructions of the loop, of which loop control, elements per iteration,
and instructions per element without loop control (what REPORT.md's cells count: clconv's
numbers are one block's instructions with the loads and stores, without the loop control)
and with it. `--show` also prints each chosen loop.
"""
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

TARGETS = {
    "aarch64": ["--target=aarch64-linux-gnu", "-march=armv8-a"],
    "riscv64": [
        "--target=riscv64-linux-gnu",
        "-march=rv64gcv1p0",
        "-menable-experimental-extensions",
        "-mllvm",
        "-riscv-v-vector-bits-min=128",
    ],
}

SIZES = {"float": 4, "double": 8, "int32_t": 4, "uint32_t": 4, "int64_t": 8,
         "uint64_t": 8, "int16_t": 2, "uint16_t": 2, "int8_t": 1, "uint8_t": 1}


def source_sizes(text):
    """function name -> source element size, from the LOOP(...) macros and the NEON functions."""
    out = {}
    for m in re.finditer(r"^LOOP\((\w+),\s*(\w+),", text, re.M):
        out[m.group(1)] = SIZES[m.group(2)]
    for m in re.finditer(r"void (\w+)\(const (\w+) \*restrict src", text):
        if m.group(2) in SIZES:
            out[m.group(1)] = SIZES[m.group(2)]
    return out


def functions(asm):
    """name -> list of lines of the function's body."""
    out, name = {}, None
    for line in asm.splitlines():
        m = re.match(r"^(\w+):", line)
        if m and not line.startswith(".") and "@" in line:
            name = m.group(1)
            out[name] = []
        elif name is not None:
            if line.startswith(".Lfunc_end"):
                name = None
            else:
                out[name].append(line)
    return out


def instructions(lines, comment):
    """(label or None, mnemonic, operands) for each line."""
    for line in lines:
        code = line.split(comment, 1)[0].rstrip()
        label = re.match(r"^(\.?\w+):", code)
        if label:
            yield (label.group(1), None, line)
            continue
        s = code.strip()
        if not s or s.startswith("."):
            continue
        parts = s.split(None, 1)
        yield (None, parts[0], parts[1] if len(parts) > 1 else "")


def loops(lines, comment):
    """Each loop: (header label, [(mnemonic, operands)])."""
    items = list(instructions(lines, comment))
    headers = []
    for i, line in enumerate(lines):
        if "Inner Loop Header" in line:
            m = re.match(r"^(\.?\w+):", line)
            if m:
                headers.append(m.group(1))
    out = []
    for h in headers:
        start = next(i for i, it in enumerate(items) if it[0] == h)
        end = None
        for j in range(start + 1, len(items)):
            lab, mn, ops = items[j]
            if mn and re.search(r"(^|[ ,])" + re.escape(h) + r"$", ops):
                end = j
        if end is None:
            continue
        body = [(mn, ops) for lab, mn, ops in items[start:end + 1] if mn]
        out.append((h, body))
    return out


def load_bytes(arch, mn, ops):
    if arch == "aarch64":
        regs = re.findall(r"\b([qdswhbx])(\d+)\b", ops.split("[")[0])
        size = {"q": 16, "d": 8, "s": 4, "w": 4, "x": 8, "h": 2, "b": 1}
        if mn in ("ldr", "ldur", "ldrsw"):
            return size[regs[0][0]] if regs else 0
        if mn in ("ldrb", "ldrsb"):
            return 1
        if mn in ("ldrh", "ldrsh"):
            return 2
        if mn in ("ldp", "ldnp"):
            return 2 * size[regs[0][0]] if regs else 0
        if mn.startswith("ld1") or mn.startswith("ld2"):
            m = re.findall(r"v\d+\.(\d+)([bhsd])", ops)
            lane = {"b": 1, "h": 2, "s": 4, "d": 8}
            return sum(int(n) * lane[t] for n, t in m)
        return 0
    # riscv64: scalar loads, and vector unit-stride loads (VL = 128 bits at SEW).
    if "(sp)" in ops:
        return 0  # a spill reload
    if re.fullmatch(r"l[bhwd]u?", mn):
        return {"b": 1, "h": 2, "w": 4, "d": 8}[mn[1]]
    if re.fullmatch(r"fl[hwd]", mn):
        return {"h": 2, "w": 4, "d": 8}[mn[2]]
    if re.fullmatch(r"vle\d+\.v", mn):  # not vl1r.v: LLVM 14 reloads its spills with it
        return 16
    return 0


def is_control(arch, mn, ops):
    if arch == "aarch64":
        if mn == "b" or mn.startswith("b.") or mn in ("cbz", "cbnz", "tbz", "tbnz"):
            return True
        if mn in ("subs", "adds", "cmp", "cmn") and re.match(r"[xw]\d+|xzr", ops):
            return True
        if mn in ("add", "sub") and re.match(r"x\d+, x\d+, #", ops):
            return True
        if mn == "mov" and re.fullmatch(r"x\d+, x\d+", ops):
            return True
        return False
    if mn in ("j", "bnez", "beqz", "bne", "beq", "blt", "bge", "bltu", "bgeu", "bgt", "ble"):
        return True
    if mn in ("addi", "sub", "add") and re.match(r"[as]\d+|t\d+", ops):
        # pointer and counter updates; vector work never uses these on the integer side
        return True
    if mn.startswith("vsetvli") or mn.startswith("vsetivli"):
        return False
    return False


def main():
    arch = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "aarch64"
    show = "--show" in sys.argv
    src = (HERE / "loops.c").read_text()
    sizes = source_sizes(src)
    asm = subprocess.run(
        ["clang", *TARGETS[arch], "-O3", "-S", "-o", "-", str(HERE / "loops.c")],
        check=True, capture_output=True, text=True).stdout
    if arch == "riscv64":
        asm = asm.replace("# =>This Inner Loop Header", "// =>This Inner Loop Header")
    print(f"| function | loop instructions | loop control | elements/iteration "
          f"| per element | per element with loop control |")
    print("|---|---|---|---|---|---|")
    for name, lines in functions(asm).items():
        if name not in sizes:
            continue
        best = None
        for header, body in loops(lines, "//" if arch == "aarch64" else "#"):
            loaded = sum(load_bytes(arch, mn, ops) for mn, ops in body)
            if best is None or loaded > best[0]:
                best = (loaded, header, body)
        if best is None:
            print(f"| {name} | no loop | | | | |")
            continue
        loaded, header, body = best
        elems = loaded / sizes[name]
        control = sum(is_control(arch, mn, ops) for mn, ops in body)
        total = len(body)
        print(f"| {name} | {total} | {control} | {elems:g} | {(total - control) / elems:.2f} "
              f"| {total / elems:.2f} |")
        if show:
            for mn, ops in body:
                tag = "  (control)" if is_control(arch, mn, ops) else ""
                print(f"    {mn} {ops}{tag}")


if __name__ == "__main__":
    main()
