/* Internal memory API: every byte volley owns goes through the user's hooks and is counted. */
#ifndef VL_CORE_ALLOC_H
#define VL_CORE_ALLOC_H

#include <volley/base.h>

/* Alignment of every internal block: a cache line, and enough for any SIMD load. */
#define VL_ALIGNMENT 64u

/* NULL on failure or when size is 0. */
void* vl_mem_alloc(size_t size);
/* Same, zero-filled. */
void* vl_mem_calloc(size_t size);
/* ptr may be NULL; size must be the size given to vl_mem_alloc. */
void vl_mem_free(void* ptr, size_t size);

/* Grows *data (an array of *capacity elements of elem_size bytes, the first `keep` of them in use)
 * so that it holds at least `needed` elements; capacity at least doubles. On failure nothing
 * changes and VL_ERR_OUT_OF_MEMORY is returned; past UINT32_MAX elements, VL_ERR_TOO_LARGE. */
vl_status vl_array_reserve(void** data, uint32_t* capacity, uint32_t keep, uint64_t needed, size_t elem_size);

/* Frees an array made by vl_array_reserve and zeroes the capacity. */
void vl_array_free(void** data, uint32_t* capacity, size_t elem_size);

/* The typed forms used everywhere: arr is an lvalue of pointer type T* and cap its uint32_t
 * capacity; the element size is sizeof(T). */
#define VL_ARRAY_RESERVE(arr, cap, keep, needed) \
    vl_array_reserve((void**)&(arr), &(cap), (keep), (needed), sizeof *(arr))
#define VL_ARRAY_FREE(arr, cap) vl_array_free((void**)&(arr), &(cap), sizeof *(arr))

#endif
