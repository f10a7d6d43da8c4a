/* Single-ray traversal over the 4-wide nodes: one ray against 4 child boxes per instruction,
 * the children hit pushed farthest first with their entry t, so that a child is skipped when a
 * closer hit has landed since (any hit: the children that hold the origin last); a leaf's
 * triangles VL_LW per instruction. One ray at a time (vl_bvh_raycast1, the baseline of the
 * bench), or 16 walks interleaved in rounds for small batches and a batch's remnants (on AVX2,
 * two walks per 8-lane node step). */
#include "bvh/traverse.h"

#include <stddef.h>
#include <string.h>

#include "simd/bvh_kernels.h"

/* A leaf's triangles meet the ray VL_LW at a time, one per lane, loaded from its rows (the
 * preferred width: one test covers a leaf of up to 8 on AVX2). */
#if VL_SIMD_PREFERRED_WIDTH == 8
#define VL_LW 8u
#define VL_LV(op) vl_f8_##op
#define VL_LEAF_TRIS vl_b8_ray_tri_rows
typedef vl_f8 vl_leafv;
#else
#define VL_LW 4u
#define VL_LV(op) vl_f4_##op
#define VL_LEAF_TRIS vl_b4_ray_tri_rows
typedef vl_f4 vl_leafv;
#endif

/* The walks' node steps go two walks per 8-lane pass (push_children_pair) where 8 lanes are native. */
#define VL_PAIRS (VL_SIMD_PREFERRED_WIDTH == 8)

/* The ray broadcast to VL_LW lanes for the leaf test. */
typedef struct vl_leafray {
    vl_leafv o[3], d[3], tmin;
} vl_leafray;

/* A walk from the root pushes at most 3 entries per level net; a seeded one starts with its seeds. */
#define VL_STACK1_SIZE (3u * VL_BVH_MAX_DEPTH + 8u + VL_SEEDS_PER_RAY_MAX)

/* What a walk visits next: count > 0, a leaf of `count` primitives from slot `child`; count == 0,
 * the children of node4 `child`. */
typedef struct vl_visit {
    uint32_t child, count;
} vl_visit;

/* A walk's stack of visits with their entry t, in columns so that a node4's 4 children go on in
 * three vector stores (entries past the top are scratch). */
typedef struct vl_stack1 {
    uint32_t child[VL_STACK1_SIZE], count[VL_STACK1_SIZE];
    float tnear[VL_STACK1_SIZE];
} vl_stack1;

/* The leaf's triangles, VL_LW per test. The answer is the scalar loop's (each triangle in slot
 * order, tmax shrinking): any hit takes the first lane hit; closest hit the least t, the last of
 * equal ones. Returns 1 when an any-hit query is done. */
static inline int leaf_tris(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_leafray* r, int any_hit,
                            float* tmax, vl_hit* hit) {
    const float* rows = vl_bvh_leaf_rows(bvh, first);
    for (uint32_t s = 0; s < count; s += VL_LW) {
        uint32_t n = count - s < VL_LW ? count - s : VL_LW;
        vl_leafv t, u, v;
        uint32_t bits = VL_LEAF_TRIS(rows + s, count, n, r->o, r->d, r->tmin, VL_LV(set1)(*tmax), &t, &u, &v);
        if (!bits) continue; /* predicted: a branch, unlike a select, does not hold tmax on the test */
        float ts[VL_LW], us[VL_LW], vs[VL_LW];
        VL_LV(storeu)(ts, t);
        VL_LV(storeu)(us, u);
        VL_LV(storeu)(vs, v);
        uint32_t j = (uint32_t)__builtin_ctz(bits);
        if (!any_hit) {
            for (uint32_t b = bits & (bits - 1); b; b &= b - 1) {
                uint32_t i = (uint32_t)__builtin_ctz(b);
                if (ts[i] <= ts[j]) j = i;
            }
        }
        *tmax = ts[j];
        hit->t = ts[j], hit->prim = vl_bvh_leaf_prim(rows, count, s + j), hit->u = us[j], hit->v = vs[j];
        if (any_hit) return 1;
    }
    return 0;
}

/* Tests the leaf's primitives; returns 1 when an any-hit query is done. */
static inline int leaf_test(const vl_bvh* bvh, uint32_t first, uint32_t count, const float* rec,
                            const vl_leafray* lr, int parallel, int any_hit, float* tmax, vl_hit* hit) {
    if (bvh->kind == VL_BVH_TRIANGLES) return leaf_tris(bvh, first, count, lr, any_hit, tmax, hit);
    for (uint32_t s = first, end = first + count; s < end; s++) {
        const vl_bvh_box* box = &bvh->boxes[s];
        float t;
        if (vl_bvh_ray_box(rec, box->min, box->max, *tmax, parallel, &t)) {
            *tmax = t;
            hit->t = t, hit->prim = box->prim, hit->u = 0.0f, hit->v = 0.0f;
            if (any_hit) return 1;
        }
    }
    return 0;
}

/* The ray's registers: its slab form (4 lanes, one per child box; paired walks go without) and its
 * leaf form. */
typedef struct vl_ray1 {
    vl_rayv4 slab;
    vl_leafray leaf;
    int parallel, any_hit;
    uint32_t near[3], far[3]; /* per axis, the bounds row the ray enters and leaves by */
} vl_ray1;

/* Per direction octant (bit a set: axis a goes down), the bounds row by which a ray enters on each
 * axis; it leaves by those of the opposite octant. */
static const uint32_t octant_rows[8][3] = {{0, 1, 2}, {3, 1, 2}, {0, 4, 2}, {3, 4, 2},
                                           {0, 1, 5}, {3, 1, 5}, {0, 4, 5}, {3, 4, 5}};

/* The ray's leaf form (what every walk needs) and its flags. */
static inline void ray1_load_leaf(vl_ray1* r, const float* rec, int parallel, int any_hit) {
    for (int a = 0; a < 3; a++) r->leaf.o[a] = VL_LV(set1)(rec[a]), r->leaf.d[a] = VL_LV(set1)(rec[VL_RR_DIR + a]);
    r->leaf.tmin = VL_LV(set1)(rec[VL_RR_TMIN]);
    r->parallel = parallel, r->any_hit = any_hit;
}

/* The ray's slab form with its entry and exit rows (for push_children; the paired steps read the
 * record instead). */
static inline void ray1_load_slab(vl_ray1* r, const float* rec) {
    for (int a = 0; a < 3; a++)
        r->slab.origin[a] = vl_f4_set1(rec[a]), r->slab.inv_dir[a] = vl_f4_set1(rec[VL_RR_INV + a]);
    /* scalar reads: raycast1 has just stored the record, which a vector load would stall on */
    const uint32_t octant = (uint32_t)(rec[VL_RR_INV] < 0.0f) | (uint32_t)(rec[VL_RR_INV + 1] < 0.0f) << 1 |
                            (uint32_t)(rec[VL_RR_INV + 2] < 0.0f) << 2;
    memcpy(r->near, octant_rows[octant], sizeof r->near);
    memcpy(r->far, octant_rows[octant ^ 7u], sizeof r->far);
    r->slab.tmin = vl_f4_set1(rec[VL_RR_TMIN]);
}

/* The entry t by which a node's children hit are ordered: for any hit, those that hold the origin
 * (entered at tmin) go last, as if entered at tmax, and the others nearest first. A ray that
 * leaves a surface (a bounce, a shadow ray) starts inside the boxes around that surface, which it
 * rarely hits again, and crosses them only in part. Measured (session 12, any hit, single ray and
 * batches of 1024): bunny diffuse +27-28%, camel diffuse +18%, world diffuse +4-6%; line of sight
 * -2% to +4%; world random -3%. Deferring only the leaves lost 10-28%, and deferring a batch's
 * seeds too lost 2-5%. An any-hit ray's tmax stays put until it is done, so no such entry is
 * culled. */
static inline vl_f4 visit_order4(const vl_ray1* r, vl_f4 tn, float tmax) {
    return r->any_hit ? vl_b4_origin_last(tn, r->slab.tmin, vl_f4_set1(tmax)) : tn;
}

/* vl_k4_slab with each axis's entry and exit planes picked once per ray by the direction's sign:
 * the same values (no NaN here: every inverse is finite and nonzero), 6 min/max fewer. */
static inline vl_f4 slab_signed(const vl_bvh_node4* w, const vl_ray1* r, float tmax, vl_f4* tnear) {
    vl_f4 tn = r->slab.tmin, tf = vl_f4_set1(tmax);
    for (int a = 0; a < 3; a++) {
        vl_f4 o = r->slab.origin[a], inv = r->slab.inv_dir[a];
        tn = vl_f4_max(tn, vl_f4_mul(vl_f4_sub(vl_f4_load(w->bounds[r->near[a]]), o), inv));
        tf = vl_f4_min(tf, vl_f4_mul(vl_f4_sub(vl_f4_load(w->bounds[r->far[a]]), o), inv));
    }
    *tnear = tn;
    return vl_f4_le(tn, tf);
}

/* The parallel-axis-exact slab test (some inverse may be infinite). */
static inline vl_f4 slab_exact(const vl_bvh_node4* w, vl_ray1* r, float tmax, vl_f4* tnear) {
    vl_boxv4 b;
    for (int a = 0; a < 3; a++) b.min[a] = vl_f4_load(w->bounds[a]), b.max[a] = vl_f4_load(w->bounds[3 + a]);
    r->slab.tmax = vl_f4_set1(tmax);
    return vl_k4_slab_parallel(&r->slab, &b, tnear);
}

/* Where the leaves' primitives are, as an integer, and the bytes of one. */
static inline uintptr_t leaf_base(const vl_bvh* bvh, uintptr_t* leaf_bytes) {
    const int tris = bvh->kind == VL_BVH_TRIANGLES;
    *leaf_bytes = tris ? sizeof(float) * VL_BVH_TRI_FLOATS : sizeof(vl_bvh_box);
    return tris ? (uintptr_t)bvh->tris : (uintptr_t)bvh->boxes;
}

/* Fetches the children of w whose bits are set (a node4: both its lines; a leaf: the first and
 * the last of the lines its primitives take); the others' fetches go to w itself, in cache. No
 * branch: the addresses are integers until chosen (an empty child's points nowhere). Inlined
 * always: gcc 12 deletes a call to a function that only prefetches (its modref pass finds no side
 * effect). */
VL_INLINE void prefetch_hit_children(const vl_bvh* bvh, const vl_bvh_node4* w, uint32_t bits) {
    uintptr_t leaf_bytes;
    const uintptr_t leaves = leaf_base(bvh, &leaf_bytes), self = (uintptr_t)w;
    for (uint32_t i = 0; i < 4; i++) {
        uintptr_t c = w->child[i], n = w->count[i], take = (uintptr_t)0 - ((bits >> i) & 1u);
        uintptr_t node = (uintptr_t)bvh->wide + c * sizeof(vl_bvh_node4), leaf = leaves + c * leaf_bytes;
        uintptr_t first = n ? leaf : node, last = n ? leaf + (n - 1) * leaf_bytes : node + 64;
        __builtin_prefetch((const void*)((first & take) | (self & ~take)));
        __builtin_prefetch((const void*)((last & take) | (self & ~take)));
    }
}

/* Stores 4 visits (three columns) on the stack at top. */
VL_INLINE void stack_put4(vl_stack1* stack, uint32_t top, vl_i4 child, vl_i4 count, vl_i4 tnear) {
    vl_i4_storeu(&stack->child[top], child);
    vl_i4_storeu(&stack->count[top], count);
    vl_i4_storeu(&stack->tnear[top], tnear);
}

/* Puts the visits child[j], count[j] (j < 4) whose lane of `hit` is set on the stack at top,
 * farthest entry t (tn) first, in the order of a sorting network: all 4 are stored, the others
 * past the new top, so that no branch depends on how many go on. Returns the new top. */
VL_INLINE uint32_t stack_push4(vl_stack1* stack, uint32_t top, vl_f4 hit, vl_f4 tn, const uint32_t* child,
                               const uint32_t* count) {
    vl_i4 key = vl_b4_far_first(hit, tn), lane = vl_i4_and(key, vl_i4_set1(3));
    stack_put4(stack, top, vl_i4_permute(vl_i4_loadu(child), lane), vl_i4_permute(vl_i4_loadu(count), lane),
               vl_i4_and(key, vl_i4_set1(~3)));
    return top + (uint32_t)__builtin_popcount(vl_f4_bits(hit));
}

/* One ray against the 4 child boxes of a node4 (4 lanes); the children hit within [tmin, tmax]
 * go on the stack, farthest first (of equal ones, the first child on top), so that the nearest is
 * popped next, without a branch on how many were hit, which no predictor learns. `prefetch`:
 * the children hit are fetched at once, which the single-ray walk wants (measured on the world:
 * +12-20%, the far ones' loads overlap the near one's subtree) and the interleaved walks do not
 * (their steps already overlap each other's loads; measured -20-25% on the bunny, and on the
 * camel, whose tree fits in L2). */
static inline uint32_t push_children(const vl_bvh* bvh, const vl_bvh_node4* w, vl_ray1* r, float tmax,
                                     vl_stack1* stack, uint32_t top, int prefetch) {
    vl_f4 tn, hit = r->parallel ? slab_exact(w, r, tmax, &tn) : slab_signed(w, r, tmax, &tn);
    if (prefetch) prefetch_hit_children(bvh, w, vl_f4_bits(hit));
    return stack_push4(stack, top, hit, visit_order4(r, tn, tmax), w->child, w->count);
}

/* Pops the next visit of a walk still nearer than tmax into *at; 0 when there is none left. */
static inline int walk_pop(const vl_stack1* stack, uint32_t* top, float tmax, vl_visit* at) {
    while (*top) {
        uint32_t e = --*top;
        if (stack->tnear[e] <= tmax) {
            at->child = stack->child[e], at->count = stack->count[e];
            return 1;
        }
    }
    return 0;
}

/* Tests the leaf `at`'s primitives. An any-hit query that is done gets tmax = -1 and an empty
 * stack. */
static inline void walk_leaf(const vl_bvh* bvh, vl_ray1* r, const float* rec, uint32_t* top, vl_visit at,
                             float* tmax, vl_hit* hit) {
    uint32_t done = (uint32_t)leaf_test(bvh, at.child, at.count, rec, &r->leaf, r->parallel, r->any_hit, tmax, hit);
    *top &= done - 1u;
    *tmax = done ? -1.0f : *tmax;
}

/* Visits `at` (one ray at a time): pushes a node4's children hit, fetching them, or tests a
 * leaf's primitives. */
static inline void walk_visit(const vl_bvh* bvh, vl_ray1* r, const float* rec, vl_stack1* stack, uint32_t* top,
                              vl_visit at, float* tmax, vl_hit* hit) {
    if (!at.count) {
        *top = push_children(bvh, &bvh->wide[at.child], r, *tmax, stack, *top, 1);
        return;
    }
    walk_leaf(bvh, r, rec, top, at, tmax, hit);
}

/* Fetches what the walk visits next, unless culled: the top visit of its stack (a node4's two
 * lines, a leaf's first four). Inlined always (see prefetch_hit_children). */
VL_INLINE void prefetch_next(const vl_bvh* bvh, const vl_stack1* stack, uint32_t top) {
    if (!top) return;
    uintptr_t leaf_bytes, c = stack->child[top - 1];
    const uintptr_t leaves = leaf_base(bvh, &leaf_bytes);
    const int leaf = stack->count[top - 1] != 0;
    const char* p = (const char*)(leaf ? leaves + c * leaf_bytes : (uintptr_t)bvh->wide + c * sizeof(vl_bvh_node4));
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    if (leaf) __builtin_prefetch(p + 128), __builtin_prefetch(p + 192);
}

/* A ray in flight in the interleaved walk. */
typedef struct vl_walk {
    vl_ray1 ray;
    float* rec;
    vl_hit* hit;
    uint32_t top;
    vl_visit at; /* popped for this round */
    vl_stack1 stack;
} vl_walk;

/* Starts the next job on w, its start on the stack; 0 when there is none left. Seeds go on
 * farthest first: up to 4 ordered by the push's sorting network, more by an insertion sort. `slab`:
 * the walk's node steps go by push_children (not paired). */
static int walk_start(vl_walk* w, float* rec, const vl_bvh_jobs* jobs, uint32_t* next, int parallel, int any_hit,
                      int slab, vl_hit* hits) {
    if (*next >= jobs->n) return 0;
    uint32_t j = (*next)++, id = jobs->ids[j];
    w->rec = rec + VL_RAYREC_FLOATS * (size_t)id;
    w->hit = &hits[id];
    ray1_load_leaf(&w->ray, w->rec, parallel, any_hit);
    if (slab) ray1_load_slab(&w->ray, w->rec);
    vl_stack1* st = &w->stack;
    if (!jobs->first) {
        st->child[0] = jobs->starts ? jobs->starts[j] : 0, st->count[0] = 0, st->tnear[0] = -INFINITY;
        w->top = 1;
        return 1;
    }
    uint32_t first = jobs->first[id], m = jobs->first[id + 1] - first;
    if (m <= 4) { /* most rays: no branch per seed */
        w->top = stack_push4(st, 0, vl_f4_first(m), vl_f4_loadu(jobs->tnear + first), jobs->child + first,
                             jobs->count + first);
        return 1;
    }
    uint32_t top = 0;
    for (uint32_t k = first, end = first + m; k < end; k++) {
        float t = jobs->tnear[k];
        uint32_t at = top++;
        for (; at && st->tnear[at - 1] < t; at--)
            st->child[at] = st->child[at - 1], st->count[at] = st->count[at - 1], st->tnear[at] = st->tnear[at - 1];
        st->child[at] = jobs->child[k], st->count[at] = jobs->count[k], st->tnear[at] = t;
    }
    w->top = top;
    return 1;
}

#if VL_PAIRS
/* The node4 steps of two walks in one 8-lane pass: walk a's ray against its node's 4 child boxes
 * in lanes 0-3, walk b's in lanes 4-7, by vl_k8_slab, whose entry t per axis is the lesser of the
 * two planes' (slab_signed's value, picked there by the direction's sign); the children hit go on
 * each walk's stack as stack_push4 puts them. a may be b (a round's odd one out): both halves then
 * hold its step, written twice to the same slots. Only where 8 lanes are native: emulated, they
 * measure no gain. */
static inline void push_children_pair(const vl_bvh* bvh, vl_walk* a, vl_walk* b) {
    const vl_bvh_node4 *na = &bvh->wide[a->at.child], *nb = &bvh->wide[b->at.child];
    vl_rayv8 r;
    vl_boxv8 box;
    /* the records' quads (origin, tmin) and (inv_dir, tmax), each lane broadcast in its half */
    const vl_f8 q0 = vl_f8_join(vl_f4_load(a->rec), vl_f4_load(b->rec));
    const vl_f8 q1 = vl_f8_join(vl_f4_load(a->rec + VL_RR_INV), vl_f4_load(b->rec + VL_RR_INV));
    r.origin[0] = vl_f8_shuffle(q0, 0x00), r.origin[1] = vl_f8_shuffle(q0, 0x55);
    r.origin[2] = vl_f8_shuffle(q0, 0xAA), r.tmin = vl_f8_shuffle(q0, 0xFF);
    r.inv_dir[0] = vl_f8_shuffle(q1, 0x00), r.inv_dir[1] = vl_f8_shuffle(q1, 0x55);
    r.inv_dir[2] = vl_f8_shuffle(q1, 0xAA), r.tmax = vl_f8_shuffle(q1, 0xFF);
    for (int ax = 0; ax < 3; ax++) {
        box.min[ax] = vl_f8_join(vl_f4_load(na->bounds[ax]), vl_f4_load(nb->bounds[ax]));
        box.max[ax] = vl_f8_join(vl_f4_load(na->bounds[3 + ax]), vl_f4_load(nb->bounds[3 + ax]));
    }
    vl_f8 tn, hit = vl_k8_slab(&r, &box, &tn);
    if (a->ray.any_hit) tn = vl_b8_origin_last(tn, r.tmin, r.tmax); /* as visit_order4 */
    vl_i8 key = vl_b8_far_first(hit, tn), lane = vl_i8_and(key, vl_i8_set1(3));
    vl_i8 child = vl_i8_permute_halves(vl_i8_join(vl_i4_loadu(na->child), vl_i4_loadu(nb->child)), lane);
    vl_i8 count = vl_i8_permute_halves(vl_i8_join(vl_i4_loadu(na->count), vl_i4_loadu(nb->count)), lane);
    vl_i8 tnear = vl_i8_and(key, vl_i8_set1(~3));
    const uint32_t bits = vl_f8_bits(hit), top_a = a->top, top_b = b->top;
    stack_put4(&a->stack, top_a, vl_i8_low(child), vl_i8_low(count), vl_i8_low(tnear));
    stack_put4(&b->stack, top_b, vl_i8_high(child), vl_i8_high(count), vl_i8_high(tnear));
    a->top = top_a + (uint32_t)__builtin_popcount(bits & 15u);
    b->top = top_b + (uint32_t)__builtin_popcount(bits >> 4);
}
#endif

/* Rounds: every live walk pops its next visit, onto the node list or the leaf list (no branch on
 * which); then the node4 visits are made, two walks at a time where 8 lanes are native, and then
 * the leaves. A walk whose stack is empty starts the next job. Measured against one walk's step
 * per turn in round robin (session 8, batches of 1024, closest hit, Mrays/s): AVX2, bunny random
 * 12.2 -> 12.9, diffuse 2.77 -> 3.17, LOS 5.19 -> 6.06; world diffuse 3.38 -> 3.87; SSE4.1 (one
 * walk per step), bunny random 8.1 -> 9.1, diffuse 2.04 -> 2.26, LOS 4.19 -> 4.48. A step's
 * loads overlap the other walks' steps, so fetching a walk's next visit a round early
 * (prefetch_next) pays in large trees only (session 7, round robin: worlds of 609K and 1.1M triangles, 46 and 85 MB,
 * +8-12% and +16-27%; 131K triangles, 10 MB, -4 to -7%; the bunny and the camel -6 to -20%). */
void vl_bvh_trace_interleaved(const vl_bvh* bvh, float* rec, const vl_bvh_jobs* jobs, int parallel, int any_hit,
                              vl_hit* hits, void* scratch) {
    vl_walk* w = scratch;
    vl_walk *nodes[VL_WALKS], *leaves[VL_WALKS];
    vl_walk* running[VL_WALKS];
    uint32_t next = 0, live = VL_WALKS;
    const int ahead = vl_bvh_outgrows_cache(bvh);
    /* the pairs' slab wants every inverse finite */
    const int pairs = VL_PAIRS && !parallel && vl_bvh_tune.walk_pairs;
    /* the walks begin done, on a spare record, so that their jobs start in one place (inlined) */
    float spare[VL_RAYREC_FLOATS] = {0.0f};
    for (uint32_t k = 0; k < VL_WALKS; k++) w[k].rec = spare, w[k].top = 0, running[k] = &w[k];
    while (live) {
        uint32_t n_nodes = 0, n_leaves = 0;
        for (uint32_t k = 0; k < live;) {
            vl_walk* s = running[k];
            /* tmax lives in the record: walks of the same ray (a batch's remnants) share it */
            const float tmax = s->rec[VL_RR_TMAX];
            if (walk_pop(&s->stack, &s->top, tmax, &s->at)) {
                const uint32_t leaf = s->at.count != 0;
                nodes[n_nodes] = s, leaves[n_leaves] = s;
                n_nodes += leaf ^ 1u, n_leaves += leaf;
                k++;
                continue;
            }
            s->rec[VL_RR_TMAX2] = tmax;
            if (!walk_start(s, rec, jobs, &next, parallel, any_hit, !pairs, hits)) running[k] = running[--live];
        }
        uint32_t i = 0;
#if VL_PAIRS
        for (; pairs && i + 1 < n_nodes; i += 2) {
            push_children_pair(bvh, nodes[i], nodes[i + 1]);
            if (ahead) prefetch_next(bvh, &nodes[i]->stack, nodes[i]->top);
            if (ahead) prefetch_next(bvh, &nodes[i + 1]->stack, nodes[i + 1]->top);
        }
        if (pairs && i < n_nodes) { /* the odd one out, paired with itself */
            push_children_pair(bvh, nodes[i], nodes[i]);
            if (ahead) prefetch_next(bvh, &nodes[i]->stack, nodes[i]->top);
            i++;
        }
#endif
        for (; i < n_nodes; i++) {
            vl_walk* s = nodes[i];
            s->top = push_children(bvh, &bvh->wide[s->at.child], &s->ray, s->rec[VL_RR_TMAX], &s->stack, s->top, 0);
            if (ahead) prefetch_next(bvh, &s->stack, s->top);
        }
        for (i = 0; i < n_leaves; i++) {
            vl_walk* s = leaves[i];
            walk_leaf(bvh, &s->ray, s->rec, &s->top, s->at, &s->rec[VL_RR_TMAX], s->hit);
            if (ahead) prefetch_next(bvh, &s->stack, s->top);
        }
    }
}

size_t vl_bvh_interleaved_scratch(void) { return sizeof(vl_walk) * VL_WALKS; }

void vl_bvh_queue_flush(vl_bvh_queue* q) {
    vl_bvh_jobs jobs = {q->ids, q->n, q->starts, NULL, NULL, NULL, NULL};
    vl_bvh_trace_interleaved(q->bvh, q->rec, &jobs, q->parallel, q->any_hit, q->hits, q->walks);
    q->n = 0;
}

vl_status vl_bvh_raycast1(const vl_bvh* bvh, const vl_ray* ray, uint32_t flags, vl_hit* hit) {
    if (!bvh || !ray || !hit) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_BVH_RAY_FLAGS) return VL_ERR_INVALID_FLAGS;
    *hit = vl_bvh_miss();
    if (!vl_bvh_ray_valid(ray)) return VL_ERR_INVALID_QUERY;
    _Alignas(16) float rec[VL_RAYREC_FLOATS];
    vl_ray1 r;
    ray1_load_leaf(&r, rec, vl_bvh_rayrec_set(rec, ray) != 0, (flags & VL_RAY_ANY) != 0);
    ray1_load_slab(&r, rec);
    vl_stack1 stack;
    vl_visit at = {0, 0}; /* from the root's children */
    uint32_t top = 0;
    float tmax = rec[VL_RR_TMAX];
    do walk_visit(bvh, &r, rec, &stack, &top, at, &tmax, hit);
    while (walk_pop(&stack, &top, tmax, &at));
    return VL_OK;
}
