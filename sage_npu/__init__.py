"""sage-npu: an editor assistant for Ascend C kernels (see README.md and docs/)."""

import os

__version__ = "0.1.0"

# torch imports torch_npu by itself when it is installed (the `npu` extra), and that import fails
# without CANN's libraries, taking `import torch` down with it (the memory's embedder imports
# torch). Nothing here needs the autoload: the device path drives the NPU through ACL, and the
# torch_npu baseline imports torch_npu itself. A user's explicit setting wins.
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
