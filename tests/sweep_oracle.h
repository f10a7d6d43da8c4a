/* The part the sweep oracles share (test_sweeps, test_sweeps_capsules): a lower bound of a shape's
 * first contact with a primitive from the boxes (the entry of the shape's centre into the
 * primitive's box grown by the shape's half extents), and the first contact over all primitives,
 * trying the candidates by their lower bounds until a bound passes the best contact. Each test
 * gives its own query, scene, bound and exact time. */
#ifndef VL_TESTS_SWEEP_ORACLE_H
#define VL_TESTS_SWEEP_ORACLE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <volley/volley.h>

/* The box of primitive i: of triangle tri[i], or boxes[i] where tri is NULL. */
static inline void so_prim_box(const double (*tri)[3][3], const vl_aabb* boxes, uint32_t i, double mn[3], double mx[3]) {
    for (int k = 0; k < 3; k++) {
        if (tri) {
            mn[k] = fmin(tri[i][0][k], fmin(tri[i][1][k], tri[i][2][k]));
            mx[k] = fmax(tri[i][0][k], fmax(tri[i][1][k], tri[i][2][k]));
        } else {
            mn[k] = boxes[i].min[k], mx[k] = boxes[i].max[k];
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
typedef double (*so_lower_fn)(const void* q, const void* s, uint32_t i, double grow);
typedef double (*so_time_fn)(const void* q, const void* s, uint32_t i);

typedef struct so_cand {
    double lower;
    uint32_t prim;
} so_cand;

static inline int so_cand_cmp(const void* a, const void* b) {
    double x = ((const so_cand*)a)->lower, y = ((const so_cand*)b)->lower;
    return x < y ? -1 : x > y;
}

/* The first contact T of q over the count primitives of s (INFINITY: none) and its primitive
 * (VL_NO_HIT: none): candidates by their lower bounds, until a bound passes the best contact. */
static inline double so_first(const void* q, const void* s, uint32_t count, double grow, so_lower_fn lower,
                              so_time_fn time, uint32_t* prim) {
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

#endif
