"""Every numba function and memory-layout constant, their typed entry points and pointer kernels,
the one warm-up and the cache (one stamp over this whole package: `jit`).
"""
