/* Brute-force oracle for the overlap queries, in double precision, and a checker of pair sets.
 * A verdict is 1 (the pair touches or overlaps: it must be reported), 0 (apart by more than the
 * stated tolerance, 8x over: it must not be) or -1 (within the tolerance: either answer is right,
 * and the pair is counted as skipped). The tolerance is the one bvh.h states, relative to the
 * pair's own sizes (the triangle's extent, the sphere's radius), never to the distance from the
 * origin. Shared by tests/test_overlaps.c, tests/test_tree_refit.c and fuzz/fuzz_overlaps.c. */
#ifndef VL_TESTS_OVERLAP_ORACLE_H
#define VL_TESTS_OVERLAP_ORACLE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <volley/volley.h>

#define ORACLE_TOUCH 1e-12                                 /* relative: double rounding of a touch */
#define ORACLE_APART (8.0 * (double)VL_BVH_OVERLAP_TOLERANCE) /* relative: surely apart past this */
#define ORACLE_FLOOR 0x1p-60 /* absolute: gaps under this may count as touching (bvh.h: float squares underflow) */

/* Triangles (xyz, indices) or boxes: the primitives as the caller gave them to the build. */
typedef struct oracle_scene {
    const float* xyz;
    const uint32_t* indices;
    const vl_aabb* boxes;
    uint32_t count;
} oracle_scene;

/* The verdict on a gap (a distance; <= 0 when touching) for a pair whose tolerance scale is s. */
static inline int oracle_classify(double gap, double scale) {
    if (gap <= ORACLE_TOUCH * scale) return 1;
    if (gap > ORACLE_APART * scale && gap > ORACLE_FLOOR) return 0;
    return -1;
}

static inline int oracle_query_box_valid(const vl_aabb* q) {
    for (int a = 0; a < 3; a++)
        if (isnan(q->min[a]) || isnan(q->max[a]) || q->min[a] > q->max[a]) return 0;
    return 1;
}

static inline int oracle_query_sphere_valid(const vl_sphere* q) {
    for (int a = 0; a < 3; a++)
        if (!isfinite(q->center[a])) return 0;
    return isfinite(q->radius) && q->radius >= 0.0f;
}

/* The largest side of the triangle's box: the scale of its tolerance. */
static inline double oracle_tri_extent(const double v[3][3]) {
    double e = 0;
    for (int a = 0; a < 3; a++)
        e = fmax(e, fmax(v[0][a], fmax(v[1][a], v[2][a])) - fmin(v[0][a], fmin(v[1][a], v[2][a])));
    return e;
}

/* The separating axis test in double: the largest gap between the projections of box and
 * triangle over the 13 axes, as a distance along each unit axis (<= 0: they touch or overlap).
 * Where a box axis separates (exactly: differences of floats), that gap alone, and *by_box_axis
 * is set (may be NULL). */
static inline double oracle_box_tri_gap(const double v[3][3], const vl_aabb* q, int* by_box_axis) {
    double lo[3], hi[3], gap = -INFINITY;
    for (int a = 0; a < 3; a++) {
        lo[a] = fmin(v[0][a], fmin(v[1][a], v[2][a]));
        hi[a] = fmax(v[0][a], fmax(v[1][a], v[2][a]));
        gap = fmax(gap, fmax(lo[a] - (double)q->max[a], (double)q->min[a] - hi[a]));
    }
    if (by_box_axis) *by_box_axis = gap > 0;
    if (gap > 0) return gap;
    double c[3], h[3], d[3][3];
    for (int a = 0; a < 3; a++) {
        double bmin = fmax(q->min[a], lo[a]), bmax = fmin(q->max[a], hi[a]);
        c[a] = 0.5 * (bmin + bmax), h[a] = 0.5 * (bmax - bmin);
    }
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++) d[i][a] = v[i][a] - c[a];
    double e[3][3], axes[10][3];
    for (int a = 0; a < 3; a++) e[0][a] = v[1][a] - v[0][a], e[1][a] = v[2][a] - v[1][a], e[2][a] = v[0][a] - v[2][a];
    axes[0][0] = e[0][1] * e[1][2] - e[0][2] * e[1][1];
    axes[0][1] = e[0][2] * e[1][0] - e[0][0] * e[1][2];
    axes[0][2] = e[0][0] * e[1][1] - e[0][1] * e[1][0];
    for (int k = 0; k < 3; k++) {
        const double* f = e[k];
        double* x = axes[1 + 3 * k];
        x[0] = 0, x[1] = -f[2], x[2] = f[1];
        x = axes[2 + 3 * k];
        x[0] = f[2], x[1] = 0, x[2] = -f[0];
        x = axes[3 + 3 * k];
        x[0] = -f[1], x[1] = f[0], x[2] = 0;
    }
    for (int k = 0; k < 10; k++) {
        const double* L = axes[k];
        double l2 = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
        if (!(l2 > 0)) continue;
        double pmin = INFINITY, pmax = -INFINITY;
        for (int i = 0; i < 3; i++) {
            double p = L[0] * d[i][0] + L[1] * d[i][1] + L[2] * d[i][2];
            pmin = fmin(pmin, p), pmax = fmax(pmax, p);
        }
        double r = fabs(L[0]) * h[0] + fabs(L[1]) * h[1] + fabs(L[2]) * h[2];
        gap = fmax(gap, fmax(pmin - r, -pmax - r) / l2);
    }
    return gap;
}

/* A pair apart along a box axis is never touching, however small its gap (the gap is exact). */
static inline int oracle_box_tri(const double v[3][3], const vl_aabb* q) {
    int by_box_axis;
    double gap = oracle_box_tri_gap(v, q, &by_box_axis), s = oracle_tri_extent(v);
    int verdict = oracle_classify(gap, s);
    return by_box_axis && verdict == 1 ? -1 : verdict;
}

/* Distance from the origin to segment p + t e, t in [0, 1]. */
static inline double oracle_segment(const double p[3], const double e[3]) {
    double ee = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
    double t = ee > 0 ? -(p[0] * e[0] + p[1] * e[1] + p[2] * e[2]) / ee : 0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    double x = p[0] + t * e[0], y = p[1] + t * e[1], z = p[2] + t * e[2];
    return sqrt(x * x + y * y + z * z);
}

static inline void oracle_cross(const double a[3], const double b[3], double o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1], o[1] = a[2] * b[0] - a[0] * b[2], o[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double oracle_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* The distance from the sphere's center to the triangle, less its radius. */
static inline double oracle_sphere_tri_gap(const double v[3][3], const vl_sphere* q) {
    double p[3][3], e[3][3];
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++) p[i][a] = v[i][a] - q->center[a];
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++) e[i][a] = p[(i + 1) % 3][a] - p[i][a];
    double d = fmin(oracle_segment(p[0], e[0]), fmin(oracle_segment(p[1], e[1]), oracle_segment(p[2], e[2])));
    double n[3], x[3];
    oracle_cross(e[0], e[1], n);
    double nn = oracle_dot(n, n);
    if (nn > 0) {
        int inside = 1;
        for (int i = 0; i < 3; i++) {
            oracle_cross(p[i], p[(i + 1) % 3], x);
            inside &= oracle_dot(n, x) >= 0;
        }
        if (inside) d = fmin(d, fabs(oracle_dot(n, p[0])) / sqrt(nn));
    }
    return d - q->radius;
}

static inline int oracle_sphere_tri(const double v[3][3], const vl_sphere* q) {
    return oracle_classify(oracle_sphere_tri_gap(v, q), q->radius + oracle_tri_extent(v));
}

static inline int oracle_box_box(const vl_aabb* p, const vl_aabb* q) {
    for (int a = 0; a < 3; a++)
        if (!(q->min[a] <= p->max[a] && q->max[a] >= p->min[a])) return 0;
    return 1;
}

static inline double oracle_sphere_box_gap(const vl_aabb* p, const vl_sphere* q) {
    double d2 = 0;
    for (int a = 0; a < 3; a++) {
        double m = fmax(fmax((double)p->min[a] - q->center[a], (double)q->center[a] - p->max[a]), 0.0);
        d2 += m * m;
    }
    return sqrt(d2) - q->radius;
}

static inline int oracle_sphere_box(const vl_aabb* p, const vl_sphere* q) {
    return oracle_classify(oracle_sphere_box_gap(p, q), q->radius);
}

static inline void oracle_triangle(const oracle_scene* sc, uint32_t i, double v[3][3]) {
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 3; a++) v[k][a] = sc->xyz[3 * (size_t)sc->indices[3 * (size_t)i + k] + a];
}

/* A triangle's box and its largest side, kept for the brute force's first look at each pair. */
typedef struct oracle_bounds {
    double lo[3], hi[3], ext;
} oracle_bounds;

/* The bounds of every triangle of a triangle scene (NULL for boxes); free() them. */
static inline oracle_bounds* oracle_scene_bounds(const oracle_scene* sc) {
    if (sc->boxes) return NULL;
    oracle_bounds* b = (oracle_bounds*)malloc(sizeof(oracle_bounds) * (sc->count ? sc->count : 1));
    for (uint32_t i = 0; b && i < sc->count; i++) {
        double v[3][3];
        oracle_triangle(sc, i, v);
        b[i].ext = oracle_tri_extent(v);
        for (int a = 0; a < 3; a++) {
            b[i].lo[a] = fmin(v[0][a], fmin(v[1][a], v[2][a]));
            b[i].hi[a] = fmax(v[0][a], fmax(v[1][a], v[2][a]));
        }
    }
    return b;
}

/* Whether the query (box, else sphere) is further than `margin` from the triangle's box: then
 * further from the triangle too. Plain comparisons: it runs for every pair of a brute force. */
static inline int oracle_bounds_apart(const oracle_bounds* b, const vl_aabb* box, const vl_sphere* sphere,
                                      double margin) {
    if (box) {
        for (int a = 0; a < 3; a++)
            if (b->lo[a] - box->max[a] > margin || box->min[a] - b->hi[a] > margin) return 1;
        return 0;
    }
    double d2 = 0, reach = sphere->radius + margin;
    for (int a = 0; a < 3; a++) {
        double c = sphere->center[a], m = b->lo[a] - c > c - b->hi[a] ? b->lo[a] - c : c - b->hi[a];
        if (m > reach) return 1;
        if (m > 0) d2 += m * m;
    }
    return d2 > reach * reach;
}

/* oracle_verdict's 0 when the bounds already prove it (apart past the tolerance), else -2. */
static inline int oracle_quick_verdict(const oracle_bounds* b, const vl_aabb* box, const vl_sphere* sphere) {
    double scale = box ? b->ext : sphere->radius + b->ext;
    double margin = ORACLE_APART * scale > ORACLE_FLOOR ? ORACLE_APART * scale : ORACLE_FLOOR;
    return oracle_bounds_apart(b, box, sphere, margin) ? 0 : -2;
}

/* Verdict of query q (a box when box != NULL, else the sphere) against primitive i. */
static inline int oracle_verdict(const oracle_scene* sc, uint32_t i, const vl_aabb* box, const vl_sphere* sphere) {
    if (sc->boxes) return box ? oracle_box_box(&sc->boxes[i], box) : oracle_sphere_box(&sc->boxes[i], sphere);
    double v[3][3];
    oracle_triangle(sc, i, v);
    return box ? oracle_box_tri(v, box) : oracle_sphere_tri(v, sphere);
}

static int oracle_pair_cmp(const void* x, const void* y) {
    const vl_pair *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : (a->b > b->b);
}

static inline void oracle_sort(vl_pair* pairs, uint32_t n) { qsort(pairs, n, sizeof(vl_pair), oracle_pair_cmp); }

/* Sorted copy of a buffer's pairs [from, count); free() it. */
static inline vl_pair* oracle_sorted_pairs(const vl_pair_buffer* b, uint32_t from, uint32_t* n) {
    *n = b->count - from;
    vl_pair* p = (vl_pair*)malloc(sizeof(vl_pair) * (*n ? *n : 1));
    if (*n) memcpy(p, b->pairs + from, sizeof(vl_pair) * *n);
    oracle_sort(p, *n);
    return p;
}

static inline int oracle_same_pairs(const vl_pair* a, uint32_t na, const vl_pair* b, uint32_t nb) {
    return na == nb && (na == 0 || memcmp(a, b, sizeof(vl_pair) * na) == 0);
}

/* Result of checking one batch's pairs against the oracle. */
typedef struct oracle_report {
    uint64_t pairs, expected, skipped;
    uint64_t missing, extra, duplicate, invalid_answered;
    uint32_t first_bad_query, first_bad_prim;
} oracle_report;

/* Checks pairs (sorted) for n queries (boxes or spheres): every pair a must-report one or within
 * the tolerance, every must-report pair there, none twice, none for an invalid query. */
static inline oracle_report oracle_check(const oracle_scene* sc, const vl_aabb* boxes, const vl_sphere* spheres,
                                         uint32_t n, const vl_pair* pairs, uint32_t np) {
    oracle_report r;
    memset(&r, 0, sizeof r);
    r.first_bad_query = r.first_bad_prim = UINT32_MAX;
    r.pairs = np;
    uint8_t* seen = (uint8_t*)calloc(sc->count ? sc->count : 1, 1);
    oracle_bounds* bounds = oracle_scene_bounds(sc);
    uint32_t at = 0;
    for (uint32_t q = 0; q < n; q++) {
        const vl_aabb* box = boxes ? &boxes[q] : NULL;
        const vl_sphere* sphere = spheres ? &spheres[q] : NULL;
        int valid = box ? oracle_query_box_valid(box) : oracle_query_sphere_valid(sphere);
        uint32_t begin = at;
        for (; at < np && pairs[at].a == q; at++) {
            uint32_t p = pairs[at].b;
            int bad = 0;
            if (!valid) r.invalid_answered++, bad = 1;
            else if (p >= sc->count) r.extra++, bad = 1;
            else if (seen[p]) r.duplicate++, bad = 1;
            else {
                seen[p] = 1;
                if (oracle_verdict(sc, p, box, sphere) == 0) r.extra++, bad = 1;
            }
            if (bad && r.first_bad_query == UINT32_MAX) r.first_bad_query = q, r.first_bad_prim = p;
        }
        if (valid)
            for (uint32_t i = 0; i < sc->count; i++) {
                int v = bounds ? oracle_quick_verdict(&bounds[i], box, sphere) : -2;
                if (v == -2) v = oracle_verdict(sc, i, box, sphere);
                r.expected += v == 1;
                r.skipped += v == -1;
                if (v == 1 && !seen[i]) {
                    r.missing++;
                    if (r.first_bad_query == UINT32_MAX) r.first_bad_query = q, r.first_bad_prim = i;
                }
            }
        for (uint32_t k = begin; k < at; k++)
            if (pairs[k].b < sc->count) seen[pairs[k].b] = 0;
    }
    if (at != np) r.extra += np - at; /* pairs of queries past n, or out of order */
    free(seen);
    free(bounds);
    return r;
}

#endif
