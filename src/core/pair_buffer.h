/* Internal helpers over the public vl_pair_buffer. */
#ifndef VL_CORE_PAIR_BUFFER_H
#define VL_CORE_PAIR_BUFFER_H

#include "core/alloc.h"

/* Appends one pair, growing the buffer (amortised O(1)). */
vl_status vl_pair_buffer_push(vl_pair_buffer* buffer, uint32_t a, uint32_t b);

/* True when a caller's buffer is in a state that calls may append to: count <= capacity, and
 * storage exactly when capacity > 0 (storage with capacity 0 cannot be volley's: its size would
 * be unknown to the free hook). */
static inline int vl_pair_buffer_is_valid(const vl_pair_buffer* buffer) {
    return buffer && buffer->count <= buffer->capacity && (buffer->pairs != NULL) == (buffer->capacity != 0);
}

#endif
