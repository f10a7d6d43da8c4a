/* LSD radix sort, 11-bit digits (three passes for a 32- or 33-bit key): one pass builds every
 * histogram, constant digits are skipped. The parallel form runs each pass as two tasks over
 * pieces of the keys (the pieces' histograms, then the scatter), with the prefix sum between them
 * on the calling thread: stable, so the serial sort's order. For fewer keys, where that prefix sum
 * would cost as much as a pass, callers sort parts apart and merge them in ranges of the output
 * cut along the merge path (vl_radix_merge_range). */
#include "core/radix.h"

#include <string.h>

enum { BITS = 11, BUCKETS = 1 << BITS };

/* Insertion sort for short arrays: stable, and no histogram to clear. */
static void insertion_sort(uint64_t* keys, uint32_t n, unsigned lo_bit) {
    for (uint32_t i = 1; i < n; i++) {
        uint64_t k = keys[i];
        uint32_t j = i;
        for (; j > 0 && (keys[j - 1] >> lo_bit) > (k >> lo_bit); j--) keys[j] = keys[j - 1];
        keys[j] = k;
    }
}

static unsigned digit_count(unsigned lo_bit) { return (64u - lo_bit + BITS - 1) / BITS; }

/* Turns counts into the first slot of each bucket; returns 0 when every key is in one bucket (the
 * digit reorders nothing). */
static int counts_to_offsets(uint32_t* h, uint32_t n, uint32_t first_bucket) {
    if (h[first_bucket] == n) return 0;
    uint32_t sum = 0;
    for (unsigned b = 0; b < BUCKETS; b++) {
        uint32_t c = h[b];
        h[b] = sum;
        sum += c;
    }
    return 1;
}

void vl_radix_sort_u64(uint64_t* keys, uint64_t* tmp, uint32_t n, unsigned lo_bit) {
    if (n < 2 || lo_bit >= 64) return;
    if (n < 64) {
        insertion_sort(keys, n, lo_bit);
        return;
    }
    unsigned digits = digit_count(lo_bit);
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
        if (!counts_to_offsets(h, n, (uint32_t)(src[0] >> shift) & (BUCKETS - 1))) continue;
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

/* ---- the parallel form ------------------------------------------------------------------------ */

typedef struct radix_pass {
    const uint64_t* src;
    uint64_t* dst;
    uint32_t* hist; /* pieces x BUCKETS */
    uint32_t n, piece;
    unsigned shift;
} radix_pass;

static void count_pieces(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const radix_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t* h = p->hist + (size_t)k * BUCKETS;
        uint32_t i0, i1;
        vl_piece_range(p->n, p->piece, k, &i0, &i1);
        memset(h, 0, sizeof(uint32_t) * BUCKETS);
        for (uint32_t i = i0; i < i1; i++) h[(p->src[i] >> p->shift) & (BUCKETS - 1)]++;
    }
}

static void scatter_pieces(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const radix_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t* h = p->hist + (size_t)k * BUCKETS;
        uint32_t i0, i1;
        vl_piece_range(p->n, p->piece, k, &i0, &i1);
        for (uint32_t i = i0; i < i1; i++) {
            uint64_t key = p->src[i];
            p->dst[h[(key >> p->shift) & (BUCKETS - 1)]++] = key;
        }
    }
}

/* How many of a's keys are among the first d of the stable merge of a and b (a's first on ties):
 * the least i with a[i] after b[d - i - 1]. */
static uint32_t merge_split(const uint64_t* a, uint32_t na, const uint64_t* b, uint32_t nb, uint32_t d,
                            unsigned lo_bit) {
    uint32_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
    while (lo < hi) {
        uint32_t i = lo + (hi - lo) / 2;
        if ((a[i] >> lo_bit) <= (b[d - i - 1] >> lo_bit))
            lo = i + 1;
        else
            hi = i;
    }
    return lo;
}

void vl_radix_merge_range(const uint64_t* a, uint32_t na, const uint64_t* b, uint32_t nb, uint32_t d0, uint32_t d1,
                          unsigned lo_bit, uint64_t* out) {
    uint32_t i = merge_split(a, na, b, nb, d0, lo_bit), i1 = merge_split(a, na, b, nb, d1, lo_bit);
    uint32_t j = d0 - i, j1 = d1 - i1;
    for (uint32_t d = d0; d < d1; d++) {
        int from_a = j == j1 || (i < i1 && (a[i] >> lo_bit) <= (b[j] >> lo_bit));
        out[d] = from_a ? a[i++] : b[j++];
    }
}

size_t vl_radix_sort_parallel_hist_words(void) { return (size_t)VL_RADIX_PIECES * BUCKETS; }

void vl_radix_sort_u64_parallel(const vl_context* ctx, uint64_t* keys, uint64_t* tmp, uint32_t n, unsigned lo_bit,
                                uint32_t* hist) {
    if (!ctx->tasks.enqueue || n < 2 * VL_RADIX_PIECE_MIN || lo_bit >= 64) {
        vl_radix_sort_u64(keys, tmp, n, lo_bit);
        return;
    }
    radix_pass p;
    p.hist = hist, p.n = n;
    p.piece = (uint32_t)(((uint64_t)n + VL_RADIX_PIECES - 1) / VL_RADIX_PIECES);
    if (p.piece < VL_RADIX_PIECE_MIN) p.piece = VL_RADIX_PIECE_MIN;
    const uint32_t pieces = (uint32_t)(((uint64_t)n + p.piece - 1) / p.piece);
    uint64_t* src = keys;
    uint64_t* dst = tmp;
    for (unsigned d = 0; d < digit_count(lo_bit); d++) {
        p.src = src, p.dst = dst, p.shift = lo_bit + BITS * d;
        vl_tasks_run(ctx, count_pieces, pieces, 1, &p);
        /* bucket-major, piece-minor offsets: piece k's keys of a bucket follow those of pieces < k */
        const uint32_t first = (uint32_t)(src[0] >> p.shift) & (BUCKETS - 1);
        uint32_t sum = 0;
        for (uint32_t k = 0; k < pieces; k++) sum += hist[(size_t)k * BUCKETS + first];
        if (sum == n) continue; /* the digit reorders nothing */
        sum = 0;
        for (unsigned b = 0; b < BUCKETS; b++)
            for (uint32_t k = 0; k < pieces; k++) {
                uint32_t* h = &hist[(size_t)k * BUCKETS + b];
                uint32_t c = *h;
                *h = sum;
                sum += c;
            }
        vl_tasks_run(ctx, scatter_pieces, pieces, 1, &p);
        uint64_t* t = src;
        src = dst;
        dst = t;
    }
    if (src != keys) memcpy(keys, src, (size_t)n * sizeof *keys);
}
