"""TorchInductor's capture and its checks: a ``compiled:`` entry (or an op's ``torch.compile`` regions) compiled under a
target's virtual device, the kernels, configs and launches recorded, and every config checked on the host at the
entry's real shape against eager."""
