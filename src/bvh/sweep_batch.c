/* Batched sweeps by move-to-front over the 4-wide tree: at each child of a node, the live sweeps
 * of the node are tested 4 at a time (their centre rays against the child's box grown by each
 * sweep's extent), the survivors are swapped to the front of the index list and only they go
 * down; a node's list is the front of its parent's, so the whole traversal works in one index
 * array. Closest hit: children are opened nearest first along the first live sweep's direction,
 * and each sweep's tmax shrinks as its hits land, which culls it from the nodes behind. The node
 * test (kind-independent: the extent is in the record) and the leaf tests (by primitive kind) are
 * separate functions. */
#include "bvh/sweep.h"

#include "simd/sweep_kernels.h"

/* Lists of this many sweeps or fewer leave the batch and go on one by one from their node. */
#define VL_SWEEP_REMNANT 2u

/* Moves the sweeps of ids[0, n) that reach child k of w to the front (a swap per survivor, so
 * that ids[0, n) keeps the same set for the node's other children); returns how many. */
static uint32_t node_test(const float* rec, uint32_t* ids, uint32_t n, const vl_bvh_node4* w, uint32_t k) {
    vl_f4 mn[3], mx[3], tn;
    for (int a = 0; a < 3; a++) mn[a] = vl_f4_set1(w->bounds[a][k]), mx[a] = vl_f4_set1(w->bounds[3 + a][k]);
    uint32_t keep = 0;
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t left = n - i < 4 ? n - i : 4, idx[4];
        for (uint32_t j = 0; j < 4; j++) idx[j] = ids[i + (j < left ? j : 0)];
        vl_sweepv4 s;
        vl_sweep4_gather(rec, idx, &s);
        uint32_t bits = vl_f4_bits(vl_sweep4_slab(&s, mn, mx, &tn)) & ((1u << left) - 1u);
        for (; bits; bits &= bits - 1) {
            uint32_t at = i + (uint32_t)__builtin_ctz(bits), id = ids[at];
            ids[at] = ids[keep], ids[keep++] = id;
        }
    }
    return keep;
}

/* The leaf of `count` primitives from slot first against the sweeps ids[0, m). */
static void leaf_test(const vl_sweep_batch* b, uint32_t first, uint32_t count, uint32_t m) {
    const int tris = b->bvh->kind == VL_BVH_TRIANGLES;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t id = b->ids[i];
        float* rec = b->rec + VL_SWEEPREC_FLOATS * (size_t)id;
        if (tris)
            vl_sweep_leaf_tris(b->bvh, first, count, &b->q[id], rec, b->any_hit, &b->best[id]);
        else
            vl_sweep_leaf_boxes(b->bvh, first, count, &b->q[id], rec, b->any_hit, &b->best[id]);
    }
}

/* A node on the traversal stack: its live sweeps are ids[0, n); children opened in `order`,
 * the next one order[k]. */
typedef struct vl_sweep_frame {
    uint32_t node, n, k;
    uint8_t order[4];
} vl_sweep_frame;

/* The children of w nearest first along the sweep rec's direction (closest hit), or in slot
 * order; empty children last. */
static void child_order(const vl_bvh_node4* w, const float* rec, int any_hit, uint8_t order[4]) {
    float key[4];
    for (uint32_t i = 0; i < 4; i++) {
        order[i] = (uint8_t)i;
        key[i] = (float)i;
        if (w->child[i] == VL_BVH_EMPTY) {
            key[i] = INFINITY;
        } else if (!any_hit) {
            float sum = 0.0f;
            for (int a = 0; a < 3; a++) {
                float mid = 0.5f * w->bounds[a][i] + 0.5f * w->bounds[3 + a][i];
                sum += rec[VL_SR_INV + a] < 0.0f ? -mid : mid;
            }
            key[i] = sum == sum ? sum : 0.0f; /* a node at infinity gives no order */
        }
    }
    for (uint32_t i = 1; i < 4; i++)
        for (uint32_t j = i; j > 0 && key[order[j]] < key[order[j - 1]]; j--) {
            uint8_t x = order[j];
            order[j] = order[j - 1], order[j - 1] = x;
        }
}

void vl_sweep_trace_batch(const vl_sweep_batch* b) {
    const vl_bvh* bvh = b->bvh;
    vl_sweep_frame stack[VL_BVH_MAX_DEPTH + 2];
    uint32_t top = 0;
    if (b->n == 0) return;
    stack[0].node = 0, stack[0].n = b->n, stack[0].k = 0;
    child_order(&bvh->wide[0], b->rec + VL_SWEEPREC_FLOATS * (size_t)b->ids[0], b->any_hit, stack[0].order);
    top = 1;
    while (top) {
        vl_sweep_frame* f = &stack[top - 1];
        if (f->k == 4) {
            top--;
            continue;
        }
        const vl_bvh_node4* w = &bvh->wide[f->node];
        uint32_t k = f->order[f->k++];
        if (w->child[k] == VL_BVH_EMPTY) continue;
        uint32_t m = node_test(b->rec, b->ids, f->n, w, k);
        if (!m) continue;
        if (w->count[k]) {
            leaf_test(b, w->child[k], w->count[k], m);
        } else if (m <= VL_SWEEP_REMNANT) {
            for (uint32_t i = 0; i < m; i++) {
                uint32_t id = b->ids[i];
                vl_sweep_trace1(bvh, w->child[k], &b->q[id], b->rec + VL_SWEEPREC_FLOATS * (size_t)id, b->any_hit,
                                &b->best[id]);
            }
        } else {
            vl_sweep_frame* c = &stack[top++];
            c->node = w->child[k], c->n = m, c->k = 0;
            child_order(&bvh->wide[c->node], b->rec + VL_SWEEPREC_FLOATS * (size_t)b->ids[0], b->any_hit, c->order);
        }
    }
}
