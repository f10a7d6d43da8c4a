/* LSD radix sort of 64-bit keys, used by box pruning (boxes by sortable min), batch insertion
 * (new endpoints) and the box-pruning broadphase (pairs). */
#ifndef VL_SAP_RADIX_H
#define VL_SAP_RADIX_H

#include <stdint.h>

/* Sorts keys[0, n) by bits [lo_bit, 64) in ascending order, stable; tmp holds n keys. Bytes of the
 * key that are equal in every element cost no pass. The result is in keys. */
void vl_radix_sort_u64(uint64_t* keys, uint64_t* tmp, uint32_t n, unsigned lo_bit);

#endif
