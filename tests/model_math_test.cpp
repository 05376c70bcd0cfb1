// model_math: exact parameter counts and FLOPs per token. Expected values are
// the published counts (Llama 3 paper, arXiv:2407.21783, Table 3; Hugging Face config.json of each model) and the
// closed forms evaluated here from each model's dimensions, independently of count_params' per-tensor sum.
#include <cstdint>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "planner/io/catalog.h"
#include "planner/model/model_math.h"

using namespace planner;

namespace {
const std::string kDir = PLANNER_SOURCE_DIR;

// Dense Llama (modules of transformers' modeling_llama.py): L(d*H*hd + 2d*KV*hd + H*hd*d + 3dF + 2d) + 2Vd + d.
std::int64_t llama_formula(const ModelSpec& m) {
  const std::int64_t L = m.num_layers, d = m.hidden_size, H = m.num_heads, KV = m.num_kv_heads, hd = m.head_dim,
                     F = m.ffn_hidden_size, V = m.vocab_size;
  return L * (d * H * hd + 2 * d * KV * hd + H * hd * d + 3 * d * F + 2 * d) + 2 * V * d + d;
}

// GPT (Narayanan et al. 2021, arXiv:2104.04473, §5.1; LayerNorm, 4h GELU, biases, tied, learned
// positions): L(12h^2 + 13h) + Vh + sh, plus 2h for the final LayerNorm.
std::int64_t gpt_formula(const ModelSpec& m) {
  const std::int64_t L = m.num_layers, h = m.hidden_size, V = m.vocab_size, s = m.max_position_embeddings;
  return L * (12 * h * h + 13 * h) + V * h + s * h + 2 * h;
}

bool is_gpt_style(const ModelSpec& m) {
  return m.ffn_kind == FfnKind::gelu && m.norm == NormKind::layernorm && m.bias && m.tied_embeddings &&
         m.position == PositionKind::learned && m.ffn_hidden_size == 4 * m.hidden_size &&
         m.num_heads * m.head_dim == m.hidden_size && m.num_kv_heads == m.num_heads;
}
}  // namespace

TEST_CASE("Llama 3.1 parameter counts equal the published exact counts", "[model_math]") {
  struct Row {
    const char* name;
    std::int64_t published;  // Llama 3 paper / model cards
  };
  const Row rows[] = {
      {"llama8b", 8'030'261'248},
      {"llama70b", 70'553'706'496},
      {"llama405b", 405'853'388'800},
  };
  for (const Row& r : rows) {
    SECTION(r.name) {
      const ModelSpec m = find_model(r.name, kDir);
      const ParamCounts p = count_params(m);
      CHECK(p.total == r.published);
      CHECK(llama_formula(m) == r.published);
      CHECK(m.expected_params == r.published);
      // Untied: N for 6N is everything but the input lookup and the final norm.
      CHECK(p.matmul == r.published - m.vocab_size * m.hidden_size - m.hidden_size);
    }
  }
}

TEST_CASE("Llama 3.1 8B per-layer count, tensor by tensor", "[model_math]") {
  // h=4096, H=32, KV=8, hd=128, F=14336:
  // Q 4096*4096 = 16777216, K+V 2*4096*1024 = 8388608, O 16777216 -> 41943040;
  // FFN 3*4096*14336 = 176160768; two RMSNorms 8192; layer 218112000.
  const ParamCounts p = count_params(find_model("llama8b", kDir));
  CHECK(p.attention_per_layer == 41'943'040);
  CHECK(p.ffn_per_layer == 176'160'768);
  CHECK(p.norms_per_layer == 8'192);
  CHECK(p.per_layer == 218'112'000);
  CHECK(p.embedding == 525'336'576);  // 128256 * 4096
  CHECK(p.output == 525'336'576);
  CHECK(p.final_norm == 4'096);
}

TEST_CASE("GPT-3 175B follows L(12h^2+13h) + Vh + sh + 2h", "[model_math]") {
  const ModelSpec m = find_model("gpt3-175b", kDir);
  // 96*(12*12288^2 + 13*12288) = 173961510912; V*h = 50257*12288 = 617558016;
  // s*h = 2048*12288 = 25165824; 2h = 24576.
  const std::int64_t expected = 173'961'510'912 + 617'558'016 + 25'165'824 + 24'576;
  CHECK(expected == 174'604'259'328);
  CHECK(gpt_formula(m) == expected);
  CHECK(count_params(m).total == expected);
}

TEST_CASE("every stock model parses and its count matches its closed form", "[model_math]") {
  const auto models = list_models(kDir);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(kDir + "/models"))
    if (e.path().extension() == ".json") ++files;
  REQUIRE(models.size() == files);
  REQUIRE(files >= 4);
  for (const ModelSpec& m : models) {
    INFO(m.name);
    const ParamCounts p = count_params(m);
    CHECK(p.total > 0);
    CHECK(p.total == m.num_layers * p.per_layer + p.embedding + p.output + p.position + p.final_norm);
    if (m.expected_params > 0) CHECK(p.total == m.expected_params);
    if (is_gpt_style(m)) CHECK(p.total == gpt_formula(m));
    if (m.ffn_kind == FfnKind::swiglu && m.norm == NormKind::rmsnorm && !m.bias && !m.tied_embeddings)
      CHECK(p.total == llama_formula(m));
    // Every model is findable by its canonical name and each alias.
    CHECK(find_model(m.name, kDir) == m);
    for (const auto& a : m.aliases) CHECK(find_model(a, kDir) == m);
  }
}

TEST_CASE("FLOPs per token: Megatron-LM's model FLOPs, PaLM's, and what executes", "[model_math]") {
  const ModelSpec m = find_model("llama8b", kDir);
  const ParamCounts p = count_params(m);
  const double T = 8192, L = 32, H = 32, Q = 128, h = 4096, KV = 8, F = 14336, V = 128256;
  const double N = double(p.matmul);
  const double attn = 12.0 * L * H * Q * T;  // integers far below 2^53: exact in double
  // Megatron-LM transformer_flops: 12*B*s*L*h^2*(1 + KV/H + s/(2h) + 3F/(2h)) + 6*B*s*h*V for Llama 3.1 8B
  // (SwiGLU, kv_channels*heads == h), per token.
  const double megatron = 12.0 * L * h * h * (1 + KV / H + T / (2 * h) + 1.5 * F / h) + 6.0 * h * V;
  const double layer_w = h * H * Q + 2 * h * KV * Q + H * Q * h + 3 * h * F;
  struct Row {
    Recompute r;
    AttentionKernel a;
    double recompute;  // Korthikanti et al. 2022 §5, counting only what runs
    double attention_executed;
  };
  const Row rows[] = {
      {Recompute::none, AttentionKernel::flash, 0.0, 7.0 * L * H * Q * T},
      {Recompute::selective, AttentionKernel::flash, 0.0, 7.0 * L * H * Q * T},  // flash stores nothing to drop
      {Recompute::selective, AttentionKernel::unfused, 4.0 * L * H * Q * T, 12.0 * L * H * Q * T},
      {Recompute::full, AttentionKernel::flash, 2.0 * L * layer_w + 2.0 * L * H * Q * T, 7.0 * L * H * Q * T},
      {Recompute::full, AttentionKernel::unfused, 2.0 * L * layer_w + 4.0 * L * H * Q * T, 12.0 * L * H * Q * T},
  };
  for (const Row& r : rows) {
    const FlopsPerToken f = flops_per_token(m, 8192, r.r, r.a);
    CHECK(f.matmul_params == N);
    CHECK(f.dense == 6.0 * N);
    CHECK(f.attention == attn);
    CHECK(f.palm == 6.0 * N + attn);
    CHECK(f.model == Approx(megatron).epsilon(1e-12));
    CHECK(f.recompute == Approx(r.recompute).epsilon(1e-12));
    CHECK(f.attention_executed == Approx(r.attention_executed).epsilon(1e-12));
    CHECK(f.hardware == Approx(6.0 * (L * layer_w + V * h) + r.attention_executed + r.recompute).epsilon(1e-12));
  }
}

TEST_CASE("tied embeddings count the matrix once but use it for the output GEMM", "[model_math]") {
  const ModelSpec m = find_model("gpt3-175b", kDir);
  const ParamCounts p = count_params(m);
  CHECK(p.output == 0);
  CHECK(p.matmul == m.num_layers * p.per_layer + m.vocab_size * m.hidden_size);
}
