/* The sweeps as query kinds of the batch engine (query_engine.h): the node test (the sweeps'
 * centre rays against the 4 child boxes grown by each sweep's extent, 4 sweeps at a time), the
 * leaf tests by primitive kind, the nearest-first walk of one sweep (vl_sweep_trace1) and, for
 * closest hits, children opened nearest first along the direction of the sweep that leads a
 * node's list, so that each sweep's tmax shrinks early and culls it from the nodes behind. */
#include "bvh/sweep.h"

#include "bvh/query_engine.h"
#include "simd/sweep_kernels.h"

_Static_assert(VL_SWEEPREC_FLOATS == VL_SWEEPV_STRIDE, "sweep records are the kernels' records");

static void node_test(const float* records, const uint32_t* ids, uint32_t n, const vl_bvh_node4* w, uint8_t* masks) {
    const uint32_t live = vl_query_live_children(w);
    vl_f4 mn[4][3], mx[4][3], tn;
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 3; a++) mn[c][a] = vl_f4_set1(w->bounds[a][c]), mx[c][a] = vl_f4_set1(w->bounds[3 + a][c]);
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t idx[4], bits[4] = {0, 0, 0, 0};
        for (uint32_t j = 0; j < 4; j++) idx[j] = ids[i + j < n ? i + j : n - 1];
        vl_sweepv4 s;
        vl_sweep4_gather(records, idx, &s);
        for (int c = 0; c < 4; c++)
            if (live >> c & 1u) bits[c] = vl_f4_bits(vl_sweep4_slab(&s, mn[c], mx[c], &tn));
        vl_query_put_masks(masks, n, i, bits);
    }
}

static vl_status leaf_test(void* vctx, const vl_bvh* bvh, float* records, const uint32_t* ids, uint32_t n,
                           const vl_bvh_node4* parent, uint32_t lane) {
    const vl_sweep_batch* b = vctx;
    const uint32_t first = parent->child[lane], count = parent->count[lane];
    const int tris = bvh->kind == VL_BVH_TRIANGLES;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        float* rec = records + VL_SWEEPREC_FLOATS * (size_t)id;
        if (tris)
            vl_sweep_leaf_tris(bvh, first, count, &b->q[id], rec, b->any_hit, &b->best[id]);
        else
            vl_sweep_leaf_boxes(bvh, first, count, &b->q[id], rec, b->any_hit, &b->best[id]);
    }
    return VL_OK;
}

static vl_status walk1(void* vctx, const vl_bvh* bvh, float* records, uint32_t id, uint32_t node) {
    const vl_sweep_batch* b = vctx;
    vl_sweep_trace1(bvh, node, &b->q[id], records + VL_SWEEPREC_FLOATS * (size_t)id, b->any_hit, &b->best[id]);
    return VL_OK;
}

/* The children of w nearest first along the sweep rec's direction (by their centres' distance
 * along it); empty children last. */
static void nearest_first(const float* rec, const vl_bvh_node4* w, uint8_t order[4]) {
    float key[4];
    for (uint32_t i = 0; i < 4; i++) {
        order[i] = (uint8_t)i;
        key[i] = INFINITY;
        if (w->child[i] != VL_BVH_EMPTY) {
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

static const vl_query_kind k_closest = {VL_SWEEPREC_FLOATS, node_test, NULL, leaf_test, walk1, nearest_first};
static const vl_query_kind k_any = {VL_SWEEPREC_FLOATS, node_test, NULL, leaf_test, walk1, NULL};

void vl_sweep_trace_batch(const vl_sweep_batch* b, uint32_t* arena, size_t arena_entries) {
    vl_query_batch_run(b->bvh, b->any_hit ? &k_any : &k_closest, (void*)b, b->rec, arena, b->n, arena,
                       arena_entries);
}
