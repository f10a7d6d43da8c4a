/* Tests of the volley command-line tool: each subcommand on the embedded scenes and on a small
 * mesh written here in OBJ, PLY and STL; the PNG decodes to the asked size and is not blank; the
 * JSON parses and holds the documented fields; bad arguments, a missing file, a corrupt mesh and
 * an empty mesh each give a message and a non-zero exit, never a crash; a mesh of any orientation
 * (--up, --view, --eye) is framed whole and centred; a wrong output name or place fails at once.
 * Usage: test_tool PATH_TO_VOLLEY WORK_DIR */
#include <math.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned g_passed, g_failed;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static const char *g_tool, *g_dir;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (cond) {                                               \
            g_passed++;                                           \
        } else {                                                  \
            g_failed++;                                           \
            printf("test_tool: check failed (line %d): ", __LINE__); \
            printf(__VA_ARGS__);                                  \
            printf("\n");                                         \
        }                                                         \
    } while (0)

static char g_out[1 << 16], g_err[1 << 16];

static void slurp(const char* path, char* buf, size_t size) {
    buf[0] = '\0';
    FILE* f = fopen(path, "rb");
    if (!f) return;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs the tool with the given arguments (NULL-terminated); stdout and stderr land in g_out and
 * g_err. Returns the exit status, or -signal when it crashed. */
static int run(const char* first, ...) {
    const char* argv[32];
    int argc = 0;
    argv[argc++] = g_tool;
    va_list ap;
    va_start(ap, first);
    for (const char* a = first; a && argc < 31; a = va_arg(ap, const char*)) argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    char out_path[4096], err_path[4096];
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", g_dir);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", g_dir);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr)) _exit(127);
        execv(g_tool, (char* const*)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    slurp(out_path, g_out, sizeof g_out);
    slurp(err_path, g_err, sizeof g_err);
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return WEXITSTATUS(status);
}

static const char* path_in(const char* name) {
    static char buf[8][4096];
    static int next;
    char* p = buf[next++ & 7];
    snprintf(p, 4096, "%s/%s", g_dir, name);
    return p;
}

/* ---- a small mesh: a ground square, a box and a sphere on it (creases for the occlusion) ---- */

static float g_v[4096][3];
static unsigned g_t[8192][3], g_nv, g_nt;

static void make_mesh(void) {
    float ground[4][3] = {{-2, 0, -2}, {2, 0, -2}, {2, 0, 2}, {-2, 0, 2}};
    for (int i = 0; i < 4; i++) memcpy(g_v[g_nv++], ground[i], sizeof ground[i]);
    g_t[g_nt][0] = 0, g_t[g_nt][1] = 2, g_t[g_nt][2] = 1, g_nt++;
    g_t[g_nt][0] = 0, g_t[g_nt][1] = 3, g_t[g_nt][2] = 2, g_nt++;
    unsigned base = g_nv;
    for (int k = 0; k < 8; k++) {
        g_v[g_nv][0] = (k & 1) ? 0.0f : -1.2f;
        g_v[g_nv][1] = (k & 2) ? 1.0f : 0.0f;
        g_v[g_nv][2] = (k & 4) ? 0.6f : -0.6f;
        g_nv++;
    }
    static const unsigned faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                          {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (int f = 0; f < 12; f++, g_nt++)
        for (int c = 0; c < 3; c++) g_t[g_nt][c] = base + faces[f][c];
    base = g_nv;
    const int stacks = 10, slices = 16;
    for (int i = 0; i <= stacks; i++)
        for (int j = 0; j <= slices; j++) {
            float th = 3.14159265f * (float)i / stacks, ph = 6.2831853f * (float)j / slices;
            g_v[g_nv][0] = 0.9f + 0.7f * sinf(th) * cosf(ph);
            g_v[g_nv][1] = 0.7f + 0.7f * cosf(th);
            g_v[g_nv][2] = 0.3f + 0.7f * sinf(th) * sinf(ph);
            g_nv++;
        }
    for (int i = 0; i < stacks; i++)
        for (int j = 0; j < slices; j++) {
            unsigned a = base + (unsigned)(i * (slices + 1) + j), b = a + 1, c = a + (unsigned)slices + 1, d = c + 1;
            g_t[g_nt][0] = a, g_t[g_nt][1] = c, g_t[g_nt][2] = b, g_nt++;
            g_t[g_nt][0] = b, g_t[g_nt][1] = c, g_t[g_nt][2] = d, g_nt++;
        }
}

static void write_text(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

static void write_obj(const char* path) {
    FILE* f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "# a ground, a box and a sphere\n");
    for (unsigned i = 0; i < g_nv; i++) fprintf(f, "v %g %g %g\n", g_v[i][0], g_v[i][1], g_v[i][2]);
    for (unsigned i = 0; i < g_nt; i++) fprintf(f, "f %u %u %u\n", g_t[i][0] + 1, g_t[i][1] + 1, g_t[i][2] + 1);
    fclose(f);
}

static void write_ply(const char* path) {
    FILE* f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "ply\nformat ascii 1.0\nelement vertex %u\nproperty float x\nproperty float y\nproperty float z\n"
               "element face %u\nproperty list uchar int vertex_indices\nend_header\n", g_nv, g_nt);
    for (unsigned i = 0; i < g_nv; i++) fprintf(f, "%g %g %g\n", g_v[i][0], g_v[i][1], g_v[i][2]);
    for (unsigned i = 0; i < g_nt; i++) fprintf(f, "3 %u %u %u\n", g_t[i][0], g_t[i][1], g_t[i][2]);
    fclose(f);
}

static void write_stl(const char* path) {
    FILE* f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "solid scene\n");
    for (unsigned i = 0; i < g_nt; i++) {
        fprintf(f, " facet normal 0 0 0\n  outer loop\n");
        for (int c = 0; c < 3; c++) {
            const float* v = g_v[g_t[i][c]];
            fprintf(f, "   vertex %g %g %g\n", v[0], v[1], v[2]);
        }
        fprintf(f, "  endloop\n endfacet\n");
    }
    fprintf(f, "endsolid scene\n");
    fclose(f);
}

/* ---- PNG: decodes to the asked size, and its luminance varies (depth, occlusion) ---------- */

static void check_png(const char* path, unsigned w, unsigned h, const char* what) {
    FILE* f = fopen(path, "rb");
    CHECK(f != NULL, "%s: %s was not written", what, path);
    if (!f) return;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_bytep* rows = NULL;
    unsigned pw = 0, ph = 0;
    if (setjmp(png_jmpbuf(png))) {
        CHECK(0, "%s: %s does not decode as a PNG", what, path);
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        fclose(f);
        return;
    }
    png_init_io(png, f);
    png_read_png(png, info, PNG_TRANSFORM_STRIP_16 | PNG_TRANSFORM_PACKING | PNG_TRANSFORM_EXPAND, NULL);
    pw = png_get_image_width(png, info), ph = png_get_image_height(png, info);
    int channels = png_get_channels(png, info);
    CHECK(pw == w && ph == h, "%s: PNG is %ux%u, wanted %ux%u", what, pw, ph, w, h);
    png_bytepp r = png_get_rows(png, info);
    double sum = 0, sum2 = 0, n = 0;
    for (unsigned y = 0; y < ph; y++)
        for (unsigned x = 0; x < pw; x++) {
            const png_byte* p = r[y] + (size_t)x * (size_t)channels;
            double lum = channels >= 3 ? 0.3 * p[0] + 0.59 * p[1] + 0.11 * p[2] : p[0];
            sum += lum, sum2 += lum * lum, n++;
        }
    double mean = sum / n, var = sum2 / n - mean * mean;
    CHECK(var > 50.0, "%s: the picture is flat (luminance variance %.1f)", what, var);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
}

/* ---- JSON: a minimal syntax checker ----------------------------------------------------- */

static const char* js_ws(const char* p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

static const char* js_value(const char* p, int depth);

static const char* js_string(const char* p) {
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && !*++p) return NULL;
    return *p == '"' ? p + 1 : NULL;
}

static const char* js_value(const char* p, int depth) {
    p = js_ws(p);
    if (depth > 32 || !p) return NULL;
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int object = *p == '{';
        p = js_ws(p + 1);
        if (*p == close) return p + 1;
        for (;;) {
            if (object) {
                p = js_string(js_ws(p));
                if (!p) return NULL;
                p = js_ws(p);
                if (*p++ != ':') return NULL;
            }
            p = js_value(p, depth + 1);
            if (!p) return NULL;
            p = js_ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"') return js_string(p);
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    char* end = NULL;
    strtod(p, &end);
    return end && end != p ? end : NULL;
}

static int json_valid(const char* text) {
    const char* end = js_value(text, 0);
    return end && *js_ws(end) == '\0';
}

static void check_json(const char* path, const char* const* fields, const char* what) {
    static char buf[1 << 20];
    slurp(path, buf, sizeof buf);
    CHECK(buf[0] != '\0', "%s: %s is missing or empty", what, path);
    CHECK(json_valid(buf), "%s: %s does not parse as JSON", what, path);
    for (const char* const* f = fields; *f; f++) {
        char key[64];
        snprintf(key, sizeof key, "\"%s\":", *f);
        CHECK(strstr(buf, key) != NULL, "%s: no field %s in %s", what, *f, path);
    }
}

/* ---- the tests ------------------------------------------------------------------------------ */

static void expect_usage_error(const char* what, int rc) {
    CHECK(rc == 2, "%s: exit %d, wanted 2", what, rc);
    CHECK(strstr(g_err, "volley") != NULL && strlen(g_err) > 10, "%s: no message on stderr", what);
}

static void test_arguments(void) {
    int rc = run(NULL);
    expect_usage_error("no command", rc);
    rc = run("frobnicate", NULL);
    expect_usage_error("unknown command", rc);
    rc = run("--help", NULL);
    CHECK(rc == 0 && strstr(g_out, "render") && strstr(g_out, "bench") && strstr(g_out, "profile"),
          "volley --help: exit %d", rc);
    const char* cmds[3] = {"render", "bench", "profile"};
    for (int i = 0; i < 3; i++) {
        rc = run(cmds[i], "--help", NULL);
        char want[64];
        snprintf(want, sizeof want, "Usage: volley %s", cmds[i]);
        CHECK(rc == 0 && strstr(g_out, want), "volley %s --help: exit %d, output '%.80s'", cmds[i], rc, g_out);
        rc = run(cmds[i], "--no-such-option", NULL);
        expect_usage_error("unknown option", rc);
    }
    rc = run("render", "--width", "abc", NULL);
    expect_usage_error("render --width abc", rc);
    rc = run("render", "--width", "0", NULL);
    expect_usage_error("render --width 0", rc);
    rc = run("render", "--height", NULL);
    expect_usage_error("render --height with no value", rc);
    rc = run("render", "a.obj", "b.obj", NULL);
    expect_usage_error("render with two meshes", rc);
    rc = run("render", "--scene", "moon", NULL);
    expect_usage_error("render --scene moon", rc);
    rc = run("bench", "--rays", "sideways", NULL);
    expect_usage_error("bench --rays sideways", rc);
    rc = run("bench", "--batch", "-5", NULL);
    expect_usage_error("bench --batch -5", rc);
    rc = run("profile", "extra", NULL);
    expect_usage_error("profile extra", rc);
}

static void expect_mesh_error(const char* what, int rc, const char* must, const char* must_not) {
    CHECK(rc == 1, "%s: exit %d, wanted 1 (stderr: %.200s)", what, rc, g_err);
    CHECK(strstr(g_err, must) != NULL, "%s: stderr lacks '%s': %.200s", what, must, g_err);
    if (must_not) CHECK(strstr(g_err, must_not) == NULL, "%s: stderr says '%s': %.200s", what, must_not, g_err);
}

static void test_bad_meshes(void) {
    int rc = run("render", path_in("no-such-mesh.obj"), "-o", path_in("x.png"), NULL);
    expect_mesh_error("missing mesh", rc, "No such file", NULL);
    write_text(path_in("empty.obj"), "");
    rc = run("render", path_in("empty.obj"), "-o", path_in("x.png"), NULL);
    expect_mesh_error("empty OBJ (0 bytes)", rc, "empty", "No such file");
    write_text(path_in("novertices.ply"), "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                                          "property float z\nelement face 0\nproperty list uchar int vertex_indices\n"
                                          "end_header\n0 0 0\n1 0 0\n0 1 0\n");
    rc = run("render", path_in("novertices.ply"), "-o", path_in("x.png"), NULL);
    expect_mesh_error("PLY with no faces", rc, "empty", "No such file");
    write_text(path_in("points.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\n");
    rc = run("bench", path_in("points.obj"), "--quick", NULL);
    expect_mesh_error("OBJ with vertices only (bench)", rc, "empty", "No such file");
    write_text(path_in("corrupt.stl"), "solid x\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 zz\n");
    rc = run("render", path_in("corrupt.stl"), "-o", path_in("x.png"), NULL);
    expect_mesh_error("corrupt STL", rc, "cannot read mesh", "No such file");
    FILE* f = fopen(path_in("garbage.stl"), "wb");
    if (f) {
        for (int i = 0; i < 3000; i++) fputc((i * 7919) & 0xFF, f);
        fclose(f);
    }
    rc = run("render", path_in("garbage.stl"), "-o", path_in("x.png"), NULL);
    CHECK(rc == 1 && strlen(g_err) > 10 && !strstr(g_err, "No such file"), "garbage STL: exit %d, stderr %.200s", rc,
          g_err);
    rc = run("render", g_dir, "-o", path_in("x.png"), NULL);
    expect_mesh_error("a directory as the mesh", rc, "directory", NULL);
    rc = run("render", "--quick", "-W", "16", "-H", "16", "-o", path_in("no-such-dir/x.png"), NULL);
    expect_mesh_error("unwritable output", rc, "cannot write", NULL);
}

/* ---- framing: where the mesh lies in a picture -------------------------------------------- */

/* The bounds of the mesh's pixels in a PNG of volley render (the sky is blue, b > r; the mesh's
 * greys and shades are not): x0, y0, x1, y1 inclusive, and 0; or -1 when unreadable or no mesh. */
static int mesh_pixels(const char* path, int box[4]) {
    FILE* f = fopen(path, "rb");
    if (!f) return -1;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_read_png(png, info, PNG_TRANSFORM_STRIP_16 | PNG_TRANSFORM_PACKING | PNG_TRANSFORM_EXPAND, NULL);
    int w = (int)png_get_image_width(png, info), h = (int)png_get_image_height(png, info);
    int channels = png_get_channels(png, info);
    png_bytepp r = png_get_rows(png, info);
    box[0] = w, box[1] = h, box[2] = -1, box[3] = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w && channels >= 3; x++) {
            const png_byte* p = r[y] + (size_t)x * (size_t)channels;
            if (p[0] < p[2]) continue; /* sky */
            if (x < box[0]) box[0] = x;
            if (y < box[1]) box[1] = y;
            if (x > box[2]) box[2] = x;
            if (y > box[3]) box[3] = y;
        }
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    return box[2] >= 0 ? 0 : -1;
}

/* A pillar 1 x 1 x 5 standing on z = 0 (z up), far from the origin: an OBJ and an STL. */
static void write_pillar(const char* obj, const char* stl) {
    static const float c[8][3] = {{100, 200, 0}, {101, 200, 0}, {100, 201, 0}, {101, 201, 0},
                                  {100, 200, 5}, {101, 200, 5}, {100, 201, 5}, {101, 201, 5}};
    static const unsigned faces[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                          {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    FILE* f = fopen(obj, "w");
    if (f) {
        for (int i = 0; i < 8; i++) fprintf(f, "v %g %g %g\n", c[i][0], c[i][1], c[i][2]);
        for (int i = 0; i < 12; i++) fprintf(f, "f %u %u %u\n", faces[i][0] + 1, faces[i][1] + 1, faces[i][2] + 1);
        fclose(f);
    }
    f = fopen(stl, "w");
    if (f) {
        fprintf(f, "solid pillar\n");
        for (int i = 0; i < 12; i++) {
            fprintf(f, " facet normal 0 0 0\n  outer loop\n");
            for (int k = 0; k < 3; k++) fprintf(f, "   vertex %g %g %g\n", c[faces[i][k]][0], c[faces[i][k]][1], c[faces[i][k]][2]);
            fprintf(f, "  endloop\n endfacet\n");
        }
        fprintf(f, "endsolid pillar\n");
        fclose(f);
    }
}

/* The mesh fills the picture (its pixels span most of the width or the height) and is whole
 * (none touches the border); tall: its pixels span more height than width. */
static void check_framed(const char* png, unsigned w, unsigned h, int want_tall, const char* what) {
    int b[4];
    CHECK(mesh_pixels(png, b) == 0, "%s: no mesh in %s", what, png);
    if (b[2] < 0) return;
    int bw = b[2] - b[0] + 1, bh = b[3] - b[1] + 1;
    CHECK(b[0] > 0 && b[1] > 0 && b[2] < (int)w - 1 && b[3] < (int)h - 1,
          "%s: the mesh is cropped: pixels %d..%d x %d..%d of %ux%u", what, b[0], b[2], b[1], b[3], w, h);
    CHECK(bw >= (int)(0.75 * w) || bh >= (int)(0.75 * h), "%s: the mesh is small in the picture: %dx%d of %ux%u",
          what, bw, bh, w, h);
    int cx = b[0] + b[2], cy = b[1] + b[3]; /* twice the centre */
    CHECK(abs(cx - (int)w) <= (int)w / 8 && abs(cy - (int)h) <= (int)h / 8,
          "%s: the mesh is off centre: pixels %d..%d x %d..%d of %ux%u", what, b[0], b[2], b[1], b[3], w, h);
    if (want_tall >= 0)
        CHECK(want_tall ? bh > 2 * bw : bh < bw, "%s: the pillar should %s: %dx%d pixels", what,
              want_tall ? "stand" : "lie on its side", bw, bh);
}

static void test_render_view(void) {
    write_pillar(path_in("pillar.obj"), path_in("pillar.stl"));
    /* an OBJ is taken as y up: the z-up pillar lies on its side; --up z stands it up; an STL is z up */
    int rc = run("render", path_in("pillar.obj"), "-W", "120", "-H", "120", "-a", "0", "-o", path_in("lying.png"), NULL);
    CHECK(rc == 0, "render pillar.obj: exit %d: %.300s", rc, g_err);
    check_framed(path_in("lying.png"), 120, 120, 0, "pillar.obj, y up");
    rc = run("render", path_in("pillar.obj"), "--up", "z", "-W", "120", "-H", "120", "-a", "0", "-o", path_in("standing.png"), NULL);
    CHECK(rc == 0, "render pillar.obj --up z: exit %d: %.300s", rc, g_err);
    check_framed(path_in("standing.png"), 120, 120, 1, "pillar.obj --up z");
    rc = run("render", path_in("pillar.stl"), "-W", "120", "-H", "120", "-a", "0", "-o", path_in("stl.png"), NULL);
    CHECK(rc == 0, "render pillar.stl: exit %d: %.300s", rc, g_err);
    check_framed(path_in("stl.png"), 120, 120, 1, "pillar.stl (z up by default)");
    rc = run("render", path_in("pillar.obj"), "--up", "-x", "--view", "130,-40", "-W", "160", "-H", "90", "-a", "0",
             "-o", path_in("turned.png"), NULL);
    CHECK(rc == 0, "render --up -x --view 130,-40: exit %d: %.300s", rc, g_err);
    check_framed(path_in("turned.png"), 160, 90, -1, "pillar.obj --up -x --view 130,-40");
    /* the scene of ground, box and sphere, wide and narrow pictures */
    rc = run("render", path_in("scene.obj"), "-W", "200", "-H", "60", "-a", "0", "-o", path_in("wide.png"), NULL);
    check_framed(path_in("wide.png"), 200, 60, -1, "scene.obj, 200x60");
    rc = run("render", path_in("scene.obj"), "-W", "50", "-H", "150", "-a", "0", "-o", path_in("narrow.png"), NULL);
    check_framed(path_in("narrow.png"), 50, 150, -1, "scene.obj, 50x150");
    /* an eye and a target: looking down at the pillar's top from above, it shows as a small square */
    rc = run("render", path_in("pillar.obj"), "--eye", "100.5,200.5,40", "--target", "100.5,200.5,0", "-W", "100",
             "-H", "100", "-a", "0", "-o", path_in("above.png"), NULL);
    int b[4];
    CHECK(rc == 0 && mesh_pixels(path_in("above.png"), b) == 0 && b[2] - b[0] < 20 && b[3] - b[1] < 20 &&
              abs(b[0] + b[2] - 100) <= 4,
          "render --eye --target: exit %d, pixels %d..%d x %d..%d: %.200s", rc, b[0], b[2], b[1], b[3], g_err);

    /* arguments checked, and the output checked before any work */
    static const char* const bad[][2] = {{"--up", "w"}, {"--up", "+"}, {"--view", "10"}, {"--view", "10,95"},
                                         {"--eye", "1,2"}, {"--target", "a,b,c"}};
    for (int i = 0; i < 6; i++) {
        rc = run("render", path_in("pillar.obj"), bad[i][0], bad[i][1], "-o", path_in("bad.png"), NULL);
        char what[64];
        snprintf(what, sizeof what, "render %s %s", bad[i][0], bad[i][1]);
        expect_usage_error(what, rc);
    }
    static const char* const names[3] = {"out.jpg", "out", "out.png.txt"};
    for (int i = 0; i < 3; i++) {
        remove(path_in(names[i]));
        rc = run("render", path_in("pillar.obj"), "-o", path_in(names[i]), NULL);
        CHECK(rc == 2 && strstr(g_err, "PNG") && !strstr(g_out, "tree built"),
              "render -o %s: exit %d (wanted 2, refused before the work): %.200s", names[i], rc, g_err);
        CHECK(access(path_in(names[i]), F_OK) != 0, "render -o %s: a file was written", names[i]);
    }
    rc = run("render", "-o", path_in("OUT.PNG"), "-W", "32", "-H", "32", "-a", "0", "--quick", NULL);
    CHECK(rc == 0, "render -o OUT.PNG: exit %d: %.200s", rc, g_err);
    double t0 = now_seconds();
    rc = run("render", "-o", path_in("no-such-dir/x.png"), NULL); /* the full world: refused before building it */
    double spent = now_seconds() - t0;
    CHECK(rc == 1 && strstr(g_err, "cannot write") && !strstr(g_out, "tree built") && spent < 2.0,
          "render to a missing folder: exit %d after %.1f s: %.200s", rc, spent, g_err);
    rc = run("render", path_in("pillar.obj"), "-o", g_dir, NULL);
    CHECK(rc == 2, "render -o DIRECTORY: exit %d: %.200s", rc, g_err);
    if (geteuid() != 0) { /* root writes anywhere */
        mkdir(path_in("locked"), 0555);
        rc = run("render", path_in("pillar.obj"), "-o", path_in("locked/x.png"), NULL);
        CHECK(rc == 1 && strstr(g_err, "cannot write") && !strstr(g_out, "tree built"),
              "render into a read-only folder: exit %d: %.200s", rc, g_err);
    }
    rc = run("render", path_in("no-such.obj"), "-o", path_in("kept.png"), NULL);
    CHECK(rc == 1 && access(path_in("kept.png"), F_OK) != 0, "render of a missing mesh left an empty output file");
}

static void test_render(void) {
    int rc = run("render", "--quick", "-W", "160", "-H", "90", "--ao-samples", "4", "-o", path_in("world.png"), NULL);
    CHECK(rc == 0, "render world: exit %d: %.300s", rc, g_err);
    CHECK(strstr(g_out, "primary rays") && strstr(g_out, "ambient occlusion") && strstr(g_out, "Mrays/s"),
          "render world: no rays/s lines: %.300s", g_out);
    check_png(path_in("world.png"), 160, 90, "render world");
    static const char* const formats[3] = {"obj", "ply", "stl"};
    for (int i = 0; i < 3; i++) {
        char mesh[64], png[64];
        snprintf(mesh, sizeof mesh, "scene.%s", formats[i]);
        snprintf(png, sizeof png, "scene-%s.png", formats[i]);
        rc = run("render", path_in(mesh), "--width", "96", "--height", "64", "-o", path_in(png), NULL);
        CHECK(rc == 0, "render %s: exit %d: %.300s", mesh, rc, g_err);
        check_png(path_in(png), 96, 64, mesh);
    }
    const char* data = getenv("VOLLEY_DATA_DIR");
    char bunny[4096];
    snprintf(bunny, sizeof bunny, "%s/bunny00.off", data ? data : "");
    if (data && access(bunny, R_OK) == 0) {
        rc = run("render", "--scene", "bunny", "-W", "64", "-H", "48", "-a", "2", "-o", path_in("bunny.png"), NULL);
        CHECK(rc == 0, "render bunny: exit %d: %.300s", rc, g_err);
        check_png(path_in("bunny.png"), 64, 48, "render bunny");
    } else {
        printf("test_tool: bunny00.off not found in VOLLEY_DATA_DIR, bunny render skipped\n");
    }
    /* a data folder without the bunny: a message naming the folder and the way to fetch the meshes */
    char saved[4096];
    snprintf(saved, sizeof saved, "%s", data ? data : "");
    mkdir(path_in("empty-data"), 0777);
    setenv("VOLLEY_DATA_DIR", path_in("empty-data"), 1);
    rc = run("render", "--scene", "bunny", "-o", path_in("none.png"), NULL);
    CHECK(rc == 1 && strstr(g_err, "empty-data") && strstr(g_err, "fetch-data.sh"),
          "render --scene bunny without the bunny: exit %d: %.300s", rc, g_err);
    if (data) setenv("VOLLEY_DATA_DIR", saved, 1);
    else unsetenv("VOLLEY_DATA_DIR");
}

/* Every row of the bench's "queries" array: the three shapes of overlaps and sweeps and the closest
 * points on both paths,
 * mqueries_per_s and pairs_per_query (overlaps) or hit_percent (sweeps) positive numbers. */
static void check_query_rows(const char* json, const char* what) {
    const char* p = strstr(json, "\"queries\": [");
    CHECK(p != NULL, "%s: no queries array", what);
    if (!p) return;
    const char* end = strchr(p, ']');
    unsigned rows = 0, seen = 0, singles = 0;
    static const char* const kinds[7] = {"\"query\": \"overlap\", \"shape\": \"box\"",
                                         "\"query\": \"overlap\", \"shape\": \"sphere\"",
                                         "\"query\": \"overlap\", \"shape\": \"capsule\"",
                                         "\"query\": \"sweep\", \"shape\": \"box\"",
                                         "\"query\": \"sweep\", \"shape\": \"sphere\"",
                                         "\"query\": \"sweep\", \"shape\": \"capsule\"",
                                         "\"query\": \"closest\", \"shape\": \"point\""};
    for (const char* row = strchr(p, '{'); row && row < end; row = strchr(row + 1, '{')) {
        const char* close = strchr(row, '}');
        char text[512];
        snprintf(text, sizeof text, "%.*s", (int)(close ? close - row : 0), row);
        rows++;
        singles += strstr(text, "\"path\": \"volley_single\"") != NULL;
        for (int k = 0; k < 7; k++)
            if (strstr(text, kinds[k])) seen |= 1u << k;
        int overlap = strstr(text, "\"overlap\"") != NULL;
        const char* fields[2] = {"\"mqueries_per_s\": ", overlap ? "\"pairs_per_query\": " : "\"hit_percent\": "};
        for (int f = 0; f < 2; f++) {
            const char* v = strstr(text, fields[f]);
            double x = v ? strtod(v + strlen(fields[f]), NULL) : 0.0;
            CHECK(v && x > 0, "%s: query row without a positive %s: %s", what, fields[f], text);
        }
    }
    CHECK(rows >= 21 && seen == 127u, "%s: %u query rows, kinds seen %#x", what, rows, seen);
    CHECK(singles == 7, "%s: %u single-query rows, wanted 7", what, singles);
}

static void test_bench_profile(void) {
    static const char* const bench_fields[] = {"tool", "version", "backend", "simd_width", "builds", "raycast",
                                               "broadphase", "scene", "triangles", "rays", "query", "path", "batch",
                                               "count", "mrays_per_s", "hit_percent", "boxes", "moving_percent",
                                               "kind", "us_per_frame", "pairs", "queries", "shape",
                                               "mqueries_per_s", "pairs_per_query", "build_type", "cpu", "cores",
                                               "date", "load_average", "noise", "peers", NULL};
    int rc = run("bench", "--quick", "--scene", "world", "--json", path_in("bench.json"), NULL);
    CHECK(rc == 0, "bench world: exit %d: %.300s", rc, g_err);
    CHECK(strstr(g_out, "volley batch") && strstr(g_out, "volley_single") && strstr(g_out, "sap") &&
              strstr(g_out, "box_pruning"),
          "bench world: table lacks rows: %.400s", g_out);
    check_json(path_in("bench.json"), bench_fields, "bench world");
    static char buf[1 << 20];
    slurp(path_in("bench.json"), buf, sizeof buf);
    CHECK(strstr(buf, "\"path\": \"volley_batch\"") && strstr(buf, "\"path\": \"volley_single\"") &&
              strstr(buf, "\"kind\": \"sap\"") && strstr(buf, "\"kind\": \"box_pruning\""),
          "bench world: JSON lacks a path or a kind");
    CHECK(strstr(buf, "\"scene\": \"1,024 boxes, 10% moving (quick)\"") &&
              strstr(buf, "\"scene\": \"flat world, 2,048 boxes, 10% moving (quick)\"") &&
              strstr(buf, "\"build_type\": \"") && strstr(buf, "\"date\": \"20"),
          "bench world: JSON lacks the named broadphase scenes, the build type or the date");
    check_query_rows(buf, "bench world");
    CHECK(strstr(g_out, "overlap") && strstr(g_out, "sweep"), "bench world: table lacks query rows: %.400s", g_out);
    /* one table at a time; the README's broadphase scenes by their names at full size */
    rc = run("bench", "--help", NULL);
    CHECK(rc == 0 && strstr(g_out, "8,192 boxes, 10% moving") && strstr(g_out, "8,192 boxes, all moving") &&
              strstr(g_out, "flat world, 16,384 boxes, 10% moving"),
          "bench --help does not name the README's broadphase scenes: %.400s", g_out);
    rc = run("bench", "--only", "broadphase", "--quick", NULL);
    CHECK(rc == 0 && strstr(g_out, "1,024 boxes, all moving (quick)") && !strstr(g_out, "Mrays/s") &&
              !strstr(g_out, "overlap"),
          "bench --only broadphase: exit %d: %.400s", rc, g_out);
    rc = run("bench", "--only", "everything", NULL);
    expect_usage_error("bench --only everything", rc);
    static const char* const formats[3] = {"obj", "ply", "stl"};
    for (int i = 0; i < 3; i++) {
        char mesh[64];
        snprintf(mesh, sizeof mesh, "scene.%s", formats[i]);
        rc = run("bench", path_in(mesh), "--rays", "los", "--batch", "64", "--count", "2048", "--repeat", "1",
                 "--no-broadphase", NULL);
        CHECK(rc == 0, "bench %s: exit %d: %.300s", mesh, rc, g_err);
        CHECK(strstr(g_out, "los") && strstr(g_out, "volley batch 64"), "bench %s: table: %.300s", mesh, g_out);
    }
    static const char* const profile_fields[] = {"tool", "version", "backend", "simd_width", "cpu_features", "tsc",
                                                 "kernels", "kernel", "width", "ns_per_test", "cycles_per_test",
                                                 "raycast", "mrays_per_s", "loops", "loop", "unit", "size", "ns", NULL};
    rc = run("profile", "--quick", "--json", path_in("profile.json"), NULL);
    CHECK(rc == 0, "profile: exit %d: %.300s", rc, g_err);
    CHECK(strstr(g_out, "ray_vs_boxes") && strstr(g_out, "box_vs_boxes"), "profile: table: %.300s", g_out);
    check_json(path_in("profile.json"), profile_fields, "profile");
    slurp(path_in("profile.json"), buf, sizeof buf);
    CHECK(strstr(buf, "\"width\": 8") && strstr(buf, "\"path\": \"volley_single\"") &&
              strstr(buf, "\"batch\": 1024"),
          "profile: JSON lacks width 8, the single-ray path or batches of 1024");
    rc = run("bench", "--quick", "--scene", "world", "--json", path_in("no-such-dir/b.json"), "--no-peers",
             "--rays", "random", NULL);
    CHECK(rc == 1 && strstr(g_err, "cannot write") && !strstr(g_out, "Mrays/s"),
          "bench, unwritable JSON: exit %d (wanted 1, before the work): %.200s", rc, g_err);
    rc = run("profile", "--quick", "--json", path_in("no-such-dir/p.json"), NULL);
    CHECK(rc == 1 && strstr(g_err, "cannot write") && !strstr(g_out, "kernel"),
          "profile, unwritable JSON: exit %d (wanted 1, before the work): %.200s", rc, g_err);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_tool PATH_TO_VOLLEY WORK_DIR\n");
        return 2;
    }
    g_tool = argv[1], g_dir = argv[2];
    mkdir(g_dir, 0777);
    make_mesh();
    write_obj(path_in("scene.obj"));
    write_ply(path_in("scene.ply"));
    write_stl(path_in("scene.stl"));
    test_arguments();
    test_bad_meshes();
    test_render();
    test_render_view();
    test_bench_profile();
    printf("test_tool: %u passed, %u failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
