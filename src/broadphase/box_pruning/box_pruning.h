/* State of VL_BROADPHASE_BOX_PRUNING (box_pruning.c: the operations and the full prune;
 * box_pruning_inc.c: the incremental commit; box_pruning_tasks.c: the sweeps over a context's workers). */
#ifndef VL_BROADPHASE_BOX_PRUNING_BOX_PRUNING_H
#define VL_BROADPHASE_BOX_PRUNING_BOX_PRUNING_H

#include <volley/tasks.h>

#include "box_prune/box_prune.h"
#include "broadphase/broadphase.h"
#include "broadphase/sorted_pairs.h"

typedef struct vl_prune_bp {
    vl_pair_buffer cur, next; /* sorted by (a, b) */
    uint32_t *dyn, *stat;
    uint32_t dyn_cap, stat_cap;
    vl_bp_pair_sort sort;
    vl_prune_set set_dyn, set_stat;
    vl_prune_scratch scratch;
    /* incremental commits */
    uint8_t* cls;        /* per slot: VL_PRUNE_STATIC, VL_PRUNE_MOVED (added, updated or removed) */
    uint32_t* movers;    /* the slots with VL_PRUNE_MOVED, once each */
    uint32_t cls_cap, movers_cap, mover_count;
    vl_prune_set all[2]; /* all[0]: every alive object sorted on one axis, when all_valid */
    int all_valid;
    uint32_t* stale; /* the slots whose entry in all[0] is out of date or missing, with VL_PBP_STALE */
    uint32_t stale_cap, stale_count;
    vl_prune_set set_m;     /* the alive movers */
    vl_prune_set set_fresh; /* the entries merged into all[0] when it is built again */
    vl_pair_buffer found; /* the pairs of movers, (low, high) */
} vl_prune_bp;

/* An incremental commit re-prunes only the movers: used while they are at most 1 / VL_PBP_INC_RATIO
 * of the alive objects. */
#define VL_PBP_INC_RATIO 4u

/* cls bit (besides VL_PRUNE_MOVED and VL_PRUNE_STATIC): the slot is listed in `stale`. */
#define VL_PBP_STALE 4u

/* Clears the movers after a successful commit. */
void vl_pbp_clear_movers(vl_prune_bp* p, const vl_bp_objects* o);

/* The commit by re-pruning the movers only, its sweeps spread over ctx's workers (NULL: on the
 * calling thread); on failure nothing changed. */
vl_status vl_pbp_commit_incremental(vl_prune_bp* p, const vl_bp_objects* o, vl_context* ctx, vl_pair_buffer* created,
                                    vl_pair_buffer* deleted);

/* The pairs of the full prune appended to out as (low, high): dyn among itself, and dyn against
 * stat (NULL: none). With ctx, in ranges over its workers (box_pruning_tasks.c); the pairs are the
 * same, their order is not (the commit sorts them). */
vl_status vl_pbp_sweep_full(vl_context* ctx, const vl_prune_set* dyn, const vl_prune_set* stat, vl_pair_buffer* out);

/* The sweep axis of the full prune over the dynamic and static ids (vl_prune_axis: statistics in
 * pieces, as tasks with ctx; the same axis with or without). */
int vl_pbp_axis(vl_context* ctx, const vl_aabb* boxes, const uint32_t* dyn, uint32_t nd, const uint32_t* stat,
                uint32_t ns);

/* vl_prune_set_build (not presorted), with ctx in pieces over its workers (the same set; the
 * parallel sort's histograms in the context's shared block). */
vl_status vl_pbp_set_build(vl_context* ctx, vl_prune_set* set, vl_prune_scratch* scratch, const vl_aabb* boxes,
                           const uint32_t* ids, uint32_t n, int axis);

/* vl_prune_movers, with ctx in ranges over its workers (the same pairs, in another order). */
vl_status vl_pbp_sweep_movers(vl_context* ctx, const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls,
                              vl_pair_buffer* out);

#endif
