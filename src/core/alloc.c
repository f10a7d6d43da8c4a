/* Allocator hooks and the counter of bytes in use. */
#define _DEFAULT_SOURCE 1 /* madvise and MADV_HUGEPAGE from sys/mman.h */
#include "core/alloc.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* The default hooks: malloc's own alignment where it suffices, else malloc with room to align
 * and the block's start kept in the word below the aligned pointer: a batch's scratch, allocated
 * and freed through vl_mem_alloc, costs a fraction of glibc's aligned_alloc(64)
 * (docs/measurements/rays.md). Blocks of VL_HUGE_MIN or more (a large tree's rows, nodes and build
 * arrays) start on a 2 MiB boundary and ask Linux for transparent huge pages, which systems that
 * set THP to "madvise" give only on request: a query that lands on a random leaf of a large tree
 * then misses the TLB far less, and the build, overlaps and sweeps of such a tree run faster
 * (docs/measurements/tree.md). */
#define VL_HUGE_PAGE ((size_t)2 << 20)
#define VL_HUGE_MIN ((size_t)4 << 20)

static int malloc_aligns(size_t alignment) { return alignment <= _Alignof(max_align_t); }

static size_t block_alignment(size_t size, size_t alignment) {
    return size >= VL_HUGE_MIN ? VL_HUGE_PAGE : alignment;
}

static void advise_huge_pages(void* ptr, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= VL_HUGE_MIN) (void)madvise(ptr, size & ~(VL_HUGE_PAGE - 1), MADV_HUGEPAGE); /* advice only */
#else
    (void)ptr, (void)size;
#endif
}

static void* default_alloc(size_t size, size_t alignment, void* user) {
    (void)user;
    alignment = block_alignment(size, alignment);
    if (malloc_aligns(alignment)) return malloc(size);
    size_t padded = size + alignment + sizeof(void*);
    if (padded < size) return NULL;
    char* block = malloc(padded);
    if (!block) return NULL;
    uintptr_t aligned = ((uintptr_t)block + sizeof(void*) + alignment - 1) & ~(uintptr_t)(alignment - 1);
    memcpy((void*)(aligned - sizeof(void*)), &block, sizeof block);
    advise_huge_pages((void*)aligned, size);
    return (void*)aligned;
}

static void default_free(void* ptr, size_t size, size_t alignment, void* user) {
    (void)user;
    alignment = block_alignment(size, alignment);
    if (malloc_aligns(alignment)) {
        free(ptr);
        return;
    }
    void* block;
    memcpy(&block, (char*)ptr - sizeof(void*), sizeof block);
    free(block);
}

static vl_allocator g_allocator = {default_alloc, default_free, NULL};
static atomic_size_t g_bytes_in_use;

vl_status vl_set_allocator(const vl_allocator* allocator) {
    if (!allocator) {
        g_allocator = (vl_allocator){default_alloc, default_free, NULL};
        return VL_OK;
    }
    if (!allocator->alloc || !allocator->free) return VL_ERR_INVALID_ARGUMENT;
    g_allocator = *allocator;
    return VL_OK;
}

vl_allocator vl_get_allocator(void) { return g_allocator; }

size_t vl_get_bytes_in_use(void) { return atomic_load_explicit(&g_bytes_in_use, memory_order_relaxed); }

void* vl_mem_alloc(size_t size) {
    if (size == 0) return NULL;
    void* ptr = g_allocator.alloc(size, VL_ALIGNMENT, g_allocator.user);
    if (ptr) atomic_fetch_add_explicit(&g_bytes_in_use, size, memory_order_relaxed);
    return ptr;
}

void* vl_mem_calloc(size_t size) {
    void* ptr = vl_mem_alloc(size);
    if (ptr) memset(ptr, 0, size);
    return ptr;
}

void vl_mem_free(void* ptr, size_t size) {
    if (!ptr) return;
    g_allocator.free(ptr, size, VL_ALIGNMENT, g_allocator.user);
    atomic_fetch_sub_explicit(&g_bytes_in_use, size, memory_order_relaxed);
}

vl_status vl_array_reserve(void** data, uint32_t* capacity, uint32_t keep, uint64_t needed, size_t elem_size) {
    if (needed <= *capacity) return VL_OK;
    if (needed > UINT32_MAX) return VL_ERR_TOO_LARGE;
    uint64_t grown = (uint64_t)*capacity * 2;
    if (grown < needed) grown = needed;
    if (grown < 16) grown = 16;
    if (grown > UINT32_MAX) grown = UINT32_MAX;
    if (grown > SIZE_MAX / elem_size) return VL_ERR_TOO_LARGE;
    void* fresh = vl_mem_alloc((size_t)grown * elem_size);
    if (!fresh) return VL_ERR_OUT_OF_MEMORY;
    if (*data && keep) memcpy(fresh, *data, (size_t)keep * elem_size);
    vl_mem_free(*data, (size_t)*capacity * elem_size);
    *data = fresh;
    *capacity = (uint32_t)grown;
    return VL_OK;
}

void vl_array_free(void** data, uint32_t* capacity, size_t elem_size) {
    vl_mem_free(*data, (size_t)*capacity * elem_size);
    *data = NULL;
    *capacity = 0;
}
