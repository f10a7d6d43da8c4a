/* VL_BROADPHASE_MULTI_SAP: every pair from scratch (the merge's rescan, the check), and the check of
 * every invariant. */
#include <string.h>

#include "broadphase/multi_sap/multi_sap.h"

uint64_t vl_msap_all_pairs(const vl_msap* ms, const vl_bp_objects* o, vl_pair_manager* add_to) {
    uint64_t found = 0;
    const vl_aabb* boxes = o->boxes;
    for (uint32_t c = 0; c < ms->cell_count; c++) {
        const vl_msap_cell* cell = &ms->cells[c];
        uint32_t cu = c % ms->cells_n[0], cv = c / ms->cells_n[0];
        for (uint32_t i = 0; i < cell->n; i++)
            for (uint32_t j = i + 1; j < cell->n; j++) {
                uint32_t a = cell->id[i], b = cell->id[j];
                const uint32_t *ra = ms->range + 4ull * a, *rb = ms->range + 4ull * b;
                /* the one cell where both footprints start: the intersection's low corner */
                if ((ra[0] > rb[0] ? ra[0] : rb[0]) != cu || (ra[1] > rb[1] ? ra[1] : rb[1]) != cv) continue;
                if (!vl_bp_may_pair(o, a, b) || !vl_aabb_overlap(&boxes[a], &boxes[b])) continue;
                found++;
                if (add_to) vl_pm_add(add_to, a, b);
            }
    }
    for (uint32_t i = 0; i < ms->ovf_count; i++) {
        uint32_t x = ms->ovf[i];
        for (uint32_t y = 0; y < o->slot_count; y++) {
            if (y == x || !(o->flags[y] & VL_OBJ_ALIVE)) continue;
            if ((ms->cls[y] & VL_MSAP_IN_OVF) && y < x) continue; /* counted from y */
            if (!vl_bp_may_pair(o, x, y) || !vl_aabb_overlap(&boxes[x], &boxes[y])) continue;
            found++;
            if (add_to) vl_pm_add(add_to, x, y);
        }
    }
    return found;
}

vl_status vl_msap_validate(const vl_broadphase* bp) {
    const vl_msap* ms = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    vl_status s = vl_pm_validate(&ms->pm);
    if (s != VL_OK) return s;
    /* movers listed once each, and exactly the slots flagged */
    uint32_t flagged = 0;
    for (uint32_t h = 0; h < o->slot_count; h++) flagged += (ms->cls[h] & VL_MSAP_MOVED) != 0;
    if (flagged != ms->mover_count) return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < ms->mover_count; i++)
        if (ms->movers[i] >= o->slot_count || !(ms->cls[ms->movers[i]] & VL_MSAP_MOVED)) return VL_ERR_INVALID_ARGUMENT;
    /* the overflow set and its back-references */
    for (uint32_t i = 0; i < ms->ovf_count; i++) {
        uint32_t x = ms->ovf[i];
        if (x >= o->slot_count || ms->ovf_at[x] != i || !(ms->cls[x] & VL_MSAP_IN_OVF)) return VL_ERR_INVALID_ARGUMENT;
    }
    /* each settled object: in its footprint's cells exactly (or in the overflow set), and nowhere else */
    uint64_t members = 0, ovf = 0;
    for (uint32_t h = 0; h < o->slot_count; h++) {
        uint8_t f = ms->cls[h];
        const vl_msap_entry* e = ms->ent + (size_t)h * VL_MSAP_ENTRIES;
        uint32_t listed = 0;
        for (uint32_t k = 0; k < VL_MSAP_ENTRIES; k++) {
            if (e[k].cell == VL_MSAP_NONE) continue;
            if (e[k].cell >= ms->cell_count || e[k].local >= ms->cells[e[k].cell].n ||
                ms->cells[e[k].cell].id[e[k].local] != h)
                return VL_ERR_INVALID_ARGUMENT;
            listed++;
        }
        members += listed;
        ovf += (f & VL_MSAP_IN_OVF) != 0;
        if ((f & VL_MSAP_IN_CELLS) && (f & VL_MSAP_IN_OVF)) return VL_ERR_INVALID_ARGUMENT;
        if (f & VL_MSAP_MOVED) continue; /* its cells wait for the commit */
        if (!(o->flags[h] & VL_OBJ_ALIVE)) {
            if (f || listed) return VL_ERR_INVALID_ARGUMENT;
            continue;
        }
        uint32_t r[4];
        int fits = vl_msap_footprint(ms, &o->boxes[h], r);
        if (!ms->ready || fits != ((f & VL_MSAP_IN_CELLS) != 0) || fits == ((f & VL_MSAP_IN_OVF) != 0))
            return VL_ERR_INVALID_ARGUMENT;
        if (!fits) {
            if (listed) return VL_ERR_INVALID_ARGUMENT;
            continue;
        }
        if (memcmp(&ms->held[h], &o->boxes[h], sizeof(vl_aabb)) != 0) return VL_ERR_INVALID_ARGUMENT;
        const uint32_t* have = ms->range + 4ull * h;
        if (have[0] != r[0] || have[1] != r[1] || have[2] != r[2] || have[3] != r[3] ||
            listed != (r[2] - r[0] + 1) * (r[3] - r[1] + 1))
            return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t k = 0; k < VL_MSAP_ENTRIES; k++) {
            if (e[k].cell == VL_MSAP_NONE) continue;
            uint32_t cu = e[k].cell % ms->cells_n[0], cv = e[k].cell / ms->cells_n[0];
            if (cu < r[0] || cu > r[2] || cv < r[1] || cv > r[3]) return VL_ERR_INVALID_ARGUMENT;
        }
    }
    if (ovf != ms->ovf_count) return VL_ERR_INVALID_ARGUMENT;
    uint64_t cell_members = 0;
    for (uint32_t c = 0; c < ms->cell_count; c++) {
        if (ms->cells[c].index != c) return VL_ERR_INVALID_ARGUMENT;
        s = vl_msap_cell_validate(&ms->cells[c], o, ms->cls, ms->ent);
        if (s != VL_OK) return s;
        cell_members += ms->cells[c].n;
    }
    if (cell_members != members) return VL_ERR_INVALID_ARGUMENT;
    /* with nothing pending, the pair set is exactly the overlapping pairs */
    if (ms->mover_count || ms->rescan || ms->ovf_out.count) return VL_OK;
    uint64_t live = 0;
    for (uint32_t i = 0; i < ms->pm.count; i++) {
        if (ms->pm.flags[i] & VL_PM_REMOVED) continue;
        vl_pair p = ms->pm.pairs[i];
        if (p.b >= o->slot_count || !(o->flags[p.a] & o->flags[p.b] & VL_OBJ_ALIVE) || !vl_bp_may_pair(o, p.a, p.b) ||
            !vl_aabb_overlap(&o->boxes[p.a], &o->boxes[p.b]))
            return VL_ERR_INVALID_ARGUMENT;
        live++;
    }
    for (uint32_t c = 0; c < ms->cell_count; c++)
        if (ms->cells[c].out.count || ms->cells[c].lost) return VL_OK; /* candidates wait for a merge */
    return vl_msap_all_pairs(ms, o, NULL) == live ? VL_OK : VL_ERR_INVALID_ARGUMENT;
}
