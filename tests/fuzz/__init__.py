"""Fuzz tests (Hypothesis); a package so its conftest.py cannot clash with another folder's."""
