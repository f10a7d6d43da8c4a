/* Capsule queries near surfaces, placed as the sphere queries of tests/scenes.h are (the tests and
 * the bench share them): each capsule is a sphere query's centre and size, given a random axis.
 * Header-only, C and C++. */
#ifndef VL_TESTS_CAPSULE_SCENES_H
#define VL_TESTS_CAPSULE_SCENES_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <volley/volley.h>

#include "scenes.h"

/* The capsule of centre c and axis u (unit) with half length h and radius r. */
static inline vl_capsule scene_capsule(const float c[3], const float u[3], float h, float r) {
    vl_capsule q;
    for (int a = 0; a < 3; a++) q.a[a] = c[a] - h * u[a], q.b[a] = c[a] + h * u[a];
    q.radius = r;
    return q;
}

/* Overlap queries on the surface: scene_overlap_queries' spheres (on a random triangle, sized half
 * to twice its longest edge), each a capsule of that centre with a random axis, half length half
 * to all of the sphere's radius and radius a quarter to half of it. */
static inline void scene_capsule_queries(const scene_mesh* m, uint32_t count, uint64_t seed, vl_capsule* out) {
    vl_aabb* boxes = (vl_aabb*)malloc(sizeof(vl_aabb) * (count ? count : 1));
    vl_sphere* spheres = (vl_sphere*)malloc(sizeof(vl_sphere) * (count ? count : 1));
    if (!boxes || !spheres) {
        free(boxes), free(spheres);
        return;
    }
    scene_overlap_queries(m, count, seed, boxes, spheres);
    test_rng rng = {seed ^ 0x9E3779B97F4A7C15ull};
    for (uint32_t i = 0; i < count; i++) {
        float u[3], s = spheres[i].radius;
        scene_direction(&rng, u);
        out[i] = scene_capsule(spheres[i].center, u, s * test_float(&rng, 0.5f, 1.0f), s * test_float(&rng, 0.25f, 0.5f));
    }
    free(boxes), free(spheres);
}

/* Sweeps near the surface: scene_sweeps' sphere sweeps (from 0.5 to 3 sizes off a random
 * triangle, moving 1 to 8 sizes in a random direction, dir the whole move and tmax 1), each a
 * capsule of that start and move with a random axis, half length half to all of the size and
 * radius half of it. */
static inline void scene_capsule_sweeps(const scene_mesh* m, uint32_t count, uint64_t seed, vl_capsule_sweep* out) {
    vl_sphere_sweep* spheres = (vl_sphere_sweep*)malloc(sizeof(vl_sphere_sweep) * (count ? count : 1));
    vl_box_sweep* boxes = (vl_box_sweep*)malloc(sizeof(vl_box_sweep) * (count ? count : 1));
    if (!boxes || !spheres) {
        free(boxes), free(spheres);
        return;
    }
    scene_sweeps(m, count, seed, spheres, boxes);
    test_rng rng = {seed ^ 0x9E3779B97F4A7C15ull};
    for (uint32_t i = 0; i < count; i++) {
        float u[3], s = spheres[i].radius;
        scene_direction(&rng, u);
        out[i].capsule = scene_capsule(spheres[i].center, u, s * test_float(&rng, 0.5f, 1.0f), 0.5f * s);
        for (int a = 0; a < 3; a++) out[i].dir[a] = spheres[i].dir[a];
        out[i].tmax = spheres[i].tmax;
    }
    free(boxes), free(spheres);
}

/* v scaled to unit length (x when it is zero). */
static inline void scene_unit(double v[3]) {
    const double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0.0)
        for (int a = 0; a < 3; a++) v[a] /= l;
    else
        v[0] = 1.0, v[1] = v[2] = 0.0;
}

/* A random triangle of m: its corners v, edges e1 = v1 - v0 and e2 = v2 - v0, unit normal (x when
 * it has none) and a random point p of it. */
static inline void scene_random_spot(const scene_mesh* m, test_rng* rng, double v[3][3], double e1[3], double e2[3],
                                     double nrm[3], double p[3]) {
    const uint32_t* t = m->indices + 3 * (size_t)test_u32(rng, m->triangle_count);
    for (int j = 0; j < 3; j++)
        for (int a = 0; a < 3; a++) v[j][a] = m->xyz[3 * (size_t)t[j] + a];
    for (int a = 0; a < 3; a++) e1[a] = v[1][a] - v[0][a], e2[a] = v[2][a] - v[0][a];
    nrm[0] = e1[1] * e2[2] - e1[2] * e2[1], nrm[1] = e1[2] * e2[0] - e1[0] * e2[2], nrm[2] = e1[0] * e2[1] - e1[1] * e2[0];
    scene_unit(nrm);
    double bu = test_float(rng, 0, 1), bv = test_float(rng, 0, 1);
    if (bu + bv > 1) bu = 1 - bu, bv = 1 - bv;
    for (int a = 0; a < 3; a++) p[a] = v[0][a] + bu * e1[a] + bv * e2[a];
}

/* count random boxes in [0, 104)^3 (every tenth flat along z), then an infinite slab (y in
 * [-20, -10]) and an unbounded corner ([150, inf)^3), all moved by scene_offset(k): count + 2
 * boxes in out. */
static inline void scene_box_tree(uint32_t count, uint64_t seed, uint32_t k, vl_aabb* out) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++) {
            const float lo = test_float(&rng, 0, 100), size = i % 10 == 3 && a == 2 ? 0.0f : test_float(&rng, 0, 4);
            out[i].min[a] = lo, out[i].max[a] = lo + size;
        }
    for (int a = 0; a < 3; a++) out[count].min[a] = -INFINITY, out[count].max[a] = INFINITY;
    out[count].min[1] = -20, out[count].max[1] = -10;
    for (int a = 0; a < 3; a++) out[count + 1].min[a] = 150, out[count + 1].max[a] = INFINITY;
    scene_move_boxes(out, count + 2, scene_offset(k));
}

#endif
