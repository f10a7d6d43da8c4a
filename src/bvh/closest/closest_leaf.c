/* Closest-point leaf tests and the exact tests in double. A leaf's triangles get a float lower
 * bound each (the distance to their box, VL_BW triangles per instruction, closest_kernels.h); the
 * ones that may beat the best so far are tested exactly, nearest bound first, so that the limit
 * drops early and the rest are skipped. The exact tests take the point's difference from the
 * triangle's first vertex (exact in double for coordinates within a factor 2^29 of each other,
 * else rounded at the difference's own size) and the triangle's float edges (exact in double):
 * their error is a few double roundings of the distance and the triangle's size, never of the
 * distance from the origin. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "bvh/closest/closest.h"
#include "bvh/engine/segment_dist.h"
#include "compiler.h"
#include "simd/closest_kernels.h"

float vl_closest_limit(double d2) {
    const double grown = d2 + d2 * 0x1p-20;
    if (!(grown <= FLT_MAX)) return INFINITY;
    float f = (float)grown;
    if ((double)f < grown) { /* the next float up (f >= 0, under FLT_MAX) */
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        bits++;
        memcpy(&f, &bits, sizeof f);
    }
    return f;
}

/* Squared distance from the point `base + w` to the segment base + [0, 1] e; the parameter of its
 * closest point goes to *s. A zero e is the point base. */
static double segment_d2(const double w[3], const double e[3], double* s) {
    const double ee = vl_sd_dot(e, e);
    double t = ee > 0.0 ? vl_sd_dot(w, e) / ee : 0.0;
    t = t > 0.0 ? (t < 1.0 ? t : 1.0) : 0.0;
    *s = t;
    double r = 0.0;
    for (int k = 0; k < 3; k++) {
        double x = w[k] - t * e[k];
        r += x * x;
    }
    return r;
}

/* Ericson's Voronoi regions (Real-Time Collision Detection 5.1.5), decided with the normal: the
 * face region holds the points whose projection has barycentric weights s, t >= 0, s + t <= 1;
 * s and t come from (w x e2) . n and (e1 x w) . n over n . n, where n = e1 x e2 is exact to a
 * double rounding (products of float edges are exact in double), so a thin triangle's regions
 * stay right. Outside the face region the closest point lies on an edge whose outer side holds
 * the point's projection (t < 0: v0 v1; s < 0: v0 v2; s + t > 1: v1 v2), the nearest of those.
 * A triangle whose angle is under about 2^-20 rad (zero area included: segments, points) is
 * tested as its three edges: its face is within its inradius of them, far under the tolerance. */
double vl_closest_tri_exact(const double w[3], const double e1[3], const double e2[3], double o[3], double uv[2]) {
    double n[3];
    vl_sd_cross(e1, e2, n);
    const double det = vl_sd_dot(n, n);
    int edges = 7; /* bit k: edge k may hold the closest point (v0 v1, v0 v2, v1 v2) */
    if (det > 0x1p-40 * vl_sd_dot(e1, e1) * vl_sd_dot(e2, e2)) {
        double x[3];
        vl_sd_cross(w, e2, x);
        const double s = vl_sd_dot(x, n);
        vl_sd_cross(e1, w, x);
        const double t = vl_sd_dot(x, n);
        if (s >= 0.0 && t >= 0.0 && s + t <= det) {
            const double h = vl_sd_dot(w, n);
            if (o) {
                const double k = h / det;
                for (int a = 0; a < 3; a++) o[a] = w[a] - k * n[a];
                uv[0] = s / det, uv[1] = t / det;
            }
            return h / det * h;
        }
        edges = (t < 0.0) | (s < 0.0) << 1 | (s + t > det) << 2;
    }
    double best = INFINITY, sb = 0.0;
    int edge = 0;
    if (edges & 1) best = segment_d2(w, e1, &sb);
    if (edges & 2) {
        double s1, d = segment_d2(w, e2, &s1);
        if (d < best) best = d, sb = s1, edge = 1;
    }
    if (edges & 4) {
        double f[3], w1[3], s2;
        for (int a = 0; a < 3; a++) f[a] = e2[a] - e1[a], w1[a] = w[a] - e1[a];
        double d = segment_d2(w1, f, &s2);
        if (d < best) best = d, sb = s2, edge = 2;
    }
    if (o) {
        for (int a = 0; a < 3; a++)
            o[a] = edge == 0 ? sb * e1[a] : edge == 1 ? sb * e2[a] : e1[a] + sb * (e2[a] - e1[a]);
        uv[0] = edge == 0 ? sb : edge == 1 ? 0.0 : 1.0 - sb;
        uv[1] = edge == 0 ? 0.0 : edge == 1 ? sb : sb;
    }
    return best;
}

double vl_closest_box_exact(const float p[3], const float mn[3], const float mx[3]) {
    double r = 0.0;
    for (int a = 0; a < 3; a++) {
        double x = p[a] < mn[a] ? (double)mn[a] - p[a] : p[a] > mx[a] ? (double)p[a] - mx[a] : 0.0;
        r += x * x;
    }
    return r;
}

/* Triangle i of the leaf of `count` from slot first: v0 (float) and the edges e1, e2 in double. */
static void tri_edges(const float* geo, uint32_t count, uint32_t i, float v0[3], double e1[3], double e2[3]) {
    for (int a = 0; a < 3; a++) {
        v0[a] = geo[a * count + i];
        e1[a] = geo[(3 + a) * count + i];
        e2[a] = -(double)geo[(6 + a) * count + i];
    }
}

/* Keeps an exact squared distance d2 of the primitive (first, at) if it beats the best (the first
 * one: at most max_distance away; a distance must be finite), lowering the limit. */
static void keep(double d2, uint32_t first, uint32_t at, float* limit, vl_closest_best* best) {
    if (!(d2 < INFINITY)) return;
    if (best->first == VL_BVH_EMPTY ? !(d2 <= best->d2) : !(d2 < best->d2)) return;
    best->d2 = d2, best->first = first, best->at = at;
    *limit = d2 == 0.0 ? -1.0f : vl_closest_limit(d2);
}

void vl_closest_leaf_tris(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_closest_query* q, float* limit,
                          vl_closest_best* best) {
    const float* geo = vl_bvh_leaf_geometry(vl_bvh_leaf_rows(bvh, first), count);
    vl_fw p[3];
    for (int a = 0; a < 3; a++) p[a] = vl_fw_set1(q->p[a]);
    const vl_fw lim = vl_fw_set1(*limit);
    /* each triangle's bound; those that may beat the limit */
    float bound[VL_BVH_MAX_LEAF_SIZE + VL_BW];
    uint32_t left = 0;
    for (uint32_t b = 0; b < count; b += VL_BW) {
        vl_fw d2 = vl_cpw_tri_bound(geo, count, b, p);
        vl_fw_storeu(bound + b, d2);
        uint32_t bits = vl_fw_bits(vl_fw_le(d2, lim));
        left |= (count - b < VL_BW ? bits & ((1u << (count - b)) - 1u) : bits) << b;
    }
    /* the least bound first, until none left is within the limit (lowered by each better one) */
    while (left) {
        uint32_t i = vl_ctz32(left);
        for (uint32_t m = left & (left - 1); m; m &= m - 1) {
            const uint32_t j = vl_ctz32(m);
            if (bound[j] < bound[i]) i = j;
        }
        if (!(bound[i] <= *limit)) return;
        left &= ~(1u << i);
        float v0[3];
        double w[3], e1[3], e2[3];
        tri_edges(geo, count, i, v0, e1, e2);
        for (int a = 0; a < 3; a++) w[a] = (double)q->p[a] - v0[a];
        keep(vl_closest_tri_exact(w, e1, e2, NULL, NULL), first, count << 16 | i, limit, best);
    }
}

void vl_closest_leaf_boxes(const vl_bvh* bvh, uint32_t first, uint32_t count, const vl_closest_query* q,
                           float* limit, vl_closest_best* best) {
    for (uint32_t i = 0; i < count && *limit >= 0.0f; i++) {
        const vl_bvh_box* b = &bvh->boxes[first + i];
        keep(vl_closest_box_exact(q->p, b->min, b->max), first + i, 0, limit, best);
    }
}

void vl_closest_answer(const vl_bvh* bvh, const vl_closest_query* q, const vl_closest_best* best,
                       vl_closest_hit* out) {
    out->distance = (float)sqrt(best->d2);
    if (bvh->kind == VL_BVH_TRIANGLES) {
        const uint32_t count = best->at >> 16, i = best->at & 0xFFFFu;
        const float* rows = vl_bvh_leaf_rows(bvh, best->first);
        float v0[3];
        double w[3], e1[3], e2[3], o[3], uv[2];
        tri_edges(vl_bvh_leaf_geometry(rows, count), count, i, v0, e1, e2);
        for (int a = 0; a < 3; a++) w[a] = (double)q->p[a] - v0[a];
        (void)vl_closest_tri_exact(w, e1, e2, o, uv);
        for (int a = 0; a < 3; a++) out->point[a] = (float)((double)v0[a] + o[a]);
        out->prim = vl_bvh_leaf_prim(rows, i);
        out->u = (float)uv[0], out->v = (float)uv[1];
    } else {
        const vl_bvh_box* b = &bvh->boxes[best->first];
        for (int a = 0; a < 3; a++) {
            const float x = q->p[a];
            out->point[a] = x < b->min[a] ? b->min[a] : x > b->max[a] ? b->max[a] : x;
        }
        out->prim = b->prim;
        out->u = out->v = 0.0f;
    }
}
