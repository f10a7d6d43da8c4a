/* Several threads query one tree at once (batched, on the allocator's scratch or their own, and
 * single, closest and any hit) and must get the answers a lone thread gets; TSan builds check that
 * queries never write shared state. */
#include <pthread.h>

#include "scenes.h"
#include "test_util.h"

#define THREADS 4

typedef struct job {
    const vl_bvh* bvh;
    const vl_ray* rays;
    const vl_hit* expect; /* closest hits from the main thread */
    uint32_t begin, count;
    uint32_t mismatches;
    vl_status status;
} job;

static void* worker(void* arg) {
    job* j = arg;
    vl_hit* hits = malloc(sizeof(vl_hit) * j->count);
    /* the last round on the thread's own scratch */
    const size_t bytes = vl_bvh_raycast_scratch_size(j->bvh, j->count, 0);
    void* scratch = aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) & ~(size_t)63);
    for (int round = 0; round < 3; round++) {
        uint32_t flags = round == 1 ? VL_QUERY_ANY : VL_QUERY_CLOSEST;
        vl_status st = round == 2 ? vl_bvh_raycast(j->bvh, j->rays + j->begin, j->count, flags, hits, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                                  : vl_bvh_raycast(j->bvh, j->rays + j->begin, j->count, flags, hits, NULL);
        if (st != VL_OK) j->status = st;
        for (uint32_t i = 0; i < j->count; i++) {
            const vl_hit* e = &j->expect[j->begin + i];
            if (flags == VL_QUERY_ANY ? (hits[i].prim == VL_NO_HIT) != (e->prim == VL_NO_HIT)
                                    : (hits[i].prim != e->prim && hits[i].t != e->t))
                j->mismatches++;
        }
        for (uint32_t i = 0; i < j->count; i += 7) {
            vl_hit one;
            vl_bvh_raycast1(j->bvh, &j->rays[j->begin + i], 0, &one);
            const vl_hit* e = &j->expect[j->begin + i];
            if (one.prim != e->prim && one.t != e->t) j->mismatches++;
        }
    }
    free(hits);
    free(scratch);
    return NULL;
}

int main(void) {
    scene_mesh m;
    CHECK(scene_world(60, 80, 256, 17, &m), "world");
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    uint32_t per = test_scaled(20000), n;
    if (per < 5000) per = 5000; /* enough that closest-hit batches take the batched path */
    n = per * THREADS;
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* expect = malloc(sizeof(vl_hit) * n);
    scene_rays_los(&m, n / 2, 3, rays);
    scene_rays_random(&m, n - n / 2, 4, rays + n / 2);
    CHECK(vl_bvh_raycast(bvh, rays, n, 0, expect, NULL) == VL_OK, "reference");
    pthread_t threads[THREADS];
    job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        /* overlapping ranges: threads trace some of the same rays too */
        uint32_t begin = (uint32_t)t * per / 2;
        jobs[t] = (job){bvh, rays, expect, begin, per, 0, VL_OK};
        CHECK(pthread_create(&threads[t], NULL, worker, &jobs[t]) == 0, "create");
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK(jobs[t].status == VL_OK, "thread %d status %d", t, (int)jobs[t].status);
        CHECK(jobs[t].mismatches == 0, "thread %d: %u answers differ", t, jobs[t].mismatches);
    }
    free(rays);
    free(expect);
    vl_bvh_destroy(bvh);
    scene_free(&m);
    CHECK(vl_get_bytes_in_use() == 0, "leak");
    return test_finish("test_rays_threads");
}
