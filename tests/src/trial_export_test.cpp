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
#include "hfta/trainers/array_classifier.h"
#include "hfta/trainers/bert.h"
#include "hfta/trainers/dcgan.h"
#include "hfta/trainers/mobilenet_v3.h"
#include "hfta/trainers/pointnet.h"
#include "hfta/trainers/resnet18.h"
#include "hfta/trainers/transformer_lm.h"

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

// Runs `script`, which prints a model's outputs as numbers, and compares them with `want`.
void expect_python_prints(const std::string& script, const at::Tensor& want, double tolerance) {
  const std::string out = run_python(script);
  std::istringstream values(out);
  const at::Tensor flat = want.flatten();
  for (std::int64_t i = 0; i < flat.numel(); ++i) {
    double v = 0;
    ASSERT_TRUE(values >> v) << "python said: " << out;
    EXPECT_NEAR(v, flat[i].item<double>(), tolerance) << i;
  }
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
  expect_python_prints(
      "import torch\n"
      "sd = torch.load(\"" + dir + "/" + kStateDictFile + "\")\n"
      "net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 8), torch.nn.BatchNorm1d(8),\n"
      "                          torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 3))\n"
      "net.load_state_dict(sd)\n"
      "net.eval()\n"
      "y = net(torch.arange(24, dtype=torch.float32).reshape(2, 1, 3, 4) / 24.0)\n"
      "print(\" \".join(repr(v) for v in y.flatten().tolist()))\n",
      want, 1e-6);
  std::filesystem::remove_all(dir);
}

// Exports `model`, loads its state dict into the Python form `python_model`
// (an expression over scripts/plain_models.py) and compares their outputs on
// `input` (tokens by default), which `python_input` computes in Python.
void expect_python_form_matches(torch::nn::Sequential model, const std::string& python_model,
                                const at::Tensor& input = at::arange(12, at::kLong).remainder(20).reshape({2, 6}),
                                const std::string& python_input = "torch.arange(12).remainder(20).reshape(2, 6)") {
  const std::string dir = ::testing::TempDir() + "/export-lm-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  model->eval();
  export_weights(model, dir);
  const at::Tensor want = model->forward(input);
  expect_python_prints(
      "import sys, torch\n"
      "sys.path.insert(0, \"" HFTA_SOURCE_DIR "/scripts\")\n"
      "import plain_models\n"
      "net = plain_models." + python_model + "\n"
      "sd = torch.load(\"" + dir + "/" + kStateDictFile + "\")\n"
      // Types too: a batch norm's num_batches_tracked is an int64 (load_state_dict would convert a float).
      "wrong = [k for k, v in net.state_dict().items() if sd[k].dtype != v.dtype]\n"
      "if wrong: print(\"types differ:\", wrong); sys.exit()\n"
      "net.load_state_dict(sd)\n"
      "net.eval()\n"
      "with torch.no_grad():\n"
      "    y = net(" + python_input + ")\n"
      "print(\" \".join(repr(v) for v in y.flatten().tolist()))\n",
      want, 1e-5);
  std::filesystem::remove_all(dir);
}

TEST(TrialExport, LanguageModelStateDictsLoadIntoThePythonForms) {
  if (run_python("import torch").find("Error") != std::string::npos) {
    GTEST_SKIP() << kPython << " cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  torch::manual_seed(5);
  trainers::TransformerLmShape lm;
  lm.d_model = 16, lm.heads = 2, lm.layers = 2, lm.ff = 32, lm.seq_len = 8;
  expect_python_form_matches(trainers::FusedTransformerLm(1, 20, lm, 0.1).make_plain(),
                             "transformer_lm(20, d_model=16, heads=2, layers=2, ff=32, seq_len=8, dropout=0.1)");
  expect_python_form_matches(trainers::FusedBert(1, 21, trainers::bert_shape("tiny", 8), 0.1).make_plain(),
                             "bert(21, size=\"tiny\", seq_len=8, dropout=0.1)");
}

TEST(TrialExport, PointNetWithTransformsStateDictLoadsIntoThePythonForm) {
  if (run_python("import torch").find("Error") != std::string::npos) {
    GTEST_SKIP() << kPython << " cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  torch::manual_seed(7);
  auto model = trainers::FusedPointNet(1, 0.3, 8, {}, true, true).make_plain();
  model->train();
  model->forward(at::randn({16, 3, 10}));  // running statistics move away from their defaults
  expect_python_form_matches(model, "pointnet(8, 0.3, input_transform=True, feature_transform=True)",
                             at::cos(at::arange(60, at::kFloat)).reshape({2, 3, 10}),
                             "torch.cos(torch.arange(60, dtype=torch.float32)).reshape(2, 3, 10)");
}

TEST(TrialExport, DcganStateDictLoadsIntoThePythonForm) {
  if (run_python("import torch").find("Error") != std::string::npos) {
    GTEST_SKIP() << kPython << " cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  torch::manual_seed(6);
  auto model = trainers::FusedDcgan(1, {8, 4, 4}).make_plain();
  model->train();
  model->forward(at::randn({16, 8, 1, 1}));  // running statistics move away from their defaults
  expect_python_form_matches(model, "dcgan(nz=8, ngf=4, ndf=4)", at::arange(16, at::kFloat).reshape({2, 8, 1, 1}) / 8.0 - 1,
                             "torch.arange(16, dtype=torch.float32).reshape(2, 8, 1, 1) / 8.0 - 1");
}

// The image classifiers, as a sweep trains them (an array's slot, with running
// statistics moved by training), in PyTorch: plain_models.mlp, cnn, resnet18 and
// mobilenet_v3_small give the same logits.
TEST(TrialExport, ImageClassifierStateDictsLoadIntoThePythonForms) {
  if (run_python("import torch").find("Error") != std::string::npos) {
    GTEST_SKIP() << kPython << " cannot import torch: install python3-torch (scripts/install-deps.sh does)";
  }
  torch::manual_seed(8);
  auto images = [](std::int64_t side) {
    return std::pair{at::cos(at::arange(2 * side * side, at::kFloat)).reshape({2, 1, side, side}),
                     "torch.cos(torch.arange(" + std::to_string(2 * side * side) +
                         ", dtype=torch.float32)).reshape(2, 1, " + std::to_string(side) + ", " +
                         std::to_string(side) + ")"};
  };
  struct Case {
    std::shared_ptr<trainers::ArrayClassifier> array;
    std::string python;
    std::int64_t side;
  };
  const std::vector<Case> cases = {
      {std::make_shared<trainers::FusedMlp>(2, 784, 2, 16, "gelu", 0.1), "mlp(784, 2, 16, \"gelu\", 0.1)", 28},
      {std::make_shared<trainers::FusedCnn>(2, 2, "leaky_relu", 0.2), "cnn(2, \"leaky_relu\", 0.2)", 28},
      {std::make_shared<trainers::FusedResNet18>(2, 4, true), "resnet18(4)", 28},
      {std::make_shared<trainers::FusedResNet18>(2, 4, false), "resnet18(4, small_input=False)", 32},
      {std::make_shared<trainers::FusedMobileNetV3Small>(2, 0.25, 0.2), "mobilenet_v3_small(0.25, 0.2)", 32},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.python);
    c.array->train();
    c.array->forward(at::randn({8, 1, c.side, c.side}) * 2 + 1);  // running statistics move from their defaults
    const auto [x, python_x] = images(c.side);
    expect_python_form_matches(c.array->extract_slot(1), c.python, x, python_x);
  }
}

}  // namespace
}  // namespace hfta::core
