/* Closest points in double precision: a point and a triangle, two segments, a segment and a
 * triangle, a segment and a box. The exact tests of the capsule overlaps, and the sweeps' tests of
 * a start in contact and their contact points, share them.
 * The caller passes coordinates taken near the pair (the triangle's first vertex or the segment's
 * start subtracted from floats: exact in double), so that every result carries a few double
 * roundings of the pair's own size, never of the distance from the origin. Triangles of zero area
 * are their edges; segments of zero length are points; box bounds may be infinite. */
#ifndef VL_BVH_ENGINE_SEGMENT_DIST_H
#define VL_BVH_ENGINE_SEGMENT_DIST_H

#include <math.h>

static inline double vl_sd_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void vl_sd_sub(const double a[3], const double b[3], double o[3]) {
    for (int k = 0; k < 3; k++) o[k] = a[k] - b[k];
}

static inline void vl_sd_cross(const double a[3], const double b[3], double o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* The point tests are inline: the sphere sweeps call them in their exact tests. */

/* Whether q (in the plane of the triangle v of normal n) is inside the triangle, edges included. */
static inline int vl_sd_inside_tri(const double q[3], const double v[3][3], const double n[3]) {
    for (int i = 0; i < 3; i++) {
        double e[3], w[3], c[3];
        vl_sd_sub(v[(i + 1) % 3], v[i], e), vl_sd_sub(q, v[i], w);
        vl_sd_cross(e, w, c);
        if (vl_sd_dot(c, n) < 0.0) return 0;
    }
    return 1;
}

/* The closest point to p of the segment [a, b]. */
static inline void vl_sd_closest_on_segment(const double p[3], const double a[3], const double b[3], double out[3]) {
    double e[3], w[3];
    vl_sd_sub(b, a, e), vl_sd_sub(p, a, w);
    double ee = vl_sd_dot(e, e), s = ee > 0.0 ? vl_sd_dot(w, e) / ee : 0.0;
    s = s < 0.0 ? 0.0 : s > 1.0 ? 1.0 : s;
    for (int k = 0; k < 3; k++) out[k] = a[k] + s * e[k];
}

/* The closest point to p of the triangle v (of a triangle of zero area: of its edges). */
static inline void vl_sd_closest_on_tri(const double p[3], const double v[3][3], double out[3]) {
    double e1[3], e2[3], n[3], w[3];
    vl_sd_sub(v[1], v[0], e1), vl_sd_sub(v[2], v[0], e2);
    vl_sd_cross(e1, e2, n);
    double nn = vl_sd_dot(n, n);
    if (nn > 0.0) {
        vl_sd_sub(p, v[0], w);
        double s = vl_sd_dot(w, n) / nn, q[3];
        for (int k = 0; k < 3; k++) q[k] = p[k] - s * n[k];
        if (vl_sd_inside_tri(q, v, n)) {
            for (int k = 0; k < 3; k++) out[k] = q[k];
            return;
        }
    }
    double best = INFINITY;
    for (int i = 0; i < 3; i++) {
        double c[3], w2[3];
        vl_sd_closest_on_segment(p, v[i], v[(i + 1) % 3], c);
        vl_sd_sub(p, c, w2);
        double d2 = vl_sd_dot(w2, w2);
        if (d2 < best) {
            best = d2;
            for (int k = 0; k < 3; k++) out[k] = c[k];
        }
    }
}

/* Squared distance between the segments [p1, q1] and [p2, q2] (Ericson, Real-Time Collision
 * Detection 5.1.9); c1 and c2 receive a closest pair. */
double vl_sd_segment_segment(const double p1[3], const double q1[3], const double p2[3], const double q2[3],
                             double c1[3], double c2[3]);

/* Squared distance between the segment [p, q] and the triangle v (Ericson 5.1.10: zero where the
 * segment crosses the triangle, else the least of the endpoints' distances to the face, where they
 * project inside it, and the segment's distances to the three edges); cs and ct receive a closest
 * pair, on the segment and on the triangle. */
double vl_sd_segment_tri(const double p[3], const double q[3], const double v[3][3], double cs[3], double ct[3]);

/* Squared distance between the segment p + u D (u in [0, 1]) and the box [mn, mx] (infinite
 * bounds allowed): on each stretch of u between the points where the segment crosses a slab's
 * face, the squared distance is one quadratic, minimized in closed form. *u receives a closest
 * point's u; the box's closest point is p + u D clamped to the box. */
double vl_sd_segment_box(const double p[3], const double D[3], const double mn[3], const double mx[3], double* u);

#endif
