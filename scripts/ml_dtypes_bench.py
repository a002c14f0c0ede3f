#!/usr/bin/env python3
"""ml_dtypes' astype throughput, for benches/formats.rs (the narrow formats have no Rust peer).

Usage: ml_dtypes_bench.py CONVERSION BYTES ROUNDS, CONVERSION one of f32_to_e2m1, e2m1_to_f32,
e2m3_to_f32, f32_to_e4m3fnuz, e4m3fnuz_to_f32, f32_to_mxfp8e4m3, f32_to_mxfp4; BYTES the source's size. The
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
if conversion.startswith("f32_to_"):
    n = size // 4
    src = rng.uniform(-8.0, 8.0, n).astype(np.float32)
    dst_t = {"f32_to_e2m1": ml_dtypes.float4_e2m1fn, "f32_to_e4m3fnuz": ml_dtypes.float8_e4m3fnuz}[
        conversion
    ]
    traffic = n * 4 + n
else:
    n = size
    codes = (
        np.arange(n) % {"e2m1_to_f32": 16, "e2m3_to_f32": 64, "e4m3fnuz_to_f32": 256}[conversion]
    ).astype(np.uint8)
    src = codes.view(
        {
            "e2m1_to_f32": ml_dtypes.float4_e2m1fn,
            "e2m3_to_f32": ml_dtypes.float6_e2m3fn,
            "e4m3fnuz_to_f32": ml_dtypes.float8_e4m3fnuz,
        }[conversion]
    )
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
