/* The forms behind each BVH entry point, one per way a call runs (vl_exec): on the allocator hooks
 * or the C stack, on the caller's scratch, on a context. The entry point checks the arguments, the
 * flags and the exec, then calls one of these; a context's items call the scratch forms. */
#ifndef VL_BVH_EXEC_H
#define VL_BVH_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <volley/bvh.h>

/* Ray casts: scratch NULL takes the hooks' (or none: one ray at a time); else it fits the batch. */
vl_status vl_bvh_raycast_on(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                            void* scratch);
vl_status vl_bvh_raycast_on_context(vl_context* ctx, const vl_bvh* bvh, const vl_ray* rays, uint32_t count,
                                    uint32_t flags, vl_hit* hits);

/* Sweeps (spheres, or boxes when `boxes`): on the C stack; contacts may be NULL. */
vl_status vl_bvh_sweep_on(const vl_bvh* bvh, const void* sweeps, bool boxes, uint32_t count, uint32_t flags,
                          vl_hit* hits, vl_contact* contacts);
vl_status vl_bvh_sweep_on_context(vl_context* ctx, const vl_bvh* bvh, const void* sweeps, bool boxes, uint32_t count,
                                  uint32_t flags, vl_hit* hits, vl_contact* contacts);

/* Overlaps (boxes, or spheres when `spheres`): scratch NULL runs small batches on the C stack (one
 * query: the single walk); else it fits the batch. */
vl_status vl_bvh_overlap_on(const vl_bvh* bvh, const void* queries, bool spheres, uint32_t count,
                            vl_pair_buffer* out, void* scratch);
vl_status vl_bvh_overlap_on_context(vl_context* ctx, const vl_bvh* bvh, const void* queries, bool spheres,
                                    uint32_t count, vl_pair_buffer* out);

/* The context a build or refit runs on: NULL for the calling thread; *ok false for an exec with
 * scratch (they take none) or with both. */
vl_context* vl_bvh_exec_context(const vl_exec* exec, bool* ok);

/* Refits on a context's job system (the builds take theirs as an argument: build.c). */
vl_status vl_bvh_refit_triangles_on_context(vl_context* ctx, vl_bvh* bvh, const float* xyz);
vl_status vl_bvh_refit_boxes_on_context(vl_context* ctx, vl_bvh* bvh, const vl_aabb* boxes);

#endif
