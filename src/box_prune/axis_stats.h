/* Sweep axis choice (Ericson, "Real-Time Collision Detection", 2005, 7.5.2: the axis of largest
 * variance): the axis along which box centres spread the most, so that the sorted sweep meets the
 * fewest candidates. */
#ifndef VL_BOX_PRUNE_AXIS_STATS_H
#define VL_BOX_PRUNE_AXIS_STATS_H

#include <volley/types.h>

typedef struct vl_axis_stats {
    double n, sum[3], sum2[3];
} vl_axis_stats;

/* Accumulates the centres of boxes[ids[k]] (or boxes[k] when ids is NULL), k < n. Centres that are
 * not finite (boxes with infinite bounds) are left out: they say nothing about the spread. */
void vl_axis_stats_add(vl_axis_stats* stats, const vl_aabb* boxes, const uint32_t* ids, uint32_t n);

/* The axis (0, 1 or 2) of largest variance; 0 when nothing was accumulated. */
int vl_axis_stats_best(const vl_axis_stats* stats);

#endif
