/* Capsule overlaps against a double-precision brute force (capsule_oracle.h, independent of the
 * library's closest-point code): triangle soups with zero-area triangles, a terrain world, the real
 * meshes and box trees (infinite and flat boxes), each where it is and moved by every far offset of
 * tests/scenes.h; capsules near surfaces at the triangles' scale, parallel to faces and to edges at
 * about their radius, with an end on a vertex, through faces, of zero length, of zero radius, tiny
 * and huge, invalid ones mixed in. Every pair must be right by its gap against the stated
 * tolerance (overlap_oracle.h's verdicts: touching pairs reported, pairs apart by more than the
 * tolerance band not, the band either way); the batch (plain, on caller scratch, prefixes),
 * single queries and the context form (the default pool, 1 and 3 workers) must give the same
 * pair sets, the context forms the same list in the same order for any worker count; zero-length
 * capsules the sphere queries' pairs exactly. Hand-built contacts, bad arguments, scratch and
 * allocation. */
#include <float.h>

#include "capsule_oracle.h"
#include "capsule_scenes.h"
#include "overlap_oracle.h"
#include "scenes.h"
#include "test_alloc.h"
#include "test_util.h"

static uint64_t g_expected, g_skipped, g_pairs;

/* Primitive i of the scene for the oracle. */
static co_prim prim_of(const oracle_scene* sc, uint32_t i) {
    co_prim p;
    memset(&p, 0, sizeof p);
    if (sc->boxes)
        p.box = &sc->boxes[i];
    else
        oracle_triangle(sc, i, p.v);
    return p;
}

/* Whether the capsule lies further than margin + radius from the triangle's box (then from the
 * triangle too): the segment's box against the triangle's box grown by that much. */
static int bounds_apart(const oracle_bounds* b, const vl_capsule* c, double margin) {
    const double reach = c->radius + margin;
    for (int a = 0; a < 3; a++) {
        const double lo = fmin(c->a[a], c->b[a]), hi = fmax(c->a[a], c->b[a]);
        if (b->lo[a] - hi > reach || lo - b->hi[a] > reach) return 1;
    }
    return 0;
}

/* The verdict on capsule c against primitive i (1: must be reported, 0: must not, -1: either). */
static int verdict(const oracle_scene* sc, const oracle_bounds* bounds, uint32_t i, const vl_capsule* c) {
    co_capsule q = co_of(c);
    const double h = co_half(&q);
    if (bounds) {
        const double scale = c->radius + h + bounds[i].ext;
        const double margin = fmax(ORACLE_APART * scale, ORACLE_FLOOR);
        if (bounds_apart(&bounds[i], c, margin)) return 0;
    }
    co_prim p = prim_of(sc, i);
    const double gap = co_dist_at(&p, &q, 0.0) - c->radius;
    return oracle_classify(gap, c->radius + h + co_prim_size(&p));
}

/* Checks the sorted pairs of n capsules against the oracle. */
static oracle_report check_pairs(const oracle_scene* sc, const vl_capsule* qs, uint32_t n, const vl_pair* pairs,
                                 uint32_t np) {
    oracle_report r;
    memset(&r, 0, sizeof r);
    r.first_bad_query = r.first_bad_prim = UINT32_MAX;
    r.pairs = np;
    uint8_t* seen = calloc(sc->count ? sc->count : 1, 1);
    oracle_bounds* bounds = oracle_scene_bounds(sc);
    uint32_t at = 0;
    for (uint32_t q = 0; q < n; q++) {
        const int valid = co_valid(&qs[q]);
        const uint32_t begin = at;
        for (; at < np && pairs[at].a == q; at++) {
            const uint32_t p = pairs[at].b;
            int bad = 0;
            if (!valid)
                r.invalid_answered++, bad = 1;
            else if (p >= sc->count)
                r.extra++, bad = 1;
            else if (seen[p])
                r.duplicate++, bad = 1;
            else {
                seen[p] = 1;
                if (verdict(sc, bounds, p, &qs[q]) == 0) r.extra++, bad = 1;
            }
            if (bad && r.first_bad_query == UINT32_MAX) r.first_bad_query = q, r.first_bad_prim = p;
        }
        if (valid)
            for (uint32_t i = 0; i < sc->count; i++) {
                const int v = verdict(sc, bounds, i, &qs[q]);
                r.expected += v == 1, r.skipped += v == -1;
                if (v == 1 && !seen[i]) {
                    r.missing++;
                    if (r.first_bad_query == UINT32_MAX) r.first_bad_query = q, r.first_bad_prim = i;
                }
            }
        for (uint32_t k = begin; k < at; k++)
            if (pairs[k].b < sc->count) seen[pairs[k].b] = 0;
    }
    if (at != np) r.extra += np - at;
    free(seen);
    free(bounds);
    return r;
}

/* The pairs of the capsules on a context of the default pool with `workers` workers. */
static vl_status on_pool(const vl_bvh* bvh, const vl_capsule* qs, uint32_t n, uint32_t workers, vl_pair_buffer* out) {
    vl_thread_pool* pool = NULL;
    vl_context* ctx = NULL;
    if (vl_thread_pool_create(workers, &pool) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    vl_task_system ts = vl_thread_pool_get_task_system(pool);
    vl_status st = vl_context_create(&ts, &ctx);
    if (st == VL_OK) st = vl_bvh_overlap_capsules(bvh, qs, n, out, &(vl_exec){.context = ctx});
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
    return st;
}

/* One set of capsules through every entry point, checked. */
static void check_capsules(const char* what, const vl_bvh* bvh, const oracle_scene* sc, const vl_capsule* qs,
                           uint32_t n) {
    int any_invalid = 0;
    for (uint32_t i = 0; i < n; i++) any_invalid |= !co_valid(&qs[i]);
    const vl_status expect = any_invalid ? VL_ERR_INVALID_QUERY : VL_OK;
    vl_pair_buffer batched = {0}, single = {0}, other = {0}, pool1 = {0}, pool3 = {0};
    /* the batch appends after what is there */
    vl_pair_buffer_reserve(&batched, 3);
    batched.pairs[0] = (vl_pair){7, 7}, batched.count = 1;
    vl_status st = vl_bvh_overlap_capsules(bvh, qs, n, &batched, NULL);
    CHECK(st == expect, "%s: batched status %s", what, vl_status_string(st));
    CHECK(batched.pairs[0].a == 7 && batched.pairs[0].b == 7, "%s: earlier pair kept", what);
    uint32_t nb, ns, nc;
    vl_pair* pb = oracle_sorted_pairs(&batched, 1, &nb);
    const oracle_report r = check_pairs(sc, qs, n, pb, nb);
    CHECK(r.missing == 0 && r.extra == 0 && r.duplicate == 0 && r.invalid_answered == 0,
          "%s: %llu missing, %llu extra, %llu twice, %llu for invalid queries (query %u prim %u)", what,
          (unsigned long long)r.missing, (unsigned long long)r.extra, (unsigned long long)r.duplicate,
          (unsigned long long)r.invalid_answered, r.first_bad_query, r.first_bad_prim);
    g_expected += r.expected, g_skipped += r.skipped, g_pairs += nb;
    /* single queries */
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t from = single.count;
        st = vl_bvh_overlap_capsules(bvh, &qs[i], 1, &single, NULL);
        CHECK(st == (co_valid(&qs[i]) ? VL_OK : VL_ERR_INVALID_QUERY), "%s: single %u status %s", what, i,
              vl_status_string(st));
        for (uint32_t k = from; k < single.count; k++) single.pairs[k].a = i;
    }
    vl_pair* ps = oracle_sorted_pairs(&single, 0, &ns);
    CHECK(oracle_same_pairs(pb, nb, ps, ns), "%s: batched %u pairs, single %u", what, nb, ns);
    /* caller scratch */
    const size_t bytes = vl_bvh_overlap_scratch_size(bvh, n);
    void* scratch = bytes ? aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) / 64 * 64) : NULL;
    st = vl_bvh_overlap_capsules(bvh, qs, n, &other, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
    CHECK(st == expect, "%s: scratch status %s", what, vl_status_string(st));
    vl_pair* pc = oracle_sorted_pairs(&other, 0, &nc);
    CHECK(oracle_same_pairs(pb, nb, pc, nc), "%s: batched %u pairs, scratch %u", what, nb, nc);
    free(pc);
    /* contexts: the same list, in the same order, for 1 and 3 workers; the set of the others */
    st = on_pool(bvh, qs, n, 1, &pool1);
    CHECK(st == expect, "%s: context status %s", what, vl_status_string(st));
    st = on_pool(bvh, qs, n, 3, &pool3);
    CHECK(st == expect, "%s: 3 workers status %s", what, vl_status_string(st));
    CHECK(pool1.count == pool3.count && (!pool1.count || !memcmp(pool1.pairs, pool3.pairs, sizeof(vl_pair) * pool1.count)),
          "%s: 1 worker %u pairs, 3 workers %u, not the same list", what, pool1.count, pool3.count);
    pc = oracle_sorted_pairs(&pool3, 0, &nc);
    CHECK(oracle_same_pairs(pb, nb, pc, nc), "%s: batched %u pairs, context %u", what, nb, nc);
    free(pc);
    /* prefixes of odd sizes answer as the whole batch does for those queries */
    static const uint32_t sizes[] = {1, 3, 129};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t m = sizes[k] < n ? sizes[k] : n, np, want = 0;
        other.count = 0;
        vl_bvh_overlap_capsules(bvh, qs, m, &other, NULL);
        vl_pair* pp = oracle_sorted_pairs(&other, 0, &np);
        while (want < nb && pb[want].a < m) want++;
        CHECK(oracle_same_pairs(pb, want, pp, np), "%s: prefix of %u: %u pairs, want %u", what, m, np, want);
        free(pp);
    }
    free(scratch);
    free(pb), free(ps);
    vl_pair_buffer_free(&batched), vl_pair_buffer_free(&single), vl_pair_buffer_free(&other);
    vl_pair_buffer_free(&pool1), vl_pair_buffer_free(&pool3);
}

/* A unit vector perpendicular to u (unit). */
static void perpendicular(const double u[3], test_rng* rng, double out[3]) {
    double x[3];
    for (int a = 0; a < 3; a++) x[a] = test_float(rng, -1.0f, 1.0f);
    double k = co_dot(x, u);
    for (int a = 0; a < 3; a++) x[a] -= k * u[a];
    double l = sqrt(co_dot(x, x));
    if (!(l > 1e-6)) x[0] = u[1], x[1] = -u[0], x[2] = 0.0, l = sqrt(co_dot(x, x));
    if (!(l > 0.0)) x[0] = 0.0, x[1] = u[2], x[2] = -u[1], l = sqrt(co_dot(x, x));
    for (int a = 0; a < 3; a++) out[a] = x[a] / l;
}

/* Capsules near a mesh at the scale of its triangles: random ones (some of zero length, zero radius,
 * tiny, huge), and ones built to touch or nearly touch a random triangle: lying parallel to its
 * face, parallel to an edge beside it, with an end at a vertex, through the face; the gap off the
 * radius by -2^-10, 0, 2^-30 or 2^-10 of the radius (rounded to float, which changes which touch). */
static void make_capsules(const scene_mesh* m, uint32_t n, uint64_t seed, float scale, vl_capsule* out) {
    static const double eps[] = {-0x1p-10, 0.0, 0x1p-30, 0x1p-10};
    test_rng rng = {seed};
    const float ext = scene_extent(m);
    for (uint32_t i = 0; i < n; i++) {
        double v[3][3], e1[3], e2[3], nrm[3], p[3], u[3], c[3];
        scene_random_spot(m, &rng, v, e1, e2, nrm, p);
        double r = scale * test_float(&rng, 0.05f, 1.0f), h = scale * test_float(&rng, 0.0f, 2.0f);
        const double e = eps[(i / 8) % 4], side = (i & 1) ? 1.0 : -1.0;
        for (int a = 0; a < 3; a++) u[a] = test_float(&rng, -1.0f, 1.0f);
        scene_unit(u);
        switch (i % 8) {
        case 0: /* random near the surface */
            for (int a = 0; a < 3; a++) c[a] = p[a] + test_float(&rng, -1.0f, 1.0f) * scale;
            if (i % 24 == 0) h = 0.0;             /* a sphere */
            if (i % 40 == 8) r = 0.0;             /* a segment */
            if (i % 56 == 16) r = scale * 1e-5f;  /* thin */
            if (i % 72 == 24) r = ext * 2.0;      /* holds everything */
            break;
        case 1: /* parallel to the face at r (1 + e) */
            perpendicular(nrm, &rng, u);
            for (int a = 0; a < 3; a++) c[a] = p[a] + side * nrm[a] * r * (1.0 + e);
            break;
        case 2: { /* parallel to an edge at r (1 + e), beside it (in the plane or off it) */
            const int j = (int)test_u32(&rng, 3);
            double E[3], x[3];
            for (int a = 0; a < 3; a++) E[a] = v[(j + 1) % 3][a] - v[j][a];
            for (int a = 0; a < 3; a++) u[a] = E[a];
            scene_unit(u);
            perpendicular(u, &rng, x);
            const double lam = test_float(&rng, 0.2f, 0.8f);
            for (int a = 0; a < 3; a++) c[a] = v[j][a] + lam * E[a] + x[a] * r * (1.0 + e);
            h = 0.5 * sqrt(co_dot(E, E)) * test_float(&rng, 0.2f, 1.5f);
            break;
        }
        case 3: { /* an end at r (1 + e) from a vertex, pointing away */
            const int j = (int)test_u32(&rng, 3);
            for (int a = 0; a < 3; a++) c[a] = v[j][a] + u[a] * (r * (1.0 + e) + h);
            break;
        }
        case 4: /* through the face */
            for (int a = 0; a < 3; a++) c[a] = p[a] + nrm[a] * h * test_float(&rng, -0.9f, 0.9f);
            for (int a = 0; a < 3; a++) u[a] = nrm[a] + 0.3 * u[a];
            scene_unit(u);
            if (i % 16 == 4) r = 0.0; /* a segment through the face */
            break;
        case 5: /* a segment (zero radius) near the surface */
            r = 0.0;
            for (int a = 0; a < 3; a++) c[a] = p[a] + test_float(&rng, -0.3f, 0.3f) * scale;
            break;
        case 6: /* zero length at r (1 + e) off the face: a sphere touching it */
            h = 0.0;
            for (int a = 0; a < 3; a++) c[a] = p[a] + side * nrm[a] * r * (1.0 + e);
            break;
        default: /* long, crossing several triangles */
            h = scale * test_float(&rng, 2.0f, 8.0f);
            for (int a = 0; a < 3; a++) c[a] = p[a] + test_float(&rng, -1.0f, 1.0f) * scale;
            break;
        }
        for (int a = 0; a < 3; a++) out[i].a[a] = (float)(c[a] - h * u[a]), out[i].b[a] = (float)(c[a] + h * u[a]);
        if (h == 0.0)
            for (int a = 0; a < 3; a++) out[i].b[a] = out[i].a[a];
        out[i].radius = (float)r;
    }
}

/* Invalid capsules among valid ones. */
static void spoil(vl_capsule* qs, uint32_t n) {
    for (uint32_t i = 5; i < n; i += 37) {
        switch ((i / 37) % 6) {
        case 0: qs[i].radius = NAN; break;
        case 1: qs[i].radius = -1.0f; break;
        case 2: qs[i].a[0] = INFINITY; break;
        case 3: qs[i].b[1] = NAN; break;
        case 4: qs[i].radius = INFINITY; break;
        default: qs[i].a[2] = -INFINITY, qs[i].b[2] = -INFINITY; break;
        }
    }
}

/* The zero-length capsules of qs answer exactly as the spheres they are. */
static void check_as_spheres(const char* what, const vl_bvh* bvh, const vl_capsule* qs, uint32_t n) {
    vl_capsule* caps = malloc(sizeof(vl_capsule) * (n ? n : 1));
    vl_sphere* sph = malloc(sizeof(vl_sphere) * (n ? n : 1));
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!co_valid(&qs[i])) continue;
        caps[k] = qs[i];
        for (int a = 0; a < 3; a++) caps[k].b[a] = caps[k].a[a], sph[k].center[a] = caps[k].a[a];
        sph[k++].radius = qs[i].radius;
    }
    vl_pair_buffer pc = {0}, ps = {0};
    CHECK(vl_bvh_overlap_capsules(bvh, caps, k, &pc, NULL) == VL_OK, "%s: zero-length capsules", what);
    CHECK(vl_bvh_overlap_spheres(bvh, sph, k, &ps, NULL) == VL_OK, "%s: spheres", what);
    uint32_t nc, ns;
    vl_pair *a = oracle_sorted_pairs(&pc, 0, &nc), *b = oracle_sorted_pairs(&ps, 0, &ns);
    CHECK(oracle_same_pairs(a, nc, b, ns), "%s: zero-length capsules %u pairs, the spheres %u", what, nc, ns);
    free(a), free(b), free(caps), free(sph);
    vl_pair_buffer_free(&pc), vl_pair_buffer_free(&ps);
}

static void check_mesh_at(const char* name, const scene_mesh* m, uint32_t n, float scale, uint64_t seed,
                          const vl_bvh_desc* desc) {
    vl_bvh* bvh = NULL;
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, desc, &bvh, NULL);
    CHECK(st == VL_OK, "%s: build %s", name, vl_status_string(st));
    if (!bvh) return;
    oracle_scene sc = {m->xyz, m->indices, NULL, m->triangle_count};
    vl_capsule* qs = malloc(sizeof(vl_capsule) * n);
    make_capsules(m, n, seed, scale, qs);
    spoil(qs, n);
    check_capsules(name, bvh, &sc, qs, n);
    check_as_spheres(name, bvh, qs, n);
    free(qs);
    vl_bvh_destroy(bvh);
}

/* The mesh where it is, then moved by each far offset with a sixth of the queries. */
static void check_mesh(const char* name, const scene_mesh* m, uint32_t n, float scale, uint64_t seed,
                       const vl_bvh_desc* desc) {
    check_mesh_at(name, m, n, scale, seed, desc);
    for (uint32_t k = 1; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh moved;
        char what[160];
        if (!scene_copy_moved_named(m, k, name, &moved, what, sizeof what)) continue;
        check_mesh_at(what, &moved, n / 6 > 16 ? n / 6 : 16, scale, seed + k, desc);
        scene_free(&moved);
    }
}

static void test_scenes(void) {
    scene_mesh m;
    CHECK(scene_soup(test_scaled(1500), 10.0f, 0.6f, 3, &m), "soup");
    scene_zero_area(&m, 200, 1); /* triangles of zero area: a point and collinear corners */
    check_mesh("soup", &m, test_scaled(600), 0.4f, 41, NULL);
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 32, d.sah_bins = 4;
    check_mesh("soup, leaves of 32", &m, test_scaled(200), 0.4f, 42, &d);
    d.max_leaf_size = 1;
    check_mesh("soup, leaves of 1", &m, test_scaled(200), 0.4f, 43, &d);
    scene_free(&m);
    CHECK(scene_soup(test_scaled(500), 1e-3f, 1e-4f, 4, &m), "tiny soup");
    check_mesh("tiny soup", &m, test_scaled(200), 5e-5f, 44, NULL);
    scene_free(&m);
    CHECK(scene_soup(test_scaled(500), 1e5f, 2e3f, 5, &m), "huge soup");
    check_mesh("huge soup", &m, test_scaled(200), 1e3f, 45, NULL);
    scene_free(&m);
    CHECK(scene_soup(test_scaled(500), 4e3f, 1.0f, 6, &m), "far soup");
    check_mesh("far soup", &m, test_scaled(200), 0.5f, 49, NULL);
    scene_free(&m);
    const uint32_t grid = test_scaled(40) < 8 ? 8 : test_scaled(40);
    CHECK(scene_world(grid, grid / 2, 0, 9, &m), "world");
    check_mesh("terrain world", &m, test_scaled(600), 1.0f, 46, NULL);
    scene_free(&m);
    static const char* files[] = {"bunny00.off", "camel.off"};
    for (int f = 0; f < 2; f++) {
        if (!scene_load_test_mesh("test_overlaps_capsules", files[f], &m)) continue;
        check_mesh(files[f], &m, test_scaled(f ? 150 : 200), scene_extent(&m) * 0.01f, 47 + f, NULL);
        scene_free(&m);
    }
}

/* The bench's capsules (capsule_scenes.h) on a terrain world at every offset. */
static void test_bench_queries(void) {
    scene_mesh m;
    if (!scene_world(24, 24, 0, 60, &m)) return;
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh moved;
        char what[80];
        if (!scene_copy_moved_named(&m, k, "bench capsules", &moved, what, sizeof what)) continue;
        vl_bvh* bvh = NULL;
        CHECK(vl_bvh_build_triangles(moved.xyz, moved.vertex_count, moved.indices, moved.triangle_count, NULL, &bvh,
                                     NULL) == VL_OK, "bench world build");
        const uint32_t n = test_scaled(k ? 100 : 400);
        vl_capsule* qs = malloc(sizeof(vl_capsule) * n);
        scene_capsule_queries(&moved, n, 70 + k, qs);
        oracle_scene sc = {moved.xyz, moved.indices, NULL, moved.triangle_count};
        if (bvh) check_capsules(what, bvh, &sc, qs, n);
        free(qs);
        vl_bvh_destroy(bvh);
        scene_free(&moved);
    }
    scene_free(&m);
}

/* A tree of random boxes (flat ones, an infinite slab, an unbounded corner) moved by
 * scene_offset(k), with capsules moved alike: random, with an end on a box's face, lying along a
 * face, parallel to an edge. */
static void test_box_tree(uint32_t count, uint32_t n, uint64_t seed, uint32_t k) {
    test_rng rng = {seed + 1000};
    vl_aabb* prims = malloc(sizeof(vl_aabb) * (count + 2));
    scene_box_tree(count, seed, k, prims);
    const uint32_t total = count + 2;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_boxes(prims, total, NULL, &bvh, NULL) == VL_OK, "box tree build");
    if (!bvh) return;
    vl_capsule* qs = malloc(sizeof(vl_capsule) * n);
    float v[3];
    scene_offset_vector(scene_offset(k), v);
    for (uint32_t i = 0; i < n; i++) {
        const vl_aabb* p = &prims[test_u32(&rng, count)];
        float c[3], u[3], r = test_float(&rng, 0, 4), h = test_float(&rng, 0, 6);
        scene_direction(&rng, u);
        for (int a = 0; a < 3; a++) c[a] = v[a] + test_float(&rng, -30, 180);
        const int ax = (int)(i % 3);
        switch (i % 5) {
        case 1: /* an end on the top face */
            for (int a = 0; a < 3; a++) c[a] = 0.5f * (p->min[a] + p->max[a]) + h * u[a];
            c[ax] = p->max[ax] + r + h * u[ax];
            break;
        case 2: /* lying along a face at r */
            for (int a = 0; a < 3; a++) c[a] = 0.5f * (p->min[a] + p->max[a]);
            c[ax] = p->max[ax] + r;
            u[ax] = 0.0f;
            break;
        case 3: /* parallel to an edge beside it at r */
            for (int a = 0; a < 3; a++) c[a] = p->max[a], u[a] = 0.0f;
            u[ax] = 1.0f;
            c[(ax + 1) % 3] += r;
            break;
        default: break;
        }
        if (i % 17 == 0) h = 0.0f;
        if (i % 19 == 0) r = 0.0f;
        qs[i] = scene_capsule(c, u, h, r);
    }
    spoil(qs, n);
    oracle_scene sc = {NULL, NULL, prims, total};
    char what[80];
    snprintf(what, sizeof what, "box tree at %g", scene_offset(k));
    check_capsules(what, bvh, &sc, qs, n);
    check_as_spheres(what, bvh, qs, n);
    free(qs), free(prims);
    vl_bvh_destroy(bvh);
}

/* Hand-built contacts: a closed cube [0, 8]^3, a floor at y = -1, zero-area triangles. */
static void test_contacts(void) {
    scene_mesh m;
    memset(&m, 0, sizeof m);
    static const float cube[8][3] = {{0, 0, 0}, {8, 0, 0}, {0, 8, 0}, {8, 8, 0}, {0, 0, 8}, {8, 0, 8}, {0, 8, 8}, {8, 8, 8}};
    static const uint8_t faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                         {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    scene_reserve(&m, 8 + 4 + 6, 12 + 2 + 2);
    for (int c = 0; c < 8; c++) scene_push_vertex(&m, cube[c][0], cube[c][1], cube[c][2]);
    for (int f = 0; f < 12; f++) scene_push_tri(&m, faces[f][0], faces[f][1], faces[f][2]);
    scene_push_vertex(&m, -20, -1, -20), scene_push_vertex(&m, 20, -1, -20);
    scene_push_vertex(&m, -20, -1, 20), scene_push_vertex(&m, 20, -1, 20);
    scene_push_tri(&m, 8, 10, 9), scene_push_tri(&m, 9, 10, 11);
    scene_push_vertex(&m, 30, 0, 0), scene_push_vertex(&m, 32, 2, 0), scene_push_vertex(&m, 34, 4, 0); /* a segment */
    scene_push_vertex(&m, 40, 1, 1), scene_push_vertex(&m, 40, 1, 1), scene_push_vertex(&m, 40, 1, 1); /* a point */
    scene_push_tri(&m, 12, 13, 14), scene_push_tri(&m, 15, 16, 17);
    scene_bounds(&m);
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK,
          "contacts build");
    typedef struct {
        vl_capsule c;
        int hit;
        const char* what;
    } contact_case;
    const contact_case cases[] = {
        {{{3, 4, 4}, 2.9f, {5, 4, 4}}, 0, "inside the cube, apart"},
        {{{3, 4, 4}, 3.0f, {5, 4, 4}}, 1, "inside the cube, its ends touching two faces"},
        {{{2, 9, 2}, 1.0f, {6, 9, 6}}, 1, "lying on the top face"},
        {{{2, 9.0001f, 2}, 1.0f, {6, 9.0001f, 6}}, 0, "just above the top face"},
        {{{-4, 4, 9}, 1.0f, {12, 4, 9}}, 1, "along the z = 8 face, longer than it"},
        {{{-4, 4, 9.001f}, 1.0f, {12, 4, 9.001f}}, 0, "just off it"},
        {{{9, 9, -2}, 1.4142135f, {9, 9, 10}}, 1, "parallel to the top-right edge at its radius"},
        {{{9, 9, -2}, 1.414f, {9, 9, 10}}, 0, "parallel to that edge, just apart"},
        {{{10, 4, 4}, 2.0f, {20, 4, 4}}, 1, "an end touching the x = 8 face"},
        {{{10.001f, 4, 4}, 2.0f, {20, 4, 4}}, 0, "an end just apart"},
        {{{4, -5, 4}, 0.0f, {4, 5, 4}}, 1, "a segment through the floor and the bottom face"},
        {{{30, 5, 1.4142135f}, 1.4142135f, {36, -1, 1.4142135f}}, 1, "across the segment triangle at its radius"},
        {{{30, 5, 1.5f}, 1.4142135f, {36, -1, 1.5f}}, 0, "across the segment triangle, apart"},
        {{{40, 1, 3}, 2.0f, {40, 1, 9}}, 1, "an end on the point triangle"},
        {{{39, 3, 1}, 1.9f, {41, 3, 1}}, 0, "beside the point triangle"},
        {{{3, 3, 3}, 0.5f, {3, 3, 3}}, 0, "a sphere inside the cube"},
        {{{31, 1, 0}, 0.0f, {33, 3, 0}}, 1, "a segment along the segment triangle"},
    };
    const uint32_t n = sizeof cases / sizeof cases[0];
    for (uint32_t i = 0; i < n && bvh; i++) {
        vl_pair_buffer out = {0};
        CHECK(vl_bvh_overlap_capsules(bvh, &cases[i].c, 1, &out, NULL) == VL_OK, "contact %u", i);
        CHECK((out.count > 0) == cases[i].hit, "contact %u (%s): %u pairs", i, cases[i].what, out.count);
        vl_pair_buffer_free(&out);
    }
    vl_capsule qs[sizeof cases / sizeof cases[0]];
    for (uint32_t i = 0; i < n; i++) qs[i] = cases[i].c;
    oracle_scene sc = {m.xyz, m.indices, NULL, m.triangle_count};
    if (bvh) check_capsules("contacts", bvh, &sc, qs, n);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* Bad arguments change nothing; scratch checks; no allocation on caller scratch once out has grown. */
static void test_arguments(void) {
    scene_mesh m;
    if (!scene_soup(500, 10.0f, 0.6f, 8, &m)) return;
    vl_bvh* bvh = NULL;
    vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL);
    enum { N = 300 };
    vl_capsule qs[N];
    make_capsules(&m, N, 9, 0.5f, qs);
    vl_pair_buffer out = {0};
    CHECK(vl_bvh_overlap_capsules(NULL, qs, N, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_overlap_capsules(bvh, NULL, N, &out, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL queries");
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL out");
    CHECK(vl_bvh_overlap_capsules(bvh, NULL, 0, &out, NULL) == VL_OK && out.count == 0, "count 0");
    vl_pair_buffer bad = {NULL, 0, 4};
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, &bad, NULL) == VL_ERR_INVALID_ARGUMENT, "inconsistent out");
    const size_t bytes = vl_bvh_overlap_scratch_size(bvh, N);
    CHECK(bytes > 0, "scratch size");
    char* mem = aligned_alloc(64, bytes + 128);
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, &out, &(vl_exec){.scratch = mem, .scratch_bytes = bytes - 1}) ==
              VL_ERR_INVALID_ARGUMENT && out.count == 0, "scratch too small");
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, &out, &(vl_exec){.scratch = mem + 4, .scratch_bytes = bytes}) ==
              VL_ERR_INVALID_ARGUMENT && out.count == 0, "misaligned scratch");
    vl_context* ctx = NULL;
    CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, &out, &(vl_exec){.context = ctx, .scratch = mem, .scratch_bytes = bytes}) ==
              VL_ERR_INVALID_ARGUMENT && out.count == 0, "context and scratch");
    /* a context without a job system: the batch's pairs */
    vl_pair_buffer want = {0};
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, &want, NULL) == VL_OK, "plain");
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, &out, &(vl_exec){.context = ctx}) == VL_OK && out.count == want.count,
          "serial context %u pairs, want %u", out.count, want.count);
    vl_context_destroy(ctx);
    /* caller scratch: nothing allocated once out holds the pairs */
    vl_pair_buffer_reserve(&out, 2 * want.count + 64);
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    out.count = 0;
    CHECK(vl_bvh_overlap_capsules(bvh, qs, N, &out, &(vl_exec){.scratch = mem, .scratch_bytes = bytes}) == VL_OK,
          "scratch");
    CHECK(vl_bvh_overlap_capsules(bvh, &qs[0], 1, &out, NULL) == VL_OK, "single");
    CHECK(hooks.allocs == 0, "caller scratch allocated %ld times", hooks.allocs);
    /* out cannot grow: VL_ERR_OUT_OF_MEMORY, out as it was */
    vl_pair_buffer small = {0};
    hooks.budget = 0;
    vl_status st = vl_bvh_overlap_capsules(bvh, qs, N, &small, NULL);
    CHECK(st == VL_ERR_OUT_OF_MEMORY && small.count == 0, "no memory: %s", vl_status_string(st));
    test_alloc_end(&hooks);
    /* invalid capsules: each answered as nothing, the rest answered */
    vl_capsule inv[4] = {qs[0], qs[1], qs[2], qs[3]};
    inv[1].radius = -0.5f, inv[2].a[1] = NAN;
    vl_pair_buffer a = {0}, b = {0};
    CHECK(vl_bvh_overlap_capsules(bvh, inv, 4, &a, NULL) == VL_ERR_INVALID_QUERY, "invalid in a batch");
    vl_capsule good[2] = {qs[0], qs[3]};
    CHECK(vl_bvh_overlap_capsules(bvh, good, 2, &b, NULL) == VL_OK, "the valid ones");
    uint32_t na, nb;
    for (uint32_t i = 0; i < b.count; i++) b.pairs[i].a = b.pairs[i].a ? 3 : 0;
    vl_pair *sa = oracle_sorted_pairs(&a, 0, &na), *sb = oracle_sorted_pairs(&b, 0, &nb);
    CHECK(oracle_same_pairs(sa, na, sb, nb), "invalid capsules answered: %u pairs, want %u", na, nb);
    CHECK(vl_bvh_overlap_capsules(bvh, &inv[1], 1, &a, NULL) == VL_ERR_INVALID_QUERY, "single invalid");
    free(sa), free(sb), free(mem);
    vl_pair_buffer_free(&a), vl_pair_buffer_free(&b), vl_pair_buffer_free(&out), vl_pair_buffer_free(&want);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

int main(void) {
    test_contacts();
    test_arguments();
    test_scenes();
    test_bench_queries();
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) test_box_tree(test_scaled(k ? 150 : 400), test_scaled(k ? 60 : 300), 51 + k, k);
    printf("test_overlaps_capsules: %llu pairs, %llu must-report, %llu within the tolerance band\n",
           (unsigned long long)g_pairs, (unsigned long long)g_expected, (unsigned long long)g_skipped);
    return test_finish("test_overlaps_capsules");
}
