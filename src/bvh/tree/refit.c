/* Refit: the tree's topology kept, its triangles or boxes and every node box recomputed from the
 * moved primitives. One post-order walk over the binary nodes (children first; it meets the leaves
 * in the order of their slots, so the rows are written as one stream, faster than a pass from the
 * last node to the first: docs/measurements/tree.md), then one pass over the node4s, which copy the
 * boxes of the binary nodes they were collapsed from. No allocation. The same steps (the walk over
 * a subtree, ranges of nodes for the others) serve the parallel form (refit_tasks.c). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "bvh/tree/refit.h"
#include "compiler.h"
#include "core/valid.h"

static void union_into(vl_bvh_node* dst, const vl_bvh_node* a, const vl_bvh_node* b) {
    for (int k = 0; k < 3; k++) {
        dst->min[k] = a->min[k] < b->min[k] ? a->min[k] : b->min[k];
        dst->max[k] = a->max[k] > b->max[k] ? a->max[k] : b->max[k];
    }
}

/* Copies into lanes lane[*i..] of node4 w the boxes of the binary nodes that fill them, found by
 * walking binary node b's subtree left to right: a lane holds either a leaf (the one starting at
 * its slot) or an interior node that became the node4 child[lane]. */
static void match_lanes(const vl_bvh* bvh, uint32_t b, vl_bvh_node4* w, uint32_t* lane) {
    const vl_bvh_node* node = &bvh->nodes[b];
    uint32_t i = *lane;
    if (i >= 4) return;
    int is_lane = vl_bvh_node_count(node) ? (w->count[i] && w->child[i] == node->index)
                                          : (!w->count[i] && w->child[i] == bvh->wide_of[b]);
    if (is_lane) {
        for (int a = 0; a < 3; a++) w->bounds[a][i] = node->min[a], w->bounds[3 + a][i] = node->max[a];
        (*lane)++;
        return;
    }
    if (vl_bvh_node_count(node)) return; /* cannot happen in a valid tree */
    match_lanes(bvh, node->index, w, lane);
    match_lanes(bvh, node->index + 1, w, lane);
}

/* The lanes of the node4 that binary node b became, if any (wide_of gives it). */
static void refit_wide_node(vl_bvh* bvh, uint32_t b) {
    uint32_t wi = bvh->wide_of[b];
    if (wi == VL_BVH_EMPTY) return;
    const vl_bvh_node* node = &bvh->nodes[b];
    uint32_t lane = 0;
    if (vl_bvh_node_count(node)) { /* a lone leaf root */
        match_lanes(bvh, b, &bvh->wide[wi], &lane);
    } else {
        match_lanes(bvh, node->index, &bvh->wide[wi], &lane);
        match_lanes(bvh, node->index + 1, &bvh->wide[wi], &lane);
    }
}

void vl_bvh_refit_wide_range(vl_bvh* bvh, uint32_t first, uint32_t end) {
    for (uint32_t b = first; b < end; b++) refit_wide_node(bvh, b);
}

/* A triangle leaf: its triangles rebuilt from the moved vertices, its box their bounds, grown
 * into lo/hi (the bounds of all the vertices, for the margin). */
static void refit_tri_leaf(vl_bvh* bvh, vl_bvh_node* node, uint32_t count, const float* xyz, float lo[3],
                           float hi[3]) {
    float mn[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, mx[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    float* rows = vl_bvh_leaf_rows(bvh, node->index);
    for (uint32_t k = 0; k < count; k++) {
        const uint32_t* corner = bvh->corners + 3 * ((size_t)node->index + k);
        const float *p0 = xyz + 3 * (size_t)corner[0], *p1 = xyz + 3 * (size_t)corner[1],
                    *p2 = xyz + 3 * (size_t)corner[2];
        vl_bvh_tri tri;
        vl_bvh_tri_setup(&tri, p0, p1, p2, 0); /* the prim row stays as it is */
        vl_bvh_tri_put_geometry(rows, count, k, &tri);
        for (int a = 0; a < 3; a++) {
            float x = p0[a], y = p1[a], z = p2[a];
            float tmn = x < y ? (x < z ? x : z) : (y < z ? y : z), tmx = x > y ? (x > z ? x : z) : (y > z ? y : z);
            mn[a] = tmn < mn[a] ? tmn : mn[a];
            mx[a] = tmx > mx[a] ? tmx : mx[a];
        }
    }
    for (int a = 0; a < 3; a++) {
        node->min[a] = mn[a], node->max[a] = mx[a];
        lo[a] = mn[a] < lo[a] ? mn[a] : lo[a];
        hi[a] = mx[a] > hi[a] ? mx[a] : hi[a];
    }
}

/* A box leaf: its slots' boxes copied from the moved ones, its box their bounds. */
static void refit_box_leaf(vl_bvh* bvh, vl_bvh_node* node, uint32_t count, const vl_aabb* boxes) {
    for (int a = 0; a < 3; a++) node->min[a] = INFINITY, node->max[a] = -INFINITY;
    for (uint32_t k = 0; k < count; k++) {
        vl_bvh_box* slot = &bvh->boxes[node->index + k];
        const vl_aabb* src = &boxes[slot->prim];
        for (int a = 0; a < 3; a++) {
            slot->min[a] = src->min[a], slot->max[a] = src->max[a];
            /* as the build: bounds at or past FLT_MAX in magnitude make the node's infinite */
            float mn = src->min[a] <= -FLT_MAX ? -INFINITY : (src->min[a] >= FLT_MAX ? FLT_MAX : src->min[a]);
            float mx = src->max[a] >= FLT_MAX ? INFINITY : (src->max[a] <= -FLT_MAX ? -FLT_MAX : src->max[a]);
            node->min[a] = mn < node->min[a] ? mn : node->min[a];
            node->max[a] = mx > node->max[a] ? mx : node->max[a];
        }
    }
}

/* One binary node: a leaf from the moved triangles (xyz, growing lo/hi) or boxes, an inner node
 * the union of its children (refit already). */
static void refit_node(vl_bvh* bvh, vl_bvh_node* node, const float* xyz, const vl_aabb* boxes, float lo[3],
                       float hi[3]) {
    const uint32_t count = vl_bvh_node_count(node);
    if (!count)
        union_into(node, &bvh->nodes[node->index], &bvh->nodes[node->index + 1]);
    else if (xyz)
        refit_tri_leaf(bvh, node, count, xyz, lo, hi);
    else
        refit_box_leaf(bvh, node, count, boxes);
}

void vl_bvh_refit_pad_range(vl_bvh* bvh, uint32_t first, uint32_t end, float pad) {
    for (uint32_t ni = first; ni < end; ni++)
        for (int a = 0; a < 3; a++) {
            bvh->nodes[ni].min[a] = vl_bvh_grow_min(bvh->nodes[ni].min[a], pad);
            bvh->nodes[ni].max[a] = vl_bvh_grow_max(bvh->nodes[ni].max[a], pad);
        }
}

void vl_refit_walk_init(vl_refit_walk* w) {
    for (int a = 0; a < 3; a++) w->lo[a] = FLT_MAX, w->hi[a] = -FLT_MAX;
}

void vl_bvh_refit_walk(vl_bvh* bvh, uint32_t ni, uint32_t depth, uint32_t cut, vl_refit_walk* w) {
    if (depth == cut) return;
    vl_bvh_node* node = &bvh->nodes[ni];
    if (!vl_bvh_node_count(node)) {
        vl_bvh_refit_walk(bvh, node->index, depth + 1, cut, w);
        vl_bvh_refit_walk(bvh, node->index + 1, depth + 1, cut, w);
    }
    refit_node(bvh, node, w->xyz, w->boxes, w->lo, w->hi);
}

void vl_bvh_refit_checked(const vl_bvh* bvh) {
#ifndef NDEBUG
    if (vl_bvh_check(bvh) != VL_OK) VL_TRAP();
#else
    (void)bvh;
#endif
}

vl_status vl_bvh_refit_triangles(vl_bvh* bvh, const float* xyz, const vl_exec* exec) {
    bool ok;
    vl_context* ctx = vl_bvh_exec_context(exec, &ok);
    if (!ok || !bvh || !xyz || bvh->kind != VL_BVH_TRIANGLES || !bvh->corners) return VL_ERR_INVALID_ARGUMENT;
    if (ctx) return vl_bvh_refit_triangles_on_context(ctx, bvh, xyz);
    if (!vl_coords_finite(xyz, 0, 3 * (size_t)bvh->vertex_count)) return VL_ERR_INVALID_GEOMETRY;

    vl_refit_walk w = {.xyz = xyz};
    vl_refit_walk_init(&w);
    vl_bvh_refit_walk(bvh, 0, 0, UINT32_MAX, &w);
    const float pad = vl_bvh_triangle_pad(w.lo, w.hi);
    bvh->pad = pad;
    vl_bvh_refit_pad_range(bvh, 0, bvh->node_count, pad);
    vl_bvh_refit_wide_range(bvh, 0, bvh->node_count);
    vl_bvh_refit_checked(bvh);
    return VL_OK;
}

vl_status vl_bvh_refit_boxes(vl_bvh* bvh, const vl_aabb* boxes, const vl_exec* exec) {
    bool ok;
    vl_context* ctx = vl_bvh_exec_context(exec, &ok);
    if (!ok || !bvh || !boxes || bvh->kind != VL_BVH_BOXES) return VL_ERR_INVALID_ARGUMENT;
    if (ctx) return vl_bvh_refit_boxes_on_context(ctx, bvh, boxes);
    if (!vl_boxes_valid(boxes, 0, bvh->prim_count)) return VL_ERR_INVALID_BOUNDS;

    vl_refit_walk w = {.boxes = boxes};
    vl_refit_walk_init(&w);
    vl_bvh_refit_walk(bvh, 0, 0, UINT32_MAX, &w);
    vl_bvh_refit_wide_range(bvh, 0, bvh->node_count);
    vl_bvh_refit_checked(bvh);
    return VL_OK;
}
