# Cross-compiles for aarch64 with Debian's gcc-aarch64-linux-gnu; ctest runs each test under
# qemu-aarch64 (Debian's qemu-user) with the cross sysroot, exercising the NEON backend.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(VOLLEY_AARCH64_SYSROOT /usr/aarch64-linux-gnu CACHE PATH "Sysroot of the aarch64 libraries")
set(CMAKE_FIND_ROOT_PATH ${VOLLEY_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Headers such as SIMDe are architecture-independent and live in the host's /usr/include.
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
find_program(VOLLEY_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(VOLLEY_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VOLLEY_QEMU_AARCH64} -L ${VOLLEY_AARCH64_SYSROOT})
endif()
