/* Planning a batch (see ray_plan.h). */
#include "bvh/rays/ray_plan.h"

#include "bvh/rays/ray_walk.h"

/* Rays sampled to estimate how many of a batch enter the tree's box. */
#define VL_ENTRY_SAMPLE 512u

/* Chunks at most that a batch grouped by origin is ordered into (the order's cursors). */
#define VL_ORDER_CHUNKS 65536u

/* About how many of the batch's rays enter the tree's box: those of a sample (VL_ENTRY_SAMPLE
 * rays evenly spaced), scaled to the batch. Invalid rays enter nothing. */
static uint32_t rays_entering(const vl_bvh* bvh, const vl_ray* rays, uint32_t count) {
    const vl_bvh_node* root = &bvh->nodes[0];
    const uint32_t step = count / VL_ENTRY_SAMPLE + 1;
    uint32_t in = 0, sampled = 0;
    for (uint32_t i = 0; i < count; i += step, sampled++) {
        _Alignas(16) float rec[VL_RAYREC_FLOATS];
        float t;
        if (!vl_ray_valid(&rays[i])) continue;
        const int parallel = vl_bvh_rayrec_set(rec, &rays[i]) != 0;
        in += (uint32_t)vl_bvh_ray_box(rec, root->min, root->max, rec[VL_RR_TMAX], parallel, &t);
    }
    return (uint32_t)((uint64_t)count * in / sampled);
}

/* Whether a batch is traced by origin, in chunks of VL_STREAM_CHUNK (bvh.h: VL_QUERY_GROUP_BY_ORIGIN). */
static int grouped_batch(uint32_t count, uint32_t flags) {
    return (flags & VL_QUERY_GROUP_BY_ORIGIN) && count > VL_STREAM_CHUNK;
}

vl_bvh_plan vl_bvh_plan_way(uint32_t count, uint32_t flags, int walks) {
    vl_bvh_plan p;
    p.walks = walks;
    p.chunk = walks ? VL_WALK_CHUNK : VL_STREAM_CHUNK;
    if (p.chunk > count) p.chunk = count;
    p.chunks = (uint32_t)(((uint64_t)count + p.chunk - 1) / p.chunk);
    p.ordered = grouped_batch(count, flags) && p.chunks <= VL_ORDER_CHUNKS;
    p.arena_size = VL_ARENA_PER_RAY * p.chunk;
    return p;
}

/* Below VL_WALK_BATCH rays, or under one ray entering the tree per leaf, lists are too sparse for
 * the streams to beat the single-ray walks. No one density fits every set: in a tree that sits
 * in cache, random rays favour the walks up to about one entering ray per leaf while bounces and
 * line of sight favour the streams from fewer; in a tree that outgrows the cache the walks lead or
 * tie further. One per leaf is where no set loses much. Rays that miss the tree's box count for
 * neither. The streams see one chunk at a time, so a batch of several chunks counts as one chunk,
 * unless grouped by origin, when each chunk crowds one part of the tree and the streams lead
 * (docs/measurements/rays.md). */
vl_bvh_plan vl_bvh_plan_batch(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags) {
    const uint32_t leaves = (bvh->node_count + 1) / 2;
    const uint32_t dense = leaves / VL_STREAM_LEAVES_PER_RAY; /* rays entering the tree for the streams */
    const uint32_t seen = (grouped_batch(count, flags) || count < VL_STREAM_CHUNK) ? count : VL_STREAM_CHUNK;
    const int walks = count < VL_WALK_BATCH || (dense && (seen < dense || rays_entering(bvh, rays, seen) < dense));
    return vl_bvh_plan_way(count, flags, walks);
}
