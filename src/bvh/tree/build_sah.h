/* The binned SAH pass of the builder: build.c fills the scratch, build_sah.c makes the tree. */
#ifndef VL_BVH_TREE_BUILD_SAH_H
#define VL_BVH_TREE_BUILD_SAH_H

#include "bvh/tree/tree.h"
#include "core/tasks.h"

/* Most SAH bins per axis (vl_bvh_desc.sah_bins). */
#define VL_BVH_MAX_BINS 64u

/* Scratch of one build. A primitive's record is 8 floats, min xyz, +infinity, -max xyz, 0
 * (infinite bounds clamped to ±FLT_MAX), so that one min over records is the union of their boxes
 * and leaves lane 3 of a bin (its count) as it is. */
typedef struct vl_build {
    float* rec;         /* 8 floats per primitive, 32-byte aligned */
    uint32_t* idx;      /* the primitives in leaf order once built */
    uint32_t* tmp;      /* n indices: the right side of a partition */
    vl_bvh_node* nodes; /* room for 2n - 1 */
    uint32_t node_count;
    uint32_t bins, max_leaf;
    float node_cost;
    uint32_t depth;
    /* the parallel build's top levels: ranges of at least VL_BVH_PIECED_FROM primitives bound,
     * bin and partition in pieces as tasks of ctx (per piece four bin sets in piece_bins); NULL
     * elsewhere */
    const vl_context* ctx;
    void* piece_bins;
} vl_build;

/* Builds the binary tree over b->idx[0, n) (n >= 1): nodes, node_count, depth, idx in leaf order.
 * VL_ERR_OUT_OF_MEMORY when its bins cannot be allocated. */
vl_status vl_bvh_build_sah(vl_build* b, uint32_t n);

/* The passes of the parallel build's top levels: at most VL_BVH_PIECES pieces of at least
 * VL_BVH_PIECE_MIN primitives, for ranges of at least two pieces. */
#define VL_BVH_PIECES 32u
#define VL_BVH_PIECE_MIN 8192u
#define VL_BVH_PIECED_FROM (2u * VL_BVH_PIECE_MIN)

/* The parallel build makes no subtree of fewer primitives. */
#define VL_BVH_PARALLEL_MIN_PRIMS 4096u

/* vl_bvh_build_sah with the context's job system: the same tree. The top levels are split by the
 * calling thread (ranges of VL_BVH_PIECED_FROM primitives or more in pieces as tasks) down to
 * ranges of at most max(n / (4 workers), VL_BVH_PARALLEL_MIN_PRIMS) primitives, whose subtrees are built as tasks (nodes in b->nodes + 2 * begin) and then copied
 * into the serial build's order. VL_ERR_OUT_OF_MEMORY as vl_bvh_build_sah. */
vl_status vl_bvh_build_sah_parallel(vl_build* b, uint32_t n, const vl_context* ctx);

/* vl_bvh_build_wide with the node4s written in pieces through ctx's job system (NULL: on the
 * calling thread): the same node4s. */
vl_status vl_bvh_build_wide_parallel(vl_bvh* bvh, const vl_context* ctx);

#endif
