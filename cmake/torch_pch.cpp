// Empty translation unit: the target exists only to build the LibTorch precompiled header.
