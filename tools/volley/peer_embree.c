/* Embree 3 as a peer of the bench and the profile: one thread, rtcIntersect1 / rtcOccluded1 per
 * ray (Embree's single-ray loop). Without Embree these say so by returning NULL. */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#ifdef VOLLEY_TOOL_EMBREE
#include <embree3/rtcore.h>

struct tool_peer {
    RTCDevice device;
    RTCScene scene;
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
    p->scene = rtcNewScene(p->device);
    RTCGeometry geom = rtcNewGeometry(p->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    float* v = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float),
                                       m->vertex_count);
    unsigned* t = rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned),
                                          m->triangle_count);
    memcpy(v, m->xyz, sizeof(float) * 3 * (size_t)m->vertex_count);
    memcpy(t, m->indices, sizeof(unsigned) * 3 * (size_t)m->triangle_count);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(p->scene, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(p->scene);
    if (seconds) *seconds = tool_now() - t0;
    return p;
}

static void to_embree(const vl_ray* r, struct RTCRay* e) {
    e->org_x = r->origin[0], e->org_y = r->origin[1], e->org_z = r->origin[2], e->tnear = r->tmin;
    e->dir_x = r->dir[0], e->dir_y = r->dir[1], e->dir_z = r->dir[2], e->time = 0.0f;
    e->tfar = r->tmax, e->mask = 0xFFFFFFFFu, e->id = 0, e->flags = 0;
}

uint32_t tool_embree_trace(tool_peer* p, const vl_ray* rays, uint32_t count, int any) {
    struct RTCIntersectContext ctx;
    rtcInitIntersectContext(&ctx);
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (any) {
            struct RTCRay ray;
            to_embree(&rays[i], &ray);
            rtcOccluded1(p->scene, &ctx, &ray);
            hits += ray.tfar < 0.0f;
        } else {
            struct RTCRayHit rh;
            to_embree(&rays[i], &rh.ray);
            rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
            rtcIntersect1(p->scene, &ctx, &rh);
            hits += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
        }
    }
    return hits;
}

void tool_embree_destroy(tool_peer* p) {
    if (!p) return;
    rtcReleaseScene(p->scene);
    rtcReleaseDevice(p->device);
    free(p);
}
#else
int tool_embree_built(void) { return 0; }
tool_peer* tool_embree_create(const scene_mesh* m, double* seconds) {
    (void)m, (void)seconds;
    return NULL;
}
uint32_t tool_embree_trace(tool_peer* p, const vl_ray* rays, uint32_t count, int any) {
    (void)p, (void)rays, (void)count, (void)any;
    return 0;
}
void tool_embree_destroy(tool_peer* p) { (void)p; }
#endif
