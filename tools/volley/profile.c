/* volley profile: the SIMD kernels per test at each width (the kernels volley_bench times, through
 * bench/kernel_shim), raycast throughput against batch size beside the single-ray path and Embree,
 * the structures' inner loops per item, and the backend and CPU features the binary runs with. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_shim.h"
#include "tool.h"

static const char profile_usage[] =
    "Usage: volley profile [options]\n"
    "Profiles the binary's SIMD backend: nanoseconds (and time-stamp-counter cycles on x86) per\n"
    "test of each kernel at widths 1 (scalar), 4 and 8; raycast throughput against batch size\n"
    "(64 to 1M rays) beside the single-ray path and Embree's; the inner loops per item.\n"
    "\n"
    "  -j, --json FILE   also write the figures as JSON\n"
    "  -q, --quick       small sizes (a smoke test, or an emulator; figures mean little)\n"
    "  -h, --help        this help\n"
    "\n"
    "JSON: {\"tool\", \"version\", \"backend\", \"simd_width\", \"cpu_features\", \"tsc\",\n"
    " \"kernels\": [{kernel, parallel, width, ns_per_test, cycles_per_test (null without a TSC)}],\n"
    " \"raycast\": [{scene, triangles, rays, query, path, batch, count, mrays_per_s}],\n"
    " \"loops\": [{loop, unit, size (items in the measured call), ns (per item)}]}\n";

typedef struct kernel_row {
    const char* kernel;
    int parallel, width;
    double ns, cycles;
} kernel_row;

typedef struct ray_point {
    const char* path;
    uint32_t batch;
    double mrays;
} ray_point;

typedef struct loop_row {
    char loop[96];
    const char* unit;
    uint32_t size; /* the items of the measured call: rays, boxes */
    double ns;
} loop_row;

typedef uint64_t (*kernel_pass)(const kernel_scene*, int);

/* Best of three timed runs of enough passes to fill min_s each: seconds and ticks per pass. */
static void time_pass(kernel_pass pass, const kernel_scene* s, int width, double min_s, double* sec, double* ticks) {
    *sec = 1e30, *ticks = 1e30;
    for (int round = 0; round < 3; round++) {
        uint32_t passes = 0;
        volatile uint64_t sink = 0;
        double t0 = tool_now();
        uint64_t c0 = tool_ticks();
        double dt;
        do {
            sink += pass(s, width);
            passes++;
            dt = tool_now() - t0;
        } while (dt < min_s);
        uint64_t c1 = tool_ticks();
        (void)sink;
        if (dt / passes < *sec) *sec = dt / passes, *ticks = (double)(c1 - c0) / passes;
    }
}

static int write_json(const char* path, const kernel_row* k, uint32_t nk, const tool_scene* s, uint32_t count,
                      const ray_point* r, uint32_t nr, const loop_row* l, uint32_t nl) {
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "volley profile: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(f, "{\n  \"tool\": \"volley profile\",\n  \"version\": ");
    tool_json_string(f, vl_get_version_string());
    fprintf(f, ",\n  \"backend\": ");
    tool_json_string(f, vl_get_simd_backend());
    fprintf(f, ",\n  \"simd_width\": %u,\n  \"cpu_features\": ", vl_get_simd_width());
    tool_json_string(f, tool_cpu_features());
    fprintf(f, ",\n  \"tsc\": %s,\n  \"kernels\": [", tool_has_ticks() ? "true" : "false");
    for (uint32_t i = 0; i < nk; i++) {
        fprintf(f, "%s\n    {\"kernel\": \"%s\", \"parallel\": %d, \"width\": %d, \"ns_per_test\": %.5f, ",
                i ? "," : "", k[i].kernel, k[i].parallel, k[i].width, k[i].ns);
        if (tool_has_ticks()) fprintf(f, "\"cycles_per_test\": %.5f}", k[i].cycles);
        else fprintf(f, "\"cycles_per_test\": null}");
    }
    fprintf(f, "\n  ],\n  \"raycast\": [");
    for (uint32_t i = 0; i < nr; i++) {
        fprintf(f, "%s\n    {\"scene\": ", i ? "," : "");
        tool_json_string(f, s->name);
        fprintf(f,
                ", \"triangles\": %u, \"rays\": \"random\", \"query\": \"closest\", \"path\": \"%s\", \"batch\": %u, "
                "\"count\": %u, \"mrays_per_s\": %.4f}",
                s->mesh.triangle_count, r[i].path, r[i].batch, count, r[i].mrays);
    }
    fprintf(f, "\n  ],\n  \"loops\": [");
    for (uint32_t i = 0; i < nl; i++) {
        fprintf(f, "%s\n    {\"loop\": ", i ? "," : "");
        tool_json_string(f, l[i].loop);
        fprintf(f, ", \"unit\": \"%s\", \"size\": %u, \"ns\": %.3f}", l[i].unit, l[i].size, l[i].ns);
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "volley profile: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

int tool_profile(int argc, char** argv) {
    static const struct option options[] = {{"json", required_argument, NULL, 'j'},
                                            {"quick", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char* json = NULL;
    int quick = 0, c;
    while ((c = getopt_long(argc, argv, ":j:qh", options, NULL)) != -1) {
        switch (c) {
        case 'j': json = optarg; break;
        case 'q': quick = 1; break;
        case 'h': fputs(profile_usage, stdout); return TOOL_EXIT_OK;
        default: return tool_bad_option("profile", argv, optopt);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "volley profile: takes no file, got '%s'\nTry 'volley profile --help'.\n", argv[optind]);
        return TOOL_EXIT_USAGE;
    }
    if (json && !tool_writable("profile", json)) return TOOL_EXIT_FAIL;
    printf("volley %s, SIMD backend %s (%u lanes), CPU features: %s\n", vl_get_version_string(), vl_get_simd_backend(),
           vl_get_simd_width(), tool_cpu_features());
    tool_progress p;
    tool_progress_start(&p, "profiling");

    /* Kernels: one ray against SoA boxes in L1, one box against SoA rays, box against boxes. */
    const uint32_t nboxes = quick ? 256 : 1024, nrays = quick ? 64 : 256;
    const double min_s = quick ? 0.005 : 0.05;
    static const struct {
        const char* name;
        kernel_pass pass;
        int parallel;
    } kernels[] = {{"ray_vs_boxes", kernel_ray_vs_boxes, 0}, {"ray_vs_boxes", kernel_ray_vs_boxes, 1},
                   {"rays_vs_box", kernel_rays_vs_box, 0},   {"rays_vs_box", kernel_rays_vs_box, 1},
                   {"box_vs_boxes", kernel_box_vs_boxes, 0}};
    static const int widths[3] = {1, 4, 8};
    kernel_row krows[15];
    uint32_t nk = 0;
    int rc = 0;
    printf("\n%-14s %-9s %6s %12s %14s\n", "kernel", "rays", "width", "ns/test", "cycles/test");
    for (uint32_t k = 0; k < sizeof kernels / sizeof kernels[0] && !rc; k++) {
        int box_box = kernels[k].pass == kernel_box_vs_boxes;
        kernel_scene* ks = kernel_scene_create(nboxes, box_box ? 1 : nrays, kernels[k].parallel);
        if (!ks) {
            fprintf(stderr, "volley profile: out of memory\n");
            return TOOL_EXIT_FAIL;
        }
        double tests = box_box ? (double)nboxes * nboxes : (double)kernel_scene_tests(ks);
        uint64_t expected = kernels[k].pass(ks, 1);
        for (int w = 0; w < 3; w++) {
            if (kernels[k].pass(ks, widths[w]) != expected) {
                fprintf(stderr, "volley profile: %s width %d disagrees with the scalar path (a bug in volley)\n",
                        kernels[k].name, widths[w]);
                rc = 1;
                break;
            }
            double sec, ticks;
            time_pass(kernels[k].pass, ks, widths[w], min_s, &sec, &ticks);
            kernel_row* r = &krows[nk++];
            r->kernel = kernels[k].name, r->parallel = kernels[k].parallel, r->width = widths[w];
            r->ns = 1e9 * sec / tests, r->cycles = ticks / tests;
            char cyc[32] = "-";
            if (tool_has_ticks()) snprintf(cyc, sizeof cyc, "%.3f", r->cycles);
            printf("%-14s %-9s %6d %12.4f %14s\n", r->kernel, box_box ? "-" : r->parallel ? "parallel" : "general",
                   r->width, r->ns, cyc);
            tool_progress_update(&p, -1);
        }
        kernel_scene_destroy(ks);
    }
    if (rc) {
        tool_progress_done(&p);
        return TOOL_EXIT_FAIL;
    }
    if (tool_has_ticks()) printf("(cycles: time-stamp counter ticks, the nominal clock)\n");

    /* Raycast throughput against batch size: the world, random rays, closest hit. */
    tool_scene s;
    if (tool_scene_world(quick, &s)) return TOOL_EXIT_FAIL;
    vl_bvh* bvh = tool_build("profile", &s, NULL);
    const uint32_t count = quick ? 16384 : (1u << 20);
    vl_ray* rays = malloc(sizeof(vl_ray) * count);
    vl_hit* hits = malloc(sizeof(vl_hit) * count);
    if (!bvh || !rays || !hits) {
        if (bvh) fprintf(stderr, "volley profile: out of memory\n");
        free(rays), free(hits), vl_bvh_destroy(bvh), tool_scene_free(&s);
        return TOOL_EXIT_FAIL;
    }
    scene_rays_random(&s.mesh, count, 1001, rays);
    ray_point points[16];
    uint32_t np = 0;
    printf("\nraycast, %s (%u triangles), %u random rays, closest hit:\n%-14s %8s %10s %10s\n", s.name,
           s.mesh.triangle_count, count, "path", "batch", "Mrays/s", "ns/ray");
    const uint32_t repeat = quick ? 1 : 3;
    for (uint32_t batch = 64; batch <= count; batch *= 4) {
        double best = 1e30;
        for (uint32_t r = 0; r <= repeat; r++) { /* the first run warms up */
            double t0 = tool_now();
            for (uint32_t i = 0; i < count; i += batch)
                vl_bvh_raycast(bvh, rays + i, count - i < batch ? count - i : batch, VL_QUERY_CLOSEST, hits + i, NULL);
            double dt = tool_now() - t0;
            if (r) best = dt < best ? dt : best;
        }
        points[np++] = (ray_point){"volley_batch", batch, 1e-6 * count / best};
        if (batch < count && batch * 4 > count) batch = count / 4; /* end on the whole set */
        tool_progress_update(&p, -1);
    }
    double best = 1e30;
    for (uint32_t r = 0; r <= repeat; r++) {
        double t0 = tool_now();
        for (uint32_t i = 0; i < count; i++) vl_bvh_raycast1(bvh, &rays[i], VL_QUERY_CLOSEST, &hits[i]);
        double dt = tool_now() - t0;
        if (r) best = dt < best ? dt : best;
    }
    points[np++] = (ray_point){"volley_single", 1, 1e-6 * count / best};
    tool_peer* embree = tool_embree_create(&s.mesh, NULL);
    if (embree) {
        best = 1e30;
        for (uint32_t r = 0; r <= repeat; r++) {
            double t0 = tool_now();
            tool_embree_trace(embree, rays, count, 0);
            double dt = tool_now() - t0;
            if (r) best = dt < best ? dt : best;
        }
        points[np++] = (ray_point){"embree_loop", 1, 1e-6 * count / best};
        tool_embree_destroy(embree);
    }
    for (uint32_t i = 0; i < np; i++)
        printf("%-14s %8u %10.2f %10.1f\n", points[i].path, points[i].batch, points[i].mrays, 1e3 / points[i].mrays);

    /* Inner loops per item. */
    loop_row loops[16];
    uint32_t nl = 0;
    for (uint32_t i = 0; i < np; i++) {
        if (!strcmp(points[i].path, "volley_batch") && points[i].batch != 1024) continue;
        loop_row* l = &loops[nl++];
        if (!strcmp(points[i].path, "volley_batch"))
            snprintf(l->loop, sizeof l->loop, "raycast, batches of 1024, per ray");
        else
            snprintf(l->loop, sizeof l->loop, "raycast, %s, per ray", points[i].path);
        l->unit = "ray", l->size = count, l->ns = 1e3 / points[i].mrays;
    }
    {
        const uint32_t nbox = quick ? 2048 : 16384;
        vl_aabb* boxes = malloc(sizeof(vl_aabb) * nbox);
        vl_pair_buffer pairs = {0};
        if (boxes) {
            test_rng rng = {99};
            float side = 2.4f * cbrtf((float)nbox);
            for (uint32_t i = 0; i < nbox; i++)
                for (int a = 0; a < 3; a++) {
                    float h = test_float(&rng, 0.2f, 0.8f), cc = test_float(&rng, h, side - h);
                    boxes[i].min[a] = cc - h, boxes[i].max[a] = cc + h;
                }
            best = 1e30;
            for (uint32_t r = 0; r < 3 * repeat; r++) {
                pairs.count = 0;
                double t0 = tool_now();
                vl_box_prune(boxes, nbox, &pairs, NULL);
                double dt = tool_now() - t0;
                best = dt < best ? dt : best;
            }
            loop_row* l = &loops[nl++];
            snprintf(l->loop, sizeof l->loop, "box pruning, per box");
            l->unit = "box", l->size = nbox, l->ns = 1e9 * best / nbox;
        }
        free(boxes);
        vl_pair_buffer_free(&pairs);
    }
    const uint32_t nbp = quick ? 1024 : 8192;
    for (uint32_t k = 0; k < tool_broadphase_kind_count && nl < 16; k++) {
        double us;
        uint32_t pairs;
        if (tool_broadphase_run(tool_broadphase_kinds[k].kind, nbp, 10, 0, quick ? 5 : 40, &us, &pairs)) continue;
        loop_row* l = &loops[nl++];
        snprintf(l->loop, sizeof l->loop, "broadphase %s, 10%% of the boxes moving, frame per moving box",
                 tool_broadphase_kinds[k].name);
        l->unit = "moving box", l->size = nbp, l->ns = 1e3 * us / (nbp / 10);
        tool_progress_update(&p, -1);
    }
    tool_progress_done(&p);
    printf("\n%-70s %8s %10s\n", "loop", "items", "ns");
    for (uint32_t i = 0; i < nl; i++) printf("%-70s %8u %10.1f\n", loops[i].loop, loops[i].size, loops[i].ns);

    if (json) {
        rc = write_json(json, krows, nk, &s, count, points, np, loops, nl);
        if (!rc) printf("\nwrote %s\n", json);
    }
    free(rays), free(hits);
    vl_bvh_destroy(bvh);
    tool_scene_free(&s);
    return rc ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
}
