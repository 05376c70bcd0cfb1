// planner: the thin driver. Parses flags with CLI11, calls one library entry
// point per subcommand, prints what the report views render. Exit codes:
// 0 success, 1 bad input or no feasible result, 2 usage error.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "planner/catalog.h"
#include "planner/evaluate.h"
#include "planner/input_error.h"
#include "planner/json_io.h"
#include "planner/report.h"
#include "planner/search.h"

using namespace planner;

namespace {

struct CommonFlags {
  std::string model;
  std::string hardware = "dgx-h100";
  std::int64_t gpus = 0;
  std::optional<std::int64_t> seq_len, global_batch, global_batch_tokens;
  std::string dtype = "bf16";
  std::string attention = "flash";
  double grad_bytes = 2, optimizer_bytes = 12, weight_bytes = 2;
  bool no_overlap_grad_reduce = false, overlap_p2p = false;
  std::string format = "table";
};

struct ConfigFlags {
  std::optional<std::int64_t> tp, cp, pp, dp, mbs, vpp;
  std::optional<std::string> recompute;
  std::optional<int> zero;
  std::optional<bool> sp;
  std::string schedule = "1f1b";
};

void add_common(CLI::App* app, CommonFlags& f, bool gpus_required) {
  app->add_option("--model,-m", f.model, "model name, alias or path to a model JSON (planner list models)")->required();
  app->add_option("--hardware", f.hardware, "hardware profile name, alias or JSON path (default dgx-h100)");
  auto* g = app->add_option("--gpus,-n", f.gpus, "number of GPUs");
  if (gpus_required) g->required();
  app->add_option("--seq-len", f.seq_len, "sequence length (default: the model's)");
  app->add_option("--global-batch", f.global_batch, "global batch in sequences");
  app->add_option("--global-batch-tokens", f.global_batch_tokens, "global batch in tokens (default: the model's)");
  app->add_option("--dtype", f.dtype, "bf16 or fp8")->check(CLI::IsMember({"bf16", "fp8"}));
  app->add_option("--attention", f.attention, "flash or unfused attention kernels")->check(CLI::IsMember({"flash", "unfused"}));
  app->add_option("--grad-bytes", f.grad_bytes, "bytes per gradient element (2 bf16, 4 fp32 main grads)");
  app->add_option("--optimizer-bytes", f.optimizer_bytes, "optimizer bytes per parameter (12: fp32 master + Adam m, v)");
  app->add_option("--weight-bytes", f.weight_bytes, "bytes per weight (2: bf16)");
  app->add_flag("--no-overlap-grad-reduce", f.no_overlap_grad_reduce, "DP gradient reduction after the backward pass");
  app->add_flag("--overlap-p2p", f.overlap_p2p, "pipeline send/recv overlapped with compute");
  app->add_option("--format", f.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
}

void add_config(CLI::App* app, ConfigFlags& c) {
  app->add_option("--tp", c.tp, "tensor-parallel degree");
  app->add_option("--cp", c.cp, "context-parallel degree");
  app->add_option("--pp", c.pp, "pipeline-parallel degree");
  app->add_option("--dp", c.dp, "data-parallel degree");
  app->add_option("--mbs,--micro-batch-size", c.mbs, "micro-batch size (sequences)");
  app->add_option("--vpp,--virtual-stages", c.vpp, "virtual pipeline stages per GPU (interleaving)");
  app->add_option("--recompute", c.recompute, "none, selective or full")->check(CLI::IsMember({"none", "selective", "full"}));
  app->add_option("--zero", c.zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  app->add_option("--sp", c.sp, "sequence parallelism (true/false)");
}

Format parse_format(const std::string& s) { return s == "json" ? Format::json : s == "csv" ? Format::csv : Format::table; }

Recompute parse_recompute(const std::string& s) {
  return s == "full" ? Recompute::full : s == "selective" ? Recompute::selective : Recompute::none;
}

void require_positive(const char* flag, std::optional<std::int64_t> v) {
  if (v && *v < 1) throw InputError(flag, fmt::format("expected a positive integer, got {}", *v));
}

TrainingSpec training_from(const CommonFlags& f, const ModelSpec& m) {
  if (f.gpus < 1) throw InputError("--gpus", fmt::format("expected a positive number of GPUs, got {}", f.gpus));
  if (f.gpus > (std::int64_t(1) << 24)) throw InputError("--gpus", fmt::format("expected at most 16777216 GPUs, got {}", f.gpus));
  require_positive("--seq-len", f.seq_len);
  require_positive("--global-batch", f.global_batch);
  require_positive("--global-batch-tokens", f.global_batch_tokens);
  if (f.global_batch && f.global_batch_tokens)
    throw InputError("--global-batch", "give the global batch in sequences or in tokens, not both");
  TrainingSpec ts;
  ts.num_gpus = f.gpus;
  ts.seq_len = f.seq_len.value_or(m.default_seq_len);
  if (ts.seq_len > 100'000'000) throw InputError("--seq-len", fmt::format("expected at most 100000000, got {}", ts.seq_len));
  if (f.global_batch) {
    ts.global_batch_sequences = *f.global_batch;
  } else {
    const std::int64_t tokens = f.global_batch_tokens.value_or(m.default_global_batch_tokens);
    if (tokens % ts.seq_len != 0 && f.global_batch_tokens)
      throw InputError("--global-batch-tokens",
                       fmt::format("expected a multiple of the sequence length {}, got {}", ts.seq_len, tokens));
    ts.global_batch_sequences = std::max<std::int64_t>(1, tokens / ts.seq_len);
  }
  if (ts.global_batch_sequences > 1'000'000'000)
    throw InputError("--global-batch", fmt::format("expected at most 1e9 sequences, got {}", ts.global_batch_sequences));
  ts.dtype = f.dtype == "fp8" ? DType::fp8 : DType::bf16;
  ts.attention = f.attention == "unfused" ? AttentionKernel::unfused : AttentionKernel::flash;
  for (auto [flag, v] : {std::pair{"--grad-bytes", f.grad_bytes}, {"--optimizer-bytes", f.optimizer_bytes}, {"--weight-bytes", f.weight_bytes}})
    if (!(v >= 0 && v <= 64)) throw InputError(flag, fmt::format("expected a number of bytes between 0 and 64, got {}", v));
  ts.grad_bytes_per_param = f.grad_bytes;
  ts.optimizer_bytes_per_param = f.optimizer_bytes;
  ts.weight_bytes_per_param = f.weight_bytes;
  ts.overlap_grad_reduce = !f.no_overlap_grad_reduce;
  ts.overlap_p2p = f.overlap_p2p;
  return ts;
}

int run_evaluate(const CommonFlags& f, const ConfigFlags& c, bool explain) {
  const ModelSpec m = find_model(f.model);
  const HardwareProfile hw = find_hardware(f.hardware);
  const TrainingSpec ts = training_from(f, m);
  for (auto [flag, v] : {std::pair{"--tp", c.tp}, {"--cp", c.cp}, {"--pp", c.pp}, {"--dp", c.dp}, {"--mbs", c.mbs}, {"--vpp", c.vpp}})
    require_positive(flag, v);
  ParallelConfig pc;
  pc.tp = c.tp.value_or(1);
  pc.cp = c.cp.value_or(1);
  pc.pp = c.pp.value_or(1);
  const std::int64_t rest = pc.tp * pc.cp * pc.pp;
  if (c.dp) pc.dp = *c.dp;
  else if (ts.num_gpus % rest == 0) pc.dp = ts.num_gpus / rest;
  else throw InputError("--gpus", fmt::format("{} GPUs are not divisible by tp*cp*pp = {}; give --dp or change the layout", ts.num_gpus, rest));
  pc.micro_batch_size = c.mbs.value_or(1);
  pc.virtual_stages = c.vpp.value_or(1);
  pc.recompute = parse_recompute(c.recompute.value_or("none"));
  pc.zero_stage = c.zero.value_or(0);
  pc.sequence_parallel = c.sp.value_or(pc.tp > 1);
  pc.schedule = c.schedule == "gpipe" ? Schedule::gpipe : Schedule::one_f_one_b;
  Explain ex;
  const Evaluation ev = evaluate(m, hw, pc, ts, explain ? &ex : nullptr);
  std::cout << render_evaluation(ev, RunContext{m, hw, ts}, parse_format(f.format));
  if (explain && parse_format(f.format) == Format::table) std::cout << render_explain(ex);
  return ev.feasible() ? 0 : 1;
}

int run_search(const CommonFlags& f, const ConfigFlags& c, std::size_t top) {
  const ModelSpec m = find_model(f.model);
  const HardwareProfile hw = find_hardware(f.hardware);
  SearchSpec spec;
  spec.training = training_from(f, m);
  for (auto [flag, v] : {std::pair{"--tp", c.tp}, {"--cp", c.cp}, {"--pp", c.pp}, {"--dp", c.dp}, {"--mbs", c.mbs}, {"--vpp", c.vpp}})
    require_positive(flag, v);
  if (top < 1 || top > 10000) throw InputError("--top", fmt::format("expected 1 to 10000, got {}", top));
  spec.top_k = top;
  spec.pins.tp = c.tp;
  spec.pins.cp = c.cp;
  spec.pins.pp = c.pp;
  spec.pins.dp = c.dp;
  spec.pins.micro_batch_size = c.mbs;
  spec.pins.virtual_stages = c.vpp;
  if (c.recompute) spec.pins.recompute = parse_recompute(*c.recompute);
  spec.pins.zero_stage = c.zero;
  spec.pins.sequence_parallel = c.sp;
  const SearchResult r = search(m, hw, spec);
  std::cout << render_search(r, RunContext{m, hw, spec.training}, parse_format(f.format));
  if (r.top.empty()) {
    std::cerr << fmt::format("planner: error: no layout of {} GPUs fits {} on {} (rejection reasons above)\n",
                             spec.training.num_gpus, m.name, hw.name);
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"planner: parallelism planner for LLM training (TP x CP x PP x DP, ZeRO, recompute)"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  std::string list_what, list_format = "table";
  auto* list = app.add_subcommand("list", "list stock models or hardware profiles");
  list->add_option("what", list_what, "models or hardware")->required()->check(CLI::IsMember({"models", "hardware"}));
  list->add_option("--format", list_format, "table or json")->check(CLI::IsMember({"table", "json"}));

  std::string show_name, show_format = "table";
  auto* show = app.add_subcommand("show", "show one model or hardware profile (name, alias or JSON path)");
  show->add_option("name", show_name, "model or hardware name")->required();
  show->add_option("--format", show_format, "table or json")->check(CLI::IsMember({"table", "json"}));

  CommonFlags ef;
  ConfigFlags ec;
  bool explain = false;
  auto* eval = app.add_subcommand("evaluate", "price one configuration: memory, step time, fits or not");
  add_common(eval, ef, true);
  add_config(eval, ec);
  eval->add_option("--schedule", ec.schedule, "1f1b or gpipe (interleaved when --vpp > 1)")->check(CLI::IsMember({"1f1b", "gpipe"}));
  eval->add_flag("--explain", explain, "print every formula with its inputs and output");

  CommonFlags sf;
  ConfigFlags sc;
  std::size_t top = 10;
  auto* srch = app.add_subcommand("search", "rank every layout that fits (pins such as --tp 8 fix a knob)");
  add_common(srch, sf, true);
  add_config(srch, sc);
  srch->add_option("--top,-k", top, "how many results to print (default 10)");

  const cli::Runner run_validate = cli::add_validate_command(app);
  const cli::Runner run_regress = cli::add_regress_command(app);
  const cli::Runner run_calibrate = cli::add_calibrate_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "planner: error: " << e.what() << "\n";
    return 2;
  }

  try {
    if (*list) {
      const Format f = parse_format(list_format);
      std::cout << (list_what == "models" ? render_model_list(list_models(), f) : render_hardware_list(list_hardware(), f));
      return 0;
    }
    if (*show) {
      const Format f = parse_format(show_format);
      // A name can be a model or a hardware profile; try models first.
      for (const auto& mdl : list_models())
        if (mdl.name == show_name || std::find(mdl.aliases.begin(), mdl.aliases.end(), show_name) != mdl.aliases.end()) {
          std::cout << render_model(mdl, f);
          return 0;
        }
      for (const auto& hw : list_hardware())
        if (hw.name == show_name || std::find(hw.aliases.begin(), hw.aliases.end(), show_name) != hw.aliases.end()) {
          std::cout << render_hardware(hw, f);
          return 0;
        }
      if (show_name.find(".json") != std::string::npos) {
        const auto j = read_json_file(show_name);
        if (j.is_object() && j.contains("tiers")) std::cout << render_hardware(hardware_from_json(j, show_name), f);
        else std::cout << render_model(model_from_json(j, show_name), f);
        return 0;
      }
      std::string names;
      for (const auto& mdl : list_models()) names += (names.empty() ? "" : ", ") + mdl.name;
      for (const auto& hw : list_hardware()) names += ", " + hw.name;
      throw InputError("show", fmt::format("unknown model or hardware '{}'; known: {}", show_name, names));
    }
    if (*eval) return run_evaluate(ef, ec, explain);
    if (*srch) return run_search(sf, sc, top);
    if (app.got_subcommand("validate")) return run_validate();
    if (app.got_subcommand("regress")) return run_regress();
    if (app.got_subcommand("calibrate")) return run_calibrate();
  } catch (const InputError& e) {
    std::cerr << "planner: error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
