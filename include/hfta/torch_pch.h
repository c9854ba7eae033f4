// The LibTorch headers precompiled once for every target that uses LibTorch.
// Keep it to headers most LibTorch files need; a file still includes the narrow
// headers it uses, so it also compiles without the PCH.
#pragma once
#include <ATen/ATen.h>
#include <torch/types.h>
#include <torch/nn.h>
#include <torch/optim.h>
#include <torch/serialize.h>
