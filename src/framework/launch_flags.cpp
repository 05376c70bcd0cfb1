// launch_flags.h: one configuration written in each framework's own words.
// Every flag, field and key below was checked in the release framework.cpp
// cites (Megatron-LM core_v0.19.0 arguments.py and TransformerConfig /
// ModelParallelConfig fields; Megatron-Bridge v0.6.0 ConfigContainer and its
// Megatron-LM mapping page; torchtitan v0.2.2 job_config.py; DeepSpeed
// v0.19.5 runtime/constants.py, zero/config.py, tensor_parallel/config.py;
// MaxText maxtext-v0.2.4 base.yml).
#include "planner/framework/launch_flags.h"

#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/model/labels.h"
#include "planner/model/moe_cost.h"
#include "planner/model/recompute_modules.h"
#include "planner/spec/input_error.h"

namespace planner {

namespace {

// Layers of every chunk in Megatron's entry order: chunk c of stage s at c*p + s.
std::vector<std::int64_t> chunk_order(const PricedPlan& plan) {
  const std::int64_t p = plan.layout.stages, v = plan.virtual_stages;
  std::vector<std::int64_t> out(std::size_t(p * v));
  for (std::int64_t s = 0; s < p; ++s) {
    const std::vector<ChunkPlan> chunks = plan.chunks(s);
    for (std::int64_t c = 0; c < v; ++c) out[std::size_t(c * p + s)] = chunks[std::size_t(c)].layers;
  }
  return out;
}

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

// Lines joined as a shell command's continuation lines.
std::string continued(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? " \\\n" : "\n");
  return out;
}

std::string header(const FrameworkInfo& info, const ModelSpec& model, const HardwareProfile& hw,
                   const TrainingSpec& ts, const ParallelConfig& pc, const char* comment) {
  return fmt::format("{} {} {} ({}): {} on {} x {}, {}\n", comment, info.display_name, info.release, info.repository,
                     model.name, ts.num_gpus, hw.name, config_label(pc, 'c'));
}

struct Batch {
  std::int64_t global, micro, micro_batches;
};

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
      for (char& ch : names) if (ch == ',') ch = ' ';
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
      if (bridge) out.push_back("ddp.use_distributed_optimizer=true"), out.push_back("optimizer.use_distributed_optimizer=true");
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

std::string joined(const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& n : notes) out += (out.empty() ? "" : "; ") + n;
  return out;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + fmt::format("\"{}\"", names[i]);
  return out + "]";
}

std::string torchtitan_toml(const TrainingSpec& ts, const Evaluation& ev, const Batch& b) {
  const ParallelConfig& pc = ev.config;
  std::string out;
  if (ts.dtype == DType::fp8) out += "[model]\nconverters = [\"quantize.linear.float8\"]\n\n";
  out += fmt::format("[training]\nseq_len = {}\nglobal_batch_size = {}\nlocal_batch_size = {}\n\n", ts.seq_len,
                     b.global, pc.pp > 1 ? b.global / pc.dp : b.micro);
  const bool fsdp = pc.zero_stage == 3;
  // HSDP (parallel_dims.py): FSDP over dp_shard x cp inside each of the
  // dp_replicate groups; zero_shard spans whole CP groups.
  const std::int64_t replicas = fsdp ? zero_replicas(pc) : pc.dp;
  out += fmt::format("[parallelism]\ndata_parallel_replicate_degree = {}\ndata_parallel_shard_degree = {}\n", replicas,
                     pc.dp / replicas);
  if (fsdp)
    out += fmt::format("fsdp_reshard_after_forward = \"{}\"\n",
                       pc.reshard_after_forward == (pc.pp == 1) ? "default"
                       : pc.reshard_after_forward             ? "always"
                                                              : "never");
  out += fmt::format("tensor_parallel_degree = {}\n", pc.tp);
  if (ts.tp_comm_overlap) out += "enable_async_tensor_parallel = true\n";
  out += fmt::format("context_parallel_degree = {}\npipeline_parallel_degree = {}\n", pc.cp, pc.pp);
  if (pc.ep > 1) {  // job_config.py Parallelism: EP folded out of dp_shard x cp x tp (parallel_dims.py)
    out += fmt::format("expert_parallel_degree = {}\nexpert_tensor_parallel_degree = {}\n", pc.ep, pc.etp);
    if (ts.a2a == A2aBackend::deepep) out += "expert_parallel_comm_backend = \"deepep\"\n";
  }
  if (pc.pp > 1) {
    const char* schedule = pc.virtual_stages > 1 ? "Interleaved1F1B" : pc.schedule == Schedule::gpipe ? "GPipe" : "1F1B";
    out += fmt::format("pipeline_parallel_schedule = \"{}\"\npipeline_parallel_microbatch_size = {}\n", schedule,
                       b.micro);
    // Model parts in stage order: part c*p + s is chunk c of stage s (looped schedules).
    const std::vector<std::int64_t> n = chunk_order(ev.plan);
    out += "module_fqns_per_model_part = [\n";
    std::int64_t next = 0;
    for (std::size_t part = 0; part < n.size(); ++part) {
      std::vector<std::string> names;
      if (part == 0) names.emplace_back("tok_embeddings");
      for (std::int64_t i = 0; i < n[part]; ++i) names.push_back(fmt::format("layers.{}", next++));
      if (part + 1 == n.size()) names.emplace_back("norm"), names.emplace_back("output");
      out += "  " + quoted_list(names) + (part + 1 < n.size() ? ",\n" : "\n");
    }
    out += "]\n";
  }
  out += fmt::format("\n[activation_checkpoint]\nmode = \"{}\"\n", to_string(pc.recompute));
  if (pc.recompute == Recompute::selective)  // job_config.py ActivationCheckpoint.selective_ac_option
    out += fmt::format("selective_ac_option = \"{}\"\n", ts.selective == SelectivePolicy::torchtitan_op
                                                              ? std::string("op")
                                                              : std::to_string(ts.selective_every_n_layers));
  // compile.enable: async TP needs it (distributed/tensor_parallel.py); --torch-compile asks for it.
  if (ts.tp_comm_overlap || !ts.eager_elementwise)
    out += "\n[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n";
  return out;
}

LaunchFlags deepspeed_json(const TrainingSpec& ts, const Evaluation& ev, const Batch& b) {
  const ParallelConfig& pc = ev.config;
  nlohmann::ordered_json j;
  j["train_batch_size"] = b.global;
  j["train_micro_batch_size_per_gpu"] = b.micro;
  j["gradient_accumulation_steps"] = b.micro_batches;
  j["bf16"] = {{"enabled", true}};
  if (reduce_bytes_per_param(ts) == 4) j["communication_data_type"] = "fp32";  // runtime/constants.py
  j["zero_optimization"] = {{"stage", pc.zero_stage}, {"overlap_comm", ts.overlap_grad_reduce}};
  // Hybrid sharding as MiCS: ZeRO-3 partitioned within groups of
  // mics_shard_size ranks, replicated across them (deepspeed/runtime/zero/config.py).
  if (pc.zero_shard > 0) j["zero_optimization"]["mics_shard_size"] = pc.zero_shard;
  if (pc.tp > 1) j["tensor_parallel"] = {{"autotp_size", pc.tp}};
  LaunchFlags out{j.dump(2) + "\n", ""};
  if (pc.pp > 1)
    out.note += fmt::format(
        "in the training script: PipelineModule(layers=..., num_stages={}, partition_method='uniform') over the "
        "transformer layers alone ({}), so stages hold {} layers",
        pc.pp, "partition_method='type:<DecoderLayer class>' when the embedding and head are in the list",
        split_label(ev.plan));
  if (pc.recompute == Recompute::full)
    out.note += std::string(out.note.empty() ? "" : "; ") +
                (pc.pp > 1 ? "PipelineModule(activation_checkpoint_interval=1)"
                           : "deepspeed.checkpointing.checkpoint around each transformer layer");
  // AutoTP: without an mpu DeepSpeedConfig counts every rank as data
  // parallel (v0.19.5 runtime/config.py DeepSpeedConfig.__init__ world_size =
  // dist.get_world_size()), and _batch_assertion then refuses
  // train_batch_size = micro x GAS x DP; docs/_tutorials/autotp-training.md
  // passes mpu.
  if (pc.tp > 1)
    out.note += std::string(out.note.empty() ? "" : "; ") +
                fmt::format(
                    "deepspeed.initialize(..., mpu=...) with the TP and DP groups (TP {}, DP {}): without an "
                    "mpu DeepSpeedConfig takes the world size ({}) as the data-parallel size and refuses "
                    "train_batch_size (deepspeed/runtime/config.py _batch_assertion)",
                    pc.tp, pc.dp, ts.num_gpus);
  // MiCS partitions only parameters built under MiCS_Init (zero/mics.py
  // MiCS_Optimizer: "please use deepspeed.zero.MiCS_Init instead").
  if (pc.zero_shard > 0)
    out.note += std::string(out.note.empty() ? "" : "; ") +
                "build the model under deepspeed.zero.MiCS_Init(config_dict_or_path=...), not zero.Init "
                "(deepspeed/runtime/zero/mics.py MiCS_Optimizer asserts the MiCS groups on the parameters)";
  return out;
}

std::int64_t gcd64(std::int64_t a, std::int64_t b) { return std::gcd(a, b); }

// MaxText's per_device_batch_size for `sequences` over `devices`, in the
// shortest form that reads back as the same double; MaxText takes
// int(num_devices * per_device_batch_size) sequences (maxtext-v0.2.4
// src/maxtext/configs/types.py calculate_global_batch_sizes), so a quotient
// that does not multiply back exactly would train on fewer: an InputError.
std::string per_device_batch(std::int64_t sequences, std::int64_t devices) {
  const double v = double(sequences) / double(devices);
  if (double(devices) * v != double(sequences))
    throw InputError("--global-batch",
                     fmt::format("maxtext: per_device_batch_size {}/{} = {} reads back as int({} x {}) = {} "
                                 "sequences, not {} (src/maxtext/configs/types.py calculate_global_batch_sizes)",
                                 sequences, devices, v, devices, v, std::int64_t(double(devices) * v), sequences));
  return fmt::format("{}", v);
}

std::string maxtext_lines(const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts,
                          const Evaluation& ev, const Batch& b) {
  const ParallelConfig& pc = ev.config;
  const std::int64_t n = ts.num_gpus, domain = hw.tiers.empty() ? 0 : hw.tiers[0].size;
  // Slices (ICI domains) joined by DCN: DP crosses them first, then PP.
  std::int64_t slices = 1;
  if (domain > 0 && n > domain) {
    if (n % domain)
      throw InputError("--framework", fmt::format("maxtext: {} chips are not whole slices of {} ({} ICI domain)", n,
                                                  domain, hw.name));
    slices = n / domain;
  }
  // DCN axes take the slices in the order DP, PP, CP; TP stays inside one.
  // Hybrid sharding (ZeRO-3 with zero_shard): the data axis holds the
  // replicas and takes the slices first, the fsdp axis the shard group.
  const bool fsdp = pc.zero_stage == 3;
  const std::int64_t replicas = fsdp ? zero_replicas(pc) : 1;
  // The shard group's chips (TP innermost, no CP or PP: framework.cpp) fit in
  // one slice or span whole slices; otherwise the fsdp and data axes cannot
  // hold the groups as priced.
  if (const std::int64_t span = zero_shard_size(pc) * pc.tp;
      replicas > 1 && domain > 0 && slices > 1 && domain % span != 0 && span % domain != 0)
    throw InputError("--zero-shard",
                     fmt::format("maxtext: a shard group of {} chips ({} ranks x TP {}) neither fits a slice of {} "
                                 "chips evenly nor spans whole slices, so the fsdp and data axes cannot hold it",
                                 span, zero_shard_size(pc), pc.tp, domain));
  std::int64_t rest = slices;
  const std::int64_t dcn_replicas = gcd64(replicas, rest);
  rest /= dcn_replicas;
  const std::int64_t dcn_dp = gcd64(pc.dp / replicas, rest);
  rest /= dcn_dp;
  const std::int64_t dcn_pp = gcd64(pc.pp, rest);
  rest /= dcn_pp;
  const std::int64_t dcn_cp = gcd64(pc.cp, rest);
  rest /= dcn_cp;
  if (rest != 1)
    throw InputError("--framework", fmt::format("maxtext: {} slices of {} chips cannot be split over DP {}, PP {} and "
                                                "CP {} (the DCN axes); TP stays inside a slice",
                                                slices, domain, pc.dp, pc.pp, pc.cp));
  const char* tensor_axis = pc.sequence_parallel ? "tensor_sequence" : "tensor";
  std::vector<std::string> out;
  out.push_back(fmt::format("ici_{}_parallelism={}", fsdp ? "fsdp" : "data", pc.dp / replicas / dcn_dp));
  if (!fsdp) out.push_back("ici_fsdp_parallelism=1");
  if (replicas > 1) out.push_back(fmt::format("ici_data_parallelism={}", replicas / dcn_replicas));
  out.push_back(fmt::format("ici_{}_parallelism={}", tensor_axis, pc.tp));
  out.push_back(fmt::format("ici_context_parallelism={}", pc.cp / dcn_cp));
  out.push_back(fmt::format("ici_pipeline_parallelism={}", pc.pp / dcn_pp));
  out.push_back(fmt::format("dcn_{}_parallelism={}", fsdp ? "fsdp" : "data", dcn_dp));
  if (fsdp) out.push_back(fmt::format("dcn_data_parallelism={}", dcn_replicas));
  out.push_back(fmt::format("dcn_pipeline_parallelism={}", dcn_pp));
  out.push_back(fmt::format("dcn_context_parallelism={}", dcn_cp));
  if (pc.zero_stage == 1) out.push_back("shard_optimizer_over_data=true");
  out.push_back(fmt::format("max_target_length={}", ts.seq_len));
  if (pc.pp > 1) {
    out.push_back(fmt::format("per_device_batch_size={}", per_device_batch(b.global, n)));
    out.push_back(fmt::format("num_pipeline_microbatches={}", b.micro_batches));
    out.push_back(fmt::format("num_layers_per_pipeline_stage={}", model.num_layers / (pc.pp * pc.virtual_stages)));
    out.push_back(fmt::format("num_pipeline_repeats={}", pc.virtual_stages));
  } else {
    out.push_back(fmt::format("per_device_batch_size={}", per_device_batch(b.micro * pc.dp, n)));
    out.push_back(fmt::format("gradient_accumulation_steps={}", b.micro_batches));
  }
  // maxtext-v0.2.4 src/maxtext/layers/decoders.py Decoder.get_remat_policy:
  // "minimal_with_context" saves everything (no recomputation), "minimal"
  // everything but the attention context (Megatron's attention-core
  // recomputation; framework.cpp refuses the other selective policies),
  // "full" (like "none") saves nothing.
  out.push_back(fmt::format("remat_policy={}", pc.recompute == Recompute::full        ? "full"
                                               : pc.recompute == Recompute::selective ? "minimal"
                                                                                      : "minimal_with_context"));
  if (ts.dtype == DType::fp8) out.push_back("quantization=fp8");
  return continued(out);
}

}  // namespace

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

std::string moe_export_problem(Framework f, const ModelSpec& model) {
  const FrameworkInfo& info = framework_info(f);
  if (!model.is_moe()) return "";
  for (std::size_t i = 0; i < info.rules.size(); ++i)
    if (info.rules[i].kind == RuleKind::no_moe)
      return fmt::format("{} {} cannot express {}: {}", to_string(f), info.release, model.name,
                         rule_text(info, int(i)));
  return "";
}

LaunchFlags launch_flags(Framework f, const ModelSpec& model, const HardwareProfile& hw, const TrainingSpec& ts_in,
                         const Evaluation& ev, RuleContext rule_ctx) {
  const TrainingSpec ts = training_for(ts_in, ev);  // the search's per-layout recompute modules and overlap
  const FrameworkInfo& info = framework_info(f);
  const ParallelConfig& pc = ev.config;
  if (const int r = broken_rule(info, model, pc, ts, rule_ctx); r >= 0)
    throw InputError("--framework", fmt::format("{} {} cannot express {}: {}", to_string(f), info.release,
                                                config_label(pc, 'c'), rule_text(info, r)));
  if (ev.plan.layout.stages < 1 || ev.plan.virtual_stages < 1 || !ev.plan.layout.feasible)
    throw InputError("--framework", fmt::format("{}: the layout {} has no valid stage split to export", to_string(f),
                                                config_label(pc, 'c')));
  check_precision_exportable(info, ts);
  const Batch b{ts.global_batch_sequences, pc.micro_batch_size, ev.plan.micro_batches};
  switch (f) {
    case Framework::megatron:
    case Framework::nemo: {
      const bool bridge = f == Framework::nemo;
      return {header(info, model, hw, ts, pc, "#") + continued(megatron_lines(model, ts, ev, b, bridge)),
              joined(megatron_notes(model, hw, ts, pc, bridge))};
    }
    case Framework::torchtitan:
      return {header(info, model, hw, ts, pc, "#") + torchtitan_toml(ts, ev, b), ""};
    case Framework::deepspeed: {
      LaunchFlags out = deepspeed_json(ts, ev, b);
      const std::string h = header(info, model, hw, ts, pc, "");
      out.note = h.substr(1, h.size() - 2) + (out.note.empty() ? "" : "; " + out.note);  // JSON has no comments
      return out;
    }
    case Framework::maxtext:
      return {header(info, model, hw, ts, pc, "#") + maxtext_lines(model, hw, ts, ev, b), ""};
  }
  return {};
}

}  // namespace planner
