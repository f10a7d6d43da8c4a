/* Embree 3's ray paths for the bench and the tool: see embree_paths.h. */
#include "embree_paths.h"

#if defined(VOLLEY_BENCH_EMBREE) || defined(VOLLEY_TOOL_EMBREE)

#include <math.h>
#include <string.h>

const char* embree_path_name(embree_path path) {
    static const char* const names[EMBREE_PATH_COUNT] = {"1", "1M", "8", "16"};
    return (unsigned)path < EMBREE_PATH_COUNT ? names[path] : "?";
}

int embree_path_supported(RTCDevice device, embree_path path) {
    switch (path) {
    case EMBREE_PATH_LOOP: return 1;
    case EMBREE_PATH_STREAM: return rtcGetDeviceProperty(device, RTC_DEVICE_PROPERTY_RAY_STREAM_SUPPORTED) != 0;
    case EMBREE_PATH_PACKET8: return rtcGetDeviceProperty(device, RTC_DEVICE_PROPERTY_NATIVE_RAY8_SUPPORTED) != 0;
    case EMBREE_PATH_PACKET16: return rtcGetDeviceProperty(device, RTC_DEVICE_PROPERTY_NATIVE_RAY16_SUPPORTED) != 0;
    default: return 0;
    }
}

RTCScene embree_build_scene(RTCDevice device, const float* xyz, uint32_t vertex_count, const uint32_t* indices,
                            uint32_t triangle_count, int high_quality) {
    RTCScene scene = rtcNewScene(device);
    RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    if (!scene || !geom) {
        if (geom) rtcReleaseGeometry(geom);
        if (scene) rtcReleaseScene(scene);
        return NULL;
    }
    if (high_quality) {
        rtcSetSceneBuildQuality(scene, RTC_BUILD_QUALITY_HIGH);
        rtcSetGeometryBuildQuality(geom, RTC_BUILD_QUALITY_HIGH);
    }
    float* v = (float*)rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float),
                                               vertex_count);
    unsigned* t = (unsigned*)rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                     3 * sizeof(unsigned), triangle_count);
    if (!v || !t) {
        rtcReleaseGeometry(geom);
        rtcReleaseScene(scene);
        return NULL;
    }
    memcpy(v, xyz, sizeof(float) * 3 * (size_t)vertex_count);
    memcpy(t, indices, sizeof(unsigned) * 3 * (size_t)triangle_count);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(scene);
    return scene;
}

size_t embree_trace_buffer_bytes(embree_path path, uint32_t count) {
    if (path != EMBREE_PATH_STREAM) return 0;
    return sizeof(struct RTCRayHit) * (size_t)(count < EMBREE_STREAM_MAX ? count : EMBREE_STREAM_MAX);
}

/* As the bench's and the tool's single-ray loops convert a ray. */
static inline void to_ray1(const vl_ray* r, struct RTCRay* e) {
    e->org_x = r->origin[0], e->org_y = r->origin[1], e->org_z = r->origin[2], e->tnear = r->tmin;
    e->dir_x = r->dir[0], e->dir_y = r->dir[1], e->dir_z = r->dir[2], e->time = 0.0f;
    e->tfar = r->tmax, e->mask = 0xFFFFFFFFu, e->id = 0, e->flags = 0;
}

static uint32_t trace_loop(RTCScene scene, struct RTCIntersectContext* ctx, const vl_ray* rays, uint32_t count,
                           int any) {
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (any) {
            struct RTCRay ray;
            to_ray1(&rays[i], &ray);
            rtcOccluded1(scene, ctx, &ray);
            hits += ray.tfar < 0.0f;
        } else {
            struct RTCRayHit rh;
            to_ray1(&rays[i], &rh.ray);
            rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
            rtcIntersect1(scene, ctx, &rh);
            hits += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
        }
    }
    return hits;
}

static uint32_t trace_stream(RTCScene scene, struct RTCIntersectContext* ctx, const vl_ray* rays, uint32_t count,
                             int any, struct RTCRayHit* rh) {
    uint32_t hits = 0;
    for (uint32_t base = 0; base < count; base += EMBREE_STREAM_MAX) {
        uint32_t n = count - base < EMBREE_STREAM_MAX ? count - base : EMBREE_STREAM_MAX;
        for (uint32_t i = 0; i < n; i++) {
            to_ray1(&rays[base + i], &rh[i].ray);
            rh[i].hit.geomID = RTC_INVALID_GEOMETRY_ID;
        }
        if (any) {
            rtcOccluded1M(scene, ctx, &rh[0].ray, n, sizeof(struct RTCRayHit));
            for (uint32_t i = 0; i < n; i++) hits += rh[i].ray.tfar < 0.0f;
        } else {
            rtcIntersect1M(scene, ctx, rh, n, sizeof(struct RTCRayHit));
            for (uint32_t i = 0; i < n; i++) hits += rh[i].hit.geomID != RTC_INVALID_GEOMETRY_ID;
        }
    }
    return hits;
}

/* Packets of W consecutive rays, filled into Embree's SoA layout; the lanes past the last ray are
 * off in the valid mask (and hold an empty ray: tfar = -inf). Occluded rays come back with
 * tfar = -inf; hits with a geomID. */
#define EMBREE_FILL_LANE(ray, i, r)                                                                          \
    do {                                                                                                     \
        (ray).org_x[i] = (r)->origin[0], (ray).org_y[i] = (r)->origin[1], (ray).org_z[i] = (r)->origin[2];   \
        (ray).dir_x[i] = (r)->dir[0], (ray).dir_y[i] = (r)->dir[1], (ray).dir_z[i] = (r)->dir[2];            \
        (ray).tnear[i] = (r)->tmin, (ray).tfar[i] = (r)->tmax, (ray).time[i] = 0.0f;                         \
        (ray).mask[i] = 0xFFFFFFFFu, (ray).id[i] = 0, (ray).flags[i] = 0;                                    \
    } while (0)
#define EMBREE_EMPTY_LANE(ray, i)                                                                            \
    do {                                                                                                     \
        (ray).org_x[i] = (ray).org_y[i] = (ray).org_z[i] = 0.0f;                                             \
        (ray).dir_x[i] = (ray).dir_y[i] = (ray).dir_z[i] = 1.0f;                                             \
        (ray).tnear[i] = 0.0f, (ray).tfar[i] = -INFINITY, (ray).time[i] = 0.0f;                              \
        (ray).mask[i] = 0, (ray).id[i] = 0, (ray).flags[i] = 0;                                              \
    } while (0)

#define EMBREE_TRACE_PACKETS(W)                                                                              \
    static uint32_t trace_packets##W(RTCScene scene, struct RTCIntersectContext* ctx, const vl_ray* rays,     \
                                     uint32_t count, int any) {                                              \
        uint32_t hits = 0;                                                                                   \
        _Alignas(64) int valid[W];                                                                           \
        for (uint32_t base = 0; base < count; base += W) {                                                   \
            const uint32_t n = count - base < W ? count - base : W;                                          \
            if (any) {                                                                                       \
                struct RTCRay##W ray;                                                                        \
                for (uint32_t i = 0; i < W; i++) {                                                           \
                    valid[i] = i < n ? -1 : 0;                                                               \
                    if (i < n) EMBREE_FILL_LANE(ray, i, &rays[base + i]);                                    \
                    else EMBREE_EMPTY_LANE(ray, i);                                                          \
                }                                                                                            \
                rtcOccluded##W(valid, scene, ctx, &ray);                                                     \
                for (uint32_t i = 0; i < n; i++) hits += ray.tfar[i] < 0.0f;                                 \
            } else {                                                                                         \
                struct RTCRayHit##W rh;                                                                      \
                for (uint32_t i = 0; i < W; i++) {                                                           \
                    valid[i] = i < n ? -1 : 0;                                                               \
                    if (i < n) EMBREE_FILL_LANE(rh.ray, i, &rays[base + i]);                                 \
                    else EMBREE_EMPTY_LANE(rh.ray, i);                                                       \
                    rh.hit.geomID[i] = RTC_INVALID_GEOMETRY_ID;                                              \
                    rh.hit.instID[0][i] = RTC_INVALID_GEOMETRY_ID;                                           \
                }                                                                                            \
                rtcIntersect##W(valid, scene, ctx, &rh);                                                     \
                for (uint32_t i = 0; i < n; i++) hits += rh.hit.geomID[i] != RTC_INVALID_GEOMETRY_ID;        \
            }                                                                                                \
        }                                                                                                    \
        return hits;                                                                                         \
    }
EMBREE_TRACE_PACKETS(8)
EMBREE_TRACE_PACKETS(16)

uint32_t embree_trace(RTCScene scene, embree_path path, const vl_ray* rays, uint32_t count, int any, void* buffer) {
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx); /* RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT */
    switch (path) {
    case EMBREE_PATH_LOOP: return trace_loop(scene, &ctx, rays, count, any);
    case EMBREE_PATH_STREAM: return trace_stream(scene, &ctx, rays, count, any, (struct RTCRayHit*)buffer);
    case EMBREE_PATH_PACKET8: return trace_packets8(scene, &ctx, rays, count, any);
    case EMBREE_PATH_PACKET16: return trace_packets16(scene, &ctx, rays, count, any);
    default: return 0;
    }
}

#else
typedef int embree_paths_unused; /* no Embree: an empty unit */
#endif
