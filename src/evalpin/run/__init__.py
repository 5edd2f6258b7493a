"""Executing runs: slots, the sandbox and the runner. No UI imports."""
