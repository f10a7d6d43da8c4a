/* Edges of the BVH's documented contract: triangles at the edges of the documented range of the
 * ray-triangle test are hit (one ray and batches); node_cost bounds as the header states them;
 * which status wins when a call has several problems; any-hit answers agree with the one-ray path
 * on whether a ray hits (not on which hit). */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include <volley/volley.h>

#include "test_util.h"

/* One triangle with legs about L around a centre, seen from `dist` away along a random direction,
 * the ray's direction of length s aimed at the centre: hit by raycast1 and by batches of 64 and
 * 5000 copies (the walk and stream paths), at the right t. */
static void check_triangle(test_rng* r, double L, double dist, double s, int tilted, const char* what) {
    double c[3] = {test_float(r, -1, 1) * L, test_float(r, -1, 1) * L, test_float(r, -1, 1) * L};
    double e1[3] = {L, 0, 0}, e2[3] = {0, L, 0}, n[3] = {0, 0, 1};
    if (tilted) { /* a random well-shaped triangle: legs near L, angles far from 0 */
        double a = test_float(r, 0, 6.2831853f), b = test_float(r, 0.3f, 1.2f);
        double u[3] = {cos(a) * cos(b), sin(a) * cos(b), sin(b)};
        double v[3] = {-sin(a), cos(a), 0};
        for (int k = 0; k < 3; k++) e1[k] = L * u[k], e2[k] = L * (0.3 * u[k] + 0.9 * v[k]);
        n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
    }
    float xyz[9];
    for (int k = 0; k < 3; k++) {
        xyz[k] = (float)c[k];
        xyz[3 + k] = (float)(c[k] + e1[k]);
        xyz[6 + k] = (float)(c[k] + e2[k]);
    }
    /* the target: inside the triangle, away from its edges */
    double p[3], dirv[3], off[3];
    for (int k = 0; k < 3; k++) p[k] = xyz[k] + 0.3 * (xyz[3 + k] - xyz[k]) + 0.3 * (xyz[6 + k] - xyz[k]);
    /* the origin: `dist` away from the target, leaning towards the normal */
    double len = 0;
    for (int k = 0; k < 3; k++) off[k] = n[k] + 0.5 * test_float(r, -1, 1), len += off[k] * off[k];
    len = sqrt(len);
    vl_ray ray;
    for (int k = 0; k < 3; k++) {
        ray.origin[k] = (float)(p[k] + off[k] / len * dist);
        dirv[k] = p[k] - ray.origin[k];
    }
    double dl = sqrt(dirv[0] * dirv[0] + dirv[1] * dirv[1] + dirv[2] * dirv[2]);
    for (int k = 0; k < 3; k++) ray.dir[k] = (float)(dirv[k] / dl * s);
    ray.tmin = 0;
    ray.tmax = INFINITY;
    double t_want = dl / s;
    /* the case is inside the documented range */
    double D = 0, Lmax = 0;
    for (int v = 0; v < 3; v++) {
        double dv = 0, ev = 0;
        for (int k = 0; k < 3; k++) {
            double x = xyz[3 * v + k] - ray.origin[k], y = xyz[3 * ((v + 1) % 3) + k] - xyz[3 * v + k];
            dv += x * x, ev += y * y;
        }
        D = fmax(D, sqrt(dv)), Lmax = fmax(Lmax, sqrt(ev));
    }
    double l2d = Lmax * Lmax * D, l2s = Lmax * Lmax * s, lds = Lmax * D * s;
    CHECK(l2d <= 0x1p120 && l2s <= 0x1p120 && lds <= 0x1p120 && l2d >= 0x1p-100 && l2s >= 0x1p-100 &&
              lds >= 0x1p-100,
          "%s: outside the range: L^2 D 2^%.1f, L^2 s 2^%.1f, L D s 2^%.1f", what, log2(l2d), log2(l2s), log2(lds));
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "%s: build", what);
    if (!bvh) return;
    vl_hit one;
    CHECK(vl_bvh_raycast1(bvh, &ray, VL_QUERY_CLOSEST, &one) == VL_OK && one.prim == 0, "%s: raycast1 missed", what);
    CHECK(one.prim != 0 || fabs(one.t - t_want) <= 1e-3 * t_want, "%s: t %g, expected %g", what, one.t, t_want);
    static vl_ray rays[5000];
    static vl_hit hits[5000];
    for (int k = 0; k < 5000; k++) rays[k] = ray;
    static const uint32_t sizes[2] = {64, 5000};
    for (int z = 0; z < 2; z++)
        for (uint32_t flags = 0; flags < 2; flags++) {
            CHECK(vl_bvh_raycast(bvh, rays, sizes[z], flags, hits, NULL) == VL_OK, "%s: batch", what);
            int all = 1;
            for (uint32_t k = 0; k < sizes[z]; k++) all &= hits[k].prim == 0;
            CHECK(all, "%s: batch of %u (flags %u) missed", what, sizes[z], flags);
        }
    vl_bvh_destroy(bvh);
}

/* The documented range: L^2 D, L^2 s and L D s between 2^-100 and 2^120 (L the longest edge, D
 * the largest distance from the origin to a vertex, s = |dir|). The cases sit near its edges (the
 * test checks that each is inside). A triangle is aimed at from at most 2^18 L away: farther,
 * a float direction cannot aim at it. */
static void test_triangle_range(void) {
    static const struct {
        double l, dist, s; /* powers of two */
        const char* what;
    } cases[] = {
        {39.1, 39.1, 0, "L^2 D near 2^120"},   {20, 20, 78.8, "L D s near 2^120"},
        {20, 17, 78.4, "L^2 s near 2^120"},    {-38.9, -21, -22, "L^2 s and L^2 D near 2^-100"},
        {0, 0, 0, "unit"},                     {-10, 8, 0, "small triangle far away"},
        {30, 30, -60, "large triangle, short direction"},
    };
    test_rng r = {17};
    for (unsigned k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int tilted = 0; tilted < 2; tilted++)
            for (int round = 0; round < 3; round++) {
                char what[96];
                snprintf(what, sizeof what, "%s%s #%d", cases[k].what, tilted ? ", tilted" : "", round);
                check_triangle(&r, exp2(cases[k].l), exp2(cases[k].dist), exp2(cases[k].s), tilted, what);
            }
}

/* node_cost: > 0 and < FLT_MAX accepted (the largest float below FLT_MAX and the smallest positive
 * one included), FLT_MAX, infinity, 0, negative and NaN refused. */
static void test_node_cost(void) {
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 2};
    static const float good[] = {1e-45f, 1e-30f, 4.0f, 1e30f, 3.4028232e38f /* FLT_MAX - 1 ulp */};
    static const float bad[] = {0.0f, -1.0f, FLT_MAX, INFINITY, NAN};
    for (unsigned k = 0; k < sizeof good / sizeof *good; k++) {
        vl_bvh_desc d = vl_bvh_default_desc();
        d.node_cost = good[k];
        vl_bvh* bvh = NULL;
        CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, &d, &bvh, NULL) == VL_OK && vl_bvh_validate(bvh) == VL_OK,
              "node_cost %g refused", good[k]);
        vl_bvh_destroy(bvh);
    }
    for (unsigned k = 0; k < sizeof bad / sizeof *bad; k++) {
        vl_bvh_desc d = vl_bvh_default_desc();
        d.node_cost = bad[k];
        vl_bvh* bvh = NULL;
        CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, &d, &bvh, NULL) == VL_ERR_INVALID_FLAGS && !bvh,
              "node_cost %g accepted", bad[k]);
    }
}

/* The first problem in the documented order decides the status. */
static void test_status_order(void) {
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh_desc bad_desc = vl_bvh_default_desc();
    bad_desc.sah_bins = 1;
    vl_bvh* bvh = NULL;
    /* builds: NULL, then desc, then size (before reading), then geometry */
    CHECK(vl_bvh_build_triangles(xyz, 3, NULL, 1, &bad_desc, &bvh, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL first");
    float nan_xyz[9] = {NAN, 0, 0, 1, 0, 0, 0, 1, 0};
    CHECK(vl_bvh_build_triangles(nan_xyz, 3, idx, 1, &bad_desc, &bvh, NULL) == VL_ERR_INVALID_FLAGS, "desc before geometry");
    CHECK(vl_bvh_build_triangles(nan_xyz, 3, idx, (1u << 30) + 1, NULL, &bvh, NULL) == VL_ERR_TOO_LARGE,
          "size before geometry (the short index array is not read)");
    vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
    CHECK(vl_bvh_build_boxes(&box, (1u << 30) + 1, NULL, &bvh, NULL) == VL_ERR_TOO_LARGE, "boxes: size before bounds");
    CHECK(!bvh, "out written");
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "build");
    /* raycasts: NULL, then flags (nothing written), then the rays */
    vl_ray rays[16];
    vl_hit hits[16];
    for (int k = 0; k < 16; k++) rays[k] = (vl_ray){{0.2f, 0.2f, -1}, 0, {0, 0, 1}, INFINITY};
    rays[3].dir[2] = 0;    /* zero direction */
    rays[7].origin[0] = NAN;
    rays[9].tmin = 5, rays[9].tmax = 1; /* tmin > tmax */
    for (uint32_t n = 4; n <= 16; n += 12) { /* the one-ray path and the batch */
        CHECK(vl_bvh_raycast(bvh, rays, n, 0x80, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL before flags");
        memset(hits, 0x5A, sizeof hits);
        CHECK(vl_bvh_raycast(bvh, rays, n, 0x80, hits, NULL) == VL_ERR_INVALID_FLAGS, "flags before rays");
        CHECK(hits[0].prim == 0x5A5A5A5Au, "flags error wrote answers");
        CHECK(vl_bvh_raycast(bvh, rays, n, 0, hits, NULL) == VL_ERR_INVALID_QUERY, "invalid rays");
        for (uint32_t k = 0; k < n; k++) {
            int bad = k == 3 || k == 7 || k == 9;
            CHECK(bad ? hits[k].prim == VL_NO_HIT : hits[k].prim == 0, "ray %u of %u answered wrong", k, n);
        }
    }
    /* scratch: after the flags, before the rays */
    size_t bytes = vl_bvh_raycast_scratch_size(bvh, 16, 0);
    CHECK(bytes > 0, "scratch size");
    memset(hits, 0x5A, sizeof hits);
    CHECK(vl_bvh_raycast(bvh, rays, 16, 0x80, hits, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_ERR_INVALID_FLAGS, "flags before scratch");
    CHECK(vl_bvh_raycast(bvh, rays, 16, 0, hits, &(vl_exec){.scratch = NULL, .scratch_bytes = bytes}) == VL_ERR_INVALID_ARGUMENT &&
              hits[0].prim == 0x5A5A5A5Au,
          "scratch before rays, nothing written");
    vl_bvh_destroy(bvh);
}

/* Any hit: the batch and the one-ray path agree on whether each ray hits. */
static void test_any_hit_agrees(void) {
    enum { T = 400, R = 3000 };
    static float xyz[9 * T];
    static uint32_t idx[3 * T];
    test_rng r = {23};
    for (int t = 0; t < T; t++) {
        float c[3] = {test_float(&r, -10, 10), test_float(&r, -10, 10), test_float(&r, -10, 10)};
        for (int v = 0; v < 3; v++)
            for (int k = 0; k < 3; k++) xyz[9 * t + 3 * v + k] = c[k] + test_float(&r, -1, 1);
        for (int v = 0; v < 3; v++) idx[3 * t + v] = (uint32_t)(3 * t + v);
    }
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3 * T, idx, T, NULL, &bvh, NULL) == VL_OK, "build");
    static vl_ray rays[R];
    static vl_hit hits[R];
    for (int i = 0; i < R; i++) {
        for (int k = 0; k < 3; k++) rays[i].origin[k] = test_float(&r, -12, 12);
        for (int k = 0; k < 3; k++) rays[i].dir[k] = test_float(&r, -1, 1);
        rays[i].tmin = 0;
        rays[i].tmax = test_float(&r, 1, 30);
    }
    CHECK(vl_bvh_raycast(bvh, rays, R, VL_QUERY_ANY, hits, NULL) == VL_OK, "batch");
    int hit_count = 0;
    for (int i = 0; i < R; i++) {
        vl_hit one;
        vl_bvh_raycast1(bvh, &rays[i], VL_QUERY_ANY, &one);
        CHECK((one.prim == VL_NO_HIT) == (hits[i].prim == VL_NO_HIT), "ray %d: any hit disagrees", i);
        hit_count += one.prim != VL_NO_HIT;
    }
    CHECK(hit_count > 100, "only %d hits", hit_count);
    vl_bvh_destroy(bvh);
}

int main(void) {
    test_triangle_range();
    test_node_cost();
    test_status_order();
    test_any_hit_agrees();
    return test_finish("test_edges");
}
