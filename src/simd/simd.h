/* The SIMD layer: the one place in volley that includes SIMDe.
 *
 * vl_f4/vl_i4 are 4 lanes of float/int32 (SSE on x86, NEON on ARM, plain C with SIMDE_NO_NATIVE);
 * vl_f8/vl_i8 are 8 lanes (AVX2 where built, two 4-lane halves elsewhere). Every function of one
 * width has a twin of the same name in the other, so width-generic code (vl_fw_* in bvh_kernels.h)
 * is written once. Masks are vectors whose lanes are all ones (true) or all zeros (false).
 *
 * Kernels assume clean input: the public API rejects NaN before it reaches them, so SIMDe may use
 * the fast min/max that do not order NaN (SIMDE_FAST_NANS; a compare+select less on NEON). */
#ifndef VL_SIMD_SIMD_H
#define VL_SIMD_SIMD_H

#ifndef SIMDE_FAST_NANS
#define SIMDE_FAST_NANS
#endif
#include <simde/x86/avx2.h>
#include <stdint.h>

#include "compiler.h"

#if defined(SIMDE_NO_NATIVE)
#define VL_SIMD_BACKEND_NAME "portable"
#elif defined(SIMDE_X86_AVX2_NATIVE)
#define VL_SIMD_BACKEND_NAME "avx2"
#elif defined(SIMDE_X86_SSE4_1_NATIVE)
#define VL_SIMD_BACKEND_NAME "sse4.1"
#elif defined(SIMDE_X86_SSE2_NATIVE)
#define VL_SIMD_BACKEND_NAME "sse2"
#elif defined(SIMDE_ARM_NEON_A64V8_NATIVE)
#define VL_SIMD_BACKEND_NAME "neon"
#else
#define VL_SIMD_BACKEND_NAME "portable"
#endif

/* 8 lanes pay only where the hardware has them. */
#if defined(SIMDE_X86_AVX2_NATIVE)
#define VL_SIMD_PREFERRED_WIDTH 8
#else
#define VL_SIMD_PREFERRED_WIDTH 4
#endif

typedef simde__m128 vl_f4;
typedef simde__m128i vl_i4;
typedef simde__m256 vl_f8;
typedef simde__m256i vl_i8;

/* ---- 4 lanes, float ---------------------------------------------------------------------- */
VL_INLINE vl_f4 vl_f4_load(const float* p) { return simde_mm_load_ps(p); } /* 16-byte aligned */
VL_INLINE vl_f4 vl_f4_loadu(const float* p) { return simde_mm_loadu_ps(p); }
VL_INLINE void vl_f4_store(float* p, vl_f4 a) { simde_mm_store_ps(p, a); }
VL_INLINE void vl_f4_storeu(float* p, vl_f4 a) { simde_mm_storeu_ps(p, a); }
VL_INLINE vl_f4 vl_f4_set1(float x) { return simde_mm_set1_ps(x); }
VL_INLINE vl_f4 vl_f4_zero(void) { return simde_mm_setzero_ps(); }
VL_INLINE vl_f4 vl_f4_add(vl_f4 a, vl_f4 b) { return simde_mm_add_ps(a, b); }
VL_INLINE vl_f4 vl_f4_sub(vl_f4 a, vl_f4 b) { return simde_mm_sub_ps(a, b); }
VL_INLINE vl_f4 vl_f4_mul(vl_f4 a, vl_f4 b) { return simde_mm_mul_ps(a, b); }
VL_INLINE vl_f4 vl_f4_div(vl_f4 a, vl_f4 b) { return simde_mm_div_ps(a, b); }
VL_INLINE vl_f4 vl_f4_min(vl_f4 a, vl_f4 b) { return simde_mm_min_ps(a, b); }
VL_INLINE vl_f4 vl_f4_max(vl_f4 a, vl_f4 b) { return simde_mm_max_ps(a, b); }
VL_INLINE vl_f4 vl_f4_lt(vl_f4 a, vl_f4 b) { return simde_mm_cmplt_ps(a, b); }
VL_INLINE vl_f4 vl_f4_le(vl_f4 a, vl_f4 b) { return simde_mm_cmple_ps(a, b); }
VL_INLINE vl_f4 vl_f4_gt(vl_f4 a, vl_f4 b) { return simde_mm_cmpgt_ps(a, b); }
VL_INLINE vl_f4 vl_f4_ge(vl_f4 a, vl_f4 b) { return simde_mm_cmpge_ps(a, b); }
VL_INLINE vl_f4 vl_f4_eq(vl_f4 a, vl_f4 b) { return simde_mm_cmpeq_ps(a, b); }
VL_INLINE vl_f4 vl_f4_and(vl_f4 a, vl_f4 b) { return simde_mm_and_ps(a, b); }
VL_INLINE vl_f4 vl_f4_or(vl_f4 a, vl_f4 b) { return simde_mm_or_ps(a, b); }
VL_INLINE vl_f4 vl_f4_xor(vl_f4 a, vl_f4 b) { return simde_mm_xor_ps(a, b); }
/* a and not b */
VL_INLINE vl_f4 vl_f4_andnot(vl_f4 a, vl_f4 b) { return simde_mm_andnot_ps(b, a); }
/* lane-wise mask ? if_true : if_false */
VL_INLINE vl_f4 vl_f4_select(vl_f4 mask, vl_f4 if_true, vl_f4 if_false) {
    return simde_mm_blendv_ps(if_false, if_true, mask);
}
VL_INLINE vl_f4 vl_f4_abs(vl_f4 a) { return simde_mm_andnot_ps(simde_mm_set1_ps(-0.0f), a); }
VL_INLINE vl_f4 vl_f4_true(void) { return simde_mm_castsi128_ps(simde_mm_set1_epi32(-1)); }

/* Lane masks without movemask on NEON, where it costs a shift-and-add chain. */
VL_INLINE int vl_f4_any(vl_f4 mask) {
#if defined(SIMDE_ARM_NEON_A64V8_NATIVE) && !defined(SIMDE_NO_NATIVE)
    return vmaxvq_u32(vreinterpretq_u32_f32(mask)) != 0;
#else
    return simde_mm_movemask_ps(mask) != 0;
#endif
}
VL_INLINE int vl_f4_all(vl_f4 mask) {
#if defined(SIMDE_ARM_NEON_A64V8_NATIVE) && !defined(SIMDE_NO_NATIVE)
    return vminvq_u32(vreinterpretq_u32_f32(mask)) != 0;
#else
    return simde_mm_movemask_ps(mask) == 0xF;
#endif
}
/* bit i set when lane i is true */
VL_INLINE uint32_t vl_f4_bits(vl_f4 mask) {
#if defined(SIMDE_ARM_NEON_A64V8_NATIVE) && !defined(SIMDE_NO_NATIVE)
    static const uint32_t weights[4] = {1, 2, 4, 8};
    return vaddvq_u32(vandq_u32(vreinterpretq_u32_f32(mask), vld1q_u32(weights)));
#else
    return (uint32_t)simde_mm_movemask_ps(mask);
#endif
}
/* lanes [0, n) true, the rest false; n in [0, 4] */
VL_INLINE vl_f4 vl_f4_first(uint32_t n) {
    vl_i4 lane = simde_mm_setr_epi32(0, 1, 2, 3);
    return simde_mm_castsi128_ps(simde_mm_cmpgt_epi32(simde_mm_set1_epi32((int32_t)n), lane));
}

/* ---- 4 lanes, int32 ---------------------------------------------------------------------- */
VL_INLINE vl_i4 vl_i4_load(const void* p) { return simde_mm_load_si128((const simde__m128i*)p); }
VL_INLINE vl_i4 vl_i4_loadu(const void* p) { return simde_mm_loadu_si128((const simde__m128i*)p); }
VL_INLINE void vl_i4_store(void* p, vl_i4 a) { simde_mm_store_si128((simde__m128i*)p, a); }
VL_INLINE void vl_i4_storeu(void* p, vl_i4 a) { simde_mm_storeu_si128((simde__m128i*)p, a); }
VL_INLINE vl_i4 vl_i4_set1(int32_t x) { return simde_mm_set1_epi32(x); }
VL_INLINE vl_i4 vl_i4_add(vl_i4 a, vl_i4 b) { return simde_mm_add_epi32(a, b); }
VL_INLINE vl_i4 vl_i4_sub(vl_i4 a, vl_i4 b) { return simde_mm_sub_epi32(a, b); }
VL_INLINE vl_i4 vl_i4_and(vl_i4 a, vl_i4 b) { return simde_mm_and_si128(a, b); }
VL_INLINE vl_i4 vl_i4_or(vl_i4 a, vl_i4 b) { return simde_mm_or_si128(a, b); }
VL_INLINE vl_i4 vl_i4_xor(vl_i4 a, vl_i4 b) { return simde_mm_xor_si128(a, b); }
VL_INLINE vl_i4 vl_i4_eq(vl_i4 a, vl_i4 b) { return simde_mm_cmpeq_epi32(a, b); }
VL_INLINE vl_i4 vl_i4_gt(vl_i4 a, vl_i4 b) { return simde_mm_cmpgt_epi32(a, b); } /* signed */
VL_INLINE vl_i4 vl_i4_min(vl_i4 a, vl_i4 b) { return simde_mm_min_epi32(a, b); }
VL_INLINE vl_i4 vl_i4_max(vl_i4 a, vl_i4 b) { return simde_mm_max_epi32(a, b); }
VL_INLINE vl_i4 vl_i4_min_u(vl_i4 a, vl_i4 b) { return simde_mm_min_epu32(a, b); }
VL_INLINE vl_i4 vl_i4_max_u(vl_i4 a, vl_i4 b) { return simde_mm_max_epu32(a, b); }
/* all ones in lanes holding a negative value */
VL_INLINE vl_i4 vl_i4_sign_mask(vl_i4 a) { return simde_mm_srai_epi32(a, 31); }
/* lane j = a's lane idx[j] & 3 */
VL_INLINE vl_i4 vl_i4_permute(vl_i4 a, vl_i4 idx) {
#if defined(SIMDE_X86_AVX_NATIVE)
    return simde_mm_castps_si128(simde_mm_permutevar_ps(simde_mm_castsi128_ps(a), idx));
#else
    /* a byte shuffle (pshufb, tbl): byte k of lane j comes from byte 4 * idx[j] + k */
    vl_i4 base = simde_mm_slli_epi32(simde_mm_and_si128(idx, simde_mm_set1_epi32(3)), 2);
    base = simde_mm_shuffle_epi8(base, simde_mm_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12));
    const simde__m128i byte = simde_mm_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    return simde_mm_shuffle_epi8(a, simde_mm_add_epi8(base, byte));
#endif
}
/* Macros, as their immediates must be constants: the 32-bit lanes (integer or float) of each
 * 128-bit half shuffled by imm; the 16-bit lanes of b where imm's bit is set (the same bits for
 * each half), of a elsewhere. */
#define vl_i4_shuffle(a, imm) simde_mm_shuffle_epi32(a, imm)
#define vl_i8_shuffle(a, imm) simde_mm256_shuffle_epi32(a, imm)
#define vl_f8_shuffle(a, imm) simde_mm256_permute_ps(a, imm)
#define vl_i4_blend16(a, b, imm) simde_mm_blend_epi16(a, b, imm)
#define vl_i8_blend16(a, b, imm) simde_mm256_blend_epi16(a, b, imm)
VL_INLINE vl_i4 vl_f4_as_i(vl_f4 a) { return simde_mm_castps_si128(a); }
/* truncation toward zero (in range of int32) */
VL_INLINE vl_i4 vl_f4_to_i(vl_f4 a) { return simde_mm_cvttps_epi32(a); }
VL_INLINE vl_f4 vl_i4_as_f(vl_i4 a) { return simde_mm_castsi128_ps(a); }
VL_INLINE vl_f4 vl_i4_to_f(vl_i4 a) { return simde_mm_cvtepi32_ps(a); }
/* 4x4 transpose: lane j of r[i] becomes lane i of r[j] */
VL_INLINE void vl_f4_transpose(vl_f4 r[4]) {
    vl_f4 t0 = simde_mm_unpacklo_ps(r[0], r[1]), t1 = simde_mm_unpacklo_ps(r[2], r[3]);
    vl_f4 t2 = simde_mm_unpackhi_ps(r[0], r[1]), t3 = simde_mm_unpackhi_ps(r[2], r[3]);
    r[0] = simde_mm_movelh_ps(t0, t1), r[1] = simde_mm_movehl_ps(t1, t0);
    r[2] = simde_mm_movelh_ps(t2, t3), r[3] = simde_mm_movehl_ps(t3, t2);
}

/* ---- 8 lanes, float ---------------------------------------------------------------------- */
VL_INLINE vl_f8 vl_f8_load(const float* p) { return simde_mm256_load_ps(p); } /* 32-byte aligned */
VL_INLINE vl_f8 vl_f8_loadu(const float* p) { return simde_mm256_loadu_ps(p); }
VL_INLINE void vl_f8_store(float* p, vl_f8 a) { simde_mm256_store_ps(p, a); }
VL_INLINE void vl_f8_storeu(float* p, vl_f8 a) { simde_mm256_storeu_ps(p, a); }
VL_INLINE vl_f8 vl_f8_set1(float x) { return simde_mm256_set1_ps(x); }
VL_INLINE vl_f8 vl_f8_zero(void) { return simde_mm256_setzero_ps(); }
VL_INLINE vl_f8 vl_f8_add(vl_f8 a, vl_f8 b) { return simde_mm256_add_ps(a, b); }
VL_INLINE vl_f8 vl_f8_sub(vl_f8 a, vl_f8 b) { return simde_mm256_sub_ps(a, b); }
VL_INLINE vl_f8 vl_f8_mul(vl_f8 a, vl_f8 b) { return simde_mm256_mul_ps(a, b); }
VL_INLINE vl_f8 vl_f8_div(vl_f8 a, vl_f8 b) { return simde_mm256_div_ps(a, b); }
VL_INLINE vl_f8 vl_f8_min(vl_f8 a, vl_f8 b) { return simde_mm256_min_ps(a, b); }
VL_INLINE vl_f8 vl_f8_max(vl_f8 a, vl_f8 b) { return simde_mm256_max_ps(a, b); }
VL_INLINE vl_f8 vl_f8_lt(vl_f8 a, vl_f8 b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_LT_OQ); }
VL_INLINE vl_f8 vl_f8_le(vl_f8 a, vl_f8 b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_LE_OQ); }
VL_INLINE vl_f8 vl_f8_gt(vl_f8 a, vl_f8 b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_GT_OQ); }
VL_INLINE vl_f8 vl_f8_ge(vl_f8 a, vl_f8 b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_GE_OQ); }
VL_INLINE vl_f8 vl_f8_eq(vl_f8 a, vl_f8 b) { return simde_mm256_cmp_ps(a, b, SIMDE_CMP_EQ_OQ); }
VL_INLINE vl_f8 vl_f8_and(vl_f8 a, vl_f8 b) { return simde_mm256_and_ps(a, b); }
VL_INLINE vl_f8 vl_f8_or(vl_f8 a, vl_f8 b) { return simde_mm256_or_ps(a, b); }
VL_INLINE vl_f8 vl_f8_xor(vl_f8 a, vl_f8 b) { return simde_mm256_xor_ps(a, b); }
VL_INLINE vl_f8 vl_f8_andnot(vl_f8 a, vl_f8 b) { return simde_mm256_andnot_ps(b, a); }
VL_INLINE vl_f8 vl_f8_select(vl_f8 mask, vl_f8 if_true, vl_f8 if_false) {
    return simde_mm256_blendv_ps(if_false, if_true, mask);
}
VL_INLINE vl_f8 vl_f8_abs(vl_f8 a) { return simde_mm256_andnot_ps(simde_mm256_set1_ps(-0.0f), a); }
VL_INLINE vl_f8 vl_f8_true(void) { return simde_mm256_castsi256_ps(simde_mm256_set1_epi32(-1)); }
VL_INLINE vl_f4 vl_f8_low(vl_f8 a) { return simde_mm256_castps256_ps128(a); }
VL_INLINE vl_f4 vl_f8_high(vl_f8 a) { return simde_mm256_extractf128_ps(a, 1); }
VL_INLINE vl_f8 vl_f8_join(vl_f4 low, vl_f4 high) {
    return simde_mm256_insertf128_ps(simde_mm256_castps128_ps256(low), high, 1);
}
/* vl_f4_transpose on each 128-bit half */
VL_INLINE void vl_f8_transpose(vl_f8 r[4]) {
    vl_f8 t0 = simde_mm256_unpacklo_ps(r[0], r[1]), t1 = simde_mm256_unpacklo_ps(r[2], r[3]);
    vl_f8 t2 = simde_mm256_unpackhi_ps(r[0], r[1]), t3 = simde_mm256_unpackhi_ps(r[2], r[3]);
    r[0] = simde_mm256_shuffle_ps(t0, t1, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
    r[1] = simde_mm256_shuffle_ps(t0, t1, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
    r[2] = simde_mm256_shuffle_ps(t2, t3, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
    r[3] = simde_mm256_shuffle_ps(t2, t3, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
}

#if defined(SIMDE_X86_AVX_NATIVE)
VL_INLINE int vl_f8_any(vl_f8 mask) { return simde_mm256_movemask_ps(mask) != 0; }
VL_INLINE int vl_f8_all(vl_f8 mask) { return simde_mm256_movemask_ps(mask) == 0xFF; }
VL_INLINE uint32_t vl_f8_bits(vl_f8 mask) { return (uint32_t)simde_mm256_movemask_ps(mask); }
#else
VL_INLINE int vl_f8_any(vl_f8 mask) { return vl_f4_any(vl_f4_or(vl_f8_low(mask), vl_f8_high(mask))); }
VL_INLINE int vl_f8_all(vl_f8 mask) { return vl_f4_all(vl_f4_and(vl_f8_low(mask), vl_f8_high(mask))); }
VL_INLINE uint32_t vl_f8_bits(vl_f8 mask) {
    return vl_f4_bits(vl_f8_low(mask)) | (vl_f4_bits(vl_f8_high(mask)) << 4);
}
#endif
/* lanes [0, n) true, the rest false; n in [0, 8] */
VL_INLINE vl_f8 vl_f8_first(uint32_t n) {
    vl_i8 lane = simde_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return simde_mm256_castsi256_ps(simde_mm256_cmpgt_epi32(simde_mm256_set1_epi32((int32_t)n), lane));
}

/* ---- 8 lanes, int32 ---------------------------------------------------------------------- */
VL_INLINE vl_i8 vl_i8_load(const void* p) { return simde_mm256_load_si256((const simde__m256i*)p); }
VL_INLINE vl_i8 vl_i8_loadu(const void* p) { return simde_mm256_loadu_si256((const simde__m256i*)p); }
VL_INLINE void vl_i8_store(void* p, vl_i8 a) { simde_mm256_store_si256((simde__m256i*)p, a); }
VL_INLINE void vl_i8_storeu(void* p, vl_i8 a) { simde_mm256_storeu_si256((simde__m256i*)p, a); }
VL_INLINE vl_i8 vl_i8_set1(int32_t x) { return simde_mm256_set1_epi32(x); }
VL_INLINE vl_i8 vl_i8_add(vl_i8 a, vl_i8 b) { return simde_mm256_add_epi32(a, b); }
VL_INLINE vl_i8 vl_i8_sub(vl_i8 a, vl_i8 b) { return simde_mm256_sub_epi32(a, b); }
VL_INLINE vl_i8 vl_i8_and(vl_i8 a, vl_i8 b) { return simde_mm256_and_si256(a, b); }
VL_INLINE vl_i8 vl_i8_or(vl_i8 a, vl_i8 b) { return simde_mm256_or_si256(a, b); }
VL_INLINE vl_i8 vl_i8_xor(vl_i8 a, vl_i8 b) { return simde_mm256_xor_si256(a, b); }
VL_INLINE vl_i8 vl_i8_eq(vl_i8 a, vl_i8 b) { return simde_mm256_cmpeq_epi32(a, b); }
VL_INLINE vl_i8 vl_i8_gt(vl_i8 a, vl_i8 b) { return simde_mm256_cmpgt_epi32(a, b); }
VL_INLINE vl_i8 vl_i8_min(vl_i8 a, vl_i8 b) { return simde_mm256_min_epi32(a, b); }
VL_INLINE vl_i8 vl_i8_max(vl_i8 a, vl_i8 b) { return simde_mm256_max_epi32(a, b); }
VL_INLINE vl_i8 vl_i8_min_u(vl_i8 a, vl_i8 b) { return simde_mm256_min_epu32(a, b); }
VL_INLINE vl_i8 vl_i8_max_u(vl_i8 a, vl_i8 b) { return simde_mm256_max_epu32(a, b); }
VL_INLINE vl_i8 vl_i8_sign_mask(vl_i8 a) { return simde_mm256_srai_epi32(a, 31); }
VL_INLINE vl_i8 vl_i8_shr_var(vl_i8 a, vl_i8 count) { return simde_mm256_srlv_epi32(a, count); }
/* lane j = a's lane idx[j] & 7 */
VL_INLINE vl_i8 vl_i8_permute(vl_i8 a, vl_i8 idx) { return simde_mm256_permutevar8x32_epi32(a, idx); }
/* lane j = a's lane idx[j] & 3 of the same 128-bit half */
VL_INLINE vl_i8 vl_i8_permute_halves(vl_i8 a, vl_i8 idx) {
    return simde_mm256_castps_si256(simde_mm256_permutevar_ps(simde_mm256_castsi256_ps(a), idx));
}
VL_INLINE vl_i4 vl_i8_low(vl_i8 a) { return simde_mm256_castsi256_si128(a); }
VL_INLINE vl_i4 vl_i8_high(vl_i8 a) { return simde_mm256_extracti128_si256(a, 1); }
VL_INLINE vl_i8 vl_i8_join(vl_i4 low, vl_i4 high) {
    return simde_mm256_inserti128_si256(simde_mm256_castsi128_si256(low), high, 1);
}
VL_INLINE vl_i8 vl_f8_as_i(vl_f8 a) { return simde_mm256_castps_si256(a); }
VL_INLINE vl_f8 vl_i8_as_f(vl_i8 a) { return simde_mm256_castsi256_ps(a); }

#endif
