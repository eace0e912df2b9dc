"""The command's exit codes: 0 done; 1 the feed (or the check) failed; 2 bad input; 130
interrupted (Ctrl-C); 143 terminated (SIGTERM)."""

from __future__ import annotations

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED", "EXIT_USAGE"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143
