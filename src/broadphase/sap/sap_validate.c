/* VL_BROADPHASE_SAP: the check of every invariant. */
#include "broadphase/sap/sap.h"
#include "simd/kernels.h"

vl_status vl_sap_validate(const vl_broadphase* bp) {
    const vl_sap* sap = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    const uint32_t* pos = sap->pos;
    uint32_t n = sap->ep_count;
    if (n != 2 * o->alive + 2) return VL_ERR_INVALID_ARGUMENT;
    for (int a = 0; a < 3; a++) {
        const vl_endpoint* e = sap->ep[a];
        if (e[0] != VL_SAP_LOW_SENTINEL || e[n - 1] != VL_SAP_HIGH_SENTINEL) return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t i = 1; i + 1 < n; i++) {
            uint32_t owner = ep_owner(e[i]), is_max = ep_is_max(e[i]);
            if (owner >= o->slot_count || !(o->flags[owner] & VL_OBJ_ALIVE)) return VL_ERR_INVALID_ARGUMENT;
            if (pos[(size_t)owner * 6 + a * 2 + is_max] != i) return VL_ERR_INVALID_ARGUMENT;
            const vl_aabb* b = &o->boxes[owner];
            if (ep_value(e[i]) != vl_float_to_sortable(is_max ? b->max[a] : b->min[a])) return VL_ERR_INVALID_ARGUMENT;
            if ((e[i - 1] >> 31) > (e[i] >> 31)) return VL_ERR_INVALID_ARGUMENT; /* owner order is free */
        }
    }
    vl_status s = vl_pm_validate(&sap->pm);
    if (s != VL_OK) return s;
    /* every live pair overlaps, and there are as many as overlapping pairs */
    uint64_t live = 0;
    for (uint32_t i = 0; i < sap->pm.count; i++) {
        if (sap->pm.flags[i] & VL_PM_REMOVED) continue;
        vl_pair p = sap->pm.pairs[i];
        if (p.b >= o->slot_count || !(o->flags[p.a] & VL_OBJ_ALIVE) || !(o->flags[p.b] & VL_OBJ_ALIVE) ||
            !vl_bp_may_pair(o, p.a, p.b) || !vl_aabb_overlap(&o->boxes[p.a], &o->boxes[p.b]) ||
            !sap_overlap2(pos, p.a, p.b, 0) || !sap_overlap2(pos, p.a, p.b, 1))
            return VL_ERR_INVALID_ARGUMENT;
        live++;
    }
    uint64_t overlapping = 0;
    const vl_endpoint* e = sap->ep[0];
    for (uint32_t i = 1; i + 1 < n; i++) {
        if (ep_is_max(e[i])) continue;
        uint32_t a = ep_owner(e[i]);
        for (uint32_t j = i + 1; j < pos[(size_t)a * 6 + 1]; j++) {
            uint32_t b = ep_owner(e[j]);
            if (!ep_is_max(e[j]) && sap_overlap2(pos, a, b, 0) && vl_bp_may_pair(o, a, b)) overlapping++;
        }
    }
    return overlapping == live ? VL_OK : VL_ERR_INVALID_ARGUMENT;
}

