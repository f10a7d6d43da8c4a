/* Brute-force oracle for the capsule queries, in double precision and independent of the library's
 * closest-point code: the distance from a segment to a primitive is the least, over the segment,
 * of its points' distance to the primitive (a convex function along the segment, minimized by
 * golden-section search); a point's distance to a triangle by its projection's barycentric
 * coordinates (inside: the plane's distance; outside: the nearest edge), to a box by clamping. A
 * sweep's first contact is found the same way over time: the distance from the moving segment is
 * convex in t, so golden-section search finds its closest approach and bisection the first time it
 * reaches the radius. Every distance is taken in a frame at the primitive (its first vertex, or the
 * capsule's start for a box), so that far from the origin it keeps the pair's precision.
 * Shared by tests/test_capsules_*.c. */
#ifndef VL_TESTS_CAPSULE_ORACLE_H
#define VL_TESTS_CAPSULE_ORACLE_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include <volley/volley.h>

/* A primitive: a triangle (box == NULL) or a box. */
typedef struct co_prim {
    double v[3][3];
    const vl_aabb* box;
} co_prim;

/* A capsule, moving by t d for t in [0, tmax] (tmax 0 and d 0 for an overlap). */
typedef struct co_capsule {
    double a[3], b[3], r, d[3], tmax;
} co_capsule;

static inline double co_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline co_capsule co_of(const vl_capsule* c) {
    co_capsule q;
    for (int k = 0; k < 3; k++) q.a[k] = c->a[k], q.b[k] = c->b[k], q.d[k] = 0.0;
    q.r = c->radius, q.tmax = 0.0;
    return q;
}

static inline co_capsule co_of_sweep(const vl_capsule_sweep* s) {
    co_capsule q = co_of(&s->capsule);
    for (int k = 0; k < 3; k++) q.d[k] = fabsf(s->dir[k]) < FLT_MIN ? 0.0 : s->dir[k];
    q.tmax = s->tmax < FLT_MAX ? s->tmax : FLT_MAX;
    return q;
}

static inline int co_valid(const vl_capsule* c) {
    for (int k = 0; k < 3; k++)
        if (!isfinite(c->a[k]) || !isfinite(c->b[k])) return 0;
    return isfinite(c->radius) && c->radius >= 0.0f;
}

static inline int co_sweep_valid(const vl_capsule_sweep* s) {
    int moves = 0;
    for (int k = 0; k < 3; k++) {
        if (!isfinite(s->dir[k])) return 0;
        moves |= fabsf(s->dir[k]) >= FLT_MIN;
    }
    return co_valid(&s->capsule) && moves && s->tmax >= 0.0f;
}

/* Half the segment's length. */
static inline double co_half(const co_capsule* q) {
    double l2 = 0.0;
    for (int k = 0; k < 3; k++) l2 += (q->b[k] - q->a[k]) * (q->b[k] - q->a[k]);
    return 0.5 * sqrt(l2);
}

/* Squared distance from p to the segment [a, b]. */
static inline double co_point_segment2(const double p[3], const double a[3], const double b[3]) {
    double e[3], w[3], x[3];
    for (int k = 0; k < 3; k++) e[k] = b[k] - a[k], w[k] = p[k] - a[k];
    double ee = co_dot(e, e), s = ee > 0.0 ? co_dot(w, e) / ee : 0.0;
    s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
    for (int k = 0; k < 3; k++) x[k] = w[k] - s * e[k];
    return co_dot(x, x);
}

/* Squared distance from p to the triangle v: inside the triangle's prism (barycentric coordinates
 * of the projection all >= 0) the plane's, else the nearest edge's. */
static inline double co_point_tri2(const double p[3], const double v[3][3]) {
    double best = fmin(co_point_segment2(p, v[0], v[1]), fmin(co_point_segment2(p, v[1], v[2]), co_point_segment2(p, v[2], v[0])));
    double e1[3], e2[3], w[3];
    for (int k = 0; k < 3; k++) e1[k] = v[1][k] - v[0][k], e2[k] = v[2][k] - v[0][k], w[k] = p[k] - v[0][k];
    const double a = co_dot(e1, e1), b = co_dot(e1, e2), c = co_dot(e2, e2), x = co_dot(w, e1), y = co_dot(w, e2);
    const double det = a * c - b * b;
    if (!(det > 1e-24 * a * c)) return best; /* flat: its edges */
    const double s = (c * x - b * y) / det, t = (a * y - b * x) / det;
    if (s < 0.0 || t < 0.0 || s + t > 1.0) return best;
    double f[3];
    for (int k = 0; k < 3; k++) f[k] = w[k] - s * e1[k] - t * e2[k];
    return fmin(best, co_dot(f, f));
}

static inline double co_point_box2(const double p[3], const double mn[3], const double mx[3]) {
    double r = 0.0;
    for (int k = 0; k < 3; k++) {
        double x = p[k] < mn[k] ? mn[k] - p[k] : p[k] > mx[k] ? p[k] - mx[k] : 0.0;
        r += x * x;
    }
    return r;
}

/* The primitive in the frame at o: a triangle's vertices, or a box's bounds (infinite ones stay). */
typedef struct co_local {
    double v[3][3], mn[3], mx[3];
    int box;
} co_local;

static inline co_local co_local_of(const co_prim* pr, const double o[3]) {
    co_local l;
    l.box = pr->box != NULL;
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) l.v[i][k] = pr->v[i][k] - o[k];
        l.mn[k] = pr->box ? pr->box->min[k] - o[k] : 0.0;
        l.mx[k] = pr->box ? pr->box->max[k] - o[k] : 0.0;
    }
    return l;
}

static inline double co_point2(const co_local* l, const double p[3]) {
    return l->box ? co_point_box2(p, l->mn, l->mx) : co_point_tri2(p, l->v);
}

/* Distance from the segment a + u D (u in [0, 1], in the frame of l) to the primitive: golden-section
 * search of the convex distance along it, ends included. */
static inline double co_segment_dist(const co_local* l, const double a[3], const double D[3]) {
    const double g = 0.6180339887498949;
    double lo = 0.0, hi = 1.0, x1 = hi - g, x2 = lo + g, p[3];
#define CO_AT(u, out)                                                   \
    do {                                                                \
        for (int k_ = 0; k_ < 3; k_++) p[k_] = a[k_] + (u) * D[k_];     \
        (out) = co_point2(l, p);                                        \
    } while (0)
    double f1, f2, f0, fe;
    CO_AT(x1, f1);
    CO_AT(x2, f2);
    CO_AT(0.0, f0);
    CO_AT(1.0, fe);
    double best = fmin(f0, fe);
    if (D[0] != 0.0 || D[1] != 0.0 || D[2] != 0.0)
        for (int it = 0; it < 80; it++) {
            if (f1 <= f2) {
                hi = x2, x2 = x1, f2 = f1, x1 = hi - g * (hi - lo);
                CO_AT(x1, f1);
            } else {
                lo = x1, x1 = x2, f1 = f2, x2 = lo + g * (hi - lo);
                CO_AT(x2, f2);
            }
        }
#undef CO_AT
    return sqrt(fmin(best, fmin(f1, f2)));
}

/* The frame of a pair: a triangle's first vertex, or the capsule's start for a box. */
static inline void co_origin(const co_prim* pr, const co_capsule* q, double o[3]) {
    for (int k = 0; k < 3; k++) o[k] = pr->box ? q->a[k] : pr->v[0][k];
}

/* Distance from the capsule's segment moved by t d to the primitive. */
static inline double co_dist_at(const co_prim* pr, const co_capsule* q, double t) {
    double o[3], a[3], D[3];
    co_origin(pr, q, o);
    co_local l = co_local_of(pr, o);
    for (int k = 0; k < 3; k++) a[k] = (q->a[k] - o[k]) + t * q->d[k], D[k] = q->b[k] - q->a[k];
    return co_segment_dist(&l, a, D);
}

/* A primitive's own size: a triangle's largest box side, a box's none (bvh.h). */
static inline double co_prim_size(const co_prim* pr) {
    if (pr->box) return 0.0;
    double s = 0.0;
    for (int k = 0; k < 3; k++)
        s = fmax(s, fmax(pr->v[0][k], fmax(pr->v[1][k], pr->v[2][k])) - fmin(pr->v[0][k], fmin(pr->v[1][k], pr->v[2][k])));
    return s;
}

/* First t in [0, tmax] at which the capsule touches the primitive (its segment's distance at most
 * r + eps: eps covers the oracle's own rounding, without which a segment, r = 0, would touch only
 * where the rounding gives exactly 0), or -1; *closest gets the least distance over [0, tmax].
 * Golden-section search for the closest approach (of a convex function of t), then bisection of
 * distance = r + eps before it. An infinite tmax is searched up to well past the primitive (a
 * billion units of travel past an unbounded box). */
static inline double co_time(const co_prim* pr, const co_capsule* q, double reach_end, double eps, double* closest) {
    const double f0 = co_dist_at(pr, q, 0.0), r = q->r + eps;
    *closest = f0;
    if (f0 <= r) return 0.0;
    if (!(q->tmax > 0.0)) return -1.0;
    const double dl = sqrt(co_dot(q->d, q->d));
    double end = q->tmax;
    if (!(end < 1e30)) {
        end = (f0 + q->r + reach_end + 1.0) * 4.0 / dl;
        int unbounded = 0; /* a box reaching to infinity may be met arbitrarily far */
        for (int k = 0; k < 3 && pr->box; k++) unbounded |= isinf(pr->box->min[k]) || isinf(pr->box->max[k]);
        if (unbounded) end = fmax(end, 1e9 / dl);
    }
    double a = 0.0, b = end, g = 0.6180339887498949;
    double x1 = b - g * (b - a), x2 = a + g * (b - a), d1 = co_dist_at(pr, q, x1), d2 = co_dist_at(pr, q, x2);
    for (int it = 0; it < 75; it++) {
        if (d1 <= d2) {
            b = x2, x2 = x1, d2 = d1, x1 = b - g * (b - a);
            d1 = co_dist_at(pr, q, x1);
        } else {
            a = x1, x1 = x2, d1 = d2, x2 = a + g * (b - a);
            d2 = co_dist_at(pr, q, x2);
        }
    }
    double tm = d1 <= d2 ? x1 : x2, fm = fmin(d1, d2);
    const double fe = co_dist_at(pr, q, end);
    if (fe < fm) tm = end, fm = fe;
    *closest = fmin(f0, fm);
    if (fm > r) return -1.0;
    double lo = 0.0, hi = tm;
    for (int it = 0; it < 64; it++) {
        const double mid = 0.5 * (lo + hi);
        if (co_dist_at(pr, q, mid) <= r)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

#endif
