/* Raycasts far from the origin against a double-precision brute force: triangle soups, the
 * procedural world, the real meshes and box trees, each at every offset of scenes.h (0, +-2^10,
 * +-2^13, +-2^17), through every path a ray takes (a batch of walks, a batch of ray streams,
 * on scratch and on a context, vl_bvh_raycast1), closest hit and any hit.
 *
 * The oracle intersects the same float rays with the same float triangles (or boxes) in double.
 * Its band is relative to the query, never to the distance from the origin: with L the
 * triangle's longest edge, s = |dir| and cos the cosine between the ray and the triangle's
 * normal, a hit position may be off by tau = 2^-17 (s t + L) / cos (t by tau / s). A triangle is
 * a sure hit when the point lies inside it by more than tau from every edge and t lies inside
 * [tmin, tmax] by more than tau / s; a sure miss when the point lies outside an edge by more than
 * tau plus the barycentric tolerance, or t outside [tmin, tmax] by more than tau / s (or the
 * triangle has zero area); otherwise either answer is right. Rays within 2^-17 rad of a
 * triangle's plane and slivers are never sure hits. A box's entry and exit t carry 2^-20 of
 * themselves. Every answer must then be a hit exactly when the ray has some sure hit or reports
 * one that is not a sure miss, at that primitive's t (within its band); a closest hit no later
 * than any sure hit's t. */
#include <float.h>

#include "bvh/rays/ray_tests.h"
#include "scenes.h"
#include "test_util.h"

#ifndef FAR_TAU
#define FAR_TAU 0x1p-17 /* the band's factor (tau above) */
#endif

enum { SURE_MISS = -1, EITHER = 0, SURE_HIT = 1 };

typedef struct far_scene {
    const scene_mesh* mesh; /* triangles, or NULL for boxes */
    const vl_aabb* boxes;
    uint32_t count;
} far_scene;

typedef struct far_ref {
    int cls;
    double t, tol; /* the primitive's t and its band, in t */
} far_ref;

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double a[3], const double b[3], double c[3]) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* t in [tmin, tmax] with a band: SURE_HIT inside by more than tol, SURE_MISS outside by more. */
static int t_class(double t, double tol, double tmin, double tmax) {
    if (t < tmin - tol || t > tmax + tol) return SURE_MISS;
    return (t >= tmin + tol && t <= tmax - tol) ? SURE_HIT : EITHER;
}

static far_ref ref_triangle(const scene_mesh* m, uint32_t prim, const vl_ray* r, const double d[3], double tmax) {
    far_ref f = {SURE_MISS, INFINITY, 0};
    const uint32_t* ix = m->indices + 3 * (size_t)prim;
    double p[3][3], e1[3], e2[3], e3[3], n[3], c[3], dxe1[3], dxe2[3];
    for (int k = 0; k < 3; k++)
        for (int a = 0; a < 3; a++) p[k][a] = m->xyz[3 * (size_t)ix[k] + a];
    for (int a = 0; a < 3; a++)
        e1[a] = p[1][a] - p[0][a], e2[a] = p[2][a] - p[0][a], e3[a] = p[2][a] - p[1][a], c[a] = p[0][a] - r->origin[a];
    cross3(e1, e2, n);
    double nl = sqrt(dot3(n, n)), l1 = sqrt(dot3(e1, e1)), l2 = sqrt(dot3(e2, e2)), l3 = sqrt(dot3(e3, e3));
    double s = sqrt(dot3(d, d)), det = dot3(d, n);
    if (nl == 0 || det == 0) return f;
    double cosv = fabs(det) / (s * nl);
    f.t = dot3(c, n) / det;
    cross3(d, e2, dxe2);
    cross3(d, e1, dxe1);
    double u = dot3(c, dxe2) / det, v = -dot3(c, dxe1) / det, w = 1 - u - v;
    double L = fmax(l1, fmax(l2, l3));
    double tau = FAR_TAU * (s * fabs(f.t) + L) / fmax(cosv, 0x1p-21);
    f.tol = tau / s;
    /* distances from the point to the lines of the edges (positive inside), and the band there */
    double du = u * nl / l2, dv = v * nl / l1, dw = w * nl / l3;
    double eps = VL_BVH_TRIANGLE_EPSILON;
    if (du < -eps * nl / l2 - tau || dv < -eps * nl / l1 - tau || dw < -eps * nl / l3 - tau) return f;
    int tc = t_class(f.t, f.tol, r->tmin, tmax);
    if (tc == SURE_MISS) return f;
    int sliver = nl < 0x1p-19 * l1 * l2 || cosv < 0x1p-17;
    f.cls = (tc == SURE_HIT && du >= tau && dv >= tau && dw >= tau && !sliver) ? SURE_HIT : EITHER;
    return f;
}

static far_ref ref_box(const vl_aabb* b, const vl_ray* r, const double d[3], double tmax) {
    far_ref f = {SURE_MISS, INFINITY, 0};
    double tn = r->tmin, tf = tmax;
    for (int a = 0; a < 3; a++) {
        double o = r->origin[a], lo = b->min[a], hi = b->max[a];
        if (d[a] == 0) {
            if (o < lo || o > hi) return f;
            continue;
        }
        double t1 = (lo - o) / d[a], t2 = (hi - o) / d[a];
        tn = fmax(tn, fmin(t1, t2));
        tf = fmin(tf, fmax(t1, t2));
    }
    double tol_n = 0x1p-20 * fabs(tn), tol_f = isfinite(tf) ? 0x1p-20 * fabs(tf) : 0;
    if (tn - tol_n > tf + tol_f) return f;
    f.t = tn, f.tol = tol_n;
    f.cls = tn + tol_n < tf - tol_f ? SURE_HIT : EITHER;
    return f;
}

static far_ref ref_prim(const far_scene* s, uint32_t prim, const vl_ray* r) {
    float df[3];
    vl_bvh_ray_dir(r, df);
    double d[3] = {df[0], df[1], df[2]};
    double tmax = r->tmax < FLT_MAX ? r->tmax : FLT_MAX;
    return s->mesh ? ref_triangle(s->mesh, prim, r, d, tmax) : ref_box(&s->boxes[prim], r, d, tmax);
}

typedef struct far_tally {
    unsigned long long rays, answers, sure_hits, either, failures;
} far_tally;

static far_tally g_tally;

/* One answer against the oracle; sure_t: the earliest sure hit's t plus its band (INFINITY when
 * none). Returns 1 when right. */
static int answer_ok(const far_scene* s, const vl_ray* r, vl_hit h, int closest, double sure_t, const char** why) {
    if (h.prim == VL_NO_HIT) {
        *why = "a miss where some primitive is a sure hit";
        return sure_t == INFINITY && h.t == INFINITY;
    }
    *why = "a primitive past the scene";
    if (h.prim >= s->count) return 0;
    far_ref f = ref_prim(s, h.prim, r);
    *why = "a sure miss reported";
    if (f.cls == SURE_MISS) return 0;
    *why = "t outside [tmin, tmax]";
    if (!(h.t >= r->tmin && h.t <= r->tmax) || !isfinite(h.t)) return 0;
    *why = "t off the primitive's t by more than its band";
    if (fabs(h.t - f.t) > f.tol) return 0;
    *why = "a closest hit later than a sure hit";
    return !closest || h.t <= sure_t + f.tol;
}

#define FAR_PATHS 5
static const char* const k_paths[FAR_PATHS] = {"walks", "streams", "scratch", "parallel", "single"};

/* Every path of every ray, closest and any hit, against the oracle. The stream, scratch and
 * parallel batches repeat the rays up to 8192 (4096 in reduced runs), so that they run as ray
 * streams on trees of fewer leaves than that (every scene here but the bunny, 13.8K leaves, whose
 * batches go as walks). */
static void check_far(const vl_bvh* bvh, const far_scene* s, const vl_ray* rays, uint32_t n, const char* what) {
    const uint32_t tile = test_scaled(10) >= 10 ? 8192 : 4096, big = n < tile ? tile : n;
    vl_ray* tiled = malloc(sizeof(vl_ray) * big);
    for (uint32_t i = 0; i < big; i++) tiled[i] = rays[i % n];
    vl_hit* hits[2][FAR_PATHS];
    vl_context* ctx = NULL;
    CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    for (uint32_t f = 0; f < 2; f++) {
        for (int p = 0; p < FAR_PATHS; p++) hits[f][p] = malloc(sizeof(vl_hit) * big);
        vl_status st = vl_bvh_raycast(bvh, rays, n, f, hits[f][0], NULL);
        CHECK(st == VL_OK, "%s: walks status %d", what, (int)st);
        st = vl_bvh_raycast(bvh, tiled, big, f, hits[f][1], NULL);
        CHECK(st == VL_OK, "%s: streams status %d", what, (int)st);
        size_t bytes = vl_bvh_raycast_scratch_size(bvh, big, f);
        void* scratch = aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) & ~(size_t)63);
        st = vl_bvh_raycast(bvh, tiled, big, f, hits[f][2], &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
        CHECK(st == VL_OK, "%s: scratch status %d", what, (int)st);
        free(scratch);
        st = vl_bvh_raycast(bvh, tiled, big, f, hits[f][3], &(vl_exec){.context = ctx});
        CHECK(st == VL_OK, "%s: parallel status %d", what, (int)st);
        for (uint32_t i = 0; i < n; i++) vl_bvh_raycast1(bvh, &rays[i], f, &hits[f][4][i]);
    }
    vl_context_destroy(ctx);
    unsigned fails = 0;
    for (uint32_t i = 0; i < n; i++) {
        const vl_ray* r = &rays[i];
        double sure_t = INFINITY;
        for (uint32_t k = 0; k < s->count; k++) {
            far_ref f = ref_prim(s, k, r);
            if (f.cls == SURE_HIT) sure_t = fmin(sure_t, f.t + f.tol), g_tally.sure_hits++;
            if (f.cls == EITHER) g_tally.either++;
        }
        g_tally.rays++;
        for (uint32_t f = 0; f < 2; f++)
            for (int p = 0; p < FAR_PATHS; p++) {
                /* the tiled batches answer each ray at every copy; the last copy is checked */
                uint32_t at = (p == 1 || p == 2 || p == 3) ? i + (big - 1 - i) / n * n : i;
                vl_hit h = hits[f][p][at];
                const char* why = "";
                g_tally.answers++;
                if (!answer_ok(s, r, h, f == 0, sure_t, &why)) {
                    g_tally.failures++;
                    if (fails++ < 5) {
                        far_ref fr = h.prim < s->count ? ref_prim(s, h.prim, r) : (far_ref){0, 0, 0};
                        CHECK(0, "%s ray %u (%s, %s): %s: prim %u t %.9g (oracle class %d t %.9g band %.3g), sure t %.9g",
                              what, i, k_paths[p], f ? "any" : "closest", why, h.prim, h.t, fr.cls, fr.t, fr.tol,
                              sure_t);
                    }
                } else {
                    g_test_passed++;
                }
            }
    }
    if (fails > 5) CHECK(0, "%s: %u more wrong answers", what, fails - 5);
    for (uint32_t f = 0; f < 2; f++)
        for (int p = 0; p < FAR_PATHS; p++) free(hits[f][p]);
    free(tiled);
}

/* Rays aimed at points just inside and just outside a triangle's edges and vertices (barycentric
 * offsets of +-2^-22 to +-2^-12), from a random point up to a third of the scene's extent away. */
static void rays_near_edges(const scene_mesh* m, uint32_t n, test_rng* rng, vl_ray* rays) {
    float extent = 0;
    for (int a = 0; a < 3; a++) extent = fmaxf(extent, m->hi[a] - m->lo[a]);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t* t = m->indices + 3 * (size_t)test_u32(rng, m->triangle_count);
        double p[3][3];
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++) p[k][a] = m->xyz[3 * (size_t)t[k] + a];
        double off = ldexp(test_float(rng, -1, 1), -12 - (int)test_u32(rng, 11));
        double u, v;
        switch (i % 4) {
        case 0: u = off, v = test_float(rng, 0, 1) * (1 - off); break; /* edge v0 v2 */
        case 1: u = test_float(rng, 0, 1) * (1 - off), v = off; break; /* edge v0 v1 */
        case 2: u = test_float(rng, 0, 1), v = 1 - u - off; break; /* edge v1 v2 */
        default: u = off, v = -off * test_float(rng, 0, 1); break; /* vertex v0 */
        }
        double target[3], dir[3];
        float d[3];
        scene_direction(rng, d);
        float dist = extent * test_float(rng, 0.01f, 0.33f);
        vl_ray* r = &rays[i];
        for (int a = 0; a < 3; a++) {
            target[a] = p[0][a] + u * (p[1][a] - p[0][a]) + v * (p[2][a] - p[0][a]);
            r->origin[a] = (float)(target[a] + dist * d[a]);
            dir[a] = target[a] - r->origin[a];
        }
        for (int a = 0; a < 3; a++) r->dir[a] = (float)dir[a];
        if (r->dir[0] == 0 && r->dir[1] == 0 && r->dir[2] == 0) r->dir[1] = 1;
        r->tmin = 0;
        r->tmax = (i & 8) ? 2.0f : INFINITY;
    }
}

/* The ray sets of one mesh at one offset (the mesh already moved). */
static void check_mesh_far(const scene_mesh* m, uint32_t n, uint64_t seed, const char* name) {
    vl_bvh* bvh = NULL;
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &bvh, NULL);
    CHECK(st == VL_OK, "%s: build: %s", name, vl_status_string(st));
    if (st != VL_OK) return;
    far_scene s = {m, NULL, m->triangle_count};
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    test_rng rng = {seed};
    char what[160];
    float extent = 0;
    for (int a = 0; a < 3; a++) extent = fmaxf(extent, m->hi[a] - m->lo[a]);

    scene_rays_random(m, n, seed, rays);
    for (uint32_t i = 0; i < n; i += 2) { /* half of them finite, tmin > 0 */
        rays[i].tmin = test_float(&rng, 0, 0.2f * extent);
        rays[i].tmax = rays[i].tmin + test_float(&rng, 0, extent);
    }
    snprintf(what, sizeof what, "%s random", name);
    check_far(bvh, &s, rays, n, what);

    rays_near_edges(m, n, &rng, rays);
    snprintf(what, sizeof what, "%s near edges", name);
    check_far(bvh, &s, rays, n, what);

    scene_rays_axis(m, n, &rng, 1, rays);
    snprintf(what, sizeof what, "%s axis-aligned", name);
    check_far(bvh, &s, rays, n, what);

    if (m->agent_count) {
        scene_rays_los(m, n, seed + 1, rays);
        snprintf(what, sizeof what, "%s line of sight", name);
        check_far(bvh, &s, rays, n, what);
    }
    scene_rays_diffuse(m, n, seed + 2, rays);
    snprintf(what, sizeof what, "%s diffuse", name);
    check_far(bvh, &s, rays, n, what);

    free(rays);
    vl_bvh_destroy(bvh);
}

/* A mesh at every offset: a fresh copy moved each time. */
static void mesh_at_offsets(const scene_mesh* m, uint32_t n, uint64_t seed, const char* name) {
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        scene_mesh c;
        if (!scene_copy_moved(m, k, &c)) continue;
        char what[96];
        snprintf(what, sizeof what, "%s at %g", name, scene_offset(k));
        check_mesh_far(&c, n, seed + k, what);
        scene_free(&c);
    }
}

static void test_meshes(void) {
    scene_mesh m;
    if (scene_soup(test_scaled(600), 10.0f, 0.6f, 3, &m)) mesh_at_offsets(&m, test_scaled(300), 5, "soup");
    scene_free(&m);
    if (scene_soup(test_scaled(300), 1.0f, 0.02f, 4, &m)) mesh_at_offsets(&m, test_scaled(200), 6, "fine soup");
    scene_free(&m);
    uint32_t grid = test_scaled(24) < 8 ? 8 : test_scaled(24);
    if (scene_world(grid, grid / 2, 64, 9, &m)) mesh_at_offsets(&m, test_scaled(300), 10, "world");
    scene_free(&m);
    static const char* files[] = {"bunny00.off", "camel.off"};
    for (int f = 0; f < 2; f++) {
        if (!scene_load_test_mesh("test_rays_far", files[f], &m)) continue;
        scene_agents_in_bounds(&m, 64, 12);
        mesh_at_offsets(&m, test_scaled(f ? 40 : 16), 13 + f, files[f]);
        scene_free(&m);
    }
}

/* Box trees at every offset: random boxes (some flat), an infinite slab, rays from inside boxes,
 * along their faces, from anywhere. */
static void test_boxes(uint32_t nboxes, uint32_t n, uint64_t seed) {
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        test_rng rng = {seed};
        vl_aabb* boxes = malloc(sizeof(vl_aabb) * (nboxes + 1));
        for (uint32_t i = 0; i < nboxes; i++)
            for (int a = 0; a < 3; a++) {
                float c = test_float(&rng, 0, 100), h = test_float(&rng, 0, 4);
                boxes[i].min[a] = c - h;
                boxes[i].max[a] = (i % 17 == 0) ? c - h : c + h;
            }
        for (int a = 0; a < 3; a++) boxes[nboxes].min[a] = -INFINITY, boxes[nboxes].max[a] = INFINITY;
        boxes[nboxes].min[1] = -20.0f, boxes[nboxes].max[1] = -10.0f;
        float o = scene_offset(k), v[3];
        scene_offset_vector(o, v);
        scene_move_boxes(boxes, nboxes + 1, o);
        vl_bvh* bvh = NULL;
        CHECK(vl_bvh_build_boxes(boxes, nboxes + 1, NULL, &bvh, NULL) == VL_OK, "build boxes");
        far_scene s = {NULL, boxes, nboxes + 1};
        vl_ray* rays = malloc(sizeof(vl_ray) * n);
        for (uint32_t i = 0; i < n; i++) {
            vl_ray* r = &rays[i];
            const vl_aabb* b = &boxes[test_u32(&rng, nboxes)];
            switch (i % 4) {
            case 0:
                for (int a = 0; a < 3; a++) r->origin[a] = (b->min[a] + b->max[a]) * 0.5f;
                scene_direction(&rng, r->dir);
                break;
            case 1: /* in a face's plane, axis-aligned */
                for (int a = 0; a < 3; a++) r->origin[a] = test_float(&rng, -10, 110) + v[a], r->dir[a] = 0;
                r->origin[i % 3] = b->min[i % 3];
                r->dir[(i + 1) % 3] = (i & 8) ? 1.0f : -1.0f;
                break;
            case 2: /* at a corner */
                for (int a = 0; a < 3; a++) r->origin[a] = test_float(&rng, -20, 120) + v[a];
                for (int a = 0; a < 3; a++) r->dir[a] = ((i & 16) ? b->max[a] : b->min[a]) - r->origin[a];
                break;
            default:
                for (int a = 0; a < 3; a++) r->origin[a] = test_float(&rng, -20, 120) + v[a];
                scene_direction(&rng, r->dir);
                break;
            }
            r->tmin = (i % 5 == 0) ? test_float(&rng, 0, 5) : 0.0f;
            r->tmax = (i % 3 == 0) ? r->tmin + test_float(&rng, 0, 60) : INFINITY;
        }
        char what[64];
        snprintf(what, sizeof what, "boxes at %g", o);
        if (bvh) check_far(bvh, &s, rays, n, what);
        free(rays);
        vl_bvh_destroy(bvh);
        free(boxes);
    }
}

int main(void) {
    test_meshes();
    test_boxes(test_scaled(500), test_scaled(400), 31);
    printf("test_rays_far: %llu rays, %llu answers (%llu sure hits, %llu either-way primitives), %llu wrong\n",
           g_tally.rays, g_tally.answers, g_tally.sure_hits, g_tally.either, g_tally.failures);
    return test_finish("test_rays_far");
}
