// Megatron-LM's selective recomputation by module (--recompute-modules,
// core_v0.19.0 megatron/core/transformer/transformer_config.py): the sets a
// layout may recompute, their names, and what each applies to. layer_cost.cpp
// and moe_cost.cpp price them (activations no longer stored, forward pieces
// run again); the CLI, regress cases and the search read the names here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "planner/spec/specs.h"

namespace planner {

[[nodiscard]] constexpr std::uint8_t module_bit(RecomputeModule m) { return std::uint8_t(1u << unsigned(m)); }

// Whether the layers recompute `m`: Recompute::selective with Megatron's
// policy (SelectivePolicy::megatron_attention) and `m` in the set.
[[nodiscard]] bool recomputes(const ParallelConfig& pc, const TrainingSpec& ts, RecomputeModule m);

// The set as Megatron's flag writes it, in enum order: "layernorm,mla_up_proj";
// "none" for the empty set.
[[nodiscard]] std::string recompute_modules_label(std::uint8_t mask);

// A comma-separated list of module names (Megatron's) as a set. `where`
// names the flag or field in the InputError for an unknown or empty name, or
// a module `model` lacks (recompute_modules_problem).
[[nodiscard]] std::uint8_t parse_recompute_modules(std::string_view text, const ModelSpec& model,
                                                   const std::string& where);

// Why `mask` cannot apply to `model`, empty when it can: mla_up_proj needs
// MLA; moe_act, moe and shared_experts need experts, shared_experts shared
// ones; mlp needs a dense layer (Megatron recomputes the MLP of dense layers
// only, transformer_layer.py: `if not self.is_moe_layer`).
[[nodiscard]] std::string recompute_modules_problem(std::uint8_t mask, const ModelSpec& model);

// The training spec a MoE layer's non-routed part is priced with, as a dense
// layer whose MLP is the shared experts (moe_cost.cpp): the `mlp` module does
// not apply to it; `shared_experts` and `moe` (which checkpoints the whole
// MoE layer, shared experts included; moe_layer.py) recompute that MLP.
[[nodiscard]] TrainingSpec moe_layer_dense_part(const TrainingSpec& ts);

// Of the forward's expert all-to-alls, the share the backward runs again: 1
// under full recomputation or the `moe` module (6 all-to-alls per MoE layer
// instead of 4, moe.md §3.4), else 0 (the simulator's EP stream).
[[nodiscard]] double recomputed_a2a_share(const ParallelConfig& pc, const TrainingSpec& ts);

// Why --overlap-a2a cannot run with this recomputation, empty when it can:
// Megatron-LM refuses overlap_moe_expert_parallel_comm with full
// recomputation or `moe` in recompute_modules (transformer_config.py).
[[nodiscard]] std::string overlap_a2a_problem(const ParallelConfig& pc, const TrainingSpec& ts);

}  // namespace planner
