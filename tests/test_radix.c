/* The 64-bit key sort of src/core/radix.c on both paths it takes by size (insertion; radix digits,
 * constant ones skipped), its parallel form being checked through the contexts' tests: ascending
 * by bits [lo_bit, 64) and stable, which the keys check by carrying their first index below lo_bit. */
#include <string.h>

#include "core/radix.h"
#include "test_util.h"

/* Keys whose sorted bits take `range` values (few: many ties), each with its index below lo_bit. */
static void make_keys(test_rng* rng, uint64_t* keys, uint32_t n, unsigned lo_bit, uint64_t range) {
    for (uint32_t i = 0; i < n; i++) {
        uint64_t high = range ? test_next(rng) % range : test_next(rng);
        keys[i] = lo_bit ? high << lo_bit | i : high;
    }
}

static void check_sorted(const uint64_t* keys, uint32_t n, unsigned lo_bit, const char* what, uint32_t size) {
    uint32_t bad = 0;
    for (uint32_t i = 1; i < n; i++) {
        uint64_t a = keys[i - 1], b = keys[i];
        uint64_t ha = lo_bit ? a >> lo_bit : a, hb = lo_bit ? b >> lo_bit : b;
        const uint64_t low = lo_bit ? (1ull << lo_bit) - 1 : 0;
        bad += ha > hb || (ha == hb && (a & low) > (b & low)); /* equal keys keep their first order */
    }
    CHECK(bad == 0, "%s: %u keys out of order, n %u, lo_bit %u", what, bad, size, lo_bit);
}

int main(void) {
    /* around the insertion sort's limit (64), then radix sorts with and without constant digits */
    static const uint32_t sizes[] = {0, 1, 2, 15, 16, 17, 63, 64, 65, 100, 257, 1000, 1024, 5000, 70000};
    static const unsigned lo_bits[] = {0, 20, 31, 40};
    static const uint64_t ranges[] = {0, 3, 1000};
    test_rng rng = {7};
    enum { MAX_KEYS = 70000 };
    uint64_t *keys = malloc(MAX_KEYS * sizeof *keys), *tmp = malloc(MAX_KEYS * sizeof *tmp);
    uint64_t* copy = malloc(MAX_KEYS * sizeof *copy);
    CHECK(keys && tmp && copy, "allocation");
    if (!keys || !tmp || !copy) return test_finish("test_radix");
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t l = 0; l < sizeof lo_bits / sizeof *lo_bits; l++)
            for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
                const uint32_t n = sizes[s];
                const unsigned lo = lo_bits[l];
                if (!lo && ranges[r]) continue; /* stability needs the index below lo_bit */
                make_keys(&rng, keys, n, lo, ranges[r]);
                memcpy(copy, keys, (size_t)n * sizeof *keys);
                vl_radix_sort_u64(keys, tmp, n, lo);
                check_sorted(keys, n, lo, "sort", n);
                uint64_t sum_in = 0, sum_out = 0;
                for (uint32_t i = 0; i < n; i++) /* the same keys come out, none lost or doubled */
                    sum_in += copy[i] * 0x9E3779B97F4A7C15ull, sum_out += keys[i] * 0x9E3779B97F4A7C15ull;
                CHECK(sum_in == sum_out, "the keys changed, n %u", n);
            }
    free(keys), free(tmp), free(copy);
    return test_finish("test_radix");
}
