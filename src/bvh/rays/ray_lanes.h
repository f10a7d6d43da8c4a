/* The batch's view of its rays and of a node4, VL_BW rays at a time, shared by the ray streams and
 * the seeding: records gathered by index, a node4's child boxes broadcast, lists appended to. */
#ifndef VL_BVH_RAYS_RAY_LANES_H
#define VL_BVH_RAYS_RAY_LANES_H

#include <string.h>

#include "bvh/rays/ray_tests.h"
#include "simd/bvh_kernels.h"

/* Entries past a ray list (or an index array) that a VL_BW-wide store may write. */
#define VL_LIST_SPARE 8u
_Static_assert(VL_LIST_SPARE >= VL_BW, "a wide store past a list stays in its spare entries");

/* The slab tests' view of the records idx[0, VL_BW): origin, tmin, inv_dir, tmax. */
VL_INLINE vl_rayw vl_lanes_slab_rays(const float* rec, const uint32_t* idx) {
    vl_fw q0[4], q1[4];
    vl_kw_gather(rec, VL_RAYREC_FLOATS, idx, 0, q0);
    vl_kw_gather(rec, VL_RAYREC_FLOATS, idx, 1, q1);
    vl_rayw r;
    for (int a = 0; a < 3; a++) r.origin[a] = q0[a], r.inv_dir[a] = q1[a];
    r.tmin = q0[3];
    r.tmax = q1[3];
    return r;
}

/* One box broadcast to VL_BW lanes. */
VL_INLINE vl_boxw vl_lanes_box(const float mn[3], const float mx[3]) {
    vl_boxw b;
    for (int a = 0; a < 3; a++) b.min[a] = vl_fw_set1(mn[a]), b.max[a] = vl_fw_set1(mx[a]);
    return b;
}

/* The 4 child boxes of a node4, each broadcast to VL_BW lanes. */
VL_INLINE void vl_lanes_child_boxes(const vl_bvh_node4* w, vl_boxw b[4]) {
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 3; a++)
            b[c].min[a] = vl_fw_set1(w->bounds[a][c]), b[c].max[a] = vl_fw_set1(w->bounds[3 + a][c]);
}

/* Appends the entries src[j] (j < VL_BW) whose bit is set in `bits` to dst; returns dst past
 * them. Stores VL_BW entries: up to VL_BW - 1 past the appended ones are overwritten. */
VL_INLINE uint32_t* vl_lanes_append(uint32_t* dst, const uint32_t* src, uint32_t bits) {
#if VL_BW == 8
    return vl_kw_compress8(dst, src, bits);
#else
    for (uint32_t j = 0; j < VL_BW; j++) { /* memcpy: src may hold floats (entry t) */
        memcpy(dst, src + j, sizeof *dst);
        dst += (bits >> j) & 1u;
    }
    return dst;
#endif
}

#endif
