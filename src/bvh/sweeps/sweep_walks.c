/* Sweeps down the 4-wide tree on the interleaved walks (engine/walks.h) as a keyed kind: a child's
 * key is the centre ray's entry t into its box grown by the extent (the 4 children in one slab
 * test against the sweep's record broadcast across lanes), the walk's limit the sweep's tmax
 * (shrunk by its hits, -1 once it is done), so that the nearest child is opened first and a child
 * entered past the best hit is skipped. */
#include "bvh/engine/walks.h"
#include "bvh/sweeps/sweep.h"
#include "compiler.h"

#include "simd/sweep_kernels.h"

/* A walk's own state: the sweep's culling record, and broadcast across 4 lanes. */
typedef struct sweep_state {
    vl_sweepv4 s;
    _Alignas(16) float rec[VL_SWEEPREC_FLOATS];
} sweep_state;

/* Walk id sweeps q[id] and keeps its best hit in best[id]; state: one per slot. */
typedef struct sweep_ctx {
    const vl_sweep_query* q;
    vl_sweep_best* best;
    int any_hit;
    sweep_state* state;
} sweep_ctx;

static void sweep_start(void* vctx, uint32_t slot, uint32_t id) {
    sweep_ctx* x = vctx;
    sweep_state* s = &x->state[slot];
    vl_sweep_rec_set(s->rec, &x->q[id]);
    vl_sweep4_broadcast(s->rec, &s->s);
}

static void sweep_move(void* vctx, uint32_t to, uint32_t from) {
    sweep_ctx* x = vctx;
    x->state[to] = x->state[from];
}

static uint32_t sweep_node(void* vctx, uint32_t slot, uint32_t id, const vl_bvh_node4* n4, float keys[4]) {
    (void)id;
    const sweep_state* s = &((sweep_ctx*)vctx)->state[slot];
    vl_f4 mn[3], mx[3], tn;
    for (int a = 0; a < 3; a++) mn[a] = vl_f4_load(n4->bounds[a]), mx[a] = vl_f4_load(n4->bounds[3 + a]);
    uint32_t bits = vl_f4_bits(vl_sweep4_slab(&s->s, mn, mx, &tn));
    vl_f4_storeu(keys, tn);
    return bits;
}

/* The leaf's test; a sweep that is done has its record retired (limit -1), which ends its walk. */
VL_INLINE vl_status sweep_leaf(int tris, void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                               const vl_bvh_node4* parent, uint32_t lane) {
    sweep_ctx* x = vctx;
    sweep_state* s = &x->state[slot];
    const uint32_t first = parent->child[lane], count = parent->count[lane];
    if (tris)
        vl_sweep_leaf_tris(bvh, first, count, &x->q[id], s->rec, x->any_hit, &x->best[id]);
    else
        vl_sweep_leaf_boxes(bvh, first, count, &x->q[id], s->rec, x->any_hit, &x->best[id]);
    s->s.tmax = vl_f4_set1(s->rec[VL_SR_TMAX]);
    return VL_OK;
}

static vl_status sweep_leaf_tris(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                 const vl_bvh_node4* parent, uint32_t lane) {
    return sweep_leaf(1, vctx, bvh, slot, id, parent, lane);
}

static vl_status sweep_leaf_boxes(void* vctx, const vl_bvh* bvh, uint32_t slot, uint32_t id,
                                  const vl_bvh_node4* parent, uint32_t lane) {
    return sweep_leaf(0, vctx, bvh, slot, id, parent, lane);
}

static float sweep_limit(void* vctx, uint32_t slot) { return ((sweep_ctx*)vctx)->state[slot].rec[VL_SR_TMAX]; }

static const vl_query_walk_kind k_sweep_tris = {.keyed = 1, .leaf_rows = VL_BVH_TRI_FLOATS,
                                                .start = sweep_start, .move = sweep_move,
                                                .node = sweep_node, .leaf = sweep_leaf_tris, .limit = sweep_limit};
static const vl_query_walk_kind k_sweep_boxes = {.keyed = 1, .start = sweep_start, .move = sweep_move,
                                                 .node = sweep_node, .leaf = sweep_leaf_boxes, .limit = sweep_limit};

/* The sweeps walked in `slots` walks (slots >= 1); the leaf tests never fail. */
VL_INLINE void trace(const vl_query_walk_kind* kind, const vl_bvh* bvh, const vl_sweep_query* q, uint32_t n,
                     int any_hit, vl_sweep_best* best, vl_query_walk* walk, sweep_state* state, uint32_t slots) {
    sweep_ctx x = {q, best, any_hit, state};
    vl_query_walks walks = vl_query_walks_make(walk, slots);
    for (uint32_t i = 0; i < n; i++) (void)vl_query_walks_add(kind, &x, bvh, &walks, i, 0);
    (void)vl_query_walks_drain(kind, &x, bvh, &walks);
}

/* One walk's stack for one sweep, VL_QUERY_WALKS walks' for more: a single sweep takes 3.4 KB of
 * the C stack, not 27. */
static VL_NOINLINE void trace_one(const vl_bvh* bvh, const vl_sweep_query* q, int any_hit,
                                                vl_sweep_best* best) {
    vl_query_walk walk;
    sweep_state state;
    if (bvh->kind == VL_BVH_TRIANGLES)
        trace(&k_sweep_tris, bvh, q, 1, any_hit, best, &walk, &state, 1);
    else
        trace(&k_sweep_boxes, bvh, q, 1, any_hit, best, &walk, &state, 1);
}

static VL_NOINLINE void trace_many(const vl_bvh* bvh, const vl_sweep_query* q, uint32_t n, int any_hit,
                                                 vl_sweep_best* best) {
    vl_query_walk walk[VL_QUERY_WALKS];
    sweep_state state[VL_QUERY_WALKS];
    if (bvh->kind == VL_BVH_TRIANGLES)
        trace(&k_sweep_tris, bvh, q, n, any_hit, best, walk, state, VL_QUERY_WALKS);
    else
        trace(&k_sweep_boxes, bvh, q, n, any_hit, best, walk, state, VL_QUERY_WALKS);
}

void vl_sweep_trace_walks(const vl_bvh* bvh, const vl_sweep_query* q, uint32_t n, int any_hit, vl_sweep_best* best) {
    if (n == 1) trace_one(bvh, q, any_hit, best);
    else if (n) trace_many(bvh, q, n, any_hit, best);
}
