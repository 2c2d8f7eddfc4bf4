"""sage-npu: an editor assistant for Ascend C kernels (see README.md and docs/)."""

__version__ = "0.1.0"
