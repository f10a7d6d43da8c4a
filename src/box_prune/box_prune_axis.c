/* The sweep axis from centre statistics in pieces: ceil(n / 64) ids of a list, at least 4096, so
 * at most 64 pieces a list. */
#include "box_prune/box_prune_axis.h"

#include <stdatomic.h>

#include "box_prune/axis_stats.h"
#include "core/valid.h"

#define VL_AXIS_MIN_PIECE 4096u
#define VL_AXIS_PIECES 128u

typedef struct axis_task {
    const vl_axis_list* lists;
    uint32_t piece[2], pieces0;
    int check;
    atomic_int bad;
    vl_axis_stats stats[VL_AXIS_PIECES];
} axis_task;

static uint32_t axis_piece(uint32_t n) {
    uint32_t p = (uint32_t)(((uint64_t)n + 63u) / 64u);
    return p < VL_AXIS_MIN_PIECE ? VL_AXIS_MIN_PIECE : p;
}

static void axis_items(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    axis_task* t = arg;
    for (uint32_t k = start; k < end; k++) {
        int l = k >= t->pieces0;
        const vl_axis_list* list = &t->lists[l];
        uint32_t first = (l ? k - t->pieces0 : k) * t->piece[l];
        uint32_t count = list->n - first < t->piece[l] ? list->n - first : t->piece[l];
        t->stats[k] = (vl_axis_stats){0};
        if (list->ids) {
            vl_axis_stats_add(&t->stats[k], list->boxes, list->ids + first, count);
            continue;
        }
        if (t->check && !vl_boxes_valid(list->boxes, first, first + count))
            atomic_store_explicit(&t->bad, 1, memory_order_relaxed);
        vl_axis_stats_add(&t->stats[k], list->boxes + first, NULL, count);
    }
}

int vl_prune_axis(const vl_context* ctx, const vl_axis_list lists[2], vl_status* check) {
    axis_task t;
    t.lists = lists;
    t.check = check != NULL;
    atomic_init(&t.bad, 0);
    t.piece[0] = axis_piece(lists[0].n), t.piece[1] = axis_piece(lists[1].n);
    t.pieces0 = (lists[0].n + t.piece[0] - 1) / t.piece[0];
    uint32_t items = t.pieces0 + (lists[1].n + t.piece[1] - 1) / t.piece[1];
    if (ctx)
        vl_tasks_run(ctx, axis_items, items, 1, &t);
    else if (items)
        axis_items(0, items, 0, &t);
    if (check) *check = atomic_load_explicit(&t.bad, memory_order_relaxed) ? VL_ERR_INVALID_BOUNDS : VL_OK;
    vl_axis_stats total = {0};
    for (uint32_t k = 0; k < items; k++) {
        total.n += t.stats[k].n;
        for (int a = 0; a < 3; a++) total.sum[a] += t.stats[k].sum[a], total.sum2[a] += t.stats[k].sum2[a];
    }
    return vl_axis_stats_best(&total);
}
