/* VL_BROADPHASE_STATIC_TREE: the pairs of a commit. The dynamic objects among themselves and
 * against the statics outside the tree by box pruning; against the tree through their candidate
 * sets, renewed in one batched tree query for the objects whose box left its fat box. */
#include <float.h>
#include <string.h>

#include "box_prune/axis_stats.h"
#include "broadphase/static_tree/static_tree.h"

static int box_inside(const vl_aabb* in, const vl_aabb* out) {
    return in->min[0] >= out->min[0] && in->min[1] >= out->min[1] && in->min[2] >= out->min[2] &&
           in->max[0] <= out->max[0] && in->max[1] <= out->max[1] && in->max[2] <= out->max[2];
}

/* The box grown by a margin (finite, >= 0: no bound turns NaN, infinite ones stay): motion times
 * the centre's displacement since the last commit, plus a share of the box's largest finite extent. */
static vl_aabb fat_box(const vl_aabb* b, const vl_aabb* last) {
    float extent = 0.0f;
    for (int a = 0; a < 3; a++) {
        float e = b->max[a] - b->min[a];
        if (e > extent && e <= FLT_MAX) extent = e;
    }
    vl_aabb fat;
    for (int a = 0; a < 3; a++) {
        float moved = 0.5f * ((b->min[a] + b->max[a]) - (last->min[a] + last->max[a]));
        moved = moved < 0.0f ? -moved : moved;
        float m = moved <= FLT_MAX ? VL_ST_MOTION_MARGIN * moved : 0.0f;
        if (m > VL_ST_MOTION_CAP * extent) m = VL_ST_MOTION_CAP * extent;
        m += extent / VL_ST_SIZE_MARGIN;
        if (!(m <= FLT_MAX)) m = FLT_MAX;
        fat.min[a] = b->min[a] - m;
        fat.max[a] = b->max[a] + m;
    }
    return fat;
}

/* vl_aabb_overlap without a branch: candidates overlap or not at random. */
static inline uint32_t overlaps(const vl_aabb* a, const vl_aabb* b) {
    return (uint32_t)(a->min[0] <= b->max[0]) & (uint32_t)(b->min[0] <= a->max[0]) & (uint32_t)(a->min[1] <= b->max[1]) &
           (uint32_t)(b->min[1] <= a->max[1]) & (uint32_t)(a->min[2] <= b->max[2]) & (uint32_t)(b->min[2] <= a->max[2]);
}

static int cache_holds(const vl_st* st, const vl_st_dyn* d, const vl_aabb* box) {
    return d->epoch == st->epoch && box_inside(box, &d->fat);
}

/* Which candidate sets still answer (st->holds); the fat boxes of the other objects queried
 * against the tree: st->hits, st->query and st->query_dyn; their number in *queries. */
static vl_status tree_query(vl_st* st, const vl_bp_objects* o, vl_context* ctx, uint32_t* queries) {
    uint32_t nd = st->dyn_count, nq = 0;
    vl_status s = VL_ARRAY_RESERVE(st->query, st->query_cap, 0, nd);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(st->query_dyn, st->query_dyn_cap, 0, nd);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(st->holds, st->holds_cap, 0, nd);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < nd; i++) {
        const vl_st_dyn* d = &st->dyn[i];
        const vl_aabb* b = &o->boxes[d->slot];
        st->holds[i] = (uint8_t)cache_holds(st, d, b);
        if (st->holds[i]) continue;
        st->query[nq] = fat_box(b, &d->last);
        st->query_dyn[nq++] = i;
    }
    *queries = nq;
    st->hits.count = 0;
    if (!nq) return VL_OK;
    vl_exec exec = {.context = ctx};
    if (!ctx) {
        size_t bytes = vl_bvh_overlap_scratch_size(st->tree, nq);
        if (bytes > UINT32_MAX) return VL_ERR_OUT_OF_MEMORY;
        s = VL_ARRAY_RESERVE(st->scratch, st->scratch_cap, 0, bytes);
        if (s != VL_OK) return s;
        exec.scratch = st->scratch;
        exec.scratch_bytes = bytes;
    }
    return vl_bvh_overlap_boxes(st->tree, st->query, nq, &st->hits, &exec);
}

/* The sets that still answer, packed into cand_next, which becomes cand. */
static vl_status compact_candidates(vl_st* st, uint32_t kept) {
    vl_status s = VL_ARRAY_RESERVE(st->cand_next, st->cand_next_cap, 0, kept + 1ull);
    if (s != VL_OK) return s;
    uint32_t at = 0;
    for (uint32_t i = 0; i < st->dyn_count; i++) {
        vl_st_dyn* d = &st->dyn[i];
        if (!st->holds[i]) continue;
        memcpy(st->cand_next + at, st->cand + d->first, (size_t)d->count * sizeof *st->cand);
        d->first = at;
        at += d->count;
    }
    vl_st_cand* t = st->cand;
    uint32_t cap = st->cand_cap;
    st->cand = st->cand_next, st->cand_cap = st->cand_next_cap;
    st->cand_next = t, st->cand_next_cap = cap;
    st->cand_count = at;
    return VL_OK;
}

/* The queries' hits appended to cand as the new sets of their objects, grouped by query (the
 * tree's stale primitives dropped); the arena packed first once the sets left behind outweigh the
 * live ones. */
static vl_status renew_candidates(vl_st* st, const vl_bp_objects* o, uint32_t nq) {
    uint32_t nd = st->dyn_count, nh = st->hits.count;
    uint64_t kept = 0;
    for (uint32_t i = 0; i < nd; i++) kept += st->holds[i] ? st->dyn[i].count : 0;
    vl_status s = VL_OK;
    if (st->cand_count > 2 * kept + VL_ST_CAND_SLACK) s = compact_candidates(st, (uint32_t)kept);
    if (s == VL_OK && (uint64_t)st->cand_count + nh > UINT32_MAX) s = VL_ERR_OUT_OF_MEMORY;
    if (s == VL_OK) s = VL_ARRAY_RESERVE(st->cand, st->cand_cap, st->cand_count, (uint64_t)st->cand_count + nh + 1);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(st->query_first, st->query_first_cap, 0, nq + 1ull);
    if (s != VL_OK) return s;
    /* a counting sort of the hits by query */
    uint32_t* first = st->query_first;
    memset(first, 0, (nq + 1ull) * sizeof *first);
    const vl_pair* hits = st->hits.pairs;
    for (uint32_t k = 0; k < nh; k++)
        if (st->cls[st->tree_slot[hits[k].b]] & VL_ST_IN_TREE) first[hits[k].a + 1]++;
    first[0] = st->cand_count;
    for (uint32_t q = 0; q < nq; q++) {
        vl_st_dyn* d = &st->dyn[st->query_dyn[q]];
        d->fat = st->query[q];
        d->first = first[q];
        d->count = first[q + 1];
        d->epoch = st->epoch;
        first[q + 1] += first[q];
    }
    vl_st_cand* cand = st->cand;
    for (uint32_t k = 0; k < nh; k++) {
        uint32_t h = st->tree_slot[hits[k].b];
        if (st->cls[h] & VL_ST_IN_TREE) cand[first[hits[k].a]++] = (vl_st_cand){o->boxes[h], h};
    }
    st->cand_count = first[nq];
    return VL_OK;
}

/* The pairs of every dynamic object with the candidates its box overlaps. */
static vl_status tree_pairs(vl_st* st, const vl_bp_objects* o, vl_context* ctx) {
    uint32_t nq = 0;
    vl_status s = tree_query(st, o, ctx, &nq);
    if (s == VL_OK) s = renew_candidates(st, o, nq);
    uint64_t most = st->next.count;
    for (uint32_t i = 0; i < st->dyn_count; i++) most += st->dyn[i].count;
    if (s == VL_OK && most > UINT32_MAX) s = VL_ERR_OUT_OF_MEMORY;
    if (s == VL_OK) s = vl_pair_buffer_reserve(&st->next, (uint32_t)most);
    if (s != VL_OK) return s;
    vl_pair* out = st->next.pairs;
    uint32_t n = st->next.count;
    for (uint32_t i = 0; i < st->dyn_count; i++) {
        const vl_st_dyn* d = &st->dyn[i];
        const vl_aabb* b = &o->boxes[d->slot];
        const vl_st_cand* c = st->cand + d->first;
        for (uint32_t k = 0; k < d->count; k++) {
            uint32_t lo = d->slot < c[k].slot ? d->slot : c[k].slot, hi = d->slot ^ c[k].slot ^ lo;
            out[n] = (vl_pair){lo, hi};
            n += overlaps(b, &c[k].box);
        }
    }
    st->next.count = n;
    return VL_OK;
}

vl_status vl_st_find_pairs(vl_st* st, const vl_bp_objects* o, vl_context* ctx) {
    st->next.count = 0;
    uint32_t nd = st->dyn_count;
    if (!nd) return VL_OK;
    vl_status s = VL_ARRAY_RESERVE(st->ids, st->ids_cap, 0, nd);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < nd; i++) st->ids[i] = st->dyn[i].slot;
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, o->boxes, st->ids, nd);
    int axis = vl_axis_stats_best(&stats);
    s = vl_prune_set_build(&st->set_dyn, &st->prune_scratch, o->boxes, st->ids, nd, axis, 0);
    if (s == VL_OK) s = vl_prune_complete(&st->set_dyn, VL_PRUNE_LOW_HIGH, &st->next);
    if (s == VL_OK && st->extra_count) {
        s = vl_prune_set_build(&st->set_extra, &st->prune_scratch, o->boxes, st->extra, st->extra_count, axis, 0);
        if (s == VL_OK) s = vl_prune_bipartite(&st->set_dyn, &st->set_extra, VL_PRUNE_LOW_HIGH, &st->next);
    }
    if (s == VL_OK && st->tree) s = tree_pairs(st, o, ctx);
    return s;
}

