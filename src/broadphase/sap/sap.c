/* VL_BROADPHASE_SAP: life cycle, the update walk (the start/stop rules of Terdiman's
 * "Sweep-and-prune"), commit. */
#include "broadphase/sap/sap.h"
#include "compiler.h"

#include "simd/kernels.h"

static vl_status sap_create(vl_broadphase* bp) {
    vl_sap* sap = vl_mem_calloc(sizeof *sap);
    if (!sap) return VL_ERR_OUT_OF_MEMORY;
    vl_pm_init(&sap->pm, (bp->desc.flags & VL_BROADPHASE_PAIR_USER_DATA) != 0);
    for (int a = 0; a < 3; a++) {
        if (VL_ARRAY_RESERVE(sap->ep[a], sap->ep_cap[a], 0, 2) != VL_OK) {
            for (int b = 0; b < a; b++) VL_ARRAY_FREE(sap->ep[b], sap->ep_cap[b]);
            vl_mem_free(sap, sizeof *sap);
            return VL_ERR_OUT_OF_MEMORY;
        }
        sap->ep[a][0] = VL_SAP_LOW_SENTINEL;
        sap->ep[a][1] = VL_SAP_HIGH_SENTINEL;
    }
    sap->ep_count = 2;
    bp->impl = sap;
    return VL_OK;
}

static void sap_destroy(vl_broadphase* bp) {
    vl_sap* sap = bp->impl;
    for (int a = 0; a < 3; a++) VL_ARRAY_FREE(sap->ep[a], sap->ep_cap[a]);
    VL_ARRAY_FREE(sap->pos, sap->pos_cap);
    VL_ARRAY_FREE(sap->keys, sap->keys_cap);
    VL_ARRAY_FREE(sap->tmp, sap->tmp_cap);
    VL_ARRAY_FREE(sap->saved, sap->saved_cap);
    VL_ARRAY_FREE(sap->old_ids, sap->old_ids_cap);
    vl_prune_set_free(&sap->set_new);
    vl_prune_set_free(&sap->set_old);
    vl_prune_scratch_free(&sap->prune_scratch);
    vl_pair_buffer_free(&sap->found);
    vl_pm_free(&sap->pm);
    vl_mem_free(sap, sizeof *sap);
}

/* ---- update: endpoints move in place ------------------------------------------------------- */

/* A start is always attempted, even after a failure: re-adding a pair flagged removed needs no
 * memory, and skipping it would lose a pair that still overlaps. */
static inline void sap_start(vl_sap* sap, const vl_bp_objects* o, uint32_t a, uint32_t b) {
    if (vl_bp_may_pair(o, a, b) && vl_pm_add(&sap->pm, a, b) != VL_OK) sap->oom = 1;
}

/* (hi << 32 | lo) - q for q = qmin << 32 | qmax, indices below 2^31: bit 31 is set when lo < qmax,
 * which borrows one from the high half, hi - qmin - 1; bit 63 is then clear when qmin < hi. So the
 * intervals [lo, hi] and [qmin, qmax] interleave when bit 31 is set and bit 63 clear. */
static inline uint64_t sap_packed_sub(uint32_t lo, uint32_t hi, uint64_t q) { return ((uint64_t)hi << 32 | lo) - q; }

/* Moves the endpoint at index i of `axis` to `value`, applying the rules of Terdiman's
 * "Sweep-and-prune": a min passing a max leftwards, or a max passing a min rightwards, starts an
 * overlap on this axis; the reverse passes stop one. Either becomes a pair change when the boxes
 * overlap on the two other axes, which the loop tests by endpoint indices without a branch: the
 * only branch taken is a real pair change. The moving box's indices on the other axes stay put
 * during the walk. */
/* The walk of endpoint m from index i, for one axis and one direction (constants once inlined, so
 * that the moving box's indices on the two other axes j and k stay in registers); returns where m
 * belongs. Going left, a min passing a max starts an overlap; going right, a max passing a min.
 * The 3D test of a passed endpoint p: kinds differ and the boxes' indices interleave on j and k. */
VL_INLINE uint32_t sap_walk(vl_sap* sap, const vl_bp_objects* o, vl_endpoint m,
                                                               uint32_t i, int axis, int left) {
    const int j = axis == 0 ? 2 : 0, k = axis == 2 ? 2 : 4;
    vl_endpoint* e = sap->ep[axis];
    uint32_t* pos = sap->pos;
    uint32_t owner = ep_owner(m);
    const uint32_t* po = pos + (size_t)owner * 6;
    const uint64_t qj = (uint64_t)po[j] << 32 | po[j + 1], qk = (uint64_t)po[k] << 32 | po[k + 1];
    const uint32_t starts = left ? !ep_is_max(m) : ep_is_max(m);
    vl_endpoint p;
    while (left ? (p = e[i - 1]) > m : (p = e[i + 1]) < m) {
        uint32_t* pb = pos + (size_t)ep_owner(p) * 6;
        uint64_t rj = sap_packed_sub(pb[j], pb[j + 1], qj), rk = sap_packed_sub(pb[k], pb[k + 1], qk);
        /* bit 31: kinds differ and both low halves borrow; then bit 63: neither high half does */
        uint64_t hit = (((p ^ m) & rj & rk) << 32) & ~(rj | rk);
        if (VL_UNLIKELY(hit >> 63)) {
            if (starts)
                sap_start(sap, o, owner, ep_owner(p));
            else
                vl_pm_remove(&sap->pm, owner, ep_owner(p));
        }
        e[i] = p;
        pb[axis * 2 + ep_is_max(p)] = i;
        i = left ? i - 1 : i + 1;
    }
    e[i] = m;
    pos[(size_t)owner * 6 + axis * 2 + ep_is_max(m)] = i;
    return i;
}

/* Moves box h's endpoints on `axis` (a constant once inlined: no indirect jump per walk) from
 * `from`, what they hold, to `box`: a growing max first (starts before stops, and a box moving right
 * never passes its own min), then the min, then a shrinking max. An unmoved bound costs a compare. */
VL_INLINE void sap_move_axis(vl_sap* sap, const vl_bp_objects* o, uint32_t h,
                                                                const vl_aabb* from, const vl_aabb* box, int axis) {
    uint32_t old_min = vl_float_to_sortable(from->min[axis]), old_max = vl_float_to_sortable(from->max[axis]);
    uint32_t new_min = vl_float_to_sortable(box->min[axis]), new_max = vl_float_to_sortable(box->max[axis]);
    const uint32_t* p = sap->pos + (size_t)h * 6 + axis * 2;
    vl_endpoint mn = ep_make(new_min, 0, h), mx = ep_make(new_max, 1, h);
    if (new_max > old_max) sap_walk(sap, o, mx, p[1], axis, 0);
    if (new_min < old_min)
        sap_walk(sap, o, mn, p[0], axis, 1);
    else if (new_min > old_min)
        sap_walk(sap, o, mn, p[0], axis, 0);
    if (new_max < old_max) sap_walk(sap, o, mx, p[1], axis, 1);
}

/* Moves box h from `from` to `box` (Terdiman's update rules, see sap_walk). */
static void sap_move_box(vl_sap* sap, const vl_bp_objects* o, uint32_t h, const vl_aabb* from, const vl_aabb* box) {
    sap_move_axis(sap, o, h, from, box, 0);
    sap_move_axis(sap, o, h, from, box, 1);
    sap_move_axis(sap, o, h, from, box, 2);
}

/* Number of endpoints of `axis` ordered before m (a binary search). */
static uint32_t sap_rank(const vl_sap* sap, int axis, vl_endpoint m) {
    const vl_endpoint* e = sap->ep[axis];
    uint32_t lo = 0, n = sap->ep_count;
    while (n > 1) {
        uint32_t half = n / 2;
        lo = e[lo + half] < m ? lo + half : lo;
        n -= half;
    }
    return lo + 1;
}

/* Endpoints the walks of this update would pass, extrapolated from evenly spaced samples. */
static uint64_t sap_estimate_swaps(const vl_sap* sap, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    uint64_t swaps = 0;
    for (uint32_t s = 0; s < VL_SAP_REBUILD_SAMPLES; s++) {
        uint32_t k = (uint32_t)((uint64_t)s * count / VL_SAP_REBUILD_SAMPLES), h = handles[k];
        for (int a = 0; a < 3; a++)
            for (uint32_t is_max = 0; is_max < 2; is_max++) {
                uint32_t now = sap->pos[(size_t)h * 6 + a * 2 + is_max];
                uint32_t value = vl_float_to_sortable(is_max ? boxes[k].max[a] : boxes[k].min[a]);
                if (value == ep_value(sap->ep[a][now])) continue; /* not moving: no search */
                uint32_t to = sap_rank(sap, a, ep_make(value, is_max, h));
                swaps += to > now ? to - now : now - to;
            }
    }
    return swaps * count / VL_SAP_REBUILD_SAMPLES;
}

static vl_status sap_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    vl_sap* sap = bp->impl;
    vl_bp_objects* o = &bp->objects;
    vl_status s = VL_ARRAY_RESERVE(sap->saved, sap->saved_cap, 0, count);
    if (s != VL_OK) return s;
    /* When the walks would pass too many endpoints, sorting everything again is cheaper. */
    if (count >= VL_SAP_REBUILD_MIN &&
        sap_estimate_swaps(sap, handles, boxes, count) > (uint64_t)o->alive * VL_SAP_REBUILD_SWAPS_PER_OBJECT)
        return vl_sap_rebuild(sap, o, handles, boxes, count);
    sap->oom = 0;
    uint32_t done = 0;
    for (; done < count && !sap->oom; done++) {
        uint32_t h = handles[done];
        sap->saved[done] = o->boxes[h];
        o->boxes[h] = boxes[done];
        sap_move_box(sap, o, h, &sap->saved[done], &boxes[done]);
    }
    if (!sap->oom) return VL_OK;
    /* A pair could not be stored: move the boxes back. Going back only re-adds pairs that the way
     * forward flagged removed (still stored), so it never allocates; pairs the way forward added
     * are flagged removed again and never reported. */
    sap->oom = 0;
    while (done--) {
        uint32_t h = handles[done];
        o->boxes[h] = sap->saved[done];
        sap_move_box(sap, o, h, &boxes[done], &sap->saved[done]);
    }
    return VL_ERR_OUT_OF_MEMORY;
}

/* ---- commit, pairs, validate --------------------------------------------------------------- */

static vl_status sap_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    vl_sap* sap = bp->impl;
    return vl_pm_commit(&sap->pm, created, deleted);
}

static const vl_pair* sap_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_sap* sap = bp->impl;
    *count = sap->pm.count;
    return sap->pm.pairs;
}

static uint32_t sap_committed_pairs(const vl_broadphase* bp, vl_pair* out) {
    return vl_pm_committed(&((const vl_sap*)bp->impl)->pm, out);
}

static void** sap_pair_user(const vl_broadphase* bp, uint32_t a, uint32_t b) {
    const vl_sap* sap = bp->impl;
    uint32_t i = vl_pm_find(&sap->pm, a, b);
    if (i == VL_PM_NONE || (sap->pm.flags[i] & VL_PM_REMOVED)) return NULL;
    return vl_pm_user(&sap->pm, a, b);
}

const vl_broadphase_ops vl_sap_ops = {
    .create = sap_create,
    .destroy = sap_destroy,
    .add = vl_sap_add,
    .update = sap_update,
    .remove = vl_sap_remove,
    .commit = sap_commit,
    .pairs = sap_pairs,
    .pair_user = sap_pair_user,
    .validate = vl_sap_validate,
    .set_static = vl_sap_set_static,
    .committed_pairs = sap_committed_pairs,
};
