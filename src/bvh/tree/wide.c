/* Collapse of the binary tree into 4-wide SoA nodes for the single-ray traversal: each node4
 * takes a binary node's children and keeps opening the largest interior one until it holds 4.
 * Children stay in left-to-right order, so leaves keep their slot order. A first pass picks every
 * node4's children (16 bytes each), the second writes the node4s into an exact-size block, so the
 * 128-byte nodes are written once, into memory touched once (in pieces, as tasks with a context). */
#include <math.h>

#include "bvh/tree/build_sah.h"
#include "compiler.h"
#include "core/alloc.h"

static double area(const vl_bvh_node* n) {
    double d[3];
    for (int a = 0; a < 3; a++) {
        double lo = n->min[a] < -3.4e38f ? -3.4e38 : n->min[a], hi = n->max[a] > 3.4e38f ? 3.4e38 : n->max[a];
        d[a] = hi - lo;
    }
    return d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
}

/* The children of the node4 made from binary node b (VL_BVH_EMPTY past the last). */
static void pick_children(const vl_bvh_node* nodes, uint32_t b, uint32_t kids[4]) {
    double kid_area[4];
    uint32_t n = 0;
    if (vl_bvh_node_count(&nodes[b])) { /* a lone leaf root */
        kids[n++] = b;
    } else {
        for (uint32_t i = 0; i < 2; i++) kids[n] = nodes[b].index + i, kid_area[n++] = area(&nodes[nodes[b].index + i]);
    }
    while (n < 4) {
        int best = -1;
        double best_area = -1.0;
        for (uint32_t i = 0; i < n; i++)
            if (vl_bvh_node_count(&nodes[kids[i]]) == 0 && kid_area[i] > best_area)
                best = (int)i, best_area = kid_area[i];
        if (best < 0) break;
        uint32_t left = nodes[kids[best]].index;
        for (uint32_t i = n; i > (uint32_t)best + 1; i--) kids[i] = kids[i - 1], kid_area[i] = kid_area[i - 1];
        kids[best] = left, kids[best + 1] = left + 1;
        kid_area[best] = area(&nodes[left]), kid_area[best + 1] = area(&nodes[left + 1]);
        n++;
    }
    for (uint32_t i = n; i < 4; i++) kids[i] = VL_BVH_EMPTY;
}

static void write_node4(const vl_bvh* bvh, const uint32_t kids[4], vl_bvh_node4* w) {
    for (uint32_t i = 0; i < 4; i++) {
        if (kids[i] == VL_BVH_EMPTY) {
            for (int k = 0; k < 6; k++) w->bounds[k][i] = INFINITY;
            w->child[i] = VL_BVH_EMPTY;
            w->count[i] = 0;
            continue;
        }
        const vl_bvh_node* k = &bvh->nodes[kids[i]];
        for (int a = 0; a < 3; a++) w->bounds[a][i] = k->min[a], w->bounds[3 + a][i] = k->max[a];
        w->count[i] = vl_bvh_node_count(k);
        w->child[i] = w->count[i] ? k->index : bvh->wide_of[kids[i]];
    }
}

/* The node4s written in pieces of at least VL_WIDE_PIECE_MIN, each from its picked children. */
#define VL_WIDE_PIECES 64u
#define VL_WIDE_PIECE_MIN 4096u

typedef struct wide_pass {
    const vl_bvh* bvh;
    const uint32_t (*kids)[4];
    uint32_t count, piece;
} wide_pass;

static void write_pieces(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    const wide_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t first, last;
        vl_piece_range(p->count, p->piece, k, &first, &last);
        for (uint32_t wi = first; wi < last; wi++) write_node4(p->bvh, p->kids[wi], &p->bvh->wide[wi]);
    }
}

vl_status vl_bvh_build_wide_parallel(vl_bvh* bvh, const vl_context* ctx) {
    const vl_bvh_node* nodes = bvh->nodes;
    uint32_t cap = vl_bvh_wide_bound(bvh);
    uint32_t(*kids)[4] = vl_mem_alloc(sizeof(uint32_t[4]) * (size_t)cap);
    bvh->wide_of = vl_mem_alloc(sizeof(uint32_t) * (size_t)bvh->node_count);
    if (!kids || !bvh->wide_of) {
        vl_mem_free(kids, sizeof(uint32_t[4]) * (size_t)cap);
        vl_mem_free(bvh->wide_of, sizeof(uint32_t) * (size_t)bvh->node_count);
        bvh->wide_of = NULL;
        return VL_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < bvh->node_count; i++) bvh->wide_of[i] = VL_BVH_EMPTY;
    uint32_t count = 1;
    bvh->wide_of[0] = 0;
    uint32_t stack[VL_BVH_MAX_DEPTH * 3 + 8][2];
    uint32_t top = 0;
    stack[top][0] = 0, stack[top++][1] = 0;
    while (top) {
        --top;
        uint32_t b = stack[top][0], wi = stack[top][1];
        pick_children(nodes, b, kids[wi]);
        for (uint32_t i = 0; i < 4; i++) {
            uint32_t k = kids[wi][i];
            if (k == VL_BVH_EMPTY || vl_bvh_node_count(&nodes[k])) continue;
            bvh->wide_of[k] = count;
            VL_PREFETCH(&nodes[nodes[k].index]); /* its children, read when it is popped */
            stack[top][0] = k, stack[top++][1] = count++;
        }
    }
    bvh->wide = vl_mem_alloc(sizeof(vl_bvh_node4) * (size_t)count);
    if (bvh->wide) {
        bvh->wide_count = bvh->wide_capacity = count;
        wide_pass p = {bvh, (const uint32_t(*)[4])kids, count, (count + VL_WIDE_PIECES - 1) / VL_WIDE_PIECES};
        if (p.piece < VL_WIDE_PIECE_MIN) p.piece = VL_WIDE_PIECE_MIN;
        const uint32_t pieces = (count + p.piece - 1) / p.piece;
        if (ctx)
            vl_tasks_run(ctx, write_pieces, pieces, 1, &p);
        else
            write_pieces(0, pieces, 0, &p);
    }
    vl_mem_free(kids, sizeof(uint32_t[4]) * (size_t)cap);
    if (bvh->wide) return VL_OK;
    vl_mem_free(bvh->wide_of, sizeof(uint32_t) * (size_t)bvh->node_count);
    bvh->wide_of = NULL;
    return VL_ERR_OUT_OF_MEMORY;
}

vl_status vl_bvh_build_wide(vl_bvh* bvh) { return vl_bvh_build_wide_parallel(bvh, NULL); }
