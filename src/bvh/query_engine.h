/* The generic query batch engine: move-to-front traversal of the 4-wide tree for any query kind
 * (box and sphere overlaps).
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
 *   node_test1  one query against the 4 children, SIMD across children: bit c = may reach child c;
 *               a query must get the same answer from both forms;
 *   leaf_rows   how many of a triangle leaf's rows, from its first, leaf_test reads (the lines
 *               prefetched ahead of it).
 * The engine takes the batch down the tree depth first: at a node4, node_test runs once for the
 * node's list of queries, the survivors of each child move into that child's list (packed above
 * the node's list in the arena) and the children are opened in slot order, each with only its
 * list. The queries of a list of VL_QUERY_REMNANT or fewer, or of one that finds no room in the
 * arena, leave the batch and go on alone from its node as single-query walks interleaved
 * VL_QUERY_WALKS at a time, a step each in turn, so that one walk's node and leaf
 * fetches land while the others work. The engine never writes the tree, so any number of threads
 * may run it on one tree. */
#ifndef VL_BVH_QUERY_ENGINE_H
#define VL_BVH_QUERY_ENGINE_H

#include "bvh/bvh_internal.h"

/* Lists of this many queries or fewer leave the batch and go on alone. */
#define VL_QUERY_REMNANT 2u

/* Single-query walks interleaved at most. */
#define VL_QUERY_WALKS 8

typedef struct vl_query_kind {
    uint32_t record_floats;
    void (*node_test)(const float* records, const uint32_t* ids, uint32_t n, const vl_bvh_node4* node,
                      uint8_t* masks);
    uint32_t (*node_test1)(const float* record, const vl_bvh_node4* node);
    vl_status (*leaf_test)(void* ctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                           const vl_bvh_node4* parent, uint32_t lane);
    uint32_t leaf_rows;
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

/* Runs the n queries of ids (copied to the arena's start; ids may be the arena itself) through
 * the tree. arena: arena_entries uint32_t. */
vl_status vl_query_batch_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                             const uint32_t* ids, uint32_t n, uint32_t* arena, size_t arena_entries);

/* Runs query id alone from the children of node4 `node` (0: the root): the engine's walk with one
 * slot. No scratch. */
vl_status vl_query_single_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records, uint32_t id,
                              uint32_t node);

#endif
