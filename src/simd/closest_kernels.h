/* Closest-point kernels: lower bounds of the squared distance from one point to the 4 children of
 * a node4 (lanes = children) and to VL_BW triangles of a leaf's rows (lanes = triangles), in
 * float, from differences of the point's and the bounds' coordinates, so that their rounding is
 * relative to the distances and the triangles' sizes, never to the distance from the origin. The
 * point is clean (finite: validated at the API edge); masked lanes may hold anything. */
#ifndef VL_SIMD_CLOSEST_KERNELS_H
#define VL_SIMD_CLOSEST_KERNELS_H

#include <float.h>
#include <stdint.h>

#include "simd/bvh_kernels.h"
#include "simd/simd.h"

/* The squared distance from p (broadcast) to the 4 children's boxes of a node4 (its bounds, min
 * x y z then max x y z, lane = child, 16-byte aligned; its child indices, `empty` for none), each
 * at most 5 * 2^-24 of itself above the exact one (3 differences, 3 squares, 2 sums): the keys;
 * returns the bits of the non-empty children whose key is at most limit. */
VL_INLINE uint32_t vl_cp4_node(const vl_f4 p[3], vl_f4 limit, const float bounds[6][4], const uint32_t child[4],
                               uint32_t empty, float keys[4]) {
    vl_f4 d2 = vl_f4_zero();
    for (int a = 0; a < 3; a++) {
        vl_f4 lo = vl_f4_load(bounds[a]), hi = vl_f4_load(bounds[3 + a]);
        vl_f4 g = vl_f4_max(vl_f4_max(vl_f4_sub(lo, p[a]), vl_f4_sub(p[a], hi)), vl_f4_zero());
        d2 = vl_f4_add(d2, vl_f4_mul(g, g));
    }
    vl_f4_storeu(keys, d2);
    /* an empty child's box lies at +infinity: its key is infinite, which an infinite limit takes */
    vl_i4 none = vl_i4_eq(vl_i4_loadu(child), vl_i4_set1((int32_t)empty));
    return vl_f4_bits(vl_f4_andnot(vl_f4_le(d2, limit), vl_i4_as_f(none)));
}

VL_INLINE vl_fw vl_cpw_sqrt(vl_fw a) {
#if VL_BW == 4
    return simde_mm_sqrt_ps(a);
#else
    return simde_mm256_sqrt_ps(a);
#endif
}

VL_INLINE vl_fw vl_cpw_dot(const vl_fw a[3], const vl_fw b[3]) {
    return vl_fw_add(vl_fw_add(vl_fw_mul(a[0], b[0]), vl_fw_mul(a[1], b[1])), vl_fw_mul(a[2], b[2]));
}

VL_INLINE void vl_cpw_cross(const vl_fw a[3], const vl_fw b[3], vl_fw o[3]) {
    o[0] = vl_fw_sub(vl_fw_mul(a[1], b[2]), vl_fw_mul(a[2], b[1]));
    o[1] = vl_fw_sub(vl_fw_mul(a[2], b[0]), vl_fw_mul(a[0], b[2]));
    o[2] = vl_fw_sub(vl_fw_mul(a[0], b[1]), vl_fw_mul(a[1], b[0]));
}

/* The relative slack of the box bound below: it covers the rounding of the 3 corners' differences
 * from the point (v0 - p, then + e1 and - e2n: 2^-23 of the largest), with room. */
#define VL_CP_TRI_SLACK 0x1p-21f

/* The slack of the prism bound below, in units of (1 + kappa) U, where U is the point's largest
 * coordinate difference from v0 plus the edges' largest components and kappa the edges' largest
 * components' product over the normal's length (about 2 for a well-shaped triangle, 2^20 for the
 * thinnest one that keeps a normal): the float normal is off the exact one by under 2^-21 of
 * that product, the other roundings are under 2^-21 U, and each of the plane's and the edges'
 * distances below is computed within 2^-19 (1 + kappa) U. */
#define VL_CP_PRISM_SLACK 0x1p-17f
/* and 2^-60 more, for products that underflow: a distance under that may get no bound */
#define VL_CP_PRISM_FLOOR 0x1p-60f

/* A lower bound of the squared distance from p (broadcast) to triangles [b, b + VL_BW) of the
 * leaf of `count` whose geometry rows start at geo (v0, e1, e2n, ng as x y z, count floats
 * apart), the larger of two, each never past the exact distance to the tree's triangle (v0,
 * v0 + e1, v0 - e2n exactly) by more than the final squares' and sums' rounding (5 * 2^-24 of
 * itself):
 * - the distance to the triangle's box, its corners taken relative to p, each gap shrunk by
 *   VL_CP_TRI_SLACK of the box's farthest bound from p;
 * - the distance to the prism the triangle bounds: h^2 + g^2, h the distance to its plane and g
 *   the largest distance outside the planes through its edges perpendicular to it (the exact
 *   distance wherever the closest point lies on the face or inside an edge), each shrunk by
 *   VL_CP_PRISM_SLACK (1 + kappa) U + VL_CP_PRISM_FLOOR; 0 for a triangle without a normal (ng zero: zero area or an
 *   angle under about 2^-20 rad), and where the squares leave float range. */
VL_INLINE vl_fw vl_cpw_tri_bound(const float* geo, uint32_t count, uint32_t b, const vl_fw p[3]) {
    const vl_fw zero = vl_fw_zero();
    /* lanes past the leaf read the next rows (the next leaf's prim row: denormal floats, which
     * cost x86 a microcode assist per operation): zero */
    const vl_fw live = count - b < VL_BW ? vl_fw_first(count - b) : vl_fw_true();
    vl_fw box = zero, P[3], e1[3], e2[3], n[3], m1 = zero, m2 = zero, pm = zero;
    for (int a = 0; a < 3; a++) {
        vl_fw a0 = vl_fw_sub(vl_fw_and(live, vl_fw_loadu(geo + a * count + b)), p[a]);
        e1[a] = vl_fw_and(live, vl_fw_loadu(geo + (3 + a) * count + b));
        vl_fw e2n = vl_fw_and(live, vl_fw_loadu(geo + (6 + a) * count + b));
        n[a] = vl_fw_and(live, vl_fw_loadu(geo + (9 + a) * count + b));
        vl_fw a1 = vl_fw_add(a0, e1[a]), a2 = vl_fw_sub(a0, e2n);
        vl_fw lo = vl_fw_min(a0, vl_fw_min(a1, a2)), hi = vl_fw_max(a0, vl_fw_max(a1, a2));
        vl_fw far = vl_fw_max(vl_fw_abs(lo), vl_fw_abs(hi));
        vl_fw g = vl_fw_sub(vl_fw_max(lo, vl_fw_sub(zero, hi)), vl_fw_mul(far, vl_fw_set1(VL_CP_TRI_SLACK)));
        g = vl_fw_max(g, zero);
        box = vl_fw_add(box, vl_fw_mul(g, g));
        P[a] = vl_fw_sub(zero, a0); /* p - v0 */
        e2[a] = vl_fw_sub(zero, e2n);
        m1 = vl_fw_max(m1, vl_fw_abs(e1[a])), m2 = vl_fw_max(m2, vl_fw_abs(e2n)), pm = vl_fw_max(pm, vl_fw_abs(a0));
    }
    /* outward normals of the edges in the plane (n = e1 x e2): e1 x n, (e2 - e1) x n, n x e2 */
    vl_fw f[3], p1[3], o0[3], o1[3], o2[3];
    for (int a = 0; a < 3; a++) f[a] = vl_fw_sub(e2[a], e1[a]), p1[a] = vl_fw_sub(P[a], e1[a]);
    vl_cpw_cross(e1, n, o0);
    vl_cpw_cross(f, n, o1);
    vl_cpw_cross(n, e2, o2);
    const vl_fw nn = vl_cpw_dot(n, n), len = vl_cpw_sqrt(nn);
    /* signed distances outside each edge, times |n| */
    vl_fw g0 = vl_fw_div(vl_cpw_dot(P, o0), vl_cpw_sqrt(vl_cpw_dot(e1, e1)));
    vl_fw g1 = vl_fw_div(vl_cpw_dot(p1, o1), vl_cpw_sqrt(vl_cpw_dot(f, f)));
    vl_fw g2 = vl_fw_div(vl_cpw_dot(P, o2), vl_cpw_sqrt(vl_cpw_dot(e2, e2)));
    const vl_fw inv = vl_fw_div(vl_fw_set1(1.0f), len);
    vl_fw g = vl_fw_mul(vl_fw_max(g0, vl_fw_max(g1, g2)), inv);
    vl_fw h = vl_fw_mul(vl_fw_abs(vl_cpw_dot(P, n)), inv);
    vl_fw slack = vl_fw_mul(vl_fw_mul(vl_fw_add(pm, vl_fw_add(m1, m2)), vl_fw_set1(VL_CP_PRISM_SLACK)),
                            vl_fw_add(vl_fw_set1(1.0f), vl_fw_mul(vl_fw_mul(m1, m2), inv)));
    slack = vl_fw_add(slack, vl_fw_set1(VL_CP_PRISM_FLOOR));
    g = vl_fw_max(vl_fw_sub(g, slack), zero), h = vl_fw_max(vl_fw_sub(h, slack), zero);
    vl_fw prism = vl_fw_add(vl_fw_mul(h, h), vl_fw_mul(g, g));
    /* a normal (zero for slivers and degenerate triangles) whose square stays a normal float, and
     * a bound in float range (a NaN compares false) */
    vl_fw ok = vl_fw_and(vl_fw_ge(nn, vl_fw_set1(0x1p-100f)), vl_fw_le(nn, vl_fw_set1(0x1p100f)));
    ok = vl_fw_and(ok, vl_fw_le(prism, vl_fw_set1(FLT_MAX)));
    /* a NaN lane (coordinates near float range: inf - inf) bounds nothing: 0. x86's max already
     * returns its second operand for a NaN, but NEON's (SIMDE_FAST_NANS) returns the NaN */
    const vl_fw bound = vl_fw_max(box, vl_fw_and(ok, prism));
    return vl_fw_and(bound, vl_fw_eq(bound, bound));
}

#endif
