/* Pair emission for box pruning: the candidates of an 8-lane block whose bit is set, written as
 * pairs with the query id. With AVX2 the hit ids are left-packed by one permute through a table of
 * lane orders and interleaved with the query id, so a block costs the same whatever its hits (no
 * loop, no branch per pair); elsewhere a loop over the set bits. */
#ifndef VL_SIMD_SAP_EMIT_H
#define VL_SIMD_SAP_EMIT_H

#include <volley/types.h>

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
    static const uint64_t order[256] = {
        0x0u, 0x0u, 0x1u, 0x100u, 0x2u, 0x200u, 0x201u, 0x200000100u,
        0x3u, 0x300u, 0x301u, 0x300000100u, 0x302u, 0x300000200u, 0x300000201u, 0x30200000100u,
        0x4u, 0x400u, 0x401u, 0x400000100u, 0x402u, 0x400000200u, 0x400000201u, 0x40200000100u,
        0x403u, 0x400000300u, 0x400000301u, 0x40300000100u, 0x400000302u, 0x40300000200u, 0x40300000201u, 0x30200040100u,
        0x5u, 0x500u, 0x501u, 0x500000100u, 0x502u, 0x500000200u, 0x500000201u, 0x50200000100u,
        0x503u, 0x500000300u, 0x500000301u, 0x50300000100u, 0x500000302u, 0x50300000200u, 0x50300000201u, 0x30200050100u,
        0x504u, 0x500000400u, 0x500000401u, 0x50400000100u, 0x500000402u, 0x50400000200u, 0x50400000201u, 0x40200050100u,
        0x500000403u, 0x50400000300u, 0x50400000301u, 0x40300050100u, 0x50400000302u, 0x40300050200u, 0x40300050201u, 0x30205040100u,
        0x6u, 0x600u, 0x601u, 0x600000100u, 0x602u, 0x600000200u, 0x600000201u, 0x60200000100u,
        0x603u, 0x600000300u, 0x600000301u, 0x60300000100u, 0x600000302u, 0x60300000200u, 0x60300000201u, 0x30200060100u,
        0x604u, 0x600000400u, 0x600000401u, 0x60400000100u, 0x600000402u, 0x60400000200u, 0x60400000201u, 0x40200060100u,
        0x600000403u, 0x60400000300u, 0x60400000301u, 0x40300060100u, 0x60400000302u, 0x40300060200u, 0x40300060201u, 0x30206040100u,
        0x605u, 0x600000500u, 0x600000501u, 0x60500000100u, 0x600000502u, 0x60500000200u, 0x60500000201u, 0x50200060100u,
        0x600000503u, 0x60500000300u, 0x60500000301u, 0x50300060100u, 0x60500000302u, 0x50300060200u, 0x50300060201u, 0x30206050100u,
        0x600000504u, 0x60500000400u, 0x60500000401u, 0x50400060100u, 0x60500000402u, 0x50400060200u, 0x50400060201u, 0x40206050100u,
        0x60500000403u, 0x50400060300u, 0x50400060301u, 0x40306050100u, 0x50400060302u, 0x40306050200u, 0x40306050201u, 0x6030205040100u,
        0x7u, 0x700u, 0x701u, 0x700000100u, 0x702u, 0x700000200u, 0x700000201u, 0x70200000100u,
        0x703u, 0x700000300u, 0x700000301u, 0x70300000100u, 0x700000302u, 0x70300000200u, 0x70300000201u, 0x30200070100u,
        0x704u, 0x700000400u, 0x700000401u, 0x70400000100u, 0x700000402u, 0x70400000200u, 0x70400000201u, 0x40200070100u,
        0x700000403u, 0x70400000300u, 0x70400000301u, 0x40300070100u, 0x70400000302u, 0x40300070200u, 0x40300070201u, 0x30207040100u,
        0x705u, 0x700000500u, 0x700000501u, 0x70500000100u, 0x700000502u, 0x70500000200u, 0x70500000201u, 0x50200070100u,
        0x700000503u, 0x70500000300u, 0x70500000301u, 0x50300070100u, 0x70500000302u, 0x50300070200u, 0x50300070201u, 0x30207050100u,
        0x700000504u, 0x70500000400u, 0x70500000401u, 0x50400070100u, 0x70500000402u, 0x50400070200u, 0x50400070201u, 0x40207050100u,
        0x70500000403u, 0x50400070300u, 0x50400070301u, 0x40307050100u, 0x50400070302u, 0x40307050200u, 0x40307050201u, 0x7030205040100u,
        0x706u, 0x700000600u, 0x700000601u, 0x70600000100u, 0x700000602u, 0x70600000200u, 0x70600000201u, 0x60200070100u,
        0x700000603u, 0x70600000300u, 0x70600000301u, 0x60300070100u, 0x70600000302u, 0x60300070200u, 0x60300070201u, 0x30207060100u,
        0x700000604u, 0x70600000400u, 0x70600000401u, 0x60400070100u, 0x70600000402u, 0x60400070200u, 0x60400070201u, 0x40207060100u,
        0x70600000403u, 0x60400070300u, 0x60400070301u, 0x40307060100u, 0x60400070302u, 0x40307060200u, 0x40307060201u, 0x7030206040100u,
        0x700000605u, 0x70600000500u, 0x70600000501u, 0x60500070100u, 0x70600000502u, 0x60500070200u, 0x60500070201u, 0x50207060100u,
        0x70600000503u, 0x60500070300u, 0x60500070301u, 0x50307060100u, 0x60500070302u, 0x50307060200u, 0x50307060201u, 0x7030206050100u,
        0x70600000504u, 0x60500070400u, 0x60500070401u, 0x50407060100u, 0x60500070402u, 0x50407060200u, 0x50407060201u, 0x7040206050100u,
        0x60500070403u, 0x50407060300u, 0x50407060301u, 0x7040306050100u, 0x50407060302u, 0x7040306050200u, 0x7040306050201u, 0x706030205040100u,
    };
    vl_i8 sel = simde_mm256_cvtepu8_epi32(simde_mm_loadl_epi64((const simde__m128i*)(const void*)&order[bits]));
    vl_i8 c = vl_i8_permute(vl_i8_loadu(ids), sel);
    vl_i8 q = vl_i8_set1((int32_t)qid);
    vl_i8 a = q, b = c;
    if (mode == VL_EMIT_CQ) a = c, b = q;
    if (mode == VL_EMIT_LOW_HIGH) a = vl_i8_min_u(q, c), b = vl_i8_max_u(q, c);
    vl_i8_storeu(dst, simde_mm256_unpacklo_epi32(a, b));
    vl_i8_storeu(dst + 4, simde_mm256_unpackhi_epi32(a, b));
    return dst + __builtin_popcount(bits);
}
#else
/* Writes (qid, ids[k]) per set bit k of bits (< 256), in lane order, as `mode` says; returns dst past
 * them. */
VL_INLINE vl_pair* vl_emit8(vl_pair* dst, uint32_t bits, const uint32_t* ids, uint32_t qid, vl_emit_mode mode) {
    for (; bits; bits &= bits - 1) *dst++ = vl_emit_pair(qid, ids[__builtin_ctz(bits)], mode);
    return dst;
}
#endif

#endif
