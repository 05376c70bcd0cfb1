// hf_import: Hugging Face config.json files (tests/data/hf/, sources in its
// README) mapped to ModelSpec; the dense families' parameter counts equal the
// published figures exactly.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planner/io/catalog.h"
#include "planner/io/hf_import.h"
#include "planner/io/json_io.h"
#include "planner/model/model_math.h"
#include "test_support.h"

using namespace planner;
using planner::testing::error_of;

namespace {
const std::string kHf = std::string(PLANNER_SOURCE_DIR) + "/tests/data/hf/";

// Mistral 7B v0.1's 4096-token sliding window is full attention up to 4096
// tokens: imported there (its default, 8192, is refused: sliding_window).
ModelSpec import(const std::string& file) {
  HfImportOptions o;
  if (file == "mistral-7b-v0.1.json") o.seq_len = 4096;
  return model_from_hf_config(read_json_file(kHf + file), file, o);
}
}  // namespace

TEST_CASE("import-hf: dense families match the published parameter counts", "[hf_import]") {
  const struct {
    const char* file;
    std::int64_t published;
  } cases[] = {
      {"llama3.1-8b.json", 8'030'261'248},     {"llama3.1-70b.json", 70'553'706'496},
      {"qwen2.5-72b.json", 72'706'203'648},    {"qwen2.5-0.5b.json", 494'032'768},
      {"mistral-7b-v0.1.json", 7'241'732'096},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    CHECK(count_params(import(c.file)).total == c.published);
  }
}

TEST_CASE("import-hf: Qwen2 has Q/K/V-only biases, Qwen2.5-0.5B ties its embeddings", "[hf_import]") {
  const ModelSpec q = import("qwen2.5-72b.json");
  CHECK(q.qkv_bias);
  CHECK(!q.bias);
  CHECK(!q.tied_embeddings);
  // The Q/K/V biases: H*hd + 2*KV*hd per layer, nothing on O or the MLP.
  ModelSpec no_bias = q;
  no_bias.qkv_bias = false;
  CHECK(count_params(q).total - count_params(no_bias).total == 80 * (64 * 128 + 2 * 8 * 128));
  const ModelSpec small = import("qwen2.5-0.5b.json");
  CHECK(small.tied_embeddings);
  CHECK(count_params(small).output == 0);
  const ModelSpec llama = import("llama3.1-8b.json");
  CHECK(!llama.qkv_bias);
  CHECK(llama.default_seq_len == 8192);  // rope_scaling.original_max_position_embeddings
  CHECK(llama.head_dim == 128);
  CHECK(llama.num_kv_heads == 8);
  CHECK(llama.ffn_kind == FfnKind::swiglu);
}

TEST_CASE("import-hf: dense models round-trip through the model file", "[hf_import]") {
  for (const char* f : {"llama3.1-8b.json", "qwen2.5-72b.json", "qwen2.5-0.5b.json", "mistral-7b-v0.1.json"}) {
    INFO(f);
    const ModelSpec m = import(f);
    CHECK(model_from_json(to_json(m), f) == m);
  }
}

TEST_CASE("import-hf: MoE and MLA families fill moe, mla, qk_norm and mtp_layers", "[hf_import]") {
  const ModelSpec mix = import("mixtral-8x7b-v0.1.json");
  CHECK(mix.moe.num_experts == 8);
  CHECK(mix.moe.top_k == 2);
  CHECK(mix.moe.expert_ffn_hidden_size == 14336);
  CHECK(mix.moe.first_dense_layers == 0);
  const ModelSpec qwen = import("qwen3-30b-a3b.json");
  CHECK(qwen.moe.num_experts == 128);
  CHECK(qwen.moe.top_k == 8);
  CHECK(qwen.moe.expert_ffn_hidden_size == 768);
  CHECK(qwen.moe.layer_freq == 1);
  CHECK(qwen.qk_norm);
  CHECK(qwen.head_dim == 128);  // not hidden_size / heads = 64
  const ModelSpec ds = import("deepseek-v3.json");
  CHECK(ds.moe.num_experts == 256);
  CHECK(ds.moe.num_shared_experts == 1);
  CHECK(ds.moe.first_dense_layers == 3);
  CHECK(ds.moe.expert_ffn_hidden_size == 2048);
  CHECK(ds.moe.router_score == RouterScore::sigmoid);
  CHECK(ds.moe.router_bias);
  CHECK(ds.mla.q_lora_rank == 1536);
  CHECK(ds.mla.kv_lora_rank == 512);
  CHECK(ds.mla.qk_rope_head_dim == 64);
  CHECK(ds.mla.v_head_dim == 128);
  CHECK(ds.mtp_layers == 1);
  CHECK(ds.ffn_hidden_size == 18432);
  CHECK(ds.default_seq_len == 4096);
}

TEST_CASE("import-hf: DeepSeek fields whose transformers default is not 0 are required", "[hf_import]") {
  const nlohmann::json j = read_json_file(kHf + "deepseek-v3.json");
  for (const char* key : {"n_shared_experts", "first_k_dense_replace", "moe_layer_freq"}) {
    nlohmann::json bad = j;
    bad.erase(key);
    INFO(key);
    CHECK(error_of([&] {
            (void)model_from_hf_config(bad, "c.json");
          }).find(std::string("c.json: ") + key + ": missing (expected an integer") == 0);
  }
  nlohmann::json bad = j;
  bad.erase("q_lora_rank");
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: q_lora_rank: missing (expected an integer >= 1, or null for queries projected directly)");
  bad["q_lora_rank"] = nullptr;  // DeepSeek-V2-Lite: queries projected directly
  CHECK(model_from_hf_config(bad, "c.json").mla.q_lora_rank == 0);
}

TEST_CASE("import-hf: DeepSeek's MoE layers are modeling_deepseek.py's, or the import is refused", "[hf_import]") {
  // modeling_deepseek.py DeepseekV3DecoderLayer: layer i is MoE iff
  // i >= first_k_dense_replace and i % moe_layer_freq == 0.
  const nlohmann::json j = read_json_file(kHf + "deepseek-v3.json");
  const auto hf_moe = [](std::int64_t layers, std::int64_t first_k, std::int64_t freq) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < layers; ++i)
      if (i >= first_k && i % freq == 0) out.push_back(i);
    return out;
  };
  for (const std::int64_t first_k : {1, 2, 3, 4, 5, 7}) {
    for (const std::int64_t freq : {1, 2, 3, 4}) {
      nlohmann::json c = j;
      c["first_k_dense_replace"] = first_k;
      c["moe_layer_freq"] = freq;
      INFO("first_k_dense_replace " << first_k << ", moe_layer_freq " << freq);
      const ModelSpec m = model_from_hf_config(c, "c.json");
      std::vector<std::int64_t> planner;
      for (std::int64_t i = 0; i < m.num_layers; ++i)
        if (is_moe_layer(m, i)) planner.push_back(i);
      CHECK(planner == hf_moe(61, first_k, freq));
      CHECK(count_moe_layers(m) == std::int64_t(planner.size()));
    }
  }
  // DeepSeek-V3's own config: first_k_dense_replace 3, moe_layer_freq 1, written as is.
  CHECK(import("deepseek-v3.json").moe.first_dense_layers == 3);
  // first_k_dense_replace 0, moe_layer_freq 2: HF makes layers 0, 2, ..., 60 MoE (31), not 1, 3, ..., 59.
  nlohmann::json c = j;
  c["first_k_dense_replace"] = 0;
  c["moe_layer_freq"] = 2;
  CHECK(error_of([&] { (void)model_from_hf_config(c, "c.json"); }) ==
        "c.json: moe_layer_freq: 2 with first_k_dense_replace 0 makes layers 0, 2, 4, ... MoE (modeling_deepseek.py: "
        "layer_idx % moe_layer_freq == 0); the planner's MoE layers are the last of every layer_freq, so this "
        "placement cannot be described");
  c["moe_layer_freq"] = 1;  // every layer MoE: describable
  CHECK(count_moe_layers(model_from_hf_config(c, "c.json")) == 61);
}

TEST_CASE("import-hf: a null n_shared_experts is refused, not reported missing", "[hf_import]") {
  nlohmann::json j = read_json_file(kHf + "deepseek-v3.json");
  j["n_shared_experts"] = nullptr;
  CHECK(error_of([&] { (void)model_from_hf_config(j, "c.json"); }) ==
        "c.json: n_shared_experts: null is not accepted (expected an integer >= 0; write 0 for no shared experts)");
  j["n_shared_experts"] = 0;
  CHECK(model_from_hf_config(j, "c.json").moe.num_shared_experts == 0);
  nlohmann::json l = read_json_file(kHf + "llama3.1-8b.json");
  l["intermediate_size"] = nullptr;
  CHECK(error_of([&] { (void)model_from_hf_config(l, "c.json"); }) ==
        "c.json: intermediate_size: null is not accepted (expected an integer >= 1)");
}

TEST_CASE("import-hf: a sliding window shorter than the sequence is refused, naming sliding_window", "[hf_import]") {
  const nlohmann::json mistral = read_json_file(kHf + "mistral-7b-v0.1.json");
  // Mistral 7B v0.1: window 4096, default length min(32768, 8192) = 8192.
  CHECK(error_of([&] { (void)model_from_hf_config(mistral, "c.json"); }) ==
        "c.json: sliding_window: 4096 is shorter than the sequence length 8192: sliding-window attention is not "
        "modelled (import with --seq-len 4096 or less to price it as the full attention it is there)");
  HfImportOptions o;
  o.seq_len = 4096;
  const ModelSpec m = model_from_hf_config(mistral, "c.json", o);
  CHECK(m.source.find("; sliding_window 4096 not modelled: full attention, exact up to 4096 tokens") !=
        std::string::npos);
  // MistralConfig's default window is 4096: a missing one is that, not none.
  nlohmann::json bad = mistral;
  bad.erase("sliding_window");
  CHECK(error_of([&] {
          (void)model_from_hf_config(bad, "c.json");
        }).find("c.json: sliding_window: 4096 (missing: MistralConfig's default) is shorter than") == 0);
  bad["sliding_window"] = nullptr;  // null: no window
  CHECK(model_from_hf_config(bad, "c.json").source.find("sliding_window") == std::string::npos);
  // Mixtral: null (its config's and MixtralConfig's default); a window is checked as Mistral's.
  nlohmann::json mix = read_json_file(kHf + "mixtral-8x7b-v0.1.json");
  CHECK(model_from_hf_config(mix, "c.json").source.find("sliding_window") == std::string::npos);
  mix["sliding_window"] = 4096;
  CHECK(error_of([&] { (void)model_from_hf_config(mix, "c.json"); }).find("c.json: sliding_window: 4096 is") == 0);
  // Qwen2.5: sliding_window 131072 with use_sliding_window false: unused.
  nlohmann::json qwen = read_json_file(kHf + "qwen2.5-72b.json");
  qwen["sliding_window"] = 4096;
  CHECK(model_from_hf_config(qwen, "c.json").source.find("sliding_window") == std::string::npos);
  qwen["use_sliding_window"] = true;  // on from layer max_window_layers 80 of 80: no layer windowed
  CHECK(model_from_hf_config(qwen, "c.json").source.find("sliding_window") == std::string::npos);
  qwen["max_window_layers"] = 40;
  CHECK(error_of([&] { (void)model_from_hf_config(qwen, "c.json"); }).find("c.json: sliding_window: 4096 is") == 0);
  qwen["sliding_window"] = 32768;  // at least the 8192-token sequence: full attention there
  CHECK(model_from_hf_config(qwen, "c.json").source.find("; sliding_window 32768 not modelled") != std::string::npos);
}

TEST_CASE("import-hf: --name must be a model name, a derived one is made one", "[hf_import]") {
  nlohmann::json j = read_json_file(kHf + "llama3.1-8b.json");
  for (const char* bad : {"../x", "Bad Name", ".hidden", "a/b"}) {
    HfImportOptions o;
    o.name = bad;
    CHECK(error_of([&] { (void)model_from_hf_config(j, "c.json", o); }) ==
          std::string("--name: expected lower-case letters, digits, '.', '-' or '_', starting with a letter or "
                      "digit, got '") +
              bad + "'");
  }
  j["_name_or_path"] = "org/My Model+v2";
  CHECK(model_from_hf_config(j, "c.json").name == "my-model-v2");
}

TEST_CASE("import-hf: no max_position_embeddings and no rope_scaling needs --seq-len", "[hf_import]") {
  nlohmann::json j = read_json_file(kHf + "llama3.1-8b.json");
  j.erase("max_position_embeddings");
  j.erase("rope_scaling");
  CHECK(error_of([&] { (void)model_from_hf_config(j, "c.json"); }) ==
        "c.json: max_position_embeddings: missing, and no rope_scaling.original_max_position_embeddings: the "
        "sequence length is unknown (give --seq-len)");
  HfImportOptions o;
  o.seq_len = 4096;
  CHECK(model_from_hf_config(j, "c.json", o).default_seq_len == 4096);
}

TEST_CASE("import-hf: unknown architectures and missing fields are one-line errors", "[hf_import]") {
  nlohmann::json j = read_json_file(kHf + "llama3.1-8b.json");
  nlohmann::json bad = j;
  bad["model_type"] = "gpt2";
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: model_type: unsupported architecture 'gpt2' (supported: llama, qwen2, qwen3, mistral, mixtral, "
        "qwen3_moe, deepseek_v3)");
  bad = j;
  bad.erase("model_type");
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: model_type: missing (expected the model family, as transformers writes it, e.g. \"llama\")");
  bad = j;
  bad.erase("intermediate_size");
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: intermediate_size: missing (expected an integer >= 1)");
  bad = j;
  bad["num_key_value_heads"] = 5;
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: num_key_value_heads: expected a divisor of num_attention_heads 32, got 5");
  bad = j;
  bad["hidden_act"] = "relu";
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: hidden_act: expected silu or gelu (a gated MLP), got 'relu'");
  bad = j;
  bad["attention_bias"] = true;
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }).find("c.json: attention_bias: biases on") == 0);
  bad = j;
  bad.erase("num_key_value_heads");  // transformers: defaults to the attention heads
  CHECK(model_from_hf_config(bad, "c.json").num_kv_heads == 32);
  // Fields checked whether or not they decide the default length (Llama 3.1
  // has rope_scaling), and rope_scaling itself.
  bad = j;
  bad["max_position_embeddings"] = 0;
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: max_position_embeddings: expected an integer >= 1, got 0");
  bad = j;
  bad["rope_scaling"] = "linear";
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }).find("c.json: rope_scaling: expected an object") ==
        0);
  bad = j;
  bad["rope_scaling"]["original_max_position_embeddings"] = 0;
  CHECK(error_of([&] { (void)model_from_hf_config(bad, "c.json"); }) ==
        "c.json: rope_scaling: original_max_position_embeddings: expected an integer >= 1, got 0");
}

TEST_CASE("import-hf: the model file's own checks name the config and its key", "[hf_import]") {
  nlohmann::json ds = read_json_file(kHf + "deepseek-v3.json");
  ds["first_k_dense_replace"] = 61;
  CHECK(error_of([&] { (void)model_from_hf_config(ds, "c.json"); }) ==
        "c.json: first_k_dense_replace: expected fewer than num_layers 61, got 61 (the planner model's "
        "moe.first_dense_layers)");
  nlohmann::json j = read_json_file(kHf + "llama3.1-8b.json");
  HfImportOptions o;
  o.seq_len = 3;
  o.global_batch_tokens = 10;  // not whole sequences
  CHECK(error_of([&] { (void)model_from_hf_config(j, "c.json", o); }) ==
        "--global-batch-tokens: expected a multiple of the default sequence length 3 (--seq-len), got 10");
}

// Each MoE/MLA fixture against the stock model file of the same model
// (models/*.json, whose expected_params / expected_active_params are the
// published counts and a load error when count_params disagrees).
TEST_CASE("import-hf: MoE families match the stock models and their published counts", "[hf_import]") {
  const struct {
    const char* file;
    const char* stock;
  } cases[] = {{"mixtral-8x7b-v0.1.json", "mixtral-8x7b"},
               {"qwen3-30b-a3b.json", "qwen3-30b-a3b"},
               {"deepseek-v3.json", "deepseek-v3"}};
  for (const auto& c : cases) {
    INFO(c.file);
    const ModelSpec m = import(c.file);
    const ModelSpec stock = find_model(c.stock, PLANNER_SOURCE_DIR);
    CHECK(m.moe == stock.moe);
    CHECK(m.mla == stock.mla);
    CHECK(m.qk_norm == stock.qk_norm);
    CHECK(m.mtp_layers == stock.mtp_layers);
    CHECK(m.head_dim == stock.head_dim);
    CHECK(count_params(m).total == stock.expected_params);
    CHECK(count_params(m).active == stock.expected_active_params);
    CHECK(model_from_json(to_json(m), c.file) == m);  // the file import-hf writes reads back the same
  }
  // Mixtral-8x7B: 46,702,792,704 (safetensors metadata); Qwen3-30B-A3B 30.5B / 3.3B (model card).
  CHECK(count_params(import("mixtral-8x7b-v0.1.json")).total == 46'702'792'704);
  CHECK(count_params(import("qwen3-30b-a3b.json")).total == 30'532'122'624);
}
