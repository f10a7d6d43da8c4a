/* LSD radix sort of 64-bit keys, used by box pruning (boxes by sortable min), batch insertion
 * (new endpoints) and the box-pruning broadphase (pairs). */
#ifndef VL_CORE_RADIX_H
#define VL_CORE_RADIX_H

#include <stddef.h>
#include <stdint.h>

#include "core/tasks.h"

/* Sorts keys[0, n) by bits [lo_bit, 64) in ascending order, stable; tmp holds n keys. Bytes of the
 * key that are equal in every element cost no pass. The result is in keys. */
void vl_radix_sort_u64(uint64_t* keys, uint64_t* tmp, uint32_t n, unsigned lo_bit);

/* The parallel form cuts the keys into at most VL_RADIX_PIECES pieces of at least
 * VL_RADIX_PIECE_MIN keys (fewer than two such pieces: the serial sort). */
#define VL_RADIX_PIECES 16u
#define VL_RADIX_PIECE_MIN 8192u

/* The uint32 words of the parallel form's histograms (a constant). */
size_t vl_radix_sort_parallel_hist_words(void);

/* vl_radix_sort_u64 through the context's job system (without one, the serial sort): the same
 * order (the sort is stable). hist holds vl_radix_sort_parallel_hist_words() words. */
void vl_radix_sort_u64_parallel(const vl_context* ctx, uint64_t* keys, uint64_t* tmp, uint32_t n, unsigned lo_bit,
                                uint32_t* hist);

/* Outputs [d0, d1) of the stable merge of a[0, na) and b[0, nb), each sorted by bits [lo_bit, 64)
 * (a's keys first among equal ones), written to out + d0: ranges that cut [0, na + nb) give the
 * whole merge, each range found by two binary searches. */
void vl_radix_merge_range(const uint64_t* a, uint32_t na, const uint64_t* b, uint32_t nb, uint32_t d0, uint32_t d1,
                          unsigned lo_bit, uint64_t* out);

#endif
