#include "planner/spec/limits.h"

#include <algorithm>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner {

namespace {

void bound(std::vector<std::string>& out, const char* field, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo)
    out.push_back(fmt::format("{}: expected at least {}, got {}", field, lo, v));
  else if (v > hi)
    out.push_back(fmt::format("{}: expected at most {}, got {}", field, hi, v));
}

void bound(std::vector<std::string>& out, const char* field, double v, double lo, double hi) {
  if (!(v >= lo && v <= hi))
    out.push_back(fmt::format("{}: expected a number from {:g} to {:g}, got {:g}", field, lo, hi, v));
}

void throw_if_any(const std::string& origin, const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::string msg;
  for (const auto& p : problems) msg += (msg.empty() ? "" : "; ") + p;
  throw InputError(origin, msg);
}

}  // namespace

std::vector<std::string> size_problems(const ModelSpec& m) {
  std::vector<std::string> out;
  bound(out, "num_layers", m.num_layers, 1, kMaxLayers);
  bound(out, "hidden_size", m.hidden_size, 1, kMaxHiddenSize);
  bound(out, "ffn_hidden_size", m.ffn_hidden_size, 1, kMaxFfnHiddenSize);
  bound(out, "num_attention_heads", m.num_heads, 1, kMaxHeads);
  bound(out, "num_kv_heads", m.num_kv_heads, 1, kMaxHeads);
  bound(out, "head_dim", m.head_dim, 1, kMaxHeadDim);
  bound(out, "vocab_size", m.vocab_size, 1, kMaxVocab);
  if (m.position == PositionKind::learned)
    bound(out, "max_position_embeddings", m.max_position_embeddings, 1, kMaxSeqLen);
  bound(out, "default_seq_len", m.default_seq_len, 1, kMaxSeqLen);
  if (m.is_moe()) {
    bound(out, "moe.num_experts", m.moe.num_experts, 1, kMaxExperts);
    bound(out, "moe.top_k", m.moe.top_k, 1, m.moe.num_experts);
    bound(out, "moe.expert_ffn_hidden_size", m.moe.expert_ffn_hidden_size, 1, kMaxFfnHiddenSize);
    bound(out, "moe.num_shared_experts", m.moe.num_shared_experts, 0, kMaxExperts);
    bound(out, "moe.shared_expert_ffn_hidden_size", m.moe.shared_expert_ffn_hidden_size, 0, kMaxFfnHiddenSize);
    bound(out, "moe.first_dense_layers", m.moe.first_dense_layers, 0, m.num_layers - 1);
    bound(out, "moe.layer_freq", m.moe.layer_freq, 1, std::max<std::int64_t>(1, m.num_layers - m.moe.first_dense_layers));
  }
  if (m.is_mla()) {
    bound(out, "mla.q_lora_rank", m.mla.q_lora_rank, 0, kMaxHiddenSize);
    bound(out, "mla.kv_lora_rank", m.mla.kv_lora_rank, 1, kMaxHiddenSize);
    bound(out, "mla.qk_nope_head_dim", m.mla.qk_nope_head_dim, 1, kMaxHeadDim);
    bound(out, "mla.qk_rope_head_dim", m.mla.qk_rope_head_dim, 1, kMaxHeadDim);
    bound(out, "mla.v_head_dim", m.mla.v_head_dim, 1, kMaxHeadDim);
  }
  bound(out, "mtp_layers", m.mtp_layers, 0, kMaxLayers);
  if (out.empty()) {
    // At most kMaxGlobalBatchSequences sequences of the default length.
    bound(out, "default_global_batch_tokens", m.default_global_batch_tokens, 1,
          kMaxGlobalBatchSequences * m.default_seq_len);
    // count_params (model_math.cpp) in doubles: within the field bounds its
    // 64-bit products per layer are exact, but the total may not be.
    const double L = double(m.num_layers), h = double(m.hidden_size), H = double(m.num_heads),
                 KV = double(m.num_kv_heads), hd = double(m.head_dim), F = double(m.ffn_hidden_size),
                 V = double(m.vocab_size);
    const double gated = is_gated(m.ffn_kind) ? 1.0 : 0.0;
    const double per_layer = 2.0 * h * H * hd + 2.0 * h * KV * hd + (2.0 + gated) * h * F + 4.0 * h +
                             (m.bias ? H * hd + 2.0 * KV * hd + (1.0 + gated) * F + 2.0 * h : 0.0);
    double moe = 0;  // all layers as MoE layers, an upper bound; MLA within the dense attention's bound order
    if (m.is_moe()) {
      const auto& e = m.moe;
      const double fs = double(e.shared_expert_ffn_hidden_size > 0 ? e.shared_expert_ffn_hidden_size
                                                                    : e.expert_ffn_hidden_size);
      moe = (2.0 + gated) * h * (double(e.num_experts) * double(e.expert_ffn_hidden_size) + double(e.num_shared_experts) * fs) +
            h * double(e.num_experts);
    }
    if (m.is_mla()) {
      const auto& a = m.mla;
      moe += double(a.q_lora_rank) * (h + H * hd) + double(a.kv_lora_rank) * (h + H * double(a.qk_nope_head_dim + a.v_head_dim)) +
             h * double(a.qk_rope_head_dim) + H * double(a.v_head_dim) * h;
    }
    const double positions = m.position == PositionKind::learned ? double(m.max_position_embeddings) * h : 0.0;
    const double total = L * (per_layer + moe) + double(m.mtp_layers) * (per_layer + moe + 2.0 * h * h) + (m.tied_embeddings ? 1.0 : 2.0) * V * h + positions + 2.0 * h;
    if (total > kMaxParams)
      out.push_back(
          fmt::format("parameters: expected at most {:g} in all (num_layers x per-layer parameters + "
                      "embeddings), got {:.3g}",
                      kMaxParams, total));
  }
  return out;
}

std::vector<std::string> size_problems(const TrainingSpec& ts) {
  std::vector<std::string> out;
  bound(out, "num_gpus", ts.num_gpus, 1, kMaxGpus);
  bound(out, "seq_len", ts.seq_len, 1, kMaxSeqLen);
  bound(out, "global_batch_sequences", ts.global_batch_sequences, 1, kMaxGlobalBatchSequences);
  bound(out, "weight_bytes_per_param", ts.weight_bytes_per_param, 0.0, kMaxBytesPerParam);
  bound(out, "grad_bytes_per_param", ts.grad_bytes_per_param, 0.0, kMaxBytesPerParam);
  bound(out, "optimizer_bytes_per_param", ts.optimizer_bytes_per_param, 0.0, kMaxBytesPerParam);
  return out;
}

void check_sizes(const ModelSpec& m, const std::string& origin) { throw_if_any(origin, size_problems(m)); }
void check_sizes(const TrainingSpec& ts, const std::string& origin) { throw_if_any(origin, size_problems(ts)); }

}  // namespace planner
