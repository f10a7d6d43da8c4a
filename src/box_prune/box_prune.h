/* Box pruning (Terdiman, "Box pruning revisited"): boxes sorted by min on a sweep axis, the sorted
 * keys apart from the other axes (SoA), a branchless SIMD test of 16 candidates per step, NaN
 * sentinels past the end. Used by vl_box_prune*, by the SAP's batch insertion and by the
 * box-pruning broadphase; the sets and scratch are kept by their owners, so a warm call allocates
 * nothing. */
#ifndef VL_BOX_PRUNE_BOX_PRUNE_H
#define VL_BOX_PRUNE_BOX_PRUNE_H

#include <volley/types.h>

#include "core/pair_buffer.h"

/* Boxes sorted by min on `axis`; each array holds n real entries then 16 sentinels. */
typedef struct vl_prune_set {
    float* minx; /* min on the sweep axis, ascending */
    float* maxx;
    float *miny, *minz, *maxy, *maxz; /* the two other axes */
    uint32_t* id;                     /* the id given for each box */
    uint32_t n, capacity;
    int axis;
} vl_prune_set;

typedef struct vl_prune_scratch {
    uint64_t *keys, *tmp;
    uint32_t keys_cap, tmp_cap;
} vl_prune_scratch;

/* Fills `set` with boxes[ids[k]] (boxes[k] when ids is NULL), k < n, with ids[k] (or k) as ids,
 * sorted by min on axis. When presorted, the order given is already ascending by min on axis and
 * is kept. Inputs are clean (no NaN). */
vl_status vl_prune_set_build(vl_prune_set* set, vl_prune_scratch* scratch, const vl_aabb* boxes, const uint32_t* ids,
                             uint32_t n, int axis, int presorted);
void vl_prune_set_free(vl_prune_set* set);

/* The steps of vl_prune_set_build, for callers that run them in pieces: room in set and scratch
 * for n entries (no keys when presorted); the sort keys of entries
 * [first, end) (sortable min on axis << 32 | position); entries [first, end) of the set from the
 * sorted keys (NULL: presorted, entry k is position k); the count and the sentinels. */
vl_status vl_prune_set_prepare(vl_prune_set* set, vl_prune_scratch* scratch, uint32_t n, int presorted);
void vl_prune_keys_fill(uint64_t* keys, const vl_aabb* boxes, const uint32_t* ids, uint32_t first, uint32_t end,
                        int axis);
void vl_prune_set_fill(vl_prune_set* set, const vl_aabb* boxes, const uint32_t* ids, const uint64_t* keys,
                       uint32_t first, uint32_t end, int axis);
void vl_prune_set_finish(vl_prune_set* set, uint32_t n, int axis);

/* Writes the 16 sentinels after entry n - 1 (n itself unchanged). */
void vl_prune_set_seal(vl_prune_set* set, uint32_t n);

/* Entry k of dst = entry i of src. */
static inline void vl_prune_set_copy(vl_prune_set* dst, uint32_t k, const vl_prune_set* src, uint32_t i) {
    dst->minx[k] = src->minx[i];
    dst->maxx[k] = src->maxx[i];
    dst->miny[k] = src->miny[i];
    dst->minz[k] = src->minz[i];
    dst->maxy[k] = src->maxy[i];
    dst->maxz[k] = src->maxz[i];
    dst->id[k] = src->id[i];
}

/* The n entries of set from `start` on, as a set that shares its storage (capacity 0: never freed);
 * entries start + n .. + 15 must be sentinels. */
vl_prune_set vl_prune_set_view(const vl_prune_set* set, uint32_t start, uint32_t n);

/* Room for n boxes (and the sentinels); the contents are lost when it grows. */
vl_status vl_prune_set_reserve(vl_prune_set* set, uint32_t n);
void vl_prune_scratch_free(vl_prune_scratch* scratch);

/* Flags of vl_prune_complete and vl_prune_bipartite: pairs as (lower id, higher id) (complete: always);
 * hits expected in most 16-candidate blocks (banded sets): emission without a branch on them. */
enum { VL_PRUNE_LOW_HIGH = 1u, VL_PRUNE_DENSE = 2u };

/* Appends every overlapping pair of the set as (lower id, higher id). On failure out->count is
 * restored. */
vl_status vl_prune_complete(const vl_prune_set* set, unsigned flags, vl_pair_buffer* out);

/* Appends every overlapping (a box, b box) pair as (id in a, id in b), or (lower id, higher id) with
 * VL_PRUNE_LOW_HIGH; both sets share one axis. On failure out->count is restored. */
vl_status vl_prune_bipartite(const vl_prune_set* a, const vl_prune_set* b, unsigned flags, vl_pair_buffer* out);

/* vl_prune_complete over the sweeps of entries [first, end) only (each against its successors in
 * the whole set): the ranges of a cut of [0, n) together give vl_prune_complete's pairs in its
 * order. On failure out->count is restored. */
vl_status vl_prune_complete_range(const vl_prune_set* set, uint32_t first, uint32_t end, vl_pair_buffer* out);

/* One pass of vl_prune_bipartite (no flags) over the entries [first, end) of its query set: pass 0,
 * a's entries against b's starting at or after them; pass 1, b's against a's starting strictly
 * after them. Pairs as (id in a, id in b); the two passes over cuts of [0, a->n) and [0, b->n), in
 * order, give vl_prune_bipartite's pairs in its order. On failure out->count is restored. */
vl_status vl_prune_bipartite_range(const vl_prune_set* a, const vl_prune_set* b, int pass, uint32_t first,
                                   uint32_t end, vl_pair_buffer* out);

/* Per-id class bits for vl_prune_movers (which ignores any other bit). */
enum { VL_PRUNE_MOVED = 1u, VL_PRUNE_STATIC = 2u };

/* Appends, as (low, high), every overlapping pair with an end in `m` (the movers, every id with
 * VL_PRUNE_MOVED in cls) and the other in `m` or among the entries of `all` without
 * VL_PRUNE_MOVED; never two ids with VL_PRUNE_STATIC. Both sets share one axis. On
 * failure out->count is restored. */
vl_status vl_prune_movers(const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls, vl_pair_buffer* out);

/* One pass of vl_prune_movers over entries [first, end): pass 0, the movers' entries among
 * themselves; 1, the movers' entries against the unmoved ones; 2, the entries of `all` against the
 * movers. The three passes over cuts of [0, m->n), [0, m->n) and [0, all->n) give vl_prune_movers'
 * pairs (its order when the cuts are taken in order). On failure out->count is restored. */
vl_status vl_prune_movers_range(const vl_prune_set* m, const vl_prune_set* all, const uint8_t* cls, int pass,
                                uint32_t first, uint32_t end, vl_pair_buffer* out);

/* dst = the entries of `old` whose id has none of the bits `drop` in cls, merged with those of `add`,
 * sorted by min on the shared axis. dst is neither old nor add. */
vl_status vl_prune_set_merge(vl_prune_set* dst, const vl_prune_set* old, const vl_prune_set* add, const uint8_t* cls,
                             uint8_t drop);

#endif
