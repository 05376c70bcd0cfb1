// Closed-form model arithmetic: exact parameter counts and FLOPs per token
// (Megatron-LM's MFU convention, PaLM's for reference, and what executes). Pure functions of ModelSpec; used by the memory and
// time models and by reports.
#pragma once

#include <cstdint>

#include "planner/spec/specs.h"

namespace planner {

struct ParamCounts {
  std::int64_t attention_per_layer = 0;  // Q, K, V, O projections (+ biases)
  std::int64_t ffn_per_layer = 0;        // up/gate/down (+ biases)
  std::int64_t norms_per_layer = 0;
  std::int64_t per_layer = 0;  // a dense layer; MoE models: the mean over all layers (total layer params / L)
  // MoE models (all zero for dense ones), per MoE layer: the routed experts
  // (all of them), the shared experts and the router; and the counts of
  // dense and MoE layers and of MTP modules' parameters.
  std::int64_t routed_experts_per_moe_layer = 0;
  std::int64_t shared_experts_per_moe_layer = 0;
  std::int64_t router_per_moe_layer = 0;
  std::int64_t dense_layers = 0, moe_layers = 0;
  std::int64_t mtp = 0;     // all MTP modules, their shared embedding/head excluded
  std::int64_t active = 0;  // parameters one token uses (top-k of the routed experts); == total for dense models
  std::int64_t embedding = 0;  // input token embedding V*h
  std::int64_t output = 0;     // output projection V*h (0 when tied)
  std::int64_t position = 0;   // learned position embedding
  std::int64_t final_norm = 0;
  std::int64_t total = 0;
  // Parameters that take part in matrix multiplies, "N" in 6N: every layer
  // parameter plus the output projection (the tied embedding when tied); the
  // input lookup and learned positions do no FLOPs.
  std::int64_t matmul = 0;
};

// Dense transformer, per layer: h*H*hd (Q) + 2*h*KV*hd (K,V) + H*hd*h (O)
// + (gated ? 3 : 2)*h*F + norms (+ biases). The Llama form
// L(d*H*hd + 2d*KV*hd + H*hd*d + 3dF + 2d) + 2Vd + d follows the modules of
// Hugging Face's LlamaForCausalLM (transformers, src/transformers/models/llama/
// modeling_llama.py) and gives the Llama 3 paper's sizes (arXiv:2407.21783,
// Table 3); the GPT form L(12h^2 + 13h) + Vh + sh (+2h final LayerNorm) is
// Narayanan et al. 2021 (arXiv:2104.04473) §5.1 with biases and LayerNorms.
[[nodiscard]] ParamCounts count_params(const ModelSpec& model);

struct FlopsPerToken {
  double matmul_params = 0;  // N (PaLM): layer parameters + output projection
  double dense = 0;          // 6N
  double attention = 0;      // 12*L*H*Q*T (PaLM, no causal discount)
  double palm = 0;           // dense + attention: PaLM's model FLOPs (validate's "palm" convention)
  double gemm_weights = 0;   // weights of the GEMMs: layers' Q, K, V, O, FFN + the output projection
  double model = 0;          // Megatron-LM: 6*gemm_weights + 6*L*H*Q*T (causal): the MFU numerator
  double attention_executed = 0;  // attention core FLOPs the kernels run, forward + backward
  double recompute = 0;           // extra forward FLOPs executed by recomputation
  double hardware = 0;  // executed: 6*gemm_weights + attention_executed + recompute: the HFU numerator
};

// MFU counts Megatron-LM's num_floating_point_operations (megatron/training/
// training.py, transformer_flops): 3 passes x 2 FLOPs per multiply-add over
// the GEMM weights (Q, K/V at the KV heads, O, FFN with gated FFNs' third
// matrix) and the logits (6*h*V), plus the attention core with half the
// score matrix (causal): 6*L*H*Q*T. PaLM (Chowdhery et al. 2022, App. B)
// counts 6N + 12*L*H*Q*T, no causal discount; kept as `palm`.
// HFU counts what runs: flash attention skips the masked half and recomputes
// QK^T in its backward (fwd 2*H*Q*T, bwd 2.5x: Dao 2023 §3.1); unfused
// attention computes the full s x s scores (fwd 4*H*Q*T, bwd 2x). Full
// recompute re-runs each layer's forward (2*gemm_layer_weights + the
// attention forward); selective re-runs the unfused attention core only and
// nothing with flash attention (Korthikanti et al. 2022 §5).
[[nodiscard]] FlopsPerToken flops_per_token(const ModelSpec& model, std::int64_t seq_len, Recompute r,
                                            AttentionKernel attention = AttentionKernel::flash);

}  // namespace planner
