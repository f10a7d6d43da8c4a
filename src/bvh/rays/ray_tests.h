/* Scalar ray tests against nodes, triangles and boxes, and the ray record both traversals share.
 * The triangle and box tests do the same float operations in the same order as the SIMD kernels
 * (src/simd/bvh_kernels.h), so batched and single-ray answers agree bit for bit. */
#ifndef VL_BVH_RAYS_RAY_TESTS_H
#define VL_BVH_RAYS_RAY_TESTS_H

#include <float.h>
#include <math.h>

#include "bvh/tree/tree.h"
#include "core/valid.h"

/* A ray as the traversals keep it, 12 floats (48 bytes, 16-byte aligned), read as three quads:
 * [origin, tmin] [inv_dir, tmax] [dir, tmax]. tmax is kept twice so that the node test and the
 * triangle test each gather two quads; both copies shrink together as hits land. A retired ray
 * (any-hit after its hit, or an invalid ray) has tmax = -1, which no test passes. */
#define VL_RAYREC_FLOATS 12u
enum { VL_RR_TMIN = 3, VL_RR_INV = 4, VL_RR_TMAX = 7, VL_RR_DIR = 8, VL_RR_TMAX2 = 11 };

/* The direction every test uses: components under FLT_MIN in magnitude (denormals) count as 0,
 * so that box and triangle tests agree on a parallel axis. */
static inline void vl_bvh_ray_dir(const vl_ray* r, float d[3]) {
    for (int a = 0; a < 3; a++) d[a] = fabsf(r->dir[a]) < FLT_MIN ? copysignf(0.0f, r->dir[a]) : r->dir[a];
}

/* Fills a record from a valid ray; returns the mask of parallel axes (|dir| < FLT_MIN). */
static inline uint32_t vl_bvh_rayrec_set(float* rec, const vl_ray* r) {
    uint32_t parallel = 0;
    vl_bvh_ray_dir(r, rec + VL_RR_DIR);
    for (int a = 0; a < 3; a++) {
        float d = rec[VL_RR_DIR + a];
        rec[a] = r->origin[a];
        if (d == 0.0f) {
            rec[VL_RR_INV + a] = signbit(d) ? -INFINITY : INFINITY;
            parallel |= 1u << a;
        } else {
            rec[VL_RR_INV + a] = 1.0f / d;
        }
    }
    rec[VL_RR_TMIN] = r->tmin;
    /* no hit at t = INFINITY (a box at infinity): a hit's t is always finite */
    rec[VL_RR_TMAX] = rec[VL_RR_TMAX2] = r->tmax < FLT_MAX ? r->tmax : FLT_MAX;
    return parallel;
}

/* A harmless record for an invalid ray: finite, retired. */
static inline void vl_bvh_rayrec_retired(float* rec) {
    for (unsigned i = 0; i < VL_RAYREC_FLOATS; i++) rec[i] = 1.0f;
    rec[VL_RR_TMIN] = 0.0f;
    rec[VL_RR_TMAX] = rec[VL_RR_TMAX2] = -1.0f;
}

static inline vl_hit vl_bvh_miss(void) {
    vl_hit h = {INFINITY, VL_NO_HIT, 0.0f, 0.0f};
    return h;
}

/* Moller-Trumbore with the precomputed normal (Cramer's rule on o + t d = v0 + u e1 + v e2):
 * c = v0 - o, r = d x c, det = d . ng, t = ng . c / det, u = r . e2n / det, v = r . e1 / det.
 * Double-sided, barycentric tolerance VL_BVH_TRIANGLE_EPSILON. A ray in the triangle's plane, or
 * within about 2^-20 rad of it (|det| <= 2^-20 |ng|_1 |d|_1), misses: there the rule's
 * cancellations gave hits far outside the triangle (a ray in its plane "hit" at its origin). On
 * a hit with t in [tmin, tmax] writes t, u, v and returns 1. */
static inline int vl_bvh_ray_triangle(const float o[3], const float d[3], float tmin, float tmax,
                                      const vl_bvh_tri* tri, float* t_out, float* u_out, float* v_out) {
    const float *ng = tri->ng, *e1 = tri->e1, *e2n = tri->e2n;
    float det = (ng[0] * d[0] + ng[1] * d[1]) + ng[2] * d[2];
    float grazing = ((fabsf(ng[0]) + fabsf(ng[1])) + fabsf(ng[2])) * ((fabsf(d[0]) + fabsf(d[1])) + fabsf(d[2]));
    if (!(fabsf(det) > grazing * 0x1p-20f)) return 0;
    float inv = 1.0f / det;
    float cx = tri->v0[0] - o[0], cy = tri->v0[1] - o[1], cz = tri->v0[2] - o[2];
    float rx = d[1] * cz - d[2] * cy;
    float ry = d[2] * cx - d[0] * cz;
    float rz = d[0] * cy - d[1] * cx;
    float t = ((ng[0] * cx + ng[1] * cy) + ng[2] * cz) * inv;
    float u = ((rx * e2n[0] + ry * e2n[1]) + rz * e2n[2]) * inv;
    float v = ((rx * e1[0] + ry * e1[1]) + rz * e1[2]) * inv;
    const float eps = VL_BVH_TRIANGLE_EPSILON;
    if (u >= -eps && v >= -eps && u + v <= 1.0f + eps && t >= tmin && t <= tmax) {
        *t_out = t, *u_out = u, *v_out = v;
        return 1;
    }
    return 0;
}

/* Slab test of a record against a box (min and max as 3 floats each); *tnear is the entry t,
 * at least tmin. `parallel` says whether some inverse direction is infinite: that path never
 * forms inf * 0 (a parallel axis bounds nothing but needs the origin inside its slab). */
static inline int vl_bvh_ray_box(const float* rec, const float mn[3], const float mx[3], float tmax, int parallel,
                                 float* tnear) {
    float tn = rec[VL_RR_TMIN], tf = tmax;
    for (int a = 0; a < 3; a++) {
        float inv = rec[VL_RR_INV + a];
        float d1 = mn[a] - rec[a], d2 = mx[a] - rec[a];
        if (parallel && fabsf(inv) == INFINITY) {
            if (d1 > 0.0f || d2 < 0.0f) return 0;
            continue;
        }
        float t1 = d1 * inv, t2 = d2 * inv;
        float lo = t1 < t2 ? t1 : t2, hi = t1 < t2 ? t2 : t1;
        tn = tn > lo ? tn : lo;
        tf = tf < hi ? tf : hi;
    }
    *tnear = tn;
    return tn <= tf;
}

#endif
