/* volley broadphases and one-shot box pruning.
 *
 * A broadphase keeps boxes under handles and reports the pairs of handles whose boxes overlap
 * (closed intervals on all three axes: touching counts). Changes (add, update, remove) are
 * applied at once; vl_broadphase_commit then reports the pairs that began and ceased to overlap
 * since the previous commit, and vl_broadphase_pairs lists the overlapping pairs as of that commit.
 * Pairs are (lower handle, higher handle). Objects flagged VL_STATIC never pair with each other.
 *
 * Every call validates its whole input first: on any VL_ERR_* it changed nothing (out-of-memory
 * included). Infinite bounds are valid; NaN and min > max are not. Once its buffers have grown,
 * no call allocates. A broadphase is not thread-safe: one thread at a time. */
#ifndef VOLLEY_BROADPHASE_H
#define VOLLEY_BROADPHASE_H

#include <volley/base.h>
#include <volley/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- one-shot box pruning ----------------------------------------------------------------- */

/* Appends to out every pair (i, j), i < j, of overlapping boxes[i] and boxes[j]; order unspecified.
 * The sweep axis is the one along which box centres vary the most. Safe to call from several
 * threads at once (with different out buffers).
 * Errors: VL_ERR_INVALID_ARGUMENT (out NULL or inconsistent, boxes NULL with count > 0),
 * VL_ERR_INVALID_BOUNDS (NaN or min > max), VL_ERR_TOO_LARGE, VL_ERR_OUT_OF_MEMORY; on any error
 * out->count and the pairs before it are unchanged (its storage may have grown). */
VL_API vl_status vl_box_prune(const vl_aabb* boxes, uint32_t count, vl_pair_buffer* out);

/* Appends every pair (i, j) such that a[i] overlaps b[j]; order unspecified. Errors as above. */
VL_API vl_status vl_box_prune_bipartite(const vl_aabb* a, uint32_t na, const vl_aabb* b, uint32_t nb,
                                        vl_pair_buffer* out);

/* ---- broadphases -------------------------------------------------------------------------- */

typedef enum vl_broadphase_kind {
    /* Persistent incremental 3-axis sweep-and-prune: boxes that move a little cost little, boxes
     * that do not move cost nothing. Batch insertion by box pruning. */
    VL_BROADPHASE_SAP = 0,
    /* Box pruning of every box at each commit, diffed against the previous commit's pairs: no
     * per-object state, best when everything moves a lot. */
    VL_BROADPHASE_BOX_PRUNING = 1,
    /* Multi-SAP for wide flat worlds: a grid of small persistent SAPs over the ground plane, one
     * pair manager; huge objects (and infinite ones: a ground plane) kept apart in an overflow set.
     * docs/MULTI_SAP.md. */
    VL_BROADPHASE_MULTI_SAP = 3,
    /* Hashed uniform 3D grid, cell size from the boxes: each commit re-pairs the objects that moved
     * against the members of their cells. The simple baseline. docs/MULTI_SAP.md. */
    VL_BROADPHASE_GRID = 4
} vl_broadphase_kind;

/* Desc flags. */
#define VL_BROADPHASE_PAIR_USER_DATA 1u /* keep one void* per pair (VL_BROADPHASE_SAP only) */

typedef struct vl_broadphase_desc {
    vl_broadphase_kind kind;
    uint32_t flags;            /* VL_BROADPHASE_PAIR_USER_DATA or 0 */
    uint32_t expected_objects; /* object storage reserved at creation (a hint); 0 is fine */
    /* VL_BROADPHASE_MULTI_SAP and VL_BROADPHASE_GRID; 0 chooses from the boxes of the first commit
     * that has any. up_axis: 1, 2 or 3 for x, y or z across the ground (0: the axis along which box
     * centres spread least); the grid covers the two others. cell_size: side of a cell (finite,
     * >= 0). grid_cells: MULTI_SAP cells along each ground axis (at most 256). */
    uint32_t up_axis;
    float cell_size;
    uint32_t grid_cells;
} vl_broadphase_desc;

typedef struct vl_broadphase vl_broadphase;

/* kind VL_BROADPHASE_SAP, no flags, no reservation, grid layout chosen from the boxes. */
VL_API vl_broadphase_desc vl_broadphase_default_desc(void);

/* Creates an empty broadphase. desc NULL means the default desc.
 * Errors: VL_ERR_INVALID_ARGUMENT (out NULL, a grid field out of range), VL_ERR_INVALID_FLAGS (unknown kind or flags, user
 * data with a kind that does not keep pairs), VL_ERR_OUT_OF_MEMORY; *out is then NULL. */
VL_API vl_status vl_broadphase_create(const vl_broadphase_desc* desc, vl_broadphase** out);

/* Destroys it and frees all its memory; NULL is fine. */
VL_API void vl_broadphase_destroy(vl_broadphase* bp);

/* Adds count boxes with `flags` (0 or VL_STATIC) and writes their handles to out_handles[count].
 * A handle is a small integer; the handle of a removed object may be given again, but only after
 * the commit that reported its deletions. count 0 does nothing.
 * Errors: VL_ERR_INVALID_ARGUMENT (bp, boxes or out_handles NULL with count > 0),
 * VL_ERR_INVALID_FLAGS, VL_ERR_INVALID_BOUNDS, VL_ERR_TOO_LARGE, VL_ERR_OUT_OF_MEMORY. */
VL_API vl_status vl_broadphase_add(vl_broadphase* bp, const vl_aabb* boxes, uint32_t count, uint32_t flags,
                                   uint32_t* out_handles);

/* Gives objects handles[k] the new boxes[k]. Static objects may be moved too (at a dynamic
 * object's cost). Errors: VL_ERR_INVALID_ARGUMENT (NULL arrays with count > 0),
 * VL_ERR_INVALID_HANDLE (unknown or removed), VL_ERR_DUPLICATE_HANDLE (a handle twice in the
 * batch), VL_ERR_INVALID_BOUNDS, VL_ERR_OUT_OF_MEMORY. */
VL_API vl_status vl_broadphase_update(vl_broadphase* bp, const uint32_t* handles, const vl_aabb* boxes,
                                      uint32_t count);

/* Removes the objects; their pairs are reported deleted at the next commit.
 * Errors: VL_ERR_INVALID_ARGUMENT, VL_ERR_INVALID_HANDLE, VL_ERR_DUPLICATE_HANDLE. */
VL_API vl_status vl_broadphase_remove(vl_broadphase* bp, const uint32_t* handles, uint32_t count);

/* Brings the pair set up to date and appends the pairs that began (created) and ceased (deleted)
 * to overlap since the last commit; either buffer may be NULL. A pair that began and ceased in
 * between is in neither. Buffers given leave with storage (pairs != NULL), even when empty.
 * Errors: VL_ERR_INVALID_ARGUMENT (bp NULL, inconsistent buffer), VL_ERR_OUT_OF_MEMORY (buffers
 * and broadphase unchanged; commit again later). */
VL_API vl_status vl_broadphase_commit(vl_broadphase* bp, vl_pair_buffer* created, vl_pair_buffer* deleted);

/* The overlapping pairs as of the last commit (unspecified order), valid until the next call that
 * changes bp; *count (count may be NULL) receives their number. Never NULL for a broadphase, even
 * with no pairs; NULL (and *count 0) when bp is NULL. */
VL_API const vl_pair* vl_broadphase_pairs(const vl_broadphase* bp, uint32_t* count);

/* Number of live objects; 0 for NULL. */
VL_API uint32_t vl_broadphase_count(const vl_broadphase* bp);

/* The box of a live object. Errors: VL_ERR_INVALID_ARGUMENT, VL_ERR_INVALID_HANDLE. */
VL_API vl_status vl_broadphase_get_box(const vl_broadphase* bp, uint32_t handle, vl_aabb* box);

/* User data of a pair of the last commit (desc flag VL_BROADPHASE_PAIR_USER_DATA). A new pair
 * starts with NULL. set: VL_ERR_INVALID_ARGUMENT when the pair does not exist, VL_ERR_INVALID_FLAGS
 * without the flag. get: NULL in those cases. */
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
