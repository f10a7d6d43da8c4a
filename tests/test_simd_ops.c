/* The SIMD layer, lane by lane against plain C: every op of simd.h at 4 and 8 lanes, over random
 * values and the special ones (signed zeros, infinities, denormals, extremes). NaN is excluded:
 * the API rejects it before any kernel runs. */
#include "simd/simd.h"
#include "test_util.h"

#define TRIALS 2000

static float pick(test_rng* rng) {
    if (test_u32(rng, 3) == 0) return test_special_floats[test_u32(rng, TEST_SPECIAL_COUNT)];
    return test_float(rng, -100.0f, 100.0f) * (test_u32(rng, 4) == 0 ? 1e-30f : 1.0f);
}

static int same_value(float a, float b) { return a == b || (isnan(a) && isnan(b)); }
static uint32_t mask_of(int cond) { return cond ? 0xFFFFFFFFu : 0u; }

static float ref_min(float a, float b) { return a < b ? a : b; }
static float ref_max(float a, float b) { return a > b ? a : b; }

/* One float op at width W: r = vl_fW_op(a, b), checked lane by lane against `expr` of x, y. */
#define CHECK_F_BINARY(W, op, expr)                                                  \
    do {                                                                             \
        vl_f##W r = vl_f##W##_##op(vl_f##W##_loadu(a), vl_f##W##_loadu(b));          \
        float out[W];                                                                \
        vl_f##W##_storeu(out, r);                                                    \
        for (int i = 0; i < W; i++) {                                                \
            float x = a[i], y = b[i];                                                \
            float want = (expr);                                                     \
            CHECK(same_value(out[i], want), #op " w%d lane %d: %g %g -> %g, want %g", W, i, x, y, out[i], want); \
        }                                                                            \
    } while (0)

#define CHECK_F_COMPARE(W, op, expr)                                                 \
    do {                                                                             \
        vl_f##W r = vl_f##W##_##op(vl_f##W##_loadu(a), vl_f##W##_loadu(b));          \
        uint32_t out[W];                                                             \
        vl_i##W##_storeu(out, vl_f##W##_as_i(r));                                    \
        for (int i = 0; i < W; i++) {                                                \
            float x = a[i], y = b[i];                                                \
            CHECK(out[i] == mask_of(expr), #op " w%d lane %d: %g %g", W, i, x, y);   \
        }                                                                            \
    } while (0)

#define CHECK_I_BINARY(W, op, expr)                                                  \
    do {                                                                             \
        vl_i##W r = vl_i##W##_##op(vl_i##W##_loadu(ia), vl_i##W##_loadu(ib));        \
        uint32_t out[W];                                                             \
        vl_i##W##_storeu(out, r);                                                    \
        for (int i = 0; i < W; i++) {                                                \
            uint32_t x = ia[i], y = ib[i];                                           \
            uint32_t want = (expr);                                                  \
            CHECK(out[i] == want, #op " w%d lane %d: %08x %08x -> %08x, want %08x", W, i, x, y, out[i], want); \
        }                                                                            \
    } while (0)

/* The whole op table at width W. */
#define TEST_WIDTH(W)                                                                                     \
    static void test_width_##W(test_rng* rng) {                                                          \
        for (int trial = 0; trial < TRIALS; trial++) {                                                   \
            float a[W], b[W];                                                                            \
            uint32_t ia[W], ib[W], mask_bits = 0;                                                        \
            for (int i = 0; i < W; i++) {                                                                \
                a[i] = pick(rng);                                                                        \
                b[i] = test_u32(rng, 4) == 0 ? a[i] : pick(rng);                                         \
                ia[i] = (uint32_t)test_next(rng);                                                        \
                ib[i] = test_u32(rng, 4) == 0 ? ia[i] : (uint32_t)test_next(rng);                        \
            }                                                                                            \
            CHECK_F_BINARY(W, add, x + y);                                                               \
            CHECK_F_BINARY(W, sub, x - y);                                                               \
            CHECK_F_BINARY(W, mul, x * y);                                                               \
            CHECK_F_BINARY(W, div, x / y);                                                               \
            CHECK_F_BINARY(W, min, ref_min(x, y));                                                       \
            CHECK_F_BINARY(W, max, ref_max(x, y));                                                       \
            CHECK_F_COMPARE(W, lt, x < y);                                                               \
            CHECK_F_COMPARE(W, le, x <= y);                                                              \
            CHECK_F_COMPARE(W, gt, x > y);                                                               \
            CHECK_F_COMPARE(W, ge, x >= y);                                                              \
            CHECK_F_COMPARE(W, eq, x == y);                                                              \
            CHECK_F_BINARY(W, and, test_bits_float(test_float_bits(x) & test_float_bits(y)));            \
            CHECK_F_BINARY(W, or, test_bits_float(test_float_bits(x) | test_float_bits(y)));             \
            CHECK_F_BINARY(W, xor, test_bits_float(test_float_bits(x) ^ test_float_bits(y)));            \
            CHECK_F_BINARY(W, andnot, test_bits_float(test_float_bits(x) & ~test_float_bits(y)));        \
            CHECK_I_BINARY(W, add, x + y);                                                               \
            CHECK_I_BINARY(W, sub, x - y);                                                               \
            CHECK_I_BINARY(W, and, x & y);                                                               \
            CHECK_I_BINARY(W, or, x | y);                                                                \
            CHECK_I_BINARY(W, xor, x ^ y);                                                               \
            CHECK_I_BINARY(W, eq, mask_of(x == y));                                                      \
            CHECK_I_BINARY(W, gt, mask_of((int32_t)x > (int32_t)y));                                     \
            CHECK_I_BINARY(W, min, (int32_t)x < (int32_t)y ? x : y);                                     \
            CHECK_I_BINARY(W, max, (int32_t)x > (int32_t)y ? x : y);                                     \
            CHECK_I_BINARY(W, min_u, x < y ? x : y);                                                     \
            CHECK_I_BINARY(W, max_u, x > y ? x : y);                                                     \
            /* unary ops, select and the lane-mask helpers */                                            \
            uint32_t lanes[W], sign[W];                                                                  \
            float absolute[W], chosen[W];                                                                \
            for (int i = 0; i < W; i++) {                                                                \
                int on = (int)test_u32(rng, 2);                                                          \
                if (trial % 7 == 0) on = 0;                                                              \
                if (trial % 7 == 1) on = 1;                                                              \
                lanes[i] = mask_of(on);                                                                  \
                mask_bits |= (uint32_t)on << i;                                                          \
            }                                                                                            \
            vl_f##W m = vl_i##W##_as_f(vl_i##W##_loadu(lanes));                                          \
            vl_f##W##_storeu(chosen, vl_f##W##_select(m, vl_f##W##_loadu(a), vl_f##W##_loadu(b)));       \
            vl_f##W##_storeu(absolute, vl_f##W##_abs(vl_f##W##_loadu(a)));                               \
            vl_i##W##_storeu(sign, vl_i##W##_sign_mask(vl_i##W##_loadu(ia)));                            \
            for (int i = 0; i < W; i++) {                                                                \
                float want = lanes[i] ? a[i] : b[i];                                                     \
                CHECK(test_float_bits(chosen[i]) == test_float_bits(want), "select w%d lane %d", W, i); \
                CHECK(test_float_bits(absolute[i]) == (test_float_bits(a[i]) & 0x7FFFFFFFu), "abs w%d", W); \
                CHECK(sign[i] == mask_of((int32_t)ia[i] < 0), "sign_mask w%d lane %d", W, i);            \
            }                                                                                            \
            CHECK(vl_f##W##_bits(m) == mask_bits, "bits w%d: %x want %x", W, vl_f##W##_bits(m), mask_bits); \
            CHECK(vl_f##W##_any(m) == (mask_bits != 0), "any w%d: %x", W, mask_bits);                    \
            CHECK(vl_f##W##_all(m) == (mask_bits == (1u << W) - 1), "all w%d: %x", W, mask_bits);        \
        }                                                                                                \
        for (uint32_t n = 0; n <= W; n++)                                                                \
            CHECK(vl_f##W##_bits(vl_f##W##_first(n)) == (1u << n) - 1, "first(%u) w%d", n, W);          \
        CHECK(vl_f##W##_all(vl_f##W##_true()) && !vl_f##W##_any(vl_f##W##_zero()), "true/zero w%d", W);  \
        float ones[W];                                                                                   \
        vl_f##W##_storeu(ones, vl_f##W##_set1(1.5f));                                                    \
        for (int i = 0; i < W; i++) CHECK(ones[i] == 1.5f, "set1 w%d", W);                               \
        _Alignas(32) float aligned[W];                                                                   \
        vl_f##W##_store(aligned, vl_f##W##_load(ones));                                                  \
        CHECK(memcmp(aligned, ones, sizeof ones) == 0, "aligned load/store w%d", W);                     \
    }

TEST_WIDTH(4)
TEST_WIDTH(8)

/* Ops that exist at one width only: conversion, variable shift, lane permutation. */
static void test_single_width_ops(test_rng* rng) {
    for (int trial = 0; trial < TRIALS; trial++) {
        float f[4];
        int32_t truncated[4];
        for (int i = 0; i < 4; i++) f[i] = test_float(rng, -2e9f, 2e9f) * (test_u32(rng, 2) ? 1e-6f : 1.0f);
        vl_i4_storeu(truncated, vl_f4_to_i(vl_f4_loadu(f)));
        for (int i = 0; i < 4; i++)
            CHECK(truncated[i] == (int32_t)f[i], "to_i lane %d: %g -> %d", i, f[i], truncated[i]);

        uint32_t a[8], count[8], idx[8], shifted[8], permuted[8];
        for (int i = 0; i < 8; i++) {
            a[i] = (uint32_t)test_next(rng);
            count[i] = test_u32(rng, 40); /* counts past 31 give 0 */
            idx[i] = (uint32_t)test_next(rng);  /* only the low 3 bits select */
        }
        vl_i8_storeu(shifted, vl_i8_shr_var(vl_i8_loadu(a), vl_i8_loadu(count)));
        vl_i8_storeu(permuted, vl_i8_permute(vl_i8_loadu(a), vl_i8_loadu(idx)));
        uint32_t permuted4[4];
        vl_i4_storeu(permuted4, vl_i4_permute(vl_i4_loadu(a), vl_i4_loadu(idx)));
        for (int i = 0; i < 4; i++) CHECK(permuted4[i] == a[idx[i] & 3], "permute4 lane %d from %u", i, idx[i] & 3);
        for (int i = 0; i < 8; i++) {
            CHECK(shifted[i] == (count[i] > 31 ? 0u : a[i] >> count[i]), "shr_var lane %d by %u", i, count[i]);
            CHECK(permuted[i] == a[idx[i] & 7], "permute lane %d from %u", i, idx[i] & 7);
        }
    }
}

int main(void) {
    test_rng rng = {12345};
    test_width_4(&rng);
    test_width_8(&rng);
    test_single_width_ops(&rng);
    return test_finish("test_simd_ops");
}
