"""The service core: the store, the jobs queue and the workers."""
