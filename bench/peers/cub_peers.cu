// cub_peers.cu - peer baselines for gx: cudaMemcpy D2D, CUB device-wide
// primitives and cuBLAS SGEMM, timed the same way gx's own suite is timed.
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o cub_peers cub_peers.cu -lcublas
// Run:   ./cub_peers [--sizes 20,24,28] [--gemm 4096,8192] [--reps 50]
//                    [--warmup 5] [--ops copy,sum,...] [--no-verify]
//        ./cub_peers --sizes 10,16,20 --gemm none --ops lat,floor   (latency:
//         one call to a host result, host clock; "clock":"host" in the JSON)
//
// Method: every timed run is one call bracketed by a pair of CUDA events on
// one stream; we report the median (and min) over --reps runs after --warmup
// untimed calls.  Inputs are fresh random data (uniform in (0,1) for f32,
// never zero), generated on the device.  Where the arrays one call touches
// would fit in L2, several independent copies are allocated and the calls
// rotate through them so no timed call finds its input in L2.  Temporary
// storage is allocated once, outside the timing.  Each result is checked once
// against a host reference; a mismatch prints a warning to stderr and marks
// the JSON line "ok":false.
//
// Output (stdout): one JSON object per line:
//   {"impl":"device", ...}                      device description (first line)
//   {"impl":"cub"|"cublas"|"cuda","op":...,"dtype":...,"n":N,"median_us":x,
//    "bytes":B,"flops":F,"min_us":x,"reps":R,"rot":K,"ok":true}
//   {"impl":"cuda-hand"|"cuda-hand-sr",...,"ref":true}   hand-written reference
//    kernels for the iota pipeline (listed in the report, not compared against)
// bytes = the fewest bytes the operation must move (0 for sort and sgemm);
// flops = 2*m^3 for sgemm and gemm_f16 / gemm_bf16 (cublasGemmEx, f16 / bf16 A, B
// and C, CUBLAS_COMPUTE_32F: gx's gemm_f16 / gemm_bf16), 0 elsewhere.

#include <cub/cub.cuh>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// ---------------------------------------------------------------- errors --
#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "cub_peers: %s:%d: %s failed: %s\n", __FILE__,      \
                   __LINE__, #call, cudaGetErrorString(e_));                  \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

#define CKB(call)                                                             \
  do {                                                                        \
    cublasStatus_t s_ = (call);                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                        \
      std::fprintf(stderr, "cub_peers: %s:%d: %s failed: cublas status %d\n", \
                   __FILE__, __LINE__, #call, (int)s_);                       \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

// ------------------------------------------------------------ random fill --
__host__ __device__ inline uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// uniform in (0,1): (k + 0.5) / 2^24, k in [0, 2^24) -- never exactly 0 or 1
__global__ void fill_f32(float* p, size_t n, uint64_t seed) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    uint32_t k = (uint32_t)(mix64(seed * 0x100000001B3ull + i) >> 40);
    p[i] = ((float)k + 0.5f) * (1.0f / 16777216.0f);
  }
}

// integers in [-8, 7]: |sum| stays far below 2^31 for n <= 2^28
__global__ void fill_i32(int* p, size_t n, uint64_t seed) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = (int)((mix64(seed * 0x100000001B3ull + i) >> 60) & 15u) - 8;
}

__global__ void fill_u32(unsigned* p, size_t n, uint64_t seed) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = (unsigned)(mix64(seed * 0x100000001B3ull + i) >> 32);
}

static uint64_t g_seed = 0x5EEDull;
static int g_fill_blocks = 1024;

template <class T> static void fill(T* p, size_t n);
template <> void fill<float>(float* p, size_t n) {
  fill_f32<<<g_fill_blocks, 256>>>(p, n, ++g_seed);
  CK(cudaGetLastError());
}
template <> void fill<int>(int* p, size_t n) {
  fill_i32<<<g_fill_blocks, 256>>>(p, n, ++g_seed);
  CK(cudaGetLastError());
}
template <> void fill<unsigned>(unsigned* p, size_t n) {
  fill_u32<<<g_fill_blocks, 256>>>(p, n, ++g_seed);
  CK(cudaGetLastError());
}

// ------------------------------------------------------------- buffers ----
// K copies of an n-element array, one allocation; rotate through them.
template <class T> struct Rot {
  T* base = nullptr;
  size_t n = 0;
  int k = 0;
  Rot(size_t n_, int k_, bool random) : n(n_), k(k_) {
    CK(cudaMalloc(&base, sizeof(T) * n * (size_t)k));
    for (int i = 0; i < k; ++i) {
      if (random) fill<T>(base + (size_t)i * n, n);
      else CK(cudaMemset(base + (size_t)i * n, 0xFF, sizeof(T) * n));  // not zeros either
    }
  }
  ~Rot() { cudaFree(base); }
  T* operator[](int i) const { return base + (size_t)(i % k) * n; }
  Rot(const Rot&) = delete;
  Rot& operator=(const Rot&) = delete;
};

template <class T> static std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  CK(cudaMemcpy(h.data(), d, sizeof(T) * n, cudaMemcpyDeviceToHost));
  return h;
}

struct DevBuf {
  void* p = nullptr;
  size_t bytes = 0;
  explicit DevBuf(size_t b) : bytes(b) { CK(cudaMalloc(&p, b ? b : 1)); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// --------------------------------------------------------------- timing ---
static cudaStream_t g_stream;
static int g_reps = 50, g_warm = 5;
static size_t g_l2 = 64u << 20;
static std::vector<cudaEvent_t> g_ev;

struct Stat {
  double median_us, min_us;
  int reps;
};

// f(i) issues one call on g_stream using rotation slot i.
template <class F> static Stat time_op(F&& f, int reps = -1) {
  if (reps < 0) reps = g_reps;
  for (int w = 0; w < g_warm; ++w) f(w);
  CK(cudaStreamSynchronize(g_stream));
  while ((int)g_ev.size() < 2 * reps) {
    cudaEvent_t e;
    CK(cudaEventCreate(&e));
    g_ev.push_back(e);
  }
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(g_ev[2 * r], g_stream));
    f(g_warm + r);
    CK(cudaEventRecord(g_ev[2 * r + 1], g_stream));
  }
  CK(cudaStreamSynchronize(g_stream));
  CK(cudaGetLastError());
  std::vector<double> t(reps);
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, g_ev[2 * r], g_ev[2 * r + 1]));
    t[r] = 1000.0 * ms;
  }
  std::sort(t.begin(), t.end());
  double med = (reps % 2) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  return Stat{med, t[0], reps};
}

// how many copies of a working set of `set_bytes` so that consecutive calls
// never find their data in L2 (4x L2 of distinct data between reuses)
static int rot_count(size_t set_bytes) {
  size_t want = 4 * g_l2;
  size_t k = (want + set_bytes - 1) / set_bytes;
  return (int)std::max<size_t>(1, std::min<size_t>(k, 64));
}

static void emit(const char* impl, const char* op, const char* dtype, size_t n,
                 const Stat& s, double bytes, double flops, int rot, bool ok,
                 const char* extra = "") {
  std::printf(
      "{\"impl\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%zu,"
      "\"median_us\":%.3f,\"bytes\":%.0f,\"flops\":%.0f,\"min_us\":%.3f,"
      "\"reps\":%d,\"warmup\":%d,\"rot\":%d,\"ok\":%s%s}\n",
      impl, op, dtype, n, s.median_us, bytes, flops, s.min_us, s.reps, g_warm,
      rot, ok ? "true" : "false", extra);
  std::fflush(stdout);
}

static bool warn(bool ok, const char* what, size_t n, const char* fmt, double a,
                 double b) {
  if (!ok) {
    std::fprintf(stderr, "WARNING cub_peers: %s n=%zu wrong result: ", what, n);
    std::fprintf(stderr, fmt, a, b);
    std::fprintf(stderr, "\n");
  }
  return ok;
}

static bool rel_ok(double got, double want, double tol) {
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

static bool g_verify = true;

// ------------------------------------------------------------------ ops ---
static void bench_copy(size_t n) {
  int k = rot_count(2 * n * sizeof(float));
  Rot<float> src(n, k, true), dst(n, k, false);
  Stat s = time_op([&](int i) {
    CK(cudaMemcpyAsync(dst[i], src[i], n * sizeof(float), cudaMemcpyDeviceToDevice,
                       g_stream));
  });
  bool ok = true;
  if (g_verify) {
    CK(cudaMemcpyAsync(dst[0], src[0], n * sizeof(float), cudaMemcpyDeviceToDevice,
                       g_stream));
    CK(cudaStreamSynchronize(g_stream));
    std::vector<float> a = to_host(src[0], n), b = to_host(dst[0], n);
    ok = warn(std::memcmp(a.data(), b.data(), n * sizeof(float)) == 0, "copy", n,
              "%g %g", 0, 0);
  }
  emit("cuda", "copy", "f32", n, s, 2.0 * n * sizeof(float), 0, k, ok);
}

template <class T> static void bench_sum(size_t n, const char* dtype) {
  int k = rot_count(n * sizeof(T));
  Rot<T> in(n, k, true);
  DevBuf out(sizeof(T) * 64);
  T* d_out = (T*)out.p;
  size_t tb = 0;
  CK(cub::DeviceReduce::Sum(nullptr, tb, in[0], d_out, (int)n, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceReduce::Sum(tmp.p, t, in[i], d_out, (int)n, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceReduce::Sum(tmp.p, t, in[0], d_out, (int)n, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    T got;
    CK(cudaMemcpy(&got, d_out, sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<T> h = to_host(in[0], n);
    double ref = 0;
    for (T v : h) ref += (double)v;
    ok = warn(rel_ok((double)got, ref, 1e-3), "sum", n, "got %.9g want %.9g",
              (double)got, ref);
  }
  emit("cub", "sum", dtype, n, s, (double)n * sizeof(T), 0, k, ok);
}

static void bench_max(size_t n) {
  int k = rot_count(n * sizeof(float));
  Rot<float> in(n, k, true);
  DevBuf out(256);
  float* d_out = (float*)out.p;
  size_t tb = 0;
  CK(cub::DeviceReduce::Max(nullptr, tb, in[0], d_out, (int)n, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceReduce::Max(tmp.p, t, in[i], d_out, (int)n, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceReduce::Max(tmp.p, t, in[0], d_out, (int)n, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    float got;
    CK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> h = to_host(in[0], n);
    float ref = *std::max_element(h.begin(), h.end());
    ok = warn(got == ref, "max", n, "got %.9g want %.9g", got, ref);
  }
  emit("cub", "max", "f32", n, s, (double)n * sizeof(float), 0, k, ok);
}

static void bench_argmin(size_t n) {
  int k = rot_count(n * sizeof(float));
  Rot<float> in(n, k, true);
  DevBuf out(256);
  float* d_val = (float*)out.p;
  int64_t* d_idx = (int64_t*)((char*)out.p + 128);
  size_t tb = 0;
  // CCCL 3.x overload: value and index go to separate outputs
  CK(cub::DeviceReduce::ArgMin(nullptr, tb, in[0], d_val, d_idx, (int64_t)n, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceReduce::ArgMin(tmp.p, t, in[i], d_val, d_idx, (int64_t)n, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceReduce::ArgMin(tmp.p, t, in[0], d_val, d_idx, (int64_t)n, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    float gv;
    int64_t gi;
    CK(cudaMemcpy(&gv, d_val, sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&gi, d_idx, sizeof(int64_t), cudaMemcpyDeviceToHost));
    std::vector<float> h = to_host(in[0], n);
    size_t ri = (size_t)(std::min_element(h.begin(), h.end()) - h.begin());  // first min
    ok = warn(gv == h[ri], "argmin value", n, "got %.9g want %.9g", gv, h[ri]);
    ok = warn((size_t)gi == ri, "argmin index", n, "got %.0f want %.0f", (double)gi,
              (double)ri) && ok;
  }
  emit("cub", "argmin", "f32", n, s, (double)n * sizeof(float), 0, k, ok);
}

static void bench_scan(size_t n) {
  int k = rot_count(2 * n * sizeof(float));
  Rot<float> in(n, k, true), out(n, k, false);
  size_t tb = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, tb, in[0], out[0], (int)n, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceScan::InclusiveSum(tmp.p, t, in[i], out[i], (int)n, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceScan::InclusiveSum(tmp.p, t, in[0], out[0], (int)n, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    float last;
    CK(cudaMemcpy(&last, out[0] + (n - 1), sizeof(float), cudaMemcpyDeviceToHost));
    std::vector<float> h = to_host(in[0], n);
    double ref = 0;
    for (float v : h) ref += v;
    ok = warn(rel_ok(last, ref, 1e-3), "scan_sum last", n, "got %.9g want %.9g", last, ref);
  }
  emit("cub", "scan_sum", "f32", n, s, 2.0 * n * sizeof(float), 0, k, ok);
}

struct GtHalf {
  __host__ __device__ bool operator()(float x) const { return x > 0.5f; }
};

static void bench_select(size_t n) {
  int k = rot_count(2 * n * sizeof(float));
  Rot<float> in(n, k, true), out(n, k, false);
  DevBuf cnt(256);
  int* d_cnt = (int*)cnt.p;
  size_t tb = 0;
  CK(cub::DeviceSelect::If(nullptr, tb, in[0], out[0], d_cnt, (int)n, GtHalf{}, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceSelect::If(tmp.p, t, in[i], out[i], d_cnt, (int)n, GtHalf{}, g_stream));
  });
  size_t t = tb;
  CK(cub::DeviceSelect::If(tmp.p, t, in[0], out[0], d_cnt, (int)n, GtHalf{}, g_stream));
  CK(cudaStreamSynchronize(g_stream));
  int got = 0;
  CK(cudaMemcpy(&got, d_cnt, sizeof(int), cudaMemcpyDeviceToHost));
  bool ok = true;
  if (g_verify) {
    std::vector<float> h = to_host(in[0], n);
    size_t ref = 0;
    for (float v : h) ref += v > 0.5f;
    ok = warn((size_t)got == ref, "select_gt05 count", n, "got %.0f want %.0f",
              (double)got, (double)ref);
  }
  char extra[64];
  std::snprintf(extra, sizeof extra, ",\"kept\":%d", got);
  emit("cub", "select_gt05", "f32", n, s, (double)n * 4 + (double)got * 4, 0, k, ok, extra);
}

static void bench_sort(size_t n) {
  int k = rot_count(2 * n * sizeof(unsigned));
  Rot<unsigned> in(n, k, true), out(n, k, false);
  size_t tb = 0;
  CK(cub::DeviceRadixSort::SortKeys(nullptr, tb, in[0], out[0], (int)n, 0, 32, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceRadixSort::SortKeys(tmp.p, t, in[i], out[i], (int)n, 0, 32, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceRadixSort::SortKeys(tmp.p, t, in[0], out[0], (int)n, 0, 32, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    std::vector<unsigned> a = to_host(in[0], n), b = to_host(out[0], n);
    // sorted, and the same multiset (order-free checksums; a host sort of
    // 2^28 keys would take longer than the whole benchmark)
    uint64_t sa = 0, sb = 0, qa = 0, qb = 0, ha = 0, hb = 0;
    for (size_t i = 0; i < n; ++i) {
      sa += a[i], sb += b[i];
      qa += (uint64_t)a[i] * a[i], qb += (uint64_t)b[i] * b[i];
      ha += mix64(a[i]), hb += mix64(b[i]);
    }
    ok = warn(std::is_sorted(b.begin(), b.end()), "sort_u32 order", n, "%g %g", 0, 0);
    ok = warn(sa == sb && qa == qb && ha == hb, "sort_u32 keys", n, "%g %g", 0, 0) && ok;
  }
  char extra[64];
  std::snprintf(extra, sizeof extra, ",\"elems\":%zu", n);
  emit("cub", "sort_u32", "u32", n, s, 0, 0, k, ok, extra);
}

// gx bench's sort_f32: DeviceRadixSort::SortKeys on float keys (all 32 bits).
static void bench_sort_f32(size_t n) {
  int k = rot_count(2 * n * sizeof(float));
  Rot<float> in(n, k, true), out(n, k, false);
  size_t tb = 0;
  CK(cub::DeviceRadixSort::SortKeys(nullptr, tb, in[0], out[0], (int)n, 0, 32, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceRadixSort::SortKeys(tmp.p, t, in[i], out[i], (int)n, 0, 32, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceRadixSort::SortKeys(tmp.p, t, in[0], out[0], (int)n, 0, 32, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    std::vector<float> a = to_host(in[0], n), b = to_host(out[0], n);
    double sa = 0, sb = 0;  // the inputs are k / 2^24 + 2^-25: exact in f64 sums below 2^28 terms
    for (size_t i = 0; i < n; ++i) sa += a[i], sb += b[i];
    ok = warn(std::is_sorted(b.begin(), b.end()), "sort_f32 order", n, "%g %g", 0, 0);
    ok = warn(sa == sb, "sort_f32 sum", n, "got %.17g want %.17g", sb, sa) && ok;
  }
  char extra[64];
  std::snprintf(extra, sizeof extra, ",\"elems\":%zu", n);
  emit("cub", "sort_f32", "f32", n, s, 0, 0, k, ok, extra);
}

__global__ void iota_u32(unsigned* p, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = (unsigned)i;
}

// gx bench's sort_pairs_u32: DeviceRadixSort::SortPairs, u32 keys, u32 values (the
// positions: the check sees that each value carries its key, and stability).
static void bench_sort_pairs(size_t n) {
  int k = rot_count(4 * n * sizeof(unsigned));
  Rot<unsigned> kin(n, k, true), kout(n, k, false), vin(n, k, false), vout(n, k, false);
  for (int i = 0; i < k; ++i) iota_u32<<<g_fill_blocks, 256>>>(vin[i], n);
  CK(cudaGetLastError());
  size_t tb = 0;
  CK(cub::DeviceRadixSort::SortPairs(nullptr, tb, kin[0], kout[0], vin[0], vout[0], (int)n, 0, 32, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceRadixSort::SortPairs(tmp.p, t, kin[i], kout[i], vin[i], vout[i], (int)n, 0, 32, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceRadixSort::SortPairs(tmp.p, t, kin[0], kout[0], vin[0], vout[0], (int)n, 0, 32, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    std::vector<unsigned> a = to_host(kin[0], n), b = to_host(kout[0], n), v = to_host(vout[0], n);
    bool good = true;
    for (size_t i = 0; i < n && good; ++i) {
      good = v[i] < n && a[v[i]] == b[i];
      if (good && i > 0) good = b[i - 1] < b[i] || (b[i - 1] == b[i] && v[i - 1] < v[i]);
    }
    ok = warn(good, "sort_pairs_u32 pairs", n, "%g %g", 0, 0);
  }
  char extra[64];
  std::snprintf(extra, sizeof extra, ",\"elems\":%zu", n);
  emit("cub", "sort_pairs_u32", "u32", n, s, 0, 0, k, ok, extra);
}

__global__ void row_offsets(int* p, int rows, int len) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= rows) p[i] = i * len;
}

// gx bench's sort_rows_f32: rows of 1024, DeviceSegmentedSort::SortKeys.
static void bench_sort_rows(size_t n) {
  const int len = 1024;
  if (n < (size_t)len) n = len;
  int rows = (int)(n / len), k = rot_count(2 * n * sizeof(float));
  Rot<float> in(n, k, true), out(n, k, false);
  DevBuf off(sizeof(int) * (size_t)(rows + 1));
  int* o = (int*)off.p;
  row_offsets<<<(rows + 256) / 256, 256>>>(o, rows, len);
  CK(cudaGetLastError());
  size_t tb = 0;
  CK(cub::DeviceSegmentedSort::SortKeys(nullptr, tb, in[0], out[0], (int)n, rows, o, o + 1, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceSegmentedSort::SortKeys(tmp.p, t, in[i], out[i], (int)n, rows, o, o + 1, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceSegmentedSort::SortKeys(tmp.p, t, in[0], out[0], (int)n, rows, o, o + 1, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    std::vector<float> a = to_host(in[0], n), b = to_host(out[0], n);
    bool good = true;
    for (int r = 0; r < rows && r < 4096 && good; ++r) {  // the first 4096 rows: a host sort each
      std::vector<float> want(a.begin() + (size_t)r * len, a.begin() + (size_t)(r + 1) * len);
      std::sort(want.begin(), want.end());
      good = std::equal(want.begin(), want.end(), b.begin() + (size_t)r * len);
    }
    ok = warn(good, "sort_rows_f32 rows", n, "%g %g", 0, 0);
  }
  char extra[64];
  std::snprintf(extra, sizeof extra, ",\"elems\":%zu", n);
  emit("cub", "sort_rows_f32", "f32", n, s, 0, 0, k, ok, extra);
}

// gx bench's hist256_f32: DeviceHistogram::HistogramEven, 256 bins over [0, 1)
// (257 levels), int counts.
static void bench_hist256(size_t n) {
  int k = rot_count(n * sizeof(float));
  Rot<float> in(n, k, true);
  DevBuf bins(256 * sizeof(int));
  int* h = (int*)bins.p;
  size_t tb = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, tb, in[0], h, 257, 0.0f, 1.0f, (int)n, g_stream));
  DevBuf tmp(tb);
  Stat s = time_op([&](int i) {
    size_t t = tb;
    CK(cub::DeviceHistogram::HistogramEven(tmp.p, t, in[i], h, 257, 0.0f, 1.0f, (int)n, g_stream));
  });
  bool ok = true;
  if (g_verify) {
    size_t t = tb;
    CK(cub::DeviceHistogram::HistogramEven(tmp.p, t, in[0], h, 257, 0.0f, 1.0f, (int)n, g_stream));
    CK(cudaStreamSynchronize(g_stream));
    std::vector<float> a = to_host(in[0], n);
    std::vector<int> got = to_host(h, 256);
    std::vector<long long> want(256, 0);
    for (float v : a) want[std::min(255, (int)(v * 256.0f))]++;
    long long tot = 0, diff = 0;  // CUB's bin arithmetic may move a value at an edge by one bin
    for (int b = 0; b < 256; ++b) tot += got[b], diff += std::llabs(got[b] - want[b]);
    ok = warn(tot == (long long)n && diff <= 2 + (long long)n / 100000, "hist256_f32 counts", n,
              "total %.0f, off by %.0f", (double)tot, (double)diff);
  }
  char extra[64];
  std::snprintf(extra, sizeof extra, ",\"elems\":%zu", n);
  emit("cub", "hist256_f32", "f32", n, s, 0, 0, k, ok, extra);
}

// The two iota pipelines of gx's range suite (n = 2 * size elements, as gx runs
// them): CUB's reduction over a counting iterator transformed by gx's hash map
// (iota_hash_sum_i64), and by the map and the filter of the count pipeline; the
// count pipeline also as a kernel written by hand in the narrowest exact arithmetic
// (n <= 2^31: i*i fits 62 bits).  gx's plain iota | reduce(+) is not compared: NVCC
// sums a thread's run of an arithmetic series in closed form, so gx reports it as
// launch_latency_iota_sum, a time with no rate.

// gx's iota_hash_sum_i64 map, i -> (i ^ (i >> 7)) * 2654435761 % 1000 in i64 (the
// product wraps, as gx's integers do; it cannot below i = 2^31): an xorshift and
// Knuth's multiplicative hash, which no compiler sums in closed form.
struct HashMap {
  __host__ __device__ int64_t operator()(int64_t i) const {
    return (int64_t)((uint64_t)(i ^ (i >> 7)) * 2654435761ull) % 1000;
  }
};

struct CountPred {
  __host__ __device__ int64_t operator()(int64_t i) const { return ((i * i) % 1000) % 3 == 0; }
};

__global__ void count_hand(int64_t n, unsigned long long* out) {
  uint32_t c = 0;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint32_t v = (uint32_t)(((uint64_t)(uint32_t)i * (uint32_t)i) % 1000u);
    c += v % 3u == 0;
  }
  for (int d = 16; d > 0; d >>= 1) c += __shfl_down_sync(0xffffffffu, c, d);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)c);
}

// The same count by hand with the map strength-reduced, which no library does for a
// user's lambda: each thread walks a contiguous run, and (i+1)^2 mod 1000 follows
// from i^2 mod 1000 by adding (2i+1) mod 1000 -- a few 32-bit adds per element.
__global__ void count_hand_sr(int64_t n, unsigned long long* out) {
  const int64_t nth = (int64_t)gridDim.x * blockDim.x;
  const int64_t run = (n + nth - 1) / nth, b = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * run;
  const int64_t e = b + run < n ? b + run : n;
  uint32_t c = 0;
  if (b < e) {
    uint32_t s = (uint32_t)(((uint64_t)b * (uint64_t)b) % 1000u), d = (uint32_t)((2 * b + 1) % 1000);
    for (uint32_t k = 0, len = (uint32_t)(e - b); k < len; ++k) {
      c += s % 3u == 0;
      s += d;
      s = s >= 1000u ? s - 1000u : s;
      d += 2;
      d = d >= 1000u ? d - 1000u : d;
    }
  }
  for (int dd = 16; dd > 0; dd >>= 1) c += __shfl_down_sync(0xffffffffu, c, dd);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)c);
}

// Host reference: (i*i) % 1000 depends on i % 1000 only.
static int64_t count_ref(int64_t n) {
  int64_t per = 0, part = 0;
  for (int64_t r = 0; r < 1000; ++r) {
    bool k = ((r * r) % 1000) % 3 == 0;
    per += k;
    if (r < n % 1000) part += k;
  }
  return n / 1000 * per + part;
}

static void bench_iota(size_t size) {
  const int64_t n = 2 * (int64_t)size;
  DevBuf out(64);
  int64_t* d_out = (int64_t*)out.p;
  thrust::counting_iterator<int64_t> it(0);
  auto hs = thrust::make_transform_iterator(it, HashMap());
  auto tr = thrust::make_transform_iterator(it, CountPred());
  size_t tb1 = 0, tb2 = 0;
  CK(cub::DeviceReduce::Sum(nullptr, tb1, hs, d_out, n, g_stream));
  CK(cub::DeviceReduce::Sum(nullptr, tb2, tr, d_out, n, g_stream));
  DevBuf tmp(std::max(tb1, tb2));
  auto got = [&]() {
    int64_t v = 0;
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpy(&v, d_out, sizeof v, cudaMemcpyDeviceToHost));
    return v;
  };
  char ex[96], exref[96];   // rates in elements/s; hand kernels marked as references
  std::snprintf(ex, sizeof ex, ",\"elems\":%lld", (long long)n);
  std::snprintf(exref, sizeof exref, "%s,\"ref\":true", ex);
  Stat s = time_op([&](int) { size_t t = tb1; CK(cub::DeviceReduce::Sum(tmp.p, t, hs, d_out, n, g_stream)); });
  int64_t v = got(), want = 0;
  const HashMap hash;
  for (int64_t i = 0; i < n; ++i) want += hash(i);
  emit("cub", "iota_hash_sum_i64", "i64", n, s, 0, 0, 1,
       warn(v == want, "iota_hash_sum_i64", n, "got %.17g want %.17g", (double)v, (double)want), ex);
  s = time_op([&](int) { size_t t = tb2; CK(cub::DeviceReduce::Sum(tmp.p, t, tr, d_out, n, g_stream)); });
  v = got(), want = count_ref(n);
  emit("cub", "pipeline_count", "i64", n, s, 0, 0, 1,
       warn(v == want, "pipeline_count", n, "got %.17g want %.17g", (double)v, (double)want), ex);
  if (n > INT32_MAX) return;
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  s = time_op([&](int) {
    CK(cudaMemsetAsync(d_out, 0, 8, g_stream));
    count_hand<<<sms * 8, 256, 0, g_stream>>>(n, (unsigned long long*)d_out);
  });
  v = got();
  emit("cuda-hand", "pipeline_count", "i64", n, s, 0, 0, 1,
       warn(v == want, "pipeline_count (hand)", n, "got %.17g want %.17g", (double)v, (double)want), exref);
  s = time_op([&](int) {
    CK(cudaMemsetAsync(d_out, 0, 8, g_stream));
    count_hand_sr<<<sms * 8, 256, 0, g_stream>>>(n, (unsigned long long*)d_out);
  });
  v = got();
  emit("cuda-hand-sr", "pipeline_count", "i64", n, s, 0, 0, 1,
       warn(v == want, "pipeline_count (hand, strength-reduced)", n, "got %.17g want %.17g", (double)v, (double)want),
       exref);
}

static void bench_sgemm(cublasHandle_t h, int m) {
  size_t mm = (size_t)m * m;
  DevBuf A(mm * 4), B(mm * 4), C(mm * 4);
  fill<float>((float*)A.p, mm);
  fill<float>((float*)B.p, mm);
  CK(cudaMemset(C.p, 0, mm * 4));
  const float alpha = 1.0f, beta = 0.0f;
  auto call = [&](int) {
    CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &alpha, (const float*)A.p, m,
                    (const float*)B.p, m, &beta, (float*)C.p, m));
  };
  Stat s = time_op(call, g_reps);
  bool ok = true;
  if (g_verify) {
    std::vector<float> a = to_host((float*)A.p, mm), b = to_host((float*)B.p, mm),
                       c = to_host((float*)C.p, mm);
    // a handful of entries against a double-precision host dot product
    for (int t = 0; t < 8 && ok; ++t) {
      size_t i = (size_t)(mix64(777 + t) % (uint64_t)m), j = (size_t)(mix64(999 + t) % (uint64_t)m);
      double ref = 0;
      for (int l = 0; l < m; ++l) ref += (double)a[i + (size_t)l * m] * (double)b[l + j * m];
      ok = warn(rel_ok(c[i + j * m], ref, 1e-4), "sgemm entry", (size_t)m,
                "got %.9g want %.9g", c[i + j * m], ref);
    }
  }
  char extra[96];
  std::snprintf(extra, sizeof extra, ",\"m\":%d,\"k\":%d,\"math\":\"CUBLAS_DEFAULT_MATH\"", m, m);
  emit("cublas", "sgemm", "f32", (size_t)m, s, 0, 2.0 * m * (double)m * m, 1, ok, extra);
}

// f16 / bf16 copies of f32 data (round to nearest even)
__global__ void f32_to_f16(const float* x, __half* y, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = __float2half_rn(x[i]);
}
__global__ void f32_to_bf16(const float* x, __nv_bfloat16* y, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = __float2bfloat16_rn(x[i]);
}

// The value of a finite half's bits on the host (the inputs here are finite).
static double half_value(uint16_t h, bool bf) {
  if (bf) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp((double)m, -24) : std::ldexp((double)(m | 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

// cublasGemmEx on f16 or bf16 (A, B, C of that type, f32 accumulation): the peer
// of gx's gemm_f16 / gemm_bf16 (cuBLAS called directly).
static void bench_hgemm(cublasHandle_t h, int m, bool bf) {
  size_t mm = (size_t)m * m;
  DevBuf F(mm * 4), A(mm * 2), B(mm * 2), C(mm * 2);
  cudaDataType dt = bf ? CUDA_R_16BF : CUDA_R_16F;
  DevBuf* ab[2] = {&A, &B};
  for (int q = 0; q < 2; ++q) {
    fill<float>((float*)F.p, mm);
    if (bf)
      f32_to_bf16<<<g_fill_blocks, 256>>>((const float*)F.p, (__nv_bfloat16*)ab[q]->p, mm);
    else
      f32_to_f16<<<g_fill_blocks, 256>>>((const float*)F.p, (__half*)ab[q]->p, mm);
    CK(cudaGetLastError());
  }
  CK(cudaMemset(C.p, 0, mm * 2));
  CK(cudaDeviceSynchronize());
  const float alpha = 1.0f, beta = 0.0f;
  auto call = [&](int) {
    CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &alpha, A.p, dt, m, B.p, dt, m, &beta, C.p, dt, m,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  Stat s = time_op(call, g_reps);
  bool ok = true;
  if (g_verify) {
    std::vector<uint16_t> a = to_host((const uint16_t*)A.p, mm), b = to_host((const uint16_t*)B.p, mm),
                          c = to_host((const uint16_t*)C.p, mm);
    for (int t = 0; t < 8 && ok; ++t) {
      size_t i = (size_t)(mix64(777 + t) % (uint64_t)m), j = (size_t)(mix64(999 + t) % (uint64_t)m);
      double ref = 0;
      for (int l = 0; l < m; ++l) ref += half_value(a[i + (size_t)l * m], bf) * half_value(b[l + j * m], bf);
      ok = warn(rel_ok(half_value(c[i + j * m], bf), ref, bf ? 1.6e-2 : 2e-3), bf ? "gemm_bf16 entry" : "gemm_f16 entry",
                (size_t)m, "got %.9g want %.9g", half_value(c[i + j * m], bf), ref);
    }
  }
  char extra[112];
  std::snprintf(extra, sizeof extra, ",\"m\":%d,\"k\":%d,\"math\":\"CUBLAS_COMPUTE_32F\"", m, m);
  emit("cublas", bf ? "gemm_bf16" : "gemm_f16", bf ? "bf16" : "f16", (size_t)m, s, 0, 2.0 * m * (double)m * m, 1, ok,
       extra);
}

// ------------------------------------------------------------- arguments --
// ------------------------------------------------ latency (host clock) ---
// gx bench's floor_* and lat_* cases: one call until its result is usable on
// the host, timed with the host clock around the call and its wait (median of
// --reps after --warmup), warm inputs (no rotation: gx's cases reuse theirs).
template <class F> static Stat time_host(F&& f) {
  for (int w = 0; w < g_warm; ++w) f();
  CK(cudaStreamSynchronize(g_stream));
  std::vector<double> t(g_reps);
  for (int r = 0; r < g_reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t[r] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(t.begin(), t.end());
  int reps = g_reps;
  double med = (reps % 2) ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  return Stat{med, t[0], reps};
}

__global__ void floor_empty() {}

// An empty kernel + stream sync; the same + an 8-byte device-to-host copy.
static void bench_floor() {
  DevBuf word(8);
  const long long magic = 0x5eed5eed1234LL;
  CK(cudaMemcpy(word.p, &magic, 8, cudaMemcpyHostToDevice));
  Stat s = time_host([&] {
    floor_empty<<<1, 1, 0, g_stream>>>();
    CK(cudaStreamSynchronize(g_stream));
  });
  CK(cudaGetLastError());
  emit("cuda", "floor_launch_sync", "-", 1, s, 0, 0, 1, true, ",\"clock\":\"host\"");
  long long got = 0;
  s = time_host([&] {
    floor_empty<<<1, 1, 0, g_stream>>>();
    CK(cudaMemcpyAsync(&got, word.p, 8, cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
  });
  bool ok = warn(got == magic, "floor_launch_d2h_sync", 1, "got %.0f want %.0f", (double)got, (double)magic);
  emit("cuda", "floor_launch_d2h_sync", "-", 1, s, 0, 0, 1, ok, ",\"clock\":\"host\"");
}

// DeviceReduce::Sum + a 4-byte copy to the host + sync; DeviceScan + sync.
static void bench_lat(size_t n) {
  Rot<float> in(n, 1, true), out(n, 1, false);
  std::vector<float> h = to_host(in[0], n);
  double ref = 0;
  for (float v : h) ref += v;
  size_t tr = 0, ts = 0;
  CK(cub::DeviceReduce::Sum(nullptr, tr, in[0], out[0], (int)n, g_stream));
  CK(cub::DeviceScan::InclusiveSum(nullptr, ts, in[0], out[0], (int)n, g_stream));
  DevBuf tmp(std::max(tr, ts));
  float got = 0;
  Stat s = time_host([&] {
    size_t t = tr;
    CK(cub::DeviceReduce::Sum(tmp.p, t, in[0], out[0], (int)n, g_stream));
    CK(cudaMemcpyAsync(&got, out[0], sizeof got, cudaMemcpyDeviceToHost, g_stream));
    CK(cudaStreamSynchronize(g_stream));
  });
  bool ok = warn(rel_ok(got, ref, 1e-3), "lat_sum_to_host", n, "got %.9g want %.9g", got, ref);
  emit("cub", "lat_sum_to_host", "f32", n, s, (double)n * sizeof(float), 0, 1, ok, ",\"clock\":\"host\"");
  s = time_host([&] {
    size_t t = ts;
    CK(cub::DeviceScan::InclusiveSum(tmp.p, t, in[0], out[0], (int)n, g_stream));
    CK(cudaStreamSynchronize(g_stream));
  });
  float last = 0;
  CK(cudaMemcpy(&last, out[0] + (n - 1), sizeof last, cudaMemcpyDeviceToHost));
  ok = warn(rel_ok(last, ref, 1e-3), "lat_scan_sync last", n, "got %.9g want %.9g", last, ref);
  emit("cub", "lat_scan_sync", "f32", n, s, 2.0 * n * sizeof(float), 0, 1, ok, ",\"clock\":\"host\"");
}

static std::vector<size_t> parse_sizes(const char* s) {
  std::vector<size_t> v;
  std::string str(s);
  size_t pos = 0;
  while (pos <= str.size()) {
    size_t c = str.find(',', pos);
    std::string tok = str.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (!tok.empty()) {
      size_t val;
      if (tok.rfind("2^", 0) == 0) val = (size_t)1 << std::stoul(tok.substr(2));
      else {
        val = (size_t)std::stoull(tok);
        if (val < 64) val = (size_t)1 << val;  // small numbers are exponents
      }
      v.push_back(val);
    }
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return v;
}

static bool want(const std::string& ops, const char* op) {
  if (ops.empty()) return true;
  std::string o = "," + ops + ",";
  return o.find(std::string(",") + op + ",") != std::string::npos;
}

// Opt-in ops (not part of the default run): named in --ops.
static bool named(const std::string& ops, const char* op) {
  return ("," + ops + ",").find("," + std::string(op) + ",") != std::string::npos;
}

static std::string json_escape(const char* s) {
  std::string r;
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') r += '\\';
    if ((unsigned char)*s >= 32) r += *s;
  }
  return r;
}

static std::string driver_release() {
  // the NVIDIA kernel module release (e.g. 580.159.04), Linux only
  FILE* f = std::fopen("/proc/driver/nvidia/version", "r");
  if (!f) return "";
  char line[512] = {0};
  std::string r;
  if (std::fgets(line, sizeof line, f)) {
    const char* p = std::strstr(line, "Kernel Module");
    if (p) {
      // "Kernel Module  580.65" or "Open Kernel Module for x86_64  580.65": the first
      // word that starts with a digit
      p += std::strlen("Kernel Module");
      while (*p && *p != '\n') {
        while (*p == ' ' || *p == '\t') ++p;
        const bool digit = *p >= '0' && *p <= '9';
        std::string w;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') w += *p++;
        if (digit) { r = w; break; }
      }
    }
  }
  std::fclose(f);
  return r;
}

int main(int argc, char** argv) {
  const char* sizes_s = "20,24,28";
  const char* gemm_s = "4096,8192";
  std::string ops;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cub_peers: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--sizes") sizes_s = next();
    else if (a == "--gemm") gemm_s = next();
    else if (a == "--reps") g_reps = std::max(1, std::atoi(next()));
    else if (a == "--warmup") g_warm = std::max(0, std::atoi(next()));
    else if (a == "--ops") ops = next();
    else if (a == "--no-verify") g_verify = false;
    else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: cub_peers [--sizes 20,24,28] [--gemm 4096,8192|none] [--reps 50]\n"
          "                 [--warmup 5] [--ops copy,sum,max,argmin,scan_sum,\n"
          "                  select_gt05,sort_u32,sort_f32,sort_pairs_u32,sort_rows_f32,\n"
          "                  hist256_f32,iota,sgemm] [--no-verify]\n"
          "opt-in (only when named in --ops): lat (lat_sum_to_host, lat_scan_sync at\n"
          "--sizes, host clock), floor (floor_launch_sync, floor_launch_d2h_sync)\n"
          "sizes < 64 are exponents of 2; 2^N also accepted.\n");
      return 0;
    } else {
      std::fprintf(stderr, "cub_peers: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (g_reps < 30)
    std::fprintf(stderr, "note cub_peers: --reps %d is below the suite's minimum of 30\n", g_reps);
  std::vector<size_t> sizes = parse_sizes(sizes_s);
  std::vector<size_t> gemms;
  if (std::strcmp(gemm_s, "none") != 0 && std::strcmp(gemm_s, "0") != 0)
    for (const char* p = gemm_s; *p;) {
      gemms.push_back((size_t)std::strtoull(p, nullptr, 10));
      const char* c = std::strchr(p, ',');
      if (!c) break;
      p = c + 1;
    }

  int dev = 0;
  CK(cudaSetDevice(dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  int l2 = 0, memclk = 0, busw = 0, drv = 0, rt = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CK(cudaDeviceGetAttribute(&memclk, cudaDevAttrMemoryClockRate, dev));
  CK(cudaDeviceGetAttribute(&busw, cudaDevAttrGlobalMemoryBusWidth, dev));
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  if (l2 > 0) g_l2 = (size_t)l2;
  g_fill_blocks = prop.multiProcessorCount * 8;
  CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));

  cublasHandle_t blas = nullptr;
  int blas_ver = 0;
  if (!gemms.empty() && want(ops, "sgemm")) {
    CKB(cublasCreate(&blas));
    CKB(cublasSetStream(blas, g_stream));
    // plain FP32: no TF32 tensor-op math
    CKB(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
    CKB(cublasGetVersion(blas, &blas_ver));
    const char* ov = std::getenv("NVIDIA_TF32_OVERRIDE");
    if (ov && std::strcmp(ov, "0") != 0)
      std::fprintf(stderr, "WARNING cub_peers: NVIDIA_TF32_OVERRIDE=%s\n", ov);
  }

  std::string drel = driver_release();
  std::printf(
      "{\"impl\":\"device\",\"name\":\"%s\",\"cc\":\"%d.%d\",\"sms\":%d,\"l2_bytes\":%d,"
      "\"mem_bytes\":%zu,\"mem_clock_khz\":%d,\"bus_bits\":%d,\"peak_gbps\":%.1f,"
      "\"driver\":\"%s\",\"driver_cuda\":%d,\"runtime\":%d,\"cub\":%d,\"cublas\":%d,"
      "\"reps\":%d,\"warmup\":%d}\n",
      json_escape(prop.name).c_str(), prop.major, prop.minor, prop.multiProcessorCount, l2,
      (size_t)prop.totalGlobalMem, memclk, busw, 2.0 * memclk * 1e3 * (busw / 8) / 1e9,
      json_escape(drel.c_str()).c_str(), drv, rt, (int)CUB_VERSION, blas_ver, g_reps, g_warm);
  std::fflush(stdout);

  for (size_t n : sizes) {
    if (n == 0 || n > (size_t)INT32_MAX) {
      std::fprintf(stderr, "cub_peers: skipping size %zu (must be 1..2^31-1)\n", n);
      continue;
    }
    if (want(ops, "copy")) bench_copy(n);
    if (want(ops, "sum")) {
      bench_sum<float>(n, "f32");
      bench_sum<int>(n, "i32");
    }
    if (want(ops, "max")) bench_max(n);
    if (want(ops, "argmin")) bench_argmin(n);
    if (want(ops, "scan_sum")) bench_scan(n);
    if (want(ops, "select_gt05")) bench_select(n);
    if (want(ops, "sort_u32")) bench_sort(n);
    if (want(ops, "sort_f32")) bench_sort_f32(n);
    if (want(ops, "sort_pairs_u32")) bench_sort_pairs(n);
    if (want(ops, "sort_rows_f32")) bench_sort_rows(n);
    if (want(ops, "hist256_f32")) bench_hist256(n);
    if (want(ops, "iota")) bench_iota(n);
    if (named(ops, "lat")) bench_lat(n);
  }
  if (named(ops, "floor")) bench_floor();
  if (blas) {
    for (size_t m : gemms) bench_sgemm(blas, (int)m);
    for (size_t m : gemms) bench_hgemm(blas, (int)m, false);
    for (size_t m : gemms) bench_hgemm(blas, (int)m, true);
    CKB(cublasDestroy(blas));
  }
  for (cudaEvent_t e : g_ev) CK(cudaEventDestroy(e));
  CK(cudaStreamDestroy(g_stream));
  return 0;
}
