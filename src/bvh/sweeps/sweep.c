/* The sweep entry points (spheres, boxes, capsules): argument checks, per-sweep validation (an invalid sweep is a miss and
 * the batch goes on), blocks of sweeps loaded on the C stack and walked down the tree interleaved
 * (vl_sweep_trace_walks; one sweep: one walk), the answers written in the caller's order.
 * Incoherent sweeps share little of the tree and their leaf tests (exact, in double) dominate, so
 * a batch wins by hiding the walks' memory latency, not by sharing nodes: the batch engine's lists
 * run slower than the single walk (docs/measurements/rejected.md). They need no scratch: a
 * caller's is not read. */
#include <math.h>

#include "bvh/sweeps/sweep.h"
#include "core/exec.h"

size_t vl_bvh_sweep_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags) {
    (void)bvh, (void)count, (void)flags;
    return 0; /* the sweeps run on the C stack */
}

static const vl_contact no_contact = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}};

static vl_hit miss(void) {
    vl_hit h = {INFINITY, VL_NO_HIT, 0.0f, 0.0f};
    return h;
}

/* Sweep i of the caller's array (of the shape) as a query; 0 when it is invalid. */
static int load_query(const void* sweeps, vl_sweep_shape shape, uint32_t i, vl_sweep_query* q) {
    if (shape == VL_SWEEP_BOXES) {
        const vl_box_sweep* s = (const vl_box_sweep*)sweeps + i;
        if (!vl_sweep_box_valid(s)) return 0;
        vl_sweep_query_box(q, s);
    } else if (shape == VL_SWEEP_CAPSULES) {
        const vl_capsule_sweep* s = (const vl_capsule_sweep*)sweeps + i;
        if (!vl_sweep_capsule_valid(s)) return 0;
        vl_sweep_query_capsule(q, s);
    } else {
        const vl_sphere_sweep* s = (const vl_sphere_sweep*)sweeps + i;
        if (!vl_sweep_sphere_valid(s)) return 0;
        vl_sweep_query_sphere(q, s);
    }
    return 1;
}

/* Sweeps loaded and walked at a time (on the C stack). */
#define VL_SWEEP_BLOCK 64u

vl_status vl_bvh_sweep_on(const vl_bvh* bvh, const void* sweeps, vl_sweep_shape shape, uint32_t count, uint32_t flags,
                          vl_hit* hits, vl_contact* contacts) {
    const int any_hit = (flags & VL_QUERY_ANY) != 0;
    int invalid = 0;
    vl_sweep_query q[VL_SWEEP_BLOCK];
    vl_sweep_best best[VL_SWEEP_BLOCK];
    uint32_t at[VL_SWEEP_BLOCK]; /* the caller's index of each valid sweep */
    for (uint32_t start = 0; start < count; start += VL_SWEEP_BLOCK) {
        const uint32_t end = count - start < VL_SWEEP_BLOCK ? count : start + VL_SWEEP_BLOCK;
        uint32_t n = 0;
        for (uint32_t i = start; i < end; i++) {
            hits[i] = miss();
            if (contacts) contacts[i] = no_contact;
            if (!load_query(sweeps, shape, i, &q[n])) {
                invalid = 1;
                continue;
            }
            best[n] = (vl_sweep_best){0.0, VL_BVH_EMPTY, 0};
            at[n++] = i;
        }
        vl_sweep_trace_walks(bvh, q, n, any_hit, best);
        for (uint32_t k = 0; k < n; k++)
            if (best[k].first != VL_BVH_EMPTY)
                vl_sweep_answer(bvh, &q[k], &best[k], &hits[at[k]], contacts ? &contacts[at[k]] : NULL);
    }
    return invalid ? VL_ERR_INVALID_QUERY : VL_OK;
}

static vl_status sweep(const vl_bvh* bvh, const void* sweeps, vl_sweep_shape shape, uint32_t count, uint32_t flags,
                       vl_hit* hits, vl_contact* contacts, const vl_exec* exec) {
    if (!bvh || (count && (!sweeps || !hits))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_QUERY_ANY) return VL_ERR_INVALID_FLAGS;
    switch (vl_exec_mode_of(exec)) {
    case VL_EXEC_HOOKS:
    case VL_EXEC_SCRATCH: return vl_bvh_sweep_on(bvh, sweeps, shape, count, flags, hits, contacts);
    case VL_EXEC_CONTEXT:
        return vl_bvh_sweep_on_context(exec->context, bvh, sweeps, shape, count, flags, hits, contacts);
    default: return VL_ERR_INVALID_ARGUMENT;
    }
}

vl_status vl_bvh_sweep_spheres(const vl_bvh* bvh, const vl_sphere_sweep* sweeps, uint32_t count, uint32_t flags,
                               vl_hit* hits, vl_contact* contacts, const vl_exec* exec) {
    return sweep(bvh, sweeps, VL_SWEEP_SPHERES, count, flags, hits, contacts, exec);
}

vl_status vl_bvh_sweep_boxes(const vl_bvh* bvh, const vl_box_sweep* sweeps, uint32_t count, uint32_t flags,
                             vl_hit* hits, vl_contact* contacts, const vl_exec* exec) {
    return sweep(bvh, sweeps, VL_SWEEP_BOXES, count, flags, hits, contacts, exec);
}

vl_status vl_bvh_sweep_capsules(const vl_bvh* bvh, const vl_capsule_sweep* sweeps, uint32_t count, uint32_t flags,
                                vl_hit* hits, vl_contact* contacts, const vl_exec* exec) {
    return sweep(bvh, sweeps, VL_SWEEP_CAPSULES, count, flags, hits, contacts, exec);
}
