/* VL_BROADPHASE_TREE: the resting objects in a 4-wide tree that only the moving objects query,
 * each of those remembering what it found (tree.c: the operations, the tree's upkeep, the commit
 * and the checks; tree_find.c: the pairs of the moving objects).
 *
 * An object moves at a commit when it was added, updated or removed since the last one; it rests
 * otherwise. A commit finds only the pairs with a moving end: the moving objects pruned among
 * themselves, against the resting objects not in the tree yet (`extra`), and against the tree
 * through their fat boxes; the pairs of two resting objects stay as the last commit left them.
 * A moving object's fat box is its box grown by a margin that follows its last displacement and
 * its size; the tree's objects that overlap it (its candidates, with their boxes) are kept from
 * commit to commit, so only an object whose box leaves its fat box queries the tree again, all of
 * those in one batch. A candidate counts while it is still in the tree (`VL_TB_IN_TREE`: an object
 * that moves leaves the tree and never comes back until the tree is built again), so every answer
 * is exact. Objects that come to rest wait in `extra` until it and the tree's departed objects pass
 * a share of the tree, which is then built again (a new epoch: every candidate set is stale). */
#ifndef VL_BROADPHASE_TREE_TREE_H
#define VL_BROADPHASE_TREE_TREE_H

#include <volley/bvh.h>

#include "box_prune/box_prune.h"
#include "broadphase/broadphase.h"
#include "broadphase/sorted_pairs.h"

/* Per slot (cls); VL_PRUNE_MOVED (listed in `moved`) and VL_PRUNE_STATIC are box pruning's bits. */
enum { VL_TB_IN_TREE = 4u, VL_TB_EXTRA = 8u, VL_TB_AWAKE = 16u };

/* The tree is built again when `extra` and the objects that left the tree pass 1 / VL_TB_REBUILD_SHARE
 * of its objects plus VL_TB_REBUILD_MIN. */
#define VL_TB_REBUILD_SHARE 16u
#define VL_TB_REBUILD_MIN 64u

/* A fat box is the box grown on each axis by min(VL_TB_MOTION_MARGIN x the centre's displacement
 * since the last commit, VL_TB_MOTION_CAP x the largest extent) + the largest extent /
 * VL_TB_SIZE_MARGIN. */
#define VL_TB_MOTION_MARGIN 6.0f
#define VL_TB_MOTION_CAP 12.0f
#define VL_TB_SIZE_MARGIN 4.0f

/* cand is packed when the sets left behind in it pass its live ones plus this many. */
#define VL_TB_CAND_SLACK 4096u

/* A moving object of the last commit. */
typedef struct vl_tb_awake {
    vl_aabb fat;  /* the box its candidates were found with */
    vl_aabb last; /* its box at the last commit */
    uint32_t slot;
    uint32_t first, count; /* its candidates in cand */
    uint32_t epoch;        /* the tree's epoch of its candidates; 0: none */
    uint32_t departures;   /* t->departures when they were found: while it holds, all are in the tree */
} vl_tb_awake;

typedef struct vl_tb_cand {
    vl_aabb box;
    uint32_t slot;
} vl_tb_cand;

typedef struct vl_tbp {
    /* the resting objects */
    vl_bvh* tree;
    uint32_t* tree_slot; /* the slot of each primitive of the tree */
    uint32_t tree_slot_cap, tree_count;
    uint32_t* extra; /* resting objects outside the tree; may list slots that moved or died since */
    uint32_t extra_cap, extra_count;
    uint32_t departed; /* primitives of the tree whose objects moved or died since it was built */
    uint32_t departures; /* counts every departure from the tree, never reset */
    uint32_t epoch;    /* steps at each build */
    /* per slot */
    uint8_t* cls;
    uint32_t* awake_at; /* the index in awake of a slot with VL_TB_AWAKE */
    uint32_t cls_cap, awake_at_cap;
    uint32_t* moved; /* the slots with VL_PRUNE_MOVED, once each */
    uint32_t moved_cap, moved_count;
    /* the moving objects of the last commit (of the commit being made, from its start) */
    vl_tb_awake* awake;
    uint32_t awake_cap, awake_count;
    vl_tb_cand* cand; /* the candidate sets, and sets left behind by renewals */
    vl_tb_cand* cand_next;
    uint32_t cand_cap, cand_next_cap, cand_count;
    /* commit scratch */
    uint32_t* ids;
    uint8_t* holds; /* per moving object: its candidate set still answers */
    uint32_t ids_cap, holds_cap;
    vl_aabb* query; /* the fat boxes of the objects that query the tree */
    uint32_t* query_of;
    uint32_t* query_first; /* per query: where its candidates start in cand, then their count */
    uint32_t query_cap, query_of_cap, query_first_cap;
    uint8_t* scratch; /* the tree queries' scratch */
    uint32_t scratch_cap;
    vl_pair_buffer hits; /* (query, primitive) */
    vl_prune_set set_moving, set_extra;
    vl_prune_scratch prune_scratch;
    vl_pair_buffer cur, next, found; /* the last commit's pairs (sorted), the next's, those with a moving end */
    vl_bp_pair_sort sort;
} vl_tbp;

/* The pairs with a moving end into t->found (unsorted, as (low, high)): the moving objects
 * (awake) among themselves, against `extra`, and against the tree through their fat boxes (whose
 * candidate sets it renews where the box left them). */
vl_status vl_tbp_find_pairs(vl_tbp* t, const vl_bp_objects* o, vl_context* ctx);

#endif
