# Shared by the cross toolchain files, which set FTS_CROSS_ARCH first: Debian's cross
# toolchain (gcc-<arch>-linux-gnu, libc6-dev-*-cross); programs run through
# qemu-<arch>-static with the cross sysroot, so CTest and try_run work without binfmt.
# -R 16G: the guest's address space reserved once. Without it qemu-user keeps page
# tables for every range a program ever mapped, and each history reserves 128 MiB:
# a test that loads 40,000 files grew to 21 GB and ran 4x slower.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${FTS_CROSS_ARCH})
set(FTS_CROSS_TRIPLE ${FTS_CROSS_ARCH}-linux-gnu)
set(FTS_CROSS_SYSROOT /usr/${FTS_CROSS_TRIPLE})

set(CMAKE_C_COMPILER ${FTS_CROSS_TRIPLE}-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${FTS_CROSS_ARCH}-static;-R;16G;-L;${FTS_CROSS_SYSROOT})

# Headers and libraries from the target's directories only; programs from the host.
set(CMAKE_FIND_ROOT_PATH ${FTS_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config must not hand out the host's packages (the host's cmocka, for one).
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${FTS_CROSS_TRIPLE}/pkgconfig:${FTS_CROSS_SYSROOT}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
