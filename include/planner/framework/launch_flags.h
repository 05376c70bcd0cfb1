// What to launch one priced configuration with, spelled as each framework
// spells it at the release framework.h names: Megatron-LM arguments,
// Megatron-Bridge (NeMo) overrides, a torchtitan TOML fragment, a DeepSpeed
// JSON config, MaxText overrides. `planner export` and `search --export`.
#pragma once

#include <string>

#include "planner/framework/framework.h"
#include "planner/model/evaluate.h"
#include "planner/spec/specs.h"

namespace planner {

struct LaunchFlags {
  std::string text;  // the flags, config fragment or JSON, ready to paste
  std::string note;  // what the text cannot carry (set in the training script), or empty
};

// Why `f`'s launch flags cannot describe `model`'s experts ("" when they
// can): the framework's no_moe rule (framework.cpp; DeepSpeed and MaxText),
// which evaluate, search and export apply to every layout. search --export
// asks before it searches.
[[nodiscard]] std::string moe_export_problem(Framework f, const ModelSpec& model);

// An evaluation whose structure is valid (its plan priced) and that the
// framework can express; otherwise an InputError naming --framework and the
// rule. `rule_ctx` as for broken_rule.
[[nodiscard]] LaunchFlags launch_flags(Framework f, const ModelSpec& model, const HardwareProfile& hw,
                                       const TrainingSpec& ts, const Evaluation& ev, RuleContext rule_ctx = {});

// Megatron-LM's --pipeline-model-parallel-layout string of a priced plan:
// p x v entries separated by '|', chunk c of stage s at entry c*p + s, "E"
// (embedding) first and "L" (loss) last, `mtp_layers` "m" (multi-token
// prediction) before the "L", runs written as t*n and (x|)*k
// (megatron/core/transformer/pipeline_parallel_layer_layout.py parse_str_to_list).
[[nodiscard]] std::string megatron_layout_string(const PricedPlan& plan, std::int64_t mtp_layers = 0);

}  // namespace planner
