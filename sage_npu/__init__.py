"""sage-npu: an editor assistant for Ascend C kernels (see README.md and DESIGN.md)."""

__version__ = "0.1.0"
