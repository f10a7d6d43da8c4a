/* The public one-shot box pruning: validate, sort once, prune (banded when it pays), on storage
 * from the hooks (freed before returning), on the caller's scratch or a block a context without a
 * job system keeps (nothing allocated once it has grown), or on a job system (box_prune_tasks.c). */
#include <volley/broadphase.h>

#include <stdbool.h>
#include <stdint.h>

#include "box_prune/box_prune_work.h"
#include "core/exec.h"
#include "core/tasks.h"

static vl_status prune(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, bool bipartite,
                       vl_pair_buffer* out, const vl_exec* exec) {
    vl_status s = vl_prune_check_args(a, na, b, nb, bipartite, out);
    if (s != VL_OK) return s;
    vl_exec_mode mode = vl_exec_mode_of(exec);
    if (mode == VL_EXEC_INVALID) return VL_ERR_INVALID_ARGUMENT;
    vl_context* ctx = mode == VL_EXEC_CONTEXT ? exec->context : NULL;
    if (ctx && ctx->tasks.enqueue) return vl_prune_on_context(ctx, a, na, b, nb, bipartite, out);
    const size_t need = bipartite ? vl_box_prune_bipartite_scratch_size(na, nb) : vl_box_prune_scratch_size(na);
    if (mode == VL_EXEC_SCRATCH && !vl_scratch_fits(exec->scratch, exec->scratch_bytes, need))
        return VL_ERR_INVALID_ARGUMENT;
    s = vl_prune_check_boxes(a, na);
    if (s == VL_OK && bipartite) s = vl_prune_check_boxes(b, nb);
    if (s != VL_OK || (bipartite ? !na || !nb : na < 2)) return s;
    void* block = mode == VL_EXEC_SCRATCH ? exec->scratch : NULL;
    if (ctx) { /* no job system: the same prune on a block the context keeps */
        s = vl_context_reserve_shared(ctx, need);
        if (s != VL_OK) return s;
        block = ctx->shared, mode = VL_EXEC_SCRATCH;
    }
    vl_prune_work work = {0};
    if (block) vl_prune_work_carve(&work, block, na, bipartite ? nb : 0, bipartite);
    s = vl_prune_work_sort(&work, a, na, b, nb);
    if (mode == VL_EXEC_HOOKS) vl_prune_work_free_keys(&work); /* not needed past the sort: a lower peak */
    if (s == VL_OK) s = bipartite ? vl_prune_work_bipartite(&work, out) : vl_prune_work_complete(&work, out);
    if (mode == VL_EXEC_HOOKS) vl_prune_work_free(&work); /* else the caller's or the context's block */
    return s;
}

vl_status vl_box_prune(const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out, const vl_exec* exec) {
    return prune(boxes, count, NULL, 0, false, out, exec);
}

vl_status vl_box_prune_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, vl_pair_buffer* out,
                                 const vl_exec* exec) {
    return prune(a, na, b, nb, true, out, exec);
}

size_t vl_box_prune_scratch_size(uint32_t count) {
    if (count > VL_PRUNE_MAX_BOXES) return SIZE_MAX;
    return count < 2 ? 0 : vl_prune_work_bytes(count, 0, 0);
}

size_t vl_box_prune_bipartite_scratch_size(uint32_t na, uint32_t nb) {
    if (na > VL_PRUNE_MAX_BOXES || nb > VL_PRUNE_MAX_BOXES) return SIZE_MAX;
    return !na || !nb ? 0 : vl_prune_work_bytes(na, nb, 1);
}
