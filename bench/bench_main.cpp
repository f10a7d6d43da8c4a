// volley_bench entry point: the suites register themselves from the other bench/*.cpp files.
#include <benchmark/benchmark.h>

#include <volley/volley.h>

int main(int argc, char** argv) {
    benchmark::AddCustomContext("volley", vl_version_string());
    benchmark::AddCustomContext("volley_simd", vl_simd_backend());
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
