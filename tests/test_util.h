/* A tiny test harness: checks that count, a reproducible RNG, a size knob, the data folder.
 * A test program prints its own "name: N passed, M failed" line and exits non-zero on a failure. */
#ifndef VL_TEST_UTIL_H
#define VL_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_rng.h"

static unsigned long long g_test_passed, g_test_failed;

/* Counts one check; prints the first 20 failures with their place and a formatted reason. */
#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (cond) {                                                              \
            g_test_passed++;                                                     \
        } else {                                                                 \
            if (g_test_failed++ < 20) {                                          \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                    \
                fputc('\n', stderr);                                             \
            }                                                                    \
        }                                                                        \
    } while (0)

static inline int test_finish(const char* name) {
    printf("%s: %llu passed, %llu failed\n", name, g_test_passed, g_test_failed);
    return g_test_failed ? 1 : 0;
}

/* VOLLEY_TEST_SCALE (default 1) shrinks or grows the random cases; sanitizer and qemu runs use less.
 * VOLLEY_TEST_WEIGHT (default 1), set by tests/CMakeLists.txt on the heavy programs only (the
 * longest brute-force ones, the calls on a context), multiplies it in the flavours that ask
 * (VOLLEY_TEST_HEAVY_SCALE), so that the whole suite fits its time while the short programs keep
 * their full cases. */
static inline double test_scale(void) {
    const char* s = getenv("VOLLEY_TEST_SCALE");
    const char* w = getenv("VOLLEY_TEST_WEIGHT");
    double v = s ? atof(s) : 1.0, k = w ? atof(w) : 1.0;
    v = v > 0 ? v : 1.0;
    return k > 0 ? v * k : v;
}

static inline uint32_t test_scaled(uint32_t n) {
    double v = n * test_scale();
    return v < 1 ? 1u : (uint32_t)v;
}

/* The folder of real meshes (../shared/data beside the checkout), or NULL when absent. */
static inline const char* test_data_dir(void) {
    const char* s = getenv("VOLLEY_DATA_DIR");
    return (s && *s) ? s : NULL;
}

static inline float test_bits_float(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint32_t test_float_bits(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* Values that break careless float code: signed zeros, infinities, denormals, extremes. */
static const float test_special_floats[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -2.0f, 1e-45f, -1e-45f, 1.17549435e-38f, -1.17549435e-38f,
    1e-38f, -1e-38f, 1e-20f, -1e-20f, 1e20f, -1e20f, 3.40282347e38f, -3.40282347e38f, INFINITY, -INFINITY,
};
#define TEST_SPECIAL_COUNT (sizeof test_special_floats / sizeof test_special_floats[0])

#endif
