/* Sortable-float encoding (Terdiman, "Sweep-and-prune", 2007, appendix A): keys order exactly as
 * the floats do, equal floats (+0 and -0 included) give equal keys, the inverse gives the float
 * back, and the 4- and 8-lane encoders agree with the scalar one. */
#include "simd/kernels.h"
#include "test_util.h"

static float pick(test_rng* rng) {
    switch (test_u32(rng, 4)) {
    case 0: return test_special_floats[test_u32(rng, TEST_SPECIAL_COUNT)];
    case 1: return test_float(rng, -1.0f, 1.0f);
    case 2: { /* any non-NaN bit pattern */
        float f;
        do f = test_bits_float((uint32_t)test_next(rng)); while (isnan(f));
        return f;
    }
    default: return (float)(int)test_u32(rng, 2001) - 1000.0f;
    }
}

int main(void) {
    test_rng rng = {42};
    uint32_t trials = test_scaled(200000);
    for (uint32_t t = 0; t < trials; t++) {
        float a = pick(&rng), b = test_u32(&rng, 8) == 0 ? a : pick(&rng);
        uint32_t ka = vl_float_to_sortable(a), kb = vl_float_to_sortable(b);
        CHECK((a < b) == (ka < kb), "order: %g %g keys %08x %08x", a, b, ka, kb);
        CHECK((a == b) == (ka == kb), "equality: %g %g keys %08x %08x", a, b, ka, kb);
        float back = vl_sortable_to_float(ka);
        CHECK(test_float_bits(back) == test_float_bits(a + 0.0f), "round trip %g -> %g", a, back);
    }
    CHECK(vl_float_to_sortable(-0.0f) == vl_float_to_sortable(0.0f), "-0 and +0 differ");
    CHECK(vl_float_to_sortable(-INFINITY) < vl_float_to_sortable(-3.4e38f), "-inf not lowest");
    CHECK(vl_float_to_sortable(INFINITY) > vl_float_to_sortable(3.4e38f), "+inf not highest");
    CHECK(vl_float_to_sortable(-1e-45f) < vl_float_to_sortable(0.0f), "-denormal not below 0");

    for (uint32_t t = 0; t < trials / 8; t++) {
        float in[8];
        uint32_t k4[8], k8[8];
        for (int i = 0; i < 8; i++) in[i] = pick(&rng);
        vl_i4_storeu(k4, vl_k4_float_to_sortable(vl_f4_loadu(in)));
        vl_i4_storeu(k4 + 4, vl_k4_float_to_sortable(vl_f4_loadu(in + 4)));
        vl_i8_storeu(k8, vl_k8_float_to_sortable(vl_f8_loadu(in)));
        float back4[8], back8[8];
        vl_f4_storeu(back4, vl_k4_sortable_to_float(vl_i4_loadu(k4)));
        vl_f4_storeu(back4 + 4, vl_k4_sortable_to_float(vl_i4_loadu(k4 + 4)));
        vl_f8_storeu(back8, vl_k8_sortable_to_float(vl_i8_loadu(k8)));
        for (int i = 0; i < 8; i++) {
            uint32_t want = vl_float_to_sortable(in[i]);
            CHECK(k4[i] == want && k8[i] == want, "simd key of %g: %08x %08x want %08x", in[i], k4[i], k8[i], want);
            uint32_t back = test_float_bits(in[i] + 0.0f);
            CHECK(test_float_bits(back4[i]) == back && test_float_bits(back8[i]) == back, "simd inverse of %g", in[i]);
        }
    }
    return test_finish("test_sortable");
}
