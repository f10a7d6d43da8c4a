/* Move-to-front traversal of the 4-wide tree for any query kind (see query_engine.h). */
#include <string.h>

#include "bvh/query_engine.h"

/* Pending subtrees: at most 3 siblings wait per level of a tree at most VL_BVH_MAX_DEPTH deep. */
#define VL_QUERY_STACK (3 * VL_BVH_MAX_DEPTH + 8)

vl_status vl_query_single_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records, uint32_t id,
                              uint32_t node) {
    uint32_t stack[VL_QUERY_STACK];
    uint32_t top = 0;
    stack[top++] = node;
    const float* rec = records + VL_QUERY_RECORD_FLOATS * (size_t)id;
    while (top) {
        const vl_bvh_node4* w = &bvh->wide[stack[--top]];
        uint32_t bits = kind->node_test1(rec, w);
        for (int c = 3; c >= 0; c--) { /* pushed last to first: lane 0 pops first */
            if (!(bits >> c & 1u) || w->child[c] == VL_BVH_EMPTY) continue;
            if (w->count[c]) {
                vl_status st = kind->leaf_test(ctx, bvh, records, &id, 1, w->child[c], w->count[c]);
                if (st != VL_OK) return st;
            } else {
                stack[top++] = w->child[c];
            }
        }
    }
    return VL_OK;
}

typedef struct vl_query_entry {
    uint32_t node, at, n; /* a node4 and the list (arena[at, at + n)) of the queries that reached it */
} vl_query_entry;

vl_status vl_query_batch_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                             const uint32_t* ids, uint32_t n, uint32_t* arena, size_t arena_entries) {
    if (n == 0) return VL_OK;
    if (ids != arena) memmove(arena, ids, sizeof(uint32_t) * n);
    vl_query_entry stack[VL_QUERY_STACK];
    uint32_t top = 0;
    stack[top++] = (vl_query_entry){0, 0, n};
    while (top) {
        vl_query_entry e = stack[--top];
        size_t used = (size_t)e.at + e.n; /* lists above belong to finished subtrees */
        const vl_bvh_node4* w = &bvh->wide[e.node];
        if (used + 4 * (size_t)e.n > arena_entries || top + 4 > VL_QUERY_STACK) {
            for (uint32_t i = 0; i < e.n; i++) {
                vl_status st = vl_query_single_run(bvh, kind, ctx, records, arena[e.at + i], e.node);
                if (st != VL_OK) return st;
            }
            continue;
        }
        /* lane c's list goes to stretch 3 - c, so that lane 0's ends up on top and pops first */
        uint32_t* lists[4];
        uint32_t counts[4];
        for (int c = 0; c < 4; c++) lists[c] = arena + used + (size_t)(3 - c) * e.n;
        kind->node_test(records, arena + e.at, e.n, w, lists, counts);
        for (int c = 0; c < 4; c++) {
            if (!counts[c] || !w->count[c]) continue;
            vl_status st = kind->leaf_test(ctx, bvh, records, lists[c], counts[c], w->child[c], w->count[c]);
            if (st != VL_OK) return st;
        }
        /* interior children's lists packed down in stretch order (each moves down, never onto a
           list still to move), then pushed so that lane 0 pops first */
        size_t at = used;
        for (int c = 3; c >= 0; c--) {
            if (!counts[c] || w->count[c]) continue;
            if (arena + at != lists[c]) memmove(arena + at, lists[c], sizeof(uint32_t) * counts[c]);
            stack[top++] = (vl_query_entry){w->child[c], (uint32_t)at, counts[c]};
            at += counts[c];
        }
    }
    return VL_OK;
}
