/* Pair emission for box pruning: the candidates of an 8-lane block whose bit is set, written as
 * pairs with the query id. With AVX2 the hit ids are left-packed by one permute through a table of
 * lane orders and interleaved with the query id, so a block costs the same whatever its hits (no
 * loop, no branch per pair); elsewhere a loop over the set bits. */
#ifndef VL_SIMD_SAP_EMIT_H
#define VL_SIMD_SAP_EMIT_H

#include <volley/base.h>
#include <volley/types.h>

#include "compiler.h"
#include "simd/lane_order.h"
#include "simd/simd.h"

/* How a pair is written: (query, candidate), (candidate, query), or (lower id, higher id). */
typedef enum vl_emit_mode { VL_EMIT_QC, VL_EMIT_CQ, VL_EMIT_LOW_HIGH } vl_emit_mode;

VL_INLINE vl_pair vl_emit_pair(uint32_t q, uint32_t c, vl_emit_mode mode) {
    vl_pair p = {q, c};
    if (mode == VL_EMIT_CQ || (mode == VL_EMIT_LOW_HIGH && c < q)) p = (vl_pair){c, q};
    return p;
}

#if defined(SIMDE_X86_AVX2_NATIVE)
/* Writes (qid, ids[k]) per set bit k of bits (< 256), in lane order, as `mode` says; returns dst past
 * them. Always stores 8 pairs: the ones past the written ones are garbage to be overwritten. */
VL_INLINE vl_pair* vl_emit8(vl_pair* dst, uint32_t bits, const uint32_t* ids, uint32_t qid, vl_emit_mode mode) {
    /* byte p: the lane of set bit number (0, 1, 4, 5, 2, 3, 6, 7)[p], so that the in-lane unpacks
     * below give pairs 0-3 in the low result and 4-7 in the high one */
#define VL_EMIT_FIELD(rank) (8u * (((rank) & 1u) | ((rank) & 2u) << 1 | ((rank) & 4u) >> 1))
#define VL_EMIT_ORDER(b) VL_LANE_ENTRY(b, VL_EMIT_FIELD)
    static const uint64_t order[256] = {VL_LANE_TABLE(VL_EMIT_ORDER)};
#undef VL_EMIT_ORDER
#undef VL_EMIT_FIELD
    vl_i8 sel = simde_mm256_cvtepu8_epi32(simde_mm_loadl_epi64((const simde__m128i*)(const void*)&order[bits]));
    vl_i8 c = vl_i8_permute(vl_i8_loadu(ids), sel);
    vl_i8 q = vl_i8_set1((int32_t)qid);
    vl_i8 a = q, b = c;
    if (mode == VL_EMIT_CQ) a = c, b = q;
    if (mode == VL_EMIT_LOW_HIGH) a = vl_i8_min_u(q, c), b = vl_i8_max_u(q, c);
    vl_i8_storeu(dst, simde_mm256_unpacklo_epi32(a, b));
    vl_i8_storeu(dst + 4, simde_mm256_unpackhi_epi32(a, b));
    return dst + vl_popcount32(bits);
}
#else
/* Writes (qid, ids[k]) per set bit k of bits (< 256), in lane order, as `mode` says; returns dst past
 * them. */
VL_INLINE vl_pair* vl_emit8(vl_pair* dst, uint32_t bits, const uint32_t* ids, uint32_t qid, vl_emit_mode mode) {
    for (; bits; bits &= bits - 1) *dst++ = vl_emit_pair(qid, ids[vl_ctz32(bits)], mode);
    return dst;
}
#endif

#endif
