"""What runs where a GPU (or Triton's CPU interpreter) is: detection and pinning, correctness against the torch
reference, timing (isolated and sustained), the work of a GPU worker, and the baselines timed beside a kernel."""
