// Variant, config and image selection rules for bundle launches.
#include "tessel/runtime/bundle_select.hpp"

#include <algorithm>
#include <bit>

namespace tessel::rt {

std::vector<uint16_t> variant_order(const BundleKernelInfo& k, std::string_view config) {
  std::vector<uint16_t> order;
  for (size_t i = 0; i < k.variants.size(); ++i)
    if (k.variants[i].config == config) order.push_back(static_cast<uint16_t>(i));
  auto assumptions = [&](uint16_t i) {
    return std::popcount(k.variants[i].div16) + std::popcount(k.variants[i].equal1);
  };
  std::stable_sort(order.begin(), order.end(), [&](uint16_t a, uint16_t b) { return assumptions(a) > assumptions(b); });
  return order;
}

int select_variant(const BundleKernelInfo& k, std::string_view config, ArgFacts facts, std::span<const uint8_t> usable) {
  for (uint16_t i : variant_order(k, config)) {
    if (!usable.empty() && !usable[i]) continue;
    if (satisfies(facts, k.variants[i].div16, k.variants[i].equal1)) return i;
  }
  return -1;
}

int matching_rule(const TunedTable& t, std::span<const int64_t> key_values) {
  for (size_t r = 0; r < t.rules.size(); ++r) {
    const auto& ranges = t.rules[r].ranges;
    bool match = ranges.size() == key_values.size();
    for (size_t i = 0; match && i < key_values.size(); ++i)
      match = key_values[i] >= ranges[i].first && key_values[i] <= ranges[i].second;
    if (match) return static_cast<int>(r);
  }
  return -1;
}

int select_config(const BundleKernelInfo& k, std::span<const int64_t> key_values) {
  const int rule = matching_rule(k.tuned, key_values);
  const std::string& name = rule >= 0 ? k.tuned.rules[rule].config : k.default_config;
  for (size_t c = 0; c < k.configs.size(); ++c)
    if (k.configs[c].name == name) return static_cast<int>(c);
  return -1;
}

int pick_image(std::span<const BundleImage> images, int device_sm) {
  int best = -1, best_rank = -1;
  for (size_t i = 0; i < images.size(); ++i) {
    bool accel = false;
    auto sm = parse_sm(images[i].arch, &accel);
    if (!sm) continue;
    int rank = -1;
    if (images[i].kind == ImageKind::Cubin) {
      bool runs = accel ? *sm == device_sm : (*sm / 10 == device_sm / 10 && *sm <= device_sm);
      if (runs) rank = 10000 + *sm * 2 + (accel ? 1 : 0);
    } else {
      bool runs = accel ? *sm == device_sm : *sm <= device_sm;
      if (runs) rank = *sm * 2 + (accel ? 1 : 0);
    }
    if (rank > best_rank) best = static_cast<int>(i), best_rank = rank;
  }
  return best;
}

}  // namespace tessel::rt
