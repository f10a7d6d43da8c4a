/* Floats as uint32 keys with the same order (the sortable-float encoding of the SAP endpoints),
 * one at a time and 4 or 8 at once. */
#ifndef VL_SIMD_KERNELS_H
#define VL_SIMD_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <volley/types.h>

#include "simd/simd.h"

/* Floats as uint32 keys with the same order (Terdiman, "Sweep-and-prune", 2007, appendix A): flip
 * all bits of negatives, the sign bit of positives. -0 is made +0 first, so that equal floats give
 * equal keys. */
static inline uint32_t vl_float_to_sortable(float f) {
    uint32_t bits;
    f += 0.0f;
    memcpy(&bits, &f, sizeof bits);
    uint32_t mask = (uint32_t)(-(int32_t)(bits >> 31)) | 0x80000000u;
    return bits ^ mask;
}

static inline float vl_sortable_to_float(uint32_t key) {
    uint32_t bits = (key & 0x80000000u) ? key ^ 0x80000000u : ~key;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* vl_float_to_sortable of 4 floats. */
VL_INLINE vl_i4 vl_k4_float_to_sortable(vl_f4 f) {
    vl_i4 bits = vl_f4_as_i(vl_f4_add(f, vl_f4_zero()));
    return vl_i4_xor(bits, vl_i4_or(vl_i4_sign_mask(bits), vl_i4_set1((int32_t)0x80000000u)));
}

/* vl_sortable_to_float of 4 keys: negatives had every bit flipped, positives only the sign bit. */
VL_INLINE vl_f4 vl_k4_sortable_to_float(vl_i4 key) {
    vl_i4 negative = vl_i4_eq(vl_i4_sign_mask(key), vl_i4_set1(0)); /* sign bit clear: was negative */
    return vl_i4_as_f(vl_i4_xor(key, vl_i4_or(negative, vl_i4_set1((int32_t)0x80000000u))));
}

/* vl_float_to_sortable of 8 floats. */
VL_INLINE vl_i8 vl_k8_float_to_sortable(vl_f8 f) {
    vl_i8 bits = vl_f8_as_i(vl_f8_add(f, vl_f8_zero()));
    return vl_i8_xor(bits, vl_i8_or(vl_i8_sign_mask(bits), vl_i8_set1((int32_t)0x80000000u)));
}

/* vl_sortable_to_float of 8 keys. */
VL_INLINE vl_f8 vl_k8_sortable_to_float(vl_i8 key) {
    vl_i8 negative = vl_i8_eq(vl_i8_sign_mask(key), vl_i8_set1(0));
    return vl_i8_as_f(vl_i8_xor(key, vl_i8_or(negative, vl_i8_set1((int32_t)0x80000000u))));
}

#endif
