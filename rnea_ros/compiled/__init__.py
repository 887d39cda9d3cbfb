"""Every numba function and memory-layout constant (one file: numba's disk cache watches only the file
that defines a function), their typed entry points, the one warm-up and the cache.
"""
