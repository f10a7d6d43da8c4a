/* Which way a batch goes: single-ray walks from seeds (small or sparse batches) or ray streams,
 * in chunks of how many rays, and in what order. */
#ifndef VL_BVH_RAYS_RAY_PLAN_H
#define VL_BVH_RAYS_RAY_PLAN_H

#include "bvh/rays/rays.h"

/* Rays the streams trace together (a chunk's records take 6 MB, its list arena 4 MB). A larger
 * chunk puts more rays on each node, which pays up to this size and no further
 * (docs/measurements/rays.md). */
#define VL_STREAM_CHUNK 131072u

/* Rays the walks take at a time, so that their records and seeds stay in L2 beside the tree's
 * nodes: a whole large batch walked at once runs slower, and the sizes either side of this one
 * run about alike (docs/measurements/rays.md). */
#define VL_WALK_CHUNK 1024u

/* Batches of fewer rays go as walks: their lists are too sparse for the streams (see
 * vl_bvh_plan_batch). */
#define VL_WALK_BATCH 4096u

/* Batches with fewer rays entering the tree's box than its leaves / VL_STREAM_LEAVES_PER_RAY go
 * as walks too (see vl_bvh_plan_batch). */
#define VL_STREAM_LEAVES_PER_RAY 1u

/* List entries per ray of a chunk in the streams' arena (4 MB for a chunk of 128K rays); a node
 * whose children's lists would not fit sends its rays on one at a time. */
#define VL_ARENA_PER_RAY 8u

/* How a batch of count rays is traced. */
typedef struct vl_bvh_plan {
    int walks;           /* 1: walks from seeds (ray_seed.h); 0: ray streams (ray_stream.h) */
    int ordered;         /* chunks take their rays in the order of vl_bvh_order_by_origin */
    uint32_t chunk;      /* rays loaded and traced at once (the last chunk may be shorter) */
    uint32_t chunks;     /* ceil(count / chunk) */
    uint32_t arena_size; /* list entries of the arena */
} vl_bvh_plan;

/* The plan of a batch of count rays (>= VL_WALKS / 2) that goes as walks or as streams. */
vl_bvh_plan vl_bvh_plan_way(uint32_t count, uint32_t flags, int walks);

/* The plan of this batch of count rays (>= VL_WALKS / 2): walks or streams, by its size and density
 * (ray_plan.c). */
vl_bvh_plan vl_bvh_plan_batch(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags);

#endif
