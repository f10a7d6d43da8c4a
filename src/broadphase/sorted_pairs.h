/* Pair sets kept sorted by (a, b), as the kinds that find every pair of a commit afresh keep
 * them: the sort of a commit's pairs and the walk that diffs two sorted sets. */
#ifndef VL_BROADPHASE_SORTED_PAIRS_H
#define VL_BROADPHASE_SORTED_PAIRS_H

#include "core/pair_buffer.h"

typedef struct vl_bp_pair_sort {
    uint64_t *keys, *tmp;
    uint32_t keys_cap, tmp_cap;
} vl_bp_pair_sort;

/* Sorts the pairs of buf by (a, b); each pair is (low, high), both ids below `slots`. */
vl_status vl_bp_pair_sort_run(vl_bp_pair_sort* sort, vl_pair_buffer* buf, uint32_t slots);
void vl_bp_pair_sort_free(vl_bp_pair_sort* sort);

/* True when every pair is (low, high) and the pairs strictly ascend by (a, b): sorted, unique. */
int vl_bp_pairs_sorted(const vl_pair_buffer* pairs);

/* Appends the pairs of `now` missing from `old` to created and those of `old` missing from `now`
 * to deleted (either may be NULL), both sets sorted by (a, b). On failure (out of memory) the
 * lists are as they were. */
vl_status vl_bp_pairs_diff(const vl_pair_buffer* old, const vl_pair_buffer* now, vl_pair_buffer* created,
                           vl_pair_buffer* deleted);

/* next = the pairs of `old` with neither end marked `moved` in cls, merged with `found` (every
 * pair with a moved end, as the commit found them); both sorted by (a, b), so next is too. The
 * pairs of `old` with a moved end missing from `found` are appended to deleted, those of `found`
 * missing from `old` to created (either may be NULL). On failure (out of memory) next, created and
 * deleted hold what they held. */
vl_status vl_bp_pairs_merge_moved(const vl_pair_buffer* old, const vl_pair_buffer* found, const uint8_t* cls,
                                  uint8_t moved, vl_pair_buffer* next, vl_pair_buffer* created,
                                  vl_pair_buffer* deleted);

#endif
