#include "planner/model/model_math.h"

#include <algorithm>

#include "planner/model/selective_policy.h"

namespace planner {

bool is_moe_layer(const ModelSpec& model, std::int64_t layer) {
  const MoeSpec& e = model.moe;
  return model.is_moe() && layer >= e.first_dense_layers && layer < model.num_layers &&
         (layer - e.first_dense_layers + 1) % e.layer_freq == 0;
}

std::int64_t count_moe_layers(const ModelSpec& model) {
  const MoeSpec& e = model.moe;
  if (!model.is_moe() || e.first_dense_layers >= model.num_layers || e.layer_freq < 1) return 0;
  return (model.num_layers - e.first_dense_layers) / e.layer_freq;
}

namespace {

// Q, K, V, O (or MLA's projections) with their biases and norms, one layer.
std::int64_t attention_params(const ModelSpec& model) {
  const std::int64_t h = model.hidden_size, H = model.num_heads, KV = model.num_kv_heads, hd = model.head_dim;
  if (model.is_mla()) {
    const MlaSpec& a = model.mla;
    const std::int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    std::int64_t n = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * H * qk : h * H * qk;
    n += h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank + a.kv_lora_rank * H * (a.qk_nope_head_dim + a.v_head_dim);
    n += H * a.v_head_dim * h;
    return n;
  }
  std::int64_t n = h * H * hd + 2 * h * KV * hd + H * hd * h;
  if (model.bias) n += H * hd + 2 * KV * hd + h;
  if (model.qkv_bias) n += H * hd + 2 * KV * hd;
  if (model.qk_norm) n += 2 * hd;
  return n;
}

// Of attention_params: what every TP rank holds whole (ParamCounts): MLA's
// down-projections and their norms, QK-norms, the output projection's bias.
std::int64_t replicated_attention_params(const ModelSpec& model) {
  const std::int64_t h = model.hidden_size;
  if (model.is_mla()) {
    const MlaSpec& a = model.mla;
    return (a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank : 0) + h * (a.kv_lora_rank + a.qk_rope_head_dim) +
           a.kv_lora_rank;
  }
  return (model.bias ? h : 0) + (model.qk_norm ? 2 * model.head_dim : 0);
}

// One MLP of width f (a dense FFN or one expert).
std::int64_t mlp_params(const ModelSpec& model, std::int64_t f) {
  const bool gated = is_gated(model.ffn_kind);
  std::int64_t n = (gated ? 3 : 2) * model.hidden_size * f;
  if (model.bias) n += (gated ? 2 : 1) * f + model.hidden_size;
  return n;
}

}  // namespace

LargestWeight largest_weight_tensor(const ModelSpec& model) {
  const std::int64_t h = model.hidden_size, H = model.num_heads, KV = model.num_kv_heads, hd = model.head_dim;
  LargestWeight w;
  if (model.is_mla()) {
    const MlaSpec& a = model.mla;
    const std::int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    w.dense = std::max({a.q_lora_rank > 0 ? std::max(h * a.q_lora_rank, a.q_lora_rank * H * qk) : h * H * qk,
                        h * (a.kv_lora_rank + a.qk_rope_head_dim),
                        a.kv_lora_rank * H * (a.qk_nope_head_dim + a.v_head_dim), H * a.v_head_dim * h});
  } else {
    w.dense = std::max({h * H * hd, h * KV * hd, H * hd * h});
  }
  // Dense FFN layers (all of a dense model's; a MoE model's first_dense_layers
  // and the dense layers between MoE ones).
  if (!model.is_moe() || count_moe_layers(model) < model.num_layers)
    w.dense = std::max(w.dense, h * model.ffn_hidden_size);
  if (model.is_moe()) {
    const MoeSpec& e = model.moe;
    if (e.num_shared_experts > 0)
      w.dense = std::max(w.dense, e.num_shared_experts * h *
                                      (e.shared_expert_ffn_hidden_size > 0 ? e.shared_expert_ffn_hidden_size
                                                                           : e.expert_ffn_hidden_size));
    w.one_expert = h * e.expert_ffn_hidden_size;
    w.experts = e.num_experts * w.one_expert;
  }
  return w;
}

ParamCounts count_params(const ModelSpec& model) {
  ParamCounts p;
  const std::int64_t h = model.hidden_size, L = model.num_layers;
  const std::int64_t norm_params = model.norm == NormKind::layernorm ? 2 * h : h;
  p.attention_per_layer = attention_params(model);
  p.ffn_per_layer = mlp_params(model, model.ffn_hidden_size);
  p.norms_per_layer = 2 * norm_params;  // two norms; LayerNorm has a bias too
  p.dense_layer = p.attention_per_layer + p.ffn_per_layer + p.norms_per_layer;
  // Replicated over TP: the norms, the attention's unsplit part, FC2's bias.
  // Counted for MoE and MLA models (moe.md §3.2); a dense model's are left
  // over TP as before (docs/cost_model.md Known gaps: its predictions are held).
  const bool replicas = model.is_moe() || model.is_mla();
  const std::int64_t out_bias = model.bias ? h : 0;
  p.replicated_dense_layer = replicas ? p.norms_per_layer + replicated_attention_params(model) + out_bias : 0;
  std::int64_t layers = L * p.dense_layer, active_layers = layers;
  if (model.is_moe()) {
    const MoeSpec& e = model.moe;
    const std::int64_t expert = mlp_params(model, e.expert_ffn_hidden_size);
    p.routed_experts_per_moe_layer = e.num_experts * expert;
    p.shared_experts_per_moe_layer =
        e.num_shared_experts *
        mlp_params(model, e.shared_expert_ffn_hidden_size > 0 ? e.shared_expert_ffn_hidden_size : e.expert_ffn_hidden_size);
    p.router_per_moe_layer = h * e.num_experts + (e.router_bias ? e.num_experts : 0);
    p.moe_layer = p.attention_per_layer + p.norms_per_layer + p.routed_experts_per_moe_layer +
                  p.shared_experts_per_moe_layer + p.router_per_moe_layer;
    // The router and each shared expert's FC2 bias; the routed experts are EP x ETP's.
    p.replicated_moe_layer = p.norms_per_layer + replicated_attention_params(model) + p.router_per_moe_layer +
                             e.num_shared_experts * out_bias;
    p.moe_layers = count_moe_layers(model);
    p.dense_layers = L - p.moe_layers;
    layers = p.dense_layers * p.dense_layer + p.moe_layers * p.moe_layer;
    active_layers = layers - p.moe_layers * (e.num_experts - e.top_k) * expert;
    p.per_layer = layers / L;
  } else {
    p.dense_layers = L;
    p.per_layer = p.dense_layer;
  }
  if (model.mtp_layers > 0) {
    const bool last_moe = is_moe_layer(model, L - 1);
    p.mtp = model.mtp_layers * (3 * norm_params + 2 * h * h + (last_moe ? p.moe_layer : p.dense_layer));
    // eh_proj is column-parallel; the norms (enorm, hnorm, final) are not.
    p.replicated_mtp =
        replicas ? model.mtp_layers * (3 * norm_params + (last_moe ? p.replicated_moe_layer : p.replicated_dense_layer))
                 : 0;
  }
  p.embedding = model.vocab_size * h;
  p.output = model.tied_embeddings ? 0 : model.vocab_size * h;
  p.position = model.position == PositionKind::learned ? model.max_position_embeddings * h : 0;
  p.final_norm = norm_params;
  const std::int64_t rest = p.embedding + p.output + p.position + p.final_norm;
  p.total = layers + rest;
  p.active = active_layers + rest;
  p.matmul = active_layers + model.vocab_size * h;
  return p;
}

ModelSpec architecture_of(const ModelSpec& model) {
  ModelSpec m;
  m.num_layers = model.num_layers;
  m.hidden_size = model.hidden_size;
  m.ffn_hidden_size = model.ffn_hidden_size;
  m.ffn_kind = model.ffn_kind;
  m.num_heads = model.num_heads;
  m.num_kv_heads = model.num_kv_heads;
  m.head_dim = model.head_dim;
  m.vocab_size = model.vocab_size;
  m.tied_embeddings = model.tied_embeddings;
  m.norm = model.norm;
  m.bias = model.bias;
  m.dropout = model.dropout;
  m.position = model.position;
  m.max_position_embeddings = model.max_position_embeddings;
  m.default_seq_len = model.default_seq_len;
  m.default_global_batch_tokens = model.default_global_batch_tokens;
  m.expected_params = model.expected_params;
  m.qkv_bias = model.qkv_bias;
  m.qk_norm = model.qk_norm;
  m.moe = model.moe;
  m.mla = model.mla;
  m.mtp_layers = model.mtp_layers;
  m.expected_active_params = model.expected_active_params;
  return m;
}

FlopsPerToken flops_per_token(const ModelSpec& model, std::int64_t seq_len, Recompute r, AttentionKernel attention,
                              SelectivePolicy selective, std::int64_t selective_every_n_layers) {
  const ParamCounts p = count_params(model);
  FlopsPerToken f;
  const double h = double(model.hidden_size), H = double(model.num_heads), KV = double(model.num_kv_heads),
               Q = double(model.head_dim), F = double(model.ffn_hidden_size), V = double(model.vocab_size),
               T = double(seq_len), g = is_gated(model.ffn_kind) ? 3.0 : 2.0;
  // MTP modules run one more transformer layer each, MoE iff the last layer is
  // (Megatron-LM training.py: num_moe_layers += last_layer_is_moe * mtp_num_layers).
  const double mtp = double(model.mtp_layers);
  const bool last_moe = is_moe_layer(model, model.num_layers - 1);
  const double Lt = double(model.num_layers) + mtp;
  const double dense_layers = double(p.dense_layers) + (last_moe ? 0.0 : mtp);
  const double moe_layers = double(p.moe_layers) + (last_moe ? mtp : 0.0);
  // Per layer: GEMM weights of the attention projections, and the query/key and
  // value widths of the attention core.
  double attn_w = h * H * Q + 2.0 * h * KV * Q + H * Q * h, qk = H * Q, v = H * Q;
  if (model.is_mla()) {
    // Megatron-LM's MLA term (its "+1" is the LoRA norms): q_lora*(h + H*(nope+rope) + 1)
    // (h*H*(nope+rope) without q LoRA) + kv_lora*(h + H*(nope+v) + 1) + h*rope + H*v*h.
    const MlaSpec& a = model.mla;
    const double nope = double(a.qk_nope_head_dim), rope = double(a.qk_rope_head_dim), vd = double(a.v_head_dim),
                 ql = double(a.q_lora_rank), kl = double(a.kv_lora_rank);
    attn_w = (a.q_lora_rank > 0 ? ql * (h + H * (nope + rope) + 1.0) : h * H * (nope + rope)) +
             kl * (h + H * (nope + vd) + 1.0) + h * rope + H * vd * h;
    qk = H * (nope + rope);
    v = H * vd;
  }
  double moe_w = 0, router_w = 0, routed_w = 0;
  if (model.is_moe()) {
    const MoeSpec& e = model.moe;
    const double fs = double(e.shared_expert_ffn_hidden_size > 0 ? e.shared_expert_ffn_hidden_size
                                                                  : e.expert_ffn_hidden_size);
    routed_w = g * h * double(e.top_k) * double(e.expert_ffn_hidden_size);
    moe_w = routed_w + g * h * double(e.num_shared_experts) * fs;
    router_w = h * double(e.num_experts);
  }
  const double layers_w = Lt * attn_w + dense_layers * g * h * F + moe_layers * moe_w;
  f.matmul_params = double(p.matmul);
  f.dense = 6.0 * f.matmul_params;
  f.attention = 6.0 * Lt * (qk + v) * T;  // PaLM: 12*L*H*Q*T when qk = v = H*Q
  f.palm = f.dense + f.attention;
  // MTP: its two norms and 2h x h projection, and one more logits GEMM per module.
  f.gemm_weights = layers_w + mtp * (3.0 * h + 2.0 * h * h) + V * h * (1.0 + mtp);
  f.model = 6.0 * f.gemm_weights + 0.5 * f.attention;  // causal: half the score matrix
  const bool flash = is_fused(attention);
  const double attention_fwd = (flash ? 1.0 : 2.0) * Lt * (qk + v) * T;  // QK^T and AV, causal half skipped by flash
  f.attention_executed = attention_fwd * (flash ? 3.5 : 3.0);
  if (r == Recompute::full) f.recompute = 2.0 * layers_w + attention_fwd;
  if (r == Recompute::selective) {
    if (selective == SelectivePolicy::megatron_attention && !flash) f.recompute = attention_fwd;
    if (selective == SelectivePolicy::torchtitan_every_nth_layer) {
      TrainingSpec ts;
      ts.selective = selective;
      ts.selective_every_n_layers = selective_every_n_layers;
      f.recompute = recomputed_layer_fraction(model, ts) * (2.0 * layers_w + attention_fwd);
    }
    if (selective == SelectivePolicy::torchtitan_op)
      for (const LayerMatmul& mm : op_sac_matmuls(model))
        if (!mm.saved) f.recompute += 2.0 * Lt * mm.out_width * mm.in_width;
  }
  f.router = 6.0 * moe_layers * router_w;
  f.hardware = 6.0 * f.gemm_weights + f.attention_executed + f.recompute + f.router;
  f.routed_experts = 6.0 * moe_layers * routed_w;
  // The routed experts' share of the recomputed forward (full, or torchtitan's
  // every-Nth-layer; op-level SAC saves the expert outputs it keeps by op, not
  // counted here).
  if (r == Recompute::full) f.routed_recompute = 2.0 * moe_layers * routed_w;
  if (r == Recompute::selective && selective == SelectivePolicy::torchtitan_every_nth_layer) {
    TrainingSpec ts;
    ts.selective = selective;
    ts.selective_every_n_layers = selective_every_n_layers;
    f.routed_recompute = recomputed_layer_fraction(model, ts) * 2.0 * moe_layers * routed_w;
  }
  return f;
}

FlopsPerToken with_capacity_factor(FlopsPerToken f, double capacity_factor) {
  if (!(capacity_factor > 0)) return f;  // dropless: every routed token runs its top-k experts
  // Each expert runs capacity = cf x its mean share of the routed rows, padded
  // to capacity (the pricing's load = cf, moe_cost.cpp): cf x the routed FLOPs
  // execute. Of the model's, the kept tokens' count: min(1, cf).
  f.model -= (1.0 - std::min(1.0, capacity_factor)) * f.routed_experts;
  f.hardware += (capacity_factor - 1.0) * (f.routed_experts + f.routed_recompute);
  return f;
}

}  // namespace planner
