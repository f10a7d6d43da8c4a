/* Overlap kernels: box and sphere queries against the 4 children of a node4 (4 lanes, SIMD across
 * queries, or one query across the children), and one box or sphere query against VL_BW triangles
 * of a leaf's rows (SIMD across triangles at the batch width, vl_ovw_*). The float tolerance is
 * VL_BVH_OVERLAP_TOLERANCE (see volley/bvh.h for what it promises), relative to the pair's own
 * sizes: every leaf test works on differences of nearby coordinates (the query's and the
 * triangle's, exact or rounded at their own magnitude), so its error follows the triangle's extent
 * and the sphere's radius, not the distance from the origin. Inputs are clean (validated at the
 * API edge): no NaN in a query; masked lanes (past a leaf's end, empty children) may hold anything
 * and are dropped.
 *
 * Query records are 8 floats, 32-byte aligned, at records + 8 * id:
 *   box:    min x y z, 0, max x y z, 0
 *   sphere: center x y z, radius, node radius squared, 0, 0, 0 */
#ifndef VL_BVH_OVERLAPS_OVERLAP_KERNELS_H
#define VL_BVH_OVERLAPS_OVERLAP_KERNELS_H

#include <stdint.h>

#include <volley/bvh.h>

#include "bvh/tree/tree.h"
#include "simd/bvh_kernels.h"
#include "simd/simd.h"

#define VL_OV_RECORD_FLOATS 8u
enum { VL_OV_RADIUS = 3, VL_OV_NODE_R2 = 4 };

/* The slack of the box axes of the box-triangle test (2^-21 of the triangle's extent): it covers
 * the rounding of the vertices that the leaf rows give back (v0 + e1, v0 - e2n: exact where the
 * edge was, else off by at most 3 * 2^-24 of the edge), after the rounding of the grown bounds
 * themselves, and stays under the tree's node margin (2^-16 of the scene's extent). */
#define VL_OV_BOX_AXIS_SLACK 0x1p-21f

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

/* The leaf tests: one query against VL_BW triangles of a leaf (the batch width of bvh_kernels.h). */


VL_INLINE vl_fw vl_ovw_sqrt(vl_fw a) {
#if VL_BW == 4
    return simde_mm_sqrt_ps(a);
#else
    return simde_mm256_sqrt_ps(a);
#endif
}

/* VL_BW triangles of a leaf's rows (row k of the leaf at row0 + k * stride), as vertices. */
typedef struct vl_ov_triw {
    vl_fw v0[3], v1[3], v2[3], e1[3], e2n[3];
} vl_ov_triw;

VL_INLINE void vl_ovw_tri_load(const float* row0, uint32_t stride, vl_ov_triw* t) {
    for (int a = 0; a < 3; a++) {
        t->v0[a] = vl_fw_loadu(row0 + a * stride);
        t->e1[a] = vl_fw_loadu(row0 + (3 + a) * stride);
        t->e2n[a] = vl_fw_loadu(row0 + (6 + a) * stride);
        t->v1[a] = vl_fw_add(t->v0[a], t->e1[a]);
        t->v2[a] = vl_fw_sub(t->v0[a], t->e2n[a]);
    }
}

VL_INLINE vl_fw vl_ovw_dot(const vl_fw a[3], const vl_fw b[3]) {
    return vl_fw_add(vl_fw_add(vl_fw_mul(a[0], b[0]), vl_fw_mul(a[1], b[1])), vl_fw_mul(a[2], b[2]));
}

VL_INLINE void vl_ovw_cross(const vl_fw a[3], const vl_fw b[3], vl_fw out[3]) {
    out[0] = vl_fw_sub(vl_fw_mul(a[1], b[2]), vl_fw_mul(a[2], b[1]));
    out[1] = vl_fw_sub(vl_fw_mul(a[2], b[0]), vl_fw_mul(a[0], b[2]));
    out[2] = vl_fw_sub(vl_fw_mul(a[0], b[1]), vl_fw_mul(a[1], b[0]));
}

/* The projection of v on the axis u_a x f (u_a the unit vector of axis a, f an edge):
 * x cross f = (0, -fz, fy), y cross f = (fz, 0, -fx), z cross f = (-fy, fx, 0). */
VL_INLINE vl_fw vl_ovw_edge_proj(const vl_fw f[3], const vl_fw v[3], int a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    return vl_fw_sub(vl_fw_mul(f[b], v[c]), vl_fw_mul(f[c], v[b]));
}

/* Whether projections pa, pb, pc (of a triangle's corners on an axis, box centred at 0) lie
 * beyond the box's reach r on either side. */
VL_INLINE vl_fw vl_ovw_apart3(vl_fw pa, vl_fw pb, vl_fw pc, vl_fw r) {
    return vl_fw_or(vl_fw_gt(vl_fw_min(pa, vl_fw_min(pb, pc)), r),
                    vl_fw_lt(vl_fw_max(pa, vl_fw_max(pb, pc)), vl_fw_sub(vl_fw_zero(), r)));
}

/* An absolute slack on every axis of the box-triangle test: products that underflow (an edge within
 * 2^-126 of parallel to a box axis gives an axis of denormal length) each lose up to 2^-150, which
 * no slack relative to the scale covers (a box ending on a vertex was then called apart). */
#define VL_OV_UNDERFLOW_SLACK 0x1p-144f

/* Separation on the axis u_a x f of an edge f, in doubled units: an end of the edge and the
 * opposite corner (relative to the box's centre) sum to m and project w apart, so the triangle
 * spans P(m) / 2 +- w / 2 and the box +- r2 / 2 (r2 from its full sizes h2). */
VL_INLINE vl_fw vl_ovw_edge_apart(const vl_fw f[3], const vl_fw af[3], const vl_fw m[3], vl_fw w, const vl_fw h2[3],
                                  int a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;
    vl_fw r2 = vl_fw_add(vl_fw_add(vl_fw_mul(af[c], h2[b]), vl_fw_mul(af[b], h2[c])), vl_fw_set1(VL_OV_UNDERFLOW_SLACK));
    return vl_fw_gt(vl_fw_abs(vl_ovw_edge_proj(f, m, a)), vl_fw_add(w, r2));
}

/* What the tests of VL_BW triangles need that no query changes, made once per leaf chunk and
 * shared by every query that reaches the leaf. */
typedef struct vl_ovw_prep {
    vl_ov_triw t;
    vl_fw lo[3], hi[3];  /* the triangles' bounds (box: grown by the box axes' slack) */
    vl_fw f1[3];         /* edge v1 -> v2 */
    vl_fw n[3], an[3];   /* normal (v1 - v0) x (v2 - v0), its absolute values */
    vl_fw scale, slack;  /* s (the largest side of the triangle's box), tol * s */
    vl_fw inv_ee[3];     /* sphere: 1 / |edge|^2 (0 for a zero edge) */
    vl_fw inv_len, has_normal; /* sphere: 1 / |n|, and the mask of lanes whose normal is not zero */
    vl_fw live;
    /* box: |edge| of e1, f1, e2n, the span widths of f1's axes |P(e1)| (e1's and e2n's are |n|),
       the normal's corner offsets 2 n.e1 and 2 n.e2n, twice the slack */
    vl_fw ae[3][3], w_f1[3], n_e1, n_e2n, slack2;
} vl_ovw_prep;

VL_INLINE void vl_ovw_prep_common(const float* row0, uint32_t stride, vl_fw live, vl_ovw_prep* p) {
    vl_ovw_tri_load(row0, stride, &p->t);
    p->live = live;
    p->scale = vl_fw_zero();
    for (int a = 0; a < 3; a++) {
        p->lo[a] = vl_fw_min(p->t.v0[a], vl_fw_min(p->t.v1[a], p->t.v2[a]));
        p->hi[a] = vl_fw_max(p->t.v0[a], vl_fw_max(p->t.v1[a], p->t.v2[a]));
        p->scale = vl_fw_max(p->scale, vl_fw_sub(p->hi[a], p->lo[a]));
        p->f1[a] = vl_fw_sub(vl_fw_zero(), vl_fw_add(p->t.e1[a], p->t.e2n[a]));
    }
    p->slack = vl_fw_mul(p->scale, vl_fw_set1(VL_BVH_OVERLAP_TOLERANCE));
    vl_ovw_cross(p->t.e2n, p->t.e1, p->n); /* (v1 - v0) x (v2 - v0) */
    for (int a = 0; a < 3; a++) p->an[a] = vl_fw_abs(p->n[a]);
}

VL_INLINE void vl_ovw_box_prep(const float* row0, uint32_t stride, vl_fw live, vl_ovw_prep* p) {
    vl_ovw_prep_common(row0, stride, live, p);
    vl_fw rho = vl_fw_mul(p->scale, vl_fw_set1(VL_OV_BOX_AXIS_SLACK));
    for (int a = 0; a < 3; a++) p->lo[a] = vl_fw_sub(p->lo[a], rho), p->hi[a] = vl_fw_add(p->hi[a], rho);
    const vl_fw two = vl_fw_set1(2.0f);
    for (int a = 0; a < 3; a++) {
        p->ae[0][a] = vl_fw_abs(p->t.e1[a]), p->ae[1][a] = vl_fw_abs(p->f1[a]), p->ae[2][a] = vl_fw_abs(p->t.e2n[a]);
        p->w_f1[a] = vl_fw_abs(vl_ovw_edge_proj(p->f1, p->t.e1, a));
    }
    p->n_e1 = vl_fw_mul(vl_ovw_dot(p->n, p->t.e1), two);
    p->n_e2n = vl_fw_mul(vl_ovw_dot(p->n, p->t.e2n), two);
    p->slack2 = vl_fw_add(p->slack, p->slack);
}

/* Separating axis test of one box (qmin, qmax broadcast) against the prepared triangles: the
 * box's axes against the triangles' bounds (slack 2^-21 s), then (unless the box holds the whole
 * bounds) the box clipped to those bounds (finite, within the triangle's box, the same
 * intersection with it) against the normal and the 9 edge cross axes, each with slack
 * tol * s * |L|_1 folded into the half sizes. The clipped box's corners and the vertices are
 * subtracted before anything is added, so every value is of the triangle's size. Bits of the live
 * lanes that overlap. */
VL_INLINE uint32_t vl_ovw_box_tri(const vl_ovw_prep* p, const vl_fw qmin[3], const vl_fw qmax[3]) {
    vl_fw ok = p->live, inside = vl_fw_true();
    for (int a = 0; a < 3; a++) {
        ok = vl_fw_and(ok, vl_fw_and(vl_fw_le(p->lo[a], qmax[a]), vl_fw_ge(p->hi[a], qmin[a])));
        inside = vl_fw_and(inside, vl_fw_and(vl_fw_ge(p->lo[a], qmin[a]), vl_fw_le(p->hi[a], qmax[a])));
    }
    const vl_fw undecided = vl_fw_andnot(ok, inside);
    if (!vl_fw_any(undecided)) return vl_fw_bits(ok);
    /* in doubled units: the clipped box's full sizes h2 (+ 2 slack) and d = 2 (v0 - centre) */
    vl_fw h2[3], d[3], m1[3], m2[3];
    for (int a = 0; a < 3; a++) {
        vl_fw bmin = vl_fw_max(qmin[a], p->lo[a]), bmax = vl_fw_min(qmax[a], p->hi[a]);
        h2[a] = vl_fw_add(vl_fw_sub(bmax, bmin), p->slack2);
        d[a] = vl_fw_add(vl_fw_sub(p->t.v0[a], bmin), vl_fw_sub(p->t.v0[a], bmax));
        m1[a] = vl_fw_sub(d[a], p->t.e2n[a]); /* v0 + v2 - 2 centre */
        m2[a] = vl_fw_add(d[a], p->t.e1[a]);  /* v0 + v1 - 2 centre */
    }
    /* all 3 corners on the normal: a sliver's rounded normal is far from perpendicular to it */
    vl_fw pa = vl_ovw_dot(p->n, d);
    vl_fw sep = vl_ovw_apart3(pa, vl_fw_add(pa, p->n_e1), vl_fw_sub(pa, p->n_e2n),
                              vl_fw_add(vl_ovw_dot(p->an, h2), vl_fw_set1(VL_OV_UNDERFLOW_SLACK)));
    for (int a = 0; a < 3; a++) {
        sep = vl_fw_or(sep, vl_ovw_edge_apart(p->t.e1, p->ae[0], m1, p->an[a], h2, a));  /* v0 -> v1 */
        sep = vl_fw_or(sep, vl_ovw_edge_apart(p->f1, p->ae[1], m2, p->w_f1[a], h2, a));  /* v1 -> v2 */
        sep = vl_fw_or(sep, vl_ovw_edge_apart(p->t.e2n, p->ae[2], m2, p->an[a], h2, a)); /* v2 -> v0 */
    }
    return vl_fw_bits(vl_fw_andnot(ok, vl_fw_andnot(sep, inside)));
}

VL_INLINE void vl_ovw_sphere_prep(const float* row0, uint32_t stride, vl_fw live, vl_ovw_prep* p) {
    vl_ovw_prep_common(row0, stride, live, p);
    const vl_fw zero = vl_fw_zero(), one = vl_fw_set1(1.0f);
    const vl_fw* e[3] = {p->t.e1, p->f1, p->t.e2n};
    for (int k = 0; k < 3; k++) {
        vl_fw ee = vl_ovw_dot(e[k], e[k]);
        p->inv_ee[k] = vl_fw_and(vl_fw_gt(ee, zero), vl_fw_div(one, vl_fw_select(vl_fw_gt(ee, zero), ee, one)));
    }
    vl_fw nn = vl_ovw_dot(p->n, p->n);
    p->has_normal = vl_fw_gt(nn, zero);
    p->inv_len = vl_fw_div(one, vl_ovw_sqrt(vl_fw_select(p->has_normal, nn, one)));
}

/* Squared distance from the origin to segment p + t e, t in [0, 1] (a point when e = 0). */
VL_INLINE vl_fw vl_ovw_segment_d2(const vl_fw p[3], const vl_fw e[3], vl_fw inv_ee) {
    vl_fw t = vl_fw_mul(vl_fw_sub(vl_fw_zero(), vl_ovw_dot(p, e)), inv_ee);
    t = vl_fw_min(vl_fw_max(t, vl_fw_zero()), vl_fw_set1(1.0f));
    vl_fw q[3];
    for (int a = 0; a < 3; a++) q[a] = vl_fw_add(p[a], vl_fw_mul(t, e[a]));
    return vl_ovw_dot(q, q);
}

/* One sphere (center c, radius r broadcast) against the prepared triangles, in the frame of its
 * center: the squared distance from the center to each triangle (the least of its 3 edges' and,
 * where the center projects inside a triangle of non-zero normal, its plane's) against
 * (r + tol * (r + s))^2, after a reject by the triangles' bounds and an accept of triangles whose
 * 3 corners are in reach. Bits of the live lanes that overlap. */
VL_INLINE uint32_t vl_ovw_sphere_tri(const vl_ovw_prep* p, const vl_fw c[3], vl_fw r) {
    vl_fw reach = vl_fw_add(r, vl_fw_mul(vl_fw_add(p->scale, r), vl_fw_set1(VL_BVH_OVERLAP_TOLERANCE)));
    const vl_fw neg_reach = vl_fw_sub(vl_fw_zero(), reach);
    vl_fw ok = p->live;
    for (int a = 0; a < 3; a++)
        ok = vl_fw_and(ok, vl_fw_and(vl_fw_le(vl_fw_sub(p->lo[a], c[a]), reach), vl_fw_ge(vl_fw_sub(p->hi[a], c[a]), neg_reach)));
    if (!vl_fw_any(ok)) return 0;
    vl_fw pa[3], pb[3], pc[3];
    for (int a = 0; a < 3; a++) {
        pa[a] = vl_fw_sub(p->t.v0[a], c[a]);
        pb[a] = vl_fw_sub(p->t.v1[a], c[a]);
        pc[a] = vl_fw_sub(p->t.v2[a], c[a]);
    }
    vl_fw reach2 = vl_fw_mul(reach, reach);
    vl_fw held = vl_fw_and(vl_fw_le(vl_ovw_dot(pa, pa), reach2),
                        vl_fw_and(vl_fw_le(vl_ovw_dot(pb, pb), reach2), vl_fw_le(vl_ovw_dot(pc, pc), reach2)));
    if (!vl_fw_any(vl_fw_andnot(ok, held))) return vl_fw_bits(ok);
    vl_fw d2 = vl_fw_min(vl_ovw_segment_d2(pa, p->t.e1, p->inv_ee[0]),
                      vl_fw_min(vl_ovw_segment_d2(pb, p->f1, p->inv_ee[1]), vl_ovw_segment_d2(pc, p->t.e2n, p->inv_ee[2])));
    vl_fw ab[3], bc[3], ca[3];
    vl_ovw_cross(pa, pb, ab);
    vl_ovw_cross(pb, pc, bc);
    vl_ovw_cross(pc, pa, ca);
    vl_fw zero = vl_fw_zero();
    vl_fw inside = vl_fw_and(p->has_normal, vl_fw_ge(vl_ovw_dot(p->n, ab), zero));
    inside = vl_fw_and(inside, vl_fw_and(vl_fw_ge(vl_ovw_dot(p->n, bc), zero), vl_fw_ge(vl_ovw_dot(p->n, ca), zero)));
    /* the plane's distance as the least over the 3 corners (0 when they straddle it): a lower
       bound for any normal, so that a sliver's rounded normal never loses a pair */
    vl_fw ha = vl_ovw_dot(p->n, pa), hb = vl_ovw_dot(p->n, pb), hc = vl_ovw_dot(p->n, pc);
    vl_fw lo = vl_fw_min(ha, vl_fw_min(hb, hc)), hi = vl_fw_max(ha, vl_fw_max(hb, hc));
    vl_fw h = vl_fw_mul(vl_fw_max(vl_fw_max(lo, vl_fw_sub(zero, hi)), zero), p->inv_len);
    d2 = vl_fw_select(inside, vl_fw_min(d2, vl_fw_mul(h, h)), d2);
    return vl_fw_bits(vl_fw_and(ok, vl_fw_or(held, vl_fw_le(d2, reach2))));
}

#endif
