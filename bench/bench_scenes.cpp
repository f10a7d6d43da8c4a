// The scenes of the BVH benches: see bench_scenes.h.
#include "bench_scenes.h"

#include <cstring>

bool bench_load_mesh(int which, uint32_t agents, scene_mesh* m) {
    if (which == 0) {
        if (!scene_load_data(VOLLEY_DATA_DIR, "bunny00.off", m)) return false;
        if (agents) scene_agents_in_bounds(m, agents, 7);
        return true;
    }
    return scene_world(640, 3000, agents, 42, m) != 0;
}

bool bench_load_bvh(int which, uint32_t agents, scene_mesh* m, vl_bvh** bvh) {
    if (!bench_load_mesh(which, agents, m)) return false;
    return vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, nullptr, bvh, NULL) == VL_OK;
}

bool bench_bunny_present() {
    scene_mesh m;
    if (!scene_load_data(VOLLEY_DATA_DIR, "bunny00.off", &m)) return false;
    scene_free(&m);
    return true;
}

#ifdef VOLLEY_BENCH_EMBREE
RTCScene bench_embree_build(RTCDevice device, const scene_mesh& m) {
    RTCScene scene = rtcNewScene(device);
    RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    auto* v = (float*)rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float),
                                              m.vertex_count);
    std::memcpy(v, m.xyz, sizeof(float) * 3 * m.vertex_count);
    auto* t = (unsigned*)rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                 3 * sizeof(unsigned), m.triangle_count);
    std::memcpy(t, m.indices, sizeof(unsigned) * 3 * m.triangle_count);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(scene, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(scene);
    return scene;
}
#endif

#ifdef VOLLEY_BENCH_BULLET
void BulletMesh::build(const scene_mesh& m) {
    indices.assign(m.indices, m.indices + 3 * (size_t)m.triangle_count);
    verts.assign(m.xyz, m.xyz + 3 * (size_t)m.vertex_count);
    array.reset(new btTriangleIndexVertexArray((int)m.triangle_count, indices.data(), 3 * sizeof(int),
                                               (int)m.vertex_count, verts.data(), 3 * sizeof(btScalar)));
    shape.reset(new btBvhTriangleMeshShape(array.get(), true, true));
}

void BulletWorld::build(btCollisionShape* shape) {
    config.reset(new btDefaultCollisionConfiguration());
    dispatcher.reset(new btCollisionDispatcher(config.get()));
    broadphase.reset(new btDbvtBroadphase());
    world.reset(new btCollisionWorld(dispatcher.get(), broadphase.get(), config.get()));
    object.reset(new btCollisionObject());
    object->setCollisionShape(shape);
    world->addCollisionObject(object.get());
    world->updateAabbs();
}

uint32_t BulletWorld::sweep(const btConvexShape* shape, const btTransform& from, const btTransform& to) const {
    btCollisionWorld::ClosestConvexResultCallback cb(from.getOrigin(), to.getOrigin());
    world->convexSweepTest(shape, from, to, cb);
    return cb.hasHit() ? 0u : VL_NO_HIT;
}
#endif
