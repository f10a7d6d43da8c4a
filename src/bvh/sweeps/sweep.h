/* Sphere, box and capsule sweeps: the query as the traversal keeps it, the exact primitive tests
 * (double precision, sweep_prim.c and sweep_capsule.c), the leaf tests and the sweeps' kind of the
 * interleaved walks (sweep_walks.c on engine/walks.h). */
#ifndef VL_BVH_SWEEPS_SWEEP_H
#define VL_BVH_SWEEPS_SWEEP_H

#include <stdbool.h>

#include "bvh/tree/tree.h"

/* A valid sweep in double precision: a box of half extents h (a sphere: h = 0 and radius r)
 * centred at c moves by t * d, t in [0, tmax]; or (is_capsule) the capsule of radius r around the
 * segment from c to c + seg, whose box (centre c + seg / 2, half extents h = |seg| / 2 + r per
 * axis) the culling tests sweep. size is the shape's own size (r, the largest of h, or r plus half
 * the segment's length): its part of the tolerance; scale the largest magnitude of its start's
 * coordinates, which only the float culling tests' pads follow. */
typedef struct vl_sweep_query {
    double c[3], h[3], d[3];
    double r, tmax, size, scale;
    int is_box, is_capsule;
    double seg[3];
} vl_sweep_query;

/* The float record the node and leaf culling tests read, as four quads: [centre, tmax]
 * [inverse direction, 0] [grown half extent, 0] [direction, sphere reach] (a sphere's grown
 * radius, 0 for a box). The grown half extent is the box's half extent
 * (or the radius) plus a pad that covers the float rounding of the culling tests; tmax is the
 * current search limit rounded up (-1: retired, no test passes). */
#define VL_SWEEPREC_FLOATS 16u
enum { VL_SR_TMAX = 3, VL_SR_INV = 4, VL_SR_GROW = 8, VL_SR_DIR = 12 };

/* The best hit of one sweep so far: the exact (unrounded) time and where the primitive is: a box
 * at slot `first`, or triangle `at & 0xFFFF` of the leaf of `at >> 16` triangles from slot first. */
typedef struct vl_sweep_best {
    double t;
    uint32_t first; /* VL_BVH_EMPTY: none */
    uint32_t at;
} vl_sweep_best;

/* The shapes a call sweeps. */
typedef enum vl_sweep_shape { VL_SWEEP_SPHERES, VL_SWEEP_BOXES, VL_SWEEP_CAPSULES } vl_sweep_shape;

/* Whether the caller's sweeps are valid (see bvh.h); fill the query from a valid one. A capsule of
 * zero length is the sphere it is: its query is the sphere sweep's. */
int vl_sweep_sphere_valid(const vl_sphere_sweep* s);
int vl_sweep_box_valid(const vl_box_sweep* s);
int vl_sweep_capsule_valid(const vl_capsule_sweep* s);
void vl_sweep_query_sphere(vl_sweep_query* q, const vl_sphere_sweep* s);
void vl_sweep_query_box(vl_sweep_query* q, const vl_box_sweep* s);
void vl_sweep_query_capsule(vl_sweep_query* q, const vl_capsule_sweep* s);

/* The culling record of a query (VL_SWEEPREC_FLOATS floats). */
void vl_sweep_rec_set(float* rec, const vl_sweep_query* q);
/* The float search limit for an exact time t: t rounded up (FLT_MAX at most). */
float vl_sweep_limit(double t);

/* Exact first contact of the query against a triangle (vertices v) or a box, in [0, tmax]; a
 * negative value on a miss. */
double vl_sweep_exact_tri(const vl_sweep_query* q, const double v[3][3], double tmax);
double vl_sweep_exact_box(const vl_sweep_query* q, const double mn[3], const double mx[3], double tmax);

/* The parts of the sphere tests that the capsule tests (sweep_capsule.c) are made of: the first
 * t >= 0 at which the point m + t d enters the ball of radius r about the origin (from outside),
 * comes within r of the segment from the origin along e (between its ends), or at which the
 * sphere of centre c and radius r, moving by t d and apart at the start, touches the triangle v
 * (face, edges, vertices: n its normal (v1 - v0) x (v2 - v0), nn = |n|^2, un the unit normal, 0
 * when n is, as vl_sweep_tri_plane gives them, s0 = (c - v0) . un) or touches the box [mn, mx]
 * (0 when it touches at the start); INFINITY when never. */
double vl_sweep_ball_time(const double m[3], const double d[3], double r);
double vl_sweep_cylinder_time(const double m[3], const double d[3], const double e[3], double r);
double vl_sweep_tri_plane(const double v[3][3], double n[3], double un[3]);
double vl_sweep_sphere_tri_moving(const double c[3], const double d[3], double r, const double v[3][3],
                                  const double n[3], double nn, const double un[3], double s0);
double vl_sweep_sphere_box_time(const double c[3], const double d[3], double r, const double mn[3],
                                const double mx[3]);

/* Exact first contact of a capsule query against a triangle or a box (sweep_capsule.c): as
 * vl_sweep_exact_tri and vl_sweep_exact_box. */
double vl_sweep_capsule_tri(const vl_sweep_query* q, const double v[3][3], double tmax);
double vl_sweep_capsule_box(const vl_sweep_query* q, const double mn[3], const double mx[3], double tmax);

/* Triangle i of the leaf of `count` from slot first (v0, v0 + e1, v0 - e2n in double). */
void vl_sweep_tri_vertices(const vl_bvh* bvh, uint32_t first, uint32_t count, uint32_t i, double v[3][3]);

/* The caller-facing answer for the best hit: hit (t backed off to never be late, prim, u, v) and,
 * when contact is not NULL, the contact. best must name a hit. */
void vl_sweep_answer(const vl_bvh* bvh, const vl_sweep_query* q, const vl_sweep_best* best, vl_hit* hit,
                     vl_contact* contact);

/* The leaf of `count` primitives from slot `first` against one sweep: culls with the float
 * record (SIMD across triangles), tests the survivors exactly, keeps the best in *best and
 * shrinks rec's tmax. Returns 1 when the sweep is done (any hit, or a closest hit at t = 0); its
 * record is then retired (tmax -1), so that no node or leaf passes it again. */
int vl_sweep_leaf_tris(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_sweep_query* q, float* rec,
                       int any_hit, vl_sweep_best* best);
int vl_sweep_leaf_boxes(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_sweep_query* q, float* rec,
                        int any_hit, vl_sweep_best* best);

/* The n valid sweeps q down the tree as interleaved walks (sweep_walks.c, VL_QUERY_WALKS at a
 * time), nearest child first, each answer in best[i] (set to no hit before the call) the same as
 * the sweep's walk alone. */
void vl_sweep_trace_walks(const vl_bvh* bvh, const vl_sweep_query* q, uint32_t n, int any_hit, vl_sweep_best* best);

/* Sweeps of one shape: on the C stack; contacts may be NULL. */
vl_status vl_bvh_sweep_on(const vl_bvh* bvh, const void* sweeps, vl_sweep_shape shape, uint32_t count, uint32_t flags,
                          vl_hit* hits, vl_contact* contacts);
vl_status vl_bvh_sweep_on_context(vl_context* ctx, const vl_bvh* bvh, const void* sweeps, vl_sweep_shape shape,
                                  uint32_t count, uint32_t flags, vl_hit* hits, vl_contact* contacts);

#endif
