/* Single-ray walks interleaved in rounds (see ray_walk.h), for small batches and the ray
 * streams' last rays. Rays keep their own walks rather than the shared ones (engine/walks.h): these
 * pop every walk's next visit before any node test, test nodes two walks per 8-lane pass, push 4
 * children branch-free by a sorting network, start from several seeds and share a record among a
 * ray's walks, all of which a keyed kind of the shared walks would give up (src/bvh/README.md;
 * docs/measurements/rejected.md). */
#include "bvh/rays/ray1.h"
#include "compiler.h"

/* The walks' node steps go two walks per 8-lane pass (push_children_pair) where 8 lanes are native. */
#define VL_PAIRS (VL_BW == 8)

/* Fetches what the walk visits next, unless culled: the top visit of its stack (a node4's two
 * lines, a leaf's first four). Inlined always (see vl_ray1_prefetch_children). */
VL_INLINE void prefetch_next(const vl_bvh* bvh, const vl_stack1* stack, uint32_t top) {
    if (!top) return;
    uintptr_t leaf_bytes, c = stack->child[top - 1];
    const uintptr_t leaves = vl_bvh_leaf_base(bvh, &leaf_bytes);
    const int leaf = stack->count[top - 1] != 0;
    const char* p = (const char*)(leaf ? leaves + c * leaf_bytes : (uintptr_t)bvh->wide + c * sizeof(vl_bvh_node4));
    VL_PREFETCH(p);
    VL_PREFETCH(p + 64);
    if (leaf) VL_PREFETCH(p + 128), VL_PREFETCH(p + 192);
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
 * the walk's node steps go by vl_ray1_push_children (not paired). */
static int walk_start(vl_walk* w, float* rec, const vl_bvh_jobs* jobs, uint32_t* next, int parallel, int any_hit,
                      int slab, vl_hit* hits) {
    if (*next >= jobs->n) return 0;
    uint32_t j = (*next)++, id = jobs->ids[j];
    w->rec = rec + VL_RAYREC_FLOATS * (size_t)id;
    w->hit = &hits[id];
    vl_ray1_load_leaf(&w->ray, w->rec, parallel, any_hit);
    if (slab) vl_ray1_load_slab(&w->ray, w->rec);
    vl_stack1* st = &w->stack;
    if (!jobs->first) {
        st->child[0] = jobs->starts ? jobs->starts[j] : 0, st->count[0] = 0, st->tnear[0] = -INFINITY;
        w->top = 1;
        return 1;
    }
    uint32_t first = jobs->first[id], m = jobs->first[id + 1] - first;
    if (m <= 4) { /* most rays: no branch per seed */
        w->top = vl_stack1_push4(st, 0, vl_f4_first(m), vl_f4_loadu(jobs->tnear + first), jobs->child + first,
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
 * in lanes 0-3, walk b's in lanes 4-7, by vl_kw_slab, whose entry t per axis is the lesser of the
 * two planes' (vl_ray1_slab_signed's value, picked there by the direction's sign); the children
 * hit go on each walk's stack as vl_stack1_push4 puts them. a may be b (a round's odd one out):
 * both halves then hold its step, written twice to the same slots. Only where 8 lanes are
 * native: emulated, they measure no gain. */
static inline void push_children_pair(const vl_bvh* bvh, vl_walk* a, vl_walk* b) {
    const vl_bvh_node4 *na = &bvh->wide[a->at.child], *nb = &bvh->wide[b->at.child];
    vl_rayw r;
    vl_boxw box;
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
    vl_f8 tn, hit = vl_kw_slab(&r, &box, &tn);
    if (a->ray.any_hit) tn = vl_k8_origin_last(tn, r.tmin, r.tmax); /* as vl_ray1_visit_order */
    vl_i8 key = vl_k8_far_first(hit, tn), lane = vl_i8_and(key, vl_i8_set1(3));
    vl_i8 child = vl_i8_permute_halves(vl_i8_join(vl_i4_loadu(na->child), vl_i4_loadu(nb->child)), lane);
    vl_i8 count = vl_i8_permute_halves(vl_i8_join(vl_i4_loadu(na->count), vl_i4_loadu(nb->count)), lane);
    vl_i8 tnear = vl_i8_and(key, vl_i8_set1(~3));
    const uint32_t bits = vl_f8_bits(hit), top_a = a->top, top_b = b->top;
    vl_stack1_put4(&a->stack, top_a, vl_i8_low(child), vl_i8_low(count), vl_i8_low(tnear));
    vl_stack1_put4(&b->stack, top_b, vl_i8_high(child), vl_i8_high(count), vl_i8_high(tnear));
    a->top = top_a + vl_popcount32(bits & 15u);
    b->top = top_b + vl_popcount32(bits >> 4);
}
#endif

/* Rounds: every live walk pops its next visit, onto the node list or the leaf list (no branch on
 * which); then the node4 visits are made, two walks at a time where 8 lanes are native, and then
 * the leaves. A walk whose stack is empty starts the next job. The pops read what the walks wrote
 * a round ago, so a mispredicted pop does not flush the steps in flight: rounds run faster than
 * one walk's step per turn in round robin, on 8 lanes and on 4 (docs/measurements/rays.md). A
 * step's loads overlap the other walks' steps, so fetching a walk's next visit a round early
 * (prefetch_next) pays in large trees only (see VL_WALK_PREFETCH_BYTES). */
void vl_bvh_trace_walks(const vl_bvh* bvh, float* rec, const vl_bvh_jobs* jobs, int parallel, int any_hit,
                        vl_hit* hits, void* scratch) {
    vl_walk* w = scratch;
    vl_walk *nodes[VL_WALKS], *leaves[VL_WALKS];
    vl_walk* running[VL_WALKS];
    uint32_t next = 0, live = VL_WALKS;
    const int ahead = vl_bvh_outgrows_cache(bvh);
    /* the pairs' slab wants every inverse finite */
    const int pairs = VL_PAIRS && !parallel;
    /* the walks begin done, on a spare record, so that their jobs start in one place (inlined) */
    float spare[VL_RAYREC_FLOATS] = {0.0f};
    for (uint32_t k = 0; k < VL_WALKS; k++) w[k].rec = spare, w[k].top = 0, running[k] = &w[k];
    while (live) {
        uint32_t n_nodes = 0, n_leaves = 0;
        for (uint32_t k = 0; k < live;) {
            vl_walk* s = running[k];
            /* tmax lives in the record: walks of the same ray (the streams' last rays) share it */
            const float tmax = s->rec[VL_RR_TMAX];
            if (vl_stack1_pop(&s->stack, &s->top, tmax, &s->at)) {
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
            s->top = vl_ray1_push_children(bvh, &bvh->wide[s->at.child], &s->ray, s->rec[VL_RR_TMAX], &s->stack,
                                           s->top, 0);
            if (ahead) prefetch_next(bvh, &s->stack, s->top);
        }
        for (i = 0; i < n_leaves; i++) {
            vl_walk* s = leaves[i];
            vl_ray1_walk_leaf(bvh, &s->ray, s->rec, &s->top, s->at, &s->rec[VL_RR_TMAX], s->hit);
            if (ahead) prefetch_next(bvh, &s->stack, s->top);
        }
    }
}

size_t vl_bvh_walks_scratch(void) { return sizeof(vl_walk) * VL_WALKS; }

void vl_bvh_queue_flush(vl_bvh_queue* q) {
    vl_bvh_jobs jobs = {q->ids, q->n, q->starts, NULL, NULL, NULL, NULL};
    vl_bvh_trace_walks(q->bvh, q->rec, &jobs, q->parallel, q->any_hit, q->hits, q->walks);
    q->n = 0;
}
