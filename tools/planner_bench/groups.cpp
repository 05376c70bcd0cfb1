// Process groups, buffer sizes and data patterns shared by every backend.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "backend.h"

namespace planner::bench {

namespace {

// 2, 4, 8, ... up to n, plus n itself when it is not a power of two.
std::vector<std::int64_t> sizes_up_to(std::int64_t n, bool all_sizes) {
  std::vector<std::int64_t> out;
  if (n < 2) return out;
  if (all_sizes)
    for (std::int64_t g = 2; g <= n; g *= 2) out.push_back(g);
  if (out.empty() || out.back() != n) out.push_back(n);
  return out;
}

}  // namespace

NodeLayout make_layout(const std::vector<std::string>& host_of_rank, std::int64_t ranks_per_node_override) {
  NodeLayout l;
  l.world_size = std::int64_t(host_of_rank.size());
  for (const std::string& h : host_of_rank)
    if (std::find(l.hosts.begin(), l.hosts.end(), h) == l.hosts.end()) l.hosts.push_back(h);
  if (ranks_per_node_override > 0) {
    if (l.world_size % ranks_per_node_override != 0)
      throw std::runtime_error(
          fmt::format("--ranks-per-node {} does not divide the {} ranks", ranks_per_node_override, l.world_size));
    l.emulated = true;
    l.ranks_per_node = ranks_per_node_override;
    l.nodes = l.world_size / ranks_per_node_override;
    for (std::int64_t r = 0; r < l.world_size; ++r) {
      l.node_of.push_back(r / ranks_per_node_override);
      l.local_of.push_back(r % ranks_per_node_override);
    }
    return l;
  }
  std::vector<std::int64_t> count(l.hosts.size(), 0);
  for (const std::string& h : host_of_rank) {
    const auto node = std::int64_t(std::find(l.hosts.begin(), l.hosts.end(), h) - l.hosts.begin());
    l.node_of.push_back(node);
    l.local_of.push_back(count[std::size_t(node)]++);
  }
  for (std::size_t i = 1; i < count.size(); ++i)
    if (count[i] != count[0])
      throw std::runtime_error(
          fmt::format("hosts run different numbers of ranks ({}: {}, {}: {}); launch the same number per node "
                      "or give --ranks-per-node",
                      l.hosts[0], count[0], l.hosts[i], count[i]));
  l.nodes = std::int64_t(l.hosts.size());
  l.ranks_per_node = count.empty() ? 1 : count[0];
  return l;
}

std::vector<GroupConfig> make_group_configs(const NodeLayout& l, bool world, bool intra, bool inter, bool all_sizes) {
  std::vector<GroupConfig> out;
  const std::int64_t W = l.world_size, N = l.nodes, R = l.ranks_per_node;
  if (world && W >= 2) {
    GroupConfig g;
    g.kind = GroupKind::world;
    g.size = W;
    g.ranks_per_node = R;
    g.nodes = N;
    g.color.assign(std::size_t(W), 0);
    for (std::int64_t r = 0; r < W; ++r) g.member.push_back(r);
    out.push_back(g);
  }
  // Groups inside a node: g consecutive local ranks (the world already is the
  // whole node on one node).
  if (intra)
    for (std::int64_t gs : sizes_up_to(R, all_sizes)) {
      if (N == 1 && gs == R && world) continue;
      GroupConfig g;
      g.kind = GroupKind::intra_node;
      g.size = gs;
      g.ranks_per_node = gs;
      g.nodes = 1;
      const std::int64_t per_node = R / gs;
      g.concurrent = N * per_node;
      for (std::int64_t r = 0; r < W; ++r) {
        const std::int64_t node = l.node_of[std::size_t(r)], local = l.local_of[std::size_t(r)];
        const bool in = local < per_node * gs;
        g.color.push_back(in ? node * per_node + local / gs : -1);
        g.member.push_back(in ? local % gs : -1);
      }
      out.push_back(g);
    }
  // One rank per node: the ranks with the same local rank on g consecutive nodes.
  if (inter)
    for (std::int64_t gs : sizes_up_to(N, all_sizes)) {
      if (R == 1 && gs == N && world) continue;
      GroupConfig g;
      g.kind = GroupKind::inter_node;
      g.size = gs;
      g.ranks_per_node = 1;
      g.nodes = gs;
      const std::int64_t per_local = N / gs;
      g.concurrent = R * per_local;
      for (std::int64_t r = 0; r < W; ++r) {
        const std::int64_t node = l.node_of[std::size_t(r)], local = l.local_of[std::size_t(r)];
        const bool in = node < per_local * gs;
        g.color.push_back(in ? local * per_local + node / gs : -1);
        g.member.push_back(in ? node % gs : -1);
      }
      out.push_back(g);
    }
  return out;
}

std::int64_t size_multiplier(Collective c, std::int64_t p) {
  switch (c) {
    case Collective::all_reduce:
    case Collective::send_recv:
      return 1;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all:
      return p;
  }
  return 1;
}

std::int64_t send_elements(Collective c, std::int64_t count, std::int64_t p) {
  return c == Collective::all_gather ? count : count * size_multiplier(c, p);
}

std::int64_t recv_elements(Collective c, std::int64_t count, std::int64_t p) {
  return c == Collective::reduce_scatter ? count : count * size_multiplier(c, p);
}

// Patterns: small exact integers that depend on the sender and the position,
// so a block from the wrong rank or at the wrong offset is caught.
void fill_input(Collective c, std::int64_t count, std::int64_t r, std::int64_t p, std::int32_t* in) {
  const std::int64_t n = send_elements(c, count, p);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t block = i / count, j = i % count;
    std::int64_t v = 0;
    switch (c) {
      case Collective::all_reduce:
        v = (r + 1) + (i % 7);
        break;
      case Collective::all_gather:
        v = r * 1009 + (i % 13);
        break;
      case Collective::reduce_scatter:
        v = (r + 1) * (block + 1) + (j % 5);
        break;
      case Collective::all_to_all:
        v = r * p + block + 3 * (j % 3);
        break;
      case Collective::send_recv:
        v = r * 11 + (i % 17);
        break;
    }
    in[i] = std::int32_t(v);
  }
}

std::string check_output(Collective c, std::int64_t count, std::int64_t r, std::int64_t p, const std::int32_t* out) {
  const std::int64_t n = recv_elements(c, count, p);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t block = i / count, j = i % count;
    std::int64_t want = 0;
    switch (c) {
      case Collective::all_reduce:
        want = p * (p + 1) / 2 + p * (i % 7);
        break;
      case Collective::all_gather:
        want = block * 1009 + (j % 13);
        break;
      case Collective::reduce_scatter:
        want = (r + 1) * p * (p + 1) / 2 + p * (i % 5);
        break;
      case Collective::all_to_all:
        want = block * p + r + 3 * (j % 3);
        break;
      case Collective::send_recv:
        want = ((r + p - 1) % p) * 11 + (i % 17);
        break;
    }
    if (out[i] != std::int32_t(want)) return fmt::format("element {} of {} is {}, expected {}", i, n, out[i], want);
  }
  return {};
}

}  // namespace planner::bench
