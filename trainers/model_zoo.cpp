#include "hfta/trainers/model_zoo.h"

#include <stdexcept>

#include "hfta/trainers/bert.h"
#include "hfta/trainers/catalog.h"
#include "hfta/trainers/dcgan.h"
#include "hfta/trainers/fashion_mnist.h"
#include "hfta/trainers/fashion_mnist_data.h"
#include "hfta/trainers/mobilenet_v3.h"
#include "hfta/trainers/point_clouds.h"
#include "hfta/trainers/pointnet.h"
#include "hfta/trainers/resnet18.h"
#include "hfta/trainers/text_corpus.h"
#include "hfta/trainers/transformer_lm.h"

namespace hfta::trainers {
namespace {

std::string option(const std::string& model, const ModelOptions& options, const std::string& name) {
  if (auto it = options.find(name); it != options.end()) return it->second;
  const auto* spec = find_model(model);
  const auto* o = spec ? spec->find_option(name) : nullptr;
  if (!o) throw std::invalid_argument("model " + model + " has no option " + name);
  return o->default_value;
}

std::int64_t integer(const std::string& model, const ModelOptions& options, const std::string& name) {
  return std::stoll(option(model, options, name));
}

}  // namespace

bool is_trainable(const std::string& model) {
  return model == "mlp" || model == "cnn" || model == "pointnet" || model == "dcgan" || model == "resnet18" ||
         model == "mobilenet_v3_small" || model == "transformer_lm" || model == "bert";
}

std::shared_ptr<ArrayClassifier> make_classifier(const std::string& model, std::int64_t models,
                                                 const ModelOptions& o, std::int64_t classes,
                                                 const at::TensorOptions& t, std::int64_t inputs) {
  if (model == "mlp") {
    return std::make_shared<FusedMlp>(models, inputs > 0 ? inputs : 784, integer(model, o, "depth"), integer(model, o, "width"),
                                      option(model, o, "activation"), 0.0, classes, t);
  }
  if (model == "cnn") {
    return std::make_shared<FusedCnn>(models, integer(model, o, "width"), option(model, o, "activation"), 0.0,
                                      classes, t);
  }
  if (model == "pointnet") {
    return std::make_shared<FusedPointNet>(models, 0.0, classes, t, option(model, o, "input_transform") == "true",
                                           option(model, o, "feature_transform") == "true");
  }
  if (model == "dcgan") {
    return std::make_shared<FusedDcgan>(
        models, DcganShape{integer(model, o, "nz"), integer(model, o, "ngf"), integer(model, o, "ndf")}, t);
  }
  if (model == "resnet18") {
    return std::make_shared<FusedResNet18>(models, integer(model, o, "width"),
                                           option(model, o, "small_input") == "true", classes, t);
  }
  if (model == "mobilenet_v3_small") {
    return std::make_shared<FusedMobileNetV3Small>(models, std::stod(option(model, o, "width_mult")), 0.0, classes, t);
  }
  if (model == "transformer_lm") {
    TransformerLmShape shape;
    shape.d_model = integer(model, o, "d_model"), shape.heads = integer(model, o, "heads");
    shape.layers = integer(model, o, "layers"), shape.ff = integer(model, o, "ff");
    shape.seq_len = integer(model, o, "seq_len");
    return std::make_shared<FusedTransformerLm>(models, classes, shape, 0.0, t);
  }
  if (model == "bert") {
    return std::make_shared<FusedBert>(models, classes,
                                       bert_shape(option(model, o, "size"), integer(model, o, "seq_len")), 0.0, t);
  }
  throw std::invalid_argument("training model " + model + " is not yet available");
}

ClassificationData load_classification_data(const std::string& model, const ModelOptions& options,
                                            std::int64_t validation_size, const std::string& corpus) {
  if (model == "pointnet") {
    PointCloudOptions o;
    o.points = integer(model, options, "points");
    if (validation_size > 0) o.validation_size = validation_size;
    return make_point_clouds(o);
  }
  if (model == "transformer_lm") {
    TextCorpusOptions o;
    if (!corpus.empty()) o.path = corpus;
    o.seq_len = integer(model, options, "seq_len");
    return load_text_data(o);
  }
  if (model == "bert") {
    TextCorpusOptions o;
    if (!corpus.empty()) o.path = corpus;
    o.seq_len = integer(model, options, "seq_len");
    return load_masked_text_data(o, std::stod(option(model, options, "mask_prob")));
  }
  FashionMnistOptions o = fashion_mnist_options(model);
  if (validation_size > 0) o.validation_size = validation_size;
  return load_fashion_mnist_data(o);
}

std::optional<std::int64_t> known_train_examples(const std::string& model, std::int64_t validation_size) {
  if (model == "pointnet") return PointCloudOptions{}.train_size;  // (validation clouds are made apart)
  if (model == "transformer_lm" || model == "bert") return std::nullopt;
  constexpr std::int64_t kTrainingImages = 60000;  // train-images-idx3-ubyte's
  return kTrainingImages - (validation_size > 0 ? validation_size : FashionMnistOptions{}.validation_size);
}

std::string dataset_missing(const std::string& model, const ModelOptions& options) {
  if (model == "pointnet") return "";
  if (model != "transformer_lm" && model != "bert") return fashion_mnist_missing();
  if (std::string missing = text_corpus_missing(); !missing.empty()) return missing;
  TextCorpusOptions o;
  o.seq_len = integer(model, options, "seq_len");
  return text_corpus_too_short(o);
}

FashionMnistOptions fashion_mnist_options(const std::string& model) {
  FashionMnistOptions o;
  o.pad_to_32 = model == "resnet18" || model == "mobilenet_v3_small" || model == "dcgan";
  o.tanh_range = model == "dcgan";
  return o;
}

}  // namespace hfta::trainers
