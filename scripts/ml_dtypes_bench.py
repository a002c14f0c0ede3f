#!/usr/bin/env python3
"""ml_dtypes' astype throughput, for benches/formats.rs (the narrow formats have no Rust peer).

Usage: ml_dtypes_bench.py CONVERSION BYTES ROUNDS, CONVERSION one of f32_to_F and F_to_f32 for F
in e2m1, e2m3, e3m2, e4m3fnuz, e5m2fnuz, e8m0, or f32_to_mxfp8e4m3, f32_to_mxfp4; BYTES the
source's size. The
MX ones quantise blocks of 32 as a numpy user writes it (OCP's scale from each block's largest
magnitude, the elements by ml_dtypes' astype after clipping), one scale byte per block. Prints one line: the median over
ROUNDS of the GB/s of bytes read plus written by `astype` on one thread (numpy's own loop), from
the same kind of inputs the Rust bench uses (floats uniform in [-8, 8]; every code in turn).
"""
import sys
import time

import ml_dtypes
import numpy as np

conversion, size, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(1)


def mx_quantize(x, emax, largest, dtype):
    """OCP MX: the scale 2^(floor(log2 amax) - emax), clamped to 2^-127; elements clipped."""
    blocks = x.reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    code = np.maximum((amax.view(np.uint32) >> 23).astype(np.int32) - emax, 0)
    factor = ((254 - code).astype(np.uint32) << 23).view(np.float32)
    elements = np.clip(blocks * factor[:, None], -largest, largest).astype(dtype)
    return elements, code.astype(np.uint8)


if conversion.startswith("f32_to_mx"):
    n = size // 4 // 32 * 32
    src = rng.uniform(-8.0, 8.0, n).astype(np.float32)
    emax, largest, dtype = {
        "f32_to_mxfp8e4m3": (8, 448.0, ml_dtypes.float8_e4m3fn),
        "f32_to_mxfp4": (2, 6.0, ml_dtypes.float4_e2m1fn),
    }[conversion]
    traffic = n * 4 + n + n // 32
    reps = max(1, (64 << 20) // max(traffic, 1) // 8)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(reps):
            mx_quantize(src, emax, largest, dtype)
        times.append((time.perf_counter() - start) / reps)
    times.sort()
    print(f"{traffic / times[len(times) // 2] / 1e9:.4f}")
    sys.exit(0)
# The element formats: ml_dtypes' type and how many codes it has (one per byte).
FORMATS = {
    "e2m1": (ml_dtypes.float4_e2m1fn, 16),
    "e2m3": (ml_dtypes.float6_e2m3fn, 64),
    "e3m2": (ml_dtypes.float6_e3m2fn, 64),
    "e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 256),
    "e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 256),
    "e8m0": (ml_dtypes.float8_e8m0fnu, 256),
}
if conversion.startswith("f32_to_"):
    n = size // 4
    src = rng.uniform(-8.0, 8.0, n).astype(np.float32)
    dst_t = FORMATS[conversion[len("f32_to_"):]][0]
    traffic = n * 4 + n
else:
    n = size
    dtype, codes = FORMATS[conversion[: -len("_to_f32")]]
    src = (np.arange(n) % codes).astype(np.uint8).view(dtype)
    dst_t = np.float32
    traffic = n + n * 4
reps = max(1, (64 << 20) // max(traffic, 1) // 8)
times = []
for _ in range(rounds):
    start = time.perf_counter()
    for _ in range(reps):
        src.astype(dst_t)
    times.append((time.perf_counter() - start) / reps)
times.sort()
print(f"{traffic / times[len(times) // 2] / 1e9:.4f}")
