// Parallel forms against one worker: vl_bvh_raycast_parallel on 1M rays submitted in batches (as a
// game submits them) and vl_bvh_build_triangles_parallel, through the default pool (vl_thread_pool)
// of W workers; W = 1 is a context without a job system (the serial path). Beside them, Embree 3's
// own scaling when CMake found it: rtcIntersect1M / rtcOccluded1M on the same batches from W
// threads, and rtcCommitScene on a device "threads=W". Scenes: the bunny (when the data folder is
// there) and the procedural world of bench_bvh.cpp (1.1M triangles). Wall-clock time (the work
// runs on several threads); items_per_second is rays or triangles per second. Each case reports a
// "min" aggregate with --benchmark_repetitions.
//   volley_bench --benchmark_filter='par/' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <volley/volley.h>

#include "../tests/scenes.h"

#ifdef VOLLEY_BENCH_EMBREE
#include <embree3/rtcore.h>
#endif

namespace {

constexpr uint32_t kParRays = 1u << 20;

struct ParScene {
    scene_mesh mesh{};
    vl_bvh* bvh = nullptr;
    std::vector<vl_ray> rays[2]; // random, line of sight
#ifdef VOLLEY_BENCH_EMBREE
    RTCDevice device = nullptr;
    RTCScene scene = nullptr;
#endif
};

#ifdef VOLLEY_BENCH_EMBREE
RTCScene par_embree_build(RTCDevice device, const scene_mesh& m) {
    RTCScene scene = rtcNewScene(device);
    RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    auto* v = (float*)rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float),
                                              m.vertex_count);
    std::copy(m.xyz, m.xyz + 3 * (size_t)m.vertex_count, v);
    auto* t = (unsigned*)rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                 3 * sizeof(unsigned), m.triangle_count);
    std::copy(m.indices, m.indices + 3 * (size_t)m.triangle_count, t);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(scene);
    return scene;
}
#endif

ParScene* par_scene(int which) {
    static ParScene* scenes[2] = {nullptr, nullptr};
    if (scenes[which]) return scenes[which];
    auto* s = new ParScene;
    scene_mesh& m = s->mesh;
    if (which == 0) {
        if (!scene_load_data(VOLLEY_DATA_DIR, "bunny00.off", &m)) return nullptr;
        scene_agents_in_bounds(&m, 4096, 7);
    } else if (!scene_world(640, 3000, 4096, 42, &m)) {
        return nullptr;
    }
    if (vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, nullptr, &s->bvh) != VL_OK)
        return nullptr;
    s->rays[0].resize(kParRays);
    s->rays[1].resize(kParRays);
    scene_rays_random(&m, kParRays, 1001, s->rays[0].data());
    scene_rays_los(&m, kParRays, 1003, s->rays[1].data());
#ifdef VOLLEY_BENCH_EMBREE
    s->device = rtcNewDevice("threads=1");
    s->scene = par_embree_build(s->device, m);
#endif
    scenes[which] = s;
    return s;
}

// A context with W workers of the default pool (none for W = 1).
struct ParContext {
    vl_thread_pool* pool = nullptr;
    vl_context* ctx = nullptr;
    explicit ParContext(uint32_t workers) {
        vl_task_system ts = {nullptr, nullptr, nullptr, 1};
        if (workers > 1 && vl_thread_pool_create(workers, &pool) == VL_OK) ts = vl_thread_pool_task_system(pool);
        vl_context_create(&ts, &ctx);
    }
    ~ParContext() {
        vl_context_destroy(ctx);
        vl_thread_pool_destroy(pool);
    }
};

void BM_par_raycast(benchmark::State& state, int which, int rayset, uint32_t flags) {
    ParScene* s = par_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    const uint32_t batch = (uint32_t)state.range(0), workers = (uint32_t)state.range(1);
    ParContext pc(workers);
    const std::vector<vl_ray>& rays = s->rays[rayset];
    std::vector<vl_hit> hits(kParRays);
    for (uint32_t i = 0; i < kParRays; i += batch) // warm: the scratch grows once
        vl_bvh_raycast_parallel(pc.ctx, s->bvh, rays.data() + i, std::min(batch, kParRays - i), flags,
                                hits.data() + i);
    for (auto _ : state)
        for (uint32_t i = 0; i < kParRays; i += batch)
            vl_bvh_raycast_parallel(pc.ctx, s->bvh, rays.data() + i, std::min(batch, kParRays - i), flags,
                                    hits.data() + i);
    state.SetItemsProcessed((int64_t)state.iterations() * kParRays);
}

void BM_par_build(benchmark::State& state, int which) {
    ParScene* s = par_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    ParContext pc((uint32_t)state.range(0));
    const scene_mesh& m = s->mesh;
    for (auto _ : state) {
        vl_bvh* bvh = nullptr;
        vl_bvh_build_triangles_parallel(pc.ctx, m.xyz, m.vertex_count, m.indices, m.triangle_count, nullptr, &bvh);
        vl_bvh_destroy(bvh);
    }
    state.SetItemsProcessed((int64_t)state.iterations() * m.triangle_count);
}

#ifdef VOLLEY_BENCH_EMBREE
// The same batches through rtcIntersect1M / rtcOccluded1M, the 1M rays cut into W contiguous
// parts, one thread each (the calling thread takes the first).
void embree_part(RTCScene scene, const vl_ray* rays, uint32_t count, uint32_t batch, uint32_t flags) {
    RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    std::vector<RTCRayHit> rh(batch);
    for (uint32_t base = 0; base < count; base += batch) {
        uint32_t n = std::min(batch, count - base);
        for (uint32_t i = 0; i < n; i++) {
            const vl_ray& r = rays[base + i];
            RTCRay& e = rh[i].ray;
            e.org_x = r.origin[0], e.org_y = r.origin[1], e.org_z = r.origin[2], e.tnear = r.tmin;
            e.dir_x = r.dir[0], e.dir_y = r.dir[1], e.dir_z = r.dir[2], e.tfar = r.tmax;
            e.time = 0, e.mask = 0xFFFFFFFFu, e.id = 0, e.flags = 0;
            rh[i].hit.geomID = RTC_INVALID_GEOMETRY_ID;
        }
        if (flags & VL_RAY_ANY)
            rtcOccluded1M(scene, &ctx, &rh[0].ray, n, sizeof(RTCRayHit));
        else
            rtcIntersect1M(scene, &ctx, rh.data(), n, sizeof(RTCRayHit));
    }
}

void BM_embree_par_raycast(benchmark::State& state, int which, int rayset, uint32_t flags) {
    ParScene* s = par_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    const uint32_t batch = (uint32_t)state.range(0), workers = (uint32_t)state.range(1);
    const vl_ray* rays = s->rays[rayset].data();
    for (auto _ : state) {
        std::vector<std::thread> threads;
        const uint32_t per = (kParRays + workers - 1) / workers;
        for (uint32_t w = 1; w < workers; w++)
            threads.emplace_back(embree_part, s->scene, rays + w * per, std::min(per, kParRays - w * per), batch,
                                 flags);
        embree_part(s->scene, rays, std::min(per, kParRays), batch, flags);
        for (auto& t : threads) t.join();
    }
    state.SetItemsProcessed((int64_t)state.iterations() * kParRays);
}

void BM_embree_par_build(benchmark::State& state, int which) {
    ParScene* s = par_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    std::string config = "threads=" + std::to_string(state.range(0));
    RTCDevice device = rtcNewDevice(config.c_str());
    for (auto _ : state) {
        RTCScene scene = par_embree_build(device, s->mesh);
        rtcReleaseScene(scene);
    }
    rtcReleaseDevice(device);
    state.SetItemsProcessed((int64_t)state.iterations() * s->mesh.triangle_count);
}
#endif

double par_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

struct ParRegistrar {
    ParRegistrar() {
        const char* scenes[2] = {"bunny", "world"};
        const char* sets[2] = {"random", "los"};
        for (int which = 0; which < 2; which++) {
            std::string sc = scenes[which];
            for (int w : {1, 2})
                benchmark::RegisterBenchmark(("par/build/" + sc + "/volley").c_str(), BM_par_build, which)
                    ->Arg(w)
                    ->ArgName("workers")
                    ->Unit(benchmark::kMillisecond)
                    ->UseRealTime()
                    ->ComputeStatistics("min", par_min);
#ifdef VOLLEY_BENCH_EMBREE
            for (int w : {1, 2})
                benchmark::RegisterBenchmark(("par/build/" + sc + "/embree").c_str(), BM_embree_par_build, which)
                    ->Arg(w)
                    ->ArgName("workers")
                    ->Unit(benchmark::kMillisecond)
                    ->UseRealTime()
                    ->ComputeStatistics("min", par_min);
#endif
            for (int r = 0; r < 2; r++)
                for (uint32_t flags : {0u, 1u}) {
                    std::string p = "par/raycast/" + sc + "/" + sets[r] + (flags ? "/any/" : "/closest/");
                    for (int batch : {4096, 65536})
                        for (int w : {1, 2}) {
                            benchmark::RegisterBenchmark((p + "volley").c_str(), BM_par_raycast, which, r, flags)
                                ->Args({batch, w})
                                ->ArgNames({"batch", "workers"})
                                ->Unit(benchmark::kMillisecond)
                                ->UseRealTime()
                                ->ComputeStatistics("min", par_min);
#ifdef VOLLEY_BENCH_EMBREE
                            benchmark::RegisterBenchmark((p + "embree_1M").c_str(), BM_embree_par_raycast, which, r,
                                                         flags)
                                ->Args({batch, w})
                                ->ArgNames({"batch", "workers"})
                                ->Unit(benchmark::kMillisecond)
                                ->UseRealTime()
                                ->ComputeStatistics("min", par_min);
#endif
                        }
                }
        }
    }
};

ParRegistrar g_par_registrar;

} // namespace
