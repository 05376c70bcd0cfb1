// calibrate's text helpers (calibration.h): sizes in human units, a device
// name's chip key (family and memory size) and form factor for the device
// check, group sizes as a list.
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "planner/calibrate/calibration.h"

namespace planner {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  // Four significant digits: 33554400 B (an all-gather size rounded to the
  // ranks) is "32 MiB", 1.5 KiB stays "1.5 KiB".
  return fmt::format("{:.4g} {}", b, units[u]);
}

std::string device_key(const std::string& device) {
  std::string family, memory;
  std::string word;
  auto take = [&] {
    std::string w;
    for (char ch : word) w += char(std::toupper(static_cast<unsigned char>(ch)));
    word.clear();
    const bool digit = w.find_first_of("0123456789") != std::string::npos;
    if (!digit) return;
    const bool gb = w.size() > 2 && w.substr(w.size() - 2) == "GB" && w.find_first_not_of("0123456789") == w.size() - 2;
    if (gb) {
      if (memory.empty()) memory = w;
    } else if (family.empty() && w.rfind("SXM", 0) != 0 && w.rfind("HBM", 0) != 0 && w.rfind("PCIE", 0) != 0 &&
               w.rfind("NVL", 0) != 0) {
      family = w;
    }
  };
  for (char ch : device) {
    if (std::isspace(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '(' || ch == ')')
      take();
    else
      word += ch;
  }
  take();
  if (family.empty()) return "";
  return memory.empty() ? family : family + " " + memory;
}

std::string device_form_factor(const std::string& device) {
  bool pcie = false, nvl = false, sxm = false, hbm = false;
  std::string word;
  auto take = [&] {
    std::string w;
    for (char ch : word) w += char(std::toupper(static_cast<unsigned char>(ch)));
    word.clear();
    pcie = pcie || w == "PCIE";
    nvl = nvl || w == "NVL";  // not NVL72: a rack, whose trays are SXM-class boards
    sxm = sxm || w.rfind("SXM", 0) == 0;
    hbm = hbm || w.rfind("HBM", 0) == 0;
  };
  for (char ch : device) {
    if (std::isspace(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '(' || ch == ')' || ch == ',')
      take();
    else
      word += ch;
  }
  take();
  if (pcie) return "PCIe";
  if (nvl) return "NVL";
  return sxm || hbm ? "SXM" : "";
}

std::string join_sizes(const std::vector<std::int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

}  // namespace planner
