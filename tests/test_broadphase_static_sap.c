/* VL_BROADPHASE_STATIC_SAP against brute force, on the worlds it is made for: movers sweeping over
 * many statics, statics added, moved and removed in batches while movers move, objects flipped
 * between static and dynamic (every kind), infinite bounds (a ground), touching, identical, huge and
 * tiny boxes; each again at the far offsets of scenes.h. After every step the broadphase
 * validates; after every commit its pairs equal brute force and its created / deleted lists equal
 * the differences, each pair once. Failing allocations change nothing; warm frames allocate nothing. Handles are opaque: the test maps them to its own
 * objects through a lookup. */
#include <stdint.h>

#include <volley/volley.h>

#include "test_sap_scenes.h"

static const vl_broadphase_kind kinds[] = {VL_BROADPHASE_SAP, VL_BROADPHASE_BOX_PRUNING, VL_BROADPHASE_STATIC_SAP};
static const char* const kind_names[] = {"sap", "box_pruning", "static_sap"};
#define KIND_COUNT 3
#define KIND_STATIC_SAP 2

/* ---- the test's own objects, found from a handle through an open-addressing table ---------- */

typedef struct world {
    vl_broadphase* bp;
    vl_aabb* box;
    uint32_t* handle;
    uint8_t* stat;
    uint32_t n, cap; /* live objects: 0..n-1, removal swaps the last in */
    uint32_t* table; /* handle slot -> object index + 1 (0: empty) */
    uint32_t* keys;
    uint32_t table_mask;
    pair_list prev, now, diff, got;
    vl_pair_buffer created, deleted;
    const char* what;
    char label[96]; /* what, and the offset */
} world;

static uint32_t hash_u32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    return x ^ (x >> 16);
}

static void table_rebuild(world* w) {
    memset(w->table, 0, (w->table_mask + 1) * sizeof *w->table);
    for (uint32_t i = 0; i < w->n; i++) {
        uint32_t k = hash_u32(w->handle[i]) & w->table_mask;
        while (w->table[k]) k = (k + 1) & w->table_mask;
        w->table[k] = i + 1;
        w->keys[k] = w->handle[i];
    }
}

/* Object index of handle h, or -1. */
static int32_t lookup(const world* w, uint32_t h) {
    uint32_t k = hash_u32(h) & w->table_mask;
    while (w->table[k]) {
        if (w->keys[k] == h) return (int32_t)w->table[k] - 1;
        k = (k + 1) & w->table_mask;
    }
    return -1;
}

static void world_init(world* w, int kind, uint32_t cap, const char* what) {
    memset(w, 0, sizeof *w);
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    desc.kind = kinds[kind];
    CHECK(vl_broadphase_create(&desc, &w->bp) == VL_OK, "%s: create", what);
    w->cap = cap;
    w->box = calloc(cap, sizeof *w->box);
    w->handle = calloc(cap, sizeof *w->handle);
    w->stat = calloc(cap, 1);
    uint32_t t = 16;
    while (t < 2 * cap) t *= 2;
    w->table = calloc(t, sizeof *w->table);
    w->keys = calloc(t, sizeof *w->keys);
    w->table_mask = t - 1;
    snprintf(w->label, sizeof w->label, "%s at %g", what, g_scene_offset);
    w->what = w->label;
}

static void world_free(world* w) {
    vl_broadphase_destroy(w->bp);
    free(w->box), free(w->handle), free(w->stat), free(w->table), free(w->keys);
    free(w->prev.p), free(w->now.p), free(w->diff.p), free(w->got.p);
    vl_pair_buffer_free(&w->created);
    vl_pair_buffer_free(&w->deleted);
}

/* Brute force over the live objects: every dynamic against every other object, as handle pairs. */
static void world_brute(world* w, pair_list* out) {
    out->n = 0;
    for (uint32_t i = 0; i < w->n; i++) {
        if (w->stat[i]) continue;
        for (uint32_t j = 0; j < w->n; j++) {
            if (j == i || (!w->stat[j] && j < i)) continue;
            if (test_box_overlap(&w->box[i], &w->box[j])) pair_list_push(out, w->handle[i], w->handle[j]);
        }
    }
    pairs_normalize(out->p, out->n);
}

static void world_validate(world* w, const char* step) {
    CHECK(vl_broadphase_validate(w->bp) == VL_OK, "%s: validate after %s", w->what, step);
    CHECK(vl_broadphase_get_count(w->bp) == w->n, "%s: count %u, expected %u after %s", w->what,
          vl_broadphase_get_count(w->bp), w->n, step);
}

/* Commits and checks pairs, created and deleted against brute force (each list without repeats). */
static void world_commit(world* w) {
    w->created.count = w->deleted.count = 0;
    vl_status s = vl_broadphase_commit(w->bp, &w->created, &w->deleted);
    CHECK(s == VL_OK, "%s: commit %s", w->what, vl_status_string(s));
    world_validate(w, "commit");
    world_brute(w, &w->now);
    uint32_t n = 0;
    const vl_pair* pairs = vl_broadphase_get_pairs(w->bp, &n);
    for (uint32_t i = 0; i < n; i++) CHECK(pairs[i].a < pairs[i].b, "%s: pair not low-high", w->what);
    pair_list_copy(&w->got, pairs, n);
    CHECK(pair_list_equal(w->got.p, w->got.n, w->now.p, w->now.n), "%s: %u pairs, brute force %u", w->what, w->got.n,
          w->now.n);
    pair_list_minus(&w->diff, &w->now, &w->prev);
    pair_list_copy(&w->got, w->created.pairs, w->created.count);
    CHECK(pair_list_equal(w->got.p, w->got.n, w->diff.p, w->diff.n), "%s: %u created, expected %u", w->what, w->got.n,
          w->diff.n);
    pair_list_minus(&w->diff, &w->prev, &w->now);
    pair_list_copy(&w->got, w->deleted.pairs, w->deleted.count);
    CHECK(pair_list_equal(w->got.p, w->got.n, w->diff.p, w->diff.n), "%s: %u deleted, expected %u", w->what, w->got.n,
          w->diff.n);
    pair_list t = w->prev;
    w->prev = w->now;
    w->now = t;
}

static void world_add(world* w, const vl_aabb* boxes, uint32_t k, int is_static) {
    if (w->n + k > w->cap) k = w->cap - w->n;
    if (!k) return;
    uint32_t* out = malloc(k * sizeof *out);
    vl_status s = vl_broadphase_add(w->bp, out, boxes, k, is_static ? VL_STATIC : 0);
    CHECK(s == VL_OK, "%s: add %u: %s", w->what, k, vl_status_string(s));
    if (s == VL_OK) {
        for (uint32_t i = 0; i < k; i++) {
            CHECK(lookup(w, out[i]) < 0, "%s: handle %u given twice", w->what, out[i]);
            w->box[w->n] = boxes[i];
            w->handle[w->n] = out[i];
            w->stat[w->n++] = (uint8_t)(is_static != 0);
        }
        table_rebuild(w);
    }
    free(out);
    world_validate(w, "add");
}

/* Object indices idx[k] get boxes[k]. */
static void world_update(world* w, const uint32_t* idx, const vl_aabb* boxes, uint32_t k) {
    uint32_t* h = calloc(k + 1, sizeof *h);
    for (uint32_t i = 0; i < k; i++) h[i] = w->handle[idx[i]];
    vl_status s = vl_broadphase_update(w->bp, h, boxes, k);
    CHECK(s == VL_OK, "%s: update %u: %s", w->what, k, vl_status_string(s));
    if (s == VL_OK)
        for (uint32_t i = 0; i < k; i++) w->box[idx[i]] = boxes[i];
    free(h);
    world_validate(w, "update");
}

/* Removes the objects whose handles are h[0, k) (distinct, live). */
static void world_remove_handles(world* w, const uint32_t* h, uint32_t k) {
    vl_status s = vl_broadphase_remove(w->bp, h, k);
    CHECK(s == VL_OK, "%s: remove %u: %s", w->what, k, vl_status_string(s));
    if (s != VL_OK) return;
    for (uint32_t i = 0; i < k; i++) {
        int32_t at = lookup(w, h[i]);
        if (at < 0) continue;
        uint32_t last = --w->n;
        w->box[at] = w->box[last], w->handle[at] = w->handle[last], w->stat[at] = w->stat[last];
        table_rebuild(w);
    }
    world_validate(w, "remove");
}

static void world_flip_handles(world* w, const uint32_t* h, uint32_t k, int is_static) {
    vl_status s = vl_broadphase_set_static(w->bp, h, k, is_static);
    CHECK(s == VL_OK, "%s: set_static %u: %s", w->what, k, vl_status_string(s));
    if (s == VL_OK)
        for (uint32_t i = 0; i < k; i++) w->stat[lookup(w, h[i])] = (uint8_t)(is_static != 0);
    world_validate(w, "set_static");
}

/* k distinct objects with stat == which (0, 1; 2: either), as handles into h; returns how many. */
static uint32_t pick(world* w, test_rng* r, uint32_t k, int which, uint32_t* h) {
    uint32_t got = 0;
    uint32_t start = w->n ? test_u32(r, w->n) : 0, step = 1 + 2 * test_u32(r, 5);
    for (uint32_t t = 0; t < w->n && got < k; t++) {
        uint32_t i = (start + (uint64_t)t * step) % w->n;
        if (which != 2 && w->stat[i] != which) continue;
        int seen = 0;
        for (uint32_t j = 0; j < got; j++) seen |= h[j] == w->handle[i];
        if (!seen) h[got++] = w->handle[i];
    }
    return got;
}

/* A box at g_scene_offset (test_sap_scenes.h). */
static vl_aabb make_box(float x, float y, float z, float hx, float hy, float hz) {
    vl_aabb b = {{x - hx, y - hy, z - hz}, {x + hx, y + hy, z + hz}};
    scene_move_boxes(&b, 1, g_scene_offset);
    return b;
}

/* A static world of n boxes on a flat area of side `size`, sizes from props to buildings. */
static void static_world(vl_aabb* out, uint32_t n, test_rng* r, float size) {
    for (uint32_t i = 0; i < n; i++) {
        float e = test_u32(r, 8) == 0 ? test_float(r, 5, 20) : test_float(r, 0.2f, 3);
        out[i] = make_box(test_float(r, 0, size), test_float(r, 0, 4), test_float(r, 0, size), e, test_float(r, 0.2f, 4),
                          e * test_float(r, 0.5f, 1.5f));
    }
}

/* The movers (the first `count` dynamic objects) move by up to `step` on x and z. */
static void move_dynamics(world* w, test_rng* r, float step, uint32_t count) {
    uint32_t* idx = malloc((w->n + 1) * sizeof *idx);
    vl_aabb* to = malloc((w->n + 1) * sizeof *to);
    uint32_t k = 0;
    for (uint32_t i = 0; i < w->n && k < count; i++) {
        if (w->stat[i]) continue;
        vl_aabb b = w->box[i];
        float dx = test_float(r, -step, step), dz = test_float(r, -step, step);
        b.min[0] += dx, b.max[0] += dx, b.min[2] += dz, b.max[2] += dz;
        idx[k] = i;
        to[k++] = b;
    }
    if (k) world_update(w, idx, to, k);
    free(idx);
    free(to);
}

/* ---- the tests --------------------------------------------------------------------------------- */

/* Movers sweep a long way over a few thousand statics, every step crossing many of them. */
static void test_sweep(void) {
    test_rng r = {1};
    uint32_t ns = test_scaled(g_scene_offset != 0 ? 1000 : 3000), nd = 150;
    world w;
    world_init(&w, KIND_STATIC_SAP, ns + nd, "sweep");
    vl_aabb* boxes = malloc((ns > nd ? ns : nd) * sizeof *boxes); /* the statics, then the movers */
    static_world(boxes, ns, &r, 400);
    world_add(&w, boxes, ns, 1);
    for (uint32_t i = 0; i < nd; i++) boxes[i] = make_box(test_float(&r, 0, 400), 1, test_float(&r, 0, 400), 1, 1, 1);
    world_add(&w, boxes, nd, 0);
    world_commit(&w);
    for (int frame = 0; frame < 40; frame++) {
        move_dynamics(&w, &r, frame % 10 == 9 ? 150.0f : 6.0f, nd);
        if (frame % 3 == 0) world_commit(&w);
    }
    world_commit(&w);
    free(boxes);
    world_free(&w);
}

/* Statics stream in and out in batches (and some move) while movers move: merges, compactions and
 * re-ranks between walks; the first batch comes before any mover, one after all movers are gone. */
static void test_static_batches(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        test_rng r = {2 + (uint64_t)kind};
        world w;
        world_init(&w, kind, 6000, kind_names[kind]);
        vl_aabb* boxes = malloc(6000 * sizeof *boxes);
        uint32_t* h = malloc(6000 * sizeof *h);
        static_world(boxes, 800, &r, 200);
        world_add(&w, boxes, 800, 1);
        for (uint32_t i = 0; i < 120; i++) boxes[i] = make_box(test_float(&r, 0, 200), 2, test_float(&r, 0, 200), 1.5f, 1, 1.5f);
        world_add(&w, boxes, 120, 0);
        world_commit(&w);
        for (int step = 0; step < 30; step++) {
            move_dynamics(&w, &r, 4, 120);
            uint32_t k = 1 + test_u32(&r, step % 5 == 0 ? 600 : 40);
            switch (step % 4) {
            case 0: static_world(boxes, k, &r, 200), world_add(&w, boxes, k, 1); break;
            case 1: world_remove_handles(&w, h, pick(&w, &r, k, 1, h)); break;
            case 2: { /* statics move: some a little, some far */
                uint32_t m = pick(&w, &r, k, 1, h), *idx = malloc((m + 1) * sizeof *idx);
                for (uint32_t i = 0; i < m; i++) {
                    idx[i] = (uint32_t)lookup(&w, h[i]);
                    boxes[i] = w.box[idx[i]];
                    float d = i % 3 ? 1.0f : 60.0f;
                    boxes[i].min[0] += d, boxes[i].max[0] += d;
                }
                world_update(&w, idx, boxes, m);
                free(idx);
                break;
            }
            default: /* movers and statics in one batch */
                if (step % 8 == 3) {
                    uint32_t m = pick(&w, &r, 60, 2, h), *idx = malloc((m + 1) * sizeof *idx);
                    for (uint32_t i = 0; i < m; i++) {
                        idx[i] = (uint32_t)lookup(&w, h[i]);
                        boxes[i] = scene_step(&r, SCENE_UNIFORM, w.box[idx[i]]);
                    }
                    world_update(&w, idx, boxes, m);
                    free(idx);
                }
                break;
            }
            if (step % 2) world_commit(&w);
        }
        /* every mover gone, statics keep changing, movers come back */
        world_remove_handles(&w, h, pick(&w, &r, w.n, 0, h));
        static_world(boxes, 300, &r, 200);
        world_add(&w, boxes, 300, 1);
        world_remove_handles(&w, h, pick(&w, &r, 100, 1, h));
        world_commit(&w);
        for (uint32_t i = 0; i < 50; i++) boxes[i] = make_box(test_float(&r, 0, 200), 2, test_float(&r, 0, 200), 2, 2, 2);
        world_add(&w, boxes, 50, 0);
        world_commit(&w);
        /* everything gone */
        uint32_t all = w.n;
        memcpy(h, w.handle, all * sizeof *h);
        world_remove_handles(&w, h, all);
        world_commit(&w);
        CHECK(w.prev.n == 0 && vl_broadphase_get_count(w.bp) == 0, "%s: pairs left", kind_names[kind]);
        free(boxes);
        free(h);
        world_free(&w);
    }
}

/* Objects flip between static and dynamic, in batches mixing both states, between moves: pairs
 * between two new statics go, pairs of new dynamics with statics come, the rest stays unreported. */
static void test_flips(uint32_t far) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        for (int scene = 0; scene < SCENE_COUNT; scene++) {
            if (far && (uint32_t)(scene + kind) % 3 != far % 3) continue; /* far away, a third of them */
            char what[64];
            snprintf(what, sizeof what, "flips %s/%s", kind_names[kind], scene_names[scene]);
            test_rng r = {40 + (uint64_t)scene};
            world w;
            world_init(&w, kind, 1200, what);
            vl_aabb boxes[400];
            uint32_t h[400];
            for (int i = 0; i < 400; i++) boxes[i] = scene_box(&r, scene);
            world_add(&w, boxes, 300, 1);
            world_add(&w, boxes + 300, 100, 0);
            world_commit(&w);
            for (int step = 0; step < 24; step++) {
                uint32_t k = pick(&w, &r, 1 + test_u32(&r, step % 6 == 0 ? 300 : 30), 2, h);
                world_flip_handles(&w, h, k, step % 2);
                if (step % 3 == 1) {
                    uint32_t m = pick(&w, &r, 40, 2, h), idx[40];
                    for (uint32_t i = 0; i < m; i++) {
                        idx[i] = (uint32_t)lookup(&w, h[i]);
                        boxes[i] = scene_step(&r, scene, w.box[idx[i]]);
                    }
                    world_update(&w, idx, boxes, m);
                }
                if (step % 4 == 2) { /* a flip back within the same period: nothing to report for it */
                    k = pick(&w, &r, 20, 2, h);
                    world_flip_handles(&w, h, k, 1);
                    world_flip_handles(&w, h, k, 0);
                }
                if (step % 2 == 1 || step % 5 == 0) world_commit(&w);
            }
            world_commit(&w);
            /* flipping to the state they have changes nothing */
            uint32_t k = pick(&w, &r, 50, 1, h);
            world_flip_handles(&w, h, k, 1);
            world_commit(&w);
            CHECK(w.created.count == 0 && w.deleted.count == 0, "%s: a flip to the same state reported pairs", what);
            world_free(&w);
        }
    }
}

/* A ground plane of infinite extent, walls to infinity, touching grids, identical boxes, huge and
 * tiny boxes, signed zeros: statics of each, movers walking over them. */
static void test_special_boxes(void) {
    const float inf = INFINITY;
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        test_rng r = {7};
        world w;
        world_init(&w, kind, 1000, kind_names[kind]);
        vl_aabb s[16];
        uint32_t n = 0;
        s[n++] = (vl_aabb){{-inf, -inf, -inf}, {inf, 0, inf}};       /* the ground */
        s[n++] = (vl_aabb){{-inf, -inf, -inf}, {inf, inf, inf}};     /* everything */
        s[n++] = (vl_aabb){{10, -inf, -inf}, {10, inf, inf}};        /* a flat wall at x = 10 */
        s[n++] = (vl_aabb){{-1e30f, -1e30f, -1e30f}, {1e30f, 1e30f, 1e30f}};
        s[n++] = (vl_aabb){{-0.0f, -0.0f, -0.0f}, {0.0f, 0.0f, 0.0f}};  /* a point at the origin */
        s[n++] = (vl_aabb){{1e-30f, 1e-30f, 1e-30f}, {2e-30f, 2e-30f, 2e-30f}};
        s[n++] = (vl_aabb){{1e-45f, 0, 0}, {1e-45f, 1e-45f, 1e-45f}}; /* denormals */
        s[n++] = (vl_aabb){{3.40282347e38f, 0, 0}, {inf, 1, 1}};
        scene_move_boxes(s, n, g_scene_offset);
        for (int i = 0; i < 4; i++) s[n++] = make_box(5, 1, 5, 1, 1, 1); /* identical */
        world_add(&w, s, n, 1);
        /* a touching grid of unit statics */
        vl_aabb grid[400];
        for (int i = 0; i < 400; i++) grid[i] = (vl_aabb){{(float)(i % 20), 0, (float)(i / 20)}, {(float)(i % 20 + 1), 1, (float)(i / 20 + 1)}};
        scene_move_boxes(grid, 400, g_scene_offset);
        world_add(&w, grid, 400, 1);
        /* movers: identical, unit cubes on the grid, tiny ones, a point, one infinite */
        vl_aabb d[40];
        for (int i = 0; i < 40; i++) {
            float x = (float)test_u32(&r, 20), z = (float)test_u32(&r, 20);
            d[i] = i < 4 ? make_box(5, 1, 5, 1, 1, 1)
                 : i < 24 ? (vl_aabb){{x, 1, z}, {x + 1, 2, z + 1}}
                 : i < 34 ? (vl_aabb){{x * 1e-31f, 0, 0}, {x * 1e-31f, 1e-40f, 1e-40f}}
                          : (vl_aabb){{-0.0f, 0, -0.0f}, {0.0f, 0.0f, 0.0f}};
        }
        d[39] = (vl_aabb){{-inf, 0, -inf}, {inf, 0, inf}};
        scene_move_boxes(d + 4, 36, g_scene_offset);
        world_add(&w, d, 40, 0);
        world_commit(&w);
        uint32_t idx[40];
        for (int step = 0; step < 30; step++) {
            uint32_t k = 0;
            for (uint32_t i = 0; i < w.n && k < 40; i++) {
                if (w.stat[i]) continue;
                vl_aabb b = w.box[i];
                int a = (int)test_u32(&r, 3);
                float dd = (float)((int)test_u32(&r, 3) - 1);
                if (b.max[a] - b.min[a] < 1e-20f) dd *= 1e-30f;  /* tiny ones move tiny steps */
                if (step % 7 == 6) dd = -b.min[a] - (b.max[a] - b.min[a]) * 0.5f; /* back to the origin */
                if (isinf(b.min[a]) || isinf(b.max[a]) || isnan(dd)) dd = 0;
                b.min[a] += dd, b.max[a] += dd;
                idx[k] = i;
                d[k++] = b;
            }
            world_update(&w, idx, d, k);
            world_commit(&w);
        }
        world_free(&w);
    }
}

/* Every operation of the kind, flips included, under allocation budgets 0, 1, 2...: a failure is
 * VL_ERR_OUT_OF_MEMORY and changes nothing (the next commit is exact); no leak. */
static void test_failing_allocator(void) {
    size_t before = vl_get_bytes_in_use();
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        test_rng r = {9};
        world w;
        world_init(&w, kind, 3000, kind_names[kind]);
        int failures = 0;
        vl_aabb* boxes = malloc(3000 * sizeof *boxes);
        uint32_t* h = malloc(3000 * sizeof *h);
        uint32_t* out = malloc(3000 * sizeof *out);
        for (int round = 0; round < 30; round++) {
            int op = round % 5;
            if (op == 0 && w.n + 300 >= w.cap) op = 1;
            for (long b = 0;; b++) {
                test_rng saved = r;
                uint32_t k = 0;
                vl_status s = VL_OK;
                int flag = round % 2;
                hooks.budget = b;
                if (op == 0) {
                    k = 20 + (uint32_t)round * 5;
                    static_world(boxes, k, &r, 100);
                    s = vl_broadphase_add(w.bp, out, boxes, k, flag ? VL_STATIC : 0);
                } else if (op <= 1) { /* far moves of statics and dynamics together */
                    k = pick(&w, &r, round % 4 == 1 ? 3000 : 120, 2, h);
                    static_world(boxes, k, &r, 100);
                    s = vl_broadphase_update(w.bp, h, boxes, k);
                } else if (op == 2) {
                    k = pick(&w, &r, 30, 2, h);
                    s = vl_broadphase_remove(w.bp, h, k);
                } else if (op == 3) {
                    k = pick(&w, &r, 200, 2, h);
                    s = vl_broadphase_set_static(w.bp, h, k, flag);
                } else {
                    vl_pair_buffer c = {0}, d = {0};
                    s = vl_broadphase_commit(w.bp, &c, &d);
                    vl_pair_buffer_free(&c);
                    vl_pair_buffer_free(&d);
                }
                hooks.budget = -1;
                if (s == VL_ERR_OUT_OF_MEMORY && op == 3) /* objects that could not be put back are gone */
                    for (uint32_t i = 0; i < k; i++) {
                        vl_aabb got;
                        if (vl_broadphase_get_box(w.bp, h[i], &got) == VL_OK) continue;
                        CHECK(kinds[kind] != VL_BROADPHASE_BOX_PRUNING && kinds[kind] != VL_BROADPHASE_STATIC_SAP &&
                                  kinds[kind] != VL_BROADPHASE_SAP,
                              "%s: a failed flip removed objects", kind_names[kind]);
                        int32_t at = lookup(&w, h[i]);
                        uint32_t last = --w.n;
                        w.box[at] = w.box[last], w.handle[at] = w.handle[last], w.stat[at] = w.stat[last];
                        table_rebuild(&w);
                    }
                if (s == VL_ERR_OUT_OF_MEMORY) {
                    failures++;
                    world_validate(&w, "a failure");
                    CHECK(vl_broadphase_validate(w.bp) == VL_OK, "%s: validate after failure op %d budget %ld",
                          kind_names[kind], op, b);
                    r = saved;
                    continue;
                }
                CHECK(s == VL_OK, "%s: op %d: %s", kind_names[kind], op, vl_status_string(s));
                if (op == 0) {
                    for (uint32_t i = 0; i < k; i++) {
                        w.box[w.n] = boxes[i], w.handle[w.n] = out[i], w.stat[w.n++] = (uint8_t)flag;
                    }
                    table_rebuild(&w);
                } else if (op == 1) {
                    for (uint32_t i = 0; i < k; i++) w.box[lookup(&w, h[i])] = boxes[i];
                } else if (op == 2) {
                    for (uint32_t i = 0; i < k; i++) {
                        int32_t at = lookup(&w, h[i]);
                        uint32_t last = --w.n;
                        w.box[at] = w.box[last], w.handle[at] = w.handle[last], w.stat[at] = w.stat[last];
                        table_rebuild(&w);
                    }
                } else if (op == 3) {
                    for (uint32_t i = 0; i < k; i++) w.stat[lookup(&w, h[i])] = (uint8_t)flag;
                } else {
                    world_brute(&w, &w.prev); /* that commit consumed the changes */
                }
                break;
            }
            world_validate(&w, "a budgeted call");
        }
        CHECK(failures > 10, "%s: only %d allocation failures exercised", kind_names[kind], failures);
        world_commit(&w);
        free(boxes), free(h), free(out);
        world_free(&w);
    }
    CHECK(vl_get_bytes_in_use() == before, "leak: %zu bytes", vl_get_bytes_in_use() - before);
    CHECK(hooks.allocs == hooks.frees, "allocs %ld frees %ld", hooks.allocs, hooks.frees);
    test_alloc_end(&hooks);
}

/* Once warm, frames of movers over a static world allocate nothing. */
static void test_no_frame_allocation(void) {
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    test_rng r = {12};
    world w;
    world_init(&w, KIND_STATIC_SAP, 4200, "no frame allocation");
    vl_aabb* boxes = malloc(4000 * sizeof *boxes);
    static_world(boxes, 4000, &r, 300);
    world_add(&w, boxes, 4000, 1);
    for (uint32_t i = 0; i < 200; i++) boxes[i] = make_box(test_float(&r, 0, 300), 2, test_float(&r, 0, 300), 1, 1, 1);
    world_add(&w, boxes, 200, 0);
    uint32_t idx[200];
    for (uint32_t i = 0; i < 200; i++) idx[i] = 4000 + i;
    long allocs = 0;
    for (int frame = 0; frame < 24; frame++) {
        if (frame == 8) allocs = hooks.allocs;
        float dx = (frame % 4 < 2) ? 3.0f : -3.0f;
        for (uint32_t i = 0; i < 200; i++) boxes[i] = w.box[idx[i]], boxes[i].min[0] += dx, boxes[i].max[0] += dx;
        uint32_t h[200];
        for (uint32_t i = 0; i < 200; i++) h[i] = w.handle[idx[i]];
        CHECK(vl_broadphase_update(w.bp, h, boxes, 200) == VL_OK, "update");
        for (uint32_t i = 0; i < 200; i++) w.box[idx[i]] = boxes[i];
        w.created.count = w.deleted.count = 0;
        CHECK(vl_broadphase_commit(w.bp, &w.created, &w.deleted) == VL_OK, "commit");
    }
    CHECK(hooks.allocs == allocs, "%ld allocations in 16 warm frames", hooks.allocs - allocs);
    world_brute(&w, &w.prev);
    uint32_t n = 0;
    const vl_pair* pairs = vl_broadphase_get_pairs(w.bp, &n);
    pair_list_copy(&w.got, pairs, n);
    CHECK(pair_list_equal(w.got.p, w.got.n, w.prev.p, w.prev.n), "warm frames: %u pairs, brute %u", w.got.n, w.prev.n);
    free(boxes);
    world_free(&w);
    test_alloc_end(&hooks);
}

/* Bad input to the flip changes nothing. */
static void test_flip_bad_input(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        test_rng r = {13};
        world w;
        world_init(&w, kind, 100, kind_names[kind]);
        vl_aabb boxes[60];
        for (int i = 0; i < 60; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
        world_add(&w, boxes, 30, 1);
        world_add(&w, boxes + 30, 30, 0);
        world_commit(&w);
        uint32_t h[4] = {w.handle[0], w.handle[40], w.handle[41], w.handle[1]};
        uint32_t dup[3] = {w.handle[40], w.handle[2], w.handle[40]};
        uint32_t gone[2] = {w.handle[3], 0};
        world_remove_handles(&w, gone, 1);
        world_commit(&w);
        uint32_t unknown = 0xFFFFFFF0u;
        CHECK(vl_broadphase_set_static(NULL, h, 4, 1) == VL_ERR_INVALID_ARGUMENT, "NULL broadphase");
        CHECK(vl_broadphase_set_static(w.bp, NULL, 4, 1) == VL_ERR_INVALID_ARGUMENT, "NULL handles");
        CHECK(vl_broadphase_set_static(w.bp, dup, 3, 1) == VL_ERR_DUPLICATE_HANDLE, "duplicate");
        CHECK(vl_broadphase_set_static(w.bp, gone, 1, 0) == VL_ERR_INVALID_HANDLE, "removed handle");
        CHECK(vl_broadphase_set_static(w.bp, &unknown, 1, 0) == VL_ERR_INVALID_HANDLE, "unknown handle");
        CHECK(vl_broadphase_set_static(w.bp, NULL, 0, 1) == VL_OK, "empty flip");
        world_validate(&w, "bad flips");
        world_commit(&w);
        CHECK(w.created.count == 0 && w.deleted.count == 0, "%s: bad flips changed the pairs", kind_names[kind]);
        world_flip_handles(&w, h, 4, 1);
        world_commit(&w);
        world_free(&w);
    }
}

int main(void) {
    test_flip_bad_input();
    /* the brute-force cases at every offset of scenes.h (the sweep smaller far away; far away, the
     * flips of a third of the kinds and scenes, rotating, so each at two far offsets); in reduced
     * runs all but the special boxes far away at -2^10 and 2^17 only */
    const int full = test_scaled(10) >= 10;
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        g_scene_offset = scene_offset(k);
        test_special_boxes();
        if (!full && k != 0 && k != 2 && k != 5) continue;
        test_flips(k);
        test_static_batches();
        test_sweep();
    }
    g_scene_offset = 0.0f;
    test_no_frame_allocation();
    test_failing_allocator();
    return test_finish("test_broadphase_static_sap");
}
