/* VL_BROADPHASE_MULTI_SAP (Terdiman, "Sweep-and-prune", 2007, part II): a fixed grid of cells over
 * the ground plane, each cell a small persistent 3-axis SAP over its members, one pair manager for
 * all of them. multi_sap.c: life cycle, layout, the commit; multi_sap_cell.c: one cell's SAP;
 * multi_sap_validate.c: the check of every invariant.
 *
 * An object is a member of every cell its ground footprint touches (closed intervals, so two
 * touching boxes share a cell); past VL_MSAP_MAX_SPAN cells along a ground axis, or with infinite
 * ground bounds, it lives in the overflow set instead. Coordinates outside the grid clamp to the
 * border cells. Updates only mark movers; the commit builds one queue of cell operations (remove,
 * move, insert), sorted by cell, so that each cell runs its own slice and writes only its own
 * members and its own output list: the candidate pairs whose overlap in that cell may have changed
 * (every endpoint swap that toggles an overlap, every pair met by an insertion or a removal).
 * The merge then sets each candidate from the truth, overlap of the current boxes, in cell order:
 * no reference counts, and a pair seen in several cells is created and deleted once. */
#ifndef VL_BROADPHASE_MULTI_SAP_MULTI_SAP_H
#define VL_BROADPHASE_MULTI_SAP_MULTI_SAP_H

#include <math.h>

#include "broadphase/broadphase.h"
#include "broadphase/pair_manager.h"
#include "broadphase/sap/sap.h"

#define VL_MSAP_MAX_SPAN 2u      /* cells along a ground axis before an object overflows */
#define VL_MSAP_ENTRIES 8u       /* per object: the cells it leaves or keeps, and those it enters */
#define VL_MSAP_MAX_AXIS 256u    /* cells along a ground axis */
#define VL_MSAP_TARGET_MEMBERS 64.0 /* objects per cell when the layout is chosen from the boxes */
#define VL_MSAP_NONE 0xFFFFFFFFu
#define VL_MSAP_ENTERS 0x80000000u /* on an operation's cell (cells are below 2^16): an insertion */
#define VL_MSAP_MOVER_BLOCK 256u /* movers planned per task */
#define VL_MSAP_PLAN_AHEAD 8u    /* the plan fetches the lines of the mover this far ahead */
#define VL_MSAP_SCAN_MAX 8u     /* insertions into a cell that each scan its members; more: one sweep */
#define VL_MSAP_TRUE 0x80000000u /* on a cell candidate's first slot (slots are below 2^24): it overlaps */

/* Per-slot state bits. */
enum {
    VL_MSAP_IN_CELLS = 1u,
    VL_MSAP_IN_OVF = 2u,
    VL_MSAP_MOVED = 4u,
    VL_MSAP_LEFT_OVF = 8u, /* this commit */
    VL_MSAP_READDED = 16u  /* removed and added back since the last commit (set_static): leaves and re-enters its cells */
};

/* Operations of the commit's queue. */
enum { VL_MSAP_OP_REMOVE = 0u, VL_MSAP_OP_MOVE = 1u, VL_MSAP_OP_INSERT = 2u };

typedef struct vl_msap_entry {
    uint32_t cell, local; /* a cell the object belongs to, and its index among the cell's members */
} vl_msap_entry;

typedef struct vl_msap_op {
    uint32_t handle;
    uint16_t entry; /* index in the object's entries */
    uint16_t kind;  /* VL_MSAP_OP_* */
    uint32_t local; /* a move: the object's local index in the cell when the queue was built */
    vl_aabb from, to; /* a move: the box the cells hold and the new one */
} vl_msap_op;

/* One cell: a SAP over local indices 0..n-1 (the layout of sap.h, with local owners). */
typedef struct vl_msap_cell {
    vl_endpoint* ep[3]; /* 2n + 2 each: low sentinel, endpoints, high sentinel */
    uint32_t* pos;      /* pos[local * 6 + axis * 2 + is_max] */
    uint32_t* id;       /* handle of each local */
    uint64_t* tmp;      /* an insertion's scratch: its sorted endpoints, then the open members */
    uint32_t ep_cap[3], pos_cap, id_cap, tmp_cap;
    uint32_t n;
    uint32_t index; /* of this cell in the grid */
    vl_pair_buffer out; /* candidate pairs found by this cell's operations; once run, those that change the pair
                         * set: (a | VL_MSAP_TRUE, b) to add, (a, b) to remove, or (index in the pair
                         * manager, VL_MSAP_NONE) to remove */
    int lost;           /* a candidate could not be stored: the merge rescans everything */
} vl_msap_cell;

typedef struct vl_msap {
    vl_pair_manager pm;
    /* layout, set by the first commit with live objects */
    int ready, up, axis[2]; /* axis[k]: the two ground axes */
    double origin[2], scale[2];
    uint32_t cells_n[2];
    vl_msap_cell* cells;
    uint32_t cell_count;
    /* per slot */
    uint8_t* cls;
    vl_msap_entry* ent; /* VL_MSAP_ENTRIES per slot */
    uint32_t* range;    /* 4 per slot: first and last cell along each ground axis, when IN_CELLS */
    uint32_t* ovf_at;   /* index in ovf, when IN_OVF */
    vl_aabb* held;      /* the box its cells hold, when IN_CELLS */
    uint32_t cls_cap, ent_cap, range_cap, ovf_at_cap, held_cap;
    /* objects added, updated or removed since the last commit, each once (one more for the
     * branch-free listing) */
    uint32_t* movers;
    uint32_t movers_cap, mover_count;
    /* the overflow set */
    uint32_t* ovf;
    uint32_t ovf_cap, ovf_count;
    vl_pair_buffer ovf_out; /* candidate pairs with an overflow end */
    /* commit scratch */
    uint32_t* new_range; /* 4 per mover */
    uint32_t* start;     /* cell_count + 1 queue offsets */
    /* the operations of each block of VL_MSAP_MOVER_BLOCK movers, in mover order, from
     * ops[block * VL_MSAP_ENTRIES * VL_MSAP_MOVER_BLOCK], block_ops[block] of them */
    vl_msap_op* ops;
    uint32_t* op_cell; /* the cell of each, VL_MSAP_ENTERS on an insertion */
    uint32_t* block_ops;
    uint32_t* block_ovf; /* a block has movers that were or are in the overflow set (settled last) */
    uint32_t* order;   /* the operations' indices grouped by cell, in mover order within a cell */
    uint32_t* busy;    /* the cells with operations, in cell order */
    uint32_t new_range_cap, start_cap, ops_cap, op_cell_cap, block_ops_cap, block_ovf_cap, order_cap, busy_cap, busy_count;
    int rescan;    /* a candidate was lost: the merge checks every pair */
    int scan_pm;   /* overflow objects moved or were met: the merge checks the movers' pairs */
} vl_msap;

/* Cell of value x along ground axis k (0 or 1): monotone in x, clamped to the grid. */
static inline uint32_t vl_msap_cell_of(const vl_msap* ms, int k, float x) {
    double t = ((double)x - ms->origin[k]) * ms->scale[k];
    if (!(t >= 0)) return 0;
    if (t >= (double)ms->cells_n[k]) return ms->cells_n[k] - 1;
    return (uint32_t)t;
}

/* The footprint of a box: r[0..1] first cells, r[2..3] last cells; 1 when it fits in the cells. */
static inline int vl_msap_footprint(const vl_msap* ms, const vl_aabb* b, uint32_t r[4]) {
    for (int k = 0; k < 2; k++) {
        r[k] = vl_msap_cell_of(ms, k, b->min[ms->axis[k]]);
        r[k + 2] = vl_msap_cell_of(ms, k, b->max[ms->axis[k]]);
    }
    /* an infinite ground bound always overflows, even on a grid one cell wide */
    for (int k = 0; k < 2; k++)
        if (b->min[ms->axis[k]] == -INFINITY || b->max[ms->axis[k]] == INFINITY) return 0;
    return r[2] - r[0] < VL_MSAP_MAX_SPAN && r[3] - r[1] < VL_MSAP_MAX_SPAN;
}

/* Pushes a candidate; on failure the cell is flagged lost. */
static inline void vl_msap_push(vl_pair_buffer* out, int* lost, uint32_t a, uint32_t b) {
    if (out->count < out->capacity)
        out->pairs[out->count++] = (vl_pair){a, b};
    else if (vl_pair_buffer_push(out, a, b) != VL_OK)
        *lost = 1;
}

/* multi_sap_cell.c: one cell's operations; entries of the members are fixed up by a removal. */
vl_status vl_msap_cell_reserve(vl_msap_cell* c, uint32_t members);
/* The cell's arrays already hold `members` (vl_msap_cell_reserve would change nothing). */
static inline int vl_msap_cell_has_room(const vl_msap_cell* c, uint32_t members) {
    uint64_t eps = 2ull * members + 2;
    return c->ep_cap[0] >= eps && c->ep_cap[1] >= eps && c->ep_cap[2] >= eps && c->pos_cap >= 6ull * members &&
           c->id_cap >= members && c->tmp_cap >= 4ull * members;
}
void vl_msap_cell_free(vl_msap_cell* c);
/* Adds the k objects whose handles the caller put in c->id[n, n + k) (room reserved) as locals
 * n..n+k-1: each axis's new endpoints sorted, then merged into its array in one pass; candidates:
 * every member each new one overlaps (a few: each scans the members; more: one sweep). */
void vl_msap_cell_insert(vl_msap_cell* c, const vl_bp_objects* o, uint32_t k);
/* Removes local `local`; candidates: the members it overlapped; the last member takes its index. */
void vl_msap_cell_remove(vl_msap_cell* c, vl_msap_entry* ent, uint32_t local);
/* Moves local `local` from `from` (what the cell holds) to `to`; candidates: every overlap it toggled. */
void vl_msap_cell_move(vl_msap_cell* c, const vl_bp_objects* o, uint32_t local, const vl_aabb* from,
                       const vl_aabb* to);
/* The cell's own invariants; members whose byte in cls has VL_MSAP_MOVED may hold old values. */
vl_status vl_msap_cell_validate(const vl_msap_cell* c, const vl_bp_objects* o, const uint8_t* cls,
                                const vl_msap_entry* ent);

/* multi_sap_validate.c */
vl_status vl_msap_validate(const vl_broadphase* bp);
/* Calls add(pm) for, or counts, every overlapping pair that may be reported, each once: in a cell
 * only where the two footprints' first cells meet (the cell of the intersection's low corner), and
 * those with an overflow end. Returns the number. */
uint64_t vl_msap_all_pairs(const vl_msap* ms, const vl_bp_objects* o, vl_pair_manager* add_to);

#endif
