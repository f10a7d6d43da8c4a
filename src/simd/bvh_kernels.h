/* BVH kernels. The batched traversal's kernels run SIMD across rays at the batch width VL_BW
 * (8 lanes where the hardware has them, else 4): gathering ray records by index into SoA vectors,
 * the slab test of many rays against one box, ray-triangle tests of one triangle against many
 * rays (and of one ray against a leaf's triangles), and the records made from the caller's rays.
 * The single-ray walk's kernels order a node4's 4 children (4 lanes, or two walks' nodes in 8).
 * Inputs are clean (validated at the API edge): no NaN in any record. */
#ifndef VL_SIMD_BVH_KERNELS_H
#define VL_SIMD_BVH_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include <volley/bvh.h>

#include "compiler.h"
#include "simd/lane_order.h"
#include "simd/simd.h"

/* The batch width's vectors: vl_fw and vl_iw are vl_f8 and vl_i8 where 8 lanes are native, else
 * vl_f4 and vl_i4, and vl_fw_<op> is that width's vl_f8_<op> or vl_f4_<op>. */
#if VL_SIMD_PREFERRED_WIDTH == 8
#define VL_BW 8u
typedef vl_f8 vl_fw;
typedef vl_i8 vl_iw;
#define vl_fw_set1 vl_f8_set1
#define vl_fw_zero vl_f8_zero
#define vl_fw_loadu vl_f8_loadu
#define vl_fw_storeu vl_f8_storeu
#define vl_fw_add vl_f8_add
#define vl_fw_sub vl_f8_sub
#define vl_fw_mul vl_f8_mul
#define vl_fw_div vl_f8_div
#define vl_fw_min vl_f8_min
#define vl_fw_max vl_f8_max
#define vl_fw_lt vl_f8_lt
#define vl_fw_le vl_f8_le
#define vl_fw_gt vl_f8_gt
#define vl_fw_ge vl_f8_ge
#define vl_fw_eq vl_f8_eq
#define vl_fw_and vl_f8_and
#define vl_fw_or vl_f8_or
#define vl_fw_andnot vl_f8_andnot
#define vl_fw_select vl_f8_select
#define vl_fw_abs vl_f8_abs
#define vl_fw_any vl_f8_any
#define vl_fw_bits vl_f8_bits
#define vl_fw_first vl_f8_first
#define vl_fw_true vl_f8_true
#define vl_fw_as_i vl_f8_as_i
#define vl_iw_loadu vl_i8_loadu
#define vl_iw_set1 vl_i8_set1
#define vl_iw_sub vl_i8_sub
#define vl_iw_and vl_i8_and
#define vl_iw_or vl_i8_or
#define vl_iw_min vl_i8_min
#define vl_iw_max vl_i8_max
#define vl_iw_as_f vl_i8_as_f
#define vl_iw_shuffle vl_i8_shuffle
#define vl_iw_blend16 vl_i8_blend16
#else
#define VL_BW 4u
typedef vl_f4 vl_fw;
typedef vl_i4 vl_iw;
#define vl_fw_set1 vl_f4_set1
#define vl_fw_zero vl_f4_zero
#define vl_fw_loadu vl_f4_loadu
#define vl_fw_storeu vl_f4_storeu
#define vl_fw_add vl_f4_add
#define vl_fw_sub vl_f4_sub
#define vl_fw_mul vl_f4_mul
#define vl_fw_div vl_f4_div
#define vl_fw_min vl_f4_min
#define vl_fw_max vl_f4_max
#define vl_fw_lt vl_f4_lt
#define vl_fw_le vl_f4_le
#define vl_fw_gt vl_f4_gt
#define vl_fw_ge vl_f4_ge
#define vl_fw_eq vl_f4_eq
#define vl_fw_and vl_f4_and
#define vl_fw_or vl_f4_or
#define vl_fw_andnot vl_f4_andnot
#define vl_fw_select vl_f4_select
#define vl_fw_abs vl_f4_abs
#define vl_fw_any vl_f4_any
#define vl_fw_bits vl_f4_bits
#define vl_fw_first vl_f4_first
#define vl_fw_true vl_f4_true
#define vl_fw_as_i vl_f4_as_i
#define vl_iw_loadu vl_i4_loadu
#define vl_iw_set1 vl_i4_set1
#define vl_iw_sub vl_i4_sub
#define vl_iw_and vl_i4_and
#define vl_iw_or vl_i4_or
#define vl_iw_min vl_i4_min
#define vl_iw_max vl_i4_max
#define vl_iw_as_f vl_i4_as_f
#define vl_iw_shuffle vl_i4_shuffle
#define vl_iw_blend16 vl_i4_blend16
#endif

/* VL_BW rays, or one ray broadcast, ready for slab tests. */
typedef struct vl_rayw {
    vl_fw origin[3], inv_dir[3], tmin, tmax;
} vl_rayw;

/* VL_BW boxes, or one box broadcast. */
typedef struct vl_boxw {
    vl_fw min[3], max[3];
} vl_boxw;

/* Triangles across lanes: v0, e1 = v1 - v0, e2n = v0 - v2, ng = e1 x (v2 - v0). */
typedef struct vl_triw {
    vl_fw v0[3], e1[3], e2n[3], ng[3];
} vl_triw;

/* Quad q (4 floats at offset 4q) of the records rec + stride * idx[j], j < VL_BW, transposed into
 * out[0..3] (out[c] lane j = component c of record j). Records need no alignment. 8 lanes: rows
 * pair records j and j + 4 in the two 128-bit halves, and the in-lane 4x4 transpose leaves every
 * component in lane order. */
VL_INLINE void vl_kw_gather(const float* rec, uint32_t stride, const uint32_t* idx, uint32_t q, vl_fw out[4]) {
#if VL_BW == 8
    for (int j = 0; j < 4; j++)
        out[j] = vl_f8_join(simde_mm_loadu_ps(rec + (size_t)stride * idx[j] + 4 * q),
                            simde_mm_loadu_ps(rec + (size_t)stride * idx[j + 4] + 4 * q));
    vl_f8_transpose(out);
#else
    for (int j = 0; j < 4; j++) out[j] = simde_mm_loadu_ps(rec + (size_t)stride * idx[j] + 4 * q);
    vl_f4_transpose(out);
#endif
}

/* The inverse for the records rec + stride * j, j < VL_BW: in[c] lane j goes to component c of
 * quad q of record j (in is transposed in place). */
VL_INLINE void vl_kw_scatter(float* rec, uint32_t stride, uint32_t q, vl_fw in[4]) {
#if VL_BW == 8
    vl_f8_transpose(in);
    for (int j = 0; j < 4; j++) {
        simde_mm_storeu_ps(rec + (size_t)stride * j + 4 * q, vl_f8_low(in[j]));
        simde_mm_storeu_ps(rec + (size_t)stride * (j + 4) + 4 * q, vl_f8_high(in[j]));
    }
#else
    vl_f4_transpose(in);
    for (int j = 0; j < 4; j++) simde_mm_storeu_ps(rec + (size_t)stride * j + 4 * q, in[j]);
#endif
}

#if VL_BW == 8
/* Left-packs the ids[j] (j < 8) whose bit is set in `bits` (not 0) to dst, in lane order, and
 * returns dst past them. Stores 8 entries: up to 7 past the packed ones are overwritten. */
VL_INLINE uint32_t* vl_kw_compress8(uint32_t* dst, const uint32_t* ids, uint32_t bits) {
    /* nibble k: the lane of the k-th set bit */
#define VL_COMPRESS_FIELD(rank) (4u * (rank))
#define VL_COMPRESS_LANES(b) (uint32_t) VL_LANE_ENTRY(b, VL_COMPRESS_FIELD)
    static const uint32_t lanes[256] = {VL_LANE_TABLE(VL_COMPRESS_LANES)};
#undef VL_COMPRESS_LANES
#undef VL_COMPRESS_FIELD
    static const int32_t nibble[8] = {0, 4, 8, 12, 16, 20, 24, 28};
    vl_i8 sel = vl_i8_shr_var(vl_i8_set1((int32_t)lanes[bits & 0xFFu]), vl_i8_loadu(nibble));
    vl_i8_storeu(dst, vl_i8_permute(vl_i8_loadu(ids), sel));
    return dst + vl_popcount32(bits);
}
#endif

/* Slab test, no parallel axis (every inv_dir finite): the entry t of each ray into each box goes
 * to *tnear; the mask is set where [entry, exit] meets [tmin, tmax]. 6 sub, 6 mul, 12 min/max. */
VL_INLINE vl_fw vl_kw_slab(const vl_rayw* r, const vl_boxw* b, vl_fw* tnear) {
    vl_fw tn = r->tmin, tf = r->tmax;
    for (int a = 0; a < 3; a++) {
        vl_fw t1 = vl_fw_mul(vl_fw_sub(b->min[a], r->origin[a]), r->inv_dir[a]);
        vl_fw t2 = vl_fw_mul(vl_fw_sub(b->max[a], r->origin[a]), r->inv_dir[a]);
        tn = vl_fw_max(tn, vl_fw_min(t1, t2));
        tf = vl_fw_min(tf, vl_fw_max(t1, t2));
    }
    *tnear = tn;
    return vl_fw_le(tn, tf);
}

/* Slab test where inv_dir may be +-INFINITY (a parallel axis): such an axis bounds nothing, but
 * the origin must lie inside its slab. inv_dir is swapped for 1 there, so no inf * 0 is formed. */
VL_INLINE vl_fw vl_kw_slab_parallel(const vl_rayw* r, const vl_boxw* b, vl_fw* tnear) {
    const vl_fw inf = vl_fw_set1(INFINITY), zero = vl_fw_zero(), one = vl_fw_set1(1.0f);
    vl_fw tn = r->tmin, tf = r->tmax, outside = zero;
    for (int a = 0; a < 3; a++) {
        vl_fw parallel = vl_fw_eq(vl_fw_abs(r->inv_dir[a]), inf);
        vl_fw inv = vl_fw_select(parallel, one, r->inv_dir[a]);
        vl_fw d1 = vl_fw_sub(b->min[a], r->origin[a]);
        vl_fw d2 = vl_fw_sub(b->max[a], r->origin[a]);
        vl_fw t1 = vl_fw_mul(d1, inv), t2 = vl_fw_mul(d2, inv);
        outside = vl_fw_or(outside, vl_fw_and(parallel, vl_fw_or(vl_fw_gt(d1, zero), vl_fw_lt(d2, zero))));
        /* where parallel and inside, min(t1, t2) = d1 <= 0 <= tmin: neutral, no select needed */
        tn = vl_fw_max(tn, vl_fw_min(t1, t2));
        tf = vl_fw_min(tf, vl_fw_select(parallel, inf, vl_fw_max(t1, t2)));
    }
    *tnear = tn;
    return vl_fw_andnot(vl_fw_le(tn, tf), outside);
}

/* t's 12 vectors in the order of a leaf's geometry rows (v0, e1, e2n, ng as x y z, from
 * vl_bvh_leaf_geometry): row k fills *slot[k].
 * The rows are read through a pointer bumped a stride at a time: indexed, gcc kept 12 multiples
 * of the stride and spilled them. */
VL_INLINE void vl_kw_tri_slots(vl_triw* t, vl_fw* slot[12]) {
    for (int a = 0; a < 3; a++) slot[a] = &t->v0[a], slot[3 + a] = &t->e1[a];
    for (int a = 0; a < 3; a++) slot[6 + a] = &t->e2n[a], slot[9 + a] = &t->ng[a];
}

/* One triangle broadcast to every lane, its 12 floats `stride` apart from row0 (see tri_slots). */
VL_INLINE vl_triw vl_kw_tri_broadcast(const float* row0, uint32_t stride) {
    vl_triw t;
    vl_fw* slot[12];
    vl_kw_tri_slots(&t, slot);
    const float* row = row0;
    for (uint32_t k = 0; k < 12; k++, row += stride) *slot[k] = vl_fw_set1(*row);
    return t;
}

/* Three-term dot product, summed in the scalar code's order. */
VL_INLINE vl_fw vl_kw_dot3(vl_fw ax, vl_fw ay, vl_fw az, vl_fw bx, vl_fw by, vl_fw bz) {
    return vl_fw_add(vl_fw_add(vl_fw_mul(ax, bx), vl_fw_mul(ay, by)), vl_fw_mul(az, bz));
}

/* Moller-Trumbore with a precomputed normal (see vl_bvh_ray_triangle) for VL_BW rays (origin o,
 * direction d) against one double-sided triangle: the mask of lanes with |det| > 2^-20 |ng|_1
 * |d|_1 (not grazing), u >= -eps, v >= -eps, u + v <= 1 + eps and t in [tmin, tmax], and t, u,
 * v. The float operations and their order are the scalar code's, so both paths answer alike to
 * the bit; a zero det gives inf/NaN lanes that the det mask drops. 19 mul, 1 div. */
VL_INLINE vl_fw vl_kw_ray_triangle(const vl_fw o[3], const vl_fw d[3], vl_fw tmin, vl_fw tmax, const vl_triw* tri,
                                   vl_fw* t_out, vl_fw* u_out, vl_fw* v_out) {
    const vl_fw *ng = tri->ng, *e1 = tri->e1, *e2n = tri->e2n;
    vl_fw det = vl_kw_dot3(ng[0], ng[1], ng[2], d[0], d[1], d[2]);
    vl_fw nsum = vl_fw_add(vl_fw_add(vl_fw_abs(ng[0]), vl_fw_abs(ng[1])), vl_fw_abs(ng[2]));
    vl_fw dsum = vl_fw_add(vl_fw_add(vl_fw_abs(d[0]), vl_fw_abs(d[1])), vl_fw_abs(d[2]));
    vl_fw steep = vl_fw_gt(vl_fw_abs(det), vl_fw_mul(vl_fw_mul(nsum, dsum), vl_fw_set1(0x1p-20f)));
    vl_fw inv = vl_fw_div(vl_fw_set1(1.0f), det);
    vl_fw cx = vl_fw_sub(tri->v0[0], o[0]), cy = vl_fw_sub(tri->v0[1], o[1]), cz = vl_fw_sub(tri->v0[2], o[2]);
    vl_fw rx = vl_fw_sub(vl_fw_mul(d[1], cz), vl_fw_mul(d[2], cy));
    vl_fw ry = vl_fw_sub(vl_fw_mul(d[2], cx), vl_fw_mul(d[0], cz));
    vl_fw rz = vl_fw_sub(vl_fw_mul(d[0], cy), vl_fw_mul(d[1], cx));
    vl_fw t = vl_fw_mul(vl_kw_dot3(ng[0], ng[1], ng[2], cx, cy, cz), inv);
    vl_fw u = vl_fw_mul(vl_kw_dot3(rx, ry, rz, e2n[0], e2n[1], e2n[2]), inv);
    vl_fw v = vl_fw_mul(vl_kw_dot3(rx, ry, rz, e1[0], e1[1], e1[2]), inv);
    const vl_fw neg_eps = vl_fw_set1(-VL_BVH_TRIANGLE_EPSILON);
    const vl_fw one_eps = vl_fw_set1(1.0f + VL_BVH_TRIANGLE_EPSILON);
    vl_fw m = vl_fw_and(vl_fw_ge(u, neg_eps), steep);
    m = vl_fw_and(m, vl_fw_ge(v, neg_eps));
    m = vl_fw_and(m, vl_fw_le(vl_fw_add(u, v), one_eps));
    m = vl_fw_and(m, vl_fw_and(vl_fw_ge(t, tmin), vl_fw_le(t, tmax)));
    *t_out = t, *u_out = u, *v_out = v;
    return m;
}

/* One ray (o, d, tmin, tmax broadcast) against n triangles (1 <= n <= VL_BW) in rows, one per
 * lane: float k (v0, e1, e2n, ng as x y z) of triangle j at row0 + k stride + j. The mask bits of
 * the lanes hit (see ray_triangle), and t, u, v. Lanes past n read on past their row and are
 * dropped; the last row's are zeroed first (what follows it may be integers, which as floats are
 * denormals, slow in arithmetic). */
VL_INLINE uint32_t vl_kw_ray_tri_rows(const float* row0, uint32_t stride, uint32_t n, const vl_fw o[3],
                                      const vl_fw d[3], vl_fw tmin, vl_fw tmax, vl_fw* t_out, vl_fw* u_out,
                                      vl_fw* v_out) {
    const vl_fw live = vl_fw_first(n);
    vl_triw tri;
    vl_fw* slot[12];
    vl_kw_tri_slots(&tri, slot);
    const float* row = row0;
    for (uint32_t k = 0; k < 12; k++, row += stride) *slot[k] = vl_fw_loadu(row);
    tri.ng[2] = vl_fw_and(tri.ng[2], live);
    vl_fw m = vl_kw_ray_triangle(o, d, tmin, tmax, &tri, t_out, u_out, v_out);
    return vl_fw_bits(vl_fw_and(m, live));
}

/* Ray records for the traversals of VL_BW caller rays: ray j's 8 floats (origin, tmin, dir, tmax,
 * as vl_ray) at rays + 8 j; its record at rec + stride j, three quads: (origin, tmin),
 * (1 / dir, tmax), (dir, tmax), where dir's components under FLT_MIN in magnitude are flushed to
 * signed zeros (whose inverse is then infinite) and tmax is at most FLT_MAX. These are
 * vl_bvh_rayrec_set's float operations (ray_tests.h), so the records agree with it to the bit.
 * A ray that is not valid (a component NaN or infinite, none of dir at least FLT_MIN, tmin < 0 or
 * tmin > tmax) gets the retired record instead: 1 everywhere, tmin 0, tmax -1. Returns the valid
 * lanes; *flat gets those of them with a flushed component. */
VL_INLINE uint32_t vl_kw_rayrecs(const float* rays, float* rec, uint32_t stride, uint32_t* flat) {
    static const uint32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    vl_fw org[4], dir[4], inv[4];
    vl_kw_gather(rays, 8, ramp, 0, org);
    vl_kw_gather(rays, 8, ramp, 1, dir);
    const vl_fw zero = vl_fw_zero(), one = vl_fw_set1(1.0f), tiny = vl_fw_set1(FLT_MIN), inf = vl_fw_set1(INFINITY);
    /* compares are false on NaN: a NaN anywhere fails one of them */
    vl_fw ok = vl_fw_and(vl_fw_ge(org[3], zero), vl_fw_le(org[3], dir[3]));
    vl_fw moves = zero, flushed = zero;
    for (int a = 0; a < 3; a++) {
        vl_fw size = vl_fw_abs(dir[a]), small = vl_fw_lt(size, tiny);
        ok = vl_fw_and(ok, vl_fw_and(vl_fw_lt(vl_fw_abs(org[a]), inf), vl_fw_lt(size, inf)));
        moves = vl_fw_or(moves, vl_fw_ge(size, tiny));
        flushed = vl_fw_or(flushed, small);
        dir[a] = vl_fw_select(small, vl_fw_and(dir[a], vl_fw_set1(-0.0f)), dir[a]);
        inv[a] = vl_fw_div(one, dir[a]); /* 1 / +-0 = +-inf */
    }
    ok = vl_fw_and(ok, moves);
    vl_fw tmax = vl_fw_select(vl_fw_lt(dir[3], vl_fw_set1(FLT_MAX)), dir[3], vl_fw_set1(FLT_MAX));
    for (int a = 0; a < 3; a++) {
        org[a] = vl_fw_select(ok, org[a], one);
        inv[a] = vl_fw_select(ok, inv[a], one);
        dir[a] = vl_fw_select(ok, dir[a], one);
    }
    org[3] = vl_fw_select(ok, org[3], zero);
    inv[3] = dir[3] = vl_fw_select(ok, tmax, vl_fw_set1(-1.0f));
    vl_kw_scatter(rec, stride, 0, org);
    vl_kw_scatter(rec, stride, 1, inv);
    vl_kw_scatter(rec, stride, 2, dir);
    *flat = vl_fw_bits(vl_fw_and(ok, flushed));
    return vl_fw_bits(ok);
}

/* The order in which a single-ray walk pushes a node4's children, without a branch: the children
 * hit (lanes of `hit`) by entry t (tn, at least -0), farthest first and of equal ones the last
 * lane first, then the missed ones. Lane j of the result is the j-th child's key: its t's bits
 * with the two low bits replaced by its lane (the key & ~3, as a float, is at most its t: a safe
 * entry t to cull by). A sorting network of 5 compare-exchanges on the keys as integers. */
VL_INLINE vl_i4 vl_k4_far_first(vl_f4 hit, vl_f4 tn) {
    const vl_i4 lane = simde_mm_setr_epi32(0, 1, 2, 3);
    vl_i4 t = vl_i4_max(vl_f4_as_i(tn), vl_i4_set1(0)); /* -0 sorts as +0 */
    vl_i4 key = vl_i4_or(vl_i4_and(t, vl_i4_set1(~3)), lane);
    key = vl_f4_as_i(vl_f4_select(hit, vl_i4_as_f(key), vl_i4_as_f(vl_i4_sub(lane, vl_i4_set1(4)))));
    vl_i4 s = vl_i4_shuffle(key, SIMDE_MM_SHUFFLE(2, 3, 0, 1)); /* (0, 1) and (2, 3) */
    key = vl_i4_blend16(vl_i4_max(key, s), vl_i4_min(key, s), 0xCC);
    s = vl_i4_shuffle(key, SIMDE_MM_SHUFFLE(1, 0, 3, 2)); /* (0, 2) and (1, 3) */
    key = vl_i4_blend16(vl_i4_max(key, s), vl_i4_min(key, s), 0xF0);
    s = vl_i4_shuffle(key, SIMDE_MM_SHUFFLE(3, 1, 2, 0)); /* (1, 2) */
    return vl_i4_blend16(vl_i4_max(key, s), vl_i4_min(key, s), 0x30);
}

/* The entry t by which an any-hit walk orders the children hit: tmax where the box holds the
 * origin (entered at tmin), tn elsewhere (see visit_order4 in ray1.h). */
VL_INLINE vl_f4 vl_k4_origin_last(vl_f4 tn, vl_f4 tmin, vl_f4 tmax) {
    return vl_f4_select(vl_f4_le(tn, tmin), tmax, tn);
}

#if VL_BW == 8
/* vl_k4_far_first on each 128-bit half: two walks' nodes in one pass. */
VL_INLINE vl_i8 vl_k8_far_first(vl_f8 hit, vl_f8 tn) {
    static const int32_t quad[8] = {0, 1, 2, 3, 0, 1, 2, 3};
    const vl_i8 lane = vl_i8_loadu(quad);
    vl_i8 t = vl_i8_max(vl_f8_as_i(tn), vl_i8_set1(0));
    vl_i8 key = vl_i8_or(vl_i8_and(t, vl_i8_set1(~3)), lane);
    key = vl_f8_as_i(vl_f8_select(hit, vl_i8_as_f(key), vl_i8_as_f(vl_i8_sub(lane, vl_i8_set1(4)))));
    vl_i8 s = vl_i8_shuffle(key, SIMDE_MM_SHUFFLE(2, 3, 0, 1));
    key = vl_i8_blend16(vl_i8_max(key, s), vl_i8_min(key, s), 0xCC);
    s = vl_i8_shuffle(key, SIMDE_MM_SHUFFLE(1, 0, 3, 2));
    key = vl_i8_blend16(vl_i8_max(key, s), vl_i8_min(key, s), 0xF0);
    s = vl_i8_shuffle(key, SIMDE_MM_SHUFFLE(3, 1, 2, 0));
    return vl_i8_blend16(vl_i8_max(key, s), vl_i8_min(key, s), 0x30);
}

/* vl_k4_origin_last at 8 lanes. */
VL_INLINE vl_f8 vl_k8_origin_last(vl_f8 tn, vl_f8 tmin, vl_f8 tmax) {
    return vl_f8_select(vl_f8_le(tn, tmin), tmax, tn);
}
#endif

#endif
