/* Exact capsule sweep tests in double precision. A capsule (segment S from a to b, radius r)
 * moving by t d first touches a convex primitive when one of these does, each a closed form:
 * - an end of the segment, as a sphere of radius r (the sphere tests: face, edges and vertices of
 *   a triangle; faces, edges and corners of a box);
 * - an edge of the primitive against the segment's body: the segment's line and the edge's line
 *   at distance r, with the closest points inside both (the face of the swept polytope that the
 *   edge makes when swept back along the segment: a swept rectangle);
 * - a vertex of the primitive against the segment's body: a cylinder of radius r about the
 *   segment, entered between its ends (the vertex's point-segment time of impact).
 * At the first contact the closest points of segment and primitive are an end of the segment
 * (a sphere's contact), or a point inside the segment and an edge or a vertex of the primitive;
 * a point inside a face touched by the inside of the segment means the segment is parallel to the
 * face, and sliding both points along the segment reaches an end of the segment or an edge of the
 * face at the same distance. Each part's time is a real contact, so the least of them is the
 * first contact (Ericson, Real-Time Collision Detection 5.5: the swept volume's features, and
 * 5.1.9-5.1.10 for the start in contact). Every test starts from differences of the primitive's
 * and the capsule's coordinates (exact in double), as the sphere tests do. */
#include <math.h>

#include "bvh/engine/segment_dist.h"
#include "bvh/sweeps/sweep.h"

#define VL_NO_TIME (-1.0)

/* First t >= 0 at which the segment x0 + t d + u D (u in [0, 1]) comes within r of the edge
 * s E (s in [s_lo, s_hi], the bounds may be infinite; x0 taken from the edge's reference point)
 * with the closest points inside both: the plane of E and D offset by r, entered from outside,
 * at a point whose s and u (the lines' closest points: x . (D x n) / |n|^2 and x . (E x n) / |n|^2,
 * n = E x D) lie within the bounds. INFINITY when never (parallel lines included). */
static double edge_time(const double x0[3], const double d[3], const double E[3], const double D[3], double r,
                        double s_lo, double s_hi) {
    double n[3];
    vl_sd_cross(E, D, n);
    const double nn = vl_sd_dot(n, n);
    if (!(nn > 0.0)) return INFINITY;
    const double len = sqrt(nn), s0 = vl_sd_dot(x0, n), dn = vl_sd_dot(d, n), side = s0 > 0.0 ? 1.0 : -1.0;
    if (!(s0 * side > r * len) || !(dn * side < 0.0)) return INFINITY;
    const double t = (s0 * side - r * len) / (-dn * side);
    double x[3], gs[3], gu[3];
    for (int k = 0; k < 3; k++) x[k] = x0[k] + t * d[k];
    vl_sd_cross(D, n, gs), vl_sd_cross(E, n, gu);
    const double s = vl_sd_dot(x, gs) / nn, u = vl_sd_dot(x, gu) / nn;
    return s >= s_lo && s <= s_hi && u >= 0.0 && u <= 1.0 ? t : INFINITY;
}

/* Whether the segment [P, Q] grown by r and the triangle V have boxes apart on some axis, by more
 * than their rounding: then they do not touch. */
static int boxes_apart(const double P[3], const double Q[3], double r, const double V[3][3]) {
    for (int k = 0; k < 3; k++) {
        const double lo = fmin(V[0][k], fmin(V[1][k], V[2][k])), hi = fmax(V[0][k], fmax(V[1][k], V[2][k]));
        const double gap = fmax(lo - fmax(P[k], Q[k]), fmin(P[k], Q[k]) - hi);
        if (gap * (1.0 - 0x1p-50) > r) return 1;
    }
    return 0;
}

double vl_sweep_capsule_tri(const vl_sweep_query* q, const double v[3][3], double tmax) {
    const double r = q->r, *D = q->seg, *d = q->d;
    double P[3], Q[3], V[3][3], cs[3], ct[3], n[3], un[3];
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) V[i][k] = v[i][k] - v[0][k];
        P[k] = q->c[k] - v[0][k], Q[k] = P[k] + D[k];
    }
    const double nn = vl_sweep_tri_plane(V, n, un), sP = vl_sd_dot(P, un), sQ = vl_sd_dot(Q, un);
    /* touching at the start: unless the boxes are apart, or both ends lie beyond r on one side of
     * the plane (by more than the rounding of their distances) */
    const double round = 0x1p-48 * (fabs(P[0]) + fabs(P[1]) + fabs(P[2]) + fabs(Q[0]) + fabs(Q[1]) + fabs(Q[2]));
    const int sides_apart = nn > 0.0 && fmin(fabs(sP), fabs(sQ)) - round > r && (sP > 0.0) == (sQ > 0.0);
    if (!sides_apart && !boxes_apart(P, Q, r, V) && vl_sd_segment_tri(P, Q, V, cs, ct) <= r * r) return 0.0;
    if (sides_apart) {
        /* no point of the capsule comes within r of the plane before its nearer end does: never
         * when it moves away from the plane, not before tmax when that end comes later; where it
         * meets the face, the first contact */
        const double side = sP > 0.0 ? 1.0 : -1.0, speed = -side * vl_sd_dot(d, un);
        const double slow = 0x1p-50 * sqrt(vl_sd_dot(d, d));
        if (speed < -slow) return VL_NO_TIME;
        if (speed > slow) {
            const double gap = fmin(fabs(sP), fabs(sQ)) - r, t = gap / speed;
            if (t * (1.0 - 0x1p-40) > tmax) return VL_NO_TIME;
            for (int end = 0; end < 2; end++) {
                const double *e = end ? Q : P, s0 = end ? sQ : sP;
                if (fabs(s0) - r > gap) continue; /* the farther end */
                double p[3];
                for (int k = 0; k < 3; k++) p[k] = e[k] + t * d[k] - side * r * un[k];
                if (vl_sd_inside_tri(p, V, n)) return t <= tmax ? t : VL_NO_TIME;
            }
        }
    }
    double best = fmin(vl_sweep_sphere_tri_moving(P, d, r, V, n, nn, un, sP),
                       vl_sweep_sphere_tri_moving(Q, d, r, V, n, nn, un, sQ));
    for (int i = 0; i < 3; i++) {
        double E[3], x0[3], m[3];
        vl_sd_sub(V[(i + 1) % 3], V[i], E);
        vl_sd_sub(P, V[i], x0);
        vl_sd_sub(Q, V[i], m);
        best = fmin(best, edge_time(x0, d, E, D, r, 0.0, 1.0));
        /* vertex i within r of the segment: P + t d within r of V[i] - D + lambda D */
        best = fmin(best, vl_sweep_cylinder_time(m, d, D, r));
    }
    return best < INFINITY && best <= tmax ? best : VL_NO_TIME;
}

double vl_sweep_capsule_box(const vl_sweep_query* q, const double mn[3], const double mx[3], double tmax) {
    const double r = q->r, *a = q->c, *D = q->seg, *d = q->d;
    double b[3], u;
    for (int k = 0; k < 3; k++) b[k] = a[k] + D[k];
    if (vl_sd_segment_box(a, D, mn, mx, &u) <= r * r) return 0.0;
    double best = fmin(vl_sweep_sphere_box_time(a, d, r, mn, mx), vl_sweep_sphere_box_time(b, d, r, mn, mx));
    for (int k = 0; k < 3; k++) {
        /* the 4 edges along axis k at the bounds (bj, bl) of the other two: finite ones only, an
         * edge running along k over [mn_k, mx_k] (measured from a's coordinate) */
        const int j = (k + 1) % 3, l = (k + 2) % 3;
        double E[3] = {0.0, 0.0, 0.0}, x0[3];
        E[k] = 1.0;
        for (int sj = 0; sj < 2; sj++)
            for (int sl = 0; sl < 2; sl++) {
                const double bj = sj ? mx[j] : mn[j], bl = sl ? mx[l] : mn[l];
                if (!isfinite(bj) || !isfinite(bl)) continue;
                x0[k] = 0.0, x0[j] = a[j] - bj, x0[l] = a[l] - bl;
                best = fmin(best, edge_time(x0, d, E, D, r, mn[k] - a[k], mx[k] - a[k]));
            }
    }
    for (int corner = 0; corner < 8; corner++) {
        double m[3];
        int finite = 1;
        for (int k = 0; k < 3; k++) {
            const double c = (corner >> k) & 1 ? mx[k] : mn[k];
            finite &= isfinite(c) != 0;
            m[k] = b[k] - c;
        }
        if (finite) best = fmin(best, vl_sweep_cylinder_time(m, d, D, r));
    }
    return best < INFINITY && best <= tmax ? best : VL_NO_TIME;
}
