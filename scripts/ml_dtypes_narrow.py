#!/usr/bin/env python3
"""ml_dtypes' conversions of the narrow formats, for crates/verify/tests/ml_dtypes.rs.

Writes to stdout, for each of float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e4m3fnuz,
float8_e5m2fnuz and float8_e8m0fnu in that order:
  - every code (2^bits of them, the format's own bits) -> float32, as little-endian u32 bits;
  - the float32 inputs hi << 16 | lo (hi = 0..65535, lo in LOW, hi outer) -> the type, one
    byte each;
  - every float16 bit pattern (0..65535) -> the type, one byte each;
  - every bfloat16 bit pattern (0..65535) -> the type, one byte each.
`astype`, ml_dtypes' conversion: round to nearest even, no saturation flag.
"""
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:  # the Rust test reports this and fails
    sys.stderr.write(f"ml_dtypes and numpy are needed ({e}): python3 -m pip install ml_dtypes\n")
    sys.exit(3)

LOW = [0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF]
TYPES = [
    (ml_dtypes.float4_e2m1fn, 4),
    (ml_dtypes.float6_e2m3fn, 6),
    (ml_dtypes.float6_e3m2fn, 6),
    (ml_dtypes.float8_e4m3fnuz, 8),
    (ml_dtypes.float8_e5m2fnuz, 8),
    (ml_dtypes.float8_e8m0fnu, 8),
]

hi = np.arange(65536, dtype=np.uint32)
floats = ((hi[:, None] << 16) | np.array(LOW, dtype=np.uint32)[None, :]).reshape(-1)
floats = floats.view(np.float32)
patterns = np.arange(65536, dtype=np.uint16)
halves = patterns.view(np.float16)
bfloats = patterns.view(ml_dtypes.bfloat16)

out = sys.stdout.buffer
out.write(ml_dtypes.__version__.encode() + b"\n")
with np.errstate(all="ignore"):
    for t, bits in TYPES:
        codes = np.arange(1 << bits, dtype=np.uint8).view(t)
        out.write(codes.astype(np.float32).view(np.uint32).astype("<u4").tobytes())
        out.write(floats.astype(t).view(np.uint8).tobytes())
        out.write(halves.astype(t).view(np.uint8).tobytes())
        out.write(bfloats.astype(t).view(np.uint8).tobytes())
