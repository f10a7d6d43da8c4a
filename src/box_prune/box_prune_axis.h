/* The sweep axis of box pruning from centre statistics summed in pieces whose size is set by the
 * counts alone and added in piece order, so that the serial forms and the parallel ones (pieces as
 * tasks) pick the same axis for any worker count. */
#ifndef VL_BOX_PRUNE_BOX_PRUNE_AXIS_H
#define VL_BOX_PRUNE_BOX_PRUNE_AXIS_H

#include <volley/types.h>

#include "core/tasks.h"

/* One list of boxes: boxes[ids[k]] (boxes[k] when ids is NULL), k < n. */
typedef struct vl_axis_list {
    const vl_aabb* boxes;
    const uint32_t* ids;
    uint32_t n;
} vl_axis_list;

/* The axis of largest centre variance (vl_axis_stats) over list 0 then list 1, its pieces run
 * through ctx's job system (ctx NULL: on the calling thread; the same axis). With check (lists
 * without ids only), every box is checked as vl_prune_check_boxes in the same pass and *check set
 * to its status. */
int vl_prune_axis(const vl_context* ctx, const vl_axis_list lists[2], vl_status* check);

#endif
