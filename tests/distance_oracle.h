/* Distances in double for the brute-force oracles of the sweeps and the closest points: point to
 * segment, to triangle (Ericson, Real-Time Collision Detection 5.1.5: the Voronoi regions; the
 * face point taken only for a triangle with a clear normal, the three edges always, so that a
 * point, segment or sliver is what it is) and to box. */
#ifndef VL_TESTS_DISTANCE_ORACLE_H
#define VL_TESTS_DISTANCE_ORACLE_H

#include <math.h>
#include <string.h>

#include <volley/types.h>

static inline double odist_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* Squared distance from p to segment ab; its closest point in c (c may be NULL). */
static inline double odist_segment2(const double p[3], const double a[3], const double b[3], double c[3]) {
    double e[3], w[3];
    for (int k = 0; k < 3; k++) e[k] = b[k] - a[k], w[k] = p[k] - a[k];
    double ee = odist_dot(e, e), s = ee > 0 ? odist_dot(w, e) / ee : 0;
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    double r = 0;
    for (int k = 0; k < 3; k++) {
        double q = a[k] + s * e[k];
        if (c) c[k] = q;
        r += (p[k] - q) * (p[k] - q);
    }
    return r;
}

/* Squared distance from p to triangle t; its closest point in c (c may be NULL). */
static inline double odist_triangle2(const double p[3], const double t[3][3], double c[3]) {
    double best = INFINITY, q[3];
    for (int i = 0; i < 3; i++) {
        double d = odist_segment2(p, t[i], t[(i + 1) % 3], q);
        if (d < best) {
            best = d;
            if (c) memcpy(c, q, sizeof q);
        }
    }
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int k = 0; k < 3; k++)
        ab[k] = t[1][k] - t[0][k], ac[k] = t[2][k] - t[0][k], ap[k] = p[k] - t[0][k], bp[k] = p[k] - t[1][k],
        cp[k] = p[k] - t[2][k];
    double d1 = odist_dot(ab, ap), d2 = odist_dot(ac, ap), d3 = odist_dot(ab, bp), d4 = odist_dot(ac, bp);
    double d5 = odist_dot(ab, cp), d6 = odist_dot(ac, cp);
    double vc = d1 * d4 - d3 * d2, vb = d5 * d2 - d1 * d6, va = d3 * d6 - d5 * d4;
    if (d1 <= 0 && d2 <= 0) return best; /* vertex and edge regions: the edges gave them */
    if (d3 >= 0 && d4 <= d3) return best;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return best;
    if (d6 >= 0 && d5 <= d6) return best;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return best;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) return best;
    double den = va + vb + vc, n[3];
    n[0] = ab[1] * ac[2] - ab[2] * ac[1], n[1] = ab[2] * ac[0] - ab[0] * ac[2], n[2] = ab[0] * ac[1] - ab[1] * ac[0];
    if (!(odist_dot(n, n) > 1e-10 * odist_dot(ab, ab) * odist_dot(ac, ac)) || !(den > 0)) return best;
    double v = vb / den, w = vc / den, r = 0;
    for (int k = 0; k < 3; k++) {
        q[k] = t[0][k] + ab[k] * v + ac[k] * w;
        r += (q[k] - p[k]) * (q[k] - p[k]);
    }
    if (r < best) {
        best = r;
        if (c) memcpy(c, q, sizeof q);
    }
    return best;
}

/* Squared distance from p to a solid box (0 inside). */
static inline double odist_box2(const double p[3], const vl_aabb* b) {
    double r = 0;
    for (int k = 0; k < 3; k++) {
        double x = p[k] < b->min[k] ? b->min[k] - p[k] : p[k] > b->max[k] ? p[k] - b->max[k] : 0;
        r += x * x;
    }
    return r;
}

#endif
