/* Closest-point queries against brute force: triangle soups (points, segments and slivers mixed
 * in), a terrain world, the real meshes and box trees (flat and half-infinite boxes), each at every
 * offset of scenes.h; points anywhere, near the surfaces, on vertices, edges and faces, inside
 * closed meshes and boxes, equidistant from several triangles; max_distance 0, finite and
 * infinite; invalid queries mixed in batches; bad arguments; the batch against each query alone,
 * on caller scratch and on contexts (several workers of the thread pool, and none), every bit; no
 * allocation.
 *
 * The oracle is independent of the library's code: in double, over every primitive, the caller's
 * triangles (Ericson's Voronoi regions, the edges as segments for triangles of zero or nearly zero
 * area) and boxes (clamping). Checked, with D the least distance and tol = VL_CLOSEST_TOLERANCE *
 * (D + s) (s the largest box side of the nearest and of the reported triangle, 0 for boxes): an
 * answer exactly when D <= max_distance (either way within tol of it); the reported primitive's
 * distance and the reported distance within tol of D; the reported point on the reported
 * primitive (up to tol and the float rounding of its coordinates) and at the reported distance
 * from the query; u, v giving that point. */
#include <float.h>

#include "bvh/closest/closest.h"
#include "distance_oracle.h"
#include "scenes.h"
#include "test_alloc.h"
#include "test_util.h"

/* ---- the oracle ------------------------------------------------------------------------------ */

typedef struct o_scene {
    const float* xyz;       /* triangles: vertices and indices */
    const uint32_t* idx;
    const vl_aabb* boxes;   /* or boxes */
    uint32_t count;
} o_scene;

static void o_tri(const o_scene* s, uint32_t i, double t[3][3]) {
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 3; a++) t[k][a] = s->xyz[3 * (size_t)s->idx[3 * (size_t)i + k] + a];
}

static double o_dist(const o_scene* s, uint32_t i, const double p[3]) {
    if (s->boxes) return sqrt(odist_box2(p, &s->boxes[i]));
    double t[3][3], c[3];
    o_tri(s, i, t);
    return sqrt(odist_triangle2(p, t, c));
}

/* The largest side of primitive i's box (0 for boxes: their tolerance has no size term). */
static double o_side(const o_scene* s, uint32_t i) {
    if (s->boxes) return 0;
    double t[3][3], r = 0;
    o_tri(s, i, t);
    for (int a = 0; a < 3; a++) {
        double lo = fmin(t[0][a], fmin(t[1][a], t[2][a])), hi = fmax(t[0][a], fmax(t[1][a], t[2][a]));
        r = fmax(r, hi - lo);
    }
    return r;
}

static const vl_closest_hit k_none = {{0, 0, 0}, INFINITY, VL_NO_HIT, 0, 0};

static int same_hit(const vl_closest_hit* a, const vl_closest_hit* b) { return memcmp(a, b, sizeof *a) == 0; }

/* Checks one valid query's answer against the brute force. */
static void check_answer(const o_scene* s, const vl_point_query* q, const vl_closest_hit* h, const char* what,
                         uint32_t k) {
    const double p[3] = {q->point[0], q->point[1], q->point[2]};
    double D = INFINITY;
    uint32_t at = VL_NO_HIT;
    for (uint32_t i = 0; i < s->count; i++) {
        double d = o_dist(s, i, p);
        if (d < D) D = d, at = i;
    }
    const double max = q->max_distance;
    double side = at != VL_NO_HIT ? o_side(s, at) : 0.0;
    if (h->prim != VL_NO_HIT && h->prim < s->count) side = fmax(side, o_side(s, h->prim));
    const double tol = VL_CLOSEST_TOLERANCE * (D + side);
    if (h->prim == VL_NO_HIT) {
        CHECK(same_hit(h, &k_none), "%s %u: a none with fields set", what, k);
        CHECK(!(D <= max - tol), "%s %u: none, but D %.9g within max %.9g (tol %g)", what, k, D, max, tol);
        return;
    }
    CHECK(h->prim < s->count, "%s %u: prim %u of %u", what, k, h->prim, s->count);
    if (h->prim >= s->count) return;
    CHECK(D <= max + tol, "%s %u: answered, but D %.9g past max %.9g", what, k, D, max);
    const double Dp = o_dist(s, h->prim, p);
    CHECK(Dp <= D + tol, "%s %u: prim %u at %.12g, nearest %u at %.12g (tol %g)", what, k, h->prim, Dp, at, D, tol);
    CHECK(Dp <= max + tol, "%s %u: prim %u at %.9g past max %.9g", what, k, h->prim, Dp, max);
    CHECK(fabs(h->distance - D) <= tol, "%s %u: distance %.12g, brute force %.12g (tol %g)", what, k, h->distance, D,
          tol);
    /* the point: on the primitive and at the distance, up to its coordinates' float rounding */
    const double c[3] = {h->point[0], h->point[1], h->point[2]};
    double mag = 0, pc = 0;
    for (int a = 0; a < 3; a++) mag = fmax(mag, fabs(c[a])), pc += (c[a] - p[a]) * (c[a] - p[a]);
    const double ptol = tol + 0x1p-22 * mag;
    CHECK(o_dist(s, h->prim, c) <= ptol, "%s %u: point %.9g off prim %u by %.9g (tol %g)", what, k, c[0], h->prim,
          o_dist(s, h->prim, c), ptol);
    CHECK(fabs(sqrt(pc) - h->distance) <= ptol, "%s %u: point %.9g from the query, distance %.9g", what, k, sqrt(pc),
          h->distance);
    if (s->boxes) {
        CHECK(h->u == 0 && h->v == 0, "%s %u: box u v %g %g", what, k, h->u, h->v);
        const vl_aabb* b = &s->boxes[h->prim];
        for (int a = 0; a < 3; a++)
            CHECK(h->point[a] >= b->min[a] && h->point[a] <= b->max[a], "%s %u: point outside its box", what, k);
        CHECK(fabs(h->distance - D) <= 0x1p-23 * D, "%s %u: box distance %.12g, brute force %.12g", what, k,
              h->distance, D);
    } else {
        double t[3][3], r = 0;
        o_tri(s, h->prim, t);
        for (int a = 0; a < 3; a++) {
            double x = t[0][a] + h->u * (t[1][a] - t[0][a]) + h->v * (t[2][a] - t[0][a]) - c[a];
            r += x * x;
        }
        CHECK(sqrt(r) <= ptol + 0x1p-21 * o_side(s, h->prim), "%s %u: u v %g %g give a point %g away", what, k, h->u,
              h->v, sqrt(r));
        CHECK(h->u >= -1e-6f && h->v >= -1e-6f && h->u + h->v <= 1.0f + 1e-6f, "%s %u: u v %g %g", what, k, h->u,
              h->v);
    }
}

/* ---- running the forms --------------------------------------------------------------------- */

static vl_thread_pool* g_pool;
static vl_context *g_ctx_pool, *g_ctx_serial;

/* Answers the batch every way (one call, each alone, caller scratch, both contexts) and checks
 * that they agree every bit, that the plain and scratch forms allocate nothing, and each answer
 * against the brute force. */
static void run_batch(const vl_bvh* bvh, const o_scene* s, const vl_point_query* q, uint32_t n, const char* what) {
    vl_closest_hit* a = malloc(sizeof *a * n);
    vl_closest_hit* b = malloc(sizeof *b * n);
    if (!a || !b) {
        CHECK(0, "out of memory");
        free(a), free(b);
        return;
    }
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    CHECK(vl_bvh_closest_points(bvh, q, n, a, NULL) == VL_OK, "%s: batch status", what);
    _Alignas(64) static unsigned char scratch[256];
    CHECK(vl_bvh_closest_scratch_size(bvh, n) == 0, "%s: scratch size", what);
    CHECK(vl_bvh_closest_points(bvh, q, n, b, &(vl_exec){.scratch = scratch, .scratch_bytes = sizeof scratch}) == VL_OK,
          "%s: scratch status", what);
    test_alloc_end(&hooks);
    CHECK(hooks.allocs == 0, "%s: %ld allocations", what, hooks.allocs);
    CHECK(memcmp(a, b, sizeof *a * n) == 0, "%s: scratch answers differ", what);
    for (uint32_t i = 0; i < n; i++) {
        vl_closest_hit one;
        CHECK(vl_bvh_closest_points(bvh, &q[i], 1, &one, NULL) == VL_OK, "%s: single status", what);
        CHECK(same_hit(&one, &a[i]), "%s %u: single prim %u %.9g, batch %u %.9g", what, i, one.prim, one.distance,
              a[i].prim, a[i].distance);
    }
    vl_context* ctx[2] = {g_ctx_pool, g_ctx_serial};
    for (int c = 0; c < 2; c++) {
        memset(b, 0xAB, sizeof *b * n);
        CHECK(vl_bvh_closest_points(bvh, q, n, b, &(vl_exec){.context = ctx[c]}) == VL_OK, "%s: context status", what);
        CHECK(memcmp(a, b, sizeof *a * n) == 0, "%s: answers on context %d differ", what, c);
    }
    /* the two ways a batch walks (interleaved only on trees larger than the caches) */
    vl_closest_query* cq = malloc(sizeof *cq * n);
    vl_closest_best* b1 = malloc(sizeof *b1 * n);
    vl_closest_best* b2 = malloc(sizeof *b2 * n);
    if (cq && b1 && b2) {
        for (uint32_t i = 0; i < n; i++) {
            vl_closest_query_set(&cq[i], &q[i]);
            b1[i] = b2[i] = (vl_closest_best){cq[i].max2, VL_BVH_EMPTY, 0};
        }
        vl_closest_trace_interleaved(bvh, cq, n, b1);
        vl_closest_trace_each(bvh, cq, n, b2);
        CHECK(memcmp(b1, b2, sizeof *b1 * n) == 0, "%s: interleaved and one-by-one walks differ", what);
    }
    free(cq), free(b1), free(b2);
    for (uint32_t i = 0; i < n; i++) check_answer(s, &q[i], &a[i], what, i);
    free(a), free(b);
}

/* ---- queries ----------------------------------------------------------------------------------- */

static float pick_max(test_rng* rng, float scale) {
    uint32_t r = test_u32(rng, 8);
    return r < 4 ? INFINITY : r == 4 ? 0.0f : scale * test_float(rng, 0.0f, 2.0f);
}

/* n queries about a mesh: anywhere in its bounds grown by 20%, near the surface (a point of a
 * triangle moved by up to two of its sizes), on vertices, on edges, on faces. */
static void mesh_queries(const scene_mesh* m, uint32_t n, uint64_t seed, vl_point_query* q) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t* t = m->indices + 3 * (size_t)test_u32(&rng, m->triangle_count);
        const float* v[3] = {m->xyz + 3 * (size_t)t[0], m->xyz + 3 * (size_t)t[1], m->xyz + 3 * (size_t)t[2]};
        float size = 0;
        for (int a = 0; a < 3; a++)
            size = fmaxf(size, fmaxf(fabsf(v[1][a] - v[0][a]), fabsf(v[2][a] - v[0][a])));
        float u = test_float(&rng, 0, 1), w = test_float(&rng, 0, 1);
        if (u + w > 1) u = 1 - u, w = 1 - w;
        switch (i % 5) {
        case 0:
            for (int a = 0; a < 3; a++) {
                float pad = 0.2f * (m->hi[a] - m->lo[a]);
                q[i].point[a] = test_float(&rng, m->lo[a] - pad, m->hi[a] + pad);
            }
            q[i].max_distance = (i / 5) % 3 ? INFINITY : 0.1f * (m->hi[0] - m->lo[0]);
            break;
        case 1:
            for (int a = 0; a < 3; a++)
                q[i].point[a] = v[0][a] + u * (v[1][a] - v[0][a]) + w * (v[2][a] - v[0][a]) +
                                test_float(&rng, -2.0f, 2.0f) * size;
            q[i].max_distance = pick_max(&rng, size);
            break;
        case 2: /* a vertex */
            memcpy(q[i].point, v[test_u32(&rng, 3)], sizeof q[i].point);
            q[i].max_distance = (i / 5) & 1 ? 0.0f : INFINITY;
            break;
        case 3: { /* an edge */
            int e = (int)test_u32(&rng, 3);
            for (int a = 0; a < 3; a++) q[i].point[a] = v[e][a] + u * (v[(e + 1) % 3][a] - v[e][a]);
            q[i].max_distance = pick_max(&rng, size);
            break;
        }
        default: /* a face */
            for (int a = 0; a < 3; a++) q[i].point[a] = v[0][a] + u * (v[1][a] - v[0][a]) + w * (v[2][a] - v[0][a]);
            q[i].max_distance = pick_max(&rng, size);
            break;
        }
    }
}

static vl_bvh* build_mesh(const scene_mesh* m, uint32_t leaf) {
    vl_bvh_desc desc = vl_bvh_default_desc();
    if (leaf) desc.max_leaf_size = leaf;
    vl_bvh* bvh = NULL;
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, &desc, &bvh, NULL);
    CHECK(st == VL_OK, "build: %s", vl_status_string(st));
    return st == VL_OK ? bvh : NULL;
}

/* The mesh at every offset: queries about it, answered every way and checked. */
static void test_mesh(const char* name, const scene_mesh* base, uint32_t queries, uint32_t leaf, uint64_t seed) {
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh m;
        if (!scene_copy_moved(base, k, &m)) {
            CHECK(0, "copy");
            return;
        }
        vl_bvh* bvh = build_mesh(&m, leaf);
        vl_point_query* q = malloc(sizeof *q * queries);
        if (bvh && q) {
            mesh_queries(&m, queries, seed + k, q);
            o_scene s = {m.xyz, m.indices, NULL, m.triangle_count};
            char what[96];
            snprintf(what, sizeof what, "%s leaf %u offset %g", name, leaf, scene_offset(k));
            run_batch(bvh, &s, q, queries, what);
        }
        free(q);
        vl_bvh_destroy(bvh);
        scene_free(&m);
    }
}

/* A soup with degenerate triangles mixed in: every 7th a point, every 7th (+1) a segment, every
 * 7th (+2) a sliver. */
static int degenerate_soup(uint32_t count, uint64_t seed, scene_mesh* m) {
    if (!scene_soup(count, 100.0f, 3.0f, seed, m)) return 0;
    test_rng rng = {seed ^ 0x5eed};
    for (uint32_t i = 0; i < count; i++) {
        float* v = m->xyz + 9 * (size_t)i;
        if (i % 7 == 0) memcpy(v + 3, v, 12), memcpy(v + 6, v, 12);
        if (i % 7 == 1)
            for (int a = 0; a < 3; a++) v[6 + a] = v[a] + 0.5f * (v[3 + a] - v[a]);
        if (i % 7 == 2) {
            float eps = test_float(&rng, 0, 1) < 0.5f ? 1e-4f : 1e-7f;
            for (int a = 0; a < 3; a++) v[6 + a] = v[a] + 0.5f * (v[3 + a] - v[a]) + (a == 1 ? eps : 0.0f);
        }
    }
    scene_bounds(m);
    return 1;
}

/* ---- box trees ------------------------------------------------------------------------------- */

static void test_boxes(uint32_t count, uint32_t queries, uint64_t seed) {
    test_rng rng = {seed};
    vl_aabb* base = malloc(sizeof *base * count);
    vl_aabb* boxes = malloc(sizeof *boxes * count);
    vl_point_query* q = malloc(sizeof *q * queries);
    if (!base || !boxes || !q) {
        CHECK(0, "out of memory");
        free(base), free(boxes), free(q);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        for (int a = 0; a < 3; a++) {
            float lo = test_float(&rng, 0, 100), size = test_float(&rng, 0, 4);
            if (i % 9 == 0 && a == 1) size = 0; /* flat */
            base[i].min[a] = lo, base[i].max[a] = lo + size;
        }
        if (i % 50 == 3) base[i].min[1] = -INFINITY; /* a half-infinite column */
    }
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        memcpy(boxes, base, sizeof *boxes * count);
        scene_move_boxes(boxes, count, scene_offset(k));
        float off[3];
        scene_offset_vector(scene_offset(k), off);
        for (uint32_t i = 0; i < queries; i++) {
            const vl_aabb* b = &boxes[test_u32(&rng, count)];
            switch (i % 4) {
            case 0:
                for (int a = 0; a < 3; a++) q[i].point[a] = off[a] + test_float(&rng, -20, 120);
                q[i].max_distance = i & 4 ? INFINITY : 10.0f;
                break;
            case 1: /* inside a box: distance 0, also with max_distance 0 */
                for (int a = 0; a < 3; a++) {
                    float lo = isfinite(b->min[a]) ? b->min[a] : b->max[a] - 5.0f;
                    q[i].point[a] = lo + test_float(&rng, 0, 1) * (b->max[a] - lo);
                }
                q[i].max_distance = i & 4 ? INFINITY : 0.0f;
                break;
            case 2: /* on a corner */
                for (int a = 0; a < 3; a++) q[i].point[a] = isfinite(b->min[a]) ? b->min[a] : b->max[a];
                q[i].max_distance = 0.0f;
                break;
            default: /* near a box */
                for (int a = 0; a < 3; a++) q[i].point[a] = b->max[a] + test_float(&rng, -2, 2);
                q[i].max_distance = pick_max(&rng, 2.0f);
                break;
            }
        }
        vl_bvh* bvh = NULL;
        CHECK(vl_bvh_build_boxes(boxes, count, NULL, &bvh, NULL) == VL_OK, "box build");
        if (bvh) {
            o_scene s = {NULL, NULL, boxes, count};
            char what[64];
            snprintf(what, sizeof what, "boxes offset %g", scene_offset(k));
            run_batch(bvh, &s, q, queries, what);
            /* a point inside a box is at distance 0 from it, with max_distance 0 too */
            for (uint32_t i = 1; i < queries; i += 4) {
                vl_closest_hit h;
                vl_point_query z = q[i];
                z.max_distance = 0.0f;
                CHECK(vl_bvh_closest_points(bvh, &z, 1, &h, NULL) == VL_OK && h.prim != VL_NO_HIT && h.distance == 0.0f,
                      "%s: inside a box, prim %u distance %g", what, h.prim, h.distance);
            }
            vl_bvh_destroy(bvh);
        }
    }
    free(base), free(boxes), free(q);
}

/* ---- adversarial scenes ------------------------------------------------------------------------ */

/* A closed box (12 triangles) and a closed UV sphere, points inside and around them; two parallel
 * squares with points halfway (equidistant from 4 triangles); a fan of 12 triangles round a
 * vertex with points above it (equidistant from all); a triangle in the plane y = 2 and points in
 * that plane on its face, which touch it exactly. */
static void test_adversarial(void) {
    scene_mesh base;
    memset(&base, 0, sizeof base);
    if (!scene_reserve(&base, 8 + 9 * 13 + 8 + 13 + 3, 12 + 2 * 8 * 12 + 4 + 12 + 1)) {
        CHECK(0, "out of memory");
        scene_free(&base);
        return;
    }
    for (uint32_t k = 0; k < 8; k++)
        scene_push_vertex(&base, (k & 1) ? 3.0f : 1.0f, (k & 2) ? 4.0f : 1.0f, (k & 4) ? 2.5f : 1.0f);
    static const uint8_t faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                         {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (int f = 0; f < 12; f++) scene_push_tri(&base, faces[f][0], faces[f][1], faces[f][2]);
    uint32_t sb = base.vertex_count;
    for (uint32_t i = 0; i <= 8; i++)
        for (uint32_t j = 0; j <= 12; j++) {
            float th = 3.14159265f * i / 8, ph = 6.2831853f * j / 12;
            scene_push_vertex(&base, 10 + 2 * sinf(th) * cosf(ph), 2 + 2 * cosf(th), 2 + 2 * sinf(th) * sinf(ph));
        }
    for (uint32_t i = 0; i < 8; i++)
        for (uint32_t j = 0; j < 12; j++) {
            uint32_t a = sb + i * 13 + j, b = a + 1, c = a + 13, d = c + 1;
            scene_push_tri(&base, a, c, b);
            scene_push_tri(&base, b, c, d);
        }
    uint32_t pb = base.vertex_count; /* two squares at y = -4 and y = -2 */
    for (uint32_t k = 0; k < 8; k++)
        scene_push_vertex(&base, (k & 1) ? 4.0f : 0.0f, (k & 4) ? -2.0f : -4.0f, (k & 2) ? 4.0f : 0.0f);
    for (uint32_t s = 0; s < 2; s++) {
        scene_push_tri(&base, pb + 4 * s, pb + 4 * s + 1, pb + 4 * s + 3);
        scene_push_tri(&base, pb + 4 * s, pb + 4 * s + 3, pb + 4 * s + 2);
    }
    uint32_t fb = base.vertex_count; /* a fan round (20, 0, 20) */
    scene_push_vertex(&base, 20, 0, 20);
    for (uint32_t j = 0; j < 12; j++)
        scene_push_vertex(&base, 20 + 3 * cosf(6.2831853f * j / 12), 0.5f, 20 + 3 * sinf(6.2831853f * j / 12));
    for (uint32_t j = 0; j < 12; j++) scene_push_tri(&base, fb, fb + 1 + j, fb + 1 + (j + 1) % 12);
    uint32_t tb = base.vertex_count; /* a triangle in the plane y = 2 */
    scene_push_vertex(&base, 30, 2, 30);
    scene_push_vertex(&base, 34, 2, 30);
    scene_push_vertex(&base, 30, 2, 33);
    scene_push_tri(&base, tb, tb + 1, tb + 2);
    scene_bounds(&base);
    test_rng rng = {77};
    enum { N = 160 };
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh m;
        if (!scene_copy_moved(&base, k, &m)) break;
        float off[3];
        scene_offset_vector(scene_offset(k), off);
        vl_point_query q[N];
        for (uint32_t i = 0; i < N; i++) {
            float p[3];
            switch (i % 6) {
            case 0: /* inside the box */
                p[0] = test_float(&rng, 1, 3), p[1] = test_float(&rng, 1, 4), p[2] = test_float(&rng, 1, 2.5f);
                break;
            case 1: /* inside the sphere */
                p[0] = 10 + test_float(&rng, -1.2f, 1.2f), p[1] = 2 + test_float(&rng, -1.2f, 1.2f);
                p[2] = 2 + test_float(&rng, -1.2f, 1.2f);
                if (i % 12 == 1) p[0] = 10, p[1] = 2, p[2] = 2; /* the centre: equidistant from many */
                break;
            case 2: /* halfway between the squares */
                p[0] = test_float(&rng, -1, 5), p[1] = -3, p[2] = test_float(&rng, -1, 5);
                if (i % 12 == 2) p[0] = 2, p[2] = 2; /* on the squares' shared diagonal */
                break;
            case 3: /* above the fan's centre */
                p[0] = 20, p[1] = test_float(&rng, -2, 4), p[2] = 20;
                break;
            case 4: /* on the face of the triangle in y = 2, exactly */
                p[0] = 30 + test_float(&rng, 0, 1.5f), p[1] = 2, p[2] = 30 + test_float(&rng, 0, 1.0f);
                break;
            default: /* anywhere */
                p[0] = test_float(&rng, -2, 36), p[1] = test_float(&rng, -6, 6), p[2] = test_float(&rng, -2, 36);
                break;
            }
            for (int a = 0; a < 3; a++) q[i].point[a] = p[a] + off[a];
            q[i].max_distance = i % 4 == 0 ? 0.0f : i % 4 == 1 ? 1.5f : INFINITY;
        }
        vl_bvh* bvh = build_mesh(&m, 2);
        if (bvh) {
            o_scene s = {m.xyz, m.indices, NULL, m.triangle_count};
            char what[64];
            snprintf(what, sizeof what, "adversarial offset %g", scene_offset(k));
            run_batch(bvh, &s, q, N, what);
            /* exact touching: a point on an axis-aligned face (the moved plane is still exact) */
            for (uint32_t i = 4; i < N; i += 6) {
                vl_point_query z = q[i];
                z.max_distance = 0.0f;
                vl_closest_hit h;
                CHECK(vl_bvh_closest_points(bvh, &z, 1, &h, NULL) == VL_OK && h.distance == 0.0f &&
                          h.prim == m.triangle_count - 1,
                      "%s: on the face, prim %u at %g", what, h.prim, h.distance);
            }
            vl_bvh_destroy(bvh);
        }
        scene_free(&m);
    }
    scene_free(&base);
}

/* Every query at a soup triangle's first vertex touches it: max_distance 0 answers 0. */
static void test_touching_vertices(void) {
    scene_mesh m;
    if (!degenerate_soup(test_scaled(500), 91, &m)) return;
    vl_bvh* bvh = build_mesh(&m, 0);
    if (bvh) {
        for (uint32_t i = 0; i < m.triangle_count; i++) {
            vl_point_query q;
            memcpy(q.point, m.xyz + 9 * (size_t)i, sizeof q.point);
            q.max_distance = 0.0f;
            vl_closest_hit h;
            CHECK(vl_bvh_closest_points(bvh, &q, 1, &h, NULL) == VL_OK && h.prim != VL_NO_HIT && h.distance == 0.0f,
                  "vertex of %u: prim %u distance %g", i, h.prim, h.distance);
        }
        vl_bvh_destroy(bvh);
    }
    scene_free(&m);
}

/* Points at the ends of float range: squared distances past float range leave the walks no float
 * limit (infinite), and the answers must still come, exact. */
static void test_huge(void) {
    scene_mesh m;
    if (!scene_soup(200, 50.0f, 2.0f, 8, &m)) return;
    vl_bvh* bvh = build_mesh(&m, 0);
    if (bvh) {
        static const float far[] = {3.4e38f, -3.4e38f, 1e30f, -1e20f, 1e19f, 0x1p64f};
        vl_point_query q[3 * 6];
        for (uint32_t i = 0; i < 3 * 6; i++) {
            q[i].point[0] = q[i].point[1] = q[i].point[2] = 10.0f;
            q[i].point[i % 3] = far[i / 3];
            q[i].max_distance = i & 1 ? INFINITY : 3.4e38f;
        }
        o_scene s = {m.xyz, m.indices, NULL, m.triangle_count};
        run_batch(bvh, &s, q, 3 * 6, "huge points");
        vl_bvh_destroy(bvh);
    }
    scene_free(&m);
}

/* ---- invalid queries and arguments ----------------------------------------------------------- */

static void test_invalid(void) {
    scene_mesh m;
    if (!scene_soup(300, 50.0f, 2.0f, 5, &m)) return;
    vl_bvh* bvh = build_mesh(&m, 0);
    if (!bvh) {
        scene_free(&m);
        return;
    }
    enum { N = 200 };
    vl_point_query q[N], bad[N];
    mesh_queries(&m, N, 6, q);
    memcpy(bad, q, sizeof q);
    const vl_point_query invalid[] = {
        {{NAN, 1, 1}, INFINITY},    {{1, INFINITY, 1}, 1.0f}, {{1, 1, -INFINITY}, 0.0f}, {{1, 1, 1}, NAN},
        {{1, 1, 1}, -1.0f},         {{1, 1, 1}, -INFINITY},   {{1, 1, 1}, -1e-45f},
    };
    const uint32_t ninv = sizeof invalid / sizeof invalid[0];
    for (uint32_t i = 3, j = 0; i < N; i += 7, j++) bad[i] = invalid[j % ninv];
    vl_closest_hit good[N], got[N];
    CHECK(vl_bvh_closest_points(bvh, q, N, good, NULL) == VL_OK, "valid batch");
    vl_context* ctx[3] = {NULL, g_ctx_pool, g_ctx_serial};
    for (int c = 0; c < 3; c++) {
        vl_status st = vl_bvh_closest_points(bvh, bad, N, got, ctx[c] ? &(vl_exec){.context = ctx[c]} : NULL);
        CHECK(st == VL_ERR_INVALID_QUERY, "mixed batch %d: %s", c, vl_status_string(st));
        for (uint32_t i = 0; i < N; i++) {
            if (i >= 3 && (i - 3) % 7 == 0) CHECK(same_hit(&got[i], &k_none), "invalid %u answered", i);
            else CHECK(same_hit(&got[i], &good[i]), "valid %u changed by invalid neighbours", i);
        }
    }
    for (uint32_t j = 0; j < ninv; j++) {
        vl_closest_hit h;
        memset(&h, 0x55, sizeof h);
        CHECK(vl_bvh_closest_points(bvh, &invalid[j], 1, &h, NULL) == VL_ERR_INVALID_QUERY, "single invalid %u", j);
        CHECK(same_hit(&h, &k_none), "single invalid %u answered", j);
    }
    /* -0 is a valid max_distance (0), denormal points are valid */
    vl_point_query z = {{1e-45f, -0.0f, 0.0f}, -0.0f};
    vl_closest_hit h;
    CHECK(vl_bvh_closest_points(bvh, &z, 1, &h, NULL) == VL_OK, "-0 max_distance");
    /* arguments: nothing written */
    memset(got, 0x77, sizeof got);
    vl_closest_hit untouched;
    memcpy(&untouched, &got[0], sizeof untouched);
    vl_context* pc = g_ctx_pool;
    static _Alignas(64) unsigned char scratch[64];
    CHECK(vl_bvh_closest_points(NULL, q, 4, got, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_closest_points(bvh, NULL, 4, got, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL queries");
    CHECK(vl_bvh_closest_points(bvh, q, 4, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL answers");
    CHECK(vl_bvh_closest_points(bvh, bad, 4, got, &(vl_exec){.context = pc, .scratch = scratch, .scratch_bytes = 64}) ==
              VL_ERR_INVALID_ARGUMENT,
          "context and scratch");
    CHECK(same_hit(&got[0], &untouched), "written on an argument error");
    CHECK(vl_bvh_closest_points(bvh, NULL, 0, NULL, NULL) == VL_OK, "count 0");
    CHECK(vl_bvh_closest_points(bvh, NULL, 0, NULL, &(vl_exec){.context = pc}) == VL_OK, "count 0 on a context");
    CHECK(vl_bvh_closest_points(NULL, NULL, 0, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh, count 0");
    CHECK(vl_bvh_closest_scratch_size(NULL, 10) == 0 && vl_bvh_closest_scratch_size(bvh, 1u << 30) == 0, "scratch size");
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

int main(void) {
    CHECK(vl_thread_pool_create(3, &g_pool) == VL_OK, "pool");
    vl_task_system ts = vl_thread_pool_get_task_system(g_pool);
    CHECK(vl_context_create(&ts, &g_ctx_pool) == VL_OK, "pool context");
    CHECK(vl_context_create(NULL, &g_ctx_serial) == VL_OK, "serial context");

    test_invalid();
    test_adversarial();
    test_huge();
    test_touching_vertices();

    scene_mesh m;
    if (degenerate_soup(test_scaled(3000), 11, &m)) {
        test_mesh("soup", &m, test_scaled(300), 0, 100);
        test_mesh("soup", &m, test_scaled(100), 1, 200);
        test_mesh("soup", &m, test_scaled(100), 32, 300);
        scene_free(&m);
    }
    if (scene_world(test_scaled(48) < 8 ? 8 : test_scaled(48), 30, 0, 3, &m)) {
        test_mesh("world", &m, test_scaled(300), 0, 400);
        scene_free(&m);
    }
    const char* mesh_names[2] = {"bunny00.off", "camel.off"};
    for (int i = 0; i < 2; i++) {
        if (!test_data_dir()) break;
        if (!scene_load_data(NULL, mesh_names[i], &m)) {
            CHECK(0, "%s missing from %s", mesh_names[i], test_data_dir());
            continue;
        }
        test_mesh(mesh_names[i], &m, test_scaled(i ? 150 : 60), 0, 500 + i);
        scene_free(&m);
    }
    test_boxes(test_scaled(1500), test_scaled(300), 600);

    vl_context_destroy(g_ctx_pool);
    vl_context_destroy(g_ctx_serial);
    vl_thread_pool_destroy(g_pool);
    return test_finish("test_closest");
}
