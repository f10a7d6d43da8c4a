/* The BVH's parallel forms: how a batch is cut into items, shared by the entry points and tests. */
#ifndef VL_BVH_ENGINE_BLOCKS_H
#define VL_BVH_ENGINE_BLOCKS_H

#include <stdint.h>

#include <volley/bvh.h>

/* A batch of rays is cut into about VL_PARALLEL_RAY_BLOCKS blocks, a multiple of
 * VL_PARALLEL_RAY_GRAIN rays each, clamped to [VL_PARALLEL_RAY_MIN_BLOCK, VL_PARALLEL_RAY_MAX_BLOCK]
 * (the last block shorter): enough blocks to balance 16 workers, each long enough for the batched
 * traversal to pay, none past the batched traversal's own chunk. */
#define VL_PARALLEL_RAY_BLOCKS 64u
#define VL_PARALLEL_RAY_GRAIN 256u
#define VL_PARALLEL_RAY_MIN_BLOCK 512u
#define VL_PARALLEL_RAY_MAX_BLOCK 65536u

/* Rays per block for a batch of count rays (a function of count alone). */
uint32_t vl_bvh_parallel_ray_block(uint32_t count);

/* A batch of sweeps or overlap queries is cut into about VL_PARALLEL_QUERY_BLOCKS blocks, a
 * multiple of 64 queries each, clamped to [VL_PARALLEL_QUERY_MIN_BLOCK, VL_PARALLEL_QUERY_MAX_BLOCK]
 * (the last block shorter): a query costs far more than a ray, so blocks are shorter; none is past
 * the overlaps' scratch batch of 4096. */
#define VL_PARALLEL_QUERY_BLOCKS 64u
#define VL_PARALLEL_QUERY_MIN_BLOCK 128u
#define VL_PARALLEL_QUERY_MAX_BLOCK 4096u

/* Queries per block for a batch of count sweeps or overlap queries (a function of count alone). */
uint32_t vl_bvh_parallel_query_block(uint32_t count);

/* Blocks of `block` items that cover count items. */
static inline uint32_t vl_bvh_block_count(uint32_t count, uint32_t block) {
    return (uint32_t)(((uint64_t)count + block - 1) / block);
}

/* Block b of `block` items out of count: *first, its first item; returns its length (the last one
 * may be shorter). */
static inline uint32_t vl_bvh_block_at(uint32_t count, uint32_t block, uint32_t b, uint32_t* first) {
    *first = b * block;
    return count - *first < block ? count - *first : block;
}

#endif
