/* Refit's steps, shared by the serial refit and its parallel form: input checks over a range,
 * and a post-order walk that refits, pads and re-collapses a subtree above a cut depth. */
#ifndef VL_BVH_REFIT_H
#define VL_BVH_REFIT_H

#include "bvh/bvh_internal.h"

/* Whether coordinates xyz[first, end) are all finite. */
int vl_bvh_refit_coords_ok(const float* xyz, size_t first, size_t end);

/* Whether boxes[first, end) have no NaN bound and no min > max. */
int vl_bvh_refit_boxes_ok(const vl_aabb* boxes, uint32_t first, uint32_t end);

/* What a walk does at each node, children first: refit its box from the moved triangles (xyz,
 * growing lo/hi) or boxes, then grow it by pad (when pad_nodes), then rewrite the lanes of the
 * node4 it became (when wide). */
typedef struct vl_refit_walk {
    const float* xyz;
    const vl_aabb* boxes;
    float lo[3], hi[3];
    float pad;
    int refit, pad_nodes, wide;
} vl_refit_walk;

/* Sets the walk's bounds empty. */
void vl_refit_walk_init(vl_refit_walk* w);

/* Walks the subtree of binary node ni (at depth) in post-order, leaving out the subtrees of the
 * nodes at depth cut (UINT32_MAX: none left out). The node4 of a node is rewritten once every
 * node below it is final, as in the serial refit. */
void vl_bvh_refit_walk(vl_bvh* bvh, uint32_t ni, uint32_t depth, uint32_t cut, vl_refit_walk* w);

/* Debug builds: the whole tree checked after a refit. */
void vl_bvh_refit_checked(const vl_bvh* bvh);

#endif
