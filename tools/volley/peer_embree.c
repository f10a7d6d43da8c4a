/* Embree 3 as a peer of the bench and the profile, one thread: rtcIntersect1 / rtcOccluded1 per
 * ray (Embree's single-ray loop, tool_embree_trace), and for the bench every path of
 * bench/embree_paths.h (loop, 1M stream, 8- and 16-wide packets) on the default build and on a
 * high-quality build (tool_embree_trace_path). Without Embree these say so by returning NULL or 0. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#ifdef VOLLEY_TOOL_EMBREE
#include <embree3/rtcore.h>

#include "embree_paths.h"

struct tool_peer {
    RTCDevice device;
    RTCScene scene;    /* default build quality */
    RTCScene scene_hq; /* RTC_BUILD_QUALITY_HIGH, made by tool_embree_build_hq */
    void* buffer;      /* the stream's rays */
    size_t buffer_bytes;
};

int tool_embree_built(void) { return 1; }

tool_peer* tool_embree_create(const scene_mesh* m, double* seconds) {
    tool_peer* p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->device = rtcNewDevice("threads=1");
    if (!p->device) {
        free(p);
        return NULL;
    }
    double t0 = tool_now();
    p->scene = embree_build_scene(p->device, m->xyz, m->vertex_count, m->indices, m->triangle_count, 0);
    if (seconds) *seconds = tool_now() - t0;
    if (!p->scene) {
        rtcReleaseDevice(p->device);
        free(p);
        return NULL;
    }
    return p;
}

int tool_embree_build_hq(tool_peer* p, const scene_mesh* m, double* seconds) {
    if (!p) return 0;
    if (!p->scene_hq) {
        double t0 = tool_now();
        p->scene_hq = embree_build_scene(p->device, m->xyz, m->vertex_count, m->indices, m->triangle_count, 1);
        if (seconds) *seconds = tool_now() - t0;
    }
    return p->scene_hq != NULL;
}

uint32_t tool_embree_trace(tool_peer* p, const vl_ray* rays, uint32_t count, int any) {
    return embree_trace(p->scene, EMBREE_PATH_LOOP, rays, count, any, NULL);
}

uint32_t tool_embree_path_count(void) { return 2 * (uint32_t)EMBREE_PATH_COUNT; }

const char* tool_embree_path_name(uint32_t path) {
    static const char* const names[2 * EMBREE_PATH_COUNT] = {"embree_1",    "embree_1M",    "embree_8",
                                                             "embree_16",   "embree_hq_1",  "embree_hq_1M",
                                                             "embree_hq_8", "embree_hq_16"};
    return path < tool_embree_path_count() ? names[path] : "?";
}

int tool_embree_path_ready(tool_peer* p, uint32_t path) {
    if (!p || path >= tool_embree_path_count()) return 0;
    if (path >= (uint32_t)EMBREE_PATH_COUNT && !p->scene_hq) return 0;
    return embree_path_supported(p->device, (embree_path)(path % EMBREE_PATH_COUNT));
}

int tool_embree_trace_path(tool_peer* p, uint32_t path, const vl_ray* rays, uint32_t count, int any,
                           uint32_t* hits) {
    if (!tool_embree_path_ready(p, path)) return 0;
    const embree_path kind = (embree_path)(path % EMBREE_PATH_COUNT);
    size_t bytes = embree_trace_buffer_bytes(kind, count);
    if (bytes > p->buffer_bytes) {
        free(p->buffer);
        p->buffer_bytes = 0;
        p->buffer = aligned_alloc(EMBREE_TRACE_BUFFER_ALIGNMENT, (bytes + 63) & ~(size_t)63);
        if (!p->buffer) return 0;
        p->buffer_bytes = bytes;
    }
    *hits = embree_trace(path < (uint32_t)EMBREE_PATH_COUNT ? p->scene : p->scene_hq, kind, rays, count, any,
                         p->buffer);
    return 1;
}

void tool_embree_destroy(tool_peer* p) {
    if (!p) return;
    if (p->scene_hq) rtcReleaseScene(p->scene_hq);
    rtcReleaseScene(p->scene);
    rtcReleaseDevice(p->device);
    free(p->buffer);
    free(p);
}
#else
int tool_embree_built(void) { return 0; }
tool_peer* tool_embree_create(const scene_mesh* m, double* seconds) {
    (void)m, (void)seconds;
    return NULL;
}
int tool_embree_build_hq(tool_peer* p, const scene_mesh* m, double* seconds) {
    (void)p, (void)m, (void)seconds;
    return 0;
}
uint32_t tool_embree_trace(tool_peer* p, const vl_ray* rays, uint32_t count, int any) {
    (void)p, (void)rays, (void)count, (void)any;
    return 0;
}
uint32_t tool_embree_path_count(void) { return 0; }
const char* tool_embree_path_name(uint32_t path) {
    (void)path;
    return "?";
}
int tool_embree_path_ready(tool_peer* p, uint32_t path) {
    (void)p, (void)path;
    return 0;
}
int tool_embree_trace_path(tool_peer* p, uint32_t path, const vl_ray* rays, uint32_t count, int any,
                           uint32_t* hits) {
    (void)p, (void)path, (void)rays, (void)count, (void)any, (void)hits;
    return 0;
}
void tool_embree_destroy(tool_peer* p) { (void)p; }
#endif
