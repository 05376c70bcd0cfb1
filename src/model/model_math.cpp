#include "planner/model/model_math.h"

namespace planner {

ParamCounts count_params(const ModelSpec& model) {
  ParamCounts p;
  const std::int64_t h = model.hidden_size, H = model.num_heads, KV = model.num_kv_heads, hd = model.head_dim,
                     F = model.ffn_hidden_size;
  p.attention_per_layer = h * H * hd + 2 * h * KV * hd + H * hd * h;
  if (model.bias) p.attention_per_layer += H * hd + 2 * KV * hd + h;
  // Qwen2's q/k/v biases, none on o (modeling_qwen2.py Qwen2Attention).
  else if (model.qkv_bias) p.attention_per_layer += H * hd + 2 * KV * hd;
  p.ffn_per_layer = (is_gated(model.ffn_kind) ? 3 : 2) * h * F;
  if (model.bias) p.ffn_per_layer += (is_gated(model.ffn_kind) ? 2 : 1) * F + h;
  p.norms_per_layer = (model.norm == NormKind::layernorm ? 4 : 2) * h;  // two norms; LayerNorm has a bias too
  p.per_layer = p.attention_per_layer + p.ffn_per_layer + p.norms_per_layer;
  p.embedding = model.vocab_size * h;
  p.output = model.tied_embeddings ? 0 : model.vocab_size * h;
  p.position = model.position == PositionKind::learned ? model.max_position_embeddings * h : 0;
  p.final_norm = (model.norm == NormKind::layernorm ? 2 : 1) * h;
  p.total = model.num_layers * p.per_layer + p.embedding + p.output + p.position + p.final_norm;
  p.matmul = model.num_layers * p.per_layer + model.vocab_size * h;
  return p;
}

FlopsPerToken flops_per_token(const ModelSpec& model, std::int64_t seq_len, Recompute r, AttentionKernel attention) {
  const ParamCounts p = count_params(model);
  FlopsPerToken f;
  const double L = double(model.num_layers), H = double(model.num_heads), Q = double(model.head_dim),
               T = double(seq_len);
  f.matmul_params = double(p.matmul);
  f.dense = 6.0 * f.matmul_params;
  f.attention = 12.0 * L * H * Q * T;
  f.palm = f.dense + f.attention;
  const double h = double(model.hidden_size), KV = double(model.num_kv_heads), F = double(model.ffn_hidden_size);
  const double layer_gemm_weights = h * H * Q + 2.0 * h * KV * Q + H * Q * h + (is_gated(model.ffn_kind) ? 3.0 : 2.0) * h * F;
  f.gemm_weights = L * layer_gemm_weights + double(model.vocab_size) * h;
  f.model = 6.0 * f.gemm_weights + 6.0 * L * H * Q * T;
  const bool flash = attention == AttentionKernel::flash;
  const double attention_fwd = (flash ? 2.0 : 4.0) * L * H * Q * T;  // QK^T and AV, causal half skipped by flash
  f.attention_executed = attention_fwd * (flash ? 3.5 : 3.0);
  if (r == Recompute::full) f.recompute = 2.0 * L * layer_gemm_weights + attention_fwd;
  if (r == Recompute::selective && !flash) f.recompute = attention_fwd;
  f.hardware = 6.0 * f.gemm_weights + f.attention_executed + f.recompute;
  return f;
}

}  // namespace planner
