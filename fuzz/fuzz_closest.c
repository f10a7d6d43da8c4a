/* Fuzzes the closest-point queries: a byte stream becomes a small scene of triangles or boxes on a
 * coarse grid (shared vertices, coplanar faces, zero-area triangles, flat and infinite boxes) and
 * batches of point queries about it (on vertices, edges and faces of the grid, far away, huge
 * coordinates, max_distance 0, finite, infinite, and invalid). Every query's answer (batched plain
 * and on caller scratch, alone, on a context, and the walks interleaved and one by one) must agree
 * every bit, and with a brute force over all primitives with the library's exact tests (so that
 * only the culling is on trial here; the exact tests meet an independent oracle in
 * test_closest.c): an answer exactly when some primitive lies within max_distance, the least
 * squared distance of all, its distance and point; none and VL_ERR_INVALID_QUERY for invalid
 * queries; no leak. Every input runs twice: where its bytes put it, and moved far from the origin
 * (fuzz_far_offset). */
#include <float.h>

#include <volley/volley.h>

#include "bvh/closest/closest.h"
#include "fuzz_util.h"

#define MAX_QUERIES 24

/* The offset of this run, added to every coordinate the bytes give. */
static float g_off[3];


/* The library's exact squared distance from q's point to primitive i, the triangle as the tree
 * keeps it (v0 and its float edges). */
static double exact(const fuzz_scene* s, const vl_closest_query* q, uint32_t i) {
    if (s->boxes) return vl_closest_box_exact(q->p, s->box[i].min, s->box[i].max);
    const float* p = s->xyz + 9 * (size_t)i;
    double w[3], e1[3], e2[3];
    for (int a = 0; a < 3; a++) {
        float f1 = p[3 + a] - p[a], f2 = p[6 + a] - p[a];
        w[a] = (double)q->p[a] - p[a], e1[a] = f1, e2[a] = f2;
    }
    return vl_closest_tri_exact(w, e1, e2, NULL, NULL);
}

static void check_answer(const fuzz_scene* s, const vl_point_query* in, const vl_closest_hit* h, uint32_t i) {
    if (!vl_closest_valid(in)) {
        FUZZ_CHECK(h->prim == VL_NO_HIT && h->distance == INFINITY && h->u == 0 && h->v == 0 && h->point[0] == 0,
                   "%u: invalid query answered", i);
        return;
    }
    vl_closest_query q;
    vl_closest_query_set(&q, in);
    double least = INFINITY;
    for (uint32_t k = 0; k < s->count; k++) {
        double d2 = exact(s, &q, k);
        least = d2 < least ? d2 : least;
    }
    const int within = least < INFINITY && least <= q.max2;
    FUZZ_CHECK((h->prim != VL_NO_HIT) == within, "%u: prim %u, brute force d2 %g, max %g (p %g %g %g)", i, h->prim,
               least, in->max_distance, in->point[0], in->point[1], in->point[2]);
    if (h->prim == VL_NO_HIT) {
        FUZZ_CHECK(h->distance == INFINITY && h->u == 0 && h->v == 0, "%u: none with fields set", i);
        return;
    }
    FUZZ_CHECK(h->prim < s->count, "%u: prim %u", i, h->prim);
    const double d2 = exact(s, &q, h->prim);
    FUZZ_CHECK(d2 == least, "%u: prim %u at d2 %.17g, least %.17g", i, h->prim, d2, least);
    FUZZ_CHECK(h->distance == (float)sqrt(least), "%u: distance %g, brute force %g", i, h->distance, sqrt(least));
    /* the point: at the distance from the query, up to the float rounding of its coordinates and
     * the double arithmetic's on the query's and the primitive's (a point near 0 found on a
     * triangle whose corners lie near 1 carries 2^-52 of 1, not of itself) */
    double pc = 0, mag = 0;
    for (int a = 0; a < 3; a++) {
        double x = (double)h->point[a] - in->point[a];
        pc += x * x, mag = fmax(mag, fmax(fabs(h->point[a]), fabs(in->point[a])));
        for (int c = 0; c < 3 && !s->boxes; c++) mag = fmax(mag, fabs(s->xyz[9 * (size_t)h->prim + 3 * c + a]));
        for (int c = 0; c < 2 && s->boxes; c++) {
            const float b = c ? s->box[h->prim].max[a] : s->box[h->prim].min[a];
            if (isfinite(b)) mag = fmax(mag, fabs(b));
        }
    }
    FUZZ_CHECK(isfinite(h->point[0]) && isfinite(h->point[1]) && isfinite(h->point[2]), "%u: point not finite", i);
    FUZZ_CHECK(fabs(sqrt(pc) - sqrt(least)) <= 1e-5 * (sqrt(least) + mag) + 1e-30, "%u: point %g from the query, d %g",
               i, sqrt(pc), sqrt(least));
    if (s->boxes) {
        FUZZ_CHECK(h->u == 0 && h->v == 0, "%u: box u v", i);
        for (int a = 0; a < 3; a++)
            FUZZ_CHECK(h->point[a] >= s->box[h->prim].min[a] && h->point[a] <= s->box[h->prim].max[a],
                       "%u: point outside its box", i);
    } else {
        FUZZ_CHECK(h->u >= -1e-6f && h->v >= -1e-6f && h->u + h->v <= 1 + 1e-6f, "%u: u v %g %g", i, h->u, h->v);
    }
}

static float fuzz_max(fuzz_input* in) {
    uint8_t b = fuzz_byte(in);
    return b < 96 ? INFINITY : b < 128 ? 0.0f : b < 240 ? (float)(b % 16) * 0.5f : fuzz_coord(in);
}

static void run(const uint8_t* data, size_t size) {
    size_t before = vl_get_bytes_in_use();
    fuzz_input in = {data, size, 0};
    static fuzz_scene s;
    vl_bvh* bvh = fuzz_build_scene(&in, &s, g_off);
    vl_context* ctx = NULL;
    FUZZ_CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    if (bvh) {
        static vl_point_query q[MAX_QUERIES];
        static vl_closest_hit plain[MAX_QUERIES], scr[MAX_QUERIES], onctx[MAX_QUERIES];
        static _Alignas(64) uint8_t scratch[64];
        while (!fuzz_done(&in)) {
            uint32_t n = 1 + fuzz_byte(&in) % MAX_QUERIES;
            int any_invalid = 0;
            for (uint32_t i = 0; i < n; i++) {
                for (int a = 0; a < 3; a++) q[i].point[a] = fuzz_coord(&in) + g_off[a];
                q[i].max_distance = fuzz_max(&in);
                any_invalid |= !vl_closest_valid(&q[i]);
            }
            FUZZ_CHECK(vl_bvh_closest_scratch_size(bvh, n) == 0, "scratch size");
            vl_status st = vl_bvh_closest_points(bvh, q, n, plain, NULL);
            FUZZ_CHECK(st == (any_invalid ? VL_ERR_INVALID_QUERY : VL_OK), "batch status %s", vl_status_string(st));
            vl_status st2 = vl_bvh_closest_points(bvh, q, n, scr, &(vl_exec){.scratch = scratch, .scratch_bytes = 64});
            vl_status st3 = vl_bvh_closest_points(bvh, q, n, onctx, &(vl_exec){.context = ctx});
            FUZZ_CHECK(st2 == st && st3 == st, "scratch %s, context %s", vl_status_string(st2), vl_status_string(st3));
            FUZZ_CHECK(memcmp(plain, scr, sizeof(vl_closest_hit) * n) == 0, "plain and scratch answers differ");
            FUZZ_CHECK(memcmp(plain, onctx, sizeof(vl_closest_hit) * n) == 0, "plain and context answers differ");
            /* the walks interleaved and one by one */
            vl_closest_query cq[MAX_QUERIES];
            vl_closest_best b1[MAX_QUERIES], b2[MAX_QUERIES];
            uint32_t m = 0;
            for (uint32_t i = 0; i < n; i++) {
                if (!vl_closest_valid(&q[i])) continue;
                vl_closest_query_set(&cq[m], &q[i]);
                b1[m] = b2[m] = (vl_closest_best){cq[m].max2, VL_BVH_EMPTY, 0};
                m++;
            }
            if (m) {
                vl_closest_trace_interleaved(bvh, cq, m, b1);
                vl_closest_trace_each(bvh, cq, m, b2);
                FUZZ_CHECK(memcmp(b1, b2, sizeof(vl_closest_best) * m) == 0, "interleaved and one-by-one walks differ");
            }
            for (uint32_t i = 0; i < n; i++) {
                vl_closest_hit one;
                vl_status s1 = vl_bvh_closest_points(bvh, &q[i], 1, &one, NULL);
                FUZZ_CHECK(s1 == (vl_closest_valid(&q[i]) ? VL_OK : VL_ERR_INVALID_QUERY), "single status %s",
                           vl_status_string(s1));
                FUZZ_CHECK(memcmp(&one, &plain[i], sizeof one) == 0, "%u: single and batched answers differ", i);
                check_answer(&s, &q[i], &plain[i], i);
            }
        }
        vl_bvh_destroy(bvh);
    }
    vl_context_destroy(ctx);
    FUZZ_CHECK_NO_LEAK(before);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_near_then_far(data, size, g_off, run); }
