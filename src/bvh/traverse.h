/* Entry points shared by the single-ray and batched traversals. */
#ifndef VL_BVH_TRAVERSE_H
#define VL_BVH_TRAVERSE_H

#include "bvh/primitives.h"

/* Knobs of the batched traversal, read-only during queries (the bench changes them between runs). */
typedef struct vl_bvh_tuning {
    uint32_t chunk;       /* rays traced together at most (the rest waits for the next chunk) */
    uint32_t remnant;     /* at most this many live rays at a node go on one by one */
    uint32_t small_batch; /* any-hit batches below this many rays go one by one */
    uint32_t small_closest; /* closest-hit batches below this many rays go one by one */
    uint32_t width;       /* 4 or 8 lanes (8 only where VL_SIMD_PREFERRED_WIDTH is 8) */
    uint32_t order;       /* binary traversal: 1, majority direction picks the nearer child first; 0, left first */
    uint32_t wide;        /* 1: ray streams over the 4-wide nodes; 0: move-to-front over the binary nodes */
    uint32_t arena;       /* wide: list entries per ray of a chunk */
    uint32_t octants;     /* wide, closest hit: 1 traces each direction octant of a chunk on its own */
    uint32_t near_first;  /* wide, closest hit: lists of at least this many rays (0: none) send each ray into
                             its own nearest child first */
} vl_bvh_tuning;

extern vl_bvh_tuning vl_bvh_tune;

/* Traces one record from node4 `start` down (its children's boxes, not its own); shrinks the
 * record's tmax as hits land (any_hit: retires it, tmax = -1) and writes *hit on each hit.
 * `parallel`: some inverse direction of the record may be infinite. */
void vl_bvh_trace1(const vl_bvh* bvh, float* rec, int parallel, uint32_t start, int any_hit, vl_hit* hit);

#endif
