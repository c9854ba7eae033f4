// The batch stream gives the batches of the shared order whether it cuts them
// when asked or a background thread prepares them ahead, and an array trains
// the same numbers either way.
#include <gtest/gtest.h>

#include <thread>

#include <ATen/ATen.h>

#include "hfta/trainers/batch_stream.h"
#include "train_alone.h"

namespace hfta::trainers {
namespace {

// 103 rows cut into batches of 10: 11 a epoch, the last one of 3 rows.
Split rows() {
  const at::Tensor labels = at::arange(103, at::kLong);
  return {at::arange(103 * 6, at::kFloat).sin().view({103, 2, 3}), labels};
}

// Batch `step` of the shared order, computed here from its definition.
Split expected(const Split& data, std::int64_t step) {
  const std::int64_t per_epoch = 11;
  return batch(data, epoch_order(data.size(), 7, step / per_epoch), step % per_epoch, 10);
}

void expect_batch(const Split& got, const Split& want, std::int64_t step) {
  EXPECT_TRUE(at::equal(got.images, want.images)) << "step " << step;
  EXPECT_TRUE(at::equal(got.labels, want.labels)) << "step " << step;
}

TEST(BatchStream, GivesTheSharedOrderWhetherCutWhenAskedOrPreparedAhead) {
  const Split data = rows();
  for (std::int64_t ahead : {0, 1, 3}) {
    SCOPED_TRACE("ahead " + std::to_string(ahead));
    BatchStream stream(data, 10, 7, at::kCPU, ahead);
    EXPECT_EQ(stream.per_epoch(), 11);
    EXPECT_FALSE(stream.pinned());
    std::vector<std::int64_t> seen;
    for (std::int64_t s = 0; s < 30; ++s) {  // into the third epoch
      ASSERT_EQ(stream.step(), s);
      const Split b = stream.next();
      expect_batch(b, expected(data, s), s);
      expect_batch(stream.at(s), b, s);
      if (s < 11) seen.insert(seen.end(), b.labels.data_ptr<std::int64_t>(), b.labels.data_ptr<std::int64_t>() + b.size());
    }
    // An epoch holds every row once.
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), 103u);
    for (std::int64_t i = 0; i < 103; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
  }
}

TEST(BatchStream, SeeksToAnyStepForwardOrBack) {
  const Split data = rows();
  for (std::int64_t ahead : {0, 2}) {
    SCOPED_TRACE("ahead " + std::to_string(ahead));
    BatchStream stream(data, 10, 7, at::kCPU, ahead);
    for (std::int64_t s = 0; s < 5; ++s) stream.next();
    for (std::int64_t to : {17, 3, 3, 40}) {
      stream.seek(to);
      for (std::int64_t s = to; s < to + 4; ++s) expect_batch(stream.next(), expected(data, s), s);
    }
    EXPECT_THROW(stream.seek(-1), std::invalid_argument);
  }
}

TEST(BatchStream, PreparesUpToItsCountAheadWithoutBeingAsked) {
  BatchStream stream(rows(), 10, 7, at::kCPU, 3);
  EXPECT_EQ(stream.await_prepared(3), 3);  // (blocks on the stream's own signal: no clock is read)
  EXPECT_EQ(stream.await_prepared(5), 3);  // (asked for more than it keeps: as many as it keeps)
  // And no more, however often asked while its thread runs on (yields, no clock).
  for (int look = 0; look < 2000; ++look) {
    ASSERT_EQ(stream.prepared(), 3);
    std::this_thread::yield();
  }
  stream.next();
  EXPECT_LE(stream.prepared(), 3);
  // A stream without a thread prepares nothing.
  BatchStream asked(rows(), 10, 7, at::kCPU, 0);
  EXPECT_EQ(asked.prepared(), 0);
}

TEST(BatchStream, AnErrorInTheBackgroundReachesTheTrainingThread) {
  // Labels for 20 rows but images for 5: the first batch indexes past the images.
  const Split broken{at::zeros({5, 2}), at::arange(20, at::kLong)};
  BatchStream stream(broken, 10, 7, at::kCPU, 2);
  EXPECT_THROW(stream.next(), c10::Error);
  EXPECT_THROW(stream.next(), c10::Error);
  stream.seek(3);  // starts again, and meets it again
  EXPECT_THROW(stream.next(), c10::Error);
  stream.seek(0);
  EXPECT_THROW(stream.next(), c10::Error);
}

// 101 rows at batch 10 leave one for an epoch's last batch: a stream asked
// for at least 2 tops it up with the epoch's first row, every epoch.
TEST(BatchStream, TopsUpALastBatchOfOneWithTheEpochsFirstRow) {
  const Split all = rows();
  const Split data{all.images.narrow(0, 0, 101), all.labels.narrow(0, 0, 101)};
  BatchStream stream(data, 10, 7, at::kCPU, 0, {}, 2);
  for (std::int64_t step = 0; step < 33; ++step) {
    const Split got = stream.next();
    const at::Tensor order = epoch_order(101, 7, step / 11);
    if (step % 11 != 10) {
      EXPECT_EQ(got.size(), 10) << step;
      continue;
    }
    ASSERT_EQ(got.size(), 2) << step;
    EXPECT_EQ(got.labels[0].item<std::int64_t>(), order[100].item<std::int64_t>()) << step;
    EXPECT_EQ(got.labels[1].item<std::int64_t>(), order[0].item<std::int64_t>()) << step;
  }
  // Asked for no more than one, the last batch is the one row left.
  EXPECT_EQ(BatchStream(data, 10, 7, at::kCPU, 0).at(10).size(), 1);
}

TEST(BatchStream, RefusesWhatCannotBeCut) {
  EXPECT_THROW(BatchStream(rows(), 0, 7, at::kCPU, 0), std::invalid_argument);
  EXPECT_THROW(BatchStream(rows(), 10, 7, at::kCPU, -1), std::invalid_argument);
  EXPECT_THROW(BatchStream(Split{at::zeros({0, 2}), at::zeros({0}, at::kLong)}, 10, 7, at::kCPU, 0),
               std::invalid_argument);
}

TEST(BatchStream, PreparesAheadByDefaultOnlyWhereTheDatasetStaysOnTheHost) {
  const at::Device cpu(at::kCPU), gpu(at::kCUDA, 0);
  EXPECT_EQ(batches_ahead(cpu, 2e8, 0), 0);       // the data is where the array is
  EXPECT_EQ(batches_ahead(gpu, 2e8, 8e8), 0);     // a quarter of the free memory: moved there once
  EXPECT_EQ(batches_ahead(gpu, 2e8, 7.9e8), 2);   // more: kept on the host, streamed
  for (std::int64_t asked : {0, 1, 5}) {
    EXPECT_EQ(batches_ahead(cpu, 2e8, 0, asked), asked);
    EXPECT_EQ(batches_ahead(gpu, 2e8, 1e12, asked), asked);
  }
  ClassificationData d{{at::zeros({10, 3}), at::zeros({10}, at::kLong)}, {at::zeros({2, 3}), at::zeros({2}, at::kLong)}};
  EXPECT_EQ(data_bytes(d), 12 * 3 * 4 + 12 * 8);  // the test split is empty
}

// Trains an MLP array with dropout (its masks follow the step), evaluates,
// moves the stream back and forth, and returns every loss.
std::vector<std::vector<double>> train_mlp(std::int64_t prefetch, const at::Device& device,
                                           torch::nn::Sequential& trained) {
  std::vector<SlotTrial> trials = {{0, 11, 0.05, 0.9}, {1, 12, 0.02, 0.5}, {2, 13, 0.1, 0}};
  for (auto& t : trials) t.dropout = 0.25;
  ArrayTrainerOptions o;
  o.batch_size = 500;  // 20 steps an epoch of the 10,000 training images: the runs cross epochs
  o.data_seed = 5;
  o.prefetch = prefetch;
  auto model = std::make_shared<FusedMlp>(3, 784, 2, 64, "relu", 0.25, 10, at::TensorOptions().device(device));
  ArrayTrainer trainer(model, trials, o, data());  // the data on the host, as the tuner holds it
  auto losses = trainer.train(25);
  trainer.evaluate();
  for (auto& row : trainer.train(10)) losses.push_back(row);
  trainer.seek(7);  // as a resumed trial's array does
  for (auto& row : trainer.train(20)) losses.push_back(row);
  const auto metrics = trainer.evaluate();
  for (const auto& m : metrics) losses.push_back({m.val_loss, m.val_accuracy});
  trained = trainer.extract(1);
  return losses;
}

void expect_prefetch_changes_nothing(const at::Device& device) {
  torch::nn::Sequential in_place, prefetched;
  const auto want = train_mlp(0, device, in_place);
  for (std::int64_t ahead : {1, 4}) {
    SCOPED_TRACE("prefetch " + std::to_string(ahead));
    const auto got = train_mlp(ahead, device, prefetched);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t s = 0; s < got.size(); ++s) EXPECT_EQ(got[s], want[s]) << "row " << s;
    const auto a = in_place->parameters(), b = prefetched->parameters();
    for (std::size_t k = 0; k < a.size(); ++k) EXPECT_TRUE(at::equal(a[k], b[k])) << k;
  }
}

TEST(BatchStream, AnArrayTrainsBitwiseAlikeWithBatchesPreparedAhead) { expect_prefetch_changes_nothing(at::kCPU); }

// On a GPU the prefetched batches come from the host through pinned memory,
// against batches cut from a copy of the dataset on the device.
TEST(BatchStream, AnArrayTrainsBitwiseAlikeWithBatchesPreparedAheadOnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  const at::Device gpu(at::kCUDA, 0);
  EXPECT_TRUE(BatchStream(rows(), 10, 7, gpu, 2).pinned());
  EXPECT_FALSE(BatchStream(Split{rows().images.to(gpu), rows().labels.to(gpu)}, 10, 7, gpu, 2).pinned());
  BatchStream stream(rows(), 10, 7, gpu, 2);
  for (std::int64_t s = 0; s < 15; ++s) {
    const Split b = stream.next();
    EXPECT_TRUE(b.images.is_cuda());
    expect_batch({b.images.cpu(), b.labels.cpu()}, expected(rows(), s), s);
  }
  expect_prefetch_changes_nothing(gpu);
}

}  // namespace
}  // namespace hfta::trainers
