/* VL_BROADPHASE_BOX_PRUNING: a commit with many movers prunes the dynamic boxes among themselves
 * and against the static ones, sorts the pairs, and diffs them against the previous commit's
 * sorted pairs into created and deleted lists; one with few movers re-prunes only those
 * (box_pruning_inc.c). */
#include <string.h>

#include "broadphase/box_pruning/box_pruning.h"


static vl_status pbp_create(vl_broadphase* bp) {
    vl_prune_bp* p = vl_mem_calloc(sizeof *p);
    if (!p) return VL_ERR_OUT_OF_MEMORY;
    bp->impl = p;
    return VL_OK;
}

static void pbp_destroy(vl_broadphase* bp) {
    vl_prune_bp* p = bp->impl;
    vl_pair_buffer_free(&p->cur);
    vl_pair_buffer_free(&p->next);
    VL_ARRAY_FREE(p->dyn, p->dyn_cap);
    VL_ARRAY_FREE(p->stat, p->stat_cap);
    vl_bp_pair_sort_free(&p->sort);
    vl_prune_set_free(&p->set_dyn);
    vl_prune_set_free(&p->set_stat);
    vl_prune_scratch_free(&p->scratch);
    VL_ARRAY_FREE(p->cls, p->cls_cap);
    VL_ARRAY_FREE(p->movers, p->movers_cap);
    VL_ARRAY_FREE(p->stale, p->stale_cap);
    vl_prune_set_free(&p->all[0]);
    vl_prune_set_free(&p->all[1]);
    vl_prune_set_free(&p->set_m);
    vl_prune_set_free(&p->set_fresh);
    vl_pair_buffer_free(&p->found);
    vl_mem_free(p, sizeof *p);
}

/* Lists the slots not listed yet. Branch-free: each slot is written past the list's end and kept
 * when it was not listed; the list and its count in locals, since the byte stores alias them. */
static void pbp_mark(vl_prune_bp* p, const uint32_t* handles, uint32_t count) {
    uint8_t* cls = p->cls;
    uint32_t* movers = p->movers;
    uint32_t n = p->mover_count;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        movers[n] = h;
        n += !(cls[h] & VL_PRUNE_MOVED);
        cls[h] |= VL_PRUNE_MOVED;
    }
    p->mover_count = n;
}

/* A slot is listed at most once per period (removed slots wait for the commit): the list never
 * outgrows the slots. */
static vl_status pbp_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_prune_bp* p = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    uint64_t slots = o->slot_count;
    uint32_t old_cap = p->cls_cap;
    vl_status s = VL_ARRAY_RESERVE(p->cls, p->cls_cap, p->cls_cap, slots);
    if (s == VL_OK && p->cls_cap > old_cap) memset(p->cls + old_cap, 0, p->cls_cap - old_cap);
    if (s == VL_OK) /* one more for pbp_mark's write past the end */
        s = VL_ARRAY_RESERVE(p->movers, p->movers_cap, p->mover_count, slots + 1);
    if (s == VL_OK) /* the same for the stale list */
        s = VL_ARRAY_RESERVE(p->stale, p->stale_cap, p->stale_count, slots + 1);
    if (s != VL_OK) return s;
    /* a slot removed and added again in one period (vl_broadphase_set_static) keeps its mover bits;
     * any other slot's are clear (zeroed when grown, cleared by the commit after its removal) */
    for (uint32_t i = 0; i < count; i++) {
        uint8_t* c = &p->cls[handles[i]];
        *c = (uint8_t)((*c & (VL_PRUNE_MOVED | VL_PBP_STALE)) | ((o->flags[handles[i]] & VL_OBJ_STATIC) ? VL_PRUNE_STATIC : 0));
    }
    pbp_mark(p, handles, count);
    return VL_OK;
}

static vl_status pbp_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_aabb* dst = bp->objects.boxes;
    for (uint32_t i = 0; i < count; i++) dst[handles[i]] = boxes[i];
    pbp_mark(bp->impl, handles, count);
    return VL_OK;
}

static void pbp_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    pbp_mark(bp->impl, handles, count);
}

/* Through the list when it is short, else one pass over every slot (which vectorises). */
void vl_pbp_clear_movers(vl_prune_bp* p, const vl_bp_objects* o) {
    uint8_t* cls = p->cls;
    const uint8_t* flags = o->flags;
    if (p->mover_count < o->slot_count / 8) {
        for (uint32_t i = 0; i < p->mover_count; i++) {
            uint32_t h = p->movers[i];
            cls[h] = (flags[h] & VL_OBJ_ALIVE) ? (uint8_t)(cls[h] & ~VL_PRUNE_MOVED) : 0;
        }
    } else {
        for (uint32_t h = 0; h < o->slot_count; h++)
            cls[h] = (uint8_t)(cls[h] & (VL_PRUNE_STATIC | VL_PBP_STALE) & -(flags[h] & VL_OBJ_ALIVE));
    }
    p->mover_count = 0;
}

/* All current pairs into p->next, as (low, high), sorted. */
static vl_status pbp_find_pairs(vl_prune_bp* p, const vl_bp_objects* o, vl_context* ctx) {
    vl_status s = VL_ARRAY_RESERVE(p->dyn, p->dyn_cap, 0, o->slot_count + 1ull);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(p->stat, p->stat_cap, 0, o->slot_count + 1ull);
    if (s != VL_OK) return s;
    uint32_t nd = 0, ns = 0;
    for (uint32_t h = 0; h < o->slot_count; h++) {
        uint8_t f = o->flags[h];
        if (f & VL_OBJ_STATIC)
            p->stat[ns++] = h;
        else if (f & VL_OBJ_ALIVE)
            p->dyn[nd++] = h;
    }
    p->next.count = 0;
    if (!nd) return VL_OK;
    int axis = vl_pbp_axis(ctx, o->boxes, p->dyn, nd, p->stat, ns);
    s = vl_pbp_set_build(ctx, &p->set_dyn, &p->scratch, o->boxes, p->dyn, nd, axis);
    if (s == VL_OK && ns) s = vl_pbp_set_build(ctx, &p->set_stat, &p->scratch, o->boxes, p->stat, ns, axis);
    if (s == VL_OK) s = vl_pbp_sweep_full(ctx, &p->set_dyn, ns ? &p->set_stat : NULL, &p->next);
    return s == VL_OK ? vl_bp_pair_sort_run(&p->sort, &p->next, o->slot_count) : s;
}

/* The commit, its sweeps over the context's workers (none: on the calling thread). */
static vl_status pbp_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    vl_context* ctx = bp->desc.context;
    vl_prune_bp* p = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    if (!p->mover_count) return VL_OK;
    if ((uint64_t)p->mover_count * VL_PBP_INC_RATIO <= o->alive)
        return vl_pbp_commit_incremental(p, o, ctx, created, deleted);
    vl_status s = pbp_find_pairs(p, o, ctx);
    if (s == VL_OK) s = vl_bp_pairs_diff(&p->cur, &p->next, created, deleted);
    if (s != VL_OK) return s;
    vl_pair_buffer t = p->cur;
    p->cur = p->next;
    p->next = t;
    vl_pbp_clear_movers(p, o);
    p->all_valid = 0;
    return VL_OK;
}


static const vl_pair* pbp_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_prune_bp* p = bp->impl;
    *count = p->cur.count;
    return p->cur.pairs;
}

static vl_status pbp_validate(const vl_broadphase* bp) {
    const vl_prune_bp* p = bp->impl;
    return vl_bp_pairs_sorted(&p->cur) ? VL_OK : VL_ERR_INVALID_ARGUMENT;
}

const vl_broadphase_ops vl_prune_bp_ops = {
    .create = pbp_create,
    .destroy = pbp_destroy,
    .add = pbp_add,
    .update = pbp_update,
    .remove = pbp_remove,
    .commit = pbp_commit,
    .pairs = pbp_pairs,
    .validate = pbp_validate,
};
