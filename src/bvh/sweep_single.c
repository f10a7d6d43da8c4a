/* One sweep down the 4-wide tree: its centre ray against the 4 child boxes grown by its extent in
 * one instruction, the children hit pushed farthest first, so that the nearest is opened first
 * and a child entered past the best hit so far is skipped. */
#include "bvh/sweep.h"

#include "simd/sweep_kernels.h"

/* A walk pushes at most 3 entries per level net. */
#define VL_SWEEP_STACK (3u * VL_BVH_MAX_DEPTH + 8u)

/* Starts loading a child that will be opened: a node4, or a leaf's rows (its primitives). */
static inline void prefetch_child(const vl_bvh* bvh, int tris, uint32_t child, uint32_t count) {
    const char* p;
    size_t bytes;
    if (!count) {
        p = (const char*)&bvh->wide[child], bytes = sizeof(vl_bvh_node4);
    } else if (tris) {
        p = (const char*)vl_bvh_leaf_rows(bvh, child), bytes = VL_BVH_TRI_FLOATS * sizeof(float) * count;
    } else {
        p = (const char*)&bvh->boxes[child], bytes = sizeof(vl_bvh_box) * count;
    }
    for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(p + at);
}

void vl_sweep_trace1(const vl_bvh* bvh, uint32_t start, const vl_sweep_query* q, float* rec, int any_hit,
                     vl_sweep_best* best) {
    uint32_t child[VL_SWEEP_STACK], count[VL_SWEEP_STACK];
    float tnear[VL_SWEEP_STACK];
    uint32_t top = 0;
    const int tris = bvh->kind == VL_BVH_TRIANGLES;
    vl_sweepv4 s;
    vl_sweep4_broadcast(rec, &s);
    uint32_t node = start, leaf_count = 0;
    float enter = 0.0f;
    for (;;) {
        if (enter <= rec[VL_SR_TMAX]) {
            if (leaf_count) {
                int done = tris ? vl_sweep_leaf_tris(bvh, node, leaf_count, q, rec, any_hit, best)
                                : vl_sweep_leaf_boxes(bvh, node, leaf_count, q, rec, any_hit, best);
                if (done) return;
                s.tmax = vl_f4_set1(rec[VL_SR_TMAX]);
            } else {
                const vl_bvh_node4* w = &bvh->wide[node];
                vl_f4 mn[3], mx[3], tn;
                for (int a = 0; a < 3; a++) mn[a] = vl_f4_load(w->bounds[a]), mx[a] = vl_f4_load(w->bounds[3 + a]);
                uint32_t bits = vl_f4_bits(vl_sweep4_slab(&s, mn, mx, &tn));
                float ts[4];
                vl_f4_storeu(ts, tn);
                /* insert each child hit so that the stack's top holds the nearest */
                const uint32_t base = top;
                for (; bits; bits &= bits - 1) {
                    uint32_t i = (uint32_t)__builtin_ctz(bits), at = top++;
                    while (at > base && tnear[at - 1] < ts[i]) {
                        child[at] = child[at - 1], count[at] = count[at - 1], tnear[at] = tnear[at - 1];
                        at--;
                    }
                    child[at] = w->child[i], count[at] = w->count[i], tnear[at] = ts[i];
                    prefetch_child(bvh, tris, w->child[i], w->count[i]);
                }
            }
        }
        if (!top) return;
        --top;
        node = child[top], leaf_count = count[top], enter = tnear[top];
    }
}
