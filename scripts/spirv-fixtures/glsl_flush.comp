#version 450
// DenormFlushToZero for 16-bit floats (SPV_KHR_float_controls): clconv keeps subnormals, so
// clconv::spirv refuses the module's half conversion with a typed error naming the mode.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4465], 4460, 16);
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Halves { f16vec4 halves[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    halves[i] = f16vec4(src[i]);
}
