// Cost of one transformer layer for one micro-batch on one GPU: an op-level
// roofline (GEMMs, attention core, element-wise kernels), TP and CP
// communication, and the activations it stores. Also the embedding/output
// layer ("head") costs carried by the first and last pipeline stages.
// Feeds step_time.cpp and memory_model.cpp.
#pragma once

#include "planner/model/explain.h"
#include "planner/spec/specs.h"

namespace planner {

struct LayerTime {
  // Forward pass, seconds.
  double gemm_fwd_s = 0, attention_fwd_s = 0, elementwise_fwd_s = 0;
  // Backward pass (excluding recomputation), seconds.
  double gemm_bwd_s = 0, attention_bwd_s = 0, elementwise_bwd_s = 0;
  double grad_accumulate_s = 0;  // adding this micro-batch's weight gradients into the accumulator
  double recompute_s = 0;        // extra forward work in the backward pass
  double tp_comm_fwd_s = 0, tp_comm_bwd_s = 0, tp_comm_recompute_s = 0;  // exposed
  // The MLP half's part of tp_comm_bwd_s and of contention_bwd_s (the FFN-in
  // collectives and, with SP, the FFN-out gradient gather): a MoE layer
  // without shared experts runs only the attention half (moe_cost.cpp).
  double tp_comm_bwd_mlp_s = 0, tp_contention_bwd_mlp_s = 0;
  double cp_comm_fwd_s = 0, cp_comm_bwd_s = 0;                           // exposed part of the K/V ring exchange
  double cp_comm_total_s = 0;                                            // before overlap
  // Compute slowed by the hidden part of the CP exchange (contention.h); under
  // full recompute the recomputed forward's is part of recompute_s.
  double contention_fwd_s = 0, contention_bwd_s = 0;
  // MoE (moe_cost.h): the expert all-to-alls (dispatch + combine, and the ETP
  // gather / scatter of the routed tokens), exposed, and before overlap; zero
  // for dense models. Per layer, the mean over the model's dense and MoE layers.
  double ep_comm_fwd_s = 0, ep_comm_bwd_s = 0, ep_comm_total_s = 0;
  double ep_comm_fwd_total_s = 0;  // of ep_comm_total_s: the forward's (dispatch, combine, ETP), before overlap
  // Of contention_fwd_s / contention_bwd_s: what the other micro-batch's
  // all-to-alls hidden beside the forward / backward cost it (--overlap-a2a).
  double ep_contention_fwd_s = 0, ep_contention_bwd_s = 0;
  // What a forward / backward with no other micro-batch's pass beside it
  // (--overlap-a2a: the warm-up forwards and cool-down backwards,
  // unpaired_chunk_passes) adds: its own all-to-alls exposed whole, less the
  // contention of the other's hidden ones, which do not run beside it.
  [[nodiscard]] double ep_unpaired_fwd_s() const { return ep_comm_fwd_total_s - ep_comm_fwd_s - ep_contention_fwd_s; }
  [[nodiscard]] double ep_unpaired_bwd_s() const {
    return ep_comm_total_s - ep_comm_fwd_total_s - ep_comm_bwd_s - ep_contention_bwd_s;
  }
  double straggler_s = 0;  // of the kernel times above: waiting for the slowest chip (straggler.h)
  double gemm_flops_fwd = 0;                                             // executed, per GPU
  double attention_flops_fwd = 0;                                        // executed, per GPU

  [[nodiscard]] double compute_fwd_s() const { return gemm_fwd_s + attention_fwd_s + elementwise_fwd_s; }
  [[nodiscard]] double compute_bwd_s() const {
    return gemm_bwd_s + attention_bwd_s + elementwise_bwd_s + grad_accumulate_s;
  }
  [[nodiscard]] double fwd_s() const {
    return compute_fwd_s() + tp_comm_fwd_s + cp_comm_fwd_s + contention_fwd_s + ep_comm_fwd_s;
  }
  [[nodiscard]] double bwd_s() const {
    return compute_bwd_s() + recompute_s + tp_comm_bwd_s + tp_comm_recompute_s + cp_comm_bwd_s + contention_bwd_s +
           ep_comm_bwd_s;
  }
  // Time of the forward / backward in HBM-bound kernels (element-wise work
  // and gradient accumulation): what an overlapped collective slows through
  // HBM rather than SMs (contention.h).
  [[nodiscard]] double memory_bound_fwd_s() const { return elementwise_fwd_s; }
  [[nodiscard]] double memory_bound_bwd_s() const { return elementwise_bwd_s + grad_accumulate_s; }
  [[nodiscard]] double total_s() const { return fwd_s() + bwd_s(); }
};

// Output layer (final norm, vocabulary-parallel projection, cross-entropy) on
// the last stage; token embedding lookup on the first.
struct HeadTime {
  double output_fwd_s = 0, output_bwd_s = 0;
  double embedding_fwd_s = 0, embedding_bwd_s = 0;
  double output_tp_comm_s = 0;  // cross-entropy all-reduces across TP
};

// Activation bytes one layer keeps for the backward pass, per micro-batch,
// derived tensor by tensor (Korthikanti et al. 2022 §4, adapted to GQA,
// SwiGLU, flash attention, CP and recomputation).
struct LayerActivations {
  double stored_bytes = 0;          // kept per layer per micro-batch in flight
  double full_layer_bytes = 0;      // what the layer would keep without recompute
  double attention_core_bytes = 0;  // the part selective recompute drops
  // What the layer being recomputed rebuilds and holds while its gradient is
  // computed (full_layer_bytes - stored_bytes, except torchtitan's per-layer
  // policy: a wrapped layer rebuilds everything but its input).
  double recompute_working_bytes = 0;
  // MoE models: stored per dense and per MoE layer (stored_bytes is their
  // mean over the model's layers); a pipeline stage counts its own of each
  // (memory_model.cpp). 0 for dense models.
  double dense_layer_bytes = 0, moe_layer_bytes = 0;
};

// Bytes per logit of a loss kernel (LossKernel, specs.h): HBM traffic of its
// forward and backward passes (head_time) and what it keeps from the forward
// to the end of the backward (memory_model.cpp). unfused (Megatron's fp32
// vocab-parallel cross-entropy, pass by pass): 38 and 14 bytes, keeping the
// bf16 logits, an fp32 softmax and an fp32 gradient (10); te: 6 and 4,
// keeping the bf16 logits it overwrites with the gradient (2); flash_attn: 2
// and 4, keeping the bf16 logits and a new bf16 gradient (4). Sources at
// LossKernel and in head_cost.cpp.
struct LossKernelBytes {
  double fwd = 0, bwd = 0, kept = 0;
};
[[nodiscard]] constexpr LossKernelBytes loss_kernel_bytes(LossKernel k) {
  switch (k) {
    case LossKernel::te:
      return {6.0, 4.0, 2.0};
    case LossKernel::flash_attn:
      return {2.0, 4.0, 4.0};
    case LossKernel::unfused:
      break;
  }
  return {38.0, 14.0, 2.0 + 4.0 + 4.0};
}

[[nodiscard]] LayerTime layer_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                   const TrainingSpec& ts, Explain* ex = nullptr);
// mtp_layer: the MTP module's transformer layer when the caller has priced it
// already (for a MoE model, the MoE layer mean_moe_model_layer_time returns
// through moe_out); null prices it here.
[[nodiscard]] HeadTime head_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                 const TrainingSpec& ts, Explain* ex = nullptr, const LayerTime* mtp_layer = nullptr);
[[nodiscard]] LayerActivations layer_activations(const ModelSpec& model, const ParallelConfig& pc,
                                                 const TrainingSpec& ts, Explain* ex = nullptr);

}  // namespace planner
