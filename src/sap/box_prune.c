/* Box pruning: sort once, then sweep each box over its successors 8 at a time. */
#include "sap/box_prune.h"

#include <math.h>
#include <string.h>

#include "sap/axis.h"
#include "sap/radix.h"
#include "simd/kernels.h"
#include "simd/sap_prune.h"

#define VL_PRUNE_PAD 16u /* the sweep reads 16 candidates at a time */
#define VL_PRUNE_ARRAYS 7u

static size_t prune_stride(uint32_t capacity) { return ((size_t)capacity + VL_PRUNE_PAD + 15u) & ~(size_t)15u; }

void vl_prune_set_free(vl_prune_set* set) {
    if (set->capacity) vl_mem_free(set->minx, VL_PRUNE_ARRAYS * prune_stride(set->capacity) * sizeof(float));
    memset(set, 0, sizeof *set);
}

void vl_prune_scratch_free(vl_prune_scratch* scratch) {
    vl_array_free((void**)&scratch->keys, &scratch->keys_cap, sizeof(uint64_t));
    vl_array_free((void**)&scratch->tmp, &scratch->tmp_cap, sizeof(uint64_t));
}

vl_status vl_prune_set_reserve(vl_prune_set* set, uint32_t n) {
    if (n <= set->capacity && set->capacity) return VL_OK;
    uint32_t cap = set->capacity * 2 > n ? set->capacity * 2 : n;
    if (cap < 64) cap = 64;
    size_t stride = prune_stride(cap);
    float* block = vl_mem_alloc(VL_PRUNE_ARRAYS * stride * sizeof(float));
    if (!block) return VL_ERR_OUT_OF_MEMORY;
    int axis = set->axis;
    vl_prune_set_free(set);
    set->minx = block;
    set->maxx = block + stride;
    set->miny = block + 2 * stride;
    set->minz = block + 3 * stride;
    set->maxy = block + 4 * stride;
    set->maxz = block + 5 * stride;
    set->id = (uint32_t*)(void*)(block + 6 * stride);
    set->capacity = cap;
    set->axis = axis;
    return VL_OK;
}

/* n entries, then the sentinels. */
static void prune_set_finish(vl_prune_set* set, uint32_t n, int axis) {
    for (uint32_t k = n; k < n + VL_PRUNE_PAD; k++) {
        set->minx[k] = NAN;
        set->maxx[k] = set->miny[k] = set->minz[k] = set->maxy[k] = set->maxz[k] = NAN;
        set->id[k] = 0;
    }
    set->n = n;
    set->axis = axis;
}

vl_status vl_prune_set_build(vl_prune_set* set, vl_prune_scratch* scratch, const vl_aabb* boxes, const uint32_t* ids,
                             uint32_t n, int axis, int presorted) {
    vl_status s = vl_prune_set_reserve(set, n);
    if (s == VL_OK && !presorted) {
        s = vl_array_reserve((void**)&scratch->keys, &scratch->keys_cap, 0, n ? n : 1, sizeof(uint64_t));
        if (s == VL_OK) s = vl_array_reserve((void**)&scratch->tmp, &scratch->tmp_cap, 0, n ? n : 1, sizeof(uint64_t));
    }
    if (s != VL_OK) return s;
    int ay = (axis + 1) % 3, az = (axis + 2) % 3;
    if (!presorted) {
        /* sort (sortable min << 32 | position) by its high half */
        for (uint32_t k = 0; k < n; k++) {
            const vl_aabb* b = &boxes[ids ? ids[k] : k];
            scratch->keys[k] = ((uint64_t)vl_float_to_sortable(b->min[axis]) << 32) | k;
        }
        vl_radix_sort_u64(scratch->keys, scratch->tmp, n, 32);
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t pos = presorted ? k : (uint32_t)scratch->keys[k];
        uint32_t id = ids ? ids[pos] : pos;
        const vl_aabb* b = &boxes[id];
        set->minx[k] = b->min[axis];
        set->maxx[k] = b->max[axis];
        set->miny[k] = b->min[ay];
        set->minz[k] = b->min[az];
        set->maxy[k] = b->max[ay];
        set->maxz[k] = b->max[az];
        set->id[k] = id;
    }
    prune_set_finish(set, n, axis);
    return VL_OK;
}

static inline void prune_copy(vl_prune_set* dst, uint32_t k, const vl_prune_set* src, uint32_t i) {
    dst->minx[k] = src->minx[i];
    dst->maxx[k] = src->maxx[i];
    dst->miny[k] = src->miny[i];
    dst->minz[k] = src->minz[i];
    dst->maxy[k] = src->maxy[i];
    dst->maxz[k] = src->maxz[i];
    dst->id[k] = src->id[i];
}

vl_status vl_prune_set_merge(vl_prune_set* dst, const vl_prune_set* old, const vl_prune_set* add, const uint8_t* cls) {
    vl_status s = vl_prune_set_reserve(dst, old->n + add->n);
    if (s != VL_OK) return s;
    uint32_t i = 0, j = 0, k = 0;
    /* the sentinels (NaN) compare false: each side ends by its index */
    while (i < old->n) {
        if (j < add->n && add->minx[j] < old->minx[i]) {
            prune_copy(dst, k++, add, j++);
        } else { /* branch-free: copied, then kept when not a mover */
            prune_copy(dst, k, old, i);
            k += !(cls[old->id[i]] & VL_PRUNE_MOVED);
            i++;
        }
    }
    while (j < add->n) prune_copy(dst, k++, add, j++);
    prune_set_finish(dst, k, old->axis);
    return VL_OK;
}

/* The output buffer's fields in locals, so that the hot loop does not reload them through a pointer
 * that its own stores may alias. */
typedef struct prune_out {
    vl_pair_buffer* buffer;
    vl_pair* pairs;
    uint32_t count, capacity;
} prune_out;

static inline prune_out prune_out_begin(vl_pair_buffer* buffer) {
    prune_out o = {buffer, buffer->pairs, buffer->count, buffer->capacity};
    return o;
}

static vl_status prune_out_grow(prune_out* o) {
    o->buffer->count = o->count;
    vl_status s = vl_pair_buffer_reserve(o->buffer, o->count + 16u);
    o->pairs = o->buffer->pairs;
    o->capacity = o->buffer->capacity;
    return s;
}

/* Sweeps query q of set `qs` over candidates of `cs` from index j while they start before q ends,
 * 16 candidates per step; emits (query id, candidate id), swapped when `swap`, ordered low-high
 * when `order`. With `cls`, a candidate c is dropped when cls[c] & drop. */
static inline vl_status prune_sweep(const vl_prune_set* qs, uint32_t q, const vl_prune_set* cs, uint32_t j, int swap,
                                    int order, const uint8_t* cls, uint8_t drop, prune_out* out) {
    vl_prune_query8 query =
        vl_prune_query8_make(qs->maxx[q], qs->miny[q], qs->minz[q], qs->maxy[q], qs->maxz[q]);
    uint32_t qid = qs->id[q];
    const float *minx = cs->minx, *miny = cs->miny, *minz = cs->minz, *maxy = cs->maxy, *maxz = cs->maxz;
    const uint32_t* ids = cs->id;
    float qmaxx = qs->maxx[q];
    for (;; j += 16) {
        /* minx is sorted: when the block's last candidate starts in range, all 16 do, and only the
         * other two axes need a test; the last block of the sweep also tests the sweep axis. */
        int full = minx[j + 15] <= qmaxx;
        vl_f8 m0 = vl_prune_yz8(miny, minz, maxy, maxz, j, &query);
        vl_f8 m1 = vl_prune_yz8(miny, minz, maxy, maxz, j + 8, &query);
        if (full && !vl_f8_any(vl_f8_or(m0, m1))) continue; /* the common case: one test, no bits */
        uint32_t hits = vl_f8_bits(m0) | (vl_f8_bits(m1) << 8);
        if (!full) hits &= vl_prune_x8(minx, j, &query) | (vl_prune_x8(minx, j + 8, &query) << 8);
        if (hits) {
            if (out->capacity - out->count < 16u && prune_out_grow(out) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
            vl_pair* dst = out->pairs + out->count;
            do {
                uint32_t cid = ids[j + (uint32_t)__builtin_ctz(hits)];
                hits &= hits - 1;
                if (cls && (cls[cid] & drop)) continue;
                uint32_t a = swap ? cid : qid, b = swap ? qid : cid;
                if (order && a > b) {
                    uint32_t t = a;
                    a = b;
                    b = t;
                }
                *dst++ = (vl_pair){a, b};
            } while (hits);
            out->count = (uint32_t)(dst - out->pairs);
        }
        if (!full) return VL_OK;
    }
}

vl_status vl_prune_complete(const vl_prune_set* set, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s = VL_OK;
    for (uint32_t i = 0; i + 1 < set->n && s == VL_OK; i++) {
        /* the sweep reads candidates i+1.. and stops at the first that starts after box i ends */
        if (set->minx[i + 1] <= set->maxx[i]) s = prune_sweep(set, i, set, i + 1, 0, 1, NULL, 0, &out);
    }
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

vl_status vl_prune_bipartite(const vl_prune_set* a, const vl_prune_set* b, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s = VL_OK;
    /* a-boxes against b-boxes starting at or after them (ties go here), then b-boxes against
     * a-boxes starting strictly after them: every pair once. */
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n && s == VL_OK; i++) {
        while (j < b->n && b->minx[j] < a->minx[i]) j++;
        if (j == b->n) break;
        if (b->minx[j] <= a->maxx[i]) s = prune_sweep(a, i, b, j, 0, 0, NULL, 0, &out);
    }
    j = 0;
    for (uint32_t i = 0; i < b->n && s == VL_OK; i++) {
        while (j < a->n && a->minx[j] <= b->minx[i]) j++;
        if (j == a->n) break;
        if (a->minx[j] <= b->maxx[i]) s = prune_sweep(b, i, a, j, 1, 0, NULL, 0, &out);
    }
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

vl_status vl_prune_movers(const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s = VL_OK;
    /* among the movers: only static-static pairs dropped */
    for (uint32_t i = 0; i + 1 < m->n && s == VL_OK; i++) {
        uint8_t drop = cls[m->id[i]] & VL_PRUNE_STATIC;
        if (m->minx[i + 1] <= m->maxx[i]) s = prune_sweep(m, i, m, i + 1, 0, 1, cls, drop, &out);
    }
    /* movers against the others (starting at or after them), dropping movers among the candidates */
    uint32_t j = 0;
    for (uint32_t i = 0; i < m->n && s == VL_OK; i++) {
        while (j < all->n && all->minx[j] < m->minx[i]) j++;
        if (j == all->n) break;
        uint8_t drop = (uint8_t)(VL_PRUNE_MOVED | (cls[m->id[i]] & VL_PRUNE_STATIC));
        if (all->minx[j] <= m->maxx[i]) s = prune_sweep(m, i, all, j, 0, 1, cls, drop, &out);
    }
    /* the others against movers starting strictly after them */
    j = 0;
    for (uint32_t i = 0; i < all->n && s == VL_OK; i++) {
        while (j < m->n && m->minx[j] <= all->minx[i]) j++;
        if (j == m->n) break;
        uint8_t c = cls[all->id[i]];
        if (!(c & VL_PRUNE_MOVED) && m->minx[j] <= all->maxx[i])
            s = prune_sweep(all, i, m, j, 1, 1, cls, c & VL_PRUNE_STATIC, &out);
    }
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

/* ---- public one-shot API ---------------------------------------------------------------------- */

static vl_status check_boxes(const vl_aabb* boxes, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++)
            if (!(boxes[i].min[a] <= boxes[i].max[a])) return VL_ERR_INVALID_BOUNDS;
    return VL_OK;
}

vl_status vl_box_prune(const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out) {
    if (!vl_pair_buffer_is_valid(out) || (!boxes && count)) return VL_ERR_INVALID_ARGUMENT;
    if (count > 0x7FFFFFF0u) return VL_ERR_TOO_LARGE;
    vl_status s = check_boxes(boxes, count);
    if (s != VL_OK || count < 2) return s;
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, boxes, NULL, count);
    vl_prune_set set = {0};
    vl_prune_scratch scratch = {0};
    s = vl_prune_set_build(&set, &scratch, boxes, NULL, count, vl_axis_stats_best(&stats), 0);
    vl_prune_scratch_free(&scratch);
    if (s == VL_OK) s = vl_prune_complete(&set, out);
    vl_prune_set_free(&set);
    return s;
}

vl_status vl_box_prune_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb, vl_pair_buffer* out) {
    if (!vl_pair_buffer_is_valid(out) || (!a && na) || (!b && nb)) return VL_ERR_INVALID_ARGUMENT;
    if (na > 0x7FFFFFF0u || nb > 0x7FFFFFF0u) return VL_ERR_TOO_LARGE;
    vl_status s = check_boxes(a, na);
    if (s == VL_OK) s = check_boxes(b, nb);
    if (s != VL_OK || !na || !nb) return s;
    vl_axis_stats stats = {0};
    vl_axis_stats_add(&stats, a, NULL, na);
    vl_axis_stats_add(&stats, b, NULL, nb);
    int axis = vl_axis_stats_best(&stats);
    vl_prune_set sa = {0}, sb = {0};
    vl_prune_scratch scratch = {0};
    s = vl_prune_set_build(&sa, &scratch, a, NULL, na, axis, 0);
    if (s == VL_OK) s = vl_prune_set_build(&sb, &scratch, b, NULL, nb, axis, 0);
    vl_prune_scratch_free(&scratch);
    if (s == VL_OK) s = vl_prune_bipartite(&sa, &sb, out);
    vl_prune_set_free(&sa);
    vl_prune_set_free(&sb);
    return s;
}
