/* One-shot box pruning against brute force: every scene, complete and bipartite, Terdiman's box
 * sets with their published pair counts, banded pruning on forced grids, every scene and the band
 * borders again at the far offsets of scenes.h (on a context, with and without a job system,
 * too), bad input, failing allocations. The calls on scratch against the allocating calls: the
 * same pairs in the same order, no allocation, bad scratch refused with nothing written; on a
 * context: the same set. The context form's own order and memory: test_box_prune_context.c. */
#include <stdint.h>

#include <volley/volley.h>

#include "box_prune/axis_stats.h"
#include "box_prune/box_prune_band.h"

#include "test_sap_scenes.h"
#include "test_util.h"

static vl_context* g_ctx; /* no job system: the storage kept from call to call */
static test_alloc_hooks g_hooks; /* every call of the program goes through them (counted) */

/* A block of `bytes` bytes aligned for the scratch calls, from malloc (not counted by volley). */
static void* scratch_new(size_t bytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    return aligned_alloc(VL_SCRATCH_ALIGNMENT, rounded ? rounded : 64);
}

/* The call on scratch and the call on a context without a job system give exactly the pairs of the
 * allocating call, in its order; neither allocates once out has room (the context may grow on its
 * first call with these counts). Complete when b is NULL. */
static void check_forms(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, const char* what) {
    vl_pair_buffer want = {0}, got = {0};
    vl_status sw = b ? vl_box_prune_bipartite(a, na, b, nb, &want, NULL) : vl_box_prune(a, na, &want, NULL);
    size_t bytes = b ? vl_box_prune_bipartite_scratch_size(na, nb) : vl_box_prune_scratch_size(na);
    CHECK(bytes != SIZE_MAX, "%s: scratch size", what);
    void* scratch = scratch_new(bytes);
    vl_pair_buffer_reserve(&got, want.count + 64); /* room for a block of 16 more */
    for (int form = 0; form < 3; form++) {
        got.count = 0;
        long allocs = g_hooks.allocs;
        vl_status s;
        if (form == 0)
            s = b ? vl_box_prune_bipartite(a, na, b, nb, &got, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                  : vl_box_prune(a, na, &got, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        else
            s = b ? vl_box_prune_bipartite(a, na, b, nb, &got, &(vl_exec){.context = g_ctx})
                  : vl_box_prune(a, na, &got, &(vl_exec){.context = g_ctx});
        allocs = g_hooks.allocs - allocs;
        CHECK(s == sw, "%s: form %d: %s, allocating call %s", what, form, vl_status_string(s), vl_status_string(sw));
        CHECK(got.count == want.count &&
                  (!got.count || memcmp(got.pairs, want.pairs, got.count * sizeof *got.pairs) == 0),
              "%s: form %d: %u pairs, allocating call %u (or another order)", what, form, got.count, want.count);
        /* the scratch form never allocates; the context may grow on its first call with these counts */
        if (form != 1) CHECK(allocs == 0, "%s: form %d: %ld allocations", what, form, allocs);
    }
    free(scratch);
    vl_pair_buffer_free(&want);
    vl_pair_buffer_free(&got);
}

static void check_complete(const vl_aabb* boxes, uint32_t n, const char* what) {
    vl_pair_buffer out = {0};
    vl_pair_buffer_reserve(&out, 3);
    out.pairs[0] = (vl_pair){7, 7};
    out.count = 1; /* appends after what is there */
    vl_status s = vl_box_prune(boxes, n, &out, NULL);
    CHECK(s == VL_OK, "%s: %s", what, vl_status_string(s));
    CHECK(out.count >= 1 && out.pairs[0].a == 7, "%s: earlier content lost", what);
    for (uint32_t i = 1; i < out.count; i++) CHECK(out.pairs[i].a < out.pairs[i].b, "%s: pair not i < j", what);
    pair_list want = {0}, got = {0};
    brute_pairs(&want, boxes, NULL, NULL, n);
    pair_list_copy(&got, out.pairs + 1, out.count - 1);
    CHECK(pair_list_equal(got.p, got.n, want.p, want.n), "%s: %u pairs, brute force %u", what, got.n, want.n);
    free(want.p), free(got.p);
    vl_pair_buffer_free(&out);
    check_forms(boxes, n, NULL, 0, what);
}

static void check_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, const char* what) {
    vl_pair_buffer out = {0};
    vl_status s = vl_box_prune_bipartite(a, na, b, nb, &out, NULL);
    CHECK(s == VL_OK, "%s: %s", what, vl_status_string(s));
    pair_list want = {0};
    for (uint32_t i = 0; i < na; i++)
        for (uint32_t j = 0; j < nb; j++)
            if (test_box_overlap(&a[i], &b[j])) pair_list_push(&want, i, j);
    if (out.count > 1) qsort(out.pairs, out.count, sizeof *out.pairs, test_pair_cmp); /* (a index, b index) as is */
    CHECK(pair_list_equal(out.pairs, out.count, want.p, want.n), "%s: %u pairs, brute force %u", what, out.count,
          want.n);
    free(want.p);
    vl_pair_buffer_free(&out);
    check_forms(a, na, b, nb, what);
}

/* The parallel forms (complete when b is NULL) on ctx: the pairs of brute force, in any order. */
static void check_parallel(vl_context* ctx, const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb,
                           const char* what) {
    vl_pair_buffer out = {0};
    vl_status s = b ? vl_box_prune_bipartite(a, na, b, nb, &out, &(vl_exec){.context = ctx}) : vl_box_prune(a, na, &out, &(vl_exec){.context = ctx});
    CHECK(s == VL_OK, "%s: parallel: %s", what, vl_status_string(s));
    pair_list want = {0};
    if (b) {
        for (uint32_t i = 0; i < na; i++)
            for (uint32_t j = 0; j < nb; j++)
                if (test_box_overlap(&a[i], &b[j])) pair_list_push(&want, i, j);
        if (out.count > 1) qsort(out.pairs, out.count, sizeof *out.pairs, test_pair_cmp);
    } else {
        brute_pairs(&want, a, NULL, NULL, na);
        pairs_normalize(out.pairs, out.count);
    }
    CHECK(pair_list_equal(out.pairs, out.count, want.p, want.n), "%s: parallel %u pairs, brute force %u", what,
          out.count, want.n);
    free(want.p);
    vl_pair_buffer_free(&out);
}

/* Boxes of a scene (up to max_n and max_nb on the two sides, 300 for identical boxes) at
 * g_scene_offset: complete, bipartite both ways and the first 800 against themselves, every
 * form; the parallel forms on each of the n_ctx contexts given. */
static void check_scene(int scene, test_rng* r, uint32_t max_n, uint32_t max_nb, vl_context* const* ctx,
                        int n_ctx) {
    char what[96];
    uint32_t n = 1 + test_u32(r, scene == SCENE_IDENTICAL ? 300 : max_n);
    uint32_t nb = 1 + test_u32(r, scene == SCENE_IDENTICAL ? 300 : max_nb);
    vl_aabb* boxes = malloc(n * sizeof *boxes);
    vl_aabb* other = malloc(nb * sizeof *other);
    for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(r, scene);
    for (uint32_t i = 0; i < nb; i++) other[i] = scene_box(r, scene);
    snprintf(what, sizeof what, "%s n %u at %g", scene_names[scene], n, g_scene_offset);
    check_complete(boxes, n, what);
    snprintf(what, sizeof what, "%s bipartite %u x %u at %g", scene_names[scene], n, nb, g_scene_offset);
    check_bipartite(boxes, n, other, nb, what);
    check_bipartite(other, nb, boxes, n, what);
    /* the same boxes on both sides: ties everywhere */
    check_bipartite(boxes, n < 800 ? n : 800, boxes, n < 800 ? n : 800, what);
    for (int c = 0; c < n_ctx; c++)
        if (ctx[c]) {
            check_parallel(ctx[c], boxes, n, NULL, 0, what);
            check_parallel(ctx[c], boxes, n, other, nb, what);
        }
    free(boxes);
    free(other);
}

static void test_scenes(void) {
    for (int scene = 0; scene < SCENE_COUNT; scene++)
        for (uint32_t round = 0; round < 6; round++) {
            test_rng r = {100u * (uint64_t)scene + round};
            check_scene(scene, &r, test_scaled(5000), test_scaled(3000), NULL, 0);
        }
    /* tiny counts, including those below one SIMD batch */
    for (uint32_t n = 0; n < 20; n++) {
        test_rng r = {n};
        vl_aabb boxes[20];
        for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, SCENE_TOUCHING);
        check_complete(boxes, n, "tiny");
        check_bipartite(boxes, n, boxes, n / 2, "tiny bipartite");
    }
}

/* Every scene, and the border scene (faces on multiples of 8 and one unit either side), at every
 * offset of scenes.h, smaller: complete and bipartite, every form (allocating, scratch, context,
 * parallel on 1 and 3 workers of the pool) against brute force. */
static void test_offsets(void) {
    vl_context* ctx[2] = {NULL, NULL};
    vl_thread_pool* pool = NULL;
    CHECK(vl_context_create(NULL, &ctx[0]) == VL_OK, "serial context");
    if (vl_thread_pool_create(3, &pool) == VL_OK) {
        vl_task_system sys = vl_thread_pool_get_task_system(pool);
        CHECK(vl_context_create(&sys, &ctx[1]) == VL_OK, "pool context");
    }
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        g_scene_offset = scene_offset(k);
        for (int scene = k ? 0 : SCENE_BORDER; scene <= SCENE_BORDER; scene++) {
            test_rng r = {9000u + 16u * (uint64_t)k + (uint64_t)scene};
            check_scene(scene, &r, test_scaled(1500), test_scaled(1000), ctx, 2);
        }
    }
    g_scene_offset = 0.0f;
    vl_context_destroy(ctx[0]);
    vl_context_destroy(ctx[1]);
    vl_thread_pool_destroy(pool);
}

/* Terdiman's sets: 11,811 and 1,144,045 pairs; flat: 150,388 and 14,799,168. */
static void test_terdiman(void) {
    static const uint32_t expected[2][2] = {{11811, 1144045}, {150388, 14799168}};
    for (int flat = 0; flat < 2; flat++)
        for (int big = 0; big < 2; big++) {
            uint32_t n = big ? 100000 : 10000;
            if (big && test_scale() < 1) continue; /* sanitizers and qemu: the 10k sets only */
            vl_aabb* boxes = malloc(n * sizeof *boxes);
            terdiman_boxes(boxes, n, flat);
            vl_pair_buffer out = {0};
            CHECK(vl_box_prune(boxes, n, &out, NULL) == VL_OK, "terdiman prune");
            CHECK(out.count == expected[flat][big], "terdiman %u%s: %u pairs, expected %u", n, flat ? " flat" : "",
                  out.count, expected[flat][big]);
            if (!big) check_complete(boxes, n, flat ? "terdiman 10k flat" : "terdiman 10k");
            if (big) check_forms(boxes, n, NULL, 0, "terdiman 100k");
            check_forms(boxes, n / 2, boxes + n / 2, n / 2, "terdiman halves");
            /* bipartite: first half against second half, summed with both halves' own pairs */
            vl_pair_buffer half = {0};
            CHECK(vl_box_prune(boxes, n / 2, &half, NULL) == VL_OK, "half");
            CHECK(vl_box_prune(boxes + n / 2, n / 2, &half, NULL) == VL_OK, "half");
            CHECK(vl_box_prune_bipartite(boxes, n / 2, boxes + n / 2, n / 2, &half, NULL) == VL_OK, "bipartite");
            CHECK(half.count == expected[flat][big], "terdiman %u%s halves: %u pairs", n, flat ? " flat" : "",
                  half.count);
            vl_pair_buffer_free(&half);
            vl_pair_buffer_free(&out);
            free(boxes);
        }
}

/* Banded pruning on a given grid (grid.count 0: forced to `force` bands by vl_band_grid_choose),
 * complete and bipartite (first half against second), against brute force. Returns 0 when the
 * boxes would not fit the bands' size bound (then nothing is checked). */
static int check_banded(const vl_aabb* boxes, uint32_t n, vl_band_grid grid, uint32_t force, const char* what) {
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, boxes, NULL, n);
    int axis = vl_axis_stats_best(&stats);
    uint32_t na = n / 2, nb = n - na;
    vl_prune_set all = {0}, a = {0}, b = {0};
    vl_prune_scratch scratch = {0};
    vl_prune_bands bands = {0}, bands_a = {0}, bands_b = {0};
    CHECK(vl_prune_set_build(&all, &scratch, boxes, NULL, n, axis, 0) == VL_OK, "%s: build", what);
    CHECK(vl_prune_set_build(&a, &scratch, boxes, NULL, na, axis, 0) == VL_OK, "%s: build a", what);
    CHECK(vl_prune_set_build(&b, &scratch, boxes + na, NULL, nb, axis, 0) == VL_OK, "%s: build b", what);
    if (!grid.count) grid = vl_band_grid_choose(&all, NULL, force);
    vl_status s = vl_prune_bands_build(&bands, &all, grid);
    int banded = s == VL_OK;
    if (banded) {
        CHECK(vl_prune_bands_build(&bands_a, &a, grid) == VL_OK, "%s: bands a", what);
        CHECK(vl_prune_bands_build(&bands_b, &b, grid) == VL_OK, "%s: bands b", what);
        vl_pair_buffer out = {0};
        CHECK(vl_prune_bands_complete(&bands, &out) == VL_OK, "%s: banded prune", what);
        pair_list want = {0}, got = {0};
        brute_pairs(&want, boxes, NULL, NULL, n);
        pair_list_copy(&got, out.pairs, out.count);
        CHECK(pair_list_equal(got.p, got.n, want.p, want.n), "%s: banded %u pairs, brute force %u", what, got.n,
              want.n);
        out.count = 0;
        CHECK(vl_prune_bands_bipartite(&bands_a, &bands_b, 0, &out) == VL_OK, "%s: banded bipartite", what);
        want.n = 0;
        for (uint32_t i = 0; i < na; i++)
            for (uint32_t j = 0; j < nb; j++)
                if (test_box_overlap(&boxes[i], &boxes[na + j])) pair_list_push(&want, i, j);
        if (out.count > 1) qsort(out.pairs, out.count, sizeof *out.pairs, test_pair_cmp);
        CHECK(pair_list_equal(out.pairs, out.count, want.p, want.n), "%s: banded bipartite %u pairs, brute force %u",
              what, out.count, want.n);
        free(want.p), free(got.p);
        vl_pair_buffer_free(&out);
    } else {
        CHECK(s == VL_ERR_TOO_LARGE, "%s: %s", what, vl_status_string(s));
    }
    vl_prune_bands_free(&bands);
    vl_prune_bands_free(&bands_a);
    vl_prune_bands_free(&bands_b);
    vl_prune_set_free(&all);
    vl_prune_set_free(&a);
    vl_prune_set_free(&b);
    vl_prune_scratch_free(&scratch);
    return banded;
}

/* Bands forced on every scene (huge and infinite boxes land in every band or the end ones), boxes
 * exactly on band borders, everything in one band, tiny sets. */
static void test_bands(void) {
    char what[80];
    static const uint32_t forces[] = {2, 3, 7, 64};
    for (int scene = 0; scene < SCENE_COUNT; scene++)
        for (uint32_t round = 0; round < 4; round++) {
            test_rng r = {7000u + 10u * (uint64_t)scene + round};
            uint32_t n = 1 + test_u32(&r, test_scaled(1500));
            vl_aabb* boxes = malloc(n * sizeof *boxes);
            for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, scene);
            for (unsigned f = 0; f < sizeof forces / sizeof *forces; f++) {
                snprintf(what, sizeof what, "%s n %u, %u bands", scene_names[scene], n, forces[f]);
                vl_band_grid none = {0, 0, 0, 0};
                /* boxes as wide as the world take too many bands: then unbanded, which is fine */
                int wide = scene == SCENE_IDENTICAL || scene == SCENE_TOUCHING || forces[f] == 64;
                CHECK(check_banded(boxes, n, none, forces[f], what) || wide, "%s: not banded", what);
            }
            free(boxes);
        }
    /* integer boxes on [0, 24) and bands of width 1 or 3 from 0: every bound on a band border; one
     * band of width 100 holds all; a grid far away puts everything in its first or last band */
    static const vl_band_grid grids[] = {{0, 24, 0, 1}, {1, 8, 0, 1.0 / 3}, {1, 5, -100, 0.01}, {0, 16, 1e6, 1},
                                         {1, 16, -1e6, 1e-3}};
    for (unsigned g = 0; g < sizeof grids / sizeof *grids; g++)
        for (uint32_t round = 0; round < 3; round++) {
            test_rng r = {8000u + 10u * g + round};
            uint32_t n = 2 + test_u32(&r, test_scaled(600));
            vl_aabb* boxes = malloc(n * sizeof *boxes);
            for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, SCENE_TOUCHING);
            snprintf(what, sizeof what, "borders grid %u n %u", g, n);
            CHECK(check_banded(boxes, n, grids[g], 0, what), "%s: not banded", what);
            free(boxes);
        }
    for (uint32_t n = 1; n < 20; n++) {
        test_rng r = {n};
        vl_aabb boxes[20];
        for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, n % 2 ? SCENE_TOUCHING : SCENE_INFINITE);
        check_banded(boxes, n, (vl_band_grid){0, 0, 0, 0}, 5, "tiny");
    }
    /* the same border grids, and forced bands on every scene, at the far offsets: the grids' origins
     * moved with the boxes (the band axis is y or z, moved by o / 2 or -o) */
    for (uint32_t k = 1; k < SCENE_OFFSET_COUNT; k++) {
        g_scene_offset = scene_offset(k);
        float v[3];
        scene_offset_vector(g_scene_offset, v);
        for (unsigned g = 0; g < sizeof grids / sizeof *grids; g++) {
            test_rng r = {8500u + 10u * g + k};
            uint32_t n = 2 + test_u32(&r, test_scaled(300));
            vl_aabb* boxes = malloc(n * sizeof *boxes);
            for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, g % 2 ? SCENE_BORDER : SCENE_TOUCHING);
            vl_band_grid moved = grids[g];
            moved.origin += v[1 + moved.side];
            snprintf(what, sizeof what, "borders grid %u n %u at %g", g, n, g_scene_offset);
            CHECK(check_banded(boxes, n, moved, 0, what), "%s: not banded", what);
            free(boxes);
        }
        for (int scene = 0; scene <= SCENE_BORDER; scene++) {
            test_rng r = {8700u + 10u * (uint64_t)scene + k};
            uint32_t n = 1 + test_u32(&r, test_scaled(800));
            vl_aabb* boxes = malloc(n * sizeof *boxes);
            for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, scene);
            snprintf(what, sizeof what, "%s n %u, 7 bands at %g", scene_names[scene], n, g_scene_offset);
            check_banded(boxes, n, (vl_band_grid){0, 0, 0, 0}, 7, what);
            free(boxes);
        }
    }
    g_scene_offset = 0.0f;
    /* the automatic grid: bands on a large uniform set, none when every box spans the band axis */
    vl_aabb* boxes = malloc(20000 * sizeof *boxes);
    test_rng r = {9};
    for (uint32_t i = 0; i < 20000; i++) boxes[i] = scene_box(&r, SCENE_UNIFORM);
    vl_prune_set set = {0};
    vl_prune_scratch scratch = {0};
    CHECK(vl_prune_set_build(&set, &scratch, boxes, NULL, 20000, 0, 0) == VL_OK, "build");
    CHECK(vl_band_grid_choose(&set, NULL, 0).count > 1, "uniform 20k: no bands");
    for (uint32_t i = 0; i < 20000; i++)
        boxes[i].min[1] = boxes[i].min[2] = -1e30f, boxes[i].max[1] = boxes[i].max[2] = 1e30f;
    CHECK(vl_prune_set_build(&set, &scratch, boxes, NULL, 20000, 0, 0) == VL_OK, "build");
    CHECK(vl_band_grid_choose(&set, NULL, 0).count == 1, "boxes spanning both other axes: banded");
    check_complete(boxes, 2000, "spanning");
    vl_prune_set_free(&set);
    vl_prune_scratch_free(&scratch);
    free(boxes);
}

static void test_bad_input(void) {
    vl_aabb boxes[3] = {{{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}};
    vl_pair_buffer out = {0};
    CHECK(vl_box_prune(boxes, 3, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_box_prune(NULL, 3, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL boxes");
    CHECK(vl_box_prune(NULL, 0, &out, NULL) == VL_OK && out.count == 0, "no boxes");
    CHECK(vl_box_prune_bipartite(NULL, 1, boxes, 1, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL a");
    CHECK(vl_box_prune_bipartite(boxes, 1, NULL, 1, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL b");
    CHECK(vl_box_prune_bipartite(boxes, 1, boxes, 1, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    vl_pair_buffer broken = {NULL, 0, 4};
    CHECK(vl_box_prune(boxes, 3, &broken, NULL) == VL_ERR_INVALID_ARGUMENT, "broken buffer");
    boxes[2].max[1] = test_bits_float(0x7FC00000u);
    CHECK(vl_box_prune(boxes, 3, &out, NULL) == VL_ERR_INVALID_BOUNDS && out.count == 0, "NaN");
    CHECK(vl_box_prune_bipartite(boxes, 1, boxes, 3, &out, NULL) == VL_ERR_INVALID_BOUNDS && out.count == 0, "NaN in b");
    boxes[2].max[1] = 1;
    boxes[1].min[0] = 2;
    CHECK(vl_box_prune(boxes, 3, &out, NULL) == VL_ERR_INVALID_BOUNDS && out.count == 0, "min > max");
    CHECK(vl_box_prune_bipartite(boxes, 3, boxes, 1, &out, NULL) == VL_ERR_INVALID_BOUNDS && out.count == 0,
          "min > max in a");
    vl_pair_buffer_free(&out);
}

/* Bad scratch (NULL, misaligned, one byte short) is refused with nothing written, after the
 * argument checks and before the bounds check; no scratch is needed below 2 boxes (or with an
 * empty side). */
static void test_bad_scratch(void) {
    uint32_t n = 500;
    vl_aabb* boxes = malloc(n * sizeof *boxes);
    test_rng r = {77};
    for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, SCENE_UNIFORM);
    size_t bytes = vl_box_prune_scratch_size(n), bip = vl_box_prune_bipartite_scratch_size(n / 2, n - n / 2);
    CHECK(bytes > 0 && bip > 0, "sizes %zu %zu", bytes, bip);
    CHECK(vl_box_prune_scratch_size(0) == 0 && vl_box_prune_scratch_size(1) == 0, "no scratch under 2 boxes");
    CHECK(vl_box_prune_bipartite_scratch_size(0, 9) == 0 && vl_box_prune_bipartite_scratch_size(9, 0) == 0,
          "no scratch with an empty side");
    CHECK(vl_box_prune_scratch_size(0x7FFFFFF1u) == SIZE_MAX, "too large");
    CHECK(vl_box_prune_bipartite_scratch_size(1, 0x7FFFFFF1u) == SIZE_MAX, "too large b");
    CHECK(vl_box_prune_scratch_size(10000) > vl_box_prune_scratch_size(1000), "size grows");
    size_t big = bytes > bip ? bytes : bip;
    unsigned char* block = scratch_new(big + 64);
    vl_pair_buffer out = {0};
    vl_pair_buffer_reserve(&out, 4);
    out.pairs[0] = (vl_pair){5, 6};
    out.count = 1;
    struct {
        void* p;
        size_t bytes, bip;
        const char* what;
    } bad[] = {{NULL, bytes, bip, "NULL"}, {block + 4, bytes, bip, "misaligned"},
               {block, bytes - 1, bip - 1, "one byte short"}, {block, 0, 0, "empty"}};
    for (unsigned k = 0; k < sizeof bad / sizeof *bad; k++) {
        memset(block, 0xA5, big + 64);
        CHECK(vl_box_prune(boxes, n, &out, &(vl_exec){.scratch = bad[k].p, .scratch_bytes = bad[k].bytes}) == VL_ERR_INVALID_ARGUMENT, "%s",
              bad[k].what);
        CHECK(vl_box_prune_bipartite(boxes, n / 2, boxes + n / 2, n - n / 2, &out, &(vl_exec){.scratch = bad[k].p, .scratch_bytes = bad[k].bip}) ==
                  VL_ERR_INVALID_ARGUMENT,
              "bipartite %s", bad[k].what);
        int untouched = 1;
        for (size_t i = 0; i < big + 64; i++) untouched &= block[i] == 0xA5;
        CHECK(untouched && out.count == 1 && out.pairs[0].a == 5 && out.pairs[0].b == 6, "%s: written", bad[k].what);
    }
    /* argument errors come before the scratch check, bounds errors after it */
    CHECK(vl_box_prune(boxes, n, NULL, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_box_prune(boxes, 0x7FFFFFF1u, &out, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_ERR_TOO_LARGE, "too large first");
    CHECK(vl_box_prune_bipartite(boxes, 1, boxes, 0x7FFFFFF1u, &out, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_ERR_TOO_LARGE,
          "too large b first");
    boxes[3].min[2] = test_bits_float(0x7FC00000u);
    CHECK(vl_box_prune(boxes, n, &out, &(vl_exec){.scratch = NULL, .scratch_bytes = bytes}) == VL_ERR_INVALID_ARGUMENT, "scratch before bounds");
    CHECK(vl_box_prune(boxes, n, &out, &(vl_exec){.scratch = block, .scratch_bytes = bytes}) == VL_ERR_INVALID_BOUNDS && out.count == 1, "NaN");
    CHECK(vl_box_prune_bipartite(boxes + 10, 9, boxes, 5, &out, &(vl_exec){.scratch = block, .scratch_bytes = big}) == VL_ERR_INVALID_BOUNDS &&
              out.count == 1,
          "NaN in b");
    CHECK(vl_box_prune(boxes, n, &out, &(vl_exec){.context = g_ctx}) == VL_ERR_INVALID_BOUNDS && out.count == 1,
          "context NaN");
    CHECK(vl_box_prune(boxes, n, &out, &(vl_exec){.context = g_ctx, .scratch = block, .scratch_bytes = bytes}) ==
              VL_ERR_INVALID_ARGUMENT,
          "context and scratch");
    CHECK(vl_box_prune_bipartite(boxes, 1, boxes, 1, &out, &(vl_exec){.context = g_ctx, .scratch_bytes = 64}) ==
              VL_ERR_INVALID_ARGUMENT,
          "context and scratch bipartite");
    /* below 2 boxes, or an empty side: no scratch needed, nothing appended */
    CHECK(vl_box_prune(boxes, 1, &out, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_OK && out.count == 1, "one box");
    CHECK(vl_box_prune_bipartite(boxes, 0, boxes + 10, 7, &out, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_OK && out.count == 1, "empty a");
    vl_pair_buffer_free(&out);
    free(block);
    free(boxes);
}

/* Pair buffers that are not volley's own or not consistent: refused by every call that appends,
 * nothing written, nothing freed (a caller's array with capacity 0 never reaches the free hook). */
static void test_bad_buffers(void) {
    vl_aabb boxes[64];
    test_rng r = {3};
    for (int i = 0; i < 64; i++) boxes[i] = scene_box(&r, SCENE_IDENTICAL);
    static vl_pair arr[4] = {{1, 2}};
    size_t before = vl_get_bytes_in_use();
    test_alloc_hooks h;
    test_alloc_begin(&h);
    vl_pair_buffer bad[] = {{arr, 0, 0}, {arr, 1, 0}, {NULL, 0, 4}, {NULL, 1, 0}};
    for (unsigned k = 0; k < sizeof bad / sizeof *bad; k++) {
        vl_pair_buffer f = bad[k];
        CHECK(vl_box_prune(boxes, 64, &f, NULL) == VL_ERR_INVALID_ARGUMENT, "buffer %u: prune", k);
        CHECK(vl_box_prune_bipartite(boxes, 3, boxes, 3, &f, NULL) == VL_ERR_INVALID_ARGUMENT, "buffer %u: bipartite", k);
        CHECK(vl_box_prune(boxes, 64, &f, &(vl_exec){.context = g_ctx}) == VL_ERR_INVALID_ARGUMENT, "buffer %u: context", k);
        CHECK(vl_pair_buffer_reserve(&f, 100) == VL_ERR_INVALID_ARGUMENT, "buffer %u: reserve", k);
        CHECK(memcmp(&f, &bad[k], sizeof f) == 0 && arr[0].a == 1 && arr[0].b == 2, "buffer %u: changed", k);
        vl_broadphase* bp = NULL;
        CHECK(vl_broadphase_create(NULL, &bp) == VL_OK, "create");
        vl_pair_buffer ok = {0};
        CHECK(vl_broadphase_commit(bp, &f, NULL) == VL_ERR_INVALID_ARGUMENT, "buffer %u: commit created", k);
        CHECK(vl_broadphase_commit(bp, &ok, &f) == VL_ERR_INVALID_ARGUMENT, "buffer %u: commit deleted", k);
        CHECK(ok.pairs == NULL && ok.capacity == 0, "buffer %u: commit wrote", k);
        vl_broadphase_destroy(bp);
        long frees = h.frees;
        vl_pair_buffer_free(&f); /* forgotten, not freed */
        CHECK(h.frees == frees && f.pairs == NULL && f.capacity == 0 && f.count == 0, "buffer %u: free", k);
    }
    /* a volley buffer whose capacity was cleared by the caller: refused, and not freed with size 0 */
    vl_pair_buffer grown = {0};
    CHECK(vl_box_prune(boxes, 64, &grown, NULL) == VL_OK && grown.count == 64 * 63 / 2, "identical boxes");
    size_t held = grown.capacity * sizeof(vl_pair);
    CHECK(h.bytes == held, "held %zu, expected %zu", h.bytes, held);
    vl_pair_buffer_free(&grown);
    CHECK(h.bytes == 0 && vl_get_bytes_in_use() == before, "free: %zu bytes still held", h.bytes);
    test_alloc_end(&h);
}

static void test_failing_allocator(void) {
    uint32_t n = 3000;
    vl_aabb* boxes = malloc(n * sizeof *boxes);
    test_rng r = {8};
    for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
    size_t before = vl_get_bytes_in_use();
    test_alloc_hooks h;
    test_alloc_begin(&h);
    for (int bip = 0; bip < 2; bip++) {
        int failures = 0;
        for (long budget = 0;; budget++) {
            vl_pair_buffer out = {0};
            h.budget = budget;
            vl_status s = bip ? vl_box_prune_bipartite(boxes, n / 2, boxes + n / 2, n - n / 2, &out, NULL)
                              : vl_box_prune(boxes, n, &out, NULL);
            h.budget = -1;
            size_t held = vl_get_bytes_in_use() - before - (size_t)out.capacity * sizeof(vl_pair);
            CHECK(held == 0, "%zu bytes held after the call", held);
            uint32_t count = out.count;
            vl_pair_buffer_free(&out);
            if (s == VL_OK) break;
            CHECK(s == VL_ERR_OUT_OF_MEMORY && count == 0, "budget %ld: %s", budget, vl_status_string(s));
            failures++;
        }
        CHECK(failures >= 3, "only %d failures", failures);
    }
    test_alloc_end(&h);
    CHECK(vl_get_bytes_in_use() == before, "leak");
    free(boxes);
}

int main(void) {
    test_alloc_begin(&g_hooks);
    CHECK(vl_context_create(NULL, &g_ctx) == VL_OK, "context");
    test_bad_input();
    test_bad_scratch();
    test_bad_buffers();
    test_scenes();
    test_offsets();
    test_terdiman();
    test_bands();
    test_failing_allocator();
    vl_context_destroy(g_ctx);
    test_alloc_end(&g_hooks);
    return test_finish("test_box_prune");
}
