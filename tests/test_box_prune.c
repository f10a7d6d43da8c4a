/* One-shot box pruning against brute force: every scene, complete and bipartite, Terdiman's box
 * sets with their published pair counts, bad input, failing allocations. */
#include <stdint.h>

#include <volley/volley.h>

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
            CHECK(half.count == expected[flat][big], "terdiman %u%s halves: %u pairs", n, flat ? " flat" : "", half.count);
            vl_pair_buffer_free(&half);
            vl_pair_buffer_free(&out);
            free(boxes);
        }
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
    CHECK(vl_box_prune_bipartite(boxes, 3, boxes, 1, &out) == VL_ERR_INVALID_BOUNDS && out.count == 0, "min > max in a");
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
    test_failing_allocator();
    return test_finish("test_box_prune");
}
