/* VL_BROADPHASE_MULTI_SAP and VL_BROADPHASE_GRID against brute force on what grids get wrong:
 * objects straddling and crossing cells, larger than a cell or than the grid, leaving the grid and
 * coming back, touching exactly at cell borders, infinite bounds (a ground plane), identical boxes,
 * static and dynamic mixes; every case again at the far offsets of scenes.h. After every commit: the pair set, the created and deleted lists (each
 * pair once), validate after every call. Handles are opaque: the test maps them to its own indices. */
#include <stdint.h>

#include <volley/volley.h>

#include "test_oracle.h"
#include "test_sap_scenes.h"
#include "test_util.h"

#define CELL 4.0f /* the cell side given in the desc of most cases */

/* The offset (scenes.h) at which the cases run: box_at and random_box add (o, o / 2, -o) to every
 * bound, rounded to float. The cells' borders (multiples of CELL from 0, or from the layout's
 * origin, a bound of the first boxes) move along, exactly: every offset is a multiple of CELL. */
static float g_offset;

typedef struct world {
    vl_broadphase* bp;
    const char* name;
    char label[64]; /* the name and the offset */
    uint32_t cap, n;       /* objects ever added, by the test's index */
    vl_aabb* box;
    uint8_t *live, *stat;
    uint32_t* handle;      /* handle of each index */
    vl_pair* map;          /* (handle, index), sorted, rebuilt at each check */
    pair_list prev, now, got, want;
    vl_pair_buffer created, deleted;
} world;

static void world_init(world* w, const char* name, vl_broadphase_kind kind, float cell_size, uint32_t up, uint32_t cap) {
    memset(w, 0, sizeof *w);
    snprintf(w->label, sizeof w->label, "%s at %g", name, g_offset);
    w->name = w->label;
    w->cap = cap;
    w->box = calloc(cap, sizeof *w->box);
    w->live = calloc(cap, 1);
    w->stat = calloc(cap, 1);
    w->handle = calloc(cap, sizeof *w->handle);
    w->map = calloc(cap, sizeof *w->map);
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    desc.kind = kind;
    desc.cell_size = cell_size;
    desc.up_axis = up;
    CHECK(vl_broadphase_create(&desc, &w->bp) == VL_OK, "%s: create", name);
}

static void world_free(world* w) {
    vl_broadphase_destroy(w->bp);
    free(w->box), free(w->live), free(w->stat), free(w->handle), free(w->map);
    free(w->prev.p), free(w->now.p), free(w->got.p), free(w->want.p);
    vl_pair_buffer_free(&w->created);
    vl_pair_buffer_free(&w->deleted);
}

static int cmp_map(const void* x, const void* y) {
    const vl_pair *a = x, *b = y;
    return (a->a > b->a) - (a->a < b->a);
}

/* Index of a live handle, or UINT32_MAX. */
static uint32_t index_of(const world* w, uint32_t live_count, uint32_t h) {
    uint32_t lo = 0, hi = live_count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (w->map[mid].a < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < live_count && w->map[lo].a == h ? w->map[lo].b : UINT32_MAX;
}

/* The pairs as (lower handle, higher handle), through the index map: every reported handle must be live. */
static void to_handles(world* w, pair_list* out, const vl_pair* p, uint32_t n, uint32_t live_count) {
    out->n = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = index_of(w, live_count, p[i].a), b = index_of(w, live_count, p[i].b);
        CHECK(a != UINT32_MAX && b != UINT32_MAX && p[i].a < p[i].b, "%s: pair (%u, %u) of no live objects or not low-high",
              w->name, p[i].a, p[i].b);
        pair_list_push(out, p[i].a, p[i].b);
    }
    pairs_normalize(out->p, out->n);
}

static void world_check(world* w) {
    w->created.count = w->deleted.count = 0;
    CHECK(vl_broadphase_commit(w->bp, &w->created, &w->deleted) == VL_OK, "%s: commit", w->name);
    CHECK(vl_broadphase_validate(w->bp) == VL_OK, "%s: validate after commit", w->name);
    uint32_t live = 0;
    for (uint32_t i = 0; i < w->n; i++)
        if (w->live[i]) w->map[live++] = (vl_pair){w->handle[i], i};
    qsort(w->map, live, sizeof *w->map, cmp_map);
    w->want.n = 0;
    for (uint32_t i = 0; i < w->n; i++)
        for (uint32_t j = i + 1; j < w->n && w->live[i]; j++)
            if (w->live[j] && !(w->stat[i] && w->stat[j]) && test_box_overlap(&w->box[i], &w->box[j])) {
                uint32_t a = w->handle[i], b = w->handle[j];
                pair_list_push(&w->want, a < b ? a : b, a < b ? b : a);
            }
    pairs_normalize(w->want.p, w->want.n);
    uint32_t n = 0;
    const vl_pair* pairs = vl_broadphase_get_pairs(w->bp, &n);
    to_handles(w, &w->got, pairs, n, live);
    CHECK(pair_list_equal(w->got.p, w->got.n, w->want.p, w->want.n), "%s: %u pairs, brute force %u", w->name, w->got.n,
          w->want.n);
    pair_list_minus(&w->now, &w->want, &w->prev);
    to_handles(w, &w->got, w->created.pairs, w->created.count, live);
    CHECK(pair_list_equal(w->got.p, w->got.n, w->now.p, w->now.n), "%s: %u created, expected %u", w->name, w->got.n,
          w->now.n);
    pair_list_minus(&w->now, &w->prev, &w->want);
    w->got.n = 0; /* deleted pairs may name removed handles: compared as they are */
    for (uint32_t i = 0; i < w->deleted.count; i++) pair_list_push(&w->got, w->deleted.pairs[i].a, w->deleted.pairs[i].b);
    pairs_normalize(w->got.p, w->got.n);
    CHECK(pair_list_equal(w->got.p, w->got.n, w->now.p, w->now.n), "%s: %u deleted, expected %u", w->name, w->got.n,
          w->now.n);
    pair_list t = w->prev;
    w->prev = w->want;
    w->want = t;
}

static uint32_t world_add(world* w, vl_aabb b, int is_static) {
    uint32_t i = w->n++, h = 0;
    CHECK(vl_broadphase_add(w->bp, &h, &b, 1, is_static ? VL_STATIC : 0) == VL_OK, "%s: add", w->name);
    CHECK(vl_broadphase_validate(w->bp) == VL_OK, "%s: validate after add", w->name);
    w->box[i] = b, w->live[i] = 1, w->stat[i] = (uint8_t)(is_static != 0), w->handle[i] = h;
    return i;
}

static void world_move(world* w, uint32_t i, vl_aabb b) {
    CHECK(vl_broadphase_update(w->bp, &w->handle[i], &b, 1) == VL_OK, "%s: update", w->name);
    CHECK(vl_broadphase_validate(w->bp) == VL_OK, "%s: validate after update", w->name);
    w->box[i] = b;
}

static void world_remove(world* w, uint32_t i) {
    CHECK(vl_broadphase_remove(w->bp, &w->handle[i], 1) == VL_OK, "%s: remove", w->name);
    CHECK(vl_broadphase_validate(w->bp) == VL_OK, "%s: validate after remove", w->name);
    w->live[i] = 0;
}

static vl_aabb box_at(float x0, float y0, float z0, float x1, float y1, float z1) {
    vl_aabb b = {{x0, y0, z0}, {x1, y1, z1}};
    scene_move_boxes(&b, 1, g_offset);
    return b;
}

/* b with its min on the given axes one float up (a gap of one float from a border). */
static vl_aabb min_up(vl_aabb b, int x, int z) {
    if (x) b.min[0] = nextafterf(b.min[0], INFINITY);
    if (z) b.min[2] = nextafterf(b.min[2], INFINITY);
    return b;
}

static vl_aabb shifted(vl_aabb b, float dx, float dz) {
    b.min[0] += dx, b.max[0] += dx, b.min[2] += dz, b.max[2] += dz;
    return b;
}

static const vl_broadphase_kind kinds[2] = {VL_BROADPHASE_MULTI_SAP, VL_BROADPHASE_GRID};
static const char* const names[2] = {"multi_sap", "grid"};

/* A floor of boxes over [0, 64]^2 that fixes the layout: cells of side CELL from 0. */
static void lay_floor(world* w) {
    for (int i = 0; i <= 16; i++) world_add(w, box_at(4.0f * (float)i, -1, 4.0f * (float)i, 4.0f * (float)i, 0, 4.0f * (float)i), 1);
    world_add(w, box_at(0, -1, 0, 0.5f, 0, 0.5f), 1);
    world_add(w, box_at(63.5f, -1, 63.5f, 64, 0, 64), 1);
    world_check(w);
}

/* Boxes touching exactly on cell borders (max of one == min of the other == k * CELL), on each
 * ground axis and at a corner; then a gap of one float, then touching again. */
static void test_borders(int kind) {
    world w;
    world_init(&w, names[kind], kinds[kind], CELL, 2, 256);
    lay_floor(&w);
    uint32_t a = world_add(&w, box_at(5, 0, 5, 8, 1, 8), 0);
    uint32_t b = world_add(&w, box_at(8, 0, 6, 11, 1, 7), 0);   /* touches a at x = 8 */
    uint32_t c = world_add(&w, box_at(6, 0, 8, 7, 1, 12), 0);   /* touches a at z = 8 */
    uint32_t d = world_add(&w, box_at(8, 1, 8, 12, 2, 12), 0);  /* touches a at one corner */
    uint32_t e = world_add(&w, box_at(8, 0, 8, 8, 1, 8), 0);    /* a point on a cell corner */
    world_check(&w);
    CHECK(w.prev.n >= 5, "%s: only %u pairs at the borders", w.name, w.prev.n);
    world_move(&w, b, min_up(box_at(8, 0, 6, 11, 1, 7), 1, 0));
    world_move(&w, e, min_up(box_at(8, 0, 8, 9, 1, 9), 1, 1));
    world_check(&w);
    world_move(&w, b, box_at(8, 0, 6, 11, 1, 7));
    world_move(&w, c, box_at(6, 0, 8, 7, 1, 8)); /* flat: zero extent on z, on the border */
    world_move(&w, d, box_at(4, 1, 4, 8, 1, 8));
    world_check(&w);
    for (int step = 0; step < 40; step++) { /* slide a across the borders in quarter cells */
        float dx = step < 20 ? 1.0f : -1.0f;
        world_move(&w, a, shifted(w.box[a], dx, dx * 0.5f));
        if (step % 3 == 0) world_check(&w);
    }
    world_check(&w);
    world_free(&w);
}

/* Objects that straddle cells, grow past a cell and past the whole grid (overflow) and shrink
 * back; one leaves the grid far away and comes back, stepwise and by teleports. */
static void test_sizes_and_exits(int kind) {
    world w;
    world_init(&w, names[kind], kinds[kind], CELL, 2, 512);
    lay_floor(&w);
    test_rng r = {17 + (uint64_t)kind};
    for (int i = 0; i < 120; i++) {
        float x = test_float(&r, 0, 64), z = test_float(&r, 0, 64), e = test_float(&r, 0.2f, 3);
        world_add(&w, box_at(x - e, 0, z - e, x + e, 1, z + e), i % 5 == 0);
    }
    uint32_t big = world_add(&w, box_at(10, 0, 10, 12, 1, 12), 0);
    uint32_t rover = world_add(&w, box_at(30, 0, 30, 31, 1, 31), 0);
    world_check(&w);
    const float sizes[] = {1, 3, 4, 5, 9, 17, 40, 70, 300, 1e6f, 40, 5, 2, 0};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        world_move(&w, big, box_at(10, 0, 10, 12 + sizes[s], 1, 12 + sizes[s] * 0.5f));
        world_check(&w);
    }
    const float exits[] = {40, 62, 63.9f, 64, 64.1f, 70, 200, 1e4f, 1e30f, 1e4f, 65, 63, 40, 20, -3, -1e5f, -0.5f, 10};
    for (unsigned s = 0; s < sizeof exits / sizeof exits[0]; s++) {
        world_move(&w, rover, box_at(exits[s], 0, 30, exits[s] + 1, 1, 31));
        world_check(&w);
    }
    for (int step = 0; step < 60; step++) { /* out along z in steps of a cell, and back */
        float dz = step < 30 ? CELL : -CELL;
        world_move(&w, rover, shifted(w.box[rover], 0.3f, dz));
        if (step % 4 == 0) world_check(&w);
    }
    /* the others move too, some far outside the floor */
    for (int frame = 0; frame < 30; frame++) {
        for (uint32_t i = 19; i < w.n; i++) {
            if (!w.live[i] || w.stat[i] || test_u32(&r, 3)) continue;
            float d = frame % 10 == 9 ? 80.0f : 1.5f;
            world_move(&w, i, shifted(w.box[i], test_float(&r, -d, d), test_float(&r, -d, d)));
        }
        world_check(&w);
    }
    world_free(&w);
}

/* A ground plane with infinite bounds (static), a wall infinite along one ground axis (dynamic),
 * boxes falling onto the plane and through it; the plane removed and added again. */
static void test_infinite(int kind) {
    world w;
    world_init(&w, names[kind], kinds[kind], 0, 0, 256);
    test_rng r = {5};
    for (int i = 0; i < 80; i++) {
        float x = test_float(&r, -50, 50), z = test_float(&r, -50, 50);
        world_add(&w, box_at(x, 5, z, x + 1, 6, z + 1), i % 4 == 0);
    }
    uint32_t ground = world_add(&w, box_at(-INFINITY, -INFINITY, -INFINITY, INFINITY, 0, INFINITY), 1);
    uint32_t wall = world_add(&w, box_at(-INFINITY, 0, 10, INFINITY, 20, 11), 0);
    world_check(&w);
    for (int frame = 0; frame < 12; frame++) {
        for (uint32_t i = 0; i < 80; i++)
            if (!w.stat[i]) {
                vl_aabb b = w.box[i];
                b.min[1] -= 1, b.max[1] -= 1;
                world_move(&w, i, b);
            }
        world_move(&w, wall, box_at(-INFINITY, 0, 10 + (float)frame * 3, INFINITY, 20, 11 + (float)frame * 3));
        world_check(&w);
    }
    world_remove(&w, ground);
    world_check(&w);
    world_add(&w, box_at(-INFINITY, -INFINITY, -INFINITY, INFINITY, -3, INFINITY), 0); /* now dynamic */
    world_move(&w, wall, box_at(-5, 0, -INFINITY, 5, INFINITY, INFINITY));
    world_check(&w);
    world_move(&w, wall, box_at(-5, 0, 0, 5, 2, 1)); /* back to a small box */
    world_check(&w);
    world_free(&w);
}

/* Many identical boxes, on a cell corner, moving together and apart. */
static void test_identical(int kind) {
    world w;
    world_init(&w, names[kind], kinds[kind], CELL, 2, 256);
    lay_floor(&w);
    uint32_t first = w.n;
    for (int i = 0; i < 40; i++) world_add(&w, box_at(7, 0, 7, 9, 1, 9), i % 3 == 0);
    world_check(&w);
    for (int frame = 0; frame < 10; frame++) {
        for (uint32_t i = first; i < w.n; i++)
            if (!w.stat[i]) world_move(&w, i, shifted(w.box[i], frame < 5 ? 1.0f : -1.0f, 0));
        world_check(&w);
    }
    for (uint32_t i = first; i < w.n; i += 2) world_move(&w, i, shifted(w.box[i], (float)(i % 7) * 3, 0));
    world_check(&w);
    for (uint32_t i = first; i < w.n; i += 3) world_remove(&w, i);
    world_check(&w);
    world_free(&w);
}

/* Random sequences with every kind of box mixed, statics and dynamics, adds, moves, teleports,
 * removals; default desc (the layout from the boxes) and fixed cells, three up axes. */
static vl_aabb random_box(test_rng* r, int up) {
    float c[3], e[3];
    for (int a = 0; a < 3; a++) c[a] = test_float(r, -60, 60), e[a] = test_float(r, 0.1f, 3);
    c[up] = test_float(r, -2, 2);
    uint32_t t = test_u32(r, 40);
    if (t == 0) e[(up + 1) % 3] = 200;                                  /* larger than the grid */
    if (t == 1) e[(up + 2) % 3] = INFINITY;                             /* infinite */
    if (t == 2) c[(up + 1) % 3] = 5000;                                 /* far outside */
    if (t == 3) c[0] = c[1] = c[2] = 8, e[0] = e[1] = e[2] = 4;           /* borders, identical */
    if (t == 4) e[(up + 1) % 3] = 12;                                   /* a few cells */
    vl_aabb b;
    for (int a = 0; a < 3; a++) b.min[a] = c[a] - e[a], b.max[a] = c[a] + e[a];
    scene_move_boxes(&b, 1, g_offset);
    return b;
}

static void test_random(int kind, uint32_t steps) {
    for (int variant = 0; variant < 6; variant++) {
        int up = variant % 3;
        world w;
        world_init(&w, names[kind], kinds[kind], variant < 3 ? 0 : CELL, (uint32_t)up + 1, 1200);
        test_rng r = {1000 + (uint64_t)variant * 7 + (uint64_t)kind};
        for (uint32_t step = 0; step < steps && w.n + 40 < w.cap; step++) {
            uint32_t op = test_u32(&r, 10);
            if (op < 3 || w.n < 20) {
                for (uint32_t k = 1 + test_u32(&r, 10); k; k--) world_add(&w, random_box(&r, up), test_u32(&r, 3) == 0);
            } else if (op < 7) {
                for (uint32_t k = test_u32(&r, 30); k; k--) {
                    uint32_t i = test_u32(&r, w.n);
                    if (!w.live[i]) continue;
                    vl_aabb b = test_u32(&r, 8) ? w.box[i] : random_box(&r, up);
                    if (test_u32(&r, 8)) {
                        float d0 = test_float(&r, -2, 2), d1 = test_float(&r, -2, 2);
                        for (int a = 0; a < 3; a++)
                            if (a != up) b.min[a] += a == 0 ? d0 : d1, b.max[a] += a == 0 ? d0 : d1;
                    }
                    world_move(&w, i, b);
                }
            } else if (op < 8) {
                for (uint32_t k = test_u32(&r, 6); k; k--) {
                    uint32_t i = test_u32(&r, w.n);
                    if (w.live[i]) world_remove(&w, i);
                }
            } else {
                world_check(&w);
            }
        }
        world_check(&w);
        world_free(&w);
    }
}

static void test_bad_desc(void) {
    for (int kind = 0; kind < 2; kind++) {
        vl_broadphase_desc desc = vl_broadphase_default_desc();
        desc.kind = kinds[kind];
        vl_broadphase* bp = NULL;
        desc.up_axis = 4;
        CHECK(vl_broadphase_create(&desc, &bp) == VL_ERR_INVALID_ARGUMENT && !bp, "%s: up axis 4", names[kind]);
        desc.up_axis = 0;
        const float bad[] = {-1.0f, NAN, INFINITY};
        for (int i = 0; i < 3; i++) {
            desc.cell_size = bad[i];
            CHECK(vl_broadphase_create(&desc, &bp) == VL_ERR_INVALID_ARGUMENT && !bp, "%s: cell size %g", names[kind],
                  (double)bad[i]);
        }
        desc.cell_size = 0;
        desc.grid_cells = 257;
        CHECK(vl_broadphase_create(&desc, &bp) == VL_ERR_INVALID_ARGUMENT && !bp, "%s: 257 cells", names[kind]);
        desc.grid_cells = 1; /* one cell: everything shares it */
        CHECK(vl_broadphase_create(&desc, &bp) == VL_OK && bp, "%s: one cell", names[kind]);
        vl_broadphase_destroy(bp);
    }
}

/* grid_cells = 1 and 3: the layout from the desc. */
static void test_few_cells(void) {
    for (uint32_t cells = 1; cells <= 3; cells += 2) {
        world w;
        world_init(&w, "multi_sap few cells", VL_BROADPHASE_MULTI_SAP, 0, 2, 400);
        vl_broadphase_destroy(w.bp);
        vl_broadphase_desc desc = vl_broadphase_default_desc();
        desc.kind = VL_BROADPHASE_MULTI_SAP;
        desc.grid_cells = cells;
        CHECK(vl_broadphase_create(&desc, &w.bp) == VL_OK, "create");
        test_rng r = {99 + cells};
        for (int i = 0; i < 200; i++) world_add(&w, random_box(&r, 1), i % 4 == 0);
        world_check(&w);
        for (int frame = 0; frame < 10; frame++) {
            for (uint32_t i = 0; i < w.n; i += 3) world_move(&w, i, shifted(w.box[i], test_float(&r, -3, 3), 1));
            world_check(&w);
        }
        world_free(&w);
    }
}

int main(void) {
    test_bad_desc();
    /* every case at every offset of scenes.h, the random sequences shorter far away */
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        g_offset = scene_offset(k);
        for (int kind = 0; kind < 2; kind++) {
            test_borders(kind);
            test_sizes_and_exits(kind);
            test_infinite(kind);
            test_identical(kind);
            test_random(kind, test_scaled(k ? 100 : 400));
        }
    }
    g_offset = 0.0f;
    test_few_cells();
    return test_finish("test_broadphase_grids");
}
