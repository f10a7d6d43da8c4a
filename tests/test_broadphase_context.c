/* vl_broadphase_commit on a context against the same without one, exactly: every kind, the same
 * operations on two broadphases (adds, statics, moves, removals, flips), the created and deleted
 * lists and the pair lists equal element by element after every commit, for 1, 2, 3, 4 and 7
 * workers through each toy job system; the box-pruning kind's parallel commit makes tasks. Then bad
 * arguments. */
#include <volley/broadphase.h>

#include "test_util.h"
#include "toy_jobs.h"

static const vl_broadphase_kind k_kinds[] = {VL_BROADPHASE_SAP, VL_BROADPHASE_BOX_PRUNING, VL_BROADPHASE_STATIC_SAP,
                                             VL_BROADPHASE_MULTI_SAP, VL_BROADPHASE_GRID, VL_BROADPHASE_TREE};
static const char* const k_kind_names[] = {"sap", "box_pruning", "static_sap", "multi_sap", "grid", "tree"};
#define KIND_COUNT (sizeof k_kinds / sizeof k_kinds[0])

static vl_aabb random_box(test_rng* r, float extent, float size) {
    vl_aabb b;
    for (int a = 0; a < 3; a++) {
        b.min[a] = test_float(r, -extent, extent);
        b.max[a] = b.min[a] + test_float(r, 0.0f, size);
    }
    return b;
}

static int same_list(const vl_pair_buffer* a, const vl_pair_buffer* b) {
    return a->count == b->count && (a->count == 0 || memcmp(a->pairs, b->pairs, sizeof(vl_pair) * a->count) == 0);
}

/* Both broadphases get op; the statuses must agree. */
#define BOTH(call_serial, call_parallel, what)                                                   \
    do {                                                                                         \
        vl_status s1 = (call_serial), s2 = (call_parallel);                                      \
        CHECK(s1 == VL_OK && s2 == VL_OK, "%s: %s (%d, %d)", name, what, (int)s1, (int)s2);      \
    } while (0)

/* One run: n objects (a tenth static, a ground plane) in a world where half the frames move a
 * fifth of them; every third frame removes and re-adds some, every fourth flips some statics. */
static void run_case(int kind, int sys, uint32_t workers, uint32_t n, uint32_t frames) {
    char name[96];
    snprintf(name, sizeof name, "%s, %s x%u", k_kind_names[kind], k_sys_names[sys], workers);
    toy_system toy;
    vl_thread_pool* pool;
    vl_context* ctx = make_context(sys, workers, &toy, &pool);
    vl_broadphase_desc d = vl_broadphase_default_desc();
    d.kind = k_kinds[kind];
    vl_broadphase_desc dc = d;
    dc.context = ctx;
    vl_broadphase *a = NULL, *b = NULL;
    CHECK(vl_broadphase_create(&d, &a) == VL_OK && vl_broadphase_create(&dc, &b) == VL_OK, "%s: create", name);
    test_rng r = {0x5eed + (uint64_t)kind};
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * n);
    uint32_t *ha = malloc(sizeof(uint32_t) * n), *hb = malloc(sizeof(uint32_t) * n);
    float extent = 4.0f * sqrtf((float)n);
    for (uint32_t i = 0; i < n; i++) boxes[i] = random_box(&r, extent, 6.0f);
    boxes[0].min[0] = boxes[0].min[2] = -INFINITY, boxes[0].max[0] = boxes[0].max[2] = INFINITY;
    boxes[0].min[1] = -1.0f, boxes[0].max[1] = 0.0f; /* the ground */
    for (uint32_t i = 1; i < 40 && i < n; i++) boxes[i] = boxes[n / 2]; /* equal boxes */
    uint32_t statics = n / 10;
    BOTH(vl_broadphase_add(a, ha, boxes, statics, VL_STATIC), vl_broadphase_add(b, hb, boxes, statics, VL_STATIC),
         "add statics");
    BOTH(vl_broadphase_add(a, ha + statics, boxes + statics, n - statics, 0),
         vl_broadphase_add(b, hb + statics, boxes + statics, n - statics, 0), "add");
    CHECK(memcmp(ha, hb, sizeof(uint32_t) * n) == 0, "%s: same handles", name);
    vl_pair_buffer ca = {0}, da = {0}, cb = {0}, db = {0};
    uint32_t* picked = malloc(sizeof(uint32_t) * n);
    vl_aabb* moved = malloc(sizeof(vl_aabb) * n);
    for (uint32_t f = 0; f < frames; f++) {
        ca.count = da.count = cb.count = db.count = 0;
        BOTH(vl_broadphase_commit(a, &ca, &da), vl_broadphase_commit(b, &cb, &db), "commit");
        CHECK(same_list(&ca, &cb), "%s, frame %u: created %u against %u", name, f, ca.count, cb.count);
        CHECK(same_list(&da, &db), "%s, frame %u: deleted %u against %u", name, f, da.count, db.count);
        uint32_t pa = 0, pb = 0;
        const vl_pair* la = vl_broadphase_get_pairs(a, &pa);
        const vl_pair* lb = vl_broadphase_get_pairs(b, &pb);
        CHECK(pa == pb && (pa == 0 || memcmp(la, lb, sizeof(vl_pair) * pa) == 0), "%s, frame %u: pairs", name, f);
        /* move a fifth of the dynamics (the whole of them every fifth frame) */
        uint32_t k = 0, step = f % 5 == 4 ? 1 : 5;
        for (uint32_t i = statics + (f % step); i < n; i += step) {
            picked[k] = ha[i];
            vl_aabb box = boxes[i];
            float dx = test_float(&r, -3.0f, 3.0f), dz = test_float(&r, -3.0f, 3.0f);
            box.min[0] += dx, box.max[0] += dx, box.min[2] += dz, box.max[2] += dz;
            boxes[i] = moved[k++] = box;
        }
        BOTH(vl_broadphase_update(a, picked, moved, k), vl_broadphase_update(b, picked, moved, k), "update");
        if (f % 3 == 2) { /* remove some and add them back under new handles */
            uint32_t first = statics + (f * 37) % (n - statics - 64), count = 64;
            BOTH(vl_broadphase_remove(a, ha + first, count), vl_broadphase_remove(b, hb + first, count), "remove");
            BOTH(vl_broadphase_add(a, ha + first, boxes + first, count, 0),
                 vl_broadphase_add(b, hb + first, boxes + first, count, 0), "add back");
        }
        if (f % 4 == 3) { /* a few statics become dynamic and back */
            uint32_t count = statics < 16 ? statics : 16;
            int to_static = (f / 4) % 2;
            BOTH(vl_broadphase_set_static(a, ha + 1, count, to_static),
                 vl_broadphase_set_static(b, hb + 1, count, to_static), "flip");
        }
    }
    /* kinds with a parallel commit make tasks: the box-pruning kind sweeps in ranges of at least
     * 1024 boxes (these scenes make several), the multi-SAP runs its cells (the scene spans many) */
    if (sys == SYS_TOY && workers > 1 &&
        ((k_kinds[kind] == VL_BROADPHASE_BOX_PRUNING && n >= 2048) || k_kinds[kind] == VL_BROADPHASE_MULTI_SAP))
        CHECK(toy.enqueued > 0, "%s: the parallel commit made no tasks", name);
    vl_pair_buffer_free(&ca), vl_pair_buffer_free(&da), vl_pair_buffer_free(&cb), vl_pair_buffer_free(&db);
    vl_broadphase_destroy(a), vl_broadphase_destroy(b);
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
    free(boxes), free(ha), free(hb), free(picked), free(moved);
}

static void check_bad_arguments(void) {
    vl_context* ctx = NULL;
    CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    vl_broadphase_desc d = vl_broadphase_default_desc();
    d.kind = VL_BROADPHASE_BOX_PRUNING;
    d.context = ctx;
    vl_broadphase* bp = NULL;
    CHECK(vl_broadphase_create(&d, &bp) == VL_OK, "create");
    vl_pair_buffer out = {0}, bad = {NULL, 3, 0};
    CHECK(vl_broadphase_commit(NULL, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bp");
    CHECK(vl_broadphase_commit(bp, &bad, NULL) == VL_ERR_INVALID_ARGUMENT, "inconsistent buffer");
    CHECK(vl_broadphase_commit(bp, &out, &out) == VL_ERR_INVALID_ARGUMENT, "same buffer twice");
    CHECK(vl_broadphase_commit(bp, &out, NULL) == VL_OK && out.pairs && out.count == 0, "empty");
    vl_pair_buffer_free(&out);
    vl_broadphase_destroy(bp);
    vl_context_destroy(ctx);
}

int main(void) {
    uint32_t n = test_scaled(6000) < 1200 ? 1200 : test_scaled(6000);
    for (uint32_t kind = 0; kind < KIND_COUNT; kind++)
        for (int sys = 0; sys < SYS_COUNT; sys++)
            for (uint32_t wi = 0; wi < WORKER_CASES; wi++) run_case((int)kind, sys, k_workers[wi], n, 9);
    check_bad_arguments();
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_broadphase_context");
}
