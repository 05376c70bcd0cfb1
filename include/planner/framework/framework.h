// The training frameworks a plan can be launched with, and what each can
// express, as plain data: the release the rules were read from, its pipeline
// split, its precision defaults, and the rules a layout must pass (each with
// the flag or source file that says so). `search --framework` keeps only the
// layouts a framework can express and counts the others by rule; evaluate and
// export refuse them (launch_flags.h). Sits between model/ and search/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "planner/spec/names.h"
#include "planner/spec/specs.h"

namespace planner {

enum class Framework { megatron, nemo, torchtitan, deepspeed, maxtext };
inline constexpr EnumName<Framework> kFrameworkNames[] = {{Framework::megatron, "megatron"},
                                                          {Framework::nemo, "nemo"},
                                                          {Framework::torchtitan, "torchtitan"},
                                                          {Framework::deepspeed, "deepspeed"},
                                                          {Framework::maxtext, "maxtext"}};
constexpr std::span<const EnumName<Framework>> name_table(Framework) { return kFrameworkNames; }
[[nodiscard]] constexpr std::string_view to_string(Framework f) { return name_of(f); }

// What a rule forbids; framework.cpp's check tests each kind on a layout.
enum class RuleKind {
  no_zero1,                   // ZeRO-1 (optimizer sharding alone)
  no_zero2,                   // ZeRO-2
  no_zero3,                   // ZeRO-3 / FSDP
  no_zero3_keep,              // ZeRO-3 keeping gathered weights until the backward (zero=3nr)
  no_zero3_keep_with_pp_ep,   // the same with PP > 1 or EP > 1
  no_zero3_keep_tied,         // the same for a model with tied embeddings
  no_zero23_with_pp,          // ZeRO-2/3 with PP > 1
  reshard_default,            // ZeRO-3 resharding other than the framework's default, unless pinned
  ddp_only_1d,                // ZeRO-0 with DP > 1 and TP, CP or PP > 1
  no_zero0_overlap,           // ZeRO-0 with DP x CP > 1 and the gradient reduction overlapped
  cp_needs_zero3,             // CP > 1 without ZeRO-3
  no_interleaving,            // virtual stages > 1
  no_gpipe,                   // the GPipe schedule
  interleaved_pp2_blocking,   // virtual stages > 1 with PP 2, pipeline p2p not overlapped
  microbatches_per_stage,     // PP > 1 with micro-batches not a multiple of the stages
  no_cp,                      // CP > 1
  sp_with_tp,                 // TP > 1 without sequence parallelism
  no_sp,                      // sequence parallelism
  no_tp_with_pp,              // TP > 1 and PP > 1 together
  no_tp_overlap,              // --tp-overlap
  no_selective_recompute,     // selective recomputation
  selective_attention_only,   // selective recomputation other than the attention core (SelectivePolicy)
  selective_torchtitan_only,  // selective recomputation as Megatron's attention core
  no_fp8,                     // --dtype fp8
  chunks_divide_layers,       // PP x virtual stages must divide the layers
  no_a2a_overlap,             // MoE all-to-alls overlapped with another micro-batch's compute (--overlap-a2a)
  a2a_overlap_mla_only,       // the same, except for MLA (DeepSeek-style) models
  no_deepep,                  // --a2a deepep
  etp_one_or_tp,              // expert TP other than 1 or the TP degree
  ep_needs_zero3,             // EP > 1 without ZeRO-3 (EP folded out of the FSDP dimension)
  a2a_overlap_needs_vpp,      // all-to-all overlap with PP > 1 outside the interleaved schedule
  no_capacity_factor,         // --capacity-factor (token dropping)
  no_capacity_factor_deepep,  // --capacity-factor with --a2a deepep
  no_deepep_with_etp,         // --a2a deepep with expert TP > 1
  deepep_mla_or_llama4_only,  // --a2a deepep on a model other than MLA (DeepSeek) or Llama 4
  no_moe,                     // a MoE model
  hybrid_shard_zero3_only,    // hybrid sharding (--zero-shard) below ZeRO-3
  hybrid_shard_not_kept,      // hybrid sharding with ZeRO-3 keeping its weights (zero=3nr)
  hybrid_shard_no_cp,         // hybrid sharding with CP > 1
  hybrid_shard_no_tp,         // hybrid sharding with TP > 1
  hybrid_shard_no_pp,         // hybrid sharding with PP > 1
};

struct FrameworkRule {
  RuleKind kind;
  const char* text;      // what the framework cannot do, in a few words
  const char* citation;  // the flag, file or page at FrameworkInfo::release that says so
};

// Precision defaults as bytes per parameter; 0 = keep planner's default
// (TrainingSpec). Applied only where the user gave no --grad-bytes,
// --weight-bytes or --optimizer-bytes.
struct FrameworkDefaults {
  double grad_bytes = 0;
  double weight_bytes = 0;
  double optimizer_bytes = 0;
  const char* why = "";  // the flag or field the defaults come from
};

struct FrameworkInfo {
  Framework framework;
  const char* display_name;  // e.g. "Megatron-LM"
  const char* release;       // the version the rules and flag spellings were read from
  const char* repository;    // where that release lives
  PipelineSplit split;       // how it lays layers over stages
  const char* split_source;
  FrameworkDefaults defaults;
  std::span<const FrameworkRule> rules;
};

[[nodiscard]] const FrameworkInfo& framework_info(Framework f);

// What a rule check needs beyond the layout: whether the user pinned the
// ZeRO-3 resharding (then the framework's default does not apply).
struct RuleContext {
  bool reshard_pinned = false;
};

// The index in info.rules of the first rule `pc` (normalised) breaks, or -1
// when the framework can express it. Cheap: reads the configuration only.
[[nodiscard]] int broken_rule(const FrameworkInfo& info, const ModelSpec& model, const ParallelConfig& pc,
                              const TrainingSpec& ts, RuleContext ctx = {});

// "megatron: <text> (<citation>)", as reports and errors name a rule.
[[nodiscard]] std::string rule_label(const FrameworkInfo& info, int rule);
// Whether the framework overlaps `model`'s MoE all-to-alls with compute as
// --overlap-a2a prices them (no rule of it refuses the overlap). The search
// leaves the overlap out of its choices where it cannot run, rather than
// rejecting the layouts whose overlapped choice priced cheaper.
[[nodiscard]] bool overlaps_a2a(const FrameworkInfo& info, const ModelSpec& model);
// "<text> (<citation>)" alone.
[[nodiscard]] std::string rule_text(const FrameworkInfo& info, int rule);

// Which precision flags the user gave (those keep their values).
struct PrecisionGiven {
  bool grad_bytes = false, weight_bytes = false, optimizer_bytes = false;
  bool selective_policy = false;  // --selective-ac given: the framework's default does not apply
};

// What the launch flags can say of precision: the framework's defaults and
// one departure each (framework.cpp); any other --grad-bytes,
// --grad-reduce-bytes, --weight-bytes or --optimizer-bytes is an InputError
// naming the flag (launch_flags refuses what it would not launch).
void check_precision_exportable(const FrameworkInfo& info, const TrainingSpec& ts);

// The framework's pipeline split, precision and selective-recompute defaults, on `ts`.
void apply_framework_defaults(const FrameworkInfo& info, TrainingSpec& ts, PrecisionGiven given);

}  // namespace planner
