// The --framework and --tokens / --gpu-hour-cost flags: which framework a
// command prices for, the defaults and refusals that follow from it, and the
// training budget (declared in config_flags.h with the other flags).
#include "config_flags.h"

#include <fmt/format.h>

#include "planner/model/labels.h"
#include "planner/spec/input_error.h"
#include "planner/spec/names.h"

namespace planner::cli {

void add_framework_flag(CLI::App* app, LaunchOptions& o, bool required) {
  auto* opt = app->add_option("--framework", o.framework,
                              required ? "the framework to write the launch flags for: megatron, nemo, torchtitan, "
                                         "deepspeed or maxtext"
                                       : "keep only what this framework can express and use its defaults: megatron, "
                                         "nemo, torchtitan, deepspeed or maxtext (default: any layout planner prices)");
  opt->check(CLI::IsMember(name_list<Framework>()));
  if (required) opt->required();
}

void add_budget_flags(CLI::App* app, LaunchOptions& o) {
  app->add_option("--tokens", o.tokens, "tokens to train on (e.g. 15e12): adds days and GPU-hours");
  app->add_option("--gpu-hour-cost", o.gpu_hour_cost, "price of one GPU-hour in USD (needs --tokens): adds the cost");
}

std::optional<Framework> framework_from(const LaunchOptions& o) {
  if (!o.framework) return std::nullopt;
  return parse_name<Framework>(*o.framework);
}

void apply_framework(const CommonFlags& f, std::optional<Framework> fw, TrainingSpec& ts, const HardwareProfile& hw) {
  if (f.torch_compile && fw != Framework::torchtitan)
    throw InputError("--torch-compile",
                     "applies to --framework torchtitan, which runs eager PyTorch unless compile.enable is set; the "
                     "other stacks' element-wise kernels are priced fused already");
  const bool te_loss = f.te_cross_entropy || f.loss_kernel == std::string("te");
  const char* te_flag = f.te_cross_entropy ? "--te-cross-entropy" : "--loss-kernel";
  const char* te_is = f.te_cross_entropy ? "is" : "te is";
  if (te_loss && fw && *fw != Framework::megatron && *fw != Framework::nemo)
    throw InputError(te_flag,
                     fmt::format("{} Transformer Engine's fused loss, which Megatron-Bridge runs; --framework {} "
                                 "does not run it",
                                 te_is, to_string(*fw)));
  // Megatron-LM core_v0.19.0 megatron/training/arguments.py validate_args:
  // assert not (cross_entropy_loss_fusion and cross_entropy_fusion_impl ==
  // 'te'). Megatron-Bridge builds Megatron-Core's config without that check
  // (Megatron-Core only warns).
  if (te_loss && fw == Framework::megatron)
    throw InputError(te_flag, fmt::format("{} Transformer Engine's fused loss, which Megatron-LM core_v0.19.0 refuses "
                                          "(megatron/training/arguments.py validate_args: 'Transformer Engine cross "
                                          "entropy loss fusion is disabled due to stability issues'); --framework "
                                          "nemo runs it",
                                          te_is));
  // Megatron-Bridge v0.6.0 src/megatron/bridge/training/flex_dispatcher_backend.py
  // validate_flex_dispatcher_backend (ConfigContainer.validate): DeepEP on
  // compute capability 8 or 9, or a device named "NVIDIA B200..." or
  // "NVIDIA B300..."; Grace-Blackwell GPUs (GB200, GB300) are neither.
  if (fw == Framework::nemo && ts.a2a == A2aBackend::deepep && hw.chip_name.rfind("GB", 0) == 0)
    throw InputError("--a2a",
                     fmt::format("deepep: Megatron-Bridge v0.6.0 runs DeepEP on Ampere, Hopper, B200 and B300 only, "
                                 "not on {} (src/megatron/bridge/training/flex_dispatcher_backend.py "
                                 "validate_flex_dispatcher_backend); its hybridep backend, which planner does not "
                                 "write, runs there",
                                 hw.chip_name));
  // flash-attn's loss is a module a model's own code calls (llm-foundry's
  // MPT); of the frameworks planner knows only DeepSpeed leaves the loss to
  // the user's model.
  if (f.loss_kernel == std::string("flash-attn") && fw && *fw != Framework::deepspeed)
    throw InputError("--loss-kernel",
                     fmt::format("flash-attn is flash-attn's fused cross-entropy, which a model's own code calls "
                                 "(llm-foundry's MPT); --framework {} computes its loss with its own kernel",
                                 to_string(*fw)));
  if (f.overlap_p2p && fw == Framework::deepspeed)
    throw InputError("--overlap-p2p",
                     "DeepSpeed's pipeline engine sends and receives in schedule order and waits for each "
                     "(deepspeed/runtime/pipe/p2p.py send: \"Doesn't support async_op true\"); --framework "
                     "deepspeed cannot overlap them");
  if (!fw) return;
  apply_framework_defaults(framework_info(*fw), ts,
                           {f.grad_bytes.has_value(), f.weight_bytes.has_value(), f.optimizer_bytes.has_value(),
                            f.selective_ac.has_value()});
  if (f.torch_compile) ts.eager_elementwise = false;
}

std::optional<TrainingBudget> budget_from(const LaunchOptions& o) {
  if (o.gpu_hour_cost && !o.tokens)
    throw InputError("--gpu-hour-cost", "prices the GPU-hours of a run; give --tokens (the tokens to train on) too");
  if (!o.tokens) return std::nullopt;
  if (!(*o.tokens >= 1 && *o.tokens <= 1e18))
    throw InputError("--tokens", fmt::format("expected a number of tokens between 1 and 1e18, got {}", *o.tokens));
  if (o.gpu_hour_cost && !(*o.gpu_hour_cost > 0 && *o.gpu_hour_cost <= 1e6))
    throw InputError("--gpu-hour-cost",
                     fmt::format("expected a price in USD above 0 and at most 1e6, got {}", *o.gpu_hour_cost));
  return TrainingBudget{*o.tokens, o.gpu_hour_cost.value_or(0.0)};
}

ParallelConfig framework_config(Framework fw, const ModelSpec& model, const TrainingSpec& ts, ParallelConfig pc,
                                const ConfigFlags& c) {
  const FrameworkInfo& info = framework_info(fw);
  const ParallelConfig n = normalized(pc);
  // The framework's own ZeRO-3 resharding where the user left it open.
  if (!c.reshard_after_forward && n.zero_stage == 3)
    for (const FrameworkRule& r : info.rules)
      if (r.kind == RuleKind::reshard_default) pc.reshard_after_forward = n.pp == 1;
  // Sequence parallelism where --sp was not given: off where the framework has
  // none (DeepSpeed's AutoTP), rather than planner's default (on with TP > 1).
  if (!c.sp)
    for (const FrameworkRule& r : info.rules)
      if (r.kind == RuleKind::no_sp) pc.sequence_parallel = false;
  const RuleContext ctx{c.reshard_after_forward.has_value()};
  if (const int r = broken_rule(info, model, normalized(pc), ts, ctx); r >= 0)
    throw InputError("--framework", fmt::format("{} {} cannot express {}: {}", to_string(fw), info.release,
                                                config_label(normalized(pc), 'c'), rule_text(info, r)));
  return pc;
}

}  // namespace planner::cli
