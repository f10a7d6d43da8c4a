/* Left-pack tables as compile-time constants: for every 8-bit lane mask, the lanes of its set bits
 * in order, each at the field its rank selects (the field layout is the table user's). Entry b of
 * VL_LANE_TABLE(F) is F(b); fields past the mask's popcount hold lane 0. */
#ifndef VL_SIMD_LANE_ORDER_H
#define VL_SIMD_LANE_ORDER_H

/* Set bits of b (< 256) below lane k. */
#define VL_LANE_POP8(x)                                                                                    \
    (((x) & 1u) + (((x) >> 1) & 1u) + (((x) >> 2) & 1u) + (((x) >> 3) & 1u) + (((x) >> 4) & 1u) +           \
     (((x) >> 5) & 1u) + (((x) >> 6) & 1u) + (((x) >> 7) & 1u))
#define VL_LANE_RANK(b, k) VL_LANE_POP8((b) & ((1u << (k)) - 1u))

/* Lane k of mask b placed at field FIELD(rank) (a shift), or 0 when bit k is clear. */
#define VL_LANE_AT(b, k, FIELD) ((((b) >> (k)) & 1ull) * ((unsigned long long)(k) << FIELD(VL_LANE_RANK(b, k))))
#define VL_LANE_ENTRY(b, FIELD)                                                                            \
    (VL_LANE_AT(b, 0, FIELD) | VL_LANE_AT(b, 1, FIELD) | VL_LANE_AT(b, 2, FIELD) | VL_LANE_AT(b, 3, FIELD) | \
     VL_LANE_AT(b, 4, FIELD) | VL_LANE_AT(b, 5, FIELD) | VL_LANE_AT(b, 6, FIELD) | VL_LANE_AT(b, 7, FIELD))

#define VL_LANE_T4(F, b) F(b), F(b + 1u), F(b + 2u), F(b + 3u)
#define VL_LANE_T16(F, b) VL_LANE_T4(F, b), VL_LANE_T4(F, b + 4u), VL_LANE_T4(F, b + 8u), VL_LANE_T4(F, b + 12u)
#define VL_LANE_T64(F, b) VL_LANE_T16(F, b), VL_LANE_T16(F, b + 16u), VL_LANE_T16(F, b + 32u), VL_LANE_T16(F, b + 48u)
/* The 256 entries F(0) ... F(255), for an array initialiser. */
#define VL_LANE_TABLE(F) VL_LANE_T64(F, 0u), VL_LANE_T64(F, 64u), VL_LANE_T64(F, 128u), VL_LANE_T64(F, 192u)

#endif
