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

/* The triangles [s, s + VL_BW) of a leaf of `count` whose rows start at rows (v0, e1 = v1 - v0,
 * e2n = v0 - v2, ng per axis) that the sweep may touch in [0, tmax], and in *lower a time no later
 * than its first touch of each: the later of
 * - the entry of the centre ray into the triangle's box (grown by 2^-20 of its coordinates, so
 *   that the float vertices v0 + e1 and v0 - e2n cover the exact ones) grown by the extent;
 * - the entry into the slab of the triangle's plane within the shape's reach along ng (a sphere:
 *   its grown radius times |ng|; a box: grow.|ng|): signed distances (scaled by |ng|) s0 = (c - v0).ng
 *   at t = 0 and s0 + t d.ng later, the reach widened by 2^-19 of sum_a m_a nb_a, with
 *   nb_a = |e1_b e2_c| + |e1_c e2_b| bounding the exact normal's terms (ng is their rounded cross
 *   product, off by up to 2^-22 nb_a) and m_a = |c - v0| + |d tmax| + |e1| + |e2n| + grow on
 *   axis a; a lane whose distances at both ends lie beyond the reach on the same side is dropped.
 * Degenerate triangles (ng = 0) pass the plane test at t = 0. Lanes past the leaf read the rows'
 * padding or the next row (the caller drops them). */
VL_INLINE vl_fw vl_sweepw_tris(const float* rows, uint32_t count, uint32_t s, const vl_sweepvw* w, vl_fw* lower) {
    vl_fw v0[3], e1[3], e2n[3];
    vl_fw tn = vl_fw_zero(), tf = w->tmax;
    const vl_fw rel20 = vl_fw_set1(0x1p-20f);
    for (int a = 0; a < 3; a++) {
        v0[a] = vl_fw_loadu(rows + (size_t)a * count + s);
        e1[a] = vl_fw_loadu(rows + (size_t)(3 + a) * count + s);
        e2n[a] = vl_fw_loadu(rows + (size_t)(6 + a) * count + s);
        vl_fw v1 = vl_fw_add(v0[a], e1[a]), v2 = vl_fw_sub(v0[a], e2n[a]);
        vl_fw pad = vl_fw_mul(vl_fw_add(vl_fw_add(vl_fw_abs(v0[a]), vl_fw_abs(e1[a])), vl_fw_abs(e2n[a])), rel20);
        vl_fw mn = vl_fw_sub(vl_fw_min(v0[a], vl_fw_min(v1, v2)), vl_fw_add(pad, w->grow[a]));
        vl_fw mx = vl_fw_add(vl_fw_max(v0[a], vl_fw_max(v1, v2)), vl_fw_add(pad, w->grow[a]));
        vl_fw lo = vl_fw_mul(vl_fw_sub(mn, w->c[a]), w->inv[a]), hi = vl_fw_mul(vl_fw_sub(mx, w->c[a]), w->inv[a]);
        tn = vl_fw_max(tn, vl_fw_min(lo, hi));
        tf = vl_fw_min(tf, vl_fw_max(lo, hi));
    }
    vl_fw s0 = vl_fw_zero(), ds = vl_fw_zero(), box = vl_fw_zero(), n2 = vl_fw_zero(), mag = vl_fw_zero();
    const vl_fw big = vl_fw_set1(FLT_MAX);
    for (int a = 0; a < 3; a++) {
        const int b = (a + 1) % 3, c = (a + 2) % 3;
        vl_fw ng = vl_fw_loadu(rows + (size_t)(9 + a) * count + s), an = vl_fw_abs(ng);
        vl_fw nb = vl_fw_add(vl_fw_abs(vl_fw_mul(e1[b], e2n[c])), vl_fw_abs(vl_fw_mul(e1[c], e2n[b])));
        vl_fw rel = vl_fw_sub(w->c[a], v0[a]);
        s0 = vl_fw_add(s0, vl_fw_mul(rel, ng));
        ds = vl_fw_add(ds, vl_fw_mul(w->dir[a], ng));
        box = vl_fw_add(box, vl_fw_mul(w->grow[a], an));
        n2 = vl_fw_add(n2, vl_fw_mul(ng, ng));
        vl_fw span = vl_fw_add(vl_fw_abs(rel), vl_fw_min(vl_fw_abs(vl_fw_mul(w->dir[a], w->tmax)), big));
        span = vl_fw_add(span, vl_fw_add(vl_fw_add(vl_fw_abs(e1[a]), vl_fw_abs(e2n[a])), w->grow[a]));
        mag = vl_fw_add(mag, vl_fw_mul(span, nb));
    }
    vl_fw round = vl_fw_mul(w->sphere, vl_fw_mul(vl_sweepw_sqrt(n2), vl_fw_set1(1.0f + 0x1p-18f)));
    vl_fw reach = vl_fw_select(vl_fw_gt(w->sphere, vl_fw_zero()), round, box);
    vl_fw s1 = vl_fw_add(s0, vl_fw_mul(ds, w->tmax));
    vl_fw limit = vl_fw_add(reach, vl_fw_mul(mag, vl_fw_set1(0x1p-19f)));
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

#endif
