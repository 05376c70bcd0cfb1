// Fidelity regression: the Korthikanti et al. 2022 runs (tests/data/
// korthikanti_2022.tsv) evaluated with their exact configuration on the stock
// DGX A100 profile, no per-run parameters. Fails when the median |error| of
// step (or per-layer) time exceeds 5% or any row exceeds 10% (issue 2 target).
// Run `planner_tests "[fidelity]" -s` to print the table.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/evaluate.h"

using namespace planner;

TEST_CASE("Korthikanti 2022 runs land within 5% median, 10% worst", "[fidelity]") {
  const std::string dir = PLANNER_SOURCE_DIR;
  std::ifstream in(dir + "/tests/data/korthikanti_2022.tsv");
  REQUIRE(in.good());
  const HardwareProfile hw = find_hardware("dgx-a100-80gb", dir);
  std::vector<double> errors;
  std::string line, table = fmt::format("{:<5} {:<18} {:>5} {:<10} {:<5} {:>10} {:>10} {:>7}\n", "id", "model", "SP",
                                        "recompute", "scope", "predicted", "measured", "error");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    std::string id, model, rec, scope;
    std::int64_t gpus, tp, pp, dp, vpp, mbs, gb;
    int sp;
    double measured;
    row >> id >> model >> gpus >> tp >> pp >> dp >> vpp >> mbs >> gb >> sp >> rec >> scope >> measured;
    REQUIRE_FALSE(row.fail());
    const ModelSpec m = find_model(model, dir);
    TrainingSpec ts;
    ts.num_gpus = gpus;
    ts.seq_len = 2048;
    ts.global_batch_sequences = gb;
    ts.attention = AttentionKernel::unfused;
    ts.grad_bytes_per_param = 4;
    ts.overlap_grad_reduce = false;
    ParallelConfig pc;
    pc.tp = tp, pc.pp = pp, pc.dp = dp, pc.virtual_stages = vpp, pc.micro_batch_size = mbs;
    pc.sequence_parallel = sp != 0;
    pc.recompute = rec == "full" ? Recompute::full : rec == "selective" ? Recompute::selective : Recompute::none;
    const Evaluation ev = evaluate(m, hw, pc, ts);
    INFO(id);
    // Layer-scope rows measured one layer; the whole model need not fit then.
    const std::uint32_t oom = 1u << unsigned(Reason::out_of_memory);
    REQUIRE((ev.feasible() || (scope == "layer" && ev.reasons == oom)));
    const double predicted = scope == "layer" ? ev.time.layer_fwd_s + ev.time.layer_bwd_s : ev.time.step_s;
    const double err = (predicted - measured) / measured;
    errors.push_back(std::abs(err));
    table += fmt::format("{:<5} {:<18} {:>5} {:<10} {:<5} {:>10.4f} {:>10.4f} {:>+6.1f}%\n", id, model,
                         sp ? "on" : "off", rec, scope, predicted, measured, 100 * err);
  }
  REQUIRE(errors.size() == 14);
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  const double median = (sorted[6] + sorted[7]) / 2;
  const double worst = sorted.back();
  table += fmt::format("median |error| {:.1f}%, worst {:.1f}%\n", 100 * median, 100 * worst);
  WARN(table);
  CHECK(median <= 0.05);
  CHECK(worst <= 0.10);
}
