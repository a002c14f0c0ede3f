/* The cross-ISA driver's kernel table (crates/verify/tests/cross_isa.rs): the table itself,
 * table.c, is generated per target by clconv_verify::cross from the object's symbols. */
#ifndef CLCONV_CROSS_DRIVER_H
#define CLCONV_CROSS_DRIVER_H

#include <stddef.h>

/* Every entry point clconv::aot emits: `count` OpenCL values from src to dst. */
typedef void (*kernel_fn)(const void *src, void *dst, size_t count);

/* The most calls one entry point gets (clconv_verify::cross::MAX_CALLS). */
#define MAX_CALLS 10

struct kernel {
    const char *name;
    kernel_fn fn;
    size_t src_offset; /* where its source buffer starts in the input file */
    size_t src_bytes;  /* bytes per source value */
    size_t dst_bytes;  /* bytes per destination value */
    size_t ncalls;
    size_t counts[MAX_CALLS]; /* the values converted by each call */
};

extern const struct kernel KERNELS[];
extern const size_t N_KERNELS;

#endif
