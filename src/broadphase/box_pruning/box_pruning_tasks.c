/* The sweeps of a VL_BROADPHASE_BOX_PRUNING commit spread over a context's workers: each pass of
 * the prune cut into ranges of sorted positions by a rule of the counts alone, each range
 * appending to its own list in the context, the lists gathered in range order. The commit sorts
 * the pairs after, so its lists and pairs are the serial commit's. The full prune's axis statistics
 * are summed in pieces (box_prune_axis.c) as tasks, and its sets built in pieces (box_prune_sort.c). */
#include <stdatomic.h>

#include "box_prune/box_prune_axis.h"
#include "box_prune/box_prune_sort.h"
#include "broadphase/box_pruning/box_pruning.h"
#include "core/radix.h"
#include "core/tasks.h"

/* Entries per range: ceil(n / 64) rounded up to 256, at least 1024 (as vl_box_prune on a context). */
static uint32_t sweep_range(uint32_t n) {
    uint32_t r = (uint32_t)(((uint64_t)n + 63u) / 64u);
    r = (r + 255u) / 256u * 256u;
    return r < 1024u ? 1024u : r;
}

enum { SWEEP_COMPLETE, SWEEP_DYN_STAT, SWEEP_STAT_DYN, SWEEP_MOVERS0, SWEEP_MOVERS1, SWEEP_MOVERS2 };

/* A pass over entries [0, n) of its query set, in ranges of `range`, items from first_item on. */
typedef struct sweep_part {
    int kind;
    uint32_t n, range, first_item;
} sweep_part;

typedef struct sweep_task {
    const vl_context* ctx;
    const vl_prune_set *a, *b; /* full: dyn, stat; incremental: movers, all */
    const uint8_t* cls;
    sweep_part parts[3];
    uint32_t part_count, items;
    atomic_int failed;
} sweep_task;

static void add_part(sweep_task* t, int kind, uint32_t n) {
    sweep_part* p = &t->parts[t->part_count++];
    p->kind = kind, p->n = n, p->range = sweep_range(n), p->first_item = t->items;
    t->items += (n + p->range - 1) / p->range;
}

/* Pairs of a static and a dynamic box as (low, high), as the serial commit's bipartite prune. */
static void low_high(vl_pair_buffer* list, uint32_t from) {
    for (uint32_t i = from; i < list->count; i++) {
        vl_pair q = list->pairs[i];
        if (q.a > q.b) list->pairs[i] = (vl_pair){q.b, q.a};
    }
}

static void sweep_items(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker; /* no scratch: each item has its own list */
    sweep_task* t = arg;
    for (uint32_t k = start; k < end; k++) {
        const sweep_part* p = &t->parts[0];
        while (p + 1 < t->parts + t->part_count && k >= p[1].first_item) p++;
        uint32_t first = (k - p->first_item) * p->range, last = first + p->range;
        vl_pair_buffer* list = &t->ctx->lists[k];
        list->count = 0;
        vl_status s;
        switch (p->kind) {
        case SWEEP_COMPLETE: s = vl_prune_complete_range(t->a, first, last, list); break;
        case SWEEP_DYN_STAT:
        case SWEEP_STAT_DYN:
            s = vl_prune_bipartite_range(t->a, t->b, p->kind == SWEEP_STAT_DYN, first, last, list);
            low_high(list, 0);
            break;
        default: s = vl_prune_movers_range(t->a, t->b, t->cls, p->kind - SWEEP_MOVERS0, first, last, list); break;
        }
        if (s != VL_OK) atomic_store_explicit(&t->failed, (int)s, memory_order_relaxed);
    }
}

static vl_status sweep_run(vl_context* ctx, sweep_task* t, vl_pair_buffer* out) {
    t->ctx = ctx;
    atomic_init(&t->failed, 0);
    vl_status s = vl_context_reserve_lists(ctx, t->items);
    if (s != VL_OK) return s;
    vl_tasks_run(ctx, sweep_items, t->items, 1, t);
    int failed = atomic_load_explicit(&t->failed, memory_order_relaxed);
    if (failed) return (vl_status)failed;
    return vl_context_gather_lists(ctx, t->items, out);
}

vl_status vl_pbp_sweep_full(vl_context* ctx, const vl_prune_set* dyn, const vl_prune_set* stat, vl_pair_buffer* out) {
    if (!ctx) {
        vl_status s = vl_prune_complete(dyn, 0, out);
        return s == VL_OK && stat ? vl_prune_bipartite(dyn, stat, VL_PRUNE_LOW_HIGH, out) : s;
    }
    sweep_task t = {0};
    t.a = dyn, t.b = stat;
    add_part(&t, SWEEP_COMPLETE, dyn->n);
    if (stat) {
        add_part(&t, SWEEP_DYN_STAT, dyn->n);
        add_part(&t, SWEEP_STAT_DYN, stat->n);
    }
    return sweep_run(ctx, &t, out);
}

vl_status vl_pbp_sweep_movers(vl_context* ctx, const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls,
                              vl_pair_buffer* out) {
    if (!ctx) return vl_prune_movers(m, all, cls, out);
    sweep_task t = {0};
    t.a = m, t.b = all, t.cls = cls;
    add_part(&t, SWEEP_MOVERS0, m->n);
    add_part(&t, SWEEP_MOVERS1, m->n);
    add_part(&t, SWEEP_MOVERS2, all->n);
    return sweep_run(ctx, &t, out);
}

int vl_pbp_axis(vl_context* ctx, const vl_aabb* boxes, const uint32_t* dyn, uint32_t nd, const uint32_t* stat,
                uint32_t ns) {
    const vl_axis_list lists[2] = {{boxes, dyn, nd}, {boxes, stat, ns}};
    return vl_prune_axis(ctx, lists, NULL);
}

vl_status vl_pbp_set_build(vl_context* ctx, vl_prune_set* set, vl_prune_scratch* scratch, const vl_aabb* boxes,
                           const uint32_t* ids, uint32_t n, int axis) {
    if (!ctx) return vl_prune_set_build(set, scratch, boxes, ids, n, axis, 0);
    vl_status s = vl_context_reserve_shared(ctx, sizeof(uint32_t) * vl_radix_sort_parallel_hist_words());
    if (s != VL_OK) return s;
    return vl_prune_set_build_parallel(ctx, set, scratch, boxes, ids, n, axis, (uint32_t*)(void*)ctx->shared);
}
