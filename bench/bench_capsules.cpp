// Capsule overlap and sweep bench, one thread: volley batched (batches of 64, 1024, 16384, plain
// and on caller scratch) and single-query, against Bullet when CMake found it. Scenes: the bunny
// (when the data folder is there) and the procedural world of bench_bvh.cpp (1.1M triangles).
// Queries are placed as the sphere benches place theirs (tests/capsule_scenes.h on
// tests/scenes.h's scene_overlap_queries and scene_sweeps): on or near the surface, at the
// triangles' scale, each capsule with a random axis.
// The Bullet rows:
// - capsule_overlap/.../bullet: btBvhTriangleMeshShape::processAllTriangles over the capsule's
//   box (its segment's box grown by the radius), with an exact capsule-triangle test in the
//   callback in float, as a Bullet user writes it: the segment against the triangle (Ericson,
//   Real-Time Collision Detection 5.1.10: zero where the segment crosses the face, else the least
//   of the endpoints' distances to the face where they project inside it and the segment's
//   distances to the 3 edges by 5.1.9's closest points of two segments) within the radius;
// - capsule_sweep/.../bullet: btCollisionWorld::convexSweepTest with a btCapsuleShape (radius, the
//   segment's length as its height, turned from Bullet's Y axis onto the segment) from the
//   segment's middle along dir * tmax, against one btBvhTriangleMeshShape in a btCollisionWorld,
//   ClosestConvexResultCallback (as bench_bvh_sweep.cpp sweeps spheres and boxes).
// items_per_second is queries (or sweeps) per second; pairs/query the mean number of pairs, hit%
// the sweeps that hit.
//   volley_bench --benchmark_filter='capsule_'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <volley/volley.h>

#include "../tests/capsule_scenes.h"
#include "bench_exec.h"
#include "bench_scenes.h"

namespace {

constexpr uint32_t kQueries = 1u << 16;
constexpr uint32_t kSweeps = 1u << 14;

struct CapsuleScene {
    scene_mesh mesh{};
    vl_bvh* bvh = nullptr;
    std::vector<vl_capsule> capsules;
    std::vector<vl_capsule_sweep> sweeps;
#ifdef VOLLEY_BENCH_BULLET
    BulletMesh bullet;
    BulletWorld world;
    std::vector<std::unique_ptr<btCapsuleShape>> shapes;
#endif
};

// The queries and sweeps, placed as the sphere benches place theirs (tests/capsule_scenes.h).
void make_queries(CapsuleScene* s) {
    s->capsules.resize(kQueries);
    scene_capsule_queries(&s->mesh, kQueries, 77, s->capsules.data());
    s->sweeps.resize(kSweeps);
    scene_capsule_sweeps(&s->mesh, kSweeps, 2024, s->sweeps.data());
}

CapsuleScene* get_scene(int which) { return bench_scene(which, make_queries); }

// batch 0: the single-query form on every query; otherwise batches of `batch`, plain or on one
// scratch block made before the timing.
void BM_overlap(benchmark::State& state, int which, bool own_scratch) {
    CapsuleScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    bench_overlap_loop(state, s->bvh, kQueries, own_scratch,
                       [&](uint32_t i, uint32_t n, uint32_t, vl_pair_buffer* out, void* scratch, size_t bytes) {
                           vl_bvh_overlap_capsules(s->bvh, &s->capsules[i], n, out, on_scratch(scratch, bytes));
                       });
}

void BM_sweep(benchmark::State& state, int which, bool own_scratch) {
    CapsuleScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    bench_sweep_loop(state, s->bvh, kSweeps, own_scratch,
                     [&](uint32_t i, uint32_t n, uint32_t, vl_hit* hits, void* scratch, size_t bytes) {
                         vl_bvh_sweep_capsules(s->bvh, &s->sweeps[i], n, 0, hits, nullptr, on_scratch(scratch, bytes));
                     });
}

#ifdef VOLLEY_BENCH_BULLET
// Closest points of segments p1 + s d1 and p2 + t d2 (s, t in [0, 1]): the squared distance.
float segment_segment2(const btVector3& p1, const btVector3& d1, const btVector3& p2, const btVector3& d2) {
    const btVector3 r = p1 - p2;
    const float a = d1.dot(d1), e = d2.dot(d2), f = d2.dot(r);
    float s = 0.0f, t = 0.0f;
    if (a <= 0.0f && e <= 0.0f) return r.length2();
    if (a <= 0.0f) {
        t = std::min(std::max(f / e, 0.0f), 1.0f);
    } else {
        const float c = d1.dot(r);
        if (e <= 0.0f) {
            s = std::min(std::max(-c / a, 0.0f), 1.0f);
        } else {
            const float b = d1.dot(d2), denom = a * e - b * b;
            s = denom != 0.0f ? std::min(std::max((b * f - c * e) / denom, 0.0f), 1.0f) : 0.0f;
            t = (b * s + f) / e;
            if (t < 0.0f) t = 0.0f, s = std::min(std::max(-c / a, 0.0f), 1.0f);
            else if (t > 1.0f) t = 1.0f, s = std::min(std::max((b - c) / a, 0.0f), 1.0f);
        }
    }
    return (p1 + d1 * s - p2 - d2 * t).length2();
}

// The capsule (segment p q, radius r) against triangle tri, in float.
bool capsule_triangle(const btVector3& p, const btVector3& q, float r2, const btVector3* tri) {
    const btVector3 d = q - p, n = (tri[1] - tri[0]).cross(tri[2] - tri[0]);
    auto inside = [&](const btVector3& x) {
        for (int i = 0; i < 3; i++)
            if ((tri[(i + 1) % 3] - tri[i]).cross(x - tri[i]).dot(n) < 0.0f) return false;
        return true;
    };
    const float nn = n.length2();
    if (nn > 0.0f) {
        const float sp = (p - tri[0]).dot(n), sq = (q - tri[0]).dot(n);
        if (sp != sq && ((sp <= 0.0f && sq >= 0.0f) || (sp >= 0.0f && sq <= 0.0f)) && inside(p + d * (sp / (sp - sq))))
            return true;
        if (sp * sp <= r2 * nn && inside(p - n * (sp / nn))) return true;
        if (sq * sq <= r2 * nn && inside(q - n * (sq / nn))) return true;
    }
    for (int i = 0; i < 3; i++)
        if (segment_segment2(p, d, tri[i], tri[(i + 1) % 3] - tri[i]) <= r2) return true;
    return false;
}

struct CapsuleCallback : btTriangleCallback {
    btVector3 p, q;
    float r2 = 0.0f;
    uint32_t query = 0;
    std::vector<vl_pair>* out = nullptr;
    void processTriangle(btVector3* tri, int, int index) override {
        if (capsule_triangle(p, q, r2, tri)) out->push_back({query, (uint32_t)index});
    }
};

void BM_bullet_overlap(benchmark::State& state, int which) {
    CapsuleScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    if (!s->bullet.shape) s->bullet.build(s->mesh);
    std::vector<vl_pair> out;
    out.reserve(1u << 20);
    uint64_t done = 0, pairs = 0;
    for (auto _ : state) {
        out.clear();
        for (uint32_t i = 0; i < kQueries; i++) {
            const vl_capsule& c = s->capsules[i];
            CapsuleCallback cb;
            cb.p = btVector3(c.a[0], c.a[1], c.a[2]), cb.q = btVector3(c.b[0], c.b[1], c.b[2]);
            cb.r2 = c.radius * c.radius, cb.query = i, cb.out = &out;
            const btVector3 r(c.radius, c.radius, c.radius);
            btVector3 lo = cb.p, hi = cb.p;
            lo.setMin(cb.q), hi.setMax(cb.q);
            s->bullet.shape->processAllTriangles(&cb, lo - r, hi + r);
        }
        done += kQueries;
        pairs += out.size();
    }
    bench_report_pairs(state, done, pairs);
}

void bullet_world(CapsuleScene* s) {
    if (!s->bullet.shape) s->bullet.build(s->mesh);
    s->world.build(s->bullet.shape.get());
    for (uint32_t i = 0; i < kSweeps; i++) {
        const vl_capsule& c = s->sweeps[i].capsule;
        const btVector3 d(c.b[0] - c.a[0], c.b[1] - c.a[1], c.b[2] - c.a[2]);
        s->shapes.emplace_back(new btCapsuleShape(c.radius, d.length()));
    }
}

void BM_bullet_sweep(benchmark::State& state, int which) {
    CapsuleScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    if (!s->world.world) bullet_world(s);
    const uint32_t n = kSweeps / 8; // Bullet is slow: an eighth of the sweeps per iteration
    std::vector<vl_hit> hits(n);
    uint64_t done = 0;
    const btVector3 up(0, 1, 0);
    for (auto _ : state) {
        for (uint32_t i = 0; i < n; i++) {
            const vl_capsule_sweep& sw = s->sweeps[i];
            const btVector3 a(sw.capsule.a[0], sw.capsule.a[1], sw.capsule.a[2]);
            const btVector3 b(sw.capsule.b[0], sw.capsule.b[1], sw.capsule.b[2]);
            const btVector3 d = b - a, mid = (a + b) * 0.5f;
            const btVector3 move(sw.dir[0] * sw.tmax, sw.dir[1] * sw.tmax, sw.dir[2] * sw.tmax);
            // Bullet's capsule lies along its Y axis: turned onto the segment
            btQuaternion turn(0, 0, 0, 1);
            const float len = d.length();
            if (len > 0.0f) {
                const btVector3 u = d / len, axis = up.cross(u);
                const float al = axis.length();
                if (al > 1e-6f) turn = btQuaternion(axis / al, std::atan2(al, up.dot(u)));
                else if (up.dot(u) < 0.0f) turn = btQuaternion(btVector3(1, 0, 0), SIMD_PI);
            }
            hits[i].prim = s->world.sweep(s->shapes[i].get(), btTransform(turn, mid), btTransform(turn, mid + move));
        }
        done += n;
    }
    bench_report_hits(state, done, hits, n);
}
#endif

int register_all() {
    const bool bunny = bench_bunny_present();
    for (int which = bunny ? 0 : 1; which < 2; which++) {
        const std::string sc = which ? "world" : "bunny";
        for (int sweeps = 0; sweeps < 2; sweeps++) {
            const std::string p = std::string(sweeps ? "capsule_sweep/" : "capsule_overlap/") + sc + "/";
            auto fn = sweeps ? BM_sweep : BM_overlap;
            bench_register_batches(p, fn, which);
            benchmark::RegisterBenchmark((p + "volley_single").c_str(), fn, which, false)
                ->ArgName("batch")->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef VOLLEY_BENCH_BULLET
            benchmark::RegisterBenchmark((p + "bullet").c_str(), sweeps ? BM_bullet_sweep : BM_bullet_overlap, which)
                ->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
        }
    }
    return 0;
}

const int registered = register_all();

} // namespace
