"""PyTorch forms of every model of hfta-tune's zoo: a trial's state_dict.pt
loads into them with load_state_dict, and they compute what the trial's
LibTorch plain form computes. The layer order and names match the C++ plain
forms (include/hfta/trainers/array_classifier.h, resnet18.h, mobilenet_v3.h, pointnet.h,
dcgan.h, transformer_lm.h, bert.h). Their defaults are the sweep's `task`
defaults (trainers/catalog.cpp), so a model built with the options sweep.json
records is the trial's.

    import sys; sys.path.insert(0, "scripts")
    import torch, plain_models
    net = plain_models.transformer_lm(vocab=97, d_model=64, heads=4, layers=2, ff=256, seq_len=64)
    net.load_state_dict(torch.load("runs/NAME/trials/2/state_dict.pt"))

The vocabulary is the corpus's distinct bytes in increasing order: token i is
the i-th smallest byte value that occurs in the text; BERT adds the mask token
after them (include/hfta/trainers/text_corpus.h). The run keeps the text it
trained on in DIR/data/corpus.txt and its vocabulary in DIR/data/corpus.json.

Or, with the options merged as the trial trained (sweep.json's task options,
the trial's params over them, the vocabulary or table the run kept), and the
weights loaded, in eval mode:

    net = plain_models.from_experiment("runs/NAME", 2)
    x = plain_models.fashion_mnist_inputs(images, "cnn")  # uint8 [N, 28, 28] as the IDX files hold them
    logits = net(x)
"""
import torch
from torch import nn

ACTIVATIONS = {"relu": nn.ReLU, "leaky_relu": nn.LeakyReLU, "gelu": nn.GELU, "silu": nn.SiLU, "swish": nn.SiLU,
               "hardswish": nn.Hardswish, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}


def mlp(inputs=784, depth=2, width=256, activation="relu", dropout=0.0, classes=10):
    """images [N, 1, 28, 28] (or any [N, ...] of `inputs` values) -> logits [N, classes]."""
    layers = [nn.Flatten()]
    for d in range(depth):
        layers += [nn.Linear(inputs if d == 0 else width, width), ACTIVATIONS[activation](), nn.Dropout(dropout)]
    layers.append(nn.Linear(width if depth else inputs, classes))
    return nn.Sequential(*layers)


def cnn(width=1, activation="relu", dropout=0.0, classes=10):
    """LeNet-5 at `width` times its channels: images [N, 1, 28, 28] -> logits [N, classes]."""
    act = ACTIVATIONS[activation]
    return nn.Sequential(
        nn.Conv2d(1, 6 * width, 5, padding=2), act(), nn.MaxPool2d(2),
        nn.Conv2d(6 * width, 16 * width, 5), act(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(16 * width * 25, 120), act(), nn.Dropout(dropout),
        nn.Linear(120, 84), act(), nn.Linear(84, classes),
    )


class BasicBlock(nn.Module):
    """torchvision's BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))."""

    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.downsample = None
        if stride != 1 or inputs != outputs:
            self.downsample = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                                            nn.BatchNorm2d(outputs))

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + (x if self.downsample is None else self.downsample(x)))


def resnet18(width=64, small_input=True, classes=10):
    """torchvision's ResNet-18 with one input channel and `width` stem channels:
    images [N, 1, H, W] (32x32: Fashion-MNIST padded) -> logits [N, classes]; the
    small-input form has a 3x3 stem of stride 1 and no max pooling."""
    layers = [nn.Conv2d(1, width, 3, 1, 1, bias=False) if small_input else nn.Conv2d(1, width, 7, 2, 3, bias=False),
              nn.BatchNorm2d(width), nn.ReLU()]
    if not small_input:
        layers.append(nn.MaxPool2d(3, 2, 1))
    inputs = width
    for multiplier, stride in ((1, 1), (2, 2), (4, 2), (8, 2)):
        for block in range(2):
            layers.append(BasicBlock(inputs, width * multiplier, stride if block == 0 else 1))
            inputs = width * multiplier
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(inputs, classes)]
    return nn.Sequential(*layers)


def _divisible(v):
    """torchvision's _make_divisible(v, 8)."""
    n = max(8, int(v + 4) // 8 * 8)
    return n + 8 if n < 0.9 * v else n


def _conv_bn(inputs, outputs, kernel, stride, groups):
    return nn.Sequential(nn.Conv2d(inputs, outputs, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(outputs))


# (inputs, kernel, expanded, outputs, squeeze-and-excite, hardswish, stride): torchvision's table.
MOBILENET_V3_SMALL_BLOCKS = [
    (16, 3, 16, 16, True, False, 2), (16, 3, 72, 24, False, False, 2), (24, 3, 88, 24, False, False, 1),
    (24, 5, 96, 40, True, True, 2), (40, 5, 240, 40, True, True, 1), (40, 5, 240, 40, True, True, 1),
    (40, 5, 120, 48, True, True, 1), (48, 5, 144, 48, True, True, 1), (48, 5, 288, 96, True, True, 2),
    (96, 5, 576, 96, True, True, 1), (96, 5, 576, 96, True, True, 1),
]


class InvertedResidual(nn.Module):
    """MobileNetV3's block: [expand 1x1], depthwise kxk, [squeeze-and-excite], project 1x1, [+ x]."""

    def __init__(self, inputs, kernel, expanded, outputs, se, hardswish, stride, width_mult):
        super().__init__()
        i, e, o = _divisible(inputs * width_mult), _divisible(expanded * width_mult), _divisible(outputs * width_mult)
        self.expand = _conv_bn(i, e, 1, 1, 1) if e != i else None
        self.depthwise = _conv_bn(e, e, kernel, stride, e)
        self.se_fc1 = self.se_fc2 = None
        if se:
            squeeze = _divisible(e // 4)
            self.se_fc1 = nn.Conv2d(e, squeeze, 1)
            self.se_fc2 = nn.Conv2d(squeeze, e, 1)
        self.project = _conv_bn(e, o, 1, 1, 1)
        self.act = nn.Hardswish() if hardswish else nn.ReLU()
        self.residual = stride == 1 and i == o

    def forward(self, x):
        y = x if self.expand is None else self.act(self.expand(x))
        y = self.act(self.depthwise(y))
        if self.se_fc1 is not None:
            s = nn.functional.adaptive_avg_pool2d(y, 1)
            y = y * nn.functional.hardsigmoid(self.se_fc2(torch.relu(self.se_fc1(s))))
        y = self.project(y)
        return y + x if self.residual else y


def mobilenet_v3_small(width_mult=1.0, dropout=0.2, classes=10):
    """torchvision's mobilenet_v3_small with one input channel and PyTorch's
    default batch norms: images [N, 1, 32, 32] -> logits [N, classes]."""
    stem = _divisible(16 * width_mult)
    last_in = _divisible(96 * width_mult)
    hidden = _divisible(1024 * width_mult)
    return nn.Sequential(
        nn.Conv2d(1, stem, 3, 2, 1, bias=False), nn.BatchNorm2d(stem), nn.Hardswish(),
        *[InvertedResidual(*block, width_mult) for block in MOBILENET_V3_SMALL_BLOCKS],
        nn.Conv2d(last_in, 6 * last_in, 1, bias=False), nn.BatchNorm2d(6 * last_in), nn.Hardswish(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(6 * last_in, hidden), nn.Hardswish(), nn.Dropout(dropout), nn.Linear(hidden, classes),
    )


class TokenPositionEmbedding(nn.Module):
    """Token plus learned position embeddings: tokens [N, T] -> [N, T, d]."""

    def __init__(self, vocab, seq_len, d_model):
        super().__init__()
        self.token = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(seq_len, d_model)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        return self.token(tokens) + self.position(positions)


class EncoderLayer(nn.Module):
    """A post-norm encoder layer on [N, T, d]; causal: each position attends to itself and those before."""

    def __init__(self, d_model, heads, ff, dropout, activation="relu", causal=True):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout, activation, batch_first=True)
        self.causal = causal

    def forward(self, x):
        if not self.causal:
            return self.layer(x)
        t = x.shape[1]
        mask = torch.full((t, t), float("-inf"), device=x.device, dtype=x.dtype).triu(1)
        return self.layer(x, src_mask=mask)


def transformer_lm(vocab, d_model=256, heads=4, layers=2, ff=1024, seq_len=128, dropout=0.1):
    """tokens [N, T] -> next-token logits [N * T, vocab]."""
    return nn.Sequential(
        TokenPositionEmbedding(vocab, seq_len, d_model),
        nn.Dropout(dropout),
        *[EncoderLayer(d_model, heads, ff, dropout) for _ in range(layers)],
        nn.Linear(d_model, vocab),
        nn.Flatten(0, 1),
    )


BERT_SIZES = {"tiny": (2, 128, 2), "mini": (4, 256, 4), "small": (4, 512, 8), "medium": (8, 512, 8)}


def bert(vocab, size="medium", seq_len=128, dropout=0.1):
    """masked tokens [N, T] -> logits [N * T, vocab] at every position (vocab counts the mask token)."""
    layers, hidden, heads = BERT_SIZES[size]
    return nn.Sequential(
        TokenPositionEmbedding(vocab, seq_len, hidden),
        nn.LayerNorm(hidden),
        nn.Dropout(dropout),
        *[EncoderLayer(hidden, heads, 4 * hidden, dropout, "gelu", causal=False) for _ in range(layers)],
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.LayerNorm(hidden),
        nn.Linear(hidden, vocab),
        nn.Flatten(0, 1),
    )


def dcgan(nz=100, ngf=64, ndf=64):
    """Sequential(generator, discriminator): z [N, nz, 1, 1] -> the discriminator's
    logit [N, 1] for G(z); net[0] alone makes 32x32 images in [-1, 1]."""
    generator = nn.Sequential(
        nn.ConvTranspose2d(nz, 4 * ngf, 4, 1, 0, bias=False), nn.BatchNorm2d(4 * ngf), nn.ReLU(),
        nn.ConvTranspose2d(4 * ngf, 2 * ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * ngf), nn.ReLU(),
        nn.ConvTranspose2d(2 * ngf, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(),
        nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False), nn.Tanh(),
    )
    discriminator = nn.Sequential(
        nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2),
        nn.Conv2d(ndf, 2 * ndf, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * ndf), nn.LeakyReLU(0.2),
        nn.Conv2d(2 * ndf, 4 * ndf, 4, 2, 1, bias=False), nn.BatchNorm2d(4 * ndf), nn.LeakyReLU(0.2),
        nn.Conv2d(4 * ndf, 1, 4, 1, 0, bias=False), nn.Flatten(),
    )
    return nn.Sequential(generator, discriminator)


class MaxOverPoints(nn.Module):
    """[N, C, P] -> [N, C]."""

    def forward(self, x):
        return x.max(2)[0]


class PointTransform(nn.Module):
    """pointnet.pytorch's STNkd and its use: x [N, k, P] -> bmm(x^T, T(x))^T,
    keeping T(x) in .last (the feature transform's regulariser reads it)."""

    def __init__(self, k):
        super().__init__()
        self.k = k
        self.net = nn.Sequential(
            nn.Conv1d(k, 64, 1), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 128, 1), nn.BatchNorm1d(128), nn.ReLU(),
            nn.Conv1d(128, 1024, 1), nn.BatchNorm1d(1024), nn.ReLU(),
            MaxOverPoints(),
            nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(),
            nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(),
            nn.Linear(256, k * k),
        )

    def forward(self, x):
        self.last = self.net(x).view(-1, self.k, self.k) + torch.eye(self.k, dtype=x.dtype, device=x.device)
        return torch.bmm(x.transpose(1, 2), self.last).transpose(1, 2)


def pointnet(classes=8, dropout=0.3, input_transform=False, feature_transform=False):
    """clouds [N, 3, P] -> logits [N, classes]; with the feature transform, the
    training loss adds 0.001 * mean over clouds of ||T T^T - I|| of net[...].last."""
    layers = [PointTransform(3)] if input_transform else []
    layers += [nn.Conv1d(3, 64, 1), nn.BatchNorm1d(64), nn.ReLU()]
    if feature_transform:
        layers.append(PointTransform(64))
    layers += [
        nn.Conv1d(64, 128, 1), nn.BatchNorm1d(128), nn.ReLU(),
        nn.Conv1d(128, 1024, 1), nn.BatchNorm1d(1024), MaxOverPoints(),
        nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(),
        nn.Linear(512, 256), nn.Dropout(dropout), nn.BatchNorm1d(256), nn.ReLU(),
        nn.Linear(256, classes),
    ]
    return nn.Sequential(*layers)


# Fashion-MNIST as every trial sees it (include/hfta/trainers/fashion_mnist_data.h).
FASHION_MNIST_MEAN, FASHION_MNIST_STD = 0.2860, 0.3530
PADDED_TO_32 = ("resnet18", "mobilenet_v3_small", "dcgan")


def fashion_mnist_inputs(images, model):
    """uint8 images [N, 28, 28] (the IDX files' bytes) -> float32 [N, 1, 28, 28] as `model`'s
    trials saw them: pixel / 255, less the training images' mean 0.2860, over their standard
    deviation 0.3530 (dcgan: less 0.5, over 0.5, in [-1, 1]); for resnet18, mobilenet_v3_small
    and dcgan then padded to [N, 1, 32, 32] by 2 pixels on each side of black as standardised
    (as padding the raw image with 0 before standardising)."""
    mean, std = (0.5, 0.5) if model == "dcgan" else (FASHION_MNIST_MEAN, FASHION_MNIST_STD)
    x = images.to(torch.float32).div(255.0).sub(mean).div(std).unsqueeze(1)
    if model in PADDED_TO_32:
        x = nn.functional.pad(x, (2, 2, 2, 2), value=(0.0 - mean) / std)
    return x


def from_experiment(directory, trial):
    """Trial `trial` of the hfta-tune experiment in `directory`, as a plain PyTorch model with
    its exported weights (trials/<id>/state_dict.pt) loaded, in eval mode. Its options are
    sweep.json's task options with the trial's params over them (those the model's function
    takes: lr or points are the training's and the data's); a language model's vocabulary is the
    corpus the run kept (data/corpus.json), an MLP on a table takes the table's width and classes
    (data/table.json)."""
    import inspect
    import json
    import os
    with open(os.path.join(directory, "sweep.json")) as f:
        task = json.load(f)["task"]
    with open(os.path.join(directory, "trials", str(trial), "trial.json")) as f:
        params = json.load(f).get("params", {})
    build = globals()[task["model"]]
    options = dict(task.get("options", {}))
    options.update(params)
    if task["model"] in ("transformer_lm", "bert"):
        with open(os.path.join(directory, "data", "corpus.json")) as f:
            options["vocab"] = len(json.load(f)["vocab"]) + (task["model"] == "bert")  # (and the mask token)
    if task.get("dataset") == "csv":
        with open(os.path.join(directory, "data", "table.json")) as f:
            table = json.load(f)
        options["inputs"] = len(table["features"])
        options["classes"] = len(table["classes"]) if "classes" in table else 1
    takes = inspect.signature(build).parameters
    net = build(**{k: v for k, v in options.items() if k in takes})
    net.load_state_dict(torch.load(os.path.join(directory, "trials", str(trial), "state_dict.pt")))
    return net.eval()
