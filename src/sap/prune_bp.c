/* VL_BROADPHASE_BOX_PRUNING: no per-object structure; each commit prunes the dynamic boxes among
 * themselves and against the static ones, sorts the pairs, and diffs them against the previous
 * commit's sorted pairs into created and deleted lists. */
#include <string.h>

#include "sap/axis.h"
#include "sap/box_prune.h"
#include "sap/broadphase.h"
#include "sap/radix.h"

typedef struct vl_prune_bp {
    vl_pair_buffer cur, next; /* sorted by (a, b) */
    uint32_t *dyn, *stat;
    uint32_t dyn_cap, stat_cap;
    uint64_t *keys, *tmp;
    uint32_t keys_cap, tmp_cap;
    vl_prune_set set_dyn, set_stat;
    vl_prune_scratch scratch;
} vl_prune_bp;

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
    vl_array_free((void**)&p->dyn, &p->dyn_cap, sizeof(uint32_t));
    vl_array_free((void**)&p->stat, &p->stat_cap, sizeof(uint32_t));
    vl_array_free((void**)&p->keys, &p->keys_cap, sizeof(uint64_t));
    vl_array_free((void**)&p->tmp, &p->tmp_cap, sizeof(uint64_t));
    vl_prune_set_free(&p->set_dyn);
    vl_prune_set_free(&p->set_stat);
    vl_prune_scratch_free(&p->scratch);
    vl_mem_free(p, sizeof *p);
}

static vl_status pbp_add(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    (void)bp, (void)handles, (void)count;
    return VL_OK;
}

static vl_status pbp_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) bp->objects.boxes[handles[i]] = boxes[i];
    return VL_OK;
}

static void pbp_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    (void)bp, (void)handles, (void)count;
}

/* All current pairs into p->next, as (low, high), sorted. */
static vl_status pbp_find_pairs(vl_prune_bp* p, const vl_bp_objects* o) {
    vl_status s = vl_array_reserve((void**)&p->dyn, &p->dyn_cap, 0, o->slot_count + 1ull, sizeof(uint32_t));
    if (s == VL_OK) s = vl_array_reserve((void**)&p->stat, &p->stat_cap, 0, o->slot_count + 1ull, sizeof(uint32_t));
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
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, o->boxes, p->dyn, nd);
    vl_axis_stats_add(&stats, o->boxes, p->stat, ns);
    int axis = vl_axis_stats_best(&stats);
    s = vl_prune_set_build(&p->set_dyn, &p->scratch, o->boxes, p->dyn, nd, axis, 0);
    if (s == VL_OK) s = vl_prune_complete(&p->set_dyn, &p->next);
    if (s == VL_OK && ns) {
        s = vl_prune_set_build(&p->set_stat, &p->scratch, o->boxes, p->stat, ns, axis, 0);
        if (s == VL_OK) s = vl_prune_bipartite(&p->set_dyn, &p->set_stat, &p->next);
    }
    uint32_t n = p->next.count;
    if (s == VL_OK) s = vl_array_reserve((void**)&p->keys, &p->keys_cap, 0, n ? n : 1, sizeof(uint64_t));
    if (s == VL_OK) s = vl_array_reserve((void**)&p->tmp, &p->tmp_cap, 0, n ? n : 1, sizeof(uint64_t));
    if (s != VL_OK) return s;
    vl_pair* pairs = p->next.pairs;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = pairs[i].a, b = pairs[i].b;
        p->keys[i] = a < b ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
    }
    vl_radix_sort_u64(p->keys, p->tmp, n, 0);
    for (uint32_t i = 0; i < n; i++) pairs[i] = (vl_pair){(uint32_t)(p->keys[i] >> 32), (uint32_t)p->keys[i]};
    return VL_OK;
}

static inline uint64_t pair_key(vl_pair p) { return (uint64_t)p.a << 32 | p.b; }

static vl_status pbp_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    vl_prune_bp* p = bp->impl;
    vl_status s = pbp_find_pairs(p, &bp->objects);
    if (s == VL_OK && created) s = vl_pair_buffer_reserve(created, created->count + p->next.count);
    if (s == VL_OK && deleted) s = vl_pair_buffer_reserve(deleted, deleted->count + p->cur.count);
    if (s != VL_OK) return s;
    /* both lists sorted: one merge walk gives the differences */
    const vl_pair *old = p->cur.pairs, *now = p->next.pairs;
    uint32_t i = 0, j = 0, no = p->cur.count, nn = p->next.count;
    while (i < no || j < nn) {
        uint64_t ko = i < no ? pair_key(old[i]) : UINT64_MAX, kn = j < nn ? pair_key(now[j]) : UINT64_MAX;
        if (ko == kn) {
            i++, j++;
        } else if (ko < kn) {
            if (deleted) deleted->pairs[deleted->count++] = old[i];
            i++;
        } else {
            if (created) created->pairs[created->count++] = now[j];
            j++;
        }
    }
    vl_pair_buffer t = p->cur;
    p->cur = p->next;
    p->next = t;
    return VL_OK;
}

static const vl_pair* pbp_pairs(const vl_broadphase* bp, uint32_t* count) {
    const vl_prune_bp* p = bp->impl;
    *count = p->cur.count;
    return p->cur.pairs;
}

static vl_status pbp_validate(const vl_broadphase* bp) {
    const vl_prune_bp* p = bp->impl;
    for (uint32_t i = 0; i < p->cur.count; i++) {
        vl_pair q = p->cur.pairs[i];
        if (q.a >= q.b || (i && pair_key(p->cur.pairs[i - 1]) >= pair_key(q))) return VL_ERR_INVALID_ARGUMENT;
    }
    return VL_OK;
}

const vl_broadphase_ops vl_prune_bp_ops = {
    pbp_create, pbp_destroy, pbp_add, pbp_update, pbp_remove, pbp_commit, pbp_pairs, NULL, pbp_validate,
};
