/* Capsule sweeps against a double-precision brute force (capsule_oracle.h, independent of the
 * library's tests: the first time the segment's distance to a primitive, convex in time, reaches the
 * radius): triangle soups with zero-area triangles, a terrain world, the real meshes and box trees
 * (infinite and flat boxes), each where it is and moved by every far offset of tests/scenes.h;
 * random, axis-aligned, grazing, starting in contact, lying parallel to faces and to edges, of zero
 * length (the sphere sweeps' answers, exactly) and of zero radius (segments), tmax 0 and infinite;
 * closest and any hit. Checked: a hit's t within the tolerance of bvh.h of its primitive's first
 * contact and never later, a closest hit never later than the first contact over all primitives,
 * a hit or miss that differs from the oracle only where the capsule grown or shrunk by the
 * tolerance says it grazes; contacts on the primitive, at the radius from the segment, with unit
 * normals facing against the sweep. Batched (plain and on caller scratch, prefixes), single and on
 * a context (the default pool, 1 and 3 workers: identical answers, and those of the serial form
 * block by block); invalid sweeps in batches; bad arguments; no allocation. */
#include <float.h>

#include "bvh/engine/blocks.h"
#include "capsule_oracle.h"
#include "capsule_scenes.h"
#include "scenes.h"
#include "sweep_oracle.h"
#include "test_alloc.h"
#include "test_util.h"

static co_prim prim_of(const o_scene* s, uint32_t i) {
    co_prim p;
    memset(&p, 0, sizeof p);
    if (s->boxes)
        p.box = &s->boxes[i];
    else
        memcpy(p.v, s->tri[i], sizeof p.v);
    return p;
}

/* A lower bound of the first contact of q with primitive i: the entry of the segment's box's centre,
 * moving along d, into the primitive's box grown by the segment box's half extents and a margin;
 * -1 when it never enters. */
static double o_lower(const void* qv, const o_scene* s, uint32_t i, double grow) {
    const co_capsule* q = qv;
    double mn[3], mx[3], c[3], e[3];
    so_prim_box(s, i, mn, mx);
    for (int k = 0; k < 3; k++) c[k] = 0.5 * (q->a[k] + q->b[k]), e[k] = 0.5 * fabs(q->b[k] - q->a[k]) + q->r + grow;
    return so_entry(mn, mx, c, e, q->d, q->tmax);
}

static double q_size(const co_capsule* q) { return q->r + co_half(q); }

static double q_scale(const co_capsule* q) {
    double m = 0.0;
    for (int k = 0; k < 3; k++) m = fmax(m, fmax(fabs(q->a[k]), fabs(q->b[k])) + q->r);
    return m;
}

/* The first contact of q with primitive i (-1 on a miss). A segment (radius 0) touches where its
 * distance falls to what is zero up to the oracle's rounding: 2^-42 of the pair's size and the
 * distance between them, which the distances it combines are within. */
static double o_time(const co_capsule* q, const o_scene* s, uint32_t i) {
    co_prim p = prim_of(s, i);
    double closest;
    const double eps = q->r == 0.0 ? 0x1p-42 * (co_dist_at(&p, q, 0.0) + q_size(q) + co_prim_size(&p)) : 0.0;
    return co_time(&p, q, 4.0 * s->scale + q_scale(q), eps, &closest);
}

static double o_time_of(const void* q, const o_scene* s, uint32_t i) { return o_time(q, s, i); }

/* The first contact T over all primitives (INFINITY: none) and its primitive (sweep_oracle.h). */
static double o_first(const co_capsule* q, const o_scene* s, uint32_t* prim) {
    const double grow = 1e-3 * q_size(q) + 0x1p-40 * (s->scale + 1.0);
    return so_first(q, s, grow, o_lower, o_time_of, prim);
}

/* The tolerance of bvh.h as a distance, for q against primitive i at time T: VL_SWEEP_TOLERANCE
 * of the capsule's size (r + h), the triangle's and the travel. */
static double tol_dist(const co_capsule* q, const o_scene* s, uint32_t i, double T) {
    co_prim p = prim_of(s, i);
    const double S = q_size(q) + (i == VL_NO_HIT ? 0.0 : co_prim_size(&p));
    return VL_SWEEP_TOLERANCE * (S + sqrt(co_dot(q->d, q->d)) * fmax(T, 0.0));
}

static co_capsule grown(const co_capsule* q, double g) {
    co_capsule r = *q;
    r.r = fmax(0.0, r.r + g);
    return r;
}

/* ---- checks ------------------------------------------------------------------------------- */

static const char* g_what = "";
static uint64_t g_hits, g_checked, g_thin_misses;

/* The oracle's first contact of one sweep, found once for its several answers. */
typedef struct o_answer {
    double T;
    uint32_t prim;
} o_answer;

/* One answer (contact may be NULL) against the oracle; closest or any. */
static void check_answer(const co_capsule* q, const o_scene* s, const o_answer* oa, vl_hit hit,
                         const vl_contact* contact, int any, uint32_t index) {
    const double T = oa->T, dl = sqrt(co_dot(q->d, q->d));
    g_checked++;
    if (hit.prim == VL_NO_HIT) {
        CHECK(hit.t == INFINITY, "%s %u: miss with t %g", g_what, index, hit.t);
        if (oa->prim != VL_NO_HIT) { /* only a graze may be missed: the shrunk capsule misses */
            const double g = 2.0 * tol_dist(q, s, oa->prim, T);
            if (q->r < g) {
                g_thin_misses++; /* a segment's graze: nothing to shrink */
                return;
            }
            co_capsule in = grown(q, -g);
            CHECK(o_time(&in, s, oa->prim) < 0.0, "%s %u: missed prim %u at T %.9g", g_what, index, oa->prim, T);
        }
        return;
    }
    g_hits++;
    CHECK(hit.prim < s->count, "%s %u: prim %u", g_what, index, hit.prim);
    if (hit.prim >= s->count) return;
    CHECK(hit.t >= 0.0f && hit.t <= q->tmax, "%s %u: t %g outside [0, %g]", g_what, index, hit.t, q->tmax);
    const double Tp = o_time(q, s, hit.prim);
    const double tol = tol_dist(q, s, hit.prim, Tp >= 0.0 ? Tp : hit.t) / dl;
    const double slack = 0x1p-40 * (s->scale + q_scale(q) + 1.0) / dl;
    if (Tp >= 0.0) {
        CHECK(hit.t <= Tp + slack, "%s %u: prim %u t %.9g later than its contact %.9g", g_what, index, hit.prim, hit.t, Tp);
        CHECK(hit.t >= Tp - tol, "%s %u: prim %u t %.9g too early: contact %.9g, tol %.3g", g_what, index, hit.prim,
              hit.t, Tp, tol);
    } else { /* a graze: the grown capsule hits */
        co_capsule out = grown(q, 2.0 * tol_dist(q, s, hit.prim, hit.t));
        co_prim p = prim_of(s, hit.prim);
        double closest;
        CHECK(co_time(&p, &out, 4.0 * s->scale + q_scale(q), 0.0, &closest) >= 0.0,
              "%s %u: prim %u hit at %.9g, the oracle misses it",
              g_what, index, hit.prim, hit.t);
    }
    if (!any && oa->prim != VL_NO_HIT)
        CHECK(hit.t <= T + slack, "%s %u: t %.9g (prim %u) later than the first contact %.9g (prim %u)", g_what, index,
              hit.t, hit.prim, T, oa->prim);
    if (!s->boxes) CHECK(isfinite(hit.u) && isfinite(hit.v), "%s %u: u v", g_what, index);
    if (!contact) return;
    const float* n = contact->normal;
    const double nl = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
    const double nd = (double)n[0] * q->d[0] + (double)n[1] * q->d[1] + (double)n[2] * q->d[2];
    CHECK(fabs(nl - 1.0) < 1e-5, "%s %u: |normal| %.9g", g_what, index, nl);
    CHECK(nd <= 1e-6 * dl, "%s %u: normal . dir %.3g", g_what, index, nd);
    /* on the primitive, at the radius from the segment at t: the tolerance, and the rounding of
     * the point to float (2^-24 of its coordinates) */
    double p[3], round = 0.0, o[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) p[k] = contact->point[k], round = fmax(round, 0x1p-22 * fabs(p[k]));
    const double td = tol_dist(q, s, hit.prim, hit.t);
    co_prim pr = prim_of(s, hit.prim);
    co_local l = co_local_of(&pr, o);
    const double on = sqrt(co_point2(&l, p));
    CHECK(on <= 4.0 * td + round, "%s %u: contact %.3g from the primitive", g_what, index, on);
    if (hit.t > 0.0f) {
        double a[3], b[3];
        for (int k = 0; k < 3; k++) a[k] = q->a[k] + (double)hit.t * q->d[k], b[k] = q->b[k] + (double)hit.t * q->d[k];
        const double cd = sqrt(co_point_segment2(p, a, b));
        CHECK(fabs(cd - q->r) <= 4.0 * td + round, "%s %u: contact %.9g from the segment, radius %.9g", g_what, index,
              cd, q->r);
    }
}

/* The sweeps on a context of the default pool with `workers` workers. */
static vl_status on_pool(const vl_bvh* bvh, const vl_capsule_sweep* s, uint32_t n, uint32_t flags, uint32_t workers,
                         vl_hit* hits, vl_contact* contacts) {
    vl_thread_pool* pool = NULL;
    vl_context* ctx = NULL;
    if (vl_thread_pool_create(workers, &pool) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    vl_task_system ts = vl_thread_pool_get_task_system(pool);
    vl_status st = vl_context_create(&ts, &ctx);
    if (st == VL_OK) st = vl_bvh_sweep_capsules(bvh, s, n, flags, hits, contacts, &(vl_exec){.context = ctx});
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
    return st;
}

/* The serial form over the blocks a context cuts the batch into. */
static void by_blocks(const vl_bvh* bvh, const vl_capsule_sweep* s, uint32_t n, uint32_t flags, vl_hit* hits,
                      vl_contact* contacts) {
    uint32_t block = vl_bvh_parallel_query_block(n);
    if (block > n) block = n;
    for (uint32_t b = 0; b < vl_bvh_block_count(n, block); b++) {
        uint32_t first, m = vl_bvh_block_at(n, block, b, &first);
        vl_bvh_sweep_capsules(bvh, s + first, m, flags, hits + first, contacts + first, NULL);
    }
}

/* Sweeps batched, single, on scratch and on contexts, against the oracle. */
static void check_sweeps(const vl_bvh* bvh, const o_scene* s, const vl_capsule_sweep* sw, uint32_t n, const char* what) {
    g_what = what;
    int any_invalid = 0;
    for (uint32_t i = 0; i < n; i++) any_invalid |= !co_sweep_valid(&sw[i]);
    const vl_status expect = any_invalid ? VL_ERR_INVALID_QUERY : VL_OK;
    vl_hit* hits = malloc(sizeof(vl_hit) * n * 4);
    vl_contact* contacts = malloc(sizeof(vl_contact) * n * 3);
    o_answer* oa = malloc(sizeof(o_answer) * n);
    for (uint32_t i = 0; i < n; i++) {
        oa[i].T = INFINITY, oa[i].prim = VL_NO_HIT;
        if (co_sweep_valid(&sw[i])) {
            co_capsule q = co_of_sweep(&sw[i]);
            oa[i].T = o_first(&q, s, &oa[i].prim);
        }
    }
    char scratch[256];
    for (int any = 0; any < 2; any++) {
        const uint32_t flags = any ? VL_QUERY_ANY : VL_QUERY_CLOSEST;
        vl_status st = vl_bvh_sweep_capsules(bvh, sw, n, flags, hits, contacts, NULL);
        CHECK(st == expect, "%s: batch status %s", what, vl_status_string(st));
        st = vl_bvh_sweep_capsules(bvh, sw, n, flags, hits + n, contacts + n,
                                   &(vl_exec){.scratch = scratch, .scratch_bytes = sizeof scratch});
        CHECK(st == expect, "%s: scratch status %s", what, vl_status_string(st));
        CHECK(!memcmp(hits, hits + n, sizeof(vl_hit) * n) && !memcmp(contacts, contacts + n, sizeof(vl_contact) * n),
              "%s: plain and scratch answers differ", what);
        for (uint32_t i = 0; i < n; i++) {
            vl_contact c1;
            vl_hit h1;
            st = vl_bvh_sweep_capsules(bvh, &sw[i], 1, flags, &h1, &c1, NULL);
            const int valid = co_sweep_valid(&sw[i]);
            CHECK(st == (valid ? VL_OK : VL_ERR_INVALID_QUERY), "%s %u: single status %s", what, i, vl_status_string(st));
            if (!valid) {
                CHECK(hits[i].prim == VL_NO_HIT && hits[i].t == INFINITY && h1.prim == VL_NO_HIT, "%s %u: invalid hit",
                      what, i);
                continue;
            }
            co_capsule q = co_of_sweep(&sw[i]);
            check_answer(&q, s, &oa[i], hits[i], &contacts[i], any, i);
            if (!any) {
                check_answer(&q, s, &oa[i], h1, &c1, 0, i);
                CHECK(so_same_answer(hits[i], h1), "%s %u: batch prim %u t %.9g, single prim %u t %.9g", what, i,
                      hits[i].prim, hits[i].t, h1.prim, h1.t);
            } else {
                CHECK((hits[i].prim == VL_NO_HIT) == (h1.prim == VL_NO_HIT), "%s %u: any hit differs", what, i);
            }
        }
        /* contexts: 1 and 3 workers identical, and identical to the serial form block by block */
        st = on_pool(bvh, sw, n, flags, 1, hits + n, contacts + n);
        CHECK(st == expect, "%s: context status %s", what, vl_status_string(st));
        vl_status st3 = on_pool(bvh, sw, n, flags, 3, hits + 2 * n, contacts + 2 * n);
        CHECK(st3 == expect, "%s: 3 workers status %s", what, vl_status_string(st3));
        CHECK(!memcmp(hits + n, hits + 2 * n, sizeof(vl_hit) * n) &&
                  !memcmp(contacts + n, contacts + 2 * n, sizeof(vl_contact) * n),
              "%s: 1 and 3 workers differ", what);
        by_blocks(bvh, sw, n, flags, hits + 3 * n, contacts);
        CHECK(!memcmp(hits + n, hits + 3 * n, sizeof(vl_hit) * n), "%s: context and serial blocks differ", what);
        for (uint32_t i = 0; i < n; i++)
            CHECK(any ? (hits[i].prim == VL_NO_HIT) == (hits[n + i].prim == VL_NO_HIT) : so_same_answer(hits[i], hits[n + i]),
                  "%s %u: batch and context differ", what, i);
    }
    /* prefixes answer as the whole batch */
    static const uint32_t sizes[] = {1, 3, 65};
    vl_status st = vl_bvh_sweep_capsules(bvh, sw, n, 0, hits, NULL, NULL);
    (void)st;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const uint32_t m = sizes[k] < n ? sizes[k] : n;
        vl_bvh_sweep_capsules(bvh, sw, m, 0, hits + n, NULL, NULL);
        for (uint32_t i = 0; i < m; i++) CHECK(so_same_answer(hits[i], hits[n + i]), "%s: prefix of %u, sweep %u", what, m, i);
    }
    free(hits), free(contacts), free(oa);
}

/* Zero-length capsule sweeps answer as the sphere sweeps they are, every bit. */
static void check_as_spheres(const vl_bvh* bvh, const vl_capsule_sweep* sw, uint32_t n, const char* what) {
    vl_capsule_sweep* c = malloc(sizeof(vl_capsule_sweep) * n);
    vl_sphere_sweep* s = malloc(sizeof(vl_sphere_sweep) * n);
    vl_hit* h = malloc(sizeof(vl_hit) * 2 * n);
    vl_contact* k = malloc(sizeof(vl_contact) * 2 * n);
    for (uint32_t i = 0; i < n; i++) {
        c[i] = sw[i];
        for (int a = 0; a < 3; a++)
            c[i].capsule.b[a] = c[i].capsule.a[a], s[i].center[a] = c[i].capsule.a[a], s[i].dir[a] = sw[i].dir[a];
        s[i].radius = sw[i].capsule.radius, s[i].tmax = sw[i].tmax;
    }
    for (uint32_t flags = 0; flags < 2; flags++) {
        vl_status a = vl_bvh_sweep_capsules(bvh, c, n, flags, h, k, NULL);
        vl_status b = vl_bvh_sweep_spheres(bvh, s, n, flags, h + n, k + n, NULL);
        CHECK(a == b, "%s: zero-length capsules %s, spheres %s", what, vl_status_string(a), vl_status_string(b));
        CHECK(!memcmp(h, h + n, sizeof(vl_hit) * n) && !memcmp(k, k + n, sizeof(vl_contact) * n),
              "%s: zero-length capsules and spheres answer differently", what);
    }
    free(c), free(s), free(h), free(k);
}

/* ---- scenes ------------------------------------------------------------------------------- */

/* Sweeps near a mesh at the scale of `size`: from random points in its bounds toward random
 * points, some axis-aligned, some tmax 0 or infinite, some starting on a vertex (in contact), some
 * of zero length, some of zero radius; and built against a random triangle: lying parallel to its
 * face and falling onto it, parallel to an edge and moving onto it, an end moving onto a vertex,
 * sliding along the face at the radius (grazing). */
static void make_sweeps(const scene_mesh* m, uint32_t n, float size, uint64_t seed, vl_capsule_sweep* out) {
    test_rng rng = {seed};
    float extent = 0.0f;
    for (int a = 0; a < 3; a++) extent += m->hi[a] - m->lo[a];
    for (uint32_t i = 0; i < n; i++) {
        double v[3][3], e1[3], e2[3], nrm[3], p[3], u[3], c[3], d[3];
        scene_random_spot(m, &rng, v, e1, e2, nrm, p);
        double r = size * test_float(&rng, 0.05f, 1.2f), h = size * test_float(&rng, 0.0f, 1.5f), tmax = 1.0;
        for (int a = 0; a < 3; a++) u[a] = test_float(&rng, -1.0f, 1.0f);
        scene_unit(u);
        const double side = (i & 1) ? 1.0 : -1.0, away = size * test_float(&rng, 0.5f, 3.0f);
        switch (i % 6) {
        case 0: { /* random */
            for (int a = 0; a < 3; a++) {
                const float pad = 0.1f * (m->hi[a] - m->lo[a]) + size;
                c[a] = test_float(&rng, m->lo[a] - pad, m->hi[a] + pad);
                d[a] = test_float(&rng, -1.0f, 1.0f);
            }
            if (i % 30 == 6) { /* along an axis */
                const int ax = (int)test_u32(&rng, 3);
                d[0] = d[1] = d[2] = 0.0, d[ax] = (i & 64) ? 1.0 : -1.0;
            }
            if (i % 42 == 12) { /* starting at a vertex */
                const uint32_t vx = test_u32(&rng, m->vertex_count);
                for (int a = 0; a < 3; a++) c[a] = m->xyz[3 * (size_t)vx + a];
            }
            const double sc = test_float(&rng, 0.1f, 3.0f);
            for (int a = 0; a < 3; a++) d[a] *= sc;
            tmax = test_float(&rng, 0.0f, 2.0f * extent / (float)sc);
            if (i % 78 == 18) tmax = 0.0;
            if (i % 54 == 24) tmax = INFINITY;
            break;
        }
        case 1: /* lying parallel to the face, falling onto it */
            for (int a = 0; a < 3; a++) u[a] -= co_dot(u, nrm) * nrm[a];
            scene_unit(u);
            for (int a = 0; a < 3; a++) c[a] = p[a] + side * nrm[a] * (r + away), d[a] = -side * nrm[a] * away * 1.5;
            break;
        case 2: { /* parallel to an edge, moving onto it across */
            const int j = (int)test_u32(&rng, 3);
            double E[3], x[3];
            for (int a = 0; a < 3; a++) E[a] = v[(j + 1) % 3][a] - v[j][a], u[a] = E[a];
            scene_unit(u);
            for (int a = 0; a < 3; a++) x[a] = test_float(&rng, -1.0f, 1.0f);
            const double k = co_dot(x, u);
            for (int a = 0; a < 3; a++) x[a] -= k * u[a];
            scene_unit(x);
            for (int a = 0; a < 3; a++)
                c[a] = v[j][a] + 0.5 * E[a] + x[a] * (r + away), d[a] = -x[a] * away * 1.5 + 0.1 * u[a] * away;
            h = 0.5 * sqrt(co_dot(E, E)) * test_float(&rng, 0.3f, 1.5f);
            break;
        }
        case 3: { /* an end moving onto a vertex */
            const int j = (int)test_u32(&rng, 3);
            for (int a = 0; a < 3; a++) c[a] = v[j][a] + u[a] * (h + r + away), d[a] = -u[a] * away * 1.5;
            break;
        }
        case 4: /* sliding along the face at the radius (a graze), at the radius exactly or off it */
            for (int a = 0; a < 3; a++) u[a] -= co_dot(u, nrm) * nrm[a];
            scene_unit(u);
            for (int a = 0; a < 3; a++) {
                const double off = r * (1.0 + ((i / 6) % 3 == 0 ? 0.0 : (i / 6) % 3 == 1 ? 1e-3 : -1e-3));
                c[a] = p[a] + side * nrm[a] * off - e1[a], d[a] = 2.0 * e1[a];
            }
            break;
        default: /* a segment (zero radius) or a sphere (zero length), onto the face */
            if (i % 12 == 5)
                r = 0.0;
            else
                h = 0.0;
            for (int a = 0; a < 3; a++) c[a] = p[a] + side * nrm[a] * (r + h + away) + u[a] * 0.1 * size;
            for (int a = 0; a < 3; a++) d[a] = -side * nrm[a] * away * 1.5 + 0.3 * size * test_float(&rng, -1.0f, 1.0f);
            break;
        }
        vl_capsule_sweep* s = &out[i];
        for (int a = 0; a < 3; a++) {
            s->capsule.a[a] = (float)(c[a] - h * u[a]), s->capsule.b[a] = (float)(c[a] + h * u[a]);
            s->dir[a] = (float)d[a];
        }
        if (h == 0.0)
            for (int a = 0; a < 3; a++) s->capsule.b[a] = s->capsule.a[a];
        if (!(fabsf(s->dir[0]) + fabsf(s->dir[1]) + fabsf(s->dir[2]) >= FLT_MIN)) s->dir[0] = size;
        s->capsule.radius = (float)r, s->tmax = (float)tmax;
    }
}

/* Invalid sweeps among valid ones. */
static void spoil(vl_capsule_sweep* s, uint32_t n) {
    for (uint32_t i = 7; i < n; i += 41) {
        switch ((i / 41) % 7) {
        case 0: s[i].capsule.radius = NAN; break;
        case 1: s[i].capsule.radius = -1.0f; break;
        case 2: s[i].capsule.a[0] = INFINITY; break;
        case 3: s[i].capsule.b[2] = NAN; break;
        case 4: s[i].dir[0] = s[i].dir[1] = s[i].dir[2] = 0.0f; break;
        case 5: s[i].tmax = -1.0f; break;
        default: s[i].dir[1] = NAN; break;
        }
    }
}

static void check_mesh_at(const scene_mesh* m, uint32_t n, float size, uint64_t seed, uint32_t leaf, const char* name) {
    tri_scene t;
    CHECK(tri_scene_make(m, &t, leaf), "%s: build", name);
    if (!t.bvh) return;
    vl_capsule_sweep* sw = malloc(sizeof(vl_capsule_sweep) * n);
    make_sweeps(m, n, size, seed, sw);
    spoil(sw, n);
    check_sweeps(t.bvh, &t.o, sw, n, name);
    check_as_spheres(t.bvh, sw, n, name);
    free(sw);
    tri_scene_free(&t);
}

/* The mesh where it is, then moved by each far offset with a sixth of the sweeps. */
static void check_mesh(const scene_mesh* m, uint32_t n, float size, uint64_t seed, uint32_t leaf, const char* name) {
    so_check_offsets(m, n, 12, size, seed, leaf, name, check_mesh_at);
}

static void test_soups(void) {
    scene_mesh m;
    CHECK(scene_soup(test_scaled(400), 10.0f, 0.8f, 31, &m), "soup");
    scene_zero_area(&m, 60, 0); /* zero area: collinear corners */
    check_mesh(&m, test_scaled(240), 0.5f, 32, 4, "soup");
    check_mesh(&m, test_scaled(60), 0.5f, 33, 1, "soup leaf 1");
    scene_free(&m);
    CHECK(scene_soup(test_scaled(200), 1000.0f, 30.0f, 34, &m), "far soup");
    check_mesh(&m, test_scaled(60), 20.0f, 35, 8, "large soup");
    scene_free(&m);
}

static void test_world(void) {
    scene_mesh m;
    if (!scene_world(16, 6, 0, 41, &m)) return;
    check_mesh(&m, test_scaled(240), 0.5f, 42, 8, "world");
    scene_free(&m);
}

/* The bench's sweeps (capsule_scenes.h) on a terrain world at every offset. */
static void test_bench_sweeps(void) {
    scene_mesh m;
    if (!scene_world(20, 10, 0, 80, &m)) return;
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh moved;
        char what[80];
        if (!scene_copy_moved_named(&m, k, "bench sweeps", &moved, what, sizeof what)) continue;
        tri_scene t;
        CHECK(tri_scene_make(&moved, &t, 8), "bench world build");
        const uint32_t n = test_scaled(k ? 60 : 240);
        vl_capsule_sweep* sw = malloc(sizeof(vl_capsule_sweep) * n);
        scene_capsule_sweeps(&moved, n, 90 + k, sw);
        if (t.bvh) check_sweeps(t.bvh, &t.o, sw, n, what), tri_scene_free(&t);
        free(sw);
        scene_free(&moved);
    }
    scene_free(&m);
}

static void test_real_meshes(void) { so_real_meshes("test_sweeps_capsules", check_mesh); }

/* A tree of random boxes (flat ones, an infinite slab, an unbounded corner) moved by
 * scene_offset(k), and sweeps moved alike. */
static void test_boxes(uint32_t k) {
    const uint32_t nb = test_scaled(k ? 120 : 300) + 2;
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * nb);
    test_rng rng = {61 + k};
    scene_box_tree(nb - 2, 161 + k, k, boxes);
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_boxes(boxes, nb, NULL, &bvh, NULL) == VL_OK, "box tree");
    float v[3];
    scene_offset_vector(scene_offset(k), v);
    o_scene s = {NULL, boxes, nb, 104.0 + fabs(scene_offset(k))};
    const uint32_t n = test_scaled(k ? 60 : 240);
    vl_capsule_sweep* sw = malloc(sizeof(vl_capsule_sweep) * n);
    for (uint32_t i = 0; i < n; i++) {
        const vl_aabb* b = &boxes[test_u32(&rng, nb - 2)];
        float c[3], u[3], d[3], r = test_float(&rng, 0.05f, 3.0f), h = test_float(&rng, 0.0f, 4.0f);
        scene_direction(&rng, u);
        scene_direction(&rng, d);
        for (int a = 0; a < 3; a++) c[a] = v[a] + test_float(&rng, -20, 130);
        const int ax = (int)(i % 3);
        switch (i % 5) {
        case 1: /* lying along a face, falling onto it */
            for (int a = 0; a < 3; a++) c[a] = 0.5f * (b->min[a] + b->max[a]), d[a] = 0.0f;
            c[ax] = b->max[ax] + r + 3.0f, u[ax] = 0.0f, d[ax] = -1.0f;
            break;
        case 2: /* parallel to an edge, moving onto it */
            for (int a = 0; a < 3; a++) c[a] = b->max[a], u[a] = 0.0f, d[a] = 0.0f;
            u[ax] = 1.0f;
            c[(ax + 1) % 3] += r + 2.0f, c[(ax + 2) % 3] += 2.0f;
            d[(ax + 1) % 3] = -1.0f, d[(ax + 2) % 3] = -1.0f;
            break;
        case 3: /* onto the infinite slab */
            c[1] = v[1] - 10.0f + r + h + 5.0f, d[1] = -1.0f;
            break;
        default: break;
        }
        if (i % 13 == 0) h = 0.0f;
        if (i % 23 == 0) r = 0.0f;
        sw[i].capsule = scene_capsule(c, u, h, r);
        for (int a = 0; a < 3; a++) sw[i].dir[a] = d[a] * 4.0f;
        sw[i].tmax = i % 17 == 0 ? INFINITY : test_float(&rng, 0.0f, 40.0f);
    }
    spoil(sw, n);
    char what[80];
    snprintf(what, sizeof what, "box tree at %g", scene_offset(k));
    check_sweeps(bvh, &s, sw, n, what);
    check_as_spheres(bvh, sw, n, what);
    free(sw);
    vl_bvh_destroy(bvh);
    free(boxes);
}

/* Exact contacts on one triangle: lying flat onto the face, its side onto an edge, an end onto
 * the face and onto a vertex, a segment through the face, touching at the start. */
static void test_one_triangle(void) {
    float xyz[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "one triangle");
    vl_hit h;
    vl_contact c;
    /* lying flat, falling from z = 5 with radius 1: t = 4 */
    vl_capsule_sweep s = {{{0.5f, 0.5f, 5}, 1, {1.5f, 1.5f, 5}}, {0, 0, -1}, 10};
    CHECK(vl_bvh_sweep_capsules(bvh, &s, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "flat onto the face");
    CHECK(h.t <= 4.0f && h.t >= 4.0f - 1e-5f, "flat t %.9g", h.t);
    CHECK(fabsf(c.normal[2] - 1.0f) < 1e-6f && fabsf(c.point[2]) < 1e-5f, "flat contact (%g %g %g) n (%g %g %g)",
          c.point[0], c.point[1], c.point[2], c.normal[0], c.normal[1], c.normal[2]);
    /* standing, an end onto the face: t = 4 - 1 */
    vl_capsule_sweep se = {{{1, 1, 5}, 1, {1, 1, 7}}, {0, 0, -1}, 10};
    CHECK(vl_bvh_sweep_capsules(bvh, &se, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "end onto the face");
    CHECK(h.t <= 4.0f && h.t >= 4.0f - 1e-5f, "end t %.9g", h.t);
    CHECK(fabsf(c.point[0] - 1) < 1e-5f && fabsf(c.point[1] - 1) < 1e-5f && fabsf(c.point[2]) < 1e-5f,
          "end contact (%g %g %g)", c.point[0], c.point[1], c.point[2]);
    CHECK(fabsf(h.u - 0.25f) < 1e-5f && fabsf(h.v - 0.25f) < 1e-5f, "end u %g v %g", h.u, h.v);
    /* across the hypotenuse x + y = 4 in the plane z = 0.5, radius 1, its side first: the segment
     * parallel to the edge, moving along (-1, -1, 0) from 2 sqrt 2 + 1 + 1 away */
    vl_capsule_sweep sx = {{{5, 3, 0.5f}, 1, {3, 5, 0.5f}}, {-1, -1, 0}, 10};
    CHECK(vl_bvh_sweep_capsules(bvh, &sx, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "side onto the edge");
    const float want = (float)((4.0 - 2.0 * sqrt(0.75 / 2.0)) / 2.0); /* distance sqrt(1 - 0.25) in the plane */
    CHECK(h.t <= want && h.t >= want - 1e-5f, "side t %.9g, want %.9g", h.t, want);
    CHECK(fabsf(c.point[0] + c.point[1] - 4.0f) < 1e-4f && fabsf(c.point[2]) < 1e-5f, "side contact (%g %g %g)",
          c.point[0], c.point[1], c.point[2]);
    /* a segment crossing the edge x = 0 (from x < 0), perpendicular to it: its body meets the
     * edge at t = 2 */
    vl_capsule_sweep sv = {{{-2, 1, -1}, 0, {-2, 1, 1}}, {1, 0, 0}, 10};
    CHECK(vl_bvh_sweep_capsules(bvh, &sv, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "segment onto an edge");
    CHECK(h.t <= 2.0f && h.t >= 2.0f - 1e-5f, "segment t %.9g", h.t);
    CHECK(fabsf(c.point[0]) < 1e-5f && fabsf(c.point[1] - 1) < 1e-5f, "segment contact (%g %g %g)", c.point[0],
          c.point[1], c.point[2]);
    /* an end onto the vertex (4, 0, 0) along -x, radius 0.5 at height 0: t = 10 - 4 - 0.5 */
    vl_capsule_sweep sp = {{{10, 0, 0}, 0.5f, {13, 0, 0}}, {-1, 0, 0}, 20};
    CHECK(vl_bvh_sweep_capsules(bvh, &sp, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "end onto a vertex");
    CHECK(h.t <= 5.5f && h.t >= 5.5f - 1e-5f, "vertex t %.9g", h.t);
    CHECK(fabsf(c.point[0] - 4) < 1e-5f && fabsf(c.normal[0] - 1) < 1e-5f, "vertex contact (%g %g %g)", c.point[0],
          c.point[1], c.point[2]);
    /* touching at the start, moving away: t = 0, the normal without a component along dir */
    vl_capsule_sweep s0 = {{{1, 1, 0.5f}, 1, {2, 1, 0.5f}}, {0, 0, 1}, 10};
    CHECK(vl_bvh_sweep_capsules(bvh, &s0, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0 && h.t == 0.0f, "start in contact");
    CHECK(c.normal[2] <= 0.0f, "start normal (%g %g %g)", c.normal[0], c.normal[1], c.normal[2]);
    /* through the face at the start (a segment): t = 0, deep: -dir */
    vl_capsule_sweep sd = {{{1, 1, -1}, 0, {1, 1, 1}}, {0, 1, 0}, 10};
    CHECK(vl_bvh_sweep_capsules(bvh, &sd, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0 && h.t == 0.0f, "through");
    CHECK(fabsf(c.normal[1] + 1.0f) < 1e-6f, "through normal (%g %g %g)", c.normal[0], c.normal[1], c.normal[2]);
    /* parallel to the face just above the radius, sliding: a miss; tmax 0 apart: a miss */
    vl_capsule_sweep sg = {{{-3, 1, 1.001f}, 1, {-2, 1, 1.001f}}, {1, 0, 0}, 10};
    CHECK(vl_bvh_sweep_capsules(bvh, &sg, 1, 0, &h, &c, NULL) == VL_OK && h.prim == VL_NO_HIT, "slide above");
    vl_capsule_sweep sz = {{{1, 1, 5}, 1, {1, 2, 5}}, {0, 0, -1}, 0};
    CHECK(vl_bvh_sweep_capsules(bvh, &sz, 1, 0, &h, &c, NULL) == VL_OK && h.prim == VL_NO_HIT, "tmax 0 miss");
    vl_bvh_destroy(bvh);
}

/* Invalid sweeps in a batch, bad arguments, scratch, allocation. */
static void test_api(void) {
    float xyz[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "build");
    enum { N = 24 };
    vl_capsule_sweep s[N];
    for (int i = 0; i < N; i++) s[i] = (vl_capsule_sweep){{{1, 1, 5}, 1, {1.5f, 1, 6}}, {0, 0, -1}, 10};
    s[1].capsule.a[0] = NAN, s[2].capsule.radius = -1, s[3].dir[0] = s[3].dir[1] = s[3].dir[2] = 0;
    s[4].dir[2] = NAN, s[5].dir[2] = -INFINITY, s[6].tmax = -1, s[7].tmax = NAN, s[8].capsule.radius = NAN;
    s[9].capsule.b[2] = INFINITY, s[10].dir[2] = -1e-40f, s[11].capsule.radius = INFINITY;
    vl_hit hits[N];
    vl_contact contacts[N];
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, 0, hits, contacts, NULL) == VL_ERR_INVALID_QUERY, "invalid");
    for (int i = 0; i < N; i++) {
        const int bad = i >= 1 && i <= 11;
        CHECK(bad ? hits[i].prim == VL_NO_HIT && hits[i].t == INFINITY && contacts[i].normal[2] == 0.0f : hits[i].prim == 0,
              "sweep %d", i);
    }
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, VL_QUERY_ANY, hits, NULL, NULL) == VL_ERR_INVALID_QUERY, "invalid, any");
    vl_hit h;
    CHECK(vl_bvh_sweep_capsules(bvh, &s[2], 1, 0, &h, NULL, NULL) == VL_ERR_INVALID_QUERY && h.prim == VL_NO_HIT,
          "single invalid");
    CHECK(vl_bvh_sweep_capsules(NULL, s, N, 0, hits, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_sweep_capsules(bvh, NULL, N, 0, hits, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL sweeps");
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, 0, NULL, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
    CHECK(vl_bvh_sweep_capsules(bvh, NULL, 0, 0, NULL, NULL, NULL) == VL_OK, "count 0");
    for (int i = 0; i < N; i++) hits[i].prim = 77;
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, 8, hits, NULL, NULL) == VL_ERR_INVALID_FLAGS && hits[0].prim == 77, "flags");
    vl_context* ctx = NULL;
    CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    char mem[64];
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, 0, hits, contacts,
                                &(vl_exec){.context = ctx, .scratch = mem, .scratch_bytes = sizeof mem}) ==
              VL_ERR_INVALID_ARGUMENT && hits[0].prim == 77,
          "context and scratch");
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, 0, hits, contacts, &(vl_exec){.context = ctx}) == VL_ERR_INVALID_QUERY &&
              hits[0].prim == 0,
          "serial context");
    vl_context_destroy(ctx);
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, 0, hits, contacts, &(vl_exec){.scratch = mem + 4, .scratch_bytes = 1}) ==
              VL_ERR_INVALID_QUERY, "any scratch");
    CHECK(vl_bvh_sweep_capsules(bvh, s, N, 0, hits, contacts, NULL) == VL_ERR_INVALID_QUERY, "plain");
    CHECK(vl_bvh_sweep_capsules(bvh, &s[0], 1, 0, &h, contacts, NULL) == VL_OK, "single");
    CHECK(hooks.allocs == 0, "allocated %ld times", hooks.allocs);
    test_alloc_end(&hooks);
    vl_bvh_destroy(bvh);
}

int main(void) {
    test_one_triangle();
    test_api();
    test_soups();
    test_world();
    test_bench_sweeps();
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) test_boxes(k);
    test_real_meshes();
    printf("test_sweeps_capsules: %llu answers checked, %llu hits, %llu misses of segments' grazes\n",
           (unsigned long long)g_checked, (unsigned long long)g_hits, (unsigned long long)g_thin_misses);
    CHECK(g_thin_misses * 100 <= g_checked, "%llu of %llu answers missed a segment's contact",
          (unsigned long long)g_thin_misses, (unsigned long long)g_checked);
    return test_finish("test_sweeps_capsules");
}
