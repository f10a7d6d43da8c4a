/* vl_box_prune and vl_box_prune_bipartite on a context: the boxes checked in the pass of the
 * axis statistics, then sorted (keys, radix sort, gather) in pieces as tasks into a block kept by
 * the context, then the sweep (the loop over the sorted boxes) cut into ranges of sorted positions
 * by a rule of the counts alone, each range appending to its own pair list in the context, the
 * lists appended to the caller's buffer in range order. Unbanded: the bands of the serial prune
 * are built per set and would be one more serial pass. */
#include <volley/broadphase.h>

#include <stdatomic.h>

#include "box_prune/box_prune_axis.h"
#include "box_prune/box_prune_sort.h"
#include "box_prune/box_prune_work.h"
#include "core/radix.h"
#include "core/tasks.h"

/* Boxes of the sweep per range: ceil(n / 64) rounded up to 256, at least 1024. */
static uint32_t prune_range(uint32_t n) {
    uint32_t r = (uint32_t)(((uint64_t)n + 63u) / 64u);
    r = (r + 255u) / 256u * 256u;
    return r < 1024u ? 1024u : r;
}

typedef struct prune_task {
    const vl_context* ctx;
    const vl_prune_work* work;
    int bipartite;
    uint32_t range, ranges_a; /* bipartite: items [0, ranges_a) sweep a, the rest sweep b */
    atomic_int failed;
} prune_task;

static void prune_items(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker; /* no scratch: each item has its own list */
    prune_task* t = arg;
    for (uint32_t k = start; k < end; k++) {
        vl_pair_buffer* list = &t->ctx->lists[k];
        list->count = 0;
        vl_status s;
        if (!t->bipartite) {
            s = vl_prune_complete_range(&t->work->set[0], k * t->range, (k + 1) * t->range, list);
        } else {
            int pass = k >= t->ranges_a;
            uint32_t r = pass ? k - t->ranges_a : k;
            s = vl_prune_bipartite_range(&t->work->set[0], &t->work->set[1], pass, r * t->range, (r + 1) * t->range,
                                         list);
        }
        if (s != VL_OK) atomic_store_explicit(&t->failed, (int)s, memory_order_relaxed);
    }
}

vl_status vl_prune_on_context(vl_context* ctx, const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb,
                              bool bipartite, vl_pair_buffer* out) {
    vl_status s;
    const vl_axis_list lists[2] = {{a, NULL, na}, {b, NULL, bipartite ? nb : 0}};
    const int axis = vl_prune_axis(ctx, lists, &s); /* the checks in the same pass */
    if (s != VL_OK || (bipartite ? !na || !nb : na < 2)) return s;
    size_t bytes = vl_prune_work_bytes(na, bipartite ? nb : 0, bipartite);
    const size_t hist_bytes = sizeof(uint32_t) * vl_radix_sort_parallel_hist_words();
    if (bytes >= SIZE_MAX - hist_bytes - VL_PRUNE_WORK_ALIGNMENT) return VL_ERR_TOO_LARGE;
    bytes = (bytes + VL_PRUNE_WORK_ALIGNMENT - 1) / VL_PRUNE_WORK_ALIGNMENT * VL_PRUNE_WORK_ALIGNMENT;
    s = vl_context_reserve_shared(ctx, bytes + hist_bytes);
    if (s != VL_OK) return s;
    vl_prune_work work;
    vl_prune_work_carve(&work, ctx->shared, na, bipartite ? nb : 0, bipartite);
    uint32_t* hist = (uint32_t*)(void*)(ctx->shared + bytes);
    s = vl_prune_set_build_parallel(ctx, &work.set[0], &work.scratch, a, NULL, na, axis, hist);
    if (s == VL_OK && bipartite)
        s = vl_prune_set_build_parallel(ctx, &work.set[1], &work.scratch, b, NULL, nb, axis, hist);
    if (s != VL_OK) return s;
    prune_task t;
    t.ctx = ctx, t.work = &work, t.bipartite = bipartite;
    t.range = prune_range(bipartite ? (na > nb ? na : nb) : na);
    t.ranges_a = (na + t.range - 1) / t.range;
    uint32_t items = t.ranges_a + (bipartite ? (nb + t.range - 1) / t.range : 0);
    atomic_init(&t.failed, 0);
    s = vl_context_reserve_lists(ctx, items);
    if (s != VL_OK) return s;
    vl_tasks_run(ctx, prune_items, items, 1, &t);
    int failed = atomic_load_explicit(&t.failed, memory_order_relaxed);
    if (failed) return (vl_status)failed;
    return vl_context_gather_lists(ctx, items, out);
}
