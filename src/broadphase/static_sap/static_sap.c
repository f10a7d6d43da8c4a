/* VL_BROADPHASE_STATIC_SAP: life cycle, the virtual walk of an update (Terdiman's static/bipartite
 * SAP notes, Coder Corner, 2012), commit. */
#include "broadphase/static_sap/static_sap.h"
#include "compiler.h"

#include <string.h>

#include "simd/kernels.h"

static void ssap_free(vl_ssap* ss) {
    for (int l = 0; l < 6; l++) {
        VL_ARRAY_FREE(ss->ep[l], ss->ep_cap[l]);
        VL_ARRAY_FREE(ss->oth[l], ss->oth_cap[l]);
    }
    VL_ARRAY_FREE(ss->idx, ss->idx_cap);
    VL_ARRAY_FREE(ss->keys, ss->keys_cap);
    VL_ARRAY_FREE(ss->tmp, ss->tmp_cap);
    VL_ARRAY_FREE(ss->ids, ss->ids_cap);
    VL_ARRAY_FREE(ss->list, ss->list_cap);
    VL_ARRAY_FREE(ss->split, ss->split_cap);
    VL_ARRAY_FREE(ss->saved, ss->saved_cap);
    VL_ARRAY_FREE(ss->columns, ss->columns_cap);
    vl_prune_set_free(&ss->statics);
    vl_prune_set_free(&ss->set_a);
    vl_prune_set_free(&ss->set_b);
    vl_prune_scratch_free(&ss->prune_scratch);
    vl_pair_buffer_free(&ss->found);
    vl_pair_buffer_free(&ss->old_pairs);
    vl_pair_buffer_free(&ss->all);
    vl_pm_free(&ss->pm);
    vl_pm_free(&ss->ground);
    vl_mem_free(ss, sizeof *ss);
}

static vl_status ssap_create(vl_broadphase* bp) {
    vl_ssap* ss = vl_mem_calloc(sizeof *ss);
    if (!ss) return VL_ERR_OUT_OF_MEMORY;
    vl_pm_init(&ss->pm, 0);
    vl_pm_init(&ss->ground, 0);
    vl_status s = VL_OK;
    for (int l = 0; l < 6 && s == VL_OK; l++)
        s = VL_ARRAY_RESERVE(ss->ep[l], ss->ep_cap[l], 0, 2);
    if (s == VL_OK) {
        vl_broadphase inner = *bp;
        inner.desc.kind = VL_BROADPHASE_SAP;
        inner.desc.flags = 0;
        s = vl_sap_ops.create(&inner);
        ss->dyn = inner.impl;
    }
    if (s != VL_OK) {
        ssap_free(ss);
        return s;
    }
    for (int l = 0; l < 6; l++) {
        ss->ep[l][0] = VL_SAP_LOW_SENTINEL;
        ss->ep[l][1] = VL_SAP_HIGH_SENTINEL;
    }
    ss->ep_count = 2;
    bp->impl = ss;
    return VL_OK;
}

static void ssap_destroy(vl_broadphase* bp) {
    vl_ssap* ss = bp->impl;
    vl_broadphase inner = vl_ssap_view(bp);
    vl_sap_ops.destroy(&inner);
    ssap_free(ss);
}

/* ---- update: dynamic endpoints move virtually over the static arrays ------------------------ */

/* A start is attempted even after a failure: re-adding a pair flagged removed needs no memory. */
static inline void ssap_start(vl_ssap* ss, uint32_t d, uint32_t s) {
    if (vl_pm_add(&ss->ground, d, s) != VL_OK) ss->oom = 1;
}

/* Walks the virtual index v of dynamic endpoint m over the static endpoints of the other kind on
 * ground axis `axis` (0 or 2), in one direction (constants once inlined), and returns where m
 * belongs; nothing but `ground` is written. Each endpoint passed changes the overlap on this axis:
 * going left, a min passing a max starts it and a max passing a min stops it (the reverse going
 * right). It is a ground pair change when the static overlaps the dynamic on the other ground axis,
 * tested without a branch by the dynamic's virtual indices against the static's indices stored
 * beside the endpoint: the walk streams through two arrays and touches no other memory until a pair
 * changes. */
VL_INLINE uint32_t ssap_walk(vl_ssap* ss, vl_endpoint m, uint32_t v, int axis,
                                                                int left) {
    const int g = (2 - axis) * 2; /* the other ground axis in idx */
    const uint32_t d = ep_owner(m), m_max = ep_is_max(m);
    const int l = axis * 2 + !m_max;
    const vl_endpoint* e = ss->ep[l];
    const uint32_t* ot = ss->oth[l];
    const uint32_t* q = ss->idx + (size_t)d * 6;
    const uint32_t glo = q[g], ghi = q[g + 1];
    const uint32_t starts = left ? !m_max : m_max;
    vl_endpoint p;
    while (left ? (p = e[v - 1]) > m : (p = e[v]) < m) {
        const uint32_t* ps = ot + (size_t)(left ? v - 1 : v) * 2;
        /* glo <= ps[1] and ps[0] < ghi as one sign test in 64 bits: as two compares, the compiler
         * branches on the first, which goes either way for about half of the endpoints passed */
        uint32_t hit = (uint32_t)((((uint64_t)ps[1] - glo) | ((uint64_t)ghi - 1 - ps[0])) >> 63) ^ 1;
        if (VL_UNLIKELY(hit)) {
            if (starts)
                ssap_start(ss, d, ep_owner(p));
            else
                vl_pm_remove(&ss->ground, d, ep_owner(p));
        }
        v = left ? v - 1 : v + 1;
    }
    return v;
}

/* Moves dynamic h's virtual indices on `axis` from `from` to `box`: a growing max first, then the
 * min, then a shrinking max, so that the box stays a box during the walk (a start then needs no test
 * of the bound that is not moving). An unmoved bound costs a compare. */
VL_INLINE void ssap_move_axis(vl_ssap* ss, uint32_t h, const vl_aabb* from,
                                                                 const vl_aabb* box, int axis) {
    uint32_t old_min = vl_float_to_sortable(from->min[axis]), old_max = vl_float_to_sortable(from->max[axis]);
    uint32_t new_min = vl_float_to_sortable(box->min[axis]), new_max = vl_float_to_sortable(box->max[axis]);
    uint32_t* p = ss->idx + (size_t)h * 6 + axis * 2;
    vl_endpoint mn = ep_make(new_min, 0, h), mx = ep_make(new_max, 1, h);
    if (new_max > old_max) p[1] = ssap_walk(ss, mx, p[1], axis, 0);
    if (new_min < old_min)
        p[0] = ssap_walk(ss, mn, p[0], axis, 1);
    else if (new_min > old_min)
        p[0] = ssap_walk(ss, mn, p[0], axis, 0);
    if (new_max < old_max) p[1] = ssap_walk(ss, mx, p[1], axis, 1);
}

static void ssap_move_box(vl_ssap* ss, uint32_t h, const vl_aabb* from, const vl_aabb* box) {
    ssap_move_axis(ss, h, from, box, 0);
    ssap_move_axis(ss, h, from, box, 2);
}

/* pm from `ground` after a walk: a ground pair is a pair when the boxes overlap on the up axis.
 * Cannot fail once pm has room for every ground pair. */
static void ssap_sync_up(vl_ssap* ss, const vl_aabb* boxes) {
    const vl_pair_manager* g = &ss->ground;
    for (uint32_t i = 0; i < g->count; i++) {
        vl_pair p = g->pairs[i];
        if (!(g->flags[i] & VL_PM_REMOVED) && vl_ssap_overlap_up(&boxes[p.a], &boxes[p.b]))
            vl_pm_add(&ss->pm, p.a, p.b);
        else
            vl_pm_remove(&ss->pm, p.a, p.b);
    }
}

/* Dynamics handles[k] to boxes[k]: the virtual walks against the statics (ground pairs), then the
 * plain SAP of the dynamics (which writes the boxes), then pm from the ground pairs. A failure
 * moves every walked box back: going back only re-adds ground pairs that the way forward flagged
 * removed (still stored), so it never allocates. */
static vl_status ssap_move_dynamics(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_ssap* ss = bp->impl;
    const vl_aabb* now = bp->objects.boxes;
    vl_status s = ss->n_static ? vl_ssap_ground_rebuild(bp) : VL_OK;
    if (s != VL_OK) return s;
    uint32_t done = 0;
    ss->oom = 0;
    if (ss->n_static)
        for (; done < count && !ss->oom; done++) ssap_move_box(ss, handles[done], &now[handles[done]], &boxes[done]);
    s = ss->oom ? VL_ERR_OUT_OF_MEMORY : vl_pm_reserve(&ss->pm, ss->ground.count);
    if (s == VL_OK) {
        vl_broadphase inner = vl_ssap_view(bp);
        s = vl_sap_ops.update(&inner, handles, boxes, count);
        if (s == VL_OK) {
            if (ss->n_static) ssap_sync_up(ss, bp->objects.boxes);
            return VL_OK;
        }
    }
    ss->oom = 0;
    while (done--) ssap_move_box(ss, handles[done], &boxes[done], &now[handles[done]]);
    return s;
}

/* Splits the batch into dynamics (ids and split from the front) and statics (from the back); the
 * statics move first with the dynamics still, then the dynamics walk over them. */
static vl_status ssap_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_ssap* ss = bp->impl;
    const vl_bp_objects* o = &bp->objects;
    vl_status s = VL_ARRAY_RESERVE(ss->ids, ss->ids_cap, 0, o->slot_count);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(ss->split, ss->split_cap, 0, count);
    if (s != VL_OK) return s;
    uint32_t nd = 0, ns = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t at = (o->flags[handles[i]] & VL_OBJ_STATIC) ? count - 1 - ns++ : nd++;
        ss->ids[at] = handles[i];
        ss->split[at] = boxes[i];
    }
    const uint32_t *sh = ss->ids + nd, *dh = ss->ids;
    const vl_aabb *sb = ss->split + nd, *db = ss->split;
    if (ns) {
        s = vl_ssap_statics_prepare(bp, sb, ns);
        if (s != VL_OK) return s;
        vl_ssap_statics_apply(bp, sh, sb, ns);
    }
    if (nd) {
        s = ssap_move_dynamics(bp, dh, db, nd);
        if (s != VL_OK && ns) vl_ssap_statics_undo(bp, sh, ns);
    }
    return s;
}

/* ---- commit, pairs ------------------------------------------------------------------------- */

/* A pair whose end changed between dynamic and static in this period (vl_broadphase_set_static)
 * left one pair manager and entered the other: it is neither created nor deleted. Every such pair
 * was touched in ps; its flags in both are made silent (pd's or ps's removal becomes NEW | REMOVED,
 * the other's addition loses NEW). */
static void ssap_cancel_moves(vl_pair_manager* ps, vl_pair_manager* pd) {
    const uint8_t both = VL_PM_NEW | VL_PM_REMOVED;
    for (uint32_t t = 0; t < ps->touched_count; t++) {
        vl_pair p = ps->touched[t];
        uint32_t i = vl_pm_find(ps, p.a, p.b);
        uint8_t f = ps->flags[i] & both;
        if (f != VL_PM_NEW && f != VL_PM_REMOVED) continue;
        uint32_t j = vl_pm_find(pd, p.a, p.b);
        if (j == VL_PM_NONE || (pd->flags[j] & both) != (f ^ both)) continue;
        ps->flags[i] ^= VL_PM_NEW;
        pd->flags[j] ^= VL_PM_NEW;
    }
}

/* Both pair managers commit into the same lists, after every buffer has room, so that neither
 * commits alone; the pairs of both are then listed in `all`. */
static vl_status ssap_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    vl_ssap* ss = bp->impl;
    vl_pair_manager *pd = &ss->dyn->pm, *ps = &ss->pm;
    vl_pm_commit(&ss->ground, NULL, NULL); /* reports nothing, cannot fail; pm already follows it */
    if (!pd->touched_count && !ps->touched_count) return VL_OK;
    uint64_t touched = (uint64_t)pd->touched_count + ps->touched_count;
    vl_status s =
        created ? VL_ARRAY_RESERVE(created->pairs, created->capacity, created->count, created->count + touched) : VL_OK;
    if (s == VL_OK && deleted)
        s = VL_ARRAY_RESERVE(deleted->pairs, deleted->capacity, deleted->count, deleted->count + touched);
    if (s == VL_OK) s = vl_pair_buffer_reserve(&ss->all, pd->count + ps->count);
    if (s != VL_OK) return s;
    if (ss->removed) ssap_cancel_moves(ps, pd);
    s = vl_pm_commit(pd, created, deleted);
    if (s == VL_OK) s = vl_pm_commit(ps, created, deleted);
    if (s != VL_OK) return s; /* not reached: the lists had room */
    if (pd->count) memcpy(ss->all.pairs, pd->pairs, pd->count * sizeof(vl_pair));
    if (ps->count) memcpy(ss->all.pairs + pd->count, ps->pairs, ps->count * sizeof(vl_pair));
    ss->all.count = pd->count + ps->count;
    ss->removed = 0;
    return VL_OK;
}

static const vl_pair* ssap_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_ssap* ss = bp->impl;
    *count = ss->all.count;
    return ss->all.pairs;
}

const vl_broadphase_ops vl_static_sap_ops = {
    .create = ssap_create,
    .destroy = ssap_destroy,
    .add = vl_ssap_add,
    .update = ssap_update,
    .remove = vl_ssap_remove,
    .commit = ssap_commit,
    .pairs = ssap_pairs,
    .validate = vl_ssap_validate,
    .set_static = vl_ssap_set_static,
};
