/* BVH kernels, SIMD across rays: gathering ray records by index into SoA vectors, the node test
 * with move-to-front partition of the index array, ray-triangle and ray-box tests of one leaf
 * primitive against many rays, and one ray against a leaf's triangles. Width-generic bodies in
 * bvh_kernels_w.h (vl_b4_* and vl_b8_*).
 * Inputs are clean (validated at the API edge): no NaN in any record. */
#ifndef VL_SIMD_BVH_KERNELS_H
#define VL_SIMD_BVH_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include <volley/bvh.h>

#include "simd/kernels.h"
#include "simd/lane_order.h"
#include "simd/simd.h"

/* Quad q (4 floats at offset 4q) of the records rec + stride * idx[j], j < 4, transposed into
 * out[0..3] (out[c] lane j = component c of record j). Records need no alignment (triangles are
 * 52 bytes apart). */
VL_INLINE void vl_b4_gather(const float* rec, uint32_t stride, const uint32_t* idx, uint32_t q, vl_f4 out[4]) {
    for (int j = 0; j < 4; j++) out[j] = simde_mm_loadu_ps(rec + (size_t)stride * idx[j] + 4 * q);
    vl_f4_transpose(out);
}

/* The inverse for the records rec + stride * j, j < 4: in[c] lane j goes to component c of quad
 * q of record j (in is transposed in place). */
VL_INLINE void vl_b4_scatter(float* rec, uint32_t stride, uint32_t q, vl_f4 in[4]) {
    vl_f4_transpose(in);
    for (int j = 0; j < 4; j++) simde_mm_storeu_ps(rec + (size_t)stride * j + 4 * q, in[j]);
}

/* The same for 8 records: rows pair records j and j + 4 in the two 128-bit halves, and the
 * in-lane 4x4 transpose leaves every component in lane order. */
VL_INLINE void vl_b8_gather(const float* rec, uint32_t stride, const uint32_t* idx, uint32_t q, vl_f8 out[4]) {
    for (int j = 0; j < 4; j++)
        out[j] = vl_f8_join(simde_mm_loadu_ps(rec + (size_t)stride * idx[j] + 4 * q),
                            simde_mm_loadu_ps(rec + (size_t)stride * idx[j + 4] + 4 * q));
    vl_f8_transpose(out);
}

VL_INLINE void vl_b8_scatter(float* rec, uint32_t stride, uint32_t q, vl_f8 in[4]) {
    vl_f8_transpose(in);
    for (int j = 0; j < 4; j++) {
        simde_mm_storeu_ps(rec + (size_t)stride * j + 4 * q, vl_f8_low(in[j]));
        simde_mm_storeu_ps(rec + (size_t)stride * (j + 4) + 4 * q, vl_f8_high(in[j]));
    }
}

/* Left-packs the ids[j] (j < 8) whose bit is set in `bits` (not 0) to dst, in lane order, and
 * returns dst past them. Stores 8 entries: up to 7 past the packed ones are overwritten. */
VL_INLINE uint32_t* vl_b8_compress(uint32_t* dst, const uint32_t* ids, uint32_t bits) {
    /* nibble k: the lane of the k-th set bit */
#define VL_COMPRESS_FIELD(rank) (4u * (rank))
#define VL_COMPRESS_LANES(b) (uint32_t) VL_LANE_ENTRY(b, VL_COMPRESS_FIELD)
    static const uint32_t lanes[256] = {VL_LANE_TABLE(VL_COMPRESS_LANES)};
#undef VL_COMPRESS_LANES
#undef VL_COMPRESS_FIELD
    static const int32_t nibble[8] = {0, 4, 8, 12, 16, 20, 24, 28};
    vl_i8 sel = vl_i8_shr_var(vl_i8_set1((int32_t)lanes[bits & 0xFFu]), vl_i8_loadu(nibble));
    vl_i8_storeu(dst, vl_i8_permute(vl_i8_loadu(ids), sel));
    return dst + __builtin_popcount(bits);
}

#define VL_W 4
#include "simd/bvh_kernels_w.h"
#undef VL_W
#define VL_W 8
#include "simd/bvh_kernels_w.h"
#undef VL_W

#endif
