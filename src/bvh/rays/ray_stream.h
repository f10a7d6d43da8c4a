/* Ray streams over the 4-wide tree: a list of rays goes down a node4 at once, VL_BW rays per box
 * test, and each child hit receives the list of its rays (after Barringer and Akenine-Moller
 * 2014). Large batches are traced this way, a chunk of rays at a time. */
#ifndef VL_BVH_RAYS_RAY_STREAM_H
#define VL_BVH_RAYS_RAY_STREAM_H

#include "bvh/rays/ray_walk.h"

/* Lists of at most this many rays go on as interleaved single-ray walks. 4: a tree that outgrows
 * the cache wants lists of 4 or more sent to the walks, whose steps hide its misses, and one in
 * cache wants fewer; 4 costs the latter little (docs/measurements/rays.md). */
#define VL_STREAM_REMNANT 4u

/* Closest hit: lists of at least this many rays (a whole chunk, VL_STREAM_CHUNK) send each ray
 * into its own nearest child first; smaller ones take the children by their rays' mean entry t.
 * A whole chunk's list is where the split pays (a large tree's line of sight needs it); on
 * smaller lists (a smaller batch's root, a chunk's lower levels) it cuts each child's list into
 * two sparser ones and costs more than it saves (docs/measurements/rays.md). */
#define VL_STREAM_NEAR_FIRST 131072u

/* Traces the live records arena[0, n) as ray streams from the root; lists of at most
 * VL_STREAM_REMNANT rays, and any node whose lists would not fit the arena, go on one ray at a
 * time through q (flushed by the caller). arena holds arena_size entries plus VL_LIST_SPARE, all
 * valid record indices; masks holds n / 2 + 2 entries. */
void vl_bvh_trace_streams(const vl_bvh* bvh, float* rec, uint32_t* arena, uint32_t arena_size, uint32_t* masks,
                          uint32_t n, int parallel, int any_hit, vl_hit* hits, vl_bvh_queue* q);

#endif
