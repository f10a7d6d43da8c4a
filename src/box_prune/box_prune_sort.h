/* A prune set built through a context's job system. */
#ifndef VL_BOX_PRUNE_BOX_PRUNE_SORT_H
#define VL_BOX_PRUNE_BOX_PRUNE_SORT_H

#include "box_prune/box_prune.h"
#include "core/tasks.h"

/* vl_prune_set_build (not presorted) with the sort keys, the radix sort and the entries in pieces
 * as tasks: the same set. hist holds vl_radix_sort_parallel_hist_words() words. Without a job
 * system, or for few boxes, the serial build. */
vl_status vl_prune_set_build_parallel(const vl_context* ctx, vl_prune_set* set, vl_prune_scratch* scratch,
                                      const vl_aabb* boxes, const uint32_t* ids, uint32_t n, int axis, uint32_t* hist);

#endif
