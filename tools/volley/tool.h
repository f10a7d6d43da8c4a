/* The volley command-line tool: shared declarations of its subcommands and helpers. */
#ifndef VOLLEY_TOOL_H
#define VOLLEY_TOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <volley/volley.h>

#include "scenes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes: 0 success, 1 a failure while running (unreadable mesh, write error), 2 bad usage. */
enum { TOOL_EXIT_OK = 0, TOOL_EXIT_FAIL = 1, TOOL_EXIT_USAGE = 2 };

int tool_render(int argc, char** argv);
int tool_bench(int argc, char** argv);
int tool_profile(int argc, char** argv);

/* ---- scenes ------------------------------------------------------------------------------- */

/* A scene to trace: a mesh with agents for line-of-sight rays, and how many of its first
 * triangles are terrain (the procedural world; 0 otherwise). */
typedef struct tool_scene {
    char name[256];
    scene_mesh mesh;
    uint32_t terrain_triangles;
    int is_world;
} tool_scene;

/* The procedural world of the bench (tests/scenes.h), full size or small (quick). 0 on success. */
int tool_scene_world(int quick, tool_scene* out);
/* The folder of meshes, found at run time: $VOLLEY_DATA_DIR when set, else, from the program's
 * folder upwards, share/volley/data, data/ or ../shared/data, the first holding bunny00.off.
 * 1 when found; else 0, with `out` saying where it looked. */
int tool_data_dir(char* out, size_t size, int* from_env);
/* The Stanford bunny from the data folder (tool_data_dir). 0 on success; prints why not otherwise. */
int tool_scene_bunny(tool_scene* out);
/* A mesh file in any format assimp reads (OBJ, PLY, STL, glTF, OFF...). 0 on success; otherwise
 * prints one line saying whether the file is missing, unreadable, corrupt or empty. */
int tool_scene_file(const char* path, tool_scene* out);
/* Picks the scene of a subcommand: the mesh file when given, else the named scene (world or
 * bunny). 0 on success. */
int tool_scene_pick(const char* cmd, const char* mesh_path, const char* scene_name, int quick, tool_scene* out);
void tool_scene_free(tool_scene* s);
/* Builds the tree with a progress note for large meshes; prints the error and returns NULL on failure. */
vl_bvh* tool_build(const char* cmd, const tool_scene* s, double* seconds);

/* ---- helpers ------------------------------------------------------------------------------ */

double tool_now(void);
/* Parses a whole decimal integer in [lo, hi]; prints "cmd: option wants ..." and returns 0 on error. */
int tool_parse_u32(const char* cmd, const char* option, const char* text, uint32_t lo, uint32_t hi, uint32_t* out);
/* Prints "volley CMD: unknown option ..." for getopt's last error and returns TOOL_EXIT_USAGE. */
int tool_bad_option(const char* cmd, char** argv, int optopt_value);
/* The x86 time-stamp counter (ticks at the nominal clock), or 0 where there is none. */
uint64_t tool_ticks(void);
int tool_has_ticks(void);
/* CPU features the machine has that the SIMD backends use, as "a b c". */
const char* tool_cpu_features(void);

/* The machine and the run, for figures that can be compared: the CPU's model name, the cores
 * online, the 1-minute load average (-1 when unknown), the time now as ISO 8601 UTC, and the
 * build type of this tool (Release, Debug...). */
const char* tool_cpu_model(void);
unsigned tool_cores(void);
double tool_load_average(void);
const char* tool_utc_now(void);
const char* tool_build_type(void);

/* A progress line on stderr, only when stderr is a terminal and the work has run over a second. */
typedef struct tool_progress {
    double start, last;
    const char* label;
    int shown;
} tool_progress;
void tool_progress_start(tool_progress* p, const char* label);
void tool_progress_update(tool_progress* p, double fraction);
void tool_progress_done(tool_progress* p);

/* Whether `path` can be written (an existing file, or a new one in a folder that exists and is
 * writable); says why not, as "volley CMD: cannot write ...", when it cannot. Called before the
 * work, so that a wrong output name fails at once. */
int tool_writable(const char* cmd, const char* path);

/* Writes s as a JSON string (quoted, escaped). */
void tool_json_string(FILE* f, const char* s);

/* ---- peers (built in when CMake found them) ----------------------------------------------- */

typedef struct tool_peer tool_peer;
/* Embree 3, one thread: NULL when the tool was built without it. */
tool_peer* tool_embree_create(const scene_mesh* m, double* seconds);
/* rtcIntersect1 / rtcOccluded1 on each ray; returns the hits. */
uint32_t tool_embree_trace(tool_peer* p, const vl_ray* rays, uint32_t count, int any);
/* Embree's high-quality build (RTC_BUILD_QUALITY_HIGH) of the same mesh beside the default one,
 * for the embree_hq_* paths; the build's seconds. 1 when made (or already there). */
int tool_embree_build_hq(tool_peer* p, const scene_mesh* m, double* seconds);
/* Embree's paths (bench/embree_paths.h), numbered 0 to tool_embree_path_count() - 1 and named as
 * volley_bench's rows: embree_1 (the loop of tool_embree_trace), embree_1M (the stream),
 * embree_8 and embree_16 (packets) on the default build, then embree_hq_1, embree_hq_1M,
 * embree_hq_8 and embree_hq_16 on the high-quality build. */
uint32_t tool_embree_path_count(void);
const char* tool_embree_path_name(uint32_t path);
/* Whether the path can run: the Embree build has it (native packets of its width, streams) and,
 * for the embree_hq_* paths, tool_embree_build_hq made the scene. */
int tool_embree_path_ready(tool_peer* p, uint32_t path);
/* Traces the rays on one path, closest or any hit, and writes the hits; 0 when the path cannot run. */
int tool_embree_trace_path(tool_peer* p, uint32_t path, const vl_ray* rays, uint32_t count, int any,
                           uint32_t* hits);
void tool_embree_destroy(tool_peer* p);
int tool_embree_built(void);

/* Bullet's btBvhTriangleMeshShape::performRaycast (closest hit only): NULL without Bullet. */
tool_peer* tool_bullet_create(const scene_mesh* m, double* seconds);
uint32_t tool_bullet_trace(tool_peer* p, const vl_ray* rays, uint32_t count);
void tool_bullet_destroy(tool_peer* p);
int tool_bullet_built(void);

/* ---- broadphase kinds --------------------------------------------------------------------- */

/* Every broadphase kind the bench and the profile measure: add a row to add a kind. */
typedef struct tool_broadphase_kind {
    const char* name;
    vl_broadphase_kind kind;
} tool_broadphase_kind;
extern const tool_broadphase_kind tool_broadphase_kinds[];
extern const uint32_t tool_broadphase_kind_count;

/* count random boxes (a cube, or a flat slab), moving_percent of them drifting each frame: the
 * microseconds of the median frame (update + commit with created/deleted lists) of `frames` frames
 * and the pairs at the end. 0 on success. */
int tool_broadphase_run(vl_broadphase_kind kind, uint32_t count, uint32_t moving_percent, int flat, uint32_t frames,
                        double* us_per_frame, uint32_t* pairs);

#ifdef __cplusplus
}
#endif

#endif
