/* The closest-point entry: argument checks, per-query validation (an invalid query is answered as
 * none and the batch goes on), blocks of queries loaded on the C stack and walked down the tree,
 * the answers written in the caller's order; and the queries' keyed kind of the interleaved walks
 * (engine/walks.h): a child's key is the squared distance from the point to its box, the walk's
 * limit the best squared distance so far (max_distance squared before any; -1 once a primitive
 * touches the point), so that the nearest child is opened first and a child farther than the best
 * is skipped. Each walk keeps its own state, so its answer is the same whether it runs alone or
 * interleaved with others; a batch interleaves its walks (one's memory fetches landing while the
 * others work) only on a tree larger than the caches, where that pays. */
#include <math.h>

#include "bvh/closest/closest.h"
#include "bvh/engine/walks.h"
#include "compiler.h"
#include "core/exec.h"

#include "simd/closest_kernels.h"

size_t vl_bvh_closest_scratch_size(const vl_bvh* bvh, uint32_t count) {
    (void)bvh, (void)count;
    return 0; /* the queries run on the C stack */
}

/* ---- records ----------------------------------------------------------------------------- */

bool vl_closest_valid(const vl_point_query* q) {
    for (int a = 0; a < 3; a++)
        if (!isfinite(q->point[a])) return false;
    return q->max_distance >= 0.0f; /* false for NaN */
}

void vl_closest_query_set(vl_closest_query* q, const vl_point_query* in) {
    for (int a = 0; a < 3; a++) q->p[a] = in->point[a];
    q->max2 = (double)in->max_distance * in->max_distance; /* exact, or INFINITY */
}

/* ---- the walk kind ------------------------------------------------------------------------- */

/* A walk's own state: the point broadcast across 4 lanes and the walk's float limit. */
typedef struct cp_state {
    vl_f4 p[3];
    float limit;
} cp_state;

/* Walk id answers q[id] and keeps its best in best[id]; state: one per slot. */
typedef struct cp_ctx {
    const vl_closest_query* q;
    vl_closest_best* best;
    cp_state* state;
} cp_ctx;

static void cp_start(void* vctx, uint32_t slot, uint32_t id) {
    cp_ctx* x = vctx;
    cp_state* s = &x->state[slot];
    for (int a = 0; a < 3; a++) s->p[a] = vl_f4_set1(x->q[id].p[a]);
    s->limit = vl_closest_limit(x->best[id].d2);
}

static void cp_move(void* vctx, uint32_t to, uint32_t from) {
    cp_ctx* x = vctx;
    x->state[to] = x->state[from];
}

static uint32_t cp_node(void* vctx, uint32_t slot, uint32_t id, const vl_bvh_node4* n4, float keys[4]) {
    (void)id;
    const cp_state* s = &((cp_ctx*)vctx)->state[slot];
    return vl_cp4_node(s->p, vl_f4_set1(s->limit), n4->bounds, n4->child, VL_BVH_EMPTY, keys);
}

VL_INLINE vl_status cp_leaf(int tris, void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                            const vl_bvh_node4* parent, uint32_t lane) {
    cp_ctx* x = vctx;
    cp_state* s = &x->state[slot];
    const uint32_t first = parent->child[lane], count = parent->count[lane];
    if (tris)
        vl_closest_leaf_tris(bvh, first, count, &x->q[id], &s->limit, &x->best[id]);
    else
        vl_closest_leaf_boxes(bvh, first, count, &x->q[id], &s->limit, &x->best[id]);
    return VL_OK;
}

static vl_status cp_leaf_tris(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id, const vl_bvh_node4* parent,
                              uint32_t lane) {
    return cp_leaf(1, vctx, bvh, slot, id, parent, lane);
}

static vl_status cp_leaf_boxes(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                               const vl_bvh_node4* parent, uint32_t lane) {
    return cp_leaf(0, vctx, bvh, slot, id, parent, lane);
}

static float cp_limit(void* vctx, uint32_t slot) { return ((cp_ctx*)vctx)->state[slot].limit; }

/* The triangle leaf test reads every row (its bound reads the normal). */
static const vl_query_walk_kind k_cp_tris = {.keyed = 1, .leaf_rows = VL_BVH_TRI_FLOATS, .start = cp_start,
                                             .move = cp_move, .node = cp_node, .leaf = cp_leaf_tris,
                                             .limit = cp_limit};
static const vl_query_walk_kind k_cp_boxes = {.keyed = 1, .start = cp_start, .move = cp_move, .node = cp_node,
                                              .leaf = cp_leaf_boxes, .limit = cp_limit};

/* The queries walked in `slots` walks (slots >= 1); the leaf tests never fail. */
VL_INLINE void trace(const vl_query_walk_kind* kind, const vl_bvh* bvh, const vl_closest_query* q, uint32_t n,
                     vl_closest_best* best, vl_query_walk* walk, cp_state* state, uint32_t slots) {
    cp_ctx x = {q, best, state};
    vl_query_walks walks = vl_query_walks_make(walk, slots);
    for (uint32_t i = 0; i < n; i++) (void)vl_query_walks_add(kind, &x, bvh, &walks, i, 0);
    (void)vl_query_walks_drain(kind, &x, bvh, &walks);
}

/* One walk's stack for one query (3.2 KB of the C stack), VL_QUERY_WALKS walks' for more. */
static VL_NOINLINE void trace_one(const vl_bvh* bvh, const vl_closest_query* q, vl_closest_best* best) {
    vl_query_walk walk;
    cp_state state;
    if (bvh->kind == VL_BVH_TRIANGLES)
        trace(&k_cp_tris, bvh, q, 1, best, &walk, &state, 1);
    else
        trace(&k_cp_boxes, bvh, q, 1, best, &walk, &state, 1);
}

void vl_closest_trace_interleaved(const vl_bvh* bvh, const vl_closest_query* q, uint32_t n, vl_closest_best* best) {
    vl_query_walk walk[VL_QUERY_WALKS];
    cp_state state[VL_QUERY_WALKS];
    if (bvh->kind == VL_BVH_TRIANGLES)
        trace(&k_cp_tris, bvh, q, n, best, walk, state, VL_QUERY_WALKS);
    else
        trace(&k_cp_boxes, bvh, q, n, best, walk, state, VL_QUERY_WALKS);
}

void vl_closest_trace_each(const vl_bvh* bvh, const vl_closest_query* q, uint32_t n, vl_closest_best* best) {
    for (uint32_t i = 0; i < n; i++) trace_one(bvh, &q[i], &best[i]);
}

/* A batch interleaves its walks only on a tree whose nodes and primitives take more than this:
 * on one that the caches hold, the walks one after another ran faster (1.2x on the bunny, 4.8 MB
 * of nodes and triangles), while interleaved they ran 1.2-1.6x faster on the 71 MB world. */
#define VL_CLOSEST_INTERLEAVE_BYTES ((size_t)8 << 20)

void vl_closest_trace_walks(const vl_bvh* bvh, const vl_closest_query* q, uint32_t n, vl_closest_best* best) {
    size_t bytes = (size_t)bvh->wide_count * sizeof(vl_bvh_node4);
    bytes += bvh->kind == VL_BVH_TRIANGLES ? sizeof(float) * vl_bvh_tri_floats(bvh->prim_count)
                                           : sizeof(vl_bvh_box) * (size_t)bvh->prim_count;
    if (n > 1 && bytes > VL_CLOSEST_INTERLEAVE_BYTES) vl_closest_trace_interleaved(bvh, q, n, best);
    else vl_closest_trace_each(bvh, q, n, best);
}

/* ---- the forms ----------------------------------------------------------------------------- */

static const vl_closest_hit none = {{0.0f, 0.0f, 0.0f}, INFINITY, VL_NO_HIT, 0.0f, 0.0f};

/* Queries loaded and walked at a time (on the C stack). */
#define VL_CLOSEST_BLOCK 64u

vl_status vl_bvh_closest_on(const vl_bvh* bvh, const vl_point_query* queries, uint32_t count,
                            vl_closest_hit* answers) {
    bool invalid = false;
    vl_closest_query q[VL_CLOSEST_BLOCK];
    vl_closest_best best[VL_CLOSEST_BLOCK];
    uint32_t at[VL_CLOSEST_BLOCK]; /* the caller's index of each valid query */
    for (uint32_t start = 0; start < count; start += VL_CLOSEST_BLOCK) {
        const uint32_t end = count - start < VL_CLOSEST_BLOCK ? count : start + VL_CLOSEST_BLOCK;
        uint32_t n = 0;
        for (uint32_t i = start; i < end; i++) {
            answers[i] = none;
            if (!vl_closest_valid(&queries[i])) {
                invalid = true;
                continue;
            }
            vl_closest_query_set(&q[n], &queries[i]);
            best[n] = (vl_closest_best){q[n].max2, VL_BVH_EMPTY, 0};
            at[n++] = i;
        }
        vl_closest_trace_walks(bvh, q, n, best);
        for (uint32_t k = 0; k < n; k++)
            if (best[k].first != VL_BVH_EMPTY) vl_closest_answer(bvh, &q[k], &best[k], &answers[at[k]]);
    }
    return invalid ? VL_ERR_INVALID_QUERY : VL_OK;
}

vl_status vl_bvh_closest_points(const vl_bvh* bvh, const vl_point_query* queries, uint32_t count,
                                vl_closest_hit* answers, const vl_exec* exec) {
    if (!bvh || (count && (!queries || !answers))) return VL_ERR_INVALID_ARGUMENT;
    switch (vl_exec_mode_of(exec)) {
    case VL_EXEC_HOOKS:
    case VL_EXEC_SCRATCH: return vl_bvh_closest_on(bvh, queries, count, answers);
    case VL_EXEC_CONTEXT: return vl_bvh_closest_on_context(exec->context, bvh, queries, count, answers);
    default: return VL_ERR_INVALID_ARGUMENT;
    }
}
