#include "planner/io/json_io.h"
#include "planner/io/read_file.h"

#include "io/field_reader.h"
#include "io/json_keys.h"
#include "io/moe_json.h"
#include "io/unit_checks.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/model/collectives.h"
#include "planner/model/model_math.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"
#include "planner/spec/names.h"

namespace planner {

using detail::describe;
using detail::FieldReader;
using detail::throw_if_problems;
using nlohmann::json;

namespace {

// Latencies are bounded by check_profile_units (unit_checks.h), which can say
// which unit was meant; the reader only rejects negatives and absurd values.
constexpr double kAnyLatency_s = 1e9;

void check_schema_version(FieldReader& r) {
  std::int64_t v = r.integer("schema_version", 1);
  if (v != 0 && v != kSpecSchemaVersion)
    r.problem("schema_version", fmt::format("expected {}, got {}", kSpecSchemaVersion, v));
}

std::array<double, kNumDTypes> per_dtype(FieldReader& parent, const std::string& key,
                                         std::vector<std::string>& problems, double max_value, bool bf16_required) {
  std::array<double, kNumDTypes> out{0.0, 0.0};
  const json* o = parent.object(key);
  if (!o) return out;
  FieldReader r(*o, parent.field(key), problems);
  out[std::size_t(DType::bf16)] = r.number("bf16", 0, max_value, bf16_required);
  out[std::size_t(DType::fp8)] = r.number("fp8", 0, max_value, false);
  r.reject_unknown();
  return out;
}

// tiers[i].collectives.<c>.nccl_tuner: {base_latency_s, latency_per_step_s,
// bandwidth_bytes_per_s} of the base profile's own prices (CollectiveFit::stock).
void read_nccl_tuner_stock(const json& fit_json, const std::string& field, std::vector<std::string>& problems,
                           CollectiveFit& fit) {
  const auto it = fit_json.find("nccl_tuner");
  if (it == fit_json.end() || it->is_null()) return;
  if (!it->is_object()) {
    problems.push_back(fmt::format("{}.nccl_tuner: expected an object, got {}", field, describe(*it)));
    return;
  }
  FieldReader t(*it, field + ".nccl_tuner", problems);
  fit.nccl_tuner = true;
  fit.stock.base_latency_s = t.number("base_latency_s", 0, 1, true, 0, false);
  fit.stock.latency_per_step_s = t.number("latency_per_step_s", 0, 1, true, 0, false);
  fit.stock.bandwidth_bytes_per_s = t.number("bandwidth_bytes_per_s", 0, 1e15);
  t.reject_unknown();
}

// tiers[i].collectives: {"all_reduce": {base_latency_s, latency_per_step_s,
// bandwidth_bytes_per_s}, ...; send_recv optionally
// p2p_channel_bandwidth_bytes_per_s; all_reduce, all_gather and
// reduce_scatter optionally nccl_tuner}, written by `planner calibrate fit`.
void read_collective_fits(const json& obj, const std::string& path, std::vector<std::string>& problems,
                          std::array<CollectiveFit, kNumCollectives>& out) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string field = path + "." + it.key();
    const auto c = collective_from_key(it.key());
    if (!c) {
      problems.push_back(
          field + ": unknown collective (expected all_reduce, all_gather, reduce_scatter, all_to_all or send_recv)");
      continue;
    }
    if (!it->is_object()) {
      problems.push_back(fmt::format("{}: expected an object, got {}", field, describe(*it)));
      continue;
    }
    FieldReader f(*it, field, problems);
    CollectiveFit& fit = out[std::size_t(*c)];
    fit.fitted = true;
    fit.base_latency_s = f.number("base_latency_s", 0, 1, true, 0, false);
    fit.latency_per_step_s = f.number("latency_per_step_s", 0, 1, true, 0, false);
    fit.bandwidth_bytes_per_s = f.number("bandwidth_bytes_per_s", 0, 1e15);
    if (*c == Collective::send_recv)
      fit.p2p_channel_bandwidth_bytes_per_s = f.number("p2p_channel_bandwidth_bytes_per_s", 0, 1e15, false);
    else if (*c != Collective::all_to_all) {
      f.allow("nccl_tuner");
      read_nccl_tuner_stock(*it, field, problems, fit);
    }
    f.reject_unknown();
  }
}

// tiers[i] of a hardware profile; nullopt (and a problem) when not an object.
std::optional<InterconnectTier> read_tier(const json& tj, std::size_t i, std::vector<std::string>& problems) {
  std::string path = fmt::format("tiers[{}]", i);
  if (!tj.is_object()) {
    problems.push_back(path + ": expected an object");
    return std::nullopt;
  }
  FieldReader t(tj, path, problems);
  InterconnectTier tier;
  tier.name = t.string("name");
  tier.topology = t.choice("topology", kTopologyNames, Topology::switched);
  tier.size = t.integer("size", i == 0 ? 1 : 0);
  // No upper bound here: check_profile_units reports a latency typed in us with a suggestion.
  tier.latency_s = t.number("latency_s", 0, kAnyLatency_s, true, 0, false);
  tier.bandwidth_nominal_bytes_per_s = t.number("bandwidth_nominal_bytes_per_s", 0, 1e15);
  tier.bandwidth_achieved_bytes_per_s = t.number("bandwidth_achieved_bytes_per_s", 0, 1e15);
  tier.collective_channels = t.integer("collective_channels", 0, false, 0);
  if (tier.collective_channels > 1024)
    t.problem("collective_channels",
              fmt::format("expected at most 1024 channels (SMs), got {}", tier.collective_channels));
  if (tier.topology == Topology::torus) {
    const json* dims = t.get("torus_dims", true, "a list of positive integers");
    if (dims) {
      bool good = dims->is_array() && !dims->empty() && dims->size() <= 3;
      std::int64_t product = 1;
      if (good)
        for (const auto& d : *dims) {
          if (!d.is_number_integer() || d.get<std::int64_t>() < 1 || d.get<std::int64_t>() > 4096)
            good = false;
          else
            product *= d.get<std::int64_t>();
          if (good) tier.torus_dims.push_back(d.get<std::int64_t>());
        }
      if (!good)
        t.problem("torus_dims", fmt::format("expected a list of 1 to 3 positive integers, got {}", describe(*dims)));
      else if (product != tier.size)
        t.problem("torus_dims",
                  fmt::format("expected dimensions multiplying to size {}, got product {}", tier.size, product));
    }
  }
  if (i == 1) {
    tier.nics_per_node = t.integer("nics_per_node", 1);
    tier.gpus_per_node = t.integer("gpus_per_node", 1);
    tier.collnet = t.boolean("collnet", false, false);
  } else if (t.get("collnet", false, "")) {
    t.problem("collnet", "expected only on tiers[1] (in-network reduction is a scale-out switch feature)");
  }
  if (i == 0) {
    tier.nvls_bus_bandwidth_bytes_per_s = t.number("nvls_bus_bandwidth_bytes_per_s", 0, 1e15, false, 0, false);
    if (tier.nvls_bus_bandwidth_bytes_per_s > 0 && tier.topology != Topology::switched)
      t.problem("nvls_bus_bandwidth_bytes_per_s", "expected only on a switch tier (NVLink SHARP is an NVSwitch feature)");
  } else if (t.get("nvls_bus_bandwidth_bytes_per_s", false, "")) {
    t.problem("nvls_bus_bandwidth_bytes_per_s", "expected only on tiers[0] (NVLink SHARP runs in the NVLink switch)");
  }
  if (const json* fits = t.object("collectives", false)) {
    if (tier.topology != Topology::switched)
      t.problem("collectives", "expected only on a switch tier (fits of torus tiers are not supported)");
    else
      read_collective_fits(*fits, t.field("collectives"), problems, tier.collective_fits);
  }
  t.reject_unknown();
  if (tier.bandwidth_achieved_bytes_per_s > tier.bandwidth_nominal_bytes_per_s &&
      tier.bandwidth_nominal_bytes_per_s > 0)
    problems.push_back(path + ".bandwidth_achieved_bytes_per_s: expected at most bandwidth_nominal_bytes_per_s");
  return tier;
}

// A JSON object with none of `keys` (the fields every file of its kind has)
// is no such file: one line saying so, and what it looks like, rather than a
// problem for every field it lacks (a model file given as --hardware).
void require_kind(const json& j, const std::string& origin, const char* what, const std::vector<const char*>& keys) {
  for (const char* k : keys)
    if (j.contains(k)) return;
  std::string looks;
  if (j.contains("num_layers") || j.contains("hidden_size"))
    looks = "; it looks like a model file (it has \"num_layers\" or \"hidden_size\")";
  else if (j.contains("tiers") || j.contains("chip"))
    looks = "; it looks like a hardware profile (it has \"chip\" or \"tiers\")";
  else if (j.contains("model_type") || j.contains("architectures"))
    looks = "; it looks like a Hugging Face config.json (planner import-hf turns one into a model file)";
  std::string names;
  for (std::size_t i = 0; i < keys.size(); ++i)
    names += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == keys.size() ? " or " : ", ", keys[i]);
  throw InputError(origin, fmt::format("not a {}: it has no {}{}", what, names, looks));
}

}  // namespace

ModelSpec model_from_json(const json& j, const std::string& origin) {
  std::vector<std::string> problems;
  if (!j.is_object()) throw InputError(origin, "expected a JSON object describing a model");
  require_kind(j, origin, "model file", {"num_layers", "hidden_size"});
  FieldReader r(j, "", problems);
  ModelSpec m;
  check_schema_version(r);
  m.name = r.string("name");
  m.aliases = r.string_list("aliases");
  m.display_name = r.string("display_name", false);
  if (m.display_name.empty()) m.display_name = m.name;
  m.source = r.string("source", false);
  m.num_layers = r.integer("num_layers", 1);
  m.hidden_size = r.integer("hidden_size", 1);
  m.ffn_hidden_size = r.integer("ffn_hidden_size", 1);
  m.ffn_kind = r.choice("ffn_type", kFfnKindNames, FfnKind::swiglu);
  m.num_heads = r.integer("num_attention_heads", 1);
  m.num_kv_heads = r.integer("num_kv_heads", 1);
  m.head_dim = r.integer("head_dim", 1, false, 0);
  m.vocab_size = r.integer("vocab_size", 1);
  m.tied_embeddings = r.boolean("tied_embeddings");
  m.norm = r.choice("norm", kNormKindNames, NormKind::rmsnorm);
  m.bias = r.boolean("bias");
  m.dropout = r.boolean("dropout");
  m.position = r.choice("position_embedding", kPositionKindNames, PositionKind::rope);
  m.max_position_embeddings = r.integer("max_position_embeddings", 1, m.position == PositionKind::learned, 0);
  if (m.position != PositionKind::learned && m.max_position_embeddings > 0)
    r.problem("max_position_embeddings", fmt::format("applies to learned positions only (the table's rows); "
                                                     "position_embedding is {}",
                                                     to_string(m.position)));
  m.default_seq_len = r.integer("default_seq_len", 1);
  m.default_global_batch_tokens = r.integer("default_global_batch_tokens", 1);
  m.expected_params = r.integer("expected_params", 1, false, 0);
  detail::read_moe_fields(r, problems, m);
  (void)r.string("notes", false);  // free text, ignored
  r.reject_unknown();
  // Cross-field checks, only once the fields themselves are sane.
  if (problems.empty()) {
    detail::check_moe_fields(problems, m);  // sets an MLA model's default head_dim
    if (m.head_dim == 0) {
      if (m.hidden_size % m.num_heads != 0)
        problems.push_back(
            fmt::format("head_dim: missing, and hidden_size {} is not divisible by num_attention_heads {}",
                        m.hidden_size, m.num_heads));
      else
        m.head_dim = m.hidden_size / m.num_heads;
    }
    if (m.num_heads % m.num_kv_heads != 0)
      problems.push_back(fmt::format("num_kv_heads: expected a divisor of num_attention_heads {}, got {}", m.num_heads,
                                     m.num_kv_heads));
    if (m.position == PositionKind::learned && m.default_seq_len > m.max_position_embeddings)
      problems.push_back(
          fmt::format("default_seq_len: expected at most max_position_embeddings {} (learned "
                      "positions), got {}",
                      m.max_position_embeddings, m.default_seq_len));
  }
  // Bounds that keep every 64-bit product in the cost model exact (limits.h).
  if (problems.empty())
    for (std::string& p : size_problems(m)) problems.push_back(std::move(p));
  // The default batch is a whole number of default-length sequences.
  if (problems.empty() && m.default_global_batch_tokens % m.default_seq_len != 0)
    problems.push_back(fmt::format("default_global_batch_tokens: expected a multiple of default_seq_len {}, got {}",
                                   m.default_seq_len, m.default_global_batch_tokens));
  // A published count is a check on the architecture fields (issue 16 item 8).
  if (problems.empty() && (m.expected_params > 0 || m.expected_active_params > 0)) {
    const ParamCounts p = count_params(m);
    auto check = [&](const char* field, std::int64_t published, std::int64_t counted) {
      if (published > 0 && published != counted)
        problems.push_back(fmt::format("{}: expected the count of the architecture fields, {}, got {} (off by {:+})",
                                       field, counted, published, published - counted));
    };
    check("expected_params", m.expected_params, p.total);
    check("expected_active_params", m.expected_active_params, p.active);
  }
  throw_if_problems(origin, problems);
  return m;
}

HardwareProfile hardware_from_json(const json& j, const std::string& origin) {
  std::vector<std::string> problems;
  if (!j.is_object()) throw InputError(origin, "expected a JSON object describing a hardware profile");
  require_kind(j, origin, "hardware profile", {"chip", "tiers"});
  FieldReader r(j, "", problems);
  HardwareProfile h;
  check_schema_version(r);
  h.name = r.string("name");
  h.aliases = r.string_list("aliases");
  h.display_name = r.string("display_name", false);
  if (h.display_name.empty()) h.display_name = h.name;
  h.clusters = r.string_list("clusters");
  if (const json* chip = r.object("chip")) {
    FieldReader c(*chip, "chip", problems);
    h.chip_name = c.string("name");
    h.peak_flops_per_s = per_dtype(c, "peak_flops_per_s", problems, 1e18, true);
    h.hbm_capacity_bytes = c.number("hbm_capacity_bytes", 0, 1e15);
    h.hbm_bandwidth_bytes_per_s = c.number("hbm_bandwidth_bytes_per_s", 0, 1e15);
    c.reject_unknown();
  }
  h.memory_reserve_bytes = r.number("memory_reserve_bytes", 0, 1e15, true, 0, false);
  h.collective_base_latency_s = r.number("collective_base_latency_s", 0, kAnyLatency_s, true, 0, false);
  h.nccl_generation = r.choice("nccl_generation", kNcclGenerationNames, NcclGeneration::none, false);
  h.host_cpu = r.choice("host_cpu", kHostCpuNames, HostCpu::intel, false);
  if (const json* eff = r.object("efficiency")) {
    FieldReader e(*eff, "efficiency", problems);
    h.efficiency.gemm_max = per_dtype(e, "gemm_max", problems, 1.0, true);
    h.efficiency.gemm_half_flops = e.number("gemm_half_flops", 0, 1e18, true, 0, false);
    h.efficiency.attention_max = per_dtype(e, "attention_max", problems, 1.0, true);
    h.efficiency.attention_half_tokens = e.number("attention_half_tokens", 0, 1e9, false, 0, false);
    h.efficiency.flash2_attention_max = e.number("flash2_attention_max", 0, 1.0, false, 0);
    h.efficiency.unfused_attention_max = e.number("unfused_attention_max", 0, 1.0);
    h.efficiency.hbm_efficiency = e.number("hbm_efficiency", 0, 1.0);
    h.efficiency.compute_units = e.integer("compute_units", 1, false, 0);
    h.efficiency.gemm_tile_m = e.integer("gemm_tile_m", 1, false, 0);
    h.efficiency.gemm_tile_n = e.integer("gemm_tile_n", 1, false, 0);
    h.efficiency.chip_speed_sigma = e.number("chip_speed_sigma", 0, 0.5, false, 0, false);
    h.efficiency.sustained_clock_fraction = e.number("sustained_clock_fraction", 0, 1.0, false, 1.0);
    if ((h.efficiency.compute_units > 0) != (h.efficiency.gemm_tile_m > 0 && h.efficiency.gemm_tile_n > 0))
      e.problem("compute_units", "expected compute_units, gemm_tile_m and gemm_tile_n together (all or none)");
    e.reject_unknown();
  }
  const json* tiers = r.get("tiers", true, "a list of 1 or 2 interconnect tiers");
  if (tiers && (!tiers->is_array() || tiers->empty() || tiers->size() > 2)) {
    r.problem("tiers", fmt::format("expected a list of 1 or 2 interconnect tiers, got {}", describe(*tiers)));
  } else if (tiers) {
    for (std::size_t i = 0; i < tiers->size(); ++i) {
      if (auto tier = read_tier((*tiers)[i], i, problems)) h.tiers.push_back(std::move(*tier));
    }
    const bool nvls = !h.tiers.empty() && h.tiers[0].nvls_bus_bandwidth_bytes_per_s > 0;
    if (nvls && h.nccl_generation != NcclGeneration::hopper && h.nccl_generation != NcclGeneration::blackwell)
      problems.push_back(
          "tiers[0].nvls_bus_bandwidth_bytes_per_s: expected nccl_generation hopper or blackwell (NCCL runs NVLink "
          "SHARP on those only), got " +
          std::string(name_of(h.nccl_generation)));
    if (h.nccl_generation != NcclGeneration::none && !h.tiers.empty() && h.tiers[0].topology != Topology::switched)
      problems.push_back("nccl_generation: expected a switch tier 0 (NCCL's tuning tables do not price a torus)");
    if (h.tiers.size() == 2 && h.tiers[0].size > 0 && h.tiers[1].gpus_per_node > 0 &&
        h.tiers[0].size % h.tiers[1].gpus_per_node != 0 && h.tiers[1].gpus_per_node % h.tiers[0].size != 0)
      problems.push_back("tiers[1].gpus_per_node: expected a divisor or multiple of tiers[0].size");
  }
  r.allow("sources");
  (void)r.string("notes", false);  // free text, ignored
  r.reject_unknown();
  // Values off by a unit prefix (989 for 989e12 FLOP/s), with the likely meaning.
  detail::check_profile_units(h, problems);
  throw_if_problems(origin, problems);
  return h;
}

json to_json(const ModelSpec& model) {
  json j;
  j["schema_version"] = kSpecSchemaVersion;
  j["name"] = model.name;
  j["aliases"] = model.aliases;
  j["display_name"] = model.display_name;
  if (!model.source.empty()) j["source"] = model.source;
  j["num_layers"] = model.num_layers;
  j["hidden_size"] = model.hidden_size;
  j["ffn_hidden_size"] = model.ffn_hidden_size;
  j["ffn_type"] = std::string(to_string(model.ffn_kind));
  j["num_attention_heads"] = model.num_heads;
  j["num_kv_heads"] = model.num_kv_heads;
  j["head_dim"] = model.head_dim;
  j["vocab_size"] = model.vocab_size;
  j["tied_embeddings"] = model.tied_embeddings;
  j["norm"] = std::string(to_string(model.norm));
  j["bias"] = model.bias;
  j["dropout"] = model.dropout;
  j["position_embedding"] = std::string(to_string(model.position));
  if (model.position == PositionKind::learned) j["max_position_embeddings"] = model.max_position_embeddings;
  j["default_seq_len"] = model.default_seq_len;
  j["default_global_batch_tokens"] = model.default_global_batch_tokens;
  if (model.expected_params) j["expected_params"] = model.expected_params;
  detail::write_moe_fields(model, j);
  return j;
}

json to_json(const HardwareProfile& h) {
  auto dt = [](const std::array<double, kNumDTypes>& a) {
    json o;
    o["bf16"] = a[0];
    if (a[1] > 0) o["fp8"] = a[1];
    return o;
  };
  json j;
  j["schema_version"] = kSpecSchemaVersion;
  j["name"] = h.name;
  j["aliases"] = h.aliases;
  j["display_name"] = h.display_name;
  if (!h.clusters.empty()) j["clusters"] = h.clusters;
  j["chip"] = {{"name", h.chip_name},
               {"peak_flops_per_s", dt(h.peak_flops_per_s)},
               {"hbm_capacity_bytes", h.hbm_capacity_bytes},
               {"hbm_bandwidth_bytes_per_s", h.hbm_bandwidth_bytes_per_s}};
  j["memory_reserve_bytes"] = h.memory_reserve_bytes;
  j["collective_base_latency_s"] = h.collective_base_latency_s;
  if (h.nccl_generation != NcclGeneration::none) {
    j["nccl_generation"] = std::string(name_of(h.nccl_generation));
    j["host_cpu"] = std::string(name_of(h.host_cpu));
  }
  j["efficiency"] = {{"gemm_max", dt(h.efficiency.gemm_max)},
                     {"gemm_half_flops", h.efficiency.gemm_half_flops},
                     {"attention_max", dt(h.efficiency.attention_max)},
                     {"unfused_attention_max", h.efficiency.unfused_attention_max},
                     {"hbm_efficiency", h.efficiency.hbm_efficiency}};
  if (h.efficiency.attention_half_tokens > 0)
    j["efficiency"]["attention_half_tokens"] = h.efficiency.attention_half_tokens;
  if (h.efficiency.flash2_attention_max > 0)
    j["efficiency"]["flash2_attention_max"] = h.efficiency.flash2_attention_max;
  if (h.efficiency.chip_speed_sigma > 0) j["efficiency"]["chip_speed_sigma"] = h.efficiency.chip_speed_sigma;
  if (h.efficiency.sustained_clock_fraction != 1.0)
    j["efficiency"]["sustained_clock_fraction"] = h.efficiency.sustained_clock_fraction;
  if (h.efficiency.compute_units > 0) {
    j["efficiency"]["compute_units"] = h.efficiency.compute_units;
    j["efficiency"]["gemm_tile_m"] = h.efficiency.gemm_tile_m;
    j["efficiency"]["gemm_tile_n"] = h.efficiency.gemm_tile_n;
  }
  json tiers = json::array();
  for (std::size_t i = 0; i < h.tiers.size(); ++i) {
    const auto& t = h.tiers[i];
    json tj = {{"name", t.name},
               {"topology", std::string(to_string(t.topology))},
               {"size", t.size},
               {"latency_s", t.latency_s},
               {"bandwidth_nominal_bytes_per_s", t.bandwidth_nominal_bytes_per_s},
               {"bandwidth_achieved_bytes_per_s", t.bandwidth_achieved_bytes_per_s}};
    if (t.topology == Topology::torus) tj["torus_dims"] = t.torus_dims;
    if (t.collective_channels > 0) tj["collective_channels"] = t.collective_channels;
    if (i == 0 && t.nvls_bus_bandwidth_bytes_per_s > 0)
      tj["nvls_bus_bandwidth_bytes_per_s"] = t.nvls_bus_bandwidth_bytes_per_s;
    if (i == 1) {
      tj["nics_per_node"] = t.nics_per_node;
      tj["gpus_per_node"] = t.gpus_per_node;
      if (t.collnet) tj["collnet"] = true;
    }
    for (Collective c : kAllCollectives) {
      const CollectiveFit& f = t.collective_fits[std::size_t(c)];
      if (!f.fitted) continue;
      tj["collectives"][collective_key(c)] = {{"base_latency_s", f.base_latency_s},
                                              {"latency_per_step_s", f.latency_per_step_s},
                                              {"bandwidth_bytes_per_s", f.bandwidth_bytes_per_s}};
      if (f.p2p_channel_bandwidth_bytes_per_s > 0)
        tj["collectives"][collective_key(c)]["p2p_channel_bandwidth_bytes_per_s"] = f.p2p_channel_bandwidth_bytes_per_s;
      if (f.nccl_tuner)
        tj["collectives"][collective_key(c)]["nccl_tuner"] = {{"base_latency_s", f.stock.base_latency_s},
                                                              {"latency_per_step_s", f.stock.latency_per_step_s},
                                                              {"bandwidth_bytes_per_s", f.stock.bandwidth_bytes_per_s}};
    }
    tiers.push_back(tj);
  }
  j["tiers"] = tiers;
  return j;
}

json parse_json_text(std::string_view text, const std::string& origin) {
  try {
    detail::RepeatedKeyFinder keys;
    json j = json::parse(text, std::ref(keys));
    if (!keys.repeated().empty())
      throw InputError(fmt::format("{}: {}", origin, keys.repeated()),
                       "key given twice in one object (expected each name once; which value was meant?)");
    return j;
  } catch (const json::parse_error& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line L,
    // column C: <what went wrong; what was expected>". Give file:line:column
    // and the rest; the line from the byte offset should the text differ.
    std::string detail = e.what();
    std::size_t line = 1 + std::size_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(std::min<std::size_t>(
                                                                                    e.byte, text.size())),
                                                  '\n')),
                column = 0;
    if (const auto at = detail.find("at line "); at != std::string::npos) {
      unsigned long l = 0, c = 0;
      if (std::sscanf(detail.c_str() + at, "at line %lu, column %lu", &l, &c) == 2) line = l, column = c;
    }
    if (const auto colon = detail.find("]"); colon != std::string::npos) detail = detail.substr(colon + 1);
    if (const auto colon = detail.find(": "); colon != std::string::npos) detail = detail.substr(colon + 2);
    throw InputError(column ? fmt::format("{}:{}:{}", origin, line, column) : fmt::format("{}:{}", origin, line),
                     "malformed JSON: " + detail);
  } catch (const json::exception&) {
    // out_of_range 406: a number too large for a double (nlohmann throws it
    // outside parse_error; found by fuzz_nccl_tests_log).
    throw InputError(origin, "malformed JSON: a number out of range (expected a valid JSON document)");
  }
}

json read_json_file(const std::string& path) { return parse_json_text(read_input_file(path), path); }

ModelSpec load_model_file(const std::string& path) { return model_from_json(read_json_file(path), path); }
HardwareProfile load_hardware_file(const std::string& path) { return hardware_from_json(read_json_file(path), path); }

}  // namespace planner
