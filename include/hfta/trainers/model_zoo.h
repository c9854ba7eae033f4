// The trainable models of the catalog by name: building an array of B models
// and loading the data it trains on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "hfta/trainers/array_classifier.h"
#include "hfta/trainers/classification_data.h"
#include "hfta/trainers/fashion_mnist_data.h"

namespace hfta::trainers {

/// A model's options by name, as written in YAML ("64", "true", "relu");
/// missing ones take the catalog's defaults.
using ModelOptions = std::map<std::string, std::string>;

/// Whether make_classifier builds `model`.
bool is_trainable(const std::string& model);

/// An array of `models` copies of `model` (mlp, cnn, pointnet, resnet18,
/// mobilenet_v3_small, transformer_lm, bert; for language models `classes` is
/// the vocabulary's size). Dropout
/// starts at 0: each slot's rate is set per trial. `inputs`: an MLP's input
/// features (a table's columns; 0: Fashion-MNIST's 784 pixels).
std::shared_ptr<ArrayClassifier> make_classifier(const std::string& model, std::int64_t models,
                                                 const ModelOptions& options, std::int64_t classes,
                                                 const at::TensorOptions& tensor_options = {},
                                                 std::int64_t inputs = 0);

/// How `model` reads Fashion-MNIST: padded to 32x32 for the models whose stems
/// and strides expect it (ResNet-18, MobileNetV3, DCGAN), pixels in [-1, 1] for
/// DCGAN's tanh generator, standardised otherwise.
FashionMnistOptions fashion_mnist_options(const std::string& model);

/// The dataset `model` trains on: Fashion-MNIST (fashion_mnist_options),
/// the text corpus in sequences of `seq_len` for language models (masked with
/// `mask_prob`, from a fixed seed, for BERT),
/// or point clouds with the `points` option, generated from a fixed seed so
/// every sweep sees the same clouds.
/// `validation_size` > 0 replaces the dataset's validation size (Fashion-MNIST,
/// point clouds); a `corpus` file replaces text_corpus_path() (language models).
ClassificationData load_classification_data(const std::string& model, const ModelOptions& options,
                                            std::int64_t validation_size = 0, const std::string& corpus = "");

/// The training examples load_classification_data gives `model`, where they
/// are known without loading the data: Fashion-MNIST's 60,000 less the
/// validation images, the point clouds' training set; nullopt for the text
/// corpus (its sequences are counted once it is read).
std::optional<std::int64_t> known_train_examples(const std::string& model, std::int64_t validation_size = 0);

/// "" when the files `model`'s dataset is read from are there, else why not
/// (naming the Debian package); point clouds are generated and always are. A
/// text corpus is read, to see that it holds sequences of the `seq_len` in `options`.
std::string dataset_missing(const std::string& model, const ModelOptions& options);

}  // namespace hfta::trainers
