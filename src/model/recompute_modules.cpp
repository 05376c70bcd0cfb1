#include "planner/model/recompute_modules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/layer_parts.h"
#include "planner/model/gemm_cost.h"
#include "planner/model/straggler.h"

#include "planner/spec/input_error.h"
#include "planner/spec/names.h"

namespace planner {

namespace {

constexpr std::uint8_t kMoeOnly = module_bit(RecomputeModule::moe_act) | module_bit(RecomputeModule::moe) |
                                  module_bit(RecomputeModule::shared_experts);

}  // namespace

bool recomputes(const ParallelConfig& pc, const TrainingSpec& ts, RecomputeModule m) {
  return pc.recompute == Recompute::selective && ts.selective == SelectivePolicy::megatron_attention &&
         (ts.recompute_modules & module_bit(m)) != 0;
}

std::string recompute_modules_label(std::uint8_t mask) {
  std::string out;
  for (const auto& n : kRecomputeModuleNames)
    if (mask & module_bit(n.value)) out += (out.empty() ? "" : ",") + std::string(n.name);
  return out.empty() ? "none" : out;
}

std::string recompute_modules_problem(std::uint8_t mask, const ModelSpec& model) {
  if ((mask & module_bit(RecomputeModule::mla_up_proj)) && !model.is_mla())
    return fmt::format("mla_up_proj needs multi-latent attention; {} has none", model.name);
  if ((mask & kMoeOnly) && !model.is_moe())
    return fmt::format("{} needs experts; {} is dense", recompute_modules_label(mask & kMoeOnly), model.name);
  if ((mask & module_bit(RecomputeModule::shared_experts)) && model.moe.num_shared_experts == 0)
    return fmt::format("shared_experts needs shared experts; {} has none", model.name);
  if ((mask & module_bit(RecomputeModule::mlp)) && model.is_moe() && model.moe.first_dense_layers == 0 &&
      model.moe.layer_freq <= 1)
    return fmt::format(
        "mlp recomputes dense layers' MLPs; every layer of {} is MoE (use moe, moe_act or "
        "shared_experts)",
        model.name);
  return {};
}

std::uint8_t parse_recompute_modules(std::string_view text, const ModelSpec& model, const std::string& where) {
  std::uint8_t mask = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const auto m = parse_name<RecomputeModule>(item);
    if (!m)
      throw InputError(where, fmt::format("expected Megatron recompute modules from {} (comma-separated), got '{}'",
                                          fmt::join(name_list<RecomputeModule>(), ", "), item));
    mask |= module_bit(*m);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (const std::string why = recompute_modules_problem(mask, model); !why.empty()) throw InputError(where, why);
  return mask;
}

TrainingSpec moe_layer_dense_part(const TrainingSpec& ts) {
  TrainingSpec out = ts;
  const std::uint8_t m = ts.recompute_modules;
  const bool shared = (m & (module_bit(RecomputeModule::shared_experts) | module_bit(RecomputeModule::moe))) != 0;
  out.recompute_modules = std::uint8_t((m & ~(kMoeOnly | module_bit(RecomputeModule::mlp))) |
                                       (shared ? module_bit(RecomputeModule::mlp) : 0));
  return out;
}

double recomputed_a2a_share(const ParallelConfig& pc, const TrainingSpec& ts) {
  return pc.recompute == Recompute::full || recomputes(pc, ts, RecomputeModule::moe) ? 1.0 : 0.0;
}

std::string overlap_a2a_problem(const ParallelConfig& pc, const TrainingSpec& ts) {
  if (!ts.overlap_a2a) return {};
  if (pc.recompute == Recompute::full)
    return "cannot overlap with full recomputation (Megatron-LM core_v0.19.0 transformer_config.py: disable full "
           "recomputation when enabling overlap_moe_expert_parallel_comm)";
  if (recomputes(pc, ts, RecomputeModule::moe))
    return "cannot overlap with the moe module recomputed (Megatron-LM core_v0.19.0 transformer_config.py: disable "
           "moe in recompute_modules when enabling overlap_moe_expert_parallel_comm)";
  return {};
}

namespace layer_detail {

namespace {

// Per-layer activation terms the modules discard (as layer_activations
// counts them, Korthikanti et al. 2022 §4.1 adapted).
struct ModuleBytes {
  double norm_outputs = 0;  // both norms' outputs (the QKV / MLA down-projection and FFN-in inputs)
  double qkv = 0;           // Q, K, V (MLA: the up-projections' outputs after RoPE)
  double mlp = 0;           // the MLP's FC1 output (gate and up) and activation output
};

ModuleBytes module_bytes(const Dims& d, DType dt) {
  ModuleBytes b;
  const double in = gemm_input_bytes(dt);  // as layer_activations stores the GEMM inputs
  b.norm_outputs = 2.0 * in * d.n * d.h / d.sp_div;
  b.qkv = kAct * d.n * qkv_width(d) / d.t;
  b.mlp = d.F > 0 ? d.n * d.F / d.t * (kAct * (d.gated ? 2.0 : 1.0) + in) : 0.0;
  return b;
}

}  // namespace

// What each module discards (Megatron-LM core_v0.19.0): layernorm and
// mla_up_proj run under CheckpointWithoutOutput, which frees their outputs'
// storage once the consumers saved them (the QKV / FC1 GEMMs' inputs, the
// attention kernel's Q, K, V) and rebuilds it before their backward
// (transformer_layer.py recompute_input_layernorm / recompute_pre_mlp_layernorm,
// multi_latent_attention.py qkv_up_checkpoint); mlp checkpoints the dense MLP,
// keeping its input only (transformer_layer.py recompute_mlp); core_attn drops
// the unfused core's scores (Korthikanti et al. 2022 §5), nothing under a fused
// kernel, which recomputes internally. moe, moe_act, shared_experts: moe_cost.cpp.
double module_dropped_bytes(const Dims& d, const ParallelConfig& pc, const TrainingSpec& ts,
                            double attention_core_bytes, Explain* ex) {
  const ModuleBytes b = module_bytes(d, ts.dtype);
  double dropped = 0;
  if (recomputes(pc, ts, RecomputeModule::core_attn) && ts.attention == AttentionKernel::unfused)
    dropped += attention_core_bytes;
  if (recomputes(pc, ts, RecomputeModule::layernorm)) dropped += b.norm_outputs;
  if (recomputes(pc, ts, RecomputeModule::mla_up_proj) && d.mla) dropped += b.qkv;
  if (recomputes(pc, ts, RecomputeModule::mlp)) dropped += b.mlp;
  if (ex && ts.recompute_modules != module_bit(RecomputeModule::core_attn))
    note_step(ex, "activations dropped by --recompute-modules (per layer per micro-batch)",
              "core_attn: unfused scores; layernorm: 2 norm outputs 2*n*h/sp; mla_up_proj: Q, K, V 2*n*H*(2*qk + v)/t; "
              "mlp: FC1 output + activation output",
              "Megatron-LM core_v0.19.0 transformer_layer.py, multi_latent_attention.py (CheckpointWithoutOutput); "
              "DeepSeek-V3 report §3.2.3",
              {{"norm_outputs_bytes", b.norm_outputs}, {"qkv_bytes", b.qkv}, {"mlp_bytes", b.mlp}}, dropped, "bytes");
  return dropped;
}

// The forward pieces the backward runs again, per module: layernorm the two
// norms (read + write each, memory bound as layer_cost.cpp prices them);
// mla_up_proj MLA's query and KV up-projection GEMMs and RoPE; mlp the dense
// MLP's two GEMMs and activation, and its TP all-gather / reduce-scatter (the
// MLP half of the layer's TP collectives: ColumnParallelLinear gathers its SP
// input, RowParallelLinear reduce-scatters); core_attn the unfused core. The
// kernels are stretched for the slowest chip as the forward's are. FP8 cast
// kernels of the recomputed GEMMs are not counted (an approximation).
void add_module_recompute(LayerTime& lt, const Dims& d, const HardwareProfile& hw, const ParallelConfig& pc,
                          const TrainingSpec& ts, Explain* ex) {
  const double k = 1.0 + straggler_slowdown(hw, ts.num_gpus);
  double s = 0, tp = 0;
  if (recomputes(pc, ts, RecomputeModule::core_attn) && ts.attention == AttentionKernel::unfused)
    s += lt.attention_fwd_s;
  if (recomputes(pc, ts, RecomputeModule::layernorm)) s += k * 2.0 * 2.0 * kAct * d.n * d.h / d.sp_div / hbm_bw(hw);
  if (recomputes(pc, ts, RecomputeModule::mla_up_proj) && d.mla) {
    const double qk = d.qk_hd + d.rope_hd;
    double up = gemm_time_s(hw, ts.dtype, d.n, d.H * (d.qk_hd + d.v_hd) / d.t, d.kv_lora);
    if (d.q_lora > 0) up += gemm_time_s(hw, ts.dtype, d.n, d.H * qk / d.t, d.q_lora);
    const double rope_bytes = d.rope ? 2.0 * kAct * d.n * (d.H + d.KV) * d.hd / d.t : 0.0;
    s += k * (up + rope_bytes / hbm_bw(hw));
  }
  if (recomputes(pc, ts, RecomputeModule::mlp) && d.F > 0) {
    const double f_in = (d.gated ? 2.0 : 1.0) * d.F / d.t;
    const double gemms = gemm_time_s(hw, ts.dtype, d.n, f_in, d.h) + gemm_time_s(hw, ts.dtype, d.n, d.h, d.F / d.t);
    s += k * (gemms + kAct * d.n * d.F / d.t * (d.gated ? 3.0 : 2.0) / hbm_bw(hw));
    tp = 0.5 * lt.tp_comm_fwd_s;
  }
  lt.recompute_s = s;
  lt.tp_comm_recompute_s = tp;
  if (ex && ts.recompute_modules != module_bit(RecomputeModule::core_attn))
    note_step(ex, "recompute per layer (Megatron --recompute-modules)",
              "layernorm: 2 norms' bytes / HBM; mla_up_proj: q/kv up-projection GEMMs + RoPE; mlp: FC1 + FC2 GEMMs + "
              "activation, and the MLP's TP collectives; core_attn: the unfused core",
              "Megatron-LM core_v0.19.0 transformer_config.py recompute_modules; DeepSeek-V3 report §3.2.3",
              {{"modules_mask", double(ts.recompute_modules)}, {"tp_comm_recompute_s", tp}}, s, "s");
}

}  // namespace layer_detail

}  // namespace planner
