/* The ray casts' entry point, vl_bvh_raycast, and its scratch size. A batch is checked, planned
 * (ray_plan.h), given its scratch (ray_scratch.h) and traced chunk by chunk: the chunk's records
 * made (ray_chunk.h), then walks from seeds (ray_seed.h) or ray streams (ray_stream.h). */
#include <string.h>

#include "bvh/rays/ray_chunk.h"
#include "bvh/rays/ray_lanes.h"
#include "bvh/rays/ray_scratch.h"
#include "bvh/rays/ray_seed.h"
#include "bvh/rays/ray_stream.h"
#include "bvh/rays/rays.h"
#include "compiler.h"
#include "core/alloc.h"
#include "core/exec.h"

/* The batch one ray at a time, without scratch. */
static vl_status raycast_one_by_one(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags,
                                    vl_hit* hits) {
    vl_status status = VL_OK;
    flags &= VL_QUERY_ANY; /* the single ray takes no batch hint */
    for (uint32_t i = 0; i < count; i++)
        if (vl_bvh_raycast1(bvh, &rays[i], flags, &hits[i]) != VL_OK) status = VL_ERR_INVALID_QUERY;
    return status;
}

/* The batch traced as planned in `block` (vl_bvh_scratch_bytes(p, count) bytes, 64-byte aligned). */
static vl_status trace_batch(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                             const vl_bvh_plan* p, void* block) {
    const int any_hit = (flags & VL_QUERY_ANY) != 0;
    const uint32_t chunk = p->chunk;
    const vl_bvh_scratch s = vl_bvh_scratch_parts(p, count, block);
    vl_status status = VL_OK;
    memset(s.arena, 0, sizeof(uint32_t) * ((size_t)p->arena_size + VL_LIST_SPARE)); /* every entry a valid record */
    if (p->ordered) vl_bvh_order_by_origin(bvh, rays, count, chunk, p->chunks, s.perm, s.keys, s.cursor);

    for (uint32_t base = 0; base < count; base += chunk) {
        uint32_t len = count - base < chunk ? count - base : chunk;
        const uint32_t* order = p->ordered ? s.perm + base : NULL;
        vl_hit* out = p->ordered ? s.chunk_hits : hits + base;
        uint32_t live = 0, parallel = 0;
        if (vl_bvh_load_chunk(rays, base, order, len, s.rec, out, s.arena, &live, &parallel) != VL_OK)
            status = VL_ERR_INVALID_QUERY;
        for (uint32_t j = 0; j < VL_LIST_SPARE; j++) s.arena[live + j] = 0;
        if (live && p->walks)
            vl_bvh_trace_seeded(bvh, s.rec, s.arena, p->arena_size, s.masks, s.seeds, chunk, len, live, parallel != 0,
                                any_hit, out, s.walks);
        if (live && !p->walks) {
            vl_bvh_queue q = {bvh, s.rec, out, parallel != 0, any_hit, 0, s.queue, s.queue + VL_QUEUE, s.walks};
            vl_bvh_trace_streams(bvh, s.rec, s.arena, p->arena_size, s.masks, live, parallel != 0, any_hit, out, &q);
            vl_bvh_queue_flush(&q);
        }
        if (order)
            for (uint32_t i = 0; i < len; i++) hits[order[i]] = out[i];
    }
    return status;
}

/* Rays of a batch whose rays and answers are fetched before the call plans: a small batch's lines
 * are new to the cache, in a call too short for the hardware prefetcher to run ahead of them;
 * the smaller the batch, the more this pays (docs/measurements/rays.md). */
#define VL_FETCH_RAYS 256u

/* The plan of a checked batch of at least VL_WALKS / 2 rays, its first rays fetched meanwhile. */
static vl_bvh_plan plan_call(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits) {
    const size_t n = count < VL_FETCH_RAYS ? count : VL_FETCH_RAYS;
    for (size_t b = 0; b < sizeof(vl_ray) * n; b += 64) VL_PREFETCH((const char*)rays + b);
    for (size_t b = 0; b < sizeof(vl_hit) * n; b += 64) VL_PREFETCH_WRITE((char*)hits + b);
    return vl_bvh_plan_batch(bvh, rays, count, flags);
}

vl_status vl_bvh_raycast_on(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                            void* scratch) {
    if (count < VL_WALKS / 2) return raycast_one_by_one(bvh, rays, count, flags, hits); /* too few to interleave */
    const vl_bvh_plan p = plan_call(bvh, rays, count, flags, hits);
    if (scratch) return trace_batch(bvh, rays, count, flags, hits, &p, scratch);
    const size_t bytes = vl_bvh_scratch_bytes(&p, count);
    void* block = vl_mem_alloc(bytes);
    if (!block) return raycast_one_by_one(bvh, rays, count, flags, hits); /* slower, same answers */
    vl_status status = trace_batch(bvh, rays, count, flags, hits, &p, block);
    vl_mem_free(block, bytes);
    return status;
}

vl_status vl_bvh_raycast(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                         const vl_exec* exec) {
    if (!bvh || (count && (!rays || !hits))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_BVH_RAY_FLAGS) return VL_ERR_INVALID_FLAGS;
    switch (vl_exec_mode_of(exec)) {
    case VL_EXEC_HOOKS: return vl_bvh_raycast_on(bvh, rays, count, flags, hits, NULL);
    case VL_EXEC_CONTEXT: return vl_bvh_raycast_on_context(exec->context, bvh, rays, count, flags, hits);
    case VL_EXEC_SCRATCH: {
        /* checked against the size for any rays, so that whether a call is refused never depends on them */
        const size_t need = vl_bvh_raycast_scratch_size(bvh, count, flags);
        if (!vl_scratch_fits(exec->scratch, exec->scratch_bytes, need)) return VL_ERR_INVALID_ARGUMENT;
        return vl_bvh_raycast_on(bvh, rays, count, flags, hits, need ? exec->scratch : NULL);
    }
    default: return VL_ERR_INVALID_ARGUMENT;
    }
}

size_t vl_bvh_raycast_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags) {
    if (!bvh || count < VL_WALKS / 2 || (flags & ~VL_BVH_RAY_FLAGS)) return 0;
    const vl_bvh_plan walks = vl_bvh_plan_way(count, flags, 1), streams = vl_bvh_plan_way(count, flags, 0);
    const size_t a = vl_bvh_scratch_bytes(&walks, count), b = vl_bvh_scratch_bytes(&streams, count);
    return a > b ? a : b;
}
