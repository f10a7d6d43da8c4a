/* VL_BROADPHASE_STATIC_SAP: batches. New statics are sorted and merged into the static arrays in
 * one pass per array, removed ones compacted out in one pass; after either, every dynamic finds its
 * virtual indices again by binary search, and the new pairs come from bipartite box pruning. New
 * dynamics find their indices by binary search and their static pairs by pruning against a cached
 * set of the statics; their dynamic pairs come from the plain SAP of the dynamics. */
#include <math.h>

#include "box_prune/axis_stats.h"
#include "broadphase/static_sap/static_sap.h"
#include "core/radix.h"
#include "simd/kernels.h"

void vl_ssap_list_dynamics(vl_ssap* ss, int axis) {
    const vl_sap* sap = ss->dyn;
    const vl_endpoint* e = sap->ep[axis];
    uint32_t n = 0;
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++)
        if (!ep_is_max(e[i])) ss->list[n++] = ep_owner(e[i]);
}

static void ssap_rank_box(vl_ssap* ss, const vl_aabb* b, uint32_t h) {
    uint32_t* q = ss->idx + (size_t)h * 6;
    for (int a = 0; a < 3; a += 2) {
        q[a * 2] = vl_ssap_rank(ss, a, ep_make(vl_float_to_sortable(b->min[a]), 0, h));
        q[a * 2 + 1] = vl_ssap_rank(ss, a, ep_make(vl_float_to_sortable(b->max[a]), 1, h));
    }
}

void vl_ssap_rerank(vl_ssap* ss, const vl_bp_objects* o) {
    const vl_sap* sap = ss->dyn;
    const vl_endpoint* e = sap->ep[0];
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++)
        if (!ep_is_max(e[i])) ssap_rank_box(ss, &o->boxes[ep_owner(e[i])], ep_owner(e[i]));
}

/* Room for objects up to slot_count: indices, the batch split, the lists. */
static vl_status ssap_reserve_slots(vl_ssap* ss, const vl_bp_objects* o) {
    vl_status s = VL_ARRAY_RESERVE(ss->idx, ss->idx_cap, ss->idx_cap, (uint64_t)o->slot_count * 6);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ss->ids, ss->ids_cap, 0, o->slot_count);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ss->list, ss->list_cap, 0, o->slot_count);
    return s;
}

static vl_status ssap_reserve_keys(vl_ssap* ss, uint32_t count) {
    vl_status s = VL_ARRAY_RESERVE(ss->keys, ss->keys_cap, 0, count);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ss->tmp, ss->tmp_cap, 0, count);
    return s;
}

/* Copies every static's indices on the other ground axis beside each of its endpoints on a ground
 * axis. */
static void ssap_refresh_other(vl_ssap* ss) {
    for (int l = 0; l < 6; l++) {
        if (l >> 1 == VL_SSAP_UP) continue;
        int g = (2 - (l >> 1)) * 2;
        const vl_endpoint* e = ss->ep[l];
        uint32_t* ot = ss->oth[l];
        for (uint32_t i = 1; i + 1 < ss->ep_count; i++) {
            const uint32_t* q = ss->idx + (size_t)ep_owner(e[i]) * 6;
            ot[i * 2] = q[g], ot[i * 2 + 1] = q[g + 1];
        }
    }
}

/* Statics handles[count] (boxes in o->boxes) into the static arrays: sort, then one merge per array.
 * The arrays, keys and tmp have room. */
static void ssap_insert_statics(vl_ssap* ss, const vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    for (int l = 0; l < 6; l++) {
        int a = l >> 1;
        uint32_t is_max = (uint32_t)l & 1;
        for (uint32_t k = 0; k < count; k++) {
            const vl_aabb* b = &o->boxes[handles[k]];
            ss->keys[k] = ep_make(vl_float_to_sortable(is_max ? b->max[a] : b->min[a]), is_max, handles[k]);
        }
        vl_radix_sort_u64(ss->keys, ss->tmp, count, 32);
        vl_sap_merge(ss->ep[l], ss->ep_count, ss->keys, count, ss->idx, a);
    }
    ss->ep_count += count;
    ss->n_static += count;
    ss->static_valid = 0;
    ss->ground_valid = 0;
    ssap_refresh_other(ss);
}

/* Drops the statics with VL_OBJ_MARK, `count` of them, handles[count], from the static arrays. */
static void ssap_compact_statics(vl_ssap* ss, const vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    for (int l = 0; l < 6; l++) {
        uint32_t first = ss->ep_count - 1;
        for (uint32_t k = 0; k < count; k++) {
            uint32_t p = ss->idx[(size_t)handles[k] * 6 + l];
            if (p < first) first = p;
        }
        vl_endpoint* e = ss->ep[l];
        uint32_t dst = first;
        for (uint32_t src = first; src + 1 < ss->ep_count; src++) {
            vl_endpoint x = e[src];
            if (o->flags[ep_owner(x)] & VL_OBJ_MARK) continue;
            e[dst] = x;
            ss->idx[(size_t)ep_owner(x) * 6 + l] = dst;
            dst++;
        }
        e[dst] = VL_SAP_HIGH_SENTINEL;
    }
    ss->ep_count -= count;
    ss->n_static -= count;
    ss->static_valid = 0;
    ssap_refresh_other(ss);
}

/* ss->found = the pairs (ids[k] or k, dynamic handle) of boxes[ids ? ids[k] : k], k < count, against every
 * dynamic, by bipartite box pruning (the dynamics come presorted from their SAP's axis). */
static vl_status ssap_prune_dynamics(vl_ssap* ss, const vl_bp_objects* o, const vl_aabb* boxes, const uint32_t* ids,
                                     uint32_t count) {
    ss->found.count = 0;
    if (!ss->n_dyn || !count) return VL_OK;
    vl_axis_stats stats = {0};
    vl_ssap_list_dynamics(ss, 0);
    vl_axis_stats_add(&stats, o->boxes, ss->list, ss->n_dyn);
    vl_axis_stats_add(&stats, boxes, ids, count);
    int axis = vl_axis_stats_best(&stats);
    vl_ssap_list_dynamics(ss, axis);
    vl_status s = vl_prune_set_build(&ss->set_a, &ss->prune_scratch, boxes, ids, count, axis, 0);
    if (s == VL_OK) s = vl_prune_set_build(&ss->set_b, &ss->prune_scratch, o->boxes, ss->list, ss->n_dyn, axis, 1);
    if (s == VL_OK) s = vl_prune_bipartite(&ss->set_a, &ss->set_b, 0, &ss->found);
    return s;
}

/* The statics as one box-pruning set, sorted by min along the axis of their widest spread, taken in
 * the order of that static array (already sorted); kept until the statics change. */
static vl_status ssap_static_set(vl_ssap* ss, const vl_bp_objects* o) {
    if (ss->static_valid) return VL_OK;
    uint32_t n = ss->n_static;
    for (uint32_t i = 0; i < n; i++) ss->list[i] = ep_owner(ss->ep[0][i + 1]);
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, o->boxes, ss->list, n);
    int axis = vl_axis_stats_best(&stats);
    for (uint32_t i = 0; i < n; i++) ss->list[i] = ep_owner(ss->ep[axis * 2][i + 1]);
    vl_status s = vl_prune_set_build(&ss->statics, &ss->prune_scratch, o->boxes, ss->list, n, axis, 1);
    if (s != VL_OK) return s;
    ss->static_axis = axis;
    ss->static_valid = 1;
    return VL_OK;
}

/* Room for `count` more statics in the static arrays and the sort scratch. */
static vl_status ssap_reserve_statics(vl_ssap* ss, uint32_t count) {
    uint64_t eps = (uint64_t)ss->ep_count + count;
    vl_status s = ssap_reserve_keys(ss, count);
    for (int l = 0; l < 6 && s == VL_OK; l++) {
        s = VL_ARRAY_RESERVE(ss->ep[l], ss->ep_cap[l], ss->ep_count, eps);
        if (s == VL_OK && l >> 1 != VL_SSAP_UP)
            s = VL_ARRAY_RESERVE(ss->oth[l], ss->oth_cap[l], ss->ep_count * 2, eps * 2);
    }
    return s;
}

static vl_status ssap_add_statics(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_ssap* ss = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    vl_status s = ssap_reserve_statics(ss, count);
    if (s == VL_OK) s = ssap_prune_dynamics(ss, o, o->boxes, handles, count);
    if (s == VL_OK) s = vl_pm_reserve(&ss->pm, ss->found.count);
    if (s != VL_OK) return s;
    /* from here on nothing can fail */
    ssap_insert_statics(ss, o, handles, count);
    if (ss->n_dyn) vl_ssap_rerank(ss, o);
    for (uint32_t i = 0; i < ss->found.count; i++) vl_pm_add(&ss->pm, ss->found.pairs[i].a, ss->found.pairs[i].b);
    return VL_OK;
}

/* boxes[ids ? ids[k] : k], k < count, stretched over the whole up axis, into ss->columns[k]: their
 * pruning against the statics finds the ground pairs. */
static vl_status ssap_columns(vl_ssap* ss, const vl_aabb* boxes, const uint32_t* ids, uint32_t count) {
    vl_status s = VL_ARRAY_RESERVE(ss->columns, ss->columns_cap, 0, count);
    if (s != VL_OK) return s;
    for (uint32_t k = 0; k < count; k++) {
        ss->columns[k] = boxes[ids ? ids[k] : k];
        ss->columns[k].min[VL_SSAP_UP] = -INFINITY;
        ss->columns[k].max[VL_SSAP_UP] = INFINITY;
    }
    return VL_OK;
}

/* ss->found = the ground pairs (k, static handle) of boxes[ids ? ids[k] : k], k < count. */
static vl_status ssap_prune_ground(vl_ssap* ss, const vl_bp_objects* o, const vl_aabb* boxes, const uint32_t* ids,
                                   uint32_t count) {
    ss->found.count = 0;
    vl_status s = ssap_static_set(ss, o);
    if (s == VL_OK) s = ssap_columns(ss, boxes, ids, count);
    if (s == VL_OK)
        s = vl_prune_set_build(&ss->set_a, &ss->prune_scratch, ss->columns, NULL, count, ss->static_axis, 0);
    if (s == VL_OK) s = vl_prune_bipartite(&ss->set_a, &ss->statics, 0, &ss->found);
    return s;
}

vl_status vl_ssap_ground_rebuild(vl_broadphase* bp) {
    vl_ssap* ss = bp->impl;
    if (ss->ground_valid) return VL_OK;
    vl_pm_free(&ss->ground);
    vl_pm_init(&ss->ground, 0);
    ss->found.count = 0; /* no pairs when nothing is pruned */
    vl_status s = VL_OK;
    if (ss->n_dyn && ss->n_static) {
        s = ssap_static_set(ss, &bp->objects); /* before the list: it uses ss->list too */
        vl_ssap_list_dynamics(ss, 0);
        if (s == VL_OK) s = ssap_prune_ground(ss, &bp->objects, bp->objects.boxes, ss->list, ss->n_dyn);
    }
    if (s == VL_OK) s = vl_pm_reserve(&ss->ground, ss->found.count);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < ss->found.count; i++)
        vl_pm_add(&ss->ground, ss->list[ss->found.pairs[i].a], ss->found.pairs[i].b);
    vl_pm_commit(&ss->ground, NULL, NULL);
    ss->ground_valid = 1;
    return VL_OK;
}

/* New dynamics: their ground pairs by pruning against the statics, those overlapping on the up axis
 * into pm; their dynamic pairs from the plain SAP of the dynamics. */
static vl_status ssap_add_dynamics(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_ssap* ss = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    ss->found.count = 0;
    vl_status s = ss->n_static ? ssap_prune_ground(ss, o, o->boxes, handles, count) : VL_OK;
    if (s == VL_OK) s = vl_pm_reserve(&ss->pm, ss->found.count);
    if (s == VL_OK && ss->ground_valid) s = vl_pm_reserve(&ss->ground, ss->found.count);
    if (s != VL_OK) return s;
    vl_broadphase inner = vl_ssap_view(bp);
    inner.objects.alive = ss->n_dyn + count;
    s = vl_sap_add(&inner, handles, count);
    if (s != VL_OK) return s;
    /* from here on nothing can fail */
    ss->n_dyn += count;
    for (uint32_t k = 0; k < count; k++) ssap_rank_box(ss, &o->boxes[handles[k]], handles[k]);
    for (uint32_t i = 0; i < ss->found.count; i++) {
        uint32_t d = handles[ss->found.pairs[i].a], st = ss->found.pairs[i].b;
        if (ss->ground_valid) vl_pm_add(&ss->ground, d, st);
        if (vl_ssap_overlap_up(&o->boxes[d], &o->boxes[st])) vl_pm_add(&ss->pm, d, st);
    }
    return VL_OK;
}

/* A batch holds statics only or dynamics only (one flags word per vl_broadphase_add, and per
 * vl_broadphase_set_static). */
vl_status vl_ssap_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_ssap* ss = bp->impl;
    vl_status s = ssap_reserve_slots(ss, &bp->objects);
    if (s != VL_OK) return s;
    return (bp->objects.flags[handles[0]] & VL_OBJ_STATIC) ? ssap_add_statics(bp, handles, count)
                                                          : ssap_add_dynamics(bp, handles, count);
}

void vl_ssap_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_ssap* ss = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    vl_pm_remove_owners(&ss->pm, o->flags, VL_OBJ_MARK);
    if (ss->ground_valid) vl_pm_remove_owners(&ss->ground, o->flags, VL_OBJ_MARK);
    ss->removed = 1;
    uint32_t nd = 0, ns = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        if (o->flags[h] & VL_OBJ_STATIC)
            ss->ids[count - 1 - ns++] = h;
        else
            ss->ids[nd++] = h;
    }
    if (nd) {
        vl_broadphase inner = vl_ssap_view(bp);
        vl_sap_remove(&inner, ss->ids, nd);
        ss->n_dyn -= nd;
    }
    if (ns) {
        ssap_compact_statics(ss, o, ss->ids + nd, ns);
        if (ss->n_dyn) vl_ssap_rerank(ss, o);
    }
}

/* ---- flips (vl_broadphase_set_static): everything found and reserved first ------------------- */

static void ssap_set_flags(vl_bp_objects* o, const uint32_t* handles, uint32_t count, uint8_t flags) {
    for (uint32_t k = 0; k < count; k++) o->flags[handles[k]] = flags;
}

/* Dynamics handles[count] become statics: their pairs with statics end, their pairs with the other
 * dynamics leave the inner SAP for pm (ssap_cancel_moves keeps them silent). */
static vl_status ssap_to_static(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_ssap* ss = bp->impl;
    vl_bp_objects* o = &bp->objects;
    vl_status s = ssap_reserve_statics(ss, count);
    if (s == VL_OK) s = ssap_prune_dynamics(ss, o, o->boxes, handles, count); /* the flipped among them */
    if (s == VL_OK) s = vl_pm_reserve(&ss->pm, ss->found.count);
    if (s != VL_OK) return s;
    /* from here on nothing can fail */
    ssap_set_flags(o, handles, count, VL_OBJ_ALIVE | VL_OBJ_MARK);
    vl_pm_remove_owners(&ss->pm, o->flags, VL_OBJ_MARK);
    vl_broadphase inner = vl_ssap_view(bp);
    vl_sap_remove(&inner, handles, count);
    ss->n_dyn -= count;
    ssap_set_flags(o, handles, count, VL_OBJ_ALIVE | VL_OBJ_STATIC);
    ssap_insert_statics(ss, o, handles, count);
    if (ss->n_dyn) vl_ssap_rerank(ss, o);
    for (uint32_t i = 0; i < ss->found.count; i++)
        if (!(o->flags[ss->found.pairs[i].b] & VL_OBJ_STATIC))
            vl_pm_add(&ss->pm, ss->found.pairs[i].a, ss->found.pairs[i].b);
    ss->removed = 1;
    return VL_OK;
}

/* Statics handles[count] become dynamics: they enter the inner SAP (the only step that can fail
 * once their pairs with the other statics are found), then leave the static arrays. */
static vl_status ssap_to_dynamic(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_ssap* ss = bp->impl;
    vl_bp_objects* o = &bp->objects;
    vl_status s = ssap_prune_ground(ss, o, o->boxes, handles, count); /* the flipped among the statics */
    if (s == VL_OK) s = vl_pm_reserve(&ss->pm, ss->found.count);
    if (s != VL_OK) return s;
    ssap_set_flags(o, handles, count, VL_OBJ_ALIVE);
    vl_broadphase inner = vl_ssap_view(bp);
    inner.objects.alive = ss->n_dyn + count;
    s = vl_sap_add(&inner, handles, count);
    if (s != VL_OK) {
        ssap_set_flags(o, handles, count, VL_OBJ_ALIVE | VL_OBJ_STATIC);
        return s;
    }
    /* from here on nothing can fail */
    ss->n_dyn += count;
    ssap_set_flags(o, handles, count, VL_OBJ_ALIVE | VL_OBJ_MARK);
    vl_pm_remove_owners(&ss->pm, o->flags, VL_OBJ_MARK);
    ssap_compact_statics(ss, o, handles, count);
    ssap_set_flags(o, handles, count, VL_OBJ_ALIVE);
    ss->ground_valid = 0;
    vl_ssap_rerank(ss, o);
    for (uint32_t i = 0; i < ss->found.count; i++) {
        uint32_t d = handles[ss->found.pairs[i].a], st = ss->found.pairs[i].b;
        if ((o->flags[st] & VL_OBJ_STATIC) && vl_ssap_overlap_up(&o->boxes[d], &o->boxes[st]))
            vl_pm_add(&ss->pm, d, st);
    }
    ss->removed = 1;
    return VL_OK;
}

vl_status vl_ssap_set_static(vl_broadphase* bp, const uint32_t* handles, uint32_t count, bool is_static) {
    vl_status s = ssap_reserve_slots(bp->impl, &bp->objects);
    if (s != VL_OK) return s;
    return is_static ? ssap_to_static(bp, handles, count) : ssap_to_dynamic(bp, handles, count);
}

/* ---- statics that move: out of the arrays and in again ------------------------------------- */

vl_status vl_ssap_statics_prepare(vl_broadphase* bp, const vl_aabb* boxes, uint32_t count) {
    vl_ssap* ss = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    vl_status s = ssap_reserve_keys(ss, count);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ss->saved, ss->saved_cap, 0, count);
    if (s == VL_OK) s = vl_pair_buffer_reserve(&ss->old_pairs, ss->pm.count);
    if (s == VL_OK) s = ssap_prune_dynamics(ss, o, boxes, NULL, count);
    if (s == VL_OK) s = vl_pm_reserve(&ss->pm, ss->found.count);
    return s;
}

/* Takes statics handles[count] out of the static arrays and every pair of theirs (flagged removed),
 * then gives them `boxes` and puts them back in. */
static void ssap_statics_move(vl_ssap* ss, vl_bp_objects* o, const uint32_t* handles, const vl_aabb* boxes,
                              uint32_t count) {
    for (uint32_t k = 0; k < count; k++) o->flags[handles[k]] |= VL_OBJ_MARK;
    vl_pm_remove_owners(&ss->pm, o->flags, VL_OBJ_MARK);
    ssap_compact_statics(ss, o, handles, count);
    for (uint32_t k = 0; k < count; k++) {
        o->flags[handles[k]] &= (uint8_t)~VL_OBJ_MARK;
        o->boxes[handles[k]] = boxes[k];
    }
    ssap_insert_statics(ss, o, handles, count);
    if (ss->n_dyn) vl_ssap_rerank(ss, o);
}

void vl_ssap_statics_apply(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_ssap* ss = bp->impl;
    vl_bp_objects* o = &bp->objects;
    /* the live pairs of these statics, for an undo */
    for (uint32_t k = 0; k < count; k++) {
        ss->saved[k] = o->boxes[handles[k]];
        o->flags[handles[k]] |= VL_OBJ_MARK;
    }
    ss->old_pairs.count = 0;
    for (uint32_t i = 0; i < ss->pm.count; i++) {
        vl_pair p = ss->pm.pairs[i];
        if (!(ss->pm.flags[i] & VL_PM_REMOVED) && ((o->flags[p.a] | o->flags[p.b]) & VL_OBJ_MARK))
            ss->old_pairs.pairs[ss->old_pairs.count++] = p;
    }
    for (uint32_t k = 0; k < count; k++) o->flags[handles[k]] &= (uint8_t)~VL_OBJ_MARK;
    ssap_statics_move(ss, o, handles, boxes, count);
    for (uint32_t i = 0; i < ss->found.count; i++) vl_pm_add(&ss->pm, handles[ss->found.pairs[i].a], ss->found.pairs[i].b);
}

/* The pairs of the statics' old places are still stored (flagged removed): re-adding them
 * allocates nothing, and the pairs of the new places go back to removed. */
void vl_ssap_statics_undo(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_ssap* ss = bp->impl;
    ssap_statics_move(ss, &bp->objects, handles, ss->saved, count);
    for (uint32_t i = 0; i < ss->old_pairs.count; i++) vl_pm_add(&ss->pm, ss->old_pairs.pairs[i].a, ss->old_pairs.pairs[i].b);
}
