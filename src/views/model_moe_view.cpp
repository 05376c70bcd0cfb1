#include "views/model_moe_view.h"

#include <fmt/format.h>

#include "planner/spec/names.h"

namespace planner::views {

namespace {

// "3 to 60" or "1, 3, ..., 47": the MoE layers (0-based), from model_math's is_moe_layer rule.
std::string moe_layer_list(const ModelSpec& m) {
  const std::int64_t first = m.moe.first_dense_layers + m.moe.layer_freq - 1, step = m.moe.layer_freq;
  const std::int64_t n = count_moe_layers(m), last = first + (n - 1) * step;
  if (step == 1) return n == 1 ? fmt::format("{}", first) : fmt::format("{} to {}", first, last);
  if (n <= 3) {
    std::string s;
    for (std::int64_t i = 0; i < n; ++i) s += fmt::format("{}{}", i ? ", " : "", first + i * step);
    return s;
  }
  return fmt::format("{}, {}, ..., {}", first, first + step, last);
}

const char* published(std::int64_t expected, std::int64_t counted) {
  return expected == counted ? "matches" : "MISMATCH";
}

}  // namespace

std::string moe_model_lines(const ModelSpec& m, const ParamCounts& p) {
  std::string out;
  if (m.qkv_bias || m.qk_norm)
    out += fmt::format("  attention extras: {}{}\n", m.qkv_bias ? "Q/K/V biases" : "",
                       m.qk_norm ? (m.qkv_bias ? ", QK-norm (RMSNorm per head)" : "QK-norm (RMSNorm per head)") : "");
  if (m.is_mla())
    out += fmt::format(
        "  MLA: q LoRA rank {}, KV LoRA rank {}, query/key head {} + {} RoPE, value head {}; attention {} per layer\n",
        m.mla.q_lora_rank, m.mla.kv_lora_rank, m.mla.qk_nope_head_dim, m.mla.qk_rope_head_dim, m.mla.v_head_dim,
        p.attention_per_layer);
  if (m.is_moe()) {
    const MoeSpec& e = m.moe;
    const std::int64_t fs = e.shared_expert_ffn_hidden_size > 0 ? e.shared_expert_ffn_hidden_size : e.expert_ffn_hidden_size;
    out += fmt::format("  MoE: {} routed experts, top {}, {} router{}; expert FFN {}", e.num_experts, e.top_k,
                       name_of(e.router_score), e.router_bias ? " with score bias" : "", e.expert_ffn_hidden_size);
    if (e.num_shared_experts > 0) out += fmt::format("; {} shared expert(s) of FFN {}", e.num_shared_experts, fs);
    out += "\n";
    out += fmt::format("    layers: {} MoE ({})", p.moe_layers, moe_layer_list(m));
    if (p.dense_layers > 0) out += fmt::format(", {} dense (FFN {})", p.dense_layers, m.ffn_hidden_size);
    out += "\n";
    out += fmt::format("    per MoE layer: routed experts {}, shared {}, router {}; MoE layer {}, dense layer {}\n",
                       p.routed_experts_per_moe_layer, p.shared_experts_per_moe_layer, p.router_per_moe_layer,
                       p.moe_layer, p.dense_layer);
    out += fmt::format("  active parameters {} per token (top {} of {} routed experts)\n", p.active, e.top_k,
                       e.num_experts);
    if (m.expected_active_params)
      out += fmt::format("  published active count {} ({})\n", m.expected_active_params,
                         published(m.expected_active_params, p.active));
  }
  if (m.mtp_layers > 0)
    out += fmt::format(
        "  MTP: {} module(s), {} parameters beyond the main model (embedding and output head shared; counted apart "
        "from the total)\n",
        m.mtp_layers, p.mtp);
  return out;
}

void add_moe_derived(const ModelSpec& m, const ParamCounts& p, nlohmann::json& d) {
  if (m.is_moe()) {
    d["params_active"] = p.active;
    d["moe_layers"] = p.moe_layers;
    d["dense_layers"] = p.dense_layers;
    d["params_routed_experts_per_moe_layer"] = p.routed_experts_per_moe_layer;
    d["params_shared_experts_per_moe_layer"] = p.shared_experts_per_moe_layer;
    d["params_router_per_moe_layer"] = p.router_per_moe_layer;
    d["params_moe_layer"] = p.moe_layer;
    d["params_dense_layer"] = p.dense_layer;
  }
  if (m.mtp_layers > 0) d["params_mtp"] = p.mtp;
}

}  // namespace planner::views
