/* VL_BROADPHASE_SAP: batch insertion (box pruning, then one merge per axis), rebuild of a big
 * update (sort again, prune again, diff), batch removal (mark, then compact once). */
#include "box_prune/axis_stats.h"
#include "broadphase/sap/sap.h"
#include "core/radix.h"
#include "simd/kernels.h"

/* ---- batch insertion ---------------------------------------------------------------------- */

/* Keeps only the pairs that may be reported (not static-static). */
void vl_sap_filter_static(vl_pair_buffer* pairs, const vl_bp_objects* o) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < pairs->count; i++)
        if (vl_bp_may_pair(o, pairs->pairs[i].a, pairs->pairs[i].b)) pairs->pairs[kept++] = pairs->pairs[i];
    pairs->count = kept;
}

void vl_sap_merge(vl_endpoint* e, uint32_t ep_count, const vl_endpoint* keys, uint32_t count, uint32_t* pos,
                  int axis) {
    uint32_t i = ep_count - 2; /* last real old endpoint (0 is the low sentinel, below all) */
    uint32_t dst = ep_count + count - 1;
    e[dst--] = VL_SAP_HIGH_SENTINEL;
    for (uint32_t j = count; j > 0; dst--) {
        vl_endpoint x = e[i] > keys[j - 1] ? e[i--] : keys[--j];
        e[dst] = x;
        pos[(size_t)ep_owner(x) * 6 + axis * 2 + ep_is_max(x)] = dst;
    }
}

static vl_status sap_reserve_add(vl_sap* sap, const vl_bp_objects* o, uint32_t count) {
    uint64_t eps = (uint64_t)sap->ep_count + 2ull * count;
    vl_status s = VL_ARRAY_RESERVE(sap->pos, sap->pos_cap, sap->pos_cap, (uint64_t)o->slot_count * 6);
    for (int a = 0; a < 3 && s == VL_OK; a++)
        s = VL_ARRAY_RESERVE(sap->ep[a], sap->ep_cap[a], sap->ep_count, eps);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(sap->keys, sap->keys_cap, 0, 2ull * count);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(sap->tmp, sap->tmp_cap, 0, 2ull * count);
    if (s == VL_OK)
        s = VL_ARRAY_RESERVE(sap->old_ids, sap->old_ids_cap, 0, sap->ep_count / 2 + 1);
    return s;
}

/* New pairs of a batch: box pruning among the new boxes, and of the new boxes against the old
 * ones, taken in the order of the chosen axis's endpoint array (already sorted) less the objects
 * with VL_OBJ_MARK (a flip finds the pairs of its objects while they are still in the arrays). */
static vl_status sap_find_new_pairs(vl_sap* sap, const vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, o->boxes, handles, count);
    int axis = vl_axis_stats_best(&stats);
    const vl_endpoint* e = sap->ep[axis];
    uint32_t n_old = 0;
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++)
        if (!ep_is_max(e[i]) && !(o->flags[ep_owner(e[i])] & VL_OBJ_MARK)) sap->old_ids[n_old++] = ep_owner(e[i]);
    sap->found.count = 0;
    vl_status s = vl_prune_set_build(&sap->set_new, &sap->prune_scratch, o->boxes, handles, count, axis, 0);
    if (s == VL_OK) s = vl_prune_complete(&sap->set_new, 0, &sap->found);
    if (s == VL_OK && n_old) {
        s = vl_prune_set_build(&sap->set_old, &sap->prune_scratch, o->boxes, sap->old_ids, n_old, axis, 1);
        if (s == VL_OK) s = vl_prune_bipartite(&sap->set_new, &sap->set_old, 0, &sap->found);
    }
    if (s == VL_OK) vl_sap_filter_static(&sap->found, o);
    return s;
}

/* Everything that adding handles[count] can fail on: room, their pairs (in sap->found), room for
 * those in the pair manager. Changes nothing else. */
static vl_status sap_prepare_add(vl_sap* sap, const vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    vl_status s = sap_reserve_add(sap, o, count);
    if (s == VL_OK) s = sap_find_new_pairs(sap, o, handles, count);
    if (s == VL_OK) s = vl_pm_reserve(&sap->pm, sap->found.count);
    return s;
}

/* Adds handles[count] after sap_prepare_add: one merge per axis, then the pairs found. Cannot fail. */
static void sap_insert(vl_sap* sap, const vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    for (int a = 0; a < 3; a++) {
        for (uint32_t k = 0; k < count; k++) {
            uint32_t h = handles[k];
            const vl_aabb* b = &o->boxes[h];
            sap->keys[2 * k] = ep_make(vl_float_to_sortable(b->min[a]), 0, h);
            sap->keys[2 * k + 1] = ep_make(vl_float_to_sortable(b->max[a]), 1, h);
        }
        vl_radix_sort_u64(sap->keys, sap->tmp, 2 * count, 31);
        vl_sap_merge(sap->ep[a], sap->ep_count, sap->keys, 2 * count, sap->pos, a);
    }
    sap->ep_count += 2 * count;
    for (uint32_t i = 0; i < sap->found.count; i++) vl_pm_add(&sap->pm, sap->found.pairs[i].a, sap->found.pairs[i].b);
}

vl_status vl_sap_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_sap* sap = bp->impl;
    vl_status s = sap_prepare_add(sap, &bp->objects, handles, count);
    if (s == VL_OK) sap_insert(sap, &bp->objects, handles, count);
    return s;
}

vl_status vl_sap_set_static(vl_broadphase* bp, const uint32_t* handles, uint32_t count, bool is_static) {
    vl_sap* sap = bp->impl;
    vl_bp_objects* o = &bp->objects;
    const uint8_t want = is_static ? VL_OBJ_STATIC : 0;
    /* the new flag, and the mark that keeps them out of the pruning against the others */
    for (uint32_t k = 0; k < count; k++) o->flags[handles[k]] = (uint8_t)(VL_OBJ_ALIVE | VL_OBJ_MARK | want);
    vl_status s = sap_prepare_add(sap, o, handles, count);
    if (s == VL_OK) vl_sap_remove(bp, handles, count);
    for (uint32_t k = 0; k < count; k++)
        o->flags[handles[k]] = (uint8_t)(VL_OBJ_ALIVE | (s == VL_OK ? want : want ^ VL_OBJ_STATIC));
    if (s == VL_OK) sap_insert(sap, o, handles, count);
    return s;
}

/* ---- rebuild: a big update as one sort and one box pruning -------------------------------- */

/* Writes the endpoints of every live box of the list ids[0, n) into `axis`, sorted. */
static void sap_sort_axis(vl_sap* sap, const vl_bp_objects* o, const uint32_t* ids, uint32_t n, int axis) {
    for (uint32_t k = 0; k < n; k++) {
        uint32_t h = ids[k];
        sap->keys[2 * k] = ep_make(vl_float_to_sortable(o->boxes[h].min[axis]), 0, h);
        sap->keys[2 * k + 1] = ep_make(vl_float_to_sortable(o->boxes[h].max[axis]), 1, h);
    }
    vl_radix_sort_u64(sap->keys, sap->tmp, 2 * n, 31);
    vl_endpoint* e = sap->ep[axis];
    for (uint32_t i = 0; i < 2 * n; i++) {
        vl_endpoint x = sap->keys[i];
        e[i + 1] = x;
        sap->pos[(size_t)ep_owner(x) * 6 + axis * 2 + ep_is_max(x)] = i + 1;
    }
}

/* Gives handles[k] boxes[k], then finds every pair again by box pruning: each current pair is
 * flagged removed and each pair found is added back (clearing the flag), so the pair manager
 * reports exactly the difference; the endpoint arrays are sorted again from scratch. Every
 * allocation happens before the first change. */
vl_status vl_sap_rebuild(vl_sap* sap, vl_bp_objects* o, const uint32_t* handles, const vl_aabb* boxes,
                             uint32_t count) {
    uint32_t n = o->alive;
    vl_status s = VL_ARRAY_RESERVE(sap->keys, sap->keys_cap, 0, 2ull * n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(sap->tmp, sap->tmp_cap, 0, 2ull * n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(sap->old_ids, sap->old_ids_cap, 0, n);
    if (s != VL_OK) return s;
    uint32_t live = 0;
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++)
        if (!ep_is_max(sap->ep[0][i])) sap->old_ids[live++] = ep_owner(sap->ep[0][i]);
    for (uint32_t k = 0; k < count; k++) {
        sap->saved[k] = o->boxes[handles[k]];
        o->boxes[handles[k]] = boxes[k];
    }
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, o->boxes, sap->old_ids, live);
    sap->found.count = 0;
    s = vl_prune_set_build(&sap->set_new, &sap->prune_scratch, o->boxes, sap->old_ids, live,
                           vl_axis_stats_best(&stats), 0);
    if (s == VL_OK) s = vl_prune_complete(&sap->set_new, 0, &sap->found);
    if (s == VL_OK) vl_sap_filter_static(&sap->found, o);
    if (s == VL_OK) s = vl_pm_reserve(&sap->pm, sap->found.count);
    if (s != VL_OK) {
        for (uint32_t k = 0; k < count; k++) o->boxes[handles[k]] = sap->saved[k];
        return s;
    }
    /* from here on nothing can fail */
    for (uint32_t i = 0; i < sap->pm.count; i++)
        if (!(sap->pm.flags[i] & VL_PM_REMOVED)) vl_pm_remove(&sap->pm, sap->pm.pairs[i].a, sap->pm.pairs[i].b);
    for (uint32_t i = 0; i < sap->found.count; i++) vl_pm_add(&sap->pm, sap->found.pairs[i].a, sap->found.pairs[i].b);
    for (int a = 0; a < 3; a++) sap_sort_axis(sap, o, sap->old_ids, live, a);
    return VL_OK;
}

/* ---- batch removal: mark (done by the caller), flag pairs, compact each axis once ---------- */

void vl_sap_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_sap* sap = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    vl_pm_remove_owners(&sap->pm, o->flags, VL_OBJ_MARK);
    for (int a = 0; a < 3; a++) {
        uint32_t first = sap->ep_count;
        for (uint32_t k = 0; k < count; k++) {
            uint32_t p = sap->pos[(size_t)handles[k] * 6 + a * 2];
            if (p < first) first = p;
        }
        vl_endpoint* e = sap->ep[a];
        uint32_t dst = first;
        for (uint32_t src = first; src + 1 < sap->ep_count; src++) {
            vl_endpoint x = e[src];
            if (o->flags[ep_owner(x)] & VL_OBJ_MARK) continue;
            e[dst] = x;
            sap->pos[(size_t)ep_owner(x) * 6 + a * 2 + ep_is_max(x)] = dst;
            dst++;
        }
        e[dst] = VL_SAP_HIGH_SENTINEL;
    }
    sap->ep_count -= 2 * count;
}

