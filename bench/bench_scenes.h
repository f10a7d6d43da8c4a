// The scenes of the BVH benches (bench_rays, bench_overlaps, bench_sweeps, bench_context):
// the bunny (bunny00.off, when the data folder is there) and the procedural world of 1.1M
// triangles, with their volley BVH, and the same meshes handed to the peers (Embree 3, Bullet)
// when CMake found them.
#ifndef VL_BENCH_SCENES_H
#define VL_BENCH_SCENES_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <cstdlib>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include <volley/volley.h>

#include "../tests/scenes.h"

#ifdef VOLLEY_BENCH_EMBREE
#include <embree3/rtcore.h>
#endif
#ifdef VOLLEY_BENCH_BULLET
#include <btBulletCollisionCommon.h>
#endif

// Scene `which`: 0 the bunny, 1 the world. `agents` line-of-sight agents (0 where no
// line-of-sight rays are traced): on the world's ground, in the bunny's bounds grown by 10%.
bool bench_load_mesh(int which, uint32_t agents, scene_mesh* m);

// bench_load_mesh, then the BVH of its triangles (default build). False if either fails.
bool bench_load_bvh(int which, uint32_t agents, scene_mesh* m, vl_bvh** bvh);

// Whether the bunny is there (the benches register the bunny cases only then).
bool bench_bunny_present();

// A bench file's scene `which` (0 the bunny, 1 the world), made on first use (so that a filtered
// run pays only for what it needs): the mesh and its BVH (bench_load_bvh, no agents) in s->mesh
// and s->bvh, then `fill` makes the queries. nullptr if the mesh or the tree is missing.
template <class Scene>
Scene* bench_scene(int which, void (*fill)(Scene*)) {
    static Scene* scenes[2] = {nullptr, nullptr};
    if (scenes[which]) return scenes[which];
    auto* s = new Scene;
    if (!bench_load_bvh(which, 0, &s->mesh, &s->bvh)) return nullptr;
    fill(s);
    scenes[which] = s;
    return s;
}

// One scratch block of at least `bytes` (rounded up to 64) for the timed loop, or nullptr for 0;
// std::free it.
inline void* bench_scratch(size_t bytes) {
    return bytes ? std::aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) & ~size_t(63)) : nullptr;
}

// The query loop of the batched benches: call(i, n) on queries [i, i + n) of `total`, in batches
// of `batch`, or one at a time for batch 0.
template <class Call>
void bench_batches(uint32_t total, uint32_t batch, Call&& call) {
    for (uint32_t i = 0; i < total; i += batch ? batch : 1) call(i, batch ? std::min(batch, total - i) : 1u);
}

// The counters of the overlap benches: queries per second and the mean number of pairs.
inline void bench_report_pairs(benchmark::State& state, uint64_t queries, uint64_t pairs) {
    state.SetItemsProcessed((int64_t)queries);
    state.counters["pairs/query"] = queries ? (double)pairs / (double)queries : 0.0;
}

// The counters of the sweep and closest-point benches: queries per second and the share of the
// first n answers that hit.
template <class Hit>
void bench_report_hits(benchmark::State& state, uint64_t queries, const std::vector<Hit>& hits, uint32_t n) {
    uint32_t h = 0;
    for (uint32_t i = 0; i < n; i++) h += hits[i].prim != VL_NO_HIT;
    state.SetItemsProcessed((int64_t)queries);
    state.counters["hit%"] = 100.0 * h / n;
}

// The timed loop of an overlap bench over `total` queries in batches of state.range(0) (0: one at
// a time), with a scratch block made before the timing where own_scratch:
// query(i, n, batch, out, scratch, bytes) adds the pairs of queries [i, i + n) to out. Reports the
// queries and pairs.
template <class Query>
void bench_overlap_loop(benchmark::State& state, const vl_bvh* bvh, uint32_t total, bool own_scratch, Query&& query) {
    const uint32_t batch = (uint32_t)state.range(0);
    const size_t bytes = own_scratch ? vl_bvh_overlap_scratch_size(bvh, batch) : 0;
    void* scratch = bench_scratch(bytes);
    vl_pair_buffer out{};
    uint64_t done = 0, pairs = 0;
    for (auto _ : state) {
        out.count = 0;
        bench_batches(total, batch, [&](uint32_t i, uint32_t n) { query(i, n, batch, &out, scratch, bytes); });
        done += total;
        pairs += out.count;
    }
    std::free(scratch);
    vl_pair_buffer_free(&out);
    bench_report_pairs(state, done, pairs);
}

// The same for a sweep bench: query(i, n, batch, hits, scratch, bytes) writes the hits of sweeps
// [i, i + n). Reports the sweeps and the share that hit.
template <class Query>
void bench_sweep_loop(benchmark::State& state, const vl_bvh* bvh, uint32_t total, bool own_scratch, Query&& query) {
    const uint32_t batch = (uint32_t)state.range(0);
    std::vector<vl_hit> hits(total);
    const size_t bytes = own_scratch ? vl_bvh_sweep_scratch_size(bvh, batch, 0) : 0;
    void* scratch = bench_scratch(bytes);
    uint64_t done = 0;
    for (auto _ : state) {
        bench_batches(total, batch, [&](uint32_t i, uint32_t n) { query(i, n, batch, &hits[i], scratch, bytes); });
        done += total;
    }
    std::free(scratch);
    bench_report_hits(state, done, hits, total);
}

// A batched row's arguments: batches of 64, 1024 and 16384, in milliseconds of real time.
template <class Bench>
Bench* bench_batch_sizes(Bench* b) {
    return b->ArgName("batch")->Arg(64)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond)->UseRealTime();
}

// The rows `p`volley_batch and `p`volley_scratch: fn(state, args..., own_scratch) at
// bench_batch_sizes, plain, then on caller scratch.
template <class Fn, class... Args>
void bench_register_batches(const std::string& p, Fn fn, Args... args) {
    bench_batch_sizes(benchmark::RegisterBenchmark((p + "volley_batch").c_str(), fn, args..., false));
    bench_batch_sizes(benchmark::RegisterBenchmark((p + "volley_scratch").c_str(), fn, args..., true));
}

#ifdef VOLLEY_BENCH_EMBREE
// One committed Embree scene of the mesh's triangles on `device`.
RTCScene bench_embree_build(RTCDevice device, const scene_mesh& m);
#endif

#ifdef VOLLEY_BENCH_BULLET
// The mesh as a btBvhTriangleMeshShape (quantized AABB compression, BVH built), with the copies
// of its indices and vertices that the shape points into.
struct BulletMesh {
    std::vector<int> indices;
    std::vector<btScalar> verts;
    std::unique_ptr<btTriangleIndexVertexArray> array;
    std::unique_ptr<btBvhTriangleMeshShape> shape;
    void build(const scene_mesh& m);
};

// A btCollisionWorld (dbvt broadphase) holding one btCollisionObject of a BulletMesh's shape: what
// btCollisionWorld::convexSweepTest sweeps against.
struct BulletWorld {
    std::unique_ptr<btDefaultCollisionConfiguration> config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    std::unique_ptr<btDbvtBroadphase> broadphase;
    std::unique_ptr<btCollisionWorld> world;
    std::unique_ptr<btCollisionObject> object;
    void build(btCollisionShape* shape);
    // convexSweepTest of shape from `from` to `to` (ClosestConvexResultCallback): 0 on a hit (the
    // bench rows' hit counters), else VL_NO_HIT.
    uint32_t sweep(const btConvexShape* shape, const btTransform& from, const btTransform& to) const;
};
#endif

#endif
