/* The public one-shot box pruning: validate, sort once, prune (banded when it pays), free. */
#include <volley/broadphase.h>

#include "sap/axis.h"
#include "sap/prune_band.h"

static vl_status check_boxes(const vl_aabb* boxes, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            if (!(boxes[i].min[a] <= boxes[i].max[a])) return VL_ERR_INVALID_BOUNDS;
    return VL_OK;
}

vl_status vl_box_prune(const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out) {
    if (!vl_pair_buffer_is_valid(out) || (!boxes && count)) return VL_ERR_INVALID_ARGUMENT;
    if (count > 0x7FFFFFF0u) return VL_ERR_TOO_LARGE;
    vl_status s = check_boxes(boxes, count);
    if (s != VL_OK || count < 2) return s;
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, boxes, NULL, count);
    vl_prune_set set = {0};
    vl_prune_scratch scratch = {0};
    vl_prune_bands bands = {0};
    s = vl_prune_set_build(&set, &scratch, boxes, NULL, count, vl_axis_stats_best(&stats), 0);
    vl_prune_scratch_free(&scratch);
    if (s == VL_OK) s = vl_prune_complete_auto(&set, &bands, out);
    vl_prune_bands_free(&bands);
    vl_prune_set_free(&set);
    return s;
}

vl_status vl_box_prune_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, vl_pair_buffer* out) {
    if (!vl_pair_buffer_is_valid(out) || (!a && na) || (!b && nb)) return VL_ERR_INVALID_ARGUMENT;
    if (na > 0x7FFFFFF0u || nb > 0x7FFFFFF0u) return VL_ERR_TOO_LARGE;
    vl_status s = check_boxes(a, na);
    if (s == VL_OK) s = check_boxes(b, nb);
    if (s != VL_OK || !na || !nb) return s;
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, a, NULL, na);
    vl_axis_stats_add(&stats, b, NULL, nb);
    int axis = vl_axis_stats_best(&stats);
    vl_prune_set sa = {0}, sb = {0};
    vl_prune_scratch scratch = {0};
    vl_prune_bands bands_a = {0}, bands_b = {0};
    s = vl_prune_set_build(&sa, &scratch, a, NULL, na, axis, 0);
    if (s == VL_OK) s = vl_prune_set_build(&sb, &scratch, b, NULL, nb, axis, 0);
    vl_prune_scratch_free(&scratch);
    if (s == VL_OK) s = vl_prune_bipartite_auto(&sa, &sb, &bands_a, &bands_b, 0, out);
    vl_prune_bands_free(&bands_a);
    vl_prune_bands_free(&bands_b);
    vl_prune_set_free(&sa);
    vl_prune_set_free(&sb);
    return s;
}
