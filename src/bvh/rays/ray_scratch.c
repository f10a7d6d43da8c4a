/* The layout of a batch's scratch block (see ray_scratch.h). */
#include "bvh/rays/ray_scratch.h"

#include "bvh/rays/ray_lanes.h"
#include "bvh/rays/ray_seed.h"

/* The sizes of the block's parts. */
typedef struct vl_scratch_sizes {
    size_t walk, order, rec, arena, mask, seed;
} vl_scratch_sizes;

static vl_scratch_sizes scratch_sizes(const vl_bvh_plan* p, uint32_t count) {
    vl_scratch_sizes z;
    z.walk = vl_bvh_walks_scratch() + sizeof(uint32_t) * 2 * VL_QUEUE;
    z.order = p->ordered ? sizeof(vl_hit) * (size_t)p->chunk + sizeof(uint32_t) * ((size_t)count + p->chunks) +
                               sizeof(uint16_t) * ((size_t)count + 1)
                         : 0;
    z.order = (z.order + 63) & ~(size_t)63; /* the records after it stay 64-byte aligned */
    z.rec = sizeof(float) * VL_RAYREC_FLOATS * (size_t)p->chunk;
    z.arena = sizeof(uint32_t) * ((size_t)p->arena_size + VL_LIST_SPARE);
    z.mask = sizeof(uint32_t) * ((size_t)p->chunk / 2 + 2);
    z.seed = p->walks ? vl_bvh_seed_bytes(p->chunk) : 0;
    return z;
}

size_t vl_bvh_scratch_bytes(const vl_bvh_plan* p, uint32_t count) {
    const vl_scratch_sizes z = scratch_sizes(p, count);
    return z.walk + z.order + z.rec + z.arena + z.mask + z.seed;
}

vl_bvh_scratch vl_bvh_scratch_parts(const vl_bvh_plan* p, uint32_t count, void* block) {
    const vl_scratch_sizes z = scratch_sizes(p, count);
    char* at = block;
    vl_bvh_scratch s;
    s.walks = at;
    s.queue = (uint32_t*)(at + vl_bvh_walks_scratch());
    s.chunk_hits = (vl_hit*)(at + z.walk);
    s.perm = p->ordered ? (uint32_t*)(s.chunk_hits + p->chunk) : NULL;
    s.cursor = p->ordered ? s.perm + count : NULL;
    s.keys = p->ordered ? (uint16_t*)(s.cursor + p->chunks) : NULL;
    s.rec = (float*)(at + z.walk + z.order);
    s.arena = (uint32_t*)((char*)s.rec + z.rec);
    s.masks = s.arena + p->arena_size + VL_LIST_SPARE;
    s.seeds = p->walks ? (uint32_t*)((char*)s.arena + z.arena + z.mask) : NULL;
    return s;
}
