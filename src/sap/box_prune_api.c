/* The public one-shot box pruning: validate, sort once, prune (banded when it pays), on storage
 * from the hooks (freed before returning) or from the caller's scratch (nothing allocated). */
#include <volley/broadphase.h>

#include <stdint.h>

#include "sap/prune_work.h"

vl_status vl_box_prune(const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out) {
    vl_status s = vl_prune_check_args(boxes, count, NULL, 0, 0, out);
    if (s == VL_OK) s = vl_prune_check_boxes(boxes, count);
    if (s != VL_OK || count < 2) return s;
    vl_prune_work work = {0};
    s = vl_prune_work_sort(&work, boxes, count, NULL, 0);
    vl_prune_work_free_keys(&work); /* not needed past the sort: a lower peak */
    if (s == VL_OK) s = vl_prune_work_complete(&work, out);
    vl_prune_work_free(&work);
    return s;
}

vl_status vl_box_prune_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, vl_pair_buffer* out) {
    vl_status s = vl_prune_check_args(a, na, b, nb, 1, out);
    if (s == VL_OK) s = vl_prune_check_boxes(a, na);
    if (s == VL_OK) s = vl_prune_check_boxes(b, nb);
    if (s != VL_OK || !na || !nb) return s;
    vl_prune_work work = {0};
    s = vl_prune_work_sort(&work, a, na, b, nb);
    vl_prune_work_free_keys(&work);
    if (s == VL_OK) s = vl_prune_work_bipartite(&work, out);
    vl_prune_work_free(&work);
    return s;
}

/* ---- on the caller's scratch ---------------------------------------------------------------- */

size_t vl_box_prune_scratch_size(uint32_t count) {
    if (count > VL_PRUNE_MAX_BOXES) return SIZE_MAX;
    return count < 2 ? 0 : vl_prune_work_bytes(count, 0, 0);
}

size_t vl_box_prune_bipartite_scratch_size(uint32_t na, uint32_t nb) {
    if (na > VL_PRUNE_MAX_BOXES || nb > VL_PRUNE_MAX_BOXES) return SIZE_MAX;
    return !na || !nb ? 0 : vl_prune_work_bytes(na, nb, 1);
}

/* A scratch of `bytes` bytes fit for a call needing `need` (0: none, any scratch is fine). */
static int scratch_fits(const void* scratch, size_t bytes, size_t need) {
    if (!need) return 1;
    return scratch && bytes >= need && need != SIZE_MAX && (uintptr_t)scratch % VL_BOX_PRUNE_SCRATCH_ALIGNMENT == 0;
}

vl_status vl_box_prune_scratch(const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out, void* scratch,
                               size_t scratch_bytes) {
    vl_status s = vl_prune_check_args(boxes, count, NULL, 0, 0, out);
    if (s != VL_OK) return s;
    if (!scratch_fits(scratch, scratch_bytes, vl_box_prune_scratch_size(count))) return VL_ERR_INVALID_ARGUMENT;
    s = vl_prune_check_boxes(boxes, count);
    if (s != VL_OK || count < 2) return s;
    vl_prune_work work;
    vl_prune_work_carve(&work, scratch, count, 0, 0);
    s = vl_prune_work_sort(&work, boxes, count, NULL, 0);
    if (s == VL_OK) s = vl_prune_work_complete(&work, out);
    return s; /* the work lies in the caller's block: nothing to free */
}

vl_status vl_box_prune_bipartite_scratch(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb,
                                         vl_pair_buffer* out, void* scratch, size_t scratch_bytes) {
    vl_status s = vl_prune_check_args(a, na, b, nb, 1, out);
    if (s != VL_OK) return s;
    if (!scratch_fits(scratch, scratch_bytes, vl_box_prune_bipartite_scratch_size(na, nb)))
        return VL_ERR_INVALID_ARGUMENT;
    s = vl_prune_check_boxes(a, na);
    if (s == VL_OK) s = vl_prune_check_boxes(b, nb);
    if (s != VL_OK || !na || !nb) return s;
    vl_prune_work work;
    vl_prune_work_carve(&work, scratch, na, nb, 1);
    s = vl_prune_work_sort(&work, a, na, b, nb);
    if (s == VL_OK) s = vl_prune_work_bipartite(&work, out);
    return s;
}
