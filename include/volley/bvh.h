/* volley AABB tree (BVH) over triangles or boxes, queried by batches of rays.
 *
 * A tree is built once (binned SAH) and never written by a query, so any number of threads may
 * query one tree at once. vl_bvh_raycast traces a whole batch with move-to-front traversal: every
 * live ray of the batch is tested against a node at once (SIMD across rays), the survivors move
 * to the front of an index array and only they descend. vl_bvh_raycast1 traces one ray.
 *
 * Triangles are double-sided. The ray-triangle test is Moller-Trumbore (with the triangle's
 * normal precomputed) and a barycentric tolerance of VL_BVH_TRIANGLE_EPSILON: a hit is reported
 * when u >= -eps, v >= -eps and u + v <= 1 + eps, so that a ray through a shared edge or vertex
 * hits at least one triangle (it is not watertight in the strict sense; a ray may hit both
 * neighbours of an edge, with equal t). Triangles of zero area, and slivers whose normal is
 * shorter than 2^-20 |v1 - v0| |v2 - v0| (an angle under about 1e-6 rad, where float arithmetic
 * gives noise), are never hit, nor by a ray in a triangle's plane or within about 2^-20 rad of
 * it. Boxes are hit by the slab test; hit.t is the entry t clamped to
 * the ray's tmin (0 when the origin is inside and tmin = 0). A hit's t is always finite. */
#ifndef VOLLEY_BVH_H
#define VOLLEY_BVH_H

#include <stddef.h>
#include <stdint.h>

#include <volley/base.h>
#include <volley/tasks.h>
#include <volley/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Barycentric tolerance of the ray-triangle test (2^-20). */
#define VL_BVH_TRIANGLE_EPSILON 9.5367431640625e-7f

/* The most primitives one leaf may hold. */
#define VL_BVH_MAX_LEAF_SIZE 32u

typedef struct vl_bvh vl_bvh;

/* Build settings. Take them from vl_bvh_default_desc() and change the fields you care about, so
 * that fields added later keep their defaults. */
typedef struct vl_bvh_desc {
    uint32_t max_leaf_size; /* a leaf holds at most this many primitives: 1..VL_BVH_MAX_LEAF_SIZE, default 8 */
    uint32_t sah_bins;      /* bins per axis of the binned SAH: 4..64, default 16 */
    float node_cost;        /* cost of a node visit relative to a primitive test: > 0, default 4 */
} vl_bvh_desc;

/* Shape and cost of a built tree. */
typedef struct vl_bvh_stats {
    uint32_t primitives;
    uint32_t nodes;       /* interior nodes plus leaves */
    uint32_t leaves;
    uint32_t depth;       /* the longest root-to-leaf path, in nodes (a lone leaf has depth 1) */
    double sah_cost;      /* SAH cost of the tree, with the desc's node cost and a primitive cost of 1 */
    size_t bytes;         /* memory the tree holds through the allocator hooks */
} vl_bvh_stats;

/* The default build settings (see vl_bvh_desc). */
VL_API vl_bvh_desc vl_bvh_default_desc(void);

/* Builds a tree over triangle_count triangles: triangle i has the vertices indices[3i..3i+2] of
 * the vertex array xyz (3 floats per vertex). The tree copies what it needs; xyz and indices may
 * be freed after the call. desc may be NULL (defaults).
 * VL_ERR_INVALID_ARGUMENT: NULL xyz, indices or out, or a count of 0; VL_ERR_INVALID_FLAGS: a desc
 * field out of range; VL_ERR_INVALID_GEOMETRY: a NaN or infinite coordinate or an index past
 * vertex_count; VL_ERR_TOO_LARGE: more than 2^30 triangles; VL_ERR_OUT_OF_MEMORY. *out is
 * written only on VL_OK. */
VL_API vl_status vl_bvh_build_triangles(const float* xyz, uint32_t vertex_count, const uint32_t* indices,
                                        uint32_t triangle_count, const vl_bvh_desc* desc, vl_bvh** out);

/* Builds a tree over count boxes (primitive i is boxes[i]). Infinite bounds are valid.
 * VL_ERR_INVALID_BOUNDS: a NaN bound or min > max; other errors as vl_bvh_build_triangles. */
VL_API vl_status vl_bvh_build_boxes(const vl_aabb* boxes, uint32_t count, const vl_bvh_desc* desc, vl_bvh** out);

/* Frees the tree; NULL is fine. No query may be running on it. */
VL_API void vl_bvh_destroy(vl_bvh* bvh);

/* Fills *stats. VL_ERR_INVALID_ARGUMENT when bvh or stats is NULL. */
VL_API vl_status vl_bvh_get_stats(const vl_bvh* bvh, vl_bvh_stats* stats);

/* Checks every invariant of the tree (child links, primitive ranges covering each primitive once,
 * boxes nested and enclosing their primitives, leaf sizes, depth). VL_OK when all hold,
 * VL_ERR_INVALID_ARGUMENT for NULL or a broken tree. Debug builds run it after every build. */
VL_API vl_status vl_bvh_validate(const vl_bvh* bvh);

/* Traces count rays as one batch; hits[i] answers rays[i]. flags: VL_RAY_CLOSEST (0), the nearest
 * hit in [tmin, tmax], or VL_RAY_ANY, some hit in [tmin, tmax] (a ray stops at the first one found;
 * hit.t, prim, u, v describe that one). A miss is prim = VL_NO_HIT, t = INFINITY, u = v = 0.
 * Scratch memory for the call comes from the allocator hooks, once per call (or from the caller:
 * vl_bvh_raycast_scratch). Small batches (under 4096 rays, or with fewer rays entering the tree's
 * box than one per leaf, counted in one chunk of 128K rays at most: up to about 200K entering rays
 * on a 1.1M-triangle world, at any batch size) trace the top levels of the tree as ray streams and
 * go on as 16 interleaved single-ray walks (measured faster at those sizes), 1024 rays at a time,
 * with about 96 KB plus 218 bytes per ray (320 KB at most); larger ones run as ray streams, 128K
 * rays at a time, with 96 KB plus 82 bytes per ray (10.8 MB at most). Batches under 8 rays, and
 * any batch whose scratch cannot be allocated, go one ray at a time without scratch (the same
 * answers).
 * VL_RAY_GROUP_BY_ORIGIN (may be or'ed with either query) changes only the speed of batches of more
 * than 128K rays: each chunk of 128K takes rays whose origins share a cell of an 8x8x8 grid over
 * the tree's box (then a direction octant) and runs as ray streams, at the price of a counting
 * sort, 2 MB plus 6 bytes per ray more scratch, and hits written out of order. Measured on a
 * 1.1M-triangle world, 1M rays, against the same batch ungrouped (walks there): rays from surfaces
 * 1.44x faster, line of sight 1.16x closest hit and 1.18-1.22x any hit; rays from anywhere across
 * the scene 0.68-0.72x; and 0.66-0.88x on a scene that fits in the cache (streams both ways:
 * there is no memory traffic to save).
 * Thread-safe on a shared tree.
 * VL_OK; VL_ERR_INVALID_QUERY when some rays were invalid (see vl_ray): every valid ray is still
 * answered and each invalid one is a miss; VL_ERR_INVALID_ARGUMENT for a NULL bvh, rays or hits
 * (with count > 0); VL_ERR_INVALID_FLAGS for unknown flag bits (nothing written). count 0 is VL_OK
 * and does nothing. */
VL_API vl_status vl_bvh_raycast(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits);

/* Alignment of the scratch passed to vl_bvh_raycast_scratch. */
#define VL_BVH_SCRATCH_ALIGNMENT 64u

/* Bytes of scratch that vl_bvh_raycast_scratch needs for a batch of count rays with these flags,
 * whatever the rays (the larger of the two ways a batch may go); 0 when it needs none (count < 8)
 * and for a NULL bvh or unknown flag bits. */
VL_API size_t vl_bvh_raycast_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags);

/* vl_bvh_raycast on the caller's scratch: the call allocates nothing, so that threads with their
 * own buffers (or a frame's arena) never reach the allocator hooks. scratch: at least
 * vl_bvh_raycast_scratch_size(bvh, count, flags) bytes, aligned to VL_BVH_SCRATCH_ALIGNMENT, not
 * shared with a call running at the same time (it may be NULL when that size is 0). The same
 * answers and statuses as vl_bvh_raycast, and VL_ERR_INVALID_ARGUMENT (nothing written) for a
 * NULL, misaligned or too small scratch where one is needed. */
VL_API vl_status vl_bvh_raycast_scratch(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags,
                                        vl_hit* hits, void* scratch, size_t scratch_bytes);

/* Traces one ray without a batch (no allocation). Same answers as vl_bvh_raycast: the same
 * primitive, or one at the same t where several are hit at one distance. VL_RAY_GROUP_BY_ORIGIN
 * is accepted and changes nothing. VL_ERR_INVALID_QUERY (and a miss) for an invalid ray; other
 * statuses as vl_bvh_raycast. */
VL_API vl_status vl_bvh_raycast1(const vl_bvh* bvh, const vl_ray* ray, uint32_t flags, vl_hit* hit);

/* ---- parallel forms (the task hook and vl_context: volley/tasks.h) ------------------------- */

/* vl_bvh_raycast with the context's job system: the batch is cut into blocks of rays whose size
 * depends on count alone (about count / 64 rays, 512 to 65536, in multiples of 256), each traced by
 * vl_bvh_raycast_scratch in its worker's scratch. Answers are identical, every bit, for any worker
 * count and job system (and without one); against one vl_bvh_raycast call over the whole batch,
 * a closest hit can differ only where several primitives are hit at exactly the same t (the
 * answer may name another of them; t is equal as a number, though on NEON a box hit from inside,
 * t = 0, may be -0 on one path and +0 on the other), and an any hit may be another hit of the same ray (hit or miss
 * never differs). The first call on a context grows its scratch (workers x the scratch of one
 * block); later calls with batches no larger allocate nothing. VL_RAY_GROUP_BY_ORIGIN is accepted
 * and changes nothing (blocks are under its 128K rays). Statuses as vl_bvh_raycast, and
 * VL_ERR_INVALID_ARGUMENT for a NULL ctx. One call at a time per context. */
VL_API vl_status vl_bvh_raycast_parallel(vl_context* ctx, const vl_bvh* bvh, const vl_ray* rays, uint32_t count,
                                         uint32_t flags, vl_hit* hits);

/* vl_bvh_build_triangles / vl_bvh_build_boxes with the context's job system: the per-primitive
 * passes run in pieces as tasks; the top levels are split on the calling thread down to ranges of
 * at most max(count / (2 workers), 4096) primitives, whose subtrees are then built as tasks and
 * joined. The tree is identical, bit for bit, to the serial build's (the same nodes in the same
 * order, the same primitive order), for any worker count and job system. Memory: a copy of the
 * nodes (up to 64 bytes per primitive) more than the serial build while it runs; each subtree's
 * task allocates its bin sets through the allocator hooks on the job system's thread (the hooks
 * must be thread-safe, as for queries on several threads; the default ones are). Errors as the
 * serial builds, and VL_ERR_INVALID_ARGUMENT for a NULL ctx. */
VL_API vl_status vl_bvh_build_triangles_parallel(vl_context* ctx, const float* xyz, uint32_t vertex_count,
                                                 const uint32_t* indices, uint32_t triangle_count,
                                                 const vl_bvh_desc* desc, vl_bvh** out);
VL_API vl_status vl_bvh_build_boxes_parallel(vl_context* ctx, const vl_aabb* boxes, uint32_t count,
                                             const vl_bvh_desc* desc, vl_bvh** out);

#ifdef __cplusplus
}
#endif

#endif
