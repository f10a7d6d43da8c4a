/* Closest-point queries: the query as the walks keep it, the exact primitive tests in double, the
 * leaf tests (closest_leaf.c), the keyed kind of the interleaved walks and the forms behind the
 * entry (closest.c, closest_tasks.c). */
#ifndef VL_BVH_CLOSEST_CLOSEST_H
#define VL_BVH_CLOSEST_CLOSEST_H

#include <stdbool.h>

#include "bvh/tree/tree.h"

/* A valid query: its point and max_distance squared (INFINITY allowed), exact in double. */
typedef struct vl_closest_query {
    float p[3];
    double max2;
} vl_closest_query;

/* The best primitive of one query so far: its exact squared distance, and where it is: a box at
 * slot `first`, or triangle `at & 0xFFFF` of the leaf of `at >> 16` triangles from slot first.
 * Before one is found, d2 is the query's max2 and first VL_BVH_EMPTY. */
typedef struct vl_closest_best {
    double d2;
    uint32_t first, at;
} vl_closest_best;

/* Whether the caller's query is valid (see vl_point_query); fill the query from a valid one. */
bool vl_closest_valid(const vl_point_query* q);
void vl_closest_query_set(vl_closest_query* q, const vl_point_query* in);

/* The float search limit of the walks for an exact squared distance d2: d2 grown by 2^-20 of
 * itself and rounded up (INFINITY past float range), so that no float lower bound of a closer
 * primitive (at most 5 * 2^-24 of itself above its exact value) passes it. */
float vl_closest_limit(double d2);

/* Squared distance from the point p0 + w to the triangle p0 + {0, e1, e2} (w, e1, e2 in double:
 * differences); when o is not NULL, the closest point's offset from p0 goes to o and its
 * barycentric weights of the second and third corners to uv. */
double vl_closest_tri_exact(const double w[3], const double e1[3], const double e2[3], double o[3], double uv[2]);

/* Squared distance from p to the box [mn, mx] (infinite bounds allowed; INFINITY when a bound
 * the point lies beyond is infinite). */
double vl_closest_box_exact(const float p[3], const float mn[3], const float mx[3]);

/* The leaf of `count` primitives from slot `first` against one query: keeps a primitive closer
 * than best (the first one at most max_distance away) in *best and lowers *limit to
 * vl_closest_limit of its distance, or to -1 at distance 0 (nothing can be closer: the walk ends).
 * Triangles are culled by a float lower bound (SIMD across triangles) and the survivors tested
 * exactly, nearest bound first. */
void vl_closest_leaf_tris(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_closest_query* q, float* limit,
                          vl_closest_best* best);
void vl_closest_leaf_boxes(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_closest_query* q,
                           float* limit, vl_closest_best* best);

/* The caller-facing answer for a best that names a primitive. */
void vl_closest_answer(const vl_bvh* bvh, const vl_closest_query* q, const vl_closest_best* best,
                       vl_closest_hit* out);

/* The n valid queries q down the tree, nearest child first, each answer in best[i] (set as before
 * any is found) its walk's alone: as interleaved walks (VL_QUERY_WALKS at a time), or one walk
 * after another; vl_closest_trace_walks takes the first on a tree larger than the caches. */
void vl_closest_trace_walks(const vl_bvh* bvh, const vl_closest_query* q, uint32_t n, vl_closest_best* best);
void vl_closest_trace_interleaved(const vl_bvh* bvh, const vl_closest_query* q, uint32_t n, vl_closest_best* best);
void vl_closest_trace_each(const vl_bvh* bvh, const vl_closest_query* q, uint32_t n, vl_closest_best* best);

/* Closest points on the C stack, and on a context. */
vl_status vl_bvh_closest_on(const vl_bvh* bvh, const vl_point_query* queries, uint32_t count, vl_closest_hit* answers);
vl_status vl_bvh_closest_on_context(vl_context* ctx, const vl_bvh* bvh, const vl_point_query* queries, uint32_t count,
                                    vl_closest_hit* answers);

#endif
