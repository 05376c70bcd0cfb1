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
  std::int64_t total = 0;  // the main model; MTP modules are counted apart (`mtp`)
  // Parameters that take part in matrix multiplies, "N" in 6N: every layer
  // parameter plus the output projection (the tied embedding when tied); the
  // input lookup and learned positions do no FLOPs. MoE: only the top_k routed
  // experts a token uses, so that 6N stays a per-token count.
  std::int64_t matmul = 0;
  // One dense layer and one MoE layer (attention + norms + FFN or experts and
  // router); per_layer for dense models.
  std::int64_t dense_layer = 0, moe_layer = 0;
  // Of dense_layer, moe_layer, mtp and the heads: what every TP rank holds
  // whole, the rest being split over TP (a MoE layer's routed experts over EP x
  // ETP). Megatron-Core builds these unsplit (moe.md §3.2, "replicated";
  // Megatron-LM core_v0.19.0 theoretical_memory_usage.py
  // replicated_params_in_transformer_block): the layer norms, QK-norms, the
  // biases of the row-parallel output projections (the full h on every rank),
  // MLA's query and KV down-projections with their norms (multi_latent_attention.py:
  // TELinear with parallel_mode "duplicated"), the router (h*E, its bias);
  // the MTP modules' norms; learned positions and the final norm. Counted for
  // MoE and MLA models only: a dense GQA model's stay over TP (docs/cost_model.md
  // Known gaps), so its predictions do not move.
  std::int64_t replicated_dense_layer = 0, replicated_moe_layer = 0;
  std::int64_t replicated_mtp = 0;  // all MTP modules
};

// Which layers are MoE: after moe.first_dense_layers dense ones, the last of
// every moe.layer_freq (Hugging Face Llama 4: layers step-1, 2*step-1, ...;
// DeepSeek: first_k_dense_replace, then all). Dense models: none.
[[nodiscard]] bool is_moe_layer(const ModelSpec& model, std::int64_t layer);
[[nodiscard]] std::int64_t count_moe_layers(const ModelSpec& model);

// Dense transformer, per layer: h*H*hd (Q) + 2*h*KV*hd (K,V) + H*hd*h (O)
// + (gated ? 3 : 2)*h*F + norms (+ biases). The Llama form
// L(d*H*hd + 2d*KV*hd + H*hd*d + 3dF + 2d) + 2Vd + d follows the modules of
// Hugging Face's LlamaForCausalLM (transformers, src/transformers/models/llama/
// modeling_llama.py) and gives the Llama 3 paper's sizes (arXiv:2407.21783,
// Table 3); the GPT form L(12h^2 + 13h) + Vh + sh (+2h final LayerNorm) is
// Narayanan et al. 2021 (arXiv:2104.04473) §5.1 with biases and LayerNorms.
//
// MoE layers (moe.md §2; Hugging Face MixtralSparseMoeBlock, DeepseekV3MoE,
// Qwen3MoeSparseMoeBlock, Llama4TextMoe): E routed experts of (gated ? 3 : 2)
// * h * f_e each, the shared experts as S experts of width f_s, the router
// h*E (+E for DeepSeek-V3's e_score_correction_bias). Active parameters drop
// the E - top_k routed experts a token does not use. MLA (DeepseekV3Attention):
// q_a h*q_lora + its RMSNorm q_lora + q_b q_lora*H*(nope+rope) (or q h*H*(nope+rope)
// without q LoRA), kv_a_proj_with_mqa h*(kv_lora+rope) + its RMSNorm kv_lora,
// kv_b kv_lora*H*(nope+v), o H*v*h. QKV-only bias (Qwen2): H*hd + 2*KV*hd;
// QK-norm (Qwen3): two RMSNorms of hd. MTP (DeepSeek-V3 README, Megatron's
// MultiTokenPredictionLayer): per module two input RMSNorms, a 2h x h
// projection, one transformer layer (MoE if the last layer is) and a final
// norm; its embedding and output head are the main model's.
[[nodiscard]] ParamCounts count_params(const ModelSpec& model);

// The largest single weight tensor of a layer, in elements, as MaxText
// declares its modules (one kernel each, fused_qkv and fused_mlp false by
// default: src/maxtext/configs/base.yml; layers/attentions.py query, key,
// value, out; layers/linears.py MlpBlock wi_0, wi_1, wo): Q h*H*hd, K and V
// h*KV*hd, O H*hd*h, each MLP matrix h*F (MLA: its largest projection). MoE
// layers: the routed experts' wi_0 / wi_1 / wo are one tensor each over all
// experts, E*h*f_e (layers/moe.py); shared experts as a dense MLP of their
// width. `dense` is the largest non-expert tensor, `experts` the routed one
// (0 for dense models), `one_expert` one routed expert's matrix h*f_e (a
// module of its own in DeepSpeed's MoE, deepspeed/moe/experts.py). XLA's FSDP
// gathers one such tensor at a time (memory_model.cpp).
struct LargestWeight {
  std::int64_t dense = 0;
  std::int64_t experts = 0;
  std::int64_t one_expert = 0;
};
[[nodiscard]] LargestWeight largest_weight_tensor(const ModelSpec& model);

// `model` without its name, aliases, display name and source: every field the
// cost functions read, none of the strings. The layer models moe_cost.cpp
// derives for every configuration start from it (copying the strings was a
// heap allocation each, in evaluate()'s profile). A field added to ModelSpec
// must be copied here; model_math_test.cpp sets every field to check.
[[nodiscard]] ModelSpec architecture_of(const ModelSpec& model);

struct FlopsPerToken {
  double matmul_params = 0;  // N (PaLM): layer parameters + output projection
  double dense = 0;          // 6N
  double attention = 0;      // 12*L*H*Q*T (PaLM, no causal discount)
  double palm = 0;           // dense + attention: PaLM's model FLOPs (validate's "palm" convention)
  double gemm_weights = 0;   // weights of the GEMMs: layers' Q, K, V, O, FFN + the output projection
  double model = 0;          // Megatron-LM: 6*gemm_weights + 6*L*H*Q*T (causal): the MFU numerator
  double attention_executed = 0;  // attention core FLOPs the kernels run, forward + backward
  double recompute = 0;           // extra forward FLOPs executed by recomputation
  double router = 0;     // MoE router GEMM (h x E per MoE layer), forward + backward: executed, not in `model`
  double hardware = 0;  // executed: 6*gemm_weights + attention_executed + recompute + router: the HFU numerator
  double routed_experts = 0;    // MoE: the top-k routed experts' part of 6*gemm_weights (in `model` and `hardware`)
  double routed_recompute = 0;  // MoE: the routed experts' part of `recompute`
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
// nothing with flash attention (Korthikanti et al. 2022 §5). torchtitan's
// selective policies (`selective`, SelectivePolicy): "op" re-runs the
// matmuls whose outputs it does not save (every second one: for Llama wk,
// wo, w3; 2*weights FLOPs per token each) and never the attention kernel;
// "layer:N" re-runs floor(L/N) of the L layers in full (torchtitan v0.2.2
// torchtitan/distributed/activation_checkpoint.py; selective_policy.h).
// MoE, MLA and MTP follow num_floating_point_operations as of Megatron-LM
// d98e8a6 (2026-08; moe.md §3.1): dense layers count ffn_hidden_size, MoE
// layers top_k routed experts plus the shared ones (all experts run only for
// the tokens routed to them, so `hardware` counts top_k too); MLA's projections
// and its core with (nope+rope) query/key and v value heads; each MTP module
// one more layer (MoE iff the last layer is), 3h + 2h^2 and one more logits
// GEMM. The router GEMM is not in `model` (as Megatron) but is in `hardware`.
// Not modelled: Megatron's vocabulary padding to a multiple of 128*TP, the
// latent-MoE term. Token dropping: with_capacity_factor.
[[nodiscard]] FlopsPerToken flops_per_token(const ModelSpec& model, std::int64_t seq_len, Recompute r,
                                            AttentionKernel attention = AttentionKernel::flash,
                                            SelectivePolicy selective = SelectivePolicy::megatron_attention,
                                            std::int64_t selective_every_n_layers = 2);

// A capacity factor (TrainingSpec::capacity_factor > 0) as the step is priced
// (moe_cost.cpp: every expert runs capacity = ceil(cf x its mean share) rows,
// padded, Megatron --moe-expert-capacity-factor with
// --moe-pad-expert-input-to-capacity): `hardware` counts cf x the routed
// experts' FLOPs (and their recompute); `model` counts the tokens kept,
// min(1, cf) of them, so that a factor below 1, which drops tokens, never
// reports FLOPs nobody ran (Megatron-LM's num_floating_point_operations counts
// top-k for every token whatever the capacity). Approximation: capacity's
// per-expert ceil and imbalance-driven drops above cf = 1 are not counted.
// 0 (dropless): f unchanged.
[[nodiscard]] FlopsPerToken with_capacity_factor(FlopsPerToken f, double capacity_factor);

}  // namespace planner
