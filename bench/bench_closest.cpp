// Closest-point bench, one thread: volley batched (batches of 64, 1024, 16384) and single-query,
// against Embree 3's rtcPointQuery with the standard closest-point callback (the nearest point of
// each triangle the query's sphere reaches, in float, Ericson's Voronoi regions; the radius
// shrinks to the best distance) when CMake found Embree, on the same points. Scenes: the bunny
// (when the data folder is there) and the procedural world (1.1M triangles). Point sets: near the
// surfaces (a random point of a random triangle moved by up to two mean edges in a random
// direction) and anywhere in the scene's box; max distance infinite, or 4 mean edges. Rows:
//   closest/<scene>/<points>_<max>/volley_batch/batch:N, volley_single, embree
// items_per_second is queries per second; hit% the share answered within the max distance.
//   volley_bench --benchmark_filter='closest/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <volley/volley.h>

#include "bench_scenes.h"

namespace {

constexpr uint32_t kQueries = 1u << 14;

struct ClosestScene {
    scene_mesh mesh{};
    vl_bvh* bvh = nullptr;
    double edge = 0; // mean edge length
    std::vector<vl_point_query> sets[2][2]; // [surface, anywhere][infinite, finite]
#ifdef VOLLEY_BENCH_EMBREE
    RTCDevice device = nullptr;
    RTCScene scene = nullptr;
#endif
};

double mean_edge(const scene_mesh& m) {
    double edge = 0;
    for (uint32_t i = 0; i < m.triangle_count; i += 7) {
        const float* a = m.xyz + 3 * (size_t)m.indices[3 * (size_t)i];
        const float* b = m.xyz + 3 * (size_t)m.indices[3 * (size_t)i + 1];
        edge += std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
    }
    return edge / ((m.triangle_count + 6) / 7);
}

void make_points(ClosestScene* s) {
    const scene_mesh& m = s->mesh;
    s->edge = mean_edge(m);
    test_rng rng = {2025};
    std::vector<vl_point_query> surface(kQueries), anywhere(kQueries);
    for (uint32_t i = 0; i < kQueries; i++) {
        const uint32_t* t = m.indices + 3 * (size_t)test_u32(&rng, m.triangle_count);
        const float *p0 = m.xyz + 3 * (size_t)t[0], *p1 = m.xyz + 3 * (size_t)t[1], *p2 = m.xyz + 3 * (size_t)t[2];
        float u = test_float(&rng, 0, 1), v = test_float(&rng, 0, 1), d[3];
        if (u + v > 1) u = 1 - u, v = 1 - v;
        scene_direction(&rng, d);
        float off = (float)s->edge * test_float(&rng, 0, 2);
        for (int a = 0; a < 3; a++) {
            surface[i].point[a] = p0[a] + u * (p1[a] - p0[a]) + v * (p2[a] - p0[a]) + off * d[a];
            anywhere[i].point[a] = test_float(&rng, m.lo[a], m.hi[a]);
        }
    }
    for (int set = 0; set < 2; set++)
        for (int fin = 0; fin < 2; fin++) {
            s->sets[set][fin] = set ? anywhere : surface;
            for (auto& q : s->sets[set][fin]) q.max_distance = fin ? (float)(4 * s->edge) : INFINITY;
        }
}

ClosestScene* get_scene(int which) { return bench_scene(which, make_points); }

// batch 0: each query alone; otherwise batches of `batch`.
void BM_volley(benchmark::State& state, int which, int set, int fin) {
    ClosestScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    const std::vector<vl_point_query>& q = s->sets[set][fin];
    const uint32_t batch = (uint32_t)state.range(0);
    std::vector<vl_closest_hit> hits(kQueries);
    uint64_t done = 0;
    for (auto _ : state) {
        bench_batches(kQueries, batch, [&](uint32_t i, uint32_t n) { vl_bvh_closest_points(s->bvh, &q[i], n, &hits[i], NULL); });
        done += kQueries;
    }
    bench_report_hits(state, done, hits, kQueries);
}

#ifdef VOLLEY_BENCH_EMBREE
// The callback's state: the mesh and the best so far.
struct EmbreeBest {
    const scene_mesh* mesh;
    unsigned prim;
    float point[3];
};

inline float dot(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Closest point to p on triangle abc, in float: Ericson's Voronoi regions (Real-Time Collision
// Detection 5.1.5), as the Embree tutorial's callback computes it.
void closest_on_triangle(const float p[3], const float a[3], const float b[3], const float c[3], float out[3]) {
    float ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int k = 0; k < 3; k++)
        ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k], bp[k] = p[k] - b[k], cp[k] = p[k] - c[k];
    const float d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) return (void)std::copy(a, a + 3, out);
    const float d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) return (void)std::copy(b, b + 3, out);
    const float d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) return (void)std::copy(c, c + 3, out);
    const float vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        const float v = d1 / (d1 - d3);
        for (int k = 0; k < 3; k++) out[k] = a[k] + v * ab[k];
        return;
    }
    const float vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        const float w = d2 / (d2 - d6);
        for (int k = 0; k < 3; k++) out[k] = a[k] + w * ac[k];
        return;
    }
    const float va = d3 * d6 - d5 * d4;
    if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
        const float w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; k++) out[k] = b[k] + w * (c[k] - b[k]);
        return;
    }
    const float den = 1.0f / (va + vb + vc), v = vb * den, w = vc * den;
    for (int k = 0; k < 3; k++) out[k] = a[k] + ab[k] * v + ac[k] * w;
}

bool embree_closest(RTCPointQueryFunctionArguments* args) {
    auto* best = (EmbreeBest*)args->userPtr;
    const scene_mesh& m = *best->mesh;
    const unsigned* t = m.indices + 3 * (size_t)args->primID;
    const float p[3] = {args->query->x, args->query->y, args->query->z};
    float c[3], d[3];
    closest_on_triangle(p, m.xyz + 3 * (size_t)t[0], m.xyz + 3 * (size_t)t[1], m.xyz + 3 * (size_t)t[2], c);
    for (int k = 0; k < 3; k++) d[k] = c[k] - p[k];
    const float dist = std::sqrt(dot(d, d));
    if (!(dist < args->query->radius)) return false;
    args->query->radius = dist; // the search sphere shrinks
    best->prim = args->primID;
    std::copy(c, c + 3, best->point);
    return true;
}

void BM_embree(benchmark::State& state, int which, int set, int fin) {
    ClosestScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    if (!s->scene) {
        s->device = rtcNewDevice("threads=1");
        s->scene = bench_embree_build(s->device, s->mesh);
    }
    const std::vector<vl_point_query>& q = s->sets[set][fin];
    std::vector<vl_closest_hit> hits(kQueries);
    uint64_t done = 0;
    for (auto _ : state) {
        for (uint32_t i = 0; i < kQueries; i++) {
            RTCPointQuery pq;
            pq.x = q[i].point[0], pq.y = q[i].point[1], pq.z = q[i].point[2];
            pq.time = 0.0f;
            pq.radius = q[i].max_distance;
            RTCPointQueryContext ctx;
            rtcInitPointQueryContext(&ctx);
            EmbreeBest best = {&s->mesh, RTC_INVALID_GEOMETRY_ID, {0, 0, 0}};
            rtcPointQuery(s->scene, &pq, &ctx, embree_closest, &best);
            hits[i].prim = best.prim == RTC_INVALID_GEOMETRY_ID ? VL_NO_HIT : best.prim;
            hits[i].distance = pq.radius;
        }
        done += kQueries;
    }
    bench_report_hits(state, done, hits, kQueries);
}
#endif

int register_all() {
    const bool bunny = bench_bunny_present();
    static const char* const sets[2] = {"surface", "anywhere"};
    static const char* const maxes[2] = {"inf", "finite"};
    for (int which = bunny ? 0 : 1; which < 2; which++)
        for (int set = 0; set < 2; set++)
            for (int fin = 0; fin < 2; fin++) {
                std::string p = std::string("closest/") + (which ? "world" : "bunny") + "/" + sets[set] + "_" +
                                maxes[fin] + "/";
                bench_batch_sizes(benchmark::RegisterBenchmark((p + "volley_batch").c_str(), BM_volley, which, set, fin));
                benchmark::RegisterBenchmark((p + "volley_single").c_str(), BM_volley, which, set, fin)
                    ->ArgName("batch")->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef VOLLEY_BENCH_EMBREE
                benchmark::RegisterBenchmark((p + "embree").c_str(), BM_embree, which, set, fin)
                    ->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
            }
    return 0;
}

const int registered = register_all();

} // namespace
