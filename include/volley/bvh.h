/* volley AABB tree (BVH) over triangles or boxes, queried by batches of rays.
 *
 * A tree is built once (binned SAH) and never written by a query, so any number of threads may
 * query one tree at once. vl_bvh_raycast traces a batch over the tree's 4-wide nodes in one of two
 * ways: as ray streams, where a list of rays meets a node's 4 child boxes at once (SIMD across
 * rays, 4 or 8 per test) and each child hit goes on with the list of its rays; or as single-ray
 * walks, 16 interleaved so that one ray's memory fetches overlap the others' work, each starting
 * where ray streams over the tree's top levels left it. vl_bvh_raycast1 traces one ray.
 *
 * Triangles are double-sided. The ray-triangle test is Moller-Trumbore (with the triangle's
 * normal precomputed) and a barycentric tolerance of VL_BVH_TRIANGLE_EPSILON: a hit is reported
 * when u >= -eps, v >= -eps and u + v <= 1 + eps, so that a ray through a shared edge or vertex
 * hits at least one triangle (it is not watertight in the strict sense; a ray may hit both
 * neighbours of an edge, with equal t). Triangles of zero area, and slivers whose normal is
 * shorter than 2^-20 |v1 - v0| |v2 - v0| (an angle under about 1e-6 rad, where float arithmetic
 * gives noise), are never hit, nor by a ray in a triangle's plane or within about 2^-20 rad of
 * it. Boxes are hit by the slab test; hit.t is the entry t clamped to
 * the ray's tmin (0 when the origin is inside and tmin = 0). A hit's t is always finite.
 *
 * Range of the triangle test (float arithmetic, no rescaling): with L the triangle's longest edge,
 * D the largest distance from the ray's origin to one of its vertices and s = |dir|, a triangle
 * that is not a sliver is hit as above, t accurate to float precision, while L^2 D, L^2 s and
 * L D s all lie between 2^-100 (about 7.9e-31) and 2^120 (about 1.3e36). Outside that range the
 * normal times the distance overflows float or underflows, and the triangle is silently never hit
 * (or hit at a t of 0): legs of 1e18 seen from 512 (L^2 D about 2^129), legs under 2^-64 with
 * s = 1 (L^2 s under 2^-128). Scale such a scene into the range (metres to kilometres). Whatever
 * the range, a float direction cannot aim at a triangle more than about 2^20 L away.
 *
 * Accuracy relative to the ray, anywhere in a large world: the node and primitive tests round only
 * differences of coordinates (a bound or vertex minus the ray's origin), whose error is relative to
 * the difference itself, never to the distance from the world's origin, and the node boxes' margin
 * is 2^-16 of the scene's extent plus one float step (however far the scene lies, it costs what
 * it costs at the origin). Against the exact intersection (in double) of the same float ray with
 * the same float triangle: with s = |dir|, t the hit's distance in units of dir, L the triangle's
 * longest edge and cos the cosine between dir and the triangle's normal, let
 * tau = 2^-17 (s t + L) / cos (a length). A point of the ray that lies inside a triangle by more
 * than tau from each edge, at a t inside [tmin, tmax] by more than tau / s, is always hit (closest,
 * any, every path); one outside an edge by more than tau plus the barycentric tolerance, or outside
 * [tmin, tmax] by more than tau / s, never is; a hit's t is within tau / s of its triangle's exact
 * t; a closest hit is no later than any sure hit (plus the bands). Between the two, either answer
 * may come. Box trees: entry t within 2^-20 of itself. This is checked at 0, +-2^10, +-2^13 and
 * +-2^17 from the origin on soups, a terrain world, real meshes and box trees
 * (tests/test_rays_far.c: no answer needed more than 2^-21 in place of 2^-17). What remains is the
 * input's own rounding: the triangles and rays are floats, spaced 2^-6 apart at 2^17 (2^-13 at
 * 2^10): a mesh with detail finer than that (a 0.15-unit bunny has about 10 distinct positions per
 * axis there) is answered exactly as the float mesh it became, not as the mesh it was in double,
 * and a ray's direction computed as the difference of two far float points carries that spacing.
 * Keep coordinates near the origin of a local frame when such detail matters. */
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
    float node_cost;        /* cost of a node visit relative to a primitive test: > 0 and < FLT_MAX
                             * (FLT_MAX and infinity are refused), default 4 */
} vl_bvh_desc;

/* Shape and cost of a built tree. */
typedef struct vl_bvh_stats {
    uint32_t primitives;
    uint32_t nodes;       /* interior nodes plus leaves */
    uint32_t leaves;
    uint32_t depth;       /* the longest root-to-leaf path, in nodes (a lone leaf has depth 1) */
    double sah_cost;      /* SAH cost of the tree, with the desc's node cost and a primitive cost of 1 */
    size_t bytes;         /* memory the tree holds through the allocator hooks */
    double sah_growth;    /* sah_cost over the sah_cost the tree had when it was built: 1 after a build,
                             raised by refits that stretch the boxes (see vl_bvh_refit_triangles) */
} vl_bvh_stats;

/* The default build settings (see vl_bvh_desc). */
VL_API vl_bvh_desc vl_bvh_default_desc(void);

/* Builds a tree over triangle_count triangles: triangle i has the vertices indices[3i..3i+2] of
 * the vertex array xyz (3 floats per vertex). The tree copies what it needs; xyz and indices may
 * be freed after the call. desc may be NULL (defaults).
 * Errors, checked in this order (the first found is returned): VL_ERR_INVALID_ARGUMENT: NULL xyz,
 * indices or out, or a count of 0; VL_ERR_INVALID_FLAGS: a desc field out of range;
 * VL_ERR_TOO_LARGE: more than 2^30 triangles (before any vertex or index is read);
 * VL_ERR_INVALID_GEOMETRY: a NaN or infinite coordinate or an index past vertex_count;
 * VL_ERR_OUT_OF_MEMORY. *out is written only on VL_OK.
 * exec (volley/tasks.h): NULL, or a context whose job system runs the build: the per-primitive
 * passes run in pieces as tasks; the top levels are split on the calling thread down to ranges of
 * at most max(count / (4 x workers), 4096) primitives, whose subtrees are then built as tasks and
 * joined. The tree is identical, bit for bit, to the one built without a context (the same nodes
 * in the same order, the same primitive order), for any worker count and job system. Memory: a
 * copy of the nodes (up to 64 bytes per primitive) more while it runs; each subtree's task
 * allocates its bin sets through the allocator hooks on the job system's thread (the hooks must be
 * thread-safe, as for queries on several threads; the default ones are). A build takes no caller
 * scratch: VL_ERR_INVALID_ARGUMENT for an exec with scratch. */
VL_API vl_status vl_bvh_build_triangles(const float* xyz, uint32_t vertex_count, const uint32_t* indices,
                                        uint32_t triangle_count, const vl_bvh_desc* desc, vl_bvh** out,
                                        const vl_exec* exec);

/* Builds a tree over count boxes (primitive i is boxes[i]). Infinite bounds are valid.
 * VL_ERR_INVALID_BOUNDS: a NaN bound or min > max; other errors as vl_bvh_build_triangles, in the
 * same order (VL_ERR_INVALID_BOUNDS where that one says VL_ERR_INVALID_GEOMETRY). */
VL_API vl_status vl_bvh_build_boxes(const vl_aabb* boxes, uint32_t count, const vl_bvh_desc* desc, vl_bvh** out,
                                   const vl_exec* exec);

/* Frees the tree; NULL is fine. No query may be running on it. */
VL_API void vl_bvh_destroy(vl_bvh* bvh);

/* Fills *stats. VL_ERR_INVALID_ARGUMENT when bvh or stats is NULL. */
VL_API vl_status vl_bvh_get_stats(const vl_bvh* bvh, vl_bvh_stats* stats);

/* Checks every invariant of the tree (child links, primitive ranges covering each primitive once,
 * boxes nested and enclosing their primitives, leaf sizes, depth). VL_OK when all hold,
 * VL_ERR_INVALID_ARGUMENT for NULL or a broken tree. Debug builds run it after every build. */
VL_API vl_status vl_bvh_validate(const vl_bvh* bvh);

/* Traces count rays as one batch; hits[i] answers rays[i]. flags: VL_QUERY_CLOSEST (0), the
 * nearest hit in [tmin, tmax], or VL_QUERY_ANY, some hit in [tmin, tmax] (a ray stops at the first
 * one found; hit.t, prim, u, v describe that one). A miss is prim = VL_NO_HIT, t = INFINITY,
 * u = v = 0.
 * How a batch runs: small batches (under 4096 rays, or with fewer rays entering the tree's box than
 * one per leaf, counted in one chunk of 128K rays at most: up to about 200K entering rays on a
 * 1.1M-triangle world, at any batch size) trace the top levels of the tree as ray streams and go
 * on as 16 interleaved single-ray walks, 1024 rays at a time;
 * larger ones run as ray streams, 128K rays at a time, whose lists of 4 rays or fewer go on as the
 * interleaved walks. Batches under 8 rays go one ray at a time, as vl_bvh_raycast1.
 * VL_QUERY_GROUP_BY_ORIGIN (may be or'ed with either query) changes only the speed of batches of
 * more than 128K rays: each chunk of 128K takes rays whose origins share a cell of an 8x8x8 grid
 * over the tree's box (then a direction octant) and runs as ray streams, at the price of a
 * counting sort, 2 MB plus 6 bytes per ray more scratch, and hits written out of order. It pays for
 * rays that start on surfaces of a scene larger than the cache and costs elsewhere: when to set it,
 * docs/guide/rays.md.
 * exec (volley/tasks.h):
 * - NULL: the scratch (about 96 KB plus 218 bytes per ray for the walks, 320 KB at most; 96 KB plus
 *   82 bytes per ray for the streams, 10.8 MB at most) comes from the allocator hooks once per
 *   call; when it cannot be allocated the batch goes one ray at a time (the same answers);
 * - exec->scratch: at least vl_bvh_raycast_scratch_size(bvh, count, flags) bytes; the call
 *   allocates nothing, so that threads with their own buffers (or a frame's arena) never reach the
 *   hooks;
 * - exec->context: the batch is cut into blocks of rays whose size depends on count alone (about
 *   count / 64 rays, 512 to 65536, in multiples of 256), each traced in its worker's scratch.
 *   Answers are identical, every bit, for any worker count and job system (and without one);
 *   against the same call without a context, a closest hit can differ only where several
 *   primitives are hit at exactly the same t (the answer may name another of them; t is equal as a
 *   number, though on NEON a box hit from inside, t = 0, may be -0 on one path and +0 on the
 *   other), and an any hit may be another hit of the same ray (hit or miss never differs). The
 *   first call on a context grows its scratch (workers x the scratch of one block); later calls
 *   with batches no larger allocate nothing. VL_QUERY_GROUP_BY_ORIGIN changes nothing there
 *   (blocks are under its 128K rays).
 * VL_QUERY_ANY: whether a ray hits is the same on every path, but which hit is reported (prim, t,
 * u, v) may differ between the batch's paths (streams, walks) and the one-ray path that
 * vl_bvh_raycast1 and the small batches take: each reports the first hit its traversal order
 * meets. VL_QUERY_CLOSEST answers agree on every path (the same primitive, or one at the same t).
 * Thread-safe on a shared tree (each thread with its own scratch or context).
 * Statuses, checked in this order (the first found is returned): VL_ERR_INVALID_ARGUMENT for a
 * NULL bvh, rays or hits (with count > 0) and VL_ERR_INVALID_FLAGS for unknown flag bits, both
 * with nothing written; VL_ERR_INVALID_ARGUMENT for an exec with both a context and scratch, or a
 * scratch that is NULL, misaligned or too small where one is needed (checked before the rays: a
 * bad scratch wins over invalid rays); then VL_ERR_INVALID_QUERY when some rays were invalid (see
 * vl_ray): every valid ray is still answered and each invalid one is a miss, however many are
 * invalid and whatever makes each invalid; else VL_OK. count 0 is VL_OK and does nothing. */
VL_API vl_status vl_bvh_raycast(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                                const vl_exec* exec);

/* Bytes of scratch that vl_bvh_raycast needs for a batch of count rays with these flags, whatever
 * the rays (the larger of the two ways a batch may go); 0 when it needs none (count < 8) and for a
 * NULL bvh or unknown flag bits. */
VL_API size_t vl_bvh_raycast_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags);

/* Traces one ray without a batch (no allocation, no exec): the path game AI calls most. Same
 * answers as vl_bvh_raycast: the same primitive, or one at the same t where several are hit at
 * one distance. flags: VL_QUERY_CLOSEST or VL_QUERY_ANY (VL_QUERY_GROUP_BY_ORIGIN, a hint for
 * batches, is VL_ERR_INVALID_FLAGS here). VL_ERR_INVALID_QUERY (and a miss) for an invalid ray;
 * other statuses as vl_bvh_raycast. */
VL_API vl_status vl_bvh_raycast1(const vl_bvh* bvh, const vl_ray* ray, uint32_t flags, vl_hit* hit);

/* ---- Sphere and box sweeps -----------------------------------------------------------------
 * A sweep moves a sphere (vl_sphere_sweep) or a box (vl_box_sweep) by t * dir for t in [0, tmax]
 * and answers the first t at which it touches a primitive: exact against the triangle (the sphere
 * against the triangle grown by the radius: face, edges, vertices; the box by the 13 separating
 * axes over time) and against boxes (the box rounded by the radius; box-box by 3 axes over time).
 * Triangles are double-sided and closed (touching counts); a triangle of zero area is hit as its
 * edges and vertices. A sweep that starts in contact (or overlapping) answers t = 0.
 * Tolerance, relative to the sweep, never to the distance from the origin: with T the true first
 * contact (of the tree's copy of the triangles: v0, and the edges rounded to float once, which is
 * the caller's triangle wherever an edge's float difference is exact, as between coordinates
 * within a factor 2 of each other, and else off by at most 3 * 2^-24 of that edge), the reported t
 * satisfies T - tol <= t <= T (never later), where tol = VL_SWEEP_TOLERANCE * (S + |dir| T) / |dir|
 * and S is the shape's own size (the radius, or the box's largest half side) plus, against a
 * triangle, the largest side of the triangle's box. The tests run in double on the differences of
 * the primitive's coordinates and the sweep's start, so a 2 cm sphere 5 km from the origin is
 * answered as well as at the origin. Near misses and near hits closer than tol (grazing) may go
 * either way, and so may a contact whose point lies past float range (|centre| + |dir| T beyond
 * FLT_MAX on some axis). The contact point is a float in the caller's coordinates: it carries
 * their rounding too (2^-24 of its coordinates' magnitude).
 * hit: t, prim; u and v are the barycentric coordinates (weights of the second and third
 * vertices) of the contact point on a triangle, 0 for boxes. A miss is prim = VL_NO_HIT,
 * t = INFINITY.
 * Contacts (optional, every hit, closest or any): see vl_contact. At t = 0 the normal is the
 * direction of least separation along the sweep (moving away from a touched surface, its
 * component along dir is removed; deep inside, -dir / |dir|).
 * A sweep is valid when no field is NaN, centre, box and dir are finite, some component of dir is
 * at least FLT_MIN in magnitude (smaller ones count as 0), tmax >= 0 (INFINITY allowed),
 * radius >= 0 (sphere) and box.min <= box.max. */
#define VL_SWEEP_TOLERANCE 9.5367431640625e-7f /* 2^-20 */

/* Sweeps count spheres or boxes (8 walks of the 4-wide tree interleaved, children opened nearest
 * first, so that one walk's memory fetches land while the others work); hits[i] answers
 * sweeps[i], and contacts[i] describes hits[i] (contacts may be NULL). flags: VL_QUERY_CLOSEST or
 * VL_QUERY_ANY. A batch of one is the single sweep's walk. Thread-safe on a shared tree.
 * exec (volley/tasks.h): the sweeps run on the C stack and allocate nothing, with or without a
 * caller's scratch (vl_bvh_sweep_scratch_size is 0; a scratch given is not read). On a context the
 * batch is cut into blocks of sweeps whose size depends on count alone (about count / 64 sweeps,
 * 128 to 4096, in multiples of 64), each swept on its worker. Hits and contacts are identical,
 * every bit, for any worker count and job system (and without one), and to the call without a
 * context made block by block. Against one call over the whole batch without a context: hit or
 * miss did not differ in the tests, but the batch's traversal order decides near ties, so a
 * closest hit may name another primitive at a t within the sweep tolerance, and an any hit may be
 * another hit of the same sweep.
 * VL_OK; VL_ERR_INVALID_QUERY when some sweeps were invalid (each answered as a miss, the rest
 * answered); VL_ERR_INVALID_ARGUMENT for a NULL bvh, sweeps or hits with count > 0, or an exec with
 * both a context and scratch; VL_ERR_INVALID_FLAGS for unknown flag bits (nothing written).
 * count 0 is VL_OK. */
VL_API vl_status vl_bvh_sweep_spheres(const vl_bvh* bvh, const vl_sphere_sweep* sweeps, uint32_t count,
                                      uint32_t flags, vl_hit* hits, vl_contact* contacts, const vl_exec* exec);
VL_API vl_status vl_bvh_sweep_boxes(const vl_bvh* bvh, const vl_box_sweep* sweeps, uint32_t count, uint32_t flags,
                                    vl_hit* hits, vl_contact* contacts, const vl_exec* exec);

/* Bytes of scratch the sweeps need: 0 (they run on the C stack). */
VL_API size_t vl_bvh_sweep_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags);

/* ---- Overlap queries and refit ---------------------------------------------------------------
 *
 * vl_bvh_overlap_boxes and vl_bvh_overlap_spheres append to *out every pair (query index,
 * primitive index) whose query and primitive overlap, tested exactly against the primitive, not
 * its box. Sets are closed: touching counts. Triangles are surfaces (double-sided, no inside): a
 * query within a closed mesh that touches none of its triangles overlaps nothing.
 *
 * Tests and their float tolerance, relative to the pair's own sizes and never to the distance from
 * the origin (tol = VL_BVH_OVERLAP_TOLERANCE; s = the largest side of the triangle's box). Every
 * test subtracts the query's and the triangle's coordinates before anything else (exact for
 * coordinates within a factor 2 of each other, else rounded at their difference's size), so a
 * 6 cm box 4 km from the origin is answered as well as at the origin:
 * - box-triangle: the separating axis test on 13 axes (the box's 3, the triangle's normal, the 9
 *   cross products of edges and box axes). A pair that touches or overlaps is always reported; a
 *   pair is reported only when, along each of the box's axes, the gap is at most 2^-21 s, and along
 *   each of the other 10 axes L the gap between the projections is at most tol * s * |L|_1;
 * - sphere-triangle: the distance from the center to the closest point of the triangle, reported
 *   when it is at most radius + tol * (radius + s) (touching or overlapping pairs always are);
 * - box-box (box trees): closed intervals on the 3 axes, exact, infinite bounds included;
 * - sphere-box (box trees): the distance from the center to the box, at most radius + tol * radius.
 * The triangle is the tree's copy (v0, and the edges rounded to float once: the caller's triangle
 * wherever an edge's float difference is exact, else off by at most 3 * 2^-24 of that edge).
 * The slack follows the triangle's size: a query much smaller than a triangle it nearly touches
 * (a 1 cm sphere by a 100 m ground triangle: tol * s is 0.4 mm) is answered within the triangle's
 * tolerance, not its own; far from the origin the input's own rounding is the other limit (at
 * 2^17 a float's spacing is 2^-6, 1.6 cm: the scene the tree sees is the rounded one).
 * Zero-area triangles (segments, points) are tested as the segment or point they are. Answers are
 * exact as stated for coordinates and radii up to 2^30 in magnitude (float products stay finite);
 * beyond that overflow may add or drop pairs, never crash. At the other end, a gap under 2^-60
 * (about 8.7e-19) may count as touching whatever the scale: float squares of such distances
 * underflow.
 *
 * A box query is valid when no bound is NaN and min <= max on every axis (infinite bounds are
 * valid: a half-space); a sphere query when its center is finite and its radius finite and >= 0.
 * Pairs are appended in no particular order (the traversal's), each pair once. */

/* Relative tolerance of the overlap tests (2^-18). */
#define VL_BVH_OVERLAP_TOLERANCE 3.814697265625e-6f

/* Overlap queries: pairs (i, primitive) for every queries[i] overlapping a primitive are appended
 * to *out (grown through the allocator hooks; out->count is where they start). A batch runs with
 * depth-first move-to-front traversal of the 4-wide tree, lists of 2 or fewer going on as 8
 * interleaved single-query walks; a batch of one is the single query's walk.
 * exec (volley/tasks.h):
 * - NULL: batches of 128 queries with their scratch on the C stack (about 47 KB: lists, records
 *   and the walks): the call allocates nothing except when out must grow;
 * - exec->scratch: batches of 4096 queries on at least vl_bvh_overlap_scratch_size(bvh, count)
 *   bytes (calls of more than one batch also order their queries spatially, 16384 at a time);
 * - exec->context: the batch is cut into blocks of queries as the sweeps are, each block run on
 *   its worker's scratch and appending to its own pair list kept in the context; after the job
 *   system's finish the blocks' lists are appended to *out in block order. So the pairs are the
 *   set of the other forms, in this order: by block, and within a block in the order of the
 *   caller's-scratch form over that block's queries (pair.a is the index in the whole batch). That
 *   list is identical for any worker count and job system. The first calls on a context grow its
 *   scratch and its lists (through the hooks, on the job system's threads for the lists: the hooks
 *   must be thread-safe); a later call with the same tree and batch allocates nothing but out's
 *   growth.
 * VL_OK; VL_ERR_INVALID_QUERY when some queries were invalid: they get no pair, every valid one is
 * answered; VL_ERR_INVALID_ARGUMENT for a NULL bvh or out, an inconsistent *out (count >
 * capacity, or NULL pairs with a capacity), NULL queries with count > 0, an exec with both a
 * context and scratch, or a scratch that is NULL, misaligned or too small where one is needed
 * (nothing written); VL_ERR_OUT_OF_MEMORY when out (or a context's lists or scratch) could not grow
 * (out->count is then as it was); VL_ERR_TOO_LARGE when the pairs would pass 2^32 - 1 (out->count
 * as it was). count 0 is VL_OK. Thread-safe on a shared tree (each thread with its own out). */
VL_API vl_status vl_bvh_overlap_boxes(const vl_bvh* bvh, const vl_aabb* queries, uint32_t count, vl_pair_buffer* out,
                                      const vl_exec* exec);
VL_API vl_status vl_bvh_overlap_spheres(const vl_bvh* bvh, const vl_sphere* queries, uint32_t count,
                                        vl_pair_buffer* out, const vl_exec* exec);

/* Bytes of scratch that the overlaps need on the caller's scratch for a batch of count queries
 * (boxes or spheres alike): 96 bytes a query for up to 4096 queries plus 1024, and 20 bytes a
 * query more (up to 16384) for larger batches; 0 for a NULL bvh or count 0. */
VL_API size_t vl_bvh_overlap_scratch_size(const vl_bvh* bvh, uint32_t count);

/* Refit: the same tree (topology, leaves, primitive order) over moved primitives. xyz holds the
 * tree's vertex_count vertices at their new places, the triangles' indices those of the build.
 * Updates everything the queries read (triangles, node boxes of the binary and 4-wide trees, their
 * margin), so that every query answers as on a fresh build of the new data. No allocation; a
 * fraction of a build's time (docs/measurements/tree.md). Not thread-safe:
 * no query may run on the tree meanwhile.
 * When to rebuild: refitting keeps the old grouping of primitives, so boxes stretch as primitives
 * move apart and queries slow; vl_bvh_stats.sah_growth tells by how much (the SAH cost now over
 * the one at build time). Rebuild when it passes about 1.5 (queries then visit about that many
 * more nodes), or at once after motion that scrambles the scene (teleports, explosions).
 * VL_ERR_INVALID_ARGUMENT: NULL bvh or xyz, a tree of boxes, or an exec with scratch (a refit
 * allocates nothing and takes none); VL_ERR_INVALID_GEOMETRY: a NaN or infinite coordinate. On any
 * error the tree is unchanged.
 * exec: NULL, or a context whose job system runs the refit: the input is checked in blocks as
 * tasks, then the subtrees at depth 6 (up to 64) are refit as tasks and the nodes above them on the
 * calling thread; the margin (triangles) and the 4-wide nodes follow in blocks of nodes as tasks.
 * The tree is identical, every byte of its nodes, node4s and primitives, to the one refit without
 * a context, for any worker count and job system. Nothing is allocated. */
VL_API vl_status vl_bvh_refit_triangles(vl_bvh* bvh, const float* xyz, const vl_exec* exec);

/* Refit of a tree of boxes: boxes[i] is primitive i's new box (as many as the build had).
 * VL_ERR_INVALID_ARGUMENT: NULL bvh or boxes, a tree of triangles, or an exec with scratch;
 * VL_ERR_INVALID_BOUNDS: a NaN bound or min > max (the tree unchanged). exec as
 * vl_bvh_refit_triangles. */
VL_API vl_status vl_bvh_refit_boxes(vl_bvh* bvh, const vl_aabb* boxes, const vl_exec* exec);

/* ---- Closest points ------------------------------------------------------------------------
 * vl_bvh_closest_points answers, for each query point, the nearest point of the tree's primitives
 * (triangles, double-sided surfaces: a point inside a closed mesh gets the nearest point of its
 * surface; or boxes, solid: a point inside a box is at distance 0 from it) if one lies within the
 * query's max_distance. Distances are Euclidean, computed in double on coordinate differences (the
 * query's point minus the triangle's first vertex, then the triangle's float edges; the point
 * minus the box's bounds), so a query 5 km from the origin is answered as well as at the origin.
 * The closest point on a triangle: its projection on the plane when that lies inside, else the
 * nearest point of its three edges (the Voronoi regions of Ericson, Real-Time Collision Detection
 * 5.1.5, decided with the normal in double so that thin triangles stay exact); a triangle of zero
 * area (or one whose angle is under about 2^-20 rad) is tested as its edges: the segment or point
 * it is.
 * Tolerance, relative to the query, never to the distance from the origin: with D the exact
 * distance from the point to the nearest of the tree's triangles (its copy: v0, and the edges
 * rounded to float once, which is the caller's triangle wherever an edge's float difference is
 * exact, as between coordinates within a factor 2 of each other, else off by at most 3 * 2^-24 of
 * that edge) and s the largest side of the box of that triangle or of the reported one,
 * tol = VL_CLOSEST_TOLERANCE * (D + s): the reported primitive's exact distance, and the reported
 * distance, are within tol of D (box trees: s = 0, and then the reported distance is D rounded
 * to float). Ties (points equidistant from several primitives, up to tol): any of them is
 * answered. A primitive counts when its distance is at most max_distance; one within tol of
 * max_distance may count or not. max_distance 0 answers only primitives the point touches (a
 * point on a triangle's face, up to rounding, may count as not touching: give such points a small
 * max_distance); max_distance INFINITY answers every query of a tree. A primitive at an infinite
 * distance (a box at infinity) is never an answer.
 * The answer (vl_closest_hit): prim, the distance (a float, rounded from D's double), the closest
 * point (a float in the caller's coordinates: it carries their rounding too, 2^-24 of its
 * coordinates' magnitude, and that of the arithmetic that finds it, a few 2^-53 of the query's and
 * the primitive's coordinates) and, on a triangle, its barycentric u, v (weights of the second and
 * third vertices; on an edge of a triangle of zero area, those of the edge's ends). None:
 * prim = VL_NO_HIT, distance INFINITY, point and u, v zero.
 * Range: exact as stated for any finite input; a query whose nearest primitive lies farther than
 * about 2^64 (where float squares overflow) is still answered exactly, but visits the whole tree. */
#define VL_CLOSEST_TOLERANCE 9.5367431640625e-7f /* 2^-20 */

/* Closest points for count queries; answers[i] answers queries[i]. Each query walks the 4-wide
 * tree nearest child first (children keyed by their box's distance), its search radius shrinking
 * to its best distance so far. On a tree whose nodes and primitives take more than 8 MB a batch
 * interleaves 8 walks, so that one walk's memory fetches land while the others work; on a smaller
 * one, which the caches hold, the walks run one after another (measured faster there). A batch of
 * one is the single query's walk. Thread-safe on a shared tree.
 * exec (volley/tasks.h): the queries run on the C stack (about 28 KB for an interleaved batch,
 * 6 KB otherwise) and allocate nothing, with or without a caller's scratch
 * (vl_bvh_closest_scratch_size is 0; a scratch given is not read). On a context
 * the batch is cut into blocks of queries whose size depends on count alone (as the sweeps'), each
 * answered on its worker. Each query's answer is its walk's alone: identical, every bit, in a
 * batch, one at a time, on caller scratch and on a context with any worker count and job system.
 * Statuses, checked in this order: VL_ERR_INVALID_ARGUMENT for a NULL bvh, queries or answers with
 * count > 0, or an exec with both a context and scratch (nothing written); then
 * VL_ERR_INVALID_QUERY when some queries were invalid (see vl_point_query: each is answered as
 * none, every valid one is answered); else VL_OK. count 0 is VL_OK and does nothing. */
VL_API vl_status vl_bvh_closest_points(const vl_bvh* bvh, const vl_point_query* queries, uint32_t count,
                                       vl_closest_hit* answers, const vl_exec* exec);

/* Bytes of scratch the closest-point queries need: 0 (they run on the C stack). */
VL_API size_t vl_bvh_closest_scratch_size(const vl_bvh* bvh, uint32_t count);

/* ---- Capsule overlaps and sweeps -----------------------------------------------------------
 * A capsule (vl_capsule) is the set of points within radius of the segment from a to b, in any
 * orientation. Its own size is radius + h, h = |b - a| / 2 (half the segment's length). A capsule
 * of zero length (a == b) is the sphere it is and gets the sphere queries' answers exactly: the
 * pairs of vl_bvh_overlap_spheres, every bit of the hits and contacts of vl_bvh_sweep_spheres. One
 * of zero radius is its segment. Triangles are double-sided and closed (touching counts), a
 * triangle of zero area is its edges; boxes (box trees) are closed, infinite bounds included. Both
 * calls take their distances in double on the differences of the capsule's ends and the
 * primitive's coordinates (the triangle's first vertex, the box's bounds), so a 2 cm capsule 5 km
 * from the origin is answered as well as at the origin; the triangle is the tree's copy, as for
 * the other queries. A capsule is valid when a, b and radius are finite and radius >= 0.
 *
 * vl_bvh_overlap_capsules appends the pairs (i, primitive) whose segment lies within
 * radius + VL_BVH_OVERLAP_TOLERANCE * (radius + h + s) of the primitive (s: the largest side of a
 * triangle's box, 0 for a box): touching or overlapping pairs are always reported, pairs apart by
 * more than that never. The distance is that of the closest points of segment and triangle
 * (Ericson, Real-Time Collision Detection 5.1.9 and 5.1.10: zero where the segment crosses the
 * face, else the least of its ends' distances to the face and its distances to the edges) or of
 * segment and box, in double (a few roundings of 2^-53 of the pair's own size). A float test
 * across a leaf's triangles takes or drops the pairs that lie clearly inside or outside that reach
 * and leaves the others to the test in double, so that every form (batch, single, caller scratch,
 * context) reports the same pairs: those of the test in double. Answers are exact as stated for
 * coordinates and radii up to 2^30 in magnitude; beyond that overflow may add or drop pairs, never
 * crash. Forms, exec, scratch, order and statuses are those of vl_bvh_overlap_boxes (a capsule's
 * record is a sphere's size: vl_bvh_overlap_scratch_size covers capsules). */
VL_API vl_status vl_bvh_overlap_capsules(const vl_bvh* bvh, const vl_capsule* queries, uint32_t count,
                                         vl_pair_buffer* out, const vl_exec* exec);

/* vl_bvh_sweep_capsules moves each capsule by t * dir for t in [0, tmax] and answers the first t at
 * which its segment comes within radius of a primitive, exact in double (Ericson 5.5's swept
 * volumes): the segment's ends as spheres (the sphere sweeps' faces, edges and vertices), the
 * primitive's edges against the segment's body (their lines at distance radius with the closest
 * points inside both: the side of the volume the edge sweeps back along the segment), and its
 * vertices against the body (a cylinder of the radius about the segment); at the first contact the
 * closest points are one of those pairs. A sweep that starts in contact (or overlapping) answers
 * t = 0. Tolerance as for the sphere and box sweeps: T - tol <= t <= T, tol =
 * VL_SWEEP_TOLERANCE * (S + |dir| T) / |dir| with S = radius + h plus, against a triangle, the
 * largest side of its box; near misses and near hits closer than tol (grazing) may go either way,
 * and so may a contact whose point lies past float range. hit: t, prim, and for a triangle u and v,
 * the barycentric coordinates of the contact point. Contacts (optional): the primitive's point
 * closest to the segment at the reported t, and the unit normal from it toward the segment's
 * closest point, turned to face against dir; at t = 0 the sweeps' rule (moving away from a touched
 * surface its component along dir is removed; deep inside, -dir / |dir|). A sweep is valid when
 * its capsule is, dir is finite with some component at least FLT_MIN in magnitude (smaller ones
 * count as 0) and tmax >= 0 (INFINITY allowed). Flags (VL_QUERY_CLOSEST, VL_QUERY_ANY), forms,
 * exec and statuses are those of vl_bvh_sweep_spheres, and so is how answers on a context compare
 * with the plain form's (vl_bvh_sweep_scratch_size is 0: the sweeps run on the C stack). */
VL_API vl_status vl_bvh_sweep_capsules(const vl_bvh* bvh, const vl_capsule_sweep* sweeps, uint32_t count,
                                       uint32_t flags, vl_hit* hits, vl_contact* contacts, const vl_exec* exec);

#ifdef __cplusplus
}
#endif

#endif
