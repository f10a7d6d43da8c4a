/* Fuzzes the broadphases with state: a byte stream becomes a sequence of add, update, remove and
 * commit calls (with invalid boxes, flags and handles, duplicates, NULL arrays and failing
 * allocations mixed in) on every kind. A plain model of the objects predicts which calls must
 * succeed; after every call the broadphase must validate and hold exactly the model's boxes, and
 * after every commit its pairs, created and deleted lists must equal brute force. Each input runs
 * twice: as drawn, and with every box moved by a far offset of scenes.h (2^10 to 2^17 of either
 * sign, chosen by the input's last byte). */
#include "fuzz_util.h"
#include "scenes.h"
#include "test_alloc.h"

#define MAX_LIVE 48

typedef struct model {
    uint32_t handle[MAX_LIVE];
    vl_aabb box[MAX_LIVE];
    int is_static[MAX_LIVE];
    uint32_t live;
    vl_pair committed[MAX_LIVE * MAX_LIVE];
    uint32_t committed_count;
    uint32_t dead[16]; /* handles of removed objects (stale once removed) */
    uint32_t dead_count;
} model;

static test_alloc_hooks g_hooks; /* the budget makes one call's allocations fail */
static float g_offset;           /* of this pass (scenes.h): every box drawn is moved by it */

static vl_aabb fuzz_box(fuzz_input* in) {
    vl_aabb b;
    for (int a = 0; a < 3; a++) {
        b.min[a] = fuzz_coord(in);
        b.max[a] = b.min[a] + fabsf(fuzz_coord(in)); /* usually valid; NaN or inf - inf when not */
        if (fuzz_byte(in) == 7) b.max[a] = b.min[a] - 1.0f; /* inverted */
    }
    scene_move_boxes(&b, 1, g_offset);
    return b;
}

static uint32_t brute_pairs(const model* m, vl_pair* out) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->live; i++)
        for (uint32_t j = i + 1; j < m->live; j++) {
            if ((m->is_static[i] && m->is_static[j]) || !test_box_overlap(&m->box[i], &m->box[j])) continue;
            uint32_t a = m->handle[i], b = m->handle[j];
            out[n++] = a < b ? (vl_pair){a, b} : (vl_pair){b, a};
        }
    qsort(out, n, sizeof *out, test_pair_cmp);
    return n;
}

/* Pairs in `x` and not in `y`, both sorted. */
static uint32_t difference(const vl_pair* x, uint32_t nx, const vl_pair* y, uint32_t ny, vl_pair* out) {
    uint32_t n = 0, j = 0;
    for (uint32_t i = 0; i < nx; i++) {
        while (j < ny && test_pair_cmp(&y[j], &x[i]) < 0) j++;
        if (j == ny || test_pair_cmp(&y[j], &x[i]) != 0) out[n++] = x[i];
    }
    return n;
}

static void check_same_pairs(vl_pair* got, uint32_t n, const vl_pair* want, uint32_t wn, const char* what) {
    if (n) qsort(got, n, sizeof *got, test_pair_cmp);
    FUZZ_CHECK(n == wn, "%s: %u pairs, brute force %u", what, n, wn);
    for (uint32_t i = 0; i < n; i++)
        FUZZ_CHECK(got[i].a == want[i].a && got[i].b == want[i].b, "%s: pair %u is (%u,%u), want (%u,%u)", what,
                   i, got[i].a, got[i].b, want[i].a, want[i].b);
}

/* The broadphase holds exactly the model's objects and is internally consistent. */
static void check_state(const vl_broadphase* bp, const model* m) {
    FUZZ_CHECK(vl_broadphase_validate(bp) == VL_OK, "validate failed");
    FUZZ_CHECK(vl_broadphase_get_count(bp) == m->live, "count %u, model %u", vl_broadphase_get_count(bp), m->live);
    for (uint32_t i = 0; i < m->live; i++) {
        vl_aabb got;
        FUZZ_CHECK(vl_broadphase_get_box(bp, m->handle[i], &got) == VL_OK, "live handle %u unknown", m->handle[i]);
        FUZZ_CHECK(memcmp(&got, &m->box[i], sizeof got) == 0, "box of handle %u changed", m->handle[i]);
    }
}

static int find_live(const model* m, uint32_t handle) {
    for (uint32_t i = 0; i < m->live; i++)
        if (m->handle[i] == handle) return (int)i;
    return -1;
}

/* A handle for update/remove: usually live, sometimes stale (removed, its index perhaps given
 * again since) or made up. */
static uint32_t pick_handle(fuzz_input* in, const model* m) {
    uint8_t b = fuzz_byte(in);
    if (m->live && b < 200) return m->handle[b % m->live];
    if (m->dead_count && b < 230) return m->dead[b % (m->dead_count < 16 ? m->dead_count : 16)];
    return b % 4 == 0 ? 0xFFFFFFFFu : (uint32_t)(b % 64);
}

static void check_status(vl_status got, vl_status want, int may_oom, const char* what) {
    FUZZ_CHECK(got == want || (may_oom && got == VL_ERR_OUT_OF_MEMORY), "%s: %s, want %s", what,
               vl_status_string(got), vl_status_string(want));
}

static void run(fuzz_input* in, vl_broadphase_kind kind) {
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    desc.kind = kind;
    vl_broadphase* bp = NULL;
    FUZZ_CHECK(vl_broadphase_create(&desc, &bp) == VL_OK && bp, "create");
    static model m;
    memset(&m, 0, sizeof m);
    static vl_pair want[MAX_LIVE * MAX_LIVE], diff[MAX_LIVE * MAX_LIVE], got[MAX_LIVE * MAX_LIVE];
    vl_pair_buffer created = {0}, deleted = {0};

    while (!fuzz_done(in)) {
        uint8_t op = fuzz_byte(in);
        uint32_t k = 1 + fuzz_byte(in) % 8;
        int may_oom = 0;
        if (op & 0x80) { /* this call's allocations fail after a few */
            g_hooks.budget = op & 3;
            may_oom = 1;
        }
        uint32_t handles[8];
        vl_aabb boxes[8];
        switch (op % 6) {
        case 0: { /* add */
            if (m.live + k > MAX_LIVE) break;
            uint8_t f = fuzz_byte(in);
            uint32_t flags = f == 0xFF ? 2u : (f & 1 ? VL_STATIC : 0u);
            int valid = flags != 2u;
            for (uint32_t i = 0; i < k; i++) boxes[i] = fuzz_box(in), valid &= test_box_valid(&boxes[i]);
            vl_status s = vl_broadphase_add(bp, handles, boxes, k, flags);
            if (valid)
                check_status(s, VL_OK, may_oom, "add");
            else
                FUZZ_CHECK(s == VL_ERR_INVALID_FLAGS || s == VL_ERR_INVALID_BOUNDS, "bad add: %s", vl_status_string(s));
            if (s != VL_OK) break;
            for (uint32_t i = 0; i < k; i++) {
                FUZZ_CHECK(find_live(&m, handles[i]) < 0, "add gave live handle %u again", handles[i]);
                m.handle[m.live] = handles[i];
                m.box[m.live] = boxes[i];
                m.is_static[m.live++] = (flags & VL_STATIC) != 0;
            }
            break;
        }
        case 1:   /* update */
        case 2: { /* remove */
            int bad_handle = 0, duplicate = 0, bad_box = 0;
            for (uint32_t i = 0; i < k; i++) {
                handles[i] = pick_handle(in, &m);
                bad_handle |= find_live(&m, handles[i]) < 0;
                for (uint32_t j = 0; j < i; j++) duplicate |= handles[j] == handles[i];
                if (op % 6 == 1) boxes[i] = fuzz_box(in), bad_box |= !test_box_valid(&boxes[i]);
            }
            vl_status s =
                op % 6 == 1 ? vl_broadphase_update(bp, handles, boxes, k) : vl_broadphase_remove(bp, handles, k);
            if (k > m.live) /* refused before a handle is read */
                FUZZ_CHECK(s == VL_ERR_TOO_LARGE, "batch of %u over %u live: %s", k, m.live, vl_status_string(s));
            else if (bad_handle || duplicate || bad_box)
                FUZZ_CHECK(s == VL_ERR_INVALID_HANDLE || s == VL_ERR_DUPLICATE_HANDLE || s == VL_ERR_INVALID_BOUNDS,
                           "bad batch accepted: %s", vl_status_string(s));
            else
                check_status(s, VL_OK, may_oom, op % 6 == 1 ? "update" : "remove");
            if (s != VL_OK) break;
            for (uint32_t i = 0; i < k; i++) {
                int at = find_live(&m, handles[i]);
                if (op % 6 == 1) {
                    m.box[at] = boxes[i];
                } else {
                    m.dead[m.dead_count++ % 16] = handles[i];
                    m.live--;
                    m.handle[at] = m.handle[m.live], m.box[at] = m.box[m.live], m.is_static[at] = m.is_static[m.live];
                }
            }
            break;
        }
        case 3: { /* commit */
            created.count = deleted.count = 0;
            vl_status s = vl_broadphase_commit(bp, &created, &deleted);
            check_status(s, VL_OK, may_oom, "commit");
            if (s != VL_OK) break;
            g_hooks.budget = -1; /* the pair list as handles may need memory that the commit could not get */
            uint32_t nwant = brute_pairs(&m, want), count = 0;
            const vl_pair* pairs = vl_broadphase_get_pairs(bp, &count);
            FUZZ_CHECK(pairs != NULL, "no pairs");
            FUZZ_CHECK(count <= MAX_LIVE * MAX_LIVE, "pair count %u", count);
            if (count) memcpy(got, pairs, count * sizeof *got);
            check_same_pairs(got, count, want, nwant, "pairs");
            uint32_t nd = difference(want, nwant, m.committed, m.committed_count, diff);
            check_same_pairs(created.pairs, created.count, diff, nd, "created");
            nd = difference(m.committed, m.committed_count, want, nwant, diff);
            check_same_pairs(deleted.pairs, deleted.count, diff, nd, "deleted");
            if (nwant) memcpy(m.committed, want, nwant * sizeof *want);
            m.committed_count = nwant;
            break;
        }
        case 4: /* NULL arrays */
            FUZZ_CHECK(vl_broadphase_add(bp, handles, NULL, k, 0) == VL_ERR_INVALID_ARGUMENT, "add NULL boxes");
            FUZZ_CHECK(vl_broadphase_update(bp, NULL, boxes, k) == VL_ERR_INVALID_ARGUMENT, "update NULL handles");
            FUZZ_CHECK(vl_broadphase_remove(bp, NULL, k) == VL_ERR_INVALID_ARGUMENT, "remove NULL handles");
            break;
        default: { /* a commit that does not ask for the lists: the pair set still moves on */
            vl_status s = vl_broadphase_commit(bp, NULL, NULL);
            check_status(s, VL_OK, may_oom, "commit without lists");
            if (s == VL_OK) m.committed_count = brute_pairs(&m, m.committed);
            break;
        }
        }
        g_hooks.budget = -1;
        check_state(bp, &m);
    }
    vl_pair_buffer_free(&created);
    vl_pair_buffer_free(&deleted);
    vl_broadphase_destroy(bp);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    test_alloc_begin(&g_hooks);
    size_t before = vl_get_bytes_in_use();
    static const vl_broadphase_kind kinds[] = {VL_BROADPHASE_SAP, VL_BROADPHASE_BOX_PRUNING, VL_BROADPHASE_STATIC_SAP,
                                               VL_BROADPHASE_MULTI_SAP, VL_BROADPHASE_GRID, VL_BROADPHASE_TREE};
    for (int pass = 0; pass < 2; pass++) {
        g_offset = pass ? fuzz_far_offset(data, size) : 0.0f;
        fuzz_input in = {data, size, 1};
        run(&in, kinds[size ? data[0] % 6 : 0]);
    }
    FUZZ_CHECK(vl_get_bytes_in_use() == before && g_hooks.bytes == 0, "leaked %zu bytes", vl_get_bytes_in_use() - before);
    test_alloc_end(&g_hooks);
    return 0;
}
