/* The rules that cut a batch into items on a context (blocks.h): functions of the count alone. */
#include "bvh/engine/blocks.h"

uint32_t vl_bvh_parallel_ray_block(uint32_t count) {
    uint32_t block = (uint32_t)(((uint64_t)count + VL_PARALLEL_RAY_BLOCKS - 1) / VL_PARALLEL_RAY_BLOCKS);
    block = (block + VL_PARALLEL_RAY_GRAIN - 1) / VL_PARALLEL_RAY_GRAIN * VL_PARALLEL_RAY_GRAIN;
    if (block < VL_PARALLEL_RAY_MIN_BLOCK) block = VL_PARALLEL_RAY_MIN_BLOCK;
    if (block > VL_PARALLEL_RAY_MAX_BLOCK) block = VL_PARALLEL_RAY_MAX_BLOCK;
    return block;
}

uint32_t vl_bvh_parallel_query_block(uint32_t count) {
    uint32_t block = (uint32_t)(((uint64_t)count + VL_PARALLEL_QUERY_BLOCKS - 1) / VL_PARALLEL_QUERY_BLOCKS);
    block = (block + 63u) / 64u * 64u;
    if (block < VL_PARALLEL_QUERY_MIN_BLOCK) block = VL_PARALLEL_QUERY_MIN_BLOCK;
    if (block > VL_PARALLEL_QUERY_MAX_BLOCK) block = VL_PARALLEL_QUERY_MAX_BLOCK;
    return block;
}
