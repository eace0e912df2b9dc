"""paimon-feed's benchmarks: measurements, not tests. Each is a module run from the repository
root (``python -m benchmarks.core_bench``); what they share lives in ``benchmarks._common``."""
