// Sphere and box sweep bench, one thread, closest hit: volley batched (batches of 64, 1024, 16384,
// plain and on caller scratch) and single-query, against Bullet's btCollisionWorld::convexSweepTest
// with btSphereShape / btBoxShape against a btBvhTriangleMeshShape (one btCollisionObject in a
// btCollisionWorld) when CMake found Bullet. Scenes: the bunny (when the data folder is there) and
// the procedural world of bench_rays.cpp (1.1M triangles). Sweeps start near the surface (within a
// few triangle sizes of a random point on a random triangle), shapes and lengths at the scale of
// the triangles, in random directions. items_per_second is sweeps per second.
//   volley_bench --benchmark_filter='sweep/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <volley/volley.h>

#include "bench_exec.h"
#include "bench_scenes.h"

namespace {

constexpr uint32_t kSweeps = 1u << 14;

struct SweepScene {
    scene_mesh mesh{};
    vl_bvh* bvh = nullptr;
    std::vector<vl_sphere_sweep> spheres;
    std::vector<vl_box_sweep> boxes;
#ifdef VOLLEY_BENCH_BULLET
    BulletMesh bullet;
    BulletWorld world;
    std::vector<std::unique_ptr<btConvexShape>> sphere_shapes, box_shapes;
#endif
};

// The sweeps near the surface, placed as the volley tool's bench places them (tests/scenes.h).
void make_sweeps(SweepScene* s) {
    s->spheres.resize(kSweeps);
    s->boxes.resize(kSweeps);
    scene_sweeps(&s->mesh, kSweeps, 2024, s->spheres.data(), s->boxes.data());
}

SweepScene* get_scene(int which) { return bench_scene(which, make_sweeps); }

// batch 0: the single-query form on every sweep; otherwise batches of `batch` (plain, or on one
// scratch block made before the timing).
void BM_volley(benchmark::State& state, int which, int boxes, int own_scratch) {
    SweepScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    bench_sweep_loop(state, s->bvh, kSweeps, own_scratch,
                     [&](uint32_t i, uint32_t n, uint32_t batch, vl_hit* hits, void* scratch, size_t bytes) {
                         if (!batch) {
                             if (boxes) vl_bvh_sweep_boxes(s->bvh, &s->boxes[i], 1, 0, hits, nullptr, NULL);
                             else vl_bvh_sweep_spheres(s->bvh, &s->spheres[i], 1, 0, hits, nullptr, NULL);
                         } else if (scratch) {
                             if (boxes) vl_bvh_sweep_boxes(s->bvh, &s->boxes[i], n, 0, hits, nullptr, on_scratch(scratch, bytes));
                             else vl_bvh_sweep_spheres(s->bvh, &s->spheres[i], n, 0, hits, nullptr, on_scratch(scratch, bytes));
                         } else {
                             if (boxes) vl_bvh_sweep_boxes(s->bvh, &s->boxes[i], n, 0, hits, NULL, NULL);
                             else vl_bvh_sweep_spheres(s->bvh, &s->spheres[i], n, 0, hits, NULL, NULL);
                         }
                     });
}

#ifdef VOLLEY_BENCH_BULLET
void bullet_build(SweepScene* s) {
    s->bullet.build(s->mesh);
    s->world.build(s->bullet.shape.get());
    for (uint32_t i = 0; i < kSweeps; i++) {
        s->sphere_shapes.emplace_back(new btSphereShape(s->spheres[i].radius));
        const vl_aabb& b = s->boxes[i].box;
        s->box_shapes.emplace_back(new btBoxShape(
            btVector3(0.5f * (b.max[0] - b.min[0]), 0.5f * (b.max[1] - b.min[1]), 0.5f * (b.max[2] - b.min[2]))));
    }
}

void BM_bullet(benchmark::State& state, int which, int boxes) {
    SweepScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    if (!s->world.world) bullet_build(s);
    const uint32_t n = kSweeps / 8; // Bullet is slow: an eighth of the sweeps per iteration
    std::vector<vl_hit> hits(n);
    uint64_t done = 0;
    const btQuaternion identity(0, 0, 0, 1);
    for (auto _ : state) {
        for (uint32_t i = 0; i < n; i++) {
            float c[3], d[3];
            const btConvexShape* shape;
            if (boxes) {
                const vl_box_sweep& b = s->boxes[i];
                for (int a = 0; a < 3; a++) c[a] = 0.5f * (b.box.min[a] + b.box.max[a]), d[a] = b.dir[a] * b.tmax;
                shape = s->box_shapes[i].get();
            } else {
                const vl_sphere_sweep& sp = s->spheres[i];
                for (int a = 0; a < 3; a++) c[a] = sp.center[a], d[a] = sp.dir[a] * sp.tmax;
                shape = s->sphere_shapes[i].get();
            }
            btVector3 from(c[0], c[1], c[2]), to(c[0] + d[0], c[1] + d[1], c[2] + d[2]);
            hits[i].prim = s->world.sweep(shape, btTransform(identity, from), btTransform(identity, to));
        }
        done += n;
    }
    bench_report_hits(state, done, hits, n);
}
#endif

int register_all() {
    const bool bunny = bench_bunny_present();
    for (int which = bunny ? 0 : 1; which < 2; which++) {
        for (int boxes = 0; boxes < 2; boxes++) {
            std::string p = std::string("sweep/") + (which ? "world" : "bunny") + "/" + (boxes ? "box" : "sphere") + "/";
            bench_register_batches(p, BM_volley, which, boxes);
            benchmark::RegisterBenchmark((p + "volley_single").c_str(), BM_volley, which, boxes, 0)
                ->ArgName("batch")->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef VOLLEY_BENCH_BULLET
            benchmark::RegisterBenchmark((p + "bullet").c_str(), BM_bullet, which, boxes)
                ->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
        }
    }
    return 0;
}

const int registered = register_all();

} // namespace
