// Bullet as a peer of the bench: btBvhTriangleMeshShape::performRaycast (closest hit: Bullet has
// no any-hit early out), behind the C interface of tool.h. Built only when CMake found Bullet.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <btBulletCollisionCommon.h>

#include "tool.h"

struct tool_peer {
    std::vector<int> indices;
    std::vector<btScalar> verts;
    std::unique_ptr<btTriangleIndexVertexArray> array;
    std::unique_ptr<btBvhTriangleMeshShape> shape;
    float diag = 1;
};

namespace {
struct ClosestCallback : btTriangleRaycastCallback {
    int triangle = -1;
    ClosestCallback(const btVector3& from, const btVector3& to) : btTriangleRaycastCallback(from, to) {}
    btScalar reportHit(const btVector3&, btScalar fraction, int, int index) override {
        triangle = index;
        return fraction;
    }
};
} // namespace

extern "C" int tool_bullet_built(void) { return 1; }

extern "C" tool_peer* tool_bullet_create(const scene_mesh* m, double* seconds) {
    auto* p = new tool_peer;
    double t0 = tool_now();
    p->indices.assign(m->indices, m->indices + 3 * (size_t)m->triangle_count);
    p->verts.assign(m->xyz, m->xyz + 3 * (size_t)m->vertex_count);
    p->array.reset(new btTriangleIndexVertexArray((int)m->triangle_count, p->indices.data(), 3 * sizeof(int),
                                                  (int)m->vertex_count, p->verts.data(), 3 * sizeof(btScalar)));
    p->shape.reset(new btBvhTriangleMeshShape(p->array.get(), true, true));
    if (seconds) *seconds = tool_now() - t0;
    float d2 = 0;
    for (int a = 0; a < 3; a++) d2 += (m->hi[a] - m->lo[a]) * (m->hi[a] - m->lo[a]);
    p->diag = std::sqrt(d2);
    return p;
}

// Rays of infinite reach become segments twice the scene's diagonal long.
extern "C" uint32_t tool_bullet_trace(tool_peer* p, const vl_ray* rays, uint32_t count) {
    uint32_t hits = 0;
    for (uint32_t i = 0; i < count; i++) {
        const vl_ray& r = rays[i];
        float len = std::sqrt(r.dir[0] * r.dir[0] + r.dir[1] * r.dir[1] + r.dir[2] * r.dir[2]);
        float tmax = std::min(r.tmax, 2.0f * p->diag / len);
        btVector3 from(r.origin[0] + r.tmin * r.dir[0], r.origin[1] + r.tmin * r.dir[1], r.origin[2] + r.tmin * r.dir[2]);
        btVector3 to(r.origin[0] + tmax * r.dir[0], r.origin[1] + tmax * r.dir[1], r.origin[2] + tmax * r.dir[2]);
        ClosestCallback cb(from, to);
        p->shape->performRaycast(&cb, from, to);
        hits += cb.triangle >= 0;
    }
    return hits;
}

extern "C" void tool_bullet_destroy(tool_peer* p) { delete p; }
