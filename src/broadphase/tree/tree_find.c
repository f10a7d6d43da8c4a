/* VL_BROADPHASE_TREE: the pairs with a moving end. The moving objects among themselves and against
 * `extra` by box pruning; against the tree through their candidate sets, renewed in one batched tree
 * query for the objects whose box left its fat box. */
#include <float.h>
#include <string.h>

#include "box_prune/axis_stats.h"
#include "broadphase/tree/tree.h"

/* The box grown by a margin (finite, >= 0: no bound turns NaN, infinite ones stay): the centre's
 * displacement since the last commit, up to a cap in extents, plus a share of the box's largest
 * finite extent. */
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
        float m = moved <= FLT_MAX ? VL_TB_MOTION_MARGIN * moved : 0.0f;
        if (m > VL_TB_MOTION_CAP * extent) m = VL_TB_MOTION_CAP * extent;
        m += extent / VL_TB_SIZE_MARGIN;
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

static int cache_holds(const vl_tbp* t, const vl_tb_awake* d, const vl_aabb* box) {
    return d->epoch == t->epoch && vl_aabb_inside(box, &d->fat);
}

/* Which candidate sets still answer (t->holds); the fat boxes of the other moving objects queried
 * against the tree: t->hits, t->query and t->query_of; their number in *queries. */
static vl_status tree_query(vl_tbp* t, const vl_bp_objects* o, vl_context* ctx, uint32_t n, uint32_t* queries) {
    uint32_t nq = 0;
    vl_status s = VL_ARRAY_RESERVE(t->query, t->query_cap, 0, n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(t->query_of, t->query_of_cap, 0, n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(t->holds, t->holds_cap, 0, n);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < n; i++) {
        const vl_tb_awake* d = &t->awake[i];
        const vl_aabb* b = &o->boxes[d->slot];
        t->holds[i] = (uint8_t)cache_holds(t, d, b);
        if (t->holds[i]) continue;
        t->query[nq] = fat_box(b, &d->last);
        t->query_of[nq++] = i;
    }
    *queries = nq;
    t->hits.count = 0;
    if (!nq) return VL_OK;
    vl_exec exec = {.context = ctx};
    if (!ctx) {
        size_t bytes = vl_bvh_overlap_scratch_size(t->tree, nq);
        if (bytes > UINT32_MAX) return VL_ERR_OUT_OF_MEMORY;
        s = VL_ARRAY_RESERVE(t->scratch, t->scratch_cap, 0, bytes);
        if (s != VL_OK) return s;
        exec.scratch = t->scratch;
        exec.scratch_bytes = bytes;
    }
    return vl_bvh_overlap_boxes(t->tree, t->query, nq, &t->hits, &exec);
}

/* The sets that still answer, packed into cand_next, which becomes cand. */
static vl_status compact_candidates(vl_tbp* t, uint32_t n, uint32_t kept) {
    vl_status s = VL_ARRAY_RESERVE(t->cand_next, t->cand_next_cap, 0, kept + 1ull);
    if (s != VL_OK) return s;
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        vl_tb_awake* d = &t->awake[i];
        if (!t->holds[i]) continue;
        memcpy(t->cand_next + at, t->cand + d->first, (size_t)d->count * sizeof *t->cand);
        d->first = at;
        at += d->count;
    }
    vl_tb_cand* c = t->cand;
    uint32_t cap = t->cand_cap;
    t->cand = t->cand_next, t->cand_cap = t->cand_next_cap;
    t->cand_next = c, t->cand_next_cap = cap;
    t->cand_count = at;
    return VL_OK;
}

/* The queries' hits appended to cand as the new sets of their objects, grouped by query (the tree's
 * departed objects dropped); the arena packed first once the sets left behind outweigh the live ones. */
static vl_status renew_candidates(vl_tbp* t, const vl_bp_objects* o, uint32_t n, uint32_t nq) {
    uint32_t nh = t->hits.count;
    uint64_t kept = 0;
    for (uint32_t i = 0; i < n; i++) kept += t->holds[i] ? t->awake[i].count : 0;
    vl_status s = VL_OK;
    if (t->cand_count > 2 * kept + VL_TB_CAND_SLACK) s = compact_candidates(t, n, (uint32_t)kept);
    if (s == VL_OK && (uint64_t)t->cand_count + nh > UINT32_MAX) s = VL_ERR_OUT_OF_MEMORY;
    if (s == VL_OK) s = VL_ARRAY_RESERVE(t->cand, t->cand_cap, t->cand_count, (uint64_t)t->cand_count + nh + 1);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(t->query_first, t->query_first_cap, 0, nq + 1ull);
    if (s != VL_OK) return s;
    /* a counting sort of the hits by query */
    uint32_t* first = t->query_first;
    memset(first, 0, (nq + 1ull) * sizeof *first);
    const vl_pair* hits = t->hits.pairs;
    for (uint32_t k = 0; k < nh; k++)
        if (t->cls[t->tree_slot[hits[k].b]] & VL_TB_IN_TREE) first[hits[k].a + 1]++;
    first[0] = t->cand_count;
    for (uint32_t q = 0; q < nq; q++) {
        vl_tb_awake* d = &t->awake[t->query_of[q]];
        d->fat = t->query[q];
        d->first = first[q];
        d->count = first[q + 1];
        d->epoch = t->epoch;
        d->departures = t->departures;
        first[q + 1] += first[q];
    }
    vl_tb_cand* cand = t->cand;
    for (uint32_t k = 0; k < nh; k++) {
        uint32_t h = t->tree_slot[hits[k].b];
        if (t->cls[h] & VL_TB_IN_TREE) cand[first[hits[k].a]++] = (vl_tb_cand){o->boxes[h], h};
    }
    t->cand_count = first[nq];
    return VL_OK;
}

/* The pairs of every moving object with the candidates its box overlaps that are still in the tree,
 * never two statics. */
static vl_status tree_pairs(vl_tbp* t, const vl_bp_objects* o, vl_context* ctx, uint32_t n) {
    uint32_t nq = 0;
    vl_status s = tree_query(t, o, ctx, n, &nq);
    if (s == VL_OK) s = renew_candidates(t, o, n, nq);
    uint64_t most = t->found.count;
    for (uint32_t i = 0; i < n; i++) most += t->awake[i].count;
    if (s == VL_OK && most > UINT32_MAX) s = VL_ERR_OUT_OF_MEMORY;
    if (s == VL_OK) s = vl_pair_buffer_reserve(&t->found, (uint32_t)most);
    if (s != VL_OK) return s;
    const uint8_t* cls = t->cls;
    vl_pair* out = t->found.pairs;
    uint32_t count = t->found.count;
    for (uint32_t i = 0; i < n; i++) {
        const vl_tb_awake* d = &t->awake[i];
        const vl_aabb* b = &o->boxes[d->slot];
        const vl_tb_cand* c = t->cand + d->first;
        uint32_t mine = cls[d->slot];
        /* no object has left the tree since the set was found and this one is not static: every
         * candidate counts without reading its bits */
        int all_count = d->departures == t->departures && !(mine & VL_PRUNE_STATIC);
        for (uint32_t k = 0; k < d->count; k++) {
            uint32_t lo = d->slot < c[k].slot ? d->slot : c[k].slot, hi = d->slot ^ c[k].slot ^ lo;
            uint32_t other = all_count ? VL_TB_IN_TREE : cls[c[k].slot];
            out[count] = (vl_pair){lo, hi};
            count += overlaps(b, &c[k].box) & (uint32_t)((other & VL_TB_IN_TREE) != 0) &
                     (uint32_t)((mine & other & VL_PRUNE_STATIC) == 0);
        }
    }
    t->found.count = count;
    return VL_OK;
}

vl_status vl_tbp_find_pairs(vl_tbp* t, const vl_bp_objects* o, vl_context* ctx) {
    uint32_t n = t->awake_count;
    t->found.count = 0;
    if (!n) return VL_OK;
    vl_status s = VL_ARRAY_RESERVE(t->ids, t->ids_cap, 0, n);
    if (s != VL_OK) return s;
    for (uint32_t i = 0; i < n; i++) t->ids[i] = t->awake[i].slot;
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, o->boxes, t->ids, n);
    int axis = vl_axis_stats_best(&stats);
    s = vl_prune_set_build(&t->set_moving, &t->prune_scratch, o->boxes, t->ids, n, axis, 0);
    if (s == VL_OK) s = vl_prune_set_build(&t->set_extra, &t->prune_scratch, o->boxes, t->extra, t->extra_count, axis, 0);
    if (s == VL_OK) s = vl_prune_movers(&t->set_moving, &t->set_extra, t->cls, &t->found);
    if (s == VL_OK && t->tree) s = tree_pairs(t, o, ctx, n);
    return s;
}
