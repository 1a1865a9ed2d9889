SPEC = 42  # not a KernelSpec
