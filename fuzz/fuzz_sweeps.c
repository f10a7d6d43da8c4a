/* Fuzzes the sweeps: a byte stream becomes a small scene of triangles or boxes on a coarse grid
 * (shared vertices, coplanar faces, zero-area triangles, flat and infinite boxes) and batches of
 * sphere and box sweeps through it (axis-aligned, touching, zero-length, infinite, invalid). Every
 * sweep's batched answer (plain and on caller scratch, with contacts) and single answer must agree
 * with a brute force over all primitives with the library's exact tests (so that only culling is
 * on trial here; the exact tests meet an independent oracle in test_sweeps.c): a hit exactly
 * when brute force has one, t never later than the first contact, contacts with unit normals
 * facing against the sweep, a miss and VL_ERR_INVALID_QUERY for invalid sweeps, no leak. Every
 * input runs twice: where its bytes put it, and moved far from the origin (fuzz_far_offset). */
#include <float.h>

#include <volley/volley.h>

#include "bvh/sweeps/sweep.h"
#include "fuzz_util.h"

#define MAX_SWEEPS 24

/* The offset of this run, added to every coordinate the bytes give. */
static float g_off[3];


/* The library's exact time of sweep q against primitive i, vertices as the tree keeps them. */
static double exact(const fuzz_scene* s, const vl_sweep_query* q, uint32_t i) {
    if (s->boxes) {
        double mn[3], mx[3];
        for (int a = 0; a < 3; a++) mn[a] = s->box[i].min[a], mx[a] = s->box[i].max[a];
        return vl_sweep_exact_box(q, mn, mx, q->tmax);
    }
    const float* p = s->xyz + 9 * (size_t)i;
    double v[3][3];
    for (int a = 0; a < 3; a++) {
        float e1 = p[3 + a] - p[a], e2n = p[a] - p[6 + a];
        v[0][a] = p[a], v[1][a] = (double)p[a] + e1, v[2][a] = (double)p[a] - e2n;
    }
    return vl_sweep_exact_tri(q, v, q->tmax);
}

static float fuzz_dir(fuzz_input* in) {
    uint8_t b = fuzz_byte(in);
    return b < 96 ? 0.0f : b < 112 ? -0.0f : fuzz_coord(in);
}

static void check_answer(const fuzz_scene* s, const vl_sweep_query* q, int valid, vl_hit h, const vl_contact* c,
                         int any, const char* path, uint32_t i) {
    if (!valid) {
        FUZZ_CHECK(h.prim == VL_NO_HIT && h.t == INFINITY, "%s %u: invalid sweep hit", path, i);
        return;
    }
    double T = INFINITY;
    for (uint32_t k = 0; k < s->count; k++) {
        double t = exact(s, q, k);
        if (t >= 0.0 && t < T) T = t;
    }
    /* a contact whose point lies past float range may be missed (bvh.h) */
    int path_in_range = 1;
    for (int a = 0; a < 3 && T < INFINITY; a++)
        path_in_range &= fabs(q->c[a]) + fabs(q->h[a]) + q->r + fabs(q->d[a]) * T <= FLT_MAX;
    if (!path_in_range && h.prim == VL_NO_HIT) return;
    FUZZ_CHECK((h.prim != VL_NO_HIT) == (T < INFINITY), "%s %u: prim %u, brute force T %g (c %g %g %g h %g %g %g r %g d %g %g %g tmax %g)", path, i, h.prim, T, q->c[0], q->c[1], q->c[2], q->h[0], q->h[1], q->h[2], q->r, q->d[0], q->d[1], q->d[2], q->tmax);
    if (h.prim == VL_NO_HIT) return;
    FUZZ_CHECK(h.prim < s->count, "%s %u: prim %u", path, i, h.prim);
    double tp = exact(s, q, h.prim);
    FUZZ_CHECK(tp >= 0.0 && h.t <= tp && h.t >= 0.0f, "%s %u: t %g, its prim's contact %g", path, i, h.t, tp);
    if (!any) FUZZ_CHECK(tp == T, "%s %u: prim %u at %g, first contact %g", path, i, h.prim, tp, T);
    if (c) {
        double nl = 0, nd = 0, dl = 0;
        for (int a = 0; a < 3; a++)
            nl += (double)c->normal[a] * c->normal[a], nd += (double)c->normal[a] * q->d[a], dl += q->d[a] * q->d[a];
        FUZZ_CHECK(fabs(sqrt(nl) - 1.0) < 1e-5, "%s %u: |normal| %g", path, i, sqrt(nl));
        FUZZ_CHECK(nd <= 1e-6 * sqrt(dl), "%s %u: normal . dir %g", path, i, nd);
    }
}

static void run(const uint8_t* data, size_t size) {
    size_t before = vl_get_bytes_in_use();
    fuzz_input in = {data, size, 0};
    static fuzz_scene s;
    vl_bvh* bvh = fuzz_build_scene(&in, &s, g_off);
    if (bvh) {
        static vl_sphere_sweep sph[MAX_SWEEPS];
        static vl_box_sweep box[MAX_SWEEPS];
        static vl_hit hits[MAX_SWEEPS], plain[MAX_SWEEPS];
        static vl_contact contacts[MAX_SWEEPS];
        static _Alignas(64) uint8_t scratch[1 << 16];
        while (!fuzz_done(&in)) {
            uint8_t b = fuzz_byte(&in);
            uint32_t n = 1 + b % MAX_SWEEPS, flags = (b >> 7) ? VL_QUERY_ANY : VL_QUERY_CLOSEST;
            int boxes = (b >> 6) & 1;
            for (uint32_t i = 0; i < n; i++) {
                uint8_t t = fuzz_byte(&in);
                float tmax = t < 96 ? INFINITY : t < 250 ? (float)(t % 40) * 0.5f : fuzz_coord(&in);
                float r = fuzz_byte(&in) < 200 ? (float)(fuzz_byte(&in) % 8) * 0.25f : fuzz_coord(&in);
                for (int a = 0; a < 3; a++) {
                    float c = fuzz_coord(&in) + g_off[a], d = fuzz_dir(&in);
                    sph[i].center[a] = c, sph[i].dir[a] = d;
                    box[i].box.min[a] = c, box[i].box.max[a] = c + r, box[i].dir[a] = d;
                }
                sph[i].radius = r, sph[i].tmax = box[i].tmax = tmax;
            }
            size_t bytes = vl_bvh_sweep_scratch_size(bvh, n, flags);
            FUZZ_CHECK(bytes <= sizeof scratch, "scratch %zu", bytes);
            vl_status st = boxes ? vl_bvh_sweep_boxes(bvh, box, n, flags, hits, contacts, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
                                 : vl_bvh_sweep_spheres(bvh, sph, n, flags, hits, contacts, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
            vl_status st2 = boxes ? vl_bvh_sweep_boxes(bvh, box, n, flags, plain, NULL, NULL)
                                  : vl_bvh_sweep_spheres(bvh, sph, n, flags, plain, NULL, NULL);
            FUZZ_CHECK(st == st2, "plain status %s", vl_status_string(st2));
            FUZZ_CHECK(memcmp(hits, plain, sizeof(vl_hit) * n) == 0, "plain and scratch answers differ");
            int any_invalid = 0;
            for (uint32_t i = 0; i < n; i++) {
                vl_sweep_query q;
                int valid = boxes ? vl_sweep_box_valid(&box[i]) : vl_sweep_sphere_valid(&sph[i]);
                any_invalid |= !valid;
                if (valid) {
                    if (boxes) vl_sweep_query_box(&q, &box[i]);
                    else vl_sweep_query_sphere(&q, &sph[i]);
                }
                vl_hit one;
                vl_contact c1;
                vl_status s1 = boxes ? vl_bvh_sweep_boxes(bvh, &box[i], 1, flags, &one, &c1, NULL)
                                     : vl_bvh_sweep_spheres(bvh, &sph[i], 1, flags, &one, &c1, NULL);
                FUZZ_CHECK(s1 == (valid ? VL_OK : VL_ERR_INVALID_QUERY), "single status %s", vl_status_string(s1));
                check_answer(&s, &q, valid, hits[i], &contacts[i], flags != 0, "batched", i);
                check_answer(&s, &q, valid, one, &c1, flags != 0, "single", i);
            }
            FUZZ_CHECK(st == (any_invalid ? VL_ERR_INVALID_QUERY : VL_OK), "batch status %s", vl_status_string(st));
        }
        vl_bvh_destroy(bvh);
    }
    FUZZ_CHECK_NO_LEAK(before);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_near_then_far(data, size, g_off, run); }
