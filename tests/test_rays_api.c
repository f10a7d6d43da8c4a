/* The raycast API's edges: argument checks, flags (the batch hint refused by vl_bvh_raycast1),
 * count 0; batches of 1 to VL_WALK_BATCH + 64 rays mixing every kind of invalid ray (NaN and
 * infinite origins, zero, NaN, infinite and denormal directions, negative or NaN tmin, tmin past
 * tmax, NaN tmax) with valid ones: each invalid ray a miss, every valid one answered, batched as
 * single; the order in which a call's problems decide its status (NULL, then the flags, then the
 * scratch, then the rays; nothing written before the rays); a batch whose scratch cannot be
 * allocated answers the same one ray at a time; the caller's scratch (sizes, the same answers
 * whichever way a batch goes, no allocation, a missing, misaligned or short one refused with
 * nothing written); triangles at the edges of the documented range of the ray-triangle test
 * (L^2 D, L^2 s and L D s near 2^-100 and 2^120) hit by one ray and by batches; rays in a
 * triangle's plane or grazing it miss; any hit agrees with the one-ray path on whether a ray hits.
 * The ray-triangle test against a double-precision reference, away from the edges: t within 1e-4
 * relative, u and v within 1e-4. */
#include <float.h>

#include "bvh/rays/ray_tests.h"
#include "bvh/rays/ray_plan.h"
#include "scenes.h"
#include "test_alloc.h"
#include "test_util.h"

static const float quad_xyz[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
static const uint32_t quad_idx[] = {0, 1, 2, 0, 2, 3};

static vl_ray ray_at(float x, float y, float z, float dx, float dy, float dz) {
    vl_ray r = {{x, y, z}, 0.0f, {dx, dy, dz}, INFINITY};
    return r;
}

static void test_query_errors(void) {
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(quad_xyz, 4, quad_idx, 2, NULL, &bvh, NULL) == VL_OK, "build quad");
    if (!bvh) return;
    vl_ray good = ray_at(0.25f, 0.5f, 1, 0, 0, -1);
    vl_hit h, one[1];
    CHECK(vl_bvh_raycast(NULL, &good, 1, 0, one, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_raycast(bvh, NULL, 1, 0, one, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL rays");
    CHECK(vl_bvh_raycast(bvh, &good, 1, 0, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
    CHECK(vl_bvh_raycast(bvh, &good, 1, 4, one, NULL) == VL_ERR_INVALID_FLAGS, "bad flags");
    CHECK(vl_bvh_raycast(bvh, &good, 1, VL_QUERY_ANY | VL_QUERY_GROUP_BY_ORIGIN, one, NULL) == VL_OK, "grouped any");
    CHECK(vl_bvh_raycast1(bvh, &good, VL_QUERY_GROUP_BY_ORIGIN, &h) == VL_ERR_INVALID_FLAGS, "raycast1 refuses the batch hint");
    CHECK(vl_bvh_raycast(bvh, &good, 1, VL_QUERY_GROUP_BY_ORIGIN, &h, NULL) == VL_OK && h.prim == 1, "a batch of one takes it");
    CHECK(vl_bvh_raycast(bvh, NULL, 0, 0, NULL, NULL) == VL_OK, "count 0");
    CHECK(vl_bvh_raycast1(NULL, &good, 0, &h) == VL_ERR_INVALID_ARGUMENT, "raycast1 NULL bvh");
    CHECK(vl_bvh_raycast1(bvh, NULL, 0, &h) == VL_ERR_INVALID_ARGUMENT, "raycast1 NULL ray");
    CHECK(vl_bvh_raycast1(bvh, &good, 0, NULL) == VL_ERR_INVALID_ARGUMENT, "raycast1 NULL hit");
    CHECK(vl_bvh_raycast1(bvh, &good, 0x10, &h) == VL_ERR_INVALID_FLAGS, "raycast1 bad flags");
    CHECK(vl_bvh_raycast1(bvh, &good, 0, &h) == VL_OK && h.prim == 1 && h.t == 1.0f, "quad hit prim %u t %g", h.prim,
          h.t);
    CHECK(fabsf(h.u - 0.25f) < 1e-6f && fabsf(h.v - 0.25f) < 1e-6f, "barycentrics %g %g", h.u, h.v);

    /* a batch mixing every kind of invalid ray with valid ones, at several batch sizes: one ray at
     * a time, walks, and ray streams (the last size: the 64 rays over again) */
    enum { many = VL_WALK_BATCH + 64 };
    static vl_ray rays[many];
    static vl_hit hits[many];
    int valid[64];
    for (uint32_t i = 0; i < 64; i++) {
        rays[i] = ray_at(0.1f + 0.012f * (float)i, 0.5f, 1.0f, 0, 0, -1);
        valid[i] = 1;
        switch (i % 12) {
        case 1: rays[i].origin[0] = NAN, valid[i] = 0; break;
        case 2: rays[i].origin[1] = INFINITY, valid[i] = 0; break;
        case 3: rays[i].dir[2] = 0, valid[i] = 0; break;
        case 4: rays[i].dir[1] = NAN, valid[i] = 0; break;
        case 5: rays[i].dir[0] = -INFINITY, valid[i] = 0; break;
        case 6: rays[i].tmin = -1, valid[i] = 0; break;
        case 7: rays[i].tmin = 3, rays[i].tmax = 2, valid[i] = 0; break;
        case 8: rays[i].tmax = NAN, valid[i] = 0; break;
        case 9: rays[i].tmin = NAN, valid[i] = 0; break;
        case 10: rays[i].tmax = 0.5f; break; /* valid, stops short */
        case 11: rays[i].dir[2] = -0x1p-127f, valid[i] = 0; break; /* a denormal: no direction left */
        default: break;
        }
    }
    for (uint32_t i = 64; i < many; i++) rays[i] = rays[i % 64];
    static const uint32_t sizes[] = {1, 2, 3, 7, 12, 64, many};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint32_t n = sizes[k];
        for (uint32_t f = 0; f < 4; f++) {
            uint32_t flags = (f & 1) | (f & 2 ? VL_QUERY_GROUP_BY_ORIGIN : 0u);
            int any_invalid = 0;
            for (uint32_t i = 0; i < n; i++) any_invalid |= !valid[i % 64];
            vl_status st = vl_bvh_raycast(bvh, rays, n, flags, hits, NULL);
            CHECK(st == (any_invalid ? VL_ERR_INVALID_QUERY : VL_OK), "batch %u status %s", n, vl_status_string(st));
            for (uint32_t i = 0; i < n; i++) {
                int expect_hit = valid[i % 64] && i % 64 % 12 != 10;
                CHECK((hits[i].prim != VL_NO_HIT) == expect_hit, "batch %u ray %u prim %u", n, i, hits[i].prim);
                if (!expect_hit) CHECK(hits[i].t == INFINITY, "miss t %g", hits[i].t);
                vl_status s1 = vl_bvh_raycast1(bvh, &rays[i], f & 1, &h);
                CHECK(s1 == (valid[i % 64] ? VL_OK : VL_ERR_INVALID_QUERY), "single status %d ray %u", (int)s1, i);
                CHECK(h.prim == hits[i].prim && (h.t == hits[i].t), "single and batched ray %u", i);
            }
        }
    }
    /* direction components below FLT_MIN count as parallel axes */
    vl_ray tiny = ray_at(0.5f, 0.25f, 2.0f, 1e-40f, -1e-40f, -1.0f);
    CHECK(vl_bvh_raycast1(bvh, &tiny, 0, &h) == VL_OK && h.prim != VL_NO_HIT && h.t == 2.0f, "denormal dir t %g", h.t);
    vl_bvh_destroy(bvh);
}

/* A batch whose scratch cannot be allocated is traced one ray at a time: the same answers. */
static void test_out_of_memory(void) {
    scene_mesh m;
    if (!scene_world(16, 8, 32, 3, &m)) return;
    test_alloc_hooks hooks;
    test_alloc_begin(&hooks);
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    if (bvh) {
        enum { most = VL_WALK_BATCH + 100 };
        vl_ray* rays = malloc(sizeof(vl_ray) * most);
        vl_hit* hits = malloc(sizeof(vl_hit) * most);
        vl_hit* want = malloc(sizeof(vl_hit) * most);
        scene_rays_random(&m, most, 5, rays);
        rays[7].dir[0] = NAN; /* an invalid ray among them */
        static const uint32_t sizes[] = {300, most}; /* walks, then ray streams */
        for (int k = 0; k < 2 && rays && hits && want; k++) {
            const uint32_t n = sizes[k];
            CHECK(vl_bvh_raycast(bvh, rays, n, 0, want, NULL) == VL_ERR_INVALID_QUERY, "raycast");
            hooks.budget = 0;
            size_t before = hooks.bytes;
            CHECK(vl_bvh_raycast(bvh, rays, n, 0, hits, NULL) == VL_ERR_INVALID_QUERY, "raycast without scratch");
            CHECK(hooks.bytes == before, "nothing held");
            for (uint32_t i = 0; i < n; i++)
                CHECK(hits[i].prim == want[i].prim && hits[i].t == want[i].t, "answer %u without scratch", i);
            hooks.budget = -1;
        }
        free(rays), free(hits), free(want);
        vl_bvh_destroy(bvh);
    }
    CHECK(hooks.bytes == 0, "%zu bytes leaked", hooks.bytes);
    test_alloc_end(&hooks);
    scene_free(&m);
}

/* vl_bvh_raycast on the caller's scratch: the same answers as vl_bvh_raycast whichever way a batch goes (walks,
 * streams, chunks grouped by origin), no allocation at all, and a clear error, nothing written, for a
 * scratch that is missing, misaligned or too small. */
static void test_caller_scratch(void) {
    scene_mesh m;
    if (!scene_world(24, 12, 64, 9, &m)) return;
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, NULL, &bvh, NULL) == VL_OK, "build");
    if (!bvh) {
        scene_free(&m);
        return;
    }
    CHECK(vl_bvh_raycast_scratch_size(NULL, 100, 0) == 0, "size for a NULL bvh");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 100, 4) == 0, "size for bad flags");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 7, 0) == 0, "size under 8 rays");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 8, 0) > 0, "size at 8 rays");
    CHECK(vl_bvh_raycast_scratch_size(bvh, 5000, VL_QUERY_ANY) >= vl_bvh_raycast_scratch_size(bvh, 500, VL_QUERY_ANY),
          "size grows with the batch");
    enum { n = VL_STREAM_CHUNK + 1 };
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* want = malloc(sizeof(vl_hit) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    const size_t most = vl_bvh_raycast_scratch_size(bvh, n, VL_QUERY_GROUP_BY_ORIGIN);
    char* block = aligned_alloc(VL_SCRATCH_ALIGNMENT, (most + 2 * VL_SCRATCH_ALIGNMENT) & ~(size_t)63);
    if (!rays || !want || !hits || !block) goto done;
    scene_rays_random(&m, n, 17, rays);
    rays[11].dir[1] = NAN; /* an invalid ray among them */
    test_alloc_hooks hooks;
    /* walks (100, 2500), streams (6000), two chunks (n), each also grouped by origin */
    static const uint32_t sizes[] = {3, 8, 100, 2500, 6000, n};
    for (int way = 0; way < 2; way++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            for (uint32_t f = 0; f < 2; f++) {
                const uint32_t count = sizes[k], flags = f | (way ? VL_QUERY_GROUP_BY_ORIGIN : 0u);
                const size_t need = vl_bvh_raycast_scratch_size(bvh, count, flags);
                const vl_status expect = count > 11 ? VL_ERR_INVALID_QUERY : VL_OK;
                CHECK(vl_bvh_raycast(bvh, rays, count, flags, want, NULL) == expect, "raycast %u", count);
                test_alloc_begin(&hooks);
                vl_status st = vl_bvh_raycast(bvh, rays, count, flags, hits, &(vl_exec){.scratch = need ? block : NULL, .scratch_bytes = need});
                test_alloc_end(&hooks);
                CHECK(st == expect, "way %d count %u flags %u: %s", way, count, flags, vl_status_string(st));
                CHECK(hooks.allocs == 0, "way %d count %u: %ld allocations", way, count, hooks.allocs);
                for (uint32_t i = 0; i < count; i++)
                    CHECK(hits[i].prim == want[i].prim && hits[i].t == want[i].t, "way %d count %u ray %u", way,
                          count, i);
                if (!need) continue;
                /* refused: nothing written */
                for (uint32_t i = 0; i < count; i++) hits[i].prim = 0xABCDu;
                void* bad[3] = {NULL, block + 16, block};
                size_t bytes[3] = {need, need, need - 1};
                for (int b = 0; b < 3; b++) {
                    st = vl_bvh_raycast(bvh, rays, count, flags, hits, &(vl_exec){.scratch = bad[b], .scratch_bytes = bytes[b]});
                    CHECK(st == VL_ERR_INVALID_ARGUMENT, "bad scratch %d: %s", b, vl_status_string(st));
                }
                uint32_t touched = 0;
                for (uint32_t i = 0; i < count; i++) touched += hits[i].prim != 0xABCDu;
                CHECK(touched == 0, "a refused call wrote %u hits", touched);
            }
        }
    }
    CHECK(vl_bvh_raycast(bvh, rays, 100, 4, hits, &(vl_exec){.scratch = block, .scratch_bytes = most}) == VL_ERR_INVALID_FLAGS, "bad flags");
    CHECK(vl_bvh_raycast(NULL, rays, 100, 0, hits, &(vl_exec){.scratch = block, .scratch_bytes = most}) == VL_ERR_INVALID_ARGUMENT, "NULL bvh");
    CHECK(vl_bvh_raycast(bvh, rays, 100, 0, NULL, &(vl_exec){.scratch = block, .scratch_bytes = most}) == VL_ERR_INVALID_ARGUMENT, "NULL hits");
done:
    free(rays), free(want), free(hits), free(block);
    vl_bvh_destroy(bvh);
    scene_free(&m);
}

/* The float triangle test against a double-precision reference, away from edges. */
static void test_triangle_reference(void) {
    test_rng rng = {99};
    uint32_t agree = 0, total = test_scaled(20000);
    for (uint32_t k = 0; k < total; k++) {
        float p[3][3], o[3], d[3];
        for (int i = 0; i < 3; i++)
            for (int a = 0; a < 3; a++) p[i][a] = test_float(&rng, -1, 1);
        for (int a = 0; a < 3; a++) o[a] = test_float(&rng, -3, 3), d[a] = test_float(&rng, -1, 1);
        vl_bvh_tri tri;
        vl_bvh_tri_setup(&tri, p[0], p[1], p[2], 0);
        /* double Cramer */
        double e1[3], e2[3], c[3], r[3], n[3];
        for (int a = 0; a < 3; a++)
            e1[a] = (double)p[1][a] - p[0][a], e2[a] = (double)p[2][a] - p[0][a], c[a] = (double)p[0][a] - o[a];
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        r[0] = d[1] * c[2] - d[2] * c[1], r[1] = d[2] * c[0] - d[0] * c[2], r[2] = d[0] * c[1] - d[1] * c[0];
        double det = n[0] * d[0] + n[1] * d[1] + n[2] * d[2];
        if (fabs(det) < 1e-3) continue;
        double t = (n[0] * c[0] + n[1] * c[1] + n[2] * c[2]) / det;
        double u = -(r[0] * e2[0] + r[1] * e2[1] + r[2] * e2[2]) / det;
        double v = (r[0] * e1[0] + r[1] * e1[1] + r[2] * e1[2]) / det;
        int inside = u > 1e-4 && v > 1e-4 && u + v < 1 - 1e-4 && t > 1e-4;
        int outside = u < -1e-4 || v < -1e-4 || u + v > 1 + 1e-4 || t < -1e-4;
        float ft = 0, fu = 0, fv = 0;
        int hit = vl_bvh_ray_triangle(o, d, 0.0f, INFINITY, &tri, &ft, &fu, &fv);
        if (inside) {
            CHECK(hit && fabs(ft - t) < 1e-4 * (1 + fabs(t)) && fabs(fu - u) < 1e-4 && fabs(fv - v) < 1e-4,
                  "case %u: hit %d t %g/%g u %g/%g v %g/%g", k, hit, ft, t, fu, u, fv, v);
            agree++;
        } else if (outside) {
            CHECK(!hit, "case %u: false hit", k);
            agree++;
        }
    }
    CHECK(agree > total / 2, "too few decisive cases: %u", agree);
}

/* A ray in a triangle's plane, or grazing it within about 2^-20 rad, misses: Cramer's rule there
 * cancelled to a "hit" at the ray's origin, far outside the triangle and its node boxes (found by
 * the fuzzer: the primitive test, so brute force, hit; the traversals culled). A steep ray hits. */
static void test_grazing_rays(void) {
    const float xyz[9] = {-1, -1, -1, -1, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f}; /* in the plane y = z */
    const uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "grazing: build");
    const vl_ray rays[3] = {
        {{-8, -8, -8}, 0.0f, {1.5f, 1e-30f, 0.0f}, INFINITY}, /* in the plane, 1e-30 off it */
        {{-8, -8, -8}, 0.0f, {1.0f, 1e-7f, 0.0f}, INFINITY},  /* 1e-7 rad off it */
        {{1.0f / 6, 19.0f / 3, -11.0f / 3}, 0.0f, {0.0f, -1.0f, 1.0f}, INFINITY}, /* steep, to the centroid */
    };
    vl_bvh_tri tri;
    vl_bvh_tri_setup(&tri, xyz, xyz + 3, xyz + 6, 0);
    vl_hit batch[3], single;
    CHECK(vl_bvh_raycast(bvh, rays, 3, 0, batch, NULL) == VL_OK, "grazing: raycast");
    for (int i = 0; i < 3; i++) {
        float t, u, v;
        int hit = vl_bvh_ray_triangle(rays[i].origin, rays[i].dir, 0.0f, FLT_MAX, &tri, &t, &u, &v);
        CHECK(hit == (i == 2), "grazing: primitive test of ray %d: hit %d", i, hit);
        CHECK(vl_bvh_raycast1(bvh, &rays[i], 0, &single) == VL_OK, "grazing: raycast1");
        if (i < 2) {
            CHECK(batch[i].prim == VL_NO_HIT && single.prim == VL_NO_HIT, "grazing ray %d hit", i);
        } else {
            CHECK(batch[i].prim == 0 && single.prim == 0 && fabsf(single.t - 5.0f) < 1e-5f && batch[i].t == single.t,
                  "steep ray: prim %u t %g", single.prim, single.t);
        }
    }
    vl_bvh_destroy(bvh);
}

/* One triangle with legs about L around a centre, seen from `dist` away along a random direction,
 * the ray's direction of length s aimed at the centre: hit by raycast1 and by batches of 64 and
 * 5000 copies (the walk and stream paths), at the right t. */
static void check_triangle(test_rng* r, double L, double dist, double s, int tilted, const char* what) {
    double c[3] = {test_float(r, -1, 1) * L, test_float(r, -1, 1) * L, test_float(r, -1, 1) * L};
    double e1[3] = {L, 0, 0}, e2[3] = {0, L, 0}, n[3] = {0, 0, 1};
    if (tilted) { /* a random well-shaped triangle: legs near L, angles far from 0 */
        double a = test_float(r, 0, 6.2831853f), b = test_float(r, 0.3f, 1.2f);
        double u[3] = {cos(a) * cos(b), sin(a) * cos(b), sin(b)};
        double v[3] = {-sin(a), cos(a), 0};
        for (int k = 0; k < 3; k++) e1[k] = L * u[k], e2[k] = L * (0.3 * u[k] + 0.9 * v[k]);
        n[0] = u[1] * v[2] - u[2] * v[1], n[1] = u[2] * v[0] - u[0] * v[2], n[2] = u[0] * v[1] - u[1] * v[0];
    }
    float xyz[9];
    for (int k = 0; k < 3; k++) {
        xyz[k] = (float)c[k];
        xyz[3 + k] = (float)(c[k] + e1[k]);
        xyz[6 + k] = (float)(c[k] + e2[k]);
    }
    /* the target: inside the triangle, away from its edges */
    double p[3], dirv[3], off[3];
    for (int k = 0; k < 3; k++) p[k] = xyz[k] + 0.3 * (xyz[3 + k] - xyz[k]) + 0.3 * (xyz[6 + k] - xyz[k]);
    /* the origin: `dist` away from the target, leaning towards the normal */
    double len = 0;
    for (int k = 0; k < 3; k++) off[k] = n[k] + 0.5 * test_float(r, -1, 1), len += off[k] * off[k];
    len = sqrt(len);
    vl_ray ray;
    for (int k = 0; k < 3; k++) {
        ray.origin[k] = (float)(p[k] + off[k] / len * dist);
        dirv[k] = p[k] - ray.origin[k];
    }
    double dl = sqrt(dirv[0] * dirv[0] + dirv[1] * dirv[1] + dirv[2] * dirv[2]);
    for (int k = 0; k < 3; k++) ray.dir[k] = (float)(dirv[k] / dl * s);
    ray.tmin = 0;
    ray.tmax = INFINITY;
    double t_want = dl / s;
    /* the case is inside the documented range */
    double D = 0, Lmax = 0;
    for (int v = 0; v < 3; v++) {
        double dv = 0, ev = 0;
        for (int k = 0; k < 3; k++) {
            double x = xyz[3 * v + k] - ray.origin[k], y = xyz[3 * ((v + 1) % 3) + k] - xyz[3 * v + k];
            dv += x * x, ev += y * y;
        }
        D = fmax(D, sqrt(dv)), Lmax = fmax(Lmax, sqrt(ev));
    }
    double l2d = Lmax * Lmax * D, l2s = Lmax * Lmax * s, lds = Lmax * D * s;
    CHECK(l2d <= 0x1p120 && l2s <= 0x1p120 && lds <= 0x1p120 && l2d >= 0x1p-100 && l2s >= 0x1p-100 &&
              lds >= 0x1p-100,
          "%s: outside the range: L^2 D 2^%.1f, L^2 s 2^%.1f, L D s 2^%.1f", what, log2(l2d), log2(l2s), log2(lds));
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "%s: build", what);
    if (!bvh) return;
    vl_hit one;
    CHECK(vl_bvh_raycast1(bvh, &ray, VL_QUERY_CLOSEST, &one) == VL_OK && one.prim == 0, "%s: raycast1 missed", what);
    CHECK(one.prim != 0 || fabs(one.t - t_want) <= 1e-3 * t_want, "%s: t %g, expected %g", what, one.t, t_want);
    static vl_ray rays[5000];
    static vl_hit hits[5000];
    for (int k = 0; k < 5000; k++) rays[k] = ray;
    static const uint32_t sizes[2] = {64, 5000};
    for (int z = 0; z < 2; z++)
        for (uint32_t flags = 0; flags < 2; flags++) {
            CHECK(vl_bvh_raycast(bvh, rays, sizes[z], flags, hits, NULL) == VL_OK, "%s: batch", what);
            int all = 1;
            for (uint32_t k = 0; k < sizes[z]; k++) all &= hits[k].prim == 0;
            CHECK(all, "%s: batch of %u (flags %u) missed", what, sizes[z], flags);
        }
    vl_bvh_destroy(bvh);
}

/* The documented range: L^2 D, L^2 s and L D s between 2^-100 and 2^120 (L the longest edge, D
 * the largest distance from the origin to a vertex, s = |dir|). The cases sit near its edges (the
 * test checks that each is inside). A triangle is aimed at from at most 2^18 L away: farther,
 * a float direction cannot aim at it. */
static void test_triangle_range(void) {
    static const struct {
        double l, dist, s; /* powers of two */
        const char* what;
    } cases[] = {
        {39.1, 39.1, 0, "L^2 D near 2^120"},   {20, 20, 78.8, "L D s near 2^120"},
        {20, 17, 78.4, "L^2 s near 2^120"},    {-38.9, -21, -22, "L^2 s and L^2 D near 2^-100"},
        {0, 0, 0, "unit"},                     {-10, 8, 0, "small triangle far away"},
        {30, 30, -60, "large triangle, short direction"},
    };
    test_rng r = {17};
    for (unsigned k = 0; k < sizeof cases / sizeof *cases; k++)
        for (int tilted = 0; tilted < 2; tilted++)
            for (int round = 0; round < 3; round++) {
                char what[96];
                snprintf(what, sizeof what, "%s%s #%d", cases[k].what, tilted ? ", tilted" : "", round);
                check_triangle(&r, exp2(cases[k].l), exp2(cases[k].dist), exp2(cases[k].s), tilted, what);
            }
}

/* The first problem in the documented order decides a raycast's status. */
static void test_status_order(void) {
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint32_t idx[3] = {0, 1, 2};
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3, idx, 1, NULL, &bvh, NULL) == VL_OK, "build");
    /* raycasts: NULL, then flags (nothing written), then the rays */
    vl_ray rays[16];
    vl_hit hits[16];
    for (int k = 0; k < 16; k++) rays[k] = (vl_ray){{0.2f, 0.2f, -1}, 0, {0, 0, 1}, INFINITY};
    rays[3].dir[2] = 0;    /* zero direction */
    rays[7].origin[0] = NAN;
    rays[9].tmin = 5, rays[9].tmax = 1; /* tmin > tmax */
    for (uint32_t n = 4; n <= 16; n += 12) { /* the one-ray path and the batch */
        CHECK(vl_bvh_raycast(bvh, rays, n, 0x80, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "NULL before flags");
        memset(hits, 0x5A, sizeof hits);
        CHECK(vl_bvh_raycast(bvh, rays, n, 0x80, hits, NULL) == VL_ERR_INVALID_FLAGS, "flags before rays");
        CHECK(hits[0].prim == 0x5A5A5A5Au, "flags error wrote answers");
        CHECK(vl_bvh_raycast(bvh, rays, n, 0, hits, NULL) == VL_ERR_INVALID_QUERY, "invalid rays");
        for (uint32_t k = 0; k < n; k++) {
            int bad = k == 3 || k == 7 || k == 9;
            CHECK(bad ? hits[k].prim == VL_NO_HIT : hits[k].prim == 0, "ray %u of %u answered wrong", k, n);
        }
    }
    /* scratch: after the flags, before the rays */
    size_t bytes = vl_bvh_raycast_scratch_size(bvh, 16, 0);
    CHECK(bytes > 0, "scratch size");
    memset(hits, 0x5A, sizeof hits);
    CHECK(vl_bvh_raycast(bvh, rays, 16, 0x80, hits, &(vl_exec){.scratch = NULL, .scratch_bytes = 0}) == VL_ERR_INVALID_FLAGS, "flags before scratch");
    CHECK(vl_bvh_raycast(bvh, rays, 16, 0, hits, &(vl_exec){.scratch = NULL, .scratch_bytes = bytes}) == VL_ERR_INVALID_ARGUMENT &&
              hits[0].prim == 0x5A5A5A5Au,
          "scratch before rays, nothing written");
    vl_bvh_destroy(bvh);
}

/* Any hit: the batch and the one-ray path agree on whether each ray hits. */
static void test_any_hit_agrees(void) {
    enum { T = 400, R = 3000 };
    static float xyz[9 * T];
    static uint32_t idx[3 * T];
    test_rng r = {23};
    for (int t = 0; t < T; t++) {
        float c[3] = {test_float(&r, -10, 10), test_float(&r, -10, 10), test_float(&r, -10, 10)};
        for (int v = 0; v < 3; v++)
            for (int k = 0; k < 3; k++) xyz[9 * t + 3 * v + k] = c[k] + test_float(&r, -1, 1);
        for (int v = 0; v < 3; v++) idx[3 * t + v] = (uint32_t)(3 * t + v);
    }
    vl_bvh* bvh = NULL;
    CHECK(vl_bvh_build_triangles(xyz, 3 * T, idx, T, NULL, &bvh, NULL) == VL_OK, "build");
    static vl_ray rays[R];
    static vl_hit hits[R];
    for (int i = 0; i < R; i++) {
        for (int k = 0; k < 3; k++) rays[i].origin[k] = test_float(&r, -12, 12);
        for (int k = 0; k < 3; k++) rays[i].dir[k] = test_float(&r, -1, 1);
        rays[i].tmin = 0;
        rays[i].tmax = test_float(&r, 1, 30);
    }
    CHECK(vl_bvh_raycast(bvh, rays, R, VL_QUERY_ANY, hits, NULL) == VL_OK, "batch");
    int hit_count = 0;
    for (int i = 0; i < R; i++) {
        vl_hit one;
        vl_bvh_raycast1(bvh, &rays[i], VL_QUERY_ANY, &one);
        CHECK((one.prim == VL_NO_HIT) == (hits[i].prim == VL_NO_HIT), "ray %d: any hit disagrees", i);
        hit_count += one.prim != VL_NO_HIT;
    }
    CHECK(hit_count > 100, "only %d hits", hit_count);
    vl_bvh_destroy(bvh);
}

int main(void) {
    CHECK(vl_get_bytes_in_use() == 0, "bytes in use at start");
    test_query_errors();
    test_status_order();
    test_out_of_memory();
    test_caller_scratch();
    test_triangle_reference();
    test_grazing_rays();
    test_triangle_range();
    test_any_hit_agrees();
    CHECK(vl_get_bytes_in_use() == 0, "bytes in use at the end: %zu", vl_get_bytes_in_use());
    return test_finish("test_rays_api");
}
