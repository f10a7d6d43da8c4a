/* Sweeps and overlaps on a context: the batch cut into blocks of queries by a rule of its size
 * alone. Sweeps write their own slice of hits and contacts (on the C stack); overlaps run on their
 * worker's part of the context's scratch, append to the block's pair list in the context, and the
 * lists are appended to the caller's buffer in block order afterwards. */
#include <stdatomic.h>

#include "bvh/bvh_internal.h"
#include "bvh/exec.h"
#include "bvh/parallel.h"
#include "core/pair_buffer.h"
#include "core/tasks.h"

uint32_t vl_bvh_parallel_query_block(uint32_t count) {
    uint32_t block = (uint32_t)(((uint64_t)count + VL_PARALLEL_QUERY_BLOCKS - 1) / VL_PARALLEL_QUERY_BLOCKS);
    block = (block + 63u) / 64u * 64u;
    if (block < VL_PARALLEL_QUERY_MIN_BLOCK) block = VL_PARALLEL_QUERY_MIN_BLOCK;
    if (block > VL_PARALLEL_QUERY_MAX_BLOCK) block = VL_PARALLEL_QUERY_MAX_BLOCK;
    return block;
}

/* ---- sweeps ----------------------------------------------------------------------------------- */

typedef struct sweep_task {
    const vl_bvh* bvh;
    const void* sweeps;
    vl_hit* hits;
    vl_contact* contacts;
    uint32_t count, block, flags;
    bool boxes;
    size_t size;        /* of one sweep */
    atomic_int invalid; /* some block answered VL_ERR_INVALID_QUERY */
} sweep_task;

static void sweep_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker; /* the sweeps need no scratch */
    sweep_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        uint32_t first, n = vl_bvh_block_at(t->count, t->block, b, &first);
        vl_status st = vl_bvh_sweep_on(t->bvh, (const char*)t->sweeps + t->size * first, t->boxes, n, t->flags,
                                       t->hits + first, t->contacts ? t->contacts + first : NULL);
        if (st != VL_OK) atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
    }
}

vl_status vl_bvh_sweep_on_context(vl_context* ctx, const vl_bvh* bvh, const void* sweeps, bool boxes, uint32_t count,
                                  uint32_t flags, vl_hit* hits, vl_contact* contacts) {
    if (count == 0) return VL_OK;
    sweep_task t;
    t.bvh = bvh, t.sweeps = sweeps, t.hits = hits, t.contacts = contacts;
    t.count = count, t.flags = flags, t.boxes = boxes;
    t.size = boxes ? sizeof(vl_box_sweep) : sizeof(vl_sphere_sweep);
    t.block = vl_bvh_parallel_query_block(count);
    if (t.block > count) t.block = count;
    atomic_init(&t.invalid, 0);
    vl_tasks_run(ctx, sweep_range, vl_bvh_block_count(count, t.block), 1, &t);
    return atomic_load_explicit(&t.invalid, memory_order_relaxed) ? VL_ERR_INVALID_QUERY : VL_OK;
}

/* ---- overlaps --------------------------------------------------------------------------------- */

typedef struct overlap_task {
    const vl_context* ctx;
    const vl_bvh* bvh;
    const void* queries;
    uint32_t count, block;
    bool spheres;
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
        st = vl_bvh_overlap_on(t->bvh, queries, t->spheres, n, list, scratch);
        if (st == VL_ERR_INVALID_QUERY)
            atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
        else if (st != VL_OK)
            atomic_store_explicit(&t->failed, (int)st, memory_order_relaxed);
    }
}

vl_status vl_bvh_overlap_on_context(vl_context* ctx, const vl_bvh* bvh, const void* queries, bool spheres,
                                    uint32_t count, vl_pair_buffer* out) {
    if (count == 0) return VL_OK;
    overlap_task t;
    t.ctx = ctx, t.bvh = bvh, t.queries = queries, t.count = count, t.spheres = spheres;
    t.size = spheres ? sizeof(vl_sphere) : sizeof(vl_aabb);
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
