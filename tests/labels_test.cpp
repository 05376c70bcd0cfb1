// The labels of a layout and of a reason set (planner/model/labels.h): the
// exact text reports, errors and titles print.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "planner/io/catalog.h"
#include "planner/model/labels.h"

using namespace planner;

namespace {

ParallelConfig example() {
  ParallelConfig pc;
  pc.tp = 8, pc.cp = 2, pc.pp = 16, pc.dp = 128;
  pc.micro_batch_size = 1;
  pc.virtual_stages = 4;
  pc.recompute = Recompute::full;
  pc.zero_stage = 1;
  pc.sequence_parallel = true;
  return pc;
}

}  // namespace

TEST_CASE("a layout formats in three styles", "[labels]") {
  const ParallelConfig pc = example();
  CHECK(fmt::format("{}", pc) == "tp=8 cp=2 pp=16 dp=128 mbs=1 vpp=4 recompute=full zero=1 sp=on");
  CHECK(fmt::format("{:c}", pc) == "tp8 cp2 pp16 dp128 mbs1 v4 sp rc-full z1");
  CHECK(fmt::format("{:d}", pc) == "TP8 CP2 PP16 DP128");
  CHECK(config_label(pc, 'c') == fmt::format("{:c}", pc));
}

TEST_CASE("the compact style leaves out knobs at their defaults", "[labels]") {
  ParallelConfig pc;  // everything 1, no recompute, ZeRO 0, no SP
  CHECK(fmt::format("{:c}", pc) == "tp1 cp1 pp1 dp1 mbs1");
  CHECK(fmt::format("{}", pc) == "tp=1 cp=1 pp=1 dp=1 mbs=1 vpp=1 recompute=none zero=0 sp=off");
  pc.recompute = Recompute::selective;
  CHECK(fmt::format("{:c}", pc) == "tp1 cp1 pp1 dp1 mbs1 rc-sel");
}

TEST_CASE("a reason set lists its reasons in Reason order", "[labels]") {
  CHECK(fmt::format("{}", ReasonSet{}).empty());
  const auto bit = [](Reason r) { return 1u << unsigned(r); };
  const ReasonSet two{bit(Reason::out_of_memory) | bit(Reason::tp_not_dividing_heads)};
  CHECK(fmt::format("{}", two) ==
        fmt::format("{}; {}", describe(Reason::tp_not_dividing_heads), describe(Reason::out_of_memory)));
  CHECK(fmt::format("{}", two.without(Reason::out_of_memory)) == describe(Reason::tp_not_dividing_heads));
}

TEST_CASE("a reason with its numbers, in the words of the hardware", "[labels]") {
  const ModelSpec m = find_model("llama8b", PLANNER_SOURCE_DIR);
  const HardwareProfile gpu = find_hardware("dgx-h100", PLANNER_SOURCE_DIR);
  const HardwareProfile tpu = find_hardware("tpu-v5e-256", PLANNER_SOURCE_DIR);
  const HardwareProfile a100 = find_hardware("a100", PLANNER_SOURCE_DIR);
  TrainingSpec ts;
  ts.num_gpus = 7;
  ts.seq_len = 8192;
  ts.global_batch_sequences = 500;
  ParallelConfig pc;
  pc.tp = 4, pc.pp = 2, pc.dp = 8;
  CHECK(reason_text(Reason::gpu_count_mismatch, m, gpu, pc, ts) ==
        "tp*cp*pp*dp = 4*1*2*8 = 64 does not equal the GPU count 7");
  CHECK(reason_text(Reason::gpu_count_mismatch, m, tpu, pc, ts) ==
        "tp*cp*pp*dp = 4*1*2*8 = 64 does not equal the chip count 7");
  pc.dp = 16, pc.micro_batch_size = 2;
  CHECK(reason_text(Reason::batch_not_divisible, m, gpu, pc, ts) ==
        "global batch 500 not divisible by dp*mbs = 16*2 = 32");
  ts.global_batch_sequences = 96;
  pc.dp = 16, pc.micro_batch_size = 1, pc.pp = 4, pc.virtual_stages = 2;
  CHECK(reason_text(Reason::interleave_needs_micro_batches, m, gpu, pc, ts) ==
        "interleaved schedule needs a multiple of pp = 4 micro-batches, got 6 (Megatron-LM)");
  CHECK(reason_text(Reason::interleave_needs_micro_batches, m, tpu, pc, ts) ==
        "interleaved schedule needs a multiple of pp = 4 micro-batches, got 6");
  ts.dtype = DType::fp8;
  CHECK(reason_text(Reason::dtype_unsupported, m, a100, pc, ts).find("A100") == 0);
  CHECK(reason_text(Reason::dtype_unsupported, m, a100, pc, ts).find("has no fp8") != std::string::npos);
  CHECK(std::string(device_word(tpu)) == "chip");
  CHECK(std::string(device_word(gpu)) == "GPU");
}
