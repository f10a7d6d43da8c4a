/* A batch's rays as chunks of ray records: their order when grouped by origin, and the records
 * of a chunk made VL_BW rays at a time. */
#ifndef VL_BVH_RAYS_RAY_CHUNK_H
#define VL_BVH_RAYS_RAY_CHUNK_H

#include "bvh/rays/ray_tests.h"

/* The batch's ray indices in perm[0, count), so that each chunk holds rays that start near each
 * other: a counting sort (stable) by the cell of the origin in the tree's box, 8 cells per axis,
 * then by direction octant. chunks: ceil(count / chunk), computed by the caller in 64 bits; keys
 * (count entries) and cursor (chunks entries) are scratch. */
void vl_bvh_order_by_origin(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t chunk, uint32_t chunks,
                            uint32_t* perm, uint16_t* keys, uint32_t* cursor);

/* The chunk of rays base + i (or order[i] when ordered), i < len: their answers set to misses,
 * their records, and the valid ones' indices idx[0, *live). *parallel gets any lane with a
 * parallel axis. VL_ERR_INVALID_QUERY when some ray is not valid (it gets a retired record). */
vl_status vl_bvh_load_chunk(const vl_ray* rays, uint32_t base, const uint32_t* order, uint32_t len, float* rec,
                            vl_hit* out, uint32_t* idx, uint32_t* live, uint32_t* parallel);

#endif
