// The training batches every model of an array shares, in their order: the
// batch of step s is batch (s mod E) of epoch floor(s / E), E batches an epoch,
// cut from epoch_order(size, seed, epoch) (classification_data.h), then
// flipped and cropped by (seed, step) where asked (augmentation.h).
//
// Two ways to deliver them, giving the same batches:
// - ahead = 0: each batch is cut when asked, in the training thread, from data
//   already on the array's device (one index_select there, no copy per step);
// - ahead > 0: a background thread keeps up to `ahead` batches ready, cut from
//   data wherever it is (the host, for a dataset that would not fit on the
//   device); for a GPU each is cut into pinned host memory and copied to the
//   device asynchronously, on the training thread's stream.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include "hfta/trainers/augmentation.h"
#include "hfta/trainers/classification_data.h"

namespace hfta::trainers {

/// How many batches a stream on `device` prepares ahead: `asked` when it is
/// 0 or more; by default none on the CPU (the data is there already, and
/// cutting a batch took under 1% of an array's step) or on a GPU whose free
/// memory holds the dataset four times over (it moves there once); else 2, and
/// the dataset stays on the host.
std::int64_t batches_ahead(const at::Device& device, double data_bytes, double free_device_bytes,
                           std::int64_t asked = -1);

class BatchStream {
 public:
  /// Batches of `batch_size` rows of `train` (on any device), delivered on
  /// `device`, augmented as `augmentation` asks (its fill: the training
  /// images' darkest value, Fashion-MNIST's black background).
  /// An epoch's last batch holds at least `least` rows (batch()).
  BatchStream(Split train, std::int64_t batch_size, std::uint64_t seed, const at::Device& device, std::int64_t ahead,
              Augmentation augmentation = {}, std::int64_t least = 1);
  ~BatchStream();
  BatchStream(const BatchStream&) = delete;
  BatchStream& operator=(const BatchStream&) = delete;

  /// Continues from step `steps` (batches prepared for other steps are dropped).
  void seek(std::int64_t steps);
  /// The batch of the current step, on the device; the stream moves one step on.
  /// An error the background thread met is thrown here. On a GPU, call it on
  /// the stream that was current when this was built: the copies are queued there.
  Split next();
  /// The batch of any step, cut in the calling thread; the stream is untouched.
  Split at(std::int64_t step) const;

  std::int64_t step() const { return step_; }
  std::int64_t per_epoch() const { return per_epoch_; }
  std::int64_t ahead() const { return ahead_; }
  /// Whether batches pass through pinned host memory (host data, GPU array).
  bool pinned() const { return pinned_; }
  /// Batches ready and waiting (at most ahead()).
  std::int64_t prepared();
  /// Blocks until `count` batches (capped at ahead()) are ready, or the
  /// background thread met an error: the batches ready then. For a caller
  /// that wants the queue full before it starts (a benchmark's warm-up).
  std::int64_t await_prepared(std::int64_t count);

 private:
  Split cut(std::int64_t step, const at::Tensor& order) const;
  at::Tensor order_of(std::int64_t epoch) const;
  Split cut_cached(std::int64_t step);  ///< cut(), keeping the epoch's order for the next step
  void start();
  void stop();
  void produce(std::int64_t step);  ///< the background thread, from `step` on

  Split train_;
  std::int64_t batch_size_, per_epoch_, least_;
  std::uint64_t seed_;
  Augmentation augmentation_;
  at::Device device_;
  std::int64_t ahead_;
  bool pinned_;
  int threads_;                       ///< the training thread's intra-op threads, for the background one
  std::optional<c10::Stream> stream_;  ///< the training thread's stream on a GPU: copies go there

  std::int64_t step_ = 0;        ///< the step next() delivers
  std::int64_t cached_epoch_ = -1;
  at::Tensor cached_order_;      ///< used by one thread at a time: the background one while it runs

  std::mutex mutex_;
  std::condition_variable ready_cv_, space_cv_;
  std::deque<Split> ready_;      ///< batches of steps step_, step_ + 1, ...
  std::exception_ptr error_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hfta::trainers
