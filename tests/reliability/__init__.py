"""Reliability tests: degenerate inputs, option combinations, environment failures, user files
and edited outputs. A package (unlike the other test folders) because its test_degenerate_inputs.py
shares its basename with tests/estimators/test_degenerate_inputs.py."""
