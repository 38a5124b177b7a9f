# Cross build for aarch64 Linux with Debian's cross toolchain (gcc-aarch64-linux-gnu,
# libc6-dev-*-cross). Programs run through qemu-aarch64-static with the cross sysroot, so
# CTest and try_run work without binfmt: cmake -DCMAKE_TOOLCHAIN_FILE=<this file>.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(FTS_CROSS_TRIPLE aarch64-linux-gnu)
set(FTS_CROSS_SYSROOT /usr/${FTS_CROSS_TRIPLE})

set(CMAKE_C_COMPILER ${FTS_CROSS_TRIPLE}-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static;-L;${FTS_CROSS_SYSROOT})

# Headers and libraries from the target's directories only; programs from the host.
set(CMAKE_FIND_ROOT_PATH ${FTS_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config must not hand out the host's packages (the host's cmocka, for one).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${FTS_CROSS_TRIPLE}/pkgconfig:${FTS_CROSS_SYSROOT}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
