/* The builder's entry points: input validation, the scratch, leaf-ordered primitives, the node
 * boxes' margin; the binned SAH itself is build_sah.c. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "bvh/tree/build_sah.h"
#include "compiler.h"
#include "core/alloc.h"
#include "core/exec.h"
#include "core/valid.h"

#define VL_BVH_MAX_PRIMS (1u << 30)

vl_bvh_desc vl_bvh_default_desc(void) {
    vl_bvh_desc d;
    d.max_leaf_size = 8;
    d.sah_bins = 16;
    d.node_cost = 4.0f;
    return d;
}

static float clamp_inf(float x) { return x > FLT_MAX ? FLT_MAX : (x < -FLT_MAX ? -FLT_MAX : x); }

static void put_box(vl_build* b, uint32_t i, const float mn[3], const float mx[3]) {
    float* rec = b->rec + 8 * (size_t)i;
    for (int a = 0; a < 3; a++) {
        rec[a] = clamp_inf(mn[a]);
        rec[4 + a] = -clamp_inf(mx[a]);
    }
    rec[3] = INFINITY; /* the bins' count lane (build_sah.h) */
    rec[7] = 0.0f;
}

/* Frees the scratch (the records live in the tree's primitive array). */
static void build_free(vl_build* b, uint32_t n) {
    vl_mem_free(b->idx, sizeof(uint32_t) * (size_t)n);
    vl_mem_free(b->tmp, sizeof(uint32_t) * (size_t)n);
    vl_mem_free(b->nodes, sizeof(vl_bvh_node) * 2 * (size_t)n);
    b->idx = b->tmp = NULL;
    b->nodes = NULL;
}

static vl_status build_fail(vl_build* b, uint32_t n, vl_bvh* tree) {
    build_free(b, n);
    vl_bvh_destroy(tree);
    return VL_ERR_OUT_OF_MEMORY;
}

static vl_status check_desc(const vl_bvh_desc* desc) {
    if (desc->max_leaf_size < 1 || desc->max_leaf_size > VL_BVH_MAX_LEAF_SIZE) return VL_ERR_INVALID_FLAGS;
    if (desc->sah_bins < 4 || desc->sah_bins > VL_BVH_MAX_BINS) return VL_ERR_INVALID_FLAGS;
    if (!(desc->node_cost > 0.0f) || !(desc->node_cost < FLT_MAX)) return VL_ERR_INVALID_FLAGS;
    return VL_OK;
}

/* Allocates the tree shell, its leaf-ordered primitive array and the scratch. The records live in
 * the primitive array until the primitives are written over them (a triangle takes 52 bytes, a box
 * 32, a record 32), which saves touching fresh memory for them. */
static vl_status build_begin(vl_build* b, uint32_t n, const vl_bvh_desc* desc, vl_bvh_kind kind, vl_bvh** tree) {
    memset(b, 0, sizeof *b);
    b->bins = desc->sah_bins;
    b->max_leaf = desc->max_leaf_size;
    b->node_cost = desc->node_cost;
    vl_bvh* t = vl_mem_calloc(sizeof(vl_bvh));
    if (!t) return VL_ERR_OUT_OF_MEMORY;
    t->desc = *desc;
    t->prim_count = n;
    t->max_leaf_size = desc->max_leaf_size;
    t->kind = kind;
    if (kind == VL_BVH_TRIANGLES)
        b->rec = t->tris = vl_mem_alloc(sizeof(float) * vl_bvh_tri_floats(n));
    else
        b->rec = (float*)(t->boxes = vl_mem_alloc(sizeof(vl_bvh_box) * (size_t)n));
    b->idx = vl_mem_alloc(sizeof(uint32_t) * (size_t)n);
    b->tmp = vl_mem_alloc(sizeof(uint32_t) * (size_t)n);
    b->nodes = vl_mem_alloc(sizeof(vl_bvh_node) * 2 * (size_t)n);
    if (!b->rec || !b->idx || !b->tmp || !b->nodes) return build_fail(b, n, t);
    *tree = t;
    return VL_OK;
}

/* A hit within the barycentric tolerance may lie a little outside a triangle's box: grow every
 * node box by a margin far above that, relative to the scene's extent. The node and triangle tests
 * round differences of coordinates (bound - origin, vertex - origin), whose error is relative to
 * the difference itself, so nothing here depends on how far the scene lies from the origin; the
 * one float step that vl_bvh_grow_min / _max add on top keeps the margin where it would round
 * away (2^-16 of a scene under 512 units wide at 2^17). */
float vl_bvh_triangle_pad(const float lo[3], const float hi[3]) {
    float extent = 0.0f;
    for (int a = 0; a < 3; a++) extent = fmaxf(extent, hi[a] - lo[a]);
    return extent * (16.0f * VL_BVH_TRIANGLE_EPSILON) + 1e-30f;
}

/* The SAH cost that a refit's sah_growth compares the tree's with. */
static void set_build_sah(vl_bvh* tree) {
    vl_bvh_stats st;
    tree->build_sah = 0.0;
    if (vl_bvh_get_stats(tree, &st) == VL_OK) tree->build_sah = st.sah_cost;
}

/* The passes around the SAH pass (input checks, records in, primitives out, the nodes' margin) are
 * cut into up to VL_BUILD_PIECES pieces of at least VL_BUILD_PIECE_MIN items, run through the
 * context's job system (in turn without one); each piece writes its own items only. */
#define VL_BUILD_PIECES 64u
#define VL_BUILD_PIECE_MIN 8192u

typedef struct build_pass {
    vl_build* b;
    vl_bvh* tree;
    const float* xyz;
    const uint32_t* indices;
    const vl_aabb* boxes;
    uint32_t vertex_count;
    uint32_t count, piece; /* items of the pass, items per piece */
    float lo[VL_BUILD_PIECES][3], hi[VL_BUILD_PIECES][3]; /* per piece: bounds of its triangles */
    unsigned char bad[VL_BUILD_PIECES];                   /* per piece: an input check failed */
    vl_bvh_node* nodes;                                   /* the margin's destination */
    float pad;
} build_pass;

static void pass_run(const vl_context* ctx, build_pass* p, uint32_t count, vl_task_fn* fn) {
    uint32_t piece = (count + VL_BUILD_PIECES - 1) / VL_BUILD_PIECES;
    p->count = count;
    p->piece = piece > VL_BUILD_PIECE_MIN ? piece : VL_BUILD_PIECE_MIN;
    const uint32_t pieces = (uint32_t)(((uint64_t)count + p->piece - 1) / p->piece);
    if (ctx)
        vl_tasks_run(ctx, fn, pieces, 1, p);
    else
        fn(0, pieces, 0, p);
}

/* Runs a check pass; whether every piece passed. */
static int pass_ok(const vl_context* ctx, build_pass* p, uint32_t count, vl_task_fn* fn) {
    memset(p->bad, 0, sizeof p->bad);
    pass_run(ctx, p, count, fn);
    for (uint32_t k = 0; k < VL_BUILD_PIECES; k++)
        if (p->bad[k]) return 0;
    return 1;
}

/* Vertices with a coordinate that is not finite (items: vertices). */
static void pass_check_vertices(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        p->bad[k] = !vl_coords_finite(p->xyz, 3 * (size_t)i0, 3 * (size_t)i1);
    }
}

/* Corner indices past the vertices (items: triangles). */
static void pass_check_indices(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        for (size_t i = 3 * (size_t)i0; i < 3 * (size_t)i1; i++)
            if (p->indices[i] >= p->vertex_count) p->bad[k] = 1;
    }
}

/* NaN or inverted boxes (items: boxes). */
static void pass_check_boxes(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        p->bad[k] = !vl_boxes_valid(p->boxes, i0, i1);
    }
}

/* Triangles' records, the identity order, and each piece's bounds. */
static void pass_triangle_records(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    const float* xyz = p->xyz;
    const uint32_t* indices = p->indices;
    for (uint32_t k = start; k < end; k++) {
        float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        for (uint32_t i = i0; i < i1; i++) {
            const float* v[3] = {xyz + 3 * (size_t)indices[3 * (size_t)i],
                                 xyz + 3 * (size_t)indices[3 * (size_t)i + 1],
                                 xyz + 3 * (size_t)indices[3 * (size_t)i + 2]};
            float mn[3], mx[3];
            for (int a = 0; a < 3; a++) { /* no NaN here: plain compares, which inline (fminf is a call) */
                float x = v[0][a], y = v[1][a], z = v[2][a];
                mn[a] = x < y ? (x < z ? x : z) : (y < z ? y : z);
                mx[a] = x > y ? (x > z ? x : z) : (y > z ? y : z);
                lo[a] = mn[a] < lo[a] ? mn[a] : lo[a];
                hi[a] = mx[a] > hi[a] ? mx[a] : hi[a];
            }
            put_box(p->b, i, mn, mx);
            p->b->idx[i] = i;
        }
        memcpy(p->lo[k], lo, sizeof lo);
        memcpy(p->hi[k], hi, sizeof hi);
    }
}

/* Each leaf's triangles into its rows (items: nodes). */
static void pass_triangle_leaves(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    const vl_build* b = p->b;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        for (uint32_t i = i0; i < i1; i++) {
            const uint32_t first = b->nodes[i].index, count = vl_bvh_node_count(&b->nodes[i]);
            for (uint32_t j = 0; j < count; j++) {
                const uint32_t prim = b->idx[first + j], *corner = p->indices + 3 * (size_t)prim;
                vl_bvh_tri tri;
                vl_bvh_tri_setup(&tri, p->xyz + 3 * (size_t)corner[0], p->xyz + 3 * (size_t)corner[1],
                                 p->xyz + 3 * (size_t)corner[2], prim);
                vl_bvh_tri_put(vl_bvh_leaf_rows(p->tree, first), count, j, &tri);
            }
        }
    }
}

static void pass_box_records(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        for (uint32_t i = i0; i < i1; i++) {
            put_box(p->b, i, p->boxes[i].min, p->boxes[i].max);
            p->b->idx[i] = i;
        }
    }
}

/* The boxes in leaf order (items: slots). */
static void pass_box_leaves(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        for (uint32_t s = i0; s < i1; s++) {
            uint32_t prim = p->b->idx[s];
            vl_bvh_box* bx = &p->tree->boxes[s];
            memcpy(bx->min, p->boxes[prim].min, sizeof bx->min);
            memcpy(bx->max, p->boxes[prim].max, sizeof bx->max);
            bx->prim = prim;
            bx->pad = 0;
        }
    }
}

/* The slots' vertex indices, for refit (items: slots). */
static void pass_triangle_corners(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        for (uint32_t s = i0; s < i1; s++)
            memcpy(p->tree->corners + 3 * (size_t)s, p->indices + 3 * (size_t)p->b->idx[s], 12);
    }
}

/* The nodes grown by the margin into their final block (items: nodes; infinite where a clamped
 * bound reached FLT_MAX; box trees, pad 0, keep their exact bounds). */
static void pass_margin(uint32_t start, uint32_t end, uint32_t worker, void* arg) {
    (void)worker;
    build_pass* p = arg;
    const float pad = p->pad;
    for (uint32_t k = start; k < end; k++) {
        uint32_t i0, i1;
        vl_piece_range(p->count, p->piece, k, &i0, &i1);
        for (uint32_t i = i0; i < i1; i++) {
            vl_bvh_node node = p->b->nodes[i];
            for (int a = 0; a < 3; a++) {
                if (node.min[a] <= -FLT_MAX) node.min[a] = -INFINITY;
                else if (pad > 0.0f) node.min[a] = vl_bvh_grow_min(node.min[a], pad);
                if (node.max[a] >= FLT_MAX) node.max[a] = INFINITY;
                else if (pad > 0.0f) node.max[a] = vl_bvh_grow_max(node.max[a], pad);
            }
            p->nodes[i] = node;
        }
    }
}

/* Copies the nodes into an exact-size block (keeps the scratch one if that allocation fails),
 * growing their boxes by pad, frees the scratch, makes the 4-wide copy. On VL_ERR_OUT_OF_MEMORY
 * the caller calls build_fail. */
static vl_status build_end(build_pass* p, uint32_t n, float pad, const vl_context* ctx) {
    vl_build* b = p->b;
    vl_bvh* tree = p->tree;
    tree->depth = b->depth;
    tree->pad = pad;
    tree->node_count = b->node_count;
    vl_bvh_node* exact = vl_mem_alloc(sizeof(vl_bvh_node) * (size_t)b->node_count);
    p->nodes = exact ? exact : b->nodes, p->pad = pad;
    pass_run(ctx, p, b->node_count, pass_margin);
    tree->nodes = p->nodes;
    tree->node_capacity = exact ? b->node_count : 2 * n;
    if (!exact) b->nodes = NULL;
    build_free(b, n);
    if (vl_bvh_build_wide_parallel(tree, ctx) != VL_OK) return VL_ERR_OUT_OF_MEMORY;
#ifndef NDEBUG
    if (vl_bvh_check(tree) != VL_OK) VL_TRAP();
#endif
    return VL_OK;
}

/* The SAH pass, serial without a context. */
static vl_status build_sah(vl_build* b, uint32_t n, const vl_context* ctx) {
    return ctx ? vl_bvh_build_sah_parallel(b, n, ctx) : vl_bvh_build_sah(b, n);
}

static vl_status build_triangles(const float* xyz, uint32_t vertex_count, const uint32_t* indices,
                                 uint32_t triangle_count, const vl_bvh_desc* desc, vl_bvh** out,
                                 const vl_context* ctx) {
    if (!xyz || !indices || !out || triangle_count == 0 || vertex_count == 0) return VL_ERR_INVALID_ARGUMENT;
    vl_bvh_desc d = desc ? *desc : vl_bvh_default_desc();
    vl_status st = check_desc(&d);
    if (st != VL_OK) return st;
    if (triangle_count > VL_BVH_MAX_PRIMS) return VL_ERR_TOO_LARGE;
    build_pass p;
    p.b = NULL, p.tree = NULL, p.xyz = xyz, p.indices = indices, p.boxes = NULL, p.vertex_count = vertex_count;
    if (!pass_ok(ctx, &p, vertex_count, pass_check_vertices) || !pass_ok(ctx, &p, triangle_count, pass_check_indices))
        return VL_ERR_INVALID_GEOMETRY;

    uint32_t n = triangle_count;
    vl_build b;
    vl_bvh* tree;
    st = build_begin(&b, n, &d, VL_BVH_TRIANGLES, &tree);
    if (st != VL_OK) return st;
    p.b = &b, p.tree = tree;
    pass_run(ctx, &p, n, pass_triangle_records);
    float lo[3] = {FLT_MAX, FLT_MAX, FLT_MAX}, hi[3] = {-FLT_MAX, -FLT_MAX, -FLT_MAX};
    for (uint32_t k = 0; k * p.piece < n; k++)
        for (int a = 0; a < 3; a++) {
            lo[a] = p.lo[k][a] < lo[a] ? p.lo[k][a] : lo[a];
            hi[a] = p.hi[k][a] > hi[a] ? p.hi[k][a] : hi[a];
        }
    if (build_sah(&b, n, ctx) != VL_OK) return build_fail(&b, n, tree);
    tree->corners = vl_mem_alloc(sizeof(uint32_t) * 3 * (size_t)n); /* the slots' vertex indices, for refit */
    if (!tree->corners) return build_fail(&b, n, tree);
    tree->vertex_count = vertex_count;
    pass_run(ctx, &p, n, pass_triangle_corners);
    pass_run(ctx, &p, b.node_count, pass_triangle_leaves);
    memset(tree->tris + vl_bvh_tri_floats(n) - VL_BVH_TRI_PAD, 0, sizeof(float) * VL_BVH_TRI_PAD);
    if (build_end(&p, n, vl_bvh_triangle_pad(lo, hi), ctx) != VL_OK) return build_fail(&b, n, tree);
    set_build_sah(tree);
    *out = tree;
    return VL_OK;
}

static vl_status build_boxes(const vl_aabb* boxes, uint32_t count, const vl_bvh_desc* desc, vl_bvh** out,
                             const vl_context* ctx) {
    if (!boxes || !out || count == 0) return VL_ERR_INVALID_ARGUMENT;
    vl_bvh_desc d = desc ? *desc : vl_bvh_default_desc();
    vl_status st = check_desc(&d);
    if (st != VL_OK) return st;
    if (count > VL_BVH_MAX_PRIMS) return VL_ERR_TOO_LARGE;
    build_pass p;
    p.b = NULL, p.tree = NULL, p.xyz = NULL, p.indices = NULL, p.boxes = boxes, p.vertex_count = 0;
    if (!pass_ok(ctx, &p, count, pass_check_boxes)) return VL_ERR_INVALID_BOUNDS;

    vl_build b;
    vl_bvh* tree;
    st = build_begin(&b, count, &d, VL_BVH_BOXES, &tree);
    if (st != VL_OK) return st;
    p.b = &b, p.tree = tree;
    pass_run(ctx, &p, count, pass_box_records);
    if (build_sah(&b, count, ctx) != VL_OK) return build_fail(&b, count, tree);
    pass_run(ctx, &p, count, pass_box_leaves);
    if (build_end(&p, count, 0.0f, ctx) != VL_OK) return build_fail(&b, count, tree);
    set_build_sah(tree);
    *out = tree;
    return VL_OK;
}

vl_context* vl_bvh_exec_context(const vl_exec* exec, bool* ok) {
    const vl_exec_mode mode = vl_exec_mode_of(exec);
    *ok = mode == VL_EXEC_HOOKS || mode == VL_EXEC_CONTEXT;
    return mode == VL_EXEC_CONTEXT ? exec->context : NULL;
}

vl_status vl_bvh_build_triangles(const float* xyz, uint32_t vertex_count, const uint32_t* indices,
                                 uint32_t triangle_count, const vl_bvh_desc* desc, vl_bvh** out, const vl_exec* exec) {
    bool ok;
    vl_context* ctx = vl_bvh_exec_context(exec, &ok);
    if (!ok) return VL_ERR_INVALID_ARGUMENT;
    return build_triangles(xyz, vertex_count, indices, triangle_count, desc, out, ctx);
}

vl_status vl_bvh_build_boxes(const vl_aabb* boxes, uint32_t count, const vl_bvh_desc* desc, vl_bvh** out,
                             const vl_exec* exec) {
    bool ok;
    vl_context* ctx = vl_bvh_exec_context(exec, &ok);
    if (!ok) return VL_ERR_INVALID_ARGUMENT;
    return build_boxes(boxes, count, desc, out, ctx);
}

void vl_bvh_destroy(vl_bvh* bvh) {
    if (!bvh) return;
    vl_mem_free(bvh->nodes, sizeof(vl_bvh_node) * (size_t)bvh->node_capacity);
    vl_mem_free(bvh->tris, sizeof(float) * vl_bvh_tri_floats(bvh->prim_count));
    vl_mem_free(bvh->boxes, sizeof(vl_bvh_box) * (size_t)bvh->prim_count);
    vl_mem_free(bvh->wide, sizeof(vl_bvh_node4) * (size_t)bvh->wide_capacity);
    vl_mem_free(bvh->wide_of, sizeof(uint32_t) * (size_t)bvh->node_count);
    if (bvh->corners) vl_mem_free(bvh->corners, sizeof(uint32_t) * 3 * (size_t)bvh->prim_count);
    vl_mem_free(bvh, sizeof(vl_bvh));
}

size_t vl_bvh_bytes(const vl_bvh* bvh) {
    size_t prims = bvh->kind == VL_BVH_TRIANGLES ? sizeof(float) * vl_bvh_tri_floats(bvh->prim_count)
                                                 : sizeof(vl_bvh_box) * (size_t)bvh->prim_count;
    return sizeof(vl_bvh) + sizeof(vl_bvh_node) * (size_t)bvh->node_capacity + prims +
           sizeof(vl_bvh_node4) * (size_t)bvh->wide_capacity + sizeof(uint32_t) * (size_t)bvh->node_count +
           (bvh->corners ? sizeof(uint32_t) * 3 * (size_t)bvh->prim_count : 0);
}
