/* volley's main demo: builds AABB trees over the Stanford bunny (when the data folder is there)
 * and over a procedural world, then fires batches of incoherent line-of-sight and closest-hit
 * rays through them, batched and one by one, and prints what it measured. A few seconds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <volley/volley.h>

#include "../tests/scenes.h"

static double now_s(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rays per second of `rounds` passes of vl_bvh_raycast (batched) or vl_bvh_raycast1 (single). */
static double trace(const vl_bvh* bvh, const vl_ray* rays, uint32_t n, uint32_t flags, int batched, vl_hit* hits,
                    uint32_t* hit_count) {
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        double t0 = now_s();
        if (batched) {
            vl_bvh_raycast(bvh, rays, n, flags, hits);
        } else {
            for (uint32_t i = 0; i < n; i++) vl_bvh_raycast1(bvh, &rays[i], flags, &hits[i]);
        }
        double dt = now_s() - t0;
        best = dt < best ? dt : best;
    }
    uint32_t h = 0;
    for (uint32_t i = 0; i < n; i++) h += hits[i].prim != VL_NO_HIT;
    *hit_count = h;
    return n / best;
}

static int run_scene(const char* name, scene_mesh* m, uint32_t n) {
    double t0 = now_s();
    vl_bvh* bvh = NULL;
    vl_status st = vl_bvh_build_triangles(m->xyz, m->vertex_count, m->indices, m->triangle_count, NULL, &bvh);
    double build_ms = 1e3 * (now_s() - t0);
    if (st != VL_OK) {
        fprintf(stderr, "demo: build failed: %s\n", vl_status_string(st));
        return 1;
    }
    vl_bvh_stats stats;
    vl_bvh_get_stats(bvh, &stats);
    printf("\n%s: %u triangles, built in %.0f ms (%u nodes, depth %u, SAH %.1f, %.0f bytes/triangle)\n", name,
           m->triangle_count, build_ms, stats.nodes, stats.depth, stats.sah_cost,
           (double)stats.bytes / m->triangle_count);
    vl_ray* rays = malloc(sizeof(vl_ray) * n);
    vl_hit* hits = malloc(sizeof(vl_hit) * n);
    if (!rays || !hits) return 1;
    static const char* kinds[] = {"line of sight (any hit)", "random rays (closest)", "diffuse bounces (closest)"};
    printf("  %-27s %12s %12s %8s %7s\n", "", "batched", "single", "speedup", "hits");
    for (int k = 0; k < 3; k++) {
        uint32_t flags = k == 0 ? VL_RAY_ANY : VL_RAY_CLOSEST;
        if (k == 0) scene_rays_los(m, n, 101, rays);
        else if (k == 1) scene_rays_random(m, n, 102, rays);
        else scene_rays_diffuse(m, n, 103, rays);
        uint32_t hb, hs;
        double batched = trace(bvh, rays, n, flags, 1, hits, &hb);
        double single = trace(bvh, rays, n, flags, 0, hits, &hs);
        printf("  %-27s %7.2f Mray/s %6.2f Mray/s %7.2fx %6.1f%%%s\n", kinds[k], batched * 1e-6, single * 1e-6,
               batched / single, 100.0 * hb / n, hb == hs ? "" : "  (batched and single disagree!)");
    }
    free(rays);
    free(hits);
    vl_bvh_destroy(bvh);
    return 0;
}

int main(void) {
    printf("volley %s, SIMD %s (%u lanes): batched raycasts (ray streams), one thread\n", vl_version_string(),
           vl_simd_backend(), vl_simd_width());
    scene_mesh m;
    int status = 0;
    if (scene_load_data(VOLLEY_DATA_DIR, "bunny00.off", &m)) {
        scene_agents_in_bounds(&m, 1024, 7);
        status |= run_scene("bunny", &m, 200000);
        scene_free(&m);
    } else {
        printf("(bunny00.off not found in %s or $VOLLEY_DATA_DIR: procedural world only)\n", VOLLEY_DATA_DIR);
    }
    if (!scene_world(300, 1500, 2048, 42, &m)) return 1;
    status |= run_scene("procedural world (terrain + boxes + spheres)", &m, 200000);
    scene_free(&m);
    return status;
}
