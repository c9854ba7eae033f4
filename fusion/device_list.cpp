#include "hfta/fusion/device_list.h"

#include <set>
#include <sstream>
#include <stdexcept>

#include <torch/cuda.h>

namespace hfta::fusion {
namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

int parse_index(const std::string& entry, const std::string& digits) {
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
      digits.size() > 4) {
    throw std::invalid_argument("device '" + entry + "': expected cuda:N with N a GPU index");
  }
  return std::stoi(digits);
}

}  // namespace

std::vector<c10::Device> parse_device_list(const std::string& spec) {
  return parse_device_list(spec, static_cast<int>(torch::cuda::device_count()));
}

std::vector<c10::Device> parse_device_list(const std::string& spec, int cuda_device_count) {
  std::vector<c10::Device> devices;
  std::set<std::string> seen;
  std::stringstream in(spec);
  std::string raw;
  while (std::getline(in, raw, ',')) {
    const std::string entry = trim(raw);
    if (entry == "cpu") {
      devices.emplace_back(c10::kCPU);
    } else if (entry == "cuda" || entry.rfind("cuda:", 0) == 0) {
      if (cuda_device_count == 0) {
        throw std::invalid_argument("device '" + entry +
                                    "': no CUDA GPU is visible to this build of LibTorch "
                                    "(use --device cpu)");
      }
      if (entry == "cuda") {
        for (int i = 0; i < cuda_device_count; ++i) devices.emplace_back(c10::kCUDA, i);
      } else {
        const int index = parse_index(entry, entry.substr(5));
        if (index >= cuda_device_count) {
          throw std::invalid_argument("device '" + entry + "': only " +
                                      std::to_string(cuda_device_count) +
                                      " CUDA GPU(s) are visible (cuda:0 to cuda:" +
                                      std::to_string(cuda_device_count - 1) + ")");
        }
        devices.emplace_back(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
      }
    } else {
      throw std::invalid_argument("device '" + entry +
                                  "': expected cpu, cuda or cuda:N (comma-separated)");
    }
  }
  if (devices.empty()) {
    throw std::invalid_argument("device list is empty: expected cpu, cuda or cuda:N,...");
  }
  for (const auto& d : devices) {
    if (!seen.insert(d.str()).second) {
      throw std::invalid_argument("device '" + d.str() + "' is listed twice");
    }
  }
  const bool has_cpu = seen.count("cpu") > 0;
  if (has_cpu && devices.size() > 1) {
    throw std::invalid_argument("cpu cannot be combined with GPUs in one device list");
  }
  return devices;
}

std::string to_string(const std::vector<c10::Device>& devices) {
  std::string out;
  for (const auto& d : devices) {
    if (!out.empty()) out += ",";
    out += d.str();
  }
  return out;
}

}  // namespace hfta::fusion
