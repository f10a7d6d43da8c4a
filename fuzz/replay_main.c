/* Runs a fuzz target without libFuzzer: on the files given as arguments, or on a reproducible
 * stream of random inputs (count scaled as the tests' cases: VOLLEY_TEST_SCALE, and the heavy
 * share VOLLEY_TEST_WEIGHT where fuzz/CMakeLists.txt sets it), so that every build flavour, the
 * sanitizers and qemu included, exercises the targets as ordinary tests. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "test_rng.h"
#include "test_util.h"

static int replay_file(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) return fprintf(stderr, "cannot open %s\n", path), 1;
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (replay_file(argv[i])) return 1;
        printf("%s: %d passed, 0 failed\n", argv[0], argc - 1);
        return 0;
    }
    unsigned runs = (unsigned)(3000 * test_scale());
    if (runs < 30) runs = 30;
    static uint8_t buf[4096];
    test_rng rng = {2024};
    for (unsigned r = 0; r < runs; r++) {
        size_t n = (size_t)(test_next(&rng) % sizeof buf);
        /* skew the bytes so that small opcodes and grid coordinates dominate, as a fuzzer's would */
        for (size_t i = 0; i < n; i++) {
            uint64_t v = test_next(&rng);
            buf[i] = (uint8_t)((v & 3) == 0 ? v >> 8 : (v >> 8) % 64);
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("%s: %u passed, 0 failed\n", argv[0], runs);
    return 0;
}
