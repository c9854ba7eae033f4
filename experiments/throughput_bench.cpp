// Training throughput of B models, in model-samples per second, three ways,
// measured side by side in one run:
//   serial      B plain LibTorch models (torch::nn + torch::optim) trained one
//               after another in this process: the usual practice;
//   concurrent  B processes, each training one plain model, at the same time;
//   fused       one hfta-tune array of the B models (ArrayTrainer);
//   prefetched  the same array, its batches prepared --prefetch ahead by a
//               background thread (batch_stream.h); asked for by name only.
// Every mode trains the same model on the same batches with Adam, after warm-up
// steps, and reports the median of repeats. Prints a table of ratios and, with
// --json, writes the numbers with the machine, library versions and commit.
//
//   throughput_bench --model mlp --option width=64 --models 1,2,4,8,16,32 --json out.json
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/dropout.h>
#include <torch/optim/adam.h>
#include <ATen/Version.h>
#include <torch/version.h>

#include "hfta/fusion/device_memory.h"
#include "hfta/fusion/host_allocator.h"
#include "hfta/fusion/mixed_precision.h"
#include <torch/csrc/autograd/profiler_legacy.h>

#include "hfta/trainers/array_trainer.h"
#include "hfta/trainers/fashion_mnist_data.h"
#include "hfta/trainers/footprint.h"
#include "hfta/trainers/model_zoo.h"
#include "hfta/trainers/point_clouds.h"
#include "hfta/trainers/text_corpus.h"

extern char** environ;

namespace {

using namespace hfta::trainers;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string model = "mlp";
  std::vector<std::string> options;  // name=value
  std::int64_t batch = 32, steps = 30, warmup = 5, repeats = 3, threads = 1;
  double dropout = 0;  // every model's dropout rate (per-model masks in the array)
  std::vector<std::int64_t> models = {1, 2, 4, 8, 16, 32};
  std::vector<std::string> modes = {"serial", "concurrent", "fused"};
  std::int64_t prefetch = 2;  // batches ahead in the prefetched mode
  std::int64_t concurrent_max = 0;  // concurrent only up to this B (0: every B)
  std::string json;
  std::string device = "cpu";  // or cuda, cuda:N
  std::string precision = "fp32";  // bf16, fp16: autocast (fp16 with loss scaling), both modes
  bool child = false;  // one model for the concurrent mode, driven over stdin/stdout
  std::string profile;  // a directory: chrome traces of the timed serial and fused steps
};

// Records the ops of a timed region into DIR/NAME.json when --profile is given.
std::unique_ptr<torch::autograd::profiler::RecordProfile> profile_into(const Args& a, const std::string& name) {
  if (a.profile.empty()) return nullptr;
  return std::make_unique<torch::autograd::profiler::RecordProfile>(a.profile + "/" + name + ".json");
}

ModelOptions model_options(const Args& a) {
  ModelOptions out;
  for (const auto& o : a.options) {
    const auto eq = o.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--option takes name=value, got " + o);
    out[o.substr(0, eq)] = o.substr(eq + 1);
  }
  return out;
}

// A training set large enough for every timed step, small enough that 32
// concurrent processes fit in memory.
ClassificationData bench_data(const Args& a) {
  const ModelOptions o = model_options(a);
  if (a.model == "pointnet") {
    PointCloudOptions p;
    p.points = o.count("points") ? std::stoll(o.at("points")) : 1024;
    p.train_size = 2048, p.validation_size = 8, p.test_size = 0;
    return to_device(make_point_clouds(p), at::Device(a.device));
  }
  if (a.model == "transformer_lm" || a.model == "bert") {
    TextCorpusOptions t;
    t.seq_len = o.count("seq_len") ? std::stoll(o.at("seq_len")) : 128;
    t.limit = 4096 * (t.seq_len + 1);
    const double mask_prob = o.count("mask_prob") ? std::stod(o.at("mask_prob")) : 0.15;
    return to_device(a.model == "bert" ? load_masked_text_data(t, mask_prob) : load_text_data(t), at::Device(a.device));
  }
  FashionMnistOptions f = fashion_mnist_options(a.model);  // the images the model trains on (MobileNetV3: 32x32)
  f.limit = 8192, f.validation_size = 8;
  return to_device(load_fashion_mnist_data(f), at::Device(a.device));
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// On a GPU, every measurement ends when the device has finished its work.
void synchronize(const Args& a) {
  if (a.device != "cpu") at::zeros({1}, at::TensorOptions().device(a.device)).cpu();
}

// The batches every mode sees, prepared once, on the device.
std::vector<Split> batches(const ClassificationData& d, const Args& a) {
  const at::Tensor order = epoch_order(d.train.size(), 0, 0).to(d.train.images.device());
  const std::int64_t per_epoch = d.train.size() / a.batch;
  std::vector<Split> out;
  for (std::int64_t i = 0; i < a.warmup + a.steps; ++i) out.push_back(batch(d.train, order, i % per_epoch, a.batch));
  return out;
}

torch::nn::SequentialImpl& part(const torch::nn::Sequential& net, std::size_t i) {
  return *net->ptr(i)->as<torch::nn::SequentialImpl>();
}

at::Tensor bce(const at::Tensor& logits, double target) {
  return torch::nn::functional::binary_cross_entropy_with_logits(logits, at::full_like(logits, target));
}

// Drops the gradients, as the fused optimizer does (PyTorch 2's
// zero_grad(set_to_none=True); LibTorch 1.13's zero_grad() fills zeros), so
// that both sides skip the same work.
void clear_grads(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) p.mutable_grad().reset();
  }
}

struct PlainTrainer {
  torch::nn::Sequential net;
  std::unique_ptr<torch::optim::Adam> adam;       ///< a GAN's: the discriminator's
  std::unique_ptr<torch::optim::Adam> generator;  ///< a GAN's generator's
  std::int64_t nz = 0;
  hfta::fusion::Precision precision = hfta::fusion::Precision::kFloat32;
  void step(const Split& b) {
    if (!generator) {
      clear_grads(*adam);
      at::Tensor loss;
      {
        hfta::fusion::AutocastScope autocast(precision, b.images.device());
        loss = torch::nn::functional::cross_entropy(net->forward(b.images), b.labels.reshape({-1}));
      }
      if (precision != hfta::fusion::Precision::kFloat16) {
        loss.backward();
        adam->step();
        return;
      }
      // GradScaler's work for one model (a fixed scale: the same passes): scale,
      // unscale, one check for Inf/NaN read by the host, then the step.
      constexpr double kScale = 65536;
      (loss * kScale).backward();
      at::Tensor finite = at::ones({}, at::TensorOptions().dtype(at::kBool).device(b.images.device()));
      for (auto& p : net->parameters()) {
        if (!p.grad().defined()) continue;
        p.mutable_grad().mul_(1.0 / kScale);
        finite = finite.logical_and(at::isfinite(p.grad()).all());
      }
      if (finite.item<bool>()) adam->step();
      return;
    }
    // PyTorch's DCGAN example, as ArrayTrainer steps each model of an array.
    auto& g = part(net, 0);
    auto& d = part(net, 1);
    clear_grads(*adam);
    bce(d.forward(b.images), 1.0).backward();
    const at::Tensor fake = g.forward(at::randn({b.size(), nz, 1, 1}, b.images.options()));
    bce(d.forward(fake.detach()), 0.0).backward();
    adam->step();
    clear_grads(*generator);
    bce(d.forward(fake), 1.0).backward();
    generator->step();
  }
};

PlainTrainer plain_trainer(const Args& a, std::int64_t classes, std::uint64_t seed) {
  torch::manual_seed(seed);
  auto net = make_classifier(a.model, 1, model_options(a), classes)->make_plain();
  net->to(at::Device(a.device));
  for (const auto& m : net->modules()) {
    if (auto d = std::dynamic_pointer_cast<torch::nn::DropoutImpl>(m)) d->options.p(a.dropout);
  }
  if (a.model == "dcgan") {
    const auto o = model_options(a);
    return {net, std::make_unique<torch::optim::Adam>(part(net, 1).parameters(), torch::optim::AdamOptions(1e-3)),
            std::make_unique<torch::optim::Adam>(part(net, 0).parameters(), torch::optim::AdamOptions(1e-3)),
            o.count("nz") ? std::stoll(o.at("nz")) : 100};
  }
  PlainTrainer t{net, std::make_unique<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-3))};
  t.precision = hfta::fusion::precision_from_name(a.precision);
  return t;
}

// Peak bytes the caching allocator held on the device since the last call; 0 on the CPU.
double peak_device_bytes(const Args& a) { return hfta::fusion::take_peak_bytes(at::Device(a.device)).value_or(0); }

// The device's float32 matrix-product rate (GFLOP/s), for the fraction the arrays reach.
double matmul_gflops(const Args& a) {
  const std::int64_t n = a.device == "cpu" ? 1024 : 8192;
  const auto x = at::randn({n, n}, at::TensorOptions().device(a.device));
  at::Tensor y = at::mm(x, x);
  synchronize(a);
  const int reps = a.device == "cpu" ? 5 : 20;
  const auto start = Clock::now();
  for (int i = 0; i < reps; ++i) y = at::mm(x, x);
  synchronize(a);
  return 2.0 * static_cast<double>(n * n * n) * reps / seconds_since(start) / 1e9;
}

// Serial: model after model, each over all the steps.
double serial(const Args& a, const ClassificationData& d, const std::vector<Split>& bs, std::int64_t models) {
  std::vector<PlainTrainer> ts;
  for (std::int64_t b = 0; b < models; ++b) ts.push_back(plain_trainer(a, d.classes, b));
  for (auto& t : ts) {
    for (std::int64_t s = 0; s < a.warmup; ++s) t.step(bs[s]);
  }
  synchronize(a);
  const auto recording = profile_into(a, "serial-B" + std::to_string(models));
  const auto start = Clock::now();
  for (auto& t : ts) {
    for (std::int64_t s = a.warmup; s < a.warmup + a.steps; ++s) t.step(bs[s]);
  }
  synchronize(a);
  return seconds_since(start);
}

double fused(const Args& a, const ClassificationData& d, std::int64_t models, double* peak_bytes,
             std::int64_t prefetch = 0) {
  std::vector<SlotTrial> slots;
  for (std::int64_t b = 0; b < models; ++b) {
    SlotTrial t;
    t.trial_id = b, t.seed = static_cast<std::uint64_t>(b), t.lr = 1e-3, t.dropout = a.dropout;
    slots.push_back(t);
  }
  ArrayTrainerOptions o;
  o.optimizer = "adam";
  o.batch_size = a.batch;
  o.record_losses = false;  // as the tuner trains
  o.precision = hfta::fusion::precision_from_name(a.precision);
  o.prefetch = prefetch;
  ArrayTrainer trainer(make_classifier(a.model, models, model_options(a), d.classes,
                                       at::TensorOptions().device(a.device)),
                       slots, o, d);
  peak_device_bytes(a);  // from here
  trainer.train(a.warmup);
  synchronize(a);
  const auto recording = profile_into(a, "fused-B" + std::to_string(models));
  const auto start = Clock::now();
  trainer.train(a.steps);
  synchronize(a);
  const double seconds = seconds_since(start);
  *peak_bytes = peak_device_bytes(a);
  return seconds;
}

// The concurrent mode's child: warm up, say "ready", wait for "go", train, report.
int child(const Args& a) {
  const auto d = bench_data(a);
  const auto bs = batches(d, a);
  auto t = plain_trainer(a, d.classes, 0);
  for (std::int64_t s = 0; s < a.warmup; ++s) t.step(bs[s]);
  synchronize(a);
  std::cout << "ready" << std::endl;
  std::string go;
  std::getline(std::cin, go);
  for (std::int64_t s = a.warmup; s < a.warmup + a.steps; ++s) t.step(bs[s]);
  synchronize(a);
  std::cout << "done" << std::endl;
  return 0;
}

struct Child {
  pid_t pid;
  FILE* to;
  FILE* from;
};

Child spawn_child(const std::vector<std::string>& argv) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<char*> args;
  for (const auto& s : argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, args.data(), environ) != 0) {
    throw std::runtime_error("cannot start a child process");
  }
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  return {pid, fdopen(in[1], "w"), fdopen(out[0], "r")};
}

std::string read_line(FILE* f) {
  char buf[64] = {0};
  if (!std::fgets(buf, sizeof buf, f)) throw std::runtime_error("a child process ended early");
  return buf;
}

// Concurrent: B processes, started and warmed up, then released together.
double concurrent(const Args& a, std::int64_t models) {
  std::vector<std::string> argv = {"throughput_bench", "--child", "--model", a.model, "--batch",
                                   std::to_string(a.batch), "--steps", std::to_string(a.steps),
                                   "--warmup", std::to_string(a.warmup), "--threads", "1",
                                   "--dropout", std::to_string(a.dropout), "--device", a.device,
                                   "--precision", a.precision};
  for (const auto& o : a.options) argv.insert(argv.end(), {"--option", o});
  std::vector<Child> children;
  for (std::int64_t b = 0; b < models; ++b) children.push_back(spawn_child(argv));
  for (auto& c : children) read_line(c.from);  // ready
  const auto start = Clock::now();
  for (auto& c : children) {
    std::fputs("go\n", c.to);
    std::fflush(c.to);
  }
  for (auto& c : children) read_line(c.from);  // done
  const double wall = seconds_since(start);
  for (auto& c : children) {
    std::fclose(c.to);
    std::fclose(c.from);
    int status = 0;
    waitpid(c.pid, &status, 0);
  }
  return wall;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string shell(const char* command) {
  std::string out;
  if (FILE* p = popen(command, "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

#ifdef __clang__
constexpr const char* kCompiler = "clang " __clang_version__;
#else
constexpr const char* kCompiler = "gcc " __VERSION__;
#endif

nlohmann::json machine() {
  return {{"cpu", shell("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'")},
          {"cores", std::thread::hardware_concurrency()},
          {"memory", shell("grep MemTotal /proc/meminfo | tr -s ' ' | cut -d' ' -f2-3")},
          {"blas", shell("readlink -f /etc/alternatives/libblas.so.3-$(gcc -dumpmachine) 2>/dev/null")},
          {"gpu", shell("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1")},
          {"libtorch", TORCH_VERSION},
          {"onednn", at::get_mkldnn_version()},
          {"compiler", kCompiler},
          // The build's own account: CUDA and cuDNN versions, CPU capability, flags.
          {"torch_config", at::show_config()},
          // A copied tree (the GPU machine's) has no .git: the script passes the commit.
          {"commit", shell("git rev-parse --short HEAD 2>/dev/null || echo \"$HFTA_COMMIT\"")},
          {"date", shell("date -u +%Y-%m-%dT%H:%M:%SZ")}};
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Training throughput: serial, concurrent and fused"};
  app.add_option("--model", a.model, "mlp, cnn, pointnet, resnet18, mobilenet_v3_small, dcgan, transformer_lm or bert")
      ->check(CLI::IsMember({"mlp", "cnn", "pointnet", "resnet18", "mobilenet_v3_small", "dcgan", "transformer_lm", "bert"}));
  app.add_option("--option", a.options, "a model option, name=value (repeatable)");
  app.add_option("--batch", a.batch, "samples per batch");
  app.add_option("--steps", a.steps, "timed steps per repeat");
  app.add_option("--warmup", a.warmup, "untimed steps first");
  app.add_option("--repeats", a.repeats, "repeats; the median is reported");
  app.add_option("--dropout", a.dropout, "every model's dropout rate");
  app.add_option("--threads", a.threads, "LibTorch threads for serial and fused (concurrent: 1 per process)");
  app.add_option("--profile", a.profile, "write chrome traces of the timed steps into this directory");
  app.add_option("--models", a.models, "array sizes B")->delimiter(',');
  app.add_option("--modes", a.modes, "serial, concurrent, fused, prefetched")->delimiter(',');
  app.add_option("--prefetch", a.prefetch, "batches prepared ahead in the prefetched mode");
  app.add_option("--concurrent-max", a.concurrent_max,
                 "time concurrent processes only up to this B (each GPU process holds its own context)");
  app.add_option("--json", a.json, "write the results here");
  app.add_option("--device", a.device, "cpu, cuda or cuda:N");
  app.add_option("--precision", a.precision, "fp32, bf16 or fp16: autocast in both serial and fused (fp16 with loss scaling)");
  app.add_flag("--child", a.child)->group("");
  CLI11_PARSE(app, argc, argv);
  hfta::fusion::configure_host_allocator();
  at::set_num_threads(static_cast<int>(a.threads));
  if (a.model == "dcgan" && a.precision != "fp32") {
    std::cerr << "throughput_bench: dcgan trains in fp32 only\n";
    return 2;
  }
  if (a.child) return child(a);

  const auto data = bench_data(a);
  const auto bs = batches(data, a);
  std::map<std::string, double> numeric;
  std::map<std::string, std::string> texts;  // BERT's size
  for (const auto& [k, v] : model_options(a)) {
    if (v == "true" || v == "false") numeric[k] = v == "true";
    else if (!v.empty() && (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '.')) numeric[k] = std::stod(v);
    else texts[k] = v;
  }
  numeric["vocab"] = static_cast<double>(data.classes);  // a language model's vocabulary
  const auto fp = estimate_footprint(a.model, numeric, texts);
  // Training costs about three forward passes (forward, and two products per layer backward).
  const double flops_per_sample = fp ? 6.0 * fp->macs_per_sample : 0.0;
  const double peak_gflops = matmul_gflops(a);

  auto has = [&](const std::string& m) { return std::find(a.modes.begin(), a.modes.end(), m) != a.modes.end(); };
  nlohmann::json rows = nlohmann::json::array();
  std::cout << "model " << a.model << ", batch " << a.batch << ", " << a.steps << " steps x " << a.repeats
            << " repeats, " << a.device << " (matmul " << std::fixed << std::setprecision(0) << peak_gflops
            << " GFLOP/s)" << std::defaultfloat << ", " << a.threads << " thread(s), dropout " << a.dropout
            << (a.precision == "fp32" ? "" : ", " + a.precision + " autocast")
            << "; model-samples/s (median)\n"
            << std::setw(4) << "B" << std::setw(12) << "serial" << std::setw(12) << "concurrent" << std::setw(12)
            << "fused" << std::setw(14) << "fused/serial" << std::setw(18) << "fused/concurrent" << std::setw(14)
            << "fused GFLOP/s" << (has("prefetched") ? "  prefetched  prefetched/fused" : "") << "\n";
  // Rewritten after every B, so that a run cut short keeps the sizes it finished.
  auto write_json = [&] {
    if (a.json.empty()) return;
    nlohmann::json out = {{"benchmark", "throughput"}, {"model", a.model}, {"options", model_options(a)},
                          {"device", a.device}, {"precision", a.precision}, {"batch", a.batch}, {"steps", a.steps}, {"warmup", a.warmup},
                          {"repeats", a.repeats}, {"threads", a.threads}, {"prefetch", a.prefetch}, {"optimizer", "adam"}, {"dropout", a.dropout},
                          {"flops_per_sample", flops_per_sample}, {"matmul_gflops", peak_gflops},
                          {"machine", machine()}, {"results", rows}};
    std::ofstream(a.json) << out.dump(2) << "\n";
  };
  for (std::int64_t models : a.models) {
    const double samples = static_cast<double>(models * a.steps * a.batch);
    std::map<std::string, std::vector<double>> rates;
    double peak = 0;
    for (std::int64_t r = 0; r < a.repeats; ++r) {
      // Interleaved, so drift on a shared machine hits every mode alike.
      if (has("serial")) rates["serial"].push_back(samples / serial(a, data, bs, models));
      if (has("concurrent") && (a.concurrent_max == 0 || models <= a.concurrent_max)) rates["concurrent"].push_back(samples / concurrent(a, models));
      if (has("fused")) rates["fused"].push_back(samples / fused(a, data, models, &peak));
      if (has("prefetched")) rates["prefetched"].push_back(samples / fused(a, data, models, &peak, a.prefetch));
    }
    nlohmann::json row = {{"models", models}};
    for (const auto& [mode, v] : rates) row[mode] = median(v);
    auto get = [&](const char* m) { return row.contains(m) ? row[m].get<double>() : 0.0; };
    if (get("serial") > 0 && get("fused") > 0) row["fused_over_serial"] = get("fused") / get("serial");
    if (get("concurrent") > 0 && get("fused") > 0) row["fused_over_concurrent"] = get("fused") / get("concurrent");
    if (flops_per_sample > 0 && get("fused") > 0) {
      row["fused_gflops"] = get("fused") * flops_per_sample / 1e9;
      row["fused_fraction_of_matmul"] = row["fused_gflops"].get<double>() / peak_gflops;
    }
    if (get("prefetched") > 0 && get("fused") > 0) row["prefetched_over_fused"] = get("prefetched") / get("fused");
    if (peak > 0) row["fused_peak_bytes"] = peak;
    auto cell = [&](const char* key, int width, int precision) {
      std::ostringstream s;
      if (row.contains(key)) s << std::fixed << std::setprecision(precision) << row[key].get<double>();
      else s << "-";
      std::cout << std::setw(width) << s.str();
    };
    std::cout << std::setw(4) << models;
    cell("serial", 12, 0), cell("concurrent", 12, 0), cell("fused", 12, 0);
    cell("fused_over_serial", 14, 2), cell("fused_over_concurrent", 18, 2), cell("fused_gflops", 14, 2);
    if (has("prefetched")) cell("prefetched", 12, 0), cell("prefetched_over_fused", 18, 2);
    std::cout << std::endl;
    rows.push_back(row);
    write_json();
  }
  if (!a.json.empty()) std::cout << "wrote " << a.json << "\n";
  return 0;
}
