/* volley: the command-line tool. Renders meshes with batched rays, benchmarks volley against
 * Embree and Bullet, and profiles the SIMD kernels of the backend it was built with. */
#include <string.h>

#include "tool.h"

static const char main_usage[] =
    "Usage: volley COMMAND [options]\n"
    "Batched incoherent spatial queries: an AABB tree with batched raycasts, sweep-and-prune broadphases.\n"
    "\n"
    "Commands:\n"
    "  render [MESH] -o out.png   render a mesh (or the procedural world, or the bunny) with batched\n"
    "                             closest-hit rays and any-hit ambient occlusion, to a PNG\n"
    "  bench [MESH]               raycast throughput, batched and single-ray (and Embree's and\n"
    "                             Bullet's when built in), and the broadphase kinds\n"
    "  profile                    SIMD kernels per test at each width, inner loops, backend and CPU\n"
    "\n"
    "  volley COMMAND --help      the options of a command\n"
    "  volley --version           version and SIMD backend\n"
    "\n"
    "Meshes: any format assimp reads (OBJ, PLY, STL, glTF, OFF...).\n";

int main(int argc, char** argv) {
    if (argc < 2) {
        fputs(main_usage, stderr);
        return TOOL_EXIT_USAGE;
    }
    const char* cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(main_usage, stdout);
        return TOOL_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("volley %s, SIMD backend %s (%u lanes)\n", vl_get_version_string(), vl_get_simd_backend(), vl_get_simd_width());
        return TOOL_EXIT_OK;
    }
    if (strcmp(cmd, "render") == 0) return tool_render(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return tool_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "profile") == 0) return tool_profile(argc - 1, argv + 1);
    fprintf(stderr, "volley: unknown command '%s'\nTry 'volley --help'.\n", cmd);
    return TOOL_EXIT_USAGE;
}
