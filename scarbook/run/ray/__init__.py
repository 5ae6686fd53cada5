"""run.ray — the Ray executor: the driver half (executor) and the worker half (worker). Ray itself is
an optional extra and is imported only when the executor is chosen."""
