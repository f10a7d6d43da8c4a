/* Overlap kernels: box and sphere queries against the 4 children of a node4 (4 lanes, SIMD across
 * queries, or one query across the children), and one box or sphere query against VL_W triangles
 * of a leaf's rows (SIMD across triangles; vl_ov4_* and vl_ov8_*, bodies in overlap_kernels_w.h). The float tolerance is VL_BVH_OVERLAP_TOLERANCE (see
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

#define VL_W 4
#include "simd/overlap_kernels_w.h"
#undef VL_W
#define VL_W 8
#include "simd/overlap_kernels_w.h"
#undef VL_W

#endif
