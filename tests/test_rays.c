/* BVH raycasts against brute force: triangle soups, a procedural world, the real meshes, boxes;
 * random, axis-aligned, through-vertex, along-edge and grazing rays, finite and infinite tmax;
 * closest and any hit; batched (every way a batch goes: one ray at a time, walks from seeds or
 * from the root, ray streams with their lists overflowing or not, chunks grouped by origin; batch
 * sizes 1 to 1M) against single-ray against brute force; the soup, a world, the real meshes and
 * box trees again at the far offsets of scenes.h (2^10 to 2^17 from the origin).
 *
 * Tolerance: the brute force runs the library's own scalar primitive tests (same float operations
 * as the SIMD kernels), so a closest hit must name the same primitive with the identical t, or
 * another primitive at a t within 1e-5 relative (ties, and the last-ulp effects of node culling).
 * The answers themselves are checked against a double-precision brute force, at every offset, in
 * test_rays_far.c. */
#include <float.h>

#include "bvh/rays/ray_tests.h"
#include "bvh/rays/ray_chunk.h"
#include "bvh/rays/ray_lanes.h"
#include "bvh/rays/ray_plan.h"
#include "bvh/rays/ray_seed.h"
#include "scenes.h"
#include "test_util.h"

#define T_REL_TOL 1e-5f

/* The scene under test: triangles (tris != NULL) or boxes. */
typedef struct scene_prims {
    vl_bvh_tri* tris;
    const vl_aabb* boxes;
    uint32_t count;
} scene_prims;

static vl_bvh_tri* make_tris(const scene_mesh* m) {
    vl_bvh_tri* tris = malloc(sizeof(vl_bvh_tri) * m->triangle_count);
    for (uint32_t i = 0; i < m->triangle_count; i++) {
        const uint32_t* t = m->indices + 3 * (size_t)i;
        const float *v0 = m->xyz + 3 * (size_t)t[0], *v1 = m->xyz + 3 * (size_t)t[1], *v2 = m->xyz + 3 * (size_t)t[2];
        vl_bvh_tri_setup(&tris[i], v0, v1, v2, i);
    }
    return tris;
}

/* The closest hit over every primitive, or the hit test of one primitive (only = its index). */
static vl_hit brute(const scene_prims* s, const vl_ray* ray, uint32_t only) {
    vl_hit best = vl_bvh_miss();
    if (!vl_ray_is_valid(ray)) return best;
    _Alignas(16) float rec[VL_RAYREC_FLOATS];
    int parallel = vl_bvh_rayrec_set(rec, ray) != 0;
    float tmax = rec[VL_RR_TMAX];
    uint32_t lo = only == VL_NO_HIT ? 0 : only, hi = only == VL_NO_HIT ? s->count : only + 1;
    for (uint32_t i = lo; i < hi; i++) {
        float t, u = 0, v = 0;
        int h = s->tris ? vl_bvh_ray_triangle(ray->origin, rec + VL_RR_DIR, ray->tmin, tmax, &s->tris[i], &t, &u, &v)
                        : vl_bvh_ray_box(rec, s->boxes[i].min, s->boxes[i].max, tmax, parallel, &t);
        if (h) {
            tmax = t;
            best.t = t, best.prim = i, best.u = u, best.v = v;
        }
    }
    return best;
}

static int same_hit(vl_hit a, vl_hit b) {
    if (a.prim == VL_NO_HIT || b.prim == VL_NO_HIT) return a.prim == b.prim && a.t == INFINITY && b.t == INFINITY;
    if (a.prim == b.prim) return a.t == b.t && a.u == b.u && a.v == b.v;
    return fabsf(a.t - b.t) <= T_REL_TOL * fmaxf(1.0f, fabsf(a.t));
}

/* An any-hit answer: a hit exactly when the closest hit exists, and a genuine one. */
static int any_ok(const scene_prims* s, const vl_ray* ray, vl_hit any, vl_hit closest) {
    if ((any.prim == VL_NO_HIT) != (closest.prim == VL_NO_HIT)) return 0;
    if (any.prim == VL_NO_HIT) return any.t == INFINITY;
    if (any.prim >= s->count) return 0;
    vl_hit again = brute(s, ray, any.prim);
    return again.prim == any.prim && again.t == any.t;
}

/* Batched (whole set, and prefixes of 1, 2, 3, 7, 8, 1000, 4096) against single against brute
 * force. */
static void check_rays(const vl_bvh* bvh, const scene_prims* s, const vl_ray* rays, uint32_t n, const char* what) {
    vl_hit* closest = malloc(sizeof(vl_hit) * n);
    vl_hit* any = malloc(sizeof(vl_hit) * n);
    vl_hit* grouped = malloc(sizeof(vl_hit) * 2 * n); /* closest, then any, with VL_QUERY_GROUP_BY_ORIGIN */
    CHECK(vl_bvh_raycast(bvh, rays, n, VL_QUERY_CLOSEST, closest, NULL) == VL_OK, "%s: batched closest", what);
    CHECK(vl_bvh_raycast(bvh, rays, n, VL_QUERY_ANY, any, NULL) == VL_OK, "%s: batched any", what);
    CHECK(vl_bvh_raycast(bvh, rays, n, VL_QUERY_GROUP_BY_ORIGIN, grouped, NULL) == VL_OK, "%s: grouped closest", what);
    CHECK(vl_bvh_raycast(bvh, rays, n, VL_QUERY_ANY | VL_QUERY_GROUP_BY_ORIGIN, grouped + n, NULL) == VL_OK, "%s: grouped any",
          what);
    uint32_t hits = 0;
    for (uint32_t i = 0; i < n; i++) {
        vl_hit ref = brute(s, &rays[i], VL_NO_HIT), one, one_any;
        CHECK(vl_bvh_raycast1(bvh, &rays[i], VL_QUERY_CLOSEST, &one) == VL_OK, "%s: single", what);
        CHECK(vl_bvh_raycast1(bvh, &rays[i], VL_QUERY_ANY, &one_any) == VL_OK, "%s: single any", what);
        CHECK(same_hit(closest[i], ref), "%s ray %u: batched prim %u t %.9g, brute prim %u t %.9g", what, i,
              closest[i].prim, closest[i].t, ref.prim, ref.t);
        CHECK(same_hit(one, ref), "%s ray %u: single prim %u t %.9g, brute prim %u t %.9g", what, i, one.prim, one.t,
              ref.prim, ref.t);
        CHECK(same_hit(one, closest[i]), "%s ray %u: single and batched differ", what, i);
        CHECK(same_hit(grouped[i], closest[i]), "%s ray %u: grouped prim %u t %.9g, batched prim %u t %.9g", what, i,
              grouped[i].prim, grouped[i].t, closest[i].prim, closest[i].t);
        CHECK(any_ok(s, &rays[i], grouped[n + i], ref), "%s ray %u: grouped any prim %u, closest prim %u", what, i,
              grouped[n + i].prim, ref.prim);
        CHECK(any_ok(s, &rays[i], any[i], ref), "%s ray %u: batched any prim %u t %.9g, closest prim %u", what, i,
              any[i].prim, any[i].t, ref.prim);
        CHECK(any_ok(s, &rays[i], one_any, ref), "%s ray %u: single any prim %u, closest prim %u", what, i,
              one_any.prim, ref.prim);
        hits += ref.prim != VL_NO_HIT;
    }
    static const uint32_t sizes[] = {1, 2, 3, 7, 8, 1000, 4096};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t m = sizes[k] < n ? sizes[k] : n;
        vl_hit part[4096];
        for (uint32_t f = 0; f < 2; f++) {
            CHECK(vl_bvh_raycast(bvh, rays, m, f, part, NULL) == VL_OK, "%s: batch of %u", what, m);
            for (uint32_t i = 0; i < m; i++)
                CHECK(f ? any_ok(s, &rays[i], part[i], closest[i]) : same_hit(part[i], closest[i]),
                      "%s: batch of %u, ray %u, flags %u", what, m, i, f);
        }
    }
    if (n >= 1000) CHECK(hits > 0, "%s: no ray hit anything (a useless test)", what);
    free(closest);
    free(any);
    free(grouped);
}

/* Ray sets over a triangle mesh. */
static void check_mesh(const scene_mesh* m, uint32_t n, uint64_t seed, const vl_bvh_desc* desc, const char* name) {
    vl_bvh* bvh = NULL;
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, desc, &bvh, NULL);
    CHECK(st == VL_OK, "%s: build: %s", name, vl_status_string(st));
    if (st != VL_OK) return;
    CHECK(vl_bvh_validate(bvh) == VL_OK, "%s: validate", name);
    scene_prims s = {make_tris(m), NULL, m->triangle_count};
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    test_rng rng = {seed};
    char what[128];
    float extent = 0;
    for (int a = 0; a < 3; a++) extent = fmaxf(extent, m->hi[a] - m->lo[a]);

    scene_rays_random(m, n, seed, rays);
    snprintf(what, sizeof what, "%s random", name);
    check_rays(bvh, &s, rays, n, what);

    for (uint32_t i = 0; i < n; i++) { /* finite tmax, tmin > 0 */
        rays[i].tmin = test_float(&rng, 0, 0.2f * extent);
        rays[i].tmax = rays[i].tmin + test_float(&rng, 0, extent);
    }
    snprintf(what, sizeof what, "%s finite", name);
    check_rays(bvh, &s, rays, n, what);

    scene_rays_axis(m, n, &rng, 0, rays); /* half of them from a vertex's line */
    snprintf(what, sizeof what, "%s axis-aligned", name);
    check_rays(bvh, &s, rays, n, what);

    for (uint32_t i = 0; i < n; i++) { /* through a vertex, along an edge, grazing a face */
        const uint32_t* t = m->indices + 3 * (size_t)test_u32(&rng, m->triangle_count);
        const float *p0 = m->xyz + 3 * (size_t)t[0], *p1 = m->xyz + 3 * (size_t)t[1], *p2 = m->xyz + 3 * (size_t)t[2];
        vl_ray* r = &rays[i];
        r->tmin = 0, r->tmax = INFINITY;
        switch (i % 3) {
        case 0:
            for (int a = 0; a < 3; a++) {
                r->origin[a] = p0[a] + test_float(&rng, -0.3f, 0.3f) * extent;
                r->dir[a] = p0[a] - r->origin[a];
            }
            break;
        case 1:
            for (int a = 0; a < 3; a++) {
                r->dir[a] = p1[a] - p0[a];
                r->origin[a] = p0[a] - 0.5f * r->dir[a];
            }
            break;
        default:
            for (int a = 0; a < 3; a++) {
                float mid = (p1[a] + p2[a]) * 0.5f;
                r->dir[a] = mid - p0[a];
                r->origin[a] = p0[a] - 0.25f * r->dir[a];
            }
            r->dir[i % 2 ? 1 : 0] += 1e-4f * extent;
            break;
        }
        if (r->dir[0] == 0 && r->dir[1] == 0 && r->dir[2] == 0) r->dir[2] = 1;
    }
    snprintf(what, sizeof what, "%s vertices/edges/grazing", name);
    check_rays(bvh, &s, rays, n, what);

    if (m->agent_count) {
        scene_rays_los(m, n, seed + 1, rays);
        snprintf(what, sizeof what, "%s line of sight", name);
        check_rays(bvh, &s, rays, n, what);
    }
    scene_rays_diffuse(m, n, seed + 2, rays);
    snprintf(what, sizeof what, "%s diffuse", name);
    check_rays(bvh, &s, rays, n, what);

    free(rays);
    free(s.tris);
    vl_bvh_destroy(bvh);
}

static void test_boxes(uint32_t nboxes, uint32_t n, uint64_t seed, float offset) {
    test_rng rng = {seed};
    float shift[3];
    scene_offset_vector(offset, shift);
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * (nboxes + 2));
    for (uint32_t i = 0; i < nboxes; i++) {
        for (int a = 0; a < 3; a++) {
            float c = test_float(&rng, 0, 100), h = test_float(&rng, 0, 4);
            boxes[i].min[a] = c - h;
            boxes[i].max[a] = (i % 17 == 0) ? c - h : c + h; /* some flat boxes */
        }
    }
    /* an infinite ground slab and a half-space */
    for (int a = 0; a < 3; a++) boxes[nboxes].min[a] = -INFINITY, boxes[nboxes].max[a] = INFINITY;
    boxes[nboxes].min[1] = -20.0f, boxes[nboxes].max[1] = -10.0f;
    for (int a = 0; a < 3; a++) boxes[nboxes + 1].min[a] = 150.0f, boxes[nboxes + 1].max[a] = INFINITY;
    uint32_t total = nboxes + 2;
    scene_move_boxes(boxes, total, offset);
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_boxes(boxes, total, NULL, &bvh, NULL) == VL_OK, "build boxes");
    if (!bvh) return;
    CHECK(vl_bvh_validate(bvh) == VL_OK, "validate boxes");
    scene_prims s = {NULL, boxes, total};
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    for (uint32_t i = 0; i < n; i++) {
        vl_ray* r = &rays[i];
        const vl_aabb* b = &boxes[test_u32(&rng, nboxes)];
        switch (i % 4) {
        case 0: /* from inside a box */
            for (int a = 0; a < 3; a++) r->origin[a] = (b->min[a] + b->max[a]) * 0.5f;
            scene_direction(&rng, r->dir);
            break;
        case 1: /* axis-aligned from a box's face plane */
            for (int a = 0; a < 3; a++) r->origin[a] = test_float(&rng, -10, 110) + shift[a], r->dir[a] = 0;
            r->origin[i % 3] = b->min[i % 3];
            r->dir[(i + 1) % 3] = (i & 8) ? 1.0f : -1.0f;
            break;
        default:
            for (int a = 0; a < 3; a++) r->origin[a] = test_float(&rng, -20, 120) + shift[a];
            scene_direction(&rng, r->dir);
            break;
        }
        r->tmin = (i % 5 == 0) ? test_float(&rng, 0, 5) : 0.0f;
        r->tmax = (i % 3 == 0) ? r->tmin + test_float(&rng, 0, 60) : INFINITY;
    }
    char what[64];
    snprintf(what, sizeof what, "boxes at %g", offset);
    check_rays(bvh, &s, rays, n, what);
    /* t is 0 from inside with tmin = 0 */
    vl_ray in = {{0, 0, 0}, 0, {0, 1, 0}, INFINITY};
    for (int a = 0; a < 3; a++) in.origin[a] = (boxes[0].min[a] + boxes[0].max[a]) * 0.5f;
    vl_hit h;
    CHECK(vl_bvh_raycast1(bvh, &in, 0, &h) == VL_OK && h.t == 0.0f && h.prim != VL_NO_HIT, "inside: t %g", h.t);
    free(rays);
    vl_bvh_destroy(bvh);
    free(boxes);
}

/* Batches of VL_WALK_BATCH rays and more (ray streams, with lists handed on to the walks) and
 * fewer (walks), with leaves of 1, 9 and 17 primitives (reduced runs: 9 only). */
static void test_streams(void) {
    scene_mesh m;
    if (!scene_world(24, 12, 64, 7, &m)) return;
    const int full = test_scaled(10) >= 10;
    for (uint32_t leaf = full ? 1 : 9; leaf <= (full ? 17u : 9u); leaf += 8) {
        char name[64];
        snprintf(name, sizeof name, "world, leaves of %u", leaf);
        vl_bvh_desc d = vl_bvh_default_desc();
        d.max_leaf_size = leaf;
        check_mesh(&m, VL_WALK_BATCH + 500, 11 + leaf, &d, name);
    }
    scene_free(&m);
}

/* A stack of 512 nearly equal triangles in leaves of one: every ray that enters the tree enters
 * every node, so the streams' lists outgrow their arena (and the rest of those rays go one at a
 * time) and the walks' rays fan out at the root (walks from the root, no seeds). */
static void test_stack(void) {
    enum { tris = 512 };
    scene_mesh m;
    memset(&m, 0, sizeof m);
    m.vertex_count = 3 * tris, m.triangle_count = tris;
    m.xyz = malloc(sizeof(float) * 3 * m.vertex_count);
    m.indices = malloc(sizeof(uint32_t) * 3 * m.triangle_count);
    test_rng rng = {77};
    static const float corner[3][3] = {{0, 0, 0}, {10, 0, 1}, {0, 10, 2}};
    for (uint32_t i = 0; i < 3 * tris; i++) {
        for (int a = 0; a < 3; a++) m.xyz[3 * i + a] = corner[i % 3][a] + test_float(&rng, 0.0f, 1e-3f);
        m.indices[i] = i;
    }
    scene_bounds(&m);
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 1;
    check_mesh(&m, VL_WALK_BATCH + 500, 41, &d, "stacked triangles");
    scene_free(&m);
}

/* Batches of more than one stream chunk (a ragged last one), closest hit sending each ray of a
 * whole chunk's list into its own nearest child first, and grouped by origin, against the
 * single-ray walk (reduced runs: line of sight, closest hit and any hit grouped). */
static void test_chunks(void) {
    scene_mesh m;
    if (!scene_world(24, 12, 64, 8, &m)) return;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    const uint32_t n = VL_STREAM_CHUNK + VL_WALK_BATCH + 1;
    const int full = test_scaled(10) >= 10;
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    for (uint32_t pass = full ? 0 : 1; pass < 2 && bvh; pass++) {
        if (pass) scene_rays_los(&m, n, 24, rays);
        else scene_rays_diffuse(&m, n, 25, rays);
        for (uint32_t f = 0; f < 4; f += full ? 1 : 3) { /* closest, any, and both grouped by origin */
            uint32_t flags = (f & 1) | (f & 2 ? VL_QUERY_GROUP_BY_ORIGIN : 0u);
            CHECK(vl_bvh_raycast(bvh, rays, n, flags, hits, NULL) == VL_OK, "chunks batch");
            uint32_t bad = 0;
            for (uint32_t i = 0; i < n; i++) {
                vl_hit one;
                vl_bvh_raycast1(bvh, &rays[i], f & 1, &one);
                if ((f & 1) ? (one.prim == VL_NO_HIT) != (hits[i].prim == VL_NO_HIT) : !same_hit(one, hits[i])) bad++;
            }
            CHECK(bad == 0, "%u rays of %u differ (pass %u flags %u)", bad, n, pass, f);
        }
    }
    free(rays);
    free(hits);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

static void test_meshes(void) {
    scene_mesh m;
    CHECK(scene_soup(test_scaled(3000), 10.0f, 0.6f, 3, &m), "soup");
    check_mesh(&m, test_scaled(2000), 5, NULL, "soup");
    scene_free(&m);
    CHECK(scene_soup(test_scaled(500), 1.0f, 0.02f, 4, &m), "fine soup");
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 16;
    d.sah_bins = 4;
    check_mesh(&m, test_scaled(1000), 6, &d, "fine soup, big leaves");
    scene_free(&m);
    CHECK(scene_world(test_scaled(100) < 8 ? 8 : test_scaled(100), test_scaled(200), 256, 9, &m), "world");
    check_mesh(&m, test_scaled(1000), 10, NULL, "terrain world");
    scene_free(&m);
    static const char* files[] = {"bunny00.off", "camel.off"};
    for (int f = 0; f < 2; f++) {
        if (!scene_load_test_mesh("test_rays", files[f], &m)) continue;
        scene_agents_in_bounds(&m, 256, 12);
        check_mesh(&m, test_scaled(f ? 1000 : 400), 13 + f, NULL, files[f]);
        scene_free(&m);
    }
}

/* The seeding with an arena too small for any child's list (no batch size reaches it: lists
 * that fan out stop the streams first): every ray seeded at the root, and the same answers as the
 * single-ray walk. */
static void test_seed_overflow(void) {
    scene_mesh m;
    if (!scene_world(24, 12, 64, 9, &m)) return;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    enum { n = 1000 };
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    float* rec = aligned_alloc(64, sizeof(float) * VL_RAYREC_FLOATS * n);
    uint32_t* arena = aligned_alloc(64, sizeof(uint32_t) * 2 * (n + VL_LIST_SPARE));
    uint32_t* masks = arena + n + VL_LIST_SPARE;
    uint32_t* seeds = aligned_alloc(64, (vl_bvh_seed_bytes(n) + 63) & ~(size_t)63);
    void* walks = aligned_alloc(64, (vl_bvh_walks_scratch() + 63) & ~(size_t)63);
    float extent = 0;
    for (int a = 0; a < 3; a++) extent = fmaxf(extent, m.hi[a] - m.lo[a]);
    for (uint32_t pass = 0; pass < 2 && bvh; pass++) {
        if (pass) scene_rays_los(&m, n, 26, rays);
        else scene_rays_diffuse(&m, n, 27, rays);
        for (uint32_t i = 0; i < n; i++) { /* short segments, which fan out little */
            const float* d = rays[i].dir;
            rays[i].tmax = rays[i].tmin + 0.02f * extent / sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        }
        for (uint32_t any_hit = 0; any_hit < 2; any_hit++) {
            uint32_t live = 0, parallel = 0;
            memset(arena, 0, sizeof(uint32_t) * (n + VL_LIST_SPARE));
            vl_bvh_load_chunk(rays, 0, NULL, n, rec, hits, arena, &live, &parallel);
            vl_bvh_trace_seeded(bvh, rec, arena, live, masks, seeds, n, n, live, parallel != 0, (int)any_hit, hits,
                                walks);
            uint32_t bad = 0;
            for (uint32_t i = 0; i < n; i++) {
                vl_hit one;
                vl_bvh_raycast1(bvh, &rays[i], any_hit, &one);
                if (any_hit ? (one.prim == VL_NO_HIT) != (hits[i].prim == VL_NO_HIT) : !same_hit(one, hits[i])) bad++;
            }
            CHECK(bad == 0, "seeds without room: %u rays of %u differ (pass %u any %u)", bad, n, pass, any_hit);
        }
    }
    free(rays), free(hits), free(rec), free(arena), free(seeds), free(walks);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* A tree of VL_WALK_PREFETCH_BYTES or more, where the walks fetch ahead (full-size runs only:
 * 400K triangles). */
static void test_large_tree(void) {
    if (test_scaled(10) < 10) return;
    scene_mesh m;
    if (!scene_world(448, 200, 256, 12, &m)) return;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    vl_bvh_stats st;
    if (bvh && vl_bvh_get_stats(bvh, &st) == VL_OK)
        CHECK(st.bytes >= VL_WALK_PREFETCH_BYTES, "the large tree takes only %zu bytes", st.bytes);
    enum { n = 20000 };
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    for (uint32_t pass = 0; pass < 2 && bvh; pass++) {
        if (pass) scene_rays_los(&m, n, 28, rays);
        else scene_rays_random(&m, n, 29, rays);
        for (uint32_t f = 0; f < 2; f++) {
            CHECK(vl_bvh_raycast(bvh, rays, n, f, hits, NULL) == VL_OK, "large tree batch");
            uint32_t bad = 0;
            for (uint32_t i = 0; i < n; i++) {
                vl_hit one;
                vl_bvh_raycast1(bvh, &rays[i], f, &one);
                if (f ? (one.prim == VL_NO_HIT) != (hits[i].prim == VL_NO_HIT) : !same_hit(one, hits[i])) bad++;
            }
            CHECK(bad == 0, "large tree: %u rays of %u differ (pass %u flags %u)", bad, n, pass, f);
        }
    }
    free(rays);
    free(hits);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* A huge batch (1M rays at scale 1) answers exactly as the single-ray path. */
static void test_million(void) {
    scene_mesh m;
    if (!scene_world(64, 60, 512, 21, &m)) return;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    uint32_t n = test_scaled(1000000);
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    for (uint32_t pass = 0; pass < 2 && bvh; pass++) {
        if (pass) scene_rays_los(&m, n, 22, rays);
        else scene_rays_random(&m, n, 23, rays);
        for (uint32_t f = 0; f < 4; f++) { /* closest, any, and both grouped by origin */
            uint32_t flags = (f & 1) | (f & 2 ? VL_QUERY_GROUP_BY_ORIGIN : 0u);
            CHECK(vl_bvh_raycast(bvh, rays, n, flags, hits, NULL) == VL_OK, "1M batch");
            uint32_t bad = 0;
            for (uint32_t i = 0; i < n; i++) {
                vl_hit one;
                vl_bvh_raycast1(bvh, &rays[i], f & 1, &one);
                if ((f & 1) ? (one.prim == VL_NO_HIT) != (hits[i].prim == VL_NO_HIT) : !same_hit(one, hits[i])) bad++;
            }
            CHECK(bad == 0, "%u rays of %u differ (pass %u flags %u)", bad, n, pass, f);
        }
    }
    free(rays);
    free(hits);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* The meshes and box trees again at the other offsets of scenes.h (each a new scene, moved by
 * (o, o / 2, -o) in float), smaller: the tree against the scalar brute force, every ray set. The
 * double-precision check of the same scenes at offsets is test_rays_far.c. */
static void test_offsets(void) {
    scene_mesh base[4];
    const char* names[4] = {"soup", "world", "bunny00.off", "camel.off"};
    uint32_t rays[4] = {test_scaled(400), test_scaled(300), test_scaled(48), test_scaled(120)};
    int have[4];
    have[0] = scene_soup(test_scaled(600), 10.0f, 0.6f, 33, &base[0]);
    have[1] = scene_world(16, 8, 64, 34, &base[1]);
    for (int f = 2; f < 4; f++) {
        have[f] = test_data_dir() && scene_load_data(NULL, names[f], &base[f]);
        if (have[f]) scene_agents_in_bounds(&base[f], 64, 35);
    }
    for (uint32_t k = 1; k < SCENE_OFFSET_COUNT; k++) {
        for (int f = 0; f < 4; f++) {
            if (!have[f]) continue;
            scene_mesh m;
            if (!scene_copy_moved(&base[f], k, &m)) continue;
            char name[64];
            snprintf(name, sizeof name, "%s at %g", names[f], scene_offset(k));
            check_mesh(&m, rays[f], 40 + k, NULL, name);
            scene_free(&m);
        }
        test_boxes(test_scaled(300), test_scaled(300), 36 + k, scene_offset(k));
    }
    for (int f = 0; f < 4; f++)
        if (have[f]) scene_free(&base[f]);
}

int main(void) {
    test_meshes();
    test_boxes(test_scaled(2000), test_scaled(2000), 31, 0.0f);
    test_boxes(5, VL_WALK_BATCH + 500, 32, 0.0f); /* ray streams over leaves of boxes */
    test_offsets();
    test_streams();
    test_stack();
    test_chunks();
    test_seed_overflow();
    test_large_tree();
    test_million();
    return test_finish("test_rays");
}
