/* The parallel forms against their serial forms, exactly: batched raycasts, sweeps and overlaps,
 * box pruning, the BVH build and refit, for 1, 2, 3, 4 and 7 workers, through a toy job system on
 * threads, the default pool, a job system that runs tasks inline and returns NULL (Box2D's
 * convention), and one whose enqueue fails. The second call on a context allocates nothing; bad
 * input is refused. */
#include "bvh/tree/tree.h"
#include "bvh/engine/blocks.h"
#include "bvh/tree/refit.h"
#include "box_prune/box_prune_work.h"
#include "scenes.h"
#include "test_alloc.h"
#include "test_util.h"
#include "toy_jobs.h"

/* Equal pair lists (an empty buffer may have no storage: memcmp must not see its NULL). */
static int same_pairs(const vl_pair* a, const vl_pair* b, uint32_t n) {
    return n == 0 || memcmp(a, b, sizeof(vl_pair) * n) == 0;
}

/* ---- raycasts ------------------------------------------------------------------------------- */

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
            for (int sys = 0; sys < SYS_COUNT; sys++)
                for (uint32_t wi = 0; wi < WORKER_CASES; wi++) {
                    toy_system toy;
                    vl_thread_pool* pool;
                    vl_context* ctx = make_context(sys, k_workers[wi], &toy, &pool);
                    if (!ctx) continue;
                    for (int round = 0; round < 2; round++) {
                        memset(got, 0xAB, sizeof(vl_hit) * count);
                        vl_status st = vl_bvh_raycast(bvh, rays, count, flags, got, &(vl_exec){.context = ctx});
                        CHECK(st == want, "%s %s x%u: status %d, want %d", scene, k_sys_names[sys], k_workers[wi],
                              (int)st, (int)want);
                        CHECK(memcmp(got, serial, sizeof(vl_hit) * count) == 0,
                              "%s, %s x%u, %u rays, flags %u: answers differ from the serial form", scene,
                              k_sys_names[sys], k_workers[wi], count, flags);
                    }
                    uint32_t blocks = (count + vl_bvh_parallel_ray_block(count) - 1) / vl_bvh_parallel_ray_block(count);
                    if (sys == SYS_FAILING && blocks > 1) CHECK(toy.declined == 2, "the failing hook was asked");
                    if (sys == SYS_INLINE && blocks > 1) CHECK(toy.inlined == 2, "the inline hook was asked");
                    vl_context_destroy(ctx);
                    vl_thread_pool_destroy(pool);
                }
        }
    }
    vl_context_destroy(plain);
    free(serial);
    free(whole);
    free(got);
}

/* ---- the build ------------------------------------------------------------------------------ */

static int same_tree(const vl_bvh* a, const vl_bvh* b) {
    if (a->node_count != b->node_count || a->depth != b->depth || a->prim_count != b->prim_count ||
        a->wide_count != b->wide_count || a->kind != b->kind || a->pad != b->pad)
        return 0;
    if (memcmp(a->nodes, b->nodes, sizeof(vl_bvh_node) * a->node_count) != 0) return 0;
    if (memcmp(a->wide, b->wide, sizeof(vl_bvh_node4) * a->wide_count) != 0) return 0;
    if (memcmp(a->wide_of, b->wide_of, sizeof(uint32_t) * a->node_count) != 0) return 0;
    if (a->kind == VL_BVH_TRIANGLES)
        return memcmp(a->tris, b->tris, sizeof(float) * vl_bvh_tri_floats(a->prim_count)) == 0;
    return memcmp(a->boxes, b->boxes, sizeof(vl_bvh_box) * a->prim_count) == 0;
}

static void check_build(const char* scene, const scene_mesh* m, const vl_aabb* boxes, uint32_t box_count,
                        const vl_bvh_desc* desc) {
    vl_bvh* serial = NULL;
    vl_status st = m ? vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, desc, &serial, NULL)
                     : vl_bvh_build_boxes(boxes, box_count, desc, &serial, NULL);
    CHECK(st == VL_OK, "%s: serial build", scene);
    if (st != VL_OK) return;
    for (int sys = 0; sys < SYS_COUNT; sys++)
        for (uint32_t wi = 0; wi < WORKER_CASES; wi++) {
            toy_system toy;
            vl_thread_pool* pool;
            vl_context* ctx = make_context(sys, k_workers[wi], &toy, &pool);
            if (!ctx) continue;
            vl_bvh* par = NULL;
            st = m ? vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, desc,
                                                     &par, &(vl_exec){.context = ctx})
                   : vl_bvh_build_boxes(boxes, box_count, desc, &par, &(vl_exec){.context = ctx});
            CHECK(st == VL_OK && par, "%s, %s x%u: build", scene, k_sys_names[sys], k_workers[wi]);
            if (par) {
                CHECK(same_tree(serial, par), "%s, %s x%u: the tree differs from the serial build's", scene,
                      k_sys_names[sys], k_workers[wi]);
                CHECK(vl_bvh_validate(par) == VL_OK, "%s: valid", scene);
            }
            if (sys == SYS_TOY) CHECK(toy.enqueued > 0, "%s x%u: the build made tasks", scene, k_workers[wi]);
            vl_bvh_destroy(par);
            vl_context_destroy(ctx);
            vl_thread_pool_destroy(pool);
        }
    vl_bvh_destroy(serial);
}

/* ---- sweeps --------------------------------------------------------------------------------- */

static void* aligned_block(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

/* n sphere sweeps and n box sweeps across the mesh's bounds, one of each invalid (index 3). */
static void make_sweeps(const scene_mesh* m, uint32_t n, uint64_t seed, vl_sphere_sweep* s, vl_box_sweep* b) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++) {
        float r = test_float(&rng, 0.05f, 1.5f);
        for (int a = 0; a < 3; a++) {
            float c = test_float(&rng, m->lo[a], m->hi[a]);
            float d = test_float(&rng, -1.0f, 1.0f);
            s[i].center[a] = c, s[i].dir[a] = d;
            b[i].box.min[a] = c - r, b[i].box.max[a] = c + test_float(&rng, 0.05f, 1.5f);
            b[i].dir[a] = -d;
        }
        s[i].radius = r;
        s[i].tmax = b[i].tmax = (i % 5 == 0) ? INFINITY : test_float(&rng, 0.0f, 30.0f);
    }
    if (n > 3) s[3].radius = -1.0f, b[3].box.min[0] = NAN;
}

static vl_status sweep_serial(const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count, uint32_t flags,
                              vl_hit* hits, vl_contact* contacts) {
    size_t bytes = vl_bvh_sweep_scratch_size(bvh, count, flags);
    void* scratch = aligned_block(bytes);
    vl_status st = boxes ? vl_bvh_sweep_boxes(bvh, sweeps, count, flags, hits, contacts, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                         : vl_bvh_sweep_spheres(bvh, sweeps, count, flags, hits, contacts, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
    free(scratch);
    return st;
}

static vl_status sweep_par(vl_context* ctx, const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count,
                           uint32_t flags, vl_hit* hits, vl_contact* contacts) {
    return boxes ? vl_bvh_sweep_boxes(bvh, sweeps, count, flags, hits, contacts, &(vl_exec){.context = ctx})
                 : vl_bvh_sweep_spheres(bvh, sweeps, count, flags, hits, contacts, &(vl_exec){.context = ctx});
}

/* The documented reference: the call on scratch block by block, blocks as the call on a context cuts them. */
static vl_status sweep_by_blocks(const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count, uint32_t flags,
                                 vl_hit* hits, vl_contact* contacts) {
    uint32_t block = vl_bvh_parallel_query_block(count);
    if (block > count) block = count;
    vl_status worst = VL_OK;
    for (uint32_t first = 0; first < count; first += block) {
        uint32_t n = count - first < block ? count - first : block;
        const void* part = boxes ? (const void*)((const vl_box_sweep*)sweeps + first)
                                 : (const void*)((const vl_sphere_sweep*)sweeps + first);
        vl_status st = sweep_serial(bvh, part, boxes, n, flags, hits + first, contacts + first);
        if (st != VL_OK) worst = st;
    }
    return worst;
}

/* Largest coordinate magnitude of the mesh. */
static float mesh_scale(const scene_mesh* m) {
    float s = 0.0f;
    for (int a = 0; a < 3; a++) s = fmaxf(s, fmaxf(fabsf(m->lo[a]), fabsf(m->hi[a])));
    return s;
}

static void check_sweeps(const char* scene, const vl_bvh* bvh, const scene_mesh* m, uint32_t n) {
    static const uint32_t sizes[] = {5, 300, 5000};
    vl_sphere_sweep* ss = malloc(sizeof *ss * n);
    vl_box_sweep* bs = malloc(sizeof *bs * n);
    make_sweeps(m, n, 77, ss, bs);
    vl_hit *want = malloc(sizeof(vl_hit) * n), *got = malloc(sizeof(vl_hit) * n), *whole = malloc(sizeof(vl_hit) * n);
    vl_contact *wantc = malloc(sizeof(vl_contact) * n), *gotc = malloc(sizeof(vl_contact) * n),
               *wholec = malloc(sizeof(vl_contact) * n);
    const float scale = mesh_scale(m) + 4.0f; /* the shapes reach past the mesh by their size */
    long compared = 0;
    for (int boxes = 0; boxes < 2; boxes++) {
        const void* sweeps = boxes ? (const void*)bs : (const void*)ss;
        for (uint32_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            uint32_t count = sizes[si] < n ? sizes[si] : n;
            for (uint32_t flags = 0; flags < 2; flags++) {
                vl_status want_st = sweep_by_blocks(bvh, sweeps, boxes, count, flags, want, wantc);
                CHECK(want_st == VL_ERR_INVALID_QUERY, "%s: serial sweeps status %d", scene, (int)want_st);
                /* against one serial call over the whole batch: the same hits and misses; a closest
                 * hit within the sweep tolerance (near ties go either way: the batch's traversal
                 * order decides), an any hit possibly another one */
                vl_status whole_st = sweep_serial(bvh, sweeps, boxes, count, flags, whole, wholec);
                CHECK(whole_st == want_st, "%s: whole-batch status %d", scene, (int)whole_st);
                uint32_t hit = 0, differ = 0, bad = 0;
                for (uint32_t i = 0; i < count; i++) {
                    hit += want[i].prim != VL_NO_HIT;
                    if (memcmp(&want[i], &whole[i], sizeof(vl_hit)) != 0) differ++;
                    if ((want[i].prim == VL_NO_HIT) != (whole[i].prim == VL_NO_HIT)) {
                        bad++;
                        continue;
                    }
                    if (flags || want[i].prim == VL_NO_HIT) continue;
                    const float* d = boxes ? bs[i].dir : ss[i].dir;
                    float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                    float tol = 2.0f * VL_SWEEP_TOLERANCE * (scale + len * want[i].t) / len;
                    if (fabsf(want[i].t - whole[i].t) > tol) bad++;
                }
                CHECK(count < 300 || (hit > count / 20 && hit < count), "%s: %u of %u sweeps hit", scene, hit, count);
                CHECK(bad == 0, "%s, %u %s sweeps, flags %u: %u answers differ from one call beyond near ties", scene,
                      count, boxes ? "box" : "sphere", flags, bad);
                if (differ)
                    printf("%s, %u %s sweeps, flags %u: %u answers differ from one whole-batch call (%s)\n",
                           scene, count, boxes ? "box" : "sphere", flags, differ,
                           flags ? "another hit" : "a near tie");
                for (int sys = 0; sys < SYS_COUNT; sys++)
                    for (uint32_t wi = 0; wi < WORKER_CASES; wi++) {
                        toy_system toy;
                        vl_thread_pool* pool;
                        vl_context* ctx = make_context(sys, k_workers[wi], &toy, &pool);
                        for (int with_contacts = 0; with_contacts < 2; with_contacts++) {
                            memset(got, 0xAB, sizeof(vl_hit) * count);
                            memset(gotc, 0xAB, sizeof(vl_contact) * count);
                            vl_status st = sweep_par(ctx, bvh, sweeps, boxes, count, flags, got,
                                                     with_contacts ? gotc : NULL);
                            CHECK(st == want_st, "%s %s x%u: sweep status %d", scene, k_sys_names[sys],
                                  k_workers[wi], (int)st);
                            CHECK(memcmp(got, want, sizeof(vl_hit) * count) == 0,
                                  "%s, %s x%u, %u %s sweeps, flags %u: hits differ from the serial form", scene,
                                  k_sys_names[sys], k_workers[wi], count, boxes ? "box" : "sphere", flags);
                            if (with_contacts)
                                CHECK(memcmp(gotc, wantc, sizeof(vl_contact) * count) == 0,
                                      "%s, %s x%u, %u sweeps, flags %u: contacts differ", scene, k_sys_names[sys],
                                      k_workers[wi], count, flags);
                            compared++;
                        }
                        vl_context_destroy(ctx);
                        vl_thread_pool_destroy(pool);
                    }
            }
        }
    }
    printf("%s: %ld parallel sweep batches compared bit for bit with the serial form by blocks\n", scene, compared);
    free(ss), free(bs), free(want), free(got), free(whole), free(wantc), free(gotc), free(wholec);
}

/* ---- overlaps ------------------------------------------------------------------------------- */

static int pair_less(const void* x, const void* y) {
    const vl_pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static void sort_pairs(vl_pair* p, uint32_t n) {
    if (n) qsort(p, n, sizeof *p, pair_less);
}

/* n box and n sphere queries across the mesh's bounds, one of each invalid (index 3). */
static void make_overlap_queries(const scene_mesh* m, uint32_t n, uint64_t seed, vl_aabb* boxes, vl_sphere* spheres) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            float c = test_float(&rng, m->lo[a], m->hi[a]);
            boxes[i].min[a] = c, boxes[i].max[a] = c + test_float(&rng, 0.1f, 3.0f);
            spheres[i].center[a] = test_float(&rng, m->lo[a], m->hi[a]);
        }
        spheres[i].radius = test_float(&rng, 0.1f, 2.0f);
    }
    if (n > 3) boxes[3].min[1] = NAN, spheres[3].radius = -1.0f;
}

static vl_status overlap_par(vl_context* ctx, const vl_bvh* bvh, const void* q, int spheres, uint32_t count,
                             vl_pair_buffer* out) {
    return spheres ? vl_bvh_overlap_spheres(bvh, q, count, out, &(vl_exec){.context = ctx})
                   : vl_bvh_overlap_boxes(bvh, q, count, out, &(vl_exec){.context = ctx});
}

/* The documented order: block by block, each as the call on scratch over its queries. */
static void overlap_by_blocks(const vl_bvh* bvh, const void* q, int spheres, uint32_t count, vl_pair_buffer* out) {
    uint32_t block = vl_bvh_parallel_query_block(count);
    if (block > count) block = count;
    size_t bytes = vl_bvh_overlap_scratch_size(bvh, block);
    void* scratch = aligned_block(bytes);
    for (uint32_t first = 0; first < count; first += block) {
        uint32_t n = count - first < block ? count - first : block, start = out->count;
        if (spheres)
            vl_bvh_overlap_spheres(bvh, (const vl_sphere*)q + first, n, out, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        else
            vl_bvh_overlap_boxes(bvh, (const vl_aabb*)q + first, n, out, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        for (uint32_t i = start; i < out->count; i++) out->pairs[i].a += first;
    }
    free(scratch);
}

static void check_overlaps(const char* scene, const vl_bvh* bvh, const scene_mesh* m, uint32_t n) {
    static const uint32_t sizes[] = {5, 300, 5000};
    vl_aabb* qb = malloc(sizeof *qb * n);
    vl_sphere* qs = malloc(sizeof *qs * n);
    make_overlap_queries(m, n, 91, qb, qs);
    long compared = 0;
    for (int spheres = 0; spheres < 2; spheres++) {
        const void* q = spheres ? (const void*)qs : (const void*)qb;
        for (uint32_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            uint32_t count = sizes[si] < n ? sizes[si] : n;
            vl_pair_buffer serial = {0}, order = {0}, got = {0};
            vl_status want_st = spheres ? vl_bvh_overlap_spheres(bvh, qs, count, &serial, NULL)
                                        : vl_bvh_overlap_boxes(bvh, qb, count, &serial, NULL);
            CHECK(want_st == VL_ERR_INVALID_QUERY, "%s: serial overlap status %d", scene, (int)want_st);
            CHECK(count < 300 || serial.count > 10, "%s: %u pairs for %u queries", scene, serial.count, count);
            sort_pairs(serial.pairs, serial.count);
            overlap_by_blocks(bvh, q, spheres, count, &order);
            for (int sys = 0; sys < SYS_COUNT; sys++)
                for (uint32_t wi = 0; wi < WORKER_CASES; wi++) {
                    toy_system toy;
                    vl_thread_pool* pool;
                    vl_context* ctx = make_context(sys, k_workers[wi], &toy, &pool);
                    for (int round = 0; round < 2; round++) {
                        got.count = 0;
                        vl_pair_buffer_reserve(&got, 1); /* the pairs go after what out holds */
                        got.pairs[0].a = 0xDEAD, got.pairs[0].b = 0xBEEF, got.count = 1;
                        vl_status st = overlap_par(ctx, bvh, q, spheres, count, &got);
                        CHECK(st == want_st, "%s %s x%u: overlap status %d", scene, k_sys_names[sys], k_workers[wi],
                              (int)st);
                        CHECK(got.pairs[0].a == 0xDEAD && got.pairs[0].b == 0xBEEF, "out's pairs kept");
                        CHECK(got.count - 1 == order.count &&
                                  same_pairs(got.pairs + 1, order.pairs, order.count),
                              "%s, %s x%u, %u %s queries: pair list differs from the block order (%u pairs, want %u)",
                              scene, k_sys_names[sys], k_workers[wi], count, spheres ? "sphere" : "box", got.count - 1,
                              order.count);
                        compared++;
                    }
                    vl_context_destroy(ctx);
                    vl_thread_pool_destroy(pool);
                }
            /* the same set as the serial call */
            CHECK(order.count == serial.count, "%s: %u pairs in parallel, %u serial", scene, order.count, serial.count);
            sort_pairs(order.pairs, order.count);
            CHECK(order.count == serial.count && same_pairs(order.pairs, serial.pairs, serial.count),
                  "%s, %u %s queries: the pair set differs from the serial call's", scene, count,
                  spheres ? "sphere" : "box");
            vl_pair_buffer_free(&serial), vl_pair_buffer_free(&order), vl_pair_buffer_free(&got);
        }
    }
    printf("%s: %ld parallel overlap lists compared with the block order\n", scene, compared);
    free(qb), free(qs);
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
    test_alloc_begin(&h);
    toy_system toy;
    vl_thread_pool* pool;
    vl_context* ctx = make_context(SYS_TOY, 2, &toy, &pool);
    h.budget = 0;
    vl_status st = vl_bvh_raycast(bvh, rays, n, 0, hits, &(vl_exec){.context = ctx});
    CHECK(st == VL_OK && memcmp(hits, want, sizeof(vl_hit) * n) == 0, "answers without memory");
    vl_context_destroy(ctx);
    test_alloc_end(&h);
    free(want);
    free(hits);
}

/* The counting hooks behind a mutex: the build's tasks allocate from the job system's threads. */
static pthread_mutex_t g_hooks_lock = PTHREAD_MUTEX_INITIALIZER;

static void* locked_alloc(size_t size, size_t alignment, void* user) {
    pthread_mutex_lock(&g_hooks_lock);
    void* p = test_alloc_fn(size, alignment, user);
    pthread_mutex_unlock(&g_hooks_lock);
    return p;
}

static void locked_free(void* ptr, size_t size, size_t alignment, void* user) {
    pthread_mutex_lock(&g_hooks_lock);
    test_free_fn(ptr, size, alignment, user);
    pthread_mutex_unlock(&g_hooks_lock);
}

/* Starts counting into h through the locked hooks. */
static void locked_hooks_begin(test_alloc_hooks* h) {
    test_alloc_begin(h);
    vl_allocator locked = {locked_alloc, locked_free, h};
    vl_set_allocator(&locked);
}

static long allocs_so_far(const test_alloc_hooks* h) {
    pthread_mutex_lock(&g_hooks_lock);
    long n = h->allocs;
    pthread_mutex_unlock(&g_hooks_lock);
    return n;
}

/* Calls of a parallel entry point on ctx, pairs (if any) into out. */
typedef void context_calls(vl_context* ctx, vl_pair_buffer* out, void* arg);

/* Runs calls three rounds on a 3-worker context over the toy threads and over the default pool,
 * behind the locked counting hooks: nothing allocated after the first round (which must allocate
 * when first_grows: the context's scratch), everything returned at the end. */
static void check_allocates_once(const char* what, context_calls* calls, void* arg, int first_grows) {
    for (int sys = 0; sys < 2; sys++) {
        test_alloc_hooks h;
        locked_hooks_begin(&h);
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

/* Every allocation of a parallel build failing in turn: VL_ERR_OUT_OF_MEMORY, nothing leaked,
 * *out untouched; then a build that succeeds matches the serial tree. */
static void check_build_out_of_memory(const scene_mesh* m) {
    vl_bvh* serial = NULL;
    vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &serial, NULL);
    int built = 0;
    for (long budget = 0; budget < 256 && !built; budget++) {
        test_alloc_hooks h;
        locked_hooks_begin(&h);
        toy_system toy;
        vl_thread_pool* pool;
        vl_context* ctx = make_context(SYS_TOY, 3, &toy, &pool);
        h.budget = budget;
        vl_bvh* out = NULL;
        vl_status st =
            vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &out, &(vl_exec){.context = ctx});
        h.budget = -1;
        if (st == VL_OK) {
            built = 1;
            CHECK(out && serial && same_tree(serial, out), "budget %ld: the tree differs", budget);
        } else {
            CHECK(st == VL_ERR_OUT_OF_MEMORY && out == NULL, "budget %ld: %s", budget, vl_status_string(st));
        }
        vl_bvh_destroy(out);
        vl_context_destroy(ctx);
        test_alloc_end(&h);
        pthread_mutex_lock(&g_hooks_lock); /* the toy's threads are joined; the lock orders their counts */
        size_t leaked = h.bytes;
        pthread_mutex_unlock(&g_hooks_lock);
        CHECK(leaked == 0, "budget %ld: %zu bytes leaked", budget, leaked);
    }
    CHECK(built, "the build never succeeded");
    vl_bvh_destroy(serial);
}

/* The sweeps and overlaps of check_query_memory, n of each. */
typedef struct query_sets {
    const vl_bvh* bvh;
    const vl_sphere_sweep* ss;
    const vl_box_sweep* bs;
    const vl_aabb* qb;
    const vl_sphere* qs;
    uint32_t n;
    vl_hit* hits;
    vl_contact* contacts;
} query_sets;

static void run_query_sets(vl_context* ctx, vl_pair_buffer* out, void* arg) {
    const query_sets* q = arg;
    vl_bvh_sweep_spheres(q->bvh, q->ss, q->n, 0, q->hits, q->contacts, &(vl_exec){.context = ctx});
    vl_bvh_sweep_boxes(q->bvh, q->bs, q->n, VL_QUERY_ANY, q->hits, NULL, &(vl_exec){.context = ctx});
    vl_bvh_overlap_boxes(q->bvh, q->qb, q->n, out, &(vl_exec){.context = ctx});
    vl_bvh_overlap_spheres(q->bvh, q->qs, q->n, out, &(vl_exec){.context = ctx});
}

/* Sweeps and overlaps: bad arguments, and no allocation on the second call with the same sizes
 * (the overlaps' lists grow on the job system's threads: the counting hooks behind the lock). */
static void check_query_memory(const vl_bvh* bvh, const scene_mesh* m) {
    const uint32_t n = 3000;
    vl_sphere_sweep* ss = malloc(sizeof *ss * n);
    vl_box_sweep* bs = malloc(sizeof *bs * n);
    vl_aabb* qb = malloc(sizeof *qb * n);
    vl_sphere* qs = malloc(sizeof *qs * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    vl_contact* contacts = malloc(sizeof(vl_contact) * n);
    make_sweeps(m, n, 5, ss, bs);
    make_overlap_queries(m, n, 6, qb, qs);
    query_sets q = {bvh, ss, bs, qb, qs, n, hits, contacts};
    check_allocates_once("sweeps and overlaps", run_query_sets, &q, 1);
    /* no memory for the context: the sweeps answer the same (one at a time), the overlaps say so */
    {
        vl_hit* want = malloc(sizeof(vl_hit) * n);
        vl_context* plain = NULL;
        vl_context_create(NULL, &plain);
        vl_bvh_sweep_spheres(bvh, ss, n, 0, want, NULL, &(vl_exec){.context = plain});
        vl_context_destroy(plain);
        test_alloc_hooks h;
        test_alloc_begin(&h);
        toy_system toy;
        vl_thread_pool* pool;
        vl_context* ctx = make_context(SYS_TOY, 2, &toy, &pool);
        h.budget = 0;
        vl_status st = vl_bvh_sweep_spheres(bvh, ss, n, 0, hits, NULL, &(vl_exec){.context = ctx});
        uint32_t miss = 0;
        for (uint32_t i = 0; i < n; i++) miss += (hits[i].prim == VL_NO_HIT) != (want[i].prim == VL_NO_HIT);
        CHECK(st == VL_ERR_INVALID_QUERY && miss == 0, "sweeps without memory");
        vl_pair_buffer out = {0};
        CHECK(vl_bvh_overlap_boxes(bvh, qb, n, &out, &(vl_exec){.context = ctx}) == VL_ERR_OUT_OF_MEMORY && out.count == 0,
              "overlaps without memory");
        vl_context_destroy(ctx);
        test_alloc_end(&h);
        free(want);
    }
    /* bad arguments: nothing written */
    vl_context* ctx = NULL;
    vl_context_create(NULL, &ctx);
    vl_hit hit = {1.0f, 7, 0.5f, 0.5f};
    CHECK(vl_bvh_sweep_spheres(bvh, ss, 1, 0, &hit, NULL, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_sweep_boxes(bvh, bs, 1, 0, &hit, NULL, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_sweep_spheres(NULL, ss, 1, 0, &hit, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_sweep_boxes(bvh, NULL, 1, 0, &hit, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL sweeps");
    CHECK(vl_bvh_sweep_spheres(bvh, ss, 1, 0, NULL, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
    CHECK(vl_bvh_sweep_boxes(bvh, bs, 1, 8, &hit, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_FLAGS, "flags");
    CHECK(hit.prim == 7 && hit.t == 1.0f, "nothing written");
    CHECK(vl_bvh_sweep_spheres(bvh, NULL, 0, 0, NULL, NULL, &(vl_exec){.context = ctx}) == VL_OK, "count 0");
    vl_pair_buffer out = {0}, bad = {NULL, 3, 0};
    CHECK(vl_bvh_overlap_boxes(bvh, qb, 1, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_overlap_spheres(bvh, qs, 1, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_overlap_boxes(NULL, qb, 1, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_overlap_spheres(bvh, NULL, 1, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL queries");
    CHECK(vl_bvh_overlap_boxes(bvh, qb, 1, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_bvh_overlap_boxes(bvh, qb, 1, &bad, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "inconsistent out");
    CHECK(vl_bvh_overlap_spheres(bvh, NULL, 0, &out, &(vl_exec){.context = ctx}) == VL_OK && out.count == 0, "count 0");
    vl_context_destroy(ctx);
    free(ss), free(bs), free(qb), free(qs), free(hits), free(contacts);
}

/* ---- box pruning ---------------------------------------------------------------------------- */

/* The documented order: the unbanded prune over one sort, as the serial internals give it. */
static void prune_unbanded(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, vl_pair_buffer* out) {
    vl_prune_work work;
    memset(&work, 0, sizeof work);
    CHECK(vl_prune_work_sort(&work, a, na, b, nb) == VL_OK, "sort");
    if (b)
        vl_prune_bipartite(&work.set[0], &work.set[1], 0, out);
    else
        vl_prune_complete(&work.set[0], 0, out);
    vl_prune_work_free(&work);
}

static vl_status prune_par(vl_context* ctx, const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb,
                           vl_pair_buffer* out) {
    return b ? vl_box_prune_bipartite(a, na, b, nb, out, &(vl_exec){.context = ctx}) : vl_box_prune(a, na, out, &(vl_exec){.context = ctx});
}

/* b NULL: complete pruning of a; else a against b. */
static void check_prune_case(const char* name, const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb) {
    vl_pair_buffer serial = {0}, order = {0}, got = {0};
    vl_status st = b ? vl_box_prune_bipartite(a, na, b, nb, &serial, NULL) : vl_box_prune(a, na, &serial, NULL);
    CHECK(st == VL_OK, "%s: serial prune", name);
    if ((b && na && nb) || (!b && na >= 2)) prune_unbanded(a, na, b, nb, &order);
    for (int sys = 0; sys < SYS_COUNT; sys++)
        for (uint32_t wi = 0; wi < WORKER_CASES; wi++) {
            toy_system toy;
            vl_thread_pool* pool;
            vl_context* ctx = make_context(sys, k_workers[wi], &toy, &pool);
            for (int round = 0; round < 2; round++) {
                vl_pair_buffer_reserve(&got, 1); /* the pairs go after what out holds */
                got.pairs[0].a = 0xDEAD, got.pairs[0].b = 0xBEEF, got.count = 1;
                st = prune_par(ctx, a, na, b, nb, &got);
                CHECK(st == VL_OK, "%s %s x%u: status %d", name, k_sys_names[sys], k_workers[wi], (int)st);
                CHECK(got.pairs[0].a == 0xDEAD && got.pairs[0].b == 0xBEEF, "out's pairs kept");
                CHECK(got.count - 1 == order.count &&
                          same_pairs(got.pairs + 1, order.pairs, order.count),
                      "%s, %s x%u: the pair list differs from the sweep order (%u pairs, want %u)", name,
                      k_sys_names[sys], k_workers[wi], got.count - 1, order.count);
            }
            vl_context_destroy(ctx);
            vl_thread_pool_destroy(pool);
        }
    sort_pairs(serial.pairs, serial.count);
    sort_pairs(order.pairs, order.count);
    CHECK(order.count == serial.count && same_pairs(order.pairs, serial.pairs, serial.count),
          "%s: the pair set differs from the serial call's (%u pairs, want %u)", name, order.count, serial.count);
    printf("%s: %u pairs, the same list for every job system and worker count\n", name, serial.count);
    vl_pair_buffer_free(&serial), vl_pair_buffer_free(&order), vl_pair_buffer_free(&got);
}

static void make_boxes(vl_aabb* boxes, uint32_t n, uint64_t seed, float extent, float size) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            boxes[i].min[a] = test_float(&rng, -extent, extent);
            boxes[i].max[a] = boxes[i].min[a] + test_float(&rng, 0.0f, size);
        }
}

/* The prunes of check_prunes: 20000 boxes of a (sorted in pieces), and bipartite 3000 x 3000. */
typedef struct prune_sets {
    const vl_aabb *a, *b;
} prune_sets;

static void run_prune_sets(vl_context* ctx, vl_pair_buffer* out, void* arg) {
    const prune_sets* p = arg;
    CHECK(vl_box_prune(p->a, 20000, out, &(vl_exec){.context = ctx}) == VL_OK, "prune");
    CHECK(vl_box_prune_bipartite(p->a, 3000, p->b, 3000, out, &(vl_exec){.context = ctx}) == VL_OK, "bipartite");
}

static void check_prunes(void) {
    /* at least 20000: sets of 16384 boxes or more are sorted in pieces */
    uint32_t n = test_scaled(40000) < 20000 ? 20000 : test_scaled(40000);
    vl_aabb* a = malloc(sizeof(vl_aabb) * n);
    vl_aabb* b = malloc(sizeof(vl_aabb) * n);
    make_boxes(a, n, 11, 100.0f, 4.0f);
    make_boxes(b, n, 12, 100.0f, 4.0f);
    a[17].min[1] = -INFINITY, a[17].max[0] = INFINITY; /* a ground plane */
    for (uint32_t i = 100; i < 160; i++) a[i] = a[99]; /* equal boxes: ties in the sort */
    check_prune_case("prune, 5 boxes", a, 5, NULL, 0);
    check_prune_case("prune, 1 box", a, 1, NULL, 0);
    check_prune_case("prune, 3000 boxes", a, 3000, NULL, 0);
    check_prune_case("prune, scattered", a, n, NULL, 0);
    check_prune_case("bipartite, 5 x 3000", a, 5, b, 3000);
    check_prune_case("bipartite, 0 x 3000", a, 0, b, 3000);
    check_prune_case("bipartite, scattered", a, n, b, n / 3);
    for (uint32_t i = 0; i < n; i++) b[i].min[2] += 0.5f, b[i].max[2] += 0.5f;
    check_prune_case("bipartite, b x a", b, n / 2, a, n);
    /* dense: many boxes on a short line, every range full of pairs */
    make_boxes(a, 3000, 13, 10.0f, 3.0f);
    check_prune_case("prune, dense", a, 3000, NULL, 0);
    for (uint32_t i = 0; i < 3000; i++) b[i] = a[(i * 7) % 3000];
    check_prune_case("bipartite, dense with equal boxes", a, 3000, b, 3000);

    /* no allocation on the second call; bad arguments */
    prune_sets ps = {a, b};
    check_allocates_once("box pruning", run_prune_sets, &ps, 0);
    {
        test_alloc_hooks h;
        test_alloc_begin(&h);
        toy_system toy;
        vl_thread_pool* pool;
        vl_context* ctx = make_context(SYS_TOY, 2, &toy, &pool);
        h.budget = 0;
        vl_pair_buffer out = {0};
        CHECK(vl_box_prune(a, 3000, &out, &(vl_exec){.context = ctx}) == VL_ERR_OUT_OF_MEMORY && out.count == 0, "no memory");
        vl_context_destroy(ctx);
        test_alloc_end(&h);
    }
    vl_context* ctx = NULL;
    vl_context_create(NULL, &ctx);
    vl_pair_buffer out = {0}, bad = {NULL, 3, 0};
    CHECK(vl_box_prune(a, 10, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_box_prune_bipartite(a, 10, b, 10, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_box_prune(NULL, 10, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL boxes");
    CHECK(vl_box_prune_bipartite(a, 10, NULL, 10, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL b");
    CHECK(vl_box_prune(a, 10, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_box_prune(a, 10, &bad, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "inconsistent out");
    CHECK(vl_box_prune(a, 0x7FFFFFF1u, &out, &(vl_exec){.context = ctx}) == VL_ERR_TOO_LARGE, "too many");
    a[5].min[0] = NAN;
    CHECK(vl_box_prune(a, 10, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS && out.count == 0, "NaN box");
    CHECK(vl_box_prune_bipartite(b, 10, a, 10, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS && out.count == 0,
          "NaN box in b");
    CHECK(vl_box_prune(NULL, 0, &out, &(vl_exec){.context = ctx}) == VL_OK && out.count == 0, "count 0");
    vl_context_destroy(ctx);
    free(a), free(b);
}

static void check_bad_input(const vl_bvh* bvh, const vl_ray* rays) {
    vl_context* ctx = NULL;
    vl_task_system ts = {toy_enqueue, NULL, NULL, 2};
    CHECK(vl_context_create(&ts, &ctx) == VL_ERR_INVALID_ARGUMENT && !ctx, "enqueue without finish");
    ts.finish = toy_finish, ts.worker_count = 0;
    CHECK(vl_context_create(&ts, &ctx) == VL_ERR_INVALID_ARGUMENT, "no workers");
    ts.worker_count = VL_MAX_WORKERS + 1;
    CHECK(vl_context_create(&ts, &ctx) == VL_ERR_INVALID_ARGUMENT, "too many workers");
    CHECK(vl_context_create(NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "no out");
    vl_thread_pool* pool = NULL;
    CHECK(vl_thread_pool_create(0, &pool) == VL_ERR_INVALID_ARGUMENT && !pool, "pool of 0");
    vl_task_system none = vl_thread_pool_get_task_system(NULL);
    CHECK(!none.enqueue && none.worker_count == 0, "no pool");
    CHECK(vl_context_get_worker_count(NULL) == 0 && vl_context_get_scratch_bytes(NULL) == 0, "NULL context");
    vl_context_destroy(NULL);
    vl_thread_pool_destroy(NULL);

    CHECK(vl_context_create(NULL, &ctx) == VL_OK && vl_context_get_worker_count(ctx) == 1, "serial context");
    vl_hit hit = {1.0f, 7, 0.5f, 0.5f};
    CHECK(vl_bvh_raycast(bvh, rays, 1, 0, &hit, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_raycast(NULL, rays, 1, 0, &hit, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_raycast(bvh, NULL, 1, 0, &hit, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL rays");
    CHECK(vl_bvh_raycast(bvh, rays, 1, 0, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
    CHECK(vl_bvh_raycast(bvh, rays, 1, 8, &hit, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_FLAGS, "flags");
    CHECK(hit.prim == 7 && hit.t == 1.0f, "nothing written");
    CHECK(vl_bvh_raycast(bvh, rays, 0, 0, NULL, &(vl_exec){.context = ctx}) == VL_OK, "count 0");
    vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
    vl_bvh* out = NULL;
    CHECK(vl_bvh_build_boxes(&box, 1, NULL, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT && !out, "context and scratch");
    box.min[0] = NAN;
    CHECK(vl_bvh_build_boxes(&box, 1, NULL, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS && !out, "NaN box");
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 5};
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_GEOMETRY && !out,
          "bad index");
    vl_context_destroy(ctx);
}

/* ---- refit ---------------------------------------------------------------------------------- */

/* The mesh's or boxes' tree built, then refit to moved primitives, serially and in parallel on
 * every job system and worker count from the same build: the trees must match byte for byte, and
 * answer rays alike. The parallel refit allocates nothing. */
static vl_status refit_build(const scene_mesh* m, const vl_aabb* boxes, uint32_t box_count, vl_bvh** out) {
    return m ? vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, out, NULL)
             : vl_bvh_build_boxes(boxes, box_count, NULL, out, NULL);
}

static void check_refit(const char* scene, const scene_mesh* m, const float* moved_xyz, const vl_aabb* boxes,
                        const vl_aabb* moved_boxes, uint32_t box_count, const vl_ray* rays, uint32_t ray_count) {
    vl_bvh* serial = NULL;
    CHECK(refit_build(m, boxes, box_count, &serial) == VL_OK, "%s: build", scene);
    if (!serial) return;
    vl_status st = m ? vl_bvh_refit_triangles(serial, moved_xyz, NULL) : vl_bvh_refit_boxes(serial, moved_boxes, NULL);
    CHECK(st == VL_OK, "%s: serial refit", scene);
    vl_hit* want = malloc(sizeof(vl_hit) * ray_count);
    vl_hit* got = malloc(sizeof(vl_hit) * ray_count);
    vl_bvh_raycast(serial, rays, ray_count, 0, want, NULL);
    for (int sys = 0; sys < SYS_COUNT; sys++)
        for (uint32_t wi = 0; wi < WORKER_CASES; wi++) {
            toy_system toy;
            vl_thread_pool* pool;
            vl_context* ctx = make_context(sys, k_workers[wi], &toy, &pool);
            vl_bvh* par = NULL;
            if (!ctx || refit_build(m, boxes, box_count, &par) != VL_OK) {
                CHECK(0, "%s: context and build", scene);
                vl_context_destroy(ctx);
                vl_thread_pool_destroy(pool);
                continue;
            }
            long enqueued = toy.enqueued;
            test_alloc_hooks hooks;
            test_alloc_begin(&hooks);
            st = m ? vl_bvh_refit_triangles(par, moved_xyz, &(vl_exec){.context = ctx})
                   : vl_bvh_refit_boxes(par, moved_boxes, &(vl_exec){.context = ctx});
            test_alloc_end(&hooks);
            CHECK(st == VL_OK && hooks.allocs == 0, "%s, %s x%u: refit (%ld allocations)", scene, k_sys_names[sys],
                  k_workers[wi], hooks.allocs);
            CHECK(same_tree(serial, par), "%s, %s x%u: the tree differs from the serial refit's", scene,
                  k_sys_names[sys], k_workers[wi]);
            vl_bvh_raycast(par, rays, ray_count, 0, got, NULL);
            CHECK(memcmp(want, got, sizeof(vl_hit) * ray_count) == 0, "%s, %s x%u: rays answer otherwise", scene,
                  k_sys_names[sys], k_workers[wi]);
            if (sys == SYS_TOY && k_workers[wi] > 1 && serial->depth > VL_PARALLEL_REFIT_DEPTH)
                CHECK(toy.enqueued > enqueued, "%s x%u: the refit made tasks", scene, k_workers[wi]);
            vl_bvh_destroy(par);
            vl_context_destroy(ctx);
            vl_thread_pool_destroy(pool);
        }
    free(want);
    free(got);
    vl_bvh_destroy(serial);
}

/* Bad input: errors as the serial refit, the tree unchanged. */
static void check_refit_bad_input(const scene_mesh* m, float* moved_xyz) {
    vl_bvh *tree = NULL, *copy = NULL;
    CHECK(refit_build(m, NULL, 0, &tree) == VL_OK && refit_build(m, NULL, 0, &copy) == VL_OK, "refit: build");
    if (!tree || !copy) {
        vl_bvh_destroy(tree);
        vl_bvh_destroy(copy);
        return;
    }
    toy_system toy;
    vl_thread_pool* pool;
    vl_context* ctx = make_context(SYS_TOY, 3, &toy, &pool);
    CHECK(vl_bvh_refit_triangles(tree, moved_xyz, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "refit: context and scratch");
    CHECK(vl_bvh_refit_triangles(NULL, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "refit: NULL tree");
    CHECK(vl_bvh_refit_triangles(tree, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "refit: NULL xyz");
    vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
    CHECK(vl_bvh_refit_boxes(tree, &box, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "refit: boxes into triangles");
    const uint32_t last = 3 * m->vertex_count - 1;
    const float keep = moved_xyz[last];
    moved_xyz[last] = NAN;
    CHECK(vl_bvh_refit_triangles(tree, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_GEOMETRY, "refit: NaN");
    moved_xyz[last] = INFINITY;
    CHECK(vl_bvh_refit_triangles(tree, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_GEOMETRY, "refit: infinity");
    moved_xyz[last] = keep;
    CHECK(same_tree(tree, copy), "refit: bad input changed the tree");

    vl_bvh* bt = NULL;
    vl_aabb boxes[3] = {{{0, 0, 0}, {1, 1, 1}}, {{2, 2, 2}, {3, 3, 3}}, {{4, 4, 4}, {5, 5, 5}}};
    CHECK(vl_bvh_build_boxes(boxes, 3, NULL, &bt, NULL) == VL_OK, "refit: box build");
    CHECK(vl_bvh_refit_triangles(bt, moved_xyz, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT,
          "refit: triangles into boxes");
    boxes[1].min[2] = 4.0f; /* min > max */
    CHECK(vl_bvh_refit_boxes(bt, boxes, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS, "refit: inverted box");
    boxes[1].min[2] = NAN;
    CHECK(vl_bvh_refit_boxes(bt, boxes, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_BOUNDS, "refit: NaN box");
    CHECK(vl_bvh_validate(bt) == VL_OK && bt->boxes[0].max[0] != 4.0f, "refit: box tree unchanged");
    vl_bvh_destroy(bt);
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
    vl_bvh_destroy(tree);
    vl_bvh_destroy(copy);
}

/* Vertices moved by a random step of up to `step` on each axis. */
static float* moved_vertices(const scene_mesh* m, float step, uint64_t seed) {
    float* xyz = malloc(sizeof(float) * 3 * (size_t)m->vertex_count);
    test_rng rng = {seed};
    for (size_t i = 0; i < 3 * (size_t)m->vertex_count; i++) xyz[i] = m->xyz[i] + test_float(&rng, -step, step);
    return xyz;
}

/* Boxes moved by a random step, some grown to a plane (infinite bounds), some to a point. */
static vl_aabb* moved_boxes(const vl_aabb* boxes, uint32_t n, uint64_t seed) {
    vl_aabb* out = malloc(sizeof(vl_aabb) * n);
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            float d = test_float(&rng, -4.0f, 4.0f);
            out[i].min[a] = boxes[i].min[a] + d, out[i].max[a] = boxes[i].max[a] + d;
        }
    if (n < 10) return out;
    out[5].min[0] = -INFINITY, out[5].max[2] = INFINITY;
    out[9].max[0] = out[9].min[0], out[9].max[1] = out[9].min[1], out[9].max[2] = out[9].min[2];
    return out;
}

static void check_refits(const scene_mesh* world, const scene_mesh* soup, const vl_ray* rays, uint32_t n) {
    float* moved = moved_vertices(world, 0.5f, 21);
    check_refit("world refit", world, moved, NULL, NULL, 0, rays, n);
    check_refit_bad_input(world, moved);
    free(moved);
    moved = moved_vertices(soup, 3.0f, 22);
    check_refit("soup refit", soup, moved, NULL, NULL, 0, rays, n);
    free(moved);
    /* boxes: enough for a deep tree, then a few (a tree shallower than the cut, a lone leaf) */
    const uint32_t counts[] = {20000, 40, 5};
    for (int c = 0; c < 3; c++) {
        uint32_t nb = counts[c];
        vl_aabb* boxes = malloc(sizeof(vl_aabb) * nb);
        make_boxes(boxes, nb, 31 + (uint64_t)c, 50.0f, 3.0f);
        vl_aabb* mb = moved_boxes(boxes, nb, 41 + (uint64_t)c);
        check_refit(c == 0 ? "box refit" : c == 1 ? "box refit, shallow" : "box refit, one leaf", NULL, NULL, boxes,
                    mb, nb, rays, n);
        free(boxes);
        free(mb);
    }
}

int main(void) {
    scene_mesh world, soup;
    CHECK(scene_world(test_scaled(120) < 40 ? 40 : test_scaled(120), 200, 256, 5, &world), "world");
    CHECK(scene_soup(test_scaled(30000) < 9000 ? 9000 : test_scaled(30000), 100.0f, 2.0f, 6, &soup), "soup");
    vl_bvh *bw = NULL, *bs = NULL;
    CHECK(vl_bvh_build_triangles(world.xyz, world.vertex_count, world.indices, world.triangle_count, NULL, &bw, NULL) ==
              VL_OK,
          "build world");
    CHECK(vl_bvh_build_triangles(soup.xyz, soup.vertex_count, soup.indices, soup.triangle_count, NULL, &bs, NULL) == VL_OK,
          "build soup");
    uint32_t n = test_scaled(70000) < 9000 ? 9000 : test_scaled(70000);
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    scene_rays_los(&world, n / 2, 1, rays);
    scene_rays_diffuse(&world, n - n / 2, 2, rays + n / 2);
    rays[3].dir[0] = NAN; /* an invalid ray: a miss, and VL_ERR_INVALID_QUERY everywhere */
    check_raycasts("world", bw, rays, n);
    scene_rays_random(&soup, n, 3, rays);
    check_raycasts("soup", bs, rays, n);

    uint32_t nq = test_scaled(5000) < 1500 ? 1500 : test_scaled(5000); /* sweeps and overlap queries */
    check_sweeps("world", bw, &world, nq);
    check_overlaps("world", bw, &world, nq);
    check_overlaps("soup", bs, &soup, nq);

    check_build("world", &world, NULL, 0, NULL);
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 1;
    d.sah_bins = 7;
    check_build("soup, leaves of 1", &soup, NULL, 0, &d);
    /* boxes: scattered, then all equal (the top levels split by index) */
    uint32_t nb = 20000;
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * nb);
    test_rng rng = {9};
    for (uint32_t i = 0; i < nb; i++)
        for (int a = 0; a < 3; a++) {
            boxes[i].min[a] = test_float(&rng, -50.0f, 50.0f);
            boxes[i].max[a] = boxes[i].min[a] + test_float(&rng, 0.0f, 3.0f);
        }
    boxes[17].min[1] = -INFINITY; /* a ground plane */
    boxes[17].max[0] = INFINITY;
    check_build("boxes", NULL, boxes, nb, NULL);
    for (uint32_t i = 0; i < nb; i++) boxes[i] = boxes[0];
    check_build("equal boxes", NULL, boxes, nb, NULL);
    free(boxes);

    check_build_out_of_memory(&world);
    check_no_allocation(bw, rays, n < 20000 ? n : 20000);
    check_bad_input(bw, rays);
    check_query_memory(bw, &world);
    check_prunes();
    scene_rays_random(&world, n < 20000 ? n : 20000, 4, rays);
    check_refits(&world, &soup, rays, n < 20000 ? n : 20000);
    free(rays);
    vl_bvh_destroy(bw);
    vl_bvh_destroy(bs);
    scene_free(&world);
    scene_free(&soup);
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_parallel");
}
