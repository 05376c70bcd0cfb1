// The parts of one layer's cost that live in more than one file (private to
// src/model/): its dimensions on one GPU, the HBM and sustained tensor-core
// rates (gemm_cost.cpp prices GEMMs with them), and the TP and CP
// communication terms layer_comm.cpp adds to the LayerTime layer_cost.cpp
// assembles.
#pragma once

#include <array>

#include "planner/model/explain.h"
#include "planner/model/layer_cost.h"

namespace planner::layer_detail {

constexpr double kAct = 2.0;  // bytes per bf16 activation element

// Bytes per element of a GEMM input kept for the weight-gradient GEMM. FP8
// training keeps the quantised copy the forward GEMM ran on (1 byte, its
// column-wise data only): Transformer Engine's Linear saves `inputmat` after
// update_usage(rowwise_usage=False, columnwise_usage=True), LayerNormLinear
// the quantised `ln_out`, GroupedLinear its quantised inputs
// (transformer_engine/pytorch/module/linear.py, layernorm_linear.py,
// grouped_linear.py); DeepSeek-V3 §3.3 caches activations in FP8 for the
// Linear backward likewise. Per-block scales (MXFP8: 1 byte per 32) are not
// counted. bf16: the bf16 tensor itself.
constexpr double gemm_input_bytes(DType dt) { return dt == DType::fp8 ? 1.0 : kAct; }

// Achieved HBM bandwidth of memory-bound kernels: nominal x hbm_efficiency (roofline, Williams et al. 2009).
inline double hbm_bw(const HardwareProfile& hw) { return hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency; }

// Tensor-core throughput a training run sustains: the datasheet peak at the
// clock the run holds under the board power limit (sustained_clock_fraction
// of the clock of the burst measurements behind gemm_max and attention_max).
// Throughput scales with the SM clock at a fixed number of tensor-core
// operations per cycle (NVIDIA H100 datasheet: peak = tensor cores x FLOP per
// clock x clock). HBM-bound work keeps its own rate (hbm_bw).
inline double sustained_peak(const HardwareProfile& hw, DType dt) {
  return hw.peak_flops_per_s[std::size_t(dt)] * hw.efficiency.sustained_clock_fraction;
}

// Dimensions of one layer's work on one GPU for one micro-batch.
struct Dims {
  double b, s, s_local, n, h, H, KV, hd, F, t, cp, sp_div;
  bool gated, dropout, rope;
  // Multi-head latent attention (ModelSpec::mla); zero / false otherwise.
  bool mla = false;
  double q_lora = 0, kv_lora = 0, qk_hd = 0, rope_hd = 0, v_hd = 0;
};

// Elements per token of Q, K and V over all heads (before TP): (H + 2 KV) x
// head_dim; MLA: H heads of qk_nope + qk_rope for Q and K and v_head_dim for
// V (DeepSeek-V2 §2.1; Megatron-Core multi_latent_attention.py).
// One layer's dimensions on one GPU (layer_cost.cpp).
[[nodiscard]] Dims dims(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts);

inline double qkv_width(const Dims& d) {
  return d.mla ? d.H * (2.0 * (d.qk_hd + d.rope_hd) + d.v_hd) : (d.H + 2.0 * d.KV) * d.hd;
}

// Forward time of the QKV, O, FFN-in and FFN-out GEMMs, in that order (the
// GEMMs TP communication overlaps with under --tp-overlap).
using GemmTimes = std::array<double, 4>;

// Tensor parallelism (tp > 1): the layer's TP collectives, exposed or
// overlapped (Megatron --tp-comm-overlap; XLA on a TPU torus). Needs the GEMM
// times set (and stretched for the slowest chip).
void add_tp_comm(LayerTime& lt, const Dims& d, const HardwareProfile& hw, const ParallelConfig& pc,
                 const TrainingSpec& ts, const GemmTimes& gemm_fwd, Explain* ex);

// Context parallelism (cp > 1): the K/V ring exchange beside the attention
// kernels. Needs the attention times set.
void add_cp_exchange(LayerTime& lt, const Dims& d, const HardwareProfile& hw, const ParallelConfig& pc, Explain* ex);

// Megatron --recompute-modules (recompute_modules.h) on a dense layer, or on
// a MoE layer's non-routed part (moe_layer_dense_part): the forward pieces
// the backward runs again, set as lt.recompute_s (and the MLP's TP
// collectives as lt.tp_comm_recompute_s). Needs the forward terms set.
void add_module_recompute(LayerTime& lt, const Dims& d, const HardwareProfile& hw, const ParallelConfig& pc,
                          const TrainingSpec& ts, Explain* ex);

// The activation bytes of one layer the modules discard (of
// full_layer_bytes; attention_core_bytes: what core_attn drops, unfused only).
[[nodiscard]] double module_dropped_bytes(const Dims& d, const ParallelConfig& pc, const TrainingSpec& ts,
                                          double attention_core_bytes, Explain* ex);

}  // namespace planner::layer_detail
