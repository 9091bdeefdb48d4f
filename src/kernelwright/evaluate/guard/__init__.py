"""The guard: named checks that refuse reward hacks (see docs/guard.md)."""
