#!/usr/bin/env bash
# Every input of the aarch64 int/uint -> float rtz/rtp/rtn kernels under qemu-aarch64
# (VERIFICATION.md): the fpcr rows (batch kernels, rounding by FPCR.RMode) by default, the rows
# code lowered into a caller's function takes with `--without-rounding-control`.
# Needs qemu-user, gcc-aarch64-linux-gnu and libc6-dev-arm64-cross; about 7 minutes on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
cd "$here/../.."
cargo run -q -p clconv-cli -- emit \
    'convert_float_rtz(int)' 'convert_float_rtp(int)' 'convert_float_rtn(int)' \
    'convert_float_rtz(uint)' 'convert_float_rtp(uint)' 'convert_float_rtn(uint)' \
    --target aarch64 -o "$work/k.o" --header "$work/k.h" "$@" > /dev/null
aarch64-linux-gnu-gcc -O2 -static -I"$work" "$here/int_to_float.c" "$work/k.o" -lm -o "$work/check"
# Self-test: the rtp kernel against the rtz oracle must report mismatches.
if qemu-aarch64 "$work/check" 1 0 128 > /dev/null; then
    echo "self-test failed: a kernel checked against another mode's oracle passed" >&2
    exit 1
fi
status=0
for pair in "0 1" "2 3" "4 5"; do
    set -- $pair
    qemu-aarch64 "$work/check" "$1" & a=$!
    qemu-aarch64 "$work/check" "$2" & b=$!
    wait $a || status=1
    wait $b || status=1
done
rm -rf "$work"
exit $status
