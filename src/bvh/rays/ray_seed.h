/* Where the single-ray walks of a small batch start: ray streams over the top levels of the tree
 * leave each ray its seeds, the places where its own walk goes on. The streams share the top
 * levels' box tests among the rays (VL_BW per test), and a ray that misses them has no walk. */
#ifndef VL_BVH_RAYS_RAY_SEED_H
#define VL_BVH_RAYS_RAY_SEED_H

#include "bvh/rays/ray_walk.h"

/* node4 levels traced as ray streams before the walks: a ray has at most 4^VL_SEED_DEPTH seeds. */
#define VL_SEED_DEPTH 3u
_Static_assert(VL_SEEDS_PER_RAY_MAX == 1u << (2 * VL_SEED_DEPTH), "4^VL_SEED_DEPTH seeds per ray");

/* Lists of fewer rays leave the streams for the walks (8: one block of 8 lanes). */
#define VL_SEED_MIN_LIST 8u

/* A node's children stay streams only while its rays hit at most VL_SEED_FANOUT8 / 8 of them on
 * average: rays that enter many boxes are better culled one by one. 11 (1.375 children) sends
 * the bunny's bounces, which fan out more than that at its root, on walks from the root, where
 * they run faster than seeded (docs/measurements/rays.md). */
#define VL_SEED_FANOUT8 11u

/* Bytes of the seeds' block for a chunk of `chunk` rays. */
size_t vl_bvh_seed_bytes(uint32_t chunk);

/* A small batch's live records arena[0, live) of a chunk of len records: the seeds from ray
 * streams over the top of the tree (while a node's list holds at least VL_SEED_MIN_LIST rays and
 * its rays do not fan out), then every ray's walk from its seeds, interleaved with the others'
 * (from the root when the batch's rays fan out at the root). arena holds arena_size entries plus
 * VL_LIST_SPARE, all valid record indices; masks len / 2 + 2 entries; seed_block
 * vl_bvh_seed_bytes(chunk) bytes for chunk >= len; walks vl_bvh_walks_scratch() bytes. */
void vl_bvh_trace_seeded(const vl_bvh* bvh, float* rec, uint32_t* arena, uint32_t arena_size, uint32_t* masks,
                         uint32_t* seed_block, uint32_t chunk, uint32_t len, uint32_t live, int parallel,
                         int any_hit, vl_hit* out, void* walks);

#endif
