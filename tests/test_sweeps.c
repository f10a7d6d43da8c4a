/* Sphere and box sweeps against brute force: triangle soups (degenerate triangles mixed in), a
 * terrain world, box trees, the real meshes; random, axis-aligned, grazing, starting in contact,
 * zero-length and infinite sweeps, huge and tiny shapes; closest and any hit; batched (plain and
 * caller scratch, several batch sizes) against single against the oracle; contacts; invalid
 * sweeps mixed in batches; bad arguments and scratch; no allocation on caller scratch.
 *
 * The oracle is independent of the library's kernels, in double precision: a sphere's first
 * contact by golden-section search for the closest approach of the (convex) distance from its
 * centre to the primitive (Ericson's closest point on a triangle, clamping for a box), then
 * bisection of distance = radius; a box's against a triangle by the entry of its centre's ray into
 * the Minkowski sum (the convex hull of the 24 points v_i + corner_j, its facets found by brute
 * force over triples of points); box against box by slabs of the summed box.
 * Checked: t <= T + slack and t >= T - tol (tol of bvh.h, slack 2^-40 of the scale for the
 * oracle's own error); the primitive hit at t (or one at an equal t); a hit or miss that differs
 * from the oracle only where the shape grown or shrunk by tol says the contact is grazing. */
#include <float.h>

#include "distance_oracle.h"
#include "scenes.h"
#include "sweep_oracle.h"
#include "test_alloc.h"
#include "test_util.h"

/* ---- the oracle ---------------------------------------------------------------------------- */

typedef struct o_query {
    int box;
    double c[3], h[3], r, d[3], tmax;
} o_query;

static o_query o_sphere(const vl_sphere_sweep* s) {
    o_query q = {0, {0, 0, 0}, {0, 0, 0}, s->radius, {0, 0, 0}, s->tmax};
    for (int a = 0; a < 3; a++) q.c[a] = s->center[a], q.d[a] = fabsf(s->dir[a]) < FLT_MIN ? 0.0 : s->dir[a];
    return q;
}

static o_query o_box(const vl_box_sweep* s) {
    o_query q = {1, {0, 0, 0}, {0, 0, 0}, 0.0, {0, 0, 0}, s->tmax};
    for (int a = 0; a < 3; a++) {
        q.c[a] = 0.5 * ((double)s->box.min[a] + s->box.max[a]);
        q.h[a] = 0.5 * ((double)s->box.max[a] - s->box.min[a]);
        q.d[a] = fabsf(s->dir[a]) < FLT_MIN ? 0.0 : s->dir[a];
    }
    return q;
}

static double o_dist(const o_scene* s, uint32_t i, const double p[3]) {
    return sqrt(s->tri ? odist_triangle2(p, s->tri[i], NULL) : odist_box2(p, &s->boxes[i]));
}

/* Sphere: the first t with dist(c + t d) <= r, or -1; *closest gets the closest approach. */
static double o_sphere_time(const o_query* q, const o_scene* s, uint32_t i, double* closest) {
    double p[3];
    for (int k = 0; k < 3; k++) p[k] = q->c[k];
    double f0 = o_dist(s, i, p);
    *closest = f0;
    if (f0 <= q->r) return 0.0;
    double dl = sqrt(odist_dot(q->d, q->d));
    double end = q->tmax;
    if (!(end < 1e30)) end = (f0 + q->r + 4.0 * s->scale + 1.0) * 4.0 / dl;
    double a = 0, b = end, g = 0.6180339887498949;
    for (int it = 0; it < 200; it++) {
        double x1 = b - g * (b - a), x2 = a + g * (b - a), p1[3], p2[3];
        for (int k = 0; k < 3; k++) p1[k] = q->c[k] + x1 * q->d[k], p2[k] = q->c[k] + x2 * q->d[k];
        if (o_dist(s, i, p1) <= o_dist(s, i, p2)) b = x2;
        else a = x1;
    }
    double tm = 0.5 * (a + b);
    for (int k = 0; k < 3; k++) p[k] = q->c[k] + tm * q->d[k];
    double fm = o_dist(s, i, p);
    for (int k = 0; k < 3; k++) p[k] = q->c[k] + end * q->d[k];
    double fe = o_dist(s, i, p);
    if (fe < fm) tm = end, fm = fe;
    *closest = fmin(f0, fm);
    if (fm > q->r) return -1.0;
    double lo = 0, hi = tm;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        for (int k = 0; k < 3; k++) p[k] = q->c[k] + mid * q->d[k];
        if (o_dist(s, i, p) <= q->r) hi = mid;
        else lo = mid;
    }
    return hi;
}

/* Box against triangle: the ray of the centre into the convex hull of v_j - c + corner; -1 on a
 * miss, -2 when the hull is flat (nothing to check). */
static double o_box_tri_time(const o_query* q, const double t[3][3]) {
    double P[24][3];
    for (int j = 0; j < 3; j++)
        for (int c = 0; c < 8; c++)
            for (int k = 0; k < 3; k++) P[8 * j + c][k] = t[j][k] - q->c[k] + ((c >> k) & 1 ? q->h[k] : -q->h[k]);
    double lo = 0.0, hi = q->tmax < 1e30 ? q->tmax : INFINITY, mag = 0;
    for (int i = 0; i < 24; i++)
        for (int k = 0; k < 3; k++) mag = fmax(mag, fabs(P[i][k]));
    int facets = 0;
    for (int i = 0; i < 24; i++)
        for (int j = i + 1; j < 24; j++)
            for (int k = j + 1; k < 24; k++) {
                double u[3], v[3], n[3];
                for (int a = 0; a < 3; a++) u[a] = P[j][a] - P[i][a], v[a] = P[k][a] - P[i][a];
                n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
                double nl = sqrt(odist_dot(n, n));
                if (!(nl > 1e-9 * mag * mag)) continue;
                for (int a = 0; a < 3; a++) n[a] /= nl;
                double h = odist_dot(n, P[i]), eps = 1e-12 * mag;
                int above = 0, below = 0;
                for (int m = 0; m < 24 && !(above && below); m++) {
                    double x = odist_dot(n, P[m]) - h;
                    above |= x > eps, below |= x < -eps;
                }
                if (above && below) continue;
                if (!above && !below) return -2.0; /* a flat hull (a point box): no facet bounds its sides */
                if (above)
                    for (int a = 0; a < 3; a++) n[a] = -n[a];
                if (above) h = -h;
                facets++;
                /* half-space n.x <= h, the ray x = t d from the origin */
                double dn = odist_dot(n, q->d);
                if (dn == 0) {
                    if (h < 0) return -1.0;
                } else if (dn > 0) {
                    hi = fmin(hi, h / dn);
                } else {
                    lo = fmax(lo, h / dn);
                }
            }
    if (!facets) return -2.0;
    return lo <= hi ? lo : -1.0;
}

static double o_box_box_time(const o_query* q, const vl_aabb* b) {
    double lo = 0.0, hi = q->tmax < 1e30 ? q->tmax : INFINITY;
    for (int a = 0; a < 3; a++) {
        double mn = b->min[a] - q->h[a] - q->c[a], mx = b->max[a] + q->h[a] - q->c[a];
        if (q->d[a] == 0) {
            if (mn > 0 || mx < 0) return -1.0;
            continue;
        }
        double t1 = mn / q->d[a], t2 = mx / q->d[a];
        lo = fmax(lo, fmin(t1, t2)), hi = fmin(hi, fmax(t1, t2));
    }
    return lo <= hi ? lo : -1.0;
}

/* First contact of q with primitive i: >= 0, or -1 (miss), or -2 (not checkable). */
static double o_time(const o_query* q, const o_scene* s, uint32_t i) {
    double closest;
    if (!q->box) return o_sphere_time(q, s, i, &closest);
    if (s->tri) return o_box_tri_time(q, s->tri[i]);
    return o_box_box_time(q, &s->boxes[i]);
}

/* A lower bound of the first contact of q with primitive i (the centre's entry into the
 * primitive's box grown by the shape's extent and a margin), or -1 when it cannot touch it. */
static double o_lower(const void* qv, const o_scene* s, uint32_t i, double grow) {
    const o_query* q = qv;
    double mn[3], mx[3], e[3];
    so_prim_box(s, i, mn, mx);
    for (int k = 0; k < 3; k++) e[k] = (q->box ? q->h[k] : q->r) + grow;
    return so_entry(mn, mx, q->c, e, q->d, q->tmax);
}

/* The shape's own size: the radius, or the box's largest half side. */
static double q_size(const o_query* q) { return fmax(q->r, fmax(q->h[0], fmax(q->h[1], q->h[2]))); }

static double o_time_of(const void* q, const o_scene* s, uint32_t i) { return o_time(q, s, i); }

/* The first contact T over all primitives (INFINITY: none) and its primitive (sweep_oracle.h). */
static double o_first(const o_query* q, const o_scene* s, uint32_t* prim) {
    const double grow = 1e-3 * q_size(q) + 0x1p-40 * (s->scale + 1); /* the shape's, and double rounding's */
    return so_first(q, s, grow, o_lower, o_time_of, prim);
}

/* q with its shape grown by g (g < 0: shrunk, not below 0). */
static o_query o_grown(const o_query* q, double g) {
    o_query r = *q;
    r.r = fmax(0.0, r.r + g);
    for (int k = 0; k < 3; k++) r.h[k] = fmax(0.0, r.h[k] + g);
    return r;
}

static double q_scale(const o_query* q) {
    double s = 0;
    for (int k = 0; k < 3; k++) s = fmax(s, fabs(q->c[k]) + q->h[k] + q->r);
    return s;
}

/* A primitive's own size: a triangle's largest box side; a box's none (bvh.h). */
static double o_prim_size(const o_scene* s, uint32_t i) {
    double m = 0;
    if (s->tri)
        for (int k = 0; k < 3; k++)
            m = fmax(m, fmax(s->tri[i][0][k], fmax(s->tri[i][1][k], s->tri[i][2][k])) -
                            fmin(s->tri[i][0][k], fmin(s->tri[i][1][k], s->tri[i][2][k])));
    return m;
}

/* The tolerance of bvh.h in distance for q against primitive i at time T: of the shape's and the
 * primitive's sizes and the travel, never of the distance from the origin. */
static double tol_dist(const o_query* q, const o_scene* s, uint32_t i, double T) {
    double S = q_size(q) + (i == VL_NO_HIT ? 0.0 : o_prim_size(s, i));
    return VL_SWEEP_TOLERANCE * (S + sqrt(odist_dot(q->d, q->d)) * fmax(T, 0.0));
}

/* ---- checks ------------------------------------------------------------------------------- */

static const char* g_what = "";

/* One answer (hit, contact may be NULL) against the oracle; closest or any. */
static void check_answer(const o_query* q, const o_scene* s, vl_hit hit, const vl_contact* contact, int any,
                         uint32_t index) {
    uint32_t Tprim;
    double T = o_first(q, s, &Tprim);
    double dl = sqrt(odist_dot(q->d, q->d));
    if (hit.prim == VL_NO_HIT) {
        CHECK(hit.t == INFINITY, "%s %u: miss with t %g", g_what, index, hit.t);
        if (Tprim != VL_NO_HIT) { /* only a graze may be missed: the shrunk shape misses */
            o_query in = o_grown(q, -2.0 * tol_dist(q, s, Tprim, T));
            double t2 = o_time(&in, s, Tprim);
            CHECK(t2 == -1.0 || t2 == -2.0 || (q->box && q->h[0] * q->h[1] * q->h[2] == 0),
                  "%s %u: missed prim %u at T %.9g (shrunk: %.9g)", g_what, index, Tprim, T, t2);
        }
        return;
    }
    CHECK(hit.prim < s->count, "%s %u: prim %u", g_what, index, hit.prim);
    if (hit.prim >= s->count) return;
    CHECK(hit.t >= 0 && hit.t <= q->tmax, "%s %u: t %g outside [0, %g]", g_what, index, hit.t, q->tmax);
    double Tp = o_time(q, s, hit.prim);
    double tol = tol_dist(q, s, hit.prim, Tp >= 0 ? Tp : hit.t) / dl, slack = 0x1p-40 * (s->scale + q_scale(q) + 1) / dl;
    if (Tp >= 0) {
        CHECK(hit.t <= Tp + slack, "%s %u: prim %u t %.9g later than its contact %.9g", g_what, index, hit.prim,
              hit.t, Tp);
        CHECK(hit.t >= Tp - tol, "%s %u: prim %u t %.9g too early: contact %.9g, tol %.3g", g_what, index, hit.prim,
              hit.t, Tp, tol);
    } else if (Tp == -1.0) { /* a graze: the grown shape hits */
        o_query out = o_grown(q, 2.0 * tol_dist(q, s, hit.prim, hit.t));
        double t2 = o_time(&out, s, hit.prim);
        CHECK(t2 != -1.0, "%s %u: prim %u hit at %.9g, the oracle misses it", g_what, index, hit.prim, hit.t);
    }
    if (!any && Tprim != VL_NO_HIT)
        CHECK(hit.t <= T + slack, "%s %u: t %.9g (prim %u) later than the first contact %.9g (prim %u)", g_what, index,
              hit.t, hit.prim, T, Tprim);
    if (s->tri && hit.prim < s->count) CHECK(isfinite(hit.u) && isfinite(hit.v), "%s %u: u v", g_what, index);
    if (!contact) return;
    const float* n = contact->normal;
    double nl = sqrt((double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2]);
    double nd = (double)n[0] * q->d[0] + (double)n[1] * q->d[1] + (double)n[2] * q->d[2];
    CHECK(fabs(nl - 1.0) < 1e-5, "%s %u: |normal| %.9g", g_what, index, nl);
    CHECK(nd <= 1e-6 * dl, "%s %u: normal . dir %.3g", g_what, index, nd);
    /* the tolerance, and the rounding of the point to float (2^-24 of its coordinates) */
    double p[3], at[3], td = tol_dist(q, s, hit.prim, hit.t), round = 0;
    for (int k = 0; k < 3; k++) p[k] = contact->point[k], at[k] = q->c[k] + (double)hit.t * q->d[k];
    for (int k = 0; k < 3; k++) round = fmax(round, 0x1p-22 * fabs(p[k]));
    double on = o_dist(s, hit.prim, p);
    CHECK(on <= 4 * td + round, "%s %u: contact %.3g from the primitive", g_what, index, on);
    if (!q->box) {
        double cd = sqrt((p[0] - at[0]) * (p[0] - at[0]) + (p[1] - at[1]) * (p[1] - at[1]) +
                         (p[2] - at[2]) * (p[2] - at[2]));
        if (hit.t > 0)
            CHECK(fabs(cd - q->r) <= 4 * td + round, "%s %u: contact %.9g from the centre, radius %.9g",
                  g_what, index, cd, q->r);
    } else {
        double out = 0;
        for (int k = 0; k < 3; k++) {
            double x = fabs(p[k] - at[k]) - q->h[k];
            out = fmax(out, x);
        }
        CHECK(out <= 4 * td + round, "%s %u: contact %.3g outside the box", g_what, index, out);
    }
}

/* Sweeps (spheres when sph, else boxes) batched, single and against the oracle. */
static void check_sweeps(const vl_bvh* bvh, const o_scene* s, const vl_sphere_sweep* sph, const vl_box_sweep* box,
                         uint32_t n, const char* what) {
    g_what = what;
    vl_hit* hits = malloc(sizeof(vl_hit) * n * 3);
    vl_contact* contacts = malloc(sizeof(vl_contact) * n);
    size_t bytes = vl_bvh_sweep_scratch_size(bvh, n, 0);
    void* scratch = aligned_alloc(64, (bytes + 63) / 64 * 64);
    vl_status st;
    for (int any = 0; any < 2; any++) {
        uint32_t flags = any ? VL_QUERY_ANY : VL_QUERY_CLOSEST;
        st = sph ? vl_bvh_sweep_spheres(bvh, sph, n, flags, hits, contacts, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                 : vl_bvh_sweep_boxes(bvh, box, n, flags, hits, contacts, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        CHECK(st == VL_OK, "%s: batch status %d", what, (int)st);
        st = sph ? vl_bvh_sweep_spheres(bvh, sph, n, flags, hits + n, NULL, NULL) : vl_bvh_sweep_boxes(bvh, box, n, flags, hits + n, NULL, NULL);
        CHECK(st == VL_OK, "%s: plain batch status %d", what, (int)st);
        for (uint32_t i = 0; i < n; i++) {
            vl_contact c1;
            st = sph ? vl_bvh_sweep_spheres(bvh, &sph[i], 1, flags, &hits[2 * n + i], &c1, NULL)
                     : vl_bvh_sweep_boxes(bvh, &box[i], 1, flags, &hits[2 * n + i], &c1, NULL);
            CHECK(st == VL_OK, "%s: single status %d", what, (int)st);
            o_query q = sph ? o_sphere(&sph[i]) : o_box(&box[i]);
            check_answer(&q, s, hits[i], &contacts[i], any, i);
            CHECK(hits[n + i].prim == hits[i].prim && hits[n + i].t == hits[i].t, "%s %u: plain and scratch differ",
                  what, i);
            if (!any) {
                check_answer(&q, s, hits[2 * n + i], &c1, 0, i);
                CHECK(so_same_answer(hits[i], hits[2 * n + i]), "%s %u: batch prim %u t %.9g, single prim %u t %.9g",
                      what, i, hits[i].prim, hits[i].t, hits[2 * n + i].prim, hits[2 * n + i].t);
            } else {
                CHECK((hits[i].prim == VL_NO_HIT) == (hits[2 * n + i].prim == VL_NO_HIT), "%s %u: any hit differs",
                      what, i);
            }
        }
    }
    /* small batches answer as the large one */
    static const uint32_t sizes[] = {1, 3, 5, 64};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t m = sizes[k] < n ? sizes[k] : n;
        vl_hit part[64];
        st = sph ? vl_bvh_sweep_spheres(bvh, sph, m, 0, part, NULL, NULL) : vl_bvh_sweep_boxes(bvh, box, m, 0, part, NULL, NULL);
        CHECK(st == VL_OK, "%s: batch of %u", what, m);
        vl_status st2 = sph ? vl_bvh_sweep_spheres(bvh, sph, n, 0, hits, NULL, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                            : vl_bvh_sweep_boxes(bvh, box, n, 0, hits, NULL, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        CHECK(st2 == VL_OK, "%s: batch without contacts", what);
        for (uint32_t i = 0; i < m; i++)
            CHECK(so_same_answer(part[i], hits[i]), "%s: batch of %u, sweep %u", what, m, i);
    }
    free(scratch);
    free(hits);
    free(contacts);
}

/* ---- scenes ------------------------------------------------------------------------------- */

/* Sweeps near a mesh: from random points in its bounds (grown), toward random points, with
 * shapes at the scale of `size`; some axis-aligned, some tmax 0 or infinite, some starting on a
 * vertex (in contact). */
static void make_sweeps(const scene_mesh* m, uint32_t n, float size, uint64_t seed, vl_sphere_sweep* sph,
                        vl_box_sweep* box) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++) {
        float c[3], d[3], r = size * test_float(&rng, 0.05f, 1.5f);
        if (i % 17 == 0) r = size * 1e-4f;
        if (i % 23 == 0) r = size * 20.0f;
        for (int a = 0; a < 3; a++) {
            float pad = 0.1f * (m->hi[a] - m->lo[a]) + size;
            c[a] = test_float(&rng, m->lo[a] - pad, m->hi[a] + pad);
        }
        if (i % 7 == 3) { /* start at a vertex: in contact */
            uint32_t v = test_u32(&rng, m->vertex_count);
            for (int a = 0; a < 3; a++) c[a] = m->xyz[3 * (size_t)v + a];
        }
        scene_direction(&rng, d);
        if (i % 5 == 1) { /* along an axis */
            int ax = (int)test_u32(&rng, 3);
            d[0] = d[1] = d[2] = 0.0f;
            d[ax] = (i & 32) ? 1.0f : -1.0f;
        }
        if (i % 11 == 2) { /* at a vertex, grazing it by about the radius */
            uint32_t v = test_u32(&rng, m->vertex_count);
            for (int a = 0; a < 3; a++) d[a] = m->xyz[3 * (size_t)v + a] - c[a];
        }
        float scale = test_float(&rng, 0.1f, 3.0f);
        for (int a = 0; a < 3; a++) d[a] *= scale;
        float extent = (m->hi[0] - m->lo[0]) + (m->hi[1] - m->lo[1]) + (m->hi[2] - m->lo[2]);
        float tmax = test_float(&rng, 0.0f, 2.0f * extent / scale);
        if (i % 13 == 4) tmax = 0.0f;
        if (i % 9 == 5) tmax = INFINITY;
        if (sph) {
            for (int a = 0; a < 3; a++) sph[i].center[a] = c[a], sph[i].dir[a] = d[a];
            sph[i].radius = r, sph[i].tmax = tmax;
        }
        if (box) {
            for (int a = 0; a < 3; a++) {
                float h = r * test_float(&rng, 0.3f, 1.0f);
                if (i % 19 == 6 && a == 1) h = 0.0f; /* flat */
                box[i].box.min[a] = c[a] - h, box[i].box.max[a] = c[a] + h, box[i].dir[a] = d[a];
            }
            box[i].tmax = tmax;
        }
    }
}

static void check_mesh_at(const scene_mesh* m, uint32_t n, float size, uint64_t seed, uint32_t leaf, const char* name) {
    tri_scene t;
    CHECK(tri_scene_make(m, &t, leaf), "%s: build", name);
    if (!t.bvh) return;
    vl_sphere_sweep* sph = malloc(sizeof(vl_sphere_sweep) * n);
    vl_box_sweep* box = malloc(sizeof(vl_box_sweep) * n);
    make_sweeps(m, n, size, seed, sph, box);
    char what[96];
    snprintf(what, sizeof what, "%s spheres", name);
    check_sweeps(t.bvh, &t.o, sph, NULL, n, what);
    snprintf(what, sizeof what, "%s boxes", name);
    check_sweeps(t.bvh, &t.o, NULL, box, n, what);
    free(sph);
    free(box);
    tri_scene_free(&t);
}

/* The mesh where it is, then moved by each far offset with a sixth of the sweeps. */
static void check_mesh(const scene_mesh* m, uint32_t n, float size, uint64_t seed, uint32_t leaf, const char* name) {
    so_check_offsets(m, n, 8, size, seed, leaf, name, check_mesh_at);
}

static void test_soups(void) {
    scene_mesh m;
    CHECK(scene_soup(test_scaled(600), 10.0f, 0.8f, 31, &m), "soup");
    scene_zero_area(&m, 60, 0); /* a few triangles of zero area: collinear corners */
    check_mesh(&m, test_scaled(300), 0.5f, 32, 4, "soup");
    check_mesh(&m, test_scaled(100), 0.5f, 33, 1, "soup leaf 1");
    scene_free(&m);
    CHECK(scene_soup(test_scaled(200), 1000.0f, 30.0f, 34, &m), "far soup");
    check_mesh(&m, test_scaled(100), 20.0f, 35, 8, "far soup");
    scene_free(&m);
}

/* The leaf filter's margins: sweeps built to touch triangles near the culling tests' decisions
 * (the plane slab's entry right at tmax, sliding along the plane or past a vertex at about the
 * radius), on well-shaped triangles and slivers (normals with large rounding
 * error), near the origin and far from it, with tiny, normal and huge radii. */
static void margin_sweeps(const scene_mesh* m, uint32_t n, float size, double scale, uint64_t seed,
                          vl_sphere_sweep* sph, vl_box_sweep* box) {
    /* the face's entry at 1 + eps of tmax 1; sliding at a distance off the radius by graze of the
     * scale (a touch shallower than the tree's vertex rounding, 2^-24 of the scale, can be late) */
    static const double eps[] = {-0x1p-14, -0x1p-19, -0x1p-22, 0.0, 0x1p-22, 0x1p-19, 0x1p-14};
    static const double graze[] = {-0x1p-12, -0x1p-16, 0x1p-16, 0x1p-12};
    static const double radii[] = {1e-4, 0.3, 1.0, 40.0};
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t* tri = m->indices + 3 * (size_t)test_u32(&rng, m->triangle_count);
        double v[3][3], e1[3], e2[3], nrm[3], p[3], d[3], c[3];
        for (int j = 0; j < 3; j++)
            for (int a = 0; a < 3; a++) v[j][a] = m->xyz[3 * (size_t)tri[j] + a];
        for (int a = 0; a < 3; a++) e1[a] = v[1][a] - v[0][a], e2[a] = v[2][a] - v[0][a];
        nrm[0] = e1[1] * e2[2] - e1[2] * e2[1];
        nrm[1] = e1[2] * e2[0] - e1[0] * e2[2];
        nrm[2] = e1[0] * e2[1] - e1[1] * e2[0];
        double len = sqrt(odist_dot(nrm, nrm)), r = size * radii[i % 4], e = eps[(i / 4) % 7];
        if (!(len > 0.0)) len = 1.0, nrm[0] = 1.0, nrm[1] = nrm[2] = 0.0;
        for (int a = 0; a < 3; a++) nrm[a] /= len;
        double u = test_float(&rng, 0, 1), w = test_float(&rng, 0, 1);
        if (u + w > 1) u = 1 - u, w = 1 - w;
        int kind = (int)(i / 28) % 3;
        if (kind == 2) u = w = 0.0; /* past the vertex v0 */
        for (int a = 0; a < 3; a++) p[a] = v[0][a] + u * e1[a] + w * e2[a];
        double side = (i & 1) ? 1.0 : -1.0, along[3], tmax = 1.0;
        for (int a = 0; a < 3; a++) along[a] = e1[a] - nrm[a] * odist_dot(e1, nrm);
        double al = sqrt(odist_dot(along, along));
        for (int a = 0; a < 3; a++) along[a] = al > 0.0 ? along[a] / al : 0.0;
        if (kind == 0) { /* onto the face, reaching it at t = 1 + e (tmax 1) */
            double h = size * test_float(&rng, 0.1f, 3.0f);
            for (int a = 0; a < 3; a++) c[a] = p[a] + side * nrm[a] * (r + h), d[a] = -side * nrm[a] * h / (1.0 + e);
        } else { /* along the plane (or past the vertex) at r (1 + e) from it, starting behind */
            double reach = size * test_float(&rng, 0.5f, 4.0f);
            e = graze[(i / 4) % 4];
            for (int a = 0; a < 3; a++)
                c[a] = p[a] + side * nrm[a] * (r + e * scale) - along[a] * reach, d[a] = 2.0 * reach * along[a];
            if (kind == 2) tmax = test_float(&rng, 0.2f, 1.0f);
        }
        for (int a = 0; a < 3; a++) {
            sph[i].center[a] = (float)c[a], sph[i].dir[a] = (float)d[a];
            /* boxes not below 0.3 size: the oracle's hull of a tiny box against a triangle is
             * off by more than the tolerance */
            float h = (float)fmax(r, 0.3 * size) * ((i & 2) ? 1.0f : 0.5f);
            box[i].box.min[a] = (float)c[a] - h, box[i].box.max[a] = (float)c[a] + h, box[i].dir[a] = (float)d[a];
        }
        sph[i].radius = (float)r, sph[i].tmax = box[i].tmax = (float)tmax;
        if (!(fabsf(sph[i].dir[0]) + fabsf(sph[i].dir[1]) + fabsf(sph[i].dir[2]) > 0.0f))
            sph[i].dir[0] = box[i].dir[0] = size;
    }
}

static void unit3(double v[3]) {
    double l = sqrt(odist_dot(v, v));
    for (int a = 0; a < 3; a++) v[a] /= l;
}

/* The sphere bound's margins (vl_sweepw_sphere_tris): sweeps past a vertex or across an edge of a
 * triangle (transversally, not along it) at the radius + graze of the scale from it, and sweeps
 * head-on onto a vertex or an edge reaching it at 1 + eps of tmax 1; starting a few or 100
 * triangle sizes away (the bound's rounding grows with the distance), tiny to huge radii. */
static void feature_sweeps(const scene_mesh* m, uint32_t n, float size, double scale, uint64_t seed,
                           vl_sphere_sweep* sph) {
    static const double eps[] = {-0x1p-14, -0x1p-16, -0x1p-17, -0x1p-19, 0.0, 0x1p-19};
    static const double graze[] = {-0x1p-12, -0x1p-16, -0x1p-18, 0x1p-18, 0x1p-16, 0x1p-12};
    static const double radii[] = {1e-4, 0.3, 1.0, 40.0};
    test_rng rng = {seed};
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t* tri = m->indices + 3 * (size_t)test_u32(&rng, m->triangle_count);
        const int j = (int)test_u32(&rng, 3), edge = (i / 4) % 2, head_on = (i / 8) % 2;
        double a[3], b[3], p[3], x[3], y[3], E[3], c[3], d[3];
        for (int k = 0; k < 3; k++)
            a[k] = m->xyz[3 * (size_t)tri[j] + k], b[k] = m->xyz[3 * (size_t)tri[(j + 1) % 3] + k], E[k] = b[k] - a[k];
        double lam = edge ? test_float(&rng, 0.1f, 0.9f) : 0.0;
        for (int k = 0; k < 3; k++) p[k] = a[k] + lam * E[k];
        /* x: from the feature toward the path's closest point (across the edge: perpendicular to
         * it); y: the path's direction, perpendicular to x (and to the edge) */
        for (int k = 0; k < 3; k++) x[k] = test_float(&rng, -1.0f, 1.0f);
        if (edge && odist_dot(E, E) > 0.0) {
            double el = odist_dot(x, E) / odist_dot(E, E);
            for (int k = 0; k < 3; k++) x[k] -= el * E[k];
        }
        unit3(x);
        if (edge && odist_dot(E, E) > 0.0) {
            y[0] = E[1] * x[2] - E[2] * x[1], y[1] = E[2] * x[0] - E[0] * x[2], y[2] = E[0] * x[1] - E[1] * x[0];
        } else {
            for (int k = 0; k < 3; k++) y[k] = test_float(&rng, -1.0f, 1.0f);
            double xl = odist_dot(y, x);
            for (int k = 0; k < 3; k++) y[k] -= xl * x[k];
        }
        unit3(y);
        const double r = size * radii[i % 4];
        const double reach = size * test_float(&rng, 0.5f, 4.0f) * ((i / 16) % 3 == 2 ? 30.0f : 1.0f);
        double tmax = 1.0;
        if (head_on) { /* along -x onto the feature, touching it at t = 1 + e */
            double e = eps[(i / 48) % 6];
            for (int k = 0; k < 3; k++) c[k] = p[k] + x[k] * (r + reach), d[k] = -x[k] * reach / (1.0 + e);
        } else { /* along y, passing at r + graze from the feature */
            double g = graze[(i / 48) % 6];
            for (int k = 0; k < 3; k++) c[k] = p[k] + x[k] * (r + g * scale) - y[k] * reach, d[k] = 2.0 * reach * y[k];
            tmax = test_float(&rng, 0.6f, 1.0f);
        }
        for (int k = 0; k < 3; k++) sph[i].center[k] = (float)c[k], sph[i].dir[k] = (float)d[k];
        sph[i].radius = (float)r, sph[i].tmax = (float)tmax;
        if (!(fabsf(sph[i].dir[0]) + fabsf(sph[i].dir[1]) + fabsf(sph[i].dir[2]) > 0.0f)) sph[i].dir[0] = size;
    }
}

static void test_filter_margins(void) {
    static const float offsets[] = {0.0f, 1000.0f, 50000.0f};
    static const float sizes[] = {0.01f, 1.0f, 300.0f};
    for (int k = 0; k < 6; k++) {
        /* slivers (thin triangles: b near the line of a) for spheres only: the oracle's hull of a
         * box swept against a sliver misses facets */
        const int slivers = k >= 3;
        scene_mesh m = {0};
        const uint32_t count = 48;
        CHECK(scene_reserve(&m, 3 * count, count), "margin scene");
        test_rng rng = {71 + (uint64_t)k};
        const float o = offsets[k % 3], size = sizes[k % 3];
        for (uint32_t i = 0; i < count; i++) {
            float base[3], a[3], b[3];
            for (int ax = 0; ax < 3; ax++) {
                base[ax] = o + test_float(&rng, -4.0f, 4.0f) * size;
                a[ax] = test_float(&rng, -1.0f, 1.0f) * size;
                b[ax] = test_float(&rng, -1.0f, 1.0f) * size;
            }
            if (slivers && i % 2)
                for (int ax = 0; ax < 3; ax++) b[ax] = 0.5f * a[ax] + (ax == 2 ? 1e-3f * size : 0.0f);
            scene_push_vertex(&m, base[0], base[1], base[2]);
            scene_push_vertex(&m, base[0] + a[0], base[1] + a[1], base[2] + a[2]);
            scene_push_vertex(&m, base[0] + b[0], base[1] + b[1], base[2] + b[2]);
            scene_push_tri(&m, 3 * i, 3 * i + 1, 3 * i + 2);
        }
        scene_bounds(&m);
        tri_scene t;
        CHECK(tri_scene_make(&m, &t, 8), "margin scene build");
        uint32_t n = test_scaled(336);
        vl_sphere_sweep* sph = malloc(sizeof(vl_sphere_sweep) * n);
        vl_box_sweep* box = malloc(sizeof(vl_box_sweep) * n);
        margin_sweeps(&m, n, size, o + 5.0 * size, 72 + (uint64_t)k, sph, box);
        char what[80];
        snprintf(what, sizeof what, "margins (offset %g, size %g%s) spheres", o, size, slivers ? ", slivers" : "");
        if (t.bvh) check_sweeps(t.bvh, &t.o, sph, NULL, n, what);
        snprintf(what, sizeof what, "margins (offset %g, size %g) boxes", o, size);
        if (t.bvh && !slivers) check_sweeps(t.bvh, &t.o, NULL, box, n, what);
        free(sph);
        n = test_scaled(960);
        sph = malloc(sizeof(vl_sphere_sweep) * n);
        feature_sweeps(&m, n, size, o + 5.0 * size, 73 + (uint64_t)k, sph);
        snprintf(what, sizeof what, "feature margins (offset %g, size %g%s)", o, size, slivers ? ", slivers" : "");
        if (t.bvh) check_sweeps(t.bvh, &t.o, sph, NULL, n, what);
        free(sph);
        free(box);
        if (t.bvh) tri_scene_free(&t);
        scene_free(&m);
    }
}

/* Characters: spheres and boxes dropped onto and slid along the terrain, the world moved by
 * scene_offset(k). */
static void test_characters(const scene_mesh* world, uint32_t k) {
    scene_mesh m;
    if (!scene_copy_moved(world, k, &m)) return;
    float v[3];
    scene_offset_vector(scene_offset(k), v);
    tri_scene t;
    CHECK(tri_scene_make(&m, &t, 8), "world build");
    uint32_t n = test_scaled(k ? 60 : 200);
    vl_sphere_sweep* sph = malloc(sizeof(vl_sphere_sweep) * n);
    vl_box_sweep* box = malloc(sizeof(vl_box_sweep) * n);
    test_rng rng = {43};
    for (uint32_t i = 0; i < n; i++) {
        float x = test_float(&rng, 1, 15), z = test_float(&rng, 1, 15), r = test_float(&rng, 0.1f, 0.8f);
        float y = scene_height(x, z) + r * (i % 3 == 0 ? 1.0f : 3.0f);
        float d[3] = {0, -1, 0};
        if (i & 1) d[0] = test_float(&rng, -1, 1), d[1] = test_float(&rng, -0.2f, 0.0f), d[2] = test_float(&rng, -1, 1);
        for (int a = 0; a < 3; a++) sph[i].center[a] = (a == 0 ? x : a == 1 ? y : z) + v[a], sph[i].dir[a] = d[a];
        sph[i].radius = r, sph[i].tmax = test_float(&rng, 0, 8);
        for (int a = 0; a < 3; a++)
            box[i].box.min[a] = sph[i].center[a] - r, box[i].box.max[a] = sph[i].center[a] + r, box[i].dir[a] = d[a];
        box[i].tmax = sph[i].tmax;
    }
    char what[96];
    snprintf(what, sizeof what, "world characters at %g, spheres", scene_offset(k));
    check_sweeps(t.bvh, &t.o, sph, NULL, n, what);
    snprintf(what, sizeof what, "world characters at %g, boxes", scene_offset(k));
    check_sweeps(t.bvh, &t.o, NULL, box, n, what);
    free(sph);
    free(box);
    tri_scene_free(&t);
    scene_free(&m);
}

static void test_world(void) {
    scene_mesh m;
    if (!scene_world(16, 6, 8, 41, &m)) return;
    check_mesh(&m, test_scaled(300), 0.5f, 42, 8, "world");
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) test_characters(&m, k);
    scene_free(&m);
}

/* Sweeps with a time of impact outside the band of 1e-4 of their own size and travel (radius or
 * largest half side, plus |dir| tmax) from the first contact: a hit reported too early or too
 * late, or a hit or miss the shape grown or shrunk by the band does not explain. The sweeps of
 * the bench and the tool (scene_sweeps) on a terrain world moved by scene_offset(k): at most 0.1%
 * of them. */
static void test_band(uint32_t k) {
    scene_mesh m;
    if (!scene_world(24, 12, 0, 80 + k, &m)) return;
    scene_move(&m, scene_offset(k));
    tri_scene t;
    CHECK(tri_scene_make(&m, &t, 8), "band build");
    const uint32_t n = test_scaled(300);
    vl_sphere_sweep* sph = malloc(sizeof(vl_sphere_sweep) * n);
    vl_box_sweep* box = malloc(sizeof(vl_box_sweep) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    scene_sweeps(&m, n, 90 + k, sph, box);
    for (int shape = 0; shape < 2 && t.bvh; shape++) {
        CHECK((shape ? vl_bvh_sweep_boxes(t.bvh, box, n, 0, hits, NULL, NULL) : vl_bvh_sweep_spheres(t.bvh, sph, n, 0, hits, NULL, NULL)) == VL_OK,
              "band %s", shape ? "boxes" : "spheres");
        uint32_t wrong = 0;
        double worst = 0;
        for (uint32_t i = 0; i < n; i++) {
            o_query q = shape ? o_box(&box[i]) : o_sphere(&sph[i]);
            const double dl = sqrt(odist_dot(q.d, q.d)), band = 1e-4 * (q_size(&q) + dl * q.tmax);
            uint32_t prim;
            const double T = o_first(&q, &t.o, &prim);
            double off = 0;
            if (hits[i].prim != VL_NO_HIT && prim != VL_NO_HIT) {
                off = fmax(T - hits[i].t, hits[i].t - T - 0x1p-40 * (t.o.scale + 1) / dl) * dl / band;
            } else if (hits[i].prim != prim) { /* a hit or a miss that only a graze explains */
                o_query g = o_grown(&q, prim == VL_NO_HIT ? band : -band);
                uint32_t gp;
                off = (o_first(&g, &t.o, &gp) != INFINITY) == (prim == VL_NO_HIT) ? 0.0 : INFINITY;
            }
            wrong += off > 1.0;
            worst = fmax(worst, off);
        }
        printf("test_sweeps: band at %g, %s: %u of %u sweeps outside 1e-4 of their size and travel (worst %.3g "
               "bands)\n", scene_offset(k), shape ? "boxes" : "spheres", wrong, n, worst);
        CHECK(wrong * 1000 <= n, "band at %g: %u of %u %s sweeps outside 1e-4 of their size and travel", scene_offset(k),
              wrong, n, shape ? "box" : "sphere");
    }
    free(sph), free(box), free(hits);
    if (t.bvh) tri_scene_free(&t);
    scene_free(&m);
}

static void test_real_meshes(void) { so_real_meshes("test_sweeps", check_mesh); }

/* A tree of random boxes (flat ones among them) moved by scene_offset(k), and sweeps moved alike. */
static void test_boxes(uint32_t k) {
    uint32_t nb = test_scaled(k ? 150 : 400) + 2;
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * nb);
    test_rng rng = {61};
    for (uint32_t i = 0; i < nb; i++)
        for (int a = 0; a < 3; a++) {
            float lo = test_float(&rng, 0, 100), size = test_float(&rng, 0, 4);
            if (i % 10 == 3 && a == 2) size = 0.0f; /* flat */
            boxes[i].min[a] = lo, boxes[i].max[a] = lo + size;
        }
    vl_bvh* bvh = NULL;
    float v[3];
    scene_offset_vector(scene_offset(k), v);
    scene_move_boxes(boxes, nb, scene_offset(k));
    CHECK(vl_bvh_build_boxes(boxes, nb, NULL, &bvh, NULL) == VL_OK, "box tree");
    o_scene s = {NULL, boxes, nb, 104.0 + fabs(scene_offset(k))};
    uint32_t n = test_scaled(k ? 60 : 300);
    vl_sphere_sweep* sph = malloc(sizeof(vl_sphere_sweep) * n);
    vl_box_sweep* box = malloc(sizeof(vl_box_sweep) * n);
    scene_mesh fake = {0};
    float xyz[6] = {v[0], v[1], v[2], 100 + v[0], 100 + v[1], 100 + v[2]};
    fake.xyz = xyz, fake.vertex_count = 2;
    scene_bounds(&fake);
    make_sweeps(&fake, n, 1.5f, 62, sph, box);
    for (uint32_t i = 0; i < n; i += 4) /* start inside a box corner region, and at its faces */
        for (int a = 0; a < 3; a++) sph[i].center[a] = boxes[i % nb].max[a] + (a == 0 ? sph[i].radius * 0.5f : 0.0f);
    char what[80];
    snprintf(what, sizeof what, "box tree at %g, spheres", scene_offset(k));
    check_sweeps(bvh, &s, sph, NULL, n, what);
    snprintf(what, sizeof what, "box tree at %g, boxes", scene_offset(k));
    check_sweeps(bvh, &s, NULL, box, n, what);
    free(sph);
    free(box);
    vl_bvh_destroy(bvh);
    free(boxes);
}

/* Exact contacts on one triangle: face, edge, vertex, and grazing; touching at the start. */
static void test_one_triangle(void) {
    float xyz[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "one triangle");
    vl_hit h;
    vl_contact c;
    /* face: down onto z = 0 from z = 5, radius 1: t = 4 */
    vl_sphere_sweep s = {{1, 1, 5}, 1, {0, 0, -1}, 10};
    CHECK(vl_bvh_sweep_spheres(bvh, &s, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "face hit");
    CHECK(h.t <= 4.0f && h.t >= 4.0f - 1e-5f, "face t %.9g", h.t);
    CHECK(fabsf(c.normal[2] - 1.0f) < 1e-6f && fabsf(c.point[0] - 1) < 1e-5f && fabsf(c.point[2]) < 1e-5f,
          "face contact (%g %g %g) n (%g %g %g)", c.point[0], c.point[1], c.point[2], c.normal[0], c.normal[1],
          c.normal[2]);
    CHECK(fabsf(h.u - 0.25f) < 1e-5f && fabsf(h.v - 0.25f) < 1e-5f, "face u %g v %g", h.u, h.v);
    /* vertex: along x toward the origin at height 0.6, radius 1: t = 10 - 0.8 */
    vl_sphere_sweep sv = {{-10, -0.0f, 0.6f}, 1, {1, 0, 0}, 20};
    sv.center[1] = -3.0f, sv.dir[1] = 0.0f;
    sv.center[1] = -0.0f;
    CHECK(vl_bvh_sweep_spheres(bvh, &sv, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "vertex hit");
    CHECK(h.t <= 9.2f && h.t >= 9.2f - 2e-5f, "vertex t %.9g", h.t);
    CHECK(fabsf(c.point[0]) < 1e-5f && fabsf(c.point[1]) < 1e-5f && fabsf(c.point[2]) < 1e-5f,
          "vertex contact (%g %g %g)", c.point[0], c.point[1], c.point[2]);
    /* start in contact: t = 0, moving away: normal without a component along dir */
    vl_sphere_sweep s0 = {{1, 1, 0.5f}, 1, {0, 0, 1}, 10};
    CHECK(vl_bvh_sweep_spheres(bvh, &s0, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0 && h.t == 0.0f, "start in contact");
    CHECK(c.normal[2] <= 0.0f, "normal against dir");
    /* zero-length sweep not touching: miss */
    vl_sphere_sweep sz = {{1, 1, 5}, 1, {0, 0, -1}, 0};
    CHECK(vl_bvh_sweep_spheres(bvh, &sz, 1, 0, &h, &c, NULL) == VL_OK && h.prim == VL_NO_HIT, "tmax 0 miss");
    /* a box down onto the face: t = 4 */
    vl_box_sweep b = {{{0.5f, 0.5f, 5}, {1.5f, 1.5f, 6}}, {0, 0, -2}, 10};
    CHECK(vl_bvh_sweep_boxes(bvh, &b, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "box face hit");
    CHECK(h.t <= 2.5f && h.t >= 2.5f - 1e-5f, "box face t %.9g", h.t);
    CHECK(fabsf(c.normal[2] - 1.0f) < 1e-6f, "box normal (%g %g %g)", c.normal[0], c.normal[1], c.normal[2]);
    /* box edge onto the triangle's edge x + y = 4: a box rotated... a box along (1,1,0) */
    vl_box_sweep be = {{{4, 4, -0.5f}, {5, 5, 0.5f}}, {-1, -1, 0}, 10};
    CHECK(vl_bvh_sweep_boxes(bvh, &be, 1, 0, &h, &c, NULL) == VL_OK && h.prim == 0, "box edge hit");
    CHECK(h.t <= 2.0f && h.t >= 2.0f - 1e-5f, "box corner onto edge t %.9g", h.t);
    vl_bvh_destroy(bvh);
}

/* Invalid sweeps mixed in a batch, bad arguments, scratch, allocation. */
static void test_api(void) {
    float xyz[9] = {0, 0, 0, 4, 0, 0, 0, 4, 0};
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "build");
    enum { N = 24 };
    vl_sphere_sweep s[N];
    vl_box_sweep b[N];
    for (int i = 0; i < N; i++) {
        vl_sphere_sweep g = {{1, 1, 5}, 1, {0, 0, -1}, 10};
        vl_box_sweep gb = {{{0.5f, 0.5f, 5}, {1.5f, 1.5f, 6}}, {0, 0, -1}, 10};
        s[i] = g, b[i] = gb;
    }
    s[1].center[0] = NAN, s[2].radius = -1, s[3].dir[0] = s[3].dir[1] = s[3].dir[2] = 0, s[4].dir[2] = NAN;
    s[5].dir[2] = -INFINITY, s[6].tmax = -1, s[7].tmax = NAN, s[8].radius = NAN, s[9].center[2] = INFINITY;
    s[10].dir[2] = -1e-40f, s[11].radius = INFINITY;
    b[1].box.min[0] = 2, b[2].box.max[1] = NAN, b[3].dir[2] = 0, b[4].dir[0] = NAN, b[5].dir[1] = INFINITY;
    b[6].tmax = -0.5f, b[7].tmax = NAN, b[8].box.min[2] = -INFINITY, b[9].dir[2] = 1e-39f;
    vl_hit hits[N];
    vl_contact contacts[N];
    CHECK(vl_bvh_sweep_spheres(bvh, s, N, 0, hits, NULL, NULL) == VL_ERR_INVALID_QUERY, "spheres invalid");
    for (int i = 0; i < N; i++) {
        int bad = i >= 1 && i <= 11;
        CHECK(bad ? hits[i].prim == VL_NO_HIT && hits[i].t == INFINITY : hits[i].prim == 0, "sphere %d", i);
    }
    CHECK(vl_bvh_sweep_boxes(bvh, b, N, VL_QUERY_ANY, hits, NULL, NULL) == VL_ERR_INVALID_QUERY, "boxes invalid");
    for (int i = 0; i < N; i++) {
        int bad = i >= 1 && i <= 9;
        CHECK(bad ? hits[i].prim == VL_NO_HIT : hits[i].prim == 0, "box %d", i);
    }
    vl_hit h;
    CHECK(vl_bvh_sweep_spheres(bvh, &s[2], 1, 0, &h, NULL, NULL) == VL_ERR_INVALID_QUERY && h.prim == VL_NO_HIT, "single bad");
    CHECK(vl_bvh_sweep_boxes(bvh, &b[1], 1, 0, &h, NULL, NULL) == VL_ERR_INVALID_QUERY && h.prim == VL_NO_HIT, "single bad box");
    /* arguments */
    CHECK(vl_bvh_sweep_spheres(NULL, s, N, 0, hits, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_sweep_spheres(bvh, NULL, N, 0, hits, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL sweeps");
    CHECK(vl_bvh_sweep_boxes(bvh, b, N, 0, NULL, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
    CHECK(vl_bvh_sweep_spheres(bvh, NULL, 0, 0, NULL, NULL, NULL) == VL_OK, "count 0");
    CHECK(vl_bvh_sweep_spheres(bvh, s, N, 8, hits, NULL, NULL) == VL_ERR_INVALID_FLAGS, "flags");
    CHECK(vl_bvh_sweep_spheres(bvh, &s[0], 1, 0x10, &h, NULL, NULL) == VL_ERR_INVALID_FLAGS, "single flags");
    CHECK(vl_bvh_sweep_spheres(bvh, NULL, 1, 0, &h, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "single NULL");
    CHECK(vl_bvh_sweep_boxes(NULL, &b[0], 1, 0, &h, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "single NULL bvh");
    CHECK(vl_bvh_sweep_scratch_size(NULL, 10, 0) == 0 && vl_bvh_sweep_scratch_size(bvh, 10, 64) == 0, "size");
    /* the sweeps need no scratch (a caller's is not read); a context with scratch is refused */
    size_t bytes = 256;
    CHECK(vl_bvh_sweep_scratch_size(bvh, N, 0) == 0, "scratch size");
    char* mem = aligned_alloc(64, bytes + 128);
    vl_context* ctx = NULL;
    CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    for (int i = 0; i < N; i++) hits[i].prim = 77;
    CHECK(vl_bvh_sweep_spheres(bvh, s, N, 0, hits, contacts,
                               &(vl_exec){.context = ctx, .scratch = mem, .scratch_bytes = bytes}) ==
              VL_ERR_INVALID_ARGUMENT,
          "context and scratch");
    CHECK(vl_bvh_sweep_boxes(bvh, b, N, 0, hits, contacts, &(vl_exec){.context = ctx, .scratch_bytes = 1}) ==
              VL_ERR_INVALID_ARGUMENT,
          "context and scratch bytes");
    CHECK(hits[0].prim == 77 && hits[N - 1].prim == 77, "nothing written");
    vl_context_destroy(ctx);
    CHECK(vl_bvh_sweep_spheres(bvh, s, N, 0, hits, contacts, &(vl_exec){.scratch = mem + 4, .scratch_bytes = 1}) ==
              VL_ERR_INVALID_QUERY,
          "any scratch is fine");
    /* caller scratch: no allocation */
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    CHECK(vl_bvh_sweep_spheres(bvh, s, N, 0, hits, contacts, &(vl_exec){.scratch = mem, .scratch_bytes = bytes}) == VL_ERR_INVALID_QUERY, "scratch");
    CHECK(vl_bvh_sweep_boxes(bvh, b, N, 0, hits, contacts, &(vl_exec){.scratch = mem, .scratch_bytes = bytes}) == VL_ERR_INVALID_QUERY, "scratch");
    CHECK(vl_bvh_sweep_spheres(bvh, &s[0], 1, 0, &h, contacts, NULL) == VL_OK, "single");
    CHECK(hooks.allocs == 0, "caller scratch allocated %ld times", hooks.allocs);
    /* plain: no allocation either, so a failing allocator changes nothing */
    CHECK(vl_bvh_sweep_spheres(bvh, s, N, 0, hits, NULL, NULL) == VL_ERR_INVALID_QUERY && hooks.allocs == 0,
          "plain allocs %ld", hooks.allocs);
    hooks.budget = 0;
    CHECK(vl_bvh_sweep_boxes(bvh, b, N, 0, hits, NULL, NULL) == VL_ERR_INVALID_QUERY && hits[0].prim == 0, "no memory");
    test_alloc_end(&hooks);
    free(mem);
    vl_bvh_destroy(bvh);
}

int main(void) {
    test_one_triangle();
    test_api();
    test_soups();
    test_filter_margins();
    test_world();
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) test_band(k), test_boxes(k);
    test_real_meshes();
    return test_finish("test_sweeps");
}
