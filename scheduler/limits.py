"""How long one price refresh may run: the refresh task's Celery limits, which the refresh lock's
lifetime and the orphan sweeper are derived from. Kept here, below both the task and the refresh
service, so neither has to import the other to read them."""

REFRESH_SOFT_TIME_LIMIT_S = 10 * 60  # the task is told to stop (SoftTimeLimitExceeded) and records it
REFRESH_TIME_LIMIT_S = 12 * 60  # the worker process is killed
