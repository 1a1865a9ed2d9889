"""Case -> compiled binaries on any machine: the compile for one target, the launch specialisation Triton's own launcher
would choose, the AMD linker for old releases, resource usage read from the real artifacts, and the target's limits."""
