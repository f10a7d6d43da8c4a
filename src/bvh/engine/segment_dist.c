/* Closest points in double precision (segment_dist.h). */
#include <math.h>

#include "bvh/engine/segment_dist.h"

static double clamp01(double x) { return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x; }

double vl_sd_segment_segment(const double p1[3], const double q1[3], const double p2[3], const double q2[3],
                             double c1[3], double c2[3]) {
    double d1[3], d2[3], r[3], s, t;
    vl_sd_sub(q1, p1, d1), vl_sd_sub(q2, p2, d2), vl_sd_sub(p1, p2, r);
    const double a = vl_sd_dot(d1, d1), e = vl_sd_dot(d2, d2), f = vl_sd_dot(d2, r);
    if (!(a > 0.0) && !(e > 0.0)) {
        s = t = 0.0;
    } else if (!(a > 0.0)) {
        s = 0.0, t = clamp01(f / e);
    } else {
        const double c = vl_sd_dot(d1, r);
        if (!(e > 0.0)) {
            t = 0.0, s = clamp01(-c / a);
        } else {
            /* a e - b^2 as |d1 x d2|^2: no cancellation of the large terms */
            double b = vl_sd_dot(d1, d2), x[3];
            vl_sd_cross(d1, d2, x);
            const double denom = vl_sd_dot(x, x);
            s = denom > 0.0 ? clamp01((b * f - c * e) / denom) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0)
                t = 0.0, s = clamp01(-c / a);
            else if (t > 1.0)
                t = 1.0, s = clamp01((b - c) / a);
        }
    }
    double w[3];
    for (int k = 0; k < 3; k++) c1[k] = p1[k] + s * d1[k], c2[k] = p2[k] + t * d2[k], w[k] = c1[k] - c2[k];
    return vl_sd_dot(w, w);
}

double vl_sd_segment_tri(const double p[3], const double q[3], const double v[3][3], double cs[3], double ct[3]) {
    double best = INFINITY, e1[3], e2[3], n[3];
    for (int i = 0; i < 3; i++) {
        double c1[3], c2[3], d2 = vl_sd_segment_segment(p, q, v[i], v[(i + 1) % 3], c1, c2);
        if (d2 < best) {
            best = d2;
            for (int k = 0; k < 3; k++) cs[k] = c1[k], ct[k] = c2[k];
        }
    }
    vl_sd_sub(v[1], v[0], e1), vl_sd_sub(v[2], v[0], e2);
    vl_sd_cross(e1, e2, n);
    const double nn = vl_sd_dot(n, n);
    if (!(nn > 0.0)) return best;
    double wp[3], wq[3];
    vl_sd_sub(p, v[0], wp), vl_sd_sub(q, v[0], wq);
    const double sp = vl_sd_dot(wp, n), sq = vl_sd_dot(wq, n);
    if (sp != sq && ((sp <= 0.0 && sq >= 0.0) || (sp >= 0.0 && sq <= 0.0))) { /* the segment meets the plane */
        double x[3], lam = sp / (sp - sq);
        for (int k = 0; k < 3; k++) x[k] = p[k] + lam * (q[k] - p[k]);
        if (vl_sd_inside_tri(x, v, n)) {
            for (int k = 0; k < 3; k++) cs[k] = ct[k] = x[k];
            return 0.0;
        }
    }
    for (int end = 0; end < 2; end++) { /* an endpoint over the face */
        const double *e = end ? q : p, s = end ? sq : sp;
        double f[3];
        for (int k = 0; k < 3; k++) f[k] = e[k] - s / nn * n[k];
        const double d2 = s * s / nn;
        if (d2 < best && vl_sd_inside_tri(f, v, n)) {
            best = d2;
            for (int k = 0; k < 3; k++) cs[k] = e[k], ct[k] = f[k];
        }
    }
    return best;
}

double vl_sd_segment_box(const double p[3], const double D[3], const double mn[3], const double mx[3], double* u) {
    double cut[8];
    int n = 0;
    cut[n++] = 0.0;
    for (int k = 0; k < 3; k++) {
        if (D[k] == 0.0) continue;
        for (int side = 0; side < 2; side++) {
            const double b = side ? mx[k] : mn[k], x = (b - p[k]) / D[k];
            if (isfinite(b) && x > 0.0 && x < 1.0) {
                int at = n++;
                for (; at > 0 && cut[at - 1] > x; at--) cut[at] = cut[at - 1];
                cut[at] = x;
            }
        }
    }
    cut[n++] = 1.0;
    double best = INFINITY, best_u = 0.0;
    for (int i = 0; i + 1 < n; i++) {
        /* each axis outside its slab below, above, or inside on the whole stretch */
        const double u0 = cut[i], u1 = cut[i + 1], mid = 0.5 * (u0 + u1);
        double off[3] = {0.0, 0.0, 0.0}, A = 0.0, B = 0.0;
        int out[3];
        for (int k = 0; k < 3; k++) {
            const double x = p[k] + mid * D[k];
            out[k] = x < mn[k] || x > mx[k];
            if (!out[k]) continue;
            off[k] = x < mn[k] ? p[k] - mn[k] : p[k] - mx[k];
            A += D[k] * D[k], B += off[k] * D[k];
        }
        double at = A > 0.0 ? -B / A : u0, d2 = 0.0;
        at = at < u0 ? u0 : at > u1 ? u1 : at;
        for (int k = 0; k < 3; k++)
            if (out[k]) d2 += (off[k] + at * D[k]) * (off[k] + at * D[k]);
        if (d2 < best) best = d2, best_u = at;
    }
    *u = best_u;
    return best;
}
