/* The public broadphase API: argument checks, handles, then one call into the kind's ops. */
#include "broadphase/broadphase.h"
#include "core/valid.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"

/* Slots below 2^24: a handle keeps 8 bits for the generation. */
#define VL_BP_MAX_OBJECTS VL_BROADPHASE_MAX_OBJECTS
#define VL_GEN_MASK ((1u << VL_HANDLE_GENERATION_BITS) - 1u)

static inline uint32_t handle_of(const vl_bp_objects* o, uint32_t slot) {
    return slot << VL_HANDLE_GENERATION_BITS | o->gen[slot];
}

/* The slot of a handle given to a live object that has not been removed since; UINT32_MAX else. */
static inline uint32_t live_slot(const vl_bp_objects* o, uint32_t handle) {
    uint32_t slot = VL_HANDLE_INDEX(handle);
    if (slot >= o->slot_count || !(o->flags[slot] & VL_OBJ_ALIVE) || o->gen[slot] != (handle & VL_GEN_MASK))
        return UINT32_MAX;
    return slot;
}

/* Pairs of slots pairs[start, count) as pairs of handles; slot order is handle order, so each
 * stays (lower, higher). */
static void pairs_to_handles(const vl_bp_objects* o, vl_pair* pairs, uint32_t start, uint32_t count) {
    for (uint32_t i = start; i < count; i++)
        pairs[i] = (vl_pair){handle_of(o, pairs[i].a), handle_of(o, pairs[i].b)};
}

#ifndef NDEBUG
#define VL_BP_DEBUG_VALIDATE(bp) assert(vl_broadphase_validate(bp) == VL_OK)
#else
#define VL_BP_DEBUG_VALIDATE(bp) ((void)0)
#endif

static const vl_broadphase_ops* ops_of_kind(vl_broadphase_kind kind) {
    switch (kind) {
    case VL_BROADPHASE_SAP: return &vl_sap_ops;
    case VL_BROADPHASE_BOX_PRUNING: return &vl_prune_bp_ops;
    case VL_BROADPHASE_STATIC_SAP: return &vl_static_sap_ops;
    case VL_BROADPHASE_MULTI_SAP: return &vl_msap_ops;
    case VL_BROADPHASE_GRID: return &vl_grid_ops;
    case VL_BROADPHASE_TREE: return &vl_tbp_ops;
    }
    return NULL;
}

vl_broadphase_desc vl_broadphase_default_desc(void) {
    vl_broadphase_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.kind = VL_BROADPHASE_SAP;
    return desc;
}

/* Room for n slots, and for batches of n handles (so that update and remove never allocate). */
static vl_status objects_reserve(vl_bp_objects* o, uint64_t n) {
    vl_status s = VL_ARRAY_RESERVE(o->boxes, o->boxes_cap, o->slot_count, n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(o->flags, o->flags_cap, o->slot_count, n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(o->gen, o->gen_cap, o->slot_count, n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(o->slots, o->slots_cap, 0, n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(o->free_slots, o->free_cap, o->free_count, n);
    if (s == VL_OK) s = VL_ARRAY_RESERVE(o->pending, o->pending_cap, o->pending_count, n);
    return s;
}

static void objects_free(vl_bp_objects* o) {
    VL_ARRAY_FREE(o->boxes, o->boxes_cap);
    VL_ARRAY_FREE(o->flags, o->flags_cap);
    VL_ARRAY_FREE(o->gen, o->gen_cap);
    VL_ARRAY_FREE(o->slots, o->slots_cap);
    VL_ARRAY_FREE(o->free_slots, o->free_cap);
    VL_ARRAY_FREE(o->pending, o->pending_cap);
}

/* The copy of the last commit's pairs as handles (the kind's pairs, or for a kind with a working
 * set, its committed_pairs); 0 when its storage cannot grow. */
static int copy_pairs(vl_broadphase* bp) {
    uint32_t n = 0;
    const vl_pair* pairs = bp->ops->pairs(bp, &n);
    if (VL_ARRAY_RESERVE(bp->handle_pairs, bp->handle_pairs_cap, 0, n) != VL_OK) return 0;
    if (bp->ops->committed_pairs)
        n = bp->ops->committed_pairs(bp, bp->handle_pairs);
    else if (n)
        memcpy(bp->handle_pairs, pairs, (size_t)n * sizeof *pairs);
    pairs_to_handles(&bp->objects, bp->handle_pairs, 0, n);
    bp->handle_pairs_count = n;
    bp->handle_pairs_fresh = 1;
    return 1;
}

vl_status vl_broadphase_create(const vl_broadphase_desc* desc, vl_broadphase** out) {
    if (!out) return VL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    vl_broadphase_desc d = desc ? *desc : vl_broadphase_default_desc();
    const vl_broadphase_ops* ops = ops_of_kind(d.kind);
    if (!ops || (d.flags & ~VL_BROADPHASE_PAIR_USER_DATA)) return VL_ERR_INVALID_FLAGS;
    if ((d.flags & VL_BROADPHASE_PAIR_USER_DATA) && d.kind != VL_BROADPHASE_SAP) return VL_ERR_INVALID_FLAGS;
    if (d.expected_objects > VL_BP_MAX_OBJECTS) return VL_ERR_TOO_LARGE;
    vl_broadphase* bp = vl_mem_calloc(sizeof *bp);
    if (!bp) return VL_ERR_OUT_OF_MEMORY;
    bp->ops = ops;
    bp->desc = d;
    vl_status s = d.expected_objects ? objects_reserve(&bp->objects, d.expected_objects) : VL_OK;
    if (s == VL_OK) s = ops->create(bp);
    if (s != VL_OK) {
        objects_free(&bp->objects);
        vl_mem_free(bp, sizeof *bp);
        return s;
    }
    *out = bp;
    return VL_OK;
}

void vl_broadphase_destroy(vl_broadphase* bp) {
    if (!bp) return;
    bp->ops->destroy(bp);
    objects_free(&bp->objects);
    VL_ARRAY_FREE(bp->handle_pairs, bp->handle_pairs_cap);
    vl_mem_free(bp, sizeof *bp);
}

static vl_status check_boxes(const vl_aabb* boxes, uint32_t count) {
    return vl_boxes_valid(boxes, 0, count) ? VL_OK : VL_ERR_INVALID_BOUNDS;
}

static void unmark(vl_bp_objects* o, const uint32_t* slots, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) o->flags[slots[i]] &= (uint8_t)~VL_OBJ_MARK;
}

/* Every handle live and once only: their slots in o->slots, the objects marked with VL_OBJ_MARK.
 * A batch longer than the live objects cannot be valid: refused before a handle is read. */
static vl_status mark_handles(vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    if (count > o->alive) return VL_ERR_TOO_LARGE;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t slot = live_slot(o, handles[i]);
        vl_status s = VL_OK;
        if (slot == UINT32_MAX)
            s = VL_ERR_INVALID_HANDLE;
        else if (o->flags[slot] & VL_OBJ_MARK)
            s = VL_ERR_DUPLICATE_HANDLE;
        if (s != VL_OK) {
            unmark(o, o->slots, i);
            return s;
        }
        o->flags[slot] |= VL_OBJ_MARK;
        o->slots[i] = slot;
    }
    return VL_OK;
}

vl_status vl_broadphase_add(vl_broadphase* bp, uint32_t* out_handles, const vl_aabb* boxes, uint32_t count,
                            uint32_t flags) {
    if (!bp || (count && (!boxes || !out_handles))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_STATIC) return VL_ERR_INVALID_FLAGS;
    if (!count) return VL_OK;
    vl_bp_objects* o = &bp->objects;
    /* sizes before any box is read */
    if ((uint64_t)o->alive + o->pending_count + count > VL_BP_MAX_OBJECTS) return VL_ERR_TOO_LARGE;
    vl_status s = check_boxes(boxes, count);
    if (s != VL_OK) return s;
    s = objects_reserve(o, (uint64_t)o->slot_count + count);
    if (s != VL_OK) return s;
    uint32_t old_slots = o->slot_count, old_free = o->free_count;
    uint32_t reused = count < old_free ? count : old_free; /* the first `reused` slots come from free_slots */
    uint8_t f = (uint8_t)(VL_OBJ_ALIVE | ((flags & VL_STATIC) ? VL_OBJ_STATIC : 0));
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h;
        if (o->free_count) {
            h = o->free_slots[--o->free_count];
            o->gen[h] = (uint8_t)(o->gen[h] + 1u); /* a new owner: the old handles stop matching */
        } else {
            h = o->slot_count++;
            o->gen[h] = 0;
        }
        o->boxes[h] = boxes[i];
        o->flags[h] = f;
        out_handles[i] = h; /* the slots, for the kind; handles below */
    }
    o->alive += count;
    bp->handle_pairs_fresh = 0;
    s = bp->ops->add(bp, out_handles, count);
    if (s != VL_OK) {
        /* the popped slots are still in free_slots past free_count */
        for (uint32_t i = 0; i < count; i++) o->flags[out_handles[i]] = 0;
        for (uint32_t i = 0; i < reused; i++) o->gen[out_handles[i]] = (uint8_t)(o->gen[out_handles[i]] - 1u);
        o->slot_count = old_slots;
        o->free_count = old_free;
        o->alive -= count;
        return s;
    }
    for (uint32_t i = 0; i < count; i++) out_handles[i] = handle_of(o, out_handles[i]);
    VL_BP_DEBUG_VALIDATE(bp);
    return VL_OK;
}

vl_status vl_broadphase_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    if (!bp || (count && (!handles || !boxes))) return VL_ERR_INVALID_ARGUMENT;
    if (!count) return VL_OK;
    vl_bp_objects* o = &bp->objects;
    vl_status s = mark_handles(o, handles, count);
    if (s != VL_OK) return s;
    unmark(o, o->slots, count);
    s = check_boxes(boxes, count);
    if (s != VL_OK) return s;
    bp->handle_pairs_fresh = 0;
    s = bp->ops->update(bp, o->slots, boxes, count);
    if (s == VL_OK) VL_BP_DEBUG_VALIDATE(bp);
    return s;
}

vl_status vl_broadphase_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    if (!bp || (count && !handles)) return VL_ERR_INVALID_ARGUMENT;
    if (!count) return VL_OK;
    vl_bp_objects* o = &bp->objects;
    vl_status s = mark_handles(o, handles, count);
    if (s != VL_OK) return s;
    bp->handle_pairs_fresh = 0;
    bp->ops->remove(bp, o->slots, count);
    for (uint32_t i = 0; i < count; i++) {
        o->flags[o->slots[i]] = 0;
        o->pending[o->pending_count++] = o->slots[i];
    }
    o->alive -= count;
    VL_BP_DEBUG_VALIDATE(bp);
    return VL_OK;
}

/* A kind with a set_static op (the SAP, the static SAP) flips all or nothing. Every other kind: the
 * objects that change leave the kind and come back under the same handles with the other flag; a
 * kind keeps the pairs it finds again (a pair flagged removed and added back is neither deleted nor
 * created). When the way back in fails, they come back with their old flag. */
vl_status vl_broadphase_set_static(vl_broadphase* bp, const uint32_t* handles, uint32_t count, bool is_static) {
    if (!bp || (count && !handles)) return VL_ERR_INVALID_ARGUMENT;
    if (!count) return VL_OK;
    vl_bp_objects* o = &bp->objects;
    vl_status s = mark_handles(o, handles, count);
    if (s != VL_OK) return s;
    unmark(o, o->slots, count);
    const uint8_t want = is_static ? VL_OBJ_STATIC : 0;
    uint32_t* flip = o->slots; /* the slots that change state, compacted in place */
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++)
        if ((o->flags[o->slots[i]] & VL_OBJ_STATIC) != want) flip[n++] = o->slots[i];
    if (!n) return VL_OK;
    bp->handle_pairs_fresh = 0;
    if (bp->ops->set_static) {
        s = bp->ops->set_static(bp, flip, n, is_static);
        VL_BP_DEBUG_VALIDATE(bp);
        return s;
    }
    for (uint32_t k = 0; k < n; k++) o->flags[flip[k]] |= VL_OBJ_MARK;
    bp->ops->remove(bp, flip, n);
    for (uint32_t k = 0; k < n; k++) o->flags[flip[k]] = (uint8_t)(VL_OBJ_ALIVE | want);
    s = bp->ops->add(bp, flip, n);
    if (s != VL_OK) {
        for (uint32_t k = 0; k < n; k++) o->flags[flip[k]] = (uint8_t)(VL_OBJ_ALIVE | (want ^ VL_OBJ_STATIC));
        if (bp->ops->add(bp, flip, n) != VL_OK) /* out of memory again: they stay removed */
            for (uint32_t k = 0; k < n; k++) {
                o->flags[flip[k]] = 0;
                o->pending[o->pending_count++] = flip[k];
                o->alive--;
            }
    }
    VL_BP_DEBUG_VALIDATE(bp);
    return s;
}

vl_status vl_broadphase_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    if (!bp || (created && !vl_pair_buffer_is_valid(created)) || (deleted && !vl_pair_buffer_is_valid(deleted)) ||
        (created && created == deleted))
        return VL_ERR_INVALID_ARGUMENT;
    /* the buffers always get storage, so that callers may pass .pairs to qsort or memcpy */
    vl_status s = created && !created->capacity ? vl_pair_buffer_reserve(created, 1) : VL_OK;
    if (s == VL_OK && deleted && !deleted->capacity) s = vl_pair_buffer_reserve(deleted, 1);
    uint32_t created_start = created ? created->count : 0, deleted_start = deleted ? deleted->count : 0;
    if (s == VL_OK)
        s = bp->ops->commit(bp, created, deleted);
    if (s != VL_OK) return s;
    bp->handle_pairs_fresh = 0;
    vl_bp_objects* o = &bp->objects;
    /* before the pending slots are freed: a deleted pair of a removed object names its last handle */
    if (created) pairs_to_handles(o, created->pairs, created_start, created->count);
    if (deleted) pairs_to_handles(o, deleted->pairs, deleted_start, deleted->count);
    /* room for vl_broadphase_get_pairs' copy, so that it need not allocate; on failure it tries again */
    uint32_t n = 0;
    bp->ops->pairs(bp, &n);
    (void)VL_ARRAY_RESERVE(bp->handle_pairs, bp->handle_pairs_cap, 0, n);
    /* handles freed in this period may be given again from now on */
    for (uint32_t i = 0; i < o->pending_count; i++) o->free_slots[o->free_count++] = o->pending[i];
    o->pending_count = 0;
    VL_BP_DEBUG_VALIDATE(bp);
    return VL_OK;
}


const vl_pair* vl_broadphase_get_pairs(const vl_broadphase* bp, uint32_t* count) {
    if (count) *count = 0;
    if (!bp) return NULL;
    static const vl_pair none = {0, 0};
    /* the handle copy is a cache: bp is the caller's non-const object, one thread at a time */
    vl_broadphase* cache = (vl_broadphase*)(uintptr_t)bp;
    if (!bp->handle_pairs_fresh && !copy_pairs(cache)) return NULL;
    if (count) *count = bp->handle_pairs_count;
    /* never NULL for a broadphase, so that memcpy(dst, pairs, 0) is fine */
    return bp->handle_pairs_count ? bp->handle_pairs : &none;
}

uint32_t vl_broadphase_get_count(const vl_broadphase* bp) { return bp ? bp->objects.alive : 0; }

vl_status vl_broadphase_get_box(const vl_broadphase* bp, uint32_t handle, vl_aabb* box) {
    if (!bp || !box) return VL_ERR_INVALID_ARGUMENT;
    uint32_t slot = live_slot(&bp->objects, handle);
    if (slot == UINT32_MAX) return VL_ERR_INVALID_HANDLE;
    *box = bp->objects.boxes[slot];
    return VL_OK;
}

/* The kind's user data slot of the pair of handles (a, b) (either order), or NULL: no such pair,
 * or a handle that is not the current one of its slot (an object removed since the last commit
 * still names its pairs of that commit). */
static void** pair_user_slot(const vl_broadphase* bp, uint32_t a, uint32_t b) {
    const vl_bp_objects* o = &bp->objects;
    uint32_t sa = VL_HANDLE_INDEX(a), sb = VL_HANDLE_INDEX(b);
    if (sa >= o->slot_count || sb >= o->slot_count || o->gen[sa] != (a & VL_GEN_MASK) ||
        o->gen[sb] != (b & VL_GEN_MASK))
        return NULL;
    return bp->ops->pair_user(bp, sa, sb);
}

vl_status vl_broadphase_set_pair_user_data(vl_broadphase* bp, uint32_t a, uint32_t b, void* data) {
    if (!bp) return VL_ERR_INVALID_ARGUMENT;
    if (!(bp->desc.flags & VL_BROADPHASE_PAIR_USER_DATA) || !bp->ops->pair_user) return VL_ERR_INVALID_FLAGS;
    void** slot = pair_user_slot(bp, a, b);
    if (!slot) return VL_ERR_INVALID_ARGUMENT;
    *slot = data;
    return VL_OK;
}

void* vl_broadphase_get_pair_user_data(const vl_broadphase* bp, uint32_t a, uint32_t b) {
    if (!bp || !(bp->desc.flags & VL_BROADPHASE_PAIR_USER_DATA) || !bp->ops->pair_user) return NULL;
    void** slot = pair_user_slot(bp, a, b);
    return slot ? *slot : NULL;
}

vl_status vl_broadphase_validate(const vl_broadphase* bp) {
    if (!bp) return VL_ERR_INVALID_ARGUMENT;
    const vl_bp_objects* o = &bp->objects;
    uint32_t alive = 0;
    for (uint32_t h = 0; h < o->slot_count; h++) {
        uint8_t f = o->flags[h];
        if (f & ~(VL_OBJ_ALIVE | VL_OBJ_STATIC)) return VL_ERR_INVALID_ARGUMENT;
        if (!(f & VL_OBJ_ALIVE)) {
            if (f) return VL_ERR_INVALID_ARGUMENT;
            continue;
        }
        alive++;
        if (check_boxes(&o->boxes[h], 1) != VL_OK) return VL_ERR_INVALID_ARGUMENT;
    }
    if (alive != o->alive || (uint64_t)alive + o->free_count + o->pending_count != o->slot_count)
        return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < o->free_count; i++)
        if (o->free_slots[i] >= o->slot_count || o->flags[o->free_slots[i]]) return VL_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < o->pending_count; i++)
        if (o->pending[i] >= o->slot_count || o->flags[o->pending[i]]) return VL_ERR_INVALID_ARGUMENT;
    return bp->ops->validate(bp);
}
