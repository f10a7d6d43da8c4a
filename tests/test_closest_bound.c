/* The closest-point culling bounds against the exact distances: the float lower bound of a leaf's
 * triangles (simd/closest_kernels.h: their box, and the prism of their plane and edges) never
 * passes the exact squared distance in double (bvh/closest) by more than its stated rounding
 * (5 * 2^-24 of itself, under the limit's 2^-20), nor does a node's key pass the squared distance
 * to its box; on well-shaped triangles of every size, thin and zero-area ones, far from the origin
 * and at the ends of float range, with points on and near faces, edges and vertices and far away.
 * And the bound is tight where it should be (a point over a face: within 2^-16 of the distance),
 * so that the culling works. */
#include <float.h>

#include "bvh/closest/closest.h"
#include "bvh/tree/tree.h"
#include "simd/closest_kernels.h"
#include "test_util.h"

#define LEAF 8u

static double g_worst; /* the largest bound over exact distance seen */

/* A leaf of n triangles (t[i] corners) laid out in rows as the tree keeps them; checks each
 * triangle's bound from p against its exact distance. Returns the bound / exact of triangle 0. */
static double check_leaf(const float t[][3][3], uint32_t n, const float p[3], const char* what) {
    static float rows[VL_BVH_TRI_FLOATS * 32 + VL_BVH_TRI_PAD + 64];
    memset(rows, 0, sizeof rows);
    for (uint32_t i = 0; i < n; i++) {
        vl_bvh_tri tri;
        vl_bvh_tri_setup(&tri, t[i][0], t[i][1], t[i][2], 1000u + i);
        vl_bvh_tri_put(rows, n, i, &tri);
    }
    /* the next leaf's prim row past this one: denormal floats, as in a tree */
    for (uint32_t k = 0; k < 8; k++) {
        uint32_t prim = 7 + k;
        memcpy(&rows[VL_BVH_TRI_FLOATS * n + k], &prim, sizeof prim);
    }
    const float* geo = vl_bvh_leaf_geometry(rows, n);
    vl_fw pw[3];
    for (int a = 0; a < 3; a++) pw[a] = vl_fw_set1(p[a]);
    float bound[32 + VL_BW];
    for (uint32_t b = 0; b < n; b += VL_BW) vl_fw_storeu(bound + b, vl_cpw_tri_bound(geo, n, b, pw));
    double ratio0 = 0;
    for (uint32_t i = 0; i < n; i++) {
        double w[3], e1[3], e2[3];
        for (int a = 0; a < 3; a++) {
            w[a] = (double)p[a] - geo[a * n + i];
            e1[a] = geo[(3 + a) * n + i];
            e2[a] = -(double)geo[(6 + a) * n + i];
        }
        const double d2 = vl_closest_tri_exact(w, e1, e2, NULL, NULL);
        /* within the walk's limit for d2 (infinite past float range, where squares overflow) */
        CHECK(bound[i] >= 0 && bound[i] <= vl_closest_limit(d2), "%s: triangle %u bound %.9g past the limit of %.9g",
              what, i, bound[i], d2);
        CHECK(!(d2 < 0x1p126) || bound[i] <= d2 * (1 + 0x1p-21), "%s: triangle %u bound %.9g over the exact %.9g",
              what, i, bound[i], d2);
        if (d2 > 0 && d2 < 0x1p126 && bound[i] / d2 > g_worst) g_worst = bound[i] / d2;
        if (i == 0) ratio0 = d2 > 0 ? bound[0] / d2 : 1;
    }
    return ratio0;
}

static void random_point_near(test_rng* rng, const float t[3][3], float scale, float p[3]) {
    float u = test_float(rng, -0.3f, 1.3f), v = test_float(rng, -0.3f, 1.3f);
    uint32_t kind = test_u32(rng, 6);
    if (kind == 0) u = test_float(rng, 0, 1), v = 0; /* over an edge */
    if (kind == 1) u = v = 0;                      /* over a vertex */
    float h = kind == 2 ? 0.0f : test_float(rng, -2, 2) * scale * (kind == 3 ? 1e-4f : 1.0f);
    float n[3], e1[3], e2[3];
    for (int a = 0; a < 3; a++) e1[a] = t[1][a] - t[0][a], e2[a] = t[2][a] - t[0][a];
    n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2], n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(len > 0) || !isfinite(len)) len = 1, n[0] = 0, n[1] = 1, n[2] = 0;
    for (int a = 0; a < 3; a++) p[a] = t[0][a] + u * e1[a] + v * e2[a] + h * n[a] / len;
}

/* A random triangle of about `size` at `at`: well-shaped, thin (angle down to 2^-24) or
 * degenerate (a segment or a point). */
static void random_triangle(test_rng* rng, float size, const float at[3], uint32_t kind, float t[3][3]) {
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 3; a++) t[k][a] = at[a] + test_float(rng, -size, size);
    if (kind == 1) { /* thin: the third corner near the first edge */
        float s = test_float(rng, -0.5f, 1.5f), eps = ldexpf(1.0f, -(int)test_u32(rng, 25));
        for (int a = 0; a < 3; a++) t[2][a] = t[0][a] + s * (t[1][a] - t[0][a]) + (a == 1 ? eps * size : 0.0f);
    }
    if (kind == 2) /* a segment */
        for (int a = 0; a < 3; a++) t[2][a] = t[0][a] + 0.25f * (t[1][a] - t[0][a]);
    if (kind == 3) /* a point */
        for (int a = 0; a < 3; a++) t[1][a] = t[2][a] = t[0][a];
}

static void test_random(void) {
    test_rng rng = {404};
    static const float sizes[] = {1e-6f, 1e-3f, 1.0f, 40.0f, 1e4f};
    static const float offsets[] = {0.0f, 0x1p10f, -0x1p13f, 0x1p17f, 1e6f, -3e7f};
    const uint32_t cases = test_scaled(20000);
    for (uint32_t c = 0; c < cases; c++) {
        float size = sizes[c % 5], o = offsets[(c / 5) % 6];
        float at[3] = {o, 0.5f * o, -o}, t[LEAF][3][3], p[3];
        uint32_t n = 1 + test_u32(&rng, LEAF);
        for (uint32_t i = 0; i < n; i++) {
            float near[3] = {at[0] + test_float(&rng, -3, 3) * size, at[1] + test_float(&rng, -3, 3) * size,
                             at[2] + test_float(&rng, -3, 3) * size};
            random_triangle(&rng, size, near, test_u32(&rng, 8) < 5 ? 0 : 1 + test_u32(&rng, 3), t[i]);
        }
        random_point_near(&rng, t[test_u32(&rng, n)], size, p);
        if (c % 17 == 0) /* far away */
            for (int a = 0; a < 3; a++) p[a] = at[a] + test_float(&rng, -1e3f, 1e3f) * size;
        check_leaf((const float(*)[3][3])t, n, p, "random");
    }
}

/* Tightness: a point over the face of a well-shaped triangle gets a bound within 2^-16 of its
 * distance (the prism is exact there, up to its slack); over an edge, the same. */
static void test_tight(void) {
    test_rng rng = {405};
    for (uint32_t c = 0; c < test_scaled(2000); c++) {
        float o = c & 1 ? 0x1p17f : 0.0f, s = c & 2 ? 1e-3f : 1.0f;
        float t[1][3][3] = {{{o, o, o}, {o + s, o, o}, {o, o, o + s}}}, p[3];
        float u = test_float(&rng, 0.05f, 0.45f), v = test_float(&rng, 0.05f, 0.45f), h = test_float(&rng, 0.1f, 3.0f) * s;
        if (c & 4) v = -h; /* over the edge v0 v1, outside it by h */
        p[0] = o + u * s, p[1] = o + h, p[2] = o + v * s;
        double r = check_leaf((const float(*)[3][3])t, 1, p, "tight");
        CHECK(r >= 1 - 0x1p-15, "tight case %u: bound / exact %.9g", c, r);
    }
}

/* Points and triangles at the ends of float range: bounds within the limits, never NaN. */
static void test_range(void) {
    static const float big[] = {1e30f, 3e38f, -3e38f, 1e-30f, 1e-40f};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            float s = big[i], q = big[j];
            float t[1][3][3] = {{{s, 0, 0}, {0, s, 0}, {0, 0, s}}}, p[3] = {q, -q, q};
            check_leaf((const float(*)[3][3])t, 1, p, "range");
            float t2[1][3][3] = {{{s, s, s}, {s, s, s}, {-s, s, s}}};
            check_leaf((const float(*)[3][3])t2, 1, p, "range segment");
        }
}

/* Node keys: the squared distance to a child's box, not past the exact one by more than
 * 5 * 2^-24; empty children never pass. */
static void test_node_keys(void) {
    test_rng rng = {406};
    for (uint32_t c = 0; c < test_scaled(20000); c++) {
        _Alignas(16) float bounds[6][4];
        uint32_t child[4];
        float o = (c & 3) == 0 ? 0.0f : (c & 3) == 1 ? 0x1p17f : -1e6f, s = c & 4 ? 1e-3f : 10.0f;
        for (int k = 0; k < 4; k++) {
            child[k] = k == 3 && (c & 8) ? VL_BVH_EMPTY : (uint32_t)k;
            for (int a = 0; a < 3; a++) {
                float lo = o + test_float(&rng, -5, 5) * s, hi = lo + test_float(&rng, 0, 2) * s;
                bounds[a][k] = child[k] == VL_BVH_EMPTY ? INFINITY : lo;
                bounds[3 + a][k] = child[k] == VL_BVH_EMPTY ? INFINITY : hi;
            }
        }
        float p[3];
        for (int a = 0; a < 3; a++) p[a] = o + test_float(&rng, -8, 8) * s;
        vl_f4 pv[3] = {vl_f4_set1(p[0]), vl_f4_set1(p[1]), vl_f4_set1(p[2])};
        float keys[4];
        uint32_t bits = vl_cp4_node(pv, vl_f4_set1(INFINITY), bounds, child, VL_BVH_EMPTY, keys);
        for (int k = 0; k < 4; k++) {
            if (child[k] == VL_BVH_EMPTY) {
                CHECK(!(bits >> k & 1), "empty child %d passes", k);
                continue;
            }
            CHECK(bits >> k & 1, "child %d culled by an infinite limit", k);
            double d2 = 0;
            for (int a = 0; a < 3; a++) {
                double x = p[a] < bounds[a][k] ? (double)bounds[a][k] - p[a]
                                                : p[a] > bounds[3 + a][k] ? (double)p[a] - bounds[3 + a][k] : 0;
                d2 += x * x;
            }
            CHECK(keys[k] <= d2 * (1 + 5 * 0x1p-24) && keys[k] >= d2 * (1 - 5 * 0x1p-24), "key %g, exact %g", keys[k], d2);
        }
    }
}

int main(void) {
    test_random();
    test_tight();
    test_range();
    test_node_keys();
    printf("test_closest_bound: worst bound / exact distance %.9g\n", g_worst);
    return test_finish("test_closest_bound");
}
