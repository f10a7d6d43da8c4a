// SAP family benchmarks (single thread): per-frame broadphase scenes in the spirit of Bullet's
// CDTestFramework, batch insertion, and one-shot box pruning on Terdiman's box sets. With
// VOLLEY_BENCH_BULLET, bt32BitAxisSweep3 and btDbvtBroadphase run the same boxes and the same
// moves, frame by frame; a plain qsort sort-and-sweep is the box-pruning baseline.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <volley/volley.h>

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

// ---- engines: init with the frame-0 boxes, then frame(f) moves the moving boxes --------------

struct VolleyEngine {
    vl_broadphase* bp = nullptr;
    std::vector<uint32_t> handles, moving;
    vl_pair_buffer created{}, deleted{};
    explicit VolleyEngine(vl_broadphase_kind kind) {
        vl_broadphase_desc desc = vl_broadphase_default_desc();
        desc.kind = kind;
        vl_broadphase_create(&desc, &bp);
    }
    ~VolleyEngine() {
        vl_broadphase_destroy(bp);
        vl_pair_buffer_free(&created);
        vl_pair_buffer_free(&deleted);
    }
    void init(const Scene& s) {
        handles.resize(s.boxes.size());
        vl_broadphase_add(bp, s.boxes.data(), (uint32_t)s.boxes.size(), 0, handles.data());
        for (uint32_t i : s.moving) moving.push_back(handles[i]);
        vl_broadphase_commit(bp, nullptr, nullptr);
    }
    void frame(const Scene& s, int f) {
        vl_broadphase_update(bp, moving.data(), s.path[f].data(), (uint32_t)moving.size());
        created.count = deleted.count = 0;
        vl_broadphase_commit(bp, &created, &deleted);
    }
    uint32_t pairs() const {
        uint32_t n = 0;
        vl_broadphase_pairs(bp, &n);
        return n;
    }
};

struct VolleySap : VolleyEngine {
    VolleySap() : VolleyEngine(VL_BROADPHASE_SAP) {}
};
struct VolleyBoxPruning : VolleyEngine {
    VolleyBoxPruning() : VolleyEngine(VL_BROADPHASE_BOX_PRUNING) {}
};
struct VolleyMultiSap : VolleyEngine {
    VolleyMultiSap() : VolleyEngine(VL_BROADPHASE_MULTI_SAP) {}
};
struct VolleyGrid : VolleyEngine {
    VolleyGrid() : VolleyEngine(VL_BROADPHASE_GRID) {}
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
        for (size_t i = 0; i < s.boxes.size(); i++)
            proxies[i] = bp->createProxy(v3(s.boxes[i].min), v3(s.boxes[i].max), BOX_SHAPE_PROXYTYPE, nullptr, 1, -1,
                                         &dispatcher);
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

// The flat world over a static ground plane with infinite bounds (top at y = -3: the lowest boxes
// touch it), volley kinds only (Bullet takes no infinite bounds).
template <class Engine>
void BM_SapFrameGround(benchmark::State& state) {
    const Scene& s = scene(2);
    Engine engine;
    vl_aabb ground = {{-INFINITY, -INFINITY, -INFINITY}, {INFINITY, -3.0f, INFINITY}};
    uint32_t handle = 0;
    vl_broadphase_add(engine.bp, &ground, 1, VL_STATIC, &handle);
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

// Batch insertion: an empty broadphase, n boxes in, first pairs out.
template <class Engine>
void BM_SapInsert(benchmark::State& state) {
    uint32_t n = (uint32_t)state.range(0);
    Scene s = make_scene(n, 0, false);
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
    state.counters["boxes_per_s"] = benchmark::Counter((double)n, benchmark::Counter::kIsIterationInvariantRate);
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
    vl_box_prune(boxes.data(), (uint32_t)boxes.size(), &out); // the output buffer grown once, as the baseline's
    for (auto _ : state) {
        out.count = 0;
        vl_box_prune(boxes.data(), (uint32_t)boxes.size(), &out);
    }
    state.counters["pairs"] = out.count;
    state.SetLabel(kTerdimanNames[state.range(0)]);
    vl_pair_buffer_free(&out);
}

void BM_BoxPruneBipartite(benchmark::State& state) {
    const std::vector<vl_aabb>& boxes = terdiman((int)state.range(0));
    uint32_t half = (uint32_t)boxes.size() / 2;
    vl_pair_buffer out{};
    vl_box_prune_bipartite(boxes.data(), half, boxes.data() + half, half, &out);
    for (auto _ : state) {
        out.count = 0;
        vl_box_prune_bipartite(boxes.data(), half, boxes.data() + half, half, &out);
    }
    state.counters["pairs"] = out.count;
    state.SetLabel(kTerdimanNames[state.range(0)]);
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
BENCHMARK_TEMPLATE(BM_SapFrameGround, VolleySap)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrameGround, VolleyMultiSap)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapFrameGround, VolleyGrid)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SapSleepingFrame)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapInsert, VolleySap)->Arg(16384)->Arg(65536)->Arg(100000)->Unit(benchmark::kMillisecond);
#ifdef VOLLEY_BENCH_BULLET
BENCHMARK_TEMPLATE(BM_SapFrame, BulletDbvt)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
// Not on the 100k scene: inserting 100k boxes one by one into Bullet's SAP alone takes minutes.
BENCHMARK_TEMPLATE(BM_SapFrame, BulletSap32)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SapInsert, BulletDbvt)->Arg(16384)->Arg(65536)->Arg(100000)->Unit(benchmark::kMillisecond);
// One-by-one insertion is quadratic in Bullet's SAP: measured on smaller counts, scaled in docs/SAP.md.
BENCHMARK_TEMPLATE(BM_SapInsert, BulletSap32)->Arg(4096)->Arg(8192)->Arg(16384)->Unit(benchmark::kMillisecond)
    ->Iterations(1);
#endif
BENCHMARK(BM_BoxPrune)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BoxPruneBipartite)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_QsortSweep)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
