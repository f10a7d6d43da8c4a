/* Digests (FNV-1a 64) of the answers to fixed, generated scenes, compared with digests committed
 * here: the same on every SIMD backend (AVX2, SSE4.1, portable, NEON) and for any worker count.
 * The scenes use only exactly rounded float arithmetic (+ - * /, no sin or cos from a libm that
 * may differ by platform), and never depend on VOLLEY_TEST_SCALE or on files.
 * Canonical forms: closest hits by ray index, every field; any hits as hit or miss only (which hit a
 * ray finds first depends on the traversal order); pairs sorted. Set VOLLEY_DETERMINISM_PRINT=1 to
 * print the digests. */
#include "bvh/tree/tree.h"
#include "scenes.h"
#include "test_util.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t fnv(uint64_t h, const void* data, size_t bytes) {
    const unsigned char* p = data;
    for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

static uint64_t fnv_u32(uint64_t h, uint32_t x) {
    unsigned char b[4] = {(unsigned char)x, (unsigned char)(x >> 8), (unsigned char)(x >> 16), (unsigned char)(x >> 24)};
    return fnv(h, b, 4);
}

static uint64_t fnv_float(uint64_t h, float f) { return fnv_u32(h, test_float_bits(f)); }

/* ---- scenes --------------------------------------------------------------------------------- */

/* A terrain of grid x grid cells with heights from an integer hash (multiples of 1/16), and cubes
 * of 12 triangles standing on it: shared edges and vertices everywhere, axis-aligned faces. */
static int det_world(uint32_t grid, uint32_t cubes, uint64_t seed, scene_mesh* m) {
    memset(m, 0, sizeof *m);
    test_rng rng = {seed};
    if (!scene_reserve(m, (grid + 1) * (grid + 1) + 8 * cubes, 2 * grid * grid + 12 * cubes)) return 0;
    for (uint32_t z = 0; z <= grid; z++)
        for (uint32_t x = 0; x <= grid; x++) {
            uint32_t hsh = (x * 73856093u) ^ (z * 19349663u);
            scene_push_vertex(m, (float)x, (float)(hsh % 48u) / 16.0f, (float)z);
        }
    for (uint32_t z = 0; z < grid; z++)
        for (uint32_t x = 0; x < grid; x++) {
            uint32_t a = z * (grid + 1) + x, b = a + 1, c = a + grid + 1, d = c + 1;
            scene_push_tri(m, a, c, b);
            scene_push_tri(m, b, c, d);
        }
    static const uint8_t faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                         {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (uint32_t o = 0; o < cubes; o++) {
        float cx = (float)test_u32(&rng, grid * 4) / 4.0f, cz = (float)test_u32(&rng, grid * 4) / 4.0f;
        float h = 0.25f + (float)test_u32(&rng, 16) / 8.0f, y = 3.0f + (float)test_u32(&rng, 8) / 4.0f;
        uint32_t base = m->vertex_count;
        for (uint32_t k = 0; k < 8; k++)
            scene_push_vertex(m, cx + ((k & 1) ? h : -h), y + ((k & 2) ? h : -h), cz + ((k & 4) ? h : -h));
        for (uint32_t f = 0; f < 12; f++) scene_push_tri(m, base + faces[f][0], base + faces[f][1], base + faces[f][2]);
    }
    scene_bounds(m);
    return 1;
}

/* Rays from random points of the bounds grown by 20% (every third one a short segment from near the
 * ground), directions with components in [-1, 1) (not normalised: no square root needed). */
static void det_rays(const scene_mesh* m, uint32_t count, uint64_t seed, vl_ray* rays) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < count; i++) {
        vl_ray* r = &rays[i];
        for (int a = 0; a < 3; a++) {
            float pad = 0.2f * (m->hi[a] - m->lo[a]);
            r->origin[a] = test_float(&rng, m->lo[a] - pad, m->hi[a] + pad);
            r->dir[a] = test_float(&rng, -1.0f, 1.0f);
        }
        if (r->dir[0] == 0.0f && r->dir[1] == 0.0f && r->dir[2] == 0.0f) r->dir[1] = -1.0f;
        r->tmin = 0.0f;
        r->tmax = INFINITY;
        if (i % 3 == 0) {
            r->origin[1] = m->lo[1] + 3.5f;
            r->dir[1] *= 0.125f;
            r->tmax = 20.0f;
        }
        if (i % 17 == 0) r->tmin = 0.5f;
    }
}

static void det_boxes(uint32_t count, float extent, float size, uint64_t seed, vl_aabb* boxes) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++) {
            /* on a grid of 1/8: touching boxes are common */
            boxes[i].min[a] = (float)test_u32(&rng, (uint32_t)(extent * 8.0f)) / 8.0f;
            boxes[i].max[a] = boxes[i].min[a] + (float)(1 + test_u32(&rng, (uint32_t)(size * 8.0f))) / 8.0f;
        }
}

/* ---- digests -------------------------------------------------------------------------------- */

/* Closest hits as (hit or miss, t): where several primitives are hit at exactly the same t, which
 * one the answer names (and its u, v) depends on the order the traversal tested them in (the
 * batch's path, the lanes' order), so prim, u and v stay out. A box hit from inside (t = 0) comes
 * back as +0 or -0 depending on the path on NEON (its min/max of equal zeros keep another operand
 * than x86's), so t is hashed with -0 as +0. */
static uint64_t digest_closest(const vl_hit* hits, uint32_t n) {
    uint64_t h = FNV_OFFSET;
    for (uint32_t i = 0; i < n; i++) {
        h = fnv_u32(h, hits[i].prim != VL_NO_HIT);
        h = fnv_float(h, hits[i].t + 0.0f); /* -0 as +0: see the note above */
    }
    return h;
}

/* Every field, for answers that must match to the bit (the parallel form at any worker count). */
static uint64_t digest_exact(const vl_hit* hits, uint32_t n) { return fnv(FNV_OFFSET, hits, sizeof(vl_hit) * n); }

static uint64_t digest_any(const vl_hit* hits, uint32_t n) {
    uint64_t h = FNV_OFFSET;
    for (uint32_t i = 0; i < n; i++) h = fnv_u32(h, hits[i].prim != VL_NO_HIT);
    return h;
}

static int pair_less(const void* a, const void* b) {
    const vl_pair *p = a, *q = b;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : (p->b > q->b);
}

static uint64_t digest_pairs(uint64_t h, vl_pair_buffer* buf) {
    qsort(buf->pairs, buf->count, sizeof(vl_pair), pair_less);
    h = fnv_u32(h, buf->count);
    for (uint32_t i = 0; i < buf->count; i++) h = fnv_u32(fnv_u32(h, buf->pairs[i].a), buf->pairs[i].b);
    return h;
}

/* The whole tree: nodes (boxes, links), the primitives in leaf order as stored, the 4-wide nodes. */
static uint64_t digest_tree(const vl_bvh* bvh) {
    uint64_t h = FNV_OFFSET;
    h = fnv_u32(fnv_u32(h, bvh->node_count), bvh->depth);
    for (uint32_t i = 0; i < bvh->node_count; i++) {
        const vl_bvh_node* n = &bvh->nodes[i];
        for (int a = 0; a < 3; a++) h = fnv_float(fnv_float(h, n->min[a]), n->max[a]);
        h = fnv_u32(fnv_u32(h, n->index), n->meta);
    }
    if (bvh->kind == VL_BVH_TRIANGLES) {
        for (size_t i = 0; i < vl_bvh_tri_floats(bvh->prim_count); i++) h = fnv_float(h, bvh->tris[i]);
    } else {
        for (uint32_t i = 0; i < bvh->prim_count; i++) {
            const vl_bvh_box* b = &bvh->boxes[i];
            for (int a = 0; a < 3; a++) h = fnv_float(fnv_float(h, b->min[a]), b->max[a]);
            h = fnv_u32(h, b->prim);
        }
    }
    for (uint32_t i = 0; i < bvh->wide_count; i++) {
        const vl_bvh_node4* w = &bvh->wide[i];
        for (int k = 0; k < 6; k++)
            for (int l = 0; l < 4; l++) h = fnv_float(h, w->bounds[k][l]);
        for (int l = 0; l < 4; l++) h = fnv_u32(fnv_u32(h, w->child[l]), w->count[l]);
    }
    return h;
}

typedef struct expect {
    const char* name;
    uint64_t digest;
} expect;

/* The committed digests: the same from the avx2, sse4.1, portable and neon (qemu) builds. */
static const expect k_expected[] = {
    {"world tree", 0x546e7b43a23ce01aull},
    {"world closest", 0xf48b9d80e3a298b9ull},
    {"world any", 0xf7c84ed8320060a5ull},
    {"soup tree", 0x5c9e1060f0e96eeeull},
    {"soup closest", 0xd6a129a0d301594full},
    {"soup any", 0x77de47ed82cd42e4ull},
    {"boxes tree", 0x1c1797e0e529978eull},
    {"boxes closest", 0x54ad1bf6e7d701a4ull},
    {"boxes any", 0xff3a2252466e4744ull},
    {"box prune", 0xd96e6643705bd03full},
    {"box prune bipartite", 0x1c1c91d0f88b06ffull},
    {"broadphase sap", 0xe6aed0f2b97a00b2ull},
    {"broadphase box pruning", 0xe6aed0f2b97a00b2ull},
    {"broadphase static sap", 0xe6aed0f2b97a00b2ull},
    {"broadphase multi sap", 0xe6aed0f2b97a00b2ull},
    {"broadphase grid", 0xe6aed0f2b97a00b2ull},
    {"broadphase tree", 0xe6aed0f2b97a00b2ull},
};
#define EXPECTED (sizeof k_expected / sizeof k_expected[0])

static int g_print;

static void compare(const char* name, uint64_t got) {
    if (g_print) printf("    {\"%s\", 0x%016llxull},\n", name, (unsigned long long)got);
    for (size_t i = 0; i < EXPECTED; i++)
        if (strcmp(k_expected[i].name, name) == 0) {
            CHECK(got == k_expected[i].digest, "%s: digest 0x%016llx, committed 0x%016llx (backend %s)", name,
                  (unsigned long long)got, (unsigned long long)k_expected[i].digest, vl_get_simd_backend());
            return;
        }
    CHECK(0, "%s: no committed digest", name);
}

#define RAYS 20000u

/* Closest and any hits of the batch, serial and through a pool of 3 workers: one digest each. */
static void digest_rays(const char* scene, const vl_bvh* bvh, const vl_ray* rays, vl_context* ctx) {
    vl_hit* hits = malloc(sizeof(vl_hit) * RAYS);
    vl_hit* par = malloc(sizeof(vl_hit) * RAYS);
    char name[64];
    for (uint32_t flags = 0; flags < 2; flags++) {
        CHECK(vl_bvh_raycast(bvh, rays, RAYS, flags, hits, NULL) == VL_OK, "%s raycast", scene);
        CHECK(vl_bvh_raycast(bvh, rays, RAYS, flags, par, &(vl_exec){.context = ctx}) == VL_OK, "%s parallel", scene);
        uint64_t d = flags ? digest_any(hits, RAYS) : digest_closest(hits, RAYS);
        uint64_t dp = flags ? digest_any(par, RAYS) : digest_closest(par, RAYS);
        CHECK(d == dp, "%s flags %u: the parallel form's digest differs", scene, flags);
        /* the parallel form answers alike, to the bit, for any worker count */
        uint64_t exact = digest_exact(par, RAYS);
        for (uint32_t w = 0; w < 2; w++) {
            vl_context* other = NULL;
            vl_thread_pool* pool = NULL;
            vl_task_system ts = {NULL, NULL, NULL, 1};
            if (w) {
                CHECK(vl_thread_pool_create(2, &pool) == VL_OK, "pool");
                ts = vl_thread_pool_get_task_system(pool);
            }
            CHECK(vl_context_create(&ts, &other) == VL_OK, "context");
            CHECK(vl_bvh_raycast(bvh, rays, RAYS, flags, par, &(vl_exec){.context = other}) == VL_OK, "%s parallel", scene);
            CHECK(digest_exact(par, RAYS) == exact, "%s flags %u: %u workers answer otherwise", scene, flags, w + 1);
            vl_context_destroy(other);
            vl_thread_pool_destroy(pool);
        }
        snprintf(name, sizeof name, "%s %s", scene, flags ? "any" : "closest");
        compare(name, d);
    }
    free(hits);
    free(par);
}

static void digest_scene(const char* scene, const vl_bvh* bvh, const scene_mesh* m, vl_context* ctx) {
    char name[64];
    snprintf(name, sizeof name, "%s tree", scene);
    compare(name, digest_tree(bvh));
    vl_ray* rays = malloc(sizeof(vl_ray) * RAYS);
    det_rays(m, RAYS, 77, rays);
    digest_rays(scene, bvh, rays, ctx);
    free(rays);
}

static void digest_broadphase(vl_broadphase_kind kind, const char* name) {
    enum { N = 3000 };
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * N);
    uint32_t* handles = malloc(sizeof(uint32_t) * N);
    det_boxes(N, 60.0f, 3.0f, 31, boxes);
    vl_broadphase_desc d = vl_broadphase_default_desc();
    d.kind = kind;
    vl_broadphase* bp = NULL;
    CHECK(vl_broadphase_create(&d, &bp) == VL_OK, "create");
    vl_pair_buffer created = {0}, deleted = {0};
    uint64_t h = FNV_OFFSET;
    CHECK(vl_broadphase_add(bp, handles, boxes, N / 3, VL_STATIC) == VL_OK, "add statics");
    CHECK(vl_broadphase_add(bp, handles + N / 3, boxes + N / 3, N - N / 3, 0) == VL_OK, "add");
    test_rng rng = {5};
    uint32_t live = N; /* handles[N / 3, live) move */
    for (int frame = 0; frame < 6; frame++) {
        created.count = deleted.count = 0;
        CHECK(vl_broadphase_commit(bp, &created, &deleted) == VL_OK, "commit");
        h = digest_pairs(digest_pairs(h, &created), &deleted);
        for (uint32_t i = N / 3; i < live; i++) /* moves by multiples of 1/8 */
            for (int a = 0; a < 3; a++) {
                float step = (float)((int32_t)test_u32(&rng, 9) - 4) / 8.0f;
                boxes[i].min[a] += step, boxes[i].max[a] += step;
            }
        CHECK(vl_broadphase_update(bp, handles + N / 3, boxes + N / 3, live - N / 3) == VL_OK, "update");
        if (frame == 3) {
            live -= 100;
            CHECK(vl_broadphase_remove(bp, handles + live, 100) == VL_OK, "remove");
        }
    }
    compare(name, h);
    vl_pair_buffer_free(&created);
    vl_pair_buffer_free(&deleted);
    vl_broadphase_destroy(bp);
    free(boxes);
    free(handles);
}

int main(void) {
    g_print = getenv("VOLLEY_DETERMINISM_PRINT") != NULL;
    if (g_print) printf("backend %s\n", vl_get_simd_backend());
    vl_thread_pool* pool = NULL;
    CHECK(vl_thread_pool_create(3, &pool) == VL_OK, "pool");
    vl_task_system ts = vl_thread_pool_get_task_system(pool);
    vl_context* ctx = NULL;
    CHECK(vl_context_create(&ts, &ctx) == VL_OK, "context");

    scene_mesh world, soup;
    CHECK(det_world(100, 300, 11, &world), "world");
    memset(&soup, 0, sizeof soup);
    CHECK(scene_reserve(&soup, 3 * 12000, 12000), "soup");
    test_rng rng = {12};
    for (uint32_t i = 0; i < 12000; i++) {
        /* one draw per statement: the order in which arguments or initialisers are evaluated is
         * unspecified (gcc takes them in opposite orders on x86-64 and aarch64) */
        float c[3], p[3];
        for (int a = 0; a < 3; a++) c[a] = test_float(&rng, 0, 80);
        for (int k = 0; k < 3; k++) {
            for (int a = 0; a < 3; a++) p[a] = c[a] + test_float(&rng, -2, 2);
            scene_push_vertex(&soup, p[0], p[1], p[2]);
        }
        scene_push_tri(&soup, 3 * i, 3 * i + 1, 3 * i + 2);
    }
    scene_bounds(&soup);
    const scene_mesh* meshes[2] = {&world, &soup};
    const char* names[2] = {"world", "soup"};
    for (int s = 0; s < 2; s++) {
        const scene_mesh* m = meshes[s];
        vl_bvh *bvh = NULL, *par = NULL;
        CHECK(vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &bvh, NULL) == VL_OK,
              "build");
        CHECK(vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &par,
                                              &(vl_exec){.context = ctx}) == VL_OK,
              "parallel build");
        if (bvh && par) CHECK(digest_tree(bvh) == digest_tree(par), "%s: parallel tree", names[s]);
        if (bvh) digest_scene(names[s], bvh, m, ctx);
        vl_bvh_destroy(bvh);
        vl_bvh_destroy(par);
    }

    /* a tree of boxes */
    enum { NB = 8000 };
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * NB);
    det_boxes(NB, 100.0f, 4.0f, 21, boxes);
    vl_bvh* bb = NULL;
    CHECK(vl_bvh_build_boxes(boxes, NB, NULL, &bb, NULL) == VL_OK, "boxes");
    scene_mesh box_scene;
    memset(&box_scene, 0, sizeof box_scene);
    for (int a = 0; a < 3; a++) box_scene.lo[a] = 0.0f, box_scene.hi[a] = 104.0f;
    if (bb) digest_scene("boxes", bb, &box_scene, ctx);
    vl_bvh_destroy(bb);

    /* box pruning, complete and bipartite */
    vl_pair_buffer pairs = {0};
    CHECK(vl_box_prune(boxes, NB, &pairs, NULL) == VL_OK, "prune");
    compare("box prune", digest_pairs(FNV_OFFSET, &pairs));
    pairs.count = 0;
    CHECK(vl_box_prune_bipartite(boxes, NB / 2, boxes + NB / 2, NB - NB / 2, &pairs, NULL) == VL_OK, "bipartite");
    compare("box prune bipartite", digest_pairs(FNV_OFFSET, &pairs));
    vl_pair_buffer_free(&pairs);
    free(boxes);

    digest_broadphase(VL_BROADPHASE_SAP, "broadphase sap");
    digest_broadphase(VL_BROADPHASE_BOX_PRUNING, "broadphase box pruning");
    digest_broadphase(VL_BROADPHASE_STATIC_SAP, "broadphase static sap");
    digest_broadphase(VL_BROADPHASE_MULTI_SAP, "broadphase multi sap");
    digest_broadphase(VL_BROADPHASE_GRID, "broadphase grid");
    digest_broadphase(VL_BROADPHASE_TREE, "broadphase tree");

    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
    scene_free(&world);
    scene_free(&soup);
    CHECK(vl_get_bytes_in_use() == 0, "leak");
    return test_finish("test_determinism");
}
