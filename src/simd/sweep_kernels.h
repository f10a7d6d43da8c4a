/* Sweep culling kernels: the sweep's centre ray against boxes grown by its extent (4 lanes:
 * sweeps against one node box, or one sweep against 4 child boxes), the gather of sweep records,
 * and one sweep against a leaf's triangles read from their rows (the batch width's lanes: a time
 * no later than its first touch of each).
 * Inputs are clean: no NaN, finite centres, inverse directions finite and nonzero (a parallel axis
 * has FLT_MAX), grown extents finite, so no lane ever forms inf - inf or inf * 0. */
#ifndef VL_SIMD_SWEEP_KERNELS_H
#define VL_SIMD_SWEEP_KERNELS_H

#include <float.h>
#include <stdint.h>

#include "simd/bvh_kernels.h"
#include "simd/simd.h"

/* A sweep's culling form across 4 lanes: centre, inverse direction, grown half extent, tmax. */
typedef struct vl_sweepv4 {
    vl_f4 c[3], inv[3], grow[3], tmax;
} vl_sweepv4;

/* Floats per sweep record: [c, tmax] [inv, 0] [grow, 0] [dir, sphere reach] (the grown radius
 * of a sphere, 0 for a box). */
#define VL_SWEEPV_STRIDE 16u

/* Slab test of the centre ray against [mn - grow, mx + grow] for t in [0, tmax]: the mask of
 * lanes hit, and their entry t. 6 sub, 6 mul, 12 min/max per 4 lanes. */
VL_INLINE vl_f4 vl_sweep4_slab(const vl_sweepv4* s, const vl_f4 mn[3], const vl_f4 mx[3], vl_f4* tnear) {
    vl_f4 tn = vl_f4_zero(), tf = s->tmax;
    for (int a = 0; a < 3; a++) {
        vl_f4 lo = vl_f4_mul(vl_f4_sub(vl_f4_sub(mn[a], s->grow[a]), s->c[a]), s->inv[a]);
        vl_f4 hi = vl_f4_mul(vl_f4_sub(vl_f4_add(mx[a], s->grow[a]), s->c[a]), s->inv[a]);
        tn = vl_f4_max(tn, vl_f4_min(lo, hi));
        tf = vl_f4_min(tf, vl_f4_max(lo, hi));
    }
    *tnear = tn;
    return vl_f4_le(tn, tf);
}

/* One sweep record (see VL_SWEEPV_STRIDE) broadcast to 4 lanes. */
VL_INLINE void vl_sweep4_broadcast(const float* rec, vl_sweepv4* s) {
    for (int a = 0; a < 3; a++) {
        s->c[a] = vl_f4_set1(rec[a]);
        s->inv[a] = vl_f4_set1(rec[4 + a]);
        s->grow[a] = vl_f4_set1(rec[8 + a]);
    }
    s->tmax = vl_f4_set1(rec[3]);
}

/* The records rec + VL_SWEEPV_STRIDE idx[j] (j < 4) transposed into lanes. */
VL_INLINE void vl_sweep4_gather(const float* rec, const uint32_t* idx, vl_sweepv4* s) {
    vl_f4 q[4];
    for (int j = 0; j < 4; j++) q[j] = vl_f4_loadu(rec + VL_SWEEPV_STRIDE * (size_t)idx[j]);
    vl_f4_transpose(q);
    s->c[0] = q[0], s->c[1] = q[1], s->c[2] = q[2], s->tmax = q[3];
    for (int j = 0; j < 4; j++) q[j] = vl_f4_loadu(rec + VL_SWEEPV_STRIDE * (size_t)idx[j] + 4);
    vl_f4_transpose(q);
    s->inv[0] = q[0], s->inv[1] = q[1], s->inv[2] = q[2];
    for (int j = 0; j < 4; j++) q[j] = vl_f4_loadu(rec + VL_SWEEPV_STRIDE * (size_t)idx[j] + 8);
    vl_f4_transpose(q);
    s->grow[0] = q[0], s->grow[1] = q[1], s->grow[2] = q[2];
}

/* A sweep record broadcast to the batch width's lanes (vl_fw of bvh_kernels.h). */
typedef struct vl_sweepvw {
    vl_fw c[3], inv[3], grow[3], dir[3], tmax, sphere;
} vl_sweepvw;

VL_INLINE void vl_sweepw_broadcast(const float* rec, vl_sweepvw* s) {
    for (int a = 0; a < 3; a++) {
        s->c[a] = vl_fw_set1(rec[a]);
        s->inv[a] = vl_fw_set1(rec[4 + a]);
        s->grow[a] = vl_fw_set1(rec[8 + a]);
        s->dir[a] = vl_fw_set1(rec[12 + a]);
    }
    s->tmax = vl_fw_set1(rec[3]);
    s->sphere = vl_fw_set1(rec[15]);
}

#if VL_BW == 8
VL_INLINE vl_fw vl_sweepw_sqrt(vl_fw a) { return simde_mm256_sqrt_ps(a); }
#else
VL_INLINE vl_fw vl_sweepw_sqrt(vl_fw a) { return simde_mm_sqrt_ps(a); }
#endif

/* A leaf's triangles [s, s + VL_BW) read from its rows (v0, e1 = v1 - v0, e2n = v0 - v2; ng per
 * axis is read where used); lanes past the leaf read the rows' padding or the next row (the
 * callers drop them). */
typedef struct vl_sweep_triw {
    vl_fw v0[3], e1[3], e2n[3];
} vl_sweep_triw;

VL_INLINE void vl_sweepw_load(const float* rows, uint32_t count, uint32_t s, vl_sweep_triw* t) {
    for (int a = 0; a < 3; a++) {
        t->v0[a] = vl_fw_loadu(rows + (size_t)a * count + s);
        t->e1[a] = vl_fw_loadu(rows + (size_t)(3 + a) * count + s);
        t->e2n[a] = vl_fw_loadu(rows + (size_t)(6 + a) * count + s);
    }
}

VL_INLINE vl_fw vl_sweepw_ng(const float* rows, uint32_t count, uint32_t s, int a) {
    return vl_fw_loadu(rows + (size_t)(9 + a) * count + s);
}

/* The centre ray's times [*tn, *tf] (within [0, tmax]) in each triangle's box, grown by 2^-20 of
 * its coordinates (so that the float vertices v0 + e1 and v0 - e2n cover the exact ones) and by
 * the extent. */
VL_INLINE void vl_sweepw_tri_box(const vl_sweep_triw* t, const vl_sweepvw* w, vl_fw* tn, vl_fw* tf) {
    const vl_fw rel20 = vl_fw_set1(0x1p-20f);
    vl_fw near = vl_fw_zero(), far = w->tmax;
    for (int a = 0; a < 3; a++) {
        vl_fw v1 = vl_fw_add(t->v0[a], t->e1[a]), v2 = vl_fw_sub(t->v0[a], t->e2n[a]);
        vl_fw pad = vl_fw_add(vl_fw_add(vl_fw_abs(t->v0[a]), vl_fw_abs(t->e1[a])), vl_fw_abs(t->e2n[a]));
        pad = vl_fw_add(vl_fw_mul(pad, rel20), w->grow[a]);
        vl_fw mn = vl_fw_sub(vl_fw_min(t->v0[a], vl_fw_min(v1, v2)), pad);
        vl_fw mx = vl_fw_add(vl_fw_max(t->v0[a], vl_fw_max(v1, v2)), pad);
        vl_fw lo = vl_fw_mul(vl_fw_sub(mn, w->c[a]), w->inv[a]), hi = vl_fw_mul(vl_fw_sub(mx, w->c[a]), w->inv[a]);
        near = vl_fw_max(near, vl_fw_min(lo, hi));
        far = vl_fw_min(far, vl_fw_max(lo, hi));
    }
    *tn = near, *tf = far;
}

/* The widening of a plane test along the stored normal ng (scaled by |ng|): 2^-19 sum_a m_a nb_a,
 * with nb_a = |e1_b e2_c| + |e1_c e2_b| bounding the exact normal's terms (ng is their rounded
 * cross product, off by up to 2^-22 nb_a) and m_a = |c - v0| + |d tmax| + |e1| + |e2n| + grow on
 * axis a: it covers the normal's error over the triangle and the centre's path, and the float
 * rounding. rel = c - v0. */
VL_INLINE vl_fw vl_sweepw_normal_slack(const vl_sweep_triw* t, const vl_fw rel[3], const vl_sweepvw* w) {
    const vl_fw big = vl_fw_set1(FLT_MAX);
    vl_fw mag = vl_fw_zero();
    for (int a = 0; a < 3; a++) {
        const int b = (a + 1) % 3, c = (a + 2) % 3;
        vl_fw nb = vl_fw_add(vl_fw_abs(vl_fw_mul(t->e1[b], t->e2n[c])), vl_fw_abs(vl_fw_mul(t->e1[c], t->e2n[b])));
        vl_fw span = vl_fw_add(vl_fw_abs(rel[a]), vl_fw_min(vl_fw_abs(vl_fw_mul(w->dir[a], w->tmax)), big));
        span = vl_fw_add(span, vl_fw_add(vl_fw_add(vl_fw_abs(t->e1[a]), vl_fw_abs(t->e2n[a])), w->grow[a]));
        mag = vl_fw_add(mag, vl_fw_mul(span, nb));
    }
    return vl_fw_mul(mag, vl_fw_set1(0x1p-19f));
}

/* The triangles [s, s + VL_BW) of a leaf of `count` (rows as vl_sweepw_load reads them) that the
 * sweep may touch in [0, tmax], and in *lower a time no later than its first touch of each: the
 * later of
 * - the entry into the triangle's grown box (vl_sweepw_tri_box);
 * - the entry into the slab of the triangle's plane within the shape's reach along ng (a sphere:
 *   its grown radius times |ng|; a box: grow.|ng|), widened by vl_sweepw_normal_slack: signed
 *   distances (scaled by |ng|) s0 = (c - v0).ng at t = 0 and s0 + t d.ng later; a lane whose
 *   distances at both ends lie beyond the reach on the same side is dropped.
 * Degenerate triangles (ng = 0) pass the plane test at t = 0. */
VL_INLINE vl_fw vl_sweepw_tris(const float* rows, uint32_t count, uint32_t s, const vl_sweepvw* w, vl_fw* lower) {
    vl_sweep_triw t;
    vl_sweepw_load(rows, count, s, &t);
    vl_fw tn, tf, rel[3];
    vl_sweepw_tri_box(&t, w, &tn, &tf);
    vl_fw s0 = vl_fw_zero(), ds = vl_fw_zero(), box = vl_fw_zero(), n2 = vl_fw_zero();
    for (int a = 0; a < 3; a++) {
        vl_fw ng = vl_sweepw_ng(rows, count, s, a);
        rel[a] = vl_fw_sub(w->c[a], t.v0[a]);
        s0 = vl_fw_add(s0, vl_fw_mul(rel[a], ng));
        ds = vl_fw_add(ds, vl_fw_mul(w->dir[a], ng));
        box = vl_fw_add(box, vl_fw_mul(w->grow[a], vl_fw_abs(ng)));
        n2 = vl_fw_add(n2, vl_fw_mul(ng, ng));
    }
    vl_fw round = vl_fw_mul(w->sphere, vl_fw_mul(vl_sweepw_sqrt(n2), vl_fw_set1(1.0f + 0x1p-18f)));
    vl_fw reach = vl_fw_select(vl_fw_gt(w->sphere, vl_fw_zero()), round, box);
    vl_fw s1 = vl_fw_add(s0, vl_fw_mul(ds, w->tmax));
    vl_fw limit = vl_fw_add(reach, vl_sweepw_normal_slack(&t, rel, w));
    vl_fw above = vl_fw_and(vl_fw_gt(s0, limit), vl_fw_gt(s1, limit));
    vl_fw neg = vl_fw_sub(vl_fw_zero(), limit);
    vl_fw below = vl_fw_and(vl_fw_lt(s0, neg), vl_fw_lt(s1, neg));
    /* the plane's entry, (|s0| - limit) / approach speed, rounded down; a lane beyond the reach
     * and not approaching was dropped above */
    vl_fw gap = vl_fw_sub(vl_fw_abs(s0), limit);
    vl_fw speed = vl_fw_max(vl_fw_select(vl_fw_gt(s0, vl_fw_zero()), vl_fw_sub(vl_fw_zero(), ds), ds),
                            vl_fw_set1(FLT_MIN));
    vl_fw tplane = vl_fw_mul(vl_fw_div(gap, speed), vl_fw_set1(1.0f - 0x1p-20f));
    tn = vl_fw_max(tn, vl_fw_and(vl_fw_gt(gap, vl_fw_zero()), tplane));
    *lower = tn;
    return vl_fw_andnot(vl_fw_le(tn, tf), vl_fw_or(above, below));
}

/* A sphere sweep for vl_sweepw_sphere_tris: unit direction and 1 / |d| rounded from double,
 * broadcast to the batch width's lanes. */
typedef struct vl_spherevw {
    vl_fw u[3], invd;
} vl_spherevw;

VL_INLINE vl_fw vl_sw_dot(const vl_fw a[3], const vl_fw b[3]) {
    return vl_fw_add(vl_fw_add(vl_fw_mul(a[0], b[0]), vl_fw_mul(a[1], b[1])), vl_fw_mul(a[2], b[2]));
}

VL_INLINE void vl_sw_cross(const vl_fw a[3], const vl_fw b[3], vl_fw o[3]) {
    o[0] = vl_fw_sub(vl_fw_mul(a[1], b[2]), vl_fw_mul(a[2], b[1]));
    o[1] = vl_fw_sub(vl_fw_mul(a[2], b[0]), vl_fw_mul(a[0], b[2]));
    o[2] = vl_fw_sub(vl_fw_mul(a[0], b[1]), vl_fw_mul(a[1], b[0]));
}

/* Narrows [*in, *out] to the path distances s where lo <= p + s b <= hi. A slope under 2^-40 of
 * its scale counts as flat (its roots would lie past any touch that the callers' margins allow):
 * the interval is kept where lo <= p <= hi, else emptied (*empty). */
VL_INLINE void vl_sw_slab(vl_fw p, vl_fw b, vl_fw lo, vl_fw hi, vl_fw scale, vl_fw* in, vl_fw* out, vl_fw* empty) {
    vl_fw flat = vl_fw_le(vl_fw_abs(b), vl_fw_mul(scale, vl_fw_set1(0x1p-40f)));
    vl_fw inv = vl_fw_div(vl_fw_set1(1.0f), vl_fw_select(flat, vl_fw_set1(1.0f), b));
    vl_fw r_lo = vl_fw_mul(vl_fw_sub(lo, p), inv), r_hi = vl_fw_mul(vl_fw_sub(hi, p), inv);
    vl_fw enter = vl_fw_select(flat, *in, vl_fw_max(*in, vl_fw_min(r_lo, r_hi)));
    *out = vl_fw_select(flat, *out, vl_fw_min(*out, vl_fw_max(r_lo, r_hi)));
    *in = enter;
    *empty = vl_fw_or(*empty, vl_fw_and(flat, vl_fw_or(vl_fw_lt(p, lo), vl_fw_gt(p, hi))));
}

/* The entry distance into [in, out] clamped at 0, or +inf when it is empty or behind the start. */
VL_INLINE vl_fw vl_sw_entry(vl_fw in, vl_fw out, vl_fw empty) {
    vl_fw miss = vl_fw_or(empty, vl_fw_or(vl_fw_gt(in, out), vl_fw_lt(out, vl_fw_zero())));
    return vl_fw_select(miss, vl_fw_set1(INFINITY), vl_fw_max(in, vl_fw_zero()));
}

/* The path distances [*in, *out] within rb of a point or a line: h2 the squared distance at the
 * path's closest approach, at sc along the path, inv_sin2 one over the squared sine of the angle
 * between path and line (1 for a point); eta2 widens the squared radius, eta the interval.
 * *empty when never. */
VL_INLINE void vl_sw_tube(vl_fw h2, vl_fw sc, vl_fw inv_sin2, vl_fw rb, vl_fw eta, vl_fw eta2, vl_fw* in, vl_fw* out,
                          vl_fw* empty) {
    vl_fw disc = vl_fw_add(vl_fw_sub(vl_fw_mul(rb, rb), h2), eta2);
    vl_fw half = vl_fw_add(vl_sweepw_sqrt(vl_fw_mul(vl_fw_max(disc, vl_fw_zero()), inv_sin2)), eta);
    *in = vl_fw_sub(sc, half), *out = vl_fw_add(sc, half);
    *empty = vl_fw_lt(disc, vl_fw_zero());
}

/* vl_sweepw_tris for a sphere sweep, with a tighter bound: the later of the grown box's entry and
 * the first entry into the parts of the triangle grown by the radius (three balls, three
 * cylinders cut by their edges' slabs, the prism over the face), each a lower bound in float.
 * Distances run along the path (s = |d| t). With L = |c - v0|_1 + |e1|_1 + |e2n|_1 + reach the
 * lane's scale, radii are widened by eta = 2^-12 L and squared distances by 2^-14 L^2, far above
 * the float rounding (tens of 2^-24 L; at the entry s <= 2L) and, for the prism's sides, the
 * stored normal's error (2^-16 L where used). No bound but the box (0) for lanes with L outside
 * [2^-16, 2^30] (squares stay normal floats inside); no cylinder bound (0) for edges within 1/32
 * rad of the path; edges under 2^-13 L lie inside their end balls' widening (skipped); the face
 * is the plane's slab (widened by vl_sweepw_normal_slack) cut by the edges' inward planes where
 * the angle at v0 is over 1/16 rad and both its edges over 2^-13 L, else the slab alone, and no
 * bound (0) where |ng| < 2^-50. Stages stop where no lane is left: box, slab, parts. Values that
 * these cases leave out (a slope's reciprocal past float range) are replaced by selects, lane by
 * lane, and never reach a lane's result. */
VL_INLINE vl_fw vl_sweepw_sphere_tris(const float* rows, uint32_t count, uint32_t s, const vl_sweepvw* w,
                                      const vl_spherevw* sw, vl_fw* lower) {
    vl_sweep_triw t;
    vl_sweepw_load(rows, count, s, &t);
    vl_fw tn, tf, m[3][3], E[3][3], ng[3], L = w->sphere;
    vl_sweepw_tri_box(&t, w, &tn, &tf);
    *lower = tn;
    if (!vl_fw_any(vl_fw_le(tn, tf))) return vl_fw_zero();
    for (int a = 0; a < 3; a++) {
        ng[a] = vl_sweepw_ng(rows, count, s, a);
        m[0][a] = vl_fw_sub(w->c[a], t.v0[a]);
        L = vl_fw_add(L, vl_fw_add(vl_fw_abs(m[0][a]), vl_fw_add(vl_fw_abs(t.e1[a]), vl_fw_abs(t.e2n[a]))));
    }
    const vl_fw zero = vl_fw_zero(), inf = vl_fw_set1(INFINITY), big = vl_fw_set1(FLT_MAX), one = vl_fw_set1(1.0f);
    const vl_fw valid = vl_fw_and(vl_fw_ge(L, vl_fw_set1(0x1p-16f)), vl_fw_le(L, vl_fw_set1(0x1p30f)));
    L = vl_fw_min(vl_fw_max(L, vl_fw_set1(0x1p-16f)), vl_fw_set1(0x1p30f));
    const vl_fw L2 = vl_fw_mul(L, L), eta = vl_fw_mul(L, vl_fw_set1(0x1p-12f));
    const vl_fw eta2 = vl_fw_mul(L2, vl_fw_set1(0x1p-14f)), rb = vl_fw_add(w->sphere, eta);
    const vl_fw tiny = vl_fw_mul(L2, vl_fw_set1(0x1p-26f)), to_time = vl_fw_mul(sw->invd, vl_fw_set1(1.0f - 0x1p-20f));
    /* the plane's slab (the prism's first cut): lanes that never enter it are done */
    vl_fw nn = vl_sw_dot(ng, ng), nlen = vl_sweepw_sqrt(nn), in = vl_fw_sub(zero, big), out = big, no = zero;
    vl_fw rn = vl_fw_add(vl_fw_mul(rb, nlen), vl_sweepw_normal_slack(&t, m[0], w));
    vl_sw_slab(vl_sw_dot(m[0], ng), vl_sw_dot(sw->u, ng), vl_fw_sub(zero, rn), rn, nlen, &in, &out, &no);
    /* a normal under 2^-50 gives no bound (0): slopes along it could underflow */
    const vl_fw tiny_n = vl_fw_lt(nn, vl_fw_set1(0x1p-100f));
    const vl_fw plane = vl_fw_andnot(vl_sw_entry(in, out, no), tiny_n), plane_out = out;
    vl_fw live = vl_fw_le(vl_fw_max(tn, vl_fw_and(valid, vl_fw_mul(plane, to_time))), tf);
    if (!vl_fw_any(live)) return live;
    for (int a = 0; a < 3; a++) {
        m[1][a] = vl_fw_sub(m[0][a], t.e1[a]);
        m[2][a] = vl_fw_add(m[0][a], t.e2n[a]);
        E[0][a] = t.e1[a];
        E[1][a] = vl_fw_sub(zero, vl_fw_add(t.e1[a], t.e2n[a]));
        E[2][a] = t.e2n[a];
    }
    vl_fw best = inf, EE[3], elen[3];
    for (int i = 0; i < 3; i++) {
        /* the ball at vertex i */
        vl_fw mu[3], empty;
        vl_sw_cross(m[i], sw->u, mu);
        vl_sw_tube(vl_sw_dot(mu, mu), vl_fw_sub(zero, vl_sw_dot(m[i], sw->u)), one, rb, eta, eta2, &in, &out, &empty);
        best = vl_fw_min(best, vl_sw_entry(in, out, empty));
        /* the cylinder of edge i (from vertex i), cut by the edge's slab */
        vl_fw uE[3], mE[3];
        EE[i] = vl_sw_dot(E[i], E[i]), elen[i] = vl_sweepw_sqrt(EE[i]);
        vl_sw_cross(sw->u, E[i], uE);
        vl_sw_cross(m[i], E[i], mE);
        vl_fw ww = vl_sw_dot(uE, uE), mw = vl_sw_dot(m[i], uE);
        vl_fw iww = vl_fw_div(one, vl_fw_max(ww, vl_fw_mul(L2, vl_fw_set1(0x1p-40f))));
        vl_sw_tube(vl_fw_mul(vl_fw_mul(mw, mw), iww), vl_fw_mul(vl_fw_sub(zero, vl_sw_dot(mE, uE)), iww),
                   vl_fw_mul(EE[i], iww), rb, eta, eta2, &in, &out, &empty);
        vl_fw pad = vl_fw_mul(eta, elen[i]);
        vl_sw_slab(vl_sw_dot(m[i], E[i]), vl_sw_dot(sw->u, E[i]), vl_fw_sub(zero, pad), vl_fw_add(EE[i], pad), elen[i],
                   &in, &out, &empty);
        vl_fw cyl = vl_sw_entry(in, out, empty);
        vl_fw shortE = vl_fw_lt(EE[i], tiny), para = vl_fw_lt(ww, vl_fw_mul(EE[i], vl_fw_set1(0x1p-10f)));
        best = vl_fw_min(best, vl_fw_select(shortE, inf, vl_fw_andnot(cyl, para)));
    }
    /* the prism: the plane's slab cut by the edges' inward planes (ng x edge) */
    in = plane, out = plane_out, no = vl_fw_eq(plane, inf);
    for (int i = 0; i < 3; i++) {
        vl_fw side[3];
        vl_sw_cross(ng, E[i], side);
        vl_fw slen = vl_fw_mul(nlen, elen[i]);
        vl_sw_slab(vl_sw_dot(m[i], side), vl_sw_dot(sw->u, side), vl_fw_sub(zero, vl_fw_mul(eta, slen)), big, slen, &in,
                   &out, &no);
    }
    vl_fw good = vl_fw_and(vl_fw_ge(nn, vl_fw_mul(vl_fw_mul(EE[0], EE[2]), vl_fw_set1(0x1p-8f))),
                           vl_fw_and(vl_fw_ge(EE[0], tiny), vl_fw_ge(EE[2], tiny)));
    good = vl_fw_andnot(good, tiny_n);
    best = vl_fw_min(best, vl_fw_select(good, vl_sw_entry(in, out, no), plane));
    /* no later than the slab's entry either */
    best = vl_fw_max(best, plane);
    tn = vl_fw_max(tn, vl_fw_and(valid, vl_fw_mul(best, to_time)));
    *lower = tn;
    return vl_fw_le(tn, tf);
}

#endif
