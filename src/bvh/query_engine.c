/* Depth-first move-to-front traversal of the 4-wide tree for any query kind (see query_engine.h). */
#include <string.h>

#include "bvh/query_engine.h"

/* Pending items of a walk: at most 3 siblings wait per level of a tree at most
 * VL_BVH_MAX_DEPTH deep, and 4 below the deepest node. */
#define VL_QUERY_STACK (3 * VL_BVH_MAX_DEPTH + 8)

/* The interleaved walks; a pending item is node4 << 3 (a subtree) or parent << 3 | lane + 1 (a
 * leaf, tested a step after it is found, its memory asked for meanwhile): node4 indices stay
 * under 2^29 (a node4 takes 128 bytes). */
typedef struct vl_query_walks {
    uint32_t live; /* walks in slots [0, live) */
    uint32_t id[VL_QUERY_WALKS], top[VL_QUERY_WALKS];
    uint32_t stack[VL_QUERY_WALKS][VL_QUERY_STACK];
} vl_query_walks;

/* One step of walk j: its top item tested; returns the status of a leaf test. */
static inline vl_status walk_step(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                                  vl_query_walks* q, uint32_t j) {
    const uint32_t item = q->stack[j][--q->top[j]], lane = item & 7u;
    const vl_bvh_node4* w = &bvh->wide[item >> 3];
    if (lane) return kind->leaf_test(ctx, bvh, records, &q->id[j], 1, w, lane - 1);
    uint32_t bits = kind->node_test1(records + kind->record_floats * (size_t)q->id[j], w);
    for (int c = 3; c >= 0; c--) { /* pushed last to first: lane 0 pops first */
        if (!(bits >> c & 1u)) continue;
        vl_bvh_prefetch_child(bvh, w->child[c], w->count[c], kind->leaf_rows);
        q->stack[j][q->top[j]++] = w->count[c] ? (item & ~7u) | (uint32_t)(c + 1) : w->child[c] << 3;
    }
    return VL_OK;
}

/* Every live walk one step; finished walks leave their slot. */
static vl_status walks_round(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                             vl_query_walks* q) {
    for (uint32_t j = 0; j < q->live;) {
        vl_status st = walk_step(bvh, kind, ctx, records, q, j);
        if (st != VL_OK) return st;
        if (q->top[j]) {
            j++;
            continue;
        }
        q->live--;
        q->id[j] = q->id[q->live], q->top[j] = q->top[q->live];
        memcpy(q->stack[j], q->stack[q->live], sizeof(uint32_t) * q->top[j]);
    }
    return VL_OK;
}

/* Starts query id's walk from node4 `node`, stepping the others while every slot is taken. */
static vl_status walks_add(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records, vl_query_walks* q,
                           uint32_t id, uint32_t node) {
    while (q->live == VL_QUERY_WALKS) {
        vl_status st = walks_round(bvh, kind, ctx, records, q);
        if (st != VL_OK) return st;
    }
    q->id[q->live] = id, q->top[q->live] = 1, q->stack[q->live][0] = node << 3;
    q->live++;
    return VL_OK;
}

/* Runs every started walk to its end. */
static vl_status walks_drain(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                             vl_query_walks* q) {
    while (q->live) {
        vl_status st = walks_round(bvh, kind, ctx, records, q);
        if (st != VL_OK) return st;
    }
    return VL_OK;
}

vl_status vl_query_single_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records, uint32_t id,
                              uint32_t node) {
    vl_query_walks q;
    q.live = 0;
    vl_status st = walks_add(bvh, kind, ctx, records, &q, id, node);
    return st != VL_OK ? st : walks_drain(bvh, kind, ctx, records, &q);
}

/* A node4 or a leaf and the queries that reached it: arena[at, at + n). */
typedef struct vl_query_entry {
    uint32_t node; /* node4 index; for a leaf, its parent's */
    uint32_t lane; /* 0: a node4; else a leaf, lane + 1 of its parent */
    uint32_t at, n;
} vl_query_entry;

/* The queries ids[0, n) go on one by one from node4 `node`. */
static vl_status one_by_one(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                            vl_query_walks* q, const uint32_t* ids, uint32_t n, uint32_t node) {
    for (uint32_t k = 0; k < n; k++) {
        vl_status st = walks_add(bvh, kind, ctx, records, q, ids[k], node);
        if (st != VL_OK) return st;
    }
    return VL_OK;
}

/* The arena is a stack of lists: the entry on top of the entry stack owns the arena's top list,
 * so that popping an entry frees everything above its list. A node4's children's lists go above
 * its own, the child opened first at the top. */
vl_status vl_query_batch_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                             const uint32_t* ids, uint32_t n, uint32_t* arena, size_t arena_entries) {
    vl_query_walks walks;
    walks.live = 0;
    if (n <= VL_QUERY_REMNANT || n > arena_entries) {
        vl_status st = one_by_one(bvh, kind, ctx, records, &walks, ids, n, 0);
        return st != VL_OK ? st : walks_drain(bvh, kind, ctx, records, &walks);
    }
    if (ids != arena) memmove(arena, ids, sizeof(uint32_t) * n);
    vl_query_entry stack[VL_QUERY_STACK];
    uint32_t top = 0;
    stack[top++] = (vl_query_entry){0, 0, 0, n};
    while (top) {
        const vl_query_entry e = stack[--top];
        const uint32_t* list = arena + e.at;
        const vl_bvh_node4* w = &bvh->wide[e.node];
        vl_status st = VL_OK;
        if (e.lane) {
            st = kind->leaf_test(ctx, bvh, records, list, e.n, w, e.lane - 1);
        } else if (e.n <= VL_QUERY_REMNANT) {
            st = one_by_one(bvh, kind, ctx, records, &walks, list, e.n, e.node);
        } else {
            /* the children each query may reach, as bits, in the arena's last words */
            const size_t free_words = arena_entries - (e.at + e.n), mask_words = (e.n + 3) / 4;
            uint32_t counts[4] = {0, 0, 0, 0};
            uint8_t* masks = (uint8_t*)(arena + arena_entries - mask_words);
            if (mask_words <= free_words) {
                kind->node_test(records, list, e.n, w, masks);
                for (uint32_t k = 0; k < e.n; k++)
                    for (int c = 0; c < 4; c++) counts[c] += masks[k] >> c & 1u;
            }
            if (mask_words > free_words ||
                (size_t)counts[0] + counts[1] + counts[2] + counts[3] + mask_words > free_words) {
                st = one_by_one(bvh, kind, ctx, records, &walks, list, e.n, e.node); /* no room */
            } else {
                uint32_t* lists[4];
                uint32_t at = e.at + e.n;
                for (uint32_t c = 4; c-- > 0;) { /* lane 0 opened first, on top */
                    lists[c] = arena + at;
                    if (!counts[c]) continue;
                    vl_bvh_prefetch_child(bvh, w->child[c], w->count[c], kind->leaf_rows);
                    stack[top++] = (vl_query_entry){w->count[c] ? e.node : w->child[c], w->count[c] ? c + 1 : 0, at,
                                                    counts[c]};
                    at += counts[c];
                }
                for (uint32_t k = 0; k < e.n; k++)
                    for (uint32_t m = masks[k]; m; m &= m - 1) *lists[__builtin_ctz(m)]++ = list[k];
            }
        }
        if (st != VL_OK) return st;
    }
    return walks_drain(bvh, kind, ctx, records, &walks);
}
