/* A prune set built in pieces: the keys, the parallel radix sort (radix.c), the entries gathered
 * from the sorted keys; each piece writes its own entries only. */
#include "sap/box_prune_sort.h"

#include "sap/radix.h"

#define VL_SET_PIECES 64u
#define VL_SET_PIECE_MIN 4096u

typedef struct set_task {
    vl_prune_set* set;
    const vl_aabb* boxes;
    const uint32_t* ids;
    uint64_t* keys;
    uint32_t n, piece;
    int axis;
} set_task;

static void piece_bounds(const set_task* t, uint32_t k, uint32_t* i0, uint32_t* i1) {
    *i0 = k * t->piece;
    *i1 = t->n - *i0 < t->piece ? t->n : *i0 + t->piece;
}

static void keys_pieces(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const set_task* t = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        piece_bounds(t, k, &i0, &i1);
        vl_prune_keys_fill(t->keys, t->boxes, t->ids, i0, i1, t->axis);
    }
}

static void fill_pieces(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const set_task* t = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        piece_bounds(t, k, &i0, &i1);
        vl_prune_set_fill(t->set, t->boxes, t->ids, t->keys, i0, i1, t->axis);
    }
}

vl_status vl_prune_set_build_parallel(const vl_context* ctx, vl_prune_set* set, vl_prune_scratch* scratch,
                                      const vl_aabb* boxes, const uint32_t* ids, uint32_t n, int axis, uint32_t* hist) {
    if (!ctx->tasks.enqueue || n < 2 * VL_RADIX_PIECE_MIN) return vl_prune_set_build(set, scratch, boxes, ids, n, axis, 0);
    vl_status s = vl_prune_set_prepare(set, scratch, n, 0);
    if (s != VL_OK) return s;
    set_task t;
    t.set = set, t.boxes = boxes, t.ids = ids, t.keys = scratch->keys, t.n = n, t.axis = axis;
    t.piece = (uint32_t)(((uint64_t)n + VL_SET_PIECES - 1) / VL_SET_PIECES);
    if (t.piece < VL_SET_PIECE_MIN) t.piece = VL_SET_PIECE_MIN;
    const uint32_t pieces = (uint32_t)(((uint64_t)n + t.piece - 1) / t.piece);
    vl_tasks_run(ctx, keys_pieces, pieces, 1, &t);
    vl_radix_sort_u64_parallel(ctx, scratch->keys, scratch->tmp, n, 32, hist);
    vl_tasks_run(ctx, fill_pieces, pieces, 1, &t);
    vl_prune_set_finish(set, n, axis);
    return VL_OK;
}
