/* Test, bench and demo scenes (header-only, C and C++): an OFF loader, a procedural world (terrain
 * plus scattered boxes and spheres), random triangle soups and boxes, and ray sets: random
 * incoherent rays, diffuse bounces from surfaces, agent-to-agent line-of-sight segments. */
#ifndef VL_TESTS_SCENES_H
#define VL_TESTS_SCENES_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <volley/volley.h>

#include "test_rng.h"

/* A triangle mesh; agents are points from which line-of-sight rays start (may be 0). */
typedef struct scene_mesh {
    float* xyz;
    uint32_t vertex_count;
    uint32_t* indices;
    uint32_t triangle_count;
    float* agents; /* 3 floats each */
    uint32_t agent_count;
    float lo[3], hi[3]; /* bounds of the vertices */
} scene_mesh;

static inline void scene_free(scene_mesh* m) {
    free(m->xyz);
    free(m->indices);
    free(m->agents);
    memset(m, 0, sizeof *m);
}

static inline void scene_bounds(scene_mesh* m) {
    for (int a = 0; a < 3; a++) m->lo[a] = INFINITY, m->hi[a] = -INFINITY;
    for (uint32_t i = 0; i < m->vertex_count; i++)
        for (int a = 0; a < 3; a++) {
            float x = m->xyz[3 * i + a];
            m->lo[a] = x < m->lo[a] ? x : m->lo[a];
            m->hi[a] = x > m->hi[a] ? x : m->hi[a];
        }
}

/* Random agents inside the mesh's bounds grown by 10% (for meshes without a ground). */
static inline int scene_agents_in_bounds(scene_mesh* m, uint32_t count, uint64_t seed) {
    test_rng rng = {seed};
    m->agents = (float*)malloc(sizeof(float) * 3 * (size_t)count);
    if (!m->agents) return 0;
    m->agent_count = count;
    for (uint32_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++) {
            float pad = 0.1f * (m->hi[a] - m->lo[a]);
            m->agents[3 * i + a] = test_float(&rng, m->lo[a] - pad, m->hi[a] + pad);
        }
    return 1;
}

/* Loads an OFF file (faces with more than 3 corners are fan-triangulated). Returns 1 on success. */
static inline int scene_load_off(const char* path, scene_mesh* m) {
    memset(m, 0, sizeof *m);
    FILE* f = fopen(path, "r");
    if (!f) return 0;
    char magic[8] = {0};
    unsigned nv = 0, nf = 0, ne = 0;
    int ok = fscanf(f, "%7s %u %u %u", magic, &nv, &nf, &ne) == 4 && strcmp(magic, "OFF") == 0 && nv > 0;
    uint32_t cap = 0;
    if (ok) {
        m->xyz = (float*)malloc(sizeof(float) * 3 * (size_t)nv);
        ok = m->xyz != NULL;
        m->vertex_count = nv;
    }
    for (unsigned i = 0; ok && i < 3 * nv; i++) ok = fscanf(f, "%f", &m->xyz[i]) == 1;
    for (unsigned i = 0; ok && i < nf; i++) {
        unsigned k = 0, first = 0, prev = 0, cur = 0;
        ok = fscanf(f, "%u", &k) == 1 && k >= 3 && fscanf(f, "%u %u", &first, &prev) == 2;
        for (unsigned c = 2; ok && c < k; c++) {
            ok = fscanf(f, "%u", &cur) == 1 && first < nv && prev < nv && cur < nv;
            if (!ok) break;
            if (m->triangle_count == cap) {
                cap = cap ? 2 * cap : 1024;
                uint32_t* grown = (uint32_t*)realloc(m->indices, sizeof(uint32_t) * 3 * (size_t)cap);
                if (!grown) {
                    ok = 0;
                    break;
                }
                m->indices = grown;
            }
            uint32_t* t = m->indices + 3 * (size_t)m->triangle_count++;
            t[0] = first, t[1] = prev, t[2] = cur;
            prev = cur;
        }
    }
    fclose(f);
    if (!ok || m->triangle_count == 0) {
        scene_free(m);
        return 0;
    }
    scene_bounds(m);
    return 1;
}

/* Loads `name` from the data folder (VOLLEY_DATA_DIR env, else `fallback_dir`); 1 on success. */
static inline int scene_load_data(const char* fallback_dir, const char* name, scene_mesh* m) {
    const char* dir = getenv("VOLLEY_DATA_DIR");
    if (!dir || !*dir) dir = fallback_dir;
    if (!dir || !*dir) return 0;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return scene_load_off(path, m);
}

/* A test's real mesh `name` from VOLLEY_DATA_DIR; 1 on success, else 0 with the test's line saying
 * it is skipped (the folder not set, or the mesh not in it). */
static inline int scene_load_test_mesh(const char* test, const char* name, scene_mesh* m) {
    const char* dir = getenv("VOLLEY_DATA_DIR");
    if (!dir || !*dir) {
        printf("%s: VOLLEY_DATA_DIR not set, %s skipped\n", test, name);
        return 0;
    }
    if (!scene_load_data(NULL, name, m)) {
        printf("%s: %s not found in %s, skipped\n", test, name, dir);
        return 0;
    }
    return 1;
}

/* The largest side of the mesh's bounds. */
static inline float scene_extent(const scene_mesh* m) {
    float ext = 0;
    for (int a = 0; a < 3; a++) ext = fmaxf(ext, m->hi[a] - m->lo[a]);
    return ext;
}

static inline float scene_height(float x, float z) {
    return 6.0f * sinf(x * 0.021f) * cosf(z * 0.017f) + 2.5f * sinf(x * 0.073f + 1.3f) * sinf(z * 0.061f) +
           0.7f * cosf(x * 0.29f + z * 0.23f);
}

static inline int scene_reserve(scene_mesh* m, uint32_t verts, uint32_t tris) {
    m->xyz = (float*)malloc(sizeof(float) * 3 * (size_t)verts);
    m->indices = (uint32_t*)malloc(sizeof(uint32_t) * 3 * (size_t)tris);
    return m->xyz && m->indices;
}

static inline void scene_push_vertex(scene_mesh* m, float x, float y, float z) {
    float* v = m->xyz + 3 * (size_t)m->vertex_count++;
    v[0] = x, v[1] = y, v[2] = z;
}

static inline void scene_push_tri(scene_mesh* m, uint32_t a, uint32_t b, uint32_t c) {
    uint32_t* t = m->indices + 3 * (size_t)m->triangle_count++;
    t[0] = a, t[1] = b, t[2] = c;
}

#define SCENE_SPHERE_STACKS 8u
#define SCENE_SPHERE_SLICES 12u

/* A world: a grid x grid heightfield terrain of 1-unit cells, `objects` boxes and spheres standing
 * on it (half each), and `agents` points 1.7 units above the ground. About 2 grid^2 + 100 objects
 * triangles. Returns 1 on success. */
static inline int scene_world(uint32_t grid, uint32_t objects, uint32_t agents, uint64_t seed, scene_mesh* m) {
    memset(m, 0, sizeof *m);
    test_rng rng = {seed};
    uint32_t sphere_v = (SCENE_SPHERE_STACKS + 1) * (SCENE_SPHERE_SLICES + 1);
    uint32_t sphere_t = 2 * SCENE_SPHERE_STACKS * SCENE_SPHERE_SLICES;
    uint32_t verts = (grid + 1) * (grid + 1) + objects * (sphere_v > 8 ? sphere_v : 8);
    uint32_t tris = 2 * grid * grid + objects * (sphere_t > 12 ? sphere_t : 12);
    if (!scene_reserve(m, verts, tris)) {
        scene_free(m);
        return 0;
    }
    for (uint32_t z = 0; z <= grid; z++)
        for (uint32_t x = 0; x <= grid; x++) scene_push_vertex(m, (float)x, scene_height((float)x, (float)z), (float)z);
    for (uint32_t z = 0; z < grid; z++)
        for (uint32_t x = 0; x < grid; x++) {
            uint32_t a = z * (grid + 1) + x, b = a + 1, c = a + grid + 1, d = c + 1;
            scene_push_tri(m, a, c, b);
            scene_push_tri(m, b, c, d);
        }
    for (uint32_t o = 0; o < objects; o++) {
        float cx = test_float(&rng, 2.0f, (float)grid - 2.0f), cz = test_float(&rng, 2.0f, (float)grid - 2.0f);
        float size = test_float(&rng, 0.3f, 2.5f);
        float cy = scene_height(cx, cz) + size * 0.8f;
        uint32_t base = m->vertex_count;
        if (o & 1) {
            for (uint32_t i = 0; i <= SCENE_SPHERE_STACKS; i++) {
                float th = 3.14159265f * (float)i / SCENE_SPHERE_STACKS;
                for (uint32_t j = 0; j <= SCENE_SPHERE_SLICES; j++) {
                    float ph = 6.2831853f * (float)j / SCENE_SPHERE_SLICES;
                    scene_push_vertex(m, cx + size * sinf(th) * cosf(ph), cy + size * cosf(th),
                                      cz + size * sinf(th) * sinf(ph));
                }
            }
            for (uint32_t i = 0; i < SCENE_SPHERE_STACKS; i++)
                for (uint32_t j = 0; j < SCENE_SPHERE_SLICES; j++) {
                    uint32_t a = base + i * (SCENE_SPHERE_SLICES + 1) + j, b = a + 1;
                    uint32_t c = a + SCENE_SPHERE_SLICES + 1, d = c + 1;
                    scene_push_tri(m, a, c, b);
                    scene_push_tri(m, b, c, d);
                }
        } else {
            float hx = size, hy = size * test_float(&rng, 0.5f, 3.0f), hz = size * test_float(&rng, 0.5f, 1.5f);
            for (uint32_t k = 0; k < 8; k++)
                scene_push_vertex(m, cx + ((k & 1) ? hx : -hx), cy + ((k & 2) ? hy : -hy), cz + ((k & 4) ? hz : -hz));
            static const uint8_t faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                                 {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
            for (uint32_t f = 0; f < 12; f++)
                scene_push_tri(m, base + faces[f][0], base + faces[f][1], base + faces[f][2]);
        }
    }
    m->agents = (float*)malloc(sizeof(float) * 3 * (size_t)(agents ? agents : 1));
    if (!m->agents) {
        scene_free(m);
        return 0;
    }
    m->agent_count = agents;
    for (uint32_t i = 0; i < agents; i++) {
        float x = test_float(&rng, 1.0f, (float)grid - 1.0f), z = test_float(&rng, 1.0f, (float)grid - 1.0f);
        m->agents[3 * i] = x, m->agents[3 * i + 1] = scene_height(x, z) + 1.7f, m->agents[3 * i + 2] = z;
    }
    scene_bounds(m);
    return 1;
}

/* `count` random triangles in the cube [0, extent)^3, each within `size` of its first corner. */
static inline int scene_soup(uint32_t count, float extent, float size, uint64_t seed, scene_mesh* m) {
    memset(m, 0, sizeof *m);
    test_rng rng = {seed};
    if (!scene_reserve(m, 3 * count, count)) {
        scene_free(m);
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        float x = test_float(&rng, 0, extent), y = test_float(&rng, 0, extent), z = test_float(&rng, 0, extent);
        for (int k = 0; k < 3; k++)
            scene_push_vertex(m, x + test_float(&rng, -size, size), y + test_float(&rng, -size, size),
                              z + test_float(&rng, -size, size));
        scene_push_tri(m, 3 * i, 3 * i + 1, 3 * i + 2);
    }
    scene_bounds(m);
    return 1;
}

/* Offsets at which the brute-force tests run their scenes again, far from the origin: 0, then
 * 2^10, 2^13 and 2^17 with both signs (there a float's spacing is 2^-13, 2^-10 and 2^-6). A scene
 * moved by o has every coordinate plus (o, o / 2, -o), rounded to float: a new scene of its own. */
#define SCENE_OFFSET_COUNT 7u
static inline float scene_offset(uint32_t k) {
    static const float offsets[SCENE_OFFSET_COUNT] = {0.0f, 0x1p10f, -0x1p10f, 0x1p13f, -0x1p13f, 0x1p17f, -0x1p17f};
    return offsets[k % SCENE_OFFSET_COUNT];
}

static inline void scene_offset_vector(float o, float v[3]) { v[0] = o, v[1] = 0.5f * o, v[2] = -o; }

/* Moves count points (3 floats each) by v. */
static inline void scene_move_points(float* xyz, uint32_t count, const float v[3]) {
    for (uint32_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++) xyz[3 * (size_t)i + a] += v[a];
}

/* Moves a mesh (vertices, agents, bounds) by the offset vector of o. */
static inline void scene_move(scene_mesh* m, float o) {
    float v[3];
    scene_offset_vector(o, v);
    scene_move_points(m->xyz, m->vertex_count, v);
    if (m->agents) scene_move_points(m->agents, m->agent_count, v);
    scene_bounds(m);
}

/* A copy of m (vertices, triangles, agents) moved by scene_offset(k); scene_free it. 1 on success. */
static inline int scene_copy_moved(const scene_mesh* m, uint32_t k, scene_mesh* out) {
    memset(out, 0, sizeof *out);
    out->agent_count = m->agent_count;
    out->agents = m->agent_count ? (float*)malloc(sizeof(float) * 3 * (size_t)m->agent_count) : NULL;
    if (!scene_reserve(out, m->vertex_count, m->triangle_count) || (m->agent_count && !out->agents)) {
        scene_free(out);
        return 0;
    }
    memcpy(out->xyz, m->xyz, sizeof(float) * 3 * (size_t)m->vertex_count);
    memcpy(out->indices, m->indices, sizeof(uint32_t) * 3 * (size_t)m->triangle_count);
    if (m->agent_count) memcpy(out->agents, m->agents, sizeof(float) * 3 * (size_t)m->agent_count);
    out->vertex_count = m->vertex_count, out->triangle_count = m->triangle_count;
    scene_move(out, scene_offset(k));
    return 1;
}

/* scene_copy_moved, and the check's name there in what: "<name> at <offset>". */
static inline int scene_copy_moved_named(const scene_mesh* m, uint32_t k, const char* name, scene_mesh* out, char* what,
                                         size_t cap) {
    if (!scene_copy_moved(m, k, out)) return 0;
    snprintf(what, cap, "%s at %g", name, scene_offset(k));
    return 1;
}

/* Triangles of zero area among the first `upto`, every 20th: its last corner onto the first
 * (collinear corners, a segment) or, every 40th, onto the middle of the first two; with `points`,
 * every 60th also its second corner onto the first (a point). Then the bounds again. */
static inline void scene_zero_area(scene_mesh* m, uint32_t upto, int points) {
    for (uint32_t i = 0; i + 2 < m->triangle_count && i < upto; i += 20) {
        uint32_t* tri = m->indices + 3 * (size_t)i;
        float *v2 = m->xyz + 3 * (size_t)tri[2], *v1 = m->xyz + 3 * (size_t)tri[1];
        const float* v0 = m->xyz + 3 * (size_t)tri[0];
        for (int a = 0; a < 3; a++) v2[a] = i % 40 ? v0[a] : 0.5f * (v0[a] + v1[a]);
        if (points && i % 60 == 0)
            for (int a = 0; a < 3; a++) v1[a] = v2[a] = v0[a];
    }
    scene_bounds(m);
}

/* Moves count boxes by the offset vector of o (infinite bounds stay infinite). */
static inline void scene_move_boxes(vl_aabb* boxes, uint32_t count, float o) {
    float v[3];
    scene_offset_vector(o, v);
    for (uint32_t i = 0; i < count; i++)
        for (int a = 0; a < 3; a++) boxes[i].min[a] += v[a], boxes[i].max[a] += v[a];
}

/* A unit direction, uniform on the sphere. */
static inline void scene_direction(test_rng* rng, float d[3]) {
    float z = test_float(rng, -1.0f, 1.0f), ph = test_float(rng, 0.0f, 6.2831853f);
    float s = sqrtf(1.0f - z * z);
    d[0] = s * cosf(ph), d[1] = s * sinf(ph), d[2] = z;
}

/* Random incoherent rays: origins in the bounds grown by 20%, uniform directions, tmax = INFINITY. */
static inline void scene_rays_random(const scene_mesh* m, uint32_t count, uint64_t seed, vl_ray* rays) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < count; i++) {
        vl_ray* r = &rays[i];
        for (int a = 0; a < 3; a++) {
            float pad = 0.2f * (m->hi[a] - m->lo[a]);
            r->origin[a] = test_float(&rng, m->lo[a] - pad, m->hi[a] + pad);
        }
        scene_direction(&rng, r->dir);
        r->tmin = 0.0f;
        r->tmax = INFINITY;
    }
}

/* Diffuse bounces: from a random point of a random triangle, nudged off the surface, a
 * cosine-weighted direction around the normal on the nudged side; tmax = INFINITY. */
static inline void scene_rays_diffuse(const scene_mesh* m, uint32_t count, uint64_t seed, vl_ray* rays) {
    test_rng rng = {seed};
    float scale = 0.0f;
    for (int a = 0; a < 3; a++) scale = fmaxf(scale, m->hi[a] - m->lo[a]);
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t* t = m->indices + 3 * (size_t)test_u32(&rng, m->triangle_count);
        const float *p0 = m->xyz + 3 * (size_t)t[0], *p1 = m->xyz + 3 * (size_t)t[1], *p2 = m->xyz + 3 * (size_t)t[2];
        float u = test_float(&rng, 0, 1), v = test_float(&rng, 0, 1);
        if (u + v > 1) u = 1 - u, v = 1 - v;
        float e1[3], e2[3], n[3];
        for (int a = 0; a < 3; a++) e1[a] = p1[a] - p0[a], e2[a] = p2[a] - p0[a];
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(len > 0)) n[0] = 0, n[1] = 1, n[2] = 0, len = 1;
        float side = (test_next(&rng) & 1) ? 1.0f : -1.0f;
        for (int a = 0; a < 3; a++) n[a] *= side / len;
        /* cosine-weighted: a uniform direction plus the normal */
        float d[3];
        scene_direction(&rng, d);
        for (int a = 0; a < 3; a++) d[a] += n[a] * 1.0001f;
        vl_ray* r = &rays[i];
        for (int a = 0; a < 3; a++) {
            r->origin[a] = p0[a] + u * e1[a] + v * e2[a] + n[a] * (1e-4f * scale);
            r->dir[a] = d[a];
        }
        r->tmin = 0.0f;
        r->tmax = INFINITY;
    }
}

/* Axis-aligned rays: a random axis and sign, |dir| 0.5 to 2, tmin = 0, tmax = INFINITY; ray i
 * starts on a random vertex's line along that axis, moved back by the mesh's extent, when `all` or
 * i is odd (else it keeps its origin). */
static inline void scene_rays_axis(const scene_mesh* m, uint32_t count, test_rng* rng, int all, vl_ray* rays) {
    float extent = 0;
    for (int a = 0; a < 3; a++) extent = fmaxf(extent, m->hi[a] - m->lo[a]);
    for (uint32_t i = 0; i < count; i++) {
        int axis = (int)test_u32(rng, 3);
        float sign = (test_next(rng) & 1) ? 1.0f : -1.0f;
        vl_ray* r = &rays[i];
        if (all || (i & 1)) {
            const float* v = m->xyz + 3 * (size_t)test_u32(rng, m->vertex_count);
            for (int a = 0; a < 3; a++) r->origin[a] = v[a];
            r->origin[axis] -= sign * extent;
        }
        r->dir[0] = r->dir[1] = r->dir[2] = 0.0f;
        r->dir[axis] = sign * test_float(rng, 0.5f, 2.0f);
        r->tmin = 0.0f;
        r->tmax = INFINITY;
    }
}

/* Line of sight: segments between two random agents (origin at one, dir to the other, tmax = 1). */
static inline void scene_rays_los(const scene_mesh* m, uint32_t count, uint64_t seed, vl_ray* rays) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < count; i++) {
        uint32_t a = test_u32(&rng, m->agent_count), b = test_u32(&rng, m->agent_count);
        if (a == b) b = (b + 1) % m->agent_count;
        vl_ray* r = &rays[i];
        for (int k = 0; k < 3; k++) {
            r->origin[k] = m->agents[3 * a + k];
            r->dir[k] = m->agents[3 * b + k] - m->agents[3 * a + k];
        }
        if (r->dir[0] == 0 && r->dir[1] == 0 && r->dir[2] == 0) r->dir[1] = 1e-3f;
        r->tmin = 0.0f;
        r->tmax = 1.0f;
    }
}

/* Overlap queries on the surface (the bench and the tool place them alike): each on a random
 * triangle, at a random point of it moved by up to a fifth of its longest edge (the largest
 * coordinate difference of its corners) on each axis; the sphere's radius half to twice that
 * edge, the box's half sizes half to all of the radius. boxes[i] and spheres[i] share a centre. */
static inline void scene_overlap_queries(const scene_mesh* m, uint32_t count, uint64_t seed, vl_aabb* boxes,
                                         vl_sphere* spheres) {
    test_rng rng = {seed};
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t* t = m->indices + 3 * (size_t)test_u32(&rng, m->triangle_count);
        const float *p0 = m->xyz + 3 * (size_t)t[0], *p1 = m->xyz + 3 * (size_t)t[1], *p2 = m->xyz + 3 * (size_t)t[2];
        float edge = 0;
        for (int a = 0; a < 3; a++)
            edge = fmaxf(fmaxf(edge, fabsf(p1[a] - p0[a])), fmaxf(fabsf(p2[a] - p0[a]), fabsf(p2[a] - p1[a])));
        float u = test_float(&rng, 0, 1), v = test_float(&rng, 0, 1 - u);
        float size = edge * test_float(&rng, 0.5f, 2.0f);
        for (int a = 0; a < 3; a++) {
            float c = p0[a] + u * (p1[a] - p0[a]) + v * (p2[a] - p0[a]) + test_float(&rng, -0.2f, 0.2f) * edge;
            float h = size * test_float(&rng, 0.5f, 1.0f);
            boxes[i].min[a] = c - h, boxes[i].max[a] = c + h;
            spheres[i].center[a] = c;
        }
        spheres[i].radius = size;
    }
}

/* Sweeps near the surface (the bench and the tool place them alike): from a random point of a
 * random triangle, pushed off along the triangle's normal by 0.5 to 3 shape sizes, moving 1 to 8
 * shape sizes in a random direction (dir is the whole move, tmax = 1); the shape size (the
 * sphere's radius; the box's half sizes are half to all of it) is the mean edge length (of every
 * seventh triangle's first edge) times 0.3 to 1.5. spheres[i] and boxes[i] share start and move. */
static inline void scene_sweeps(const scene_mesh* m, uint32_t count, uint64_t seed, vl_sphere_sweep* spheres,
                                vl_box_sweep* boxes) {
    double edge = 0;
    for (uint32_t i = 0; i < m->triangle_count; i += 7) {
        const float* a = m->xyz + 3 * (size_t)m->indices[3 * (size_t)i];
        const float* b = m->xyz + 3 * (size_t)m->indices[3 * (size_t)i + 1];
        edge += sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
    }
    edge /= (m->triangle_count + 6) / 7;
    test_rng rng = {seed};
    for (uint32_t i = 0; i < count; i++) {
        uint32_t t = test_u32(&rng, m->triangle_count);
        const float* v[3];
        for (int k = 0; k < 3; k++) v[k] = m->xyz + 3 * (size_t)m->indices[3 * (size_t)t + k];
        float u = test_float(&rng, 0, 1), w = test_float(&rng, 0, 1);
        if (u + w > 1) u = 1 - u, w = 1 - w;
        float e1[3], e2[3], n[3], p[3], d[3];
        for (int a = 0; a < 3; a++) e1[a] = v[1][a] - v[0][a], e2[a] = v[2][a] - v[0][a];
        n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2], n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        float nl = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        nl = nl > 0 ? nl : 1;
        float size = (float)edge * test_float(&rng, 0.3f, 1.5f);
        float off = size * test_float(&rng, 0.5f, 3.0f);
        for (int a = 0; a < 3; a++) p[a] = v[0][a] + u * e1[a] + w * e2[a] + off * n[a] / nl;
        scene_direction(&rng, d);
        float len = size * test_float(&rng, 1.0f, 8.0f);
        vl_sphere_sweep* sp = &spheres[i];
        vl_box_sweep* bx = &boxes[i];
        for (int a = 0; a < 3; a++) {
            sp->center[a] = p[a], sp->dir[a] = d[a] * len;
            float h = size * test_float(&rng, 0.5f, 1.0f);
            bx->box.min[a] = p[a] - h, bx->box.max[a] = p[a] + h, bx->dir[a] = d[a] * len;
        }
        sp->radius = size, sp->tmax = 1.0f;
        bx->tmax = 1.0f;
    }
}

#endif
