/* vl_box_pruner: one-shot box pruning that keeps its working storage from call to call. */
#include <volley/broadphase.h>

#include "sap/prune_work.h"

struct vl_box_pruner {
    vl_prune_work work; /* grown through the hooks, never shrunk */
};

vl_status vl_box_pruner_create(vl_box_pruner** out) {
    if (!out) return VL_ERR_INVALID_ARGUMENT;
    *out = vl_mem_calloc(sizeof **out);
    return *out ? VL_OK : VL_ERR_OUT_OF_MEMORY;
}

void vl_box_pruner_destroy(vl_box_pruner* pruner) {
    if (!pruner) return;
    vl_prune_work_free(&pruner->work);
    vl_mem_free(pruner, sizeof *pruner);
}

vl_status vl_box_pruner_prune(vl_box_pruner* pruner, const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out) {
    if (!pruner) return VL_ERR_INVALID_ARGUMENT;
    vl_status s = vl_prune_check_args(boxes, count, NULL, 0, 0, out);
    if (s == VL_OK) s = vl_prune_check_boxes(boxes, count);
    if (s != VL_OK || count < 2) return s;
    s = vl_prune_work_sort(&pruner->work, boxes, count, NULL, 0);
    return s == VL_OK ? vl_prune_work_complete(&pruner->work, out) : s;
}

vl_status vl_box_pruner_prune_bipartite(vl_box_pruner* pruner, const vl_aabb* a, uint32_t na, const vl_aabb* b,
                                        uint32_t nb, vl_pair_buffer* out) {
    if (!pruner) return VL_ERR_INVALID_ARGUMENT;
    vl_status s = vl_prune_check_args(a, na, b, nb, 1, out);
    if (s == VL_OK) s = vl_prune_check_boxes(a, na);
    if (s == VL_OK) s = vl_prune_check_boxes(b, nb);
    if (s != VL_OK || !na || !nb) return s;
    s = vl_prune_work_sort(&pruner->work, a, na, b, nb);
    return s == VL_OK ? vl_prune_work_bipartite(&pruner->work, out) : s;
}
