/* Raycasts on a context, exactly: vl_bvh_raycast's hits on a context are identical, every bit of
 * every field, to the call's on a context without a job system, for 1, 2, 3, 4 and 7 workers
 * through each job system of toy_jobs.h (threads started per task, the default pool, one that
 * runs the ranges inline and returns NULL, one whose enqueue declines: both of those asked once a
 * call when a batch spans several blocks), closest and any hit, batches of 5 to 70000 rays on a
 * terrain world (an invalid ray among them) and a triangle soup. Against one call over the whole
 * batch without a context: the same hits and misses, a closest hit at the same t (another
 * primitive may be named). The first call on a context allocates at most once (its scratch, which
 * it keeps) and later calls nothing; without memory the answers are the same, from the calling
 * thread; bad arguments are refused with nothing written. */
#include "bvh/engine/blocks.h"
#include "context_checks.h"

static void check_raycasts(const char* scene, const vl_bvh* bvh, const vl_ray* rays, uint32_t n) {
    static const uint32_t sizes[] = {5, 300, 4100, 70000};
    vl_hit* serial = malloc(sizeof(vl_hit) * n);
    vl_hit* whole = malloc(sizeof(vl_hit) * n);
    vl_hit* got = malloc(sizeof(vl_hit) * n);
    vl_context* plain = NULL;
    CHECK(vl_context_create(NULL, &plain) == VL_OK, "serial context");
    for (uint32_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t count = sizes[si] < n ? sizes[si] : n;
        for (uint32_t flags = 0; flags < 2; flags++) {
            vl_status want = vl_bvh_raycast(bvh, rays, count, flags, serial, &(vl_exec){.context = plain});
            CHECK(want == VL_OK || want == VL_ERR_INVALID_QUERY, "%s: serial status %d", scene, (int)want);
            /* against one call over the whole batch: equal but for ties (closest) or which hit (any) */
            vl_status whole_st = vl_bvh_raycast(bvh, rays, count, flags, whole, NULL);
            CHECK(whole_st == want, "%s: status %d against %d", scene, (int)want, (int)whole_st);
            uint32_t differ = 0, bad = 0;
            for (uint32_t i = 0; i < count; i++) {
                if (memcmp(&serial[i], &whole[i], sizeof(vl_hit)) != 0) differ++;
                if ((serial[i].prim == VL_NO_HIT) != (whole[i].prim == VL_NO_HIT) ||
                    (flags == 0 && serial[i].t != whole[i].t))
                    bad++;
            }
            CHECK(bad == 0, "%s %u rays flags %u: %u answers differ from one call beyond ties", scene, count, flags,
                  bad);
            if (differ)
                printf("%s, %u rays, flags %u: %u of the answers name another primitive than one call's\n", scene,
                       count, flags, differ);
            for (context_case c = {0}; next_context_case(&c);) {
                if (!c.ctx) continue;
                for (int round = 0; round < 2; round++) {
                    memset(got, 0xAB, sizeof(vl_hit) * count);
                    vl_status st = vl_bvh_raycast(bvh, rays, count, flags, got, &(vl_exec){.context = c.ctx});
                    CHECK(st == want, "%s %s x%u: status %d, want %d", scene, k_sys_names[c.sys], c.workers,
                          (int)st, (int)want);
                    CHECK(memcmp(got, serial, sizeof(vl_hit) * count) == 0,
                          "%s, %s x%u, %u rays, flags %u: answers differ from the serial form", scene,
                          k_sys_names[c.sys], c.workers, count, flags);
                }
                uint32_t blocks = (count + vl_bvh_parallel_ray_block(count) - 1) / vl_bvh_parallel_ray_block(count);
                if (c.sys == SYS_FAILING && blocks > 1) CHECK(c.toy.declined == 2, "the failing hook was asked");
                if (c.sys == SYS_INLINE && blocks > 1) CHECK(c.toy.inlined == 2, "the inline hook was asked");
            }
        }
    }
    vl_context_destroy(plain);
    free(serial);
    free(whole);
    free(got);
}

/* ---- memory and bad input ------------------------------------------------------------------- */

static void check_no_allocation(const vl_bvh* bvh, const vl_ray* rays, uint32_t n) {
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    for (int sys = 0; sys < 2; sys++) {
        test_alloc_hooks h;
        test_alloc_begin(&h);
        toy_system toy;
        vl_thread_pool* pool;
        vl_context* ctx = make_context(sys == 0 ? SYS_TOY : SYS_POOL, 3, &toy, &pool);
        long before = h.allocs;
        vl_bvh_raycast(bvh, rays, n, 0, hits, &(vl_exec){.context = ctx});
        long first = h.allocs - before;
        vl_bvh_raycast(bvh, rays, n, 0, hits, &(vl_exec){.context = ctx});
        vl_bvh_raycast(bvh, rays, n / 2, VL_QUERY_ANY, hits, &(vl_exec){.context = ctx});
        long later = h.allocs - before - first;
        CHECK(first <= 1, "%s: %ld allocations on the first call (the scratch, once)", k_sys_names[sys], first);
        CHECK(later == 0, "%s: %ld allocations after the first call", k_sys_names[sys], later);
        CHECK(vl_context_get_scratch_bytes(ctx) > 0, "scratch kept");
        vl_context_destroy(ctx);
        vl_thread_pool_destroy(pool);
        test_alloc_end(&h);
        CHECK(h.bytes == 0 && h.misaligned == 0, "all returned");
    }
    /* out of memory for the scratch: the same answers, from the calling thread */
    vl_hit* want = malloc(sizeof(vl_hit) * n);
    vl_context* plain = NULL;
    vl_context_create(NULL, &plain);
    vl_bvh_raycast(bvh, rays, n, 0, want, &(vl_exec){.context = plain});
    vl_context_destroy(plain);
    test_alloc_hooks h;
    toy_system toy;
    vl_context* ctx = context_without_memory(&h, &toy);
    vl_status st = vl_bvh_raycast(bvh, rays, n, 0, hits, &(vl_exec){.context = ctx});
    CHECK(st == VL_OK && memcmp(hits, want, sizeof(vl_hit) * n) == 0, "answers without memory");
    context_without_memory_end(ctx, &h);
    free(want);
    free(hits);
}

/* Bad arguments on a context: refused, nothing written. */
static void check_bad_input(const vl_bvh* bvh, const vl_ray* rays) {
    vl_context* ctx = NULL;
    vl_context_create(NULL, &ctx);
    vl_hit hit = {1.0f, 7, 0.5f, 0.5f};
    CHECK(vl_bvh_raycast(bvh, rays, 1, 0, &hit, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_raycast(NULL, rays, 1, 0, &hit, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_raycast(bvh, NULL, 1, 0, &hit, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL rays");
    CHECK(vl_bvh_raycast(bvh, rays, 1, 0, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
    CHECK(vl_bvh_raycast(bvh, rays, 1, 8, &hit, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_FLAGS, "flags");
    CHECK(hit.prim == 7 && hit.t == 1.0f, "nothing written");
    CHECK(vl_bvh_raycast(bvh, rays, 0, 0, NULL, &(vl_exec){.context = ctx}) == VL_OK, "count 0");
    vl_context_destroy(ctx);
}

int main(void) {
    scene_mesh world, soup;
    vl_bvh *bw, *bs;
    context_scenes(&world, &soup, &bw, &bs);
    uint32_t n = context_ray_count();
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    scene_rays_los(&world, n / 2, 1, rays);
    scene_rays_diffuse(&world, n - n / 2, 2, rays + n / 2);
    rays[3].dir[0] = NAN; /* an invalid ray: a miss, and VL_ERR_INVALID_QUERY everywhere */
    check_raycasts("world", bw, rays, n);
    scene_rays_random(&soup, n, 3, rays);
    check_raycasts("soup", bs, rays, n);

    check_no_allocation(bw, rays, n < 20000 ? n : 20000);
    check_bad_input(bw, rays);
    free(rays);
    context_scenes_free(&world, &soup, bw, bs);
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_rays_context");
}
