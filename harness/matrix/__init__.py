"""Matrix -> cases: YAML read with positions, checked in full (one ``file:line`` per problem), known failures,
kernel specs found and loaded (files, modules, captured ops), every spec callback called first in a child, and the
expansion into one case per (kernel, dtype, shape, target, Triton version)."""
