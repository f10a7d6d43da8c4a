/* What the single-ray and batched raycasts share: the flags they know, and the walks' prefetch. */
#ifndef VL_BVH_RAYS_RAYS_H
#define VL_BVH_RAYS_RAYS_H

#include "bvh/rays/ray_tests.h"

/* The flag bits the batched ray casts know (vl_bvh_raycast1: VL_QUERY_ANY only). */
#define VL_BVH_RAY_FLAGS (VL_QUERY_ANY | VL_QUERY_GROUP_BY_ORIGIN)

/* Trees of this many bytes or more outgrow the cache: there the interleaved walks fetch each
 * walk's next visit a round ahead. In smaller trees the walks' loads mostly hit the cache and
 * the fetches cost more than they hide; 24 MiB lies between the largest tree that loses by them
 * and the smallest that gains (docs/measurements/rays.md). */
#define VL_WALK_PREFETCH_BYTES ((size_t)24 << 20)

static inline int vl_bvh_outgrows_cache(const vl_bvh* bvh) { return vl_bvh_bytes(bvh) >= VL_WALK_PREFETCH_BYTES; }

/* Ray casts: scratch NULL takes the hooks' (or none: one ray at a time); else it fits the batch. */
vl_status vl_bvh_raycast_on(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                            void* scratch);
vl_status vl_bvh_raycast_on_context(vl_context* ctx, const vl_bvh* bvh, const vl_ray* rays, uint32_t count,
                                    uint32_t flags, vl_hit* hits);

#endif
