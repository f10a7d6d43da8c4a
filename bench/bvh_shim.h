/* C shim for the BVH bench: the batched traversal's internal knobs (src/bvh/traverse.h). */
#ifndef VL_BENCH_BVH_SHIM_H
#define VL_BENCH_BVH_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the batched traversal's knobs; 0 keeps a knob's default. width 4 or 8 (8 only in AVX2
 * builds), remnant: rays that go on one by one below this count (+1; 1 means none), order: 1
 * binary tree, majority-direction child order; 2 binary tree, left first; 3 4-wide ray streams,
 * each ray's nearest child first; 4 the same, closest-hit rays grouped by direction octant; 5
 * 4-wide ray streams, children by mean entry t only. */
void bench_bvh_tune(uint32_t width, uint32_t remnant_plus1, uint32_t order, uint32_t chunk);
/* Restores the defaults. */
void bench_bvh_tune_reset(void);

#ifdef __cplusplus
}
#endif

#endif
