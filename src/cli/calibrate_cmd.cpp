// planner calibrate import-nccl-tests LOG... [-o M.json]
// planner calibrate fit --measurements M... --base PROFILE -o NEW.json
// planner calibrate check --profile P --measurements M... [--max-error E]
// Turn measurements (planner-bench, or nccl-tests logs) into a fitted hardware
// profile and check a profile against them (docs/calibration.md). Logic in
// src/calibrate/nccl_tests_import.cpp and src/calibrate/calibration.cpp.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "planner/calibrate/base_profile.h"
#include "planner/calibrate/calibration.h"
#include "planner/calibrate/measurements.h"
#include "planner/calibrate/nccl_tests_import.h"
#include "planner/io/atomic_write.h"
#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
#include "planner/spec/input_error.h"
#include "planner/views/calibration_report.h"

namespace planner::cli {

namespace {

struct CalibrateFlags {
  // import-nccl-tests
  std::vector<std::string> logs;
  std::string import_out;
  std::optional<std::string> collective;
  std::optional<std::int64_t> ranks, ranks_per_node, nodes_per_nvlink_domain;
  // fit / check
  std::vector<std::string> measurements;
  std::string base, out, name, profile;
  std::optional<double> max_error;
  std::optional<std::string> algo;
  bool summary = false, fitted_only = false, force = false;
};

std::vector<NamedMeasurements> load_all(const std::vector<std::string>& paths) {
  std::vector<NamedMeasurements> out;
  for (const auto& p : paths) out.push_back({p, load_measurements_file(p)});
  return out;
}

// --algo: the NCCL_ALGO the runs forced. `check` prices every algorithm the
// cost model has (NCCL's names, any case: Ring, Tree, NVLS, NVLSTree,
// CollNetDirect, PAT); `fit` fits the alpha-beta model's two for all-reduce,
// ring and tree.
std::optional<Algorithm> algo_flag(const CalibrateFlags& f, bool fit) {
  if (!f.algo) return std::nullopt;
  std::string key;
  for (char ch : *f.algo)
    if (ch != '_' && ch != '-') key += char(std::tolower((unsigned char)ch));
  std::optional<Algorithm> a;
  if (key == "ring") a = Algorithm::ring;
  if (key == "tree") a = Algorithm::tree;
  if (!fit) {
    if (key == "nvls") a = Algorithm::nvls;
    if (key == "nvlstree") a = Algorithm::nvls_tree;
    if (key == "collnet" || key == "collnetdirect") a = Algorithm::collnet;
    if (key == "pat") a = Algorithm::pat;
  }
  if (a) return a;
  throw InputError("--algo", fit ? fmt::format("expected ring or tree (the NCCL_ALGO the runs forced; the fit's "
                                               "alpha-beta model has these two for all-reduce), got '{}'",
                                               *f.algo)
                                 : fmt::format("expected ring, tree, nvls, nvlstree, collnetdirect or pat (the "
                                               "NCCL_ALGO the runs forced), got '{}'",
                                               *f.algo));
}

// An output that is one of the inputs would be overwritten by the result
// (the measurements by the fitted profile): refused before anything is read.
void refuse_output_over_input(const std::string& out, const std::vector<std::string>& inputs, const char* flag) {
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(in, out, ec))
      throw InputError("-o",
                       fmt::format("{} is also an input ({} {}); writing there would overwrite it", out, flag, in));
  }
}

int run_import(const CalibrateFlags& f) {
  NcclTestsImportOptions opt;
  if (f.collective) {
    opt.collective = collective_from_key(*f.collective);
    if (!opt.collective)
      throw InputError("--collective",
                       fmt::format("expected all_reduce, all_gather, reduce_scatter, all_to_all or send_recv, got '{}'",
                                   *f.collective));
  }
  opt.ranks = f.ranks;
  opt.ranks_per_node = f.ranks_per_node;
  if (!f.import_out.empty() && f.import_out != "-") refuse_output_over_input(f.import_out, f.logs, "a log");
  NcclTestsImport imp = import_nccl_tests_files(f.logs, opt);
  std::string cmd = "planner calibrate import-nccl-tests";
  for (const auto& l : f.logs) cmd += " " + std::filesystem::path(l).filename().string();
  // The flags that shaped the import, so the file says how it was made.
  if (opt.collective) cmd += fmt::format(" --collective {}", collective_key(*opt.collective));
  if (opt.ranks) cmd += fmt::format(" --ranks {}", *opt.ranks);
  if (opt.ranks_per_node) cmd += fmt::format(" --ranks-per-node {}", *opt.ranks_per_node);
  if (f.nodes_per_nvlink_domain) {
    if (*f.nodes_per_nvlink_domain < 1)
      throw InputError("--nodes-per-nvlink-domain",
                       fmt::format("expected at least 1, got {}", *f.nodes_per_nvlink_domain));
    for (MeasuredSeries& s : imp.measurements.series) {
      s.nodes_per_nvlink_domain = *f.nodes_per_nvlink_domain;
      // As the reader refuses it (measurements.cpp): never write a file it cannot read back.
      if (!fills_nvlink_domains(s))
        throw InputError("--nodes-per-nvlink-domain",
                         fmt::format("expected a divisor of every series' nodes, or at least them: {} spans {} nodes, "
                                     "which do not fill domains of {}",
                                     describe(s), s.nodes, *f.nodes_per_nvlink_domain));
    }
    cmd += fmt::format(" --nodes-per-nvlink-domain {}", *f.nodes_per_nvlink_domain);
  }
  imp.measurements.command = cmd;
  for (const auto& n : imp.notes) std::cerr << "planner: note: " << n << "\n";
  for (const auto& w : imp.warnings) std::cerr << "planner: warning: " << w << "\n";
  const std::string text = render_measurements(imp.measurements);
  if (f.import_out.empty() || f.import_out == "-") {
    std::cout << text;
    return 0;
  }
  write_file_atomically(f.import_out, text);
  std::cout << render_import_summary(imp.measurements, f.logs.size(), f.import_out);
  return 0;
}

int run_fit(const CalibrateFlags& f) {
  // Standard output carries the fit report, so the profile goes to a file (as
  // --svg, --trace and --html refuse "-"); "-" would name the file and the profile.
  if (f.out == "-")
    throw InputError("-o",
                     "expected a file name; the fitted profile is not written to stdout, which carries the fit "
                     "report");
  refuse_output_over_input(f.out, f.measurements, "--measurements");
  const HardwareProfile base = find_hardware(f.base, data_dir(), "--base");
  const nlohmann::json base_sources = base_profile_sources(f.base, base);
  FitOptions opt;
  opt.name = f.name.empty() ? std::filesystem::path(f.out).stem().string() : f.name;
  // The name is typed on the command line (--hardware NAME) and names the file:
  // no spaces or path characters, and not "-" (no stream: -o refuses it too).
  if (opt.name == "-")
    throw InputError("--name", f.name.empty() ? "expected the profile's name (letters, digits, '.', '-' or '_', as "
                                                "--hardware takes it), not '-' from the -o file's name; give --name"
                                              : "expected the profile's name (letters, digits, '.', '-' or '_', as "
                                                "--hardware takes it), not '-': the fitted profile is not written to "
                                                "stdout, which carries the fit report");
  if (opt.name.empty() || std::any_of(opt.name.begin(), opt.name.end(), [](unsigned char ch) {
        return !(std::isalnum(ch) || ch == '.' || ch == '-' || ch == '_');
      }))
    throw InputError("--name", fmt::format("expected letters, digits, '.', '-' or '_' (the profile's name, as "
                                           "--hardware takes it), got '{}'{}",
                                           opt.name, f.name.empty() ? " from the -o file's name; give --name" : ""));
  opt.command = "planner calibrate fit --measurements";
  for (const auto& m : f.measurements) opt.command += " " + m;
  opt.command += fmt::format(" --base {} -o {}", f.base, f.out);
  opt.algorithm = algo_flag(f, true);
  opt.force = f.force;
  if (opt.algorithm) opt.command += fmt::format(" --algo {}", to_string(*opt.algorithm));
  if (opt.force) opt.command += " --force";
  const FitResult r = fit_profile(base, load_all(f.measurements), opt);
  std::cout << render_fit_report(r);
  // The report above lists the warnings and each failed fit with its reasons.
  if (!r.failures.empty() && !f.force) {
    std::cerr << fmt::format(
        "planner: error: {} not written: {} fit{} fail{} the quality gates (collectives: R2 of "
        "ln(time) >= {:.1f}, median |error| <= {:.0f}%; compute: measured rates at most the "
        "chip's peak, GEMM median |error| <= {:.0f}%); --force writes it anyway\n",
        f.out, r.failures.size(), r.failures.size() == 1 ? "" : "s", r.failures.size() == 1 ? "s" : "", kMinR2,
        kMaxMedianError * 100, kMaxMedianError * 100);
    return 1;
  }
  const std::string text = render_fitted_profile(r, base_sources);
  // The written file must read back as a valid profile.
  (void)hardware_from_json(nlohmann::json::parse(text), f.out);
  write_file_atomically(f.out, text);
  std::cout << fmt::format("wrote {}\n", f.out);
  return 0;
}

int run_check(const CalibrateFlags& f) {
  if (f.max_error && !(*f.max_error >= 0))
    throw InputError("--max-error", fmt::format("expected a non-negative fraction, got {}", *f.max_error));
  const HardwareProfile hw = find_hardware(f.profile, data_dir(), "--profile");
  const std::optional<Algorithm> algo = algo_flag(f, false);
  CheckReport r = check_profile(hw, load_all(f.measurements), algo);
  if (algo) {
    // A forced algorithm that prices none of the points would be a flag with
    // no effect (all-to-all and send/recv have no NCCL algorithm).
    bool applied = false;
    for (const SeriesCheck& s : r.series)
      if (s.collective != Collective::all_to_all && s.collective != Collective::send_recv)
        for (const CheckPoint& p : s.points) applied = applied || !p.not_forced;
    if (!applied)
      throw InputError("--algo", fmt::format("{} prices none of the measured points: all-to-all and send/recv have no "
                                             "NCCL algorithm, and {} runs none of the other series on these groups",
                                             to_string(*algo), to_string(*algo)));
  }
  if (f.fitted_only) {
    bool any_fit = false;
    for (const InterconnectTier& t : hw.tiers)
      for (const CollectiveFit& c : t.collective_fits) any_fit = any_fit || c.fitted;
    if (!any_fit)
      throw InputError("--fitted-only", fmt::format("the profile {} has no fits (a stock profile: every collective "
                                                    "prices with the tiers' generic values), so nothing to keep; "
                                                    "check without --fitted-only, or check a profile from calibrate fit",
                                                    hw.name));
    std::erase_if(r.series, [](const SeriesCheck& s) { return !s.fitted; });
  }
  if (r.series.empty())
    throw InputError("--fitted-only", fmt::format("no series with a fit in the profile {} to check", hw.name));
  std::cout << (f.summary ? render_check_summary(r) : render_check(r));
  if (f.max_error && r.worst_median_abs_error() > *f.max_error) {
    std::cerr << fmt::format("planner: check: a series' median |error| {:.1f}% exceeds --max-error {:.1f}%\n",
                             r.worst_median_abs_error() * 100, *f.max_error * 100);
    return 1;
  }
  return 0;
}

}  // namespace

Runner add_calibrate_command(CLI::App& cmd) {
  auto f = std::make_shared<CalibrateFlags>();
  cmd.require_subcommand(1);

  auto* imp =
      cmd.add_subcommand("import-nccl-tests", "convert nccl-tests logs (text or -J JSON) into a measurement file");
  imp->add_option("logs", f->logs, "nccl-tests stdout logs or -J JSON files")->required();
  imp->add_option("-o,--output", f->import_out, "measurement file to write (default: standard output)");
  imp->add_option(
      "--collective", f->collective,
      "all_reduce, all_gather, reduce_scatter, all_to_all or send_recv, for logs that do not name their test");
  imp->add_option("--ranks", f->ranks, "ranks in the measured group, for logs without a '# Using devices' list");
  imp->add_option("--ranks-per-node", f->ranks_per_node, "of those, ranks on each node");
  imp->add_option("--nodes-per-nvlink-domain", f->nodes_per_nvlink_domain,
                  "nodes that shared one NVLink domain (NVL72 trays in one rack; 1: every node its own); default: "
                  "the profile's, consecutive nodes filling its domains");

  auto* fit = cmd.add_subcommand("fit", "fit alpha and bandwidth per tier and collective; write a new profile");
  fit->add_option("--measurements,-m", f->measurements, "measurement files (planner-bench or import-nccl-tests)")
      ->required();
  fit->add_option("--base", f->base, "profile to start from: name, alias or JSON path")->required();
  fit->add_option("-o,--output", f->out, "fitted profile to write")->required();
  fit->add_option("--name", f->name, "the fitted profile's name (default: the output file's stem)");
  fit->add_flag("--force", f->force,
                "write the profile even when a fit fails the quality gates (R2 < 0.9 or median |error| > 10%), and "
                "fit latency from sweeps without sizes below 1 MiB");
  fit->add_option("--algo", f->algo, "ring or tree: the NCCL_ALGO the measured runs forced (all-reduce)");

  auto* check = cmd.add_subcommand("check", "predicted (collective_cost) vs measured time per size");
  check->add_option("--profile", f->profile, "profile: name, alias or JSON path")->required();
  check->add_option("--measurements,-m", f->measurements, "measurement files")->required();
  check->add_option("--max-error", f->max_error, "exit 1 when a series' median |relative error| exceeds this fraction");
  check->add_flag("--summary", f->summary, "one line per series instead of every size");
  check->add_option("--algo", f->algo,
                    "ring, tree, nvls, nvlstree, collnetdirect or pat: the NCCL_ALGO the measured runs forced");
  check->add_flag(
      "--fitted-only", f->fitted_only,
      "only series the profile has a fit for (groups inside one node, or one rank per node), not the groups "
      "that validate how the tiers compose");

  return [f, imp, fit, check] {
    if (*imp) return run_import(*f);
    if (*fit) return run_fit(*f);
    if (*check) return run_check(*f);
    return 2;
  };
}

}  // namespace planner::cli
