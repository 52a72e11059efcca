"""Which device to measure on, whether it is present, how much memory it has free, and waiting for it."""

from __future__ import annotations

import os

import torch

DEVICES = ("cpu", "cuda", "mps")  # the names a sweep may ask for


def best_device() -> str:
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def available_devices() -> list[str]:
    return [d for d in ("cuda", "mps") if d == best_device() or (d == "cuda" and torch.cuda.is_available())] + ["cpu"]


def check_device(device: str) -> None:
    """Raise ``device_unavailable`` (naming what can be used instead) unless ``device`` is here."""
    from ..errors import AttentionConfigError

    if device not in DEVICES or (device != "cpu" and device not in available_devices()):
        raise AttentionConfigError(
            "device", "device_unavailable", device=device, options=", ".join(available_devices())
        )


def _address_space_left() -> int | None:
    """What this process may still map under its address-space limit (``ulimit -v``), if it has one."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/status") as fh:
            used = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
        return max(0, soft - used)
    except (ImportError, OSError, ValueError, StopIteration):
        return None


def _cpu_available_bytes() -> int:
    left = _address_space_left()
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    return free if left is None else min(free, left)
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def free_bytes(device: str) -> int:
    if device == "cuda":
        return torch.cuda.mem_get_info()[0]
    if device == "mps":
        return int(torch.mps.recommended_max_memory() - torch.mps.driver_allocated_memory())
    return _cpu_available_bytes()


def device_info(device: str) -> dict:
    """What the page shows about the device: its name, memory and threads."""
    info = {"device": device, "threads": torch.get_num_threads(), "torch": torch.__version__}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        info.update(name=props.name, total_bytes=props.total_memory, free_bytes=free_bytes(device))
    elif device == "mps":
        info.update(
            name="Apple GPU (MPS)", total_bytes=int(torch.mps.recommended_max_memory()), free_bytes=free_bytes(device)
        )
    else:
        import platform

        info.update(
            name=platform.processor() or platform.machine(), cores=os.cpu_count(), free_bytes=free_bytes(device)
        )
    return info


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "mps":
        torch.mps.synchronize()
