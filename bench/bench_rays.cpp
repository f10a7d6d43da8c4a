// BVH raycast bench, one thread: volley batched (batch sizes 64 to 1M) and single-ray, against
// Embree 3 (rtcIntersect1/rtcOccluded1 loops, rtcIntersect1M/rtcOccluded1M, 8- and 16-wide packets
// rtcIntersect8/16 and rtcOccluded8/16, each on its default build and on a high-quality build
// (embree_hq_*), device "threads=1"; see embree_paths.h)
// and Bullet (btBvhTriangleMeshShape::performRaycast) when CMake found them. Scenes: the bunny
// (when the data folder is there) and a procedural world of 1.1M triangles; ray sets: random
// incoherent, diffuse bounces, agent-to-agent line of sight. items_per_second is rays per second.
//   volley_bench --benchmark_filter='bvh/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <volley/volley.h>

#include "bench_exec.h"
#include "bench_scenes.h"
#include "embree_paths.h"

#ifdef VOLLEY_BENCH_BULLET
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#endif

namespace {

constexpr uint32_t kRays = 1u << 20;
const char* const kRaySets[3] = {"random", "diffuse", "los"};

struct BenchScene {
    std::string name;
    scene_mesh mesh{};
    vl_bvh* bvh = nullptr;
    std::vector<vl_ray> rays[3];
    float diag = 1;
#ifdef VOLLEY_BENCH_EMBREE
    RTCDevice device = nullptr;
    RTCScene scene = nullptr;
    RTCScene scene_hq = nullptr;       // RTC_BUILD_QUALITY_HIGH (embree_hq_* rows)
    int64_t loop_hits[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}; // [rayset][any]: the reference hit count
#endif
#ifdef VOLLEY_BENCH_BULLET
    BulletMesh bullet;
#endif
};

constexpr uint32_t kAgents = 4096;

bool load_mesh(int which, scene_mesh* m) { return bench_load_mesh(which, kAgents, m); }

// Scenes are made on first use, so that a filtered run pays only for what it needs.
BenchScene* get_scene(int which) {
    static BenchScene* scenes[2] = {nullptr, nullptr};
    if (scenes[which]) return scenes[which];
    auto* s = new BenchScene;
    s->name = which ? "world" : "bunny";
    if (!bench_load_bvh(which, kAgents, &s->mesh, &s->bvh)) return nullptr;
    const scene_mesh& m = s->mesh;
    for (int r = 0; r < 3; r++) {
        s->rays[r].resize(kRays);
        if (r == 0) scene_rays_random(&m, kRays, 1001, s->rays[r].data());
        if (r == 1) scene_rays_diffuse(&m, kRays, 1002, s->rays[r].data());
        if (r == 2) scene_rays_los(&m, kRays, 1003, s->rays[r].data());
    }
    float d2 = 0;
    for (int a = 0; a < 3; a++) d2 += (m.hi[a] - m.lo[a]) * (m.hi[a] - m.lo[a]);
    s->diag = std::sqrt(d2);
    scenes[which] = s;
    return s;
}

void report(benchmark::State& state, uint64_t rays, uint32_t hits, uint32_t traced) {
    state.SetItemsProcessed((int64_t)rays);
    state.counters["hit%"] = 100.0 * hits / (traced ? traced : 1);
}

void report_hits(benchmark::State& state, uint64_t rays, const std::vector<vl_hit>& hits) {
    uint32_t h = 0;
    for (const vl_hit& x : hits) h += x.prim != VL_NO_HIT;
    report(state, rays, h, (uint32_t)hits.size());
}

// batch 0: vl_bvh_raycast1 on every ray; otherwise vl_bvh_raycast on batches of `batch` rays, or
// vl_bvh_raycast on one scratch block made before the timing (own_scratch).
void volley_batch(benchmark::State& state, int which, int rayset, uint32_t flags, uint32_t batch,
                  bool own_scratch = false) {
    BenchScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    const std::vector<vl_ray>& rays = s->rays[rayset];
    std::vector<vl_hit> hits(kRays);
    const size_t bytes = own_scratch ? vl_bvh_raycast_scratch_size(s->bvh, batch, flags) : 0;
    void* scratch = bytes ? std::aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) & ~size_t(63)) : nullptr;
    if (bytes && !scratch) return state.SkipWithError("no scratch");
    uint64_t traced = 0;
    for (auto _ : state) {
        if (batch == 0) {
            for (uint32_t i = 0; i < kRays; i++) vl_bvh_raycast1(s->bvh, &rays[i], flags, &hits[i]);
        } else if (own_scratch) {
            for (uint32_t i = 0; i < kRays; i += batch)
                vl_bvh_raycast(s->bvh, rays.data() + i, std::min(batch, kRays - i), flags, hits.data() + i,
                                       on_scratch(scratch, bytes));
        } else {
            for (uint32_t i = 0; i < kRays; i += batch)
                vl_bvh_raycast(s->bvh, rays.data() + i, std::min(batch, kRays - i), flags, hits.data() + i, NULL);
        }
        traced += kRays;
    }
    std::free(scratch);
    report_hits(state, traced, hits);
}

void BM_volley_batch(benchmark::State& state, int which, int rayset, uint32_t flags) {
    volley_batch(state, which, rayset, flags, (uint32_t)state.range(0));
}

void BM_volley_scratch(benchmark::State& state, int which, int rayset, uint32_t flags) {
    volley_batch(state, which, rayset, flags, (uint32_t)state.range(0), true);
}

void BM_volley_single(benchmark::State& state, int which, int rayset, uint32_t flags) {
    volley_batch(state, which, rayset, flags, 0);
}

void BM_volley_build(benchmark::State& state, int which) {
    scene_mesh m;
    if (!load_mesh(which, &m)) return state.SkipWithError("scene missing");
    vl_bvh_desc desc = vl_bvh_default_desc();
    if (state.range(0)) desc.max_leaf_size = (uint32_t)state.range(0);
    vl_bvh_stats st{};
    for (auto _ : state) {
        vl_bvh* bvh = nullptr;
        vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, &desc, &bvh, NULL);
        state.PauseTiming();
        vl_bvh_get_stats(bvh, &st);
        vl_bvh_destroy(bvh);
        state.ResumeTiming();
    }
    state.counters["bytes/tri"] = (double)st.bytes / m.triangle_count;
    state.counters["sah"] = st.sah_cost;
    state.counters["tris"] = m.triangle_count;
    scene_free(&m);
}

#ifdef VOLLEY_BENCH_EMBREE
RTCScene embree_scene(BenchScene* s) {
    if (!s->scene) {
        s->device = rtcNewDevice("threads=1");
        s->scene = bench_embree_build(s->device, s->mesh);
    }
    return s->scene;
}

inline void to_embree(const vl_ray& r, RTCRay* e) {
    e->org_x = r.origin[0], e->org_y = r.origin[1], e->org_z = r.origin[2], e->tnear = r.tmin;
    e->dir_x = r.dir[0], e->dir_y = r.dir[1], e->dir_z = r.dir[2], e->time = 0.0f;
    e->tfar = r.tmax, e->mask = 0xFFFFFFFFu, e->id = 0, e->flags = 0;
}

void BM_embree_1(benchmark::State& state, int which, int rayset, uint32_t flags) {
    BenchScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    RTCScene scene = embree_scene(s);
    const std::vector<vl_ray>& rays = s->rays[rayset];
    RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    uint64_t traced = 0;
    uint32_t h = 0;
    for (auto _ : state) {
        h = 0;
        for (uint32_t i = 0; i < kRays; i++) {
            if (flags == VL_QUERY_ANY) {
                RTCRay ray;
                to_embree(rays[i], &ray);
                rtcOccluded1(scene, &ctx, &ray);
                h += ray.tfar < 0.0f;
            } else {
                RTCRayHit rh;
                to_embree(rays[i], &rh.ray);
                rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
                rtcIntersect1(scene, &ctx, &rh);
                h += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
            }
        }
        traced += kRays;
    }
    report(state, traced, h, kRays);
}

void BM_embree_1M(benchmark::State& state, int which, int rayset, uint32_t flags) {
    BenchScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    RTCScene scene = embree_scene(s);
    const std::vector<vl_ray>& rays = s->rays[rayset];
    uint32_t batch = (uint32_t)state.range(0);
    RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    std::vector<RTCRayHit> rh(batch);
    uint64_t traced = 0;
    uint32_t h = 0;
    for (auto _ : state) {
        h = 0;
        for (uint32_t base = 0; base < kRays; base += batch) {
            uint32_t n = std::min(batch, kRays - base);
            for (uint32_t i = 0; i < n; i++) {
                to_embree(rays[base + i], &rh[i].ray);
                rh[i].hit.geomID = RTC_INVALID_GEOMETRY_ID;
            }
            if (flags == VL_QUERY_ANY) {
                rtcOccluded1M(scene, &ctx, &rh[0].ray, n, sizeof(RTCRayHit));
                for (uint32_t i = 0; i < n; i++) h += rh[i].ray.tfar < 0.0f;
            } else {
                rtcIntersect1M(scene, &ctx, rh.data(), n, sizeof(RTCRayHit));
                for (uint32_t i = 0; i < n; i++) h += rh[i].hit.geomID != RTC_INVALID_GEOMETRY_ID;
            }
        }
        traced += kRays;
    }
    report(state, traced, h, kRays);
}

// The high-quality scene, on the device of the default one.
RTCScene embree_scene_hq(BenchScene* s) {
    embree_scene(s);
    if (!s->scene_hq)
        s->scene_hq = embree_build_scene(s->device, s->mesh.xyz, s->mesh.vertex_count, s->mesh.indices,
                                         s->mesh.triangle_count, 1);
    return s->scene_hq;
}

// The hits of rtcIntersect1/rtcOccluded1 on the default build: the count every Embree path must give.
int64_t embree_loop_hits(BenchScene* s, int rayset, bool any) {
    int64_t& h = s->loop_hits[rayset][any];
    if (h < 0) h = embree_trace(embree_scene(s), EMBREE_PATH_LOOP, s->rays[rayset].data(), kRays, any, nullptr);
    return h;
}

// One Embree path (embree_paths.h) on the default or the high-quality build, the rays converted
// inside the timing as in BM_embree_1. Skipped where the Embree build lacks the path; an error when
// the hits stray from the default build's loop by more than one ray in 10,000 (counter dhits:
// hits minus the loop's).
void BM_embree_path(benchmark::State& state, int which, int rayset, uint32_t flags, int path_index, bool hq) {
    const embree_path path = (embree_path)path_index;
    BenchScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    RTCScene scene = hq ? embree_scene_hq(s) : embree_scene(s);
    if (!scene) return state.SkipWithError("Embree scene build failed");
    if (!embree_path_supported(s->device, path))
        return state.SkipWithError(path == EMBREE_PATH_PACKET8    ? "Embree built without native 8-wide packets"
                                   : path == EMBREE_PATH_PACKET16 ? "Embree built without native 16-wide packets"
                                                                  : "Embree built without ray streams");
    const bool any = flags == VL_QUERY_ANY;
    const int64_t reference = embree_loop_hits(s, rayset, any);
    const std::vector<vl_ray>& rays = s->rays[rayset];
    const size_t bytes = embree_trace_buffer_bytes(path, kRays);
    void* buffer = bytes ? std::aligned_alloc(EMBREE_TRACE_BUFFER_ALIGNMENT, (bytes + 63) & ~size_t(63)) : nullptr;
    if (bytes && !buffer) return state.SkipWithError("no buffer");
    uint64_t traced = 0;
    uint32_t h = 0;
    for (auto _ : state) {
        h = embree_trace(scene, path, rays.data(), kRays, any, buffer);
        traced += kRays;
    }
    std::free(buffer);
    report(state, traced, h, kRays);
    state.counters["dhits"] = (double)((int64_t)h - reference);
    if (std::llabs((long long)((int64_t)h - reference)) > kRays / 10000)
        state.SkipWithError("hits differ from Embree's single-ray loop");
}

void BM_embree_build(benchmark::State& state, int which, bool hq) {
    scene_mesh m;
    if (!load_mesh(which, &m)) return state.SkipWithError("scene missing");
    RTCDevice device = rtcNewDevice("threads=1");
    for (auto _ : state) {
        RTCScene scene = hq ? embree_build_scene(device, m.xyz, m.vertex_count, m.indices, m.triangle_count, 1)
                            : bench_embree_build(device, m);
        state.PauseTiming();
        rtcReleaseScene(scene);
        state.ResumeTiming();
    }
    rtcReleaseDevice(device);
    state.counters["tris"] = m.triangle_count;
    scene_free(&m);
}
#endif

#ifdef VOLLEY_BENCH_BULLET
struct ClosestCallback : btTriangleRaycastCallback {
    int triangle = -1;
    ClosestCallback(const btVector3& from, const btVector3& to) : btTriangleRaycastCallback(from, to) {}
    btScalar reportHit(const btVector3&, btScalar fraction, int, int index) override {
        triangle = index;
        return fraction;
    }
};

void BM_bullet(benchmark::State& state, int which, int rayset) {
    BenchScene* s = get_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    if (!s->bullet.shape) s->bullet.build(s->mesh);
    const std::vector<vl_ray>& rays = s->rays[rayset];
    const uint32_t n = kRays / 16; // Bullet is slow: a sixteenth of the rays per iteration
    uint64_t traced = 0;
    uint32_t h = 0;
    for (auto _ : state) {
        h = 0;
        for (uint32_t i = 0; i < n; i++) {
            const vl_ray& r = rays[i];
            float len = std::sqrt(r.dir[0] * r.dir[0] + r.dir[1] * r.dir[1] + r.dir[2] * r.dir[2]);
            float tmax = std::min(r.tmax, 2.0f * s->diag / len);
            btVector3 from(r.origin[0] + r.tmin * r.dir[0], r.origin[1] + r.tmin * r.dir[1],
                           r.origin[2] + r.tmin * r.dir[2]);
            btVector3 to(r.origin[0] + tmax * r.dir[0], r.origin[1] + tmax * r.dir[1], r.origin[2] + tmax * r.dir[2]);
            ClosestCallback cb(from, to);
            s->bullet.shape->performRaycast(&cb, from, to);
            h += cb.triangle >= 0;
        }
        traced += n;
    }
    report(state, traced, h, n);
}

void BM_bullet_build(benchmark::State& state, int which) {
    scene_mesh m;
    if (!load_mesh(which, &m)) return state.SkipWithError("scene missing");
    BulletMesh bullet;
    for (auto _ : state) bullet.build(m);
    state.counters["tris"] = m.triangle_count;
    scene_free(&m);
}
#endif

#ifdef VOLLEY_BENCH_EMBREE
// embree_8 and embree_16 (packets on the default build), then every path on the high-quality
// build: embree_hq_1, embree_hq_1M (one stream of the whole set, as embree_1M), embree_hq_8, embree_hq_16.
void register_embree_paths(const std::string& p, int which, int r, uint32_t flags) {
    for (int hq = 0; hq < 2; hq++)
        for (int path = hq ? 0 : (int)EMBREE_PATH_PACKET8; path < (int)EMBREE_PATH_COUNT; path++) {
            std::string name = p + (hq ? "embree_hq_" : "embree_") + embree_path_name((embree_path)path);
            auto* b = benchmark::RegisterBenchmark(name.c_str(), BM_embree_path, which, r, flags, path, hq != 0);
            if (path == EMBREE_PATH_STREAM) b->ArgName("batch")->Arg(1 << 20);
            b->Unit(benchmark::kMillisecond)->UseRealTime();
        }
}
#endif

int register_all() {
    const bool bunny = bench_bunny_present();
    for (int which = bunny ? 0 : 1; which < 2; which++) {
        std::string sc = which ? "world" : "bunny";
        benchmark::RegisterBenchmark(("bvh/build/" + sc + "/volley").c_str(), BM_volley_build, which)
            ->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef VOLLEY_BENCH_EMBREE
        benchmark::RegisterBenchmark(("bvh/build/" + sc + "/embree").c_str(), BM_embree_build, which, false)
            ->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("bvh/build/" + sc + "/embree_hq").c_str(), BM_embree_build, which, true)
            ->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
#ifdef VOLLEY_BENCH_BULLET
        benchmark::RegisterBenchmark(("bvh/build/" + sc + "/bullet").c_str(), BM_bullet_build, which)
            ->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);
#endif
        for (int r = 0; r < 3; r++) {
            for (uint32_t flags = 0; flags < 2; flags++) {
                std::string p = "bvh/" + sc + "/" + kRaySets[r] + "/" + (flags ? "any" : "closest") + "/";
                benchmark::RegisterBenchmark((p + "volley_batch").c_str(), BM_volley_batch, which, r, flags)
                    ->ArgName("batch")->Arg(64)->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536)->Arg(1 << 20)
                    ->Unit(benchmark::kMillisecond)->UseRealTime();
                // small batches on the caller's scratch (no allocation per call)
                benchmark::RegisterBenchmark((p + "volley_scratch").c_str(), BM_volley_scratch, which, r, flags)
                    ->ArgName("batch")->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
                // the same batches with the hint VL_QUERY_GROUP_BY_ORIGIN (it changes batches of several chunks only)
                benchmark::RegisterBenchmark((p + "volley_grouped").c_str(), BM_volley_batch, which, r,
                                             flags | VL_QUERY_GROUP_BY_ORIGIN)
                    ->ArgName("batch")->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
                benchmark::RegisterBenchmark((p + "volley_single").c_str(), BM_volley_single, which, r, flags)
                    ->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef VOLLEY_BENCH_EMBREE
                benchmark::RegisterBenchmark((p + "embree_1").c_str(), BM_embree_1, which, r, flags)
                    ->Unit(benchmark::kMillisecond)->UseRealTime();
                benchmark::RegisterBenchmark((p + "embree_1M").c_str(), BM_embree_1M, which, r, flags)
                    ->ArgName("batch")->Arg(1 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
                register_embree_paths(p, which, r, flags);
#endif
#ifdef VOLLEY_BENCH_BULLET
                if (!flags)
                    benchmark::RegisterBenchmark((p + "bullet").c_str(), BM_bullet, which, r)
                        ->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
            }
        }
    }
    return 0;
}

const int registered = register_all();

} // namespace
