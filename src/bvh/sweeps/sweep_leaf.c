/* Sweep leaf tests: one sweep against a leaf's primitives. The float culling test (a time no
 * later than the first touch of each primitive: the entry into its box grown by the sweep's
 * extent and, for triangles, into the slab around its plane, for spheres into the triangle grown
 * by the radius, for capsules into the slabs around the triangle swept by the segment; VL_BW
 * triangles per instruction, read from the leaf's rows) keeps the exact double test for the
 * primitives the sweep can reach, earliest first. */
#include <math.h>

#include "bvh/sweeps/sweep.h"
#include "compiler.h"

#include "simd/capsule_kernels.h"
#include "simd/sweep_kernels.h"

_Static_assert(VL_SWEEPREC_FLOATS == VL_SWEEPV_STRIDE, "the kernels read the sweep records' layout");

/* Keeps an exact hit at t of the primitive (first, at) if it is the best so far; returns 1 when
 * the sweep is done: any hit, or a closest hit at t = 0 (nothing can come earlier). A finished
 * sweep's record is retired. */
static int keep_hit(double t, uint32_t first, uint32_t at, float* rec, int any_hit, vl_sweep_best* best) {
    if (t < 0.0 || (best->first != VL_BVH_EMPTY && !(t < best->t))) return 0;
    best->t = t, best->first = first, best->at = at;
    const int done = any_hit || t == 0.0;
    rec[VL_SR_TMAX] = done ? -1.0f : vl_sweep_limit(t);
    return done;
}

/* Appends the lanes set in bits of the block from triangle b (of a leaf of count) to which[n...];
 * returns the new count. */
static uint32_t append_lanes(uint32_t bits, uint32_t b, uint32_t count, uint32_t* which, uint32_t n) {
    if (count - b < VL_BW) bits &= (1u << (count - b)) - 1u;
    for (; bits; bits &= bits - 1) which[n++] = b + vl_ctz32(bits);
    return n;
}

/* The sweep's bounds across a leaf's triangles, by the query's shape. */
typedef enum { REACH_BOX, REACH_SPHERE, REACH_CAPSULE } reach_kind;

/* The triangles of the leaf (rows) that the sweep may reach, in which, with a time no later than
 * their first touch in enter; returns how many. Boxes: vl_sweepw_tris; spheres: the sphere bound,
 * with the unit direction and 1 / |d| rounded from double; capsules: the capsule bound, with the
 * segment and radius rounded from double and the pad of the centre's rounding (2^-17 of its
 * coordinates, rounded to float: over the 2^-24 of the centre's rounding and of the float
 * differences). kind is a constant in each caller below, so that each loop has its own body and
 * keeps its kernel's values in registers. */
VL_INLINE uint32_t reach(reach_kind kind, const float* rows, uint32_t count, const vl_sweep_query* q,
                         const float* rec, uint32_t* which, float* enter) {
    vl_sweepvw s;
    vl_sweepw_broadcast(rec, &s);
    vl_spherevw sphere;
    vl_capsulevw cp;
    if (kind == REACH_SPHERE) {
        const double len = sqrt(q->d[0] * q->d[0] + q->d[1] * q->d[1] + q->d[2] * q->d[2]);
        for (int a = 0; a < 3; a++) sphere.u[a] = vl_fw_set1((float)(q->d[a] / len));
        sphere.invd = vl_fw_set1((float)(1.0 / len));
    } else if (kind == REACH_CAPSULE) {
        for (int a = 0; a < 3; a++) cp.D[a] = vl_fw_set1((float)q->seg[a]);
        cp.r = vl_fw_set1((float)q->r);
        cp.pad = vl_fw_set1((float)(q->scale * 0x1p-17 + 1e-20));
    }
    uint32_t n = 0;
    for (uint32_t b = 0; b < count; b += VL_BW) {
        vl_fw tn, hit;
        if (kind == REACH_SPHERE)
            hit = vl_sweepw_sphere_tris(rows, count, b, &s, &sphere, &tn);
        else if (kind == REACH_CAPSULE)
            hit = vl_sweepw_capsule_tris(rows, count, b, &s, &cp, &tn);
        else
            hit = vl_sweepw_tris(rows, count, b, &s, &tn);
        vl_fw_storeu(enter + b, tn);
        n = append_lanes(vl_fw_bits(hit), b, count, which, n);
    }
    return n;
}

static VL_NOINLINE uint32_t reach_box(const float* rows, uint32_t count, const vl_sweep_query* q, const float* rec,
                                      uint32_t* which, float* enter) {
    return reach(REACH_BOX, rows, count, q, rec, which, enter);
}

static VL_NOINLINE uint32_t reach_sphere(const float* rows, uint32_t count, const vl_sweep_query* q,
                                         const float* rec, uint32_t* which, float* enter) {
    return reach(REACH_SPHERE, rows, count, q, rec, which, enter);
}

static VL_NOINLINE uint32_t reach_capsule(const float* rows, uint32_t count, const vl_sweep_query* q,
                                          const float* rec, uint32_t* which, float* enter) {
    return reach(REACH_CAPSULE, rows, count, q, rec, which, enter);
}

int vl_sweep_leaf_tris(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_sweep_query* q, float* rec,
                       int any_hit, vl_sweep_best* best) {
    const float* rows = vl_bvh_leaf_geometry(vl_bvh_leaf_rows(bvh, first), count);
    /* the triangles the sweep may reach, with a time no later than their first touch */
    uint32_t which[VL_BVH_MAX_LEAF_SIZE];
    float enter[VL_BVH_MAX_LEAF_SIZE + VL_BW];
    const uint32_t n = q->is_capsule ? reach_capsule(rows, count, q, rec, which, enter)
                       : q->is_box   ? reach_box(rows, count, q, rec, which, enter)
                                     : reach_sphere(rows, count, q, rec, which, enter);
    /* earliest possible touch first, so that the closest hit's limit drops early */
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && enter[which[j]] < enter[which[j - 1]]; j--) {
            uint32_t x = which[j];
            which[j] = which[j - 1], which[j - 1] = x;
        }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = which[k];
        if (enter[i] > rec[VL_SR_TMAX]) break;
        double v[3][3];
        vl_sweep_tri_vertices(bvh, first, count, i, v);
        double limit = best->first == VL_BVH_EMPTY ? q->tmax : best->t;
        if (keep_hit(vl_sweep_exact_tri(q, v, limit), first, count << 16 | i, rec, any_hit, best)) return 1;
    }
    return 0;
}

int vl_sweep_leaf_boxes(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_sweep_query* q, float* rec,
                        int any_hit, vl_sweep_best* best) {
    vl_sweepv4 s;
    vl_sweep4_broadcast(rec, &s);
    for (uint32_t b = 0; b < count; b += 4) {
        uint32_t left = count - b < 4 ? count - b : 4;
        vl_f4 lo[4], hi[4], tn;
        for (uint32_t j = 0; j < 4; j++) {
            const vl_bvh_box* box = &bvh->boxes[first + b + (j < left ? j : 0)];
            lo[j] = vl_f4_loadu(box->min), hi[j] = vl_f4_loadu(box->max);
        }
        vl_f4_transpose(lo);
        vl_f4_transpose(hi);
        uint32_t bits = vl_f4_bits(vl_sweep4_slab(&s, lo, hi, &tn)) & ((1u << left) - 1u);
        for (; bits; bits &= bits - 1) {
            uint32_t slot = first + b + vl_ctz32(bits);
            const vl_bvh_box* box = &bvh->boxes[slot];
            double mn[3], mx[3];
            for (int a = 0; a < 3; a++) mn[a] = box->min[a], mx[a] = box->max[a];
            double limit = best->first == VL_BVH_EMPTY ? q->tmax : best->t;
            if (keep_hit(vl_sweep_exact_box(q, mn, mx, limit), slot, 0, rec, any_hit, best)) return 1;
            s.tmax = vl_f4_set1(rec[VL_SR_TMAX]);
        }
    }
    return 0;
}
