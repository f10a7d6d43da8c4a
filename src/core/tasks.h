/* Internal side of the task hook: running items through the context's job system, and the
 * context's per-worker scratch. */
#ifndef VL_CORE_TASKS_H
#define VL_CORE_TASKS_H

#include <stddef.h>

#include <volley/tasks.h>

struct vl_context {
    vl_task_system tasks; /* enqueue NULL: serial, worker_count 1 */
    unsigned char* scratch;
    size_t scratch_bytes; /* the whole block */
    size_t worker_bytes;  /* each worker's part, a multiple of VL_ALIGNMENT */
    vl_pair_buffer* lists; /* per-item pair lists of the calls that gather pairs */
    uint32_t list_count;
    unsigned char* shared; /* one block for a whole call (the sorted sets of a box prune) */
    size_t shared_bytes;
};

/* Runs fn over [0, items) through the context's job system (ranges of at least min_range items)
 * or, without one, or for a single item, as fn(0, items, 0, task_ctx) on the calling thread.
 * Returns when every item has run. fn must tolerate running an item twice only if the job system
 * breaks the NULL-enqueue contract (see tasks.h). */
void vl_tasks_run(const vl_context* ctx, vl_task_fn* fn, uint32_t items, uint32_t min_range, void* task_ctx);

/* Makes every worker's part of the scratch at least bytes long (aligned to VL_ALIGNMENT); grows
 * the block only when it is too small. VL_ERR_OUT_OF_MEMORY keeps the old block. */
vl_status vl_context_reserve(vl_context* ctx, size_t bytes);

/* At least items per-item pair lists in ctx->lists (new ones empty); grows only when too few.
 * VL_ERR_OUT_OF_MEMORY keeps the old ones. */
vl_status vl_context_reserve_lists(vl_context* ctx, uint32_t items);

/* A block of at least bytes (aligned to 64) in ctx->shared; grows only when too small.
 * VL_ERR_OUT_OF_MEMORY keeps the old block. */
vl_status vl_context_reserve_shared(vl_context* ctx, size_t bytes);

/* Appends lists[0..items) to out in item order. VL_ERR_TOO_LARGE when the total would pass 2^32 - 1 pairs, VL_ERR_OUT_OF_MEMORY
 * when out cannot grow: out unchanged on both. */
vl_status vl_context_gather_lists(const vl_context* ctx, uint32_t items, vl_pair_buffer* out);

/* Items [*i0, *i1) of piece k when n items are cut into pieces of `piece` (the last one shorter). */
static inline void vl_piece_range(uint32_t n, uint32_t piece, uint32_t k, uint32_t* i0, uint32_t* i1) {
    *i0 = k * piece;
    *i1 = n - *i0 < piece ? n : *i0 + piece;
}

/* The scratch of worker w (< worker_count), worker_bytes long; NULL while none was reserved. */
static inline void* vl_context_worker_scratch(const vl_context* ctx, uint32_t w) {
    return ctx->scratch ? ctx->scratch + ctx->worker_bytes * w : NULL;
}

#endif
