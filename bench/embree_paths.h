/* Embree 3's ray paths, for the peers of volley_bench and `volley bench`: the single-ray loop
 * (rtcIntersect1 / rtcOccluded1), the stream (rtcIntersect1M / rtcOccluded1M), 8-wide and
 * 16-wide packets (rtcIntersect8/16, rtcOccluded8/16) over the rays in arrival order, on a scene
 * built at Embree's default (medium) or high quality. Plain C, shared by the bench (C++) and the
 * tool (C). Every path uses rtcInitIntersectContext's context: RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT,
 * Embree's default and what the bench's ray sets are (random order, no two consecutive rays alike).
 * Compiled to nothing unless VOLLEY_BENCH_EMBREE or VOLLEY_TOOL_EMBREE is defined. */
#ifndef VL_BENCH_EMBREE_PATHS_H
#define VL_BENCH_EMBREE_PATHS_H

#if defined(VOLLEY_BENCH_EMBREE) || defined(VOLLEY_TOOL_EMBREE)

#include <stddef.h>
#include <stdint.h>

#include <embree3/rtcore.h>
#include <volley/volley.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The paths. EMBREE_PATH_STREAM traces up to EMBREE_STREAM_MAX rays a call. */
typedef enum embree_path {
    EMBREE_PATH_LOOP = 0, /* rtcIntersect1 / rtcOccluded1 on each ray */
    EMBREE_PATH_STREAM,   /* rtcIntersect1M / rtcOccluded1M */
    EMBREE_PATH_PACKET8,  /* rtcIntersect8 / rtcOccluded8 on consecutive rays */
    EMBREE_PATH_PACKET16, /* rtcIntersect16 / rtcOccluded16 on consecutive rays */
    EMBREE_PATH_COUNT
} embree_path;
#define EMBREE_STREAM_MAX (1u << 20)

/* "1", "1M", "8", "16": the suffix of the bench's rows (embree_8, embree_hq_1M...). */
const char* embree_path_name(embree_path path);

/* Whether this Embree build and machine run the path: the packets natively
 * (RTC_DEVICE_PROPERTY_NATIVE_RAY8_SUPPORTED / RAY16), the stream (RAY_STREAM_SUPPORTED); the loop always. */
int embree_path_supported(RTCDevice device, embree_path path);

/* One committed scene of the triangles on `device`: at Embree's default build quality (medium)
 * or, when `high_quality`, with the scene and the geometry at RTC_BUILD_QUALITY_HIGH (SAH with
 * spatial splits). NULL on failure. */
RTCScene embree_build_scene(RTCDevice device, const float* xyz, uint32_t vertex_count, const uint32_t* indices,
                            uint32_t triangle_count, int high_quality);

/* Bytes of the buffer that embree_trace needs for `count` rays on `path` (the stream's RTCRayHit
 * array, at most EMBREE_STREAM_MAX entries; 0 for the other paths), and its alignment. */
size_t embree_trace_buffer_bytes(embree_path path, uint32_t count);
#define EMBREE_TRACE_BUFFER_ALIGNMENT 64u

/* Traces rays[0..count) on `path`, the closest hit (rtcIntersect*) or any hit (rtcOccluded*),
 * and returns how many hit. Each ray is converted to Embree's layout inside the call (the packets
 * fill their SoA structs; the last packet's valid mask covers the rays left). `buffer` holds
 * embree_trace_buffer_bytes(path, count) bytes, aligned to EMBREE_TRACE_BUFFER_ALIGNMENT (NULL
 * where that is 0). The path must be supported (embree_path_supported). */
uint32_t embree_trace(RTCScene scene, embree_path path, const vl_ray* rays, uint32_t count, int any, void* buffer);

#ifdef __cplusplus
}
#endif

#endif
#endif
