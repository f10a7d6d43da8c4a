/* The incremental commit of VL_BROADPHASE_BOX_PRUNING: only the movers (added, updated, removed
 * since the last commit) are pruned, among themselves and against every other object, kept sorted
 * on the sweep axis from one commit to the next. The movers' entries there go stale and are merged
 * in again only once they stop moving (or die). Pairs between two unmoved objects stay as they
 * are; one merge walk of the sorted current pairs with the sorted pairs of movers gives the
 * created, the deleted and the new set. */
#include <string.h>

#include "box_prune/axis_stats.h"
#include "broadphase/box_pruning/box_pruning.h"

/* Whether every slot with a stale entry in all[0] is an alive mover: all[0] then serves as it is,
 * since the movers' entries are never read (dropped as candidates, skipped as queries). */
static int inc_stale_moving(const vl_prune_bp* p, const vl_bp_objects* o) {
    for (uint32_t i = 0; i < p->stale_count; i++) {
        uint32_t h = p->stale[i];
        if (!(p->cls[h] & VL_PRUNE_MOVED) || !(o->flags[h] & VL_OBJ_ALIVE)) return 0;
    }
    return 1;
}

/* The alive movers into p->set_m; every alive object sorted on the sweep axis into *sorted: all[0]
 * itself while only movers have stale entries (a moving world's usual frame), else all[1] = all[0]
 * without the stale and moved entries, merged with fresh entries of the alive ones. */
static vl_status inc_sets(vl_prune_bp* p, const vl_bp_objects* o, vl_prune_set** sorted) {
    vl_status s = VL_ARRAY_RESERVE(p->dyn, p->dyn_cap, 0, p->mover_count + 1ull);
    if (s == VL_OK)
        s = VL_ARRAY_RESERVE(p->stat, p->stat_cap, 0, (uint64_t)o->slot_count + p->mover_count + 1);
    if (s != VL_OK) return s;
    uint32_t m = 0;
    for (uint32_t i = 0; i < p->mover_count; i++)
        if (o->flags[p->movers[i]] & VL_OBJ_ALIVE) p->dyn[m++] = p->movers[i];
    *sorted = &p->all[1];
    if (p->all_valid) {
        s = vl_prune_set_build(&p->set_m, &p->scratch, o->boxes, p->dyn, m, p->all[0].axis, 0);
        if (s != VL_OK) return s;
        if (m == p->mover_count && inc_stale_moving(p, o)) {
            *sorted = &p->all[0];
            return VL_OK;
        }
        /* fresh entries: the alive movers and the alive stale slots that no longer move */
        uint32_t n = m;
        memcpy(p->stat, p->dyn, m * sizeof(uint32_t));
        for (uint32_t i = 0; i < p->stale_count; i++) {
            uint32_t h = p->stale[i];
            if ((o->flags[h] & VL_OBJ_ALIVE) && !(p->cls[h] & VL_PRUNE_MOVED)) p->stat[n++] = h;
        }
        s = vl_prune_set_build(&p->set_fresh, &p->scratch, o->boxes, p->stat, n, p->all[0].axis, 0);
        return s == VL_OK ? vl_prune_set_merge(&p->all[1], &p->all[0], &p->set_fresh, p->cls,
                                               VL_PRUNE_MOVED | VL_PBP_STALE)
                          : s;
    }
    uint32_t n = 0;
    for (uint32_t h = 0; h < o->slot_count; h++)
        if (o->flags[h] & VL_OBJ_ALIVE) p->stat[n++] = h;
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, o->boxes, p->stat, n);
    int axis = vl_axis_stats_best(&stats);
    s = vl_prune_set_build(&p->set_m, &p->scratch, o->boxes, p->dyn, m, axis, 0);
    if (s == VL_OK) s = vl_prune_set_build(&p->all[1], &p->scratch, o->boxes, p->stat, n, axis, 0);
    return s;
}

/* After a commit: all[0] is the set just used; the stale slots are the alive movers when it served
 * as it was, none when it was built again. */
static void inc_set_stale(vl_prune_bp* p, int rebuilt, uint32_t alive_movers) {
    uint8_t* cls = p->cls;
    if (rebuilt) {
        for (uint32_t i = 0; i < p->stale_count; i++) cls[p->stale[i]] &= (uint8_t)~VL_PBP_STALE;
        p->stale_count = 0;
        return;
    }
    for (uint32_t i = 0; i < alive_movers; i++) {
        uint32_t h = p->dyn[i];
        p->stale[p->stale_count] = h; /* branch-free: listed when not yet */
        p->stale_count += !(cls[h] & VL_PBP_STALE);
        cls[h] |= VL_PBP_STALE;
    }
}

vl_status vl_pbp_commit_incremental(vl_prune_bp* p, const vl_bp_objects* o, vl_context* ctx, vl_pair_buffer* created,
                                    vl_pair_buffer* deleted) {
    vl_prune_set* sorted = &p->all[1];
    vl_status s = inc_sets(p, o, &sorted);
    p->found.count = 0;
    if (s == VL_OK) s = vl_pbp_sweep_movers(ctx, &p->set_m, sorted, p->cls, &p->found);
    if (s == VL_OK) s = vl_bp_pair_sort_run(&p->sort, &p->found, o->slot_count);
    /* found holds every pair with a moved end: a current pair with a moved end that is not found
     * is deleted, one without is kept */
    if (s == VL_OK) s = vl_bp_pairs_merge_moved(&p->cur, &p->found, p->cls, VL_PRUNE_MOVED, &p->next, created, deleted);
    if (s != VL_OK) return s;
    vl_pair_buffer t = p->cur;
    p->cur = p->next;
    p->next = t;
    if (sorted == &p->all[1]) {
        vl_prune_set u = p->all[0];
        p->all[0] = p->all[1];
        p->all[1] = u;
    }
    inc_set_stale(p, sorted == &p->all[0] ? 0 : 1, p->set_m.n);
    p->all_valid = 1;
    vl_pbp_clear_movers(p, o);
    return VL_OK;
}
