/* Refit of triangle and box trees: after moving the primitives, a refitted tree validates and
 * answers raycasts (closest and any hit) and overlap queries as a fresh build of the moved data
 * does (overlaps also against the brute force); sah_growth is 1 after a build and after a refit
 * back to the built data, and grows when the motion scrambles the scene; bad input (NaN and
 * infinite vertices, NaN and inverted boxes, NULL, the wrong kind of tree) changes nothing; a
 * refit allocates nothing. */
#include <float.h>

#include "bvh/tree/tree.h"
#include "overlap_oracle.h"
#include "scenes.h"
#include "test_alloc.h"
#include "test_util.h"

#define T_REL_TOL 1e-5f

static int same_hit(vl_hit a, vl_hit b) {
    if (a.prim == VL_NO_HIT || b.prim == VL_NO_HIT) return a.prim == b.prim;
    if (a.prim == b.prim) return a.t == b.t && a.u == b.u && a.v == b.v;
    return fabsf(a.t - b.t) <= T_REL_TOL * fmaxf(1.0f, fabsf(a.t));
}

static vl_pair* sorted_pairs(const vl_pair_buffer* b, uint32_t* n) {
    *n = b->count;
    vl_pair* p = malloc(sizeof(vl_pair) * (b->count ? b->count : 1));
    if (b->count) memcpy(p, b->pairs, sizeof(vl_pair) * b->count);
    oracle_sort(p, b->count);
    return p;
}

/* Raycasts and overlaps on `refit` equal those on `fresh`; overlaps checked by the oracle too. */
static void compare_trees(const char* what, const vl_bvh* refit, const vl_bvh* fresh, const oracle_scene* sc,
                          const float lo[3], const float hi[3], uint32_t n, uint64_t seed) {
    CHECK(vl_bvh_validate(refit) == VL_OK, "%s: refitted tree validates", what);
    test_rng rng = {seed};
    float ext = 0;
    for (int a = 0; a < 3; a++) ext = fmaxf(ext, hi[a] - lo[a]);
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * n);
    vl_sphere* spheres = malloc(sizeof(vl_sphere) * n);
    for (uint32_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            float pad = 0.1f * (hi[a] - lo[a]) + 1e-3f;
            rays[i].origin[a] = test_float(&rng, lo[a] - pad, hi[a] + pad);
            float c = test_float(&rng, lo[a], hi[a]), h = test_float(&rng, 0, 0.03f * ext);
            boxes[i].min[a] = c - h, boxes[i].max[a] = c + h;
            spheres[i].center[a] = c;
        }
        scene_direction(&rng, rays[i].dir);
        rays[i].tmin = 0, rays[i].tmax = INFINITY;
        spheres[i].radius = test_float(&rng, 0, 0.03f * ext);
    }
    vl_hit* h1 = malloc(sizeof(vl_hit) * n);
    vl_hit* h2 = malloc(sizeof(vl_hit) * n);
    for (uint32_t flags = 0; flags < 2; flags++) {
        CHECK(vl_bvh_raycast(refit, rays, n, flags, h1, NULL) == VL_OK, "%s: raycast refit", what);
        CHECK(vl_bvh_raycast(fresh, rays, n, flags, h2, NULL) == VL_OK, "%s: raycast fresh", what);
        uint32_t bad = 0, hits = 0;
        for (uint32_t i = 0; i < n; i++) {
            hits += h2[i].prim != VL_NO_HIT;
            if (flags ? (h1[i].prim == VL_NO_HIT) != (h2[i].prim == VL_NO_HIT) : !same_hit(h1[i], h2[i])) bad++;
            vl_hit one;
            vl_bvh_raycast1(refit, &rays[i], flags, &one);
            if (flags ? (one.prim == VL_NO_HIT) != (h2[i].prim == VL_NO_HIT) : !same_hit(one, h2[i])) bad++;
        }
        CHECK(bad == 0, "%s: %u of %u rays differ (flags %u)", what, bad, n, flags);
        CHECK(hits > 0 || n < 100, "%s: no ray hit (a useless test)", what);
    }
    for (int shape = 0; shape < 2; shape++) {
        vl_pair_buffer a = {0}, b = {0};
        if (shape) {
            vl_bvh_overlap_spheres(refit, spheres, n, &a, NULL);
            vl_bvh_overlap_spheres(fresh, spheres, n, &b, NULL);
        } else {
            vl_bvh_overlap_boxes(refit, boxes, n, &a, NULL);
            vl_bvh_overlap_boxes(fresh, boxes, n, &b, NULL);
        }
        uint32_t na, nb;
        vl_pair *pa = sorted_pairs(&a, &na), *pb = sorted_pairs(&b, &nb);
        CHECK(na == nb && memcmp(pa, pb, sizeof(vl_pair) * na) == 0, "%s: overlaps %d: %u pairs, fresh build %u", what,
              shape, na, nb);
        oracle_report r = oracle_check(sc, shape ? NULL : boxes, shape ? spheres : NULL, n, pa, na);
        CHECK(r.missing == 0 && r.extra == 0 && r.duplicate == 0, "%s: overlaps %d against brute force: %llu missing, %llu extra",
              what, shape, (unsigned long long)r.missing, (unsigned long long)r.extra);
        free(pa), free(pb);
        vl_pair_buffer_free(&a), vl_pair_buffer_free(&b);
    }
    free(rays), free(boxes), free(spheres), free(h1), free(h2);
}

/* A copy of everything a refit may write, to prove an error leaves it alone. */
typedef struct snapshot {
    void* nodes;
    void* prims;
    void* wide;
    size_t node_bytes, prim_bytes, wide_bytes;
    float pad;
} snapshot;

static snapshot take(const vl_bvh* t) {
    snapshot s;
    s.node_bytes = sizeof(vl_bvh_node) * t->node_count;
    s.prim_bytes = t->kind == VL_BVH_TRIANGLES ? sizeof(float) * vl_bvh_tri_floats(t->prim_count)
                                               : sizeof(vl_bvh_box) * t->prim_count;
    s.wide_bytes = sizeof(vl_bvh_node4) * t->wide_count;
    s.nodes = malloc(s.node_bytes), s.prims = malloc(s.prim_bytes), s.wide = malloc(s.wide_bytes);
    memcpy(s.nodes, t->nodes, s.node_bytes);
    memcpy(s.prims, t->kind == VL_BVH_TRIANGLES ? (const void*)t->tris : (const void*)t->boxes, s.prim_bytes);
    memcpy(s.wide, t->wide, s.wide_bytes);
    s.pad = t->pad;
    return s;
}

static int unchanged(const vl_bvh* t, snapshot* s) {
    int same = memcmp(s->nodes, t->nodes, s->node_bytes) == 0 && memcmp(s->wide, t->wide, s->wide_bytes) == 0 &&
               memcmp(s->prims, t->kind == VL_BVH_TRIANGLES ? (const void*)t->tris : (const void*)t->boxes,
                      s->prim_bytes) == 0 &&
               s->pad == t->pad;
    free(s->nodes), free(s->prims), free(s->wide);
    return same;
}

static double growth(const vl_bvh* t) {
    vl_bvh_stats st;
    vl_bvh_get_stats(t, &st);
    return st.sah_growth;
}

/* Builds on m, moves every vertex by `move` (0: a wave, 1: noise, 2: scrambled), refits, compares
 * with a fresh build; then refits back. */
static void check_mesh(const char* name, scene_mesh* m, int move, uint32_t n, uint64_t seed) {
    vl_bvh* tree = NULL;
    CHECK(vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &tree, NULL) == VL_OK,
          "%s: build", name);
    if (!tree) return;
    CHECK(growth(tree) == 1.0, "%s: sah_growth %g after a build", name, growth(tree));
    size_t nf = 3 * (size_t)m->vertex_count;
    float* moved = malloc(sizeof(float) * nf);
    test_rng rng = {seed};
    const float ext = scene_extent(m);
    for (size_t i = 0; i < nf; i += 3) {
        float* p = moved + i;
        const float* o = m->xyz + i;
        for (int a = 0; a < 3; a++) {
            if (move == 0) p[a] = o[a] + 0.05f * ext * sinf(o[(a + 1) % 3] * 6.0f / ext);
            else if (move == 1) p[a] = o[a] + test_float(&rng, -0.01f, 0.01f) * ext;
            else p[a] = test_float(&rng, m->lo[a], m->hi[a]);
        }
    }
    /* bad input first: nothing changes */
    snapshot s = take(tree);
    float keep = moved[4];
    moved[4] = NAN;
    CHECK(vl_bvh_refit_triangles(tree, moved, NULL) == VL_ERR_INVALID_GEOMETRY, "%s: NaN vertex", name);
    moved[4] = INFINITY;
    CHECK(vl_bvh_refit_triangles(tree, moved, NULL) == VL_ERR_INVALID_GEOMETRY, "%s: infinite vertex", name);
    moved[4] = keep;
    CHECK(vl_bvh_refit_triangles(tree, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "%s: NULL", name);
    CHECK(vl_bvh_refit_triangles(NULL, moved, NULL) == VL_ERR_INVALID_ARGUMENT, "%s: NULL tree", name);
    vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
    CHECK(vl_bvh_refit_boxes(tree, &box, NULL) == VL_ERR_INVALID_ARGUMENT, "%s: boxes into a triangle tree", name);
    CHECK(unchanged(tree, &s), "%s: tree unchanged by errors", name);

    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    CHECK(vl_bvh_refit_triangles(tree, moved, NULL) == VL_OK, "%s: refit", name);
    CHECK(hooks.allocs == 0, "%s: refit allocated %ld times", name, hooks.allocs);
    test_alloc_end(&hooks);

    vl_bvh* fresh = NULL;
    CHECK(vl_bvh_build_triangles(moved, m->vertex_count, m->indices, m->triangle_count, NULL, &fresh, NULL) == VL_OK,
          "%s: fresh build", name);
    scene_mesh mm = *m;
    mm.xyz = moved;
    scene_bounds(&mm);
    oracle_scene sc = {moved, m->indices, NULL, m->triangle_count};
    char what[128];
    snprintf(what, sizeof what, "%s move %d", name, move);
    if (fresh) compare_trees(what, tree, fresh, &sc, mm.lo, mm.hi, n, seed + 1);
    double g = growth(tree);
    if (move == 2) CHECK(g > 1.5, "%s: scrambled, sah_growth only %g", what, g);
    else CHECK(g > 0.5 && g < 2.0, "%s: sah_growth %g", what, g);
    printf("test_tree_refit: %s: sah_growth %.3f\n", what, g);

    /* back to the built data: the very same tree */
    CHECK(vl_bvh_refit_triangles(tree, m->xyz, NULL) == VL_OK && growth(tree) == 1.0, "%s: refit back, sah_growth %g",
          what, growth(tree));
    vl_bvh* orig = NULL;
    vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &orig, NULL);
    if (orig) {
        CHECK(memcmp(orig->nodes, tree->nodes, sizeof(vl_bvh_node) * tree->node_count) == 0 &&
                  memcmp(orig->wide, tree->wide, sizeof(vl_bvh_node4) * tree->wide_count) == 0 &&
                  memcmp(orig->tris, tree->tris, sizeof(float) * vl_bvh_tri_floats(tree->prim_count)) == 0,
              "%s: refit back equals the build bit for bit", what);
    }
    vl_bvh_destroy(orig);
    vl_bvh_destroy(fresh);
    vl_bvh_destroy(tree);
    free(moved);
}

static void test_boxes(uint32_t count, uint32_t n, uint64_t seed) {
    test_rng rng = {seed};
    vl_aabb* a = malloc(sizeof(vl_aabb) * (count + 2));
    vl_aabb* b = malloc(sizeof(vl_aabb) * (count + 2));
    for (uint32_t i = 0; i < count; i++)
        for (int k = 0; k < 3; k++) {
            float c = test_float(&rng, 0, 100), h = test_float(&rng, 0, 3);
            a[i].min[k] = c - h, a[i].max[k] = c + h;
            float c2 = c + test_float(&rng, -5, 5);
            b[i].min[k] = c2 - h, b[i].max[k] = (i % 11 == 0) ? c2 - h : c2 + h;
        }
    for (int k = 0; k < 3; k++) {
        a[count].min[k] = -INFINITY, a[count].max[k] = INFINITY;
        b[count].min[k] = -INFINITY, b[count].max[k] = INFINITY;
        a[count + 1].min[k] = 150, a[count + 1].max[k] = INFINITY;
        b[count + 1].min[k] = -FLT_MAX, b[count + 1].max[k] = -90;
    }
    a[count].min[1] = -20, a[count].max[1] = -10;
    b[count].min[1] = -30, b[count].max[1] = -25;
    uint32_t total = count + 2;
    vl_bvh *tree = NULL, *fresh = NULL;
    CHECK(vl_bvh_build_boxes(a, total, NULL, &tree, NULL) == VL_OK, "boxes build");
    CHECK(vl_bvh_build_boxes(b, total, NULL, &fresh, NULL) == VL_OK, "boxes fresh build");
    if (!tree || !fresh) return;
    snapshot s = take(tree);
    vl_aabb keep = b[3];
    b[3].min[0] = NAN;
    CHECK(vl_bvh_refit_boxes(tree, b, NULL) == VL_ERR_INVALID_BOUNDS, "NaN box");
    b[3] = keep;
    b[3].min[2] = b[3].max[2] + 1;
    CHECK(vl_bvh_refit_boxes(tree, b, NULL) == VL_ERR_INVALID_BOUNDS, "inverted box");
    b[3] = keep;
    CHECK(vl_bvh_refit_boxes(tree, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL boxes");
    float xyz[9] = {0};
    CHECK(vl_bvh_refit_triangles(tree, xyz, NULL) == VL_ERR_INVALID_ARGUMENT, "vertices into a box tree");
    CHECK(unchanged(tree, &s), "box tree unchanged by errors");
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    CHECK(vl_bvh_refit_boxes(tree, b, NULL) == VL_OK, "refit boxes");
    CHECK(hooks.allocs == 0, "box refit allocated");
    test_alloc_end(&hooks);
    oracle_scene sc = {NULL, NULL, b, total};
    float lo[3] = {-10, -10, -10}, hi[3] = {110, 110, 110};
    compare_trees("boxes", tree, fresh, &sc, lo, hi, n, seed + 1);
    CHECK(vl_bvh_refit_boxes(tree, a, NULL) == VL_OK && growth(tree) == 1.0, "boxes refit back");
    vl_bvh_destroy(tree), vl_bvh_destroy(fresh);
    free(a), free(b);
}

int main(void) {
    scene_mesh m;
    CHECK(scene_soup(test_scaled(3000), 10.0f, 0.6f, 3, &m), "soup");
    for (int move = 0; move < 3; move++) check_mesh("soup", &m, move, test_scaled(800), 60 + move);
    scene_free(&m);
    uint32_t grid = test_scaled(60) < 8 ? 8 : test_scaled(60);
    CHECK(scene_world(grid, grid / 2, 4, 9, &m), "world");
    for (int move = 0; move < 2; move++) check_mesh("terrain world", &m, move, test_scaled(800), 70 + move);
    for (uint32_t k = 1; k < SCENE_OFFSET_COUNT; k++) { /* far from the origin */
        scene_mesh far;
        if (!scene_copy_moved(&m, k, &far)) continue;
        char name[64];
        snprintf(name, sizeof name, "terrain world at %g", scene_offset(k));
        check_mesh(name, &far, (int)k % 2, test_scaled(150), 100 + k);
        scene_free(&far);
    }
    scene_free(&m);
    if (scene_load_test_mesh("test_tree_refit", "bunny00.off", &m)) {
        check_mesh("bunny", &m, 0, test_scaled(400), 80);
        check_mesh("bunny", &m, 1, test_scaled(400), 81);
        scene_free(&m);
    }
    test_boxes(test_scaled(1500), test_scaled(800), 90);
    test_boxes(2, 50, 91);
    return test_finish("test_tree_refit");
}
