/* volley broadphases and one-shot box pruning.
 *
 * A broadphase keeps boxes under handles and reports the pairs of handles whose boxes overlap
 * (closed intervals on all three axes: touching counts). Changes (add, update, remove) are
 * applied at once; vl_broadphase_commit then reports the pairs that began and ceased to overlap
 * since the previous commit, and vl_broadphase_get_pairs lists the overlapping pairs as of that commit.
 * Pairs are (lower handle, higher handle). Objects flagged VL_STATIC never pair with each other.
 *
 * Every call validates its whole input first: on any VL_ERR_* it changed nothing observable
 * (out-of-memory included: objects, boxes, handles, the pairs and the next commit's lists are as
 * before). A call that fails for memory may keep capacity it grew before the failure, on every
 * kind (vl_get_bytes_in_use() is higher after it): the broadphase reuses it, so the call that then
 * succeeds allocates no more, and vl_broadphase_destroy frees it; nothing leaks. Infinite bounds
 * are valid; NaN and min > max are not. Once its buffers have grown, no call allocates.
 * Boxes are compared exactly, wherever they lie: the pairs are those of the closed intervals of the
 * floats given, on every kind, at any distance from the origin. The grid kinds map a coordinate to
 * a cell by one monotone function (in double), so two boxes that touch, on a cell border or not,
 * always share a cell. Both count cells from where the first commit's boxes lie, not from 0, so a
 * world far from the origin costs what it costs near it (VL_BROADPHASE_GRID: 2^20 cells either
 * side of a multiple of the cell side at the first live box; boxes past that share the end cells:
 * still exact, slower). A broadphase is not thread-safe: one thread at a time. */
#ifndef VOLLEY_BROADPHASE_H
#define VOLLEY_BROADPHASE_H

#include <volley/base.h>
#include <volley/tasks.h>
#include <volley/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- one-shot box pruning ----------------------------------------------------------------- */

/* Appends to out every pair (i, j), i < j, of overlapping boxes[i] and boxes[j]. The sweep axis is
 * the one along which box centres vary the most. Safe to call from several threads at once (with
 * different out buffers and exec).
 * exec (volley/tasks.h):
 * - NULL: the working storage (about 55 bytes per box: the boxes sorted, their sort keys, their
 *   listing in bands) comes from the allocator hooks and goes back before returning. Called once
 *   a frame in a process whose allocator returns freed memory to the system, that costs page
 *   faults on every call: a call every frame is better on a scratch or a context
 *   (docs/guide/broadphase.md);
 * - exec->scratch: the same pairs in the same order on the caller's memory, at least
 *   vl_box_prune_scratch_size(count) bytes (NULL is fine where that is 0); its contents need no
 *   initialisation and mean nothing after the call;
 * - exec->context: the storage is kept by the context from call to call (a later call with as
 *   many boxes allocates nothing but out's growth). A context without a job system runs the same
 *   prune as the other forms, with the same pairs in the same order, on a block of the
 *   _scratch_size bytes that it keeps: the way to prune every frame without allocating and without
 *   sizing a scratch. With a job system the work is spread over its workers: the boxes are sorted
 *   in pieces as tasks, then the sweep, the loop over the sorted boxes, is cut into ranges of
 *   sorted positions (about count / 64 boxes each, in multiples of 256, at least 1024), each range
 *   appending to its own pair list kept in the context, and the lists are appended to out in range
 *   order. That sweep is unbanded, so the pairs are the set of the other forms in another order:
 *   (lower index, higher index), grouped by the box of the pair that comes first in the sweep
 *   order (ascending min on the sweep axis, ties by index), groups in that order, each group in
 *   the sweep order of the other box. That list depends on the boxes alone: identical for any
 *   worker count and job system. The lists grow on the job system's threads (the hooks must be
 *   thread-safe).
 * Either way only out may grow: reuse it (count = 0) and a warm frame allocates nothing.
 * Errors, checked in this order before any box is read: VL_ERR_INVALID_ARGUMENT (out NULL or
 * inconsistent: see vl_pair_buffer; boxes NULL with count > 0), VL_ERR_TOO_LARGE (count past
 * 0x7FFFFFF0); VL_ERR_INVALID_ARGUMENT for an exec with both a context and scratch, or a scratch
 * that is NULL, misaligned or too small where one is needed; then VL_ERR_INVALID_BOUNDS (NaN or
 * min > max), VL_ERR_OUT_OF_MEMORY; on any error out->count and the pairs before it are unchanged
 * (its storage may have grown), and nothing is written to the scratch before the boxes are
 * checked. */
VL_API vl_status vl_box_prune(const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out, const vl_exec* exec);

/* Appends every pair (i, j) such that a[i] overlaps b[j]. exec and errors as vl_box_prune, with
 * vl_box_prune_bipartite_scratch_size(na, nb) bytes of scratch. On a job system the pairs are
 * (index in a, index in b), first those of each a-box with the b-boxes starting at or after it
 * (a-boxes in sweep order, then b-boxes in sweep order), then those of each b-box with the a-boxes
 * starting strictly after it, likewise; ranges are of max(na, nb) boxes, over a's sorted boxes
 * then b's. */
VL_API vl_status vl_box_prune_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb,
                                        vl_pair_buffer* out, const vl_exec* exec);

/* Bytes of scratch that vl_box_prune needs for count boxes, whatever the boxes (the most the
 * banded prune may list: 140 to 170 bytes per box, 1.7 MB for 10k boxes, 15 MB for 100k; a call
 * touches only what its boxes need, about 60 bytes per box on Terdiman's sets); 0 when count < 2
 * (no scratch needed); SIZE_MAX when count is too large for the call (VL_ERR_TOO_LARGE) or the
 * size does not fit a size_t. */
VL_API size_t vl_box_prune_scratch_size(uint32_t count);

/* The same for vl_box_prune_bipartite; 0 when na or nb is 0. */
VL_API size_t vl_box_prune_bipartite_scratch_size(uint32_t na, uint32_t nb);

/* ---- broadphases -------------------------------------------------------------------------- */

/* Which kind for which world: docs/guide/broadphase.md. */
typedef enum vl_broadphase_kind {
    /* Persistent incremental 3-axis sweep-and-prune: boxes that move a little cost little, boxes
     * that do not move cost nothing. Batch insertion by box pruning. */
    VL_BROADPHASE_SAP = 0,
    /* Box pruning of every box at each commit, diffed against the previous commit's pairs: no
     * per-object state, best when everything moves a lot. */
    VL_BROADPHASE_BOX_PRUNING = 1,
    /* For a large static world and comparatively few movers (Terdiman's static/bipartite SAP): the
     * statics' sorted endpoint arrays are never written by an update; a mover walks its virtual
     * place in them, and the movers among themselves form a plain SAP. Statics come and go best in
     * batches (one merge or compaction, then every mover finds its place again by binary search);
     * an update of statics costs a pass over the static arrays per batch. */
    VL_BROADPHASE_STATIC_SAP = 2,
    /* Multi-SAP for wide flat worlds: a grid of small persistent SAPs over the ground plane, one
     * pair manager; huge objects (and infinite ones: a ground plane) kept apart in an overflow set.
     * docs/design/multi-sap.md. */
    VL_BROADPHASE_MULTI_SAP = 3,
    /* Hashed uniform 3D grid, cell size from the boxes: each commit re-pairs the objects that moved
     * against the members of their cells. The simple baseline. docs/design/multi-sap.md. */
    VL_BROADPHASE_GRID = 4,
    /* Resting objects in a tree, moving ones pruned among themselves (Jolt's split of its
     * broadphase into a tree of what rests and what moves): the objects that did not move at the
     * last commit, statics or not, live in a 4-wide tree that only the moving objects query, each
     * through a fat box whose candidates it keeps while its box stays inside. A commit costs in
     * proportion to the objects that move, not to those that rest: for a large static world, or
     * any world where a small share moves. Objects that come to rest join the tree when it is
     * built again, once they and those that left it pass a sixteenth of it.
     * docs/design/broadphase-tree.md. */
    VL_BROADPHASE_TREE = 5
} vl_broadphase_kind;

/* Desc flags. */
#define VL_BROADPHASE_PAIR_USER_DATA 1u /* keep one void* per pair (VL_BROADPHASE_SAP only) */

typedef struct vl_broadphase_desc {
    vl_broadphase_kind kind;
    uint32_t flags;            /* VL_BROADPHASE_PAIR_USER_DATA or 0 */
    uint32_t expected_objects; /* object storage reserved at creation (a hint, at most
                                * VL_BROADPHASE_MAX_OBJECTS); 0 is fine */
    /* VL_BROADPHASE_MULTI_SAP and VL_BROADPHASE_GRID; 0 chooses from the boxes of the first commit
     * that has any. up_axis: 1, 2 or 3 for x, y or z across the ground (0: the axis along which box
     * centres spread least); the grid covers the two others. cell_size: side of a cell (finite,
     * >= 0). grid_cells: MULTI_SAP cells along each ground axis (at most 256). */
    uint32_t up_axis;
    float cell_size;
    uint32_t grid_cells;
    /* The context whose job system runs the commits (volley/tasks.h), or NULL: the calling
     * thread. It must live as long as the broadphase commits, and no other call may run on it
     * during a commit. */
    vl_context* context;
} vl_broadphase_desc;

typedef struct vl_broadphase vl_broadphase;

/* kind VL_BROADPHASE_SAP, no flags, no reservation, grid layout chosen from the boxes, no context. */
VL_API vl_broadphase_desc vl_broadphase_default_desc(void);

/* Creates an empty broadphase. desc NULL means the default desc.
 * Errors: VL_ERR_INVALID_ARGUMENT (out NULL, a grid field out of range), VL_ERR_INVALID_FLAGS (unknown kind or flags, user
 * data with a kind that does not keep pairs), VL_ERR_OUT_OF_MEMORY; *out is then NULL. */
VL_API vl_status vl_broadphase_create(const vl_broadphase_desc* desc, vl_broadphase** out);

/* Destroys it and frees all its memory; NULL is fine. */
VL_API void vl_broadphase_destroy(vl_broadphase* bp);

/* Handles. handle = index << VL_HANDLE_GENERATION_BITS | generation. The index (VL_HANDLE_INDEX)
 * is a small integer, distinct among the live objects and below the most objects that were ever
 * alive (and pending removal) at once: index your own per-object arrays by it. Handles sort as
 * their indices do, so pairs (lower handle, higher handle) are also (lower index, higher index).
 * An index freed by vl_broadphase_remove is given again only after the commit that reported the
 * removed object's deletions, and then with the next generation (mod 2^VL_HANDLE_GENERATION_BITS):
 * a stale handle (its object removed, whether or not the index serves another object now) is
 * VL_ERR_INVALID_HANDLE in update, remove and get_box, on every kind. The generation wraps: after
 * 256 owners of one index, the handle of the first one is valid again (naming the 257th owner).
 * Handles are not reused more often than that, so keep no handle past 255 removals of the objects
 * that took its index after it. */
#define VL_HANDLE_GENERATION_BITS 8u
#define VL_HANDLE_INDEX(handle) ((uint32_t)(handle) >> VL_HANDLE_GENERATION_BITS)
/* The most objects a broadphase holds at once (live ones and those removed since the last commit). */
#define VL_BROADPHASE_MAX_OBJECTS (1u << 24)

/* Every batch call takes (bp, handles, [boxes,] count[, flags]): the handles first, the count of
 * both arrays after them. */

/* Adds count boxes with `flags` (0 or VL_STATIC) and writes their handles to out_handles[count].
 * count 0 does nothing.
 * Errors, in this order: VL_ERR_INVALID_ARGUMENT (bp NULL, boxes or out_handles NULL with
 * count > 0), VL_ERR_INVALID_FLAGS, VL_ERR_TOO_LARGE (more than VL_BROADPHASE_MAX_OBJECTS
 * objects: checked before any box is read), VL_ERR_INVALID_BOUNDS, VL_ERR_OUT_OF_MEMORY. */
VL_API vl_status vl_broadphase_add(vl_broadphase* bp, uint32_t* out_handles, const vl_aabb* boxes, uint32_t count,
                                   uint32_t flags);

/* Gives objects handles[k] the new boxes[k]. Static objects may be moved too (at a dynamic
 * object's cost). Errors, in this order: VL_ERR_INVALID_ARGUMENT (bp NULL, NULL arrays with
 * count > 0), VL_ERR_TOO_LARGE (count above the live objects: checked before any handle is read),
 * then the first bad handle in batch order: VL_ERR_INVALID_HANDLE (unknown, removed or stale) or
 * VL_ERR_DUPLICATE_HANDLE (its second occurrence); then VL_ERR_INVALID_BOUNDS,
 * VL_ERR_OUT_OF_MEMORY. */
VL_API vl_status vl_broadphase_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes,
                                      uint32_t count);

/* Makes the objects static (is_static true) or dynamic: pairs between two statics are dropped
 * (reported deleted at the next commit), pairs with statics that a new dynamic overlaps are found
 * (reported created), and a pair that holds before and after is neither. Objects already in that
 * state are left alone. VL_BROADPHASE_STATIC_SAP flips in place; every other kind as the kind's
 * removal and addition under the same handles. Errors: VL_ERR_INVALID_ARGUMENT (bp NULL, handles
 * NULL with count > 0), VL_ERR_INVALID_HANDLE, VL_ERR_DUPLICATE_HANDLE, VL_ERR_OUT_OF_MEMORY:
 * nothing changed for VL_BROADPHASE_SAP, VL_BROADPHASE_STATIC_SAP and VL_BROADPHASE_BOX_PRUNING
 * (what the addition needs is found and reserved before the removal); for the other kinds
 * the objects are put back as they were, which needs memory again; should that fail too, they are
 * removed (handles dead, pairs reported deleted at the next commit; vl_broadphase_get_box says
 * which). */
VL_API vl_status vl_broadphase_set_static(vl_broadphase* bp, const uint32_t* handles, uint32_t count, bool is_static);

/* Removes the objects; their pairs are reported deleted at the next commit. Never allocates.
 * Errors as update (VL_ERR_INVALID_ARGUMENT, VL_ERR_TOO_LARGE, VL_ERR_INVALID_HANDLE,
 * VL_ERR_DUPLICATE_HANDLE). */
VL_API vl_status vl_broadphase_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count);

/* Brings the pair set up to date and appends the pairs that began (created) and ceased (deleted)
 * to overlap since the last commit; either buffer may be NULL. A pair that began and ceased in
 * between is in neither. Buffers given leave with storage (pairs != NULL), even when empty.
 * With a context (vl_broadphase_desc.context) the work is spread over its workers, with the same
 * pairs, created and deleted lists, in the same order, for any worker count and without a
 * context: VL_BROADPHASE_BOX_PRUNING sweeps in ranges as tasks (its sort of the moved boxes, of
 * the pairs and the diff stay on the calling thread); VL_BROADPHASE_MULTI_SAP plans its movers
 * and updates its cells as tasks; VL_BROADPHASE_TREE builds its tree and runs its tree
 * queries on the context; the other kinds commit on the calling thread.
 * Errors: VL_ERR_INVALID_ARGUMENT (bp NULL, inconsistent buffer), VL_ERR_OUT_OF_MEMORY (buffers
 * and broadphase unchanged; commit again later). */
VL_API vl_status vl_broadphase_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted);

/* The overlapping pairs as of the last commit (unspecified order; none before the first commit),
 * whatever was added, moved, flipped or removed since; valid until the next call that changes bp;
 * *count (count may be NULL) receives their number. The kinds keep pairs of indices: the first
 * call after a change copies them as handles into storage that bp keeps (one pass over the pairs,
 * which for VL_BROADPHASE_SAP skips those its pair manager created since the commit; later calls
 * return the same copy), which each commit grows to the pair count. NULL (and *count 0) when bp
 * is NULL, or when memory ran out both in the last commit's growth of that storage and now (call
 * again later); never NULL otherwise, even with no pairs. */
VL_API const vl_pair* vl_broadphase_get_pairs(const vl_broadphase* bp, uint32_t* count);

/* Number of live objects; 0 for NULL. */
VL_API uint32_t vl_broadphase_get_count(const vl_broadphase* bp);

/* The box of a live object. Errors: VL_ERR_INVALID_ARGUMENT, VL_ERR_INVALID_HANDLE (unknown,
 * removed or stale). */
VL_API vl_status vl_broadphase_get_box(const vl_broadphase* bp, uint32_t handle, vl_aabb* box);

/* User data of a pair of the last commit (desc flag VL_BROADPHASE_PAIR_USER_DATA), by the pair's
 * handles in either order. A new pair starts with NULL. set: VL_ERR_INVALID_ARGUMENT when the pair
 * does not exist (or a handle is stale), VL_ERR_INVALID_FLAGS without the flag. get: NULL in
 * those cases. */
VL_API vl_status vl_broadphase_set_pair_user_data(vl_broadphase* bp, uint32_t a, uint32_t b, void* data);
VL_API void* vl_broadphase_get_pair_user_data(const vl_broadphase* bp, uint32_t a, uint32_t b);

/* Checks every invariant of the structure (sortedness, sentinels, back-references, the pair set
 * against the boxes, the hash...): VL_OK, or VL_ERR_INVALID_ARGUMENT for NULL or a broken
 * invariant (a bug in volley). Costs about as much as a commit from scratch. Debug builds run it
 * after every call that changes bp. */
VL_API vl_status vl_broadphase_validate(const vl_broadphase* bp);

#ifdef __cplusplus
}
#endif

#endif
