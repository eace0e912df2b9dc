"""The docs' figure blocks, one module per benchmark family (``benchmarks/render_readme.py`` puts
them between their markers)."""
