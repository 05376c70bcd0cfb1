// Hugging Face config.json -> ModelSpec (`planner import-hf`): the field names
// as transformers writes them for the Llama, Qwen2/2.5, Qwen3, Mistral,
// Mixtral, Qwen3-MoE and DeepSeek-V3 families (model_type llama, qwen2, qwen3,
// mistral, mixtral, qwen3_moe, deepseek_v3). Sits beside json_io: the result
// is written with to_json(ModelSpec).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "planner/spec/specs.h"

namespace planner {

struct HfImportOptions {
  std::string name;  // the model's name; "" = from _name_or_path, else the file (or, for config.json, its folder)
  std::int64_t seq_len = 0;                            // default_seq_len; 0 = see hf_default_seq_len
  std::int64_t global_batch_tokens = 4 * 1024 * 1024;  // default_global_batch_tokens (Llama 3's 4M-token batch)
};

// An unknown model_type, a missing or malformed field, or an architecture
// feature the planner cannot price is an InputError naming `origin` and the
// field, on one line.
[[nodiscard]] ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& origin,
                                             const HfImportOptions& options = {});

// The sequence length an imported model trains at unless --seq-len says:
// rope_scaling.original_max_position_embeddings (the pre-training length of
// Llama 3.1, DeepSeek-V3), else max_position_embeddings, at most 8192.
inline constexpr std::int64_t kHfMaxDefaultSeqLen = 8192;

}  // namespace planner
