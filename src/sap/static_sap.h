/* VL_BROADPHASE_STATIC_SAP (seed 001, "Static/Bipartite SAP"): the layout shared by static_sap.c
 * (life cycle, the virtual walk of an update, commit), static_sap_batch.c (batches of statics and
 * dynamics: merge, compaction, ranks, box pruning) and static_sap_validate.c.
 *
 * Statics live in three sorted endpoint arrays of the same encoding as sap.h (value << 32 |
 * is_max << 31 | owner, sentinels at both ends) that an update of dynamics only reads. Each
 * dynamic box keeps, per axis and per bound, its virtual index: the number of static endpoints
 * (the low sentinel included) ordered before its own endpoint, i.e. where that endpoint would sit
 * if it were inserted. Moving a dynamic walks those indices over the static endpoints it passes,
 * reporting dynamic-static starts and stops to `pm`. Dynamic-dynamic pairs come from a plain
 * VL_BROADPHASE_SAP over the dynamics alone (its own pair manager); a commit commits both pair
 * managers and lists their pairs in one array.
 *
 * A static s and a dynamic d overlap on an axis exactly when vmin(d) <= idx(max s) and
 * idx(min s) < vmax(d): touching counts because a min sorts before an equal max. */
#ifndef VL_SAP_STATIC_SAP_H
#define VL_SAP_STATIC_SAP_H

#include "sap/sap.h"

typedef struct vl_ssap {
    vl_sap* dyn;        /* the dynamics alone (dynamic-dynamic pairs, in dyn->pm) */
    vl_pair_manager pm; /* dynamic-static pairs */
    vl_endpoint* ep[3]; /* static endpoints per axis, both sentinels included */
    uint32_t ep_cap[3];
    uint32_t ep_count;
    /* idx[h * 6 + axis * 2 + is_max]: for a static, the index of that endpoint in ep[axis]; for a
     * dynamic, its virtual index */
    uint32_t* idx;
    uint32_t idx_cap;
    uint32_t n_dyn, n_static;
    int oom;             /* a pair could not be added during the current walk */
    int removed;         /* objects were removed since the last commit (pairs may have changed manager) */
    vl_pair_buffer all;  /* the pairs of both managers as of the last commit */
    /* the statics as a box-pruning set on axis static_axis, sorted by min, while static_valid */
    vl_prune_set statics;
    int static_valid, static_axis;
    /* scratch, kept between calls */
    uint64_t *keys, *tmp;
    uint32_t keys_cap, tmp_cap;
    uint32_t* ids;  /* a batch split into dynamics (from the front) and statics (from the back) */
    uint32_t* list; /* the dynamics in the order of one axis */
    uint32_t ids_cap, list_cap;
    vl_aabb *split, *saved;
    uint32_t split_cap, saved_cap;
    vl_prune_set set_a, set_b;
    vl_prune_scratch prune_scratch;
    vl_pair_buffer found, old_pairs;
} vl_ssap;

/* The plain SAP of the dynamics, seen as a broadphase of its own: the same objects, its own
 * state and count. Its operations never change the objects' flags or arrays, only box values. */
static inline vl_broadphase vl_ssap_view(const vl_broadphase* bp) {
    const vl_ssap* ss = bp->impl;
    vl_broadphase v = *bp;
    v.ops = &vl_sap_ops;
    v.desc.kind = VL_BROADPHASE_SAP;
    v.desc.flags = 0;
    v.impl = ss->dyn;
    v.objects.alive = ss->n_dyn;
    return v;
}

/* Virtual index of key m in static axis `axis`: the first index whose endpoint sorts after m. */
static inline uint32_t vl_ssap_rank(const vl_ssap* ss, int axis, vl_endpoint m) {
    const vl_endpoint* e = ss->ep[axis];
    uint32_t lo = 0, n = ss->ep_count; /* e[lo] < m always (the low sentinel) */
    while (n > 1) {
        uint32_t half = n / 2;
        lo = e[lo + half] < m ? lo + half : lo;
        n -= half;
    }
    return lo + 1;
}

/* Batches in static_sap_batch.c; the kind's validate in static_sap_validate.c. */
vl_status vl_ssap_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count);
void vl_ssap_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count);
vl_status vl_ssap_validate(const vl_broadphase* bp);
/* Virtual indices of every dynamic again, by binary search (after the static arrays changed). */
void vl_ssap_rerank(vl_ssap* ss, const vl_bp_objects* o);
/* The dynamics' handles into ss->list[0, n_dyn), ascending by min on `axis`. */
void vl_ssap_list_dynamics(vl_ssap* ss, int axis);

/* Moving statics handles[k] to boxes[k], k < count, with the dynamics still: prepare allocates and
 * finds the new pairs (can fail, changes nothing); apply cannot fail; undo puts them back after a
 * later failure of the same update, without allocating. */
vl_status vl_ssap_statics_prepare(vl_broadphase* bp, const vl_aabb* boxes, uint32_t count);
void vl_ssap_statics_apply(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count);
void vl_ssap_statics_undo(vl_broadphase* bp, const uint32_t* handles, uint32_t count);

#endif
