/* Scenes of the volley tool: the bench's procedural world, the Stanford bunny from the data
 * folder, and mesh files in any format assimp reads. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef VOLLEY_TOOL_PROFILE_ONLY
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#endif

#include "tool.h"

#ifndef VOLLEY_DATA_DIR
#define VOLLEY_DATA_DIR ""
#endif

void tool_scene_free(tool_scene* s) {
    scene_free(&s->mesh);
    memset(s, 0, sizeof *s);
}

int tool_scene_world(int quick, tool_scene* out) {
    memset(out, 0, sizeof *out);
    /* the bench's world: 640 x 640 terrain, 3000 boxes and spheres, 4096 agents (1.1M triangles) */
    uint32_t grid = quick ? 96 : 640, objects = quick ? 120 : 3000, agents = quick ? 256 : 4096;
    if (!scene_world(grid, objects, agents, 42, &out->mesh)) {
        fprintf(stderr, "volley: out of memory making the procedural world\n");
        return 1;
    }
    snprintf(out->name, sizeof out->name, "world");
    out->terrain_triangles = 2 * grid * grid;
    out->is_world = 1;
    return 0;
}

#ifdef VOLLEY_TOOL_PROFILE_ONLY
static int load_assimp(const char* path, tool_scene* out) {
    (void)out;
    fprintf(stderr, "volley: cannot read '%s': this volley was built without assimp (VOLLEY_TOOL_PROFILE_ONLY)\n", path);
    return 1;
}
#else
/* Reads every triangle of every mesh of the file, node transforms applied. */
static int load_assimp(const char* path, tool_scene* out) {
    const struct aiScene* sc = aiImportFile(path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                                                      aiProcess_PreTransformVertices | aiProcess_SortByPType);
    if (!sc) {
        const char* why = aiGetErrorString();
        if (why && strstr(why, "No output meshes"))
            fprintf(stderr, "volley: mesh '%s' is empty: it holds no triangles\n", path);
        else
            fprintf(stderr, "volley: cannot read mesh '%s' (corrupt, or a format assimp does not know): %s\n", path,
                    why && *why ? why : "no reason given");
        return 1;
    }
    size_t verts = 0, tris = 0;
    for (unsigned i = 0; i < sc->mNumMeshes; i++) {
        const struct aiMesh* m = sc->mMeshes[i];
        verts += m->mNumVertices;
        for (unsigned f = 0; f < m->mNumFaces; f++) tris += m->mFaces[f].mNumIndices == 3;
    }
    if (tris == 0) {
        fprintf(stderr, "volley: mesh '%s' holds no triangles: it is empty, or assimp found nothing it could read\n",
                path);
        aiReleaseImport(sc);
        return 1;
    }
    if (verts > 0xFFFFFFF0u || tris > (1u << 30)) {
        fprintf(stderr, "volley: mesh '%s' is too large (%zu vertices, %zu triangles)\n", path, verts, tris);
        aiReleaseImport(sc);
        return 1;
    }
    scene_mesh* mesh = &out->mesh;
    if (!scene_reserve(mesh, (uint32_t)verts, (uint32_t)tris)) {
        fprintf(stderr, "volley: out of memory loading '%s'\n", path);
        scene_free(mesh);
        aiReleaseImport(sc);
        return 1;
    }
    for (unsigned i = 0; i < sc->mNumMeshes; i++) {
        const struct aiMesh* m = sc->mMeshes[i];
        uint32_t base = mesh->vertex_count;
        for (unsigned v = 0; v < m->mNumVertices; v++)
            scene_push_vertex(mesh, m->mVertices[v].x, m->mVertices[v].y, m->mVertices[v].z);
        for (unsigned f = 0; f < m->mNumFaces; f++) {
            const struct aiFace* face = &m->mFaces[f];
            if (face->mNumIndices == 3)
                scene_push_tri(mesh, base + face->mIndices[0], base + face->mIndices[1], base + face->mIndices[2]);
        }
    }
    aiReleaseImport(sc);
    for (size_t i = 0; i < 3 * (size_t)mesh->vertex_count; i++) {
        if (!isfinite(mesh->xyz[i])) {
            fprintf(stderr, "volley: mesh '%s' is corrupt: a vertex coordinate is not a finite number\n", path);
            scene_free(mesh);
            return 1;
        }
    }
    scene_bounds(mesh);
    if (!scene_agents_in_bounds(mesh, 4096, 7)) {
        fprintf(stderr, "volley: out of memory loading '%s'\n", path);
        scene_free(mesh);
        return 1;
    }
    return 0;
}
#endif

int tool_scene_file(const char* path, tool_scene* out) {
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "volley: cannot open mesh '%s': %s\n", path, strerror(errno));
        return 1;
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "volley: '%s' is a directory, not a mesh file\n", path);
        return 1;
    }
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "volley: cannot open mesh '%s': %s\n", path, strerror(errno));
        return 1;
    }
    if (st.st_size == 0) {
        fprintf(stderr, "volley: mesh '%s' is empty (0 bytes)\n", path);
        return 1;
    }
    tool_progress p;
    tool_progress_start(&p, "loading mesh");
    if (st.st_size > (64 << 20)) {
        p.start -= 1.0; /* a big file: say so at once */
        tool_progress_update(&p, -1);
    }
    int rc = load_assimp(path, out);
    tool_progress_done(&p);
    if (rc) return rc;
    const char* base = strrchr(path, '/');
    snprintf(out->name, sizeof out->name, "%s", base ? base + 1 : path);
    return 0;
}

int tool_scene_bunny(tool_scene* out) {
    const char* dir = getenv("VOLLEY_DATA_DIR");
    if (!dir || !*dir) dir = VOLLEY_DATA_DIR;
    char path[4096];
    snprintf(path, sizeof path, "%s/bunny00.off", dir);
    if (access(path, R_OK) != 0) {
        fprintf(stderr,
                "volley: the bunny scene needs bunny00.off, not found in '%s' (set VOLLEY_DATA_DIR to the folder "
                "that holds it; see README.md)\n",
                dir);
        return 1;
    }
    if (tool_scene_file(path, out)) return 1;
    snprintf(out->name, sizeof out->name, "bunny");
    return 0;
}

int tool_scene_pick(const char* cmd, const char* mesh_path, const char* scene_name, int quick, tool_scene* out) {
    if (mesh_path) return tool_scene_file(mesh_path, out);
    if (!scene_name || strcmp(scene_name, "world") == 0) return tool_scene_world(quick, out);
    if (strcmp(scene_name, "bunny") == 0) return tool_scene_bunny(out);
    fprintf(stderr, "volley %s: unknown scene '%s' (world or bunny)\n", cmd, scene_name);
    return TOOL_EXIT_USAGE;
}

vl_bvh* tool_build(const char* cmd, const tool_scene* s, double* seconds) {
    const scene_mesh* m = &s->mesh;
    tool_progress p;
    tool_progress_start(&p, "building the tree");
    if (m->triangle_count >= (1u << 21)) {
        p.start -= 1.0; /* a few seconds at least: say so at once */
        tool_progress_update(&p, -1);
    }
    double t0 = tool_now();
    vl_bvh* bvh = NULL;
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &bvh);
    if (seconds) *seconds = tool_now() - t0;
    tool_progress_done(&p);
    if (st != VL_OK) {
        fprintf(stderr, "volley %s: cannot build a tree over '%s': %s\n", cmd, s->name, vl_status_string(st));
        return NULL;
    }
    return bvh;
}
