/* Base API: status strings, version, backend, allocator hooks and the byte counter, pair buffers. */
#include <stdint.h>

#include <volley/volley.h>

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
    CHECK(vl_version() == VL_VERSION, "vl_version %u != VL_VERSION %u", vl_version(), (unsigned)VL_VERSION);
    CHECK(strcmp(vl_version_string(), VL_VERSION_STRING) == 0, "version string %s", vl_version_string());
    const char* backend = vl_simd_backend();
    CHECK(backend != NULL, "no backend");
    /* CMake's backend option names (sse41) differ from the reported ones (sse4.1) in one case. */
    const char* expected = getenv("VOLLEY_EXPECT_BACKEND");
    if (expected) {
        if (strcmp(expected, "sse41") == 0) expected = "sse4.1";
        CHECK(strcmp(backend, expected) == 0, "backend %s, built for %s", backend, expected);
    }
    uint32_t width = vl_simd_width();
    CHECK(width == (strcmp(backend, "avx2") == 0 ? 8u : 4u), "width %u for %s", width, backend);
}

/* A counting allocator that fails after `budget` allocations (or never when budget < 0). */
typedef struct counting_hooks {
    long budget;
    long allocs, frees;
    size_t bytes;
    int misaligned, size_mismatch;
} counting_hooks;

static void* counting_alloc(size_t size, size_t alignment, void* user) {
    counting_hooks* h = user;
    if (h->budget == 0) return NULL;
    if (h->budget > 0) h->budget--;
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    void* p = aligned_alloc(alignment, rounded);
    if (!p) return NULL;
    h->allocs++;
    h->bytes += size;
    return p;
}

static void counting_free(void* p, size_t size, size_t alignment, void* user) {
    counting_hooks* h = user;
    if (size > h->bytes) h->size_mismatch++;
    if ((uintptr_t)p % alignment) h->misaligned++;
    h->frees++;
    h->bytes -= size;
    free(p);
}

static void test_allocator(void) {
    counting_hooks hooks = {.budget = -1};
    vl_allocator bad = {counting_alloc, NULL, &hooks};
    CHECK(vl_set_allocator(&bad) == VL_ERR_INVALID_ARGUMENT, "hook table without free accepted");
    vl_allocator mine = {counting_alloc, counting_free, &hooks};
    CHECK(vl_set_allocator(&mine) == VL_OK, "set allocator");
    CHECK(vl_get_allocator().user == &hooks, "get allocator");

    size_t before = vl_bytes_in_use();
    vl_pair_buffer buf = {0};
    CHECK(vl_pair_buffer_reserve(&buf, 100) == VL_OK, "reserve");
    CHECK(buf.capacity >= 100 && buf.count == 0 && buf.pairs != NULL, "capacity %u", buf.capacity);
    CHECK((uintptr_t)buf.pairs % 64 == 0, "pairs not cache-line aligned");
    CHECK(vl_bytes_in_use() == before + buf.capacity * sizeof(vl_pair), "counter %zu", vl_bytes_in_use());
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
    CHECK(vl_bytes_in_use() == before, "leak: %zu bytes in use", vl_bytes_in_use() - before);
    CHECK(hooks.allocs == hooks.frees && hooks.bytes == 0, "allocs %ld frees %ld", hooks.allocs, hooks.frees);
    CHECK(hooks.misaligned == 0 && hooks.size_mismatch == 0, "free saw wrong size or alignment");
    CHECK(vl_set_allocator(NULL) == VL_OK, "restore default allocator");
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
    test_pair_buffer_bad_input();
    return test_finish("test_base");
}
