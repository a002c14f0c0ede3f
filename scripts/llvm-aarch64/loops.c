/* LLVM's code for clconv's benchmark conversions, as a C programmer would write the loops.
 *
 * Each conversion has up to three versions (the suffix says which):
 *   _c     portable C, exact to OpenCL in the default rounding mode (round to nearest even):
 *          saturation and NaN -> 0 written as compares, ties to even with rintf/rint, directed
 *          int -> float and double -> float as the nearest-even conversion stepped one ulp on
 *          its bits where converting back shows it went the wrong way;
 *   _neon  arm_neon.h intrinsics where NEON has the conversion (FCVTNS/FCVTNU/FCVTZS/...,
 *          SQXTUN/UQXTN); only compiled for AArch64;
 *   _fenv  the plain C cast, for the directed modes: correct only when the caller has set the
 *          rounding mode (fesetround) around the call. Clang 14 ignores
 *          `#pragma STDC FENV_ACCESS ON` on AArch64 and RISC-V (a warning), so this is the
 *          nearest-even code run in the mode, which check.c confirms gives the mode's result:
 *          what clconv's batch kernels could do by setting FPCR in their entry point.
 *
 * count.py compiles this with clang -O3 for AArch64 (and RISC-V with V) and counts the
 * instructions of each function's vectorised loop per element; check.c runs every version
 * against a scalar reference under QEMU.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

static inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t dbits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static inline double bitsd(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

#define LOOP(name, S, D, body)                                                   \
    void name(const S *restrict src, D *restrict dst, long n) {                  \
        for (long i = 0; i < n; i++) {                                           \
            S x = src[i];                                                        \
            body                                                                 \
        }                                                                        \
    }

/* 1. convert_int4_sat_rte(float4) */
LOOP(int_sat_rte_float_c, float, int32_t, {
    float r = rintf(x);
    dst[i] = r != r ? 0 : r >= 0x1p31f ? INT32_MAX : r <= -0x1p31f ? INT32_MIN : (int32_t)r;
})

/* 2. convert_uchar4_sat_rte(float4) */
LOOP(uchar_sat_rte_float_c, float, uint8_t, {
    float r = rintf(x);
    dst[i] = r > 0 ? (r < 255.0f ? (uint8_t)r : 255) : 0; /* NaN: r > 0 is false */
})

/* 3. convert_int4(float4): rtz; clconv defines out-of-range and NaN as _sat does */
LOOP(int_float_c, float, int32_t, {
    dst[i] = x != x ? 0 : x >= 0x1p31f ? INT32_MAX : x <= -0x1p31f ? INT32_MIN : (int32_t)x;
})

/* 4. convert_float4_rtp(int4) */
LOOP(float_rtp_int_c, int32_t, float, {
    float f = (float)x;
    /* f converted back (2^31 -> INT32_MAX, which is >= x: no step then) */
    int32_t t = f >= 0x1p31f ? INT32_MAX : (int32_t)f;
    uint32_t b = fbits(f);
    if (t < x) b += f < 0 ? (uint32_t)-1 : 1u; /* one ulp up: toward zero for negatives */
    dst[i] = bitsf(b);
})
LOOP(float_rtp_int_fenv, int32_t, float, { dst[i] = (float)x; })

/* 5. convert_float2_rtz(double2) (and convert_float4_rtz(double4)) */
LOOP(float_rtz_double_c, double, float, {
    float f = (float)x;
    uint32_t b = fbits(f);
    if (fabs((double)f) > fabs(x)) b -= 1; /* went away from zero: one ulp back (inf -> MAX) */
    dst[i] = bitsf(b);
})
LOOP(float_rtz_double_fenv, double, float, { dst[i] = (float)x; })

/* 6. convert_double2(long2) */
LOOP(double_long_c, int64_t, double, { dst[i] = (double)x; })

/* 7. convert_float4(uint4) */
LOOP(float_uint_c, uint32_t, float, { dst[i] = (float)x; })

/* 8. convert_uchar8_sat(short8) */
LOOP(uchar_sat_short_c, int16_t, uint8_t, {
    dst[i] = x < 0 ? 0 : x > 255 ? 255 : (uint8_t)x;
})

/* 9. convert_char4(int4): the low bits */
LOOP(char_int_c, int32_t, int8_t, { dst[i] = (int8_t)x; })

/* 10. convert_float2_rtn(ulong2) */
LOOP(float_rtn_ulong_c, uint64_t, float, {
    float f = (float)x;
    int above = f >= 0x1p64f || (uint64_t)f > x;
    dst[i] = bitsf(fbits(f) - (uint32_t)above); /* f > 0 wherever above */
})
LOOP(float_rtn_ulong_fenv, uint64_t, float, { dst[i] = (float)x; })

/* 11. convert_long4_sat_rte(float4) */
LOOP(long_sat_rte_float_c, float, int64_t, {
    float r = rintf(x);
    dst[i] = r != r ? 0 : r >= 0x1p63f ? INT64_MAX : r <= -0x1p63f ? INT64_MIN : (int64_t)r;
})

/* 12. convert_float4_rtp(long4) */
LOOP(float_rtp_long_c, int64_t, float, {
    float f = (float)x;
    int below = f < 0x1p63f && (int64_t)f < x; /* f >= -2^63 always */
    uint32_t b = fbits(f);
    if (below) b += f < 0 ? (uint32_t)-1 : 1u;
    dst[i] = bitsf(b);
})
LOOP(float_rtp_long_fenv, int64_t, float, { dst[i] = (float)x; })

/* 13. convert_double4_rtp(long4) */
LOOP(double_rtp_long_c, int64_t, double, {
    double f = (double)x;
    int below = f < 0x1p63 && (int64_t)f < x;
    uint64_t b = dbits(f);
    if (below) b += f < 0 ? (uint64_t)-1 : 1u;
    dst[i] = bitsd(b);
})
LOOP(double_rtp_long_fenv, int64_t, double, { dst[i] = (double)x; })

#if defined(__aarch64__)
/* NEON versions: the vector loop by hand, the tail by the _c loop. */
void int_sat_rte_float_neon(const float *restrict src, int32_t *restrict dst, long n) {
    long i = 0;
    for (; i + 4 <= n; i += 4) vst1q_s32(dst + i, vcvtnq_s32_f32(vld1q_f32(src + i)));
    int_sat_rte_float_c(src + i, dst + i, n - i);
}

void uchar_sat_rte_float_neon(const float *restrict src, uint8_t *restrict dst, long n) {
    long i = 0;
    for (; i + 16 <= n; i += 16) {
        uint16x8_t lo = vcombine_u16(vqmovn_u32(vcvtnq_u32_f32(vld1q_f32(src + i))),
                                     vqmovn_u32(vcvtnq_u32_f32(vld1q_f32(src + i + 4))));
        uint16x8_t hi = vcombine_u16(vqmovn_u32(vcvtnq_u32_f32(vld1q_f32(src + i + 8))),
                                     vqmovn_u32(vcvtnq_u32_f32(vld1q_f32(src + i + 12))));
        vst1q_u8(dst + i, vcombine_u8(vqmovn_u16(lo), vqmovn_u16(hi)));
    }
    uchar_sat_rte_float_c(src + i, dst + i, n - i);
}

void int_float_neon(const float *restrict src, int32_t *restrict dst, long n) {
    long i = 0;
    for (; i + 4 <= n; i += 4) vst1q_s32(dst + i, vcvtq_s32_f32(vld1q_f32(src + i)));
    int_float_c(src + i, dst + i, n - i);
}

void uchar_sat_short_neon(const int16_t *restrict src, uint8_t *restrict dst, long n) {
    long i = 0;
    for (; i + 16 <= n; i += 16)
        vst1q_u8(dst + i, vcombine_u8(vqmovun_s16(vld1q_s16(src + i)),
                                      vqmovun_s16(vld1q_s16(src + i + 8))));
    uchar_sat_short_c(src + i, dst + i, n - i);
}

void long_sat_rte_float_neon(const float *restrict src, int64_t *restrict dst, long n) {
    long i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t x = vld1q_f32(src + i);
        vst1q_s64(dst + i, vcvtnq_s64_f64(vcvt_f64_f32(vget_low_f32(x))));
        vst1q_s64(dst + i + 2, vcvtnq_s64_f64(vcvt_high_f64_f32(x)));
    }
    long_sat_rte_float_c(src + i, dst + i, n - i);
}
#endif
