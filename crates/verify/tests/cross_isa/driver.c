/* The cross-ISA driver: runs clconv's AOT entry points on an input file under QEMU and writes
 * every destination to an output file, for clconv_verify::cross to compare with the reference.
 *
 *     driver INPUT OUTPUT FIRST END
 *
 * For each kernel FIRST <= k < END of the table (table.c) and each of its calls, in order:
 * copies `count` source values from its offset in INPUT so that they end exactly at an
 * inaccessible page (a read past them faults), fills a destination that starts one byte off
 * alignment and 16 guard bytes on either side with 0xa5, calls the kernel, checks that the
 * source is unchanged (exit status 3 otherwise) and appends guard, destination and guard to
 * OUTPUT. Only bytes move: elements stay little-endian on every target, as clconv's buffers
 * are. Exit status 0 when every call returned; 2 for bad arguments or I/O errors. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver.h"

#define GUARD 16
#define FILL 0xa5

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "driver: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) fail("cannot open", path);
    if (fseek(f, 0, SEEK_END) != 0) fail("cannot seek", path);
    long size = ftell(f);
    if (size < 0) fail("cannot tell", path);
    rewind(f);
    unsigned char *bytes = malloc((size_t)size + 1);
    if (!bytes) fail("out of memory", NULL);
    if (fread(bytes, 1, (size_t)size, f) != (size_t)size) fail("cannot read", path);
    fclose(f);
    *len = (size_t)size;
    return bytes;
}

int main(int argc, char **argv) {
    if (argc != 5) fail("usage", "driver INPUT OUTPUT FIRST END");
    size_t input_len;
    unsigned char *input = read_file(argv[1], &input_len);
    size_t first = strtoul(argv[3], NULL, 10), end = strtoul(argv[4], NULL, 10);
    if (first > end || end > N_KERNELS) fail("kernel range out of the table", argv[4]);

    size_t max_src = 0, max_dst = 0;
    for (size_t k = first; k < end; k++) {
        const struct kernel *kn = &KERNELS[k];
        for (size_t c = 0; c < kn->ncalls; c++) {
            size_t s = kn->counts[c] * kn->src_bytes, d = kn->counts[c] * kn->dst_bytes;
            if (kn->src_offset + s > input_len) fail("source past the input's end", kn->name);
            if (s > max_src) max_src = s;
            if (d > max_dst) max_dst = d;
        }
    }

    /* The source area: whole pages, then one inaccessible page. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t area = (max_src + page - 1) / page * page;
    unsigned char *src_area = mmap(NULL, area + page, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (src_area == MAP_FAILED) fail("mmap failed", NULL);
    if (mprotect(src_area + area, page, PROT_NONE) != 0) fail("mprotect failed", NULL);
    unsigned char *src_end = src_area + area;

    /* The destination: one byte off alignment, between guards. */
    unsigned char *dst_area = malloc(max_dst + 2 * GUARD + 16);
    if (!dst_area) fail("out of memory", NULL);
    unsigned char *block = dst_area + 1;

    FILE *out = fopen(argv[2], "wb");
    if (!out) fail("cannot create", argv[2]);
    for (size_t k = first; k < end; k++) {
        const struct kernel *kn = &KERNELS[k];
        for (size_t c = 0; c < kn->ncalls; c++) {
            size_t count = kn->counts[c];
            size_t s = count * kn->src_bytes, d = count * kn->dst_bytes;
            const unsigned char *from = input + kn->src_offset;
            unsigned char *src = src_end - s;
            memcpy(src, from, s);
            memset(block, FILL, d + 2 * GUARD);
            kn->fn(src, block + GUARD, count);
            if (memcmp(src, from, s) != 0) {
                fprintf(stderr, "driver: %s changed its source (count %zu)\n", kn->name, count);
                return 3;
            }
            if (fwrite(block, 1, d + 2 * GUARD, out) != d + 2 * GUARD) fail("cannot write", argv[2]);
        }
    }
    if (fclose(out) != 0) fail("cannot write", argv[2]);
    return 0;
}
