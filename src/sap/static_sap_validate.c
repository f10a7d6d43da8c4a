/* VL_BROADPHASE_STATIC_SAP: the check of every invariant. */
#include <string.h>

#include "sap/static_sap.h"
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
            const uint32_t *q = ss->idx + (size_t)owner * 6, *ot = ss->oth[l] + (size_t)i * 4;
            int j = a == 0 ? 2 : 0, k = a == 2 ? 2 : 4;
            if (ot[0] != q[j] || ot[1] != q[j + 1] || ot[2] != q[k] || ot[3] != q[k + 1]) return VL_ERR_INVALID_ARGUMENT;
            const vl_aabb* b = &o->boxes[owner];
            if (ep_value(e[i]) != vl_float_to_sortable(is_max ? b->max[a] : b->min[a])) return VL_ERR_INVALID_ARGUMENT;
            if (i > 1 && ep_value(e[i - 1]) > ep_value(e[i])) return VL_ERR_INVALID_ARGUMENT; /* owner order is free */
        }
    }
    if (ss->static_valid && ss->statics.n != ss->n_static) return VL_ERR_INVALID_ARGUMENT;
    return VL_OK;
}

/* Each dynamic endpoint's virtual index sits between the endpoints of the other kind that sort
 * before and after it (they never tie with it). */
static vl_status ssap_validate_ranks(const vl_ssap* ss, const vl_bp_objects* o) {
    const vl_sap* sap = ss->dyn;
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++) {
        if (ep_is_max(sap->ep[0][i])) continue;
        uint32_t d = ep_owner(sap->ep[0][i]);
        const vl_aabb* b = &o->boxes[d];
        for (int a = 0; a < 3; a++)
            for (uint32_t m = 0; m < 2; m++) {
                uint32_t v = ss->idx[(size_t)d * 6 + a * 2 + m];
                vl_endpoint key = ep_make(vl_float_to_sortable(m ? b->max[a] : b->min[a]), m, d);
                const vl_endpoint* e = ss->ep[a * 2 + !m];
                if (v < 1 || v >= ss->ep_count || e[v - 1] >= key || e[v] <= key) return VL_ERR_INVALID_ARGUMENT;
            }
    }
    return VL_OK;
}

/* Every live dynamic-static pair overlaps, and there are as many as overlapping pairs, counted by a
 * scan of the statics whose min on axis 0 sorts before each dynamic's max (index and float tests
 * agree on each). */
static vl_status ssap_validate_pairs(const vl_ssap* ss, const vl_bp_objects* o) {
    const vl_pair_manager* pm = &ss->pm;
    vl_status s = vl_pm_validate(pm);
    if (s != VL_OK) return s;
    uint64_t live = 0;
    for (uint32_t i = 0; i < pm->count; i++) {
        if (pm->flags[i] & VL_PM_REMOVED) continue;
        vl_pair p = pm->pairs[i];
        if (p.b >= o->slot_count || !(o->flags[p.a] & VL_OBJ_ALIVE) || !(o->flags[p.b] & VL_OBJ_ALIVE))
            return VL_ERR_INVALID_ARGUMENT;
        uint32_t d = (o->flags[p.a] & VL_OBJ_STATIC) ? p.b : p.a, st = d == p.a ? p.b : p.a;
        if ((o->flags[d] & VL_OBJ_STATIC) || !(o->flags[st] & VL_OBJ_STATIC)) return VL_ERR_INVALID_ARGUMENT;
        const uint32_t *qd = ss->idx + (size_t)d * 6, *qs = ss->idx + (size_t)st * 6;
        if (!vl_aabb_overlap(&o->boxes[d], &o->boxes[st]) || !ssap_overlap_axis(qd, qs, 0) ||
            !ssap_overlap_axis(qd, qs, 1) || !ssap_overlap_axis(qd, qs, 2))
            return VL_ERR_INVALID_ARGUMENT;
        live++;
    }
    uint64_t overlapping = 0;
    const vl_sap* sap = ss->dyn;
    for (uint32_t i = 1; i + 1 < sap->ep_count; i++) {
        if (ep_is_max(sap->ep[0][i])) continue;
        uint32_t d = ep_owner(sap->ep[0][i]);
        const uint32_t* qd = ss->idx + (size_t)d * 6;
        for (uint32_t j = 1; j < qd[1]; j++) {
            uint32_t st = ep_owner(ss->ep[0][j]);
            const uint32_t* qs = ss->idx + (size_t)st * 6;
            int by_index = ssap_overlap_axis(qd, qs, 0) && ssap_overlap_axis(qd, qs, 1) && ssap_overlap_axis(qd, qs, 2);
            if (by_index != vl_aabb_overlap(&o->boxes[d], &o->boxes[st])) return VL_ERR_INVALID_ARGUMENT;
            overlapping += (uint64_t)by_index;
        }
    }
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
