/* Base API: status strings, version, backend, allocator hooks and the byte counter, pair buffers. */
#include <stdint.h>

#include <volley/volley.h>

#include "test_alloc.h"
#include "test_util.h"

static void test_status_strings(void) {
    const char* seen[16] = {0};
    for (int s = VL_OK; s <= VL_ERR_INVALID_GEOMETRY; s++) {
        const char* text = vl_status_string((vl_status)s);
        CHECK(text && *text, "status %d has no string", s);
        for (int k = 0; k < s; k++) CHECK(strcmp(seen[k], text) != 0, "statuses %d and %d share '%s'", k, s, text);
        seen[s] = text;
    }
    CHECK(strcmp(vl_status_string((vl_status)999), "unknown status") == 0, "bad status value");
}

static void test_version_and_backend(void) {
    CHECK(vl_get_version() == VL_VERSION, "vl_get_version %u != VL_VERSION %u", vl_get_version(), (unsigned)VL_VERSION);
    CHECK(strcmp(vl_get_version_string(), VL_VERSION_STRING) == 0, "version string %s", vl_get_version_string());
    const char* backend = vl_get_simd_backend();
    CHECK(backend != NULL, "no backend");
    /* CMake's backend option names (sse41) differ from the reported ones (sse4.1) in one case. */
    const char* expected = getenv("VOLLEY_EXPECT_BACKEND");
    if (expected) {
        if (strcmp(expected, "sse41") == 0) expected = "sse4.1";
        CHECK(strcmp(backend, expected) == 0, "backend %s, built for %s", backend, expected);
    }
    uint32_t width = vl_get_simd_width();
    CHECK(width == (strcmp(backend, "avx2") == 0 ? 8u : 4u), "width %u for %s", width, backend);
}

static void test_allocator(void) {
    test_alloc_hooks hooks;
    vl_allocator bad = {test_alloc_fn, NULL, &hooks};
    CHECK(vl_set_allocator(&bad) == VL_ERR_INVALID_ARGUMENT, "hook table without free accepted");
    test_alloc_begin(&hooks);
    CHECK(vl_get_allocator().user == &hooks, "get allocator");

    size_t before = vl_get_bytes_in_use();
    vl_pair_buffer buf = {0};
    CHECK(vl_pair_buffer_reserve(&buf, 100) == VL_OK, "reserve");
    CHECK(buf.capacity >= 100 && buf.count == 0 && buf.pairs != NULL, "capacity %u", buf.capacity);
    CHECK((uintptr_t)buf.pairs % 64 == 0, "pairs not cache-line aligned");
    CHECK(vl_get_bytes_in_use() == before + buf.capacity * sizeof(vl_pair), "counter %zu", vl_get_bytes_in_use());
    CHECK(hooks.bytes == buf.capacity * sizeof(vl_pair), "hooks saw %zu bytes", hooks.bytes);
    for (uint32_t i = 0; i < 100; i++) buf.pairs[buf.count++] = (vl_pair){i, i + 1};
    CHECK(vl_pair_buffer_reserve(&buf, 1000) == VL_OK, "grow");
    int intact = 1;
    for (uint32_t i = 0; i < 100; i++) intact &= buf.pairs[i].a == i && buf.pairs[i].b == i + 1;
    CHECK(intact && buf.count == 100, "contents lost on growth");

    /* A failing allocation: a clear status, the buffer exactly as it was, nothing leaked. */
    vl_pair_buffer copy = buf;
    hooks.budget = 0;
    CHECK(vl_pair_buffer_reserve(&buf, 100000) == VL_ERR_OUT_OF_MEMORY, "failing hook not reported");
    CHECK(memcmp(&copy, &buf, sizeof buf) == 0, "buffer changed by a failed reserve");
    hooks.budget = -1;

    vl_pair_buffer_free(&buf);
    CHECK(buf.pairs == NULL && buf.count == 0 && buf.capacity == 0, "free does not zero");
    vl_pair_buffer_free(&buf);
    vl_pair_buffer_free(NULL);
    CHECK(vl_get_bytes_in_use() == before, "leak: %zu bytes in use", vl_get_bytes_in_use() - before);
    CHECK(hooks.allocs == hooks.frees && hooks.bytes == 0, "allocs %ld frees %ld", hooks.allocs, hooks.frees);
    CHECK(hooks.misaligned == 0, "free saw a misaligned block");
    test_alloc_end(&hooks);
    CHECK(vl_get_allocator().alloc != test_alloc_fn, "allocator not restored");
    CHECK(vl_set_allocator(NULL) == VL_OK, "restore default allocator");
}

/* The default hooks' large blocks (2 MiB aligned, huge pages asked for) and small ones alike:
 * aligned for SIMD, every byte writable and kept, all given back. */
static void test_default_hooks_blocks(void) {
    const size_t before = vl_get_bytes_in_use();
    const uint32_t sizes[] = {3, 1000, (4u << 20) / sizeof(vl_pair) - 1, (4u << 20) / sizeof(vl_pair), 3000000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        vl_pair_buffer buf = {0};
        CHECK(vl_pair_buffer_reserve(&buf, sizes[k]) == VL_OK, "reserve %u pairs", sizes[k]);
        CHECK(((uintptr_t)buf.pairs & 63u) == 0, "block of %u pairs not 64-byte aligned", sizes[k]);
        for (uint32_t i = 0; i < sizes[k]; i++) buf.pairs[i] = (vl_pair){i, ~i};
        uint32_t wrong = 0;
        for (uint32_t i = 0; i < sizes[k]; i++) wrong += buf.pairs[i].a != i || buf.pairs[i].b != ~i;
        CHECK(wrong == 0, "%u of %u pairs lost", wrong, sizes[k]);
        vl_pair_buffer_free(&buf);
    }
    CHECK(vl_get_bytes_in_use() == before, "leak: %zu bytes in use", vl_get_bytes_in_use() - before);
}

static void test_pair_buffer_bad_input(void) {
    CHECK(vl_pair_buffer_reserve(NULL, 4) == VL_ERR_INVALID_ARGUMENT, "NULL buffer");
    vl_pair_buffer broken = {NULL, 0, 8};
    CHECK(vl_pair_buffer_reserve(&broken, 4) == VL_ERR_INVALID_ARGUMENT, "capacity without storage");
    vl_pair_buffer overfull = {NULL, 5, 0};
    CHECK(vl_pair_buffer_reserve(&overfull, 4) == VL_ERR_INVALID_ARGUMENT, "count past capacity");
    vl_pair_buffer ok = {0};
    CHECK(vl_pair_buffer_reserve(&ok, 0) == VL_OK && ok.pairs == NULL, "reserve 0 allocates nothing");
}

int main(void) {
    test_status_strings();
    test_version_and_backend();
    test_allocator();
    test_default_hooks_blocks();
    test_pair_buffer_bad_input();
    return test_finish("test_base");
}
