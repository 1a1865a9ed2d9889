"""User code taken in: the only stage that imports or runs a user's or a library's Python (kernel modules, ops,
functions for ``torch.compile``), always in a child process, and hands back checked facts. Module loading
(``importing``, ``loader``), the probes (``child_probe``, ``callback_probe``, ``facts``, ``op_probe``), the virtual
devices (``face``, ``face_tensors``), op capture (``capture``, ``launch_groups``, ``ops``) and compiled capture
(``inductor_face``, ``compiled``, ``compiled_probe``). :mod:`harness.matrix` reads matrices and expands cases from
what this stage reports.
"""
