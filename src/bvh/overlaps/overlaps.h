/* Box and sphere overlap queries (overlap.c) and their form on a context (overlap_tasks.c). */
#ifndef VL_BVH_OVERLAPS_OVERLAPS_H
#define VL_BVH_OVERLAPS_OVERLAPS_H

#include <stdbool.h>

#include "bvh/tree/tree.h"

/* Overlaps (boxes, or spheres when `spheres`): scratch NULL runs small batches on the C stack (one
 * query: the single walk); else it fits the batch. */
vl_status vl_bvh_overlap_on(const vl_bvh* bvh, const void* queries, bool spheres, uint32_t count,
                            vl_pair_buffer* out, void* scratch);
vl_status vl_bvh_overlap_on_context(vl_context* ctx, const vl_bvh* bvh, const void* queries, bool spheres,
                                    uint32_t count, vl_pair_buffer* out);

#endif
