/* Where a planned batch of rays keeps its scratch: one block, 64-byte aligned, from the allocator
 * hooks, the caller or a context. */
#ifndef VL_BVH_RAYS_RAY_SCRATCH_H
#define VL_BVH_RAYS_RAY_SCRATCH_H

#include "bvh/rays/ray_plan.h"

/* The block's parts, in this order. */
typedef struct vl_bvh_scratch {
    void* walks;        /* vl_bvh_walks_scratch() bytes */
    uint32_t* queue;    /* 2 VL_QUEUE entries: the queue's ids, then its start nodes */
    vl_hit* chunk_hits; /* ordered batches: a chunk's answers (chunk), */
    uint32_t* perm;     /* the rays' order (count), */
    uint32_t* cursor;   /* the order's cursors (chunks), */
    uint16_t* keys;     /* the rays' cells (count + 1) */
    float* rec;         /* a chunk's records (chunk) */
    uint32_t* arena;    /* the lists: arena_size + VL_LIST_SPARE entries */
    uint32_t* masks;    /* chunk / 2 + 2 entries */
    uint32_t* seeds;    /* walks: vl_bvh_seed_bytes(chunk) bytes */
} vl_bvh_scratch;

/* Bytes of the block of the plan p for a batch of count rays. */
size_t vl_bvh_scratch_bytes(const vl_bvh_plan* p, uint32_t count);

/* The parts of the block (vl_bvh_scratch_bytes(p, count) bytes) of the plan p. */
vl_bvh_scratch vl_bvh_scratch_parts(const vl_bvh_plan* p, uint32_t count, void* block);

#endif
