"""Processes that isolate the work: a pool of long-lived workers (compile, interpreter, GPU), the worker's entry
point (JSON requests in, JSON results out) and the spec-agreement check run through it."""
