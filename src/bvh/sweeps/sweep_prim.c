/* Exact sweep tests in double precision: a sphere against a triangle (face, edges, vertices of
 * the triangle grown by the radius) and a box (faces, edges, corners of the box rounded by the
 * radius); a box against a triangle (13 separating axes over time) and a box (3 axes over time);
 * the answers and contacts of every shape (the capsules' tests are in sweep_capsule.c).
 * Inputs are floats, exact in double, and every test starts from the differences of the
 * primitive's coordinates and the sweep's start (exact in double), so the only error is a few
 * double roundings of values of the pair's own size and travel (and the square root's
 * amplification at grazing contacts): far below the tolerance of bvh.h, which follows the same
 * sizes, never the distance from the origin. */
#include <float.h>
#include <math.h>

#include "bvh/engine/segment_dist.h"
#include "bvh/sweeps/sweep.h"
#include "core/valid.h"

#define VL_NO_TIME (-1.0)

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void sub3(const double a[3], const double b[3], double o[3]) {
    for (int k = 0; k < 3; k++) o[k] = a[k] - b[k];
}

static void cross3(const double a[3], const double b[3], double o[3]) {
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* ---- queries ---------------------------------------------------------------------------- */

int vl_sweep_sphere_valid(const vl_sphere_sweep* s) {
    for (int a = 0; a < 3; a++)
        if (!isfinite(s->center[a])) return 0;
    return vl_dir_valid(s->dir) && isfinite(s->radius) && s->radius >= 0.0f && s->tmax >= 0.0f; /* NaN fails */
}

int vl_sweep_box_valid(const vl_box_sweep* s) {
    for (int a = 0; a < 3; a++)
        if (!isfinite(s->box.min[a]) || !isfinite(s->box.max[a])) return 0;
    return vl_box_valid(&s->box) && vl_dir_valid(s->dir) && s->tmax >= 0.0f;
}

int vl_sweep_capsule_valid(const vl_capsule_sweep* s) {
    const vl_capsule* c = &s->capsule;
    for (int a = 0; a < 3; a++)
        if (!isfinite(c->a[a]) || !isfinite(c->b[a])) return 0;
    return vl_dir_valid(s->dir) && isfinite(c->radius) && c->radius >= 0.0f && s->tmax >= 0.0f; /* NaN fails */
}

static void query_dir(vl_sweep_query* q, const float d[3], float tmax) {
    for (int a = 0; a < 3; a++) q->d[a] = fabsf(d[a]) < FLT_MIN ? 0.0 : (double)d[a];
    q->tmax = tmax < FLT_MAX ? tmax : FLT_MAX; /* a hit's t is a finite float */
}

void vl_sweep_query_sphere(vl_sweep_query* q, const vl_sphere_sweep* s) {
    q->is_box = q->is_capsule = 0;
    q->r = s->radius;
    q->size = s->radius;
    q->scale = 0.0;
    for (int a = 0; a < 3; a++) {
        q->c[a] = s->center[a], q->h[a] = 0.0;
        q->scale = fmax(q->scale, fabs(q->c[a]) + q->r);
    }
    query_dir(q, s->dir, s->tmax);
}

void vl_sweep_query_box(vl_sweep_query* q, const vl_box_sweep* s) {
    q->is_box = 1, q->is_capsule = 0;
    q->r = 0.0;
    q->size = 0.0;
    q->scale = 0.0;
    for (int a = 0; a < 3; a++) {
        double lo = s->box.min[a], hi = s->box.max[a];
        q->c[a] = 0.5 * (lo + hi), q->h[a] = 0.5 * (hi - lo); /* exact in double */
        q->size = fmax(q->size, q->h[a]);
        q->scale = fmax(q->scale, fmax(fabs(lo), fabs(hi)));
    }
    query_dir(q, s->dir, s->tmax);
}

void vl_sweep_query_capsule(vl_sweep_query* q, const vl_capsule_sweep* s) {
    const vl_capsule* c = &s->capsule;
    if (c->a[0] == c->b[0] && c->a[1] == c->b[1] && c->a[2] == c->b[2]) { /* a sphere */
        vl_sphere_sweep sphere = {{c->a[0], c->a[1], c->a[2]}, c->radius, {s->dir[0], s->dir[1], s->dir[2]}, s->tmax};
        vl_sweep_query_sphere(q, &sphere);
        return;
    }
    q->is_box = 0, q->is_capsule = 1;
    q->r = c->radius;
    q->scale = 0.0;
    double len2 = 0.0;
    for (int a = 0; a < 3; a++) {
        q->c[a] = c->a[a], q->seg[a] = (double)c->b[a] - c->a[a]; /* exact in double */
        q->h[a] = 0.5 * fabs(q->seg[a]) + q->r;
        len2 += q->seg[a] * q->seg[a];
        q->scale = fmax(q->scale, fmax(fabs((double)c->a[a]), fabs((double)c->b[a])) + q->r);
    }
    q->size = q->r + 0.5 * sqrt(len2);
    query_dir(q, s->dir, s->tmax);
}

float vl_sweep_limit(double t) {
    if (!(t < FLT_MAX)) return FLT_MAX;
    float f = (float)t;
    return (double)f < t ? nextafterf(f, INFINITY) : f;
}

void vl_sweep_rec_set(float* rec, const vl_sweep_query* q) {
    /* the culling tests' float rounding stays under 2^-20 of the magnitudes they combine */
    double pad = q->scale * 0x1p-19 + 1e-20, centre[3];
    const int boxed = q->is_box || q->is_capsule; /* culled as the box h about centre */
    for (int a = 0; a < 3; a++) centre[a] = q->is_capsule ? q->c[a] + 0.5 * q->seg[a] : q->c[a];
    for (int a = 0; a < 3; a++) {
        rec[a] = (float)centre[a];
        if (q->d[a] == 0.0) {
            rec[VL_SR_INV + a] = FLT_MAX;
        } else {
            double inv = 1.0 / q->d[a];
            rec[VL_SR_INV + a] = fabs(inv) < FLT_MAX ? (float)inv : (float)copysign(FLT_MAX, inv);
        }
        double grow = (boxed ? q->h[a] : q->r) * (1.0 + 0x1p-19) + pad + fabs(centre[a] - rec[a]);
        /* a parallel axis's exit t is (slab face - c) * FLT_MAX: a centre this far inside keeps
         * it past tmax */
        if (q->d[a] == 0.0) grow += 4.0 * (double)vl_sweep_limit(q->tmax) / FLT_MAX;
        rec[VL_SR_GROW + a] = vl_sweep_limit(grow);
    }
    for (int a = 0; a < 3; a++) rec[VL_SR_DIR + a] = (float)q->d[a];
    rec[VL_SR_TMAX] = vl_sweep_limit(q->tmax);
    rec[VL_SR_INV + 3] = rec[VL_SR_GROW + 3] = 0.0f;
    rec[VL_SR_DIR + 3] = boxed ? 0.0f : rec[VL_SR_GROW];
}

void vl_sweep_tri_vertices(const vl_bvh* bvh, uint32_t first, uint32_t count, uint32_t i, double v[3][3]) {
    const float* rows = vl_bvh_leaf_geometry(vl_bvh_leaf_rows(bvh, first), count);
    for (int a = 0; a < 3; a++) {
        double v0 = rows[a * count + i], e1 = rows[(3 + a) * count + i], e2n = rows[(6 + a) * count + i];
        v[0][a] = v0, v[1][a] = v0 + e1, v[2][a] = v0 - e2n;
    }
}

/* ---- sphere ------------------------------------------------------------------------------ */

/* First t >= 0 at which the point m + t d enters the ball of radius r about the origin, from
 * outside (C > 0); INFINITY when never. The root C / (-B + sqrt(disc)) has no cancellation. */
double vl_sweep_ball_time(const double m[3], const double d[3], double r) {
    double A = dot3(d, d), B = dot3(m, d), C = dot3(m, m) - r * r, md[3];
    if (!(C > 0.0) || !(B < 0.0)) return INFINITY;
    /* B^2 - A C in a form without cancellation of the large terms */
    cross3(m, d, md);
    double disc = A * r * r - dot3(md, md);
    if (!(disc >= 0.0)) return INFINITY;
    return C / (-B + sqrt(disc));
}

/* First t >= 0 at which m + t d comes within r of the segment from the origin along e (m taken
 * from the segment's start), touching it between its ends; INFINITY when never. */
double vl_sweep_cylinder_time(const double m[3], const double d[3], const double e[3], double r) {
    double ee = dot3(e, e), me[3], de[3];
    if (!(ee > 0.0)) return INFINITY;
    cross3(m, e, me), cross3(d, e, de);
    double A = dot3(de, de), B = dot3(me, de), C = dot3(me, me) - r * r * ee, mde[3];
    if (!(A > 0.0) || !(C > 0.0) || !(B < 0.0)) return INFINITY;
    cross3(me, de, mde);
    double disc = A * r * r * ee - dot3(mde, mde);
    if (!(disc >= 0.0)) return INFINITY;
    double t = C / (-B + sqrt(disc)), p[3];
    for (int k = 0; k < 3; k++) p[k] = m[k] + t * d[k];
    double s = dot3(p, e);
    return s >= 0.0 && s <= ee ? t : INFINITY;
}

/* Whether p is within r of the box of the triangle v (a necessary condition for touching it). */
static int box_within(const double p[3], const double v[3][3], double r) {
    double w2 = 0.0;
    for (int k = 0; k < 3; k++) {
        double lo = v[0][k] < v[1][k] ? v[0][k] : v[1][k], hi = v[0][k] < v[1][k] ? v[1][k] : v[0][k];
        lo = v[2][k] < lo ? v[2][k] : lo, hi = v[2][k] > hi ? v[2][k] : hi;
        double x = p[k] < lo ? lo - p[k] : p[k] > hi ? p[k] - hi : 0.0;
        w2 += x * x;
    }
    return w2 <= r * r;
}

double vl_sweep_sphere_tri_moving(const double c[3], const double d[3], double r, const double v[3][3],
                                  const double n[3], double nn, const double un[3], double s0) {
    double best = INFINITY, m[3];
    if (nn > 0.0) { /* the face, offset by r toward the sphere */
        double dn = dot3(d, un), side = s0 > 0.0 ? 1.0 : -1.0;
        if (s0 * side > r && dn * side < 0.0) {
            double t = (s0 * side - r) / (-dn * side), p[3];
            for (int k = 0; k < 3; k++) p[k] = c[k] + t * d[k] - side * r * un[k];
            /* touching the face's interior first: no edge or vertex is touched before */
            if (vl_sd_inside_tri(p, v, n)) return t;
        }
    }
    for (int i = 0; i < 3; i++) {
        double e[3];
        sub3(c, v[i], m);
        sub3(v[(i + 1) % 3], v[i], e);
        double te = vl_sweep_cylinder_time(m, d, e, r), tv = vl_sweep_ball_time(m, d, r);
        best = te < best ? te : best;
        best = tv < best ? tv : best;
    }
    return best;
}

double vl_sweep_tri_plane(const double v[3][3], double n[3], double un[3]) {
    double e1[3], e2[3];
    sub3(v[1], v[0], e1), sub3(v[2], v[0], e2);
    cross3(e1, e2, n);
    double nn = dot3(n, n);
    un[0] = un[1] = un[2] = 0.0;
    if (nn > 0.0) {
        double len = sqrt(nn);
        for (int k = 0; k < 3; k++) un[k] = n[k] / len;
    }
    return nn;
}

static double sphere_tri(const vl_sweep_query* q, const double v[3][3], double tmax) {
    const double r = q->r;
    double n[3], un[3], m[3], nn = vl_sweep_tri_plane(v, n, un);
    sub3(q->c, v[0], m);
    const double s0 = nn > 0.0 ? dot3(m, un) : 0.0;
    if ((!(nn > 0.0) || fabs(s0) <= r) && box_within(q->c, v, r)) { /* within r of the plane and of the
                                                                         triangle's box: maybe touching already */
        double c[3], w[3];
        vl_sd_closest_on_tri(q->c, v, c);
        sub3(q->c, c, w);
        if (dot3(w, w) <= r * r) return 0.0;
    }
    double best = vl_sweep_sphere_tri_moving(q->c, q->d, r, v, n, nn, un, s0);
    return best < INFINITY && best <= tmax ? best : VL_NO_TIME;
}

/* Box bound k of axis a: mn for k = 0, mx for k = 1. */
static double bound(const double mn[3], const double mx[3], int a, int k) { return k ? mx[a] : mn[a]; }

double vl_sweep_sphere_box_time(const double c[3], const double d[3], double r, const double mn[3],
                                const double mx[3]) {
    double w2 = 0.0;
    for (int a = 0; a < 3; a++) {
        double x = c[a] < mn[a] ? mn[a] - c[a] : c[a] > mx[a] ? c[a] - mx[a] : 0.0;
        w2 += x * x;
    }
    if (w2 <= r * r) return 0.0;
    double best = INFINITY;
    for (int a = 0; a < 3; a++) {
        int j = (a + 1) % 3, k = (a + 2) % 3;
        /* faces normal to a */
        for (int side = 0; side < 2; side++) {
            double b = bound(mn, mx, a, side), gap = side ? c[a] - b : b - c[a], speed = side ? -d[a] : d[a];
            if (!isfinite(b) || !(gap > r) || !(speed > 0.0)) continue;
            double t = (gap - r) / speed, pj = c[j] + t * d[j], pk = c[k] + t * d[k];
            if (pj >= mn[j] && pj <= mx[j] && pk >= mn[k] && pk <= mx[k]) best = fmin(best, t);
        }
        /* edges along a: a circle in the (j, k) plane, entered within the edge's span on a */
        for (int sj = 0; sj < 2; sj++)
            for (int sk = 0; sk < 2; sk++) {
                double bj = bound(mn, mx, j, sj), bk = bound(mn, mx, k, sk);
                if (!isfinite(bj) || !isfinite(bk)) continue;
                double mj = c[j] - bj, mk = c[k] - bk;
                double A = d[j] * d[j] + d[k] * d[k], B = mj * d[j] + mk * d[k], C = mj * mj + mk * mk - r * r;
                if (!(A > 0.0) || !(C > 0.0) || !(B < 0.0)) continue;
                double cr = mj * d[k] - mk * d[j], disc = A * r * r - cr * cr;
                if (!(disc >= 0.0)) continue;
                double t = C / (-B + sqrt(disc)), pa = c[a] + t * d[a];
                if (pa >= mn[a] && pa <= mx[a]) best = fmin(best, t);
            }
    }
    for (int corner = 0; corner < 8; corner++) {
        double p[3], m[3];
        int finite = 1;
        for (int a = 0; a < 3; a++) p[a] = bound(mn, mx, a, (corner >> a) & 1), finite &= isfinite(p[a]) != 0;
        if (!finite) continue;
        sub3(c, p, m);
        best = fmin(best, vl_sweep_ball_time(m, d, r));
    }
    return best;
}

static double sphere_box(const vl_sweep_query* q, const double mn[3], const double mx[3], double tmax) {
    double t = vl_sweep_sphere_box_time(q->c, q->d, q->r, mn, mx);
    return t < INFINITY && t <= tmax ? t : VL_NO_TIME;
}

/* ---- box: separating axes over time ------------------------------------------------------ */

/* Narrows [*lo, *hi] to the times at which the box (half extents h at the origin, moving by t d)
 * and the point set whose projection on L is [pmin, pmax] overlap on axis L; records in *enter
 * the axis that last raised lo. Returns 0 when they never overlap on L. */
static int axis_times(const double L[3], const double h[3], const double d[3], double pmin, double pmax, double* lo,
                      double* hi, double enter[3]) {
    double rb = h[0] * fabs(L[0]) + h[1] * fabs(L[1]) + h[2] * fabs(L[2]);
    double a = pmin - rb, b = pmax + rb, dl = dot3(d, L);
    if (dl == 0.0) return a <= 0.0 && b >= 0.0;
    double t1 = a / dl, t2 = b / dl;
    if (dl < 0.0) {
        double x = t1;
        t1 = t2, t2 = x;
    }
    if (t1 > *lo) {
        *lo = t1;
        for (int k = 0; k < 3; k++) enter[k] = dl > 0.0 ? -L[k] : L[k];
    }
    *hi = fmin(*hi, t2);
    return *lo <= *hi;
}

/* Box against triangle; enter (may be NULL) receives the (unnormalized) normal of the axis of
 * first contact, facing against d. */
static double box_tri(const vl_sweep_query* q, const double v[3][3], double tmax, double* enter_out) {
    double w[3][3], e[3][3], L[3], lo = -INFINITY, hi = INFINITY, enter[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) sub3(v[i], q->c, w[i]);
    for (int i = 0; i < 3; i++) sub3(w[(i + 1) % 3], w[i], e[i]);
    double axes[13][3];
    int n = 0;
    for (int a = 0; a < 3; a++, n++)
        for (int k = 0; k < 3; k++) axes[n][k] = k == a;
    cross3(e[0], e[1], axes[n++]);
    for (int i = 0; i < 3; i++)
        for (int a = 0; a < 3; a++, n++) {
            double unit[3] = {a == 0, a == 1, a == 2};
            cross3(e[i], unit, axes[n]);
        }
    for (int i = 0; i < 13; i++) {
        for (int k = 0; k < 3; k++) L[k] = axes[i][k];
        if (!(dot3(L, L) > 0.0)) continue;
        double p0 = dot3(w[0], L), p1 = dot3(w[1], L), p2 = dot3(w[2], L);
        double pmin = fmin(p0, fmin(p1, p2)), pmax = fmax(p0, fmax(p1, p2));
        if (!axis_times(L, q->h, q->d, pmin, pmax, &lo, &hi, enter)) return VL_NO_TIME;
    }
    double t = lo > 0.0 ? lo : 0.0;
    if (!(t <= hi) || !(t <= tmax)) return VL_NO_TIME;
    if (enter_out)
        for (int k = 0; k < 3; k++) enter_out[k] = enter[k];
    return t;
}

static double box_box(const vl_sweep_query* q, const double mn[3], const double mx[3], double tmax, double* enter_out) {
    double lo = -INFINITY, hi = INFINITY, enter[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        double L[3] = {a == 0, a == 1, a == 2};
        if (!axis_times(L, q->h, q->d, mn[a] - q->c[a], mx[a] - q->c[a], &lo, &hi, enter)) return VL_NO_TIME;
    }
    double t = lo > 0.0 ? lo : 0.0;
    if (!(t <= hi) || !(t <= tmax)) return VL_NO_TIME;
    if (enter_out)
        for (int k = 0; k < 3; k++) enter_out[k] = enter[k];
    return t;
}

double vl_sweep_exact_tri(const vl_sweep_query* q, const double v[3][3], double tmax) {
    if (q->is_capsule) return vl_sweep_capsule_tri(q, v, tmax);
    return q->is_box ? box_tri(q, v, tmax, NULL) : sphere_tri(q, v, tmax);
}

double vl_sweep_exact_box(const vl_sweep_query* q, const double mn[3], const double mx[3], double tmax) {
    if (q->is_capsule) return vl_sweep_capsule_box(q, mn, mx, tmax);
    return q->is_box ? box_box(q, mn, mx, tmax, NULL) : sphere_box(q, mn, mx, tmax);
}

/* ---- answers and contacts ----------------------------------------------------------------- */

/* The tolerance's S for a hit of the primitive whose own size is prim_size (bvh.h). */
static double tolerance_size(const vl_sweep_query* q, double prim_size) { return q->size + prim_size; }

/* A triangle's own size: the largest side of its box. A box primitive has none: its tests'
 * differences are of the sweep's size and travel alone. */
static double tri_size(const double v[3][3]) {
    double s = 0.0;
    for (int k = 0; k < 3; k++)
        s = fmax(s, fmax(v[0][k], fmax(v[1][k], v[2][k])) - fmin(v[0][k], fmin(v[1][k], v[2][k])));
    return s;
}

/* The reported time: t backed off by a quarter of the tolerance, rounded down to a float. */
static float report_t(const vl_sweep_query* q, double t, double prim_size) {
    if (t <= 0.0) return 0.0f;
    double dlen = sqrt(dot3(q->d, q->d)), s = tolerance_size(q, prim_size);
    double back = t - 0x1p-22 * (s + dlen * t) / dlen;
    if (back <= 0.0) return 0.0f;
    float f = (float)back;
    if ((double)f > back) f = nextafterf(f, 0.0f);
    return f;
}

/* Unit normal n (from the primitive toward the shape), turned to face against d (see bvh.h). */
static void face_against(const vl_sweep_query* q, double n[3], float out[3]) {
    double dlen = sqrt(dot3(q->d, q->d)), u[3];
    for (int k = 0; k < 3; k++) u[k] = q->d[k] / dlen;
    double len = sqrt(dot3(n, n));
    if (len > 0.0)
        for (int k = 0; k < 3; k++) n[k] /= len;
    double along = dot3(n, u);
    if (len > 0.0 && along > 0.0) {
        for (int k = 0; k < 3; k++) n[k] -= along * u[k];
        len = sqrt(dot3(n, n));
        if (len > 1e-6)
            for (int k = 0; k < 3; k++) n[k] /= len;
        else
            len = 0.0;
    }
    if (!(len > 0.0))
        for (int k = 0; k < 3; k++) n[k] = -u[k];
    for (int k = 0; k < 3; k++) out[k] = (float)n[k];
}

/* Clips the polygon p (n points, room for 9) to x[axis] * sign <= limit; returns the new count. */
static int clip_polygon(double p[9][3], int n, int axis, double sign, double limit) {
    double out[9][3];
    int m = 0;
    for (int i = 0; i < n; i++) {
        const double *a = p[i], *b = p[(i + 1) % n];
        double da = a[axis] * sign - limit, db = b[axis] * sign - limit;
        if (da <= 0.0 && m < 9)
            for (int k = 0; k < 3; k++) out[m][k] = a[k];
        if (da <= 0.0) m += m < 9;
        if ((da < 0.0 && db > 0.0) || (da > 0.0 && db < 0.0)) {
            double s = da / (da - db);
            if (m < 9) {
                for (int k = 0; k < 3; k++) out[m][k] = a[k] + s * (b[k] - a[k]);
                m++;
            }
        }
    }
    for (int i = 0; i < m; i++)
        for (int k = 0; k < 3; k++) p[i][k] = out[i][k];
    return m;
}

/* Barycentric weights (of v1, v2) of a point of the triangle. */
static void barycentric(const double p[3], const double v[3][3], float* u, float* v_out) {
    double e1[3], e2[3], w[3];
    sub3(v[1], v[0], e1), sub3(v[2], v[0], e2), sub3(p, v[0], w);
    double a = dot3(e1, e1), b = dot3(e1, e2), c = dot3(e2, e2), x = dot3(w, e1), y = dot3(w, e2);
    double det = a * c - b * b;
    if (!(det > 0.0)) {
        *u = *v_out = 0.0f;
        return;
    }
    *u = (float)((c * x - b * y) / det);
    *v_out = (float)((a * y - b * x) / det);
}

/* The contact at t with p the primitive's closest point and n the shape's closest point less p,
 * taken in a frame near the pair so that it keeps the shape's precision: the normal along n. */
static void put_contact(const vl_sweep_query* q, double t, double n[3], const double p[3], vl_contact* contact) {
    if (sqrt(dot3(n, n)) <= 0x1p-30 * (q->size + sqrt(dot3(q->d, q->d)) * t)) n[0] = n[1] = n[2] = 0.0;
    face_against(q, n, contact->normal);
    for (int k = 0; k < 3; k++) contact->point[k] = (float)p[k];
}

/* The contact of a sphere at t with the closest point p: the normal from p to the centre, taken
 * in the frame of the start (p - c, then the travel). */
static void sphere_contact(const vl_sweep_query* q, double t, const double p[3], vl_contact* contact) {
    double n[3];
    for (int k = 0; k < 3; k++) n[k] = t * q->d[k] - (p[k] - q->c[k]);
    put_contact(q, t, n, p, contact);
}

/* A capsule at t against the triangle v: the closest points of its segment and the triangle,
 * found in the frame of v0. */
static void capsule_tri_answer(const vl_sweep_query* q, const double v[3][3], float tr, vl_hit* hit,
                               vl_contact* contact) {
    double P[3], Q[3], V[3][3], cs[3], ct[3], p[3], n[3];
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) V[i][k] = v[i][k] - v[0][k];
        P[k] = (q->c[k] - v[0][k]) + (double)tr * q->d[k];
        Q[k] = P[k] + q->seg[k];
    }
    vl_sd_segment_tri(P, Q, V, cs, ct);
    if (contact) {
        for (int k = 0; k < 3; k++) p[k] = v[0][k] + ct[k], n[k] = cs[k] - ct[k];
        put_contact(q, tr, n, p, contact);
    }
    barycentric(ct, V, &hit->u, &hit->v);
}

/* A capsule at t against the box [mn, mx]: the box's point closest to the segment. */
static void capsule_box_answer(const vl_sweep_query* q, const double mn[3], const double mx[3], float tr,
                               vl_contact* contact) {
    if (!contact) return;
    double s[3], p[3], n[3], u;
    for (int k = 0; k < 3; k++) s[k] = q->c[k] + (double)tr * q->d[k];
    vl_sd_segment_box(s, q->seg, mn, mx, &u);
    for (int k = 0; k < 3; k++) {
        double x = s[k] + u * q->seg[k];
        p[k] = x < mn[k] ? mn[k] : x > mx[k] ? mx[k] : x;
        n[k] = x - p[k];
    }
    put_contact(q, tr, n, p, contact);
}

static void tri_answer(const vl_sweep_query* q, const double v[3][3], double t, float tr, vl_hit* hit,
                       vl_contact* contact) {
    double p[3], n[3] = {0.0, 0.0, 0.0}, ct[3];
    if (!q->is_box) {
        for (int k = 0; k < 3; k++) ct[k] = q->c[k] + (double)tr * q->d[k];
        vl_sd_closest_on_tri(ct, v, p);
        vl_contact c;
        sphere_contact(q, tr, p, &c);
        if (contact) *contact = c;
    } else {
        box_tri(q, v, INFINITY, n);
        /* the triangle clipped to the box at t, grown by the tolerance: its centroid */
        double grow = 0x1p-18 * (tolerance_size(q, tri_size(v)) + sqrt(dot3(q->d, q->d)) * t) + 1e-30;
        double poly[9][3];
        int m = 3;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) poly[i][k] = v[i][k];
        for (int a = 0; a < 3 && m > 0; a++) {
            double centre = q->c[a] + (double)tr * q->d[a];
            m = clip_polygon(poly, m, a, 1.0, centre + q->h[a] + grow);
            if (m > 0) m = clip_polygon(poly, m, a, -1.0, -(centre - q->h[a] - grow));
        }
        if (m > 0) {
            for (int k = 0; k < 3; k++) {
                p[k] = 0.0;
                for (int i = 0; i < m; i++) p[k] += poly[i][k];
                p[k] /= m;
            }
        } else {
            for (int k = 0; k < 3; k++) ct[k] = q->c[k] + (double)tr * q->d[k];
            vl_sd_closest_on_tri(ct, v, p);
        }
        if (contact) {
            face_against(q, n, contact->normal);
            for (int k = 0; k < 3; k++) contact->point[k] = (float)p[k];
        }
    }
    barycentric(p, v, &hit->u, &hit->v);
}

static void box_answer(const vl_sweep_query* q, const double mn[3], const double mx[3], double t, float tr,
                       vl_contact* contact) {
    if (!contact) return;
    double p[3], ct[3];
    for (int k = 0; k < 3; k++) ct[k] = q->c[k] + (double)tr * q->d[k];
    if (!q->is_box) {
        for (int k = 0; k < 3; k++) p[k] = ct[k] < mn[k] ? mn[k] : ct[k] > mx[k] ? mx[k] : ct[k];
        sphere_contact(q, tr, p, contact);
        return;
    }
    double n[3] = {0.0, 0.0, 0.0}; /* stays 0 (then -dir) only if rounding loses the contact */
    box_box(q, mn, mx, INFINITY, n);
    double grow = 0x1p-18 * (tolerance_size(q, 0.0) + sqrt(dot3(q->d, q->d)) * t) + 1e-30;
    for (int k = 0; k < 3; k++) {
        double lo = fmax(ct[k] - q->h[k] - grow, mn[k]), hi = fmin(ct[k] + q->h[k] + grow, mx[k]);
        p[k] = lo <= hi ? 0.5 * (lo + hi) : (ct[k] < mn[k] ? mn[k] : mx[k]);
    }
    face_against(q, n, contact->normal);
    for (int k = 0; k < 3; k++) contact->point[k] = (float)p[k];
}

void vl_sweep_answer(const vl_bvh* bvh, const vl_sweep_query* q, const vl_sweep_best* best, vl_hit* hit,
                     vl_contact* contact) {
    if (bvh->kind == VL_BVH_TRIANGLES) {
        double v[3][3];
        const uint32_t count = best->at >> 16, i = best->at & 0xFFFFu;
        vl_sweep_tri_vertices(bvh, best->first, count, i, v);
        float tr = report_t(q, best->t, tri_size(v));
        hit->t = tr;
        if (q->is_capsule)
            capsule_tri_answer(q, v, tr, hit, contact);
        else
            tri_answer(q, v, best->t, tr, hit, contact);
        hit->prim = vl_bvh_leaf_prim(vl_bvh_leaf_rows(bvh, best->first), i);
    } else {
        const vl_bvh_box* b = &bvh->boxes[best->first];
        double mn[3], mx[3];
        for (int k = 0; k < 3; k++) mn[k] = b->min[k], mx[k] = b->max[k];
        float tr = report_t(q, best->t, 0.0);
        hit->t = tr, hit->prim = b->prim, hit->u = hit->v = 0.0f;
        if (q->is_capsule)
            capsule_box_answer(q, mn, mx, tr, contact);
        else
            box_answer(q, mn, mx, best->t, tr, contact);
    }
}
