/* Move-to-front traversal of the 4-wide tree for any query kind (see query_engine.h). */
#include <string.h>

#include "bvh/query_engine.h"

/* Asks for a child's memory ahead of its test: a node4 (2 lines), or a leaf's triangle rows or
 * boxes (whole, up to 8 lines). */
static inline void prefetch_leaf(const vl_bvh* bvh, uint32_t first, uint32_t count) {
    const char* p = bvh->kind == VL_BVH_TRIANGLES ? (const char*)vl_bvh_leaf_rows(bvh, first)
                                                  : (const char*)(bvh->boxes + first);
    size_t bytes = bvh->kind == VL_BVH_TRIANGLES ? sizeof(float) * VL_BVH_TRI_FLOATS * count
                                                 : sizeof(vl_bvh_box) * count;
    if (bytes > 512) bytes = 512;
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
}

static inline void prefetch_child(const vl_bvh* bvh, const vl_bvh_node4* w, int c) {
    if (!w->count[c]) {
        const char* node = (const char*)&bvh->wide[w->child[c]];
        __builtin_prefetch(node), __builtin_prefetch(node + 64);
        return;
    }
    prefetch_leaf(bvh, w->child[c], w->count[c]);
}

/* Pending subtrees of a single query's walk: at most 3 siblings wait per level of a tree at most
 * VL_BVH_MAX_DEPTH deep. */
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
        for (int c = 0; c < 4; c++)
            if (bits >> c & 1u) prefetch_child(bvh, w, c);
        for (int c = 3; c >= 0; c--) { /* pushed last to first: lane 0 pops first */
            if (!(bits >> c & 1u) || w->child[c] == VL_BVH_EMPTY) continue;
            if (w->count[c]) {
                vl_status st = kind->leaf_test(ctx, bvh, records, &id, 1, w, (uint32_t)c);
                if (st != VL_OK) return st;
            } else {
                stack[top++] = w->child[c];
            }
        }
    }
    return VL_OK;
}

/* A node4 or a leaf and the queries that reached it: arena[at, at + n). */
typedef struct vl_query_entry {
    uint32_t node; /* node4 index; for a leaf, its parent's */
    uint32_t lane; /* 0: a node4; else a leaf, lane + 1 of its parent */
    uint32_t at, n;
} vl_query_entry;

/* One half of the arena: lists grow up from its start, entries down from its end. */
typedef struct vl_query_level {
    uint32_t* base;
    size_t size, top; /* list entries used */
    vl_query_entry* entries;
    uint32_t entry_count;
} vl_query_level;

/* Words free between a level's lists and its entries, leaving room for 4 more entries. */
static inline size_t level_free(const vl_query_level* l) {
    size_t used = l->top + sizeof(vl_query_entry) / sizeof(uint32_t) * ((size_t)l->entry_count + 4);
    return used < l->size ? l->size - used : 0;
}

static inline vl_query_entry* level_entry(vl_query_level* l, uint32_t i) {
    return (vl_query_entry*)(l->base + l->size) - 1 - i;
}

/* How far ahead of the sweeps below memory is asked for, in entries. */
enum { AHEAD = 6 };

/* Asks for an entry's node4 (leaves = 0) or leaf rows (leaves = 1). */
static inline void prefetch_entry(const vl_bvh* bvh, const vl_query_entry* e, int leaves) {
    if (leaves && e->lane) {
        const vl_bvh_node4* w = &bvh->wide[e->node];
        prefetch_leaf(bvh, w->child[e->lane - 1], w->count[e->lane - 1]);
    }
    if (!leaves && !e->lane) {
        const char* node = (const char*)&bvh->wide[e->node];
        __builtin_prefetch(node), __builtin_prefetch(node + 64);
    }
}

/* The batch goes down the tree a level at a time: every (node4, list) of a level is tested and
 * writes its children's lists and entries into the other half of the arena; then that level's
 * leaves are tested. Each sweep asks for the memory of the entry a few places ahead, so that
 * many node and leaf fetches are in flight at once (a single query's walk waits on each). */
vl_status vl_query_batch_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                             const uint32_t* ids, uint32_t n, uint32_t* arena, size_t arena_entries) {
    if (n == 0) return VL_OK;
    vl_query_level levels[2];
    const size_t half = (arena_entries / 2) & ~(size_t)3; /* entries stay 16-byte aligned */
    for (int k = 0; k < 2; k++) levels[k].base = arena + k * half, levels[k].size = half;
    vl_query_level* cur = &levels[0];
    if ((size_t)n + sizeof(vl_query_entry) / sizeof(uint32_t) > half) {
        for (uint32_t i = 0; i < n; i++) {
            vl_status st = vl_query_single_run(bvh, kind, ctx, records, ids[i], 0);
            if (st != VL_OK) return st;
        }
        return VL_OK;
    }
    if (ids != cur->base) memmove(cur->base, ids, sizeof(uint32_t) * n);
    cur->top = n, cur->entry_count = 1;
    *level_entry(cur, 0) = (vl_query_entry){0, 0, 0, n};
    while (cur->entry_count) {
        vl_query_level* next = cur == &levels[0] ? &levels[1] : &levels[0];
        next->top = 0, next->entry_count = 0;
        for (uint32_t i = 0; i < AHEAD && i < cur->entry_count; i++) prefetch_entry(bvh, level_entry(cur, i), 0);
        for (uint32_t i = 0; i < cur->entry_count; i++) {
            if (i + AHEAD < cur->entry_count) prefetch_entry(bvh, level_entry(cur, i + AHEAD), 0);
            const vl_query_entry e = *level_entry(cur, i);
            if (e.lane) continue; /* a leaf, tested with its level */
            const vl_bvh_node4* w = &bvh->wide[e.node];
            /* the children each query may reach, as bits, in the free space's last words */
            size_t free_words = level_free(next), mask_words = (e.n + 3) / 4;
            uint8_t* masks = (uint8_t*)(next->base + next->top + free_words - mask_words);
            uint32_t counts[4] = {0, 0, 0, 0};
            if (mask_words <= free_words) {
                kind->node_test(records, cur->base + e.at, e.n, w, masks);
                for (uint32_t k = 0; k < e.n; k++)
                    for (int c = 0; c < 4; c++) counts[c] += masks[k] >> c & 1u;
            }
            if (mask_words > free_words || (size_t)counts[0] + counts[1] + counts[2] + counts[3] + mask_words > free_words) {
                for (uint32_t k = 0; k < e.n; k++) { /* no room: these queries go on one by one */
                    vl_status st = vl_query_single_run(bvh, kind, ctx, records, cur->base[e.at + k], e.node);
                    if (st != VL_OK) return st;
                }
                continue;
            }
            uint32_t* lists[4];
            for (int c = 0; c < 4; c++) {
                lists[c] = next->base + next->top;
                if (counts[c])
                    *level_entry(next, next->entry_count++) =
                        (vl_query_entry){w->count[c] ? e.node : w->child[c], w->count[c] ? (uint32_t)c + 1 : 0,
                                         (uint32_t)next->top, counts[c]};
                next->top += counts[c];
            }
            const uint32_t* ids_here = cur->base + e.at;
            for (uint32_t k = 0; k < e.n; k++)
                for (uint32_t m = masks[k]; m; m &= m - 1) *lists[__builtin_ctz(m)]++ = ids_here[k];
        }
        for (uint32_t i = 0; i < AHEAD && i < next->entry_count; i++) prefetch_entry(bvh, level_entry(next, i), 1);
        for (uint32_t i = 0; i < next->entry_count; i++) {
            if (i + AHEAD < next->entry_count) prefetch_entry(bvh, level_entry(next, i + AHEAD), 1);
            const vl_query_entry* e = level_entry(next, i);
            if (!e->lane) continue;
            vl_status st = kind->leaf_test(ctx, bvh, records, next->base + e->at, e->n, &bvh->wide[e->node], e->lane - 1);
            if (st != VL_OK) return st;
        }
        cur = next;
    }
    return VL_OK;
}
