/* volley bench: the overlap, sweep and closest-point rows (bench_queries.c). */
#ifndef VOLLEY_TOOL_BENCH_QUERIES_H
#define VOLLEY_TOOL_BENCH_QUERIES_H

#include "tool.h"

/* Rows bench_queries adds for one scene: (2 queries x 3 shapes + closest points) x 3 paths at most. */
#define BENCH_QUERY_ROWS_PER_SCENE 21u

typedef struct query_row {
    char scene[256];
    uint32_t triangles;
    const char* query; /* "overlap", "sweep" (closest hit) or "closest" (closest points) */
    const char* shape; /* "box", "sphere" or "capsule"; "point" for closest points */
    const char* path;  /* "volley_batch" or "volley_single" */
    uint32_t batch, count;
    double mqueries;         /* millions of queries a second */
    double pairs_per_query;  /* overlaps: pairs found per query; sweeps: 0 */
    double hit_percent;      /* sweeps, closest points: the share answered; overlaps: 0 */
} query_row;

/* Times box, sphere and capsule overlaps and sweeps (closest hit) and closest points on bvh,
 * the tree of s, with queries placed by scene_overlap_queries and scene_sweeps (the closest
 * points at the sphere sweeps' starts, no maximum distance): batches of `batch` on the
 * caller's scratch, the whole set as one batch, and the single-query path; best of `repeat` runs
 * after a warm-up. Appends up to BENCH_QUERY_ROWS_PER_SCENE rows at rows + *row_count. 0 on
 * success; prints the error and returns 1 otherwise. */
int bench_queries(const vl_bvh* bvh, const tool_scene* s, uint32_t batch, uint32_t repeat, int quick,
                  query_row* rows, uint32_t* row_count, tool_progress* p);

#endif
