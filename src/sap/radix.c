/* LSD radix sort, 11-bit digits (three passes for a 32- or 33-bit key): one pass builds every
 * histogram, constant digits are skipped. */
#include "sap/radix.h"

#include <string.h>

void vl_radix_sort_u64(uint64_t* keys, uint64_t* tmp, uint32_t n, unsigned lo_bit) {
    if (n < 2 || lo_bit >= 64) return;
    if (n < 64) { /* insertion sort: stable, and no histogram to clear */
        for (uint32_t i = 1; i < n; i++) {
            uint64_t k = keys[i];
            uint32_t j = i;
            for (; j > 0 && (keys[j - 1] >> lo_bit) > (k >> lo_bit); j--) keys[j] = keys[j - 1];
            keys[j] = k;
        }
        return;
    }
    enum { BITS = 11, BUCKETS = 1 << BITS };
    unsigned digits = (64u - lo_bit + BITS - 1) / BITS;
    static _Thread_local uint32_t hist[6][BUCKETS];
    memset(hist, 0, digits * sizeof hist[0]);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = keys[i] >> lo_bit;
        for (unsigned d = 0; d < digits; d++) hist[d][(k >> (BITS * d)) & (BUCKETS - 1)]++;
    }
    uint64_t* src = keys;
    uint64_t* dst = tmp;
    for (unsigned d = 0; d < digits; d++) {
        uint32_t* h = hist[d];
        unsigned shift = lo_bit + BITS * d;
        /* a digit shared by every key does not reorder anything */
        if (h[(src[0] >> shift) & (BUCKETS - 1)] == n) continue;
        uint32_t sum = 0;
        for (unsigned b = 0; b < BUCKETS; b++) {
            uint32_t c = h[b];
            h[b] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint64_t k = src[i];
            dst[h[(k >> shift) & (BUCKETS - 1)]++] = k;
        }
        uint64_t* t = src;
        src = dst;
        dst = t;
    }
    if (src != keys) memcpy(keys, src, (size_t)n * sizeof *keys);
}
