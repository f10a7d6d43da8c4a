/* Ray-box and box-box kernels at the batch width (tests/box_kernels.h over the library's slab
 * kernels), in both shapes (one ray against N boxes, N rays against one box), against two oracles:
 *  - a scalar mirror of the slab arithmetic (float, same operations): hit flags and entry t must
 *    agree bit for bit, on random and special inputs (signed zeros, infinities, denormal and
 *    huge directions, zero-width and infinite boxes, faces through the ray's origin);
 *  - a geometric oracle in double precision on moderate random scenes: where the double answer
 *    is clear by a margin, the kernel must give it, and its entry t must be within 1e-5 relative. */
#include "box_kernels.h"
#include "bvh/rays/ray_tests.h"
#include "simd/bvh_kernels.h"
#include "test_util.h"

/* Scalar mirror of the slab test: parallel axes exact, the rest as the kernels compute them. */
static int ref_slab(const test_ray_prep* r, const float bmin[3], const float bmax[3], float* tnear) {
    float tn = r->tmin, tf = r->tmax;
    for (int a = 0; a < 3; a++) {
        if (r->parallel & (1u << a)) {
            if (r->origin[a] < bmin[a] || r->origin[a] > bmax[a]) return 0;
            continue;
        }
        float t1 = (bmin[a] - r->origin[a]) * r->inv_dir[a];
        float t2 = (bmax[a] - r->origin[a]) * r->inv_dir[a];
        float lo = t1 < t2 ? t1 : t2, hi = t1 < t2 ? t2 : t1;
        if (lo > tn) tn = lo;
        if (hi < tf) tf = hi;
    }
    *tnear = tn;
    return tn <= tf;
}

/* Geometry in double: [entry, exit] of the ray's line inside the box, clipped to [tmin, tmax]. */
static void geo_slab(const vl_ray* r, const float bmin[3], const float bmax[3], double* tn, double* tf) {
    *tn = r->tmin;
    *tf = r->tmax;
    for (int a = 0; a < 3; a++) {
        double o = r->origin[a], d = r->dir[a];
        if (d == 0) {
            if (o < bmin[a] || o > bmax[a]) *tn = INFINITY, *tf = -INFINITY;
            continue;
        }
        double t1 = (bmin[a] - o) / d, t2 = (bmax[a] - o) / d;
        *tn = fmax(*tn, fmin(t1, t2));
        *tf = fmin(*tf, fmax(t1, t2));
    }
}

static float pick_coord(test_rng* rng, int special) {
    if (special && test_u32(rng, 4) == 0) {
        float f = test_special_floats[test_u32(rng, TEST_SPECIAL_COUNT)];
        return isinf(f) ? 0.0f : f; /* origins and directions are finite */
    }
    return test_float(rng, -10.0f, 10.0f);
}

static vl_ray random_ray(test_rng* rng, int special) {
    vl_ray r;
    for (int a = 0; a < 3; a++) {
        r.origin[a] = pick_coord(rng, special);
        r.dir[a] = pick_coord(rng, special);
        uint32_t k = test_u32(rng, 10);
        if (k == 0) r.dir[a] = 0.0f;
        if (k == 1) r.dir[a] = -0.0f;
        if (special && k == 2) r.dir[a] = 1e-40f; /* denormal: parallel */
        if (special && k == 3) r.dir[a] = -1e-30f; /* tiny but normal: not parallel */
    }
    if (r.dir[0] == 0 && r.dir[1] == 0 && r.dir[2] == 0) r.dir[test_u32(rng, 3)] = 1.0f;
    r.tmin = test_u32(rng, 3) == 0 ? test_float(rng, 0.0f, 2.0f) : 0.0f;
    r.tmax = test_u32(rng, 3) == 0 ? INFINITY : r.tmin + test_float(rng, 0.0f, 40.0f);
    return r;
}

/* A random box; with `special`, zero-width axes, infinite bounds and faces through `through`. */
static void random_box(test_rng* rng, int special, const float through[3], float bmin[3], float bmax[3]) {
    for (int a = 0; a < 3; a++) {
        float c = test_float(rng, -10.0f, 10.0f), h = test_float(rng, 0.0f, 4.0f);
        bmin[a] = c - h;
        bmax[a] = c + h;
        if (!special) continue;
        switch (test_u32(rng, 8)) {
        case 0: bmin[a] = bmax[a] = c; break;
        case 1: bmin[a] = -INFINITY; break;
        case 2: bmax[a] = INFINITY; break;
        case 3: bmin[a] = through[a]; if (bmax[a] < bmin[a]) bmax[a] = bmin[a]; break;
        case 4: bmax[a] = through[a]; if (bmin[a] > bmax[a]) bmin[a] = bmax[a]; break;
        case 5: bmin[a] = -1e30f, bmax[a] = 1e30f; break;
        default: break;
        }
    }
}

typedef struct soa_store {
    float* f[8];
    uint32_t n;
} soa_store;

static soa_store soa_alloc(uint32_t n) {
    soa_store s = {.n = test_round_up8(n)};
    for (int k = 0; k < 8; k++) s.f[k] = calloc(s.n, sizeof(float));
    return s;
}

static void soa_free(soa_store* s) {
    for (int k = 0; k < 8; k++) free(s->f[k]);
}

static test_boxes_soa as_boxes(const soa_store* s) {
    return (test_boxes_soa){{s->f[0], s->f[1], s->f[2]}, {s->f[3], s->f[4], s->f[5]}};
}

static test_rays_soa as_rays(const soa_store* s, float* tmin, float* tmax) {
    (void)tmin, (void)tmax;
    return (test_rays_soa){{s->f[0], s->f[1], s->f[2]}, {s->f[3], s->f[4], s->f[5]}, s->f[6], s->f[7]};
}

static uint64_t g_geo_decided, g_geo_total;

/* Compares one kernel answer (hit when tnear < INFINITY) with both oracles. */
static void check_answer(const vl_ray* ray, const test_ray_prep* prep, const float bmin[3], const float bmax[3],
                         float kernel_t, int geometric, const char* what) {
    float ref_t = INFINITY;
    int ref_hit = ref_slab(prep, bmin, bmax, &ref_t);
    int hit = kernel_t < INFINITY || (ref_hit && ref_t == INFINITY);
    CHECK(hit == ref_hit, "%s: hit %d, mirror %d (o %g %g %g d %g %g %g)", what, hit, ref_hit, ray->origin[0],
          ray->origin[1], ray->origin[2], ray->dir[0], ray->dir[1], ray->dir[2]);
    if (hit && ref_hit) CHECK(kernel_t == ref_t, "%s: t %.9g, mirror %.9g", what, kernel_t, ref_t);
    if (!geometric) return;
    double tn, tf;
    geo_slab(ray, bmin, bmax, &tn, &tf);
    double margin = 1e-4 * (1.0 + (isinf(tn) ? 0 : fabs(tn)) + (isinf(tf) ? 0 : fabs(tf)));
    g_geo_total++;
    if (tf - tn > margin) {
        g_geo_decided++;
        CHECK(hit, "%s: geometric hit [%g, %g] missed", what, tn, tf);
        if (hit) CHECK(fabs(kernel_t - tn) <= 1e-5 * (1.0 + fabs(tn)), "%s: t %.9g, exact %.9g", what, kernel_t, tn);
    } else if (tn - tf > margin) {
        g_geo_decided++;
        CHECK(!hit, "%s: geometric miss [%g, %g] hit", what, tn, tf);
    }
}

static void test_ray_vs_boxes(test_rng* rng, int special, uint32_t rounds) {
    static const uint32_t counts[] = {1, 3, 4, 7, 8, 9, 37, 256};
    for (uint32_t round = 0; round < rounds; round++) {
        uint32_t n = counts[round % 8];
        vl_ray ray = random_ray(rng, special);
        test_ray_prep prep = test_ray_prepare(&ray);
        soa_store s = soa_alloc(n);
        float* tw = calloc(s.n, sizeof(float));
        for (uint32_t i = 0; i < n; i++) {
            float bmin[3], bmax[3];
            random_box(rng, special, ray.origin, bmin, bmax);
            for (int a = 0; a < 3; a++) s.f[a][i] = bmin[a], s.f[3 + a][i] = bmax[a];
        }
        test_boxes_soa boxes = as_boxes(&s);
        uint32_t hits = simd_ray_vs_boxes(&prep, &boxes, n, tw);
        uint32_t want_hits = 0;
        for (uint32_t i = 0; i < n; i++) {
            float bmin[3] = {s.f[0][i], s.f[1][i], s.f[2][i]}, bmax[3] = {s.f[3][i], s.f[4][i], s.f[5][i]};
            float ref_t;
            want_hits += (uint32_t)ref_slab(&prep, bmin, bmax, &ref_t);
            check_answer(&ray, &prep, bmin, bmax, tw[i], !special, "ray_vs_boxes");
        }
        const uint32_t w = simd_kernel_width();
        for (uint32_t i = n; i < (n + w - 1) / w * w; i++) CHECK(tw[i] == INFINITY, "tail lane %u: %g", i, tw[i]);
        CHECK(hits == want_hits, "hit count %u want %u", hits, want_hits);
        free(tw);
        soa_free(&s);
    }
}

static void test_rays_vs_box(test_rng* rng, int special, uint32_t rounds) {
    static const uint32_t counts[] = {1, 2, 5, 8, 11, 64, 300};
    for (uint32_t round = 0; round < rounds; round++) {
        uint32_t n = counts[round % 7];
        soa_store s = soa_alloc(n);
        vl_ray* rays = calloc(n, sizeof(vl_ray));
        test_ray_prep* preps = calloc(n, sizeof(test_ray_prep));
        int any_parallel = 0;
        for (uint32_t i = 0; i < n; i++) {
            rays[i] = random_ray(rng, special);
            preps[i] = test_ray_prepare(&rays[i]);
            any_parallel |= preps[i].parallel != 0;
            for (int a = 0; a < 3; a++) s.f[a][i] = preps[i].origin[a], s.f[3 + a][i] = preps[i].inv_dir[a];
            s.f[6][i] = preps[i].tmin;
            s.f[7][i] = preps[i].tmax;
        }
        float bmin[3], bmax[3];
        random_box(rng, special, rays[0].origin, bmin, bmax);
        vl_aabb box = {{bmin[0], bmin[1], bmin[2]}, {bmax[0], bmax[1], bmax[2]}};
        test_rays_soa soa = as_rays(&s, NULL, NULL);
        float* tw = calloc(s.n, sizeof(float));
        uint32_t hits = simd_rays_vs_box(&soa, n, any_parallel, &box, tw);
        uint32_t want_hits = 0;
        for (uint32_t i = 0; i < n; i++) {
            float ref_t;
            want_hits += (uint32_t)ref_slab(&preps[i], bmin, bmax, &ref_t);
            check_answer(&rays[i], &preps[i], bmin, bmax, tw[i], !special, "rays_vs_box");
        }
        CHECK(hits == want_hits, "hit count %u want %u", hits, want_hits);
        free(tw), free(rays), free(preps);
        soa_free(&s);
    }
}

/* Hand-made cases whose answers are known exactly. */
static float one_ray_one_box(vl_ray ray, vl_aabb box) {
    test_ray_prep prep = test_ray_prepare(&ray);
    soa_store s = soa_alloc(1);
    for (int a = 0; a < 3; a++) s.f[a][0] = box.min[a], s.f[3 + a][0] = box.max[a];
    test_boxes_soa boxes = as_boxes(&s);
    float tw[8];
    simd_ray_vs_boxes(&prep, &boxes, 1, tw);
    soa_free(&s);
    return tw[0];
}

static void test_known_cases(void) {
    vl_aabb unit = {{0, 0, 0}, {1, 1, 1}};
    /* along +x, sliding exactly on the top face: touching counts */
    CHECK(one_ray_one_box((vl_ray){{-1, 1, 0.5f}, 0, {1, 0, 0}, INFINITY}, unit) == 1.0f, "face-sliding ray");
    CHECK(one_ray_one_box((vl_ray){{-1, 1, 0.5f}, 0, {1, -0.0f, 0}, INFINITY}, unit) == 1.0f, "-0 direction");
    CHECK(one_ray_one_box((vl_ray){{-1, 1.0000001f, 0.5f}, 0, {1, 0, 0}, INFINITY}, unit) == INFINITY, "just above");
    /* on an edge of the box, along it */
    CHECK(one_ray_one_box((vl_ray){{0, 0, -5}, 0, {0, 0, 1}, INFINITY}, unit) == 5.0f, "along an edge");
    /* origin inside: entry t is tmin */
    CHECK(one_ray_one_box((vl_ray){{0.5f, 0.5f, 0.5f}, 0, {0.3f, -0.2f, 0.9f}, 10}, unit) == 0.0f, "inside");
    CHECK(one_ray_one_box((vl_ray){{0.5f, 0.5f, 0.5f}, 0.25f, {1, 0, 0}, 10}, unit) == 0.25f, "inside, tmin");
    /* segment too short, and box behind */
    CHECK(one_ray_one_box((vl_ray){{-3, 0.5f, 0.5f}, 0, {1, 0, 0}, 2.9f}, unit) == INFINITY, "short segment");
    CHECK(one_ray_one_box((vl_ray){{-3, 0.5f, 0.5f}, 0, {-1, 0, 0}, INFINITY}, unit) == INFINITY, "behind");
    /* segment ending exactly on the face */
    CHECK(one_ray_one_box((vl_ray){{-3, 0.5f, 0.5f}, 0, {1, 0, 0}, 3}, unit) == 3.0f, "segment ends on face");
    /* zero-width box, crossed and slid along */
    vl_aabb sheet = {{0, 0, 2}, {1, 1, 2}};
    CHECK(one_ray_one_box((vl_ray){{0.5f, 0.5f, 0}, 0, {0, 0, 2}, INFINITY}, sheet) == 1.0f, "crossing a sheet");
    CHECK(one_ray_one_box((vl_ray){{-1, 0.5f, 2}, 0, {1, 0, 0}, INFINITY}, sheet) == 1.0f, "in a sheet's plane");
    vl_aabb point = {{2, 3, 4}, {2, 3, 4}};
    CHECK(one_ray_one_box((vl_ray){{0, 0, 0}, 0, {2, 3, 4}, INFINITY}, point) == 1.0f, "through a point box");
    /* infinite ground slab, hit from above and travelled inside */
    vl_aabb ground = {{-INFINITY, -1, -INFINITY}, {INFINITY, 0, INFINITY}};
    CHECK(one_ray_one_box((vl_ray){{3, 10, -7}, 0, {0, -2, 0}, INFINITY}, ground) == 5.0f, "ground from above");
    CHECK(one_ray_one_box((vl_ray){{3, -0.5f, -7}, 0, {1, 0, 1}, INFINITY}, ground) == 0.0f, "inside ground");
    CHECK(one_ray_one_box((vl_ray){{3, 10, -7}, 0, {1, 0.5f, 1}, INFINITY}, ground) == INFINITY, "away from ground");
    /* denormal direction component counts as parallel */
    CHECK(one_ray_one_box((vl_ray){{0.5f, 2, 0.5f}, 0, {1, 1e-40f, 0}, INFINITY}, unit) == INFINITY, "denormal");
    CHECK(one_ray_one_box((vl_ray){{-1, 0.5f, 0.5f}, 0, {1, 1e-40f, 0}, INFINITY}, unit) == 1.0f, "denormal hit");
}

/* Box against boxes: exactly the brute-force closed-interval set, in order. */
static void test_box_vs_boxes(test_rng* rng, uint32_t rounds) {
    for (uint32_t round = 0; round < rounds; round++) {
        uint32_t n = 1 + test_u32(rng, 100);
        int special = round % 2;
        soa_store s = soa_alloc(n);
        float qmin[3], qmax[3], zero[3] = {0, 0, 0};
        random_box(rng, special, zero, qmin, qmax);
        vl_aabb query = {{qmin[0], qmin[1], qmin[2]}, {qmax[0], qmax[1], qmax[2]}};
        for (uint32_t i = 0; i < n; i++) {
            float bmin[3], bmax[3];
            if (test_u32(rng, 10) == 0) { /* identical, or touching the query exactly */
                for (int a = 0; a < 3; a++) bmin[a] = qmin[a], bmax[a] = qmax[a];
                int axis = (int)test_u32(rng, 3);
                if (test_u32(rng, 2)) bmin[axis] = qmax[axis], bmax[axis] = qmax[axis] + 1;
            } else {
                random_box(rng, special, qmin, bmin, bmax);
            }
            for (int a = 0; a < 3; a++) s.f[a][i] = bmin[a], s.f[3 + a][i] = bmax[a];
        }
        test_boxes_soa boxes = as_boxes(&s);
        uint32_t* out = calloc(n, sizeof(uint32_t));
        uint32_t got = simd_box_vs_boxes(&query, &boxes, n, out);
        uint32_t want = 0, agree = 1;
        for (uint32_t i = 0; i < n; i++) {
            int overlap = 1;
            for (int a = 0; a < 3; a++) overlap &= qmin[a] <= s.f[3 + a][i] && s.f[a][i] <= qmax[a];
            if (!overlap) continue;
            agree &= want < got && out[want] == i;
            want++;
        }
        CHECK(got == want && agree, "box_vs_boxes: %u want %u", got, want);
        free(out);
        soa_free(&s);
    }
}

/* The single-ray walk's push order: the children hit first, by entry t farthest first (equal t
 * within the key's 3 ulp: the higher lane first), then the missed ones; each lane once; each
 * key's t (low bits cleared) at most its child's t. */
static void test_far_first(test_rng* rng, uint32_t rounds) {
    static const float pool[] = {0.0f, -0.0f, 1.0f, 1.0f, 2.5f, 1e-30f, 3e38f, 0x1p-149f};
    for (uint32_t round = 0; round < rounds; round++) {
        float tn[4];
        uint32_t hit[4], bits = 0;
        for (int i = 0; i < 4; i++) {
            tn[i] = test_u32(rng, 3) ? test_float(rng, 0.0f, 100.0f) : pool[test_u32(rng, 8)];
            hit[i] = test_u32(rng, 2) ? 0xFFFFFFFFu : 0u;
            bits |= (hit[i] & 1u) << i;
        }
        uint32_t key[4];
        float hit_f[4];
        memcpy(hit_f, hit, sizeof hit);
        vl_i4_storeu(key, vl_k4_far_first(vl_f4_loadu(hit_f), vl_f4_loadu(tn)));
        uint32_t seen = 0, k = (uint32_t)__builtin_popcount(bits);
        int ok = 1;
        for (uint32_t j = 0; j < 4; j++) {
            uint32_t lane = key[j] & 3u;
            ok &= !(seen >> lane & 1u) && ((bits >> lane & 1u) == (j < k));
            seen |= 1u << lane;
            if (j >= k) continue;
            uint32_t tbits = key[j] & ~3u;
            float t;
            memcpy(&t, &tbits, sizeof t);
            ok &= t <= tn[lane] && t >= 0.0f;
            if (j > 0) ok &= (int32_t)key[j - 1] > (int32_t)key[j];
        }
        CHECK(ok, "far_first: t %g %g %g %g hit %x -> lanes %u %u %u %u", tn[0], tn[1], tn[2], tn[3], bits, key[0] & 3u,
              key[1] & 3u, key[2] & 3u, key[3] & 3u);
#if VL_BW == 8
        /* 8 lanes (two walks' nodes): each half is the 4-lane order of its own lanes */
        float tn8[8], hit8[8];
        for (int i = 0; i < 8; i++) {
            tn8[i] = i < 4 ? tn[3 - i] : tn[i - 4];
            memcpy(&hit8[i], i < 4 ? &hit[(i + 1) & 3] : &hit[i - 4], sizeof(float));
        }
        uint32_t key8[8], low[4], high[4];
        vl_i8_storeu(key8, vl_k8_far_first(vl_f8_loadu(hit8), vl_f8_loadu(tn8)));
        vl_i4_storeu(low, vl_k4_far_first(vl_f4_loadu(hit8), vl_f4_loadu(tn8)));
        vl_i4_storeu(high, vl_k4_far_first(vl_f4_loadu(hit8 + 4), vl_f4_loadu(tn8 + 4)));
        CHECK(!memcmp(key8, low, sizeof low) && !memcmp(key8 + 4, high, sizeof high),
              "far_first, 8 lanes: halves differ from the 4-lane order (hit %x)", bits);
#endif
    }
}

/* A random ray, often invalid: one of its floats NaN, infinite, denormal or out of order. */
static vl_ray random_raw_ray(test_rng* rng) {
    vl_ray r = random_ray(rng, 1);
    float* f = (float*)&r; /* origin, tmin, dir, tmax */
    static const float bad[] = {NAN, -NAN, INFINITY, -INFINITY, -1.0f, -0.0f, 0x1p-140f, -0x1p-127f, FLT_MAX, 0.0f};
    for (uint32_t k = test_u32(rng, 3); k-- > 0;) f[test_u32(rng, 8)] = bad[test_u32(rng, 10)];
    if (test_u32(rng, 8) == 0) r.tmin = r.tmax + 1.0f;
    return r;
}

/* Ray records made VL_BW at a time (the batch's) against vl_bvh_rayrec_set one at a time (the
 * single-ray path's): bit for bit, the valid lanes, the flushed ones; the retired record for an
 * invalid ray. */
static void test_rayrecs(test_rng* rng, uint32_t rounds) {
    for (uint32_t round = 0; round < rounds; round++) {
        vl_ray rays[8];
        for (int j = 0; j < 8; j++) rays[j] = random_raw_ray(rng);
        _Alignas(16) float want[8][VL_RAYREC_FLOATS], got[8][VL_RAYREC_FLOATS];
        uint32_t valid = 0, flat = 0, flat_w = 0, valid_w = 0;
        for (uint32_t j = 0; j < 8; j++) {
            if (vl_ray_is_valid(&rays[j])) {
                valid |= 1u << j;
                flat |= (vl_bvh_rayrec_set(want[j], &rays[j]) != 0) << j;
            } else {
                vl_bvh_rayrec_retired(want[j]);
            }
        }
        for (uint32_t h = 0; h < 8; h += VL_BW) {
            uint32_t f;
            valid_w |= vl_kw_rayrecs((const float*)&rays[h], got[h], VL_RAYREC_FLOATS, &f) << h;
            flat_w |= f << h;
        }
        CHECK(valid_w == valid, "rayrecs valid %x, want %x", valid_w, valid);
        CHECK(flat_w == flat, "rayrecs flat %x, want %x", flat_w, flat);
        CHECK(!memcmp(got, want, sizeof want), "rayrecs records differ (round %u)", round);
    }
}

int main(void) {
    test_rng rng = {7};
    uint32_t rounds = test_scaled(4000);
    test_known_cases();
    test_ray_vs_boxes(&rng, 0, rounds);
    test_ray_vs_boxes(&rng, 1, rounds);
    test_rays_vs_box(&rng, 0, rounds);
    test_rays_vs_box(&rng, 1, rounds);
    test_box_vs_boxes(&rng, rounds);
    test_far_first(&rng, rounds);
    test_rayrecs(&rng, rounds);
    CHECK(g_geo_decided > g_geo_total * 9 / 10, "geometric oracle decided only %llu of %llu",
          (unsigned long long)g_geo_decided, (unsigned long long)g_geo_total);
    return test_finish("test_kernels");
}
