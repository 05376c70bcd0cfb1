// The labels of labels.h.
#include "planner/model/labels.h"

#include <vector>
#include <algorithm>

#include "planner/model/recompute_modules.h"
#include "planner/spec/names.h"

namespace planner {

std::string config_label(const ParallelConfig& c, char style) {
  // Expert parallelism shows only where it is used (MoE): dense labels unchanged.
  const bool ep = c.ep > 1 || c.etp > 1;
  if (style == 'd')
    return fmt::format("TP{} CP{} PP{} DP{}", c.tp, c.cp, c.pp, c.dp) +
           (ep ? fmt::format(" EP{} ETP{}", c.ep, c.etp) : std::string());
  if (style == 'c') {
    std::string s = fmt::format("tp{} cp{} pp{} dp{} mbs{}", c.tp, c.cp, c.pp, c.dp, c.micro_batch_size);
    if (ep) s += fmt::format(" ep{} etp{}", c.ep, c.etp);
    if (c.virtual_stages > 1) s += fmt::format(" v{}", c.virtual_stages);
    if (c.sequence_parallel) s += " sp";
    if (c.recompute != Recompute::none) s += c.recompute == Recompute::full ? " rc-full" : " rc-sel";
    if (c.zero_stage) s += fmt::format(" z{}", zero_label(c));
    return s;
  }
  return fmt::format("tp={} cp={} pp={} dp={} mbs={} vpp={} recompute={} zero={} sp={}", c.tp, c.cp, c.pp, c.dp,
                     c.micro_batch_size, c.virtual_stages, to_string(c.recompute), zero_label(c),
                     c.sequence_parallel ? "on" : "off") +
         (ep ? fmt::format(" ep={} etp={}", c.ep, c.etp) : std::string());
}

bool names_modules(const ParallelConfig& c, std::uint8_t modules) {
  return c.recompute == Recompute::selective && modules != module_bit(RecomputeModule::core_attn);
}

std::string recompute_label(const ParallelConfig& c, std::uint8_t modules) {
  return names_modules(c, modules) ? recompute_modules_label(modules) : std::string(to_string(c.recompute));
}

std::string split_label(const PricedPlan& plan) {
  const std::int64_t p = plan.layout.stages;
  std::vector<std::string> stages;
  for (std::int64_t s = 0; s < p; ++s) {
    if (plan.virtual_stages <= 1) {
      stages.push_back(std::to_string(plan.layout.layers_on(s)));
      continue;
    }
    std::string st;
    for (const ChunkPlan& c : plan.chunks(s)) st += (st.empty() ? "" : "/") + std::to_string(c.layers);
    stages.push_back(st);
  }
  std::string out;
  for (std::size_t i = 0; i < stages.size();) {
    std::size_t j = i + 1;
    while (j < stages.size() && stages[j] == stages[i]) ++j;
    out += (out.empty() ? "" : " ") + stages[i] + (j - i > 1 ? fmt::format("x{}", j - i) : "");
    i = j;
  }
  return out;
}

std::string zero_label(const ParallelConfig& c) {
  const std::string stage = c.zero_stage == 3 && !c.reshard_after_forward ? "3nr" : fmt::format("{}", c.zero_stage);
  return c.zero_shard > 0 ? fmt::format("{}/{}", stage, c.zero_shard) : stage;
}

const char* device_word(const HardwareProfile& hw) {
  return !hw.tiers.empty() && hw.tiers[0].topology == Topology::torus ? "chip" : "GPU";
}

std::string reason_text(Reason r, const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& c,
                        const TrainingSpec& ts) {
  const std::string devices = std::string(device_word(hw)) + "s";
  switch (r) {
    case Reason::gpu_count_mismatch: {
      // Each degree is at most 2^24 (limits.h): the product fits a double exactly enough to print.
      const double product = double(c.tp) * double(c.cp) * double(c.pp) * double(c.dp);
      return fmt::format("tp*cp*pp*dp = {}*{}*{}*{} = {:.0f} does not equal the {} count {}", c.tp, c.cp, c.pp, c.dp,
                         product, device_word(hw), ts.num_gpus);
    }
    case Reason::tp_exceeds_scale_up:
      return fmt::format("TP {} is larger than the scale-up domain of {} {} ({})", c.tp,
                         hw.tiers.empty() ? 1 : hw.tiers[0].size, devices,
                         hw.tiers.empty() ? std::string("none described") : hw.tiers[0].name);
    case Reason::tp_not_dividing_heads:
      return fmt::format("TP {} does not divide the {} attention heads and {} KV heads", c.tp, model.num_heads,
                         model.num_kv_heads);
    case Reason::tp_not_dividing_ffn:
      return fmt::format("TP {} does not divide the FFN size {}", c.tp, model.ffn_hidden_size);
    case Reason::cp_not_dividing_seq:
      return fmt::format("sequence length {} not divisible by 2*CP = 2*{} = {} (causal load balancing)", ts.seq_len,
                         c.cp, 2 * c.cp);
    case Reason::batch_not_divisible:
      return fmt::format("global batch {} not divisible by dp*mbs = {}*{} = {:.0f}", ts.global_batch_sequences, c.dp,
                         c.micro_batch_size, double(c.dp) * double(c.micro_batch_size));
    case Reason::too_few_layers: {
      const double chunks = double(c.pp) * double(c.virtual_stages);
      // A balanced split lets the embedding and output layer fill a chunk alone (balance_layers).
      const bool heads_alone = ts.pipeline_split == PipelineSplit::balanced && c.pp > 1 && c.virtual_stages > 1;
      return fmt::format("{} layers cannot fill pp*vpp = {}*{} = {:.0f} pipeline chunks{}", model.num_layers, c.pp,
                         c.virtual_stages, chunks,
                         heads_alone
                             ? fmt::format(" ({:.0f} with the embedding and output layer alone in theirs)", chunks - 2)
                             : std::string());
    }
    case Reason::vpp_needs_pp:
      return fmt::format("{} virtual pipeline stages need pp > 1", c.virtual_stages);
    case Reason::interleave_needs_micro_batches: {
      const std::int64_t m = ts.global_batch_sequences / std::max<std::int64_t>(1, c.dp * c.micro_batch_size);
      // The rule is Megatron-LM's (schedules.py); a TPU layout is not run by Megatron-LM.
      return fmt::format("interleaved schedule needs a multiple of pp = {} micro-batches, got {}{}", c.pp, m,
                         std::string(device_word(hw)) == "GPU" ? " (Megatron-LM)" : "");
    }
    case Reason::zero_stage_invalid:
      return fmt::format("ZeRO stage {} is not 0, 1, 2 or 3", c.zero_stage);
    case Reason::dtype_unsupported:
      return fmt::format("{} has no {} (no peak FLOP/s in profile {})", hw.chip_name, to_string(ts.dtype), hw.name);
    case Reason::crosses_single_domain:
      return fmt::format("{} {} leave the only interconnect tier the profile describes ({} {})", ts.num_gpus, devices,
                         hw.tiers.empty() ? 1 : hw.tiers[0].size, devices);
    case Reason::ep_on_dense_model:
      return fmt::format("EP {} / ETP {} on {}, a dense model (expert parallelism needs routed experts)", c.ep, c.etp,
                         model.name);
    case Reason::ep_not_dividing_experts:
      return fmt::format("EP {} does not divide the {} routed experts", c.ep, model.moe.num_experts);
    case Reason::expert_grid_not_folding:
      return fmt::format("EP*ETP = {}*{} does not divide TP*CP*DP = {}*{}*{} (MoE parallel folding)", c.ep, c.etp, c.tp,
                         c.cp, c.dp);
    case Reason::etp_not_dividing_expert_ffn:
      return fmt::format("ETP {} does not divide the expert FFN size {}", c.etp, model.moe.expert_ffn_hidden_size);
    case Reason::moe_tp_needs_sp:
      return fmt::format("MoE with TP {} needs sequence parallelism (Megatron-Core)", c.tp);
    case Reason::zero_shard_invalid:
      if (c.zero_stage < 1) return fmt::format("--zero-shard {} shards nothing at ZeRO 0", c.zero_shard);
      if (c.zero_shard == 1)
        return "--zero-shard 1 shards nothing: one rank a group holds everything, its replicas are ZeRO 0's (give "
               "--zero 0)";
      if (model.is_moe())
        return fmt::format("--zero-shard {} on {}, a MoE model: hybrid sharding of experts is not modelled",
                           c.zero_shard, model.name);
      return fmt::format(
          "--zero-shard {} is not a multiple of CP {} dividing DP*CP = {}*{} (whole CP groups, the "
          "innermost DP ranks)",
          c.zero_shard, c.cp, c.dp, c.cp);
    case Reason::out_of_memory:
    case Reason::count_:
      break;
  }
  return describe(r);
}

std::string reasons_label(ReasonSet r) {
  std::string out;
  for (std::size_t i = 0; i < kNumReasons; ++i)
    if ((r.bits >> i) & 1u) out += (out.empty() ? "" : "; ") + std::string(describe(Reason(i)));
  return out;
}

}  // namespace planner
