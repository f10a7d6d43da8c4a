/* VL_BROADPHASE_STATIC_SAP: the check of every invariant. */
#include <string.h>

#include "broadphase/static_sap/static_sap.h"
#include "simd/kernels.h"

/* Dynamic (virtual indices qd) and static (indices qs) overlap on axis a. */
static inline int ssap_overlap_axis(const uint32_t* qd, const uint32_t* qs, int a) {
    return qd[a * 2] <= qs[a * 2 + 1] && qs[a * 2] < qd[a * 2 + 1];
}

static vl_status ssap_validate_statics(const vl_ssap* ss, const vl_bp_objects* o) {
    uint32_t n = ss->ep_count;
    if (n != ss->n_static + 2) return VL_ERR_INVALID_ARGUMENT;
    for (int l = 0; l < 6; l++) {
        const vl_endpoint* e = ss->ep[l];
        int a = l >> 1;
        uint32_t is_max = (uint32_t)l & 1;
        if (e[0] != VL_SAP_LOW_SENTINEL || e[n - 1] != VL_SAP_HIGH_SENTINEL) return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t i = 1; i + 1 < n; i++) {
            uint32_t owner = ep_owner(e[i]);
            if (owner >= o->slot_count || !(o->flags[owner] & VL_OBJ_ALIVE) || !(o->flags[owner] & VL_OBJ_STATIC))
                return VL_ERR_INVALID_ARGUMENT;
            if (ep_is_max(e[i]) != is_max || ss->idx[(size_t)owner * 6 + l] != i) return VL_ERR_INVALID_ARGUMENT;
            const uint32_t* q = ss->idx + (size_t)owner * 6;
            if (a != VL_SSAP_UP) {
                const uint32_t* ot = ss->oth[l] + (size_t)i * 2;
                if (ot[0] != q[(2 - a) * 2] || ot[1] != q[(2 - a) * 2 + 1]) return VL_ERR_INVALID_ARGUMENT;
            }
            const vl_aabb* b = &o->boxes[owner];
            if (ep_value(e[i]) != vl_float_to_sortable(is_max ? b->max[a] : b->min[a])) return VL_ERR_INVALID_ARGUMENT;
            if (i > 1 && ep_value(e[i - 1]) > ep_value(e[i])) return VL_ERR_INVALID_ARGUMENT; /* owner order is free */
        }
    }
    if (ss->static_valid && ss->statics.n != ss->n_static) return VL_ERR_INVALID_ARGUMENT;
    return VL_OK;
}

/* Each dynamic endpoint's virtual index on a ground axis sits between the endpoints of the other
 * kind that sort before and after it (they never tie with it). */
static vl_status ssap_validate_ranks(const vl_ssap* ss, const vl_bp_objects* o) {
    const vl_sap* sap = ss->dyn;
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++) {
        if (ep_is_max(sap->ep[0][i])) continue;
        uint32_t d = ep_owner(sap->ep[0][i]);
        const vl_aabb* b = &o->boxes[d];
        for (int a = 0; a < 3; a += 2)
            for (uint32_t m = 0; m < 2; m++) {
                uint32_t v = ss->idx[(size_t)d * 6 + a * 2 + m];
                vl_endpoint key = ep_make(vl_float_to_sortable(m ? b->max[a] : b->min[a]), m, d);
                const vl_endpoint* e = ss->ep[a * 2 + !m];
                if (v < 1 || v >= ss->ep_count || e[v - 1] >= key || e[v] <= key) return VL_ERR_INVALID_ARGUMENT;
            }
    }
    return VL_OK;
}

/* Dynamic d and static st overlap on the ground axes by indices, on every axis by floats. */
static int ssap_on_ground(const vl_ssap* ss, uint32_t d, uint32_t st) {
    const uint32_t *qd = ss->idx + (size_t)d * 6, *qs = ss->idx + (size_t)st * 6;
    return ssap_overlap_axis(qd, qs, 0) && ssap_overlap_axis(qd, qs, 2);
}

/* The live pairs of pm (or of ground): each is one live dynamic and one live static, overlapping
 * (on the ground axes); their number. VL_PM_NONE when one is not. */
static uint32_t ssap_count_live(const vl_ssap* ss, const vl_bp_objects* o, const vl_pair_manager* pm, int ground) {
    if (vl_pm_validate(pm) != VL_OK) return VL_PM_NONE;
    uint32_t live = 0;
    for (uint32_t i = 0; i < pm->count; i++) {
        if (pm->flags[i] & VL_PM_REMOVED) continue;
        vl_pair p = pm->pairs[i];
        if (p.b >= o->slot_count || !(o->flags[p.a] & VL_OBJ_ALIVE) || !(o->flags[p.b] & VL_OBJ_ALIVE))
            return VL_PM_NONE;
        uint32_t d = (o->flags[p.a] & VL_OBJ_STATIC) ? p.b : p.a, st = d == p.a ? p.b : p.a;
        if ((o->flags[d] & VL_OBJ_STATIC) || !(o->flags[st] & VL_OBJ_STATIC)) return VL_PM_NONE;
        if (!ssap_on_ground(ss, d, st) || (!ground && !vl_aabb_overlap(&o->boxes[d], &o->boxes[st]))) return VL_PM_NONE;
        live++;
    }
    return live;
}

/* Every live pair overlaps, and there are as many as overlapping pairs (in ground: on the ground
 * axes), counted by a scan of the statics whose min on axis 0 sorts before each dynamic's max
 * (index and float tests agree on each). */
static vl_status ssap_validate_pairs(const vl_ssap* ss, const vl_bp_objects* o) {
    uint32_t live = ssap_count_live(ss, o, &ss->pm, 0);
    uint32_t live_ground = ss->ground_valid ? ssap_count_live(ss, o, &ss->ground, 1) : 0;
    if (live == VL_PM_NONE || live_ground == VL_PM_NONE) return VL_ERR_INVALID_ARGUMENT;
    uint64_t overlapping = 0, on_ground = 0;
    const vl_sap* sap = ss->dyn;
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++) {
        if (ep_is_max(sap->ep[0][i])) continue;
        uint32_t d = ep_owner(sap->ep[0][i]);
        const uint32_t* qd = ss->idx + (size_t)d * 6;
        for (uint32_t j = 1; j < qd[1]; j++) {
            uint32_t st = ep_owner(ss->ep[0][j]);
            int ground = ssap_on_ground(ss, d, st);
            int by_index = ground && vl_ssap_overlap_up(&o->boxes[d], &o->boxes[st]);
            if (by_index != vl_aabb_overlap(&o->boxes[d], &o->boxes[st])) return VL_ERR_INVALID_ARGUMENT;
            overlapping += (uint64_t)by_index;
            on_ground += (uint64_t)ground;
        }
    }
    if (ss->ground_valid && on_ground != live_ground) return VL_ERR_INVALID_ARGUMENT;
    return overlapping == live ? VL_OK : VL_ERR_INVALID_ARGUMENT;
}

vl_status vl_ssap_validate(const vl_broadphase* bp) {
    const vl_ssap* ss = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    uint32_t nd = 0, ns = 0;
    for (uint32_t h = 0; h < o->slot_count; h++)
        if (o->flags[h] & VL_OBJ_ALIVE) (o->flags[h] & VL_OBJ_STATIC) ? ns++ : nd++;
    if (nd != ss->n_dyn || ns != ss->n_static) return VL_ERR_INVALID_ARGUMENT;
    vl_broadphase inner = vl_ssap_view(bp);
    vl_status s = vl_sap_validate(&inner);
    if (s == VL_OK) s = ssap_validate_statics(ss, o);
    if (s == VL_OK) s = ssap_validate_ranks(ss, o);
    if (s == VL_OK) s = ssap_validate_pairs(ss, o);
    if (s != VL_OK) return s;
    /* after a commit, `all` lists both managers' pairs */
    const vl_pair_manager *pd = &ss->dyn->pm, *ps = &ss->pm;
    if (!pd->touched_count && !ps->touched_count) {
        if (ss->all.count != pd->count + ps->count) return VL_ERR_INVALID_ARGUMENT;
        if (pd->count && memcmp(ss->all.pairs, pd->pairs, pd->count * sizeof(vl_pair)) != 0)
            return VL_ERR_INVALID_ARGUMENT;
        if (ps->count && memcmp(ss->all.pairs + pd->count, ps->pairs, ps->count * sizeof(vl_pair)) != 0)
            return VL_ERR_INVALID_ARGUMENT;
    }
    return VL_OK;
}
