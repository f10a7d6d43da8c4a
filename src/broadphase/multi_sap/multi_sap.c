/* VL_BROADPHASE_MULTI_SAP: life cycle, layout, and the commit (queue, cells, overflow, merge). */
#include <math.h>
#include <string.h>

#include "box_prune/axis_stats.h"
#include "broadphase/multi_sap/multi_sap.h"
#include "compiler.h"
#include "core/tasks.h"

static vl_status msap_create(vl_broadphase* bp) {
    const vl_broadphase_desc* d = &bp->desc;
    if (d->up_axis > 3 || !(d->cell_size >= 0) || isinf(d->cell_size) || d->grid_cells > VL_MSAP_MAX_AXIS)
        return VL_ERR_INVALID_ARGUMENT;
    vl_msap* ms = vl_mem_calloc(sizeof *ms);
    if (!ms) return VL_ERR_OUT_OF_MEMORY;
    vl_pm_init(&ms->pm, 0);
    bp->impl = ms;
    return VL_OK;
}

static void msap_destroy(vl_broadphase* bp) {
    vl_msap* ms = bp->impl;
    for (uint32_t c = 0; c < ms->cell_count; c++) vl_msap_cell_free(&ms->cells[c]);
    vl_mem_free(ms->cells, (size_t)ms->cell_count * sizeof *ms->cells);
    VL_ARRAY_FREE(ms->cls, ms->cls_cap);
    VL_ARRAY_FREE(ms->ent, ms->ent_cap);
    VL_ARRAY_FREE(ms->range, ms->range_cap);
    VL_ARRAY_FREE(ms->ovf_at, ms->ovf_at_cap);
    VL_ARRAY_FREE(ms->held, ms->held_cap);
    VL_ARRAY_FREE(ms->movers, ms->movers_cap);
    VL_ARRAY_FREE(ms->ovf, ms->ovf_cap);
    VL_ARRAY_FREE(ms->new_range, ms->new_range_cap);
    VL_ARRAY_FREE(ms->start, ms->start_cap);
    VL_ARRAY_FREE(ms->ops, ms->ops_cap);
    VL_ARRAY_FREE(ms->op_cell, ms->op_cell_cap);
    VL_ARRAY_FREE(ms->block_ops, ms->block_ops_cap);
    VL_ARRAY_FREE(ms->block_ovf, ms->block_ovf_cap);
    VL_ARRAY_FREE(ms->order, ms->order_cap);
    VL_ARRAY_FREE(ms->busy, ms->busy_cap);
    vl_pair_buffer_free(&ms->ovf_out);
    vl_pm_free(&ms->pm);
    vl_mem_free(ms, sizeof *ms);
}

/* Lists the slots not listed yet (branch-free: written past the end, kept when new). */
static void msap_mark(vl_msap* ms, const uint32_t* handles, uint32_t count) {
    uint8_t* cls = ms->cls;
    uint32_t* movers = ms->movers;
    uint32_t n = ms->mover_count;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        movers[n] = h;
        n += !(cls[h] & VL_MSAP_MOVED);
        cls[h] |= VL_MSAP_MOVED;
    }
    ms->mover_count = n;
}

static vl_status msap_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_msap* ms = bp->impl;
    uint64_t slots = bp->objects.slot_count;
    uint32_t old = ms->cls_cap;
    vl_status s = VL_ARRAY_RESERVE(ms->cls, ms->cls_cap, old, slots);
    if (s == VL_OK && ms->cls_cap > old) memset(ms->cls + old, 0, ms->cls_cap - old);
    uint32_t old_ent = ms->ent_cap;
    if (s == VL_OK)
        s = VL_ARRAY_RESERVE(ms->ent, ms->ent_cap, old_ent, slots * VL_MSAP_ENTRIES);
    if (s == VL_OK && ms->ent_cap > old_ent)
        memset(ms->ent + old_ent, 0xFF, (size_t)(ms->ent_cap - old_ent) * sizeof(vl_msap_entry));
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->range, ms->range_cap, ms->range_cap, slots * 4);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->ovf_at, ms->ovf_at_cap, ms->ovf_at_cap, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->held, ms->held_cap, ms->held_cap, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->ovf, ms->ovf_cap, ms->ovf_count, slots);
    if (s == VL_OK)
        s = VL_ARRAY_RESERVE(ms->movers, ms->movers_cap, ms->mover_count, slots + 1);
    if (s != VL_OK) return s;
    /* a slot reused after a commit has cls 0; one removed and added back in the same period (a
     * set_static flip) keeps its state, stays listed once, and is re-inserted in its cells so that
     * its pairs are found again under its new flags */
    for (uint32_t i = 0; i < count; i++)
        if (ms->cls[handles[i]] & VL_MSAP_MOVED) ms->cls[handles[i]] |= VL_MSAP_READDED;
    msap_mark(ms, handles, count);
    return VL_OK;
}

static vl_status msap_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_aabb* dst = bp->objects.boxes;
    for (uint32_t i = 0; i < count; i++) dst[handles[i]] = boxes[i];
    msap_mark(bp->impl, handles, count);
    return VL_OK;
}

static void msap_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    msap_mark(bp->impl, handles, count);
}

/* ---- layout: chosen from the live boxes at the first commit that has any ------------------- */

static vl_status msap_layout(vl_msap* ms, const vl_broadphase* bp) {
    const vl_bp_objects* o = &bp->objects;
    const vl_broadphase_desc* d = &bp->desc;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double sum[3] = {0}, sum2[3] = {0}, ext = 0, n = 0, n_ext = 0;
    for (uint32_t h = 0; h < o->slot_count; h++) {
        if (!(o->flags[h] & VL_OBJ_ALIVE)) continue;
        const vl_aabb* b = &o->boxes[h];
        int finite = 1;
        for (int a = 0; a < 3; a++) {
            if (isfinite(b->min[a]) && b->min[a] < lo[a]) lo[a] = b->min[a];
            if (isfinite(b->max[a]) && b->max[a] > hi[a]) hi[a] = b->max[a];
            finite &= isfinite(b->min[a]) && isfinite(b->max[a]);
        }
        if (!finite) continue;
        n++;
        for (int a = 0; a < 3; a++) {
            double c = 0.5 * ((double)b->min[a] + b->max[a]);
            sum[a] += c;
            sum2[a] += c * c;
        }
    }
    int up = 1;
    if (d->up_axis) {
        up = (int)d->up_axis - 1;
    } else if (n >= 2) {
        double best = INFINITY;
        for (int a = 0; a < 3; a++) {
            double var = sum2[a] / n - (sum[a] / n) * (sum[a] / n);
            if (var < best) best = var, up = a;
        }
    }
    ms->up = up;
    ms->axis[0] = up == 0 ? 1 : 0;
    ms->axis[1] = up == 2 ? 1 : 2;
    for (uint32_t h = 0; h < o->slot_count; h++) {
        if (!(o->flags[h] & VL_OBJ_ALIVE)) continue;
        const vl_aabb* b = &o->boxes[h];
        double e0 = (double)b->max[ms->axis[0]] - b->min[ms->axis[0]];
        double e1 = (double)b->max[ms->axis[1]] - b->min[ms->axis[1]];
        double e = e0 > e1 ? e0 : e1;
        if (isfinite(e)) ext += e, n_ext++;
    }
    ext = n_ext ? ext / n_ext : 0;
    double span[2];
    for (int k = 0; k < 2; k++) {
        int a = ms->axis[k];
        if (!(lo[a] <= hi[a])) lo[a] = -1, hi[a] = 1;
        span[k] = hi[a] - lo[a];
        if (!(span[k] > 1e-6 * (fabs(lo[a]) + 1))) span[k] = 1e-6 * (fabs(lo[a]) + 1);
        ms->origin[k] = lo[a];
    }
    /* cells of VL_MSAP_TARGET_MEMBERS objects, and at least twice the mean footprint */
    double side = d->cell_size;
    if (!(side > 0)) {
        double alive = o->alive ? o->alive : 1;
        side = sqrt(span[0] * span[1] * VL_MSAP_TARGET_MEMBERS / alive);
        if (side < 2 * ext) side = 2 * ext;
    }
    for (int k = 0; k < 2; k++) {
        double cells = d->grid_cells ? d->grid_cells : ceil(span[k] / side);
        if (!(cells >= 1)) cells = 1;
        if (cells > VL_MSAP_MAX_AXIS) cells = VL_MSAP_MAX_AXIS;
        ms->cells_n[k] = (uint32_t)cells;
        ms->scale[k] = (d->cell_size > 0 && !d->grid_cells) ? 1.0 / d->cell_size : cells / span[k];
    }
    uint32_t count = ms->cells_n[0] * ms->cells_n[1];
    vl_msap_cell* cells = vl_mem_calloc((size_t)count * sizeof *cells);
    if (!cells) return VL_ERR_OUT_OF_MEMORY;
    for (uint32_t c = 0; c < count; c++) cells[c].index = c;
    ms->cells = cells;
    ms->cell_count = count;
    ms->ready = 1;
    return VL_OK;
}

/* ---- commit ------------------------------------------------------------------------------ */

/* Index of cell c in a footprint r, or VL_MSAP_NONE when outside it. */
static inline uint32_t in_range(const vl_msap* ms, const uint32_t* r, uint32_t c) {
    uint32_t cu = c % ms->cells_n[0], cv = c / ms->cells_n[0];
    return cu >= r[0] && cu <= r[2] && cv >= r[1] && cv <= r[3] ? 1u : 0u;
}

/* Mover i's new footprint (VL_MSAP_NONE in new_range[4i] when dead or overflowing) and its
 * operations, one per entry used, appended at ops[n] (returns the new n): remove from a cell left,
 * move in a cell kept, insert into a cell entered (at a free entry, claimed by msap_queue). Reads
 * only shared state. */
static uint32_t msap_plan_mover(vl_msap* ms, const vl_bp_objects* o, uint32_t i, uint32_t n) {
    uint32_t h = ms->movers[i], *r = ms->new_range + 4ull * i;
    r[0] = VL_MSAP_NONE;
    if ((o->flags[h] & VL_OBJ_ALIVE) && !vl_msap_footprint(ms, &o->boxes[h], r)) r[0] = VL_MSAP_NONE;
    const vl_msap_entry* e = ms->ent + (size_t)h * VL_MSAP_ENTRIES;
    vl_msap_op* op = ms->ops;
    uint32_t* cell = ms->op_cell;
    uint32_t used = 0, readded = ms->cls[h] & VL_MSAP_READDED;
    for (uint32_t k = 0; k < VL_MSAP_ENTRIES; k++) {
        if (e[k].cell == VL_MSAP_NONE) continue;
        used |= 1u << k;
        int move = !readded && r[0] != VL_MSAP_NONE && in_range(ms, r, e[k].cell);
        cell[n] = e[k].cell;
        op[n].handle = h, op[n].entry = (uint16_t)k, op[n].kind = move ? VL_MSAP_OP_MOVE : VL_MSAP_OP_REMOVE;
        if (move) op[n].from = ms->held[h], op[n].to = o->boxes[h], op[n].local = e[k].local;
        n++;
    }
    if (r[0] == VL_MSAP_NONE) return n;
    uint32_t k = 0;
    for (uint32_t cv = r[1]; cv <= r[3]; cv++)
        for (uint32_t cu = r[0]; cu <= r[2]; cu++) {
            uint32_t c = cv * ms->cells_n[0] + cu, kept = 0;
            for (uint32_t j = 0; j < VL_MSAP_ENTRIES; j++) kept |= e[j].cell == c;
            if (kept && !readded) continue;
            while (used >> k & 1u) k++; /* at most 4 kept and 4 entered: a free entry exists */
            used |= 1u << k;
            cell[n] = c | VL_MSAP_ENTERS;
            op[n].handle = h, op[n].entry = (uint16_t)k, op[n].kind = VL_MSAP_OP_INSERT;
            n++;
        }
    return n;
}

typedef struct msap_task {
    vl_msap* ms;
    const vl_bp_objects* o;
} msap_task;

/* First operation of block b. */
static inline uint32_t block_base(uint32_t b) { return b * VL_MSAP_ENTRIES * VL_MSAP_MOVER_BLOCK; }

/* The lines a mover's plan reads: its entries, the box its cells hold, its new box. */
static inline void msap_prefetch_mover(const vl_msap* ms, const vl_bp_objects* o, uint32_t h) {
    VL_PREFETCH(ms->ent + (size_t)h * VL_MSAP_ENTRIES);
    VL_PREFETCH(ms->held + h);
    VL_PREFETCH(o->boxes + h);
}

static void msap_plan_range(uint32_t start, uint32_t end, uint32_t worker, void* task_ctx) {
    (void)worker;
    const msap_task* t = task_ctx;
    uint32_t m = t->ms->mover_count;
    for (uint32_t b = start; b < end; b++) {
        uint32_t first = b * VL_MSAP_MOVER_BLOCK, last = m - first < VL_MSAP_MOVER_BLOCK ? m : first + VL_MSAP_MOVER_BLOCK;
        uint32_t n = block_base(b);
        for (uint32_t i = first; i < last; i++) {
            if (i + VL_MSAP_PLAN_AHEAD < m) msap_prefetch_mover(t->ms, t->o, t->ms->movers[i + VL_MSAP_PLAN_AHEAD]);
            n = msap_plan_mover(t->ms, t->o, i, n);
        }
        t->ms->block_ops[b] = n - block_base(b);
    }
}

/* Runs fn over items on ctx's workers when given, else here. */
static void msap_run(const vl_context* ctx, vl_task_fn* fn, uint32_t items, msap_task* t) {
    if (!ctx) {
        fn(0, items, 0, t);
        return;
    }
    uint32_t min_range = items / (8 * vl_context_get_worker_count(ctx));
    vl_tasks_run(ctx, fn, items, min_range ? min_range : 1, t);
}

static uint32_t msap_blocks(const vl_msap* ms) { return (ms->mover_count + VL_MSAP_MOVER_BLOCK - 1) / VL_MSAP_MOVER_BLOCK; }

/* The movers' footprints and operations (msap_plan_mover, in blocks of movers). Changes nothing
 * but scratch and capacities. */
static vl_status msap_plan(vl_msap* ms, const vl_bp_objects* o, const vl_context* ctx) {
    uint32_t m = ms->mover_count, blocks = msap_blocks(ms);
    uint64_t slots = (uint64_t)block_base(blocks) + 1;
    vl_status s = VL_ARRAY_RESERVE(ms->new_range, ms->new_range_cap, 0, 4ull * m + 4);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->start, ms->start_cap, 0, ms->cell_count + 1ull);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->ops, ms->ops_cap, 0, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->op_cell, ms->op_cell_cap, 0, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->block_ops, ms->block_ops_cap, 0, blocks + 1ull);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->block_ovf, ms->block_ovf_cap, 0, blocks + 1ull);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->order, ms->order_cap, 0, 8ull * m + 1);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ms->busy, ms->busy_cap, 0, ms->cell_count);
    if (s != VL_OK) return s;
    msap_task t = {ms, o};
    msap_run(ctx, msap_plan_range, blocks, &t);
    return VL_OK;
}

/* Groups the operations by cell (a counting sort of their indices into `order`), reserves room in
 * every cell for its operations, then claims the entries of the cells entered. On failure (a
 * reservation) nothing visible changed. */
static vl_status msap_queue(vl_msap* ms) {
    uint32_t* start = ms->start;
    const uint32_t* op_cell = ms->op_cell;
    uint32_t blocks = msap_blocks(ms);
    memset(start, 0, (ms->cell_count + 1ull) * sizeof *start);
    for (uint32_t b = 0; b < blocks; b++)
        for (uint32_t j = block_base(b); j < block_base(b) + ms->block_ops[b]; j++)
            start[(op_cell[j] & ~VL_MSAP_ENTERS) + 1]++;
    ms->busy_count = 0;
    for (uint32_t c = 0; c < ms->cell_count; c++) {
        uint32_t n = start[c + 1];
        if (!n) continue;
        ms->busy[ms->busy_count++] = c;
        /* room for as many members entering as operations (a cell grown and not used is harmless) */
        if (vl_msap_cell_has_room(&ms->cells[c], ms->cells[c].n + n)) continue;
        vl_status s = vl_msap_cell_reserve(&ms->cells[c], ms->cells[c].n + n);
        if (s != VL_OK) return s;
    }
    for (uint32_t c = 0; c < ms->cell_count; c++) start[c + 1] += start[c];
    /* start[c] is now the first slot of cell c; place, then shift back by one cell */
    for (uint32_t b = 0; b < blocks; b++)
        for (uint32_t j = block_base(b); j < block_base(b) + ms->block_ops[b]; j++) {
            uint32_t c = op_cell[j];
            if (c & VL_MSAP_ENTERS) {
                c &= ~VL_MSAP_ENTERS;
                vl_msap_entry* e = ms->ent + (size_t)ms->ops[j].handle * VL_MSAP_ENTRIES + ms->ops[j].entry;
                e->cell = c, e->local = VL_MSAP_NONE;
            }
            ms->order[start[c]++] = j;
        }
    for (uint32_t c = ms->cell_count; c > 0; c--) start[c] = start[c - 1];
    start[0] = 0;
    return VL_OK;
}

/* A candidate's truth: both alive, allowed, overlapping. */
static inline int msap_truth(const vl_bp_objects* o, uint32_t a, uint32_t b) {
    return (o->flags[a] & o->flags[b] & VL_OBJ_ALIVE) && vl_bp_may_pair(o, a, b) &&
           vl_aabb_overlap(&o->boxes[a], &o->boxes[b]);
}

/* Cell c's moves read their endpoint indices first, then their endpoints on the axes that changed:
 * the first lines are fetched one cell ahead (indices), the second at the cell (a removal may
 * renumber a mover: then a line is wasted). */
static void msap_prefetch_indices(const vl_msap* ms, uint32_t c) {
    const vl_msap_cell* cell = &ms->cells[c];
    for (uint32_t i = ms->start[c]; i < ms->start[c + 1]; i++) {
        const vl_msap_op* op = &ms->ops[ms->order[i]];
        if (op->kind == VL_MSAP_OP_MOVE) VL_PREFETCH(cell->pos + (size_t)op->local * 6);
    }
}

static void msap_prefetch_endpoints(const vl_msap* ms, uint32_t c) {
    const vl_msap_cell* cell = &ms->cells[c];
    for (uint32_t i = ms->start[c]; i < ms->start[c + 1]; i++) {
        const vl_msap_op* op = &ms->ops[ms->order[i]];
        if (op->kind != VL_MSAP_OP_MOVE) continue;
        const uint32_t* p = cell->pos + (size_t)op->local * 6;
        for (int a = 0; a < 3; a++)
            if (op->from.min[a] != op->to.min[a] || op->from.max[a] != op->to.max[a])
                VL_PREFETCH(cell->ep[a] + p[2 * a]), VL_PREFETCH(cell->ep[a] + p[2 * a + 1]);
    }
}

/* One cell's slice of the queue: removals, moves, insertions; then its candidates take their
 * truth (VL_MSAP_TRUE), and those that would not change the pair set are dropped (the pair manager
 * is only read here, and only when it holds no pending change). Writes only the cell, its members'
 * entries for it and its output list, so cells may run in any order or at once. */
static void msap_run_cell(vl_msap* ms, const vl_bp_objects* o, uint32_t c) {
    vl_msap_cell* cell = &ms->cells[c];
    const uint32_t* order = ms->order + ms->start[c];
    uint32_t n = ms->start[c + 1] - ms->start[c];
    int removed = 0; /* a removal renumbers members: the locals copied into the moves are then stale */
    uint32_t entering = 0;
    for (uint32_t kind = 0; kind < 3; kind++)
        for (uint32_t i = 0; i < n; i++) {
            const vl_msap_op* op = &ms->ops[order[i]];
            if (op->kind != kind) continue;
            vl_msap_entry* e = ms->ent + (size_t)op->handle * VL_MSAP_ENTRIES + op->entry;
            if (kind == VL_MSAP_OP_REMOVE)
                vl_msap_cell_remove(cell, ms->ent, e->local), removed = 1;
            else if (kind == VL_MSAP_OP_MOVE)
                vl_msap_cell_move(cell, o, removed ? e->local : op->local, &op->from, &op->to);
            else /* the insertions go in together, after every other operation */
                e->local = cell->n + entering, cell->id[cell->n + entering++] = op->handle;
        }
    if (entering) vl_msap_cell_insert(cell, o, entering);
    vl_pair* p = cell->out.pairs;
    const vl_pair_manager* pm = &ms->pm;
    int settled = pm->touched_count == 0;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < cell->out.count; i++) {
        uint32_t a = p[i].a & ~VL_MSAP_TRUE, b = p[i].b;
        int truth = msap_truth(o, a, b);
        if (settled) {
            uint32_t at = vl_pm_find(pm, a, b);
            if (truth == (at != VL_PM_NONE)) continue;
            if (!truth) { /* the merge removes it by index: adds only append, so the index holds */
                p[kept++] = (vl_pair){at, VL_MSAP_NONE};
                continue;
            }
        }
        p[kept++] = (vl_pair){a | (truth ? VL_MSAP_TRUE : 0u), b};
    }
    cell->out.count = kept;
}

/* Ranges of the busy cells; each cell writes only its own part, so the result does not depend
 * on the ranges. */
static void msap_cells_range(uint32_t start, uint32_t end, uint32_t worker, void* task_ctx) {
    (void)worker;
    const msap_task* t = task_ctx;
    const uint32_t* busy = t->ms->busy;
    if (start < end) msap_prefetch_indices(t->ms, busy[start]);
    for (uint32_t i = start; i < end; i++) {
        if (i + 1 < end) msap_prefetch_indices(t->ms, busy[i + 1]);
        msap_prefetch_endpoints(t->ms, busy[i]);
        msap_run_cell(t->ms, t->o, busy[i]);
    }
}

static void ovf_push(vl_msap* ms, uint32_t a, uint32_t b) { vl_msap_push(&ms->ovf_out, &ms->rescan, a, b); }

/* Mover i's class after the commit: in the cells, in the overflow set, or 0 (dead). */
static inline uint8_t msap_class_after(const vl_msap* ms, const vl_bp_objects* o, uint32_t i) {
    uint32_t h = ms->movers[i];
    if (!(o->flags[h] & VL_OBJ_ALIVE)) return 0;
    return ms->new_range[4ull * i] != VL_MSAP_NONE ? VL_MSAP_IN_CELLS : VL_MSAP_IN_OVF;
}

/* Settles mover i: its footprint, the box its cells hold, its class (the overflow set is not
 * touched here). */
static inline void msap_settle_mover(vl_msap* ms, const vl_bp_objects* o, uint32_t i, uint8_t was_ovf, uint8_t now) {
    uint32_t h = ms->movers[i];
    if (now == VL_MSAP_IN_CELLS) {
        memcpy(ms->range + 4ull * h, ms->new_range + 4ull * i, 4 * sizeof(uint32_t));
        ms->held[h] = o->boxes[h];
    }
    uint8_t left = (uint8_t)(ms->cls[h] & VL_MSAP_LEFT_OVF) | (was_ovf && now != VL_MSAP_IN_OVF ? VL_MSAP_LEFT_OVF : 0);
    ms->cls[h] = (uint8_t)(now | VL_MSAP_MOVED | left);
}

/* After the cells, blocks of movers: entries of cells left are freed; each mover that neither was
 * nor is in the overflow set is settled; a block with one that was or is gets block_ovf set, for
 * msap_settle. Writes only its movers' state. */
static void msap_settle_range(uint32_t start, uint32_t end, uint32_t worker, void* task_ctx) {
    (void)worker;
    const msap_task* t = task_ctx;
    vl_msap* ms = t->ms;
    for (uint32_t b = start; b < end; b++) {
        for (uint32_t j = block_base(b); j < block_base(b) + ms->block_ops[b]; j++)
            if (ms->ops[j].kind == VL_MSAP_OP_REMOVE) {
                vl_msap_entry* e = ms->ent + (size_t)ms->ops[j].handle * VL_MSAP_ENTRIES + ms->ops[j].entry;
                e->cell = e->local = VL_MSAP_NONE;
            }
        uint32_t first = b * VL_MSAP_MOVER_BLOCK, m = ms->mover_count, ovf = 0;
        uint32_t last = m - first < VL_MSAP_MOVER_BLOCK ? m : first + VL_MSAP_MOVER_BLOCK;
        for (uint32_t i = first; i < last; i++) {
            uint8_t was = ms->cls[ms->movers[i]] & VL_MSAP_IN_OVF, now = msap_class_after(ms, t->o, i);
            if (was || now == VL_MSAP_IN_OVF)
                ovf = 1;
            else
                msap_settle_mover(ms, t->o, i, 0, now);
        }
        ms->block_ovf[b] = ovf;
    }
}

/* After msap_settle_range: the movers that were or are in the overflow set are settled and the
 * overflow set updated; the candidates with an overflow end are gathered. */
static void msap_settle(vl_msap* ms, const vl_bp_objects* o) {
    int had_ovf = ms->ovf_count > 0;
    for (uint32_t b = 0; b < msap_blocks(ms); b++) {
        if (!ms->block_ovf[b]) continue;
        uint32_t first = b * VL_MSAP_MOVER_BLOCK, m = ms->mover_count;
        uint32_t last = m - first < VL_MSAP_MOVER_BLOCK ? m : first + VL_MSAP_MOVER_BLOCK;
        for (uint32_t i = first; i < last; i++) {
            uint32_t h = ms->movers[i];
            uint8_t was = ms->cls[h] & VL_MSAP_IN_OVF, now = msap_class_after(ms, o, i);
            if (!was && now != VL_MSAP_IN_OVF) continue; /* settled by its block */
            if (was && now != VL_MSAP_IN_OVF) { /* leaves the overflow set */
                uint32_t at = ms->ovf_at[h], last_ovf = ms->ovf[--ms->ovf_count];
                ms->ovf[at] = last_ovf;
                ms->ovf_at[last_ovf] = at;
                had_ovf = 1;
            } else if (!was) {
                ms->ovf_at[h] = ms->ovf_count;
                ms->ovf[ms->ovf_count++] = h;
            }
            msap_settle_mover(ms, o, i, was, now);
        }
    }
    if (!had_ovf && !ms->ovf_count) return;
    ms->scan_pm = 1; /* pairs with an overflow end that stopped are found among the movers' pairs */
    const vl_aabb* boxes = o->boxes;
    for (uint32_t i = 0; i < ms->mover_count; i++) {
        uint32_t x = ms->movers[i];
        uint8_t cx = ms->cls[x];
        if (cx & VL_MSAP_IN_CELLS) {
            for (uint32_t j = 0; j < ms->ovf_count; j++) { /* a mover against the unmoved overflow */
                uint32_t y = ms->ovf[j];
                if (!(ms->cls[y] & VL_MSAP_MOVED) && vl_bp_may_pair(o, x, y) && vl_aabb_overlap(&boxes[x], &boxes[y]))
                    ovf_push(ms, x, y);
            }
        } else if (cx & VL_MSAP_IN_OVF) {
            for (uint32_t y = 0; y < o->slot_count; y++) { /* a moved overflow object against all */
                uint8_t cy = ms->cls[y];
                if (y == x || !(o->flags[y] & VL_OBJ_ALIVE)) continue;
                if ((cy & VL_MSAP_IN_OVF) && (cy & VL_MSAP_MOVED) && y < x) continue; /* found from y */
                if (vl_bp_may_pair(o, x, y) && vl_aabb_overlap(&boxes[x], &boxes[y])) ovf_push(ms, x, y);
            }
        }
    }
}

/* A candidate takes the truth. */
static inline void msap_set(vl_pair_manager* pm, uint32_t a, uint32_t b, int truth) {
    if (truth)
        vl_pm_add(pm, a, b); /* room reserved */
    else
        vl_pm_remove(pm, a, b);
}

static inline void msap_eval(vl_pair_manager* pm, const vl_bp_objects* o, uint32_t a, uint32_t b) {
    msap_set(pm, a, b, msap_truth(o, a, b));
}

static void msap_clear_candidates(vl_msap* ms) {
    for (uint32_t c = 0; c < ms->cell_count; c++) ms->cells[c].out.count = 0, ms->cells[c].lost = 0;
    ms->ovf_out.count = 0;
}

/* Applies every candidate to the pair manager, in cell order. On failure (the pair manager's
 * room) nothing is applied, and the next commit rescans (the truths found now may be stale then). */
static vl_status msap_merge(vl_msap* ms, const vl_bp_objects* o) {
    uint64_t total = ms->ovf_out.count;
    for (uint32_t c = 0; c < ms->cell_count; c++) {
        total += ms->cells[c].out.count;
        if (ms->cells[c].lost) ms->rescan = 1;
    }
    if (ms->rescan) total = vl_msap_all_pairs(ms, o, NULL);
    vl_status s = vl_pm_reserve(&ms->pm, total);
    if (s != VL_OK) { /* the rescan replaces the candidates (and their pair indices) */
        ms->rescan = 1;
        msap_clear_candidates(ms);
        return s;
    }
    vl_pair_manager* pm = &ms->pm;
    if (ms->rescan) {
        for (uint32_t i = 0; i < pm->count; i++) msap_eval(pm, o, pm->pairs[i].a, pm->pairs[i].b);
        vl_msap_all_pairs(ms, o, pm);
    } else {
        for (uint32_t c = 0; c < ms->cell_count; c++) {
            const vl_pair_buffer* out = &ms->cells[c].out;
            for (uint32_t i = 0; i < out->count; i++) {
                uint32_t a = out->pairs[i].a, b = out->pairs[i].b;
                if (b == VL_MSAP_NONE)
                    vl_pm_remove_at(pm, a);
                else
                    msap_set(pm, a & ~VL_MSAP_TRUE, b, (a & VL_MSAP_TRUE) != 0);
            }
        }
        for (uint32_t i = 0; i < ms->ovf_out.count; i++) msap_eval(pm, o, ms->ovf_out.pairs[i].a, ms->ovf_out.pairs[i].b);
        if (ms->scan_pm) /* pairs with a moved end and an overflow end, now or before this commit */
            for (uint32_t i = 0; i < pm->count; i++) {
                vl_pair p = pm->pairs[i];
                uint8_t f = ms->cls[p.a] | ms->cls[p.b];
                if ((f & VL_MSAP_MOVED) && (f & (VL_MSAP_IN_OVF | VL_MSAP_LEFT_OVF))) msap_eval(pm, o, p.a, p.b);
            }
    }
    msap_clear_candidates(ms);
    ms->rescan = ms->scan_pm = 0;
    return VL_OK;
}

/* The commit, the cells over the context's workers (none: on the calling thread). */
static vl_status msap_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    const vl_context* ctx = bp->desc.context;
    vl_msap* ms = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    if (ms->mover_count) {
        vl_status s = VL_OK;
        if (!ms->ready && o->alive) s = msap_layout(ms, bp);
        if (s != VL_OK) return s;
        if (ms->ready) {
            s = msap_plan(ms, o, ctx);
            if (s == VL_OK) s = msap_queue(ms);
            if (s != VL_OK) return s;
            /* from here the cells change: a later failure keeps the candidates for the next commit */
            msap_task t = {ms, o};
            msap_run(ctx, msap_cells_range, ms->busy_count, &t);
            msap_run(ctx, msap_settle_range, msap_blocks(ms), &t);
            msap_settle(ms, o);
        }
        s = msap_merge(ms, o);
        if (s != VL_OK) return s;
        for (uint32_t i = 0; i < ms->mover_count; i++) {
            uint32_t h = ms->movers[i];
            ms->cls[h] = (o->flags[h] & VL_OBJ_ALIVE)
                             ? (uint8_t)(ms->cls[h] & ~(VL_MSAP_MOVED | VL_MSAP_LEFT_OVF | VL_MSAP_READDED))
                             : 0;
        }
        ms->mover_count = 0;
    }
    return vl_pm_commit(&ms->pm, created, deleted);
}


static const vl_pair* msap_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_msap* ms = bp->impl;
    *count = ms->pm.count;
    return ms->pm.pairs;
}

const vl_broadphase_ops vl_msap_ops = {
    .create = msap_create,
    .destroy = msap_destroy,
    .add = msap_add,
    .update = msap_update,
    .remove = msap_remove,
    .commit = msap_commit,
    .pairs = msap_pairs,
    .validate = vl_msap_validate,
};
