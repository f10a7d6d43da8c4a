// SAP family benchmarks (single thread): per-frame broadphase scenes in the spirit of Bullet's
// CDTestFramework, batch insertion, and one-shot box pruning on Terdiman's box sets. With
// VOLLEY_BENCH_BULLET, bt32BitAxisSweep3 and btDbvtBroadphase run the same boxes and the same
// moves, frame by frame; a plain qsort sort-and-sweep is the box-pruning baseline.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/resource.h>
#include <time.h>

#include <volley/volley.h>

#include "bench_exec.h"

#ifdef VOLLEY_BENCH_BULLET
#include <btBulletCollisionCommon.h>
#endif

namespace {

constexpr int kFrames = 64; // the motion is periodic over this many frames

// A world of boxes; `moving` of them follow periodic paths, precomputed for every frame.
struct Scene {
    std::vector<vl_aabb> boxes;             // frame 0
    std::vector<uint32_t> moving;           // indices of the moving boxes
    std::vector<std::vector<vl_aabb>> path; // path[frame][k]: box of moving[k]
    float world = 0;
    bool statics = false; // the boxes that never move are added as static (VL_STATIC, Bullet's StaticFilter)
};

uint64_t g_rng_state;
float rnd(float lo, float hi) {
    g_rng_state = g_rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((g_rng_state >> 40) * (1.0 / 16777216.0));
}

// n boxes in a cube of side 2 * world (y squashed to +-1 when flat), half-sizes in [0.5, 2.5];
// a `moving_percent` share moves on closed curves, about 0.1 to 0.3 units per frame.
Scene make_scene(uint32_t n, int moving_percent, bool flat) {
    Scene s;
    g_rng_state = 12345 + n + (uint64_t)moving_percent * 7 + flat;
    s.world = std::cbrt((float)n) * 5.0f;
    if (flat) s.world = std::sqrt((float)n) * 2.0f;
    s.boxes.resize(n);
    for (uint32_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            float c = (flat && a == 1) ? rnd(-1, 1) : rnd(-s.world, s.world);
            float e = rnd(0.5f, 2.5f);
            s.boxes[i].min[a] = c - e;
            s.boxes[i].max[a] = c + e;
        }
        if ((uint32_t)(rnd(0, 100)) < (uint32_t)moving_percent) s.moving.push_back(i);
    }
    s.path.assign(kFrames, std::vector<vl_aabb>(s.moving.size()));
    std::vector<float> phase(s.moving.size() * 3);
    for (float& p : phase) p = rnd(0, 6.2831853f);
    for (int f = 0; f < kFrames; f++)
        for (size_t k = 0; k < s.moving.size(); k++) {
            vl_aabb b = s.boxes[s.moving[k]];
            for (int a = 0; a < 3; a++) {
                if (flat && a == 1) continue;
                float turn = 6.2831853f * (float)f / kFrames * (float)(1 + (k + a) % 2);
                float d = 2.0f * std::sin(turn + phase[k * 3 + a]);
                b.min[a] += d;
                b.max[a] += d;
            }
            s.path[f][k] = b;
        }
    return s;
}

const Scene& scene(int which) {
    static Scene scenes[4] = {make_scene(8192, 10, false), make_scene(8192, 100, false), make_scene(16384, 10, true),
                              make_scene(100000, 10, false)};
    return scenes[which];
}

const char* const kSceneNames[4] = {"8192_10pct", "8192_100pct", "flat16384_10pct", "100k_10pct"};

// A static-heavy world (y up): 65,536 statics over 4 km x 4 km standing on y = 0, a tenth of them
// buildings (10-40 m wide, up to 60 m tall), three tenths rocks (1-6 m), the rest props (0.2-2 m);
// 1,024 movers of 0.5-3 m wandering on closed curves over the whole area, up to about 3 m a frame
// on the ground and, when `bob`, a quarter metre up and down (else at a constant height).
Scene make_static_world(bool bob) {
    Scene s;
    g_rng_state = 2026;
    const uint32_t statics = 65536, movers = 1024;
    s.world = 2000;
    s.statics = true;
    s.boxes.resize(statics + movers);
    for (uint32_t i = 0; i < statics; i++) {
        float x = rnd(-2000, 2000), z = rnd(-2000, 2000), kind = rnd(0, 1), hx, hz, h;
        if (kind < 0.1f)
            hx = rnd(5, 20), hz = rnd(5, 20), h = rnd(4, 60);
        else if (kind < 0.4f)
            hx = rnd(0.5f, 3), hz = rnd(0.5f, 3), h = rnd(0.5f, 4);
        else
            hx = rnd(0.1f, 1), hz = rnd(0.1f, 1), h = rnd(0.2f, 2);
        s.boxes[i] = vl_aabb{{x - hx, 0, z - hz}, {x + hx, h, z + hz}};
    }
    for (uint32_t i = statics; i < statics + movers; i++) {
        float x = rnd(-1980, 1980), z = rnd(-1980, 1980), y = rnd(0.3f, 3), e = rnd(0.25f, 1.5f);
        s.boxes[i] = vl_aabb{{x - e, y - e, z - e}, {x + e, y + e, z + e}};
        s.moving.push_back(i);
    }
    s.path.assign(kFrames, std::vector<vl_aabb>(movers));
    std::vector<float> phase(movers * 3);
    for (float& p : phase) p = rnd(0, 6.2831853f);
    for (int f = 0; f < kFrames; f++)
        for (uint32_t k = 0; k < movers; k++) {
            vl_aabb b = s.boxes[s.moving[k]];
            for (int a = 0; a < 3; a++) {
                float turn = 6.2831853f * (float)f / kFrames * (float)(1 + (k + a) % 2);
                float d = (a == 1 ? (bob ? 0.25f : 0.0f) : 15.0f) * std::sin(turn + phase[k * 3 + a]);
                b.min[a] += d;
                b.max[a] += d;
            }
            s.path[f][k] = b;
        }
    return s;
}

const Scene& static_world(int which = 0) {
    static const Scene s[2] = {make_static_world(true), make_static_world(false)};
    return s[which];
}
const char* const kStaticWorldNames[2] = {"static65536_movers1024", "static65536_movers1024_level"};

// ---- engines: init with the frame-0 boxes, then frame(f) moves the moving boxes --------------

struct VolleyEngine {
    vl_broadphase* bp = nullptr;
    std::vector<uint32_t> handles, moving;
    vl_pair_buffer created{}, deleted{};
    explicit VolleyEngine(vl_broadphase_kind kind, vl_context* ctx = nullptr) {
        vl_broadphase_desc desc = vl_broadphase_default_desc();
        desc.kind = kind;
        desc.context = ctx; // set: the commit runs on its job system
        vl_broadphase_create(&desc, &bp);
    }
    ~VolleyEngine() {
        vl_broadphase_destroy(bp);
        vl_pair_buffer_free(&created);
        vl_pair_buffer_free(&deleted);
    }
    void init(const Scene& s) {
        handles.resize(s.boxes.size());
        if (s.statics) { // the statics in one batch, then the movers in another
            std::vector<uint8_t> moves(s.boxes.size(), 0);
            for (uint32_t i : s.moving) moves[i] = 1;
            std::vector<vl_aabb> fixed, movers;
            for (size_t i = 0; i < s.boxes.size(); i++) (moves[i] ? movers : fixed).push_back(s.boxes[i]);
            std::vector<uint32_t> hf(fixed.size());
            vl_broadphase_add(bp, hf.data(), fixed.data(), (uint32_t)fixed.size(), VL_STATIC);
            moving.resize(movers.size());
            vl_broadphase_add(bp, moving.data(), movers.data(), (uint32_t)movers.size(), 0);
        } else {
            vl_broadphase_add(bp, handles.data(), s.boxes.data(), (uint32_t)s.boxes.size(), 0);
            for (uint32_t i : s.moving) moving.push_back(handles[i]);
        }
        vl_broadphase_commit(bp, nullptr, nullptr);
    }
    void frame(const Scene& s, int f) {
        vl_broadphase_update(bp, moving.data(), s.path[f].data(), (uint32_t)moving.size());
        created.count = deleted.count = 0;
        vl_broadphase_commit(bp, &created, &deleted);
    }
    uint32_t pairs() const {
        uint32_t n = 0;
        vl_broadphase_get_pairs(bp, &n);
        return n;
    }
};

struct VolleySap : VolleyEngine {
    explicit VolleySap(vl_context* ctx = nullptr) : VolleyEngine(VL_BROADPHASE_SAP, ctx) {}
};
struct VolleyBoxPruning : VolleyEngine {
    explicit VolleyBoxPruning(vl_context* ctx = nullptr) : VolleyEngine(VL_BROADPHASE_BOX_PRUNING, ctx) {}
};
struct VolleyStaticSap : VolleyEngine {
    explicit VolleyStaticSap(vl_context* ctx = nullptr) : VolleyEngine(VL_BROADPHASE_STATIC_SAP, ctx) {}
};
struct VolleyMultiSap : VolleyEngine {
    explicit VolleyMultiSap(vl_context* ctx = nullptr) : VolleyEngine(VL_BROADPHASE_MULTI_SAP, ctx) {}
};
struct VolleyGrid : VolleyEngine {
    explicit VolleyGrid(vl_context* ctx = nullptr) : VolleyEngine(VL_BROADPHASE_GRID, ctx) {}
};
struct VolleyTree : VolleyEngine {
    explicit VolleyTree(vl_context* ctx = nullptr) : VolleyEngine(VL_BROADPHASE_TREE, ctx) {}
};

#ifdef VOLLEY_BENCH_BULLET
btVector3 v3(const float* p) { return btVector3(p[0], p[1], p[2]); }

struct BulletEngine {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btBroadphaseInterface* bp = nullptr;
    std::vector<btBroadphaseProxy*> proxies;
    void init(const Scene& s) {
        proxies.resize(s.boxes.size());
        std::vector<uint8_t> moves(s.boxes.size(), 0);
        for (uint32_t i : s.moving) moves[i] = 1;
        for (size_t i = 0; i < s.boxes.size(); i++) {
            // statics as Bullet's own static objects: group StaticFilter, never tested against each other
            bool fixed = s.statics && !moves[i];
            int group = fixed ? btBroadphaseProxy::StaticFilter : btBroadphaseProxy::DefaultFilter;
            int mask = fixed ? btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter : btBroadphaseProxy::AllFilter;
            proxies[i] = bp->createProxy(v3(s.boxes[i].min), v3(s.boxes[i].max), BOX_SHAPE_PROXYTYPE, nullptr, group,
                                         mask, &dispatcher);
        }
        bp->calculateOverlappingPairs(&dispatcher);
    }
    void frame(const Scene& s, int f) {
        const std::vector<vl_aabb>& boxes = s.path[f];
        for (size_t k = 0; k < s.moving.size(); k++)
            bp->setAabb(proxies[s.moving[k]], v3(boxes[k].min), v3(boxes[k].max), &dispatcher);
        bp->calculateOverlappingPairs(&dispatcher);
    }
    uint32_t pairs() const { return (uint32_t)bp->getOverlappingPairCache()->getNumOverlappingPairs(); }
    ~BulletEngine() {
        for (btBroadphaseProxy* p : proxies) bp->destroyProxy(p, &dispatcher);
        delete bp;
    }
};

struct BulletDbvt : BulletEngine {
    BulletDbvt() { bp = new btDbvtBroadphase(); }
};

// The world bounds that Bullet's SAP needs (volley's does not): the scene's cube plus the motion.
struct BulletSap32 : BulletEngine {
    void init(const Scene& s) {
        float w = s.world + 8;
        bp = new bt32BitAxisSweep3(btVector3(-w, -w, -w), btVector3(w, w, w), (unsigned)s.boxes.size() + 16, nullptr,
                                   true);
        BulletEngine::init(s);
    }
};
#endif

// One iteration = one frame: update the moving boxes, then commit / calculate pairs.
template <class Engine>
void BM_SapFrame(benchmark::State& state) {
    const Scene& s = scene((int)state.range(0));
    Engine engine;
    engine.init(s);
    for (int f = 0; f < kFrames; f++) engine.frame(s, f); // warm up: buffers grown
    int f = 0;
    for (auto _ : state) {
        engine.frame(s, f);
        f = (f + 1) % kFrames;
    }
    state.counters["pairs"] = engine.pairs();
    state.counters["moving"] = (double)s.moving.size();
    state.SetLabel(kSceneNames[state.range(0)]);
}

// BM_SapFrame with the commit on a context (vl_broadphase_desc.context) over the default pool of range(1) workers
// (1: a context without a job system). Wall-clock time: the commit runs on several threads.
template <class Engine>
void BM_SapFrameParallel(benchmark::State& state) {
    const Scene& s = scene((int)state.range(0));
    const uint32_t workers = (uint32_t)state.range(1);
    vl_thread_pool* pool = nullptr;
    vl_task_system ts = {nullptr, nullptr, nullptr, 1};
    if (workers > 1 && vl_thread_pool_create(workers, &pool) == VL_OK) ts = vl_thread_pool_get_task_system(pool);
    vl_context* ctx = nullptr;
    vl_context_create(&ts, &ctx);
    Engine engine(ctx);
    engine.init(s);
    auto frame = [&](int f) {
        vl_broadphase_update(engine.bp, engine.moving.data(), s.path[f].data(), (uint32_t)engine.moving.size());
        engine.created.count = engine.deleted.count = 0;
        vl_broadphase_commit(engine.bp, &engine.created, &engine.deleted);
    };
    for (int f = 0; f < kFrames; f++) frame(f); // warm up: buffers grown
    int f = 0;
    for (auto _ : state) {
        frame(f);
        f = (f + 1) % kFrames;
    }
    state.counters["pairs"] = engine.pairs();
    state.counters["moving"] = (double)s.moving.size();
    state.SetLabel(kSceneNames[state.range(0)]);
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
}

// The flat world over a static ground plane with infinite bounds (top at y = -3: the lowest boxes
// touch it), volley kinds only (Bullet takes no infinite bounds).
template <class Engine>
void BM_SapFrameGround(benchmark::State& state) {
    const Scene& s = scene(2);
    Engine engine;
    vl_aabb ground = {{-INFINITY, -INFINITY, -INFINITY}, {INFINITY, -3.0f, INFINITY}};
    uint32_t handle = 0;
    vl_broadphase_add(engine.bp, &handle, &ground, 1, VL_STATIC);
    engine.init(s);
    for (int f = 0; f < kFrames; f++) engine.frame(s, f);
    int f = 0;
    for (auto _ : state) {
        engine.frame(s, f);
        f = (f + 1) % kFrames;
    }
    state.counters["pairs"] = engine.pairs();
    state.counters["moving"] = (double)s.moving.size();
    state.SetLabel("flat16384_10pct_ground");
}

// The multi-SAP's flat-world frame with its commit on a vl_thread_pool of range(0) workers (wall
// time). A probe around the pool adds each range's thread CPU time to its worker. Counters per
// frame: serial_us, the caller's CPU time outside ranges (update, plan, queue, merge; its wait in
// finish included); tasks_us, CPU time in ranges, all workers; path_us, serial_us plus the busiest
// worker's: the frame on an idle machine. With 1 worker, serial_us / (serial_us + tasks_us) is the
// serial fraction.
struct PoolProbe {
    vl_task_system pool{};
    vl_task_fn* fn = nullptr;
    void* task_ctx = nullptr;
    double busy[VL_MAX_WORKERS] = {};
};
PoolProbe g_pool_probe;

double thread_seconds() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void pool_probe_range(uint32_t start, uint32_t end, uint32_t worker, void*) {
    double t0 = thread_seconds();
    g_pool_probe.fn(start, end, worker, g_pool_probe.task_ctx);
    g_pool_probe.busy[worker] += thread_seconds() - t0;
}

void* pool_probe_enqueue(vl_task_fn* fn, uint32_t items, uint32_t min_range, void* task_ctx, void*) {
    g_pool_probe.fn = fn, g_pool_probe.task_ctx = task_ctx;
    return g_pool_probe.pool.enqueue(pool_probe_range, items, min_range, nullptr, g_pool_probe.pool.user_ctx);
}

void pool_probe_finish(void* handle, void*) { g_pool_probe.pool.finish(handle, g_pool_probe.pool.user_ctx); }

void BM_SapFrameMultiSapPool(benchmark::State& state) {
    const Scene& s = scene(2);
    const uint32_t workers = (uint32_t)state.range(0);
    vl_thread_pool* pool = nullptr;
    vl_thread_pool_create(workers, &pool);
    g_pool_probe.pool = vl_thread_pool_get_task_system(pool);
    vl_task_system ts = {pool_probe_enqueue, pool_probe_finish, nullptr, workers};
    vl_context* ctx = nullptr;
    vl_context_create(&ts, &ctx);
    auto engine_owner = std::make_unique<VolleyMultiSap>(ctx); // destroyed before the context
    VolleyMultiSap& engine = *engine_owner;
    engine.init(s);
    for (int f = 0; f < kFrames; f++) engine.frame(s, f);
    double serial = 0, tasks = 0, path = 0;
    int f = 0;
    for (auto _ : state) {
        std::fill(std::begin(g_pool_probe.busy), std::end(g_pool_probe.busy), 0.0);
        double t0 = thread_seconds();
        engine.frame(s, f);
        double caller = thread_seconds() - t0 - g_pool_probe.busy[0], most = 0;
        for (uint32_t w = 0; w < workers; w++) tasks += g_pool_probe.busy[w], most = std::max(most, g_pool_probe.busy[w]);
        serial += caller, path += caller + most;
        f = (f + 1) % kFrames;
    }
    double frames = (double)state.iterations() / 1e6;
    state.counters["serial_us"] = serial / frames;
    state.counters["tasks_us"] = tasks / frames;
    state.counters["path_us"] = path / frames;
    state.counters["pairs"] = engine.pairs();
    state.SetLabel("flat16384_10pct");
    engine_owner.reset();
    vl_context_destroy(ctx);
    vl_thread_pool_destroy(pool);
}

// The world does not move at all: what a frame costs when nothing happens.
void BM_SapSleepingFrame(benchmark::State& state) {
    const Scene& s = scene(0);
    VolleySap engine;
    engine.init(s);
    std::vector<vl_aabb> same(s.moving.size());
    for (size_t k = 0; k < s.moving.size(); k++) same[k] = s.boxes[s.moving[k]];
    for (auto _ : state) {
        vl_broadphase_update(engine.bp, engine.moving.data(), same.data(), (uint32_t)same.size());
        engine.created.count = engine.deleted.count = 0;
        vl_broadphase_commit(engine.bp, &engine.created, &engine.deleted);
    }
    state.SetLabel("8192_10pct_asleep");
}

// Batch insertion of the scene's boxes into an empty broadphase, first pairs out.
template <class Engine>
void insert_scene(benchmark::State& state, const Scene& s) {
    uint32_t pairs = 0;
    for (auto _ : state) {
        Engine* engine = new Engine();
        engine->init(s);
        pairs = engine->pairs();
        state.PauseTiming();
        delete engine;
        state.ResumeTiming();
    }
    state.counters["pairs"] = pairs;
    state.counters["boxes_per_s"] =
        benchmark::Counter((double)s.boxes.size(), benchmark::Counter::kIsIterationInvariantRate);
}

// n boxes of the uniform scene.
template <class Engine>
void BM_SapInsert(benchmark::State& state) {
    insert_scene<Engine>(state, make_scene((uint32_t)state.range(0), 0, false));
}

// The static-heavy world, one frame per iteration. The engine is built once and kept across the
// calls Google Benchmark makes (inserting 65,536 boxes one by one into Bullet's SAP takes minutes).
template <class Engine>
void BM_StaticWorldFrame(benchmark::State& state) {
    int which = (int)state.range(0);
    const Scene& s = static_world(which);
    static Engine* engines[2] = {nullptr, nullptr};
    static int frames[2] = {0, 0};
    Engine*& engine = engines[which];
    int& f = frames[which];
    if (!engine) {
        engine = new Engine();
        engine->init(s);
        for (int k = 0; k < kFrames; k++) engine->frame(s, k); // warm up: buffers grown
    }
    for (auto _ : state) {
        engine->frame(s, f);
        f = (f + 1) % kFrames;
    }
    state.counters["pairs"] = engine->pairs();
    state.counters["moving"] = (double)s.moving.size();
    state.SetLabel(kStaticWorldNames[which]);
}

// Inserting the static world's 65,536 statics into an empty broadphase, first pairs out.
template <class Engine>
void BM_StaticWorldInsert(benchmark::State& state) {
    const Scene& world = static_world();
    Scene s;
    s.statics = true;
    s.world = world.world;
    s.boxes.assign(world.boxes.begin(), world.boxes.begin() + 65536);
    insert_scene<Engine>(state, s);
}

// ---- box pruning on Terdiman's sets --------------------------------------------------------

std::vector<vl_aabb> terdiman_set(uint32_t n, bool flat) {
    std::vector<vl_aabb> boxes(n);
    uint32_t state = 42;
    auto rand15 = [&state]() {
        state = state * 214013u + 2531011u;
        return (state >> 16) & 0x7fffu;
    };
    for (uint32_t i = 0; i < n; i++) {
        float c[3], e[3];
        for (float& x : c) x = (float)((int)(rand15() & 4095) - 2048);
        for (float& x : e) x = (float)(rand15() & 127);
        if (flat) c[1] /= 20.0f;
        for (int a = 0; a < 3; a++) {
            boxes[i].min[a] = c[a] - e[a];
            boxes[i].max[a] = c[a] + e[a];
        }
    }
    return boxes;
}

const std::vector<vl_aabb>& terdiman(int which) {
    static const std::vector<vl_aabb> sets[4] = {terdiman_set(10000, false), terdiman_set(100000, false),
                                                 terdiman_set(10000, true), terdiman_set(100000, true)};
    return sets[which];
}
const char* const kTerdimanNames[4] = {"10k", "100k", "flat10k", "flat100k"};

void BM_BoxPrune(benchmark::State& state) {
    const std::vector<vl_aabb>& boxes = terdiman((int)state.range(0));
    vl_pair_buffer out{};
    vl_box_prune(boxes.data(), (uint32_t)boxes.size(), &out, NULL); // the output buffer grown once, as the baseline's
    for (auto _ : state) {
        out.count = 0;
        vl_box_prune(boxes.data(), (uint32_t)boxes.size(), &out, NULL);
    }
    state.counters["pairs"] = out.count;
    state.SetLabel(kTerdimanNames[state.range(0)]);
    vl_pair_buffer_free(&out);
}

void BM_BoxPruneBipartite(benchmark::State& state) {
    const std::vector<vl_aabb>& boxes = terdiman((int)state.range(0));
    uint32_t half = (uint32_t)boxes.size() / 2;
    vl_pair_buffer out{};
    vl_box_prune_bipartite(boxes.data(), half, boxes.data() + half, half, &out, NULL);
    for (auto _ : state) {
        out.count = 0;
        vl_box_prune_bipartite(boxes.data(), half, boxes.data() + half, half, &out, NULL);
    }
    state.counters["pairs"] = out.count;
    state.SetLabel(kTerdimanNames[state.range(0)]);
    vl_pair_buffer_free(&out);
}

// One-shot box pruning as a user calls it: once a frame, between other work that allocates and
// frees (here 24 blocks of 4 KB to 384 KB, written and freed), in a process whose allocator gives
// freed memory back to the system: glibc with M_MMAP_THRESHOLD and M_TRIM_THRESHOLD fixed at
// 64 KB (which also ends its dynamic thresholds, so that what ran before in the process does not
// change the result; they run after every other bench: bench_register_last, called by main after
// the files' own registrations, which the thresholds would otherwise change), and malloc_trim(0)
// after the other work. Only the call is timed. Forms: 0 vl_box_prune on the allocator, 1 on a
// scratch block the caller keeps, 2 on a context without a job system (its storage kept from call
// to call). The output buffer is kept by the caller in every form.
// Counter: minor page faults per call.
void other_work() {
    void* blocks[24];
    for (int k = 0; k < 24; k++) {
        size_t bytes = (size_t)4096 << (k % 7);
        blocks[k] = std::malloc(bytes);
        if (blocks[k]) std::memset(blocks[k], k, bytes);
    }
    for (void* b : blocks) std::free(b);
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

long minor_faults() {
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

void BM_BoxPruneAsUsed(benchmark::State& state) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    mallopt(M_TRIM_THRESHOLD, 64 * 1024);
#endif
    const std::vector<vl_aabb>& boxes = terdiman((int)state.range(0));
    uint32_t n = (uint32_t)boxes.size();
    int form = (int)state.range(1);
    vl_pair_buffer out{};
    size_t bytes = vl_box_prune_scratch_size(n);
    void* scratch = form == 1 ? std::aligned_alloc(VL_SCRATCH_ALIGNMENT, (bytes + 63) / 64 * 64) : nullptr;
    vl_context* ctx = nullptr;
    if (form == 2) vl_context_create(nullptr, &ctx);
    auto call = [&]() {
        out.count = 0;
        if (form == 0) vl_box_prune(boxes.data(), n, &out, NULL);
        if (form == 1) vl_box_prune(boxes.data(), n, &out, on_scratch(scratch, bytes));
        if (form == 2) vl_box_prune(boxes.data(), n, &out, on_context(ctx));
    };
    call(); // the caller's buffers (out, the scratch's pages, the context) grown once
    long faults = 0, calls = 0;
    for (auto _ : state) {
        state.PauseTiming();
        other_work();
        long before = minor_faults();
        state.ResumeTiming();
        call();
        state.PauseTiming();
        faults += minor_faults() - before;
        calls++;
        state.ResumeTiming();
    }
    state.counters["pairs"] = out.count;
    state.counters["faults_per_call"] = calls ? (double)faults / (double)calls : 0;
    static const char* const forms[3] = {"alloc", "scratch", "context"};
    state.SetLabel(std::string(kTerdimanNames[state.range(0)]) + " " + forms[form]);
    vl_context_destroy(ctx);
    std::free(scratch);
    vl_pair_buffer_free(&out);
}

// The baseline: qsort by min x, then sweep with an early-out 3D test.
struct SortEntry {
    float min_x;
    uint32_t index;
};

int compare_entries(const void* a, const void* b) {
    float x = static_cast<const SortEntry*>(a)->min_x, y = static_cast<const SortEntry*>(b)->min_x;
    return (x > y) - (x < y);
}

void BM_QsortSweep(benchmark::State& state) {
    const std::vector<vl_aabb>& boxes = terdiman((int)state.range(0));
    std::vector<SortEntry> entries(boxes.size());
    std::vector<vl_pair> pairs;
    pairs.reserve(16u << 20);
    for (auto _ : state) {
        pairs.clear();
        for (uint32_t i = 0; i < boxes.size(); i++) entries[i] = {boxes[i].min[0], i};
        std::qsort(entries.data(), entries.size(), sizeof(SortEntry), compare_entries);
        for (size_t i = 0; i < entries.size(); i++) {
            const vl_aabb& a = boxes[entries[i].index];
            for (size_t j = i + 1; j < entries.size() && entries[j].min_x <= a.max[0]; j++) {
                const vl_aabb& b = boxes[entries[j].index];
                if (b.min[1] > a.max[1] || a.min[1] > b.max[1]) continue;
                if (b.min[2] > a.max[2] || a.min[2] > b.max[2]) continue;
                pairs.push_back({entries[i].index, entries[j].index});
            }
        }
    }
    state.counters["pairs"] = (double)pairs.size();
    state.SetLabel(kTerdimanNames[state.range(0)]);
}

} // namespace

BENCHMARK_TEMPLATE(BM_SapFrame, VolleySap)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrame, VolleyBoxPruning)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrame, VolleyMultiSap)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrame, VolleyGrid)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrame, VolleyTree)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
// The all-moving scene (full prune) and the 100k one (incremental), 1 and 2 workers.
BENCHMARK_TEMPLATE(BM_SapFrameParallel, VolleyBoxPruning)
    ->ArgsProduct({{1, 3}, {1, 2}})
    ->ArgNames({"scene", "workers"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_SapFrameGround, VolleySap)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrameGround, VolleyMultiSap)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrameGround, VolleyGrid)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrameGround, VolleyTree)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SapFrameMultiSapPool)->ArgName("workers")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SapSleepingFrame)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapInsert, VolleySap)->Arg(16384)->Arg(65536)->Arg(100000)->Unit(benchmark::kMillisecond);
#ifdef VOLLEY_BENCH_BULLET
BENCHMARK_TEMPLATE(BM_SapFrame, BulletDbvt)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
// Not on the 100k scene: inserting 100k boxes one by one into Bullet's SAP alone takes minutes.
BENCHMARK_TEMPLATE(BM_SapFrame, BulletSap32)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapInsert, BulletDbvt)->Arg(16384)->Arg(65536)->Arg(100000)->Unit(benchmark::kMillisecond);
// One-by-one insertion is quadratic in Bullet's SAP: measured on smaller counts, scaled in docs/measurements/broadphase.md.
BENCHMARK_TEMPLATE(BM_SapInsert, BulletSap32)->Arg(4096)->Arg(8192)->Arg(16384)->Unit(benchmark::kMillisecond)
    ->Iterations(1);
#endif
BENCHMARK_TEMPLATE(BM_SapFrame, VolleyStaticSap)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
// Arg 0: the movers bob up and down; arg 1: they keep their height.
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, VolleyStaticSap)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, VolleySap)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, VolleyBoxPruning)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, VolleyMultiSap)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, VolleyGrid)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, VolleyTree)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_StaticWorldInsert, VolleyStaticSap)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_StaticWorldInsert, VolleySap)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_StaticWorldInsert, VolleyBoxPruning)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_StaticWorldInsert, VolleyMultiSap)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_StaticWorldInsert, VolleyGrid)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_StaticWorldInsert, VolleyTree)->Unit(benchmark::kMillisecond);
#ifdef VOLLEY_BENCH_BULLET
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, BulletDbvt)->DenseRange(0, 1)->Unit(benchmark::kMicrosecond);
// Building this world takes Bullet's SAP minutes (one-by-one insertion): the bobbing movers only.
BENCHMARK_TEMPLATE(BM_StaticWorldFrame, BulletSap32)->Arg(0)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_StaticWorldInsert, BulletDbvt)->Unit(benchmark::kMillisecond);
#endif
BENCHMARK(BM_BoxPrune)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BoxPruneBipartite)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_QsortSweep)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

// The benches that change the process's allocator settings, registered after all the others.
void bench_register_last() {
    benchmark::RegisterBenchmark("BM_BoxPruneAsUsed", BM_BoxPruneAsUsed)
        ->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}})
        ->Unit(benchmark::kMicrosecond);
}
