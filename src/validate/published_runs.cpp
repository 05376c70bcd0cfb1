// Mapping rows of the measured-runs dataset (docs/published_runs.md) onto the
// planner's specs. Rows are written by people from papers and READMEs, so the
// configuration fields mix numbers and free text ("full (implied: ...)",
// "False (TP=1)", "interleaved (count not stated)"); each field is read by a
// small documented rule, and whatever a row leaves unknown is either searched
// (micro-batch size, interleaving, recomputation, ZeRO stage) or named as the
// reason the row is skipped.
#include "planner/validate/published_runs.h"

#include "validate/bridge_recipes.h"
#include "validate/moe_runs.h"
#include "validate/row_fields.h"
#include "validate/row_text.h"
#include "validate/row_words.h"
#include "validate/stack_defaults.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/model/model_math.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"
#include "planner/spec/names.h"

namespace planner {

using nlohmann::json;

namespace {

using row_text::contains;
using row_text::lower;

using row_text::field;
using row_text::text;
using namespace row_words;
using namespace row_fields;

// The software stack the row's source names; DeepSpeed (Megatron-DeepSpeed
// included) also by its sharding or notes.
row_words::SourceStack stack_of(const json& row, const std::string& source) {
  return source_stack(source, text(row, "zero_or_fsdp") + " " + text(row, "notes") + " " + text(row, "model_name"));
}

FfnKind parse_ffn(const std::string& s_in) {
  const std::string s = lower(s_in);
  if (contains(s, "swiglu") || contains(s, "silu")) return FfnKind::swiglu;
  if (contains(s, "geglu")) return FfnKind::geglu;
  if (contains(s, "squared") || contains(s, "relu2") || contains(s, "relu^2") || contains(s, "relu²"))
    return FfnKind::squared_relu;
  if (contains(s, "relu")) return FfnKind::relu;
  if (contains(s, "gelu")) return FfnKind::gelu;
  throw RowError{fmt::format("ffn_type: expected swiglu, geglu, gelu, relu or squared-relu, got '{}'", s_in)};
}

// The architecture, from the row's own fields (not by model name). Returns the
// row's sequence length.
std::int64_t map_model(const json& row, const std::string& notes, MeasuredRun& r) {
  const std::string ffn_text = text(row, "ffn_type");
  if (ffn_text.empty()) throw RowError{"ffn_type: missing"};
  const FfnKind ffn = parse_ffn(ffn_text);
  // GPT-2/3 family (GELU MLP): LayerNorm, biases, dropout, learned positions,
  // tied embeddings (Radford et al. 2019; Brown et al. 2020; Megatron-LM GPT).
  // Later designs (gated or ReLU-family MLPs: Llama, Nemotron, MaxText):
  // RMSNorm, no biases, no dropout, RoPE, untied. Optional row fields
  // (norm, bias, dropout, tied_embeddings, position_embedding) override.
  const bool gpt = ffn == FfnKind::gelu;
  const std::int64_t seq_len = required_positive(row, "seq_len", 100'000'000);
  json mj = {{"schema_version", 1},
             {"name", r.model_name.empty() ? r.id : r.model_name},
             {"num_layers", required_positive(row, "num_layers")},
             {"hidden_size", required_positive(row, "hidden_size")},
             {"ffn_hidden_size", required_positive(row, "ffn_hidden_size")},
             {"ffn_type", std::string(to_string(ffn))},
             {"num_attention_heads", required_positive(row, "num_attention_heads")},
             {"norm", gpt ? "layernorm" : "rmsnorm"},
             {"bias", gpt},
             {"dropout", gpt},
             {"tied_embeddings", gpt},
             {"position_embedding", gpt ? "learned" : "rope"},
             {"default_seq_len", seq_len},
             {"default_global_batch_tokens", seq_len}};
  mj["num_kv_heads"] = integer(row, "num_kv_heads").value_or(mj["num_attention_heads"].get<std::int64_t>());
  if (const auto hd = integer(row, "head_dim")) mj["head_dim"] = *hd;
  if (const auto v = integer(row, "vocab_size")) {
    mj["vocab_size"] = *v;
  } else if (r.scope == MeasurementScope::layer) {
    mj["vocab_size"] = 1;  // a one-layer measurement has no embedding or output layer
  } else {
    throw RowError{"vocab_size: missing"};
  }
  for (const char* key : {"norm", "position_embedding"})
    if (const json* v = field(row, key)) mj[key] = *v;
  // Learned positions (the GPT family's default, or stated) cover the row's
  // sequence unless the row gives the table's length.
  if (mj["position_embedding"] == "learned") {
    const std::int64_t positions = integer(row, "max_position_embeddings").value_or(seq_len);
    if (positions < seq_len)
      throw RowError{fmt::format("max_position_embeddings: expected at least seq_len {} (learned positions), got {}",
                                 seq_len, positions)};
    mj["max_position_embeddings"] = positions;
  }
  for (const char* key : {"bias", "dropout", "tied_embeddings"})
    if (const json* v = field(row, key)) mj[key] = *v;
  if (!field(row, "tied_embeddings") && !gpt && contains(notes, "tied") && !contains(notes, "untied")) {
    mj["tied_embeddings"] = true;
    r.assumptions.push_back("tied embeddings (from the row's notes)");
  }
  try {
    r.model = model_from_json(mj, "row");
  } catch (const InputError& e) {
    throw RowError{e.message()};
  }
  return seq_len;
}

// What the row states itself, over the stacks' defaults: the optional fields
// of docs/published_runs.md and the words of its scope and notes.
void apply_row_fields(const json& row, const std::string& scope_text, const std::string& notes, MeasuredRun& r) {
  TrainingSpec& ts = r.training;
  if (const auto g = number(row, "grad_reduce_bytes")) ts.grad_reduce_bytes_per_param = *g;
  override_flag(row, "zero3_recompute_regather", ts.zero3_recompute_regather);
  if (const json* v = field(row, "norm_kernel")) {  // "fused" or "composite" (eager RMSNorm before torch 2.9)
    const std::string k = v->is_string() ? v->get<std::string>() : "";
    if (k != "fused" && k != "composite")
      throw RowError{fmt::format("norm_kernel: expected \"fused\" or \"composite\", got {}", v->dump())};
    ts.eager_composite_rmsnorm = k == "composite";
  }
  bool compiled = !ts.eager_elementwise;
  override_flag(row, "torch_compile", compiled);
  ts.eager_elementwise = !compiled;
  if (contains(scope_text, "not overlapped")) ts.overlap_grad_reduce = false;
  if (contains(notes, "overlap_p2p")) ts.overlap_p2p = true;
  override_name(row, "attention_kernel", ts.attention);
  override_name(row, "loss_kernel", ts.loss_kernel);
  if (const json* v = field(row, "train_metric_losses")) {
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0 || v->get<std::int64_t>() > 8)
      throw RowError{fmt::format("train_metric_losses: expected an integer from 0 to 8, got {}", v->dump())};
    ts.train_metric_losses = int(v->get<std::int64_t>());
  }
  if (const auto g = number(row, "grad_bytes")) ts.grad_bytes_per_param = *g;
  override_flag(row, "overlap_grad_reduce", ts.overlap_grad_reduce);
  override_flag(row, "overlap_p2p", ts.overlap_p2p);
  // Megatron --tp-comm-overlap (NeMo launcher ub_tp_comm_overlap, Megatron-Bridge
  // comm_overlap.tp_comm_overlap): the row's recipe says; TrainingSpec::tp_comm_overlap.
  override_flag(row, "tp_comm_overlap", ts.tp_comm_overlap);
}

// The run: GPUs, batch, precision and the software stack.
void map_training(const json& row, const std::string& scope_text, const std::string& notes, std::int64_t seq_len,
                  MeasuredRun& r) {
  TrainingSpec& ts = r.training;
  ts.num_gpus = required_positive(row, "num_gpus", std::int64_t(1) << 24);
  ts.seq_len = seq_len;
  ts.global_batch_sequences = required_positive(row, "global_batch_size", 1'000'000'000);
  // "fp8", "FP8-CS", "MXFP8", torchao's "Float8" ("no Float8" is bf16).
  const std::string precision = lower(text(row, "precision"));
  ts.dtype = affirms(precision, "fp8") || affirms(precision, "float8") ? DType::fp8 : DType::bf16;

  // Software stack. Before 2023 Megatron-LM had no fused (flash) attention
  // (FlashAttention: Dao et al., June 2022; Megatron-LM/TE integration 2023),
  // kept fp32 main gradients (Narayanan et al. 2021 §4; Korthikanti et al. 2022)
  // and all-reduced gradients after the backward pass (Korthikanti et al.
  // 2022 §6.3 states it). Rows may say so explicitly with the optional fields
  // attention_kernel, grad_bytes, overlap_grad_reduce, overlap_p2p.
  const int year = source_year(r.source);
  const row_words::SourceStack stack = stack_of(row, r.source);
  const bool legacy_stack = year > 0 && year <= 2022;
  if (legacy_stack) {
    ts.attention = AttentionKernel::unfused;
    ts.grad_bytes_per_param = 4;
    ts.overlap_grad_reduce = false;
    r.assumptions.push_back(fmt::format(
        "{} software stack: unfused attention, fp32 main gradients, gradient reduction after the backward pass", year));
  }
  if (stack.megatron_lm && !legacy_stack) stack_defaults::apply_megatron_lm(row, notes, r);
  // Megatron-LM's backward TP collectives beside the column-parallel GEMMs
  // (TrainingSpec::tp_bwd_overlap) arrived in 2021-09 (commit 16c90445e7,
  // --async-tensor-model-parallel-allreduce), after the 2021 rows ran;
  // Megatron-DeepSpeed kept the synchronous copy_to_tensor_model_parallel_region
  // (bigscience-workshop/Megatron-DeepSpeed megatron/mpu/layers.py), and
  // torchtitan's TP has none. The optional row field tp_bwd_overlap overrides.
  if ((year > 0 && year <= 2021) || stack.deepspeed || stack.torchtitan) {
    ts.tp_bwd_overlap = false;
    if (integer(row, "tp").value_or(1) > 1)
      r.assumptions.push_back(year > 0 && year <= 2021 ? "Megatron-LM before 2021-09: backward TP all-reduce exposed"
                                                       : "backward TP collectives exposed (no async launch)");
  }
  override_flag(row, "tp_bwd_overlap", ts.tp_bwd_overlap);
  if (stack.torchtitan) stack_defaults::apply_torchtitan(row, year, precision, r);
  if (stack.llm_foundry) stack_defaults::apply_llm_foundry(r);
  // NVIDIA's NeMo recipes overlap TP communication with the GEMMs wherever TP
  // runs with sequence parallelism: ub_tp_comm_overlap true in the recipes of
  // the DGX-Cloud benchmarks (NVIDIA/dgxc-benchmarking v24.11.1
  // llama3.1/llama3.1_70b.yaml:129, llama3.1_405b.yaml:135,
  // nemotron/nemotron4-15b-synth.yaml:167, nemo_megatron/gpt3_175b_hydra.yaml:119)
  // and the NeMo launcher's (NeMo-Framework-Launcher llama3_1_70b.yaml:140,
  // nemotron_15b.yaml:158). Rows that state SP on; the row field tp_comm_overlap overrides.
  if (stack.nemo && integer(row, "tp").value_or(1) > 1 && boolean(row, "sequence_parallel").value_or(false)) {
    ts.tp_comm_overlap = true;
    r.assumptions.push_back("NeMo recipe: TP communication overlapped with the GEMMs (ub_tp_comm_overlap)");
  }
  bridge_recipes::apply(row, r);  // Megatron-Bridge's performance scripts (bridge_recipes.cpp)
  // DeepSpeed ZeRO-3 reduces in communication_data_type, the fp16 model
  // dtype by default (runtime/zero/stage3.py), and its submodule hooks
  // gather the weights again for the recomputed forward
  // (runtime/zero/partitioned_param_coordinator.py). Optional row fields
  // grad_reduce_bytes and zero3_recompute_regather override.
  if (const std::string zero = text(row, "zero_or_fsdp");
      stack.deepspeed && parse_zero(zero) == 3 && row_words::names(zero, "zero")) {
    ts.grad_reduce_bytes_per_param = 2;
    ts.zero3_recompute_regather = true;
    ts.zero3_gather = Zero3Gather::submodule;
    r.assumptions.push_back(
        "DeepSpeed ZeRO-3: gradients reduced in fp16, weights gathered again for the recomputed forward, one "
        "submodule's weights at a time");
  }
  apply_row_fields(row, scope_text, notes, r);
  if (const json* v = field(row, "hardware")) {
    if (!v->is_string()) throw RowError{fmt::format("hardware: expected a profile name, got {}", v->dump())};
    r.hardware = v->get<std::string>();
  }
}

// The layout: the degrees the row gives, and the knobs it leaves to the planner.
void map_layout(const json& row, MeasuredRun& r) {
  const TrainingSpec& ts = r.training;
  SearchPins& p = r.pins;
  p.tp = integer(row, "tp").value_or(1);
  p.pp = integer(row, "pp").value_or(1);
  p.cp = integer(row, "cp").value_or(1);
  // Each degree is at most num_gpus (<= 2^24), so every partial product stays below 2^48.
  for (auto [name, v] : {std::pair{"tp", *p.tp}, {"pp", *p.pp}, {"cp", *p.cp}})
    if (v < 1 || v > ts.num_gpus)
      throw RowError{fmt::format("{}: expected an integer from 1 to num_gpus {}, got {}", name, ts.num_gpus, v)};
  const std::int64_t model_parallel = std::min(*p.tp * *p.pp, ts.num_gpus + 1) * *p.cp;
  if (const auto dp = integer(row, "dp")) {
    if (*dp < 1 || *dp > ts.num_gpus)
      throw RowError{fmt::format("dp: expected an integer from 1 to num_gpus {}, got {}", ts.num_gpus, *dp)};
    p.dp = *dp;
  } else if (ts.num_gpus % model_parallel == 0) {
    p.dp = ts.num_gpus / model_parallel;
    r.assumptions.push_back("dp = gpus / (tp*pp*cp)");
  }
  if (!p.dp || model_parallel > ts.num_gpus || model_parallel * *p.dp != ts.num_gpus)
    throw RowError{fmt::format("layout does not multiply out: tp {} x cp {} x pp {} x dp {} != num_gpus {}", *p.tp,
                               *p.cp, *p.pp, p.dp ? fmt::format("{}", *p.dp) : "?", ts.num_gpus)};
  if (const auto mbs = integer(row, "micro_batch_size", true)) {
    if (*mbs < 1 || *mbs > ts.global_batch_sequences)
      throw RowError{fmt::format("micro_batch_size: expected an integer from 1 to global_batch_size {}, got {}",
                                 ts.global_batch_sequences, *mbs)};
    p.micro_batch_size = *mbs;
  } else {
    r.chosen.push_back("micro-batch size");
  }
  if (*p.pp == 1) {
    p.virtual_stages = 1;
  } else if (const auto v = integer(row, "virtual_pipeline_stages", true)) {
    if (*v < 1 || *v > r.model.num_layers)
      throw RowError{fmt::format("virtual_pipeline_stages: expected an integer from 1 to num_layers {}, got {}",
                                 r.model.num_layers, *v)};
    p.virtual_stages = *v;
  } else if (stack_of(row, r.source).deepspeed) {
    // DeepSpeed's pipeline engine (Megatron-DeepSpeed included) runs one
    // chunk per stage: deepspeed/runtime/pipe/schedule.py TrainSchedule.
    p.virtual_stages = 1;
    r.assumptions.push_back("DeepSpeed pipeline engine: 1F1B without virtual stages (TrainSchedule)");
  } else {
    r.chosen.push_back("interleaving");
  }
  if (*p.tp > 1 && stack_of(row, r.source).maxtext) {
    // MaxText shards the activations between layers over the tensor axis
    // (base.yml logical_axis_rules: activation_embed -> tensor; the same rule
    // in the 2024 MaxText/configs/base.yml): split element-wise work and an
    // all-gather / reduce-scatter per matmul pair, what SP prices.
    p.sequence_parallel = true;
    r.assumptions.push_back("MaxText TP: activations sharded over the tensor axis (activation_embed), priced as SP");
  } else if (const auto sp = boolean(row, "sequence_parallel"))
    p.sequence_parallel = *sp && *p.tp > 1;
  else if (*p.tp == 1)
    p.sequence_parallel = false;
  else
    r.chosen.push_back("sequence parallelism");
  if (const auto rc = parse_recompute(text(row, "activation_recompute")))
    p.recompute = *rc;
  else if (r.scope == MeasurementScope::step)
    r.chosen.push_back("recomputation");
  else
    p.recompute = Recompute::none;
  if (const auto z = parse_zero(text(row, "zero_or_fsdp")))
    p.zero_stage = *z;
  else
    r.chosen.push_back("ZeRO stage");
  if (const auto s = integer(row, "zero_shard")) {
    if (*s < 1 || *s > kMaxGpus) throw RowError{fmt::format("zero_shard: expected 1 to {}, got {}", kMaxGpus, *s)};
    p.zero_shard = *s;
  } else {
    r.shard_per_domain = shards_per_domain(text(row, "zero_or_fsdp"));
  }
}

// What was measured, and the FLOP convention of its TFLOP/s or MFU.
void map_measured(const json& row, MeasuredRun& r) {
  r.step_time_s = number(row, "step_time_s");
  r.tflops_per_gpu = number(row, "tflops_per_gpu");
  r.mfu = number(row, "mfu");
  r.tokens_per_sec_per_gpu = number(row, "tokens_per_sec_per_gpu");
  if (r.tokens_per_sec_per_gpu && !(*r.tokens_per_sec_per_gpu > 0))
    throw RowError{"tokens_per_sec_per_gpu: expected a positive number"};
  r.convention_text = text(row, "reported_flop_convention");
  r.convention = parse_flop_convention(r.convention_text, &r.stated_flops_per_sequence);
  if (const json* v = field(row, "flop_convention")) {
    const std::string c = v->is_string() ? v->get<std::string>() : "";
    bool found = false;
    for (FlopConvention k : {FlopConvention::none, FlopConvention::narayanan_eq3, FlopConvention::korthikanti_eq7,
                             FlopConvention::palm, FlopConvention::palm_mha, FlopConvention::megatron,
                             FlopConvention::six_nd})  // "stated" comes with flops_per_sequence
      if (c == to_string(k)) r.convention = k, found = true;
    if (!found)
      throw RowError{fmt::format(
          "flop_convention: expected none, narayanan_eq3, korthikanti_eq7, palm, palm_mha, megatron or six_nd, got {}",
          v->dump())};
  }
  if (const auto f = number(row, "flops_per_sequence")) {
    r.convention = FlopConvention::stated;
    r.stated_flops_per_sequence = *f;
  }
  if (!r.step_time_s && !r.tokens_per_sec_per_gpu && !r.tflops_per_gpu && !r.mfu)
    throw RowError{"nothing measured: step_time_s, tokens_per_sec_per_gpu, tflops_per_gpu and mfu are all missing"};
  if (r.convention == FlopConvention::stated && !(r.stated_flops_per_sequence > 0))
    throw RowError{"flops_per_sequence: expected a positive number"};
  if (r.convention == FlopConvention::stated &&
      !std::isfinite(r.stated_flops_per_sequence * double(r.training.global_batch_sequences)))
    throw RowError{
        fmt::format("flops_per_sequence: expected a count whose product with the step's {} sequences is "
                    "finite, got {}",
                    r.training.global_batch_sequences, r.stated_flops_per_sequence)};
  if (!r.step_time_s && !r.tokens_per_sec_per_gpu &&
      (r.convention == FlopConvention::none || r.convention == FlopConvention::unknown))
    throw RowError{fmt::format("no step_time_s, and the FLOP convention of its TFLOP/s or MFU is not recognised: '{}'",
                               r.convention_text)};
}

// A row field that states a knob its own layout cannot have would be
// ignored: the row is not evaluated, and says why (as evaluate refuses the
// same flags).
void check_fields_apply(const json& row, const MeasuredRun& r) {
  const SearchPins& p = r.pins;
  auto stated = [&](const char* key) {
    const json* v = field(row, key);
    return v && v->is_boolean() && v->get<bool>();
  };
  if (stated("tp_comm_overlap") && *p.tp == 1)
    throw RowError{"tp_comm_overlap: overlaps TP communication, but the row has tp 1"};
  if (stated("overlap_p2p") && *p.pp == 1)
    throw RowError{"overlap_p2p: overlaps pipeline send/recv, but the row has pp 1"};
  if (stated("zero3_recompute_regather") && p.zero_stage && !p.zero_stage.allows(3))
    throw RowError{"zero3_recompute_regather: applies to ZeRO-3, but the row's zero_or_fsdp is not ZeRO-3"};
  if (const auto v = integer(row, "virtual_pipeline_stages", true); v && *v > 1 && *p.pp == 1)
    throw RowError{fmt::format("virtual_pipeline_stages: {} virtual stages need pp > 1, but the row has pp 1", *v)};
  if (p.zero_shard && p.zero_stage && !p.zero_stage.allows(1) && !p.zero_stage.allows(2) && !p.zero_stage.allows(3))
    throw RowError{"zero_shard: shards ZeRO's states, but the row's zero_or_fsdp has no ZeRO"};
}

MeasuredRun map_row(const json& row) {
  MeasuredRun r;
  r.id = text(row, "id");
  r.source = text(row, "source");
  r.model_name = text(row, "model_name");
  r.gpu_type = text(row, "gpu_type");
  if (r.gpu_type.empty()) throw RowError{"gpu_type: missing"};
  for (const char* key : {"source", "source_table", "notes", "config_provenance", "value_provenance"})
    r.site_text += text(row, key) + "\n";
  const std::string scope_text = lower(text(row, "measurement_scope"));
  if (contains(scope_text, "one transformer layer") || contains(scope_text, "single transformer layer") ||
      contains(scope_text, "per transformer layer"))
    r.scope = MeasurementScope::layer;
  const std::string notes = lower(text(row, "notes"));

  const std::int64_t seq_len = map_model(row, notes, r);
  map_training(row, scope_text, notes, seq_len, r);
  map_layout(row, r);
  check_fields_apply(row, r);
  map_measured(row, r);
  return r;
}

}  // namespace

std::string source_label(const std::string& source) {
  std::size_t end = source.size();
  for (const char* stop : {",", " (", " '", " \""}) end = std::min(end, source.find(stop));
  std::string label = source.substr(0, end);
  if (label.size() > 40) label = label.substr(0, 37) + "...";
  return label.empty() ? std::string("(no source)") : label;
}

RunRow map_published_run(const json& row, std::size_t index) {
  if (moe_runs::is_moe_row(row)) return moe_runs::map_moe_row(row, index);
  RunRow out;
  if (!row.is_object()) {
    out.id = fmt::format("#{}", index);
    out.skip_reason = "expected a JSON object";
    return out;
  }
  out.id = text(row, "id");
  if (out.id.empty()) out.id = fmt::format("#{}", index);
  out.source = text(row, "source");
  out.model_name = text(row, "model_name");
  try {
    out.run = map_row(row);
    out.run->id = out.id;
  } catch (const RowError& e) {
    out.skip_reason = e.message;
  }
  return out;
}

std::vector<RunRow> read_published_runs(const json& j, const std::string& origin) {
  const json* list = &j;
  if (j.is_object() && j.contains("runs")) list = &j.at("runs");
  if (!list->is_array())
    throw InputError(origin, "expected a JSON list of measured runs (or an object with a \"runs\" list)");
  std::vector<RunRow> rows;
  rows.reserve(list->size());
  std::map<std::string, std::size_t> first_at;  // id -> position of its first row
  for (std::size_t i = 0; i < list->size(); ++i) {
    RunRow row = map_published_run((*list)[i], i);
    // An id names one run: a second row with it is a copy or a typo, and the
    // report could not tell the two apart.
    if (const auto [it, fresh] = first_at.emplace(row.id, i); !fresh) {
      row.run.reset();
      row.skip_reason = fmt::format("id: {} is also the id of row #{} (positions count from 0)", row.id, it->second);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace planner
