/* What the tests of the calls on a context (tests/test_*_context.c) share beside the job systems
 * of toy_jobs.h: the count of allocations read under test_alloc.h's lock (a call's tasks allocate
 * on the job system's threads), the check that a context allocates in its first round of calls
 * only, a loop over every job system and worker count, a context without memory, the scenes the programs share
 * and small helpers (equal pair lists, pairs sorted, blocks aligned for a caller's scratch, random
 * boxes). Header-only; one include per test program, as toy_jobs.h. */
#ifndef VL_TEST_CONTEXT_CHECKS_H
#define VL_TEST_CONTEXT_CHECKS_H

#include <pthread.h>

#include <volley/volley.h>

#include "scenes.h"
#include "test_alloc.h"
#include "test_oracle.h"
#include "test_util.h"
#include "toy_jobs.h"

/* Every job system of toy_jobs.h with each worker count of k_workers, one context a case, made
 * as the loop reaches the case and destroyed (with its pool) as the loop leaves it, `continue`
 * included:
 *     for (context_case c = {0}; next_context_case(&c);) ... c.ctx (NULL when it could not be
 *     made: make_context counted a failed check), c.sys, c.workers, c.toy */
typedef struct context_case {
    int sys;
    uint32_t workers;
    toy_system toy;
    vl_thread_pool* pool;
    vl_context* ctx;
    uint32_t started; /* cases so far */
} context_case;

static inline int next_context_case(context_case* c) {
    if (c->started > 0) {
        vl_context_destroy(c->ctx);
        vl_thread_pool_destroy(c->pool);
        c->ctx = NULL, c->pool = NULL;
    }
    if (c->started == SYS_COUNT * WORKER_CASES) return 0;
    c->sys = (int)(c->started / WORKER_CASES);
    c->workers = k_workers[c->started % WORKER_CASES];
    c->started++;
    c->ctx = make_context(c->sys, c->workers, &c->toy, &c->pool);
    return 1;
}

/* A context over 2 toy threads (toy must outlive it) behind the counting hooks h, whose every
 * allocation fails from now on; give both back with context_without_memory_end. */
static inline vl_context* context_without_memory(test_alloc_hooks* h, toy_system* toy) {
    test_alloc_begin(h);
    vl_thread_pool* pool; /* none for the toy threads */
    vl_context* ctx = make_context(SYS_TOY, 2, toy, &pool);
    h->budget = 0;
    return ctx;
}

static inline void context_without_memory_end(vl_context* ctx, test_alloc_hooks* h) {
    vl_context_destroy(ctx);
    test_alloc_end(h);
}

/* The scenes of the context tests, never below the sizes at which a batch spans many blocks: a
 * terrain world, a triangle soup (soup may be NULL), and a tree over each where world_tree or
 * soup_tree is not NULL. */
static inline void context_scenes(scene_mesh* world, scene_mesh* soup, vl_bvh** world_tree, vl_bvh** soup_tree) {
    CHECK(scene_world(test_scaled(120) < 40 ? 40 : test_scaled(120), 200, 256, 5, world), "world");
    if (soup) CHECK(scene_soup(test_scaled(30000) < 9000 ? 9000 : test_scaled(30000), 100.0f, 2.0f, 6, soup), "soup");
    scene_mesh* meshes[2] = {world, soup};
    vl_bvh** trees[2] = {world_tree, soup_tree};
    for (int k = 0; k < 2; k++) {
        if (!trees[k]) continue;
        const scene_mesh* m = meshes[k];
        *trees[k] = NULL;
        CHECK(vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, trees[k], NULL) ==
                  VL_OK,
              "build %s", k ? "soup" : "world");
    }
}

/* Frees what context_scenes made (the NULL ones left out). */
static inline void context_scenes_free(scene_mesh* world, scene_mesh* soup, vl_bvh* world_tree, vl_bvh* soup_tree) {
    vl_bvh_destroy(world_tree);
    vl_bvh_destroy(soup_tree);
    scene_free(world);
    if (soup) scene_free(soup);
}

/* The rays of the context tests: as many as the scenes' batches need, never below 9000. */
static inline uint32_t context_ray_count(void) { return test_scaled(70000) < 9000 ? 9000 : test_scaled(70000); }

/* The sweeps or overlap queries of each shape, never below 1500. */
static inline uint32_t context_query_count(void) { return test_scaled(5000) < 1500 ? 1500 : test_scaled(5000); }

/* Equal pair lists (an empty buffer may have no storage: memcmp must not see its NULL). */
static inline int same_pairs(const vl_pair* a, const vl_pair* b, uint32_t n) {
    return n == 0 || memcmp(a, b, sizeof(vl_pair) * n) == 0;
}

/* Pairs by a, then b. */
static inline void sort_pairs(vl_pair* p, uint32_t n) {
    if (n) qsort(p, n, sizeof *p, test_pair_cmp);
}

/* At least `bytes` bytes aligned for a caller's scratch (free with free). */
static inline void* aligned_block(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

/* n boxes with corners in [-extent, extent] and sides up to `size`. */
static inline void make_boxes(vl_aabb* boxes, uint32_t n, uint64_t seed, float extent, float size) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            boxes[i].min[a] = test_float(&rng, -extent, extent);
            boxes[i].max[a] = boxes[i].min[a] + test_float(&rng, 0.0f, size);
        }
}

/* The allocations counted so far (test_alloc.h keeps the counts under its lock). */
static inline long allocs_so_far(const test_alloc_hooks* h) {
    pthread_mutex_lock(&test_alloc_lock);
    long n = h->allocs;
    pthread_mutex_unlock(&test_alloc_lock);
    return n;
}

/* Calls of an entry point on ctx, pairs (if any) into out. */
typedef void context_calls(vl_context* ctx, vl_pair_buffer* out, void* arg);

/* Runs calls three rounds on a 3-worker context over the toy threads and over the default pool,
 * behind the counting hooks: nothing allocated after the first round (which must allocate
 * when first_grows: the context's scratch), everything returned at the end. */
static inline void check_allocates_once(const char* what, context_calls* calls, void* arg, int first_grows) {
    for (int sys = 0; sys < 2; sys++) {
        test_alloc_hooks h;
        test_alloc_begin(&h);
        toy_system toy;
        vl_thread_pool* pool;
        vl_context* ctx = make_context(sys == 0 ? SYS_TOY : SYS_POOL, 3, &toy, &pool);
        vl_pair_buffer out = {0};
        for (int round = 0; round < 3; round++) {
            long before = allocs_so_far(&h);
            out.count = 0;
            calls(ctx, &out, arg);
            long made = allocs_so_far(&h) - before;
            if (round > 0)
                CHECK(made == 0, "%s: %ld allocations in %s after the first round", k_sys_names[sys], made, what);
            else if (first_grows)
                CHECK(made > 0, "%s: the first round grows the context", what);
        }
        vl_pair_buffer_free(&out);
        vl_context_destroy(ctx);
        vl_thread_pool_destroy(pool);
        test_alloc_end(&h);
        CHECK(h.bytes == 0 && h.misaligned == 0, "%s: all returned", what);
    }
}

#endif
