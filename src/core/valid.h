/* What makes a caller's box and ray valid, written once: every entry point that takes them (and
 * the public vl_aabb_is_valid / vl_ray_is_valid) asks these. */
#ifndef VL_CORE_VALID_H
#define VL_CORE_VALID_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <volley/types.h>

/* No bound NaN, min <= max on every axis (infinite bounds are valid). */
static inline bool vl_box_valid(const vl_aabb* b) {
    /* a comparison with NaN is false */
    return b->min[0] <= b->max[0] && b->min[1] <= b->max[1] && b->min[2] <= b->max[2];
}

/* Whether boxes[first..end) are all valid. */
static inline bool vl_boxes_valid(const vl_aabb* boxes, uint32_t first, uint32_t end) {
    for (uint32_t i = first; i < end; i++)
        if (!vl_box_valid(&boxes[i])) return false;
    return true;
}

/* Whether xyz[first..end) are all finite. */
static inline bool vl_coords_finite(const float* xyz, size_t first, size_t end) {
    for (size_t i = first; i < end; i++)
        if (!isfinite(xyz[i])) return false;
    return true;
}

/* Some component of dir at least FLT_MIN in magnitude (smaller ones count as 0), none NaN or infinite. */
static inline bool vl_dir_valid(const float dir[3]) {
    bool moves = false;
    for (int a = 0; a < 3; a++) {
        if (!isfinite(dir[a])) return false;
        moves |= fabsf(dir[a]) >= FLT_MIN;
    }
    return moves;
}

/* See vl_ray: origin and dir finite, dir not zero, 0 <= tmin <= tmax (tmax may be infinite). */
static inline bool vl_ray_valid(const vl_ray* r) {
    for (int a = 0; a < 3; a++)
        if (!isfinite(r->origin[a])) return false;
    return vl_dir_valid(r->dir) && r->tmin >= 0.0f && r->tmin <= r->tmax; /* false for NaN tmin or tmax */
}

#endif
