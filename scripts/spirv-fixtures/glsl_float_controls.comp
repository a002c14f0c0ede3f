#version 450
// SPV_KHR_float_controls through GL_EXT_spirv_intrinsics: RoundingModeRTZ for 16-bit results,
// so f16vec4(vec4), which carries no FPRoundingMode decoration, rounds toward zero
// (clconv::spirv reads convert_half4_rtz(float4)); ivec4(vec4) is GLSL's float -> int.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4468], 4463, 16);
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Halves { f16vec4 halves[]; };
layout(std430, binding = 2) writeonly buffer Ints { ivec4 ints[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    halves[i] = f16vec4(src[i]);
    ints[i] = ivec4(src[i]);
}
