// model_math: exact parameter counts and FLOPs per token. Expected values are
// the published counts (Llama 3 paper, arXiv:2407.21783, Table 3; Hugging Face config.json of each model) and the
// closed forms evaluated here from each model's dimensions, independently of count_params' per-tensor sum.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/io/json_io.h"
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
    CHECK_FALSE(m.source.empty());  // docs/models.md: the parser makes it optional, stock models cite one
    const ParamCounts p = count_params(m);
    CHECK(p.total > 0);
    CHECK(p.dense_layers + p.moe_layers == m.num_layers);
    CHECK(p.total == p.dense_layers * p.dense_layer + p.moe_layers * p.moe_layer + p.embedding + p.output +
                         p.position + p.final_norm);
    if (!m.is_moe()) CHECK(p.total == m.num_layers * p.per_layer + p.embedding + p.output + p.position + p.final_norm);
    if (!m.is_moe()) CHECK(p.active == p.total);
    if (m.expected_active_params > 0) CHECK(p.active == m.expected_active_params);
    if (m.expected_params > 0) CHECK(p.total == m.expected_params);
    if (is_gpt_style(m)) CHECK(p.total == gpt_formula(m));
    if (m.ffn_kind == FfnKind::swiglu && m.norm == NormKind::rmsnorm && !m.bias && !m.tied_embeddings &&
        !m.is_moe() && !m.is_mla() && !m.qkv_bias && !m.qk_norm)
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

namespace {
// Hugging Face modules, summed by hand: an expert/dense SwiGLU MLP of width f is 3*h*f;
// attention GQA h*H*hd + 2*h*KV*hd + H*hd*h; two RMSNorms 2h; final norm h; untied 2*V*h.
struct MoeRow {
  const char* name;
  std::int64_t total, active;  // published exact / computed from the config (the model file's "source")
  std::int64_t moe_layers;
  std::int64_t attention;      // one layer
  std::int64_t routed, shared, router;
};
}  // namespace

TEST_CASE("MoE models: exact total and active parameter counts", "[model_math][moe]") {
  const MoeRow rows[] = {
      // Mixtral 8x7B: attention 2*4096^2 + 2*4096*1024 = 41943040; experts 8*3*4096*14336; router 4096*8.
      {"mixtral-8x7b", 46'702'792'704, 12'879'925'248, 32, 41'943'040, 1'409'286'144, 0, 32'768},
      {"mixtral-8x22b", 140'620'634'112, 39'152'031'744, 56, 88'080'384, 2'415'919'104, 0, 49'152},
      // Qwen3: GQA + QK-norm 2*128; 128 experts of 3*h*f.
      {"qwen3-30b-a3b", 30'532'122'624, 3'353'032'704, 48, 2048 * 4096 * 2 + 2 * 2048 * 512 + 256, 603'979'776, 0,
       262'144},
      {"qwen3-235b-a22b", 235'093'634'560, 22'190'763'520, 94, 4096 * 8192 * 2 + 2 * 4096 * 512 + 256,
       2'415'919'104, 0, 524'288},
      // Llama 4: 16 / 128 experts of 3*5120*8192 = 125829120, one shared expert of the same width.
      {"llama4-scout", 107'769'861'120, 17'172'894'720, 48, 5120 * 5120 * 2 + 2 * 5120 * 1024, 2'013'265'920,
       125'829'120, 81'920},
      {"llama4-maverick", 400'711'848'960, 17'184'691'200, 24, 5120 * 5120 * 2 + 2 * 5120 * 1024, 16'106'127'360,
       125'829'120, 655'360},
      // DeepSeek-V3 MLA: q_a 7168*1536 + 1536 + q_b 1536*128*192 + kv_a 7168*576 + 512 + kv_b 512*128*256
      // + o 128*128*7168 = 187107328; router 7168*256 + 256 (e_score_correction_bias).
      {"deepseek-v3", 671'026'419'200, 37'552'297'472, 58, 187'107'328, 11'274'289'152, 44'040'192, 1'835'264},
      // DeepSeek-V2: same MLA at h=5120; 160 experts of 3*5120*1536, 2 shared.
      {"deepseek-v2", 235'741'434'880, 21'375'800'320, 59,
       5120 * 1536 + 1536 + 1536 * 128 * 192 + 5120 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 5120, 3'774'873'600,
       47'185'920, 819'200},
  };
  for (const MoeRow& r : rows) {
    SECTION(r.name) {
      const ModelSpec m = find_model(r.name, kDir);
      const ParamCounts p = count_params(m);
      const std::int64_t h = m.hidden_size, V = m.vocab_size;
      CHECK(m.is_moe());
      CHECK(p.total == r.total);
      CHECK(p.active == r.active);
      CHECK(m.expected_params == r.total);
      CHECK(m.expected_active_params == r.active);
      CHECK(p.moe_layers == r.moe_layers);
      CHECK(p.attention_per_layer == r.attention);
      CHECK(p.routed_experts_per_moe_layer == r.routed);
      CHECK(p.shared_experts_per_moe_layer == r.shared);
      CHECK(p.router_per_moe_layer == r.router);
      // Independent sum: dense layers with their FFN, MoE layers with experts and router.
      const std::int64_t dense = r.attention + 2 * h + 3 * h * m.ffn_hidden_size;
      const std::int64_t moe = r.attention + 2 * h + r.routed + r.shared + r.router;
      CHECK((m.num_layers - r.moe_layers) * dense + r.moe_layers * moe + 2 * V * h + h == r.total);
      const std::int64_t unused = r.moe_layers * (m.moe.num_experts - m.moe.top_k) * 3 * h * m.moe.expert_ffn_hidden_size;
      CHECK(r.total - unused == r.active);
      // 6N counts what a token uses: active layers + the output projection.
      CHECK(p.matmul == r.active - V * h - h);
    }
  }
}

TEST_CASE("which layers are MoE: first dense layers, then every layer_freq-th", "[model_math][moe]") {
  const ModelSpec v3 = find_model("deepseek-v3", kDir);
  CHECK_FALSE(is_moe_layer(v3, 2));  // first_k_dense_replace 3
  CHECK(is_moe_layer(v3, 3));
  CHECK(is_moe_layer(v3, 60));
  CHECK(count_moe_layers(v3) == 58);
  const ModelSpec mav = find_model("llama4-maverick", kDir);
  // Hugging Face Llama 4: moe_layers = range(step - 1, L, step) = 1, 3, ..., 47.
  CHECK_FALSE(is_moe_layer(mav, 0));
  CHECK(is_moe_layer(mav, 1));
  CHECK(is_moe_layer(mav, 47));
  CHECK(count_moe_layers(mav) == 24);
  CHECK(count_moe_layers(find_model("llama8b", kDir)) == 0);
}

TEST_CASE("DeepSeek-V3 MTP module: 671B main model + MTP = the 685B checkpoint", "[model_math][moe]") {
  const ModelSpec m = find_model("deepseek-v3", kDir);
  const ParamCounts p = count_params(m);
  // enorm + hnorm + final norm 3*7168, eh_proj 2*7168*7168, one MoE layer 11507286272.
  CHECK(p.moe_layer == 11'507'286'272);
  CHECK(p.mtp == 3 * 7168 + 2 * 7168 * 7168 + 11'507'286'272);
  // With the checkpoint's own copies of embedding and head (2*V*h): DeepSeek's "14B of MTP", 685B in all.
  const std::int64_t mtp_in_checkpoint = p.mtp + 2 * m.vocab_size * m.hidden_size;
  CHECK(mtp_in_checkpoint == 13'463'426'304);
  CHECK(double(p.total + mtp_in_checkpoint) == Approx(684.5e9).epsilon(1e-3));
}

TEST_CASE("Qwen2.5-72B: QKV-only bias gives the published 72,706,203,648", "[model_math]") {
  // Hugging Face Qwen/Qwen2.5-72B config.json: 80 layers, hidden 8192, intermediate 29568, 64 heads, 8 KV heads,
  // vocab 152064, untied, biases on q/k/v only (issue 16: 72,712,245,248 counted with all biases).
  ModelSpec m;
  m.num_layers = 80;
  m.hidden_size = 8192;
  m.ffn_hidden_size = 29568;
  m.num_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim = 128;
  m.vocab_size = 152064;
  m.qkv_bias = true;
  CHECK(count_params(m).total == 72'706'203'648);
  m.qkv_bias = false;
  CHECK(count_params(m).total == 72'706'203'648 - 80 * (8192 + 2 * 1024));
}

namespace {
// A model row's derived Megatron GFLOP/token (computed in moe_runs.json, moe.md §1.1).
double gflop(const ModelSpec& m, std::int64_t seq) {
  return flops_per_token(m, seq, Recompute::none).model / 1e9;
}
}  // namespace

TEST_CASE("MoE FLOPs: Megatron-LM's formula matches moe_runs.json's derived figures", "[model_math][moe]") {
  // Every row with a derived megatron_formula figure, by model name and sequence length.
  const auto rows = read_json_file(kDir + "/tests/validation/moe_runs.json");
  const std::pair<const char*, const char*> names[] = {
      {"DeepSeek-V3", "deepseek-v3"}, {"Mixtral-8x7B", "mixtral-8x7b"}, {"Mixtral-8x22B", "mixtral-8x22b"},
      {"DeepSeek-V2", "deepseek-v2"}};
  int checked = 0;
  for (const auto& row : rows) {
    const auto& d = row.value("derived", nlohmann::json::object());
    if (!d.contains("megatron_formula_GFLOP_per_token_noMTP") || !row["seq_len"].is_number()) continue;
    for (const auto& [label, name] : names) {
      if (row["model"] != label) continue;
      INFO(row["id"].get<std::string>());
      ModelSpec m = find_model(name, kDir);
      m.mtp_layers = 0;
      CHECK(gflop(m, row["seq_len"]) ==
            Approx(d["megatron_formula_GFLOP_per_token_noMTP"].get<double>()).epsilon(0.005));
      ++checked;
    }
  }
  CHECK(checked >= 40);
}

TEST_CASE("DeepSeek-V3 with its MTP module: the ~260 GFLOP/token NVIDIA's TFLOP/s imply", "[model_math][moe]") {
  const ModelSpec m = find_model("deepseek-v3", kDir);
  ModelSpec no_mtp = m;
  no_mtp.mtp_layers = 0;
  // moe_runs.json's MTP1 figure, 257.6, omits the MTP layer's MLP, which Megatron-LM counts since d4f9a6f
  // (2025-04: num_moe_layers += last_layer_is_moe * mtp_num_layers): 6*h*3*(8*2048 + 2048) = 2.378 GFLOP.
  const double mtp_mlp = 6.0 * 7168 * 3 * (8 * 2048 + 2048) / 1e9;
  CHECK(gflop(m, 4096) == Approx(257.6 + mtp_mlp).epsilon(0.0005));
  // The median of the rows' implied TFLOP/s / tokens/s without "w/o MTP" in their label is 260.0.
  CHECK(gflop(m, 4096) == Approx(260.0).epsilon(0.005));
  CHECK(gflop(no_mtp, 4096) == Approx(249.8).epsilon(0.0005));
  // Router not counted in model FLOPs, but executed: 6 * h * E per MoE layer (58 + the MTP layer).
  const FlopsPerToken f = flops_per_token(m, 4096, Recompute::none);
  CHECK(f.router == 6.0 * 59 * 7168 * 256);
  CHECK(f.hardware - 6.0 * f.gemm_weights - f.attention_executed == Approx(f.router).epsilon(1e-12));
}

TEST_CASE("MoE FLOPs of the other models against moe.md §1.3", "[model_math][moe]") {
  // moe.md §1.3 item 3: a re-implementation of Megatron's formula gives Qwen3-235B 148.0, Qwen3-30B 23.0,
  // Llama 4 Scout or Maverick at 8K 108.9 GFLOP/token (4K for Qwen3).
  CHECK(gflop(find_model("qwen3-235b-a22b", kDir), 4096) == Approx(148.0).epsilon(0.005));
  CHECK(gflop(find_model("qwen3-30b-a3b", kDir), 4096) == Approx(23.0).epsilon(0.005));
  CHECK(gflop(find_model("llama4-scout", kDir), 8192) == Approx(108.9).epsilon(0.005));
  CHECK(gflop(find_model("llama4-maverick", kDir), 8192) == Approx(108.9).epsilon(0.005));
  // Top-k experts execute, not all: hardware FLOPs of Mixtral 8x7B without the attention core and router are
  // 6 x (attention + 2 of 8 experts + logits), not 6 x all parameters.
  const ModelSpec mix = find_model("mixtral-8x7b", kDir);
  const FlopsPerToken f = flops_per_token(mix, 4096, Recompute::none);
  const double per_layer = 4096.0 * 4096 * 2 + 2.0 * 4096 * 1024 + 2 * 3.0 * 4096 * 14336;
  CHECK(f.gemm_weights == 32 * per_layer + 32000.0 * 4096);
  // 6N's N counts the same top-k experts (plus the norms and router, which Megatron's GEMM count leaves out).
  CHECK(f.matmul_params == 32 * (per_layer + 2 * 4096.0 + 4096.0 * 8) + 32000.0 * 4096);
}

TEST_CASE("architecture_of keeps every field but the names and source", "[model_math]") {
  // Every field away from its default, so a field architecture_of forgets shows here.
  ModelSpec m;
  m.name = "a-model-name-longer-than-small-string-storage";
  m.aliases = {"alias-one", "alias-two"};
  m.display_name = "A Model";
  m.source = "a citation";
  m.num_layers = 7;
  m.hidden_size = 11;
  m.ffn_hidden_size = 13;
  m.ffn_kind = FfnKind::gelu;
  m.num_heads = 17;
  m.num_kv_heads = 19;
  m.head_dim = 23;
  m.vocab_size = 29;
  m.tied_embeddings = true;
  m.norm = NormKind::layernorm;
  m.bias = true;
  m.dropout = true;
  m.position = PositionKind::learned;
  m.max_position_embeddings = 31;
  m.default_seq_len = 37;
  m.default_global_batch_tokens = 41;
  m.expected_params = 43;
  m.qkv_bias = true;
  m.qk_norm = true;
  m.moe = MoeSpec{47, 53, 59, 61, 67, 71, 73, RouterScore::sigmoid, true};
  m.mla = MlaSpec{79, 83, 89, 97, 101};
  m.mtp_layers = 103;
  m.expected_active_params = 107;
  const ModelSpec a = architecture_of(m);
  CHECK(a.name.empty());
  CHECK(a.aliases.empty());
  CHECK(a.display_name.empty());
  CHECK(a.source.empty());
  ModelSpec named = a;
  named.name = m.name;
  named.aliases = m.aliases;
  named.display_name = m.display_name;
  named.source = m.source;
  CHECK(named == m);
  const ModelSpec v3 = find_model("deepseek-v3", kDir);
  ModelSpec v3_named = architecture_of(v3);
  v3_named.name = v3.name;
  v3_named.aliases = v3.aliases;
  v3_named.display_name = v3.display_name;
  v3_named.source = v3.source;
  CHECK(v3_named == v3);
}
