/* vl_pair_buffer: the growable output array of every pair-producing call. */
#include "core/pair_buffer.h"

vl_status vl_pair_buffer_reserve(vl_pair_buffer* buffer, uint32_t capacity) {
    if (!vl_pair_buffer_is_valid(buffer)) return VL_ERR_INVALID_ARGUMENT;
    return VL_ARRAY_RESERVE(buffer->pairs, buffer->capacity, buffer->count, capacity);
}

void vl_pair_buffer_free(vl_pair_buffer* buffer) {
    if (!buffer) return;
    /* without a capacity the storage is not volley's (or its size is lost): left to its owner */
    if (buffer->pairs && buffer->capacity) vl_mem_free(buffer->pairs, (size_t)buffer->capacity * sizeof(vl_pair));
    buffer->pairs = NULL;
    buffer->count = buffer->capacity = 0;
}

vl_status vl_pair_buffer_push(vl_pair_buffer* buffer, uint32_t a, uint32_t b) {
    if (buffer->count == buffer->capacity) {
        vl_status status = vl_pair_buffer_reserve(buffer, buffer->count + 1u);
        if (status != VL_OK) return status;
    }
    buffer->pairs[buffer->count++] = (vl_pair){a, b};
    return VL_OK;
}
