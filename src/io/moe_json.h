// The Mixture-of-Experts and multi-head-latent-attention parts of a model file
// ("moe", "mla", "qkv_bias", "qk_norm", "mtp_layers", "expected_active_params";
// docs/models.md): read with their cross-field checks, and written back only
// when present so that dense files round-trip unchanged. Internal to
// json_io.cpp.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/field_reader.h"
#include "planner/spec/specs.h"

namespace planner::detail {

// Reads the optional MoE/MLA fields of a model object into `m` (whose dense
// fields are already read; head_dim may still be 0 = default). Problems are
// appended as "field: message".
void read_moe_fields(FieldReader& r, std::vector<std::string>& problems, ModelSpec& m);

// Cross-field checks once every field is sane: top_k against num_experts,
// first_dense_layers and layer_freq against num_layers, MLA head dims,
// expected_active_params only on MoE models. May set m.head_dim for MLA.
void check_moe_fields(std::vector<std::string>& problems, ModelSpec& m);

// Adds the MoE/MLA fields to `j`, each only when it differs from a dense model's.
void write_moe_fields(const ModelSpec& m, nlohmann::json& j);

}  // namespace planner::detail
