/* volley bench: queries per second of the batched overlaps, sweeps (boxes, spheres, capsules) and
 * closest points (on the caller's scratch) and of the same calls one query at a time, on queries
 * near the mesh's surfaces at the scale of its triangles (tests/scenes.h and capsule_scenes.h place
 * them as bench/ does; the closest points are the sphere sweeps' starting points, with no maximum
 * distance). */
#include <stdlib.h>
#include <string.h>

#include "bench_queries.h"
#include "capsule_scenes.h"

enum { SHAPE_BOX, SHAPE_SPHERE, SHAPE_CAPSULE };
enum { KIND_OVERLAP, KIND_SWEEP, KIND_CLOSEST };

/* Sets per scene: overlaps are cheaper than sweeps, so there are more of them. */
#define OVERLAP_QUERIES 65536u
#define OVERLAP_QUERIES_QUICK 4096u
#define SWEEP_QUERIES 16384u
#define SWEEP_QUERIES_QUICK 2048u

typedef struct query_set {
    uint32_t n;
    vl_aabb* boxes;
    vl_sphere* spheres;
    vl_box_sweep* box_sweeps;
    vl_sphere_sweep* sphere_sweeps;
    vl_capsule* capsules;
    vl_capsule_sweep* capsule_sweeps;
    vl_hit* hits;
    vl_point_query* points;
    vl_closest_hit* closest;
    void* scratch;
    size_t scratch_bytes;
    vl_pair_buffer pairs;
} query_set;

/* One run over the set: batches of `batch` on the scratch, or the single-query path (batch 0).
 * The first status other than VL_OK, else VL_OK. */
static vl_status run_once(const vl_bvh* bvh, query_set* q, int kind, int shape, uint32_t batch) {
    vl_status bad = VL_OK, st = VL_OK;
    const uint32_t n = q->n;
    const int sweep = kind == KIND_SWEEP;
    q->pairs.count = 0;
    if (kind == KIND_CLOSEST) {
        const vl_exec exec = {.scratch = q->scratch, .scratch_bytes = q->scratch_bytes};
        for (uint32_t i = 0; i < n; i += batch ? batch : 1) {
            uint32_t k = batch ? (n - i < batch ? n - i : batch) : 1;
            st = vl_bvh_closest_points(bvh, q->points + i, k, q->closest + i, batch ? &exec : NULL);
            if (st != VL_OK && bad == VL_OK) bad = st;
        }
        return bad;
    }
    const vl_exec exec = {.scratch = q->scratch, .scratch_bytes = q->scratch_bytes};
    const vl_exec* on = batch ? &exec : NULL;
    const uint32_t step = batch ? batch : 1;
    for (uint32_t i = 0; i < n; i += step) {
        const uint32_t k = n - i < step ? n - i : step;
        if (!sweep && shape == SHAPE_BOX) st = vl_bvh_overlap_boxes(bvh, q->boxes + i, k, &q->pairs, on);
        if (!sweep && shape == SHAPE_SPHERE) st = vl_bvh_overlap_spheres(bvh, q->spheres + i, k, &q->pairs, on);
        if (!sweep && shape == SHAPE_CAPSULE) st = vl_bvh_overlap_capsules(bvh, q->capsules + i, k, &q->pairs, on);
        if (sweep && shape == SHAPE_BOX)
            st = vl_bvh_sweep_boxes(bvh, q->box_sweeps + i, k, VL_QUERY_CLOSEST, q->hits + i, NULL, on);
        if (sweep && shape == SHAPE_SPHERE)
            st = vl_bvh_sweep_spheres(bvh, q->sphere_sweeps + i, k, VL_QUERY_CLOSEST, q->hits + i, NULL, on);
        if (sweep && shape == SHAPE_CAPSULE)
            st = vl_bvh_sweep_capsules(bvh, q->capsule_sweeps + i, k, VL_QUERY_CLOSEST, q->hits + i, NULL, on);
        if (st != VL_OK && bad == VL_OK) bad = st;
    }
    return bad;
}

/* Fills one row: best of `repeat` runs after a warm-up run. 0 on success. */
static int time_row(const vl_bvh* bvh, query_set* q, int kind, int shape, uint32_t batch, uint32_t repeat,
                    query_row* r) {
    static const char* const kinds[3] = {"overlaps", "sweeps", "closest points"};
    static const char* const shapes[3] = {"box", "sphere", "capsule"};
    double best = 1e30;
    for (uint32_t rep = 0; rep <= repeat; rep++) {
        double t0 = tool_now();
        vl_status st = run_once(bvh, q, kind, shape, batch);
        double dt = tool_now() - t0;
        if (st != VL_OK) {
            fprintf(stderr, "volley bench: %s %s %s failed: %s\n", r->scene, shapes[shape], kinds[kind],
                    vl_status_string(st));
            return 1;
        }
        if (rep) best = dt < best ? dt : best;
    }
    r->query = kind == KIND_CLOSEST ? "closest" : kind == KIND_SWEEP ? "sweep" : "overlap";
    r->shape = kind == KIND_CLOSEST ? "point" : shapes[shape];
    r->path = batch ? "volley_batch" : "volley_single";
    r->batch = batch ? batch : 1, r->count = q->n;
    r->mqueries = 1e-6 * q->n / best;
    r->pairs_per_query = kind == KIND_OVERLAP ? (double)q->pairs.count / q->n : 0.0;
    uint32_t hits = 0;
    for (uint32_t i = 0; i < q->n && kind == KIND_SWEEP; i++) hits += q->hits[i].prim != VL_NO_HIT;
    for (uint32_t i = 0; i < q->n && kind == KIND_CLOSEST; i++) hits += q->closest[i].prim != VL_NO_HIT;
    r->hit_percent = 100.0 * hits / q->n;
    return 0;
}

int bench_queries(const vl_bvh* bvh, const tool_scene* s, uint32_t batch, uint32_t repeat, int quick,
                  query_row* rows, uint32_t* row_count, tool_progress* p) {
    const scene_mesh* m = &s->mesh;
    const uint32_t no = quick ? OVERLAP_QUERIES_QUICK : OVERLAP_QUERIES;
    const uint32_t ns = quick ? SWEEP_QUERIES_QUICK : SWEEP_QUERIES;
    query_set q = {0};
    q.boxes = malloc(sizeof(vl_aabb) * no);
    q.spheres = malloc(sizeof(vl_sphere) * no);
    q.box_sweeps = malloc(sizeof(vl_box_sweep) * ns);
    q.sphere_sweeps = malloc(sizeof(vl_sphere_sweep) * ns);
    q.capsules = malloc(sizeof(vl_capsule) * no);
    q.capsule_sweeps = malloc(sizeof(vl_capsule_sweep) * ns);
    q.hits = malloc(sizeof(vl_hit) * ns);
    q.points = malloc(sizeof(vl_point_query) * ns);
    q.closest = malloc(sizeof(vl_closest_hit) * ns);
    /* scratch for the largest batch, the whole set, of any kind */
    size_t bytes_o = vl_bvh_overlap_scratch_size(bvh, no), bytes_s = vl_bvh_sweep_scratch_size(bvh, ns, VL_QUERY_CLOSEST);
    size_t bytes_c = vl_bvh_closest_scratch_size(bvh, ns);
    q.scratch_bytes = bytes_o > bytes_s ? bytes_o : bytes_s;
    q.scratch_bytes = q.scratch_bytes > bytes_c ? q.scratch_bytes : bytes_c;
    q.scratch_bytes = (q.scratch_bytes + VL_SCRATCH_ALIGNMENT - 1) / VL_SCRATCH_ALIGNMENT * VL_SCRATCH_ALIGNMENT;
    q.scratch = q.scratch_bytes ? aligned_alloc(VL_SCRATCH_ALIGNMENT, q.scratch_bytes) : NULL;
    int rc = 0;
    if (!q.boxes || !q.spheres || !q.box_sweeps || !q.sphere_sweeps || !q.capsules || !q.capsule_sweeps || !q.hits ||
        !q.points || !q.closest || (q.scratch_bytes && !q.scratch)) {
        fprintf(stderr, "volley bench: out of memory for the overlap, sweep and closest-point queries\n");
        rc = 1;
    } else {
        scene_overlap_queries(m, no, 77, q.boxes, q.spheres);
        scene_sweeps(m, ns, 2024, q.sphere_sweeps, q.box_sweeps);
        scene_capsule_queries(m, no, 77, q.capsules);
        scene_capsule_sweeps(m, ns, 2024, q.capsule_sweeps);
        for (uint32_t i = 0; i < ns; i++) {
            memcpy(q.points[i].point, q.sphere_sweeps[i].center, sizeof q.points[i].point);
            q.points[i].max_distance = INFINITY;
        }
    }
    static const char* const names[3][3] = {{"box overlaps", "sphere overlaps", "capsule overlaps"},
                                            {"box sweeps", "sphere sweeps", "capsule sweeps"},
                                            {"closest points", "", ""}};
    for (int kind = KIND_OVERLAP; kind <= KIND_CLOSEST && !rc; kind++) {
        q.n = kind == KIND_OVERLAP ? no : ns;
        uint32_t batches[3] = {batch < q.n ? batch : q.n, q.n, 0};
        for (int shape = 0; shape < (kind == KIND_CLOSEST ? 1 : 3) && !rc; shape++) {
            static char label[320];
            snprintf(label, sizeof label, "volley bench: %s, %s", s->name, names[kind][shape]);
            p->label = label;
            for (int k = 0; k < 3 && !rc; k++) {
                if (k == 1 && batches[0] == q.n) continue;
                query_row* r = &rows[(*row_count)++];
                snprintf(r->scene, sizeof r->scene, "%s", s->name);
                r->triangles = m->triangle_count;
                rc = time_row(bvh, &q, kind, shape, batches[k], repeat, r);
                tool_progress_update(p, -1);
            }
        }
    }
    free(q.boxes), free(q.spheres), free(q.box_sweeps), free(q.sphere_sweeps), free(q.hits), free(q.scratch);
    free(q.points), free(q.closest), free(q.capsules), free(q.capsule_sweeps);
    vl_pair_buffer_free(&q.pairs);
    return rc;
}
