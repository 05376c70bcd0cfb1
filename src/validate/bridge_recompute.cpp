#include "validate/bridge_recipes.h"

#include <cmath>
#include <string_view>

#include "planner/model/recompute_modules.h"
#include "validate/row_text.h"

namespace planner::bridge_recipes {

namespace {

using M = RecomputeModule;
constexpr std::uint8_t kMla = module_bit(M::mla_up_proj), kMlp = module_bit(M::mlp);

// One Megatron-Bridge recipe: the row it produced (container release,
// hardware, precision as the summary writes it, GPUs, TP, PP, VP, EP, micro
// and global batch), its recompute_modules (granularity selective in every
// DeepSeek-V3 recipe: deepseek_llm_pretrain.py / perf_recipes/deepseek/
// common.py _deepseek_v3_common), and where it is. The release of each
// container is the Megatron-Bridge tag whose docs/performance-summary.md
// leads with that container's table (v0.2.0: 25.09, v0.2.1: 25.11, v0.3.0:
// 26.02, v0.4.0: 26.02.01, v0.4.2: 26.04.01, v0.5.0: 26.06, v0.6.0: 26.08);
// containers without such a tag (26.04, 26.06.01) take none. The config was
// read by resolving the tag's workload_base_configs dataclass chain, and
// matched on the layout as well as the names.
struct Recipe {
  std::string_view container, hardware, precision;  // precision: the summary's text, or its start ("FP8 (")
  std::int64_t gpus, tp, pp, vp, ep, mbs, gbs;
  std::uint8_t modules;
  std::string_view tag, file, config;
};

constexpr std::string_view kWb25 = "scripts/performance/configs/deepseek/workload_base_configs.py";
constexpr std::string_view kWb26 = "scripts/performance/configs/deepseek/deepseek_workload_base_configs.py";
constexpr std::string_view kGb300 = "src/megatron/bridge/perf_recipes/deepseek/gb300/deepseek_v3.py";
constexpr std::string_view kGb200 = "src/megatron/bridge/perf_recipes/deepseek/gb200/deepseek_v3.py";

// Rows R001-R186 of shared/reference/moe_runs.json match these.
constexpr Recipe kRecipes[] = {
    {"26.08", "GB300", "MXFP8", 256, 1, 2, 8, 32, 1, 4096, 0, "v0.6.0", kGb300,
     "deepseek_v3_pretrain_256gpu_gb300_fp8mx_config"},
    {"26.08", "GB200", "MXFP8", 256, 1, 4, 4, 64, 1, 4096, kMla, "v0.6.0", kGb200,
     "deepseek_v3_pretrain_256gpu_gb200_fp8mx_config"},
    {"26.06", "GB300", "MXFP8", 256, 1, 2, 8, 32, 1, 4096, 0, "v0.5.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2"},
    {"26.06", "GB300", "MXFP8", 256, 1, 2, 8, 32, 1, 15360, 0, "v0.5.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_GBS15360"},
    {"26.06", "GB200", "MXFP8", 256, 1, 4, 4, 64, 1, 4096, kMla, "v0.5.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2"},
    {"26.06", "B300", "MXFP8", 256, 1, 8, 1, 8, 2, 4096, kMla, "v0.5.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2"},
    {"26.04.01", "GB300", "MXFP8", 256, 1, 2, 8, 32, 2, 4096, kMla, "v0.4.2", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2"},
    {"26.04.01", "GB200", "MXFP8", 256, 1, 4, 4, 64, 1, 4096, kMlp, "v0.4.2", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2"},
    {"26.04.01", "B300", "MXFP8", 256, 1, 8, 1, 8, 2, 4096, kMla, "v0.4.2", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2"},
    {"26.04.01", "B200", "MXFP8", 256, 1, 8, 2, 32, 1, 4096, kMla | kMlp, "v0.4.2", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2"},
    {"26.02.01", "GB300", "MXFP8", 256, 1, 2, 8, 32, 2, 4096, kMla, "v0.4.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2"},
    {"26.02.01", "GB200", "MXFP8", 256, 1, 4, 4, 64, 1, 4096, kMlp, "v0.4.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2"},
    {"26.02.01", "B300", "MXFP8", 256, 1, 16, 1, 8, 1, 4096, kMla, "v0.4.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2"},
    {"26.02.01", "B200", "MXFP8", 256, 1, 16, 1, 8, 1, 4096, kMla, "v0.4.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2"},
    {"26.02", "GB300", "MXFP8", 256, 1, 2, 8, 32, 2, 4096, kMla, "v0.3.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V2"},
    {"26.02", "GB200", "MXFP8", 256, 1, 4, 4, 64, 1, 4096, kMla, "v0.3.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2"},
    {"26.02", "B300", "MXFP8", 256, 1, 16, 1, 8, 1, 4096, kMla, "v0.3.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2"},
    {"26.02", "B200", "MXFP8", 256, 1, 16, 1, 8, 1, 4096, kMla, "v0.3.0", kWb26,
     "DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2"},
    {"25.11", "B200", "FP8-MX", 256, 1, 16, 1, 8, 1, 2048, kMla, "v0.2.1", kWb25,
     "DEEPSEEK_V3_B200_FP8_MX_BASE_CONFIG"},
    // 25.09 gives no precision; the FP8-CS and FP8-MX configs agree on the modules.
    {"25.09", "GB200", "FP8 (", 256, 1, 4, 4, 64, 1, 2048, kMla, "v0.2.0", kWb25,
     "DEEPSEEK_V3_GB200_FP8_CS_BASE_CONFIG"},
    {"25.09", "B200", "FP8 (", 256, 1, 16, 1, 8, 1, 2048, kMla, "v0.2.0", kWb25, "DEEPSEEK_V3_B200_FP8_CS_BASE_CONFIG"},
    {"25.09", "H100", "FP8 (", 1024, 2, 8, 4, 64, 1, 8192, kMla | kMlp, "v0.2.0", kWb25,
     "DEEPSEEK_V3_H100_FP8_CS_BASE_CONFIG"},
};

// A whole number field (vp written 4.0); -1 when absent or not whole.
std::int64_t whole(const nlohmann::json& row, const char* key, std::int64_t absent) {
  const nlohmann::json* v = row_text::field(row, key);
  if (!v) return absent;
  if (!v->is_number()) return -1;
  const double d = v->get<double>();
  return d == std::floor(d) ? std::int64_t(d) : -1;
}

}  // namespace

std::optional<RecipeRecompute> recipe_recompute(const nlohmann::json& row) {
  if (row_text::text(row, "model") != "DeepSeek-V3") return std::nullopt;
  const std::string container = row_text::text(row, "container"), hardware = row_text::text(row, "hardware"),
                    precision = row_text::text(row, "precision");
  for (const Recipe& r : kRecipes) {
    if (r.container != container || r.hardware != hardware || precision.rfind(r.precision, 0) != 0) continue;
    if (r.precision != "FP8 (" && precision != r.precision) continue;
    if (whole(row, "gpus", -1) != r.gpus || whole(row, "tp", -1) != r.tp || whole(row, "pp", -1) != r.pp ||
        whole(row, "vp", 1) != r.vp || whole(row, "ep", -1) != r.ep || whole(row, "mbs", -1) != r.mbs ||
        whole(row, "gbs", -1) != r.gbs)
      continue;
    return RecipeRecompute{
        r.modules, "Megatron-Bridge " + std::string(r.tag) + " " + std::string(r.file) + " " + std::string(r.config)};
  }
  return std::nullopt;
}

}  // namespace planner::bridge_recipes
