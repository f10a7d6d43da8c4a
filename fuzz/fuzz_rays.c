/* Fuzzes the BVH: a byte stream becomes a small scene of triangles or boxes on a coarse grid
 * (shared vertices, coplanar faces, zero-area triangles, flat boxes, with NaN, infinities and bad
 * indices mixed in) and batches of rays through it (axis-aligned, grazing, starting on faces,
 * invalid). A build must succeed exactly when the input is valid and then validate; every ray's
 * batched answer, single-ray answer and a brute force over all primitives with the same
 * primitive test must agree: the same t for the closest hit, a hit exactly when brute force has
 * one for any hit, a miss and VL_ERR_INVALID_QUERY for invalid rays. Each input runs twice: as
 * drawn, and moved (primitives and ray origins) by a far offset of scenes.h, 2^10 to 2^17 of
 * either sign, chosen by the input's last byte. */
#include <volley/volley.h>

#include "bvh/rays/ray_tests.h"
#include "bvh/rays/ray_plan.h"
#include "fuzz_util.h"
#include "scenes.h"

#define MAX_PRIMS 40
#define MAX_RAYS 64
/* A batch of the fuzzed rays over again, long enough for the ray streams. */
#define MAX_BATCH (VL_WALK_BATCH + MAX_RAYS)

typedef struct scene {
    int boxes; /* 1: box primitives, 0: triangles */
    uint32_t count;
    vl_bvh_tri tri[MAX_PRIMS];
    vl_aabb box[MAX_PRIMS];
} scene;

/* The offset vector of this pass (scenes.h): added to every coordinate drawn, rounded to float. */
static float g_move[3];

/* Brute force over every primitive with the library's own primitive tests: no culling at all. */
static vl_hit brute_closest(const scene* s, const vl_ray* ray) {
    vl_hit best = vl_bvh_miss();
    float rec[VL_RAYREC_FLOATS];
    uint32_t parallel = vl_bvh_rayrec_set(rec, ray);
    const float* d = rec + VL_RR_DIR;
    for (uint32_t i = 0; i < s->count; i++) {
        float t, u = 0, v = 0;
        int hit = s->boxes ? vl_bvh_ray_box(rec, s->box[i].min, s->box[i].max, ray->tmax, parallel != 0, &t)
                           : vl_bvh_ray_triangle(ray->origin, d, ray->tmin, ray->tmax, &s->tri[i], &t, &u, &v);
        if (hit && t < best.t) best = (vl_hit){t, i, u, v};
    }
    return best;
}

/* Whether primitive `prim` is hit by the ray at exactly t. */
static int brute_hits_at(const scene* s, const vl_ray* ray, uint32_t prim, float t_reported) {
    if (prim >= s->count) return 0;
    float rec[VL_RAYREC_FLOATS], t, u, v;
    uint32_t parallel = vl_bvh_rayrec_set(rec, ray);
    const float* d = rec + VL_RR_DIR;
    int hit = s->boxes ? vl_bvh_ray_box(rec, s->box[prim].min, s->box[prim].max, ray->tmax, parallel != 0, &t)
                       : vl_bvh_ray_triangle(ray->origin, d, ray->tmin, ray->tmax, &s->tri[prim], &t, &u, &v);
    return hit && t == t_reported;
}

static vl_bvh* build_scene(fuzz_input* in, scene* s) {
    vl_bvh_desc desc = fuzz_bvh_head(in, MAX_PRIMS, &s->boxes, &s->count);
    vl_bvh* bvh = NULL;
    vl_status status;
    int valid = 1;
    if (s->boxes) {
        for (uint32_t i = 0; i < s->count; i++) {
            vl_aabb* b = &s->box[i];
            for (int a = 0; a < 3; a++) {
                b->min[a] = fuzz_coord(in);
                b->max[a] = b->min[a] + fabsf(fuzz_coord(in));
                b->min[a] += g_move[a], b->max[a] += g_move[a];
            }
            valid &= test_box_valid(b);
        }
        status = vl_bvh_build_boxes(s->box, s->count, &desc, &bvh, NULL);
        if (!valid) FUZZ_CHECK(status == VL_ERR_INVALID_BOUNDS, "bad boxes: %s", vl_status_string(status));
    } else {
        static float xyz[MAX_PRIMS * 9];
        static uint32_t idx[MAX_PRIMS * 3];
        uint32_t nv = 3 * s->count;
        for (uint32_t i = 0; i < nv * 3; i++) xyz[i] = fuzz_coord(in) + g_move[i % 3], valid &= isfinite(xyz[i]);
        for (uint32_t i = 0; i < nv; i++) {
            uint8_t b = fuzz_byte(in);
            idx[i] = b == 0xFF ? nv : (b < 128 ? i : b % nv); /* shared vertices, or out of range */
            valid &= idx[i] < nv;
        }
        for (uint32_t i = 0; i < s->count; i++) {
            const float *v0 = xyz + 3 * idx[3 * i], *v1 = xyz + 3 * idx[3 * i + 1], *v2 = xyz + 3 * idx[3 * i + 2];
            if (valid) vl_bvh_tri_setup(&s->tri[i], v0, v1, v2, i);
        }
        status = vl_bvh_build_triangles(xyz, nv, idx, s->count, &desc, &bvh, NULL);
        if (!valid) FUZZ_CHECK(status == VL_ERR_INVALID_GEOMETRY, "bad triangles: %s", vl_status_string(status));
    }
    if (valid) FUZZ_CHECK(status == VL_OK, "valid scene refused: %s", vl_status_string(status));
    if (status != VL_OK) {
        FUZZ_CHECK(bvh == NULL, "failed build wrote *out");
        return NULL;
    }
    FUZZ_CHECK(vl_bvh_validate(bvh) == VL_OK, "validate failed");
    return bvh;
}

static vl_ray fuzz_ray(fuzz_input* in) {
    static const float tmins[] = {0.0f, 0.0f, 0.5f, 1.0f};
    vl_ray r;
    for (int a = 0; a < 3; a++) r.origin[a] = fuzz_coord(in) + g_move[a];
    for (int a = 0; a < 3; a++) {
        uint8_t b = fuzz_byte(in);
        r.dir[a] = b < 96 ? 0.0f : (b < 128 ? -0.0f : fuzz_coord(in)); /* axis-aligned rays are common */
    }
    r.tmin = tmins[fuzz_byte(in) % 4];
    uint8_t b = fuzz_byte(in);
    r.tmax = b < 128 ? INFINITY : (b < 250 ? (float)(b % 40) * 0.5f : fuzz_coord(in));
    return r;
}

static void check_rays(const vl_bvh* bvh, const scene* s, const vl_ray* rays, uint32_t n, uint32_t flags) {
    static vl_hit batch[MAX_BATCH];
    vl_status status = vl_bvh_raycast(bvh, rays, n, flags, batch, NULL);
    /* the same batch on the caller's scratch: the same answers, bit for bit */
    static vl_hit own[MAX_BATCH];
    const size_t bytes = vl_bvh_raycast_scratch_size(bvh, n, flags);
    void* scratch = bytes ? aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) & ~(size_t)63) : NULL;
    if (!bytes || scratch) {
        vl_status own_status = vl_bvh_raycast(bvh, rays, n, flags, own, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        FUZZ_CHECK(own_status == status, "scratch status %s", vl_status_string(own_status));
        FUZZ_CHECK(memcmp(own, batch, sizeof(vl_hit) * n) == 0, "scratch answers differ");
    }
    free(scratch);
    int any_invalid = 0;
    for (uint32_t i = 0; i < n; i++) {
        int valid = vl_ray_is_valid(&rays[i]);
        any_invalid |= !valid;
        vl_hit single;
        vl_status s1 = vl_bvh_raycast1(bvh, &rays[i], flags & VL_QUERY_ANY, &single); /* no batch hint */
        FUZZ_CHECK(s1 == (valid ? VL_OK : VL_ERR_INVALID_QUERY), "raycast1 status %s", vl_status_string(s1));
        if (!valid) {
            FUZZ_CHECK(batch[i].prim == VL_NO_HIT && single.prim == VL_NO_HIT, "invalid ray %u hit", i);
            continue;
        }
        vl_hit want = brute_closest(s, &rays[i]);
        const vl_hit* answers[2] = {&batch[i], &single};
        for (int k = 0; k < 2; k++) {
            const vl_hit* h = answers[k];
            const char* path = k ? "single" : "batched";
            FUZZ_CHECK((h->prim != VL_NO_HIT) == (want.prim != VL_NO_HIT),
                       "%s ray %u (o %g %g %g d %g %g %g): prim %u, brute force %u", path, i, rays[i].origin[0],
                       rays[i].origin[1], rays[i].origin[2], rays[i].dir[0], rays[i].dir[1], rays[i].dir[2], h->prim,
                       want.prim);
            if (h->prim == VL_NO_HIT) continue;
            FUZZ_CHECK(brute_hits_at(s, &rays[i], h->prim, h->t), "%s ray %u: prim %u is not hit at t %g", path, i,
                       h->prim, h->t);
            if (!(flags & VL_QUERY_ANY))
                FUZZ_CHECK(h->t == want.t, "%s ray %u: t %.9g, brute force %.9g", path, i, h->t, want.t);
        }
    }
    FUZZ_CHECK(status == (any_invalid ? VL_ERR_INVALID_QUERY : VL_OK), "batch status %s", vl_status_string(status));
}

static void run(const uint8_t* data, size_t size) {
    size_t before = vl_get_bytes_in_use();
    fuzz_input in = {data, size, 0};
    static scene s;
    vl_bvh* bvh = build_scene(&in, &s);
    if (bvh) {
        static vl_ray rays[MAX_BATCH];
        while (!fuzz_done(&in)) {
            uint8_t b = fuzz_byte(&in);
            uint32_t n = 1 + b % MAX_RAYS;
            for (uint32_t i = 0; i < n; i++) rays[i] = fuzz_ray(&in);
            /* the size byte's top bits: 3, the rays over again to VL_WALK_BATCH or more, which go
             * as ray streams (the others: one at a time, or walks) */
            if ((b >> 6) == 3) {
                for (uint32_t i = n; i < VL_WALK_BATCH + n; i++) rays[i] = rays[i % n];
                n += VL_WALK_BATCH;
            }
            check_rays(bvh, &s, rays, n, VL_QUERY_CLOSEST);
            check_rays(bvh, &s, rays, n, VL_QUERY_ANY | (b & 32 ? VL_QUERY_GROUP_BY_ORIGIN : 0u));
        }
        FUZZ_CHECK(vl_bvh_raycast(bvh, NULL, 1, 0, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL rays");
        FUZZ_CHECK(vl_bvh_raycast(bvh, rays, 1, 0x80, NULL, NULL) == VL_ERR_INVALID_ARGUMENT ||
                       vl_bvh_raycast(bvh, rays, 1, 0x80, NULL, NULL) == VL_ERR_INVALID_FLAGS, "bad flags, NULL hits");
        vl_bvh_destroy(bvh);
    }
    FUZZ_CHECK_NO_LEAK(before);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_near_then_far(data, size, g_move, run); }
