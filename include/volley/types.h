/* volley plain data types: boxes, rays, hits, spheres, sweeps. No behaviour, no hidden state. */
#ifndef VOLLEY_TYPES_H
#define VOLLEY_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An axis-aligned box with inclusive bounds: two boxes overlap when their closed intervals
 * overlap on all three axes (touching counts). Infinite bounds are valid; NaN and min > max are not. */
typedef struct vl_aabb {
    float min[3], max[3];
} vl_aabb;

/* A ray or segment: position = origin + t * dir for t in [tmin, tmax]. dir need not be unit
 * length; tmax may be INFINITY. Components of dir smaller than FLT_MIN in magnitude (denormals)
 * count as 0: the ray is parallel to that axis. Valid when every field is non-NaN, origin and dir
 * are finite, some component of dir is at least FLT_MIN in magnitude and 0 <= tmin <= tmax. */
typedef struct vl_ray {
    float origin[3], tmin;
    float dir[3], tmax;
} vl_ray;

/* The answer to a ray or sweep: prim == VL_NO_HIT on a miss (t is then INFINITY). For triangles
 * (u, v) are the barycentric coordinates of the hit; for boxes they are 0. */
typedef struct vl_hit {
    float t;
    uint32_t prim;
    float u, v;
} vl_hit;

#define VL_NO_HIT 0xFFFFFFFFu

typedef struct vl_sphere {
    float center[3], radius;
} vl_sphere;

/* A moving sphere: center + t * dir for t in [0, tmax]. */
typedef struct vl_sphere_sweep {
    float center[3], radius;
    float dir[3], tmax;
} vl_sphere_sweep;

/* A moving box: box translated by t * dir for t in [0, tmax]. */
typedef struct vl_box_sweep {
    vl_aabb box;
    float dir[3], tmax;
} vl_box_sweep;

/* Where a sweep touched a primitive: the contact point (on the primitive's surface, where the
 * moving shape at the reported t meets it) and the unit surface normal there, pointing from the
 * primitive toward the moving shape and against the sweep's direction (dot(normal, dir) <= 0).
 * All zero on a miss. */
typedef struct vl_contact {
    float point[3], normal[3];
} vl_contact;

/* A closest-point query: the point of the tree's primitives nearest to `point`, if one lies within
 * max_distance of it (INFINITY: anywhere; 0: only primitives the point touches). Valid when point
 * is finite and max_distance is not NaN and >= 0. */
typedef struct vl_point_query {
    float point[3], max_distance;
} vl_point_query;

/* The answer to a closest-point query: the closest point of primitive prim (in the caller's
 * coordinates) and its distance from the query's point. For triangles (u, v) are the point's
 * barycentric coordinates (weights of the second and third vertices); for boxes they are 0. None
 * within max_distance: prim == VL_NO_HIT, distance INFINITY, point and u, v zero. */
typedef struct vl_closest_hit {
    float point[3], distance;
    uint32_t prim;
    float u, v;
} vl_closest_hit;

/* A capsule: the points within radius of the segment from a to b, in any orientation (a sphere
 * when a == b, the segment itself when radius is 0). Valid when a, b and radius are finite and
 * radius >= 0. Layout: a[3], radius, b[3] (28 bytes). */
typedef struct vl_capsule {
    float a[3], radius;
    float b[3];
} vl_capsule;

/* A moving capsule: the capsule translated by t * dir for t in [0, tmax]. */
typedef struct vl_capsule_sweep {
    vl_capsule capsule;
    float dir[3], tmax;
} vl_capsule_sweep;

/* Query flags of the ray casts and sweeps (an overlap reports every pair: it takes none). */
#define VL_QUERY_CLOSEST 0u /* the nearest hit (default) */
#define VL_QUERY_ANY 1u     /* occlusion: any hit ends the query; hit.t is the first one found */
/* Ray casts only: a hint for batches of more than 128K rays that do their work near their origins
 * (rays that start on surfaces: bounces, footing, line of sight along the ground): the batch is
 * traced in chunks of rays whose origins lie near each other instead of in the caller's order.
 * Same answers; what it costs: vl_bvh_raycast; when it pays: docs/guide/rays.md. */
#define VL_QUERY_GROUP_BY_ORIGIN 2u

/* Broadphase object flags. */
#define VL_STATIC 1u /* never moves; static objects never pair with each other */

#ifdef __cplusplus
}
#endif

#endif
