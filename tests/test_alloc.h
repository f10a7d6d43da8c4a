/* An allocator hook for tests and fuzzers that fails on demand and counts what it sees, to prove
 * that an allocation failure answers VL_ERR_OUT_OF_MEMORY, changes nothing and leaks nothing. The
 * counts are kept under a lock: calls on a context allocate from the job system's threads. */
#ifndef VL_TEST_ALLOC_H
#define VL_TEST_ALLOC_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <volley/base.h>

typedef struct test_alloc_hooks {
    long budget;        /* allocations that may still succeed; < 0: never fail */
    long allocs, frees; /* successful allocations and frees */
    size_t bytes;       /* bytes allocated and not yet freed */
    long misaligned;    /* blocks freed with a pointer not aligned as asked */
    vl_allocator previous;
} test_alloc_hooks;

static pthread_mutex_t test_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static void* test_alloc_fn(size_t size, size_t alignment, void* user) {
    test_alloc_hooks* h = user;
    pthread_mutex_lock(&test_alloc_lock);
    void* p = NULL;
    if (h->budget != 0) {
        if (h->budget > 0) h->budget--;
        p = aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
        if (p) h->allocs++, h->bytes += size;
    }
    pthread_mutex_unlock(&test_alloc_lock);
    return p;
}

static void test_free_fn(void* p, size_t size, size_t alignment, void* user) {
    test_alloc_hooks* h = user;
    pthread_mutex_lock(&test_alloc_lock);
    if ((uintptr_t)p % alignment) h->misaligned++;
    h->frees++;
    h->bytes -= size;
    pthread_mutex_unlock(&test_alloc_lock);
    free(p);
}

/* Routes volley's memory through h (never failing until h->budget is set) until test_alloc_end. */
static inline void test_alloc_begin(test_alloc_hooks* h) {
    h->budget = -1;
    h->allocs = h->frees = h->misaligned = 0;
    h->bytes = 0;
    h->previous = vl_get_allocator();
    vl_allocator hooks = {test_alloc_fn, test_free_fn, h};
    vl_set_allocator(&hooks);
}

static inline void test_alloc_end(test_alloc_hooks* h) { vl_set_allocator(&h->previous); }

#endif
