// Closed-form model arithmetic: exact parameter counts and FLOPs per token
// (PaLM's MFU convention). Pure functions of ModelSpec; used by the memory and
// time models and by reports.
#pragma once

#include <cstdint>

#include "planner/spec/specs.h"

namespace planner {

struct ParamCounts {
  std::int64_t attention_per_layer = 0;  // Q, K, V, O projections (+ biases)
  std::int64_t ffn_per_layer = 0;        // up/gate/down (+ biases)
  std::int64_t norms_per_layer = 0;
  std::int64_t per_layer = 0;
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
  double matmul_params = 0;  // N
  double dense = 0;          // 6N
  double attention = 0;      // 12*L*H*Q*T (PaLM, no causal discount)
  double model = 0;          // dense + attention: the MFU numerator per token
  double recompute = 0;      // extra forward FLOPs executed by recomputation
  double hardware = 0;       // model + recompute: the HFU numerator per token
};

// PaLM (Chowdhery et al. 2022, App. B): model FLOPs per token = 6N + 12*L*H*Q*T.
// Recompute (HFU only): full recompute re-runs each layer's forward,
// 2*N_layers + 4*L*H*Q*T per token; selective re-runs the attention core only,
// 4*L*H*Q*T (Korthikanti et al. 2022 §5).
[[nodiscard]] FlopsPerToken flops_per_token(const ModelSpec& model, std::int64_t seq_len, Recompute r);

}  // namespace planner
