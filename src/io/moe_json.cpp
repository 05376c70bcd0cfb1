#include "io/moe_json.h"

#include <fmt/format.h>

#include "planner/model/model_math.h"
#include "planner/spec/limits.h"
#include "planner/spec/names.h"

namespace planner::detail {

namespace {

// "moe": {...}; HF names in docs/models.md (num_local_experts / n_routed_experts,
// num_experts_per_tok, moe_intermediate_size, n_shared_experts, first_k_dense_replace, ...).
MoeSpec read_moe(const json& o, std::vector<std::string>& problems) {
  FieldReader r(o, "moe", problems);
  MoeSpec s;
  s.num_experts = r.integer_in("num_experts", 1, kMaxExperts, true, 0);
  s.top_k = r.integer_in("top_k", 1, kMaxExperts, true, 0);
  s.expert_ffn_hidden_size = r.integer_in("expert_ffn_hidden_size", 1, kMaxFfnHiddenSize, true, 0);
  s.num_shared_experts = r.integer_in("num_shared_experts", 0, kMaxExperts, false, 0);
  // Omitted: as wide as a routed expert (docs/models.md). Written, it is a
  // width: 0 would be no shared expert, which num_shared_experts 0 says, so
  // an explicit 0 is refused rather than read as the default.
  s.shared_expert_ffn_hidden_size = r.integer_in("shared_expert_ffn_hidden_size", 0, kMaxFfnHiddenSize, false, 0);
  if (const auto it = o.find("shared_expert_ffn_hidden_size");
      it != o.end() && it->is_number_integer() && it->get<std::int64_t>() == 0)
    r.problem("shared_expert_ffn_hidden_size",
              fmt::format("expected an integer from 1 to {} (omit it for expert_ffn_hidden_size; "
                          "num_shared_experts 0 for no shared experts), got 0",
                          kMaxFfnHiddenSize));
  s.first_dense_layers = r.integer_in("first_dense_layers", 0, kMaxLayers, false, 0);
  s.layer_freq = r.integer_in("layer_freq", 1, kMaxLayers, false, 1);
  s.router_score = r.choice("router_score", kRouterScoreNames, RouterScore::softmax, false);
  s.router_bias = r.boolean("router_bias", false, false);
  (void)r.string("notes", false);  // free text, ignored
  r.reject_unknown();
  return s;
}

// "mla": {...}; DeepSeek's config.json names without the model prefix.
MlaSpec read_mla(const json& o, std::vector<std::string>& problems) {
  FieldReader r(o, "mla", problems);
  MlaSpec s;
  s.q_lora_rank = r.integer_in("q_lora_rank", 0, kMaxHiddenSize, true, 0);
  s.kv_lora_rank = r.integer_in("kv_lora_rank", 1, kMaxHiddenSize, true, 0);
  s.qk_nope_head_dim = r.integer_in("qk_nope_head_dim", 1, kMaxHeadDim, true, 0);
  s.qk_rope_head_dim = r.integer_in("qk_rope_head_dim", 1, kMaxHeadDim, true, 0);
  s.v_head_dim = r.integer_in("v_head_dim", 1, kMaxHeadDim, true, 0);
  r.reject_unknown();
  return s;
}

}  // namespace

void read_moe_fields(FieldReader& r, std::vector<std::string>& problems, ModelSpec& m) {
  if (const json* o = r.object("moe", false)) m.moe = read_moe(*o, problems);
  if (const json* o = r.object("mla", false)) m.mla = read_mla(*o, problems);
  m.qkv_bias = r.boolean("qkv_bias", false, false);
  m.qk_norm = r.boolean("qk_norm", false, false);
  m.mtp_layers = r.integer_in("mtp_layers", 0, kMaxLayers, false, 0);
  m.expected_active_params = r.integer("expected_active_params", 1, false, 0);
}

void check_moe_fields(std::vector<std::string>& problems, ModelSpec& m) {
  if (m.is_moe()) {
    const MoeSpec& e = m.moe;
    if (e.top_k > e.num_experts)
      problems.push_back(fmt::format("moe.top_k: expected 1 to num_experts {}, got {}", e.num_experts, e.top_k));
    if (e.first_dense_layers >= m.num_layers)
      problems.push_back(fmt::format("moe.first_dense_layers: expected fewer than num_layers {}, got {}", m.num_layers,
                                     e.first_dense_layers));
    else if (count_moe_layers(m) == 0)
      problems.push_back(fmt::format(
          "moe.layer_freq: expected at most num_layers - first_dense_layers = {} (else no layer is MoE), got {}",
          m.num_layers - e.first_dense_layers, e.layer_freq));
    if (e.num_shared_experts == 0 && e.shared_expert_ffn_hidden_size > 0)
      problems.push_back("moe.shared_expert_ffn_hidden_size: expected only with num_shared_experts >= 1");
  } else if (m.expected_active_params > 0) {
    problems.push_back(
        "expected_active_params: expected only on a MoE model (one with a \"moe\" object); a dense model's active "
        "count is its total, expected_params");
  }
  if (m.qkv_bias && m.bias) problems.push_back("qkv_bias: expected false when bias is true (bias covers Q, K, V too)");
  if (m.is_mla()) {
    const std::int64_t qk = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    if (m.head_dim == 0)
      m.head_dim = qk;
    else if (m.head_dim != qk)
      problems.push_back(fmt::format(
          "head_dim: expected qk_nope_head_dim + qk_rope_head_dim = {} with \"mla\" (the query/key head), got {}", qk,
          m.head_dim));
    if (m.num_kv_heads != m.num_heads)
      problems.push_back(fmt::format(
          "num_kv_heads: expected num_attention_heads {} with \"mla\" (each head has its own K and V), got {}",
          m.num_heads, m.num_kv_heads));
    if (m.bias || m.qkv_bias || m.qk_norm)
      problems.push_back(fmt::format("{}: expected false with \"mla\" (not modelled for latent attention)",
                                     m.bias ? "bias" : m.qkv_bias ? "qkv_bias" : "qk_norm"));
  }
  if (m.mtp_layers > 0 && m.mtp_layers >= m.num_layers)
    problems.push_back(
        fmt::format("mtp_layers: expected fewer than num_layers {}, got {}", m.num_layers, m.mtp_layers));
}

void write_moe_fields(const ModelSpec& m, json& j) {
  if (m.qkv_bias) j["qkv_bias"] = true;
  if (m.qk_norm) j["qk_norm"] = true;
  if (m.is_moe()) {
    const MoeSpec& e = m.moe;
    json o = {{"num_experts", e.num_experts},
              {"top_k", e.top_k},
              {"expert_ffn_hidden_size", e.expert_ffn_hidden_size},
              {"num_shared_experts", e.num_shared_experts},
              {"first_dense_layers", e.first_dense_layers},
              {"layer_freq", e.layer_freq},
              {"router_score", std::string(name_of(e.router_score))},
              {"router_bias", e.router_bias}};
    if (e.shared_expert_ffn_hidden_size > 0) o["shared_expert_ffn_hidden_size"] = e.shared_expert_ffn_hidden_size;
    j["moe"] = o;
  }
  if (m.is_mla())
    j["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                {"kv_lora_rank", m.mla.kv_lora_rank},
                {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                {"v_head_dim", m.mla.v_head_dim}};
  if (m.mtp_layers > 0) j["mtp_layers"] = m.mtp_layers;
  if (m.expected_active_params > 0) j["expected_active_params"] = m.expected_active_params;
}

}  // namespace planner::detail
