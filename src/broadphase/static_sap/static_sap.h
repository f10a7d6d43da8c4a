/* VL_BROADPHASE_STATIC_SAP (Terdiman's "Static/Bipartite SAP" notes, Coder Corner, 2012): the
 * layout shared by static_sap.c (life cycle, the virtual walk of an update, commit),
 * static_sap_batch.c (batches of statics and dynamics: merge, compaction, ranks, box pruning) and
 * static_sap_validate.c.
 *
 * Statics live in sorted endpoint arrays of the same encoding as sap.h (value << 32 | is_max << 31
 * | owner, sentinels at both ends), one of mins and one of maxes per axis, that an update of
 * dynamics only reads. A dynamic's min can only start or stop an overlap by passing a static's max,
 * and its max a static's min: each dynamic endpoint keeps its virtual index in the array of the
 * other kind, the number of its entries (the low sentinel included) that sort before it, i.e. where
 * it would sit if inserted. Keys of different kinds never tie, so that index is exact, and a mover
 * sliding on a floor where thousands of statics share their min passes none of them. Moving a
 * dynamic walks those indices on the two ground axes (x and z) only, keeping in `ground` the
 * statics that overlap it there; the up axis (y), where bobbing movers would pass the tops of
 * thousands of props, is decided by testing those few pairs' boxes, which gives `pm`. Dynamic-dynamic
 * pairs come from a plain VL_BROADPHASE_SAP over the dynamics alone (its own pair manager); a
 * commit commits both pair managers and lists their pairs in one array.
 *
 * A static s and a dynamic d overlap on an axis exactly when vmin(d) <= idx(max s) and
 * idx(min s) < vmax(d) (touching counts: a min sorts before an equal max). */
#ifndef VL_BROADPHASE_STATIC_SAP_STATIC_SAP_H
#define VL_BROADPHASE_STATIC_SAP_STATIC_SAP_H

#include "broadphase/sap/sap.h"

typedef struct vl_ssap {
    vl_sap* dyn;        /* the dynamics alone (dynamic-dynamic pairs, in dyn->pm) */
    vl_pair_manager pm; /* dynamic-static pairs */
    /* dynamic-static pairs overlapping on the ground axes, while ground_valid (a superset of pm's) */
    vl_pair_manager ground;
    int ground_valid;
    vl_endpoint* ep[6]; /* ep[axis * 2 + is_max]: the statics' mins or maxes, both sentinels included */
    uint32_t ep_cap[6];
    uint32_t ep_count; /* per array: n_static + 2 */
    /* oth[l][i * 2 + 0..1], for the arrays of the ground axes: the indices of the owner of ep[l][i]
     * on the other ground axis (min, max), so that a walk reads the static arrays in order only;
     * NULL for the up axis */
    uint32_t* oth[6];
    uint32_t oth_cap[6];
    /* idx[h * 6 + axis * 2 + is_max]: for a static, the index of that endpoint in ep[axis * 2 +
     * is_max]; for a dynamic, its virtual index in ep[axis * 2 + !is_max] on the ground axes (the
     * slots of the up axis are unused) */
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
    vl_aabb *split, *saved, *columns;
    uint32_t split_cap, saved_cap, columns_cap;
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

/* The up axis, which dynamics do not walk. */
#define VL_SSAP_UP 1

static inline int vl_ssap_overlap_up(const vl_aabb* a, const vl_aabb* b) {
    return a->min[VL_SSAP_UP] <= b->max[VL_SSAP_UP] && b->min[VL_SSAP_UP] <= a->max[VL_SSAP_UP];
}

/* Virtual index of dynamic endpoint m on `axis`: the first index of the other kind's array whose
 * endpoint sorts after m. */
static inline uint32_t vl_ssap_rank(const vl_ssap* ss, int axis, vl_endpoint m) {
    const vl_endpoint* e = ss->ep[axis * 2 + !ep_is_max(m)];
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
/* vl_broadphase_set_static for this kind: objects handles[count], alive and none already in that
 * state, change flag; all or nothing (everything found and reserved before the first change). */
vl_status vl_ssap_set_static(vl_broadphase* bp, const uint32_t* handles, uint32_t count, bool is_static);
vl_status vl_ssap_validate(const vl_broadphase* bp);
/* Virtual indices of every dynamic again, by binary search (after the static arrays changed). */
void vl_ssap_rerank(vl_ssap* ss, const vl_bp_objects* o);
/* The dynamics' handles into ss->list[0, n_dyn), ascending by min on `axis`. */
void vl_ssap_list_dynamics(vl_ssap* ss, int axis);
/* Fills `ground` again from the boxes, by box pruning, unless ground_valid. */
vl_status vl_ssap_ground_rebuild(vl_broadphase* bp);

/* Moving statics handles[k] to boxes[k], k < count, with the dynamics still: prepare allocates and
 * finds the new pairs (can fail, changes nothing); apply cannot fail; undo puts them back after a
 * later failure of the same update, without allocating. */
vl_status vl_ssap_statics_prepare(vl_broadphase* bp, const vl_aabb* boxes, uint32_t count);
void vl_ssap_statics_apply(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count);
void vl_ssap_statics_undo(vl_broadphase* bp, const uint32_t* handles, uint32_t count);

#endif
