/* vl_bvh_refit_triangles_parallel / vl_bvh_refit_boxes_parallel: the input checked in blocks as
 * tasks, the subtrees at a fixed depth refit as tasks, the few nodes above them on the calling
 * thread. Every node goes through the serial refit's steps (refit.c) after its children, so the
 * tree is the serial refit's, bit for bit. Nothing is allocated. */
#include <float.h>
#include <stdatomic.h>

#include "bvh/parallel.h"
#include "bvh/refit.h"
#include "core/tasks.h"

#define VL_REFIT_ITEMS (1u << VL_PARALLEL_REFIT_DEPTH)

typedef struct refit_task {
    vl_bvh* bvh;
    const float* xyz;
    const vl_aabb* boxes;
    size_t check_count, check_block; /* floats (triangles) or boxes to check, per block */
    atomic_int bad;
    uint32_t roots[VL_REFIT_ITEMS]; /* the binary nodes at depth VL_PARALLEL_REFIT_DEPTH */
    uint32_t root_count;
    vl_refit_walk walks[VL_REFIT_ITEMS]; /* per item: what to do, and its triangles' bounds */
} refit_task;

static void check_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    refit_task* t = arg;
    for (uint32_t b = start; b < end; b++) {
        size_t first = b * t->check_block, last = t->check_count - first < t->check_block ? t->check_count
                                                                                         : first + t->check_block;
        int ok = t->xyz ? vl_bvh_refit_coords_ok(t->xyz, first, last)
                        : vl_bvh_refit_boxes_ok(t->boxes, (uint32_t)first, (uint32_t)last);
        if (!ok) atomic_store_explicit(&t->bad, 1, memory_order_relaxed);
    }
}

/* Whether the whole input passes the serial refit's checks. */
static int input_ok(const vl_context* ctx, refit_task* t, size_t count) {
    size_t block = (count + VL_PARALLEL_REFIT_CHECK_BLOCKS - 1) / VL_PARALLEL_REFIT_CHECK_BLOCKS;
    t->check_count = count;
    t->check_block = block < VL_PARALLEL_REFIT_MIN_CHECK ? VL_PARALLEL_REFIT_MIN_CHECK : block;
    atomic_init(&t->bad, 0);
    if (count) vl_tasks_run(ctx, check_range, (uint32_t)((count + t->check_block - 1) / t->check_block), 1, t);
    return !atomic_load_explicit(&t->bad, memory_order_relaxed);
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

static void walk_range(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    refit_task* t = arg;
    for (uint32_t i = start; i < end; i++)
        vl_bvh_refit_walk(t->bvh, t->roots[i], VL_PARALLEL_REFIT_DEPTH, UINT32_MAX, &t->walks[i]);
}

/* One walk with these steps over every subtree as tasks, then over the nodes above them here; the
 * triangles' bounds of all of them gathered in *top. */
static void walk_all(const vl_context* ctx, refit_task* t, vl_refit_walk* top) {
    for (uint32_t i = 0; i < t->root_count; i++) {
        t->walks[i] = *top;
        vl_refit_walk_init(&t->walks[i]);
    }
    if (t->root_count) vl_tasks_run(ctx, walk_range, t->root_count, 1, t);
    vl_bvh_refit_walk(t->bvh, 0, 0, VL_PARALLEL_REFIT_DEPTH, top);
    for (uint32_t i = 0; i < t->root_count; i++)
        for (int a = 0; a < 3; a++) {
            top->lo[a] = t->walks[i].lo[a] < top->lo[a] ? t->walks[i].lo[a] : top->lo[a];
            top->hi[a] = t->walks[i].hi[a] > top->hi[a] ? t->walks[i].hi[a] : top->hi[a];
        }
}

static void task_init(refit_task* t, vl_bvh* bvh, const float* xyz, const vl_aabb* boxes) {
    t->bvh = bvh, t->xyz = xyz, t->boxes = boxes;
    t->root_count = 0;
}

vl_status vl_bvh_refit_triangles_parallel(vl_context* ctx, vl_bvh* bvh, const float* xyz) {
    if (!ctx || !bvh || !xyz || bvh->kind != VL_BVH_TRIANGLES || !bvh->corners) return VL_ERR_INVALID_ARGUMENT;
    refit_task t;
    task_init(&t, bvh, xyz, NULL);
    if (!input_ok(ctx, &t, 3 * (size_t)bvh->vertex_count)) return VL_ERR_INVALID_GEOMETRY;
    find_roots(&t, 0, 0);

    vl_refit_walk top = {xyz, NULL, {0}, {0}, 0.0f, 1, 0, 0};
    vl_refit_walk_init(&top);
    walk_all(ctx, &t, &top);
    const float pad = vl_bvh_triangle_pad(top.lo, top.hi);
    bvh->pad = pad;
    vl_refit_walk grow = {NULL, NULL, {0}, {0}, pad, 0, 1, 1};
    walk_all(ctx, &t, &grow);
    vl_bvh_refit_checked(bvh);
    return VL_OK;
}

vl_status vl_bvh_refit_boxes_parallel(vl_context* ctx, vl_bvh* bvh, const vl_aabb* boxes) {
    if (!ctx || !bvh || !boxes || bvh->kind != VL_BVH_BOXES) return VL_ERR_INVALID_ARGUMENT;
    refit_task t;
    task_init(&t, bvh, NULL, boxes);
    if (!input_ok(ctx, &t, bvh->prim_count)) return VL_ERR_INVALID_BOUNDS;
    find_roots(&t, 0, 0);

    vl_refit_walk all = {NULL, boxes, {0}, {0}, 0.0f, 1, 0, 1};
    vl_refit_walk_init(&all);
    walk_all(ctx, &t, &all);
    vl_bvh_refit_checked(bvh);
    return VL_OK;
}
