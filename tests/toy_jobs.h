/* Toy job systems for the tests of the parallel entry points: threads started per task, volley's
 * default pool, one that runs every range inline and returns NULL (Box2D's convention), and one
 * whose enqueue declines every task. One include per test program. */
#ifndef VL_TEST_TOY_JOBS_H
#define VL_TEST_TOY_JOBS_H

#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"

/* Threads started per task, one per worker; each claims ranges of min_range items from a shared
 * counter. */
typedef struct toy_task {
    vl_task_fn* fn;
    void* task_ctx;
    uint32_t items, range;
    atomic_uint next;
    pthread_t threads[VL_MAX_WORKERS];
    uint32_t index[VL_MAX_WORKERS];
    uint32_t workers;
} toy_task;

typedef struct toy_system {
    uint32_t workers;
    toy_task task; /* one task at a time */
    long enqueued, inlined, declined;
} toy_system;

typedef struct toy_arg {
    toy_task* task;
    uint32_t worker;
} toy_arg;

static toy_arg g_toy_args[VL_MAX_WORKERS];

static inline void* toy_thread(void* arg) {
    toy_arg* a = arg;
    toy_task* t = a->task;
    for (;;) {
        uint32_t start = atomic_fetch_add(&t->next, t->range);
        if (start >= t->items) break;
        uint32_t end = t->items - start < t->range ? t->items : start + t->range;
        t->fn(start, end, a->worker, t->task_ctx);
    }
    return NULL;
}

static inline void* toy_enqueue(vl_task_fn* fn, uint32_t items, uint32_t min_range, void* task_ctx, void* user) {
    toy_system* s = user;
    toy_task* t = &s->task;
    t->fn = fn, t->task_ctx = task_ctx, t->items = items;
    t->range = min_range;
    atomic_store(&t->next, 0);
    t->workers = s->workers;
    for (uint32_t w = 0; w < s->workers; w++) {
        g_toy_args[w].task = t, g_toy_args[w].worker = w;
        if (pthread_create(&t->threads[w], NULL, toy_thread, &g_toy_args[w]) != 0) {
            /* could not start them all: the ones started finish the work */
            t->workers = w;
            break;
        }
    }
    if (t->workers == 0) { /* none at all: run it here, Box2D style */
        fn(0, items, 0, task_ctx);
        return NULL;
    }
    s->enqueued++;
    return t;
}

static inline void toy_finish(void* handle, void* user) {
    (void)user;
    toy_task* t = handle;
    for (uint32_t w = 0; w < t->workers; w++) pthread_join(t->threads[w], NULL);
}

/* Runs every range here, in reverse order of ranges, under made-up worker indices, and returns NULL. */
static inline void* inline_enqueue(vl_task_fn* fn, uint32_t items, uint32_t min_range, void* task_ctx, void* user) {
    toy_system* s = user;
    uint32_t ranges = (items + min_range - 1) / min_range;
    for (uint32_t r = ranges; r-- > 0;) {
        uint32_t start = r * min_range, end = start + min_range < items ? start + min_range : items;
        fn(start, end, r % s->workers, task_ctx);
    }
    s->inlined++;
    return NULL;
}

/* Declines every task (returns NULL without running it): volley runs it on the caller. */
static inline void* failing_enqueue(vl_task_fn* fn, uint32_t items, uint32_t min_range, void* task_ctx, void* user) {
    (void)fn, (void)items, (void)min_range, (void)task_ctx;
    toy_system* s = user;
    s->declined++;
    return NULL;
}

static inline void never_finish(void* handle, void* user) {
    (void)handle, (void)user;
    CHECK(0, "finish called for a task that enqueue did not take");
}

enum { SYS_TOY, SYS_POOL, SYS_INLINE, SYS_FAILING, SYS_COUNT };
static const char* const k_sys_names[SYS_COUNT] = {"toy threads", "default pool", "inline", "failing enqueue"};
static const uint32_t k_workers[] = {1, 2, 3, 4, 7};
#define WORKER_CASES (sizeof k_workers / sizeof k_workers[0])

/* A context over job system `sys` with `workers` workers (pool made when needed). */
static inline vl_context* make_context(int sys, uint32_t workers, toy_system* toy, vl_thread_pool** pool) {
    vl_task_system ts = {NULL, NULL, toy, workers};
    *pool = NULL;
    memset(toy, 0, sizeof *toy);
    toy->workers = workers;
    switch (sys) {
    case SYS_TOY: ts.enqueue = toy_enqueue, ts.finish = toy_finish; break;
    case SYS_POOL:
        CHECK(vl_thread_pool_create(workers, pool) == VL_OK, "pool of %u", workers);
        ts = vl_thread_pool_get_task_system(*pool);
        break;
    case SYS_INLINE: ts.enqueue = inline_enqueue, ts.finish = never_finish; break;
    default: ts.enqueue = failing_enqueue, ts.finish = never_finish; break;
    }
    vl_context* ctx = NULL;
    CHECK(vl_context_create(&ts, &ctx) == VL_OK && ctx, "context");
    CHECK(vl_context_get_worker_count(ctx) == workers, "workers");
    return ctx;
}

#endif
