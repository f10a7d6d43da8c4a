/* VL_BROADPHASE_GRID: life cycle, cell size, the hash of cells, and the commit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broadphase/grid/grid.h"

static vl_status grid_create(vl_broadphase* bp) {
    const vl_broadphase_desc* d = &bp->desc;
    if (d->up_axis > 3 || !(d->cell_size >= 0) || isinf(d->cell_size) || d->grid_cells > 256)
        return VL_ERR_INVALID_ARGUMENT;
    vl_grid* g = vl_mem_calloc(sizeof *g);
    if (!g) return VL_ERR_OUT_OF_MEMORY;
    vl_pm_init(&g->pm, 0);
    bp->impl = g;
    return VL_OK;
}

static void grid_destroy(vl_broadphase* bp) {
    vl_grid* g = bp->impl;
    for (uint32_t c = 0; c < g->cell_count; c++)
        VL_ARRAY_FREE(g->cells[c].member, g->cells[c].cap);
    VL_ARRAY_FREE(g->cells, g->cells_cap);
    vl_mem_free(g->keys, (size_t)g->table_cap * sizeof *g->keys);
    vl_mem_free(g->vals, (size_t)g->table_cap * sizeof *g->vals);
    VL_ARRAY_FREE(g->cls, g->cls_cap);
    VL_ARRAY_FREE(g->co, g->co_cap);
    VL_ARRAY_FREE(g->cell, g->cell_cap);
    VL_ARRAY_FREE(g->movers, g->movers_cap);
    VL_ARRAY_FREE(g->ovf, g->ovf_cap);
    VL_ARRAY_FREE(g->ovf_at, g->ovf_at_cap);
    VL_ARRAY_FREE(g->new_co, g->new_co_cap);
    vl_pair_buffer_free(&g->found);
    vl_pm_free(&g->pm);
    vl_mem_free(g, sizeof *g);
}

static void grid_mark(vl_grid* g, const uint32_t* handles, uint32_t count) {
    uint8_t* cls = g->cls;
    uint32_t* movers = g->movers;
    uint32_t n = g->mover_count;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        movers[n] = h;
        n += !(cls[h] & VL_GRID_MOVED);
        cls[h] |= VL_GRID_MOVED;
    }
    g->mover_count = n;
}

static vl_status grid_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_grid* g = bp->impl;
    uint64_t slots = bp->objects.slot_count;
    uint32_t old_cls = g->cls_cap;
    vl_status s = VL_ARRAY_RESERVE(g->cls, g->cls_cap, old_cls, slots);
    if (s == VL_OK && g->cls_cap > old_cls) memset(g->cls + old_cls, 0, g->cls_cap - old_cls);
    uint32_t old_cell = g->cell_cap;
    if (s == VL_OK) s = VL_ARRAY_RESERVE(g->cell, g->cell_cap, old_cell, slots * VL_GRID_CELLS);
    if (s == VL_OK && g->cell_cap > old_cell)
        memset(g->cell + old_cell, 0xFF, (size_t)(g->cell_cap - old_cell) * sizeof(uint32_t));
    if (s == VL_OK) s = VL_ARRAY_RESERVE(g->co, g->co_cap, g->co_cap, slots * 6);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(g->ovf_at, g->ovf_at_cap, g->ovf_at_cap, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(g->ovf, g->ovf_cap, g->ovf_count, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(g->movers, g->movers_cap, g->mover_count, slots + 1);
    if (s != VL_OK) return s;
    /* a slot reused after a commit has cls 0; one removed and added back in the same period (a
     * set_static flip) keeps its memberships and stays listed once */
    grid_mark(g, handles, count);
    return VL_OK;
}

static vl_status grid_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_aabb* dst = bp->objects.boxes;
    for (uint32_t i = 0; i < count; i++) dst[handles[i]] = boxes[i];
    grid_mark(bp->impl, handles, count);
    return VL_OK;
}

static void grid_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    grid_mark(bp->impl, handles, count);
}

static int cmp_float(const void* a, const void* b) {
    float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

/* Cell side: the desc's, else the 99th percentile of the largest finite extent of (sampled) boxes.
 * Origin, per axis: the multiple of the side at or below the centre of the first live box whose
 * centre is finite there (else 0), so that the 2^20 cells on each side of it lie around the boxes
 * however far from 0 they are. */
static void grid_choose_size(vl_grid* g, const vl_broadphase* bp) {
    const vl_bp_objects* o = &bp->objects;
    double side = bp->desc.cell_size;
    if (!(side > 0)) {
        float sample[VL_GRID_SAMPLES];
        uint32_t n = 0, step = o->slot_count / VL_GRID_SAMPLES + 1;
        for (uint32_t h = 0; h < o->slot_count && n < VL_GRID_SAMPLES; h += step) {
            if (!(o->flags[h] & VL_OBJ_ALIVE)) continue;
            float e = 0;
            for (int a = 0; a < 3; a++) {
                float x = o->boxes[h].max[a] - o->boxes[h].min[a];
                if (isfinite(x) && x > e) e = x;
            }
            sample[n++] = e;
        }
        qsort(sample, n, sizeof *sample, cmp_float);
        side = n ? sample[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] : 1;
        if (!(side > 1e-20)) side = 1;
    }
    g->inv = 1.0 / side;
    uint32_t placed = 0; /* axes whose origin is set */
    for (int a = 0; a < 3; a++) g->origin[a] = 0.0;
    for (uint32_t h = 0; h < o->slot_count && placed != 7u; h++) {
        if (!(o->flags[h] & VL_OBJ_ALIVE)) continue;
        for (int a = 0; a < 3; a++) {
            double cell = floor(0.5 * ((double)o->boxes[h].min[a] + (double)o->boxes[h].max[a]) * g->inv);
            if ((placed >> a & 1u) || !(fabs(cell) < 0x1p52)) continue; /* NaN and infinities too */
            g->origin[a] = cell * side;
            placed |= 1u << a;
        }
    }
    g->ready = 1;
}

/* ---- the hash of cells ------------------------------------------------------------------ */

uint32_t vl_grid_find(const vl_grid* g, uint64_t key) {
    if (!g->table_cap) return VL_GRID_NONE;
    uint32_t mask = g->table_cap - 1;
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    for (uint32_t i = (uint32_t)(h >> 32) & mask;; i = (i + 1) & mask) {
        if (g->keys[i] == key) return g->vals[i];
        if (g->keys[i] == VL_GRID_EMPTY) return VL_GRID_NONE;
    }
}

/* Room for `extra` more cells (table load at most one half). */
static vl_status grid_reserve_cells(vl_grid* g, uint64_t extra) {
    uint64_t need = (uint64_t)g->cell_count + extra;
    vl_status s = VL_ARRAY_RESERVE(g->cells, g->cells_cap, g->cell_count, need);
    if (s != VL_OK || need * 2 <= g->table_cap) return s;
    uint32_t cap = g->table_cap ? g->table_cap : 64;
    while ((uint64_t)cap < need * 2) cap *= 2;
    uint64_t* keys = vl_mem_alloc((size_t)cap * sizeof *keys);
    uint32_t* vals = vl_mem_alloc((size_t)cap * sizeof *vals);
    if (!keys || !vals) {
        vl_mem_free(keys, (size_t)cap * sizeof *keys);
        vl_mem_free(vals, (size_t)cap * sizeof *vals);
        return VL_ERR_OUT_OF_MEMORY;
    }
    memset(keys, 0xFF, (size_t)cap * sizeof *keys);
    for (uint32_t i = 0; i < g->table_cap; i++) {
        if (g->keys[i] == VL_GRID_EMPTY) continue;
        uint64_t h = g->keys[i] * 0x9E3779B97F4A7C15ull;
        uint32_t j = (uint32_t)(h >> 32) & (cap - 1);
        while (keys[j] != VL_GRID_EMPTY) j = (j + 1) & (cap - 1);
        keys[j] = g->keys[i];
        vals[j] = g->vals[i];
    }
    vl_mem_free(g->keys, (size_t)g->table_cap * sizeof *g->keys);
    vl_mem_free(g->vals, (size_t)g->table_cap * sizeof *g->vals);
    g->keys = keys;
    g->vals = vals;
    g->table_cap = cap;
    return VL_OK;
}

/* The cell at (x, y, z), made (empty) when missing; room reserved by grid_reserve_cells. */
static uint32_t grid_cell_at(vl_grid* g, uint32_t x, uint32_t y, uint32_t z) {
    uint64_t key = vl_grid_key(x, y, z);
    uint32_t mask = g->table_cap - 1;
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 32) & mask;
    for (; g->keys[i] != VL_GRID_EMPTY; i = (i + 1) & mask)
        if (g->keys[i] == key) return g->vals[i];
    uint32_t c = g->cell_count++;
    g->keys[i] = key;
    g->vals[i] = c;
    g->table_used++;
    memset(&g->cells[c], 0, sizeof g->cells[c]);
    g->cells[c].co[0] = x, g->cells[c].co[1] = y, g->cells[c].co[2] = z;
    return c;
}

/* ---- commit ------------------------------------------------------------------------------ */

static inline int co_inside(const uint32_t* co, uint32_t x, uint32_t y, uint32_t z) {
    return x >= co[0] && x <= co[3] && y >= co[1] && y <= co[4] && z >= co[2] && z <= co[5];
}

/* New coordinates of the movers; cells made and room for the members entering them. Changes
 * nothing visible: a cell made and left empty is harmless. */
static vl_status grid_plan(vl_grid* g, const vl_bp_objects* o) {
    uint32_t m = g->mover_count;
    vl_status s = VL_ARRAY_RESERVE(g->new_co, g->new_co_cap, 0, 6ull * m + 6);
    if (s != VL_OK) return s;
    uint64_t entering = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t h = g->movers[i], *co = g->new_co + 6ull * i;
        if (!(o->flags[h] & VL_OBJ_ALIVE) || !vl_grid_footprint(g, &o->boxes[h], co)) {
            co[0] = VL_GRID_NONE;
            continue;
        }
        entering += (uint64_t)(co[3] - co[0] + 1) * (co[4] - co[1] + 1) * (co[5] - co[2] + 1);
    }
    s = grid_reserve_cells(g, entering);
    if (s != VL_OK) return s;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < m && s == VL_OK; i++) {
            uint32_t h = g->movers[i];
            const uint32_t *co = g->new_co + 6ull * i, *old = g->co + 6ull * h;
            int had = (g->cls[h] & VL_GRID_IN_CELLS) != 0;
            if (co[0] == VL_GRID_NONE) continue;
            for (uint32_t x = co[0]; x <= co[3] && s == VL_OK; x++)
                for (uint32_t y = co[1]; y <= co[4] && s == VL_OK; y++)
                    for (uint32_t z = co[2]; z <= co[5] && s == VL_OK; z++) {
                        if (had && co_inside(old, x, y, z)) continue;
                        vl_grid_cell* c = &g->cells[grid_cell_at(g, x, y, z)];
                        if (pass == 0) {
                            c->pending++;
                        } else if (c->pending) {
                            s = VL_ARRAY_RESERVE(c->member, c->cap, c->n, (uint64_t)c->n + c->pending);
                            c->pending = 0;
                        }
                    }
        }
    if (s != VL_OK) /* pending counts left behind are cleared */
        for (uint32_t c = 0; c < g->cell_count; c++) g->cells[c].pending = 0;
    return s;
}

static void cell_drop(vl_grid_cell* c, uint32_t h) {
    for (uint32_t i = 0; i < c->n; i++)
        if (c->member[i] == h) {
            c->member[i] = c->member[--c->n];
            return;
        }
}

/* Moves the memberships and the overflow set to the movers' new boxes. Cannot fail. */
static void grid_apply(vl_grid* g, const vl_bp_objects* o) {
    for (uint32_t i = 0; i < g->mover_count; i++) {
        uint32_t h = g->movers[i], *cells = g->cell + (size_t)h * VL_GRID_CELLS;
        const uint32_t* co = g->new_co + 6ull * i;
        uint32_t* old = g->co + 6ull * h;
        int now_cells = co[0] != VL_GRID_NONE;
        uint32_t kept = 0;
        for (uint32_t k = 0; k < VL_GRID_CELLS && cells[k] != VL_GRID_NONE; k++) {
            vl_grid_cell* c = &g->cells[cells[k]];
            if (now_cells && co_inside(co, c->co[0], c->co[1], c->co[2]))
                cells[kept++] = cells[k];
            else
                cell_drop(c, h);
        }
        for (uint32_t k = kept; k < VL_GRID_CELLS; k++) cells[k] = VL_GRID_NONE;
        int had = (g->cls[h] & VL_GRID_IN_CELLS) != 0;
        if (now_cells) {
            for (uint32_t x = co[0]; x <= co[3]; x++)
                for (uint32_t y = co[1]; y <= co[4]; y++)
                    for (uint32_t z = co[2]; z <= co[5]; z++) {
                        if (had && co_inside(old, x, y, z)) continue;
                        uint32_t c = vl_grid_find(g, vl_grid_key(x, y, z));
                        g->cells[c].member[g->cells[c].n++] = h;
                        cells[kept++] = c;
                    }
            memcpy(old, co, 6 * sizeof *co);
        }
        uint8_t was_ovf = g->cls[h] & VL_GRID_IN_OVF;
        uint8_t now = !(o->flags[h] & VL_OBJ_ALIVE) ? 0 : now_cells ? VL_GRID_IN_CELLS : VL_GRID_IN_OVF;
        if (was_ovf && now != VL_GRID_IN_OVF) {
            uint32_t at = g->ovf_at[h], last = g->ovf[--g->ovf_count];
            g->ovf[at] = last;
            g->ovf_at[last] = at;
        } else if (!was_ovf && now == VL_GRID_IN_OVF) {
            g->ovf_at[h] = g->ovf_count;
            g->ovf[g->ovf_count++] = h;
        }
        g->cls[h] = (uint8_t)(now | VL_GRID_MOVED);
    }
}

static inline uint32_t max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* Every pair with a moved end, once each: a pair of two movers from the lower handle, in the one
 * cell where both boxes' first cells meet. */
static vl_status grid_find_pairs(vl_grid* g, const vl_bp_objects* o) {
    vl_pair_buffer* out = &g->found;
    out->count = 0;
    const vl_aabb* boxes = o->boxes;
    const uint8_t* cls = g->cls;
    for (uint32_t i = 0; i < g->mover_count; i++) {
        uint32_t m = g->movers[i];
        uint8_t cm = cls[m];
        if (cm & VL_GRID_IN_CELLS) {
            const uint32_t *cells = g->cell + (size_t)m * VL_GRID_CELLS, *cm_co = g->co + 6ull * m;
            for (uint32_t k = 0; k < VL_GRID_CELLS && cells[k] != VL_GRID_NONE; k++) {
                const vl_grid_cell* c = &g->cells[cells[k]];
                for (uint32_t j = 0; j < c->n; j++) {
                    uint32_t x = c->member[j];
                    if (x == m || ((cls[x] & VL_GRID_MOVED) && x < m)) continue;
                    const uint32_t* cx = g->co + 6ull * x;
                    if (max_u32(cm_co[0], cx[0]) != c->co[0] || max_u32(cm_co[1], cx[1]) != c->co[1] ||
                        max_u32(cm_co[2], cx[2]) != c->co[2])
                        continue;
                    if (vl_bp_may_pair(o, m, x) && vl_aabb_overlap(&boxes[m], &boxes[x]) &&
                        vl_pair_buffer_push(out, m, x) != VL_OK)
                        return VL_ERR_OUT_OF_MEMORY;
                }
            }
            for (uint32_t j = 0; j < g->ovf_count; j++) {
                uint32_t y = g->ovf[j];
                if (!(cls[y] & VL_GRID_MOVED) && vl_bp_may_pair(o, m, y) && vl_aabb_overlap(&boxes[m], &boxes[y]) &&
                    vl_pair_buffer_push(out, m, y) != VL_OK)
                    return VL_ERR_OUT_OF_MEMORY;
            }
        } else if (cm & VL_GRID_IN_OVF) {
            for (uint32_t y = 0; y < o->slot_count; y++) {
                if (y == m || !(o->flags[y] & VL_OBJ_ALIVE)) continue;
                if ((cls[y] & VL_GRID_IN_OVF) && (cls[y] & VL_GRID_MOVED) && y < m) continue;
                if (vl_bp_may_pair(o, m, y) && vl_aabb_overlap(&boxes[m], &boxes[y]) &&
                    vl_pair_buffer_push(out, m, y) != VL_OK)
                    return VL_ERR_OUT_OF_MEMORY;
            }
        }
    }
    return VL_OK;
}

static vl_status grid_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    vl_grid* g = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    if (g->mover_count) {
        if (!g->ready && o->alive) grid_choose_size(g, bp);
        vl_status s = VL_OK;
        g->found.count = 0;
        if (g->ready) {
            s = grid_plan(g, o);
            if (s != VL_OK) return s;
            /* memberships move now; a later failure leaves the movers for the next commit */
            grid_apply(g, o);
            s = grid_find_pairs(g, o);
        }
        if (s == VL_OK) s = vl_pm_reserve(&g->pm, g->found.count);
        if (s != VL_OK) return s;
        vl_pm_remove_owners(&g->pm, g->cls, VL_GRID_MOVED);
        for (uint32_t i = 0; i < g->found.count; i++) vl_pm_add(&g->pm, g->found.pairs[i].a, g->found.pairs[i].b);
        for (uint32_t i = 0; i < g->mover_count; i++) {
            uint32_t h = g->movers[i];
            g->cls[h] = (o->flags[h] & VL_OBJ_ALIVE) ? (uint8_t)(g->cls[h] & ~VL_GRID_MOVED) : 0;
        }
        g->mover_count = 0;
    }
    return vl_pm_commit(&g->pm, created, deleted);
}

static const vl_pair* grid_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_grid* g = bp->impl;
    *count = g->pm.count;
    return g->pm.pairs;
}

const vl_broadphase_ops vl_grid_ops = {
    .create = grid_create,
    .destroy = grid_destroy,
    .add = grid_add,
    .update = grid_update,
    .remove = grid_remove,
    .commit = grid_commit,
    .pairs = grid_pairs,
    .validate = vl_grid_validate,
};
