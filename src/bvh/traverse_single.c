/* Single-ray traversal over the 4-wide nodes: one ray against 4 child boxes per instruction,
 * the children hit pushed farthest first with their entry t, so that a child is skipped when a
 * closer hit has landed since; a leaf's triangles VL_LW per instruction. The fallback for tiny
 * batches, the remnant of a batch, and the baseline of the bench. */
#include "bvh/traverse.h"

#include <stddef.h>

#include "simd/bvh_kernels.h"

/* A leaf's triangles meet the ray VL_LW at a time, one per lane (the preferred width: one test
 * covers a leaf of up to 8 on AVX2). */
#if VL_SIMD_PREFERRED_WIDTH == 8
#define VL_LW 8u
#define VL_LV(op) vl_f8_##op
#define VL_LEAF_TRIS vl_b8_ray_tris
typedef vl_f8 vl_leafv;
#else
#define VL_LW 4u
#define VL_LV(op) vl_f4_##op
#define VL_LEAF_TRIS vl_b4_ray_tris
typedef vl_f4 vl_leafv;
#endif

/* The triangle records are read as 13-float rows: v0, e1, e2n, ng, prim. */
#define VL_TRI_FLOATS 13u
_Static_assert(sizeof(vl_bvh_tri) == VL_TRI_FLOATS * sizeof(float) && offsetof(vl_bvh_tri, e1) == 3 * sizeof(float) &&
                   offsetof(vl_bvh_tri, e2n) == 6 * sizeof(float) && offsetof(vl_bvh_tri, ng) == 9 * sizeof(float),
               "vl_bvh_tri is 13 packed floats");

/* The ray broadcast to VL_LW lanes for the leaf test. */
typedef struct vl_leafray {
    vl_leafv o[3], d[3], tmin;
} vl_leafray;

typedef struct vl_stack1 {
    uint32_t child, count; /* count > 0: a leaf of `count` primitives from slot `child` */
    float tnear;
} vl_stack1;

/* The leaf's triangles, VL_LW per test. The answer is the scalar loop's (each triangle in slot
 * order, tmax shrinking): any hit takes the first lane hit; closest hit the least t, the last of
 * equal ones. Returns 1 when an any-hit query is done. */
static inline int leaf_tris(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_leafray* r, int any_hit,
                            float* tmax, vl_hit* hit) {
    uint32_t end = first + count;
    for (uint32_t s = first; s < end; s += VL_LW) {
        uint32_t n = end - s < VL_LW ? end - s : VL_LW;
        vl_leafv t, u, v;
        uint32_t bits = VL_LEAF_TRIS((const float*)&bvh->tris[s], VL_TRI_FLOATS, n, r->o, r->d, r->tmin,
                                     VL_LV(set1)(*tmax), &t, &u, &v);
        if (!bits) continue;
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
        hit->t = ts[j], hit->prim = bvh->tris[s + j].prim, hit->u = us[j], hit->v = vs[j];
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

/* One ray against the 4 child boxes of a node4 (4 lanes); the children hit within [tmin, tmax]
 * go on the stack, farthest first, so that the nearest is popped next, and are all fetched at
 * once (measured +10-20%: the far ones' loads overlap the near one's subtree). */
static inline uint32_t push_children(const vl_bvh* bvh, const vl_bvh_node4* w, vl_rayv4* r, float tmax, int parallel,
                                     vl_stack1* stack, uint32_t top) {
    vl_boxv4 b;
    for (int a = 0; a < 3; a++) b.min[a] = vl_f4_load(w->bounds[a]), b.max[a] = vl_f4_load(w->bounds[3 + a]);
    r->tmax = vl_f4_set1(tmax);
    vl_f4 tn;
    uint32_t bits = vl_f4_bits(parallel ? vl_k4_slab_parallel(r, &b, &tn) : vl_k4_slab(r, &b, &tn));
    if (!bits) return top;
    for (uint32_t rest = bits; rest; rest &= rest - 1) { /* fetch every child hit while the nearest goes first */
        uint32_t i = (uint32_t)__builtin_ctz(rest), c = w->child[i], last = c + w->count[i] - 1;
        if (!w->count[i]) {
            __builtin_prefetch(&bvh->wide[c].bounds[0][0]);
            __builtin_prefetch(&bvh->wide[c].child[0]); /* the node's second cache line */
        } else if (bvh->kind == VL_BVH_TRIANGLES) {
            __builtin_prefetch(&bvh->tris[c]);
            __builtin_prefetch(&bvh->tris[last]);
        } else {
            __builtin_prefetch(&bvh->boxes[c]);
            __builtin_prefetch(&bvh->boxes[last]);
        }
    }
    _Alignas(16) float tns[4];
    vl_f4_store(tns, tn);
    uint32_t slots[4], k = 0;
    for (; bits; bits &= bits - 1) {
        uint32_t i = (uint32_t)__builtin_ctz(bits), j = k++;
        for (; j > 0 && tns[slots[j - 1]] < tns[i]; j--) slots[j] = slots[j - 1];
        slots[j] = i;
    }
    for (uint32_t j = 0; j < k; j++) {
        uint32_t i = slots[j];
        stack[top].child = w->child[i], stack[top].count = w->count[i], stack[top++].tnear = tns[i];
    }
    return top;
}

void vl_bvh_trace1(const vl_bvh* bvh, float* rec, int parallel, uint32_t start, int any_hit, vl_hit* hit) {
    const vl_bvh_node4* wide = bvh->wide;
    vl_stack1 stack[3 * VL_BVH_MAX_DEPTH + 8];
    uint32_t top = 0;
    float tmax = rec[VL_RR_TMAX];
    vl_rayv4 r;
    for (int a = 0; a < 3; a++) r.origin[a] = vl_f4_set1(rec[a]), r.inv_dir[a] = vl_f4_set1(rec[VL_RR_INV + a]);
    r.tmin = vl_f4_set1(rec[VL_RR_TMIN]);
    vl_leafray lr;
    for (int a = 0; a < 3; a++) lr.o[a] = VL_LV(set1)(rec[a]), lr.d[a] = VL_LV(set1)(rec[VL_RR_DIR + a]);
    lr.tmin = VL_LV(set1)(rec[VL_RR_TMIN]);
    uint32_t node = start;
    for (;;) {
        top = push_children(bvh, &wide[node], &r, tmax, parallel, stack, top);
        for (;;) {
            if (!top) {
                rec[VL_RR_TMAX] = rec[VL_RR_TMAX2] = tmax;
                return;
            }
            const vl_stack1* e = &stack[--top];
            if (e->tnear > tmax) continue;
            if (!e->count) {
                node = e->child;
                break;
            }
            if (leaf_test(bvh, e->child, e->count, rec, &lr, parallel, any_hit, &tmax, hit)) {
                rec[VL_RR_TMAX] = rec[VL_RR_TMAX2] = -1.0f;
                return;
            }
        }
    }
}

vl_status vl_bvh_raycast1(const vl_bvh* bvh, const vl_ray* ray, uint32_t flags, vl_hit* hit) {
    if (!bvh || !ray || !hit) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_RAY_ANY) return VL_ERR_INVALID_FLAGS;
    *hit = vl_bvh_miss();
    if (!vl_bvh_ray_valid(ray)) return VL_ERR_INVALID_QUERY;
    _Alignas(16) float rec[VL_RAYREC_FLOATS];
    uint32_t parallel = vl_bvh_rayrec_set(rec, ray);
    vl_bvh_trace1(bvh, rec, parallel != 0, 0, (flags & VL_RAY_ANY) != 0, hit);
    return VL_OK;
}
