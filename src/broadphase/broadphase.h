/* Internal broadphase layer: the objects (handles, boxes, flags) shared by every kind, and the
 * table of operations a kind implements. broadphase.c validates every batch and manages handles;
 * a kind only sees clean input.
 * Adding a kind: a value of vl_broadphase_kind (include/volley/broadphase.h) with when to pick
 * it; a folder broadphase/<kind>/ whose ops table (designated initializers, the optional ops left
 * out) reads bp->desc.context in its commit where it can spread work, with the same answers for
 * any worker count; one case in the kind switch (broadphase.c); and the kind in the brute-force
 * sequences, handles, offsets and context tests (tests/test_broadphase*.c, test_broadphase_handles.c), in the
 * broadphase fuzzer and in the bench's frame rows. */
#ifndef VL_BROADPHASE_BROADPHASE_H
#define VL_BROADPHASE_BROADPHASE_H

#include <volley/broadphase.h>

#include "core/pair_buffer.h"

enum {
    VL_OBJ_ALIVE = 1u,
    VL_OBJ_STATIC = 2u,
    VL_OBJ_MARK = 4u /* scratch mark: duplicates in a batch, objects being removed */
};

/* Objects live in slots; the kinds see slots only. A handle is slot << VL_HANDLE_GENERATION_BITS
 * | the slot's generation (broadphase.c translates on the way in and out). A slot's generation
 * steps (mod 256) when the slot is given to a new object, so a handle of an earlier owner no
 * longer matches. Freed slots wait in `pending` until the next commit, so that a slot is never
 * reused while a pair of its previous owner may still be reported (with the previous handle). */
typedef struct vl_bp_objects {
    vl_aabb* boxes;
    uint8_t* flags;
    uint8_t* gen;         /* generation of each slot */
    uint32_t* free_slots; /* reusable now */
    uint32_t* pending;    /* freed since the last commit */
    uint32_t* slots;      /* the slots of the handles of the batch being applied */
    uint32_t boxes_cap, flags_cap, gen_cap, free_cap, pending_cap, slots_cap;
    uint32_t slot_count; /* slots ever used: slots are < slot_count */
    uint32_t free_count, pending_count, alive;
} vl_bp_objects;

typedef struct vl_broadphase_ops {
    vl_status (*create)(vl_broadphase* bp);
    void (*destroy)(vl_broadphase* bp);
    /* Every `handles` below are slots. */
    /* new objects handles[count], already alive with their boxes in bp->objects */
    vl_status (*add)(vl_broadphase* bp, const uint32_t* handles, uint32_t count);
    /* writes the new boxes into bp->objects itself (so that it can roll back) */
    vl_status (*update)(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count);
    /* objects handles[count] are still alive and carry VL_OBJ_MARK; cannot fail */
    void (*remove)(vl_broadphase* bp, const uint32_t* handles, uint32_t count);
    /* spreads its work over bp->desc.context's workers where the kind can (the same answers in the
     * same order for any worker count), or runs on the calling thread */
    vl_status (*commit)(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted);
    const vl_pair* (*pairs)(const vl_broadphase* bp, uint32_t* count);
    void** (*pair_user)(const vl_broadphase* bp, uint32_t a, uint32_t b); /* NULL: not supported */
    vl_status (*validate)(const vl_broadphase* bp);
    /* objects handles[count], alive and each changing to is_static, change all or nothing;
     * NULL: they leave through remove and come back through add with the other flag */
    vl_status (*set_static)(vl_broadphase* bp, const uint32_t* handles, uint32_t count, bool is_static);
    /* where pairs lists a working set that add, update and remove change before the commit (the
     * SAP's pair manager): writes the last commit's pairs into out (room for pairs' count) and
     * returns their number; NULL where pairs changes only at a commit */
    uint32_t (*committed_pairs)(const vl_broadphase* bp, vl_pair* out);
} vl_broadphase_ops;

struct vl_broadphase {
    const vl_broadphase_ops* ops;
    vl_broadphase_desc desc;
    vl_bp_objects objects;
    void* impl; /* the kind's state */
    /* the last commit's pairs as handles, made by vl_broadphase_get_pairs when stale (after any change) */
    vl_pair* handle_pairs;
    uint32_t handle_pairs_cap, handle_pairs_count;
    int handle_pairs_fresh;
};

extern const vl_broadphase_ops vl_sap_ops;
extern const vl_broadphase_ops vl_prune_bp_ops;
extern const vl_broadphase_ops vl_static_sap_ops;
extern const vl_broadphase_ops vl_msap_ops;
extern const vl_broadphase_ops vl_grid_ops;
extern const vl_broadphase_ops vl_tbp_ops;

/* True when the pair (a, b) may be reported: not both static. */
static inline int vl_bp_may_pair(const vl_bp_objects* o, uint32_t a, uint32_t b) {
    return !(o->flags[a] & o->flags[b] & VL_OBJ_STATIC);
}

static inline int vl_aabb_overlap(const vl_aabb* a, const vl_aabb* b) {
    return a->min[0] <= b->max[0] && b->min[0] <= a->max[0] && a->min[1] <= b->max[1] && b->min[1] <= a->max[1] &&
           a->min[2] <= b->max[2] && b->min[2] <= a->max[2];
}

/* True when box `in` lies within `out` (closed). */
static inline int vl_aabb_inside(const vl_aabb* in, const vl_aabb* out) {
    return in->min[0] >= out->min[0] && in->min[1] >= out->min[1] && in->min[2] >= out->min[2] &&
           in->max[0] <= out->max[0] && in->max[1] <= out->max[1] && in->max[2] <= out->max[2];
}

#endif
