/* Overlaps on a context: the batch cut into blocks of queries by a rule of its size alone, each
 * block run on its worker's part of the context's scratch and appending to its own pair list in
 * the context; the lists are appended to the caller's buffer in block order afterwards. */
#include <stdatomic.h>

#include "bvh/engine/blocks.h"
#include "bvh/overlaps/overlaps.h"
#include "core/pair_buffer.h"
#include "core/tasks.h"

typedef struct overlap_task {
    const vl_context* ctx;
    const vl_bvh* bvh;
    const void* queries;
    uint32_t count, block;
    vl_ov_shape shape;
    size_t size;        /* of one query */
    atomic_int invalid; /* some block answered VL_ERR_INVALID_QUERY */
    atomic_int failed;  /* the worst other status of a block (0: none) */
} overlap_task;

static void overlap_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    overlap_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        uint32_t first, n = vl_bvh_block_at(t->count, t->block, b, &first);
        vl_pair_buffer* list = &t->ctx->lists[b];
        list->count = 0;
        vl_status st;
        const void* queries = (const char*)t->queries + t->size * first;
        /* a job system that broke the worker_count contract: the stack batches, the same pairs */
        void* scratch = worker < t->ctx->tasks.worker_count ? vl_context_worker_scratch(t->ctx, worker) : NULL;
        st = vl_bvh_overlap_on(t->bvh, queries, t->shape, n, list, scratch);
        if (st == VL_ERR_INVALID_QUERY)
            atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
        else if (st != VL_OK)
            atomic_store_explicit(&t->failed, (int)st, memory_order_relaxed);
    }
}

vl_status vl_bvh_overlap_on_context(vl_context* ctx, const vl_bvh* bvh, const void* queries, vl_ov_shape shape,
                                    uint32_t count, vl_pair_buffer* out) {
    if (count == 0) return VL_OK;
    overlap_task t;
    t.ctx = ctx, t.bvh = bvh, t.queries = queries, t.count = count, t.shape = shape;
    t.size = shape == VL_OV_BOXES ? sizeof(vl_aabb) : shape == VL_OV_CAPSULES ? sizeof(vl_capsule) : sizeof(vl_sphere);
    t.block = vl_bvh_parallel_query_block(count);
    if (t.block > count) t.block = count;
    const size_t bytes = vl_bvh_overlap_scratch_size(bvh, t.block);
    atomic_init(&t.invalid, 0);
    atomic_init(&t.failed, 0);
    const uint32_t blocks = vl_bvh_block_count(count, t.block);
    vl_status st = vl_context_reserve(ctx, bytes);
    if (st == VL_OK) st = vl_context_reserve_lists(ctx, blocks);
    if (st != VL_OK) return st;
    vl_tasks_run(ctx, overlap_range, blocks, 1, &t);
    int failed = atomic_load_explicit(&t.failed, memory_order_relaxed);
    if (failed) return (vl_status)failed;
    /* each block's pairs name its queries from 0: the block's first query is added back */
    for (uint32_t b = 0; b < blocks; b++) {
        vl_pair_buffer* list = &ctx->lists[b];
        for (uint32_t i = 0; i < list->count; i++) list->pairs[i].a += b * t.block;
    }
    st = vl_context_gather_lists(ctx, blocks, out);
    if (st != VL_OK) return st;
    return atomic_load_explicit(&t.invalid, memory_order_relaxed) ? VL_ERR_INVALID_QUERY : VL_OK;
}
