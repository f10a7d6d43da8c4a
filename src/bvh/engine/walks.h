/* Interleaved single-query walks down the 4-wide tree, for any query kind: the overlaps' walks
 * (the queries that leave the batch engine's lists, and the single-query calls) and the sweeps'.
 *
 * Up to `slots` walks run at once, a step each in turn (one node test, its children hit
 * prefetched and pushed, or one leaf test), so that the fetches one walk asks for land while the
 * others work. A walk that ends leaves its slot to the last one; a walk added while every slot
 * is taken waits for rounds of steps to free one.
 *
 * A kind plugs in at compile time: the code below is always inlined, and each kind's entry points
 * call it with a pointer to a `static const vl_query_walk_kind`, so that the compiler calls (or
 * inlines) the kind's tests directly. The kind keeps any per-walk state of its own by slot in
 * ctx (start, move); a keyed kind gives each child an entry key: children are pushed so that the
 * nearest pops first (a later child above an equal key), and an item whose key is past the walk's
 * limit is dropped when it pops; a walk whose limit falls below 0 is over. An unkeyed kind's
 * children pop in slot order. The walks never write the tree. */
#ifndef VL_BVH_ENGINE_WALKS_H
#define VL_BVH_ENGINE_WALKS_H

#include "bvh/tree/tree.h"
#include "compiler.h"
#include "simd/simd.h"
#include "simd/walk_kernels.h"

/* Walks interleaved by the batches. */
#define VL_QUERY_WALKS 8u

/* Pending items of a walk: at most 3 siblings wait per level of a tree at most
 * VL_BVH_MAX_DEPTH deep, and 4 below the deepest node. */
#define VL_QUERY_WALK_STACK (3u * VL_BVH_MAX_DEPTH + 8u)

/* A pending item: node4 << 3 (a subtree) or parent << 3 | lane + 1 (a leaf, tested a step after
 * it is found, its memory asked for meanwhile; node4 indices stay under 2^29), and its entry key. */
typedef struct vl_query_walk_item {
    uint32_t ref;
    float key;
} vl_query_walk_item;

typedef struct vl_query_walk {
    uint32_t id, top;
    vl_query_walk_item item[VL_QUERY_WALK_STACK];
} vl_query_walk;

/* The walks in slots [0, live) of walk[0, slots). */
typedef struct vl_query_walks {
    uint32_t live, slots;
    vl_query_walk* walk;
} vl_query_walks;

typedef struct vl_query_walk_kind {
    int keyed;
    /* How many of a triangle leaf's rows, from its first, the leaf test reads: the lines
     * prefetched ahead of it. */
    uint32_t leaf_rows;
    /* Optional: the state of query id's walk made in slot `slot`; walk `from`'s state moved to `to`. */
    void (*start)(void* ctx, uint32_t slot, uint32_t id);
    void (*move)(void* ctx, uint32_t to, uint32_t from);
    /* The walk against the 4 children of node4 w: bit c set when it may reach child c (never an
     * empty child); a keyed kind writes each such child's key to keys[c]. */
    uint32_t (*node)(void* ctx, uint32_t slot, uint32_t id, const vl_bvh_node4* w, float keys[4]);
    /* The walk against the leaf in lane `lane` of node4 parent; a status other than VL_OK stops
     * every walk and is returned. */
    vl_status (*leaf)(void* ctx, const vl_bvh* bvh, uint32_t slot, uint32_t id, const vl_bvh_node4* parent,
                      uint32_t lane);
    /* A keyed kind's limit for the walk in slot `slot`. */
    float (*limit)(void* ctx, uint32_t slot);
} vl_query_walk_kind;

static inline vl_query_walks vl_query_walks_make(vl_query_walk* walk, uint32_t slots) {
    return (vl_query_walks){0, slots, walk};
}

/* Children of w pushed onto walk k, their memory asked for. */
VL_INLINE void vl_query_walk_push(const vl_query_walk_kind* kind, const vl_bvh* bvh, vl_query_walk* k, uint32_t node,
                                  const vl_bvh_node4* w, uint32_t bits, const float keys[4]) {
    if (kind->keyed) {
        /* each child's place above the stack's top, without a branch on the keys */
        uint32_t at[4];
        vl_k4_stack_places(keys, bits, at);
        const uint32_t base = k->top;
        k->top += vl_popcount32(bits);
        for (; bits; bits &= bits - 1) {
            const uint32_t c = vl_ctz32(bits);
            k->item[base + at[c]] = (vl_query_walk_item){w->count[c] ? node << 3 | (c + 1) : w->child[c] << 3, keys[c]};
            vl_bvh_prefetch_child(bvh, w->child[c], w->count[c], kind->leaf_rows);
        }
        return;
    }
    for (uint32_t c = 4; c-- > 0;) { /* pushed last to first: lane 0 pops first */
        if (!(bits >> c & 1u)) continue;
        vl_bvh_prefetch_child(bvh, w->child[c], w->count[c], kind->leaf_rows);
        k->item[k->top++] = (vl_query_walk_item){w->count[c] ? node << 3 | (c + 1) : w->child[c] << 3, 0.0f};
    }
}

/* One step of the walk in slot j: its top item. */
VL_INLINE vl_status vl_query_walk_step(const vl_query_walk_kind* kind, void* ctx, const vl_bvh* bvh, vl_query_walks* q,
                                       uint32_t j) {
    vl_query_walk* k = &q->walk[j];
    const vl_query_walk_item it = k->item[--k->top];
    if (kind->keyed && !(it.key <= kind->limit(ctx, j))) return VL_OK;
    const uint32_t node = it.ref >> 3, lane = it.ref & 7u;
    const vl_bvh_node4* w = &bvh->wide[node];
    if (lane) {
        vl_status st = kind->leaf(ctx, bvh, j, k->id, w, lane - 1);
        if (kind->keyed && kind->limit(ctx, j) < 0.0f) k->top = 0;
        return st;
    }
    float keys[4];
    uint32_t bits = kind->node(ctx, j, k->id, w, keys);
    vl_query_walk_push(kind, bvh, k, node, w, bits, keys);
    return VL_OK;
}

/* Every live walk one step; finished walks leave their slot to the last one. */
VL_INLINE vl_status vl_query_walks_round(const vl_query_walk_kind* kind, void* ctx, const vl_bvh* bvh,
                                         vl_query_walks* q) {
    for (uint32_t j = 0; j < q->live;) {
        vl_status st = vl_query_walk_step(kind, ctx, bvh, q, j);
        if (st != VL_OK) return st;
        if (q->walk[j].top) {
            j++;
            continue;
        }
        if (j != --q->live) {
            vl_query_walk *to = &q->walk[j], *from = &q->walk[q->live];
            to->id = from->id, to->top = from->top;
            memcpy(to->item, from->item, sizeof(vl_query_walk_item) * from->top);
            if (kind->move) kind->move(ctx, j, q->live);
        }
    }
    return VL_OK;
}

/* Starts query id's walk from node4 `node`, stepping the others while every slot is taken. */
VL_INLINE vl_status vl_query_walks_add(const vl_query_walk_kind* kind, void* ctx, const vl_bvh* bvh, vl_query_walks* q,
                                       uint32_t id, uint32_t node) {
    while (q->live == q->slots) {
        vl_status st = vl_query_walks_round(kind, ctx, bvh, q);
        if (st != VL_OK) return st;
    }
    vl_query_walk* k = &q->walk[q->live];
    k->id = id, k->top = 1, k->item[0] = (vl_query_walk_item){node << 3, 0.0f};
    if (kind->start) kind->start(ctx, q->live, id);
    q->live++;
    return VL_OK;
}

/* Runs every started walk to its end. */
VL_INLINE vl_status vl_query_walks_drain(const vl_query_walk_kind* kind, void* ctx, const vl_bvh* bvh,
                                         vl_query_walks* q) {
    while (q->live) {
        vl_status st = vl_query_walks_round(kind, ctx, bvh, q);
        if (st != VL_OK) return st;
    }
    return VL_OK;
}

#endif
