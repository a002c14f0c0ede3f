/* Every one of the 2^32 inputs of clconv's aarch64 int/uint -> float kernels in rtz, rtp, rtn
 * (the `fpcr` rows: one scvtf/ucvtf rounding by FPCR.RMode, which the entry point sets), run
 * under qemu-aarch64 and compared with an oracle computed independently of FPCR: the exact
 * double, its nearest-even float, one ulp's step by comparing the two (every int is exact in
 * a double; the process itself runs in the default FPCR, nearest-even).
 *
 * Built and run by run.sh; prints one line per kernel: inputs, mismatches, the first few.
 * `check K` checks kernel K on every input; `check K MODE C` checks it against MODE's oracle
 * on the 16 * 2^20 inputs from C * 2^20 on (run.sh's self-test: another mode's must fail). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "k.h"

enum { RTZ, RTP, RTN };

static float oracle(int64_t x, int mode) {
    double d = (double)x;
    float f = (float)d;
    double fd = f;
    if (mode == RTP && fd < d) f = nextafterf(f, INFINITY);
    if (mode == RTN && fd > d) f = nextafterf(f, -INFINITY);
    if (mode == RTZ && fabs(fd) > fabs(d)) f = nextafterf(f, 0.0f);
    return f;
}

typedef void (*kernel_fn)(const void *, void *, size_t);

int main(int argc, char **argv) {
    struct { const char *name; kernel_fn f; int is_signed; int mode; } ks[] = {
        {"convert_float_rtz(int)", (kernel_fn)clconv_convert_float_rtz_int, 1, RTZ},
        {"convert_float_rtp(int)", (kernel_fn)clconv_convert_float_rtp_int, 1, RTP},
        {"convert_float_rtn(int)", (kernel_fn)clconv_convert_float_rtn_int, 1, RTN},
        {"convert_float_rtz(uint)", (kernel_fn)clconv_convert_float_rtz_uint, 0, RTZ},
        {"convert_float_rtp(uint)", (kernel_fn)clconv_convert_float_rtp_uint, 0, RTP},
        {"convert_float_rtn(uint)", (kernel_fn)clconv_convert_float_rtn_uint, 0, RTN},
    };
    int which = argc > 1 ? atoi(argv[1]) : 0;
    int mode = argc > 2 ? atoi(argv[2]) : ks[which].mode;
    uint64_t begin = argc > 3 ? (uint64_t)atoi(argv[3]) << 20 : 0;
    uint64_t end = argc > 3 ? begin + (16ull << 20) : 1ull << 32;
    const size_t chunk = 1 << 20;
    uint32_t *src = malloc(chunk * 4);
    float *dst = malloc(chunk * 4);
    uint64_t mismatches = 0, inputs = 0;
    for (uint64_t base = begin; base < end; base += chunk) {
        for (size_t i = 0; i < chunk; i++) src[i] = (uint32_t)(base + i);
        ks[which].f(src, dst, chunk);
        for (size_t i = 0; i < chunk; i++) {
            int64_t x = ks[which].is_signed ? (int64_t)(int32_t)src[i] : (int64_t)src[i];
            float want = oracle(x, mode);
            uint32_t w, g;
            memcpy(&w, &want, 4);
            memcpy(&g, &dst[i], 4);
            if (w != g && mismatches++ < 5)
                printf("  %s: input 0x%08x: expected 0x%08x, got 0x%08x\n", ks[which].name,
                       src[i], w, g);
        }
        inputs += chunk;
    }
    printf("%s: %llu inputs, %llu mismatches\n", ks[which].name, (unsigned long long)inputs,
           (unsigned long long)mismatches);
    return mismatches != 0;
}
