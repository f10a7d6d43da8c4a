/* Sweeps down the 4-wide tree as interleaved walks: up to VL_SWEEP_WALKS sweeps at once, one step
 * (a node or a leaf) each in turn, so that the node and leaf fetches one walk asks for land while
 * the others work. Each walk is the single walk's: the centre ray against the 4 child boxes grown
 * by the extent, children pushed farthest first, a child skipped when entered past the best hit. */
#include <string.h>

#include "bvh/sweep.h"

#include "simd/sweep_kernels.h"

/* A walk pushes at most 3 entries per level net. */
#define VL_SWEEP_STACK (3u * VL_BVH_MAX_DEPTH + 8u)

typedef struct sweep_walk {
    vl_sweepv4 s;
    _Alignas(16) float rec[VL_SWEEPREC_FLOATS];
    uint32_t id, top;
    uint32_t child[VL_SWEEP_STACK], count[VL_SWEEP_STACK];
    float tnear[VL_SWEEP_STACK];
} sweep_walk;

static void walk_start(sweep_walk* w, const vl_sweep_query* q, uint32_t id) {
    w->id = id;
    vl_sweep_rec_set(w->rec, q);
    vl_sweep4_broadcast(w->rec, &w->s);
    w->top = 1, w->child[0] = 0, w->count[0] = 0, w->tnear[0] = 0.0f;
}

/* Walk `from` into slot `to`: its state and its pending entries. */
static void walk_move(sweep_walk* to, const sweep_walk* from) {
    to->s = from->s, to->id = from->id, to->top = from->top;
    memcpy(to->rec, from->rec, sizeof to->rec);
    memcpy(to->child, from->child, sizeof(uint32_t) * from->top);
    memcpy(to->count, from->count, sizeof(uint32_t) * from->top);
    memcpy(to->tnear, from->tnear, sizeof(float) * from->top);
}

/* One step of walk w: its nearest pending node or leaf; returns 1 when the walk is over. */
static inline int walk_step(const vl_bvh* bvh, int tris, sweep_walk* w, const vl_sweep_query* q, int any_hit,
                            vl_sweep_best* best) {
    const uint32_t at = --w->top, node = w->child[at], leaf_count = w->count[at];
    if (w->tnear[at] <= w->rec[VL_SR_TMAX]) {
        if (leaf_count) {
            int done = tris ? vl_sweep_leaf_tris(bvh, node, leaf_count, q, w->rec, any_hit, best)
                            : vl_sweep_leaf_boxes(bvh, node, leaf_count, q, w->rec, any_hit, best);
            if (done) return 1;
            w->s.tmax = vl_f4_set1(w->rec[VL_SR_TMAX]);
        } else {
            const vl_bvh_node4* n4 = &bvh->wide[node];
            vl_f4 mn[3], mx[3], tn;
            for (int a = 0; a < 3; a++) mn[a] = vl_f4_load(n4->bounds[a]), mx[a] = vl_f4_load(n4->bounds[3 + a]);
            uint32_t bits = vl_f4_bits(vl_sweep4_slab(&w->s, mn, mx, &tn));
            float ts[4];
            vl_f4_storeu(ts, tn);
            /* insert each child hit so that the stack's top holds the nearest */
            const uint32_t base = w->top;
            for (; bits; bits &= bits - 1) {
                uint32_t i = (uint32_t)__builtin_ctz(bits), to = w->top++;
                while (to > base && w->tnear[to - 1] < ts[i]) {
                    w->child[to] = w->child[to - 1], w->count[to] = w->count[to - 1], w->tnear[to] = w->tnear[to - 1];
                    to--;
                }
                w->child[to] = n4->child[i], w->count[to] = n4->count[i], w->tnear[to] = ts[i];
                vl_bvh_prefetch_child(bvh, n4->child[i], n4->count[i], VL_BVH_TRI_FLOATS);
            }
        }
    }
    return w->top == 0;
}

/* The sweeps walked in `slots` walks (slots >= 1). */
static void trace_walks(const vl_bvh* bvh, const vl_sweep_query* q, uint32_t n, int any_hit, vl_sweep_best* best,
                        sweep_walk* walks, uint32_t slots) {
    const int tris = bvh->kind == VL_BVH_TRIANGLES;
    uint32_t live = 0, next = 0;
    while (live || next < n) {
        while (live < slots && next < n) walk_start(&walks[live++], &q[next], next), next++;
        for (uint32_t j = 0; j < live;) {
            sweep_walk* w = &walks[j];
            if (!walk_step(bvh, tris, w, &q[w->id], any_hit, &best[w->id])) {
                j++;
                continue;
            }
            if (next < n) {
                walk_start(w, &q[next], next), next++;
                j++;
            } else if (j != --live) {
                walk_move(w, &walks[live]);
            }
        }
    }
}

/* One walk's stack for one sweep, VL_SWEEP_WALKS walks' for more: a single sweep takes 5 KB of
 * the C stack, not 40. */
static __attribute__((noinline)) void trace_one(const vl_bvh* bvh, const vl_sweep_query* q, int any_hit,
                                                vl_sweep_best* best) {
    sweep_walk walk;
    trace_walks(bvh, q, 1, any_hit, best, &walk, 1);
}

static __attribute__((noinline)) void trace_many(const vl_bvh* bvh, const vl_sweep_query* q, uint32_t n, int any_hit,
                                                 vl_sweep_best* best) {
    sweep_walk walks[VL_SWEEP_WALKS];
    trace_walks(bvh, q, n, any_hit, best, walks, VL_SWEEP_WALKS);
}

void vl_sweep_trace_walks(const vl_bvh* bvh, const vl_sweep_query* q, uint32_t n, int any_hit, vl_sweep_best* best) {
    if (n == 1) trace_one(bvh, q, any_hit, best);
    else if (n) trace_many(bvh, q, n, any_hit, best);
}
