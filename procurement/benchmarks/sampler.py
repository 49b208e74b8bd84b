"""A background thread that samples GPU utilization, memory, power and SM clock (NVML) and the
process's CPU utilization (psutil) while the benchmark runs.

NVML calls raise without a GPU, so GPU fields are sampled only when CUDA is in use; the CPU figure is
always recorded. Samples carry seconds since the sampler started.
"""

from __future__ import annotations

import threading
import time

import psutil

GIB = 2**30


class Sampler:
    def __init__(self, *, interval_s: float = 0.2, gpu_indices: tuple[int, ...] = ()):
        self.interval_s, self.gpu_indices = interval_s, gpu_indices
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._process = psutil.Process()
        self._handles = self._nvml_handles()

    def _nvml_handles(self):
        if not self.gpu_indices:
            return []
        import pynvml

        pynvml.nvmlInit()
        return [(index, pynvml.nvmlDeviceGetHandleByIndex(index)) for index in self.gpu_indices]

    def __enter__(self):
        self._started = time.perf_counter()
        self._process.cpu_percent(None)  # the first call only starts psutil's interval
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()  # one last sample, so even a run shorter than the interval has one

    def _run(self):
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self):
        elapsed = round(time.perf_counter() - self._started, 4)
        # psutil counts CPU time in scheduler ticks, so over a very short interval (the last sample
        # can come a millisecond after the one before) the share overshoots; a share of the machine
        # can't exceed 100%.
        cpu = min(self._process.cpu_percent(None) / max(psutil.cpu_count() or 1, 1), 100.0)
        if not self._handles:
            self.samples.append({"t_s": elapsed, "gpu": None, "cpu_util_pct": round(cpu, 2)})
            return
        import pynvml

        for index, handle in self._handles:
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            self.samples.append(
                {
                    "t_s": elapsed,
                    "gpu": index,
                    "gpu_util_pct": float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu),
                    "memory_used_gib": round(memory.used / GIB, 4),
                    "memory_total_gib": round(memory.total / GIB, 4),
                    "power_w": pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0,
                    "sm_clock_mhz": float(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
                    "cpu_util_pct": round(cpu, 2),
                }
            )
