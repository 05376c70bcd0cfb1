#include "config_flags.h"

#include "commands.h"
#include "parse_errors.h"
#include "pin_parse.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "planner/io/atomic_write.h"
#include "planner/model/evaluate.h"
#include "planner/model/labels.h"
#include "planner/model/recompute_modules.h"
#include "planner/model/selective_policy.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"
#include "planner/spec/names.h"

namespace planner::cli {

namespace {
std::string& command_line_storage() {
  static std::string text;
  return text;
}
}  // namespace

void set_command_line(int argc, const char* const* argv) {
  std::string& text = command_line_storage();
  text.clear();
  for (int i = 0; i < argc; ++i) {
    std::string a = i == 0 ? std::string("planner") : std::string(argv[i]);
    const bool quote = a.empty() || a.find_first_of(" \t'\"$") != std::string::npos;
    if (quote) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    text += (i ? " " : "") + a;
  }
}

const std::string& command_line() { return command_line_storage(); }

std::string batch_tokens_range() {
  return fmt::format("a positive multiple of the sequence length, at most {} sequences", kMaxGlobalBatchSequences);
}

void add_common(CLI::App* app, CommonFlags& f, bool gpus_required) {
  app->add_option("--model,-m", f.model, "model name, alias or path to a model JSON (planner list models)")->required();
  app->add_option("--hardware", f.hardware, "hardware profile name, alias or JSON path (default dgx-h100)");
  auto* g =
      integer_range(app->add_option("--gpus,-n", f.gpus, "number of GPUs"), fmt::format("1 to {} GPUs", kMaxGpus));
  if (gpus_required) g->required();
  // The bounds training_from checks.
  integer_range(app->add_option("--seq-len", f.seq_len, "sequence length (default: the model's)"),
                fmt::format("1 to {}", kMaxSeqLen));
  integer_range(app->add_option("--global-batch", f.global_batch, "global batch in sequences"),
                fmt::format("1 to {} sequences", kMaxGlobalBatchSequences));
  integer_range(
      app->add_option("--global-batch-tokens", f.global_batch_tokens, "global batch in tokens (default: the model's)"),
      batch_tokens_range());
  app->add_option("--dtype", f.dtype, "bf16 or fp8")->check(CLI::IsMember(name_list<DType>()));
  app->add_option("--attention", f.attention,
                  "flash (the chip's fastest fused kernel), flash2 (FlashAttention-2: PyTorch SDPA's default before "
                  "torch 2.11) or unfused")
      ->check(CLI::IsMember(name_list<AttentionKernel>()));
  app->add_option("--grad-bytes", f.grad_bytes, "bytes per gradient element (2 bf16, 4 fp32 main grads)");
  app->add_option("--grad-reduce-bytes", f.grad_reduce_bytes,
                  "bytes per gradient element on the wire of gradient reductions (0: --grad-bytes; 4: FSDP2 "
                  "reduce_dtype float32, torchtitan's default)");
  app->add_flag("--zero3-recompute-regather", f.zero3_recompute_regather,
                "ZeRO-3 with full recompute: the recomputed forward gathers the weights again (DeepSpeed ZeRO-3); "
                "search keeps to ZeRO-3 and full recompute unless pinned");
  app->add_option("--optimizer-bytes", f.optimizer_bytes,
                  "optimizer bytes per parameter (12: fp32 master + Adam m, v)");
  app->add_option("--weight-bytes", f.weight_bytes, "bytes per weight (2: bf16)");
  app->add_flag("--no-overlap-grad-reduce", f.no_overlap_grad_reduce, "DP gradient reduction after the backward pass");
  app->add_flag("--overlap-p2p", f.overlap_p2p, "pipeline send/recv overlapped with compute");
  app->add_flag("--torch-compile", f.torch_compile,
                "torchtitan with torch.compile (compile.enable): element-wise ops fused; needs --framework torchtitan "
                "(default there: eager)");
  app->add_flag("--te-cross-entropy", f.te_cross_entropy,
                "the loss as Transformer Engine's fused cross-entropy (Megatron-Core cross_entropy_loss_fusion with "
                "cross_entropy_fusion_impl te, as Megatron-Bridge's performance recipes set; Megatron-LM "
                "core_v0.19.0 refuses it, so not with --framework megatron); default: Megatron's unfused fp32 "
                "cross-entropy");
  app->add_option("--loss-kernel", f.loss_kernel,
                  "the loss kernel: unfused (Megatron's fp32 cross-entropy, the default), te (the same as "
                  "--te-cross-entropy) or flash-attn (flash-attn's fused cross-entropy, as llm-foundry runs it)")
      ->check(CLI::IsMember(name_list<LossKernel>()));
  app->add_flag("--tp-overlap", f.tp_overlap,
                "TP all-gather / reduce-scatter overlapped with the GEMMs (Megatron --tp-comm-overlap; needs SP)");
  app->add_option("--a2a", f.a2a, "MoE all-to-all backend: nccl or deepep (DeepEP kernels)")
      ->check(CLI::IsMember(name_list<A2aBackend>()));
  app->add_option("--moe-imbalance", f.moe_imbalance,
                  "MoE: busiest expert rank's tokens over the mean (>= 1; 1 = force-balanced routing)");
  app->add_option("--capacity-factor", f.capacity_factor,
                  "MoE: expert capacity factor (tokens above capacity dropped, inputs padded to it); 0 = dropless");
  app->add_option("--overlap-a2a", f.overlap_a2a,
                  "MoE: dispatch/combine all-to-alls overlapped with another micro-batch's compute (true/false)");
  app->add_option("--selective-ac", f.selective_ac,
                  "what --recompute selective recomputes: megatron (the attention core; default), op (torchtitan "
                  "op-level SAC) or layer:N (torchtitan: every N-th layer in full); --framework torchtitan: layer:2");
  app->add_option("--format", f.format, "table, json or csv")->check(CLI::IsMember(name_list<Format>()));
  app->add_option("--html", f.html, "also write a self-contained HTML page (charts, breakdowns) to FILE")
      ->type_name("FILE");
}

void check_html_path(const CommonFlags& f, std::initializer_list<std::pair<const char*, std::string>> others) {
  if (f.html && f.html->empty()) throw InputError("--html", "expected a file name, got an empty path");
  if (f.html && *f.html == "-") throw InputError("--html", "expected a file name; the page is not written to stdout");
  std::vector<std::pair<const char*, std::string>> outputs;
  if (f.html) outputs.emplace_back("--html", *f.html);
  // An empty --svg or --trace is refused by the parser (parse_errors.h); here
  // it means the flag was not given.
  for (const auto& o : others) {
    if (o.second == "-") throw InputError(o.first, "expected a file name; this output is not written to stdout");
    if (!o.second.empty()) outputs.push_back(o);
  }
  // Every pair: one output must not overwrite another ("x.svg" and "./x.svg" too).
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (same_file(outputs[i].second, outputs[j].second))
        throw InputError(outputs[i].first, fmt::format("{} names the same file ({} and {})", outputs[j].first,
                                                       outputs[i].second, outputs[j].second));
}

HtmlPageInfo html_page_info() { return {page_command_line(command_line()), PLANNER_VERSION}; }

void write_html(const std::string& path, const std::string& page) {
  write_file_atomically(path, page);
  std::cerr << fmt::format("planner: wrote {} ({:.0f} KiB)\n", path, double(page.size()) / 1024.0);
}

void add_config(CLI::App* app, ConfigFlags& c, bool lists) {
  const std::string more = lists ? "; a list (4,8) or a range (1-16) searches those values" : "";
  const std::string more_names = lists ? "; a list (none,full) searches those" : "";
  const std::string more_bools = lists ? "; a list (false,true) searches both" : "";
  app->add_option("--tp", c.tp, "tensor-parallel degree" + more);
  app->add_option("--cp", c.cp, "context-parallel degree" + more);
  app->add_option("--pp", c.pp, "pipeline-parallel degree" + more);
  app->add_option("--dp", c.dp, "data-parallel degree" + more);
  app->add_option("--mbs,--micro-batch-size", c.mbs, "micro-batch size (sequences)" + more);
  app->add_option("--vpp,--virtual-stages", c.vpp, "virtual pipeline stages per GPU (interleaving)" + more);
  app->add_option("--recompute", c.recompute, "none, selective or full" + more_names);
  app->add_option("--zero", c.zero, "ZeRO stage 0-3" + more);
  app->add_option("--reshard-after-forward", c.reshard_after_forward,
                  "ZeRO-3: free gathered weights after the forward (true, FSDP2 default) or keep them until the "
                  "backward (false); implies --zero 3" +
                      more_bools);
  app->add_option("--zero-shard", c.zero_shard,
                  "hybrid sharding (HSDP): ZeRO's shards span groups of N of the DP*CP ranks (whole CP groups, the "
                  "innermost DP ranks) and are replicated across the groups, which all-reduce the sharded gradients; "
                  "needs --zero 1-3 on a dense model; default: one group of all DP*CP ranks" +
                      std::string(lists ? "; a list (8,64) searches those (not searched when not given)" : ""));
  app->add_option("--sp", c.sp, "sequence parallelism (true/false)" + more_bools);
  app->add_option("--ep", c.ep,
                  "expert-parallel degree (MoE models; MoE parallel folding: EP*ETP divides TP*CP*DP)" + more);
  app->add_option("--etp", c.etp, "expert tensor-parallel degree (MoE models)" + more);
  app->add_option("--recompute-modules", c.recompute_modules,
                  "Megatron's selective recomputation modules, comma-separated: core_attn, layernorm, mla_up_proj, "
                  "moe_act, mlp, moe, shared_experts; implies --recompute selective" +
                      std::string(lists ? " (the search otherwise picks a set per MoE layout)" : ""));
}

// The flags' values were checked against the same tables (CLI::IsMember).
Format parse_format(const std::string& s) { return parse_name<Format>(s).value_or(Format::table); }

std::vector<std::string> table_or_json() { return name_list(names_for({Format::table, Format::json})); }

Recompute parse_recompute(const std::string& s) { return parse_name<Recompute>(s).value_or(Recompute::none); }

void require_positive(const char* flag, std::optional<std::int64_t> v) {
  if (v && *v < 1) throw InputError(flag, fmt::format("expected a positive integer, got {}", *v));
}

void check_a2a(const TrainingSpec& ts, const HardwareProfile& hw) {
  // DeepEP's kernels run on NVIDIA GPUs over NVLink and RDMA (deepseek-ai/DeepEP
  // README: SM90 / SM100; intranode also SM80): not on a TPU torus or an
  // AMD profile.
  const bool nvidia = hw.nccl_generation == NcclGeneration::ampere || hw.nccl_generation == NcclGeneration::hopper ||
                      hw.nccl_generation == NcclGeneration::blackwell;
  if (ts.a2a == A2aBackend::deepep && (!nvidia || hw.tiers.empty() || hw.tiers[0].topology != Topology::switched))
    throw InputError("--a2a", fmt::format("deepep runs on NVIDIA NVLink/RDMA clusters; {} ({}) is not one: use --a2a nccl",
                                          hw.name, hw.chip_name));
}

void check_dtype(const TrainingSpec& ts, const HardwareProfile& hw) {
  check_a2a(ts, hw);
  // GPU kernels and overlaps a TPU torus does not run (layer_comm.cpp prices
  // XLA's collective matmul there whenever SP is on).
  if (hw.tiers[0].topology == Topology::torus) {
    if (ts.attention == AttentionKernel::flash2)
      throw InputError("--attention", fmt::format("flash2 is FlashAttention-2's CUDA kernels; {} is a TPU (XLA's "
                                                  "fused attention is --attention flash)",
                                                  hw.name));
    if (ts.tp_comm_overlap)
      throw InputError("--tp-overlap",
                       fmt::format("is Transformer Engine's userbuffers overlap on GPUs (Megatron --tp-comm-overlap); "
                                   "on {}'s torus XLA's collective matmul overlaps TP whenever SP is on",
                                   hw.name));
  }
  if (!(hw.peak_flops_per_s[std::size_t(ts.dtype)] > 0)) {
    std::string dtype(to_string(ts.dtype));
    std::transform(dtype.begin(), dtype.end(), dtype.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    throw InputError("--dtype", fmt::format("{} has no {} (profile {} gives no {} peak FLOP/s); use --dtype bf16 or "
                                            "another --hardware",
                                            hw.chip_name, dtype, hw.name, to_string(ts.dtype)));
  }
}

// --selective-ac megatron | op | layer:N. torchtitan's op policy is priced
// from a dense block's matmuls (selective_policy.h): refused for MoE and MLA.
void parse_selective_ac(const std::string& text, const ModelSpec& model, TrainingSpec& ts) {
  if (!parse_selective_policy(text, ts))
    throw InputError("--selective-ac",
                     fmt::format("expected megatron, op or layer:N (N a positive integer), got '{}'", text));
  if (ts.selective == SelectivePolicy::torchtitan_every_nth_layer && ts.selective_every_n_layers > model.num_layers)
    throw InputError("--selective-ac",
                     fmt::format("{} recomputes none of {}'s {} layers (torchtitan checkpoints every N-th block); "
                                 "give N of at most {}, or --recompute none",
                                 text, model.name, model.num_layers, model.num_layers));
  if (ts.selective == SelectivePolicy::torchtitan_op && (model.is_moe() || model.is_mla()))
    throw InputError("--selective-ac", fmt::format("op is priced for dense attention blocks only; {} has {} (use "
                                                   "layer:N or megatron)",
                                                   model.name, model.is_moe() ? "experts" : "MLA"));
}

TrainingSpec training_from(const CommonFlags& f, const ModelSpec& model) {
  if (f.gpus < 1) throw InputError("--gpus", fmt::format("expected a positive number of GPUs, got {}", f.gpus));
  if (f.gpus > kMaxGpus) throw InputError("--gpus", fmt::format("expected at most {} GPUs, got {}", kMaxGpus, f.gpus));
  require_positive("--seq-len", f.seq_len);
  require_positive("--global-batch", f.global_batch);
  require_positive("--global-batch-tokens", f.global_batch_tokens);
  if (f.global_batch && f.global_batch_tokens)
    throw InputError("--global-batch", "give the global batch in sequences or in tokens, not both");
  TrainingSpec ts;
  ts.num_gpus = f.gpus;
  ts.seq_len = f.seq_len.value_or(model.default_seq_len);
  if (ts.seq_len > kMaxSeqLen)
    throw InputError("--seq-len", fmt::format("expected at most {}, got {}", kMaxSeqLen, ts.seq_len));
  // A learned position table has one row a position, so it bounds the
  // sequence (Megatron-LM asserts max_position_embeddings >= seq_length,
  // megatron/training/arguments.py); RoPE models carry no table.
  if (model.position == PositionKind::learned && ts.seq_len > model.max_position_embeddings)
    throw InputError("--seq-len",
                     fmt::format("expected at most the model's max_position_embeddings {} (learned positions), got {}",
                                 model.max_position_embeddings, ts.seq_len));
  if (f.global_batch) {
    ts.global_batch_sequences = *f.global_batch;
  } else {
    const std::int64_t tokens = f.global_batch_tokens.value_or(model.default_global_batch_tokens);
    if (tokens % ts.seq_len != 0 && f.global_batch_tokens)
      throw InputError("--global-batch-tokens",
                       fmt::format("expected a multiple of the sequence length {}, got {}", ts.seq_len, tokens));
    // The model's default batch at another --seq-len: whole sequences, never
    // fewer than one (a default below one sequence is no batch to round up to).
    if (tokens < ts.seq_len)
      throw InputError("--global-batch",
                       fmt::format("{}'s default batch of {} tokens is less than one sequence of {}; give "
                                   "--global-batch or --global-batch-tokens",
                                   model.name, tokens, ts.seq_len));
    ts.global_batch_sequences = tokens / ts.seq_len;
  }
  if (ts.global_batch_sequences > kMaxGlobalBatchSequences)
    throw InputError(
        f.global_batch ? "--global-batch" : "--global-batch-tokens",
        fmt::format("expected at most {} sequences, got {}", kMaxGlobalBatchSequences, ts.global_batch_sequences));
  ts.dtype = parse_name<DType>(f.dtype).value_or(DType::bf16);
  ts.attention = parse_name<AttentionKernel>(f.attention).value_or(AttentionKernel::flash);
  for (auto [flag, v] : {std::pair{"--grad-bytes", f.grad_bytes},
                         {"--grad-reduce-bytes", f.grad_reduce_bytes},
                         {"--optimizer-bytes", f.optimizer_bytes},
                         {"--weight-bytes", f.weight_bytes}})
    if (v && !(*v >= 0 && *v <= kMaxBytesPerParam))
      throw InputError(flag,
                       fmt::format("expected a number of bytes between 0 and {:g}, got {}", kMaxBytesPerParam, *v));
  ts.grad_bytes_per_param = f.grad_bytes.value_or(ts.grad_bytes_per_param);
  ts.grad_reduce_bytes_per_param = f.grad_reduce_bytes.value_or(ts.grad_reduce_bytes_per_param);
  ts.zero3_recompute_regather = f.zero3_recompute_regather;
  ts.optimizer_bytes_per_param = f.optimizer_bytes.value_or(ts.optimizer_bytes_per_param);
  ts.weight_bytes_per_param = f.weight_bytes.value_or(ts.weight_bytes_per_param);
  ts.overlap_grad_reduce = !f.no_overlap_grad_reduce;
  ts.overlap_p2p = f.overlap_p2p;
  ts.tp_comm_overlap = f.tp_overlap;
  if (f.loss_kernel) ts.loss_kernel = *parse_name<LossKernel>(*f.loss_kernel);
  if (f.te_cross_entropy) {
    if (f.loss_kernel && ts.loss_kernel != LossKernel::te)
      throw InputError("--te-cross-entropy",
                       fmt::format("is --loss-kernel te; --loss-kernel {} contradicts it", *f.loss_kernel));
    ts.loss_kernel = LossKernel::te;
  }
  for (auto [flag, given] : {std::pair{"--a2a", f.a2a.has_value()},
                             {"--moe-imbalance", f.moe_imbalance.has_value()},
                             {"--capacity-factor", f.capacity_factor.has_value()},
                             {"--overlap-a2a", f.overlap_a2a.has_value()}})
    if (given && !model.is_moe())
      throw InputError(flag, fmt::format("applies to MoE models only; {} is dense (no experts)", model.name));
  if (f.a2a) ts.a2a = parse_name<A2aBackend>(*f.a2a).value_or(A2aBackend::nccl);
  if (f.moe_imbalance) {
    if (!(*f.moe_imbalance >= 1.0 && *f.moe_imbalance <= 1e3))
      throw InputError("--moe-imbalance", fmt::format("expected a load ratio from 1 to 1000, got {}", *f.moe_imbalance));
    ts.moe_imbalance = *f.moe_imbalance;
  }
  if (f.capacity_factor) {
    if (!(*f.capacity_factor >= 0.0 && *f.capacity_factor <= 1e3))
      throw InputError("--capacity-factor",
                       fmt::format("expected 0 (dropless) or a positive factor up to 1000, got {}", *f.capacity_factor));
    ts.capacity_factor = *f.capacity_factor;
  }
  if (f.capacity_factor && f.moe_imbalance && *f.capacity_factor > 0)
    throw InputError("--moe-imbalance",
                     "with --capacity-factor the experts' inputs are padded to capacity, so the imbalance does not "
                     "set the time; give one or the other");
  ts.overlap_a2a = f.overlap_a2a.value_or(false);
  if (f.selective_ac) parse_selective_ac(*f.selective_ac, model, ts);
  return ts;
}


SearchPins pins_from(const ConfigFlags& c, bool lists, const char* command) {
  const PinParse parse{lists, command};
  SearchPins pins;
  pins.tp = parse.integers("--tp", c.tp, 1, kMaxGpus);
  pins.cp = parse.integers("--cp", c.cp, 1, kMaxGpus);
  pins.pp = parse.integers("--pp", c.pp, 1, kMaxGpus);
  pins.dp = parse.integers("--dp", c.dp, 1, kMaxGpus);
  pins.micro_batch_size = parse.integers("--mbs", c.mbs, 1, kMaxGlobalBatchSequences);
  pins.virtual_stages = parse.integers("--vpp", c.vpp, 1, kMaxGpus);
  pins.recompute = parse.names<Recompute>("--recompute", c.recompute);
  const Pin<std::int64_t> zero = parse.integers("--zero", c.zero, 0, 3);
  std::vector<int> stages;
  for (std::int64_t z : zero.values()) stages.push_back(int(z));
  if (!stages.empty()) pins.zero_stage = Pin<int>(stages);
  if (c.reshard_after_forward) {
    if (zero && !(zero.single() && *zero == 3))
      throw InputError("--reshard-after-forward",
                       fmt::format("applies to ZeRO-3 only (FSDP), but --zero is {}", *c.zero));
    pins.zero_stage = 3;
    pins.reshard_after_forward = parse.booleans("--reshard-after-forward", c.reshard_after_forward);
  }
  if (c.zero_shard) {
    // A group of one rank shards nothing (evaluate.cpp zero_shard_valid).
    pins.zero_shard = parse.integers("--zero-shard", c.zero_shard, 2, kMaxGpus);
    if (!pins.zero_stage && lists) {
      pins.zero_stage = Pin<int>(std::vector<int>{1, 2, 3});  // ZeRO 0 shards nothing
    } else if (!pins.zero_stage) {
      throw InputError("--zero-shard", "sets the group ZeRO shards over; give the stage too (--zero 1, 2 or 3)");
    } else if (!pins.zero_stage.allows(1) && !pins.zero_stage.allows(2) && !pins.zero_stage.allows(3)) {
      throw InputError("--zero-shard", fmt::format("sets the group ZeRO shards over, but --zero is {}: ZeRO 0 "
                                                   "shards nothing (give --zero 1, 2 or 3)",
                                                   *c.zero));
    }
  }
  pins.sequence_parallel = parse.booleans("--sp", c.sp);
  if (c.recompute_modules) {
    // Megatron: --recompute-modules applies under --recompute-granularity selective.
    if (!pins.recompute) {
      pins.recompute = Recompute::selective;
    } else if (!pins.recompute.allows(Recompute::selective)) {
      throw InputError("--recompute-modules", fmt::format("chooses what selective recomputation recomputes, but "
                                                          "--recompute is {} (give --recompute selective)",
                                                          *c.recompute));
    }
  }
  pins.recompute_modules = c.recompute_modules.has_value();
  pins.ep = parse.integers("--ep", c.ep, 1, kMaxGpus);
  pins.etp = parse.integers("--etp", c.etp, 1, kMaxGpus);
  return pins;
}

ParallelConfig config_from(const ConfigFlags& c, const TrainingSpec& ts, const char* command) {
  SearchPins pins = pins_from(c, false, command);
  const std::int64_t tp = pins.tp.value_or(1), cp = pins.cp.value_or(1), pp = pins.pp.value_or(1);
  for (auto [flag, v] : {std::pair{"--tp", tp}, {"--cp", cp}, {"--pp", pp}})
    if (v > ts.num_gpus)
      throw InputError(flag, fmt::format("expected at most the GPU count {}, got {}", ts.num_gpus, v));
  // Each factor is at most the GPU count, but their product may not fit in
  // 64 bits (2^24 cubed): divide instead of multiplying.
  const std::int64_t N = ts.num_gpus;
  if (!pins.dp) {
    if (N % tp != 0 || (N / tp) % cp != 0 || (N / tp / cp) % pp != 0)
      throw InputError(
          "--gpus", fmt::format("{} GPUs are not divisible by tp*cp*pp = {}*{}*{}; give --dp or change the layout", N,
                                tp, cp, pp));
    pins.dp = N / tp / cp / pp;
  }
  check_tp_overlap(ts, pins);
  check_zero3_regather(ts, pins);
  check_zero_shard(pins, N);
  ParallelConfig pc = pinned_config(pins);
  if (ts.zero3_recompute_regather && (pc.zero_stage != 3 || pc.recompute != Recompute::full))
    throw InputError("--zero3-recompute-regather",
                     fmt::format("applies to ZeRO-3 with full recomputation, but the layout has ZeRO {} and "
                                 "recompute {} (give --zero 3 --recompute full)",
                                 pc.zero_stage, to_string(pc.recompute)));
  if (ts.tp_comm_overlap && pc.tp == 1)
    throw InputError("--tp-overlap", "overlaps TP communication, but the layout has TP 1 (give --tp)");
  pc.schedule = parse_name<Schedule>(c.schedule).value_or(Schedule::one_f_one_b);
  if (!c.schedule.empty() && pc.pp == 1)
    throw InputError("--schedule", fmt::format("{} schedules a pipeline, but the layout has PP 1 (its micro-batches "
                                               "run forward and backward in turn); give --pp or leave --schedule out",
                                               c.schedule));
  if (pc.sequence_parallel && pc.tp == 1)
    throw InputError("--sp", "sequence parallelism splits TP's activations, but the layout has TP 1 (give --tp)");
  if (ts.overlap_p2p && pc.pp == 1)
    throw InputError("--overlap-p2p", "overlaps pipeline send/recv, but the layout has PP 1 (give --pp)");
  if (ts.overlap_p2p && ts.overlap_p2p_interleaved_only && pc.virtual_stages == 1)
    throw InputError("--overlap-p2p",
                     "Megatron-Core overlaps pipeline send/recv only in the interleaved schedule (megatron/core/"
                     "pipeline_parallel/schedules.py: \"Non-interleaved pipeline parallelism does not support "
                     "overlapping p2p communication\"); give --vpp > 1 or leave --overlap-p2p out");
  // An interleaved layout runs interleaved 1F1B whatever --schedule says: say
  // so rather than ignore the flag.
  if (!c.schedule.empty() && pc.virtual_stages > 1)
    throw InputError("--schedule", fmt::format("{} cannot run {} virtual stages per GPU (--vpp {} runs interleaved "
                                               "1F1B); give --vpp 1 or leave --schedule out",
                                               c.schedule, pc.virtual_stages, pc.virtual_stages));
  return pc;
}

}  // namespace planner::cli
