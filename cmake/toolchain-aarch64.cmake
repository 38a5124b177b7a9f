# Cross build for aarch64 Linux: cmake -DCMAKE_TOOLCHAIN_FILE=<this file>.
set(FTS_CROSS_ARCH aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-linux-cross.cmake)
