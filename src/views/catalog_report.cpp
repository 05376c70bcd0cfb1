// `planner list` and `planner show`: the stock models and hardware profiles
// as tables or JSON (report.h declares them).
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/io/json_io.h"
#include "planner/model/collectives.h"
#include "planner/model/model_math.h"
#include "planner/views/report.h"
#include "views/model_moe_view.h"

namespace planner {

using nlohmann::json;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

std::string render_model_list(const std::vector<ModelSpec>& models, Format f) {
  if (f == Format::json) {
    json j = json::array();
    for (const auto& m : models)
      j.push_back({{"name", m.name}, {"aliases", m.aliases}, {"params", count_params(m).total}});
    return json{{"schema_version", kReportSchemaVersion}, {"models", j}}.dump(2) + "\n";
  }
  // Columns as wide as their widest entry, so that a long name or alias list
  // does not push its row out of line.
  auto alias_text = [](const std::vector<std::string>& aliases) {
    std::string out;
    for (const auto& a : aliases) out += (out.empty() ? "" : ",") + a;
    return out;
  };
  std::size_t name_w = 4, alias_w = 7, params_w = 10;
  for (const auto& m : models) {
    name_w = std::max(name_w, m.name.size());
    alias_w = std::max(alias_w, alias_text(m.aliases).size());
    params_w = std::max(params_w, fmt::format("{}", count_params(m).total).size());
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:>{}}  {}\n", "name", name_w, "aliases", alias_w, "parameters",
                                params_w, "description");
  for (const auto& m : models)
    out += fmt::format("{:<{}}  {:<{}}  {:>{}}  {}\n", m.name, name_w, alias_text(m.aliases), alias_w,
                       count_params(m).total, params_w, m.display_name);
  return out;
}

std::string render_hardware_list(const std::vector<HardwareProfile>& hw, Format f) {
  if (f == Format::json) {
    json j = json::array();
    for (const auto& h : hw) j.push_back({{"name", h.name}, {"aliases", h.aliases}});
    return json{{"schema_version", kReportSchemaVersion}, {"hardware", j}}.dump(2) + "\n";
  }
  std::size_t name_w = 4, alias_w = 7;
  std::vector<std::string> aliases;
  for (const auto& h : hw) {
    std::string a;
    for (const auto& x : h.aliases) a += (a.empty() ? "" : ",") + x;
    name_w = std::max(name_w, h.name.size());
    alias_w = std::max(alias_w, a.size());
    aliases.push_back(std::move(a));
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {}\n", "name", name_w, "aliases", alias_w, "description");
  for (std::size_t i = 0; i < hw.size(); ++i)
    out += fmt::format("{:<{}}  {:<{}}  {}\n", hw[i].name, name_w, aliases[i], alias_w, hw[i].display_name);
  return out;
}

std::string render_model(const ModelSpec& model, Format f) {
  const ParamCounts p = count_params(model);
  if (f == Format::json) {
    json j = to_json(model);
    j["derived"] = {{"params_total", p.total}, {"params_per_layer", p.per_layer}, {"params_matmul", p.matmul}};
    views::add_moe_derived(model, p, j["derived"]);
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format("{} ({})\n", model.display_name, model.name);
  if (!model.source.empty()) out += fmt::format("  source: {}\n", model.source);
  out += fmt::format("  layers {}  hidden {}  FFN {} ({})  heads {}  KV heads {}  head dim {}\n", model.num_layers,
                     model.hidden_size, model.ffn_hidden_size, to_string(model.ffn_kind), model.num_heads,
                     model.num_kv_heads, model.head_dim);
  out += fmt::format("  vocab {}  embeddings {}  norm {}  bias {}  dropout {}  positions {}\n", model.vocab_size,
                     model.tied_embeddings ? "tied" : "untied", to_string(model.norm),
                     model.bias ? "yes" : model.qkv_bias ? "Q/K/V only" : "no",
                     model.dropout ? "yes" : "no", to_string(model.position));
  out += fmt::format("  default sequence {}  default global batch {} tokens\n", model.default_seq_len,
                     model.default_global_batch_tokens);
  out += fmt::format("  parameters {} ({} {}, embedding {}, output {}; matmul N = {})\n", p.total,
                     model.is_moe() ? "mean per layer" : "per layer", p.per_layer, p.embedding, p.output, p.matmul);
  if (model.expected_params)
    out += fmt::format("  published count {} ({})\n", model.expected_params,
                       model.expected_params == p.total ? "matches" : "MISMATCH");
  out += views::moe_model_lines(model, p);
  return out;
}

std::string render_hardware(const HardwareProfile& h, Format f) {
  if (f == Format::json) return to_json(h).dump(2) + "\n";
  std::string out = fmt::format("{} ({})\n", h.display_name, h.name);
  out += fmt::format("  chip {}: bf16 {:.1f} TFLOP/s", h.chip_name, h.peak_flops_per_s[0] / 1e12);
  if (h.peak_flops_per_s[1] > 0) out += fmt::format(", fp8 {:.1f} TFLOP/s", h.peak_flops_per_s[1] / 1e12);
  out += fmt::format("; HBM {:.1f} GiB at {:.0f} GB/s; reserve {:.1f} GiB\n", h.hbm_capacity_bytes / kGiB,
                     h.hbm_bandwidth_bytes_per_s / 1e9, h.memory_reserve_bytes / kGiB);
  const auto& e = h.efficiency;
  out += fmt::format("  efficiency: GEMM max bf16 {:.2f}", e.gemm_max[0]);
  if (e.gemm_max[1] > 0) out += fmt::format(" fp8 {:.2f}", e.gemm_max[1]);
  out += fmt::format(", GEMM half-efficiency size {:.3g} FLOP, flash attention {:.2f}", e.gemm_half_flops,
                     e.attention_max[0]);
  if (e.attention_half_tokens > 0)
    out += fmt::format(" (half of it at {:.0f} key/value tokens per kernel call)", e.attention_half_tokens);
  if (e.flash2_attention_max > 0) out += fmt::format(", FlashAttention-2 {:.2f}", e.flash2_attention_max);
  out += fmt::format(", unfused attention {:.2f}, HBM {:.2f}\n", e.unfused_attention_max, e.hbm_efficiency);
  if (e.sustained_clock_fraction != 1.0)
    out += fmt::format("  sustained tensor-core clock under the power limit: {:.3f} of the burst measurements'\n",
                       e.sustained_clock_fraction);
  if (e.compute_units > 0)
    out += fmt::format("  GEMM tiles {}x{} over {} compute units (wave quantisation)\n", e.gemm_tile_m, e.gemm_tile_n,
                       e.compute_units);
  for (std::size_t i = 0; i < h.tiers.size(); ++i) {
    const auto& t = h.tiers[i];
    out += fmt::format("  tier {} {}: {} size {}", i, t.name, to_string(t.topology),
                       t.size == 0 ? std::string("unbounded") : std::to_string(t.size));
    if (t.topology == Topology::torus) {
      std::string dims;
      for (auto d : t.torus_dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
      out += " dims " + dims;
    }
    out += fmt::format(", alpha {:.2f} us, bandwidth {:.1f} GB/s nominal / {:.1f} GB/s achieved", t.latency_s * 1e6,
                       t.bandwidth_nominal_bytes_per_s / 1e9, t.bandwidth_achieved_bytes_per_s / 1e9);
    if (i == 1) out += fmt::format(", {} NICs per {} GPUs", t.nics_per_node, t.gpus_per_node);
    out += "\n";
    for (Collective c : kAllCollectives) {
      const CollectiveFit& fit = t.collective_fits[std::size_t(c)];
      if (fit.fitted)
        out += fmt::format(
            "    fitted {}: base {:.2f} us + {:.3f} us per step, bandwidth {:.2f} GB/s{}{}\n", collective_key(c),
            fit.base_latency_s * 1e6, fit.latency_per_step_s * 1e6, fit.bandwidth_bytes_per_s / 1e9,
            fit.p2p_channel_bandwidth_bytes_per_s > 0
                ? fmt::format(", {:.2f} GB/s a p2p channel", fit.p2p_channel_bandwidth_bytes_per_s / 1e9)
                : std::string(),
            fit.nccl_tuner ? fmt::format("; priced by NCCL's tuner at x{:.3f} the stock bandwidth",
                                         fit.stock.bandwidth_bytes_per_s > 0
                                             ? fit.bandwidth_bytes_per_s / fit.stock.bandwidth_bytes_per_s
                                             : 1.0)
                           : std::string());
    }
  }
  return out;
}

}  // namespace planner
