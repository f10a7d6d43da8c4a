/* The working storage of one-shot box pruning (sorted sets, sort keys, bands) and the two prunes
 * over it. The storage either grows through the allocator hooks (the calls without exec, which
 * free it after) or is laid out in a block large enough for any boxes of the given counts (the
 * caller's scratch, a context's block), where nothing ever grows. */
#ifndef VL_BOX_PRUNE_BOX_PRUNE_WORK_H
#define VL_BOX_PRUNE_BOX_PRUNE_WORK_H

#include <stdbool.h>

#include <volley/tasks.h>

#include "box_prune/box_prune_band.h"

/* The most boxes one call prunes (per side for bipartite). */
#define VL_PRUNE_MAX_BOXES 0x7FFFFFF0u

typedef struct vl_prune_work {
    vl_prune_set set[2];      /* the sorted boxes (bipartite: a, b) */
    vl_prune_scratch scratch; /* the sort's keys */
    vl_prune_bands bands[2];
} vl_prune_work;

/* Bytes of a caller's block that a work for na boxes (complete: nb = 0) or na x nb boxes
 * (bipartite) needs at most, with VL_PRUNE_WORK_ALIGNMENT; SIZE_MAX when it does not fit a size_t. */
#define VL_PRUNE_WORK_ALIGNMENT 64u
size_t vl_prune_work_bytes(uint32_t na, uint32_t nb, int bipartite);

/* Lays out a work for those counts in block (at least vl_prune_work_bytes bytes, aligned). Such a
 * work is never freed, and the prunes below never grow it. */
void vl_prune_work_carve(vl_prune_work* work, void* block, uint32_t na, uint32_t nb, int bipartite);

/* Frees a work whose storage came from the hooks (a zeroed work grown by the prunes). */
void vl_prune_work_free(vl_prune_work* work);
/* Frees the sort keys only (not needed once the sets are built). */
void vl_prune_work_free_keys(vl_prune_work* work);

/* The checks every one-shot call makes before it reads a box: VL_ERR_INVALID_ARGUMENT (out NULL
 * or inconsistent, an array NULL with a count > 0), then VL_ERR_TOO_LARGE (a count past
 * VL_PRUNE_MAX_BOXES). b is ignored when not bipartite. */
vl_status vl_prune_check_args(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, int bipartite,
                              const vl_pair_buffer* out);
/* VL_ERR_INVALID_BOUNDS when a box is NaN or min > max on some axis. */
vl_status vl_prune_check_boxes(const vl_aabb* boxes, uint32_t n);

/* vl_box_prune / vl_box_prune_bipartite on a context, after vl_prune_check_args
 * (box_prune_tasks.c): the boxes checked, sorted and swept as tasks on the context's memory. */
vl_status vl_prune_on_context(vl_context* ctx, const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb,
                              bool bipartite, vl_pair_buffer* out);

/* The sets built: boxes sorted on the axis of largest centre variance (vl_prune_axis). Clean input,
 * n >= 1. */
vl_status vl_prune_work_sort(vl_prune_work* work, const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb);
/* After vl_prune_work_sort: the pairs appended to out (complete: of set 0; bipartite: set 0 x
 * set 1, as (index in a, index in b)). On failure out->count is restored. */
vl_status vl_prune_work_complete(vl_prune_work* work, vl_pair_buffer* out);
vl_status vl_prune_work_bipartite(vl_prune_work* work, vl_pair_buffer* out);

#endif
