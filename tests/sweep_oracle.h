/* The part the sweep oracles share (test_sweeps, test_sweeps_capsules): a lower bound of a shape's
 * first contact with a primitive from the boxes (the entry of the shape's centre into the
 * primitive's box grown by the shape's half extents), the first contact over all primitives,
 * trying the candidates by their lower bounds until a bound passes the best contact, and the
 * scenes they run on. Each test gives its own query, bound and exact time. */
#ifndef VL_TESTS_SWEEP_ORACLE_H
#define VL_TESTS_SWEEP_ORACLE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <volley/volley.h>

#include "scenes.h"
#include "test_util.h"

/* A scene for the oracle: triangles (in double) or boxes, and the largest coordinate magnitude
 * (finite). */
typedef struct o_scene {
    const double (*tri)[3][3]; /* triangles, or NULL */
    const vl_aabb* boxes;      /* or boxes */
    uint32_t count;
    double scale;
} o_scene;

/* A mesh's tree (leaves of `leaf`) and its triangles in double for the oracle. */
typedef struct tri_scene {
    double (*tri)[3][3];
    o_scene o;
    vl_bvh* bvh;
} tri_scene;

static inline int tri_scene_make(const scene_mesh* m, tri_scene* t, uint32_t leaf) {
    vl_bvh_desc desc = vl_bvh_default_desc();
    desc.max_leaf_size = leaf;
    t->bvh = NULL;
    if (vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, &desc, &t->bvh, NULL) != VL_OK)
        return 0;
    t->tri = malloc(sizeof(double[3][3]) * m->triangle_count);
    double sc = 0.0;
    for (uint32_t i = 0; i < m->triangle_count; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                t->tri[i][j][k] = m->xyz[3 * (size_t)m->indices[3 * (size_t)i + j] + k];
                sc = fmax(sc, fabs(t->tri[i][j][k]));
            }
    t->o.tri = (const double(*)[3][3])t->tri, t->o.boxes = NULL, t->o.count = m->triangle_count, t->o.scale = sc;
    return 1;
}

static inline void tri_scene_free(tri_scene* t) {
    vl_bvh_destroy(t->bvh);
    free(t->tri);
}

/* The box of primitive i of s. */
static inline void so_prim_box(const o_scene* s, uint32_t i, double mn[3], double mx[3]) {
    for (int k = 0; k < 3; k++) {
        if (s->tri) {
            mn[k] = fmin(s->tri[i][0][k], fmin(s->tri[i][1][k], s->tri[i][2][k]));
            mx[k] = fmax(s->tri[i][0][k], fmax(s->tri[i][1][k], s->tri[i][2][k]));
        } else {
            mn[k] = s->boxes[i].min[k], mx[k] = s->boxes[i].max[k];
        }
    }
}

/* The first t in [0, tmax] (tmax >= 1e30: unbounded) at which the centre c, moving along d, enters
 * the box [mn, mx] grown by e; -1 when it never enters. */
static inline double so_entry(const double mn[3], const double mx[3], const double c[3], const double e[3],
                              const double d[3], double tmax) {
    double lo = 0.0, hi = tmax < 1e30 ? tmax : INFINITY;
    for (int k = 0; k < 3; k++) {
        const double a0 = mn[k] - e[k] - c[k], a1 = mx[k] + e[k] - c[k];
        if (d[k] == 0.0) {
            if (a0 > 0.0 || a1 < 0.0) return -1.0;
            continue;
        }
        const double t1 = a0 / d[k], t2 = a1 / d[k];
        lo = fmax(lo, fmin(t1, t2)), hi = fmin(hi, fmax(t1, t2));
    }
    return lo <= hi ? lo : -1.0;
}

/* A query's lower bound of its first contact with primitive i (-1: none), with a margin grow, and
 * its first contact (>= 0; < 0: a miss, or not checkable). */
typedef double (*so_lower_fn)(const void* q, const o_scene* s, uint32_t i, double grow);
typedef double (*so_time_fn)(const void* q, const o_scene* s, uint32_t i);

typedef struct so_cand {
    double lower;
    uint32_t prim;
} so_cand;

static inline int so_cand_cmp(const void* a, const void* b) {
    double x = ((const so_cand*)a)->lower, y = ((const so_cand*)b)->lower;
    return x < y ? -1 : x > y;
}

/* The first contact T of q over the primitives of s (INFINITY: none) and its primitive
 * (VL_NO_HIT: none): candidates by their lower bounds, until a bound passes the best contact. */
static inline double so_first(const void* q, const o_scene* s, double grow, so_lower_fn lower, so_time_fn time,
                              uint32_t* prim) {
    const uint32_t count = s->count;
    static so_cand* cand;
    static uint32_t cap;
    if (cap < count) {
        free(cand);
        cap = count;
        cand = malloc(sizeof(so_cand) * cap);
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) {
        const double lb = lower(q, s, i, grow);
        if (lb >= 0.0) cand[n].lower = lb, cand[n++].prim = i;
    }
    qsort(cand, n, sizeof(so_cand), so_cand_cmp);
    double T = INFINITY;
    *prim = VL_NO_HIT;
    for (uint32_t k = 0; k < n && cand[k].lower <= T && T > 0.0; k++) {
        const double t = time(q, s, cand[k].prim);
        if (t >= 0.0 && t < T) T = t, *prim = cand[k].prim;
    }
    return T;
}

/* Two answers the same: both misses, the same primitive at the same t, or other primitives at
 * nearly the same t. */
static inline int so_same_answer(vl_hit a, vl_hit b) {
    if (a.prim == VL_NO_HIT || b.prim == VL_NO_HIT) return a.prim == b.prim;
    if (a.prim == b.prim) return a.t == b.t;
    return fabsf(a.t - b.t) <= 1e-5f * fmaxf(1.0f, fabsf(a.t));
}

/* A test's check of n sweeps at the scale of `size` on a mesh (a tree of leaves of `leaf`). */
typedef void (*so_mesh_check)(const scene_mesh* m, uint32_t n, float size, uint64_t seed, uint32_t leaf, const char* name);

/* check on the mesh where it is, then moved by each far offset with a sixth of the sweeps (at
 * least `least`, scaled as the flavour scales its cases, and 2). */
static inline void so_check_offsets(const scene_mesh* m, uint32_t n, uint32_t least, float size, uint64_t seed,
                                    uint32_t leaf, const char* name, so_mesh_check check) {
    check(m, n, size, seed, leaf, name);
    least = test_scaled(least) > 2 ? test_scaled(least) : 2; /* the reduced flavours' share, as n */
    for (uint32_t k = 1; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh moved;
        char what[96];
        if (!scene_copy_moved_named(m, k, name, &moved, what, sizeof what)) continue;
        check(&moved, n / 6 > least ? n / 6 : least, size, seed + k, leaf, what);
        scene_free(&moved);
    }
}

/* check on the real meshes (camel, bunny), at a hundredth of their size. */
static inline void so_real_meshes(const char* test, so_mesh_check check) {
    static const char* files[] = {"camel.off", "bunny00.off"};
    for (int f = 0; f < 2; f++) {
        scene_mesh m;
        if (!test_data_dir()) {
            printf("%s: no VOLLEY_DATA_DIR, real meshes skipped\n", test);
            return;
        }
        if (!scene_load_test_mesh(test, files[f], &m)) continue;
        const float size = 0.01f * ((m.hi[0] - m.lo[0]) + (m.hi[1] - m.lo[1]) + (m.hi[2] - m.lo[2]));
        check(&m, test_scaled(60), size, 51 + (uint64_t)f, 8, files[f]);
        scene_free(&m);
    }
}

#endif
