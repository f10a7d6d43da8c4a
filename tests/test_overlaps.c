/* Box and sphere overlap queries against a double-precision brute force (overlap_oracle.h): random
 * triangle soups, a terrain world, the real meshes, box trees with infinite boxes; queries near
 * surfaces at the triangles' scale, touching contacts, queries that contain whole primitives or
 * the whole scene, queries inside a closed mesh, zero-area triangles, huge and tiny sizes, invalid
 * queries mixed into batches. Batched (plain and on scratch, several batch sizes) and single-query
 * answers must be the same pair sets, and right against the oracle; pairs within the stated
 * tolerance may go either way (counted as skipped, and required to be rare). Bad arguments,
 * scratch checks, allocation counting and threads. */
#include <float.h>
#include <pthread.h>

#include "overlap_oracle.h"
#include "scenes.h"
#include "test_alloc.h"
#include "test_util.h"


/* One query as a batch of one, its pairs named `tag` (a batch names its queries from 0). */
static vl_status overlap_one(const vl_bvh* bvh, const vl_aabb* box, const vl_sphere* sphere, uint32_t tag,
                             vl_pair_buffer* out) {
    const uint32_t from = out ? out->count : 0;
    vl_status st = box ? vl_bvh_overlap_boxes(bvh, box, 1, out, NULL) : vl_bvh_overlap_spheres(bvh, sphere, 1, out, NULL);
    if (st == VL_OK || st == VL_ERR_INVALID_QUERY)
        for (uint32_t k = from; k < out->count; k++) out->pairs[k].a = tag;
    return st;
}

static uint64_t g_skipped, g_expected;

/* One set of queries (boxes or spheres) through every entry point, checked. */
static void check_queries(const char* what, const vl_bvh* bvh, const oracle_scene* sc, const vl_aabb* boxes,
                          const vl_sphere* spheres, uint32_t n) {
    int any_invalid = 0;
    for (uint32_t i = 0; i < n; i++)
        any_invalid |= boxes ? !oracle_query_box_valid(&boxes[i]) : !oracle_query_sphere_valid(&spheres[i]);
    const vl_status expect = any_invalid ? VL_ERR_INVALID_QUERY : VL_OK;

    vl_pair_buffer batched = {0}, single = {0}, scratch_out = {0};
    /* the plain batch appends after what is there */
    vl_pair_buffer_reserve(&batched, 3);
    batched.pairs[0] = (vl_pair){7, 7}, batched.count = 1;
    vl_status st = boxes ? vl_bvh_overlap_boxes(bvh, boxes, n, &batched, NULL) : vl_bvh_overlap_spheres(bvh, spheres, n, &batched, NULL);
    CHECK(st == expect, "%s: batched status %s", what, vl_status_string(st));
    CHECK(batched.pairs[0].a == 7 && batched.pairs[0].b == 7, "%s: earlier pair kept", what);
    uint32_t nb, ns, nc;
    vl_pair* pb = oracle_sorted_pairs(&batched, 1, &nb);
    oracle_report r = oracle_check(sc, boxes, spheres, n, pb, nb);
    CHECK(r.missing == 0 && r.extra == 0 && r.duplicate == 0 && r.invalid_answered == 0,
          "%s: %llu missing, %llu extra, %llu twice, %llu for invalid queries (query %u prim %u)", what,
          (unsigned long long)r.missing, (unsigned long long)r.extra, (unsigned long long)r.duplicate,
          (unsigned long long)r.invalid_answered, r.first_bad_query, r.first_bad_prim);
    g_skipped += r.skipped;
    g_expected += r.expected;

    for (uint32_t i = 0; i < n; i++) {
        st = boxes ? overlap_one(bvh, &boxes[i], NULL, i, &single) : overlap_one(bvh, NULL, &spheres[i], i, &single);
        int valid = boxes ? oracle_query_box_valid(&boxes[i]) : oracle_query_sphere_valid(&spheres[i]);
        CHECK(st == (valid ? VL_OK : VL_ERR_INVALID_QUERY), "%s: single %u status %s", what, i, vl_status_string(st));
    }
    vl_pair* ps = oracle_sorted_pairs(&single, 0, &ns);
    CHECK(oracle_same_pairs(pb, nb, ps, ns), "%s: batched %u pairs, single %u", what, nb, ns);

    size_t bytes = vl_bvh_overlap_scratch_size(bvh, n);
    void* scratch = bytes ? aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) / 64 * 64) : NULL;
    st = boxes ? vl_bvh_overlap_boxes(bvh, boxes, n, &scratch_out, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
               : vl_bvh_overlap_spheres(bvh, spheres, n, &scratch_out, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
    CHECK(st == expect, "%s: scratch status %s", what, vl_status_string(st));
    vl_pair* pc = oracle_sorted_pairs(&scratch_out, 0, &nc);
    CHECK(oracle_same_pairs(pb, nb, pc, nc), "%s: batched %u pairs, scratch %u", what, nb, nc);

    /* prefixes of odd sizes answer as the whole batch does for those queries */
    static const uint32_t sizes[] = {1, 3, 129};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t m = sizes[k] < n ? sizes[k] : n, np;
        scratch_out.count = 0;
        st = boxes ? vl_bvh_overlap_boxes(bvh, boxes, m, &scratch_out, NULL) : vl_bvh_overlap_spheres(bvh, spheres, m, &scratch_out, NULL);
        vl_pair* pp = oracle_sorted_pairs(&scratch_out, 0, &np);
        uint32_t want = 0;
        while (want < nb && pb[want].a < m) want++;
        CHECK(oracle_same_pairs(pb, want, pp, np), "%s: prefix of %u: %u pairs, want %u", what, m, np, want);
        free(pp);
    }
    free(scratch);
    free(pb), free(ps), free(pc);
    vl_pair_buffer_free(&batched), vl_pair_buffer_free(&single), vl_pair_buffer_free(&scratch_out);
}

/* Queries near the surface at the triangles' scale, and a few special ones. */
static void make_queries(const scene_mesh* m, uint32_t n, uint64_t seed, float scale, vl_aabb* boxes, vl_sphere* spheres) {
    test_rng rng = {seed};
    const float ext = scene_extent(m);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t* t = m->indices + 3 * (size_t)test_u32(&rng, m->triangle_count);
        float u = test_float(&rng, 0, 1), v = test_float(&rng, 0, 1 - u), p[3];
        for (int a = 0; a < 3; a++) {
            const float *p0 = m->xyz + 3 * (size_t)t[0], *p1 = m->xyz + 3 * (size_t)t[1], *p2 = m->xyz + 3 * (size_t)t[2];
            p[a] = p0[a] + u * (p1[a] - p0[a]) + v * (p2[a] - p0[a]) + test_float(&rng, -scale, scale);
        }
        float size = scale * test_float(&rng, 0.05f, 2.0f);
        switch (i % 16) {
        case 0: size = ext * 3; break;   /* contains everything */
        case 1: size = scale * 1e-5f; break; /* tiny */
        case 2: size = 0; break;         /* a point */
        default: break;
        }
        for (int a = 0; a < 3; a++) {
            float h = size * test_float(&rng, 0.3f, 1.0f);
            boxes[i].min[a] = p[a] - h, boxes[i].max[a] = p[a] + h;
            spheres[i].center[a] = p[a];
        }
        spheres[i].radius = size;
        if (i % 16 == 3) { /* a half-space box */
            boxes[i].min[0] = boxes[i].min[2] = -INFINITY, boxes[i].max[0] = boxes[i].max[2] = INFINITY;
            boxes[i].min[1] = -INFINITY;
        }
        if (i % 16 == 4) { /* a box touching a vertex with a face (exactly) */
            const float* vtx = m->xyz + 3 * (size_t)t[0];
            for (int a = 0; a < 3; a++) boxes[i].min[a] = vtx[a] - scale, boxes[i].max[a] = vtx[a] + scale;
            boxes[i].max[i % 3] = vtx[i % 3];
            boxes[i].min[i % 3] = vtx[i % 3] - scale;
        }
    }
}

/* Invalid queries among valid ones. */
static void spoil(vl_aabb* boxes, vl_sphere* spheres, uint32_t n) {
    for (uint32_t i = 5; i < n; i += 37) {
        switch ((i / 37) % 5) {
        case 0: boxes[i].min[1] = NAN, spheres[i].radius = NAN; break;
        case 1: boxes[i].min[0] = boxes[i].max[0] + 1.0f, spheres[i].radius = -1.0f; break;
        case 2: boxes[i].max[2] = NAN, spheres[i].center[0] = INFINITY; break;
        case 3: boxes[i].min[2] = INFINITY, boxes[i].max[2] = 0, spheres[i].center[1] = NAN; break;
        default: boxes[i].max[0] = -INFINITY, spheres[i].radius = INFINITY; break;
        }
    }
}

static void check_mesh_at(const char* name, const scene_mesh* m, uint32_t n, float scale, uint64_t seed,
                          const vl_bvh_desc* desc, int with_invalid) {
    vl_bvh* bvh = NULL;
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, desc, &bvh, NULL);
    CHECK(st == VL_OK, "%s: build %s", name, vl_status_string(st));
    if (!bvh) return;
    oracle_scene sc = {m->xyz, m->indices, NULL, m->triangle_count};
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * n);
    vl_sphere* spheres = malloc(sizeof(vl_sphere) * n);
    make_queries(m, n, seed, scale, boxes, spheres);
    if (with_invalid) spoil(boxes, spheres, n);
    char what[160];
    snprintf(what, sizeof what, "%s boxes", name);
    check_queries(what, bvh, &sc, boxes, NULL, n);
    snprintf(what, sizeof what, "%s spheres", name);
    check_queries(what, bvh, &sc, NULL, spheres, n);
    free(boxes), free(spheres);
    vl_bvh_destroy(bvh);
}

/* The mesh where it is, then moved by each far offset with a sixth of the queries. */
static void check_mesh(const char* name, const scene_mesh* m, uint32_t n, float scale, uint64_t seed,
                       const vl_bvh_desc* desc, int with_invalid) {
    check_mesh_at(name, m, n, scale, seed, desc, with_invalid);
    for (uint32_t k = 1; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh moved;
        char what[160];
        if (!scene_copy_moved_named(m, k, name, &moved, what, sizeof what)) continue;
        check_mesh_at(what, &moved, n / 6 > 16 ? n / 6 : 16, scale, seed + k, desc, with_invalid);
        scene_free(&moved);
    }
}

/* Exact contacts on an axis-aligned grid of triangles with integer vertices, zero-area triangles
 * among them, and queries inside a closed box-shaped mesh. */
static void test_contacts_at(uint32_t offset) {
    scene_mesh m;
    memset(&m, 0, sizeof m);
    /* a closed cube [0, 8]^3 of 12 triangles, a floor grid at y = -1, and degenerate triangles */
    static const float cube[8][3] = {{0, 0, 0}, {8, 0, 0}, {0, 8, 0}, {8, 8, 0}, {0, 0, 8}, {8, 0, 8}, {0, 8, 8}, {8, 8, 8}};
    static const uint8_t faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                         {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    scene_reserve(&m, 8 + 121 + 12, 12 + 200 + 4);
    for (int c = 0; c < 8; c++) scene_push_vertex(&m, cube[c][0], cube[c][1], cube[c][2]);
    for (int f = 0; f < 12; f++) scene_push_tri(&m, faces[f][0], faces[f][1], faces[f][2]);
    for (int z = 0; z <= 10; z++)
        for (int x = 0; x <= 10; x++) scene_push_vertex(&m, (float)(2 * x - 6), -1.0f, (float)(2 * z - 6));
    for (int z = 0; z < 10; z++)
        for (int x = 0; x < 10; x++) {
            uint32_t a = 8 + (uint32_t)(z * 11 + x), b = a + 1, c = a + 11, d = c + 1;
            scene_push_tri(&m, a, c, b);
            scene_push_tri(&m, b, c, d);
        }
    uint32_t base = m.vertex_count; /* a segment, a point, a segment with a repeated vertex */
    scene_push_vertex(&m, 20, 0, 0), scene_push_vertex(&m, 22, 2, 2), scene_push_vertex(&m, 24, 4, 4);
    scene_push_vertex(&m, 30, 1, 1), scene_push_vertex(&m, 30, 1, 1), scene_push_vertex(&m, 30, 1, 1);
    scene_push_vertex(&m, 40, 0, 0), scene_push_vertex(&m, 40, 0, 0), scene_push_vertex(&m, 40, 0, 6);
    /* an edge a denormal off parallel to z: the axis z x edge has a denormal length */
    scene_push_vertex(&m, 100, 0, 0), scene_push_vertex(&m, 112.5f, 7.5f, -8), scene_push_vertex(&m, 100, -0x1p-149f, -8);
    for (uint32_t t = 0; t < 4; t++) scene_push_tri(&m, base + 3 * t, base + 3 * t + 1, base + 3 * t + 2);
    scene_bounds(&m);

    enum { N = 40 };
    vl_aabb boxes[N];
    vl_sphere spheres[N];
    int must[N]; /* box i and sphere i overlap something (1) or nothing (0) */
    uint32_t n = 0;
#define Q(x0, y0, z0, x1, y1, z1, cx, cy, cz, r, hit)                                                 \
    boxes[n] = (vl_aabb){{x0, y0, z0}, {x1, y1, z1}}, spheres[n] = (vl_sphere){{cx, cy, cz}, r}, must[n++] = hit
    Q(1, 1, 1, 7, 7, 7, 4, 4, 4, 3.5f, 0);           /* inside the closed cube, touching nothing */
    Q(1, 1, 1, 7, 7, 8, 4, 4, 4, 4, 1);              /* touching its top face from inside */
    Q(8, 2, 2, 9, 3, 3, 9, 4, 4, 1, 1);              /* touching the x = 8 face from outside */
    Q(8.0001f, 2, 2, 9, 3, 3, 9.0001f, 4, 4, 1, 0);  /* just apart */
    Q(-3, -2, -3, 3, -1, 3, 0, -2, 0, 1, 1);         /* touching the floor from below */
    Q(-3, -1.5f, -3, 3, -1.25f, 3, 0, -2.5f, 0, 1, 0); /* below the floor */
    Q(21, 1, 1, 21, 1, 1, 21, 1, 1, 0, 1);           /* a point on the segment triangle */
    Q(21, 1.5f, 1, 21, 2, 1, 21, 1.5f, 1, 0.25f, 0); /* near it */
    Q(29, 0, 0, 30, 1, 1, 30, 1, 2, 1, 1);           /* touching the point triangle */
    Q(30.5f, 0, 0, 31, 1, 1, 30, 1, 2.5f, 1, 0);     /* near it */
    Q(40, 0, 3, 41, 1, 4, 41, 0, 3, 1, 1);           /* touching the repeated-vertex segment */
    Q(99.5f, 0, 0, 100, 0, 0, 99.5f, 0, 0, 0.5f, 1); /* a segment ending on its vertex */
    Q(99.5f, -0x1p-149f, 0, 100, -0x1p-149f, 0, 99.5f, -0x1p-149f, 0, 0.5f, 1); /* the fuzzer's: a denormal below */
    Q(-100, -100, -100, 100, 100, 100, 0, 0, 0, 200, 1); /* everything */
    Q(-INFINITY, -INFINITY, -INFINITY, INFINITY, -1, INFINITY, 0, -1e6f, 0, 999999, 1); /* a half-space: the floor */
    Q(-INFINITY, -INFINITY, -INFINITY, INFINITY, -1.5f, INFINITY, 0, -1e6f, 0, 999900, 0);
#undef Q
    /* moved: every query with the scene, checked by the oracle (the rounding of a far offset
       changes which of them touch) */
    scene_move(&m, scene_offset(offset));
    scene_move_boxes(boxes, n, scene_offset(offset));
    float v[3];
    scene_offset_vector(scene_offset(offset), v);
    for (uint32_t i = 0; i < n; i++) scene_move_points(spheres[i].center, 1, v);
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "contacts build");
    oracle_scene sc = {m.xyz, m.indices, NULL, m.triangle_count};
    for (uint32_t i = 0; i < n && bvh && offset == 0; i++) {
        vl_pair_buffer b = {0}, s = {0};
        CHECK(vl_bvh_overlap_boxes(bvh, &boxes[i], 1, &b, NULL) == VL_OK, "contact box %u", i);
        CHECK(vl_bvh_overlap_spheres(bvh, &spheres[i], 1, &s, NULL) == VL_OK, "contact sphere %u", i);
        CHECK((b.count > 0) == must[i], "contact box %u: %u pairs, want %s", i, b.count, must[i] ? "some" : "none");
        CHECK((s.count > 0) == must[i], "contact sphere %u: %u pairs, want %s", i, s.count, must[i] ? "some" : "none");
        vl_pair_buffer_free(&b), vl_pair_buffer_free(&s);
    }
    check_queries("contacts boxes", bvh, &sc, boxes, NULL, n);
    check_queries("contacts spheres", bvh, &sc, NULL, spheres, n);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* A tree of random boxes (flat ones, an infinite slab, an unbounded corner) moved by
 * scene_offset(k), with box and sphere queries moved alike. */
static void test_box_tree(uint32_t count, uint32_t n, uint64_t seed, uint32_t k) {
    test_rng rng = {seed};
    vl_aabb* prims = malloc(sizeof(vl_aabb) * (count + 2));
    for (uint32_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++) {
            float c = test_float(&rng, 0, 100), h = test_float(&rng, 0, 3);
            prims[i].min[a] = c - h, prims[i].max[a] = (i % 13 == 0) ? c - h : c + h;
        }
    for (int a = 0; a < 3; a++) prims[count].min[a] = -INFINITY, prims[count].max[a] = INFINITY;
    prims[count].min[1] = -20, prims[count].max[1] = -10;
    for (int a = 0; a < 3; a++) prims[count + 1].min[a] = 150, prims[count + 1].max[a] = INFINITY;
    uint32_t total = count + 2;
    scene_move_boxes(prims, total, scene_offset(k));
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_boxes(prims, total, NULL, &bvh, NULL) == VL_OK, "box tree build");
    if (!bvh) return;
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * n);
    vl_sphere* spheres = malloc(sizeof(vl_sphere) * n);
    float v[3];
    scene_offset_vector(scene_offset(k), v);
    for (uint32_t i = 0; i < n; i++) {
        const vl_aabb* p = &prims[test_u32(&rng, total)];
        for (int a = 0; a < 3; a++) {
            float c = v[a] + test_float(&rng, -30, 180), h = test_float(&rng, 0, 5);
            if (i % 4 == 0 && isfinite(p->max[a])) c = p->max[a] + h; /* touching a face (or nearly, rounded) */
            boxes[i].min[a] = c - h, boxes[i].max[a] = c + h;
            spheres[i].center[a] = c;
        }
        spheres[i].radius = test_float(&rng, 0, 6);
        if (i % 29 == 0) boxes[i].max[0] = INFINITY;
    }
    spoil(boxes, spheres, n);
    oracle_scene sc = {NULL, NULL, prims, total};
    check_queries("box tree boxes", bvh, &sc, boxes, NULL, n);
    check_queries("box tree spheres", bvh, &sc, NULL, spheres, n);
    free(boxes), free(spheres), free(prims);
    vl_bvh_destroy(bvh);
}

static void test_scenes(void) {
    scene_mesh m;
    CHECK(scene_soup(test_scaled(3000), 10.0f, 0.6f, 3, &m), "soup");
    check_mesh("soup", &m, test_scaled(1500), 0.4f, 41, NULL, 1);
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 32, d.sah_bins = 4;
    check_mesh("soup, leaves of 32", &m, test_scaled(600), 0.4f, 42, &d, 0);
    d.max_leaf_size = 1;
    check_mesh("soup, leaves of 1", &m, test_scaled(600), 0.4f, 43, &d, 1);
    scene_free(&m);
    CHECK(scene_soup(test_scaled(800), 1e-3f, 1e-4f, 4, &m), "tiny soup");
    check_mesh("tiny soup", &m, test_scaled(500), 5e-5f, 44, NULL, 0);
    scene_free(&m);
    CHECK(scene_soup(test_scaled(800), 1e5f, 2e3f, 5, &m), "huge soup");
    check_mesh("huge soup", &m, test_scaled(500), 1e3f, 45, NULL, 1);
    scene_free(&m);
    /* small triangles far from the origin: the leaf tests' projections cancel most digits */
    CHECK(scene_soup(test_scaled(800), 4e3f, 1.0f, 6, &m), "far soup");
    check_mesh("far soup", &m, test_scaled(500), 0.5f, 49, NULL, 1);
    scene_free(&m);
    uint32_t grid = test_scaled(60) < 8 ? 8 : test_scaled(60);
    CHECK(scene_world(grid, grid / 2, 16, 9, &m), "world");
    check_mesh("terrain world", &m, test_scaled(1500), 1.0f, 46, NULL, 1);
    scene_free(&m);
    static const char* files[] = {"bunny00.off", "camel.off"};
    for (int f = 0; f < 2; f++) {
        if (!scene_load_test_mesh("test_overlaps", files[f], &m)) continue;
        check_mesh(files[f], &m, test_scaled(f ? 300 : 400), scene_extent(&m) * 0.01f, 47 + f, NULL, 1);
        /* a sphere at the middle of the bunny, inside it, touching nothing small enough */
        scene_free(&m);
    }
}

/* Queries with a pair set outside the band of 1e-4 of their own size (a box's largest half side, a
 * sphere's radius): a touching triangle missing, or one further than the band reported. The
 * queries of the bench and the tool (scene_overlap_queries) on a terrain world moved by
 * scene_offset(k); bvh.h promises the band but for pairs within the tolerance of a triangle much
 * larger than the query, which this world has few of: at most 0.1% of the queries. */
static void test_band(uint32_t k) {
    scene_mesh m;
    if (!scene_world(48, 48, 0, 60 + k, &m)) return;
    scene_move(&m, scene_offset(k));
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "band build");
    const uint32_t n = test_scaled(1000);
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * n);
    vl_sphere* spheres = malloc(sizeof(vl_sphere) * n);
    scene_overlap_queries(&m, n, 70 + k, boxes, spheres);
    const oracle_scene sc = {m.xyz, m.indices, NULL, m.triangle_count};
    oracle_bounds* bounds = oracle_scene_bounds(&sc);
    for (int shape = 0; shape < 2 && bvh; shape++) {
        vl_pair_buffer out = {0};
        CHECK((shape ? vl_bvh_overlap_spheres(bvh, spheres, n, &out, NULL) : vl_bvh_overlap_boxes(bvh, boxes, n, &out, NULL)) == VL_OK,
              "band %s", shape ? "spheres" : "boxes");
        uint32_t np;
        vl_pair* pairs = oracle_sorted_pairs(&out, 0, &np);
        uint8_t* got = calloc(m.triangle_count, 1);
        uint32_t wrong = 0, at = 0;
        double worst = 0;
        for (uint32_t q = 0; q < n; q++) {
            uint32_t begin = at;
            for (; at < np && pairs[at].a == q; at++) got[pairs[at].b] = 1;
            double size = spheres[q].radius;
            if (!shape) {
                size = 0;
                for (int a = 0; a < 3; a++) size = fmax(size, 0.5 * ((double)boxes[q].max[a] - boxes[q].min[a]));
            }
            int bad = 0;
            for (uint32_t i = 0; i < m.triangle_count; i++) {
                if (!got[i] && oracle_bounds_apart(&bounds[i], shape ? NULL : &boxes[q], shape ? &spheres[q] : NULL, 0))
                    continue; /* apart, and not reported */
                double v[3][3];
                oracle_triangle(&sc, i, v);
                double gap = shape ? oracle_sphere_tri_gap(v, &spheres[q]) : oracle_box_tri_gap(v, &boxes[q], NULL);
                if ((gap <= 0 && !got[i]) || (gap > 1e-4 * size && got[i])) bad = 1, worst = fmax(worst, gap / size);
            }
            wrong += bad;
            for (uint32_t j = begin; j < at; j++) got[pairs[j].b] = 0;
        }
        printf("test_overlaps: band at %g, %s: %u of %u queries outside 1e-4 of their size (worst %.3g)\n",
               scene_offset(k), shape ? "spheres" : "boxes", wrong, n, worst);
        CHECK(wrong * 1000 <= n, "band at %g: %u of %u %s queries outside 1e-4 of their size", scene_offset(k), wrong, n,
              shape ? "sphere" : "box");
        free(got), free(pairs);
        vl_pair_buffer_free(&out);
    }
    free(boxes), free(spheres), free(bounds);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* NULL and bad arguments change nothing; scratch checks; no allocation once the buffer has grown. */
static void test_arguments(void) {
    scene_mesh m;
    if (!scene_soup(500, 10.0f, 0.6f, 8, &m)) return;
    vl_bvh* bvh = NULL;
    vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL);
    enum { N = 300 };
    vl_aabb boxes[N];
    vl_sphere spheres[N];
    make_queries(&m, N, 9, 0.5f, boxes, spheres);
    vl_pair_buffer out = {0};
    CHECK(vl_bvh_overlap_boxes(NULL, boxes, N, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_overlap_boxes(bvh, NULL, N, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL queries");
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, N, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_bvh_overlap_spheres(bvh, NULL, 3, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL spheres");
    CHECK(vl_bvh_overlap_boxes(bvh, NULL, 0, &out, NULL) == VL_OK && out.count == 0, "count 0");
    CHECK(overlap_one(bvh, NULL, NULL, 0, &out) == VL_ERR_INVALID_ARGUMENT, "NULL query");
    CHECK(overlap_one(NULL, NULL, spheres, 0, &out) == VL_ERR_INVALID_ARGUMENT, "NULL bvh single");
    vl_pair_buffer broken = {NULL, 0, 4};
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, N, &broken, NULL) == VL_ERR_INVALID_ARGUMENT, "broken buffer");
    vl_pair_buffer over = {NULL, 5, 0};
    CHECK(vl_bvh_overlap_spheres(bvh, spheres, N, &over, NULL) == VL_ERR_INVALID_ARGUMENT, "count > capacity");
    CHECK(vl_bvh_overlap_scratch_size(NULL, 10) == 0 && vl_bvh_overlap_scratch_size(bvh, 0) == 0, "scratch size 0");
    size_t bytes = vl_bvh_overlap_scratch_size(bvh, N);
    CHECK(bytes >= vl_bvh_overlap_scratch_size(bvh, 1) && vl_bvh_overlap_scratch_size(bvh, 1u << 30) < (1u << 20),
          "scratch sizes");
    char* raw = aligned_alloc(64, bytes + 128);
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, N, &out, &(vl_exec){.scratch = NULL, .scratch_bytes = bytes}) == VL_ERR_INVALID_ARGUMENT, "NULL scratch");
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, N, &out, &(vl_exec){.scratch = raw + 4, .scratch_bytes = bytes}) == VL_ERR_INVALID_ARGUMENT, "misaligned");
    CHECK(vl_bvh_overlap_spheres(bvh, spheres, N, &out, &(vl_exec){.scratch = raw, .scratch_bytes = bytes - 1}) == VL_ERR_INVALID_ARGUMENT, "too small");
    CHECK(out.count == 0, "nothing written on errors");
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, 0, &out, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_OK, "count 0, no scratch");

    /* allocation counting: once out has grown, no call allocates */
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, N, &out, NULL) == VL_OK && out.count > 0, "warm-up");
    uint32_t want = out.count;
    long allocs = hooks.allocs;
    for (int k = 0; k < 3; k++) {
        out.count = 0;
        vl_bvh_overlap_boxes(bvh, boxes, N, &out, NULL);
        out.count = 0;
        vl_bvh_overlap_spheres(bvh, spheres, N, &out, NULL);
        out.count = 0;
        vl_bvh_overlap_boxes(bvh, boxes, N, &out, &(vl_exec){.scratch = raw, .scratch_bytes = bytes});
        out.count = 0;
        for (uint32_t i = 0; i < N; i++) overlap_one(bvh, NULL, &spheres[i], i, &out);
    }
    CHECK(hooks.allocs == allocs, "%ld allocations once warm", hooks.allocs - allocs);
    /* a failing allocation leaves out as it was */
    vl_pair_buffer fresh = {0};
    hooks.budget = 0;
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, N, &fresh, NULL) == VL_ERR_OUT_OF_MEMORY && fresh.count == 0, "out of memory");
    CHECK(overlap_one(bvh, NULL, &spheres[7], 0, &fresh) == VL_ERR_OUT_OF_MEMORY || fresh.count == 0, "oom single");
    hooks.budget = -1;
    out.count = 0;
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, N, &out, NULL) == VL_OK && out.count == want, "after oom");
    vl_pair_buffer_free(&out);
    vl_pair_buffer_free(&fresh);
    test_alloc_end(&hooks);
    free(raw);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* Threads querying one tree at once get the single-thread answers. */
typedef struct thread_job {
    const vl_bvh* bvh;
    const vl_aabb* boxes;
    const vl_sphere* spheres;
    uint32_t n;
    vl_pair_buffer out;
} thread_job;

static void* thread_main(void* arg) {
    thread_job* j = arg;
    for (int k = 0; k < 4; k++) {
        j->out.count = 0;
        vl_bvh_overlap_boxes(j->bvh, j->boxes, j->n, &j->out, NULL);
        vl_bvh_overlap_spheres(j->bvh, j->spheres, j->n, &j->out, NULL);
    }
    return NULL;
}

static void test_threads(void) {
    scene_mesh m;
    if (!scene_world(40, 20, 4, 10, &m)) return;
    vl_bvh* bvh = NULL;
    vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL);
    uint32_t n = test_scaled(2000);
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * n);
    vl_sphere* spheres = malloc(sizeof(vl_sphere) * n);
    make_queries(&m, n, 11, 1.0f, boxes, spheres);
    thread_job ref = {bvh, boxes, spheres, n, {0}};
    thread_main(&ref);
    uint32_t nr;
    vl_pair* pr = oracle_sorted_pairs(&ref.out, 0, &nr);
    thread_job jobs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = ref;
        memset(&jobs[t].out, 0, sizeof jobs[t].out);
        pthread_create(&th[t], NULL, thread_main, &jobs[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        uint32_t np;
        vl_pair* p = oracle_sorted_pairs(&jobs[t].out, 0, &np);
        CHECK(oracle_same_pairs(pr, nr, p, np), "thread %d: %u pairs, want %u", t, np, nr);
        free(p);
        vl_pair_buffer_free(&jobs[t].out);
    }
    free(pr);
    vl_pair_buffer_free(&ref.out);
    free(boxes), free(spheres);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* Calls of more than one batch on the caller's scratch (4096 queries) run in the Morton order of the
 * queries' centres, windows of 16384: whatever the order, the oracle's pairs under the caller's
 * indices. Fixed sizes (not scaled), so that every flavour runs the ordered path. */
static void test_ordered_batch(void) {
    scene_mesh m;
    if (!scene_soup(400, 10.0f, 0.6f, 6, &m)) return;
    vl_bvh* bvh = NULL;
    vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL);
    oracle_scene sc = {m.xyz, m.indices, NULL, m.triangle_count};
    enum { N = 16384 + 700 }; /* two windows, the second of one partial batch */
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * N);
    vl_sphere* spheres = malloc(sizeof(vl_sphere) * N);
    /* spread over the scene, with half-space boxes (a NaN centre) and invalid queries among them */
    make_queries(&m, 5000, 61, 0.4f, boxes, spheres);
    spoil(boxes, spheres, 5000);
    check_queries("ordered, spread", bvh, &sc, boxes, NULL, 5000);
    check_queries("ordered, spread spheres", bvh, &sc, NULL, spheres, 5000);
    /* every centre in one Morton cell: the same point, boxes and spheres of many sizes; the
       half-space boxes become whole-space ones (centre NaN, valid: every triangle) */
    make_queries(&m, N, 62, 0.4f, boxes, spheres);
    const float* p = m.xyz + 3 * (size_t)m.indices[0];
    for (uint32_t i = 0; i < N; i++)
        for (int a = 0; a < 3; a++) {
            float h = 0.5f * (boxes[i].max[a] - boxes[i].min[a]);
            boxes[i].min[a] = p[a] - h, boxes[i].max[a] = p[a] + h;
            spheres[i].center[a] = p[a];
        }
    spoil(boxes, spheres, N);
    check_queries("ordered, one cell", bvh, &sc, boxes, NULL, N);
    check_queries("ordered, one cell spheres", bvh, &sc, NULL, spheres, N);
    /* a scratch one byte short of an ordered call's size is refused, nothing written */
    vl_pair_buffer out = {0};
    size_t bytes = vl_bvh_overlap_scratch_size(bvh, 5000);
    CHECK(bytes > vl_bvh_overlap_scratch_size(bvh, 4096), "an ordered call's scratch holds its order");
    void* scratch = aligned_alloc(64, (bytes + 63) / 64 * 64);
    CHECK(vl_bvh_overlap_boxes(bvh, boxes, 5000, &out, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes - 1}) == VL_ERR_INVALID_ARGUMENT &&
              out.count == 0,
          "ordered call, scratch too small");
    free(scratch);
    vl_pair_buffer_free(&out);
    free(boxes), free(spheres);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* Large batches (several chunks of the scratch form) equal the single-query answers. */
static void test_large_batch(void) {
    scene_mesh m;
    if (!scene_world(64, 40, 4, 12, &m)) return;
    vl_bvh* bvh = NULL;
    vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL);
    uint32_t n = test_scaled(20000);
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * n);
    vl_sphere* spheres = malloc(sizeof(vl_sphere) * n);
    make_queries(&m, n, 13, 1.0f, boxes, spheres);
    spoil(boxes, spheres, n);
    for (int shape = 0; shape < 2; shape++) {
        vl_pair_buffer a = {0}, b = {0};
        size_t bytes = vl_bvh_overlap_scratch_size(bvh, n);
        void* scratch = aligned_alloc(64, (bytes + 63) / 64 * 64);
        vl_status st = shape ? vl_bvh_overlap_spheres(bvh, spheres, n, &a, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                             : vl_bvh_overlap_boxes(bvh, boxes, n, &a, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        CHECK(st == VL_ERR_INVALID_QUERY, "large batch status %s", vl_status_string(st));
        for (uint32_t i = 0; i < n; i++)
            shape ? overlap_one(bvh, NULL, &spheres[i], i, &b) : overlap_one(bvh, &boxes[i], NULL, i, &b);
        uint32_t na, nb;
        vl_pair *pa = oracle_sorted_pairs(&a, 0, &na), *pb = oracle_sorted_pairs(&b, 0, &nb);
        CHECK(oracle_same_pairs(pa, na, pb, nb) && na > n / 2, "large batch %d: %u pairs, single %u", shape, na, nb);
        free(pa), free(pb), free(scratch);
        vl_pair_buffer_free(&a), vl_pair_buffer_free(&b);
    }
    free(boxes), free(spheres);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

int main(void) {
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        test_contacts_at(k);
        test_box_tree(test_scaled(k ? 500 : 1500), test_scaled(k ? 300 : 1500), 51 + k, k);
        test_band(k);
    }
    test_scenes();
    test_box_tree(3, 100, 52, 0);
    test_arguments();
    test_threads();
    test_large_batch();
    test_ordered_batch();
    test_box_tree(300, 5000, 53, 0); /* an ordered call on a box tree with unbounded boxes */
    printf("test_overlaps: %llu pairs expected, %llu within the tolerance (skipped)\n",
           (unsigned long long)g_expected, (unsigned long long)g_skipped);
    CHECK(g_skipped * 1000 <= g_expected + 1000, "too many pairs within the tolerance: %llu",
          (unsigned long long)g_skipped);
    return test_finish("test_overlaps");
}
