"""Reference implementations used only by tests and benchmarks: slow, obvious versions of the engines
that the fast ones must agree with. Never imported by the app."""
