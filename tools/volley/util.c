/* Helpers of the volley tool: clock, argument parsing, progress line, JSON strings, CPU features. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TOOL_X86 1
#endif

const tool_broadphase_kind tool_broadphase_kinds[] = {
    {"sap", VL_BROADPHASE_SAP},
    {"box_pruning", VL_BROADPHASE_BOX_PRUNING},
    {"static_sap", VL_BROADPHASE_STATIC_SAP},
    {"multi_sap", VL_BROADPHASE_MULTI_SAP},
    {"grid", VL_BROADPHASE_GRID},
    {"tree", VL_BROADPHASE_TREE},
};
const uint32_t tool_broadphase_kind_count = sizeof tool_broadphase_kinds / sizeof tool_broadphase_kinds[0];

double tool_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int tool_parse_u32(const char* cmd, const char* option, const char* text, uint32_t lo, uint32_t hi, uint32_t* out) {
    char* end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end != '\0' || text[0] == '-' || v < lo || v > hi) {
        fprintf(stderr, "volley %s: %s wants a whole number from %u to %u, got '%s'\n", cmd, option, lo, hi, text);
        return 0;
    }
    *out = (uint32_t)v;
    return 1;
}

int tool_bad_option(const char* cmd, char** argv, int optopt_value) {
    extern int optind;
    const char* arg = argv[optind - 1];
    if (optopt_value && arg && strncmp(arg, "--", 2) != 0)
        fprintf(stderr, "volley %s: option -%c is unknown or wants a value\n", cmd, optopt_value);
    else
        fprintf(stderr, "volley %s: option '%s' is unknown or wants a value\n", cmd, arg ? arg : "?");
    fprintf(stderr, "Try 'volley %s --help'.\n", cmd);
    return TOOL_EXIT_USAGE;
}

uint64_t tool_ticks(void) {
#ifdef TOOL_X86
    return (uint64_t)__rdtsc();
#else
    return 0;
#endif
}

int tool_has_ticks(void) {
#ifdef TOOL_X86
    return 1;
#else
    return 0;
#endif
}

const char* tool_cpu_features(void) {
    static char buf[256];
    buf[0] = '\0';
#ifdef TOOL_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse2")) strcat(buf, "sse2 ");
    if (__builtin_cpu_supports("sse4.1")) strcat(buf, "sse4.1 ");
    if (__builtin_cpu_supports("sse4.2")) strcat(buf, "sse4.2 ");
    if (__builtin_cpu_supports("avx")) strcat(buf, "avx ");
    if (__builtin_cpu_supports("avx2")) strcat(buf, "avx2 ");
    if (__builtin_cpu_supports("fma")) strcat(buf, "fma ");
    if (__builtin_cpu_supports("avx512f")) strcat(buf, "avx512f ");
#elif defined(__aarch64__)
    strcat(buf, "neon ");
#endif
    size_t n = strlen(buf);
    if (n) buf[n - 1] = '\0';
    else strcpy(buf, "none known");
    return buf;
}

void tool_progress_start(tool_progress* p, const char* label) {
    p->start = p->last = tool_now();
    p->label = label;
    p->shown = 0;
}

void tool_progress_update(tool_progress* p, double fraction) {
    double t = tool_now();
    if (t - p->start < 1.0 || t - p->last < 0.2 || !isatty(STDERR_FILENO)) return;
    p->last = t;
    p->shown = 1;
    if (fraction >= 0)
        fprintf(stderr, "\r\033[K%s: %3.0f%% (%.0f s)", p->label, 100.0 * fraction, t - p->start);
    else
        fprintf(stderr, "\r\033[K%s (%.0f s)", p->label, t - p->start);
    fflush(stderr);
}

void tool_progress_done(tool_progress* p) {
    if (p->shown) fprintf(stderr, "\r\033[K");
    p->shown = 0;
}

void tool_json_string(FILE* f, const char* s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

const char* tool_cpu_model(void) {
    static char model[160];
    if (model[0]) return model;
    snprintf(model, sizeof model, "unknown");
    FILE* f = fopen("/proc/cpuinfo", "r");
    if (!f) return model;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* x86: "model name"; ARM: "Model" or, failing that, "CPU part" */
        if (!strncmp(line, "model name", 10) || !strncmp(line, "Model", 5) || !strncmp(line, "CPU part", 8)) {
            const char* v = strchr(line, ':');
            if (!v) continue;
            for (v++; *v == ' ' || *v == '\t'; v++) {}
            snprintf(model, sizeof model, "%s", v);
            model[strcspn(model, "\n")] = '\0';
            if (strncmp(line, "CPU part", 8)) break;
        }
    }
    fclose(f);
    return model;
}

unsigned tool_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

double tool_load_average(void) {
    double load = -1;
    FILE* f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1;
        fclose(f);
    }
    return load;
}

const char* tool_utc_now(void) {
    static char buf[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

const char* tool_build_type(void) {
#ifdef VOLLEY_TOOL_BUILD_TYPE
    return VOLLEY_TOOL_BUILD_TYPE[0] ? VOLLEY_TOOL_BUILD_TYPE : "unspecified";
#else
    return "unspecified";
#endif
}

int tool_writable(const char* cmd, const char* path) {
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "volley %s: cannot write '%s': it is a directory\n", cmd, path);
            return 0;
        }
        if (access(path, W_OK) != 0) {
            fprintf(stderr, "volley %s: cannot write '%s': %s\n", cmd, path, strerror(errno));
            return 0;
        }
        return 1;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "volley %s: cannot write '%s': %s\n", cmd, path, strerror(errno));
        return 0;
    }
    return 1;
}
