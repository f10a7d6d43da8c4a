/* VL_BROADPHASE_TREE: the operations, the tree's upkeep, the commit and the checks. */
#include "broadphase/tree/tree.h"

#include <string.h>

static vl_status tb_create(vl_broadphase* bp) {
    vl_tbp* t = vl_mem_calloc(sizeof *t);
    if (!t) return VL_ERR_OUT_OF_MEMORY;
    t->epoch = 1;
    bp->impl = t;
    return VL_OK;
}

static void tb_destroy(vl_broadphase* bp) {
    vl_tbp* t = bp->impl;
    vl_bvh_destroy(t->tree);
    VL_ARRAY_FREE(t->tree_slot, t->tree_slot_cap);
    VL_ARRAY_FREE(t->extra, t->extra_cap);
    VL_ARRAY_FREE(t->cls, t->cls_cap);
    VL_ARRAY_FREE(t->awake_at, t->awake_at_cap);
    VL_ARRAY_FREE(t->moved, t->moved_cap);
    VL_ARRAY_FREE(t->awake, t->awake_cap);
    VL_ARRAY_FREE(t->cand, t->cand_cap);
    VL_ARRAY_FREE(t->cand_next, t->cand_next_cap);
    VL_ARRAY_FREE(t->ids, t->ids_cap);
    VL_ARRAY_FREE(t->holds, t->holds_cap);
    VL_ARRAY_FREE(t->query, t->query_cap);
    VL_ARRAY_FREE(t->query_of, t->query_of_cap);
    VL_ARRAY_FREE(t->query_first, t->query_first_cap);
    VL_ARRAY_FREE(t->scratch, t->scratch_cap);
    vl_pair_buffer_free(&t->hits);
    vl_prune_set_free(&t->set_moving);
    vl_prune_set_free(&t->set_extra);
    vl_prune_scratch_free(&t->prune_scratch);
    vl_pair_buffer_free(&t->cur);
    vl_pair_buffer_free(&t->next);
    vl_pair_buffer_free(&t->found);
    vl_bp_pair_sort_free(&t->sort);
    vl_mem_free(t, sizeof *t);
}

/* The objects moved (added, updated or removed): listed once each in `moved` (branch-free: each
 * written past the list's end, kept when new), out of the tree. Counts in locals, since the byte
 * stores may alias them. */
static void tb_touch(vl_tbp* t, const uint32_t* handles, uint32_t count) {
    uint8_t* cls = t->cls;
    uint32_t* moved = t->moved;
    uint32_t n = t->moved_count, left = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        uint8_t c = cls[h];
        moved[n] = h;
        n += !(c & VL_PRUNE_MOVED);
        left += (c & VL_TB_IN_TREE) ? 1u : 0u;
        cls[h] = (uint8_t)((c & ~VL_TB_IN_TREE) | VL_PRUNE_MOVED);
    }
    t->moved_count = n;
    t->departed += left;
    t->departures += left;
}

/* Every array a slot indexes, and the lists that hold a slot at most once, sized to the slots:
 * update and remove never allocate. */
static vl_status tb_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    vl_tbp* t = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    uint64_t slots = o->slot_count;
    uint32_t old_cap = t->cls_cap;
    vl_status s = VL_ARRAY_RESERVE(t->cls, t->cls_cap, t->cls_cap, slots);
    if (s == VL_OK && t->cls_cap > old_cap) memset(t->cls + old_cap, 0, t->cls_cap - old_cap);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(t->awake_at, t->awake_at_cap, t->awake_at_cap, slots);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(t->moved, t->moved_cap, t->moved_count, slots + 1);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(t->extra, t->extra_cap, t->extra_count, slots);
    if (s != VL_OK) return s;
    /* a slot removed and added again in one period (vl_broadphase_set_static) keeps its listings;
     * any other slot's bits are clear (zeroed when grown, cleared by the commit after its removal) */
    for (uint32_t i = 0; i < count; i++) {
        uint8_t* c = &t->cls[handles[i]];
        *c = (uint8_t)((*c & (VL_PRUNE_MOVED | VL_TB_EXTRA | VL_TB_AWAKE)) |
                       ((o->flags[handles[i]] & VL_OBJ_STATIC) ? VL_PRUNE_STATIC : 0));
    }
    tb_touch(t, handles, count);
    return VL_OK;
}

static vl_status tb_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_tbp* t = bp->impl;
    vl_aabb* dst = bp->objects.boxes;
    for (uint32_t i = 0; i < count; i++) dst[handles[i]] = boxes[i];
    tb_touch(t, handles, count);
    return VL_OK;
}

static void tb_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    tb_touch(bp->impl, handles, count);
}

/* A resting object joins extra unless it is listed there or already in the tree (a build by a
 * commit that then failed). */
static void tb_push_extra(vl_tbp* t, uint32_t h) {
    if (t->cls[h] & (VL_TB_EXTRA | VL_TB_IN_TREE)) return;
    t->cls[h] |= VL_TB_EXTRA;
    t->extra[t->extra_count++] = h;
}

/* The tree built again over its objects that stayed and `extra`: a new epoch. On failure the tree
 * is as it was. */
static vl_status tb_build(vl_tbp* t, const vl_bp_objects* o, vl_context* ctx) {
    uint32_t total = 0, n = t->extra_count;
    vl_status s = VL_ARRAY_RESERVE(t->ids, t->ids_cap, 0, (uint64_t)t->tree_count + n + 1);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < t->tree_count; i++)
        if (t->cls[t->tree_slot[i]] & VL_TB_IN_TREE) t->ids[total++] = t->tree_slot[i];
    memcpy(t->ids + total, t->extra, (size_t)n * sizeof *t->extra);
    total += n;
    vl_bvh* tree = NULL;
    if (total) {
        vl_aabb* boxes = vl_mem_alloc((size_t)total * sizeof *boxes);
        if (!boxes) return VL_ERR_OUT_OF_MEMORY;
        for (uint32_t i = 0; i < total; i++) boxes[i] = o->boxes[t->ids[i]];
        vl_bvh_desc desc = vl_bvh_default_desc();
        desc.max_leaf_size = 4;
        vl_exec exec = {.context = ctx};
        s = vl_bvh_build_boxes(boxes, total, &desc, &tree, ctx ? &exec : NULL);
        vl_mem_free(boxes, (size_t)total * sizeof *boxes);
        if (s != VL_OK) return s;
    }
    vl_bvh_destroy(t->tree);
    t->tree = tree;
    uint32_t* slot = t->tree_slot; /* ids holds the tree's slots from here on */
    uint32_t cap = t->tree_slot_cap;
    t->tree_slot = t->ids, t->tree_slot_cap = t->ids_cap;
    t->ids = slot, t->ids_cap = cap;
    t->tree_count = total;
    for (uint32_t i = 0; i < total; i++) {
        uint8_t* c = &t->cls[t->tree_slot[i]];
        *c = (uint8_t)((*c & ~VL_TB_EXTRA) | VL_TB_IN_TREE);
    }
    t->extra_count = 0;
    t->departed = 0;
    t->epoch = t->epoch + 1 ? t->epoch + 1 : 1;
    return VL_OK;
}

static int tb_build_due(const vl_tbp* t) {
    return (uint64_t)t->extra_count + t->departed > t->tree_count / VL_TB_REBUILD_SHARE + VL_TB_REBUILD_MIN;
}

/* Before the pairs: the awake objects that did not move since the last commit come to rest in
 * `extra`, the others keep their places (and fat boxes), the moved objects not awake yet join them:
 * `awake` lists the moving objects. extra keeps only resting objects; the tree is built again
 * when due. Done again after a failure, it gives the same state. */
static vl_status tb_settle(vl_tbp* t, const vl_bp_objects* o, vl_context* ctx) {
    vl_status s = VL_ARRAY_RESERVE(t->awake, t->awake_cap, t->awake_count, (uint64_t)t->awake_count + t->moved_count);
    if (s != VL_OK) return s;
    uint8_t* cls = t->cls;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->awake_count; i++) {
        uint32_t h = t->awake[i].slot;
        if ((cls[h] & VL_PRUNE_MOVED) && (o->flags[h] & VL_OBJ_ALIVE)) {
            if (n != i) t->awake[n] = t->awake[i];
            t->awake_at[h] = n++;
            continue;
        }
        cls[h] &= (uint8_t)~VL_TB_AWAKE;
        if (!(cls[h] & VL_PRUNE_MOVED)) tb_push_extra(t, h);
    }
    for (uint32_t i = 0; i < t->moved_count; i++) {
        uint32_t h = t->moved[i];
        if (!(o->flags[h] & VL_OBJ_ALIVE) || (cls[h] & VL_TB_AWAKE)) continue;
        t->awake[n] = (vl_tb_awake){.last = o->boxes[h], .slot = h};
        cls[h] |= VL_TB_AWAKE;
        t->awake_at[h] = n++;
    }
    t->awake_count = n;
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->extra_count; i++) {
        uint32_t h = t->extra[i];
        if ((o->flags[h] & VL_OBJ_ALIVE) && !(cls[h] & VL_PRUNE_MOVED))
            t->extra[k++] = h;
        else
            cls[h] &= (uint8_t)~VL_TB_EXTRA;
    }
    t->extra_count = k;
    return tb_build_due(t) ? tb_build(t, o, ctx) : VL_OK;
}

/* After a commit: the moving objects' boxes of this commit; the marks cleared (the dead slots'
 * bits all); the statics come to rest at once, so that a level's statics are in the tree when the
 * commit that added them returns (a failed build leaves them in extra for the next commit's). */
static void tb_finish(vl_tbp* t, const vl_bp_objects* o, vl_context* ctx) {
    uint8_t* cls = t->cls;
    for (uint32_t i = 0; i < t->moved_count; i++) {
        uint32_t h = t->moved[i];
        cls[h] = (o->flags[h] & VL_OBJ_ALIVE) ? (uint8_t)(cls[h] & ~VL_PRUNE_MOVED) : 0;
    }
    t->moved_count = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->awake_count; i++) {
        uint32_t h = t->awake[i].slot;
        if (cls[h] & VL_PRUNE_STATIC) {
            cls[h] &= (uint8_t)~VL_TB_AWAKE;
            tb_push_extra(t, h);
            continue;
        }
        if (n != i) t->awake[n] = t->awake[i];
        t->awake[n].last = o->boxes[h];
        t->awake_at[h] = n++;
    }
    t->awake_count = n;
    if (tb_build_due(t)) (void)tb_build(t, o, ctx);
}

static vl_status tb_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    vl_tbp* t = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    if (!t->moved_count) return VL_OK;
    vl_status s = tb_settle(t, o, bp->desc.context);
    if (s == VL_OK) s = vl_tbp_find_pairs(t, o, bp->desc.context);
    if (s == VL_OK) s = vl_bp_pair_sort_run(&t->sort, &t->found, o->slot_count);
    if (s == VL_OK)
        s = vl_bp_pairs_merge_moved(&t->cur, &t->found, t->cls, VL_PRUNE_MOVED, &t->next, created, deleted);
    if (s != VL_OK) { /* the arena may have been packed under sets that were about to be renewed */
        for (uint32_t i = 0; i < t->awake_count; i++) t->awake[i].epoch = 0;
        return s;
    }
    vl_pair_buffer p = t->cur;
    t->cur = t->next;
    t->next = p;
    tb_finish(t, o, bp->desc.context);
    return VL_OK;
}

static const vl_pair* tb_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_tbp* t = bp->impl;
    *count = t->cur.count;
    return t->cur.pairs;
}

/* Trees of up to this many objects have each candidate set checked against all of them. */
#define VL_TB_VALIDATE_ALL 1024u

/* A current candidate set: the fat box holds the box of the last commit; every candidate still in
 * the tree carries its box and overlaps the fat box, and on small trees they are all of the tree's
 * objects that do. */
static int tb_set_valid(const vl_tbp* t, const vl_bp_objects* o, const vl_tb_awake* d) {
    if (!vl_aabb_inside(&d->last, &d->fat) || d->first + (uint64_t)d->count > t->cand_count) return 0;
    uint32_t in_tree = 0;
    for (uint32_t k = 0; k < d->count; k++) {
        const vl_tb_cand* c = &t->cand[d->first + k];
        if (c->slot >= o->slot_count) return 0;
        if (!(t->cls[c->slot] & VL_TB_IN_TREE)) continue;
        if (memcmp(&c->box, &o->boxes[c->slot], sizeof c->box) || !vl_aabb_overlap(&c->box, &d->fat)) return 0;
        in_tree++;
    }
    if (t->tree_count > VL_TB_VALIDATE_ALL) return 1;
    uint32_t expect = 0;
    for (uint32_t k = 0; k < t->tree_count; k++)
        expect += (t->cls[t->tree_slot[k]] & VL_TB_IN_TREE) && vl_aabb_overlap(&o->boxes[t->tree_slot[k]], &d->fat);
    return expect == in_tree;
}

/* The pairs sorted and unique; every alive object moving, awake, in the tree or in extra, never
 * both of the last two; the awake objects and their slots agreeing; the tree's objects alive and
 * counted; after a commit, every current candidate set (tb_set_valid). */
static vl_status tb_validate(const vl_broadphase* bp) {
    const vl_tbp* t = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    if (!vl_bp_pairs_sorted(&t->cur)) return VL_ERR_INVALID_ARGUMENT;
    const uint8_t where = VL_PRUNE_MOVED | VL_TB_AWAKE | VL_TB_IN_TREE | VL_TB_EXTRA;
    for (uint32_t h = 0; h < o->slot_count; h++) {
        if ((o->flags[h] & VL_OBJ_ALIVE) && !(t->cls[h] & where)) return VL_ERR_INVALID_ARGUMENT;
        if ((t->cls[h] & (VL_TB_EXTRA | VL_TB_IN_TREE)) == (VL_TB_EXTRA | VL_TB_IN_TREE)) return VL_ERR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < t->awake_count; i++) {
        uint32_t h = t->awake[i].slot;
        if (h >= o->slot_count || !(t->cls[h] & VL_TB_AWAKE) || t->awake_at[h] != i) return VL_ERR_INVALID_ARGUMENT;
    }
    uint32_t in_tree = 0;
    for (uint32_t i = 0; i < t->tree_count; i++) {
        uint32_t h = t->tree_slot[i];
        if (!(t->cls[h] & VL_TB_IN_TREE)) continue;
        if (!(o->flags[h] & VL_OBJ_ALIVE) || (t->cls[h] & VL_PRUNE_MOVED)) return VL_ERR_INVALID_ARGUMENT;
        in_tree++;
    }
    if (in_tree + t->departed != t->tree_count) return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < t->extra_count; i++)
        if (!(t->cls[t->extra[i]] & VL_TB_EXTRA)) return VL_ERR_INVALID_ARGUMENT;
    if (t->moved_count) return VL_OK; /* the candidate sets answer for the last commit's boxes */
    for (uint32_t i = 0; i < t->awake_count; i++)
        if (t->awake[i].epoch == t->epoch && !tb_set_valid(t, o, &t->awake[i])) return VL_ERR_INVALID_ARGUMENT;
    return VL_OK;
}

const vl_broadphase_ops vl_tbp_ops = {
    .create = tb_create,
    .destroy = tb_destroy,
    .add = tb_add,
    .update = tb_update,
    .remove = tb_remove,
    .commit = tb_commit,
    .pairs = tb_pairs,
    .validate = tb_validate,
};
