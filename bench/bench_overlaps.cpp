// Overlap query bench, one thread: volley batched box and sphere overlaps (batches of 64, 1024,
// 16384 queries; the plain form and the caller's-scratch form) and single-query, against Bullet's
// btBvhTriangleMeshShape::processAllTriangles with an exact test in the callback (what a Bullet
// user writes: a box-triangle separating axis test, a sphere-triangle closest point), when CMake
// found Bullet. Scenes: the bunny (when the data folder is there) and the procedural world of
// 1.1M triangles; queries are placed on the surface, sized like the triangles near them.
// items_per_second is queries per second; pairs/query the mean number of pairs. Also refit
// against build time on the world.
//   volley_bench --benchmark_filter='overlap/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <volley/volley.h>

#include "bench_exec.h"
#include "bench_scenes.h"

namespace {

constexpr uint32_t kQueries = 1u << 16;

struct OverlapScene {
    scene_mesh mesh{};
    vl_bvh* bvh = nullptr;
    std::vector<vl_aabb> boxes;
    std::vector<vl_sphere> spheres;
#ifdef VOLLEY_BENCH_BULLET
    BulletMesh bullet;
#endif
};

// The queries on the surface, placed as the volley tool's bench places them (tests/scenes.h).
void make_queries(OverlapScene* s) {
    s->boxes.resize(kQueries);
    s->spheres.resize(kQueries);
    scene_overlap_queries(&s->mesh, kQueries, 77, s->boxes.data(), s->spheres.data());
}

OverlapScene* get_scene(int which) { return bench_scene(which, make_queries); }

// batch 0: the single-query form on every query; otherwise batches of `batch` queries, plain or
// on one scratch block made before the timing.
void BM_volley(benchmark::State& state, int which, int spheres, bool own_scratch) {
    OverlapScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    bench_overlap_loop(state, s->bvh, kQueries, own_scratch,
                       [&](uint32_t i, uint32_t n, uint32_t batch, vl_pair_buffer* out, void* scratch, size_t bytes) {
                           if (batch == 0) {
                               if (spheres) vl_bvh_overlap_spheres(s->bvh, &s->spheres[i], 1, out, nullptr);
                               else vl_bvh_overlap_boxes(s->bvh, &s->boxes[i], 1, out, nullptr);
                           } else if (own_scratch) {
                               if (spheres) vl_bvh_overlap_spheres(s->bvh, &s->spheres[i], n, out, on_scratch(scratch, bytes));
                               else vl_bvh_overlap_boxes(s->bvh, &s->boxes[i], n, out, on_scratch(scratch, bytes));
                           } else {
                               if (spheres) vl_bvh_overlap_spheres(s->bvh, &s->spheres[i], n, out, NULL);
                               else vl_bvh_overlap_boxes(s->bvh, &s->boxes[i], n, out, NULL);
                           }
                       });
}

void BM_volley_build(benchmark::State& state, int which) {
    OverlapScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    const scene_mesh& m = s->mesh;
    for (auto _ : state) {
        vl_bvh* bvh = nullptr;
        vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, nullptr, &bvh, NULL);
        state.PauseTiming();
        vl_bvh_destroy(bvh);
        state.ResumeTiming();
    }
    state.counters["tris"] = m.triangle_count;
}

// Refit to vertices moved by a small wave, alternating with the built ones, so that every
// iteration rewrites the tree.
void BM_volley_refit(benchmark::State& state, int which) {
    OverlapScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    const scene_mesh& m = s->mesh;
    vl_bvh* bvh = nullptr;
    vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, nullptr, &bvh, NULL);
    std::vector<float> moved(m.xyz, m.xyz + 3 * (size_t)m.vertex_count);
    for (size_t i = 0; i < moved.size(); i += 3) moved[i + 1] += 0.2f * std::sin(moved[i] * 0.3f);
    uint64_t k = 0;
    for (auto _ : state) vl_bvh_refit_triangles(bvh, (k++ & 1) ? m.xyz : moved.data(), NULL);
    vl_bvh_refit_triangles(bvh, moved.data(), NULL);
    vl_bvh_stats st{};
    vl_bvh_get_stats(bvh, &st);
    state.counters["sah_growth"] = st.sah_growth;
    state.counters["tris"] = m.triangle_count;
    vl_bvh_destroy(bvh);
}

#ifdef VOLLEY_BENCH_BULLET
// Straightforward exact tests as a Bullet user writes them in the callback.
bool box_triangle(const btVector3& bmin, const btVector3& bmax, const btVector3* tri) {
    const btVector3 c = (bmin + bmax) * 0.5f, h = (bmax - bmin) * 0.5f;
    const btVector3 v[3] = {tri[0] - c, tri[1] - c, tri[2] - c};
    const btVector3 e[3] = {v[1] - v[0], v[2] - v[1], v[0] - v[2]};
    auto apart = [&](const btVector3& L) {
        float p0 = L.dot(v[0]), p1 = L.dot(v[1]), p2 = L.dot(v[2]);
        float r = h.x() * std::fabs(L.x()) + h.y() * std::fabs(L.y()) + h.z() * std::fabs(L.z());
        return std::min({p0, p1, p2}) > r || std::max({p0, p1, p2}) < -r;
    };
    for (int a = 0; a < 3; a++) {
        float lo = std::min({v[0][a], v[1][a], v[2][a]}), hi = std::max({v[0][a], v[1][a], v[2][a]});
        if (lo > h[a] || hi < -h[a]) return false;
    }
    if (apart(e[0].cross(e[1]))) return false;
    const btVector3 axes[3] = {btVector3(1, 0, 0), btVector3(0, 1, 0), btVector3(0, 0, 1)};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (apart(axes[j].cross(e[i]))) return false;
    return true;
}

// Ericson's closest point on a triangle.
btVector3 closest_on_triangle(const btVector3& p, const btVector3& a, const btVector3& b, const btVector3& c) {
    btVector3 ab = b - a, ac = c - a, ap = p - a;
    float d1 = ab.dot(ap), d2 = ac.dot(ap);
    if (d1 <= 0 && d2 <= 0) return a;
    btVector3 bp = p - b;
    float d3 = ab.dot(bp), d4 = ac.dot(bp);
    if (d3 >= 0 && d4 <= d3) return b;
    float vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + ab * (d1 / (d1 - d3));
    btVector3 cp = p - c;
    float d5 = ab.dot(cp), d6 = ac.dot(cp);
    if (d6 >= 0 && d5 <= d6) return c;
    float vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + ac * (d2 / (d2 - d6));
    float va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    float denom = 1.0f / (va + vb + vc);
    return a + ab * (vb * denom) + ac * (vc * denom);
}

struct BoxCallback : btTriangleCallback {
    btVector3 bmin, bmax;
    uint32_t query = 0;
    std::vector<vl_pair>* out = nullptr;
    void processTriangle(btVector3* tri, int, int index) override {
        if (box_triangle(bmin, bmax, tri)) out->push_back({query, (uint32_t)index});
    }
};

struct SphereCallback : btTriangleCallback {
    btVector3 center;
    float r2 = 0;
    uint32_t query = 0;
    std::vector<vl_pair>* out = nullptr;
    void processTriangle(btVector3* tri, int, int index) override {
        if ((closest_on_triangle(center, tri[0], tri[1], tri[2]) - center).length2() <= r2)
            out->push_back({query, (uint32_t)index});
    }
};

void BM_bullet(benchmark::State& state, int which, int spheres) {
    OverlapScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    if (!s->bullet.shape) s->bullet.build(s->mesh);
    std::vector<vl_pair> out;
    out.reserve(1u << 20);
    uint64_t done = 0, pairs = 0;
    for (auto _ : state) {
        out.clear();
        for (uint32_t i = 0; i < kQueries; i++) {
            if (spheres) {
                const vl_sphere& q = s->spheres[i];
                SphereCallback cb;
                cb.center = btVector3(q.center[0], q.center[1], q.center[2]);
                cb.r2 = q.radius * q.radius, cb.query = i, cb.out = &out;
                btVector3 r(q.radius, q.radius, q.radius);
                s->bullet.shape->processAllTriangles(&cb, cb.center - r, cb.center + r);
            } else {
                const vl_aabb& q = s->boxes[i];
                BoxCallback cb;
                cb.bmin = btVector3(q.min[0], q.min[1], q.min[2]);
                cb.bmax = btVector3(q.max[0], q.max[1], q.max[2]);
                cb.query = i, cb.out = &out;
                s->bullet.shape->processAllTriangles(&cb, cb.bmin, cb.bmax);
            }
        }
        done += kQueries;
        pairs += out.size();
    }
    bench_report_pairs(state, done, pairs);
}

#endif

int register_all() {
    const bool bunny = bench_bunny_present();
    for (int which = bunny ? 0 : 1; which < 2; which++) {
        const std::string sc = which ? "world" : "bunny";
        for (int spheres = 0; spheres < 2; spheres++) {
            const std::string p = "overlap/" + sc + "/" + (spheres ? "spheres" : "boxes") + "/";
            bench_register_batches(p, BM_volley, which, spheres);
            benchmark::RegisterBenchmark((p + "volley_single").c_str(), BM_volley, which, spheres, false)
                ->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef VOLLEY_BENCH_BULLET
            benchmark::RegisterBenchmark((p + "bullet").c_str(), BM_bullet, which, spheres)
                ->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
        }
    }
    benchmark::RegisterBenchmark("overlap/refit/world/volley_build", BM_volley_build, 1)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark("overlap/refit/world/volley_refit", BM_volley_refit, 1)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    return 0;
}

const int registered = register_all();

} // namespace
