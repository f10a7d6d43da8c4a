/* Box pruning: sort once, then sweep each box over its successors 8 at a time. */
#include "box_prune/box_prune.h"
#include "compiler.h"

#include <math.h>
#include <string.h>

#include "core/radix.h"
#include "simd/kernels.h"
#include "simd/sap_emit.h"
#include "simd/sap_prune.h"

#define VL_PRUNE_PAD 16u /* the sweep reads 16 candidates at a time */
#define VL_PRUNE_ARRAYS 7u

static size_t prune_stride(uint32_t capacity) { return ((size_t)capacity + VL_PRUNE_PAD + 15u) & ~(size_t)15u; }

void vl_prune_set_free(vl_prune_set* set) {
    if (set->capacity) vl_mem_free(set->minx, VL_PRUNE_ARRAYS * prune_stride(set->capacity) * sizeof(float));
    memset(set, 0, sizeof *set);
}

void vl_prune_scratch_free(vl_prune_scratch* scratch) {
    VL_ARRAY_FREE(scratch->keys, scratch->keys_cap);
    VL_ARRAY_FREE(scratch->tmp, scratch->tmp_cap);
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

void vl_prune_set_seal(vl_prune_set* set, uint32_t n) {
    for (uint32_t k = n; k < n + VL_PRUNE_PAD; k++) {
        set->minx[k] = NAN;
        set->maxx[k] = set->miny[k] = set->minz[k] = set->maxy[k] = set->maxz[k] = NAN;
        set->id[k] = 0;
    }
}

void vl_prune_set_finish(vl_prune_set* set, uint32_t n, int axis) {
    vl_prune_set_seal(set, n);
    set->n = n;
    set->axis = axis;
}

vl_prune_set vl_prune_set_view(const vl_prune_set* set, uint32_t start, uint32_t n) {
    vl_prune_set v = {set->minx + start, set->maxx + start, set->miny + start, set->minz + start,
                      set->maxy + start, set->maxz + start, set->id + start, n, 0, set->axis};
    return v;
}

void vl_prune_keys_fill(uint64_t* keys, const vl_aabb* boxes, const uint32_t* ids, uint32_t first, uint32_t end,
                        int axis) {
    for (uint32_t k = first; k < end; k++) {
        const vl_aabb* b = &boxes[ids ? ids[k] : k];
        keys[k] = ((uint64_t)vl_float_to_sortable(b->min[axis]) << 32) | k;
    }
}

void vl_prune_set_fill(vl_prune_set* set, const vl_aabb* boxes, const uint32_t* ids, const uint64_t* keys,
                       uint32_t first, uint32_t end, int axis) {
    int ay = (axis + 1) % 3, az = (axis + 2) % 3;
    for (uint32_t k = first; k < end; k++) {
        uint32_t pos = keys ? (uint32_t)keys[k] : k;
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
}

vl_status vl_prune_set_prepare(vl_prune_set* set, vl_prune_scratch* scratch, uint32_t n, int presorted) {
    vl_status s = vl_prune_set_reserve(set, n);
    if (s == VL_OK && !presorted) {
        s = VL_ARRAY_RESERVE(scratch->keys, scratch->keys_cap, 0, n ? n : 1);
        if (s == VL_OK) s = VL_ARRAY_RESERVE(scratch->tmp, scratch->tmp_cap, 0, n ? n : 1);
    }
    return s;
}

vl_status vl_prune_set_build(vl_prune_set* set, vl_prune_scratch* scratch, const vl_aabb* boxes, const uint32_t* ids,
                             uint32_t n, int axis, int presorted) {
    vl_status s = vl_prune_set_prepare(set, scratch, n, presorted);
    if (s != VL_OK) return s;
    if (!presorted) {
        vl_prune_keys_fill(scratch->keys, boxes, ids, 0, n, axis);
        vl_radix_sort_u64(scratch->keys, scratch->tmp, n, 32);
    }
    vl_prune_set_fill(set, boxes, ids, presorted ? NULL : scratch->keys, 0, n, axis);
    vl_prune_set_finish(set, n, axis);
    return VL_OK;
}

vl_status vl_prune_set_merge(vl_prune_set* dst, const vl_prune_set* old, const vl_prune_set* add, const uint8_t* cls,
                             uint8_t drop) {
    vl_status s = vl_prune_set_reserve(dst, old->n + add->n);
    if (s != VL_OK) return s;
    uint32_t i = 0, j = 0, k = 0;
    /* the sentinels (NaN) compare false: each side ends by its index */
    while (i < old->n) {
        if (j < add->n && add->minx[j] < old->minx[i]) {
            vl_prune_set_copy(dst, k++, add, j++);
        } else { /* branch-free: copied, then kept when not dropped */
            vl_prune_set_copy(dst, k, old, i);
            k += !(cls[old->id[i]] & drop);
            i++;
        }
    }
    while (j < add->n) vl_prune_set_copy(dst, k++, add, j++);
    vl_prune_set_finish(dst, k, old->axis);
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

/* Clears the bits of the candidates ids[k] with cls[ids[k]] & drop. */
static inline uint32_t prune_drop(uint32_t hits, const uint32_t* ids, const uint8_t* cls, uint8_t drop) {
    for (uint32_t h = hits; h; h &= h - 1)
        if (cls[ids[vl_ctz32(h)]] & drop) hits &= ~(h & -h);
    return hits;
}

/* Appends (qid, ids[k]) for each bit k of hits (< 2^16) as `mode` says. */
static inline vl_status prune_emit16(prune_out* out, uint32_t hits, const uint32_t* ids, uint32_t qid,
                                     vl_emit_mode mode) {
    if (out->capacity - out->count < 16u && prune_out_grow(out) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
    vl_pair* dst = vl_emit8(out->pairs + out->count, hits & 0xFFu, ids, qid, mode);
    dst = vl_emit8(dst, hits >> 8, ids + 8, qid, mode);
    out->count = (uint32_t)(dst - out->pairs);
    return VL_OK;
}

/* Sweeps query q of set `qs` over candidates of `cs` from index j while they start before q ends,
 * 16 candidates per step; emits (query id, candidate id) as `mode` says. With `cls`, a candidate c
 * is dropped when cls[c] & drop. Sparse hits (`dense` 0): a block without hits costs one
 * predictable branch; dense hits (banded sets, where a block often has some): every block is
 * emitted, with no branch on its hits. */
static inline vl_status prune_sweep(const vl_prune_set* qs, uint32_t q, const vl_prune_set* cs, uint32_t j,
                                    vl_emit_mode mode, int dense, const uint8_t* cls, uint8_t drop, prune_out* out) {
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
        if (!dense && full && !vl_f8_any(vl_f8_or(m0, m1))) continue; /* one test, no bits */
        uint32_t hits = vl_f8_bits(m0) | (vl_f8_bits(m1) << 8);
        if (!full) hits &= vl_prune_x8(minx, j, &query) | (vl_prune_x8(minx, j + 8, &query) << 8);
        if (cls) hits = prune_drop(hits, ids + j, cls, drop);
        if ((dense || hits) && prune_emit16(out, hits, ids + j, qid, mode) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
        if (!full) return VL_OK;
    }
}

static inline vl_status prune_complete(const vl_prune_set* set, int dense, prune_out* out) {
    vl_status s = VL_OK;
    for (uint32_t i = 0; i + 1 < set->n && s == VL_OK; i++) {
        /* the sweep reads candidates i+1.. and stops at the first that starts after box i ends */
        if (set->minx[i + 1] <= set->maxx[i])
            s = prune_sweep(set, i, set, i + 1, VL_EMIT_LOW_HIGH, dense, NULL, 0, out);
    }
    return s;
}

/* Every overlapping (a box, b box) pair, written as (a id, b id) or, when `low_high`, (lower, higher). */
static inline vl_status prune_bipartite(const vl_prune_set* a, const vl_prune_set* b, int low_high, int dense,
                                        prune_out* out) {
    vl_status s = VL_OK;
    vl_emit_mode ab = low_high ? VL_EMIT_LOW_HIGH : VL_EMIT_QC, ba = low_high ? VL_EMIT_LOW_HIGH : VL_EMIT_CQ;
    /* a-boxes against b-boxes starting at or after them (ties go here), then b-boxes against
     * a-boxes starting strictly after them: every pair once. */
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n && s == VL_OK; i++) {
        while (j < b->n && b->minx[j] < a->minx[i]) j++;
        if (j == b->n) break;
        if (b->minx[j] <= a->maxx[i]) s = prune_sweep(a, i, b, j, ab, dense, NULL, 0, out);
    }
    j = 0;
    for (uint32_t i = 0; i < b->n && s == VL_OK; i++) {
        while (j < a->n && a->minx[j] <= b->minx[i]) j++;
        if (j == a->n) break;
        if (a->minx[j] <= b->maxx[i]) s = prune_sweep(b, i, a, j, ba, dense, NULL, 0, out);
    }
    return s;
}

vl_status vl_prune_complete(const vl_prune_set* set, unsigned flags, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s = (flags & VL_PRUNE_DENSE) ? prune_complete(set, 1, &out) : prune_complete(set, 0, &out);
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

vl_status vl_prune_bipartite(const vl_prune_set* a, const vl_prune_set* b, unsigned flags, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s;
    switch (flags & (VL_PRUNE_LOW_HIGH | VL_PRUNE_DENSE)) {
    case 0: s = prune_bipartite(a, b, 0, 0, &out); break;
    case VL_PRUNE_LOW_HIGH: s = prune_bipartite(a, b, 1, 0, &out); break;
    case VL_PRUNE_DENSE: s = prune_bipartite(a, b, 0, 1, &out); break;
    default: s = prune_bipartite(a, b, 1, 1, &out); break;
    }
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

vl_status vl_prune_complete_range(const vl_prune_set* set, uint32_t first, uint32_t end, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s = VL_OK;
    if (end > set->n) end = set->n;
    for (uint32_t i = first; i < end && i + 1 < set->n && s == VL_OK; i++)
        if (set->minx[i + 1] <= set->maxx[i]) s = prune_sweep(set, i, set, i + 1, VL_EMIT_LOW_HIGH, 0, NULL, 0, &out);
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

/* The first index j < n with minx[j] > v (strict) or >= v, n when none. */
static uint32_t first_after(const float* minx, uint32_t n, float v, int strict) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strict ? minx[mid] <= v : minx[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

vl_status vl_prune_bipartite_range(const vl_prune_set* a, const vl_prune_set* b, int pass, uint32_t first,
                                   uint32_t end, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s = VL_OK;
    const vl_prune_set *q = pass ? b : a, *c = pass ? a : b;
    vl_emit_mode mode = pass ? VL_EMIT_CQ : VL_EMIT_QC;
    if (end > q->n) end = q->n;
    if (first < end) {
        /* as prune_bipartite's passes: a-boxes against b-boxes starting at or after them, b-boxes
         * against a-boxes starting strictly after them */
        uint32_t j = first_after(c->minx, c->n, q->minx[first], pass);
        for (uint32_t i = first; i < end && s == VL_OK; i++) {
            if (pass)
                while (j < c->n && c->minx[j] <= q->minx[i]) j++;
            else
                while (j < c->n && c->minx[j] < q->minx[i]) j++;
            if (j == c->n) break;
            if (c->minx[j] <= q->maxx[i]) s = prune_sweep(q, i, c, j, mode, 0, NULL, 0, &out);
        }
    }
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

/* The entries of `all` without VL_PRUNE_MOVED against the movers of m starting strictly after them.
 * The entries that start before the same mover share its block of 16 candidates (loaded once), and
 * most have fewer movers in range: one test each; past 16 in range, the general sweep. */
static vl_status prune_unmoved(const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls, uint32_t first,
                               uint32_t end, prune_out* out) {
    uint32_t i = first, j = first < end ? first_after(m->minx, m->n, all->minx[first], 1) : 0;
    while (i < end) {
        while (j < m->n && m->minx[j] <= all->minx[i]) j++;
        if (j == m->n) return VL_OK;
        float next = m->minx[j], last = m->minx[j + 15]; /* NaN past the movers: never <= */
        for (; i < end && all->minx[i] < next; i++) {
            uint8_t c = cls[all->id[i]];
            float maxx = all->maxx[i];
            if ((c & VL_PRUNE_MOVED) || next > maxx) continue;
            uint8_t drop = c & VL_PRUNE_STATIC;
            if (last <= maxx) {
                if (prune_sweep(all, i, m, j, VL_EMIT_LOW_HIGH, 0, cls, drop, out) != VL_OK)
                    return VL_ERR_OUT_OF_MEMORY;
                continue;
            }
            vl_prune_query8 q = vl_prune_query8_make(maxx, all->miny[i], all->minz[i], all->maxy[i], all->maxz[i]);
            vl_f8 m0 = vl_prune_yz8(m->miny, m->minz, m->maxy, m->maxz, j, &q);
            vl_f8 m1 = vl_prune_yz8(m->miny, m->minz, m->maxy, m->maxz, j + 8, &q);
            uint32_t hits = (vl_f8_bits(m0) & vl_prune_x8(m->minx, j, &q)) |
                            (vl_f8_bits(m1) & vl_prune_x8(m->minx, j + 8, &q)) << 8;
            if (hits) hits = prune_drop(hits, m->id + j, cls, drop);
            if (hits && prune_emit16(out, hits, m->id + j, all->id[i], VL_EMIT_LOW_HIGH) != VL_OK)
                return VL_ERR_OUT_OF_MEMORY;
        }
    }
    return VL_OK;
}

vl_status vl_prune_movers_range(const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls, int pass,
                                uint32_t first, uint32_t end, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    prune_out out = prune_out_begin(buffer);
    vl_status s = VL_OK;
    if (end > (pass == 2 ? all->n : m->n)) end = pass == 2 ? all->n : m->n;
    if (pass == 0) { /* among the movers: only static-static pairs dropped */
        for (uint32_t i = first; i < end && i + 1 < m->n && s == VL_OK; i++) {
            uint8_t drop = cls[m->id[i]] & VL_PRUNE_STATIC;
            if (m->minx[i + 1] <= m->maxx[i]) s = prune_sweep(m, i, m, i + 1, VL_EMIT_LOW_HIGH, 0, cls, drop, &out);
        }
    } else if (pass == 1 && first < end) {
        /* movers against the others (starting at or after them), dropping movers among the candidates */
        uint32_t j = first_after(all->minx, all->n, m->minx[first], 0);
        for (uint32_t i = first; i < end && s == VL_OK; i++) {
            while (j < all->n && all->minx[j] < m->minx[i]) j++;
            if (j == all->n) break;
            uint8_t drop = (uint8_t)(VL_PRUNE_MOVED | (cls[m->id[i]] & VL_PRUNE_STATIC));
            if (all->minx[j] <= m->maxx[i]) s = prune_sweep(m, i, all, j, VL_EMIT_LOW_HIGH, 0, cls, drop, &out);
        }
    } else if (pass == 2) {
        s = prune_unmoved(m, all, cls, first, end, &out);
    }
    buffer->count = s == VL_OK ? out.count : start;
    return s;
}

vl_status vl_prune_movers(const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls, vl_pair_buffer* buffer) {
    uint32_t start = buffer->count;
    vl_status s = VL_OK;
    for (int pass = 0; pass < 3 && s == VL_OK; pass++)
        s = vl_prune_movers_range(m, all, cls, pass, 0, UINT32_MAX, buffer);
    if (s != VL_OK) buffer->count = start;
    return s;
}
