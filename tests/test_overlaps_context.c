/* Overlaps on a context, exactly: vl_bvh_overlap_boxes and vl_bvh_overlap_spheres on a context
 * append, after the pairs out already holds, exactly the pair list of the call on the caller's
 * scratch made block by block as the context cuts the batch (pair.a the index in the whole
 * batch), for 1, 2, 3, 4 and 7 workers through each job system of toy_jobs.h, batches of 5 to 5000
 * queries over a terrain world and a triangle soup, an invalid query of each shape among them;
 * sorted, that list is the pair set of one call without a context. A context grows in its first
 * round of calls and allocates nothing after; without memory the call answers
 * VL_ERR_OUT_OF_MEMORY with out unchanged; bad arguments are refused. */
#include "bvh/engine/blocks.h"
#include "context_checks.h"

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
            for (context_case c = {0}; next_context_case(&c);) {
                for (int round = 0; round < 2; round++) {
                    got.count = 0;
                    vl_pair_buffer_reserve(&got, 1); /* the pairs go after what out holds */
                    got.pairs[0].a = 0xDEAD, got.pairs[0].b = 0xBEEF, got.count = 1;
                    vl_status st = overlap_par(c.ctx, bvh, q, spheres, count, &got);
                    CHECK(st == want_st, "%s %s x%u: overlap status %d", scene, k_sys_names[c.sys], c.workers,
                          (int)st);
                    CHECK(got.pairs[0].a == 0xDEAD && got.pairs[0].b == 0xBEEF, "out's pairs kept");
                    CHECK(got.count - 1 == order.count &&
                              same_pairs(got.pairs + 1, order.pairs, order.count),
                          "%s, %s x%u, %u %s queries: pair list differs from the block order (%u pairs, want %u)",
                          scene, k_sys_names[c.sys], c.workers, count, spheres ? "sphere" : "box", got.count - 1,
                          order.count);
                    compared++;
                }
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

/* The overlaps of check_overlap_memory, n of each. */
typedef struct overlap_sets {
    const vl_bvh* bvh;
    const vl_aabb* qb;
    const vl_sphere* qs;
    uint32_t n;
} overlap_sets;

static void run_overlap_sets(vl_context* ctx, vl_pair_buffer* out, void* arg) {
    const overlap_sets* q = arg;
    vl_bvh_overlap_boxes(q->bvh, q->qb, q->n, out, &(vl_exec){.context = ctx});
    vl_bvh_overlap_spheres(q->bvh, q->qs, q->n, out, &(vl_exec){.context = ctx});
}

/* No allocation on the second call with the same sizes (the lists grow on the job system's
 * threads: the counting hooks behind the lock), no memory, bad arguments. */
static void check_overlap_memory(const vl_bvh* bvh, const scene_mesh* m) {
    const uint32_t n = 3000;
    vl_aabb* qb = malloc(sizeof *qb * n);
    vl_sphere* qs = malloc(sizeof *qs * n);
    make_overlap_queries(m, n, 6, qb, qs);
    overlap_sets q = {bvh, qb, qs, n};
    check_allocates_once("overlaps", run_overlap_sets, &q, 1);
    /* no memory for the context: the overlaps say so */
    {
        test_alloc_hooks h;
        toy_system toy;
        vl_context* ctx = context_without_memory(&h, &toy);
        vl_pair_buffer out = {0};
        CHECK(vl_bvh_overlap_boxes(bvh, qb, n, &out, &(vl_exec){.context = ctx}) == VL_ERR_OUT_OF_MEMORY && out.count == 0,
              "overlaps without memory");
        context_without_memory_end(ctx, &h);
    }
    /* bad arguments: nothing written */
    vl_context* ctx = NULL;
    vl_context_create(NULL, &ctx);
    vl_pair_buffer out = {0}, bad = {NULL, 3, 0};
    CHECK(vl_bvh_overlap_boxes(bvh, qb, 1, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_overlap_spheres(bvh, qs, 1, &out, &(vl_exec){.context = ctx, .scratch_bytes = 64}) == VL_ERR_INVALID_ARGUMENT, "context and scratch");
    CHECK(vl_bvh_overlap_boxes(NULL, qb, 1, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_overlap_spheres(bvh, NULL, 1, &out, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL queries");
    CHECK(vl_bvh_overlap_boxes(bvh, qb, 1, NULL, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_bvh_overlap_boxes(bvh, qb, 1, &bad, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_ARGUMENT, "inconsistent out");
    CHECK(vl_bvh_overlap_spheres(bvh, NULL, 0, &out, &(vl_exec){.context = ctx}) == VL_OK && out.count == 0, "count 0");
    vl_context_destroy(ctx);
    free(qb), free(qs);
}

int main(void) {
    scene_mesh world, soup;
    vl_bvh *bw, *bs;
    context_scenes(&world, &soup, &bw, &bs);
    uint32_t nq = context_query_count();
    check_overlaps("world", bw, &world, nq);
    check_overlaps("soup", bs, &soup, nq);
    check_overlap_memory(bw, &world);
    context_scenes_free(&world, &soup, bw, bs);
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_overlaps_context");
}
