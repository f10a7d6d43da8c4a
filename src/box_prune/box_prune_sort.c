/* A prune set built in pieces: the keys, the parallel radix sort (radix.c), the entries gathered
 * from the sorted keys; each piece writes its own entries only. Sets too small for the pieced sort
 * take two tasks: each half's keys made and sorted apart (into tmp), then ranges of the stable
 * merge of the halves, each gathering its own entries. */
#include "box_prune/box_prune_sort.h"

#include "core/radix.h"

#define VL_SET_PIECES 64u
#define VL_SET_PIECE_MIN 4096u
#define VL_SET_SPLIT_MIN 4096u /* fewer boxes: the serial build */
#define VL_SET_MERGE_RANGES 8u

typedef struct set_task {
    vl_prune_set* set;
    const vl_aabb* boxes;
    const uint32_t* ids;
    uint64_t *keys, *tmp;
    uint32_t n, piece;
    int axis;
} set_task;

static void keys_pieces(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const set_task* t = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(t->n, t->piece, k, &i0, &i1);
        vl_prune_keys_fill(t->keys, t->boxes, t->ids, i0, i1, t->axis);
    }
}

static void fill_pieces(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const set_task* t = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(t->n, t->piece, k, &i0, &i1);
        vl_prune_set_fill(t->set, t->boxes, t->ids, t->keys, i0, i1, t->axis);
    }
}

/* Half k's keys, sorted into tmp (keys is the sort's scratch). */
static void sort_halves(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const set_task* t = arg;
    const uint32_t half = t->n / 2;
    for (uint32_t k = start; k < end; k++) {
        uint32_t first = k ? half : 0, last = k ? t->n : half;
        vl_prune_keys_fill(t->tmp, t->boxes, t->ids, first, last, t->axis);
        vl_radix_sort_u64(t->tmp + first, t->keys + first, last - first, 32);
    }
}

/* Range k of the merge of the halves into keys, and its entries. */
static void merge_ranges(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const set_task* t = arg;
    const uint32_t half = t->n / 2;
    for (uint32_t k = start; k < end; k++) {
        uint32_t d0 = (uint32_t)((uint64_t)t->n * k / VL_SET_MERGE_RANGES);
        uint32_t d1 = (uint32_t)((uint64_t)t->n * (k + 1) / VL_SET_MERGE_RANGES);
        vl_radix_merge_range(t->tmp, half, t->tmp + half, t->n - half, d0, d1, 32, t->keys);
        vl_prune_set_fill(t->set, t->boxes, t->ids, t->keys, d0, d1, t->axis);
    }
}

vl_status vl_prune_set_build_parallel(const vl_context* ctx, vl_prune_set* set, vl_prune_scratch* scratch,
                                      const vl_aabb* boxes, const uint32_t* ids, uint32_t n, int axis, uint32_t* hist) {
    if (!ctx->tasks.enqueue || n < VL_SET_SPLIT_MIN) return vl_prune_set_build(set, scratch, boxes, ids, n, axis, 0);
    vl_status s = vl_prune_set_prepare(set, scratch, n, 0);
    if (s != VL_OK) return s;
    set_task t;
    t.set = set, t.boxes = boxes, t.ids = ids, t.keys = scratch->keys, t.tmp = scratch->tmp, t.n = n, t.axis = axis;
    if (n < 2 * VL_RADIX_PIECE_MIN) {
        vl_tasks_run(ctx, sort_halves, 2, 1, &t);
        vl_tasks_run(ctx, merge_ranges, VL_SET_MERGE_RANGES, 1, &t);
        vl_prune_set_finish(set, n, axis);
        return VL_OK;
    }
    t.piece = (uint32_t)(((uint64_t)n + VL_SET_PIECES - 1) / VL_SET_PIECES);
    if (t.piece < VL_SET_PIECE_MIN) t.piece = VL_SET_PIECE_MIN;
    const uint32_t pieces = (uint32_t)(((uint64_t)n + t.piece - 1) / t.piece);
    vl_tasks_run(ctx, keys_pieces, pieces, 1, &t);
    vl_radix_sort_u64_parallel(ctx, scratch->keys, scratch->tmp, n, 32, hist);
    vl_tasks_run(ctx, fill_pieces, pieces, 1, &t);
    vl_prune_set_finish(set, n, axis);
    return VL_OK;
}
