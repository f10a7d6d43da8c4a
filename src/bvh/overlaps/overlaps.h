/* Box, sphere and capsule overlap queries (overlap.c, overlap_capsule.c) and their form on a
 * context (overlap_tasks.c). */
#ifndef VL_BVH_OVERLAPS_OVERLAPS_H
#define VL_BVH_OVERLAPS_OVERLAPS_H

#include <stdbool.h>

#include "bvh/tree/tree.h"
#include "core/pair_buffer.h"

/* The query shapes. In the leaf tests, a compile-time constant: each thin wrapper gets its own
 * body with the shape's tests, prep and kernel inlined. */
typedef enum vl_ov_shape { VL_OV_BOXES, VL_OV_SPHERES, VL_OV_CAPSULES } vl_ov_shape;

/* Where the pairs go: the caller's buffer; record id (at records + VL_OV_RECORD_FLOATS id)
 * answers query first + id of the caller's array queries, or first + index[id] when the batch
 * runs in a spatial order. */
typedef struct vl_ov_ctx {
    vl_pair_buffer* out;
    uint32_t first;
    const uint32_t* index;
    float* records;
    const void* queries;
} vl_ov_ctx;

static inline uint32_t vl_ov_query(const vl_ov_ctx* ctx, uint32_t id) {
    return ctx->first + (ctx->index ? ctx->index[id] : id);
}

/* Room for `more` pairs (a leaf's worth) before a query's pairs are written. */
static inline vl_status vl_ov_room(vl_pair_buffer* out, uint32_t more) {
    if (out->capacity - out->count >= more) return VL_OK;
    if ((uint64_t)out->count + more > UINT32_MAX) return VL_ERR_TOO_LARGE;
    return vl_pair_buffer_reserve(out, out->count + more);
}

/* Appends (query, primitive) for the set bits of the chunk of `lanes` triangles from slot k,
 * without a branch: every lane is written and the end moves past the kept ones (the buffer has
 * room for `lanes` more); only the leaf's own prim entries are read. */
static inline void vl_ov_emit_bits(vl_pair_buffer* out, uint32_t query, const float* rows, uint32_t k, uint32_t lanes,
                                   uint32_t bits) {
    vl_pair* dst = out->pairs + out->count;
    for (uint32_t i = 0; i < lanes; i++) {
        *dst = (vl_pair){query, vl_bvh_leaf_prim(rows, k + i)};
        dst += bits >> i & 1u;
    }
    out->count = (uint32_t)(dst - out->pairs);
}

/* The sphere queries' leaf tests (the batch engine's leaf_test, overlap.c): a capsule of zero
 * length is the sphere it is, and takes them. */
vl_status vl_ov_sphere_tri_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                                const vl_bvh_node4* parent, uint32_t lane);
vl_status vl_ov_sphere_box_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                                const vl_bvh_node4* parent, uint32_t lane);

/* Capsules (overlap_capsule.c): the record of capsule c (VL_OV_RECORD_FLOATS floats), 0 when it
 * is invalid; the n valid queries of ctx (ids in the arena) through the batch engine; record 0
 * alone (one walk). */
int vl_ov_capsule_record(float* rec, const vl_capsule* c);
vl_status vl_ov_capsule_batch(const vl_bvh* bvh, vl_ov_ctx* ctx, uint32_t* arena, uint32_t n, size_t arena_entries);
vl_status vl_ov_capsule_single(const vl_bvh* bvh, vl_ov_ctx* ctx);

/* Overlaps of one shape: scratch NULL runs small batches on the C stack (one query: the single
 * walk); else it fits the batch. */
vl_status vl_bvh_overlap_on(const vl_bvh* bvh, const void* queries, vl_ov_shape shape, uint32_t count,
                            vl_pair_buffer* out, void* scratch);
vl_status vl_bvh_overlap_on_context(vl_context* ctx, const vl_bvh* bvh, const void* queries, vl_ov_shape shape,
                                    uint32_t count, vl_pair_buffer* out);

#endif
