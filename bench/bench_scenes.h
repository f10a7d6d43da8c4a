// The scenes of the BVH benches (bench_rays, bench_overlaps, bench_sweeps, bench_context):
// the bunny (bunny00.off, when the data folder is there) and the procedural world of 1.1M
// triangles, with their volley BVH, and the same meshes handed to the peers (Embree 3, Bullet)
// when CMake found them.
#ifndef VL_BENCH_SCENES_H
#define VL_BENCH_SCENES_H

#include <cstdint>
#include <memory>
#include <vector>

#include <volley/volley.h>

#include "../tests/scenes.h"

#ifdef VOLLEY_BENCH_EMBREE
#include <embree3/rtcore.h>
#endif
#ifdef VOLLEY_BENCH_BULLET
#include <btBulletCollisionCommon.h>
#endif

// Scene `which`: 0 the bunny, 1 the world. `agents` line-of-sight agents (0 where no
// line-of-sight rays are traced): on the world's ground, in the bunny's bounds grown by 10%.
bool bench_load_mesh(int which, uint32_t agents, scene_mesh* m);

// bench_load_mesh, then the BVH of its triangles (default build). False if either fails.
bool bench_load_bvh(int which, uint32_t agents, scene_mesh* m, vl_bvh** bvh);

// Whether the bunny is there (the benches register the bunny cases only then).
bool bench_bunny_present();

#ifdef VOLLEY_BENCH_EMBREE
// One committed Embree scene of the mesh's triangles on `device`.
RTCScene bench_embree_build(RTCDevice device, const scene_mesh& m);
#endif

#ifdef VOLLEY_BENCH_BULLET
// The mesh as a btBvhTriangleMeshShape (quantized AABB compression, BVH built), with the copies
// of its indices and vertices that the shape points into.
struct BulletMesh {
    std::vector<int> indices;
    std::vector<btScalar> verts;
    std::unique_ptr<btTriangleIndexVertexArray> array;
    std::unique_ptr<btBvhTriangleMeshShape> shape;
    void build(const scene_mesh& m);
};

// A btCollisionWorld (dbvt broadphase) holding one btCollisionObject of a BulletMesh's shape: what
// btCollisionWorld::convexSweepTest sweeps against.
struct BulletWorld {
    std::unique_ptr<btDefaultCollisionConfiguration> config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    std::unique_ptr<btDbvtBroadphase> broadphase;
    std::unique_ptr<btCollisionWorld> world;
    std::unique_ptr<btCollisionObject> object;
    void build(btCollisionShape* shape);
};
#endif

#endif
