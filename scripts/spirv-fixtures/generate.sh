#!/usr/bin/env bash
# Regenerates the SPIR-V fixtures in tests/spirv/ with the real toolchains: clang (OpenCL C to
# LLVM IR for spir64) and llvm-spirv (LLVM IR to SPIR-V), and glslang (GLSL compute shaders to
# Vulkan SPIR-V). The modules are committed, so the tests need none of these tools; run this
# only to refresh them.
#
#   apt-get install -y clang-14 llvm-spirv-14 spirv-tools glslang-tools   # Debian 12
#   scripts/spirv-fixtures/generate.sh
#
# What it writes:
# - tests/spirv/from_<type>.spv: one function per conversion from <type>, 570 each, 6,270 in
#   all (gen.py writes the OpenCL C; half through cl_khr_fp16, double through cl_khr_fp64),
#   compiled at -O0 so that nothing but the front end and llvm-spirv decides what each
#   convert_* call becomes.
# - tests/spirv/manifest.tsv: module, function name, the request its OpenCL C source named.
# - tests/spirv/kernels.spv: the realistic kernels of kernels.cl, compiled at -O2 as a user
#   would ship them.
# - tests/spirv/half_loads_stores.spv: half_loads_stores.cl at -O2, every OpenCL.std
#   vstore_half*, vstorea_half*, vload_half* and vloada_half* extended instruction.
# - tests/spirv/glsl_float16.spv, glsl_storage16.spv: the compute shaders glsl_float16.comp
#   (the Float16 capability) and glsl_storage16.comp (StorageBuffer16BitAccess only), by
#   glslangValidator -V.
# - tests/spirv/glsl_float_controls.spv, glsl_flush.spv: float-controls execution modes
#   (RoundingModeRTZ, DenormFlushToZero for 16-bit floats) through GL_EXT_spirv_intrinsics.
# - tests/spirv/hlsl_conversions.spv: an HLSL compute shader (OpSource HLSL), by
#   glslangValidator -D.
# - tests/spirv/TOOLS.txt: the tool versions that made them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../../tests/spirv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

find_tool() {
    for candidate in "$@"; do
        if command -v "$candidate" >/dev/null 2>&1; then
            command -v "$candidate"
            return
        fi
    done
    echo "generate.sh: none of $* found; install clang, llvm-spirv-14 and spirv-tools" >&2
    exit 1
}
CLANG="${CLANG:-$(find_tool clang-14 clang)}"
LLVM_SPIRV="${LLVM_SPIRV:-$(find_tool llvm-spirv-14 llvm-spirv /usr/lib/llvm-14/bin/llvm-spirv)}"
GLSLANG="${GLSLANG:-$(find_tool glslangValidator)}"
SPIRV_VAL="$(command -v spirv-val || true)"

compile() { # source.cl opt-level out.spv
    "$CLANG" -cl-std=CL1.2 -target spir64 "-$2" -Xclang -finclude-default-header \
        -emit-llvm -c "$1" -o "$work/module.bc"
    "$LLVM_SPIRV" "$work/module.bc" -o "$3"
    if [ -n "$SPIRV_VAL" ]; then
        "$SPIRV_VAL" "$3"
    fi
}

mkdir -p "$out"
python3 "$here/gen.py" "$work/src" "$out/manifest.tsv"
for source in "$work"/src/*.cl; do
    name="$(basename "$source" .cl)"
    compile "$source" O0 "$out/$name.spv"
done
compile "$here/kernels.cl" O2 "$out/kernels.spv"
compile "$here/half_loads_stores.cl" O2 "$out/half_loads_stores.spv"
for shader in glsl_float16 glsl_storage16 glsl_float_controls glsl_flush; do
    "$GLSLANG" -V "$here/$shader.comp" -o "$out/$shader.spv"
    if [ -n "$SPIRV_VAL" ]; then
        "$SPIRV_VAL" --target-env vulkan1.1 "$out/$shader.spv"
    fi
done
"$GLSLANG" -D -V -S comp -e main "$here/hlsl_conversions.hlsl" -o "$out/hlsl_conversions.spv"

{
    echo "# The tools that generated the modules in this directory (scripts/spirv-fixtures/generate.sh)."
    "$CLANG" --version | head -n 1
    echo "llvm-spirv: $("$LLVM_SPIRV" --version | grep -i 'version' | head -n 1 | sed 's/^ *//')"
    if command -v dpkg-query >/dev/null 2>&1; then
        dpkg-query -W -f '${Package} ${Version}\n' clang-14 llvm-spirv-14 spirv-tools glslang-tools 2>/dev/null || true
    fi
    if [ -n "$SPIRV_VAL" ]; then "$SPIRV_VAL" --version | head -n 1; fi
    echo "glslang: $("$GLSLANG" --version | head -n 1)"
} >"$out/TOOLS.txt"
ls -l "$out"
