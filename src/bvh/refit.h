/* Refit's steps, shared by the serial refit and its parallel form: input checks over a range, a
 * post-order walk that refits a subtree above a cut depth, the margin and the node4s over ranges. */
#ifndef VL_BVH_REFIT_H
#define VL_BVH_REFIT_H

#include "bvh/bvh_internal.h"

/* Whether coordinates xyz[first, end) are all finite. */
int vl_bvh_refit_coords_ok(const float* xyz, size_t first, size_t end);

/* Whether boxes[first, end) have no NaN bound and no min > max. */
int vl_bvh_refit_boxes_ok(const vl_aabb* boxes, uint32_t first, uint32_t end);

/* A walk's input (the moved triangles xyz, or boxes) and the bounds of the triangles' vertices it
 * met (for the margin). */
typedef struct vl_refit_walk {
    const float* xyz;
    const vl_aabb* boxes;
    float lo[3], hi[3];
} vl_refit_walk;

/* Sets the walk's bounds empty. */
void vl_refit_walk_init(vl_refit_walk* w);

/* Refits the subtree of binary node ni (at depth) in post-order, children first, leaving out the
 * subtrees of the nodes at depth cut (UINT32_MAX: none left out). */
void vl_bvh_refit_walk(vl_bvh* bvh, uint32_t ni, uint32_t depth, uint32_t cut, vl_refit_walk* w);

/* Grows the boxes of binary nodes [first, end) by pad (a triangle tree's margin, as the build). */
void vl_bvh_refit_pad_range(vl_bvh* bvh, uint32_t first, uint32_t end, float pad);

/* Rewrites the lanes of the node4s that binary nodes [first, end) became, from the final binary
 * boxes. */
void vl_bvh_refit_wide_range(vl_bvh* bvh, uint32_t first, uint32_t end);

/* Debug builds: the whole tree checked after a refit. */
void vl_bvh_refit_checked(const vl_bvh* bvh);

#endif
