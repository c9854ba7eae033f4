"""PyTorch forms of hfta-tune's models whose plain form is not one stock
nn.Sequential of torch.nn layers: a trial's state_dict.pt loads into them with
load_state_dict. The layer order and names match the C++ plain forms
(trainers/transformer_lm.h, trainers/bert.h, trainers/dcgan.h, trainers/pointnet.h).

    import sys; sys.path.insert(0, "scripts")
    import torch, plain_models
    net = plain_models.transformer_lm(vocab=97, d_model=64, heads=4, layers=2, ff=256, seq_len=64)
    net.load_state_dict(torch.load("runs/NAME/trials/2/state_dict.pt"))

The vocabulary is the corpus's distinct bytes in increasing order: token i is
the i-th smallest byte value that occurs in the text; BERT adds the mask token
after them (trainers/text_corpus.h).
"""
import torch
from torch import nn


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


def transformer_lm(vocab, d_model=256, heads=4, layers=2, ff=1024, seq_len=128, dropout=0.0):
    """tokens [N, T] -> next-token logits [N * T, vocab]."""
    return nn.Sequential(
        TokenPositionEmbedding(vocab, seq_len, d_model),
        nn.Dropout(dropout),
        *[EncoderLayer(d_model, heads, ff, dropout) for _ in range(layers)],
        nn.Linear(d_model, vocab),
        nn.Flatten(0, 1),
    )


BERT_SIZES = {"tiny": (2, 128, 2), "mini": (4, 256, 4), "small": (4, 512, 8), "medium": (8, 512, 8)}


def bert(vocab, size="medium", seq_len=128, dropout=0.0):
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
