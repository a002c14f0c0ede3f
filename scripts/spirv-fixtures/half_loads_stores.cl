// Kernels with the OpenCL C builtins that store float or double as half and load half as float
// (clconv's SPIR-V reader, issue 27). They need no cl_khr_fp16: llvm-spirv declares only the
// Float16Buffer capability and writes each call as an OpenCL.std extended instruction
// (vstore_half_r with its rounding mode, vstore_halfn, vstorea_halfn_r, vload_half,
// vloada_halfn, ...). Compiled by generate.sh with clang and llvm-spirv into
// tests/spirv/half_loads_stores.spv.

// The three directed stores and the load of issue 27.
kernel void store_rtz(global const float *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half_rtz(x[i], i, out);
}

kernel void store_rtp(global const float *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half_rtp(x[i], i, out);
}

kernel void store_rtn(global const float *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half_rtn(x[i], i, out);
}

kernel void load(global const half *h, global float *y)
{
    size_t i = get_global_id(0);
    y[i] = vload_half(i, h);
}

// Every other form: no mode (nearest even), vectors, the aligned forms, double sources.
kernel void store(global const float *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half(x[i], i, out);
}

kernel void store_double_rtz(global const double *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half_rtz(x[i], i, out);
}

kernel void store2(global const float2 *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half2(x[i], i, out);
}

kernel void store4_rte(global const float4 *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half4_rte(x[i], i, out);
}

kernel void store2_double_rtp(global const double2 *x, global half *out)
{
    size_t i = get_global_id(0);
    vstore_half2_rtp(x[i], i, out);
}

kernel void storea3_rtn(global const float3 *x, global half *out)
{
    size_t i = get_global_id(0);
    vstorea_half3_rtn(x[i], i, out);
}

kernel void storea8(global const float8 *x, global half *out)
{
    size_t i = get_global_id(0);
    vstorea_half8(x[i], i, out);
}

kernel void load4(global const half *h, global float4 *y)
{
    size_t i = get_global_id(0);
    y[i] = vload_half4(i, h);
}

kernel void loada3(global const half *h, global float3 *y)
{
    size_t i = get_global_id(0);
    y[i] = vloada_half3(i, h);
}

kernel void load16(global const half *h, global float16 *y)
{
    size_t i = get_global_id(0);
    y[i] = vload_half16(i, h);
}
