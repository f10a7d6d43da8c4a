/* Width-generic batched traversal, included by traverse_batch.c with VL_W = 4 or 8:
 * VL_T(name) names vl_t4_name or vl_t8_name. Records: see primitives.h. */
#define VL_TP3_(a, b, c) a##b##c
#define VL_TP3(a, b, c) VL_TP3_(a, b, c)
#define VF VL_TP3(vl_f, VL_W, )
#define VL_V(op) VL_TP3(vl_f, VL_W, _##op)
#define VL_K(name) VL_TP3(vl_k, VL_W, _##name)
#define VL_B(name) VL_TP3(vl_b, VL_W, _##name)
#define VL_T(name) VL_TP3(vl_t, VL_W, _##name)
#define RAYV VL_TP3(vl_rayv, VL_W, )
#define BOXV VL_TP3(vl_boxv, VL_W, )
#define TRIV VL_TP3(vl_triv, VL_W, )

/* The node and box-leaf tests' view of VL_W records: origin, tmin, inv_dir, tmax. */
VL_INLINE RAYV VL_T(load_slab_rays)(const float* rec, const uint32_t* idx) {
    VF q0[4], q1[4];
    VL_B(gather)(rec, VL_RAYREC_FLOATS, idx, 0, q0);
    VL_B(gather)(rec, VL_RAYREC_FLOATS, idx, 1, q1);
    RAYV r;
    for (int a = 0; a < 3; a++) r.origin[a] = q0[a], r.inv_dir[a] = q1[a];
    r.tmin = q0[3];
    r.tmax = q1[3];
    return r;
}

/* The 4 child boxes of a node4, each broadcast to VL_W lanes. */
VL_INLINE void VL_T(child_boxes)(const vl_bvh_node4* w, BOXV b[4]) {
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 3; a++)
            b[c].min[a] = VL_V(set1)(w->bounds[a][c]), b[c].max[a] = VL_V(set1)(w->bounds[3 + a][c]);
}

/* Appends the entries src[j] (j < VL_W) whose bit is set in `bits` to dst; returns dst past
 * them. Stores VL_W entries: up to VL_W - 1 past the appended ones are overwritten. */
VL_INLINE uint32_t* VL_T(append)(uint32_t* dst, const uint32_t* src, uint32_t bits) {
#if VL_W == 8
    return vl_b8_compress(dst, src, bits);
#else
    for (uint32_t j = 0; j < VL_W; j++) { /* memcpy: src may hold floats (entry t) */
        memcpy(dst, src + j, sizeof *dst);
        dst += (bits >> j) & 1u;
    }
    return dst;
#endif
}

VL_INLINE BOXV VL_T(box_of)(const float mn[3], const float mx[3]) {
    BOXV b;
    for (int a = 0; a < 3; a++) b.min[a] = VL_V(set1)(mn[a]), b.max[a] = VL_V(set1)(mx[a]);
    return b;
}

/* Move-to-front node test: the rays idx[0, n) that hit the box come first (in their order), the
 * others after them. Returns how many hit; neg[a] counts the hitting rays going down axis a
 * (when `order`). tmp holds n indices. */
static inline uint32_t VL_T(cull)(const float* rec, uint32_t* idx, uint32_t n, uint32_t* tmp, const vl_bvh_node* node,
                                  int parallel, int order, uint32_t neg[3]) {
    const BOXV b = VL_T(box_of)(node->min, node->max);
    const VF zero = VL_V(zero)();
    uint32_t k = 0, m = 0;
    for (uint32_t i = 0; i < n; i += VL_W) {
        RAYV r = VL_T(load_slab_rays)(rec, idx + i);
        VF tn;
        VF hit = parallel ? VL_K(slab_parallel)(&r, &b, &tn) : VL_K(slab)(&r, &b, &tn);
        uint32_t lanes = n - i < VL_W ? n - i : VL_W;
        uint32_t bits = VL_V(bits)(hit) & ((1u << lanes) - 1u);
        if (order) {
            for (int a = 0; a < 3; a++)
                neg[a] += (uint32_t)__builtin_popcount(bits & VL_V(bits)(VL_V(lt)(r.inv_dir[a], zero)));
        }
        if (bits == (1u << lanes) - 1u && k == i) { /* all hit, nothing moved yet */
            k += lanes;
            continue;
        }
        uint32_t ids[VL_W];
        memcpy(ids, idx + i, sizeof ids);
        for (uint32_t j = 0; j < lanes; j++) {
            uint32_t h = (bits >> j) & 1u;
            idx[k] = ids[j];
            tmp[m] = ids[j];
            k += h;
            m += h ^ 1u;
        }
    }
    memcpy(idx + k, tmp, sizeof(uint32_t) * m);
    return k;
}

/* Writes the improved hits of one block of rays to the records and the answers. */
static inline void VL_T(commit)(float* rec, const uint32_t* idx, uint32_t bits, VF t, VF u, VF v, VF prim, int any_hit,
                                vl_hit* hits) {
    float ts[VL_W], us[VL_W], vs[VL_W];
    uint32_t ps[VL_W];
    VL_V(storeu)(ts, t);
    VL_V(storeu)(us, u);
    VL_V(storeu)(vs, v);
    VL_V(storeu)((float*)ps, prim);
    for (; bits; bits &= bits - 1) {
        uint32_t j = (uint32_t)__builtin_ctz(bits), id = idx[j];
        float* r = rec + VL_RAYREC_FLOATS * (size_t)id;
        r[VL_RR_TMAX] = r[VL_RR_TMAX2] = any_hit ? -1.0f : ts[j];
        hits[id].t = ts[j], hits[id].prim = ps[j], hits[id].u = us[j], hits[id].v = vs[j];
    }
}

/* Prim ids (< 2^30) carried in float lanes: as bit patterns they are never NaN. */
VL_INLINE VF VL_T(prim_lanes)(uint32_t prim) {
    float f;
    memcpy(&f, &prim, sizeof f);
    return VL_V(set1)(f);
}

/* The rays idx[0, n) against the leaf's triangles, SIMD across rays: each block of rays is
 * gathered once and meets every triangle with its tmax shrinking in registers. */
static void VL_T(leaf_triangles)(float* rec, const uint32_t* idx, uint32_t n, const float* rows, uint32_t count,
                                 int any_hit, vl_hit* hits) {
    for (uint32_t i = 0; i < n; i += VL_W) {
        VF q0[4], q2[4];
        VL_B(gather)(rec, VL_RAYREC_FLOATS, idx + i, 0, q0);
        VL_B(gather)(rec, VL_RAYREC_FLOATS, idx + i, 2, q2);
        const VF valid = VL_V(first)(n - i < VL_W ? n - i : VL_W);
        VF best_t = q2[3], best_u = VL_V(zero)(), best_v = VL_V(zero)(), best_p = VL_V(zero)(), got = VL_V(zero)();
        for (uint32_t s = 0; s < count; s++) {
            TRIV tv = VL_B(tri_broadcast)(rows + s, count);
            VF t, u, v;
            VF h = VL_V(and)(VL_B(ray_triangle)(q0, q2, q0[3], best_t, &tv, &t, &u, &v), valid);
            if (!VL_V(any)(h)) continue;
            best_t = VL_V(select)(h, t, best_t);
            best_u = VL_V(select)(h, u, best_u);
            best_v = VL_V(select)(h, v, best_v);
            best_p = VL_V(select)(h, VL_T(prim_lanes)(vl_bvh_leaf_prim(rows, count, s)), best_p);
            got = VL_V(or)(got, h);
        }
        uint32_t bits = VL_V(bits)(got);
        if (bits) VL_T(commit)(rec, idx + i, bits, best_t, best_u, best_v, best_p, any_hit, hits);
    }
}

/* The same for a leaf of boxes: hit t is the entry t (tmin when the origin is inside). */
static void VL_T(leaf_boxes)(float* rec, const uint32_t* idx, uint32_t n, const vl_bvh_box* boxes, uint32_t count,
                             int parallel, int any_hit, vl_hit* hits) {
    for (uint32_t i = 0; i < n; i += VL_W) {
        RAYV r = VL_T(load_slab_rays)(rec, idx + i);
        const VF valid = VL_V(first)(n - i < VL_W ? n - i : VL_W);
        VF best_p = VL_V(zero)(), got = VL_V(zero)(), zero = VL_V(zero)();
        for (uint32_t s = 0; s < count; s++) {
            BOXV b = VL_T(box_of)(boxes[s].min, boxes[s].max);
            VF tn;
            VF h = parallel ? VL_K(slab_parallel)(&r, &b, &tn) : VL_K(slab)(&r, &b, &tn);
            h = VL_V(and)(h, valid);
            if (!VL_V(any)(h)) continue;
            r.tmax = VL_V(select)(h, tn, r.tmax);
            best_p = VL_V(select)(h, VL_T(prim_lanes)(boxes[s].prim), best_p);
            got = VL_V(or)(got, h);
        }
        uint32_t bits = VL_V(bits)(got);
        if (bits) VL_T(commit)(rec, idx + i, bits, r.tmax, zero, zero, best_p, any_hit, hits);
    }
}

/* The rays ids[0, n) go on one at a time from node4 `start`: queued for the interleaved walks. */
static void VL_T(one_by_one)(vl_bvh_queue* q, const uint32_t* ids, uint32_t n, uint32_t start) {
    for (uint32_t j = 0; j < n; j++) vl_bvh_queue_push(q, ids[j], start);
}

typedef struct VL_T(entry) {
    uint32_t node, n;
} VL_T(entry);

/* Move-to-front traversal of the rays idx[0, n) (idx and tmp hold n + VL_W entries, the ones
 * past n any valid record index). A node's entry test partitions the rays it receives; its
 * children both receive the survivors, the second after the first is done (which only permutes
 * them). */
static void VL_T(trace)(const vl_bvh* bvh, float* rec, uint32_t* idx, uint32_t* tmp, uint32_t n, int parallel,
                        int any_hit, vl_hit* hits, vl_bvh_queue* q) {
    const vl_bvh_node* nodes = bvh->nodes;
    const uint32_t remnant = vl_bvh_tune.remnant;
    const int order = !any_hit && vl_bvh_tune.order;
    VL_T(entry) stack[VL_BVH_MAX_DEPTH + 2];
    uint32_t top = 0;
    stack[top].node = 0, stack[top++].n = n;
    while (top) {
        VL_T(entry) e = stack[--top];
        const vl_bvh_node* node = &nodes[e.node];
        uint32_t count = vl_bvh_node_count(node);
        uint32_t neg[3] = {0, 0, 0};
        uint32_t m = VL_T(cull)(rec, idx, e.n, tmp, node, parallel, order && !count, neg);
        if (!m) continue;
        if (m <= remnant && bvh->wide_of[e.node] != VL_BVH_EMPTY) {
            VL_T(one_by_one)(q, idx, m, bvh->wide_of[e.node]);
            continue;
        }
        if (count) {
            if (bvh->kind == VL_BVH_TRIANGLES)
                VL_T(leaf_triangles)(rec, idx, m, vl_bvh_leaf_rows(bvh, node->index), count, any_hit, hits);
            else
                VL_T(leaf_boxes)(rec, idx, m, bvh->boxes + node->index, count, parallel, any_hit, hits);
            continue;
        }
        uint32_t first = node->index, second = node->index + 1;
        if (order && 2 * neg[vl_bvh_node_axis(node)] > m) first = second, second = node->index;
        stack[top].node = second, stack[top++].n = m;
        stack[top].node = first, stack[top++].n = m;
    }
}

typedef struct VL_T(wentry) {
    uint32_t child, count; /* a node4 (count 0) or a leaf of count primitives from slot child */
    uint32_t off, n;       /* its rays: arena[off, off + n) */
} VL_T(wentry);

/* Ray-stream traversal of the 4-wide tree (after Barringer and Akenine-Moller 2014): a node4's
 * ray list is tested against its 4 child boxes in one pass (each block of VL_W rays gathered
 * once). A second pass writes the children's lists: for closest hit each child gets two, the
 * rays for which it is the nearest child hit ("near") and the others ("far"), so that every ray
 * enters its own nearest child first whatever the others do. The lists go on the stack far ones
 * first, then near ones, each group by the mean entry t of its rays (nearest popped first), and
 * on the arena in the same order, so that lists are freed last-in first-out. Lists of at most
 * `remnant` rays, and any node whose lists would not fit the arena, go on one ray at a time.
 * arena[0, n) holds the live rays; arena holds arena_size entries plus VL_W, all valid record
 * indices; masks holds n / 2 + 2 entries. */
static void VL_T(trace_wide)(const vl_bvh* bvh, float* rec, uint32_t* arena, uint32_t arena_size, uint32_t* masks,
                             uint32_t n, int parallel, int any_hit, vl_hit* hits, vl_bvh_queue* q) {
    const vl_bvh_node4* wide = bvh->wide;
    const uint32_t remnant = vl_bvh_tune.remnant;
    const int split_ok = !any_hit && vl_bvh_tune.near_first;
    const uint32_t split_min = vl_bvh_tune.near_first;
    const uint32_t lanes_all = (1u << VL_W) - 1u;
    VL_T(wentry) stack[8 * VL_BVH_MAX_DEPTH + 8];
    uint32_t top = 0;
    stack[top].child = 0, stack[top].count = 0, stack[top].off = 0, stack[top++].n = n;
    while (top) {
        VL_T(wentry) e = stack[--top];
        const uint32_t* ids = arena + e.off;
        uint32_t atop = e.off + e.n; /* this list is the last one on the arena */
        if (e.count) {
            if (bvh->kind == VL_BVH_TRIANGLES)
                VL_T(leaf_triangles)(rec, ids, e.n, vl_bvh_leaf_rows(bvh, e.child), e.count, any_hit, hits);
            else
                VL_T(leaf_boxes)(rec, ids, e.n, bvh->boxes + e.child, e.count, parallel, any_hit, hits);
            continue;
        }
        if (e.n <= remnant) {
            VL_T(one_by_one)(q, ids, e.n, e.child);
            continue;
        }
        const vl_bvh_node4* w = &wide[e.child];
        const int split = split_ok && e.n >= split_min;
        BOXV b[4];
        VL_T(child_boxes)(w, b);
        /* list l < 4: near rays of child l; l >= 4: far rays of child l - 4 */
        uint32_t cnt[8] = {0, 0, 0, 0, 0, 0, 0, 0}, blocks = 0;
        VF tsum[4];
        for (int c = 0; c < 4; c++) tsum[c] = VL_V(zero)();
        const VF inf = VL_V(set1)(INFINITY);
        for (uint32_t i = 0; i < e.n; i += VL_W, blocks++) {
            RAYV r = VL_T(load_slab_rays)(rec, ids + i);
            const VF valid = VL_V(first)(e.n - i < VL_W ? e.n - i : VL_W);
            VF m[4], tn[4], best = inf;
            for (int c = 0; c < 4; c++) {
                VF hit = parallel ? VL_K(slab_parallel)(&r, &b[c], &tn[c]) : VL_K(slab)(&r, &b[c], &tn[c]);
                m[c] = VL_V(and)(hit, valid);
                tsum[c] = VL_V(add)(tsum[c], VL_V(and)(m[c], tn[c]));
                if (split) best = VL_V(min)(best, VL_V(select)(m[c], tn[c], inf));
            }
            uint32_t near = 0, far = 0, taken = 0;
            for (int c = 0; c < 4; c++) {
                uint32_t all = VL_V(bits)(m[c]);
                uint32_t nb = split ? VL_V(bits)(VL_V(and)(m[c], VL_V(eq)(tn[c], best))) & ~taken : all;
                taken |= nb;
                near |= nb << (c * VL_W);
                far |= (all & ~nb) << (c * VL_W);
                cnt[c] += (uint32_t)__builtin_popcount(nb);
                cnt[4 + c] += (uint32_t)__builtin_popcount(all & ~nb);
            }
            masks[2 * blocks] = near;
            masks[2 * blocks + 1] = far;
        }
        /* push order: far lists, then near lists, each group farthest mean entry first */
        float mean[4];
        for (uint32_t c = 0; c < 4; c++) {
            float lanes[VL_W], sum = 0.0f;
            VL_V(storeu)(lanes, tsum[c]);
            for (int j = 0; j < VL_W; j++) sum += lanes[j];
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
        if ((uint64_t)atop + total + k * VL_W > arena_size) { /* no room: one ray at a time from here */
            VL_T(one_by_one)(q, ids, e.n, e.child);
            continue;
        }
        uint32_t* dst[8];
        uint32_t off[8];
        for (uint32_t j = 0; j < k; j++) { /* each list is followed by VL_W spare entries */
            uint32_t l = order[j];
            off[l] = atop;
            dst[l] = arena + atop;
            atop += cnt[l] + VL_W;
        }
        /* branchless compaction (the extra stores land on the spare entries past the list's end) */
        for (uint32_t i = 0, blk = 0; i < e.n; i += VL_W, blk++) {
            for (uint32_t g = 0; g < 2; g++) {
                uint32_t packed = masks[2 * blk + g];
                for (uint32_t c = 0; packed; c++, packed >>= VL_W) {
                    uint32_t bits = packed & lanes_all;
                    if (bits) dst[c + 4 * g] = VL_T(append)(dst[c + 4 * g], ids + i, bits);
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

#undef VL_TP3_
#undef VL_TP3
#undef VF
#undef VL_V
#undef VL_K
#undef VL_B
#undef VL_T
#undef RAYV
#undef BOXV
#undef TRIV
