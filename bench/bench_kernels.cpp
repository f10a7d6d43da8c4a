// Kernel throughput: ray-box slab tests and box-box overlap tests per second and per cycle, for
// the scalar path (width 1) and the SIMD kernels at the library's batch width (8 lanes with AVX2,
// else 4). Per cycle uses the clock Google Benchmark reads (the nominal one on most machines).
#include <benchmark/benchmark.h>

#include <chrono>
#include <stdexcept>

#include "kernel_shim.h"

namespace {

constexpr uint32_t kBoxes = 1024;  // SoA boxes stay in L1: this measures arithmetic, not memory
constexpr uint32_t kRays = 256;

struct Scene {
    kernel_scene* scene;
    Scene(uint32_t boxes, uint32_t rays, int parallel) : scene(kernel_scene_create(boxes, rays, parallel)) {
        if (!scene) throw std::runtime_error("kernel scene allocation failed");
    }
    ~Scene() { kernel_scene_destroy(scene); }
};

using Clock = std::chrono::steady_clock;

void report(benchmark::State& state, double tests_per_iteration, Clock::duration elapsed) {
    double cps = benchmark::CPUInfo::Get().cycles_per_second;
    double tests = tests_per_iteration * static_cast<double>(state.iterations());
    double seconds = std::chrono::duration<double>(elapsed).count();
    state.counters["Gtests/s"] = tests / seconds * 1e-9;
    if (cps > 0) {
        state.counters["tests/cycle"] = tests / (seconds * cps);
        state.counters["cycles/test"] = seconds * cps / tests;
    }
}

template <uint64_t (*Pass)(const kernel_scene*, int)>
void BM_kernel(benchmark::State& state) {
    const int width = static_cast<int>(state.range(0));
    const int parallel = static_cast<int>(state.range(1));
    Scene s(kBoxes, kRays, parallel);
    const uint64_t expected = Pass(s.scene, 1);
    auto start = Clock::now();
    for (auto _ : state) benchmark::DoNotOptimize(Pass(s.scene, width));
    auto elapsed = Clock::now() - start;
    if (Pass(s.scene, width) != expected) state.SkipWithError("SIMD and scalar answers differ");
    report(state, static_cast<double>(kernel_scene_tests(s.scene)), elapsed);
}

void BM_kernel_box_vs_boxes(benchmark::State& state) {
    const int width = static_cast<int>(state.range(0));
    Scene s(kBoxes, 1, 0);
    const uint64_t expected = kernel_box_vs_boxes(s.scene, 1);
    auto start = Clock::now();
    for (auto _ : state) benchmark::DoNotOptimize(kernel_box_vs_boxes(s.scene, width));
    auto elapsed = Clock::now() - start;
    if (kernel_box_vs_boxes(s.scene, width) != expected) state.SkipWithError("SIMD and scalar answers differ");
    report(state, static_cast<double>(kBoxes) * kBoxes, elapsed);
}

void widths(benchmark::internal::Benchmark* b) {
    b->ArgNames({"width", "parallel"});
    for (int parallel : {0, 1})
        for (int width : {1, kernel_simd_width()}) b->Args({width, parallel});
}

}  // namespace

BENCHMARK_TEMPLATE(BM_kernel, kernel_ray_vs_boxes)->Name("kernel/ray_vs_boxes")->Apply(widths);
BENCHMARK_TEMPLATE(BM_kernel, kernel_rays_vs_box)->Name("kernel/rays_vs_box")->Apply(widths);
BENCHMARK(BM_kernel_box_vs_boxes)->Name("kernel/box_vs_boxes")->ArgName("width")->Arg(1)->Arg(kernel_simd_width());
