/* Ray-box and box-box kernels at the batch width in the two shapes the library does not use (one
 * ray against many boxes, many rays against one box, SIMD across the many), over the library's
 * slab kernels: the test and the bench of those kernels. Inputs are clean: no NaN anywhere,
 * finite origins, 0 <= tmin. */
#ifndef VL_TESTS_BOX_KERNELS_H
#define VL_TESTS_BOX_KERNELS_H

#include <float.h>
#include <math.h>

#include <volley/types.h>

#include "simd/bvh_kernels.h"

/* A ray ready for slab tests. A direction component smaller than FLT_MIN in magnitude counts as
 * zero: the axis is "parallel" and its inverse is +-INFINITY, which the parallel-exact kernel
 * handles without ever forming inf * 0. Other inverses are finite (at most 2^126). */
typedef struct test_ray_prep {
    float origin[3], inv_dir[3], tmin, tmax;
    uint32_t parallel; /* bit a set when axis a is parallel */
} test_ray_prep;

static inline test_ray_prep test_ray_prepare(const vl_ray* ray) {
    test_ray_prep prep;
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
typedef struct test_boxes_soa {
    float* min[3];
    float* max[3];
} test_boxes_soa;

typedef struct test_rays_soa {
    float* origin[3];
    float* inv_dir[3];
    float* tmin;
    float* tmax;
} test_rays_soa;

static inline uint32_t test_round_up8(uint32_t n) { return (n + 7u) & ~7u; }

/* Lanes of the kernels below. */
static inline uint32_t simd_kernel_width(void) { return VL_BW; }

/* One ray against `count` boxes: tnear_out[i] = entry t into box i, or INFINITY on a miss
 * (tnear_out holds test_round_up8(count) floats; the lanes past count up to the next multiple of
 * VL_BW get INFINITY). Returns the number of boxes hit. */
static inline uint32_t simd_ray_vs_boxes(const test_ray_prep* ray, const test_boxes_soa* boxes, uint32_t count,
                                         float* tnear_out) {
    vl_rayw r;
    for (int a = 0; a < 3; a++) r.origin[a] = vl_fw_set1(ray->origin[a]), r.inv_dir[a] = vl_fw_set1(ray->inv_dir[a]);
    r.tmin = vl_fw_set1(ray->tmin), r.tmax = vl_fw_set1(ray->tmax);
    const vl_fw miss = vl_fw_set1(INFINITY);
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; i += VL_BW) {
        vl_boxw b;
        for (int a = 0; a < 3; a++) b.min[a] = vl_fw_loadu(boxes->min[a] + i), b.max[a] = vl_fw_loadu(boxes->max[a] + i);
        vl_fw tn;
        vl_fw m = ray->parallel ? vl_kw_slab_parallel(&r, &b, &tn) : vl_kw_slab(&r, &b, &tn);
        if (count - i < VL_BW) m = vl_fw_and(m, vl_fw_first(count - i));
        vl_fw_storeu(tnear_out + i, vl_fw_select(m, tn, miss));
        hits += (uint32_t)__builtin_popcount(vl_fw_bits(m));
    }
    return hits;
}

/* `count` rays against one box; `any_parallel` says whether some ray has a parallel axis.
 * tnear_out as for simd_ray_vs_boxes. Returns the number of rays that hit. */
static inline uint32_t simd_rays_vs_box(const test_rays_soa* rays, uint32_t count, int any_parallel,
                                        const vl_aabb* box, float* tnear_out) {
    vl_boxw b;
    for (int a = 0; a < 3; a++) b.min[a] = vl_fw_set1(box->min[a]), b.max[a] = vl_fw_set1(box->max[a]);
    const vl_fw miss = vl_fw_set1(INFINITY);
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; i += VL_BW) {
        vl_rayw r;
        for (int a = 0; a < 3; a++)
            r.origin[a] = vl_fw_loadu(rays->origin[a] + i), r.inv_dir[a] = vl_fw_loadu(rays->inv_dir[a] + i);
        r.tmin = vl_fw_loadu(rays->tmin + i), r.tmax = vl_fw_loadu(rays->tmax + i);
        vl_fw tn;
        vl_fw m = any_parallel ? vl_kw_slab_parallel(&r, &b, &tn) : vl_kw_slab(&r, &b, &tn);
        if (count - i < VL_BW) m = vl_fw_and(m, vl_fw_first(count - i));
        vl_fw_storeu(tnear_out + i, vl_fw_select(m, tn, miss));
        hits += (uint32_t)__builtin_popcount(vl_fw_bits(m));
    }
    return hits;
}

/* One box against `count` boxes (closed intervals on all three axes): writes the indices of those
 * it overlaps, in increasing order, to out (room for count indices) and returns how many. */
static inline uint32_t simd_box_vs_boxes(const vl_aabb* query, const test_boxes_soa* boxes, uint32_t count,
                                         uint32_t* out) {
    vl_fw qmin[3], qmax[3];
    for (int a = 0; a < 3; a++) qmin[a] = vl_fw_set1(query->min[a]), qmax[a] = vl_fw_set1(query->max[a]);
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i += VL_BW) {
        vl_fw m = vl_fw_zero();
        for (int a = 0; a < 3; a++) {
            vl_fw lo = vl_fw_loadu(boxes->min[a] + i), hi = vl_fw_loadu(boxes->max[a] + i);
            vl_fw axis = vl_fw_and(vl_fw_le(qmin[a], hi), vl_fw_le(lo, qmax[a]));
            m = a ? vl_fw_and(m, axis) : axis;
        }
        if (count - i < VL_BW) m = vl_fw_and(m, vl_fw_first(count - i));
        for (uint32_t bits = vl_fw_bits(m); bits; bits &= bits - 1) out[n++] = i + (uint32_t)__builtin_ctz(bits);
    }
    return n;
}

#endif
