/* vl_bvh_raycast on a context: the batch cut into blocks of rays by a rule of its size alone, each
 * block traced on its worker's part of the context's scratch. */
#include <stdatomic.h>

#include "bvh/engine/blocks.h"
#include "bvh/rays/rays.h"
#include "bvh/tree/tree.h"
#include "core/tasks.h"

typedef struct raycast_task {
    const vl_context* ctx;
    const vl_bvh* bvh;
    const vl_ray* rays;
    vl_hit* hits;
    uint32_t count, block, flags;
    size_t bytes;        /* scratch of one block */
    atomic_int invalid;  /* some block answered VL_ERR_INVALID_QUERY */
} raycast_task;

static void raycast_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    raycast_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        uint32_t first, n = vl_bvh_block_at(t->count, t->block, b, &first);
        vl_status st;
        if (worker < t->ctx->tasks.worker_count)
            st = vl_bvh_raycast_on(t->bvh, t->rays + first, n, t->flags, t->hits + first,
                                   t->bytes ? vl_context_worker_scratch(t->ctx, worker) : NULL);
        else /* a job system that broke the worker_count contract: the same answers, scratch from the hooks */
            st = vl_bvh_raycast_on(t->bvh, t->rays + first, n, t->flags, t->hits + first, NULL);
        if (st != VL_OK) atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
    }
}

vl_status vl_bvh_raycast_on_context(vl_context* ctx, const vl_bvh* bvh, const vl_ray* rays, uint32_t count,
                                    uint32_t flags, vl_hit* hits) {
    if (count == 0) return VL_OK;
    raycast_task t;
    t.ctx = ctx, t.bvh = bvh, t.rays = rays, t.hits = hits;
    t.count = count, t.flags = flags;
    t.block = vl_bvh_parallel_ray_block(count);
    if (t.block > count) t.block = count;
    t.bytes = vl_bvh_raycast_scratch_size(bvh, t.block, flags);
    atomic_init(&t.invalid, 0);
    const uint32_t blocks = vl_bvh_block_count(count, t.block);
    if (vl_context_reserve(ctx, t.bytes) != VL_OK) {
        /* no room for the workers' scratch: the blocks in turn on the calling thread, each with
         * the hooks' scratch (or none: one ray at a time), the same answers */
        vl_status worst = VL_OK;
        for (uint32_t b = 0; b < blocks; b++) {
            uint32_t first, n = vl_bvh_block_at(count, t.block, b, &first);
            if (vl_bvh_raycast_on(bvh, rays + first, n, flags, hits + first, NULL) != VL_OK) worst = VL_ERR_INVALID_QUERY;
        }
        return worst;
    }
    vl_tasks_run(ctx, raycast_range, blocks, 1, &t);
    return atomic_load_explicit(&t.invalid, memory_order_relaxed) ? VL_ERR_INVALID_QUERY : VL_OK;
}
