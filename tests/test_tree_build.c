/* BVH builds: argument checks (NULL arrays, counts of 0, an index past the vertices, NaN and
 * infinite vertices, NaN and inverted boxes, desc fields out of range: node_cost accepted above 0
 * and below FLT_MAX, the smallest positive float and the largest below FLT_MAX included, and
 * refused at 0, negative, FLT_MAX, infinity and NaN), the order in which a build's errors are
 * found (NULL, then the desc, then the size before any vertex or box is read, then the geometry),
 * *out untouched on failure; every allocation failing in turn answers VL_ERR_OUT_OF_MEMORY and
 * leaks nothing (triangles and boxes); statistics; validation catching a damaged tree (a child
 * outside its parent, a leaf's range, a triangle outside its leaf, a primitive twice) and passing
 * the repaired one; the leaf rows in the order of vl_bvh_tri; a thousand triangles in one spot
 * split by index into a valid tree. Statuses and the tree's invariants are exact. Builds on a
 * context: test_tree_context.c. */
#include <float.h>

#include "bvh/rays/ray_tests.h"
#include "scenes.h"
#include "test_alloc.h"
#include "test_util.h"

static const float quad_xyz[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
static const uint32_t quad_idx[] = {0, 1, 2, 0, 2, 3};

static void test_build_errors(void) {
    vl_bvh* bvh = (vl_bvh*)1;
    vl_bvh* const untouched = bvh;
    CHECK(vl_bvh_build_triangles(NULL, 4, quad_idx, 2, NULL, &bvh, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL xyz");
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, NULL, 2, NULL, &bvh, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL indices");
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 2, NULL, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 0, NULL, &bvh, NULL) == VL_ERR_INVALID_ARGUMENT, "0 triangles");
    uint32_t bad_idx[] = {0, 1, 4};
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, bad_idx, 1, NULL, &bvh, NULL) == VL_ERR_INVALID_GEOMETRY, "index past end");
    float xyz[12];
    memcpy(xyz, quad_xyz, sizeof xyz);
    xyz[4] = NAN;
    CHECK(vl_bvh_build_triangles(xyz, 4, quad_idx, 2, NULL, &bvh, NULL) == VL_ERR_INVALID_GEOMETRY, "NaN vertex");
    xyz[4] = -INFINITY;
    CHECK(vl_bvh_build_triangles(xyz, 4, quad_idx, 2, NULL, &bvh, NULL) == VL_ERR_INVALID_GEOMETRY, "inf vertex");
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 0;
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 2, &d, &bvh, NULL) == VL_ERR_INVALID_FLAGS, "leaf size 0");
    d = vl_bvh_default_desc(), d.max_leaf_size = VL_BVH_MAX_LEAF_SIZE + 1;
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 2, &d, &bvh, NULL) == VL_ERR_INVALID_FLAGS, "leaf size big");
    d = vl_bvh_default_desc(), d.sah_bins = 3;
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 2, &d, &bvh, NULL) == VL_ERR_INVALID_FLAGS, "3 bins");
    d = vl_bvh_default_desc(), d.node_cost = NAN;
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 2, &d, &bvh, NULL) == VL_ERR_INVALID_FLAGS, "NaN node cost");

    vl_aabb boxes[2] = {{{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}};
    CHECK(vl_bvh_build_boxes(NULL, 2, NULL, &bvh, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL boxes");
    CHECK(vl_bvh_build_boxes(boxes, 0, NULL, &bvh, NULL) == VL_ERR_INVALID_ARGUMENT, "0 boxes");
    boxes[1].min[2] = NAN;
    CHECK(vl_bvh_build_boxes(boxes, 2, NULL, &bvh, NULL) == VL_ERR_INVALID_BOUNDS, "NaN box");
    boxes[1].min[2] = 2;
    CHECK(vl_bvh_build_boxes(boxes, 2, NULL, &bvh, NULL) == VL_ERR_INVALID_BOUNDS, "min > max");
    CHECK(bvh == untouched, "out written on failure");
    CHECK(vl_get_bytes_in_use() == 0, "leak after failed builds: %zu", vl_get_bytes_in_use());
    vl_bvh_destroy(NULL);
    CHECK(vl_bvh_validate(NULL) == VL_ERR_INVALID_ARGUMENT, "validate NULL");
}

/* Every allocation of a build failing in turn: VL_ERR_OUT_OF_MEMORY, *out untouched, nothing
 * leaked; then the build succeeds. */
static void test_out_of_memory(void) {
    scene_mesh m;
    if (!scene_world(16, 8, 32, 3, &m)) return;
    vl_aabb boxes[40];
    for (int i = 0; i < 40; i++)
        for (int a = 0; a < 3; a++) boxes[i].min[a] = (float)(i * (a + 1) % 13), boxes[i].max[a] = boxes[i].min[a] + 2;
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    for (int kind = 0; kind < 2; kind++) {
        int built = 0;
        for (long budget = 0; budget < 64 && !built; budget++) {
            hooks.budget = budget;
            vl_bvh* bvh = NULL;
            vl_status st = kind ? vl_bvh_build_boxes(boxes, 40, NULL, &bvh, NULL)
                                : vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count,
                                                         NULL, &bvh, NULL);
            if (st == VL_OK) {
                built = 1;
                vl_bvh_destroy(bvh);
            } else {
                CHECK(st == VL_ERR_OUT_OF_MEMORY && bvh == NULL, "budget %ld: %s", budget, vl_status_string(st));
            }
            CHECK(hooks.bytes == 0, "kind %d budget %ld: %zu bytes leaked", kind, budget, hooks.bytes);
        }
        CHECK(built, "never built");
    }
    test_alloc_end(&hooks);
    scene_free(&m);
}

static void test_validate_and_stats(void) {
    scene_mesh m;
    if (!scene_world(20, 10, 8, 4, &m)) return;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    if (!bvh) return;
    vl_bvh_stats st;
    CHECK(vl_bvh_get_stats(NULL, &st) == VL_ERR_INVALID_ARGUMENT &&
              vl_bvh_get_stats(bvh, NULL) == VL_ERR_INVALID_ARGUMENT,
          "stats args");
    CHECK(vl_bvh_get_stats(bvh, &st) == VL_OK, "stats");
    CHECK(st.primitives == m.triangle_count && st.nodes == 2 * st.leaves - 1 && st.leaves <= st.primitives &&
              st.leaves >= (st.primitives + 7) / 8 && st.depth >= 2 && st.depth <= VL_BVH_MAX_DEPTH &&
              st.sah_cost > 1.0 && st.bytes >= st.primitives * sizeof(vl_bvh_tri),
          "stats: %u prims %u nodes %u leaves depth %u sah %g bytes %zu", st.primitives, st.nodes, st.leaves, st.depth,
          st.sah_cost, st.bytes);
    CHECK(st.bytes <= vl_get_bytes_in_use(), "bytes %zu of %zu in use", st.bytes, vl_get_bytes_in_use());
    CHECK(vl_bvh_validate(bvh) == VL_OK, "validate");
    /* damage the tree in several ways; each is caught, then repaired */
    vl_bvh_node saved = bvh->nodes[1];
    bvh->nodes[1].max[0] = bvh->nodes[0].max[0] + 1.0f;
    CHECK(vl_bvh_validate(bvh) == VL_ERR_INVALID_ARGUMENT, "child outside parent");
    bvh->nodes[1] = saved;
    uint32_t last = bvh->node_count - 1;
    saved = bvh->nodes[last];
    bvh->nodes[last].index ^= 1;
    CHECK(vl_bvh_validate(bvh) == VL_ERR_INVALID_ARGUMENT, "leaf range");
    bvh->nodes[last] = saved;
    /* the first leaf's first triangle (its rows start at slot 0) */
    uint32_t first_count = 0;
    for (uint32_t i = 0; i < bvh->node_count; i++) {
        const vl_bvh_node* node = &bvh->nodes[i];
        if (vl_bvh_node_count(node) && node->index == 0) first_count = vl_bvh_node_count(node);
    }
    CHECK(first_count >= 2, "the first leaf holds %u triangles", first_count);
    float* rows = vl_bvh_leaf_rows(bvh, 0);
    vl_bvh_tri tri, other, bad;
    vl_bvh_tri_get(rows, first_count, 0, &tri);
    vl_bvh_tri_get(rows, first_count, 1, &other);
    /* the rows' order: prim first, then the 12 of geometry (v0, e1, e2n, ng) */
    const float* geometry = vl_bvh_leaf_geometry(rows, first_count);
    CHECK(vl_bvh_leaf_prim(rows, 1) == other.prim && geometry[1] == other.v0[0] &&
              geometry[3 * first_count + 1] == other.e1[0] && geometry[6 * first_count + 1] == other.e2n[0] &&
              geometry[11 * first_count + 1] == other.ng[2],
          "leaf rows in the order of vl_bvh_tri");
    bad = tri;
    bad.v0[1] += 1000.0f;
    vl_bvh_tri_put(rows, first_count, 0, &bad);
    CHECK(vl_bvh_validate(bvh) == VL_ERR_INVALID_ARGUMENT, "triangle outside its leaf");
    bad = tri;
    bad.prim = other.prim;
    vl_bvh_tri_put(rows, first_count, 0, &bad);
    CHECK(vl_bvh_validate(bvh) == VL_ERR_INVALID_ARGUMENT, "duplicate primitive");
    vl_bvh_tri_put(rows, first_count, 0, &tri);
    CHECK(vl_bvh_validate(bvh) == VL_OK, "repaired");
    vl_bvh_destroy(bvh);
    scene_free(&m);

    /* every triangle in one spot: the builder splits by index and stays valid */
    float same[9] = {1, 1, 1, 2, 1, 1, 1, 2, 1};
    uint32_t n = 1000, *idx = malloc(sizeof(uint32_t) * 3 * n);
    for (uint32_t i = 0; i < 3 * n; i++) idx[i] = i % 3;
    CHECK(vl_bvh_build_triangles(same, 3, idx, n, NULL, &bvh, NULL) == VL_OK && vl_bvh_validate(bvh) == VL_OK, "stack");
    vl_ray r = {{1.2f, 1.2f, 5}, 0.0f, {0, 0, -1}, INFINITY};
    vl_hit h;
    CHECK(vl_bvh_raycast1(bvh, &r, 0, &h) == VL_OK && h.prim < n && h.t == 4.0f, "stacked hit t %g", h.t);
    vl_bvh_destroy(bvh);
    free(idx);
}

/* node_cost: > 0 and < FLT_MAX accepted (the largest float below FLT_MAX and the smallest positive
 * one included), FLT_MAX, infinity, 0, negative and NaN refused. */
static void test_node_cost(void) {
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 2};
    static const float good[] = {1e-45f, 1e-30f, 4.0f, 1e30f, 3.4028232e38f /* FLT_MAX - 1 ulp */};
    static const float bad[] = {0.0f, -1.0f, FLT_MAX, INFINITY, NAN};
    for (unsigned k = 0; k < sizeof good / sizeof *good; k++) {
        vl_bvh_desc d = vl_bvh_default_desc();
        d.node_cost = good[k];
        vl_bvh* bvh = NULL;
        CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, &d, &bvh, NULL) == VL_OK && vl_bvh_validate(bvh) == VL_OK,
              "node_cost %g refused", good[k]);
        vl_bvh_destroy(bvh);
    }
    for (unsigned k = 0; k < sizeof bad / sizeof *bad; k++) {
        vl_bvh_desc d = vl_bvh_default_desc();
        d.node_cost = bad[k];
        vl_bvh* bvh = NULL;
        CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, &d, &bvh, NULL) == VL_ERR_INVALID_FLAGS && !bvh,
              "node_cost %g accepted", bad[k]);
    }
}

/* The first problem in the documented order decides a build's status. */
static void test_status_order(void) {
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh_desc bad_desc = vl_bvh_default_desc();
    bad_desc.sah_bins = 1;
    vl_bvh* bvh = NULL;
    /* builds: NULL, then desc, then size (before reading), then geometry */
    CHECK(vl_bvh_build_triangles(xyz, 3, NULL, 1, &bad_desc, &bvh, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL first");
    float nan_xyz[9] = {NAN, 0, 0, 1, 0, 0, 0, 1, 0};
    CHECK(vl_bvh_build_triangles(nan_xyz, 3, idx, 1, &bad_desc, &bvh, NULL) == VL_ERR_INVALID_FLAGS, "desc before geometry");
    CHECK(vl_bvh_build_triangles(nan_xyz, 3, idx, (1u << 30) + 1, NULL, &bvh, NULL) == VL_ERR_TOO_LARGE,
          "size before geometry (the short index array is not read)");
    vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
    CHECK(vl_bvh_build_boxes(&box, (1u << 30) + 1, NULL, &bvh, NULL) == VL_ERR_TOO_LARGE, "boxes: size before bounds");
    CHECK(!bvh, "out written");
}

int main(void) {
    CHECK(vl_get_bytes_in_use() == 0, "bytes in use at start");
    test_build_errors();
    test_out_of_memory();
    test_validate_and_stats();
    test_node_cost();
    test_status_order();
    CHECK(vl_get_bytes_in_use() == 0, "bytes in use at the end: %zu", vl_get_bytes_in_use());
    return test_finish("test_tree_build");
}
