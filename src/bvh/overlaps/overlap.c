/* Box and sphere overlap queries: validation at the API edge, the query records, the two query
 * kinds of the batch engine (engine/batch.h) and the pair output; the calls of every shape (the
 * capsules' records and kinds are in overlap_capsule.c). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "bvh/engine/batch.h"
#include "bvh/engine/order.h"
#include "bvh/overlaps/overlap_kernels.h"
#include "bvh/overlaps/overlaps.h"
#include "core/exec.h"
#include "core/pair_buffer.h"
#include "core/valid.h"

/* The leaf tests' width: 8 triangles at a time where the hardware has 8 lanes. */
typedef vl_fw ov_vec;
#define OV_W VL_BW
#define ov_set1 vl_fw_set1
#define ov_first vl_fw_first
#define ov_box_tri vl_ovw_box_tri
#define ov_sphere_tri vl_ovw_sphere_tri
#define ov_box_prep vl_ovw_box_prep
#define ov_sphere_prep vl_ovw_sphere_prep
typedef vl_ovw_prep ov_prep;

/* Queries per batch: on the C stack (the plain forms) and on the caller's scratch. */
#define VL_OV_STACK_BATCH 128u
#define VL_OV_SCRATCH_BATCH 4096u

/* Queries ordered at a time on the caller's scratch when a call holds more than one batch. */
#define VL_OV_ORDER_WINDOW 16384u

/* ---- records ---------------------------------------------------------------------------- */

static int sphere_valid(const vl_sphere* s) {
    for (int a = 0; a < 3; a++)
        if (!isfinite(s->center[a])) return 0;
    return isfinite(s->radius) && s->radius >= 0.0f;
}

static void box_record(float* rec, const vl_aabb* b) {
    for (int a = 0; a < 3; a++) rec[a] = b->min[a], rec[4 + a] = b->max[a];
    rec[3] = rec[7] = 0.0f;
}

/* The node test's radius is grown by twice the slack of the radius alone (2 tol r): the node
 * test subtracts before it squares, so its rounding is relative to the radius, and a pair that
 * touches is never culled. */
static void sphere_record(float* rec, const vl_sphere* s) {
    for (int a = 0; a < 3; a++) rec[a] = s->center[a];
    float node_r = s->radius + 2.0f * VL_BVH_OVERLAP_TOLERANCE * s->radius;
    rec[VL_OV_RADIUS] = s->radius;
    rec[VL_OV_NODE_R2] = node_r * node_r;
    rec[5] = rec[6] = rec[7] = 0.0f;
}

/* ---- node tests -------------------------------------------------------------------------- */

/* Ids of positions [i, i + 4) (the last one repeated past n) and the mask of real lanes. */
static inline vl_f4 quad_ids(const uint32_t* ids, uint32_t n, uint32_t i, uint32_t q[4]) {
    for (uint32_t j = 0; j < 4; j++) q[j] = ids[i + j < n ? i + j : n - 1];
    return vl_f4_first(n - i < 4 ? n - i : 4);
}

static void box_node_test(const float* records, const uint32_t* ids, uint32_t n, const vl_bvh_node4* w,
                          uint8_t* masks) {
    uint32_t live = vl_query_live_children(w);
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t q[4], bits[4] = {0, 0, 0, 0};
        vl_f4 lanes = quad_ids(ids, n, i, q);
        vl_f4 lo[4], hi[4];
        vl_ov_gather(records, q, 0, lo);
        vl_ov_gather(records, q, 1, hi);
        for (int c = 0; c < 4; c++)
            if (live >> c & 1u) bits[c] = vl_ov_box_node4(lo, hi, w, c, lanes);
        vl_query_put_masks(masks, n, i, bits);
    }
}

static void sphere_node_test(const float* records, const uint32_t* ids, uint32_t n, const vl_bvh_node4* w,
                             uint8_t* masks) {
    uint32_t live = vl_query_live_children(w);
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t q[4], bits[4] = {0, 0, 0, 0};
        vl_f4 lanes = quad_ids(ids, n, i, q);
        vl_f4 c4[4], r4[4];
        vl_ov_gather(records, q, 0, c4);
        vl_ov_gather(records, q, 1, r4); /* r4[0]: node radius squared */
        for (int c = 0; c < 4; c++)
            if (live >> c & 1u) bits[c] = vl_ov_sphere_node4(c4, r4[0], w, c, lanes);
        vl_query_put_masks(masks, n, i, bits);
    }
}

static uint32_t box_node_test1(const float* rec, const vl_bvh_node4* w) {
    return vl_ov_box_node1(rec, w) & vl_query_live_children(w);
}

static uint32_t sphere_node_test1(const float* rec, const vl_bvh_node4* w) {
    return vl_ov_sphere_node1(rec, w) & vl_query_live_children(w);
}

/* ---- leaf tests -------------------------------------------------------------------------- */

/* Whether box query rec holds the whole box of lane c (then every primitive inside overlaps it). */
static inline int box_holds(const float* rec, const vl_bvh_node4* w, uint32_t c) {
    return rec[0] <= w->bounds[0][c] && rec[1] <= w->bounds[1][c] && rec[2] <= w->bounds[2][c] &&
           rec[4] >= w->bounds[3][c] && rec[5] >= w->bounds[4][c] && rec[6] >= w->bounds[5][c];
}

/* Whether sphere query rec holds the whole box of lane c: its farthest corner within the radius. */
static inline int sphere_holds(const float* rec, const vl_bvh_node4* w, uint32_t c) {
    float d2 = 0.0f;
    for (int a = 0; a < 3; a++) {
        float lo = fabsf(rec[a] - w->bounds[a][c]), hi = fabsf(w->bounds[3 + a][c] - rec[a]);
        float m = lo > hi ? lo : hi;
        d2 += m * m;
    }
    return d2 <= rec[VL_OV_RADIUS] * rec[VL_OV_RADIUS];
}

VL_INLINE int shape_holds(vl_ov_shape shape, const float* rec, const vl_bvh_node4* w, uint32_t c) {
    return shape == VL_OV_BOXES ? box_holds(rec, w, c) : sphere_holds(rec, w, c);
}

VL_INLINE void shape_prep(vl_ov_shape shape, const float* row0, uint32_t stride, ov_vec live, ov_prep* prep) {
    if (shape == VL_OV_BOXES)
        ov_box_prep(row0, stride, live, prep);
    else
        ov_sphere_prep(row0, stride, live, prep);
}

VL_INLINE uint32_t shape_tri(vl_ov_shape shape, const ov_prep* prep, const float* rec) {
    if (shape == VL_OV_BOXES) {
        ov_vec qmin[3], qmax[3];
        for (int a = 0; a < 3; a++) qmin[a] = ov_set1(rec[a]), qmax[a] = ov_set1(rec[4 + a]);
        return ov_box_tri(prep, qmin, qmax);
    }
    ov_vec c[3] = {ov_set1(rec[0]), ov_set1(rec[1]), ov_set1(rec[2])};
    return ov_sphere_tri(prep, c, ov_set1(rec[VL_OV_RADIUS]));
}

/* Queries of a leaf's list sorted out at a time (those that do not hold the leaf's box). */
#define OV_LEAF_BLOCK 64u

/* Triangle leaves: queries that hold the leaf's whole box take all its triangles; for the others,
 * each chunk of OV_W triangles is prepared once (what no query changes) and every such query of
 * the list (OV_LEAF_BLOCK at a time) is tested against it (a list of one in the single-query form). */
VL_INLINE vl_status tri_leaf(vl_ov_shape shape, void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids,
                             uint32_t n, const vl_bvh_node4* parent, uint32_t lane) {
    vl_ov_ctx* ctx = vctx;
    const uint32_t count = parent->count[lane];
    const float* rows = vl_bvh_leaf_rows(bvh, parent->child[lane]);
    for (uint32_t from = 0; from < n; from += OV_LEAF_BLOCK) {
        const uint32_t to = n - from < OV_LEAF_BLOCK ? n : from + OV_LEAF_BLOCK;
        uint32_t rest[OV_LEAF_BLOCK], tested = 0;
        for (uint32_t i = from; i < to; i++) {
            if (!shape_holds(shape, records + VL_OV_RECORD_FLOATS * (size_t)ids[i], parent, lane)) {
                rest[tested++] = ids[i];
                continue;
            }
            for (uint32_t k = 0; k < count; k += OV_W) {
                vl_status st = vl_ov_room(ctx->out, OV_W);
                if (st != VL_OK) return st;
                const uint32_t lanes = count - k < OV_W ? count - k : OV_W;
                vl_ov_emit_bits(ctx->out, vl_ov_query(ctx, ids[i]), rows, k, lanes, (1u << lanes) - 1);
            }
        }
        for (uint32_t k = 0; k < count && tested; k += OV_W) {
            ov_prep prep;
            const uint32_t lanes = count - k < OV_W ? count - k : OV_W;
            shape_prep(shape, vl_bvh_leaf_geometry(rows, count) + k, count, ov_first(lanes), &prep);
            for (uint32_t j = 0; j < tested; j++) {
                vl_status st = vl_ov_room(ctx->out, OV_W);
                if (st != VL_OK) return st;
                const float* rec = records + VL_OV_RECORD_FLOATS * (size_t)rest[j];
                vl_ov_emit_bits(ctx->out, vl_ov_query(ctx, rest[j]), rows, k, lanes, shape_tri(shape, &prep, rec));
            }
        }
    }
    return VL_OK;
}

static vl_status box_tri_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                              const vl_bvh_node4* parent, uint32_t lane) {
    return tri_leaf(VL_OV_BOXES, vctx, bvh, records, ids, n, parent, lane);
}

vl_status vl_ov_sphere_tri_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                                 const vl_bvh_node4* parent, uint32_t lane) {
    return tri_leaf(VL_OV_SPHERES, vctx, bvh, records, ids, n, parent, lane);
}

/* Box trees. Box queries: closed intervals, exact. Sphere queries: the distance from the center
 * to the box, with the same float operations as the node test and the leaf's slack tol * r
 * (reach2, once per query). */
VL_INLINE int shape_box_hit(vl_ov_shape shape, const float* q, float reach2, const vl_bvh_box* b) {
    if (shape == VL_OV_BOXES)
        return q[0] <= b->max[0] && q[4] >= b->min[0] && q[1] <= b->max[1] && q[5] >= b->min[1] &&
               q[2] <= b->max[2] && q[6] >= b->min[2];
    float d[3];
    for (int a = 0; a < 3; a++) {
        float lo = b->min[a] - q[a], hi = q[a] - b->max[a];
        float m = lo > hi ? lo : hi;
        d[a] = m > 0.0f ? m : 0.0f;
    }
    return (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2] <= reach2;
}

VL_INLINE vl_status box_leaf(vl_ov_shape shape, void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids,
                             uint32_t n, const vl_bvh_node4* parent, uint32_t lane) {
    const uint32_t first = parent->child[lane], count = parent->count[lane];
    vl_ov_ctx* ctx = vctx;
    const vl_bvh_box* boxes = bvh->boxes + first;
    for (uint32_t i = 0; i < n; i++) {
        vl_status st = vl_ov_room(ctx->out, count);
        if (st != VL_OK) return st;
        const float* q = records + VL_OV_RECORD_FLOATS * (size_t)ids[i];
        float reach2 = 0.0f;
        if (shape == VL_OV_SPHERES) {
            float reach = q[VL_OV_RADIUS] + VL_BVH_OVERLAP_TOLERANCE * q[VL_OV_RADIUS];
            reach2 = reach * reach;
        }
        const uint32_t query = vl_ov_query(ctx, ids[i]);
        vl_pair* dst = ctx->out->pairs + ctx->out->count;
        for (uint32_t k = 0; k < count; k++) {
            const vl_bvh_box* b = &boxes[k];
            if (shape_box_hit(shape, q, reach2, b)) *dst++ = (vl_pair){query, b->prim};
        }
        ctx->out->count = (uint32_t)(dst - ctx->out->pairs);
    }
    return VL_OK;
}

static vl_status box_box_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                              const vl_bvh_node4* parent, uint32_t lane) {
    return box_leaf(VL_OV_BOXES, vctx, bvh, records, ids, n, parent, lane);
}

vl_status vl_ov_sphere_box_leaf(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                                 const vl_bvh_node4* parent, uint32_t lane) {
    return box_leaf(VL_OV_SPHERES, vctx, bvh, records, ids, n, parent, lane);
}

/* ---- the kinds ---------------------------------------------------------------------------- */

/* The walks' forms of the tests: one query, its record in ctx. */
static uint32_t box_walk_node(void* vctx, uint32_t slot, uint32_t id, const vl_bvh_node4* w, float keys[4]) {
    (void)slot, (void)keys;
    return box_node_test1(((vl_ov_ctx*)vctx)->records + VL_OV_RECORD_FLOATS * (size_t)id, w);
}

static uint32_t sphere_walk_node(void* vctx, uint32_t slot, uint32_t id, const vl_bvh_node4* w, float keys[4]) {
    (void)slot, (void)keys;
    return sphere_node_test1(((vl_ov_ctx*)vctx)->records + VL_OV_RECORD_FLOATS * (size_t)id, w);
}

static vl_status box_tri_walk_leaf(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                   const vl_bvh_node4* parent, uint32_t lane) {
    (void)slot;
    return box_tri_leaf(vctx, bvh, ((vl_ov_ctx*)vctx)->records, &id, 1, parent, lane);
}

static vl_status sphere_tri_walk_leaf(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                      const vl_bvh_node4* parent, uint32_t lane) {
    (void)slot;
    return vl_ov_sphere_tri_leaf(vctx, bvh, ((vl_ov_ctx*)vctx)->records, &id, 1, parent, lane);
}

static vl_status box_box_walk_leaf(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                   const vl_bvh_node4* parent, uint32_t lane) {
    (void)slot;
    return box_box_leaf(vctx, bvh, ((vl_ov_ctx*)vctx)->records, &id, 1, parent, lane);
}

static vl_status sphere_box_walk_leaf(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                      const vl_bvh_node4* parent, uint32_t lane) {
    (void)slot;
    return vl_ov_sphere_box_leaf(vctx, bvh, ((vl_ov_ctx*)vctx)->records, &id, 1, parent, lane);
}

static const vl_query_kind k_box_tri = {
    VL_OV_RECORD_FLOATS, box_node_test, box_tri_leaf,
    {.leaf_rows = VL_BVH_OVERLAP_ROWS, .node = box_walk_node, .leaf = box_tri_walk_leaf}};
static const vl_query_kind k_sphere_tri = {
    VL_OV_RECORD_FLOATS, sphere_node_test, vl_ov_sphere_tri_leaf,
    {.leaf_rows = VL_BVH_OVERLAP_ROWS, .node = sphere_walk_node, .leaf = sphere_tri_walk_leaf}};
static const vl_query_kind k_box_box = {VL_OV_RECORD_FLOATS, box_node_test, box_box_leaf,
                                        {.node = box_walk_node, .leaf = box_box_walk_leaf}};
static const vl_query_kind k_sphere_box = {VL_OV_RECORD_FLOATS, sphere_node_test, vl_ov_sphere_box_leaf,
                                           {.node = sphere_walk_node, .leaf = sphere_box_walk_leaf}};

/* ---- entry points ------------------------------------------------------------------------ */

/* A batch of n valid queries (ids in the arena) through the engine, each kind in its own copy. */
static vl_status ov_batch(const vl_bvh* bvh, vl_ov_shape shape, vl_ov_ctx* ctx, uint32_t* arena, uint32_t n,
                          size_t arena_entries) {
    float* rec = ctx->records;
    if (shape == VL_OV_CAPSULES) return vl_ov_capsule_batch(bvh, ctx, arena, n, arena_entries);
    if (bvh->kind == VL_BVH_TRIANGLES) {
        if (shape == VL_OV_BOXES) return vl_query_batch_run(bvh, &k_box_tri, ctx, rec, arena, n, arena, arena_entries);
        return vl_query_batch_run(bvh, &k_sphere_tri, ctx, rec, arena, n, arena, arena_entries);
    }
    if (shape == VL_OV_BOXES) return vl_query_batch_run(bvh, &k_box_box, ctx, rec, arena, n, arena, arena_entries);
    return vl_query_batch_run(bvh, &k_sphere_box, ctx, rec, arena, n, arena, arena_entries);
}

/* Record 0 of ctx alone. */
static vl_status ov_single_run(const vl_bvh* bvh, vl_ov_shape shape, vl_ov_ctx* ctx) {
    if (shape == VL_OV_CAPSULES) return vl_ov_capsule_single(bvh, ctx);
    if (bvh->kind == VL_BVH_TRIANGLES) {
        if (shape == VL_OV_BOXES) return vl_query_single_run(bvh, &k_box_tri, ctx, 0);
        return vl_query_single_run(bvh, &k_sphere_tri, ctx, 0);
    }
    if (shape == VL_OV_BOXES) return vl_query_single_run(bvh, &k_box_box, ctx, 0);
    return vl_query_single_run(bvh, &k_sphere_box, ctx, 0);
}

/* Fills the records of the n queries of a batch (record i: query vl_ov_query(ctx, i)) and lists the
 * valid ones; returns how many. */
static uint32_t ov_prepare(vl_ov_shape shape, const void* queries, const vl_ov_ctx* ctx, uint32_t n, float* records,
                           uint32_t* ids) {
    uint32_t live = 0;
    for (uint32_t i = 0; i < n; i++) {
        float* rec = records + VL_OV_RECORD_FLOATS * (size_t)i;
        const uint32_t q = vl_ov_query(ctx, i);
        if (shape == VL_OV_BOXES) {
            const vl_aabb* b = (const vl_aabb*)queries + q;
            if (!vl_box_valid(b)) continue;
            box_record(rec, b);
        } else if (shape == VL_OV_CAPSULES) {
            if (!vl_ov_capsule_record(rec, (const vl_capsule*)queries + q)) continue;
        } else {
            const vl_sphere* sp = (const vl_sphere*)queries + q;
            if (!sphere_valid(sp)) continue;
            sphere_record(rec, sp);
        }
        ids[live++] = i;
    }
    return live;
}

/* The order of queries [first, first + n) by the Morton code of their centres (a box's centre
 * may be infinite or NaN: the code clamps it). items holds 2 n. */
static void ov_order(const vl_bvh* bvh, vl_ov_shape shape, const void* queries, uint32_t first, uint32_t n,
                     uint64_t* items, uint32_t* order) {
    const vl_morton_frame frame = vl_morton_frame_of(bvh);
    for (uint32_t i = 0; i < n; i++) {
        float c[3];
        if (shape == VL_OV_BOXES) {
            const vl_aabb* b = (const vl_aabb*)queries + first + i;
            for (int a = 0; a < 3; a++) c[a] = 0.5f * b->min[a] + 0.5f * b->max[a];
        } else if (shape == VL_OV_CAPSULES) {
            const vl_capsule* cp = (const vl_capsule*)queries + first + i;
            for (int a = 0; a < 3; a++) c[a] = 0.5f * cp->a[a] + 0.5f * cp->b[a];
        } else {
            const vl_sphere* sp = (const vl_sphere*)queries + first + i;
            for (int a = 0; a < 3; a++) c[a] = sp->center[a];
        }
        items[i] = (uint64_t)vl_morton_key(&frame, c) << 32 | i;
    }
    vl_query_order_sort(items, items + n, n, order);
}

/* Where a call runs: records and arena for batches of `chunk` queries; with order (window
 * entries) and items (2 window), windows of queries go in their spatial order. */
typedef struct ov_space {
    float* records;
    uint32_t* arena;
    size_t arena_entries;
    uint32_t chunk, window;
    uint32_t* order;
    uint64_t* items;
} ov_space;

/* The call, a window and a batch of `chunk` queries at a time. */
static vl_status ov_run(const vl_bvh* bvh, vl_ov_shape shape, const void* queries, uint32_t count, vl_pair_buffer* out,
                        const ov_space* sp) {
    const uint32_t start = out->count, window = sp->order ? sp->window : count;
    int invalid = 0;
    for (uint32_t wfirst = 0; wfirst < count; wfirst += window) {
        const uint32_t wn = count - wfirst < window ? count - wfirst : window;
        if (sp->order) ov_order(bvh, shape, queries, wfirst, wn, sp->items, sp->order);
        for (uint32_t base = 0; base < wn; base += sp->chunk) {
            uint32_t n = wn - base < sp->chunk ? wn - base : sp->chunk;
            vl_ov_ctx ctx = {out, wfirst + base, NULL, sp->records, queries};
            if (sp->order) ctx.first = wfirst, ctx.index = sp->order + base;
            uint32_t live = ov_prepare(shape, queries, &ctx, n, sp->records, sp->arena);
            invalid |= live != n;
            vl_status st = ov_batch(bvh, shape, &ctx, sp->arena, live, sp->arena_entries);
            if (st != VL_OK) {
                out->count = start;
                return st;
            }
        }
    }
    return invalid ? VL_ERR_INVALID_QUERY : VL_OK;
}

static uint32_t scratch_batch(uint32_t count) { return count < VL_OV_SCRATCH_BATCH ? count : VL_OV_SCRATCH_BATCH; }

/* Queries ordered at a time: none for a call of one batch. */
static uint32_t order_window(uint32_t count) {
    if (count <= VL_OV_SCRATCH_BATCH) return 0;
    return count < VL_OV_ORDER_WINDOW ? count : VL_OV_ORDER_WINDOW;
}

/* Arena words of a batch of n, even: the items after it are 8-byte aligned. */
static size_t arena_words(uint32_t n) { return (vl_query_arena_entries(n) + 1) & ~(size_t)1; }

/* The scratch: records, arena, then for an ordered call the items and the order. */
size_t vl_bvh_overlap_scratch_size(const vl_bvh* bvh, uint32_t count) {
    if (!bvh || count == 0) return 0;
    uint32_t n = scratch_batch(count), w = order_window(count);
    return sizeof(float) * VL_OV_RECORD_FLOATS * (size_t)n + sizeof(uint32_t) * arena_words(n) +
           (sizeof(uint64_t) * 2 + sizeof(uint32_t)) * (size_t)w;
}

/* Batches of VL_OV_STACK_BATCH queries on the C stack. */
static vl_status ov_stack(const vl_bvh* bvh, vl_ov_shape shape, const void* queries, uint32_t count,
                          vl_pair_buffer* out) {
    _Alignas(64) float records[VL_OV_RECORD_FLOATS * VL_OV_STACK_BATCH];
    _Alignas(64) uint32_t arena[16 * VL_OV_STACK_BATCH + 256];
    _Static_assert(sizeof arena / sizeof arena[0] == 16 * VL_OV_STACK_BATCH + 256, "arena as vl_query_arena_entries");
    const ov_space sp = {records, arena, sizeof arena / sizeof arena[0], VL_OV_STACK_BATCH, 0, NULL, NULL};
    return ov_run(bvh, shape, queries, count, out, &sp);
}

/* Batches of VL_OV_SCRATCH_BATCH queries on the caller's scratch. */
static vl_status ov_scratch(const vl_bvh* bvh, vl_ov_shape shape, const void* queries, uint32_t count,
                            vl_pair_buffer* out, void* scratch) {
    const uint32_t n = scratch_batch(count), w = order_window(count);
    ov_space sp = {scratch, NULL, arena_words(n), n, w, NULL, NULL};
    sp.arena = (uint32_t*)(sp.records + VL_OV_RECORD_FLOATS * (size_t)n);
    if (w) {
        sp.items = (uint64_t*)(sp.arena + sp.arena_entries);
        sp.order = (uint32_t*)(sp.items + 2 * (size_t)w);
    }
    return ov_run(bvh, shape, queries, count, out, &sp);
}

/* One query's walk, no batch: its pairs are (0, primitive). */
static vl_status ov_single(const vl_bvh* bvh, vl_ov_shape shape, const void* query, vl_pair_buffer* out) {
    _Alignas(32) float rec[VL_OV_RECORD_FLOATS];
    if (shape == VL_OV_BOXES) {
        if (!vl_box_valid(query)) return VL_ERR_INVALID_QUERY;
        box_record(rec, query);
    } else if (shape == VL_OV_CAPSULES) {
        if (!vl_ov_capsule_record(rec, query)) return VL_ERR_INVALID_QUERY;
    } else {
        if (!sphere_valid(query)) return VL_ERR_INVALID_QUERY;
        sphere_record(rec, query);
    }
    const uint32_t start = out->count;
    vl_ov_ctx ctx = {out, 0, NULL, rec, query};
    vl_status st = ov_single_run(bvh, shape, &ctx);
    if (st != VL_OK) out->count = start;
    return st;
}

vl_status vl_bvh_overlap_on(const vl_bvh* bvh, const void* queries, vl_ov_shape shape, uint32_t count,
                            vl_pair_buffer* out, void* scratch) {
    if (count == 0) return VL_OK;
    if (scratch) return ov_scratch(bvh, shape, queries, count, out, scratch);
    return count == 1 ? ov_single(bvh, shape, queries, out) : ov_stack(bvh, shape, queries, count, out);
}

static vl_status overlap(const vl_bvh* bvh, const void* queries, vl_ov_shape shape, uint32_t count,
                         vl_pair_buffer* out, const vl_exec* exec) {
    if (!bvh || !vl_pair_buffer_is_valid(out) || (count && !queries)) return VL_ERR_INVALID_ARGUMENT;
    switch (vl_exec_mode_of(exec)) {
    case VL_EXEC_HOOKS: return vl_bvh_overlap_on(bvh, queries, shape, count, out, NULL);
    case VL_EXEC_CONTEXT: return vl_bvh_overlap_on_context(exec->context, bvh, queries, shape, count, out);
    case VL_EXEC_SCRATCH: {
        const size_t need = vl_bvh_overlap_scratch_size(bvh, count);
        if (!vl_scratch_fits(exec->scratch, exec->scratch_bytes, need)) return VL_ERR_INVALID_ARGUMENT;
        return vl_bvh_overlap_on(bvh, queries, shape, count, out, need ? exec->scratch : NULL);
    }
    default: return VL_ERR_INVALID_ARGUMENT;
    }
}

vl_status vl_bvh_overlap_boxes(const vl_bvh* bvh, const vl_aabb* queries, uint32_t count, vl_pair_buffer* out,
                               const vl_exec* exec) {
    return overlap(bvh, queries, VL_OV_BOXES, count, out, exec);
}

vl_status vl_bvh_overlap_spheres(const vl_bvh* bvh, const vl_sphere* queries, uint32_t count, vl_pair_buffer* out,
                                 const vl_exec* exec) {
    return overlap(bvh, queries, VL_OV_SPHERES, count, out, exec);
}

vl_status vl_bvh_overlap_capsules(const vl_bvh* bvh, const vl_capsule* queries, uint32_t count, vl_pair_buffer* out,
                                  const vl_exec* exec) {
    return overlap(bvh, queries, VL_OV_CAPSULES, count, out, exec);
}
