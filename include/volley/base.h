/* volley base API: status codes, version, allocator hooks, SIMD backend, pair buffers. */
#ifndef VOLLEY_BASE_H
#define VOLLEY_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <volley/types.h>
#include <volley/version.h>

#if defined(_WIN32) && defined(VOLLEY_SHARED)
#  if defined(VOLLEY_BUILDING)
#    define VL_API __declspec(dllexport)
#  else
#    define VL_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define VL_API __attribute__((visibility("default")))
#else
#  define VL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Every fallible call returns a vl_status. On any VL_ERR_* the call changed nothing observable,
 * except the batched queries, which answer every valid query and mark each invalid one a miss
 * (VL_ERR_INVALID_QUERY). A call that fails with VL_ERR_OUT_OF_MEMORY may keep storage that it
 * grew before the allocation that failed (vl_get_bytes_in_use() is then higher than before the call):
 * that capacity belongs to the object or buffer the call was given, later calls reuse it (the
 * call that then succeeds allocates no more for it), and destroying the object (or
 * vl_pair_buffer_free) frees it. Nothing leaks, and no answer, pair, handle, box or count changes. */
typedef enum vl_status {
    VL_OK = 0,
    VL_ERR_INVALID_ARGUMENT = 1, /* NULL where an array or object is needed, zero where a count must be positive */
    VL_ERR_INVALID_FLAGS = 2,    /* unknown flag bits or enum value */
    VL_ERR_OUT_OF_MEMORY = 3,    /* the allocator hook returned NULL; nothing leaked, nothing observable changed
                                  * (capacity grown before the failure may be kept: see above) */
    VL_ERR_INVALID_BOUNDS = 4,   /* NaN coordinate or min > max in a box */
    VL_ERR_INVALID_QUERY = 5,    /* some queries of a batch were invalid: they were answered as misses */
    VL_ERR_INVALID_HANDLE = 6,   /* unknown or removed handle */
    VL_ERR_DUPLICATE_HANDLE = 7, /* the same handle twice in one batch */
    VL_ERR_TOO_LARGE = 8,        /* a count or size past what the structure can index */
    VL_ERR_INVALID_GEOMETRY = 9  /* NaN or infinite vertex, index out of range */
} vl_status;

/* A static English string naming the status; never NULL ("unknown status" for bad values). */
VL_API const char* vl_status_string(vl_status status);

/* VL_VERSION (from version.h) of the library actually linked. */
VL_API uint32_t vl_get_version(void);
VL_API const char* vl_get_version_string(void);

/* The SIMD flavour the library was built with: "avx2", "sse4.1", "sse2", "neon" or "portable". */
VL_API const char* vl_get_simd_backend(void);
/* Lanes of the widest float vector the hot loops use: 8 for avx2, 4 otherwise. */
VL_API uint32_t vl_get_simd_width(void);

/* Allocator hooks. alloc returns memory aligned to `alignment` (a power of two, at most 4096)
 * or NULL; free receives the size and alignment that were asked for. All of volley's memory goes
 * through these hooks, so vl_get_bytes_in_use() counts it exactly. Set them before creating any
 * object: memory is always returned to the hooks that allocated it only if they stay in place. */
typedef struct vl_allocator {
    void* (*alloc)(size_t size, size_t alignment, void* user);
    void (*free)(void* ptr, size_t size, size_t alignment, void* user);
    void* user;
} vl_allocator;

/* NULL restores the default: malloc, aligned as asked; on Linux a block of 4 MiB or more starts on
 * a 2 MiB boundary and is advised for transparent huge pages (madvise), so that a large tree's
 * random reads miss the TLB less. A hook table with a NULL function is rejected. */
VL_API vl_status vl_set_allocator(const vl_allocator* allocator);
VL_API vl_allocator vl_get_allocator(void);
/* Bytes currently allocated by volley through the hooks (thread-safe counter). */
VL_API size_t vl_get_bytes_in_use(void);

/* Whether a box is valid where volley takes one: no bound NaN and min <= max on every axis
 * (infinite bounds are valid: a half-space, or everything). */
VL_API bool vl_aabb_is_valid(const vl_aabb* box);

/* Whether a ray is valid where volley takes one (see vl_ray). */
VL_API bool vl_ray_is_valid(const vl_ray* ray);

/* Pairs of indices or handles, a < b where the call says so. */
typedef struct vl_pair {
    uint32_t a, b;
} vl_pair;

/* A growable array of pairs. Zero-initialise it; calls that take one append to it and grow it
 * through the allocator hooks; set count = 0 to reuse the storage; free it with vl_pair_buffer_free.
 * pairs is NULL or storage that volley allocated, of `capacity` pairs: never a caller's array.
 * Every call that takes one refuses (VL_ERR_INVALID_ARGUMENT, nothing changed) a buffer with
 * count > capacity, or with pairs NULL and capacity > 0, or pairs set and capacity 0. */
typedef struct vl_pair_buffer {
    vl_pair* pairs;
    uint32_t count, capacity;
} vl_pair_buffer;

/* Grows the buffer so that it holds at least `capacity` pairs; keeps its contents.
 * VL_ERR_INVALID_ARGUMENT for NULL or an inconsistent buffer (see above). */
VL_API vl_status vl_pair_buffer_reserve(vl_pair_buffer* buffer, uint32_t capacity);
/* Releases the storage and zeroes the buffer; NULL is fine. Storage with capacity 0 is not
 * volley's (see above): it is not released, only forgotten. */
VL_API void vl_pair_buffer_free(vl_pair_buffer* buffer);

#ifdef __cplusplus
}
#endif

#endif
