/* Box scenes and the brute-force oracle shared by the SAP-family tests. */
#ifndef VL_TEST_SAP_SCENES_H
#define VL_TEST_SAP_SCENES_H

#include <volley/volley.h>

#include "scenes.h"
#include "test_alloc.h"
#include "test_oracle.h"
#include "test_util.h"

enum {
    SCENE_UNIFORM,
    SCENE_CLUSTERED,
    SCENE_FLAT,      /* every box at one altitude */
    SCENE_IDENTICAL, /* every box the same */
    SCENE_TOUCHING,  /* integer boxes on a small grid: many exact touches */
    SCENE_HUGE,      /* some boxes span everything */
    SCENE_INFINITE,  /* some bounds are infinite, some zero is negative */
    SCENE_COUNT,
    /* (run only by the offset tests) boxes of 0 to 9 units with faces on multiples of 8 and one
     * unit either side: on the cell borders of a grid of 8-unit cells from a multiple of 8 */
    SCENE_BORDER = SCENE_COUNT
};

static const char* const scene_names[SCENE_COUNT + 1] = {"uniform", "clustered", "flat",    "identical",
                                                         "touching", "huge",      "infinite", "border"};

/* The offset (scenes.h) at which scene_box places the scenes: (o, o / 2, -o) added to every bound,
 * rounded to float. */
static float g_scene_offset;

static inline vl_aabb scene_box_at_origin(test_rng* r, int scene) {
    vl_aabb b;
    float c[3], e[3];
    for (int a = 0; a < 3; a++) {
        c[a] = test_float(r, 0, 1000);
        e[a] = test_float(r, 0.5f, 25);
    }
    switch (scene) {
    case SCENE_CLUSTERED: {
        uint32_t k = test_u32(r, 6);
        for (int a = 0; a < 3; a++) c[a] = 150.0f * (float)((k >> (a % 2)) + a) + test_float(r, -30, 30);
        break;
    }
    case SCENE_FLAT:
        c[1] = 5;
        e[1] = 1;
        break;
    case SCENE_IDENTICAL:
        for (int a = 0; a < 3; a++) c[a] = e[a] = 1;
        break;
    case SCENE_TOUCHING:
        for (int a = 0; a < 3; a++) {
            b.min[a] = (float)test_u32(r, 24);
            b.max[a] = b.min[a] + (float)(1 + test_u32(r, 2));
        }
        return b;
    case SCENE_HUGE:
        if (test_u32(r, 50) == 0)
            for (int a = 0; a < 3; a++) c[a] = 500, e[a] = 1e6f;
        break;
    case SCENE_INFINITE: {
        uint32_t k = test_u32(r, 12);
        for (int a = 0; a < 3; a++) {
            b.min[a] = c[a] - e[a];
            b.max[a] = c[a] + e[a];
        }
        if (k == 0) b.min[1] = -INFINITY, b.max[1] = 0.0f; /* a ground */
        if (k == 1) b.min[0] = -INFINITY, b.max[0] = INFINITY;
        if (k == 2) b.max[2] = INFINITY;
        if (k == 3) b.min[0] = -0.0f, b.max[0] = 0.0f;
        if (k == 4) b.min[1] = 0.0f, b.max[1] = 3.40282347e38f;
        return b;
    }
    case SCENE_BORDER: {
        static const float near[6] = {0, 0, 0, 1, -1, 8};
        static const float size[6] = {0, 1, 7, 8, 8, 9};
        for (int a = 0; a < 3; a++) {
            b.min[a] = 8.0f * (float)test_u32(r, 8) + near[test_u32(r, 6)];
            b.max[a] = b.min[a] + size[test_u32(r, 6)];
        }
        return b;
    }
    default: break;
    }
    for (int a = 0; a < 3; a++) {
        b.min[a] = c[a] - e[a];
        b.max[a] = c[a] + e[a];
    }
    return b;
}

/* A box of the scene, at g_scene_offset. */
static inline vl_aabb scene_box(test_rng* r, int scene) {
    vl_aabb b = scene_box_at_origin(r, scene);
    scene_move_boxes(&b, 1, g_scene_offset);
    return b;
}

/* A small move (or, now and then, a jump) of box b in the spirit of the scene. */
static inline vl_aabb scene_step(test_rng* r, int scene, vl_aabb b) {
    if (test_u32(r, 10) == 0) return scene_box(r, scene);
    if (scene == SCENE_TOUCHING || scene == SCENE_IDENTICAL || scene == SCENE_BORDER) {
        int a = (int)test_u32(r, 3);
        float d = (float)((int)test_u32(r, 3) - 1);
        b.min[a] += d;
        b.max[a] += d;
        return b;
    }
    for (int a = 0; a < 3; a++) {
        if (scene == SCENE_FLAT && a == 1) continue;
        float d = test_float(r, -4, 4);
        b.min[a] += d;
        b.max[a] += d;
    }
    return b;
}

/* One stable counting sort of n pairs from src to dst by a (by_a) or b. */
static inline void pairs_count_sort(vl_pair* dst, const vl_pair* src, uint32_t n, int by_a, uint32_t* start,
                                    uint32_t top) {
    memset(start, 0, ((size_t)top + 2) * sizeof *start);
    for (uint32_t i = 0; i < n; i++) start[(by_a ? src[i].a : src[i].b) + 1]++;
    for (uint32_t v = 0; v <= top; v++) start[v + 1] += start[v];
    for (uint32_t i = 0; i < n; i++) dst[start[by_a ? src[i].a : src[i].b]++] = src[i];
}

/* Sorts pairs by (a, b): counting sorts by b, then (stable) by a. */
static inline void pairs_sort(vl_pair* pairs, uint32_t n) {
    if (n < 2) return;
    uint32_t top = 0;
    for (uint32_t i = 0; i < n; i++) {
        top = pairs[i].a > top ? pairs[i].a : top;
        top = pairs[i].b > top ? pairs[i].b : top;
    }
    uint32_t* start = malloc(((size_t)top + 2) * sizeof *start);
    vl_pair* tmp = malloc((size_t)n * sizeof *tmp);
    if (!start || !tmp) abort();
    pairs_count_sort(tmp, pairs, n, 0, start, top);
    pairs_count_sort(pairs, tmp, n, 1, start, top);
    free(tmp);
    free(start);
}

/* Sorts pairs after putting each low-high. */
static inline void pairs_normalize(vl_pair* pairs, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (pairs[i].a > pairs[i].b) {
            uint32_t t = pairs[i].a;
            pairs[i].a = pairs[i].b;
            pairs[i].b = t;
        }
    pairs_sort(pairs, n);
}

/* A plain growable array of pairs for the oracle (malloc, not volley's hooks). */
typedef struct pair_list {
    vl_pair* p;
    uint32_t n, cap;
} pair_list;

static inline void pair_list_push(pair_list* l, uint32_t a, uint32_t b) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->p = realloc(l->p, l->cap * sizeof *l->p);
        if (!l->p) abort();
    }
    l->p[l->n++] = (vl_pair){a, b};
}

static inline void pair_list_copy(pair_list* l, const vl_pair* p, uint32_t n) {
    l->n = 0;
    for (uint32_t i = 0; i < n; i++) pair_list_push(l, p[i].a, p[i].b);
    pairs_normalize(l->p, l->n);
}

/* Sorted equal lists. */
static inline int pair_list_equal(const vl_pair* a, uint32_t na, const vl_pair* b, uint32_t nb) {
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

/* out = a \ b, both sorted. */
static inline void pair_list_minus(pair_list* out, const pair_list* a, const pair_list* b) {
    out->n = 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        while (j < b->n && test_pair_cmp(&b->p[j], &a->p[i]) < 0) j++;
        if (j < b->n && test_pair_cmp(&b->p[j], &a->p[i]) == 0) continue;
        pair_list_push(out, a->p[i].a, a->p[i].b);
    }
}

/* Brute force: every overlapping pair (i, j), i < j, of boxes[0, n) with live[i] && live[j] (live NULL:
 * all), not both static (stat NULL: none); sorted. The boxes in order of min x (qsort), each tested
 * against those after it whose min x is within its max x: every pair overlapping on x, and only
 * those, meets there once. */
typedef struct brute_entry {
    float min_x;
    uint32_t i;
} brute_entry;
static inline int brute_cmp(const void* pa, const void* pb) {
    float a = ((const brute_entry*)pa)->min_x, b = ((const brute_entry*)pb)->min_x;
    return a < b ? -1 : a > b;
}
static inline void brute_pairs(pair_list* out, const vl_aabb* boxes, const uint8_t* live, const uint8_t* stat,
                               uint32_t n) {
    out->n = 0;
    brute_entry* order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order) abort();
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!live || live[i]) order[m++] = (brute_entry){boxes[i].min[0], i};
    qsort(order, m, sizeof *order, brute_cmp);
    for (uint32_t x = 0; x < m; x++) {
        uint32_t i = order[x].i;
        for (uint32_t y = x + 1; y < m && order[y].min_x <= boxes[i].max[0]; y++) {
            uint32_t j = order[y].i;
            if (stat && stat[i] && stat[j]) continue;
            if (test_box_overlap(&boxes[i], &boxes[j])) pair_list_push(out, i < j ? i : j, i < j ? j : i);
        }
    }
    free(order);
    pairs_sort(out->p, out->n);
}

/* Terdiman's box sets: MSVC rand() after srand(42); centre x, y, z then half-extents x, y, z. */
static inline void terdiman_boxes(vl_aabb* boxes, uint32_t n, int flat) {
    uint32_t state = 42;
    for (uint32_t i = 0; i < n; i++) {
        float c[3], e[3];
        for (int a = 0; a < 3; a++) {
            state = state * 214013u + 2531011u;
            c[a] = (float)(int)(((state >> 16) & 0x7fff & 4095) - 2048);
        }
        for (int a = 0; a < 3; a++) {
            state = state * 214013u + 2531011u;
            e[a] = (float)((state >> 16) & 0x7fff & 127);
        }
        if (flat) c[1] /= 20.0f;
        for (int a = 0; a < 3; a++) {
            boxes[i].min[a] = c[a] - e[a];
            boxes[i].max[a] = c[a] + e[a];
        }
    }
}

#endif
