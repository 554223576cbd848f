"""What numba needs at run time, outside the algorithms: threads, the kernel cache, the compile notice,
warming the cache in a second process, and SIMD intrinsics."""
