// A Vulkan compute shader with 16-bit float arithmetic types (clconv's SPIR-V reader, issue 27):
// the module declares the Float16 capability, so `clconv spirv` reads its half conversions
// without --fp16. Compiled by generate.sh with glslangValidator -V into
// tests/spirv/glsl_float16.spv.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer Wide { vec4 x[]; };
layout(std430, binding = 1) buffer Half4 { f16vec4 h[]; };
layout(std430, binding = 2) buffer Back { vec4 y[]; };
layout(std430, binding = 3) buffer Half2 { f16vec2 p[]; };
layout(std430, binding = 4) buffer Short2 { i16vec2 s[]; };

void main()
{
    uint i = gl_GlobalInvocationID.x;
    h[i] = f16vec4(x[i]);     // convert_half4(float4): OpFConvert, nearest even
    y[i] = vec4(h[i]);        // convert_float4(half4): exact
    s[i] = i16vec2(p[i]);     // convert_short2(half2): OpConvertFToS, toward zero
}
