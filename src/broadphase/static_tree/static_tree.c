/* VL_BROADPHASE_STATIC_TREE: the operations, the statics' tree and the commit. */
#include "broadphase/static_tree/static_tree.h"

#include <string.h>

static vl_status st_create(vl_broadphase* bp) {
    vl_st* st = vl_mem_calloc(sizeof *st);
    if (!st) return VL_ERR_OUT_OF_MEMORY;
    st->epoch = 1;
    bp->impl = st;
    return VL_OK;
}

static void st_destroy(vl_broadphase* bp) {
    vl_st* st = bp->impl;
    vl_bvh_destroy(st->tree);
    VL_ARRAY_FREE(st->tree_slot, st->tree_slot_cap);
    VL_ARRAY_FREE(st->extra, st->extra_cap);
    VL_ARRAY_FREE(st->cls, st->cls_cap);
    VL_ARRAY_FREE(st->dyn_at, st->dyn_at_cap);
    VL_ARRAY_FREE(st->dyn, st->dyn_cap);
    VL_ARRAY_FREE(st->cand, st->cand_cap);
    VL_ARRAY_FREE(st->cand_next, st->cand_next_cap);
    VL_ARRAY_FREE(st->ids, st->ids_cap);
    VL_ARRAY_FREE(st->holds, st->holds_cap);
    VL_ARRAY_FREE(st->query, st->query_cap);
    VL_ARRAY_FREE(st->query_dyn, st->query_dyn_cap);
    VL_ARRAY_FREE(st->query_first, st->query_first_cap);
    VL_ARRAY_FREE(st->scratch, st->scratch_cap);
    vl_pair_buffer_free(&st->hits);
    vl_prune_set_free(&st->set_dyn);
    vl_prune_set_free(&st->set_extra);
    vl_prune_scratch_free(&st->prune_scratch);
    vl_pair_buffer_free(&st->cur);
    vl_pair_buffer_free(&st->next);
    vl_bp_pair_sort_free(&st->sort);
    vl_mem_free(st, sizeof *st);
}

/* A primitive of the tree stops standing for its slot: every candidate set may hold its box. */
static void st_leave_tree(vl_st* st, uint32_t h) {
    st->cls[h] &= (uint8_t)~VL_ST_IN_TREE;
    st->stale++;
    st->epoch = st->epoch + 1 ? st->epoch + 1 : 1;
}

static void st_push_extra(vl_st* st, uint32_t h) {
    if (st->cls[h] & VL_ST_EXTRA) return;
    st->cls[h] |= VL_ST_EXTRA;
    st->extra[st->extra_count++] = h;
}

/* Every array a slot indexes, and the lists that hold a slot at most once, sized to the slots:
 * update and remove never allocate. */
static vl_status st_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_st* st = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    uint64_t slots = o->slot_count;
    uint32_t old_cap = st->cls_cap;
    vl_status s = VL_ARRAY_RESERVE(st->cls, st->cls_cap, st->cls_cap, slots);
    if (s == VL_OK && st->cls_cap > old_cap) memset(st->cls + old_cap, 0, st->cls_cap - old_cap);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(st->dyn_at, st->dyn_at_cap, st->dyn_at_cap, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(st->extra, st->extra_cap, st->extra_count, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(st->dyn, st->dyn_cap, st->dyn_count, (uint64_t)st->dyn_count + count);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        /* a slot removed and added again in one period (set_static) may still be listed in extra */
        st->cls[h] &= VL_ST_EXTRA;
        if (o->flags[h] & VL_OBJ_STATIC) {
            st_push_extra(st, h);
        } else {
            st->dyn_at[h] = st->dyn_count;
            st->dyn[st->dyn_count++] = (vl_st_dyn){.last = o->boxes[h], .slot = h};
        }
    }
    st->changed = 1;
    return VL_OK;
}

static vl_status st_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_st* st = bp->impl;
    vl_bp_objects* o = &bp->objects;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        o->boxes[h] = boxes[i];
        if (!(o->flags[h] & VL_OBJ_STATIC)) continue;
        if (st->cls[h] & VL_ST_IN_TREE) st_leave_tree(st, h);
        st_push_extra(st, h);
    }
    st->changed = 1;
    return VL_OK;
}

static void st_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_st* st = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        if (o->flags[h] & VL_OBJ_STATIC) {
            if (st->cls[h] & VL_ST_IN_TREE) st_leave_tree(st, h); /* extra drops it at the commit */
            continue;
        }
        uint32_t k = st->dyn_at[h];
        st->dyn[k] = st->dyn[--st->dyn_count];
        st->dyn_at[st->dyn[k].slot] = k;
    }
    st->changed = 1;
}

vl_status vl_st_statics(vl_st* st, const vl_bp_objects* o, vl_context* ctx) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < st->extra_count; i++) { /* the alive statics outside the tree, once each */
        uint32_t h = st->extra[i];
        if ((o->flags[h] & (VL_OBJ_ALIVE | VL_OBJ_STATIC)) == (VL_OBJ_ALIVE | VL_OBJ_STATIC))
            st->extra[n++] = h;
        else
            st->cls[h] &= (uint8_t)~VL_ST_EXTRA;
    }
    st->extra_count = n;
    if ((uint64_t)n + st->stale <= st->tree_count / VL_ST_REBUILD_SHARE + VL_ST_REBUILD_MIN) return VL_OK;
    /* every alive static: the tree's current primitives, then extra */
    uint32_t total = 0;
    vl_status s = VL_ARRAY_RESERVE(st->ids, st->ids_cap, 0, (uint64_t)st->tree_count + n + 1);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < st->tree_count; i++)
        if (st->cls[st->tree_slot[i]] & VL_ST_IN_TREE) st->ids[total++] = st->tree_slot[i];
    memcpy(st->ids + total, st->extra, (size_t)n * sizeof *st->extra);
    total += n;
    vl_bvh* tree = NULL;
    if (total) {
        vl_aabb* boxes = vl_mem_alloc((size_t)total * sizeof *boxes);
        if (!boxes) return VL_ERR_OUT_OF_MEMORY;
        for (uint32_t i = 0; i < total; i++) boxes[i] = o->boxes[st->ids[i]];
        vl_bvh_desc desc = vl_bvh_default_desc();
        desc.max_leaf_size = 4;
        vl_exec exec = {.context = ctx};
        s = vl_bvh_build_boxes(boxes, total, &desc, &tree, ctx ? &exec : NULL);
        vl_mem_free(boxes, (size_t)total * sizeof *boxes);
        if (s != VL_OK) return s;
    }
    vl_bvh_destroy(st->tree);
    st->tree = tree;
    uint32_t* slot = st->tree_slot; /* ids holds the tree's slots from here on */
    uint32_t cap = st->tree_slot_cap;
    st->tree_slot = st->ids, st->tree_slot_cap = st->ids_cap;
    st->ids = slot, st->ids_cap = cap;
    st->tree_count = total;
    for (uint32_t i = 0; i < total; i++) st->cls[st->tree_slot[i]] = VL_ST_IN_TREE;
    st->extra_count = 0;
    st->stale = 0;
    st->epoch = st->epoch + 1 ? st->epoch + 1 : 1;
    return VL_OK;
}

static vl_status st_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    vl_st* st = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    if (!st->changed) return VL_OK;
    vl_status s = vl_st_statics(st, o, bp->desc.context);
    if (s == VL_OK) s = vl_st_find_pairs(st, o, bp->desc.context);
    if (s == VL_OK) s = vl_bp_pair_sort_run(&st->sort, &st->next, o->slot_count);
    if (s == VL_OK) s = vl_bp_pairs_diff(&st->cur, &st->next, created, deleted);
    if (s != VL_OK) return s;
    vl_pair_buffer t = st->cur;
    st->cur = st->next;
    st->next = t;
    for (uint32_t i = 0; i < st->dyn_count; i++) st->dyn[i].last = o->boxes[st->dyn[i].slot];
    st->changed = 0;
    return VL_OK;
}

static const vl_pair* st_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_st* st = bp->impl;
    *count = st->cur.count;
    return st->cur.pairs;
}

static int box_inside(const vl_aabb* in, const vl_aabb* out) {
    for (int a = 0; a < 3; a++)
        if (!(in->min[a] >= out->min[a] && in->max[a] <= out->max[a])) return 0;
    return 1;
}

/* Trees of up to this many statics have each candidate set checked against all of them. */
#define VL_ST_VALIDATE_ALL 4096u

/* The pairs sorted and unique; the dense dynamic objects and their slots agreeing; the tree's
 * current primitives alive statics; each dynamic object's box at the last commit inside its fat
 * box, and a current candidate set holding exactly the tree's current statics that overlap it. */
static vl_status st_validate(const vl_broadphase* bp) {
    const vl_st* st = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    for (uint32_t i = 0; i < st->cur.count; i++) {
        vl_pair q = st->cur.pairs[i];
        if (q.a >= q.b || (i && ((uint64_t)st->cur.pairs[i - 1].a << 32 | st->cur.pairs[i - 1].b) >=
                                    ((uint64_t)q.a << 32 | q.b)))
            return VL_ERR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < st->dyn_count; i++) {
        uint32_t h = st->dyn[i].slot;
        if (h >= o->slot_count || st->dyn_at[h] != i || !(o->flags[h] & VL_OBJ_ALIVE) || (o->flags[h] & VL_OBJ_STATIC))
            return VL_ERR_INVALID_ARGUMENT;
    }
    uint32_t in_tree = 0;
    for (uint32_t i = 0; i < st->tree_count; i++) {
        uint32_t h = st->tree_slot[i];
        if (!(st->cls[h] & VL_ST_IN_TREE)) continue;
        if (!(o->flags[h] & VL_OBJ_STATIC) || !(o->flags[h] & VL_OBJ_ALIVE)) return VL_ERR_INVALID_ARGUMENT;
        in_tree++;
    }
    if (in_tree + st->stale != st->tree_count) return VL_ERR_INVALID_ARGUMENT;
    if (st->changed) return VL_OK; /* the candidate sets answer for the last commit's boxes */
    for (uint32_t i = 0; i < st->dyn_count; i++) {
        const vl_st_dyn* d = &st->dyn[i];
        if (d->epoch != st->epoch) continue;
        if (!box_inside(&d->last, &d->fat) || d->first + (uint64_t)d->count > st->cand_count)
            return VL_ERR_INVALID_ARGUMENT;
        uint32_t expect = 0; /* every static of the tree that the fat box overlaps, on small trees */
        for (uint32_t k = 0; k < st->tree_count && st->tree_count <= VL_ST_VALIDATE_ALL; k++)
            expect += (st->cls[st->tree_slot[k]] & VL_ST_IN_TREE) && vl_aabb_overlap(&o->boxes[st->tree_slot[k]], &d->fat);
        if (st->tree_count <= VL_ST_VALIDATE_ALL && expect != d->count) return VL_ERR_INVALID_ARGUMENT;
        for (uint32_t k = 0; k < d->count; k++) {
            const vl_st_cand* c = &st->cand[d->first + k];
            if (!(st->cls[c->slot] & VL_ST_IN_TREE) || memcmp(&c->box, &o->boxes[c->slot], sizeof c->box) ||
                !vl_aabb_overlap(&c->box, &d->fat))
                return VL_ERR_INVALID_ARGUMENT;
        }
    }
    return VL_OK;
}

const vl_broadphase_ops vl_st_ops = {
    .create = st_create,
    .destroy = st_destroy,
    .add = st_add,
    .update = st_update,
    .remove = st_remove,
    .commit = st_commit,
    .pairs = st_pairs,
    .validate = st_validate,
};
