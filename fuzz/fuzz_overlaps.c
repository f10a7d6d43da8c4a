/* Fuzzes the overlap queries and refit: a byte stream becomes a small scene of triangles or boxes
 * on a coarse grid (shared vertices, coplanar and touching faces, zero-area triangles, flat and
 * infinite boxes) and batches of box and sphere queries (touching, containing, infinite, invalid:
 * NaN, inverted, negative or NaN radius, infinite center). The batched answers (plain and on
 * scratch) and the single-query answers must be the same pair sets; within the range the header
 * promises (coordinates up to 2^30) they must agree with the double-precision brute force. A
 * refit to moved coordinates must answer as a fresh build of them; a refit with bad input must
 * fail and change nothing. Every input runs twice: where its bytes put it, and moved far from the
 * origin (fuzz_far_offset). */
#include <volley/volley.h>

#include "fuzz_util.h"
#include "overlap_oracle.h"

#define MAX_PRIMS 40
#define MAX_QUERIES 48
#define RANGE 1073741824.0f /* 2^30 */

typedef struct scene {
    int boxes, clean; /* clean: NaN and infinities in the input become 0 (most scenes, so that most builds succeed) */
    uint32_t count, nv;
    float xyz[MAX_PRIMS * 9];
    uint32_t idx[MAX_PRIMS * 3];
    vl_aabb box[MAX_PRIMS];
    int in_range;
} scene;

/* Scenes built and batches checked against the brute force (printed with VOLLEY_FUZZ_STATS set). */
static unsigned long g_built, g_checked;

__attribute__((destructor)) static void print_stats(void) {
    if (getenv("VOLLEY_FUZZ_STATS")) fprintf(stderr, "fuzz_overlaps: %lu scenes built, %lu batches checked\n", g_built, g_checked);
}

static int finite_in_range(float x) { return fabsf(x) <= RANGE; }

/* The offset of this run, added to every coordinate the bytes give. */
static float g_off[3];

static void make_scene(fuzz_input* in, scene* s, int moved) {
    if (!moved) {
        uint8_t mode = fuzz_byte(in);
        s->boxes = mode & 1;
        s->clean = (mode & 6) != 0;
        s->count = 1 + fuzz_byte(in) % MAX_PRIMS;
        s->nv = 3 * s->count;
    }
    s->in_range = 1;
    if (s->boxes) {
        for (uint32_t i = 0; i < s->count; i++)
            for (int a = 0; a < 3; a++) {
                vl_aabb* b = &s->box[i];
                b->min[a] = fuzz_coord(in) + g_off[a];
                b->max[a] = b->min[a] + fabsf(fuzz_coord(in));
                if (s->clean && isnan(b->max[a])) b->min[a] = b->max[a] = 0.0f;
                s->in_range &= isinf(b->min[a]) || isinf(b->max[a]) || (finite_in_range(b->min[a]) && finite_in_range(b->max[a]));
            }
    } else {
        for (uint32_t i = 0; i < s->nv * 3; i++) {
            s->xyz[i] = fuzz_coord(in);
            if (s->clean && !isfinite(s->xyz[i])) s->xyz[i] = 0.0f;
            s->xyz[i] += g_off[i % 3];
            s->in_range &= finite_in_range(s->xyz[i]);
        }
        if (!moved)
            for (uint32_t i = 0; i < s->nv; i++) {
                uint8_t b = fuzz_byte(in);
                s->idx[i] = b < 128 ? i : b % s->nv; /* shared vertices, degenerate triangles */
            }
    }
}

static int scene_valid(const scene* s) {
    if (s->boxes) {
        for (uint32_t i = 0; i < s->count; i++)
            if (!oracle_query_box_valid(&s->box[i])) return 0;
        return 1;
    }
    for (uint32_t i = 0; i < s->nv * 3; i++)
        if (!isfinite(s->xyz[i])) return 0;
    return 1;
}

static vl_bvh* build(const scene* s, uint8_t leaf) {
    vl_bvh_desc d = vl_bvh_default_desc();
    d.max_leaf_size = 1 + leaf % 8;
    vl_bvh* bvh = NULL;
    vl_status st = s->boxes ? vl_bvh_build_boxes(s->box, s->count, &d, &bvh, NULL)
                            : vl_bvh_build_triangles(s->xyz, s->nv, s->idx, s->count, &d, &bvh, NULL);
    FUZZ_CHECK((st == VL_OK) == scene_valid(s), "build %s", vl_status_string(st));
    return bvh;
}

static vl_pair* sorted(const vl_pair_buffer* b) {
    vl_pair* p = malloc(sizeof(vl_pair) * (b->count ? b->count : 1));
    if (b->count) memcpy(p, b->pairs, sizeof(vl_pair) * b->count);
    oracle_sort(p, b->count);
    return p;
}

/* The queries' pairs, sorted, from the batched form (the others checked equal to it). */
static vl_pair* run_queries(const vl_bvh* bvh, const scene* s, const vl_aabb* boxes, const vl_sphere* spheres,
                            uint32_t n, uint32_t* np) {
    vl_pair_buffer a = {0}, b = {0}, c = {0};
    int invalid = 0;
    for (uint32_t i = 0; i < n; i++)
        invalid |= boxes ? !oracle_query_box_valid(&boxes[i]) : !oracle_query_sphere_valid(&spheres[i]);
    vl_status st = boxes ? vl_bvh_overlap_boxes(bvh, boxes, n, &a, NULL) : vl_bvh_overlap_spheres(bvh, spheres, n, &a, NULL);
    FUZZ_CHECK(st == (invalid ? VL_ERR_INVALID_QUERY : VL_OK), "batch status %s", vl_status_string(st));
    size_t bytes = vl_bvh_overlap_scratch_size(bvh, n);
    void* scratch = aligned_alloc(64, (bytes + 63) / 64 * 64);
    st = boxes ? vl_bvh_overlap_boxes(bvh, boxes, n, &b, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes})
               : vl_bvh_overlap_spheres(bvh, spheres, n, &b, &(vl_exec){.scratch = scratch, .scratch_bytes = bytes});
    FUZZ_CHECK(st == (invalid ? VL_ERR_INVALID_QUERY : VL_OK), "scratch status %s", vl_status_string(st));
    free(scratch);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t from = c.count; /* one query's pairs name it 0: renamed i */
        st = boxes ? vl_bvh_overlap_boxes(bvh, &boxes[i], 1, &c, NULL) : vl_bvh_overlap_spheres(bvh, &spheres[i], 1, &c, NULL);
        for (uint32_t k = from; k < c.count; k++) c.pairs[k].a = i;
        int valid = boxes ? oracle_query_box_valid(&boxes[i]) : oracle_query_sphere_valid(&spheres[i]);
        FUZZ_CHECK(st == (valid ? VL_OK : VL_ERR_INVALID_QUERY), "single status %s", vl_status_string(st));
    }
    vl_pair *pa = sorted(&a), *pb = sorted(&b), *pc = sorted(&c);
    FUZZ_CHECK(a.count == b.count && a.count == c.count, "pairs: batched %u, scratch %u, single %u", a.count, b.count,
               c.count);
    FUZZ_CHECK(memcmp(pa, pb, sizeof(vl_pair) * a.count) == 0 && memcmp(pa, pc, sizeof(vl_pair) * a.count) == 0,
               "batched, scratch and single pairs differ");
    int in_range = s->in_range;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            if (boxes) {
                in_range &= (isinf(boxes[i].min[k]) || finite_in_range(boxes[i].min[k])) &&
                            (isinf(boxes[i].max[k]) || finite_in_range(boxes[i].max[k]));
            } else {
                in_range &= !isfinite(spheres[i].center[k]) || finite_in_range(spheres[i].center[k]);
                in_range &= !isfinite(spheres[i].radius) || finite_in_range(spheres[i].radius);
            }
        }
    if (in_range) {
        oracle_scene sc = {s->xyz, s->idx, s->boxes ? s->box : NULL, s->count};
        g_checked++;
        oracle_report r = oracle_check(&sc, boxes, spheres, n, pa, a.count);
        FUZZ_CHECK(r.missing == 0 && r.extra == 0 && r.duplicate == 0 && r.invalid_answered == 0,
                   "against brute force: %llu missing, %llu extra, %llu twice, %llu invalid (query %u prim %u)",
                   (unsigned long long)r.missing, (unsigned long long)r.extra, (unsigned long long)r.duplicate,
                   (unsigned long long)r.invalid_answered, r.first_bad_query, r.first_bad_prim);
    }
    free(pb), free(pc);
    vl_pair_buffer_free(&a), vl_pair_buffer_free(&b), vl_pair_buffer_free(&c);
    *np = a.count;
    return pa;
}

static void make_queries(fuzz_input* in, uint32_t n, vl_aabb* boxes, vl_sphere* spheres) {
    for (uint32_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            boxes[i].min[a] = fuzz_coord(in) + g_off[a];
            uint8_t b = fuzz_byte(in);
            boxes[i].max[a] = b < 200 ? boxes[i].min[a] + (float)(b % 16) * 0.5f : fuzz_coord(in) + g_off[a];
            spheres[i].center[a] = fuzz_coord(in) + g_off[a];
        }
        uint8_t b = fuzz_byte(in);
        spheres[i].radius = b < 220 ? (float)(b % 24) * 0.25f : fuzz_coord(in);
    }
}

static void run(const uint8_t* data, size_t size) {
    size_t before = vl_get_bytes_in_use();
    fuzz_input in = {data, size, 0};
    static scene s, moved;
    make_scene(&in, &s, 0);
    const uint8_t leaf = fuzz_byte(&in);
    vl_bvh* bvh = build(&s, leaf);
    g_built += bvh != NULL;
    if (bvh) {
        static vl_aabb boxes[MAX_QUERIES];
        static vl_sphere spheres[MAX_QUERIES];
        uint32_t n = 1 + fuzz_byte(&in) % MAX_QUERIES;
        make_queries(&in, n, boxes, spheres);
        uint32_t nb, ns;
        free(run_queries(bvh, &s, boxes, NULL, n, &nb));
        free(run_queries(bvh, &s, NULL, spheres, n, &ns));
        /* refit to moved primitives: as a fresh build of them, or an error and no change */
        moved = s;
        make_scene(&in, &moved, 1);
        vl_status st = s.boxes ? vl_bvh_refit_boxes(bvh, moved.box, NULL) : vl_bvh_refit_triangles(bvh, moved.xyz, NULL);
        const scene* now = &s;
        if (scene_valid(&moved)) {
            FUZZ_CHECK(st == VL_OK, "refit refused: %s", vl_status_string(st));
            now = &moved;
        } else {
            FUZZ_CHECK(st == (s.boxes ? VL_ERR_INVALID_BOUNDS : VL_ERR_INVALID_GEOMETRY), "bad refit: %s",
                       vl_status_string(st));
        }
        FUZZ_CHECK(vl_bvh_validate(bvh) == VL_OK, "refitted tree does not validate");
        vl_bvh* fresh = build(now, leaf);
        FUZZ_CHECK(fresh != NULL, "fresh build failed");
        for (int shape = 0; shape < 2; shape++) {
            uint32_t na, nf;
            vl_pair* a = run_queries(bvh, now, shape ? NULL : boxes, shape ? spheres : NULL, n, &na);
            vl_pair* f = run_queries(fresh, now, shape ? NULL : boxes, shape ? spheres : NULL, n, &nf);
            if (now->in_range)
                FUZZ_CHECK(na == nf && memcmp(a, f, sizeof(vl_pair) * na) == 0, "refit %u pairs, fresh build %u", na, nf);
            free(a), free(f);
        }
        vl_bvh_destroy(fresh);
        vl_bvh_destroy(bvh);
    }
    FUZZ_CHECK_NO_LEAK(before);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_near_then_far(data, size, g_off, run); }
