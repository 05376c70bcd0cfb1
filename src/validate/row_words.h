// The free-text words of measured-runs rows that name a setting: the
// recomputation and sharding a row describes, whether it affirms a technique
// ("Float8", not "no Float8") and the year of its source (published_runs.cpp).
// Private to validate/.
#pragma once

#include <optional>
#include <string>

#include "planner/spec/specs.h"

namespace planner::row_words {

// "full", "selective (per-op)", "none"; also "full activation checkpointing",
// "AC: selective", "enabled" / "yes" (full), "disabled", MaxText's "minimal"
// (priced as none: docs/cost_model.md). nullopt: not recognised.
[[nodiscard]] std::optional<Recompute> parse_recompute(const std::string& text);

// Spacing, '-', '_' and '=' ignored: "ZeRO-1", "ZeRO stage 2", "distributed
// optimizer", "FSDP", "HSDP", "FULL_SHARD", "SHARD_GRAD_OP" (FSDP's ZeRO-2),
// "NO_SHARD" / "DDP" (none). nullopt: not recognised.
[[nodiscard]] std::optional<int> parse_zero(const std::string& text);
// Whether a zero_or_fsdp text describes hybrid sharding with one shard group
// per scale-up domain: FSDP's HYBRID_SHARD ("FULL_SHARD within a node, and
// replicate parameters across nodes", PyTorch FSDP ShardingStrategy docs) or
// MaxText's FSDP within a slice with data parallelism across slices over DCN.
[[nodiscard]] bool shards_per_domain(const std::string& text);

// `text` (lower case) names `word` other than as "no WORD" / "without WORD".
[[nodiscard]] bool affirms(const std::string& text, const std::string& word);

// The first year 1990-2099 named in the source citation (0 if none).
[[nodiscard]] int source_year(const std::string& source);

// The software stack a row's source names (published_runs.cpp applies each
// stack's defaults), by names(): "llm-foundry", "LLM Foundry" and
// "mosaicml/llmfoundry" are one name.
struct SourceStack {
  bool torchtitan = false;   // "torchtitan"
  bool llm_foundry = false;  // "llm-foundry", "MosaicML"
  bool nemo = false;         // "NeMo", "dgxc-benchmarking", "DGX Cloud"
  bool deepspeed = false;    // "DeepSpeed", "Megatron-DeepSpeed" (also named by the sharding or notes)
  bool maxtext = false;      // "MaxText"
  // "Megatron-LM" itself, in the source or the notes, and none of the stacks
  // above nor Megatron-Bridge (which run Megatron-Core with their own defaults).
  bool megatron_lm = false;
};

// `source` is the row's citation; `other` its sharding, notes and model name,
// which may name DeepSpeed or Megatron-LM (and only those).
[[nodiscard]] SourceStack source_stack(const std::string& source, const std::string& other);

// `text` names `name` (lower-case letters and digits) starting at one of its
// words and running over the next ones: "LLM Foundry" and "llm-foundry" name
// "llmfoundry", "Nemotron" names "nemo"; "one model" does not.
[[nodiscard]] bool names(const std::string& text, const std::string& name);

}  // namespace planner::row_words
