/* The tree's memory layout, shared by the builder, the validator and the traversals. */
#ifndef VL_BVH_TREE_TREE_H
#define VL_BVH_TREE_TREE_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <volley/bvh.h>

#include "compiler.h"

/* Deepest tree the builder makes; traversal stacks are this long, on the C stack. Past
 * VL_BVH_FORCE_MEDIAN_DEPTH the builder halves ranges by index, which ends any range of up to
 * 2^30 primitives within 30 more levels. */
#define VL_BVH_MAX_DEPTH 128u
#define VL_BVH_FORCE_MEDIAN_DEPTH 96u

/* A compact binary node, 32 bytes, two per cache line. Interior: count == 0, the children are
 * nodes `index` and `index + 1`, axis is the split axis (left child holds the lower centroids).
 * Leaf: count primitives starting at slot `index` of the leaf-ordered primitive array. */
typedef struct vl_bvh_node {
    float min[3];
    uint32_t index;
    float max[3];
    uint32_t meta; /* count << 2 | axis */
} vl_bvh_node;

static inline uint32_t vl_bvh_node_count(const vl_bvh_node* n) { return n->meta >> 2; }
static inline uint32_t vl_bvh_node_axis(const vl_bvh_node* n) { return n->meta & 3u; }

/* A triangle ready for the ray test (13 floats, in the order of a leaf's rows): prim is the
 * caller's index; v0, the edges e1 = v1 - v0 and e2n = v0 - v2, the geometric normal
 * ng = (v1 - v0) x (v2 - v0) (zero for a degenerate triangle, which is never hit). */
typedef struct vl_bvh_tri {
    uint32_t prim;
    float v0[3], e1[3], e2n[3], ng[3];
} vl_bvh_tri;

#define VL_BVH_TRI_FLOATS 13u
_Static_assert(sizeof(vl_bvh_tri) == VL_BVH_TRI_FLOATS * sizeof(float), "vl_bvh_tri is 13 packed floats");

/* The tree's triangles are stored leaf by leaf in rows: the leaf of `count` triangles from slot s
 * takes the 13 count floats from tris + 13 s, row k (count floats from tris + 13 s + k count)
 * holding float k of each of its triangles (prim, then v0, e1, e2n, ng as x y z), so that a leaf
 * test loads a component of VL_W triangles at once, not a gather. The overlap tests read the
 * first VL_BVH_OVERLAP_ROWS rows (prim, v0, e1, e2n) and never the normal: they come first, so
 * that the lines of a leaf fetched for them are the fewest. A wide load of a row reads on past it
 * (lanes past the leaf's end, dropped): the array ends with VL_BVH_TRI_PAD zero floats, so that
 * no such load leaves it. */
#define VL_BVH_TRI_PAD 8u
#define VL_BVH_OVERLAP_ROWS 10u

static inline size_t vl_bvh_tri_floats(uint32_t prims) {
    return VL_BVH_TRI_FLOATS * (size_t)prims + VL_BVH_TRI_PAD;
}

/* Triangle i of the leaf of `count` whose rows start at rows, read or written. */
static inline void vl_bvh_tri_get(const float* rows, uint32_t count, uint32_t i, vl_bvh_tri* tri) {
    float f[VL_BVH_TRI_FLOATS];
    for (uint32_t k = 0; k < VL_BVH_TRI_FLOATS; k++) f[k] = rows[k * count + i];
    memcpy(tri, f, sizeof f);
}

/* Prepares triangle (p0, p1, p2). A triangle whose normal is shorter than 2^-20 |e1| |e2| (zero
 * area, or a sliver with an angle under about 1e-6 rad, where the float test gives noise) gets a
 * zero normal and is never hit. */
static inline void vl_bvh_tri_setup(vl_bvh_tri* tri, const float p0[3], const float p1[3], const float p2[3],
                                    uint32_t prim) {
    float e2[3];
    for (int a = 0; a < 3; a++) {
        tri->v0[a] = p0[a];
        tri->e1[a] = p1[a] - p0[a];
        e2[a] = p2[a] - p0[a];
        tri->e2n[a] = -e2[a];
    }
    const float* e1 = tri->e1;
    tri->ng[0] = e1[1] * e2[2] - e1[2] * e2[1];
    tri->ng[1] = e1[2] * e2[0] - e1[0] * e2[2];
    tri->ng[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double n2 = 0, a2 = 0, b2 = 0;
    for (int a = 0; a < 3; a++) {
        n2 += (double)tri->ng[a] * tri->ng[a];
        a2 += (double)e1[a] * e1[a];
        b2 += (double)e2[a] * e2[a];
    }
    if (!(n2 > a2 * b2 * 0x1p-40)) tri->ng[0] = tri->ng[1] = tri->ng[2] = 0.0f;
    tri->prim = prim;
}

/* Triangle i's geometry rows (every row but prim) written, as refit rewrites them. */
static inline void vl_bvh_tri_put_geometry(float* rows, uint32_t count, uint32_t i, const vl_bvh_tri* tri) {
    float f[VL_BVH_TRI_FLOATS];
    memcpy(f, tri, sizeof f);
    for (uint32_t k = 1; k < VL_BVH_TRI_FLOATS; k++) rows[k * count + i] = f[k];
}

static inline void vl_bvh_tri_put(float* rows, uint32_t count, uint32_t i, const vl_bvh_tri* tri) {
    memcpy(&rows[i], &tri->prim, sizeof tri->prim);
    vl_bvh_tri_put_geometry(rows, count, i, tri);
}

/* The caller's index of triangle i of the leaf whose rows start at rows (its first row). */
static inline uint32_t vl_bvh_leaf_prim(const float* rows, uint32_t i) {
    uint32_t prim;
    memcpy(&prim, &rows[i], sizeof prim);
    return prim;
}

/* The row of v0 x of the leaf of `count` whose rows start at rows: its 12 rows of geometry (v0,
 * e1, e2n, ng as x y z) follow from there, count floats apart. */
static inline const float* vl_bvh_leaf_geometry(const float* rows, uint32_t count) { return rows + count; }

/* A box primitive with the caller's index. */
typedef struct vl_bvh_box {
    float min[3];
    uint32_t prim;
    float max[3];
    uint32_t pad;
} vl_bvh_box;

/* A 4-wide node for the single-ray traversal, 128 bytes, collapsed from the binary tree: the
 * boxes of up to 4 children in SoA form (bounds[0..2] min x y z, bounds[3..5] max x y z, lane =
 * child). Child i: an interior node4 (count[i] == 0, child[i] its index), a leaf (count[i]
 * primitives from slot child[i]) or empty (child[i] == VL_BVH_EMPTY, box at +infinity on every
 * axis, which no ray reaches because tmax is at most FLT_MAX). */
typedef struct vl_bvh_node4 {
    float bounds[6][4];
    uint32_t child[4];
    uint32_t count[4];
} vl_bvh_node4;

#define VL_BVH_EMPTY 0xFFFFFFFFu

typedef enum vl_bvh_kind { VL_BVH_TRIANGLES = 1, VL_BVH_BOXES = 2 } vl_bvh_kind;

struct vl_bvh {
    vl_bvh_node* nodes; /* nodes[0] is the root */
    uint32_t node_count, node_capacity;
    uint32_t prim_count;
    uint32_t kind;
    uint32_t depth;
    uint32_t max_leaf_size;
    float* tris;        /* kind == VL_BVH_TRIANGLES: in rows, vl_bvh_tri_floats(prim_count) floats */
    vl_bvh_box* boxes;  /* kind == VL_BVH_BOXES: prim_count, leaf order */
    vl_bvh_node4* wide; /* the same tree with 4-wide nodes, wide[0] the root */
    uint32_t wide_count, wide_capacity;
    uint32_t* wide_of;  /* per binary node: the node4 that has the same children, or VL_BVH_EMPTY */
    float pad;          /* how far node boxes were grown past the triangles' bounds (0 for boxes) */
    vl_bvh_desc desc;
    uint32_t* corners;     /* kind == VL_BVH_TRIANGLES: 3 vertex indices per slot, leaf order (refit) */
    uint32_t vertex_count; /* kind == VL_BVH_TRIANGLES: the build's vertex count (refit) */
    double build_sah;      /* vl_bvh_stats.sah_cost right after the build (sah_growth) */
};

/* The margin of node boxes over triangles whose vertices span [lo, hi] (build, refit): relative
 * to the scene's extent, not to its distance from the origin. */
float vl_bvh_triangle_pad(const float lo[3], const float hi[3]);

/* A triangle tree's node bound grown by the margin: pad outward, then one float step more, so that
 * the growth survives rounding however far from the origin the bound lies (where pad may be under
 * half a float step of the bound). */
static inline float vl_bvh_grow_min(float x, float pad) { return nextafterf(x - pad, -INFINITY); }
static inline float vl_bvh_grow_max(float x, float pad) { return nextafterf(x + pad, INFINITY); }

/* The rows of the leaf whose triangles start at slot `first`. */
static inline float* vl_bvh_leaf_rows(const vl_bvh* bvh, uint32_t first) {
    return bvh->tris + VL_BVH_TRI_FLOATS * (size_t)first;
}

/* Asks for the memory of child `child` (count primitives; 0: a node4) ahead of its test: the
 * node4's two lines, or the lines of the leaf's boxes or of its first `rows` rows (the ones its
 * test reads), up to 512 bytes. Inlined always: gcc 12 deletes a call to a function that only
 * prefetches (its modref pass finds no side effect), and the walks then fetch nothing ahead. */
VL_INLINE void vl_bvh_prefetch_child(const vl_bvh* bvh, uint32_t child,
                                                                        uint32_t count, uint32_t rows) {
    uintptr_t p = (uintptr_t)&bvh->wide[child];
    size_t bytes = sizeof(vl_bvh_node4);
    if (count && bvh->kind == VL_BVH_TRIANGLES)
        p = (uintptr_t)vl_bvh_leaf_rows(bvh, child), bytes = sizeof(float) * rows * count;
    else if (count)
        p = (uintptr_t)(bvh->boxes + child), bytes = sizeof(vl_bvh_box) * count;
    if (bytes > 512) bytes = 512;
    for (uintptr_t line = p & ~(uintptr_t)63; line < p + bytes; line += 64) VL_PREFETCH((const void*)line);
}

/* node4 slots the collapse may need: one per interior binary node (at least one). */
static inline uint32_t vl_bvh_wide_bound(const vl_bvh* bvh) {
    uint32_t interior = (bvh->node_count - 1) / 2;
    return interior ? interior : 1;
}

/* Collapses the binary tree into tree->wide (and wide_of); VL_ERR_OUT_OF_MEMORY leaves both NULL. */
vl_status vl_bvh_build_wide(vl_bvh* bvh);

/* Bytes held by the tree (the struct, nodes, primitives). */
size_t vl_bvh_bytes(const vl_bvh* bvh);

/* vl_bvh_validate without the argument check (the builder calls it in debug builds). */
vl_status vl_bvh_check(const vl_bvh* bvh);

/* The context a build or refit runs on: NULL for the calling thread; *ok false for an exec with
 * scratch (they take none) or with both. */
vl_context* vl_bvh_exec_context(const vl_exec* exec, bool* ok);

#endif
