/* Capsule kernels: the segment of a capsule against a leaf's triangle boxes grown by its reach (the
 * node tests are the sweeps' slab test, vl_sweep4_slab, with tmax 1), and one capsule against
 * VL_BW triangles of a leaf's rows: the distance from its segment to each triangle in float, good
 * enough to decide most pairs, and the lanes it cannot decide left to the exact test in double;
 * and a capsule sweep's bound against a leaf's triangles.
 * Inputs are clean (validated at the API edge): finite coordinates and radii, inverse directions
 * finite and nonzero (FLT_MAX for an axis the segment does not move along). Lanes past a leaf's
 * end may hold anything and are dropped; a lane whose values leave float range is left to the
 * exact test, never decided here. */
#ifndef VL_SIMD_CAPSULE_KERNELS_H
#define VL_SIMD_CAPSULE_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include <volley/bvh.h>

#include "simd/bvh_kernels.h"
#include "simd/simd.h"
#include "simd/sweep_kernels.h"

/* The overlaps' capsule record (VL_OV_RECORD_FLOATS floats): a x y z, radius (so that a capsule of
 * zero length reads as the sphere record it is), then 1 / (b - a) per axis and the grown reach g:
 * the radius, the tolerance and a pad for the float rounding of the slab tests. */
enum { VL_CAP_RADIUS = 3, VL_CAP_INV = 4, VL_CAP_GROW = 7 };

/* Slab test of the segment a + t D, t in [0, 1] (inv = 1 / D per axis) against the boxes [mn, mx]
 * grown by g, at the batch width: the mask of lanes it meets (vl_sweep4_slab's, with tmax 1, for a
 * leaf's triangles). Infinite bounds give infinite slab times, never NaN. */
VL_INLINE vl_fw vl_capw_slab(const vl_fw a[3], const vl_fw inv[3], vl_fw g, const vl_fw mn[3], const vl_fw mx[3]) {
    vl_fw tn = vl_fw_zero(), tf = vl_fw_set1(1.0f);
    for (int k = 0; k < 3; k++) {
        vl_fw lo = vl_fw_mul(vl_fw_sub(vl_fw_sub(mn[k], g), a[k]), inv[k]);
        vl_fw hi = vl_fw_mul(vl_fw_sub(vl_fw_add(mx[k], g), a[k]), inv[k]);
        tn = vl_fw_max(tn, vl_fw_min(lo, hi));
        tf = vl_fw_min(tf, vl_fw_max(lo, hi));
    }
    return vl_fw_le(tn, tf);
}

/* What the capsule test of VL_BW triangles needs that no query changes, made once per leaf chunk:
 * in the frame of each triangle's v0, its vertices V (V[0] = 0), edges E[i] = V[i + 1] - V[i],
 * normal n = e1 x e2 and the inward normals of the edges in its plane, m[i] = n x E[i]. */
typedef struct vl_capw_prep {
    vl_fw v0[3], V[3][3], E[3][3];
    vl_fw ee[3], inv_ee[3];   /* |E[i]|^2 and its inverse (0 for an edge under FLT_MIN squared) */
    vl_fw n[3], inv_nn;       /* normal and 1 / |n|^2 (0 when tiny) */
    vl_fw m[3][3], mc[3];     /* inward edge normals and V[i] . m[i]: inside edge i when x . m[i] >= mc[i] */
    vl_fw lo[3], hi[3];       /* the triangles' bounds, grown by their float rounding and 2^-17 s */
    vl_fw scale, sum_e;       /* s (the largest side of the triangle's box), |e1|_1 + |e2n|_1 */
    vl_fw good;               /* the angle at v0 over 1/16 rad: n is accurate to 2^-18 of itself */
    vl_fw width;              /* an upper bound of the inradius (every face point lies this close to an edge) */
    vl_fw live;
} vl_capw_prep;

VL_INLINE void vl_capw_prep_make(const float* row0, uint32_t stride, vl_fw live, vl_capw_prep* p) {
    const vl_fw zero = vl_fw_zero(), one = vl_fw_set1(1.0f), fmin_ = vl_fw_set1(FLT_MIN);
    vl_fw e1[3], e2n[3], pad[3];
    p->live = live;
    p->scale = p->sum_e = zero;
    for (int a = 0; a < 3; a++) {
        p->v0[a] = vl_fw_loadu(row0 + a * stride);
        e1[a] = vl_fw_loadu(row0 + (3 + a) * stride);
        e2n[a] = vl_fw_loadu(row0 + (6 + a) * stride);
        p->V[0][a] = zero, p->V[1][a] = e1[a], p->V[2][a] = vl_fw_sub(zero, e2n[a]);
        p->E[0][a] = e1[a], p->E[1][a] = vl_fw_sub(zero, vl_fw_add(e1[a], e2n[a])), p->E[2][a] = e2n[a];
        const vl_fw v1 = vl_fw_add(p->v0[a], e1[a]), v2 = vl_fw_sub(p->v0[a], e2n[a]);
        p->lo[a] = vl_fw_min(p->v0[a], vl_fw_min(v1, v2));
        p->hi[a] = vl_fw_max(p->v0[a], vl_fw_max(v1, v2));
        p->scale = vl_fw_max(p->scale, vl_fw_sub(p->hi[a], p->lo[a]));
        const vl_fw ae = vl_fw_add(vl_fw_abs(e1[a]), vl_fw_abs(e2n[a]));
        p->sum_e = vl_fw_add(p->sum_e, ae);
        pad[a] = vl_fw_mul(vl_fw_add(vl_fw_abs(p->v0[a]), ae), vl_fw_set1(0x1p-20f));
    }
    const vl_fw tol = vl_fw_mul(p->scale, vl_fw_set1(0x1p-17f));
    for (int a = 0; a < 3; a++) {
        p->lo[a] = vl_fw_sub(p->lo[a], vl_fw_add(pad[a], tol));
        p->hi[a] = vl_fw_add(p->hi[a], vl_fw_add(pad[a], tol));
    }
    vl_fw perim = zero;
    for (int i = 0; i < 3; i++) {
        p->ee[i] = vl_sw_dot(p->E[i], p->E[i]);
        const vl_fw big = vl_fw_gt(p->ee[i], fmin_);
        p->inv_ee[i] = vl_fw_and(big, vl_fw_div(one, vl_fw_select(big, p->ee[i], one)));
        perim = vl_fw_add(perim, vl_sweepw_sqrt(p->ee[i]));
    }
    vl_sw_cross(e2n, e1, p->n); /* (v1 - v0) x (v2 - v0) */
    const vl_fw nn = vl_sw_dot(p->n, p->n), has = vl_fw_gt(nn, fmin_);
    p->inv_nn = vl_fw_and(has, vl_fw_div(one, vl_fw_select(has, nn, one)));
    p->good = vl_fw_and(has, vl_fw_ge(nn, vl_fw_mul(vl_fw_mul(p->ee[0], p->ee[2]), vl_fw_set1(0x1p-8f))));
    for (int i = 0; i < 3; i++) {
        vl_sw_cross(p->n, p->E[i], p->m[i]);
        p->mc[i] = vl_sw_dot(p->V[i], p->m[i]);
    }
    /* inradius = |n| / perimeter; the float |n| is off by at most 2^-22 |e1| |e2|, under 2^-20 sum_e
     * times the perimeter */
    const vl_fw per = vl_fw_gt(perim, zero);
    p->width = vl_fw_and(per, vl_fw_div(vl_sweepw_sqrt(nn), vl_fw_select(per, perim, one)));
    p->width = vl_fw_add(vl_fw_mul(p->width, vl_fw_set1(1.0f + 0x1p-10f)), vl_fw_mul(p->sum_e, vl_fw_set1(0x1p-20f)));
}

/* One capsule broadcast: its segment's ends a and b, D = b - a, the slab test's inverse and grown
 * reach, |D|^2 and its inverse (0 under FLT_MIN), the radius, its own size r + |D| / 2 and
 * |D|_1 + r. */
typedef struct vl_capw_query {
    vl_fw a[3], b[3], D[3], inv[3], g;
    vl_fw inv_dd, r, rh, dsum;
} vl_capw_query;

VL_INLINE void vl_capw_query_set(vl_capw_query* q, const float a[3], const float b[3], const float inv[3], float g,
                                 float r, float rh) {
    float dd = 0.0f, dsum = r;
    for (int k = 0; k < 3; k++) {
        const float d = b[k] - a[k];
        q->a[k] = vl_fw_set1(a[k]), q->b[k] = vl_fw_set1(b[k]), q->D[k] = vl_fw_set1(d), q->inv[k] = vl_fw_set1(inv[k]);
        dd += d * d, dsum += fabsf(d);
    }
    q->g = vl_fw_set1(g);
    q->inv_dd = vl_fw_set1(dd > FLT_MIN ? 1.0f / dd : 0.0f);
    q->r = vl_fw_set1(r), q->rh = vl_fw_set1(rh), q->dsum = vl_fw_set1(dsum);
}

VL_INLINE vl_fw vl_capw_clamp01(vl_fw x) { return vl_fw_min(vl_fw_max(x, vl_fw_zero()), vl_fw_set1(1.0f)); }

/* One capsule against the prepared triangles: the bits of the live lanes that surely overlap (the
 * segment's distance to the triangle at most radius + tol (r + h + s), the reach of bvh.h), and in
 * *maybe those this test cannot decide (the exact test's to answer); the others surely do not.
 * After a slab test of the segment against the triangles' grown boxes, in each triangle's frame
 * (every value of the size M = |a - v0|_1 + |D|_1 + r + |e1|_1 + |e2n|_1): the squared distance as
 * the least of the segment's distances to the 3 edges (Ericson's closest points of two segments:
 * s from the lines' formula, t from s, s again from t: a genuine pair of points, whose distance
 * exceeds the least by at most about 2^-11 M where the lines are near parallel), and for triangles
 * with a good normal the endpoints' distances to the face where they project inside it, and 0
 * where the segment crosses the face. A lane is taken when that distance is under the reach less
 * 2^-16 M (the float rounding of the points and of the normal is under 2^-18 M), dropped when it is
 * over the reach plus 2^-8 M; a triangle without a good normal (a sliver, zero area) is taken on
 * its edges alone and dropped when the edges lie farther than that plus its width. Lanes with M
 * outside [2^-20, 2^30] are never decided here. */
VL_INLINE uint32_t vl_capw_tri(const vl_capw_prep* p, const vl_capw_query* q, uint32_t* maybe) {
    const vl_fw ok = vl_fw_and(p->live, vl_capw_slab(q->a, q->inv, q->g, p->lo, p->hi));
    *maybe = 0;
    if (!vl_fw_any(ok)) return 0;
    const vl_fw zero = vl_fw_zero(), one = vl_fw_set1(1.0f), inf = vl_fw_set1(INFINITY);
    vl_fw P[3], Q[3], M = vl_fw_add(q->dsum, p->sum_e);
    for (int a = 0; a < 3; a++) {
        P[a] = vl_fw_sub(q->a[a], p->v0[a]);
        Q[a] = vl_fw_sub(q->b[a], p->v0[a]);
        M = vl_fw_add(M, vl_fw_abs(P[a]));
    }
    const vl_fw M2 = vl_fw_mul(M, M), tiny = vl_fw_mul(vl_fw_mul(M2, M2), vl_fw_set1(0x1p-60f));
    /* the edges */
    vl_fw d2s = inf;
    for (int i = 0; i < 3; i++) {
        vl_fw R[3], x[3], w[3];
        for (int a = 0; a < 3; a++) R[a] = vl_fw_sub(P[a], p->V[i][a]);
        const vl_fw f = vl_sw_dot(p->E[i], R), c = vl_sw_dot(q->D, R), b = vl_sw_dot(q->D, p->E[i]);
        vl_sw_cross(q->D, p->E[i], x);
        const vl_fw denom = vl_sw_dot(x, x), apart = vl_fw_gt(denom, tiny);
        const vl_fw num = vl_fw_sub(vl_fw_mul(b, f), vl_fw_mul(c, p->ee[i]));
        vl_fw s = vl_fw_and(apart, vl_capw_clamp01(vl_fw_div(num, vl_fw_select(apart, denom, one))));
        const vl_fw t = vl_capw_clamp01(vl_fw_mul(vl_fw_add(vl_fw_mul(b, s), f), p->inv_ee[i]));
        s = vl_capw_clamp01(vl_fw_mul(vl_fw_sub(vl_fw_mul(b, t), c), q->inv_dd));
        for (int a = 0; a < 3; a++)
            w[a] = vl_fw_sub(vl_fw_add(R[a], vl_fw_mul(s, q->D[a])), vl_fw_mul(t, p->E[i][a]));
        d2s = vl_fw_min(d2s, vl_sw_dot(w, w));
    }
    /* the face: the endpoints over it, and the segment through it */
    const vl_fw sP = vl_sw_dot(P, p->n), sQ = vl_sw_dot(Q, p->n);
    const vl_fw meets = vl_fw_andnot(vl_fw_or(vl_fw_and(vl_fw_le(sP, zero), vl_fw_ge(sQ, zero)),
                                              vl_fw_and(vl_fw_ge(sP, zero), vl_fw_le(sQ, zero))),
                                     vl_fw_eq(sP, sQ));
    const vl_fw lam = vl_fw_div(sP, vl_fw_select(meets, vl_fw_sub(sP, sQ), one));
    vl_fw inP = p->good, inQ = p->good, inX = vl_fw_and(p->good, meets);
    for (int i = 0; i < 3; i++) {
        const vl_fw pm = vl_sw_dot(P, p->m[i]), qm = vl_sw_dot(Q, p->m[i]);
        inP = vl_fw_and(inP, vl_fw_ge(pm, p->mc[i]));
        inQ = vl_fw_and(inQ, vl_fw_ge(qm, p->mc[i]));
        inX = vl_fw_and(inX, vl_fw_ge(vl_fw_add(pm, vl_fw_mul(lam, vl_fw_sub(qm, pm))), p->mc[i]));
    }
    vl_fw d2 = vl_fw_min(d2s, vl_fw_select(inP, vl_fw_mul(vl_fw_mul(sP, sP), p->inv_nn), inf));
    d2 = vl_fw_min(d2, vl_fw_select(inQ, vl_fw_mul(vl_fw_mul(sQ, sQ), p->inv_nn), inf));
    d2 = vl_fw_select(inX, zero, d2);
    /* the verdicts */
    const vl_fw reach = vl_fw_add(q->r, vl_fw_mul(vl_fw_add(q->rh, p->scale), vl_fw_set1(VL_BVH_OVERLAP_TOLERANCE)));
    const vl_fw take = vl_fw_sub(reach, vl_fw_mul(M, vl_fw_set1(0x1p-16f)));
    const vl_fw drop = vl_fw_add(reach, vl_fw_mul(M, vl_fw_set1(0x1p-8f)));
    const vl_fw drop_edges = vl_fw_add(drop, p->width);
    const vl_fw in_range = vl_fw_and(vl_fw_ge(M, vl_fw_set1(0x1p-20f)), vl_fw_le(M, vl_fw_set1(0x1p30f)));
    const vl_fw near = vl_fw_select(p->good, d2, d2s);
    const vl_fw taken = vl_fw_and(vl_fw_and(ok, in_range), vl_fw_and(vl_fw_gt(take, zero), vl_fw_le(near, vl_fw_mul(take, take))));
    const vl_fw far = vl_fw_select(p->good, vl_fw_gt(d2, vl_fw_mul(drop, drop)),
                                   vl_fw_gt(d2s, vl_fw_mul(drop_edges, drop_edges)));
    const vl_fw dropped = vl_fw_and(in_range, far);
    *maybe = vl_fw_bits(vl_fw_andnot(vl_fw_andnot(ok, taken), dropped));
    return vl_fw_bits(taken);
}

/* ---- sweeps -------------------------------------------------------------------------------- */

/* A capsule sweep for vl_sweepw_capsule_tris: its segment D (a to b), its radius, and a bound on
 * how far the record's float centre lies from the segment's middle (the centre's rounding),
 * broadcast. */
typedef struct vl_capsulevw {
    vl_fw D[3], r, pad;
} vl_capsulevw;

/* Narrows [*in, *out] to the times t in which p + t b lies in [lo, hi]. A slope under FLT_MIN
 * counts as flat: its lanes keep their interval where p lies in [lo, hi] widened by the slope
 * times tf (the last time that matters, finite), else they are emptied. */
VL_INLINE void vl_capw_time_slab(vl_fw p, vl_fw b, vl_fw lo, vl_fw hi, vl_fw tf, vl_fw* in, vl_fw* out, vl_fw* empty) {
    const vl_fw one = vl_fw_set1(1.0f), ab = vl_fw_abs(b), flat = vl_fw_lt(ab, vl_fw_set1(FLT_MIN));
    const vl_fw inv = vl_fw_div(one, vl_fw_select(flat, one, b));
    const vl_fw t1 = vl_fw_mul(vl_fw_sub(lo, p), inv), t2 = vl_fw_mul(vl_fw_sub(hi, p), inv);
    *in = vl_fw_select(flat, *in, vl_fw_max(*in, vl_fw_min(t1, t2)));
    *out = vl_fw_select(flat, *out, vl_fw_min(*out, vl_fw_max(t1, t2)));
    const vl_fw drift = vl_fw_mul(ab, tf);
    const vl_fw outside = vl_fw_or(vl_fw_lt(vl_fw_add(p, drift), lo), vl_fw_gt(vl_fw_sub(p, drift), hi));
    *empty = vl_fw_or(*empty, vl_fw_and(flat, outside));
}

/* The times at which the capsule's projection on W can meet the triangle's: the capsule's middle
 * moves by rel + t d along W (rel = its centre less v0), its extent |D.W| / 2 + r |W|; the
 * triangle spans [min, max] of 0, e1.W and -e2n.W. Widened by the centre's pad and 2^-18 M of
 * each term (the float rounding of the dot products of values of size M, which covers the path up
 * to tf). */
VL_INLINE void vl_capw_dir_slab(const vl_fw W[3], const vl_fw rel[3], const vl_fw e1[3], const vl_fw e2n[3],
                                const vl_sweepvw* w, const vl_capsulevw* cp, vl_fw M, vl_fw tf, vl_fw* in, vl_fw* out,
                                vl_fw* empty) {
    const vl_fw zero = vl_fw_zero();
    const vl_fw p = vl_sw_dot(rel, W), b = vl_sw_dot(w->dir, W);
    const vl_fw a1 = vl_sw_dot(e1, W), a2 = vl_fw_sub(zero, vl_sw_dot(e2n, W));
    const vl_fw w1 = vl_fw_add(vl_fw_add(vl_fw_abs(W[0]), vl_fw_abs(W[1])), vl_fw_abs(W[2]));
    vl_fw ext = vl_fw_mul(vl_fw_abs(vl_sw_dot(cp->D, W)), vl_fw_set1(0.5f));
    ext = vl_fw_add(ext, vl_fw_mul(vl_fw_mul(cp->r, vl_sweepw_sqrt(vl_sw_dot(W, W))), vl_fw_set1(1.0f + 0x1p-20f)));
    ext = vl_fw_add(ext, vl_fw_mul(vl_fw_add(cp->pad, vl_fw_mul(M, vl_fw_set1(0x1p-18f))), w1));
    const vl_fw lo = vl_fw_sub(vl_fw_min(zero, vl_fw_min(a1, a2)), ext), hi = vl_fw_add(vl_fw_max(zero, vl_fw_max(a1, a2)), ext);
    vl_capw_time_slab(p, b, lo, hi, tf, in, out, empty);
}

/* The triangles [s, s + VL_BW) of a leaf of `count` that a capsule sweep may touch in [0, tmax],
 * and in *lower a time no later than its first touch of each: the centre's entry into the
 * triangle's box grown by the capsule's box (vl_sweepw_tri_box), then into the prism that the
 * triangle swept back along the segment makes (the places of the capsule's middle where its
 * segment meets the triangle), grown by the radius, as the intersection of 4 slabs: along the
 * triangle's normal (its plane; the lanes left after it go on) and along E_i x D (the sides the
 * segment sweeps past edge i), each entered and left once. Any direction gives a true bound, as
 * projections and supports use the same rounded vector; a lane whose size M (|c - v0|_1 + the
 * edges + |D|_1 + r + the path to the box's exit) lies outside [2^-30, 2^40], or whose direction
 * passes 2^40 (|d|_1), keeps the box's bound alone. (The 3 slabs along n x E_i as well: 14% fewer exact tests, 1.2x the time.) */
VL_INLINE vl_fw vl_sweepw_capsule_tris(const float* rows, uint32_t count, uint32_t s, const vl_sweepvw* w,
                                       const vl_capsulevw* cp, vl_fw* lower) {
    vl_sweep_triw t;
    vl_sweepw_load(rows, count, s, &t);
    vl_fw tn, tf;
    vl_sweepw_tri_box(&t, w, &tn, &tf);
    *lower = tn;
    const vl_fw box = vl_fw_le(tn, tf);
    if (!vl_fw_any(box)) return box;
    const vl_fw zero = vl_fw_zero();
    vl_fw rel[3], ng[3], E[3][3], W[3], M = cp->r, path = zero;
    for (int a = 0; a < 3; a++) {
        rel[a] = vl_fw_sub(w->c[a], t.v0[a]);
        ng[a] = vl_sweepw_ng(rows, count, s, a);
        E[0][a] = t.e1[a], E[1][a] = vl_fw_sub(zero, vl_fw_add(t.e1[a], t.e2n[a])), E[2][a] = t.e2n[a];
        M = vl_fw_add(M, vl_fw_add(vl_fw_add(vl_fw_abs(rel[a]), vl_fw_abs(cp->D[a])),
                                   vl_fw_add(vl_fw_abs(t.e1[a]), vl_fw_abs(t.e2n[a]))));
        path = vl_fw_add(path, vl_fw_abs(w->dir[a]));
    }
    M = vl_fw_add(M, vl_fw_mul(path, tf));
    /* products of the size's values and of the direction's stay finite and normal */
    const vl_fw valid = vl_fw_and(vl_fw_and(vl_fw_ge(M, vl_fw_set1(0x1p-30f)), vl_fw_le(M, vl_fw_set1(0x1p40f))),
                                  vl_fw_le(path, vl_fw_set1(0x1p40f)));
    vl_fw in = tn, out = tf, empty = zero;
    vl_capw_dir_slab(ng, rel, t.e1, t.e2n, w, cp, M, tf, &in, &out, &empty);
    const vl_fw open = vl_fw_andnot(vl_fw_le(in, out), empty); /* lanes not valid keep the box's bound */
    if (!vl_fw_any(vl_fw_and(box, vl_fw_or(open, vl_fw_andnot(vl_fw_true(), valid))))) return zero;
    for (int i = 0; i < 3; i++) {
        vl_sw_cross(E[i], cp->D, W);
        vl_capw_dir_slab(W, rel, t.e1, t.e2n, w, cp, M, tf, &in, &out, &empty);
    }
    in = vl_fw_select(valid, vl_fw_max(tn, vl_fw_mul(in, vl_fw_set1(1.0f - 0x1p-20f))), tn);
    out = vl_fw_select(valid, out, tf);
    *lower = in;
    return vl_fw_andnot(vl_fw_and(box, vl_fw_le(in, out)), vl_fw_and(valid, empty));
}

#endif
