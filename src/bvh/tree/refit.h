/* Refit's steps, shared by the serial refit and its parallel form: input checks over a range, a
 * post-order walk that refits a subtree above a cut depth, the margin and the node4s over ranges. */
#ifndef VL_BVH_TREE_REFIT_H
#define VL_BVH_TREE_REFIT_H

#include "bvh/tree/tree.h"

/* A parallel refit takes the subtrees at depth VL_PARALLEL_REFIT_DEPTH as its items (at most 2^depth
 * of them) and refits the nodes above them on the calling thread; its input checks, margin and
 * node4 passes run in about VL_PARALLEL_REFIT_BLOCKS blocks of at least VL_PARALLEL_REFIT_MIN_CHECK
 * floats or boxes, or VL_PARALLEL_REFIT_MIN_NODES binary nodes. */
#define VL_PARALLEL_REFIT_DEPTH 6u
#define VL_PARALLEL_REFIT_BLOCKS 64u
#define VL_PARALLEL_REFIT_MIN_CHECK 16384u
#define VL_PARALLEL_REFIT_MIN_NODES 4096u

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

/* The refits on a context's job system (refit_tasks.c). */
vl_status vl_bvh_refit_triangles_on_context(vl_context* ctx, vl_bvh* bvh, const float* xyz);
vl_status vl_bvh_refit_boxes_on_context(vl_context* ctx, vl_bvh* bvh, const vl_aabb* boxes);

#endif
