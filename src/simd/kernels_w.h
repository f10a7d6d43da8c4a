/* Width-generic kernel bodies. Included by kernels.h with VL_W defined as 4 or 8: VL_V(add) names
 * vl_f4_add or vl_f8_add, VL_K(slab) names vl_k4_slab or vl_k8_slab. */
#define VL_PASTE3_(a, b, c) a##b##c
#define VL_PASTE3(a, b, c) VL_PASTE3_(a, b, c)
#define VF VL_PASTE3(vl_f, VL_W, )
#define VI VL_PASTE3(vl_i, VL_W, )
#define VL_V(op) VL_PASTE3(vl_f, VL_W, _##op)
#define VL_VI(op) VL_PASTE3(vl_i, VL_W, _##op)
#define VL_K(name) VL_PASTE3(vl_k, VL_W, _##name)
#define RAYV VL_PASTE3(vl_rayv, VL_W, )
#define BOXV VL_PASTE3(vl_boxv, VL_W, )

/* VL_W rays, or one ray broadcast, as vectors. */
typedef struct RAYV {
    VF origin[3], inv_dir[3], tmin, tmax;
} RAYV;

/* VL_W boxes, or one box broadcast, as vectors. */
typedef struct BOXV {
    VF min[3], max[3];
} BOXV;

VL_INLINE RAYV VL_K(ray_broadcast)(const vl_ray_prep* ray) {
    RAYV r;
    for (int a = 0; a < 3; a++) {
        r.origin[a] = VL_V(set1)(ray->origin[a]);
        r.inv_dir[a] = VL_V(set1)(ray->inv_dir[a]);
    }
    r.tmin = VL_V(set1)(ray->tmin);
    r.tmax = VL_V(set1)(ray->tmax);
    return r;
}

VL_INLINE RAYV VL_K(ray_load)(const vl_rays_soa* rays, uint32_t i) {
    RAYV r;
    for (int a = 0; a < 3; a++) {
        r.origin[a] = VL_V(loadu)(rays->origin[a] + i);
        r.inv_dir[a] = VL_V(loadu)(rays->inv_dir[a] + i);
    }
    r.tmin = VL_V(loadu)(rays->tmin + i);
    r.tmax = VL_V(loadu)(rays->tmax + i);
    return r;
}

VL_INLINE BOXV VL_K(box_broadcast)(const vl_aabb* box) {
    BOXV b;
    for (int a = 0; a < 3; a++) {
        b.min[a] = VL_V(set1)(box->min[a]);
        b.max[a] = VL_V(set1)(box->max[a]);
    }
    return b;
}

VL_INLINE BOXV VL_K(box_load)(const vl_boxes_soa* boxes, uint32_t i) {
    BOXV b;
    for (int a = 0; a < 3; a++) {
        b.min[a] = VL_V(loadu)(boxes->min[a] + i);
        b.max[a] = VL_V(loadu)(boxes->max[a] + i);
    }
    return b;
}

/* Slab test, no parallel axis (every inv_dir finite): the entry t of each ray into each box goes
 * to *tnear; the mask is set where [entry, exit] meets [tmin, tmax]. 6 sub, 6 mul, 12 min/max. */
VL_INLINE VF VL_K(slab)(const RAYV* r, const BOXV* b, VF* tnear) {
    VF tn = r->tmin, tf = r->tmax;
    for (int a = 0; a < 3; a++) {
        VF t1 = VL_V(mul)(VL_V(sub)(b->min[a], r->origin[a]), r->inv_dir[a]);
        VF t2 = VL_V(mul)(VL_V(sub)(b->max[a], r->origin[a]), r->inv_dir[a]);
        tn = VL_V(max)(tn, VL_V(min)(t1, t2));
        tf = VL_V(min)(tf, VL_V(max)(t1, t2));
    }
    *tnear = tn;
    return VL_V(le)(tn, tf);
}

/* Slab test where inv_dir may be +-INFINITY (a parallel axis): such an axis bounds nothing, but
 * the origin must lie inside its slab. inv_dir is swapped for 1 there, so no inf * 0 is formed. */
VL_INLINE VF VL_K(slab_parallel)(const RAYV* r, const BOXV* b, VF* tnear) {
    const VF inf = VL_V(set1)(INFINITY), zero = VL_V(zero)(), one = VL_V(set1)(1.0f);
    VF tn = r->tmin, tf = r->tmax, outside = zero;
    for (int a = 0; a < 3; a++) {
        VF parallel = VL_V(eq)(VL_V(abs)(r->inv_dir[a]), inf);
        VF inv = VL_V(select)(parallel, one, r->inv_dir[a]);
        VF d1 = VL_V(sub)(b->min[a], r->origin[a]);
        VF d2 = VL_V(sub)(b->max[a], r->origin[a]);
        VF t1 = VL_V(mul)(d1, inv), t2 = VL_V(mul)(d2, inv);
        outside = VL_V(or)(outside, VL_V(and)(parallel, VL_V(or)(VL_V(gt)(d1, zero), VL_V(lt)(d2, zero))));
        /* where parallel and inside, min(t1, t2) = d1 <= 0 <= tmin: neutral, no select needed */
        tn = VL_V(max)(tn, VL_V(min)(t1, t2));
        tf = VL_V(min)(tf, VL_V(select)(parallel, inf, VL_V(max)(t1, t2)));
    }
    *tnear = tn;
    return VL_V(andnot)(VL_V(le)(tn, tf), outside);
}

/* Closed-interval overlap of boxes a and b on all three axes. */
VL_INLINE VF VL_K(box_overlap)(const BOXV* a, const BOXV* b) {
    VF m = VL_V(and)(VL_V(le)(a->min[0], b->max[0]), VL_V(le)(b->min[0], a->max[0]));
    for (int k = 1; k < 3; k++)
        m = VL_V(and)(m, VL_V(and)(VL_V(le)(a->min[k], b->max[k]), VL_V(le)(b->min[k], a->max[k])));
    return m;
}

/* Sortable keys of VL_W floats (see vl_float_to_sortable). */
VL_INLINE VI VL_K(float_to_sortable)(VF f) {
    VI bits = VL_V(as_i)(VL_V(add)(f, VL_V(zero)()));
    VI mask = VL_VI(or)(VL_VI(sign_mask)(bits), VL_VI(set1)((int32_t)0x80000000u));
    return VL_VI(xor)(bits, mask);
}

/* Floats back from sortable keys: negatives had every bit flipped, positives only the sign bit. */
VL_INLINE VF VL_K(sortable_to_float)(VI key) {
    VI negative = VL_VI(eq)(VL_VI(sign_mask)(key), VL_VI(set1)(0)); /* sign bit clear: was negative */
    VI mask = VL_VI(or)(negative, VL_VI(set1)((int32_t)0x80000000u));
    return VL_VI(as_f)(VL_VI(xor)(key, mask));
}

/* One ray against `count` boxes: tnear_out[i] = entry t into box i, or INFINITY on a miss
 * (tnear_out holds vl_round_up8(count) floats; the lanes past count up to the next multiple of
 * VL_W get INFINITY). Returns the number of boxes hit. */
static inline uint32_t VL_K(ray_vs_boxes)(const vl_ray_prep* ray, const vl_boxes_soa* boxes, uint32_t count,
                                          float* tnear_out) {
    const RAYV r = VL_K(ray_broadcast)(ray);
    const VF miss = VL_V(set1)(INFINITY);
    const int parallel = ray->parallel != 0;
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; i += VL_W) {
        BOXV b = VL_K(box_load)(boxes, i);
        VF tn;
        VF m = parallel ? VL_K(slab_parallel)(&r, &b, &tn) : VL_K(slab)(&r, &b, &tn);
        if (count - i < VL_W) m = VL_V(and)(m, VL_V(first)(count - i));
        VL_V(storeu)(tnear_out + i, VL_V(select)(m, tn, miss));
        hits += (uint32_t)__builtin_popcount(VL_V(bits)(m));
    }
    return hits;
}

/* `count` rays against one box; `any_parallel` says whether some ray has a parallel axis.
 * tnear_out as for ray_vs_boxes. Returns the number of rays that hit. */
static inline uint32_t VL_K(rays_vs_box)(const vl_rays_soa* rays, uint32_t count, int any_parallel,
                                         const vl_aabb* box, float* tnear_out) {
    const BOXV b = VL_K(box_broadcast)(box);
    const VF miss = VL_V(set1)(INFINITY);
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; i += VL_W) {
        RAYV r = VL_K(ray_load)(rays, i);
        VF tn;
        VF m = any_parallel ? VL_K(slab_parallel)(&r, &b, &tn) : VL_K(slab)(&r, &b, &tn);
        if (count - i < VL_W) m = VL_V(and)(m, VL_V(first)(count - i));
        VL_V(storeu)(tnear_out + i, VL_V(select)(m, tn, miss));
        hits += (uint32_t)__builtin_popcount(VL_V(bits)(m));
    }
    return hits;
}

/* One box against `count` boxes: writes the indices of those it overlaps, in increasing order,
 * to out (room for count indices) and returns how many. */
static inline uint32_t VL_K(box_vs_boxes)(const vl_aabb* query, const vl_boxes_soa* boxes, uint32_t count,
                                          uint32_t* out) {
    const BOXV q = VL_K(box_broadcast)(query);
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i += VL_W) {
        BOXV b = VL_K(box_load)(boxes, i);
        VF m = VL_K(box_overlap)(&q, &b);
        if (count - i < VL_W) m = VL_V(and)(m, VL_V(first)(count - i));
        for (uint32_t bits = VL_V(bits)(m); bits; bits &= bits - 1) out[n++] = i + (uint32_t)__builtin_ctz(bits);
    }
    return n;
}

#undef VL_PASTE3_
#undef VL_PASTE3
#undef VF
#undef VI
#undef VL_V
#undef VL_VI
#undef VL_K
#undef RAYV
#undef BOXV
