/* The generic query batch engine: move-to-front traversal of the 4-wide tree for any query kind.
 *
 * A kind plugs in three functions over its own query records (VL_QUERY_RECORD_FLOATS floats per
 * query, 32-byte aligned, at records + VL_QUERY_RECORD_FLOATS * id; the kind decides what they
 * hold and may rewrite them, e.g. to shrink a sweep's tmax as hits land):
 *   node_test   the queries ids[0..n) against the 4 children of a node4, SIMD across queries:
 *               masks[i] bit c set when query ids[i] may reach child c (never for an empty
 *               child, child[c] == VL_BVH_EMPTY);
 *   node_test1  one query against the 4 children, SIMD across children: bit c = may reach child c;
 *               a query must get the same answer from both forms;
 *   leaf_test   the queries ids[0..n) against the leaf in lane `lane` of node4 `parent`: its
 *               parent->count[lane] primitives from slot first = parent->child[lane] (rows
 *               vl_bvh_leaf_rows(bvh, first), or bvh->boxes + first), inside the lane's box;
 *               answers go through ctx; a status other than VL_OK stops the traversal and is
 *               returned.
 * The engine takes the batch down the tree a level at a time: node_test runs at every node4 the
 * batch reaches, with the ids that reached it; the survivors of each child move into that child's
 * list (packed at the front of the next level's stretch of the arena) and only they descend; the
 * leaves a level reaches get leaf_test once the level's nodes are done. When the arena is too
 * small for a node's lists, the queries there go on one by one (node_test1), with the same
 * answers. The engine never writes the tree, so any number of threads may run it on one tree. */
#ifndef VL_BVH_QUERY_ENGINE_H
#define VL_BVH_QUERY_ENGINE_H

#include "bvh/bvh_internal.h"

#define VL_QUERY_RECORD_FLOATS 8u

typedef struct vl_query_kind {
    void (*node_test)(const float* records, const uint32_t* ids, uint32_t n, const vl_bvh_node4* node,
                      uint8_t* masks);
    uint32_t (*node_test1)(const float* record, const vl_bvh_node4* node);
    vl_status (*leaf_test)(void* ctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                           const vl_bvh_node4* parent, uint32_t lane);
} vl_query_kind;

/* Arena entries a batch of n queries should have: its first list and room for the lists below
 * (smaller arenas work, with more queries going on one by one). */
static inline size_t vl_query_arena_entries(uint32_t n) { return 32 * (size_t)n + 256; }

/* Runs the n queries of ids (copied to the arena's start; ids may be the arena itself) through
 * the tree. arena: arena_entries (at least n + 4) uint32_t. */
vl_status vl_query_batch_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records,
                             const uint32_t* ids, uint32_t n, uint32_t* arena, size_t arena_entries);

/* Runs query id alone from node4 `node` (0: the root). No scratch. */
vl_status vl_query_single_run(const vl_bvh* bvh, const vl_query_kind* kind, void* ctx, float* records, uint32_t id,
                              uint32_t node);

#endif
