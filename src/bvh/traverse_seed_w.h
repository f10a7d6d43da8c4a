/* Width-generic top of a small batch's traversal, included by traverse_batch.c with VL_W = 4 or
 * 8 after traverse_batch_w.h (whose load_slab_rays, child_boxes and append it uses): the first levels of the 4-wide
 * tree as ray streams, which leave each ray the list of places where its single-ray walk starts. */
#define VL_SP3_(a, b, c) a##b##c
#define VL_SP3(a, b, c) VL_SP3_(a, b, c)
#define VF VL_SP3(vl_f, VL_W, )
#define VL_V(op) VL_SP3(vl_f, VL_W, _##op)
#define VL_K(name) VL_SP3(vl_k, VL_W, _##name)
#define VL_T(name) VL_SP3(vl_t, VL_W, _##name)
#define RAYV VL_SP3(vl_rayv, VL_W, )
#define BOXV VL_SP3(vl_boxv, VL_W, )

#ifndef VL_SEED_PROBE
/* Rays of the root's list whose children hit decide at once whether the batch is seeded. */
#define VL_SEED_PROBE 16u

/* Whether `rays` rays that hit cnt[c] of a node's children each hit more than fanout8 / 8 of them
 * on average: they cross most of the tree, and go better as walks. */
static inline int vl_seed_fans_out(const uint32_t cnt[4], uint32_t rays, uint32_t fanout8) {
    return 8u * (cnt[0] + cnt[1] + cnt[2] + cnt[3]) > fanout8 * rays;
}
#endif

typedef struct VL_T(slist) {
    uint32_t node, depth; /* a node4 and its depth (the root's is 0) */
    uint32_t off, n;      /* its rays: arena[off, off + n) */
} VL_T(slist);

/* The rays arena[0, n) down the top of the tree as ray streams: a node4's list against its 4
 * child boxes, VL_W rays per test. A child's rays go down with it as a stream while they are at
 * least `min_list` and the child is a node4 of depth < `depth`; otherwise each of them gets a seed
 * (the child, with the ray's entry t): the walk of that ray starts there. A node whose children's
 * lists or seeds would not fit gives each of its rays a seed of the node itself (entry t: the
 * ray's tmin). Every ray's seeds cover the tree as its own walk from the root would (the same
 * box tests), and a ray has at most 4^depth of them. arena holds arena_size entries plus VL_W;
 * masks n / VL_W + 2 entries; tn 4 (n + VL_W) floats; the seeds' arrays s->cap + VL_W entries. */
static int VL_T(seed_top)(const vl_bvh* bvh, const float* rec, uint32_t* arena, uint32_t arena_size,
                           uint32_t* masks, float* tn_rows, uint32_t n, int parallel, vl_bvh_seeds* s) {
    const uint32_t min_list = vl_bvh_tune.seed_list, fanout8 = vl_bvh_tune.seed_fanout;
    const uint32_t depth = vl_bvh_tune.seed_depth < VL_SEED_DEPTH_MAX ? vl_bvh_tune.seed_depth : VL_SEED_DEPTH_MAX;
    const uint32_t lanes_all = (1u << VL_W) - 1u;
    VL_T(slist) stack[4 * VL_SEED_DEPTH_MAX + 4];
    uint32_t top = 0;
    uint32_t pending = n; /* rays on the stack's lists: each may need one seed of its node */
    stack[top].node = 0, stack[top].depth = 0, stack[top].off = 0, stack[top++].n = n;
    while (top) {
        VL_T(slist) e = stack[--top];
        pending -= e.n;
        const uint32_t* ids = arena + e.off;
        const vl_bvh_node4* w = &bvh->wide[e.node];
        const uint32_t stride = e.n + VL_W; /* tn row of child c: tn_rows + c * stride */
        BOXV b[4];
        VL_T(child_boxes)(w, b);
        uint32_t cnt[4] = {0, 0, 0, 0};
        for (uint32_t i = 0, blk = 0; i < e.n; i += VL_W, blk++) {
            RAYV r = VL_T(load_slab_rays)(rec, ids + i);
            const VF valid = VL_V(first)(e.n - i < VL_W ? e.n - i : VL_W);
            uint32_t bits = 0;
            for (uint32_t c = 0; c < 4; c++) {
                VF tn, m = parallel ? VL_K(slab_parallel)(&r, &b[c], &tn) : VL_K(slab)(&r, &b[c], &tn);
                uint32_t hit = VL_V(bits)(VL_V(and)(m, valid));
                VL_V(storeu)(tn_rows + c * stride + i, tn);
                cnt[c] += (uint32_t)__builtin_popcount(hit);
                bits |= hit << (c * VL_W);
            }
            masks[blk] = bits;
            /* the root's first rays already tell a batch that crosses most of the tree */
            if (!e.depth && i + VL_W == VL_SEED_PROBE && e.n > VL_SEED_PROBE &&
                vl_seed_fans_out(cnt, VL_SEED_PROBE, fanout8))
                return 0;
        }
        uint32_t streamed = 0, stream_rays = 0, seed_rays = 0, lists = 0;
        const int fan_ok = !vl_seed_fans_out(cnt, e.n, fanout8);
        if (!fan_ok && !e.depth) return 0; /* the batch's rays cross most of the tree: no seeds */
        for (uint32_t c = 0; c < 4; c++) {
            if (!cnt[c]) continue;
            if (fan_ok && !w->count[c] && cnt[c] >= min_list && e.depth + 1 < depth)
                streamed |= 1u << c, stream_rays += cnt[c], lists++;
            else
                seed_rays += cnt[c];
        }
        uint32_t atop = e.off + e.n;
        if ((uint64_t)s->n + seed_rays + stream_rays + pending > s->cap ||
            (uint64_t)atop + stream_rays + lists * VL_W > arena_size) {
            for (uint32_t j = 0; j < e.n; j++) { /* no room: the node itself */
                uint32_t k = s->n++;
                s->ray[k] = ids[j], s->child[k] = e.node, s->count[k] = 0;
                s->tnear[k] = rec[VL_RAYREC_FLOATS * (size_t)ids[j] + VL_RR_TMIN];
            }
            continue;
        }
        uint32_t* dst[4];
        for (uint32_t c = 0; c < 4; c++) {
            if (!(streamed >> c & 1u)) continue;
            dst[c] = arena + atop; /* each list is followed by VL_W spare entries */
            stack[top].node = w->child[c], stack[top].depth = e.depth + 1, stack[top].off = atop;
            stack[top++].n = cnt[c];
            atop += cnt[c] + VL_W;
            pending += cnt[c];
        }
        for (uint32_t c = 0; c < 4; c++) {
            if (!cnt[c]) continue;
            const uint32_t* tn = (const uint32_t*)(tn_rows + c * stride);
            if (streamed >> c & 1u) {
                for (uint32_t i = 0, blk = 0; i < e.n; i += VL_W, blk++) {
                    uint32_t bits = masks[blk] >> (c * VL_W) & lanes_all;
                    if (bits) dst[c] = VL_T(append)(dst[c], ids + i, bits);
                }
                continue;
            }
            uint32_t first = s->n, *ray = s->ray + first, *tnear = (uint32_t*)s->tnear + first;
            for (uint32_t i = 0, blk = 0; i < e.n; i += VL_W, blk++) {
                uint32_t bits = masks[blk] >> (c * VL_W) & lanes_all;
                if (!bits) continue;
                ray = VL_T(append)(ray, ids + i, bits);
                tnear = VL_T(append)(tnear, tn + i, bits);
            }
            s->n += cnt[c];
            for (uint32_t k = first; k < s->n; k++) s->child[k] = w->child[c], s->count[k] = w->count[c];
        }
    }
    return 1;
}

#undef VL_SP3_
#undef VL_SP3
#undef VF
#undef VL_V
#undef VL_K
#undef VL_T
#undef RAYV
#undef BOXV
