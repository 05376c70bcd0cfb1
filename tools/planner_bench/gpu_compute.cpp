// GEMM throughput (cuBLASLt) at Llama 3.1 layer shapes and HBM copy
// bandwidth: what calibrates efficiency.gemm_max, gemm_half_flops and
// hbm_efficiency (src/calibrate/calibration.cpp, fit_compute).
// GEMM: D[m x n] = A[m x k] B[k x n] with m = tokens of one micro-batch
// (8192 = sequence 8192 x micro-batch 1), "TN" layout (cuBLASLt's FP8
// requirement: A transposed, B not), FP32 accumulation, BF16 output.
#include "nccl_backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace planner::bench {

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(fmt::format("{}: cuBLAS status {}", what, int(s)));
}
#define CUDA_CHECK(x) check_cuda((x), #x)
#define LT_CHECK(x) check_lt((x), #x)

struct Shape {
  const char* name;
  std::int64_t m, n, k;
};

// Llama 3.1 (arXiv:2407.21783, Table 3): 8B with TP 1 (d 4096, F 14336, 32
// heads, 8 KV heads, head dim 128) and 70B with TP 8 (d 8192, F 28672, 64
// heads, 8 KV heads): QKV, attention output, gate+up (fused), down.
constexpr std::int64_t kTokens = 8192;
constexpr Shape kShapes[] = {
    {"llama3.1-8b tp1 qkv", kTokens, 4096 + 2 * 1024, 4096},
    {"llama3.1-8b tp1 attn-out", kTokens, 4096, 4096},
    {"llama3.1-8b tp1 gate-up", kTokens, 2 * 14336, 4096},
    {"llama3.1-8b tp1 down", kTokens, 4096, 14336},
    {"llama3.1-70b tp8 qkv", kTokens, (8192 + 2 * 1024) / 8, 8192},
    {"llama3.1-70b tp8 attn-out", kTokens, 8192, 8192 / 8},
    {"llama3.1-70b tp8 gate-up", kTokens, 2 * 28672 / 8, 8192},
    {"llama3.1-70b tp8 down", kTokens, 8192, 28672 / 8},
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Random, finite inputs: constant data would toggle fewer bits and draw less power.
void fill_random(void* dev, std::size_t bytes, bool fp8) {
  std::vector<std::uint8_t> chunk(std::size_t(1) << 22);
  std::mt19937 gen(12345);
  std::uniform_int_distribution<int> any(0, 255);
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    if (fp8) {
      // e4m3: sign, exponent 0..13 (no NaN encodings), any mantissa.
      chunk[i] = std::uint8_t((any(gen) & 0x87) | ((any(gen) % 14) << 3));
    } else {
      // bf16 little-endian: low byte any, high byte sign | exponent near 1.0 (0x3c..0x3f).
      chunk[i] = (i % 2) ? std::uint8_t((0x3c + (any(gen) & 3)) | (any(gen) & 0x80)) : std::uint8_t(any(gen));
    }
  }
  for (std::size_t off = 0; off < bytes; off += chunk.size())
    CUDA_CHECK(cudaMemcpy(static_cast<char*>(dev) + off, chunk.data(), std::min(chunk.size(), bytes - off),
                          cudaMemcpyHostToDevice));
}

// Seconds of each of `iters` calls of `op` on stream `s` after `warmup`
// untimed ones, back to back: CUDA events around each call, read after one
// synchronisation (no host gap between calls).
std::vector<double> time_each(cudaStream_t s, int warmup, int iters, const std::function<void()>& op) {
  std::vector<cudaEvent_t> ev(std::size_t(2 * iters));
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < warmup + iters; ++i) {
    if (i >= warmup) CUDA_CHECK(cudaEventRecord(ev[std::size_t(2 * (i - warmup))], s));
    op();
    if (i >= warmup) CUDA_CHECK(cudaEventRecord(ev[std::size_t(2 * (i - warmup) + 1)], s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev[std::size_t(2 * i)], ev[std::size_t(2 * i + 1)]));
    t.push_back(double(ms) * 1e-3);
  }
  for (auto e : ev) cudaEventDestroy(e);
  return t;
}

}  // namespace

void measure_hbm(int device, MeasurementSet& out, int warmup, int iters) {
  CUDA_CHECK(cudaSetDevice(device));
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const std::size_t bytes = std::min<std::size_t>(std::size_t(1) << 30, free / 4);
  void *a = nullptr, *b = nullptr;
  CUDA_CHECK(cudaMalloc(&a, bytes));
  CUDA_CHECK(cudaMalloc(&b, bytes));
  CUDA_CHECK(cudaMemset(a, 1, bytes));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::vector<double> t =
      time_each(s, warmup, iters, [&] { CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); });
  HbmMeasurement h;
  h.method = "cudaMemcpyAsync device-to-device (read + write counted)";
  h.bytes = double(bytes);
  h.time_s = median_of(t);
  h.time_min_s = *std::min_element(t.begin(), t.end());
  h.bandwidth_bytes_per_s = 2.0 * h.bytes / h.time_s;
  out.hbm.push_back(h);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
}

namespace {

// One cuBLASLt GEMM of a shape and dtype: its buffers (random, finite), its
// descriptors and cuBLASLt's first heuristic algorithm. ok() is false when
// cuBLASLt offers none.
class LtGemm {
 public:
  LtGemm(cublasLtHandle_t lt, const Shape& sh, bool fp8, void* workspace, std::size_t workspace_bytes)
      : lt_(lt), workspace_(workspace), workspace_bytes_(workspace_bytes) {
    const cudaDataType_t ab = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    const std::size_t ab_size = fp8 ? 1 : 2;
    const std::size_t a_bytes = std::size_t(sh.k * sh.m) * ab_size, b_bytes = std::size_t(sh.k * sh.n) * ab_size;
    CUDA_CHECK(cudaMalloc(&A_, a_bytes));
    CUDA_CHECK(cudaMalloc(&B_, b_bytes));
    CUDA_CHECK(cudaMalloc(&D_, std::size_t(sh.m * sh.n) * 2));
    fill_random(A_, a_bytes, fp8);
    fill_random(B_, b_bytes, fp8);
    LT_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
    // Column-major: A is k x m (transposed to m x k), B is k x n, D is m x n.
    LT_CHECK(cublasLtMatrixLayoutCreate(&la_, ab, std::uint64_t(sh.k), std::uint64_t(sh.m), sh.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb_, ab, std::uint64_t(sh.k), std::uint64_t(sh.n), sh.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&ld_, CUDA_R_16BF, std::uint64_t(sh.m), std::uint64_t(sh.n), sh.m));
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                                  sizeof workspace_bytes_));
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt_, op_, la_, lb_, ld_, ld_, pref_, 1, &heur_, &found);
    ok_ = hs == CUBLAS_STATUS_SUCCESS && found > 0;
  }
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  ~LtGemm() {
    cublasLtMatmulPreferenceDestroy(pref_);
    cublasLtMatrixLayoutDestroy(la_);
    cublasLtMatrixLayoutDestroy(lb_);
    cublasLtMatrixLayoutDestroy(ld_);
    cublasLtMatmulDescDestroy(op_);
    cudaFree(A_);
    cudaFree(B_);
    cudaFree(D_);
  }
  [[nodiscard]] bool ok() const { return ok_; }
  void run(cudaStream_t s) {
    const float alpha = 1.0f, beta = 0.0f;
    LT_CHECK(cublasLtMatmul(lt_, op_, &alpha, A_, la_, B_, lb_, &beta, D_, ld_, D_, ld_, &heur_.algo, workspace_,
                            workspace_bytes_, s));
  }

 private:
  cublasLtHandle_t lt_;
  void* workspace_;
  std::size_t workspace_bytes_;
  void *A_ = nullptr, *B_ = nullptr, *D_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heur_{};
  bool ok_ = false;
};

// The cuBLASLt handle, a stream and a workspace for one device.
struct LtContext {
  static constexpr std::size_t kWorkspaceBytes = std::size_t(64) << 20;
  cublasLtHandle_t lt = nullptr;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  explicit LtContext(int device) {
    CUDA_CHECK(cudaSetDevice(device));
    LT_CHECK(cublasLtCreate(&lt));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
  }
  LtContext(const LtContext&) = delete;
  LtContext& operator=(const LtContext&) = delete;
  ~LtContext() {
    cudaFree(workspace);
    cudaStreamDestroy(stream);
    cublasLtDestroy(lt);
  }
};

// Seconds per call of `calls` back-to-back calls, CUDA events around them.
double time_calls(LtGemm& g, cudaStream_t s, int calls, cudaEvent_t a, cudaEvent_t b) {
  CUDA_CHECK(cudaEventRecord(a, s));
  for (int i = 0; i < calls; ++i) g.run(s);
  CUDA_CHECK(cudaEventRecord(b, s));
  CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return double(ms) * 1e-3 / calls;
}

}  // namespace

void measure_gemms(int device, MeasurementSet& out, int warmup, int iters, std::vector<std::string>& notes) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const bool has_fp8 = prop.major * 10 + prop.minor >= 89;
  if (!has_fp8)
    notes.push_back(fmt::format("fp8 GEMMs skipped: compute capability {}.{} < 8.9", prop.major, prop.minor));
  LtContext ctx(device);

  for (int fp8 = 0; fp8 < (has_fp8 ? 2 : 1); ++fp8) {
    for (const Shape& sh : kShapes) {
      LtGemm gemm(ctx.lt, sh, fp8 != 0, ctx.workspace, LtContext::kWorkspaceBytes);
      if (!gemm.ok()) {
        notes.push_back(fmt::format("{} {}: no cuBLASLt algorithm, skipped", sh.name, fp8 ? "fp8" : "bf16"));
        continue;
      }
      const std::vector<double> times = time_each(ctx.stream, warmup, iters, [&] { gemm.run(ctx.stream); });
      GemmMeasurement g;
      g.name = sh.name;
      g.dtype = fp8 ? "fp8" : "bf16";
      g.m = sh.m;
      g.n = sh.n;
      g.k = sh.k;
      g.time_s = median_of(times);
      g.time_min_s = *std::min_element(times.begin(), times.end());
      g.flops_per_s = 2.0 * double(sh.m) * double(sh.n) * double(sh.k) / g.time_s;
      out.gemm.push_back(g);
      std::printf("  gemm %-28s %-4s m %6lld n %6lld k %6lld  %9.1f us  %7.1f TFLOP/s\n", sh.name, g.dtype.c_str(),
                  (long long)sh.m, (long long)sh.n, (long long)sh.k, g.time_s * 1e6, g.flops_per_s / 1e12);
    }
  }
}

void measure_sustained_gemm(int device, MeasurementSet& out, double seconds, std::vector<std::string>& notes) {
  // The largest BF16 shape (8B gate-up, ~1.9 TFLOP a call). On a lent H100 a
  // GEMM loop settled within ~15 s at the 700 W limit (hardware_profiles/
  // measured/h100-sxm-2026-11-27/compute_probe.json), so the second half of a
  // 30 s run is the settled state.
  const Shape& sh = kShapes[2];
  LtContext ctx(device);
  LtGemm gemm(ctx.lt, sh, false, ctx.workspace, LtContext::kWorkspaceBytes);
  if (!gemm.ok()) {
    notes.push_back(fmt::format("{} bf16: no cuBLASLt algorithm, sustained run skipped", sh.name));
    return;
  }
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  const double flops = 2.0 * double(sh.m) * double(sh.n) * double(sh.k);
  for (int i = 0; i < 3; ++i) gemm.run(ctx.stream);
  CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  std::this_thread::sleep_for(std::chrono::seconds(5));  // idle: the burst starts from a cool GPU
  const double burst = flops / time_calls(gemm, ctx.stream, 10, a, b);
  std::vector<std::pair<double, double>> chunks;  // (seconds since start, FLOP/s)
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  while (since() < seconds) {
    const double at = since();
    chunks.emplace_back(at, flops / time_calls(gemm, ctx.stream, 20, a, b));
  }
  std::vector<double> settled;
  for (const auto& [at, r] : chunks)
    if (at >= seconds / 2) settled.push_back(r);
  if (settled.empty()) settled.push_back(chunks.back().second);
  SustainedGemmMeasurement x;
  x.name = sh.name;
  x.dtype = "bf16";
  x.m = sh.m;
  x.n = sh.n;
  x.k = sh.k;
  x.duration_s = since();
  x.burst_flops_per_s = burst;
  x.sustained_flops_per_s = median_of(settled);
  out.gemm_sustained.push_back(x);
  std::printf("  sustained gemm %-18s bf16 burst %7.1f TFLOP/s, second half of %.0f s %7.1f TFLOP/s (x %.3f)\n",
              sh.name, burst / 1e12, x.duration_s, x.sustained_flops_per_s / 1e12, x.sustained_flops_per_s / burst);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

}  // namespace planner::bench
