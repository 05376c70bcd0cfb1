// GEMM throughput (cuBLASLt) at Llama 3.1 layer shapes and HBM copy
// bandwidth: what calibrates efficiency.gemm_max, gemm_half_flops and
// hbm_efficiency (src/calibrate/calibration.cpp, fit_compute).
// GEMM: D[m x n] = A[m x k] B[k x n] with m = tokens of one micro-batch
// (8192 = sequence 8192 x micro-batch 1), "TN" layout (cuBLASLt's FP8
// requirement: A transposed, B not), FP32 accumulation, BF16 output.
#include "nccl_backend.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>

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
  std::vector<cudaEvent_t> ev(std::size_t(2 * iters));
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < warmup + iters; ++i) {
    if (i >= warmup) CUDA_CHECK(cudaEventRecord(ev[std::size_t(2 * (i - warmup))], s));
    CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
    if (i >= warmup) CUDA_CHECK(cudaEventRecord(ev[std::size_t(2 * (i - warmup) + 1)], s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev[std::size_t(2 * i)], ev[std::size_t(2 * i + 1)]));
    t.push_back(double(ms) * 1e-3);
  }
  HbmMeasurement h;
  h.method = "cudaMemcpyAsync device-to-device (read + write counted)";
  h.bytes = double(bytes);
  h.time_s = median_of(t);
  h.time_min_s = *std::min_element(t.begin(), t.end());
  h.bandwidth_bytes_per_s = 2.0 * h.bytes / h.time_s;
  out.hbm.push_back(h);
  for (auto e : ev) cudaEventDestroy(e);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
}

void measure_gemms(int device, MeasurementSet& out, int warmup, int iters, std::vector<std::string>& notes) {
  CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const bool has_fp8 = prop.major * 10 + prop.minor >= 89;
  if (!has_fp8)
    notes.push_back(fmt::format("fp8 GEMMs skipped: compute capability {}.{} < 8.9", prop.major, prop.minor));
  cublasLtHandle_t lt;
  LT_CHECK(cublasLtCreate(&lt));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::size_t workspace_bytes = std::size_t(64) << 20;
  void* workspace = nullptr;
  CUDA_CHECK(cudaMalloc(&workspace, workspace_bytes));
  std::vector<cudaEvent_t> ev(std::size_t(2 * iters));
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));

  for (int fp8 = 0; fp8 < (has_fp8 ? 2 : 1); ++fp8) {
    const cudaDataType_t ab = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    const std::size_t ab_size = fp8 ? 1 : 2;
    for (const Shape& sh : kShapes) {
      void *A = nullptr, *B = nullptr, *D = nullptr;
      const std::size_t a_bytes = std::size_t(sh.k * sh.m) * ab_size, b_bytes = std::size_t(sh.k * sh.n) * ab_size;
      const std::size_t d_bytes = std::size_t(sh.m * sh.n) * 2;
      CUDA_CHECK(cudaMalloc(&A, a_bytes));
      CUDA_CHECK(cudaMalloc(&B, b_bytes));
      CUDA_CHECK(cudaMalloc(&D, d_bytes));
      fill_random(A, a_bytes, fp8);
      fill_random(B, b_bytes, fp8);
      cublasLtMatmulDesc_t op;
      LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
      const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
      LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
      LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
      // Column-major: A is k x m (transposed to m x k), B is k x n, D is m x n.
      cublasLtMatrixLayout_t la, lb, ld;
      LT_CHECK(cublasLtMatrixLayoutCreate(&la, ab, std::uint64_t(sh.k), std::uint64_t(sh.m), sh.k));
      LT_CHECK(cublasLtMatrixLayoutCreate(&lb, ab, std::uint64_t(sh.k), std::uint64_t(sh.n), sh.k));
      LT_CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, std::uint64_t(sh.m), std::uint64_t(sh.n), sh.m));
      cublasLtMatmulPreference_t pref;
      LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
      LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                    sizeof workspace_bytes));
      cublasLtMatmulHeuristicResult_t heur{};
      int found = 0;
      const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found);
      if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
        notes.push_back(fmt::format("{} {}: no cuBLASLt algorithm, skipped", sh.name, fp8 ? "fp8" : "bf16"));
      } else {
        const float alpha = 1.0f, beta = 0.0f;
        for (int i = 0; i < warmup + iters; ++i) {
          if (i >= warmup) CUDA_CHECK(cudaEventRecord(ev[std::size_t(2 * (i - warmup))], s));
          LT_CHECK(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heur.algo, workspace,
                                  workspace_bytes, s));
          if (i >= warmup) CUDA_CHECK(cudaEventRecord(ev[std::size_t(2 * (i - warmup) + 1)], s));
        }
        CUDA_CHECK(cudaStreamSynchronize(s));
        std::vector<double> times;
        for (int i = 0; i < iters; ++i) {
          float ms = 0;
          CUDA_CHECK(cudaEventElapsedTime(&ms, ev[std::size_t(2 * i)], ev[std::size_t(2 * i + 1)]));
          times.push_back(double(ms) * 1e-3);
        }
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
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(ld);
      cublasLtMatmulDescDestroy(op);
      cudaFree(A);
      cudaFree(B);
      cudaFree(D);
    }
  }
  for (auto e : ev) cudaEventDestroy(e);
  cudaFree(workspace);
  cudaStreamDestroy(s);
  cublasLtDestroy(lt);
}

}  // namespace planner::bench
