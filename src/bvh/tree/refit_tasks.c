/* vl_bvh_refit_triangles / vl_bvh_refit_boxes on a context: the input checked in blocks as
 * tasks; the subtrees at a fixed depth refit as tasks, the few nodes above them on the calling
 * thread; then (triangles) the margin and the node4s over blocks of nodes as tasks. Every node
 * goes through the serial refit's steps (refit.c), after its children for the first pass and
 * after every binary node for the node4s, so the tree is the serial refit's, bit for bit.
 * Nothing is allocated. */
#include <float.h>
#include <stdatomic.h>

#include "bvh/tree/refit.h"
#include "core/tasks.h"
#include "core/valid.h"

#define VL_REFIT_ITEMS (1u << VL_PARALLEL_REFIT_DEPTH)

typedef struct refit_task {
    vl_bvh* bvh;
    size_t count, block; /* a pass over blocks: floats or boxes to check, or nodes; per block */
    atomic_int bad;
    float pad;
    uint32_t roots[VL_REFIT_ITEMS]; /* the binary nodes at depth VL_PARALLEL_REFIT_DEPTH */
    uint32_t root_count;
    vl_refit_walk walks[VL_REFIT_ITEMS]; /* per subtree: the input, its triangles' bounds */
} refit_task;

/* Block b's [first, end) in a pass over t->count things. */
static size_t block_of(const refit_task* t, uint32_t b, size_t* end) {
    size_t first = b * t->block;
    *end = t->count - first < t->block ? t->count : first + t->block;
    return first;
}

/* Runs fn over the blocks of a pass over count things, ceil(count / 64) each, at least `least`. */
static void run_blocks(const vl_context* ctx, refit_task* t, vl_task_fn* fn, size_t count, size_t least) {
    size_t block = (count + VL_PARALLEL_REFIT_BLOCKS - 1) / VL_PARALLEL_REFIT_BLOCKS;
    t->count = count;
    t->block = block < least ? least : block;
    if (count) vl_tasks_run(ctx, fn, (uint32_t)((count + t->block - 1) / t->block), 1, t);
}

static void check_coords(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    refit_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        size_t last, first = block_of(t, b, &last);
        if (!vl_coords_finite(t->walks[0].xyz, first, last))
            atomic_store_explicit(&t->bad, 1, memory_order_relaxed);
    }
}

static void check_boxes(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    refit_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        size_t last, first = block_of(t, b, &last);
        if (!vl_boxes_valid(t->walks[0].boxes, (uint32_t)first, (uint32_t)last))
            atomic_store_explicit(&t->bad, 1, memory_order_relaxed);
    }
}

static void pad_nodes(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    refit_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        size_t last, first = block_of(t, b, &last);
        vl_bvh_refit_pad_range(t->bvh, (uint32_t)first, (uint32_t)last, t->pad);
    }
}

static void wide_nodes(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    refit_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        size_t last, first = block_of(t, b, &last);
        vl_bvh_refit_wide_range(t->bvh, (uint32_t)first, (uint32_t)last);
    }
}

/* The nodes at depth VL_PARALLEL_REFIT_DEPTH, left to right. */
static void find_roots(refit_task* t, uint32_t ni, uint32_t depth) {
    const vl_bvh_node* node = &t->bvh->nodes[ni];
    if (depth == VL_PARALLEL_REFIT_DEPTH) {
        t->roots[t->root_count++] = ni;
    } else if (!vl_bvh_node_count(node)) {
        find_roots(t, node->index, depth + 1);
        find_roots(t, node->index + 1, depth + 1);
    }
}

static void walk_subtrees(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    refit_task* t = arg;
    for (uint32_t i = start; i < end; i++)
        vl_bvh_refit_walk(t->bvh, t->roots[i], VL_PARALLEL_REFIT_DEPTH, UINT32_MAX, &t->walks[i]);
}

/* Checks the input (0: it fails the serial refit's checks, nothing written), refits every binary
 * node (the subtrees as tasks, the nodes above them here) and gathers the triangles' bounds in
 * *top. */
static int refit_binary(const vl_context* ctx, refit_task* t, vl_bvh* bvh, vl_refit_walk* top) {
    t->bvh = bvh;
    t->walks[0] = *top;
    atomic_init(&t->bad, 0);
    if (top->xyz)
        run_blocks(ctx, t, check_coords, 3 * (size_t)bvh->vertex_count, VL_PARALLEL_REFIT_MIN_CHECK);
    else
        run_blocks(ctx, t, check_boxes, bvh->prim_count, VL_PARALLEL_REFIT_MIN_CHECK);
    if (atomic_load_explicit(&t->bad, memory_order_relaxed)) return 0;

    t->root_count = 0;
    find_roots(t, 0, 0);
    for (uint32_t i = 0; i < t->root_count; i++) t->walks[i] = *top;
    if (t->root_count) vl_tasks_run(ctx, walk_subtrees, t->root_count, 1, t);
    vl_bvh_refit_walk(bvh, 0, 0, VL_PARALLEL_REFIT_DEPTH, top);
    for (uint32_t i = 0; i < t->root_count; i++)
        for (int a = 0; a < 3; a++) { /* min/max: the order of the subtrees changes no bit of the margin */
            top->lo[a] = t->walks[i].lo[a] < top->lo[a] ? t->walks[i].lo[a] : top->lo[a];
            top->hi[a] = t->walks[i].hi[a] > top->hi[a] ? t->walks[i].hi[a] : top->hi[a];
        }
    return 1;
}

vl_status vl_bvh_refit_triangles_on_context(vl_context* ctx, vl_bvh* bvh, const float* xyz) {
    refit_task t;
    vl_refit_walk top = {xyz, NULL, {0}, {0}};
    vl_refit_walk_init(&top);
    if (!refit_binary(ctx, &t, bvh, &top)) return VL_ERR_INVALID_GEOMETRY;
    t.pad = bvh->pad = vl_bvh_triangle_pad(top.lo, top.hi);
    run_blocks(ctx, &t, pad_nodes, bvh->node_count, VL_PARALLEL_REFIT_MIN_NODES);
    run_blocks(ctx, &t, wide_nodes, bvh->node_count, VL_PARALLEL_REFIT_MIN_NODES);
    vl_bvh_refit_checked(bvh);
    return VL_OK;
}

vl_status vl_bvh_refit_boxes_on_context(vl_context* ctx, vl_bvh* bvh, const vl_aabb* boxes) {
    refit_task t;
    vl_refit_walk top = {NULL, boxes, {0}, {0}};
    vl_refit_walk_init(&top);
    if (!refit_binary(ctx, &t, bvh, &top)) return VL_ERR_INVALID_BOUNDS;
    run_blocks(ctx, &t, wide_nodes, bvh->node_count, VL_PARALLEL_REFIT_MIN_NODES);
    vl_bvh_refit_checked(bvh);
    return VL_OK;
}
