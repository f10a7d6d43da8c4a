/* Sorting a commit's pairs and diffing two sorted pair sets. */
#include "broadphase/sorted_pairs.h"

#include "compiler.h"
#include "core/alloc.h"
#include "core/radix.h"

vl_status vl_bp_pair_sort_run(vl_bp_pair_sort* sort, vl_pair_buffer* buf, uint32_t slots) {
    uint32_t n = buf->count;
    vl_status s = VL_ARRAY_RESERVE(sort->keys, sort->keys_cap, 0, n ? n : 1);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(sort->tmp, sort->tmp_cap, 0, n ? n : 1);
    if (s != VL_OK) return s;
    /* key a << w | b in the top 2w bits, w = the bits of the highest slot: fewer digits to sort */
    unsigned w = slots > 1 ? 32u - vl_clz32(slots - 1) : 1u, lo = 64u - 2 * w;
    uint64_t low = (1ull << w) - 1;
    vl_pair* pairs = buf->pairs;
    uint64_t* keys = sort->keys;
    for (uint32_t i = 0; i < n; i++) keys[i] = ((uint64_t)pairs[i].a << w | pairs[i].b) << lo;
    vl_radix_sort_u64(keys, sort->tmp, n, lo);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t k = keys[i] >> lo;
        pairs[i] = (vl_pair){(uint32_t)(k >> w), (uint32_t)(k & low)};
    }
    return VL_OK;
}

void vl_bp_pair_sort_free(vl_bp_pair_sort* sort) {
    VL_ARRAY_FREE(sort->keys, sort->keys_cap);
    VL_ARRAY_FREE(sort->tmp, sort->tmp_cap);
}

static inline uint64_t pair_key(vl_pair p) { return (uint64_t)p.a << 32 | p.b; }

int vl_bp_pairs_sorted(const vl_pair_buffer* pairs) {
    const vl_pair* p = pairs->pairs;
    for (uint32_t i = 0; i < pairs->count; i++)
        if (p[i].a >= p[i].b || (i && pair_key(p[i - 1]) >= pair_key(p[i]))) return 0;
    return 1;
}

vl_status vl_bp_pairs_diff(const vl_pair_buffer* old, const vl_pair_buffer* now, vl_pair_buffer* created,
                           vl_pair_buffer* deleted) {
    uint32_t no = old->count, nn = now->count;
    uint64_t most_created = (created ? created->count : 0) + (uint64_t)nn;
    uint64_t most_deleted = (deleted ? deleted->count : 0) + (uint64_t)no;
    if (most_created > UINT32_MAX || most_deleted > UINT32_MAX) return VL_ERR_OUT_OF_MEMORY; /* no buffer holds them */
    vl_status s = created ? vl_pair_buffer_reserve(created, (uint32_t)most_created) : VL_OK;
    if (s == VL_OK && deleted) s = vl_pair_buffer_reserve(deleted, (uint32_t)most_deleted);
    if (s != VL_OK) return s;
    /* both sets sorted: one merge walk gives the differences */
    const vl_pair *a = old->pairs, *b = now->pairs;
    uint32_t i = 0, j = 0;
    while (i < no || j < nn) {
        uint64_t ka = i < no ? pair_key(a[i]) : UINT64_MAX, kb = j < nn ? pair_key(b[j]) : UINT64_MAX;
        if (ka == kb) {
            i++, j++;
        } else if (ka < kb) {
            if (deleted) deleted->pairs[deleted->count++] = a[i];
            i++;
        } else {
            if (created) created->pairs[created->count++] = b[j];
            j++;
        }
    }
    return VL_OK;
}

vl_status vl_bp_pairs_merge_moved(const vl_pair_buffer* old, const vl_pair_buffer* found, const uint8_t* cls,
                                  uint8_t moved, vl_pair_buffer* next, vl_pair_buffer* created,
                                  vl_pair_buffer* deleted) {
    uint32_t no = old->count, nn = found->count;
    uint64_t most = (uint64_t)no + nn + (created ? created->count : 0) + (deleted ? deleted->count : 0);
    if (most > UINT32_MAX) return VL_ERR_OUT_OF_MEMORY; /* no buffer holds them */
    vl_status s = vl_pair_buffer_reserve(next, no + nn);
    if (s == VL_OK && created) s = vl_pair_buffer_reserve(created, created->count + nn);
    if (s == VL_OK && deleted) s = vl_pair_buffer_reserve(deleted, deleted->count + no);
    if (s != VL_OK) return s;
    const vl_pair *a = old->pairs, *b = found->pairs;
    vl_pair* out = next->pairs;
    uint32_t i = 0, j = 0, k = 0;
    while (i < no || j < nn) {
        uint64_t ka = i < no ? pair_key(a[i]) : UINT64_MAX, kb = j < nn ? pair_key(b[j]) : UINT64_MAX;
        if (ka < kb) {
            vl_pair q = a[i++];
            if (!((cls[q.a] | cls[q.b]) & moved))
                out[k++] = q;
            else if (deleted)
                deleted->pairs[deleted->count++] = q;
        } else {
            if (ka == kb)
                i++;
            else if (created)
                created->pairs[created->count++] = b[j];
            out[k++] = b[j++];
        }
    }
    next->count = k;
    return VL_OK;
}
