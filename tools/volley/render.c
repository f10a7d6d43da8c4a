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
#include <strings.h>

#include "tool.h"

#define RENDER_CHUNK 65536u /* rays per vl_bvh_raycast call */

static const char render_usage[] =
    "Usage: volley render [MESH] [-o FILE] [options]\n"
    "Renders MESH (OBJ, PLY, STL, glTF, OFF... anything assimp reads), or the procedural world, or\n"
    "the bunny, with batched rays: closest-hit primary rays, then ambient occlusion with any-hit\n"
    "rays from the hit points. Writes a PNG and prints the rays per second of each pass.\n"
    "\n"
    "  -o, --output FILE     the PNG to write, a name ending in .png (default render.png); checked\n"
    "                        before any work\n"
    "  -W, --width N         image width in pixels (default 960)\n"
    "  -H, --height N        image height in pixels (default 540)\n"
    "  -s, --scene NAME      world (default) or bunny, when no MESH is given\n"
    "  -a, --ao-samples N    ambient-occlusion rays per pixel, 0 to 64 (default 8)\n"
    "  -u, --up AXIS         the mesh's up axis: x, y, z, -x, -y or -z (default y; z for STL files)\n"
    "  -v, --view AZ,EL      camera azimuth around the up axis and elevation above the horizon, in\n"
    "                        degrees (default 25,18: from the front, a little right and above); the\n"
    "                        camera backs off until the whole mesh fits the picture\n"
    "  -e, --eye X,Y,Z       the camera's position instead (45-degree vertical field of view)\n"
    "  -t, --target X,Y,Z    the point it looks at (default the centre of the mesh's bounds)\n"
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

/* How the picture is taken: the mesh's up axis and either a view direction or an eye. */
typedef struct view_opts {
    int up_axis, up_sign;      /* 0, 1, 2 and +1 or -1 */
    float azimuth, elevation;  /* degrees */
    int has_eye, has_target;
    vec3 eye, target;
} view_opts;

static vec3 axis_vec(int axis, float sign) {
    vec3 v = v3(0, 0, 0);
    if (axis == 0) v.x = sign;
    else if (axis == 1) v.y = sign;
    else v.z = sign;
    return v;
}

/* The up axis, the axis to the right of a viewer in front of the mesh, and the front (towards
 * that viewer): +y up looks from +z, +z up from -y, as modelling tools show a front view. */
static void view_basis(const view_opts* o, vec3* up, vec3* right, vec3* front) {
    *up = axis_vec(o->up_axis, (float)o->up_sign);
    *right = axis_vec(o->up_axis == 0 ? 1 : 0, 1.0f);
    *front = cross(*right, *up);
}

static void camera_axes(camera* c, vec3 target, vec3 world_up) {
    c->forward = norm(sub(target, c->eye));
    vec3 r = cross(c->forward, world_up);
    if (dot(r, r) < 1e-12f) r = cross(c->forward, v3(world_up.y, world_up.z, world_up.x)); /* looking straight up or down */
    c->right = norm(r);
    c->up = cross(c->right, c->forward);
}

static camera make_camera(const tool_scene* s, const view_opts* o, float aspect) {
    const scene_mesh* m = &s->mesh;
    camera c;
    c.tan_half = tanf(0.5f * 45.0f * 3.14159265f / 180.0f);
    vec3 up, right, front;
    view_basis(o, &up, &right, &front);
    vec3 lo = v3(m->lo[0], m->lo[1], m->lo[2]), hi = v3(m->hi[0], m->hi[1], m->hi[2]);
    vec3 target = o->has_target ? o->target : scale(add(lo, hi), 0.5f);
    if (o->has_eye) {
        c.eye = o->eye;
        camera_axes(&c, target, up);
        return c;
    }
    if (s->is_world && o->azimuth < -1e29f) {
        /* a view along the ground of the world, from a corner over the terrain */
        float size = m->hi[0] - m->lo[0];
        float x0 = m->lo[0] + 0.05f * size, z0 = m->lo[2] + 0.05f * size;
        c.eye = v3(x0, scene_height(x0, z0) + 0.03f * size, z0);
        target = v3(x0 + 0.12f * size, scene_height(x0 + 0.12f * size, z0 + 0.08f * size), z0 + 0.08f * size);
        camera_axes(&c, target, v3(0, 1, 0));
        return c;
    }
    float az = (o->azimuth < -1e29f ? 25.0f : o->azimuth) * 3.14159265f / 180.0f;
    float el = (o->azimuth < -1e29f ? 18.0f : o->elevation) * 3.14159265f / 180.0f;
    vec3 toward_eye = add(scale(add(scale(front, cosf(az)), scale(right, sinf(az))), cosf(el)), scale(up, sinf(el)));
    toward_eye = norm(toward_eye);
    c.eye = add(target, toward_eye);
    camera_axes(&c, target, up);
    /* Back off until every vertex lies inside the picture with a margin: a vertex at offset q from
     * the target, seen from target + d * toward_eye, is at depth d + q.forward and must satisfy
     * |q.right| <= tan_x * depth and |q.up| <= tan_y * depth. Then move the camera sideways so that
     * the mesh's picture is centred, and back off again. */
    const float margin = 1.06f;
    float tan_y = c.tan_half / margin, tan_x = c.tan_half * aspect / margin;
    vec3 extent = sub(hi, lo);
    float diag = sqrtf(dot(extent, extent));
    for (int pass = 0; pass < 3; pass++) {
        float d = 0;
        for (uint32_t i = 0; i < m->vertex_count; i++) {
            vec3 q = sub(vert(m, i), target);
            float need = fmaxf(fabsf(dot(q, c.right)) / tan_x, fabsf(dot(q, c.up)) / tan_y) - dot(q, c.forward);
            d = fmaxf(d, need);
        }
        d = fmaxf(d, 1e-3f * diag + 1e-30f);
        c.eye = add(target, scale(toward_eye, d));
        if (pass == 2) break;
        float x0 = 1e30f, x1 = -1e30f, y0 = 1e30f, y1 = -1e30f;
        for (uint32_t i = 0; i < m->vertex_count; i++) {
            vec3 q = sub(vert(m, i), c.eye);
            float z = fmaxf(dot(q, c.forward), 1e-30f), x = dot(q, c.right) / z, y = dot(q, c.up) / z;
            x0 = fminf(x0, x), x1 = fmaxf(x1, x), y0 = fminf(y0, y), y1 = fmaxf(y1, y);
        }
        target = add(target, add(scale(c.right, 0.5f * (x0 + x1) * d), scale(c.up, 0.5f * (y0 + y1) * d)));
    }
    return c;
}

/* Traces rays in batches of RENDER_CHUNK; returns the seconds spent in vl_bvh_raycast. */
static double trace(const vl_bvh* bvh, const vl_ray* rays, uint32_t count, uint32_t flags, vl_hit* hits,
                    tool_progress* p, double done, double share) {
    double spent = 0;
    for (uint32_t i = 0; i < count; i += RENDER_CHUNK) {
        uint32_t n = count - i < RENDER_CHUNK ? count - i : RENDER_CHUNK;
        double t0 = tool_now();
        vl_bvh_raycast(bvh, rays + i, n, flags, hits + i, NULL);
        spent += tool_now() - t0;
        tool_progress_update(p, done + share * (double)(i + n) / count);
    }
    return spent;
}

#ifdef VOLLEY_TOOL_PROFILE_ONLY
static int write_png(FILE* f, const char* path, const uint8_t* rgb, uint32_t w, uint32_t h) {
    (void)rgb, (void)w, (void)h;
    fclose(f);
    fprintf(stderr, "volley render: cannot write '%s': this volley was built without libpng\n", path);
    return 1;
}
#else
/* Writes the picture to f, opened on `path` before the work; closes f. */
static int write_png(FILE* f, const char* path, const uint8_t* rgb, uint32_t w, uint32_t h) {
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

/* Parses "A,B" (n == 2) or "X,Y,Z" (n == 3) finite numbers; prints the usage error and returns 0 otherwise. */
static int parse_floats(const char* option, const char* text, int n, float* out) {
    const char* p = text;
    for (int i = 0; i < n; i++) {
        char* end = NULL;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || !isfinite(v) || (i < n - 1 ? *end != ',' : *end != '\0')) {
            fprintf(stderr, "volley render: %s wants %s, got '%s'\n", option, n == 2 ? "AZ,EL in degrees" : "X,Y,Z",
                    text);
            return 0;
        }
        out[i] = (float)v;
        p = end + 1;
    }
    return 1;
}

static int parse_up(const char* text, view_opts* o) {
    const char* a = text;
    o->up_sign = 1;
    if (*a == '+' || *a == '-') o->up_sign = *a++ == '-' ? -1 : 1;
    if ((*a == 'x' || *a == 'y' || *a == 'z' || *a == 'X' || *a == 'Y' || *a == 'Z') && a[1] == '\0') {
        o->up_axis = (*a | 0x20) - 'x';
        return 1;
    }
    fprintf(stderr, "volley render: --up wants x, y, z, -x, -y or -z, got '%s'\n", text);
    return 0;
}

/* Whether `name` ends in `ext` (with its dot), whatever the case. */
static int has_extension(const char* name, const char* ext) {
    size_t n = strlen(name), e = strlen(ext);
    return n > e && strcasecmp(name + n - e, ext) == 0;
}

/* Opens the output before any work, so that a wrong name or an unwritable place fails at once:
 * only PNG is written, and the file must be creatable. NULL (and the message) otherwise. */
static FILE* open_output(const char* path, int* rc) {
    if (!has_extension(path, ".png")) {
        const char* dot = strrchr(path, '.');
        const char* slash = strrchr(path, '/');
        if (dot && (!slash || dot > slash))
            fprintf(stderr, "volley render: cannot write '%s': volley render writes PNG only, not %s (name the output *.png)\n",
                    path, dot);
        else
            fprintf(stderr, "volley render: cannot write '%s': the output must be a PNG with a name ending in .png\n", path);
        fprintf(stderr, "Try 'volley render --help'.\n");
        *rc = TOOL_EXIT_USAGE;
        return NULL;
    }
#ifdef VOLLEY_TOOL_PROFILE_ONLY
    fprintf(stderr, "volley render: cannot write '%s': this volley was built without libpng\n", path);
    *rc = TOOL_EXIT_FAIL;
    return NULL;
#else
    FILE* f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "volley render: cannot write '%s': %s\n", path, strerror(errno));
        *rc = TOOL_EXIT_FAIL;
    }
    return f;
#endif
}

int tool_render(int argc, char** argv) {
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'}, {"width", required_argument, NULL, 'W'},
        {"height", required_argument, NULL, 'H'}, {"scene", required_argument, NULL, 's'},
        {"ao-samples", required_argument, NULL, 'a'}, {"quick", no_argument, NULL, 'q'},
        {"up", required_argument, NULL, 'u'},     {"view", required_argument, NULL, 'v'},
        {"eye", required_argument, NULL, 'e'},    {"target", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    view_opts view = {1, 1, -1e30f, 0, 0, 0, {0, 0, 0}, {0, 0, 0}};
    int up_given = 0;
    float f3[3];
    const char* out_path = "render.png";
    const char* scene_name = NULL;
    uint32_t width = 960, height = 540, ao = 8;
    int quick = 0, c;
    while ((c = getopt_long(argc, argv, ":o:W:H:s:a:u:v:e:t:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case 'W': if (!tool_parse_u32("render", "--width", optarg, 1, 16384, &width)) return TOOL_EXIT_USAGE; break;
        case 'H': if (!tool_parse_u32("render", "--height", optarg, 1, 16384, &height)) return TOOL_EXIT_USAGE; break;
        case 'a': if (!tool_parse_u32("render", "--ao-samples", optarg, 0, 64, &ao)) return TOOL_EXIT_USAGE; break;
        case 's': scene_name = optarg; break;
        case 'q': quick = 1; break;
        case 'u': if (!parse_up(optarg, &view)) return TOOL_EXIT_USAGE; up_given = 1; break;
        case 'v':
            if (!parse_floats("--view", optarg, 2, f3)) return TOOL_EXIT_USAGE;
            if (f3[1] < -90.0f || f3[1] > 90.0f) {
                fprintf(stderr, "volley render: --view wants an elevation from -90 to 90 degrees, got '%s'\n", optarg);
                return TOOL_EXIT_USAGE;
            }
            view.azimuth = f3[0], view.elevation = fmaxf(-89.9f, fminf(89.9f, f3[1]));
            break;
        case 'e': if (!parse_floats("--eye", optarg, 3, f3)) return TOOL_EXIT_USAGE; view.has_eye = 1, view.eye = v3(f3[0], f3[1], f3[2]); break;
        case 't': if (!parse_floats("--target", optarg, 3, f3)) return TOOL_EXIT_USAGE; view.has_target = 1, view.target = v3(f3[0], f3[1], f3[2]); break;
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
    if (!up_given && mesh_path && has_extension(mesh_path, ".stl")) view.up_axis = 2; /* STL: mostly CAD, z up */
    int rc = 0;
    FILE* out_file = open_output(out_path, &rc);
    if (!out_file) return rc;
    tool_scene s;
    rc = tool_scene_pick("render", mesh_path, scene_name, quick, &s);
    if (rc) {
        fclose(out_file), remove(out_path);
        return rc;
    }
    if (s.is_world && up_given && !(view.up_axis == 1 && view.up_sign == 1)) {
        fputs("volley render: the procedural world is y-up; --up ignored\n", stderr);
        view.up_axis = 1, view.up_sign = 1;
    }
    double build_s = 0;
    vl_bvh* bvh = tool_build("render", &s, &build_s);
    if (!bvh) {
        tool_scene_free(&s);
        fclose(out_file), remove(out_path);
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
        fclose(out_file), remove(out_path);
        return TOOL_EXIT_FAIL;
    }

    float aspect = (float)width / (float)height;
    camera cam = make_camera(&s, &view, aspect);
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
    double primary_s = trace(bvh, rays, pixels, VL_QUERY_CLOSEST, hits, &p, 0.0, ao ? 0.1 : 1.0);

    /* Shading: Lambert from one light, ambient occlusion, distance fog to the sky. */
    vec3 extent = v3(m->hi[0] - m->lo[0], m->hi[1] - m->lo[1], m->hi[2] - m->lo[2]);
    float diag = sqrtf(dot(extent, extent));
    float ao_radius = s.is_world ? 6.0f : 0.08f * diag;
    /* fog only for the view along the world's ground, where the far hills fade into the sky */
    int ground_view = s.is_world && view.azimuth < -1e29f && !view.has_eye;
    float fog_distance = ground_view ? 0.35f * diag : 1e30f;
    vec3 up_axis, right_axis, front_axis;
    view_basis(&view, &up_axis, &right_axis, &front_axis);
    vec3 light = norm(add(add(scale(right_axis, 0.5f), scale(up_axis, 0.8f)), scale(front_axis, 0.35f)));
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
            ao_s += trace(bvh, ao_buf, n, VL_QUERY_ANY, ao_hits, &p, 0.1 + 0.9 * (double)first / pixels, 0.0);
            ao_rays += n;
        }
        tool_progress_update(&p, ao ? 0.1 + 0.9 * (double)last / pixels : 1.0);
        uint32_t k = 0;
        for (uint32_t i = first; i < last; i++) {
            const vl_hit* h = &hits[i];
            vec3 dir = v3(rays[i].dir[0], rays[i].dir[1], rays[i].dir[2]);
            float rise = fmaxf(dot(dir, up_axis), 0.0f);
            vec3 sky = add(scale(v3(0.62f, 0.74f, 0.92f), 1.0f - 0.5f * rise), scale(v3(0.25f, 0.35f, 0.6f), 0.5f * rise));
            vec3 col = sky;
            if (h->prim != VL_NO_HIT) {
                const uint32_t* t = m->indices + 3 * (size_t)h->prim;
                vec3 p0 = vert(m, t[0]), nrm = norm(cross(sub(vert(m, t[1]), p0), sub(vert(m, t[2]), p0)));
                if (dot(nrm, dir) > 0) nrm = scale(nrm, -1.0f);
                float occluded = 0;
                for (uint32_t j = 0; j < ao; j++, k++) occluded += ao_hits[k].prim != VL_NO_HIT;
                float open = ao ? 1.0f - occluded / (float)ao : 1.0f;
                vec3 albedo = v3(0.78f, 0.74f, 0.68f);
                if (s.is_world) {
                    /* terrain green; the objects by the way they face: walls warm, tops pale */
                    float top = fmaxf(dot(nrm, up_axis), 0.0f);
                    albedo = h->prim < s.terrain_triangles
                                 ? v3(0.45f, 0.58f, 0.32f)
                                 : add(scale(v3(0.85f, 0.55f, 0.35f), 1.0f - top), scale(v3(0.80f, 0.78f, 0.74f), top));
                }
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
    rc = write_png(out_file, out_path, rgb, width, height);
    if (!rc) printf("wrote %s (%ux%u)\n", out_path, width, height);
    else remove(out_path);
    free(rays), free(ao_buf), free(hits), free(ao_hits), free(shade), free(rgb);
    vl_bvh_destroy(bvh);
    tool_scene_free(&s);
    return rc ? TOOL_EXIT_FAIL : TOOL_EXIT_OK;
}
