/* The public broadphase API: argument checks, handles, then one call into the kind's ops. */
#include "sap/broadphase.h"

#include <assert.h>
#include <string.h>

#include "core/alloc.h"

/* Owner indices keep one bit for min/max in the SAP endpoints, and one value as a sentinel. */
#define VL_BP_MAX_OBJECTS 0x7FFFFFF0u

#ifndef NDEBUG
#define VL_BP_DEBUG_VALIDATE(bp) assert(vl_broadphase_validate(bp) == VL_OK)
#else
#define VL_BP_DEBUG_VALIDATE(bp) ((void)0)
#endif

static const vl_broadphase_ops* ops_of_kind(vl_broadphase_kind kind) {
    switch (kind) {
    case VL_BROADPHASE_SAP: return &vl_sap_ops;
    case VL_BROADPHASE_BOX_PRUNING: return &vl_prune_bp_ops;
    case VL_BROADPHASE_MULTI_SAP: return &vl_msap_ops;
    case VL_BROADPHASE_GRID: return &vl_grid_ops;
    }
    return NULL;
}

vl_broadphase_desc vl_broadphase_default_desc(void) {
    vl_broadphase_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.kind = VL_BROADPHASE_SAP;
    return desc;
}

static vl_status objects_reserve(vl_bp_objects* o, uint64_t n) {
    vl_status s = vl_array_reserve((void**)&o->boxes, &o->boxes_cap, o->slot_count, n, sizeof *o->boxes);
    if (s == VL_OK) s = vl_array_reserve((void**)&o->flags, &o->flags_cap, o->slot_count, n, 1);
    if (s == VL_OK) s = vl_array_reserve((void**)&o->free_slots, &o->free_cap, o->free_count, n, sizeof(uint32_t));
    if (s == VL_OK) s = vl_array_reserve((void**)&o->pending, &o->pending_cap, o->pending_count, n, sizeof(uint32_t));
    return s;
}

static void objects_free(vl_bp_objects* o) {
    vl_array_free((void**)&o->boxes, &o->boxes_cap, sizeof *o->boxes);
    vl_array_free((void**)&o->flags, &o->flags_cap, 1);
    vl_array_free((void**)&o->free_slots, &o->free_cap, sizeof(uint32_t));
    vl_array_free((void**)&o->pending, &o->pending_cap, sizeof(uint32_t));
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
    vl_mem_free(bp, sizeof *bp);
}

static vl_status check_boxes(const vl_aabb* boxes, uint32_t count) {
    for (uint32_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++)
            if (!(boxes[i].min[a] <= boxes[i].max[a])) return VL_ERR_INVALID_BOUNDS;
    return VL_OK;
}

static void unmark(vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) o->flags[handles[i]] &= (uint8_t)~VL_OBJ_MARK;
}

/* Every handle alive and once only; on VL_OK the objects carry VL_OBJ_MARK. */
static vl_status mark_handles(vl_bp_objects* o, const uint32_t* handles, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = handles[i];
        vl_status s = VL_OK;
        if (h >= o->slot_count || !(o->flags[h] & VL_OBJ_ALIVE))
            s = VL_ERR_INVALID_HANDLE;
        else if (o->flags[h] & VL_OBJ_MARK)
            s = VL_ERR_DUPLICATE_HANDLE;
        if (s != VL_OK) {
            unmark(o, handles, i);
            return s;
        }
        o->flags[h] |= VL_OBJ_MARK;
    }
    return VL_OK;
}

vl_status vl_broadphase_add(vl_broadphase* bp, const vl_aabb* boxes, uint32_t count, uint32_t flags,
                            uint32_t* out_handles) {
    if (!bp || (count && (!boxes || !out_handles))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_STATIC) return VL_ERR_INVALID_FLAGS;
    vl_status s = check_boxes(boxes, count);
    if (s != VL_OK || !count) return s;
    vl_bp_objects* o = &bp->objects;
    if ((uint64_t)o->alive + o->pending_count + count > VL_BP_MAX_OBJECTS) return VL_ERR_TOO_LARGE;
    s = objects_reserve(o, (uint64_t)o->slot_count + count);
    if (s != VL_OK) return s;
    uint32_t old_slots = o->slot_count, old_free = o->free_count;
    uint8_t f = (uint8_t)(VL_OBJ_ALIVE | ((flags & VL_STATIC) ? VL_OBJ_STATIC : 0));
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h = o->free_count ? o->free_slots[--o->free_count] : o->slot_count++;
        o->boxes[h] = boxes[i];
        o->flags[h] = f;
        out_handles[i] = h;
    }
    o->alive += count;
    s = bp->ops->add(bp, out_handles, count);
    if (s != VL_OK) {
        /* the popped slots are still in free_slots past free_count */
        for (uint32_t i = 0; i < count; i++) o->flags[out_handles[i]] = 0;
        o->slot_count = old_slots;
        o->free_count = old_free;
        o->alive -= count;
        return s;
    }
    VL_BP_DEBUG_VALIDATE(bp);
    return VL_OK;
}

vl_status vl_broadphase_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes, uint32_t count) {
    if (!bp || (count && (!handles || !boxes))) return VL_ERR_INVALID_ARGUMENT;
    if (!count) return VL_OK;
    vl_bp_objects* o = &bp->objects;
    vl_status s = mark_handles(o, handles, count);
    if (s != VL_OK) return s;
    unmark(o, handles, count);
    s = check_boxes(boxes, count);
    if (s == VL_OK) s = bp->ops->update(bp, handles, boxes, count);
    if (s == VL_OK) VL_BP_DEBUG_VALIDATE(bp);
    return s;
}

vl_status vl_broadphase_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count) {
    if (!bp || (count && !handles)) return VL_ERR_INVALID_ARGUMENT;
    if (!count) return VL_OK;
    vl_bp_objects* o = &bp->objects;
    vl_status s = mark_handles(o, handles, count);
    if (s != VL_OK) return s;
    bp->ops->remove(bp, handles, count);
    for (uint32_t i = 0; i < count; i++) {
        o->flags[handles[i]] = 0;
        o->pending[o->pending_count++] = handles[i];
    }
    o->alive -= count;
    VL_BP_DEBUG_VALIDATE(bp);
    return VL_OK;
}

vl_status vl_broadphase_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted) {
    if (!bp || (created && !vl_pair_buffer_is_valid(created)) || (deleted && !vl_pair_buffer_is_valid(deleted)) ||
        (created && created == deleted))
        return VL_ERR_INVALID_ARGUMENT;
    /* the buffers always get storage, so that callers may pass .pairs to qsort or memcpy */
    vl_status s = created && !created->capacity ? vl_pair_buffer_reserve(created, 1) : VL_OK;
    if (s == VL_OK && deleted && !deleted->capacity) s = vl_pair_buffer_reserve(deleted, 1);
    if (s == VL_OK) s = bp->ops->commit(bp, created, deleted);
    if (s != VL_OK) return s;
    vl_bp_objects* o = &bp->objects;
    /* handles freed in this period may be given again from now on */
    for (uint32_t i = 0; i < o->pending_count; i++) o->free_slots[o->free_count++] = o->pending[i];
    o->pending_count = 0;
    VL_BP_DEBUG_VALIDATE(bp);
    return VL_OK;
}

const vl_pair* vl_broadphase_pairs(const vl_broadphase* bp, uint32_t* count) {
    if (!bp) {
        if (count) *count = 0;
        return NULL;
    }
    static const vl_pair none = {0, 0};
    uint32_t n = 0;
    const vl_pair* pairs = bp->ops->pairs(bp, &n);
    if (count) *count = n;
    return pairs ? pairs : &none; /* never NULL for a broadphase, so that memcpy(dst, pairs, 0) is fine */
}

uint32_t vl_broadphase_count(const vl_broadphase* bp) { return bp ? bp->objects.alive : 0; }

vl_status vl_broadphase_get_box(const vl_broadphase* bp, uint32_t handle, vl_aabb* box) {
    if (!bp || !box) return VL_ERR_INVALID_ARGUMENT;
    const vl_bp_objects* o = &bp->objects;
    if (handle >= o->slot_count || !(o->flags[handle] & VL_OBJ_ALIVE)) return VL_ERR_INVALID_HANDLE;
    *box = o->boxes[handle];
    return VL_OK;
}

vl_status vl_broadphase_set_pair_user_data(vl_broadphase* bp, uint32_t a, uint32_t b, void* data) {
    if (!bp) return VL_ERR_INVALID_ARGUMENT;
    if (!(bp->desc.flags & VL_BROADPHASE_PAIR_USER_DATA) || !bp->ops->pair_user) return VL_ERR_INVALID_FLAGS;
    void** slot = bp->ops->pair_user(bp, a, b);
    if (!slot) return VL_ERR_INVALID_ARGUMENT;
    *slot = data;
    return VL_OK;
}

void* vl_broadphase_get_pair_user_data(const vl_broadphase* bp, uint32_t a, uint32_t b) {
    if (!bp || !(bp->desc.flags & VL_BROADPHASE_PAIR_USER_DATA) || !bp->ops->pair_user) return NULL;
    void** slot = bp->ops->pair_user(bp, a, b);
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
