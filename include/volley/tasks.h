/* volley task hook and execution options: where a call runs and on whose memory.
 *
 * Every call that can run in parallel or on the caller's memory (builds, refits, ray casts,
 * sweeps, overlaps, box pruning) takes a last argument `const vl_exec* exec`:
 * - NULL (or every field zero): the calling thread, scratch from the allocator hooks;
 * - exec->scratch: the calling thread on the caller's scratch, nothing allocated but the output's
 *   growth. Each operation's _scratch_size function takes the call's own arguments (the tree, the
 *   count, the flags) and answers the bytes it needs whatever the queries or boxes: 0 when it needs
 *   none (or would refuse those arguments), SIZE_MAX when the count is too large for the call or
 *   the size does not fit a size_t;
 * - exec->context: the context's job system and its per-worker scratch, kept from call to call.
 * A broadphase takes its context once, at creation (vl_broadphase_desc.context).
 *
 * volley never starts a thread of its own. On a context, a call cuts its work into items (blocks
 * of rays, subtrees of a build or a refit, ranges of a broadphase commit's sweeps), hands them to
 * the user's enqueue callback and waits in the user's finish callback, in the style of Box2D v3's
 * enqueueTask / finishTask. The job system splits [0, item_count) into ranges of at least
 * min_range items (its choice, as it balances) and calls task(start, end, worker_index, task_ctx)
 * once per range, on any threads, with worker_index < worker_count and never two ranges with the
 * same worker_index at once. worker_index picks the per-worker scratch that the context keeps, so
 * that a range allocates nothing.
 *
 * enqueue returns a handle that volley passes to finish (which returns when every range has run),
 * or NULL: either the job system ran every range itself before returning (Box2D's convention), or
 * it could not take the work; volley counts the items run and, in the second case, runs them all
 * on the calling thread as worker 0. An enqueue that runs some ranges and then returns NULL breaks
 * this contract. A context without a hook (a NULL vl_task_system or a NULL enqueue) runs
 * everything on the calling thread, on the context's memory.
 *
 * Determinism: on a context a call cuts its work into items that depend on its input alone,
 * never on worker_count or on the ranges the job system makes, and each item writes its own part
 * of the output, so its answers are identical (every bit of every field) for any worker count,
 * any job system, and without one (box pruning: for any worker count and job system; a context
 * without a job system gives the pairs in the order of the call without a context). Each call
 * says how its answers on a context compare with its answers without one.
 *
 * A vl_context is not thread-safe: one call at a time on it (one per calling thread). */
#ifndef VOLLEY_TASKS_H
#define VOLLEY_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include <volley/base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most workers a task system may declare. */
#define VL_MAX_WORKERS 256u

/* A range of volley's work: items [start, end) on worker worker_index. */
typedef void vl_task_fn(uint32_t start, uint32_t end, uint32_t worker_index, void* task_ctx);

/* Starts running task over [0, item_count) in ranges of at least min_range items (the last may be
 * shorter); returns a handle for finish, or NULL (see above). */
typedef void* vl_enqueue_task_fn(vl_task_fn* task, uint32_t item_count, uint32_t min_range, void* task_ctx,
                                 void* user_ctx);

/* Returns once every range of the task behind handle has run. */
typedef void vl_finish_task_fn(void* handle, void* user_ctx);

/* The user's job system. */
typedef struct vl_task_system {
    vl_enqueue_task_fn* enqueue; /* NULL: everything runs on the calling thread */
    vl_finish_task_fn* finish;   /* needed with an enqueue */
    void* user_ctx;              /* passed to both */
    uint32_t worker_count;       /* 1..VL_MAX_WORKERS: worker indices are below it */
} vl_task_system;

/* A task system and the per-worker scratch of the calls that run on it. */
typedef struct vl_context vl_context;

/* Alignment of a caller's scratch (vl_exec.scratch). */
#define VL_SCRATCH_ALIGNMENT 64u

/* Where a call runs and on whose memory (see above). At most one of context and scratch is set:
 * a call given both answers VL_ERR_INVALID_ARGUMENT. scratch must be aligned to
 * VL_SCRATCH_ALIGNMENT, hold scratch_bytes bytes, and not be in use by a call running at the same
 * time. */
typedef struct vl_exec {
    vl_context* context;
    void* scratch;
    size_t scratch_bytes;
} vl_exec;

/* Creates a context over a copy of *tasks (NULL, or a NULL enqueue: no task system, one worker,
 * everything serial). Errors: VL_ERR_INVALID_ARGUMENT (out NULL; with an enqueue: no finish, or
 * worker_count 0 or past VL_MAX_WORKERS), VL_ERR_OUT_OF_MEMORY; *out is then NULL. */
VL_API vl_status vl_context_create(const vl_task_system* tasks, vl_context** out);

/* Frees the context and its scratch; NULL is fine. No call may be running on it. */
VL_API void vl_context_destroy(vl_context* ctx);

/* The workers a call may use (1 without a task system); 0 for NULL. */
VL_API uint32_t vl_context_get_worker_count(const vl_context* ctx);

/* Bytes of scratch the context holds (it grows to the largest call made on it and stays). */
VL_API size_t vl_context_get_scratch_bytes(const vl_context* ctx);

/* ---- the default job system: a small pthread pool ------------------------------------------- */

/* worker_count workers: the thread that calls finish is worker 0 and works too, worker_count - 1
 * threads wait for work. Ranges are claimed from a shared counter. One task at a time: a second
 * enqueue (from another thread) waits until the first one's finish; a task must not enqueue on
 * the same pool. */
typedef struct vl_thread_pool vl_thread_pool;

/* Errors: VL_ERR_INVALID_ARGUMENT (out NULL, worker_count 0 or past VL_MAX_WORKERS),
 * VL_ERR_OUT_OF_MEMORY (also when a thread cannot be started); *out is then NULL. */
VL_API vl_status vl_thread_pool_create(uint32_t worker_count, vl_thread_pool** out);

/* Stops and joins the threads; NULL is fine. No task may be in flight. */
VL_API void vl_thread_pool_destroy(vl_thread_pool* pool);

/* The pool as a task system for vl_context_create (all zero for NULL). */
VL_API vl_task_system vl_thread_pool_get_task_system(vl_thread_pool* pool);

#ifdef __cplusplus
}
#endif

#endif
