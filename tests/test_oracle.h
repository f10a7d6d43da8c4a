/* The brute-force rules every broadphase and box pruning is checked against (header-only). */
#ifndef VL_TEST_ORACLE_H
#define VL_TEST_ORACLE_H

#include <math.h>

#include <volley/volley.h>

/* The API's rule for boxes: no NaN, min <= max on every axis (infinities allowed). */
static inline int test_box_valid(const vl_aabb* b) {
    for (int a = 0; a < 3; a++)
        if (isnan(b->min[a]) || isnan(b->max[a]) || b->min[a] > b->max[a]) return 0;
    return 1;
}

/* Closed intervals overlap on all three axes (touching counts). */
static inline int test_box_overlap(const vl_aabb* a, const vl_aabb* b) {
    for (int k = 0; k < 3; k++)
        if (a->min[k] > b->max[k] || b->min[k] > a->max[k]) return 0;
    return 1;
}

/* qsort order of pairs: by a, then b. */
static inline int test_pair_cmp(const void* x, const void* y) {
    const vl_pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

#endif
