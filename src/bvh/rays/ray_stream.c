/* Ray streams over the 4-wide tree (see ray_stream.h), with the leaf tests SIMD across rays. */
#include "bvh/rays/ray_stream.h"
#include "compiler.h"

#include "bvh/rays/ray_lanes.h"

/* Writes the improved hits of one block of rays to the records and the answers. */
static inline void commit(float* rec, const uint32_t* idx, uint32_t bits, vl_fw t, vl_fw u, vl_fw v, vl_fw prim,
                          int any_hit, vl_hit* hits) {
    float ts[VL_BW], us[VL_BW], vs[VL_BW];
    uint32_t ps[VL_BW];
    vl_fw_storeu(ts, t);
    vl_fw_storeu(us, u);
    vl_fw_storeu(vs, v);
    vl_fw_storeu((float*)ps, prim);
    for (; bits; bits &= bits - 1) {
        uint32_t j = vl_ctz32(bits), id = idx[j];
        float* r = rec + VL_RAYREC_FLOATS * (size_t)id;
        r[VL_RR_TMAX] = r[VL_RR_TMAX2] = any_hit ? -1.0f : ts[j];
        hits[id].t = ts[j], hits[id].prim = ps[j], hits[id].u = us[j], hits[id].v = vs[j];
    }
}

/* Prim ids (< 2^30) carried in float lanes: as bit patterns they are never NaN. */
VL_INLINE vl_fw prim_lanes(uint32_t prim) {
    float f;
    memcpy(&f, &prim, sizeof f);
    return vl_fw_set1(f);
}

/* The rays idx[0, n) against the leaf's triangles, SIMD across rays: each block of rays is
 * gathered once and meets every triangle with its tmax shrinking in registers. */
static void leaf_triangles(float* rec, const uint32_t* idx, uint32_t n, const float* rows, uint32_t count,
                           int any_hit, vl_hit* hits) {
    const float* geometry = vl_bvh_leaf_geometry(rows, count);
    for (uint32_t i = 0; i < n; i += VL_BW) {
        vl_fw q0[4], q2[4];
        vl_kw_gather(rec, VL_RAYREC_FLOATS, idx + i, 0, q0);
        vl_kw_gather(rec, VL_RAYREC_FLOATS, idx + i, 2, q2);
        const vl_fw valid = vl_fw_first(n - i < VL_BW ? n - i : VL_BW);
        vl_fw best_t = q2[3], best_u = vl_fw_zero(), best_v = vl_fw_zero(), best_p = vl_fw_zero(), got = vl_fw_zero();
        for (uint32_t s = 0; s < count; s++) {
            vl_triw tv = vl_kw_tri_broadcast(geometry + s, count);
            vl_fw t, u, v;
            vl_fw h = vl_fw_and(vl_kw_ray_triangle(q0, q2, q0[3], best_t, &tv, &t, &u, &v), valid);
            if (!vl_fw_any(h)) continue;
            best_t = vl_fw_select(h, t, best_t);
            best_u = vl_fw_select(h, u, best_u);
            best_v = vl_fw_select(h, v, best_v);
            best_p = vl_fw_select(h, prim_lanes(vl_bvh_leaf_prim(rows, s)), best_p);
            got = vl_fw_or(got, h);
        }
        uint32_t bits = vl_fw_bits(got);
        if (bits) commit(rec, idx + i, bits, best_t, best_u, best_v, best_p, any_hit, hits);
    }
}

/* The same for a leaf of boxes: hit t is the entry t (tmin when the origin is inside). */
static void leaf_boxes(float* rec, const uint32_t* idx, uint32_t n, const vl_bvh_box* boxes, uint32_t count,
                       int parallel, int any_hit, vl_hit* hits) {
    for (uint32_t i = 0; i < n; i += VL_BW) {
        vl_rayw r = vl_lanes_slab_rays(rec, idx + i);
        const vl_fw valid = vl_fw_first(n - i < VL_BW ? n - i : VL_BW);
        vl_fw best_p = vl_fw_zero(), got = vl_fw_zero(), zero = vl_fw_zero();
        for (uint32_t s = 0; s < count; s++) {
            vl_boxw b = vl_lanes_box(boxes[s].min, boxes[s].max);
            vl_fw tn;
            vl_fw h = parallel ? vl_kw_slab_parallel(&r, &b, &tn) : vl_kw_slab(&r, &b, &tn);
            h = vl_fw_and(h, valid);
            if (!vl_fw_any(h)) continue;
            r.tmax = vl_fw_select(h, tn, r.tmax);
            best_p = vl_fw_select(h, prim_lanes(boxes[s].prim), best_p);
            got = vl_fw_or(got, h);
        }
        uint32_t bits = vl_fw_bits(got);
        if (bits) commit(rec, idx + i, bits, r.tmax, zero, zero, best_p, any_hit, hits);
    }
}

/* The rays ids[0, n) go on one at a time from node4 `start`: queued for the interleaved walks. */
static void one_by_one(vl_bvh_queue* q, const uint32_t* ids, uint32_t n, uint32_t start) {
    for (uint32_t j = 0; j < n; j++) vl_bvh_queue_push(q, ids[j], start);
}

typedef struct vl_stream {
    uint32_t child, count; /* a node4 (count 0) or a leaf of count primitives from slot child */
    uint32_t off, n;       /* its rays: arena[off, off + n) */
} vl_stream;

/* A node4's ray list is tested against its 4 child boxes in one pass (each block of VL_BW rays
 * gathered once). A second pass writes the children's lists: for closest hit, on lists of at
 * least VL_STREAM_NEAR_FIRST rays, each child gets two, the rays for which it is the nearest
 * child hit ("near") and the others ("far"), so that every ray enters its own nearest child first
 * whatever the others do. The lists go on the stack far ones first, then near ones, each group by
 * the mean entry t of its rays (nearest popped first), and on the arena in the same order, so
 * that lists are freed last-in first-out. */
void vl_bvh_trace_streams(const vl_bvh* bvh, float* rec, uint32_t* arena, uint32_t arena_size, uint32_t* masks,
                          uint32_t n, int parallel, int any_hit, vl_hit* hits, vl_bvh_queue* q) {
    const vl_bvh_node4* wide = bvh->wide;
    const uint32_t lanes_all = (1u << VL_BW) - 1u;
    vl_stream stack[8 * VL_BVH_MAX_DEPTH + 8];
    uint32_t top = 0;
    stack[top].child = 0, stack[top].count = 0, stack[top].off = 0, stack[top++].n = n;
    while (top) {
        vl_stream e = stack[--top];
        const uint32_t* ids = arena + e.off;
        uint32_t atop = e.off + e.n; /* this list is the last one on the arena */
        if (e.count) {
            if (bvh->kind == VL_BVH_TRIANGLES)
                leaf_triangles(rec, ids, e.n, vl_bvh_leaf_rows(bvh, e.child), e.count, any_hit, hits);
            else
                leaf_boxes(rec, ids, e.n, bvh->boxes + e.child, e.count, parallel, any_hit, hits);
            continue;
        }
        if (e.n <= VL_STREAM_REMNANT) {
            one_by_one(q, ids, e.n, e.child);
            continue;
        }
        const vl_bvh_node4* w = &wide[e.child];
        const int split = !any_hit && e.n >= VL_STREAM_NEAR_FIRST;
        vl_boxw b[4];
        vl_lanes_child_boxes(w, b);
        /* list l < 4: near rays of child l; l >= 4: far rays of child l - 4 */
        uint32_t cnt[8] = {0, 0, 0, 0, 0, 0, 0, 0}, blocks = 0;
        vl_fw tsum[4];
        for (int c = 0; c < 4; c++) tsum[c] = vl_fw_zero();
        const vl_fw inf = vl_fw_set1(INFINITY);
        for (uint32_t i = 0; i < e.n; i += VL_BW, blocks++) {
            vl_rayw r = vl_lanes_slab_rays(rec, ids + i);
            const vl_fw valid = vl_fw_first(e.n - i < VL_BW ? e.n - i : VL_BW);
            vl_fw m[4], tn[4], best = inf;
            for (int c = 0; c < 4; c++) {
                vl_fw hit = parallel ? vl_kw_slab_parallel(&r, &b[c], &tn[c]) : vl_kw_slab(&r, &b[c], &tn[c]);
                m[c] = vl_fw_and(hit, valid);
                tsum[c] = vl_fw_add(tsum[c], vl_fw_and(m[c], tn[c]));
                if (split) best = vl_fw_min(best, vl_fw_select(m[c], tn[c], inf));
            }
            uint32_t near = 0, far = 0, taken = 0;
            for (int c = 0; c < 4; c++) {
                uint32_t all = vl_fw_bits(m[c]);
                uint32_t nb = split ? vl_fw_bits(vl_fw_and(m[c], vl_fw_eq(tn[c], best))) & ~taken : all;
                taken |= nb;
                near |= nb << (c * VL_BW);
                far |= (all & ~nb) << (c * VL_BW);
                cnt[c] += vl_popcount32(nb);
                cnt[4 + c] += vl_popcount32(all & ~nb);
            }
            masks[2 * blocks] = near;
            masks[2 * blocks + 1] = far;
        }
        /* push order: far lists, then near lists, each group farthest mean entry first */
        float mean[4];
        for (uint32_t c = 0; c < 4; c++) {
            float lanes[VL_BW], sum = 0.0f;
            vl_fw_storeu(lanes, tsum[c]);
            for (uint32_t j = 0; j < VL_BW; j++) sum += lanes[j];
            mean[c] = sum / (float)(cnt[c] + cnt[4 + c] + 1u);
        }
        uint32_t order[8], k = 0, total = 0;
        for (uint32_t group = 0; group < 2; group++) {
            uint32_t first = k;
            for (uint32_t c = 0; c < 4; c++) {
                uint32_t l = c + (group ? 0u : 4u);
                if (!cnt[l]) continue;
                uint32_t j = k++;
                for (; j > first && mean[order[j - 1] & 3u] < mean[c]; j--) order[j] = order[j - 1];
                order[j] = l;
                total += cnt[l];
            }
        }
        if (!k) continue;
        if ((uint64_t)atop + total + k * VL_BW > arena_size) { /* no room: one ray at a time from here */
            one_by_one(q, ids, e.n, e.child);
            continue;
        }
        uint32_t* dst[8];
        uint32_t off[8];
        for (uint32_t j = 0; j < k; j++) { /* each list is followed by VL_BW spare entries */
            uint32_t l = order[j];
            off[l] = atop;
            dst[l] = arena + atop;
            atop += cnt[l] + VL_BW;
        }
        /* branchless compaction (the extra stores land on the spare entries past the list's end) */
        for (uint32_t i = 0, blk = 0; i < e.n; i += VL_BW, blk++) {
            for (uint32_t g = 0; g < 2; g++) {
                uint32_t packed = masks[2 * blk + g];
                for (uint32_t c = 0; packed; c++, packed >>= VL_BW) {
                    uint32_t bits = packed & lanes_all;
                    if (bits) dst[c + 4 * g] = vl_lanes_append(dst[c + 4 * g], ids + i, bits);
                }
            }
        }
        for (uint32_t j = 0; j < k; j++) {
            uint32_t l = order[j], c = l & 3u;
            stack[top].child = w->child[c], stack[top].count = w->count[c];
            stack[top].off = off[l], stack[top++].n = cnt[l];
        }
    }
}
