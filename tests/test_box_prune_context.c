/* Box pruning on a context, exactly: vl_box_prune and vl_box_prune_bipartite on a context
 * append, after the pairs out already holds, exactly the list of the unbanded sweep over one sort
 * (the documented order), for 1, 2, 3, 4 and 7 workers through each job system of toy_jobs.h: 1
 * and 5 boxes, scattered sets of 20000 or more (sorted in pieces) with a ground plane and equal
 * boxes, dense sets, bipartite sets either way round and with an empty side; sorted, that list is
 * the pair set of the call without a context. A context grows to its largest call and then
 * allocates nothing, on a job system or without one; failing allocations leave it working and out
 * unchanged, and destroying it gives everything back; bad arguments are refused. */
#include "context_checks.h"
#include "box_prune/box_prune_work.h"
#include "test_sap_scenes.h"

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
    for (context_case c = {0}; next_context_case(&c);) {
        for (int round = 0; round < 2; round++) {
            vl_pair_buffer_reserve(&got, 1); /* the pairs go after what out holds */
            got.pairs[0].a = 0xDEAD, got.pairs[0].b = 0xBEEF, got.count = 1;
            st = prune_par(c.ctx, a, na, b, nb, &got);
            CHECK(st == VL_OK, "%s %s x%u: status %d", name, k_sys_names[c.sys], c.workers, (int)st);
            CHECK(got.pairs[0].a == 0xDEAD && got.pairs[0].b == 0xBEEF, "out's pairs kept");
            CHECK(got.count - 1 == order.count &&
                      same_pairs(got.pairs + 1, order.pairs, order.count),
                  "%s, %s x%u: the pair list differs from the sweep order (%u pairs, want %u)", name,
                  k_sys_names[c.sys], c.workers, got.count - 1, order.count);
        }
    }
    sort_pairs(serial.pairs, serial.count);
    sort_pairs(order.pairs, order.count);
    CHECK(order.count == serial.count && same_pairs(order.pairs, serial.pairs, serial.count),
          "%s: the pair set differs from the serial call's (%u pairs, want %u)", name, order.count, serial.count);
    printf("%s: %u pairs, the same list for every job system and worker count\n", name, serial.count);
    vl_pair_buffer_free(&serial), vl_pair_buffer_free(&order), vl_pair_buffer_free(&got);
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
        toy_system toy;
        vl_context* ctx = context_without_memory(&h, &toy);
        vl_pair_buffer out = {0};
        CHECK(vl_box_prune(a, 3000, &out, &(vl_exec){.context = ctx}) == VL_ERR_OUT_OF_MEMORY && out.count == 0, "no memory");
        context_without_memory_end(ctx, &h);
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

/* A context grows to its largest call and then allocates nothing; failing allocations leave it
 * working and out unchanged; destroying it gives everything back. */
static void check_context_memory(void) {
    uint32_t n = 4000;
    vl_aabb* boxes = malloc(n * sizeof *boxes);
    test_rng r = {31};
    for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
    size_t before = vl_get_bytes_in_use();
    test_alloc_hooks h;
    test_alloc_begin(&h);
    vl_context* ctx = NULL;
    vl_pair_buffer out = {0}, want = {0};
    CHECK(vl_context_create(NULL, &ctx) == VL_OK, "create");
    const vl_exec on_ctx = {.context = ctx};
    CHECK(vl_box_prune(boxes, n, &want, NULL) == VL_OK, "want");
    int failures = 0;
    for (long budget = 0;; budget++) {
        out.count = 0;
        h.budget = budget;
        vl_status s = vl_box_prune(boxes, n, &out, &on_ctx);
        h.budget = -1;
        if (s == VL_OK) break;
        CHECK(s == VL_ERR_OUT_OF_MEMORY && out.count == 0, "budget %ld: %s", budget, vl_status_string(s));
        failures++;
    }
    CHECK(failures >= 2, "only %d failures", failures);
    sort_pairs(out.pairs, out.count);
    sort_pairs(want.pairs, want.count);
    CHECK(out.count == want.count && memcmp(out.pairs, want.pairs, out.count * sizeof *out.pairs) == 0, "pairs");
    long allocs = h.allocs;
    for (int frame = 0; frame < 5; frame++) {
        out.count = 0;
        CHECK(vl_box_prune(boxes, n - (uint32_t)frame * 100, &out, &on_ctx) == VL_OK, "frame");
        CHECK(vl_box_prune_bipartite(boxes, n / 2, boxes + n / 2, n / 2 - (uint32_t)frame, &out, &on_ctx) == VL_OK,
              "frame bipartite");
    }
    /* the bipartite calls grew it once (the second set), then nothing */
    long grown = h.allocs - allocs;
    allocs = h.allocs;
    for (int frame = 0; frame < 5; frame++) {
        out.count = 0;
        CHECK(vl_box_prune(boxes, n, &out, &on_ctx) == VL_OK, "frame");
        CHECK(vl_box_prune_bipartite(boxes, n / 2, boxes + n / 2, n / 2, &out, &on_ctx) == VL_OK, "frame");
    }
    CHECK(h.allocs == allocs, "warm frames allocated %ld times (the first ones %ld)", h.allocs - allocs, grown);
    vl_context_destroy(ctx);
    vl_pair_buffer_free(&out);
    vl_pair_buffer_free(&want);
    test_alloc_end(&h);
    CHECK(h.bytes == 0 && vl_get_bytes_in_use() == before, "the context leaked %zu bytes", h.bytes);
    free(boxes);
}

int main(void) {
    check_prunes();
    check_context_memory();
    CHECK(vl_get_bytes_in_use() == 0, "leak: %zu bytes", vl_get_bytes_in_use());
    return test_finish("test_box_prune_context");
}
