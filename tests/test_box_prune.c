/* One-shot box pruning against brute force: every scene, complete and bipartite, Terdiman's box
 * sets with their published pair counts, banded pruning on forced grids, bad input, failing
 * allocations. */
#include <stdint.h>

#include <volley/volley.h>

#include "sap/axis.h"
#include "sap/prune_band.h"

#include "test_sap_scenes.h"
#include "test_util.h"

static void check_complete(const vl_aabb* boxes, uint32_t n, const char* what) {
    vl_pair_buffer out = {0};
    vl_pair_buffer_reserve(&out, 3);
    out.pairs[0] = (vl_pair){7, 7};
    out.count = 1; /* appends after what is there */
    vl_status s = vl_box_prune(boxes, n, &out);
    CHECK(s == VL_OK, "%s: %s", what, vl_status_string(s));
    CHECK(out.count >= 1 && out.pairs[0].a == 7, "%s: earlier content lost", what);
    for (uint32_t i = 1; i < out.count; i++) CHECK(out.pairs[i].a < out.pairs[i].b, "%s: pair not i < j", what);
    pair_list want = {0}, got = {0};
    brute_pairs(&want, boxes, NULL, NULL, n);
    pair_list_copy(&got, out.pairs + 1, out.count - 1);
    CHECK(pair_list_equal(got.p, got.n, want.p, want.n), "%s: %u pairs, brute force %u", what, got.n, want.n);
    free(want.p), free(got.p);
    vl_pair_buffer_free(&out);
}

static void check_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, const char* what) {
    vl_pair_buffer out = {0};
    vl_status s = vl_box_prune_bipartite(a, na, b, nb, &out);
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
}

static void test_scenes(void) {
    char what[64];
    for (int scene = 0; scene < SCENE_COUNT; scene++)
        for (uint32_t round = 0; round < 6; round++) {
            test_rng r = {100u * (uint64_t)scene + round};
            uint32_t n = 1 + test_u32(&r, scene == SCENE_IDENTICAL ? 300 : test_scaled(5000));
            uint32_t nb = 1 + test_u32(&r, scene == SCENE_IDENTICAL ? 300 : test_scaled(3000));
            vl_aabb* boxes = malloc(n * sizeof *boxes);
            vl_aabb* other = malloc(nb * sizeof *other);
            for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, scene);
            for (uint32_t i = 0; i < nb; i++) other[i] = scene_box(&r, scene);
            snprintf(what, sizeof what, "%s n %u", scene_names[scene], n);
            check_complete(boxes, n, what);
            snprintf(what, sizeof what, "%s bipartite %u x %u", scene_names[scene], n, nb);
            check_bipartite(boxes, n, other, nb, what);
            check_bipartite(other, nb, boxes, n, what);
            /* the same boxes on both sides: ties everywhere */
            check_bipartite(boxes, n < 800 ? n : 800, boxes, n < 800 ? n : 800, what);
            free(boxes);
            free(other);
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
            CHECK(vl_box_prune(boxes, n, &out) == VL_OK, "terdiman prune");
            CHECK(out.count == expected[flat][big], "terdiman %u%s: %u pairs, expected %u", n, flat ? " flat" : "",
                  out.count, expected[flat][big]);
            if (!big) check_complete(boxes, n, flat ? "terdiman 10k flat" : "terdiman 10k");
            /* bipartite: first half against second half, summed with both halves' own pairs */
            vl_pair_buffer half = {0};
            CHECK(vl_box_prune(boxes, n / 2, &half) == VL_OK, "half");
            CHECK(vl_box_prune(boxes + n / 2, n / 2, &half) == VL_OK, "half");
            CHECK(vl_box_prune_bipartite(boxes, n / 2, boxes + n / 2, n / 2, &half) == VL_OK, "bipartite");
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
    CHECK(vl_box_prune(boxes, 3, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_box_prune(NULL, 3, &out) == VL_ERR_INVALID_ARGUMENT, "NULL boxes");
    CHECK(vl_box_prune(NULL, 0, &out) == VL_OK && out.count == 0, "no boxes");
    CHECK(vl_box_prune_bipartite(NULL, 1, boxes, 1, &out) == VL_ERR_INVALID_ARGUMENT, "NULL a");
    CHECK(vl_box_prune_bipartite(boxes, 1, NULL, 1, &out) == VL_ERR_INVALID_ARGUMENT, "NULL b");
    CHECK(vl_box_prune_bipartite(boxes, 1, boxes, 1, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    vl_pair_buffer broken = {NULL, 0, 4};
    CHECK(vl_box_prune(boxes, 3, &broken) == VL_ERR_INVALID_ARGUMENT, "broken buffer");
    boxes[2].max[1] = test_bits_float(0x7FC00000u);
    CHECK(vl_box_prune(boxes, 3, &out) == VL_ERR_INVALID_BOUNDS && out.count == 0, "NaN");
    CHECK(vl_box_prune_bipartite(boxes, 1, boxes, 3, &out) == VL_ERR_INVALID_BOUNDS && out.count == 0, "NaN in b");
    boxes[2].max[1] = 1;
    boxes[1].min[0] = 2;
    CHECK(vl_box_prune(boxes, 3, &out) == VL_ERR_INVALID_BOUNDS && out.count == 0, "min > max");
    CHECK(vl_box_prune_bipartite(boxes, 3, boxes, 1, &out) == VL_ERR_INVALID_BOUNDS && out.count == 0,
          "min > max in a");
    vl_pair_buffer_free(&out);
}

static void test_failing_allocator(void) {
    uint32_t n = 3000;
    vl_aabb* boxes = malloc(n * sizeof *boxes);
    test_rng r = {8};
    for (uint32_t i = 0; i < n; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
    size_t before = vl_bytes_in_use();
    test_alloc_hooks h;
    test_alloc_begin(&h);
    for (int bip = 0; bip < 2; bip++) {
        int failures = 0;
        for (long budget = 0;; budget++) {
            vl_pair_buffer out = {0};
            h.budget = budget;
            vl_status s = bip ? vl_box_prune_bipartite(boxes, n / 2, boxes + n / 2, n - n / 2, &out)
                              : vl_box_prune(boxes, n, &out);
            h.budget = -1;
            size_t held = vl_bytes_in_use() - before - (size_t)out.capacity * sizeof(vl_pair);
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
    CHECK(vl_bytes_in_use() == before, "leak");
    free(boxes);
}

int main(void) {
    test_bad_input();
    test_scenes();
    test_terdiman();
    test_bands();
    test_failing_allocator();
    return test_finish("test_box_prune");
}
