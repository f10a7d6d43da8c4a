/* Box-pruning kernel: one query box against 8 consecutive candidates of a sorted prune set.
 * The candidates are SoA (min on the sweep axis, min and max on the two other axes); the lanes
 * past the end hold NaN in minx, which fails every compare and ends the sweep (a sentinel).
 * Inputs are clean: no NaN in real boxes. */
#ifndef VL_SIMD_SAP_PRUNE_H
#define VL_SIMD_SAP_PRUNE_H

#include "simd/simd.h"

/* One query, broadcast. */
typedef struct vl_prune_query8 {
    vl_f8 maxx, miny, minz, maxy, maxz;
} vl_prune_query8;

VL_INLINE vl_prune_query8 vl_prune_query8_make(float maxx, float miny, float minz, float maxy, float maxz) {
    vl_prune_query8 q;
    q.maxx = vl_f8_set1(maxx);
    q.miny = vl_f8_set1(miny);
    q.minz = vl_f8_set1(minz);
    q.maxy = vl_f8_set1(maxy);
    q.maxz = vl_f8_set1(maxz);
    return q;
}

/* Candidates j..j+7: lanes true when candidate j+k overlaps the query on the two axes other than
 * the sweep axis. Branchless: four compares, three ands. */
VL_INLINE vl_f8 vl_prune_yz8(const float* miny, const float* minz, const float* maxy, const float* maxz, uint32_t j,
                             const vl_prune_query8* q) {
    vl_f8 y = vl_f8_and(vl_f8_le(vl_f8_loadu(miny + j), q->maxy), vl_f8_ge(vl_f8_loadu(maxy + j), q->miny));
    vl_f8 z = vl_f8_and(vl_f8_le(vl_f8_loadu(minz + j), q->maxz), vl_f8_ge(vl_f8_loadu(maxz + j), q->minz));
    return vl_f8_and(y, z);
}

/* Candidates j..j+7: bit k set when candidate j+k starts at or before the query's end on the sweep
 * axis (a prefix, since minx is sorted; NaN sentinels fail). */
VL_INLINE uint32_t vl_prune_x8(const float* minx, uint32_t j, const vl_prune_query8* q) {
    return vl_f8_bits(vl_f8_le(vl_f8_loadu(minx + j), q->maxx));
}

#endif
