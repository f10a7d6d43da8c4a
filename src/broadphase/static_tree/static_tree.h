/* VL_BROADPHASE_STATIC_TREE: the statics in a 4-wide tree, queried only by the dynamic objects,
 * which remember what they found (static_tree.c: the operations and the commit;
 * static_tree_find.c: the pairs of a commit).
 *
 * A dynamic object finds its statics through a fat box: its box grown by a margin that follows its
 * last displacement and its size. The statics overlapping the fat box (its candidates, with their
 * boxes) are kept from commit to commit; while the object's box stays inside the fat box, its pairs
 * with statics are its candidates that its box overlaps, so only objects that leave their fat box
 * query the tree again, all in one batch. Every candidate set is exact for its fat box, so every
 * answer is exact. Statics added or moved after the tree was built wait in `extra`, pruned against
 * the dynamic objects at each commit, until they pass a share of the tree and the tree is built
 * again; a static moved or removed from the tree makes every candidate set stale (the epoch). */
#ifndef VL_BROADPHASE_STATIC_TREE_STATIC_TREE_H
#define VL_BROADPHASE_STATIC_TREE_STATIC_TREE_H

#include <volley/bvh.h>

#include "box_prune/box_prune.h"
#include "broadphase/broadphase.h"
#include "broadphase/sorted_pairs.h"

/* Per slot (cls). */
enum { VL_ST_IN_TREE = 1u, VL_ST_EXTRA = 2u };

/* The tree is built again when the statics outside it (extra) and the tree's stale primitives pass
 * 1 / VL_ST_REBUILD_SHARE of its primitives plus VL_ST_REBUILD_MIN. */
#define VL_ST_REBUILD_SHARE 16u
#define VL_ST_REBUILD_MIN 64u

/* A fat box is the box grown on each axis by VL_ST_MOTION_MARGIN times the centre's displacement
 * since the last commit plus the box's largest extent / VL_ST_SIZE_MARGIN. */
#define VL_ST_MOTION_MARGIN 6.0f
#define VL_ST_SIZE_MARGIN 4.0f
/* cand is packed when its sets left behind pass its live ones plus this many */
#define VL_ST_CAND_SLACK 4096u
#define VL_ST_MOTION_CAP 12.0f

typedef struct vl_st_dyn {
    vl_aabb fat;    /* the box its candidates were found with */
    vl_aabb last;   /* its box at the last commit */
    uint32_t slot;
    uint32_t first, count; /* its candidates in cand */
    uint32_t epoch;        /* the statics' epoch of its candidates; 0: none */
} vl_st_dyn;

typedef struct vl_st_cand {
    vl_aabb box;
    uint32_t slot;
} vl_st_cand;

typedef struct vl_st {
    /* the statics */
    vl_bvh* tree;
    uint32_t* tree_slot; /* the slot of each primitive of the tree */
    uint32_t tree_slot_cap, tree_count;
    uint32_t* extra; /* statics outside the tree; may list slots that died or became dynamic */
    uint32_t extra_cap, extra_count;
    uint32_t stale; /* primitives of the tree that no longer stand for their slot's box */
    uint32_t epoch; /* steps whenever a primitive of the tree goes stale or the tree is built */
    /* per slot */
    uint8_t* cls;
    uint32_t* dyn_at; /* the index in dyn of a dynamic slot */
    uint32_t cls_cap, dyn_at_cap;
    /* the dynamic objects, dense */
    vl_st_dyn* dyn;
    uint32_t dyn_cap, dyn_count;
    vl_st_cand* cand; /* the candidate sets, and sets left behind by renewals */
    vl_st_cand* cand_next;
    uint32_t cand_cap, cand_next_cap, cand_count;
    int changed; /* an add, update or remove since the last commit */
    /* commit scratch */
    uint32_t* ids;
    uint8_t* holds; /* per dynamic object: its candidate set still answers */
    uint32_t ids_cap, holds_cap;
    vl_aabb* query; /* the fat boxes of the objects that query the tree */
    uint32_t* query_dyn;
    uint32_t* query_first; /* per query: where its candidates start in cand_next, then their count */
    uint32_t query_cap, query_dyn_cap, query_first_cap;
    uint8_t* scratch; /* the tree queries' scratch */
    uint32_t scratch_cap;
    vl_pair_buffer hits; /* (query, primitive) */
    vl_prune_set set_dyn, set_extra;
    vl_prune_scratch prune_scratch;
    vl_pair_buffer cur, next; /* the pairs of the last commit, sorted by (a, b); those of the next */
    vl_bp_pair_sort sort;
} vl_st;

/* Brings the tree up to the statics when too many lie outside it (built over every alive static
 * then); the statics outside it listed in st->extra, compacted. On failure the tree is as it was. */
vl_status vl_st_statics(vl_st* st, const vl_bp_objects* o, vl_context* ctx);

/* Every pair of the commit into st->next (unsorted, as (low, high)): the dynamic objects
 * among themselves, against the statics outside the tree, and against the tree through their fat
 * boxes (whose candidate sets it renews where the box left them). */
vl_status vl_st_find_pairs(vl_st* st, const vl_bp_objects* o, vl_context* ctx);

#endif
