/* The sweep entry points: argument checks, per-sweep validation (an invalid sweep is a miss and
 * the batch goes on), the batch's scratch carved into query, record and best arrays and the
 * engine's arena, chunk by chunk, and the answers written back in the caller's order. */
#include <math.h>
#include <string.h>

#include "bvh/query_engine.h"
#include "bvh/sweep.h"
#include "bvh/traverse_scratch.h"
#include "core/alloc.h"

/* The flag bits the sweeps know (VL_RAY_GROUP_BY_ORIGIN is accepted and changes nothing). */
#define VL_SWEEP_FLAGS (VL_RAY_ANY | VL_RAY_GROUP_BY_ORIGIN)

/* Sweeps traced together at most: 16K take about 4.1 MB of scratch. */
#define VL_SWEEP_CHUNK 16384u

static size_t align_up(size_t n) { return (n + 63u) & ~(size_t)63u; }

static size_t chunk_bytes(uint32_t n) {
    return align_up(sizeof(vl_sweep_query) * (size_t)n) + align_up(sizeof(float) * VL_SWEEPREC_FLOATS * (size_t)n) +
           align_up(sizeof(vl_sweep_best) * (size_t)n) + sizeof(uint32_t) * vl_query_arena_entries(n);
}

size_t vl_bvh_sweep_scratch_size(const vl_bvh* bvh, uint32_t count, uint32_t flags) {
    if (!bvh || (flags & ~VL_SWEEP_FLAGS) || count == 0) return 0;
    return chunk_bytes(count < VL_SWEEP_CHUNK ? count : VL_SWEEP_CHUNK);
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
    _Alignas(16) float rec[VL_SWEEPREC_FLOATS];
    vl_sweep_rec_set(rec, &q);
    vl_sweep_best best = {0.0, VL_BVH_EMPTY, 0};
    vl_sweep_trace1(bvh, 0, &q, rec, any_hit, &best);
    if (best.first != VL_BVH_EMPTY) vl_sweep_answer(bvh, &q, &best, hit, contact);
    return 1;
}

static vl_status sweep_batch(const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count, uint32_t flags,
                             vl_hit* hits, vl_contact* contacts, void* scratch) {
    const int any_hit = (flags & VL_RAY_ANY) != 0;
    int invalid = 0;
    if (!scratch) {
        for (uint32_t i = 0; i < count; i++)
            invalid |= !sweep_one(bvh, sweeps, boxes, i, any_hit, &hits[i], contacts ? &contacts[i] : NULL);
        return invalid ? VL_ERR_INVALID_QUERY : VL_OK;
    }
    const uint32_t cap = count < VL_SWEEP_CHUNK ? count : VL_SWEEP_CHUNK;
    char* p = scratch;
    vl_sweep_query* q = (vl_sweep_query*)p;
    p += align_up(sizeof(vl_sweep_query) * (size_t)cap);
    float* rec = (float*)p;
    p += align_up(sizeof(float) * VL_SWEEPREC_FLOATS * (size_t)cap);
    vl_sweep_best* best = (vl_sweep_best*)p;
    p += align_up(sizeof(vl_sweep_best) * (size_t)cap);
    uint32_t* ids = (uint32_t*)p; /* the live sweeps, at the engine's arena's start */
    for (uint32_t start = 0; start < count; start += cap) {
        uint32_t n = count - start < cap ? count - start : cap, live = 0;
        for (uint32_t j = 0; j < n; j++) {
            best[j].first = VL_BVH_EMPTY, best[j].at = 0, best[j].t = 0.0;
            if (load_query(sweeps, boxes, start + j, &q[j])) {
                vl_sweep_rec_set(rec + VL_SWEEPREC_FLOATS * (size_t)j, &q[j]);
                ids[live++] = j;
            } else {
                vl_sweep_rec_retired(rec + VL_SWEEPREC_FLOATS * (size_t)j);
                invalid = 1;
            }
        }
        vl_sweep_batch b = {bvh, q, rec, best, live, any_hit};
        vl_sweep_trace_batch(&b, ids, vl_query_arena_entries(cap));
        for (uint32_t j = 0; j < n; j++) {
            vl_hit* hit = &hits[start + j];
            vl_contact* contact = contacts ? &contacts[start + j] : NULL;
            *hit = miss();
            if (contact) *contact = no_contact;
            if (best[j].first != VL_BVH_EMPTY) vl_sweep_answer(bvh, &q[j], &best[j], hit, contact);
        }
    }
    return invalid ? VL_ERR_INVALID_QUERY : VL_OK;
}

static vl_status sweep_checked(const vl_bvh* bvh, const void* sweeps, int boxes, uint32_t count, uint32_t flags,
                               vl_hit* hits, vl_contact* contacts, void* scratch, size_t scratch_bytes, int own) {
    if (!bvh || (count && (!sweeps || !hits))) return VL_ERR_INVALID_ARGUMENT;
    if (flags & ~VL_SWEEP_FLAGS) return VL_ERR_INVALID_FLAGS;
    if (count == 0) return VL_OK;
    size_t need = vl_bvh_sweep_scratch_size(bvh, count, flags);
    if (own) {
        void* mem = vl_mem_alloc(need);
        vl_status st = sweep_batch(bvh, sweeps, boxes, count, flags, hits, contacts, mem);
        vl_mem_free(mem, need);
        return st;
    }
    if (!vl_bvh_scratch_fits(scratch, scratch_bytes, need)) return VL_ERR_INVALID_ARGUMENT;
    return sweep_batch(bvh, sweeps, boxes, count, flags, hits, contacts, scratch);
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
