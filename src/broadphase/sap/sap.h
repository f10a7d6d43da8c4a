/* VL_BROADPHASE_SAP, the persistent incremental 3-axis sweep-and-prune of Terdiman's
 * "Sweep-and-prune" (2007): its layout, shared by sap.c (life cycle, update walk, commit),
 * sap_batch.c (batch insertion, rebuild, batch removal) and sap_validate.c.
 *
 * Per axis, one sorted array of 8-byte endpoints between two sentinels; per object, the index of
 * each of its six endpoints. An endpoint is one integer, value << 32 | is_max << 31 | owner, with
 * value the sortable encoding of the bound: endpoints sort by one integer compare, by value, then
 * min before max (so a min sits before an equal max and touching boxes overlap); the owner bits
 * break no rule, so equal endpoints may sit in any owner order. Two boxes overlap on an axis
 * exactly when their endpoint indices interleave, which is how the 3D test of the update rules
 * runs without reading a float. Pair changes go to the pair manager, which reports them at commit. */
#ifndef VL_BROADPHASE_SAP_SAP_H
#define VL_BROADPHASE_SAP_SAP_H

#include "box_prune/box_prune.h"
#include "broadphase/broadphase.h"
#include "broadphase/pair_manager.h"

#define VL_SAP_OWNER 0x7FFFFFFFu
/* An update of at least MIN boxes estimates its endpoint swaps from SAMPLES of them; past
 * SWAPS_PER_OBJECT per live object a rebuild (sort + box pruning) is cheaper (a rebuild costs
 * about as much as 50 swaps per object on the bench's scenes: docs/measurements/broadphase.md). */
#define VL_SAP_REBUILD_MIN 256u
#define VL_SAP_REBUILD_SAMPLES 32u
#define VL_SAP_REBUILD_SWAPS_PER_OBJECT 48u
#define VL_SAP_LOW_SENTINEL ((uint64_t)VL_SAP_OWNER)
#define VL_SAP_HIGH_SENTINEL UINT64_MAX

typedef uint64_t vl_endpoint;

static inline uint32_t ep_owner(vl_endpoint e) { return (uint32_t)e & VL_SAP_OWNER; }
static inline uint32_t ep_is_max(vl_endpoint e) { return (uint32_t)e >> 31; }
static inline uint32_t ep_value(vl_endpoint e) { return (uint32_t)(e >> 32); }
static inline vl_endpoint ep_make(uint32_t value, uint32_t is_max, uint32_t owner) {
    return ((uint64_t)value << 32) | ((uint64_t)is_max << 31) | owner;
}

typedef struct vl_sap {
    vl_endpoint* ep[3];
    uint32_t ep_cap[3];
    uint32_t ep_count; /* per axis, both sentinels included */
    uint32_t* pos;     /* pos[h * 6 + axis * 2 + is_max]: index of that endpoint */
    uint32_t pos_cap;
    vl_pair_manager pm;
    int oom; /* a pair could not be added during the current update */
    /* scratch, kept between calls */
    uint64_t *keys, *tmp;
    uint32_t keys_cap, tmp_cap;
    vl_aabb* saved;
    uint32_t saved_cap;
    uint32_t* old_ids;
    uint32_t old_ids_cap;
    vl_prune_set set_new, set_old;
    vl_prune_scratch prune_scratch;
    vl_pair_buffer found;
} vl_sap;

/* Boxes a and b overlap on the two axes other than `axis`, by endpoint indices. */
static inline int sap_overlap2(const uint32_t* pos, uint32_t a, uint32_t b, int axis) {
    static const int other[3][2] = {{1, 2}, {0, 2}, {0, 1}};
    const uint32_t* pa = pos + (size_t)a * 6;
    const uint32_t* pb = pos + (size_t)b * 6;
    int j = other[axis][0] * 2, k = other[axis][1] * 2;
    return pa[j] < pb[j + 1] && pb[j] < pa[j + 1] && pa[k] < pb[k + 1] && pb[k] < pa[k + 1];
}

/* The kind's operations in sap_batch.c and sap_validate.c. */
vl_status vl_sap_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count);
void vl_sap_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count);
vl_status vl_sap_validate(const vl_broadphase* bp);
/* vl_broadphase_set_static for this kind: objects handles[count], alive and none already in that
 * state, change flag; all or nothing (their pairs found and room reserved before they leave the
 * arrays, then out and in again). */
vl_status vl_sap_set_static(vl_broadphase* bp, const uint32_t* handles, uint32_t count, bool is_static);
/* Gives handles[k] boxes[k] by sorting every axis again and box pruning every pair. */
vl_status vl_sap_rebuild(vl_sap* sap, vl_bp_objects* o, const uint32_t* handles, const vl_aabb* boxes,
                         uint32_t count);
/* Keeps only the pairs that may be reported (not static-static). */
void vl_sap_filter_static(vl_pair_buffer* pairs, const vl_bp_objects* o);
/* Merges the sorted new endpoints keys[0, count) into the sorted array e of ep_count entries
 * (sentinels included; room for count more), from the back, in one pass; every endpoint that moves
 * gets pos[owner * 6 + axis * 2 + is_max] updated. Used by the SAP and the static SAP. */
void vl_sap_merge(vl_endpoint* e, uint32_t ep_count, const vl_endpoint* keys, uint32_t count, uint32_t* pos,
                  int axis);

#endif
