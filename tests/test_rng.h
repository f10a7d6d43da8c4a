/* splitmix64: a small, fast random generator that gives the same numbers on every platform, for
 * tests, fuzzers, scenes and the bench (header-only, C and C++). */
#ifndef VL_TEST_RNG_H
#define VL_TEST_RNG_H

#include <stdint.h>

typedef struct test_rng {
    uint64_t state;
} test_rng;

static inline uint64_t test_next(test_rng* r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, n) */
static inline uint32_t test_u32(test_rng* r, uint32_t n) { return (uint32_t)(test_next(r) % n); }

/* uniform in [lo, hi) */
static inline float test_float(test_rng* r, float lo, float hi) {
    return lo + (hi - lo) * (float)((test_next(r) >> 40) * (1.0 / 16777216.0));
}

#endif
