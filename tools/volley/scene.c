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

/* Whether `dir` holds bunny00.off. */
static int data_dir_has_bunny(const char* dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/bunny00.off", dir);
    return access(path, R_OK) == 0;
}

int tool_data_dir(char* out, size_t size, int* from_env) {
    *from_env = 0;
    const char* env = getenv("VOLLEY_DATA_DIR");
    if (env && *env) {
        snprintf(out, size, "%s", env);
        *from_env = 1;
        return data_dir_has_bunny(out);
    }
    /* From the program's own folder upwards: an install's share/volley/data (BIN/../share), a
     * checkout's data/ (build/X/tools/volley sits three folders below it) and ../shared/data. */
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = '\0';
    static const char* const below[] = {"share/volley/data", "data", "../shared/data"};
    for (int up = 0; up < 6; up++) {
        char* slash = strrchr(exe, '/');
        if (!slash || slash == exe) break;
        *slash = '\0';
        for (size_t k = 0; k < sizeof below / sizeof below[0]; k++) {
            snprintf(out, size, "%s/%s", exe, below[k]);
            if (data_dir_has_bunny(out)) return 1;
        }
    }
    snprintf(out, size, "share/volley/data beside the volley program, or a checkout's data/");
    return 0;
}

int tool_scene_bunny(tool_scene* out) {
    char dir[4096];
    int from_env = 0;
    if (!tool_data_dir(dir, sizeof dir, &from_env)) {
        fprintf(stderr,
                "volley: the bunny scene needs bunny00.off, not found in %s%s%s (scripts/fetch-data.sh fetches it; "
                "set VOLLEY_DATA_DIR to the folder that holds it)\n",
                from_env ? "'" : "", dir, from_env ? "' (VOLLEY_DATA_DIR)" : "");
        return 1;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/bunny00.off", dir);
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
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &bvh, NULL);
    if (seconds) *seconds = tool_now() - t0;
    tool_progress_done(&p);
    if (st != VL_OK) {
        fprintf(stderr, "volley %s: cannot build a tree over '%s': %s\n", cmd, s->name, vl_status_string(st));
        return NULL;
    }
    return bvh;
}
