/* Sweeps on a context, exactly: vl_bvh_sweep_spheres and vl_bvh_sweep_boxes on a context give
 * hits and contacts identical, every bit, to the call on the caller's scratch made block by block
 * as the context cuts the batch, for 1, 2, 3, 4 and 7 workers through each job system of
 * toy_jobs.h, closest and any hit, with and without contacts, batches of 5 to 5000 sweeps over a
 * terrain world, an invalid sweep of each shape among them. Against one call over the whole batch
 * without a context: the same hits and misses, a closest hit's t within twice the sweep
 * tolerance of bvh.h (near ties go either way), an any hit possibly another hit. A context
 * allocates nothing after the first round of calls; without memory the sweeps hit and miss as
 * without a context; bad arguments are refused with nothing written. */
#include "bvh/engine/blocks.h"
#include "context_checks.h"

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
                for (context_case c = {0}; next_context_case(&c);) {
                    for (int with_contacts = 0; with_contacts < 2; with_contacts++) {
                        memset(got, 0xAB, sizeof(vl_hit) * count);
                        memset(gotc, 0xAB, sizeof(vl_contact) * count);
                        vl_status st = sweep_par(c.ctx, bvh, sweeps, boxes, count, flags, got,
                                                 with_contacts ? gotc : NULL);
                        CHECK(st == want_st, "%s %s x%u: sweep status %d", scene, k_sys_names[c.sys],
                              c.workers, (int)st);
                        CHECK(memcmp(got, want, sizeof(vl_hit) * count) == 0,
                              "%s, %s x%u, %u %s sweeps, flags %u: hits differ from the serial form", scene,
                              k_sys_names[c.sys], c.workers, count, boxes ? "box" : "sphere", flags);
                        if (with_contacts)
                            CHECK(memcmp(gotc, wantc, sizeof(vl_contact) * count) == 0,
                                  "%s, %s x%u, %u sweeps, flags %u: contacts differ", scene, k_sys_names[c.sys],
                                  c.workers, count, flags);
                        compared++;
                    }
                }
            }
        }
    }
    printf("%s: %ld parallel sweep batches compared bit for bit with the serial form by blocks\n", scene, compared);
    free(ss), free(bs), free(want), free(got), free(whole), free(wantc), free(gotc), free(wholec);
}

/* The sweeps of check_sweep_memory, n of each. */
typedef struct sweep_sets {
    const vl_bvh* bvh;
    const vl_sphere_sweep* ss;
    const vl_box_sweep* bs;
    uint32_t n;
    vl_hit* hits;
    vl_contact* contacts;
} sweep_sets;

static void run_sweep_sets(vl_context* ctx, vl_pair_buffer* out, void* arg) {
    (void)out;
    const sweep_sets* q = arg;
    vl_bvh_sweep_spheres(q->bvh, q->ss, q->n, 0, q->hits, q->contacts, &(vl_exec){.context = ctx});
    vl_bvh_sweep_boxes(q->bvh, q->bs, q->n, VL_QUERY_ANY, q->hits, NULL, &(vl_exec){.context = ctx});
}

/* No allocation after the first round of calls, the same answers without memory, bad arguments. */
static void check_sweep_memory(const vl_bvh* bvh, const scene_mesh* m) {
    const uint32_t n = 3000;
    vl_sphere_sweep* ss = malloc(sizeof *ss * n);
    vl_box_sweep* bs = malloc(sizeof *bs * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    vl_contact* contacts = malloc(sizeof(vl_contact) * n);
    make_sweeps(m, n, 5, ss, bs);
    sweep_sets q = {bvh, ss, bs, n, hits, contacts};
    check_allocates_once("sweeps", run_sweep_sets, &q, 0);
    /* no memory for the context: the sweeps answer the same (one at a time) */
    {
        vl_hit* want = malloc(sizeof(vl_hit) * n);
        vl_context* plain = NULL;
        vl_context_create(NULL, &plain);
        vl_bvh_sweep_spheres(bvh, ss, n, 0, want, NULL, &(vl_exec){.context = plain});
        vl_context_destroy(plain);
        test_alloc_hooks h;
        toy_system toy;
        vl_context* ctx = context_without_memory(&h, &toy);
        vl_status st = vl_bvh_sweep_spheres(bvh, ss, n, 0, hits, NULL, &(vl_exec){.context = ctx});
        uint32_t miss = 0;
        for (uint32_t i = 0; i < n; i++) miss += (hits[i].prim == VL_NO_HIT) != (want[i].prim == VL_NO_HIT);
        CHECK(st == VL_ERR_INVALID_QUERY && miss == 0, "sweeps without memory");
        context_without_memory_end(ctx, &h);
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
    vl_context_destroy(ctx);
    free(ss), free(bs), free(hits), free(contacts);
}

int main(void) {
    scene_mesh world;
    vl_bvh* bw;
    context_scenes(&world, NULL, &bw, NULL);
    check_sweeps("world", bw, &world, context_query_count());
    check_sweep_memory(bw, &world);
    context_scenes_free(&world, NULL, bw, NULL);
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_sweeps_context");
}
