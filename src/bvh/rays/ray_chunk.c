/* A batch's rays as chunks of ray records (see ray_chunk.h). */
#include "bvh/rays/ray_chunk.h"

#include "simd/bvh_kernels.h"

_Static_assert(VL_RR_TMIN == 3 && VL_RR_INV == 4 && VL_RR_TMAX == 7 && VL_RR_DIR == 8 && VL_RR_TMAX2 == 11 &&
                   sizeof(vl_ray) == 8 * sizeof(float),
               "records are the quads (origin, tmin) (inv_dir, tmax) (dir, tmax); a vl_ray is 8 floats");

/* Cells per axis of the batch order. */
#define VL_ORDER_CELLS 8u

void vl_bvh_order_by_origin(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t chunk, uint32_t chunks,
                            uint32_t* perm, uint16_t* keys, uint32_t* cursor) {
    const vl_bvh_node* root = &bvh->nodes[0];
    float lo[3], scale[3];
    for (int a = 0; a < 3; a++) {
        float extent = root->max[a] - root->min[a];
        lo[a] = root->min[a];
        /* an unbounded or flat axis orders nothing */
        scale[a] = extent > 0.0f && extent <= FLT_MAX ? (float)VL_ORDER_CELLS / extent : 0.0f;
    }
    enum { KEYS = VL_ORDER_CELLS * VL_ORDER_CELLS * VL_ORDER_CELLS * 8 };
    uint32_t start[KEYS];
    memset(start, 0, sizeof start);
    for (uint32_t i = 0; i < count; i++) {
        const vl_ray* r = &rays[i];
        uint32_t key = 0;
        for (int a = 0; a < 3; a++) {
            float f = (r->origin[a] - lo[a]) * scale[a];
            /* NaN: 0 */
            uint32_t c = f > 0.0f ? (f < (float)(VL_ORDER_CELLS - 1) ? (uint32_t)f : VL_ORDER_CELLS - 1) : 0;
            key = key * VL_ORDER_CELLS + c;
        }
        uint32_t octant = (r->dir[0] < 0.0f) | (r->dir[1] < 0.0f) << 1 | (r->dir[2] < 0.0f) << 2;
        key = key * 8 + octant;
        keys[i] = (uint16_t)key;
        start[key]++;
    }
    for (uint32_t k = 0, sum = 0; k < KEYS; k++) {
        uint32_t c = start[k];
        start[k] = sum;
        sum += c;
    }
    /* ray i's place in that order is start[keys[i]]++; it goes to the chunk of its place, where the
     * rays keep the caller's order (in cell order their records would be gathered out of order and
     * run slower: docs/measurements/rays.md) */
    for (uint32_t c = 0; c < chunks; c++) cursor[c] = c * chunk;
    for (uint32_t i = 0; i < count; i++) perm[cursor[start[keys[i]]++ / chunk]++] = i;
}

vl_status vl_bvh_load_chunk(const vl_ray* rays, uint32_t base, const uint32_t* order, uint32_t len, float* rec,
                            vl_hit* out, uint32_t* idx, uint32_t* live, uint32_t* parallel) {
    vl_status status = VL_OK;
    uint32_t n = 0, flat_any = 0, i = 0;
    for (uint32_t j = 0; j < len; j++) out[j] = vl_bvh_miss();
    for (; i + VL_BW <= len; i += VL_BW) {
        vl_ray gathered[VL_BW];
        const vl_ray* src = rays + base + i;
        if (order) {
            for (uint32_t j = 0; j < VL_BW; j++) gathered[j] = rays[order[i + j]];
            src = gathered;
        }
        uint32_t flat, ok = vl_kw_rayrecs((const float*)src, rec + VL_RAYREC_FLOATS * (size_t)i, VL_RAYREC_FLOATS, &flat);
        flat_any |= flat;
        if (ok != (1u << VL_BW) - 1u) status = VL_ERR_INVALID_QUERY;
        for (uint32_t j = 0; j < VL_BW; j++) idx[n] = i + j, n += (ok >> j) & 1u;
    }
    for (; i < len; i++) { /* the last few one at a time */
        const vl_ray* ray = &rays[order ? order[i] : base + i];
        float* r = rec + VL_RAYREC_FLOATS * (size_t)i;
        if (vl_ray_valid(ray)) {
            flat_any |= vl_bvh_rayrec_set(r, ray);
            idx[n++] = i;
        } else {
            vl_bvh_rayrec_retired(r);
            status = VL_ERR_INVALID_QUERY;
        }
    }
    *live = n, *parallel = flat_any;
    return status;
}
