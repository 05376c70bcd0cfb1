// The numbers NCCL's tuner prices collectives with, by algorithm, protocol,
// link type and GPU generation. Private to model/collectives.cpp.
//
// Facts, not code: transcribed from NVIDIA/nccl src/graph/tuning.cc
// (ncclTunerConstantsDefaults, nvlsEfficiency, treeCorrectionFactor) and
// src/include/comm.h, device.h (thread thresholds and counts) at NCCL 2.30.7
// (github.com/NVIDIA/nccl, commit 5067397c2676d5aed50042fc39e5c8ee96eb0027).
// The latency and bandwidth tables are unchanged since NCCL 2.19 apart from
// the Blackwell rows and PAT. Units: microseconds and GB/s (1e9 B/s), as NCCL
// keeps them; collectives.cpp converts.
#pragma once

#include <array>

namespace planner::nccl {

// NCCL's index orders: algorithms Tree, Ring, CollNetDirect, CollNetChain,
// NVLS, NVLSTree, PAT; protocols LL, LL128, Simple.
enum Algo { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat, kNumAlgos };
enum Proto { kLL, kLL128, kSimple, kNumProtos };
using PerProto = std::array<double, kNumProtos>;
using PerAlgo = std::array<PerProto, kNumAlgos>;

// baseLatencies (us): once per collective.
inline constexpr PerAlgo kBaseLatencyUs{{
    {6.8, 14.0, 8.4},  // Tree
    {6.6, 14.0, 8.4},  // Ring
    {0, 0, 0},         // CollNetDirect
    {0, 0, 0},         // CollNetChain
    {0, 0, 0},         // NVLS
    {0, 0, 0},         // NVLSTree
    {8.0, 8.0, 8.0},   // PAT
}};

// hwLatencies (us) per step over NVLink (intra-node) and the network.
inline constexpr PerAlgo kNvlinkLatencyUs{{
    {0.6, 1.25, 4.0},  // Tree
    {0.6, 1.9, 3.4},   // Ring
    {0, 0, 3.7},       // CollNetDirect
    {0, 0, 2.8},       // CollNetChain
    {0, 0, 25},        // NVLS
    {0, 0, 25},        // NVLSTree
    {0, 0, 4.0},       // PAT
}};
inline constexpr PerAlgo kNetLatencyUs{{
    {5.0, 8.5, 14},    // Tree
    {2.7, 4.0, 14.0},  // Ring
    {0, 0, 31},        // CollNetDirect
    {0, 0, 30},        // CollNetChain
    {0, 0, 18},        // NVLS
    {0, 0, 20.9},      // NVLSTree
    {0, 0, 14},        // PAT
}};

// Generations in NCCL's compute-capability index order (Volta, Ampere,
// Hopper, Blackwell); columns are 1 node, 2 nodes, more than 2 nodes.
using PerNodes = std::array<double, 3>;
inline constexpr std::array<PerNodes, 4> kPerChannelMaxRingLL128Bw{{
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
inline constexpr std::array<PerNodes, 4> kPerChannelMaxTreeLL128Bw{{
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
inline constexpr std::array<PerNodes, 4> kPerChannelMaxTreeBw{{
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
inline constexpr std::array<PerNodes, 4> kPerChannelMaxNvlsTreeBw{{
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};

// llMaxBws: the LL protocol's total bandwidth cap. One node: by generation
// (column 0 of the generation's row); across nodes: by host CPU vendor (row 0
// Intel, row 1 AMD), columns 1 (2 nodes) and 2 (more).
inline constexpr std::array<PerNodes, 4> kLLMaxBw{{
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}}};

// nvlsEfficiency by generation (NVLS exists from Hopper on).
inline constexpr std::array<double, 4> kNvlsEfficiency{0.0, 0.0, 0.85, 0.74};

// treeCorrectionFactor: tree all-reduce bandwidth by protocol and size,
// index log2(bytes / 64), sizes 64 B .. 256 MiB; 1 outside.
inline constexpr std::array<std::array<double, 24>, kNumProtos> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

// Protocol bandwidth factors of the tuner: ring LL 1/2, ring LL128 0.92
// (120/128), tree all-reduce 0.92, tree LL 1/3.8, tree LL128 120/128 across
// nodes and 7/9 in one node, PAT 0.75, CollNetDirect 0.85 from Hopper on.
inline constexpr double kRingLLFactor = 0.5, kRingLL128Factor = 0.92, kTreeAllReduceFactor = 0.92,
                        kTreeLLFactor = 1.0 / 3.8, kTreeLL128NetFactor = 120.0 / 128.0,
                        kTreeLL128NvlinkFactor = 7.0 / 9.0, kPatFactor = 0.75, kCollNetHopperFactor = 0.85;
// Multi-node ring Simple all-reduce "plateau": latency x1.4 (x1.9 before
// Ampere) once bytes / (channels * ranks) >= 64.
inline constexpr double kRingPlateau = 1.4, kRingPlateauPreAmpere = 1.9;
// Network post overhead per intra-node ring step when the ring spans nodes:
// 1 us (Intel and other hosts), 2 us (AMD); x3 for Simple.
inline constexpr double kNetOverheadIntelUs = 1.0, kNetOverheadAmdUs = 2.0, kNetOverheadSimpleFactor = 3.0;
// CollNetDirect arity serialisation, per local rank.
inline constexpr double kCollNetArityUs = 0.4;
// PAT all-gather / reduce-scatter (one GPU per node): the network latency
// per tree level divided by 3.5, plus 2.8 us per rank.
inline constexpr double kPatLevelDivisor = 3.5, kPatPerRankUs = 2.8;

// Channel count by size (src/enqueue.cc topoGetAlgoInfo): ring and tree use
// fewer channels while bytes < channels * threads * threshold. Threads per
// channel: LL and Simple 512, LL128 640 (device.h); thresholds (comm.h):
// LL 8 (ring: x ranks), LL128 8, Simple 64.
inline constexpr PerProto kMaxThreads{512, 640, 512};
inline constexpr PerProto kThreadThreshold{8, 8, 64};

// Point-to-point channels to a peer on another node (src/graph/paths.cc
// ncclTopoGetNchannels / ncclTopoComputeP2pChannels, NCCL >= 2.29): at least
// one per local NIC and enough to drive the NICs at NCCL_P2P_PER_CHANNEL_NET_BW
// GB/s each; across nodes then halved while channels x ceil(ranks / 8) exceeds
// the communicator's p2p channels (8 = NCCL_MAX_DEV_WORK_P2P_PER_BATCH,
// device.h), so that every peer fits in one round.
// One message is cut into parts of at least half a chunk across nodes (an
// eighth in a node) and at most one chunk (32 chunks in a node), where a chunk
// is NCCL_P2P_NET_CHUNKSIZE 128 KiB / NCCL_P2P_NVL_CHUNKSIZE 512 KiB (init.cc;
// x2 on Arm Blackwell hosts, not modelled); src/enqueue.cc addP2pToPlan.
inline constexpr double kP2pPerChannelNetBw = 14.0;
inline constexpr int kMaxP2pPerBatch = 8;
inline constexpr double kP2pNetChunkBytes = 128.0 * 1024, kP2pNvlChunkBytes = 512.0 * 1024;
// NCCL's bandwidth of one NVLink by generation (src/graph/topo.h SM70/SM80/
// SM90/SM100_NVLINK_BW, GB/s): taken as what one p2p channel moves over
// NVLink (an approximation: NCCL counts two channels per link of the path).
inline constexpr std::array<double, 4> kNvlinkBwPerLink{20.0, 20.0, 20.6, 40.1};

// Ring channels across nodes (NCCL 2.29.2, v2.29.2-1): src/graph/search.cc
// ncclTopoCompute searches one ring per NIC at the fastest speed of its
// inter-node speed array (GB/s) that the NIC carries; ncclTopoDupChannels then
// doubles the rings (halving their speed) when the speed is >= 25 GB/s, except
// on Hopper and later with a speed below 50 GB/s and more than 4 rings;
// src/graph/connect.cc ncclTopoPostset runs two CTAs per searched ring and, on
// Hopper and later across nodes with rings faster than 45 GB/s, doubles again
// below 16 CTAs ("4 compute channels per search channel to reach peak BW on
// <8 PPN"). Arrays: speedArrayInter (Volta, Ampere), sm90SpeedArrayInter,
// sm100SpeedArrayInter.
inline constexpr std::array<double, 19> kSpeedInterPreHopper{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                                            7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 17> kSpeedInterHopper{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                         15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 18> kSpeedInterBlackwell{96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                                            17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr double kDupMinSpeed = 25.0, kDupHopperSpeed = 50.0, kDupHopperMaxRings = 4;
inline constexpr double kCtaDoubleSpeed = 45.0, kCtaDoubleBelow = 16;

// NVLS channels on Hopper (src/transport/nvls.cc NVLS_NCHANNELS_SM90; 32 on
// Blackwell, NVLS_NCHANNELS_SM100).
inline constexpr std::array<double, 4> kNvlsChannels{0, 0, 16, 32};

}  // namespace planner::nccl
