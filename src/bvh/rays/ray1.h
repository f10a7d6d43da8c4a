/* One ray's step over the 4-wide nodes, shared by vl_bvh_raycast1 and the interleaved walks: one
 * ray against a node4's 4 child boxes per instruction, the children hit pushed farthest first
 * with their entry t, so that a child is skipped when a closer hit has landed since (any hit: the
 * children that hold the origin last); a leaf's triangles VL_BW per instruction. */
#ifndef VL_BVH_RAYS_RAY1_H
#define VL_BVH_RAYS_RAY1_H

#include <stddef.h>
#include <string.h>

#include "bvh/rays/ray_walk.h"
#include "compiler.h"
#include "simd/bvh_kernels.h"

/* The ray broadcast to VL_BW lanes for the leaf test (a leaf's triangles, one per lane: one test
 * covers a leaf of up to 8 where 8 lanes are native). */
typedef struct vl_leafray {
    vl_fw o[3], d[3], tmin;
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

/* The leaf's triangles, VL_BW per test. The answer is the scalar loop's (each triangle in slot
 * order, tmax shrinking): any hit takes the first lane hit; closest hit the least t, the last of
 * equal ones. Returns 1 when an any-hit query is done. */
static inline int vl_ray1_leaf_tris(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_leafray* r,
                                    int any_hit, float* tmax, vl_hit* hit) {
    const float *rows = vl_bvh_leaf_rows(bvh, first), *geometry = vl_bvh_leaf_geometry(rows, count);
    for (uint32_t s = 0; s < count; s += VL_BW) {
        uint32_t n = count - s < VL_BW ? count - s : VL_BW;
        vl_fw t, u, v;
        uint32_t bits = vl_kw_ray_tri_rows(geometry + s, count, n, r->o, r->d, r->tmin, vl_fw_set1(*tmax), &t, &u, &v);
        if (!bits) continue; /* predicted: a branch, unlike a select, does not hold tmax on the test */
        float ts[VL_BW], us[VL_BW], vs[VL_BW];
        vl_fw_storeu(ts, t);
        vl_fw_storeu(us, u);
        vl_fw_storeu(vs, v);
        uint32_t j = vl_ctz32(bits);
        if (!any_hit) {
            for (uint32_t b = bits & (bits - 1); b; b &= b - 1) {
                uint32_t i = vl_ctz32(b);
                if (ts[i] <= ts[j]) j = i;
            }
        }
        *tmax = ts[j];
        hit->t = ts[j], hit->prim = vl_bvh_leaf_prim(rows, s + j), hit->u = us[j], hit->v = vs[j];
        if (any_hit) return 1;
    }
    return 0;
}

/* Tests the leaf's primitives; returns 1 when an any-hit query is done. */
static inline int vl_ray1_leaf(const vl_bvh* bvh, uint32_t first, uint32_t count, const float* rec,
                               const vl_leafray* lr, int parallel, int any_hit, float* tmax, vl_hit* hit) {
    if (bvh->kind == VL_BVH_TRIANGLES) return vl_ray1_leaf_tris(bvh, first, count, lr, any_hit, tmax, hit);
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
    vl_f4 origin[3], inv_dir[3], tmin;
    vl_leafray leaf;
    int parallel, any_hit;
    uint32_t near[3], far[3]; /* per axis, the bounds row the ray enters and leaves by */
} vl_ray1;

/* Per direction octant (bit a set: axis a goes down), the bounds row by which a ray enters on each
 * axis; it leaves by those of the opposite octant. */
static const uint32_t vl_octant_rows[8][3] = {{0, 1, 2}, {3, 1, 2}, {0, 4, 2}, {3, 4, 2},
                                              {0, 1, 5}, {3, 1, 5}, {0, 4, 5}, {3, 4, 5}};

/* The ray's leaf form (what every walk needs) and its flags. */
static inline void vl_ray1_load_leaf(vl_ray1* r, const float* rec, int parallel, int any_hit) {
    for (int a = 0; a < 3; a++) r->leaf.o[a] = vl_fw_set1(rec[a]), r->leaf.d[a] = vl_fw_set1(rec[VL_RR_DIR + a]);
    r->leaf.tmin = vl_fw_set1(rec[VL_RR_TMIN]);
    r->parallel = parallel, r->any_hit = any_hit;
}

/* The ray's slab form with its entry and exit rows (for vl_ray1_push_children; the paired steps
 * read the record instead). */
static inline void vl_ray1_load_slab(vl_ray1* r, const float* rec) {
    for (int a = 0; a < 3; a++) r->origin[a] = vl_f4_set1(rec[a]), r->inv_dir[a] = vl_f4_set1(rec[VL_RR_INV + a]);
    /* scalar reads: raycast1 has just stored the record, which a vector load would stall on */
    const uint32_t octant = (uint32_t)(rec[VL_RR_INV] < 0.0f) | (uint32_t)(rec[VL_RR_INV + 1] < 0.0f) << 1 |
                            (uint32_t)(rec[VL_RR_INV + 2] < 0.0f) << 2;
    memcpy(r->near, vl_octant_rows[octant], sizeof r->near);
    memcpy(r->far, vl_octant_rows[octant ^ 7u], sizeof r->far);
    r->tmin = vl_f4_set1(rec[VL_RR_TMIN]);
}

/* The entry t by which a node's children hit are ordered: for any hit, those that hold the origin
 * (entered at tmin) go last, as if entered at tmax, and the others nearest first. A ray that
 * leaves a surface (a bounce, a shadow ray) starts inside the boxes around that surface, which it
 * rarely hits again, and crosses them only in part: bounces run faster so, most on a mesh in
 * cache, and the other sets about alike. Nodes are deferred as well as leaves (the gain is in the
 * upper levels), and a batch's seeds are not (docs/measurements/rays.md, rejected.md). An any-hit
 * ray's tmax stays put until it is done, so no such entry is culled. */
static inline vl_f4 vl_ray1_visit_order(const vl_ray1* r, vl_f4 tn, float tmax) {
    return r->any_hit ? vl_k4_origin_last(tn, r->tmin, vl_f4_set1(tmax)) : tn;
}

/* The slab test with each axis's entry and exit planes picked once per ray by the direction's
 * sign: the same values as min/max of both (no NaN here: every inverse is finite and nonzero),
 * 6 min/max fewer. */
static inline vl_f4 vl_ray1_slab_signed(const vl_bvh_node4* w, const vl_ray1* r, float tmax, vl_f4* tnear) {
    vl_f4 tn = r->tmin, tf = vl_f4_set1(tmax);
    for (int a = 0; a < 3; a++) {
        vl_f4 o = r->origin[a], inv = r->inv_dir[a];
        tn = vl_f4_max(tn, vl_f4_mul(vl_f4_sub(vl_f4_load(w->bounds[r->near[a]]), o), inv));
        tf = vl_f4_min(tf, vl_f4_mul(vl_f4_sub(vl_f4_load(w->bounds[r->far[a]]), o), inv));
    }
    *tnear = tn;
    return vl_f4_le(tn, tf);
}

/* The slab test exact on a parallel axis (inverse +-INFINITY): such an axis bounds nothing, but
 * the origin must lie inside its slab; its inverse is swapped for 1, so no inf * 0 is formed. */
static inline vl_f4 vl_ray1_slab_exact(const vl_bvh_node4* w, const vl_ray1* r, float tmax, vl_f4* tnear) {
    const vl_f4 inf = vl_f4_set1(INFINITY), zero = vl_f4_zero(), one = vl_f4_set1(1.0f);
    vl_f4 tn = r->tmin, tf = vl_f4_set1(tmax), outside = zero;
    for (int a = 0; a < 3; a++) {
        vl_f4 parallel = vl_f4_eq(vl_f4_abs(r->inv_dir[a]), inf);
        vl_f4 inv = vl_f4_select(parallel, one, r->inv_dir[a]);
        vl_f4 d1 = vl_f4_sub(vl_f4_load(w->bounds[a]), r->origin[a]);
        vl_f4 d2 = vl_f4_sub(vl_f4_load(w->bounds[3 + a]), r->origin[a]);
        vl_f4 t1 = vl_f4_mul(d1, inv), t2 = vl_f4_mul(d2, inv);
        outside = vl_f4_or(outside, vl_f4_and(parallel, vl_f4_or(vl_f4_gt(d1, zero), vl_f4_lt(d2, zero))));
        /* where parallel and inside, min(t1, t2) = d1 <= 0 <= tmin: neutral, no select needed */
        tn = vl_f4_max(tn, vl_f4_min(t1, t2));
        tf = vl_f4_min(tf, vl_f4_select(parallel, inf, vl_f4_max(t1, t2)));
    }
    *tnear = tn;
    return vl_f4_andnot(vl_f4_le(tn, tf), outside);
}

/* Where the leaves' primitives are, as an integer, and the bytes of one. */
static inline uintptr_t vl_bvh_leaf_base(const vl_bvh* bvh, uintptr_t* leaf_bytes) {
    const int tris = bvh->kind == VL_BVH_TRIANGLES;
    *leaf_bytes = tris ? sizeof(float) * VL_BVH_TRI_FLOATS : sizeof(vl_bvh_box);
    return tris ? (uintptr_t)bvh->tris : (uintptr_t)bvh->boxes;
}

/* Fetches the children of w whose bits are set (a node4: both its lines; a leaf: the first and
 * the last of the lines its primitives take); the others' fetches go to w itself, in cache. No
 * branch: the addresses are integers until chosen (an empty child's points nowhere). Inlined
 * always: gcc 12 deletes a call to a function that only prefetches (its modref pass finds no side
 * effect). */
VL_INLINE void vl_ray1_prefetch_children(const vl_bvh* bvh, const vl_bvh_node4* w, uint32_t bits) {
    uintptr_t leaf_bytes;
    const uintptr_t leaves = vl_bvh_leaf_base(bvh, &leaf_bytes), self = (uintptr_t)w;
    for (uint32_t i = 0; i < 4; i++) {
        uintptr_t c = w->child[i], n = w->count[i], take = (uintptr_t)0 - ((bits >> i) & 1u);
        uintptr_t node = (uintptr_t)bvh->wide + c * sizeof(vl_bvh_node4), leaf = leaves + c * leaf_bytes;
        uintptr_t first = n ? leaf : node, last = n ? leaf + (n - 1) * leaf_bytes : node + 64;
        VL_PREFETCH((const void*)((first & take) | (self & ~take)));
        VL_PREFETCH((const void*)((last & take) | (self & ~take)));
    }
}

/* Stores 4 visits (three columns) on the stack at top. */
VL_INLINE void vl_stack1_put4(vl_stack1* stack, uint32_t top, vl_i4 child, vl_i4 count, vl_i4 tnear) {
    vl_i4_storeu(&stack->child[top], child);
    vl_i4_storeu(&stack->count[top], count);
    vl_i4_storeu(&stack->tnear[top], tnear);
}

/* Puts the visits child[j], count[j] (j < 4) whose lane of `hit` is set on the stack at top,
 * farthest entry t (tn) first, in the order of a sorting network: all 4 are stored, the others
 * past the new top, so that no branch depends on how many go on. Returns the new top. */
VL_INLINE uint32_t vl_stack1_push4(vl_stack1* stack, uint32_t top, vl_f4 hit, vl_f4 tn, const uint32_t* child,
                                   const uint32_t* count) {
    vl_i4 key = vl_k4_far_first(hit, tn), lane = vl_i4_and(key, vl_i4_set1(3));
    vl_stack1_put4(stack, top, vl_i4_permute(vl_i4_loadu(child), lane), vl_i4_permute(vl_i4_loadu(count), lane),
                   vl_i4_and(key, vl_i4_set1(~3)));
    return top + vl_popcount32(vl_f4_bits(hit));
}

/* One ray against the 4 child boxes of a node4 (4 lanes); the children hit within [tmin, tmax]
 * go on the stack, farthest first (of equal ones, the first child on top), so that the nearest is
 * popped next, without a branch on how many were hit, which no predictor learns. `prefetch`:
 * the children hit are fetched at once, which the single-ray walk wants (the far ones' loads
 * overlap the near one's subtree) and the interleaved walks do not (their steps already overlap
 * each other's loads, so the fetches only cost: docs/measurements/rays.md, rejected.md). */
static inline uint32_t vl_ray1_push_children(const vl_bvh* bvh, const vl_bvh_node4* w, vl_ray1* r, float tmax,
                                             vl_stack1* stack, uint32_t top, int prefetch) {
    vl_f4 tn, hit = r->parallel ? vl_ray1_slab_exact(w, r, tmax, &tn) : vl_ray1_slab_signed(w, r, tmax, &tn);
    if (prefetch) vl_ray1_prefetch_children(bvh, w, vl_f4_bits(hit));
    return vl_stack1_push4(stack, top, hit, vl_ray1_visit_order(r, tn, tmax), w->child, w->count);
}

/* Pops the next visit of a walk still nearer than tmax into *at; 0 when there is none left. */
static inline int vl_stack1_pop(const vl_stack1* stack, uint32_t* top, float tmax, vl_visit* at) {
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
static inline void vl_ray1_walk_leaf(const vl_bvh* bvh, vl_ray1* r, const float* rec, uint32_t* top, vl_visit at,
                                     float* tmax, vl_hit* hit) {
    uint32_t done =
        (uint32_t)vl_ray1_leaf(bvh, at.child, at.count, rec, &r->leaf, r->parallel, r->any_hit, tmax, hit);
    *top &= done - 1u;
    *tmax = done ? -1.0f : *tmax;
}

#endif
