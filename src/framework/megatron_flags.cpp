// Megatron-LM's and Megatron-Bridge's launch arguments (launch_flags.h):
// the pipeline layout string, the argument lines and the notes. Every flag
// was checked in Megatron-LM core_v0.19.0 (arguments.py, TransformerConfig /
// ModelParallelConfig) and Megatron-Bridge v0.6.0 (ConfigContainer).
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "framework/launch_parts.h"
#include "planner/framework/launch_flags.h"
#include "planner/model/labels.h"
#include "planner/model/moe_cost.h"
#include "planner/model/recompute_modules.h"
#include "planner/spec/input_error.h"

namespace planner {

namespace {

using launch_detail::chunk_order;
// Every chunk holds layers / (p * v): the split the frameworks' plain flags give.
bool uniform_chunks(const PricedPlan& plan, std::int64_t layers) {
  const std::vector<std::int64_t> n = chunk_order(plan);
  const std::int64_t each = layers / std::int64_t(n.size());
  for (std::int64_t x : n)
    if (x != each) return false;
  return layers % std::int64_t(n.size()) == 0;
}

// The split Megatron-LM's older uneven flags write: the first and last stages
// their own layer counts, every middle stage the same, and each stage's
// layers split evenly over its chunks (transformer_config.py __post_init__,
// "Uneven PP": first, last and middle-per-rank counts divisible by v).
bool first_last_split(const PricedPlan& plan) {
  const std::int64_t p = plan.layout.stages, v = plan.virtual_stages;
  for (std::int64_t s = 0; s < p; ++s) {
    const std::int64_t n = plan.layout.layers_on(s);
    if (n % v) return false;
    for (const ChunkPlan& c : plan.chunks(s))
      if (c.layers != n / v) return false;
    if (s > 1 && s < p - 1 && n != plan.layout.layers_on(1)) return false;
  }
  return true;
}

// The split of --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split: the embedding and the output layer
// counted as a layer each, every chunk then holding (layers + 2) / (p * v),
// so the first chunk of stage 0 and the last of stage p-1 one layer fewer
// (Megatron-Core transformer_block.py get_num_layers_to_build; what
// Megatron-Bridge's Llama 3.1 405B recipes set, recipes/llama/h100/llama3.py
// llama31_405b_pretrain_256gpu_h100_bf16_config).
bool heads_as_layers_split(const PricedPlan& plan, std::int64_t layers) {
  const std::vector<std::int64_t> n = chunk_order(plan);
  const std::int64_t chunks = std::int64_t(n.size());
  if (chunks < 2 || (layers + 2) % chunks != 0) return false;
  const std::int64_t each = (layers + 2) / chunks;
  for (std::int64_t i = 0; i < chunks; ++i)
    if (n[std::size_t(i)] != each - (i == 0 || i == chunks - 1 ? 1 : 0)) return false;
  return true;
}

}  // namespace

namespace launch_detail {

// Megatron-LM arguments and Megatron-Bridge overrides share Megatron-Core's
// fields; `bridge` picks the spelling.
std::vector<std::string> megatron_lines(const ModelSpec& model, const TrainingSpec& ts, const Evaluation& ev,
                                        const Batch& b, bool bridge) {
  const ParallelConfig& pc = ev.config;
  std::vector<std::string> out;
  auto arg = [&](const char* flag, const char* field, const std::string& value) {
    out.push_back(bridge ? fmt::format("{}={}", field, value)
                         : (value.empty() ? std::string(flag) : fmt::format("{} {}", flag, value)));
  };
  auto flag = [&](const char* megatron_flag, const char* bridge_field) {
    out.push_back(bridge ? fmt::format("{}=true", bridge_field) : std::string(megatron_flag));
  };
  arg("--tensor-model-parallel-size", "model.tensor_model_parallel_size", std::to_string(pc.tp));
  arg("--pipeline-model-parallel-size", "model.pipeline_model_parallel_size", std::to_string(pc.pp));
  if (pc.pp > 1) {
    // The split in the plainest flags that express it; a layout string carries the virtual stages itself.
    bool layout_string = false;
    if (uniform_chunks(ev.plan, model.num_layers)) {
      // Megatron's default even split.
    } else if (first_last_split(ev.plan)) {
      // The older flags (also in releases before the layout string) suffice.
      arg("--decoder-first-pipeline-num-layers", "model.num_layers_in_first_pipeline_stage",
          std::to_string(ev.plan.layout.first));
      arg("--decoder-last-pipeline-num-layers", "model.num_layers_in_last_pipeline_stage",
          std::to_string(ev.plan.layout.last));
    } else if (heads_as_layers_split(ev.plan, model.num_layers)) {
      flag("--account-for-embedding-in-pipeline-split", "model.account_for_embedding_in_pipeline_split");
      flag("--account-for-loss-in-pipeline-split", "model.account_for_loss_in_pipeline_split");
    } else {
      const std::string layout = megatron_layout_string(ev.plan, model.mtp_layers);
      if (bridge)
        out.push_back(fmt::format("'model.pipeline_model_parallel_layout=\"{}\"'", layout));
      else
        out.push_back(fmt::format("--pipeline-model-parallel-layout '{}'", layout));
      layout_string = true;
    }
    if (!layout_string && pc.virtual_stages > 1)
      arg("--num-virtual-stages-per-pipeline-rank", "model.virtual_pipeline_model_parallel_size",
          std::to_string(pc.virtual_stages));
  }
  if (pc.cp > 1) arg("--context-parallel-size", "model.context_parallel_size", std::to_string(pc.cp));
  if (pc.sequence_parallel) flag("--sequence-parallel", "model.sequence_parallel");
  if (model.is_moe()) {
    // Megatron-Core ModelParallelConfig / TransformerConfig fields (core_v0.19.0), which
    // arguments.py turns into flags (ArgumentGroupFactory: '--' + name with '-' for '_').
    // Grouped GEMMs are what moe_cost.cpp prices; the NCCL path is the alltoall
    // dispatcher, DeepEP the flex dispatcher with its deepep backend.
    // The experts and top-k, as priced: Megatron-LM asserts --num-experts with
    // EP > 1 (arguments.py validate_args) and routes to 2 experts unless told
    // (TransformerConfig.moe_router_topk = 2); --num-experts is arguments.py's
    // own flag for TransformerConfig.num_moe_experts.
    arg("--num-experts", "model.num_moe_experts", std::to_string(model.moe.num_experts));
    arg("--moe-router-topk", "model.moe_router_topk", std::to_string(model.moe.top_k));
    arg("--expert-model-parallel-size", "model.expert_model_parallel_size", std::to_string(pc.ep));
    arg("--expert-tensor-parallel-size", "model.expert_tensor_parallel_size", std::to_string(pc.etp));
    flag("--moe-grouped-gemm", "model.moe_grouped_gemm");
    if (ts.a2a == A2aBackend::deepep) {
      arg("--moe-token-dispatcher-type", "model.moe_token_dispatcher_type", "flex");
      arg("--moe-flex-dispatcher-backend", "model.moe_flex_dispatcher_backend", "deepep");
    } else {
      arg("--moe-token-dispatcher-type", "model.moe_token_dispatcher_type", "alltoall");
    }
    if (bridge)  // explicit either way: CommOverlapConfig.setup would set its own (the note: megatron_notes)
      arg("", "model.overlap_moe_expert_parallel_comm", ts.overlap_a2a ? "true" : "false");
    else if (ts.overlap_a2a)
      out.push_back("--overlap-moe-expert-parallel-comm");
    if (ts.capacity_factor > 0) {
      arg("--moe-expert-capacity-factor", "model.moe_expert_capacity_factor", fmt::format("{:g}", ts.capacity_factor));
      flag("--moe-pad-expert-input-to-capacity", "model.moe_pad_expert_input_to_capacity");
    }
  }
  arg("--num-layers", "model.num_layers", std::to_string(model.num_layers));
  // The multi-token-prediction modules planner prices on the last stage
  // (TransformerConfig.mtp_num_layers; Megatron-LM --mtp-num-layers).
  if (model.mtp_layers > 0) arg("--mtp-num-layers", "model.mtp_num_layers", std::to_string(model.mtp_layers));
  arg("--seq-length", "model.seq_length", std::to_string(ts.seq_len));
  if (bridge) out.push_back(fmt::format("dataset.seq_length={}", ts.seq_len));
  arg("--micro-batch-size", "train.micro_batch_size", std::to_string(b.micro));
  arg("--global-batch-size", "train.global_batch_size", std::to_string(b.global));
  if (pc.recompute == Recompute::full) {
    arg("--recompute-granularity", "model.recompute_granularity", "full");
    arg("--recompute-method", "model.recompute_method", "uniform");
    arg("--recompute-num-layers", "model.recompute_num_layers", "1");
  } else if (pc.recompute == Recompute::selective) {
    arg("--recompute-granularity", "model.recompute_granularity", "selective");
    // Megatron-LM core_v0.19.0 --recompute-modules (nargs '*'); Megatron-Bridge
    // model.recompute_modules, a list (perf_recipes set it so).
    if (ts.selective == SelectivePolicy::megatron_attention &&
        ts.recompute_modules != module_bit(RecomputeModule::core_attn)) {
      std::string names = recompute_modules_label(ts.recompute_modules), list;
      if (ts.recompute_modules == 0) names.clear();
      for (char& ch : names)
        if (ch == ',') ch = ' ';
      if (bridge) {
        for (std::size_t i = 0, j; i < names.size(); i = j + 1) {
          j = names.find(' ', i);
          if (j == std::string::npos) j = names.size();
          list += fmt::format("{}\"{}\"", list.empty() ? "" : ",", names.substr(i, j - i));
        }
        out.push_back(fmt::format("'model.recompute_modules=[{}]'", list));
      } else {
        out.push_back(("--recompute-modules " + names));
      }
    }
  }
  // The DDP and distributed-optimizer flags wherever a gradient is reduced:
  // over DP x CP, or a MoE model's experts over EDP (reduces_gradients), which
  // Megatron-Core's distributed optimizer shards them over.
  if (reduces_gradients(model, pc)) {
    if (pc.zero_stage == 1) {
      flag("--use-distributed-optimizer", "ddp.use_distributed_optimizer");
      if (bridge) out.push_back("optimizer.use_distributed_optimizer=true");
    } else if (pc.zero_stage == 3 && !pc.reshard_after_forward) {
      // nemo refuses this case (framework.cpp). validate_args (core_v0.19.0
      // arguments.py) asserts for --use-torch-fsdp2: PP 1 and EP 1 and untied
      // embeddings (framework.cpp rules), no gradient-accumulation fusion
      // (on by default: --no-gradient-accumulation-fusion), --ckpt-format
      // torch_dist or torch_dcp (the default is torch_dist,
      // training/config/training_config.py CheckpointConfig.ckpt_format) and
      // CUDA_DEVICE_MAX_CONNECTIONS other than 1 (the note).
      flag("--use-torch-fsdp2", "ddp.use_torch_fsdp2");
      out.push_back("--torch-fsdp2-no-reshard-after-forward");
      out.push_back("--no-gradient-accumulation-fusion");
    } else if (pc.zero_stage >= 2) {
      flag("--use-megatron-fsdp", "ddp.use_megatron_fsdp");
      arg("--data-parallel-sharding-strategy", "ddp.data_parallel_sharding_strategy",
          pc.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
      // validate_args: 'Megatron-FSDP requires the `fsdp_dtensor` checkpointing format.'
      arg("--ckpt-format", "checkpoint.ckpt_format", "fsdp_dtensor");
      if (bridge)
        out.push_back("ddp.use_distributed_optimizer=true"), out.push_back("optimizer.use_distributed_optimizer=true");
    }
    // Hybrid sharding: the distributed optimizer (or Megatron-FSDP) in
    // instances of zero_shard ranks, all-reducing across them
    // (core_v0.19.0 arguments.py --num-distributed-optimizer-instances;
    // Megatron-Core DistributedDataParallelConfig.num_distributed_optimizer_instances).
    if (pc.zero_shard > 0)
      arg("--num-distributed-optimizer-instances", "ddp.num_distributed_optimizer_instances",
          std::to_string(zero_replicas(pc)));
    if (bridge) {
      // Both ways: a recipe's CommOverlapConfig would set its own (the note: megatron_notes).
      // The parameter all-gather of a sharded optimizer (ZeRO-1/2, and
      // Megatron-FSDP's ZeRO-3) is overlapped as the reduction is (dp_tail.cpp).
      const bool o = ts.overlap_grad_reduce;
      arg("", "ddp.overlap_grad_reduce", o ? "true" : "false");
      arg("", "ddp.overlap_param_gather", o && pc.zero_stage >= 1 ? "true" : "false");
    } else if (ts.overlap_grad_reduce) {
      out.push_back("--overlap-grad-reduce");
      if (pc.zero_stage == 1) out.push_back("--overlap-param-gather");
    }
  }
  // Megatron-LM only: framework.cpp check_precision_exportable refuses bf16
  // gradients for Megatron-Bridge.
  if (!bridge && ts.grad_bytes_per_param == 2 && reduce_bytes_per_param(ts) == 2 && reduces_gradients(model, pc))
    out.push_back("--grad-reduce-in-bf16");
  if (bridge && pc.tp > 1)
    arg("", "model.tp_comm_overlap", ts.tp_comm_overlap ? "true" : "false");
  else if (ts.tp_comm_overlap)
    out.push_back("--tp-comm-overlap");
  // Pipeline p2p overlap, as priced (overlaps_p2p). Megatron-LM overlaps it by
  // default in the interleaved schedule (--no-overlap-p2p-communication turns
  // it off; default since 4eeff55d1f, 2023-10-12); Megatron-Core's
  // ModelParallelConfig has it off, with batch_p2p_comm on, which must be off
  // to overlap (core_v0.19.0 model_parallel_config.py).
  // Megatron-Bridge: both ways with PP > 1 (a recipe's CommOverlapConfig
  // would set its own; the note: megatron_notes).
  if (!bridge && pc.pp > 1 && pc.virtual_stages > 1 && !overlaps_p2p(ts, pc))
    out.push_back("--no-overlap-p2p-communication");
  if (bridge && pc.pp > 1) {
    const bool o = overlaps_p2p(ts, pc);
    arg("", "model.overlap_p2p_comm", o ? "true" : "false");
    arg("", "model.batch_p2p_comm", o ? "false" : "true");
  }
  // core_v0.19.0 model_parallel_config.py: cross_entropy_loss_fusion, _fusion_impl.
  // Megatron-Bridge only: Megatron-LM's validate_args refuses the te
  // implementation (apply_framework refuses --te-cross-entropy there).
  if (bridge && ts.loss_kernel == LossKernel::te) {
    out.push_back("model.cross_entropy_loss_fusion=true");
    out.push_back("model.cross_entropy_fusion_impl=te");
  }
  if (bridge) {
    out.push_back(ts.dtype == DType::fp8 ? "mixed_precision=bf16_with_fp8_current_scaling_mixed"
                                         : "mixed_precision=bf16_mixed");
  } else {
    out.push_back("--bf16");
    // Per-tensor current scaling, as NeMo's bf16_with_fp8_current_scaling_mixed:
    // TransformerConfig.fp8_recipe defaults to 'delayed', which refuses
    // --recompute-modules layernorm and moe_act (transformer_config.py
    // __post_init__: 'Delayed scaling does not support moe_act and layernorm
    // recompute for fp8').
    if (ts.dtype == DType::fp8) out.push_back("--fp8-format hybrid"), out.push_back("--fp8-recipe tensorwise");
  }
  return out;
}

// What the Megatron-LM or Megatron-Bridge flags cannot carry, for the note.
std::vector<std::string> megatron_notes(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts,
                                        const ParallelConfig& pc, bool bridge) {
  std::vector<std::string> notes;
  const bool sharded = reduces_gradients(model, pc) && pc.zero_stage >= 2;
  const bool torch_fsdp2 = sharded && pc.zero_stage == 3 && !pc.reshard_after_forward;
  // core_v0.19.0 megatron/training/arguments.py validate_args.
  if (sharded && !torch_fsdp2)
    notes.emplace_back(
        "Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or > 1 (megatron/training/arguments.py validate_args)");
  if (torch_fsdp2)
    notes.emplace_back(
        "--use-torch-fsdp2 needs CUDA_DEVICE_MAX_CONNECTIONS unset or > 1 (megatron/training/arguments.py "
        "validate_args: 'FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value large than one')");
  // TP or CP before Blackwell (get_device_arch_version() < 10), outside
  // FSDP and the MoE all-to-all overlap (which only warn).
  if (!bridge && (pc.tp > 1 || pc.cp > 1) && !sharded && !(model.is_moe() && ts.overlap_a2a) &&
      hw.nccl_generation != NcclGeneration::blackwell)
    notes.emplace_back(
        "TP or CP > 1 needs CUDA_DEVICE_MAX_CONNECTIONS=1 on GPUs before Blackwell (megatron/training/arguments.py "
        "validate_args: 'Using tensor model parallelism or context parallelism require setting the environment "
        "variable CUDA_DEVICE_MAX_CONNECTIONS to 1')");
  if (bridge && ts.dtype == DType::fp8)
    notes.emplace_back(
        "mixed_precision=bf16_with_fp8_current_scaling_mixed keeps the first and last transformer layers in BF16 "
        "(first_last_layers_bf16, num_layers_at_start_in_bf16 = num_layers_at_end_in_bf16 = 1; "
        "src/megatron/bridge/training/mixed_precision.py), which planner prices in FP8");
  if (bridge) {
    // A recipe's CommOverlapConfig (cfg.comm_overlap; many perf recipes set
    // one, others leave None) overwrites the model.* and ddp.* overlap keys
    // with its own defaults unless comm_overlap.<field> is set
    // (src/megatron/bridge/training/comm_overlap.py CommOverlapConfig.setup,
    // _get_model_comm_overlap_cfgs, _get_optimizer_overlap_cfgs,
    // _override_user_cfgs). comm_overlap.* keys fail where it is None, so they
    // go to the note.
    std::vector<std::string> keys;
    auto key = [&](const char* field, bool v) { keys.push_back(fmt::format("comm_overlap.{}={}", field, v)); };
    if (pc.tp > 1) key("tp_comm_overlap", ts.tp_comm_overlap);
    if (pc.pp > 1) key("overlap_p2p_comm", overlaps_p2p(ts, pc)), key("batch_p2p_comm", !overlaps_p2p(ts, pc));
    if (model.is_moe()) key("overlap_moe_expert_parallel_comm", ts.overlap_a2a);
    if (reduces_gradients(model, pc))
      key("overlap_grad_reduce", ts.overlap_grad_reduce),
          key("overlap_param_gather", ts.overlap_grad_reduce && pc.zero_stage >= 1);
    if (!keys.empty()) {
      std::string list;
      for (const std::string& k : keys) list += (list.empty() ? "" : " ") + k;
      notes.push_back(
          fmt::format("a recipe that sets comm_overlap (CommOverlapConfig) overwrites the model.* and "
                      "ddp.* overlap keys above unless given as {} "
                      "(src/megatron/bridge/training/comm_overlap.py CommOverlapConfig.setup)",
                      list));
    }
  }
  return notes;
}

}  // namespace launch_detail

std::string megatron_layout_string(const PricedPlan& plan, std::int64_t mtp_layers) {
  const std::vector<std::int64_t> n = chunk_order(plan);
  std::vector<std::string> entries;
  for (std::size_t i = 0; i < n.size(); ++i) {
    std::string e = i == 0 ? "E" : "";
    if (n[i] == 1) e += "t";
    if (n[i] > 1) e += fmt::format("t*{}", n[i]);
    if (i + 1 == n.size()) {
      // The MTP modules after the last decoders, beside the loss, as planner
      // prices them (the last stage) and Megatron-Bridge's DeepSeek-V3 recipe
      // lays them out (v0.6.0 recipes/deepseek/h100/deepseek_v3.py
      // set_deepseek_v3_pipeline_model_parallel_layout: ["decoder"]*k + ["mtp"] + ["loss"]);
      // pipeline_parallel_layer_layout.py validate_layer_layout: m count = mtp_num_layers, all in one chunk, after
      // every decoder.
      if (mtp_layers == 1) e += "m";
      if (mtp_layers > 1) e += fmt::format("m*{}", mtp_layers);
      e += "L";
    }
    entries.push_back(e);
  }
  // Runs of equal entries as (x|)*k; the first (E) and last (L) entries are
  // unique, so a run is always followed by another entry.
  std::string out;
  for (std::size_t i = 0; i < entries.size();) {
    std::size_t j = i + 1;
    while (j < entries.size() && entries[j] == entries[i]) ++j;
    if (j - i > 1)
      out += fmt::format("({}|)*{},", entries[i], j - i);
    else
      out += entries[i] + (i + 1 < entries.size() ? "|" : "");
    i = j;
  }
  return out;
}

}  // namespace planner
