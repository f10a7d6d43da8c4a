/* The sweep entry points: argument checks, per-sweep validation (an invalid sweep is a miss and
 * the batch goes on), blocks of sweeps loaded on the C stack and walked down the tree interleaved
 * (vl_sweep_trace_walks; one sweep: one walk), the answers written in the caller's order.
 * Incoherent sweeps share little of the tree and their leaf tests (exact, in double) dominate, so
 * a batch wins by hiding the walks' memory latency, not by sharing nodes: the batch engine's lists
 * ran 0.83-0.94x the single walk (docs/SWEEP.md). Nothing reads the scratch. */
#include <math.h>

#include "bvh/sweep.h"
#include "bvh/traverse_scratch.h"

/* The flag bits the sweeps know (VL_RAY_GROUP_BY_ORIGIN is accepted and changes nothing). */
#define VL_SWEEP_FLAGS (VL_RAY_ANY | VL_RAY_GROUP_BY_ORIGIN)

/* Scratch bytes a _scratch call asks for: one cache line, whatever its count (none is read). */
#define VL_SWEEP_SCRATCH 64u

size_t vl_bvh_sweep_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags) {
    if (!bvh || (flags & ~VL_SWEEP_FLAGS) || count == 0) return 0;
    return VL_SWEEP_SCRATCH;
}

static const vl_contact no_contact = {{0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f}};

static vl_hit miss(void) {
    vl_hit h = {INFINITY, VL_NO_HIT, 0.0f, 0.0f};
    return h;
}

/* Sweep i of the caller's array (spheres or boxes) as a query; 0 when it is invalid. */
static int load_query(const void* sweeps, int boxes, uint32_t i, vl_sweep_query* q) {
    if (boxes) {
        const vl_box_sweep* s = (const vl_box_sweep*)sweeps + i;
        if (!vl_sweep_box_valid(s)) return 0;
        vl_sweep_query_box(q, s);
    } else {
        const vl_sphere_sweep* s = (const vl_sphere_sweep*)sweeps + i;
        if (!vl_sweep_sphere_valid(s)) return 0;
        vl_sweep_query_sphere(q, s);
    }
    return 1;
}

/* One sweep without scratch: hit and contact (may be NULL) written; 0 when it is invalid. */
static int sweep_one(const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t i, int any_hit, vl_hit* hit,
                     vl_contact* contact) {
    vl_sweep_query q;
    *hit = miss();
    if (contact) *contact = no_contact;
    if (!load_query(sweeps, boxes, i, &q)) return 0;
    vl_sweep_best best = {0.0, VL_BVH_EMPTY, 0};
    vl_sweep_trace_walks(bvh, &q, 1, any_hit, &best);
    if (best.first != VL_BVH_EMPTY) vl_sweep_answer(bvh, &q, &best, hit, contact);
    return 1;
}

/* Sweeps loaded and walked at a time (on the C stack). */
#define VL_SWEEP_BLOCK 64u

static vl_status sweep_batch(const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count, uint32_t flags,
                             vl_hit* hits, vl_contact* contacts) {
    const int any_hit = (flags & VL_RAY_ANY) != 0;
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
            if (!load_query(sweeps, boxes, i, &q[n])) {
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

static vl_status sweep_checked(const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count, uint32_t flags,
                               vl_hit* hits, vl_contact* contacts, void* scratch, size_t scratch_bytes, int own) {
    if (!bvh || (count && (!sweeps || !hits))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_SWEEP_FLAGS) return VL_ERR_INVALID_FLAGS;
    if (count == 0) return VL_OK;
    if (!own && !vl_bvh_scratch_fits(scratch, scratch_bytes, vl_bvh_sweep_scratch_size(bvh, count, flags)))
        return VL_ERR_INVALID_ARGUMENT;
    return sweep_batch(bvh, sweeps, boxes, count, flags, hits, contacts);
}

vl_status vl_bvh_sweep_spheres(const vl_bvh* bvh, const vl_sphere_sweep* sweeps, uint32_t count, uint32_t flags,
                               vl_hit* hits) {
    return sweep_checked(bvh, sweeps, 0, count, flags, hits, NULL, NULL, 0, 1);
}

vl_status vl_bvh_sweep_boxes(const vl_bvh* bvh, const vl_box_sweep* sweeps, uint32_t count, uint32_t flags,
                             vl_hit* hits) {
    return sweep_checked(bvh, sweeps, 1, count, flags, hits, NULL, NULL, 0, 1);
}

vl_status vl_bvh_sweep_spheres_scratch(const vl_bvh* bvh, const vl_sphere_sweep* sweeps, uint32_t count,
                                       uint32_t flags, vl_hit* hits, vl_contact* contacts, void* scratch,
                                       size_t scratch_bytes) {
    return sweep_checked(bvh, sweeps, 0, count, flags, hits, contacts, scratch, scratch_bytes, 0);
}

vl_status vl_bvh_sweep_boxes_scratch(const vl_bvh* bvh, const vl_box_sweep* sweeps, uint32_t count, uint32_t flags,
                                     vl_hit* hits, vl_contact* contacts, void* scratch, size_t scratch_bytes) {
    return sweep_checked(bvh, sweeps, 1, count, flags, hits, contacts, scratch, scratch_bytes, 0);
}

static vl_status sweep1(const vl_bvh* bvh, const void* sweep, int boxes, uint32_t flags, vl_hit* hit,
                        vl_contact* contact) {
    if (!bvh || !sweep || !hit) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_SWEEP_FLAGS) return VL_ERR_INVALID_FLAGS;
    return sweep_one(bvh, sweep, boxes, 0, (flags & VL_RAY_ANY) != 0, hit, contact) ? VL_OK : VL_ERR_INVALID_QUERY;
}

vl_status vl_bvh_sweep_sphere1(const vl_bvh* bvh, const vl_sphere_sweep* sweep, uint32_t flags, vl_hit* hit,
                               vl_contact* contact) {
    return sweep1(bvh, sweep, 0, flags, hit, contact);
}

vl_status vl_bvh_sweep_box1(const vl_bvh* bvh, const vl_box_sweep* sweep, uint32_t flags, vl_hit* hit,
                            vl_contact* contact) {
    return sweep1(bvh, sweep, 1, flags, hit, contact);
}
