/* VL_BROADPHASE_GRID: a hashed uniform 3D grid, the simple baseline (grid.c: life cycle and commit;
 * grid_validate.c: every invariant).
 *
 * Cubic cells of side s, chosen from the boxes at the first commit with live objects (the 99th
 * percentile of their largest extents, sampled) unless the desc gives it; a cell exists once an
 * object entered it (open addressing on its packed coordinates) and keeps its storage. An object
 * is a member of every cell it touches (closed intervals), at most 2 along each axis; a larger or
 * infinite one lives in the overflow set. Updates only mark movers; a commit moves the movers'
 * memberships, finds every pair with a moved end (each in one cell only: the cell where the two
 * boxes' first cells meet, the low corner of their intersection), flags the movers' old pairs
 * removed and adds the found ones back, so the pair manager reports exactly the difference. */
#ifndef VL_BROADPHASE_GRID_GRID_H
#define VL_BROADPHASE_GRID_GRID_H

#include <math.h>

#include "broadphase/broadphase.h"
#include "broadphase/pair_manager.h"

#define VL_GRID_MAX_SPAN 2     /* cells along an axis before an object overflows */
#define VL_GRID_CELLS 8u       /* cells per object at most */
#define VL_GRID_BIAS 0x100000  /* cell coordinates are clamped to [-BIAS, BIAS) and stored biased */
#define VL_GRID_EMPTY UINT64_MAX
#define VL_GRID_NONE 0xFFFFFFFFu
#define VL_GRID_SAMPLES 1024u

enum { VL_GRID_IN_CELLS = 1u, VL_GRID_IN_OVF = 2u, VL_GRID_MOVED = 4u };

typedef struct vl_grid_cell {
    uint32_t* member;
    uint32_t n, cap;
    uint32_t pending; /* commit scratch: members about to enter */
    uint32_t co[3];   /* biased coordinates */
} vl_grid_cell;

typedef struct vl_grid {
    vl_pair_manager pm;
    int ready;
    double inv;       /* 1 / cell side */
    double origin[3]; /* the corner of cell 0 on each axis (the layout's), so that cells count from the boxes */
    /* hash: packed coordinates -> cell index */
    uint64_t* keys;
    uint32_t* vals;
    uint32_t table_cap, table_used; /* table_cap a power of two, or 0 */
    vl_grid_cell* cells;
    uint32_t cells_cap, cell_count;
    /* per slot */
    uint8_t* cls;
    uint32_t* co;   /* 6 per slot: first and last biased cell coordinates, when IN_CELLS */
    uint32_t* cell; /* VL_GRID_CELLS per slot, VL_GRID_NONE padded */
    uint32_t cls_cap, co_cap, cell_cap;
    uint32_t *movers, movers_cap, mover_count;
    uint32_t *ovf, *ovf_at, ovf_cap, ovf_at_cap, ovf_count;
    /* commit scratch */
    uint32_t* new_co; /* 6 per mover, new_co[6i] == VL_GRID_NONE: dead or overflowing */
    uint32_t new_co_cap;
    vl_pair_buffer found;
} vl_grid;

/* Biased cell coordinate of x on axis a (monotone in x, clamped). */
static inline uint32_t vl_grid_coord(const vl_grid* g, int a, float x) {
    double t = ((double)x - g->origin[a]) * g->inv;
    if (!(t >= -(double)VL_GRID_BIAS)) return 0;
    if (t >= (double)VL_GRID_BIAS) return 2u * VL_GRID_BIAS - 1;
    return (uint32_t)((int64_t)floor(t) + VL_GRID_BIAS);
}

static inline uint64_t vl_grid_key(uint32_t x, uint32_t y, uint32_t z) {
    return (uint64_t)x << 42 | (uint64_t)y << 21 | z;
}

/* Cell index of a key, or VL_GRID_NONE. */
uint32_t vl_grid_find(const vl_grid* g, uint64_t key);

/* Coordinates of a box: co[0..2] first, co[3..5] last; 1 when it fits (not overflow). */
static inline int vl_grid_footprint(const vl_grid* g, const vl_aabb* b, uint32_t co[6]) {
    int fits = 1;
    for (int a = 0; a < 3; a++) {
        co[a] = vl_grid_coord(g, a, b->min[a]);
        co[a + 3] = vl_grid_coord(g, a, b->max[a]);
        fits &= co[a + 3] - co[a] < VL_GRID_MAX_SPAN && b->min[a] != -INFINITY && b->max[a] != INFINITY;
    }
    return fits;
}

vl_status vl_grid_validate(const vl_broadphase* bp);
/* Every overlapping pair that may be reported, each once, counted or added to pm. */
uint64_t vl_grid_all_pairs(const vl_grid* g, const vl_bp_objects* o, vl_pair_manager* add_to);

#endif
