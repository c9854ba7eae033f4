// A trial's exported weights load back into the plain LibTorch module, and into
// the equivalent torch.nn model in Python with torch.load, computing the same.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <ATen/ATen.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/serialize.h>

#include "hfta/core/trial_export.h"

namespace hfta::core {
namespace {

// Debian's Python, which sees python3-torch (another python3 may come first on PATH).
constexpr const char* kPython = "/usr/bin/python3";

std::string run_python(const std::string& script) {
  std::string out;
  FILE* p = popen((std::string(kPython) + " -c '" + script + "' 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  return out;
}

torch::nn::Sequential mlp() {
  // An MLP with a batch norm, so buffers are exported too; as the zoo's plain forms are.
  return torch::nn::Sequential(torch::nn::Flatten(), torch::nn::Linear(12, 8), torch::nn::BatchNorm1d(8),
                               torch::nn::ReLU(), torch::nn::Dropout(0.5), torch::nn::Linear(8, 3));
}

TEST(TrialExport, WeightsLoadInLibTorchAndStateDictsInPyTorch) {
  const std::string dir = ::testing::TempDir() + "/export-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  torch::manual_seed(3);
  auto model = mlp();
  model->train();
  model->forward(at::randn({16, 1, 3, 4}));  // running statistics move away from their defaults
  model->eval();
  export_weights(model, dir);

  const at::Tensor input = at::arange(24, at::kFloat).reshape({2, 1, 3, 4}) / 24.0;
  const at::Tensor want = model->forward(input);

  auto loaded = mlp();
  torch::load(loaded, dir + "/" + kWeightsFile);
  loaded->eval();
  EXPECT_TRUE(at::equal(loaded->forward(input), want));

  if (run_python("import torch").find("Error") != std::string::npos) {
    GTEST_SKIP() << kPython << " cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  const std::string out = run_python(
      "import torch\n"
      "sd = torch.load(\"" + dir + "/" + kStateDictFile + "\")\n"
      "net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 8), torch.nn.BatchNorm1d(8),\n"
      "                          torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 3))\n"
      "net.load_state_dict(sd)\n"
      "net.eval()\n"
      "y = net(torch.arange(24, dtype=torch.float32).reshape(2, 1, 3, 4) / 24.0)\n"
      "print(\" \".join(repr(v) for v in y.flatten().tolist()))\n");
  std::istringstream values(out);
  const at::Tensor flat = want.flatten();
  for (std::int64_t i = 0; i < flat.numel(); ++i) {
    double v = 0;
    ASSERT_TRUE(values >> v) << "python said: " << out;
    EXPECT_NEAR(v, flat[i].item<double>(), 1e-6) << i;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hfta::core
