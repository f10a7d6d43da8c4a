/* Broadphases (every kind) against brute force: random sequences of add / update / remove /
 * commit on every scene, checked after every commit (pair set, created, deleted); static objects;
 * sleeping worlds; the same movers frame after frame; bad input changes nothing; failing
 * allocations change nothing and leak nothing; no allocation per frame once warm; pair user data. */
#include <stdint.h>

#include <volley/volley.h>

#include "test_sap_scenes.h"
#include "test_util.h"

static const vl_broadphase_kind kinds[] = {VL_BROADPHASE_SAP, VL_BROADPHASE_BOX_PRUNING, VL_BROADPHASE_STATIC_SAP,
                                           VL_BROADPHASE_MULTI_SAP, VL_BROADPHASE_GRID, VL_BROADPHASE_TREE};
static const char* const kind_names[] = {"sap", "box_pruning", "static_sap", "multi_sap", "grid", "tree"};
#define KIND_COUNT 6

/* The desc's cell_size for the two grid kinds (0: chosen from the boxes). */
static float g_cell_size;

static vl_broadphase_desc kind_desc(int kind) {
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    desc.kind = kinds[kind];
    desc.cell_size = g_cell_size;
    return desc;
}

/* The index of a handle (its slot in the mirror). */
#define SLOT(h) VL_HANDLE_INDEX(h)

/* What the test believes, by handle index (slot): boxes, the current handle, alive and static
 * flags, slots freed since the last commit. */
typedef struct mirror {
    vl_aabb* box;
    uint32_t* handle; /* the last handle given for each slot */
    uint8_t *live, *stat, *freed, *used;
    uint32_t cap, slots;
    uint32_t* list; /* live handles, rebuilt on demand */
    uint32_t alive;
    pair_list prev, now, diff, got;
} mirror;

static void mirror_init(mirror* m, uint32_t cap) {
    memset(m, 0, sizeof *m);
    m->cap = cap;
    m->box = calloc(cap, sizeof *m->box);
    m->handle = calloc(cap, sizeof *m->handle);
    m->used = calloc(cap, 1);
    m->live = calloc(cap, 1);
    m->stat = calloc(cap, 1);
    m->freed = calloc(cap, 1);
    m->list = calloc(cap, sizeof *m->list);
}

static void mirror_free(mirror* m) {
    free(m->box), free(m->handle), free(m->used), free(m->live), free(m->stat), free(m->freed), free(m->list);
    free(m->prev.p), free(m->now.p), free(m->diff.p), free(m->got.p);
}

static uint32_t mirror_list(mirror* m) {
    uint32_t n = 0;
    for (uint32_t h = 0; h < m->slots; h++)
        if (m->live[h]) m->list[n++] = m->handle[h];
    return n;
}

/* Picks k distinct live handles into m->list[0, k) (partial shuffle). */
static uint32_t mirror_pick(mirror* m, test_rng* r, uint32_t k) {
    uint32_t n = mirror_list(m);
    if (k > n) k = n;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t j = i + test_u32(r, n - i);
        uint32_t t = m->list[i];
        m->list[i] = m->list[j];
        m->list[j] = t;
    }
    return k;
}

static vl_pair_buffer g_created, g_deleted;

/* Pairs of handles as pairs of slots in l (sorted), each handle checked to be its slot's current
 * one and each pair (lower handle, higher handle). */
static void copy_as_slots(const mirror* m, pair_list* l, const vl_pair* p, uint32_t n, const char* what) {
    l->n = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = SLOT(p[i].a), b = SLOT(p[i].b);
        int known = a < m->slots && b < m->slots && m->handle[a] == p[i].a && m->handle[b] == p[i].b;
        CHECK(known, "%s: pair (%u, %u) of handles not given", what, p[i].a, p[i].b);
        CHECK(p[i].a < p[i].b, "%s: pair (%u, %u) not low-high", what, p[i].a, p[i].b);
        pair_list_push(l, a, b);
    }
    pairs_normalize(l->p, l->n);
}

/* When set, run_sequence's broadphases commit on it (vl_broadphase_desc.context). */
static vl_context* g_commit_ctx;

/* Commits and checks the pair set and the created / deleted lists against brute force. */
static void commit_and_check(vl_broadphase* bp, mirror* m, const char* what) {
    g_created.count = g_deleted.count = 0;
    vl_status s = vl_broadphase_commit(bp, &g_created, &g_deleted);
    CHECK(s == VL_OK, "%s: commit %s", what, vl_status_string(s));
    CHECK(vl_broadphase_validate(bp) == VL_OK, "%s: validate after commit", what);
    brute_pairs(&m->now, m->box, m->live, m->stat, m->slots);
    uint32_t n = 0;
    const vl_pair* pairs = vl_broadphase_get_pairs(bp, &n);
    copy_as_slots(m, &m->got, pairs, n, what);
    CHECK(pair_list_equal(m->got.p, m->got.n, m->now.p, m->now.n), "%s: %u pairs, brute force %u", what, m->got.n,
          m->now.n);
    pair_list_minus(&m->diff, &m->now, &m->prev);
    copy_as_slots(m, &m->got, g_created.pairs, g_created.count, what);
    CHECK(pair_list_equal(m->got.p, m->got.n, m->diff.p, m->diff.n), "%s: %u created, expected %u", what, m->got.n,
          m->diff.n);
    pair_list_minus(&m->diff, &m->prev, &m->now);
    copy_as_slots(m, &m->got, g_deleted.pairs, g_deleted.count, what);
    CHECK(pair_list_equal(m->got.p, m->got.n, m->diff.p, m->diff.n), "%s: %u deleted, expected %u", what, m->got.n,
          m->diff.n);
    memset(m->freed, 0, m->cap);
    pair_list t = m->prev;
    m->prev = m->now;
    m->now = t;
}

/* The mirror takes handle h (just given by add) for a new object. */
static int mirror_take(mirror* m, uint32_t h, const vl_aabb* box, int is_static) {
    uint32_t slot = SLOT(h);
    int fine = slot < m->cap && !m->live[slot] && !m->freed[slot] && (!m->used[slot] || m->handle[slot] != h);
    CHECK(fine, "add gave handle %u (slot %u): live, freed since the last commit, or not a new generation", h, slot);
    if (!fine) return 0;
    m->live[slot] = m->used[slot] = 1;
    m->handle[slot] = h;
    m->stat[slot] = (uint8_t)is_static;
    m->box[slot] = *box;
    if (slot >= m->slots) m->slots = slot + 1;
    m->alive++;
    return 1;
}

static void do_add(vl_broadphase* bp, mirror* m, test_rng* r, int scene, uint32_t k, uint32_t flags) {
    vl_aabb* boxes = calloc(k + 1, sizeof *boxes);
    uint32_t* handles = malloc(k * sizeof *handles);
    for (uint32_t i = 0; i < k; i++) boxes[i] = scene_box(r, scene);
    vl_status s = vl_broadphase_add(bp, handles, boxes, k, flags);
    CHECK(s == VL_OK, "add %u: %s", k, vl_status_string(s));
    if (s == VL_OK)
        for (uint32_t i = 0; i < k; i++) mirror_take(m, handles[i], &boxes[i], (flags & VL_STATIC) != 0);
    free(boxes);
    free(handles);
}

/* Gives the k boxes of handles the boxes `to`. */
static void do_place(vl_broadphase* bp, mirror* m, const uint32_t* handles, const vl_aabb* to, uint32_t k) {
    vl_status s = vl_broadphase_update(bp, handles, to, k);
    CHECK(s == VL_OK, "update %u: %s", k, vl_status_string(s));
    if (s == VL_OK)
        for (uint32_t i = 0; i < k; i++) m->box[SLOT(handles[i])] = to[i];
}

/* Moves the k boxes of handles a little (or to where they are, when sleeping). */
static void do_update_list(vl_broadphase* bp, mirror* m, test_rng* r, int scene, const uint32_t* handles, uint32_t k,
                           int sleeping) {
    vl_aabb* boxes = calloc(k + 1, sizeof *boxes);
    for (uint32_t i = 0; i < k; i++)
        boxes[i] = sleeping ? m->box[SLOT(handles[i])] : scene_step(r, scene, m->box[SLOT(handles[i])]);
    do_place(bp, m, handles, boxes, k);
    free(boxes);
}

static void do_update(vl_broadphase* bp, mirror* m, test_rng* r, int scene, uint32_t k, int sleeping) {
    k = mirror_pick(m, r, k);
    do_update_list(bp, m, r, scene, m->list, k, sleeping);
}

static void do_remove(vl_broadphase* bp, mirror* m, test_rng* r, uint32_t k) {
    k = mirror_pick(m, r, k);
    vl_status s = vl_broadphase_remove(bp, m->list, k);
    CHECK(s == VL_OK, "remove %u: %s", k, vl_status_string(s));
    if (s == VL_OK) {
        for (uint32_t i = 0; i < k; i++) m->live[SLOT(m->list[i])] = 0, m->freed[SLOT(m->list[i])] = 1;
        m->alive -= k;
    }
}

/* A random sequence: batches of 1 to max_batch, at most max_objects alive, a commit every few ops. */
static void run_sequence(int kind, int scene, uint64_t seed, uint32_t steps, uint32_t max_batch, uint32_t max_objects,
                         int sleeping) {
    char what[96];
    snprintf(what, sizeof what, "%s/%s%s seed %llu at %g cells %g", kind_names[kind], scene_names[scene],
             sleeping ? "/sleeping" : "", (unsigned long long)seed, g_scene_offset, g_cell_size);
    test_rng r = {seed};
    vl_broadphase_desc desc = kind_desc(kind);
    desc.context = g_commit_ctx;
    vl_broadphase* bp = NULL;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "%s: create", what);
    if (!bp) return;
    mirror m;
    uint32_t max_scene = scene == SCENE_IDENTICAL ? 400 : max_objects;
    mirror_init(&m, 2 * max_scene + max_batch + 16); /* live, and removed until the next commit */
    for (uint32_t step = 0; step < steps; step++) {
        uint32_t op = test_u32(&r, 10);
        uint32_t k = 1 + test_u32(&r, test_u32(&r, 4) == 0 ? max_batch : (max_batch < 40 ? max_batch : 40));
        if (op < 3 || m.alive < 8) {
            if (m.alive + k > max_scene) k = max_scene > m.alive ? max_scene - m.alive : 0;
            if (k) do_add(bp, &m, &r, scene, k, test_u32(&r, 4) == 0 ? VL_STATIC : 0);
        } else if (op < 6) {
            do_update(bp, &m, &r, scene, k, sleeping);
        } else if (op < 8) {
            do_remove(bp, &m, &r, k < m.alive / 2 ? k : m.alive / 2);
        } else {
            commit_and_check(bp, &m, what);
        }
        CHECK(vl_broadphase_validate(bp) == VL_OK, "%s: validate after step %u op %u", what, step, op);
        CHECK(vl_broadphase_get_count(bp) == m.alive, "%s: count %u, expected %u", what, vl_broadphase_get_count(bp), m.alive);
    }
    commit_and_check(bp, &m, what);
    /* everything gone: every pair deleted */
    uint32_t n = mirror_list(&m);
    CHECK(vl_broadphase_remove(bp, m.list, n) == VL_OK, "%s: remove all", what);
    memset(m.live, 0, m.cap);
    m.alive = 0;
    commit_and_check(bp, &m, what);
    uint32_t count = 1;
    vl_broadphase_get_pairs(bp, &count);
    CHECK(count == 0 && vl_broadphase_get_count(bp) == 0, "%s: not empty", what);
    vl_broadphase_destroy(bp);
    mirror_free(&m);
}

static void test_sequences(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int scene = 0; scene < SCENE_COUNT; scene++) {
            run_sequence(kind, scene, 1000 + (uint64_t)scene, test_scaled(500), 60, test_scaled(2500), 0);
            run_sequence(kind, scene, 2000 + (uint64_t)scene, test_scaled(80), 2000, test_scaled(5000), 0);
        }
    for (int kind = 0; kind < KIND_COUNT; kind++)
        run_sequence(kind, SCENE_UNIFORM, 77, test_scaled(200), 100, test_scaled(3000), 1);
    /* batches up to 10,000 */
    for (int kind = 0; kind < KIND_COUNT; kind++)
        run_sequence(kind, SCENE_UNIFORM, 4242, test_scaled(24), test_scaled(10000), test_scaled(15000), 0);
}

/* Every kind on every scene, and the border scene on 8-unit cells and on cells chosen from the
 * boxes, at every offset of scenes.h (smaller sequences; at the odd ones, 2^10, 2^13 and 2^17, the
 * commits run on 3 workers of the pool); the mover mix and the persistent movers once more at a
 * far offset each, rotated over the offsets (kind + scene). */
static void test_mover_mix(int far);
static void test_persistent_movers(int far);

static void test_offsets(void) {
    vl_thread_pool* pool = NULL;
    vl_context* ctx = NULL;
    if (vl_thread_pool_create(3, &pool) == VL_OK) {
        vl_task_system sys = vl_thread_pool_get_task_system(pool);
        CHECK(vl_context_create(&sys, &ctx) == VL_OK, "pool context");
    }
    for (uint32_t k = 0; k < SCENE_OFFSET_COUNT; k++) {
        g_scene_offset = scene_offset(k);
        g_commit_ctx = k % 2 ? ctx : NULL;
        for (int kind = 0; kind < KIND_COUNT; kind++)
            for (int scene = k ? 0 : SCENE_BORDER; scene <= SCENE_BORDER; scene++)
                for (int cells = 0; cells < (scene == SCENE_BORDER ? 2 : 1); cells++) {
                    g_cell_size = cells ? 0.0f : 8.0f;
                    if (scene != SCENE_BORDER) g_cell_size = 0.0f;
                    run_sequence(kind, scene, 3000 + 16 * (uint64_t)k + (uint64_t)scene, test_scaled(80), 40,
                                 test_scaled(300), scene == SCENE_UNIFORM && k % 2);
                }
    }
    g_cell_size = 0.0f;
    g_commit_ctx = NULL;
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
    test_mover_mix(1);
    test_persistent_movers(1);
    g_scene_offset = 0.0f;
}

/* A broadphase of `kind` and its mirror (room for n + 64 handles), holding `fixed` static boxes of
 * the scene and then `moving` others, committed; NULL (mirror untouched) on failure. */
static vl_broadphase* world_start(int kind, int scene, test_rng* r, mirror* m, uint32_t n, uint32_t fixed,
                                  uint32_t moving) {
    vl_broadphase_desc desc = kind_desc(kind);
    vl_broadphase* bp = NULL;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "create");
    if (!bp) return NULL;
    mirror_init(m, n + 64);
    do_add(bp, m, r, scene, fixed, VL_STATIC);
    do_add(bp, m, r, scene, moving, 0);
    commit_and_check(bp, m, "world start");
    return bp;
}

/* A commit after every batch, the movers from one box to all of them (per mille of the alive ones),
 * with statics, adds and removes among them: the box-pruning kind goes back and forth between its
 * incremental commit (a quarter of the objects or fewer moved) and its full one, the SAP between
 * walking and rebuilding. */
static void test_mover_mix(int far) {
    static const uint32_t per_mille[] = {0, 1, 100, 5, 249, 251, 1000, 20, 0, 400, 30, 2, 60};
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int scene = 0; scene < SCENE_COUNT; scene++) {
            test_rng r = {31 + (uint64_t)scene};
            uint32_t n = scene == SCENE_IDENTICAL ? 300 : test_scaled(far ? 600 : 3000);
            if (n < 100) n = 100; /* the world below starts with n - n / 4 - 40 movers */
            g_scene_offset = far ? scene_offset(1 + (uint32_t)(kind + scene) % (SCENE_OFFSET_COUNT - 1)) : 0.0f;
            mirror m;
            vl_broadphase* bp = world_start(kind, scene, &r, &m, n, n / 4, n - n / 4 - 40);
            if (!bp) continue;
            for (uint32_t step = 0; step < 3 * sizeof per_mille / sizeof *per_mille; step++) {
                uint32_t k = m.alive * per_mille[step % (sizeof per_mille / sizeof *per_mille)] / 1000;
                if (k) do_update(bp, &m, &r, scene, k, 0);
                if (step % 4 == 1) do_add(bp, &m, &r, scene, 1 + test_u32(&r, 10), step % 8 == 1 ? VL_STATIC : 0);
                if (step % 4 == 3) do_remove(bp, &m, &r, 1 + test_u32(&r, 10));
                commit_and_check(bp, &m, "mover mix");
            }
            vl_broadphase_destroy(bp);
            mirror_free(&m);
        }
}

/* The same movers frame after frame, as in a game: the box-pruning kind keeps their entries of its
 * sorted set stale while they keep moving, and merges them in again when some stop, die, or others
 * join; a frame with most boxes moving takes the full commit in between. */
static void test_persistent_movers(int far) {
    for (int kind = 0; kind < KIND_COUNT; kind++)
        for (int scene = 0; scene < SCENE_COUNT; scene++) {
            test_rng r = {77 + (uint64_t)scene};
            uint32_t n = scene == SCENE_IDENTICAL ? 300 : test_scaled(far ? 500 : 2000);
            g_scene_offset = far ? scene_offset(2 + (uint32_t)(kind + scene) % (SCENE_OFFSET_COUNT - 1)) : 0.0f;
            mirror m;
            vl_broadphase* bp = world_start(kind, scene, &r, &m, n, n / 8, n - n / 8);
            if (!bp) continue;
            /* the dynamic boxes first: the groups below move them */
            uint32_t group = n / 10, alive = mirror_list(&m), fixed = n / 8;
            uint32_t* movers = malloc(alive * sizeof *movers);
            memcpy(movers, m.list + fixed, (alive - fixed) * sizeof *movers);
            memcpy(movers + alive - fixed, m.list, fixed * sizeof *movers);
            vl_aabb* onto = malloc((group + 1) * sizeof *onto);
            for (uint32_t frame = 0; frame < 40; frame++) {
                /* the first group moves every frame; in frames 4 to 7 a second group jumps onto it
                 * (from frame 8 on, its stale entries would miss those pairs) */
                do_update_list(bp, &m, &r, scene, movers, frame == 20 ? alive * 3 / 4 : group, 0);
                for (uint32_t i = 0; i < group; i++) onto[i] = m.box[SLOT(movers[i])];
                if (frame >= 4 && frame < 8) do_place(bp, &m, movers + group, onto, group);
                if (frame == 15) { /* a stale mover dies: its entry goes */
                    CHECK(vl_broadphase_remove(bp, movers, 1) == VL_OK, "remove a mover");
                    m.live[SLOT(movers[0])] = 0, m.freed[SLOT(movers[0])] = 1, m.alive--;
                    movers[0] = movers[--alive];
                }
                if (frame == 17) do_add(bp, &m, &r, scene, 3, 0);
                commit_and_check(bp, &m, "persistent movers");
            }
            free(movers);
            free(onto);
            vl_broadphase_destroy(bp);
            mirror_free(&m);
        }
}

/* Moves every box exactly on top of every other static box: static pairs are never reported. */
static void test_static(void) {
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase_desc desc = kind_desc(kind);
        vl_broadphase* bp = NULL;
        CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "create");
        vl_aabb box = {{0, 0, 0}, {1, 1, 1}};
        vl_aabb boxes[8];
        for (int i = 0; i < 8; i++) boxes[i] = box;
        uint32_t hs[8], hd[2];
        CHECK(vl_broadphase_add(bp, hs, boxes, 8, VL_STATIC) == VL_OK, "add static");
        CHECK(vl_broadphase_add(bp, hd, boxes, 2, 0) == VL_OK, "add dynamic");
        g_created.count = 0;
        CHECK(vl_broadphase_commit(bp, &g_created, NULL) == VL_OK, "commit");
        CHECK(g_created.count == 17, "%s: %u pairs, expected 16 static-dynamic + 1 dynamic", kind_names[kind],
              g_created.count);
        for (uint32_t i = 0; i < g_created.count; i++) {
            vl_pair p = g_created.pairs[i];
            CHECK(p.b == hd[0] || p.b == hd[1] || p.a == hd[0] || p.a == hd[1], "static-static pair %u %u", p.a, p.b);
        }
        /* moving statics onto each other changes nothing */
        vl_aabb moved[8];
        for (int i = 0; i < 8; i++) moved[i] = (vl_aabb){{0.5f, 0, 0}, {1.5f, 1, 1}};
        CHECK(vl_broadphase_update(bp, hs, moved, 8) == VL_OK, "update statics");
        g_created.count = g_deleted.count = 0;
        CHECK(vl_broadphase_commit(bp, &g_created, &g_deleted) == VL_OK, "commit");
        CHECK(g_created.count == 0 && g_deleted.count == 0, "%s: static moves made %u/%u changes", kind_names[kind],
              g_created.count, g_deleted.count);
        CHECK(vl_broadphase_validate(bp) == VL_OK, "validate");
        vl_broadphase_destroy(bp);
    }
}

typedef struct bad_case {
    vl_status got, want;
    const char* what;
} bad_case;

/* Each bad call gets its status, and the next commit reports nothing: the state did not change. */
static void test_bad_input(void) {
    vl_broadphase* bp = NULL;
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    CHECK(vl_broadphase_create(&desc, NULL) == VL_ERR_INVALID_ARGUMENT, "create NULL out");
    desc.kind = (vl_broadphase_kind)7;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_ERR_INVALID_FLAGS && !bp, "unknown kind");
    desc = vl_broadphase_default_desc();
    desc.flags = 0x10;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_ERR_INVALID_FLAGS && !bp, "unknown desc flags");
    desc.kind = VL_BROADPHASE_BOX_PRUNING;
    desc.flags = VL_BROADPHASE_PAIR_USER_DATA;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_ERR_INVALID_FLAGS && !bp, "user data on box pruning");
    desc = vl_broadphase_default_desc();
    desc.expected_objects = 0xFFFFFFFFu;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_ERR_TOO_LARGE && !bp, "expected objects past the limit");
    desc.expected_objects = 5000;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_OK && bp, "expected objects reserved");
    vl_broadphase_destroy(bp);
    bp = NULL;
    CHECK(vl_broadphase_create(NULL, &bp) == VL_OK && bp, "NULL desc means the default");
    vl_broadphase_destroy(bp);
    bp = NULL;
    CHECK(vl_broadphase_commit(NULL, NULL, NULL) == VL_ERR_INVALID_ARGUMENT, "commit NULL");
    CHECK(vl_broadphase_validate(NULL) == VL_ERR_INVALID_ARGUMENT, "validate NULL");
    uint32_t count = 5;
    CHECK(vl_broadphase_get_pairs(NULL, &count) == NULL && count == 0, "pairs NULL");
    vl_broadphase_destroy(NULL);

    for (int kind = 0; kind < KIND_COUNT; kind++) {
        desc = kind_desc(kind);
        CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "create");
        test_rng r = {99};
        mirror m;
        mirror_init(&m, 400);
        do_add(bp, &m, &r, SCENE_CLUSTERED, 300, 0);
        do_remove(bp, &m, &r, 20);
        commit_and_check(bp, &m, "bad input setup");
        uint32_t removed = 0;
        while (m.live[removed]) removed++;
        removed = m.handle[removed];
        uint32_t live = mirror_list(&m);
        uint32_t h[4] = {m.list[0], m.list[1], m.list[2], m.list[3]};
        vl_aabb good = {{1, 2, 3}, {4, 5, 6}};
        vl_aabb boxes[4] = {good, good, good, good};
        uint32_t out[4];
        float nan = test_bits_float(0x7FC00000u);
        bad_case cases[32];
        int n = 0;
#define BAD(call, status) cases[n++] = (bad_case){call, status, #call}
        (void)live;
        BAD(vl_broadphase_add(NULL, out, boxes, 1, 0), VL_ERR_INVALID_ARGUMENT);
        BAD(vl_broadphase_add(bp, out, NULL, 1, 0), VL_ERR_INVALID_ARGUMENT);
        BAD(vl_broadphase_add(bp, NULL, boxes, 1, 0), VL_ERR_INVALID_ARGUMENT);
        BAD(vl_broadphase_add(bp, out, boxes, 1, 2), VL_ERR_INVALID_FLAGS);
        boxes[3].min[1] = nan;
        BAD(vl_broadphase_add(bp, out, boxes, 4, 0), VL_ERR_INVALID_BOUNDS);
        BAD(vl_broadphase_update(bp, h, boxes, 4), VL_ERR_INVALID_BOUNDS);
        boxes[3] = good;
        boxes[2].max[0] = nan;
        BAD(vl_broadphase_add(bp, out, boxes, 4, 0), VL_ERR_INVALID_BOUNDS);
        boxes[2] = good;
        boxes[1].min[2] = 7; /* min > max */
        BAD(vl_broadphase_add(bp, out, boxes, 4, VL_STATIC), VL_ERR_INVALID_BOUNDS);
        BAD(vl_broadphase_update(bp, h, boxes, 4), VL_ERR_INVALID_BOUNDS);
        boxes[1] = good;
        BAD(vl_broadphase_update(bp, NULL, boxes, 1), VL_ERR_INVALID_ARGUMENT);
        BAD(vl_broadphase_update(bp, h, NULL, 1), VL_ERR_INVALID_ARGUMENT);
        uint32_t unknown[4] = {h[0], h[1], 100000, h[3]};
        BAD(vl_broadphase_update(bp, unknown, boxes, 4), VL_ERR_INVALID_HANDLE);
        BAD(vl_broadphase_remove(bp, unknown, 4), VL_ERR_INVALID_HANDLE);
        uint32_t gone[4] = {h[0], h[1], h[2], removed};
        BAD(vl_broadphase_update(bp, gone, boxes, 4), VL_ERR_INVALID_HANDLE);
        BAD(vl_broadphase_remove(bp, gone, 4), VL_ERR_INVALID_HANDLE);
        uint32_t dup[4] = {h[0], h[1], h[2], h[1]};
        BAD(vl_broadphase_update(bp, dup, boxes, 4), VL_ERR_DUPLICATE_HANDLE);
        BAD(vl_broadphase_remove(bp, dup, 4), VL_ERR_DUPLICATE_HANDLE);
        BAD(vl_broadphase_remove(bp, NULL, 2), VL_ERR_INVALID_ARGUMENT);
        BAD(vl_broadphase_remove(NULL, h, 2), VL_ERR_INVALID_ARGUMENT);
        vl_pair_buffer broken = {NULL, 3, 2};
        BAD(vl_broadphase_commit(bp, &broken, NULL), VL_ERR_INVALID_ARGUMENT);
        BAD(vl_broadphase_commit(bp, &g_created, &g_created), VL_ERR_INVALID_ARGUMENT);
        BAD(vl_broadphase_set_pair_user_data(bp, h[0], h[1], NULL), VL_ERR_INVALID_FLAGS);
        vl_aabb got;
        BAD(vl_broadphase_get_box(bp, removed, &got), VL_ERR_INVALID_HANDLE);
        BAD(vl_broadphase_get_box(bp, h[0], NULL), VL_ERR_INVALID_ARGUMENT);
#undef BAD
        for (int i = 0; i < n; i++)
            CHECK(cases[i].got == cases[i].want, "%s: %s gave %s, expected %s", kind_names[kind], cases[i].what,
                  vl_status_string(cases[i].got), vl_status_string(cases[i].want));
        CHECK(vl_broadphase_get_box(bp, h[0], &got) == VL_OK && memcmp(&got, &m.box[SLOT(h[0])], sizeof got) == 0,
              "get_box");
        CHECK(vl_broadphase_validate(bp) == VL_OK, "validate after bad input");
        CHECK(vl_broadphase_add(bp, NULL, boxes, 0, 0) == VL_OK, "empty add");
        CHECK(vl_broadphase_update(bp, NULL, NULL, 0) == VL_OK, "empty update");
        CHECK(vl_broadphase_remove(bp, NULL, 0) == VL_OK, "empty remove");
        commit_and_check(bp, &m, "after bad input");
        CHECK(g_created.count == 0 && g_deleted.count == 0, "%s: bad input changed the pairs", kind_names[kind]);
        /* the valid handles of a rejected batch are still usable */
        do_update(bp, &m, &r, SCENE_CLUSTERED, 50, 0);
        commit_and_check(bp, &m, "after bad input");
        vl_broadphase_destroy(bp);
        mirror_free(&m);
    }
}

/* ---- failing allocator ----------------------------------------------------------------------- */

/* A commit with fresh output buffers under every budget until it succeeds, then the state against
 * brute force (that commit consumed the changes). */
static void commit_under_budgets(vl_broadphase* bp, mirror* m, test_alloc_hooks* h, int kind, int* failures) {
    for (long b = 0;; b++) {
        vl_pair_buffer c = {0}, d = {0};
        h->budget = b;
        vl_status s = vl_broadphase_commit(bp, &c, &d);
        h->budget = -1;
        vl_pair_buffer_free(&c);
        vl_pair_buffer_free(&d);
        if (s == VL_ERR_OUT_OF_MEMORY) {
            (*failures)++;
            continue;
        }
        CHECK(s == VL_OK, "commit %s", vl_status_string(s));
        break;
    }
    brute_pairs(&m->now, m->box, m->live, m->stat, m->slots);
    uint32_t n = 0;
    const vl_pair* pairs = vl_broadphase_get_pairs(bp, &n);
    copy_as_slots(m, &m->got, pairs, n, "after failures");
    CHECK(pair_list_equal(m->got.p, m->got.n, m->now.p, m->now.n), "%s: after failures %u pairs, brute %u",
          kind_names[kind], m->got.n, m->now.n);
    pair_list t = m->prev;
    m->prev = m->now;
    m->now = t;
    memset(m->freed, 0, m->cap);
}

/* Every operation with allocation budgets 0, 1, 2...: a failure is VL_ERR_OUT_OF_MEMORY and the
 * next commit reports nothing; a success is checked against brute force. */
static void test_failing_allocator(void) {
    vl_pair_buffer_free(&g_created);
    vl_pair_buffer_free(&g_deleted);
    size_t before = vl_get_bytes_in_use();
    test_alloc_hooks h;
    test_alloc_begin(&h);
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase_desc desc = kind_desc(kind);
        vl_broadphase* bp = NULL;
        for (long b = 0; b < 8 && !bp; b++) {
            h.budget = b;
            vl_status s = vl_broadphase_create(&desc, &bp);
            CHECK(s == VL_OK || s == VL_ERR_OUT_OF_MEMORY, "create: %s", vl_status_string(s));
            CHECK((s == VL_OK) == (bp != NULL), "create status and object disagree");
        }
        h.budget = -1;
        if (!bp) continue;
        test_rng r = {5};
        mirror m;
        mirror_init(&m, 3000);
        int failures = 0;
        for (int round = 0; round < 40; round++) {
            int op = round % 4;
            for (long b = 0;; b++) {
                test_rng saved = r;
                h.budget = b;
                vl_status s = VL_OK;
                static vl_aabb boxes[3000];
                static uint32_t out[3000];
                uint32_t k = 0;
                if (op == 0 && m.alive + 200 < m.cap) { /* a batch of adds, some into a cluster */
                    k = 30 + (uint32_t)round * 4;
                    for (uint32_t i = 0; i < k; i++) boxes[i] = scene_box(&r, i % 2 ? SCENE_CLUSTERED : SCENE_UNIFORM);
                    s = vl_broadphase_add(bp, out, boxes, k, round % 8 == 4 ? VL_STATIC : 0);
                } else if (op == 1 || op == 0) { /* teleports: many pairs start and stop */
                    k = mirror_pick(&m, &r, round % 8 == 5 ? 3000 : 150); /* all: the SAP rebuilds */
                    for (uint32_t i = 0; i < k; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
                    s = vl_broadphase_update(bp, m.list, boxes, k);
                } else if (op == 2) {
                    k = mirror_pick(&m, &r, 25);
                    s = vl_broadphase_remove(bp, m.list, k);
                }
                h.budget = -1;
                if (s == VL_ERR_OUT_OF_MEMORY) {
                    failures++;
                    CHECK(vl_broadphase_validate(bp) == VL_OK, "%s: validate after failure op %d budget %ld",
                          kind_names[kind], op, b);
                    r = saved;
                    continue; /* try again with a larger budget */
                }
                CHECK(s == VL_OK, "%s: op %d: %s", kind_names[kind], op, vl_status_string(s));
                if (op == 0 && m.alive + 200 < m.cap)
                    for (uint32_t i = 0; i < k; i++) mirror_take(&m, out[i], &boxes[i], round % 8 == 4);
                else if (op == 1 || op == 0)
                    for (uint32_t i = 0; i < k; i++) m.box[SLOT(m.list[i])] = boxes[i];
                else if (op == 2)
                    for (uint32_t i = 0; i < k; i++)
                        m.live[SLOT(m.list[i])] = 0, m.freed[SLOT(m.list[i])] = 1, m.alive--;
                break;
            }
            if (op != 3) continue;
            commit_under_budgets(bp, &m, &h, kind, &failures);
        }
        /* periods of few movers: the box-pruning kind's incremental commit; flips */
        for (int period = 0; period < 6; period++) {
            for (int op = 0; op < 4; op++)
                for (long b = 0;; b++) {
                    test_rng saved = r;
                    static vl_aabb boxes[20];
                    static uint32_t out[20];
                    uint32_t k = op == 0 ? 3 : op == 1 ? 20 : op == 2 ? 2 : 40;
                    uint32_t flags = period % 2 ? VL_STATIC : 0;
                    h.budget = b;
                    vl_status s = VL_OK;
                    if (op == 0) {
                        for (uint32_t i = 0; i < k; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
                        s = vl_broadphase_add(bp, out, boxes, k, flags);
                    } else if (op == 1) {
                        k = mirror_pick(&m, &r, k);
                        for (uint32_t i = 0; i < k; i++) boxes[i] = scene_box(&r, SCENE_CLUSTERED);
                        s = vl_broadphase_update(bp, m.list, boxes, k);
                    } else if (op == 2) {
                        k = mirror_pick(&m, &r, k);
                        s = vl_broadphase_remove(bp, m.list, k);
                    } else {
                        k = mirror_pick(&m, &r, k);
                        s = vl_broadphase_set_static(bp, m.list, k, period % 2 == 0);
                    }
                    h.budget = -1;
                    if (s == VL_ERR_OUT_OF_MEMORY && op == 3) /* the kinds that flip all or nothing */
                        for (uint32_t i = 0; i < k; i++) {
                            vl_aabb got;
                            int gone = vl_broadphase_get_box(bp, m.list[i], &got) != VL_OK;
                            CHECK(!gone || (kinds[kind] != VL_BROADPHASE_SAP && kinds[kind] != VL_BROADPHASE_STATIC_SAP &&
                                            kinds[kind] != VL_BROADPHASE_BOX_PRUNING),
                                  "%s: a failed flip removed objects", kind_names[kind]);
                            if (gone) m.live[SLOT(m.list[i])] = 0, m.freed[SLOT(m.list[i])] = 1, m.alive--;
                        }
                    if (s == VL_ERR_OUT_OF_MEMORY) {
                        failures++;
                        CHECK(vl_broadphase_validate(bp) == VL_OK, "%s: validate after failure op %d budget %ld",
                              kind_names[kind], op, b);
                        r = saved;
                        continue;
                    }
                    CHECK(s == VL_OK, "%s: few movers op %d: %s", kind_names[kind], op, vl_status_string(s));
                    for (uint32_t i = 0; i < k && s == VL_OK; i++) {
                        uint32_t x = SLOT(op == 0 ? out[i] : m.list[i]);
                        if (op == 0) mirror_take(&m, out[i], &boxes[i], flags != 0);
                        if (op == 1) m.box[x] = boxes[i];
                        if (op == 2) m.live[x] = 0, m.freed[x] = 1, m.alive--;
                        if (op == 3) m.stat[x] = period % 2 == 0;
                    }
                    break;
                }
            commit_under_budgets(bp, &m, &h, kind, &failures);
        }
        CHECK(failures > 10, "%s: only %d allocation failures exercised", kind_names[kind], failures);
        commit_and_check(bp, &m, "after failures");
        vl_broadphase_destroy(bp);
        mirror_free(&m);
    }
    vl_pair_buffer_free(&g_created);
    vl_pair_buffer_free(&g_deleted);
    CHECK(vl_get_bytes_in_use() == before, "leak: %zu bytes", vl_get_bytes_in_use() - before);
    CHECK(h.allocs == h.frees, "allocs %ld frees %ld", h.allocs, h.frees);
    test_alloc_end(&h);
}

/* The state a failed call must leave as it was: count, the committed pairs, every live box. */
typedef struct bp_snapshot {
    uint32_t count, pairs;
    vl_pair* pair;
    vl_aabb* box;
} bp_snapshot;

/* The committed pairs of bp, sorted, in a malloc'ed array (their order is unspecified). */
static vl_pair* sorted_pairs(const vl_broadphase* bp, uint32_t* n) {
    const vl_pair* p = vl_broadphase_get_pairs(bp, n);
    vl_pair* copy = malloc(sizeof(vl_pair) * (*n + 1));
    if (*n) memcpy(copy, p, sizeof(vl_pair) * *n);
    pairs_normalize(copy, *n);
    return copy;
}

static void snapshot_take(const vl_broadphase* bp, const uint32_t* handles, uint32_t n, bp_snapshot* s) {
    s->count = vl_broadphase_get_count(bp);
    s->pair = sorted_pairs(bp, &s->pairs);
    s->box = malloc(sizeof(vl_aabb) * (n + 1));
    for (uint32_t i = 0; i < n; i++) vl_broadphase_get_box(bp, handles[i], &s->box[i]);
}

static int snapshot_same(const vl_broadphase* bp, const uint32_t* handles, uint32_t n, const bp_snapshot* s) {
    uint32_t pairs = 0;
    vl_pair* p = sorted_pairs(bp, &pairs);
    int same = vl_broadphase_validate(bp) == VL_OK && vl_broadphase_get_count(bp) == s->count &&
               pair_list_equal(p, pairs, s->pair, s->pairs);
    free(p);
    for (uint32_t i = 0; i < n && same; i++) {
        vl_aabb b;
        same = vl_broadphase_get_box(bp, handles[i], &b) == VL_OK && memcmp(&b, &s->box[i], sizeof b) == 0;
    }
    return same;
}

static void snapshot_free(bp_snapshot* s) { free(s->pair), free(s->box); }

/* vl_broadphase_get_pairs lists the last commit's pairs, whatever changed since (adds, moves, flips,
 * removals), on every kind: none before the first commit, then each commit's until the next. */
static void test_pairs_between_commits(void) {
    enum { N = 300 };
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase_desc desc = kind_desc(kind);
        vl_broadphase* bp = NULL;
        CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "%s: create", kind_names[kind]);
        if (!bp) continue;
        test_rng rng = {900 + (uint64_t)kind};
        vl_aabb boxes[N];
        uint32_t handles[N], n;
        for (uint32_t i = 0; i < N; i++)
            for (int a = 0; a < 3; a++) {
                float c = test_float(&rng, 0, 40), h = test_float(&rng, 0.5f, 3);
                boxes[i].min[a] = c - h, boxes[i].max[a] = c + h;
            }
        CHECK(vl_broadphase_add(bp, handles, boxes, N / 2, 0) == VL_OK, "%s: add", kind_names[kind]);
        vl_pair* p = sorted_pairs(bp, &n);
        CHECK(n == 0, "%s: %u pairs before the first commit", kind_names[kind], n);
        free(p);
        vl_pair_buffer c = {0}, d = {0};
        for (int frame = 0; frame < 4; frame++) {
            CHECK(vl_broadphase_commit(bp, &c, &d) == VL_OK, "%s: commit", kind_names[kind]);
            uint32_t committed;
            vl_pair* want = sorted_pairs(bp, &committed);
            for (int step = 0; step < 4; step++) {
                if (step == 0) vl_broadphase_add(bp, handles + N / 2 + 30 * (uint32_t)frame, boxes + N / 2, 30, 0);
                if (step == 1) {
                    for (uint32_t i = 0; i < 40; i++)
                        for (int a = 0; a < 3; a++) boxes[i].min[a] += 1.5f, boxes[i].max[a] += 1.5f;
                    vl_broadphase_update(bp, handles, boxes, 40);
                }
                if (step == 2) vl_broadphase_set_static(bp, handles + 40, 20, frame & 1);
                if (step == 3) vl_broadphase_remove(bp, handles + N / 2 + 30 * (uint32_t)frame, 10);
                vl_pair* now = sorted_pairs(bp, &n);
                CHECK(pair_list_equal(now, n, want, committed), "%s frame %d step %d: %u pairs listed, %u committed",
                      kind_names[kind], frame, step, n, committed);
                free(now);
            }
            free(want);
        }
        vl_pair_buffer_free(&c), vl_pair_buffer_free(&d);
        vl_broadphase_destroy(bp);
    }
}

/* One operation of test_failed_calls_keep_capacity on bp: 0 add (handles written from out_at),
 * 1 update (teleports), 2 set_static, 3 commit with fresh buffers. */
static vl_status capacity_op(vl_broadphase* bp, int op, uint32_t* handles, uint32_t n, const vl_aabb* boxes,
                             uint32_t k, uint32_t out_at) {
    if (op == 0) return vl_broadphase_add(bp, handles + out_at, boxes, k, 0);
    if (op == 1) return vl_broadphase_update(bp, handles, boxes, k < n ? k : n);
    if (op == 2) return vl_broadphase_set_static(bp, handles + 1, k < n - 1 ? k : n - 1, 1);
    vl_pair_buffer c = {0}, d = {0};
    vl_status s = vl_broadphase_commit(bp, &c, &d);
    vl_pair_buffer_free(&c);
    vl_pair_buffer_free(&d);
    return s;
}

/* The rule of volley/base.h for VL_ERR_OUT_OF_MEMORY, on every kind: a call that fails for memory
 * changes nothing observable (count, committed pairs, boxes, validate) though it may keep storage
 * it grew (vl_get_bytes_in_use higher); a failed call that could allocate nothing keeps nothing more;
 * the kept storage is reused (the call that then succeeds allocates no more than the same call on
 * a twin that never failed) and freed by destroy (nothing leaks); after each call that succeeds,
 * the pairs equal the twin's. Adds, teleports, flips and commits, each first at budgets 0, 1,
 * 2... until it succeeds. */
static void test_failed_calls_keep_capacity(void) {
    size_t baseline = vl_get_bytes_in_use();
    test_alloc_hooks h;
    test_alloc_begin(&h);
    for (int kind = 0; kind < KIND_COUNT; kind++) {
        vl_broadphase_desc desc = kind_desc(kind);
        vl_broadphase *bp = NULL, *twin = NULL;
        CHECK(vl_broadphase_create(&desc, &bp) == VL_OK && vl_broadphase_create(&desc, &twin) == VL_OK, "create");
        if (!bp || !twin) continue;
        enum { cap = 2400 };
        uint32_t* handles = malloc(sizeof(uint32_t) * cap);
        uint32_t* twin_handles = malloc(sizeof(uint32_t) * cap);
        vl_aabb* boxes = malloc(sizeof(vl_aabb) * cap);
        test_rng r = {606 + (uint64_t)kind};
        uint32_t n = 0;
        size_t most_kept = 0;
        int failures = 0;
        for (int round = 0; round < 12; round++) {
            int op = round % 4;
            uint32_t k = op == 0 ? 150 + 30 * (uint32_t)round : op == 1 ? n / 2 : 40;
            for (uint32_t i = 0; i < k; i++) boxes[i] = scene_box(&r, i % 3 ? SCENE_CLUSTERED : SCENE_UNIFORM);
            long before = h.allocs;
            CHECK(capacity_op(twin, op, twin_handles, n, boxes, k, n) == VL_OK, "%s: twin op %d", kind_names[kind], op);
            long twin_allocs = h.allocs - before;
            bp_snapshot snap;
            snapshot_take(bp, handles, n, &snap);
            for (long b = 0;; b++) {
                size_t held = vl_get_bytes_in_use();
                before = h.allocs;
                h.budget = b;
                vl_status s = capacity_op(bp, op, handles, n, boxes, k, n);
                h.budget = -1;
                if (s == VL_OK) {
                    CHECK(h.allocs - before <= twin_allocs,
                          "%s: op %d after %ld failures: %ld allocations, the twin %ld (kept storage not reused)",
                          kind_names[kind], op, b, h.allocs - before, twin_allocs);
                    break;
                }
                CHECK(s == VL_ERR_OUT_OF_MEMORY, "%s: op %d budget %ld: %s", kind_names[kind], op, b,
                      vl_status_string(s));
                if (s != VL_ERR_OUT_OF_MEMORY) break;
                failures++;
                CHECK(snapshot_same(bp, handles, n, &snap), "%s: op %d budget %ld: the failed call changed the state",
                      kind_names[kind], op, b);
                size_t kept = vl_get_bytes_in_use() > held ? vl_get_bytes_in_use() - held : 0;
                most_kept = kept > most_kept ? kept : most_kept;
                /* at budget 0 nothing can be allocated: the same call fails again and keeps nothing more */
                size_t now = vl_get_bytes_in_use();
                h.budget = 0;
                vl_status again = capacity_op(bp, op, handles, n, boxes, k, n);
                h.budget = -1;
                if (again == VL_OK) break; /* the kept storage was all it needed */
                CHECK(again == VL_ERR_OUT_OF_MEMORY && vl_get_bytes_in_use() <= now,
                      "%s: op %d: a call that allocated nothing kept %zu bytes more", kind_names[kind], op,
                      vl_get_bytes_in_use() - now);
                CHECK(snapshot_same(bp, handles, n, &snap), "%s: op %d: the second failed call changed the state",
                      kind_names[kind], op);
            }
            snapshot_free(&snap);
            if (op == 0) {
                CHECK(memcmp(handles + n, twin_handles + n, sizeof(uint32_t) * k) == 0, "%s: handles differ",
                      kind_names[kind]);
                n += k;
            }
            uint32_t pa = 0, pt = 0;
            vl_pair *copy = sorted_pairs(bp, &pa), *copy_t = sorted_pairs(twin, &pt);
            CHECK(pair_list_equal(copy, pa, copy_t, pt), "%s: op %d: %u pairs, the twin %u", kind_names[kind], op, pa,
                  pt);
            free(copy), free(copy_t);
        }
        CHECK(failures >= 8, "%s: only %d failures", kind_names[kind], failures);
        printf("%s: failed calls kept up to %zu bytes (reused, freed by destroy)\n", kind_names[kind], most_kept);
        vl_broadphase_destroy(bp);
        vl_broadphase_destroy(twin);
        free(handles), free(twin_handles), free(boxes);
    }
    test_alloc_end(&h);
    CHECK(vl_get_bytes_in_use() == baseline, "%s: leak: %zu bytes", "kept storage", vl_get_bytes_in_use() - baseline);
}

/* After warm-up, frames of small oscillating moves and commits allocate nothing, with every box
 * updated or a tenth of them (the box-pruning kind's full and incremental commits). */
static void test_no_frame_allocation(void) {
    test_alloc_hooks h;
    test_alloc_begin(&h);
    for (int kind = 0; kind < 2 * KIND_COUNT; kind++) {
        vl_broadphase_desc desc = kind_desc(kind % KIND_COUNT);
        vl_broadphase* bp = NULL;
        CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "create");
        enum { N = 2000 };
        uint32_t count = kind < KIND_COUNT ? N : N / 10;
        static vl_aabb boxes[N];
        static uint32_t handles[N];
        test_rng r = {11};
        for (int i = 0; i < N; i++) boxes[i] = scene_box(&r, SCENE_UNIFORM);
        CHECK(vl_broadphase_add(bp, handles, boxes, N, 0) == VL_OK, "add");
        vl_pair_buffer c = {0}, d = {0};
        long allocs = 0;
        for (int frame = 0; frame < 24; frame++) {
            if (frame == 8) allocs = h.allocs;
            float dx = (frame % 4 < 2) ? 3.0f : -3.0f;
            for (uint32_t i = 0; i < count; i += 2) boxes[i].min[0] += dx, boxes[i].max[0] += dx;
            CHECK(vl_broadphase_update(bp, handles, boxes, count) == VL_OK, "update");
            c.count = d.count = 0;
            CHECK(vl_broadphase_commit(bp, &c, &d) == VL_OK, "commit");
        }
        CHECK(h.allocs == allocs, "%s, %u updated: %ld allocations in 16 warm frames", kind_names[kind % KIND_COUNT],
              count, h.allocs - allocs);
        vl_pair_buffer_free(&c);
        vl_pair_buffer_free(&d);
        vl_broadphase_destroy(bp);
    }
    test_alloc_end(&h);
}

static void test_pair_user_data(void) {
    vl_broadphase_desc desc = vl_broadphase_default_desc();
    desc.flags = VL_BROADPHASE_PAIR_USER_DATA;
    vl_broadphase* bp = NULL;
    CHECK(vl_broadphase_create(&desc, &bp) == VL_OK, "create");
    test_rng r = {3};
    mirror m;
    mirror_init(&m, 600);
    do_add(bp, &m, &r, SCENE_CLUSTERED, 500, 0);
    commit_and_check(bp, &m, "user data");
    uint32_t n = 0;
    const vl_pair* pairs = vl_broadphase_get_pairs(bp, &n);
    CHECK(n > 100, "only %u pairs", n);
    for (uint32_t i = 0; i < n; i++)
        CHECK(vl_broadphase_get_pair_user_data(bp, pairs[i].a, pairs[i].b) == NULL, "new pair has user data");
    for (uint32_t i = 0; i < n; i++)
        vl_broadphase_set_pair_user_data(bp, pairs[i].b, pairs[i].a,
                                         (void*)(uintptr_t)(pairs[i].a * 100003u + pairs[i].b));
    CHECK(vl_broadphase_set_pair_user_data(bp, 0, 0, NULL) == VL_ERR_INVALID_ARGUMENT, "user data of no pair");
    do_remove(bp, &m, &r, 100);
    commit_and_check(bp, &m, "user data");
    pairs = vl_broadphase_get_pairs(bp, &n);
    for (uint32_t i = 0; i < n; i++)
        CHECK(vl_broadphase_get_pair_user_data(bp, pairs[i].a, pairs[i].b) ==
                  (void*)(uintptr_t)(pairs[i].a * 100003u + pairs[i].b),
              "user data lost by deletions");
    vl_broadphase_destroy(bp);
    mirror_free(&m);
}

int main(void) {
    test_bad_input();
    test_static();
    test_pair_user_data();
    test_failing_allocator();
    test_failed_calls_keep_capacity();
    test_pairs_between_commits();
    test_no_frame_allocation();
    test_mover_mix(0);
    test_persistent_movers(0);
    test_sequences();
    test_offsets();
    vl_pair_buffer_free(&g_created);
    vl_pair_buffer_free(&g_deleted);
    return test_finish("test_broadphase");
}
