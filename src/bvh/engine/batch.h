/* The query batch engine: move-to-front traversal of the 4-wide tree for any query kind (box and
 * sphere overlaps), always inlined so that each kind's entry points get their own copy with the
 * kind's tests called directly (see engine/walks.h).
 *
 * A kind plugs in its functions over its own query records (record_floats floats per query,
 * 16-byte aligned, at records + record_floats * id; the kind decides what they hold and may
 * rewrite them):
 *   node_test   the queries ids[0..n) against the 4 children of a node4, SIMD across queries:
 *               masks[i] bit c set when query ids[i] may reach child c (never for an empty
 *               child, child[c] == VL_BVH_EMPTY);
 *   leaf_test   the queries ids[0..n) against the leaf in lane `lane` of node4 `parent`: its
 *               parent->count[lane] primitives from slot first = parent->child[lane] (rows
 *               vl_bvh_leaf_rows(bvh, first), or bvh->boxes + first), inside the lane's box;
 *               answers go through ctx; a status other than VL_OK stops the traversal and is
 *               returned;
 *   walk        the unkeyed walk kind (engine/walks.h) of one query, on the same ctx: its node test
 *               SIMD across children, with the same answers as node_test, and leaf_rows, the
 *               rows of a triangle leaf that leaf_test reads (the lines prefetched ahead of it).
 * The engine takes the batch down the tree depth first: at a node4, node_test runs once for the
 * node's list of queries, the survivors of each child move into that child's list (packed above
 * the node's list in the arena) and the children are opened in slot order, each with only its
 * list. The queries of a list of VL_QUERY_REMNANT or fewer, or of one that finds no room in the
 * arena, leave the batch and go on alone from its node as walks interleaved VL_QUERY_WALKS at a
 * time.
 * The engine never writes the tree, so any number of threads may run it on one tree. */
#ifndef VL_BVH_ENGINE_BATCH_H
#define VL_BVH_ENGINE_BATCH_H

#include "bvh/engine/walks.h"
#include "compiler.h"

/* Lists of this many queries or fewer leave the batch and go on alone. */
#define VL_QUERY_REMNANT 2u

/* Entries waiting in the batch: at most 3 siblings per level, and 4 below the deepest node. */
#define VL_QUERY_STACK (3u * VL_BVH_MAX_DEPTH + 8u)

typedef struct vl_query_kind {
    uint32_t record_floats;
    void (*node_test)(const float* records, const uint32_t* ids, uint32_t n, const vl_bvh_node4* node,
                      uint8_t* masks);
    vl_status (*leaf_test)(void* ctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                           const vl_bvh_node4* parent, uint32_t lane);
    vl_query_walk_kind walk;
} vl_query_kind;

/* Children with a subtree or a leaf behind them. */
static inline uint32_t vl_query_live_children(const vl_bvh_node4* w) {
    uint32_t bits = 0;
    for (int c = 0; c < 4; c++) bits |= (uint32_t)(w->child[c] != VL_BVH_EMPTY) << c;
    return bits;
}

/* node_test's masks of queries [i, i + 4) from per-child query bits (bits[c] bit j: query
 * i + j reaches child c). */
static inline void vl_query_put_masks(uint8_t* masks, uint32_t n, uint32_t i, const uint32_t bits[4]) {
    for (uint32_t j = 0; j < 4 && i + j < n; j++)
        masks[i + j] = (uint8_t)((bits[0] >> j & 1u) | (bits[1] >> j & 1u) << 1 | (bits[2] >> j & 1u) << 2 |
                                 (bits[3] >> j & 1u) << 3);
}

/* Arena entries a batch of n queries should have: its first list and room for the lists below
 * (smaller arenas work, with more queries going on one by one). */
static inline size_t vl_query_arena_entries(uint32_t n) { return 16 * (size_t)n + 256; }

/* A node4 or a leaf and the queries that reached it: arena[at, at + n). */
typedef struct vl_query_entry {
    uint32_t node; /* node4 index; for a leaf, its parent's */
    uint32_t lane; /* 0: a node4; else a leaf, lane + 1 of its parent */
    uint32_t at, n;
} vl_query_entry;

/* The queries ids[0, n) go on one by one from node4 `node`. */
VL_INLINE vl_status vl_query_one_by_one(const vl_query_kind* kind, void* ctx, const vl_bvh* bvh, vl_query_walks* walks,
                                        const uint32_t* ids, uint32_t n, uint32_t node) {
    for (uint32_t k = 0; k < n; k++) {
        vl_status st = vl_query_walks_add(&kind->walk, ctx, bvh, walks, ids[k], node);
        if (st != VL_OK) return st;
    }
    return VL_OK;
}

/* Runs the n queries of ids (copied to the arena's start; ids may be the arena itself) through
 * the tree. arena: arena_entries uint32_t. The arena is a stack of lists: the entry on top of the
 * entry stack owns the arena's top list, so that popping an entry frees everything above its
 * list. A node4's children's lists go above its own, the child opened first at the top. */
VL_INLINE vl_status vl_query_batch_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                                       const uint32_t* ids, uint32_t n, uint32_t* arena, size_t arena_entries) {
    vl_query_walk walk[VL_QUERY_WALKS];
    vl_query_walks walks = vl_query_walks_make(walk, VL_QUERY_WALKS);
    if (n <= VL_QUERY_REMNANT || n > arena_entries) {
        vl_status st = vl_query_one_by_one(kind, ctx, bvh, &walks, ids, n, 0);
        return st != VL_OK ? st : vl_query_walks_drain(&kind->walk, ctx, bvh, &walks);
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
            st = vl_query_one_by_one(kind, ctx, bvh, &walks, list, e.n, e.node);
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
                st = vl_query_one_by_one(kind, ctx, bvh, &walks, list, e.n, e.node); /* no room */
            } else {
                uint32_t* lists[4];
                uint32_t at = e.at + e.n;
                for (uint32_t c = 4; c-- > 0;) { /* lane 0 opened first, on top */
                    lists[c] = arena + at;
                    if (!counts[c]) continue;
                    vl_bvh_prefetch_child(bvh, w->child[c], w->count[c], kind->walk.leaf_rows);
                    stack[top++] = (vl_query_entry){w->count[c] ? e.node : w->child[c], w->count[c] ? c + 1 : 0, at,
                                                    counts[c]};
                    at += counts[c];
                }
                for (uint32_t k = 0; k < e.n; k++)
                    for (uint32_t m = masks[k]; m; m &= m - 1) *lists[vl_ctz32(m)]++ = list[k];
            }
        }
        if (st != VL_OK) return st;
    }
    return vl_query_walks_drain(&kind->walk, ctx, bvh, &walks);
}

/* Runs query id alone from the root: one walk. No scratch. */
VL_INLINE vl_status vl_query_single_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, uint32_t id) {
    vl_query_walk walk;
    vl_query_walks walks = vl_query_walks_make(&walk, 1);
    vl_status st = vl_query_walks_add(&kind->walk, ctx, bvh, &walks, id, 0);
    return st != VL_OK ? st : vl_query_walks_drain(&kind->walk, ctx, bvh, &walks);
}

#endif
