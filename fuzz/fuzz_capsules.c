/* Fuzzes the capsule overlaps and sweeps: a byte stream becomes a small scene of triangles (from a
 * pool of vertices on a coarse grid: shared vertices, coplanar faces, zero-area triangles) or
 * boxes (flat and infinite ones), then batches of capsules (of zero length, of zero radius, lying
 * on the grid's faces and edges, with special and invalid values) overlapped and swept through it.
 * Overlaps: the batch (plain, on caller scratch, on a context), single queries and a brute force
 * over every primitive with the library's exact test (the segment's distance to the tree's
 * triangle or box, in double, within the reach of bvh.h) must be the same pair sets, so that only
 * the culling and the float kernel are on trial here (the exact test meets an independent oracle in
 * tests/test_overlaps_capsules.c); zero-length capsules must give the sphere queries' pairs.
 * Sweeps: every answer (batched, plain and on scratch, with contacts, and single) against a brute
 * force with the library's exact tests: a hit exactly when one is there, t never later than its
 * primitive's first contact, a closest hit at the first contact, unit normals facing against the
 * sweep; a miss and VL_ERR_INVALID_QUERY for invalid capsules; no leak. Every input runs twice:
 * where its bytes put it, and moved far from the origin (fuzz_far_offset). */
#include <float.h>

#include <volley/volley.h>

#include "bvh/engine/segment_dist.h"
#include "bvh/sweeps/sweep.h"
#include "fuzz_util.h"
#include "overlap_oracle.h"

#define MAX_PRIMS 32
#define MAX_VERTS 24
#define MAX_CAPSULES 24
#define RANGE 1073741824.0f /* 2^30: the brute force's comparisons of overlaps run within it */

/* The offset of this run, added to every coordinate the bytes give. */
static float g_off[3];

typedef struct scene {
    int boxes, in_range;
    uint32_t count, nv;
    float xyz[MAX_VERTS * 3];
    uint32_t idx[MAX_PRIMS * 3];
    vl_aabb box[MAX_PRIMS];
} scene;

static vl_bvh* build_scene(fuzz_input* in, scene* s) {
    vl_bvh_desc desc = fuzz_bvh_head(in, MAX_PRIMS, &s->boxes, &s->count);
    vl_bvh* bvh = NULL;
    s->in_range = 1;
    if (s->boxes) {
        for (uint32_t i = 0; i < s->count; i++)
            for (int a = 0; a < 3; a++) {
                float lo = fuzz_coord(in), size = fabsf(fuzz_coord(in));
                if (isnan(lo) || isnan(size)) lo = 0.0f, size = 1.0f;
                lo += g_off[a];
                s->box[i].min[a] = lo, s->box[i].max[a] = isnan(lo + size) ? INFINITY : lo + size;
                s->in_range &= (isinf(lo) || fabsf(lo) <= RANGE) && (isinf(lo + size) || fabsf(lo + size) <= RANGE);
            }
        FUZZ_CHECK(vl_bvh_build_boxes(s->box, s->count, &desc, &bvh, NULL) == VL_OK, "boxes refused");
    } else {
        s->nv = 3 + fuzz_byte(in) % (MAX_VERTS - 2);
        for (uint32_t i = 0; i < s->nv * 3; i++) {
            const float x = fuzz_coord(in);
            s->xyz[i] = (isfinite(x) && fabsf(x) < 1e6f ? x : 1.0f) + g_off[i % 3];
        }
        for (uint32_t i = 0; i < s->count * 3; i++) s->idx[i] = fuzz_byte(in) % s->nv;
        FUZZ_CHECK(vl_bvh_build_triangles(s->xyz, s->nv, s->idx, s->count, &desc, &bvh, NULL) == VL_OK, "tris refused");
    }
    return bvh;
}

/* Triangle i as the tree keeps it: v0, v0 + e1, v0 - e2n with the edges rounded to float. */
static void tree_triangle(const scene* s, uint32_t i, double v[3][3]) {
    const float *p0 = s->xyz + 3 * (size_t)s->idx[3 * i], *p1 = s->xyz + 3 * (size_t)s->idx[3 * i + 1],
                *p2 = s->xyz + 3 * (size_t)s->idx[3 * i + 2];
    for (int a = 0; a < 3; a++) {
        const float e1 = p1[a] - p0[a], e2n = p0[a] - p2[a];
        v[0][a] = p0[a], v[1][a] = (double)p0[a] + e1, v[2][a] = (double)p0[a] - e2n;
    }
}

static int capsule_valid(const vl_capsule* c) {
    for (int a = 0; a < 3; a++)
        if (!isfinite(c->a[a]) || !isfinite(c->b[a])) return 0;
    return isfinite(c->radius) && c->radius >= 0.0f;
}

static int zero_length(const vl_capsule* c) { return c->a[0] == c->b[0] && c->a[1] == c->b[1] && c->a[2] == c->b[2]; }

/* The library's exact overlap test of capsule c and primitive i (bvh.h's reach, in double). */
static int exact_pair(const scene* s, const vl_capsule* c, uint32_t i) {
    double l2 = 0.0, u;
    for (int a = 0; a < 3; a++) l2 += ((double)c->b[a] - c->a[a]) * ((double)c->b[a] - c->a[a]);
    const double r = c->radius, h = 0.5 * sqrt(l2), tol = VL_BVH_OVERLAP_TOLERANCE;
    if (s->boxes) {
        double a[3], D[3], mn[3], mx[3], reach = r + tol * (r + h);
        for (int k = 0; k < 3; k++)
            a[k] = c->a[k], D[k] = (double)c->b[k] - c->a[k], mn[k] = s->box[i].min[k], mx[k] = s->box[i].max[k];
        return vl_sd_segment_box(a, D, mn, mx, &u) <= reach * reach;
    }
    double v[3][3], V[3][3], P[3], Q[3], cs[3], ct[3], side = 0.0;
    tree_triangle(s, i, v);
    for (int k = 0; k < 3; k++) {
        for (int j = 0; j < 3; j++) V[j][k] = v[j][k] - v[0][k];
        P[k] = c->a[k] - v[0][k], Q[k] = c->b[k] - v[0][k];
        side = fmax(side, fmax(0.0, fmax(V[1][k], V[2][k])) - fmin(0.0, fmin(V[1][k], V[2][k])));
    }
    const double reach = r + tol * (r + h + side);
    return vl_sd_segment_tri(P, Q, V, cs, ct) <= reach * reach;
}

static vl_pair* sorted(const vl_pair_buffer* b) {
    vl_pair* p = malloc(sizeof(vl_pair) * (b->count ? b->count : 1));
    if (b->count) memcpy(p, b->pairs, sizeof(vl_pair) * b->count);
    oracle_sort(p, b->count);
    return p;
}

static void check_overlaps(const vl_bvh* bvh, const scene* s, const vl_capsule* q, uint32_t n) {
    vl_pair_buffer a = {0}, b = {0}, c = {0}, d = {0};
    int invalid = 0, in_range = s->in_range;
    for (uint32_t i = 0; i < n; i++) {
        invalid |= !capsule_valid(&q[i]);
        for (int k = 0; k < 3; k++)
            in_range &= !(fabsf(q[i].a[k]) > RANGE) && !(fabsf(q[i].b[k]) > RANGE) && !(q[i].radius > RANGE);
    }
    const vl_status want = invalid ? VL_ERR_INVALID_QUERY : VL_OK;
    vl_status st = vl_bvh_overlap_capsules(bvh, q, n, &a, NULL);
    FUZZ_CHECK(st == want, "batch status %s", vl_status_string(st));
    static _Alignas(64) uint8_t scratch[1 << 16];
    const size_t bytes = vl_bvh_overlap_scratch_size(bvh, n);
    FUZZ_CHECK(bytes <= sizeof scratch, "scratch %zu", bytes);
    st = vl_bvh_overlap_capsules(bvh, q, n, &b, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
    FUZZ_CHECK(st == want, "scratch status %s", vl_status_string(st));
    vl_context* ctx = NULL;
    FUZZ_CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    st = vl_bvh_overlap_capsules(bvh, q, n, &d, &(vl_exec){.context = ctx});
    FUZZ_CHECK(st == want, "context status %s", vl_status_string(st));
    vl_context_destroy(ctx);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t from = c.count;
        st = vl_bvh_overlap_capsules(bvh, &q[i], 1, &c, NULL);
        FUZZ_CHECK(st == (capsule_valid(&q[i]) ? VL_OK : VL_ERR_INVALID_QUERY), "single status %s", vl_status_string(st));
        for (uint32_t k = from; k < c.count; k++) c.pairs[k].a = i;
    }
    vl_pair *pa = sorted(&a), *pb = sorted(&b), *pc = sorted(&c), *pd = sorted(&d);
    FUZZ_CHECK(a.count == b.count && a.count == c.count && a.count == d.count,
               "pairs: batched %u, scratch %u, single %u, context %u", a.count, b.count, c.count, d.count);
    FUZZ_CHECK(!memcmp(pa, pb, sizeof(vl_pair) * a.count) && !memcmp(pa, pc, sizeof(vl_pair) * a.count) &&
                   !memcmp(pa, pd, sizeof(vl_pair) * a.count),
               "batched, scratch, single and context pairs differ");
    /* within the range bvh.h promises: against the exact test over every primitive, zero-length
     * capsules against the spheres */
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        static uint8_t got[MAX_PRIMS];
        memset(got, 0, sizeof got);
        for (; at < a.count && pa[at].a == i; at++) {
            FUZZ_CHECK(pa[at].b < s->count && !got[pa[at].b], "capsule %u: pair with %u", i, pa[at].b);
            got[pa[at].b] = 1;
        }
        if (!capsule_valid(&q[i])) {
            for (uint32_t p = 0; p < s->count; p++) FUZZ_CHECK(!got[p], "invalid capsule %u answered", i);
            continue;
        }
        if (!in_range) continue;
        if (zero_length(&q[i])) {
            vl_sphere sp = {{q[i].a[0], q[i].a[1], q[i].a[2]}, q[i].radius};
            vl_pair_buffer e = {0};
            FUZZ_CHECK(vl_bvh_overlap_spheres(bvh, &sp, 1, &e, NULL) == VL_OK, "sphere");
            uint32_t count = 0;
            for (uint32_t k = 0; k < e.count; k++) count += got[e.pairs[k].b];
            FUZZ_CHECK(count == e.count, "zero-length capsule %u: not the sphere's %u pairs", i, e.count);
            uint32_t mine = 0;
            for (uint32_t p = 0; p < s->count; p++) mine += got[p];
            FUZZ_CHECK(mine == e.count, "zero-length capsule %u: %u pairs, the sphere %u", i, mine, e.count);
            vl_pair_buffer_free(&e);
            continue;
        }
        for (uint32_t p = 0; p < s->count; p++)
            FUZZ_CHECK(got[p] == exact_pair(s, &q[i], p), "capsule %u (a %g %g %g b %g %g %g r %g), prim %u: %s", i,
                       q[i].a[0], q[i].a[1], q[i].a[2], q[i].b[0], q[i].b[1], q[i].b[2], q[i].radius, p,
                       got[p] ? "reported, the exact test says apart" : "missed");
    }
    free(pa), free(pb), free(pc), free(pd);
    vl_pair_buffer_free(&a), vl_pair_buffer_free(&b), vl_pair_buffer_free(&c), vl_pair_buffer_free(&d);
}

/* The library's exact time of sweep q against primitive i, vertices as the tree keeps them. */
static double exact_time(const scene* s, const vl_sweep_query* q, uint32_t i) {
    if (s->boxes) {
        double mn[3], mx[3];
        for (int a = 0; a < 3; a++) mn[a] = s->box[i].min[a], mx[a] = s->box[i].max[a];
        return vl_sweep_exact_box(q, mn, mx, q->tmax);
    }
    double v[3][3];
    tree_triangle(s, i, v);
    return vl_sweep_exact_tri(q, v, q->tmax);
}

static void check_sweep(const scene* s, const vl_capsule_sweep* sw, int valid, vl_hit h, const vl_contact* c, int any,
                        const char* path, uint32_t i) {
    if (!valid) {
        FUZZ_CHECK(h.prim == VL_NO_HIT && h.t == INFINITY, "%s %u: invalid sweep hit", path, i);
        return;
    }
    vl_sweep_query q;
    vl_sweep_query_capsule(&q, sw);
    double T = INFINITY;
    for (uint32_t k = 0; k < s->count; k++) {
        const double t = exact_time(s, &q, k);
        if (t >= 0.0 && t < T) T = t;
    }
    /* a contact whose point lies past float range may be missed (bvh.h), and one after a travel so
     * long that the tolerance (2^-20 of it) passes the capsule's own coordinates may go either way:
     * double cannot resolve the capsule's side over such a path */
    double mag = 1.0 + sw->capsule.radius, dl = 0.0;
    for (int a = 0; a < 3; a++) {
        mag = fmax(mag, fmax(fabs((double)sw->capsule.a[a]), fabs((double)sw->capsule.b[a])) + sw->capsule.radius);
        dl += q.d[a] * q.d[a];
    }
    if (T < INFINITY && (mag + sqrt(dl) * T > FLT_MAX || 0x1p-20 * sqrt(dl) * T > mag)) return;
    FUZZ_CHECK((h.prim != VL_NO_HIT) == (T < INFINITY), "%s %u: prim %u, brute force T %g", path, i, h.prim, T);
    if (h.prim == VL_NO_HIT) return;
    FUZZ_CHECK(h.prim < s->count, "%s %u: prim %u", path, i, h.prim);
    const double tp = exact_time(s, &q, h.prim);
    FUZZ_CHECK(tp >= 0.0 && h.t <= tp && h.t >= 0.0f, "%s %u: t %g, its prim's contact %g", path, i, h.t, tp);
    if (!any) FUZZ_CHECK(tp == T, "%s %u: prim %u at %g, first contact %g", path, i, h.prim, tp, T);
    if (c) {
        double nl = 0, nd = 0;
        for (int a = 0; a < 3; a++) nl += (double)c->normal[a] * c->normal[a], nd += (double)c->normal[a] * q.d[a];
        FUZZ_CHECK(fabs(sqrt(nl) - 1.0) < 1e-5, "%s %u: |normal| %g", path, i, sqrt(nl));
        FUZZ_CHECK(nd <= 1e-6 * sqrt(dl), "%s %u: normal . dir %g", path, i, nd);
    }
}

static void check_sweeps(const vl_bvh* bvh, const scene* s, const vl_capsule_sweep* sw, uint32_t n, uint32_t flags) {
    static vl_hit hits[MAX_CAPSULES], plain[MAX_CAPSULES], ctxh[MAX_CAPSULES];
    static vl_contact contacts[MAX_CAPSULES];
    char scratch[64];
    vl_status st = vl_bvh_sweep_capsules(bvh, sw, n, flags, hits, contacts,
                                         &(vl_exec){.scratch = scratch, .scratch_bytes = sizeof scratch});
    vl_status st2 = vl_bvh_sweep_capsules(bvh, sw, n, flags, plain, NULL, NULL);
    FUZZ_CHECK(st == st2, "plain status %s", vl_status_string(st2));
    FUZZ_CHECK(memcmp(hits, plain, sizeof(vl_hit) * n) == 0, "plain and scratch answers differ");
    vl_context* ctx = NULL;
    FUZZ_CHECK(vl_context_create(NULL, &ctx) == VL_OK, "context");
    st2 = vl_bvh_sweep_capsules(bvh, sw, n, flags, ctxh, NULL, &(vl_exec){.context = ctx});
    vl_context_destroy(ctx);
    FUZZ_CHECK(st == st2 && memcmp(hits, ctxh, sizeof(vl_hit) * n) == 0, "context answers differ");
    int any_invalid = 0;
    for (uint32_t i = 0; i < n; i++) {
        const int valid = vl_sweep_capsule_valid(&sw[i]);
        any_invalid |= !valid;
        vl_hit one;
        vl_contact c1;
        vl_status s1 = vl_bvh_sweep_capsules(bvh, &sw[i], 1, flags, &one, &c1, NULL);
        FUZZ_CHECK(s1 == (valid ? VL_OK : VL_ERR_INVALID_QUERY), "single status %s", vl_status_string(s1));
        check_sweep(s, &sw[i], valid, hits[i], &contacts[i], flags != 0, "batched", i);
        check_sweep(s, &sw[i], valid, one, &c1, flags != 0, "single", i);
    }
    FUZZ_CHECK(st == (any_invalid ? VL_ERR_INVALID_QUERY : VL_OK), "batch status %s", vl_status_string(st));
}

static float fuzz_dir(fuzz_input* in) {
    const uint8_t b = fuzz_byte(in);
    return b < 96 ? 0.0f : b < 112 ? -0.0f : fuzz_coord(in);
}

/* A capsule: its ends on the grid (the second often the first moved along one axis, or the first
 * itself), a radius on a grid of quarters or any value. */
static void make_capsule(fuzz_input* in, vl_capsule* c) {
    const uint8_t shape = fuzz_byte(in);
    for (int a = 0; a < 3; a++) c->a[a] = fuzz_coord(in) + g_off[a];
    if (shape < 64) {
        for (int a = 0; a < 3; a++) c->b[a] = c->a[a];
    } else if (shape < 160) {
        for (int a = 0; a < 3; a++) c->b[a] = c->a[a];
        c->b[shape % 3] += (float)(fuzz_byte(in) % 16) * 0.5f;
    } else {
        for (int a = 0; a < 3; a++) c->b[a] = fuzz_coord(in) + g_off[a];
    }
    const uint8_t r = fuzz_byte(in);
    c->radius = r < 200 ? (float)(r % 8) * 0.25f : fuzz_coord(in);
}

static void run(const uint8_t* data, size_t size) {
    const size_t before = vl_get_bytes_in_use();
    fuzz_input in = {data, size, 0};
    static scene s;
    vl_bvh* bvh = build_scene(&in, &s);
    if (bvh) {
        static vl_capsule caps[MAX_CAPSULES];
        static vl_capsule_sweep sw[MAX_CAPSULES];
        while (!fuzz_done(&in)) {
            const uint8_t b = fuzz_byte(&in);
            const uint32_t n = 1 + b % MAX_CAPSULES;
            for (uint32_t i = 0; i < n; i++) {
                make_capsule(&in, &caps[i]);
                sw[i].capsule = caps[i];
                const uint8_t t = fuzz_byte(&in);
                sw[i].tmax = t < 96 ? INFINITY : t < 250 ? (float)(t % 40) * 0.5f : fuzz_coord(&in);
                for (int a = 0; a < 3; a++) sw[i].dir[a] = fuzz_dir(&in);
            }
            if (b & 0x40)
                check_sweeps(bvh, &s, sw, n, (b >> 7) ? VL_QUERY_ANY : VL_QUERY_CLOSEST);
            else
                check_overlaps(bvh, &s, caps, n);
        }
        vl_bvh_destroy(bvh);
    }
    FUZZ_CHECK_NO_LEAK(before);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_near_then_far(data, size, g_off, run); }
