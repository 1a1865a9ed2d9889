"""The virtual device a capture wears: a target's face (what torch and Triton see of its GPU), tensors with a CUDA face,
the values Inductor computes on the device itself, and the decisions the target's libraries make that change a
graph (the attention backend, a convolution's output layout)."""
