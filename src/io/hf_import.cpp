// Field meanings: transformers' configuration_<family>.py (huggingface/
// transformers, src/transformers/models/{llama,qwen2,qwen3,mistral,mixtral,
// qwen3_moe,deepseek_v3}/) and the modules modeling_<family>.py builds from them.
#include "planner/io/hf_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"

namespace planner {

using nlohmann::json;

namespace {

enum class Family { llama, qwen2, qwen3, mistral, mixtral, qwen3_moe, deepseek_v3 };

struct FamilyName {
  std::string_view model_type;
  Family family;
};
constexpr FamilyName kFamilies[] = {
    {"llama", Family::llama},
    {"qwen2", Family::qwen2},
    {"qwen3", Family::qwen3},
    {"mistral", Family::mistral},
    {"mixtral", Family::mixtral},
    {"qwen3_moe", Family::qwen3_moe},
    {"deepseek_v3", Family::deepseek_v3},
};

// Reads one config's fields; the first problem throws, naming the field.
class HfReader {
 public:
  HfReader(const json& j, const std::string& origin) : j_(j), origin_(origin) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InputError(origin_ + ": " + field, message);
  }

  std::optional<std::int64_t> opt_int(const std::string& key, std::int64_t min_value) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    if (it->is_number_integer() || it->is_number_unsigned()) {
      if (it->is_number_unsigned() && it->get<std::uint64_t>() > (std::uint64_t(1) << 62))
        fail(key, fmt::format("expected an integer >= {}, got {}", min_value, it->dump()));
      const std::int64_t v = it->get<std::int64_t>();
      if (v >= min_value) return v;
    } else if (it->is_number_float()) {
      const double d = it->get<double>();
      if (std::isfinite(d) && d == std::floor(d) && d >= double(min_value) && d < 4e18) return std::int64_t(d);
    }
    fail(key, fmt::format("expected an integer >= {}, got {}", min_value, it->dump()));
  }

  // A required integer; null is not a value (transformers keeps it as None,
  // which the modules built from it do not take as a number).
  std::int64_t req_int(const std::string& key, std::int64_t min_value = 1, const std::string& null_hint = "") const {
    const auto v = opt_int(key, min_value);
    if (!v) {
      if (j_.contains(key))
        fail(key, fmt::format("null is not accepted (expected an integer >= {}{})", min_value, null_hint));
      fail(key, fmt::format("missing (expected an integer >= {})", min_value));
    }
    return *v;
  }

  bool opt_bool(const std::string& key, bool fallback) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) fail(key, fmt::format("expected true or false, got {}", it->dump()));
    return it->get<bool>();
  }

  std::optional<std::string> opt_string(const std::string& key) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) fail(key, fmt::format("expected a string, got {}", it->dump()));
    return it->get<std::string>();
  }

  const json& raw() const { return j_; }
  const std::string& origin() const { return origin_; }

 private:
  const json& j_;
  const std::string& origin_;
};

// silu -> SwiGLU, gelu -> GeGLU: every family here has a gated MLP
// (gate_proj, up_proj, down_proj).
FfnKind gated_ffn(const HfReader& r) {
  const std::string act = r.opt_string("hidden_act").value_or("silu");
  if (act == "silu" || act == "swish") return FfnKind::swiglu;
  if (act.rfind("gelu", 0) == 0) return FfnKind::geglu;
  r.fail("hidden_act", fmt::format("expected silu or gelu (a gated MLP), got '{}'", act));
}

// --name; else the repository in _name_or_path ("Qwen/Qwen2.5-72B" ->
// "qwen2.5-72b"); else the file's name, or its folder's for a config.json.
// A model name is what docs/models.md says a name is: lower-case letters,
// digits, '.', '-' and '_', starting with a letter or digit (it names the file
// models/NAME.json and is typed on the command line).
bool name_char(unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '.' || c == '-' || c == '_'; }
bool plain_model_name(const std::string& n) {
  return !n.empty() && std::isalnum(static_cast<unsigned char>(n[0])) &&
         std::all_of(n.begin(), n.end(), [](unsigned char c) { return name_char(c); });
}

std::string name_from(const HfReader& r, const std::string& origin, const HfImportOptions& o) {
  if (!o.name.empty()) {
    if (!plain_model_name(o.name))
      throw InputError("--name", fmt::format("expected lower-case letters, digits, '.', '-' or '_', starting with a "
                                             "letter or digit, got '{}'",
                                             o.name));
    return o.name;
  }
  std::string n = r.opt_string("_name_or_path").value_or("");
  if (const auto slash = n.find_last_of('/'); slash != std::string::npos) n = n.substr(slash + 1);
  if (n.empty()) {
    const std::filesystem::path p(origin);
    n = p.stem() == "config" ? p.parent_path().filename().string() : p.stem().string();
  }
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  // Anything else a repository or file name holds (spaces, '+') becomes '-'.
  for (char& c : n)
    if (!name_char(static_cast<unsigned char>(c))) c = '-';
  return plain_model_name(n) ? n : "imported";
}

// The attention and dense-MLP fields every family shares (LlamaConfig's names).
void read_common(const HfReader& r, Family f, ModelSpec& m) {
  m.num_layers = r.req_int("num_hidden_layers");
  m.hidden_size = r.req_int("hidden_size");
  m.num_heads = r.req_int("num_attention_heads");
  // transformers: num_key_value_heads None -> num_attention_heads (multi-head attention).
  m.num_kv_heads = r.opt_int("num_key_value_heads", 1).value_or(m.num_heads);
  if (m.num_heads % m.num_kv_heads != 0)
    r.fail("num_key_value_heads",
           fmt::format("expected a divisor of num_attention_heads {}, got {}", m.num_heads, m.num_kv_heads));
  // head_dim: written by Mistral, Qwen3 and newer Llama configs; else hidden_size / heads.
  m.head_dim = r.opt_int("head_dim", 1).value_or(0);
  if (m.head_dim == 0) {
    if (m.hidden_size % m.num_heads != 0)
      r.fail("head_dim", fmt::format("missing, and hidden_size {} is not divisible by num_attention_heads {}",
                                     m.hidden_size, m.num_heads));
    m.head_dim = m.hidden_size / m.num_heads;
  }
  m.vocab_size = r.req_int("vocab_size");
  m.ffn_kind = gated_ffn(r);
  m.norm = NormKind::rmsnorm;
  m.position = PositionKind::rope;
  m.tied_embeddings = r.opt_bool("tie_word_embeddings", false);
  // Qwen2's attention has biases on q/k/v and none on o (modeling_qwen2.py,
  // Qwen2Attention: bias=True for q_proj, k_proj, v_proj); LlamaConfig's
  // attention_bias puts one on all four, mlp_bias on the MLP's.
  const bool attention_bias = r.opt_bool("attention_bias", false), mlp_bias = r.opt_bool("mlp_bias", false);
  if (attention_bias != mlp_bias)
    r.fail(attention_bias ? "attention_bias" : "mlp_bias",
           "biases on the attention projections or the MLP alone cannot be described (the model's \"bias\" covers "
           "every linear layer)");
  m.bias = attention_bias;
  m.qkv_bias = f == Family::qwen2 && !m.bias;
  m.qk_norm = f == Family::qwen3 || f == Family::qwen3_moe;  // Qwen3Attention q_norm, k_norm
}

void read_moe(const HfReader& r, Family f, ModelSpec& m) {
  MoeSpec& e = m.moe;
  e.top_k = r.req_int("num_experts_per_tok");
  if (f == Family::mixtral) {
    // Mixtral: every layer sparse, experts as wide as intermediate_size.
    e.num_experts = r.req_int("num_local_experts");
    e.expert_ffn_hidden_size = m.ffn_hidden_size;
  } else if (f == Family::qwen3_moe) {
    e.num_experts = r.req_int("num_experts");
    e.expert_ffn_hidden_size = r.req_int("moe_intermediate_size");
    e.layer_freq = r.opt_int("decoder_sparse_step", 1).value_or(1);
    if (const auto it = r.raw().find("mlp_only_layers");
        it != r.raw().end() && !it->is_null() && !(it->is_array() && it->empty()))
      r.fail("mlp_only_layers",
             "expected [] (dense layers listed one by one cannot be described; the planner has "
             "first_dense_layers and layer_freq)");
  } else {  // deepseek_v3
    e.num_experts = r.req_int("n_routed_experts");
    e.expert_ffn_hidden_size = r.req_int("moe_intermediate_size");
    // Required, not defaulted: a config.json from save_pretrained writes them,
    // and DeepseekV3Config's defaults (1 shared expert, 3 dense layers) are
    // not 0, so reading a missing one as 0 would be a different model. A null
    // n_shared_experts is refused too: transformers' DeepseekV3MoE builds its
    // shared experts as moe_intermediate_size * n_shared_experts, which None
    // fails (the hub's modeling_deepseek.py would build none): 0 says none.
    e.num_shared_experts = r.req_int("n_shared_experts", 0, "; write 0 for no shared experts");
    // Which layers are MoE: DeepSeek's modeling_deepseek.py (the code the
    // hub's config.json names in auto_map), DeepseekV3DecoderLayer: layer i
    // iff i >= first_k_dense_replace and i % moe_layer_freq == 0, the first
    // of every group counted from layer 0. The planner's rule is the last of
    // every layer_freq after first_dense_layers (model_math.h is_moe_layer):
    // the same layers when first_dense_layers = m - freq + 1, m the first
    // multiple of freq at or after first_k_dense_replace (DeepSeek-V3's 3 and
    // 1 give 3). With first_k_dense_replace 0 and freq > 1 layer 0 is MoE and
    // layer 1 dense, which no first_dense_layers describes: refused.
    // (transformers' own DeepseekV3DecoderLayer ignores moe_layer_freq,
    // every layer from first_k_dense_replace MoE; the two agree at 1.)
    const std::int64_t first_dense = r.req_int("first_k_dense_replace", 0);
    const std::int64_t freq = r.req_int("moe_layer_freq", 1);
    const std::int64_t first_moe = (first_dense + freq - 1) / freq * freq;
    if (first_moe - freq + 1 < 0)
      r.fail("moe_layer_freq",
             fmt::format("{} with first_k_dense_replace 0 makes layers 0, {}, {}, ... MoE (modeling_deepseek.py: "
                         "layer_idx % moe_layer_freq == 0); the planner's MoE layers are the last of every "
                         "layer_freq, so this placement cannot be described",
                         freq, freq, 2 * freq));
    e.first_dense_layers = first_moe - freq + 1;
    e.layer_freq = freq;
    // DeepseekV3TopkRouter: sigmoid scores with e_score_correction_bias.
    const std::string scoring = r.opt_string("scoring_func").value_or("sigmoid");
    if (scoring != "sigmoid" && scoring != "softmax")
      r.fail("scoring_func", fmt::format("expected sigmoid or softmax, got '{}'", scoring));
    e.router_score = scoring == "sigmoid" ? RouterScore::sigmoid : RouterScore::softmax;
    e.router_bias = e.router_score == RouterScore::sigmoid;
    // Multi-token prediction modules (the hub's config.json; transformers ignores them).
    m.mtp_layers = r.opt_int("num_nextn_predict_layers", 0).value_or(0);
  }
  if (e.top_k > e.num_experts)
    r.fail("num_experts_per_tok", fmt::format("expected at most the {} experts, got {}", e.num_experts, e.top_k));
}

void read_mla(const HfReader& r, ModelSpec& m) {
  MlaSpec& a = m.mla;
  // null: queries projected directly (DeepSeek-V2-Lite); missing is an error
  // (DeepseekV3Config's default is 1536, not a direct projection).
  if (!r.raw().contains("q_lora_rank"))
    r.fail("q_lora_rank", "missing (expected an integer >= 1, or null for queries projected directly)");
  a.q_lora_rank = r.opt_int("q_lora_rank", 0).value_or(0);
  a.kv_lora_rank = r.req_int("kv_lora_rank");
  a.qk_nope_head_dim = r.req_int("qk_nope_head_dim");
  a.qk_rope_head_dim = r.req_int("qk_rope_head_dim");
  a.v_head_dim = r.req_int("v_head_dim");
  m.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;  // DeepseekV3Config.qk_head_dim
}

// Sliding-window attention (each query sees the last `window` keys) is not
// modelled: the planner prices full causal attention. Where the config turns
// a window on that is shorter than the sequence length the model is imported
// at, the import is refused (it would be a different model's attention
// cost); a window at least that long is full attention there, noted in the
// model's source. Where transformers turns one on: MistralConfig
// sliding_window (4096 when missing), MixtralConfig's (None when missing);
// Qwen2, Qwen3 and Qwen3-MoE only with use_sliding_window true, on the layers
// from max_window_layers on (Qwen2Config: sliding_window = None unless
// use_sliding_window; layer_types).
void check_sliding_window(const HfReader& r, Family f, std::int64_t seq_len, ModelSpec& m) {
  std::optional<std::int64_t> window;
  std::string why;
  if (f == Family::mistral || f == Family::mixtral) {
    window = r.opt_int("sliding_window", 1);
    if (!window && f == Family::mistral && !r.raw().contains("sliding_window")) {
      window = 4096;
      why = " (missing: MistralConfig's default)";
    }
  } else if (f == Family::qwen2 || f == Family::qwen3 || f == Family::qwen3_moe) {
    const std::optional<std::int64_t> w = r.opt_int("sliding_window", 1);  // checked even when unused
    const std::optional<std::int64_t> from = r.opt_int("max_window_layers", 0);
    if (r.opt_bool("use_sliding_window", false) && w && (!from || *from < m.num_layers)) window = w;
  }
  if (!window) return;
  if (*window < seq_len)
    r.fail("sliding_window",
           fmt::format("{}{} is shorter than the sequence length {}: sliding-window attention is not modelled "
                       "(import with --seq-len {} or less to price it as the full attention it is there)",
                       *window, why, seq_len, *window));
  m.source +=
      fmt::format("; sliding_window {}{} not modelled: full attention, exact up to {} tokens", *window, why, *window);
}

std::int64_t default_seq_len(const HfReader& r, const HfImportOptions& o) {
  // Checked whether or not they decide the length: a config with a broken
  // field is refused, not imported around it.
  const std::optional<std::int64_t> max_pos = r.opt_int("max_position_embeddings", 1);
  std::optional<std::int64_t> orig;
  if (const auto it = r.raw().find("rope_scaling"); it != r.raw().end() && !it->is_null()) {
    if (!it->is_object())
      r.fail("rope_scaling",
             fmt::format("expected an object (e.g. {{\"rope_type\": \"llama3\", ...}}) or null, got {}", it->dump()));
    const std::string where = r.origin() + ": rope_scaling";  // HfReader keeps a reference
    orig = HfReader(*it, where).opt_int("original_max_position_embeddings", 1);
  }
  if (o.seq_len > 0) return o.seq_len;
  const std::optional<std::int64_t> len = orig ? orig : max_pos;
  if (!len)
    r.fail("max_position_embeddings",
           "missing, and no rope_scaling.original_max_position_embeddings: the sequence length is unknown (give "
           "--seq-len)");
  return std::min(len.value_or(kHfMaxDefaultSeqLen), kHfMaxDefaultSeqLen);
}

// The Hugging Face key a model-file field comes from, for errors found when
// the imported model is checked as a model file (limits, cross-field rules).
std::string hf_key_of(const std::string& field) {
  static constexpr std::pair<std::string_view, std::string_view> kKeys[] = {
      {"num_layers", "num_hidden_layers"},
      {"hidden_size", "hidden_size"},
      {"num_heads", "num_attention_heads"},
      {"num_kv_heads", "num_key_value_heads"},
      {"head_dim", "head_dim"},
      {"ffn_hidden_size", "intermediate_size"},
      {"vocab_size", "vocab_size"},
      {"default_seq_len", "max_position_embeddings"},
      {"moe.first_dense_layers", "first_k_dense_replace"},
      {"moe.layer_freq", "decoder_sparse_step / moe_layer_freq"},
      {"moe.top_k", "num_experts_per_tok"},
      {"moe.expert_ffn_hidden_size", "moe_intermediate_size"},
      {"moe.num_shared_experts", "n_shared_experts"},
      {"mtp_layers", "num_nextn_predict_layers"},
  };
  for (const auto& [planner_field, key] : kKeys)
    if (field == planner_field) return std::string(key);
  return field;
}

}  // namespace

ModelSpec model_from_hf_config(const json& config, const std::string& origin, const HfImportOptions& options) {
  if (!config.is_object()) throw InputError(origin, "expected a JSON object (a Hugging Face config.json)");
  const HfReader r(config, origin);
  const std::optional<std::string> type = r.opt_string("model_type");
  if (!type) r.fail("model_type", "missing (expected the model family, as transformers writes it, e.g. \"llama\")");
  std::optional<Family> family;
  std::string known;
  for (const FamilyName& f : kFamilies) {
    if (f.model_type == *type) family = f.family;
    known += (known.empty() ? "" : ", ") + std::string(f.model_type);
  }
  if (!family) r.fail("model_type", fmt::format("unsupported architecture '{}' (supported: {})", *type, known));

  ModelSpec m;
  m.name = name_from(r, origin, options);
  m.display_name = m.name;
  m.source = fmt::format("Hugging Face config.json ({}), model_type {}, imported by planner import-hf", origin, *type);
  read_common(r, *family, m);
  // The dense MLP's width; Mixtral's experts take it too.
  m.ffn_hidden_size = r.req_int("intermediate_size");
  if (*family == Family::mixtral || *family == Family::qwen3_moe || *family == Family::deepseek_v3)
    read_moe(r, *family, m);
  if (*family == Family::deepseek_v3) read_mla(r, m);
  m.default_seq_len = default_seq_len(r, options);
  check_sliding_window(r, *family, m.default_seq_len, m);
  m.default_global_batch_tokens = options.global_batch_tokens;
  if (m.default_global_batch_tokens % m.default_seq_len != 0)
    throw InputError(
        "--global-batch-tokens",
        fmt::format("expected a multiple of the default sequence length {} ({}), got {}", m.default_seq_len,
                    options.seq_len > 0 ? "--seq-len" : "from the config", m.default_global_batch_tokens));
  // The model file's own checks (limits, cross-field rules), reported against
  // this config and the key the field came from.
  try {
    (void)model_from_json(to_json(m), "<imported>");
  } catch (const InputError& e) {
    // model_from_json reports "<imported>" and "field: problem" (the first
    // problem when there are several, "; "-separated).
    std::string field = e.where(), problem = e.message();
    if (const auto colon = problem.find(": "); field == "<imported>" && colon != std::string::npos) {
      field = problem.substr(0, colon);
      problem = problem.substr(colon + 2);
    }
    const std::string key = hf_key_of(field);
    throw InputError(origin + ": " + key,
                     key == field ? problem : fmt::format("{} (the planner model's {})", problem, field));
  }
  return m;
}

}  // namespace planner
