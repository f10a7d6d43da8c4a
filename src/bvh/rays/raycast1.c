/* vl_bvh_raycast1: one ray's walk over the 4-wide nodes (ray1.h), with the children hit
 * fetched as they are pushed. */
#include "bvh/rays/ray1.h"

/* Visits `at`: pushes a node4's children hit, fetching them, or tests a leaf's primitives. */
static inline void walk_visit(const vl_bvh* bvh, vl_ray1* r, const float* rec, vl_stack1* stack, uint32_t* top,
                              vl_visit at, float* tmax, vl_hit* hit) {
    if (!at.count) {
        *top = vl_ray1_push_children(bvh, &bvh->wide[at.child], r, *tmax, stack, *top, 1);
        return;
    }
    vl_ray1_walk_leaf(bvh, r, rec, top, at, tmax, hit);
}

vl_status vl_bvh_raycast1(const vl_bvh* bvh, const vl_ray* ray, uint32_t flags, vl_hit* hit) {
    if (!bvh || !ray || !hit) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_QUERY_ANY) return VL_ERR_INVALID_FLAGS;
    *hit = vl_bvh_miss();
    if (!vl_ray_valid(ray)) return VL_ERR_INVALID_QUERY;
    _Alignas(16) float rec[VL_RAYREC_FLOATS];
    vl_ray1 r;
    vl_ray1_load_leaf(&r, rec, vl_bvh_rayrec_set(rec, ray) != 0, (flags & VL_QUERY_ANY) != 0);
    vl_ray1_load_slab(&r, rec);
    vl_stack1 stack;
    vl_visit at = {0, 0}; /* from the root's children */
    uint32_t top = 0;
    float tmax = rec[VL_RR_TMAX];
    do walk_visit(bvh, &r, rec, &stack, &top, at, &tmax, hit);
    while (vl_stack1_pop(&stack, &top, tmax, &at));
    return VL_OK;
}
