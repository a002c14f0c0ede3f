// An HLSL compute shader (glslangValidator -D -V -S comp -e main): OpSource HLSL, so
// clconv::spirv gives its float -> integer conversions Direct3D's ftoi/ftou results (clamp,
// NaN -> 0: OpenCL's _sat) where SPIR-V leaves them undefined.
StructuredBuffer<float4> src : register(t0);
RWStructuredBuffer<int4> ints : register(u1);
RWStructuredBuffer<uint> uints : register(u2);
RWStructuredBuffer<float> floats : register(u3);
[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    ints[id.x] = int4(src[id.x]);
    uints[id.x] = (uint)src[id.x].y;
    floats[id.x] = (float)ints[id.x].z;
}
