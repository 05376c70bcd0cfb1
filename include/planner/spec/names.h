// The names of every enum of the specs, one constexpr table per enum: the
// text JSON files, CLI flags and reports use for each value. to_string()
// and parse_name() read these tables, so each name is written once.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "planner/spec/specs.h"

namespace planner {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

inline constexpr EnumName<FfnKind> kFfnKindNames[] = {{FfnKind::swiglu, "swiglu"},
                                                      {FfnKind::geglu, "geglu"},
                                                      {FfnKind::gelu, "gelu"},
                                                      {FfnKind::relu, "relu"},
                                                      {FfnKind::squared_relu, "squared_relu"}};
inline constexpr EnumName<NormKind> kNormKindNames[] = {{NormKind::rmsnorm, "rmsnorm"},
                                                        {NormKind::layernorm, "layernorm"}};
inline constexpr EnumName<PositionKind> kPositionKindNames[] = {
    {PositionKind::rope, "rope"}, {PositionKind::learned, "learned"}, {PositionKind::alibi, "alibi"}};
inline constexpr EnumName<Topology> kTopologyNames[] = {{Topology::switched, "switch"}, {Topology::torus, "torus"}};
inline constexpr EnumName<NcclGeneration> kNcclGenerationNames[] = {{NcclGeneration::none, "none"},
                                                                    {NcclGeneration::volta, "volta"},
                                                                    {NcclGeneration::ampere, "ampere"},
                                                                    {NcclGeneration::hopper, "hopper"},
                                                                    {NcclGeneration::blackwell, "blackwell"}};
inline constexpr EnumName<HostCpu> kHostCpuNames[] = {{HostCpu::intel, "intel"}, {HostCpu::amd, "amd"}};
inline constexpr EnumName<DType> kDTypeNames[] = {{DType::bf16, "bf16"}, {DType::fp8, "fp8"}};
inline constexpr EnumName<AttentionKernel> kAttentionKernelNames[] = {
    {AttentionKernel::flash, "flash"}, {AttentionKernel::unfused, "unfused"}, {AttentionKernel::flash2, "flash2"}};
inline constexpr EnumName<LossKernel> kLossKernelNames[] = {
    {LossKernel::unfused, "unfused"}, {LossKernel::te, "te"}, {LossKernel::flash_attn, "flash-attn"}};
inline constexpr EnumName<OptimizerKernel> kOptimizerKernelNames[] = {{OptimizerKernel::fused, "fused"},
                                                                      {OptimizerKernel::unfused_loop, "unfused-loop"}};
inline constexpr EnumName<Zero3Staging> kZero3StagingNames[] = {
    {Zero3Staging::per_parameter_copies, "per-parameter-copies"}, {Zero3Staging::flat_parameter, "flat-parameter"}};
inline constexpr EnumName<Recompute> kRecomputeNames[] = {
    {Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}};
inline constexpr EnumName<RouterScore> kRouterScoreNames[] = {{RouterScore::softmax, "softmax"},
                                                              {RouterScore::sigmoid, "sigmoid"}};
inline constexpr EnumName<RecomputeModule> kRecomputeModuleNames[] = {
    {RecomputeModule::core_attn, "core_attn"},       {RecomputeModule::layernorm, "layernorm"},
    {RecomputeModule::mla_up_proj, "mla_up_proj"},   {RecomputeModule::moe_act, "moe_act"},
    {RecomputeModule::mlp, "mlp"},                   {RecomputeModule::moe, "moe"},
    {RecomputeModule::shared_experts, "shared_experts"}};
inline constexpr EnumName<A2aBackend> kA2aBackendNames[] = {{A2aBackend::nccl, "nccl"}, {A2aBackend::deepep, "deepep"}};
inline constexpr EnumName<Zero3Gather> kZero3GatherNames[] = {
    {Zero3Gather::layer, "layer"}, {Zero3Gather::tensor, "tensor"}, {Zero3Gather::submodule, "submodule"}};
// In the order they were published (`planner simulate --schedule` lists them so).
inline constexpr EnumName<Schedule> kScheduleNames[] = {{Schedule::gpipe, "gpipe"},
                                                        {Schedule::one_f_one_b, "1f1b"},
                                                        {Schedule::interleaved, "interleaved"},
                                                        {Schedule::zb_h1, "zb-h1"}};

// The table of each enum, found by overload (name_table(Enum{})), so the
// helpers below work for any enum that has one, including those of higher
// layers (views' Format).
constexpr std::span<const EnumName<FfnKind>> name_table(FfnKind) { return kFfnKindNames; }
constexpr std::span<const EnumName<NormKind>> name_table(NormKind) { return kNormKindNames; }
constexpr std::span<const EnumName<PositionKind>> name_table(PositionKind) { return kPositionKindNames; }
constexpr std::span<const EnumName<Topology>> name_table(Topology) { return kTopologyNames; }
constexpr std::span<const EnumName<NcclGeneration>> name_table(NcclGeneration) { return kNcclGenerationNames; }
constexpr std::span<const EnumName<HostCpu>> name_table(HostCpu) { return kHostCpuNames; }
constexpr std::span<const EnumName<DType>> name_table(DType) { return kDTypeNames; }
constexpr std::span<const EnumName<AttentionKernel>> name_table(AttentionKernel) { return kAttentionKernelNames; }
constexpr std::span<const EnumName<LossKernel>> name_table(LossKernel) { return kLossKernelNames; }
constexpr std::span<const EnumName<OptimizerKernel>> name_table(OptimizerKernel) { return kOptimizerKernelNames; }
constexpr std::span<const EnumName<Zero3Staging>> name_table(Zero3Staging) { return kZero3StagingNames; }
constexpr std::span<const EnumName<Recompute>> name_table(Recompute) { return kRecomputeNames; }
constexpr std::span<const EnumName<Schedule>> name_table(Schedule) { return kScheduleNames; }
constexpr std::span<const EnumName<RouterScore>> name_table(RouterScore) { return kRouterScoreNames; }
constexpr std::span<const EnumName<A2aBackend>> name_table(A2aBackend) { return kA2aBackendNames; }
constexpr std::span<const EnumName<Zero3Gather>> name_table(Zero3Gather) { return kZero3GatherNames; }
constexpr std::span<const EnumName<RecomputeModule>> name_table(RecomputeModule) { return kRecomputeModuleNames; }

// The name of `e`; "?" for a value outside the enum.
template <typename Enum>
[[nodiscard]] constexpr std::string_view name_of(Enum e) {
  for (const auto& n : name_table(Enum{}))
    if (n.value == e) return n.name;
  return "?";
}

// The value named `s` (exact match), or nullopt.
template <typename Enum>
[[nodiscard]] constexpr std::optional<Enum> parse_name(std::string_view s) {
  for (const auto& n : name_table(Enum{}))
    if (n.name == s) return n.value;
  return std::nullopt;
}

// The table's entries for `values`, in that order: a flag or field that
// accepts only some values lists them from the one table.
template <typename Enum, std::size_t N>
[[nodiscard]] constexpr std::array<EnumName<Enum>, N> names_for(const Enum (&values)[N]) {
  std::array<EnumName<Enum>, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = {values[i], name_of(values[i])};
  return out;
}

// The schedules a configuration names for the closed form when v == 1
// (interleaved follows from v > 1; only the simulator runs ZB-H1):
// `planner evaluate --schedule` and the regression suite's "schedule".
inline constexpr auto kClosedFormSchedules = names_for({Schedule::one_f_one_b, Schedule::gpipe});

// Every name of a table (or of a subset from names_for), in order: what a
// CLI flag accepts, say.
template <typename Table>
[[nodiscard]] std::vector<std::string> name_list(const Table& table) {
  std::vector<std::string> out;
  for (const auto& n : table) out.emplace_back(n.name);
  return out;
}
template <typename Enum>
[[nodiscard]] std::vector<std::string> name_list() {
  return name_list(name_table(Enum{}));
}

[[nodiscard]] constexpr std::string_view to_string(FfnKind k) { return name_of(k); }
[[nodiscard]] constexpr std::string_view to_string(NormKind k) { return name_of(k); }
[[nodiscard]] constexpr std::string_view to_string(PositionKind k) { return name_of(k); }
[[nodiscard]] constexpr std::string_view to_string(Topology t) { return name_of(t); }
[[nodiscard]] constexpr std::string_view to_string(DType d) { return name_of(d); }
[[nodiscard]] constexpr std::string_view to_string(AttentionKernel a) { return name_of(a); }
[[nodiscard]] constexpr std::string_view to_string(Recompute r) { return name_of(r); }
[[nodiscard]] constexpr std::string_view to_string(Schedule s) { return name_of(s); }
[[nodiscard]] constexpr std::string_view to_string(Zero3Gather g) { return name_of(g); }

}  // namespace planner
