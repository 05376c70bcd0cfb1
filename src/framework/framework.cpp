// The frameworks' rules (framework.h), each read from the release named in
// its FrameworkInfo. Sources (fetched and read at those tags):
//   Megatron-LM core_v0.19.0: megatron/training/arguments.py (validate_args,
//     _add_distributed_args), megatron/core/transformer/transformer_config.py (also the MoE
//     all-to-all overlap's asserts), megatron/core/model_parallel_config.py,
//     megatron/core/pipeline_parallel/schedules.py
//   Megatron-Bridge v0.6.0 (NeMo): src/megatron/bridge/training/config.py (ConfigContainer,
//     runtime_config_update), training/comm_overlap.py, training/mixed_precision.py,
//     training/flex_dispatcher_backend.py, docs/.../megatron-lm-to-megatron-bridge.mdx;
//     the model is Megatron-Core's TransformerConfig
//   torchtitan v0.2.2: torchtitan/config/job_config.py, torchtitan/models/llama3/infra/parallelize.py,
//     torchtitan/models/{deepseek_v3,llama4,qwen3}/infra/parallelize.py (DeepEP),
//     torchtitan/distributed/parallel_dims.py (EP and ETP)
//   DeepSpeed v0.19.5: deepspeed/runtime/pipe/engine.py, pipe/schedule.py, pipe/module.py,
//     runtime/utils.py (partition_uniform), runtime/tensor_parallel/config.py, moe/sharded_moe.py,
//     runtime/engine.py (ZeRO-0 all-reduce, ZeRO-3 and MoE)
//   MaxText maxtext-v0.2.4: src/maxtext/configs/base.yml, src/maxtext/configs/types.py,
//     src/maxtext/layers/decoders.py (remat_policy)
#include "planner/framework/framework.h"

#include <algorithm>

#include <fmt/format.h>

#include "planner/model/moe_cost.h"
#include "planner/model/priced_plan.h"
#include "planner/spec/input_error.h"

namespace planner {

namespace {

constexpr FrameworkRule kMegatronRules[] = {
    {RuleKind::no_zero3_keep_with_pp_ep,
     "ZeRO-3 keeping weights until the backward needs --use-torch-fsdp2 --torch-fsdp2-no-reshard-after-forward, "
     "which refuses PP > 1 and EP > 1",
     "megatron/training/arguments.py validate_args: '--use-torch-fsdp2 is not supported with pipeline "
     "parallelism', '... with expert parallelism'"},
    {RuleKind::no_zero3_keep_tied,
     "ZeRO-3 keeping weights until the backward needs --use-torch-fsdp2, which requires "
     "--untie-embeddings-and-output-weights; this model ties them",
     "megatron/training/arguments.py validate_args: '--use-torch-fsdp2 requires "
     "--untie-embeddings-and-output-weights'"},
    {RuleKind::no_gpipe, "no GPipe schedule (1F1B, or interleaved 1F1B with virtual stages)",
     "megatron/core/pipeline_parallel/schedules.py get_forward_backward_func"},
    {RuleKind::selective_attention_only,
     "--recompute-granularity selective recomputes the attention core (or the --recompute-modules), not "
     "torchtitan's op or per-layer policies (give --selective-ac megatron)",
     "megatron/training/arguments.py --recompute-granularity, --recompute-modules"},
    {RuleKind::a2a_overlap_needs_vpp,
     "--overlap-moe-expert-parallel-comm with PP > 1 needs virtual stages ('virtual_pipeline_model_parallel_size "
     "must be specified when pipeline_model_parallel_size > 1')",
     "megatron/core/transformer/transformer_config.py TransformerConfig.__post_init__"},
    {RuleKind::no_capacity_factor_deepep,
     "--capacity-factor is written as --moe-pad-expert-input-to-capacity, which the flex dispatcher's deepep "
     "backend (--a2a deepep) refuses",
     "megatron/core/transformer/transformer_config.py TransformerConfig.__post_init__: 'Flex token dispatcher "
     "with deepep backend does not support moe_pad_expert_input_to_capacity'"},
    {RuleKind::hybrid_shard_not_kept,
     "hybrid sharding is --num-distributed-optimizer-instances over the distributed optimizer or Megatron-FSDP; "
     "planner writes ZeRO-3 keeping its weights as --use-torch-fsdp2, which it does not cover",
     "megatron/training/arguments.py --num-distributed-optimizer-instances; megatron/core/parallel_state.py "
     "(intra- and inter-instance data-parallel groups)"},
    // Last: --overlap-p2p lifts it, so the layout's other rules are named first.
    {RuleKind::interleaved_pp2_blocking,
     "the interleaved schedule (virtual stages) with PP 2 needs the pipeline p2p overlapped (give --overlap-p2p)",
     "megatron/training/arguments.py validate_args: 'When interleaved schedule is used and p2p communication "
     "overlap is disabled, pipeline-model-parallel size should be greater than 2'"},
};

constexpr FrameworkRule kNemoRules[] = {
    {RuleKind::no_zero3_keep,
     "planner writes ZeRO-2/3 as Megatron-FSDP (ddp.use_megatron_fsdp), which reshards after the forward",
     "Megatron-Core DistributedDataParallelConfig.data_parallel_sharding_strategy (Megatron-Bridge ddp.*)"},
    {RuleKind::no_gpipe, "no GPipe schedule (1F1B, or interleaved 1F1B with virtual stages)",
     "Megatron-Core pipeline_parallel/schedules.py get_forward_backward_func"},
    {RuleKind::selective_attention_only,
     "recompute_granularity selective recomputes the attention core, not torchtitan's op or per-layer policies "
     "(give --selective-ac megatron)",
     "Megatron-Core TransformerConfig.recompute_granularity"},
    {RuleKind::a2a_overlap_needs_vpp,
     "model.overlap_moe_expert_parallel_comm (comm_overlap.overlap_moe_expert_parallel_comm in a recipe with "
     "comm_overlap) with PP > 1 needs virtual stages (the pipeline layout's chunks)",
     "Megatron-Core TransformerConfig.__post_init__; src/megatron/bridge/training/comm_overlap.py "
     "CommOverlapConfig._get_model_comm_overlap_cfgs"},
    {RuleKind::no_capacity_factor_deepep,
     "--capacity-factor is written as model.moe_pad_expert_input_to_capacity, which the flex dispatcher's deepep "
     "backend (--a2a deepep) refuses",
     "Megatron-Core TransformerConfig.__post_init__: 'Flex token dispatcher with deepep backend does not support "
     "moe_pad_expert_input_to_capacity'"},
};

constexpr FrameworkRule kTorchtitanRules[] = {
    {RuleKind::selective_torchtitan_only,
     "selective_ac_option is 'op' or a layer frequency N; no attention-core-only policy (give --selective-ac op or "
     "layer:N)",
     "torchtitan/config/job_config.py ActivationCheckpoint.selective_ac_option"},
    {RuleKind::no_zero1, "no ZeRO-1: data parallelism is DDP (data_parallel_replicate_degree) or FSDP2",
     "torchtitan/config/job_config.py Parallelism"},
    {RuleKind::no_zero2, "no ZeRO-2: data parallelism is DDP (data_parallel_replicate_degree) or FSDP2",
     "torchtitan/config/job_config.py Parallelism"},
    {RuleKind::ddp_only_1d, "DDP (ZeRO-0) only without TP, CP or PP ('DDP has not supported > 1D parallelism')",
     "torchtitan/models/llama3/infra/parallelize.py parallelize_llama"},
    {RuleKind::cp_needs_zero3, "CP ranks join the FSDP mesh (fsdp_enabled = dp_shard or cp): CP needs ZeRO-3",
     "torchtitan/distributed/parallel_dims.py ParallelDims.fsdp_enabled"},
    {RuleKind::sp_with_tp, "TP always shards norms and activations over the sequence (SequenceParallel)",
     "torchtitan/models/llama3/infra/parallelize.py apply_tp"},
    {RuleKind::reshard_default,
     "fsdp_reshard_after_forward=\"default\" reshards iff PP is off (pin --reshard-after-forward for the other)",
     "torchtitan/config/job_config.py Parallelism.fsdp_reshard_after_forward; parallelize.py apply_fsdp"},
    {RuleKind::no_a2a_overlap,
     "MoE all-to-alls overlap other work only under the DualPipeV schedule (PP > 1, no activation checkpointing), "
     "which planner does not price",
     "torchtitan/config/job_config.py Parallelism.pipeline_parallel_expert_parallel_overlap"},
    {RuleKind::etp_one_or_tp, "expert_tensor_parallel_degree is either 1 or the TP degree",
     "torchtitan/config/job_config.py Parallelism.expert_tensor_parallel_degree"},
    {RuleKind::deepep_mla_or_llama4_only,
     "expert_parallel_comm_backend = \"deepep\" is read by the deepseek_v3 and llama4 models only (MLA or Llama 4 "
     "here); the others (qwen3, gpt_oss) run the standard all-to-all",
     "torchtitan/models/deepseek_v3/infra/parallelize.py, models/llama4/infra/parallelize.py parallelize_* "
     "(models/qwen3/infra/parallelize.py calls apply_moe_ep_tp without use_deepep)"},
    {RuleKind::no_deepep_with_etp,
     "expert_parallel_comm_backend = \"deepep\" refuses expert TP ('DeepEP with Expert Tensor Parallelism (ETP) is "
     "not supported yet')",
     "torchtitan/models/deepseek_v3/infra/parallelize.py, models/llama4/infra/parallelize.py: NotImplementedError"},
    {RuleKind::ep_needs_zero3,
     "EP takes its ranks from the FSDP, CP and TP dimensions (efsdp = dp_shard x cp x tp / (etp x ep)): EP needs "
     "FSDP2 (ZeRO-3)",
     "torchtitan/distributed/parallel_dims.py ParallelDims (efsdp)"},
    {RuleKind::no_capacity_factor, "the MoE layer is dropless (token-choice top-k, no capacity factor)",
     "torchtitan/models/moe/moe.py TokenChoiceTopKRouter, MoEArgs"},
};

constexpr FrameworkRule kDeepspeedRules[] = {
    // First, so that evaluate, search and export name it for a MoE model; the MoE
    // rules below say what the framework runs once planner writes its experts.
    {RuleKind::no_moe,
     "no MoE models: planner writes no DeepSpeed expert settings (the experts are deepspeed.moe.layer.MoE modules, "
     "with ep_size, in the model's code; ZeRO-3 refuses them: 'MoE not supported with Stage 3')",
     "deepspeed/moe/layer.py MoE; deepspeed/runtime/engine.py _validate_zero3_moe_compatibility"},
    {RuleKind::no_zero23_with_pp, "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
     "deepspeed/runtime/pipe/engine.py PipelineEngine.__init__ assertion"},
    {RuleKind::no_zero3_keep, "ZeRO-3 releases gathered parameters after their forward use",
     "deepspeed/runtime/zero/config.py stage3_max_reuse_distance (tunes, does not disable, the release)"},
    {RuleKind::no_interleaving, "the pipeline engine runs TrainSchedule (1F1B, no virtual stages)",
     "deepspeed/runtime/pipe/schedule.py TrainSchedule"},
    {RuleKind::no_gpipe, "the pipeline engine runs TrainSchedule (1F1B), not GPipe",
     "deepspeed/runtime/pipe/schedule.py TrainSchedule"},
    {RuleKind::no_cp, "no ring context parallelism (DeepSpeed-Ulysses is all-to-all sequence parallelism)",
     "deepspeed/sequence/layer.py DistributedAttention"},
    {RuleKind::no_sp, "AutoTP has no Megatron-style sequence parallelism",
     "deepspeed/runtime/tensor_parallel/config.py TPTrainingConfig"},
    {RuleKind::no_tp_with_pp, "TP is AutoTP (tensor_parallel.autotp_size) on DeepSpeedEngine, not the PipelineEngine",
     "deepspeed/runtime/engine.py _configure_tensor_parallel"},
    {RuleKind::no_selective_recompute, "activation checkpointing is per layer (full), no selective setting",
     "deepspeed/runtime/pipe/module.py PipelineModule(activation_checkpoint_interval)"},
    {RuleKind::no_fp8, "no FP8 setting in the DeepSpeed config (FP8 comes from Transformer Engine in the model)",
     "deepspeed/runtime/config.py: no fp8 section (bf16, fp16 only)"},
    {RuleKind::no_a2a_overlap, "the MoE layer runs its dispatch and combine all-to-alls in line (_AllToAll.apply)",
     "deepspeed/moe/sharded_moe.py MOELayer.forward"},
    {RuleKind::no_deepep, "the MoE all-to-alls are torch.distributed all_to_all_single, no DeepEP kernels",
     "deepspeed/moe/sharded_moe.py _AllToAll"},
    {RuleKind::hybrid_shard_zero3_only,
     "hybrid sharding is MiCS (zero_optimization.mics_shard_size), a ZeRO-3 partitioning; ZeRO-1/2 shard over all "
     "data-parallel ranks",
     "deepspeed/runtime/zero/config.py mics_shard_size; deepspeed/runtime/zero/mics.py"},
    {RuleKind::hybrid_shard_no_tp,
     "MiCS shards over groups of consecutive world ranks, across AutoTP's ranks, not over the data-parallel ranks "
     "the planner prices",
     "deepspeed/runtime/zero/mics_utils.py _generate_mics_config (np.arange(world_size).reshape(-1, shard_size))"},
    // Last: --no-overlap-grad-reduce lifts it, so the layout's other rules are named first.
    {RuleKind::no_zero0_overlap,
     "ZeRO-0 all-reduces the gradients after the backward (zero_optimization.overlap_comm applies from stage 1); "
     "give --no-overlap-grad-reduce",
     "deepspeed/runtime/engine.py _backward_epilogue -> allreduce_gradients -> buffered_allreduce_fallback "
     "(no ZeRO optimizer at stage 0)"},
};

constexpr FrameworkRule kMaxtextRules[] = {
    // First, so that evaluate, search and export name it for a MoE model; the MoE
    // rules below say what the framework runs once planner writes its experts.
    {RuleKind::no_moe,
     "no MoE models: planner writes no MaxText expert settings (num_experts, num_experts_per_tok, "
     "ici_/dcn_expert_parallelism)",
     "src/maxtext/configs/base.yml num_experts, ici_expert_parallelism"},
    {RuleKind::no_zero2, "no ZeRO-2: data (DDP), shard_optimizer_over_data (ZeRO-1) or fsdp (ZeRO-3) axes",
     "src/maxtext/configs/base.yml ici_data_parallelism, shard_optimizer_over_data, ici_fsdp_parallelism"},
    {RuleKind::no_zero3_keep, "FSDP weights are gathered per use by XLA; no keep-until-backward setting",
     "src/maxtext/configs/base.yml (ici_fsdp_parallelism)"},
    {RuleKind::chunks_divide_layers,
     "SPMD pipelining needs stages x layers per stage x repeats = layers (uniform chunks)",
     "src/maxtext/configs/types.py num_layers_per_pipeline_stage / num_pipeline_repeats check"},
    {RuleKind::microbatches_per_stage,
     "num_pipeline_microbatches (global batch / (DP x micro-batch)) must be a multiple of the pipeline stages",
     "src/maxtext/configs/types.py MaxTextConfig: 'The number of microbatches ... must be divisible by the number "
     "of stages'"},
    {RuleKind::selective_attention_only,
     "selective recomputation is remat_policy=minimal (everything saved but the attention context), not "
     "torchtitan's op or per-layer policies (give --selective-ac megatron)",
     "src/maxtext/layers/decoders.py Decoder.get_remat_policy"},
    {RuleKind::no_tp_overlap, "planner knows no MaxText setting for overlapped TP communication",
     "src/maxtext/configs/base.yml"},
    {RuleKind::sp_with_tp,
     "TP shards the activations between layers over the tensor axis (activation_embed -> tensor), so norms and "
     "element-wise work split as under sequence parallelism",
     "src/maxtext/configs/base.yml logical_axis_rules"},
    {RuleKind::a2a_overlap_mla_only,
     "use_batch_split_schedule overlaps the MoE all-to-alls with compute only in DeepSeek sparse layers (MLA "
     "models here)",
     "src/maxtext/configs/base.yml use_batch_split_schedule"},
    {RuleKind::no_deepep, "no DeepEP kernels (JAX/XLA collectives)", "src/maxtext/configs/base.yml"},
    {RuleKind::hybrid_shard_zero3_only,
     "hybrid sharding is the fsdp axis inside the data axis (ZeRO-3); shard_optimizer_over_data shards over all "
     "of the data axis",
     "src/maxtext/configs/base.yml ici_fsdp_parallelism, dcn_data_parallelism, shard_optimizer_over_data"},
    {RuleKind::hybrid_shard_no_cp,
     "planner writes a hybrid shard group as the fsdp axis alone, which does not hold the context axis",
     "src/maxtext/configs/base.yml logical_axis_rules (weights over fsdp, not context)"},
    {RuleKind::hybrid_shard_no_pp,
     "planner writes a hybrid shard group as the fsdp axis over contiguous chips, which pipeline stages would "
     "interleave",
     "src/maxtext/configs/base.yml ici_/dcn_pipeline_parallelism, ici_/dcn_fsdp_parallelism"},
};

constexpr FrameworkInfo kFrameworks[] = {
    {Framework::megatron, "Megatron-LM", "core_v0.19.0", "github.com/NVIDIA/Megatron-LM", PipelineSplit::balanced,
     "--pipeline-model-parallel-layout (any split of layers over stages and chunks; since core_v0.13.0)",
     {4, 0, 0,
      "bf16 keeps fp32 main gradients: accumulate_allreduce_grads_in_fp32 set for --bf16 (arguments.py), "
      "18 bytes per parameter before sharding"},
     kMegatronRules},
    {Framework::nemo, "NeMo / Megatron-Bridge", "v0.6.0", "github.com/NVIDIA-NeMo/Megatron-Bridge",
     PipelineSplit::balanced, "model.pipeline_model_parallel_layout (Megatron-Core TransformerConfig)",
     {4, 0, 0, "Megatron-Core's fp32 main gradients under bf16_mixed (18 bytes per parameter)"}, kNemoRules},
    {Framework::torchtitan, "torchtitan", "v0.2.2", "github.com/pytorch/torchtitan", PipelineSplit::balanced,
     "parallelism.module_fqns_per_model_part (any split of modules over model parts)",
     {4, 0, 0, "training.mixed_precision_reduce = \"float32\": FSDP2 reduces and keeps gradients in fp32"},
     kTorchtitanRules},
    {Framework::deepspeed, "DeepSpeed", "v0.19.5", "github.com/deepspeedai/DeepSpeed", PipelineSplit::uniform,
     "PipelineModule(partition_method='uniform'): ds_utils.partition_uniform, the first stages take the remainder",
     {0, 0, 0, ""}, kDeepspeedRules},
    {Framework::maxtext, "MaxText", "maxtext-v0.2.4", "github.com/AI-Hypercomputer/maxtext", PipelineSplit::uniform,
     "num_layers_per_pipeline_stage x num_pipeline_repeats (uniform chunks)",
     {4, 4, 8,
      "weight_dtype \"float32\" and grad_dtype \"float32\" (base.yml): fp32 weights are the master copy, Adam "
      "moments fp32"},
     kMaxtextRules},
};

bool breaks(RuleKind k, const FrameworkInfo& info, const ModelSpec& model, const ParallelConfig& pc,
            const TrainingSpec& ts, RuleContext ctx) {
  const bool keep = pc.zero_stage == 3 && !pc.reshard_after_forward;
  switch (k) {
    // A stage that shards nothing runs as none; a MoE model's experts shard
    // over EDP, which can exceed one where DP x CP is one (reduces_gradients).
    case RuleKind::no_zero1:
      return pc.zero_stage == 1 && reduces_gradients(model, pc);
    case RuleKind::no_zero2:
      return pc.zero_stage == 2 && reduces_gradients(model, pc);
    case RuleKind::no_zero3:
      return pc.zero_stage == 3 && reduces_gradients(model, pc);
    case RuleKind::no_zero3_keep: return keep;
    case RuleKind::no_zero3_keep_with_pp_ep:
      return keep && (pc.pp > 1 || pc.ep > 1);
    case RuleKind::no_zero3_keep_tied:
      return keep && model.tied_embeddings;
    case RuleKind::no_zero23_with_pp: return pc.zero_stage >= 2 && pc.pp > 1;
    case RuleKind::reshard_default: return pc.zero_stage == 3 && !ctx.reshard_pinned && pc.reshard_after_forward != (pc.pp == 1);
    case RuleKind::ddp_only_1d: return pc.zero_stage == 0 && pc.dp > 1 && pc.tp * pc.cp * pc.pp > 1;
    case RuleKind::no_zero0_overlap:
      return pc.zero_stage == 0 && pc.dp * pc.cp > 1 && ts.overlap_grad_reduce;
    case RuleKind::cp_needs_zero3: return pc.cp > 1 && pc.zero_stage != 3;
    case RuleKind::no_interleaving: return pc.virtual_stages > 1;
    case RuleKind::no_gpipe: return pc.schedule == Schedule::gpipe && pc.pp > 1;
    case RuleKind::interleaved_pp2_blocking:
      return pc.pp == 2 && pc.virtual_stages > 1 && !overlaps_p2p(ts, pc);
    case RuleKind::microbatches_per_stage:
      return pc.pp > 1 &&
             (ts.global_batch_sequences / std::max<std::int64_t>(1, pc.dp * pc.micro_batch_size)) % pc.pp != 0;
    case RuleKind::no_cp: return pc.cp > 1;
    case RuleKind::sp_with_tp: return pc.tp > 1 && !pc.sequence_parallel;
    case RuleKind::no_sp: return pc.sequence_parallel;
    case RuleKind::no_tp_with_pp: return pc.tp > 1 && pc.pp > 1;
    case RuleKind::no_tp_overlap: return ts.tp_comm_overlap;
    case RuleKind::no_selective_recompute: return pc.recompute == Recompute::selective;
    case RuleKind::selective_attention_only:
      return pc.recompute == Recompute::selective && ts.selective != SelectivePolicy::megatron_attention;
    case RuleKind::selective_torchtitan_only:
      return pc.recompute == Recompute::selective && ts.selective == SelectivePolicy::megatron_attention;
    case RuleKind::no_fp8: return ts.dtype == DType::fp8;
    case RuleKind::chunks_divide_layers: return model.num_layers % (pc.pp * pc.virtual_stages) != 0;
    case RuleKind::no_a2a_overlap:
      return ts.overlap_a2a && pc.ep > 1;
    case RuleKind::a2a_overlap_mla_only:
      return ts.overlap_a2a && pc.ep > 1 && !model.is_mla();
    case RuleKind::no_deepep:
      return ts.a2a == A2aBackend::deepep && pc.ep > 1;
    case RuleKind::etp_one_or_tp:
      return pc.ep > 1 && pc.etp != 1 && pc.etp != pc.tp;
    case RuleKind::ep_needs_zero3:
      return pc.ep > 1 && pc.zero_stage != 3;
    case RuleKind::a2a_overlap_needs_vpp:
      return ts.overlap_a2a && pc.ep > 1 && pc.pp > 1 && pc.virtual_stages <= 1;
    case RuleKind::no_capacity_factor:
      return model.is_moe() && ts.capacity_factor > 0;
    case RuleKind::no_capacity_factor_deepep:
      return model.is_moe() && ts.capacity_factor > 0 && ts.a2a == A2aBackend::deepep;
    case RuleKind::no_deepep_with_etp:
      return ts.a2a == A2aBackend::deepep && pc.ep > 1 && pc.etp > 1;
    case RuleKind::deepep_mla_or_llama4_only:
      return ts.a2a == A2aBackend::deepep && pc.ep > 1 && !model.is_mla() && model.name.rfind("llama4", 0) != 0;
    case RuleKind::no_moe:
      return model.is_moe();
    case RuleKind::hybrid_shard_zero3_only:
      return pc.zero_shard > 0 && pc.zero_stage != 3;
    case RuleKind::hybrid_shard_not_kept:
      return pc.zero_shard > 0 && keep;
    case RuleKind::hybrid_shard_no_cp:
      return pc.zero_shard > 0 && pc.cp > 1;
    case RuleKind::hybrid_shard_no_tp:
      return pc.zero_shard > 0 && pc.tp > 1;
    case RuleKind::hybrid_shard_no_pp:
      return pc.zero_shard > 0 && pc.pp > 1;
  }
  (void)info;
  return false;
}

}  // namespace

const FrameworkInfo& framework_info(Framework f) {
  for (const FrameworkInfo& info : kFrameworks)
    if (info.framework == f) return info;
  return kFrameworks[0];
}

int broken_rule(const FrameworkInfo& info, const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts,
                RuleContext ctx) {
  for (std::size_t i = 0; i < info.rules.size(); ++i)
    if (breaks(info.rules[i].kind, info, model, pc, ts, ctx)) return int(i);
  return -1;
}

bool overlaps_a2a(const FrameworkInfo& info, const ModelSpec& model) {
  for (const FrameworkRule& r : info.rules)
    if (r.kind == RuleKind::no_a2a_overlap || (r.kind == RuleKind::a2a_overlap_mla_only && !model.is_mla()))
      return false;
  return true;
}

std::string rule_label(const FrameworkInfo& info, int rule) {
  if (rule < 0 || std::size_t(rule) >= info.rules.size()) return std::string(to_string(info.framework));
  const FrameworkRule& r = info.rules[std::size_t(rule)];
  return fmt::format("{} {}: {} ({})", to_string(info.framework), info.release, r.text, r.citation);
}

std::string rule_text(const FrameworkInfo& info, int rule) {
  if (rule < 0 || std::size_t(rule) >= info.rules.size()) return "";
  const FrameworkRule& r = info.rules[std::size_t(rule)];
  return fmt::format("{} ({})", r.text, r.citation);
}

void apply_framework_defaults(const FrameworkInfo& info, TrainingSpec& ts, PrecisionGiven given) {
  ts.pipeline_split = info.split;
  if (info.defaults.grad_bytes > 0 && !given.grad_bytes) ts.grad_bytes_per_param = info.defaults.grad_bytes;
  if (info.defaults.weight_bytes > 0 && !given.weight_bytes) ts.weight_bytes_per_param = info.defaults.weight_bytes;
  if (info.defaults.optimizer_bytes > 0 && !given.optimizer_bytes)
    ts.optimizer_bytes_per_param = info.defaults.optimizer_bytes;
  // torchtitan's ActivationCheckpoint defaults: mode "selective",
  // selective_ac_option "2" (torchtitan v0.2.2 torchtitan/config/job_config.py,
  // commit 73a0e69): every second transformer block fully recomputed.
  // torchtitan runs eager PyTorch unless compile.enable is set (v0.2.2
  // config/job_config.py Compile.enable = False): unfused element-wise ops.
  // Async TP requires compile (distributed/tensor_parallel.py).
  if (info.framework == Framework::torchtitan) ts.eager_elementwise = !ts.tp_comm_overlap;
  // Megatron-Core overlaps pipeline p2p only in the interleaved schedule
  // (TrainingSpec::overlap_p2p_interleaved_only).
  if (info.framework == Framework::megatron || info.framework == Framework::nemo)
    ts.overlap_p2p_interleaved_only = true;
  // torchtitan's TP (DTensor parallel styles) and DeepSpeed's AutoTP run
  // their backward collectives in autograd order, with no launch beside the
  // weight-gradient GEMM (TrainingSpec::tp_bwd_overlap); torchtitan's async
  // TP is --tp-overlap.
  if (info.framework == Framework::torchtitan || info.framework == Framework::deepspeed) ts.tp_bwd_overlap = false;
  // What a ZeRO-3 gather holds (Zero3Gather): MaxText runs XLA's SPMD FSDP,
  // one weight tensor at a time; DeepSpeed gathers each submodule's own
  // parameters.
  if (info.framework == Framework::maxtext) ts.zero3_gather = Zero3Gather::tensor;
  if (info.framework == Framework::deepspeed) ts.zero3_gather = Zero3Gather::submodule;
  if (info.framework == Framework::torchtitan && !given.selective_policy) {
    ts.selective = SelectivePolicy::torchtitan_every_nth_layer;
    ts.selective_every_n_layers = 2;
  }
}

// The precision the launch flags say: the framework's defaults
// (FrameworkDefaults; TrainingSpec's own where a framework has none), and
// one departure each framework can write: Megatron-LM gradients kept and
// reduced in bf16 (--grad-reduce-in-bf16: Megatron-Core's main_grad buffer
// takes the reduce dtype, distributed/param_and_grad_buffer.py), DeepSpeed's
// reduction in fp32 (communication_data_type). Megatron-Bridge cannot write
// bf16 gradients: the mixed_precision preset the export names (bf16_mixed,
// bf16_with_fp8_current_scaling_mixed) has grad_reduce_in_fp32=True, and
// runtime_config_update applies it over ddp.* (v0.6.0 training/config.py
// runtime_config_update -> mixed_precision.py MixedPrecisionConfig.setup ->
// update_config_with_precision_overrides), so ddp.grad_reduce_in_fp32=false
// is overwritten. Nor can mixed_precision.grad_reduce_in_fp32=false stand
// beside the preset's name: Bridge applies the overrides with Hydra
// (training/utils/omegaconf_utils.py parse_hydra_overrides), whose
// OmegaConf.update replaces a string node on a dotted key's path with an
// empty map ("if next_root is a primitive ... replace it with an empty
// map"), so one override drops the other. Any other --grad-bytes, --grad-reduce-bytes,
// --weight-bytes or --optimizer-bytes would be priced but not launched: an
// InputError naming the flag.
void check_precision_exportable(const FrameworkInfo& info, const TrainingSpec& ts) {
  const TrainingSpec plain;
  const double w0 = info.defaults.weight_bytes > 0 ? info.defaults.weight_bytes : plain.weight_bytes_per_param;
  const double g0 = info.defaults.grad_bytes > 0 ? info.defaults.grad_bytes : plain.grad_bytes_per_param;
  const double o0 = info.defaults.optimizer_bytes > 0 ? info.defaults.optimizer_bytes : plain.optimizer_bytes_per_param;
  const double g = ts.grad_bytes_per_param, r = reduce_bytes_per_param(ts);
  const bool megatron = info.framework == Framework::megatron;
  const bool bf16_grads = megatron && g == 2 && r == 2;
  const bool fp32_reduce = info.framework == Framework::deepspeed && g == g0 && r == 4;
  auto refuse = [&](const char* flag, double v, double dflt, const char* why, const char* alt) {
    throw InputError(flag, fmt::format("{} bytes cannot be written for {} {}: its launch flags give {} ({}){}", v,
                                       info.display_name, info.release, dflt, why, alt));
  };
  const char* grads_why = info.framework == Framework::nemo
                              ? "mixed_precision=bf16_mixed sets grad_reduce_in_fp32=True over ddp.* at "
                                "runtime_config_update, training/mixed_precision.py MixedPrecisionConfig.setup"
                          : *info.defaults.why ? info.defaults.why
                                               : "bf16 gradients";
  const char* alt = megatron ? "; bf16 gradients reduced in bf16 are --grad-bytes 2 --grad-reduce-bytes 2"
                    : info.framework == Framework::deepspeed ? "; an fp32 reduction is --grad-reduce-bytes 4"
                                                             : "";
  if (ts.weight_bytes_per_param != w0)
    refuse("--weight-bytes", ts.weight_bytes_per_param, w0, w0 == 2 ? "bf16 weights" : "fp32 weights", "");
  if (ts.optimizer_bytes_per_param != o0)
    refuse("--optimizer-bytes", ts.optimizer_bytes_per_param, o0,
           o0 == 12 ? "fp32 master weights and Adam moments" : "fp32 Adam moments", "");
  if (bf16_grads || fp32_reduce) return;
  if (g != g0) refuse("--grad-bytes", g, g0, grads_why, alt);
  if (r != g0) refuse("--grad-reduce-bytes", r, g0, grads_why, alt);
}

}  // namespace planner
