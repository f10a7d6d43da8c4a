/* SIMD kernels shared by the BVH and the SAP family: ray-box slab tests, box-box overlap, the
 * sortable-float encoding. Width-generic bodies live in kernels_w.h, instantiated here for 4 and
 * 8 lanes (vl_k4_* and vl_k8_*). Inputs are clean: no NaN anywhere, finite origins, 0 <= tmin. */
#ifndef VL_SIMD_KERNELS_H
#define VL_SIMD_KERNELS_H

#include <float.h>
#include <math.h>
#include <string.h>

#include <volley/types.h>

#include "simd/simd.h"

/* A ray ready for slab tests. A direction component smaller than FLT_MIN in magnitude counts as
 * zero: the axis is "parallel" and its inverse is +-INFINITY, which the *_parallel kernels handle
 * without ever forming inf * 0. Other inverses are finite (at most 2^126). */
typedef struct vl_ray_prep {
    float origin[3], inv_dir[3], tmin, tmax;
    uint32_t parallel; /* bit a set when axis a is parallel */
} vl_ray_prep;

static inline vl_ray_prep vl_ray_prepare(const vl_ray* ray) {
    vl_ray_prep prep;
    prep.parallel = 0;
    for (int a = 0; a < 3; a++) {
        float d = ray->dir[a];
        prep.origin[a] = ray->origin[a];
        if (fabsf(d) < FLT_MIN) {
            prep.inv_dir[a] = signbit(d) ? -INFINITY : INFINITY;
            prep.parallel |= 1u << a;
        } else {
            prep.inv_dir[a] = 1.0f / d;
        }
    }
    prep.tmin = ray->tmin;
    prep.tmax = ray->tmax;
    return prep;
}

/* Boxes (or rays) in SoA form: each array holds a multiple of 8 floats, so that kernels may load
 * whole vectors past `count`; the lanes past count are ignored. */
typedef struct vl_boxes_soa {
    float* min[3];
    float* max[3];
} vl_boxes_soa;

typedef struct vl_rays_soa {
    float* origin[3];
    float* inv_dir[3];
    float* tmin;
    float* tmax;
} vl_rays_soa;

static inline uint32_t vl_round_up8(uint32_t n) { return (n + 7u) & ~7u; }

/* Floats as uint32 keys with the same order (seed 000, appendix A): flip all bits of negatives,
 * the sign bit of positives. -0 is made +0 first, so that equal floats give equal keys. */
static inline uint32_t vl_float_to_sortable(float f) {
    uint32_t bits;
    f += 0.0f;
    memcpy(&bits, &f, sizeof bits);
    uint32_t mask = (uint32_t)(-(int32_t)(bits >> 31)) | 0x80000000u;
    return bits ^ mask;
}

static inline float vl_sortable_to_float(uint32_t key) {
    uint32_t bits = (key & 0x80000000u) ? key ^ 0x80000000u : ~key;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

#define VL_W 4
#include "simd/kernels_w.h"
#undef VL_W
#define VL_W 8
#include "simd/kernels_w.h"
#undef VL_W

#endif
