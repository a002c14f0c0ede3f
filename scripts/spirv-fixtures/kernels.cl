// Realistic kernels for clconv's SPIR-V reader (tests/spirv.rs, the README's `clconv spirv`).
// Compiled by generate.sh with clang and llvm-spirv into tests/spirv/kernels.spv.

// Colour pack: linear RGBA in [0, 1] to 8-bit RGBA, rounded to nearest even and clamped.
kernel void pack_rgba(global const float4 *rgba, global uchar4 *out)
{
    size_t i = get_global_id(0);
    out[i] = convert_uchar4_sat_rte(rgba[i] * 255.0f);
}

// The same, packed into one 32-bit word per pixel (R in the low byte).
kernel void pack_rgba_u32(global const float4 *rgba, global uint *out)
{
    size_t i = get_global_id(0);
    out[i] = as_uint(convert_uchar4_sat_rte(rgba[i] * 255.0f));
}

// int8 quantiser: symmetric per-tensor scale, round to nearest even, clamp to [-128, 127].
kernel void quantise_int8(global const float8 *x, global char8 *q, float inv_scale)
{
    size_t i = get_global_id(0);
    q[i] = convert_char8_sat_rte(x[i] * inv_scale);
}

// ... and back.
kernel void dequantise_int8(global const char8 *q, global float8 *x, float scale)
{
    size_t i = get_global_id(0);
    x[i] = convert_float8(q[i]) * scale;
}

// A layer's epilogue: int32 accumulators shifted down and saturated to int8.
kernel void requantise(global const int4 *acc, global char4 *q, int shift)
{
    size_t i = get_global_id(0);
    q[i] = convert_char4_sat(acc[i] >> shift);
}

// A vstore_half_rtz user: 16-bit PCM samples scaled to half precision, rounded toward zero.
kernel void pcm_to_half(global const short *pcm, global half *out, float gain)
{
    size_t i = get_global_id(0);
    vstore_half_rtz(convert_float(pcm[i]) * gain, i, out);
}

// A float -> half -> float round trip the rtz way with the conversion builtins (cl_khr_fp16).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void truncate_to_half(global const float4 *x, global half4 *h)
{
    size_t i = get_global_id(0);
    h[i] = convert_half4_rtz(x[i]);
}

// A radix sort's key: float bits flipped so that unsigned order is numeric order (as_uint);
// adding +0.0f first gives -0.0f and +0.0f one key.
kernel void sort_key(global const float *x, global uint *key)
{
    size_t i = get_global_id(0);
    uint bits = as_uint(x[i] + 0.0f);
    key[i] = bits ^ ((bits >> 31) != 0 ? 0xffffffffu : 0x80000000u);
}
