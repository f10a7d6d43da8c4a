/* A spatial order for a batch of queries: the Morton code of each query's centre in the tree's box,
 * so that the chunks a batch is cut into each crowd one part of the tree. */
#ifndef VL_BVH_ENGINE_ORDER_H
#define VL_BVH_ENGINE_ORDER_H

#include "bvh/tree/tree.h"

/* Bits per axis of the Morton code. */
#define VL_MORTON_BITS 10u

/* The tree's box as the Morton code sees it: cell = (p - lo) * scale. */
typedef struct vl_morton_frame {
    float lo[3], scale[3];
} vl_morton_frame;

/* The frame of the tree's root box; an unbounded or flat axis orders nothing (scale 0). */
vl_morton_frame vl_morton_frame_of(const vl_bvh* bvh);

/* The Morton code of point p; NaN and points outside the box go to the nearest cells (NaN: 0). */
uint32_t vl_morton_key(const vl_morton_frame* f, const float p[3]);

/* items[i] = key << 32 | i for i < n; sorts them by key (stable) and writes the indices in that
 * order to order[0, n). tmp holds n items. */
void vl_query_order_sort(uint64_t* items, uint64_t* tmp, uint32_t n, uint32_t* order);

#endif
