/* The keyed interleaved walks' push (bvh/engine/walks.h): where each of a node's 4 children goes
 * on a walk's stack, computed across the 4 keys at once, without a branch on them. */
#ifndef VL_SIMD_WALK_KERNELS_H
#define VL_SIMD_WALK_KERNELS_H

#include <math.h>
#include <stdint.h>

#include "simd/simd.h"

/* at[c], for each child c set in bits: its place above the stack's top when the
 * children are stacked so that the least key is on top and, among equal keys, the later child
 * above the earlier one: the children d of bits with keys[d] > keys[c], or keys[d] == keys[c] and
 * d < c. The places of the children set in bits are 0 .. popcount(bits) - 1, each once, even for
 * NaN keys (ranked as +infinity), so that no child is lost. */
VL_INLINE void vl_k4_stack_places(const float keys[4], uint32_t bits, uint32_t at[4]) {
    vl_f4 key = vl_f4_loadu(keys);
    key = vl_f4_select(vl_f4_eq(key, key), key, vl_f4_set1(INFINITY));
    const vl_i4 lane = simde_mm_setr_epi32(1, 2, 4, 8);
    const vl_i4 live = vl_i4_eq(vl_i4_and(vl_i4_set1((int32_t)bits), lane), lane);
    vl_i4 below = vl_i4_set1(0);
    /* against d = c + r (mod 4), for r = 1, 2, 3: `earlier` marks the lanes where d < c */
#define VL_K4_PLACE(imm, earlier)                                                                  \
    do {                                                                                         \
        const vl_f4 other = vl_i4_as_f(vl_i4_shuffle(vl_f4_as_i(key), imm));                     \
        const vl_i4 tie = vl_i4_and(vl_f4_as_i(vl_f4_eq(other, key)), earlier);                  \
        const vl_i4 more = vl_i4_or(vl_f4_as_i(vl_f4_gt(other, key)), tie);                      \
        below = vl_i4_sub(below, vl_i4_and(more, vl_i4_shuffle(live, imm)));                     \
    } while (0)
    VL_K4_PLACE(SIMDE_MM_SHUFFLE(0, 3, 2, 1), simde_mm_setr_epi32(0, 0, 0, -1));
    VL_K4_PLACE(SIMDE_MM_SHUFFLE(1, 0, 3, 2), simde_mm_setr_epi32(0, 0, -1, -1));
    VL_K4_PLACE(SIMDE_MM_SHUFFLE(2, 1, 0, 3), simde_mm_setr_epi32(0, -1, -1, -1));
#undef VL_K4_PLACE
    vl_i4_storeu(at, below);
}

#endif
