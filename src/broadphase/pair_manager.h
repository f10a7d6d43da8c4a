/* The pair manager (Terdiman, "Sweep-and-prune", 2007, section 6): the set of overlapping pairs of
 * handles, in one contiguous array with no holes, hashed for O(1) add, find and remove.
 *
 * Changes are deferred to commit: a removal only flags the pair, and every pair touched since the
 * last commit is listed once, so that commit reports created and deleted pairs by walking that list,
 * never the whole set. A pair added and removed in one period is never reported; a pair removed
 * and added again is not reported either. The touched list never holds more pairs than the set, so
 * it grows with it and a flagging never allocates. */
#ifndef VL_BROADPHASE_PAIR_MANAGER_H
#define VL_BROADPHASE_PAIR_MANAGER_H

#include "core/pair_buffer.h"

#define VL_PM_NONE 0xFFFFFFFFu

enum {
    VL_PM_NEW = 1u,     /* created since the last commit */
    VL_PM_REMOVED = 2u, /* to be deleted at the next commit */
    VL_PM_TOUCHED = 4u  /* listed in touched */
};

typedef struct vl_pair_manager {
    vl_pair* pairs;  /* [count], a < b */
    uint32_t* next;  /* hash chain: index of the next pair in the bucket, or VL_PM_NONE */
    uint8_t* flags;  /* VL_PM_* */
    void** user;     /* one user pointer per pair when with_user, else NULL */
    uint32_t count, capacity;
    uint32_t* table; /* bucket heads, table_mask + 1 of them */
    uint32_t table_mask;
    vl_pair* touched; /* pairs touched since the last commit, capacity entries */
    uint32_t touched_count;
    int with_user;
} vl_pair_manager;

/* Zeroes pm. with_user keeps one void* per pair (NULL when created). */
void vl_pm_init(vl_pair_manager* pm, int with_user);
void vl_pm_free(vl_pair_manager* pm);

/* Makes room for `extra` more pairs, so that as many adds cannot fail. */
vl_status vl_pm_reserve(vl_pair_manager* pm, uint64_t extra);

/* Index of pair (a, b) (any order), or VL_PM_NONE. */
uint32_t vl_pm_find(const vl_pair_manager* pm, uint32_t a, uint32_t b);

/* Adds (a, b), a != b, any order: a new pair is flagged NEW; a pair flagged REMOVED is kept.
 * Fails only on growth (VL_ERR_OUT_OF_MEMORY), when it changes nothing. */
vl_status vl_pm_add(vl_pair_manager* pm, uint32_t a, uint32_t b);

/* Flags (a, b) REMOVED; nothing when absent. Never allocates. */
void vl_pm_remove(vl_pair_manager* pm, uint32_t a, uint32_t b);

/* Flags REMOVED pair i, an index given by vl_pm_find since the last commit. Never allocates. */
void vl_pm_remove_at(vl_pair_manager* pm, uint32_t i);

/* Flags REMOVED every pair with an end whose byte in owner_flags has a bit of `mask`. O(pairs). */
void vl_pm_remove_owners(vl_pair_manager* pm, const uint8_t* owner_flags, uint8_t mask);

/* Applies the period's changes: appends created and deleted pairs (either may be NULL), deletes
 * the REMOVED pairs, clears the flags. On VL_ERR_OUT_OF_MEMORY (output growth) nothing changed. */
vl_status vl_pm_commit(vl_pair_manager* pm, vl_pair_buffer* created, vl_pair_buffer* deleted);

/* The user pointer slot of pair (a, b), or NULL when absent or without user data. */
void** vl_pm_user(const vl_pair_manager* pm, uint32_t a, uint32_t b);

/* The pairs of the last commit into out (room for pm->count): the stored ones but those created
 * since (a pair flagged REMOVED since was committed, and is stored until the next commit). */
uint32_t vl_pm_committed(const vl_pair_manager* pm, vl_pair* out);
/* Pairs not flagged REMOVED. */
uint32_t vl_pm_live_count(const vl_pair_manager* pm);

/* Checks the hash chains, the flags and the touched list; VL_OK or VL_ERR_INVALID_ARGUMENT. */
vl_status vl_pm_validate(const vl_pair_manager* pm);

#endif
