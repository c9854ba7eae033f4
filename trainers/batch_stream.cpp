#include "hfta/trainers/batch_stream.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

namespace hfta::trainers {

std::int64_t batches_ahead(const at::Device& device, double data_bytes, double free_device_bytes,
                           std::int64_t asked) {
  if (asked >= 0) return asked;
  if (device.is_cpu() || data_bytes * 4 <= free_device_bytes) return 0;
  return 2;
}

BatchStream::BatchStream(Split train, std::int64_t batch_size, std::uint64_t seed, const at::Device& device,
                         std::int64_t ahead, Augmentation augmentation, std::int64_t least)
    : train_(std::move(train)), batch_size_(batch_size), least_(least), seed_(seed), augmentation_(augmentation), device_(device),
      ahead_(ahead),
      pinned_(device.is_cuda() && train_.images.device().is_cpu()), threads_(at::get_num_threads()) {
  if (batch_size_ < 1) throw std::invalid_argument("batch size must be at least 1");
  if (ahead_ < 0) throw std::invalid_argument("batches ahead must be at least 0");
  if (train_.size() < 1) throw std::invalid_argument("no training examples to cut batches from");
  per_epoch_ = (train_.size() + batch_size_ - 1) / batch_size_;
  if (augmentation_.crop > 0) augmentation_.fill = train_.images.min().item<double>();
  if (!device_.is_cpu() && ahead_ > 0) {
    stream_ = c10::impl::VirtualGuardImpl(device_.type()).getStream(device_);
  }
  start();
}

BatchStream::~BatchStream() { stop(); }

at::Tensor BatchStream::order_of(std::int64_t epoch) const {
  return epoch_order(train_.size(), seed_, epoch).to(train_.images.device());
}

Split BatchStream::cut(std::int64_t step, const at::Tensor& order) const {
  const Split b = augment(batch(train_, order, step % per_epoch_, batch_size_, least_), augmentation_, seed_, step);
  if (!pinned_) return {b.images.to(device_), b.labels.to(device_)};
  // Pinned, so that the copy is asynchronous; the caching host allocator keeps
  // the block until the copy has finished.
  auto to_device = [&](const at::Tensor& host) {
    return host.pin_memory().to(at::TensorOptions().device(device_), /*non_blocking=*/true);
  };
  return {to_device(b.images), to_device(b.labels)};
}

Split BatchStream::at(std::int64_t step) const { return cut(step, order_of(step / per_epoch_)); }

Split BatchStream::cut_cached(std::int64_t step) {
  const std::int64_t epoch = step / per_epoch_;
  if (epoch != cached_epoch_) {
    cached_order_ = order_of(epoch);
    cached_epoch_ = epoch;
  }
  return cut(step, cached_order_);
}

Split BatchStream::next() {
  if (ahead_ == 0) return cut_cached(step_++);
  if (stream_ && c10::impl::VirtualGuardImpl(device_.type()).getStream(device_) != *stream_) {
    // The copies were queued on the stream of the thread that built this one;
    // steps on another would not wait for them.
    throw std::logic_error("batches for " + device_.str() + " are copied on the stream current when the batch "
                           "stream was built; train on that stream");
  }
  std::unique_lock<std::mutex> lock(mutex_);
  ready_cv_.wait(lock, [&] { return !ready_.empty() || error_; });
  if (ready_.empty()) std::rethrow_exception(error_);
  Split b = std::move(ready_.front());
  ready_.pop_front();
  ++step_;
  space_cv_.notify_one();
  return b;
}

std::int64_t BatchStream::prepared() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<std::int64_t>(ready_.size());
}

std::int64_t BatchStream::await_prepared(std::int64_t count) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto want = static_cast<size_t>(std::clamp<std::int64_t>(count, 0, ahead_));
  ready_cv_.wait(lock, [&] { return ready_.size() >= want || error_; });
  return static_cast<std::int64_t>(ready_.size());
}

void BatchStream::seek(std::int64_t steps) {
  if (steps < 0) throw std::invalid_argument("a step count must be at least 0");
  if (steps == step_) return;
  stop();
  step_ = steps;
  start();
}

void BatchStream::start() {
  ready_.clear();
  error_ = nullptr;
  stopping_ = false;
  if (ahead_ == 0) return;
  try {
    thread_ = std::thread([this, from = step_] { produce(from); });
  } catch (...) {  // no thread to be had: next() says so, rather than wait for one
    error_ = std::current_exception();
  }
}

void BatchStream::stop() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  space_cv_.notify_all();
  thread_.join();
}

void BatchStream::produce(std::int64_t step) {
  try {
    // The same intra-op thread count as the training thread's (OpenMP's count is per thread).
    at::set_num_threads(threads_);
    std::optional<c10::StreamGuard> on_stream;
    if (stream_) on_stream.emplace(*stream_);  // copies are ordered before the steps that use them
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        space_cv_.wait(lock, [&] { return stopping_ || static_cast<std::int64_t>(ready_.size()) < ahead_; });
        if (stopping_) return;
      }
      Split b = cut_cached(step++);
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        ready_.push_back(std::move(b));
      }
      ready_cv_.notify_all();  // (next() and await_prepared() may both wait)
    }
  } catch (...) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
    }
    ready_cv_.notify_all();
  }
}

}  // namespace hfta::trainers
