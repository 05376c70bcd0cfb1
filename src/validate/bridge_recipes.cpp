#include "validate/bridge_recipes.h"

#include "validate/row_text.h"
#include "validate/row_words.h"

#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace planner::bridge_recipes {

using row_text::contains;
using row_text::lower;
using row_text::text;

namespace {

// "26.04.01" -> 2604, "25.09" -> 2509; 0 when the row names no container.
int container_version(const nlohmann::json& row) {
  const std::string c = text(row, "container");
  int yy = 0, mm = 0;
  if (std::sscanf(c.c_str(), "%d.%d", &yy, &mm) != 2 || yy < 20 || mm < 1 || mm > 12) return 0;
  return yy * 100 + mm;
}

// The GPU family the recipes are keyed by (their `gpu` argument).
std::string gpu_family(const std::string& hardware) {
  const std::string h = lower(hardware);
  for (const char* g : {"gb300", "gb200", "b300", "b200", "h100"})
    if (h.rfind(g, 0) == 0) return g;
  return "";
}

// DeepSeek-V3's token dispatcher and all-to-all overlap by container and GPU,
// as the recipe of that release sets them (NVIDIA-NeMo/Megatron-Bridge):
// - 25.09, Bridge v0.1.0rc4 scripts/performance/run_script.py: H100 enables
//   DeepEP and the 1F1B A2A overlap (overlap_moe_expert_parallel_comm,
//   delay_wgrad_compute); B200 and GB200 run token-drop without DeepEP.
// - 25.11, v0.2.0 configs/deepseek/workload_base_configs.py: H100 deepep +
//   moe_a2a_overlap; GB200 and GB300 moe_flex_dispatcher_backend hybridep.
// - 26.02 to 26.04.01, v0.3.0 / v0.4.0 deepseek_workload_base_configs.py:
//   hybridep on B200, B300, GB200, GB300, moe_a2a_overlap False; except the
//   B200 MXFP8 layout PP8 VP2 EP32 (commit 5acef9309, "b200 DSv3 better
//   cfg", 2026-04-18): deepep with moe_a2a_overlap True.
// - 26.06 on, v0.5.0: hybridep; GB200 and GB300 MXFP8 add the full-iteration
//   CUDA graph and moe_a2a_overlap True (commits 8af195c0a, afb5dd47c).
// HybridEP (DeepEP's hybrid-ep kernels) is priced as `--a2a deepep`: one
// fused NVLink + RDMA kernel sending a token once per remote node.
void deepseek_v3_dispatcher(const nlohmann::json& row, MeasuredRun& r) {
  const int v = container_version(row);
  const std::string gpu = gpu_family(r.gpu_type);
  const SearchPins& p = r.pins;
  const bool mxfp8 = r.training.dtype == DType::fp8 && contains(lower(text(row, "precision")), "mx");
  bool deepep = false, overlap = false;
  std::string recipe;
  if (gpu == "h100" && (v == 2509 || v == 2511)) {
    deepep = overlap = true;
    recipe = v == 2509 ? "v0.1.0rc4 run_script.py (25.09)" : "v0.2.0 (25.11)";
  } else if ((gpu == "gb200" || gpu == "gb300") && v >= 2511) {
    deepep = true;
    overlap = v >= 2606 && mxfp8;
    recipe = v >= 2606 ? "v0.5.0 (26.06 on)" : v >= 2602 ? "v0.3.0-v0.4.0 (26.02-26.04)" : "v0.2.0 (25.11)";
  } else if ((gpu == "b200" || gpu == "b300") && v >= 2602) {
    deepep = true;
    overlap = gpu == "b200" && mxfp8 && p.pp == 8 && p.virtual_stages == 2 && p.ep == 32;
    recipe = overlap ? "5acef9309 (B200 MXFP8 PP8 VP2 EP32)" : "v0.3.0-v0.5.0 (26.02 on)";
  }
  if (deepep && r.training.a2a != A2aBackend::deepep) {
    r.training.a2a = A2aBackend::deepep;
    r.assumptions.push_back(
        fmt::format("DeepEP/HybridEP dispatcher (not stated; Megatron-Bridge {}, DeepSeek-V3 on {})", recipe, gpu));
  }
  if (overlap && !r.training.overlap_a2a) {
    r.training.overlap_a2a = true;
    r.assumptions.push_back(fmt::format(
        "all-to-all overlapped with compute (not stated; Megatron-Bridge {}, DeepSeek-V3 on {})", recipe, gpu));
  }
}

// Qwen3 MoE (30B-A3B, 235B-A22B), as the recipes of 25.11 on set it
// (v0.2.0 configs/qwen3/workload_base_configs.py, v0.3.0-v0.5.0
// configs/qwen/qwen3_workload_base_configs.py, v0.6.0 perf_recipes/qwen/):
// H100 moe_a2a_overlap / overlap_moe_expert_parallel_comm True with the
// default all-to-all dispatcher; GB200 and GB300 hybridep. B200 and B300
// change between releases and layouts: left to the row.
void qwen3_dispatcher(const nlohmann::json& row, MeasuredRun& r) {
  if (container_version(row) < 2511) return;
  const std::string gpu = gpu_family(r.gpu_type);
  if (gpu == "h100" && !r.training.overlap_a2a) {
    r.training.overlap_a2a = true;
    r.assumptions.push_back(
        "all-to-all overlapped with compute (not stated; Megatron-Bridge v0.2.0-v0.6.0, Qwen3 MoE on h100)");
  } else if ((gpu == "gb200" || gpu == "gb300") && r.training.a2a != A2aBackend::deepep) {
    r.training.a2a = A2aBackend::deepep;
    r.assumptions.push_back(
        fmt::format("DeepEP/HybridEP dispatcher (not stated; Megatron-Bridge v0.2.0-v0.6.0, Qwen3 MoE on {})", gpu));
  }
}

}  // namespace

bool is_bridge_row(const nlohmann::json& row) {
  const std::string s = text(row, "source");
  return row_words::names(s, "megatronbridge") && row_words::names(s, "performancesummary");
}

void apply(const nlohmann::json& row, MeasuredRun& r) {
  if (!is_bridge_row(row)) return;
  // Megatron-Bridge's performance scripts run Transformer Engine's fused
  // cross-entropy: v0.1.0rc4 (25.09) sets cross_entropy_fusion_impl "te" in
  // its Llama 3 and DeepSeek-V3 configs and model providers, v0.2.0 on in
  // scripts/performance/utils (helpers.py, overrides.py) for every recipe,
  // with the providers' cross_entropy_loss_fusion True.
  if (r.training.loss_kernel != LossKernel::te) {
    r.training.loss_kernel = LossKernel::te;
    r.assumptions.push_back(
        "Transformer Engine's fused cross-entropy (not stated; Megatron-Bridge performance scripts, v0.1.0rc4 on)");
  }
  if (r.model.name == "deepseek-v3") deepseek_v3_dispatcher(row, r);
  if (r.model.name.rfind("qwen3-", 0) == 0) qwen3_dispatcher(row, r);
}

}  // namespace planner::bridge_recipes
