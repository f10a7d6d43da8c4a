/* BVH kernels, SIMD across rays: gathering ray records by index into SoA vectors, the node test
 * with move-to-front partition of the index array, ray-triangle and ray-box tests of one leaf
 * primitive against many rays, and one ray against a leaf's triangles. Width-generic bodies in
 * bvh_kernels_w.h (vl_b4_* and vl_b8_*).
 * Inputs are clean (validated at the API edge): no NaN in any record. */
#ifndef VL_SIMD_BVH_KERNELS_H
#define VL_SIMD_BVH_KERNELS_H

#include <stdint.h>

#include <volley/bvh.h>

#include "simd/kernels.h"
#include "simd/simd.h"

/* Quad q (4 floats at offset 4q) of the records rec + stride * idx[j], j < 4, transposed into
 * out[0..3] (out[c] lane j = component c of record j). Records need no alignment (triangles are
 * 52 bytes apart). */
VL_INLINE void vl_b4_gather(const float* rec, uint32_t stride, const uint32_t* idx, uint32_t q, vl_f4 out[4]) {
    vl_f4 r0 = simde_mm_loadu_ps(rec + stride * idx[0] + 4 * q);
    vl_f4 r1 = simde_mm_loadu_ps(rec + stride * idx[1] + 4 * q);
    vl_f4 r2 = simde_mm_loadu_ps(rec + stride * idx[2] + 4 * q);
    vl_f4 r3 = simde_mm_loadu_ps(rec + stride * idx[3] + 4 * q);
    vl_f4 t0 = simde_mm_unpacklo_ps(r0, r1), t1 = simde_mm_unpacklo_ps(r2, r3);
    vl_f4 t2 = simde_mm_unpackhi_ps(r0, r1), t3 = simde_mm_unpackhi_ps(r2, r3);
    out[0] = simde_mm_movelh_ps(t0, t1);
    out[1] = simde_mm_movehl_ps(t1, t0);
    out[2] = simde_mm_movelh_ps(t2, t3);
    out[3] = simde_mm_movehl_ps(t3, t2);
}

/* The same for 8 records: rows pair records j and j + 4 in the two 128-bit halves, and the
 * in-lane 4x4 transpose leaves every component in lane order. */
VL_INLINE void vl_b8_gather(const float* rec, uint32_t stride, const uint32_t* idx, uint32_t q, vl_f8 out[4]) {
    vl_f8 r[4];
    for (int j = 0; j < 4; j++) {
        vl_f4 lo = simde_mm_loadu_ps(rec + stride * idx[j] + 4 * q);
        vl_f4 hi = simde_mm_loadu_ps(rec + stride * idx[j + 4] + 4 * q);
        r[j] = simde_mm256_insertf128_ps(simde_mm256_castps128_ps256(lo), hi, 1);
    }
    vl_f8 t0 = simde_mm256_unpacklo_ps(r[0], r[1]), t1 = simde_mm256_unpacklo_ps(r[2], r[3]);
    vl_f8 t2 = simde_mm256_unpackhi_ps(r[0], r[1]), t3 = simde_mm256_unpackhi_ps(r[2], r[3]);
    out[0] = simde_mm256_shuffle_ps(t0, t1, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
    out[1] = simde_mm256_shuffle_ps(t0, t1, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
    out[2] = simde_mm256_shuffle_ps(t2, t3, SIMDE_MM_SHUFFLE(1, 0, 1, 0));
    out[3] = simde_mm256_shuffle_ps(t2, t3, SIMDE_MM_SHUFFLE(3, 2, 3, 2));
}

/* Left-packs the ids[j] (j < 8) whose bit is set in `bits` (not 0) to dst, in lane order, and
 * returns dst past them. Stores 8 entries: up to 7 past the packed ones are overwritten. */
VL_INLINE uint32_t* vl_b8_compress(uint32_t* dst, const uint32_t* ids, uint32_t bits) {
    /* nibble k: the lane of the k-th set bit */
    static const uint32_t lanes[256] = {
        0u, 0u, 0x1u, 0x10u, 0x2u, 0x20u, 0x21u, 0x210u,
        0x3u, 0x30u, 0x31u, 0x310u, 0x32u, 0x320u, 0x321u, 0x3210u,
        0x4u, 0x40u, 0x41u, 0x410u, 0x42u, 0x420u, 0x421u, 0x4210u,
        0x43u, 0x430u, 0x431u, 0x4310u, 0x432u, 0x4320u, 0x4321u, 0x43210u,
        0x5u, 0x50u, 0x51u, 0x510u, 0x52u, 0x520u, 0x521u, 0x5210u,
        0x53u, 0x530u, 0x531u, 0x5310u, 0x532u, 0x5320u, 0x5321u, 0x53210u,
        0x54u, 0x540u, 0x541u, 0x5410u, 0x542u, 0x5420u, 0x5421u, 0x54210u,
        0x543u, 0x5430u, 0x5431u, 0x54310u, 0x5432u, 0x54320u, 0x54321u, 0x543210u,
        0x6u, 0x60u, 0x61u, 0x610u, 0x62u, 0x620u, 0x621u, 0x6210u,
        0x63u, 0x630u, 0x631u, 0x6310u, 0x632u, 0x6320u, 0x6321u, 0x63210u,
        0x64u, 0x640u, 0x641u, 0x6410u, 0x642u, 0x6420u, 0x6421u, 0x64210u,
        0x643u, 0x6430u, 0x6431u, 0x64310u, 0x6432u, 0x64320u, 0x64321u, 0x643210u,
        0x65u, 0x650u, 0x651u, 0x6510u, 0x652u, 0x6520u, 0x6521u, 0x65210u,
        0x653u, 0x6530u, 0x6531u, 0x65310u, 0x6532u, 0x65320u, 0x65321u, 0x653210u,
        0x654u, 0x6540u, 0x6541u, 0x65410u, 0x6542u, 0x65420u, 0x65421u, 0x654210u,
        0x6543u, 0x65430u, 0x65431u, 0x654310u, 0x65432u, 0x654320u, 0x654321u, 0x6543210u,
        0x7u, 0x70u, 0x71u, 0x710u, 0x72u, 0x720u, 0x721u, 0x7210u,
        0x73u, 0x730u, 0x731u, 0x7310u, 0x732u, 0x7320u, 0x7321u, 0x73210u,
        0x74u, 0x740u, 0x741u, 0x7410u, 0x742u, 0x7420u, 0x7421u, 0x74210u,
        0x743u, 0x7430u, 0x7431u, 0x74310u, 0x7432u, 0x74320u, 0x74321u, 0x743210u,
        0x75u, 0x750u, 0x751u, 0x7510u, 0x752u, 0x7520u, 0x7521u, 0x75210u,
        0x753u, 0x7530u, 0x7531u, 0x75310u, 0x7532u, 0x75320u, 0x75321u, 0x753210u,
        0x754u, 0x7540u, 0x7541u, 0x75410u, 0x7542u, 0x75420u, 0x75421u, 0x754210u,
        0x7543u, 0x75430u, 0x75431u, 0x754310u, 0x75432u, 0x754320u, 0x754321u, 0x7543210u,
        0x76u, 0x760u, 0x761u, 0x7610u, 0x762u, 0x7620u, 0x7621u, 0x76210u,
        0x763u, 0x7630u, 0x7631u, 0x76310u, 0x7632u, 0x76320u, 0x76321u, 0x763210u,
        0x764u, 0x7640u, 0x7641u, 0x76410u, 0x7642u, 0x76420u, 0x76421u, 0x764210u,
        0x7643u, 0x76430u, 0x76431u, 0x764310u, 0x76432u, 0x764320u, 0x764321u, 0x7643210u,
        0x765u, 0x7650u, 0x7651u, 0x76510u, 0x7652u, 0x76520u, 0x76521u, 0x765210u,
        0x7653u, 0x76530u, 0x76531u, 0x765310u, 0x76532u, 0x765320u, 0x765321u, 0x7653210u,
        0x7654u, 0x76540u, 0x76541u, 0x765410u, 0x76542u, 0x765420u, 0x765421u, 0x7654210u,
        0x76543u, 0x765430u, 0x765431u, 0x7654310u, 0x765432u, 0x7654320u, 0x7654321u, 0x76543210u,
    };
    static const int32_t nibble[8] = {0, 4, 8, 12, 16, 20, 24, 28};
    vl_i8 sel = vl_i8_shr_var(vl_i8_set1((int32_t)lanes[bits & 0xFFu]), vl_i8_loadu(nibble));
    vl_i8_storeu(dst, vl_i8_permute(vl_i8_loadu(ids), sel));
    return dst + __builtin_popcount(bits);
}

#define VL_W 4
#include "simd/bvh_kernels_w.h"
#undef VL_W
#define VL_W 8
#include "simd/bvh_kernels_w.h"
#undef VL_W

#endif
