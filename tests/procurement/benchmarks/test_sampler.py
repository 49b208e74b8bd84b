"""The sampler's CPU share stays a percentage even when psutil overshoots on a short interval."""

from procurement.benchmarks import sampler as sampler_module


class _OvershootingProcess:
    # psutil reports process CPU time in scheduler ticks (10 ms on Linux); a sample 1 ms after the
    # previous one can read as 10 ticks' worth, so cpu_percent can return 1000% on one core.
    def cpu_percent(self, interval=None):
        return 1000.0


def test_cpu_share_is_capped_at_100(monkeypatch):
    monkeypatch.setattr(sampler_module.psutil, "cpu_count", lambda: 2)
    sampler = sampler_module.Sampler(interval_s=10)
    sampler._process = _OvershootingProcess()
    sampler._started = 0.0
    sampler._sample()
    assert sampler.samples[-1]["cpu_util_pct"] == 100.0


def test_cpu_share_is_divided_by_cores(monkeypatch):
    class _Busy:
        def cpu_percent(self, interval=None):
            return 150.0  # one and a half cores busy

    monkeypatch.setattr(sampler_module.psutil, "cpu_count", lambda: 4)
    sampler = sampler_module.Sampler(interval_s=10)
    sampler._process = _Busy()
    sampler._started = 0.0
    sampler._sample()
    assert sampler.samples[-1]["cpu_util_pct"] == 37.5
