/* BVH API edges: argument checks, invalid geometry and rays, allocation failures without leaks,
 * validation of a damaged tree, statistics, and the primitive tests against a double-precision
 * reference. */
#include <float.h>

#include "bvh/primitives.h"
#include "bvh/traverse_plan.h"
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

static vl_ray ray_at(float x, float y, float z, float dx, float dy, float dz) {
    vl_ray r = {{x, y, z}, 0.0f, {dx, dy, dz}, INFINITY};
    return r;
}

static void test_query_errors(void) {
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 2, NULL, &bvh, NULL) == VL_OK, "build quad");
    if (!bvh) return;
    vl_ray good = ray_at(0.25f, 0.5f, 1, 0, 0, -1);
    vl_hit h, one[1];
    CHECK(vl_bvh_raycast(NULL, &good, 1, 0, one, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_raycast(bvh, NULL, 1, 0, one, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL rays");
    CHECK(vl_bvh_raycast(bvh, &good, 1, 0, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
    CHECK(vl_bvh_raycast(bvh, &good, 1, 4, one, NULL) == VL_ERR_INVALID_FLAGS, "bad flags");
    CHECK(vl_bvh_raycast(bvh, &good, 1, VL_QUERY_ANY | VL_QUERY_GROUP_BY_ORIGIN, one, NULL) == VL_OK, "grouped any");
    CHECK(vl_bvh_raycast1(bvh, &good, VL_QUERY_GROUP_BY_ORIGIN, &h) == VL_ERR_INVALID_FLAGS, "raycast1 refuses the batch hint");
    CHECK(vl_bvh_raycast(bvh, &good, 1, VL_QUERY_GROUP_BY_ORIGIN, &h, NULL) == VL_OK && h.prim == 1, "a batch of one takes it");
    CHECK(vl_bvh_raycast(bvh, NULL, 0, 0, NULL, NULL) == VL_OK, "count 0");
    CHECK(vl_bvh_raycast1(NULL, &good, 0, &h) == VL_ERR_INVALID_ARGUMENT, "raycast1 NULL bvh");
    CHECK(vl_bvh_raycast1(bvh, NULL, 0, &h) == VL_ERR_INVALID_ARGUMENT, "raycast1 NULL ray");
    CHECK(vl_bvh_raycast1(bvh, &good, 0, NULL) == VL_ERR_INVALID_ARGUMENT, "raycast1 NULL hit");
    CHECK(vl_bvh_raycast1(bvh, &good, 0x10, &h) == VL_ERR_INVALID_FLAGS, "raycast1 bad flags");
    CHECK(vl_bvh_raycast1(bvh, &good, 0, &h) == VL_OK && h.prim == 1 && h.t == 1.0f, "quad hit prim %u t %g", h.prim,
          h.t);
    CHECK(fabsf(h.u - 0.25f) < 1e-6f && fabsf(h.v - 0.25f) < 1e-6f, "barycentrics %g %g", h.u, h.v);

    /* a batch mixing every kind of invalid ray with valid ones, at several batch sizes: one ray at
     * a time, walks, and ray streams (the last size: the 64 rays over again) */
    enum { many = VL_WALK_BATCH + 64 };
    static vl_ray rays[many];
    static vl_hit hits[many];
    int valid[64];
    for (uint32_t i = 0; i < 64; i++) {
        rays[i] = ray_at(0.1f + 0.012f * (float)i, 0.5f, 1.0f, 0, 0, -1);
        valid[i] = 1;
        switch (i % 12) {
        case 1: rays[i].origin[0] = NAN, valid[i] = 0; break;
        case 2: rays[i].origin[1] = INFINITY, valid[i] = 0; break;
        case 3: rays[i].dir[2] = 0, valid[i] = 0; break;
        case 4: rays[i].dir[1] = NAN, valid[i] = 0; break;
        case 5: rays[i].dir[0] = -INFINITY, valid[i] = 0; break;
        case 6: rays[i].tmin = -1, valid[i] = 0; break;
        case 7: rays[i].tmin = 3, rays[i].tmax = 2, valid[i] = 0; break;
        case 8: rays[i].tmax = NAN, valid[i] = 0; break;
        case 9: rays[i].tmin = NAN, valid[i] = 0; break;
        case 10: rays[i].tmax = 0.5f; break; /* valid, stops short */
        case 11: rays[i].dir[2] = -0x1p-127f, valid[i] = 0; break; /* a denormal: no direction left */
        default: break;
        }
    }
    for (uint32_t i = 64; i < many; i++) rays[i] = rays[i % 64];
    static const uint32_t sizes[] = {1, 2, 3, 7, 12, 64, many};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t n = sizes[k];
        for (uint32_t f = 0; f < 4; f++) {
            uint32_t flags = (f & 1) | (f & 2 ? VL_QUERY_GROUP_BY_ORIGIN : 0u);
            int any_invalid = 0;
            for (uint32_t i = 0; i < n; i++) any_invalid |= !valid[i % 64];
            vl_status st = vl_bvh_raycast(bvh, rays, n, flags, hits, NULL);
            CHECK(st == (any_invalid ? VL_ERR_INVALID_QUERY : VL_OK), "batch %u status %s", n, vl_status_string(st));
            for (uint32_t i = 0; i < n; i++) {
                int expect_hit = valid[i % 64] && i % 64 % 12 != 10;
                CHECK((hits[i].prim != VL_NO_HIT) == expect_hit, "batch %u ray %u prim %u", n, i, hits[i].prim);
                if (!expect_hit) CHECK(hits[i].t == INFINITY, "miss t %g", hits[i].t);
                vl_status s1 = vl_bvh_raycast1(bvh, &rays[i], f & 1, &h);
                CHECK(s1 == (valid[i % 64] ? VL_OK : VL_ERR_INVALID_QUERY), "single status %d ray %u", (int)s1, i);
                CHECK(h.prim == hits[i].prim && (h.t == hits[i].t), "single and batched ray %u", i);
            }
        }
    }
    /* direction components below FLT_MIN count as parallel axes */
    vl_ray tiny = ray_at(0.5f, 0.25f, 2.0f, 1e-40f, -1e-40f, -1.0f);
    CHECK(vl_bvh_raycast1(bvh, &tiny, 0, &h) == VL_OK && h.prim != VL_NO_HIT && h.t == 2.0f, "denormal dir t %g", h.t);
    vl_bvh_destroy(bvh);
}

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
    /* a batch whose scratch cannot be allocated is traced one ray at a time: the same answers */
    hooks.budget = -1;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    if (bvh) {
        enum { most = VL_WALK_BATCH + 100 };
        vl_ray* rays = malloc(sizeof(vl_ray) * most);
        vl_hit* hits = malloc(sizeof(vl_hit) * most);
        vl_hit* want = malloc(sizeof(vl_hit) * most);
        scene_rays_random(&m, most, 5, rays);
        rays[7].dir[0] = NAN; /* an invalid ray among them */
        static const uint32_t sizes[] = {300, most}; /* walks, then ray streams */
        for (int k = 0; k < 2 && rays && hits && want; k++) {
            const uint32_t n = sizes[k];
            CHECK(vl_bvh_raycast(bvh, rays, n, 0, want, NULL) == VL_ERR_INVALID_QUERY, "raycast");
            hooks.budget = 0;
            size_t before = hooks.bytes;
            CHECK(vl_bvh_raycast(bvh, rays, n, 0, hits, NULL) == VL_ERR_INVALID_QUERY, "raycast without scratch");
            CHECK(hooks.bytes == before, "nothing held");
            for (uint32_t i = 0; i < n; i++)
                CHECK(hits[i].prim == want[i].prim && hits[i].t == want[i].t, "answer %u without scratch", i);
            hooks.budget = -1;
        }
        free(rays), free(hits), free(want);
        vl_bvh_destroy(bvh);
    }
    CHECK(hooks.bytes == 0, "%zu bytes leaked", hooks.bytes);
    test_alloc_end(&hooks);
    scene_free(&m);
}

/* vl_bvh_raycast on the caller's scratch: the same answers as vl_bvh_raycast whichever way a batch goes (walks,
 * streams, chunks grouped by origin), no allocation at all, and a clear error, nothing written, for a
 * scratch that is missing, misaligned or too small. */
static void test_caller_scratch(void) {
    scene_mesh m;
    if (!scene_world(24, 12, 64, 9, &m)) return;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    if (!bvh) {
        scene_free(&m);
        return;
    }
    CHECK(vl_bvh_raycast_scratch_size(NULL, 100, 0) == 0, "size for a NULL bvh");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 100, 4) == 0, "size for bad flags");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 7, 0) == 0, "size under 8 rays");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 8, 0) > 0, "size at 8 rays");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 5000, VL_QUERY_ANY) >= vl_bvh_raycast_scratch_size(bvh, 500, VL_QUERY_ANY),
          "size grows with the batch");
    enum { n = VL_STREAM_CHUNK + 1 };
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* want = malloc(sizeof(vl_hit) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    const size_t most = vl_bvh_raycast_scratch_size(bvh, n, VL_QUERY_GROUP_BY_ORIGIN);
    char* block = aligned_alloc(VL_SCRATCH_ALIGNMENT, (most + 2 * VL_SCRATCH_ALIGNMENT) & ~(size_t)63);
    if (!rays || !want || !hits || !block) goto done;
    scene_rays_random(&m, n, 17, rays);
    rays[11].dir[1] = NAN; /* an invalid ray among them */
    test_alloc_hooks hooks;
    /* walks (100, 2500), streams (6000), two chunks (n), each also grouped by origin */
    static const uint32_t sizes[] = {3, 8, 100, 2500, 6000, n};
    for (int way = 0; way < 2; way++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            for (uint32_t f = 0; f < 2; f++) {
                const uint32_t count = sizes[k], flags = f | (way ? VL_QUERY_GROUP_BY_ORIGIN : 0u);
                const size_t need = vl_bvh_raycast_scratch_size(bvh, count, flags);
                const vl_status expect = count > 11 ? VL_ERR_INVALID_QUERY : VL_OK;
                CHECK(vl_bvh_raycast(bvh, rays, count, flags, want, NULL) == expect, "raycast %u", count);
                test_alloc_begin(&hooks);
                vl_status st = vl_bvh_raycast(bvh, rays, count, flags, hits, &(vl_exec){.scratch = need ? block : NULL, .scratch_bytes = need});
                test_alloc_end(&hooks);
                CHECK(st == expect, "way %d count %u flags %u: %s", way, count, flags, vl_status_string(st));
                CHECK(hooks.allocs == 0, "way %d count %u: %ld allocations", way, count, hooks.allocs);
                for (uint32_t i = 0; i < count; i++)
                    CHECK(hits[i].prim == want[i].prim && hits[i].t == want[i].t, "way %d count %u ray %u", way,
                          count, i);
                if (!need) continue;
                /* refused: nothing written */
                for (uint32_t i = 0; i < count; i++) hits[i].prim = 0xABCDu;
                void* bad[3] = {NULL, block + 16, block};
                size_t bytes[3] = {need, need, need - 1};
                for (int b = 0; b < 3; b++) {
                    st = vl_bvh_raycast(bvh, rays, count, flags, hits, &(vl_exec){.scratch = bad[b], .scratch_bytes = bytes[b]});
                    CHECK(st == VL_ERR_INVALID_ARGUMENT, "bad scratch %d: %s", b, vl_status_string(st));
                }
                uint32_t touched = 0;
                for (uint32_t i = 0; i < count; i++) touched += hits[i].prim != 0xABCDu;
                CHECK(touched == 0, "a refused call wrote %u hits", touched);
            }
        }
    }
    CHECK(vl_bvh_raycast(bvh, rays, 100, 4, hits, &(vl_exec){.scratch = block, .scratch_bytes = most}) == VL_ERR_INVALID_FLAGS, "bad flags");
    CHECK(vl_bvh_raycast(NULL, rays, 100, 0, hits, &(vl_exec){.scratch = block, .scratch_bytes = most}) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_raycast(bvh, rays, 100, 0, NULL, &(vl_exec){.scratch = block, .scratch_bytes = most}) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
done:
    free(rays), free(want), free(hits), free(block);
    vl_bvh_destroy(bvh);
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
    vl_ray r = ray_at(1.2f, 1.2f, 5, 0, 0, -1);
    vl_hit h;
    CHECK(vl_bvh_raycast1(bvh, &r, 0, &h) == VL_OK && h.prim < n && h.t == 4.0f, "stacked hit t %g", h.t);
    vl_bvh_destroy(bvh);
    free(idx);
}

/* The float triangle test against a double-precision reference, away from edges. */
static void test_triangle_reference(void) {
    test_rng rng = {99};
    uint32_t agree = 0, total = test_scaled(20000);
    for (uint32_t k = 0; k < total; k++) {
        float p[3][3], o[3], d[3];
        for (int i = 0; i < 3; i++)
            for (int a = 0; a < 3; a++) p[i][a] = test_float(&rng, -1, 1);
        for (int a = 0; a < 3; a++) o[a] = test_float(&rng, -3, 3), d[a] = test_float(&rng, -1, 1);
        vl_bvh_tri tri;
        vl_bvh_tri_setup(&tri, p[0], p[1], p[2], 0);
        /* double Cramer */
        double e1[3], e2[3], c[3], r[3], n[3];
        for (int a = 0; a < 3; a++)
            e1[a] = (double)p[1][a] - p[0][a], e2[a] = (double)p[2][a] - p[0][a], c[a] = (double)p[0][a] - o[a];
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        r[0] = d[1] * c[2] - d[2] * c[1], r[1] = d[2] * c[0] - d[0] * c[2], r[2] = d[0] * c[1] - d[1] * c[0];
        double det = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
        if (fabs(det) < 1e-3) continue;
        double t = (n[0] * c[0] + n[1] * c[1] + n[2] * c[2]) / det;
        double u = -(r[0] * e2[0] + r[1] * e2[1] + r[2] * e2[2]) / det;
        double v = (r[0] * e1[0] + r[1] * e1[1] + r[2] * e1[2]) / det;
        int inside = u > 1e-4 && v > 1e-4 && u + v < 1 - 1e-4 && t > 1e-4;
        int outside = u < -1e-4 || v < -1e-4 || u + v > 1 + 1e-4 || t < -1e-4;
        float ft = 0, fu = 0, fv = 0;
        int hit = vl_bvh_ray_triangle(o, d, 0.0f, INFINITY, &tri, &ft, &fu, &fv);
        if (inside) {
            CHECK(hit && fabs(ft - t) < 1e-4 * (1 + fabs(t)) && fabs(fu - u) < 1e-4 && fabs(fv - v) < 1e-4,
                  "case %u: hit %d t %g/%g u %g/%g v %g/%g", k, hit, ft, t, fu, u, fv, v);
            agree++;
        } else if (outside) {
            CHECK(!hit, "case %u: false hit", k);
            agree++;
        }
    }
    CHECK(agree > total / 2, "too few decisive cases: %u", agree);
}

/* A ray in a triangle's plane, or grazing it within about 2^-20 rad, misses: Cramer's rule there
 * cancelled to a "hit" at the ray's origin, far outside the triangle and its node boxes (found by
 * the fuzzer: the primitive test, so brute force, hit; the traversals culled). A steep ray hits. */
static void test_grazing_rays(void) {
    const float xyz[9] = {-1, -1, -1, -1, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f}; /* in the plane y = z */
    const uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "grazing: build");
    const vl_ray rays[3] = {
        {{-8, -8, -8}, 0.0f, {1.5f, 1e-30f, 0.0f}, INFINITY}, /* in the plane, 1e-30 off it */
        {{-8, -8, -8}, 0.0f, {1.0f, 1e-7f, 0.0f}, INFINITY},  /* 1e-7 rad off it */
        {{1.0f / 6, 19.0f / 3, -11.0f / 3}, 0.0f, {0.0f, -1.0f, 1.0f}, INFINITY}, /* steep, to the centroid */
    };
    vl_bvh_tri tri;
    vl_bvh_tri_setup(&tri, xyz, xyz + 3, xyz + 6, 0);
    vl_hit batch[3], single;
    CHECK(vl_bvh_raycast(bvh, rays, 3, 0, batch, NULL) == VL_OK, "grazing: raycast");
    for (int i = 0; i < 3; i++) {
        float t, u, v;
        int hit = vl_bvh_ray_triangle(rays[i].origin, rays[i].dir, 0.0f, FLT_MAX, &tri, &t, &u, &v);
        CHECK(hit == (i == 2), "grazing: primitive test of ray %d: hit %d", i, hit);
        CHECK(vl_bvh_raycast1(bvh, &rays[i], 0, &single) == VL_OK, "grazing: raycast1");
        if (i < 2) {
            CHECK(batch[i].prim == VL_NO_HIT && single.prim == VL_NO_HIT, "grazing ray %d hit", i);
        } else {
            CHECK(batch[i].prim == 0 && single.prim == 0 && fabsf(single.t - 5.0f) < 1e-5f && batch[i].t == single.t,
                  "steep ray: prim %u t %g", single.prim, single.t);
        }
    }
    vl_bvh_destroy(bvh);
}

int main(void) {
    CHECK(vl_get_bytes_in_use() == 0, "bytes in use at start");
    test_build_errors();
    test_query_errors();
    test_out_of_memory();
    test_caller_scratch();
    test_validate_and_stats();
    test_triangle_reference();
    test_grazing_rays();
    CHECK(vl_get_bytes_in_use() == 0, "bytes in use at the end: %zu", vl_get_bytes_in_use());
    return test_finish("test_rays_api");
}
