/* The context: a copy of the user's task system and a per-worker scratch area grown once; the
 * runner that hands items to the job system and tells a declined enqueue from one run inline. */
#include "core/tasks.h"

#include <stdatomic.h>
#include <string.h>

#include "core/alloc.h"

vl_status vl_context_create(const vl_task_system* tasks, vl_context** out) {
    if (!out) return VL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    vl_task_system t = {NULL, NULL, NULL, 1};
    if (tasks && tasks->enqueue) {
        if (!tasks->finish || tasks->worker_count == 0 || tasks->worker_count > VL_MAX_WORKERS)
            return VL_ERR_INVALID_ARGUMENT;
        t = *tasks;
    }
    vl_context* ctx = vl_mem_calloc(sizeof *ctx);
    if (!ctx) return VL_ERR_OUT_OF_MEMORY;
    ctx->tasks = t;
    if (!t.enqueue) ctx->tasks.worker_count = 1; /* no job system: one worker, the caller */
    *out = ctx;
    return VL_OK;
}

void vl_context_destroy(vl_context* ctx) {
    if (!ctx) return;
    vl_mem_free(ctx->scratch, ctx->scratch_bytes);
    for (uint32_t k = 0; k < ctx->list_count; k++) vl_pair_buffer_free(&ctx->lists[k]);
    vl_mem_free(ctx->lists, sizeof(vl_pair_buffer) * ctx->list_count);
    vl_mem_free(ctx->shared, ctx->shared_bytes);
    vl_mem_free(ctx, sizeof *ctx);
}

uint32_t vl_context_get_worker_count(const vl_context* ctx) { return ctx ? ctx->tasks.worker_count : 0; }

size_t vl_context_get_scratch_bytes(const vl_context* ctx) { return ctx ? ctx->scratch_bytes : 0; }

vl_status vl_context_reserve(vl_context* ctx, size_t bytes) {
    if (bytes <= ctx->worker_bytes) return VL_OK;
    if (bytes > SIZE_MAX / 2 / VL_MAX_WORKERS) return VL_ERR_TOO_LARGE;
    size_t each = (bytes + VL_ALIGNMENT - 1) & ~(size_t)(VL_ALIGNMENT - 1);
    size_t total = each * ctx->tasks.worker_count;
    unsigned char* fresh = vl_mem_alloc(total);
    if (!fresh) return VL_ERR_OUT_OF_MEMORY;
    vl_mem_free(ctx->scratch, ctx->scratch_bytes);
    ctx->scratch = fresh;
    ctx->scratch_bytes = total;
    ctx->worker_bytes = each;
    return VL_OK;
}

vl_status vl_context_reserve_lists(vl_context* ctx, uint32_t items) {
    if (items <= ctx->list_count) return VL_OK;
    vl_pair_buffer* fresh = vl_mem_alloc(sizeof(vl_pair_buffer) * items);
    if (!fresh) return VL_ERR_OUT_OF_MEMORY;
    if (ctx->list_count) memcpy(fresh, ctx->lists, sizeof(vl_pair_buffer) * ctx->list_count);
    memset(fresh + ctx->list_count, 0, sizeof(vl_pair_buffer) * (items - ctx->list_count));
    vl_mem_free(ctx->lists, sizeof(vl_pair_buffer) * ctx->list_count);
    ctx->lists = fresh;
    ctx->list_count = items;
    return VL_OK;
}

vl_status vl_context_reserve_shared(vl_context* ctx, size_t bytes) {
    if (bytes <= ctx->shared_bytes) return VL_OK;
    if (bytes > SIZE_MAX / 2) return VL_ERR_TOO_LARGE;
    size_t each = (bytes + 63u) & ~(size_t)63u;
    unsigned char* fresh = vl_mem_alloc(each);
    if (!fresh) return VL_ERR_OUT_OF_MEMORY;
    vl_mem_free(ctx->shared, ctx->shared_bytes);
    ctx->shared = fresh;
    ctx->shared_bytes = each;
    return VL_OK;
}

vl_status vl_context_gather_lists(const vl_context* ctx, uint32_t items, vl_pair_buffer* out) {
    uint64_t total = out->count;
    for (uint32_t k = 0; k < items; k++) total += ctx->lists[k].count;
    if (total > UINT32_MAX) return VL_ERR_TOO_LARGE;
    if (vl_pair_buffer_reserve(out, (uint32_t)total) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    for (uint32_t k = 0; k < items; k++) {
        const vl_pair_buffer* l = &ctx->lists[k];
        if (l->count) memcpy(out->pairs + out->count, l->pairs, sizeof(vl_pair) * l->count);
        out->count += l->count;
    }
    return VL_OK;
}

/* What the job system runs: the caller's fn, and a count of the items it has run. */
typedef struct counted_task {
    vl_task_fn* fn;
    void* task_ctx;
    atomic_uint done;
} counted_task;

static void run_counted(uint32_t start, uint32_t end, uint32_t worker_index, void* task_ctx) {
    counted_task* t = task_ctx;
    t->fn(start, end, worker_index, t->task_ctx);
    atomic_fetch_add_explicit(&t->done, end - start, memory_order_relaxed);
}

void vl_tasks_run(const vl_context* ctx, vl_task_fn* fn, uint32_t items, uint32_t min_range, void* task_ctx) {
    if (items == 0) return;
    const vl_task_system* ts = &ctx->tasks;
    if (!ts->enqueue || items == 1) {
        fn(0, items, 0, task_ctx);
        return;
    }
    counted_task t;
    t.fn = fn;
    t.task_ctx = task_ctx;
    atomic_init(&t.done, 0);
    void* handle = ts->enqueue(run_counted, items, min_range ? min_range : 1, &t, ts->user_ctx);
    if (handle) {
        ts->finish(handle, ts->user_ctx);
        return;
    }
    /* NULL: run inline by the job system (every item counted), or declined (none) */
    if (atomic_load_explicit(&t.done, memory_order_relaxed) != items) fn(0, items, 0, task_ctx);
}
