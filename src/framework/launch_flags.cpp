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

#include "framework/launch_parts.h"
#include "planner/model/labels.h"
#include "planner/model/moe_cost.h"
#include "planner/model/recompute_modules.h"
#include "planner/spec/input_error.h"

namespace planner {

namespace launch_detail {

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

}  // namespace launch_detail

namespace {

using namespace launch_detail;

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
