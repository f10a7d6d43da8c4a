/* The default job system: worker_count - 1 threads that wait for a task (spinning a little, then
 * asleep on a condition variable) and claim its ranges from a shared counter; the thread in finish
 * claims them too, closes the task, then waits the same way for the threads that joined it (a
 * thread that arrives after the close runs nothing, so a thread the scheduler has not run yet
 * never holds finish up). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "compiler.h"
#include "core/alloc.h"
#include "core/tasks.h"

struct vl_thread_pool;

typedef struct pool_thread {
    struct vl_thread_pool* pool;
    pthread_t thread;
    uint32_t index;
} pool_thread;

struct vl_thread_pool {
    pthread_mutex_t busy; /* held from enqueue to finish: one task at a time */
    pthread_mutex_t lock; /* the condition variables' */
    pthread_cond_t wake, done;
    pool_thread* threads;
    uint32_t workers;
    atomic_uint generation; /* bumped by each enqueue, under lock */
    atomic_int quit;
    atomic_uint running; /* threads that joined the current task and are still inside it */
    atomic_int closed;   /* 1 from finish's close to the next enqueue: no thread may join */
    /* the current task, written under lock before the generation moves */
    vl_task_fn* fn;
    void* task_ctx;
    uint32_t items, range;
    atomic_uint next; /* the first item not yet claimed */
};

/* How long a thread polls a flag before it sleeps: a frame's calls come back to back with serial
 * work between them (a broadphase's updates, then its commit), and a sleeping thread takes tens
 * of microseconds to wake, as long as a block of rays takes to trace. A count of pauses would
 * not do: one pause is 1.5 to 25 ns depending on the CPU. */
#define VL_POOL_SPIN_NS 1000000u

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


/* Claims and runs ranges of the current task until none is left. */
static void run_ranges(struct vl_thread_pool* p, uint32_t worker) {
    const uint32_t items = p->items, range = p->range;
    for (;;) {
        uint32_t start = atomic_fetch_add_explicit(&p->next, range, memory_order_relaxed);
        if (start >= items) return;
        uint32_t end = items - start < range ? items : start + range;
        p->fn(start, end, worker, p->task_ctx);
    }
}

static void* thread_main(void* arg) {
    pool_thread* self = arg;
    struct vl_thread_pool* p = self->pool;
    unsigned seen = 0;
    for (;;) {
        for (uint64_t end = now_ns() + VL_POOL_SPIN_NS;
             atomic_load_explicit(&p->generation, memory_order_acquire) == seen &&
             !atomic_load_explicit(&p->quit, memory_order_relaxed) && now_ns() < end;)
            vl_cpu_pause();
        pthread_mutex_lock(&p->lock);
        while (!atomic_load_explicit(&p->quit, memory_order_relaxed) &&
               atomic_load_explicit(&p->generation, memory_order_acquire) == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        pthread_mutex_unlock(&p->lock);
        if (atomic_load_explicit(&p->quit, memory_order_relaxed)) break;
        seen = atomic_load_explicit(&p->generation, memory_order_acquire);
        /* join, then look (finish closes, then looks at running: one of the two sees the other) */
        atomic_fetch_add_explicit(&p->running, 1, memory_order_seq_cst);
        if (!atomic_load_explicit(&p->closed, memory_order_seq_cst)) run_ranges(p, self->index);
        if (atomic_fetch_sub_explicit(&p->running, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
    return NULL;
}

static void* pool_enqueue(vl_task_fn* task, uint32_t item_count, uint32_t min_range, void* task_ctx, void* user_ctx) {
    struct vl_thread_pool* p = user_ctx;
    pthread_mutex_lock(&p->busy);
    p->fn = task;
    p->task_ctx = task_ctx;
    p->items = item_count;
    /* about four ranges per worker, so that a slow one is shared out */
    uint32_t range = item_count / (4 * p->workers);
    p->range = range > min_range ? range : (min_range ? min_range : 1);
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->closed, 0, memory_order_seq_cst); /* publishes the task to joiners */
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release); /* publishes the task */
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    return p;
}

static void pool_finish(void* handle, void* user_ctx) {
    (void)user_ctx;
    struct vl_thread_pool* p = handle;
    run_ranges(p, 0);
    atomic_store_explicit(&p->closed, 1, memory_order_seq_cst);
    for (uint64_t end = now_ns() + VL_POOL_SPIN_NS; atomic_load_explicit(&p->running, memory_order_seq_cst) &&
                                                    now_ns() < end;)
        vl_cpu_pause();
    pthread_mutex_lock(&p->lock);
    while (atomic_load_explicit(&p->running, memory_order_seq_cst)) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&p->busy);
}

static void pool_free(struct vl_thread_pool* p) {
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->busy);
    vl_mem_free(p->threads, sizeof(pool_thread) * p->workers);
    vl_mem_free(p, sizeof *p);
}

/* Stops and joins the first `started` threads. */
static void pool_stop(struct vl_thread_pool* p, uint32_t started) {
    pthread_mutex_lock(&p->lock);
    atomic_store_explicit(&p->quit, 1, memory_order_relaxed);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (uint32_t i = 1; i <= started; i++) pthread_join(p->threads[i].thread, NULL);
}

vl_status vl_thread_pool_create(uint32_t worker_count, vl_thread_pool** out) {
    if (!out) return VL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (worker_count == 0 || worker_count > VL_MAX_WORKERS) return VL_ERR_INVALID_ARGUMENT;
    struct vl_thread_pool* p = vl_mem_calloc(sizeof *p);
    if (!p) return VL_ERR_OUT_OF_MEMORY;
    p->workers = worker_count;
    p->threads = vl_mem_calloc(sizeof(pool_thread) * worker_count);
    if (!p->threads) {
        vl_mem_free(p, sizeof *p);
        return VL_ERR_OUT_OF_MEMORY;
    }
    pthread_mutex_init(&p->busy, NULL);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->next, 0);
    atomic_init(&p->generation, 0);
    atomic_init(&p->quit, 0);
    atomic_init(&p->running, 0);
    atomic_init(&p->closed, 1);
    for (uint32_t i = 1; i < worker_count; i++) {
        p->threads[i].pool = p;
        p->threads[i].index = i;
        if (pthread_create(&p->threads[i].thread, NULL, thread_main, &p->threads[i]) != 0) {
            pool_stop(p, i - 1);
            pool_free(p);
            return VL_ERR_OUT_OF_MEMORY;
        }
    }
    *out = p;
    return VL_OK;
}

void vl_thread_pool_destroy(vl_thread_pool* pool) {
    if (!pool) return;
    pool_stop(pool, pool->workers - 1);
    pool_free(pool);
}

vl_task_system vl_thread_pool_get_task_system(vl_thread_pool* pool) {
    vl_task_system t = {NULL, NULL, NULL, 0};
    if (!pool) return t;
    t.enqueue = pool_enqueue;
    t.finish = pool_finish;
    t.user_ctx = pool;
    t.worker_count = pool->workers;
    return t;
}
