// Calls on a context against one worker: vl_bvh_raycast on 1M rays submitted in batches (as a
// game submits them), vl_bvh_build_triangles and vl_bvh_refit_triangles, through the default pool (vl_thread_pool) of W workers; W = 1 is a context without a job system (the
// serial path). Beside them, Embree 3's own scaling when CMake found it: rtcIntersect1M /
// rtcOccluded1M on the same batches from W threads, and rtcCommitScene on a device "threads=W".
// Scenes: the bunny (when the data folder is there) and the procedural world of bench_rays.cpp (1.1M
// triangles). Wall-clock time (the work runs on several threads); items_per_second is rays or
// triangles per second. Each case reports a "min" aggregate with --benchmark_repetitions. par/path/
// estimates the 2-worker speedup from thread CPU time (see BM_par_path), which a machine loaded by
// other work distorts much less.
//   volley_bench --benchmark_filter='par/(build|refit|raycast)/' --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//   volley_bench --benchmark_filter='par/path/'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include <volley/volley.h>

#include "bench_exec.h"
#include "bench_scenes.h"

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

ParScene* par_scene(int which) {
    static ParScene* scenes[2] = {nullptr, nullptr};
    if (scenes[which]) return scenes[which];
    auto* s = new ParScene;
    scene_mesh& m = s->mesh;
    if (!bench_load_bvh(which, 4096, &m, &s->bvh)) return nullptr;
    s->rays[0].resize(kParRays);
    s->rays[1].resize(kParRays);
    scene_rays_random(&m, kParRays, 1001, s->rays[0].data());
    scene_rays_los(&m, kParRays, 1003, s->rays[1].data());
#ifdef VOLLEY_BENCH_EMBREE
    s->device = rtcNewDevice("threads=1");
    s->scene = bench_embree_build(s->device, m);
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
        if (workers > 1 && vl_thread_pool_create(workers, &pool) == VL_OK) ts = vl_thread_pool_get_task_system(pool);
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
        vl_bvh_raycast(s->bvh, rays.data() + i, std::min(batch, kParRays - i), flags, hits.data() + i,
                                on_context(pc.ctx));
    for (auto _ : state)
        for (uint32_t i = 0; i < kParRays; i += batch)
            vl_bvh_raycast(s->bvh, rays.data() + i, std::min(batch, kParRays - i), flags, hits.data() + i,
                                    on_context(pc.ctx));
    state.SetItemsProcessed((int64_t)state.iterations() * kParRays);
}

void BM_par_build(benchmark::State& state, int which) {
    ParScene* s = par_scene(which);
    if (!s) return state.SkipWithError("scene missing");
    ParContext pc((uint32_t)state.range(0));
    const scene_mesh& m = s->mesh;
    for (auto _ : state) {
        vl_bvh* bvh = nullptr;
        vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, nullptr, &bvh, on_context(pc.ctx));
        vl_bvh_destroy(bvh);
    }
    state.SetItemsProcessed((int64_t)state.iterations() * m.triangle_count);
}

// A tree of the scene's own and its vertices moved a little, for the refit benches.
struct RefitScene {
    vl_bvh* bvh = nullptr;
    std::vector<float> moved;
};

RefitScene* refit_scene(int which) {
    static RefitScene* scenes[2] = {nullptr, nullptr};
    if (scenes[which]) return scenes[which];
    ParScene* s = par_scene(which);
    if (!s) return nullptr;
    const scene_mesh& m = s->mesh;
    auto* r = new RefitScene;
    if (vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, nullptr, &r->bvh, NULL) != VL_OK)
        return nullptr;
    r->moved.assign(m.xyz, m.xyz + 3 * (size_t)m.vertex_count);
    uint64_t x = 777;
    for (float& v : r->moved) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        v += 0.05f * (float)((x >> 40) * (1.0 / 16777216.0) - 0.5);
    }
    scenes[which] = r;
    return r;
}

void BM_par_refit(benchmark::State& state, int which) {
    RefitScene* r = refit_scene(which);
    if (!r) return state.SkipWithError("scene missing");
    ParContext pc((uint32_t)state.range(0));
    for (auto _ : state) vl_bvh_refit_triangles(r->bvh, r->moved.data(), on_context(pc.ctx));
    state.SetItemsProcessed((int64_t)state.iterations() * par_scene(which)->mesh.triangle_count);
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
        if (flags & VL_QUERY_ANY)
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
        RTCScene scene = bench_embree_build(device, s->mesh);
        rtcReleaseScene(scene);
    }
    rtcReleaseDevice(device);
    state.SetItemsProcessed((int64_t)state.iterations() * s->mesh.triangle_count);
}
#endif

// Critical path from thread CPU time, insensitive to a loaded machine: a wrapper around the pool's
// task system adds each range's thread CPU time to its worker; per call the path is the busiest
// worker's time, plus the caller's own time outside ranges (its spin in finish included). Counters:
// one_ms (the serial path's CPU time), path_ms (2 workers), ratio = one_ms / path_ms. On a loaded
// machine a worker that is not scheduled leaves its ranges to the caller, which lengthens path_ms;
// ideal_ms is what a machine with a free core would give: per task the larger of its ranges' time
// split evenly and its longest range, plus the caller's time outside finish (the serial part),
// ideal_ratio = one_ms / ideal_ms.
double thread_cpu() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct PathProbe {
    vl_task_system inner{};
    vl_task_fn* fn = nullptr;
    void* task_ctx = nullptr;
    double busy[VL_MAX_WORKERS] = {}, longest[VL_MAX_WORKERS] = {};
    double path = 0, caller_in_ranges = 0, ideal = 0, in_finish = 0;
};
PathProbe g_probe;

void probe_range(uint32_t start, uint32_t end, uint32_t worker, void*) {
    double t0 = thread_cpu();
    g_probe.fn(start, end, worker, g_probe.task_ctx);
    double dt = thread_cpu() - t0;
    g_probe.busy[worker] += dt;
    g_probe.longest[worker] = std::max(g_probe.longest[worker], dt);
}

void* probe_enqueue(vl_task_fn* fn, uint32_t items, uint32_t min_range, void* task_ctx, void*) {
    g_probe.fn = fn, g_probe.task_ctx = task_ctx;
    std::fill(std::begin(g_probe.busy), std::end(g_probe.busy), 0.0);
    std::fill(std::begin(g_probe.longest), std::end(g_probe.longest), 0.0);
    return g_probe.inner.enqueue(probe_range, items, min_range, nullptr, g_probe.inner.user_ctx);
}

void probe_finish(void* handle, void*) {
    double t0 = thread_cpu();
    g_probe.inner.finish(handle, g_probe.inner.user_ctx);
    g_probe.in_finish += thread_cpu() - t0;
    g_probe.path += *std::max_element(std::begin(g_probe.busy), std::end(g_probe.busy));
    double total = 0;
    for (double b : g_probe.busy) total += b;
    g_probe.ideal += std::max(total / g_probe.inner.worker_count,
                              *std::max_element(std::begin(g_probe.longest), std::end(g_probe.longest)));
    g_probe.caller_in_ranges += g_probe.busy[0];
}

// The box-pruning rows' boxes: 100K then 25K, uniform in [-100, 100]^3, sides up to 1.2.
constexpr uint32_t kPruneBoxes = 100000, kPruneB = 25000;
std::vector<vl_aabb> prune_boxes() {
    std::vector<vl_aabb> boxes(kPruneBoxes + kPruneB);
    uint64_t x = 54321;
    auto rnd = [&x](float lo, float hi) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        return lo + (hi - lo) * (float)((x >> 40) * (1.0 / 16777216.0));
    };
    for (auto& b : boxes)
        for (int a = 0; a < 3; a++) b.min[a] = rnd(-100, 100), b.max[a] = b.min[a] + rnd(0, 1.2f);
    return boxes;
}

// kind 0: raycasts (range(0) = batch), 1: the build, 2: the refit, 3: box pruning of 100K boxes,
// 4: bipartite 100K x 25K (no scene).
void BM_par_path(benchmark::State& state, int which, int rayset, int kind) {
    static ParScene none{};
    ParScene* s = kind < 3 ? par_scene(which) : &none;
    if (!s) return state.SkipWithError("scene missing");
    const uint32_t batch = kind == 0 ? (uint32_t)state.range(0) : 0;
    const std::vector<vl_aabb> boxes = kind >= 3 ? prune_boxes() : std::vector<vl_aabb>();
    vl_pair_buffer pairs = {};
    vl_thread_pool* pool = nullptr;
    vl_thread_pool_create(2, &pool);
    g_probe.inner = vl_thread_pool_get_task_system(pool);
    vl_task_system ts = {probe_enqueue, probe_finish, nullptr, 2};
    vl_context *ctx = nullptr, *one = nullptr;
    vl_context_create(&ts, &ctx);
    vl_context_create(nullptr, &one);
    const scene_mesh& m = s->mesh;
    const std::vector<vl_ray>& rays = s->rays[rayset];
    std::vector<vl_hit> hits(kParRays);
    RefitScene* r = kind == 2 ? refit_scene(which) : nullptr;
    auto run = [&](vl_context* c) {
        pairs.count = 0;
        if (kind == 3) {
            vl_box_prune(boxes.data(), kPruneBoxes, &pairs, on_context(c));
            return;
        }
        if (kind == 4) {
            vl_box_prune_bipartite(boxes.data(), kPruneBoxes, boxes.data() + kPruneBoxes, kPruneB, &pairs, on_context(c));
            return;
        }
        if (kind == 2) {
            vl_bvh_refit_triangles(r->bvh, r->moved.data(), on_context(c));
            return;
        }
        if (kind == 1) {
            vl_bvh* bvh = nullptr;
            vl_bvh_build_triangles(m.xyz, m.vertex_count, m.indices, m.triangle_count, nullptr, &bvh, on_context(c));
            vl_bvh_destroy(bvh);
            return;
        }
        for (uint32_t i = 0; i < kParRays; i += batch)
            vl_bvh_raycast(s->bvh, rays.data() + i, std::min(batch, kParRays - i), 0, hits.data() + i, on_context(c));
    };
    run(one), run(ctx); // warm
    double best_one = 1e30, best_path = 1e30, best_ideal = 1e30;
    for (auto _ : state) {
        double t0 = thread_cpu();
        run(one);
        best_one = std::min(best_one, thread_cpu() - t0);
        g_probe.path = g_probe.caller_in_ranges = g_probe.ideal = g_probe.in_finish = 0;
        t0 = thread_cpu();
        run(ctx);
        double total = thread_cpu() - t0;
        best_path = std::min(best_path, total - g_probe.caller_in_ranges + g_probe.path);
        best_ideal = std::min(best_ideal, total - g_probe.in_finish + g_probe.ideal);
    }
    state.counters["one_ms"] = best_one * 1e3;
    state.counters["path_ms"] = best_path * 1e3;
    state.counters["ratio"] = best_one / best_path;
    state.counters["ideal_ms"] = best_ideal * 1e3;
    state.counters["ideal_ratio"] = best_one / best_ideal;
    vl_context_destroy(ctx);
    vl_context_destroy(one);
    vl_thread_pool_destroy(pool);
    vl_pair_buffer_free(&pairs);
}

// The parallel sweeps, overlaps and box pruning against one worker (W = 1: no job system). kind
// 0: 16384 sphere sweeps (closest, contacts) over the world, 1: 16384 box overlaps, 2: box pruning
// of 100K boxes, 3: bipartite pruning of 100K x 25K boxes; in one call each.
//   volley_bench --benchmark_filter='par/query/' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
void BM_par_query(benchmark::State& state, int kind) {
    const uint32_t workers = (uint32_t)state.range(0);
    ParScene* s = kind < 2 ? par_scene(1) : nullptr;
    if (kind < 2 && !s) return state.SkipWithError("scene missing");
    ParContext pc(workers);
    constexpr uint32_t kQueries = 16384;
    std::vector<vl_sphere_sweep> sweeps(kQueries);
    std::vector<vl_aabb> boxes = kind < 2 ? std::vector<vl_aabb>(kQueries) : prune_boxes();
    std::vector<vl_hit> hits(kQueries);
    std::vector<vl_contact> contacts(kQueries);
    uint64_t x = 12345;
    auto rnd = [&x](float lo, float hi) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        return lo + (hi - lo) * (float)((x >> 40) * (1.0 / 16777216.0));
    };
    float lo[3] = {-100, -100, -100}, hi[3] = {100, 100, 100};
    if (s)
        for (int a = 0; a < 3; a++) lo[a] = s->mesh.lo[a], hi[a] = s->mesh.hi[a];
    for (uint32_t i = 0; i < kQueries; i++) {
        vl_sphere_sweep& w = sweeps[i];
        for (int a = 0; a < 3; a++) w.center[a] = rnd(lo[a], hi[a]), w.dir[a] = rnd(-1, 1);
        w.radius = rnd(0.1f, 1.0f), w.tmax = rnd(0, 30);
    }
    if (kind < 2)
        for (auto& b : boxes)
            for (int a = 0; a < 3; a++) b.min[a] = rnd(lo[a], hi[a]), b.max[a] = b.min[a] + rnd(0, 3.0f);
    vl_pair_buffer out = {};
    auto run = [&]() {
        out.count = 0;
        switch (kind) {
        case 0: vl_bvh_sweep_spheres(s->bvh, sweeps.data(), kQueries, 0, hits.data(), contacts.data(), on_context(pc.ctx)); break;
        case 1: vl_bvh_overlap_boxes(s->bvh, boxes.data(), kQueries, &out, on_context(pc.ctx)); break;
        case 2: vl_box_prune(boxes.data(), kPruneBoxes, &out, on_context(pc.ctx)); break;
        default:
            vl_box_prune_bipartite(boxes.data(), kPruneBoxes, boxes.data() + kPruneBoxes, kPruneB, &out, on_context(pc.ctx));
            break;
        }
    };
    run(); // warm: the context grows once
    for (auto _ : state) run();
    state.counters["pairs"] = (double)out.count;
    state.SetItemsProcessed((int64_t)state.iterations() * (kind < 2 ? kQueries : kPruneBoxes));
    vl_pair_buffer_free(&out);
}

double par_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

struct ParRegistrar {
    ParRegistrar() {
        const char* kinds[4] = {"sweep_spheres/world", "overlap_boxes/world", "box_prune/100k",
                                "box_prune_bipartite/100kx25k"};
        for (int k = 0; k < 4; k++)
            for (int w : {1, 2})
                benchmark::RegisterBenchmark((std::string("par/query/") + kinds[k]).c_str(), BM_par_query, k)
                    ->Arg(w)
                    ->ArgName("workers")
                    ->Unit(benchmark::kMillisecond)
                    ->UseRealTime()
                    ->ComputeStatistics("min", par_min);
        for (int k = 3; k < 5; k++)
            benchmark::RegisterBenchmark((std::string("par/path/") + kinds[k - 1]).c_str(), BM_par_path, 0, 0, k)
                ->Iterations(5)
                ->Unit(benchmark::kMillisecond);
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
            benchmark::RegisterBenchmark(("par/path/build/" + sc).c_str(), BM_par_path, which, 0, 1)
                ->Iterations(3)
                ->Unit(benchmark::kMillisecond);
            for (int w : {1, 2})
                benchmark::RegisterBenchmark(("par/refit/" + sc + "/volley").c_str(), BM_par_refit, which)
                    ->Arg(w)
                    ->ArgName("workers")
                    ->Unit(benchmark::kMillisecond)
                    ->UseRealTime()
                    ->ComputeStatistics("min", par_min);
            benchmark::RegisterBenchmark(("par/path/refit/" + sc).c_str(), BM_par_path, which, 0, 2)
                ->Iterations(5)
                ->Unit(benchmark::kMillisecond);
            for (int r = 0; r < 2; r++)
                benchmark::RegisterBenchmark(("par/path/raycast/" + sc + "/" + sets[r] + "/closest").c_str(),
                                             BM_par_path, which, r, 0)
                    ->ArgName("batch")
                    ->Arg(4096)
                    ->Arg(16384)
                    ->Arg(65536)
                    ->Iterations(3)
                    ->Unit(benchmark::kMillisecond);
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
