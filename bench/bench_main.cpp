// volley_bench entry point: the suites register themselves from the other bench/*.cpp files.
#include <benchmark/benchmark.h>

#include <volley/volley.h>

// bench_broadphase.cpp: the benches that change malloc's settings, run after every other one.
void bench_register_last();

int main(int argc, char** argv) {
    benchmark::AddCustomContext("volley", vl_get_version_string());
    benchmark::AddCustomContext("volley_simd", vl_get_simd_backend());
    // Debian's libbenchmark is built without NDEBUG and says "Library was built as DEBUG" about
    // itself: the context names volley's own build type beside it.
    benchmark::AddCustomContext("volley_build_type", VOLLEY_BENCH_BUILD_TYPE);
    benchmark::AddCustomContext("note", "'Library was built as DEBUG' is about Google Benchmark's Debian build, not volley");
    bench_register_last();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
