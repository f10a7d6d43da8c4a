/* Collapse of the binary tree into 4-wide SoA nodes for the single-ray traversal: each node4
 * takes a binary node's children and keeps opening the largest interior one until it holds 4.
 * Children stay in left-to-right order, so leaves keep their slot order. */
#include <math.h>
#include <string.h>

#include "bvh/bvh_internal.h"
#include "core/alloc.h"

static double area(const vl_bvh_node* n) {
    double d[3];
    for (int a = 0; a < 3; a++) {
        double lo = n->min[a] < -3.4e38f ? -3.4e38 : n->min[a], hi = n->max[a] > 3.4e38f ? 3.4e38 : n->max[a];
        d[a] = hi - lo;
    }
    return d[0] * d[1] + d[1] * d[2] + d[2] * d[0];
}

static void set_empty(vl_bvh_node4* w, int i) {
    for (int k = 0; k < 6; k++) w->bounds[k][i] = INFINITY;
    w->child[i] = VL_BVH_EMPTY;
    w->count[i] = 0;
}

vl_status vl_bvh_build_wide(vl_bvh* bvh) {
    const vl_bvh_node* nodes = bvh->nodes;
    uint32_t cap = vl_bvh_wide_bound(bvh);
    bvh->wide = vl_mem_alloc(sizeof(vl_bvh_node4) * (size_t)cap);
    bvh->wide_of = vl_mem_alloc(sizeof(uint32_t) * (size_t)bvh->node_count);
    if (!bvh->wide || !bvh->wide_of) {
        vl_mem_free(bvh->wide, sizeof(vl_bvh_node4) * (size_t)cap);
        vl_mem_free(bvh->wide_of, sizeof(uint32_t) * (size_t)bvh->node_count);
        bvh->wide = NULL, bvh->wide_of = NULL;
        return VL_ERR_OUT_OF_MEMORY;
    }
    bvh->wide_capacity = cap;
    for (uint32_t i = 0; i < bvh->node_count; i++) bvh->wide_of[i] = VL_BVH_EMPTY;
    bvh->wide_count = 1;
    bvh->wide_of[0] = 0;
    uint32_t stack[VL_BVH_MAX_DEPTH * 3 + 8][2];
    uint32_t top = 0;
    stack[top][0] = 0, stack[top++][1] = 0;
    while (top) {
        --top;
        uint32_t b = stack[top][0], wi = stack[top][1];
        vl_bvh_node4* w = &bvh->wide[wi];
        uint32_t kids[4], n = 0;
        if (vl_bvh_node_count(&nodes[b])) { /* a lone leaf root */
            kids[n++] = b;
        } else {
            kids[n++] = nodes[b].index, kids[n++] = nodes[b].index + 1;
        }
        while (n < 4) {
            int best = -1;
            double best_area = -1.0;
            for (uint32_t i = 0; i < n; i++) {
                const vl_bvh_node* k = &nodes[kids[i]];
                if (vl_bvh_node_count(k) == 0 && area(k) > best_area) best = (int)i, best_area = area(k);
            }
            if (best < 0) break;
            uint32_t left = nodes[kids[best]].index;
            for (uint32_t i = n; i > (uint32_t)best + 1; i--) kids[i] = kids[i - 1];
            kids[best] = left, kids[best + 1] = left + 1;
            n++;
        }
        for (uint32_t i = 0; i < 4; i++) {
            if (i >= n) {
                set_empty(w, (int)i);
                continue;
            }
            const vl_bvh_node* k = &nodes[kids[i]];
            for (int a = 0; a < 3; a++) w->bounds[a][i] = k->min[a], w->bounds[3 + a][i] = k->max[a];
            uint32_t count = vl_bvh_node_count(k);
            if (count) {
                w->child[i] = k->index;
                w->count[i] = count;
            } else {
                uint32_t fresh = bvh->wide_count++;
                w->child[i] = fresh;
                w->count[i] = 0;
                bvh->wide_of[kids[i]] = fresh;
                stack[top][0] = kids[i], stack[top++][1] = fresh;
            }
        }
    }
    /* the collapse uses about a third of the bound: move the node4s into an exact block (keep
     * the big one if that allocation fails) */
    vl_bvh_node4* exact = vl_mem_alloc(sizeof(vl_bvh_node4) * (size_t)bvh->wide_count);
    if (exact) {
        memcpy(exact, bvh->wide, sizeof(vl_bvh_node4) * (size_t)bvh->wide_count);
        vl_mem_free(bvh->wide, sizeof(vl_bvh_node4) * (size_t)cap);
        bvh->wide = exact;
        bvh->wide_capacity = bvh->wide_count;
    }
    return VL_OK;
}
