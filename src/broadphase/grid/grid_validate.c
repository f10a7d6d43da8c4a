/* VL_BROADPHASE_GRID: every pair from scratch, and the check of every invariant. */
#include "broadphase/grid/grid.h"

static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

uint64_t vl_grid_all_pairs(const vl_grid* g, const vl_bp_objects* o, vl_pair_manager* add_to) {
    uint64_t found = 0;
    const vl_aabb* boxes = o->boxes;
    for (uint32_t c = 0; c < g->cell_count; c++) {
        const vl_grid_cell* cell = &g->cells[c];
        for (uint32_t i = 0; i < cell->n; i++)
            for (uint32_t j = i + 1; j < cell->n; j++) {
                uint32_t a = cell->member[i], b = cell->member[j];
                const uint32_t *ca = g->co + 6ull * a, *cb = g->co + 6ull * b;
                if (max_u32(ca[0], cb[0]) != cell->co[0] || max_u32(ca[1], cb[1]) != cell->co[1] ||
                    max_u32(ca[2], cb[2]) != cell->co[2])
                    continue;
                if (!vl_bp_may_pair(o, a, b) || !vl_aabb_overlap(&boxes[a], &boxes[b])) continue;
                found++;
                if (add_to) vl_pm_add(add_to, a, b);
            }
    }
    for (uint32_t i = 0; i < g->ovf_count; i++) {
        uint32_t x = g->ovf[i];
        for (uint32_t y = 0; y < o->slot_count; y++) {
            if (y == x || !(o->flags[y] & VL_OBJ_ALIVE)) continue;
            if ((g->cls[y] & VL_GRID_IN_OVF) && y < x) continue;
            if (!vl_bp_may_pair(o, x, y) || !vl_aabb_overlap(&boxes[x], &boxes[y])) continue;
            found++;
            if (add_to) vl_pm_add(add_to, x, y);
        }
    }
    return found;
}

vl_status vl_grid_validate(const vl_broadphase* bp) {
    const vl_grid* g = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    vl_status s = vl_pm_validate(&g->pm);
    if (s != VL_OK) return s;
    uint32_t flagged = 0;
    for (uint32_t h = 0; h < o->slot_count; h++) flagged += (g->cls[h] & VL_GRID_MOVED) != 0;
    if (flagged != g->mover_count) return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < g->mover_count; i++)
        if (g->movers[i] >= o->slot_count || !(g->cls[g->movers[i]] & VL_GRID_MOVED)) return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < g->ovf_count; i++) {
        uint32_t x = g->ovf[i];
        if (x >= o->slot_count || g->ovf_at[x] != i || !(g->cls[x] & VL_GRID_IN_OVF)) return VL_ERR_INVALID_ARGUMENT;
    }
    /* the hash: every cell found under its own coordinates, table load at most one half */
    if ((uint64_t)g->table_used != g->cell_count || (g->table_cap && (uint64_t)g->cell_count * 2 > g->table_cap))
        return VL_ERR_INVALID_ARGUMENT;
    uint64_t members = 0;
    for (uint32_t c = 0; c < g->cell_count; c++) {
        const vl_grid_cell* cell = &g->cells[c];
        if (vl_grid_find(g, vl_grid_key(cell->co[0], cell->co[1], cell->co[2])) != c || cell->n > cell->cap ||
            cell->pending)
            return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t i = 0; i < cell->n; i++) {
            uint32_t h = cell->member[i], listed = 0;
            if (h >= o->slot_count) return VL_ERR_INVALID_ARGUMENT;
            /* a branch, not `listed += (x == c)`: gcc 12 for aarch64 vectorizes that sum as one of -1s */
            for (uint32_t k = 0; k < VL_GRID_CELLS; k++)
                if (g->cell[(size_t)h * VL_GRID_CELLS + k] == c) listed++;
            if (listed != 1) return VL_ERR_INVALID_ARGUMENT;
        }
        members += cell->n;
    }
    uint64_t listed_all = 0, ovf = 0;
    for (uint32_t h = 0; h < o->slot_count; h++) {
        uint8_t f = g->cls[h];
        const uint32_t* cells = g->cell + (size_t)h * VL_GRID_CELLS;
        uint32_t listed = 0;
        for (uint32_t k = 0; k < VL_GRID_CELLS; k++)
            if (cells[k] != VL_GRID_NONE) {
                if (cells[k] >= g->cell_count || k != listed) return VL_ERR_INVALID_ARGUMENT;
                listed++;
            }
        listed_all += listed;
        ovf += (f & VL_GRID_IN_OVF) != 0;
        if ((f & VL_GRID_IN_CELLS) && (f & VL_GRID_IN_OVF)) return VL_ERR_INVALID_ARGUMENT;
        if (f & VL_GRID_MOVED) continue;
        if (!(o->flags[h] & VL_OBJ_ALIVE)) {
            if (f || listed) return VL_ERR_INVALID_ARGUMENT;
            continue;
        }
        uint32_t co[6];
        int fits = vl_grid_footprint(g, &o->boxes[h], co);
        if (!g->ready || fits != ((f & VL_GRID_IN_CELLS) != 0) || fits == ((f & VL_GRID_IN_OVF) != 0))
            return VL_ERR_INVALID_ARGUMENT;
        if (!fits) {
            if (listed) return VL_ERR_INVALID_ARGUMENT;
            continue;
        }
        const uint32_t* have = g->co + 6ull * h;
        for (int a = 0; a < 6; a++)
            if (have[a] != co[a]) return VL_ERR_INVALID_ARGUMENT;
        if (listed != (co[3] - co[0] + 1) * (co[4] - co[1] + 1) * (co[5] - co[2] + 1)) return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t k = 0; k < listed; k++) {
            const uint32_t* cc = g->cells[cells[k]].co;
            if (cc[0] < co[0] || cc[0] > co[3] || cc[1] < co[1] || cc[1] > co[4] || cc[2] < co[2] || cc[2] > co[5])
                return VL_ERR_INVALID_ARGUMENT;
        }
    }
    if (listed_all != members || ovf != g->ovf_count) return VL_ERR_INVALID_ARGUMENT;
    if (g->mover_count) return VL_OK; /* the pairs wait for the commit */
    uint64_t live = 0;
    for (uint32_t i = 0; i < g->pm.count; i++) {
        if (g->pm.flags[i] & VL_PM_REMOVED) continue;
        vl_pair p = g->pm.pairs[i];
        if (p.b >= o->slot_count || !(o->flags[p.a] & o->flags[p.b] & VL_OBJ_ALIVE) || !vl_bp_may_pair(o, p.a, p.b) ||
            !vl_aabb_overlap(&o->boxes[p.a], &o->boxes[p.b]))
            return VL_ERR_INVALID_ARGUMENT;
        live++;
    }
    return vl_grid_all_pairs(g, o, NULL) == live ? VL_OK : VL_ERR_INVALID_ARGUMENT;
}
