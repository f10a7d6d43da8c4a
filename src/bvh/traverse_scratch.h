/* Where a planned batch keeps its scratch: one block, 64-byte aligned, from the allocator hooks
 * or the caller (vl_bvh_raycast_scratch); and the check of a caller's scratch that every
 * _scratch entry point (rays, sweeps, overlaps) makes. */
#ifndef VL_BVH_TRAVERSE_SCRATCH_H
#define VL_BVH_TRAVERSE_SCRATCH_H

#include "bvh/traverse_plan.h"

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

/* Whether the caller's scratch of `bytes` can hold `need` bytes: not NULL, aligned to
 * VL_BVH_SCRATCH_ALIGNMENT and large enough. */
static inline int vl_bvh_scratch_fits(const void* scratch, size_t bytes, size_t need) {
    return scratch && (uintptr_t)scratch % VL_BVH_SCRATCH_ALIGNMENT == 0 && bytes >= need;
}

/* Bytes of the block of the plan p for a batch of count rays. */
size_t vl_bvh_scratch_bytes(const vl_bvh_plan* p, uint32_t count);

/* The parts of the block (vl_bvh_scratch_bytes(p, count) bytes) of the plan p. */
vl_bvh_scratch vl_bvh_scratch_parts(const vl_bvh_plan* p, uint32_t count, void* block);

#endif
