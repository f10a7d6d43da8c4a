/* Overlap kernels, 4 lanes: box and sphere queries against the 4 children of a node4 (SIMD across
 * queries, or one query across the children), and one box or sphere query against 4 triangles of
 * a leaf's rows (SIMD across triangles). The float tolerance is VL_BVH_OVERLAP_TOLERANCE (see
 * volley/bvh.h for what it promises). Inputs are clean (validated at the API edge): no NaN in a
 * query; masked lanes (past a leaf's end, empty children) may hold anything and are dropped.
 *
 * Query records are 8 floats, 32-byte aligned, at records + 8 * id:
 *   box:    min x y z, 0, max x y z, 0
 *   sphere: center x y z, radius, node radius squared, s (max of |center| and radius), 0, 0 */
#ifndef VL_SIMD_OVERLAP_KERNELS_H
#define VL_SIMD_OVERLAP_KERNELS_H

#include <stdint.h>

#include <volley/bvh.h>

#include "simd/simd.h"

#define VL_OV_RECORD_FLOATS 8u
enum { VL_OV_RADIUS = 3, VL_OV_NODE_R2 = 4, VL_OV_SCALE = 5 };

/* The slack of the box axes of the box-triangle test (2^-22 s): it covers the rounding of the
 * vertices that the leaf rows give back (v0 + e1, v0 - e2n), and stays under the tree's node
 * margin (1e-6 of the scene's magnitude), so that node culling never drops a pair a leaf accepts. */
#define VL_OV_BOX_AXIS_SLACK 2.384185791015625e-7f

VL_INLINE vl_f4 vl_ov_sqrt(vl_f4 a) { return simde_mm_sqrt_ps(a); }

/* Quad q of the 4 records of ids[0..3], transposed: out[c] lane j = component c of record j. */
VL_INLINE void vl_ov_gather(const float* records, const uint32_t ids[4], uint32_t q, vl_f4 out[4]) {
    for (int j = 0; j < 4; j++) out[j] = vl_f4_load(records + VL_OV_RECORD_FLOATS * (size_t)ids[j] + 4 * q);
    vl_f4_transpose(out);
}

/* Closed overlap of boxes per lane (q and n as min xyz, max xyz). */
VL_INLINE vl_f4 vl_ov_box_box(const vl_f4 qmin[3], const vl_f4 qmax[3], const vl_f4 nmin[3], const vl_f4 nmax[3]) {
    vl_f4 m = vl_f4_and(vl_f4_le(qmin[0], nmax[0]), vl_f4_ge(qmax[0], nmin[0]));
    m = vl_f4_and(m, vl_f4_and(vl_f4_le(qmin[1], nmax[1]), vl_f4_ge(qmax[1], nmin[1])));
    return vl_f4_and(m, vl_f4_and(vl_f4_le(qmin[2], nmax[2]), vl_f4_ge(qmax[2], nmin[2])));
}

/* Squared distance from a point to a box per lane (0 inside; infinite bounds are fine). */
VL_INLINE vl_f4 vl_ov_point_box_d2(const vl_f4 c[3], const vl_f4 nmin[3], const vl_f4 nmax[3]) {
    vl_f4 d[3];
    for (int a = 0; a < 3; a++)
        d[a] = vl_f4_max(vl_f4_max(vl_f4_sub(nmin[a], c[a]), vl_f4_sub(c[a], nmax[a])), vl_f4_zero());
    return vl_f4_add(vl_f4_add(vl_f4_mul(d[0], d[0]), vl_f4_mul(d[1], d[1])), vl_f4_mul(d[2], d[2]));
}

/* One query against the 4 children of a node (lanes = children): the bits of the children it
 * may reach. The per-lane float operations are those of the batch forms below. */
VL_INLINE uint32_t vl_ov_box_node1(const float* rec, const vl_bvh_node4* node) {
    vl_f4 qmin[3], qmax[3], nmin[3], nmax[3];
    for (int a = 0; a < 3; a++) {
        qmin[a] = vl_f4_set1(rec[a]), qmax[a] = vl_f4_set1(rec[4 + a]);
        nmin[a] = vl_f4_load(node->bounds[a]), nmax[a] = vl_f4_load(node->bounds[3 + a]);
    }
    return vl_f4_bits(vl_ov_box_box(qmin, qmax, nmin, nmax));
}

VL_INLINE uint32_t vl_ov_sphere_node1(const float* rec, const vl_bvh_node4* node) {
    vl_f4 c[3], nmin[3], nmax[3];
    for (int a = 0; a < 3; a++) {
        c[a] = vl_f4_set1(rec[a]);
        nmin[a] = vl_f4_load(node->bounds[a]), nmax[a] = vl_f4_load(node->bounds[3 + a]);
    }
    return vl_f4_bits(vl_f4_le(vl_ov_point_box_d2(c, nmin, nmax), vl_f4_set1(rec[VL_OV_NODE_R2])));
}

/* 4 queries (the records of ids, lanes = queries) against child `child` of node: the bits of the
 * queries that may reach it, within the `live` lanes. */
VL_INLINE uint32_t vl_ov_box_node4(const vl_f4 qmin[3], const vl_f4 qmax[3], const vl_bvh_node4* node, int child,
                                   vl_f4 live) {
    vl_f4 nmin[3], nmax[3];
    for (int a = 0; a < 3; a++)
        nmin[a] = vl_f4_set1(node->bounds[a][child]), nmax[a] = vl_f4_set1(node->bounds[3 + a][child]);
    return vl_f4_bits(vl_f4_and(vl_ov_box_box(qmin, qmax, nmin, nmax), live));
}

VL_INLINE uint32_t vl_ov_sphere_node4(const vl_f4 c[3], vl_f4 r2, const vl_bvh_node4* node, int child, vl_f4 live) {
    vl_f4 nmin[3], nmax[3];
    for (int a = 0; a < 3; a++)
        nmin[a] = vl_f4_set1(node->bounds[a][child]), nmax[a] = vl_f4_set1(node->bounds[3 + a][child]);
    return vl_f4_bits(vl_f4_and(vl_f4_le(vl_ov_point_box_d2(c, nmin, nmax), r2), live));
}

/* 4 triangles of a leaf's rows (row k of the leaf at row0 + k * stride), as vertices. */
typedef struct vl_ov_tri4 {
    vl_f4 v0[3], v1[3], v2[3], e1[3], e2n[3];
} vl_ov_tri4;

VL_INLINE void vl_ov_tri_load(const float* row0, uint32_t stride, vl_ov_tri4* t) {
    for (int a = 0; a < 3; a++) {
        t->v0[a] = vl_f4_loadu(row0 + a * stride);
        t->e1[a] = vl_f4_loadu(row0 + (3 + a) * stride);
        t->e2n[a] = vl_f4_loadu(row0 + (6 + a) * stride);
        t->v1[a] = vl_f4_add(t->v0[a], t->e1[a]);
        t->v2[a] = vl_f4_sub(t->v0[a], t->e2n[a]);
    }
}

VL_INLINE vl_f4 vl_ov_dot(const vl_f4 a[3], const vl_f4 b[3]) {
    return vl_f4_add(vl_f4_add(vl_f4_mul(a[0], b[0]), vl_f4_mul(a[1], b[1])), vl_f4_mul(a[2], b[2]));
}

VL_INLINE void vl_ov_cross(const vl_f4 a[3], const vl_f4 b[3], vl_f4 out[3]) {
    out[0] = vl_f4_sub(vl_f4_mul(a[1], b[2]), vl_f4_mul(a[2], b[1]));
    out[1] = vl_f4_sub(vl_f4_mul(a[2], b[0]), vl_f4_mul(a[0], b[2]));
    out[2] = vl_f4_sub(vl_f4_mul(a[0], b[1]), vl_f4_mul(a[1], b[0]));
}

/* Whether the projections pa, pb (of a triangle on an axis, box centred at 0) lie beyond the
 * box's reach r on either side. */
VL_INLINE vl_f4 vl_ov_apart(vl_f4 pa, vl_f4 pb, vl_f4 r) {
    return vl_f4_or(vl_f4_gt(vl_f4_min(pa, pb), r), vl_f4_lt(vl_f4_max(pa, pb), vl_f4_sub(vl_f4_zero(), r)));
}

/* The 3 axes (x, y, z) cross edge f of the separating axis test: separation mask. ds is a vertex
 * on the edge, dop the opposite one (relative to the box's center), hs the half sizes plus slack. */
VL_INLINE vl_f4 vl_ov_edge_axes(const vl_f4 f[3], const vl_f4 ds[3], const vl_f4 dop[3], const vl_f4 hs[3]) {
    vl_f4 af[3];
    for (int a = 0; a < 3; a++) af[a] = vl_f4_abs(f[a]);
    /* x cross f = (0, -fz, fy) */
    vl_f4 sep = vl_ov_apart(vl_f4_sub(vl_f4_mul(f[1], ds[2]), vl_f4_mul(f[2], ds[1])),
                            vl_f4_sub(vl_f4_mul(f[1], dop[2]), vl_f4_mul(f[2], dop[1])),
                            vl_f4_add(vl_f4_mul(af[2], hs[1]), vl_f4_mul(af[1], hs[2])));
    /* y cross f = (fz, 0, -fx) */
    sep = vl_f4_or(sep, vl_ov_apart(vl_f4_sub(vl_f4_mul(f[2], ds[0]), vl_f4_mul(f[0], ds[2])),
                                    vl_f4_sub(vl_f4_mul(f[2], dop[0]), vl_f4_mul(f[0], dop[2])),
                                    vl_f4_add(vl_f4_mul(af[2], hs[0]), vl_f4_mul(af[0], hs[2]))));
    /* z cross f = (-fy, fx, 0) */
    return vl_f4_or(sep, vl_ov_apart(vl_f4_sub(vl_f4_mul(f[0], ds[1]), vl_f4_mul(f[1], ds[0])),
                                     vl_f4_sub(vl_f4_mul(f[0], dop[1]), vl_f4_mul(f[1], dop[0])),
                                     vl_f4_add(vl_f4_mul(af[1], hs[0]), vl_f4_mul(af[0], hs[1]))));
}

/* Largest coordinate magnitude of 4 triangles (lanes). */
VL_INLINE vl_f4 vl_ov_tri_scale(const vl_ov_tri4* t) {
    vl_f4 s = vl_f4_zero();
    for (int a = 0; a < 3; a++)
        s = vl_f4_max(s, vl_f4_max(vl_f4_abs(t->v0[a]), vl_f4_max(vl_f4_abs(t->v1[a]), vl_f4_abs(t->v2[a]))));
    return s;
}

/* Separating axis test of one box (qmin, qmax broadcast) against 4 triangles: the box's axes
 * against the triangles' bounds (slack 2^-22 s), then the box clipped to those bounds (finite,
 * near the triangle, the same intersection with it) against the normal and the 9 edge cross
 * axes, each with slack tol * s * |L|_1 folded into the half sizes. Bits of the live lanes that
 * overlap. */
VL_INLINE uint32_t vl_ov_box_tri4(const float* row0, uint32_t stride, const vl_f4 qmin[3], const vl_f4 qmax[3],
                                  vl_f4 live) {
    vl_ov_tri4 t;
    vl_ov_tri_load(row0, stride, &t);
    vl_f4 s = vl_ov_tri_scale(&t);
    vl_f4 rho = vl_f4_mul(s, vl_f4_set1(VL_OV_BOX_AXIS_SLACK)), sig = vl_f4_mul(s, vl_f4_set1(VL_BVH_OVERLAP_TOLERANCE));
    vl_f4 lo[3], hi[3], ok = live;
    for (int a = 0; a < 3; a++) {
        lo[a] = vl_f4_sub(vl_f4_min(t.v0[a], vl_f4_min(t.v1[a], t.v2[a])), rho);
        hi[a] = vl_f4_add(vl_f4_max(t.v0[a], vl_f4_max(t.v1[a], t.v2[a])), rho);
        ok = vl_f4_and(ok, vl_f4_and(vl_f4_le(lo[a], qmax[a]), vl_f4_ge(hi[a], qmin[a])));
    }
    if (!vl_f4_any(ok)) return 0;
    vl_f4 c[3], hs[3], d0[3], d1[3], d2[3];
    for (int a = 0; a < 3; a++) {
        vl_f4 bmin = vl_f4_max(qmin[a], lo[a]), bmax = vl_f4_min(qmax[a], hi[a]);
        c[a] = vl_f4_mul(vl_f4_add(bmin, bmax), vl_f4_set1(0.5f));
        hs[a] = vl_f4_add(vl_f4_mul(vl_f4_sub(bmax, bmin), vl_f4_set1(0.5f)), sig);
        d0[a] = vl_f4_sub(t.v0[a], c[a]);
        d1[a] = vl_f4_sub(t.v1[a], c[a]);
        d2[a] = vl_f4_sub(t.v2[a], c[a]);
    }
    vl_f4 n[3], an[3], f1[3];
    vl_ov_cross(t.e2n, t.e1, n); /* (v1 - v0) x (v2 - v0) */
    for (int a = 0; a < 3; a++) an[a] = vl_f4_abs(n[a]), f1[a] = vl_f4_sub(vl_f4_zero(), vl_f4_add(t.e1[a], t.e2n[a]));
    vl_f4 sep = vl_f4_gt(vl_f4_abs(vl_ov_dot(n, d0)), vl_ov_dot(an, hs));
    sep = vl_f4_or(sep, vl_ov_edge_axes(t.e1, d0, d2, hs)); /* v0 -> v1 */
    sep = vl_f4_or(sep, vl_ov_edge_axes(f1, d1, d0, hs));   /* v1 -> v2 */
    sep = vl_f4_or(sep, vl_ov_edge_axes(t.e2n, d0, d1, hs)); /* v2 -> v0 */
    return vl_f4_bits(vl_f4_andnot(ok, sep));
}

/* Squared distance from the origin to segment p + t e, t in [0, 1] (a point when e = 0). */
VL_INLINE vl_f4 vl_ov_segment_d2(const vl_f4 p[3], const vl_f4 e[3]) {
    vl_f4 ee = vl_ov_dot(e, e), pe = vl_ov_dot(p, e);
    vl_f4 t = vl_f4_div(vl_f4_sub(vl_f4_zero(), pe), vl_f4_select(vl_f4_gt(ee, vl_f4_zero()), ee, vl_f4_set1(1.0f)));
    t = vl_f4_min(vl_f4_max(t, vl_f4_zero()), vl_f4_set1(1.0f));
    vl_f4 q[3];
    for (int a = 0; a < 3; a++) q[a] = vl_f4_add(p[a], vl_f4_mul(t, e[a]));
    return vl_ov_dot(q, q);
}

/* One sphere (center c, radius r broadcast; sq its scale) against 4 triangles: the squared
 * distance from the center to each triangle (the least of its 3 edges' and, where the center
 * projects inside a triangle of non-zero normal, its plane's) against (r + tol * s)^2, after a
 * reject by the triangles' bounds. Bits of the live lanes that overlap. */
VL_INLINE uint32_t vl_ov_sphere_tri4(const float* row0, uint32_t stride, const vl_f4 c[3], vl_f4 r, vl_f4 sq,
                                     vl_f4 live) {
    vl_ov_tri4 t;
    vl_ov_tri_load(row0, stride, &t);
    vl_f4 s = vl_f4_max(vl_ov_tri_scale(&t), sq);
    vl_f4 reach = vl_f4_add(r, vl_f4_mul(s, vl_f4_set1(VL_BVH_OVERLAP_TOLERANCE)));
    vl_f4 ok = live;
    for (int a = 0; a < 3; a++) {
        vl_f4 lo = vl_f4_min(t.v0[a], vl_f4_min(t.v1[a], t.v2[a]));
        vl_f4 hi = vl_f4_max(t.v0[a], vl_f4_max(t.v1[a], t.v2[a]));
        ok = vl_f4_and(ok, vl_f4_and(vl_f4_le(lo, vl_f4_add(c[a], reach)), vl_f4_ge(hi, vl_f4_sub(c[a], reach))));
    }
    if (!vl_f4_any(ok)) return 0;
    vl_f4 pa[3], pb[3], pc[3], eb[3], ec[3];
    for (int a = 0; a < 3; a++) {
        pa[a] = vl_f4_sub(t.v0[a], c[a]);
        pb[a] = vl_f4_sub(t.v1[a], c[a]);
        pc[a] = vl_f4_sub(t.v2[a], c[a]);
        eb[a] = vl_f4_sub(pc[a], pb[a]);
        ec[a] = vl_f4_sub(pa[a], pc[a]);
    }
    vl_f4 d2 = vl_f4_min(vl_ov_segment_d2(pa, t.e1), vl_f4_min(vl_ov_segment_d2(pb, eb), vl_ov_segment_d2(pc, ec)));
    vl_f4 n[3], ab[3], bc[3], ca[3];
    vl_ov_cross(t.e2n, t.e1, n);
    vl_ov_cross(pa, pb, ab);
    vl_ov_cross(pb, pc, bc);
    vl_ov_cross(pc, pa, ca);
    vl_f4 nn = vl_ov_dot(n, n), zero = vl_f4_zero();
    vl_f4 inside = vl_f4_and(vl_f4_gt(nn, zero), vl_f4_ge(vl_ov_dot(n, ab), zero));
    inside = vl_f4_and(inside, vl_f4_and(vl_f4_ge(vl_ov_dot(n, bc), zero), vl_f4_ge(vl_ov_dot(n, ca), zero)));
    if (vl_f4_any(vl_f4_and(inside, ok))) {
        vl_f4 h = vl_f4_div(vl_ov_dot(n, pa), vl_ov_sqrt(vl_f4_select(inside, nn, vl_f4_set1(1.0f))));
        d2 = vl_f4_select(inside, vl_f4_min(d2, vl_f4_mul(h, h)), d2);
    }
    return vl_f4_bits(vl_f4_and(ok, vl_f4_le(d2, vl_f4_mul(reach, reach))));
}

#endif
