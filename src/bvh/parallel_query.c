/* The parallel sweeps and overlaps: the batch cut into blocks of queries by a rule of its size
 * alone, each block run by the _scratch form in its worker's part of the context's scratch.
 * Sweeps write their own slice of hits and contacts; overlaps append to the block's pair list in
 * the context, and the lists are appended to the caller's buffer in block order afterwards. */
#include <stdatomic.h>

#include "bvh/bvh_internal.h"
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
    const vl_context* ctx;
    const vl_bvh* bvh;
    const void* sweeps;
    vl_hit* hits;
    vl_contact* contacts;
    uint32_t count, block, flags;
    int boxes;
    size_t bytes;       /* scratch of one block */
    atomic_int invalid; /* some block answered VL_ERR_INVALID_QUERY */
} sweep_task;

static vl_status sweep_block(const sweep_task* t, uint32_t first, uint32_t n, void* scratch, size_t bytes) {
    vl_contact* c = t->contacts ? t->contacts + first : NULL;
    if (t->boxes)
        return vl_bvh_sweep_boxes_scratch(t->bvh, (const vl_box_sweep*)t->sweeps + first, n, t->flags, t->hits + first,
                                          c, scratch, bytes);
    return vl_bvh_sweep_spheres_scratch(t->bvh, (const vl_sphere_sweep*)t->sweeps + first, n, t->flags,
                                        t->hits + first, c, scratch, bytes);
}

/* One block without the context's scratch (a job system that broke the worker_count contract, or
 * no memory for the workers' scratch): the same answers, one sweep at a time. */
static vl_status sweep_block_alone(const sweep_task* t, uint32_t first, uint32_t n) {
    int invalid = 0;
    for (uint32_t i = first; i < first + n; i++) {
        vl_contact* c = t->contacts ? t->contacts + i : NULL;
        vl_status st = t->boxes ? vl_bvh_sweep_box1(t->bvh, (const vl_box_sweep*)t->sweeps + i, t->flags, t->hits + i, c)
                                : vl_bvh_sweep_sphere1(t->bvh, (const vl_sphere_sweep*)t->sweeps + i, t->flags,
                                                       t->hits + i, c);
        invalid |= st != VL_OK;
    }
    return invalid ? VL_ERR_INVALID_QUERY : VL_OK;
}

static void sweep_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    sweep_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        uint32_t first, n = vl_bvh_block_at(t->count, t->block, b, &first);
        vl_status st = worker < t->ctx->tasks.worker_count
                           ? sweep_block(t, first, n, vl_context_worker_scratch(t->ctx, worker), t->bytes)
                           : sweep_block_alone(t, first, n);
        if (st != VL_OK) atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
    }
}

static vl_status sweep_parallel(vl_context* ctx, const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count,
                                uint32_t flags, vl_hit* hits, vl_contact* contacts) {
    if (!ctx || !bvh || (count && (!sweeps || !hits))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~(VL_RAY_ANY | VL_RAY_GROUP_BY_ORIGIN)) return VL_ERR_INVALID_FLAGS;
    if (count == 0) return VL_OK;
    sweep_task t;
    t.ctx = ctx, t.bvh = bvh, t.sweeps = sweeps, t.hits = hits, t.contacts = contacts;
    t.count = count, t.flags = flags, t.boxes = boxes;
    t.block = vl_bvh_parallel_query_block(count);
    if (t.block > count) t.block = count;
    t.bytes = vl_bvh_sweep_scratch_size(bvh, t.block, flags);
    atomic_init(&t.invalid, 0);
    const uint32_t blocks = vl_bvh_block_count(count, t.block);
    if (vl_context_reserve(ctx, t.bytes) != VL_OK) return sweep_block_alone(&t, 0, count);
    vl_tasks_run(ctx, sweep_range, blocks, 1, &t);
    return atomic_load_explicit(&t.invalid, memory_order_relaxed) ? VL_ERR_INVALID_QUERY : VL_OK;
}

vl_status vl_bvh_sweep_spheres_parallel(vl_context* ctx, const vl_bvh* bvh, const vl_sphere_sweep* sweeps,
                                        uint32_t count, uint32_t flags, vl_hit* hits, vl_contact* contacts) {
    return sweep_parallel(ctx, bvh, sweeps, 0, count, flags, hits, contacts);
}

vl_status vl_bvh_sweep_boxes_parallel(vl_context* ctx, const vl_bvh* bvh, const vl_box_sweep* sweeps, uint32_t count,
                                      uint32_t flags, vl_hit* hits, vl_contact* contacts) {
    return sweep_parallel(ctx, bvh, sweeps, 1, count, flags, hits, contacts);
}

/* ---- overlaps --------------------------------------------------------------------------------- */

typedef struct overlap_task {
    const vl_context* ctx;
    const vl_bvh* bvh;
    const void* queries;
    uint32_t count, block;
    int spheres;
    size_t bytes;       /* scratch of one block */
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
        if (worker < t->ctx->tasks.worker_count) {
            void* scratch = vl_context_worker_scratch(t->ctx, worker);
            st = t->spheres ? vl_bvh_overlap_spheres_scratch(t->bvh, (const vl_sphere*)t->queries + first, n, list,
                                                             scratch, t->bytes)
                            : vl_bvh_overlap_boxes_scratch(t->bvh, (const vl_aabb*)t->queries + first, n, list,
                                                           scratch, t->bytes);
        } else { /* a job system that broke the worker_count contract: the stack batches, the same pairs */
            st = t->spheres ? vl_bvh_overlap_spheres(t->bvh, (const vl_sphere*)t->queries + first, n, list)
                            : vl_bvh_overlap_boxes(t->bvh, (const vl_aabb*)t->queries + first, n, list);
        }
        if (st == VL_ERR_INVALID_QUERY)
            atomic_store_explicit(&t->invalid, 1, memory_order_relaxed);
        else if (st != VL_OK)
            atomic_store_explicit(&t->failed, (int)st, memory_order_relaxed);
    }
}

static vl_status overlap_parallel(vl_context* ctx, const vl_bvh* bvh, const void* queries, int spheres,
                                  uint32_t count, vl_pair_buffer* out) {
    if (!ctx || !bvh || !vl_pair_buffer_is_valid(out) || (count && !queries)) return VL_ERR_INVALID_ARGUMENT;
    if (count == 0) return VL_OK;
    overlap_task t;
    t.ctx = ctx, t.bvh = bvh, t.queries = queries, t.count = count, t.spheres = spheres;
    t.block = vl_bvh_parallel_query_block(count);
    if (t.block > count) t.block = count;
    t.bytes = vl_bvh_overlap_scratch_size(bvh, t.block);
    atomic_init(&t.invalid, 0);
    atomic_init(&t.failed, 0);
    const uint32_t blocks = vl_bvh_block_count(count, t.block);
    vl_status st = vl_context_reserve(ctx, t.bytes);
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

vl_status vl_bvh_overlap_boxes_parallel(vl_context* ctx, const vl_bvh* bvh, const vl_aabb* queries, uint32_t count,
                                        vl_pair_buffer* out) {
    return overlap_parallel(ctx, bvh, queries, 0, count, out);
}

vl_status vl_bvh_overlap_spheres_parallel(vl_context* ctx, const vl_bvh* bvh, const vl_sphere* queries,
                                          uint32_t count, vl_pair_buffer* out) {
    return overlap_parallel(ctx, bvh, queries, 1, count, out);
}
