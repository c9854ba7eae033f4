# One precompiled header with the LibTorch headers, compiled once and reused by
# every target that includes LibTorch (a file that includes torch/torch.h costs
# about 20 s to parse on two cores; with the PCH it costs about one).
add_library(hfta_torch_pch OBJECT ${CMAKE_SOURCE_DIR}/cmake/torch_pch.cpp)
target_link_libraries(hfta_torch_pch PUBLIC torch)
target_precompile_headers(hfta_torch_pch PRIVATE ${CMAKE_SOURCE_DIR}/include/hfta/torch_pch.h)

# hfta_use_torch_pch(target): link LibTorch and reuse the shared precompiled header.
function(hfta_use_torch_pch target)
  target_link_libraries(${target} PUBLIC torch)
  target_precompile_headers(${target} REUSE_FROM hfta_torch_pch)
endfunction()
