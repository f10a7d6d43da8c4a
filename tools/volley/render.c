/* volley render: primary rays (closest hit), then ambient occlusion with any-hit rays from the hit
 * points, all traced in batches by vl_bvh_raycast, shaded and written as a PNG through libpng. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#ifndef VOLLEY_TOOL_PROFILE_ONLY
#include <png.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define RENDER_CHUNK 65536u /* rays per vl_bvh_raycast call */

static const char render_usage[] =
    "Usage: volley render [MESH] [-o FILE] [options]\n"
    "Renders MESH (OBJ, PLY, STL, glTF, OFF... anything assimp reads), or the procedural world, or\n"
    "the bunny, with batched rays: closest-hit primary rays, then ambient occlusion with any-hit\n"
    "rays from the hit points. Writes a PNG and prints the rays per second of each pass.\n"
    "\n"
    "  -o, --output FILE     the PNG to write (default render.png)\n"
    "  -W, --width N         image width in pixels (default 960)\n"
    "  -H, --height N        image height in pixels (default 540)\n"
    "  -s, --scene NAME      world (default) or bunny, when no MESH is given\n"
    "  -a, --ao-samples N    ambient-occlusion rays per pixel, 0 to 64 (default 8)\n"
    "  -q, --quick           a small world (with no MESH)\n"
    "  -h, --help            this help\n";

typedef struct vec3 {
    float x, y, z;
} vec3;

static vec3 v3(float x, float y, float z) { return (vec3){x, y, z}; }
static vec3 add(vec3 a, vec3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static vec3 sub(vec3 a, vec3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static vec3 scale(vec3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
static float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static vec3 cross(vec3 a, vec3 b) { return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
static vec3 norm(vec3 a) {
    float l = sqrtf(dot(a, a));
    return l > 0 ? scale(a, 1.0f / l) : v3(0, 1, 0);
}
static vec3 vert(const scene_mesh* m, uint32_t i) { return v3(m->xyz[3 * i], m->xyz[3 * i + 1], m->xyz[3 * i + 2]); }

typedef struct camera {
    vec3 eye, forward, right, up;
    float tan_half;
} camera;

static camera make_camera(const tool_scene* s) {
    const scene_mesh* m = &s->mesh;
    camera c;
    vec3 target;
    if (s->is_world) {
        /* a view along the ground of the world, from a corner over the terrain */
        float size = m->hi[0] - m->lo[0];
        float x0 = m->lo[0] + 0.05f * size, z0 = m->lo[2] + 0.05f * size;
        c.eye = v3(x0, scene_height(x0, z0) + 0.03f * size, z0);
        target = v3(x0 + 0.12f * size, scene_height(x0 + 0.12f * size, z0 + 0.08f * size), z0 + 0.08f * size);
    } else {
        vec3 lo = v3(m->lo[0], m->lo[1], m->lo[2]), hi = v3(m->hi[0], m->hi[1], m->hi[2]);
        target = scale(add(lo, hi), 0.5f);
        float radius = 0.5f * sqrtf(dot(sub(hi, lo), sub(hi, lo)));
        c.eye = add(target, scale(norm(v3(0.45f, 0.35f, 1.0f)), 2.0f * radius));
    }
    c.forward = norm(sub(target, c.eye));
    c.right = norm(cross(c.forward, v3(0, 1, 0)));
    c.up = cross(c.right, c.forward);
    c.tan_half = tanf(0.5f * 45.0f * 3.14159265f / 180.0f);
    return c;
}

/* Traces rays in batches of RENDER_CHUNK; returns the seconds spent in vl_bvh_raycast. */
static double trace(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                    tool_progress* p, double done, double share) {
    double spent = 0;
    for (uint32_t i = 0; i < count; i += RENDER_CHUNK) {
        uint32_t n = count - i < RENDER_CHUNK ? count - i : RENDER_CHUNK;
        double t0 = tool_now();
        vl_bvh_raycast(bvh, rays + i, n, flags, hits + i);
        spent += tool_now() - t0;
        tool_progress_update(p, done + share * (double)(i + n) / count);
    }
    return spent;
}

#ifdef VOLLEY_TOOL_PROFILE_ONLY
static int write_png(const char* path, const uint8_t* rgb, uint32_t w, uint32_t h) {
    (void)rgb, (void)w, (void)h;
    fprintf(stderr, "volley render: cannot write '%s': this volley was built without libpng\n", path);
    return 1;
}
#else
static int write_png(const char* path, const uint8_t* rgb, uint32_t w, uint32_t h) {
    FILE* f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "volley render: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        fprintf(stderr, "volley render: libpng failed writing '%s'\n", path);
        return 1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (uint32_t y = 0; y < h; y++) png_write_row(png, (png_const_bytep)(rgb + 3 * (size_t)w * y));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) {
        fprintf(stderr, "volley render: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}
#endif

static uint8_t to_byte(float v) {
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    return (uint8_t)(255.0f * powf(v, 1.0f / 2.2f) + 0.5f);
}

int tool_render(int argc, char** argv) {
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'}, {"width", required_argument, NULL, 'W'},
        {"height", required_argument, NULL, 'H'}, {"scene", required_argument, NULL, 's'},
        {"ao-samples", required_argument, NULL, 'a'}, {"quick", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    const char* out_path = "render.png";
    const char* scene_name = NULL;
    uint32_t width = 960, height = 540, ao = 8;
    int quick = 0, c;
    while ((c = getopt_long(argc, argv, ":o:W:H:s:a:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case 'W': if (!tool_parse_u32("render", "--width", optarg, 1, 16384, &width)) return TOOL_EXIT_USAGE; break;
        case 'H': if (!tool_parse_u32("render", "--height", optarg, 1, 16384, &height)) return TOOL_EXIT_USAGE; break;
        case 'a': if (!tool_parse_u32("render", "--ao-samples", optarg, 0, 64, &ao)) return TOOL_EXIT_USAGE; break;
        case 's': scene_name = optarg; break;
        case 'q': quick = 1; break;
        case 'h': fputs(render_usage, stdout); return TOOL_EXIT_OK;
        default: return tool_bad_option("render", argv, optopt);
        }
    }
    if (argc - optind > 1) {
        fprintf(stderr, "volley render: one mesh at most, got '%s' and '%s'\nTry 'volley render --help'.\n",
                argv[optind], argv[optind + 1]);
        return TOOL_EXIT_USAGE;
    }
    const char* mesh_path = optind < argc ? argv[optind] : NULL;
    tool_scene s;
    int rc = tool_scene_pick("render", mesh_path, scene_name, quick, &s);
    if (rc) return rc;
    double build_s = 0;
    vl_bvh* bvh = tool_build("render", &s, &build_s);
    if (!bvh) {
        tool_scene_free(&s);
        return TOOL_EXIT_FAIL;
    }
    printf("%s: %u triangles, tree built in %.1f ms\n", s.name, s.mesh.triangle_count, 1e3 * build_s);

    const scene_mesh* m = &s.mesh;
    const uint32_t pixels = width * height;
    const uint32_t block = ao ? (RENDER_CHUNK / ao) : RENDER_CHUNK; /* pixels per ambient-occlusion batch */
    vl_ray* rays = malloc(sizeof(vl_ray) * (size_t)pixels);
    vl_ray* ao_buf = malloc(sizeof(vl_ray) * RENDER_CHUNK);
    vl_hit* hits = malloc(sizeof(vl_hit) * (size_t)pixels);
    vl_hit* ao_hits = malloc(sizeof(vl_hit) * RENDER_CHUNK);
    float* shade = malloc(sizeof(float) * 3 * (size_t)pixels);
    uint8_t* rgb = malloc(3 * (size_t)pixels);
    if (!rays || !ao_buf || !hits || !ao_hits || !shade || !rgb) {
        fprintf(stderr, "volley render: out of memory for a %ux%u image\n", width, height);
        free(rays), free(ao_buf), free(hits), free(ao_hits), free(shade), free(rgb);
        vl_bvh_destroy(bvh);
        tool_scene_free(&s);
        return TOOL_EXIT_FAIL;
    }

    camera cam = make_camera(&s);
    float aspect = (float)width / (float)height;
    for (uint32_t y = 0; y < height; y++)
        for (uint32_t x = 0; x < width; x++) {
            float px = (2.0f * ((float)x + 0.5f) / (float)width - 1.0f) * cam.tan_half * aspect;
            float py = (1.0f - 2.0f * ((float)y + 0.5f) / (float)height) * cam.tan_half;
            vec3 d = norm(add(cam.forward, add(scale(cam.right, px), scale(cam.up, py))));
            vl_ray* r = &rays[(size_t)y * width + x];
            r->origin[0] = cam.eye.x, r->origin[1] = cam.eye.y, r->origin[2] = cam.eye.z;
            r->dir[0] = d.x, r->dir[1] = d.y, r->dir[2] = d.z;
            r->tmin = 0.0f, r->tmax = INFINITY;
        }
    tool_progress p;
    tool_progress_start(&p, "rendering");
    double primary_s = trace(bvh, rays, pixels, VL_RAY_CLOSEST, hits, &p, 0.0, ao ? 0.1 : 1.0);

    /* Shading: Lambert from one light, ambient occlusion, distance fog to the sky. */
    vec3 extent = v3(m->hi[0] - m->lo[0], m->hi[1] - m->lo[1], m->hi[2] - m->lo[2]);
    float diag = sqrtf(dot(extent, extent));
    float ao_radius = s.is_world ? 6.0f : 0.08f * diag;
    float fog_distance = s.is_world ? 0.35f * diag : 1e30f;
    vec3 light = norm(v3(0.5f, 0.8f, 0.35f));
    double ao_s = 0;
    uint64_t ao_rays = 0;
    test_rng rng = {12345};
    for (uint32_t first = 0; first < pixels; first += block) {
        uint32_t last = first + block < pixels ? first + block : pixels, n = 0;
        for (uint32_t i = first; i < last && ao; i++) {
            const vl_hit* h = &hits[i];
            if (h->prim == VL_NO_HIT) continue;
            const uint32_t* t = m->indices + 3 * (size_t)h->prim;
            vec3 p0 = vert(m, t[0]), nrm = norm(cross(sub(vert(m, t[1]), p0), sub(vert(m, t[2]), p0)));
            vec3 dir = v3(rays[i].dir[0], rays[i].dir[1], rays[i].dir[2]);
            if (dot(nrm, dir) > 0) nrm = scale(nrm, -1.0f);
            vec3 hit = add(v3(rays[i].origin[0], rays[i].origin[1], rays[i].origin[2]), scale(dir, h->t));
            vec3 o = add(hit, scale(nrm, 1e-4f * diag));
            for (uint32_t k = 0; k < ao; k++) {
                float d[3];
                scene_direction(&rng, d);
                vec3 a = norm(add(v3(d[0], d[1], d[2]), scale(nrm, 1.0001f))); /* cosine-weighted */
                vl_ray* r = &ao_buf[n++];
                r->origin[0] = o.x, r->origin[1] = o.y, r->origin[2] = o.z;
                r->dir[0] = a.x, r->dir[1] = a.y, r->dir[2] = a.z;
                r->tmin = 0.0f, r->tmax = ao_radius;
            }
        }
        if (n) {
            ao_s += trace(bvh, ao_buf, n, VL_RAY_ANY, ao_hits, &p, 0.1 + 0.9 * (double)first / pixels, 0.0);
            ao_rays += n;
        }
        tool_progress_update(&p, ao ? 0.1 + 0.9 * (double)last / pixels : 1.0);
        uint32_t k = 0;
        for (uint32_t i = first; i < last; i++) {
            const vl_hit* h = &hits[i];
            vec3 dir = v3(rays[i].dir[0], rays[i].dir[1], rays[i].dir[2]);
            vec3 sky = add(scale(v3(0.62f, 0.74f, 0.92f), 1.0f - 0.5f * fmaxf(dir.y, 0.0f)),
                           scale(v3(0.25f, 0.35f, 0.6f), 0.5f * fmaxf(dir.y, 0.0f)));
            vec3 col = sky;
            if (h->prim != VL_NO_HIT) {
                const uint32_t* t = m->indices + 3 * (size_t)h->prim;
                vec3 p0 = vert(m, t[0]), nrm = norm(cross(sub(vert(m, t[1]), p0), sub(vert(m, t[2]), p0)));
                if (dot(nrm, dir) > 0) nrm = scale(nrm, -1.0f);
                float occluded = 0;
                for (uint32_t j = 0; j < ao; j++, k++) occluded += ao_hits[k].prim != VL_NO_HIT;
                float open = ao ? 1.0f - occluded / (float)ao : 1.0f;
                vec3 albedo = v3(0.78f, 0.74f, 0.68f);
                if (s.is_world)
                    albedo = h->prim < s.terrain_triangles ? v3(0.45f, 0.58f, 0.32f)
                             : (h->prim & 1)               ? v3(0.85f, 0.55f, 0.35f)
                                                           : v3(0.75f, 0.75f, 0.78f);
                float lambert = fmaxf(dot(nrm, light), 0.0f);
                float lit = (0.18f + 0.82f * lambert) * (0.25f + 0.75f * open) + 0.12f * open;
                col = scale(albedo, lit);
                float fog = 1.0f - expf(-h->t / fog_distance);
                col = add(scale(col, 1.0f - fog), scale(sky, fog));
            }
            shade[3 * (size_t)i] = col.x, shade[3 * (size_t)i + 1] = col.y, shade[3 * (size_t)i + 2] = col.z;
        }
    }
    tool_progress_done(&p);
    for (size_t i = 0; i < 3 * (size_t)pixels; i++) rgb[i] = to_byte(shade[i]);

    printf("primary rays (closest hit, batches of %u): %u rays, %.2f Mrays/s\n", RENDER_CHUNK, pixels,
           primary_s > 0 ? 1e-6 * pixels / primary_s : 0.0);
    if (ao)
        printf("ambient occlusion (any hit, %u per pixel): %llu rays, %.2f Mrays/s\n", ao, (unsigned long long)ao_rays,
               ao_s > 0 ? 1e-6 * (double)ao_rays / ao_s : 0.0);
    rc = write_png(out_path, rgb, width, height);
    if (!rc) printf("wrote %s (%ux%u)\n", out_path, width, height);
    free(rays), free(ao_buf), free(hits), free(ao_hits), free(shade), free(rgb);
    vl_bvh_destroy(bvh);
    tool_scene_free(&s);
    return rc ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
}
