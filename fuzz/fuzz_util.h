/* Shared by the fuzz targets: a reader over the fuzzer's bytes and a check that aborts, so that
 * libFuzzer (and the replay driver) report the input that broke an invariant. */
#ifndef VL_FUZZ_UTIL_H
#define VL_FUZZ_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <volley/volley.h>

#include "test_oracle.h"

#define FUZZ_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: fuzz check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            abort();                                                                  \
        }                                                                             \
    } while (0)

typedef struct fuzz_input {
    const uint8_t* data;
    size_t size, at;
} fuzz_input;

static inline int fuzz_done(const fuzz_input* in) { return in->at >= in->size; }

/* The next byte, 0 once the input is used up. */
static inline uint8_t fuzz_byte(fuzz_input* in) { return in->at < in->size ? in->data[in->at++] : 0; }

static inline uint32_t fuzz_u32(fuzz_input* in) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v = v << 8 | fuzz_byte(in);
    return v;
}

/* A coordinate: mostly on a coarse grid (so that boxes touch, coincide and share faces exactly),
 * sometimes a special value (signed zeros, infinities, NaN, extremes) or any bit pattern. */
static inline float fuzz_coord(fuzz_input* in) {
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, -1e-45f, 3.4e38f, -3.4e38f, 1e-30f};
    uint8_t b = fuzz_byte(in);
    if (b < 224) return (float)((int)(b % 32) - 16) * 0.5f;
    if (b < 248) return special[(b - 224) % 10];
    uint32_t bits = fuzz_u32(in);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif
