// A Vulkan compute shader with 16-bit storage only (GL_EXT_shader_16bit_storage): the module
// declares StorageBuffer16BitAccess, not Float16, and still converts half to and from float
// (SPV_KHR_16bit_storage allows exactly that; spirv-val --target-env vulkan1.1 accepts it).
// Compiled by generate.sh with glslangValidator -V into tests/spirv/glsl_storage16.spv.
#version 450
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer Half4 { f16vec4 h[]; };
layout(std430, binding = 1) buffer Wide { vec4 y[]; };

void main()
{
    uint i = gl_GlobalInvocationID.x;
    y[i] = vec4(h[i]);            // convert_float4(half4)
    h[i + 1] = f16vec4(y[i]);     // convert_half4(float4)
}
