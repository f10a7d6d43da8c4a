/* volley bench: raycast throughput of the batched path (vl_bvh_raycast) and the single-ray path
 * (vl_bvh_raycast1), beside Embree's and Bullet's when built in; the overlap, sweep and
 * closest-point queries, batched and single (bench_queries.c); and the broadphase kinds per frame on standard box scenes.
 * Tables on stdout; --json writes the same figures. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_queries.h"
#include "tool.h"

static const char bench_usage[] =
    "Usage: volley bench [MESH] [options]\n"
    "Rays per second of volley's batched and single-ray paths (and Embree's and Bullet's when the\n"
    "tool was built with them) on MESH, or on the procedural world and the bunny; box and sphere\n"
    "overlaps (65536 queries on the surface, sized like the triangles) and sphere and box sweeps\n"
    "(16384, closest hit), batched and one at a time, on the same scenes; then the broadphase\n"
    "kinds, microseconds per frame (the median frame), on the first three scenes of the README's\n"
    "broadphase table, with the boxes and moves of bench/bench_broadphase.cpp:\n"
    "\"8,192 boxes, 10% moving\", \"8,192 boxes, all moving\" and \"flat world, 16,384 boxes, 10% moving\".\n"
    "One thread. Warns when the machine is busy (load average against cores) and when repeated\n"
    "timings spread over 10%.\n"
    "\n"
    "  -r, --rays SET        random, diffuse, los (line of sight) or all (default all)\n"
    "  -b, --batch N         rays per vl_bvh_raycast call, and queries per overlap, sweep or\n"
    "                        closest-point call, 1 to 1048576 (default 1024); the whole set as one\n"
    "                        batch is measured too\n"
    "  -n, --count N         rays per set, 64 to 16777216 (default 262144)\n"
    "  -s, --scene NAME      world, bunny or all (default all: the bunny when its file is found)\n"
    "  -R, --repeat N        best of N runs (default 3)\n"
    "  -j, --json FILE       also write the figures as JSON\n"
    "      --no-peers        skip Embree and Bullet\n"
    "      --no-broadphase   skip the broadphase scenes\n"
    "      --only TABLE      one table: rays, queries (overlaps, sweeps, closest points) or broadphase\n"
    "  -q, --quick           small scenes and sets (4096 overlaps, 2048 sweeps and closest points; a\n"
    "                        smoke test, figures mean little)\n"
    "  -h, --help            this help\n"
    "\n"
    "JSON: {\"tool\", \"version\", \"backend\", \"simd_width\", \"build_type\", \"cpu\", \"cpu_features\",\n"
    " \"cores\", \"date\" (UTC), \"load_average\": {start, end}, \"noise\": {figures,\n"
    " spread_over_10_percent, worst_spread_percent}, \"peers\", \"builds\": [{scene, triangles, peer, ms}],\n"
    " \"raycast\": [{scene, triangles, rays, query, path, batch, count, mrays_per_s, hit_percent}\n"
    "  (embree_best rows add embree_path)],\n"
    " \"queries\": [{scene, triangles, query, shape, path, batch, count, mqueries_per_s,\n"
    "  pairs_per_query (overlaps) or hit_percent (sweeps, closest points)}],\n"
    " \"broadphase\": [{scene, boxes, moving_percent, kind, us_per_frame, pairs}]}\n"
    "path is volley_batch, volley_single, embree_loop, embree_best or bullet. embree_loop is Embree's\n"
    "rtcIntersect1/rtcOccluded1 loop; embree_best the fastest of Embree's paths on the set, named by\n"
    "embree_path: embree_1 (the loop), embree_1M (rtcIntersect1M stream), embree_8 and embree_16\n"
    "(rtcIntersect8/16 packets of consecutive rays) on its default build, embree_hq_1, embree_hq_1M,\n"
    "embree_hq_8 and embree_hq_16 on its high-quality build (RTC_BUILD_QUALITY_HIGH); the table's\n"
    "\"vs best\" column is the ratio to it. In raycast, query is closest or any; in queries, overlap,\n"
    "sweep (closest hit) or closest (closest points, shape point), and mqueries_per_s is millions a\n"
    "second.\n";

typedef struct ray_row {
    char scene[256];
    uint32_t triangles;
    const char* rays;
    const char* query;
    const char* path;
    const char* embree_path; /* embree_best rows: which of Embree's paths was fastest */
    uint32_t batch, count;
    double mrays, hit_percent;
} ray_row;

typedef struct build_row {
    char scene[256];
    uint32_t triangles;
    const char* peer;
    double ms;
} build_row;

typedef struct bp_row {
    const char* scene;
    uint32_t boxes, moving_percent;
    const char* kind;
    double us_per_frame;
    uint32_t pairs;
} bp_row;

typedef struct bench_out {
    ray_row rays[256];
    uint32_t ray_rows;
    build_row builds[24];
    uint32_t build_rows;
    bp_row bps[32];
    uint32_t bp_rows;
    query_row queries[2 * BENCH_QUERY_ROWS_PER_SCENE];
    uint32_t query_rows;
} bench_out;

static const char* const ray_sets[3] = {"random", "diffuse", "los"};

static void make_rays(const scene_mesh* m, int set, uint32_t n, vl_ray* rays) {
    if (set == 0) scene_rays_random(m, n, 1001, rays);
    else if (set == 1) scene_rays_diffuse(m, n, 1002, rays);
    else scene_rays_los(m, n, 1003, rays);
}

static uint32_t count_hits(const vl_hit* hits, uint32_t n) {
    uint32_t h = 0;
    for (uint32_t i = 0; i < n; i++) h += hits[i].prim != VL_NO_HIT;
    return h;
}

/* The spread of repeated timings, (slowest - fastest) / fastest, over every figure measured:
 * a loaded or noisy machine shows here before it shows in the figures. */
static struct {
    uint32_t figures, noisy; /* figures timed more than once; those that spread over NOISY_SPREAD */
    double worst;
} g_noise;
#define NOISY_SPREAD 0.10

static void note_spread(double fastest, double slowest) {
    if (!(fastest > 0)) return;
    double spread = (slowest - fastest) / fastest;
    g_noise.figures++;
    if (spread > NOISY_SPREAD) g_noise.noisy++;
    if (spread > g_noise.worst) g_noise.worst = spread;
}

/* Best of `repeat` runs of one path after a warm-up run, in Mrays/s. batch 0 is the single-ray path. */
static double time_volley(const vl_bvh* bvh, const vl_ray* rays, uint32_t n, uint32_t flags, uint32_t batch,
                          vl_hit* hits, uint32_t repeat) {
    double best = 1e30, worst = 0;
    for (uint32_t r = 0; r <= repeat; r++) {
        double t0 = tool_now();
        if (batch == 0) {
            for (uint32_t i = 0; i < n; i++) vl_bvh_raycast1(bvh, &rays[i], flags, &hits[i]);
        } else {
            for (uint32_t i = 0; i < n; i += batch)
                vl_bvh_raycast(bvh, rays + i, n - i < batch ? n - i : batch, flags, hits + i, NULL);
        }
        double dt = tool_now() - t0;
        if (r) best = dt < best ? dt : best, worst = dt > worst ? dt : worst;
    }
    if (repeat > 1) note_spread(best, worst);
    return 1e-6 * n / best;
}

/* Every Embree path on the rays (tool_embree_path_name), best of `repeat` runs each after a
 * warm-up: the rows embree_loop (its rtcIntersect1/rtcOccluded1 loop on the default build) and
 * embree_best (the fastest path, named in embree_path). A path whose hits stray from the loop's by
 * more than one ray in 10,000 is left out of the best, with a warning. */
static void bench_embree_paths(tool_peer* embree, const tool_scene* s, int set, const char* query, const vl_ray* rays,
                               uint32_t n, int any, uint32_t repeat, bench_out* out, tool_progress* p) {
    double loop_mrays = 0, best_mrays = 0;
    uint32_t loop_hits = 0, best_hits = 0, best_path = 0;
    for (uint32_t path = 0; path < tool_embree_path_count(); path++) {
        if (!tool_embree_path_ready(embree, path)) continue;
        double best = 1e30, worst = 0;
        uint32_t h = 0;
        int ok = 1;
        for (uint32_t rep = 0; rep <= repeat && ok; rep++) { /* the first run warms up */
            double t0 = tool_now();
            ok = tool_embree_trace_path(embree, path, rays, n, any, &h);
            double dt = tool_now() - t0;
            if (rep) best = dt < best ? dt : best, worst = dt > worst ? dt : worst;
        }
        if (!ok) continue;
        if (repeat > 1) note_spread(best, worst);
        double mrays = 1e-6 * n / best;
        if (path == 0) loop_mrays = mrays, loop_hits = h;
        else if ((h > loop_hits ? h - loop_hits : loop_hits - h) > n / 10000) {
            fprintf(stderr, "volley bench: %s, %s rays, %s hit: Embree's %s gave %u hits, its loop %u: left out\n",
                    s->name, ray_sets[set], query, tool_embree_path_name(path), h, loop_hits);
            continue;
        }
        if (mrays > best_mrays) best_mrays = mrays, best_hits = h, best_path = path;
        tool_progress_update(p, -1);
    }
    if (!(loop_mrays > 0)) return;
    ray_row* r = &out->rays[out->ray_rows++];
    snprintf(r->scene, sizeof r->scene, "%s", s->name);
    r->triangles = s->mesh.triangle_count, r->rays = ray_sets[set], r->query = query;
    r->path = "embree_loop", r->embree_path = NULL, r->batch = 1, r->count = n;
    r->mrays = loop_mrays, r->hit_percent = 100.0 * loop_hits / n;
    r = &out->rays[out->ray_rows++];
    snprintf(r->scene, sizeof r->scene, "%s", s->name);
    r->triangles = s->mesh.triangle_count, r->rays = ray_sets[set], r->query = query;
    r->path = "embree_best", r->embree_path = tool_embree_path_name(best_path), r->batch = 1, r->count = n;
    r->mrays = best_mrays, r->hit_percent = 100.0 * best_hits / n;
}

typedef struct bench_opts {
    int set; /* -1: all */
    uint32_t batch, count, repeat;
    int quick, peers, broadphase;
    int rays, queries; /* the raycast and the overlap, sweep and closest-point tables */
} bench_opts;

static int bench_scene(const tool_scene* s, const bench_opts* o, bench_out* out, tool_progress* p) {
    const scene_mesh* m = &s->mesh;
    double build_s = 0;
    vl_bvh* bvh = tool_build("bench", s, &build_s);
    if (!bvh) return 1;
    build_row* b = &out->builds[out->build_rows++];
    snprintf(b->scene, sizeof b->scene, "%s", s->name);
    b->triangles = m->triangle_count, b->peer = "volley", b->ms = 1e3 * build_s;
    tool_peer *embree = NULL, *bullet = NULL;
    if (o->peers && o->rays) {
        double sec = 0;
        if ((embree = tool_embree_create(m, &sec))) {
            b = &out->builds[out->build_rows++];
            snprintf(b->scene, sizeof b->scene, "%s", s->name);
            b->triangles = m->triangle_count, b->peer = "embree", b->ms = 1e3 * sec;
            if (tool_embree_build_hq(embree, m, &sec)) {
                b = &out->builds[out->build_rows++];
                snprintf(b->scene, sizeof b->scene, "%s", s->name);
                b->triangles = m->triangle_count, b->peer = "embree_hq", b->ms = 1e3 * sec;
            }
        }
        if ((bullet = tool_bullet_create(m, &sec))) {
            b = &out->builds[out->build_rows++];
            snprintf(b->scene, sizeof b->scene, "%s", s->name);
            b->triangles = m->triangle_count, b->peer = "bullet", b->ms = 1e3 * sec;
        }
    }
    const uint32_t n = o->count;
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    if (!rays || !hits) {
        fprintf(stderr, "volley bench: out of memory for %u rays\n", n);
        free(rays), free(hits);
        vl_bvh_destroy(bvh);
        tool_embree_destroy(embree);
        tool_bullet_destroy(bullet);
        return 1;
    }
    for (int set = 0; set < 3 && o->rays; set++) {
        if (o->set >= 0 && set != o->set) continue;
        make_rays(m, set, n, rays);
        for (uint32_t flags = 0; flags < 2; flags++) {
            const char* query = flags ? "any" : "closest";
            static char label[320];
            snprintf(label, sizeof label, "volley bench: %s, %s rays, %s hit", s->name, ray_sets[set], query);
            p->label = label;
            uint32_t batches[2] = {o->batch < n ? o->batch : n, n};
            for (int k = 0; k < 3; k++) {
                if (k == 1 && batches[0] == n) continue;
                uint32_t batch = k < 2 ? batches[k] : 0;
                ray_row* r = &out->rays[out->ray_rows++];
                snprintf(r->scene, sizeof r->scene, "%s", s->name);
                r->triangles = m->triangle_count, r->rays = ray_sets[set], r->query = query;
                r->path = batch ? "volley_batch" : "volley_single";
                r->batch = batch ? batch : 1, r->count = n;
                r->mrays = time_volley(bvh, rays, n, flags, batch, hits, o->repeat);
                r->hit_percent = 100.0 * count_hits(hits, n) / n;
                tool_progress_update(p, -1);
            }
            if (embree) bench_embree_paths(embree, s, set, query, rays, n, (int)flags, o->repeat, out, p);
            if (bullet && !flags) {
                uint32_t nb = n / 16 > 256 ? n / 16 : (n < 256 ? n : 256); /* Bullet is slow: a sixteenth */
                double t0 = tool_now();
                uint32_t h = tool_bullet_trace(bullet, rays, nb);
                double dt = tool_now() - t0;
                ray_row* r = &out->rays[out->ray_rows++];
                snprintf(r->scene, sizeof r->scene, "%s", s->name);
                r->triangles = m->triangle_count, r->rays = ray_sets[set], r->query = query;
                r->path = "bullet", r->batch = 1, r->count = nb;
                r->mrays = 1e-6 * nb / dt, r->hit_percent = 100.0 * h / nb;
                tool_progress_update(p, -1);
            }
        }
    }
    free(rays), free(hits);
    int rc = o->queries ? bench_queries(bvh, s, o->batch, o->repeat, o->quick, out->queries, &out->query_rows, p) : 0;
    vl_bvh_destroy(bvh);
    tool_embree_destroy(embree);
    tool_bullet_destroy(bullet);
    return rc;
}

/* ---- broadphase ----------------------------------------------------------------------------- */

typedef struct box_scene {
    const char* name;
    uint32_t boxes, moving_percent;
    int flat;
} box_scene;

/* Random boxes in a cube (or a flat slab) sized for a few overlaps per box; the moving ones
 * drift by a small random step each frame and stay inside. */
static void box_init(const box_scene* bs, test_rng* rng, vl_aabb* boxes, float* vel, float* extent) {
    float side = 2.4f * cbrtf((float)bs->boxes);
    if (bs->flat) side = 2.4f * sqrtf((float)bs->boxes / 2.0f);
    extent[0] = extent[2] = side;
    extent[1] = bs->flat ? 2.0f : side;
    for (uint32_t i = 0; i < bs->boxes; i++)
        for (int a = 0; a < 3; a++) {
            float h = test_float(rng, 0.2f, 0.8f), c = test_float(rng, h, extent[a] - h);
            boxes[i].min[a] = c - h, boxes[i].max[a] = c + h;
            vel[3 * i + a] = test_float(rng, -0.05f, 0.05f) * (bs->flat && a == 1 ? 0.0f : 1.0f);
        }
}

static void box_move(vl_aabb* b, float* v, const float* extent) {
    for (int a = 0; a < 3; a++) {
        if (b->min[a] + v[a] < 0 || b->max[a] + v[a] > extent[a]) v[a] = -v[a];
        b->min[a] += v[a], b->max[a] += v[a];
    }
}

static int compare_doubles(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int tool_broadphase_run(vl_broadphase_kind kind, uint32_t count, uint32_t moving_percent, int flat, uint32_t frames,
                        double* us_per_frame, uint32_t* pairs) {
    const box_scene bs = {"", count, moving_percent, flat};
    vl_aabb* boxes = malloc(sizeof(vl_aabb) * count);
    vl_aabb* moved = malloc(sizeof(vl_aabb) * count);
    float* vel = malloc(sizeof(float) * 3 * count);
    uint32_t* handles = malloc(sizeof(uint32_t) * count);
    uint32_t* movers = malloc(sizeof(uint32_t) * count);
    vl_status st = VL_ERR_OUT_OF_MEMORY;
    vl_broadphase* bp = NULL;
    double* spent = malloc(sizeof(double) * (frames ? frames : 1));
    vl_pair_buffer created = {0}, deleted = {0};
    if (boxes && moved && vel && handles && movers && spent) {
        test_rng rng = {77 + (uint64_t)count + (uint64_t)flat};
        float extent[3];
        box_init(&bs, &rng, boxes, vel, extent);
        vl_broadphase_desc desc = vl_broadphase_default_desc();
        desc.kind = kind;
        st = vl_broadphase_create(&desc, &bp);
        if (st == VL_OK) st = vl_broadphase_add(bp, handles, boxes, count, 0);
        if (st == VL_OK) st = vl_broadphase_commit(bp, &created, &deleted);
        uint32_t moving = count * moving_percent / 100;
        for (uint32_t f = 0; f < frames && st == VL_OK; f++) {
            for (uint32_t i = 0; i < moving; i++) {
                uint32_t b = (uint32_t)(((uint64_t)i * count) / moving); /* spread over the set */
                box_move(&boxes[b], &vel[3 * b], extent);
                moved[i] = boxes[b], movers[i] = handles[b];
            }
            created.count = deleted.count = 0;
            double t0 = tool_now();
            st = vl_broadphase_update(bp, movers, moved, moving);
            if (st == VL_OK) st = vl_broadphase_commit(bp, &created, &deleted);
            spent[f] = tool_now() - t0;
        }
    }
    if (st == VL_OK) {
        /* the median frame: one preemption of a loaded machine (milliseconds) would swamp a mean of few frames */
        qsort(spent, frames, sizeof *spent, compare_doubles);
        *us_per_frame = frames ? 1e6 * spent[frames / 2] : 0;
        vl_broadphase_get_pairs(bp, pairs);
    } else {
        fprintf(stderr, "volley: broadphase run failed: %s\n", vl_status_string(st));
    }
    vl_broadphase_destroy(bp);
    vl_pair_buffer_free(&created), vl_pair_buffer_free(&deleted);
    free(boxes), free(moved), free(vel), free(handles), free(movers), free(spent);
    return st == VL_OK ? 0 : 1;
}

/* The scenes of the README's broadphase table, made as bench/bench_broadphase.cpp makes them (the
 * same generator and seeds, so the same boxes, moves and pairs): n boxes in a cube of side 2 * world
 * (y squashed to +-1 when flat), half-sizes 0.5 to 2.5; a share moves on closed curves of
 * BP_FRAMES frames. */
#define BP_FRAMES 64

typedef struct bp_scene {
    uint32_t count, moving;
    vl_aabb* boxes;   /* frame 0 */
    uint32_t* movers; /* indices of the moving boxes */
    vl_aabb* path;    /* path[frame * moving + k]: the box of movers[k] */
} bp_scene;

static uint64_t g_bp_rng;
static float bp_rnd(float lo, float hi) {
    g_bp_rng = g_bp_rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((double)(g_bp_rng >> 40) * (1.0 / 16777216.0));
}

static void bp_scene_free(bp_scene* s) {
    free(s->boxes), free(s->movers), free(s->path);
    memset(s, 0, sizeof *s);
}

static int bp_scene_make(uint32_t n, int moving_percent, int flat, bp_scene* s) {
    memset(s, 0, sizeof *s);
    g_bp_rng = 12345 + n + (uint64_t)moving_percent * 7 + (uint64_t)flat;
    float world = flat ? sqrtf((float)n) * 2.0f : cbrtf((float)n) * 5.0f;
    s->count = n;
    s->boxes = malloc(sizeof(vl_aabb) * n);
    s->movers = malloc(sizeof(uint32_t) * n);
    if (!s->boxes || !s->movers) return 0;
    for (uint32_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            float c = (flat && a == 1) ? bp_rnd(-1, 1) : bp_rnd(-world, world);
            float e = bp_rnd(0.5f, 2.5f);
            s->boxes[i].min[a] = c - e, s->boxes[i].max[a] = c + e;
        }
        if ((uint32_t)bp_rnd(0, 100) < (uint32_t)moving_percent) s->movers[s->moving++] = i;
    }
    float* phase = malloc(sizeof(float) * 3 * (s->moving ? s->moving : 1));
    s->path = malloc(sizeof(vl_aabb) * BP_FRAMES * (size_t)(s->moving ? s->moving : 1));
    if (!phase || !s->path) {
        free(phase);
        return 0;
    }
    for (uint32_t k = 0; k < 3 * s->moving; k++) phase[k] = bp_rnd(0, 6.2831853f);
    for (int f = 0; f < BP_FRAMES; f++)
        for (uint32_t k = 0; k < s->moving; k++) {
            vl_aabb b = s->boxes[s->movers[k]];
            for (int a = 0; a < 3; a++) {
                if (flat && a == 1) continue;
                float turn = 6.2831853f * (float)f / BP_FRAMES * (float)(1 + (k + (uint32_t)a) % 2);
                float d = 2.0f * sinf(turn + phase[k * 3 + (uint32_t)a]);
                b.min[a] += d, b.max[a] += d;
            }
            s->path[(size_t)f * s->moving + k] = b;
        }
    free(phase);
    return 1;
}

/* One kind on one scene: a warm-up pass of `frames` frames (BP_FRAMES, or fewer for a quick
 * look), then `passes` more; the median frame (update + commit with created/deleted lists) of
 * all, and the spread of the passes' medians. */
static int bp_scene_run(const bp_scene* s, vl_broadphase_kind kind, uint32_t passes, uint32_t frames, double* us,
                        uint32_t* pairs) {
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    desc.kind = kind;
    vl_broadphase* bp = NULL;
    vl_pair_buffer created = {0}, deleted = {0};
    uint32_t* handles = malloc(sizeof(uint32_t) * s->count);
    uint32_t* moving = malloc(sizeof(uint32_t) * (s->moving ? s->moving : 1));
    double* spent = malloc(sizeof(double) * frames * (passes + 1));
    vl_status st = handles && moving && spent ? vl_broadphase_create(&desc, &bp) : VL_ERR_OUT_OF_MEMORY;
    if (st == VL_OK) st = vl_broadphase_add(bp, handles, s->boxes, s->count, 0);
    if (st == VL_OK) st = vl_broadphase_commit(bp, NULL, NULL);
    for (uint32_t k = 0; k < s->moving && st == VL_OK; k++) moving[k] = handles[s->movers[k]];
    for (uint32_t i = 0; i < frames * (passes + 1) && st == VL_OK; i++) {
        const vl_aabb* boxes = s->path + (size_t)(i % frames) * s->moving;
        double t0 = tool_now();
        st = vl_broadphase_update(bp, moving, boxes, s->moving);
        created.count = deleted.count = 0;
        if (st == VL_OK) st = vl_broadphase_commit(bp, &created, &deleted);
        spent[i] = tool_now() - t0;
    }
    if (st == VL_OK) {
        double lo = 1e30, hi = 0;
        for (uint32_t p = 1; p <= passes; p++) {
            qsort(spent + (size_t)p * frames, frames, sizeof *spent, compare_doubles);
            double m = spent[(size_t)p * frames + frames / 2];
            lo = m < lo ? m : lo, hi = m > hi ? m : hi;
        }
        if (passes > 1) note_spread(lo, hi);
        qsort(spent + frames, (size_t)frames * passes, sizeof *spent, compare_doubles);
        *us = 1e6 * spent[frames + (size_t)frames * passes / 2];
        vl_broadphase_get_pairs(bp, pairs);
    } else {
        fprintf(stderr, "volley bench: broadphase run failed: %s\n", vl_status_string(st));
    }
    vl_broadphase_destroy(bp);
    vl_pair_buffer_free(&created), vl_pair_buffer_free(&deleted);
    free(handles), free(moving), free(spent);
    return st == VL_OK ? 0 : 1;
}

static int bench_broadphase(const bench_opts* o, bench_out* out, tool_progress* p) {
    p->label = "volley bench: broadphases";
    /* the README's first three rows; --quick: the same kinds of scene, an eighth of the boxes */
    static const struct {
        const char *name, *quick_name;
        uint32_t boxes, moving_percent;
        int flat;
    } scenes[3] = {{"8,192 boxes, 10% moving", "1,024 boxes, 10% moving (quick)", 8192, 10, 0},
                   {"8,192 boxes, all moving", "1,024 boxes, all moving (quick)", 8192, 100, 0},
                   {"flat world, 16,384 boxes, 10% moving", "flat world, 2,048 boxes, 10% moving (quick)", 16384, 10, 1}};
    for (int sc = 0; sc < 3; sc++) {
        uint32_t n = o->quick ? scenes[sc].boxes / 8 : scenes[sc].boxes;
        bp_scene s;
        if (!bp_scene_make(n, (int)scenes[sc].moving_percent, scenes[sc].flat, &s)) {
            bp_scene_free(&s);
            fprintf(stderr, "volley bench: out of memory making the broadphase scenes\n");
            return 1;
        }
        for (uint32_t k = 0; k < tool_broadphase_kind_count; k++) {
            bp_row* r = &out->bps[out->bp_rows++];
            r->scene = o->quick ? scenes[sc].quick_name : scenes[sc].name;
            r->boxes = n, r->moving_percent = scenes[sc].moving_percent;
            r->kind = tool_broadphase_kinds[k].name;
            if (bp_scene_run(&s, tool_broadphase_kinds[k].kind, o->quick ? 1 : o->repeat, o->quick ? 16 : BP_FRAMES,
                             &r->us_per_frame, &r->pairs)) {
                bp_scene_free(&s);
                return 1;
            }
            tool_progress_update(p, -1);
        }
        bp_scene_free(&s);
    }
    return 0;
}

/* ---- output --------------------------------------------------------------------------------- */

static const ray_row* find_row(const bench_out* out, const ray_row* like, const char* path) {
    for (uint32_t i = 0; i < out->ray_rows; i++) {
        const ray_row* r = &out->rays[i];
        if (!strcmp(r->scene, like->scene) && r->rays == like->rays && r->query == like->query && !strcmp(r->path, path))
            return r;
    }
    return NULL;
}

/* Where and when the figures were taken, and how busy the machine was. */
typedef struct bench_machine {
    const char *cpu, *date, *build_type;
    unsigned cores;
    double load_start, load_end; /* 1-minute load averages, -1 when unknown */
} bench_machine;

/* A machine is busy when other work holds half its cores or more: the bench runs on one thread
 * and its figures then come out low and noisy. `own`: the bench's own share of the load. */
static int machine_busy(double load, unsigned cores, double own) {
    return load >= 0 && load - own >= 0.5 * (double)cores;
}

static void print_table(const bench_out* out, const bench_machine* mc) {
    printf("\nvolley %s, SIMD %s (%u lanes), %s build, one thread; %s, %u cores; %s\n", vl_get_version_string(),
           vl_get_simd_backend(), vl_get_simd_width(), mc->build_type, mc->cpu, mc->cores, mc->date);
    for (uint32_t i = 0; i < out->build_rows; i++)
        printf("build: %-12s %-9s %9u triangles %9.1f ms\n", out->builds[i].scene, out->builds[i].peer,
               out->builds[i].triangles, out->builds[i].ms);
    if (out->ray_rows)
        printf("\n%-12s %-8s %-8s %-22s %10s %10s %10s %10s %7s\n", "scene", "rays", "query", "path", "Mrays/s",
               "vs single", "vs Embree", "vs best", "hits");
    for (uint32_t i = 0; i < out->ray_rows; i++) {
        const ray_row* r = &out->rays[i];
        const ray_row* single = find_row(out, r, "volley_single");
        const ray_row* embree = find_row(out, r, "embree_loop");
        const ray_row* best = find_row(out, r, "embree_best");
        char path[48], vs_single[16] = "", vs_embree[16] = "", vs_best[16] = "";
        if (!strcmp(r->path, "volley_batch")) snprintf(path, sizeof path, "volley batch %u", r->batch);
        else if (r->embree_path) snprintf(path, sizeof path, "embree best: %s", r->embree_path + strlen("embree_"));
        else snprintf(path, sizeof path, "%s", r->path);
        if (single && single->mrays > 0) snprintf(vs_single, sizeof vs_single, "%.2fx", r->mrays / single->mrays);
        if (embree && embree->mrays > 0) snprintf(vs_embree, sizeof vs_embree, "%.2fx", r->mrays / embree->mrays);
        if (best && best->mrays > 0) snprintf(vs_best, sizeof vs_best, "%.2fx", r->mrays / best->mrays);
        printf("%-12s %-8s %-8s %-22s %10.2f %10s %10s %10s %6.1f%%\n", r->scene, r->rays, r->query, path, r->mrays,
               vs_single, vs_embree, vs_best, r->hit_percent);
    }
    if (out->query_rows) {
        printf("\n%-12s %-8s %-8s %-22s %10s %10s %10s %7s\n", "scene", "query", "shape", "path", "Mqueries/s",
               "vs single", "pairs/q", "hits");
        for (uint32_t i = 0; i < out->query_rows; i++) {
            const query_row* r = &out->queries[i];
            const query_row* single = NULL;
            for (uint32_t j = 0; j < out->query_rows; j++) {
                const query_row* c = &out->queries[j];
                if (!strcmp(c->scene, r->scene) && c->query == r->query && c->shape == r->shape &&
                    !strcmp(c->path, "volley_single"))
                    single = c;
            }
            char path[48], vs_single[16] = "", pairs[16] = "", hits[16] = "";
            if (!strcmp(r->path, "volley_batch")) snprintf(path, sizeof path, "volley batch %u", r->batch);
            else snprintf(path, sizeof path, "%s", r->path);
            if (single && single->mqueries > 0)
                snprintf(vs_single, sizeof vs_single, "%.2fx", r->mqueries / single->mqueries);
            if (!strcmp(r->query, "overlap")) snprintf(pairs, sizeof pairs, "%.2f", r->pairs_per_query);
            else snprintf(hits, sizeof hits, "%.1f%%", r->hit_percent);
            printf("%-12s %-8s %-8s %-22s %10.3f %10s %10s %7s\n", r->scene, r->query, r->shape, path, r->mqueries,
                   vs_single, pairs, hits);
        }
    }
    if (out->bp_rows) {
        printf("\n%-44s %8s %-14s %14s %10s\n", "broadphase scene", "boxes", "kind", "us/frame", "pairs");
        for (uint32_t i = 0; i < out->bp_rows; i++) {
            const bp_row* r = &out->bps[i];
            printf("%-44s %8u %-14s %14.1f %10u\n", r->scene, r->boxes, r->kind, r->us_per_frame, r->pairs);
        }
    }
}

static int write_json(const char* path, const bench_out* out, const bench_machine* mc) {
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "volley bench: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(f, "{\n  \"tool\": \"volley bench\",\n  \"version\": ");
    tool_json_string(f, vl_get_version_string());
    fprintf(f, ",\n  \"backend\": ");
    tool_json_string(f, vl_get_simd_backend());
    fprintf(f, ",\n  \"simd_width\": %u,\n  \"build_type\": ", vl_get_simd_width());
    tool_json_string(f, mc->build_type);
    fprintf(f, ",\n  \"cpu\": ");
    tool_json_string(f, mc->cpu);
    fprintf(f, ",\n  \"cpu_features\": ");
    tool_json_string(f, tool_cpu_features());
    fprintf(f, ",\n  \"cores\": %u,\n  \"date\": ", mc->cores);
    tool_json_string(f, mc->date);
    fprintf(f, ",\n  \"load_average\": {\"start\": %.2f, \"end\": %.2f},", mc->load_start, mc->load_end);
    fprintf(f, "\n  \"noise\": {\"figures\": %u, \"spread_over_10_percent\": %u, \"worst_spread_percent\": %.1f},",
            g_noise.figures, g_noise.noisy, 100.0 * g_noise.worst);
    fprintf(f, "\n  \"peers\": {\"embree\": %s, \"bullet\": %s},", tool_embree_built() ? "true" : "false",
            tool_bullet_built() ? "true" : "false");
    fprintf(f, "\n  \"builds\": [");
    for (uint32_t i = 0; i < out->build_rows; i++) {
        const build_row* b = &out->builds[i];
        fprintf(f, "%s\n    {\"scene\": ", i ? "," : "");
        tool_json_string(f, b->scene);
        fprintf(f, ", \"triangles\": %u, \"peer\": \"%s\", \"ms\": %.3f}", b->triangles, b->peer, b->ms);
    }
    fprintf(f, "\n  ],\n  \"raycast\": [");
    for (uint32_t i = 0; i < out->ray_rows; i++) {
        const ray_row* r = &out->rays[i];
        fprintf(f, "%s\n    {\"scene\": ", i ? "," : "");
        tool_json_string(f, r->scene);
        fprintf(f,
                ", \"triangles\": %u, \"rays\": \"%s\", \"query\": \"%s\", \"path\": \"%s\", \"batch\": %u, "
                "\"count\": %u, \"mrays_per_s\": %.4f, \"hit_percent\": %.2f",
                r->triangles, r->rays, r->query, r->path, r->batch, r->count, r->mrays, r->hit_percent);
        if (r->embree_path) fprintf(f, ", \"embree_path\": \"%s\"", r->embree_path);
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n  \"queries\": [");
    for (uint32_t i = 0; i < out->query_rows; i++) {
        const query_row* r = &out->queries[i];
        fprintf(f, "%s\n    {\"scene\": ", i ? "," : "");
        tool_json_string(f, r->scene);
        fprintf(f,
                ", \"triangles\": %u, \"query\": \"%s\", \"shape\": \"%s\", \"path\": \"%s\", \"batch\": %u, "
                "\"count\": %u, \"mqueries_per_s\": %.4f, ",
                r->triangles, r->query, r->shape, r->path, r->batch, r->count, r->mqueries);
        if (!strcmp(r->query, "overlap")) fprintf(f, "\"pairs_per_query\": %.3f}", r->pairs_per_query);
        else fprintf(f, "\"hit_percent\": %.2f}", r->hit_percent);
    }
    fprintf(f, "\n  ],\n  \"broadphase\": [");
    for (uint32_t i = 0; i < out->bp_rows; i++) {
        const bp_row* r = &out->bps[i];
        fprintf(f,
                "%s\n    {\"scene\": \"%s\", \"boxes\": %u, \"moving_percent\": %u, \"kind\": \"%s\", "
                "\"us_per_frame\": %.3f, \"pairs\": %u}",
                i ? "," : "", r->scene, r->boxes, r->moving_percent, r->kind, r->us_per_frame, r->pairs);
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "volley bench: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

int tool_bench(int argc, char** argv) {
    enum { OPT_NO_PEERS = 1000, OPT_NO_BROADPHASE, OPT_ONLY };
    static const struct option options[] = {
        {"rays", required_argument, NULL, 'r'},   {"batch", required_argument, NULL, 'b'},
        {"count", required_argument, NULL, 'n'},  {"scene", required_argument, NULL, 's'},
        {"repeat", required_argument, NULL, 'R'}, {"json", required_argument, NULL, 'j'},
        {"no-peers", no_argument, NULL, OPT_NO_PEERS}, {"no-broadphase", no_argument, NULL, OPT_NO_BROADPHASE},
        {"only", required_argument, NULL, OPT_ONLY},
        {"quick", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    bench_opts o = {-1, 1024, 0, 0, 0, 1, 1, 1, 1};
    const char *json = NULL, *scene_name = "all";
    int c;
    while ((c = getopt_long(argc, argv, ":r:b:n:s:R:j:qh", options, NULL)) != -1) {
        switch (c) {
        case 'r':
            o.set = -2;
            for (int k = 0; k < 3; k++)
                if (!strcmp(optarg, ray_sets[k])) o.set = k;
            if (!strcmp(optarg, "all")) o.set = -1;
            if (o.set == -2) {
                fprintf(stderr, "volley bench: --rays wants random, diffuse, los or all, got '%s'\n", optarg);
                return TOOL_EXIT_USAGE;
            }
            break;
        case 'b': if (!tool_parse_u32("bench", "--batch", optarg, 1, 1u << 20, &o.batch)) return TOOL_EXIT_USAGE; break;
        case 'n': if (!tool_parse_u32("bench", "--count", optarg, 64, 1u << 24, &o.count)) return TOOL_EXIT_USAGE; break;
        case 'R': if (!tool_parse_u32("bench", "--repeat", optarg, 1, 100, &o.repeat)) return TOOL_EXIT_USAGE; break;
        case 's': scene_name = optarg; break;
        case 'j': json = optarg; break;
        case 'q': o.quick = 1; break;
        case OPT_NO_PEERS: o.peers = 0; break;
        case OPT_NO_BROADPHASE: o.broadphase = 0; break;
        case OPT_ONLY:
            o.rays = !strcmp(optarg, "rays"), o.queries = !strcmp(optarg, "queries"), o.broadphase = !strcmp(optarg, "broadphase");
            if (!o.rays && !o.queries && !o.broadphase) {
                fprintf(stderr, "volley bench: --only wants rays, queries or broadphase, got '%s'\n", optarg);
                return TOOL_EXIT_USAGE;
            }
            break;
        case 'h': fputs(bench_usage, stdout); return TOOL_EXIT_OK;
        default: return tool_bad_option("bench", argv, optopt);
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "volley bench: one mesh at most, got '%s' and '%s'\nTry 'volley bench --help'.\n",
                argv[optind], argv[optind + 1]);
        return TOOL_EXIT_USAGE;
    }
    if (strcmp(scene_name, "all") && strcmp(scene_name, "world") && strcmp(scene_name, "bunny")) {
        fprintf(stderr, "volley bench: --scene wants world, bunny or all, got '%s'\n", scene_name);
        return TOOL_EXIT_USAGE;
    }
    if (json && !tool_writable("bench", json)) return TOOL_EXIT_FAIL;
    if (!o.count) o.count = o.quick ? 8192 : 262144;
    if (!o.repeat) o.repeat = o.quick ? 1 : 3;
    const char* mesh_path = optind < argc ? argv[optind] : NULL;

    bench_out* out = calloc(1, sizeof *out);
    if (!out) return TOOL_EXIT_FAIL;
    bench_machine mc = {tool_cpu_model(), tool_utc_now(), tool_build_type(), tool_cores(), tool_load_average(), -1};
    if (machine_busy(mc.load_start, mc.cores, 0.0))
        fprintf(stderr,
                "volley bench: the machine is busy (load average %.2f on %u cores): the figures will come out low and "
                "noisy; the README's were taken on an idle machine\n",
                mc.load_start, mc.cores);
    if (o.peers && !tool_embree_built() && !tool_bullet_built())
        fprintf(stderr, "volley bench: no Embree or Bullet in this volley (the build tree's tools/volley-peers has them)\n");
    if (strcmp(mc.build_type, "Release") && strcmp(mc.build_type, "RelWithDebInfo"))
        fprintf(stderr, "volley bench: a %s build: its figures are not the library's speed (build Release)\n",
                mc.build_type);
    tool_progress p;
    tool_progress_start(&p, "benchmarking");
    int rc = 0;
    for (int which = 0; which < 2 && !rc && (o.rays || o.queries); which++) {
        tool_scene s;
        if (mesh_path) {
            if (which) break;
            rc = tool_scene_file(mesh_path, &s);
        } else if (which == 0) {
            if (!strcmp(scene_name, "bunny")) continue;
            rc = tool_scene_world(o.quick, &s);
        } else {
            if (!strcmp(scene_name, "world")) continue;
            if (tool_scene_bunny(&s)) {
                if (!strcmp(scene_name, "bunny")) rc = 1;
                else fprintf(stderr, "volley bench: bunny skipped\n");
                continue;
            }
        }
        if (rc) break;
        rc = bench_scene(&s, &o, out, &p);
        tool_scene_free(&s);
    }
    if (!rc && o.broadphase) rc = bench_broadphase(&o, out, &p);
    tool_progress_done(&p);
    if (!rc) {
        mc.load_end = tool_load_average();
        print_table(out, &mc);
        if (g_noise.noisy)
            printf("\nnoise: %u of %u figures varied more than %.0f%% between repetitions (at worst %.0f%%)%s: take them "
                   "as rough; rerun on an idle machine, or with --repeat 5\n",
                   g_noise.noisy, g_noise.figures, 100.0 * NOISY_SPREAD, 100.0 * g_noise.worst,
                   machine_busy(mc.load_end, mc.cores, 1.0) ? ", the machine busy" : "");
        else if (machine_busy(mc.load_end, mc.cores, 1.0))
            printf("\nbusy: load average %.2f on %u cores at the end: other work ran beside the bench\n", mc.load_end,
                   mc.cores);
        if (json) rc = write_json(json, out, &mc);
        if (json && !rc) printf("\nwrote %s\n", json);
    }
    free(out);
    return rc ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
}
